/*
 * SBC-4 READ DEFECT DATA(10) (5.19) and READ DEFECT DATA(12) (5.20).
 *
 * An emulated medium has no defects: both the primary (PLIST) and the grown
 * (GLIST) list exist and are empty.  An empty list is valid in any address
 * descriptor format, so the requested DEFECT LIST FORMAT is echoed; the list
 * valid bits say which lists the header describes (the ones requested).
 * The vendor-specific format (110b) and the reserved value (111b) are
 * refused with INVALID FIELD IN CDB: the emulator has no vendor format, and
 * SBC-4's alternative (data in another format plus RECOVERED ERROR, DEFECT
 * LIST NOT FOUND) would need Data-In with CHECK CONDITION.
 */
#include <errno.h>

#include "sbc/sbc.h"

#define DEFECT_FORMAT_VENDOR_SPECIFIC 0x6
#define DEFECT_FORMAT_RESERVED 0x7

enum scsi_result sbc_read_defect_data_exec(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	bool twelve = cdb[0] == SCSI_OP_READ_DEFECT_DATA_12;
	uint16_t flags_byte = twelve ? 1 : 2; /* REQ_PLIST (bit 4), REQ_GLIST (bit 3), format (2:0) */
	uint8_t flags = cdb[flags_byte] & 0x1f;
	uint8_t format = flags & 0x07;
	uint32_t allocation_length = twelve ? get_be32(cdb + 6) : get_be16(cdb + 7);
	uint8_t *d;

	if (format == DEFECT_FORMAT_VENDOR_SPECIFIC || format == DEFECT_FORMAT_RESERVED)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(flags_byte, 2));

	cmd->allocation_length = allocation_length;
	/*
	 * Parameter data header: (10) byte 1 = PLISTV | GLISTV | DEFECT LIST
	 * FORMAT, bytes 2-3 DEFECT LIST LENGTH; (12) the same byte 1, bytes 2-3
	 * GENERATION CODE (0: not reported), bytes 4-7 DEFECT LIST LENGTH.
	 * Length 0 in both: no descriptors follow.
	 */
	d = scsi_cmd_alloc_data_in(cmd, twelve ? 8 : 4);
	if (!d)
		return scsi_cmd_fail(cmd, scsi_sense_from_errno(ENOMEM, false));
	d[1] = flags;
	scsi_cmd_limit_data_in(cmd, allocation_length);
	return SCSI_OK;
}
