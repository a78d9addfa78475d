/*
 * Task Management Function Request/Response (RFC 7143 11.5, 11.6), mapped to
 * the SCSI core's scsi_tmf().  The response goes out once every task the
 * function terminates has ended (the core calls back then); terminated tasks
 * get no response of their own.  TARGET COLD RESET also drops every
 * connection to the target after its response (RFC 7143 11.5.1).
 */
#include <stdlib.h>
#include <string.h>

#include "iscsi_internal.h"

struct iscsi_tmf_ctx {
	struct iscsi_conn *conn;
	uint32_t itt;
	uint8_t function;
	struct iscsi_target *target;
};

static void send_tmf_response(struct iscsi_conn *conn, uint32_t itt, enum iscsi_tmf_response response)
{
	uint8_t bhs[ISCSI_BHS_LEN];

	iscsi_bhs_init(bhs, ISCSI_OP_TASK_MGMT_RSP, ISCSI_FLAG_FINAL, 0);
	bhs[ISCSI_TMF_RESPONSE] = (uint8_t)response;
	put_be32(bhs + ISCSI_BHS_ITT, itt);
	iscsi_conn_fill_sn(conn, bhs, true);
	iscsi_conn_queue(conn, bhs, NULL, 0, NULL);
}

static enum iscsi_tmf_response map_response(enum scsi_tmf_response r)
{
	switch (r) {
	case SCSI_TMF_FUNCTION_COMPLETE:
	case SCSI_TMF_FUNCTION_SUCCEEDED:
		return ISCSI_TMF_RSP_FUNCTION_COMPLETE;
	case SCSI_TMF_INCORRECT_LOGICAL_UNIT_NUMBER:
		return ISCSI_TMF_RSP_LUN_DOES_NOT_EXIST;
	case SCSI_TMF_FUNCTION_REJECTED:
	case SCSI_TMF_SERVICE_DELIVERY_FAILURE:
	case SCSI_TMF_NO_RESPONSE: /* not sent (tmf_done) */
		break;
	}
	return ISCSI_TMF_RSP_REJECTED;
}

/* TARGET COLD RESET: a power-on event; every session to the target's device ends. */
static void drop_target_sessions(struct iscsi_server *srv, struct iscsi_target *target, struct iscsi_conn *except)
{
	bool again = true;

	while (again) {
		again = false;
		for (struct iscsi_session *s = srv->sessions; s; s = s->next) {
			if (s->target && s->target->device == target->device && s->conn != except) {
				iscsi_session_end(s, "TARGET COLD RESET");
				again = true;
				break;
			}
		}
	}
}

static void tmf_done(void *arg, enum scsi_tmf_response response)
{
	struct iscsi_tmf_ctx *ctx = arg;
	struct iscsi_conn *conn = ctx->conn;

	if (conn->state != ISCSI_CONN_STATE_CLOSED && response != SCSI_TMF_NO_RESPONSE) {
		send_tmf_response(conn, ctx->itt, map_response(response));
		if (ctx->function == ISCSI_TMF_TARGET_COLD_RESET) {
			drop_target_sessions(conn->srv, ctx->target, conn);
			iscsi_conn_close_after_flush(conn);
		}
	}
	iscsi_conn_put(conn);
	free(ctx);
}

/* Tasks not yet handed to the core (waiting for their CmdSN) end here. */
static void abort_queued(struct iscsi_conn *conn, bool all_luns, uint64_t lun)
{
	struct iscsi_task *t;

	LIST_FOREACH(t, &conn->tasks, link) {
		if (t->state == ISCSI_TASK_STATE_QUEUED && (all_luns || t->cmd.lun == lun))
			t->state = ISCSI_TASK_STATE_DONE; /* skipped when its turn comes */
	}
}

void iscsi_tmf_handle(struct iscsi_conn *conn, const struct iscsi_pdu *pdu)
{
	const uint8_t *bhs = pdu->bhs;
	struct iscsi_session *s = conn->session;
	uint8_t function = bhs[1] & ISCSI_TMF_FUNCTION_MASK;
	uint32_t itt = get_be32(bhs + ISCSI_BHS_ITT);
	uint64_t lun = get_be64(bhs + ISCSI_BHS_LUN);
	struct scsi_cmd *referenced = NULL;
	enum scsi_tmf_function fn;
	struct iscsi_tmf_ctx *ctx;

	switch (function) {
	case ISCSI_TMF_ABORT_TASK: {
		uint32_t ref_itt = get_be32(bhs + ISCSI_TMF_REF_TASK_TAG);
		uint32_t ref_cmd_sn = get_be32(bhs + ISCSI_TMF_REF_CMD_SN);
		uint32_t cmd_sn = get_be32(bhs + ISCSI_BHS_CMD_SN);
		struct iscsi_task *task = iscsi_task_find(conn, ref_itt);

		if (task && task->state == ISCSI_TASK_STATE_QUEUED) {
			task->state = ISCSI_TASK_STATE_DONE;
			send_tmf_response(conn, itt, ISCSI_TMF_RSP_FUNCTION_COMPLETE);
			return;
		}
		if (!task || !task->core_holds) {
			/*
			 * RFC 7143 11.5.1: an unknown task whose RefCmdSN is in the
			 * window and below the TMF's CmdSN counts as received:
			 * "Function complete"; otherwise "Task does not exist".
			 */
			bool in_window = iscsi_sn_le(s->exp_cmd_sn, ref_cmd_sn) &&
					 iscsi_sn_le(ref_cmd_sn, iscsi_session_max_cmd_sn(s)) &&
					 iscsi_sn_lt(ref_cmd_sn, cmd_sn);
			send_tmf_response(conn, itt, !task && in_window ? ISCSI_TMF_RSP_FUNCTION_COMPLETE
									: ISCSI_TMF_RSP_TASK_DOES_NOT_EXIST);
			return;
		}
		referenced = &task->cmd;
		lun = task->cmd.lun;
		fn = SCSI_TMF_ABORT_TASK;
		break;
	}
	case ISCSI_TMF_ABORT_TASK_SET:
		abort_queued(conn, false, lun);
		fn = SCSI_TMF_ABORT_TASK_SET;
		break;
	case ISCSI_TMF_CLEAR_TASK_SET:
		abort_queued(conn, false, lun);
		fn = SCSI_TMF_CLEAR_TASK_SET;
		break;
	case ISCSI_TMF_LOGICAL_UNIT_RESET:
		abort_queued(conn, false, lun);
		fn = SCSI_TMF_LOGICAL_UNIT_RESET;
		break;
	case ISCSI_TMF_TARGET_WARM_RESET:
		abort_queued(conn, true, 0);
		fn = SCSI_TMF_TARGET_RESET;
		break;
	case ISCSI_TMF_TARGET_COLD_RESET:
		abort_queued(conn, true, 0);
		fn = SCSI_TMF_TARGET_COLD_RESET;
		break;
	case ISCSI_TMF_TASK_REASSIGN:
		/* RFC 7143 11.5.1: task reassignment needs ErrorRecoveryLevel 2. */
		send_tmf_response(conn, itt, ISCSI_TMF_RSP_REASSIGNMENT_NOT_SUPPORTED);
		return;
	case ISCSI_TMF_CLEAR_ACA:
	default:
		send_tmf_response(conn, itt, ISCSI_TMF_RSP_NOT_SUPPORTED);
		return;
	}

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		send_tmf_response(conn, itt, ISCSI_TMF_RSP_REJECTED);
		return;
	}
	ctx->conn = conn;
	iscsi_conn_get(conn);
	ctx->itt = itt;
	ctx->function = function;
	ctx->target = s->target;
	scsi_tmf(s->nexus, lun, fn, referenced, tmf_done, ctx);
}
