/*
 * task_set.c, lba_lock.c, resources.c: the one scheduler.  Commands go
 * through the harness with a manual executor, so a test decides when each
 * started command's I/O runs and can see which commands started (one queued
 * job each).
 *
 * Rules checked: SAM-5 8.6 task attributes (SIMPLE, ORDERED, HEAD OF QUEUE,
 * implicit HEAD OF QUEUE of INQUIRY), LBA locks (reads share, writes and
 * atomic writes alone, lba_locks = lu), the quiesce of FORMAT UNIT and
 * SANITIZE with the NOT READY gate at start (SBC-4 5.4, 4.11), SAM-5 5.3
 * TASK SET FULL and BUSY, and buffer room.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "manual_executor.h"
#include "core/scsi_internal.h"
#include "scsi_wire.h"
#include "sched/task_set.h"

#define BS 512
#define NUM_BLOCKS 4096

static struct harness h;
static struct manual_executor mex;
static uint8_t data[64 * BS];

static void setup_with(const struct scsi_lu_params *p)
{
	harness_init(&h, NUM_BLOCKS, BS, p);
	harness_clear_ua(&h);
	manual_executor_init(&mex);
	h.dev->executor = &mex.ex;
}

static void setup(void)
{
	struct scsi_lu_params p = { .kind = SCSI_LU_CONVENTIONAL,
				    .thin_provisioning = true,
				    .max_compare_and_write = 255,
				    .max_atomic_transfer_length = 64,
				    .queue_depth = 0 };

	setup_with(&p);
}

static void teardown(void)
{
	manual_executor_run(&mex, ~0u);
	harness_fini(&h);
}

static void submit16(uint8_t opcode, uint64_t lba, uint32_t n, enum scsi_task_attr attr, int nexus,
		     struct harness_result *r)
{
	struct harness_opts o = { .nexus = nexus, .attr = attr };
	uint8_t cdb[16] = { opcode };
	bool out = opcode != 0x88;

	put_be64(cdb + 2, lba);
	if (opcode == 0x9c)
		put_be16(cdb + 12, (uint16_t)n); /* WRITE ATOMIC(16): TRANSFER LENGTH bytes 12-13 */
	else
		put_be32(cdb + 10, n);
	harness_submit(&h, &o, cdb, 16, out ? data : NULL, out ? n * BS : 0, r);
}

static void read16(uint64_t lba, uint32_t n, enum scsi_task_attr attr, struct harness_result *r)
{
	submit16(0x88, lba, n, attr, 0, r);
}

static void write16(uint64_t lba, uint32_t n, enum scsi_task_attr attr, struct harness_result *r)
{
	submit16(0x8a, lba, n, attr, 0, r);
}

static unsigned started(void)
{
	return manual_executor_pending(&mex);
}

/* SAM-5 8.6: an ORDERED command waits for every older one; younger SIMPLE ones wait for it. */
START_TEST(ordered_waits_for_older_and_holds_younger)
{
	static struct harness_result w, o, s;

	write16(0, 8, SCSI_TASK_SIMPLE, &w);
	ck_assert_uint_eq(started(), 1);
	read16(1000, 8, SCSI_TASK_ORDERED, &o); /* other blocks: only its attribute holds it */
	read16(2000, 8, SCSI_TASK_SIMPLE, &s);
	ck_assert_uint_eq(started(), 1);
	manual_executor_run(&mex, 1);
	harness_expect_good(&w);
	ck_assert_uint_eq(started(), 1); /* the ORDERED one, alone */
	ck_assert(!s.completed);
	manual_executor_run(&mex, 1);
	harness_expect_good(&o);
	ck_assert_uint_eq(started(), 1);
	manual_executor_run(&mex, 1);
	harness_expect_good(&s);
}
END_TEST

/* SAM-5 8.6: HEAD OF QUEUE starts at once, past a waiting ORDERED command; INQUIRY is HEAD OF QUEUE by itself. */
START_TEST(head_of_queue_goes_first)
{
	static struct harness_result w, o, hq, inq;
	struct harness_opts opts = { .attr = SCSI_TASK_SIMPLE };
	static const uint8_t inquiry[6] = { 0x12, 0, 0, 0, 96, 0 };

	write16(0, 8, SCSI_TASK_SIMPLE, &w);
	read16(1000, 8, SCSI_TASK_ORDERED, &o);
	read16(2000, 8, SCSI_TASK_HEAD_OF_QUEUE, &hq);
	ck_assert_uint_eq(started(), 2); /* the write and the HEAD OF QUEUE read */
	harness_submit(&h, &opts, inquiry, 6, NULL, 0, &inq);
	harness_expect_good(&inq); /* answered at once, ahead of the ORDERED read */
	ck_assert(!o.completed);
	manual_executor_run(&mex, 2);
	harness_expect_good(&w);
	harness_expect_good(&hq);
	manual_executor_run(&mex, 1);
	harness_expect_good(&o);
}
END_TEST

/* LBA locks: reads share blocks; a write waits for them; a read behind the waiting write waits too. */
START_TEST(reads_share_writes_wait)
{
	static struct harness_result r1, r2, w, r3, r4;

	read16(0, 16, SCSI_TASK_SIMPLE, &r1);
	read16(8, 16, SCSI_TASK_SIMPLE, &r2);
	ck_assert_uint_eq(started(), 2);
	write16(4, 8, SCSI_TASK_SIMPLE, &w);
	ck_assert_uint_eq(started(), 2);
	read16(4, 1, SCSI_TASK_SIMPLE, &r3);   /* overlaps the waiting write: waits (no starving it) */
	read16(500, 8, SCSI_TASK_SIMPLE, &r4); /* elsewhere: starts */
	ck_assert_uint_eq(started(), 3);
	manual_executor_run(&mex, 3);
	harness_expect_good(&r1);
	harness_expect_good(&r2);
	harness_expect_good(&r4);
	ck_assert_uint_eq(started(), 1); /* the write */
	ck_assert(!r3.completed);
	manual_executor_run(&mex, 1);
	harness_expect_good(&w);
	manual_executor_run(&mex, 1);
	harness_expect_good(&r3);
}
END_TEST

/* SBC-4 4.29: an atomic write holds its blocks alone, and only those. */
START_TEST(atomic_write_stalls_only_its_blocks)
{
	static struct harness_result a, inside, outside;

	submit16(0x9c, 100, 8, SCSI_TASK_SIMPLE, 0, &a);
	ck_assert_uint_eq(started(), 1);
	read16(104, 1, SCSI_TASK_SIMPLE, &inside);
	read16(2000, 8, SCSI_TASK_SIMPLE, &outside);
	ck_assert_uint_eq(started(), 2);
	ck_assert(!inside.completed);
	manual_executor_run(&mex, 2);
	harness_expect_good(&a);
	harness_expect_good(&outside);
	manual_executor_run(&mex, 1);
	harness_expect_good(&inside);
}
END_TEST

/* lba_locks = lu: every lock covers the LU, as the old LU-wide lock did; plain I/O still shares it. */
START_TEST(whole_lu_locks)
{
	static struct harness_result a, r, w;

	h.lu->params.lba_locks_whole_lu = true;
	submit16(0x9c, 100, 8, SCSI_TASK_SIMPLE, 0, &a);
	read16(2000, 8, SCSI_TASK_SIMPLE, &r);
	ck_assert_uint_eq(started(), 1);
	manual_executor_run(&mex, 1);
	harness_expect_good(&a);
	write16(3000, 8, SCSI_TASK_SIMPLE, &w); /* shares with the read */
	ck_assert_uint_eq(started(), 2);
	manual_executor_run(&mex, 2);
	harness_expect_good(&r);
	harness_expect_good(&w);
}
END_TEST

/*
 * FORMAT UNIT is OP_QUIESCE: it starts once the write in flight has ended,
 * younger commands that touch the medium wait for it, then meet NOT READY,
 * FORMAT IN PROGRESS (SBC-4 5.4) while it runs; TEST UNIT READY too.
 */
START_TEST(format_unit_quiesces)
{
	static struct harness_result w, fmt, r, tur;
	static const uint8_t format[6] = { 0x04 };
	static const uint8_t tur_cdb[6] = { 0x00 };
	struct harness_opts opts = { .attr = SCSI_TASK_SIMPLE };

	write16(0, 8, SCSI_TASK_SIMPLE, &w);
	harness_submit(&h, &opts, format, 6, NULL, 0, &fmt);
	read16(1000, 8, SCSI_TASK_SIMPLE, &r);
	ck_assert_uint_eq(started(), 1); /* only the write */
	ck_assert(!h.lu->progress.active);
	manual_executor_run(&mex, 1);
	harness_expect_good(&w);
	/* The format started: the read, let go, got NOT READY at its start. */
	ck_assert(h.lu->progress.active);
	harness_expect_sense(&r, SENSE_KEY_NOT_READY, ASC_LOGICAL_UNIT_NOT_READY_FORMAT_IN_PROGRESS);
	harness_submit(&h, &opts, tur_cdb, 6, NULL, 0, &tur);
	harness_expect_sense(&tur, SENSE_KEY_NOT_READY, ASC_LOGICAL_UNIT_NOT_READY_FORMAT_IN_PROGRESS);
	ck_assert(!fmt.completed);
	manual_executor_run(&mex, ~0u);
	harness_expect_good(&fmt);
	ck_assert(!h.lu->progress.active);
}
END_TEST

/*
 * A WRITE that waits for its Data-Out when a SANITIZE begins does not run in
 * the middle of it: when its data comes it meets NOT READY, SANITIZE IN
 * PROGRESS (SBC-4 4.11) instead.
 */
START_TEST(parked_write_meets_sanitize)
{
	static struct harness_result w, san;
	static const uint8_t sanitize[10] = { 0x48, 0x80 | 0x03 }; /* IMMED, CRYPTOGRAPHIC ERASE */
	struct harness_opts held = { .attr = SCSI_TASK_SIMPLE, .hold_data_out = true };
	struct harness_opts opts = { .attr = SCSI_TASK_SIMPLE };
	uint8_t cdb[16] = { 0x8a };

	put_be64(cdb + 2, 10);
	put_be32(cdb + 10, 8);
	memset(data, 0x5a, 8 * BS);
	harness_submit(&h, &held, cdb, 16, data, 8 * BS, &w);
	ck_assert(w.data_out_wanted);
	harness_submit(&h, &opts, sanitize, 10, NULL, 0, &san);
	harness_expect_good(&san); /* IMMED: GOOD once validated; the erase goes on */
	ck_assert(h.lu->progress.active);
	ck_assert(harness_deliver_data_out(&w));
	harness_expect_sense(&w, SENSE_KEY_NOT_READY, ASC_SANITIZE_IN_PROGRESS_NR);
	ck_assert_uint_eq(started(), 1); /* the erase's chunk only */
	manual_executor_run(&mex, ~0u);
	ck_assert(!h.lu->progress.active);
}
END_TEST

/* SAM-5 5.3: past queue_depth, TASK SET FULL for a nexus with a command there; a nexus with none gets in. */
START_TEST(task_set_full)
{
	static struct harness_result a, b, c, other;

	h.lu->params.queue_depth = 2;
	read16(0, 8, SCSI_TASK_SIMPLE, &a);
	read16(8, 8, SCSI_TASK_SIMPLE, &b);
	read16(16, 8, SCSI_TASK_SIMPLE, &c);
	ck_assert(c.completed);
	ck_assert_uint_eq(c.status, SCSI_STATUS_TASK_SET_FULL);
	ck_assert_uint_eq(c.sense_len, 0);
	submit16(0x88, 24, 8, SCSI_TASK_SIMPLE, 1, &other);
	ck_assert(!other.completed); /* admitted: its nexus had nothing in the task set */
	ck_assert_uint_eq(started(), 3);
	manual_executor_run(&mex, ~0u);
	harness_expect_good(&a);
	harness_expect_good(&other);
	read16(16, 8, SCSI_TASK_SIMPLE, &c); /* room again */
	ck_assert_uint_eq(started(), 1);
}
END_TEST

/* SAM-5 5.3: the daemon's command limit: TASK SET FULL with a command of the nexus in the task set, else BUSY. */
START_TEST(daemon_limit_busy_and_task_set_full)
{
	static struct harness_result a, b, other;
	struct scsi_limits limits = { .max_commands = 1 };
	struct scsi_resources *res = scsi_resources_create(&limits);

	scsi_resources_add_device(res, h.dev);
	read16(0, 8, SCSI_TASK_SIMPLE, &a);
	read16(8, 8, SCSI_TASK_SIMPLE, &b);
	ck_assert_uint_eq(b.status, SCSI_STATUS_TASK_SET_FULL);
	submit16(0x88, 8, 8, SCSI_TASK_SIMPLE, 1, &other);
	ck_assert(other.completed);
	ck_assert_uint_eq(other.status, SCSI_STATUS_BUSY);
	manual_executor_run(&mex, ~0u);
	harness_expect_good(&a);
	scsi_resources_remove_device(res, h.dev);
	h.dev->res = NULL;
	scsi_resources_destroy(res);
}
END_TEST

/* Buffer room: a READ that does not fit waits unstarted until the one holding the room is released. */
START_TEST(buffer_room_waits)
{
	static struct harness_result a, b;
	struct scsi_limits limits = { .max_buffer_bytes = 16 * BS };
	struct scsi_resources *res = scsi_resources_create(&limits);
	uint32_t commands;
	uint64_t bytes;

	scsi_resources_add_device(res, h.dev);
	read16(0, 16, SCSI_TASK_SIMPLE, &a);
	read16(100, 16, SCSI_TASK_SIMPLE, &b);
	ck_assert_uint_eq(started(), 1);
	scsi_resources_usage(res, &commands, &bytes);
	ck_assert_uint_eq(commands, 2);
	ck_assert_uint_eq(bytes, 16 * BS);
	ck_assert_uint_eq(res->lus_waiting, 1); /* b's LU waits for room: the one a completion wakes */
	manual_executor_run(&mex, 1); /* a completes and is released (the harness releases at once) */
	harness_expect_good(&a);
	ck_assert_uint_eq(started(), 1); /* b */
	ck_assert_uint_eq(res->lus_waiting, 0);
	manual_executor_run(&mex, 1);
	harness_expect_good(&b);
	ck_assert(!res->freed); /* b's release found no LU waiting: nothing walked */
	scsi_resources_usage(res, &commands, &bytes);
	ck_assert_uint_eq(commands, 0);
	ck_assert_uint_eq(bytes, 0);
	scsi_resources_remove_device(res, h.dev);
	h.dev->res = NULL;
	scsi_resources_destroy(res);
}
END_TEST

/*
 * The completion callback of the command that frees buffer room: a
 * transport that releases there (as TCMU does).  It records how many
 * commands had started when the release returned, while the completion
 * was still on the stack.
 */
static unsigned started_inside_complete = ~0u;

static void releasing_complete(struct scsi_cmd *cmd)
{
	harness_transport.complete(cmd); /* records the result and releases at once */
	started_inside_complete = started();
}

/*
 * Buffer room freed by one LU's completion wakes another LU's waiting
 * command only after that completion has returned: no LU's pass runs inside
 * another's completion callback (docs/architecture.md, "The one scheduler").
 */
START_TEST(room_freed_in_a_completion_wakes_other_lus_after_it)
{
	static struct harness_result a, b;
	static struct harness h2;
	struct scsi_limits limits = { .max_buffer_bytes = 16 * BS };
	struct scsi_resources *res = scsi_resources_create(&limits);
	struct scsi_transport_ops releasing = harness_transport;
	struct harness_opts o = { .attr = SCSI_TASK_SIMPLE };
	uint8_t cdb[16] = { 0x88 };

	releasing.complete = releasing_complete;
	scsi_nexus_destroy(h.nexus[0]);
	h.nexus[0] = scsi_nexus_create(h.dev, &releasing, "iqn.2026-12.test:r,i,0x000000000004",
				       "iqn.2026-12.org.sbcemu:harness,t,0x0001", 1);
	harness_init(&h2, NUM_BLOCKS, BS, NULL);
	harness_clear_ua(&h2);
	h2.dev->executor = &mex.ex;
	scsi_resources_add_device(res, h.dev);
	scsi_resources_add_device(res, h2.dev);
	harness_clear_ua(&h);
	read16(0, 16, SCSI_TASK_SIMPLE, &a);          /* LU of h: takes all the room */
	put_be32(cdb + 10, 16);
	harness_submit(&h2, &o, cdb, 16, NULL, 0, &b); /* LU of h2: waits for room */
	ck_assert_uint_eq(started(), 1);
	manual_executor_run(&mex, 1);                 /* a completes; its transport releases it at once */
	harness_expect_good(&a);
	ck_assert_uint_eq(started_inside_complete, 0); /* b had not started while a's completion ran */
	ck_assert_uint_eq(started(), 1);              /* ... and has once it returned */
	manual_executor_run(&mex, 1);
	harness_expect_good(&b);
	scsi_resources_remove_device(res, h.dev);
	scsi_resources_remove_device(res, h2.dev);
	h.dev->res = h2.dev->res = NULL;
	scsi_resources_destroy(res);
	harness_fini(&h2);
	scsi_nexus_destroy(h.nexus[0]); /* releasing goes with this function */
	h.nexus[0] = scsi_nexus_create(h.dev, &harness_transport, "iqn.2026-12.test:i0,i,0x000000000001",
				       "iqn.2026-12.org.sbcemu:harness,t,0x0001", 1);
}
END_TEST

/* Many commands that complete at once (INQUIRY) run without recursion and in order. */
START_TEST(many_synchronous_completions)
{
	static struct harness_result r[2000];
	struct harness_opts opts = { .attr = SCSI_TASK_ORDERED };
	static const uint8_t inquiry[6] = { 0x12, 0, 0, 0, 96, 0 };
	static const uint8_t tur_cdb[6] = { 0x00 };

	for (unsigned i = 0; i < 2000; i++)
		harness_submit(&h, &opts, i % 2 ? inquiry : tur_cdb, 6, NULL, 0, &r[i]);
	for (unsigned i = 0; i < 2000; i++)
		harness_expect_good(&r[i]);
	ck_assert_uint_eq(h.lu->ts.count, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("task_set");
	TCase *tc = tcase_create("scheduler");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, ordered_waits_for_older_and_holds_younger);
	tcase_add_test(tc, head_of_queue_goes_first);
	tcase_add_test(tc, reads_share_writes_wait);
	tcase_add_test(tc, atomic_write_stalls_only_its_blocks);
	tcase_add_test(tc, whole_lu_locks);
	tcase_add_test(tc, format_unit_quiesces);
	tcase_add_test(tc, parked_write_meets_sanitize);
	tcase_add_test(tc, task_set_full);
	tcase_add_test(tc, daemon_limit_busy_and_task_set_full);
	tcase_add_test(tc, buffer_room_waits);
	tcase_add_test(tc, room_freed_in_a_completion_wakes_other_lus_after_it);
	tcase_add_test(tc, many_synchronous_completions);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
