/*
 * RECEIVE COPY RESULTS (84h; SPC-4, the LID1 service actions) and the
 * Third-party Copy VPD page's descriptors (SPC-4, Third-party Copy VPD page) of the copy manager:
 *   COPY STATUS (00h): the nexus's held EXTENDED COPY(LID1) with LIST
 *     IDENTIFIER b2 (LIST ID USAGE 00b or 01b, extended_copy.c; kept with the I_T_L nexus, four
 *     at most, the oldest replaced; reading it does not release it), else
 *     05/24/00 on b2;
 *   FAILED SEGMENT DETAILS (04h): the same list's end, with the sense data
 *     of a copy that failed; the list is released once read (as FreeBSD's
 *     CTL does, ctl_receive_copy_failure_details);
 *   OPERATING PARAMETERS (03h): the limits of copy.h, which EXTENDED COPY
 *     enforces;
 *   RECEIVE COPY STATUS(LID4) (05h): the held result of a token-based
 *     copy or an EXTENDED COPY (LID1 or LID4) by its list identifier
 *     (copy_status_lid4);
 *   RECEIVE ROD TOKEN INFORMATION (07h, SBC-4): the held result of a
 *     POPULATE TOKEN or WRITE USING TOKEN (rod_token.c), with the token;
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

struct scsi_copy_status *copy_status_held(const struct scsi_cmd *cmd, uint32_t list_id, bool lid1_only)
{
	struct scsi_itl *itl = scsi_itl_find(cmd->nexus, cmd->lu->lun);

	for (unsigned i = 0; itl && itl->copies && i < SCSI_COPY_STATUS_HELD; i++)
		if (itl->copies[i].held && itl->copies[i].list_id == list_id &&
		    (!lid1_only || itl->copies[i].service_action == COPY_SA_EXTENDED_COPY_LID1))
			return &itl->copies[i];
	return NULL;
}

struct scsi_rod_list *rod_list_held(const struct scsi_cmd *cmd, uint32_t list_id)
{
	struct scsi_itl *itl = scsi_itl_find(cmd->nexus, cmd->lu->lun);

	for (unsigned i = 0; itl && itl->rod_lists && i < SCSI_ROD_LISTS_HELD; i++)
		if (itl->rod_lists[i].held && itl->rod_lists[i].list_id == list_id)
			return &itl->rod_lists[i];
	return NULL;
}

/* COPY STATUS: b4 COPY MANAGER STATUS, b5-6 SEGMENTS PROCESSED, b7 units, b8-11 TRANSFER COUNT. */
static enum scsi_result copy_status(struct scsi_cmd *cmd)
{
	/* SPC-4: COPY STATUS reports an EXTENDED COPY(LID1)'s; RECEIVE COPY STATUS(LID4) either's. */
	const struct scsi_copy_status *h = copy_status_held(cmd, cmd->cdb[2], true);
	uint8_t *b;

	if (!h)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, -1));
	b = scsi_cmd_alloc_data_in(cmd, 12);
	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	put_be32(b, 8);
	/* HDD 0; COPY MANAGER STATUS 01h, completed without errors, or 02h, with errors (00h is in progress:
	 * SPC-3 6.17.3; FreeBSD's scsi_all.h RCS_CCS_INPROG, _COMPLETED, _ERROR). */
	b[4] = h->status == SCSI_STATUS_GOOD ? 0x01 : 0x02;
	put_be16(b + 5, h->segments);
	b[7] = 0x00; /* TRANSFER COUNT UNITS: bytes (a list moves less than 4 GiB: copy.h) */
	put_be32(b + 8, (uint32_t)h->bytes);
	scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	return SCSI_OK;
}

/*
 * RECEIVE COPY STATUS(LID4)'s 32-byte header and sense data for l, len
 * bytes in all: b4 RESPONSE TO SERVICE ACTION, b5 COPY OPERATION STATUS
 * (01h done without errors, 02h with errors, 60h aborted by COPY OPERATION
 * ABORT), b8-11 ESTIMATED STATUS UPDATE DELAY, b12 the command's status,
 * b13-14 sense lengths, b15 TRANSFER COUNT UNITS F1h (blocks), b16-23
 * TRANSFER COUNT; then the sense data.
 */
static void rod_list_status(uint8_t *b, size_t len, const struct scsi_rod_list *l)
{
	put_be32(b, (uint32_t)(len - 4));
	b[4] = l->service_action;
	b[5] = l->good ? 0x01 : l->aborted ? 0x60 : 0x02;
	put_be32(b + 8, 0); /* ESTIMATED STATUS UPDATE DELAY: the operation is over */
	b[12] = l->good ? SCSI_STATUS_GOOD : l->aborted ? SCSI_STATUS_TASK_ABORTED : SCSI_STATUS_CHECK_CONDITION;
	b[13] = b[14] = l->sense_len;
	b[15] = 0xf1; /* TRANSFER COUNT UNITS: logical blocks */
	put_be64(b + 16, l->blocks);
	memcpy(b + 32, l->sense, l->sense_len);
}

/*
 * The held result of the nexus's list (released once read, as CTL does;
 * an unknown list: 05/24/00 on b2): RECEIVE COPY STATUS(LID4)'s header
 * (rod_list_status), then b+0-3 ROD TOKEN DESCRIPTORS LENGTH (0202h with a
 * token), two reserved bytes and the token.
 */
enum scsi_result receive_rod_token_information_exec(struct scsi_cmd *cmd)
{
	struct scsi_rod_list *l = rod_list_held(cmd, get_be32(cmd->cdb + 2));
	size_t len, off;
	uint8_t *b;

	if (!l)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, -1));
	len = 32 + l->sense_len + 4 + (l->has_token ? 2 + ROD_TOKEN_LEN : 0);
	b = scsi_cmd_alloc_data_in(cmd, len);
	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	rod_list_status(b, len, l);
	off = 32 + l->sense_len;
	if (l->has_token) {
		put_be32(b + off, 2 + ROD_TOKEN_LEN);
		memcpy(b + off + 6, l->token, ROD_TOKEN_LEN);
	}
	l->held = false;
	scsi_cmd_limit_data_in(cmd, get_be32(cmd->cdb + 10));
	return SCSI_OK;
}

/*
 * RECEIVE COPY STATUS(LID4) (05h; LIST IDENTIFIER b2-5): the held result of
 * the nexus's token-based copy of that list, as RECEIVE ROD TOKEN
 * INFORMATION gives it without the token, and released the same way; or of
 * its EXTENDED COPY of that list identifier (RESPONSE TO SERVICE ACTION
 * 00h for LID1, 01h for LID4; completed or with errors, its status and
 * sense data, TRANSFER COUNT in bytes, SEGMENTS PROCESSED; kept, as COPY
 * STATUS keeps it).  FreeBSD's CTL answers both
 * (ctl_receive_copy_status_lid4).  Neither: 05/24/00 on b2.
 */
static enum scsi_result copy_status_lid4(struct scsi_cmd *cmd)
{
	uint32_t list_id = get_be32(cmd->cdb + 2);
	struct scsi_rod_list *l = rod_list_held(cmd, list_id);
	const struct scsi_copy_status *h = l ? NULL : copy_status_held(cmd, list_id, false);
	uint8_t *b;

	if (!l && !h)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, -1));
	b = scsi_cmd_alloc_data_in(cmd, 32 + (l ? l->sense_len : h->sense_len));
	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	if (l) {
		rod_list_status(b, 32 + l->sense_len, l);
		l->held = false;
	} else {
		put_be32(b, 28 + (uint32_t)h->sense_len);
		b[4] = h->service_action; /* RESPONSE TO SERVICE ACTION: EXTENDED COPY(LID1) 00h or (LID4) 01h */
		/* COPY OPERATION STATUS: completed, aborted by COPY OPERATION ABORT (as CTL's RCS_CCS_ABORTED), with errors */
		b[5] = h->status == SCSI_STATUS_GOOD ? 0x01 : h->status == SCSI_STATUS_TASK_ABORTED ? 0x60 : 0x02;
		b[12] = h->status;
		b[13] = b[14] = h->sense_len; /* SENSE DATA FIELD LENGTH, SENSE DATA LENGTH */
		b[15] = 0x00; /* TRANSFER COUNT UNITS: bytes */
		put_be64(b + 16, h->bytes);
		put_be16(b + 24, h->segments);
		memcpy(b + 32, h->sense, h->sense_len);
	}
	scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	return SCSI_OK;
}

/*
 * FAILED SEGMENT DETAILS (04h; LIST IDENTIFIER b2): b0-3 AVAILABLE DATA,
 * b56 COPY COMMAND STATUS (the EXTENDED COPY's status), b58-59 SENSE DATA
 * LENGTH, the sense data from b60 (none when it ended GOOD).  The list is
 * released: a second request gets 05/24/00 on b2, as an unknown list does.
 */
static enum scsi_result failed_segment_details(struct scsi_cmd *cmd)
{
	struct scsi_copy_status *h = copy_status_held(cmd, cmd->cdb[2], true);
	uint8_t *b;

	if (!h)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, -1));
	b = scsi_cmd_alloc_data_in(cmd, 60 + (size_t)h->sense_len);
	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	put_be32(b, 56 + (uint32_t)h->sense_len);
	b[56] = h->status;
	put_be16(b + 58, h->sense_len);
	memcpy(b + 60, h->sense, h->sense_len);
	h->held = false;
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
	case RCR_FAILED_SEGMENT_DETAILS:
		return failed_segment_details(cmd);
	case RCR_COPY_STATUS_LID4:
		return copy_status_lid4(cmd);
	default:
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(1, 4));
	}
}

/*
 * The Third-party Copy VPD page's token descriptors (SPC-4): Block Device
 * ROD Limits (0000h), ROD Token Features (0106h), Supported ROD Types
 * (0108h: the change-vulnerable type in and out, the zero token in).
 * Returns the bytes written at b.
 */
static size_t rod_token_vpd(uint8_t *b)
{
	size_t off = 0;

	memset(b, 0, 36 + 96 + 136);
	put_be16(b, 0x0000);
	put_be16(b + 2, 32);
	put_be16(b + 10, ROD_MAX_RANGES);
	put_be32(b + 12, ROD_MAX_TIMEOUT_S);
	put_be32(b + 16, ROD_DEFAULT_TIMEOUT_S);
	/* b20-27 MAXIMUM TOKEN TRANSFER SIZE, b28-35 OPTIMAL TRANSFER COUNT: 0, no limit */
	off = 36;
	put_be16(b + off, 0x0106);
	put_be16(b + off + 2, 44 + 48);
	put_be32(b + off + 16, 1);                  /* MINIMUM TOKEN LIFETIME */
	put_be32(b + off + 20, 0xffffffff);         /* MAXIMUM TOKEN LIFETIME: none but inactivity */
	put_be32(b + off + 24, ROD_MAX_TIMEOUT_S);  /* MAXIMUM TOKEN INACTIVITY TIMEOUT */
	put_be16(b + off + 46, 48);
	put_be16(b + off + 48 + 2, 44);             /* the block device type's features: no preferences */
	put_be64(b + off + 48 + 32, COPY_PIECE);     /* OPTIMAL BYTES FROM TOKEN PER SEGMENT */
	off += 96;
	put_be16(b + off, 0x0108);
	put_be16(b + off + 2, 4 + 2 * 64);
	put_be16(b + off + 6, 2 * 64);
	put_be32(b + off + 8, ROD_TYPE_PIT_CHANGE_VULNERABLE);
	b[off + 8 + 4] = 0x03; /* TOKEN_IN, TOKEN_OUT */
	put_be32(b + off + 72, ROD_TYPE_BLOCK_ZERO);
	b[off + 72 + 4] = 0x02; /* TOKEN_IN */
	return off + 136;
}

/*
 * The Third-party Copy VPD page's descriptors: Supported
 * Commands (0001h: 83h/00h, 01h, 10h, 11h, 1Ch; 84h/00h, 03h, 04h, 05h, 07h) and Supported
 * Descriptors (0008h: 02h, E4h), each padded to a multiple of four bytes,
 * then those of token-based copy (rod_token_vpd).  Returns the
 * bytes written at b.
 */
size_t copy_manager_vpd(uint8_t *b)
{
	static const uint8_t commands[] = { 0x83, 5, COPY_SA_EXTENDED_COPY_LID1, COPY_SA_EXTENDED_COPY_LID4,
					    COPY_SA_POPULATE_TOKEN, COPY_SA_WRITE_USING_TOKEN,
					    COPY_SA_COPY_OPERATION_ABORT, 0x84, 5, RCR_COPY_STATUS, RCR_OPERATING_PARAMETERS,
					    RCR_FAILED_SEGMENT_DETAILS, RCR_COPY_STATUS_LID4, RCR_ROD_TOKEN_INFORMATION };
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
