/*
 * lu.c: what a restart of the daemon keeps.  A clean flush of a device whose
 * LU holds nothing only in memory leaves a mark in the LU's state directory;
 * the LU made again from that directory withdraws the POWER ON unit
 * attention (06/29/00, SAM-5 6.3.3) from a nexus that continues an earlier
 * one (scsi_nexus_continue, the TCMU front end's), since nothing changed.
 * What a power on does change keeps it: a registration without APTPL (SPC-4
 * 5.13), a MODE SELECT without SP (SPC-4 7.5), a crash (no clean flush).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "core/scsi_internal.h"

static struct harness h;
static struct harness_result r;
static bool flushed_ok;

static void setup(void)
{
	harness_init(&h, 2048, 512, NULL);
	harness_clear_ua(&h);
}

static void teardown(void)
{
	harness_fini(&h);
}

static void flushed(void *arg, int err)
{
	(void)arg;
	flushed_ok = err == 0;
}

/* The daemon stops (cleanly: the device flushed first) and starts again on the same state directory. */
static void restart(bool clean)
{
	struct scsi_lu_params p = h.lu->params;
	char err[256];

	p.state_dir = h.state_dir; /* the LU's own copy goes with it */
	flushed_ok = false;
	if (clean) {
		scsi_device_flush(h.dev, flushed, NULL);
		ck_assert(flushed_ok);
	}
	scsi_nexus_destroy(h.nexus[0]);
	scsi_nexus_destroy(h.nexus[1]);
	scsi_device_destroy(h.dev);
	h.dev = scsi_device_create("iqn.2026-12.org.sbcemu:harness", NULL, NULL);
	h.lu = scsi_lu_create(h.dev, &p, be_mem_open(2048 * 512), err, sizeof(err));
	ck_assert_msg(h.lu != NULL, "%s", err);
	h.nexus[0] = scsi_nexus_create(h.dev, &harness_transport, "iqn.2026-12.test:i0,i,0x000000000001",
				       "iqn.2026-12.org.sbcemu:harness,t,0x0001", 1);
	h.nexus[1] = scsi_nexus_create(h.dev, &harness_transport, "iqn.2026-12.test:i1,i,0x000000000002",
				       "iqn.2026-12.org.sbcemu:harness,t,0x0001", 1);
	scsi_nexus_continue(h.nexus[0]); /* nexus 1 is a new one: it gets the unit attention whatever happened */
}

static void tur(int nexus)
{
	static const uint8_t cdb[6] = { 0 };

	harness_run(&h, nexus, cdb, 6, NULL, 0, 0, &r);
}

/* Volatile state was lost: even a clean restart is a power on (SAM-5 6.3.3). */
static void expect_power_on_after_clean_restart(void)
{
	restart(true);
	tur(0);
	harness_expect_sense(&r, SENSE_KEY_UNIT_ATTENTION, 0x2900);
}

START_TEST(clean_restart_keeps_everything)
{
	restart(true);
	tur(0);
	harness_expect_good(&r);
	tur(1);
	harness_expect_sense(&r, SENSE_KEY_UNIT_ATTENTION, 0x2900);
	/* The mark goes with the start: a crash after it is reported again. */
	restart(false);
	tur(0);
	harness_expect_sense(&r, SENSE_KEY_UNIT_ATTENTION, 0x2900);
}
END_TEST

START_TEST(crash_reports_a_power_on)
{
	restart(false);
	tur(0);
	harness_expect_sense(&r, SENSE_KEY_UNIT_ATTENTION, 0x2900);
}
END_TEST

START_TEST(registration_without_aptpl_is_lost)
{
	uint8_t cdb[10] = { 0x5f, 0x00, 0, 0, 0, 0, 0, 0, 24, 0 }, param[24] = { 0 };

	param[15] = 0x42; /* SERVICE ACTION RESERVATION KEY */
	harness_run(&h, 0, cdb, 10, param, sizeof(param), 0, &r);
	harness_expect_good(&r);
	expect_power_on_after_clean_restart();
}
END_TEST

START_TEST(unsaved_mode_select_is_lost)
{
	/* MODE SELECT(10) PF = 1, SP = 0: the Control page with D_SENSE = 1, current only. */
	uint8_t cdb[10] = { 0x55, 0x10, 0, 0, 0, 0, 0, 0, 20, 0 }, param[20] = { 0 };
	uint8_t sense_cdb[10] = { 0x5a, 0x08, 0x0a, 0, 0, 0, 0, 0, 64, 0 };

	harness_run(&h, 0, sense_cdb, 10, NULL, 0, 0, &r);
	harness_expect_good(&r);
	memcpy(param + 8, r.data_in + 8, 12);
	param[8] &= 0x7f;
	param[10] |= 0x04;
	harness_run(&h, 0, cdb, 10, param, sizeof(param), 0, &r);
	harness_expect_good(&r);
	expect_power_on_after_clean_restart();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lu_restart");
	TCase *tc = tcase_create("restart");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, clean_restart_keeps_everything);
	tcase_add_test(tc, crash_reports_a_power_on);
	tcase_add_test(tc, registration_without_aptpl_is_lost);
	tcase_add_test(tc, unsaved_mode_select_is_lost);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
