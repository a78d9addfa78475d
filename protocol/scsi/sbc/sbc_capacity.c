/*
 * SBC-4 READ CAPACITY(10) (5.20) and READ CAPACITY(16) (5.21): answered from
 * the LU's own state, no backend I/O: with protection information
 * P_TYPE/PROT_EN/P_I_EXPONENT of the current format, and ZBC's RC BASIS.
 */
#include <errno.h>

#include "sbc/sbc.h"
#include "zbc/zbc.h"

#define READ_CAPACITY_10_DATA_LEN 8
#define READ_CAPACITY_16_DATA_LEN 32

/*
 * The RETURNED LOGICAL BLOCK ADDRESS: the last LBA (0 on an empty LU); the
 * block count itself, one too many, under the fix-capacity quirk of the
 * usb-bridge profile (Linux US_FL_FIX_CAPACITY).
 */
static uint64_t last_lba(const struct scsi_lu *lu)
{
	if (lu->params.quirks & SCSI_QUIRK_FIX_CAPACITY)
		return lu->num_blocks;
	return lu->num_blocks ? lu->num_blocks - 1 : 0;
}

enum scsi_result sbc_read_capacity_10_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	uint64_t lba = last_lba(lu);
	uint8_t *d;

	/*
	 * SBC-2 5.10: the LOGICAL BLOCK ADDRESS field shall be zero when PMI is
	 * zero, else INVALID FIELD IN CDB.  SBC-3 made PMI and the field
	 * obsolete; the rule is kept (as LIO does) because compliance suites
	 * still test it.
	 */
	if (!(cmd->cdb[8] & 0x01) && get_be32(cmd->cdb + 2) != 0)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, -1));

	d = scsi_cmd_alloc_data_in(cmd, READ_CAPACITY_10_DATA_LEN);
	if (!d)
		return scsi_cmd_fail(cmd, scsi_sense_from_errno(ENOMEM, false));
	/* SBC-4 5.20.2: FFFFFFFFh tells the application client to use READ CAPACITY(16). */
	put_be32(d, lba > 0xffffffffull ? 0xffffffffu : (uint32_t)lba);
	put_be32(d + 4, lu->block_size);
	return SCSI_OK;
}

enum scsi_result sbc_read_capacity_16_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	uint32_t allocation_length = get_be32(cmd->cdb + 10);
	uint8_t *d;

	/* Same obsolete PMI rule as READ CAPACITY(10) (LBA in bytes 2-9, PMI byte 14 bit 0). */
	if (!(cmd->cdb[14] & 0x01) && get_be64(cmd->cdb + 2) != 0)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, -1));

	cmd->allocation_length = allocation_length;
	d = scsi_cmd_alloc_data_in(cmd, READ_CAPACITY_16_DATA_LEN);
	if (!d)
		return scsi_cmd_fail(cmd, scsi_sense_from_errno(ENOMEM, false));
	put_be64(d, last_lba(lu));
	put_be32(d + 8, lu->block_size);
	/* byte 12: RC BASIS, P_TYPE (type - 1), PROT_EN (SBC-4 5.21) */
	d[12] = (uint8_t)(zbc_rc_basis(cmd->lu) << 4);
	if (sbc_lu_has_pi(lu))
		d[12] |= (uint8_t)(((lu->protection_type - 1) << 1) | 0x01);
	/* byte 13: P_I_EXPONENT (0 without PI), LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT */
	d[13] = (uint8_t)((sbc_lu_has_pi(lu) ? lu->p_i_exponent << 4 : 0) | (lu->params.lbppbe & 0x0f));
	/*
	 * byte 14: LBPME = logical block provisioning management (UNMAP and
	 * friends); LBPRZ = 1: an unmapped block reads as zeros (holes in the
	 * backing file).  SBC-4 5.21.2: LBPRZ is only meaningful with LBPME set.
	 * LOWEST ALIGNED LOGICAL BLOCK ADDRESS = 0.
	 */
	if (lu->params.thin_provisioning)
		d[14] = 0x80 | 0x40;
	/*
	 * SPC-4 4.2.5.6: an ALLOCATION LENGTH shorter than the data is not an
	 * error; the transfer is truncated (0 transfers nothing).
	 */
	scsi_cmd_limit_data_in(cmd, allocation_length);
	return SCSI_OK;
}
