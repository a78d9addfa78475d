/* spc_report_luns.c: REPORT LUNS (SPC-4 6.33). */
#include <check.h>
#include <string.h>

#include "harness.h"
#include "lun_runner.h"
#include "core/scsi_internal.h"

static struct harness h;
static struct harness_result r;

static void setup(void)
{
	struct scsi_lu_params p;
	char err[128];

	harness_init(&h, 2048, 512, NULL);
	/* A second LU at LUN 200. */
	p = h.lu->params;
	p.lun = 200;
	ck_assert_ptr_nonnull(scsi_lu_create(h.dev, &p, be_mem_open(2048 * 512), err, sizeof(err)));
	harness_clear_ua(&h);
}

static void teardown(void)
{
	harness_fini(&h);
}

static void report_luns(uint8_t select_report, uint32_t allocation_length)
{
	uint8_t cdb[12] = { 0xa0, 0, select_report };
	put_be32(cdb + 6, allocation_length);
	harness_run(&h, 0, cdb, 12, NULL, 0, 0, &r);
}

/* SELECT REPORT 00h: every LU but well-known ones, 8-byte SAM LUNs, LUN LIST LENGTH = 8 x count. */
START_TEST(all_lus)
{
	report_luns(0, 4096);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(get_be32(r.data_in), 16);
	ck_assert_uint_eq(r.data_in_len, 24);
	ck_assert_uint_eq(get_be64(r.data_in + 8), 0);
	ck_assert_uint_eq(get_be64(r.data_in + 16), 0x00c8000000000000ull); /* LUN 200, peripheral */
}
END_TEST

/* SELECT REPORT 01h: well-known LUs only, the REPORT LUNS W-LUN (SAM-5 4.7.4); 02h: 00h and 01h. */
START_TEST(well_known_lus)
{
	report_luns(1, 4096);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 16);
	ck_assert_uint_eq(get_be32(r.data_in), 8);
	ck_assert_uint_eq(get_be64(r.data_in + 8), 0xc101000000000000ull);
	report_luns(2, 4096);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(get_be32(r.data_in), 24);
	ck_assert_uint_eq(get_be64(r.data_in + 16), 0x00c8000000000000ull);
	ck_assert_uint_eq(get_be64(r.data_in + 24), 0xc101000000000000ull);
}
END_TEST

/* Reserved SELECT REPORT values -> 05/24/00 on byte 2; 12h to an LU that is not administrative -> 05/20/0D. */
START_TEST(select_report_invalid)
{
	report_luns(0x03, 4096);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[17], 2);
	report_luns(0x13, 4096);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	report_luns(0x12, 4096);
	ck_assert_uint_eq(harness_sense_key(&r), 0x5);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x200d);
	/* 10h at LUN 0: the administrative LUs, none here. */
	report_luns(0x10, 4096);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(get_be32(r.data_in), 0);
}
END_TEST

/* SPC-4 6.33: ALLOCATION LENGTH < 16 -> 05/24/00 on byte 6. */
START_TEST(allocation_length_too_small)
{
	report_luns(0, 15);
	ck_assert_uint_eq(harness_sense_key(&r), 0x5);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[17], 6);
	report_luns(0, 16);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 16);
	ck_assert_uint_eq(get_be32(r.data_in), 16); /* the full list length, not the truncated one */
}
END_TEST

/* REPORT LUNS to a LUN that has no LU works (SAM-5: hosts send it to LUN 0 regardless). */
START_TEST(no_lu_at_lun)
{
	uint8_t cdb[12] = { 0xa0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0 };

	lun_runner_run(&h, 0, 5, cdb, 12, 4096, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(get_be32(r.data_in), 16);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spc_report_luns");
	TCase *tc = tcase_create("report_luns");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, all_lus);
	tcase_add_test(tc, well_known_lus);
	tcase_add_test(tc, select_report_invalid);
	tcase_add_test(tc, allocation_length_too_small);
	tcase_add_test(tc, no_lu_at_lun);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
