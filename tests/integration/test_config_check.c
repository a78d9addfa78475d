/*
 * sbcemud --check catches what start-up would refuse, and a start that
 * fails creates nothing (docs/security.md): each configuration below names
 * a path start-up cannot use, or a latency model the core refuses.  For each, `sbcemud --check` and a real start
 * both exit 1 with "file:line: section.key: reason" (README.md: exit
 * status), and neither leaves a state directory, an LU directory or a
 * backing file behind.  A valid configuration passes --check, which creates
 * nothing either.  What cannot be a configuration file (/dev/zero, a
 * directory, a FIFO, a file with a NUL byte) is refused, without reading
 * it and without blocking.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"

#define LUN0 "lun \"" ITEST_TARGET "\" 0"

/*
 * One configuration: lines 1-2 [daemon] and its state_dir, 3 the target,
 * 4 the LUN's header, 5 its path, then the rest.  @DIR@ is the scratch
 * directory; the state directory and every file named *.img do not exist.
 */
struct bad_config {
	const char *rule;
	const char *state_dir;
	const char *path;
	const char *rest;
	const char *where;   /* "LINE: section.key" */
	const char *reason;  /* with @DIR@ */
	bool skip_as_root;
};

static const struct bad_config bad[] = {
	{ "a backing file under /proc", "@DIR@/state", "/proc/version", "size = 1M\n", "5: " LUN0 ".path",
	  "/proc/version is on procfs, a kernel pseudo file system, not storage", false },
	{ "a backing path that is a directory", "@DIR@/state", "@DIR@", "size = 1M\n", "5: " LUN0 ".path",
	  "@DIR@: neither a regular file nor a block device", false },
	{ "a missing backing file without a size", "@DIR@/state", "@DIR@/missing.img", "", "5: " LUN0 ".path",
	  "@DIR@/missing.img: the file does not exist and no size is configured to create it", false },
	{ "write_protect on a missing backing file", "@DIR@/state", "@DIR@/wp.img", "size = 1M\nwrite_protect = true\n",
	  "5: " LUN0 ".path", "@DIR@/wp.img: the file does not exist, and a read-only one is never created", false },
	{ "a state directory under /proc", "/proc/sbcemu-itest/state", "@DIR@/lun0.img", "size = 1M\n",
	  "2: daemon.state_dir",
	  "cannot create /proc/sbcemu-itest/state: /proc is on procfs, a kernel pseudo file system, not storage",
	  false },
	{ "a state directory below a regular file", "@DIR@/afile/state", "@DIR@/lun0.img", "size = 1M\n",
	  "2: daemon.state_dir", "cannot create @DIR@/afile/state: @DIR@/afile is not a directory", false },
	{ "a state directory in a directory the daemon cannot write", "@DIR@/ro/state", "@DIR@/lun0.img",
	  "size = 1M\n", "2: daemon.state_dir", "cannot create @DIR@/ro/state: @DIR@/ro is not writable: Permission denied",
	  true },
	/* The latency model (docs/latency.md): the core's check, at the key's line. */
	{ "a log-normal latency with p99 below the mean", "@DIR@/state", "@DIR@/lun0.img",
	  "size = 1M\nlatency = distribution mean_us=100 p99_us=50\n", "7: " LUN0 ".latency",
	  "latency: p99_us (50) must exceed mean_us (100) for a log-normal time", false },
	{ "a latency key the model does not have", "@DIR@/state", "@DIR@/lun0.img",
	  "size = 1M\nlatency = fixed read_us=10 seek_avg_us=5\n", "7: " LUN0 ".latency",
	  "fixed: \"seek_avg_us\" is not a key of this model (docs/latency.md)", false },
};

static struct itest_daemon scratch;

/* text with every @DIR@ replaced by the scratch directory. */
static const char *expand(const char *text, char *buf, size_t len)
{
	size_t n = 0;

	for (const char *p = text; *p && n + 1 < len;) {
		if (strncmp(p, "@DIR@", 5) == 0) {
			n += (size_t)snprintf(buf + n, len - n, "%s", scratch.dir);
			p += 5;
		} else {
			buf[n++] = *p++;
		}
	}
	buf[n < len ? n : len - 1] = '\0';
	return buf;
}

/* A port the kernel just considered free. */
static int spare_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;

	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/*
 * Runs sbcemud -c conf (--check, or a start on a spare port) with stderr in
 * out; a start still running after 10 s has started and is stopped.
 * Returns the exit status, or -1 when it started.
 */
static int run(bool check, char *out, size_t outlen)
{
	char listen[32], errfile[600];
	bool exited = false;
	int status = 0, fd;
	pid_t pid;

	snprintf(listen, sizeof(listen), "127.0.0.1:%d", spare_port());
	snprintf(errfile, sizeof(errfile), "%s/stderr", scratch.dir);
	pid = fork();
	if (pid == 0) {
		fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, STDERR_FILENO);
		dup2(fd, STDOUT_FILENO);
		if (check)
			execl(scratch.bin, scratch.bin, "-c", scratch.conf, "--check", (char *)NULL);
		else
			execl(scratch.bin, scratch.bin, "-c", scratch.conf, "--listen", listen, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200 && !(exited = waitpid(pid, &status, WNOHANG) == pid); i++)
		usleep(50000);
	if (!exited) {
		kill(pid, SIGTERM);
		waitpid(pid, &status, 0);
		status = -1;
	} else {
		status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
	}
	fd = open(errfile, O_RDONLY);
	out[0] = '\0';
	if (fd >= 0) {
		ssize_t n = read(fd, out, outlen - 1);

		out[n > 0 ? n : 0] = '\0';
		close(fd);
	}
	unlink(errfile);
	return status;
}

/* What a start could make in the scratch directory: none may exist after a failed one. */
static const char *const could_make[] = { "state", "missing.img", "wp.img", "lun0.img", "ro/state" };

/* Whether none of could_make (nor state_dir) exists; else the first that does in what. */
static bool nothing_created(const char *state_dir, char *what, size_t len)
{
	struct stat st;
	char p[800];

	for (size_t i = 0; i < sizeof(could_make) / sizeof(could_make[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", scratch.dir, could_make[i]);
		if (stat(p, &st) == 0) {
			snprintf(what, len, "%s exists", p);
			return false;
		}
	}
	if (stat(state_dir, &st) == 0) {
		snprintf(what, len, "%s exists", state_dir);
		return false;
	}
	return true;
}

/* Removes whatever a daemon that should not have started made, so the next case starts clean. */
static void clean(void)
{
	char cmd[1200];

	for (size_t i = 0; i < sizeof(could_make) / sizeof(could_make[0]); i++) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s'", scratch.dir, could_make[i]);
		if (system(cmd) != 0)
			itest_note("%s failed", cmd);
	}
}

static void test_bad(const struct bad_config *b)
{
	char text[4096], state_dir[700], path[700], rest[700], line[2048], reason[1200], out[8192], what[900];
	char name[300];
	int status;

	if (b->skip_as_root && geteuid() == 0) {
		itest_note("skipped as root (root writes in any directory): %s", b->rule);
		return;
	}
	expand(b->state_dir, state_dir, sizeof(state_dir));
	expand(b->path, path, sizeof(path));
	expand(b->rest, rest, sizeof(rest));
	snprintf(text, sizeof(text), "[daemon]\nstate_dir = %s\n[target \"" ITEST_TARGET "\"]\n[" LUN0 "]\npath = %s\n%s",
		 state_dir, path, rest);
	if (itest_daemon_write_config(&scratch, text) != 0) {
		itest_ok(false, b->rule, "cannot write %s", scratch.conf);
		return;
	}
	snprintf(line, sizeof(line), "%s:%s: %s\n", scratch.conf, b->where, expand(b->reason, reason, sizeof(reason)));

	status = run(true, out, sizeof(out));
	snprintf(name, sizeof(name), "%s: --check exits 1 with file:line: section.key: reason", b->rule);
	itest_ok(status == 1 && strncmp(out, line, strlen(line)) == 0, name, "status %d, output \"%s\", want \"%s\"",
		 status, out, line);
	snprintf(name, sizeof(name), "%s: --check creates nothing", b->rule);
	itest_ok(nothing_created(state_dir, what, sizeof(what)), name, "%s", what);
	clean();

	status = run(false, out, sizeof(out));
	snprintf(name, sizeof(name), "%s: a start exits 1 with the same message", b->rule);
	itest_ok(status == 1 && strncmp(out, line, strlen(line)) == 0, name, "%s, output \"%s\"",
		 status < 0 ? "it started" : "other status", out);
	snprintf(name, sizeof(name), "%s: the failed start created nothing", b->rule);
	itest_ok(nothing_created(state_dir, what, sizeof(what)), name, "%s", what);
	clean();
}

static void test_good(void)
{
	char text[2048], out[4096], what[900], state_dir[700];
	int status;

	expand("@DIR@/state", state_dir, sizeof(state_dir));
	snprintf(text, sizeof(text),
		 "[daemon]\nstate_dir = %s\n[target \"" ITEST_TARGET "\"]\n[" LUN0 "]\npath = lun0.img\nsize = 1M\n",
		 state_dir);
	itest_daemon_write_config(&scratch, text);
	status = run(true, out, sizeof(out));
	itest_ok(status == 0 && strncmp(out, "sbcemud: configuration OK: 1 target, 1 LU (0 conglomerates), 0 templates, "
					 "state in ", 83) == 0 && strchr(out, '\n') == strrchr(out, '\n'),
		 "a valid configuration passes --check with one summary line", "status %d, output \"%s\"", status,
		 out);
	itest_ok(nothing_created(state_dir, what, sizeof(what)),
		 "--check of a valid configuration creates nothing (no state directory, no backing file)", "%s", what);
}

/* -c PATH with what cannot be a configuration file: --check and a start exit 1 at once, naming why. */
static void test_not_a_file(const char *what, const char *path, const char *reason)
{
	char out[4096], name[256];

	for (int check = 1; check >= 0; check--) {
		uint64_t t0 = itest_now_ms();
		int status;

		unlink(scratch.conf);
		if (symlink(path, scratch.conf) != 0) {
			itest_ok(false, "a link in place of the configuration", "%s", strerror(errno));
			return;
		}
		status = run(check, out, sizeof(out));
		snprintf(name, sizeof(name), "%s -c %s: exit 1 within 2 s, \"%s\"", check ? "--check" : "start", what,
			 reason);
		itest_ok(status == 1 && strstr(out, reason) && itest_now_ms() - t0 < 2000, name,
			 "status %d after %llu ms, output \"%.200s\"", status, (unsigned long long)(itest_now_ms() - t0),
			 out);
	}
	unlink(scratch.conf);
}

static void test_not_files(void)
{
	char fifo[700], dir[700], nul[700];
	int fd;

	snprintf(fifo, sizeof(fifo), "%s/fifo", scratch.dir);
	snprintf(dir, sizeof(dir), "%s/adir", scratch.dir);
	snprintf(nul, sizeof(nul), "%s/nul.conf", scratch.dir);
	mkfifo(fifo, 0600);
	mkdir(dir, 0700);
	fd = open(nul, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	if (fd >= 0) {
		if (write(fd, "[daemon]\n\0listen = x\n", 22) != 22)
			itest_note("short write of %s", nul);
		close(fd);
	}
	test_not_a_file("/dev/zero", "/dev/zero", "not a regular file (a device)");
	test_not_a_file("a directory", dir, "not a regular file (a directory)");
	test_not_a_file("a FIFO nobody writes", fifo, "not a regular file (a FIFO)");
	test_not_a_file("a file with a NUL byte on line 2", nul, "sbcemud.conf:2: a NUL byte: not a text file");
	unlink(fifo);
	rmdir(dir);
	unlink(nul);
}

int main(int argc, char **argv)
{
	char p[700];
	int fd;

	itest_init(argc, argv, "test_config_check: --check catches what start-up refuses; a failed start creates nothing");
	itest_daemon_init(&scratch, "config-check");
	snprintf(p, sizeof(p), "%s/afile", scratch.dir);
	fd = open(p, O_CREAT | O_WRONLY, 0600);
	if (fd >= 0)
		close(fd);
	snprintf(p, sizeof(p), "%s/ro", scratch.dir);
	mkdir(p, 0555);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		test_bad(&bad[i]);
	test_good();
	test_not_files();
	itest_daemon_cleanup(&scratch);
	return itest_finish();
}
