/*
 * zbc_out.c: ZBC OUT (94h) CLOSE ZONE / FINISH ZONE / OPEN ZONE / RESET
 * WRITE POINTER through the core (op_table rows), with the sense libzbc's
 * 01_sk_ascq_check and 02_state_machine_check scripts expect.
 *
 * Layout (host managed): 8 zones of 64 blocks, zones 0-1 conventional,
 * MAXIMUM NUMBER OF OPEN SWR ZONES 2.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "zbc_fixture.h"

#define ZS 64
#define Z(n) ((uint64_t)(n) * ZS)
#define BS 512

static struct harness h;
static struct harness_result r;

static void setup(void)
{
	zbc_fixture_init(&h, SCSI_LU_ZBC_HM, 8 * ZS, ZS, 2, 2, true, 0);
}

static void teardown(void)
{
	zbc_fixture_fini(&h);
}

static void write_ok(uint64_t lba, uint32_t n)
{
	ck_assert_int_eq(zbc_test_write(&h, lba, n, NULL, NULL), SCSI_OK);
}

static enum zbc_zone_condition cond(uint64_t lba)
{
	return zbc_test_zone(&h, lba)->condition;
}

static void expect_good(void)
{
	ck_assert(r.completed);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
}

static void expect_sense(uint8_t key, uint16_t asc)
{
	ck_assert(r.completed);
	ck_assert_uint_eq(r.status, SCSI_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(harness_sense_key(&r), key);
	ck_assert_uint_eq(harness_asc_ascq(&r), asc);
}

/* Fixed-format field pointer: SKSV, C/D = 1 (CDB), no bit pointer, field byte. */
static void expect_field_pointer(uint16_t byte)
{
	ck_assert_uint_eq(r.sense[15], 0xc0);
	ck_assert_uint_eq(get_be16(r.sense + 16), byte);
}

/* ---- ZONE ID checks (all four service actions) ---- */

/* libzbc 01/020, 030, 040, 050: ZONE ID not a zone start, ALL = 0: 05/24/00, field pointer on ZONE ID. */
START_TEST(zone_id_not_zone_start_is_invalid_field)
{
	static const uint8_t sas[] = { ZBC_SA_CLOSE_ZONE, ZBC_SA_FINISH_ZONE, ZBC_SA_OPEN_ZONE,
				       ZBC_SA_RESET_WRITE_POINTER };

	for (unsigned i = 0; i < sizeof(sas); i++) {
		zbc_test_out(&h, sas[i], Z(3) + 1, false, &r);
		expect_sense(SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
		expect_field_pointer(2);
	}
}
END_TEST

/* libzbc 01/023, 031, 041, 051: ZONE ID of a conventional zone: 05/24/00. */
START_TEST(zone_id_conventional_is_invalid_field)
{
	static const uint8_t sas[] = { ZBC_SA_CLOSE_ZONE, ZBC_SA_FINISH_ZONE, ZBC_SA_OPEN_ZONE,
				       ZBC_SA_RESET_WRITE_POINTER };

	for (unsigned i = 0; i < sizeof(sas); i++) {
		zbc_test_out(&h, sas[i], Z(1), false, &r);
		expect_sense(SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	}
}
END_TEST

/* libzbc 01/024, 032, 042, 052 (ZBC-2 reading): ZONE ID past the capacity: 05/21/00. */
START_TEST(zone_id_past_capacity_is_lba_out_of_range)
{
	static const uint8_t sas[] = { ZBC_SA_CLOSE_ZONE, ZBC_SA_FINISH_ZONE, ZBC_SA_OPEN_ZONE,
				       ZBC_SA_RESET_WRITE_POINTER };

	for (unsigned i = 0; i < sizeof(sas); i++) {
		zbc_test_out(&h, sas[i], Z(8), false, &r);
		expect_sense(SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
	}
}
END_TEST

/* libzbc 01/025-026, 033-034, 043-044, 053-054: with ALL = 1 the ZONE ID is ignored. */
START_TEST(all_ignores_zone_id)
{
	static const uint8_t sas[] = { ZBC_SA_CLOSE_ZONE, ZBC_SA_FINISH_ZONE, ZBC_SA_OPEN_ZONE,
				       ZBC_SA_RESET_WRITE_POINTER };

	for (unsigned i = 0; i < sizeof(sas); i++) {
		zbc_test_out(&h, sas[i], Z(8) + 2, true, &r);
		expect_good();
		zbc_test_out(&h, sas[i], Z(0), true, &r);
		expect_good();
	}
}
END_TEST

/* ZBC-1: ZONE COUNT (bytes 12-13, ZBC-2) is not supported: non-zero is INVALID FIELD IN CDB at byte 12. */
START_TEST(zone_count_is_invalid_field)
{
	uint8_t cdb[16] = { SCSI_OP_ZBC_OUT, ZBC_SA_OPEN_ZONE };

	put_be64(cdb + 2, Z(2));
	put_be16(cdb + 12, 0x0100);
	harness_run(&h, 0, cdb, 16, NULL, 0, 0, &r);
	expect_sense(SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	ck_assert_uint_eq(r.sense[15], 0xc8); /* SKSV, C/D, BPV, bit 0 */
	ck_assert_uint_eq(get_be16(r.sense + 16), 12);
	ck_assert_uint_eq(cond(Z(2)), ZBC_ZC_EMPTY);
}
END_TEST

/* ---- OPEN ZONE ---- */

/* libzbc 02/001, 02/005, 02/009, 02/017, 02/021: transitions of OPEN ZONE. */
START_TEST(open_transitions)
{
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(2), false, &r);
	expect_good();
	ck_assert_uint_eq(cond(Z(2)), ZBC_ZC_EXPLICITLY_OPENED);
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(2), false, &r); /* EXPLICITLY OPENED: no-op */
	expect_good();
	ck_assert_uint_eq(h.lu->zbc->nr_explicit_open, 1);
	write_ok(Z(3), 8); /* IMPLICITLY OPENED -> EXPLICITLY OPENED, same resource */
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(3), false, &r);
	expect_good();
	ck_assert_uint_eq(cond(Z(3)), ZBC_ZC_EXPLICITLY_OPENED);
	ck_assert_uint_eq(h.lu->zbc->nr_implicit_open, 0);
	ck_assert_uint_eq(h.lu->zbc->nr_explicit_open, 2);
	write_ok(Z(3) + 8, ZS - 8); /* FULL: OPEN is a no-op */
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(3), false, &r);
	expect_good();
	ck_assert_uint_eq(cond(Z(3)), ZBC_ZC_FULL);
}
END_TEST

/* libzbc 01/021, 01/120: OPEN of an EMPTY or CLOSED zone with MAX zones explicitly open: 07/55/0E. */
START_TEST(open_without_resources_is_insufficient_zone_resources)
{
	write_ok(Z(4), 8);
	zbc_test_out(&h, ZBC_SA_CLOSE_ZONE, Z(4), false, &r);
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(2), false, &r);
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(3), false, &r);
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(5), false, &r);
	expect_sense(SENSE_KEY_DATA_PROTECT, ASC_INSUFFICIENT_ZONE_RESOURCES);
	ck_assert_uint_eq(cond(Z(5)), ZBC_ZC_EMPTY);
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(4), false, &r);
	expect_sense(SENSE_KEY_DATA_PROTECT, ASC_INSUFFICIENT_ZONE_RESOURCES);
	ck_assert_uint_eq(cond(Z(4)), ZBC_ZC_CLOSED);
}
END_TEST

/* libzbc 01/129: implicitly opened zones are closed to free a resource for OPEN ZONE. */
START_TEST(open_autocloses_implicitly_opened)
{
	write_ok(Z(2), 8);
	write_ok(Z(3), 8);
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(4), false, &r);
	expect_good();
	ck_assert_uint_eq(cond(Z(2)), ZBC_ZC_CLOSED);
	ck_assert_uint_eq(cond(Z(4)), ZBC_ZC_EXPLICITLY_OPENED);
}
END_TEST

/* libzbc 01/121: a zone written to FULL frees its resource for another OPEN. */
START_TEST(open_after_full_frees_resource)
{
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(2), false, &r);
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(3), false, &r);
	write_ok(Z(2), ZS);
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(4), false, &r);
	expect_good();
}
END_TEST

/* libzbc 01/022: OPEN ALL when explicitly opened + CLOSED zones exceed MAX: 07/55/0E, nothing opened. */
START_TEST(open_all_over_limit_opens_nothing)
{
	for (int i = 2; i < 5; i++) {
		write_ok(Z(i), 8);
		zbc_test_out(&h, ZBC_SA_CLOSE_ZONE, Z(i), false, &r);
	}
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, 0, true, &r);
	expect_sense(SENSE_KEY_DATA_PROTECT, ASC_INSUFFICIENT_ZONE_RESOURCES);
	for (int i = 2; i < 5; i++)
		ck_assert_uint_eq(cond(Z(i)), ZBC_ZC_CLOSED);
}
END_TEST

/* libzbc 02/025, 02/029, 02/041: OPEN ALL opens CLOSED zones; EMPTY and implicitly opened zones stay. */
START_TEST(open_all_opens_closed_zones_only)
{
	write_ok(Z(2), 8);
	zbc_test_out(&h, ZBC_SA_CLOSE_ZONE, Z(2), false, &r);
	write_ok(Z(3), 8);
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, 0, true, &r);
	expect_good();
	ck_assert_uint_eq(cond(Z(2)), ZBC_ZC_EXPLICITLY_OPENED);
	ck_assert_uint_eq(cond(Z(3)), ZBC_ZC_IMPLICITLY_OPENED);
	ck_assert_uint_eq(cond(Z(4)), ZBC_ZC_EMPTY);
}
END_TEST

/* ---- CLOSE ZONE ---- */

/* libzbc 02/002, 02/006, 02/010, 02/018, 02/022: CLOSE to CLOSED, or EMPTY when nothing was written. */
START_TEST(close_transitions)
{
	zbc_test_out(&h, ZBC_SA_CLOSE_ZONE, Z(2), false, &r); /* EMPTY: no-op */
	expect_good();
	ck_assert_uint_eq(cond(Z(2)), ZBC_ZC_EMPTY);
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(2), false, &r);
	zbc_test_out(&h, ZBC_SA_CLOSE_ZONE, Z(2), false, &r);
	ck_assert_uint_eq(cond(Z(2)), ZBC_ZC_EMPTY);
	write_ok(Z(2), 8);
	zbc_test_out(&h, ZBC_SA_CLOSE_ZONE, Z(2), false, &r);
	ck_assert_uint_eq(cond(Z(2)), ZBC_ZC_CLOSED);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->wp, Z(2) + 8);
	ck_assert_uint_eq(h.lu->zbc->nr_implicit_open, 0);
	write_ok(Z(3), ZS);
	zbc_test_out(&h, ZBC_SA_CLOSE_ZONE, Z(3), false, &r); /* FULL: no-op */
	expect_good();
	ck_assert_uint_eq(cond(Z(3)), ZBC_ZC_FULL);
}
END_TEST

/* libzbc 02/030, 02/038: CLOSE ALL closes every open zone. */
START_TEST(close_all)
{
	write_ok(Z(2), 8);
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(3), false, &r);
	zbc_test_out(&h, ZBC_SA_CLOSE_ZONE, 0, true, &r);
	expect_good();
	ck_assert_uint_eq(cond(Z(2)), ZBC_ZC_CLOSED);
	ck_assert_uint_eq(cond(Z(3)), ZBC_ZC_EMPTY);
	ck_assert_uint_eq(h.lu->zbc->nr_implicit_open + h.lu->zbc->nr_explicit_open, 0);
}
END_TEST

/* ---- FINISH ZONE ---- */

/* libzbc 02/003, 02/007, 02/011, 02/019, 02/023: FINISH makes the zone FULL, WP at the zone end. */
START_TEST(finish_transitions)
{
	zbc_test_out(&h, ZBC_SA_FINISH_ZONE, Z(2), false, &r);
	expect_good();
	ck_assert_uint_eq(cond(Z(2)), ZBC_ZC_FULL);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->wp, Z(3));
	write_ok(Z(3), 8);
	zbc_test_out(&h, ZBC_SA_FINISH_ZONE, Z(3), false, &r);
	expect_good();
	ck_assert_uint_eq(cond(Z(3)), ZBC_ZC_FULL);
	ck_assert_uint_eq(h.lu->zbc->nr_implicit_open, 0);
	zbc_test_out(&h, ZBC_SA_FINISH_ZONE, Z(3), false, &r); /* FULL: no-op */
	expect_good();
}
END_TEST

/* libzbc 01/140-141: FINISH of an EMPTY or CLOSED zone with MAX zones explicitly open: 07/55/0E. */
START_TEST(finish_without_resources_is_insufficient_zone_resources)
{
	write_ok(Z(4), 8);
	zbc_test_out(&h, ZBC_SA_CLOSE_ZONE, Z(4), false, &r);
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(2), false, &r);
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(3), false, &r);
	zbc_test_out(&h, ZBC_SA_FINISH_ZONE, Z(5), false, &r);
	expect_sense(SENSE_KEY_DATA_PROTECT, ASC_INSUFFICIENT_ZONE_RESOURCES);
	zbc_test_out(&h, ZBC_SA_FINISH_ZONE, Z(4), false, &r);
	expect_sense(SENSE_KEY_DATA_PROTECT, ASC_INSUFFICIENT_ZONE_RESOURCES);
	/* An open zone finishes. */
	zbc_test_out(&h, ZBC_SA_FINISH_ZONE, Z(2), false, &r);
	expect_good();
}
END_TEST

/* libzbc 01/142: with MAX zones implicitly open, FINISH of an EMPTY zone succeeds. */
START_TEST(finish_with_implicit_opens_succeeds)
{
	write_ok(Z(2), 8);
	write_ok(Z(3), 8);
	zbc_test_out(&h, ZBC_SA_FINISH_ZONE, Z(4), false, &r);
	expect_good();
	ck_assert_uint_eq(cond(Z(4)), ZBC_ZC_FULL);
}
END_TEST

/* libzbc 01/148-149, 02/027: FINISH ALL always succeeds; open and CLOSED zones become FULL, EMPTY stay. */
START_TEST(finish_all)
{
	write_ok(Z(2), 8);
	zbc_test_out(&h, ZBC_SA_CLOSE_ZONE, Z(2), false, &r);
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(3), false, &r);
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(4), false, &r);
	zbc_test_out(&h, ZBC_SA_FINISH_ZONE, 0, true, &r);
	expect_good();
	for (int i = 2; i < 5; i++)
		ck_assert_uint_eq(cond(Z(i)), ZBC_ZC_FULL);
	ck_assert_uint_eq(cond(Z(5)), ZBC_ZC_EMPTY);
	ck_assert_uint_eq(h.lu->zbc->nr_explicit_open, 0);
}
END_TEST

/* ---- RESET WRITE POINTER ---- */

static void backend_fill(uint64_t lba, uint32_t n, uint8_t byte)
{
	uint8_t buf[ZS * BS];

	memset(buf, byte, n * BS);
	ck_assert_int_eq(h.lu->backend->ops->write(h.lu->backend, buf, n * BS, lba * BS, 0), 0);
}

static bool backend_zero(uint64_t lba, uint32_t n)
{
	uint8_t buf[ZS * BS];

	ck_assert_int_eq(h.lu->backend->ops->read(h.lu->backend, buf, n * BS, lba * BS), 0);
	for (uint32_t i = 0; i < n * BS; i++)
		if (buf[i])
			return false;
	return true;
}

/*
 * libzbc 02/004, 008, 012, 020, 024: RESET makes the zone EMPTY, WP at the
 * start.  An SWR zone keeps its blocks in the backend; they are unwritten
 * (zbc_unwritten_plan), so reads zero them.
 */
START_TEST(reset_transitions_and_keeps_blocks)
{
	struct zbc_unwritten *u;

	write_ok(Z(2), ZS);
	backend_fill(Z(2), ZS, 0xa5);
	zbc_test_out(&h, ZBC_SA_RESET_WRITE_POINTER, Z(2), false, &r);
	expect_good();
	ck_assert_uint_eq(cond(Z(2)), ZBC_ZC_EMPTY);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->wp, Z(2));
	ck_assert(!backend_zero(Z(2), ZS));
	ck_assert_int_eq(zbc_unwritten_plan(h.lu, Z(2), ZS, &u), 0);
	ck_assert_ptr_nonnull(u);
	ck_assert_uint_eq(u->n, 1);
	ck_assert_uint_eq(u->range[0].lba, Z(2));
	ck_assert_uint_eq(u->range[0].nblocks, ZS);
	free(u);
	write_ok(Z(3), 8);
	zbc_test_out(&h, ZBC_SA_RESET_WRITE_POINTER, Z(3), false, &r);
	ck_assert_uint_eq(cond(Z(3)), ZBC_ZC_EMPTY);
	ck_assert_uint_eq(h.lu->zbc->nr_implicit_open, 0);
	zbc_test_out(&h, ZBC_SA_RESET_WRITE_POINTER, Z(3), false, &r); /* EMPTY: no-op */
	expect_good();
}
END_TEST

/* FINISH ZONE releases the blocks between the write pointer and the zone end (the zone is FULL: nothing is unwritten). */
START_TEST(finish_releases_blocks_above_the_write_pointer)
{
	struct zbc_unwritten *u;

	write_ok(Z(4), 8);
	backend_fill(Z(4), ZS, 0x3c);
	zbc_test_out(&h, ZBC_SA_FINISH_ZONE, Z(4), false, &r);
	expect_good();
	ck_assert_uint_eq(cond(Z(4)), ZBC_ZC_FULL);
	ck_assert(!backend_zero(Z(4), 8));
	ck_assert(backend_zero(Z(4) + 8, ZS - 8));
	ck_assert_int_eq(zbc_unwritten_plan(h.lu, Z(4), ZS, &u), 0);
	ck_assert_ptr_null(u);
}
END_TEST

/* libzbc 02/028-048: RESET ALL resets every written zone and leaves conventional data alone. */
START_TEST(reset_all)
{
	write_ok(Z(2), ZS);
	write_ok(Z(5), 8);
	backend_fill(Z(5), 8, 0x5a);
	backend_fill(0, 8, 0x11);
	zbc_test_out(&h, ZBC_SA_RESET_WRITE_POINTER, 0, true, &r);
	expect_good();
	for (int i = 2; i < 8; i++)
		ck_assert_uint_eq(cond(Z(i)), ZBC_ZC_EMPTY);
	ck_assert(!backend_zero(0, 8));
}
END_TEST

/* Zone management of a READ ONLY zone: 07/27/08; of an OFFLINE zone: 07/2C/0E; ALL skips them. */
START_TEST(management_of_faulty_zones)
{
	static const uint8_t sas[] = { ZBC_SA_CLOSE_ZONE, ZBC_SA_FINISH_ZONE, ZBC_SA_OPEN_ZONE,
				       ZBC_SA_RESET_WRITE_POINTER };
	char err[128];

	ck_assert_int_eq(zbc_set_condition(h.lu, Z(3), ZBC_ZC_READ_ONLY, err, sizeof(err)), 0);
	ck_assert_int_eq(zbc_set_condition(h.lu, Z(4), ZBC_ZC_OFFLINE, err, sizeof(err)), 0);
	for (unsigned i = 0; i < sizeof(sas); i++) {
		zbc_test_out(&h, sas[i], Z(3), false, &r);
		expect_sense(SENSE_KEY_DATA_PROTECT, ASC_ZONE_IS_READ_ONLY);
		zbc_test_out(&h, sas[i], Z(4), false, &r);
		expect_sense(SENSE_KEY_DATA_PROTECT, ASC_ZONE_IS_OFFLINE);
		zbc_test_out(&h, sas[i], 0, true, &r);
		expect_good();
		ck_assert_uint_eq(cond(Z(3)), ZBC_ZC_READ_ONLY);
		ck_assert_uint_eq(cond(Z(4)), ZBC_ZC_OFFLINE);
	}
}
END_TEST

/* REPORT ZONES and ZBC OUT are served by zoned LUs only: a conventional LU answers 05/20/00. */
START_TEST(conventional_lu_has_no_zbc_out)
{
	struct harness hc;
	uint8_t cdb[16] = { SCSI_OP_ZBC_OUT, ZBC_SA_OPEN_ZONE };

	harness_init(&hc, 512, BS, NULL);
	harness_clear_ua(&hc);
	harness_run(&hc, 0, cdb, 16, NULL, 0, 0, &r);
	ck_assert_uint_eq(harness_sense_key(&r), SENSE_KEY_ILLEGAL_REQUEST);
	ck_assert_uint_eq(harness_asc_ascq(&r), ASC_INVALID_COMMAND_OPERATION_CODE);
	cdb[0] = SCSI_OP_ZBC_IN;
	cdb[1] = ZBC_SA_REPORT_ZONES;
	harness_run(&hc, 0, cdb, 16, NULL, 0, 0, &r);
	ck_assert_uint_eq(harness_asc_ascq(&r), ASC_INVALID_COMMAND_OPERATION_CODE);
	harness_fini(&hc);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("zbc_out");
	TCase *tc = tcase_create("zbc_out");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, zone_id_not_zone_start_is_invalid_field);
	tcase_add_test(tc, zone_id_conventional_is_invalid_field);
	tcase_add_test(tc, zone_id_past_capacity_is_lba_out_of_range);
	tcase_add_test(tc, all_ignores_zone_id);
	tcase_add_test(tc, zone_count_is_invalid_field);
	tcase_add_test(tc, open_transitions);
	tcase_add_test(tc, open_without_resources_is_insufficient_zone_resources);
	tcase_add_test(tc, open_autocloses_implicitly_opened);
	tcase_add_test(tc, open_after_full_frees_resource);
	tcase_add_test(tc, open_all_over_limit_opens_nothing);
	tcase_add_test(tc, open_all_opens_closed_zones_only);
	tcase_add_test(tc, close_transitions);
	tcase_add_test(tc, close_all);
	tcase_add_test(tc, finish_transitions);
	tcase_add_test(tc, finish_without_resources_is_insufficient_zone_resources);
	tcase_add_test(tc, finish_with_implicit_opens_succeeds);
	tcase_add_test(tc, finish_all);
	tcase_add_test(tc, reset_transitions_and_keeps_blocks);
	tcase_add_test(tc, finish_releases_blocks_above_the_write_pointer);
	tcase_add_test(tc, reset_all);
	tcase_add_test(tc, management_of_faulty_zones);
	tcase_add_test(tc, conventional_lu_has_no_zbc_out);
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
