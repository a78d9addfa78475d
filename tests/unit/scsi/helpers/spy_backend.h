/*
 * A backend wrapper for unit tests of the SBC handlers: it forwards to the
 * LU's memory backend and records what the handler asked for (discard vs.
 * write_zeroes and their flags, flushes), can fail writes or flushes with an
 * errno, and can pretend some byte ranges are holes (the memory backend
 * tracks none) so GET LBA STATUS has something to report.
 */
#ifndef SBCEMU_TEST_SPY_BACKEND_H
#define SBCEMU_TEST_SPY_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"

struct scsi_lu;

#define SPY_MAX_HOLES 8

struct spy_backend {
	struct backend be;      /* what the LU now uses */
	struct backend *inner;  /* the backend doing the work */

	/* calls seen */
	unsigned writes, discards, zeroes, zeroes_may_discard, extents;
	uint64_t written_bytes, discarded_bytes, zeroed_bytes;
	unsigned flushes;

	/* behaviour */
	int fail_errno;         /* > 0: write, discard and write_zeroes fail with -fail_errno */
	int flush_fail_errno;   /* > 0: flush fails with -flush_fail_errno (fail_errno leaves flush alone) */
	bool extent_unsupported;/* extent returns -EOPNOTSUPP */
	uint64_t extent_max;    /* > 0: no extent longer than this is reported */
	unsigned nholes;        /* byte ranges reported as holes (sorted, disjoint) */
	struct {
		uint64_t offset, len;
	} holes[SPY_MAX_HOLES];
};

/* Wraps lu->backend; the LU frees the spy (and the inner backend) when it is destroyed. */
struct spy_backend *spy_backend_install(struct scsi_lu *lu);

#endif
