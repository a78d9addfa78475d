/* sbc_cache.c: SYNCHRONIZE CACHE(10)/(16) (SBC-4 5.26, 5.27) and PRE-FETCH(10)/(16) (SBC-4 5.11, 5.12). */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sbc/sbc.h"
#include "spy_backend.h"

#define NUM_BLOCKS 2048
#define BS 512

static struct harness h;
static struct spy_backend *spy;

static inline void teardown(void)
{
	harness_fini(&h);
}

static void setup(void)
{
	harness_init(&h, NUM_BLOCKS, BS, NULL);
	harness_clear_ua(&h);
	spy = spy_backend_install(h.lu);
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

/*
 * SBC-4 5.26 / 5.27: SYNCHRONIZE CACHE makes the cached blocks durable, i.e.
 * the backend's flush runs (once per command: a backend flushes the whole
 * medium, so every range, NUMBER OF LOGICAL BLOCKS 0 = to the last LBA
 * included, is one flush), then GOOD.  IMMED = 1 may return GOOD before the
 * flush (5.26); sbc_cache.c answers after it for both values, so the flush
 * has run by the time the status arrives either way.  Nothing is written.
 */
START_TEST(sync_cache_flushes_backend)
{
	struct harness_result r;

	run10(SCSI_OP_SYNCHRONIZE_CACHE_10, 0x00, 0, 0, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.sense_len, 0);
	ck_assert_uint_eq(spy->flushes, 1);
	run10(SCSI_OP_SYNCHRONIZE_CACHE_10, 0x02, 100, 10, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(spy->flushes, 2);
	run16(SCSI_OP_SYNCHRONIZE_CACHE_16, 0x00, 0, 0, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(spy->flushes, 3);
	run16(SCSI_OP_SYNCHRONIZE_CACHE_16, 0x02, NUM_BLOCKS - 1, 1, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(spy->flushes, 4);
	ck_assert_uint_eq(spy->writes + spy->discards + spy->zeroes, 0);
}
END_TEST

/*
 * SBC-4 5.26: LBA + NUMBER OF LOGICAL BLOCKS past the capacity -> 05/21/00,
 * and the command is terminated before it does anything: no flush.
 */
START_TEST(sync_cache_out_of_range)
{
	struct harness_result r;

	run10(SCSI_OP_SYNCHRONIZE_CACHE_10, 0, NUM_BLOCKS - 1, 2, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
	run16(SCSI_OP_SYNCHRONIZE_CACHE_16, 0, UINT64_MAX, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
	ck_assert_uint_eq(spy->flushes, 0);
}
END_TEST

/*
 * SBC-4 5.26 (SAM-5 5.3: a command that cannot do its work ends in CHECK
 * CONDITION): a flush the backend fails terminates SYNCHRONIZE CACHE with
 * the sense scsi_sense_from_errno (cmd.c) gives a write path: EIO -> 03/0C/00
 * MEDIUM ERROR, WRITE ERROR; ENOSPC -> 07/27/07 SPACE ALLOCATION FAILED
 * WRITE PROTECT; ESHUTDOWN (a fenced backend) -> 02/04/03 LOGICAL UNIT NOT
 * READY, MANUAL INTERVENTION REQUIRED; ETIMEDOUT (a medium that did not
 * answer) -> 0B/08/01 ABORTED COMMAND, LOGICAL UNIT COMMUNICATION TIME-OUT
 * (SPC-4 4.5.6 sense keys, Annex D additional sense codes).  With IMMED = 1
 * too (status after the flush, sbc_cache.c), and the failure leaves nothing
 * behind: the next flush that works is GOOD.
 */
START_TEST(sync_cache_flush_error)
{
	struct harness_result r;

	spy->flush_fail_errno = EIO;
	run10(SCSI_OP_SYNCHRONIZE_CACHE_10, 0x00, 0, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_MEDIUM_ERROR, ASC_WRITE_ERROR);
	ck_assert_uint_eq(spy->flushes, 1);
	run10(SCSI_OP_SYNCHRONIZE_CACHE_10, 0x02, 100, 10, &r);
	harness_expect_sense(&r, SENSE_KEY_MEDIUM_ERROR, ASC_WRITE_ERROR);
	run16(SCSI_OP_SYNCHRONIZE_CACHE_16, 0x02, 0, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_MEDIUM_ERROR, ASC_WRITE_ERROR);
	ck_assert_uint_eq(spy->flushes, 3);
	spy->flush_fail_errno = ENOSPC;
	run16(SCSI_OP_SYNCHRONIZE_CACHE_16, 0x00, 0, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_DATA_PROTECT, ASC_SPACE_ALLOCATION_FAILED_WRITE_PROTECT);
	ck_assert_uint_eq(spy->flushes, 4);
	spy->flush_fail_errno = ESHUTDOWN;
	run10(SCSI_OP_SYNCHRONIZE_CACHE_10, 0x00, 0, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_NOT_READY, ASC_LOGICAL_UNIT_NOT_READY_MANUAL_INTERVENTION_REQUIRED);
	spy->flush_fail_errno = ETIMEDOUT;
	run10(SCSI_OP_SYNCHRONIZE_CACHE_10, 0x00, 0, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ABORTED_COMMAND, ASC_LOGICAL_UNIT_COMMUNICATION_TIME_OUT);
	ck_assert_uint_eq(spy->flushes, 6);
	spy->flush_fail_errno = 0;
	run10(SCSI_OP_SYNCHRONIZE_CACHE_10, 0x00, 0, 0, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(spy->flushes, 7);
}
END_TEST

/*
 * SBC-4 5.11 / 5.12: CONDITION MET only when the cache holds the whole range;
 * this LU has no cache of its own to fill (sbc_cache.c), so PRE-FETCH is
 * GOOD exactly (never CONDITION MET), with IMMED 0 or 1, PREFETCH LENGTH 0 and
 * a GROUP NUMBER, carries no sense and no data, and touches nothing: no
 * flush, no write.
 */
START_TEST(pre_fetch_good)
{
	struct harness_result r;
	uint8_t c[10] = { SCSI_OP_PRE_FETCH_10, 0x02, 0, 0, 0, 0, 3, 0, 1 };

	run10(SCSI_OP_PRE_FETCH_10, 0, 0, 256, &r);
	harness_expect_good(&r);
	ck_assert_uint_ne(r.status, SCSI_STATUS_CONDITION_MET);
	ck_assert_uint_eq(r.sense_len, 0);
	ck_assert_uint_eq(r.data_in_len, 0);
	run10(SCSI_OP_PRE_FETCH_10, 0, 0, 0, &r);
	harness_expect_good(&r);
	harness_run(&h, 0, c, 10, NULL, 0, 0, &r);
	harness_expect_good(&r);
	run16(SCSI_OP_PRE_FETCH_16, 0x02, NUM_BLOCKS - 256, 256, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.sense_len, 0);
	run16(SCSI_OP_PRE_FETCH_16, 0x00, 0, NUM_BLOCKS, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(spy->flushes + spy->writes + spy->discards + spy->zeroes, 0);
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
	tcase_add_test(tc, sync_cache_flushes_backend);
	tcase_add_test(tc, sync_cache_out_of_range);
	tcase_add_test(tc, sync_cache_flush_error);
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
