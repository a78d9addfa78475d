/*
 * sbc_lba_status.c: GET LBA STATUS(16) (SBC-4).  The memory backend has
 * no holes, so the spy backend reports the hole ranges each test sets.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "core/scsi_internal.h"
#include "spy_backend.h"

#define NUM_BLOCKS 2048
#define BS 512

static struct harness h;
static struct spy_backend *spy;

static void setup(void)
{
	harness_init(&h, NUM_BLOCKS, BS, NULL); /* thin provisioned */
	harness_clear_ua(&h);
	spy = spy_backend_install(h.lu);
}

static void teardown(void)
{
	harness_fini(&h);
}

static void add_hole(uint64_t offset, uint64_t len)
{
	spy->holes[spy->nholes].offset = offset;
	spy->holes[spy->nholes].len = len;
	spy->nholes++;
}

static void get_lba_status(uint64_t lba, uint32_t allocation_length, struct harness_result *r)
{
	uint8_t cdb[16] = { 0x9e, 0x12 };

	put_be64(cdb + 2, lba);
	put_be32(cdb + 10, allocation_length);
	harness_run(&h, 0, cdb, 16, NULL, 0, 0, r);
}

/* Checks LBA status descriptor i: LBA, NUMBER OF LOGICAL BLOCKS, PROVISIONING STATUS. */
static void assert_descriptor(const struct harness_result *r, unsigned i, uint64_t lba, uint32_t n, uint8_t status)
{
	const uint8_t *d = r->data_in + 8 + 16 * i;

	ck_assert_uint_ge(r->data_in_len, 8 + 16 * (i + 1));
	ck_assert_uint_eq(get_be64(d), lba);
	ck_assert_uint_eq(get_be32(d + 8), n);
	ck_assert_uint_eq(d[12], status);
	ck_assert_uint_eq(d[13], 0);
	ck_assert_uint_eq(d[14], 0);
	ck_assert_uint_eq(d[15], 0);
}

static void assert_check_condition(const struct harness_result *r, uint8_t key, uint16_t asc_ascq)
{
	ck_assert(r->completed);
	ck_assert_uint_eq(r->status, SCSI_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(harness_sense_key(r), key);
	ck_assert_uint_eq(harness_asc_ascq(r), asc_ascq);
}

/*
 * An all-allocated medium is one mapped descriptor from the starting LBA to
 * the end: PARAMETER DATA LENGTH 20, byte 7 = COMPLETION CONDITION 3 (end of
 * capacity) << 1 | RTP.
 */
START_TEST(all_mapped_one_descriptor)
{
	struct harness_result r;

	get_lba_status(0, 24, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 24);
	ck_assert_uint_eq(get_be32(r.data_in), 20);
	ck_assert_uint_eq(r.data_in[7], 0x07);
	assert_descriptor(&r, 0, 0, NUM_BLOCKS, 0x0);
	get_lba_status(NUM_BLOCKS - 1, 24, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	assert_descriptor(&r, 0, NUM_BLOCKS - 1, 1, 0x0);
}
END_TEST

/* A hole of whole blocks is DEALLOCATED (1h) between MAPPED runs; descriptors are contiguous. */
START_TEST(hole_is_deallocated)
{
	struct harness_result r;

	add_hole(8 * BS, 8 * BS);
	get_lba_status(0, 1024, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 8 + 3 * 16);
	ck_assert_uint_eq(get_be32(r.data_in), 4 + 3 * 16);
	assert_descriptor(&r, 0, 0, 8, 0x0);
	assert_descriptor(&r, 1, 8, 8, 0x1);
	assert_descriptor(&r, 2, 16, NUM_BLOCKS - 16, 0x0);
}
END_TEST

/* The first descriptor starts at the requested LBA, even inside a hole. */
START_TEST(starts_at_requested_lba)
{
	struct harness_result r;

	add_hole(8 * BS, 8 * BS);
	get_lba_status(10, 1024, &r);
	assert_descriptor(&r, 0, 10, 6, 0x1);
	assert_descriptor(&r, 1, 16, NUM_BLOCKS - 16, 0x0);
}
END_TEST

/* A block only partly in a hole still reads data: it is MAPPED. */
START_TEST(partial_block_hole_is_mapped)
{
	struct harness_result r;

	add_hole(100, 300);             /* inside block 0 */
	add_hole(2 * BS + 256, 2 * BS); /* second half of block 2, block 3, first half of block 4 */
	get_lba_status(0, 1024, &r);
	ck_assert_uint_eq(r.data_in_len, 8 + 3 * 16);
	assert_descriptor(&r, 0, 0, 3, 0x0);
	assert_descriptor(&r, 1, 3, 1, 0x1);
	assert_descriptor(&r, 2, 4, NUM_BLOCKS - 4, 0x0);
}
END_TEST

/* Extents the backend reports piecewise are merged into one descriptor per run. */
START_TEST(adjacent_extents_merged)
{
	struct harness_result r;

	spy->extent_max = 3 * BS + 100;
	add_hole(0, 64 * BS);
	get_lba_status(0, 1024, &r);
	ck_assert_uint_eq(r.data_in_len, 8 + 2 * 16);
	assert_descriptor(&r, 0, 0, 64, 0x1);
	assert_descriptor(&r, 1, 64, NUM_BLOCKS - 64, 0x0);
}
END_TEST

/*
 * ALLOCATION LENGTH 24 holds one descriptor: COMPLETION CONDITION 1
 * (allocation length) and PARAMETER DATA LENGTH for that one descriptor.
 */
START_TEST(allocation_length_limits_descriptors)
{
	struct harness_result r;

	add_hole(8 * BS, 8 * BS);
	get_lba_status(0, 24, &r);
	ck_assert_uint_eq(r.data_in_len, 24);
	ck_assert_uint_eq(get_be32(r.data_in), 20);
	ck_assert_uint_eq(r.data_in[7], 0x03);
	assert_descriptor(&r, 0, 0, 8, 0x0);
}
END_TEST

/* SPC-4 4.2.5.6: a shorter ALLOCATION LENGTH truncates the data; 0 transfers nothing. */
START_TEST(short_allocation_length_truncates)
{
	struct harness_result r;

	get_lba_status(0, 16, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 16);
	ck_assert_uint_eq(get_be32(r.data_in), 20);
	ck_assert_uint_eq(get_be64(r.data_in + 8), 0);
	get_lba_status(0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 0);
}
END_TEST

/* SBC-4 GET LBA STATUS: STARTING LOGICAL BLOCK ADDRESS past the last LBA -> 05/21/00 (libiscsi BeyondEol). */
START_TEST(starting_lba_out_of_range)
{
	struct harness_result r;

	get_lba_status(NUM_BLOCKS, 24, &r);
	assert_check_condition(&r, 0x5, 0x2100);
	get_lba_status(NUM_BLOCKS + 1, 24, &r);
	assert_check_condition(&r, 0x5, 0x2100);
	get_lba_status(0x8000000000000000ull, 24, &r);
	assert_check_condition(&r, 0x5, 0x2100);
	get_lba_status(UINT64_MAX, 24, &r);
	assert_check_condition(&r, 0x5, 0x2100);
}
END_TEST

/* A backend that cannot tell (a block device) reports everything mapped ("mapped or unknown"). */
START_TEST(extent_unsupported_all_mapped)
{
	struct harness_result r;

	spy->extent_unsupported = true;
	get_lba_status(5, 24, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	assert_descriptor(&r, 0, 5, NUM_BLOCKS - 5, 0x0);
}
END_TEST

/* REPORT TYPE other than 00h is refused by the CDB usage data: 05/24/00, byte 14. */
START_TEST(report_type_refused)
{
	uint8_t cdb[16] = { 0x9e, 0x12 };
	struct harness_result r;

	put_be32(cdb + 10, 24);
	cdb[14] = 0x02;
	harness_run(&h, 0, cdb, 16, NULL, 0, 0, &r);
	assert_check_condition(&r, 0x5, 0x2400);
	ck_assert_uint_eq(r.sense[15], 0xc8 | 1);
	ck_assert_uint_eq(get_be16(r.sense + 16), 14);
}
END_TEST

/* Without thin provisioning the service action does not exist: 05/24/00 on SERVICE ACTION. */
START_TEST(fully_provisioned_lu_has_no_get_lba_status)
{
	struct scsi_lu_params p;
	struct harness_result r;

	teardown();
	memset(&p, 0, sizeof(p));
	p.kind = SCSI_LU_CONVENTIONAL;
	harness_init(&h, NUM_BLOCKS, BS, &p);
	harness_clear_ua(&h);
	get_lba_status(0, 24, &r);
	assert_check_condition(&r, 0x5, 0x2400);
	ck_assert_uint_eq(get_be16(r.sense + 16), 1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sbc_lba_status");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, all_mapped_one_descriptor);
	tcase_add_test(tc, hole_is_deallocated);
	tcase_add_test(tc, starts_at_requested_lba);
	tcase_add_test(tc, partial_block_hole_is_mapped);
	tcase_add_test(tc, adjacent_extents_merged);
	tcase_add_test(tc, allocation_length_limits_descriptors);
	tcase_add_test(tc, short_allocation_length_truncates);
	tcase_add_test(tc, starting_lba_out_of_range);
	tcase_add_test(tc, extent_unsupported_all_mapped);
	tcase_add_test(tc, report_type_refused);
	tcase_add_test(tc, fully_provisioned_lu_has_no_get_lba_status);
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
