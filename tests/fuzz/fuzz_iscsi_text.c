/*
 * fuzz_iscsi_text: iSCSI text keys (RFC 7143 5, 6, 12, 13): the key=value
 * parser and the negotiation table (param.c), CHAP (chap.c: binary values
 * in hex and base64, one-way and mutual), the login stages that assemble
 * text over C-bit PDUs and apply it (login.c: security, operational, full
 * feature; target lookup, ACLs, session creation), and Text Requests in
 * full feature phase (text.c, discovery.c: SendTargets, renegotiation, long
 * responses continued by TTT).
 *
 * The harness builds correct Login and Text Request headers itself, so the
 * input is all text.  Each record's text goes twice: straight into the
 * parser and negotiation functions (with RFC 7143 invariants checked on the
 * result), and to the in-process target (tests/fuzz/common/fuzz_iscsi.c) in
 * a Login Request, or once the login is over, a Text Request.
 *
 * Input:
 *   byte 0   bits 0-1: the target's negotiation profile (fuzz_iscsi_profile);
 *            bits 2-4: the LU variant behind the fuzz target
 *   then records, each: byte 0 flags, bytes 1-2 the text length (big
 *   endian), the text (key=value pairs ended by NUL bytes, RFC 7143 6.1).
 *   In the login phase the flags byte is byte 1 of the Login Request (T,
 *   C, CSG, NSG: RFC 7143 11.12.1); in full feature phase bit 7 is F, bit
 *   6 C, bit 0 asks for the rest of a long Text Response (RFC 7143
 *   11.10.4: the TTT it carried, no text), bit 1 makes the request
 *   immediate.  For the direct calls bit 0 means a leading connection and
 *   bit 1 a full feature phase negotiation.
 *   The value "@" of CHAP_R is replaced by the right answer to the target's
 *   last challenge (RFC 1994 4.1) for the CHAP_N of the same text, so
 *   inputs can get past CHAP to the mutual step and the operational stage;
 *   the target's own mutual CHAP_R is checked the same way.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_iscsi.h"

#define MAX_PAIRS 256
#define MAX_RECORDS 16
#define CHAP_MAX 1024 /* RFC 7143 12.1.3 */

static struct {
	bool logged_in;
	bool failed;
	uint32_t cmd_sn;
	uint32_t exp_stat_sn;
	uint32_t itt;
	uint32_t text_ttt;            /* TTT of the last Text Response with C set, else reserved */
	uint32_t text_itt;
	bool have_challenge;
	uint8_t chap_id;
	uint8_t chap_challenge[CHAP_MAX];
	int chap_challenge_len;
	/* our mutual challenge (RFC 7143 12.1.3), to check the target's answer */
	bool sent_mutual;
	uint8_t mutual_id;
	uint8_t mutual_challenge[CHAP_MAX];
	int mutual_challenge_len;
} S;

static const char *value_of(const uint8_t *data, uint32_t len, const char *key)
{
	size_t klen = strlen(key);
	uint32_t pos = 0;

	while (pos < len) {
		const char *e = (const char *)data + pos;
		size_t elen = strnlen(e, len - pos);

		if (elen < len - pos && elen > klen && strncmp(e, key, klen) == 0 && e[klen] == '=')
			return e + klen + 1;
		pos += (uint32_t)elen + 1;
	}
	return NULL;
}

static const char *secret_of(const char *user, bool mutual)
{
	if (!user)
		return NULL;
	if (mutual)
		return strcmp(user, FUZZ_MUTUAL_USER) == 0 ? FUZZ_MUTUAL_SECRET : NULL;
	if (strcmp(user, FUZZ_CHAP_USER) == 0)
		return FUZZ_CHAP_SECRET;
	if (strcmp(user, FUZZ_ACL_CHAP_USER) == 0)
		return FUZZ_ACL_CHAP_SECRET;
	return NULL;
}

static void hex_of(const uint8_t *in, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	out[0] = '0';
	out[1] = 'x';
	for (size_t i = 0; i < len; i++) {
		out[2 + 2 * i] = digits[in[i] >> 4];
		out[3 + 2 * i] = digits[in[i] & 15];
	}
	out[2 + 2 * len] = '\0';
}

static void on_pdu(void *arg, const uint8_t *bhs, const uint8_t *data, uint32_t len)
{
	uint8_t op = iscsi_bhs_opcode(bhs);
	const char *v;

	(void)arg;
	if (op != ISCSI_OP_DATA_IN && op != ISCSI_OP_R2T)
		S.exp_stat_sn = get_be32(bhs + ISCSI_BHS_STAT_SN) + 1;
	if (op == ISCSI_OP_LOGIN_RSP) {
		if (bhs[ISCSI_LOGIN_STATUS_CLASS] != 0)
			S.failed = true;
		else if ((bhs[1] & ISCSI_LOGIN_FLAG_TRANSIT) &&
			 (bhs[1] & ISCSI_LOGIN_STAGE_MASK) == ISCSI_STAGE_FULL_FEATURE)
			S.logged_in = true;
		if ((v = value_of(data, len, "CHAP_I"))) {
			S.chap_id = (uint8_t)strtoul(v, NULL, 0);
			v = value_of(data, len, "CHAP_C");
			S.chap_challenge_len = v ? iscsi_chap_decode_binary(v, S.chap_challenge, CHAP_MAX) : -1;
			S.have_challenge = S.chap_challenge_len > 0;
		}
		if (S.sent_mutual && (v = value_of(data, len, "CHAP_R"))) {
			/* RFC 1994 4.1, RFC 7143 12.1.3: the target proves it knows the mutual secret. */
			const char *n = value_of(data, len, "CHAP_N");
			const char *secret = secret_of(n, true);
			uint8_t got[CHAP_MAX], want[ISCSI_MD5_LEN];
			int glen = iscsi_chap_decode_binary(v, got, sizeof(got));

			if (!secret || glen != ISCSI_MD5_LEN ||
			    iscsi_chap_md5(S.mutual_id, (const uint8_t *)secret, strlen(secret), S.mutual_challenge,
					   (size_t)S.mutual_challenge_len, want) != 0 ||
			    memcmp(got, want, ISCSI_MD5_LEN) != 0) {
				fprintf(stderr, "fuzz_iscsi_text: the target's mutual CHAP answer (CHAP_N=%s CHAP_R=%s) "
					"is wrong\n", n ? n : "(none)", v);
				abort();
			}
		}
	}
	if (op == ISCSI_OP_TEXT_RSP) {
		S.text_itt = get_be32(bhs + ISCSI_BHS_ITT);
		S.text_ttt = (bhs[1] & ISCSI_TEXT_FLAG_CONTINUE) ? get_be32(bhs + ISCSI_BHS_TTT) : ISCSI_RESERVED_TAG;
	}
}

/*
 * Copies text into out, replacing CHAP_R=@ by the answer to the last
 * challenge, and noting a mutual challenge (CHAP_I, CHAP_C) we send.
 * Returns the new length.
 */
static uint32_t prepare_text(const uint8_t *text, uint32_t len, char *out, size_t cap)
{
	const char *user = value_of(text, len, "CHAP_N");
	const char *ci = value_of(text, len, "CHAP_I"), *cc = value_of(text, len, "CHAP_C");
	uint32_t pos = 0, o = 0;

	if (ci && cc) {
		S.mutual_id = (uint8_t)strtoul(ci, NULL, 0);
		S.mutual_challenge_len = iscsi_chap_decode_binary(cc, S.mutual_challenge, CHAP_MAX);
		S.sent_mutual = S.mutual_challenge_len > 0;
	}
	while (pos < len) {
		const char *e = (const char *)text + pos;
		size_t elen = strnlen(e, len - pos), n = elen;
		char answer[2 + 2 * ISCSI_MD5_LEN + 8];
		const char *src = e;

		if (elen == 8 && memcmp(e, "CHAP_R=@", 8) == 0 && S.have_challenge) {
			const char *secret = secret_of(user, false);
			uint8_t md5[ISCSI_MD5_LEN];

			if (secret && iscsi_chap_md5(S.chap_id, (const uint8_t *)secret, strlen(secret), S.chap_challenge,
						      (size_t)S.chap_challenge_len, md5) == 0) {
				memcpy(answer, "CHAP_R=", 7);
				hex_of(md5, sizeof(md5), answer + 7);
				src = answer;
				n = strlen(answer);
			}
		}
		if (o + n + 1 > cap)
			break;
		memcpy(out + o, src, n);
		o += (uint32_t)n;
		pos += (uint32_t)elen;
		if (pos < len) {
			out[o++] = '\0'; /* the entry's terminator, as it came */
			pos++;
		}
	}
	return o;
}

/*
 * The parser and negotiation table alone, with what RFC 7143 promises of
 * the result checked: a well-formed response text, and operational values
 * within the ranges and relations of RFC 7143 13.
 */
static void negotiate_direct(uint8_t flags, const char *text, uint32_t len)
{
	static char buf[65536 + 1];
	struct iscsi_kv kv[MAX_PAIRS];
	struct iscsi_server_params params;
	struct iscsi_negotiation neg;
	struct iscsi_text out = { 0 };
	uint8_t bin[CHAP_MAX];
	int nkv;

	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, text, len);
	nkv = iscsi_text_parse(buf, len, kv, MAX_PAIRS);
	if (nkv < 0)
		return;
	fuzz_iscsi_profile(&params, flags >> 2);
	iscsi_negotiation_init(&neg, &params, flags & 1);
	neg.full_feature = flags & 2;
	for (int i = 0; i < nkv; i++) {
		iscsi_name_valid(kv[i].value);
		iscsi_chap_decode_binary(kv[i].value, bin, sizeof(bin));
		if (iscsi_param_is_operational(kv[i].key) &&
		    iscsi_param_negotiate(&neg, kv[i].key, kv[i].value, &out) != ISCSI_NEGOTIATE_OK)
			break;
	}
	iscsi_param_declare(&neg, &out);
	iscsi_param_finish(&neg);
	for (size_t pos = 0; pos < out.len;) {
		const char *e = out.buf + pos;
		size_t elen = strnlen(e, out.len - pos);

		if (elen == out.len - pos || !memchr(e, '=', elen)) {
			fprintf(stderr, "fuzz_iscsi_text: a response pair without '=' or NUL (RFC 7143 6.1)\n");
			abort();
		}
		pos += elen + 1;
	}
	if (neg.sess.first_burst_length > neg.sess.max_burst_length || neg.sess.max_burst_length < 512 ||
	    neg.sess.max_burst_length > 16777215 || neg.sess.max_outstanding_r2t < 1 ||
	    neg.sess.max_outstanding_r2t > ISCSI_MAX_R2T || neg.sess.max_connections < 1 ||
	    neg.sess.error_recovery_level > 2 || neg.conn.max_xmit_data_segment_length < 512 ||
	    neg.conn.max_xmit_data_segment_length > 16777215 || neg.sess.default_time2wait > 3600 ||
	    neg.sess.default_time2retain > 3600) {
		fprintf(stderr, "fuzz_iscsi_text: negotiated values outside RFC 7143 13: burst %u/%u R2T %u conn %u "
			"ERL %u MRDSL %u T2W %u T2R %u\n", neg.sess.first_burst_length, neg.sess.max_burst_length,
			neg.sess.max_outstanding_r2t, neg.sess.max_connections, neg.sess.error_recovery_level,
			neg.conn.max_xmit_data_segment_length, neg.sess.default_time2wait,
			neg.sess.default_time2retain);
		abort();
	}
	iscsi_text_free(&out);
}

/* CHAP on its own (chap.c): a challenge, then the text as the initiator's answer. */
static void chap_direct(const char *text, uint32_t len)
{
	static char buf[65536 + 1];
	static struct iscsi_target target = {
		.name = FUZZ_TARGET_CHAP,
		.chap = { .user = FUZZ_CHAP_USER, .secret = FUZZ_CHAP_SECRET },
		.mutual = { .user = FUZZ_MUTUAL_USER, .secret = FUZZ_MUTUAL_SECRET },
	};
	struct iscsi_conn conn;
	struct iscsi_login login;
	struct iscsi_kv kv[MAX_PAIRS];
	struct iscsi_text out = { 0 };
	int nkv;

	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, text, len);
	nkv = iscsi_text_parse(buf, len, kv, MAX_PAIRS);
	if (nkv < 0)
		return;
	memset(&conn, 0, sizeof(conn));
	memset(&login, 0, sizeof(login));
	login.target = &target;
	iscsi_chap_handle(&conn, &login, kv, nkv, &out);
	iscsi_text_free(&out);
	memset(&login, 0, sizeof(login));
	login.target = &target;
	login.chap_state = ISCSI_CHAP_STATE_CHALLENGED;
	login.chap_id = 7;
	memset(login.chap_challenge, 0x5a, sizeof(login.chap_challenge));
	iscsi_chap_handle(&conn, &login, kv, nkv, &out);
	iscsi_text_free(&out);
}

static void send_login(uint8_t flags, const char *text, uint32_t len)
{
	static const uint8_t isid[6] = { 0x80, 0x00, 0x00, 0x00, 0xab, 0xcd };
	uint8_t bhs[ISCSI_BHS_LEN] = { 0 };

	bhs[0] = ISCSI_BHS_IMMEDIATE | ISCSI_OP_LOGIN_REQ;
	bhs[1] = flags;
	memcpy(bhs + ISCSI_LOGIN_ISID, isid, 6);
	put_be32(bhs + ISCSI_BHS_ITT, S.itt);
	put_be16(bhs + ISCSI_LOGIN_CID, 1);
	put_be32(bhs + ISCSI_BHS_CMD_SN, S.cmd_sn);
	put_be32(bhs + ISCSI_BHS_EXP_STAT_SN, S.exp_stat_sn);
	fuzz_iscsi_send_pdu(bhs, NULL, 0, (const uint8_t *)text, len);
}

static void send_text(uint8_t flags, const char *text, uint32_t len)
{
	uint8_t bhs[ISCSI_BHS_LEN] = { 0 };
	bool more = (flags & 1) && S.text_ttt != ISCSI_RESERVED_TAG;

	bhs[0] = ISCSI_OP_TEXT_REQ | ((flags & 2) ? ISCSI_BHS_IMMEDIATE : 0);
	bhs[1] = flags & (ISCSI_FLAG_FINAL | ISCSI_TEXT_FLAG_CONTINUE);
	put_be32(bhs + ISCSI_BHS_ITT, more ? S.text_itt : ++S.itt);
	put_be32(bhs + ISCSI_BHS_TTT, more ? S.text_ttt : ISCSI_RESERVED_TAG);
	put_be32(bhs + ISCSI_BHS_CMD_SN, S.cmd_sn);
	put_be32(bhs + ISCSI_BHS_EXP_STAT_SN, S.exp_stat_sn);
	if (!(flags & 2))
		S.cmd_sn++;
	fuzz_iscsi_send_pdu(bhs, NULL, 0, (const uint8_t *)text, more ? 0 : len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[65536 + 64];
	const uint8_t *p, *end;
	uint8_t global;

	if (size < 1)
		return 0;
	global = data[0];
	memset(&S, 0, sizeof(S));
	S.cmd_sn = 1;
	S.itt = 0x20000000;
	S.text_ttt = ISCSI_RESERVED_TAG;
	fuzz_iscsi_begin(fuzz_lu_variant((global >> 2) & 7), global & 3, on_pdu, NULL);
	p = data + 1;
	end = data + size;
	for (int r = 0; r < MAX_RECORDS && end - p >= 3; r++) {
		uint8_t flags = p[0];
		uint32_t len = get_be16(p + 1), n;

		p += 3;
		if (len > (uint32_t)(end - p))
			len = (uint32_t)(end - p);
		n = prepare_text(p, len, text, sizeof(text));
		p += len;
		negotiate_direct((uint8_t)(flags ^ global), text, n);
		chap_direct(text, n);
		if (!fuzz_iscsi_connected())
			continue;
		if (S.logged_in)
			send_text(flags, text, n);
		else
			send_login(flags, text, n);
		fuzz_iscsi_pump();
	}
	fuzz_iscsi_end();
	return 0;
}
