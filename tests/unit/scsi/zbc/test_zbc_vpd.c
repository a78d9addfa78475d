/* zbc_vpd.c: the Zoned Block Device Characteristics VPD page (B6h), ZBC-2; sg3_utils sg_vpd_common.c, exact bytes. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "zbc_fixture.h"

static struct harness h;

static void teardown(void)
{
	zbc_fixture_fini(&h);
}

/* Host managed, MAX OPEN 8, URSWRZ = 1: PDT 14h, B6h, length 3Ch, URSWRZ, optimal fields not reported. */
START_TEST(host_managed_page)
{
	static const uint8_t want[ZBC_VPD_B6_LEN] = {
		0x14, 0xb6, 0x00, 0x3c, 0x01, 0x00, 0x00, 0x00,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x01,
	};
	uint8_t buf[ZBC_VPD_B6_LEN];

	zbc_fixture_init(&h, SCSI_LU_ZBC_HM, 1024, 64, 1, 8, true, 0);
	ck_assert_uint_eq(zbc_vpd_b6(h.lu, buf), ZBC_VPD_B6_LEN);
	ck_assert_mem_eq(buf, want, ZBC_VPD_B6_LEN);
}
END_TEST

/* No limit on open zones: MAXIMUM NUMBER OF OPEN SWR ZONES FFFFFFFFh; URSWRZ = 0 when asked (Linux refuses it). */
START_TEST(host_managed_no_limit_restricted_reads)
{
	uint8_t buf[ZBC_VPD_B6_LEN];

	zbc_fixture_init(&h, SCSI_LU_ZBC_HM, 1024, 64, 0, 0, false, 0);
	zbc_vpd_b6(h.lu, buf);
	ck_assert_uint_eq(buf[4], 0x00);
	ck_assert_uint_eq(get_be32(buf + 16), 0xffffffffu);
}
END_TEST

/* Host aware: PDT 00h, ZONED BLOCK DEVICE EXTENSION 1h, URSWRZ = 1, no SWR zone limit. */
START_TEST(host_aware_page)
{
	uint8_t buf[ZBC_VPD_B6_LEN];

	zbc_fixture_init(&h, SCSI_LU_ZBC_HA, 1024, 64, 0, 4, false, 0);
	zbc_vpd_b6(h.lu, buf);
	ck_assert_uint_eq(buf[0], 0x00);
	ck_assert_uint_eq(buf[4], 0x11);
	ck_assert_uint_eq(get_be32(buf + 8), 0xffffffffu);
	ck_assert_uint_eq(get_be32(buf + 16), 0xffffffffu);
	ck_assert_uint_eq(buf[23], 0x01);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("zbc_vpd");
	TCase *tc = tcase_create("b6");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, host_managed_page);
	tcase_add_test(tc, host_managed_no_limit_restricted_reads);
	tcase_add_test(tc, host_aware_page);
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
