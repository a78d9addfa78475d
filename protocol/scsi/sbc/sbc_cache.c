/*
 * SBC-4 SYNCHRONIZE CACHE(10)/(16) (5.26, 5.27) and PRE-FETCH(10)/(16) (5.11,
 * 5.12).
 *
 * The emulator's volatile cache is whatever the backend has not yet made
 * durable (the host's page cache for a file); SYNCHRONIZE CACHE makes it
 * durable with the backend's flush (fdatasync), always for the whole medium
 * since a backend cannot flush a range.  PRE-FETCH has no cache of its own to
 * fill: the device behaves as one whose cache has no room for the range,
 * which SBC-4 answers with GOOD (CONDITION MET is for a cache that holds the
 * whole range), after the usual range checks.
 */
#include "sbc/sbc.h"

/*
 * The LBA and NUMBER OF LOGICAL BLOCKS / PREFETCH LENGTH of the 10- and
 * 16-byte forms sit where READ's LBA and TRANSFER LENGTH do; IMMED is byte 1
 * bit 1 in all four.  Range rule (SBC-4 5.26 / 5.11): LBA + number past the
 * capacity is LOGICAL BLOCK ADDRESS OUT OF RANGE.  A number of 0 means "to
 * the last LBA" for SYNCHRONIZE CACHE and "nothing" for PRE-FETCH; either way
 * only the LBA itself is then checked.
 */
static enum scsi_result decode_range(struct scsi_cmd *cmd)
{
	cmd->lba = sbc_cdb_lba(cmd->cdb);
	cmd->nblocks = sbc_cdb_transfer_length(cmd->cdb);
	cmd->group_number = sbc_cdb_group_number(cmd->cdb);
	cmd->data_length = 0;
	return sbc_check_lba_range(cmd, cmd->lba, cmd->nblocks);
}

/* ---- SYNCHRONIZE CACHE(10)/(16) ---- */

enum scsi_result sbc_synchronize_cache_parse(struct scsi_cmd *cmd)
{
	return decode_range(cmd);
}

static void synchronize_cache_work(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	int rc;

	rc = lu->backend->ops->flush(lu->backend);
	if (rc == 0 && lu->zbc)
		rc = zbc_flush(lu);
	if (rc < 0)
		scsi_cmd_fail_errno(cmd, rc, true);
}

/*
 * SBC-4 5.26: IMMED = 1 allows GOOD as soon as the CDB is validated; the
 * flush still happens.  The simpler and stricter behaviour is used for both
 * values: status after the flush (an error then reaches the initiator as
 * status instead of a deferred error).
 */
enum scsi_result sbc_synchronize_cache_exec(struct scsi_cmd *cmd)
{
	return scsi_cmd_run_io(cmd, synchronize_cache_work, NULL);
}

/* ---- PRE-FETCH(10)/(16) ---- */

enum scsi_result sbc_pre_fetch_parse(struct scsi_cmd *cmd)
{
	return decode_range(cmd);
}

/*
 * SBC-4 5.11: with IMMED = 0 or 1 the device server returns CONDITION MET if
 * the cache can hold all the blocks, GOOD if it cannot (it then transfers as
 * many as fit, here none).  libiscsi's Prefetch10/16 tests expect GOOD.
 */
enum scsi_result sbc_pre_fetch_exec(struct scsi_cmd *cmd)
{
	(void)cmd;
	return SCSI_OK;
}
