/* sbc_verify.c: VERIFY(10)/(12)/(16) (SBC-4 5.36-5.38). */
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

static uint8_t buf[16 * BS];

static void setup(void)
{
	harness_init(&h, NUM_BLOCKS, BS, NULL);
	harness_clear_ua(&h);
	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	harness_write16(&h, BS, 40, 8, buf);
}

static void verify10(uint8_t b1, uint32_t lba, uint16_t n, const uint8_t *data, uint32_t len,
		     struct harness_result *r)
{
	uint8_t c[10] = { SCSI_OP_VERIFY_10, b1 };

	put_be32(c + 2, lba);
	put_be16(c + 7, n);
	harness_run(&h, 0, c, 10, data, len, 0, r);
}

/* SBC-4 5.36 BYTCHK 00b: medium verification, no Data-Out, GOOD. */
START_TEST(verify_bytchk_0_good)
{
	struct harness_result r;

	verify10(0x00, 40, 8, NULL, 0, &r);
	harness_expect_good(&r);
	verify10(0x10, 0, NUM_BLOCKS, NULL, 0, &r); /* DPO, whole medium (several chunks) */
	harness_expect_good(&r);
}
END_TEST

/* SBC-4 5.36 BYTCHK 01b: equal Data-Out -> GOOD. */
START_TEST(verify_bytchk_1_equal)
{
	struct harness_result r;
	uint8_t c[16] = { SCSI_OP_VERIFY_16, 0x02 };

	verify10(0x02, 40, 8, buf, 8 * BS, &r);
	harness_expect_good(&r);
	put_be64(c + 2, 41);
	put_be32(c + 10, 2);
	harness_run(&h, 0, c, 16, buf + BS, 2 * BS, 0, &r);
	harness_expect_good(&r);
}
END_TEST

/* SBC-4 5.36 BYTCHK 01b: a differing byte -> 0E/1D/00, INFORMATION = its offset in the Data-Out. */
START_TEST(verify_bytchk_1_miscompare)
{
	struct harness_result r;
	uint8_t c[12] = { SCSI_OP_VERIFY_12, 0x02 };
	uint8_t copy[8 * BS];

	memcpy(copy, buf, sizeof(copy));
	copy[3 * BS + 27] ^= 'X';
	put_be32(c + 2, 40);
	put_be32(c + 6, 8);
	harness_run(&h, 0, c, 12, copy, sizeof(copy), 0, &r);
	harness_expect_sense(&r, SENSE_KEY_MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY_OPERATION);
	harness_expect_information(&r, 3 * BS + 27);
}
END_TEST

/* SBC-4 5.36 BYTCHK 11b: one block of Data-Out compared with every block of the range. */
START_TEST(verify_bytchk_3_one_block)
{
	struct harness_result r;
	uint8_t block[BS];
	uint8_t same[4 * BS];

	memset(block, 0x3c, BS);
	for (int i = 0; i < 4; i++)
		memcpy(same + i * BS, block, BS);
	harness_write16(&h, BS, 100, 4, same);
	verify10(0x06, 100, 4, block, BS, &r);
	harness_expect_good(&r);
	/* the third block differs at byte 9: offset 2 * BS + 9 of the duplicated Data-Out */
	same[2 * BS + 9] = 0;
	harness_write16(&h, BS, 100, 4, same);
	verify10(0x06, 100, 4, block, BS, &r);
	harness_expect_sense(&r, SENSE_KEY_MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY_OPERATION);
	harness_expect_information(&r, 2 * BS + 9);
}
END_TEST

/* SBC-4 5.36: BYTCHK 10b is reserved -> 05/24/00, field pointer byte 1 bit 2. */
START_TEST(verify_bytchk_2_reserved)
{
	struct harness_result r;

	verify10(0x04, 40, 1, buf, BS, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 1, 2);
}
END_TEST

/* SBC-4 5.36: VERIFICATION LENGTH 0 is GOOD; past the end (even with 0 blocks) -> 05/21/00. */
START_TEST(verify_ranges)
{
	struct harness_result r;

	verify10(0x02, 0, 0, NULL, 0, &r);
	harness_expect_good(&r);
	verify10(0x02, NUM_BLOCKS + 1, 0, NULL, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
	verify10(0x00, NUM_BLOCKS - 1, 2, NULL, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
	verify10(0x00, 0xffffffff, 1, NULL, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
}
END_TEST

/* SBC-4 5.36: VRPROTECT != 0 on an LU without PI -> 05/24/00 on byte 1. */
START_TEST(verify_vrprotect)
{
	struct harness_result r;

	verify10(0x80, 40, 1, NULL, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 1, 7);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sbc_verify");
	TCase *tc = tcase_create("verify");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, verify_bytchk_0_good);
	tcase_add_test(tc, verify_bytchk_1_equal);
	tcase_add_test(tc, verify_bytchk_1_miscompare);
	tcase_add_test(tc, verify_bytchk_3_one_block);
	tcase_add_test(tc, verify_bytchk_2_reserved);
	tcase_add_test(tc, verify_ranges);
	tcase_add_test(tc, verify_vrprotect);
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
