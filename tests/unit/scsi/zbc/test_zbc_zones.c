/*
 * zbc_zones.c: set-up (geometry), the zone state machine of ZBC-2 zone conditions; libzbc zbc.h
 * as writes drive it, open zone resources of 4.6 for implicit opens, the
 * whole-LU resets of FORMAT UNIT / SANITIZE, RC BASIS.  (ZBC OUT drives the
 * explicit transitions: test_zbc_out.c.)
 *
 * Layout (host managed): 8 zones of 64 blocks, zones 0-1 conventional
 * ([0,128)), zones 2-7 sequential write required ([128,512)).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "zbc_fixture.h"

#define ZS 64
#define Z(n) ((uint64_t)(n) * ZS)

static struct harness h;

static void setup_hm(void)
{
	zbc_fixture_init(&h, SCSI_LU_ZBC_HM, 8 * ZS, ZS, 2, 2, false, 0);
}

static void teardown(void)
{
	zbc_fixture_fini(&h);
}

#define CHECK_WRITE(lba, n, want_key, want_asc)                                                    \
	do {                                                                                      \
		uint8_t key_;                                                                     \
		uint16_t asc_;                                                                    \
		enum scsi_result r_ = zbc_test_write(&h, (lba), (n), &key_, &asc_);               \
		ck_assert_int_eq(r_, (want_key) ? SCSI_FAILED : SCSI_OK);                         \
		ck_assert_uint_eq(key_, (want_key));                                              \
		ck_assert_uint_eq(asc_, (want_asc));                                              \
	} while (0)


/* A write opens an EMPTY zone implicitly; reaching the zone end makes it FULL and frees the resource. */
START_TEST(write_opens_implicitly_then_fills)
{
	struct zbc_state *z = h.lu->zbc;

	CHECK_WRITE(Z(2), 8, 0, 0);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->condition, ZBC_ZC_IMPLICITLY_OPENED);
	ck_assert_uint_eq(z->nr_implicit_open, 1);
	CHECK_WRITE(Z(2) + 8, ZS - 8, 0, 0);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->condition, ZBC_ZC_FULL);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->wp, Z(3));
	ck_assert_uint_eq(z->nr_implicit_open, 0);
}
END_TEST

/* libzbc 01/176: implicitly opened zones are closed to free a resource for a new implicit open. */
START_TEST(implicit_open_autocloses_implicitly_opened_zone)
{
	struct zbc_state *z = h.lu->zbc;

	CHECK_WRITE(Z(2), 8, 0, 0);
	CHECK_WRITE(Z(3), 8, 0, 0);
	CHECK_WRITE(Z(4), 8, 0, 0);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->condition, ZBC_ZC_CLOSED);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(4))->condition, ZBC_ZC_IMPLICITLY_OPENED);
	ck_assert_uint_eq(z->nr_implicit_open, 2);
	/* Writing the CLOSED zone opens it again (closing another). */
	CHECK_WRITE(Z(2) + 8, 8, 0, 0);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->condition, ZBC_ZC_IMPLICITLY_OPENED);
	ck_assert_uint_eq(z->nr_implicit_open, 2);
}
END_TEST

/* libzbc 01/128: implicit opens are not limited by MAXIMUM NUMBER OF OPEN SWR ZONES. */
START_TEST(implicit_opens_not_limited)
{
	for (int i = 2; i < 8; i++)
		CHECK_WRITE(Z(i), 8, 0, 0);
	ck_assert_uint_eq(h.lu->zbc->nr_implicit_open, 2);
}
END_TEST

/* READ CAPACITY(16) RC BASIS 01b on zoned LUs (ZBC-2; Linux sd_zbc.c). */
START_TEST(rc_basis_is_01b)
{
	ck_assert_uint_eq(zbc_rc_basis(h.lu), 1);
}
END_TEST

/* FORMAT UNIT / SANITIZE: every write pointer zone EMPTY (ZNR = 0) or FULL (ZNR = 1); faults stay. */
START_TEST(reset_and_fill_all_zones)
{
	char err[128];

	CHECK_WRITE(Z(2), 8, 0, 0);
	ck_assert_int_eq(zbc_set_condition(h.lu, Z(5), ZBC_ZC_OFFLINE, err, sizeof(err)), 0);
	zbc_fill_all_zones(h.lu);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->condition, ZBC_ZC_FULL);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(7))->condition, ZBC_ZC_FULL);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(5))->condition, ZBC_ZC_OFFLINE);
	ck_assert_uint_eq(h.lu->zbc->nr_implicit_open, 0);
	zbc_reset_all_zones(h.lu);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->condition, ZBC_ZC_EMPTY);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->wp, Z(2));
	ck_assert_uint_eq(zbc_test_zone(&h, Z(5))->condition, ZBC_ZC_OFFLINE);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(0))->condition, ZBC_ZC_NOT_WRITE_POINTER);
}
END_TEST

/* Geometry errors are refused with a message (zone size not a power of two, too many conventional zones). */
START_TEST(bad_geometry_refused)
{
	struct harness h2;
	struct scsi_lu_params p;
	char err[256];

	/* A conventional LU turned zoned afterwards: scsi_lu_create would refuse a bad geometry itself. */
	memset(&p, 0, sizeof(p));
	p.kind = SCSI_LU_CONVENTIONAL;
	harness_init(&h2, 512, 512, &p);
	h2.lu->kind = SCSI_LU_ZBC_HM;
	h2.lu->params.kind = SCSI_LU_ZBC_HM;
	h2.lu->params.zone_size = 48;
	ck_assert_int_eq(zbc_init(h2.lu, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "power of two"));
	h2.lu->params.zone_size = 64;
	h2.lu->params.conventional_zones = 9;
	ck_assert_int_eq(zbc_init(h2.lu, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "conventional"));
	ck_assert_ptr_null(h2.lu->zbc);
	/* Default zone size: 256 MiB of 512-byte blocks; one runt zone here. */
	h2.lu->params.zone_size = 0;
	h2.lu->params.conventional_zones = 0;
	ck_assert_int_eq(zbc_init(h2.lu, err, sizeof(err)), 0);
	ck_assert_uint_eq(h2.lu->zbc->zone_size, 524288);
	ck_assert_uint_eq(h2.lu->zbc->nr_zones, 1);
	ck_assert_uint_eq(h2.lu->zbc->zones[0].length, 512);
	zbc_fixture_fini(&h2);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("zbc_zones");
	TCase *state = tcase_create("state");

	tcase_add_checked_fixture(state, setup_hm, teardown);
	tcase_add_test(state, write_opens_implicitly_then_fills);
	tcase_add_test(state, implicit_open_autocloses_implicitly_opened_zone);
	tcase_add_test(state, implicit_opens_not_limited);
	tcase_add_test(state, rc_basis_is_01b);
	tcase_add_test(state, reset_and_fill_all_zones);
	tcase_add_test(state, bad_geometry_refused);
	suite_add_tcase(s, state);
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
