/*
 * Malformed PDUs over a raw TCP connection (itest_raw.h), before and after
 * login.  Each must be rejected (Reject or Login reject) or the connection
 * dropped, within 5 s, or - where the PDU stream is still framed - ignored
 * with the connection still answering an immediate NOP-Out ping; never
 * silence.  The rest of the soak checks that the daemon keeps serving, and
 * the final descriptor count that these connections were all closed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "itest_raw.h"
#include "soak.h"

#define ANSWER_MS 5000
#define RAW_VARIANTS 11

enum raw_answer { RA_SILENT, RA_REJECT, RA_CLOSED, RA_OTHER };

static enum raw_answer raw_answer(struct itest_raw *c, uint8_t *op, uint8_t *reason)
{
	struct itest_pdu p;
	int rc = itest_raw_recv(c, &p, ANSWER_MS);

	*op = 0xff;
	*reason = 0;
	if (rc == -2)
		return RA_SILENT;
	if (rc != 1)
		return RA_CLOSED;
	*op = p.bhs[0] & 0x3f;
	*reason = p.bhs[2];
	itest_pdu_free(&p);
	if (*op == RAW_OP_REJECT || *op == RAW_OP_LOGIN_RSP)
		return RA_REJECT;
	return RA_OTHER;
}

/* An immediate NOP-Out asking for an answer (RFC 7143 11.18): true if a NOP-In or a close comes. */
static bool raw_ping(struct itest_raw *c)
{
	uint8_t bhs[48] = { 0x40 | RAW_OP_NOP_OUT, 0x80 };
	uint64_t end = itest_now_ms() + ANSWER_MS;
	struct itest_pdu p;

	itest_put_be32(bhs + 16, 0x50a4);
	itest_put_be32(bhs + 20, 0xffffffffu);
	itest_put_be32(bhs + 24, c->cmdsn);
	itest_put_be32(bhs + 28, c->exp_statsn);
	if (itest_raw_send(c, bhs, NULL, 0))
		return true; /* the target closed already */
	while (itest_now_ms() < end) {
		int rc = itest_raw_recv(c, &p, (int)(end - itest_now_ms()));
		bool pong;

		if (rc == -2)
			return false;
		if (rc != 1)
			return true;
		pong = (p.bhs[0] & 0x3f) == RAW_OP_NOP_IN && itest_get_be32(p.bhs + 16) == 0x50a4;
		itest_pdu_free(&p);
		if (pong) {
			soak.st.raw_pongs++;
			return true;
		}
	}
	return false;
}

static void expect_rejected(struct itest_raw *c, const char *what, bool opcode_reason)
{
	uint8_t op, reason;
	enum raw_answer a = raw_answer(c, &op, &reason);

	if (a == RA_REJECT)
		soak.st.raw_rejects++;
	if (a == RA_CLOSED)
		soak.st.raw_drops++;
	/* RFC 7143 11.17.1: an unknown opcode is "Command not supported" (05h) or a protocol error (04h). */
	if (a == RA_REJECT && opcode_reason && op == RAW_OP_REJECT && reason != 0x04 && reason != 0x05)
		fail_note(&soak.st.unexpected, "%s: Reject reason %02Xh, expected 04h or 05h", what, reason);
	else if (a == RA_SILENT)
		report_hang("%s: neither rejected nor dropped within %d s", what, ANSWER_MS / 1000);
	else if (a == RA_OTHER)
		fail_note(&soak.st.unexpected, "%s: answered with opcode %02Xh, expected a Reject or a close", what, op);
}

/* Rejected, dropped, or ignored with the connection still framed and alive. */
static void expect_handled(struct itest_raw *c, const char *what)
{
	uint8_t op, reason;
	struct itest_pdu p;
	int rc = itest_raw_recv(c, &p, 300);

	if (rc == 1) {
		op = p.bhs[0] & 0x3f;
		reason = p.bhs[2];
		itest_pdu_free(&p);
		if (op == RAW_OP_REJECT)
			soak.st.raw_rejects++;
		(void)reason;
	} else if (rc != -2) {
		soak.st.raw_drops++;
		return;
	}
	if (!raw_ping(c))
		report_hang("%s: afterwards an immediate NOP-Out got no NOP-In within %d s (connection not closed)", what,
			    ANSWER_MS / 1000);
}

/* ---- before login ---- */

/* RFC 7143 6: the first PDU of a connection is a Login Request; a SCSI Command there ends the connection. */
static void scsi_cmd_before_login(int fd)
{
	struct itest_raw c = { .fd = fd };
	uint8_t bhs[48] = { RAW_OP_SCSI_CMD, 0x81 };

	itest_raw_write(fd, bhs, 48);
	soak.st.malformed_pdus++;
	expect_rejected(&c, "SCSI Command before login", false);
}

static void garbage_bytes(int fd)
{
	uint8_t junk[128];
	size_t n = 1 + below(sizeof(junk));

	for (size_t i = 0; i < n; i++)
		junk[i] = (uint8_t)rnd();
	itest_raw_write(fd, junk, n);
	soak.st.malformed_pdus++;
}

/* Login text that is not key=value (RFC 7143 6.1): Login reject or a close. */
static void bad_login_text(int fd)
{
	struct itest_raw c = { .fd = fd, .cmdsn = 1 };
	uint8_t bhs[48] = { 0x40 | RAW_OP_LOGIN_REQ, 0x81 };
	uint8_t text[24];

	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (uint8_t)(rnd() | 0x80);
	bhs[8] = 0x80;
	itest_raw_send(&c, bhs, text, sizeof(text));
	soak.st.malformed_pdus++;
	expect_rejected(&c, "Login Request with malformed text", false);
}

/* ---- after login ---- */

static void unknown_opcode(struct itest_raw *c)
{
	uint8_t bhs[48] = { 0x0f, 0x80 };

	itest_put_be32(bhs + 16, 0x4242);
	itest_put_be32(bhs + 24, c->cmdsn);
	itest_put_be32(bhs + 28, c->exp_statsn);
	itest_raw_send(c, bhs, NULL, 0);
	soak.st.malformed_pdus++;
	expect_rejected(c, "unknown opcode 0Fh after login", true);
}

/* RFC 7143 13.12: a data segment longer than the target's MaxRecvDataSegmentLength. */
static void oversized_segment(struct itest_raw *c)
{
	uint32_t len = c->target_mrdsl + 512 * (1 + (uint32_t)below(8));
	uint8_t bhs[48], cdb[16] = { 0x2a }, *junk = calloc(1, len);

	itest_put_be16(cdb + 7, (uint16_t)(len / 512));
	itest_raw_scsi_cmd(c, bhs, 0, cdb, 10, false, true, len);
	bhs[32 + 2] = 0x7f; /* an LBA past the capacity, should the target take it anyway */
	itest_raw_send(c, bhs, junk, len);
	free(junk);
	soak.st.malformed_pdus++;
	expect_rejected(c, "SCSI Command with DataSegmentLength > MaxRecvDataSegmentLength", false);
}

static void data_out_unknown_task(struct itest_raw *c)
{
	uint8_t bhs[48] = { RAW_OP_DATA_OUT, 0x80 }, data[512] = { 0 };

	itest_put_be32(bhs + 16, 0xabcdef);
	itest_put_be32(bhs + 20, (uint32_t)rnd());
	itest_put_be32(bhs + 28, c->exp_statsn);
	itest_raw_send(c, bhs, data, sizeof(data));
	soak.st.malformed_pdus++;
	expect_handled(c, "Data-Out for an unknown task");
}

/* A TEST UNIT READY with 1020 bytes of garbage AHS (RFC 7143 11.2.1.2). */
static void garbage_ahs(struct itest_raw *c)
{
	uint8_t bhs[48], cdb[16] = { 0 }, ahs[1020];

	for (size_t i = 0; i < sizeof(ahs); i++)
		ahs[i] = (uint8_t)rnd();
	itest_raw_scsi_cmd(c, bhs, 0, cdb, 6, false, false, 0);
	bhs[4] = 255;
	itest_raw_write(c->fd, bhs, 48);
	itest_raw_write(c->fd, ahs, sizeof(ahs));
	soak.st.malformed_pdus++;
	expect_handled(c, "SCSI Command with a garbage AHS");
}

/*
 * 48 random bytes (a small data segment, no AHS), then a close.  Not a SCSI
 * Command or Data-Out (it could write), nor a Task Management Function
 * Request (a target reset would end the other sessions, RFC 7143 11.5.1).
 */
static void random_bhs(struct itest_raw *c)
{
	uint8_t bhs[48], data[256];
	uint32_t len = (uint32_t)below(sizeof(data));

	for (size_t i = 0; i < sizeof(bhs); i++)
		bhs[i] = (uint8_t)rnd();
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)rnd();
	while ((bhs[0] & 0x3f) == RAW_OP_SCSI_CMD || (bhs[0] & 0x3f) == RAW_OP_DATA_OUT ||
	       (bhs[0] & 0x3f) == RAW_OP_TMF_REQ)
		bhs[0] = (uint8_t)rnd();
	bhs[4] = 0;
	itest_raw_send(c, bhs, data, len);
	soak.st.malformed_pdus++;
	usleep(20000);
}

static void truncated_bhs(struct itest_raw *c)
{
	uint8_t bhs[48] = { RAW_OP_SCSI_CMD, 0x81 };

	itest_raw_write(c->fd, bhs, 1 + below(47));
	soak.st.malformed_pdus++;
}

/*
 * RFC 7143 4.2.2.1: WRITEs past MaxCmdSN with immediate data and F = 0 are
 * ignored and cost nothing; the session goes on at ExpCmdSN.
 */
static void out_of_window_writes(struct itest_raw *c)
{
	enum { N = 500, IMMEDIATE = 512 };
	static uint8_t buf[N * (48 + IMMEDIATE)];
	uint8_t bhs[48], cdb[10] = { 0x2a, 0, 0, 0, 0, 0, 0, 0x08, 0x00, 0 };
	uint32_t exp = c->cmdsn;
	size_t len = 0;
	int st;

	for (int i = 0; i < N; i++) {
		itest_raw_scsi_cmd(c, bhs, 0, cdb, 10, false, true, 1u << 20);
		bhs[1] &= 0x7f;
		itest_put_be32(bhs + 24, exp + 1000 + (uint32_t)i);
		bhs[5] = 0, bhs[6] = IMMEDIATE >> 8, bhs[7] = IMMEDIATE & 0xff;
		memcpy(buf + len, bhs, 48);
		memset(buf + len + 48, 0xa5, IMMEDIATE);
		len += 48 + IMMEDIATE;
	}
	c->cmdsn = exp;
	itest_raw_write(c->fd, buf, len);
	soak.st.malformed_pdus += N;
	st = itest_raw_nodata_cmd(c, 0, (const uint8_t[]){ 0, 0, 0, 0, 0, 0 }, 6, NULL);
	if (st != 0 && st != 2) /* GOOD, or CHECK CONDITION for a unit attention */
		fail_note(&soak.st.unexpected, "TEST UNIT READY after %d WRITEs past MaxCmdSN: status %d", N, st);
}

/* NOP-Outs with 64 KiB of ping data, their echoes never read (ISCSI_TX_HELD_MAX bounds what they cost). */
static void unread_echoes(struct itest_raw *c)
{
	static uint8_t pdu[48 + 65536];
	size_t sent = 0;

	memset(pdu, 0x5a, sizeof(pdu));
	memset(pdu, 0, 48);
	pdu[0] = RAW_OP_NOP_OUT | 0x40;
	pdu[1] = 0x80;
	pdu[5] = 0x01; /* DataSegmentLength 65536 */
	itest_put_be32(pdu + 20, 0xffffffff);
	while (sent < (32u << 20)) {
		ssize_t w;

		itest_put_be32(pdu + 16, c->itt++);
		itest_put_be32(pdu + 24, c->cmdsn);
		itest_put_be32(pdu + 28, c->exp_statsn);
		w = send(c->fd, pdu, sizeof(pdu), MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w != (ssize_t)sizeof(pdu))
			break; /* the daemon stopped reading (or a partial PDU: the connection is closed next) */
		sent += sizeof(pdu);
	}
	soak.st.malformed_pdus++;
}

static bool raw_login(struct itest_raw *c)
{
	char err[256];

	watch_op("a raw login", -1);
	if (itest_raw_login(c, &soak.d, SOAK_INITIATOR "raw", ITEST_TARGET, false, false, true, err, sizeof(err)) == 0)
		return true;
	if (daemon_check())
		fail_note(&soak.st.login_failures, "raw login: %s", err);
	return false;
}

void op_malformed(void)
{
	unsigned v = (unsigned)below(RAW_VARIANTS);
	struct itest_raw c = { .fd = -1 };

	if (v < 3) {
		c.fd = itest_raw_connect(&soak.d);
		if (c.fd < 0) {
			fail_note(&soak.st.login_failures, "raw connect refused");
			return;
		}
		watch_op("a malformed PDU before login", -1);
		if (v == 0)
			scsi_cmd_before_login(c.fd);
		else if (v == 1)
			garbage_bytes(c.fd);
		else
			bad_login_text(c.fd);
	} else if (raw_login(&c)) {
		watch_op("a malformed PDU after login", -1);
		switch (v) {
		case 3:
			unknown_opcode(&c);
			break;
		case 4:
			oversized_segment(&c);
			break;
		case 5:
			data_out_unknown_task(&c);
			break;
		case 6:
			garbage_ahs(&c);
			break;
		case 7:
			random_bhs(&c);
			break;
		case 8:
			truncated_bhs(&c);
			break;
		case 9:
			out_of_window_writes(&c);
			break;
		default:
			unread_echoes(&c);
		}
	}
	itest_raw_close(&c);
	watch_idle();
}
