/*
 * Asymmetric access transitions on a virtual clock (spc_alua.c, SPC-4
 * 5.15.2): transitioning lasts exactly alua_transition_ms, a request during
 * it moves where it ends, ASYMMETRIC ACCESS STATE CHANGED (06/2A/06) skips
 * the requester, REPORT SUPPORTED OPERATION CODES lists SET TARGET PORT
 * GROUPS only with explicit ALUA, and an LU destroyed in mid-transition
 * (its requester already gone) frees everything (ASan run).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "virtual_clock.h"

#define NUM_BLOCKS 2048
#define BS 512
#define T0 (1000 * VC_MS)

static const uint8_t tur[6] = { 0x00 };
static const uint8_t read10[10] = { 0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
static const uint8_t rtpg[12] = { 0xa3, 0x0a, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0 };
static const uint8_t stpg[12] = { 0xa4, 0x0a, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0 };

static struct harness h;
static struct virtual_clock vc;

static void setup_with(uint8_t tpgs, uint32_t transition_ms)
{
	struct scsi_lu_params p;

	memset(&p, 0, sizeof(p));
	p.kind = SCSI_LU_CONVENTIONAL;
	snprintf(p.vendor, sizeof(p.vendor), "SBCEMU");
	snprintf(p.product, sizeof(p.product), "ALUA");
	snprintf(p.revision, sizeof(p.revision), "0001");
	p.alua_tpgs = tpgs;
	p.target_port_group = 5;
	p.alua_transition_ms = transition_ms;
	harness_init(&h, NUM_BLOCKS, BS, &p);
	virtual_clock_install(&vc, h.dev, T0);
	harness_clear_ua(&h);
}

static int state_of(int nexus)
{
	struct harness_result r;

	harness_run(&h, nexus, rtpg, sizeof(rtpg), NULL, 0, 64, &r);
	if (r.status != 0)
		return -1;
	return r.data_in[4] & 0x0f;
}

static void set_state(int nexus, uint8_t state)
{
	uint8_t list[8] = { 0, 0, 0, 0, state, 0, 0, 5 };
	struct harness_result r;

	harness_run(&h, nexus, stpg, sizeof(stpg), list, sizeof(list), sizeof(list), &r);
	harness_expect_good(&r);
}

static void expect_tur(int nexus, uint8_t key, uint16_t asc_ascq)
{
	struct harness_result r;

	harness_run(&h, nexus, tur, sizeof(tur), NULL, 0, 0, &r);
	if (key)
		harness_expect_sense(&r, key, asc_ascq);
	else
		harness_expect_good(&r);
}

/* SPC-4 5.15.2.3: transitioning (02/04/0A) for exactly the transition time, then the requested state. */
START_TEST(transition_lasts_its_time)
{
	struct harness_result r;

	setup_with(SCSI_TPGS_IMPLICIT | SCSI_TPGS_EXPLICIT, 2000);
	set_state(0, SCSI_ALUA_STANDBY);
	ck_assert_int_eq(state_of(0), SCSI_ALUA_TRANSITIONING);
	harness_run(&h, 0, read10, sizeof(read10), NULL, 0, 512, &r);
	harness_expect_sense(&r, 0x2, 0x040a);
	/* The other nexus: the unit attention of the start first, then the same NOT READY. */
	expect_tur(1, 0x6, 0x2a06);
	expect_tur(1, 0x2, 0x040a);
	virtual_clock_advance(&vc, 1999 * VC_MS);
	ck_assert_int_eq(state_of(0), SCSI_ALUA_TRANSITIONING);
	virtual_clock_advance(&vc, 1 * VC_MS);
	ck_assert_int_eq(state_of(0), SCSI_ALUA_STANDBY);
	expect_tur(0, 0x2, 0x040b); /* the requester gets no unit attention */
	expect_tur(1, 0x6, 0x2a06); /* the other nexus: one for the end */
	expect_tur(1, 0x2, 0x040b);
	harness_fini(&h);
}
END_TEST

/* A request during a transition: it ends in the newer state, when the first one would have. */
START_TEST(request_during_transition_moves_its_end)
{
	char err[128];

	setup_with(SCSI_TPGS_IMPLICIT | SCSI_TPGS_EXPLICIT, 1000);
	set_state(0, SCSI_ALUA_UNAVAILABLE);
	virtual_clock_advance(&vc, 500 * VC_MS);
	ck_assert_int_eq(scsi_lu_set_alua_state(h.lu, SCSI_ALUA_ACTIVE_NON_OPTIMIZED, err, sizeof(err)), 0);
	virtual_clock_advance(&vc, 499 * VC_MS);
	ck_assert_int_eq(state_of(0), SCSI_ALUA_TRANSITIONING);
	virtual_clock_advance(&vc, 1 * VC_MS);
	ck_assert_int_eq(state_of(0), SCSI_ALUA_ACTIVE_NON_OPTIMIZED);
	expect_tur(0, 0, 0);
	ck_assert_int_ne(scsi_lu_set_alua_state(h.lu, SCSI_ALUA_TRANSITIONING, err, sizeof(err)), 0);
	harness_fini(&h);
}
END_TEST

/* No change, no unit attention (SPC-4 5.15.2.3 establishes it when a state changes). */
START_TEST(same_state_establishes_nothing)
{
	setup_with(SCSI_TPGS_EXPLICIT, 0);
	set_state(0, SCSI_ALUA_ACTIVE_OPTIMIZED);
	expect_tur(1, 0, 0);
	set_state(0, SCSI_ALUA_STANDBY);
	expect_tur(1, 0x6, 0x2a06);
	expect_tur(1, 0x2, 0x040b);
	harness_fini(&h);
}
END_TEST

/* The requester's reference outlives its nexus; the LU goes in mid-transition without a leak or a stale pointer. */
START_TEST(destroy_in_mid_transition)
{
	setup_with(SCSI_TPGS_EXPLICIT, 5000);
	set_state(1, SCSI_ALUA_STANDBY);
	scsi_nexus_destroy(h.nexus[1]);
	h.nexus[1] = scsi_nexus_create(h.dev, &harness_transport, "iqn.2026-12.org.sbcemu:other", "", 1);
	ck_assert_ptr_nonnull(h.nexus[1]);
	virtual_clock_advance(&vc, 1000 * VC_MS);
	expect_tur(0, 0x6, 0x2a06);
	ck_assert_int_eq(state_of(0), SCSI_ALUA_TRANSITIONING);
	harness_fini(&h);
}
END_TEST

/* RSOC (SPC-4 6.35) lists what the LU serves: RTPG with any ALUA, STPG only with explicit. */
START_TEST(rsoc_follows_tpgs)
{
	static const uint8_t one_stpg[12] = { 0xa3, 0x0c, 0x02, 0xa4, 0x00, 0x0a, 0, 0, 0, 64, 0, 0 };
	static const uint8_t one_rtpg[12] = { 0xa3, 0x0c, 0x02, 0xa3, 0x00, 0x0a, 0, 0, 0, 64, 0, 0 };
	struct harness_result r;

	setup_with(SCSI_TPGS_IMPLICIT, 0);
	harness_run(&h, 0, one_rtpg, sizeof(one_rtpg), NULL, 0, 64, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in[1] & 0x07, 0x3); /* SUPPORT: supported as the standard says */
	harness_run(&h, 0, one_stpg, sizeof(one_stpg), NULL, 0, 64, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in[1] & 0x07, 0x1); /* not supported */
	harness_fini(&h);
	setup_with(SCSI_TPGS_IMPLICIT | SCSI_TPGS_EXPLICIT, 0);
	harness_run(&h, 0, one_stpg, sizeof(one_stpg), NULL, 0, 64, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in[1] & 0x07, 0x3);
	harness_fini(&h);
}
END_TEST

static Suite *alua_suite(void)
{
	Suite *s = suite_create("spc_alua");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, transition_lasts_its_time);
	tcase_add_test(tc, request_during_transition_moves_its_end);
	tcase_add_test(tc, same_state_establishes_nothing);
	tcase_add_test(tc, destroy_in_mid_transition);
	tcase_add_test(tc, rsoc_follows_tpgs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(alua_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
