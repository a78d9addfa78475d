/* sbc_sanitize.c (and sbc_background.c): SANITIZE (SBC-4 5.32). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "in_progress.h"
#include "manual_executor.h"
#include "core/scsi_internal.h"
#include "spy_backend.h"

#define BS 512
#define NUM_BLOCKS 2048     /* 1 MiB: one OVERWRITE pass paced at 128 MiB/s takes ~8 ms */
#define BIG_NUM_BLOCKS 8192 /* 4 MiB: four 1 MiB chunks per pass */

#define SA_OVERWRITE 0x01
#define SA_BLOCK_ERASE 0x02
#define SA_CRYPTOGRAPHIC_ERASE 0x03
#define SA_EXIT_FAILURE_MODE 0x1f
#define IMMED 0x80
#define AUSE 0x20

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

static void sanitize(int nexus, uint8_t byte1, uint16_t parameter_list_length, const uint8_t *list, uint32_t len,
		     struct harness_result *r)
{
	uint8_t cdb[10] = { 0x48, byte1 };

	put_be16(cdb + 7, parameter_list_length);
	harness_run(&h, nexus, cdb, 10, len ? list : NULL, len, 0, r);
}

/* An OVERWRITE parameter list: byte 0 INVERT/TEST/OVERWRITE COUNT, bytes 2-3 pattern length, pattern. */
static uint32_t overwrite_list(uint8_t *buf, uint8_t byte0, const uint8_t *pattern, uint16_t pattern_length)
{
	buf[0] = byte0;
	buf[1] = 0;
	put_be16(buf + 2, pattern_length);
	memcpy(buf + 4, pattern, pattern_length);
	return 4u + pattern_length;
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

#define SAN ASC_SANITIZE_IN_PROGRESS_NR

/* NOT READY, SANITIZE IN PROGRESS 02/04/1B with the progress (in_progress.h). */
static void expect_sanitize_in_progress(const struct harness_result *r, uint16_t progress)
{
	in_progress_expect_sense(r, SAN, progress);
}

static void assert_sanitize_in_progress(int nexus, uint16_t progress)
{
	in_progress_expect_tur(&h, nexus, SAN, progress);
}

static void request_sense(int nexus, bool desc, struct harness_result *r)
{
	uint8_t cdb[6] = { 0x03, desc ? 0x01 : 0x00, 0, 0, 252, 0 };

	harness_run(&h, nexus, cdb, 6, NULL, 0, 0, r);
}

/* REQUEST SENSE while the sanitize runs (SBC-4 4.11): NOT READY, SANITIZE IN PROGRESS and the progress. */
static uint16_t request_sense_progress(int nexus)
{
	return in_progress_request_sense(&h, nexus, SAN);
}

/*
 * SBC-4 4.11 (sanitize operations) / 5.32: while a sanitize operation is in
 * progress every command but INQUIRY, REPORT LUNS and REQUEST SENSE is
 * terminated with CHECK CONDITION, NOT READY, LOGICAL UNIT NOT READY,
 * SANITIZE IN PROGRESS (02/04/1B) carrying the progress indication, another
 * SANITIZE too.
 */
static void assert_only_informational_commands(int nexus, uint16_t progress)
{
	struct harness_result r;

	in_progress_only_informational(&h, spy, nexus, SAN, progress);
	sanitize(nexus, SA_CRYPTOGRAPHIC_ERASE, 0, NULL, 0, &r);
	expect_sanitize_in_progress(&r, progress);
}

/* Lets one more chunk of the sanitize run; the progress indication must move forward to expected. */
static void run_chunk(uint16_t *progress, uint16_t expected)
{
	uint16_t now;

	ck_assert_uint_eq(manual_executor_run(&mex, 1), 1);
	now = request_sense_progress(0);
	ck_assert_uint_gt(now, *progress);
	ck_assert_uint_eq(now, expected);
	assert_sanitize_in_progress(1, now);
	*progress = now;
}

/*
 * SBC-4 4.11: once the sanitize operation completed without error (or the
 * failure mode was exited) the medium is usable again: TEST UNIT READY is
 * GOOD on both nexuses and REQUEST SENSE reports NO SENSE (SPC-4 6.39).
 */
static void assert_medium_usable(void)
{
	struct harness_result r;

	ck_assert(!h.lu->progress.active);
	ck_assert(!h.lu->sanitize_failed);
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

/* SBC-4 5.32 (OVERWRITE): OVERWRITE writes the pattern, repeated from the first byte of every block. */
START_TEST(overwrite_writes_pattern)
{
	static const uint8_t pattern[3] = { 0xde, 0xad, 0x01 };
	uint8_t list[8];
	struct harness_result r;
	uint32_t len = overwrite_list(list, 0x01, pattern, 3);

	sanitize(0, SA_OVERWRITE, (uint16_t)len, list, len, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(blocks_match(pattern, 3));
	ck_assert_uint_eq(spy->written_bytes, (uint64_t)NUM_BLOCKS * BS);
	ck_assert(!h.lu->progress.active);
}
END_TEST

/* A one-block pattern (libiscsi Sanitize.Overwrite): PARAMETER LIST LENGTH = block length + 4. */
START_TEST(overwrite_full_block_pattern)
{
	uint8_t pattern[BS];
	uint8_t list[BS + 4];
	struct harness_result r;
	uint32_t len;

	memset(pattern, 0xaa, BS);
	len = overwrite_list(list, 0x01, pattern, BS);
	sanitize(0, SA_OVERWRITE, (uint16_t)len, list, len, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(blocks_match(pattern, 1));
}
END_TEST

/*
 * OVERWRITE COUNT passes; with INVERT = 1 the pattern alternates and an even
 * count starts inverted, so the last pass always leaves the pattern itself.
 */
START_TEST(overwrite_passes_and_invert)
{
	static const uint8_t pattern[1] = { 0x0f };
	uint8_t list[5];
	struct harness_result r;
	uint32_t len = overwrite_list(list, 0x80 | 0x02, pattern, 1);

	sanitize(0, SA_OVERWRITE, (uint16_t)len, list, len, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(spy->written_bytes, 2ull * NUM_BLOCKS * BS);
	ck_assert(blocks_match(pattern, 1));
	len = overwrite_list(list, 0x80 | 0x03, pattern, 1);
	sanitize(0, SA_OVERWRITE, (uint16_t)len, list, len, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(blocks_match(pattern, 1));
}
END_TEST

/*
 * SBC-4 5.32 (service actions): OVERWRITE needs 4 < PARAMETER LIST LENGTH <
 * block length + 5, else 05/24/00 pointing at PARAMETER LIST LENGTH (byte 7).
 */
START_TEST(overwrite_parameter_list_length_refused)
{
	uint8_t list[BS + 8] = { 0x01, 0x00, 0x00, 0x04 };
	struct harness_result r;

	for (uint16_t n = 0; n <= 4; n++) {
		sanitize(0, SA_OVERWRITE, n, list, n, &r);
		assert_check_condition(&r, 0x5, 0x2400);
		assert_field_pointer(&r, 0xc0, 7);
	}
	sanitize(0, SA_OVERWRITE, BS + 5, list, BS + 5, &r);
	assert_check_condition(&r, 0x5, 0x2400);
	assert_field_pointer(&r, 0xc0, 7);
	ck_assert_uint_eq(spy->writes, 0);
}
END_TEST

/* OVERWRITE parameter list field errors -> INVALID FIELD IN PARAMETER LIST with the field pointer. */
START_TEST(overwrite_parameter_list_fields_refused)
{
	static const uint8_t pattern[4] = { 1, 2, 3, 4 };
	uint8_t list[BS + 4];
	struct harness_result r;
	uint32_t len;

	/* OVERWRITE COUNT 00h is reserved */
	len = overwrite_list(list, 0x00, pattern, 4);
	sanitize(0, SA_OVERWRITE, (uint16_t)len, list, len, &r);
	assert_check_condition(&r, 0x5, 0x2600);
	assert_field_pointer(&r, 0x88 | 4, 0);
	/* TEST != 00b */
	len = overwrite_list(list, 0x21, pattern, 4);
	sanitize(0, SA_OVERWRITE, (uint16_t)len, list, len, &r);
	assert_check_condition(&r, 0x5, 0x2600);
	assert_field_pointer(&r, 0x88 | 6, 0);
	/* reserved byte 1 */
	len = overwrite_list(list, 0x01, pattern, 4);
	list[1] = 0x04;
	sanitize(0, SA_OVERWRITE, (uint16_t)len, list, len, &r);
	assert_check_condition(&r, 0x5, 0x2600);
	assert_field_pointer(&r, 0x88 | 2, 1);
	/* INITIALIZATION PATTERN LENGTH 0 */
	memset(list, 0, sizeof(list));
	list[0] = 0x01;
	sanitize(0, SA_OVERWRITE, BS + 4, list, BS + 4, &r);
	assert_check_condition(&r, 0x5, 0x2600);
	assert_field_pointer(&r, 0x80, 2);
	/* INITIALIZATION PATTERN LENGTH above the block length */
	put_be16(list + 2, BS + 4);
	sanitize(0, SA_OVERWRITE, BS + 4, list, BS + 4, &r);
	assert_check_condition(&r, 0x5, 0x2600);
	assert_field_pointer(&r, 0x80, 2);
	/* INITIALIZATION PATTERN LENGTH that disagrees with PARAMETER LIST LENGTH */
	len = overwrite_list(list, 0x01, pattern, 4);
	put_be16(list + 2, 2);
	sanitize(0, SA_OVERWRITE, (uint16_t)len, list, len, &r);
	assert_check_condition(&r, 0x5, 0x2600);
	assert_field_pointer(&r, 0x80, 2);
	ck_assert_uint_eq(spy->writes, 0);
}
END_TEST

/* BLOCK ERASE deallocates the whole medium (reads return zeros, GET LBA STATUS: deallocated). */
START_TEST(block_erase_deallocates)
{
	static const uint8_t zero[1] = { 0 };
	struct harness_result r;

	sanitize(0, SA_BLOCK_ERASE, 0, NULL, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(spy->discarded_bytes, (uint64_t)NUM_BLOCKS * BS);
	ck_assert(blocks_match(zero, 1));
}
END_TEST

/* BLOCK ERASE, CRYPTOGRAPHIC ERASE and EXIT FAILURE MODE take no parameter list: 05/24/00 on byte 7. */
START_TEST(parameter_list_refused_for_erase_and_exit)
{
	uint8_t list[8] = { 0 };
	struct harness_result r;

	sanitize(0, SA_BLOCK_ERASE, 8, list, 8, &r);
	assert_check_condition(&r, 0x5, 0x2400);
	assert_field_pointer(&r, 0xc0, 7);
	sanitize(0, SA_CRYPTOGRAPHIC_ERASE, 8, list, 8, &r);
	assert_check_condition(&r, 0x5, 0x2400);
	assert_field_pointer(&r, 0xc0, 7);
	sanitize(0, SA_EXIT_FAILURE_MODE, 8, list, 8, &r);
	assert_check_condition(&r, 0x5, 0x2400);
	assert_field_pointer(&r, 0xc0, 7);
	ck_assert_uint_eq(spy->discards, 0);
}
END_TEST

/* Without logical block provisioning there is no BLOCK ERASE: 05/24/00 on SERVICE ACTION. */
START_TEST(block_erase_needs_thin_provisioning)
{
	struct scsi_lu_params p = thick_params();
	struct harness_result r;

	reinit(NUM_BLOCKS, &p, false);
	sanitize(0, SA_BLOCK_ERASE, 0, NULL, 0, &r);
	assert_check_condition(&r, 0x5, 0x2400);
	assert_field_pointer(&r, 0xc8 | 4, 1);
}
END_TEST

/* CRYPTOGRAPHIC ERASE: deallocates a thin LU, zeroes a fully provisioned one. */
START_TEST(cryptographic_erase)
{
	static const uint8_t zero[1] = { 0 };
	struct scsi_lu_params p = thick_params();
	struct harness_result r;

	sanitize(0, SA_CRYPTOGRAPHIC_ERASE, 0, NULL, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(spy->discarded_bytes, (uint64_t)NUM_BLOCKS * BS);
	ck_assert(blocks_match(zero, 1));
	reinit(NUM_BLOCKS, &p, false);
	sanitize(0, SA_CRYPTOGRAPHIC_ERASE, 0, NULL, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(spy->zeroed_bytes, (uint64_t)NUM_BLOCKS * BS);
	ck_assert_uint_eq(spy->discards, 0);
	ck_assert(blocks_match(zero, 1));
}
END_TEST

/* Unsupported service actions and reserved CDB bits (ZNR, bytes 2-6): 05/24/00 (libiscsi *Reserved tests). */
START_TEST(invalid_service_action_and_reserved_bits)
{
	uint8_t cdb[10] = { 0x48, 0x04 };
	struct harness_result r;

	harness_run(&h, 0, cdb, 10, NULL, 0, 0, &r);
	assert_check_condition(&r, 0x5, 0x2400);
	assert_field_pointer(&r, 0xc8 | 4, 1);
	cdb[1] = 0x00;
	harness_run(&h, 0, cdb, 10, NULL, 0, 0, &r);
	assert_check_condition(&r, 0x5, 0x2400);
	assert_field_pointer(&r, 0xc8 | 4, 1);
	cdb[1] = 0x40 | SA_BLOCK_ERASE; /* ZNR on a conventional LU */
	harness_run(&h, 0, cdb, 10, NULL, 0, 0, &r);
	assert_check_condition(&r, 0x5, 0x2400);
	assert_field_pointer(&r, 0xc8 | 6, 1);
	cdb[1] = SA_CRYPTOGRAPHIC_ERASE;
	cdb[4] = 0x04;
	harness_run(&h, 0, cdb, 10, NULL, 0, 0, &r);
	assert_check_condition(&r, 0x5, 0x2400);
	assert_field_pointer(&r, 0xc8 | 2, 4);
	ck_assert_uint_eq(spy->discards, 0);
}
END_TEST

/* EXIT FAILURE MODE outside the failure mode has nothing to exit: GOOD. */
START_TEST(exit_failure_mode_when_not_failed)
{
	struct harness_result r;

	sanitize(0, SA_EXIT_FAILURE_MODE, 0, NULL, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
}
END_TEST

/*
 * SBC-4 4.11: a failed sanitize with AUSE = 0 (restricted completion
 * mode): the command gets 03/31/03, medium access gets 03/31/03, EXIT
 * FAILURE MODE and AUSE = 1 are refused (05/24/00); a later successful
 * sanitize ends the failure mode.
 */
START_TEST(failure_restricted_mode)
{
	struct harness_result r;

	spy->fail_errno = 5;
	sanitize(0, SA_CRYPTOGRAPHIC_ERASE, 0, NULL, 0, &r);
	assert_check_condition(&r, 0x3, 0x3103);
	ck_assert(h.lu->sanitize_failed);
	ck_assert(!h.lu->progress.active);
	tur(0, &r);
	assert_check_condition(&r, 0x3, 0x3103);
	sanitize(0, SA_EXIT_FAILURE_MODE, 0, NULL, 0, &r);
	assert_check_condition(&r, 0x5, 0x2400);
	assert_field_pointer(&r, 0xc8 | 4, 1);
	sanitize(0, AUSE | SA_CRYPTOGRAPHIC_ERASE, 0, NULL, 0, &r);
	assert_check_condition(&r, 0x5, 0x2400);
	assert_field_pointer(&r, 0xc8 | 5, 1);
	spy->fail_errno = 0;
	sanitize(0, SA_CRYPTOGRAPHIC_ERASE, 0, NULL, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(!h.lu->sanitize_failed);
	assert_medium_usable();
}
END_TEST

/* A failed sanitize with AUSE = 1 (unrestricted mode): EXIT FAILURE MODE ends the failure mode. */
START_TEST(failure_unrestricted_mode_exit)
{
	struct harness_result r;

	spy->fail_errno = 5;
	sanitize(0, AUSE | SA_BLOCK_ERASE, 0, NULL, 0, &r);
	assert_check_condition(&r, 0x3, 0x3103);
	tur(1, &r);
	assert_check_condition(&r, 0x3, 0x3103);
	sanitize(1, SA_EXIT_FAILURE_MODE, 0, NULL, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(!h.lu->sanitize_failed);
	assert_medium_usable();
}
END_TEST

/*
 * SBC-4 5.32 (IMMED): IMMED = 1 returns GOOD once the CDB and parameter list
 * are valid; while the overwrite runs every command but INQUIRY, REPORT LUNS
 * and REQUEST SENSE gets 02/04/1B with the PROGRESS INDICATION (SPC-4
 * 4.5.2.4.4: x/65536 done; 1/4 more per 1 MiB chunk of a 4 MiB LU, always
 * increasing), another SANITIZE included; then the LU is back (GOOD).
 */
START_TEST(immed_reports_progress)
{
	static const uint8_t pattern[2] = { 0x12, 0x34 };
	uint8_t list[6];
	struct harness_result r;
	uint16_t progress = 0;
	uint32_t len;

	reinit(BIG_NUM_BLOCKS, NULL, true);
	len = overwrite_list(list, 0x01, pattern, 2);
	sanitize(0, IMMED | SA_OVERWRITE, (uint16_t)len, list, len, &r);
	ck_assert(r.completed);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.sense_len, 0);
	ck_assert_uint_eq(spy->writes, 0);
	assert_only_informational_commands(0, 0x0000);
	assert_only_informational_commands(1, 0x0000);
	run_chunk(&progress, 0x4000);
	assert_only_informational_commands(1, 0x4000);
	run_chunk(&progress, 0x8000);
	run_chunk(&progress, 0xc000);
	assert_only_informational_commands(0, 0xc000);
	ck_assert_uint_eq(manual_executor_run(&mex, ~0u), 1);
	ck_assert(blocks_match(pattern, 2));
	assert_medium_usable();
}
END_TEST

static void tmf_done(void *arg, enum scsi_tmf_response response)
{
	*(int *)arg = (int)response + 1;
}

/*
 * SBC-4 4.11 (libiscsi Sanitize.Reset): task management ends the waiting
 * SANITIZE command, not the sanitize operation, which goes on and keeps the
 * LU NOT READY (02/04/1B, progress still increasing) until it is done.  The
 * TARGET COLD RESET's unit attention, 06/29/00 POWER ON, RESET, OR BUS DEVICE
 * RESET OCCURRED, is reported first on each nexus (SAM-5 5.14: a pending unit
 * attention ends every command but INQUIRY, REPORT LUNS and REQUEST SENSE).
 */
START_TEST(reset_does_not_stop_sanitize)
{
	static const uint8_t pattern[1] = { 0x00 };
	uint8_t list[5];
	struct harness_result r, tr;
	uint16_t progress;
	uint32_t len;
	int tmf = 0;

	reinit(BIG_NUM_BLOCKS, NULL, true);
	len = overwrite_list(list, 0x01, pattern, 1);
	sanitize(0, SA_OVERWRITE, (uint16_t)len, list, len, &r);
	ck_assert(!r.completed);
	assert_only_informational_commands(1, 0x0000);
	ck_assert(!r.completed);
	scsi_tmf(h.nexus[0], scsi_lun_encode(0), SCSI_TMF_TARGET_COLD_RESET, NULL, tmf_done, &tmf);
	manual_executor_run(&mex, 1);
	ck_assert(r.aborted);
	ck_assert_int_eq(tmf, SCSI_TMF_FUNCTION_COMPLETE + 1);
	for (int nexus = 0; nexus < 2; nexus++) {
		tur(nexus, &tr);
		assert_check_condition(&tr, SENSE_KEY_UNIT_ATTENTION, ASC_POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED);
	}
	progress = request_sense_progress(1);
	ck_assert_uint_eq(progress, 0x4000);
	assert_sanitize_in_progress(0, progress);
	run_chunk(&progress, 0x8000);
	run_chunk(&progress, 0xc000);
	ck_assert_uint_eq(manual_executor_run(&mex, ~0u), 1);
	ck_assert(blocks_match(pattern, 1));
	assert_medium_usable();
}
END_TEST

/* Write protection and reservations are checked before anything runs (libiscsi Readonly/Reservations). */
START_TEST(write_protected)
{
	struct scsi_lu_params p = thick_params();
	struct harness_result r;

	p.write_protect = true;
	reinit(NUM_BLOCKS, &p, false);
	sanitize(0, SA_CRYPTOGRAPHIC_ERASE, 0, NULL, 0, &r);
	assert_check_condition(&r, 0x7, 0x2700);
	ck_assert(!h.lu->progress.active);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sbc_sanitize");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, overwrite_writes_pattern);
	tcase_add_test(tc, overwrite_full_block_pattern);
	tcase_add_test(tc, overwrite_passes_and_invert);
	tcase_add_test(tc, overwrite_parameter_list_length_refused);
	tcase_add_test(tc, overwrite_parameter_list_fields_refused);
	tcase_add_test(tc, block_erase_deallocates);
	tcase_add_test(tc, parameter_list_refused_for_erase_and_exit);
	tcase_add_test(tc, block_erase_needs_thin_provisioning);
	tcase_add_test(tc, cryptographic_erase);
	tcase_add_test(tc, invalid_service_action_and_reserved_bits);
	tcase_add_test(tc, exit_failure_mode_when_not_failed);
	tcase_add_test(tc, failure_restricted_mode);
	tcase_add_test(tc, failure_unrestricted_mode_exit);
	tcase_add_test(tc, immed_reports_progress);
	tcase_add_test(tc, reset_does_not_stop_sanitize);
	tcase_add_test(tc, write_protected);
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
