/*
 * Checks for an LU in the middle of a format or sanitize operation (SBC-4
 * 5.4, 4.11): commands that touch the medium get NOT READY with the
 * operation's ASC/ASCQ and the PROGRESS INDICATION, the informational ones
 * still work, REQUEST SENSE reports the progress.  Shared by test_sbc_format.c
 * and test_sbc_sanitize.c; asc_ascq is ASC_LOGICAL_UNIT_NOT_READY_FORMAT_IN_PROGRESS
 * or ASC_SANITIZE_IN_PROGRESS_NR.
 */
#ifndef SBCEMU_TEST_IN_PROGRESS_H
#define SBCEMU_TEST_IN_PROGRESS_H

#include <stdint.h>

#include "harness.h"
#include "spy_backend.h"

/* CHECK CONDITION, NOT READY, asc_ascq (fixed format) with SKSV = 1 and PROGRESS INDICATION in bytes 16-17. */
void in_progress_expect_sense(const struct harness_result *r, uint16_t asc_ascq, uint16_t progress);
/* TEST UNIT READY on nexus gets that sense. */
void in_progress_expect_tur(struct harness *h, int nexus, uint16_t asc_ascq, uint16_t progress);
/*
 * REQUEST SENSE (SPC-4 6.39, 4.5.2.4.4): GOOD, and the sense it returns is
 * NOT READY, asc_ascq with SKSV = 1 and the PROGRESS INDICATION, in fixed and
 * in descriptor format (sense key specific descriptor 02h).  Returns the progress.
 */
uint16_t in_progress_request_sense(struct harness *h, int nexus, uint16_t asc_ascq);
/*
 * Every command but INQUIRY, REPORT LUNS and REQUEST SENSE is terminated
 * with that sense (here TEST UNIT READY, READ(10), WRITE(10), SYNCHRONIZE
 * CACHE(10), which then leave the backend alone: no write, flush or
 * discard); INQUIRY and REPORT LUNS work; REQUEST SENSE reports progress.
 */
void in_progress_only_informational(struct harness *h, struct spy_backend *spy, int nexus, uint16_t asc_ascq,
				    uint16_t progress);

#endif
