/* sbc_format.c (and sbc_background.c): FORMAT UNIT (SBC-4 5.4). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "in_progress.h"
#include "manual_executor.h"
#include "core/scsi_internal.h"
#include "spy_backend.h"
#include "zbc/zbc.h"

#define BS 512
#define NUM_BLOCKS 2048           /* 1 MiB */
#define BIG_NUM_BLOCKS 8192       /* 4 MiB: four 1 MiB pattern chunks */

static struct harness h;
static struct spy_backend *spy;
static struct manual_executor mex;

static void fill(uint8_t value)
{
	size_t len = (size_t)h.lu->num_blocks * BS;
	uint8_t *buf = malloc(len);

	memset(buf, value, len);
	ck_assert_int_eq(h.lu->backend->ops->write(h.lu->backend, buf, len, 0, 0), 0);
	free(buf);
}

static void setup_lu(uint64_t num_blocks, const struct scsi_lu_params *p, bool manual)
{
	harness_init(&h, num_blocks, BS, p);
	harness_clear_ua(&h);
	fill('a');
	spy = spy_backend_install(h.lu);
	if (manual) {
		manual_executor_init(&mex);
		h.dev->executor = &mex.ex;
	}
}

static void setup(void)
{
	setup_lu(NUM_BLOCKS, NULL, false); /* thin provisioned, synchronous executor */
}

static void teardown(void)
{
	if (h.dev->executor == &mex.ex)
		manual_executor_run(&mex, ~0u);
	harness_fini(&h);
}

static void reinit(uint64_t num_blocks, const struct scsi_lu_params *p, bool manual)
{
	teardown();
	setup_lu(num_blocks, p, manual);
}

static struct scsi_lu_params thick_params(void)
{
	struct scsi_lu_params p;

	memset(&p, 0, sizeof(p));
	p.kind = SCSI_LU_CONVENTIONAL;
	return p;
}

static void format_unit(int nexus, uint8_t byte1, const uint8_t *list, uint32_t len, struct harness_result *r)
{
	uint8_t cdb[6] = { 0x04, byte1 };

	harness_run(&h, nexus, cdb, 6, len ? list : NULL, len, 0, r);
}

static bool blocks_match(const uint8_t *pattern, size_t pattern_len)
{
	size_t len = (size_t)h.lu->num_blocks * BS;
	uint8_t *buf = malloc(len);
	bool ok = true;

	ck_assert_int_eq(h.lu->backend->ops->read(h.lu->backend, buf, len, 0), 0);
	for (size_t i = 0; i < len && ok; i++)
		if (buf[i] != pattern[(i % BS) % pattern_len])
			ok = false;
	free(buf);
	return ok;
}

static void assert_check_condition(const struct harness_result *r, uint8_t key, uint16_t asc_ascq)
{
	ck_assert(r->completed);
	ck_assert_uint_eq(r->status, SCSI_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(harness_sense_key(r), key);
	ck_assert_uint_eq(harness_asc_ascq(r), asc_ascq);
}

static void assert_field_pointer(const struct harness_result *r, uint8_t byte15, uint16_t field)
{
	ck_assert_uint_eq(r->sense[15], byte15);
	ck_assert_uint_eq(get_be16(r->sense + 16), field);
}

static void tur(int nexus, struct harness_result *r)
{
	static const uint8_t cdb[6] = { 0x00 };

	harness_run(&h, nexus, cdb, 6, NULL, 0, 0, r);
}

#define FMT ASC_LOGICAL_UNIT_NOT_READY_FORMAT_IN_PROGRESS

static void assert_format_in_progress(int nexus, uint16_t progress)
{
	in_progress_expect_tur(&h, nexus, FMT, progress);
}

static void request_sense(int nexus, bool desc, struct harness_result *r)
{
	uint8_t cdb[6] = { 0x03, desc ? 0x01 : 0x00, 0, 0, 252, 0 };

	harness_run(&h, nexus, cdb, 6, NULL, 0, 0, r);
}

/* REQUEST SENSE while the format runs (SBC-4 5.4): NOT READY, FORMAT IN PROGRESS and the progress. */
static uint16_t request_sense_progress(int nexus)
{
	return in_progress_request_sense(&h, nexus, FMT);
}

/*
 * SBC-4 5.4 (FORMAT UNIT, while the format operation is in progress): every
 * command but INQUIRY, REPORT LUNS and REQUEST SENSE is terminated with CHECK
 * CONDITION, NOT READY, LOGICAL UNIT NOT READY, FORMAT IN PROGRESS (02/04/04)
 * carrying the progress indication.
 */
static void assert_only_informational_commands(int nexus, uint16_t progress)
{
	in_progress_only_informational(&h, spy, nexus, FMT, progress);
}

/* Lets one more chunk of the format run; the progress indication must move forward to expected. */
static void run_chunk(uint16_t *progress, uint16_t expected)
{
	uint16_t now;

	ck_assert_uint_eq(manual_executor_run(&mex, 1), 1);
	now = request_sense_progress(0);
	ck_assert_uint_gt(now, *progress);
	ck_assert_uint_eq(now, expected);
	assert_format_in_progress(1, now);
	*progress = now;
}

/* After the format: TEST UNIT READY is GOOD, REQUEST SENSE has NO SENSE (SPC-4 6.39) and no progress. */
static void assert_format_over(void)
{
	struct harness_result r;

	ck_assert(!h.lu->progress.active);
	for (int nexus = 0; nexus < 2; nexus++) {
		tur(nexus, &r);
		harness_expect_good(&r);
		ck_assert_uint_eq(r.sense_len, 0);
		request_sense(nexus, false, &r);
		harness_expect_good(&r);
		ck_assert_uint_eq(r.data_in[2] & 0x0f, SENSE_KEY_NO_SENSE);
		ck_assert_uint_eq(get_be16(r.data_in + 12), ASC_NO_ADDITIONAL_SENSE_INFORMATION);
		ck_assert_uint_eq(r.data_in[15], 0x00);
	}
}

/* SBC-4 5.4: FMTDATA = 0 formats with the defaults: a thin LU is deallocated, reads return zeros. */
START_TEST(fmtdata_zero_deallocates_thin_lu)
{
	static const uint8_t zero[1] = { 0 };
	struct harness_result r;

	format_unit(0, 0x00, NULL, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(spy->discarded_bytes, (uint64_t)NUM_BLOCKS * BS);
	ck_assert_uint_eq(spy->zeroes + spy->writes, 0);
	ck_assert(blocks_match(zero, 1));
	ck_assert(!h.lu->progress.active);
}
END_TEST

/* A fully provisioned LU is zeroed and stays mapped (write_zeroes, no discard). */
START_TEST(fmtdata_zero_zeroes_thick_lu)
{
	static const uint8_t zero[1] = { 0 };
	struct scsi_lu_params p = thick_params();
	struct harness_result r;

	reinit(NUM_BLOCKS, &p, false);
	format_unit(0, 0x00, NULL, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(spy->zeroed_bytes, (uint64_t)NUM_BLOCKS * BS);
	ck_assert_uint_eq(spy->zeroes_may_discard + spy->discards, 0);
	ck_assert(blocks_match(zero, 1));
}
END_TEST

/* FMTPINFO != 0 without protection information: 05/24/00, byte 1 bit 7. */
START_TEST(fmtpinfo_refused)
{
	struct harness_result r;

	format_unit(0, 0x80, NULL, 0, &r);
	assert_check_condition(&r, 0x5, 0x2400);
	assert_field_pointer(&r, 0xc8 | 7, 1);
	ck_assert_uint_eq(spy->discards, 0);
}
END_TEST

/* SBC-4 5.4 (parameter list header): FOV = 0 with DCRT (or IP, DPRY, STPF) set -> 05/26/00 on that bit. */
START_TEST(fov_zero_with_options_refused)
{
	static const uint8_t dcrt[4] = { 0x00, 0x20, 0x00, 0x00 };
	static const uint8_t ip[4] = { 0x00, 0x08, 0x00, 0x00 };
	struct harness_result r;

	format_unit(0, 0x10, dcrt, 4, &r);
	assert_check_condition(&r, 0x5, 0x2600);
	assert_field_pointer(&r, 0x88 | 5, 1); /* SKSV, C/D = parameter list, BPV, bit 5 */
	format_unit(0, 0x10, ip, 4, &r);
	assert_check_condition(&r, 0x5, 0x2600);
	assert_field_pointer(&r, 0x88 | 3, 1);
	ck_assert_uint_eq(spy->discards, 0);
}
END_TEST

/* PROTECTION FIELD USAGE != 0 without PI: 05/26/00, byte 0. */
START_TEST(protection_field_usage_refused)
{
	static const uint8_t list[4] = { 0x01, 0x00, 0x00, 0x00 };
	struct harness_result r;

	format_unit(0, 0x10, list, 4, &r);
	assert_check_condition(&r, 0x5, 0x2600);
	assert_field_pointer(&r, 0x88, 0);
}
END_TEST

/* A defect list (DEFECT LIST LENGTH != 0) is not supported: 05/26/00 on the length field. */
START_TEST(defect_list_refused)
{
	static const uint8_t short_list[8] = { 0x00, 0x80, 0x00, 0x04, 0, 0, 0, 0 };
	static const uint8_t long_list[12] = { 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0, 0, 0, 0 };
	struct harness_result r;

	format_unit(0, 0x10, short_list, 8, &r);
	assert_check_condition(&r, 0x5, 0x2600);
	assert_field_pointer(&r, 0x80, 2);
	format_unit(0, 0x30, long_list, 12, &r); /* LONGLIST */
	assert_check_condition(&r, 0x5, 0x2600);
	assert_field_pointer(&r, 0x80, 4);
}
END_TEST

/* Long header: P_I_INFORMATION / PROTECTION INTERVAL EXPONENT != 0 without PI -> 05/26/00, byte 3. */
START_TEST(long_header_pi_fields_refused)
{
	static const uint8_t list[8] = { 0x00, 0x00, 0x00, 0x10, 0, 0, 0, 0 };
	struct harness_result r;

	format_unit(0, 0x30, list, 8, &r);
	assert_check_condition(&r, 0x5, 0x2600);
	assert_field_pointer(&r, 0x88 | 4, 3);
}
END_TEST

/* Initialization pattern descriptor errors (SBC-4 5.4, initialization pattern descriptor). */
START_TEST(initialization_pattern_errors)
{
	static const uint8_t repeat_empty[8] = { 0x00, 0x88, 0, 0, 0x00, 0x01, 0x00, 0x00 };
	static const uint8_t default_with_length[10] = { 0x00, 0x88, 0, 0, 0x00, 0x00, 0x00, 0x02, 1, 2 };
	static const uint8_t bad_type[10] = { 0x00, 0x88, 0, 0, 0x00, 0x02, 0x00, 0x02, 1, 2 };
	static const uint8_t truncated[10] = { 0x00, 0x88, 0, 0, 0x00, 0x01, 0x00, 0x08, 1, 2 };
	static const uint8_t modifier[10] = { 0x00, 0x88, 0, 0, 0x40, 0x01, 0x00, 0x02, 1, 2 };
	struct harness_result r;

	/* type 01h with INITIALIZATION PATTERN LENGTH 0 */
	format_unit(0, 0x10, repeat_empty, 8, &r);
	assert_check_condition(&r, 0x5, 0x2600);
	assert_field_pointer(&r, 0x80, 6);
	/* type 00h (default) takes no pattern */
	format_unit(0, 0x10, default_with_length, 10, &r);
	assert_check_condition(&r, 0x5, 0x2600);
	assert_field_pointer(&r, 0x80, 6);
	/* reserved INITIALIZATION PATTERN TYPE */
	format_unit(0, 0x10, bad_type, 10, &r);
	assert_check_condition(&r, 0x5, 0x2600);
	assert_field_pointer(&r, 0x80, 5);
	/* a pattern longer than the parameter list carries: PARAMETER LIST LENGTH ERROR */
	format_unit(0, 0x10, truncated, 10, &r);
	assert_check_condition(&r, 0x5, 0x1a00);
	/* IP MODIFIER is not supported */
	format_unit(0, 0x10, modifier, 10, &r);
	assert_check_condition(&r, 0x5, 0x2600);
	assert_field_pointer(&r, 0x88 | 6, 4);
	ck_assert_uint_eq(spy->discards + spy->writes + spy->zeroes, 0);
}
END_TEST

/* IP type 01h: every block starts with the pattern and repeats it (FOV = 1, IP = 1). */
START_TEST(initialization_pattern_written)
{
	static const uint8_t list[11] = { 0x00, 0x88, 0, 0, 0x00, 0x01, 0x00, 0x03, 0x11, 0x22, 0x33 };
	static const uint8_t pattern[3] = { 0x11, 0x22, 0x33 };
	struct harness_result r;

	format_unit(0, 0x10, list, sizeof(list), &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(blocks_match(pattern, 3));
}
END_TEST

/*
 * SBC-4 5.4 (parameter list header, IMMED): IMMED = 1 returns GOOD once the
 * CDB and parameter list are validated, before the medium is touched;
 * meanwhile every command but INQUIRY, REPORT LUNS and REQUEST SENSE gets
 * 02/04/04 with the PROGRESS INDICATION (SPC-4 4.5.2.4.4: x/65536 of the
 * operation done), one quarter more per 1 MiB chunk of the 4 MiB LU, always
 * increasing.  The block length and capacity do not change, so no unit
 * attention follows: TEST UNIT READY is GOOD afterwards (sbc_format.c).
 */
START_TEST(immed_reports_progress)
{
	static const uint8_t list[10] = { 0x00, 0x8a, 0, 0, 0x00, 0x01, 0x00, 0x02, 0x5a, 0xc3 };
	static const uint8_t pattern[2] = { 0x5a, 0xc3 };
	struct harness_result r;
	uint16_t progress = 0;

	reinit(BIG_NUM_BLOCKS, NULL, true);
	format_unit(0, 0x10, list, sizeof(list), &r);
	ck_assert(r.completed);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.sense_len, 0);
	ck_assert_uint_eq(spy->writes, 0);
	ck_assert(h.lu->progress.active);
	assert_only_informational_commands(0, 0x0000);
	assert_only_informational_commands(1, 0x0000);
	run_chunk(&progress, 0x4000);
	assert_only_informational_commands(1, 0x4000);
	run_chunk(&progress, 0x8000);
	run_chunk(&progress, 0xc000);
	assert_only_informational_commands(0, 0xc000);
	ck_assert_uint_eq(manual_executor_run(&mex, ~0u), 1);
	assert_format_over();
	ck_assert(blocks_match(pattern, 2));
}
END_TEST

/*
 * SBC-4 5.4: IMMED = 0: status only when the format is done; meanwhile the
 * other commands get 02/04/04 with the progress indication and INQUIRY,
 * REPORT LUNS, REQUEST SENSE work (the FORMAT UNIT still in the task set
 * does not hold them back).
 */
START_TEST(no_immed_waits_for_the_end)
{
	static const uint8_t zero[1] = { 0 };
	struct harness_result r;

	reinit(NUM_BLOCKS, NULL, true);
	format_unit(0, 0x00, NULL, 0, &r);
	ck_assert(!r.completed);
	assert_only_informational_commands(1, 0x0000);
	assert_only_informational_commands(0, 0x0000);
	ck_assert(!r.completed);
	manual_executor_run(&mex, ~0u);
	ck_assert(r.completed);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.sense_len, 0);
	assert_format_over();
	ck_assert(blocks_match(zero, 1));
}
END_TEST

static void tmf_done(void *arg, enum scsi_tmf_response response)
{
	*(int *)arg = (int)response + 1;
}

/*
 * SAM-5 7.7 (LOGICAL UNIT RESET) with SBC-4 5.4: the reset aborts the
 * waiting FORMAT UNIT at the next chunk boundary (the TMF completes then)
 * while the format itself runs to the end.  Each nexus first gets the
 * reset's unit attention 06/29/03 BUS DEVICE RESET FUNCTION OCCURRED (SAM-5
 * 5.14: a pending unit attention ends every command but INQUIRY, REPORT LUNS
 * and REQUEST SENSE), then 02/04/04 with a progress indication that keeps
 * increasing chunk by chunk.
 */
START_TEST(abort_releases_command_format_goes_on)
{
	static const uint8_t list[9] = { 0x00, 0x88, 0, 0, 0x00, 0x01, 0x00, 0x01, 0x77 };
	static const uint8_t pattern[1] = { 0x77 };
	struct harness_result r, ur;
	uint16_t progress;
	int tmf = 0;

	reinit(BIG_NUM_BLOCKS, NULL, true);
	format_unit(0, 0x10, list, sizeof(list), &r);
	ck_assert(!r.completed);
	scsi_tmf(h.nexus[1], scsi_lun_encode(0), SCSI_TMF_LOGICAL_UNIT_RESET, NULL, tmf_done, &tmf);
	ck_assert_int_eq(tmf, 0);
	manual_executor_run(&mex, 1);
	ck_assert(r.aborted);
	ck_assert_int_eq(tmf, SCSI_TMF_FUNCTION_COMPLETE + 1);
	ck_assert(h.lu->progress.active);
	for (int nexus = 0; nexus < 2; nexus++) {
		tur(nexus, &ur);
		assert_check_condition(&ur, SENSE_KEY_UNIT_ATTENTION, ASC_BUS_DEVICE_RESET_FUNCTION_OCCURRED);
	}
	progress = request_sense_progress(0);
	ck_assert_uint_eq(progress, 0x4000);
	assert_format_in_progress(1, progress);
	run_chunk(&progress, 0x8000);
	run_chunk(&progress, 0xc000);
	ck_assert_uint_eq(manual_executor_run(&mex, ~0u), 1);
	assert_format_over();
	ck_assert(blocks_match(pattern, 1));
}
END_TEST

/* SBC-4 5.4: a format that cannot complete: MEDIUM ERROR, FORMAT COMMAND FAILED 03/31/01. */
START_TEST(backend_error_format_command_failed)
{
	struct harness_result r;

	spy->fail_errno = 5;
	format_unit(0, 0x00, NULL, 0, &r);
	assert_check_condition(&r, 0x3, 0x3101);
	ck_assert(!h.lu->progress.active);
}
END_TEST

/* Zoned LUs: FORMAT UNIT empties every write pointer zone (ZBC: write pointer back at the zone start). */
START_TEST(zoned_format_resets_write_pointers)
{
	struct scsi_lu_params p = thick_params();
	uint8_t cdb[16] = { 0x8a };
	uint8_t data[8 * BS];
	struct harness_result r;
	struct zbc_zone *zone;

	p.kind = SCSI_LU_ZBC_HM;
	p.zone_size = 256;
	p.conventional_zones = 1;
	reinit(NUM_BLOCKS, &p, false);
	memset(data, 0x33, sizeof(data));
	put_be64(cdb + 2, 256); /* the first sequential write required zone */
	put_be32(cdb + 10, 8);
	harness_run(&h, 0, cdb, 16, data, sizeof(data), 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	zone = &h.lu->zbc->zones[1];
	ck_assert_uint_eq(zone->wp, 256 + 8);
	format_unit(0, 0x00, NULL, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(zone->wp, 256);
	ck_assert_int_eq(zone->condition, ZBC_ZC_EMPTY);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sbc_format");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, fmtdata_zero_deallocates_thin_lu);
	tcase_add_test(tc, fmtdata_zero_zeroes_thick_lu);
	tcase_add_test(tc, fmtpinfo_refused);
	tcase_add_test(tc, fov_zero_with_options_refused);
	tcase_add_test(tc, protection_field_usage_refused);
	tcase_add_test(tc, defect_list_refused);
	tcase_add_test(tc, long_header_pi_fields_refused);
	tcase_add_test(tc, initialization_pattern_errors);
	tcase_add_test(tc, initialization_pattern_written);
	tcase_add_test(tc, immed_reports_progress);
	tcase_add_test(tc, no_immed_waits_for_the_end);
	tcase_add_test(tc, abort_releases_command_format_goes_on);
	tcase_add_test(tc, backend_error_format_command_failed);
	tcase_add_test(tc, zoned_format_resets_write_pointers);
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
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
