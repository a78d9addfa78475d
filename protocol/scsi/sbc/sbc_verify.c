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
 *
 * Protection information (sbc_pi.h): the medium's tuples are checked by the
 * VRPROTECT table (the RDPROTECT one).  With VRPROTECT != 0 and BYTCHK != 0
 * the Data-Out carries tuples interleaved; the user data is compared, the
 * received tuples are not (sbcemu's reading; docs/pi.md).  VERIFY(32) is the
 * type 2 form.
 */
#include <errno.h>
#include <stdlib.h>

#include "sbc/sbc.h"

/* The medium is read in pieces of at most this many bytes (a verify may span gigabytes). */
#define VERIFY_CHUNK (1u << 20)

enum scsi_result sbc_verify_parse(struct scsi_cmd *cmd)
{
	uint8_t bytchk = sbc_cdb_bytchk(cmd->cdb);
	enum scsi_result r;

	if (bytchk == 2)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb((uint16_t)sbc_cdb_flags_byte(cmd->cdb), 2));
	r = sbc_decode_rw(cmd);
	if (r != SCSI_OK)
		return r;
	switch (bytchk) {
	case 1:
		cmd->data_length = cmd->nblocks * sbc_wire_block_len(cmd);
		break;
	case 3:
		cmd->data_length = cmd->nblocks ? sbc_wire_block_len(cmd) : 0;
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
static bool compare_piece(const struct scsi_cmd *cmd, const uint8_t *expected, const uint8_t *medium, size_t len,
			  uint64_t pos, bool one_block, size_t *first)
{
	uint32_t bs = cmd->lu->block_size;

	if (!one_block)
		return sbc_compare(medium, expected + pos, len, first);
	/* pos and len are whole blocks */
	for (size_t done = 0; done < len; done += bs) {
		if (!sbc_compare(medium + done, expected, bs, first)) {
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
	bool pi = sbc_lu_has_pi(lu);
	const uint8_t *expected = cmd->data_out;
	uint8_t *split = NULL, *medium, *tuples = NULL;
	struct sbc_pi_checks c;
	struct scsi_sense_info s;
	size_t first;

	chunk -= chunk % lu->block_size;
	medium = malloc(chunk);
	if (pi) {
		sbc_pi_checks_init(cmd, cmd->protect, &c);
		tuples = malloc(sbc_pi_bytes(lu, chunk / lu->block_size));
	}
	/* The Data-Out's user data without its tuples. */
	if (pi && cmd->protect && bytchk != 0) {
		uint32_t n = bytchk == 3 ? 1 : cmd->nblocks;

		split = malloc((size_t)n * lu->block_size + sbc_pi_bytes(lu, n));
		if (split)
			sbc_pi_split(lu, cmd->data_out, n, split, split + (size_t)n * lu->block_size);
		expected = split;
	}
	if (!medium || (pi && !tuples) || (bytchk != 0 && !expected)) {
		scsi_cmd_fail(cmd, scsi_sense_from_errno(ENOMEM, false));
		goto out;
	}
	for (uint64_t pos = 0; pos < total; pos += chunk) {
		size_t len = total - pos < chunk ? (size_t)(total - pos) : chunk;
		uint64_t lba = cmd->lba + pos / lu->block_size;
		uint32_t n = (uint32_t)(len / lu->block_size);
		int rc = pi ? sbc_medium_read_checked(lu, &c, lba, n, (pos / lu->block_size) << lu->p_i_exponent, medium,
						      tuples, &s, 0)
			    : sbc_medium_read(lu, medium, lba, len);

		if (rc < 0) {
			scsi_cmd_fail_errno(cmd, rc, false);
			break;
		}
		if (rc > 0) {
			scsi_cmd_fail(cmd, s);
			break;
		}
		sbc_zoned_zero_unwritten(cmd, lba, medium, len);
		if (bytchk != 0 && !compare_piece(cmd, expected, medium, len, pos, bytchk == 3, &first)) {
			scsi_cmd_fail(cmd, sbc_sense_miscompare(pos + first));
			break;
		}
	}
out:
	free(medium);
	free(tuples);
	free(split);
}

enum scsi_result sbc_verify_exec(struct scsi_cmd *cmd)
{
	/* SBC-4 5.36: a VERIFICATION LENGTH of zero verifies nothing and is not an error. */
	if (cmd->nblocks == 0)
		return SCSI_OK;
	if (sbc_zoned_check_read(cmd) != SCSI_OK || sbc_zoned_plan_unwritten(cmd) != SCSI_OK)
		return SCSI_FAILED;
	return scsi_cmd_run_io(cmd, verify_work, NULL);
}
