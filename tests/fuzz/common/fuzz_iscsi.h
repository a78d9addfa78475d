/*
 * An in-process iSCSI target for the iSCSI fuzz harnesses: the real server
 * (protocol/iscsi/) on a libev loop in this thread, with one connection per
 * input accepted on one end of a socketpair (iscsi_conn_accept, as a portal
 * would), the harness being the initiator on the other end.  Nothing runs
 * in another thread and nothing waits: the loop is turned without blocking
 * until it has nothing left to do.
 *
 * Targets (RFC 7143 4.2.7.1 names):
 *   FUZZ_TARGET       no authentication; LU 0 of the variant the input picks,
 *                     made afresh for every input (fuzz_lu.h)
 *   FUZZ_TARGET_CHAP  one-way and mutual CHAP (RFC 7143 12.1.3); no LU
 *   FUZZ_TARGET_ACL   only FUZZ_INITIATOR_ACL may log in, with its own CHAP; no LU
 */
#ifndef SBCEMU_FUZZ_ISCSI_H
#define SBCEMU_FUZZ_ISCSI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fuzz_lu.h"
#include "iscsi_internal.h"

#define FUZZ_TARGET "iqn.2026-12.org.sbcemu:fuzz"
#define FUZZ_TARGET_CHAP "iqn.2026-12.org.sbcemu:chap"
#define FUZZ_TARGET_ACL "iqn.2026-12.org.sbcemu:acl"
#define FUZZ_INITIATOR "iqn.2026-12.org.sbcemu:initiator"
#define FUZZ_INITIATOR_ACL "iqn.2026-12.org.sbcemu:allowed"
#define FUZZ_CHAP_USER "fuzz-initiator"
#define FUZZ_CHAP_SECRET "fuzz-chap-secret-1"
#define FUZZ_MUTUAL_USER "fuzz-target"
#define FUZZ_MUTUAL_SECRET "fuzz-mutual-secret"
#define FUZZ_ACL_CHAP_USER "allowed"
#define FUZZ_ACL_CHAP_SECRET "allowed-secret-12"

/* Called for every PDU the target sends (digests checked and stripped). */
typedef void (*fuzz_iscsi_pdu_fn)(void *arg, const uint8_t *bhs, const uint8_t *data, uint32_t data_len);

/* The server parameters an input may choose (applied at fuzz_iscsi_begin). */
void fuzz_iscsi_profile(struct iscsi_server_params *p, unsigned profile);

/* Starts a connection to a fresh device for FUZZ_TARGET; on_pdu may be NULL. */
void fuzz_iscsi_begin(enum fuzz_lu_variant variant, unsigned profile, fuzz_iscsi_pdu_fn on_pdu, void *arg);
/*
 * Sends bytes as they are, turning the loop while the socket is full.
 * Returns false once the target stopped reading (closed the connection).
 */
bool fuzz_iscsi_send_raw(const void *buf, size_t len);
/*
 * Sends one PDU: bhs (48 bytes, DataSegmentLength set from data_len), the
 * AHS, the data and its padding, with the digests the connection uses
 * (iscsi_crc32c, RFC 7143 11.2.3).
 */
bool fuzz_iscsi_send_pdu(const uint8_t *bhs, const uint8_t *ahs, uint32_t ahs_len, const uint8_t *data,
			 uint32_t data_len);
/* Turns the loop until the target has nothing more to say. */
void fuzz_iscsi_pump(void);
/* True while the target's side of the connection is open. */
bool fuzz_iscsi_connected(void);
/* The connection (NULL once it is gone): its negotiated parameters. */
struct iscsi_conn *fuzz_iscsi_conn(void);
/* Closes our side, waits for the connection and its session to go, frees the device. */
void fuzz_iscsi_end(void);

#endif
