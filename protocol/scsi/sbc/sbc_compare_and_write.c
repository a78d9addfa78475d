/*
 * SBC-4 COMPARE AND WRITE (5.3): compare NUMBER OF LOGICAL BLOCKS blocks of
 * the medium with the first half of the Data-Out (the verify instance) and,
 * only if they are equal, write the second half (the write instance).  The
 * command holds its blocks' LBA lock exclusively (OP_LBA_EXCLUSIVE,
 * lba_lock.c), so no other command's I/O to them falls between the compare
 * and the write (the atomicity SBC-4 5.3 asks for).
 *
 * Protection information (sbc_pi.h): with WRPROTECT != 0 both instances
 * carry tuples interleaved and both are checked by the WRPROTECT table
 * before the compare; the write instance's tuples (or generated ones) are
 * stored with its data.
 */
#include <errno.h>
#include <stdlib.h>

#include "sbc/sbc.h"

/* The Block Limits VPD MAXIMUM COMPARE AND WRITE LENGTH; 0 hides the command (RSOC, dispatch). */
bool sbc_compare_and_write_enabled(const struct scsi_lu *lu)
{
	return lu->params.max_compare_and_write != 0;
}

enum scsi_result sbc_compare_and_write_parse(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	enum scsi_result r;

	cmd->lba = get_be64(cdb + 2);
	cmd->nblocks = cdb[13];
	cmd->protect = sbc_cdb_protect(cdb);
	cmd->dpo = sbc_cdb_dpo(cdb);
	cmd->fua = sbc_cdb_fua(cdb);
	cmd->group_number = cdb[14] & 0x3f;

	r = sbc_check_protect(cmd, cmd->protect);
	if (r != SCSI_OK)
		return r;
	r = sbc_check_dpofua(cmd, cmd->dpo, cmd->fua);
	if (r != SCSI_OK)
		return r;
	/*
	 * SBC-4 5.3: NUMBER OF LOGICAL BLOCKS over the MAXIMUM COMPARE AND WRITE
	 * LENGTH -> INVALID FIELD IN CDB (on byte 13).
	 */
	if (cmd->nblocks > cmd->lu->params.max_compare_and_write)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(13, -1));
	r = sbc_check_lba_range(cmd, cmd->lba, cmd->nblocks);
	if (r != SCSI_OK)
		return r;
	/* The Data-Out holds the verify instance then the write instance. */
	cmd->data_length = 2u * cmd->nblocks * sbc_wire_block_len(cmd);
	/*
	 * The command cannot run on part of its Data-Out: an expected transfer
	 * length that differs from 2 * NUMBER OF LOGICAL BLOCKS blocks is
	 * refused before any data moves (as LIO does; libiscsi's
	 * CompareAndWrite.InvalidDataOutSize wants an error either way).  That
	 * includes NUMBER OF LOGICAL BLOCKS 0 with Data-Out announced: libiscsi
	 * 1.19's CompareAndWrite.Simple sends 256 blocks (byte 13 wraps to 0)
	 * and expects INVALID FIELD IN CDB.
	 */
	if (cmd->expected_length != cmd->data_length)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(13, -1));
	return SCSI_OK;
}

static void compare_and_write_work(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	struct backend *be = lu->backend;
	size_t len = (size_t)cmd->nblocks * lu->block_size;
	uint64_t offset = scsi_lu_offset(lu, cmd->lba);
	uint8_t *medium = malloc(len);
	struct sbc_write_data verify = { 0 }, write = { 0 };
	struct scsi_sense_info s;
	size_t first;
	int rc;

	if (!medium) {
		scsi_cmd_fail(cmd, scsi_sense_from_errno(ENOMEM, false));
		return;
	}
	rc = sbc_write_data_prepare(cmd, cmd->data_out, cmd->lba, cmd->nblocks, 0, &verify, &s);
	if (rc == 0)
		rc = sbc_write_data_prepare(cmd, cmd->data_out + (size_t)cmd->nblocks * sbc_wire_block_len(cmd),
					    cmd->lba, cmd->nblocks, 0, &write, &s);
	if (rc != 0) {
		(rc > 0 ? scsi_cmd_fail(cmd, s) : scsi_cmd_fail_errno(cmd, rc, false));
		goto out;
	}
	rc = be->ops->read(be, medium, len, offset);
	if (rc >= 0)
		sbc_zoned_zero_unwritten(cmd, cmd->lba, medium, len);
	if (rc < 0) {
		scsi_cmd_fail_errno(cmd, rc, false);
	} else if (!sbc_compare(medium, verify.data, len, &first)) {
		/*
		 * SBC-4 5.3: MISCOMPARE DURING VERIFY OPERATION, INFORMATION = the
		 * offset from the start of the Data-Out Buffer to the first byte
		 * that was not equal; nothing is written.
		 */
		scsi_cmd_fail(cmd, sbc_sense_miscompare(first));
	} else {
		rc = be->ops->write(be, write.data, len, offset, sbc_write_flags(cmd));
		if (rc >= 0 && write.tuples)
			rc = sbc_pi_store(lu, write.tuples, cmd->lba, cmd->nblocks, sbc_write_flags(cmd));
		if (rc < 0)
			scsi_cmd_fail_errno(cmd, rc, true);
		sbc_zoned_persist(cmd, sbc_write_flags(cmd));
	}
out:
	sbc_write_data_free(&verify);
	sbc_write_data_free(&write);
	free(medium);
}

enum scsi_result sbc_compare_and_write_exec(struct scsi_cmd *cmd)
{
	/* SBC-4 5.3: NUMBER OF LOGICAL BLOCKS 0 compares and writes nothing; not an error. */
	enum scsi_result r;

	if (cmd->nblocks == 0)
		return SCSI_OK;
	/* The blocks compared: those of a zone above its write pointer hold zeros. */
	if (sbc_zoned_plan_unwritten(cmd) != SCSI_OK)
		return SCSI_FAILED;
	r = sbc_zoned_write_begin(cmd);
	if (r != SCSI_OK)
		return r;
	sbc_apply_write_cache(cmd);
	return scsi_cmd_run_io(cmd, compare_and_write_work, NULL);
}
