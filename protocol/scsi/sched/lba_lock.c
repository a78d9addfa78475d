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
 *
 * An EXTENDED COPY between LUs also locks blocks of the other LUs it reads
 * and writes (cmd->locks_elsewhere): each such lock joins that LU's holders
 * beside its own commands', so a command there waits for the copy as for
 * one of its own.  The command takes all its locks at once, when every one
 * is free (task_set.c), never some while it waits for others: two copies
 * between the same LUs in opposite directions cannot each hold what the
 * other waits for.
 */
#include <stdlib.h>

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

static void add_range(struct scsi_lba_lock *l, uint64_t lba, uint64_t nblocks)
{
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

void scsi_lba_lock_add(struct scsi_cmd *cmd, uint64_t lba, uint64_t nblocks)
{
	add_range(&cmd->lock, lba, nblocks);
}

bool scsi_lba_lock_add_elsewhere(struct scsi_cmd *cmd, struct scsi_lu *lu, uint64_t lba, uint64_t nblocks)
{
	struct scsi_lba_locks_elsewhere *e = cmd->locks_elsewhere;
	unsigned i;

	if (lu == cmd->lu) {
		add_range(&cmd->lock, lba, nblocks);
		return true;
	}
	/* Made once, kept until the command is released: the plan is made again at every pass it waits. */
	if (!e && !(e = cmd->locks_elsewhere = calloc(1, sizeof(*e))))
		return false;
	for (i = 0; i < e->n && e->lu[i] != lu; i++)
		;
	if (i == e->n) {
		if (e->n == SCSI_LOCKS_ELSEWHERE)
			return false;
		e->lu[e->n++] = lu;
		e->lock[i] = (struct scsi_lba_lock){ .mode = cmd->lock.mode };
	}
	add_range(&e->lock[i], lba, nblocks);
	return true;
}

/* With the LU's lba_locks_whole_lu, a lock on lu covers it whole; WRITE counts as SHARED. */
static void whole_lu(const struct scsi_lu *lu, struct scsi_lba_lock *l)
{
	if (!lu->params.lba_locks_whole_lu || l->mode == SCSI_LBA_LOCK_NONE)
		return;
	if (l->mode == SCSI_LBA_LOCK_WRITE)
		l->mode = SCSI_LBA_LOCK_SHARED;
	l->nranges = 1;
	l->ranges[0] = (struct scsi_lba_range){ .lba = 0, .nblocks = UINT64_MAX };
}

void scsi_lba_lock_plan(struct scsi_cmd *cmd)
{
	const struct scsi_op *op = cmd->op;
	struct scsi_lu *lu = cmd->lu;
	struct scsi_lba_locks_elsewhere *e = cmd->locks_elsewhere;

	cmd->lock.mode = SCSI_LBA_LOCK_NONE;
	cmd->lock.nranges = 0;
	if (e)
		e->n = 0;
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
	whole_lu(lu, &cmd->lock);
	for (unsigned i = 0; e && i < e->n; i++)
		whole_lu(e->lu[i], &e->lock[i]);
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

static bool available(const struct scsi_lu *lu, const struct scsi_lba_lock *l)
{
	if (l->mode == SCSI_LBA_LOCK_NONE)
		return true;
	for (const struct scsi_lba_lock *h = lu->ts.holders; h; h = h->next_holder)
		if (scsi_lba_lock_conflict(h, l))
			return false;
	return true;
}

bool scsi_lba_lock_available(const struct scsi_lu *lu, const struct scsi_cmd *cmd)
{
	return available(lu, &cmd->lock);
}

bool scsi_lba_locks_elsewhere_available(const struct scsi_cmd *cmd)
{
	const struct scsi_lba_locks_elsewhere *e = cmd->locks_elsewhere;

	for (unsigned i = 0; e && i < e->n; i++)
		if (!available(e->lu[i], &e->lock[i]))
			return false;
	return true;
}

static bool take(struct scsi_lu *lu, struct scsi_cmd *cmd, struct scsi_lba_lock *l)
{
	if (l->mode == SCSI_LBA_LOCK_NONE || l->held)
		return false;
	l->held = true;
	l->next_holder = lu->ts.holders;
	lu->ts.holders = l;
	/* From now on it may change its blocks: the ROD tokens that represent them are revoked (copy/rod_token.c). */
	if (cmd->op->flags & OP_WRITES_MEDIUM)
		rod_tokens_written(lu, cmd, l);
	return true;
}

void scsi_lba_lock_take(struct scsi_lu *lu, struct scsi_cmd *cmd)
{
	struct scsi_lba_locks_elsewhere *e = cmd->locks_elsewhere;

	take(lu, cmd, &cmd->lock);
	for (unsigned i = 0; e && i < e->n; i++)
		if (take(e->lu[i], cmd, &e->lock[i]))
			e->lu[i]->copy_readers++; /* it stays until the lock drops (scsi_lu_remove) */
}

static bool drop(struct scsi_lu *lu, struct scsi_lba_lock *l)
{
	if (!l->held)
		return false;
	for (struct scsi_lba_lock **pp = &lu->ts.holders; *pp; pp = &(*pp)->next_holder) {
		if (*pp == l) {
			*pp = l->next_holder;
			break;
		}
	}
	l->held = false;
	l->next_holder = NULL;
	return true;
}

bool scsi_lba_lock_drop(struct scsi_lu *lu, struct scsi_cmd *cmd)
{
	struct scsi_lba_locks_elsewhere *e = cmd->locks_elsewhere;
	bool held = drop(lu, &cmd->lock);

	/* The commands of the other LUs that wait for the copy's blocks there look again. */
	for (unsigned i = 0; e && i < e->n; i++) {
		if (!drop(e->lu[i], &e->lock[i]))
			continue;
		e->lu[i]->copy_readers--;
		scsi_task_set_run_later(e->lu[i]);
	}
	/* A copy on another LU may wait for lu's blocks (task_set.c: it waits outside its LU). */
	if (held)
		scsi_resources_freed(lu->dev->res);
	return held;
}
