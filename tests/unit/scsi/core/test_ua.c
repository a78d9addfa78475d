/*
 * ua.c: unit attention conditions (SAM-5 5.14, SPC-4 4.5.5), kept per
 * I_T nexus and LU; white-box through scsi_internal.h (scsi_ua_establish,
 * scsi_ua_establish_all, scsi_ua_take) and through commands.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "lun_runner.h"
#include "core/scsi_internal.h"

#define NUM_BLOCKS 2048
#define BS 512

static struct harness h;
static struct scsi_lu *lu1; /* a second LU at LUN 1 */

static uint32_t pending(const struct scsi_nexus *n, uint32_t lun);
static void clear_pending(struct scsi_nexus *n, uint32_t lun);

static const char *const initiator[2] = { "iqn.2026-12.test:i0,i,0x000000000001",
					  "iqn.2026-12.test:i1,i,0x000000000002" };
static const char target[] = "iqn.2026-12.org.sbcemu:harness,t,0x0001";

/* One LU, both nexuses fresh: their POWER ON unit attentions are still pending. */
static void setup(void)
{
	harness_init(&h, NUM_BLOCKS, BS, NULL);
	lu1 = NULL;
}

/*
 * Two LUs (LUN 0 and LUN 1), then both nexuses made anew, so that they are
 * new nexuses to a device with two LUs (no REPORTED LUNS DATA HAS CHANGED).
 */
static void setup_two_lus(void)
{
	struct scsi_lu_params p;
	char err[128];

	harness_init(&h, NUM_BLOCKS, BS, NULL);
	p = h.lu->params;
	p.lun = 1;
	lu1 = scsi_lu_create(h.dev, &p, be_mem_open((uint64_t)NUM_BLOCKS * BS), err, sizeof(err));
	ck_assert_ptr_nonnull(lu1);
	for (int i = 0; i < 2; i++) {
		scsi_nexus_destroy(h.nexus[i]);
		h.nexus[i] = scsi_nexus_create(h.dev, &harness_transport, initiator[i], target, 1);
		ck_assert_ptr_nonnull(h.nexus[i]);
	}
}

/* Both nexuses, both LUs: nothing pending. */
static void setup_two_lus_clear(void)
{
	setup_two_lus();
	for (int n = 0; n < 2; n++)
		for (uint32_t lun = 0; lun < 2; lun++)
			clear_pending(h.nexus[n], lun);
}

static void teardown(void)
{
	harness_fini(&h);
}

static void tur(int nexus, uint32_t lun, struct harness_result *r)
{
	static const uint8_t cdb[6] = { SCSI_OP_TEST_UNIT_READY };

	lun_runner_run(&h, nexus, lun, cdb, 6, 0, r);
}

static void expect_ua(const struct harness_result *r, uint16_t asc_ascq)
{
	harness_expect_sense(r, SENSE_KEY_UNIT_ATTENTION, asc_ascq);
}

/* TEST UNIT READY on (nexus, lun) gets exactly this unit attention. */
static void tur_expect_ua(int nexus, uint32_t lun, uint16_t asc_ascq)
{
	struct harness_result r;

	tur(nexus, lun, &r);
	expect_ua(&r, asc_ascq);
}

static void tur_expect_good(int nexus, uint32_t lun)
{
	struct harness_result r;

	tur(nexus, lun, &r);
	harness_expect_good(&r);
}

/* scsi_ua_take into s, expecting a unit attention with asc_ascq. */
static void take_expect(struct scsi_nexus *n, uint32_t lun, uint16_t asc_ascq)
{
	struct scsi_sense_info s;

	memset(&s, 0, sizeof(s));
	ck_assert(scsi_ua_take(n, lun, &s));
	ck_assert_uint_eq(s.key, SENSE_KEY_UNIT_ATTENTION);
	ck_assert_uint_eq(s.asc_ascq, asc_ascq);
}

static void take_expect_none(struct scsi_nexus *n, uint32_t lun)
{
	struct scsi_sense_info s;

	ck_assert(!scsi_ua_take(n, lun, &s));
}

/* What is pending for (n, lun): its I_T_L entry's conditions (or the POWER ON of one not made yet) and the nexus's. */
static uint32_t pending(const struct scsi_nexus *n, uint32_t lun)
{
	const struct scsi_itl *t = scsi_itl_find(n, lun);
	uint32_t bits = t ? t->ua_pending
			  : scsi_itl_untouched_power_on(n, scsi_device_lu(n->dev, lun)) ? 1u << SCSI_UA_POWER_ON_RESET : 0;

	return bits | (n->reported_luns_changed ? 1u << SCSI_UA_REPORTED_LUNS_DATA_CHANGED : 0);
}

/* Nothing pending for (n, lun), nor for the nexus. */
static void clear_pending(struct scsi_nexus *n, uint32_t lun)
{
	struct scsi_itl *t = scsi_itl_get(n, lun);

	ck_assert_ptr_nonnull(t);
	t->ua_pending = 0;
	n->reported_luns_changed = false;
}

/* ---- white box: ua.c's API ---- */

/*
 * SAM-5 5.14: a new I_T nexus has POWER ON, RESET, OR BUS DEVICE RESET
 * OCCURRED pending for every LU (itl.c: without an entry made ahead), and
 * nothing else; a LUN without an LU has none.
 */
START_TEST(new_nexus_power_on_every_lun)
{
	for (int n = 0; n < 2; n++) {
		ck_assert_uint_eq(pending(h.nexus[n], 0), 1u << SCSI_UA_POWER_ON_RESET);
		ck_assert_uint_eq(h.nexus[n]->itl_count, 0);
	}
	take_expect(h.nexus[0], 0, ASC_POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED);
	take_expect_none(h.nexus[0], 1);
}
END_TEST

/* SAM-5 5.14: a unit attention is reported once; then it is cleared. */
START_TEST(take_clears)
{
	take_expect(h.nexus[0], 0, ASC_POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED);
	ck_assert_uint_eq(pending(h.nexus[0], 0), 0);
	take_expect_none(h.nexus[0], 0);
	/* The other nexus still has its own. */
	ck_assert_uint_eq(pending(h.nexus[1], 0), 1u << SCSI_UA_POWER_ON_RESET);
}
END_TEST

/*
 * SAM-5 5.14 (ua.c): a power on condition implies the lesser reset-class
 * ones: a pending MODE PARAMETERS CHANGED, BUS DEVICE RESET and I_T NEXUS
 * LOSS are hidden by it (one report, then nothing).
 */
START_TEST(power_on_hides_mode_and_nexus_loss)
{
	struct scsi_nexus *n = h.nexus[0];

	scsi_ua_establish(n, 0, SCSI_UA_MODE_PARAMETERS_CHANGED);
	scsi_ua_establish(n, 0, SCSI_UA_I_T_NEXUS_LOSS);
	scsi_ua_establish(n, 0, SCSI_UA_BUS_DEVICE_RESET);
	take_expect(n, 0, ASC_POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED);
	take_expect_none(n, 0);
}
END_TEST

/* ua.c: a LOGICAL UNIT RESET (BUS DEVICE RESET FUNCTION OCCURRED, 29/03) also hides MODE PARAMETERS CHANGED. */
START_TEST(bus_device_reset_hides_mode)
{
	struct scsi_nexus *n = h.nexus[0];

	clear_pending(n, 0);
	scsi_ua_establish(n, 0, SCSI_UA_MODE_PARAMETERS_CHANGED);
	scsi_ua_establish(n, 0, SCSI_UA_BUS_DEVICE_RESET);
	take_expect(n, 0, ASC_BUS_DEVICE_RESET_FUNCTION_OCCURRED);
	take_expect_none(n, 0);
}
END_TEST

/*
 * SAM-5 5.14 (ua.c table): conditions a reset does not imply stay pending
 * behind it and are then reported one per take, in the table's order,
 * whatever the order they were established in.
 */
START_TEST(lesser_in_table_order)
{
	struct scsi_nexus *n = h.nexus[0];

	scsi_ua_establish(n, 0, SCSI_UA_COMMANDS_CLEARED_BY_ANOTHER_INITIATOR);
	scsi_ua_establish(n, 0, SCSI_UA_INQUIRY_DATA_CHANGED);
	scsi_ua_establish(n, 0, SCSI_UA_REPORTED_LUNS_DATA_CHANGED);
	scsi_ua_establish(n, 0, SCSI_UA_CAPACITY_DATA_HAS_CHANGED);
	scsi_ua_establish(n, 0, SCSI_UA_REGISTRATIONS_PREEMPTED);
	scsi_ua_establish(n, 0, SCSI_UA_RESERVATIONS_RELEASED);
	scsi_ua_establish(n, 0, SCSI_UA_RESERVATIONS_PREEMPTED);
	take_expect(n, 0, ASC_POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED);
	take_expect(n, 0, ASC_RESERVATIONS_PREEMPTED);
	take_expect(n, 0, ASC_RESERVATIONS_RELEASED);
	take_expect(n, 0, ASC_REGISTRATIONS_PREEMPTED);
	take_expect(n, 0, ASC_CAPACITY_DATA_HAS_CHANGED);
	take_expect(n, 0, ASC_REPORTED_LUNS_DATA_HAS_CHANGED);
	take_expect(n, 0, ASC_INQUIRY_DATA_HAS_CHANGED);
	take_expect(n, 0, ASC_COMMANDS_CLEARED_BY_ANOTHER_INITIATOR);
	take_expect_none(n, 0);
}
END_TEST

/* Establishing a condition twice keeps one: it is reported once. */
START_TEST(establish_twice_reported_once)
{
	struct scsi_nexus *n = h.nexus[0];

	clear_pending(n, 0);
	scsi_ua_establish(n, 0, SCSI_UA_CAPACITY_DATA_HAS_CHANGED);
	scsi_ua_establish(n, 0, SCSI_UA_CAPACITY_DATA_HAS_CHANGED);
	take_expect(n, 0, ASC_CAPACITY_DATA_HAS_CHANGED);
	take_expect_none(n, 0);
}
END_TEST

/*
 * scsi_ua_establish_all (SPC-4 4.5.5: e.g. MODE SELECT establishes MODE
 * PARAMETERS CHANGED for every other I_T nexus): every nexus but except
 * gets the condition, for this LU only; except NULL reaches all.
 */
START_TEST(establish_all_skips_except)
{
	struct scsi_nexus *n2 = scsi_nexus_create(h.dev, &harness_transport, "iqn.2026-12.test:i2,i,0x000000000003",
						  target, 1);

	ck_assert_ptr_nonnull(n2);
	for (uint32_t lun = 0; lun < 2; lun++) {
		clear_pending(h.nexus[0], lun);
		clear_pending(h.nexus[1], lun);
		clear_pending(n2, lun);
	}
	scsi_ua_establish_all(h.lu, SCSI_UA_CAPACITY_DATA_HAS_CHANGED, h.nexus[1]);
	ck_assert_uint_eq(pending(h.nexus[1], 0), 0);
	ck_assert_uint_eq(pending(h.nexus[0], 0), 1u << SCSI_UA_CAPACITY_DATA_HAS_CHANGED);
	ck_assert_uint_eq(pending(n2, 0), 1u << SCSI_UA_CAPACITY_DATA_HAS_CHANGED);
	/* Only h.lu's LUN. */
	ck_assert_uint_eq(pending(h.nexus[0], 1), 0);
	ck_assert_uint_eq(pending(n2, 1), 0);
	take_expect(n2, 0, ASC_CAPACITY_DATA_HAS_CHANGED);
	take_expect_none(n2, 0);
	take_expect_none(h.nexus[1], 0);

	scsi_ua_establish_all(h.lu, SCSI_UA_INQUIRY_DATA_CHANGED, NULL);
	take_expect(h.nexus[1], 0, ASC_INQUIRY_DATA_HAS_CHANGED);
	take_expect(n2, 0, ASC_INQUIRY_DATA_HAS_CHANGED);
	take_expect(h.nexus[0], 0, ASC_CAPACITY_DATA_HAS_CHANGED);
	take_expect(h.nexus[0], 0, ASC_INQUIRY_DATA_HAS_CHANGED);
	scsi_nexus_destroy(n2);
}
END_TEST

/*
 * itl.c: a unit attention a power on already implies makes no I_T_L entry
 * for an LU the nexus never touched; one it does not imply does.
 */
START_TEST(untouched_lu_costs_nothing)
{
	struct scsi_nexus *n = h.nexus[0];

	scsi_ua_establish_all(h.lu, SCSI_UA_MODE_PARAMETERS_CHANGED, NULL);
	ck_assert_uint_eq(n->itl_count, 0);
	scsi_ua_establish_all(h.lu, SCSI_UA_CAPACITY_DATA_HAS_CHANGED, NULL);
	ck_assert_uint_eq(n->itl_count, 1);
	take_expect(n, 0, ASC_POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED);
	take_expect(n, 0, ASC_CAPACITY_DATA_HAS_CHANGED);
	take_expect_none(n, 0);
}
END_TEST

/* ---- through commands ---- */

/* SAM-5 5.14: the first command of a new nexus to each LU gets 06/29/00, once per (nexus, LU). */
START_TEST(new_nexus_every_lu_reports_power_on)
{
	for (int n = 0; n < 2; n++)
		for (uint32_t lun = 0; lun < 2; lun++) {
			tur_expect_ua(n, lun, ASC_POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED);
			tur_expect_good(n, lun);
		}
}
END_TEST

/* SAM-5 5.14: a unit attention is reported once, then the command runs (TEST UNIT READY GOOD). */
START_TEST(reported_once_then_gone)
{
	tur_expect_ua(0, 0, ASC_POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED);
	tur_expect_good(0, 0);
	tur_expect_good(0, 0);
	/* nexus 1 had its own */
	tur_expect_ua(1, 0, ASC_POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED);
	tur_expect_good(1, 0);
}
END_TEST

/*
 * SAM-5 5.14: INQUIRY runs despite a pending unit attention and does not
 * clear it (OP_SKIP_UA); the next TEST UNIT READY still gets it.
 */
START_TEST(inquiry_not_stopped)
{
	static const uint8_t cdb[6] = { SCSI_OP_INQUIRY, 0, 0, 0, 96, 0 };
	struct harness_result r;

	harness_run(&h, 0, cdb, 6, NULL, 0, 0, &r);
	harness_expect_good(&r);
	ck_assert_uint_ge(r.data_in_len, 36);
	ck_assert_uint_eq(r.data_in[0] & 0x1f, 0x00); /* direct access block device */
	harness_run(&h, 0, cdb, 6, NULL, 0, 0, &r);
	harness_expect_good(&r);
	tur_expect_ua(0, 0, ASC_POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED);
	tur_expect_good(0, 0);
}
END_TEST

/* SAM-5 5.14, SPC-4 6.33: REPORT LUNS runs despite a pending unit attention and leaves it pending. */
START_TEST(report_luns_not_stopped)
{
	uint8_t cdb[12] = { SCSI_OP_REPORT_LUNS };
	struct harness_result r;

	put_be32(cdb + 6, 4096);
	harness_run(&h, 0, cdb, 12, NULL, 0, 0, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(get_be32(r.data_in), 8); /* one LU */
	tur_expect_ua(0, 0, ASC_POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED);
}
END_TEST

/*
 * SAM-5 5.14, SPC-4 6.39: REQUEST SENSE is not stopped by a unit attention:
 * it returns it as parameter data (GOOD status) and clears it.
 */
START_TEST(request_sense_reports_and_clears)
{
	static const uint8_t cdb[6] = { SCSI_OP_REQUEST_SENSE, 0, 0, 0, 252, 0 };
	struct harness_result r;

	harness_run(&h, 0, cdb, 6, NULL, 0, 0, &r);
	harness_expect_good(&r);
	ck_assert_uint_ge(r.data_in_len, 14);
	ck_assert_uint_eq(r.data_in[0] & 0x7f, 0x70);
	ck_assert_uint_eq(r.data_in[2] & 0x0f, SENSE_KEY_UNIT_ATTENTION);
	ck_assert_uint_eq(get_be16(r.data_in + 12), ASC_POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED);
	tur_expect_good(0, 0);
	/* and the next REQUEST SENSE has nothing to say */
	harness_run(&h, 0, cdb, 6, NULL, 0, 0, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in[2] & 0x0f, SENSE_KEY_NO_SENSE);
	ck_assert_uint_eq(get_be16(r.data_in + 12), ASC_NO_ADDITIONAL_SENSE_INFORMATION);
}
END_TEST

/* SAM-5 5.14: a medium access command is stopped by a pending unit attention and not executed (nothing written). */
START_TEST(write_stopped_writes_nothing)
{
	uint8_t cdb[16] = { SCSI_OP_WRITE_16 };
	uint8_t data[BS], back[BS];
	struct harness_result r;

	memset(data, 0x5a, sizeof(data));
	put_be64(cdb + 2, 7);
	put_be32(cdb + 10, 1);
	harness_run(&h, 0, cdb, 16, data, BS, 0, &r);
	expect_ua(&r, ASC_POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED);
	ck_assert_int_eq(h.lu->backend->ops->read(h.lu->backend, back, BS, 7 * BS), 0);
	for (unsigned i = 0; i < BS; i++)
		ck_assert_uint_eq(back[i], 0);
	/* the same command again runs */
	harness_run(&h, 0, cdb, 16, data, BS, 0, &r);
	harness_expect_good(&r);
	ck_assert_int_eq(h.lu->backend->ops->read(h.lu->backend, back, BS, 7 * BS), 0);
	ck_assert_mem_eq(back, data, BS);
}
END_TEST

/* SAM-5 5.14 (ua.c): through commands, a power on hides MODE PARAMETERS CHANGED and I_T NEXUS LOSS. */
START_TEST(cmd_power_on_precedence)
{
	scsi_ua_establish(h.nexus[0], 0, SCSI_UA_MODE_PARAMETERS_CHANGED);
	scsi_ua_establish(h.nexus[0], 0, SCSI_UA_I_T_NEXUS_LOSS);
	tur_expect_ua(0, 0, ASC_POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED);
	tur_expect_good(0, 0);
}
END_TEST

/* SAM-5 5.14 (ua.c table): several lesser conditions are reported one per command, in the table's order. */
START_TEST(cmd_lesser_one_per_command)
{
	tur_expect_ua(0, 0, ASC_POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED);
	scsi_ua_establish(h.nexus[0], 0, SCSI_UA_COMMANDS_CLEARED_BY_ANOTHER_INITIATOR);
	scsi_ua_establish(h.nexus[0], 0, SCSI_UA_INQUIRY_DATA_CHANGED);
	scsi_ua_establish(h.nexus[0], 0, SCSI_UA_CAPACITY_DATA_HAS_CHANGED);
	scsi_ua_establish(h.nexus[0], 0, SCSI_UA_MODE_PARAMETERS_CHANGED);
	tur_expect_ua(0, 0, ASC_MODE_PARAMETERS_CHANGED);
	tur_expect_ua(0, 0, ASC_CAPACITY_DATA_HAS_CHANGED);
	tur_expect_ua(0, 0, ASC_INQUIRY_DATA_HAS_CHANGED);
	tur_expect_ua(0, 0, ASC_COMMANDS_CLEARED_BY_ANOTHER_INITIATOR);
	tur_expect_good(0, 0);
}
END_TEST

/* scsi_ua_establish_all with except: the other nexus reports it, the excepted one does not. */
START_TEST(cmd_establish_all_except)
{
	tur_expect_ua(0, 0, ASC_POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED);
	tur_expect_ua(1, 0, ASC_POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED);
	scsi_ua_establish_all(h.lu, SCSI_UA_MODE_PARAMETERS_CHANGED, h.nexus[0]);
	tur_expect_good(0, 0);
	tur_expect_ua(1, 0, ASC_MODE_PARAMETERS_CHANGED);
	tur_expect_good(1, 0);
}
END_TEST

/*
 * SPC-4 6.12, 7.5.1: MODE SELECT that changes a parameter establishes MODE
 * PARAMETERS CHANGED for the other I_T nexuses (establish_all with except =
 * the sender), not for the sender.
 */
START_TEST(cmd_mode_select_other_nexus)
{
	/* MODE SENSE(10) DBD = 1 of the Caching page, then MODE SELECT(10) PF = 1 with WCE = 0. */
	static const uint8_t sense10[10] = { SCSI_OP_MODE_SENSE_10, 0x08, 0x08, 0, 0, 0, 0, 0x10, 0x00, 0 };
	uint8_t select10[10] = { SCSI_OP_MODE_SELECT_10, 0x10 };
	uint8_t list[8 + 20] = { 0 };
	struct harness_result r;

	harness_clear_ua(&h);
	harness_run(&h, 0, sense10, 10, NULL, 0, 0, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in[8] & 0x3f, 0x08);
	ck_assert_uint_eq(r.data_in[8 + 2] & 0x04, 0x04); /* WCE = 1 to start with */
	memcpy(list + 8, r.data_in + 8, 20);
	list[8] &= 0x7f;                 /* PS */
	list[8 + 2] &= (uint8_t)~0x04;   /* WCE = 0 */
	put_be16(select10 + 7, sizeof(list));
	harness_run(&h, 0, select10, 10, list, sizeof(list), 0, &r);
	harness_expect_good(&r);
	ck_assert(!h.lu->mode_current.wce);
	tur_expect_good(0, 0);
	tur_expect_ua(1, 0, ASC_MODE_PARAMETERS_CHANGED);
	tur_expect_good(1, 0);
}
END_TEST

static enum scsi_tmf_response tmf_response;
static bool tmf_done_called;

static void tmf_done(void *arg, enum scsi_tmf_response response)
{
	(void)arg;
	tmf_response = response;
	tmf_done_called = true;
}

/*
 * SAM-5 7.7: LOGICAL UNIT RESET establishes BUS DEVICE RESET FUNCTION
 * OCCURRED (06/29/03) for every I_T nexus, which hides a pending MODE
 * PARAMETERS CHANGED (the reset restored the mode parameters).
 */
START_TEST(cmd_lu_reset)
{
	harness_clear_ua(&h);
	scsi_ua_establish(h.nexus[1], 0, SCSI_UA_MODE_PARAMETERS_CHANGED);
	tmf_done_called = false;
	scsi_tmf(h.nexus[0], scsi_lun_encode(0), SCSI_TMF_LOGICAL_UNIT_RESET, NULL, tmf_done, NULL);
	ck_assert(tmf_done_called);
	ck_assert_int_eq(tmf_response, SCSI_TMF_FUNCTION_COMPLETE);
	tur_expect_ua(0, 0, ASC_BUS_DEVICE_RESET_FUNCTION_OCCURRED);
	tur_expect_good(0, 0);
	tur_expect_ua(1, 0, ASC_BUS_DEVICE_RESET_FUNCTION_OCCURRED);
	tur_expect_good(1, 0);
}
END_TEST

/* SAM-5 5.14: a unit attention belongs to one (I_T nexus, LU): other LUs and other nexuses do not see it. */
START_TEST(cmd_per_nexus_and_lu)
{
	scsi_ua_establish(h.nexus[0], 1, SCSI_UA_CAPACITY_DATA_HAS_CHANGED);
	tur_expect_good(0, 0);
	tur_expect_good(1, 0);
	tur_expect_good(1, 1);
	tur_expect_ua(0, 1, ASC_CAPACITY_DATA_HAS_CHANGED);
	tur_expect_good(0, 1);
	/* REQUEST SENSE to LUN 0 does not take LUN 1's */
	scsi_ua_establish(h.nexus[1], 1, SCSI_UA_INQUIRY_DATA_CHANGED);
	{
		static const uint8_t cdb[6] = { SCSI_OP_REQUEST_SENSE, 0, 0, 0, 252, 0 };
		struct harness_result r;

		lun_runner_run(&h, 1, 0, cdb, 6, 0, &r);
		harness_expect_good(&r);
		ck_assert_uint_eq(r.data_in[2] & 0x0f, SENSE_KEY_NO_SENSE);
	}
	tur_expect_ua(1, 1, ASC_INQUIRY_DATA_HAS_CHANGED);
}
END_TEST

/*
 * SPC-4 4.5.5 / lu.c: a new LU establishes REPORTED LUNS DATA HAS CHANGED
 * (3F/0E) on the existing nexuses; a nexus made afterwards has only the
 * POWER ON condition.
 */
START_TEST(cmd_new_lu_reported_luns_changed)
{
	struct scsi_lu_params p = h.lu->params;
	struct scsi_nexus *n2;
	char err[128];

	for (int n = 0; n < 2; n++)
		for (uint32_t lun = 0; lun < 2; lun++)
			clear_pending(h.nexus[n], lun);
	p.lun = 2;
	ck_assert_ptr_nonnull(scsi_lu_create(h.dev, &p, be_mem_open((uint64_t)NUM_BLOCKS * BS), err, sizeof(err)));
	tur_expect_ua(0, 0, ASC_REPORTED_LUNS_DATA_HAS_CHANGED);
	tur_expect_good(0, 0);
	/* SPC-4 7.8.7 LUICLR = 1: reported once over nexus 0, it is gone from its other LUs too */
	tur_expect_good(0, 1);
	tur_expect_ua(1, 1, ASC_REPORTED_LUNS_DATA_HAS_CHANGED);
	tur_expect_good(1, 1);
	tur_expect_good(1, 0);
	/* a nexus made after the change: POWER ON only, on the new LU too */
	n2 = scsi_nexus_create(h.dev, &harness_transport, "iqn.2026-12.test:i2,i,0x000000000003", target, 1);
	ck_assert_ptr_nonnull(n2);
	for (uint32_t lun = 0; lun < 3; lun++)
		ck_assert_uint_eq(pending(n2, lun), 1u << SCSI_UA_POWER_ON_RESET);
	scsi_nexus_destroy(n2);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ua");
	TCase *wb = tcase_create("white_box");
	TCase *cmd = tcase_create("commands");
	TCase *two = tcase_create("two_lus");
	TCase *two_clear = tcase_create("two_lus_clear");

	tcase_add_checked_fixture(wb, setup, teardown);
	tcase_add_test(wb, new_nexus_power_on_every_lun);
	tcase_add_test(wb, take_clears);
	tcase_add_test(wb, power_on_hides_mode_and_nexus_loss);
	tcase_add_test(wb, bus_device_reset_hides_mode);
	tcase_add_test(wb, lesser_in_table_order);
	tcase_add_test(wb, establish_twice_reported_once);
	tcase_add_test(wb, untouched_lu_costs_nothing);
	suite_add_tcase(s, wb);

	tcase_add_checked_fixture(cmd, setup, teardown);
	tcase_add_test(cmd, reported_once_then_gone);
	tcase_add_test(cmd, inquiry_not_stopped);
	tcase_add_test(cmd, report_luns_not_stopped);
	tcase_add_test(cmd, request_sense_reports_and_clears);
	tcase_add_test(cmd, write_stopped_writes_nothing);
	tcase_add_test(cmd, cmd_power_on_precedence);
	tcase_add_test(cmd, cmd_lesser_one_per_command);
	tcase_add_test(cmd, cmd_establish_all_except);
	tcase_add_test(cmd, cmd_mode_select_other_nexus);
	tcase_add_test(cmd, cmd_lu_reset);
	suite_add_tcase(s, cmd);

	tcase_add_checked_fixture(two, setup_two_lus, teardown);
	tcase_add_test(two, new_nexus_every_lu_reports_power_on);
	tcase_add_test(two, establish_all_skips_except);
	tcase_add_test(two, cmd_new_lu_reported_luns_changed);
	suite_add_tcase(s, two);

	tcase_add_checked_fixture(two_clear, setup_two_lus_clear, teardown);
	tcase_add_test(two_clear, cmd_per_nexus_and_lu);
	suite_add_tcase(s, two_clear);
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
