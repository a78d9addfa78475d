/*
 * The chunked whole-medium operation behind FORMAT UNIT and SANITIZE (see
 * sbc_background.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sbc/sbc_background.h"
#include "sbc/sbc_pi.h"
#include "zbc/zbc.h"

/*
 * Chunk sizes: small enough that progress moves and a waiting command that
 * was aborted is released quickly, large enough to keep the job overhead
 * low.  Writing a pattern needs a buffer of one chunk.
 */
#define BG_PATTERN_CHUNK (1u << 20)
#define BG_ZERO_CHUNK (64ull << 20)
/* Never sleep longer than this in one job when pacing to op->rate. */
#define BG_MAX_SLEEP_NS 250000000ull

static uint64_t bg_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct sbc_background_op *sbc_background_alloc(struct scsi_lu *lu)
{
	struct sbc_background_op *op = calloc(1, sizeof(*op));

	if (op) {
		op->lu = lu;
		op->passes = 1;
	}
	return op;
}

void sbc_background_free(struct sbc_background_op *op)
{
	if (!op)
		return;
	free(op->pattern);
	free(op->chunk);
	free(op);
}

static uint64_t bg_chunk_bytes(const struct sbc_background_op *op)
{
	return op->method == SBC_BG_PATTERN ? BG_PATTERN_CHUNK : BG_ZERO_CHUNK;
}

static void bg_invert(uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)~p[i];
}

/* Bytes written or deallocated so far, over all passes. */
static uint64_t bg_done_bytes(const struct sbc_background_op *op)
{
	return (uint64_t)op->pass * op->size + op->offset;
}

/* Sleeps so that the operation runs no faster than op->rate bytes per second. */
static void bg_pace(const struct sbc_background_op *op)
{
	uint64_t target, now;
	struct timespec ts;

	if (!op->rate)
		return;
	/* done * 1e9 / rate without overflow for any medium below 16 EiB at >= 1 byte/s. */
	target = op->start_ns + (uint64_t)((long double)bg_done_bytes(op) * 1e9L / (long double)op->rate);
	now = bg_now_ns();
	if (target <= now)
		return;
	if (target - now > BG_MAX_SLEEP_NS)
		target = now + BG_MAX_SLEEP_NS;
	ts.tv_sec = (time_t)((target - now) / 1000000000ull);
	ts.tv_nsec = (long)((target - now) % 1000000000ull);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Worker thread: one chunk of the current pass. */
static void bg_work(struct scsi_io_job *job)
{
	struct sbc_background_op *op = (struct sbc_background_op *)((char *)job -
								      offsetof(struct sbc_background_op, job));
	struct backend *be = op->lu->backend;
	uint64_t len = op->size - op->offset;
	int rc = 0;

	if (len > bg_chunk_bytes(op))
		len = bg_chunk_bytes(op);
	/* FORMAT UNIT: the new protection format is recorded before the medium changes (sbc_pi.h). */
	if (op->save_format) {
		op->save_format = false;
		rc = sbc_pi_save_format(op->lu);
		if (rc < 0) {
			op->err = rc;
			return;
		}
	}
	switch (op->method) {
	case SBC_BG_DEALLOCATE:
		rc = be->ops->discard(be, op->offset, len);
		break;
	case SBC_BG_ZEROES:
		rc = be->ops->write_zeroes(be, op->offset, len, 0);
		break;
	case SBC_BG_PATTERN:
		rc = be->ops->write(be, op->chunk, (size_t)len, op->offset, 0);
		break;
	}
	if (rc < 0) {
		op->err = rc;
		return;
	}
	op->offset += len;
	if (op->offset == op->size) {
		op->pass++;
		/* Every block's PI becomes the escape (it is either deallocated or rewritten without PI). */
		if (op->pass == op->passes) {
			rc = sbc_pi_discard(op->lu, 0, op->lu->num_blocks);
			if (rc < 0 && !op->err)
				op->err = rc;
		}
		/* Zoned LUs: the zone conditions the caller set before the first chunk become durable. */
		if (op->pass == op->passes && op->lu->zbc) {
			rc = zbc_persist_all(op->lu, 0);
			if (rc < 0 && !op->err)
				op->err = rc;
		}
		if (op->pass < op->passes) {
			op->offset = 0;
			/* SBC-4 5.32 (OVERWRITE): INVERT = 1 inverts the pattern between passes. */
			if (op->method == SBC_BG_PATTERN && op->invert)
				bg_invert(op->chunk, BG_PATTERN_CHUNK);
		}
	}
	bg_pace(op);
}

static void bg_finish(struct sbc_background_op *op)
{
	struct scsi_lu *lu = op->lu;
	struct scsi_cmd *cmd = op->cmd;

	lu->progress.active = false;
	lu->progress.fraction = 0;
	op->end(op, op->err);
	if (cmd)
		scsi_cmd_complete(cmd);
	sbc_background_free(op);
}

/* Loop thread: after each chunk. */
static void bg_done(struct scsi_io_job *job)
{
	struct sbc_background_op *op = (struct sbc_background_op *)((char *)job -
								      offsetof(struct sbc_background_op, job));
	uint64_t total = (uint64_t)op->passes * op->size;
	struct scsi_executor *ex = op->lu->dev->executor;

	/*
	 * A waiting command aborted by a task management function or a lost
	 * I_T nexus ends now (its transport reports the abort); the operation
	 * itself goes on (SBC-4 4.11).
	 */
	if (op->cmd && op->cmd->aborted) {
		struct scsi_cmd *cmd = op->cmd;
		op->cmd = NULL;
		scsi_cmd_complete(cmd);
	}
	if (op->err || op->pass >= op->passes) {
		bg_finish(op);
		return;
	}
	/* SPC-4 4.5 (sense-key specific PROGRESS INDICATION): PROGRESS INDICATION is the fraction done, in 1/65536. */
	if (total) {
		long double fraction = (long double)bg_done_bytes(op) * 65536.0L / (long double)total;
		op->lu->progress.fraction = fraction >= 65535.0L ? 65535 : (uint16_t)fraction;
	}
	ex->submit(ex, &op->job);
}

bool sbc_background_start(struct sbc_background_op *op, struct scsi_cmd *starter)
{
	struct scsi_lu *lu = op->lu;
	struct scsi_executor *ex = lu->dev->executor;

	op->size = lu->num_blocks * lu->block_size;
	if (op->passes == 0)
		op->passes = 1;
	if (op->method == SBC_BG_PATTERN) {
		op->chunk = malloc(BG_PATTERN_CHUNK);
		if (!op->chunk || !op->pattern) {
			sbc_background_free(op);
			return false;
		}
		/* BG_PATTERN_CHUNK is a multiple of every logical block size (512, 4096). */
		for (size_t off = 0; off < BG_PATTERN_CHUNK; off += lu->block_size)
			memcpy(op->chunk + off, op->pattern, lu->block_size);
		/*
		 * SBC-4 5.32 (OVERWRITE): with INVERT = 1 and an even OVERWRITE COUNT the
		 * first pass writes the inverted pattern, so the last pass
		 * writes the pattern itself.
		 */
		if (op->invert && op->passes % 2 == 0)
			bg_invert(op->chunk, BG_PATTERN_CHUNK);
	}
	op->job.work = bg_work;
	op->job.done = bg_done;
	op->job.next = NULL;
	op->start_ns = bg_now_ns();
	lu->progress.active = true;
	lu->progress.asc_ascq = op->asc_ascq;
	lu->progress.fraction = 0;
	/* From now on the NOT READY gate keeps other commands off the medium (sbc_background.h). */
	scsi_cmd_unquiesce(starter);
	if (op->size == 0 && !op->save_format) {
		bg_finish(op);
		return true;
	}
	ex->submit(ex, &op->job);
	return true;
}
