/*
 * START STOP UNIT (SBC-4 5.25).
 *
 * CDB: byte 1 bit 0 IMMED; byte 3 bits 3:0 POWER CONDITION MODIFIER; byte 4
 * bits 7:4 POWER CONDITION, bit 2 NO_FLUSH, bit 1 LOEJ, bit 0 START.
 *
 * POWER CONDITION 0h (START_VALID): START and LOEJ act.
 *   START = 0: the LU enters the stopped power condition (lu->stopped): the
 *     prologue in cmd.c then ends medium access commands with NOT READY,
 *     INITIALIZING COMMAND REQUIRED (02/04/02).  The volatile cache is
 *     written to the medium first unless NO_FLUSH = 1.
 *   START = 1: the LU leaves the stopped power condition.
 *   LOEJ = 1 on a removable medium (params.removable) unloads (START = 0:
 *     medium access then gets NOT READY, MEDIUM NOT PRESENT, 02/3A/00) or
 *     loads (START = 1; the other I_T nexuses get NOT READY TO READY
 *     CHANGE, 06/28/00) it; while any I_T nexus prevents medium removal
 *     (PREVENT ALLOW MEDIUM REMOVAL) that is ILLEGAL REQUEST, MEDIUM REMOVAL
 *     PREVENTED (05/53/02; libiscsi PreventAllow.Eject expects it for both).
 *     LOEJ = 1 on a medium that cannot be removed -> 05/24/00 on LOEJ.
 * Other POWER CONDITION values ignore START and LOEJ (SBC-4 table 93):
 *   1h ACTIVE, 2h IDLE, 3h STANDBY, Ah FORCE_IDLE_0, Bh FORCE_STANDBY_0:
 *     these power conditions all process commands, so the LU leaves the
 *     stopped power condition; the modifier selects idle_a/b/c (0-2) or
 *     standby_z/y (0-1) and must be 0 for ACTIVE;
 *   7h LU_CONTROL: power conditions return to the LU's own control; the
 *     START state is kept;
 *   5h (obsolete) and the reserved values -> 05/24/00 on POWER CONDITION,
 *     an invalid modifier -> 05/24/00 on POWER CONDITION MODIFIER.
 * IMMED = 1 is accepted; status is returned when the flush is done either
 * way (the state changes before the flush starts).
 */
#include "sbc/sbc.h"
#include "spc/spc.h"

#define PC_START_VALID 0x0
#define PC_ACTIVE 0x1
#define PC_IDLE 0x2
#define PC_STANDBY 0x3
#define PC_LU_CONTROL 0x7
#define PC_FORCE_IDLE_0 0xa
#define PC_FORCE_STANDBY_0 0xb

/* Worker: writes the volatile cache to the medium (SBC-4 5.25: unless NO_FLUSH). */
static void flush_work(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	int rc;

	rc = lu->backend->ops->flush(lu->backend);
	if (rc < 0)
		scsi_cmd_fail_errno(cmd, rc, true);
}

/* The largest POWER CONDITION MODIFIER for power_condition, or -1 if the value is not accepted. */
static int max_modifier(uint8_t power_condition)
{
	switch (power_condition) {
	case PC_START_VALID:
	case PC_ACTIVE:
	case PC_LU_CONTROL:
		return 0;
	case PC_IDLE:
	case PC_FORCE_IDLE_0:
		return 2;
	case PC_STANDBY:
	case PC_FORCE_STANDBY_0:
		return 1;
	default:
		return -1;
	}
}

enum scsi_result sbc_start_stop_unit_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	const uint8_t *cdb = cmd->cdb;
	uint8_t modifier = cdb[3] & 0x0f, power_condition = cdb[4] >> 4;
	bool no_flush = cdb[4] & 0x04, loej = cdb[4] & 0x02, start = cdb[4] & 0x01;
	int max = max_modifier(power_condition);

	if (max < 0)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(4, 7));
	if (modifier > max)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(3, 3));
	if (power_condition == PC_LU_CONTROL)
		return SCSI_OK;
	if (power_condition != PC_START_VALID) {
		lu->stopped = false;
		return SCSI_OK;
	}
	if (loej) {
		if (!lu->params.removable)
			return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(4, 1));
		if (lu->prevent_count > 0)
			return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ILLEGAL_REQUEST, ASC_MEDIUM_REMOVAL_PREVENTED));
	}
	if (start) {
		lu->stopped = false;
		/* A medium loaded by this initiator: the others learn it from 28/00 (SPC-4's unit attentions). */
		if (loej && lu->readiness == SCSI_LU_NO_MEDIUM) {
			lu->readiness = SCSI_LU_READY;
			scsi_ua_establish_all(lu, SCSI_UA_NOT_READY_TO_READY_CHANGE, cmd->nexus);
		}
		return SCSI_OK;
	}
	lu->stopped = true;
	/* Unloaded: NOT READY, MEDIUM NOT PRESENT (02/3A/00) until loaded again. */
	if (loej)
		lu->readiness = SCSI_LU_NO_MEDIUM;
	if (no_flush)
		return SCSI_OK;
	return scsi_cmd_run_io(cmd, flush_work, NULL);
}
