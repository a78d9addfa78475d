/*
 * What one peer can hold of the daemon (docs/security.md), each limit hit
 * logged as a warning and costing the peer, not the daemon:
 * - connections from one IP address (iscsi.max_connections_per_address,
 *   default 64): past it new ones are closed at once;
 * - descriptors exhausted (accept(2) EMFILE): the portal pauses instead of
 *   spinning, logs it once, and takes connections again when it can;
 * - a peer that stops reading its responses (iscsi.output_stall_timeout):
 *   its connection is dropped;
 * - failed logins (iscsi.login_failures_per_minute, default 10): then even
 *   a right secret gets Login reject 03/01 Service unavailable (RFC 7143
 *   11.13.5) for the rest of the minute.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"
#include "itest_raw.h"

#define T_CHAP "iqn.2026-12.org.sbcemu:itest-chap"
#define CHAP_USER "itest-user"
#define CHAP_SECRET "itest-secret-12345"

static const char config[] =
	"[iscsi]\n"
	"output_stall_timeout = 2\n"
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\n"
	"size = 64M\n"
	"[target \"" T_CHAP "\"]\n"
	"chap_user = " CHAP_USER "\n"
	"chap_secret = " CHAP_SECRET "\n"
	"[lun \"" T_CHAP "\" 0]\n"
	"path = @DIR@/chap-lun0.img\n"
	"size = 16M\n";

static struct itest_daemon d;

/* Lines of the daemon's log that contain text. */
static int log_count(const char *text)
{
	FILE *f = fopen(d.log, "r");
	char line[1024];
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, text) != NULL;
	if (f)
		fclose(f);
	return n;
}

/* The daemon closed fd (EOF or reset) within timeout_ms. */
static bool closed_by_peer(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char b;

	return poll(&p, 1, timeout_ms) == 1 && recv(fd, &b, 1, MSG_DONTWAIT) <= 0;
}

/* CPU seconds the daemon has used. */
static double daemon_cpu(void)
{
	char path[64], buf[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)d.pid);
	f = fopen(path, "r");
	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	p = strrchr(buf, ')');
	if (p)
		sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static void test_connections_per_address(void)
{
	int fds[70], refused = 0;

	for (int i = 0; i < 70; i++)
		fds[i] = itest_raw_connect(&d);
	for (int i = 0; i < 70; i++)
		refused += fds[i] >= 0 && closed_by_peer(fds[i], i < 64 ? 50 : 1000);
	itest_ok(refused == 6, "70 connections from 127.0.0.1 (max_connections_per_address 64) -> 6 closed at once",
		 "%d closed", refused);
	itest_ok(log_count("(iscsi.max_connections_per_address)") >= 1,
		 "... and the refusal is logged as a warning naming the key", "no such line in the log");
	for (int i = 0; i < 70; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static void test_descriptors(void)
{
	struct rlimit old, low = { .rlim_cur = 48, .rlim_max = 0 };
	int fds[80];
	double cpu0, cpu1;
	char err[256];
	struct itest_raw c = { .fd = -1 };

	/* A daemon whose descriptor limit is 48 (inherited), then 80 connections. */
	itest_daemon_stop(&d, SIGTERM);
	getrlimit(RLIMIT_NOFILE, &old);
	low.rlim_max = old.rlim_max;
	setrlimit(RLIMIT_NOFILE, &low);
	if (itest_daemon_start(&d) != 0) {
		setrlimit(RLIMIT_NOFILE, &old);
		itest_ok(false, "daemon with 48 descriptors", "did not start");
		return;
	}
	setrlimit(RLIMIT_NOFILE, &old);
	for (int i = 0; i < 80; i++)
		fds[i] = itest_raw_connect(&d);
	usleep(200000);
	cpu0 = daemon_cpu();
	sleep(3);
	cpu1 = daemon_cpu();
	itest_note("descriptors exhausted: the daemon used %.2f s of CPU in 3 s", cpu1 - cpu0);
	itest_ok(cpu1 - cpu0 < 0.5, "accept(2) EMFILE: the portal pauses instead of spinning (< 0.5 s CPU in 3 s)",
		 "%.2f s of CPU", cpu1 - cpu0);
	itest_ok(log_count("cannot accept connections") == 1,
		 "... logged once as a warning (not once per attempt)", "%d lines", log_count("cannot accept connections"));
	for (int i = 0; i < 80; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	sleep(2);
	itest_ok(itest_raw_login(&c, &d, ITEST_INITIATOR_1, ITEST_TARGET, false, false, true, err, sizeof(err)) == 0,
		 "... and once descriptors are free a new login is served", "%s", err);
	itest_raw_close(&c);
}

static void test_output_stall(void)
{
	struct itest_raw c = { .fd = -1 };
	uint8_t bhs[48], cdb[10] = { 0x28, 0, 0, 0, 0, 0, 0, 0x20, 0, 0 }; /* READ(10) of 8192 blocks */
	char err[256];
	int rcvbuf = 4096;
	bool dropped = false;

	if (itest_raw_login(&c, &d, ITEST_INITIATOR_2, ITEST_TARGET, false, false, true, err, sizeof(err))) {
		itest_ok(false, "login for the output stall test", "%s", err);
		return;
	}
	itest_raw_clear_ua(&c, 0);
	setsockopt(c.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	for (int i = 0; i < 16; i++) {
		itest_raw_scsi_cmd(&c, bhs, 0, cdb, 10, true, false, 8192 * 512);
		itest_raw_send(&c, bhs, NULL, 0);
	}
	/*
	 * Read nothing: 64 MiB of Data-In wait.  output_stall_timeout is 2 s.
	 * The peer looks alive all the while: a NOP-Out ping every 100 ms
	 * (RFC 7143 11.18), which must not keep its unread responses alive.
	 */
	for (int t = 0; t < 80 && !dropped; t++) {
		uint8_t nop[48] = { RAW_OP_NOP_OUT | 0x40, 0x80 };

		nop[16] = c.itt >> 24, nop[17] = c.itt >> 16, nop[18] = c.itt >> 8, nop[19] = c.itt;
		c.itt++;
		memset(nop + 20, 0xff, 4); /* Target Transfer Tag: not an answer to a NOP-In */
		nop[24] = c.cmdsn >> 24, nop[25] = c.cmdsn >> 16, nop[26] = c.cmdsn >> 8, nop[27] = c.cmdsn;
		nop[28] = c.exp_statsn >> 24, nop[29] = c.exp_statsn >> 16, nop[30] = c.exp_statsn >> 8;
		nop[31] = c.exp_statsn;
		send(c.fd, nop, sizeof(nop), MSG_DONTWAIT | MSG_NOSIGNAL);
		usleep(100000);
		dropped = log_count("(iscsi.output_stall_timeout)") > 0;
	}
	itest_ok(dropped,
		 "a peer that reads none of its responses for output_stall_timeout (2 s), pinging with NOP-Outs "
		 "all the while -> dropped, with a warning",
		 "no drop within 8 s");
	itest_raw_close(&c);
}

static void test_login_failures(void)
{
	struct itest_login bad = { .target = T_CHAP, .chap_user = CHAP_USER, .chap_secret = "wrong-secret-000000",
				   .initial_r2t = -1, .immediate_data = -1 };
	struct itest_login good = bad;
	char err[256];
	struct iscsi_context *s;
	int failed = 0;

	good.chap_secret = CHAP_SECRET;
	for (int i = 0; i < 10; i++) {
		s = itest_connect(&d, &bad, 0, err, sizeof(err));
		failed += s == NULL;
		itest_close(s);
	}
	itest_ok(failed == 10 && log_count("login failed: authentication failure") >= 10,
		 "10 logins with a wrong CHAP secret fail, each logged as a warning", "%d failed, %d logged", failed,
		 log_count("login failed: authentication failure"));
	s = itest_connect(&d, &good, 0, err, sizeof(err));
	itest_ok(s == NULL && log_count("logins refused for the rest of the minute") == 1,
		 "RFC 7143 11.13.5: the 11th login of that minute, right secret or not -> Login reject (Service unavailable)",
		 "%s; %s", s ? "logged in" : err, log_count("logins refused") ? "logged" : "not logged");
	itest_close(s);
}

int main(int argc, char **argv)
{
	itest_init(argc, argv, "test_peer_limits: connections, descriptors, unread responses, failed logins");
	itest_daemon_up(&d, "peer-limits", config);
	test_connections_per_address();
	test_output_stall();
	test_login_failures();
	test_descriptors();
	itest_ok(itest_daemon_alive(&d), "the daemon is still running", "it died");
	itest_daemon_cleanup(&d);
	return itest_finish();
}
