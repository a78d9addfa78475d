/*
 * fault_rules.c and lu_control.c: the runtime control's fault rules and LU
 * changes (docs/control.md), seen through the core as a transport sees them.
 */
#include <check.h>
#include <string.h>

#include "harness.h"
#include "core/scsi_internal.h"

#define BS 512

static struct harness h;
static struct harness_result r;

static void setup(void)
{
	harness_init(&h, 2048, BS, NULL);
	harness_clear_ua(&h);
}

static void teardown(void)
{
	harness_fini(&h);
}

static void read16(int nexus, uint64_t lba, uint32_t n, struct harness_result *res)
{
	uint8_t cdb[16] = { 0x88 };

	for (int i = 0; i < 8; i++)
		cdb[2 + i] = (uint8_t)(lba >> (56 - 8 * i));
	cdb[13] = (uint8_t)n;
	harness_run(&h, nexus, cdb, 16, NULL, 0, n * BS, res);
}

static void write16(uint64_t lba, uint32_t n, struct harness_result *res)
{
	static uint8_t data[8 * BS];
	uint8_t cdb[16] = { 0x8a };

	for (int i = 0; i < 8; i++)
		cdb[2 + i] = (uint8_t)(lba >> (56 - 8 * i));
	cdb[13] = (uint8_t)n;
	harness_run(&h, 0, cdb, 16, data, n * BS, n * BS, res);
}

static void tur(struct harness_result *res)
{
	uint8_t cdb[6] = { 0 };

	harness_run(&h, 0, cdb, 6, NULL, 0, 0, res);
}

static struct scsi_fault_rule_params rule(enum scsi_fault_action action)
{
	struct scsi_fault_rule_params p;

	memset(&p, 0, sizeof(p));
	p.action = action;
	p.every = 1;
	p.probability = 1.0;
	return p;
}

static void add(uint32_t id, const struct scsi_fault_rule_params *p)
{
	char err[256];

	ck_assert_msg(scsi_lu_fault_add(h.lu, id, p, err, sizeof(err)) == 0, "%s", err);
}

/* action sense: CHECK CONDITION with the rule's sense and INFORMATION = the LBA; count spends it. */
START_TEST(sense_with_lba_and_count)
{
	struct scsi_fault_rule_params p = rule(SCSI_FAULT_ACTION_SENSE);

	p.opcode_count = 1;
	p.opcodes[0] = 0x88;
	p.has_lba = true;
	p.lba_first = 100;
	p.lba_last = 199;
	p.sense_key = SENSE_KEY_MEDIUM_ERROR;
	p.asc = 0x11;
	p.count = 1;
	add(1, &p);
	read16(0, 50, 1, &r);
	harness_expect_good(&r); /* outside the range */
	read16(0, 190, 20, &r);  /* overlaps it */
	harness_expect_sense(&r, SENSE_KEY_MEDIUM_ERROR, 0x1100);
	harness_expect_information(&r, 190);
	read16(0, 150, 1, &r);
	harness_expect_good(&r); /* count 1: spent */
	ck_assert_int_eq(scsi_lu_fault_remove(h.lu, 1), 0);
	ck_assert_int_eq(scsi_lu_fault_remove(h.lu, 1), -1);
}
END_TEST

/* every Nth, and a seeded probability: the same seed gives the same firings. */
START_TEST(every_and_seeded_probability)
{
	struct scsi_fault_rule_params p = rule(SCSI_FAULT_ACTION_STATUS);
	bool first[40];
	unsigned fired = 0;

	p.status = SCSI_STATUS_BUSY;
	p.every = 3;
	add(1, &p);
	for (int i = 1; i <= 9; i++) {
		tur(&r);
		ck_assert_uint_eq(r.status, i % 3 == 0 ? SCSI_STATUS_BUSY : SCSI_STATUS_GOOD);
	}
	scsi_lu_fault_remove(h.lu, 1);
	p.every = 1;
	p.probability = 0.5;
	p.seed = 42;
	for (int round = 0; round < 2; round++) {
		add(2 + (uint32_t)round, &p);
		for (int i = 0; i < 40; i++) {
			tur(&r);
			if (round == 0) {
				first[i] = r.status == SCSI_STATUS_BUSY;
				fired += first[i];
			} else {
				ck_assert_int_eq(r.status == SCSI_STATUS_BUSY, first[i]);
			}
		}
		scsi_lu_fault_remove(h.lu, 2 + (uint32_t)round);
	}
	ck_assert_uint_gt(fired, 5);
	ck_assert_uint_lt(fired, 35);
}
END_TEST

/* medium-error: reads 03/11/00 with the first bad LBA until a write repairs the block. */
START_TEST(medium_error_until_written)
{
	struct scsi_fault_rule_params p = rule(SCSI_FAULT_ACTION_MEDIUM_ERROR);

	p.has_lba = true;
	p.lba_first = 300;
	p.lba_last = 303;
	add(1, &p);
	read16(0, 296, 8, &r);
	harness_expect_sense(&r, SENSE_KEY_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
	harness_expect_information(&r, 300);
	write16(300, 2, &r);
	harness_expect_good(&r);
	read16(0, 300, 2, &r);
	harness_expect_good(&r);
	read16(0, 296, 8, &r);
	harness_expect_information(&r, 302);
	ck_assert_int_eq(scsi_lu_fault_remove(h.lu, 1), 0);
	read16(0, 296, 8, &r);
	harness_expect_good(&r);
}
END_TEST

static int tmf_response = -1;

static void tmf_done(void *arg, enum scsi_tmf_response response)
{
	(void)arg;
	tmf_response = (int)response;
}

/* hold: never answered; ABORT TASK and LOGICAL UNIT RESET end it; removing the rule runs it. */
START_TEST(hold_until_abort_reset_or_removal)
{
	struct scsi_fault_rule_params p = rule(SCSI_FAULT_ACTION_HOLD);
	struct harness_opts o = { .nexus = 0 };
	uint8_t cdb[16] = { 0x88, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 1, 0, 0 };
	struct harness_result held;

	p.opcode_count = 1;
	p.opcodes[0] = 0x88; /* not the TEST UNIT READYs of harness_clear_ua */
	add(1, &p);
	memset(&held, 0, sizeof(held));
	harness_submit(&h, &o, cdb, 16, NULL, 0, &held);
	ck_assert(!held.completed && !held.aborted);
	ck_assert_ptr_nonnull(h.lu->fault_held);
	scsi_tmf(h.nexus[0], scsi_lun_encode(0), SCSI_TMF_ABORT_TASK, h.lu->fault_held, tmf_done, NULL);
	ck_assert_int_eq(tmf_response, SCSI_TMF_FUNCTION_COMPLETE);
	ck_assert(held.aborted);

	memset(&held, 0, sizeof(held));
	harness_submit(&h, &o, cdb, 16, NULL, 0, &held);
	ck_assert(!held.completed && !held.aborted);
	tmf_response = -1;
	scsi_tmf(h.nexus[1], scsi_lun_encode(0), SCSI_TMF_LOGICAL_UNIT_RESET, NULL, tmf_done, NULL);
	ck_assert_int_eq(tmf_response, SCSI_TMF_FUNCTION_COMPLETE);
	ck_assert(held.aborted);
	harness_clear_ua(&h);

	memset(&held, 0, sizeof(held));
	harness_submit(&h, &o, cdb, 16, NULL, 0, &held);
	ck_assert(!held.completed);
	ck_assert_int_eq(scsi_lu_fault_remove(h.lu, 1), 0);
	ck_assert(held.completed);
	harness_expect_good(&held);
	ck_assert_uint_eq(h.lu->counters.aborted, 2);
}
END_TEST

/* reject-abort-task / ignore-abort-task act on the ABORT TASK naming a command they match; the command goes on. */
START_TEST(abort_task_rejected_or_lost)
{
	struct scsi_fault_rule_params p = rule(SCSI_FAULT_ACTION_HOLD);
	struct harness_opts o = { .nexus = 0 };
	uint8_t cdb[16] = { 0x88, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 1, 0, 0 };
	struct harness_result held;

	p.opcode_count = 1;
	p.opcodes[0] = 0x88;
	add(1, &p);
	p.action = SCSI_FAULT_ACTION_REJECT_ABORT_TASK;
	p.count = 1;
	add(2, &p);
	p.action = SCSI_FAULT_ACTION_IGNORE_ABORT_TASK;
	p.count = 0;
	add(3, &p);
	memset(&held, 0, sizeof(held));
	harness_submit(&h, &o, cdb, 16, NULL, 0, &held);
	ck_assert_ptr_nonnull(h.lu->fault_held);
	tmf_response = -1;
	scsi_tmf(h.nexus[0], scsi_lun_encode(0), SCSI_TMF_ABORT_TASK, h.lu->fault_held, tmf_done, NULL);
	ck_assert_int_eq(tmf_response, SCSI_TMF_FUNCTION_REJECTED);
	ck_assert(!held.aborted && !held.completed);
	tmf_response = -1;
	scsi_tmf(h.nexus[0], scsi_lun_encode(0), SCSI_TMF_ABORT_TASK, h.lu->fault_held, tmf_done, NULL);
	ck_assert_int_eq(tmf_response, SCSI_TMF_NO_RESPONSE);
	ck_assert(!held.aborted && !held.completed);
	ck_assert_int_eq(scsi_lu_fault_remove(h.lu, 3), 0);
	scsi_tmf(h.nexus[0], scsi_lun_encode(0), SCSI_TMF_ABORT_TASK, h.lu->fault_held, tmf_done, NULL);
	ck_assert_int_eq(tmf_response, SCSI_TMF_FUNCTION_COMPLETE);
	ck_assert(held.aborted);
}
END_TEST

/* drop-connection on a transport that cannot drop one (no drop_connection): held, as by a hold rule. */
START_TEST(drop_connection_without_transport_support_holds)
{
	struct scsi_fault_rule_params p = rule(SCSI_FAULT_ACTION_DROP_CONNECTION);
	struct harness_opts o = { .nexus = 0 };
	uint8_t cdb[16] = { 0x88, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 1, 0, 0 };
	struct harness_result held;

	p.opcode_count = 1;
	p.opcodes[0] = 0x88;
	add(1, &p);
	memset(&held, 0, sizeof(held));
	harness_submit(&h, &o, cdb, 16, NULL, 0, &held);
	ck_assert(!held.completed && !held.aborted);
	ck_assert_ptr_nonnull(h.lu->fault_held);
	ck_assert(!h.lu->fault_held->fault_drop);
	tmf_response = -1;
	scsi_tmf(h.nexus[1], scsi_lun_encode(0), SCSI_TMF_LOGICAL_UNIT_RESET, NULL, tmf_done, NULL);
	ck_assert_int_eq(tmf_response, SCSI_TMF_FUNCTION_COMPLETE);
	ck_assert(held.aborted);
}
END_TEST

/* Readiness: NOT READY with the state's ASC; back to ready: 06/28/00 once per I_T nexus. */
START_TEST(readiness_and_not_ready_to_ready)
{
	static const struct {
		enum scsi_lu_readiness state;
		uint16_t asc_ascq;
	} states[] = {
		{ SCSI_LU_BECOMING_READY, 0x0401 },
		{ SCSI_LU_NOT_READY, 0x0402 },
		{ SCSI_LU_OFFLINE, 0x0403 },
		{ SCSI_LU_NO_MEDIUM, 0x3a00 },
	};

	for (unsigned i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		scsi_lu_set_readiness(h.lu, states[i].state);
		tur(&r);
		harness_expect_sense(&r, SENSE_KEY_NOT_READY, states[i].asc_ascq);
		read16(0, 0, 1, &r);
		harness_expect_sense(&r, SENSE_KEY_NOT_READY, states[i].asc_ascq);
		scsi_lu_set_readiness(h.lu, SCSI_LU_READY);
		tur(&r);
		harness_expect_sense(&r, SENSE_KEY_UNIT_ATTENTION, ASC_NOT_READY_TO_READY_CHANGE);
		tur(&r);
		harness_expect_good(&r);
		read16(1, 0, 1, &r);
		harness_expect_sense(&r, SENSE_KEY_UNIT_ATTENTION, ASC_NOT_READY_TO_READY_CHANGE);
	}
}
END_TEST

/* Write protection at run time: 07/27/00 for writes, reads unaffected. */
START_TEST(write_protect_at_run_time)
{
	scsi_lu_set_write_protect(h.lu, true);
	write16(0, 1, &r);
	harness_expect_sense(&r, SENSE_KEY_DATA_PROTECT, ASC_WRITE_PROTECTED);
	read16(0, 0, 1, &r);
	harness_expect_good(&r);
	scsi_lu_set_write_protect(h.lu, false);
	write16(0, 1, &r);
	harness_expect_good(&r);
}
END_TEST

/* Resize: the new capacity, 06/2A/09 on every nexus; shrinking needs allow_shrink. */
START_TEST(resize_with_capacity_ua)
{
	uint8_t rc10[10] = { 0x25 };
	char err[256];

	ck_assert_int_eq(scsi_lu_resize(h.lu, 1024, false, err, sizeof(err)), -1);
	ck_assert_int_eq(scsi_lu_resize(h.lu, 4096, false, err, sizeof(err)), 0);
	harness_run(&h, 0, rc10, 10, NULL, 0, 8, &r);
	harness_expect_sense(&r, SENSE_KEY_UNIT_ATTENTION, ASC_CAPACITY_DATA_HAS_CHANGED);
	harness_run(&h, 0, rc10, 10, NULL, 0, 8, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq((uint32_t)r.data_in[0] << 24 | (uint32_t)r.data_in[1] << 16 | (uint32_t)r.data_in[2] << 8 |
				  r.data_in[3],
			  4095);
	read16(1, 4000, 1, &r); /* the other nexus has its own unit attention */
	harness_expect_sense(&r, SENSE_KEY_UNIT_ATTENTION, ASC_CAPACITY_DATA_HAS_CHANGED);
	read16(1, 4000, 1, &r);
	harness_expect_good(&r);
	ck_assert_int_eq(scsi_lu_resize(h.lu, 1024, true, err, sizeof(err)), 0);
}
END_TEST

/* Counters: by status and sense key, bytes, and the latency histogram adds up. */
START_TEST(counters)
{
	struct scsi_lu_info info;
	uint64_t sum = 0;

	read16(0, 0, 2, &r);
	write16(0, 1, &r);
	read16(0, 5000, 1, &r); /* LBA out of range */
	scsi_lu_describe(h.lu, &info);
	ck_assert_uint_ge(info.counters.commands, 3);
	ck_assert_uint_ge(info.counters.read_bytes, 2 * BS);
	ck_assert_uint_ge(info.counters.write_bytes, BS);
	ck_assert_uint_eq(info.counters.sense_keys[SENSE_KEY_ILLEGAL_REQUEST], 1);
	for (unsigned b = 0; b < 6; b++)
		sum += info.counters.latency[b];
	ck_assert_uint_eq(sum, info.counters.commands - info.counters.aborted);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("fault_rules");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, sense_with_lba_and_count);
	tcase_add_test(tc, every_and_seeded_probability);
	tcase_add_test(tc, medium_error_until_written);
	tcase_add_test(tc, hold_until_abort_reset_or_removal);
	tcase_add_test(tc, abort_task_rejected_or_lost);
	tcase_add_test(tc, drop_connection_without_transport_support_holds);
	tcase_add_test(tc, readiness_and_not_ready_to_ready);
	tcase_add_test(tc, write_protect_at_run_time);
	tcase_add_test(tc, resize_with_capacity_ua);
	tcase_add_test(tc, counters);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
