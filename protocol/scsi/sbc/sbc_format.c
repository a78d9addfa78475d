/*
 * FORMAT UNIT (SBC-4 5.4).
 *
 * CDB byte 1: bits 7:6 FMTPINFO, bit 5 LONGLIST, bit 4 FMTDATA, bit 3
 * CMPLST, bits 2:0 DEFECT LIST FORMAT.
 *
 * Protection information (SBC-4 5.4, table "FMTPINFO and PROTECTION FIELD
 * USAGE"): FMTPINFO 00b formats without PI, 10b with type
 * 1, 11b with type 2 (PFU 000b), type 3 (001b), or type 2 / type 3 with the
 * long list's PROTECTION INTERVAL EXPONENT (010b / 011b).  FMTPINFO != 0 on
 * an LU without PI support, and FMTPINFO 01b, are INVALID FIELD IN CDB;
 * other PFU values, a nonzero P_I_INFORMATION, an exponent where PFU takes
 * none or one whose intervals would be under 512 bytes are INVALID FIELD IN
 * PARAMETER LIST.  Every tuple becomes the escape (sbc_background.c).
 *
 * FMTDATA = 0: no parameter list, format with the defaults.  FMTDATA = 1: a
 * parameter list follows (SBC-4 5.4, parameter list): the short (4-byte, LONGLIST = 0) or
 * long (8-byte) header, then the initialization pattern descriptor when
 * IP = 1, then the defect list.  The CDB has no length field, so the
 * parameter list length is the transport's expected data transfer length.
 *
 * Formatting an emulated medium has no defects to manage and no
 * certification to run: it initialises every block, which means deallocate
 * everything on a thin-provisioned LU (reads return zeros, LBPRZ), write
 * zeros otherwise, or write the initialization pattern when one is given.
 * The block length and capacity do not change, so no unit attention is
 * established (SBC-4 5.4 asks for CAPACITY DATA HAS CHANGED only then).
 *
 * IMMED = 1 in the header returns GOOD at once; the format then runs as an
 * sbc_background operation reporting 02/04/04 FORMAT IN PROGRESS with the
 * progress indication.
 */
#include <stdlib.h>
#include <string.h>

#include "sbc/sbc.h"
#include "sbc/sbc_background.h"
#include "zbc/zbc.h"

#define FORMAT_FMTPINFO_MASK 0xc0
#define FORMAT_LONGLIST 0x20
#define FORMAT_FMTDATA 0x10

#define SHORT_HEADER_LEN 4
#define LONG_HEADER_LEN 8
#define IP_DESCRIPTOR_LEN 4

/* Parameter list header byte 1 (SBC-4 5.4, parameter list header). */
#define HDR_FOV 0x80
#define HDR_DPRY 0x40
#define HDR_DCRT 0x20
#define HDR_STPF 0x10
#define HDR_IP 0x08
#define HDR_IMMED 0x02

/* Initialization pattern descriptor (SBC-4 5.4, initialization pattern descriptor). */
#define IP_MODIFIER_MASK 0xc0
#define IP_TYPE_DEFAULT 0x00
#define IP_TYPE_REPEAT 0x01

#define ASC_FORMAT_COMMAND_FAILED 0x3101

/* What the parameter list asks for. */
struct format_request {
	bool immed;
	uint8_t protection_type;  /* the format asked for */
	uint8_t p_i_exponent;
	const uint8_t *pattern;  /* IP TYPE 01h: INITIALIZATION PATTERN, or NULL */
	uint16_t pattern_length;
};

static int highest_bit(uint8_t v)
{
	int bit = 7;

	while (bit > 0 && !(v & (1u << bit)))
		bit--;
	return bit;
}

enum scsi_result sbc_format_unit_parse(struct scsi_cmd *cmd)
{
	uint8_t flags = cmd->cdb[1];
	uint32_t header_len = (flags & FORMAT_LONGLIST) ? LONG_HEADER_LEN : SHORT_HEADER_LEN;
	uint32_t max_len = header_len + IP_DESCRIPTOR_LEN + 0xffff;

	/* SBC-4 5.4: FMTPINFO != 0 on an LU without protection information -> INVALID FIELD IN CDB. */
	if ((flags & FORMAT_FMTPINFO_MASK) && !sbc_lu_pi_capable(cmd->lu))
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(1, 7));
	if ((flags & FORMAT_FMTPINFO_MASK) == 0x40)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(1, 6));
	if (!(flags & FORMAT_FMTDATA)) {
		/* SBC-4 5.4: FMTDATA = 0, no parameter list is transferred. */
		cmd->data_length = 0;
		return SCSI_OK;
	}
	/*
	 * The whole parameter list is what the transport says it will send,
	 * at least the header.  Longer than a header, an initialization
	 * pattern descriptor with the longest pattern: the rest can only be a
	 * defect list, which is refused from its DEFECT LIST LENGTH anyway.
	 */
	cmd->data_length = cmd->expected_length < header_len ? header_len : cmd->expected_length;
	if (cmd->data_length > max_len)
		cmd->data_length = max_len;
	return SCSI_OK;
}

/*
 * The protection format of FMTPINFO (CDB), PROTECTION FIELD USAGE (pfu) and
 * the long list's byte 3 (P_I_INFORMATION, PROTECTION INTERVAL EXPONENT).
 */
static enum scsi_result protection_format(struct scsi_cmd *cmd, uint8_t pfu, uint8_t b3, struct format_request *req)
{
	uint8_t fmtpinfo = cmd->cdb[1] >> 6;
	uint8_t exponent = b3 & 0x0f;

	if (b3 & 0xf0)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(3, highest_bit(b3 & 0xf0)));
	if (fmtpinfo == 3 && pfu <= 3) {
		req->protection_type = (pfu & 1) ? 3 : 2;
	} else if (pfu == 0) {
		req->protection_type = fmtpinfo == 2 ? 1 : 0;
	} else {
		return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(0, highest_bit(pfu)));
	}
	/* The exponent counts only with PFU 010b / 011b (it must be 0 otherwise). */
	if (exponent && pfu < 2)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(3, highest_bit(exponent)));
	if ((cmd->lu->block_size >> exponent) < 512)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(3, highest_bit(exponent)));
	req->p_i_exponent = exponent;
	return SCSI_OK;
}

/*
 * Validates the parameter list (SBC-4 5.4, parameter list).  Returns SCSI_OK with req
 * filled, or SCSI_FAILED with the sense stored.
 */
static enum scsi_result parse_parameter_list(struct scsi_cmd *cmd, struct format_request *req)
{
	const uint8_t *p = cmd->data_out;
	uint32_t len = cmd->data_out_len;
	bool longlist = (cmd->cdb[1] & FORMAT_LONGLIST) != 0;
	uint32_t header_len = longlist ? LONG_HEADER_LEN : SHORT_HEADER_LEN;
	uint32_t defect_list_length;
	uint8_t b1;

	if (len < header_len)
		return scsi_cmd_fail(cmd, sense_parameter_list_length_error());
	/* Byte 0: bits 7:3 reserved, bits 2:0 PROTECTION FIELD USAGE. */
	if (p[0] & 0xf8)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(0, highest_bit(p[0])));
	if (protection_format(cmd, p[0] & 0x07, longlist ? p[3] : 0, req) != SCSI_OK)
		return SCSI_FAILED;
	b1 = p[1];
	/*
	 * SBC-4 5.4 (parameter list header): FOV = 0 asks for the defaults, and then DPRY, DCRT,
	 * STPF and IP shall be zero.  With FOV = 1 they are honoured: there
	 * are no defect lists (DPRY, STPF) and no certification (DCRT) to
	 * act on; IP is processed below.
	 */
	if (!(b1 & HDR_FOV) && (b1 & (HDR_DPRY | HDR_DCRT | HDR_STPF | HDR_IP)))
		return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(1, highest_bit(b1 & 0x78)));
	if (b1 & 0x04) /* obsolete */
		return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(1, 2));
	req->immed = (b1 & HDR_IMMED) != 0;
	if (longlist) {
		/* Byte 2 reserved; byte 3 P_I_INFORMATION and PROTECTION INTERVAL EXPONENT (protection_format). */
		if (p[2])
			return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(2, highest_bit(p[2])));
		defect_list_length = get_be32(p + 4);
	} else {
		defect_list_length = get_be16(p + 2);
	}
	/* No defect list is supported (the emulated medium has no defects to add). */
	if (defect_list_length != 0)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(longlist ? 4 : 2, -1));
	req->pattern = NULL;
	req->pattern_length = 0;
	if (b1 & HDR_IP) {
		const uint8_t *ipd = p + header_len;
		uint16_t ip_length;

		if (len < header_len + IP_DESCRIPTOR_LEN)
			return scsi_cmd_fail(cmd, sense_parameter_list_length_error());
		/* IP MODIFIER (bits 7:6) is not supported; SI (bit 5) needs nothing more than the overwrite. */
		if (ipd[0] & IP_MODIFIER_MASK)
			return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list((uint16_t)header_len,
											   highest_bit(ipd[0] & IP_MODIFIER_MASK)));
		if (ipd[0] & 0x1f)
			return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list((uint16_t)header_len,
											   highest_bit(ipd[0] & 0x1f)));
		ip_length = get_be16(ipd + 2);
		switch (ipd[1]) {
		case IP_TYPE_DEFAULT:
			/* SBC-4 table: the default pattern takes INITIALIZATION PATTERN LENGTH 0. */
			if (ip_length != 0)
				return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(
								  (uint16_t)(header_len + 2), -1));
			break;
		case IP_TYPE_REPEAT:
			/* A pattern of 1 .. logical block length bytes, repeated to fill each block. */
			if (ip_length == 0 || ip_length > cmd->lu->block_size)
				return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(
								  (uint16_t)(header_len + 2), -1));
			if (len < header_len + IP_DESCRIPTOR_LEN + ip_length)
				return scsi_cmd_fail(cmd, sense_parameter_list_length_error());
			req->pattern = ipd + IP_DESCRIPTOR_LEN;
			req->pattern_length = ip_length;
			break;
		default:
			return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list((uint16_t)(header_len + 1),
											   -1));
		}
	}
	return SCSI_OK;
}

static void format_end(struct sbc_background_op *op, int err)
{
	/* SBC-4 5.4: a format that cannot complete ends with MEDIUM ERROR, FORMAT COMMAND FAILED. */
	if (err != 0 && op->cmd)
		scsi_cmd_fail(op->cmd, sense_make(SENSE_KEY_MEDIUM_ERROR, ASC_FORMAT_COMMAND_FAILED));
}

enum scsi_result sbc_format_unit_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	struct format_request req = { 0 };
	struct sbc_background_op *op;

	if (cmd->cdb[1] & FORMAT_FMTDATA) {
		enum scsi_result r = parse_parameter_list(cmd, &req);
		if (r != SCSI_OK)
			return r;
	} else if (protection_format(cmd, 0, 0, &req) != SCSI_OK) {
		return SCSI_FAILED;
	}
	op = sbc_background_alloc(lu);
	if (!op)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	op->asc_ascq = ASC_LOGICAL_UNIT_NOT_READY_FORMAT_IN_PROGRESS;
	op->end = format_end;
	if (req.pattern) {
		op->method = SBC_BG_PATTERN;
		op->pattern = malloc(lu->block_size);
		if (!op->pattern) {
			sbc_background_free(op);
			return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
		}
		for (uint32_t off = 0; off < lu->block_size; off += req.pattern_length) {
			uint32_t n = lu->block_size - off < req.pattern_length ? lu->block_size - off
									       : req.pattern_length;
			memcpy(op->pattern + off, req.pattern, n);
		}
	} else {
		/* Zoned LUs: deallocating keeps the file sparse, as RESET WRITE POINTER does; reads see zeros. */
		op->method = lu->params.thin_provisioning || lu->zbc ? SBC_BG_DEALLOCATE : SBC_BG_ZEROES;
	}
	op->cmd = req.immed ? NULL : cmd;
	/*
	 * The new format holds from now on (the LU is NOT READY until the
	 * format ends; no other command runs: FORMAT UNIT is OP_QUIESCE); the
	 * first chunk records it.
	 */
	if (sbc_lu_pi_capable(lu)) {
		sbc_pi_set_format(lu, req.protection_type, req.p_i_exponent);
		op->save_format = true;
	}
	/* Zoned LUs: formatting empties every write pointer zone (the engine persists it at the end). */
	if (lu->zbc)
		zbc_reset_all_zones(lu);
	if (!sbc_background_start(op, cmd))
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	return req.immed ? SCSI_OK : SCSI_PENDING;
}
