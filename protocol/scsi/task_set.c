/*
 * Task sets and task management (SAM-5 8 and 7).
 *
 * Every command of an LU sits in its task set from the end of parsing until
 * it completes.  A command in state WAIT_TASK_SET starts when its attribute
 * allows (SAM-5 8.6): HEAD OF QUEUE at once; ORDERED when every older
 * command has ended; SIMPLE when no older ORDERED command is still present.
 * Commands whose CDB implies HEAD OF QUEUE (INQUIRY, REPORT LUNS) are treated
 * as such whatever the transport said.
 */
#include <stdlib.h>

#include "task_set.h"

void scsi_task_set_add(struct scsi_lu *lu, struct scsi_cmd *cmd)
{
	cmd->ts_next = NULL;
	cmd->ts_prev = lu->ts_tail;
	if (lu->ts_tail)
		lu->ts_tail->ts_next = cmd;
	else
		lu->ts_head = cmd;
	lu->ts_tail = cmd;
}

static bool in_task_set(struct scsi_lu *lu, struct scsi_cmd *cmd)
{
	return cmd->ts_prev || lu->ts_head == cmd;
}

void scsi_task_set_remove(struct scsi_lu *lu, struct scsi_cmd *cmd)
{
	if (!in_task_set(lu, cmd))
		return;
	if (cmd->ts_prev)
		cmd->ts_prev->ts_next = cmd->ts_next;
	else
		lu->ts_head = cmd->ts_next;
	if (cmd->ts_next)
		cmd->ts_next->ts_prev = cmd->ts_prev;
	else
		lu->ts_tail = cmd->ts_prev;
	cmd->ts_prev = cmd->ts_next = NULL;
}

static enum scsi_task_attr effective_attr(const struct scsi_cmd *cmd)
{
	if (cmd->op && (cmd->op->flags & OP_HEAD_OF_QUEUE))
		return SCSI_TASK_HEAD_OF_QUEUE;
	return cmd->task_attr;
}

static bool may_start(const struct scsi_cmd *cmd)
{
	enum scsi_task_attr attr = effective_attr(cmd);

	if (attr == SCSI_TASK_HEAD_OF_QUEUE)
		return true;
	for (const struct scsi_cmd *older = cmd->ts_prev; older; older = older->ts_prev) {
		if (effective_attr(older) == SCSI_TASK_HEAD_OF_QUEUE)
			continue;
		if (attr == SCSI_TASK_ORDERED)
			return false;
		if (effective_attr(older) == SCSI_TASK_ORDERED)
			return false;
	}
	return true;
}

void scsi_task_set_run(struct scsi_lu *lu)
{
	struct scsi_cmd *cmd, *next;
	bool again = true;

	/* Starting a command may complete it at once and change the list: rescan. */
	while (again) {
		again = false;
		for (cmd = lu->ts_head; cmd; cmd = next) {
			next = cmd->ts_next;
			if (cmd->state != SCSI_CMD_STATE_WAIT_TASK_SET || cmd->aborted || !may_start(cmd))
				continue;
			scsi_cmd_start(cmd);
			again = true;
			break;
		}
	}
}

void scsi_tmf_wait_put(struct scsi_tmf_wait *w)
{
	if (--w->pending == 0) {
		w->done(w->arg, w->response);
		free(w);
	}
}

/*
 * Aborts every command of lu that match(cmd, arg) selects.  First all of them
 * are marked (so none can start meanwhile), then those not running on a
 * worker end at once through their transport's aborted(); a running one ends
 * when its I/O returns.  A command collecting Data-Out ends at once too: the
 * transport drops its R2T state in aborted().  Completing a command may
 * complete others (the task set runs), so the list is rescanned each time.
 */
void scsi_task_set_abort(struct scsi_lu *lu, bool (*match)(const struct scsi_cmd *cmd, const void *arg),
			 const void *arg, struct scsi_tmf_wait *w)
{
	struct scsi_cmd *cmd;
	bool again = true;

	for (cmd = lu->ts_head; cmd; cmd = cmd->ts_next) {
		if (cmd->aborted || !match(cmd, arg))
			continue;
		cmd->aborted = true;
		if (w) {
			w->pending++;
			cmd->tmf_wait = w;
		}
	}
	while (again) {
		again = false;
		for (cmd = lu->ts_head; cmd; cmd = cmd->ts_next) {
			if (cmd->aborted && (cmd->state == SCSI_CMD_STATE_WAIT_TASK_SET ||
					     cmd->state == SCSI_CMD_STATE_WAIT_DATA_OUT)) {
				scsi_cmd_complete(cmd);
				again = true;
				break;
			}
		}
	}
}

static bool match_nexus(const struct scsi_cmd *cmd, const void *nexus)
{
	return !nexus || cmd->nexus == nexus;
}

static bool match_cmd(const struct scsi_cmd *cmd, const void *which)
{
	return cmd == which;
}

static void abort_matching(struct scsi_lu *lu, const struct scsi_nexus *only, struct scsi_tmf_wait *w)
{
	scsi_task_set_abort(lu, match_nexus, only, w);
}

static void lu_reset(struct scsi_lu *lu, struct scsi_tmf_wait *w)
{
	abort_matching(lu, NULL, w);
	lu->prevent_count = 0;
	spc_pr_lu_reset(lu);
	scsi_ua_establish_all(lu, SCSI_UA_BUS_DEVICE_RESET, NULL);
}

void scsi_tmf(struct scsi_nexus *nexus, uint64_t lun, enum scsi_tmf_function function,
	      struct scsi_cmd *referenced, void (*done)(void *arg, enum scsi_tmf_response response),
	      void *arg)
{
	struct scsi_device *dev = nexus->dev;
	struct scsi_tmf_wait *w = calloc(1, sizeof(*w));
	struct scsi_lu *lu = scsi_device_find_lu(dev, lun);

	if (!w) {
		done(arg, SCSI_TMF_FUNCTION_REJECTED);
		return;
	}
	w->done = done;
	w->arg = arg;
	w->pending = 1; /* our own reference, dropped below */
	w->response = SCSI_TMF_FUNCTION_COMPLETE;

	switch (function) {
	case SCSI_TMF_ABORT_TASK:
		if (!lu)
			w->response = SCSI_TMF_INCORRECT_LOGICAL_UNIT_NUMBER;
		else if (referenced && referenced->lu == lu && referenced->state != SCSI_CMD_STATE_DONE)
			scsi_task_set_abort(lu, match_cmd, referenced, w);
		break;
	case SCSI_TMF_ABORT_TASK_SET:
		if (!lu)
			w->response = SCSI_TMF_INCORRECT_LOGICAL_UNIT_NUMBER;
		else
			abort_matching(lu, nexus, w);
		break;
	case SCSI_TMF_CLEAR_TASK_SET:
		if (!lu) {
			w->response = SCSI_TMF_INCORRECT_LOGICAL_UNIT_NUMBER;
		} else {
			abort_matching(lu, NULL, w);
			scsi_ua_establish_all(lu, SCSI_UA_COMMANDS_CLEARED_BY_ANOTHER_INITIATOR, nexus);
		}
		break;
	case SCSI_TMF_LOGICAL_UNIT_RESET:
		if (!lu)
			w->response = SCSI_TMF_INCORRECT_LOGICAL_UNIT_NUMBER;
		else
			lu_reset(lu, w);
		break;
	case SCSI_TMF_I_T_NEXUS_RESET:
		for (unsigned i = 0; i < SCSI_MAX_LUNS; i++) {
			if (dev->lus[i]) {
				abort_matching(dev->lus[i], nexus, w);
				spc_pr_nexus_lost(dev->lus[i], nexus);
				scsi_ua_establish(nexus, i, SCSI_UA_I_T_NEXUS_LOSS);
			}
		}
		break;
	case SCSI_TMF_TARGET_RESET:
	case SCSI_TMF_TARGET_COLD_RESET:
		for (unsigned i = 0; i < SCSI_MAX_LUNS; i++)
			if (dev->lus[i])
				lu_reset(dev->lus[i], w);
		if (function == SCSI_TMF_TARGET_COLD_RESET)
			for (unsigned i = 0; i < SCSI_MAX_LUNS; i++)
				if (dev->lus[i])
					scsi_ua_establish_all(dev->lus[i], SCSI_UA_POWER_ON_RESET, NULL);
		break;
	}
	scsi_tmf_wait_put(w);
}
