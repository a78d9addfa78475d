/*
 * Integration-test framework, daemon life cycle (see itest.h): scratch
 * directory, configuration file, start on a spare port, stop, and a safety
 * net that kills daemons still running when the test program exits.
 */
#include "itest.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- daemon ---- */

/*
 * Daemons still running when the program exits are stopped by an atexit
 * handler.  It keeps its own copy of pid and directory: the tests' struct
 * itest_daemon may live on main()'s stack, which is gone by then.
 */
#define MAX_DAEMONS 8
static struct daemon_slot {
	bool used;
	pid_t pid;
	char dir[512];
} slots[MAX_DAEMONS];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw);

static void kill_daemons_at_exit(void)
{
	for (int i = 0; i < MAX_DAEMONS; i++) {
		if (!slots[i].used)
			continue;
		if (slots[i].pid > 0) {
			kill(slots[i].pid, SIGKILL);
			waitpid(slots[i].pid, NULL, 0);
		}
		if (slots[i].dir[0] && !itest_keep_scratch())
			nftw(slots[i].dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		else if (slots[i].dir[0])
			printf("# scratch directory kept: %s\n", slots[i].dir);
		slots[i].used = false;
	}
}

static int register_daemon(const struct itest_daemon *d)
{
	static bool registered;
	if (!registered) {
		atexit(kill_daemons_at_exit);
		registered = true;
	}
	for (int i = 0; i < MAX_DAEMONS; i++)
		if (!slots[i].used) {
			slots[i].used = true;
			slots[i].pid = -1;
			snprintf(slots[i].dir, sizeof(slots[i].dir), "%s", d->dir);
			return i;
		}
	return -1;
}

static void slot_set_pid(const struct itest_daemon *d)
{
	if (d->slot >= 0 && d->slot < MAX_DAEMONS)
		slots[d->slot].pid = d->pid;
}

static void unregister_daemon(struct itest_daemon *d)
{
	if (d->slot >= 0 && d->slot < MAX_DAEMONS)
		slots[d->slot].used = false;
	d->slot = -1;
}

const char itest_default_config[] =
	"# sbcemud configuration written by the integration tests\n"
	"[target \"" ITEST_TARGET "\"]\n"
	"alias = itest\n"
	"\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\n"
	"size = 64M\n"
	"logical_block_size = 512\n"
	"lbppbe = 3\n"
	"thin_provisioning = true\n"
	"\n"
	"[lun \"" ITEST_TARGET "\" 1]\n"
	"path = @DIR@/lun1.img\n"
	"size = 64M\n"
	"logical_block_size = 4096\n"
	"thin_provisioning = false\n";

void itest_daemon_init(struct itest_daemon *d, const char *name)
{
	const char *env = getenv("SBCEMUD");
	const char *tmp = getenv("TMPDIR");

	memset(d, 0, sizeof(*d));
	d->pid = -1;
	d->slot = -1;
	if (env && *env) {
		snprintf(d->bin, sizeof(d->bin), "%s", env);
	} else {
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n > 0) {
			self[n] = '\0';
			/* build/tests/integration/<prog> -> build/daemon/sbcemud */
			snprintf(d->bin, sizeof(d->bin), "%s/../../daemon/sbcemud", dirname(self));
		}
	}
	if (!d->bin[0] || access(d->bin, X_OK) != 0) {
		printf("1..0 # SKIP no sbcemud binary (%s); set SBCEMUD\n", d->bin[0] ? d->bin : "unset");
		exit(77);
	}
	snprintf(d->dir, sizeof(d->dir), "%s/sbcemu-itest-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
	if (!mkdtemp(d->dir)) {
		printf("Bail out! mkdtemp %s: %s\n", d->dir, strerror(errno));
		exit(1);
	}
	snprintf(d->conf, sizeof(d->conf), "%s/sbcemud.conf", d->dir);
	snprintf(d->state, sizeof(d->state), "%s/state", d->dir);
	snprintf(d->log, sizeof(d->log), "%s/sbcemud.log", d->dir);
	d->slot = register_daemon(d);
}

int itest_daemon_write_config(struct itest_daemon *d, const char *text)
{
	FILE *f = fopen(d->conf, "w");
	const char *p = text;

	if (!f)
		return -1;
	while (*p) {
		const char *at = strstr(p, "@DIR@");
		if (!at) {
			fputs(p, f);
			break;
		}
		fwrite(p, 1, (size_t)(at - p), f);
		fputs(d->dir, f);
		p = at + 5;
	}
	return fclose(f) == 0 ? 0 : -1;
}

/* A port the kernel just considered free (bind to port 0, then release it). */
static int pick_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static bool port_accepts(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	bool ok;

	if (fd < 0)
		return false;
	ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(fd);
	return ok;
}

void itest_daemon_log_tail(const struct itest_daemon *d, int lines)
{
	char cmd[800];
	FILE *p;
	char buf[512];

	snprintf(cmd, sizeof(cmd), "tail -n %d '%s' 2>/dev/null", lines, d->log);
	p = popen(cmd, "r");
	if (!p)
		return;
	while (fgets(buf, sizeof(buf), p)) {
		buf[strcspn(buf, "\n")] = '\0';
		printf("#   | %s\n", buf);
	}
	pclose(p);
}

int itest_daemon_start(struct itest_daemon *d)
{
	char listen[64];
	pid_t pid;

	if (d->port <= 0)
		d->port = pick_port();
	if (d->port <= 0)
		return -1;
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", d->port);
	mkdir(d->state, 0700);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		int nul = open("/dev/null", O_RDONLY);
		/* The daemon must not outlive a test killed by ctest's timeout. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (nul >= 0)
			dup2(nul, 0);
		execl(d->bin, d->bin, "-c", d->conf, "--listen", listen, "--state-dir", d->state, "--log-level",
		      "debug", (char *)NULL);
		fprintf(stderr, "exec %s: %s\n", d->bin, strerror(errno));
		_exit(127);
	}
	d->pid = pid;
	slot_set_pid(d);
	for (int i = 0; i < 400; i++) { /* 20 s */
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			d->pid = -1;
			slot_set_pid(d);
			itest_note("sbcemud exited before listening (status 0x%x); log %s:", st, d->log);
			itest_daemon_log_tail(d, 20);
			return -1;
		}
		if (port_accepts(d->port))
			return 0;
		usleep(50000);
	}
	itest_note("sbcemud not listening on %s after 20 s", listen);
	itest_daemon_log_tail(d, 20);
	itest_daemon_stop(d, SIGKILL);
	return -1;
}

int itest_daemon_stop(struct itest_daemon *d, int sig)
{
	int st = -1;

	if (d->pid <= 0)
		return -1;
	kill(d->pid, sig);
	for (int i = 0; i < 300; i++) { /* 15 s */
		if (waitpid(d->pid, &st, WNOHANG) == d->pid) {
			d->pid = -1;
			slot_set_pid(d);
			return st;
		}
		usleep(50000);
	}
	itest_note("sbcemud pid %d ignored signal %d for 15 s; SIGKILL", (int)d->pid, sig);
	kill(d->pid, SIGKILL);
	waitpid(d->pid, &st, 0);
	d->pid = -1;
	slot_set_pid(d);
	return st;
}

bool itest_daemon_alive(struct itest_daemon *d)
{
	int st;

	if (d->pid <= 0)
		return false;
	if (waitpid(d->pid, &st, WNOHANG) == d->pid) {
		itest_note("sbcemud died (wait status 0x%x)", st);
		itest_daemon_log_tail(d, 20);
		d->pid = -1;
		slot_set_pid(d);
		return false;
	}
	return true;
}

int itest_daemon_signal(const struct itest_daemon *d, int sig)
{
	return d->pid > 0 ? kill(d->pid, sig) : -1;
}

bool itest_daemon_exits_within(struct itest_daemon *d, unsigned ms)
{
	for (unsigned waited = 0; itest_daemon_alive(d); waited += 20) {
		if (waited >= ms)
			return false;
		usleep(20000);
	}
	return true;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void itest_daemon_cleanup(struct itest_daemon *d)
{
	if (d->pid > 0)
		itest_daemon_stop(d, SIGTERM);
	unregister_daemon(d);
	if (!d->dir[0])
		return;
	if (itest_keep_scratch())
		itest_note("scratch directory kept: %s", d->dir);
	else
		nftw(d->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	d->dir[0] = '\0';
}

void itest_daemon_up(struct itest_daemon *d, const char *name, const char *config_text)
{
	itest_daemon_init(d, name);
	if (itest_daemon_write_config(d, config_text) != 0) {
		printf("Bail out! cannot write %s\n", d->conf);
		exit(1);
	}
	if (itest_daemon_start(d) != 0) {
		itest_ok(false, "sbcemud starts with the test configuration", "see the log above (%s)", d->log);
		exit(itest_finish());
	}
	itest_note("sbcemud pid %d on 127.0.0.1:%d, scratch %s", (int)d->pid, d->port, d->dir);
}

int itest_ctl(const struct itest_daemon *d, char *out, size_t cap, const char *fmt, ...)
{
	const char *bin = getenv("SBCEMUCTL");
	char args[1024], line[3072], sink[256];
	size_t len = 0, n;
	va_list ap;
	FILE *p;
	int st;

	if (!bin || !*bin)
		return -1;
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "'%s' --state-dir '%s' %s 2>>'%s'", bin, d->state, args, d->log);
	p = popen(line, "r");
	if (!p)
		return -1;
	/* Read to the end (a full buffer keeps draining into sink) so the child never blocks on its stdout. */
	while ((n = out && len + 1 < cap ? fread(out + len, 1, cap - 1 - len, p) : fread(sink, 1, sizeof(sink), p)) > 0)
		if (out && len + 1 < cap)
			len += n;
	if (out && cap)
		out[len] = '\0';
	st = pclose(p);
	if (itest_verbose())
		itest_note("sbcemuctl %s -> %d", args, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

bool itest_ctl_expect(const struct itest_daemon *d, char *out, size_t cap, int want, const char *args,
		      const char *name)
{
	int rc = itest_ctl(d, out, cap, "%s", args);

	return itest_ok(rc == want, name, "exit %d (want %d): %.300s", rc, want, out ? out : "");
}
