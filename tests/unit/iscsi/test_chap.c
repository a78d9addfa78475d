/* Unit tests for chap.c: the CHAP response (RFC 1994 MD5) and binary value decoding (RFC 7143 5.1). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "iscsi_internal.h"

/*
 * RFC 1994 4.1: Response = MD5(Identifier || secret || Challenge).
 * Hand-computed: MD5(0x01 "secretsecret" 0x00 0x01 0x02 0x03) and the
 * classic MD5("") / MD5("a") vectors fed through the same function
 * (RFC 1321 A.5).
 */
START_TEST(chap_md5_response)
{
	uint8_t out[ISCSI_MD5_LEN];
	static const uint8_t md5_a[16] = { 0x0c, 0xc1, 0x75, 0xb9, 0xc0, 0xf1, 0xb6, 0xa8,
					   0x31, 0xc3, 0x99, 0xe2, 0x69, 0x77, 0x26, 0x61 };
	static const uint8_t md5_abc[16] = { 0x90, 0x01, 0x50, 0x98, 0x3c, 0xd2, 0x4f, 0xb0,
					     0xd6, 0x96, 0x3f, 0x7d, 0x28, 0xe1, 0x7f, 0x72 };

	/* Identifier 'a' (0x61), empty secret and challenge: MD5("a"). */
	ck_assert_int_eq(iscsi_chap_md5(0x61, (const uint8_t *)"", 0, (const uint8_t *)"", 0, out), 0);
	ck_assert_mem_eq(out, md5_a, 16);
	/* Identifier 'a', secret "b", challenge "c": MD5("abc"). */
	ck_assert_int_eq(iscsi_chap_md5(0x61, (const uint8_t *)"b", 1, (const uint8_t *)"c", 1, out), 0);
	ck_assert_mem_eq(out, md5_abc, 16);
}
END_TEST

/* A login-sized example: CHAP_I=7, secret "alicesecret1", CHAP_C=0x000102...0f. */
START_TEST(chap_md5_login_example)
{
	uint8_t challenge[16], out[ISCSI_MD5_LEN];
	static const uint8_t expected[16] = { 0x1c, 0x60, 0xce, 0x90, 0xaa, 0xcd, 0x3a, 0x9d,
					      0x16, 0xa0, 0xc5, 0x1b, 0x37, 0x4a, 0x87, 0x4c };
	for (int i = 0; i < 16; i++)
		challenge[i] = (uint8_t)i;
	ck_assert_int_eq(iscsi_chap_md5(7, (const uint8_t *)"alicesecret1", 12, challenge, 16, out), 0);
	ck_assert_mem_eq(out, expected, 16);
}
END_TEST

START_TEST(decode_hex_and_base64)
{
	uint8_t out[16];

	ck_assert_int_eq(iscsi_chap_decode_binary("0x0102ff", out, sizeof(out)), 3);
	ck_assert_uint_eq(out[0], 0x01);
	ck_assert_uint_eq(out[1], 0x02);
	ck_assert_uint_eq(out[2], 0xff);
	ck_assert_int_eq(iscsi_chap_decode_binary("0XABcd", out, sizeof(out)), 2);
	ck_assert_uint_eq(out[0], 0xab);
	ck_assert_uint_eq(out[1], 0xcd);
	/* "0b" base64: "AQL/" = 01 02 ff; "YWI=" = "ab" */
	ck_assert_int_eq(iscsi_chap_decode_binary("0bAQL/", out, sizeof(out)), 3);
	ck_assert_uint_eq(out[2], 0xff);
	ck_assert_int_eq(iscsi_chap_decode_binary("0bYWI=", out, sizeof(out)), 2);
	ck_assert_mem_eq(out, "ab", 2);
	/* malformed */
	ck_assert_int_eq(iscsi_chap_decode_binary("1234", out, sizeof(out)), -1);
	ck_assert_int_eq(iscsi_chap_decode_binary("0x", out, sizeof(out)), -1);
	ck_assert_int_eq(iscsi_chap_decode_binary("0xzz", out, sizeof(out)), -1);
	ck_assert_int_eq(iscsi_chap_decode_binary("0bYWI", out, sizeof(out)), -1);
	/* too long for the buffer */
	ck_assert_int_eq(iscsi_chap_decode_binary("0x0102", out, 1), -1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iscsi_chap");
	TCase *tc = tcase_create("chap");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, chap_md5_response);
	tcase_add_test(tc, chap_md5_login_example);
	tcase_add_test(tc, decode_hex_and_base64);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
