/*
 * WRITE ATOMIC(16) (9Ch) and WRITE ATOMIC(32) (7Fh / 000Fh): SBC-4 4.29,
 * 5.48, 5.49.
 *
 * CDB (16): byte 1 WRPROTECT / DPO / FUA, bytes 2-9 LBA, 10-11 ATOMIC
 * BOUNDARY, 12-13 TRANSFER LENGTH, 14 GROUP NUMBER.  CDB (32): bytes 4-5
 * ATOMIC BOUNDARY, 6 GROUP NUMBER, 10 WRPROTECT / DPO / FUA, 12-19 LBA,
 * 20-27 the expected tags (type 2 protection), 28-31 TRANSFER LENGTH.
 *
 * The rules, each INVALID FIELD IN CDB (05/24/00) with the field pointer on
 * the field that breaks it, checked in this order:
 *   ATOMIC BOUNDARY 0:  TRANSFER LENGTH <= MAXIMUM ATOMIC TRANSFER LENGTH;
 *   ATOMIC BOUNDARY >0: ATOMIC BOUNDARY <= MAXIMUM ATOMIC BOUNDARY SIZE and
 *                       TRANSFER LENGTH <= MAXIMUM ATOMIC TRANSFER LENGTH
 *                       WITH ATOMIC BOUNDARY;
 *   ATOMIC ALIGNMENT:   the LBA is a multiple of it (when nonzero);
 *   ATOMIC TRANSFER LENGTH GRANULARITY: TRANSFER LENGTH is a multiple of it;
 * then those of WRITE(16): WRPROTECT, DPO/FUA, MAXIMUM TRANSFER LENGTH, and
 * LBA OUT OF RANGE (05/21/00).  TRANSFER LENGTH 0 writes nothing.  The
 * commands are unsupported (05/20/00, and not listed by REPORT SUPPORTED
 * OPERATION CODES) when the LU advertises no atomic lengths; the 32-byte form
 * needs type 2 protection, like READ(32)/WRITE(32) (or the LU's
 * allow_32_byte_cdbs).  On an LU with PI the tuples are part of the atomic
 * unit (sbc_pi.h).
 *
 * Atomicity: the command holds its blocks' LBA lock exclusively
 * (OP_LBA_EXCLUSIVE, lba_lock.c), so no other command's I/O to them sees
 * the range half written, while I/O to other blocks goes on; and the write
 * goes through the backend's write_atomic (be_file: an intent log,
 * backends/journal.h), so that after a crash the range is wholly old or
 * wholly new, and wholly new once GOOD was returned (the write is durable,
 * as if FUA were set).  With a nonzero ATOMIC BOUNDARY the whole transfer is
 * still one atomic operation, which the standard allows (it only permits
 * splitting).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sbc/sbc.h"

struct atomic_cdb {
	uint16_t boundary_offset; /* field pointers */
	uint16_t length_offset;
	uint16_t lba_offset;
	uint16_t flags_offset;    /* WRPROTECT / DPO / FUA byte */
	uint32_t boundary;
};

/*
 * Supported when the LU advertises atomic lengths and its backend can keep
 * the promise (backend.h: can_write_atomic); otherwise the commands are
 * unsupported and the Block Limits atomic fields are 0 (spc_vpd.c).
 */
bool sbc_write_atomic_enabled(const struct scsi_lu *lu)
{
	return (lu->params.max_atomic_transfer_length != 0 ||
		lu->params.max_atomic_transfer_length_with_boundary != 0) &&
	       lu->backend->can_write_atomic && !lu->atomic_withdrawn;
}

/*
 * A backend that writes atomically only inside one unit (backend.h:
 * atomic_unit, an RBD object) and was opened in the background (a standby
 * node, be_rbd.c) was offered on an assumed unit (4 MiB) until it had its
 * medium.  If the unit it found is not a whole number of ATOMIC ALIGNMENT
 * granules, an aligned atomic write could cross two units: WRITE ATOMIC is
 * withdrawn (the Block Limits VPD page's atomic fields read 0, the opcodes
 * 05/20/00) and every I_T nexus gets INQUIRY DATA HAS CHANGED (06/3F/03:
 * the Block Limits VPD page changed; Linux's sd reports it as an
 * SDEV_EVT_INQUIRY_CHANGE_REPORTED event, drivers/scsi/scsi_lib.c).
 * The daemon's start-up made the other checks (daemon/sbcemud/setup.c).
 */
void sbc_write_atomic_recheck(struct scsi_lu *lu)
{
	uint64_t unit_blocks = lu->backend->atomic_unit / lu->params.logical_block_size;

	if (!sbc_write_atomic_enabled(lu) || !lu->backend->atomic_unit ||
	    (lu->params.atomic_alignment && unit_blocks % lu->params.atomic_alignment == 0))
		return;
	lu->atomic_withdrawn = true;
	scsi_ua_establish_all(lu, SCSI_UA_INQUIRY_DATA_CHANGED, NULL);
}

bool sbc_write_atomic_32_enabled(const struct scsi_lu *lu)
{
	/* SBC-4 5.49: the 32-byte form is for LUs formatted with type 2 protection. */
	return sbc_write_atomic_enabled(lu) && (sbc_pi_type2_enabled(lu) || lu->params.allow_32_byte_cdbs);
}

static void decode(struct scsi_cmd *cmd, struct atomic_cdb *a)
{
	const uint8_t *cdb = cmd->cdb;

	if (cdb[0] == SCSI_OP_WRITE_ATOMIC_16) {
		*a = (struct atomic_cdb){ .boundary_offset = 10, .length_offset = 12, .lba_offset = 2,
					  .flags_offset = 1, .boundary = get_be16(cdb + 10) };
		cmd->lba = get_be64(cdb + 2);
		cmd->nblocks = get_be16(cdb + 12);
		cmd->group_number = cdb[14] & 0x3f;
	} else {
		*a = (struct atomic_cdb){ .boundary_offset = 4, .length_offset = 28, .lba_offset = 12,
					  .flags_offset = 10, .boundary = get_be16(cdb + 4) };
		cmd->lba = get_be64(cdb + 12);
		cmd->nblocks = get_be32(cdb + 28);
		cmd->group_number = cdb[6] & 0x3f;
	}
	cmd->protect = (uint8_t)(cdb[a->flags_offset] >> 5);
	cmd->dpo = (cdb[a->flags_offset] & 0x10) != 0;
	cmd->fua = (cdb[a->flags_offset] & 0x08) != 0;
}

/* The atomic limits of the Block Limits VPD page (SBC-4 4.29, 6.6.4). */
static enum scsi_result check_atomic_limits(struct scsi_cmd *cmd, const struct atomic_cdb *a)
{
	const struct scsi_lu_params *p = &cmd->lu->params;

	if (a->boundary == 0) {
		if (cmd->nblocks > p->max_atomic_transfer_length)
			return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(a->length_offset, -1));
	} else {
		if (a->boundary > p->max_atomic_boundary_size)
			return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(a->boundary_offset, -1));
		if (cmd->nblocks > p->max_atomic_transfer_length_with_boundary)
			return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(a->length_offset, -1));
	}
	if (p->atomic_alignment && cmd->lba % p->atomic_alignment)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(a->lba_offset, -1));
	if (p->atomic_transfer_length_granularity && cmd->nblocks % p->atomic_transfer_length_granularity)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(a->length_offset, -1));
	return SCSI_OK;
}

enum scsi_result sbc_write_atomic_parse(struct scsi_cmd *cmd)
{
	struct atomic_cdb a;
	enum scsi_result r;

	decode(cmd, &a);
	r = check_atomic_limits(cmd, &a);
	if (r == SCSI_OK)
		r = sbc_check_protect(cmd, cmd->protect);
	if (r == SCSI_OK)
		r = sbc_check_dpofua(cmd, cmd->dpo, cmd->fua);
	if (r == SCSI_OK)
		r = sbc_check_max_transfer_length(cmd, cmd->nblocks, a.length_offset);
	if (r == SCSI_OK)
		r = sbc_check_lba_range(cmd, cmd->lba, cmd->nblocks);
	if (r != SCSI_OK)
		return r;
	cmd->data_length = cmd->nblocks * sbc_wire_block_len(cmd);
	return SCSI_OK;
}

/*
 * An LU with PI: the data and its tuples as one atomic unit (two ranges of
 * one intent-log record), or torn on purpose like the data alone.
 */
static int write_atomic_pi(struct scsi_cmd *cmd, const struct sbc_write_data *w, bool tear, uint32_t tear_blocks)
{
	struct scsi_lu *lu = cmd->lu;
	struct backend *be = lu->backend;
	uint32_t n = tear ? tear_blocks : cmd->nblocks;
	uint64_t data_len = (uint64_t)n * lu->block_size, tuple_len = sbc_pi_bytes(lu, n);
	struct be_range ranges[2] = { { scsi_lu_offset(lu, cmd->lba), data_len },
				      { sbc_pi_offset(lu, cmd->lba), tuple_len } };
	uint8_t *buf = malloc(data_len + tuple_len + 1);
	int rc;

	if (!buf)
		return -ENOMEM;
	memcpy(buf, w->data, data_len);
	memcpy(buf + data_len, w->tuples, tuple_len);
	sbc_pi_medium_form(buf + data_len, tuple_len);
	if (tear) {
		rc = be->ops->write(be, buf, data_len, ranges[0].offset, BE_WRITE_FUA);
		if (rc >= 0)
			rc = be->ops->write(be, buf + data_len, tuple_len, ranges[1].offset, BE_WRITE_FUA);
	} else {
		rc = be->ops->write_atomic_ranges(be, ranges, 2, buf);
	}
	free(buf);
	return rc;
}

static void write_atomic_work(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	struct backend *be = lu->backend;
	bool tear = cmd->faults & SCSI_FAULT_TEAR_ATOMIC;
	uint32_t tear_blocks = cmd->fault_tear_blocks < cmd->nblocks ? cmd->fault_tear_blocks : cmd->nblocks;
	struct sbc_write_data w;
	struct scsi_sense_info s;
	int rc;

	rc = sbc_write_data_prepare(cmd, cmd->data_out, cmd->lba, cmd->nblocks, 0, &w, &s);
	if (rc != 0) {
		(rc > 0 ? scsi_cmd_fail(cmd, s) : scsi_cmd_fail_errno(cmd, rc, true));
		sbc_write_data_free(&w);
		return;
	}
	if (w.tuples)
		rc = write_atomic_pi(cmd, &w, tear, tear_blocks);
	else if (tear)
		/* Broken promise on purpose (docs/atomic.md): a prefix of the blocks, and GOOD. */
		rc = be->ops->write(be, cmd->data_out, (size_t)tear_blocks * lu->block_size, scsi_lu_offset(lu, cmd->lba),
				    BE_WRITE_FUA);
	else
		rc = be->ops->write_atomic(be, cmd->data_out, (size_t)cmd->nblocks * lu->block_size,
					   scsi_lu_offset(lu, cmd->lba));
	sbc_write_data_free(&w);
	if (rc < 0)
		scsi_cmd_fail_errno(cmd, rc, true);
}

enum scsi_result sbc_write_atomic_exec(struct scsi_cmd *cmd)
{
	/*
	 * All or nothing: a Data-Out shorter than the transfer (allowed for
	 * WRITE, which writes what arrived) would write part of the atomic
	 * operation, so it is refused (the row lacks OP_SHORT_DATA_OUT_OK).
	 */
	if (cmd->nblocks == 0)
		return SCSI_OK;
	sbc_apply_write_cache(cmd);
	return scsi_cmd_run_io(cmd, write_atomic_work, NULL);
}
