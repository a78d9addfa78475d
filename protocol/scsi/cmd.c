/*
 * Command life cycle: submit -> gates -> parse -> Data-Out -> task set ->
 * execute -> complete.  Parsing happens before any Data-Out is asked for, so
 * a bad CDB never costs the transport an R2T (style principle 3).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scsi_internal.h"
#include "task_set.h"
#include "zbc.h"

static void cmd_execute(struct scsi_cmd *cmd);

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void scsi_cmd_init(struct scsi_cmd *cmd, const struct scsi_transport_ops *transport,
		   struct scsi_nexus *nexus)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->transport = transport;
	cmd->nexus = nexus;
	cmd->state = SCSI_CMD_STATE_NEW;
}

enum scsi_result scsi_cmd_fail(struct scsi_cmd *cmd, struct scsi_sense_info s)
{
	cmd->status = SCSI_STATUS_CHECK_CONDITION;
	cmd->sense_info = s;
	return SCSI_FAILED;
}

enum scsi_result scsi_cmd_set_status(struct scsi_cmd *cmd, enum scsi_status status)
{
	cmd->status = (uint8_t)status;
	return status == SCSI_STATUS_CONDITION_MET || status == SCSI_STATUS_GOOD ? SCSI_OK : SCSI_FAILED;
}

uint8_t *scsi_cmd_alloc_data_in(struct scsi_cmd *cmd, size_t len)
{
	free(cmd->data_in);
	cmd->data_in = calloc(1, len ? len : 1);
	cmd->data_in_len = cmd->data_in ? (uint32_t)len : 0;
	cmd->data_in_cap = cmd->data_in_len;
	return cmd->data_in;
}

void scsi_cmd_limit_data_in(struct scsi_cmd *cmd, uint32_t allocation_length)
{
	if (cmd->data_in_len > allocation_length)
		cmd->data_in_len = allocation_length;
}

struct scsi_sense_info scsi_sense_from_errno(int err, bool writing)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case ENOSPC:
	case EDQUOT:
		return sense_make(SENSE_KEY_DATA_PROTECT, ASC_SPACE_ALLOCATION_FAILED_WRITE_PROTECT);
	case EROFS:
	case EPERM:
	case EACCES:
		return sense_make(SENSE_KEY_DATA_PROTECT, ASC_WRITE_PROTECTED);
	case ENOMEM:
		return sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES);
	case EIO:
	default:
		return writing ? sense_make(SENSE_KEY_MEDIUM_ERROR, ASC_WRITE_ERROR)
			       : sense_make(SENSE_KEY_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
	}
}

/* ---- worker I/O ---- */

static void io_job_work(struct scsi_io_job *job)
{
	struct scsi_cmd *cmd = (struct scsi_cmd *)((char *)job - offsetof(struct scsi_cmd, io_job));
	cmd->io_work(cmd);
}

static void io_job_done(struct scsi_io_job *job)
{
	struct scsi_cmd *cmd = (struct scsi_cmd *)((char *)job - offsetof(struct scsi_cmd, io_job));
	enum scsi_result (*after)(struct scsi_cmd *) = cmd->io_after;

	cmd->io_after = NULL;
	if (!cmd->aborted && after && cmd->status == SCSI_STATUS_GOOD) {
		if (after(cmd) == SCSI_PENDING)
			return;
	}
	scsi_cmd_complete(cmd);
}

enum scsi_result scsi_cmd_run_io(struct scsi_cmd *cmd, void (*work)(struct scsi_cmd *cmd),
				 enum scsi_result (*after)(struct scsi_cmd *cmd))
{
	struct scsi_executor *ex = cmd->lu->dev->executor;

	cmd->io_work = work;
	cmd->io_after = after;
	cmd->io_job.work = io_job_work;
	cmd->io_job.done = io_job_done;
	cmd->io_job.next = NULL;
	ex->submit(ex, &cmd->io_job);
	return SCSI_PENDING;
}

static void inline_submit(struct scsi_executor *ex, struct scsi_io_job *job)
{
	(void)ex;
	job->work(job);
	job->done(job);
}

struct scsi_executor scsi_executor_inline = { .submit = inline_submit };

/* ---- completion ---- */

static void compute_residual(struct scsi_cmd *cmd)
{
	uint32_t moved;

	cmd->residual_kind = SCSI_RESIDUAL_NONE;
	cmd->residual = 0;
	if (cmd->dir == SCSI_DIR_FROM_DEVICE || (cmd->data_in_len && cmd->dir != SCSI_DIR_TO_DEVICE)) {
		moved = cmd->data_in_len;
	} else if (cmd->op && (cmd->op->flags & OP_DATA_OUT)) {
		moved = cmd->data_length;
	} else {
		moved = cmd->data_in_len;
	}
	if (moved > cmd->expected_length) {
		cmd->residual_kind = SCSI_RESIDUAL_OVERFLOW;
		cmd->residual = moved - cmd->expected_length;
		if (cmd->data_in_len > cmd->expected_length)
			cmd->data_in_len = cmd->expected_length;
	} else if (moved < cmd->expected_length) {
		cmd->residual_kind = SCSI_RESIDUAL_UNDERFLOW;
		cmd->residual = cmd->expected_length - moved;
	}
}

void scsi_cmd_complete(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	struct scsi_tmf_wait *tmf;

	/* A zoned write ends here whatever happened to it (the engine rolls back a failed one). */
	if (lu && lu->zbc)
		zbc_cmd_complete(cmd);
	if (lu)
		scsi_task_set_remove(lu, cmd);
	cmd->state = SCSI_CMD_STATE_DONE;
	tmf = cmd->tmf_wait;
	if (cmd->aborted) {
		cmd->transport->aborted(cmd);
	} else {
		if (cmd->status == SCSI_STATUS_CHECK_CONDITION) {
			uint32_t max = cmd->transport->max_sense_len;
			if (max > SCSI_SENSE_BUFFER_MAX)
				max = SCSI_SENSE_BUFFER_MAX;
			cmd->sense_len = (uint32_t)scsi_sense_encode(&cmd->sense_info,
								     lu && lu->mode_current.d_sense,
								     cmd->sense, max);
			cmd->data_in_len = 0;
		} else if (cmd->status != SCSI_STATUS_GOOD && cmd->status != SCSI_STATUS_CONDITION_MET) {
			cmd->data_in_len = 0;
		}
		compute_residual(cmd);
		cmd->transport->complete(cmd);
	}
	if (tmf)
		scsi_tmf_wait_put(tmf);
	if (lu)
		scsi_task_set_run(lu);
}

void scsi_cmd_release(struct scsi_cmd *cmd)
{
	free(cmd->data_in);
	cmd->data_in = NULL;
	free(cmd->prot_in);
	cmd->prot_in = NULL;
	if (cmd->handler_state && cmd->handler_state_free)
		cmd->handler_state_free(cmd->handler_state);
	cmd->handler_state = NULL;
	if (cmd->nexus)
		scsi_nexus_put(cmd->nexus);
	cmd->nexus = NULL;
}

/* Completes a command that never entered the task set. */
static void finish_early(struct scsi_cmd *cmd, enum scsi_result r)
{
	(void)r;
	scsi_cmd_complete(cmd);
}

/* ---- gates ---- */

/*
 * SPC-4 4.2.5.1 / scsi_debug strict mode: a bit set where the CDB USAGE DATA
 * has 0 is a reserved (or unsupported) field: INVALID FIELD IN CDB, with the
 * field pointer at the byte and the highest offending bit.
 */
static bool check_reserved_bits(struct scsi_cmd *cmd)
{
	const struct scsi_op *op = cmd->op;

	for (unsigned i = 1; i < op->cdb_len; i++) {
		uint8_t allowed = op->usage[i];
		uint8_t bad;

		if (op->sa_location == SCSI_SA_BYTE1 && i == 1)
			allowed = (uint8_t)((allowed & 0xe0) | 0x1f);
		if (op->sa_location == SCSI_SA_BYTES8_9 && (i == 7 || i == 8 || i == 9))
			allowed = 0xff;
		bad = cmd->cdb[i] & (uint8_t)~allowed;
		if (bad) {
			int bit = 7;
			while (!(bad & (1u << bit)))
				bit--;
			scsi_cmd_fail(cmd, sense_invalid_field_in_cdb((uint16_t)i, bit));
			return false;
		}
	}
	return true;
}

static bool gate_not_ready(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	const struct scsi_op *op = cmd->op;

	if (lu->progress.active && !(op->flags & OP_IN_PROGRESS_OK)) {
		scsi_cmd_fail(cmd, sense_not_ready_in_progress(lu->progress.asc_ascq, lu->progress.fraction));
		return false;
	}
	if (lu->sanitize_failed && (op->flags & OP_MEDIUM_ACCESS)) {
		scsi_cmd_fail(cmd, sense_make(SENSE_KEY_MEDIUM_ERROR, ASC_SANITIZE_COMMAND_FAILED));
		return false;
	}
	if (lu->stopped && (op->flags & OP_MEDIUM_ACCESS)) {
		scsi_cmd_fail(cmd, sense_make(SENSE_KEY_NOT_READY,
					      ASC_LOGICAL_UNIT_NOT_READY_INITIALIZING_COMMAND_REQUIRED));
		return false;
	}
	return true;
}

void scsi_cmd_submit(struct scsi_cmd *cmd)
{
	struct scsi_sense_info sense;
	uint32_t lun;
	enum scsi_result r;

	cmd->start_ns = now_ns();
	cmd->status = SCSI_STATUS_GOOD;
	scsi_nexus_get(cmd->nexus);
	if (scsi_lun_decode(cmd->lun, &lun))
		cmd->lu = scsi_device_find_lu(cmd->nexus->dev, cmd->lun);

	/* SAM-5 5.14: a pending unit attention ends every command but INQUIRY, REPORT LUNS, REQUEST SENSE. */
	cmd->op = scsi_op_lookup(cmd->lu, cmd->cdb, &sense);
	if (cmd->lu && !(cmd->op && (cmd->op->flags & OP_SKIP_UA)) &&
	    scsi_ua_take(cmd->nexus, cmd->lu->lun, &sense)) {
		scsi_cmd_fail(cmd, sense);
		finish_early(cmd, SCSI_FAILED);
		return;
	}
	if (!cmd->op) {
		if (!cmd->lu && scsi_op_find(cmd->cdb[0], 0) == NULL)
			sense = sense_make(SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_UNIT_NOT_SUPPORTED);
		else if (!cmd->lu)
			sense = sense_make(SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_UNIT_NOT_SUPPORTED);
		scsi_cmd_fail(cmd, sense);
		finish_early(cmd, SCSI_FAILED);
		return;
	}
	if (cmd->cdb_len < cmd->op->cdb_len) {
		scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
		finish_early(cmd, SCSI_FAILED);
		return;
	}
	if (!check_reserved_bits(cmd)) {
		finish_early(cmd, SCSI_FAILED);
		return;
	}
	if (cmd->lu) {
		if (!gate_not_ready(cmd)) {
			finish_early(cmd, SCSI_FAILED);
			return;
		}
		if (spc_reservation_conflict(cmd)) {
			scsi_cmd_set_status(cmd, SCSI_STATUS_RESERVATION_CONFLICT);
			finish_early(cmd, SCSI_FAILED);
			return;
		}
		if ((cmd->op->flags & OP_WRITES_MEDIUM) &&
		    (cmd->lu->params.write_protect || cmd->lu->mode_current.swp)) {
			scsi_cmd_fail(cmd, sense_make(SENSE_KEY_DATA_PROTECT, ASC_WRITE_PROTECTED));
			finish_early(cmd, SCSI_FAILED);
			return;
		}
	}
	if (cmd->op->parse) {
		r = cmd->op->parse(cmd);
		if (r != SCSI_OK) {
			finish_early(cmd, r);
			return;
		}
	}
	if (cmd->lu)
		scsi_task_set_add(cmd->lu, cmd);
	if ((cmd->op->flags & OP_DATA_OUT) && cmd->data_length > 0 &&
	    !(cmd->data_out && cmd->data_out_len >= scsi_cmd_data_out_want(cmd))) {
		cmd->state = SCSI_CMD_STATE_WAIT_DATA_OUT;
		cmd->transport->need_data_out(cmd);
		return;
	}
	scsi_cmd_data_out_ready(cmd);
}

/*
 * The transport's expected data transfer length is shorter than the CDB's
 * transfer (an overflow).  FCP-4 9.4.2 b) (which iSCSI targets follow, and
 * libiscsi's residual tests accept): transfer nothing to the medium and
 * report INVALID FIELD IN COMMAND INFORMATION UNIT; the residual says how
 * much was missing.  Returns true (command completed) if so.
 */
static bool fail_short_data_out(struct scsi_cmd *cmd)
{
	if (cmd->data_out_len >= scsi_cmd_data_out_want(cmd))
		return false;
	scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_COMMAND_INFORMATION_UNIT));
	scsi_cmd_complete(cmd);
	return true;
}

/* The next piece of a streamed Data-Out has arrived: the handler's continuation runs. */
static void data_out_next_ready(struct scsi_cmd *cmd)
{
	enum scsi_result (*next)(struct scsi_cmd *cmd) = cmd->data_out_next;
	enum scsi_result r;

	cmd->data_out_next = NULL;
	cmd->state = SCSI_CMD_STATE_RUNNING;
	if (cmd->aborted) {
		scsi_cmd_complete(cmd);
		return;
	}
	if (fail_short_data_out(cmd))
		return;
	r = next(cmd);
	if (r != SCSI_PENDING)
		scsi_cmd_complete(cmd);
}

enum scsi_result scsi_cmd_next_data_out(struct scsi_cmd *cmd, enum scsi_result (*next)(struct scsi_cmd *cmd))
{
	cmd->data_out_offset += cmd->data_out_len;
	cmd->data_out = NULL;
	cmd->data_out_len = 0;
	cmd->data_out_next = next;
	cmd->state = SCSI_CMD_STATE_WAIT_DATA_OUT;
	cmd->transport->need_data_out(cmd);
	return SCSI_PENDING;
}

void scsi_cmd_data_out_ready(struct scsi_cmd *cmd)
{
	if (cmd->data_out_next) {
		data_out_next_ready(cmd);
		return;
	}
	if (cmd->aborted) {
		scsi_cmd_complete(cmd);
		return;
	}
	if ((cmd->op->flags & OP_DATA_OUT) && cmd->data_length > 0 && !(cmd->op->flags & OP_SHORT_DATA_OUT_OK) &&
	    fail_short_data_out(cmd))
		return;
	if (!cmd->lu) {
		cmd_execute(cmd);
		return;
	}
	cmd->state = SCSI_CMD_STATE_WAIT_TASK_SET;
	scsi_task_set_run(cmd->lu);
}

/* Called by the task set when cmd may start. */
void scsi_cmd_start(struct scsi_cmd *cmd)
{
	cmd_execute(cmd);
}

static void cmd_execute(struct scsi_cmd *cmd)
{
	enum scsi_result r;

	cmd->state = SCSI_CMD_STATE_RUNNING;
	r = cmd->op->exec(cmd);
	if (r != SCSI_PENDING)
		scsi_cmd_complete(cmd);
}
