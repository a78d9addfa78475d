/*
 * Task management (SAM-5 7): ABORT TASK, ABORT TASK SET, CLEAR TASK SET,
 * LOGICAL UNIT RESET, I_T NEXUS RESET and the target resets, on the task
 * sets of task_set.c.
 */
#include <stdlib.h>

#include "sched/dispatch.h"
#include "sched/task_set.h"

void scsi_tmf_wait_put(struct scsi_tmf_wait *w)
{
	if (--w->pending == 0) {
		w->done(w->arg, w->response);
		free(w);
	}
}

/*
 * Aborts every command of lu that match(cmd, arg) selects.  First all of them
 * are marked (so none can start meanwhile), then those with nothing running
 * for them (scsi_cmd_waiting) end at once through their transport's
 * aborted(); one whose I/O runs ends when it returns.  A command collecting Data-Out ends at once too: the
 * transport drops its R2T state in aborted().  Completing a command may end
 * others (a transport may drop a connection), so the list is walked again
 * from the head after each.
 */
void scsi_task_set_abort(struct scsi_lu *lu, bool (*match)(const struct scsi_cmd *cmd, const void *arg),
			 const void *arg, struct scsi_tmf_wait *w)
{
	struct scsi_cmd *cmd;
	bool again = true;

	for (cmd = lu->ts.head; cmd; cmd = cmd->ts_next) {
		if (cmd->aborted || !match(cmd, arg))
			continue;
		cmd->aborted = true;
		scsi_service_hurry(cmd); /* one whose job waits for a worker: its job goes first */
		if (w) {
			w->pending++;
			cmd->tmf_wait = w;
		}
	}
	while (again) {
		again = false;
		for (cmd = lu->ts.head; cmd; cmd = cmd->ts_next) {
			if (cmd->aborted && scsi_cmd_waiting(cmd)) {
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
	spc_diag_abort(lu); /* a background self-test ends, aborted (SPC-4 5.7) */
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
		else if (referenced && referenced->lu == lu && referenced->state != SCSI_CMD_STATE_DONE &&
			 (w->response = scsi_fault_abort_task(referenced)) == SCSI_TMF_FUNCTION_COMPLETE)
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
		SCSI_DEVICE_FOREACH_LU(dev, l) {
			abort_matching(l, nexus, w);
			spc_pr_nexus_lost(l, nexus);
			scsi_ua_establish(nexus, l->lun, SCSI_UA_I_T_NEXUS_LOSS);
		}
		break;
	case SCSI_TMF_TARGET_RESET:
	case SCSI_TMF_TARGET_COLD_RESET:
		SCSI_DEVICE_FOREACH_LU(dev, l)
			lu_reset(l, w);
		if (function == SCSI_TMF_TARGET_COLD_RESET)
			SCSI_DEVICE_FOREACH_LU(dev, l)
				scsi_ua_establish_all(l, SCSI_UA_POWER_ON_RESET, NULL);
		break;
	}
	scsi_tmf_wait_put(w);
}
