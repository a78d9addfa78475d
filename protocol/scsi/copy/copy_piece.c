/*
 * A piece of a copy (at most COPY_PIECE bytes of an EXTENDED COPY segment
 * or a WRITE USING TOKEN range), around its worker job (copy_blocks): what
 * the loop thread checks before its data moves and does after it landed,
 * so that the copy manager's reads and writes meet the medium as READ and
 * WRITE do.
 *
 * Before (copy_piece_begin):
 *   - a medium-error fault rule that holds a source block bad fails the
 *     copy as the READ would: 0A/11/00 UNRECOVERED READ ERROR, INFORMATION
 *     the first bad block (docs/control.md);
 *   - on zoned LUs (ZBC-2: the zone rules hold for every read and write of
 *     the medium, whoever asks for it), the source is checked as a READ of
 *     it on its LU (a token's may be another LU of the target) and the
 *     destination as a WRITE (zbc_rw.c): an offline, read-only,
 *     inactive or gap zone, a read past the write pointer of a sequential
 *     write required zone with URSWRZ 0, a destination that is not the
 *     write pointer (UNALIGNED WRITE COMMAND), one that crosses into a zone
 *     of another type (WRITE BOUNDARY VIOLATION), too many open zones
 *     (INSUFFICIENT ZONE RESOURCES).  A piece that passes takes the write
 *     ticket of its destination (the write pointer advanced at once, rolled
 *     back by the command's completion if its data never lands), and the
 *     source blocks above a write pointer are planned to read as zeros.
 *   Each failure ends the command with the sense key COPY ABORTED (SPC-4's
 *   third-party copy: an error found processing a segment) and the
 *   additional sense code the READ or WRITE would have got; the pieces
 *   before it stay written.
 * After a piece that landed (copy_piece_end): the write ticket ended with
 * the advance kept, and the medium-error blocks the piece wrote repaired, as
 * a WRITE repairs those it covers (scsi_fault_cmd_done).
 */
#include <stdlib.h>

#include "copy/copy.h"
#include "zbc/zbc.h"

/* A medium-error rule of src_lu holding one of [src, src + n) bad: the READ's sense, as COPY ABORTED. */
static bool source_bad(struct scsi_cmd *cmd, struct scsi_lu *src_lu, uint64_t src, uint32_t n)
{
	uint64_t bad;

	if (!scsi_fault_read_range(src_lu, src, n, &bad))
		return false;
	scsi_cmd_fail(cmd, sense_with_information(sense_make(SENSE_KEY_COPY_ABORTED, ASC_UNRECOVERED_READ_ERROR), bad));
	return true;
}

/*
 * Zoned LUs: the read rules of the source (of src_lu, when zoned), its
 * unwritten blocks, the write rules of the destination (of dst_lu, when
 * zoned).
 */
static enum scsi_result zones_begin(struct scsi_cmd *cmd, struct copy_piece *p)
{
	struct scsi_lu *own = cmd->lu;
	uint64_t lba = cmd->lba;
	uint32_t nblocks = cmd->nblocks;
	enum scsi_result r = SCSI_OK;

	/*
	 * The zone engine checks the command's own LU and range: the source's
	 * and the piece's, for the time of the checks (zbc_check_read only reads
	 * the LU's zones and stores its sense in cmd; zbc_write_begin keys its
	 * ticket by cmd on the LU it was given, which the completion ends:
	 * scsi_cmd_complete, its own LU's and the LUs it locks elsewhere).
	 */
	if (p->src != COPY_ZEROS && p->src_lu->zbc) {
		cmd->lu = p->src_lu;
		cmd->lba = p->src;
		cmd->nblocks = p->src_n;
		r = zbc_check_read(cmd);
		cmd->lu = own;
		/* Before the destination's advance: a source in the same zone reads what it holds now. */
		if (r == SCSI_OK && zbc_unwritten_plan(p->src_lu, p->src, p->src_n, &p->unwritten) < 0)
			r = scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	}
	if (r == SCSI_OK && p->dst_lu->zbc) {
		cmd->lu = p->dst_lu;
		cmd->lba = p->dst;
		cmd->nblocks = p->n;
		r = zbc_write_begin(cmd);
		cmd->lu = own;
	}
	cmd->lba = lba;
	cmd->nblocks = nblocks;
	if (r != SCSI_OK && cmd->sense_info.key != SENSE_KEY_ABORTED_COMMAND)
		cmd->sense_info.key = SENSE_KEY_COPY_ABORTED;
	return r;
}

enum scsi_result copy_piece_begin(struct scsi_cmd *cmd, struct copy_piece *p, struct scsi_lu *src_lu, uint64_t src,
				  struct scsi_lu *dst_lu, uint64_t dst, uint32_t n)
{
	enum scsi_result r = SCSI_OK;

	copy_piece_free(p);
	*p = (struct copy_piece){ .src_lu = src_lu, .dst_lu = dst_lu, .src = src, .dst = dst, .n = n,
				  .src_n = (uint32_t)((uint64_t)n * dst_lu->block_size / src_lu->block_size) };
	if (src != COPY_ZEROS && source_bad(cmd, src_lu, src, p->src_n))
		r = SCSI_FAILED;
	else if (dst_lu->zbc || src_lu->zbc)
		r = zones_begin(cmd, p);
	if (r != SCSI_OK)
		copy_piece_free(p);
	return r;
}

void copy_piece_end(struct scsi_cmd *cmd, struct copy_piece *p)
{
	if (p->n == 0)
		return;
	zbc_write_end_on(p->dst_lu, cmd, true);
	scsi_fault_written_range(p->dst_lu, p->dst, p->n);
	copy_piece_free(p);
}

void copy_piece_free(struct copy_piece *p)
{
	free(p->unwritten);
	*p = (struct copy_piece){ 0 };
}
