/* sbc_defect.c: READ DEFECT DATA(10)/(12) (SBC-4 5.19, 5.20). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sbc/sbc.h"

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

static void rdd10(uint8_t flags, uint16_t allocation_length, struct harness_result *r)
{
	uint8_t c[10] = { SCSI_OP_READ_DEFECT_DATA_10, 0, flags };

	put_be16(c + 7, allocation_length);
	harness_run(&h, 0, c, 10, NULL, 0, allocation_length, r);
}

static void rdd12(uint8_t flags, uint32_t allocation_length, struct harness_result *r)
{
	uint8_t c[12] = { SCSI_OP_READ_DEFECT_DATA_12, flags };

	put_be32(c + 6, allocation_length);
	harness_run(&h, 0, c, 12, NULL, 0, allocation_length, r);
}

/* SBC-4 5.19: empty lists; header echoes REQ_PLIST/REQ_GLIST as PLISTV/GLISTV and the format; length 0. */
START_TEST(rdd10_empty_list)
{
	struct harness_result r;

	rdd10(0x00, 32, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in_len, 4);
	ck_assert_uint_eq(r.data_in[0], 0);
	ck_assert_uint_eq(r.data_in[1], 0x00);
	ck_assert_uint_eq(get_be16(r.data_in + 2), 0);
	rdd10(0x18 | 0x05, 32, &r); /* PLIST + GLIST, physical sector format */
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in[1], 0x1d);
	ck_assert_uint_eq(get_be16(r.data_in + 2), 0);
}
END_TEST

/* SBC-4 5.20: 8-byte header (GENERATION CODE 0, DEFECT LIST LENGTH 0). */
START_TEST(rdd12_empty_list)
{
	struct harness_result r;
	static const uint8_t expect[8] = { 0, 0x13, 0, 0, 0, 0, 0, 0 };

	rdd12(0x10 | 0x03, 32, &r); /* PLIST, long block format */
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in_len, 8);
	ck_assert_mem_eq(r.data_in, expect, 8);
}
END_TEST

/* SPC-4 4.2.5.6: ALLOCATION LENGTH truncates (0 transfers nothing, not an error). */
START_TEST(rdd_allocation_length)
{
	struct harness_result r;

	rdd10(0x08, 0, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in_len, 0);
	rdd12(0x08, 2, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in_len, 2);
}
END_TEST

/* Vendor-specific (110b) and reserved (111b) DEFECT LIST FORMAT -> 05/24/00 on the format field. */
START_TEST(rdd_unsupported_format)
{
	struct harness_result r;

	rdd10(0x06, 32, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 2, 2);
	rdd12(0x07, 32, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 1, 2);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sbc_defect");
	TCase *tc = tcase_create("defect");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, rdd10_empty_list);
	tcase_add_test(tc, rdd12_empty_list);
	tcase_add_test(tc, rdd_allocation_length);
	tcase_add_test(tc, rdd_unsupported_format);
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
