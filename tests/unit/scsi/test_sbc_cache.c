/* sbc_cache.c: SYNCHRONIZE CACHE(10)/(16) (SBC-4 5.26, 5.27) and PRE-FETCH(10)/(16) (SBC-4 5.11, 5.12). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sbc.h"

#define NUM_BLOCKS 2048
#define BS 512

static struct harness h;

static inline void teardown(void)
{
	harness_fini(&h);
}

static void setup(void)
{
	harness_init(&h, NUM_BLOCKS, BS, NULL);
	harness_clear_ua(&h);
}

static void run10(uint8_t op, uint8_t b1, uint32_t lba, uint16_t n, struct harness_result *r)
{
	uint8_t c[10] = { op, b1 };

	put_be32(c + 2, lba);
	put_be16(c + 7, n);
	harness_run(&h, 0, c, 10, NULL, 0, 0, r);
}

static void run16(uint8_t op, uint8_t b1, uint64_t lba, uint32_t n, struct harness_result *r)
{
	uint8_t c[16] = { op, b1 };

	put_be64(c + 2, lba);
	put_be32(c + 10, n);
	harness_run(&h, 0, c, 16, NULL, 0, 0, r);
}

/* SBC-4 5.26: SYNCHRONIZE CACHE flushes and returns GOOD, with IMMED 0 or 1, with 0 = to the end. */
START_TEST(sync_cache_good)
{
	struct harness_result r;

	run10(SCSI_OP_SYNCHRONIZE_CACHE_10, 0x00, 0, 0, &r);
	harness_expect_good(&r);
	run10(SCSI_OP_SYNCHRONIZE_CACHE_10, 0x02, 100, 10, &r);
	harness_expect_good(&r);
	run16(SCSI_OP_SYNCHRONIZE_CACHE_16, 0x02, NUM_BLOCKS - 1, 1, &r);
	harness_expect_good(&r);
}
END_TEST

/* SBC-4 5.26: LBA + NUMBER OF LOGICAL BLOCKS past the capacity -> 05/21/00. */
START_TEST(sync_cache_out_of_range)
{
	struct harness_result r;

	run10(SCSI_OP_SYNCHRONIZE_CACHE_10, 0, NUM_BLOCKS - 1, 2, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
	run16(SCSI_OP_SYNCHRONIZE_CACHE_16, 0, UINT64_MAX, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
}
END_TEST

/* SBC-4 5.11: PRE-FETCH with no room in the cache -> GOOD (IMMED 0 and 1, GROUP NUMBER accepted). */
START_TEST(pre_fetch_good)
{
	struct harness_result r;
	uint8_t c[10] = { SCSI_OP_PRE_FETCH_10, 0x02, 0, 0, 0, 0, 3, 0, 1 };

	run10(SCSI_OP_PRE_FETCH_10, 0, 0, 256, &r);
	harness_expect_good(&r);
	run10(SCSI_OP_PRE_FETCH_10, 0, 0, 0, &r);
	harness_expect_good(&r);
	harness_run(&h, 0, c, 10, NULL, 0, 0, &r);
	harness_expect_good(&r);
	run16(SCSI_OP_PRE_FETCH_16, 0x02, NUM_BLOCKS - 256, 256, &r);
	harness_expect_good(&r);
}
END_TEST

/* SBC-4 5.11: range past the capacity (also with PREFETCH LENGTH 0) -> 05/21/00. */
START_TEST(pre_fetch_out_of_range)
{
	struct harness_result r;

	run10(SCSI_OP_PRE_FETCH_10, 0, NUM_BLOCKS + 1, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
	run10(SCSI_OP_PRE_FETCH_10, 0, NUM_BLOCKS - 1, 2, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
	run16(SCSI_OP_PRE_FETCH_16, 0, 0x8000000000000000ull, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
	run16(SCSI_OP_PRE_FETCH_16, 0, UINT64_MAX, 1, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sbc_cache");
	TCase *tc = tcase_create("cache");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, sync_cache_good);
	tcase_add_test(tc, sync_cache_out_of_range);
	tcase_add_test(tc, pre_fetch_good);
	tcase_add_test(tc, pre_fetch_out_of_range);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
