/*
 * Priority and time on the one scheduler, on a virtual clock: the medium's
 * queue of a latency model (media/media_queue.c), command priority (SAM-5
 * 8.7; SET PRIORITY / REPORT PRIORITY, SPC-4 6.44 / 6.28), task attributes
 * (SAM-5 8.6), aging, command duration limits and every policy (SPC-6:
 * the T2A page, sched/duration_limits.c), their statistics, and the
 * workers' queue (sched/dispatch.c).  Each test names the rule it checks.
 *
 * The LU has a fixed latency model with one server: every read and write
 * keeps the medium 10 ms, so the completion times say the order.
 */
#include <errno.h>
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "manual_executor.h"
#include "virtual_clock.h"
#include "core/scsi_internal.h"
#include "scsi_wire.h"
#include "backend.h"
#include "spc/spc.h"

#define BS 512
#define NUM_BLOCKS 65536
#define T0 (1000 * VC_MS)
#define SERVICE_MS 10

static struct harness h;
static struct virtual_clock vc;

static void setup_with(uint32_t aging_ms, enum scsi_cdl_pages pages)
{
	struct scsi_lu_params p = { .kind = SCSI_LU_CONVENTIONAL, .cdl_pages = pages };

	snprintf(p.vendor, sizeof(p.vendor), "SBCEMU");
	snprintf(p.product, sizeof(p.product), "PRIORITY");
	p.latency = (struct scsi_latency_params){ .model = SCSI_LATENCY_FIXED, .servers = 1,
						  .read_us = SERVICE_MS * 1000, .write_us = SERVICE_MS * 1000,
						  .aging_ms = aging_ms };
	harness_init(&h, NUM_BLOCKS, BS, &p);
	virtual_clock_install(&vc, h.dev, T0);
	harness_clear_ua(&h);
}

static void setup(void)
{
	setup_with(10000, SCSI_CDL_T2);
}

static void teardown(void)
{
	virtual_clock_advance(&vc, 100000 * VC_MS);
	harness_fini(&h);
}

static void at_ms(uint64_t ms)
{
	uint64_t target = T0 + ms * VC_MS;

	ck_assert_uint_ge(target, vc.now_ns);
	virtual_clock_advance(&vc, target - vc.now_ns);
}

/* READ(16) of one block at lba with DURATION LIMIT DESCRIPTOR dld (SBC-4: DLD2 byte 1 bit 0, DLD1:0 byte 14 bits 7:6). */
static void read16(int nexus, uint64_t lba, uint8_t dld, enum scsi_task_attr attr, struct harness_result *r)
{
	struct harness_opts o = { .nexus = nexus, .attr = attr };
	uint8_t cdb[16] = { 0x88 };

	cdb[1] = (dld >> 2) & 0x01;
	put_be64(cdb + 2, lba);
	put_be32(cdb + 10, 1);
	cdb[14] = (uint8_t)((dld & 0x03) << 6);
	memset(r, 0, sizeof(*r));
	harness_submit(&h, &o, cdb, 16, NULL, 0, r);
}

static void set_priority(int nexus, uint8_t priority)
{
	static struct harness_result r;
	uint8_t cdb[12] = { 0xa4, 0x0e }, list[8] = { priority };

	put_be32(cdb + 6, sizeof(list));
	harness_run(&h, nexus, cdb, 12, list, sizeof(list), sizeof(list), &r);
	harness_expect_good(&r);
}

/* SENSE KEY SPECIFIC of a parameter list error: SKSV, C/D = 0, FIELD POINTER = byte (fixed format). */
static void expect_list_pointer(const struct harness_result *r, uint16_t byte)
{
	harness_expect_sense(r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	ck_assert_uint_eq(r->sense[15], 0x80);
	ck_assert_uint_eq(get_be16(r->sense + 16), byte);
}

/* One T2A descriptor (SPC-6; cdl-tools cdl_scsi_write_page): units, times and policies. */
struct t2 {
	uint8_t units;
	uint16_t inactive, active, guideline;
	uint8_t inactive_policy, active_policy, guideline_policy;
};

/* MODE SENSE(10) of a Command Duration Limit T2 page (subpage 07h T2A, 08h T2B) with page control pc. */
static void mode_sense_t2(uint8_t subpage, uint8_t pc, struct harness_result *r)
{
	uint8_t cdb[10] = { 0x5a, 0x08, (uint8_t)(pc << 6 | 0x0a), subpage, 0, 0, 0, 0x01, 0x00, 0 };

	harness_run(&h, 0, cdb, 10, NULL, 0, 0, r);
}

static void mode_sense_t2a(uint8_t pc, struct harness_result *r)
{
	mode_sense_t2(0x07, pc, r);
}

/* MODE SELECT(10) PF = 1 (SP = save) of a T2 page with descriptor k set; returns the command's result. */
static void select_t2_page(uint8_t subpage, unsigned k, const struct t2 *d, bool save, struct harness_result *r)
{
	static struct harness_result sense;
	static uint8_t list[8 + 232];
	uint8_t cdb[10] = { 0x55, (uint8_t)(0x10 | (save ? 0x01 : 0)), 0, 0, 0, 0, 0, 0x00, 240, 0 };
	uint8_t *p = list + 8, *x;

	mode_sense_t2(subpage, 0, &sense);
	harness_expect_good(&sense);
	ck_assert_uint_eq(sense.data_in_len, 240);
	memcpy(list, sense.data_in, sizeof(list));
	list[0] = list[1] = 0;
	list[3] = 0;
	p[0] &= 0x7f; /* PS is reserved in MODE SELECT */
	x = p + 8 + 32 * (k - 1);
	x[0] = d->units;
	put_be16(x + 2, d->inactive);
	put_be16(x + 4, d->active);
	x[6] = (uint8_t)(d->inactive_policy << 4 | d->active_policy);
	put_be16(x + 10, d->guideline);
	x[14] = d->guideline_policy;
	harness_run(&h, 0, cdb, 10, list, sizeof(list), sizeof(list), r);
}

static void select_t2a(unsigned k, const struct t2 *d, bool save, struct harness_result *r)
{
	select_t2_page(0x07, k, d, save, r);
}

static void t2b(unsigned k, const struct t2 *d)
{
	static struct harness_result r;

	select_t2_page(0x08, k, d, false, &r);
	harness_expect_good(&r);
	harness_clear_ua(&h);
}

static void t2a(unsigned k, const struct t2 *d)
{
	static struct harness_result r;

	select_t2a(k, d, false, &r);
	harness_expect_good(&r);
	harness_clear_ua(&h); /* MODE PARAMETERS CHANGED on the other nexus */
}

/* The medium serves one command at a time, each for its model time. */
START_TEST(one_server_in_arrival_order)
{
	static struct harness_result a, b, c;

	read16(0, 0, 0, SCSI_TASK_SIMPLE, &a);
	read16(0, 8, 0, SCSI_TASK_SIMPLE, &b);
	read16(0, 16, 0, SCSI_TASK_SIMPLE, &c);
	at_ms(9);
	ck_assert(!a.completed);
	at_ms(10);
	ck_assert(a.completed && !b.completed);
	at_ms(20);
	ck_assert(b.completed && !c.completed);
	at_ms(30);
	ck_assert(c.completed);
	harness_expect_good(&c);
}
END_TEST

/* Statistics: queued time until the medium took a command, active time on it; percentiles within 12.5 %. */
START_TEST(stats_queued_and_active)
{
	static struct harness_result a, b, c;
	struct scsi_lu_stats st;

	scsi_lu_reset_stats(h.lu);
	read16(0, 0, 0, SCSI_TASK_SIMPLE, &a);
	read16(0, 8, 0, SCSI_TASK_SIMPLE, &b);
	read16(0, 16, 2, SCSI_TASK_SIMPLE, &c);
	at_ms(30);
	scsi_lu_get_stats(h.lu, &st);
	ck_assert_uint_eq(st.queued.count, 3);
	ck_assert_uint_eq(st.queued.max_ns, 20 * VC_MS);
	ck_assert_uint_ge(st.queued.p50_ns, 10 * VC_MS);
	ck_assert_uint_le(st.queued.p50_ns, 10 * VC_MS + 10 * VC_MS / 8);
	ck_assert_uint_eq(st.active.max_ns, 10 * VC_MS);
	ck_assert_uint_eq(st.active.mean_ns, 10 * VC_MS);
	ck_assert_uint_eq(st.total.max_ns, 30 * VC_MS);
	/* The DLD 2 read, by its T2A descriptor. */
	ck_assert(st.cdl);
	ck_assert_uint_eq(st.descriptor[0][1].commands, 1);
	ck_assert_uint_eq(st.descriptor[0][1].queued.max_ns, 20 * VC_MS);
	scsi_lu_reset_stats(h.lu);
	scsi_lu_get_stats(h.lu, &st);
	ck_assert_uint_eq(st.queued.count, 0);
	ck_assert_uint_eq(st.descriptor[0][1].commands, 0);
}
END_TEST

/* SAM-5 8.7 / SPC-4 6.44: the I_T_L nexus SET PRIORITY raised to 1 goes before commands without priority. */
START_TEST(set_priority_goes_first)
{
	static struct harness_result a, b, c, hi, rep;
	uint8_t cdb[12] = { 0xa3, 0x0e, 0x00, 0, 0, 0, 0, 0, 0, 64, 0, 0 };

	read16(0, 0, 0, SCSI_TASK_SIMPLE, &a); /* on the medium 0-10 */
	read16(0, 8, 0, SCSI_TASK_SIMPLE, &b);
	read16(0, 16, 0, SCSI_TASK_SIMPLE, &c);
	set_priority(1, 1);
	read16(1, 24, 0, SCSI_TASK_SIMPLE, &hi);
	at_ms(10);
	ck_assert(a.completed && !hi.completed);
	at_ms(20);
	ck_assert(hi.completed && !b.completed);
	at_ms(30);
	ck_assert(b.completed && !c.completed);
	at_ms(40);
	ck_assert(c.completed);
	/* REPORT PRIORITY, PRIORITY REPORTED 00b: this I_T_L nexus's CURRENT PRIORITY. */
	harness_run(&h, 1, cdb, 12, NULL, 0, 0, &rep);
	harness_expect_good(&rep);
	ck_assert_uint_eq(get_be32(rep.data_in), 8 + 24);
	ck_assert_uint_eq(rep.data_in[4] & 0x0f, 1);
	ck_assert_uint_eq(get_be16(rep.data_in + 6), 1); /* RELATIVE TARGET PORT IDENTIFIER */
	ck_assert_uint_eq(get_be16(rep.data_in + 10), 24); /* ADDITIONAL DESCRIPTOR LENGTH */
	/* Nexus 0 never set one: INITIAL COMMAND PRIORITY (0). */
	harness_run(&h, 0, cdb, 12, NULL, 0, 0, &rep);
	ck_assert_uint_eq(rep.data_in[4] & 0x0f, 0);
	/* PRIORITY REPORTED 01b: the I_T_L nexuses SET PRIORITY set: nexus 1 only. */
	cdb[2] = 0x40;
	harness_run(&h, 0, cdb, 12, NULL, 0, 0, &rep);
	ck_assert_uint_eq(get_be32(rep.data_in), 8 + 24);
	/* 10b is reserved: 05/24/00 on byte 2 bit 7. */
	cdb[2] = 0x80;
	harness_run(&h, 0, cdb, 12, NULL, 0, 0, &rep);
	harness_expect_sense(&rep, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&rep, 2, 7);
}
END_TEST

/* SPC-4 6.44: SET PRIORITY of another I_T_L nexus (01b, by TransportID) gives it PRIORITY CHANGED (06/2A/08). */
START_TEST(set_priority_of_another_nexus)
{
	static struct harness_result r;
	const char *name = "iqn.2026-12.test:i1,i,0x000000000002";
	uint8_t cdb[12] = { 0xa4, 0x0e, 0x40 }, list[8 + 4 + 40] = { 3 };
	uint8_t tur[6] = { 0 };

	put_be16(list + 2, 1);          /* RELATIVE TARGET PORT IDENTIFIER */
	put_be16(list + 6, 4 + 40);     /* ADDITIONAL DESCRIPTOR LENGTH */
	list[8] = 0x45;                 /* iSCSI, FORMAT CODE 01b */
	put_be16(list + 10, 40);
	memcpy(list + 12, name, strlen(name));
	put_be32(cdb + 6, sizeof(list));
	harness_run(&h, 0, cdb, 12, list, sizeof(list), sizeof(list), &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(scsi_itl_find(h.nexus[1], 0)->priority, 3);
	harness_run(&h, 1, tur, 6, NULL, 0, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_UNIT_ATTENTION, ASC_PRIORITY_CHANGED);
	harness_run(&h, 0, tur, 6, NULL, 0, 0, &r);
	harness_expect_good(&r);
	/* A nexus that does not exist: 05/26/00. */
	put_be16(list + 2, 7);
	harness_run(&h, 0, cdb, 12, list, sizeof(list), sizeof(list), &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	/* A list shorter than a descriptor: 05/1A/00. */
	put_be32(cdb + 6, 4);
	harness_run(&h, 0, cdb, 12, list, 4, 4, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
	/* Longer than one descriptor can be: 05/1A/00 before any buffer is set aside for it. */
	put_be32(cdb + 6, 0xffffffffu);
	harness_run(&h, 0, cdb, 12, NULL, 0, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
}
END_TEST

/* SAM-5 8.6: a HEAD OF QUEUE command goes before every enabled command that has not started. */
START_TEST(head_of_queue_goes_first)
{
	static struct harness_result a, b, hoq;

	read16(0, 0, 0, SCSI_TASK_SIMPLE, &a);
	read16(0, 8, 0, SCSI_TASK_SIMPLE, &b);
	read16(1, 16, 0, SCSI_TASK_HEAD_OF_QUEUE, &hoq);
	at_ms(20);
	ck_assert(a.completed && hoq.completed && !b.completed);
}
END_TEST

/* Aging: a command without priority waits at most aging_ms before it goes first (no starvation). */
START_TEST(aging_bounds_the_wait)
{
	static struct harness_result a, low, hi[4];

	teardown();
	setup_with(25, SCSI_CDL_T2);
	read16(0, 0, 0, SCSI_TASK_SIMPLE, &a); /* medium 0-10 */
	read16(0, 8, 0, SCSI_TASK_SIMPLE, &low);
	set_priority(1, 1);
	for (int i = 0; i < 4; i++)
		read16(1, 16 + 8 * (uint64_t)i, 0, SCSI_TASK_SIMPLE, &hi[i]);
	at_ms(30);
	ck_assert(hi[0].completed && hi[1].completed && !low.completed); /* 10-20, 20-30 */
	at_ms(40);
	ck_assert(low.completed && !hi[2].completed); /* it waited 30 ms >= 25 at the pick at 30 */
	at_ms(60);
	ck_assert(hi[3].completed);
}
END_TEST

/* SPC-6: a command with a duration limit goes before the commands of its rank without one (earliest deadline). */
START_TEST(deadline_goes_before_no_deadline)
{
	static struct harness_result a, plain, timed;

	t2a(1, &(struct t2){ .units = 0x0a, .inactive = 5, .inactive_policy = 0x0 }); /* 50 ms, complete-earliest */
	read16(0, 0, 0, SCSI_TASK_SIMPLE, &a);
	read16(0, 8, 0, SCSI_TASK_SIMPLE, &plain);
	read16(0, 16, 1, SCSI_TASK_SIMPLE, &timed);
	at_ms(20);
	ck_assert(timed.completed && !plain.completed);
	harness_expect_good(&timed);
	at_ms(30);
	ck_assert(plain.completed);
	ck_assert_uint_eq(h.lu->cdl_stats[0][0].commands, 1);
	ck_assert_uint_eq(h.lu->cdl_stats[0][0].inactive_miss, 0);
}
END_TEST

/* SPC-6 max inactive time, policy Fh abort: CHECK CONDITION, ABORTED COMMAND, 2E/01 when it passes, not before. */
START_TEST(inactive_abort)
{
	static struct harness_result a, c, next;

	t2a(1, &(struct t2){ .units = 0x08, .inactive = 5000, .inactive_policy = 0xf }); /* 5 ms */
	read16(0, 0, 0, SCSI_TASK_SIMPLE, &a);
	read16(0, 8, 1, SCSI_TASK_SIMPLE, &c);
	read16(0, 16, 0, SCSI_TASK_SIMPLE, &next);
	at_ms(4);
	ck_assert(!c.completed);
	at_ms(5);
	ck_assert(c.completed);
	harness_expect_sense(&c, SENSE_KEY_ABORTED_COMMAND, ASC_COMMAND_TIMEOUT_BEFORE_PROCESSING);
	ck_assert_uint_eq(c.data_in_len, 0);
	at_ms(20);
	ck_assert(a.completed && next.completed); /* the aborted one never took the medium */
	ck_assert_uint_eq(h.lu->cdl_stats[0][0].inactive_miss, 1);
	ck_assert_uint_eq(h.lu->cdl_stats[0][0].commands, 1);
}
END_TEST

/* SPC-6 policy Dh complete-unavailable: GOOD status with sense COMPLETED, 55/0A, and no data. */
START_TEST(inactive_complete_unavailable)
{
	static struct harness_result a, c;

	t2a(2, &(struct t2){ .units = 0x08, .inactive = 5000, .inactive_policy = 0xd });
	read16(0, 0, 0, SCSI_TASK_SIMPLE, &a);
	read16(0, 8, 2, SCSI_TASK_SIMPLE, &c);
	at_ms(5);
	ck_assert(c.completed);
	ck_assert_uint_eq(c.status, SCSI_STATUS_GOOD);
	ck_assert_uint_gt(c.sense_len, 0);
	ck_assert_uint_eq(harness_sense_key(&c), SENSE_KEY_COMPLETED);
	ck_assert_uint_eq(harness_asc_ascq(&c), ASC_DATA_CURRENTLY_UNAVAILABLE);
	ck_assert_uint_eq(c.data_in_len, 0);
	ck_assert_uint_eq(h.lu->cdl_stats[0][1].inactive_miss, 1);
}
END_TEST

/* SPC-6 max active time, policy Fh: 2E/02 when it passes while the medium serves it; the medium is free at once. */
START_TEST(active_abort)
{
	static struct harness_result c, next;

	t2a(1, &(struct t2){ .units = 0x08, .active = 5000, .active_policy = 0xf });
	read16(0, 0, 1, SCSI_TASK_SIMPLE, &c);
	read16(0, 8, 0, SCSI_TASK_SIMPLE, &next);
	at_ms(5);
	ck_assert(c.completed && !next.completed);
	harness_expect_sense(&c, SENSE_KEY_ABORTED_COMMAND, ASC_COMMAND_TIMEOUT_DURING_PROCESSING);
	at_ms(14);
	ck_assert(!next.completed);
	at_ms(15);
	ck_assert(next.completed);
	ck_assert_uint_eq(h.lu->cdl_stats[0][0].active_miss, 1);
}
END_TEST

/* SPC-6 max inactive time passing while a write waits for its Data-Out: it ends as soon as the Data-Out is in. */
START_TEST(inactive_abort_waiting_for_data_out)
{
	static struct harness_result a, w;
	static uint8_t block[BS];
	struct harness_opts o = { .nexus = 0, .attr = SCSI_TASK_SIMPLE, .hold_data_out = true };
	uint8_t cdb[16] = { 0x8a };

	t2a(1, &(struct t2){ .units = 0x08, .inactive = 5000, .inactive_policy = 0xf });
	t2b(1, &(struct t2){ .units = 0x08, .inactive = 5000, .inactive_policy = 0xf });
	read16(0, 0, 0, SCSI_TASK_SIMPLE, &a); /* the medium is busy 0-10 */
	put_be64(cdb + 2, 64);
	put_be32(cdb + 10, 1);
	cdb[14] = 0x40; /* DLD 1: T2B for writes */
	memset(&w, 0, sizeof(w));
	harness_submit(&h, &o, cdb, 16, block, BS, &w);
	ck_assert(w.data_out_wanted);
	at_ms(6);
	ck_assert(!w.completed); /* its Data-Out has not come */
	ck_assert(harness_deliver_data_out(&w));
	ck_assert(w.completed); /* at once, not behind the medium */
	harness_expect_sense(&w, SENSE_KEY_ABORTED_COMMAND, ASC_COMMAND_TIMEOUT_BEFORE_PROCESSING);
	ck_assert(!a.completed);
}
END_TEST

/* SPC-6 max active time, policy Eh abort-recovery: 2E/03. */
START_TEST(active_abort_recovery)
{
	static struct harness_result c;

	t2a(3, &(struct t2){ .units = 0x08, .active = 5000, .active_policy = 0xe });
	read16(0, 0, 3, SCSI_TASK_SIMPLE, &c);
	at_ms(5);
	harness_expect_sense(&c, SENSE_KEY_ABORTED_COMMAND, ASC_COMMAND_TIMEOUT_DURING_PROCESSING_DUE_TO_ERROR_RECOVERY);
}
END_TEST

/* SPC-6 policy 0h complete-earliest: no error; the miss is counted (both limits: both_miss). */
START_TEST(complete_earliest_counts_misses)
{
	static struct harness_result a, c;

	t2a(4, &(struct t2){ .units = 0x08, .inactive = 2000, .active = 5000 });
	read16(0, 0, 0, SCSI_TASK_SIMPLE, &a);
	read16(0, 8, 4, SCSI_TASK_SIMPLE, &c);
	at_ms(20);
	ck_assert(c.completed);
	harness_expect_good(&c);
	ck_assert_uint_eq(h.lu->cdl_stats[0][3].both_miss, 1);
	ck_assert_uint_eq(h.lu->cdl_stats[0][3].commands, 1);
}
END_TEST

/* SPC-6 guideline policy 1h continue-next-limit: descriptor k + 1's limits apply; its abort then ends it. */
START_TEST(guideline_continue_next_limit)
{
	static struct harness_result a, c;

	t2a(5, &(struct t2){ .units = 0x08, .guideline = 5000, .guideline_policy = 0x1 });
	t2a(6, &(struct t2){ .units = 0x08, .guideline = 8000, .guideline_policy = 0xf });
	read16(0, 0, 0, SCSI_TASK_SIMPLE, &a);
	read16(0, 8, 5, SCSI_TASK_SIMPLE, &c);
	at_ms(7);
	ck_assert(!c.completed);
	at_ms(8);
	ck_assert(c.completed);
	harness_expect_sense(&c, SENSE_KEY_ABORTED_COMMAND, ASC_COMMAND_TIMEOUT_BEFORE_PROCESSING);
	/* Counted under the descriptor its DLD named, with the guideline it missed there. */
	ck_assert_uint_eq(h.lu->cdl_stats[0][4].commands, 1);
	ck_assert_uint_eq(h.lu->cdl_stats[0][5].commands, 0);
	{
		struct scsi_lu_stats st;

		scsi_lu_get_stats(h.lu, &st);
		ck_assert_uint_eq(st.descriptor[0][4].guideline_miss, 1);
		ck_assert_uint_eq(st.descriptor[0][4].policy_actions[0x1], 1);
		ck_assert_uint_eq(st.descriptor[0][4].policy_actions[0xf], 1);
	}
}
END_TEST

/* SPC-6 guideline policy 2h continue-no-limit: no limit applies any more; the command ends GOOD. */
START_TEST(guideline_continue_no_limit)
{
	static struct harness_result a, c;

	t2a(7, &(struct t2){ .units = 0x08, .guideline = 5000, .guideline_policy = 0x2 });
	read16(0, 0, 0, SCSI_TASK_SIMPLE, &a);
	read16(0, 8, 7, SCSI_TASK_SIMPLE, &c);
	at_ms(20);
	ck_assert(c.completed);
	harness_expect_good(&c);
}
END_TEST

/* SPC-6: policies not allowed for a limit, reserved units: MODE SELECT gets 05/26/00 at the byte and changes nothing. */
START_TEST(t2_page_checks)
{
	static struct harness_result r;

	/* continue-next-limit is for the guideline only: byte 6 of descriptor 1 (list offset 8 + 8 + 6). */
	select_t2a(1, &(struct t2){ .units = 0x08, .inactive = 5, .inactive_policy = 0x1 }, false, &r);
	expect_list_pointer(&r, 8 + 8 + 6);
	/* abort-recovery is for the max active time only. */
	select_t2a(2, &(struct t2){ .units = 0x08, .guideline = 5, .guideline_policy = 0xe }, false, &r);
	expect_list_pointer(&r, 8 + 8 + 32 + 14);
	/* T2CDLUNITS 1h is reserved. */
	select_t2a(3, &(struct t2){ .units = 0x01, .active = 5 }, false, &r);
	expect_list_pointer(&r, 8 + 8 + 64);
	mode_sense_t2a(0, &r);
	ck_assert_uint_eq(r.data_in[8 + 8 + 64], 0x00); /* unchanged */
	/* The page: SPF, subpage 07h, PAGE LENGTH 00E4h; the changeable mask covers the descriptor fields. */
	ck_assert_uint_eq(r.data_in[8] & 0x7f, 0x4a);
	ck_assert_uint_eq(r.data_in[9], 0x07);
	ck_assert_uint_eq(get_be16(r.data_in + 10), 0xe4);
	mode_sense_t2a(1, &r);
	ck_assert_uint_eq(r.data_in[8 + 7], 0xf0);          /* PERF VS DURATION GUIDELINE */
	ck_assert_uint_eq(r.data_in[8 + 8], 0x0f);          /* T2CDLUNITS */
	ck_assert_uint_eq(r.data_in[8 + 8 + 6], 0xff);      /* the two policies */
	ck_assert_uint_eq(r.data_in[8 + 8 + 14], 0x0f);     /* guideline policy */
}
END_TEST

/* SPC-4 6.14 SP = 1: the T2A page is saved and comes back after a restart of the LU. */
START_TEST(t2_page_saved)
{
	static struct harness_result r;
	struct scsi_lu_params p = h.lu->params;
	struct scsi_device *dev2;
	struct scsi_lu *lu2;
	char err[128];
	struct scsi_cmd_limits l;

	select_t2a(2, &(struct t2){ .units = 0x0a, .inactive = 7, .inactive_policy = 0xf }, true, &r);
	harness_expect_good(&r);
	dev2 = scsi_device_create("iqn.2026-12.org.sbcemu:reload", NULL, NULL);
	lu2 = scsi_lu_create(dev2, &p, be_mem_open(NUM_BLOCKS * BS), err, sizeof(err));
	ck_assert_ptr_nonnull(lu2);
	ck_assert(spc_cdl_descriptor(lu2, 0x07, 2, &l));
	ck_assert_uint_eq(l.max_inactive_ns, 70 * VC_MS);
	ck_assert_uint_eq(l.max_inactive_policy, 0xf);
	scsi_device_destroy(dev2);
}
END_TEST

/* SPC-6 RSOC: READ(16) names T2A (CDLP 01b, RWCDLP 1), WRITE(16) T2B (CDLP 10b); the DLD bits are usage data. */
START_TEST(rsoc_cdlp)
{
	static struct harness_result r;
	uint8_t cdb[12] = { 0xa3, 0x0c, 0x01, 0x88, 0, 0, 0, 0, 0, 20, 0, 0 };

	harness_run(&h, 0, cdb, 12, NULL, 0, 0, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in[0] & 0x01, 1);           /* RWCDLP */
	ck_assert_uint_eq((r.data_in[1] >> 3) & 0x03, 1);    /* CDLP */
	ck_assert_uint_eq(r.data_in[1] & 0x07, 3);           /* SUPPORT */
	ck_assert_uint_eq(r.data_in[4 + 1] & 0x01, 1);       /* DLD2 */
	ck_assert_uint_eq(r.data_in[4 + 14] & 0xc0, 0xc0);   /* DLD1, DLD0 */
	cdb[3] = 0x8a;
	cdb[2] = 0x03; /* cdl-tools asks with REPORTING OPTIONS 011b */
	harness_run(&h, 0, cdb, 12, NULL, 0, 0, &r);
	ck_assert_uint_eq((r.data_in[1] >> 3) & 0x03, 2);
	/* Linux decides from VERSION >= 07h (scsi_cdl_check). */
	{
		uint8_t inq[6] = { 0x12, 0, 0, 0, 96, 0 };

		harness_run(&h, 0, inq, 6, NULL, 0, 0, &r);
		ck_assert_uint_eq(r.data_in[2], 0x07);
	}
}
END_TEST

/* Without duration limits the DLD bits are reserved: 05/24/00 on byte 14 bit 7; RSOC says CDLP 00b; VERSION 06h. */
START_TEST(no_cdl_dld_reserved)
{
	static struct harness_result r;
	uint8_t rsoc[12] = { 0xa3, 0x0c, 0x01, 0x88, 0, 0, 0, 0, 0, 20, 0, 0 }, inq[6] = { 0x12, 0, 0, 0, 96, 0 };

	teardown();
	setup_with(0, SCSI_CDL_NONE);
	read16(0, 0, 1, SCSI_TASK_SIMPLE, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 14, 6);
	harness_run(&h, 0, rsoc, 12, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.data_in[1] & 0x18, 0);
	ck_assert_uint_eq(r.data_in[4 + 14], 0x3f);
	harness_run(&h, 0, inq, 6, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.data_in[2], 0x06);
}
END_TEST

/*
 * command_duration_limits = ab: READ(16) names the SPC-5 A page (RSOC RWCDLP 0, CDLP 01b), whose one
 * limit acts as a duration guideline with the abort policy (docs/latency.md): 2E/01 before processing.
 */
START_TEST(ab_page_limit)
{
	static struct harness_result r, a, c;
	uint8_t rsoc[12] = { 0xa3, 0x0c, 0x01, 0x88, 0, 0, 0, 0, 0, 20, 0, 0 };
	uint8_t sense[10] = { 0x5a, 0x08, 0x0a, 0x03, 0, 0, 0, 0x01, 0x00, 0 };
	uint8_t select[10] = { 0x55, 0x10, 0, 0, 0, 0, 0, 0, 44, 0 };
	static uint8_t list[8 + 36];

	teardown();
	setup_with(10000, SCSI_CDL_AB);
	harness_run(&h, 0, rsoc, 12, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.data_in[0] & 0x01, 0);           /* RWCDLP 0: the A/B pages */
	ck_assert_uint_eq((r.data_in[1] >> 3) & 0x03, 1);    /* CDLP 01b: A */
	harness_run(&h, 0, sense, 10, NULL, 0, 0, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in_len, 8 + 36);
	ck_assert_uint_eq(get_be16(r.data_in + 8 + 2), 0x0020); /* PAGE LENGTH */
	memcpy(list, r.data_in, sizeof(list));
	list[0] = list[1] = list[3] = 0;
	list[8] &= 0x7f;
	list[8 + 8] = 0x80;                                   /* CDLUNIT 100b: 1 us */
	put_be16(list + 8 + 8 + 2, 5000);                     /* 5 ms */
	harness_run(&h, 0, select, 10, list, sizeof(list), sizeof(list), &r);
	harness_expect_good(&r);
	harness_clear_ua(&h);
	/* CDLUNIT 111b is reserved: 05/26/00 at the descriptor. */
	list[8 + 8 + 4] = 0xe0;
	harness_run(&h, 0, select, 10, list, sizeof(list), sizeof(list), &r);
	expect_list_pointer(&r, 8 + 8 + 4);
	read16(0, 0, 0, SCSI_TASK_SIMPLE, &a);
	read16(0, 8, 1, SCSI_TASK_SIMPLE, &c);
	at_ms(4);
	ck_assert(!c.completed);
	at_ms(5);
	harness_expect_sense(&c, SENSE_KEY_ABORTED_COMMAND, ASC_COMMAND_TIMEOUT_BEFORE_PROCESSING);
}
END_TEST

/* SAM-5 7.2 LOGICAL UNIT RESET: commands queued for the medium end at once, aborted. */
static void tmf_done(void *arg, enum scsi_tmf_response response)
{
	*(enum scsi_tmf_response *)arg = response;
}

START_TEST(reset_ends_queued_commands)
{
	static struct harness_result a, b;
	enum scsi_tmf_response resp = SCSI_TMF_FUNCTION_REJECTED;

	read16(0, 0, 0, SCSI_TASK_SIMPLE, &a); /* on the medium, its I/O done: held until 10 ms */
	read16(0, 8, 0, SCSI_TASK_SIMPLE, &b); /* waiting for the medium */
	scsi_tmf(h.nexus[1], 0, SCSI_TMF_LOGICAL_UNIT_RESET, NULL, tmf_done, &resp);
	ck_assert_int_eq(resp, SCSI_TMF_FUNCTION_COMPLETE);
	ck_assert(a.aborted && b.aborted);
	ck_assert_uint_eq(h.lu->media.busy, 0);
	ck_assert_uint_eq(h.lu->media.waiting.count, 0);
}
END_TEST

/* The workers' queue (dispatch.c): with room for one job, the next one to go is the highest priority's. */
START_TEST(dispatch_by_priority)
{
	static struct harness_result w[4], hi;
	static struct manual_executor m;
	struct scsi_latency_params none = { 0 };
	char err[64];

	ck_assert_int_eq(scsi_lu_set_latency(h.lu, &none, err, sizeof(err)), 0);
	manual_executor_init(&m);
	m.ex.capacity = 1;
	h.dev->executor = &m.ex;
	for (int i = 0; i < 4; i++)
		read16(0, 8 * (uint64_t)i, 0, SCSI_TASK_SIMPLE, &w[i]);
	set_priority(1, 2);
	read16(1, 64, 0, SCSI_TASK_SIMPLE, &hi);
	ck_assert_uint_eq(manual_executor_pending(&m), 1);
	ck_assert_uint_eq(m.ex.waiting.count, 4);
	manual_executor_run(&m, 1);
	ck_assert(w[0].completed && !hi.completed);
	manual_executor_run(&m, 1);
	ck_assert(hi.completed && !w[1].completed);
	manual_executor_run(&m, 10);
	ck_assert(w[3].completed);
	h.dev->executor = &scsi_executor_inline;
}
END_TEST

/*
 * An asynchronous backend for dispatch_async_by_priority: the mem backend
 * with submit_rw, which moves the data at once and holds the completion
 * until held_release hands it back, as librbd's completion thread would.
 */
static struct backend_ops held_ops;
static const struct backend_ops *held_base;
static struct {
	void (*done)(void *arg, int rc);
	void *arg;
} held[8];
static unsigned held_count;

static int held_submit_rw(struct backend *be, bool write, const struct iovec *iov, unsigned iovcnt, uint64_t offset,
			  unsigned flags, void (*done)(void *arg, int rc), void *arg)
{
	if (held_count == 8)
		return -EAGAIN;
	for (unsigned i = 0; i < iovcnt; i++) {
		int rc = write ? held_base->write(be, iov[i].iov_base, iov[i].iov_len, offset, flags)
			       : held_base->read(be, iov[i].iov_base, iov[i].iov_len, offset);

		if (rc < 0)
			return rc;
		offset += iov[i].iov_len;
	}
	held[held_count].done = done;
	held[held_count].arg = arg;
	held_count++;
	return 0;
}

/* The oldest held completion goes back (the backend's thread, in a daemon). */
static void held_release(void)
{
	ck_assert_uint_gt(held_count, 0);
	held[0].done(held[0].arg, 0);
	memmove(held, held + 1, --held_count * sizeof(held[0]));
}

/*
 * Commands whose I/O starts asynchronously (an rbd LU's READ): with room
 * for one in the backend (async_capacity), the next one to start is the
 * highest priority's, not the oldest (SPC-6 SET PRIORITY, docs/rbd.md);
 * none of them takes a worker.
 */
START_TEST(dispatch_async_by_priority)
{
	static struct harness_result w[4], hi;
	static struct manual_executor m;
	struct scsi_latency_params none = { 0 };
	char err[64];

	ck_assert_int_eq(scsi_lu_set_latency(h.lu, &none, err, sizeof(err)), 0);
	held_base = h.lu->backend->ops;
	held_ops = *held_base;
	held_ops.submit_rw = held_submit_rw;
	h.lu->backend->ops = &held_ops;
	held_count = 0;
	manual_executor_init(&m);
	manual_executor_enable_async(&m);
	m.ex.capacity = 1;
	m.ex.async_capacity = 1;
	h.dev->executor = &m.ex;
	for (int i = 0; i < 4; i++)
		read16(0, 8 * (uint64_t)i, 0, SCSI_TASK_SIMPLE, &w[i]);
	set_priority(1, 2);
	read16(1, 64, 0, SCSI_TASK_SIMPLE, &hi);
	ck_assert_uint_eq(held_count, 1);
	ck_assert_uint_eq(m.ex.async_in_flight, 1);
	ck_assert_uint_eq(m.ex.async_waiting.count, 4);
	ck_assert_uint_eq(manual_executor_pending(&m), 0); /* no worker job */
	held_release();
	ck_assert_uint_eq(manual_executor_end_async(&m, 1), 1);
	harness_expect_good(&w[0]);
	ck_assert(!hi.completed);
	ck_assert_uint_eq(held_count, 1);
	held_release();
	manual_executor_end_async(&m, 1);
	harness_expect_good(&hi);
	ck_assert(!w[1].completed);
	for (int i = 1; i < 4; i++) {
		held_release();
		manual_executor_end_async(&m, 1);
		harness_expect_good(&w[i]);
	}
	ck_assert_uint_eq(m.ex.async_in_flight, 0);
	ck_assert_uint_eq(m.ex.in_flight, 0);
	h.dev->executor = &scsi_executor_inline;
	h.lu->backend->ops = held_base;
}
END_TEST

int main(void)
{
	Suite *s = suite_create("priority_time");
	TCase *tc = tcase_create("priority_time");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, one_server_in_arrival_order);
	tcase_add_test(tc, stats_queued_and_active);
	tcase_add_test(tc, set_priority_goes_first);
	tcase_add_test(tc, set_priority_of_another_nexus);
	tcase_add_test(tc, head_of_queue_goes_first);
	tcase_add_test(tc, aging_bounds_the_wait);
	tcase_add_test(tc, deadline_goes_before_no_deadline);
	tcase_add_test(tc, inactive_abort);
	tcase_add_test(tc, inactive_complete_unavailable);
	tcase_add_test(tc, active_abort);
	tcase_add_test(tc, active_abort_recovery);
	tcase_add_test(tc, inactive_abort_waiting_for_data_out);
	tcase_add_test(tc, complete_earliest_counts_misses);
	tcase_add_test(tc, guideline_continue_next_limit);
	tcase_add_test(tc, guideline_continue_no_limit);
	tcase_add_test(tc, t2_page_checks);
	tcase_add_test(tc, t2_page_saved);
	tcase_add_test(tc, rsoc_cdlp);
	tcase_add_test(tc, no_cdl_dld_reserved);
	tcase_add_test(tc, ab_page_limit);
	tcase_add_test(tc, reset_ends_queued_commands);
	tcase_add_test(tc, dispatch_by_priority);
	tcase_add_test(tc, dispatch_async_by_priority);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
