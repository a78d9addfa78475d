/*
 * sbcemud internals shared by the daemon's files: logging (log.c), the event
 * loop and its signal watchers (loop.c), and the worker pool that runs
 * backend I/O for the SCSI core (workers.c).
 *
 * Threads: one loop thread owns every protocol and SCSI object; worker
 * threads only run scsi_io_job.work(), i.e. backend calls, and hand finished
 * jobs back to the loop through an ev_async.  Logging is the only thing both
 * kinds of thread call.
 */
#ifndef SBCEMU_DAEMON_H
#define SBCEMU_DAEMON_H

/* Layering (docs/architecture.md): nothing includes the daemon. */
#if defined(SBCE_BUILDING_BACKENDS) || defined(SBCE_BUILDING_SCSI) || defined(SBCE_BUILDING_ISCSI) || \
	defined(SBCE_BUILDING_CONFIG) || defined(SBCE_BUILDING_TCMU)
#error "sbcemu layering: nothing below the daemon includes daemon/"
#endif

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "scsi.h"

/* ---- log.c ---- */

enum sbce_log_level {
	SBCE_LOG_ERROR,
	SBCE_LOG_WARN,
	SBCE_LOG_INFO,
	SBCE_LOG_DEBUG,
};

void sbce_log_set_level(enum sbce_log_level level);
/*
 * Whether stderr is systemd's journal stream ($JOURNAL_STREAM): from then on
 * lines start with their syslog priority ("<3>error: ...") and carry no time
 * or pid.  Call once, before any thread logs.
 */
void sbce_log_detect_journal(void);
bool sbce_log_enabled(enum sbce_log_level level);
/* One line on stderr: "2026-12-03T08:41:00.123Z sbcemud[pid] level: message".  Thread-safe. */
void sbce_log(enum sbce_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * A rate limit for messages a peer can trigger at will (debug level at most,
 * style.md principle 11): at most `burst` messages per `interval` seconds;
 * the next message after a quiet period says how many were dropped.
 * Loop thread only.
 */
struct sbce_ratelimit {
	unsigned interval;
	unsigned burst;
	time_t window_start;
	unsigned printed;
	unsigned suppressed;
};
#define SBCE_RATELIMIT_INIT(interval_s, burst_n) { .interval = (interval_s), .burst = (burst_n) }

void sbce_log_ratelimited(struct sbce_ratelimit *rl, enum sbce_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define sbce_error(...) sbce_log(SBCE_LOG_ERROR, __VA_ARGS__)
#define sbce_warn(...) sbce_log(SBCE_LOG_WARN, __VA_ARGS__)
#define sbce_info(...) sbce_log(SBCE_LOG_INFO, __VA_ARGS__)
#define sbce_debug(...) sbce_log(SBCE_LOG_DEBUG, __VA_ARGS__)

/* ---- loop.c ---- */

/* The loop, its signal watchers, and what they call (on the loop thread). */
struct sbce_loop {
	struct ev_loop *loop;
	ev_signal sigterm, sigint, sighup;
	void (*on_terminate)(void *arg, int signum); /* SIGTERM, SIGINT */
	void (*on_hangup)(void *arg);                /* SIGHUP */
	void *arg;
};

/* Creates the default libev loop and installs the signal watchers.  Returns 0 or -1. */
int sbce_loop_init(struct sbce_loop *l, void (*on_terminate)(void *arg, int signum), void (*on_hangup)(void *arg),
		   void *arg);
/* Runs until sbce_loop_stop(). */
void sbce_loop_run(struct sbce_loop *l);
void sbce_loop_stop(struct sbce_loop *l);
void sbce_loop_fini(struct sbce_loop *l);

/* ---- workers.c ---- */

struct sbce_workers;

/*
 * Starts `count` worker threads that serve jobs submitted on the loop thread;
 * finished jobs come back through an ev_async on `loop`, where done() runs.
 * Returns NULL with a message in err on failure.
 */
struct sbce_workers *sbce_workers_create(struct ev_loop *loop, unsigned count, char *err, size_t errlen);
/* The executor to give scsi_device_create(); NULL for no pool (a harness without workers). */
struct scsi_executor *sbce_workers_executor(struct sbce_workers *w);
/* Jobs submitted whose done() has not run yet.  Loop thread. */
unsigned long sbce_workers_in_flight(const struct sbce_workers *w);
/*
 * Lets queued jobs finish, joins the threads and runs the remaining done()
 * callbacks, then frees the pool.  Loop thread, with the loop not running.
 */
void sbce_workers_destroy(struct sbce_workers *w);

#endif
