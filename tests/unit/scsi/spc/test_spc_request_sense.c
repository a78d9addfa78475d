/* spc_request_sense.c: REQUEST SENSE (SPC-4 6.39). */
#include <check.h>
#include <string.h>

#include "harness.h"
#include "lun_runner.h"
#include "core/scsi_internal.h"

static struct harness h;
static struct harness_result r;

static void setup(void)
{
	harness_init(&h, 2048, 512, NULL);
	harness_clear_ua(&h);
}

static void teardown(void)
{
	harness_fini(&h);
}

static void request_sense(int nexus, bool desc, uint8_t allocation_length)
{
	uint8_t cdb[6] = { 0x03, desc ? 0x01 : 0x00, 0, 0, allocation_length, 0 };
	harness_run(&h, nexus, cdb, 6, NULL, 0, 0, &r);
}

/* No pending condition: GOOD with NO SENSE data, 18 bytes fixed (70h). */
START_TEST(no_sense_fixed)
{
	request_sense(0, false, 252);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 18);
	ck_assert_uint_eq(r.data_in[0], 0x70);
	ck_assert_uint_eq(r.data_in[2], 0x00);
	ck_assert_uint_eq(r.data_in[7], 10);
	ck_assert_uint_eq(r.data_in[12], 0);
	ck_assert_uint_eq(r.data_in[13], 0);
}
END_TEST

/* DESC = 1: descriptor format (72h), 8 bytes. */
START_TEST(no_sense_descriptor)
{
	request_sense(0, true, 252);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 8);
	ck_assert_uint_eq(r.data_in[0], 0x72);
	ck_assert_uint_eq(r.data_in[1], 0x00);
}
END_TEST

/* SAM-5 5.14: a pending unit attention is reported as data with GOOD status, and cleared. */
START_TEST(unit_attention_reported_and_cleared)
{
	uint8_t tur[6] = { 0 };

	scsi_ua_establish(h.nexus[1], 0, SCSI_UA_MODE_PARAMETERS_CHANGED);
	request_sense(1, false, 252);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in[2], 0x06);
	ck_assert_uint_eq(r.data_in[12], 0x2a);
	ck_assert_uint_eq(r.data_in[13], 0x01);
	harness_run(&h, 1, tur, 6, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	/* The other nexus never had it. */
	request_sense(0, false, 252);
	ck_assert_uint_eq(r.data_in[2], 0x00);
}
END_TEST

/* A sanitize in progress: NOT READY 04/1B with the PROGRESS INDICATION (SKSV, bytes 16-17). */
START_TEST(progress_indication)
{
	h.lu->progress.active = true;
	h.lu->progress.asc_ascq = 0x041b;
	h.lu->progress.fraction = 0x4000;
	request_sense(0, false, 252);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in[2], 0x02);
	ck_assert_uint_eq(r.data_in[12], 0x04);
	ck_assert_uint_eq(r.data_in[13], 0x1b);
	ck_assert_uint_eq(r.data_in[15], 0x80);
	ck_assert_uint_eq(get_be16(r.data_in + 16), 0x4000);
	h.lu->progress.active = false;
}
END_TEST

/* A stopped LU: NOT READY, INITIALIZING COMMAND REQUIRED (02/04/02) as data. */
START_TEST(stopped_lu)
{
	h.lu->stopped = true;
	request_sense(0, false, 252);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in[2], 0x02);
	ck_assert_uint_eq(r.data_in[12], 0x04);
	ck_assert_uint_eq(r.data_in[13], 0x02);
}
END_TEST

/* SPC-4 6.39.1: a LUN without an LU -> 05/25/00 LOGICAL UNIT NOT SUPPORTED, as data. */
START_TEST(no_lu)
{
	uint8_t cdb[6] = { 0x03, 0, 0, 0, 252, 0 };

	lun_runner_run(&h, 0, 4, cdb, 6, 252, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in[2], 0x05);
	ck_assert_uint_eq(r.data_in[12], 0x25);
}
END_TEST

/* The ALLOCATION LENGTH truncates the sense data (and 0 transfers none). */
START_TEST(truncated)
{
	request_sense(0, false, 8);
	ck_assert_uint_eq(r.data_in_len, 8);
	request_sense(0, false, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spc_request_sense");
	TCase *tc = tcase_create("request_sense");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, no_sense_fixed);
	tcase_add_test(tc, no_sense_descriptor);
	tcase_add_test(tc, unit_attention_reported_and_cleared);
	tcase_add_test(tc, progress_indication);
	tcase_add_test(tc, stopped_lu);
	tcase_add_test(tc, no_lu);
	tcase_add_test(tc, truncated);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
