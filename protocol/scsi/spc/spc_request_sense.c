/*
 * REQUEST SENSE (SPC-4 6.39).
 *
 * CDB: byte 1 bit 0 DESC (descriptor format wanted; both formats are
 * supported); byte 4 ALLOCATION LENGTH.  The sense data is returned as
 * parameter data with GOOD status; it describes, in this order:
 *   - a LUN without a logical unit: ILLEGAL REQUEST, LOGICAL UNIT NOT
 *     SUPPORTED (05/25/00; SPC-4 6.39.1);
 *   - a pending unit attention of this I_T nexus, which is then cleared
 *     (SAM-5 5.14: REQUEST SENSE reports a unit attention);
 *   - a sanitize or format in progress: NOT READY with its ASC and the
 *     PROGRESS INDICATION in the sense-key specific field (SPC-4 4.5.2.4.4;
 *     sg3_utils polls this way);
 *   - a self-test running (spc_diag.c): NOT READY, SELF-TEST IN PROGRESS
 *     (02/04/09) with its progress (smartctl reads it so);
 *   - a stopped LU: NOT READY, INITIALIZING COMMAND REQUIRED (02/04/02), what
 *     a medium access command would get (as scsi_debug does);
 *   - an informational exception with MRIE 6h, "only report informational
 *     exception condition on request" (SPC-4 7.5.12): NO SENSE with its
 *     ASC/ASCQ (spc_ie.c);
 *   - otherwise NO SENSE, NO ADDITIONAL SENSE INFORMATION.
 * This is the one place besides cmd.c that encodes sense data.
 */
#include <string.h>

#include "spc/spc.h"

enum scsi_result spc_request_sense_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	bool desc = cmd->cdb[1] & 0x01;
	struct scsi_sense_info s = sense_make(SENSE_KEY_NO_SENSE, ASC_NO_ADDITIONAL_SENSE_INFORMATION);
	uint8_t buf[SCSI_SENSE_BUFFER_MAX];
	size_t n;
	uint8_t *b;

	cmd->allocation_length = cmd->cdb[4];
	if (!lu) {
		uint32_t lun;

		s = scsi_no_lu_sense(cmd->nexus, scsi_lun_decode(cmd->lun, &lun) ? lun : UINT32_MAX);
	}
	else if (scsi_ua_take(cmd->nexus, lu->lun, &s))
		; /* s holds the unit attention, now cleared */
	else if (lu->progress.active && lu->progress.asc_ascq != ASC_LOGICAL_UNIT_NOT_READY_SELF_TEST_IN_PROGRESS)
		s = sense_not_ready_in_progress(lu->progress.asc_ascq, lu->progress.fraction);
	else if (spc_diag_progress(lu, &s))
		; /* a self-test runs: NOT READY, SELF-TEST IN PROGRESS with its progress now */
	else if (lu->readiness != SCSI_LU_READY)
		s = scsi_lu_not_ready_sense(lu);
	else if (lu->stopped)
		s = sense_make(SENSE_KEY_NOT_READY, ASC_LOGICAL_UNIT_NOT_READY_INITIALIZING_COMMAND_REQUIRED);
	else
		(void)spc_ie_request_sense(lu, &s); /* MRIE 6h: the informational exception, NO SENSE */
	n = scsi_sense_encode(&s, desc, buf, sizeof(buf));
	b = scsi_cmd_alloc_data_in(cmd, n);
	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	memcpy(b, buf, n);
	scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	return SCSI_OK;
}
