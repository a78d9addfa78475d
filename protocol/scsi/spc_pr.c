/* Placeholder: replaced by the real implementation. */
#include "scsi_internal.h"

int spc_pr_init(struct scsi_lu *lu)
{
	(void)lu;
	return 0;
}

void spc_pr_fini(struct scsi_lu *lu)
{
	(void)lu;
}

bool spc_reservation_conflict(const struct scsi_cmd *cmd)
{
	(void)cmd;
	return false;
}

void spc_pr_nexus_lost(struct scsi_lu *lu, const struct scsi_nexus *nexus)
{
	(void)lu;
	(void)nexus;
}

void spc_pr_lu_reset(struct scsi_lu *lu)
{
	(void)lu;
}

enum scsi_result spc_persistent_reserve_in_exec(struct scsi_cmd *cmd)
{
	(void)cmd;
	return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
}

enum scsi_result spc_persistent_reserve_out_parse(struct scsi_cmd *cmd)
{
	(void)cmd;
	return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
}

enum scsi_result spc_persistent_reserve_out_exec(struct scsi_cmd *cmd)
{
	(void)cmd;
	return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
}
