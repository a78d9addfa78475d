/*
 * Routing of received PDUs by connection state and opcode (RFC 7143 6.1,
 * 11.2.1.2), and the CmdSN ordering of non-SCSI PDUs (3.2.2.1): immediate
 * ones at once, the others when ExpCmdSN reaches them.
 */
#include "iscsi_internal.h"

static void dispatch_full_feature(struct iscsi_conn *conn, const struct iscsi_pdu *pdu);

void iscsi_conn_dispatch_ordered(struct iscsi_conn *conn, const struct iscsi_pdu *pdu)
{
	switch (iscsi_bhs_opcode(pdu->bhs)) {
	case ISCSI_OP_NOP_OUT:
		iscsi_nop_out_handle(conn, pdu);
		break;
	case ISCSI_OP_TASK_MGMT_REQ:
		iscsi_tmf_handle(conn, pdu);
		break;
	case ISCSI_OP_TEXT_REQ:
		iscsi_text_handle(conn, pdu);
		break;
	case ISCSI_OP_LOGOUT_REQ:
		iscsi_logout_handle(conn, pdu);
		break;
	default:
		break;
	}
}

/* Non-SCSI PDUs that carry a CmdSN: immediate ones at once, others in CmdSN order. */
static void dispatch_numbered(struct iscsi_conn *conn, const struct iscsi_pdu *pdu)
{
	struct iscsi_session *s = conn->session;
	int r;

	if (iscsi_bhs_immediate(pdu->bhs)) {
		iscsi_conn_dispatch_ordered(conn, pdu);
		return;
	}
	r = iscsi_session_order(s, pdu, NULL);
	if (r == 1) {
		iscsi_conn_dispatch_ordered(conn, pdu);
		if (conn->session)
			iscsi_session_run_ordered(conn->session);
	}
}

static void dispatch_full_feature(struct iscsi_conn *conn, const struct iscsi_pdu *pdu)
{
	uint8_t opcode = iscsi_bhs_opcode(pdu->bhs);

	/* RFC 7143 4.2.2.3: every initiator PDU but Data-Out/SNACK acknowledges status with ExpStatSN. */
	if (opcode != ISCSI_OP_DATA_OUT)
		conn->exp_stat_sn = get_be32(pdu->bhs + ISCSI_BHS_EXP_STAT_SN);

	if (conn->state == ISCSI_CONN_STATE_LOGOUT_PENDING && opcode != ISCSI_OP_DATA_OUT) {
		/* RFC 7143 11.14: no new commands after a Logout Request. */
		iscsi_reject(conn, pdu->bhs, ISCSI_REJECT_PROTOCOL_ERROR);
		return;
	}
	/* RFC 7143 4.3: a discovery session carries only Text, NOP and Logout. */
	if (conn->session->type == ISCSI_SESSION_DISCOVERY &&
	    (opcode == ISCSI_OP_SCSI_CMD || opcode == ISCSI_OP_DATA_OUT || opcode == ISCSI_OP_TASK_MGMT_REQ)) {
		iscsi_reject(conn, pdu->bhs, ISCSI_REJECT_PROTOCOL_ERROR);
		return;
	}
	switch ((enum iscsi_opcode)opcode) {
	case ISCSI_OP_SCSI_CMD:
		iscsi_scsi_cmd_handle(conn, pdu);
		return;
	case ISCSI_OP_DATA_OUT:
		iscsi_data_out_handle(conn, pdu);
		return;
	case ISCSI_OP_TASK_MGMT_REQ:
		dispatch_numbered(conn, pdu);
		return;
	case ISCSI_OP_NOP_OUT:
		/* A NOP-Out answering our ping (ITT reserved) carries no CmdSN to order. */
		if (get_be32(pdu->bhs + ISCSI_BHS_ITT) == ISCSI_RESERVED_TAG) {
			iscsi_nop_out_handle(conn, pdu);
			return;
		}
		dispatch_numbered(conn, pdu);
		return;
	case ISCSI_OP_TEXT_REQ:
	case ISCSI_OP_LOGOUT_REQ:
		dispatch_numbered(conn, pdu);
		return;
	case ISCSI_OP_LOGIN_REQ:
		/* RFC 7143 6.1: a Login Request in full feature phase is a protocol error. */
		iscsi_reject(conn, pdu->bhs, ISCSI_REJECT_PROTOCOL_ERROR);
		return;
	case ISCSI_OP_SNACK_REQ:
		/* ErrorRecoveryLevel 0: SNACK is not supported (RFC 7143 11.16). */
		iscsi_reject(conn, pdu->bhs, ISCSI_REJECT_PROTOCOL_ERROR);
		return;
	case ISCSI_OP_NOP_IN:
	case ISCSI_OP_SCSI_RSP:
	case ISCSI_OP_TASK_MGMT_RSP:
	case ISCSI_OP_LOGIN_RSP:
	case ISCSI_OP_TEXT_RSP:
	case ISCSI_OP_DATA_IN:
	case ISCSI_OP_LOGOUT_RSP:
	case ISCSI_OP_R2T:
	case ISCSI_OP_ASYNC_MSG:
	case ISCSI_OP_REJECT:
		break;
	}
	iscsi_reject(conn, pdu->bhs, ISCSI_REJECT_COMMAND_NOT_SUPPORTED);
}

void iscsi_conn_handle_pdu(struct iscsi_conn *conn, const struct iscsi_pdu *pdu)
{
	ISCSI_DEBUG(conn->srv, "%s: <- %s ITT 0x%08x len %u ahs %u (byte1 0x%02x, LUN 0x%016llx, CDB[0] 0x%02x)",
		    conn->peer, iscsi_opcode_name(iscsi_bhs_opcode(pdu->bhs)), get_be32(pdu->bhs + ISCSI_BHS_ITT),
		    pdu->data_len, pdu->ahs_len, pdu->bhs[1], (unsigned long long)get_be64(pdu->bhs + ISCSI_BHS_LUN),
		    pdu->bhs[32]);
	switch (conn->state) {
	case ISCSI_CONN_STATE_LOGIN:
		if (iscsi_bhs_opcode(pdu->bhs) != ISCSI_OP_LOGIN_REQ) {
			/* RFC 7143 6.1: only Login Requests until the login completes. */
			iscsi_conn_drop(conn, "non-login PDU during login");
			return;
		}
		iscsi_login_handle(conn, pdu);
		return;
	case ISCSI_CONN_STATE_FULL_FEATURE:
	case ISCSI_CONN_STATE_LOGOUT_PENDING:
		dispatch_full_feature(conn, pdu);
		return;
	case ISCSI_CONN_STATE_CLOSING:
	case ISCSI_CONN_STATE_CLOSED:
		return;
	}
}

