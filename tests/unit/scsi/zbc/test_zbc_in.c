/*
 * zbc_in.c: ZBC IN (95h) / REPORT ZONES: header (ZONE LIST LENGTH, SAME,
 * MAXIMUM LBA), descriptors, every ZBC-1 REPORTING OPTIONS value, PARTIAL,
 * ALLOCATION LENGTH, and the two errors libzbc checks (01/010, 01/011).
 *
 * Layout (host managed): 10 zones of 64 blocks, zones 0-1 conventional.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "zbc_fixture.h"

#define ZS 64
#define Z(n) ((uint64_t)(n) * ZS)

static struct harness h;
static struct harness_result r;

static void setup(void)
{
	zbc_fixture_init(&h, SCSI_LU_ZBC_HM, 10 * ZS, ZS, 2, 2, true, 0);
}

static void teardown(void)
{
	zbc_fixture_fini(&h);
}

static void report(uint64_t lba, uint32_t allocation_length, uint8_t b14)
{
	uint8_t cdb[16] = { SCSI_OP_ZBC_IN, ZBC_SA_REPORT_ZONES };

	put_be64(cdb + 2, lba);
	put_be32(cdb + 10, allocation_length);
	cdb[14] = b14;
	harness_run(&h, 0, cdb, 16, NULL, 0, 0, &r);
}

static const uint8_t *desc(unsigned i)
{
	return r.data_in + 64 + 64 * i;
}

static void out(uint8_t sa, uint64_t zone)
{
	zbc_test_out(&h, sa, zone, false, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
}

static void write_ok(uint64_t lba, uint32_t n)
{
	ck_assert_int_eq(zbc_test_write(&h, lba, n, NULL, NULL), SCSI_OK);
}

/* Zones 2..7 in conditions IMPLICITLY OPENED, EXPLICITLY OPENED, CLOSED, FULL, READ ONLY, OFFLINE; 8, 9 EMPTY. */
static void make_every_condition(void)
{
	char err[128];

	write_ok(Z(4), 8);
	out(ZBC_SA_CLOSE_ZONE, Z(4));
	write_ok(Z(2), 8);
	out(ZBC_SA_OPEN_ZONE, Z(3));
	out(ZBC_SA_FINISH_ZONE, Z(5));
	ck_assert_int_eq(zbc_set_condition(h.lu, Z(6), ZBC_ZC_READ_ONLY, err, sizeof(err)), 0);
	ck_assert_int_eq(zbc_set_condition(h.lu, Z(7), ZBC_ZC_OFFLINE, err, sizeof(err)), 0);
}

/* REPORT ZONES header and descriptor layout (ZBC-2 REPORT ZONES; sg3_utils sg_rep_zones.c), all zones. */
START_TEST(report_all_layout)
{
	static const uint8_t conventional[32] = {
		0x01, 0x00, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0x40,
		0, 0, 0, 0, 0, 0, 0, 0,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};

	make_every_condition();
	report(0, 64 + 10 * 64, 0x00);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 64 + 10 * 64);
	ck_assert_uint_eq(get_be32(r.data_in), 10 * 64);      /* ZONE LIST LENGTH */
	ck_assert_uint_eq(r.data_in[4] & 0x0f, 3);            /* SAME: one length, types vary */
	ck_assert_uint_eq(get_be64(r.data_in + 8), 10 * ZS - 1); /* MAXIMUM LBA */
	ck_assert_uint_eq(get_be64(r.data_in + 16), 0);
	ck_assert_mem_eq(desc(0), conventional, 32);
	/* IMPLICITLY OPENED SWR zone: type 2, condition 2h, WP = start + 8. */
	ck_assert_uint_eq(desc(2)[0], 0x02);
	ck_assert_uint_eq(desc(2)[1], 0x20);
	ck_assert_uint_eq(get_be64(desc(2) + 8), ZS);
	ck_assert_uint_eq(get_be64(desc(2) + 16), Z(2));
	ck_assert_uint_eq(get_be64(desc(2) + 24), Z(2) + 8);
	ck_assert_uint_eq(desc(3)[1], 0x30);
	ck_assert_uint_eq(get_be64(desc(3) + 24), Z(3));
	ck_assert_uint_eq(desc(4)[1], 0x40);
	ck_assert_uint_eq(get_be64(desc(4) + 24), Z(4) + 8);
	/* FULL: WP at the zone end; READ ONLY and OFFLINE: WP invalid (all FFh). */
	ck_assert_uint_eq(desc(5)[1], 0xe0);
	ck_assert_uint_eq(get_be64(desc(5) + 24), Z(6));
	ck_assert_uint_eq(desc(6)[1], 0xd0);
	ck_assert_uint_eq(get_be64(desc(6) + 24), UINT64_MAX);
	ck_assert_uint_eq(desc(7)[1], 0xf0);
	ck_assert_uint_eq(get_be64(desc(7) + 24), UINT64_MAX);
	ck_assert_uint_eq(desc(8)[1], 0x10);
	ck_assert_uint_eq(get_be64(desc(9) + 16), Z(9));
}
END_TEST

/* Every ZBC-1 REPORTING OPTIONS value selects the zones it names (00h-07h, 10h, 11h, 3Fh). */
START_TEST(reporting_options_select_zones)
{
	static const struct {
		uint8_t ro;
		unsigned n;
		unsigned zones[10];
	} cases[] = {
		{ 0x00, 10, { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 } },
		{ 0x01, 2, { 8, 9 } },   /* EMPTY */
		{ 0x02, 1, { 2 } },      /* IMPLICITLY OPENED */
		{ 0x03, 1, { 3 } },      /* EXPLICITLY OPENED */
		{ 0x04, 1, { 4 } },      /* CLOSED */
		{ 0x05, 1, { 5 } },      /* FULL */
		{ 0x06, 1, { 6 } },      /* READ ONLY */
		{ 0x07, 1, { 7 } },      /* OFFLINE */
		{ 0x10, 0, { 0 } },      /* RWP RECOMMENDED: never set */
		{ 0x11, 0, { 0 } },      /* NON_SEQ: SWP zones only */
		{ 0x3f, 2, { 0, 1 } },   /* NOT WRITE POINTER */
	};

	make_every_condition();
	for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		report(0, 4096, cases[c].ro);
		ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
		ck_assert_msg(get_be32(r.data_in) == cases[c].n * 64, "ro %02x", cases[c].ro);
		ck_assert_uint_eq(r.data_in_len, 64 + cases[c].n * 64);
		for (unsigned i = 0; i < cases[c].n; i++)
			ck_assert_uint_eq(get_be64(desc(i) + 16), Z(cases[c].zones[i]));
	}
}
END_TEST

/* libzbc 01/011: a reserved REPORTING OPTIONS value (incl. ZBC-2 08h, 3Eh): 05/24/00, pointer byte 14 bit 5. */
START_TEST(reserved_reporting_options_are_invalid_field)
{
	static const uint8_t reserved[] = { 0x08, 0x09, 0x0f, 0x12, 0x20, 0x3e };

	for (unsigned i = 0; i < sizeof(reserved); i++) {
		report(0, 4096, reserved[i]);
		ck_assert_uint_eq(r.status, SCSI_STATUS_CHECK_CONDITION);
		ck_assert_uint_eq(harness_sense_key(&r), SENSE_KEY_ILLEGAL_REQUEST);
		ck_assert_uint_eq(harness_asc_ascq(&r), ASC_INVALID_FIELD_IN_CDB);
		ck_assert_uint_eq(r.sense[15], 0xcd);
		ck_assert_uint_eq(get_be16(r.sense + 16), 14);
	}
}
END_TEST

/* libzbc 01/010: ZONE START LBA past MAXIMUM LBA: 05/21/00; the last LBA reports the last zone. */
START_TEST(start_lba_past_maximum_is_lba_out_of_range)
{
	report(10 * ZS, 4096, 0);
	ck_assert_uint_eq(harness_sense_key(&r), SENSE_KEY_ILLEGAL_REQUEST);
	ck_assert_uint_eq(harness_asc_ascq(&r), ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
	report(10 * ZS - 1, 4096, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(get_be32(r.data_in), 64);
	ck_assert_uint_eq(get_be64(desc(0) + 16), Z(9));
}
END_TEST

/* The report starts with the zone that holds ZONE START LBA; SAME over those zones: 1 (all SWR, one length). */
START_TEST(start_lba_inside_a_zone)
{
	report(Z(2) + 5, 4096, 0);
	ck_assert_uint_eq(get_be32(r.data_in), 8 * 64);
	ck_assert_uint_eq(get_be64(desc(0) + 16), Z(2));
	ck_assert_uint_eq(r.data_in[4] & 0x0f, 1);
}
END_TEST

/* PARTIAL = 0: ZONE LIST LENGTH counts every matching zone; PARTIAL = 1: only those that fit. */
START_TEST(partial_bit)
{
	report(0, 64 + 2 * 64, 0x00);
	ck_assert_uint_eq(get_be32(r.data_in), 10 * 64);
	ck_assert_uint_eq(r.data_in_len, 64 + 2 * 64);
	report(0, 64 + 2 * 64, 0x80);
	ck_assert_uint_eq(get_be32(r.data_in), 2 * 64);
	ck_assert_uint_eq(r.data_in_len, 64 + 2 * 64);
	ck_assert_uint_eq(get_be64(desc(1) + 16), Z(1));
	/* PARTIAL with a reporting option: the zones that fit among those that match. */
	report(0, 64 + 64 + 10, 0x80 | 0x01);
	ck_assert_uint_eq(get_be32(r.data_in), 64);
	ck_assert_uint_eq(r.data_in_len, 64 + 64);
}
END_TEST

/* SPC-4 4.2.5.6: an ALLOCATION LENGTH shorter than the data truncates it (0 transfers nothing). */
START_TEST(allocation_length_truncates)
{
	report(0, 32, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 32);
	ck_assert_uint_eq(get_be32(r.data_in), 10 * 64);
	report(0, 100, 0);
	ck_assert_uint_eq(r.data_in_len, 100);
	report(0, 0, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 0);
}
END_TEST

/* SAME = 2 (one type, the last zone shorter) and 0 (types vary and the last zone is shorter). */
START_TEST(same_with_runt_zone)
{
	struct harness h2;
	struct harness saved = h;

	zbc_fixture_init(&h2, SCSI_LU_ZBC_HM, 4 * ZS - 16, ZS, 0, 0, true, 0);
	h = h2;
	report(0, 4096, 0);
	ck_assert_uint_eq(r.data_in[4] & 0x0f, 2);
	ck_assert_uint_eq(get_be64(desc(3) + 8), ZS - 16);
	ck_assert_uint_eq(get_be64(r.data_in + 8), 4 * ZS - 17);
	zbc_fixture_fini(&h2);
	zbc_fixture_init(&h2, SCSI_LU_ZBC_HM, 4 * ZS - 16, ZS, 1, 0, true, 0);
	h = h2;
	report(0, 4096, 0);
	ck_assert_uint_eq(r.data_in[4] & 0x0f, 0);
	zbc_fixture_fini(&h2);
	h = saved;
}
END_TEST

/* Host aware: SWP zones (type 3); NON_SEQ (byte 1 bit 1) reported and selected by option 11h. */
START_TEST(host_aware_non_seq)
{
	struct harness h2;
	struct harness saved = h;

	zbc_fixture_init(&h2, SCSI_LU_ZBC_HA, 4 * ZS, ZS, 1, 0, true, 0);
	h = h2;
	write_ok(Z(2) + 8, 8);
	report(0, 4096, 0x11);
	ck_assert_uint_eq(get_be32(r.data_in), 64);
	ck_assert_uint_eq(desc(0)[0], 0x03);
	ck_assert_uint_eq(desc(0)[1], 0x22);
	ck_assert_uint_eq(get_be64(desc(0) + 24), Z(2) + 16);
	zbc_fixture_fini(&h2);
	h = saved;
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("zbc_in");
	TCase *tc = tcase_create("report_zones");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, report_all_layout);
	tcase_add_test(tc, reporting_options_select_zones);
	tcase_add_test(tc, reserved_reporting_options_are_invalid_field);
	tcase_add_test(tc, start_lba_past_maximum_is_lba_out_of_range);
	tcase_add_test(tc, start_lba_inside_a_zone);
	tcase_add_test(tc, partial_bit);
	tcase_add_test(tc, allocation_length_truncates);
	tcase_add_test(tc, same_with_runt_zone);
	tcase_add_test(tc, host_aware_non_seq);
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
