/*
 * TEST UNIT READY (SPC-4 6.47) and PREVENT ALLOW MEDIUM REMOVAL (SBC-4
 * 5.14 for direct-access devices).
 *
 * TEST UNIT READY has nothing of its own to do: the prologue in cmd.c
 * already ended it with NOT READY (stopped LU, sanitize or format in
 * progress) or UNIT ATTENTION when that is the answer.
 *
 * PREVENT ALLOW MEDIUM REMOVAL: byte 4 bits 1:0 PREVENT: 00b allow, 01b
 * prevent; 10b and 11b are obsolete in SBC-4 (they were the media changer
 * forms) -> INVALID FIELD IN CDB.  Prevention is kept per I_T nexus; an
 * ALLOW from one nexus ends only its own prevent, and I_T nexus loss and
 * LOGICAL UNIT RESET end it too (SBC-4 5.14).  The command is accepted on
 * non-removable media as well, where it has no visible effect (SBC-4 puts
 * no restriction on it; Linux sends it only for removable media).
 */
#include "spc/spc.h"

enum scsi_result spc_test_unit_ready_exec(struct scsi_cmd *cmd)
{
	(void)cmd;
	return SCSI_OK;
}

enum scsi_result spc_prevent_allow_medium_removal_exec(struct scsi_cmd *cmd)
{
	uint8_t prevent = cmd->cdb[4] & 0x03;

	if (prevent > 1)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(4, 1));
	spc_prevent_set(cmd->lu, cmd->nexus, prevent == 1);
	return SCSI_OK;
}
