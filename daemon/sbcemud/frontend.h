/*
 * Front ends: what brings commands to the SCSI core's devices (the iSCSI
 * target and the TCMU handler).  The daemon builds the devices from
 * the configuration, then starts every front end through this interface;
 * at shutdown it drains them all before the devices are flushed through the
 * core (docs/architecture.md, "Front ends").
 */
#ifndef SBCEMU_FRONTEND_H
#define SBCEMU_FRONTEND_H

struct sbce_daemon;

struct sbce_frontend_ops {
	const char *name;
	/*
	 * Starts serving the daemon's devices (d->devices) on its loop.  Returns
	 * 0 with *state set, 1 when this front end is not wanted or cannot run
	 * here (after logging why at info level: the others go on), or -1 after
	 * logging an error (start-up fails).
	 */
	int (*start)(struct sbce_daemon *d, void **state);
	/*
	 * Stops taking new commands, lets those in flight finish and their
	 * responses go out, then calls done(arg) (possibly before returning).
	 */
	void (*drain)(void *state, void (*done)(void *arg), void *arg);
	/* Frees the front end once drained (or after a failed start). */
	void (*destroy)(void *state);
};

/* frontend_iscsi.c: the iSCSI target (RFC 7143) on the configuration's portals and targets. */
extern const struct sbce_frontend_ops sbce_frontend_iscsi;
/* frontend_tcmu.c: LIO's user:sbcemu backstores (docs/tcmu.md). */
extern const struct sbce_frontend_ops sbce_frontend_tcmu;

#endif
