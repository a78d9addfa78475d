/*
 * iSCSI wire format (RFC 7143 11): opcodes, Basic Header Segment offsets and
 * flags, status and reason codes, and the PDU codec helpers.  Every BHS field
 * is read and written through scsi_wire.h at the offsets named here; there
 * are no structure overlays.
 */
#ifndef SBCEMU_ISCSI_PDU_H
#define SBCEMU_ISCSI_PDU_H

#ifndef SBCE_BUILDING_ISCSI
#error "sbcemu layering: pdu.h is internal to the iSCSI front end (protocol/iscsi/): use its public header"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scsi_wire.h"

#define ISCSI_BHS_LEN 48
#define ISCSI_DIGEST_LEN 4
#define ISCSI_RESERVED_TAG 0xffffffffu

/* RFC 7143 11.2.1.2: opcodes, initiator side. */
enum iscsi_opcode {
	ISCSI_OP_NOP_OUT = 0x00,
	ISCSI_OP_SCSI_CMD = 0x01,
	ISCSI_OP_TASK_MGMT_REQ = 0x02,
	ISCSI_OP_LOGIN_REQ = 0x03,
	ISCSI_OP_TEXT_REQ = 0x04,
	ISCSI_OP_DATA_OUT = 0x05,
	ISCSI_OP_LOGOUT_REQ = 0x06,
	ISCSI_OP_SNACK_REQ = 0x10,
	/* target side */
	ISCSI_OP_NOP_IN = 0x20,
	ISCSI_OP_SCSI_RSP = 0x21,
	ISCSI_OP_TASK_MGMT_RSP = 0x22,
	ISCSI_OP_LOGIN_RSP = 0x23,
	ISCSI_OP_TEXT_RSP = 0x24,
	ISCSI_OP_DATA_IN = 0x25,
	ISCSI_OP_LOGOUT_RSP = 0x26,
	ISCSI_OP_R2T = 0x31,
	ISCSI_OP_ASYNC_MSG = 0x32,
	ISCSI_OP_REJECT = 0x3f,
};

/* Byte 0. */
#define ISCSI_BHS_IMMEDIATE 0x40
#define ISCSI_BHS_OPCODE_MASK 0x3f
/* Byte 1: the F (final) bit of most PDUs. */
#define ISCSI_FLAG_FINAL 0x80

/* Common BHS offsets (RFC 7143 11.2.1). */
#define ISCSI_BHS_TOTAL_AHS_LENGTH 4 /* in 4-byte words */
#define ISCSI_BHS_DATA_SEGMENT_LENGTH 5 /* 3 bytes */
#define ISCSI_BHS_LUN 8
#define ISCSI_BHS_ITT 16
#define ISCSI_BHS_TTT 20
#define ISCSI_BHS_CMD_SN 24
#define ISCSI_BHS_STAT_SN 24
#define ISCSI_BHS_EXP_STAT_SN 28
#define ISCSI_BHS_EXP_CMD_SN 28
#define ISCSI_BHS_MAX_CMD_SN 32

/* SCSI Command (11.3). */
#define ISCSI_CMD_FLAG_READ 0x40
#define ISCSI_CMD_FLAG_WRITE 0x20
#define ISCSI_CMD_ATTR_MASK 0x07
#define ISCSI_CMD_EDTL 20
#define ISCSI_CMD_CDB 32
#define ISCSI_CMD_CDB_LEN 16

/* AHS types (11.2.2). */
#define ISCSI_AHS_EXTENDED_CDB 1
#define ISCSI_AHS_BIDI_READ_LENGTH 2

/* SCSI Response (11.4) and Data-In (11.7). */
#define ISCSI_RSP_FLAG_BIDI_OVERFLOW 0x10
#define ISCSI_RSP_FLAG_BIDI_UNDERFLOW 0x08
#define ISCSI_RSP_FLAG_OVERFLOW 0x04
#define ISCSI_RSP_FLAG_UNDERFLOW 0x02
#define ISCSI_RSP_RESPONSE 2
#define ISCSI_RSP_STATUS 3
#define ISCSI_RSP_EXP_DATA_SN 36
#define ISCSI_RSP_BIDI_RESIDUAL 40
#define ISCSI_RSP_RESIDUAL 44
#define ISCSI_RESPONSE_COMMAND_COMPLETED 0x00
#define ISCSI_RESPONSE_TARGET_FAILURE 0x01

#define ISCSI_DATA_FLAG_ACK 0x40
#define ISCSI_DATA_FLAG_STATUS 0x01
#define ISCSI_DATA_STATUS 3
#define ISCSI_DATA_SN 36
#define ISCSI_DATA_BUFFER_OFFSET 40
#define ISCSI_DATA_RESIDUAL 44

/* R2T (11.8). */
#define ISCSI_R2T_SN 36
#define ISCSI_R2T_BUFFER_OFFSET 40
#define ISCSI_R2T_DESIRED_LENGTH 44

/* Task Management Function Request/Response (11.5, 11.6). */
#define ISCSI_TMF_FUNCTION_MASK 0x7f
#define ISCSI_TMF_REF_TASK_TAG 20
#define ISCSI_TMF_REF_CMD_SN 32
#define ISCSI_TMF_EXP_DATA_SN 36
#define ISCSI_TMF_RESPONSE 2

enum iscsi_tmf_function {
	ISCSI_TMF_ABORT_TASK = 1,
	ISCSI_TMF_ABORT_TASK_SET = 2,
	ISCSI_TMF_CLEAR_ACA = 3,
	ISCSI_TMF_CLEAR_TASK_SET = 4,
	ISCSI_TMF_LOGICAL_UNIT_RESET = 5,
	ISCSI_TMF_TARGET_WARM_RESET = 6,
	ISCSI_TMF_TARGET_COLD_RESET = 7,
	ISCSI_TMF_TASK_REASSIGN = 8,
};

enum iscsi_tmf_response {
	ISCSI_TMF_RSP_FUNCTION_COMPLETE = 0,
	ISCSI_TMF_RSP_TASK_DOES_NOT_EXIST = 1,
	ISCSI_TMF_RSP_LUN_DOES_NOT_EXIST = 2,
	ISCSI_TMF_RSP_TASK_STILL_ALLEGIANT = 3,
	ISCSI_TMF_RSP_REASSIGNMENT_NOT_SUPPORTED = 4,
	ISCSI_TMF_RSP_NOT_SUPPORTED = 5,
	ISCSI_TMF_RSP_AUTHORIZATION_FAILED = 6,
	ISCSI_TMF_RSP_REJECTED = 255,
};

/* Login Request/Response (11.12, 11.13). */
#define ISCSI_LOGIN_FLAG_TRANSIT 0x80
#define ISCSI_LOGIN_FLAG_CONTINUE 0x40
#define ISCSI_LOGIN_CSG_SHIFT 2
#define ISCSI_LOGIN_STAGE_MASK 0x03
#define ISCSI_LOGIN_VERSION_MAX 2
#define ISCSI_LOGIN_VERSION_MIN 3   /* request; VersionActive in the response */
#define ISCSI_LOGIN_ISID 8          /* 6 bytes */
#define ISCSI_LOGIN_TSIH 14
#define ISCSI_LOGIN_CID 20
#define ISCSI_LOGIN_STATUS_CLASS 36
#define ISCSI_LOGIN_STATUS_DETAIL 37

enum iscsi_login_stage {
	ISCSI_STAGE_SECURITY = 0,
	ISCSI_STAGE_OPERATIONAL = 1,
	ISCSI_STAGE_FULL_FEATURE = 3,
};

/* Login status class and detail, packed (class << 8) | detail (RFC 7143 11.13.5). */
enum iscsi_login_status {
	ISCSI_LOGIN_STATUS_SUCCESS = 0x0000,
	ISCSI_LOGIN_STATUS_INITIATOR_ERROR = 0x0200,
	ISCSI_LOGIN_STATUS_AUTHENTICATION_FAILURE = 0x0201,
	ISCSI_LOGIN_STATUS_AUTHORIZATION_FAILURE = 0x0202,
	ISCSI_LOGIN_STATUS_NOT_FOUND = 0x0203,
	ISCSI_LOGIN_STATUS_TARGET_REMOVED = 0x0204,
	ISCSI_LOGIN_STATUS_UNSUPPORTED_VERSION = 0x0205,
	ISCSI_LOGIN_STATUS_TOO_MANY_CONNECTIONS = 0x0206,
	ISCSI_LOGIN_STATUS_MISSING_PARAMETER = 0x0207,
	ISCSI_LOGIN_STATUS_CANT_INCLUDE_IN_SESSION = 0x0208,
	ISCSI_LOGIN_STATUS_SESSION_TYPE_NOT_SUPPORTED = 0x0209,
	ISCSI_LOGIN_STATUS_SESSION_DOES_NOT_EXIST = 0x020a,
	ISCSI_LOGIN_STATUS_INVALID_DURING_LOGIN = 0x020b,
	ISCSI_LOGIN_STATUS_TARGET_ERROR = 0x0300,
	ISCSI_LOGIN_STATUS_SERVICE_UNAVAILABLE = 0x0301,
	ISCSI_LOGIN_STATUS_OUT_OF_RESOURCES = 0x0302,
};

/* Text Request/Response (11.10, 11.11). */
#define ISCSI_TEXT_FLAG_CONTINUE 0x40

/* Logout Request/Response (11.14, 11.15). */
#define ISCSI_LOGOUT_REASON_MASK 0x7f
#define ISCSI_LOGOUT_CID 20
#define ISCSI_LOGOUT_RESPONSE 2
#define ISCSI_LOGOUT_TIME2WAIT 40
#define ISCSI_LOGOUT_TIME2RETAIN 42

enum iscsi_logout_reason {
	ISCSI_LOGOUT_CLOSE_SESSION = 0,
	ISCSI_LOGOUT_CLOSE_CONNECTION = 1,
	ISCSI_LOGOUT_REMOVE_CONNECTION_FOR_RECOVERY = 2,
};

enum iscsi_logout_response {
	ISCSI_LOGOUT_RSP_CLOSED = 0,
	ISCSI_LOGOUT_RSP_CID_NOT_FOUND = 1,
	ISCSI_LOGOUT_RSP_RECOVERY_NOT_SUPPORTED = 2,
	ISCSI_LOGOUT_RSP_CLEANUP_FAILED = 3,
};

/* Reject (11.17). */
#define ISCSI_REJECT_REASON 2
#define ISCSI_REJECT_DATA_SN 36

enum iscsi_reject_reason {
	ISCSI_REJECT_DATA_DIGEST_ERROR = 0x02,
	ISCSI_REJECT_SNACK_REJECT = 0x03,
	ISCSI_REJECT_PROTOCOL_ERROR = 0x04,
	ISCSI_REJECT_COMMAND_NOT_SUPPORTED = 0x05,
	ISCSI_REJECT_IMMEDIATE_COMMAND_REJECT = 0x06,
	ISCSI_REJECT_TASK_IN_PROGRESS = 0x07,
	ISCSI_REJECT_INVALID_DATA_ACK = 0x08,
	ISCSI_REJECT_INVALID_PDU_FIELD = 0x09,
	ISCSI_REJECT_LONG_OPERATION_REJECT = 0x0a,
	ISCSI_REJECT_WAITING_FOR_LOGOUT = 0x0c,
};

/*
 * Sense codes for iSCSI conditions (RFC 7143 11.4.7.2) and SPC-4 data phase
 * errors, used with ABORTED COMMAND when a task ends for a transport reason.
 */
#define ISCSI_ASC_UNEXPECTED_UNSOLICITED_DATA 0x0c0c
#define ISCSI_ASC_INCORRECT_AMOUNT_OF_DATA 0x0c0d
#define ISCSI_ASC_PROTOCOL_SERVICE_CRC_ERROR 0x4705
#define ISCSI_ASC_DATA_PHASE_ERROR 0x4b00
#define ISCSI_ASC_DATA_OFFSET_ERROR 0x4b05

/* A received PDU: pointers into the connection's receive buffer, valid while it is handled. */
struct iscsi_pdu {
	const uint8_t *bhs;
	const uint8_t *ahs;
	uint32_t ahs_len;     /* bytes */
	const uint8_t *data;
	uint32_t data_len;    /* DataSegmentLength, without padding */
};

static inline uint8_t iscsi_bhs_opcode(const uint8_t *bhs)
{
	return bhs[0] & ISCSI_BHS_OPCODE_MASK;
}

static inline bool iscsi_bhs_immediate(const uint8_t *bhs)
{
	return (bhs[0] & ISCSI_BHS_IMMEDIATE) != 0;
}

static inline uint32_t iscsi_bhs_ahs_len(const uint8_t *bhs)
{
	return (uint32_t)bhs[ISCSI_BHS_TOTAL_AHS_LENGTH] * 4;
}

static inline uint32_t iscsi_bhs_data_len(const uint8_t *bhs)
{
	return get_be24(bhs + ISCSI_BHS_DATA_SEGMENT_LENGTH);
}

static inline uint32_t iscsi_pad4(uint32_t len)
{
	return (4 - (len & 3)) & 3;
}

/* Starts an outgoing BHS: zeroes it and sets opcode, byte 1 and the DataSegmentLength. */
void iscsi_bhs_init(uint8_t *bhs, uint8_t opcode, uint8_t flags, uint32_t data_len);

/* CRC32C as iSCSI uses it (RFC 7143 13.1, RFC 3720 B.4): the final value, seed and xor applied. */
uint32_t iscsi_crc32c(const void *buf, size_t len);
/* Continues a digest: start with crc = 0, feed pieces, finish with iscsi_crc32c_final(). */
uint32_t iscsi_crc32c_update(uint32_t crc, const void *buf, size_t len);
/* The 4 digest bytes as they go on the wire (least significant byte first, RFC 3720 B.4). */
void iscsi_digest_put(uint8_t *p, uint32_t crc);
uint32_t iscsi_digest_get(const uint8_t *p);

/*
 * Checks the structure of a received BHS before its data segment is read,
 * so a peer's mistake never costs the buffer of a data segment: opcode known to this side, AHS and data lengths within
 * max_data (the MaxRecvDataSegmentLength we declared).  Returns 0 or an
 * enum iscsi_reject_reason.
 */
int iscsi_bhs_check(const uint8_t *bhs, uint32_t max_data);

/* Returns the opcode's name for logs. */
const char *iscsi_opcode_name(uint8_t opcode);

#endif
