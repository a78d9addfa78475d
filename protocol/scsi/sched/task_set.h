/*
 * The one scheduler: per-LU task sets (SAM-5 8), LBA-range locks, buffer
 * room, and task management (SAM-5 7).  docs/architecture.md, "The one
 * scheduler", draws how a command moves through it.
 */
#ifndef SBCEMU_TASK_SET_H
#define SBCEMU_TASK_SET_H

#ifndef SBCE_BUILDING_SCSI
#error "sbcemu layering: task_set.h is internal to the SCSI core (protocol/scsi/): use its public headers"
#endif

#include "core/scsi_internal.h"

/* Counts the commands a task management function waits for. */
struct scsi_tmf_wait {
	unsigned pending;
	enum scsi_tmf_response response;
	void (*done)(void *arg, enum scsi_tmf_response response);
	void *arg;
};

/* ---- task_set.c ---- */

/*
 * Puts an admitted command at the tail of its LU's task set, in state
 * WAIT_BUFFER (it needs Data-Out) or WAIT_START, and runs the scheduler.
 */
void scsi_task_set_add(struct scsi_lu *lu, struct scsi_cmd *cmd);
/* Takes a command out (completion); the scheduler's cursor stays valid. */
void scsi_task_set_remove(struct scsi_lu *lu, struct scsi_cmd *cmd);
/*
 * The scheduler: starts every waiting command whose task attribute, LBA
 * locks, quiesce barrier and buffer room allow, in arrival order.  It never
 * recurses: called while it runs (a command completed at once), it only
 * asks for one more pass.
 */
void scsi_task_set_run(struct scsi_lu *lu);
/* The scheduler of lu runs once the outermost scheduler section ends (at once without resources). */
void scsi_task_set_run_later(struct scsi_lu *lu);

/* ---- lba_lock.c ---- */

/*
 * The LBA locks a command takes on other LUs of its device, beside its own
 * (cmd->lock): an EXTENDED COPY between LUs locks the ranges it reads and
 * writes there (copy/extended_copy.c).  Taken and dropped with cmd->lock,
 * all together or none.
 */
#define SCSI_LOCKS_ELSEWHERE 2
struct scsi_lba_locks_elsewhere {
	unsigned n;
	struct scsi_lu *lu[SCSI_LOCKS_ELSEWHERE];
	struct scsi_lba_lock lock[SCSI_LOCKS_ELSEWHERE];
};

/* Fills cmd->lock (and its locks elsewhere) from the command's row (its lock function, or its OP_LBA_* / OP_QUIESCE flags). */
void scsi_lba_lock_plan(struct scsi_cmd *cmd);
/* For lock functions: one more range in cmd->lock (beyond SCSI_LBA_LOCK_RANGES, spans are merged). */
void scsi_lba_lock_add(struct scsi_cmd *cmd, uint64_t lba, uint64_t nblocks);
/* For lock functions: one more range on lu, another LU of cmd's device, in cmd->lock's mode; false: no room for lu. */
bool scsi_lba_lock_add_elsewhere(struct scsi_cmd *cmd, struct scsi_lu *lu, uint64_t lba, uint64_t nblocks);
bool scsi_lba_lock_conflict(const struct scsi_lba_lock *a, const struct scsi_lba_lock *b);
/* No held lock of lu conflicts with cmd's. */
bool scsi_lba_lock_available(const struct scsi_lu *lu, const struct scsi_cmd *cmd);
/* No held lock of the other LUs conflicts with cmd's locks there. */
bool scsi_lba_locks_elsewhere_available(const struct scsi_cmd *cmd);
/* Takes cmd's lock on lu and its locks elsewhere. */
void scsi_lba_lock_take(struct scsi_lu *lu, struct scsi_cmd *cmd);
/*
 * Drops them; the LUs whose commands may wait for them look again (lu's own
 * pass is the caller's).  Returns whether cmd held a lock on lu.
 */
bool scsi_lba_lock_drop(struct scsi_lu *lu, struct scsi_cmd *cmd);

/* ---- resources.c ---- */

/*
 * Admission (SAM-5 5.3): SCSI_STATUS_GOOD if cmd may enter its LU's task set
 * (and then counts it), else TASK SET FULL (the LU's queue or the daemon's
 * commands are full and the nexus has a command in the task set) or BUSY
 * (the daemon is full and the nexus has none there).  An LU whose queue is
 * full still takes one command of a nexus that has none in it.
 */
enum scsi_status scsi_resources_admit(struct scsi_cmd *cmd);
/* Undoes the admission's task set count (completion). */
void scsi_resources_leave_task_set(struct scsi_cmd *cmd);
/* Reserves cmd->buffer_need if it fits (or nothing else is held); false: it must wait. */
bool scsi_resources_reserve(struct scsi_cmd *cmd);
/*
 * Returns what cmd holds (scsi_cmd_release) and wakes the LUs whose commands
 * wait for room: at once when no scheduler section is open, else when the
 * outermost one ends (scsi_resources_leave).
 */
void scsi_resources_release(struct scsi_cmd *cmd);
/*
 * Something an LU may wait for outside itself came free (buffer room,
 * another LU's LBA lock): the LUs that wait look again, when the outermost
 * section ends.
 */
void scsi_resources_freed(struct scsi_resources *res);
/*
 * A scheduler section (a task set pass, a command's completion): room
 * released inside one is handed to the waiting LUs when the outermost
 * section of res ends, so that no LU's pass ever runs inside another's, nor
 * inside a transport's completion callback.  res may be NULL (no limits).
 */
void scsi_resources_enter(struct scsi_resources *res);
void scsi_resources_leave(struct scsi_resources *res);
void scsi_resources_add_device(struct scsi_resources *res, struct scsi_device *dev);
void scsi_resources_remove_device(struct scsi_resources *res, struct scsi_device *dev);

/* ---- tmf.c ---- */

void scsi_tmf_wait_put(struct scsi_tmf_wait *w);
/* Aborts the commands of lu selected by match (see tmf.c); w (may be NULL) waits for them. */
void scsi_task_set_abort(struct scsi_lu *lu, bool (*match)(const struct scsi_cmd *cmd, const void *arg),
			 const void *arg, struct scsi_tmf_wait *w);

/* ---- cmd.c ---- */

/* WAIT_BUFFER -> WAIT_DATA_OUT: the room is reserved, the transport is asked for the Data-Out. */
void scsi_cmd_request_data_out(struct scsi_cmd *cmd);
/* WAIT_START -> RUNNING: the gates once more, then the medium's queue or exec. */
void scsi_cmd_start(struct scsi_cmd *cmd);
/* The command is being processed from now on: its duration limits say whether it still may, then exec. */
void scsi_cmd_execute(struct scsi_cmd *cmd);
/*
 * Whether a command waits with nothing running for it (not started,
 * collecting Data-Out, held by a fault rule, queued for the medium or a
 * worker, or done and held for its media time): it can end at once.
 */
bool scsi_cmd_waiting(const struct scsi_cmd *cmd);

/* ---- lu.c: command references on a nexus ---- */

void scsi_nexus_get(struct scsi_nexus *nexus);
void scsi_nexus_put(struct scsi_nexus *nexus);

#endif
