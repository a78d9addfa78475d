/* Placeholder: replaced by the real implementation. */
#include "scsi_internal.h"

int spc_mode_init(struct scsi_lu *lu)
{
	(void)lu;
	return 0;
}

void spc_mode_fini(struct scsi_lu *lu)
{
	(void)lu;
}

enum scsi_result spc_mode_sense_exec(struct scsi_cmd *cmd)
{
	(void)cmd;
	return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
}

enum scsi_result spc_mode_select_parse(struct scsi_cmd *cmd)
{
	(void)cmd;
	return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
}

enum scsi_result spc_mode_select_exec(struct scsi_cmd *cmd)
{
	(void)cmd;
	return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
}
