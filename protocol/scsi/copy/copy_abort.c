/*
 * COPY OPERATION ABORT (SPC-4, THIRD-PARTY COPY OUT 83h service action 1Ch;
 * LIST IDENTIFIER b2-5): the copy of that list identifier which this I_T
 * nexus sent to this LU stops before its next piece and ends with TASK
 * ABORTED status; the pieces done stay written, and a WRITE USING TOKEN's
 * held result says COPY OPERATION STATUS 60h (aborted) to RECEIVE ROD TOKEN
 * INFORMATION.  A list identifier of a copy already ended and held
 * (RECEIVE COPY STATUS, RECEIVE ROD TOKEN INFORMATION) has nothing left to
 * abort: GOOD.  Neither: ILLEGAL REQUEST, INVALID FIELD IN CDB on byte 2.
 * What FreeBSD's CTL does (sys/cam/ctl/ctl_tpc.c, ctl_copy_operation_abort
 * and tpc_process: ctl_set_task_aborted, RCS_CCS_ABORTED 60h).  An EXTENDED
 * COPY(LID1) list identifier is one byte: the four-byte field names it by
 * its value; an EXTENDED COPY(LID4)'s is four bytes.
 */
#include "copy/copy.h"
#include "spc/spc.h"

/* Whether c is a copy in the task set (started or waiting) whose list identifier is list_id. */
static bool copy_named(const struct scsi_cmd *c, uint32_t list_id)
{
	if (!c->op || c->op->opcode != 0x83 || c->aborted)
		return false;
	switch (c->op->service_action) {
	case COPY_SA_EXTENDED_COPY_LID1: /* started (its parameter list is in): byte 0, unless LIST ID USAGE is 11b */
		return c->started && c->data_out && c->data_length >= 2 &&
		       ((c->data_out[1] >> 3) & 0x3) != XCOPY_LIST_ID_USAGE_NONE && c->data_out[0] == list_id;
	case COPY_SA_EXTENDED_COPY_LID4: /* the same, LIST IDENTIFIER bytes 20-23 */
		return c->started && c->data_out && c->data_length >= XCOPY_LID4_HEADER_LEN &&
		       ((c->data_out[1] >> 3) & 0x3) != XCOPY_LIST_ID_USAGE_NONE && get_be32(c->data_out + 20) == list_id;
	case COPY_SA_WRITE_USING_TOKEN:
		return get_be32(c->cdb + 6) == list_id;
	default:
		return false;
	}
}

enum scsi_result copy_operation_abort_exec(struct scsi_cmd *cmd)
{
	uint32_t list_id = get_be32(cmd->cdb + 2);

	for (struct scsi_cmd *c = cmd->lu->ts.head; c; c = c->ts_next) {
		if (c != cmd && c->nexus == cmd->nexus && copy_named(c, list_id)) {
			c->copy_abort = true;
			return SCSI_OK;
		}
	}
	if (copy_status_held(cmd, list_id, false) || rod_list_held(cmd, list_id))
		return SCSI_OK;
	return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, -1));
}
