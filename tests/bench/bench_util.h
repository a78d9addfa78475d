/*
 * What the libiscsi load generators of scripts/bench-*.sh share: the clock,
 * a seeded random stream, a logged-in session, number arguments.  The
 * big-endian codecs are the core's (scsi_wire.h).
 */
#ifndef SBCEMU_BENCH_UTIL_H
#define SBCEMU_BENCH_UTIL_H

#include <stdint.h>

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

#include "scsi_wire.h"

/* Monotonic seconds. */
double bench_now(void);
/* xorshift64* (Vigna): the next value of the stream *state (never seeded with 0). */
uint64_t bench_rnd(uint64_t *state);
/*
 * A normal session of initiator to LUN lun of target at portal (no digests,
 * no reconnect, libiscsi's timeout timeout_s), its unit attentions cleared;
 * NULL after a message on stderr naming program.
 */
struct iscsi_context *bench_open_session(const char *program, const char *initiator, const char *portal,
					 const char *target, int lun, int timeout_s);
/* A decimal or 0x number from 0 to max: 0 with *out set, or -1. */
int bench_parse_uint(const char *s, unsigned long max, unsigned long *out);

#endif
