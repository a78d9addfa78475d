/*
 * Fault injection into logical units: the configuration's fault keys
 * (pi_faults, atomic_tear_write / atomic_tear_block, offline_zones /
 * read_only_zones; docs/config.md).  Kept apart from scsi.h, the core's API,
 * because these knobs are to become the runtime control interface's fault
 * rules (one mechanism for every fault); until then the daemon sets them
 * here, at start-up, once per LU.
 */
#ifndef SBCEMU_SCSI_FAULTS_H
#define SBCEMU_SCSI_FAULTS_H

#ifdef SBCE_BUILDING_BACKENDS
#error "backends/ may not include the SCSI core"
#endif

#include <stddef.h>
#include <stdint.h>

struct scsi_lu;

/* Protection information (sbc_pi.c): a PI field the medium returns corrupted (bit 0 flipped). */
enum scsi_pi_field {
	SCSI_PI_GUARD,
	SCSI_PI_APP_TAG,
	SCSI_PI_REF_TAG,
};

struct scsi_pi_fault {
	enum scsi_pi_field field;
	uint64_t first_lba, last_lba;
};

#define SCSI_PI_FAULTS_MAX 16

struct scsi_lu_faults {
	struct scsi_pi_fault pi_faults[SCSI_PI_FAULTS_MAX];
	unsigned pi_fault_count;
	/*
	 * Broken promise (docs/atomic.md): the atomic_tear_write-th WRITE
	 * ATOMIC after start (1 = the first; 0 = never) is torn on purpose:
	 * only its first atomic_tear_block blocks are written, and it still
	 * returns GOOD.
	 */
	uint32_t atomic_tear_write;
	uint32_t atomic_tear_block;
};

/* Sets the LU's faults (before any command reaches it). */
void scsi_lu_set_faults(struct scsi_lu *lu, const struct scsi_lu_faults *faults);

/*
 * Zone faults (zbc_zones.c), set-up time only (blocking I/O): puts zone
 * zone_index (0 = the zone at LBA 0) OFFLINE or READ ONLY and records it in
 * the persistent zone state; SCSI_ZONE_FAULT_NONE repairs a zone that is
 * OFFLINE or READ ONLY (back to EMPTY, or NOT WRITE POINTER for a
 * conventional zone) and leaves any other zone alone.  0 or -1 with err.
 */
enum scsi_zone_fault {
	SCSI_ZONE_FAULT_NONE,
	SCSI_ZONE_FAULT_OFFLINE,
	SCSI_ZONE_FAULT_READ_ONLY,
};
int scsi_lu_set_zone_fault(struct scsi_lu *lu, uint32_t zone_index, enum scsi_zone_fault fault, char *err,
			   size_t errlen);

#endif
