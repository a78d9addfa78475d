/*
 * Helpers for the zoned-LU tests (test_zbc_*.c): a harness whose LU is
 * zoned, and commands driven straight into the zone engine (the SBC
 * handlers call zbc_write_begin / zbc_check_read themselves once wired).
 */
#ifndef SBCEMU_TEST_ZBC_FIXTURE_H
#define SBCEMU_TEST_ZBC_FIXTURE_H

#include "harness.h"
#include "zbc/zbc.h"

/*
 * A harness with a zoned LU: kind, num_blocks, zone_size, conventional
 * zones, max open zones, URSWRZ, LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT.
 * Calls zbc_init itself (lu.c will) and aborts on failure.
 */
void zbc_fixture_init(struct harness *h, enum scsi_lu_kind kind, uint64_t num_blocks, uint64_t zone_size,
		      uint32_t conventional_zones, uint32_t max_open_zones, bool urswrz, uint8_t lbppbe);
void zbc_fixture_fini(struct harness *h);

/* A command for the engine alone: a fake opcode row whose exec calls zbc_write_begin. */
struct zbc_test_cmd {
	struct scsi_cmd cmd;
	struct scsi_op op;
	int exec_calls;          /* how often the engine ran exec */
	bool completed;          /* scsi_cmd_complete reached the fake transport */
	enum scsi_result begin;  /* the last zbc_write_begin result */
};

/* Prepares tc for [lba, lba + nblocks) on h's LU. */
void zbc_test_cmd_init(struct zbc_test_cmd *tc, struct harness *h, uint64_t lba, uint32_t nblocks);
/* zbc_write_begin through the fake exec; the ticket stays open (end it with zbc_write_end). */
enum scsi_result zbc_test_write_begin(struct zbc_test_cmd *tc);
/* A whole write: begin, then end with ok = true.  Returns the begin result; key and asc get the sense. */
enum scsi_result zbc_test_write(struct harness *h, uint64_t lba, uint32_t nblocks, uint8_t *key, uint16_t *asc);
/* zbc_check_read on [lba, lba + nblocks). */
enum scsi_result zbc_test_read(struct harness *h, uint64_t lba, uint32_t nblocks, uint8_t *key, uint16_t *asc);

/* ZBC OUT through the harness: service action, zone id, ALL. */
void zbc_test_out(struct harness *h, uint8_t sa, uint64_t zone_id, bool all, struct harness_result *r);
/* The zone that holds lba. */
struct zbc_zone *zbc_test_zone(struct harness *h, uint64_t lba);

#endif
