/*
 * RECEIVE COPY RESULTS (84h; SPC-4, the LID1 service actions) and the
 * Third-party Copy VPD page's descriptors (SPC-4, Third-party Copy VPD page) of the copy manager:
 *   COPY STATUS (00h): the nexus's held copy with LIST IDENTIFIER b2 (LIST
 *     ID USAGE 00b or 01b, extended_copy.c; kept with the I_T_L nexus, four
 *     at most, the oldest replaced; reading it does not release it), else
 *     05/24/00 on b2;
 *   OPERATING PARAMETERS (03h): the limits of copy.h, which EXTENDED COPY
 *     enforces;
 *   any other service action: 05/24/00 on b1.
 */
#include <string.h>

#include "copy/copy.h"
#include "core/scsi_internal.h"

enum scsi_result receive_copy_results_parse(struct scsi_cmd *cmd)
{
	cmd->allocation_length = get_be32(cmd->cdb + 10);
	return SCSI_OK;
}

/* COPY STATUS: b4 COPY MANAGER STATUS, b5-6 SEGMENTS PROCESSED, b7 units, b8-11 TRANSFER COUNT. */
static enum scsi_result copy_status(struct scsi_cmd *cmd)
{
	const struct scsi_itl *itl = scsi_itl_find(cmd->nexus, cmd->lu->lun);
	const struct scsi_copy_status *h = NULL;
	uint8_t *b;

	for (unsigned i = 0; itl && i < SCSI_COPY_STATUS_HELD; i++)
		if (itl->copies[i].held && itl->copies[i].list_id == cmd->cdb[2])
			h = &itl->copies[i];
	if (!h)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, -1));
	b = scsi_cmd_alloc_data_in(cmd, 12);
	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	put_be32(b, 8);
	b[4] = 0x00; /* HDD 0; COPY MANAGER STATUS: operation completed without errors */
	put_be16(b + 5, h->segments);
	b[7] = 0x00; /* TRANSFER COUNT UNITS: bytes (a list moves less than 4 GiB: copy.h) */
	put_be32(b + 8, (uint32_t)h->bytes);
	scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	return SCSI_OK;
}

/* OPERATING PARAMETERS: the limits of copy.h, which EXTENDED COPY enforces. */
static enum scsi_result operating_parameters(struct scsi_cmd *cmd)
{
	static const uint8_t implemented[] = { XCOPY_SEG_B2B, XCOPY_CSCD_ID };
	uint8_t *b = scsi_cmd_alloc_data_in(cmd, 44 + sizeof(implemented));
	uint8_t gran = 0;

	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	while ((1u << gran) < cmd->lu->block_size)
		gran++;
	put_be32(b, 40 + sizeof(implemented));
	b[4] = 0x00; /* SNLID 0: every copy has a list identifier but LIST ID USAGE 11b */
	put_be16(b + 8, XCOPY_MAX_CSCD);
	put_be16(b + 10, XCOPY_MAX_SEGMENTS);
	put_be32(b + 12, XCOPY_MAX_LIST_LENGTH);
	put_be32(b + 16, XCOPY_MAX_SEGMENT_BYTES);
	/* b20-31: no inline data, no held data, no stream devices. */
	put_be16(b + 34, 0xff); /* TOTAL CONCURRENT COPIES: copies are commands; the task set bounds them */
	b[36] = 0xff;           /* MAXIMUM CONCURRENT COPIES */
	b[37] = gran;           /* DATA SEGMENT GRANULARITY (log2): one block */
	b[43] = sizeof(implemented);
	memcpy(b + 44, implemented, sizeof(implemented));
	scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	return SCSI_OK;
}

enum scsi_result receive_copy_results_exec(struct scsi_cmd *cmd)
{
	switch (cmd->cdb[1] & 0x1f) {
	case RCR_COPY_STATUS:
		return copy_status(cmd);
	case RCR_OPERATING_PARAMETERS:
		return operating_parameters(cmd);
	default:
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(1, 4));
	}
}

/*
 * The Third-party Copy VPD page's descriptors: Supported
 * Commands (0001h: 83h/00h, 10h, 11h; 84h/00h, 03h, 07h) and Supported
 * Descriptors (0008h: 02h, E4h), each padded to a multiple of four bytes,
 * then those of token-based copy (rod_token_vpd).  Returns the
 * bytes written at b.
 */
size_t copy_manager_vpd(uint8_t *b)
{
	static const uint8_t commands[] = { 0x83, 3, 0x00, COPY_SA_POPULATE_TOKEN, COPY_SA_WRITE_USING_TOKEN,
					    0x84, 3, RCR_COPY_STATUS, RCR_OPERATING_PARAMETERS, RCR_ROD_TOKEN_INFORMATION };
	static const uint8_t descriptors[] = { XCOPY_SEG_B2B, XCOPY_CSCD_ID };
	size_t off = 0, n;

	n = (1 + sizeof(commands) + 3) & ~(size_t)3;
	put_be16(b + off, 0x0001);
	put_be16(b + off + 2, (uint16_t)n);
	b[off + 4] = sizeof(commands);
	memcpy(b + off + 5, commands, sizeof(commands));
	off += 4 + n;
	n = (1 + sizeof(descriptors) + 3) & ~(size_t)3;
	put_be16(b + off, 0x0008);
	put_be16(b + off + 2, (uint16_t)n);
	b[off + 4] = sizeof(descriptors);
	memcpy(b + off + 5, descriptors, sizeof(descriptors));
	off += 4 + n;
	return off + rod_token_vpd(b + off);
}
