/*
 * Logout (RFC 7143 11.14, 11.15).  Closing the session or this connection
 * waits for the connection's active commands to end (their responses go out
 * first), then sends the Logout Response and closes the connection, which
 * ends the session (one connection per session).  Commands still waiting
 * for Data-Out would wait forever (the initiator stops sending once it asked
 * to log out), so they are aborted.  Connection recovery is not supported at
 * ErrorRecoveryLevel 0.
 */
#include <string.h>

#include "iscsi_internal.h"

static void send_logout_response(struct iscsi_conn *conn, const uint8_t *req, enum iscsi_logout_response response)
{
	uint8_t bhs[ISCSI_BHS_LEN];

	iscsi_bhs_init(bhs, ISCSI_OP_LOGOUT_RSP, ISCSI_FLAG_FINAL, 0);
	bhs[ISCSI_LOGOUT_RESPONSE] = (uint8_t)response;
	memcpy(bhs + ISCSI_BHS_ITT, req + ISCSI_BHS_ITT, 4);
	iscsi_conn_fill_sn(conn, bhs, true);
	/* Time2Wait/Time2Retain are ignored at ERL < 2 when the response is 0; we send 0 for both. */
	iscsi_conn_queue(conn, bhs, NULL, 0, NULL);
}

static void logout_abort_done(void *arg, enum scsi_tmf_response response)
{
	(void)arg;
	(void)response;
}

void iscsi_logout_handle(struct iscsi_conn *conn, const struct iscsi_pdu *pdu)
{
	const uint8_t *bhs = pdu->bhs;
	uint8_t reason = bhs[1] & ISCSI_LOGOUT_REASON_MASK;
	struct iscsi_task *t;

	switch (reason) {
	case ISCSI_LOGOUT_CLOSE_SESSION:
		break;
	case ISCSI_LOGOUT_CLOSE_CONNECTION:
		if (get_be16(bhs + ISCSI_LOGOUT_CID) != conn->cid) {
			send_logout_response(conn, bhs, ISCSI_LOGOUT_RSP_CID_NOT_FOUND);
			return;
		}
		break;
	case ISCSI_LOGOUT_REMOVE_CONNECTION_FOR_RECOVERY:
		send_logout_response(conn, bhs, ISCSI_LOGOUT_RSP_RECOVERY_NOT_SUPPORTED);
		return;
	default:
		iscsi_reject(conn, bhs, ISCSI_REJECT_INVALID_PDU_FIELD);
		return;
	}
	if (conn->state != ISCSI_CONN_STATE_FULL_FEATURE)
		return;
	memcpy(conn->logout_bhs, bhs, ISCSI_BHS_LEN);
	conn->state = ISCSI_CONN_STATE_LOGOUT_PENDING;
	iscsi_conn_get(conn);
	LIST_FOREACH(t, &conn->tasks, link)
		if (t->state == ISCSI_TASK_STATE_QUEUED)
			t->state = ISCSI_TASK_STATE_DONE; /* skipped when its CmdSN turn comes */
	for (;;) {
		LIST_FOREACH(t, &conn->tasks, link)
			if (t->state == ISCSI_TASK_STATE_WAIT_DATA_OUT && t->core_holds && !t->cmd.aborted)
				break;
		if (!t || !conn->session || !conn->session->nexus)
			break;
		/* aborting a command that waits for Data-Out ends it at once (aborted() runs) */
		scsi_tmf(conn->session->nexus, t->cmd.lun, SCSI_TMF_ABORT_TASK, &t->cmd, logout_abort_done, NULL);
	}
	iscsi_conn_check_idle(conn);
	iscsi_conn_put(conn);
}

void iscsi_logout_respond(struct iscsi_conn *conn)
{
	send_logout_response(conn, conn->logout_bhs, ISCSI_LOGOUT_RSP_CLOSED);
	iscsi_conn_close_after_flush(conn);
}
