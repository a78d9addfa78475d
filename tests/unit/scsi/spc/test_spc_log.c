/*
 * spc_log.c, spc_log_pages.c, spc_diag.c, spc_ie.c: LOG SENSE / LOG SELECT
 * (SPC-4 6.5, 6.6, 7.3), SEND DIAGNOSTIC / RECEIVE DIAGNOSTIC RESULTS and
 * the self-tests (SPC-4 5.6, 6.27, 6.42), informational exceptions (SPC-4
 * 7.5.12).  Each test names the rule it checks.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "core/scsi_internal.h"
#include "spc/spc.h"

static struct harness h;
static struct harness_result r;

/* A virtual clock for the device, and an alarm that only records. */
static uint64_t clock_ns;
static uint64_t alarm_at;

static uint64_t fake_now(void *arg)
{
	(void)arg;
	return clock_ns;
}

static void fake_arm(void *arg, uint64_t when)
{
	(void)arg;
	alarm_at = when;
}

static void advance(uint64_t ns)
{
	clock_ns += ns;
	scsi_device_alarm(h.dev);
}

static void setup_params(const struct scsi_lu_params *p)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	clock_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	harness_init(&h, 2048, 512, p);
	scsi_device_set_clock(h.dev, fake_now, NULL);
	harness_clear_ua(&h);
}

static void setup(void)
{
	setup_params(NULL);
}

static void teardown(void)
{
	harness_fini(&h);
}

static void log_sense(int nexus, uint8_t byte1, uint8_t pc_page, uint8_t sub, uint16_t pointer, uint16_t alloc)
{
	uint8_t cdb[10] = { 0x4d, byte1, pc_page, sub, 0, (uint8_t)(pointer >> 8), (uint8_t)pointer,
			    (uint8_t)(alloc >> 8), (uint8_t)alloc, 0 };
	harness_run(&h, nexus, cdb, 10, NULL, 0, 0, &r);
}

static void log_select(uint8_t byte1, uint8_t pc_page, uint8_t sub, const uint8_t *list, uint16_t len)
{
	uint8_t cdb[10] = { 0x4c, byte1, pc_page, sub, 0, 0, 0, (uint8_t)(len >> 8), (uint8_t)len, 0 };
	harness_run(&h, 0, cdb, 10, len ? list : NULL, len, len, &r);
}

static void send_diag(uint8_t byte1, const uint8_t *list, uint16_t len)
{
	uint8_t cdb[6] = { 0x1d, byte1, 0, (uint8_t)(len >> 8), (uint8_t)len, 0 };
	harness_run(&h, 0, cdb, 6, len ? list : NULL, len, len, &r);
}

static void run6(int nexus, uint8_t op, uint8_t b1, uint8_t b4)
{
	uint8_t cdb[6] = { op, b1, 0, 0, b4, 0 };
	harness_run(&h, nexus, cdb, 6, NULL, 0, 0, &r);
}

/* The parameter with code in the LOG SENSE response r: its offset, or 0 if absent. */
static size_t find_param(uint16_t code)
{
	size_t end = 4 + get_be16(r.data_in + 2);

	for (size_t off = 4; off + 4 <= end; off += 4 + r.data_in[off + 3])
		if (get_be16(r.data_in + off) == code)
			return off;
	return 0;
}

static uint64_t counter(uint8_t page, uint16_t code)
{
	size_t off;

	log_sense(0, 0, 0x40 | page, 0, 0, 1024);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	off = find_param(code);
	ck_assert_uint_ne(off, 0);
	ck_assert_uint_eq(r.data_in[off + 3], 8);
	return get_be64(r.data_in + off + 4);
}

/* What cmd.c does at completion (spc_ie_cmd_done, before encoding): a command of op with status and sense key. */
static void complete_as(uint8_t opcode, uint32_t nblocks, uint8_t status, uint8_t key, struct scsi_cmd *cmd)
{
	uint8_t cdb[16] = { opcode };
	struct scsi_sense_info s;

	memset(cmd, 0, sizeof(*cmd));
	cmd->lu = h.lu;
	cmd->nexus = h.nexus[0];
	memcpy(cmd->cdb, cdb, sizeof(cdb));
	cmd->op = scsi_op_lookup(h.lu, cdb, &s);
	ck_assert_ptr_nonnull(cmd->op);
	cmd->nblocks = nblocks;
	cmd->status = status;
	cmd->sense_info = sense_make(key, key == SENSE_KEY_MEDIUM_ERROR ? ASC_UNRECOVERED_READ_ERROR : 0);
	cmd->start_ns = clock_ns;
	spc_ie_cmd_done(cmd);
}

/* SPC-4 7.3.18: the Supported Log Pages page lists every page served, ascending, 00h included; no CDL page without CDL. */
START_TEST(supported_pages)
{
	/* 0Ch: the harness LU has logical block provisioning (test_spc_log_lbp.c) */
	static const uint8_t want[] = { 0x00, 0x02, 0x03, 0x05, 0x06, 0x0c, 0x0d, 0x0e, 0x10, 0x15, 0x19, 0x2f };

	log_sense(0, 0, 0x40, 0, 0, 255);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in[0], 0x00);
	ck_assert_uint_eq(get_be16(r.data_in + 2), sizeof(want));
	ck_assert_mem_eq(r.data_in + 4, want, sizeof(want));
	/* Every page listed is served (sg_logs -a reads each). */
	for (size_t i = 0; i < sizeof(want); i++) {
		log_sense(0, 0, 0x40 | want[i], 0, 0, 4096);
		harness_expect_good(&r);
		ck_assert_uint_eq(r.data_in[0] & 0x3f, want[i]);
		ck_assert_uint_ne(get_be16(r.data_in + 2), 0);
	}
}
END_TEST

/* SPC-4 7.3.18 / 7.3.19: 00h/FFh lists (page, subpage) pairs with SPF = 1, xxh/FFh included. */
START_TEST(supported_subpages)
{
	log_sense(0, 0, 0x40, 0xff, 0, 1024);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in[0], 0x40);
	ck_assert_uint_eq(r.data_in[1], 0xff);
	ck_assert_uint_eq(r.data_in[4], 0x00);
	ck_assert_uint_eq(r.data_in[5], 0x00);
	ck_assert_uint_eq(r.data_in[6], 0x00);
	ck_assert_uint_eq(r.data_in[7], 0xff);
	/* 19h/FFh: 19h/00h and 19h/FFh, no 21h without command duration limits */
	log_sense(0, 0, 0x40 | 0x19, 0xff, 0, 1024);
	harness_expect_good(&r);
	ck_assert_uint_eq(get_be16(r.data_in + 2), 4);
	ck_assert_uint_eq(r.data_in[5], 0x00);
	ck_assert_uint_eq(r.data_in[7], 0xff);
}
END_TEST

/* SPC-4 6.6: an unsupported page -> 05/24/00 on the PAGE CODE; a page without that subpage -> on SUBPAGE CODE. */
START_TEST(unsupported_page)
{
	log_sense(0, 0, 0x40 | 0x30, 0, 0, 255);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 2, 5);
	/* cdladm: 19h/21h on an LU without command duration limits -> 05/24/00 */
	log_sense(0, 0, 0x40 | 0x19, 0x21, 0, 2048);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 3, 7);
	/* a reserved CDB bit (byte 4) -> 05/24/00 from the opcode table's usage data */
	{
		uint8_t cdb[10] = { 0x4d, 0, 0x40, 0, 0x01, 0, 0, 0, 255, 0 };
		harness_run(&h, 0, cdb, 10, NULL, 0, 0, &r);
		harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	}
}
END_TEST

/* SPC-4 4.2.5.6: the ALLOCATION LENGTH truncates; a 4-byte probe gets the header with the whole PAGE LENGTH. */
START_TEST(allocation_length)
{
	log_sense(0, 0, 0x40 | 0x10, 0, 0, 4);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in_len, 4);
	ck_assert_uint_eq(r.data_in[0], 0x10);
	ck_assert_uint_eq(get_be16(r.data_in + 2), 0x190); /* smartctl and smartd require exactly 0190h */
	log_sense(0, 0, 0x40 | 0x10, 0, 0, 0);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in_len, 0);
}
END_TEST

/* SPC-4 6.6: parameters from the PARAMETER POINTER on; past the largest code -> 05/24/00 on byte 5. */
START_TEST(parameter_pointer)
{
	log_sense(0, 0, 0x40 | 0x03, 0, 5, 1024);
	harness_expect_good(&r);
	ck_assert_uint_eq(get_be16(r.data_in + 2), 24);
	ck_assert_uint_eq(get_be16(r.data_in + 4), 5);
	ck_assert_uint_eq(get_be16(r.data_in + 16), 6);
	log_sense(0, 0, 0x40 | 0x03, 0, 7, 1024);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 5, 7);
}
END_TEST

/* The error counters count what completed: bytes of GOOD reads, uncorrected MEDIUM ERRORs, RECOVERED ERRORs. */
START_TEST(counters_count)
{
	struct scsi_cmd cmd;

	complete_as(0x28, 8, SCSI_STATUS_GOOD, 0, &cmd);
	complete_as(0x28, 8, SCSI_STATUS_CHECK_CONDITION, SENSE_KEY_MEDIUM_ERROR, &cmd);
	complete_as(0x28, 4, SCSI_STATUS_CHECK_CONDITION, SENSE_KEY_RECOVERED_ERROR, &cmd);
	complete_as(0x2a, 2, SCSI_STATUS_GOOD, 0, &cmd);
	complete_as(0x2f, 3, SCSI_STATUS_CHECK_CONDITION, SENSE_KEY_MEDIUM_ERROR, &cmd);
	complete_as(0x00, 0, SCSI_STATUS_CHECK_CONDITION, SENSE_KEY_HARDWARE_ERROR, &cmd);
	ck_assert_uint_eq(counter(0x03, 0x0005), 12 * 512);
	ck_assert_uint_eq(counter(0x03, 0x0006), 1);
	ck_assert_uint_eq(counter(0x03, 0x0003), 1);
	ck_assert_uint_eq(counter(0x03, 0x0004), 2);
	ck_assert_uint_eq(counter(0x02, 0x0005), 2 * 512);
	ck_assert_uint_eq(counter(0x02, 0x0006), 0);
	ck_assert_uint_eq(counter(0x05, 0x0006), 1);
	ck_assert_uint_eq(counter(0x06, 0x0000), 1);
	/* PC 11b (default cumulative) reads the defaults, 0 */
	log_sense(0, 0, 0xc0 | 0x03, 0, 6, 1024);
	harness_expect_good(&r);
	ck_assert_uint_eq(get_be64(r.data_in + 8), 0);
	/* 19h/00h: read and write commands, blocks */
	log_sense(0, 0, 0x40 | 0x19, 0, 0, 1024);
	harness_expect_good(&r);
	ck_assert_uint_eq(get_be64(r.data_in + 8), 1);       /* NUMBER OF READ COMMANDS (the GOOD one) */
	ck_assert_uint_eq(get_be64(r.data_in + 16), 1);      /* NUMBER OF WRITE COMMANDS */
	ck_assert_uint_eq(get_be64(r.data_in + 24), 2);      /* LOGICAL BLOCKS RECEIVED */
	ck_assert_uint_eq(get_be64(r.data_in + 32), 8);      /* LOGICAL BLOCKS TRANSMITTED */
}
END_TEST

/* SPC-4 6.5, table 147: PCR = 1 without a list resets the cumulative values; PC = 01b with page 03h resets only it. */
START_TEST(select_pcr_resets)
{
	struct scsi_cmd cmd;

	complete_as(0x28, 8, SCSI_STATUS_CHECK_CONDITION, SENSE_KEY_MEDIUM_ERROR, &cmd);
	complete_as(0x2a, 8, SCSI_STATUS_CHECK_CONDITION, SENSE_KEY_MEDIUM_ERROR, &cmd);
	log_select(0, 0x40 | 0x03, 0, NULL, 0);
	harness_expect_good(&r);
	ck_assert_uint_eq(counter(0x03, 0x0006), 0);
	ck_assert_uint_eq(counter(0x02, 0x0006), 1);
	log_select(0x02, 0, 0, NULL, 0);
	harness_expect_good(&r);
	ck_assert_uint_eq(counter(0x02, 0x0006), 0);
}
END_TEST

/* SPC-4 6.5: PCR = 1 with a parameter list -> 05/24/00 byte 1 bit 1; a list with PAGE CODE set -> on byte 2. */
START_TEST(select_cdb_fields)
{
	uint8_t list[16] = { 0x03, 0x00, 0x00, 0x0c, 0x00, 0x06, 0x00, 0x08 };

	log_select(0x02, 0x40, 0, list, 16);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 1, 1);
	log_select(0, 0x40 | 0x03, 0, list, 16);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 2, 5);
	/* thresholds cannot be set: PC 00b with a list */
	log_select(0, 0x00, 0, list, 16);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 2, 7);
	/* no list, a page the LU lacks */
	log_select(0, 0x40 | 0x30, 0, NULL, 0);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 2, 5);
}
END_TEST

/* SPC-4 6.5: a parameter list sets counters; a page or parameter that cannot be set -> 05/26/00 on it. */
START_TEST(select_parameter_list)
{
	uint8_t list[32] = { 0x03, 0x00, 0x00, 0x0c, 0x00, 0x06, 0x00, 0x08, 0, 0, 0, 0, 0, 0, 0, 42 };
	uint8_t bad_page[8] = { 0x10, 0x00, 0x00, 0x04, 0x00, 0x01, 0x03, 0x00 };
	uint8_t bad_code[16] = { 0x03, 0x00, 0x00, 0x0c, 0x00, 0x09, 0x00, 0x08 };
	uint8_t cut[16] = { 0x03, 0x00, 0x00, 0x0c, 0x00, 0x06, 0x00, 0x08 };

	log_select(0, 0x40, 0, list, 16);
	harness_expect_good(&r);
	ck_assert_uint_eq(counter(0x03, 0x0006), 42);
	log_select(0, 0x40, 0, bad_page, 8);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	log_select(0, 0x40, 0, bad_code, 16);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	ck_assert_uint_eq(counter(0x03, 0x0006), 42);
	/* the list ends inside the page */
	log_select(0, 0x40, 0, cut, 10);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
}
END_TEST

/* SPC-4 6.6 PPC = 1: only the parameters that changed since the last LOG SENSE of the page. */
START_TEST(ppc_changed_only)
{
	struct scsi_cmd cmd;

	log_sense(0, 0, 0x40 | 0x03, 0, 0, 1024);
	harness_expect_good(&r);
	complete_as(0x28, 8, SCSI_STATUS_CHECK_CONDITION, SENSE_KEY_MEDIUM_ERROR, &cmd);
	log_sense(0, 0x02, 0x40 | 0x03, 0, 0, 1024);
	harness_expect_good(&r);
	/* 0004h and 0006h moved */
	ck_assert_uint_eq(get_be16(r.data_in + 2), 24);
	ck_assert_uint_eq(get_be16(r.data_in + 4), 4);
	ck_assert_uint_eq(get_be16(r.data_in + 16), 6);
}
END_TEST

/* SPC-4 6.6 SP = 1 saves; the counters come back after a restart of the LU (the "log_pages" state file). */
START_TEST(sp_saves)
{
	struct scsi_cmd cmd;
	uint8_t before[512];
	size_t len;
	uint8_t *img;

	complete_as(0x28, 8, SCSI_STATUS_CHECK_CONDITION, SENSE_KEY_MEDIUM_ERROR, &cmd);
	log_sense(0, 0x01, 0x40 | 0x03, 0, 0, 512);
	harness_expect_good(&r);
	memcpy(before, r.data_in, sizeof(before));
	img = spc_log_save_image(h.lu, &len);
	ck_assert_ptr_nonnull(img);
	/* the file now holds the same image: load it into a reset LU state */
	spc_log_fini(h.lu);
	ck_assert_int_eq(spc_log_init(h.lu), 0);
	ck_assert_uint_eq(counter(0x03, 0x0006), 1);
	free(img);
}
END_TEST

/* SPC-4 7.3.8, 7.5.12: page 2Fh: no exception; a predict-failure rule with DEXCPT = 0 -> 5D/00; TEST -> 5D/FF. */
START_TEST(ie_log_page)
{
	struct scsi_mode_defaults md = { 0 };

	log_sense(0, 0, 0x40 | 0x2f, 0, 0, 255);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in[8], 0);
	spc_ie_fault(h.lu, ASC_FAILURE_PREDICTION_THRESHOLD_EXCEEDED, 0, 0);
	log_sense(0, 0, 0x40 | 0x2f, 0, 0, 255);
	ck_assert_uint_eq(r.data_in[8], 0); /* DEXCPT = 1 by default: IE operations disabled */
	md.set = 1u << SCSI_MODE_DEXCPT | 1u << SCSI_MODE_MRIE;
	md.value[SCSI_MODE_DEXCPT] = 0;
	md.value[SCSI_MODE_MRIE] = 6;
	scsi_lu_set_mode_defaults(h.lu, &md);
	harness_clear_ua(&h);
	log_sense(0, 0, 0x40 | 0x2f, 0, 0, 255);
	ck_assert_uint_eq(r.data_in[8], 0x5d);
	ck_assert_uint_eq(r.data_in[9], 0x00);
	ck_assert_uint_eq(r.data_in[10], 30);
	/* MRIE 6: REQUEST SENSE returns NO SENSE, 5D/00 */
	run6(1, 0x03, 0, 18);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in[2] & 0x0f, SENSE_KEY_NO_SENSE);
	ck_assert_uint_eq(r.data_in[12], 0x5d);
	spc_ie_fault(h.lu, 0, 0, 0);
	log_sense(0, 0, 0x40 | 0x2f, 0, 0, 255);
	ck_assert_uint_eq(r.data_in[8], 0);
}
END_TEST

/* SPC-4 7.5.12 MRIE 2h: every I_T nexus gets a UNIT ATTENTION with the exception's ASC/ASCQ, once per report. */
START_TEST(ie_mrie2_unit_attention)
{
	struct scsi_mode_defaults md = { .set = 1u << SCSI_MODE_DEXCPT | 1u << SCSI_MODE_MRIE };

	md.value[SCSI_MODE_MRIE] = 2;
	scsi_lu_set_mode_defaults(h.lu, &md);
	harness_clear_ua(&h);
	spc_ie_fault(h.lu, 0x5d10, 0, 0);
	run6(1, 0x00, 0, 0);
	harness_expect_sense(&r, SENSE_KEY_UNIT_ATTENTION, 0x5d10);
	run6(1, 0x00, 0, 0);
	harness_expect_good(&r);
	run6(0, 0x00, 0, 0);
	harness_expect_sense(&r, SENSE_KEY_UNIT_ATTENTION, 0x5d10);
}
END_TEST

/* SPC-4 7.5.12 MRIE 4h: the next GOOD command ends RECOVERED ERROR with the exception; INQUIRY never carries it. */
START_TEST(ie_mrie4_recovered_error)
{
	struct scsi_mode_defaults md = { .set = 1u << SCSI_MODE_DEXCPT | 1u << SCSI_MODE_MRIE };
	struct scsi_cmd cmd;

	md.value[SCSI_MODE_MRIE] = 4;
	scsi_lu_set_mode_defaults(h.lu, &md);
	harness_clear_ua(&h);
	spc_ie_fault(h.lu, ASC_FAILURE_PREDICTION_THRESHOLD_EXCEEDED, 0, 0);
	complete_as(0x12, 0, SCSI_STATUS_GOOD, 0, &cmd);
	ck_assert_uint_eq(cmd.status, SCSI_STATUS_GOOD);
	complete_as(0x28, 1, SCSI_STATUS_GOOD, 0, &cmd);
	ck_assert_uint_eq(cmd.status, SCSI_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(cmd.sense_info.key, SENSE_KEY_RECOVERED_ERROR);
	ck_assert_uint_eq(cmd.sense_info.asc_ascq, 0x5d00);
	/* INTERVAL TIMER 0: reported once */
	complete_as(0x28, 1, SCSI_STATUS_GOOD, 0, &cmd);
	ck_assert_uint_eq(cmd.status, SCSI_STATUS_GOOD);
}
END_TEST

/* SPC-4 7.5.12: TEST = 1 with DEXCPT = 1 -> 05/26/00; TEST = 1, DEXCPT = 0 -> a false prediction 5D/FF. */
START_TEST(ie_test_bit)
{
	uint8_t list[8 + 12] = { 0 };
	uint8_t cdb[10] = { 0x55, 0x10, 0, 0, 0, 0, 0, 0, 20, 0 };

	list[8] = 0x1c;
	list[9] = 0x0a;
	list[10] = 0x0c; /* DEXCPT | TEST */
	harness_run(&h, 0, cdb, 10, list, 20, 20, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	list[10] = 0x04; /* TEST */
	list[11] = 0x06; /* MRIE 6 */
	harness_run(&h, 0, cdb, 10, list, 20, 20, &r);
	harness_expect_good(&r);
	log_sense(0, 0, 0x40 | 0x2f, 0, 0, 255);
	ck_assert_uint_eq(r.data_in[8], 0x5d);
	ck_assert_uint_eq(r.data_in[9], 0xff);
}
END_TEST

/* The temperature page shows a temperature rule's values; above the threshold with EWASC = 1 -> 0B/01. */
START_TEST(temperature)
{
	uint8_t list[8 + 12] = { 0 };
	uint8_t cdb[10] = { 0x55, 0x10, 0, 0, 0, 0, 0, 0, 20, 0 };

	list[8] = 0x1c;
	list[9] = 0x0a;
	list[10] = 0x10; /* EWASC, DEXCPT = 0 */
	list[11] = 0x06;
	harness_run(&h, 0, cdb, 10, list, 20, 20, &r);
	harness_expect_good(&r);
	spc_ie_fault(h.lu, 0, 60, 50);
	log_sense(0, 0, 0x40 | 0x0d, 0, 0, 255);
	harness_expect_good(&r);
	ck_assert_uint_eq(get_be16(r.data_in + 2), 12);
	ck_assert_uint_eq(r.data_in[9], 60);
	ck_assert_uint_eq(r.data_in[15], 50);
	log_sense(0, 0, 0x40 | 0x2f, 0, 0, 255);
	ck_assert_uint_eq(r.data_in[8], 0x0b);
	ck_assert_uint_eq(r.data_in[9], 0x01);
}
END_TEST

/* SPC-4 6.42: the default self-test passes (GOOD) and is logged with code 000b. */
START_TEST(default_self_test)
{
	send_diag(0x04, NULL, 0);
	harness_expect_good(&r);
	log_sense(0, 0, 0x40 | 0x10, 0, 0, 1024);
	ck_assert_uint_eq(get_be16(r.data_in + 4), 1);
	ck_assert_uint_eq(r.data_in[8], 0x00);
	/* SELFTEST = 1 with a SELF-TEST CODE -> 05/24/00 */
	send_diag(0x24, NULL, 0);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 1, 7);
	/* abort with no background self-test -> 05/24/00 */
	send_diag(0x80, NULL, 0);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
}
END_TEST

/* A medium-error fault rule makes the self-test fail: 04/3E/03, log result 6h, first failure the bad LBA. */
START_TEST(self_test_fails_on_bad_block)
{
	struct scsi_fault_rule_params p = { .action = SCSI_FAULT_ACTION_MEDIUM_ERROR, .has_lba = true,
					    .lba_first = 100, .lba_last = 103 };
	char err[128];

	ck_assert_int_eq(scsi_lu_fault_add(h.lu, 1, &p, err, sizeof(err)), 0);
	send_diag(0x04, NULL, 0);
	harness_expect_sense(&r, SENSE_KEY_HARDWARE_ERROR, ASC_LOGICAL_UNIT_FAILED_SELF_TEST);
	log_sense(0, 0, 0x40 | 0x10, 0, 0, 1024);
	ck_assert_uint_eq(r.data_in[8] & 0x0f, 0x6);
	ck_assert_uint_eq(get_be64(r.data_in + 12), 100);
	ck_assert_uint_eq(r.data_in[20], SENSE_KEY_MEDIUM_ERROR);
	ck_assert_uint_eq(r.data_in[21], 0x11);
}
END_TEST

/* SPC-4 5.6: a background short self-test: result Fh and 02/04/09 with progress while it runs, then 0; abortable. */
START_TEST(background_self_test)
{
	scsi_device_set_alarm(h.dev, fake_arm, NULL);
	send_diag(0x20, NULL, 0);
	harness_expect_good(&r);
	log_sense(0, 0, 0x40 | 0x10, 0, 0, 1024);
	ck_assert_uint_eq(r.data_in[8], 0x20 | 0x0f);
	advance(1000000000ull);
	run6(0, 0x03, 0, 18);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in[2] & 0x0f, SENSE_KEY_NOT_READY);
	ck_assert_uint_eq(r.data_in[12], 0x04);
	ck_assert_uint_eq(r.data_in[13], 0x09);
	ck_assert_uint_eq(r.data_in[15], 0x80);
	ck_assert_uint_ge(get_be16(r.data_in + 16), 30000);
	/* another self-test meanwhile -> 02/04/09 */
	send_diag(0x04, NULL, 0);
	harness_expect_sense(&r, SENSE_KEY_NOT_READY, ASC_LOGICAL_UNIT_NOT_READY_SELF_TEST_IN_PROGRESS);
	advance(1000000000ull);
	log_sense(0, 0, 0x40 | 0x10, 0, 0, 1024);
	ck_assert_uint_eq(r.data_in[8], 0x20);
	/* an extended one, aborted: result 1 */
	send_diag(0x40, NULL, 0);
	harness_expect_good(&r);
	send_diag(0x80, NULL, 0);
	harness_expect_good(&r);
	log_sense(0, 0, 0x40 | 0x10, 0, 0, 1024);
	ck_assert_uint_eq(r.data_in[8], 0x40 | 0x01);
	ck_assert_uint_eq(get_be16(r.data_in + 24), 2); /* the short one is now the second */
}
END_TEST

/* SPC-4 5.6: a foreground self-test: the command completes with the test; meanwhile others get 02/04/09. */
START_TEST(foreground_self_test)
{
	struct harness_result fg;
	struct harness_opts o = { .nexus = 0 };
	uint8_t cdb[6] = { 0x1d, 0xa0, 0, 0, 0, 0 };

	scsi_device_set_alarm(h.dev, fake_arm, NULL);
	memset(&fg, 0, sizeof(fg));
	harness_submit(&h, &o, cdb, 6, NULL, 0, &fg);
	ck_assert(!fg.completed);
	run6(1, 0x00, 0, 0);
	harness_expect_sense(&r, SENSE_KEY_NOT_READY, ASC_LOGICAL_UNIT_NOT_READY_SELF_TEST_IN_PROGRESS);
	run6(1, 0x12, 0, 36);
	harness_expect_good(&r);
	advance(2000000000ull);
	ck_assert(fg.completed);
	harness_expect_good(&fg);
	run6(1, 0x00, 0, 0);
	harness_expect_good(&r);
}
END_TEST

/* SPC-4 6.27 / 7.2.2: RECEIVE DIAGNOSTIC RESULTS: the Supported Diagnostic Pages page; another page -> 05/24/00. */
START_TEST(receive_diagnostic)
{
	uint8_t page0[4] = { 0 };
	uint8_t cdb[6] = { 0x1c, 0x01, 0x00, 0x10, 0x00, 0 };

	send_diag(0x10, page0, 4);
	harness_expect_good(&r);
	cdb[1] = 0;
	harness_run(&h, 0, cdb, 6, NULL, 0, 0, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in_len, 5);
	ck_assert_uint_eq(r.data_in[4], 0x00);
	cdb[1] = 1;
	cdb[2] = 0x40;
	harness_run(&h, 0, cdb, 6, NULL, 0, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 2, 7);
}
END_TEST

static void setup_cdl(void)
{
	struct scsi_lu_params p = { .kind = SCSI_LU_CONVENTIONAL, .cdl_pages = SCSI_CDL_T2 };

	setup_params(&p);
}

/* SPC-6 19h/21h (sg_logs' layout): 0001h, 0021h-0027h, 0041h-0047h, four counters from lu->cdl_stats; PCR resets. */
START_TEST(cdl_statistics)
{
	size_t off;

	h.lu->cdl_stats[0][2].commands = 7;
	h.lu->cdl_stats[0][2].active_miss = 3;
	h.lu->cdl_stats[1][6].both_miss = 5;
	log_sense(0, 0, 0x40 | 0x19, 0x21, 0, 2048);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in[0], 0x40 | 0x19);
	ck_assert_uint_eq(r.data_in[1], 0x21);
	ck_assert_uint_eq(get_be16(r.data_in + 2), 8 + 14 * 20);
	off = find_param(0x0023);
	ck_assert_uint_eq(r.data_in[off + 3], 0x10);
	ck_assert_uint_eq(get_be32(r.data_in + off + 8), 3);
	ck_assert_uint_eq(get_be32(r.data_in + off + 16), 7);
	off = find_param(0x0047);
	ck_assert_uint_eq(get_be32(r.data_in + off + 12), 5);
	/* listed in 00h/FFh */
	log_sense(0, 0, 0x40, 0xff, 0, 1024);
	{
		bool found = false;

		for (size_t i = 4; i + 1 < r.data_in_len; i += 2)
			found |= r.data_in[i] == 0x19 && r.data_in[i + 1] == 0x21;
		ck_assert(found);
	}
	log_select(0x02, 0x40 | 0x19, 0x21, NULL, 0);
	harness_expect_good(&r);
	ck_assert_uint_eq(h.lu->cdl_stats[0][2].commands, 0);
	ck_assert_uint_eq(h.lu->cdl_stats[1][6].both_miss, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spc_log");
	TCase *tc = tcase_create("log");
	TCase *cdl = tcase_create("cdl");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, supported_pages);
	tcase_add_test(tc, supported_subpages);
	tcase_add_test(tc, unsupported_page);
	tcase_add_test(tc, allocation_length);
	tcase_add_test(tc, parameter_pointer);
	tcase_add_test(tc, counters_count);
	tcase_add_test(tc, select_pcr_resets);
	tcase_add_test(tc, select_cdb_fields);
	tcase_add_test(tc, select_parameter_list);
	tcase_add_test(tc, ppc_changed_only);
	tcase_add_test(tc, sp_saves);
	tcase_add_test(tc, ie_log_page);
	tcase_add_test(tc, ie_mrie2_unit_attention);
	tcase_add_test(tc, ie_mrie4_recovered_error);
	tcase_add_test(tc, ie_test_bit);
	tcase_add_test(tc, temperature);
	tcase_add_test(tc, default_self_test);
	tcase_add_test(tc, self_test_fails_on_bad_block);
	tcase_add_test(tc, background_self_test);
	tcase_add_test(tc, foreground_self_test);
	tcase_add_test(tc, receive_diagnostic);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(cdl, setup_cdl, teardown);
	tcase_add_test(cdl, cdl_statistics);
	suite_add_tcase(s, cdl);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
