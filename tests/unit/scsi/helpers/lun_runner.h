/*
 * harness_run() for any LUN: the SPC tests address LUNs that have no
 * logical unit (INQUIRY peripheral qualifier 011b, REPORT LUNS, REQUEST
 * SENSE 05/25/00) and second LUs.  Data-In commands only.
 */
#ifndef SBCEMU_TEST_LUN_RUNNER_H
#define SBCEMU_TEST_LUN_RUNNER_H

#include "harness.h"

void lun_runner_run(struct harness *h, int nexus, uint32_t lun, const uint8_t *cdb, unsigned cdb_len,
		    uint32_t expected_length, struct harness_result *r);
/* The same for a LUN as the wire carries it (SAM-5 4.7: a well-known LUN, a malformed one). */
void lun_runner_run_sam(struct harness *h, int nexus, uint64_t sam_lun, const uint8_t *cdb, unsigned cdb_len,
			uint32_t expected_length, struct harness_result *r);

#endif
