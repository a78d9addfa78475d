/*
 * Bad peers and crashes (RFC 7143 7, 11; SBC-4 4.11 on FUA and SYNCHRONIZE
 * CACHE): malformed and truncated PDUs before and after login get a Reject
 * (or Login reject) or a dropped connection, and the daemon keeps serving
 * other sessions; commands outside the CmdSN window are not executed;
 * initiators that vanish with an R2T outstanding or many commands in flight
 * leave the daemon healthy; acknowledged data survives SIGTERM, and survives
 * SIGKILL when written with FUA or followed by SYNCHRONIZE CACHE.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"
#include "itest_raw.h"

static struct itest_daemon d;
static struct iscsi_context *watch;

/* The daemon is alive, the long-lived session still works, and a new login works. */
static void check_serving(const char *after)
{
	char name[256], err[256];
	uint8_t read16[16] = { 0x88, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0 };
	struct itest_result r;
	struct itest_login o = { .initiator = ITEST_INITIATOR_2, .initial_r2t = -1, .immediate_data = -1 };
	struct iscsi_context *s;
	bool ok;

	snprintf(name, sizeof(name), "after %s: daemon alive, other session served, new login accepted", after);
	if (!itest_daemon_alive(&d)) {
		itest_ok(false, name, "sbcemud died");
		return;
	}
	itest_cmd(watch, 0, read16, 16, ITEST_IN, NULL, 0, 512, &r);
	ok = itest_result_matches(&r, EXPECT_GOOD);
	itest_result_free(&r);
	s = itest_connect(&d, &o, 0, err, sizeof(err));
	itest_ok(ok && s, name, "existing session: %s; new login: %s", itest_result_str(&r), s ? "ok" : err);
	itest_close(s);
}

/* 1: Reject/Login reject then close, or close; 0: nothing within timeout (connection open). */
static int rejected_or_dropped(struct itest_raw *c, int timeout_ms, uint8_t *reject_reason, uint8_t *opcode)
{
	struct itest_pdu p;
	int rc = itest_raw_recv(c, &p, timeout_ms);

	*opcode = 0xff;
	if (rc == 1) {
		*opcode = p.bhs[0] & 0x3f;
		if (*opcode == RAW_OP_REJECT)
			*reject_reason = p.bhs[2];
		itest_pdu_free(&p);
		return *opcode == RAW_OP_REJECT || *opcode == RAW_OP_LOGIN_RSP ? 1 : 2;
	}
	return rc == -2 ? 0 : 1; /* EOF or reset: dropped */
}

static void test_before_login(void)
{
	struct itest_raw c = { .fd = -1 };
	uint8_t bhs[48], reason = 0, op;
	int rc;

	/* A SCSI Command before any Login: the target must terminate the connection. */
	c.fd = itest_raw_connect(&d);
	memset(bhs, 0, sizeof(bhs));
	bhs[0] = RAW_OP_SCSI_CMD;
	bhs[1] = 0x81;
	itest_raw_write(c.fd, bhs, 48);
	rc = itest_raw_wait_closed(&c, 5000);
	itest_ok(rc == 1, "SCSI Command PDU before login -> connection closed", "still open after 5 s");
	itest_raw_close(&c);
	check_serving("a SCSI Command before login");

	c.fd = itest_raw_connect(&d);
	itest_raw_write(c.fd, "\x17\x03\x01garbage-not-iscsi!", 20);
	itest_raw_close(&c);
	usleep(100000);
	check_serving("20 bytes of garbage and a close");

	/* A Login Request announcing 16 MiB of text that never comes. */
	c.fd = itest_raw_connect(&d);
	memset(bhs, 0, sizeof(bhs));
	bhs[0] = 0x40 | RAW_OP_LOGIN_REQ;
	bhs[1] = 0x81;
	bhs[5] = 0xff;
	bhs[6] = 0xff;
	bhs[7] = 0xfc;
	bhs[8] = 0x80;
	itest_raw_write(c.fd, bhs, 48);
	rc = rejected_or_dropped(&c, 3000, &reason, &op);
	itest_note("Login Request with DataSegmentLength 16 MiB: %s", rc == 1 ? "rejected or dropped" :
			   rc == 0 ? "target still waiting after 3 s" : "unexpected PDU");
	check_serving("a Login Request announcing 16 MiB (connection still open)");
	itest_raw_close(&c);

	/* Login text that is not key=value (no '=', no NUL terminator, bytes >= 0x80). */
	c.fd = itest_raw_connect(&d);
	{
		uint8_t text[12] = { 0xff, 0xfe, 'x', 'y', 'z', 0x01, 0x02, 0x03, 0x80, 0x90, 'A', 'B' };
		c.cmdsn = 1;
		memset(bhs, 0, sizeof(bhs));
		bhs[0] = 0x40 | RAW_OP_LOGIN_REQ;
		bhs[1] = 0x81;
		bhs[8] = 0x80;
		itest_raw_send(&c, bhs, text, sizeof(text));
	}
	rc = rejected_or_dropped(&c, 5000, &reason, &op);
	itest_ok(rc == 1, "Login Request with malformed text -> Login reject or connection dropped",
		 rc == 0 ? "no answer in 5 s" : "answered with opcode %02Xh", op);
	itest_raw_close(&c);
	check_serving("a Login Request with malformed text");

	/* Truncated BHS, then close. */
	c.fd = itest_raw_connect(&d);
	memset(bhs, 0, sizeof(bhs));
	bhs[0] = 0x40 | RAW_OP_LOGIN_REQ;
	itest_raw_write(c.fd, bhs, 30);
	itest_raw_close(&c);
	usleep(100000);
	check_serving("a 30-byte (truncated) Login Request header and a close");
}

static bool raw_login(struct itest_raw *c, bool initial_r2t, bool immediate)
{
	char err[256];
	bool ok = itest_raw_login(c, &d, ITEST_INITIATOR_1, ITEST_TARGET, false, initial_r2t, immediate, err,
				  sizeof(err)) == 0;
	if (!ok)
		itest_ok(false, "raw login", "%s", err);
	return ok;
}

static void test_after_login(void)
{
	struct itest_raw c;
	uint8_t bhs[48], reason = 0, op = 0;
	int rc;
	char why[64];

	/* An opcode the target does not know. */
	if (raw_login(&c, false, true)) {
		memset(bhs, 0, sizeof(bhs));
		bhs[0] = 0x0f;
		bhs[1] = 0x80;
		itest_put_be32(bhs + 16, 0x4242);
		itest_put_be32(bhs + 24, c.cmdsn);
		itest_put_be32(bhs + 28, c.exp_statsn);
		itest_raw_send(&c, bhs, NULL, 0);
		rc = rejected_or_dropped(&c, 5000, &reason, &op);
		snprintf(why, sizeof(why), rc == 0 ? "no answer in 5 s" : "answered with opcode %02Xh", op);
		itest_ok(rc == 1 && (op != RAW_OP_REJECT || reason == 0x04 || reason == 0x05),
			 "unknown opcode 0Fh after login -> Reject (reason 04h/05h) or connection dropped", "%s, reason %02Xh",
			 why, reason);
		itest_raw_close(&c);
		check_serving("an unknown opcode");
	}

	/* DataSegmentLength beyond the target's MaxRecvDataSegmentLength. */
	if (raw_login(&c, false, true)) {
		uint32_t len = c.target_mrdsl + 4096;
		uint8_t *junk = calloc(1, len);
		uint8_t cdb[16] = { 0x2a, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
		itest_put_be16(cdb + 7, (uint16_t)(len / 512));
		itest_raw_scsi_cmd(&c, bhs, 0, cdb, 10, false, true, len);
		itest_raw_send(&c, bhs, junk, len);
		free(junk);
		rc = rejected_or_dropped(&c, 5000, &reason, &op);
		itest_ok(rc == 1, "SCSI Command with DataSegmentLength > MaxRecvDataSegmentLength -> Reject or dropped",
			 rc == 0 ? "no answer in 5 s" : "answered with opcode %02Xh", op);
		itest_raw_close(&c);
		check_serving("an oversized data segment");
	}

	/* Data-Out for a task that does not exist. */
	if (raw_login(&c, true, false)) {
		uint8_t data[512] = { 0 };
		memset(bhs, 0, sizeof(bhs));
		bhs[0] = RAW_OP_DATA_OUT;
		bhs[1] = 0x80;
		itest_put_be32(bhs + 16, 0xabcdef);
		itest_put_be32(bhs + 20, 0x1234567);
		itest_put_be32(bhs + 28, c.exp_statsn);
		itest_raw_send(&c, bhs, data, sizeof(data));
		rc = rejected_or_dropped(&c, 2000, &reason, &op);
		itest_note("Data-Out with an unknown ITT/TTT: %s (opcode %02Xh reason %02Xh)",
			   rc == 1 ? "rejected or dropped" : rc == 0 ? "ignored" : "other answer", op, reason);
		itest_raw_close(&c);
		check_serving("a Data-Out for an unknown task");
	}

	/* 255 words of AHS garbage on a SCSI Command. */
	if (raw_login(&c, false, true)) {
		uint8_t *ahs = malloc(1020);
		uint8_t cdb[16] = { 0 };
		memset(ahs, 0xee, 1020);
		itest_raw_scsi_cmd(&c, bhs, 0, cdb, 6, false, false, 0);
		bhs[4] = 255;
		itest_raw_write(c.fd, bhs, 48);
		itest_raw_write(c.fd, ahs, 1020);
		free(ahs);
		rc = rejected_or_dropped(&c, 5000, &reason, &op);
		itest_note("SCSI Command with 1020 bytes of garbage AHS: %s (opcode %02Xh)",
			   rc == 1 ? "rejected or dropped" : rc == 0 ? "no answer" : "answered", op);
		itest_raw_close(&c);
		check_serving("a SCSI Command with a garbage AHS");
	}

	/* Truncated PDUs, then the connection closes. */
	if (raw_login(&c, false, true)) {
		memset(bhs, 0, sizeof(bhs));
		bhs[0] = RAW_OP_SCSI_CMD;
		itest_raw_write(c.fd, bhs, 30);
		itest_raw_close(&c);
		usleep(100000);
		check_serving("a 30-byte BHS after login and a close");
	}
	if (raw_login(&c, false, true)) {
		uint8_t cdb[16] = { 0x2a, 0, 0, 0, 0, 0, 0, 0, 2, 0 }, part[100] = { 0 };
		itest_raw_scsi_cmd(&c, bhs, 0, cdb, 10, false, true, 1024);
		bhs[5] = 0;
		bhs[6] = 0x04; /* DataSegmentLength 1024 announced ... */
		bhs[7] = 0x00;
		itest_raw_write(c.fd, bhs, 48);
		itest_raw_write(c.fd, part, sizeof(part)); /* ... 100 bytes sent */
		itest_raw_close(&c);
		usleep(100000);
		check_serving("a data segment cut short by a close");
	}

	/* A non-immediate command far outside the CmdSN window is ignored; the connection stays usable. */
	if (raw_login(&c, false, true)) {
		struct itest_pdu p;
		uint8_t tur[16] = { 0 };
		bool answered = false, pong = false;
		itest_raw_scsi_cmd(&c, bhs, 0, tur, 6, false, false, 0);
		itest_put_be32(bhs + 24, c.cmdsn + 100000);
		itest_raw_send(&c, bhs, NULL, 0);
		rc = itest_raw_recv(&c, &p, 1500);
		if (rc == 1) {
			answered = (p.bhs[0] & 0x3f) == RAW_OP_SCSI_RSP;
			itest_pdu_free(&p);
		}
		itest_ok(!answered, "SCSI Command with CmdSN outside the window is not executed", "got a SCSI Response");
		/* Immediate NOP-Out ping: answered if the connection survived. */
		memset(bhs, 0, sizeof(bhs));
		bhs[0] = 0x40 | RAW_OP_NOP_OUT;
		bhs[1] = 0x80;
		itest_put_be32(bhs + 16, 0x9999);
		itest_put_be32(bhs + 20, 0xffffffff);
		itest_put_be32(bhs + 24, c.cmdsn);
		itest_put_be32(bhs + 28, c.exp_statsn);
		itest_raw_send(&c, bhs, NULL, 0);
		while (itest_raw_recv(&c, &p, 3000) == 1) {
			bool hit = (p.bhs[0] & 0x3f) == RAW_OP_NOP_IN && itest_get_be32(p.bhs + 16) == 0x9999;
			itest_pdu_free(&p);
			if (hit) {
				pong = true;
				break;
			}
		}
		itest_ok(pong, "after an out-of-window command: immediate NOP-Out ping still answered", NULL);
		/* Logout. */
		memset(bhs, 0, sizeof(bhs));
		bhs[0] = 0x40 | RAW_OP_LOGOUT_REQ;
		bhs[1] = 0x80;
		itest_put_be32(bhs + 16, 0x5555);
		itest_put_be32(bhs + 24, c.cmdsn);
		itest_put_be32(bhs + 28, c.exp_statsn);
		itest_raw_send(&c, bhs, NULL, 0);
		{
			bool logout = false;
			while (itest_raw_recv(&c, &p, 3000) == 1) {
				bool hit = (p.bhs[0] & 0x3f) == RAW_OP_LOGOUT_RSP && p.bhs[2] == 0;
				itest_pdu_free(&p);
				if (hit) {
					logout = true;
					break;
				}
			}
			itest_ok(logout, "raw Logout Request (close session) -> Logout Response, response 0", NULL);
			itest_ok(itest_raw_wait_closed(&c, 5000) == 1, "after the Logout Response the target closes", NULL);
		}
		itest_raw_close(&c);
	}
}

/* Initiators that vanish in the middle of things. */
static void test_dropped_connections(void)
{
	struct itest_raw c;
	uint8_t bhs[48];
	int r2t_seen = 0, tries = 10;

	for (int i = 0; i < tries; i++) {
		struct itest_pdu p;
		uint8_t cdb[16] = { 0x2a, 0, 0, 0, 0x20, 0, 0, 0x01, 0x00, 0 }; /* WRITE(10) LBA 8192, 256 blocks */
		if (!raw_login(&c, true, false))
			break;
		itest_raw_clear_ua(&c, 0);
		itest_raw_scsi_cmd(&c, bhs, 0, cdb, 10, false, true, 256 * 512);
		itest_raw_send(&c, bhs, NULL, 0);
		if (itest_raw_recv(&c, &p, 5000) == 1) {
			if ((p.bhs[0] & 0x3f) == RAW_OP_R2T) {
				r2t_seen++;
				if (i % 2) { /* send half of the burst, then vanish */
					uint8_t dout[48] = { RAW_OP_DATA_OUT, 0x00 }, *half = calloc(1, 8192);
					memcpy(dout + 8, p.bhs + 8, 8);
					memcpy(dout + 16, p.bhs + 16, 8);
					itest_put_be32(dout + 28, c.exp_statsn);
					itest_raw_send(&c, dout, half, 8192);
					free(half);
				}
			}
			itest_pdu_free(&p);
		}
		itest_raw_close(&c);
	}
	itest_ok(r2t_seen == tries, "WRITE with InitialR2T=Yes: the target sends an R2T", "%d of %d", r2t_seen, tries);
	usleep(200000);
	check_serving("10 connections dropped with an R2T outstanding");
	{
		uint8_t buf[256 * 512];
		itest_ok(itest_read16(watch, 0, 8192, buf, 256, 512, NULL),
			 "the LBAs of the abandoned WRITEs can be read (GOOD)", NULL);
	}

	/* Many commands in flight, then the connection drops without reading a response. */
	if (raw_login(&c, false, true)) {
		for (int i = 0; i < 32; i++) {
			uint8_t cdb[16] = { 0x28, 0, 0, 0, 0, (uint8_t)i, 0, 0x01, 0x00, 0 };
			itest_raw_scsi_cmd(&c, bhs, 0, cdb, 10, true, false, 256 * 512);
			itest_raw_send(&c, bhs, NULL, 0);
		}
		itest_raw_close(&c);
		usleep(300000);
		check_serving("a connection dropped with 32 READs in flight");
	}
	/* A libiscsi session that disappears without logging out. */
	{
		struct iscsi_context *s = itest_session(&d, ITEST_INITIATOR_1, 0);
		if (s) {
			iscsi_disconnect(s);
			iscsi_destroy_context(s);
		}
		usleep(100000);
		check_serving("a session closed without Logout");
	}
}

static bool reads_pattern(struct iscsi_context *s, uint64_t lba, uint32_t n, uint32_t seed)
{
	uint8_t *want = malloc((size_t)n * 512), *got = malloc((size_t)n * 512);
	bool ok;
	itest_pattern(want, (size_t)n * 512, seed);
	ok = itest_read16(s, 0, lba, got, n, 512, NULL) && !memcmp(want, got, (size_t)n * 512);
	free(want);
	free(got);
	return ok;
}

static bool write_pattern(struct iscsi_context *s, uint64_t lba, uint32_t n, uint32_t seed, bool fua)
{
	uint8_t *buf = malloc((size_t)n * 512);
	bool ok;
	itest_pattern(buf, (size_t)n * 512, seed);
	ok = itest_write16(s, 0, lba, buf, n, 512, fua, "durability write");
	free(buf);
	return ok;
}

static void test_durability(void)
{
	uint8_t sync[10] = { 0x35 };
	int st;

	/* Clean shutdown: acknowledged writes survive SIGTERM. */
	write_pattern(watch, 20000, 64, 1, false);
	itest_close(watch);
	watch = NULL;
	st = itest_daemon_stop(&d, SIGTERM);
	itest_ok(st == 0, "sbcemud exits with status 0 on SIGTERM", "wait status 0x%x", st);
	if (!itest_ok(itest_daemon_start(&d) == 0, "sbcemud restarts after SIGTERM", NULL))
		return;
	watch = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!watch)
		return;
	itest_clear_ua(watch, 0);
	itest_ok(reads_pattern(watch, 20000, 64, 1), "data acknowledged before SIGTERM is there after the restart", NULL);

	/* Crash: FUA writes and writes followed by SYNCHRONIZE CACHE survive SIGKILL. */
	write_pattern(watch, 21000, 64, 2, false);
	itest_expect_cmd(watch, 0, "SYNCHRONIZE CACHE(10) after the writes -> GOOD", sync, 10, ITEST_NONE, NULL, 0, 0,
			 EXPECT_GOOD, NULL);
	write_pattern(watch, 22000, 64, 3, true);
	itest_close(watch);
	watch = NULL;
	st = itest_daemon_stop(&d, SIGKILL);
	itest_ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "sbcemud killed with SIGKILL", "wait status 0x%x", st);
	if (!itest_ok(itest_daemon_start(&d) == 0, "sbcemud restarts after SIGKILL", NULL))
		return;
	watch = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!watch)
		return;
	itest_clear_ua(watch, 0);
	itest_ok(reads_pattern(watch, 21000, 64, 2), "data followed by SYNCHRONIZE CACHE survives SIGKILL", NULL);
	itest_ok(reads_pattern(watch, 22000, 64, 3), "data written with FUA survives SIGKILL", NULL);
	itest_ok(reads_pattern(watch, 20000, 64, 1), "older data survives the SIGKILL restart too", NULL);
}

int main(int argc, char **argv)
{
	itest_init(argc, argv, "test_robustness: malformed PDUs, dropped connections, restart durability");
	itest_daemon_up(&d, "robust", itest_default_config);
	watch = itest_session(&d, ITEST_INITIATOR_2, 0);
	if (!watch)
		return itest_finish();
	itest_clear_ua(watch, 0);

	test_before_login();
	test_after_login();
	test_dropped_connections();
	test_durability();

	itest_close(watch);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
