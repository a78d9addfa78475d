/*
 * BHS codec helpers and CRC32C digests (RFC 7143 11.2, 13.1).
 *
 * ISA-L's crc32_iscsi() neither inverts the seed nor the result: the
 * standard CRC32C of a buffer is ~crc32_iscsi(buf, len, 0xffffffff), and
 * feeding pieces in turn with the previous raw value chains them.
 */
#include <string.h>

#include <isa-l/crc.h>

#include "pdu.h"

void iscsi_bhs_init(uint8_t *bhs, uint8_t opcode, uint8_t flags, uint32_t data_len)
{
	memset(bhs, 0, ISCSI_BHS_LEN);
	bhs[0] = opcode;
	bhs[1] = flags;
	put_be24(bhs + ISCSI_BHS_DATA_SEGMENT_LENGTH, data_len);
}

uint32_t iscsi_crc32c_update(uint32_t crc, const void *buf, size_t len)
{
	/* crc is the standard (finished) value of what came before; 0 for nothing. */
	uint32_t raw = ~crc;

	while (len > 0) {
		int chunk = len > 0x40000000 ? 0x40000000 : (int)len;
		raw = crc32_iscsi((unsigned char *)(uintptr_t)buf, chunk, raw);
		buf = (const uint8_t *)buf + chunk;
		len -= (size_t)chunk;
	}
	return ~raw;
}

uint32_t iscsi_crc32c(const void *buf, size_t len)
{
	return iscsi_crc32c_update(0, buf, len);
}

/* RFC 3720 B.4: 32 bytes of zeros give CRC 0x8a9136aa, sent as aa 36 91 8a. */
void iscsi_digest_put(uint8_t *p, uint32_t crc)
{
	p[0] = (uint8_t)crc;
	p[1] = (uint8_t)(crc >> 8);
	p[2] = (uint8_t)(crc >> 16);
	p[3] = (uint8_t)(crc >> 24);
}

uint32_t iscsi_digest_get(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

int iscsi_bhs_check(const uint8_t *bhs, uint32_t max_data)
{
	uint8_t opcode = iscsi_bhs_opcode(bhs);

	switch (opcode) {
	case ISCSI_OP_NOP_OUT:
	case ISCSI_OP_SCSI_CMD:
	case ISCSI_OP_TASK_MGMT_REQ:
	case ISCSI_OP_LOGIN_REQ:
	case ISCSI_OP_TEXT_REQ:
	case ISCSI_OP_DATA_OUT:
	case ISCSI_OP_LOGOUT_REQ:
	case ISCSI_OP_SNACK_REQ:
		break;
	default:
		/* RFC 7143 11.17.1: an opcode the target does not implement (or a target opcode). */
		return ISCSI_REJECT_COMMAND_NOT_SUPPORTED;
	}
	/* RFC 7143 11.2.1.5: data segments longer than the declared MaxRecvDataSegmentLength. */
	if (iscsi_bhs_data_len(bhs) > max_data)
		return ISCSI_REJECT_PROTOCOL_ERROR;
	/* Only the SCSI Command PDU carries AHS (Extended CDB, Bidirectional Read Length). */
	if (iscsi_bhs_ahs_len(bhs) != 0 && opcode != ISCSI_OP_SCSI_CMD)
		return ISCSI_REJECT_INVALID_PDU_FIELD;
	return 0;
}

const char *iscsi_opcode_name(uint8_t opcode)
{
	switch (opcode) {
	case ISCSI_OP_NOP_OUT: return "NOP-Out";
	case ISCSI_OP_SCSI_CMD: return "SCSI Command";
	case ISCSI_OP_TASK_MGMT_REQ: return "Task Management Function Request";
	case ISCSI_OP_LOGIN_REQ: return "Login Request";
	case ISCSI_OP_TEXT_REQ: return "Text Request";
	case ISCSI_OP_DATA_OUT: return "SCSI Data-Out";
	case ISCSI_OP_LOGOUT_REQ: return "Logout Request";
	case ISCSI_OP_SNACK_REQ: return "SNACK Request";
	case ISCSI_OP_NOP_IN: return "NOP-In";
	case ISCSI_OP_SCSI_RSP: return "SCSI Response";
	case ISCSI_OP_TASK_MGMT_RSP: return "Task Management Function Response";
	case ISCSI_OP_LOGIN_RSP: return "Login Response";
	case ISCSI_OP_TEXT_RSP: return "Text Response";
	case ISCSI_OP_DATA_IN: return "SCSI Data-In";
	case ISCSI_OP_LOGOUT_RSP: return "Logout Response";
	case ISCSI_OP_R2T: return "R2T";
	case ISCSI_OP_ASYNC_MSG: return "Asynchronous Message";
	case ISCSI_OP_REJECT: return "Reject";
	default: return "unknown";
	}
}
