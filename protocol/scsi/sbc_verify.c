/*
 * SBC-4 VERIFY(10) / (12) / (16) (5.36-5.38).
 *
 * BYTCHK (byte 1 bits 2:1):
 *   00b  medium verification only: the blocks are read (a backend read error
 *        is the verify failure), no Data-Out;
 *   01b  the Data-Out holds VERIFICATION LENGTH blocks, compared byte by byte
 *        with the medium;
 *   10b  reserved: INVALID FIELD IN CDB;
 *   11b  the Data-Out holds one block, compared with every block of the range
 *        (as if duplicated, WRITE SAME style).
 * A miscompare is MISCOMPARE / MISCOMPARE DURING VERIFY OPERATION with the
 * INFORMATION field holding the offset of the first differing byte in the
 * (duplicated) Data-Out Buffer.  Unmapped blocks read as zeros and compare as
 * such (the Block Device Characteristics VPD page should say VBULS = 1).
 * Not here: VRPROTECT != 0 (no PI yet: rejected), VERIFY(32).
 */
#include <errno.h>
#include <stdlib.h>

#include "sbc.h"

/* The medium is read in pieces of at most this many bytes (a verify may span gigabytes). */
#define VERIFY_CHUNK (1u << 20)

enum scsi_result sbc_verify_parse(struct scsi_cmd *cmd)
{
	uint8_t bytchk = sbc_cdb_bytchk(cmd->cdb);
	enum scsi_result r;

	if (bytchk == 2)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(1, 2));
	r = sbc_decode_rw(cmd);
	if (r != SCSI_OK)
		return r;
	switch (bytchk) {
	case 1:
		cmd->data_length = cmd->nblocks * cmd->lu->block_size;
		break;
	case 3:
		cmd->data_length = cmd->nblocks ? cmd->lu->block_size : 0;
		break;
	default:
		cmd->data_length = 0;
		break;
	}
	return SCSI_OK;
}

/*
 * Compares a piece of the medium (starting pos bytes into the range) with
 * the expected Data-Out; one_block: the Data-Out is one block repeated.
 */
static bool compare_piece(const struct scsi_cmd *cmd, const uint8_t *medium, size_t len, uint64_t pos,
			  bool one_block, size_t *first)
{
	uint32_t bs = cmd->lu->block_size;

	if (!one_block)
		return sbc_compare(medium, cmd->data_out + pos, len, first);
	/* pos and len are whole blocks */
	for (size_t done = 0; done < len; done += bs) {
		if (!sbc_compare(medium + done, cmd->data_out, bs, first)) {
			*first += done;
			return false;
		}
	}
	return true;
}

static void verify_work(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	uint8_t bytchk = sbc_cdb_bytchk(cmd->cdb);
	uint64_t total = (uint64_t)cmd->nblocks * lu->block_size;
	size_t chunk = total < VERIFY_CHUNK ? (size_t)total : VERIFY_CHUNK;
	uint8_t *medium;
	size_t first;

	chunk -= chunk % lu->block_size;
	medium = malloc(chunk);
	if (!medium) {
		scsi_cmd_fail(cmd, scsi_sense_from_errno(ENOMEM, false));
		return;
	}
	for (uint64_t pos = 0; pos < total; pos += chunk) {
		size_t len = total - pos < chunk ? (size_t)(total - pos) : chunk;
		int rc = sbc_medium_read(lu, medium, cmd->lba + pos / lu->block_size, len);

		if (rc < 0) {
			scsi_cmd_fail(cmd, scsi_sense_from_errno(rc, false));
			break;
		}
		if (bytchk != 0 && !compare_piece(cmd, medium, len, pos, bytchk == 3, &first)) {
			scsi_cmd_fail(cmd, sbc_sense_miscompare(pos + first));
			break;
		}
	}
	free(medium);
}

enum scsi_result sbc_verify_exec(struct scsi_cmd *cmd)
{
	/* SBC-4 5.36: a VERIFICATION LENGTH of zero verifies nothing and is not an error. */
	if (cmd->nblocks == 0)
		return SCSI_OK;
	if (sbc_zoned_check_read(cmd) != SCSI_OK)
		return SCSI_FAILED;
	return scsi_cmd_run_io(cmd, verify_work, NULL);
}
