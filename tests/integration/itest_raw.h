/*
 * Raw iSCSI over a TCP socket, for what libiscsi will not send: malformed and
 * truncated PDUs, connections dropped with an R2T outstanding, and DataDigest
 * (libiscsi 1.19 only offers DataDigest=None).  PDU layouts: RFC 7143 11.
 */
#ifndef SBCEMU_ITEST_RAW_H
#define SBCEMU_ITEST_RAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "itest.h"

/* Opcodes (RFC 7143 11.1.1). */
#define RAW_OP_NOP_OUT 0x00
#define RAW_OP_SCSI_CMD 0x01
#define RAW_OP_TMF_REQ 0x02
#define RAW_OP_LOGIN_REQ 0x03
#define RAW_OP_TEXT_REQ 0x04
#define RAW_OP_DATA_OUT 0x05
#define RAW_OP_LOGOUT_REQ 0x06
#define RAW_OP_NOP_IN 0x20
#define RAW_OP_SCSI_RSP 0x21
#define RAW_OP_LOGIN_RSP 0x23
#define RAW_OP_TEXT_RSP 0x24
#define RAW_OP_DATA_IN 0x25
#define RAW_OP_LOGOUT_RSP 0x26
#define RAW_OP_R2T 0x31
#define RAW_OP_ASYNC 0x32
#define RAW_OP_REJECT 0x3f

struct itest_raw {
	int fd;
	uint32_t cmdsn;        /* next CmdSN to use */
	uint32_t exp_statsn;
	uint32_t itt;          /* next ITT */
	uint16_t tsih;
	bool header_digest;    /* negotiated CRC32C */
	bool data_digest;
	uint32_t target_mrdsl; /* the target's MaxRecvDataSegmentLength */
	uint32_t max_burst;
	uint32_t first_burst;
	bool initial_r2t, immediate_data;
};

struct itest_pdu {
	uint8_t bhs[48];
	uint8_t *data;         /* malloc'd, NUL-terminated for convenience */
	uint32_t data_len;
};

/* RFC 3720 B.4 CRC32C (Castagnoli), as iSCSI uses it; bit-wise, independent of the daemon's code. */
uint32_t itest_crc32c(const void *p, size_t n);

/* TCP connect to the daemon; returns an fd or -1. */
int itest_raw_connect(const struct itest_daemon *d);
/*
 * Connects and logs in (security stage AuthMethod=None, then operational
 * stage).  digests: also offer HeaderDigest/DataDigest=CRC32C only.
 * initial_r2t/immediate_data: the values the initiator offers.  Returns 0,
 * or -1 with the reason in err.
 */
int itest_raw_login(struct itest_raw *c, const struct itest_daemon *d, const char *initiator, const char *target,
		    bool digests, bool initial_r2t, bool immediate_data, char *err, size_t errlen);
/* The same, offering AuthMethod=auth_offer ("None", "CHAP,None") in the security stage. */
int itest_raw_login_auth(struct itest_raw *c, const struct itest_daemon *d, const char *initiator,
			 const char *target, bool digests, bool initial_r2t, bool immediate_data, const char *auth_offer,
			 char *err, size_t errlen);
void itest_raw_close(struct itest_raw *c);

/* Writes exactly n bytes; returns 0 or -1. */
int itest_raw_write(int fd, const void *p, size_t n);
/* Sends a PDU: sets DataSegmentLength, pads the data, appends digests as negotiated.  Returns 0 or -1. */
int itest_raw_send(struct itest_raw *c, uint8_t bhs[48], const void *data, uint32_t len);
/*
 * Receives one PDU (checks digests as negotiated).  Returns 1, 0 on orderly
 * EOF, -1 on a connection error (reset), -2 on timeout, -3 on a bad digest or
 * a PDU too large to believe.
 */
int itest_raw_recv(struct itest_raw *c, struct itest_pdu *pdu, int timeout_ms);
void itest_pdu_free(struct itest_pdu *pdu);
/* Waits until the peer closes the connection: 1 if it did within timeout_ms (PDUs before that are skipped). */
int itest_raw_wait_closed(struct itest_raw *c, int timeout_ms);

/* Fills bhs for a SCSI Command PDU: F, R/W, simple attribute, LUN, ITT, EDTL, CmdSN, ExpStatSN, CDB. */
void itest_raw_scsi_cmd(struct itest_raw *c, uint8_t bhs[48], int lun, const uint8_t *cdb, int cdb_len, bool read,
			bool write, uint32_t edtl);

/*
 * Sends a CDB without data and waits for its SCSI Response (skipping other
 * PDUs).  Returns the status byte (sense key in *sense_key if not NULL), or -1.
 */
int itest_raw_nodata_cmd(struct itest_raw *c, int lun, const uint8_t *cdb, int cdb_len, int *sense_key);
/* TEST UNIT READY until it reports no UNIT ATTENTION (at most 10 times). */
void itest_raw_clear_ua(struct itest_raw *c, int lun);
/*
 * A SCSI command with a CDB of up to 260 bytes (bytes 16 on in an Extended
 * CDB AHS, RFC 7143 11.2.2) and Data-Out sent as immediate data, which must fit
 * FirstBurstLength and MaxRecvDataSegmentLength (login with ImmediateData=Yes,
 * no digests).  Fills r as itest_cmd does (no Data-In).
 */
void itest_raw_long_cdb_cmd(struct itest_raw *c, int lun, const uint8_t *cdb, int cdb_len, const void *out,
			    uint32_t out_len, struct itest_result *r);
/* The same with up to in_len bytes of Data-In (r->data, r->data_len; free with itest_result_free). */
void itest_raw_long_cdb_io(struct itest_raw *c, int lun, const uint8_t *cdb, int cdb_len, const void *out,
			   uint32_t out_len, uint32_t in_len, struct itest_result *r);

/*
 * The same addressed by a full 8-byte SAM LUN (SAM-5 4.7), e.g. a
 * conglomerate's subsidiary LUN N/E, 00 NN EE EE 00 00 00 00: see
 * ITEST_LUN_SUBSIDIARY.  (libiscsi 1.19 sets only bytes 0-1 of the LUN.)
 */
void itest_raw_cmd_lun64(struct itest_raw *c, uint64_t sam_lun, const uint8_t *cdb, int cdb_len, const void *out,
			 uint32_t out_len, uint32_t in_len, struct itest_result *r);
/* The SAM LUN of LUN lun (< 256) as itest_raw_scsi_cmd sends it: peripheral device addressing, byte 1. */
#define ITEST_LUN_SIMPLE(lun) ((uint64_t)((lun) & 0xff) << 48)
/*
 * The SAM LUN of subsidiary element (1..16383) of the administrative LU
 * admin (< 256): two levels of simple addressing, admin in bytes 0-1, element
 * in bytes 2-3 (SAM-5 4.7; sg3_utils decode_lun with LU_CONG = 1).
 */
#define ITEST_LUN_SUBSIDIARY(admin, element) (ITEST_LUN_SIMPLE(admin) | (uint64_t)((element) & 0x3fff) << 32)

/*
 * itest_raw_cmd_lun64 in two halves, for commands outstanding together:
 * submit sends the SCSI Command PDU and gives its ITT (0, or -1 with the
 * reason in err); collect waits for the SCSI Response of ITT *itt, or with
 * *itt = ITEST_RAW_ANY_ITT of any command (then no Data-In is kept: in_len
 * 0), and sets *itt to the ITT answered.  r as itest_raw_long_cdb_io's.
 */
#define ITEST_RAW_ANY_ITT 0xffffffffu
int itest_raw_submit_lun64(struct itest_raw *c, uint64_t sam_lun, const uint8_t *cdb, int cdb_len, const void *out,
			   uint32_t out_len, uint32_t in_len, uint32_t *itt, char *err, size_t errlen);
void itest_raw_collect(struct itest_raw *c, uint32_t *itt, uint32_t in_len, struct itest_result *r);

#endif
