/*
 * REPORT LUNS (SPC-4 6.33).
 *
 * CDB (12 bytes): byte 2 SELECT REPORT, bytes 6-9 ALLOCATION LENGTH.
 * SELECT REPORT 00h (every LU but well-known LUs) and 02h (every LU) give the
 * same list here, as the device has no well-known LUs; 01h (well-known LUs
 * only) gives an empty list.  The conglomerate values (10h-12h) and the rest
 * are INVALID FIELD IN CDB.  SPC-4 6.33: an ALLOCATION LENGTH below 16 is
 * INVALID FIELD IN CDB as well.
 *
 * The command runs for a LUN without a logical unit (OP_NO_LU_OK): SAM-5
 * hosts send it to LUN 0 whether or not LUN 0 exists.
 */
#include "spc/spc.h"

enum select_report {
	SELECT_REPORT_ALL_BUT_WELL_KNOWN = 0x00,
	SELECT_REPORT_WELL_KNOWN_ONLY = 0x01,
	SELECT_REPORT_ALL = 0x02,
};

enum scsi_result spc_report_luns_exec(struct scsi_cmd *cmd)
{
	const struct scsi_device *dev = cmd->nexus->dev;
	uint8_t select_report = cmd->cdb[2];
	uint32_t count = 0;
	uint8_t *b;

	cmd->allocation_length = get_be32(cmd->cdb + 6);
	switch (select_report) {
	case SELECT_REPORT_ALL_BUT_WELL_KNOWN:
	case SELECT_REPORT_WELL_KNOWN_ONLY:
	case SELECT_REPORT_ALL:
		break;
	default:
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, -1));
	}
	if (cmd->allocation_length < 16)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(6, -1));
	if (select_report != SELECT_REPORT_WELL_KNOWN_ONLY)
		for (unsigned i = 0; i < SCSI_MAX_LUNS; i++)
			if (dev->lus[i])
				count++;
	b = scsi_cmd_alloc_data_in(cmd, 8 + 8 * (size_t)count);
	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	put_be32(b, 8 * count); /* LUN LIST LENGTH */
	if (select_report != SELECT_REPORT_WELL_KNOWN_ONLY) {
		uint8_t *p = b + 8;
		for (unsigned i = 0; i < SCSI_MAX_LUNS; i++) {
			if (!dev->lus[i])
				continue;
			put_be64(p, scsi_lun_encode(dev->lus[i]->lun));
			p += 8;
		}
	}
	scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	return SCSI_OK;
}
