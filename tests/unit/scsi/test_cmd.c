/* cmd.c: the table-driven prologue (gates before any handler runs). */
#include <check.h>
#include <stdlib.h>

#include "harness.h"

static struct harness h;

static void setup(void)
{
	harness_init(&h, 2048, 512, NULL);
}

static void teardown(void)
{
	harness_fini(&h);
}

/* SAM-5 5.14: the first command after the nexus appears gets UNIT ATTENTION 06/29/00. */
START_TEST(power_on_unit_attention_first)
{
	uint8_t cdb[6] = { 0x00 };
	struct harness_result r;

	harness_run(&h, 0, cdb, 6, NULL, 0, 0, &r);
	ck_assert(r.completed);
	ck_assert_uint_eq(r.status, SCSI_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(harness_sense_key(&r), 0x6);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2900);
}
END_TEST

/* SPC-4: an operation code the LU does not support -> 05/20/00. */
START_TEST(unknown_opcode_invalid_command_operation_code)
{
	uint8_t cdb[16] = { 0xc0 };
	struct harness_result r;

	harness_clear_ua(&h);
	harness_run(&h, 0, cdb, 16, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(harness_sense_key(&r), 0x5);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2000);
}
END_TEST

/* SPC-4 4.2.5: a reserved CDB bit set -> 05/24/00 with the field pointer on that byte and bit. */
START_TEST(reserved_bit_field_pointer)
{
	uint8_t cdb[6] = { 0x00, 0x00, 0x00, 0x20, 0x00, 0x00 }; /* TEST UNIT READY byte 3 bit 5 */
	struct harness_result r;

	harness_clear_ua(&h);
	harness_run(&h, 0, cdb, 6, NULL, 0, 0, &r);
	ck_assert_uint_eq(harness_sense_key(&r), 0x5);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[15], 0x80 | 0x40 | 0x08 | 5);
	ck_assert_uint_eq(r.sense[17], 3);
}
END_TEST

/* SAM-5: a service action the opcode does not have -> 05/24/00 pointing at the SERVICE ACTION field. */
START_TEST(unknown_service_action)
{
	uint8_t cdb[16] = { 0x9e, 0x1f };
	struct harness_result r;

	harness_clear_ua(&h);
	harness_run(&h, 0, cdb, 16, NULL, 0, 0, &r);
	ck_assert_uint_eq(harness_sense_key(&r), 0x5);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[17], 1);
}
END_TEST

/* SPC-4 4.6.5? NACA = 1 in CONTROL with ACA unsupported -> 05/24/00. */
START_TEST(naca_rejected)
{
	uint8_t cdb[6] = { 0x00, 0, 0, 0, 0, 0x04 };
	struct harness_result r;

	harness_clear_ua(&h);
	harness_run(&h, 0, cdb, 6, NULL, 0, 0, &r);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[17], 5);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cmd");
	TCase *tc = tcase_create("prologue");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, power_on_unit_attention_first);
	tcase_add_test(tc, unknown_opcode_invalid_command_operation_code);
	tcase_add_test(tc, reserved_bit_field_pointer);
	tcase_add_test(tc, unknown_service_action);
	tcase_add_test(tc, naca_rejected);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
