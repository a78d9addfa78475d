/*
 * What a hostile peer can make the daemon hold, against the budgets of
 * docs/security.md ("Commands and data"), measured as the daemon's resident
 * set (VmRSS) before and after each flood:
 * - WRITEs with CmdSN past MaxCmdSN, with immediate data and F = 0 (more
 *   unsolicited data announced, never sent), then their unsolicited
 *   Data-Out: RFC 7143 4.2.2.1 says such commands are silently ignored, so
 *   they may cost nothing; the session goes on (TEST UNIT READY at
 *   ExpCmdSN -> GOOD);
 * - NOP-Outs with ping data from a peer that never reads the NOP-In echoes
 *   (RFC 7143 11.18, 11.19): the connection's held output is bounded
 *   (ISCSI_TX_HELD_MAX), after which the daemon stops reading it.
 * The limit: the configuration's max_session_buffer_bytes plus
 * cmd_window x first_burst_length (the unsolicited data of commands waiting
 * for their CmdSN) plus 16 MiB for everything else.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "itest.h"
#include "itest_raw.h"

#define SESSION_BUFFER_MIB 16u
#define CMD_WINDOW 32u
#define FIRST_BURST (64u * 1024)
#define LIMIT_KIB ((SESSION_BUFFER_MIB << 10) + CMD_WINDOW * FIRST_BURST / 1024 + (16u << 10))

static const char config[] =
	"[daemon]\n"
	"max_buffer_bytes = 32M\n"
	"max_session_buffer_bytes = 16M\n"
	"[iscsi]\n"
	"cmd_window = 32\n"
	"first_burst_length = 65536\n"
	"initial_r2t = false\n"
	"immediate_data = true\n"
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\n"
	"size = 64M\n"
	"thin_provisioning = true\n";

static struct itest_daemon d;

static void put32(uint8_t *p, uint32_t v)
{
	itest_put_be32(p, v);
}

/* Writes n bytes without blocking for long: false when the daemon stopped reading for a second. */
static bool send_or_blocked(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };

			if (poll(&pfd, 1, 1000) == 0)
				return false;
			continue;
		}
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

static long rss(void)
{
	return itest_proc_kib(d.pid, "VmRSS");
}

/* RFC 7143 4.2.2.1: commands past MaxCmdSN cost nothing, however much unsolicited data they announce. */
static void out_of_window_writes(void)
{
	enum { COMMANDS = 20000, IMMEDIATE = 512 };
	struct itest_raw c = { .fd = -1 };
	static uint8_t buf[4 << 20];
	char err[256];
	size_t len = 0;
	long before, after;
	uint32_t first_itt, exp_cmd_sn;
	int sense = -1, st;

	if (itest_raw_login(&c, &d, ITEST_INITIATOR_1, ITEST_TARGET, false, false, true, err, sizeof(err)) != 0) {
		itest_ok(false, "login (InitialR2T=No, ImmediateData=Yes)", "%s", err);
		return;
	}
	itest_raw_clear_ua(&c, 0);
	before = rss();
	first_itt = c.itt;
	exp_cmd_sn = c.cmdsn;
	for (int i = 0; i < COMMANDS; i++) {
		uint8_t bhs[48], cdb[10] = { 0x2a, 0, 0, 0, 0, 0, 0, 0x08, 0x00, 0 }; /* WRITE(10), 2048 blocks */

		itest_raw_scsi_cmd(&c, bhs, 0, cdb, 10, false, true, 1u << 20);
		bhs[1] &= 0x7f;                       /* F = 0: unsolicited Data-Out follows */
		put32(bhs + 24, exp_cmd_sn + 1000 + (uint32_t)i); /* far past MaxCmdSN */
		bhs[5] = 0, bhs[6] = IMMEDIATE >> 8, bhs[7] = IMMEDIATE & 0xff;
		memcpy(buf + len, bhs, 48);
		memset(buf + len + 48, 0xa5, IMMEDIATE);
		len += 48 + IMMEDIATE;
		if (len + 48 + IMMEDIATE > sizeof(buf) || i == COMMANDS - 1) {
			if (!send_or_blocked(c.fd, buf, len))
				break;
			len = 0;
		}
	}
	/* Their unsolicited Data-Out too (RFC 7143 11.7: TTT FFFFFFFFh), for a few of them. */
	for (uint32_t i = 0; i < 200; i++) {
		uint8_t bhs[48] = { RAW_OP_DATA_OUT };
		static uint8_t data[8192];

		put32(bhs + 16, first_itt + i);
		put32(bhs + 20, 0xffffffff);
		put32(bhs + 40, IMMEDIATE);
		if (itest_raw_send(&c, bhs, data, sizeof(data)) != 0)
			break;
	}
	usleep(300000);
	after = rss();
	c.cmdsn = exp_cmd_sn; /* none of them took a CmdSN */
	itest_note("out-of-window flood: %d WRITE(10)s announcing 1 MiB each, VmRSS %ld -> %ld KiB", COMMANDS, before,
		   after);
	itest_ok(before > 0 && after - before < (long)LIMIT_KIB,
		 "RFC 7143 4.2.2.1: 20000 WRITEs past MaxCmdSN with immediate data, F = 0, and Data-Out: the daemon's "
		 "RSS grows by less than the session's budget",
		 "VmRSS grew by %ld KiB (limit %u KiB)", after - before, LIMIT_KIB);
	st = itest_raw_nodata_cmd(&c, 0, (const uint8_t[]){ 0, 0, 0, 0, 0, 0 }, 6, &sense);
	itest_ok(st == 0, "after the flood the session goes on: TEST UNIT READY at ExpCmdSN -> GOOD", "status %d", st);
	itest_raw_close(&c);
}

/* A peer that pings and never reads the echoes: the daemon stops reading it, its held output stays small. */
static void unread_nop_in_echoes(void)
{
	enum { PING = 64 * 1024, MAX_SENT = 512u << 20 };
	struct itest_raw c = { .fd = -1 };
	static uint8_t pdu[48 + PING];
	char err[256];
	long before, after;
	size_t sent = 0;
	bool blocked = false;

	if (itest_raw_login(&c, &d, ITEST_INITIATOR_2, ITEST_TARGET, false, false, true, err, sizeof(err)) != 0) {
		itest_ok(false, "login", "%s", err);
		return;
	}
	itest_raw_clear_ua(&c, 0);
	before = rss();
	memset(pdu, 0, sizeof(pdu));
	pdu[0] = RAW_OP_NOP_OUT | 0x40; /* immediate: outside the window */
	pdu[1] = 0x80;
	pdu[5] = PING >> 16, pdu[6] = (PING >> 8) & 0xff, pdu[7] = PING & 0xff;
	put32(pdu + 20, 0xffffffff); /* TTT: not an answer to a NOP-In */
	memset(pdu + 48, 0x5a, PING);
	while (sent < MAX_SENT && !blocked) {
		put32(pdu + 16, c.itt++); /* an ITT: the target answers with an echo */
		put32(pdu + 24, c.cmdsn);
		put32(pdu + 28, c.exp_statsn);
		blocked = !send_or_blocked(c.fd, pdu, sizeof(pdu));
		sent += blocked ? 0 : sizeof(pdu);
	}
	after = rss();
	itest_note("NOP-Out flood: %zu MiB sent before the daemon stopped reading, VmRSS %ld -> %ld KiB", sent >> 20,
		   before, after);
	itest_ok(blocked, "RFC 7143 11.18: a peer that never reads its NOP-In echoes is no longer read", "%zu MiB sent",
		 sent >> 20);
	itest_ok(before > 0 && after - before < (long)LIMIT_KIB,
		 "its echoes cost the daemon less than the session's budget", "VmRSS grew by %ld KiB (limit %u KiB)",
		 after - before, LIMIT_KIB);
	itest_raw_close(&c);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running", NULL);
}

int main(int argc, char **argv)
{
	itest_init(argc, argv, "test_peer_memory: out-of-window commands and unread echoes inside the budgets");
	/* A sanitizer build keeps freed memory in its quarantine: a small one keeps the measure about the daemon. */
	{
		const char *asan = getenv("ASAN_OPTIONS");
		char opts[512];

		snprintf(opts, sizeof(opts), "%s%squarantine_size_mb=4", asan && *asan ? asan : "", asan && *asan ? ":" : "");
		setenv("ASAN_OPTIONS", opts, 1);
	}
	itest_daemon_up(&d, "peer-memory", config);
	out_of_window_writes();
	unread_nop_in_echoes();
	itest_daemon_cleanup(&d);
	return itest_finish();
}
