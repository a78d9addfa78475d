/*
 * WRITE SAME(10), WRITE SAME(16) and WRITE SAME(32) (SBC-4).
 *
 * CDB byte 1 (byte 10 of the 32-byte form, a type 2 LU's): bits 7:5
 * WRPROTECT, bit 4 ANCHOR, bit 3 UNMAP, bit 2 PBDATA and bit 1 LBDATA
 * (obsolete), bit 0 NDOB (16 and 32 only).  LBA and NUMBER OF LOGICAL BLOCKS
 * sit where the READ/WRITE shapes have them (sbc.h).  The opcode table's CDB
 * USAGE DATA refuses ANCHOR (ANC_SUP = 0), PBDATA and LBDATA before parse.
 *
 * Protection information (sbc_pi.h): the one block's tuples (received with
 * WRPROTECT != 0 and checked, or generated) are repeated over the range,
 * reference tags following the LBA (types 1, 2 from short CDBs) or counting
 * up from the received one (type 2); deallocated blocks get the escape.
 *
 * Rules implemented (choices marked as such):
 *  - NUMBER OF LOGICAL BLOCKS 0 writes from the LBA to the end of the medium
 *    (choice: WSNZ = 0 in the Block Limits VPD page).
 *  - More blocks than MAXIMUM WRITE SAME LENGTH (params.max_write_same_length,
 *    0 = no limit) -> 05/24/00 on the length field; past the capacity ->
 *    05/21/00.
 *  - UNMAP = 1 needs logical block provisioning (LBPWS/LBPWS10 = 1 exactly
 *    when thin provisioned); without it -> 05/24/00 on the UNMAP bit.  With
 *    it the blocks are deallocated when the data block is all zeros (what a
 *    deallocated block reads, LBPRZ = 1), else the data is written (SBC-4
 *    allows the device server to leave such blocks mapped).
 *  - NDOB = 1: no Data-Out; the data block is zeros.
 *  - The Data-Out is exactly one logical block: a transport announcing more
 *    (an expected data transfer length above it) is refused before any data
 *    moves, like one announcing less (cmd.c), with 05/0E/03.
 *
 * A large range is written on the worker in chunks (one job per chunk, at
 * most 1 MiB of repeated pattern in memory), so the command can be aborted
 * between chunks and never holds the whole range in memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sbc/sbc.h"

#define WS_ANCHOR 0x10
#define WS_UNMAP 0x08
#define WS_NDOB 0x01

/* Bytes per job when writing a pattern, and when zeroing or deallocating. */
#define WS_PATTERN_CHUNK (1u << 20)
#define WS_ZERO_CHUNK (64ull << 20)

enum ws_method {
	WS_WRITE_PATTERN,
	WS_WRITE_ZEROES,   /* all-zero block, UNMAP = 0: zeroes, blocks stay mapped */
	WS_DEALLOCATE,     /* all-zero block, UNMAP = 1: zeroes that may deallocate */
};

struct ws_state {
	enum ws_method method;
	uint64_t lba;        /* next block to write */
	uint64_t remaining;  /* blocks still to write */
	uint8_t *chunk;      /* WS_WRITE_PATTERN: the block repeated */
	uint32_t chunk_blocks;
	uint8_t *pi_first;   /* PI LUs: the tuples of the command's one block */
};

static void ws_state_free(void *p)
{
	struct ws_state *st = p;

	free(st->chunk);
	free(st->pi_first);
	free(st);
}

/* The flags byte: WRPROTECT, ANCHOR, UNMAP, NDOB. */
static uint8_t ws_flags(const uint8_t *cdb)
{
	return cdb[sbc_cdb_flags_byte(cdb)];
}

/*
 * The number of blocks the command writes: NUMBER OF LOGICAL BLOCKS, or with
 * 0 the blocks from LBA to the end of the medium (0 when LBA is past it).
 */
static uint64_t ws_number_of_blocks(const struct scsi_cmd *cmd, uint64_t lba)
{
	uint32_t n = sbc_cdb_transfer_length_raw(cmd->cdb);

	if (n != 0)
		return n;
	return lba < cmd->lu->num_blocks ? cmd->lu->num_blocks - lba : 0;
}

enum scsi_result sbc_write_same_parse(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	struct scsi_lu *lu = cmd->lu;
	bool ndob = cdb[0] != SCSI_OP_WRITE_SAME_10 && (ws_flags(cdb) & WS_NDOB);
	uint64_t max = lu->params.max_write_same_length;
	uint64_t nblocks;
	enum scsi_result r;

	cmd->lba = sbc_cdb_lba(cdb);
	cmd->protect = sbc_cdb_protect(cdb);
	cmd->group_number = sbc_cdb_group_number(cdb);
	r = sbc_check_protect(cmd, cmd->protect);
	if (r != SCSI_OK)
		return r;
	/* SBC-4 WRITE SAME: ANCHOR = 1 with ANC_SUP = 0 -> INVALID FIELD IN CDB (also refused by the usage data). */
	/* NDOB = 1 sends no block, so no protection information to check: WRPROTECT must be 000b. */
	if (ndob && cmd->protect)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb((uint16_t)sbc_cdb_flags_byte(cdb), 7));
	if (ws_flags(cdb) & WS_ANCHOR)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb((uint16_t)sbc_cdb_flags_byte(cdb), 4));
	/* UNMAP = 1 on an LU without logical block provisioning (LBPWS = 0). */
	if ((ws_flags(cdb) & WS_UNMAP) && !sbc_thin_provisioning_enabled(lu))
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb((uint16_t)sbc_cdb_flags_byte(cdb), 3));
	/* WSNZ = 0: NUMBER OF LOGICAL BLOCKS 0 means "to the last LBA", so the LBA itself must exist. */
	if (sbc_cdb_transfer_length_raw(cdb) == 0 && cmd->lba >= lu->num_blocks)
		return scsi_cmd_fail(cmd, sense_lba_out_of_range());
	nblocks = ws_number_of_blocks(cmd, cmd->lba);
	/* SBC-4 WRITE SAME: more than MAXIMUM WRITE SAME LENGTH -> INVALID FIELD IN CDB. */
	if (max != 0 && nblocks > max)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(sbc_cdb_transfer_length_offset(cdb), -1));
	r = sbc_check_lba_range(cmd, cmd->lba, nblocks);
	if (r != SCSI_OK)
		return r;
	cmd->nblocks = nblocks > UINT32_MAX ? UINT32_MAX : (uint32_t)nblocks;
	cmd->data_length = ndob ? 0 : sbc_wire_block_len(cmd);
	if ((cmd->dir == SCSI_DIR_TO_DEVICE || cmd->dir == SCSI_DIR_BIDI) && cmd->expected_length > cmd->data_length)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ILLEGAL_REQUEST,
						     ASC_INVALID_FIELD_IN_COMMAND_INFORMATION_UNIT));
	return SCSI_OK;
}

static void ws_work(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	struct backend *be = lu->backend;
	struct ws_state *st = cmd->handler_state;
	uint64_t nblocks = st->remaining;
	uint64_t offset = scsi_lu_offset(lu, st->lba);
	uint8_t *tuples = NULL;
	int rc = 0;

	if (st->method == WS_WRITE_PATTERN) {
		if (nblocks > st->chunk_blocks)
			nblocks = st->chunk_blocks;
	} else if (nblocks > WS_ZERO_CHUNK / lu->block_size) {
		nblocks = WS_ZERO_CHUNK / lu->block_size;
	}
	if (st->pi_first && st->method != WS_DEALLOCATE) {
		tuples = malloc(sbc_pi_bytes(lu, nblocks));
		if (!tuples) {
			scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
			return;
		}
		sbc_pi_replicate(cmd, st->pi_first, st->lba, (uint32_t)nblocks, (st->lba - cmd->lba) << lu->p_i_exponent,
				 tuples);
	}
	switch (st->method) {
	case WS_WRITE_PATTERN:
		rc = be->ops->write(be, st->chunk, (size_t)(nblocks * lu->block_size), offset, 0);
		break;
	case WS_WRITE_ZEROES:
		rc = be->ops->write_zeroes(be, offset, nblocks * lu->block_size, 0);
		break;
	case WS_DEALLOCATE:
		rc = be->ops->write_zeroes(be, offset, nblocks * lu->block_size, BE_ZERO_MAY_DISCARD);
		if (rc >= 0 && st->pi_first)
			rc = sbc_pi_discard(lu, st->lba, nblocks);
		break;
	}
	if (rc >= 0 && tuples)
		rc = sbc_pi_store(lu, tuples, st->lba, (uint32_t)nblocks, 0);
	free(tuples);
	if (rc < 0) {
		scsi_cmd_fail_errno(cmd, rc, true);
		cmd->sense_info = sense_with_information(cmd->sense_info, st->lba);
		return;
	}
	st->lba += nblocks;
	st->remaining -= nblocks;
	if (st->remaining == 0)
		sbc_zoned_persist(cmd, 0); /* the write pointers the whole range moved */
}

/* Loop thread, after each chunk: start the next one or finish. */
static enum scsi_result ws_after(struct scsi_cmd *cmd)
{
	struct ws_state *st = cmd->handler_state;

	if (st->remaining == 0)
		return SCSI_OK;
	return scsi_cmd_run_io(cmd, ws_work, ws_after);
}

enum scsi_result sbc_write_same_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	bool unmap = (ws_flags(cmd->cdb) & WS_UNMAP) != 0;
	const uint8_t *block = cmd->data_length ? cmd->data_out : NULL; /* NULL: NDOB, zeros */
	struct ws_state *st;
	enum scsi_result r;
	uint8_t *split = NULL;

	/*
	 * Zoned LUs: the write rules and the write pointer advance, before
	 * anything else (the zone engine may run exec again later).
	 */
	r = sbc_zoned_write_begin(cmd);
	if (r != SCSI_OK)
		return r;
	st = calloc(1, sizeof(*st));
	if (!st)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	cmd->handler_state = st;
	cmd->handler_state_free = ws_state_free;
	st->lba = cmd->lba;
	st->remaining = ws_number_of_blocks(cmd, cmd->lba);
	if (sbc_lu_has_pi(lu)) {
		struct sbc_write_data w = { 0 };
		struct scsi_sense_info s = { 0 };
		uint8_t *zeros = block ? NULL : calloc(1, lu->block_size);
		int rc = block || zeros ? sbc_write_data_prepare(cmd, block ? block : zeros, cmd->lba, 1, 0, &w, &s)
					: -ENOMEM;

		if (rc == 0) {
			/* Keep the block's user data and tuples; the Data-Out's interleaved form is not used again. */
			split = malloc(lu->block_size);
			st->pi_first = malloc(sbc_pi_bytes(lu, 1));
			if (split && st->pi_first) {
				memcpy(split, w.data, lu->block_size);
				memcpy(st->pi_first, w.tuples, sbc_pi_bytes(lu, 1));
			} else {
				rc = -ENOMEM;
			}
		}
		sbc_write_data_free(&w);
		free(zeros);
		if (rc != 0) {
			free(split);
			return scsi_cmd_fail(cmd, rc > 0 ? s : sense_make(SENSE_KEY_ABORTED_COMMAND,
									     ASC_INSUFFICIENT_RESOURCES));
		}
		if (block)
			block = split;
	}
	if (unmap) {
		/*
		 * UNMAP = 1 (only accepted when thin provisioned): the blocks are
		 * deallocated whatever the Data-Out block holds, and read back
		 * as zeros (LBPRZ = 1), as Linux scsi_debug and LIO do.
		 */
		st->method = WS_DEALLOCATE;
	} else if (!block || bytes_all_zero(block, lu->block_size)) {
		st->method = unmap ? WS_DEALLOCATE : WS_WRITE_ZEROES;
	} else {
		uint64_t blocks = st->remaining;

		st->method = WS_WRITE_PATTERN;
		if (blocks > WS_PATTERN_CHUNK / lu->block_size)
			blocks = WS_PATTERN_CHUNK / lu->block_size;
		st->chunk_blocks = (uint32_t)blocks;
		st->chunk = malloc((size_t)blocks * lu->block_size);
		if (!st->chunk) {
			free(split);
			return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
		}
		for (uint64_t i = 0; i < blocks; i++)
			memcpy(st->chunk + i * lu->block_size, block, lu->block_size);
	}
	free(split);
	if (st->remaining == 0)
		return SCSI_OK;
	return scsi_cmd_run_io(cmd, ws_work, ws_after);
}
