/*
 * Backpressure: what the devices of one daemon, one I_T nexus and one LU
 * may hold (docs/architecture.md, "Backpressure").
 *
 * Commands: an LU's task set takes params.queue_depth commands; the daemon
 * limits.max_commands.  Past either, SAM-5 5.3: TASK SET FULL when the
 * I_T nexus has at least one command in that task set (the initiator retries
 * when one of them ends), BUSY when it has none (SAM-5: "should allow at
 * least one queued command for each ... initiator": an LU's own queue takes
 * it anyway; only the daemon's limit answers BUSY).
 *
 * Buffer room: each command needs room for its Data-Out (one window of it
 * when streamed) and its Data-In, held from before its Data-Out is asked for
 * (or before it starts) until the transport releases it after sending the
 * response.  A command that does not fit the daemon's or its nexus's limit
 * waits in its task set; one alone always fits.
 */
#include <stdlib.h>

#include "sbc/sbc.h"
#include "sched/task_set.h"

struct scsi_resources *scsi_resources_create(const struct scsi_limits *limits)
{
	struct scsi_resources *res = calloc(1, sizeof(*res));

	if (res && limits)
		res->limits = *limits;
	return res;
}

void scsi_resources_destroy(struct scsi_resources *res)
{
	free(res);
}

void scsi_resources_usage(const struct scsi_resources *res, uint32_t *commands, uint64_t *buffer_bytes)
{
	*commands = res ? res->commands : 0;
	*buffer_bytes = res ? res->buffer_bytes : 0;
}

void scsi_resources_add_device(struct scsi_resources *res, struct scsi_device *dev)
{
	dev->res = res;
	if (!res)
		return;
	dev->res_next = res->devices;
	res->devices = dev;
}

void scsi_resources_remove_device(struct scsi_resources *res, struct scsi_device *dev)
{
	if (!res)
		return;
	for (struct scsi_device **pp = &res->devices; *pp; pp = &(*pp)->res_next) {
		if (*pp == dev) {
			*pp = dev->res_next;
			break;
		}
	}
}

/*
 * The buffer room a command needs: its Data-Out (a window of it when
 * streamed) and its Data-In: the blocks a READ reads, or what the transport
 * expects of the other commands (their data is at most that long once
 * limited by it, and small); a copy's work buffer beside them
 * (OP_PIECE_BUFFER: EXTENDED COPY, WRITE USING TOKEN).
 */
static uint64_t buffer_need(const struct scsi_cmd *cmd)
{
	uint64_t out = cmd->data_out_window && cmd->data_out_window < cmd->data_length ? cmd->data_out_window
											: cmd->data_length;
	uint64_t in = 0;

	if (cmd->op->flags & OP_PIECE_BUFFER)
		out += SCSI_COPY_PIECE;

	if ((cmd->op->flags & OP_DATA_IN) && (cmd->op->flags & OP_LBA_READ))
		in = (uint64_t)cmd->nblocks * sbc_wire_block_len(cmd);
	else if (cmd->op->flags & OP_DATA_IN)
		in = cmd->expected_length;
	return out + in;
}

enum scsi_status scsi_resources_admit(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	struct scsi_resources *res = lu->dev->res;
	struct scsi_itl *itl = scsi_itl_get(cmd->nexus, lu->lun);
	bool nexus_has_one = itl && itl->commands > 0;

	if (!itl)
		return SCSI_STATUS_BUSY; /* no memory for the I_T_L nexus's state */
	if (lu->params.queue_depth && lu->ts.count >= lu->params.queue_depth && nexus_has_one)
		return SCSI_STATUS_TASK_SET_FULL;
	if (res && res->limits.max_commands && res->commands >= res->limits.max_commands)
		return nexus_has_one ? SCSI_STATUS_TASK_SET_FULL : SCSI_STATUS_BUSY;
	cmd->admitted = true;
	cmd->buffer_need = buffer_need(cmd);
	lu->ts.count++;
	itl->commands++;
	if (res)
		res->commands++;
	return SCSI_STATUS_GOOD;
}

void scsi_resources_leave_task_set(struct scsi_cmd *cmd)
{
	struct scsi_itl *itl;

	if (!cmd->admitted || !cmd->lu)
		return;
	cmd->lu->ts.count--;
	itl = scsi_itl_find(cmd->nexus, cmd->lu->lun);
	if (itl && itl->commands)
		itl->commands--;
}

static bool fits(uint64_t held, uint64_t need, uint64_t limit)
{
	return !limit || held == 0 || need <= limit - (held < limit ? held : limit);
}

bool scsi_resources_reserve(struct scsi_cmd *cmd)
{
	struct scsi_resources *res = cmd->lu->dev->res;
	uint64_t need = cmd->buffer_need > cmd->buffer_held ? cmd->buffer_need - cmd->buffer_held : 0;

	if (need == 0)
		return true;
	if (res && (!fits(res->buffer_bytes, need, res->limits.max_buffer_bytes) ||
		    !fits(cmd->nexus->buffer_bytes, need, res->limits.max_nexus_buffer_bytes)))
		return false;
	if (res)
		res->buffer_bytes += need;
	cmd->nexus->buffer_bytes += need;
	cmd->buffer_held += need;
	return true;
}

/* Every LU of res whose commands wait outside it (buffer room, another LU's locks) runs its task set (inside a section). */
static void wake_waiting(struct scsi_resources *res)
{
	for (struct scsi_device *dev = res->devices; dev && res->lus_waiting; dev = dev->res_next)
		SCSI_DEVICE_FOREACH_LU(dev, lu)
			if (lu->ts.waits_outside)
				scsi_task_set_run(lu);
}

void scsi_resources_enter(struct scsi_resources *res)
{
	if (res)
		res->sections++;
}

void scsi_resources_leave(struct scsi_resources *res)
{
	if (!res)
		return;
	/* The outermost section hands out the room; the passes it runs open sections of their own. */
	while (res->sections == 1 && res->freed) {
		res->freed = false;
		wake_waiting(res);
	}
	res->sections--;
}

void scsi_resources_release(struct scsi_cmd *cmd)
{
	struct scsi_resources *res = cmd->lu ? cmd->lu->dev->res : NULL;

	if (!cmd->admitted)
		return;
	cmd->admitted = false;
	cmd->nexus->buffer_bytes -= cmd->buffer_held;
	if (!res)
		return;
	res->commands--;
	res->buffer_bytes -= cmd->buffer_held;
	if (!cmd->buffer_held)
		return;
	cmd->buffer_held = 0;
	/*
	 * Room came free: the LUs whose commands wait for it look again, never
	 * from inside another pass.  With none waiting nothing is walked: a
	 * completion does not visit every device (a cost per command that grows
	 * with the daemon's LUs, and in a TCG guest a TLB refill per page touched).
	 */
	scsi_resources_freed(res);
}

void scsi_resources_freed(struct scsi_resources *res)
{
	if (!res || !res->lus_waiting)
		return;
	res->freed = true;
	scsi_resources_enter(res);
	scsi_resources_leave(res);
}
