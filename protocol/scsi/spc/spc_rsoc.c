/*
 * REPORT SUPPORTED OPERATION CODES (SPC-4 6.35) and REPORT
 * SUPPORTED TASK MANAGEMENT FUNCTIONS (SPC-4 6.36), both MAINTENANCE IN.
 *
 * RSOC answers from the one opcode table (op_table.c): a row is reported
 * exactly when scsi_op_supported() says the LU serves it, so what RSOC says
 * and what dispatch does cannot drift apart (libiscsi chooses its tests
 * from this answer).
 *
 * CDB: byte 2 bit 7 RCTD, bits 2:0 REPORTING OPTIONS; byte 3 REQUESTED
 * OPERATION CODE; bytes 4-5 REQUESTED SERVICE ACTION; bytes 6-9 ALLOCATION
 * LENGTH.  REPORTING OPTIONS:
 *   000b  all commands (8-byte descriptors, 20 with RCTD);
 *   001b  one command by operation code; an operation code that has service
 *         actions -> 05/24/00 (SPC-4 6.35.1);
 *   010b  one command by operation code and service action; an operation
 *         code without service actions -> 05/24/00;
 *   011b  one command: by operation code and service action if the
 *         operation code has service actions, else by operation code;
 *   others -> 05/24/00.
 * The field pointer of those errors names REPORTING OPTIONS (byte 2 bit 2).
 * An unknown command in the one-command forms is not an error: SUPPORT =
 * 001b (not supported) with CDB SIZE 0.  On an LU with command duration
 * limits, READ(16)/(32) name the A or T2A page and WRITE(16)/(32) and WRITE
 * SCATTERED(16) the B or T2B page: CDLP in byte 1 bits 4:3 and RWCDLP in
 * byte 0 bit 0 of the one-command form, in byte 5 bits 3:2 and bit 6 of an
 * all-commands descriptor (SPC-6; sg3_utils sg_opcodes.c, Linux
 * scsi_cdl_check_cmd).
 */
#include <string.h>

#include "sbc/sbc_pi.h"
#include "spc/spc.h"
#include "zbc/zbc.h"

#define RO_ALL 0x0
#define RO_OPCODE 0x1
#define RO_OPCODE_SA 0x2
#define RO_OPCODE_MAYBE_SA 0x3

#define SUPPORT_NOT_SUPPORTED 0x1
#define SUPPORT_STANDARD 0x3

#define TIMEOUTS_DESCRIPTOR_LEN 12

/* Command timeouts descriptor (SPC-4 6.35.4). */
static void put_timeouts(uint8_t *b, const struct scsi_op *op)
{
	put_be16(b, 0x000a); /* DESCRIPTOR LENGTH */
	put_be32(b + 4, op->nominal_timeout);
	put_be32(b + 8, op->recommended_timeout);
}

/* True if the table gives the operation code service actions (whatever the LU). */
static bool opcode_has_service_actions(uint8_t opcode)
{
	for (size_t i = 0; i < scsi_op_table_len; i++)
		if (scsi_op_table[i].opcode == opcode)
			return scsi_op_table[i].sa_location != SCSI_SA_NONE;
	return false;
}

static bool opcode_known(uint8_t opcode)
{
	for (size_t i = 0; i < scsi_op_table_len; i++)
		if (scsi_op_table[i].opcode == opcode)
			return true;
	return false;
}

static enum scsi_result report_all(struct scsi_cmd *cmd, bool rctd)
{
	size_t desc_len = 8 + (rctd ? TIMEOUTS_DESCRIPTOR_LEN : 0), n = 0;
	uint8_t *b, *d;
	bool rwcdlp;

	for (size_t i = 0; i < scsi_op_table_len; i++)
		if (scsi_op_supported(&scsi_op_table[i], cmd->lu))
			n++;
	b = scsi_cmd_alloc_data_in(cmd, 4 + n * desc_len);
	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	put_be32(b, (uint32_t)(n * desc_len)); /* COMMAND DATA LENGTH */
	d = b + 4;
	for (size_t i = 0; i < scsi_op_table_len; i++) {
		const struct scsi_op *op = &scsi_op_table[i];
		if (!scsi_op_supported(op, cmd->lu))
			continue;
		d[0] = op->opcode;
		if (op->sa_location != SCSI_SA_NONE) {
			put_be16(d + 2, op->service_action);
			d[5] |= 0x01; /* SERVACTV */
		}
		if (rctd) {
			d[5] |= 0x02; /* CTDP */
			put_timeouts(d + 8, op);
		}
		d[5] |= (uint8_t)(scsi_op_cdlp(op, cmd->lu, &rwcdlp) << 2); /* CDLP (SPC-6) */
		d[5] |= rwcdlp ? 0x40 : 0;                                  /* RWCDLP */
		put_be16(d + 6, op->cdb_len);
		d += desc_len;
	}
	return SCSI_OK;
}

/*
 * The PROTECT fields are usable only on an LU formatted with protection
 * information, FORMAT UNIT's FMTPINFO only on one that supports it
 * (sbc_pi.h), ZBC OUT's ZONE COUNT only on a zone domain LU (zbc_out.c);
 * elsewhere the CDB USAGE DATA shows them as not used.
 */
static void hide_unusable_fields(const struct scsi_op *op, const struct scsi_lu *lu, uint8_t *usage)
{
	if (!lu)
		return;
	if ((op->flags & OP_PROTECT_FIELD) && !sbc_lu_has_pi(lu)) {
		unsigned byte = op->cdb_len == 32 ? 10 : op->opcode == SCSI_OP_SERVICE_ACTION_OUT_16 ? 2 : 1;
		usage[byte] &= 0x1f;
	}
	if (op->opcode == SCSI_OP_FORMAT_UNIT && !sbc_lu_pi_capable(lu))
		usage[1] &= 0x3f;
	/* ZBC OUT ZONE COUNT (ZBC-2) only on zone domain LUs. */
	if (op->opcode == SCSI_OP_ZBC_OUT && !zbc_domains_enabled(lu))
		usage[12] = usage[13] = 0;
}

static enum scsi_result report_one(struct scsi_cmd *cmd, bool rctd, uint8_t reporting_options)
{
	uint8_t opcode = cmd->cdb[3];
	uint16_t sa = get_be16(cmd->cdb + 4);
	bool by_sa, rwcdlp;
	const struct scsi_op *op = NULL;
	uint8_t *b;

	switch (reporting_options) {
	case RO_OPCODE:
		if (opcode_has_service_actions(opcode))
			return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, 2));
		by_sa = false;
		break;
	case RO_OPCODE_SA:
		if (opcode_known(opcode) && !opcode_has_service_actions(opcode))
			return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, 2));
		by_sa = true;
		break;
	default: /* RO_OPCODE_MAYBE_SA */
		by_sa = opcode_has_service_actions(opcode);
		break;
	}
	for (size_t i = 0; i < scsi_op_table_len && !op; i++) {
		const struct scsi_op *row = &scsi_op_table[i];
		if (row->opcode == opcode && (!by_sa || row->service_action == sa) &&
		    scsi_op_supported(row, cmd->lu))
			op = row;
	}
	if (!op) {
		b = scsi_cmd_alloc_data_in(cmd, 4);
		if (!b)
			return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
		b[1] = SUPPORT_NOT_SUPPORTED;
		return SCSI_OK;
	}
	b = scsi_cmd_alloc_data_in(cmd, 4 + (size_t)op->cdb_len + (rctd ? TIMEOUTS_DESCRIPTOR_LEN : 0));
	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	b[1] = (uint8_t)((rctd ? 0x80 : 0) | SUPPORT_STANDARD); /* CTDP, SUPPORT */
	put_be16(b + 2, op->cdb_len);                            /* CDB SIZE */
	for (unsigned i = 0; i < op->cdb_len; i++)
		b[4 + i] = scsi_op_usage(op, cmd->lu, i);        /* CDB USAGE DATA */
	hide_unusable_fields(op, cmd->lu, b + 4);
	/* SPC-6: the mode page the DLD field selects descriptors from. */
	b[1] |= (uint8_t)(scsi_op_cdlp(op, cmd->lu, &rwcdlp) << 3); /* CDLP */
	b[0] |= rwcdlp ? 0x01 : 0;                                 /* RWCDLP */
	if (rctd)
		put_timeouts(b + 4 + op->cdb_len, op);
	return SCSI_OK;
}

enum scsi_result spc_report_supported_operation_codes_exec(struct scsi_cmd *cmd)
{
	bool rctd = cmd->cdb[2] & 0x80;
	uint8_t reporting_options = cmd->cdb[2] & 0x07;
	enum scsi_result r;

	cmd->allocation_length = get_be32(cmd->cdb + 6);
	switch (reporting_options) {
	case RO_ALL:
		r = report_all(cmd, rctd);
		break;
	case RO_OPCODE:
	case RO_OPCODE_SA:
	case RO_OPCODE_MAYBE_SA:
		r = report_one(cmd, rctd, reporting_options);
		break;
	default:
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, 2));
	}
	if (r == SCSI_OK)
		scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	return r;
}

/*
 * REPORT SUPPORTED TASK MANAGEMENT FUNCTIONS (SPC-4 6.36): the functions
 * scsi_tmf() implements.  Byte 0: ATS (ABORT TASK), ATSS (ABORT TASK SET),
 * CTSS (CLEAR TASK SET), LURS (LOGICAL UNIT RESET), TRS (TARGET RESET; the
 * iSCSI warm and cold resets); CACAS 0 (no ACA), QTS 0, WAKES 0.  Byte 1:
 * ITNRS (I_T NEXUS RESET); QAES 0, QTSS 0.  REPD = 1 asks for the extended
 * format: 16 bytes, ADDITIONAL DATA LENGTH 0Ch, no timeouts (TMFTMOV 0).
 */
enum scsi_result spc_report_supported_tmf_exec(struct scsi_cmd *cmd)
{
	bool repd = cmd->cdb[2] & 0x80;
	uint8_t *b;

	cmd->allocation_length = get_be32(cmd->cdb + 6);
	b = scsi_cmd_alloc_data_in(cmd, repd ? 16 : 4);
	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	b[0] = 0x80 | 0x40 | 0x10 | 0x08 | 0x02; /* ATS ATSS CTSS LURS TRS */
	b[1] = 0x01;                             /* ITNRS */
	if (repd)
		b[3] = 0x0c; /* ADDITIONAL DATA LENGTH */
	scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	return SCSI_OK;
}
