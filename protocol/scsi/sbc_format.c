/* Placeholder: replaced by the real implementation. */
#include "scsi_internal.h"

enum scsi_result sbc_format_unit_parse(struct scsi_cmd *cmd)
{
	(void)cmd;
	return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
}

enum scsi_result sbc_format_unit_exec(struct scsi_cmd *cmd)
{
	(void)cmd;
	return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
}
