/*
 * The task set of an LU and its scheduler: the only place a command waits to
 * start (docs/architecture.md, "The one scheduler").
 *
 * Every command of an LU is in its task set from admission to completion,
 * in arrival order.  A waiting command starts when all of these allow it:
 *   - its task attribute (SAM-5 8.6): HEAD OF QUEUE at once; ORDERED when no
 *     older command is left; SIMPLE when no older ORDERED command is left.
 *     INQUIRY and REPORT LUNS are HEAD OF QUEUE whatever the transport said
 *     (SAM-5 8.6: implicit head of queue);
 *   - quiesce: an OP_QUIESCE command (FORMAT UNIT, SANITIZE, ZONE ACTIVATE)
 *     starts only when no other command runs and no older one is ready, and
 *     until it lets go (scsi_cmd_unquiesce) younger commands that need the
 *     medium wait behind it;
 *   - its LBA lock (lba_lock.c): no held lock conflicts with it, and no
 *     older waiting command wants blocks it would take (so a stream of
 *     readers cannot starve a writer); an EXTENDED COPY between LUs also
 *     needs its locks on the other LUs free, and takes them all at once;
 *   - buffer room (resources.c).
 * A command that waits for something outside its LU (buffer room, another
 * LU's blocks) marks its LU (set_waits_outside): the LU looks again when
 * room or a lock comes free anywhere (resources.c).
 * A command that needs Data-Out first waits for buffer room only (state
 * WAIT_BUFFER), then for its Data-Out, then to start.  Starting is not yet
 * running: a started command that touches the medium of an LU with a
 * latency model waits in the medium's queue (media/media_queue.c), and its
 * backend jobs may wait for a worker (sched/dispatch.c); both rank by
 * priority and deadline.  This pass only says what SAM-5 allows.
 *
 * The scheduler runs in passes over the task set; starting a command may
 * complete it (and others) at once, which asks for another pass instead of
 * recursing.  A pass is linear in the task set (at most queue_depth
 * commands per LU, plus one per nexus).  Across LUs the same holds: buffer
 * room a completion frees wakes other LUs only once the outermost pass or
 * completion has ended (scsi_resources_enter / _leave).
 */
#include "media/media_queue.h"
#include "sched/task_set.h"

void scsi_task_set_add(struct scsi_lu *lu, struct scsi_cmd *cmd)
{
	cmd->ts_next = NULL;
	cmd->ts_prev = lu->ts.tail;
	if (lu->ts.tail)
		lu->ts.tail->ts_next = cmd;
	else
		lu->ts.head = cmd;
	lu->ts.tail = cmd;
	scsi_task_set_run(lu);
}

static bool in_task_set(const struct scsi_lu *lu, const struct scsi_cmd *cmd)
{
	return cmd->ts_prev || lu->ts.head == cmd;
}

void scsi_task_set_remove(struct scsi_lu *lu, struct scsi_cmd *cmd)
{
	if (!in_task_set(lu, cmd))
		return;
	if (lu->ts.cursor == cmd)
		lu->ts.cursor = cmd->ts_next;
	lu->ts.removals++;
	if (cmd->ts_prev)
		cmd->ts_prev->ts_next = cmd->ts_next;
	else
		lu->ts.head = cmd->ts_next;
	if (cmd->ts_next)
		cmd->ts_next->ts_prev = cmd->ts_prev;
	else
		lu->ts.tail = cmd->ts_prev;
	cmd->ts_prev = cmd->ts_next = NULL;
}

static enum scsi_task_attr effective_attr(const struct scsi_cmd *cmd)
{
	if (cmd->op && (cmd->op->flags & OP_HEAD_OF_QUEUE))
		return SCSI_TASK_HEAD_OF_QUEUE;
	return cmd->task_attr;
}

/* A command the quiesce barrier holds back: it may touch the medium. */
static bool needs_medium(const struct scsi_cmd *cmd)
{
	return !(cmd->op->flags & OP_IN_PROGRESS_OK);
}

/* What the older commands of the task set imply for the next one (one pass). */
struct pass_state {
	bool older_any;      /* some older command is still in the task set */
	bool older_ordered;  /* ... an ORDERED one */
	bool older_ready;    /* ... one ready to start that did not */
	bool barrier;        /* ... a quiesce command that has not let go */
	/*
	 * The locks of older commands that wait for them, chained through
	 * their next_holder (unused while a lock is not held).  Valid only
	 * while no command left the task set (one may have been freed).
	 */
	struct scsi_lba_lock *blocked;
	unsigned removals;
};

static bool wanted_by_older(const struct pass_state *p, const struct scsi_cmd *cmd)
{
	for (const struct scsi_lba_lock *b = p->blocked; b; b = b->next_holder)
		if (scsi_lba_lock_conflict(b, &cmd->lock))
			return true;
	return false;
}

/*
 * An LU's commands wait for something outside it (buffer room, another
 * LU's LBA lock), or no longer: counted in the daemon's resources, so that
 * room or a lock coming free wakes the LUs only when one waits
 * (resources.c).  Only an LU with resources is woken so.
 */
static void set_waits_outside(struct scsi_lu *lu, bool waits)
{
	struct scsi_resources *res = lu->dev->res;

	if (lu->ts.waits_outside == waits)
		return;
	lu->ts.waits_outside = waits;
	if (res && waits)
		res->lus_waiting++;
	else if (res && res->lus_waiting)
		res->lus_waiting--;
}

/* Whether a WAIT_START command may start now; plans its lock. */
static bool may_start(struct scsi_lu *lu, struct scsi_cmd *cmd, const struct pass_state *p, bool *lock_wait)
{
	enum scsi_task_attr attr = effective_attr(cmd);

	*lock_wait = false;
	if (attr == SCSI_TASK_ORDERED && p->older_any)
		return false;
	if (attr != SCSI_TASK_HEAD_OF_QUEUE && p->older_ordered)
		return false;
	if (p->barrier && needs_medium(cmd))
		return false;
	if ((cmd->op->flags & OP_QUIESCE) && (lu->ts.running || p->older_ready))
		return false;
	scsi_lba_lock_plan(cmd);
	if (!scsi_lba_lock_available(lu, cmd) || (attr != SCSI_TASK_HEAD_OF_QUEUE && wanted_by_older(p, cmd))) {
		*lock_wait = cmd->lock.mode != SCSI_LBA_LOCK_NONE;
		return false;
	}
	if (!scsi_lba_locks_elsewhere_available(cmd)) {
		/* Held by a command of another LU: its end wakes this LU. Its blocks here stay wanted meanwhile. */
		*lock_wait = cmd->lock.mode != SCSI_LBA_LOCK_NONE;
		set_waits_outside(lu, true);
		return false;
	}
	if (!scsi_resources_reserve(cmd)) {
		set_waits_outside(lu, true);
		return false;
	}
	return true;
}

static void pass(struct scsi_lu *lu)
{
	struct pass_state p = { .removals = lu->ts.removals };
	struct scsi_cmd *cmd;

	set_waits_outside(lu, false);
	for (cmd = lu->ts.head; cmd; cmd = lu->ts.cursor) {
		enum scsi_task_attr attr = effective_attr(cmd);
		bool quiesce = cmd->op && (cmd->op->flags & OP_QUIESCE) && !cmd->quiesce_released;
		bool lock_wait = false;

		lu->ts.cursor = cmd->ts_next;
		if (p.removals != lu->ts.removals) {
			/* A command ended during this pass: forget the chain, look again afterwards. */
			p.blocked = NULL;
			p.removals = lu->ts.removals;
			lu->ts.again = true;
		}
		if (cmd->aborted) {
			/* ends through the abort path; it still orders younger ones until then */
		} else if (cmd->state == SCSI_CMD_STATE_WAIT_BUFFER) {
			if (scsi_resources_reserve(cmd))
				scsi_cmd_request_data_out(cmd); /* may complete it: cmd is not touched below */
			else
				set_waits_outside(lu, true);
		} else if (cmd->state == SCSI_CMD_STATE_WAIT_START) {
			if (may_start(lu, cmd, &p, &lock_wait)) {
				scsi_cmd_start(cmd); /* may complete it: cmd is not touched below */
			} else {
				p.older_ready = true;
				if (lock_wait) {
					cmd->lock.next_holder = p.blocked;
					p.blocked = &cmd->lock;
				}
			}
		}
		/* What this command means for the younger ones (as it was before it started). */
		p.older_any = true;
		if (attr == SCSI_TASK_ORDERED)
			p.older_ordered = true;
		if (quiesce)
			p.barrier = true;
	}
	lu->ts.cursor = NULL;
	/* The started commands that wait for the medium, in their rank's order (media_queue.c). */
	scsi_media_queue_run(lu);
}

void scsi_task_set_run(struct scsi_lu *lu)
{
	struct scsi_resources *res = lu->dev->res;

	if (lu->ts.scheduling) {
		lu->ts.again = true;
		return;
	}
	scsi_resources_enter(res);
	lu->ts.scheduling = true;
	do {
		lu->ts.again = false;
		pass(lu);
	} while (lu->ts.again);
	lu->ts.scheduling = false;
	scsi_resources_leave(res);
}

void scsi_task_set_run_later(struct scsi_lu *lu)
{
	struct scsi_resources *res = lu->dev->res;

	if (!res) {
		scsi_task_set_run(lu);
		return;
	}
	set_waits_outside(lu, true);
	scsi_resources_freed(res);
}
