/* spc_misc.c: TEST UNIT READY (SPC-4 6.47), PREVENT ALLOW MEDIUM REMOVAL (SBC-4 5.14). */
#include <check.h>

#include "harness.h"
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

static void prevent(int nexus, uint8_t value)
{
	uint8_t cdb[6] = { 0x1e, 0, 0, 0, value, 0 };
	harness_run(&h, nexus, cdb, 6, NULL, 0, 0, &r);
}

static void tmf_done(void *arg, enum scsi_tmf_response response)
{
	*(enum scsi_tmf_response *)arg = response;
}

/* TEST UNIT READY on a ready LU -> GOOD; on a stopped one the prologue says 02/04/02. */
START_TEST(test_unit_ready)
{
	uint8_t cdb[6] = { 0 };

	harness_run(&h, 0, cdb, 6, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	h.lu->stopped = true;
	harness_run(&h, 0, cdb, 6, NULL, 0, 0, &r);
	ck_assert_uint_eq(harness_sense_key(&r), 0x2);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x0402);
}
END_TEST

/* SBC-4 5.14: prevention is per I_T nexus; ALLOW from one ends only its own. */
START_TEST(prevent_per_nexus)
{
	prevent(0, 1);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(h.lu->prevent_count, 1);
	prevent(0, 1); /* a second PREVENT from the same nexus counts once */
	ck_assert_uint_eq(h.lu->prevent_count, 1);
	prevent(1, 1);
	ck_assert_uint_eq(h.lu->prevent_count, 2);
	prevent(0, 0);
	ck_assert_uint_eq(h.lu->prevent_count, 1);
	prevent(0, 0);
	ck_assert_uint_eq(h.lu->prevent_count, 1);
	prevent(1, 0);
	ck_assert_uint_eq(h.lu->prevent_count, 0);
}
END_TEST

/* SBC-4 5.14: PREVENT 10b and 11b are obsolete -> 05/24/00 on byte 4. */
START_TEST(prevent_obsolete_values)
{
	prevent(0, 2);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[17], 4);
	prevent(0, 3);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(h.lu->prevent_count, 0);
}
END_TEST

/* I_T NEXUS RESET ends that nexus's prevent; LOGICAL UNIT RESET ends all of them. */
START_TEST(prevent_ends_with_nexus_and_reset)
{
	enum scsi_tmf_response resp = SCSI_TMF_FUNCTION_REJECTED;

	prevent(0, 1);
	prevent(1, 1);
	scsi_tmf(h.nexus[0], scsi_lun_encode(0), SCSI_TMF_I_T_NEXUS_RESET, NULL, tmf_done, &resp);
	ck_assert_uint_eq(resp, SCSI_TMF_FUNCTION_COMPLETE);
	ck_assert_uint_eq(h.lu->prevent_count, 1);
	scsi_tmf(h.nexus[1], scsi_lun_encode(0), SCSI_TMF_LOGICAL_UNIT_RESET, NULL, tmf_done, &resp);
	ck_assert_uint_eq(h.lu->prevent_count, 0);
	harness_clear_ua(&h);
	prevent(1, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(h.lu->prevent_count, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spc_misc");
	TCase *tc = tcase_create("misc");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_unit_ready);
	tcase_add_test(tc, prevent_per_nexus);
	tcase_add_test(tc, prevent_obsolete_values);
	tcase_add_test(tc, prevent_ends_with_nexus_and_reset);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
