/*
 * The daemon seen from outside: its RSS and open descriptors (proc(5):
 * /proc/PID/status VmRSS, VmHWM, Threads; the entries of /proc/PID/fd), a
 * watchdog thread that ends the soak when the main thread is stuck in a
 * call that never returns, and the hang report (the daemon's thread stacks
 * through gdb when it is installed, and the tail of its log).
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "soak.h"

bool proc_sample(pid_t pid, struct proc_sample *p)
{
	char path[64], line[256];
	struct dirent *e;
	FILE *f;
	DIR *d;

	p->rss_kb = p->hwm_kb = -1;
	p->fds = p->threads = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "VmRSS: %ld", &p->rss_kb);
		sscanf(line, "VmHWM: %ld", &p->hwm_kb);
		sscanf(line, "Threads: %d", &p->threads);
	}
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return false;
	p->fds = 0;
	while ((e = readdir(d)))
		p->fds += e->d_name[0] != '.';
	closedir(d);
	return p->rss_kb >= 0;
}

/*
 * A sample taken once the descriptor count has held for 300 ms (at most 5 s
 * of waiting): the daemon closes a connection only when its event loop reads
 * the peer's FIN, so the readiness probe's connection (itest_daemon_start)
 * can still be open just after a restart.
 */
bool proc_sample_settled(pid_t pid, struct proc_sample *p)
{
	struct proc_sample prev;
	int steady = 0;

	if (!proc_sample(pid, &prev))
		return false;
	for (int i = 0; i < 50 && steady < 3; i++) {
		usleep(100000);
		if (!proc_sample(pid, p))
			return false;
		steady = p->fds == prev.fds ? steady + 1 : 0;
		prev = *p;
	}
	return true;
}

/* Every open descriptor of PID and what it points at, one "# " line each. */
void proc_print_fds(pid_t pid)
{
	char path[64], full[400], target[256];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d))) {
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(full, sizeof(full), "%s/%s", path, e->d_name);
		n = readlink(full, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = 0;
		printf("#   fd %s -> %s\n", e->d_name, target);
	}
	closedir(d);
}

/* ---- hang reports ---- */

static void dump_stacks(void)
{
	char path[700], cmd[1024], line[512];
	FILE *f;
	int n = 0;

	if (soak.d.pid <= 0)
		return;
	if (access("/usr/bin/gdb", X_OK)) {
		printf("# (gdb is not installed: no stacks of the daemon's threads)\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/hang-stacks.txt", soak.d.dir);
	snprintf(cmd, sizeof(cmd), "timeout 60 gdb -p %d -batch -ex 'thread apply all bt' >'%s' 2>&1", (int)soak.d.pid,
		 path);
	if (system(cmd) == -1)
		return;
	printf("# the daemon's thread stacks (all of them in %s):\n", path);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f) && n < 120) {
		if (line[0] != '#' && strncmp(line, "Thread", 6))
			continue;
		printf("#   %s", line);
		n++;
	}
	if (f)
		fclose(f);
}

void report_hang(const char *fmt, ...)
{
	va_list ap;

	soak.st.hangs++;
	soak.stop = true;
	printf("# HANG at %.1f s (op #%u, seed %llu): ", elapsed_s(), soak.opno, (unsigned long long)soak.o.seed);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (soak.st.hangs > 1)
		return;
	dump_stacks();
	printf("# the daemon's log (%s) ends with:\n", soak.d.log);
	itest_daemon_log_tail(&soak.d, 30);
}

/* ---- watchdog ---- */

static _Atomic uint64_t watch_deadline;
static _Atomic(const char *) watch_what;
static atomic_int watch_sess;

/* Every wait of ours has its own deadline (op_timeout); this one catches waits that are not ours. */
static unsigned backstop_s(void)
{
	return (soak.o.op_timeout > 30 ? soak.o.op_timeout : 30) + 30;
}

void watch_op(const char *what, int sess)
{
	atomic_store(&watch_what, what);
	atomic_store(&watch_sess, sess);
	atomic_store(&watch_deadline, itest_now_ms() + backstop_s() * 1000ull);
}

void watch_idle(void)
{
	atomic_store(&watch_deadline, 0);
}

static void *watchdog(void *arg)
{
	(void)arg;
	for (;;) {
		uint64_t dl;

		sleep(1);
		dl = atomic_load(&watch_deadline);
		if (!dl || itest_now_ms() < dl)
			continue;
		printf("# HANG (watchdog) at %.1f s (op #%u, seed %llu): %s on session %d has not returned for %u s\n",
		       elapsed_s(), soak.opno, (unsigned long long)soak.o.seed, atomic_load(&watch_what),
		       atomic_load(&watch_sess), backstop_s());
		dump_stacks();
		printf("# the daemon's log (%s) ends with:\n", soak.d.log);
		itest_daemon_log_tail(&soak.d, 30);
		if (soak.d.pid > 0)
			kill(soak.d.pid, SIGKILL);
		printf("# scratch directory kept: %s\nresult          FAIL (hang)\n", soak.d.dir);
		fflush(stdout);
		_exit(1);
	}
	return NULL;
}

void watchdog_start(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, watchdog, NULL) == 0)
		pthread_detach(t);
}
