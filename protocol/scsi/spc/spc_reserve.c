/*
 * RESERVE(6) / RESERVE(10) and RELEASE(6) / RELEASE(10): SPC-2 reservations
 * (SPC-2 5.5.1, 7.21-7.24; obsolete in SPC-4 but still sent by initiators
 * and exercised by libiscsi's Reserve6 tests).  The holder is
 * lu->spc2_reservation_holder; the conflicts it causes are in spc_pr.c
 * (spc_reservation_conflict).
 *
 * Rules:
 *   - RESERVE from the holder again: GOOD; from another I_T nexus while
 *     reserved: RESERVATION CONFLICT;
 *   - RELEASE from the holder ends the reservation; from any other nexus it
 *     is GOOD and does nothing (SPC-2 5.5.1);
 *   - the reservation ends with its I_T nexus (logout, connection loss,
 *     I_T NEXUS RESET) and with LOGICAL UNIT RESET (spc_pr.c hooks);
 *   - third-party reservations (RESERVE(10) 3RDPTY, LONGID) are refused by
 *     the opcode table's CDB USAGE DATA (05/24/00 on the bit);
 *   - with persistent reservations present, CRH = 1 (SPC-4 5.13): the
 *     persistent reservation holder, or a registrant under a registrants
 *     only or all registrants reservation, gets GOOD and nothing changes;
 *     anyone else gets RESERVATION CONFLICT, since SPC-2 5.5.1 makes every
 *     RESERVE and RELEASE conflict while a registration exists.
 */
#include "spc/spc.h"

enum scsi_result spc_reserve_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;

	if (spc_pr_active(lu)) {
		if (spc_pr_crh_no_op(lu, cmd->nexus))
			return SCSI_OK;
		return scsi_cmd_set_status(cmd, SCSI_STATUS_RESERVATION_CONFLICT);
	}
	if (lu->spc2_reservation_holder && lu->spc2_reservation_holder != cmd->nexus)
		return scsi_cmd_set_status(cmd, SCSI_STATUS_RESERVATION_CONFLICT);
	lu->spc2_reservation_holder = cmd->nexus;
	return SCSI_OK;
}

enum scsi_result spc_release_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;

	if (spc_pr_active(lu)) {
		if (spc_pr_crh_no_op(lu, cmd->nexus))
			return SCSI_OK;
		return scsi_cmd_set_status(cmd, SCSI_STATUS_RESERVATION_CONFLICT);
	}
	if (lu->spc2_reservation_holder == cmd->nexus)
		lu->spc2_reservation_holder = NULL;
	return SCSI_OK;
}
