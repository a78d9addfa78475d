/*
 * sbcemud's own state and what its parts share: main.c (command line,
 * start-up order, shutdown), setup.c (configuration -> SCSI devices and
 * LUs), targets.c and lus.c (targets and LUs added and removed at run
 * time), faults.c, reload.c, and what they offer the front ends
 * (daemon/frontends/, through frontend.h) and the runtime control
 * (daemon/control/).  Nothing here knows a transport: front ends are
 * reached through frontend.h only (frontends.c).
 */
#ifndef SBCEMU_SBCEMUD_H
#define SBCEMU_SBCEMUD_H

#if !defined(SBCE_BUILDING_DAEMON) && !defined(SBCE_BUILDING_FRONTENDS)
#error "sbcemu layering: sbcemud.h is internal to the daemon (daemon/)"
#endif

#include "backend.h"
#include "config.h"
#include "daemon.h"
#include "frontend.h"
#include "scsi.h"
#include "scsi_faults.h"

/* Seconds the graceful part of shutdown may take before the daemon flushes and gives up on it. */
#define SHUTDOWN_TIMEOUT 60.0

enum daemon_state {
	DAEMON_RUNNING,
	DAEMON_DRAINING, /* the front ends finish the commands in flight */
	DAEMON_FLUSHING, /* scsi_device_flush() of every device */
	DAEMON_STOPPED,
};

/* What the configuration is read from: sbcemud's -c FILE (NULL: the embedded default) and its overrides. */
struct sbce_config_source {
	const char *path;
	const char *listen;    /* every --listen, space separated, or NULL */
	const char *state_dir; /* --state-dir, or NULL */
	const char *log_level; /* --log-level, or NULL */
};

/* A started front end (frontend.h). */
struct daemon_frontend {
	const struct sbce_frontend_ops *ops;
	void *state;
	bool drained;
};

struct sbce_daemon {
	struct cfg *cfg;
	const struct sbce_config_source *source; /* a reload reads the same file with the same overrides */
	struct sbce_loop loop;
	struct sbce_workers *workers;
	struct scsi_resources *resources;
	struct scsi_device **devices;       /* one per configured target, in its order */
	size_t device_count;
	struct daemon_frontend *frontends;  /* the started ones (frontends.c) */
	size_t frontend_count;
	size_t pending;                      /* front ends draining / devices flushing */
	enum daemon_state state;
	bool drained;                        /* false if shutdown timed out: the front ends are left alone */
	ev_timer shutdown_timer;
	ev_timer watchdog_timer;             /* WATCHDOG=1 to systemd (service.c); inactive without WatchdogSec= */
	int exit_code;
	int state_lock_fd;                   /* sbce_state_dir_lock(); -1 until taken */
	struct sbce_ratelimit backing_error_limit; /* sbce_observe_backing_errors */
	/* the runtime control (control.h, docs/control.md) */
	struct sbce_control *control;        /* NULL: no control socket */
	ev_tstamp started;                   /* for status's uptime */
	uint32_t next_fault_id;              /* the id the next fault rule gets */
	struct sbce_alarm **alarms;          /* one per device: delayed commands (faults.c) */
	struct scsi_device **retired;        /* devices of targets removed at run time (control_targets.c), */
	size_t retired_count;                /* kept for their ending sessions until exit */
};

/* ---- the front ends (frontends.c; frontend.h is the interface) ---- */

/*
 * Starts every registered front end, in name order.  0, or -1 after logging
 * why (the front ends started so far are in d->frontends, to drain).
 */
int sbce_frontends_start(struct sbce_daemon *d);
/* Calls fn for every session of every running front end (frontend: its name). */
void sbce_foreach_session(struct sbce_daemon *d,
			  void (*fn)(void *arg, const char *frontend, const struct sbce_session *s), void *arg);
/* Tells every running front end of target t added (served by dev).  0, or -1 with the reason in err. */
int sbce_frontends_target_added(struct sbce_daemon *d, const struct cfg_target *t, struct scsi_device *dev,
				char *err, size_t errlen);
/* ... of target name removed; returns the connections dropped. */
unsigned sbce_frontends_target_removed(struct sbce_daemon *d, const char *name, const char *why);
/* Every front end takes target t's new CHAP credentials and ACL.  0, or -1 with the reason. */
int sbce_frontends_target_access_changed(struct sbce_daemon *d, const struct cfg_target *t, char *err, size_t errlen);
/* The front ends with portals listen on addr from now on (add) or no longer.  0, or -1 with the reason. */
int sbce_frontends_portal_changed(struct sbce_daemon *d, const char *addr, bool add, char *err, size_t errlen);
/* Drops every connection to target name (a power cut); returns how many. */
unsigned sbce_frontends_drop_connections(struct sbce_daemon *d, const char *name, const char *why);
/* Whether a running front end called name makes LUs of its own (foreach_lu). */
bool sbce_frontend_has_lus(const struct sbce_daemon *d, const char *name);
/* Calls fn for every front end built in, in name order, with whether it runs (status). */
void sbce_frontends_describe(const struct sbce_daemon *d, void (*fn)(void *arg, const char *name, bool running),
			     void *arg);

/* One LU the daemon serves: a configured target's, or one a front end made itself. */
struct sbce_lu_ref {
	const char *frontend;      /* NULL: a target's; else the front end that made it */
	const char *owner;         /* the target's name, or the LU's name in its front end */
	int target;                /* the target's index in d->devices, or -1 */
	const struct cfg_lun *cfg; /* the target's configuration of it (NULL for a front end's) */
	const char *path;          /* its backing file */
	struct scsi_lu *lu;
};
/* One summary line of latency statistics per LU that served commands (shutdown). */
void sbce_log_stats(struct sbce_daemon *d);
/* Calls fn for every LU: those of each target in order, then those each front end made. */
void sbce_foreach_lu(struct sbce_daemon *d, void (*fn)(void *arg, const struct sbce_lu_ref *ref), void *arg);
/* The LU front end frontend calls name, or NULL. */
struct scsi_lu *sbce_frontend_find_lu(struct sbce_daemon *d, const char *frontend, const char *name);

/* ---- the service manager's notifications (service.c, sd_notify(3)); nothing outside systemd ---- */

/* READY=1 with a STATUS= line, and the watchdog's keep-alives when WatchdogSec= asks for them. */
void sbce_service_ready(struct sbce_daemon *d);
/* RELOADING=1 before a SIGHUP's reload; READY=1 and the new STATUS= after it. */
void sbce_service_reloading(struct sbce_daemon *d);
void sbce_service_reloaded(struct sbce_daemon *d);
/* STOPPING=1 when the shutdown starts. */
void sbce_service_stopping(struct sbce_daemon *d);
/* Stops the keep-alives (before the loop goes). */
void sbce_service_stop(struct sbce_daemon *d);

/* ---- fault rules across the daemon (faults.c) ---- */

/* Removes rule id from whichever LU has it, or (all) every rule of every LU; returns how many went. */
unsigned sbce_faults_remove(struct sbce_daemon *d, bool all, uint32_t id);

/*
 * Gives every device its alarm (delayed commands of fault rules, the media
 * latency model, command duration limits).  0, or -1 after logging why.
 */
int sbce_faults_start(struct sbce_daemon *d);
/* Removes every fault rule (held commands run, so that a shutdown can drain) and stops the alarms. */
void sbce_faults_stop(struct sbce_daemon *d);
/* The alarm of one device (a target added at run time, a front end's), or NULL when out of memory; and its end. */
struct sbce_alarm *sbce_alarm_attach(struct sbce_daemon *d, struct scsi_device *dev);
void sbce_alarm_detach(struct sbce_daemon *d, struct sbce_alarm *a);

/*
 * Logs every command of dev that fails because its backing store did (an
 * error naming the device, LUN, errno and the LU's counts so far), with a
 * rate limit: an initiator can cause them at will.
 */
void sbce_observe_backing_errors(struct sbce_daemon *d, struct scsi_device *dev);

/* mkdir -p: creates path and its missing parents (mode 0700).  Returns 0 or -errno. */
int sbce_make_dirs(const char *path);

/*
 * Whether another process holds the lock of an existing backing file of
 * cfg's LUs (be_file_lock_probe): start-up asks before it creates anything.
 * 0, or -1 with "PATH: in use by another process (pid N holds its lock)".
 */
int sbce_probe_backing_locks(const struct cfg *cfg, char *err, size_t errlen);

/*
 * Takes the state directory's lock (an exclusive flock(2) on
 * <state_dir>/sbcemud.lock, with this process's pid written in it) and
 * returns its descriptor in *lock_fd, to keep open while the daemon runs.
 * Returns 0, or -1 with why in err (another daemon's pid when it holds it).
 */
int sbce_state_dir_lock(const char *state_dir, int *lock_fd, char *err, size_t errlen);
/* Whether another process holds that lock now, creating nothing (--check): 0, or -1 with why in err. */
int sbce_state_dir_lock_probe(const char *state_dir, char *err, size_t errlen);

/*
 * Finds, creating nothing, every path of cfg that start-up would refuse
 * (state directory, LU state directories, backing files: be_file_check())
 * and every latency model the SCSI core would refuse, each reported in diag
 * as "file:line: section.key: reason".  Returns 0 or -1.
 */
int sbce_check_luns(const struct cfg *cfg, struct cfg_diag *diag);

/* <state_dir>/<target name>/lun<N>: where LUN l of target t keeps its state. */
void sbce_lu_state_dir(const struct cfg *cfg, const struct cfg_target *t, const struct cfg_lun *l, char *buf,
		       size_t len);

/*
 * Opens (creating if needed) the backing file of logical unit l and adds the
 * LU to dev, its persistent state in state_dir (made here); who names it in
 * log lines ("target IQN LUN 0", "tcmu zbc0").  Returns 0, or -1 with the
 * reason in err.
 */
int sbce_lu_open(struct sbce_daemon *d, struct scsi_device *dev, const struct cfg_lun *l, const char *who,
		 const char *state_dir, char *err, size_t errlen);
/* A latency text (latency.c, docs/latency.md) as the SCSI core takes it, checked.  0, or -1 with the reason in err. */
int sbce_latency_parse(const char *text, struct scsi_latency_params *out, char *err, size_t errlen);
/* ... and back: the model and the keys that are set. */
void sbce_latency_text(const struct scsi_latency_params *p, char *buf, size_t len);
/* A mode_defaults text (config/mode.c) as the SCSI core takes it.  0, or -1 with the reason in err. */
int sbce_mode_defaults(const char *text, struct scsi_mode_defaults *out, char *err, size_t errlen);
/* And back: md's canonical text ("wce=0 d_sense=1"; "" when it sets nothing). */
void sbce_mode_defaults_text(const struct scsi_mode_defaults *md, char *buf, size_t len);
/*
 * Adds LU l to running target i (d->devices[i], d->cfg->targets[i]) and to
 * the running configuration; why starts the log line ("control", "SIGHUP").
 * 0, or -1 with the reason in err (lus.c).
 */
int sbce_lu_add(struct sbce_daemon *d, size_t i, const struct cfg_lun *l, const char *why, char *err, size_t errlen);
/*
 * Removes LUN lun of running target i: refused while commands are in its
 * task set unless force (then they end with 05/25/00, *ended says how
 * many).  0, or -1 with the reason in err.
 */
int sbce_lu_remove(struct sbce_daemon *d, size_t i, uint32_t lun, bool force, const char *why, unsigned *ended,
		   char *err, size_t errlen);
/*
 * Records a run-time change of an LU key (its text) in the running
 * configuration, which save writes; nothing for an LU the configuration
 * does not have (a front end's own) (lus.c).
 */
void sbce_lu_track(struct sbce_daemon *d, const char *target, uint32_t lun, const char *key, const char *text);
/* ---- conglomerates (conglomerates.c, docs/conglomerate.md) ---- */

/* Gives dev (an iSCSI target's device) the opener of its subsidiary LUs. */
void sbce_conglomerate_device(struct sbce_daemon *d, struct scsi_device *dev);
/* Creates and binds the subsidiaries l (kind conglomerate) names on its new administrative LU.  0, or -1 with err. */
int sbce_conglomerate_apply(struct scsi_lu *admin, const struct cfg_lun *l, char *err, size_t errlen);
/* The LU configuration of subsidiary element of admin (target t), and its state directory.  0, or -1 with err. */
int sbce_subsidiary_config(const struct cfg *cfg, const struct cfg_target *t, const struct cfg_lun *admin,
			   uint16_t element, struct cfg_lun *out, char *state_dir, size_t state_len, char *err,
			   size_t errlen);
/* Target t's configuration of LUN lun, or NULL. */
const struct cfg_lun *sbce_config_lun(const struct cfg_target *t, uint32_t lun);
/* The running subsidiaries and bindings of admin as the keys write them ("1-8, 12"; "*=1-4; iqn...=5"). */
void sbce_subsidiaries_text(const struct scsi_lu *admin, char *buf, size_t len);
int sbce_bindings_text(const struct scsi_lu *admin, char *buf, size_t len);
/*
 * Makes admin's subsidiaries and bindings what l says (reload): creates,
 * unbinds, binds, destroys; *changes counts what changed.  0, or -1 with
 * the refusals in err (a subsidiary still bound or busy is not destroyed).
 */
int sbce_conglomerate_reconcile(struct scsi_lu *admin, const struct cfg_lun *l, unsigned *changes, char *err,
				size_t errlen);
/* Records admin's (LUN lun of target i) subsidiaries and bindings in the running configuration, for save. */
void sbce_conglomerate_track(struct sbce_daemon *d, size_t i, const struct scsi_lu *admin, uint32_t lun);
/*
 * Whether save can write every conglomerate's running subsidiaries and
 * bindings (each key on one line of at most 199 characters): 0, or -1 with
 * the first that cannot in err.
 */
int sbce_conglomerates_saveable(const struct sbce_daemon *d, char *err, size_t errlen);

/* The running target whose LU has path as its backing file, or NULL (lus.c). */
const char *sbce_path_user(const struct sbce_daemon *d, const char *path);
/* The target whose LU already uses l's RBD image (backend rbd), or NULL. */
const char *sbce_image_user(const struct sbce_daemon *d, const struct cfg_lun *l);
/* What holds l's blocks, for the log: its path, or "rbd:POOL/IMAGE" in buf. */
const char *sbce_lu_backing(const struct cfg_lun *l, char *buf, size_t len);
/* The index of the running target called name (in d->devices and d->cfg->targets), or -1 (targets.c). */
int sbce_target_index(const struct sbce_daemon *d, const char *name);
/*
 * Adds target t (a finished configuration's, copied) with its LUs and serves
 * it; why starts the log line.  0, or -1 with the reason in err and nothing
 * changed (targets.c).
 */
int sbce_target_add(struct sbce_daemon *d, const struct cfg_target *t, const char *why, char *err, size_t errlen);
/*
 * Removes running target i: refused while commands are in its LUs' task
 * sets unless force; its connections are dropped, its LUs closed.  0 (*ended:
 * the commands ended), or -1 with the reason in err and nothing changed.
 */
int sbce_target_remove(struct sbce_daemon *d, size_t i, bool force, const char *why, unsigned *ended, char *err,
		       size_t errlen);
/*
 * The configuration as start-up reads it (reload.c): the file or the
 * embedded default, then the overrides, then the cross checks, then every
 * path as start-up would use it.  NULL with every error in diag.
 */
struct cfg *sbce_config_read(const struct sbce_config_source *src, struct cfg_diag *diag);
/* Whether the command line's overrides (--listen, --state-dir, --log-level) are values their keys take: 0, or -1 with diag. */
int sbce_config_check_overrides(const struct sbce_config_source *src, struct cfg_diag *diag);

/* What a reload did (reload.c). */
struct sbce_reload_counts {
	unsigned applied, at_restart, refused;
};
/*
 * A reload (SIGHUP, or the control's reload; why starts the log lines):
 * reads the configuration file again and applies what differs from the
 * running one.  A file that does not load changes nothing (its errors are
 * logged); nor does one that would remove every running target, unless
 * remove_all.  0 with *counts (may be NULL) filled, or -1 with the reason
 * in err and nothing changed.
 */
int sbce_reload_file(struct sbce_daemon *d, const char *why, bool remove_all, struct sbce_reload_counts *counts,
		     char *err, size_t errlen);
/* The fault keys of l as fault rules of lu (config_faults.c).  0, or -1 with the reason in err. */
int sbce_lu_config_faults(struct sbce_daemon *d, const struct cfg_lun *l, struct scsi_lu *lu, const char *who,
			  char *err, size_t errlen);

/*
 * Creates the SCSI device of every configured target with its LUs (backing
 * files opened or created, state directories made), sharing d->resources.
 * Returns 0, or -1 after logging why.
 */
int sbce_devices_create(struct sbce_daemon *d);

#endif
