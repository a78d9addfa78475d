/*
 * sbcemud: command line, configuration, and the start-up and shutdown order
 * (setup.c turns the configuration into devices, LUs and targets).
 *
 * Start-up: configuration (file or embedded default, then command-line
 * overrides, then checks, then every path checked without creating
 * anything, as --check does) -> state directory and its lock (one daemon
 * per state directory) -> loop and signal watchers ->
 * worker pool -> the core's shared limits -> one SCSI device per target with
 * its logical units (backing files opened or created here) -> the front ends
 * (frontend.h, frontends.c; the iSCSI one adds its portals last, so no
 * initiator connects before its target exists) -> the control socket.
 *
 * Shutdown (SIGTERM or SIGINT): every front end stops accepting and lets
 * commands in flight finish and their responses go out; then the core
 * flushes every device (backends and zone state, on the workers:
 * scsi_device_flush), so nothing acknowledged is lost; then the loop stops
 * and everything is freed in reverse order.  Exit status 0 unless a flush
 * failed.
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control.h"
#include "sbcemud.h"

_Static_assert((int)SBCE_LOG_DEBUG == (int)CFG_LOG_DEBUG && (int)SBCE_LOG_ERROR == (int)CFG_LOG_ERROR,
	       "log levels are passed from the configuration as they are");

#ifndef SBCEMU_VERSION
#define SBCEMU_VERSION "unknown"
#endif

/* ---- command line ---- */

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: sbcemud [OPTION]...\n"
		"Emulates SBC-4 disks (logical units backed by files or block devices) for host\n"
		"storage stacks: behind an iSCSI target, and as LIO's TCMU backstores (user:sbcemu).\n"
		"Without -c, runs the embedded default configuration: target\n"
		"iqn.2026-12.org.sbcemu:default on 127.0.0.1:3260 with one LU of each kind.\n"
		"\n"
		"  -c, --config FILE          read the configuration from FILE (docs/config.md)\n"
		"      --listen ADDR:PORT     listen on ADDR:PORT ([IPv6]:PORT); repeatable;\n"
		"                             replaces the configuration's daemon.listen\n"
		"      --state-dir DIR        directory for relative backing files and LU state\n"
		"      --log-level LEVEL      error, warn, info or debug\n"
		"      --check                check the configuration (and that no other daemon holds its\n"
		"                             state directory or files), print one line, and exit\n"
		"      --print-default-config\n"
		"                             print the embedded default configuration\n"
		"      --print-config-doc[=FORMAT]  print the configuration reference: markdown\n"
		"                             (docs/config.md, the default) or man (sbcemu.ini(5))\n"
		"      --list-keys [SECTION]  list the keys of every section (or of SECTION: daemon,\n"
		"                             iscsi, target, acl, lun, tcmu, lu) with type and default\n"
		"  -h, --help                 show this help\n"
		"      --version              show the version\n"
		"\n"
		"SIGTERM or SIGINT: finish commands in flight, flush every backing file, exit 0.\n"
		"SIGHUP: read the configuration file again and apply it (reload).\n");
}

enum {
	OPT_LISTEN = 256,
	OPT_STATE_DIR,
	OPT_LOG_LEVEL,
	OPT_CHECK,
	OPT_PRINT_DEFAULT,
	OPT_PRINT_DOC,
	OPT_LIST_KEYS,
	OPT_VERSION,
};

struct options {
	struct sbce_config_source source; /* -c and the overrides; source.listen is malloc'd */
	bool check;
};

static int append_listen(struct options *o, const char *addr)
{
	char *listen = (char *)o->source.listen;
	size_t old = listen ? strlen(listen) : 0;
	char *bigger = realloc(listen, old + strlen(addr) + 2);

	if (!bigger)
		return -1;
	if (old)
		bigger[old++] = ' ';
	strcpy(bigger + old, addr);
	o->source.listen = bigger;
	return 0;
}

/* Returns -1 to continue, else the exit status. */
static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "print-default-config", no_argument, NULL, OPT_PRINT_DEFAULT },
		{ "print-config-doc", optional_argument, NULL, OPT_PRINT_DOC },
		{ "list-keys", optional_argument, NULL, OPT_LIST_KEYS },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->source.path = optarg;
			break;
		case OPT_LISTEN:
			if (append_listen(o, optarg))
				return EXIT_FAILURE;
			break;
		case OPT_STATE_DIR:
			o->source.state_dir = optarg;
			break;
		case OPT_LOG_LEVEL:
			o->source.log_level = optarg;
			break;
		case OPT_CHECK:
			o->check = true;
			break;
		case OPT_PRINT_DEFAULT:
			fputs(cfg_default_ini, stdout);
			return EXIT_SUCCESS;
		case OPT_PRINT_DOC:
			if (optarg && strcmp(optarg, "man") == 0) {
				cfg_print_man(stdout, SBCEMU_VERSION);
			} else if (!optarg || strcmp(optarg, "markdown") == 0) {
				cfg_print_doc(stdout);
			} else {
				fprintf(stderr, "sbcemud: --print-config-doc=%s: markdown or man\n", optarg);
				return 2;
			}
			return EXIT_SUCCESS;
		case OPT_LIST_KEYS:
			/* --list-keys or --list-keys=SECTION, or --list-keys SECTION as the last word. */
			if (!optarg && optind < argc && argv[optind][0] != '-')
				optarg = argv[optind++];
			if (cfg_print_keys(stdout, optarg) != 0) {
				fprintf(stderr, "sbcemud: no section \"%s\" (daemon, iscsi, target, acl, lun, tcmu, lu)\n",
					optarg);
				return 2;
			}
			return EXIT_SUCCESS;
		case 'h':
			usage(stdout);
			return EXIT_SUCCESS;
		case OPT_VERSION:
			printf("sbcemud %s\n", SBCEMU_VERSION);
			return EXIT_SUCCESS;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sbcemud: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	/* A bad option value is a command-line mistake (exit status 2), not a configuration error (1). */
	{
		struct cfg_diag diag = { 0 };
		int rc = sbce_config_check_overrides(&o->source, &diag);

		if (rc != 0) {
			fputs(diag.text ? diag.text : "sbcemud: out of memory\n", stderr);
			fputs("Try 'sbcemud --help' for more information.\n", stderr);
		}
		cfg_diag_free(&diag);
		if (rc != 0)
			return 2;
	}
	return -1;
}

/* sbce_config_read() at start-up: NULL after printing every error. */
static struct cfg *load_config(const struct options *o)
{
	struct cfg_diag diag = { 0 };
	struct cfg *cfg = sbce_config_read(&o->source, &diag);

	if (!cfg) {
		fputs(diag.text ? diag.text : "", stderr);
		if (diag.count)
			fprintf(stderr, "sbcemud: %u configuration error%s\n", diag.count, diag.count == 1 ? "" : "s");
		else
			fprintf(stderr, "sbcemud: out of memory\n");
	}
	cfg_diag_free(&diag);
	return cfg;
}

/*
 * --check after the configuration loaded: what start-up would still refuse
 * (a state directory or a backing file another daemon holds), then one line
 * saying what would run.  The exit status.
 */
static int check_summary(const struct cfg *cfg)
{
	size_t luns = 0, conglomerates = 0;
	char err[512];

	if (sbce_state_dir_lock_probe(cfg->daemon.state_dir, err, sizeof(err)) != 0 ||
	    sbce_probe_backing_locks(cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "sbcemud: %s\n", err);
		return EXIT_FAILURE;
	}
	for (size_t i = 0; i < cfg->target_count; i++) {
		luns += cfg->targets[i]->lun_count;
		for (size_t k = 0; k < cfg->targets[i]->lun_count; k++)
			conglomerates += cfg->targets[i]->luns[k]->kind == CFG_LU_CONGLOMERATE;
	}
	printf("sbcemud: configuration OK: %zu target%s, %zu LU%s (%zu conglomerate%s), %zu template%s, state in %s\n",
	       cfg->target_count, cfg->target_count == 1 ? "" : "s", luns, luns == 1 ? "" : "s", conglomerates,
	       conglomerates == 1 ? "" : "s", cfg->template_count, cfg->template_count == 1 ? "" : "s",
	       cfg->daemon.state_dir);
	return EXIT_SUCCESS;
}

/* ---- shutdown ---- */

static void shutdown_finish(struct sbce_daemon *d)
{
	d->state = DAEMON_STOPPED;
	ev_timer_stop(d->loop.loop, &d->shutdown_timer);
	sbce_loop_stop(&d->loop);
}

static void device_flushed(void *arg, int err)
{
	struct sbce_daemon *d = arg;

	if (err != 0) {
		sbce_error("flushing a device failed: %s", strerror(-err));
		d->exit_code = EXIT_FAILURE;
	}
	if (--d->pending == 0)
		shutdown_finish(d);
}

/*
 * Commands have drained (or the drain timed out): the core makes everything
 * acknowledged durable, every backend and every zone state file (on the
 * workers).
 */
static void start_flush(struct sbce_daemon *d)
{
	size_t luns = 0;

	for (size_t i = 0; i < d->cfg->target_count; i++)
		luns += d->cfg->targets[i]->lun_count;
	d->state = DAEMON_FLUSHING;
	sbce_log_stats(d);
	sbce_info("flushing %zu backing file%s", luns, luns == 1 ? "" : "s");
	d->pending = d->device_count + 1;
	for (size_t i = 0; i < d->device_count; i++)
		scsi_device_flush(d->devices[i], device_flushed, d);
	device_flushed(d, 0);
}

/* One front end has drained; the last one starts the flush. */
static void frontend_drained(void *arg)
{
	struct sbce_daemon *d = arg;

	if (d->state != DAEMON_DRAINING || --d->pending > 0)
		return;
	d->drained = true;
	start_flush(d);
}

static void shutdown_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct sbce_daemon *d = w->data;

	(void)loop;
	(void)revents;
	if (d->state != DAEMON_DRAINING)
		return;
	sbce_error("commands still in flight after %.0f s; flushing and exiting anyway", SHUTDOWN_TIMEOUT);
	d->exit_code = EXIT_FAILURE;
	start_flush(d);
}

/* Drain every front end, then flush through the core, then stop the loop; may all happen before return. */
static void begin_shutdown(struct sbce_daemon *d)
{
	d->state = DAEMON_DRAINING;
	sbce_service_stopping(d);
	sbce_control_stop(d);
	/* Commands a rule holds run, so they can drain; the alarms stay for the media and duration limits' times. */
	sbce_faults_remove(d, true, 0);
	ev_timer_init(&d->shutdown_timer, shutdown_timeout_cb, SHUTDOWN_TIMEOUT, 0.);
	d->shutdown_timer.data = d;
	ev_timer_start(d->loop.loop, &d->shutdown_timer);
	d->pending = d->frontend_count + 1;
	for (size_t i = 0; i < d->frontend_count; i++)
		d->frontends[i].ops->drain(d->frontends[i].state, frontend_drained, d);
	frontend_drained(d);
}

static void on_terminate(void *arg, int signum)
{
	struct sbce_daemon *d = arg;

	if (d->state != DAEMON_RUNNING) {
		sbce_warn("signal %d: shutdown already in progress", signum);
		return;
	}
	sbce_info("signal %d: shutting down (finishing commands in flight)", signum);
	begin_shutdown(d);
}

static void on_hangup(void *arg)
{
	struct sbce_daemon *d = arg;
	char err[512];

	if (d->state != DAEMON_RUNNING)
		return;
	sbce_service_reloading(d);
	if (sbce_reload_file(d, "SIGHUP", false, NULL, err, sizeof(err)) != 0)
		sbce_info("SIGHUP: %s", err);
	sbce_service_reloaded(d);
}

/* ---- main ---- */

/* ---- start-up ---- */

/*
 * Whoever can write the configuration chooses the files the daemon opens,
 * creates and writes (as root: any file), and whoever can write in the
 * state directory can plant links there: say so when that is more than
 * the owner.
 */
static void warn_others_write(const char *what, const char *path)
{
	struct stat st;

	if (path && stat(path, &st) == 0 && (st.st_mode & (S_IWGRP | S_IWOTH)))
		sbce_warn("the %s %s is writable by %s (mode %04o)", what, path,
			  st.st_mode & S_IWOTH ? "every user" : "its group", (unsigned)(st.st_mode & 07777));
}

static int start(struct sbce_daemon *d)
{
	const struct cfg *cfg = d->cfg;
	struct scsi_limits limits = {
		.max_commands = cfg->daemon.max_commands,
		.max_buffer_bytes = cfg->daemon.max_buffer_bytes,
		.max_nexus_buffer_bytes = cfg->daemon.max_session_buffer_bytes,
	};
	char err[512];
	int rc;

	/* A daemon refused for a backing file another one serves creates nothing first. */
	if (sbce_probe_backing_locks(cfg, err, sizeof(err)) != 0) {
		sbce_error("%s", err);
		return -1;
	}
	rc = sbce_make_dirs(cfg->daemon.state_dir);
	if (rc != 0) {
		sbce_error("cannot create the state directory %s: %s", cfg->daemon.state_dir, strerror(-rc));
		return -1;
	}
	if (sbce_state_dir_lock(cfg->daemon.state_dir, &d->state_lock_fd, err, sizeof(err)) != 0) {
		sbce_error("%s", err);
		return -1;
	}
	warn_others_write("state directory", cfg->daemon.state_dir);
	if (sbce_loop_init(&d->loop, on_terminate, on_hangup, d)) {
		sbce_error("cannot create the event loop");
		return -1;
	}
	d->workers = sbce_workers_create(d->loop.loop, cfg->daemon.workers, err, sizeof(err));
	if (!d->workers) {
		sbce_error("%s", err);
		return -1;
	}
	sbce_workers_executor(d->workers)->async_capacity = cfg->daemon.async_io_depth;
	d->resources = scsi_resources_create(&limits);
	if (!d->resources) {
		sbce_error("out of memory");
		return -1;
	}
	if (sbce_devices_create(d) != 0 || sbce_faults_start(d) != 0 || sbce_frontends_start(d) != 0)
		return -1;
	d->started = ev_now(d->loop.loop);
	return sbce_control_start(d);
}

static void stop(struct sbce_daemon *d)
{
	/* After a drain timeout commands may still reference devices: leave them to the exit. */
	bool drained = d->drained || d->state == DAEMON_RUNNING;

	sbce_control_stop(d);
	if (d->state == DAEMON_RUNNING || drained)
		sbce_faults_stop(d);
	for (size_t i = 0; i < d->frontend_count && drained; i++)
		d->frontends[i].ops->destroy(d->frontends[i].state);
	/* Drained or not: nothing may post to the workers once they are gone. */
	for (size_t i = 0; i < d->device_count; i++)
		scsi_device_stop_peers(d->devices[i]);
	for (size_t i = 0; i < d->retired_count; i++)
		scsi_device_stop_peers(d->retired[i]);
	sbce_workers_destroy(d->workers);
	for (size_t i = 0; i < d->device_count && drained; i++)
		scsi_device_destroy(d->devices[i]);
	for (size_t i = 0; i < d->retired_count && drained; i++)
		scsi_device_destroy(d->retired[i]);
	free(d->frontends);
	free(d->devices);
	free(d->retired);
	free(d->alarms);
	if (drained)
		scsi_resources_destroy(d->resources);
	sbce_service_stop(d);
	if (d->loop.loop) {
		if (ev_is_active(&d->shutdown_timer))
			ev_timer_stop(d->loop.loop, &d->shutdown_timer);
		sbce_loop_fini(&d->loop);
	}
	if (d->state_lock_fd >= 0 && drained)
		close(d->state_lock_fd); /* another daemon may take the state directory now */
}

/*
 * Data buffers (a command's Data-Out and Data-In, up to MaxBurstLength and
 * beyond) are allocated per command.  glibc serves a block above its mmap
 * threshold (128 KiB, raised only by the free of such a block) with mmap(2)
 * and gives it back with munmap(2), and returns the free top of its heap to
 * the kernel above the trim threshold: each 1 MiB command then faulted in
 * and zeroed 256 fresh pages and unmapped them again (TLB shootdowns across
 * the worker threads), which perf showed as most of the daemon's time on
 * 1 MiB transfers; with these bounds its throughput doubled
 * (docs/performance.md).  Fixed bounds (mallopt(3) M_MMAP_THRESHOLD, whose
 * largest value on 64-bit glibc is 32 MiB, and M_TRIM_THRESHOLD) keep the
 * freed buffers in the heap for the next command; the heap stays as large
 * as the most that was in flight at once, up to 64 MiB free before it is
 * trimmed.  Builds with a sanitizer's allocator ignore them.
 */
static void keep_data_buffers(void)
{
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct sbce_daemon d = {
		.state = DAEMON_RUNNING,
		.exit_code = EXIT_SUCCESS,
		.state_lock_fd = -1,
		.backing_error_limit = SBCE_RATELIMIT_INIT(5, 20),
	};
	int rc = parse_options(argc, argv, &o);

	if (rc >= 0) {
		free((char *)o.source.listen);
		return rc;
	}
	keep_data_buffers();
	sbce_log_detect_journal();
	d.source = &o.source;
	d.cfg = load_config(&o);
	if (!d.cfg || o.check) {
		rc = d.cfg ? check_summary(d.cfg) : EXIT_FAILURE;
		cfg_free(d.cfg);
		free((char *)o.source.listen);
		return rc;
	}
	sbce_log_set_level((enum sbce_log_level)d.cfg->daemon.log_level);
	sbce_info("sbcemud %s starting (%s, state in %s)", SBCEMU_VERSION,
		  o.source.path ? o.source.path : "embedded default configuration", d.cfg->daemon.state_dir);
	warn_others_write("configuration file", o.source.path);
	if (start(&d) == 0) {
		sbce_info("ready");
		sbce_service_ready(&d);
		sbce_loop_run(&d.loop);
		if (d.state != DAEMON_STOPPED) /* the loop ran out of watchers: should not happen */
			d.exit_code = EXIT_FAILURE;
	} else {
		/* A front end may already listen: shut down the regular way. */
		if (d.frontend_count) {
			begin_shutdown(&d);
			if (d.state != DAEMON_STOPPED)
				sbce_loop_run(&d.loop);
		}
		d.exit_code = EXIT_FAILURE;
	}
	stop(&d);
	sbce_info("exiting with status %d", d.exit_code);
	cfg_free(d.cfg);
	free((char *)o.source.listen);
	return d.exit_code;
}
