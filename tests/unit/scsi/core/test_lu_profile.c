/*
 * lu_profile.c: what the device profiles take away from the opcode table,
 * seen through dispatch and REPORT SUPPORTED OPERATION CODES (docs/profiles.md).
 * Each test names the rule it checks.
 */
#include <check.h>
#include <string.h>

#include "harness.h"
#include "core/scsi_internal.h"

static struct harness h;
static struct harness_result r;

/* The four commands a USB-SATA bridge without SAT translation lacks (docs/profiles.md, usb-bridge). */
static const uint8_t log_diag[][10] = {
	{ 0x4d, 0, 0x40, 0, 0, 0, 0, 0, 255, 0 }, /* LOG SENSE 00h */
	{ 0x4c, 0x02, 0, 0, 0, 0, 0, 0, 0, 0 },   /* LOG SELECT PCR = 1 */
	{ 0x1d, 0x04, 0, 0, 0, 0 },               /* SEND DIAGNOSTIC SELFTEST = 1 */
	{ 0x1c, 0, 0, 0, 255, 0 },                /* RECEIVE DIAGNOSTIC RESULTS */
};
static const unsigned log_diag_len[] = { 10, 10, 6, 6 };

static void setup_with(uint32_t quirks, bool minimal)
{
	struct scsi_lu_params p = { .kind = SCSI_LU_CONVENTIONAL, .quirks = quirks, .minimal_command_set = minimal };

	harness_init(&h, 2048, 512, &p);
	harness_clear_ua(&h);
}

static void teardown(void)
{
	harness_fini(&h);
}

static void run(int i)
{
	harness_run(&h, 0, log_diag[i], log_diag_len[i], NULL, 0, 0, &r);
}

/* RSOC REPORTING OPTIONS 001b for opcode: the SUPPORT field (byte 1 bits 2:0). */
static uint8_t rsoc_support(uint8_t opcode)
{
	uint8_t cdb[12] = { 0xa3, 0x0c, 0x01, opcode, 0, 0, 0, 0, 0, 64, 0, 0 };

	harness_run(&h, 0, cdb, 12, NULL, 0, 0, &r);
	harness_expect_good(&r);
	return r.data_in[1] & 0x07;
}

/* usb-bridge with every quirk (quirks = all): LOG SENSE/SELECT, SEND/RECEIVE DIAGNOSTIC -> 05/20/00. */
START_TEST(bridge_lacks_log_and_diagnostics)
{
	setup_with(SCSI_QUIRK_ALL, false);
	for (int i = 0; i < 4; i++) {
		run(i);
		harness_expect_sense(&r, 0x5, 0x2000);
	}
}
END_TEST

/* A bridge given only some quirks translates them (SAT): served, and RSOC lists them as supported (011b). */
START_TEST(bridge_with_some_quirks_keeps_them)
{
	setup_with(SCSI_QUIRK_VPD_TRUNCATED, false);
	run(0);
	harness_expect_good(&r);
	ck_assert_uint_eq(rsoc_support(0x4d), 0x3);
	ck_assert_uint_eq(rsoc_support(0x1c), 0x3);
}
END_TEST

/* sbc4-minimal keeps its short list: none of the four, and RSOC says "not supported" (001b) for each. */
START_TEST(minimal_lacks_log_and_diagnostics)
{
	static const uint8_t ops[] = { 0x4d, 0x4c, 0x1d, 0x1c };

	setup_with(0, true);
	for (int i = 0; i < 4; i++) {
		run(i);
		harness_expect_sense(&r, 0x5, 0x2000);
		ck_assert_uint_eq(rsoc_support(ops[i]), 0x1);
	}
}
END_TEST

/* No profile: all four are served. */
START_TEST(plain_lu_has_them)
{
	setup_with(0, false);
	run(0);
	harness_expect_good(&r);
	run(3);
	harness_expect_good(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lu_profile");
	TCase *tc = tcase_create("profiles");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, bridge_lacks_log_and_diagnostics);
	tcase_add_test(tc, bridge_with_some_quirks_keeps_them);
	tcase_add_test(tc, minimal_lacks_log_and_diagnostics);
	tcase_add_test(tc, plain_lu_has_them);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
