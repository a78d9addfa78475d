/*
 * WRITE SCATTERED with a streamed Data-Out (sbc_write_scattered.c decides;
 * docs/atomic.md, "Scale"): a command whose Data-Out is larger than
 * SBC_STREAM_WINDOW (filesystems ask for 65 535 ranges and a gigabyte) is
 * taken in pieces of that size, so sbcemud never holds its payload.
 *
 * The first piece holds the header and every LBA range descriptor (they are
 * checked before anything is written, as for a small command); each piece's
 * range data is then written on a worker while the transport collects
 * nothing more, and the next piece is asked for (scsi_cmd_next_data_out).
 * Without write_scattered_atomic the ranges are written in place as they
 * arrive, as WRITE SCATTERED allows.  With it the data goes into a streamed
 * intent-log record (backend stream_*, journal.h): nothing is durable until
 * the last piece is in, then the record is committed and applied; the
 * command holds its ranges' LBA locks exclusively from its start, so it is
 * all or nothing against readers and crashes alike.  On an LU with PI the tuples are generated per
 * piece (kept in memory: 8 bytes per block) and committed in the same record.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sbc/sbc.h"

#define HEADER_LEN 32
#define DESCRIPTOR_LEN 32

struct stream_range {
	uint64_t lba;
	uint32_t n;
};

struct scatter_stream {
	struct scsi_lu *lu;
	struct stream_range *ranges; /* descriptor order, empty ones left out */
	uint32_t count;
	uint32_t cur;                /* range being filled */
	uint64_t cur_done;           /* its bytes written so far */
	uint64_t data_pos;           /* Data-Out offset of the next range byte */
	bool atomic;
	bool stream_open;            /* a backend stream to abandon if the command ends early */
	uint8_t *tuples;             /* atomic with PI: every range's tuples, in order */
	uint64_t tuple_pos;
};

static void stream_free(void *p)
{
	struct scatter_stream *st = p;
	struct backend *be = st->lu->backend;

	if (st->stream_open)
		be->ops->stream_abandon(be);
	free(st->ranges);
	free(st->tuples);
	free(st);
}

/* The record's ranges: the data ranges, then (PI) their tuple ranges. */
static int begin_record(struct scatter_stream *st)
{
	struct scsi_lu *lu = st->lu;
	bool pi = st->tuples != NULL;
	struct be_range *r = calloc((size_t)st->count * (pi ? 2 : 1) + 1, sizeof(*r));
	int rc;

	if (!r)
		return -ENOMEM;
	for (uint32_t i = 0; i < st->count; i++) {
		r[i] = (struct be_range){ scsi_lu_offset(lu, st->ranges[i].lba), (uint64_t)st->ranges[i].n * lu->block_size };
		if (pi)
			r[st->count + i] = (struct be_range){ sbc_pi_offset(lu, st->ranges[i].lba),
							      sbc_pi_bytes(lu, st->ranges[i].n) };
	}
	rc = lu->backend->ops->stream_begin(lu->backend, r, st->count * (pi ? 2 : 1));
	free(r);
	st->stream_open = rc == 0;
	return rc;
}

/* Worker: the range data of the piece in cmd->data_out. */
static void piece_work(struct scsi_cmd *cmd)
{
	struct scatter_stream *st = cmd->handler_state;
	struct scsi_lu *lu = st->lu;
	uint32_t bs = lu->block_size;
	uint64_t end = (uint64_t)cmd->data_out_offset + cmd->data_out_len;
	int rc = 0;

	if (st->atomic && !st->stream_open)
		rc = begin_record(st);
	while (rc == 0 && st->data_pos < end && st->cur < st->count) {
		const struct stream_range *r = &st->ranges[st->cur];
		uint64_t left = (uint64_t)r->n * bs - st->cur_done;
		uint64_t len = end - st->data_pos < left ? end - st->data_pos : left;
		const uint8_t *p = cmd->data_out + (st->data_pos - cmd->data_out_offset);
		uint64_t lba = r->lba + st->cur_done / bs;
		uint32_t blocks = (uint32_t)(len / bs);

		/* Pieces and ranges are whole blocks: the window is a multiple of the block size. */
		if (st->atomic) {
			rc = lu->backend->ops->stream_append(lu->backend, p, (size_t)len);
			if (rc == 0 && st->tuples) {
				sbc_pi_generate(cmd, p, lba, blocks, 0, st->tuples + st->tuple_pos);
				sbc_pi_medium_form(st->tuples + st->tuple_pos, sbc_pi_bytes(lu, blocks));
				st->tuple_pos += sbc_pi_bytes(lu, blocks);
			}
		} else {
			struct sbc_write_data w;
			struct scsi_sense_info s;

			rc = sbc_write_data_prepare(cmd, p, lba, blocks, 0, &w, &s);
			if (rc == 0)
				rc = sbc_medium_write_pi(lu, w.data, w.tuples, lba, blocks, sbc_write_flags(cmd));
			sbc_write_data_free(&w);
		}
		st->data_pos += len;
		st->cur_done += len;
		if (st->cur_done == (uint64_t)r->n * bs) {
			st->cur++;
			st->cur_done = 0;
		}
	}
	if (rc == -EBUSY) {
		/* Another streamed atomic command holds the backend's stream: SAM-5 BUSY, the initiator retries. */
		scsi_cmd_set_status(cmd, SCSI_STATUS_BUSY);
	} else if (rc < 0) {
		st->stream_open = false; /* a failed append ended the stream */
		scsi_cmd_fail_errno(cmd, rc, true);
	}
}

/* Worker: the whole command is in the record; make it durable and put it in place. */
static void commit_work(struct scsi_cmd *cmd)
{
	struct scatter_stream *st = cmd->handler_state;
	struct backend *be = st->lu->backend;
	int rc = 0;

	if (st->tuples && st->tuple_pos)
		rc = be->ops->stream_append(be, st->tuples, (size_t)st->tuple_pos);
	if (rc == 0) {
		rc = be->ops->stream_commit(be);
	}
	st->stream_open = false;
	if (rc < 0)
		scsi_cmd_fail_errno(cmd, rc, true);
}

static enum scsi_result next_piece(struct scsi_cmd *cmd);

/* Loop thread, after a piece: ask for the next one, or commit, or finish. */
static enum scsi_result after_piece(struct scsi_cmd *cmd)
{
	struct scatter_stream *st = cmd->handler_state;

	if (cmd->status != SCSI_STATUS_GOOD)
		return SCSI_FAILED;
	if ((uint64_t)cmd->data_out_offset + cmd->data_out_len < cmd->data_length)
		return scsi_cmd_next_data_out(cmd, next_piece);
	if (st->atomic)
		return scsi_cmd_run_io(cmd, commit_work, NULL);
	return SCSI_OK;
}

static enum scsi_result next_piece(struct scsi_cmd *cmd)
{
	return scsi_cmd_run_io(cmd, piece_work, after_piece);
}

enum scsi_result sbc_write_scattered_stream_exec(struct scsi_cmd *cmd, uint32_t lbdof, uint32_t count)
{
	struct scsi_lu *lu = cmd->lu;
	struct scatter_stream *st = calloc(1, sizeof(*st));

	if (!st)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	cmd->handler_state = st;
	cmd->handler_state_free = stream_free;
	st->lu = lu;
	st->atomic = sbc_write_scattered_is_atomic(lu);
	st->data_pos = (uint64_t)lbdof * lu->block_size;
	st->ranges = calloc(count + 1, sizeof(*st->ranges));
	if (!st->ranges)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *d = cmd->data_out + HEADER_LEN + (size_t)i * DESCRIPTOR_LEN;

		if (get_be32(d + 8))
			st->ranges[st->count++] = (struct stream_range){ get_be64(d), get_be32(d + 8) };
	}
	if (st->atomic && sbc_lu_has_pi(lu)) {
		st->tuples = malloc(sbc_pi_bytes(lu, cmd->nblocks) + 1);
		if (!st->tuples)
			return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	}
	return next_piece(cmd);
}
