/*
 * Memory-backed LUs for the fuzz harnesses (fuzz_lu.h).  The geometry is
 * small (96 KiB of data, below the sanitizer allocator's mmap threshold) so
 * that creating an LU per input and a command that covers the whole medium
 * (FORMAT UNIT, SANITIZE, WRITE SAME, a full READ) stay fast, and every
 * variant is a configuration the daemon accepts (daemon/sbcemud/setup.c builds its
 * LUs the same way from the [lun] keys).  The state directory is on tmpfs
 * when there is one: the zone and PR state files are fsync'ed.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "fuzz_lu.h"
#include "scsi_faults.h"

static char state_dir[64];

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	(void)type;
	if (ftw->level > 0)
		remove(path);
	return 0;
}

static void remove_state_dir(void)
{
	if (!state_dir[0])
		return;
	nftw(state_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	rmdir(state_dir);
}

const char *fuzz_state_dir(void)
{
	if (!state_dir[0]) {
		snprintf(state_dir, sizeof(state_dir), "%s/sbce-fuzz-XXXXXX",
			 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
		if (!mkdtemp(state_dir)) {
			perror("mkdtemp");
			abort();
		}
		atexit(remove_state_dir);
	}
	return state_dir;
}

void fuzz_state_reset(void)
{
	nftw(fuzz_state_dir(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void base_params(struct scsi_lu_params *p, uint32_t block_size, uint64_t num_blocks)
{
	memset(p, 0, sizeof(*p));
	p->kind = SCSI_LU_CONVENTIONAL;
	p->logical_block_size = block_size;
	p->num_blocks = num_blocks;
	snprintf(p->vendor, sizeof(p->vendor), "SBCEMU");
	snprintf(p->product, sizeof(p->product), "FUZZ");
	snprintf(p->revision, sizeof(p->revision), "0001");
	snprintf(p->serial, sizeof(p->serial), "FUZZ0001");
	/* The default configuration's limits (config/default.ini), scaled to the small LU. */
	p->max_transfer_length = 128;
	p->optimal_transfer_length = 16;
	p->max_unmap_lba_count = 128;
	p->max_unmap_descriptors = 64;
	p->max_compare_and_write = 255;
	p->max_write_same_length = 65535;
	p->queue_depth = 128;
}

/* The WRITE ATOMIC and WRITE SCATTERED limits of config/default.ini (blocks). */
static void atomic_params(struct scsi_lu_params *p)
{
	p->max_atomic_transfer_length = 32;
	p->max_atomic_transfer_length_with_boundary = 64;
	p->max_atomic_boundary_size = 32;
	p->write_scattered = true;
	p->max_scattered_lba_range_descriptors = 256;
}

struct scsi_lu *fuzz_lu_create(struct scsi_device *dev, enum fuzz_lu_variant variant, uint32_t lun)
{
	struct scsi_lu_params p;
	bool pi_faults = false;
	struct backend *be;
	struct scsi_lu *lu;
	char err[256];
	bool cached = false;

	switch (variant) {
	case FUZZ_LU_CONVENTIONAL:
		base_params(&p, 512, 192);
		p.thin_provisioning = true;
		atomic_params(&p);
		break;
	case FUZZ_LU_4K_CACHED:
		base_params(&p, 4096, 24);
		p.removable = true;
		atomic_params(&p);
		p.write_scattered_atomic = true;
		p.allow_32_byte_cdbs = true;
		p.cdl_pages = SCSI_CDL_T2; /* DLD fields, the T2A/T2B pages, their policies */
		p.latency = (struct scsi_latency_params){ .model = SCSI_LATENCY_FIXED, .servers = 1, .read_us = 10 };
		cached = true;
		break;
	case FUZZ_LU_ZBC_HM:
		base_params(&p, 512, 192);
		p.kind = SCSI_LU_ZBC_HM;
		p.zone_size = 16;
		p.conventional_zones = 2;
		p.max_open_zones = 4;
		break;
	case FUZZ_LU_ZBC_HA:
		base_params(&p, 512, 192);
		p.kind = SCSI_LU_ZBC_HA;
		p.zone_size = 16;
		p.conventional_zones = 1;
		p.urswrz = true;
		break;
	case FUZZ_LU_PI1:
		base_params(&p, 512, 192);
		p.protection_type = 1;
		p.thin_provisioning = true;
		atomic_params(&p);
		break;
	case FUZZ_LU_PI2:
		base_params(&p, 4096, 24);
		p.protection_type = 2;
		p.p_i_exponent = 1;
		p.cdl_pages = SCSI_CDL_AB; /* READ(32)/WRITE(32) DLD on the A/B pages */
		atomic_params(&p);
		break;
	case FUZZ_LU_PI3_FAULTS:
		base_params(&p, 512, 192);
		p.protection_type = 3;
		pi_faults = true;
		atomic_params(&p);
		break;
	case FUZZ_LU_ZBC_ZD:
		base_params(&p, 512, 192);
		p.kind = SCSI_LU_ZBC_HM;
		p.zone_size = 16;
		p.realm_zones = 2;
		p.active_domain = 1;
		p.conventional_zones = 6; /* daemon/sbcemud/setup.c: half the zones are the conventional domain */
		break;
	case FUZZ_LU_VARIANTS:
	default:
		abort();
	}
	p.lun = lun;
	p.state_dir = fuzz_state_dir();
	be = be_mem_open(scsi_lu_backing_bytes(p.logical_block_size, p.num_blocks, p.protection_type != 0));
	if (be && cached)
		be = be_cache_wrap(be);
	if (!be) {
		fprintf(stderr, "fuzz_lu_create: no backend\n");
		abort();
	}
	lu = scsi_lu_create(dev, &p, be, err, sizeof(err));
	if (!lu) {
		fprintf(stderr, "fuzz_lu_create: variant %d: %s\n", variant, err);
		abort();
	}
	if (pi_faults) {
		/* As sbcemud makes them of pi_faults and atomic_tear_write (daemon/sbcemud/config_faults.c). */
		static const struct scsi_fault_rule_params rules[] = {
			{ .action = SCSI_FAULT_ACTION_CORRUPT_PI, .has_lba = true, .lba_first = 10, .lba_last = 12,
			  .pi_field = SCSI_PI_GUARD, .probability = 1.0 },
			{ .action = SCSI_FAULT_ACTION_CORRUPT_PI, .has_lba = true, .lba_first = 100, .lba_last = 101,
			  .pi_field = SCSI_PI_REF_TAG, .probability = 1.0 },
			{ .action = SCSI_FAULT_ACTION_TEAR_ATOMIC, .every = 2, .count = 1, .blocks = 1, .probability = 1.0 },
		};

		for (unsigned i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
			if (scsi_lu_fault_add(lu, i + 1, &rules[i], err, sizeof(err)) != 0) {
				fprintf(stderr, "fuzz_lu_create: fault rule: %s\n", err);
				abort();
			}
		}
	}
	if (variant == FUZZ_LU_ZBC_HM &&
	    (scsi_lu_set_zone_fault(lu, 5, SCSI_ZONE_FAULT_OFFLINE, err, sizeof(err)) != 0 ||
	     scsi_lu_set_zone_fault(lu, 7, SCSI_ZONE_FAULT_READ_ONLY, err, sizeof(err)) != 0)) {
		fprintf(stderr, "fuzz_lu_create: zone faults: %s\n", err);
		abort();
	}
	return lu;
}
