/*
 * The runtime control socket and sbcemuctl (docs/control.md), driven
 * together with a libiscsi initiator on one daemon with one conventional LU
 * (LUN 0, 64 MiB, 512-byte blocks):
 * - sbcemuctl: status, lus, exit codes 0 (done), 1 (refused / no daemon),
 *   2 (usage error);
 * - the raw socket refuses bad input (malformed JSON, unknown command or
 *   member, a line past 65536 bytes, an idle client) and keeps serving;
 *   it is a socket with mode 0600;
 * - fault rules: sense (with INFORMATION = the LBA), medium-error (repaired
 *   by a write), delay, hold (ended by ABORT TASK, LOGICAL UNIT RESET, or
 *   removing the rule);
 * - lu state (02/04/03, 02/3A/00, 06/28/00 on the way back to ready),
 *   lu write-protect (07/27/00, MODE SENSE WP), lu resize (06/2A/09, READ
 *   CAPACITY, shrinking needs --force);
 * - the per-LU counters in `lus`.
 *
 * Environment: SBCEMUCTL (the sbcemuctl binary; CMake sets it), else next to
 * $SBCEMUD, else build/daemon/sbcemuctl relative to this program.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"

#define LU0_BLOCKS (64u * 1024 * 1024 / 512)

static const char config[] =
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\n"
	"size = 64M\n"
	"logical_block_size = 512\n"
	"thin_provisioning = true\n"
	/* LUN 1: WRITE ATOMIC up to 64 blocks (tear-atomic); LUN 2: host-managed, 8 zones of 8 MiB (zone rules). */
	"[lun \"" ITEST_TARGET "\" 1]\n"
	"path = @DIR@/lun1.img\n"
	"size = 16M\n"
	"max_atomic_transfer_length = 64\n"
	"[lun \"" ITEST_TARGET "\" 2]\n"
	"kind = zbc-hm\n"
	"path = @DIR@/lun2.img\n"
	"size = 64M\n"
	"zone_size = 8M\n";

static struct itest_daemon d;
static struct iscsi_context *s;
static char ctl_bin[PATH_MAX];
static char sock_path[700];

/* ---- sbcemuctl ---- */

#define CTL_OUT 65536
static char ctl_out[CTL_OUT], ctl_err[8192];

static void find_ctl(void)
{
	const char *env = getenv("SBCEMUCTL"), *daemon = getenv("SBCEMUD");
	char tmp[PATH_MAX];

	if (env && *env) {
		snprintf(ctl_bin, sizeof(ctl_bin), "%s", env);
	} else if (daemon && *daemon) {
		snprintf(tmp, sizeof(tmp), "%s", daemon);
		snprintf(ctl_bin, sizeof(ctl_bin), "%s/sbcemuctl", dirname(tmp));
	} else {
		ssize_t n = readlink("/proc/self/exe", tmp, sizeof(tmp) - 1);
		if (n > 0) {
			tmp[n] = '\0';
			snprintf(ctl_bin, sizeof(ctl_bin), "%s/../../daemon/sbcemuctl", dirname(tmp));
		}
	}
	if (!ctl_bin[0] || access(ctl_bin, X_OK) != 0) {
		printf("1..0 # SKIP no sbcemuctl binary (%s); set SBCEMUCTL\n", ctl_bin[0] ? ctl_bin : "unset");
		exit(77);
	}
}

/* Appends what fd has to buf (NUL-terminated, excess dropped); false at EOF. */
static bool drain(int fd, char *buf, size_t cap, size_t *len)
{
	char tmp[4096];
	ssize_t n = read(fd, tmp, sizeof(tmp));

	if (n <= 0)
		return n < 0 && errno == EINTR;
	if (*len + 1 < cap) {
		size_t take = (size_t)n < cap - 1 - *len ? (size_t)n : cap - 1 - *len;
		memcpy(buf + *len, tmp, take);
		*len += take;
		buf[*len] = '\0';
	}
	return true;
}

/*
 * Runs sbcemuctl with argv (NULL-terminated, argv[0] included); stdout into
 * ctl_out, stderr into ctl_err.  Returns its exit status, or -1 (did not run,
 * killed, or still running after 20 s).
 */
static int run_ctl_argv(char *const argv[])
{
	int out[2], err[2], st = 0;
	size_t olen = 0, elen = 0;
	bool oopen = true, eopen = true;
	uint64_t deadline = itest_now_ms() + 20000;
	pid_t pid;

	ctl_out[0] = ctl_err[0] = '\0';
	if (pipe(out) != 0)
		return -1;
	if (pipe(err) != 0) {
		close(out[0]);
		close(out[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(out[0]);
		close(out[1]);
		close(err[0]);
		close(err[1]);
		execv(ctl_bin, argv);
		fprintf(stderr, "exec %s: %s\n", ctl_bin, strerror(errno));
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	while ((oopen || eopen) && itest_now_ms() < deadline) {
		struct pollfd p[2] = { { .fd = oopen ? out[0] : -1, .events = POLLIN },
				       { .fd = eopen ? err[0] : -1, .events = POLLIN } };
		if (poll(p, 2, 100) < 0 && errno != EINTR)
			break;
		if (oopen && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			oopen = drain(out[0], ctl_out, sizeof(ctl_out), &olen);
		if (eopen && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
			eopen = drain(err[0], ctl_err, sizeof(ctl_err), &elen);
	}
	close(out[0]);
	close(err[0]);
	if (oopen || eopen) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		snprintf(ctl_err, sizeof(ctl_err), "sbcemuctl still running after 20 s (killed)");
		return -1;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (itest_verbose())
		printf("#   sbcemuctl %s ... -> %d\n", argv[1] ? argv[1] : "", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * run_ctl("fault add 0 sense --lba %d", 100): "sbcemuctl -s <socket> ARGS",
 * ARGS split at spaces (no argument here has one).  Returns the exit status;
 * stdout in ctl_out, stderr in ctl_err.
 */
static int run_ctl(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run_ctl(const char *fmt, ...)
{
	char line[1024], *argv[64], *save = NULL;
	int argc = 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	argv[argc++] = "sbcemuctl";
	argv[argc++] = "-s";
	argv[argc++] = sock_path;
	for (char *w = strtok_r(line, " ", &save); w && argc < 63; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	return run_ctl_argv(argv);
}

/* A check that the last run_ctl exited with want. */
static bool ctl_ok(int rc, int want, const char *name)
{
	return itest_ok(rc == want, name, "exit %d, want %d; stderr: %.300s; stdout: %.300s", rc, want, ctl_err,
			ctl_out);
}

/* ---- a little JSON, by text ---- */

/* The number after "key": in json (the first occurrence). */
static bool json_num(const char *json, const char *key, long long *v)
{
	char pat[128], *end;
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\"", key);
	p = strstr(json, pat);
	if (!p)
		return false;
	p += strlen(pat);
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	if (*p++ != ':')
		return false;
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	*v = strtoll(p, &end, 10);
	return end != p;
}

/* json has "key": value (with or without the space); value is literal text such as 0 or false. */
static bool json_has(const char *json, const char *key, const char *value)
{
	char a[128], b[128];

	snprintf(a, sizeof(a), "\"%s\": %s", key, value);
	snprintf(b, sizeof(b), "\"%s\":%s", key, value);
	return strstr(json, a) || strstr(json, b);
}

/* ---- the raw socket ---- */

static int sock_connect(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (strlen(sock_path) >= sizeof(a.sun_path)) {
		close(fd);
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(a.sun_path, sock_path, strlen(sock_path) + 1);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Sends len bytes of data on a new connection and reads the reply until EOF,
 * a newline or timeout_ms.  Returns the reply length (0: closed without a
 * reply, or reset), -1 no connection, -2 timeout without anything.
 */
static int raw_request(const void *data, size_t len, char *reply, size_t cap, int timeout_ms)
{
	int fd = sock_connect();
	size_t sent = 0, got = 0;
	uint64_t deadline = itest_now_ms() + (uint64_t)timeout_ms;
	bool closed = false;

	reply[0] = '\0';
	if (fd < 0)
		return -1;
	while (sent < len) {
		ssize_t n = send(fd, (const char *)data + sent, len - sent, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break; /* EPIPE / ECONNRESET: the daemon hung up; read what it said */
		}
		sent += (size_t)n;
	}
	while (itest_now_ms() < deadline && got + 1 < cap) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recv(fd, reply + got, cap - 1 - got, 0);
		if (n <= 0) {
			closed = true;
			break;
		}
		got += (size_t)n;
		reply[got] = '\0';
		if (memchr(reply, '\n', got))
			break;
	}
	close(fd);
	if (!got && !closed)
		return -2;
	return (int)got;
}

/* raw_request of a NUL-terminated text, 5 s. */
static int raw_line(const char *text, char *reply, size_t cap)
{
	return raw_request(text, strlen(text), reply, cap, 5000);
}

static bool reply_refused(const char *reply)
{
	return json_has(reply, "ok", "false");
}

/* ---- SCSI ---- */

#define EXPECT(name, e, dir, out, olen, ilen, r, ...)                                                          \
	do {                                                                                                   \
		const uint8_t cdb_[] = { __VA_ARGS__ };                                                        \
		itest_expect_cmd(s, 0, name, cdb_, (int)sizeof(cdb_), dir, out, olen, ilen, e, r);           \
	} while (0)

static void read10(uint32_t lba, uint16_t n, struct itest_result *r)
{
	uint8_t cdb[10] = { 0x28 };

	itest_put_be32(cdb + 2, lba);
	itest_put_be16(cdb + 7, n);
	itest_cmd(s, 0, cdb, 10, ITEST_IN, NULL, 0, (size_t)n * 512, r);
}

static void write10(uint32_t lba, uint16_t n, uint8_t fill, struct itest_result *r)
{
	uint8_t cdb[10] = { 0x2a }, *buf = malloc((size_t)n * 512);

	memset(buf, fill, (size_t)n * 512);
	itest_put_be32(cdb + 2, lba);
	itest_put_be16(cdb + 7, n);
	itest_cmd(s, 0, cdb, 10, ITEST_OUT, buf, (size_t)n * 512, 0, r);
	free(buf);
}

static void tur(struct itest_result *r)
{
	static const uint8_t cdb[6] = { 0 };

	itest_cmd(s, 0, cdb, 6, ITEST_NONE, NULL, 0, 0, r);
}

/* Records a check that r matches e (frees r). */
static bool expect_r(struct itest_result *r, struct itest_expect e, const char *name)
{
	bool ok = itest_ok(itest_result_matches(r, e), name, "%s", itest_result_str(r));
	itest_result_free(r);
	return ok;
}

/* r is a CHECK CONDITION whose sense has VALID = 1 and INFORMATION = info. */
static bool expect_info(const struct itest_result *r, uint64_t info, const char *name)
{
	return itest_ok(r->transport_ok && r->status == 2 && r->sense.info_valid && r->sense.information == info, name,
			"%s, %s sense, VALID %d, INFORMATION %llu", itest_result_str(r),
			r->sense.descriptor ? "descriptor" : "fixed", r->sense.info_valid,
			(unsigned long long)r->sense.information);
}

/* READ CAPACITY(10) RETURNED LOGICAL BLOCK ADDRESS, or -1. */
static long long read_capacity10(void)
{
	static const uint8_t cdb[10] = { 0x25 };
	struct itest_result r;
	long long lba = -1;

	itest_cmd(s, 0, cdb, 10, ITEST_IN, NULL, 0, 8, &r);
	if (itest_result_matches(&r, EXPECT_GOOD) && r.data_len >= 8)
		lba = itest_get_be32(r.data);
	else
		itest_note("READ CAPACITY(10): %s", itest_result_str(&r));
	itest_result_free(&r);
	return lba;
}

/* MODE SENSE(6) DEVICE-SPECIFIC PARAMETER WP bit: 1, 0, or -1 on error. */
static int mode_sense_wp(void)
{
	static const uint8_t cdb[6] = { 0x1a, 0x08, 0x3f, 0, 0xff, 0 };
	struct itest_result r;
	int wp = -1;

	itest_cmd(s, 0, cdb, 6, ITEST_IN, NULL, 0, 255, &r);
	if (itest_result_matches(&r, EXPECT_GOOD) && r.data_len >= 4)
		wp = (r.data[2] & 0x80) != 0;
	else
		itest_note("MODE SENSE(6): %s", itest_result_str(&r));
	itest_result_free(&r);
	return wp;
}

/* ---- 1. sbcemuctl basics ---- */

static void test_ctl_basics(void)
{
	int rc;

	ctl_ok(run_ctl("status"), 0, "sbcemuctl status -> exit 0");
	ctl_ok(run_ctl("lus"), 0, "sbcemuctl lus -> exit 0");
	rc = run_ctl("--json lus");
	ctl_ok(rc, 0, "sbcemuctl --json lus -> exit 0");
	itest_ok(json_has(ctl_out, "lun", "0"), "sbcemuctl --json lus lists \"lun\": 0", "stdout: %.500s", ctl_out);
	itest_ok(strstr(ctl_out, "\"conventional\"") != NULL, "sbcemuctl --json lus: LUN 0 kind conventional",
		 "stdout: %.500s", ctl_out);
	rc = run_ctl("--json status");
	ctl_ok(rc, 0, "sbcemuctl --json status -> exit 0");
	{
		long long pid = -1;
		itest_ok(json_num(ctl_out, "pid", &pid) && pid == d.pid, "sbcemuctl --json status: pid is the daemon's",
			 "pid %lld, daemon %d; stdout: %.300s", pid, (int)d.pid, ctl_out);
	}
	rc = run_ctl("--json sessions");
	ctl_ok(rc, 0, "sbcemuctl --json sessions -> exit 0");
	{
		char portal[64];
		long long exp = -1, max = -1, cmds = -1;

		snprintf(portal, sizeof(portal), "\"portal\": \"127.0.0.1:%d\"", d.port);
		itest_ok(strstr(ctl_out, "\"initiator\": \"" ITEST_INITIATOR_1 "\"") && strstr(ctl_out, "\"type\": \"normal\"") &&
				 strstr(ctl_out, portal) && strstr(ctl_out, "\"cid\""),
			 "sessions: the test's session, type normal, its connection's portal 127.0.0.1:<port> and CID",
			 "stdout: %.600s", ctl_out);
		itest_ok(json_num(ctl_out, "exp_cmd_sn", &exp) && json_num(ctl_out, "max_cmd_sn", &max) &&
				 json_num(ctl_out, "commands", &cmds) && cmds == 0 && max - exp + 1 >= 1,
			 "sessions: no command in flight, a command window of at least 1 (MaxCmdSN - ExpCmdSN + 1, "
			 "RFC 7143 4.2.2.1)",
			 "commands %lld, ExpCmdSN %lld, MaxCmdSN %lld", cmds, exp, max);
	}
	ctl_ok(run_ctl("sessions"), 0, "sbcemuctl sessions (table) -> exit 0");
	itest_ok(strstr(ctl_out, ITEST_INITIATOR_1) != NULL, "sessions table lists the initiator", "stdout: %.300s", ctl_out);
	ctl_ok(run_ctl("bogus"), 2, "sbcemuctl bogus (unknown command) -> exit 2 (usage)");
	rc = run_ctl("lu state 0 sideways");
	itest_ok(rc == 1 || rc == 2, "sbcemuctl lu state 0 sideways (unknown state) -> exit 1 or 2, nothing changed",
		 "exit %d; stderr: %.300s", rc, ctl_err);
	ctl_ok(run_ctl("lu state 7 offline"), 1, "sbcemuctl lu state 7 offline (no LU 7) -> exit 1 (refused)");
	itest_ok(ctl_err[0] != '\0', "... and the daemon's reason is on stderr", "stderr empty");
	ctl_ok(run_ctl("fault remove 4242"), 1, "sbcemuctl fault remove 4242 (no such rule) -> exit 1");
	{
		char missing[800];
		char *argv[] = { "sbcemuctl", "-s", missing, "status", NULL };
		snprintf(missing, sizeof(missing), "%s/no-such.sock", d.dir);
		ctl_ok(run_ctl_argv(argv), 1, "sbcemuctl -s <missing socket> status -> exit 1 (no daemon)");
	}
}

/* ---- 2. the raw socket ---- */

static void test_raw_socket(void)
{
	char reply[4096];
	int n, idle;
	char *big;
	const size_t big_len = 70000;

	n = raw_line("{\"command\": \"status\"}\n", reply, sizeof(reply));
	itest_ok(n > 0 && json_has(reply, "ok", "true"), "raw socket: {\"command\": \"status\"} -> \"ok\": true",
		 "%d bytes: %.300s", n, reply);
	itest_ok(n > 0 && reply[n - 1] == '\n', "raw socket: the reply is one line ending in a newline",
		 "%d bytes: %.300s", n, reply);

	n = raw_line("{\"command\": \"status\"\n", reply, sizeof(reply));
	itest_ok(n > 0 && reply_refused(reply), "raw socket: malformed JSON -> \"ok\": false", "%d bytes: %.300s", n,
		 reply);
	n = raw_line("not json at all\n", reply, sizeof(reply));
	itest_ok(n > 0 && reply_refused(reply), "raw socket: text that is not JSON -> \"ok\": false", "%d bytes: %.300s",
		 n, reply);
	n = raw_line("[1, 2, 3]\n", reply, sizeof(reply));
	itest_ok(n > 0 && reply_refused(reply), "raw socket: a JSON array, not an object -> \"ok\": false",
		 "%d bytes: %.300s", n, reply);
	n = raw_line("{\"command\": \"bogus\"}\n", reply, sizeof(reply));
	itest_ok(n > 0 && reply_refused(reply), "raw socket: unknown command -> \"ok\": false", "%d bytes: %.300s", n,
		 reply);
	itest_ok(n > 0 && strstr(reply, "\"error\"") != NULL, "raw socket: a refusal carries an \"error\" reason",
		 "%.300s", reply);
	n = raw_line("{\"command\": \"status\", \"frobnicate\": 1}\n", reply, sizeof(reply));
	itest_ok(n > 0 && reply_refused(reply), "raw socket: unknown member -> \"ok\": false", "%d bytes: %.300s", n,
		 reply);
	n = raw_line("{\"command\": \"lu-state\", \"lun\": \"zero\", \"state\": \"offline\"}\n", reply, sizeof(reply));
	itest_ok(n > 0 && reply_refused(reply), "raw socket: lu-state with \"lun\" a string -> \"ok\": false",
		 "%d bytes: %.300s", n, reply);

	/* 70000 bytes on one line: more than 65536 without a newline. */
	big = malloc(big_len);
	memset(big, ' ', big_len);
	memcpy(big, "{\"command\": \"status\", \"pad\": \"", 30);
	memset(big + 30, 'a', big_len - 34);
	memcpy(big + big_len - 4, "\"}", 2);
	big[big_len - 2] = ' ';
	big[big_len - 1] = '\n';
	n = raw_request(big, big_len, reply, sizeof(reply), 8000);
	free(big);
	itest_note("70000-byte line: %s", n == 0 ? "connection closed without a reply" : n > 0 ? reply : "no answer");
	itest_ok(n == 0 || (n > 0 && reply_refused(reply)),
		 "raw socket: a 70000-byte line -> connection closed or \"ok\": false", "%d bytes: %.300s", n, reply);
	itest_ok(itest_daemon_alive(&d), "... and sbcemud is still running", NULL);
	ctl_ok(run_ctl("status"), 0, "... and a following sbcemuctl status -> exit 0");

	/* Connect and close without a byte. */
	for (int i = 0; i < 3; i++) {
		int fd = sock_connect();
		if (fd >= 0)
			close(fd);
	}
	usleep(100000);
	ctl_ok(run_ctl("status"), 0, "raw socket: clients that connect and close at once -> status still served");

	/* A silent client: the others are served meanwhile, and it is dropped after 1 s of silence. */
	idle = sock_connect();
	itest_ok(idle >= 0, "raw socket: connect a silent client", "%s", strerror(errno));
	if (idle >= 0) {
		uint64_t t0 = itest_now_ms(), t1;
		struct pollfd p = { .fd = idle, .events = POLLIN };
		char b;

		ctl_ok(run_ctl("status"), 0, "while a client sends nothing: sbcemuctl status -> exit 0");
		t1 = itest_now_ms();
		itest_ok(t1 - t0 < 2000, "... served at once, not after the silent client's timeout", "%llu ms",
			 (unsigned long long)(t1 - t0));
		bool closed = poll(&p, 1, 9000) == 1 && recv(idle, &b, 1, MSG_DONTWAIT) <= 0;
		t1 = itest_now_ms();
		itest_ok(closed && t1 - t0 >= 800 && t1 - t0 < 3000,
			 "a client that sends nothing is disconnected after about 1 s (its idle deadline)",
			 "%s after %llu ms", closed ? "closed" : "still open", (unsigned long long)(t1 - t0));
		close(idle);
	}
	/* Every one of the 16 places held by a silent client: the next one waits in the backlog about 1 s. */
	{
		int fds[16];
		uint64_t t0;

		for (int i = 0; i < 16; i++)
			fds[i] = sock_connect();
		usleep(100000);
		t0 = itest_now_ms();
		ctl_ok(run_ctl("status"), 0, "16 silent clients hold every place: sbcemuctl status -> exit 0");
		itest_ok(itest_now_ms() - t0 < 2500, "... within 2.5 s, not the 5 s a request may take",
			 "%llu ms", (unsigned long long)(itest_now_ms() - t0));
		for (int i = 0; i < 16; i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
	/* A client that sends a byte every 0.5 s is never idle for 1 s, but its whole request takes at most 5 s. */
	idle = sock_connect();
	if (idle >= 0) {
		uint64_t t0 = itest_now_ms();
		bool open = true;

		while (open && itest_now_ms() - t0 < 8000) {
			open = send(idle, "{", 1, MSG_NOSIGNAL) == 1;
			usleep(500000);
		}
		itest_ok(!open && itest_now_ms() - t0 >= 4500 && itest_now_ms() - t0 < 6500,
			 "a client that trickles its request is disconnected at its 5 s deadline",
			 "%s after %llu ms", open ? "still open" : "closed", (unsigned long long)(itest_now_ms() - t0));
		close(idle);
	}
	itest_ok(itest_daemon_alive(&d), "sbcemud still running after the bad socket input", NULL);
}

/* ---- 3. the socket file ---- */

static void test_socket_mode(void)
{
	struct stat st;
	bool ok = stat(sock_path, &st) == 0;

	itest_ok(ok && S_ISSOCK(st.st_mode), "control socket <state dir>/control.sock is a socket", "%s",
		 ok ? "not a socket" : strerror(errno));
	itest_ok(ok && (st.st_mode & 07777) == 0600, "control socket mode is 0600", "mode %04o",
		 ok ? (unsigned)(st.st_mode & 07777) : 0);
}

/*
 * As another user (nobody), in a child: returns 0 when connect() was refused
 * with EACCES, 1 when connected and the daemon closed without a reply, 2 when
 * it answered, 3 on any other outcome.
 */
static int other_user_try(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		char buf[256];
		int fd;
		ssize_t n;

		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(3);
		fd = sock_connect();
		if (fd < 0)
			_exit(errno == EACCES ? 0 : 3);
		if (write(fd, "{\"command\":\"status\"}\n", 21) < 0)
			_exit(1); /* already closed */
		n = read(fd, buf, sizeof(buf));
		/* Closed unread: EOF, or a reset since the request was never read. */
		_exit(n > 0 ? 2 : n == 0 || errno == ECONNRESET ? 1 : 3);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 3;
	return WEXITSTATUS(st);
}

/* Another local user cannot use the socket: the file mode stops it, and SO_PEERCRED would. */
static void test_other_user(void)
{
	struct stat sd, ss;
	int rc;

	if (geteuid() != 0) {
		itest_note("not root: the other-user checks need setuid (skipped)");
		return;
	}
	rc = other_user_try();
	itest_ok(rc == 0, "another user (nobody): connect() to the 0600 socket is refused (EACCES)", "outcome %d", rc);
	/* Open the file modes up (scratch and state directories, socket): the daemon's own check must still refuse. */
	if (stat(d.dir, &sd) != 0 || stat(d.state, &ss) != 0 || chmod(d.dir, 0711) != 0 || chmod(d.state, 0711) != 0 ||
	    chmod(sock_path, 0666) != 0) {
		itest_ok(false, "chmod the directories and socket for the SO_PEERCRED check", "%s", strerror(errno));
		return;
	}
	rc = other_user_try();
	chmod(sock_path, 0600);
	chmod(d.state, ss.st_mode & 07777);
	chmod(d.dir, sd.st_mode & 07777);
	itest_ok(rc == 1, "another user (nobody) on a 0666 socket: the daemon closes without answering (SO_PEERCRED)",
		 "outcome %d", rc);
	itest_ok(itest_daemon_alive(&d), "... and sbcemud keeps serving", NULL);
}

/* ---- 4. fault sense ---- */

static void test_fault_sense(void)
{
	struct itest_result r;
	long long v = -1;

	if (!ctl_ok(run_ctl("fault add 0 sense --opcode 0x28 --lba 100-199 --sense 3/0x11/0 --count 1"), 0,
		    "sbcemuctl fault add 0 sense --opcode 0x28 --lba 100-199 --sense 3/0x11/0 --count 1 -> exit 0"))
		return;
	read10(50, 1, &r);
	expect_r(&r, EXPECT_GOOD, "fault sense, LBA 100-199: READ(10) LBA 50 (outside the range) -> GOOD");
	{
		uint8_t cdb[16] = { 0x88 };
		itest_put_be64(cdb + 2, 150);
		itest_put_be32(cdb + 10, 1);
		itest_cmd(s, 0, cdb, 16, ITEST_IN, NULL, 0, 512, &r);
		expect_r(&r, EXPECT_GOOD, "fault sense, opcode 28h: READ(16) LBA 150 (other opcode) -> GOOD");
	}
	read10(150, 1, &r);
	itest_ok(itest_result_matches(&r, EXPECT_SENSE(3, 0x11, 0)), "fault sense: READ(10) LBA 150 -> 03/11/00", "%s",
		 itest_result_str(&r));
	expect_info(&r, 150, "fault sense: READ(10) LBA 150 -> sense VALID = 1, INFORMATION = 150");
	itest_result_free(&r);
	read10(150, 1, &r);
	expect_r(&r, EXPECT_GOOD, "fault sense --count 1: second READ(10) LBA 150 -> GOOD (rule spent)");
	read10(50, 1, &r);
	expect_r(&r, EXPECT_GOOD, "fault sense: READ(10) LBA 50 -> GOOD (never fails)");

	ctl_ok(run_ctl("--json fault list"), 0, "sbcemuctl --json fault list -> exit 0");
	itest_ok(json_num(ctl_out, "fired", &v) && v == 1, "fault list: the sense rule shows \"fired\": 1",
		 "fired %lld; stdout: %.500s", v, ctl_out);
	v = -1;
	itest_ok(json_num(ctl_out, "matched", &v) && v >= 1 && v <= 2,
		 "fault list: the sense rule shows \"matched\" 1..2 (READ(10)s overlapping LBA 100-199; not LBA 50, "
		 "not READ(16))",
		 "matched %lld; stdout: %.500s", v, ctl_out);
	ctl_ok(run_ctl("fault remove all"), 0, "sbcemuctl fault remove all -> exit 0");
	run_ctl("--json fault list");
	itest_ok(strstr(ctl_out, "\"id\"") == NULL, "after fault remove all: fault list has no rules", "stdout: %.300s",
		 ctl_out);
}

/* ---- 5. fault medium-error ---- */

static void test_fault_medium_error(void)
{
	struct itest_result r;
	long long id = -1, bad = -1, fired = -1;

	if (!ctl_ok(run_ctl("--json fault add 0 medium-error --lba 300-303"), 0,
		    "sbcemuctl fault add 0 medium-error --lba 300-303 -> exit 0"))
		return;
	if (!json_num(ctl_out, "id", &id))
		itest_note("fault add printed no id: %.200s", ctl_out);
	read10(302, 1, &r);
	itest_ok(itest_result_matches(&r, EXPECT_SENSE(3, 0x11, 0)), "medium-error 300-303: READ(10) LBA 302 -> 03/11/00",
		 "%s", itest_result_str(&r));
	expect_info(&r, 302, "medium-error: READ(10) LBA 302 -> INFORMATION = 302");
	itest_result_free(&r);
	read10(299, 4, &r);
	itest_ok(itest_result_matches(&r, EXPECT_SENSE(3, 0x11, 0)),
		 "medium-error 300-303: READ(10) LBA 299 length 4 -> 03/11/00", "%s", itest_result_str(&r));
	expect_info(&r, 300, "medium-error: READ(10) LBA 299 length 4 -> INFORMATION = 300 (the first bad LBA)");
	itest_result_free(&r);
	read10(296, 4, &r);
	expect_r(&r, EXPECT_GOOD, "medium-error 300-303: READ(10) LBA 296 length 4 (just before) -> GOOD");
	write10(300, 2, 0x3c, &r);
	expect_r(&r, EXPECT_GOOD, "medium-error: WRITE(10) LBA 300 length 2 -> GOOD");
	read10(300, 2, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.data_len == 1024 && r.data[0] == 0x3c &&
			 r.data[1023] == 0x3c,
		 "medium-error: after the write, READ(10) LBA 300 length 2 -> GOOD with the written data", "%s, %d bytes",
		 itest_result_str(&r), r.data_len);
	itest_result_free(&r);
	read10(302, 1, &r);
	expect_r(&r, EXPECT_SENSE(3, 0x11, 0), "medium-error: READ(10) LBA 302 (not rewritten) -> still 03/11/00");
	run_ctl("--json fault list");
	itest_ok(json_num(ctl_out, "bad_blocks", &bad) && bad == 2,
		 "fault list: the medium-error rule shows \"bad_blocks\": 2 after repairing 300-301",
		 "bad_blocks %lld; stdout: %.500s", bad, ctl_out);
	/* docs/control.md: a rule counts the commands it failed (three reads got 03/11/00 above). */
	itest_ok(json_num(ctl_out, "fired", &fired) && fired == 3,
		 "fault list: the medium-error rule shows \"fired\": 3, the reads it failed", "fired %lld; stdout: %.500s",
		 fired, ctl_out);
	if (id >= 0)
		ctl_ok(run_ctl("fault remove %lld", id), 0, "sbcemuctl fault remove <medium-error rule id> -> exit 0");
	else
		ctl_ok(run_ctl("fault remove all"), 0, "sbcemuctl fault remove all (medium-error rule) -> exit 0");
	read10(302, 1, &r);
	expect_r(&r, EXPECT_GOOD, "medium-error rule removed: READ(10) LBA 302 -> GOOD (blocks repaired)");
}

/* ---- 6. fault delay ---- */

static void test_fault_delay(void)
{
	struct itest_result r;
	uint64_t t0, t1;

	if (!ctl_ok(run_ctl("fault add 0 delay --delay 1500 --opcode 0x00 --count 1"), 0,
		    "sbcemuctl fault add 0 delay --delay 1500 --opcode 0x00 --count 1 -> exit 0"))
		return;
	t0 = itest_now_ms();
	tur(&r);
	t1 = itest_now_ms();
	itest_ok(t1 - t0 >= 1400, "fault delay 1500 ms: TEST UNIT READY takes >= 1.4 s", "%llu ms",
		 (unsigned long long)(t1 - t0));
	expect_r(&r, EXPECT_GOOD, "fault delay: the delayed TEST UNIT READY -> GOOD");
	t0 = itest_now_ms();
	tur(&r);
	t1 = itest_now_ms();
	itest_ok(t1 - t0 < 1000, "fault delay --count 1: the next TEST UNIT READY is not delayed", "%llu ms",
		 (unsigned long long)(t1 - t0));
	expect_r(&r, EXPECT_GOOD, "... and GOOD");
	ctl_ok(run_ctl("fault remove all"), 0, "sbcemuctl fault remove all (delay rule) -> exit 0");
}

/* ---- 7. fault hold ---- */

static void service_for(int ms, const bool *stop)
{
	itest_service(s, ms, stop);
}

static long long held_now(void)
{
	long long v = -1;

	if (run_ctl("--json fault list") != 0 || !json_num(ctl_out, "held", &v))
		itest_note("fault list: %.300s %.300s", ctl_out, ctl_err);
	return v;
}

/* Starts an asynchronous READ(10) of LBA 10 and checks that it is held for hold_ms. */
static struct scsi_task *start_held_read(struct itest_async *a, int hold_ms, const char *what)
{
	struct scsi_task *task;
	char name[200];
	long long held;

	memset(a, 0, sizeof(*a));
	task = iscsi_read10_task(s, 0, 10, 512, 512, 0, 0, 0, 0, 0, itest_async_cmd_cb, a);
	snprintf(name, sizeof(name), "%s: asynchronous READ(10) LBA 10 sent", what);
	if (!itest_ok(task != NULL, name, "%s", iscsi_get_error(s)))
		return NULL;
	service_for(hold_ms, &a->done);
	snprintf(name, sizeof(name), "%s: fault hold --opcode 0x28: READ(10) not answered within %d ms", what, hold_ms);
	itest_ok(!a->done, name, "completed with status 0x%x", a->status);
	held = held_now();
	snprintf(name, sizeof(name), "%s: while the READ(10) is held, fault list shows \"held\": 1", what);
	itest_ok(held == 1, name, "held %lld; stdout: %.300s", held, ctl_out);
	return task;
}

static void test_fault_hold(void)
{
	struct itest_async a, t;
	struct scsi_task *task;
	struct itest_result r;
	long long v = -1;

	/* ABORT TASK. */
	if (!ctl_ok(run_ctl("fault add 0 hold --opcode 0x28 --count 1"), 0,
		    "sbcemuctl fault add 0 hold --opcode 0x28 --count 1 -> exit 0"))
		return;
	task = start_held_read(&a, 1000, "ABORT TASK case");
	if (task) {
		memset(&t, 0, sizeof(t));
		if (iscsi_task_mgmt_abort_task_async(s, task, itest_async_tmf_cb, &t) != 0) {
			itest_ok(false, "ABORT TASK of the held READ(10) sent", "%s", iscsi_get_error(s));
		} else {
			service_for(5000, &t.done);
			itest_ok(t.done && t.status == SCSI_STATUS_GOOD && t.response == ISCSI_TMR_FUNC_COMPLETE,
				 "ABORT TASK of the held READ(10) -> FUNCTION COMPLETE", "%s, status 0x%x, response %u",
				 t.done ? "answered" : "no answer in 5 s", t.status, t.response);
			service_for(300, &a.done);
			itest_ok(!a.done || a.status == SCSI_STATUS_TASK_ABORTED,
				 "the aborted READ(10) gets no status (or TASK ABORTED)", "completed with status 0x%x",
				 a.status);
		}
		if (!a.done)
			iscsi_scsi_cancel_task(s, task); /* libiscsi's side: runs itest_async_cmd_cb with SCSI_STATUS_CANCELLED */
		if (a.done)
			scsi_free_scsi_task(task);
		v = held_now();
		itest_ok(v == 0, "after ABORT TASK: fault list shows \"held\": 0 (the held READ(10) ended)", "held %lld",
			 v);
	}
	read10(10, 1, &r);
	expect_r(&r, EXPECT_GOOD, "after ABORT TASK: READ(10) LBA 10 -> GOOD (hold rule spent)");
	ctl_ok(run_ctl("fault remove all"), 0, "sbcemuctl fault remove all (hold rule) -> exit 0");

	/* LOGICAL UNIT RESET. */
	if (!ctl_ok(run_ctl("fault add 0 hold --opcode 0x28 --count 1"), 0,
		    "sbcemuctl fault add 0 hold --opcode 0x28 --count 1 (second) -> exit 0"))
		return;
	task = start_held_read(&a, 500, "LUN RESET case");
	if (task) {
		memset(&t, 0, sizeof(t));
		/* libiscsi cancels its own copy of every task (itest_async_cmd_cb: CANCELLED) before sending the reset. */
		if (iscsi_task_mgmt_lun_reset_async(s, 0, itest_async_tmf_cb, &t) != 0) {
			itest_ok(false, "LOGICAL UNIT RESET sent", "%s", iscsi_get_error(s));
		} else {
			service_for(5000, &t.done);
			itest_ok(t.done && t.status == SCSI_STATUS_GOOD && t.response == ISCSI_TMR_FUNC_COMPLETE,
				 "LOGICAL UNIT RESET with a held READ(10) -> FUNCTION COMPLETE",
				 "%s, status 0x%x, response %u", t.done ? "answered" : "no answer in 5 s", t.status,
				 t.response);
		}
		if (!a.done)
			iscsi_scsi_cancel_task(s, task);
		if (a.done)
			scsi_free_scsi_task(task);
		v = held_now();
		itest_ok(v == 0, "after LOGICAL UNIT RESET: fault list shows \"held\": 0 (the held READ(10) ended)",
			 "held %lld", v);
	}
	tur(&r);
	expect_r(&r, EXPECT_SENSE(6, 0x29, 0x03),
		 "after LOGICAL UNIT RESET: TEST UNIT READY -> 06/29/03 (BUS DEVICE RESET FUNCTION OCCURRED)");
	itest_clear_ua(s, 0);
	read10(10, 1, &r);
	expect_r(&r, EXPECT_GOOD, "after LOGICAL UNIT RESET and clearing the UA: READ(10) -> GOOD");
	ctl_ok(run_ctl("fault remove all"), 0, "sbcemuctl fault remove all (second hold rule) -> exit 0");

	/* Removing the rule runs the held command. */
	if (!ctl_ok(run_ctl("fault add 0 hold --opcode 0x28 --count 1"), 0,
		    "sbcemuctl fault add 0 hold --opcode 0x28 --count 1 (third) -> exit 0"))
		return;
	task = start_held_read(&a, 500, "rule removal case");
	if (task) {
		ctl_ok(run_ctl("fault remove all"), 0, "sbcemuctl fault remove all while a READ(10) is held -> exit 0");
		service_for(5000, &a.done);
		itest_ok(a.done && a.status == SCSI_STATUS_GOOD,
			 "removing the hold rule runs the held READ(10) -> GOOD", "%s, status 0x%x",
			 a.done ? "completed" : "no answer in 5 s", a.status);
		if (!a.done)
			iscsi_scsi_cancel_task(s, task);
		if (a.done)
			scsi_free_scsi_task(task);
	}

	v = -1;
	ctl_ok(run_ctl("--json status"), 0, "sbcemuctl --json status after the holds -> exit 0");
	itest_ok(json_num(ctl_out, "commands", &v) && v == 0,
		 "status after the holds: \"commands\": 0 (nothing left in the task set)", "commands %lld; %.300s", v,
		 ctl_out);
	itest_clear_ua(s, 0);
}

/* ---- 8. lu state ---- */

static void test_lu_state(void)
{
	struct itest_result r;

	if (!ctl_ok(run_ctl("lu state 0 offline"), 0, "sbcemuctl lu state 0 offline -> exit 0"))
		return;
	EXPECT("LU offline: TEST UNIT READY -> 02/04/03 (MANUAL INTERVENTION REQUIRED)", EXPECT_SENSE(2, 0x04, 0x03),
	       ITEST_NONE, NULL, 0, 0, NULL, 0x00, 0, 0, 0, 0, 0);
	EXPECT("LU offline: READ(10) -> 02/04/03", EXPECT_SENSE(2, 0x04, 0x03), ITEST_IN, NULL, 0, 512, NULL, 0x28, 0, 0, 0,
	       0, 0, 0, 0, 1, 0);
	EXPECT("LU offline: INQUIRY -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 96, NULL, 0x12, 0, 0, 0, 96, 0);
	EXPECT("LU offline: REQUEST SENSE -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 252, &r, 0x03, 0, 0, 0, 252, 0);
	{
		struct itest_sense sn;
		itest_parse_sense(&sn, r.data, r.data_len);
		itest_ok(sn.key == 2 && sn.asc == 0x04 && sn.ascq == 0x03,
			 "LU offline: REQUEST SENSE returns the state's sense 02/04/03", "%02X/%02X/%02X (%d bytes)",
			 sn.key & 0xff, sn.asc & 0xff, sn.ascq & 0xff, r.data_len);
	}
	itest_result_free(&r);
	run_ctl("--json lus");
	itest_ok(json_has(ctl_out, "state", "\"offline\""), "LU offline: sbcemuctl --json lus shows \"state\": \"offline\"",
		 "%.300s", ctl_out);

	ctl_ok(run_ctl("lu state 0 ready"), 0, "sbcemuctl lu state 0 ready -> exit 0");
	EXPECT("back to ready: TEST UNIT READY -> 06/28/00 (NOT READY TO READY CHANGE)", EXPECT_SENSE(6, 0x28, 0x00),
	       ITEST_NONE, NULL, 0, 0, NULL, 0x00, 0, 0, 0, 0, 0);
	EXPECT("back to ready: next TEST UNIT READY -> GOOD", EXPECT_GOOD, ITEST_NONE, NULL, 0, 0, NULL, 0x00, 0, 0, 0, 0,
	       0);

	ctl_ok(run_ctl("lu state 0 no-medium"), 0, "sbcemuctl lu state 0 no-medium -> exit 0");
	EXPECT("LU no-medium: TEST UNIT READY -> 02/3A/00 (MEDIUM NOT PRESENT)", EXPECT_SENSE(2, 0x3a, 0x00), ITEST_NONE,
	       NULL, 0, 0, NULL, 0x00, 0, 0, 0, 0, 0);
	EXPECT("LU no-medium: READ(10) -> 02/3A/00", EXPECT_SENSE(2, 0x3a, 0x00), ITEST_IN, NULL, 0, 512, NULL, 0x28, 0, 0,
	       0, 0, 0, 0, 0, 1, 0);
	ctl_ok(run_ctl("lu state 0 ready"), 0, "sbcemuctl lu state 0 ready (from no-medium) -> exit 0");
	EXPECT("from no-medium back to ready: TEST UNIT READY -> 06/28/00", EXPECT_SENSE(6, 0x28, 0x00), ITEST_NONE, NULL,
	       0, 0, NULL, 0x00, 0, 0, 0, 0, 0);
	itest_clear_ua(s, 0);
	EXPECT("from no-medium back to ready: READ(10) -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 512, NULL, 0x28, 0, 0, 0,
	       0, 0, 0, 0, 1, 0);
}

/* ---- 9. lu write-protect ---- */

static void test_write_protect(void)
{
	struct itest_result r;
	int wp;

	if (!ctl_ok(run_ctl("lu write-protect 0 on"), 0, "sbcemuctl lu write-protect 0 on -> exit 0"))
		return;
	write10(20, 1, 0x11, &r);
	expect_r(&r, EXPECT_SENSE(7, 0x27, 0x00), "write-protected LU: WRITE(10) -> 07/27/00 (WRITE PROTECTED)");
	wp = mode_sense_wp();
	itest_ok(wp == 1, "write-protected LU: MODE SENSE(6) header DEVICE-SPECIFIC PARAMETER WP = 1", "WP %d", wp);
	read10(20, 1, &r);
	expect_r(&r, EXPECT_GOOD, "write-protected LU: READ(10) -> GOOD");
	ctl_ok(run_ctl("lu write-protect 0 off"), 0, "sbcemuctl lu write-protect 0 off -> exit 0");
	write10(20, 1, 0x11, &r);
	expect_r(&r, EXPECT_GOOD, "write protection off: WRITE(10) -> GOOD");
	wp = mode_sense_wp();
	itest_ok(wp == 0, "write protection off: MODE SENSE(6) WP = 0", "WP %d", wp);
}

/* ---- 10. lu resize ---- */

static void test_resize(void)
{
	struct itest_result r;
	long long last;

	if (!ctl_ok(run_ctl("lu resize 0 128M"), 0, "sbcemuctl lu resize 0 128M -> exit 0"))
		return;
	tur(&r);
	expect_r(&r, EXPECT_SENSE(6, 0x2a, 0x09), "after resize: next command -> 06/2A/09 (CAPACITY DATA HAS CHANGED)");
	itest_clear_ua(s, 0);
	last = read_capacity10();
	itest_ok(last == 2 * LU0_BLOCKS - 1, "after lu resize 0 128M: READ CAPACITY(10) last LBA 262143", "%lld", last);
	read10(2 * LU0_BLOCKS - 1, 1, &r);
	expect_r(&r, EXPECT_GOOD, "after growing to 128M: READ(10) of the new last LBA -> GOOD");

	ctl_ok(run_ctl("lu resize 0 32M"), 1, "sbcemuctl lu resize 0 32M (shrink) without --force -> exit 1");
	last = read_capacity10();
	itest_ok(last == 2 * LU0_BLOCKS - 1, "refused shrink: READ CAPACITY(10) still 262143", "%lld", last);
	ctl_ok(run_ctl("lu resize 0 32M --force"), 0, "sbcemuctl lu resize 0 32M --force -> exit 0");
	tur(&r);
	expect_r(&r, EXPECT_SENSE(6, 0x2a, 0x09), "after shrinking: next command -> 06/2A/09");
	itest_clear_ua(s, 0);
	last = read_capacity10();
	itest_ok(last == LU0_BLOCKS / 2 - 1, "after lu resize 0 32M --force: READ CAPACITY(10) last LBA 65535", "%lld",
		 last);
	read10(LU0_BLOCKS / 2, 1, &r);
	expect_r(&r, EXPECT_SENSE(5, 0x21, 0x00), "after shrinking: READ(10) of LBA 65536 -> 05/21/00");
}

/* ---- 11. counters ---- */

static void test_counters(void)
{
	long long cc = -1, me = -1, ab = -1;

	ctl_ok(run_ctl("--json lus"), 0, "sbcemuctl --json lus (counters) -> exit 0");
	itest_ok(json_num(ctl_out, "check_condition", &cc) && cc > 0, "lus counters: \"check_condition\" > 0",
		 "check_condition %lld; %.500s", cc, ctl_out);
	itest_ok(strstr(ctl_out, "\"sense_keys\"") && json_num(ctl_out, "MEDIUM ERROR", &me) && me >= 4,
		 "lus counters: sense_keys has \"MEDIUM ERROR\" (>= 4: 1 sense fault + 3 medium errors)",
		 "MEDIUM ERROR %lld; %.500s", me, ctl_out);
	itest_ok(json_num(ctl_out, "aborted", &ab) && ab >= 1, "lus counters: \"aborted\" >= 1 (the ABORT TASK)",
		 "aborted %lld", ab);
	itest_ok(json_has(ctl_out, "blocks", "65536"), "lus: \"blocks\": 65536 after the resize", "%.500s", ctl_out);
}

/* ---- 12. corrupt-read, short-read, tear-atomic, zone rules ---- */

static void cmd16(int lun, uint8_t op, uint64_t lba, uint32_t n, enum itest_dir dir, const void *out,
		  struct itest_result *r)
{
	uint8_t cdb[16] = { op };

	itest_put_be64(cdb + 2, lba);
	itest_put_be32(cdb + 10, n);
	itest_cmd(s, lun, cdb, 16, dir, out, dir == ITEST_OUT ? (size_t)n * 512 : 0,
		  dir == ITEST_IN ? (size_t)n * 512 : 0, r);
}

static void test_more_actions(void)
{
	static uint8_t data[8 * 512], zeros[8 * 512];
	struct itest_result r;
	bool same;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 1);
	itest_clear_ua(s, 1);
	itest_clear_ua(s, 2);

	/* corrupt-read: GOOD, first byte inverted, medium unchanged. */
	cmd16(1, 0x8a, 100, 8, ITEST_OUT, data, &r);
	expect_r(&r, EXPECT_GOOD, "LUN 1: WRITE(16) of 8 blocks at LBA 100");
	ctl_ok(run_ctl("fault add 0 corrupt-read --target " ITEST_TARGET " --count 1"), 0,
	       "fault add corrupt-read on LUN 0 (--target given) -> exit 0");
	ctl_ok(run_ctl("fault remove all"), 0, "fault remove all");
	ctl_ok(run_ctl("fault add 1 corrupt-read --count 1"), 0, "fault add 1 corrupt-read --count 1 -> exit 0");
	cmd16(1, 0x88, 100, 8, ITEST_IN, NULL, &r);
	itest_ok(r.status == 0 && r.data_len == (int)sizeof(data) && (r.data[0] ^ data[0]) == 0xff &&
			 memcmp(r.data + 1, data + 1, sizeof(data) - 1) == 0,
		 "corrupt-read: READ(16) is GOOD with only the first byte inverted", "%s, %d bytes, byte 0 %02x",
		 itest_result_str(&r), r.data_len, r.data_len ? r.data[0] : 0);
	itest_result_free(&r);
	cmd16(1, 0x88, 100, 8, ITEST_IN, NULL, &r);
	same = r.status == 0 && r.data_len == (int)sizeof(data) && memcmp(r.data, data, sizeof(data)) == 0;
	itest_ok(same, "corrupt-read --count 1: the next READ(16) returns the data as written (medium unchanged)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);

	/* short-read: GOOD, half the blocks, residual underflow for the rest. */
	ctl_ok(run_ctl("fault add 1 short-read --count 1"), 0, "fault add 1 short-read --count 1 -> exit 0");
	cmd16(1, 0x88, 100, 8, ITEST_IN, NULL, &r);
	itest_ok(r.status == 0 && r.data_len == 4 * 512 && r.residual_kind == 1 && r.residual == 4 * 512 &&
			 memcmp(r.data, data, 4 * 512) == 0,
		 "short-read: READ(16) of 8 blocks is GOOD with 4 blocks and an underflow residual of 2048 (RFC 7143 11.4.5.2)",
		 "%s, %d bytes, residual kind %d, %zu", itest_result_str(&r), r.data_len, r.residual_kind, r.residual);
	itest_result_free(&r);

	/* tear-atomic: WRITE ATOMIC(16) GOOD, only the first 2 blocks written. */
	ctl_ok(run_ctl("fault add 1 tear-atomic --blocks 2 --count 1"), 0,
	       "fault add 1 tear-atomic --blocks 2 --count 1 -> exit 0");
	cmd16(1, 0x8a, 200, 8, ITEST_OUT, zeros, &r);
	itest_result_free(&r);
	{
		uint8_t cdb[16] = { 0x9c };

		itest_put_be64(cdb + 2, 200);
		itest_put_be16(cdb + 12, 8);
		itest_expect_cmd(s, 1, "tear-atomic: WRITE ATOMIC(16) of 8 blocks returns GOOD", cdb, 16, ITEST_OUT, data,
				 sizeof(data), 0, EXPECT_GOOD, NULL);
	}
	cmd16(1, 0x88, 200, 8, ITEST_IN, NULL, &r);
	itest_ok(r.status == 0 && r.data_len == (int)sizeof(data) && memcmp(r.data, data, 2 * 512) == 0 &&
			 memcmp(r.data + 2 * 512, zeros, 6 * 512) == 0,
		 "tear-atomic --blocks 2: only the first 2 of the 8 blocks were written", "%s", itest_result_str(&r));
	itest_result_free(&r);
	ctl_ok(run_ctl("fault remove all"), 0, "fault remove all");

	/* Zone rules on the zoned LUN 2 (zone 3 starts at LBA 3 * 16384). */
	ctl_ok(run_ctl("fault add 0 zone-offline --zone 1"), 1, "zone-offline on the conventional LUN 0 -> exit 1");
	ctl_ok(run_ctl("fault add 2 zone-offline --zone 99"), 1, "zone-offline --zone 99 (no such zone) -> exit 1");
	ctl_ok(run_ctl("fault add 2 zone-offline --zone 3 --count 1"), 1,
	       "zone-offline with --count (a trigger on a standing rule) -> exit 1");
	ctl_ok(run_ctl("fault add 2 zone-offline --zone 3"), 0, "fault add 2 zone-offline --zone 3 -> exit 0");
	cmd16(2, 0x88, 3 * 16384, 1, ITEST_IN, NULL, &r);
	expect_r(&r, EXPECT_SENSE(7, 0x2c, 0x0e), "zone-offline: READ(16) in zone 3 -> 07/2C/0E ZONE IS OFFLINE");
	ctl_ok(run_ctl("fault remove all"), 0, "fault remove all (zone 3 repaired)");
	cmd16(2, 0x8a, 3 * 16384, 1, ITEST_OUT, data, &r);
	expect_r(&r, EXPECT_GOOD, "after the rule goes: WRITE(16) at zone 3's write pointer is GOOD (zone EMPTY again)");
	ctl_ok(run_ctl("fault add 2 zone-read-only --zone 4"), 0, "fault add 2 zone-read-only --zone 4 -> exit 0");
	cmd16(2, 0x8a, 4 * 16384, 1, ITEST_OUT, data, &r);
	expect_r(&r, EXPECT_SENSE(7, 0x27, 0x08), "zone-read-only: WRITE(16) in zone 4 -> 07/27/08 ZONE IS READ ONLY");
	ctl_ok(run_ctl("fault remove all"), 0, "fault remove all (zone 4 repaired)");
}

/* ---- 13. LUs added and removed at run time ---- */

static void report_luns_has(int lun, bool *has)
{
	static const uint8_t cdb[12] = { 0xa0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0 };
	struct itest_result r;

	*has = false;
	itest_cmd(s, 0, cdb, 12, ITEST_IN, NULL, 0, 4096, &r);
	for (int off = 8; r.status == 0 && off + 8 <= r.data_len; off += 8)
		if (r.data[off] == 0 && r.data[off + 1] == lun)
			*has = true;
	itest_result_free(&r);
}

static void test_lu_add_remove(void)
{
	static uint8_t data[512];
	struct itest_result r;
	struct itest_async a;
	struct scsi_task *task;
	bool has;

	memset(data, 0x5a, sizeof(data));
	itest_clear_ua(s, 0);
	ctl_ok(run_ctl("lu add 0 path=x.img;size=16M"), 1, "lu add 0 (LUN 0 exists) -> exit 1");
	ctl_ok(run_ctl("lu add 3 size=16M;bogus_key=1"), 1, "lu add with an unknown key in the cfgstring -> exit 1");
	ctl_ok(run_ctl("lu add 3 path=%s/lun0.img;size=64M", d.dir), 1, "lu add on LUN 0's backing file -> exit 1");
	if (!ctl_ok(run_ctl("lu add 3 kind=zbc-hm;path=added3.img;size=64M;zone_size=8M"), 0,
		    "lu add 3 kind=zbc-hm;path=added3.img;size=64M;zone_size=8M -> exit 0"))
		return;
	tur(&r);
	expect_r(&r, EXPECT_SENSE(6, 0x3f, 0x0e),
		 "after lu add: the next command on LUN 0 gets 06/3F/0E REPORTED LUNS DATA HAS CHANGED (SPC-4)");
	report_luns_has(3, &has);
	itest_ok(has, "REPORT LUNS lists the added LUN 3", NULL);
	itest_clear_ua(s, 3);
	cmd16(3, 0x8a, 0, 1, ITEST_OUT, data, &r);
	expect_r(&r, EXPECT_GOOD, "LUN 3 (added): WRITE(16) at the first zone's write pointer is GOOD");
	cmd16(3, 0x88, 0, 1, ITEST_IN, NULL, &r);
	itest_ok(r.status == 0 && r.data_len == 512 && memcmp(r.data, data, 512) == 0,
		 "LUN 3 (added): READ(16) returns what was written", "%s", itest_result_str(&r));
	itest_result_free(&r);
	ctl_ok(run_ctl("--json lus"), 0, "lus after lu add");
	itest_ok(strstr(ctl_out, "added3.img") != NULL && strstr(ctl_out, "zbc-hm") != NULL,
		 "lus lists LUN 3, zbc-hm, backed by added3.img", "%.300s", ctl_out);

	/* A command held on LUN 3: lu remove refuses without --force; with it the command ends 05/25/00. */
	ctl_ok(run_ctl("fault add 3 hold --opcode 0x88"), 0, "fault add 3 hold --opcode 0x88");
	memset(&a, 0, sizeof(a));
	task = iscsi_read16_task(s, 3, 0, 512, 512, 0, 0, 0, 0, 0, itest_async_cmd_cb, &a);
	service_for(500, &a.done);
	itest_ok(task && !a.done, "LUN 3: READ(16) held", NULL);
	ctl_ok(run_ctl("lu remove 3"), 1, "lu remove 3 with a command in its task set -> exit 1 (nothing changed)");
	ctl_ok(run_ctl("lu remove 3 --force"), 0, "lu remove 3 --force -> exit 0");
	service_for(2000, &a.done);
	itest_ok(a.done && a.status == SCSI_STATUS_CHECK_CONDITION,
		 "the held READ(16) ended with CHECK CONDITION when its LU was removed", "done %d status 0x%x", a.done,
		 a.status);
	if (task && a.done)
		scsi_free_scsi_task(task);
	tur(&r);
	expect_r(&r, EXPECT_SENSE(6, 0x3f, 0x0e), "after lu remove: LUN 0 gets 06/3F/0E");
	report_luns_has(3, &has);
	itest_ok(!has, "REPORT LUNS no longer lists LUN 3", NULL);
	cmd16(3, 0x88, 0, 1, ITEST_IN, NULL, &r);
	expect_r(&r, EXPECT_SENSE(5, 0x25, 0x00), "READ(16) to the removed LUN 3 -> 05/25/00 LOGICAL UNIT NOT SUPPORTED");
	ctl_ok(run_ctl("--json fault list"), 0, "fault list after the removal");
	itest_ok(!json_has(ctl_out, "lun", "3"), "the removed LU's hold rule went with it", "%.300s", ctl_out);
	ctl_ok(run_ctl("lu remove 3"), 1, "lu remove 3 again -> exit 1 (no such LU)");
}

/* ---- 12. shutdown with a held command (README: SIGTERM lets commands in flight finish) ---- */

static void test_shutdown_releases_held(void)
{
	struct itest_async a;
	struct scsi_task *task;
	uint64_t t0;
	int st;

	if (!ctl_ok(run_ctl("fault add 0 hold --opcode 0x28"), 0, "sbcemuctl fault add 0 hold --opcode 0x28 -> exit 0"))
		return;
	task = start_held_read(&a, 500, "SIGTERM case");
	if (!task)
		return;
	t0 = itest_now_ms();
	itest_daemon_signal(&d, SIGTERM);
	service_for(5000, &a.done);
	itest_ok(a.done && a.status == SCSI_STATUS_GOOD,
		 "SIGTERM with a READ(10) held by a fault rule: the rule goes, the READ(10) is answered GOOD",
		 "done %d status 0x%x", a.done, a.status);
	if (a.done)
		scsi_free_scsi_task(task);
	st = itest_daemon_stop(&d, 0); /* waits for the exit the first SIGTERM began */
	itest_ok(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && itest_now_ms() - t0 < 10000,
		 "... and sbcemud exits 0 without waiting for the 60 s drain timeout", "wait status 0x%x after %llu ms",
		 st, (unsigned long long)(itest_now_ms() - t0));
}

/* ---- access on a running target: acl add / remove, target auth; sessions logged in stay ---- */

static bool can_login(const char *initiator, const char *chap_user, const char *chap_secret)
{
	struct itest_login o = { .initiator = initiator, .chap_user = chap_user, .chap_secret = chap_secret };
	char err[256];
	struct iscsi_context *c = itest_connect(&d, &o, 0, err, sizeof(err));

	itest_close(c);
	return c != NULL;
}

/* Whether a TCP connection to 127.0.0.2:port is accepted. */
static bool listening(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	inet_pton(AF_INET, "127.0.0.2", &a.sin_addr);
	rc = fd >= 0 ? connect(fd, (struct sockaddr *)&a, sizeof(a)) : -1;
	if (fd >= 0)
		close(fd);
	return rc == 0;
}

/* portal add / remove: where the iSCSI front end listens, live; the last one stays. */
static void test_portals(void)
{
	int port = 20000 + (d.port + 7) % 10000;

	ctl_ok(run_ctl("portal add 127.0.0.2:%d", port), 0, "sbcemuctl portal add 127.0.0.2:PORT -> exit 0");
	itest_ok(listening(port), "after portal add: 127.0.0.2:PORT accepts connections", NULL);
	run_ctl("save");
	itest_ok(strstr(ctl_out, "127.0.0.2:") != NULL, "save writes the new portal in daemon.listen", "%.300s", ctl_out);
	ctl_ok(run_ctl("portal remove 127.0.0.2:%d", port), 0, "sbcemuctl portal remove 127.0.0.2:PORT -> exit 0");
	itest_ok(!listening(port), "after portal remove: 127.0.0.2:PORT refuses connections", NULL);
	ctl_ok(run_ctl("portal remove 127.0.0.1:%d", d.port), 1, "sbcemuctl portal remove of the last portal -> exit 1");
	itest_ok(strstr(ctl_err, "is the last portal") != NULL, "... saying it is the last portal", "stderr: %.300s",
		 ctl_err);
	ctl_ok(run_ctl("portal add localhost:3260"), 1, "sbcemuctl portal add localhost:3260 -> exit 1 (not numeric)");
}

static void test_access(void)
{
	uint8_t tur[6] = { 0 };

	ctl_ok(run_ctl("acl add " ITEST_TARGET " " ITEST_INITIATOR_2), 0,
	       "sbcemuctl acl add IQN <initiator 2> -> exit 0");
	itest_ok(!can_login(ITEST_INITIATOR_1, NULL, NULL) && can_login(ITEST_INITIATOR_2, NULL, NULL),
		 "after acl add: initiator 2 logs in, initiator 1 (not listed) is refused", NULL);
	itest_expect_cmd(s, 0, "after acl add: initiator 1's session logged in before stays (TEST UNIT READY GOOD)", tur,
			 6, ITEST_NONE, NULL, 0, 0, EXPECT_GOOD, NULL);
	ctl_ok(run_ctl("acl add " ITEST_TARGET " " ITEST_INITIATOR_1 " --chap-user i1 --chap-secret short"), 1,
	       "sbcemuctl acl add with a CHAP secret of 5 characters -> exit 1 (RFC 7143 12.1.3: at least 12)");
	itest_ok(strstr(ctl_err, "chap_secret: is shorter than 12 characters") != NULL, "... naming the key and why",
		 "stderr: %.300s", ctl_err);
	ctl_ok(run_ctl("acl remove " ITEST_TARGET " " ITEST_INITIATOR_2), 0, "sbcemuctl acl remove -> exit 0");
	itest_ok(can_login(ITEST_INITIATOR_1, NULL, NULL), "after acl remove (no entry left): any initiator logs in",
		 NULL);
	ctl_ok(run_ctl("target auth " ITEST_TARGET " --chap-user tuser --chap-secret target-secret-1"), 0,
	       "sbcemuctl target auth IQN --chap-user --chap-secret -> exit 0");
	itest_ok(!can_login(ITEST_INITIATOR_1, NULL, NULL) && can_login(ITEST_INITIATOR_1, "tuser", "target-secret-1"),
		 "after target auth: a login without CHAP is refused, one with the new credentials succeeds", NULL);
	run_ctl("save");
	itest_ok(strstr(ctl_out, "chap_user = tuser") != NULL, "save writes the new chap_user", "%.400s", ctl_out);
	{
		char *const argv[] = { "sbcemuctl", "-s", sock_path, "target", "auth", ITEST_TARGET, "--chap-user", "",
				       "--chap-secret", "", NULL };

		ctl_ok(run_ctl_argv(argv), 0, "sbcemuctl target auth IQN --chap-user '' --chap-secret '' -> exit 0");
	}
	itest_ok(can_login(ITEST_INITIATOR_1, NULL, NULL), "after clearing CHAP: a login without CHAP succeeds", NULL);
	test_portals();
}

/* ---- sbcemuctl for people: refusals in the command's terms, usage errors, help ---- */

static void test_cli_messages(void)
{
	char *list, *word, *save = NULL;
	bool all_listed = true;
	char missing[256] = "";

	ctl_ok(run_ctl("fault add 0 sense"), 1, "sbcemuctl fault add 0 sense (no --sense) -> exit 1");
	itest_ok(strstr(ctl_err, "--sense KEY/ASC/ASCQ is required") != NULL,
		 "... and says \"--sense KEY/ASC/ASCQ is required\", not the JSON member", "stderr: %.300s", ctl_err);
	ctl_ok(run_ctl("fault add 0 medium-error"), 1, "sbcemuctl fault add 0 medium-error (no --lba) -> exit 1");
	itest_ok(strstr(ctl_err, "needs --lba FIRST[-LAST]") != NULL, "... and names --lba FIRST[-LAST]",
		 "stderr: %.300s", ctl_err);
	ctl_ok(run_ctl("lu state 0 offlin"), 2, "sbcemuctl lu state 0 offlin -> usage error, exit 2");
	itest_ok(strstr(ctl_err, "did you mean 'offline'?") != NULL, "... suggesting 'offline'", "stderr: %.300s",
		 ctl_err);
	ctl_ok(run_ctl("fault add 0 medium-eror --lba 1"), 2, "sbcemuctl fault add 0 medium-eror -> usage error, exit 2");
	itest_ok(strstr(ctl_err, "did you mean 'medium-error'?") != NULL, "... suggesting 'medium-error'",
		 "stderr: %.300s", ctl_err);
	/* The help lists every action the daemon takes: the daemon's own list is in its refusal. */
	list = strstr(ctl_err, "\"action\" must be ");
	list = list ? strdup(list + strlen("\"action\" must be ")) : NULL;
	run_ctl("--help");
	for (word = list ? strtok_r(list, ", \n", &save) : NULL; word; word = strtok_r(NULL, ", \n", &save)) {
		if (strcmp(word, "or") != 0 && !strstr(ctl_out, word)) {
			all_listed = false;
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), " %s", word);
		}
	}
	itest_ok(list && all_listed, "sbcemuctl --help lists every fault action the daemon takes", "missing:%s",
		 list ? missing : " (no list in the refusal)");
	free(list);
	{
		char *const argv[] = { "sbcemuctl", "-s", "/nonexistent/control.sock", "status", NULL };

		ctl_ok(run_ctl_argv(argv), 1, "sbcemuctl -s /nonexistent/control.sock status (no daemon) -> exit 1");
		itest_ok(strstr(ctl_err, "(chosen by -s)") && strstr(ctl_err, "is sbcemud running?"),
			 "... saying where it looked, why, and how to point at another socket", "stderr: %.300s", ctl_err);
	}
	ctl_ok(run_ctl("status"), 0, "sbcemuctl status -> exit 0");
	itest_ok(strstr(ctl_out, "\nuptime:") != NULL && !strstr(ctl_out, "uptime_seconds"),
		 "sbcemuctl status prints the uptime rounded for people (\"uptime: 1.2 s\")", "stdout: %.300s", ctl_out);
	itest_ok(strstr(ctl_out, "\nportals:        127.0.0.1:") && strstr(ctl_out, "\nfrontends:      iscsi running"),
		 "sbcemuctl status lists the listening portals and the front ends' state", "stdout: %.400s", ctl_out);
	/* One view of everything (tgtadm --op show, targetcli ls): targets, auth, ACLs, LUs with their faults. */
	ctl_ok(run_ctl("fault add 1 medium-error --lba 7"), 0, "sbcemuctl fault add 1 medium-error --lba 7 -> exit 0");
	ctl_ok(run_ctl("show"), 0, "sbcemuctl show -> exit 0");
	itest_ok(strstr(ctl_out, "target " ITEST_TARGET) && strstr(ctl_out, "  auth: none\n") &&
			 strstr(ctl_out, "  acls: any initiator\n") && strstr(ctl_out, "  lun 0 ") &&
			 strstr(ctl_out, "  lun 2   zbc-hm ") && strstr(ctl_out, ", 8 zones") &&
			 strstr(ctl_out, ", 1 fault rule") && strstr(ctl_out, "front ends: iscsi running"),
		 "sbcemuctl show: the target, its auth and ACLs, each LU with kind, zones and fault rules, the front ends",
		 "stdout: %.900s", ctl_out);
	run_ctl("fault remove all");
	ctl_ok(run_ctl("lus --target " ITEST_TARGET), 0, "sbcemuctl lus --target IQN -> exit 0");
	ctl_ok(run_ctl("lus --target iqn.2026-12.org.example:nope"), 1, "sbcemuctl lus --target (unknown) -> exit 1");
	ctl_ok(run_ctl("lu show 2"), 0, "sbcemuctl lu show 2 -> exit 0");
	itest_ok(strstr(ctl_out, "\nkind: zbc-hm\n") && strstr(ctl_out, "\nzones: 8\n"),
		 "sbcemuctl lu show 2: every field of LUN 2 (kind zbc-hm, zones 8)", "stdout: %.500s", ctl_out);
}

int main(int argc, char **argv)
{
	itest_init(argc, argv, "test_control: control socket, sbcemuctl, fault rules, LU state/WP/resize, counters");
	signal(SIGPIPE, SIG_IGN);
	find_ctl();
	itest_daemon_up(&d, "control", config);
	snprintf(sock_path, sizeof(sock_path), "%s/control.sock", d.state);
	if (strlen(sock_path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		itest_note("control socket path is %zu bytes, longer than sun_path", strlen(sock_path));
	for (int i = 0; i < 50 && access(sock_path, F_OK) != 0; i++)
		usleep(100000);
	if (!itest_ok(access(sock_path, F_OK) == 0, "sbcemud creates <state dir>/control.sock", "%s: %s", sock_path,
		      strerror(errno))) {
		itest_daemon_cleanup(&d);
		return itest_finish();
	}
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s) {
		itest_daemon_cleanup(&d);
		return itest_finish();
	}

	test_ctl_basics();
	test_raw_socket();
	test_socket_mode();
	test_other_user();
	test_fault_sense();
	test_fault_medium_error();
	test_fault_delay();
	test_fault_hold();
	test_lu_state();
	test_write_protect();
	test_resize();
	test_counters();
	test_more_actions();
	test_lu_add_remove();
	test_cli_messages();
	test_access();
	itest_ok(itest_daemon_alive(&d), "sbcemud still running after every check", NULL);
	test_shutdown_releases_held();

	itest_close(s);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
