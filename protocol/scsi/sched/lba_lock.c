/*
 * LBA-range locks: which blocks a command touches and how it shares them,
 * decided on the loop thread when the command is about to start, never
 * waited for on a worker (docs/architecture.md, "Locks").
 *
 * A command's lock is one to SCSI_LBA_LOCK_RANGES ranges in one mode:
 *   SHARED     reads: any number together;
 *   WRITE      writes: alone on their blocks, so a read never sees a block
 *              half written with its protection information, and a zone's
 *              write pointer moves with the data;
 *   EXCLUSIVE  COMPARE AND WRITE, ORWRITE, WRITE ATOMIC, atomic WRITE
 *              SCATTERED, zone resets: alone on their blocks (SBC-4 4.29:
 *              an atomic write is seen whole or not at all).
 * Two locks conflict when their ranges overlap and either is not SHARED.
 * A command that changes the whole medium (OP_QUIESCE) locks every block
 * EXCLUSIVE.
 *
 * With the LU's lba_locks_whole_lu (the comparison benchmark) every lock
 * covers the whole LU and WRITE counts as SHARED: the LU-wide lock the
 * core had before, under which ordinary I/O ran together and read-modify-
 * write and atomic writes ran alone.
 */
#include "sched/task_set.h"

static void lock_one(struct scsi_cmd *cmd, enum scsi_lba_lock_mode mode, uint64_t lba, uint64_t nblocks)
{
	cmd->lock.mode = mode;
	cmd->lock.nranges = 0;
	if (nblocks)
		scsi_lba_lock_add(cmd, lba, nblocks);
	else
		cmd->lock.mode = SCSI_LBA_LOCK_NONE;
}

void scsi_lba_lock_add(struct scsi_cmd *cmd, uint64_t lba, uint64_t nblocks)
{
	struct scsi_lba_lock *l = &cmd->lock;
	uint64_t lo, hi;

	if (nblocks == 0)
		return;
	if (l->nranges < SCSI_LBA_LOCK_RANGES) {
		l->ranges[l->nranges++] = (struct scsi_lba_range){ .lba = lba, .nblocks = nblocks };
		return;
	}
	/* Too many ranges: the last slot becomes the span of itself and the new one. */
	lo = l->ranges[l->nranges - 1].lba < lba ? l->ranges[l->nranges - 1].lba : lba;
	hi = l->ranges[l->nranges - 1].lba + l->ranges[l->nranges - 1].nblocks;
	if (lba + nblocks > hi)
		hi = lba + nblocks;
	l->ranges[l->nranges - 1] = (struct scsi_lba_range){ .lba = lo, .nblocks = hi - lo };
}

void scsi_lba_lock_plan(struct scsi_cmd *cmd)
{
	const struct scsi_op *op = cmd->op;
	struct scsi_lu *lu = cmd->lu;

	cmd->lock.mode = SCSI_LBA_LOCK_NONE;
	cmd->lock.nranges = 0;
	if (op->flags & OP_QUIESCE)
		lock_one(cmd, SCSI_LBA_LOCK_EXCLUSIVE, 0, lu->num_blocks);
	else if (op->lock)
		op->lock(cmd);
	else if (op->flags & OP_LBA_EXCLUSIVE)
		lock_one(cmd, SCSI_LBA_LOCK_EXCLUSIVE, cmd->lba, cmd->nblocks);
	else if (op->flags & OP_LBA_WRITE)
		lock_one(cmd, SCSI_LBA_LOCK_WRITE, cmd->lba, cmd->nblocks);
	else if (op->flags & OP_LBA_READ)
		lock_one(cmd, SCSI_LBA_LOCK_SHARED, cmd->lba, cmd->nblocks);
	if (cmd->lock.nranges == 0)
		cmd->lock.mode = SCSI_LBA_LOCK_NONE;
	if (lu->params.lba_locks_whole_lu && cmd->lock.mode != SCSI_LBA_LOCK_NONE) {
		if (cmd->lock.mode == SCSI_LBA_LOCK_WRITE)
			cmd->lock.mode = SCSI_LBA_LOCK_SHARED;
		cmd->lock.nranges = 1;
		cmd->lock.ranges[0] = (struct scsi_lba_range){ .lba = 0, .nblocks = UINT64_MAX };
	}
}

static bool overlap(const struct scsi_lba_range *a, const struct scsi_lba_range *b)
{
	/* [a, a + n) and [b, b + m) overlap; the sums cannot wrap for ranges inside an LU. */
	return a->lba < b->lba + b->nblocks && b->lba < a->lba + a->nblocks;
}

bool scsi_lba_lock_conflict(const struct scsi_lba_lock *a, const struct scsi_lba_lock *b)
{
	if (a->mode == SCSI_LBA_LOCK_NONE || b->mode == SCSI_LBA_LOCK_NONE)
		return false;
	if (a->mode == SCSI_LBA_LOCK_SHARED && b->mode == SCSI_LBA_LOCK_SHARED)
		return false;
	for (unsigned i = 0; i < a->nranges; i++)
		for (unsigned j = 0; j < b->nranges; j++)
			if (overlap(&a->ranges[i], &b->ranges[j]))
				return true;
	return false;
}

bool scsi_lba_lock_available(const struct scsi_lu *lu, const struct scsi_cmd *cmd)
{
	if (cmd->lock.mode == SCSI_LBA_LOCK_NONE)
		return true;
	for (const struct scsi_cmd *h = lu->ts.holders; h; h = h->lock.next_holder)
		if (scsi_lba_lock_conflict(&h->lock, &cmd->lock))
			return false;
	return true;
}

void scsi_lba_lock_take(struct scsi_lu *lu, struct scsi_cmd *cmd)
{
	if (cmd->lock.mode == SCSI_LBA_LOCK_NONE || cmd->lock.held)
		return;
	cmd->lock.held = true;
	cmd->lock.next_holder = lu->ts.holders;
	lu->ts.holders = cmd;
	/* From now on it may change its blocks: the ROD tokens that represent them are revoked (copy/rod_token.c). */
	if (cmd->op->flags & OP_WRITES_MEDIUM)
		rod_tokens_written(lu, cmd);
}

bool scsi_lba_lock_drop(struct scsi_lu *lu, struct scsi_cmd *cmd)
{
	if (!cmd->lock.held)
		return false;
	for (struct scsi_cmd **pp = &lu->ts.holders; *pp; pp = &(*pp)->lock.next_holder) {
		if (*pp == cmd) {
			*pp = cmd->lock.next_holder;
			break;
		}
	}
	cmd->lock.held = false;
	cmd->lock.next_holder = NULL;
	return true;
}
