/*
 * pi.c: the T10 protection information guard and tuple (SBC-4 4.22; spec
 * digest 3.1, 3.3).  The guard (ISA-L crc16_t10dif) against the published
 * CRC-16/T10-DIF check value, fixed blocks, and a bitwise reference
 * implementation of the polynomial on random data of every length up to
 * 4 KiB; the copying variant; the big-endian tuple; the escape rule per type.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "sbc/pi.h"

/* Bit by bit: polynomial 8BB7h, initial value 0, no reflection, no final XOR. */
static uint16_t reference_crc16_t10dif(const uint8_t *p, size_t len)
{
	uint16_t crc = 0;

	for (size_t i = 0; i < len; i++) {
		crc ^= (uint16_t)(p[i] << 8);
		for (int b = 0; b < 8; b++)
			crc = (uint16_t)((crc & 0x8000) ? (crc << 1) ^ 0x8bb7 : crc << 1);
	}
	return crc;
}

START_TEST(guard_check_value)
{
	/* The CRC catalogue's check value of CRC-16/T10-DIF over "123456789". */
	ck_assert_uint_eq(pi_guard("123456789", 9), 0xd0db);
	ck_assert_uint_eq(reference_crc16_t10dif((const uint8_t *)"123456789", 9), 0xd0db);
}
END_TEST

START_TEST(guard_fixed_blocks)
{
	uint8_t block[4096];

	/* All zeros: the CRC of zeros with initial value 0 is 0, at every length. */
	memset(block, 0, sizeof(block));
	ck_assert_uint_eq(pi_guard(block, 512), 0x0000);
	ck_assert_uint_eq(pi_guard(block, 4096), 0x0000);
	/* All FFh: whatever the polynomial gives, bit by bit. */
	memset(block, 0xff, sizeof(block));
	ck_assert_uint_eq(pi_guard(block, 512), reference_crc16_t10dif(block, 512));
	ck_assert_uint_eq(pi_guard(block, 4096), reference_crc16_t10dif(block, 4096));
	ck_assert_uint_ne(pi_guard(block, 512), 0x0000);
}
END_TEST

START_TEST(guard_random_against_reference)
{
	uint8_t *buf = malloc(4096), *copy = malloc(4096);

	srand(12345);
	for (size_t len = 1; len <= 4096; len += (len < 64 ? 1 : 61)) {
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)rand();
		ck_assert_uint_eq(pi_guard(buf, len), reference_crc16_t10dif(buf, len));
		memset(copy, 0, 4096);
		ck_assert_uint_eq(pi_guard_copy(copy, buf, len), reference_crc16_t10dif(buf, len));
		ck_assert_mem_eq(copy, buf, len);
	}
	free(buf);
	free(copy);
}
END_TEST

START_TEST(tuple_is_big_endian)
{
	uint8_t b[PI_TUPLE_LEN];
	struct pi_tuple t = { .guard = 0x1234, .app_tag = 0x5678, .ref_tag = 0x9abcdef0 };
	const uint8_t want[PI_TUPLE_LEN] = { 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0 };
	struct pi_tuple back;

	pi_tuple_encode(b, t);
	ck_assert_mem_eq(b, want, PI_TUPLE_LEN);
	back = pi_tuple_decode(b);
	ck_assert_uint_eq(back.guard, 0x1234);
	ck_assert_uint_eq(back.app_tag, 0x5678);
	ck_assert_uint_eq(back.ref_tag, 0x9abcdef0);
}
END_TEST

START_TEST(escape_per_type)
{
	struct pi_tuple app_only = { .guard = 1, .app_tag = 0xffff, .ref_tag = 7 };
	struct pi_tuple both = { .guard = 1, .app_tag = 0xffff, .ref_tag = 0xffffffff };
	struct pi_tuple none = { .guard = 1, .app_tag = 0xfffe, .ref_tag = 0xffffffff };

	/* Types 1 and 2: application tag FFFFh alone; type 3: with reference tag FFFFFFFFh too. */
	ck_assert(pi_tuple_is_escape(1, app_only));
	ck_assert(pi_tuple_is_escape(2, app_only));
	ck_assert(!pi_tuple_is_escape(3, app_only));
	ck_assert(pi_tuple_is_escape(3, both));
	ck_assert(!pi_tuple_is_escape(1, none));
	ck_assert(!pi_tuple_is_escape(3, none));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pi");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, guard_check_value);
	tcase_add_test(tc, guard_fixed_blocks);
	tcase_add_test(tc, guard_random_against_reference);
	tcase_add_test(tc, tuple_is_big_endian);
	tcase_add_test(tc, escape_per_type);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
