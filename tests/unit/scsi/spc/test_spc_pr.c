/* spc_pr.c: reservation conflicts (SPC-4 5.13.1 table 52, SPC-2 5.5.1) and state hooks. */
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

static void prout(int nexus, uint8_t sa, uint8_t type, uint64_t key, uint64_t sa_key)
{
	uint8_t cdb[10] = { 0x5f, sa, type, 0, 0, 0, 0, 0, 24, 0 }, param[24] = { 0 };
	put_be64(param, key);
	put_be64(param + 8, sa_key);
	harness_run(&h, nexus, cdb, 10, param, 24, 24, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
}

static bool read_ok(int nexus)
{
	uint8_t cdb[10] = { 0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
	harness_run(&h, nexus, cdb, 10, NULL, 0, 0, &r);
	return r.status == SCSI_STATUS_GOOD;
}

static bool write_ok(int nexus)
{
	static uint8_t block[512];
	uint8_t cdb[10] = { 0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
	harness_run(&h, nexus, cdb, 10, block, 512, 512, &r);
	return r.status == SCSI_STATUS_GOOD;
}

/*
 * libiscsi ProutReserve.Access*: nexus 0 holds a reservation of each type,
 * nexus 1 is registered then not.  Expected read/write access of nexus 1.
 */
START_TEST(access_by_type)
{
	static const struct {
		uint8_t type;
		bool reg_read, reg_write, unreg_read, unreg_write;
	} cases[] = {
		{ 0x1, true, false, true, false },  /* WRITE EXCLUSIVE */
		{ 0x3, false, false, false, false }, /* EXCLUSIVE ACCESS */
		{ 0x5, true, true, true, false },   /* WE - REGISTRANTS ONLY */
		{ 0x6, true, true, false, false },  /* EA - REGISTRANTS ONLY */
		{ 0x7, true, true, true, false },   /* WE - ALL REGISTRANTS */
		{ 0x8, true, true, false, false },  /* EA - ALL REGISTRANTS */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		prout(0, 0x00, 0, 0, 0xa1);
		prout(1, 0x00, 0, 0, 0xb2);
		prout(0, 0x01, cases[i].type, 0xa1, 0);
		ck_assert(read_ok(0));
		ck_assert(write_ok(0));
		ck_assert_int_eq(read_ok(1), cases[i].reg_read);
		ck_assert_int_eq(write_ok(1), cases[i].reg_write);
		if (!cases[i].reg_write)
			ck_assert_uint_eq(r.status, SCSI_STATUS_RESERVATION_CONFLICT);
		prout(1, 0x00, 0, 0xb2, 0);
		ck_assert_int_eq(read_ok(1), cases[i].unreg_read);
		ck_assert_int_eq(write_ok(1), cases[i].unreg_write);
		prout(0, 0x03, 0, 0xa1, 0); /* CLEAR */
		harness_clear_ua(&h);
	}
}
END_TEST

/* Table 52: INQUIRY, TEST UNIT READY, READ CAPACITY, PR IN are allowed; MODE SENSE (read class) is not under EA. */
START_TEST(allowed_classes)
{
	uint8_t inquiry[6] = { 0x12, 0, 0, 0, 36, 0 }, tur[6] = { 0 }, rc10[10] = { 0x25 };
	uint8_t mode_sense[6] = { 0x1a, 0, 0x3f, 0, 255, 0 }, prin[10] = { 0x5e, 0, 0, 0, 0, 0, 0, 1, 0, 0 };
	uint8_t prevent[6] = { 0x1e, 0, 0, 0, 0, 0 };

	prout(0, 0x00, 0, 0, 0xa1);
	prout(0, 0x01, 0x03, 0xa1, 0);
	harness_run(&h, 1, inquiry, 6, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	harness_run(&h, 1, tur, 6, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	harness_run(&h, 1, rc10, 10, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	harness_run(&h, 1, prin, 10, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	harness_run(&h, 1, mode_sense, 6, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_RESERVATION_CONFLICT);
	harness_run(&h, 1, prevent, 6, NULL, 0, 0, &r); /* PREVENT = 00b is allowed */
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	prevent[4] = 1;
	harness_run(&h, 1, prevent, 6, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_RESERVATION_CONFLICT);
}
END_TEST

/* SPC-4 5.13.1: registrations and the reservation survive I_T nexus loss; the same identity is the holder again. */
START_TEST(survives_nexus_loss)
{
	struct scsi_nexus *n;

	prout(0, 0x00, 0, 0, 0xa1);
	prout(0, 0x01, 0x01, 0xa1, 0);
	scsi_nexus_destroy(h.nexus[0]);
	ck_assert(h.lu->pr->reserved);
	n = scsi_nexus_create(h.dev, &harness_transport, "iqn.2026-12.test:i0,i,0x000000000001",
			      "iqn.2026-12.org.sbcemu:harness,t,0x0001", 1);
	h.nexus[0] = n;
	harness_clear_ua(&h);
	ck_assert(spc_pr_is_holder(h.lu->pr, n));
	ck_assert(write_ok(0));
	ck_assert(!write_ok(1));
}
END_TEST

/*
 * The core compares initiator port names byte for byte (scsi_nexus_create):
 * a transport whose names ignore case hands them over in one case (the
 * iSCSI front end: lower case, RFC 3722).  To the core, a name in another
 * case is another initiator port.
 */
START_TEST(port_names_compare_exactly)
{
	struct scsi_nexus *n = scsi_nexus_create(h.dev, &harness_transport, "iqn.2026-12.test:I0,i,0x000000000001",
						 "iqn.2026-12.org.sbcemu:harness,t,0x0001", 1);

	prout(0, 0x00, 0, 0, 0xa1);
	prout(0, 0x01, 0x01, 0xa1, 0);
	ck_assert(spc_pr_is_holder(h.lu->pr, h.nexus[0]));
	ck_assert(!spc_pr_is_holder(h.lu->pr, n));
	ck_assert(!spc_pr_find(h.lu->pr, n));
	scsi_nexus_destroy(n);
}
END_TEST

/* Another relative target port is another I_T nexus: not the holder. */
START_TEST(relative_target_port_identity)
{
	struct scsi_nexus *n;

	prout(0, 0x00, 0, 0, 0xa1);
	prout(0, 0x01, 0x03, 0xa1, 0);
	n = scsi_nexus_create(h.dev, &harness_transport, "iqn.2026-12.test:i0,i,0x000000000001",
			      "iqn.2026-12.org.sbcemu:harness,t,0x0002", 2);
	ck_assert(!spc_pr_is_holder(h.lu->pr, n));
	ck_assert(spc_pr_is_holder(h.lu->pr, h.nexus[0]));
	scsi_nexus_destroy(n);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spc_pr");
	TCase *tc = tcase_create("conflicts");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, access_by_type);
	tcase_add_test(tc, allowed_classes);
	tcase_add_test(tc, survives_nexus_loss);
	tcase_add_test(tc, port_names_compare_exactly);
	tcase_add_test(tc, relative_target_port_identity);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
