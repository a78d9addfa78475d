/* spc_reserve.c: RESERVE(6)/(10), RELEASE(6)/(10) (SPC-2 5.5.1; CRH, SPC-4 5.13 (CRH)). */
#include <check.h>
#include <string.h>

#include "harness.h"
#include "spc/spc.h"

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

static void run6(int nexus, uint8_t opcode)
{
	uint8_t cdb[6] = { opcode, 0, 0, 0, opcode == 0x12 || opcode == 0x03 ? 96 : 0, 0 };
	harness_run(&h, nexus, cdb, 6, NULL, 0, 0, &r);
}

static void read10(int nexus)
{
	uint8_t cdb[10] = { 0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
	harness_run(&h, nexus, cdb, 10, NULL, 0, 0, &r);
}

static void register_key(int nexus, uint64_t key)
{
	uint8_t cdb[10] = { 0x5f, 0x00, 0, 0, 0, 0, 0, 0, 24, 0 }, param[24] = { 0 };
	put_be64(param + 8, key);
	harness_run(&h, nexus, cdb, 10, param, 24, 24, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
}

static void tmf_done(void *arg, enum scsi_tmf_response response)
{
	(void)arg;
	(void)response;
}

/* SPC-2 5.5.1: the holder may reserve again; another nexus conflicts and its commands conflict. */
START_TEST(reserve_conflicts)
{
	run6(0, 0x16);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_ptr_eq(h.lu->spc2_reservation_holder, h.nexus[0]);
	run6(0, 0x16);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	run6(1, 0x16);
	ck_assert_uint_eq(r.status, SCSI_STATUS_RESERVATION_CONFLICT);
	read10(1);
	ck_assert_uint_eq(r.status, SCSI_STATUS_RESERVATION_CONFLICT);
	run6(1, 0x1a); /* MODE SENSE(6) */
	ck_assert_uint_eq(r.status, SCSI_STATUS_RESERVATION_CONFLICT);
	read10(0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
}
END_TEST

/* INQUIRY and REQUEST SENSE pass through another nexus's reservation; RELEASE from it does nothing. */
START_TEST(allowed_commands_and_foreign_release)
{
	uint8_t report_luns[12] = { 0xa0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0 };

	run6(0, 0x16);
	run6(1, 0x12);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	run6(1, 0x03);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	harness_run(&h, 1, report_luns, 12, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	run6(1, 0x17);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_ptr_eq(h.lu->spc2_reservation_holder, h.nexus[0]);
	run6(0, 0x17);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_ptr_null(h.lu->spc2_reservation_holder);
	run6(1, 0x16);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
}
END_TEST

/* RESERVE(10) / RELEASE(10) behave the same; 3RDPTY is refused (05/24/00 byte 1 bit 4). */
START_TEST(reserve10_release10)
{
	uint8_t reserve10[10] = { 0x56 }, release10[10] = { 0x57 };

	harness_run(&h, 1, reserve10, 10, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	harness_run(&h, 0, reserve10, 10, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_RESERVATION_CONFLICT);
	harness_run(&h, 1, release10, 10, NULL, 0, 0, &r);
	ck_assert_ptr_null(h.lu->spc2_reservation_holder);
	reserve10[1] = 0x10;
	harness_run(&h, 0, reserve10, 10, NULL, 0, 0, &r);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[15], 0xc8 | 4);
}
END_TEST

/* The reservation ends with I_T NEXUS RESET of its holder and with LOGICAL UNIT RESET. */
START_TEST(released_by_nexus_loss_and_lu_reset)
{
	run6(0, 0x16);
	scsi_tmf(h.nexus[1], scsi_lun_encode(0), SCSI_TMF_I_T_NEXUS_RESET, NULL, tmf_done, NULL);
	ck_assert_ptr_eq(h.lu->spc2_reservation_holder, h.nexus[0]);
	scsi_tmf(h.nexus[0], scsi_lun_encode(0), SCSI_TMF_I_T_NEXUS_RESET, NULL, tmf_done, NULL);
	ck_assert_ptr_null(h.lu->spc2_reservation_holder);
	harness_clear_ua(&h);
	run6(1, 0x16);
	scsi_tmf(h.nexus[0], scsi_lun_encode(0), SCSI_TMF_LOGICAL_UNIT_RESET, NULL, tmf_done, NULL);
	ck_assert_ptr_null(h.lu->spc2_reservation_holder);
}
END_TEST

/* SPC-2 5.5.1 with a registration present: every RESERVE and RELEASE conflicts (CRH exceptions aside). */
START_TEST(reserve_with_registrations)
{
	register_key(0, 0xaa);
	run6(1, 0x16);
	ck_assert_uint_eq(r.status, SCSI_STATUS_RESERVATION_CONFLICT);
	run6(0, 0x16); /* registered, but no persistent reservation to hold */
	ck_assert_uint_eq(r.status, SCSI_STATUS_RESERVATION_CONFLICT);
	run6(1, 0x17);
	ck_assert_uint_eq(r.status, SCSI_STATUS_RESERVATION_CONFLICT);
	ck_assert_ptr_null(h.lu->spc2_reservation_holder);
}
END_TEST

/* SPC-4 5.13 (CRH = 1): the persistent reservation holder's RESERVE / RELEASE -> GOOD, no effect. */
START_TEST(crh_holder_no_op)
{
	uint8_t cdb[10] = { 0x5f, 0x01, 0x01, 0, 0, 0, 0, 0, 24, 0 }, param[24] = { 0 };

	register_key(0, 0xaa);
	put_be64(param, 0xaa);
	harness_run(&h, 0, cdb, 10, param, 24, 24, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	run6(0, 0x16);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_ptr_null(h.lu->spc2_reservation_holder);
	run6(0, 0x17);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(h.lu->pr->reserved);
}
END_TEST

/* Under an SPC-2 reservation: PERSISTENT RESERVE OUT conflicts for everyone, PR IN for the others. */
START_TEST(persistent_commands_under_spc2)
{
	uint8_t out[10] = { 0x5f, 0x00, 0, 0, 0, 0, 0, 0, 24, 0 }, param[24] = { 0 };
	uint8_t in[10] = { 0x5e, 0x00, 0, 0, 0, 0, 0, 0x10, 0, 0 };

	run6(0, 0x16);
	put_be64(param + 8, 0x1234);
	harness_run(&h, 1, out, 10, param, 24, 24, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_RESERVATION_CONFLICT);
	harness_run(&h, 0, out, 10, param, 24, 24, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_RESERVATION_CONFLICT);
	harness_run(&h, 1, in, 10, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_RESERVATION_CONFLICT);
	harness_run(&h, 0, in, 10, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spc_reserve");
	TCase *tc = tcase_create("reserve");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, reserve_conflicts);
	tcase_add_test(tc, allowed_commands_and_foreign_release);
	tcase_add_test(tc, reserve10_release10);
	tcase_add_test(tc, released_by_nexus_loss_and_lu_reset);
	tcase_add_test(tc, reserve_with_registrations);
	tcase_add_test(tc, crh_holder_no_op);
	tcase_add_test(tc, persistent_commands_under_spc2);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
