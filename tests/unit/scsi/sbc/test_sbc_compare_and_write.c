/* sbc_compare_and_write.c: COMPARE AND WRITE (SBC-4 5.3). */
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

static uint8_t buf[2 * 8 * BS];

static void setup(void)
{
	harness_init(&h, NUM_BLOCKS, BS, NULL); /* MAXIMUM COMPARE AND WRITE LENGTH 255 */
	harness_clear_ua(&h);
}

static void setup_disabled(void)
{
	struct scsi_lu_params p;

	memset(&p, 0, sizeof(p));
	p.kind = SCSI_LU_CONVENTIONAL;
	p.max_compare_and_write = 0;
	harness_init(&h, NUM_BLOCKS, BS, &p);
	harness_clear_ua(&h);
}

static void caw(uint8_t b1, uint64_t lba, uint8_t n, const uint8_t *data, uint32_t len, uint32_t edtl,
		struct harness_result *r)
{
	uint8_t c[16] = { SCSI_OP_COMPARE_AND_WRITE, b1 };

	put_be64(c + 2, lba);
	c[13] = n;
	harness_run(&h, 0, c, 16, data, len, edtl, r);
}

/* SBC-4 5.3: equal verify instance -> the write instance is written, GOOD. */
START_TEST(caw_match_writes)
{
	struct harness_result r;

	memset(buf, 'A', 4 * BS);
	harness_write16(&h, BS, 10, 4, buf);
	memset(buf + 4 * BS, 'B', 4 * BS);
	caw(0x00, 10, 4, buf, 8 * BS, 0, &r);
	harness_expect_good(&r);
	harness_read16(&h, BS, 10, 4, &r);
	for (unsigned i = 0; i < 4 * BS; i++)
		ck_assert_uint_eq(r.data_in[i], 'B');
}
END_TEST

/*
 * SBC-4 5.3: a miscompare -> 0E/1D/00 with INFORMATION = offset of the first
 * differing byte in the Data-Out Buffer; the medium is unchanged.
 */
START_TEST(caw_miscompare)
{
	struct harness_result r;

	memset(buf, 'A', 4 * BS);
	harness_write16(&h, BS, 10, 4, buf);
	buf[4 * BS - 27] = 'C';
	memset(buf + 4 * BS, 'B', 4 * BS);
	caw(0x00, 10, 4, buf, 8 * BS, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY_OPERATION);
	harness_expect_information(&r, 4 * BS - 27);
	harness_read16(&h, BS, 10, 4, &r);
	for (unsigned i = 0; i < 4 * BS; i++)
		ck_assert_uint_eq(r.data_in[i], 'A');
}
END_TEST

/* SBC-4 5.3: NUMBER OF LOGICAL BLOCKS 0 -> GOOD, nothing transferred. */
START_TEST(caw_zero_blocks)
{
	struct harness_result r;

	caw(0x00, 0, 0, buf, 0, 0, &r); /* Data-Out direction, expected length 0 */
	harness_expect_good(&r);
}
END_TEST

/* SBC-4 5.3: NUMBER OF LOGICAL BLOCKS over MAXIMUM COMPARE AND WRITE LENGTH -> 05/24/00 byte 13. */
START_TEST(caw_over_maximum)
{
	struct harness_result r;
	struct scsi_lu_params *p = &h.lu->params;

	p->max_compare_and_write = 2;
	caw(0x00, 0, 3, buf, 6 * BS, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 13, -1);
}
END_TEST

/* SBC-4 4.5: LBA + NUMBER OF LOGICAL BLOCKS past the capacity -> 05/21/00. */
START_TEST(caw_beyond_eol)
{
	struct harness_result r;

	caw(0x00, NUM_BLOCKS - 1, 2, buf, 4 * BS, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
}
END_TEST

/* An expected transfer length other than 2 * NUMBER OF LOGICAL BLOCKS blocks -> 05/24/00 byte 13, nothing written. */
START_TEST(caw_invalid_data_out_size)
{
	struct harness_result r;

	memset(buf, 0xa6, 4 * BS);
	harness_write16(&h, BS, 0, 1, buf);
	caw(0x00, 0, 1, buf, 4 * BS, 4 * BS, &r); /* too much */
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 13, -1);
	caw(0x00, 0, 3, buf, 4 * BS, 4 * BS, &r); /* too little */
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	caw(0x00, 0, 0, buf, 4 * BS, 4 * BS, &r); /* NUMBER OF LOGICAL BLOCKS 0 with Data-Out */
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 13, -1);
	harness_read16(&h, BS, 0, 1, &r);
	ck_assert_uint_eq(r.data_in[0], 0xa6);
}
END_TEST

/* SBC-4 5.3: DPO and FUA accepted; WRPROTECT != 0 without PI -> 05/24/00. */
START_TEST(caw_flags)
{
	struct harness_result r;

	memset(buf, 0, 2 * BS);
	harness_write16(&h, BS, 0, 1, buf);
	caw(0x18, 0, 1, buf, 2 * BS, 0, &r);
	harness_expect_good(&r);
	caw(0x40, 0, 1, buf, 2 * BS, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
}
END_TEST

/* MAXIMUM COMPARE AND WRITE LENGTH 0: the command is not supported -> 05/20/00. */
START_TEST(caw_disabled)
{
	struct harness_result r;

	ck_assert(!sbc_compare_and_write_enabled(h.lu));
	caw(0x00, 0, 1, buf, 2 * BS, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_COMMAND_OPERATION_CODE);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sbc_compare_and_write");
	TCase *tc = tcase_create("caw");
	TCase *off = tcase_create("disabled");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, caw_match_writes);
	tcase_add_test(tc, caw_miscompare);
	tcase_add_test(tc, caw_zero_blocks);
	tcase_add_test(tc, caw_over_maximum);
	tcase_add_test(tc, caw_beyond_eol);
	tcase_add_test(tc, caw_invalid_data_out_size);
	tcase_add_test(tc, caw_flags);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(off, setup_disabled, teardown);
	tcase_add_test(off, caw_disabled);
	suite_add_tcase(s, off);
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
