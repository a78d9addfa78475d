/*
 * sbcemud's own state, shared by main.c (command line, start-up order,
 * shutdown) and setup.c (configuration -> SCSI devices, LUs, iSCSI targets).
 */
#ifndef SBCEMU_SBCEMUD_H
#define SBCEMU_SBCEMUD_H

#include "backend.h"
#include "config.h"
#include "daemon.h"
#include "iscsi.h"
#include "scsi.h"

/* Seconds the graceful part of shutdown may take before the daemon flushes and gives up on it. */
#define SHUTDOWN_TIMEOUT 60.0

enum daemon_state {
	DAEMON_RUNNING,
	DAEMON_DRAINING, /* iscsi_server_shutdown() in progress */
	DAEMON_FLUSHING, /* flush jobs on the workers */
	DAEMON_STOPPED,
};

/* One backend's flush at shutdown (backend I/O, so it runs on a worker). */
struct flush_job {
	struct scsi_io_job job;
	struct sbce_daemon *d;
	struct backend *backend;
	const char *name;
	int rc;
};

struct daemon_target {
	struct scsi_device *device;
	struct iscsi_acl_entry *acl;
};

struct sbce_daemon {
	struct cfg *cfg;
	struct sbce_loop loop;
	struct sbce_workers *workers;
	struct iscsi_server *server;
	struct daemon_target *targets;
	size_t target_count;
	struct flush_job *flushes;   /* one per backend (the LU owns the backend) */
	size_t flush_count;
	size_t flushes_pending;
	enum daemon_state state;
	bool server_drained;         /* false if shutdown timed out: the server is left alone */
	ev_timer shutdown_timer;
	int exit_code;
};

/* mkdir -p: creates path and its missing parents (mode 0750).  Returns 0 or -errno. */
int sbce_make_dirs(const char *path);

/*
 * Creates the SCSI device of a target, opens (or creates) each LU's backing
 * file, adds the LUs, registers a flush job per backend, and adds the target
 * to the iSCSI server.  Returns 0, or -1 after logging why.
 */
int sbce_add_target(struct sbce_daemon *d, const struct cfg_target *t);

/* The iSCSI server parameters from [iscsi]. */
void sbce_server_params(const struct cfg_iscsi *c, struct iscsi_server_params *p);

#endif
