/* spc_pr_out.c: PERSISTENT RESERVE OUT (SPC-4 6.17, 5.13). */
#include <check.h>
#include <string.h>

#include "harness.h"
#include "manual_executor.h"
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

static void prout(int nexus, uint8_t sa, uint8_t type, uint64_t key, uint64_t sa_key, uint8_t flags)
{
	uint8_t cdb[10] = { 0x5f, sa, type, 0, 0, 0, 0, 0, 24, 0 }, param[24] = { 0 };
	put_be64(param, key);
	put_be64(param + 8, sa_key);
	param[20] = flags;
	harness_run(&h, nexus, cdb, 10, param, 24, 24, &r);
}

static uint32_t generation(void)
{
	return h.lu->pr->generation;
}

static unsigned nregs(void)
{
	unsigned n = 0;
	for (const struct spc_pr_registration *reg = h.lu->pr->regs; reg; reg = reg->next)
		n++;
	return n;
}

static void expect_ua(int nexus, uint16_t asc_ascq)
{
	uint8_t tur[6] = { 0 };
	harness_run(&h, nexus, tur, 6, NULL, 0, 0, &r);
	ck_assert_uint_eq(harness_sense_key(&r), 0x6);
	ck_assert_uint_eq(harness_asc_ascq(&r), asc_ascq);
}

static void expect_no_ua(int nexus)
{
	uint8_t tur[6] = { 0 };
	harness_run(&h, nexus, tur, 6, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
}

/* SPC-4 5.13 (registering): REGISTER, change of key, wrong key conflicts, unregister; PRGENERATION counts changes. */
START_TEST(register_rules)
{
	uint32_t g = generation();

	prout(0, 0x00, 0, 0, 0, 0); /* unregistered, SA key 0: nothing */
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(generation(), g);
	prout(0, 0x00, 0, 0x11, 0x22, 0); /* unregistered with a non-zero RESERVATION KEY */
	ck_assert_uint_eq(r.status, SCSI_STATUS_RESERVATION_CONFLICT);
	prout(0, 0x00, 0, 0, 0xa1, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(generation(), g + 1);
	prout(0, 0x00, 0, 0, 0xa2, 0); /* registered, RESERVATION KEY 0 != A1 */
	ck_assert_uint_eq(r.status, SCSI_STATUS_RESERVATION_CONFLICT);
	prout(0, 0x00, 0, 0xa1, 0xa2, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(h.lu->pr->regs->key, 0xa2);
	prout(0, 0x00, 0, 0xa2, 0, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(nregs(), 0);
	ck_assert_uint_eq(generation(), g + 3);
}
END_TEST

/* REGISTER AND IGNORE EXISTING KEY: the RESERVATION KEY is not checked. */
START_TEST(register_and_ignore)
{
	prout(0, 0x06, 0, 0x999, 0xa1, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	prout(0, 0x06, 0, 0x777, 0xa5, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(nregs(), 1);
	ck_assert_uint_eq(h.lu->pr->regs->key, 0xa5);
	prout(0, 0x06, 0, 0, 0, 0);
	ck_assert_uint_eq(nregs(), 0);
}
END_TEST

/* RESERVE: registered with the right key; the holder may repeat it; another type or nexus conflicts. */
START_TEST(reserve_rules)
{
	prout(0, 0x00, 0, 0, 0xa1, 0);
	prout(1, 0x00, 0, 0, 0xb2, 0);
	prout(1, 0x01, 0x01, 0xa1, 0, 0); /* someone else's key */
	ck_assert_uint_eq(r.status, SCSI_STATUS_RESERVATION_CONFLICT);
	prout(0, 0x01, 0x01, 0xa1, 0, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(h.lu->pr->reserved);
	ck_assert_uint_eq(h.lu->pr->type, 0x01);
	prout(0, 0x01, 0x01, 0xa1, 0, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	prout(0, 0x01, 0x03, 0xa1, 0, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_RESERVATION_CONFLICT);
	prout(1, 0x01, 0x01, 0xb2, 0, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_RESERVATION_CONFLICT);
}
END_TEST

/* RELEASE: non-holder GOOD with no effect; wrong TYPE 05/26/04; registrants-only release -> 06/2A/04. */
START_TEST(release_rules)
{
	uint32_t g;

	prout(0, 0x00, 0, 0, 0xa1, 0);
	prout(1, 0x00, 0, 0, 0xb2, 0);
	prout(0, 0x01, 0x05, 0xa1, 0, 0);
	g = generation();
	prout(1, 0x02, 0x05, 0xb2, 0, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(h.lu->pr->reserved);
	prout(0, 0x02, 0x01, 0xa1, 0, 0);
	ck_assert_uint_eq(harness_sense_key(&r), 0x5);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2604);
	prout(0, 0x02, 0x05, 0xa1, 0, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(!h.lu->pr->reserved);
	ck_assert_uint_eq(generation(), g); /* RESERVE and RELEASE do not change PRGENERATION */
	expect_ua(1, 0x2a04);
	expect_no_ua(0);
	prout(0, 0x02, 0x05, 0xa1, 0, 0); /* no reservation: GOOD */
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
}
END_TEST

/* CLEAR: no registrations, no reservation; the other registrants get 06/2A/03. */
START_TEST(clear)
{
	uint32_t g;

	prout(0, 0x00, 0, 0, 0xa1, 0);
	prout(1, 0x00, 0, 0, 0xb2, 0);
	prout(0, 0x01, 0x03, 0xa1, 0, 0);
	g = generation();
	prout(1, 0x03, 0, 0xb2, 0, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(nregs(), 0);
	ck_assert(!h.lu->pr->reserved);
	ck_assert_uint_eq(generation(), g + 1);
	expect_ua(0, 0x2a03);
	expect_no_ua(1);
}
END_TEST

/* PREEMPT without a reservation removes the registrations with that key (libiscsi ProutPreempt). */
START_TEST(preempt_registration_only)
{
	uint32_t g;

	prout(0, 0x00, 0, 0, 0xa1, 0);
	prout(1, 0x00, 0, 0, 0xb2, 0);
	g = generation();
	prout(1, 0x04, 0x03, 0xb2, 0xa1, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(nregs(), 1);
	ck_assert_uint_eq(h.lu->pr->regs->key, 0xb2);
	ck_assert(!h.lu->pr->reserved);
	ck_assert_uint_eq(generation(), g + 1);
	expect_ua(0, 0x2a05);
	prout(1, 0x04, 0x03, 0xb2, 0x77, 0); /* a key nobody has */
	ck_assert_uint_eq(r.status, SCSI_STATUS_RESERVATION_CONFLICT);
	prout(1, 0x04, 0x03, 0xb2, 0, 0); /* key 0 without a reservation */
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2600);
}
END_TEST

/* PREEMPT of the holder: its registration goes, the reservation (new type) is the preempter's. */
START_TEST(preempt_holder)
{
	prout(0, 0x00, 0, 0, 0xa1, 0);
	prout(1, 0x00, 0, 0, 0xb2, 0);
	prout(0, 0x01, 0x03, 0xa1, 0, 0);
	prout(1, 0x04, 0x01, 0xb2, 0xa1, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(h.lu->pr->reserved);
	ck_assert_uint_eq(h.lu->pr->type, 0x01);
	ck_assert_uint_eq(h.lu->pr->holder->key, 0xb2);
	ck_assert_uint_eq(nregs(), 1);
	expect_ua(0, 0x2a05);
}
END_TEST

/* All registrants: PREEMPT with key 0 removes every other registrant and makes a new reservation. */
START_TEST(preempt_all_registrants)
{
	prout(0, 0x00, 0, 0, 0xa1, 0);
	prout(1, 0x00, 0, 0, 0xb2, 0);
	prout(0, 0x01, 0x07, 0xa1, 0, 0);
	prout(1, 0x04, 0x03, 0xb2, 0, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(nregs(), 1);
	ck_assert_uint_eq(h.lu->pr->type, 0x03);
	ck_assert_uint_eq(h.lu->pr->holder->key, 0xb2);
}
END_TEST

/* PREEMPT AND ABORT: the preempted nexus's commands end without status (SPC-4 5.13 (PREEMPT AND ABORT)). */
START_TEST(preempt_and_abort)
{
	struct manual_executor m;
	struct harness_result pending;
	uint8_t read10[10] = { 0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0 };

	prout(0, 0x00, 0, 0, 0xa1, 0);
	prout(1, 0x00, 0, 0, 0xb2, 0);
	manual_executor_init(&m);
	h.dev->executor = &m.ex;
	harness_run(&h, 0, read10, 10, NULL, 0, 0, &pending);
	ck_assert(!pending.completed);
	prout(1, 0x05, 0x03, 0xb2, 0xa1, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	manual_executor_run(&m, 100);
	ck_assert(pending.aborted);
	ck_assert(!pending.completed);
	h.dev->executor = &scsi_executor_inline;
	ck_assert_uint_eq(nregs(), 1);
	ck_assert_uint_eq(h.lu->pr->regs->key, 0xb2);
}
END_TEST

/* Unregistering the holder of a registrants-only reservation releases it: 06/2A/04 to the others. */
START_TEST(unregister_holder_releases)
{
	prout(0, 0x00, 0, 0, 0xa1, 0);
	prout(1, 0x00, 0, 0, 0xb2, 0);
	prout(0, 0x01, 0x06, 0xa1, 0, 0);
	prout(0, 0x00, 0, 0xa1, 0, 0);
	ck_assert(!h.lu->pr->reserved);
	expect_ua(1, 0x2a04);
	/* All registrants: the reservation stays until the last registrant goes. */
	prout(0, 0x00, 0, 0, 0xa1, 0);
	prout(0, 0x01, 0x08, 0xa1, 0, 0);
	prout(0, 0x00, 0, 0xa1, 0, 0);
	ck_assert(h.lu->pr->reserved);
	prout(1, 0x00, 0, 0xb2, 0, 0);
	ck_assert(!h.lu->pr->reserved);
}
END_TEST

/* Field checks: SCOPE, TYPE, PARAMETER LIST LENGTH, SPEC_I_PT, REPLACE LOST RESERVATION. */
START_TEST(field_errors)
{
	uint8_t cdb[10] = { 0x5f, 0x00, 0, 0, 0, 0, 0, 0, 8, 0 }, param[24] = { 0 };

	prout(0, 0x00, 0, 0, 0xa1, 0);
	prout(0, 0x01, 0x02, 0xa1, 0, 0);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[15], 0xc8 | 3);
	prout(0, 0x01, 0x11, 0xa1, 0, 0);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[15], 0xc8 | 7);
	harness_run(&h, 0, cdb, 10, param, 8, 8, &r);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x1a00);
	prout(1, 0x00, 0, 0, 0xb2, 0x08);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2600);
	ck_assert_uint_eq(r.sense[15], 0x88 | 3);
	ck_assert_uint_eq(r.sense[17], 20);
	prout(0, 0x08, 0x01, 0xa1, 0, 0);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[17], 1);
}
END_TEST

/* REGISTER AND MOVE: the reservation moves to the nexus the TransportID names, registered with SA key. */
START_TEST(register_and_move)
{
	static const char name[] = "iqn.2026-12.test:i1,i,0x000000000002";
	uint8_t cdb[10] = { 0x5f, 0x07, 0x01, 0, 0, 0, 0, 0, 0, 0 }, param[80] = { 0 };
	uint32_t len;

	prout(0, 0x00, 0, 0, 0xa1, 0);
	prout(0, 0x01, 0x01, 0xa1, 0, 0);
	put_be64(param, 0xa1);
	put_be64(param + 8, 0xc3);
	param[17] = 0x02; /* UNREG */
	put_be16(param + 18, 1);
	param[24] = 0x45;
	put_be16(param + 26, 40);
	memcpy(param + 28, name, sizeof(name));
	put_be32(param + 20, 44);
	len = 24 + 44;
	put_be32(cdb + 5, len);
	harness_run(&h, 0, cdb, 10, param, len, len, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(nregs(), 1);
	ck_assert_uint_eq(h.lu->pr->holder->key, 0xc3);
	ck_assert(spc_pr_is_holder(h.lu->pr, h.nexus[1]));
	ck_assert(!spc_pr_is_holder(h.lu->pr, h.nexus[0]));
}
END_TEST

/* APTPL: the state survives a new LU on the same state directory; the file goes with the last registration. */
START_TEST(aptpl_persists)
{
	struct scsi_lu_params p = h.lu->params;
	struct scsi_device *dev2;
	struct scsi_lu *lu2;
	char err[128];

	prout(0, 0x00, 0, 0, 0xc3, 0x01);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	prout(0, 0x01, 0x01, 0xc3, 0, 0);
	dev2 = scsi_device_create("iqn.2026-12.org.sbcemu:harness", NULL, NULL);
	lu2 = scsi_lu_create(dev2, &p, be_mem_open(2048 * 512), err, sizeof(err));
	ck_assert_ptr_nonnull(lu2);
	ck_assert_ptr_nonnull(lu2->pr->regs);
	ck_assert_uint_eq(lu2->pr->regs->key, 0xc3);
	ck_assert(lu2->pr->reserved);
	ck_assert_ptr_eq(lu2->pr->holder, lu2->pr->regs);
	ck_assert_uint_eq(lu2->pr->generation, h.lu->pr->generation);
	ck_assert(lu2->pr->aptpl);
	scsi_device_destroy(dev2);

	prout(0, 0x00, 0, 0xc3, 0, 0);
	dev2 = scsi_device_create("iqn.2026-12.org.sbcemu:harness", NULL, NULL);
	lu2 = scsi_lu_create(dev2, &p, be_mem_open(2048 * 512), err, sizeof(err));
	ck_assert_ptr_null(lu2->pr->regs);
	ck_assert(!lu2->pr->reserved);
	scsi_device_destroy(dev2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spc_pr_out");
	TCase *tc = tcase_create("pr_out");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, register_rules);
	tcase_add_test(tc, register_and_ignore);
	tcase_add_test(tc, reserve_rules);
	tcase_add_test(tc, release_rules);
	tcase_add_test(tc, clear);
	tcase_add_test(tc, preempt_registration_only);
	tcase_add_test(tc, preempt_holder);
	tcase_add_test(tc, preempt_all_registrants);
	tcase_add_test(tc, preempt_and_abort);
	tcase_add_test(tc, unregister_holder_releases);
	tcase_add_test(tc, field_errors);
	tcase_add_test(tc, register_and_move);
	tcase_add_test(tc, aptpl_persists);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
