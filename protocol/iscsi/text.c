/*
 * Text Request/Response in full feature phase (RFC 7143 11.10, 11.11):
 * SendTargets, and the few keys that may be renegotiated after login
 * (MaxRecvDataSegmentLength).  Responses longer than the initiator's
 * MaxRecvDataSegmentLength go out in pieces with the C bit and a TTT the
 * initiator returns in empty Text Requests.
 */
#include <stdlib.h>
#include <string.h>

#include "iscsi_internal.h"

#define TEXT_MAX_PAIRS 64

static void send_text_piece(struct iscsi_conn *conn)
{
	struct iscsi_text_continuation *tc = &conn->text_cont;
	uint32_t max = conn->params.max_xmit_data_segment_length;
	size_t left = tc->len - tc->off;
	uint32_t len = left > max ? max : (uint32_t)left;
	bool last = len == left;
	uint8_t bhs[ISCSI_BHS_LEN];

	iscsi_bhs_init(bhs, ISCSI_OP_TEXT_RSP, last ? ISCSI_FLAG_FINAL : ISCSI_TEXT_FLAG_CONTINUE, len);
	put_be32(bhs + ISCSI_BHS_ITT, tc->itt);
	put_be32(bhs + ISCSI_BHS_TTT, last ? ISCSI_RESERVED_TAG : tc->ttt);
	iscsi_conn_fill_sn(conn, bhs, true);
	iscsi_conn_queue(conn, bhs, tc->buf ? tc->buf + tc->off : NULL, len, NULL);
	tc->off += len;
	if (last) {
		free(tc->buf);
		memset(tc, 0, sizeof(*tc));
	}
}

void iscsi_text_handle(struct iscsi_conn *conn, const struct iscsi_pdu *pdu)
{
	const uint8_t *bhs = pdu->bhs;
	struct iscsi_text_continuation *tc = &conn->text_cont;
	uint32_t itt = get_be32(bhs + ISCSI_BHS_ITT);
	uint32_t ttt = get_be32(bhs + ISCSI_BHS_TTT);
	struct iscsi_kv kv[TEXT_MAX_PAIRS];
	struct iscsi_negotiation neg;
	struct iscsi_text out = { 0 };
	char *text;
	int nkv;

	if (ttt != ISCSI_RESERVED_TAG) {
		/* RFC 7143 11.10.4: the initiator asks for the rest of our response. */
		if (!tc->buf || ttt != tc->ttt || itt != tc->itt) {
			iscsi_reject(conn, bhs, ISCSI_REJECT_INVALID_PDU_FIELD);
			return;
		}
		send_text_piece(conn);
		return;
	}
	/* A new request resets any exchange in progress (RFC 7143 11.10.4). */
	free(tc->buf);
	memset(tc, 0, sizeof(*tc));
	if (bhs[1] & ISCSI_TEXT_FLAG_CONTINUE) {
		/* Multi-PDU requests are not needed for the keys we serve. */
		iscsi_reject(conn, bhs, ISCSI_REJECT_PROTOCOL_ERROR);
		return;
	}
	text = malloc(pdu->data_len + 1);
	if (!text) {
		iscsi_reject(conn, bhs, ISCSI_REJECT_LONG_OPERATION_REJECT);
		return;
	}
	if (pdu->data_len)
		memcpy(text, pdu->data, pdu->data_len);
	nkv = iscsi_text_parse(text, pdu->data_len, kv, TEXT_MAX_PAIRS);
	if (nkv < 0) {
		free(text);
		iscsi_reject(conn, bhs, ISCSI_REJECT_PROTOCOL_ERROR);
		return;
	}
	iscsi_negotiation_init(&neg, &conn->srv->params, false);
	neg.full_feature = true;
	neg.session_type = conn->session->type;
	neg.conn = conn->params;
	for (int i = 0; i < nkv; i++) {
		if (strcmp(kv[i].key, "SendTargets") == 0) {
			iscsi_discovery_send_targets(conn, kv[i].value, &out);
			continue;
		}
		if (!iscsi_param_is_operational(kv[i].key)) {
			iscsi_text_append(&out, kv[i].key, "Irrelevant");
			continue;
		}
		if (iscsi_param_negotiate(&neg, kv[i].key, kv[i].value, &out) == ISCSI_NEGOTIATE_REPEATED_KEY) {
			iscsi_text_append(&out, kv[i].key, "Reject");
			continue;
		}
		if (strcmp(kv[i].key, "MaxRecvDataSegmentLength") == 0) {
			/* RFC 7143 13.12: declarative in both directions, also in full feature phase. */
			conn->params.max_xmit_data_segment_length = neg.conn.max_xmit_data_segment_length;
			iscsi_param_declare(&neg, &out);
		}
	}
	free(text);
	if (out.failed) {
		iscsi_text_free(&out);
		iscsi_reject(conn, bhs, ISCSI_REJECT_LONG_OPERATION_REJECT);
		return;
	}
	tc->buf = out.buf; /* ownership moves */
	tc->len = out.len;
	tc->off = 0;
	tc->itt = itt;
	tc->ttt = conn->next_ttt++;
	if (tc->ttt == ISCSI_RESERVED_TAG)
		tc->ttt = conn->next_ttt++;
	send_text_piece(conn);
}
