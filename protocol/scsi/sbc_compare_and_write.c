/* Placeholder: replaced by the real implementation. */
#include "scsi_internal.h"

enum scsi_result sbc_compare_and_write_parse(struct scsi_cmd *cmd)
{
	(void)cmd;
	return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
}

enum scsi_result sbc_compare_and_write_exec(struct scsi_cmd *cmd)
{
	(void)cmd;
	return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
}

bool sbc_compare_and_write_enabled(const struct scsi_lu *lu)
{
	(void)lu;
	return false;
}
