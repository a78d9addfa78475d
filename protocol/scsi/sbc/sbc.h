/*
 * Shared helpers of the SBC-4 command handlers: CDB-shape decoders for the
 * 6/10/12/16-byte READ/WRITE-family layouts and the common checks (PROTECT
 * field, MAXIMUM TRANSFER LENGTH, LBA range).
 *
 * The CDB shape is taken from the operation code's group code (SPC-4 4.2.5.1,
 * table 4): group 0 = 6 bytes, 1 and 2 = 10 bytes, 4 = 16 bytes, 5 = 12
 * bytes.  The layouts are SBC-4's READ/WRITE ones (5.15 to 5.19, 5.31 to
 * 5.35):
 *
 *   6-byte:  LBA = byte 1 bits 4:0 + bytes 2-3 (21 bits), TRANSFER LENGTH = byte 4
 *   10-byte: LBA = bytes 2-5, GROUP NUMBER = byte 6, TRANSFER LENGTH = bytes 7-8
 *   12-byte: LBA = bytes 2-5, TRANSFER LENGTH = bytes 6-9, GROUP NUMBER = byte 10
 *   16-byte: LBA = bytes 2-9, TRANSFER LENGTH = bytes 10-13, GROUP NUMBER = byte 14
 *
 * and, for every shape but 6 bytes, byte 1 bits 7:5 = RDPROTECT / WRPROTECT /
 * VRPROTECT / ORPROTECT, bit 4 = DPO, bit 3 = FUA.  WRITE SAME(10/16),
 * PRE-FETCH and SYNCHRONIZE CACHE share the LBA and length positions (their
 * NUMBER OF LOGICAL BLOCKS / PREFETCH LENGTH fields sit where TRANSFER LENGTH
 * does).  COMPARE AND WRITE does not (its NUMBER OF LOGICAL BLOCKS is byte 13).
 *
 * Everything here is pure (no I/O) and safe to call from parse functions.
 */
#ifndef SBCEMU_SBC_H
#define SBCEMU_SBC_H

#ifndef SBCE_BUILDING_SCSI
#error "sbcemu layering: sbc.h is internal to the SCSI core (protocol/scsi/): use its public headers"
#endif

#include <stdbool.h>
#include <stdint.h>

#include "sbc/sbc_pi.h"
#include "core/scsi_internal.h"
#include "zbc/zbc.h"

/* CDB length of the shape of cdb[0] (6, 10, 12 or 16); 0 for groups 3, 6, 7. */
static inline unsigned sbc_cdb_shape(const uint8_t *cdb)
{
	switch (cdb[0] >> 5) {
	case 0:
		return 6;
	case 1:
	case 2:
		return 10;
	case 4:
		return 16;
	case 5:
		return 12;
	case 3:
		/* 7Fh: the 32-byte variable-length READ/WRITE family (SBC-4 5.20, 5.50): type 2 protection. */
		return cdb[0] == SCSI_OP_VARIABLE_LENGTH ? 32 : 0;
	default:
		return 0;
	}
}

/* The byte holding RDPROTECT / WRPROTECT / VRPROTECT, DPO, FUA and BYTCHK: 1, or 10 in 32-byte CDBs. */
static inline unsigned sbc_cdb_flags_byte(const uint8_t *cdb)
{
	return sbc_cdb_shape(cdb) == 32 ? 10 : 1;
}

/* LOGICAL BLOCK ADDRESS (6-byte form: 21 bits). */
static inline uint64_t sbc_cdb_lba(const uint8_t *cdb)
{
	switch (sbc_cdb_shape(cdb)) {
	case 6:
		return ((uint32_t)(cdb[1] & 0x1f) << 16) | get_be16(cdb + 2);
	case 10:
	case 12:
		return get_be32(cdb + 2);
	case 16:
		return get_be64(cdb + 2);
	case 32:
		return get_be64(cdb + 12);
	default:
		return 0;
	}
}

/*
 * The TRANSFER LENGTH field as written in the CDB, without interpretation
 * (for the 6-byte form 0 is returned as 0; see sbc_cdb_transfer_length).
 */
static inline uint32_t sbc_cdb_transfer_length_raw(const uint8_t *cdb)
{
	switch (sbc_cdb_shape(cdb)) {
	case 6:
		return cdb[4];
	case 10:
		return get_be16(cdb + 7);
	case 12:
		return get_be32(cdb + 6);
	case 16:
		return get_be32(cdb + 10);
	case 32:
		return get_be32(cdb + 28);
	default:
		return 0;
	}
}

/*
 * TRANSFER LENGTH in logical blocks.  SBC-4 5.15 (READ(6)) / 5.42 (WRITE(6)):
 * a TRANSFER LENGTH of zero in the 6-byte form means 256 blocks; in the other
 * forms zero means no data is transferred and it is not an error.
 */
static inline uint32_t sbc_cdb_transfer_length(const uint8_t *cdb)
{
	uint32_t len = sbc_cdb_transfer_length_raw(cdb);

	if (sbc_cdb_shape(cdb) == 6 && len == 0)
		return 256;
	return len;
}

/* Byte offset of the TRANSFER LENGTH field (for field pointers). */
static inline uint16_t sbc_cdb_transfer_length_offset(const uint8_t *cdb)
{
	switch (sbc_cdb_shape(cdb)) {
	case 6:
		return 4;
	case 10:
		return 7;
	case 12:
		return 6;
	case 16:
		return 10;
	case 32:
		return 28;
	default:
		return 0;
	}
}

/* RDPROTECT / WRPROTECT / VRPROTECT / ORPROTECT: flags byte bits 7:5 (none in the 6-byte form). */
static inline uint8_t sbc_cdb_protect(const uint8_t *cdb)
{
	return sbc_cdb_shape(cdb) == 6 ? 0 : (uint8_t)(cdb[sbc_cdb_flags_byte(cdb)] >> 5);
}

/* DPO: flags byte bit 4 (none in the 6-byte form). */
static inline bool sbc_cdb_dpo(const uint8_t *cdb)
{
	return sbc_cdb_shape(cdb) != 6 && (cdb[sbc_cdb_flags_byte(cdb)] & 0x10);
}

/* FUA: flags byte bit 3 (none in the 6-byte form). */
static inline bool sbc_cdb_fua(const uint8_t *cdb)
{
	return sbc_cdb_shape(cdb) != 6 && (cdb[sbc_cdb_flags_byte(cdb)] & 0x08);
}

/* BYTCHK of VERIFY / WRITE AND VERIFY: flags byte bits 2:1. */
static inline uint8_t sbc_cdb_bytchk(const uint8_t *cdb)
{
	return (cdb[sbc_cdb_flags_byte(cdb)] >> 1) & 0x3;
}

/* GROUP NUMBER: byte 6 (10-byte), 10 (12-byte), 14 (16-byte), bits 5:0. */
static inline uint8_t sbc_cdb_group_number(const uint8_t *cdb)
{
	switch (sbc_cdb_shape(cdb)) {
	case 10:
		return cdb[6] & 0x3f;
	case 12:
		return cdb[10] & 0x3f;
	case 16:
		return cdb[14] & 0x3f;
	case 32:
		return cdb[6] & 0x3f;
	default:
		return 0;
	}
}

/*
 * The PROTECT field (SBC-4 4.22.2 and the RDPROTECT / WRPROTECT tables), checked in parse; the field sits
 * in byte 1, byte 10 of 32-byte CDBs, byte 2 of WRITE SCATTERED(16):
 *  - nonzero on an LU not formatted with PI: INVALID FIELD IN CDB (SBC-4 4.22);
 *  - 110b and 111b are reserved: INVALID FIELD IN CDB;
 *  - nonzero in a 6/10/12/16-byte CDB on a type 2 LU: INVALID COMMAND
 *    OPERATION CODE (SBC-4 4.22.2.4: type 2 takes the 32-byte CDBs; the
 *    digest's choice between LIO's 24/00 and scsi_debug's 20/00).
 * Also takes the expected tags of a 32-byte CDB (bytes 20-27).
 */
static inline enum scsi_result sbc_check_protect(struct scsi_cmd *cmd, uint8_t protect)
{
	const uint8_t *cdb = cmd->cdb;
	bool cdb32 = cdb[0] == SCSI_OP_VARIABLE_LENGTH;
	uint16_t byte = cdb32 ? 10 : cdb[0] == SCSI_OP_SERVICE_ACTION_OUT_16 ? 2 : 1;

	cmd->pi_cdb32 = cdb32;
	if (cdb32) {
		cmd->pi_ref_tag = get_be32(cdb + 20);
		cmd->pi_app_tag = get_be16(cdb + 24);
		cmd->pi_app_mask = get_be16(cdb + 26);
	}
	if (protect == 0)
		return SCSI_OK;
	if (!sbc_lu_has_pi(cmd->lu) || protect > 5)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(byte, 7));
	if (cmd->lu->protection_type == 2 && !cdb32)
		return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
	return SCSI_OK;
}

/*
 * Block Limits VPD MAXIMUM TRANSFER LENGTH (SBC-4 6.6.4): a command whose
 * transfer length exceeds it is terminated with INVALID FIELD IN CDB; the
 * field pointer names the transfer length field (byte len_offset).  0 in
 * params.max_transfer_length means no limit.
 */
static inline enum scsi_result sbc_check_max_transfer_length(struct scsi_cmd *cmd, uint64_t nblocks,
							      uint16_t len_offset)
{
	uint32_t max = cmd->lu->params.max_transfer_length;

	if (max != 0 && nblocks > max)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(len_offset, -1));
	/* A transfer must also fit the 32-bit byte counts of the core and the transports. */
	if (nblocks * sbc_wire_block_len(cmd) > UINT32_MAX)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(len_offset, -1));
	return SCSI_OK;
}

/*
 * SBC-4 6.5.2 (Caching mode page) / 5.x: the DPOFUA bit of the mode
 * parameter header says whether DPO and FUA are supported; when it is zero a
 * CDB with DPO or FUA set is INVALID FIELD IN CDB (libiscsi's DpoFua tests
 * check both sides).  Field pointer on bit 4 (DPO) or bit 3 (FUA) of the
 * flags byte: byte 1, or byte 10 of a 32-byte CDB (SBC-4 5.20, 5.47).
 */
static inline enum scsi_result sbc_check_dpofua(struct scsi_cmd *cmd, bool dpo, bool fua)
{
	uint16_t byte = (uint16_t)sbc_cdb_flags_byte(cmd->cdb);

	if (cmd->lu->mode_current.dpofua)
		return SCSI_OK;
	if (dpo)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(byte, 4));
	if (fua)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(byte, 3));
	return SCSI_OK;
}

/*
 * SBC-4 4.5: an LBA plus length beyond the capacity is LOGICAL BLOCK ADDRESS
 * OUT OF RANGE (05/21/00).  Returns SCSI_OK or SCSI_FAILED (sense stored).
 */
static inline enum scsi_result sbc_check_lba_range(struct scsi_cmd *cmd, uint64_t lba, uint64_t nblocks)
{
	if (scsi_lu_range_bad(cmd->lu, lba, nblocks))
		return scsi_cmd_fail(cmd, sense_lba_out_of_range());
	return SCSI_OK;
}

/*
 * The common decode of a READ/WRITE-shaped CDB (6/10/12/16 bytes): sets
 * cmd->lba, nblocks, protect, dpo, fua, group_number and checks, in this
 * order, the PROTECT field, DPO/FUA support, the MAXIMUM TRANSFER LENGTH and
 * the LBA range.
 * Does not set data_length.  Returns SCSI_OK or SCSI_FAILED (sense stored).
 */
static inline enum scsi_result sbc_decode_rw(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	enum scsi_result r;

	cmd->lba = sbc_cdb_lba(cdb);
	cmd->nblocks = sbc_cdb_transfer_length(cdb);
	cmd->protect = sbc_cdb_protect(cdb);
	cmd->dpo = sbc_cdb_dpo(cdb);
	cmd->fua = sbc_cdb_fua(cdb);
	cmd->group_number = sbc_cdb_group_number(cdb);

	r = sbc_check_protect(cmd, cmd->protect);
	if (r != SCSI_OK)
		return r;
	r = sbc_check_dpofua(cmd, cmd->dpo, cmd->fua);
	if (r != SCSI_OK)
		return r;
	r = sbc_check_max_transfer_length(cmd, cmd->nblocks, sbc_cdb_transfer_length_offset(cdb));
	if (r != SCSI_OK)
		return r;
	return sbc_check_lba_range(cmd, cmd->lba, cmd->nblocks);
}

/*
 * WRITE SCATTERED larger than this takes its Data-Out in pieces of this size
 * (a multiple of every block size, and more than the largest FirstBurstLength).
 */
#define SBC_STREAM_WINDOW (32u << 20)
/* sbc_write_scattered.c: whether a WRITE SCATTERED of lu is one atomic unit (write_scattered_atomic kept). */
bool sbc_write_scattered_is_atomic(const struct scsi_lu *lu);
/* sbc_write_scattered_stream.c: exec once the descriptors (in the first piece) passed their checks. */
enum scsi_result sbc_write_scattered_stream_exec(struct scsi_cmd *cmd, uint32_t lbdof, uint32_t count);

/* ---- shared I/O helpers (sbc_rw.c); they run on worker threads ---- */

/* Reads len bytes at lba (the command holds their LBA lock).  0 or a negative errno. */
int sbc_medium_read(struct scsi_lu *lu, void *buf, uint64_t lba, size_t len);
/*
 * Compares len bytes of the medium copy with the expected data.  Returns
 * true if equal; else stores the offset of the first differing byte.
 */
bool sbc_compare(const uint8_t *medium, const uint8_t *expected, size_t len, size_t *first_offset);
/*
 * MISCOMPARE, MISCOMPARE DURING VERIFY OPERATION (0E/1D/00) with the
 * INFORMATION field set to the offset from the start of the Data-Out Buffer
 * to the first byte that was not equal (SBC-4 5.3 COMPARE AND WRITE; used
 * for VERIFY and WRITE AND VERIFY byte-by-byte comparisons too).
 */
struct scsi_sense_info sbc_sense_miscompare(uint64_t offset);
/*
 * Call from exec (loop thread) before a write: with write caching disabled
 * (Caching mode page WCE = 0, SBC-4 6.5.5) every write is on the medium
 * before status, as if FUA were set; this folds that into cmd->fua.
 */
static inline void sbc_apply_write_cache(struct scsi_cmd *cmd)
{
	if (!cmd->lu->mode_current.wce)
		cmd->fua = true;
}

/* The backend write flags of cmd (worker side). */
static inline unsigned sbc_write_flags(const struct scsi_cmd *cmd)
{
	return cmd->fua ? BE_WRITE_FUA : 0;
}

/*
 * Zoned LUs (zbc.h): the read rules, and the write rules with the write
 * pointer advance.  sbc_zoned_write_begin returns SCSI_OK (the command holds
 * a write ticket where the zone needs one) or SCSI_FAILED with the sense
 * stored (zbc_write_begin).
 */
static inline enum scsi_result sbc_zoned_check_read(struct scsi_cmd *cmd)
{
	return cmd->lu->zbc ? zbc_check_read(cmd) : SCSI_OK;
}

static inline enum scsi_result sbc_zoned_write_begin(struct scsi_cmd *cmd)
{
	return cmd->lu->zbc ? zbc_write_begin(cmd) : SCSI_OK;
}

/*
 * Zoned LUs: the blocks of [cmd->lba, cmd->lba + cmd->nblocks) that read as
 * zeros because nothing was written to them since their zone's reset (zbc.h,
 * "Unwritten blocks"), planned at exec into cmd->handler_state, before the
 * command's own write pointer advance (sbc_rw.c).  A command that reads the
 * medium then zeroes them in what it read (on a worker too).
 */
enum scsi_result sbc_zoned_plan_unwritten(struct scsi_cmd *cmd);
void sbc_zoned_zero_unwritten(const struct scsi_cmd *cmd, uint64_t lba, uint8_t *buf, size_t len);

/* On a worker after the data write: persists the write pointers it moved. */
static inline void sbc_zoned_persist(struct scsi_cmd *cmd, unsigned flags)
{
	int rc;

	if (!cmd->lu->zbc || cmd->status != SCSI_STATUS_GOOD)
		return;
	rc = zbc_persist_range(cmd->lu, cmd->lba, cmd->nblocks, flags);
	if (rc < 0)
		scsi_cmd_fail_errno(cmd, rc, true);
}

#endif
