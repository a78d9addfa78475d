/*
 * Data transfer for SCSI commands (RFC 7143 11.7, 11.8, 4.2.4):
 *   - Data-Out assembly: immediate data and unsolicited Data-Out (up to
 *     FirstBurstLength, when InitialR2T=No), then R2Ts of at most
 *     MaxBurstLength with at most MaxOutstandingR2T outstanding, checking
 *     DataSN and buffer offsets (DataPDUInOrder and DataSequenceInOrder are
 *     Yes: we always offer Yes and the OR result can only be Yes);
 *   - Data-In: segments of the initiator's MaxRecvDataSegmentLength, F at
 *     the end of each MaxBurstLength sequence, status collapsed into the last
 *     Data-In (S bit) when there is no sense data, residuals;
 *   - the SCSI Response with the sense data behind a 2-byte SenseLength.
 *
 * At ErrorRecoveryLevel 0 a sequence error in Data-Out (wrong DataSN,
 * offset or length) cannot be recovered by retransmission: the PDU is
 * rejected (protocol error) and, since a Reject must not end a task
 * implicitly (RFC 7143 11.17.1), the task is terminated explicitly with
 * CHECK CONDITION, ABORTED COMMAND (RFC 7143 11.4.7.2), through the SCSI
 * core's completion (scsi_cmd_fail_transport), whose sense encoder honours
 * the LU's D_SENSE.  The connection survives; later Data-Out of the task is
 * absorbed.
 */
#include <stdlib.h>
#include <string.h>

#include "iscsi_internal.h"

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static uint32_t next_ttt(struct iscsi_conn *conn)
{
	uint32_t ttt = conn->next_ttt++;
	if (ttt == ISCSI_RESERVED_TAG)
		ttt = conn->next_ttt++;
	return ttt;
}

static void send_r2ts(struct iscsi_task *task)
{
	struct iscsi_conn *conn = task->conn;
	const struct iscsi_sess_params *sp = &conn->session->params;
	uint32_t max_r2t = min_u32(sp->max_outstanding_r2t, ISCSI_MAX_R2T);

	while (task->r2t_count < max_r2t && task->r2t_next_offset < task->want && !task->data_out_error) {
		struct iscsi_r2t *r2t = &task->r2t[task->r2t_count++];
		uint8_t bhs[ISCSI_BHS_LEN];

		r2t->ttt = next_ttt(conn);
		r2t->r2t_sn = task->r2t_sn++;
		r2t->buffer_offset = task->r2t_next_offset;
		r2t->desired_length = min_u32(sp->max_burst_length, task->want - task->r2t_next_offset);
		r2t->received = 0;
		r2t->next_data_sn = 0;
		task->r2t_next_offset += r2t->desired_length;

		iscsi_bhs_init(bhs, ISCSI_OP_R2T, ISCSI_FLAG_FINAL, 0);
		put_be64(bhs + ISCSI_BHS_LUN, task->cmd.lun);
		put_be32(bhs + ISCSI_BHS_ITT, task->itt);
		put_be32(bhs + ISCSI_BHS_TTT, r2t->ttt);
		iscsi_conn_fill_sn(conn, bhs, false);
		put_be32(bhs + ISCSI_R2T_SN, r2t->r2t_sn);
		put_be32(bhs + ISCSI_R2T_BUFFER_OFFSET, r2t->buffer_offset);
		put_be32(bhs + ISCSI_R2T_DESIRED_LENGTH, r2t->desired_length);
		iscsi_conn_queue(conn, bhs, NULL, 0, NULL);
	}
}

void iscsi_data_check_done(struct iscsi_task *task)
{
	if (task->state != ISCSI_TASK_STATE_WAIT_DATA_OUT || task->data_out_error)
		return;
	if (!task->unsol_done || task->r2t_next_offset < task->want || task->r2t_count)
		return;
	task->data_out_iov = (struct iovec){ .iov_base = task->buf, .iov_len = task->want - task->win_off };
	scsi_cmd_set_data_out(&task->cmd, &task->data_out_iov, 1, task->want - task->win_off);
	task->state = ISCSI_TASK_STATE_SUBMITTED;
	scsi_cmd_data_out_ready(&task->cmd);
}

/*
 * The core asks for the Data-Out bytes from cmd.data_out_offset on (all of
 * them, or one piece of a streamed Data-Out): buf then holds them from its
 * start.  The first burst (unsolicited data) always belongs to the first
 * piece: a streamed piece is never shorter than FirstBurstLength's maximum.
 */
void iscsi_data_need_data_out(struct iscsi_task *task)
{
	uint32_t cap, end;

	/* Collect up to EDTL; nothing if the initiator announced no write (W = 0). */
	task->win_off = task->cmd.data_out_offset;
	end = task->cmd.data_out_offset + scsi_cmd_data_out_want(&task->cmd);
	task->want = task->write ? min_u32(end, task->edtl) : 0;
	if (task->want < task->win_off)
		task->want = task->win_off;
	cap = task->want - task->win_off;
	if (task->win_off == 0 && task->unsol_expected > cap)
		cap = task->unsol_expected;
	if (cap > task->buf_cap) {
		uint8_t *nb = realloc(task->buf, cap);
		if (!nb) {
			/* Out of memory: hand over what there is; the core reports the shortfall. */
			task->want = task->win_off + min_u32(task->want - task->win_off, task->buf_cap);
		} else {
			task->buf = nb;
			task->buf_cap = cap;
		}
	}
	if (task->r2t_next_offset < task->unsol_expected)
		task->r2t_next_offset = task->unsol_expected;
	if (task->r2t_next_offset < task->win_off)
		task->r2t_next_offset = task->win_off;
	send_r2ts(task);
	iscsi_data_check_done(task);
}

static void store(struct iscsi_task *task, uint32_t offset, const uint8_t *data, uint32_t len)
{
	/* An empty Data-Out PDU carries nothing (and its data pointer may be NULL). */
	if (len == 0 || offset < task->win_off)
		return;
	offset -= task->win_off;
	if (offset >= task->buf_cap)
		return;
	if (len > task->buf_cap - offset)
		len = task->buf_cap - offset;
	/* Received in place (iscsi_data_out_dest): the bytes are there already. */
	if (task->buf + offset != data)
		memcpy(task->buf + offset, data, len);
}

/*
 * Where the data segment of the Data-Out PDU whose header is bhs would be
 * stored, when iscsi_data_out_handle will take it whole: the task waits
 * for exactly these bytes (its DataSN, buffer offset and length are the
 * next ones of the first burst or of one of its R2Ts) and its buffer holds
 * them.  The receive path (conn.c) then reads the segment from the socket
 * straight to that place, and the handler, which checks it all again when
 * the PDU is complete, finds it there.  NULL when the PDU will be
 * rejected or absorbed, or lands partly: it is received the usual way.
 * No side effect, so that a PDU taken this way is handled exactly as any
 * other; bytes received here before the handler checks them again can
 * only be this PDU's own, in a range nothing else has filled.
 */
uint8_t *iscsi_data_out_dest(struct iscsi_conn *conn, const uint8_t *bhs, uint32_t len, struct iscsi_task **taskp)
{
	uint32_t ttt = get_be32(bhs + ISCSI_BHS_TTT);
	uint32_t data_sn = get_be32(bhs + ISCSI_DATA_SN);
	uint32_t offset = get_be32(bhs + ISCSI_DATA_BUFFER_OFFSET);
	struct iscsi_task *task = iscsi_task_find(conn, get_be32(bhs + ISCSI_BHS_ITT));

	if (!task || !task->write || task->data_out_error || len == 0)
		return NULL;
	if (ttt == ISCSI_RESERVED_TAG) {
		if (task->unsol_done || data_sn != task->unsol_data_sn || offset != task->unsol_received ||
		    len > task->unsol_expected - task->unsol_received)
			return NULL;
	} else {
		const struct iscsi_r2t *r2t = NULL;

		for (unsigned i = 0; i < task->r2t_count && !r2t; i++)
			if (task->r2t[i].ttt == ttt)
				r2t = &task->r2t[i];
		if (!r2t || data_sn != r2t->next_data_sn || offset != r2t->buffer_offset + r2t->received ||
		    len > r2t->desired_length - r2t->received)
			return NULL;
	}
	if (offset < task->win_off || offset - task->win_off > task->buf_cap ||
	    len > task->buf_cap - (offset - task->win_off))
		return NULL;
	*taskp = task;
	return task->buf + (offset - task->win_off);
}

/* Ends the task's data transfer with an error: see the file comment. */
static void data_out_error(struct iscsi_task *task, const uint8_t *bhs, uint16_t asc_ascq, const char *why)
{
	struct iscsi_conn *conn = task->conn;

	ISCSI_PEER_ERROR(conn->srv, "%s: ITT 0x%08x: %s", conn->peer, task->itt, why);
	iscsi_reject(conn, bhs, ISCSI_REJECT_PROTOCOL_ERROR);
	if (task->data_out_error)
		return;
	task->data_out_error = asc_ascq;
	task->r2t_count = 0;
	/* In the core: it ends the command with this sense if it still waits for Data-Out (else at submit). */
	if (task->core_holds)
		scsi_cmd_fail_transport(&task->cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, asc_ascq));
}

void iscsi_data_out_handle(struct iscsi_conn *conn, const struct iscsi_pdu *pdu)
{
	const uint8_t *bhs = pdu->bhs;
	uint32_t itt = get_be32(bhs + ISCSI_BHS_ITT);
	uint32_t ttt = get_be32(bhs + ISCSI_BHS_TTT);
	uint32_t data_sn = get_be32(bhs + ISCSI_DATA_SN);
	uint32_t offset = get_be32(bhs + ISCSI_DATA_BUFFER_OFFSET);
	uint32_t len = pdu->data_len;
	bool final = bhs[1] & ISCSI_FLAG_FINAL;
	struct iscsi_task *task = iscsi_task_find(conn, itt);

	if (!task) {
		/* Data for a task that ended (aborted, or ignored outside the CmdSN window). */
		ISCSI_PEER_ERROR(conn->srv, "%s: Data-Out for unknown ITT 0x%08x discarded", conn->peer, itt);
		return;
	}
	iscsi_task_get(task);
	if (ttt == ISCSI_RESERVED_TAG) {
		/* Unsolicited Data-Out (RFC 7143 11.7.4: TTT reserved). */
		if (task->unsol_done || !task->write) {
			data_out_error(task, bhs, ISCSI_ASC_UNEXPECTED_UNSOLICITED_DATA, "unexpected unsolicited data");
			goto out;
		}
		if (data_sn != task->unsol_data_sn) {
			task->unsol_data_sn = data_sn + 1;
			data_out_error(task, bhs, ISCSI_ASC_DATA_PHASE_ERROR, "DataSN error in unsolicited Data-Out");
		} else if (offset != task->unsol_received || len > task->unsol_expected - task->unsol_received) {
			data_out_error(task, bhs, ISCSI_ASC_DATA_OFFSET_ERROR, "unsolicited Data-Out outside the first burst");
		} else {
			store(task, offset, pdu->data, len);
			task->unsol_data_sn++;
		}
		task->unsol_received += len;
		if (final) {
			task->unsol_done = true;
			/* RFC 7143 13.14: the first burst is min(FirstBurstLength, EDTL). */
			if (task->unsol_received != task->unsol_expected)
				data_out_error(task, bhs, ISCSI_ASC_INCORRECT_AMOUNT_OF_DATA,
					       "unsolicited data shorter than the first burst");
		}
	} else {
		struct iscsi_r2t *r2t = NULL;
		unsigned i;

		for (i = 0; i < task->r2t_count; i++) {
			if (task->r2t[i].ttt == ttt) {
				r2t = &task->r2t[i];
				break;
			}
		}
		if (!r2t) {
			/* Data for an R2T of a task that already ended is absorbed. */
			if (task->state != ISCSI_TASK_STATE_DONE && !task->data_out_error)
				iscsi_reject(conn, bhs, ISCSI_REJECT_INVALID_PDU_FIELD);
			goto out;
		}
		if (data_sn != r2t->next_data_sn) {
			/* RFC 7143 11.7.5: DataSN counts from 0 within each R2T's sequence. */
			data_out_error(task, bhs, ISCSI_ASC_DATA_PHASE_ERROR, "DataSN error in solicited Data-Out");
			goto out;
		}
		if (offset != r2t->buffer_offset + r2t->received || len > r2t->desired_length - r2t->received) {
			data_out_error(task, bhs, ISCSI_ASC_DATA_OFFSET_ERROR, "solicited Data-Out outside its R2T");
			goto out;
		}
		store(task, offset, pdu->data, len);
		r2t->received += len;
		r2t->next_data_sn++;
		if (final) {
			if (r2t->received != r2t->desired_length) {
				data_out_error(task, bhs, ISCSI_ASC_INCORRECT_AMOUNT_OF_DATA, "R2T sequence ended early");
				goto out;
			}
			memmove(&task->r2t[i], &task->r2t[i + 1], (task->r2t_count - i - 1) * sizeof(task->r2t[0]));
			task->r2t_count--;
			if (task->state == ISCSI_TASK_STATE_WAIT_DATA_OUT)
				send_r2ts(task);
		}
	}
	if (task->state == ISCSI_TASK_STATE_WAIT_DATA_OUT)
		iscsi_data_check_done(task);
	else
		iscsi_task_maybe_retire(task);
out:
	iscsi_task_put(task);
}

/* ---- Data-In and status ---- */

static uint8_t residual_flags(const struct scsi_cmd *cmd)
{
	switch (cmd->residual_kind) {
	case SCSI_RESIDUAL_UNDERFLOW:
		return ISCSI_RSP_FLAG_UNDERFLOW;
	case SCSI_RESIDUAL_OVERFLOW:
		return ISCSI_RSP_FLAG_OVERFLOW;
	case SCSI_RESIDUAL_NONE:
		break;
	}
	return 0;
}

void iscsi_data_send_result(struct iscsi_task *task)
{
	struct iscsi_conn *conn = task->conn;
	struct scsi_cmd *cmd = &task->cmd;
	const struct iscsi_sess_params *sp = &conn->session->params;
	uint32_t data_in_len = task->read ? cmd->data_in_len : 0;
	bool collapse = data_in_len > 0 && cmd->sense_len == 0 &&
			(cmd->status == SCSI_STATUS_GOOD || cmd->status == SCSI_STATUS_CONDITION_MET);
	uint32_t max_seg = conn->params.max_xmit_data_segment_length;
	uint32_t burst_left = sp->max_burst_length;
	uint32_t offset = 0;
	uint8_t bhs[ISCSI_BHS_LEN];

	if (data_in_len > cmd->expected_length)
		data_in_len = cmd->expected_length;
	ISCSI_DEBUG(conn->srv, "%s: -> ITT 0x%08x status 0x%02x sense %02x/%02x/%02x data-in %u residual %d/%u",
		    conn->peer, task->itt, cmd->status, cmd->sense_len > 13 ? cmd->sense[2] & 0xf : 0,
		    cmd->sense_len > 13 ? cmd->sense[12] : 0, cmd->sense_len > 13 ? cmd->sense[13] : 0, data_in_len,
		    (int)cmd->residual_kind, cmd->residual);
	while (offset < data_in_len) {
		uint32_t seg = min_u32(min_u32(data_in_len - offset, max_seg), burst_left);
		bool last = offset + seg == data_in_len;
		uint8_t flags = 0;

		burst_left -= seg;
		/* RFC 7143 11.7.1: F ends each Data-In sequence (at most MaxBurstLength bytes). */
		if (last || burst_left == 0)
			flags |= ISCSI_FLAG_FINAL;
		if (last && collapse)
			flags |= ISCSI_DATA_FLAG_STATUS | residual_flags(cmd);
		iscsi_bhs_init(bhs, ISCSI_OP_DATA_IN, flags, seg);
		put_be64(bhs + ISCSI_BHS_LUN, cmd->lun);
		put_be32(bhs + ISCSI_BHS_ITT, task->itt);
		put_be32(bhs + ISCSI_BHS_TTT, ISCSI_RESERVED_TAG);
		if (flags & ISCSI_DATA_FLAG_STATUS) {
			bhs[ISCSI_DATA_STATUS] = cmd->status;
			iscsi_conn_fill_sn(conn, bhs, true);
			put_be32(bhs + ISCSI_DATA_RESIDUAL, cmd->residual_kind == SCSI_RESIDUAL_NONE ? 0 : cmd->residual);
		} else {
			/* StatSN is reserved without the S bit. */
			iscsi_conn_fill_sn(conn, bhs, false);
			put_be32(bhs + ISCSI_BHS_STAT_SN, 0);
		}
		put_be32(bhs + ISCSI_DATA_SN, task->data_in_pdus++);
		put_be32(bhs + ISCSI_DATA_BUFFER_OFFSET, offset);
		iscsi_conn_queue(conn, bhs, cmd->data_in + offset, seg, task);
		offset += seg;
		if (burst_left == 0)
			burst_left = sp->max_burst_length;
	}
	if (collapse)
		return;

	/* RFC 7143 11.4: SCSI Response; sense data follows a 2-byte SenseLength (11.4.7.2). */
	uint8_t seg[2 + SCSI_SENSE_BUFFER_MAX];
	uint32_t seg_len = 0;

	if (cmd->sense_len) {
		put_be16(seg, (uint16_t)cmd->sense_len);
		memcpy(seg + 2, cmd->sense, cmd->sense_len);
		seg_len = 2 + cmd->sense_len;
	}
	iscsi_bhs_init(bhs, ISCSI_OP_SCSI_RSP, ISCSI_FLAG_FINAL | residual_flags(cmd), seg_len);
	bhs[ISCSI_RSP_RESPONSE] = ISCSI_RESPONSE_COMMAND_COMPLETED;
	bhs[ISCSI_RSP_STATUS] = cmd->status;
	put_be32(bhs + ISCSI_BHS_ITT, task->itt);
	iscsi_conn_fill_sn(conn, bhs, true);
	/* RFC 7143 11.4.8: ExpDataSN counts the R2T and Data-In PDUs sent for the command. */
	put_be32(bhs + ISCSI_RSP_EXP_DATA_SN, task->data_in_pdus + task->r2t_sn);
	put_be32(bhs + ISCSI_RSP_RESIDUAL, cmd->residual_kind == SCSI_RESIDUAL_NONE ? 0 : cmd->residual);
	iscsi_conn_queue(conn, bhs, seg, seg_len, NULL);
}
