/*
 * Reject PDU (RFC 7143 11.17): names the reason and returns the rejected
 * PDU's header as its data segment.  Callers decide whether the connection
 * survives (at ERL 0 header digest errors and Data-Out sequence errors drop
 * it instead).
 */
#include "iscsi_internal.h"

void iscsi_reject(struct iscsi_conn *conn, const uint8_t *bhs, enum iscsi_reject_reason reason)
{
	uint8_t rsp[ISCSI_BHS_LEN];

	ISCSI_PEER_ERROR(conn->srv, "%s: Reject reason 0x%02x for %s", conn->peer, reason,
		    iscsi_opcode_name(iscsi_bhs_opcode(bhs)));
	iscsi_bhs_init(rsp, ISCSI_OP_REJECT, ISCSI_FLAG_FINAL, ISCSI_BHS_LEN);
	rsp[ISCSI_REJECT_REASON] = (uint8_t)reason;
	put_be32(rsp + ISCSI_BHS_ITT, ISCSI_RESERVED_TAG);
	iscsi_conn_fill_sn(conn, rsp, true);
	iscsi_conn_queue(conn, rsp, bhs, ISCSI_BHS_LEN, NULL);
}
