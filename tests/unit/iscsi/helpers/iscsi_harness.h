/*
 * Test harness for the iSCSI target: runs a server (one target, one
 * 64 MiB memory-backed LU 0) on its own libev loop in a thread on
 * 127.0.0.1:<ephemeral port>, and speaks raw PDUs to it over blocking
 * sockets, so tests can assert exact bytes of what the target sends.
 */
#ifndef SBCEMU_TEST_ISCSI_HARNESS_H
#define SBCEMU_TEST_ISCSI_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iscsi.h"

#define HARNESS_TARGET "iqn.2024-01.org.sbcemu:test"
#define HARNESS_INITIATOR "iqn.2024-01.org.sbcemu:initiator"

struct harness_config {
	void (*params)(struct iscsi_server_params *p); /* adjust server parameters, may be NULL */
	struct iscsi_chap_credentials chap;
	struct iscsi_chap_credentials mutual;
	const struct iscsi_acl_entry *acl;
	size_t acl_len;
};

/* Starts the server; returns the TCP port. */
int harness_start(const struct harness_config *cfg);
void harness_stop(void);

/* A blocking client socket (5 s receive timeout). */
int harness_connect(void);

struct pdu {
	uint8_t bhs[48];
	uint8_t *data;      /* malloc'd, NUL-terminated beyond data_len */
	uint32_t data_len;
};

/* Sends raw bytes as they are. */
void pdu_send_raw(int fd, const void *buf, size_t len);
/* Sends a PDU (data padded to 4 bytes); digests if enabled with harness_set_digests(). */
void pdu_send(int fd, const uint8_t *bhs, const void *data, uint32_t data_len);
/* Receives one PDU; returns false on timeout/close. */
bool pdu_recv(int fd, struct pdu *p, int timeout_ms);
void pdu_free(struct pdu *p);
/* True if the peer closed the connection within timeout_ms. */
bool peer_closed(int fd, int timeout_ms);
void harness_set_digests(bool header, bool data);
/* The digests the last login negotiated. */
bool harness_header_digest(void);
bool harness_data_digest(void);

/* Builds the BHS of a request. */
void bhs_login(uint8_t *bhs, uint8_t flags, const uint8_t *isid, uint16_t tsih, uint32_t itt, uint32_t cmd_sn,
	       uint32_t exp_stat_sn);
void bhs_scsi_cmd(uint8_t *bhs, uint8_t flags, uint32_t itt, uint32_t edtl, uint32_t cmd_sn, uint32_t exp_stat_sn,
		  const uint8_t *cdb, size_t cdb_len);

/* Appends "key=value\0" to buf at *len. */
void text_add(char *buf, uint32_t *len, const char *kv);
/* Value of key in a received text segment, or NULL. */
const char *text_get(const struct pdu *p, const char *key);

/*
 * Logs in to a normal session with operational keys extra (key=value pairs
 * separated by '\n', may be NULL) in one PDU going straight from the
 * operational stage to full feature phase.  Returns the login status
 * (class << 8 | detail); *stat_sn receives the StatSN to expect next.
 */
int login_normal(int fd, const uint8_t *isid, const char *extra, uint32_t *cmd_sn, uint32_t *exp_stat_sn,
		 struct pdu *rsp);

/* Sends a SCSI command without data and returns its response PDU. */
bool scsi_no_data(int fd, uint32_t itt, uint32_t *cmd_sn, uint32_t exp_stat_sn, const uint8_t *cdb, size_t cdb_len,
		  struct pdu *rsp);

extern const uint8_t harness_isid[6];

#endif

/* Session state a test carries along. */
struct session {
	int fd;
	uint32_t cmd_sn;
	uint32_t exp_stat_sn;
	uint32_t itt;
};

/* Connects, logs in (asserting success) and consumes the POWER ON unit attention. */
void session_open(struct session *s, const char *extra);
/* READ(10)/WRITE(10) CDBs. */
void cdb_rw10(uint8_t *cdb, uint8_t opcode, uint32_t lba, uint16_t blocks);
