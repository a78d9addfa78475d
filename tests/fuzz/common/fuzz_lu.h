/*
 * Logical units for the fuzz harnesses: small memory-backed LUs of every
 * kind the core serves, and a scratch state directory that is emptied
 * between inputs, so that no persistent reservation, saved mode page, zone
 * state or protection format outlives the input that made it (a finding
 * must replay from its input alone).
 */
#ifndef SBCEMU_FUZZ_LU_H
#define SBCEMU_FUZZ_LU_H

#include <stdbool.h>
#include <stdint.h>

#include "scsi.h"

/* The LU variants; a harness picks one with fuzz_lu_variant(byte). */
enum fuzz_lu_variant {
	FUZZ_LU_CONVENTIONAL,     /* 512n (192 blocks), thin, WRITE ATOMIC and WRITE SCATTERED */
	FUZZ_LU_4K_CACHED,        /* 4096n (24 blocks), removable, behind the volatile write cache (be_cache) */
	FUZZ_LU_ZBC_HM,           /* host-managed: 12 zones of 16 blocks, 2 conventional, max 4 open, zone 5 offline, 7 read-only */
	FUZZ_LU_ZBC_HA,           /* host-aware: 12 zones of 16 blocks, 1 conventional */
	FUZZ_LU_PI1,              /* PI type 1, 512 bytes, one interval per block */
	FUZZ_LU_PI2,              /* PI type 2, 4096 bytes, two intervals per block (32-byte CDBs) */
	FUZZ_LU_PI3_FAULTS,       /* PI type 3, 512 bytes, with injected guard and reference tag faults */
	FUZZ_LU_ZBC_ZD,           /* ZBC-2 zone domains: 6 + 6 zones, realms of 2 zones */
	FUZZ_LU_VARIANTS
};

static inline enum fuzz_lu_variant fuzz_lu_variant(uint8_t byte)
{
	return (enum fuzz_lu_variant)(byte % FUZZ_LU_VARIANTS);
}

/* The scratch state directory (created on first use, removed at exit). */
const char *fuzz_state_dir(void);
/* Removes everything under the state directory. */
void fuzz_state_reset(void);

/*
 * Adds LU `lun` of the variant to dev, its state in fuzz_state_dir().
 * Aborts on failure: every variant is a valid configuration.
 */
struct scsi_lu *fuzz_lu_create(struct scsi_device *dev, enum fuzz_lu_variant variant, uint32_t lun);

#endif
