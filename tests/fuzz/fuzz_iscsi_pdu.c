/*
 * fuzz_iscsi_pdu: the iSCSI target's receive path (protocol/iscsi/) from the
 * bytes on the wire: PDU framing and BHS checks (conn.c, pdu.c: BHS, AHS,
 * data segment, padding, digests; RFC 7143 11.2), the dispatch by state and
 * opcode (dispatch.c), and every PDU handler of the login and full feature
 * phases: login, SCSI Command (with AHS: extended CDB, bidirectional read
 * length; immediate data), Data-Out and R2T bookkeeping, NOP-Out, Task
 * Management, Text, Logout, SNACK, and the CmdSN window (session.c), down
 * into the SCSI core behind a real LU.
 *
 * The target runs in this process (tests/fuzz/common/fuzz_iscsi.c): a
 * connection per input on a socketpair, the harness on the initiator side.
 *
 * Input:
 *   byte 0   bits 0-1: what the harness does first: 0 nothing (the input
 *            logs in itself), 1 a normal session login to the fuzz target,
 *            2 a discovery session login, 3 a normal login with
 *            HeaderDigest and DataDigest CRC32C (RFC 7143 13.1);
 *            bit 2: framed: the rest is a sequence of PDUs, each a BHS, its
 *            AHS (TotalAHSLength) and DataSegmentLength data bytes (no
 *            padding, no digests: the harness adds both, and clips the last
 *            PDU to the input), sent one at a time with the loop turned in
 *            between; otherwise the rest is sent as it is (the digest login
 *            implies framed);
 *            bit 3 (framed): the harness numbers CmdSN (RFC 7143 3.2.2.1) and
 *            acknowledges ExpStatSN in the PDUs that carry them;
 *            bits 4-5: the target's negotiation profile (fuzz_iscsi_profile);
 *            bit 6: the harness answers every R2T with the Data-Out it asks
 *            for (zeros; RFC 7143 11.7, 11.8)
 *   byte 1   the LU variant of LUN 0 (enum fuzz_lu_variant)
 *   byte 2.. the bytes or PDUs the initiator sends.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_iscsi.h"

#define MAX_R2T 64
#define DATA_OUT_BUDGET (4u << 20)
#define ISID { 0x80, 0x00, 0x00, 0x00, 0x12, 0x34 }

struct r2t {
	uint8_t lun[8];
	uint32_t itt, ttt, offset, length;
};

static struct {
	bool logged_in;
	uint32_t cmd_sn;
	uint32_t exp_stat_sn;
	struct r2t r2t[MAX_R2T];
	unsigned nr2t;
	bool answer_r2t;
} S;

static void on_pdu(void *arg, const uint8_t *bhs, const uint8_t *data, uint32_t len)
{
	uint8_t op = iscsi_bhs_opcode(bhs);

	(void)arg;
	(void)data;
	(void)len;
	/* RFC 7143 4.2.2.2: StatSN of status-carrying PDUs; ExpStatSN acknowledges them. */
	if (op != ISCSI_OP_DATA_IN && op != ISCSI_OP_R2T)
		S.exp_stat_sn = get_be32(bhs + ISCSI_BHS_STAT_SN) + 1;
	if (op == ISCSI_OP_LOGIN_RSP && bhs[ISCSI_LOGIN_STATUS_CLASS] == 0 && (bhs[1] & ISCSI_LOGIN_FLAG_TRANSIT) &&
	    (bhs[1] & ISCSI_LOGIN_STAGE_MASK) == ISCSI_STAGE_FULL_FEATURE)
		S.logged_in = true;
	if (op == ISCSI_OP_R2T && S.answer_r2t && S.nr2t < MAX_R2T) {
		struct r2t *r = &S.r2t[S.nr2t++];

		memcpy(r->lun, bhs + ISCSI_BHS_LUN, 8);
		r->itt = get_be32(bhs + ISCSI_BHS_ITT);
		r->ttt = get_be32(bhs + ISCSI_BHS_TTT);
		r->offset = get_be32(bhs + ISCSI_R2T_BUFFER_OFFSET);
		r->length = get_be32(bhs + ISCSI_R2T_DESIRED_LENGTH);
	}
}

static void text_add(char *buf, uint32_t *len, const char *kv)
{
	size_t n = strlen(kv) + 1;

	memcpy(buf + *len, kv, n);
	*len += (uint32_t)n;
}

/* One Login Request from the operational stage straight to full feature phase (RFC 7143 6.3). */
static void prelude_login(unsigned kind)
{
	static const uint8_t isid[6] = ISID;
	uint8_t bhs[ISCSI_BHS_LEN] = { 0 };
	char text[1024];
	uint32_t len = 0;

	text_add(text, &len, "InitiatorName=" FUZZ_INITIATOR);
	if (kind == 2) {
		text_add(text, &len, "SessionType=Discovery");
	} else {
		text_add(text, &len, "TargetName=" FUZZ_TARGET);
		text_add(text, &len, "SessionType=Normal");
		text_add(text, &len, "InitialR2T=No");
		text_add(text, &len, "ImmediateData=Yes");
		text_add(text, &len, "MaxBurstLength=1048576");
		text_add(text, &len, "FirstBurstLength=262144");
		text_add(text, &len, "MaxOutstandingR2T=8");
	}
	text_add(text, &len, kind == 3 ? "HeaderDigest=CRC32C" : "HeaderDigest=None");
	text_add(text, &len, kind == 3 ? "DataDigest=CRC32C" : "DataDigest=None");
	text_add(text, &len, "MaxRecvDataSegmentLength=262144");
	text_add(text, &len, "ErrorRecoveryLevel=0");
	bhs[0] = ISCSI_BHS_IMMEDIATE | ISCSI_OP_LOGIN_REQ;
	bhs[1] = ISCSI_LOGIN_FLAG_TRANSIT | (ISCSI_STAGE_OPERATIONAL << ISCSI_LOGIN_CSG_SHIFT) | ISCSI_STAGE_FULL_FEATURE;
	memcpy(bhs + ISCSI_LOGIN_ISID, isid, 6);
	put_be32(bhs + ISCSI_BHS_ITT, 0x10000000);
	put_be16(bhs + ISCSI_LOGIN_CID, 1);
	put_be32(bhs + ISCSI_BHS_CMD_SN, S.cmd_sn);
	fuzz_iscsi_send_pdu(bhs, NULL, 0, (const uint8_t *)text, len);
	fuzz_iscsi_pump();
}

/* Data-Out for the R2Ts that came (RFC 7143 11.7): DataSN from 0, at most MaxRecvDataSegmentLength each. */
static void answer_r2ts(uint32_t *budget)
{
	static uint8_t zeros[1 << 16];

	while (S.nr2t && fuzz_iscsi_connected()) {
		struct r2t r = S.r2t[--S.nr2t];
		struct iscsi_conn *c = fuzz_iscsi_conn();
		uint32_t max = c ? c->params.max_recv_data_segment_length : 8192, sent = 0, data_sn = 0;

		if (max > sizeof(zeros))
			max = sizeof(zeros);
		if (r.length > *budget)
			r.length = *budget;
		*budget -= r.length;
		while (sent < r.length || (r.length == 0 && data_sn == 0)) {
			uint8_t bhs[ISCSI_BHS_LEN] = { 0 };
			uint32_t n = r.length - sent < max ? r.length - sent : max;

			bhs[0] = ISCSI_OP_DATA_OUT;
			bhs[1] = sent + n == r.length ? ISCSI_FLAG_FINAL : 0;
			memcpy(bhs + ISCSI_BHS_LUN, r.lun, 8);
			put_be32(bhs + ISCSI_BHS_ITT, r.itt);
			put_be32(bhs + ISCSI_BHS_TTT, r.ttt);
			put_be32(bhs + ISCSI_BHS_EXP_STAT_SN, S.exp_stat_sn);
			put_be32(bhs + ISCSI_DATA_SN, data_sn++);
			put_be32(bhs + ISCSI_DATA_BUFFER_OFFSET, r.offset + sent);
			if (!fuzz_iscsi_send_pdu(bhs, NULL, 0, zeros, n))
				return;
			sent += n;
			if (r.length == 0)
				break;
		}
		fuzz_iscsi_pump();
	}
}

/* Opcodes whose BHS carries CmdSN at byte 24 and ExpStatSN at byte 28 (RFC 7143 11.3 - 11.14). */
static bool carries_cmd_sn(const uint8_t *bhs)
{
	switch (iscsi_bhs_opcode(bhs)) {
	case ISCSI_OP_NOP_OUT:
		return get_be32(bhs + ISCSI_BHS_ITT) != ISCSI_RESERVED_TAG;
	case ISCSI_OP_SCSI_CMD:
	case ISCSI_OP_TASK_MGMT_REQ:
	case ISCSI_OP_TEXT_REQ:
	case ISCSI_OP_LOGOUT_REQ:
		return true;
	default:
		return false;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t flags, bhs[ISCSI_BHS_LEN];
	unsigned prelude;
	bool framed, number;
	const uint8_t *p, *end;
	uint32_t budget = DATA_OUT_BUDGET;

	if (size < 2)
		return 0;
	flags = data[0];
	prelude = flags & 3;
	framed = (flags & 0x04) || prelude == 3;
	number = framed && (flags & 0x08);
	memset(&S, 0, sizeof(S));
	S.cmd_sn = 1;
	S.answer_r2t = flags & 0x40;
	fuzz_iscsi_begin(fuzz_lu_variant(data[1]), (flags >> 4) & 3, on_pdu, NULL);
	if (prelude)
		prelude_login(prelude);
	p = data + 2;
	end = data + size;
	if (!framed) {
		fuzz_iscsi_send_raw(p, (size_t)(end - p));
		fuzz_iscsi_pump();
		answer_r2ts(&budget);
	}
	while (framed && p < end && fuzz_iscsi_connected()) {
		size_t avail = (size_t)(end - p);
		uint32_t ahs_len, data_len;

		if (avail < ISCSI_BHS_LEN) {
			/* A truncated BHS: the target must wait for the rest (and see the connection close). */
			fuzz_iscsi_send_raw(p, avail);
			fuzz_iscsi_pump();
			break;
		}
		memcpy(bhs, p, ISCSI_BHS_LEN);
		p += ISCSI_BHS_LEN;
		avail -= ISCSI_BHS_LEN;
		ahs_len = iscsi_bhs_ahs_len(bhs);
		if (ahs_len > avail) {
			ahs_len = (uint32_t)avail & ~3u;
			bhs[ISCSI_BHS_TOTAL_AHS_LENGTH] = (uint8_t)(ahs_len / 4);
		}
		data_len = iscsi_bhs_data_len(bhs);
		if (data_len > avail - ahs_len)
			data_len = (uint32_t)(avail - ahs_len);
		if (number && carries_cmd_sn(bhs)) {
			put_be32(bhs + ISCSI_BHS_CMD_SN, S.cmd_sn);
			put_be32(bhs + ISCSI_BHS_EXP_STAT_SN, S.exp_stat_sn);
			if (!iscsi_bhs_immediate(bhs))
				S.cmd_sn++;
		}
		fuzz_iscsi_send_pdu(bhs, p, ahs_len, p + ahs_len, data_len);
		p += ahs_len + data_len;
		fuzz_iscsi_pump();
		answer_r2ts(&budget);
	}
	fuzz_iscsi_end();
	return 0;
}
