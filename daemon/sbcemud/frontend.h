/*
 * Front ends: what brings commands to the SCSI core's devices (the iSCSI
 * target, the TCMU handler, a test's own).  This interface is all the daemon
 * and its runtime control know of a front end (docs/architecture.md, "Front
 * ends"): the daemon builds the devices of the configured targets, starts
 * every registered front end, asks them about their sessions and their own
 * LUs, tells them of targets added and removed, and at shutdown drains them
 * all before the devices are flushed through the core.
 *
 * A front end registers itself with SBCE_FRONTEND_REGISTER(ops) in its own
 * file: linking that file into sbcemud is all it takes, no other file
 * names it.  Every callback runs on the loop thread.
 */
#ifndef SBCEMU_FRONTEND_H
#define SBCEMU_FRONTEND_H

/* Layering (docs/architecture.md): the daemon's own interface, below it nothing sees it. */
#if !defined(SBCE_BUILDING_DAEMON) && !defined(SBCE_BUILDING_FRONTENDS)
#error "sbcemu layering: frontend.h is the daemon's interface to its front ends (daemon/ only)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cfg_target;
struct sbce_daemon;
struct scsi_device;
struct scsi_lu;

/* A value only one transport has (iSCSI: ISID, TSIH, digests, ...), as the control shows it. */
struct sbce_attr {
	const char *name;
	enum sbce_attr_type {
		SBCE_ATTR_STRING,
		SBCE_ATTR_INTEGER,
		SBCE_ATTR_BOOLEAN,
	} type;
	const char *string;
	int64_t integer;
	bool boolean;
};

/* A session: an initiator's I_T nexus (or a discovery session) as a front end reports it. */
struct sbce_session {
	const char *target;    /* the name of the device it reaches (a target's); NULL: no device (discovery) */
	const char *initiator; /* the initiator's name */
	unsigned commands;     /* SCSI commands delivered and not yet answered */
	const struct sbce_attr *attrs;
	size_t attr_count;
};

/* An LU a front end made itself, outside the configured targets (a TCMU backstore's). */
struct sbce_frontend_lu {
	const char *name; /* unique within the front end: the control names it so (docs/control.md) */
	const char *path; /* its backing file */
	struct scsi_lu *lu;
};

struct sbce_frontend_ops {
	/* Its name in logs and in control requests and replies ("iscsi", "tcmu"): lower case, no spaces. */
	const char *name;
	/*
	 * Starts serving on the daemon's loop: the configured targets'
	 * devices (d->devices, d->cfg->targets), devices of its own, or both.
	 * Returns 0 with *state set, 1 when this front end is not wanted or
	 * cannot run here (after logging why at info level: the others go on),
	 * or -1 after logging an error (start-up fails).
	 */
	int (*start)(struct sbce_daemon *d, void **state);
	/*
	 * Stops taking new commands, lets those in flight finish and their
	 * responses go out, then calls done(arg) (possibly before returning).
	 */
	void (*drain)(void *state, void (*done)(void *arg), void *arg);
	/* Frees the front end once drained (or after a failed start). */
	void (*destroy)(void *state);

	/* ---- the rest is optional (NULL: the front end has none of it) ---- */

	/* Calls fn for every session, logged in or logging out. */
	void (*foreach_session)(void *state, void (*fn)(void *arg, const struct sbce_session *s), void *arg);
	/* Calls fn for every LU the front end made itself. */
	void (*foreach_lu)(void *state, void (*fn)(void *arg, const struct sbce_frontend_lu *lu), void *arg);
	/*
	 * A target was added at run time (t, served by the SCSI device dev):
	 * serve it from now on.  0, or -1 with the reason in err (the target
	 * is then taken away again).
	 */
	int (*target_added)(void *state, const struct cfg_target *t, struct scsi_device *dev, char *err,
			    size_t errlen);
	/*
	 * Target name is being taken away: stop serving it (new logins are
	 * refused) and drop its connections as a pulled cable would.  Returns
	 * the connections dropped.  Its device stays allocated until exit.
	 */
	unsigned (*target_removed)(void *state, const char *name, const char *why);
	/*
	 * The CHAP credentials or the ACL of target t changed at run time
	 * (acl-add, acl-remove, target-auth): logins from now on follow t's.
	 * 0, or -1 with the reason in err.  NULL: the front end has no logins.
	 */
	int (*target_access_changed)(void *state, const struct cfg_target *t, char *err, size_t errlen);
	/*
	 * Listen on portal addr from now on (add), or no longer (connections
	 * made through it stay).  0, or -1 with the reason in err.  NULL: the
	 * front end has no portals.
	 */
	int (*portal_changed)(void *state, const char *addr, bool add, char *err, size_t errlen);
	/*
	 * Drops every connection to target name as a pulled cable would (no
	 * response goes out; its I_T nexuses are lost with their commands),
	 * for a power cut.  Returns the connections dropped.
	 */
	unsigned (*drop_connections)(void *state, const char *name, const char *why);
};

/* Adds ops to the front ends sbcemud starts (in name order); from a constructor, before main(). */
void sbce_frontend_register(const struct sbce_frontend_ops *ops);

#define SBCE_FRONTEND_REGISTER(ops)                                                    \
	__attribute__((constructor)) static void sbce_frontend_register_##ops(void) \
	{                                                                              \
		sbce_frontend_register(&(ops));                                        \
	}

#endif
