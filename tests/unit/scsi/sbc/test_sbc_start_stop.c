/* sbc_start_stop.c: START STOP UNIT (SBC-4 5.25). */
#include <check.h>

#include "harness.h"
#include "core/scsi_internal.h"

static struct harness h;
static struct harness_result r;
static struct backend_ops spy_ops;
static const struct backend_ops *real_ops;
static unsigned flushes;

static int spy_flush(struct backend *be)
{
	flushes++;
	return real_ops->flush(be);
}

static void install_flush_spy(void)
{
	real_ops = h.lu->backend->ops;
	spy_ops = *real_ops;
	spy_ops.flush = spy_flush;
	h.lu->backend->ops = &spy_ops;
	flushes = 0;
}

static void setup(void)
{
	harness_init(&h, 2048, 512, NULL);
	harness_clear_ua(&h);
	install_flush_spy();
}

static void teardown(void)
{
	h.lu->backend->ops = real_ops;
	harness_fini(&h);
}

static void start_stop(int nexus, uint8_t byte1, uint8_t byte3, uint8_t byte4)
{
	uint8_t cdb[6] = { 0x1b, byte1, 0, byte3, byte4, 0 };
	harness_run(&h, nexus, cdb, 6, NULL, 0, 0, &r);
}

static void tur(void)
{
	uint8_t cdb[6] = { 0 };
	harness_run(&h, 0, cdb, 6, NULL, 0, 0, &r);
}

/* START = 0: stopped (TUR 02/04/02), the cache flushed; START = 1: ready again. */
START_TEST(stop_then_start)
{
	start_stop(0, 0, 0, 0x00);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(h.lu->stopped);
	ck_assert_uint_eq(flushes, 1);
	tur();
	ck_assert_uint_eq(harness_sense_key(&r), 0x2);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x0402);
	start_stop(0, 0x01, 0, 0x01); /* IMMED = 1, START = 1 */
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	tur();
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
}
END_TEST

/* NO_FLUSH = 1: stopped without writing the cache. */
START_TEST(stop_no_flush)
{
	start_stop(0, 0, 0, 0x04);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(h.lu->stopped);
	ck_assert_uint_eq(flushes, 0);
}
END_TEST

/* LOEJ on a medium that cannot be removed -> 05/24/00 on byte 4 bit 1. */
START_TEST(loej_not_removable)
{
	start_stop(0, 0, 0, 0x02);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[15], 0xc8 | 1);
	ck_assert_uint_eq(r.sense[17], 4);
	ck_assert(!h.lu->stopped);
}
END_TEST

/* Removable medium: with removal prevented, LOEJ -> 05/53/02 (both unload and load); allowed -> GOOD. */
START_TEST(loej_removal_prevented)
{
	struct scsi_lu_params p = h.lu->params;
	uint8_t prevent[6] = { 0x1e, 0, 0, 0, 1, 0 };

	h.lu->backend->ops = real_ops;
	harness_fini(&h);
	p.removable = true;
	harness_init(&h, 2048, 512, &p);
	harness_clear_ua(&h);
	install_flush_spy();
	harness_run(&h, 1, prevent, 6, NULL, 0, 0, &r);
	start_stop(0, 0, 0, 0x02);
	ck_assert_uint_eq(harness_sense_key(&r), 0x5);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x5302);
	start_stop(0, 0, 0, 0x03);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x5302);
	prevent[4] = 0;
	harness_run(&h, 1, prevent, 6, NULL, 0, 0, &r);
	start_stop(0, 0, 0, 0x02);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(h.lu->stopped);
	start_stop(0, 0, 0, 0x03);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(!h.lu->stopped);
}
END_TEST

/* Removable medium: unloaded (LOEJ 1, START 0) -> 02/3A/00; loaded again -> GOOD here, 06/28/00 on the other nexus. */
START_TEST(eject_and_load)
{
	struct scsi_lu_params p = h.lu->params;
	uint8_t tur_cdb[6] = { 0 };

	h.lu->backend->ops = real_ops;
	harness_fini(&h);
	p.removable = true;
	harness_init(&h, 2048, 512, &p);
	harness_clear_ua(&h);
	install_flush_spy();
	start_stop(0, 0, 0, 0x02);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	tur();
	harness_expect_sense(&r, SENSE_KEY_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
	start_stop(0, 0, 0, 0x03);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	tur();
	harness_expect_good(&r);
	harness_run(&h, 1, tur_cdb, 6, NULL, 0, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_UNIT_ATTENTION, ASC_NOT_READY_TO_READY_CHANGE);
}
END_TEST

/* SBC-4 table 93: POWER CONDITION ACTIVE / IDLE / STANDBY ignore START and leave the stopped condition. */
START_TEST(power_conditions)
{
	h.lu->stopped = true;
	start_stop(0, 0, 0, 0x10); /* ACTIVE, START = 0 ignored */
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(!h.lu->stopped);
	h.lu->stopped = true;
	start_stop(0, 0, 0x02, 0x20); /* IDLE, modifier 2 (idle_c) */
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(!h.lu->stopped);
	start_stop(0, 0, 0x01, 0x30); /* STANDBY, modifier 1 (standby_y) */
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	h.lu->stopped = true;
	start_stop(0, 0, 0, 0x71); /* LU_CONTROL: START ignored, state kept */
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(h.lu->stopped);
	start_stop(0, 0, 0, 0xa0); /* FORCE_IDLE_0 */
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(flushes, 0);
}
END_TEST

/* Obsolete / reserved POWER CONDITION -> 05/24/00 byte 4 bit 7; a bad modifier -> byte 3. */
START_TEST(power_condition_invalid)
{
	start_stop(0, 0, 0, 0x50);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[15], 0xc8 | 7);
	ck_assert_uint_eq(r.sense[17], 4);
	start_stop(0, 0, 0, 0xc0);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	start_stop(0, 0, 0x03, 0x20); /* IDLE modifier 3 */
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[17], 3);
	start_stop(0, 0, 0x01, 0x10); /* ACTIVE takes no modifier */
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sbc_start_stop");
	TCase *tc = tcase_create("start_stop");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, stop_then_start);
	tcase_add_test(tc, stop_no_flush);
	tcase_add_test(tc, loej_not_removable);
	tcase_add_test(tc, loej_removal_prevented);
	tcase_add_test(tc, eject_and_load);
	tcase_add_test(tc, power_conditions);
	tcase_add_test(tc, power_condition_invalid);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
