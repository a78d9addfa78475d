/* Placeholder: replaced by the real implementation. */
#include "scsi_internal.h"

enum scsi_result sbc_read_parse(struct scsi_cmd *cmd)
{
	(void)cmd;
	return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
}

enum scsi_result sbc_read_exec(struct scsi_cmd *cmd)
{
	(void)cmd;
	return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
}

enum scsi_result sbc_write_parse(struct scsi_cmd *cmd)
{
	(void)cmd;
	return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
}

enum scsi_result sbc_write_exec(struct scsi_cmd *cmd)
{
	(void)cmd;
	return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
}

enum scsi_result sbc_write_and_verify_parse(struct scsi_cmd *cmd)
{
	(void)cmd;
	return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
}

enum scsi_result sbc_write_and_verify_exec(struct scsi_cmd *cmd)
{
	(void)cmd;
	return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
}

enum scsi_result sbc_orwrite_parse(struct scsi_cmd *cmd)
{
	(void)cmd;
	return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
}

enum scsi_result sbc_orwrite_exec(struct scsi_cmd *cmd)
{
	(void)cmd;
	return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
}
