/*
 * NOP-Out / NOP-In (RFC 7143 11.18, 11.19): answering the initiator's pings
 * (echoing the ping data), and the target's own pings on an idle connection,
 * which drop the connection when unanswered for nop_in_timeout seconds.
 */
#include <string.h>

#include "iscsi_internal.h"

void iscsi_nop_out_handle(struct iscsi_conn *conn, const struct iscsi_pdu *pdu)
{
	const uint8_t *bhs = pdu->bhs;
	uint32_t itt = get_be32(bhs + ISCSI_BHS_ITT);
	uint32_t ttt = get_be32(bhs + ISCSI_BHS_TTT);
	uint8_t rsp[ISCSI_BHS_LEN];
	uint32_t len = pdu->data_len;

	if (itt == ISCSI_RESERVED_TAG) {
		/* RFC 7143 11.18.2: the answer to our NOP-In; it gets no response. */
		if (conn->ping_outstanding && ttt == conn->ping_ttt)
			conn->ping_outstanding = false;
		return;
	}
	/* RFC 7143 11.19: NOP-In echoes ITT, LUN and the ping data. */
	if (len > conn->params.max_xmit_data_segment_length)
		len = conn->params.max_xmit_data_segment_length;
	iscsi_bhs_init(rsp, ISCSI_OP_NOP_IN, ISCSI_FLAG_FINAL, len);
	memcpy(rsp + ISCSI_BHS_LUN, bhs + ISCSI_BHS_LUN, 8);
	put_be32(rsp + ISCSI_BHS_ITT, itt);
	put_be32(rsp + ISCSI_BHS_TTT, ISCSI_RESERVED_TAG);
	iscsi_conn_fill_sn(conn, rsp, true);
	iscsi_conn_queue(conn, rsp, pdu->data, len, NULL);
}

void iscsi_nop_timer(struct iscsi_conn *conn, ev_tstamp now)
{
	const struct iscsi_server_params *p = &conn->srv->params;
	uint8_t bhs[ISCSI_BHS_LEN];

	if (conn->state != ISCSI_CONN_STATE_FULL_FEATURE || !p->nop_in_interval)
		return;
	if (conn->ping_outstanding) {
		if (now - conn->ping_sent >= (p->nop_in_timeout ? p->nop_in_timeout : p->nop_in_interval))
			iscsi_conn_drop(conn, "NOP-In ping not answered");
		return;
	}
	if (now - conn->last_rx < p->nop_in_interval)
		return;
	/* RFC 7143 11.19.1: a ping asking for an answer has a valid TTT and the reserved ITT. */
	conn->ping_ttt = conn->next_ttt++;
	if (conn->ping_ttt == ISCSI_RESERVED_TAG)
		conn->ping_ttt = conn->next_ttt++;
	conn->ping_outstanding = true;
	conn->ping_sent = now;
	iscsi_bhs_init(bhs, ISCSI_OP_NOP_IN, ISCSI_FLAG_FINAL, 0);
	put_be32(bhs + ISCSI_BHS_ITT, ISCSI_RESERVED_TAG);
	put_be32(bhs + ISCSI_BHS_TTT, conn->ping_ttt);
	/* StatSN is not advanced by a NOP-In with the reserved ITT (RFC 7143 11.19.4). */
	iscsi_conn_fill_sn(conn, bhs, false);
	iscsi_conn_queue(conn, bhs, NULL, 0, NULL);
}
