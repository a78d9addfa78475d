/*
 * Command life cycle: submit (lookup, unit attention, reserved bits, gates,
 * parse, admission) -> task set (buffer room, Data-Out, start) -> the gates
 * again -> exec -> complete -> release.  Parsing happens before any Data-Out
 * is asked for, so a bad CDB never costs the transport an R2T (style
 * principle 3); the gates run again when the command starts, because the LU
 * may have begun a format or sanitize while it waited (docs/architecture.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "media/media_queue.h"
#include "sched/dispatch.h"
#include "sched/duration_limits.h"
#include "sched/task_set.h"
#include "sched/timer.h"
#include "zbc/zbc.h"

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

enum scsi_result scsi_cmd_fail_errno(struct scsi_cmd *cmd, int err, bool writing)
{
	cmd->backing_errno = err < 0 ? -err : err;
	return scsi_cmd_fail(cmd, scsi_sense_from_errno(err, writing));
}

/* At completion, on the loop thread: a command the backing store failed is counted and reported. */
static void count_backing_error(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	struct scsi_device *dev = lu->dev;

	switch (cmd->backing_errno) {
	case ENOSPC:
	case EDQUOT:
		lu->backing_errors.no_space++;
		break;
	case EIO:
		lu->backing_errors.io++;
		break;
	default:
		lu->backing_errors.other++;
		break;
	}
	if (dev->backing_error_observer)
		dev->backing_error_observer(dev->backing_error_arg, dev->name, lu->lun, cmd->backing_errno,
					    &lu->backing_errors);
}

/* The LU's counters (scsi_lu_describe), for a command about to be answered. */
static void count_completion(struct scsi_lu *lu, const struct scsi_cmd *cmd)
{
	struct scsi_lu_counters *c = &lu->counters;
	uint64_t us = (cmd->done_ns - cmd->start_ns) / 1000;
	unsigned bucket = 0;

	c->commands++;
	switch (cmd->status) {
	case SCSI_STATUS_GOOD:
	case SCSI_STATUS_CONDITION_MET:
		c->good++;
		break;
	case SCSI_STATUS_CHECK_CONDITION:
		c->check_condition++;
		c->sense_keys[cmd->sense_info.key & 0xf]++;
		break;
	case SCSI_STATUS_BUSY:
		c->busy++;
		break;
	case SCSI_STATUS_TASK_SET_FULL:
		c->task_set_full++;
		break;
	case SCSI_STATUS_RESERVATION_CONFLICT:
		c->reservation_conflict++;
		break;
	default:
		c->other_status++;
		break;
	}
	c->read_bytes += cmd->data_in_len;
	if (cmd->op && (cmd->op->flags & OP_DATA_OUT))
		c->write_bytes += cmd->data_out_offset + cmd->data_out_len;
	for (uint64_t limit = 100; bucket < 5 && us > limit; limit *= 10)
		bucket++;
	c->latency[bucket]++;
}

enum scsi_result scsi_cmd_set_status(struct scsi_cmd *cmd, enum scsi_status status)
{
	cmd->status = (uint8_t)status;
	return status == SCSI_STATUS_CONDITION_MET || status == SCSI_STATUS_GOOD ? SCSI_OK : SCSI_FAILED;
}

/* ---- Data-In and Data-Out buffers ---- */

static size_t sgl_bytes(const struct scsi_sgl *sgl)
{
	size_t n = 0;

	for (unsigned i = 0; i < sgl->iovcnt; i++)
		n += sgl->iov[i].iov_len;
	return n;
}

int scsi_cmd_data_in_buffers(struct scsi_cmd *cmd, uint32_t len, struct scsi_sgl *sgl)
{
	free(cmd->data_in_core);
	cmd->data_in_core = NULL;
	cmd->data_in = NULL;
	cmd->data_in_len = 0;
	cmd->data_in_sgl = (struct scsi_sgl){ 0 };
	if (cmd->transport->alloc_data_in && cmd->transport->alloc_data_in(cmd, len, &cmd->data_in_sgl) == 0 &&
	    sgl_bytes(&cmd->data_in_sgl) >= len) {
		if (cmd->data_in_sgl.iovcnt == 1)
			cmd->data_in = cmd->data_in_sgl.iov[0].iov_base;
		cmd->data_in_len = len;
		*sgl = cmd->data_in_sgl;
		return 0;
	}
	cmd->data_in_sgl = (struct scsi_sgl){ 0 };
	cmd->data_in_core = malloc(len ? len : 1);
	if (!cmd->data_in_core)
		return -ENOMEM;
	cmd->data_in = cmd->data_in_core;
	cmd->data_in_len = len;
	cmd->data_in_core_iov = (struct iovec){ .iov_base = cmd->data_in_core, .iov_len = len };
	*sgl = (struct scsi_sgl){ .iov = &cmd->data_in_core_iov, .iovcnt = 1 };
	return 0;
}

uint8_t *scsi_cmd_alloc_data_in(struct scsi_cmd *cmd, size_t len)
{
	struct scsi_sgl sgl;

	if (len > UINT32_MAX || scsi_cmd_data_in_buffers(cmd, (uint32_t)len, &sgl) != 0)
		return NULL;
	if (!cmd->data_in) {
		/* The transport's buffer is in pieces: the handler writes here, completion copies it there. */
		cmd->data_in_core = malloc(len ? len : 1);
		if (!cmd->data_in_core)
			return NULL;
		cmd->data_in = cmd->data_in_core;
	}
	memset(cmd->data_in, 0, len);
	return cmd->data_in;
}

void scsi_cmd_limit_data_in(struct scsi_cmd *cmd, uint32_t allocation_length)
{
	if (cmd->data_in_len > allocation_length)
		cmd->data_in_len = allocation_length;
}

/* The handler wrote Data-In into the core's buffer though the transport gave its own: copy it there. */
static void copy_data_in_to_transport(struct scsi_cmd *cmd)
{
	size_t off = 0;

	if (!cmd->data_in_core || !cmd->data_in_sgl.iovcnt)
		return;
	for (unsigned i = 0; i < cmd->data_in_sgl.iovcnt && off < cmd->data_in_len; i++) {
		size_t n = cmd->data_in_sgl.iov[i].iov_len;

		if (n > cmd->data_in_len - off)
			n = cmd->data_in_len - off;
		memcpy(cmd->data_in_sgl.iov[i].iov_base, cmd->data_in_core + off, n);
		off += n;
	}
}

void scsi_cmd_set_data_out(struct scsi_cmd *cmd, struct iovec *iov, unsigned iovcnt, uint32_t len)
{
	cmd->data_out_sgl = (struct scsi_sgl){ .iov = iov, .iovcnt = iovcnt };
	cmd->data_out_len = len;
	cmd->data_out = NULL;
}

uint8_t *scsi_cmd_data_out_contig(struct scsi_cmd *cmd)
{
	const struct scsi_sgl *sgl = &cmd->data_out_sgl;
	size_t off = 0;

	if (cmd->data_out || cmd->data_out_len == 0)
		return cmd->data_out;
	if (sgl->iovcnt == 1) {
		cmd->data_out = sgl->iov[0].iov_base;
		return cmd->data_out;
	}
	free(cmd->data_out_bounce);
	cmd->data_out_bounce = malloc(cmd->data_out_len);
	if (!cmd->data_out_bounce)
		return NULL;
	for (unsigned i = 0; i < sgl->iovcnt && off < cmd->data_out_len; i++) {
		size_t n = sgl->iov[i].iov_len < cmd->data_out_len - off ? sgl->iov[i].iov_len : cmd->data_out_len - off;

		memcpy(cmd->data_out_bounce + off, sgl->iov[i].iov_base, n);
		off += n;
	}
	cmd->data_out = cmd->data_out_bounce;
	return cmd->data_out;
}

size_t scsi_cdb_length(const uint8_t *cdb, size_t max)
{
	size_t len;

	switch (cdb[0] >> 5) {
	case 0:
		len = 6;
		break;
	case 1:
	case 2:
		len = 10;
		break;
	case 4:
		len = 16;
		break;
	case 5:
		len = 12;
		break;
	default:
		len = cdb[0] == 0x7f && max > 7 ? 8 + (size_t)cdb[7] : 16;
		break;
	}
	if (len > SCSI_MAX_CDB_LEN)
		len = SCSI_MAX_CDB_LEN;
	return len < max ? len : max;
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
	case ESHUTDOWN: /* the backend was cut off from its medium for good (be_rbd.c: fenced) */
		return sense_make(SENSE_KEY_NOT_READY, ASC_LOGICAL_UNIT_NOT_READY_MANUAL_INTERVENTION_REQUIRED);
	case ETIMEDOUT: /* the backend's medium did not answer in time (be_rbd.c: op timeouts); hosts retry this */
		return sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_LOGICAL_UNIT_COMMUNICATION_TIME_OUT);
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

static bool io_job_work_nowait(struct scsi_io_job *job)
{
	struct scsi_cmd *cmd = (struct scsi_cmd *)((char *)job - offsetof(struct scsi_cmd, io_job));
	return cmd->io_work_nowait(cmd);
}

static bool io_job_work_async(struct scsi_io_job *job)
{
	struct scsi_cmd *cmd = (struct scsi_cmd *)((char *)job - offsetof(struct scsi_cmd, io_job));
	return cmd->io_work_async(cmd);
}

void scsi_io_job_complete(struct scsi_io_job *job)
{
	job->executor->complete(job->executor, job);
}

static void io_job_done(struct scsi_io_job *job)
{
	struct scsi_cmd *cmd = (struct scsi_cmd *)((char *)job - offsetof(struct scsi_cmd, io_job));
	enum scsi_result (*after)(struct scsi_cmd *) = cmd->io_after;

	scsi_dispatch_done(cmd->lu->dev->executor, cmd->io_async);
	cmd->io_async = false;
	cmd->io_after = NULL;
	/* A command a duration limit ended goes no further (sched/duration_limits.c). */
	if (!cmd->aborted && !cmd->limits.ended && after && cmd->status == SCSI_STATUS_GOOD) {
		if (after(cmd) == SCSI_PENDING)
			return;
	}
	scsi_cmd_complete(cmd);
}

enum scsi_result scsi_cmd_run_io_async(struct scsi_cmd *cmd, void (*work)(struct scsi_cmd *cmd),
				       bool (*nowait)(struct scsi_cmd *cmd), bool (*async)(struct scsi_cmd *cmd),
				       enum scsi_result (*after)(struct scsi_cmd *cmd))
{
	cmd->io_work = work;
	cmd->io_work_nowait = nowait;
	cmd->io_work_async = async;
	cmd->io_after = after;
	cmd->io_job.work = io_job_work;
	cmd->io_job.work_nowait = nowait ? io_job_work_nowait : NULL;
	cmd->io_job.work_async = async ? io_job_work_async : NULL;
	cmd->io_job.done = io_job_done;
	cmd->io_job.next = NULL;
	scsi_dispatch_submit(cmd);
	return SCSI_PENDING;
}

enum scsi_result scsi_cmd_run_io_nowait(struct scsi_cmd *cmd, void (*work)(struct scsi_cmd *cmd),
					bool (*nowait)(struct scsi_cmd *cmd),
					enum scsi_result (*after)(struct scsi_cmd *cmd))
{
	return scsi_cmd_run_io_async(cmd, work, nowait, NULL, after);
}

enum scsi_result scsi_cmd_run_io(struct scsi_cmd *cmd, void (*work)(struct scsi_cmd *cmd),
				 enum scsi_result (*after)(struct scsi_cmd *cmd))
{
	return scsi_cmd_run_io_nowait(cmd, work, NULL, after);
}

static void inline_submit(struct scsi_executor *ex, struct scsi_io_job *job)
{
	(void)ex;
	if (!job->work_nowait || !job->work_nowait(job))
		job->work(job);
	job->done(job);
}

struct scsi_executor scsi_executor_inline = { .submit = inline_submit };

/* ---- completion ---- */

/*
 * RFC 7143 11.4.5.2, SAM-5 5.4.3: the residual of the transfer the command
 * made (SPDTL) against the application client's buffer (EDTL).  A transport
 * that announced one direction has no buffer in the other: a Data-In the
 * initiator did not ask for is not sent, all of it an overflow; a Data-Out it
 * did not announce was empty (the command was processed on nothing, FCP-4
 * 9.4.2 a), all of it an overflow.
 */
static void compute_residual(struct scsi_cmd *cmd)
{
	uint32_t moved;

	cmd->residual_kind = SCSI_RESIDUAL_NONE;
	cmd->residual = 0;
	if (cmd->dir == SCSI_DIR_TO_DEVICE && cmd->data_in_len) {
		cmd->residual_kind = SCSI_RESIDUAL_OVERFLOW;
		cmd->residual = cmd->data_in_len;
		cmd->data_in_len = 0;
		return;
	}
	if (cmd->dir == SCSI_DIR_FROM_DEVICE && cmd->op && (cmd->op->flags & OP_DATA_OUT) && cmd->data_length) {
		cmd->residual_kind = SCSI_RESIDUAL_OVERFLOW;
		cmd->residual = cmd->data_length;
		return;
	}
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

/* Takes the command out of its task set: locks, counts, the list. */
static void leave_task_set(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;

	if (!lu)
		return;
	/* A duration limit that ended it sets its status first: the zone engine rolls back an aborted write. */
	scsi_limits_done(cmd);
	/* A zoned write ends here whatever happened to it (the engine rolls back a failed one), on every LU it wrote. */
	if (lu->zbc)
		zbc_cmd_complete(cmd);
	for (unsigned i = 0; cmd->locks_elsewhere && i < cmd->locks_elsewhere->n; i++)
		if (cmd->locks_elsewhere->lock[i].held) /* else that LU may be gone */
			zbc_write_end_on(cmd->locks_elsewhere->lu[i], cmd, cmd->status == SCSI_STATUS_GOOD);
	scsi_media_forget(cmd);
	if (!cmd->aborted && cmd->admitted)
		scsi_stats_record(cmd, cmd->done_ns);
	scsi_lba_lock_drop(lu, cmd);
	if (cmd->started)
		lu->ts.running--;
	scsi_resources_leave_task_set(cmd);
	scsi_task_set_remove(lu, cmd);
}

void scsi_cmd_complete(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	struct scsi_resources *res = cmd->nexus->dev->res;
	struct scsi_tmf_wait *tmf;

	/* Done before the medium is: the response waits for the end of its media time (media_queue.c). */
	if (lu && !cmd->aborted && !cmd->limits.ended && scsi_media_hold(cmd))
		return;
	/* The transport may release the command from its callback: the room it frees waits for the end. */
	scsi_resources_enter(res);
	if (lu) {
		cmd->done_ns = scsi_device_now(lu->dev);
		scsi_fault_cmd_done(cmd);
	}
	leave_task_set(cmd);
	cmd->state = SCSI_CMD_STATE_DONE;
	tmf = cmd->tmf_wait;
	if (cmd->aborted) {
		if (lu) {
			lu->counters.commands++;
			lu->counters.aborted++;
		}
		cmd->transport->aborted(cmd);
	} else {
		/* Its handler keeps what it must of its end (an EXTENDED COPY's results: copy/extended_copy.c). */
		if (cmd->handler_end)
			cmd->handler_end(cmd);
		/* The log pages count it; an informational exception may ride on it (spc_ie.c, MRIE 3-5). */
		if (lu)
			spc_ie_cmd_done(cmd);
		/* SPC-6: a duration limit's complete-unavailable policy is GOOD with sense data. */
		if (cmd->status == SCSI_STATUS_CHECK_CONDITION || scsi_limits_good_with_sense(cmd)) {
			uint32_t max = cmd->transport->max_sense_len;
			if (max > SCSI_SENSE_BUFFER_MAX)
				max = SCSI_SENSE_BUFFER_MAX;
			cmd->sense_len = (uint32_t)scsi_sense_encode(&cmd->sense_info,
								     lu && lu->mode_current.d_sense,
								     cmd->sense, max);
			/* RECOVERED ERROR and NO SENSE report a command that completed: its Data-In goes out (SPC-4 4.5.6). */
			if (cmd->sense_info.key != SENSE_KEY_RECOVERED_ERROR && cmd->sense_info.key != SENSE_KEY_NO_SENSE)
				cmd->data_in_len = 0;
		} else if (cmd->status != SCSI_STATUS_GOOD && cmd->status != SCSI_STATUS_CONDITION_MET) {
			cmd->data_in_len = 0;
		}
		if (cmd->backing_errno && lu && cmd->status == SCSI_STATUS_CHECK_CONDITION)
			count_backing_error(cmd);
		if (cmd->faults & (SCSI_FAULT_CORRUPT_READ | SCSI_FAULT_SHORT_READ))
			scsi_fault_data_in(cmd);
		compute_residual(cmd);
		/* usb-bridge profile (Linux US_FL_IGNORE_RESIDUE): a short Data-In is not reported. */
		if (lu && (lu->params.quirks & SCSI_QUIRK_NO_RESIDUAL) && cmd->residual_kind == SCSI_RESIDUAL_UNDERFLOW &&
		    cmd->data_in_len > 0) {
			cmd->residual_kind = SCSI_RESIDUAL_NONE;
			cmd->residual = 0;
		}
		copy_data_in_to_transport(cmd);
		if (lu)
			count_completion(lu, cmd);
		cmd->transport->complete(cmd);
	}
	if (tmf)
		scsi_tmf_wait_put(tmf);
	if (lu)
		scsi_task_set_run(lu);
	scsi_resources_leave(res);
}

void scsi_cmd_release(struct scsi_cmd *cmd)
{
	scsi_resources_release(cmd);
	free(cmd->data_in_core);
	cmd->data_in_core = NULL;
	cmd->data_in = NULL;
	free(cmd->data_out_bounce);
	cmd->data_out_bounce = NULL;
	cmd->data_out = NULL;
	if (cmd->handler_state && cmd->handler_state_free)
		cmd->handler_state_free(cmd->handler_state);
	cmd->handler_state = NULL;
	free(cmd->locks_elsewhere);
	cmd->locks_elsewhere = NULL;
	if (cmd->nexus)
		scsi_nexus_put(cmd->nexus);
	cmd->nexus = NULL;
}

void scsi_cmd_unquiesce(struct scsi_cmd *cmd)
{
	if (cmd->quiesce_released)
		return;
	cmd->quiesce_released = true;
	scsi_lba_lock_drop(cmd->lu, cmd);
	scsi_task_set_run(cmd->lu);
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
		uint8_t allowed, bad;

		if (!cmd->cdb[i])
			continue; /* no bit set, none reserved */
		allowed = scsi_op_usage(op, cmd->lu, i);
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

/*
 * The state of the LU that can end a command, checked at submit and again
 * when it starts: the asymmetric access state of its target port group
 * (SPC-4 5.15.2, spc_alua.c), a format or sanitize in progress (SBC-4 4.11, 5.4: NOT
 * READY with the progress indication), the sanitize failure mode (SBC-4
 * 4.11.4), a stopped LU (SBC-4 5.25), reservation conflicts (SPC-4 5.13),
 * write protection (SBC-4 4.13).  Returns false with the status stored.
 */
static bool gates(struct scsi_cmd *cmd, bool writes)
{
	struct scsi_lu *lu = cmd->lu;
	const struct scsi_op *op = cmd->op;

	if (!spc_alua_gate(cmd))
		return false;
	if (lu->progress.active && !(op->flags & OP_IN_PROGRESS_OK)) {
		scsi_cmd_fail(cmd, sense_not_ready_in_progress(lu->progress.asc_ascq, lu->progress.fraction));
		return false;
	}
	if (lu->sanitize_failed && (op->flags & OP_MEDIUM_ACCESS)) {
		scsi_cmd_fail(cmd, sense_make(SENSE_KEY_MEDIUM_ERROR, ASC_SANITIZE_COMMAND_FAILED));
		return false;
	}
	if (lu->readiness != SCSI_LU_READY && (op->flags & OP_MEDIUM_ACCESS)) {
		scsi_cmd_fail(cmd, scsi_lu_not_ready_sense(lu));
		return false;
	}
	if (lu->stopped && (op->flags & OP_MEDIUM_ACCESS)) {
		scsi_cmd_fail(cmd, sense_make(SENSE_KEY_NOT_READY,
					      ASC_LOGICAL_UNIT_NOT_READY_INITIALIZING_COMMAND_REQUIRED));
		return false;
	}
	if (spc_reservation_conflict(cmd)) {
		scsi_cmd_set_status(cmd, SCSI_STATUS_RESERVATION_CONFLICT);
		return false;
	}
	if (writes && (lu->params.write_protect || lu->mode_current.swp)) {
		scsi_cmd_fail(cmd, sense_make(SENSE_KEY_DATA_PROTECT, ASC_WRITE_PROTECTED));
		return false;
	}
	return true;
}

static bool gates_pass(struct scsi_cmd *cmd)
{
	return gates(cmd, cmd->op->flags & OP_WRITES_MEDIUM);
}

bool scsi_cmd_gates_pass_on(struct scsi_cmd *cmd, struct scsi_lu *lu, bool writes)
{
	struct scsi_lu *own = cmd->lu;
	bool pass;

	/* The gates read the command's LU (ALUA state, reservations): lu's, for the time of the checks. */
	cmd->lu = lu;
	pass = gates(cmd, writes);
	cmd->lu = own;
	return pass;
}

/* Runs exec and completes the command unless it is pending. */
static void execute(struct scsi_cmd *cmd)
{
	enum scsi_result r;

	cmd->state = SCSI_CMD_STATE_RUNNING;
	r = cmd->op->exec(cmd);
	if (r != SCSI_PENDING)
		scsi_cmd_complete(cmd);
}

void scsi_cmd_execute(struct scsi_cmd *cmd)
{
	/* It is being processed from now on (SPC-6: the end of its inactive time). */
	if (!scsi_limits_activate(cmd)) {
		scsi_cmd_complete(cmd);
		return;
	}
	execute(cmd);
}

/* Past its gates: to the medium's queue if it takes media time, else run now. */
static void begin(struct scsi_cmd *cmd)
{
	if (scsi_media_wants(cmd))
		scsi_media_queue_add(cmd); /* the task set's pass hands it to the medium */
	else
		scsi_cmd_execute(cmd);
}

bool scsi_cmd_waiting(const struct scsi_cmd *cmd)
{
	/*
	 * Not the workers' queue: a command there has run its handler (a zoned
	 * write moved its write pointer, a state file waits to be written),
	 * so it ends when its job has run, as one on a worker does.
	 */
	return !cmd->started || cmd->state == SCSI_CMD_STATE_WAIT_DATA_OUT || cmd->fault_held ||
	       (cmd->lu && cmd->service_queue == &cmd->lu->media.waiting) || cmd->media_hold;
}

void scsi_cmd_fail_transport(struct scsi_cmd *cmd, struct scsi_sense_info s)
{
	/* Once the Data-Out is complete a transport error no longer concerns the command. */
	if (cmd->state != SCSI_CMD_STATE_NEW && cmd->state != SCSI_CMD_STATE_WAIT_BUFFER &&
	    cmd->state != SCSI_CMD_STATE_WAIT_DATA_OUT)
		return;
	cmd->transport_failed = true;
	cmd->transport_sense = s;
	if (cmd->state == SCSI_CMD_STATE_WAIT_DATA_OUT) {
		scsi_cmd_fail(cmd, s);
		scsi_cmd_complete(cmd);
	}
}

/*
 * The Data-Out as the handlers read it: contiguous unless the row takes the
 * pieces (OP_DATA_OUT_SGL).  False with the sense stored (no memory to
 * gather it).
 */
static bool prepare_data_out(struct scsi_cmd *cmd)
{
	if ((cmd->op->flags & OP_DATA_OUT_SGL) || cmd->data_out_len == 0 || scsi_cmd_data_out_contig(cmd))
		return true;
	scsi_cmd_fail(cmd, scsi_sense_from_errno(ENOMEM, true));
	return false;
}

void scsi_cmd_submit(struct scsi_cmd *cmd)
{
	struct scsi_sense_info sense;
	enum scsi_status admit;
	uint32_t lun = UINT32_MAX;

	cmd->start_ns = scsi_device_now(cmd->nexus->dev);
	cmd->status = SCSI_STATUS_GOOD;
	scsi_nexus_get(cmd->nexus);
	if (scsi_lun_decode(cmd->lun, &lun))
		cmd->lu = (lun >> 16) ? scsi_conglomerate_reach(cmd->nexus, lun) : scsi_device_lu(cmd->nexus->dev, lun);
	else
		lun = UINT32_MAX;
	if (cmd->transport_failed) {
		scsi_cmd_fail(cmd, cmd->transport_sense);
		scsi_cmd_complete(cmd);
		return;
	}
	if (cmd->lu && cmd->lu->backend_pending && cmd->lu->backend->ops->ready(cmd->lu->backend)) {
		/*
		 * Its backend opened in the background: ready, with 06/28/00 for
		 * every I_T nexus, this one first; or the group that waited in
		 * standby becomes active/optimized, with 06/2A/06.
		 */
		cmd->lu->backend_pending = false;
		spc_pr_reload(cmd->lu);
		spc_mode_reload(cmd->lu);
		spc_log_reload(cmd->lu);
		zbc_reload(cmd->lu);
		sbc_write_atomic_recheck(cmd->lu);
		if (cmd->lu->readiness == SCSI_LU_BECOMING_READY)
			scsi_lu_set_readiness(cmd->lu, SCSI_LU_READY);
		spc_alua_backend_ready(cmd->lu);
	} else if (cmd->lu && !cmd->lu->backend_pending && cmd->lu->backend->ops->ready &&
		   !cmd->lu->backend->ops->ready(cmd->lu->backend)) {
		/*
		 * Its backend lost the medium and is opening it again (be_rbd.c:
		 * fenced, rejoin): as at start-up, 02/04/01 until it has it, or
		 * the group's standby (06/2A/06 first); the state kept with the
		 * medium is loaded again then (above).
		 */
		cmd->lu->backend_pending = true;
		if (!spc_alua_backend_lost(cmd->lu))
			scsi_lu_set_readiness(cmd->lu, SCSI_LU_BECOMING_READY);
	}
	/* SAM-5 5.14: a pending unit attention ends every command but INQUIRY, REPORT LUNS, REQUEST SENSE. */
	cmd->op = scsi_op_lookup(cmd->lu, cmd->cdb, &sense);
	if (cmd->lu && !(cmd->op && (cmd->op->flags & OP_SKIP_UA)) &&
	    scsi_ua_take(cmd->nexus, cmd->lu->lun, &sense)) {
		scsi_cmd_fail(cmd, sense);
		scsi_cmd_complete(cmd);
		return;
	}
	if (!cmd->op) {
		/* SPC-4 4.6.3: a command for a LUN without an LU is LOGICAL UNIT NOT SUPPORTED (INQUIRY aside). */
		if (!cmd->lu)
			sense = scsi_no_lu_sense(cmd->nexus, lun);
		scsi_cmd_fail(cmd, sense);
		scsi_cmd_complete(cmd);
		return;
	}
	if (cmd->cdb_len < cmd->op->cdb_len) {
		scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
		scsi_cmd_complete(cmd);
		return;
	}
	if (!check_reserved_bits(cmd) || (cmd->lu && !gates_pass(cmd)) ||
	    (cmd->op->parse && cmd->op->parse(cmd) != SCSI_OK)) {
		scsi_cmd_complete(cmd);
		return;
	}
	if (!cmd->lu) {
		/* A command for a LUN without an LU (OP_NO_LU_OK: INQUIRY, REPORT LUNS, ...) has no task set. */
		execute(cmd);
		return;
	}
	cmd->lu_generation = cmd->lu->generation;
	admit = scsi_resources_admit(cmd);
	if (admit != SCSI_STATUS_GOOD) {
		scsi_cmd_set_status(cmd, admit);
		scsi_cmd_complete(cmd);
		return;
	}
	scsi_limits_arrive(cmd);
	if ((cmd->op->flags & OP_DATA_OUT) && cmd->data_length > 0 &&
	    !(cmd->data_out_sgl.iovcnt && cmd->data_out_len >= scsi_cmd_data_out_want(cmd))) {
		cmd->state = SCSI_CMD_STATE_WAIT_BUFFER;
	} else {
		cmd->state = SCSI_CMD_STATE_WAIT_START;
		if (!prepare_data_out(cmd)) {
			scsi_cmd_complete(cmd);
			return;
		}
	}
	scsi_task_set_add(cmd->lu, cmd);
}

void scsi_cmd_request_data_out(struct scsi_cmd *cmd)
{
	if (cmd->transport_failed) {
		scsi_cmd_fail(cmd, cmd->transport_sense);
		scsi_cmd_complete(cmd);
		return;
	}
	if (cmd->limits.ended) { /* a duration limit passed while it waited for room */
		scsi_cmd_complete(cmd);
		return;
	}
	cmd->state = SCSI_CMD_STATE_WAIT_DATA_OUT;
	cmd->transport->need_data_out(cmd);
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
	if (cmd->aborted || cmd->limits.ended) { /* an abort, or a duration limit, while the piece came */
		scsi_cmd_complete(cmd);
		return;
	}
	if (fail_short_data_out(cmd))
		return;
	if (cmd->transport_failed)
		r = scsi_cmd_fail(cmd, cmd->transport_sense);
	else if (!prepare_data_out(cmd))
		r = SCSI_FAILED;
	else
		r = next(cmd);
	if (r != SCSI_PENDING)
		scsi_cmd_complete(cmd);
}

enum scsi_result scsi_cmd_next_data_out(struct scsi_cmd *cmd, enum scsi_result (*next)(struct scsi_cmd *cmd))
{
	cmd->data_out_offset += cmd->data_out_len;
	scsi_cmd_set_data_out(cmd, NULL, 0, 0);
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
	if (cmd->aborted || cmd->limits.ended) { /* a duration limit passed while its Data-Out came */
		scsi_cmd_complete(cmd);
		return;
	}
	if ((cmd->op->flags & OP_DATA_OUT) && cmd->data_length > 0 && !(cmd->op->flags & OP_SHORT_DATA_OUT_OK) &&
	    fail_short_data_out(cmd))
		return;
	if (!prepare_data_out(cmd)) {
		scsi_cmd_complete(cmd);
		return;
	}
	cmd->state = SCSI_CMD_STATE_WAIT_START;
	scsi_task_set_run(cmd->lu);
}

/*
 * A format changed what parse decided (the protection format) while the
 * command waited: parse it again.  If its Data-Out no longer has the size
 * the new format needs, the Data-Out that came is not the one the command
 * now describes: ILLEGAL REQUEST, COMMAND SEQUENCE ERROR.
 */
static bool reparse(struct scsi_cmd *cmd)
{
	uint32_t data_length = cmd->data_length;

	cmd->lu_generation = cmd->lu->generation;
	if (cmd->op->parse && cmd->op->parse(cmd) != SCSI_OK)
		return false;
	if (cmd->data_length != data_length) {
		scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ILLEGAL_REQUEST, ASC_COMMAND_SEQUENCE_ERROR));
		return false;
	}
	return true;
}

void scsi_cmd_start(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;

	scsi_lba_lock_take(lu, cmd);
	cmd->started = true;
	lu->ts.running++;
	cmd->state = SCSI_CMD_STATE_RUNNING;
	if (cmd->transport_failed) {
		scsi_cmd_fail(cmd, cmd->transport_sense);
		scsi_cmd_complete(cmd);
		return;
	}
	if (cmd->limits.ended) { /* a duration limit passed while its Data-Out came */
		scsi_cmd_complete(cmd);
		return;
	}
	if (!gates_pass(cmd) || (cmd->lu_generation != lu->generation && !reparse(cmd))) {
		scsi_cmd_complete(cmd);
		return;
	}
	switch (scsi_fault_check(cmd)) {
	case SCSI_FAULT_PASS:
		begin(cmd);
		break;
	case SCSI_FAULT_DONE:
		scsi_cmd_complete(cmd);
		break;
	case SCSI_FAULT_HELD:
		break;
	}
}

void scsi_cmd_resume(struct scsi_cmd *cmd)
{
	if (cmd->aborted) {
		scsi_cmd_complete(cmd);
		return;
	}
	if (scsi_media_wants(cmd)) {
		scsi_media_queue_add(cmd);
		scsi_task_set_run(cmd->lu);
	} else {
		scsi_cmd_execute(cmd);
	}
}
