#include <check.h>
#include <string.h>

#include "in_progress.h"
#include "scsi_sense.h"
#include "scsi_wire.h"

void in_progress_expect_sense(const struct harness_result *r, uint16_t asc_ascq, uint16_t progress)
{
	harness_expect_sense(r, SENSE_KEY_NOT_READY, asc_ascq);
	ck_assert_uint_ge(r->sense_len, 18);
	ck_assert_uint_eq(r->sense[0], 0x70);
	ck_assert_uint_eq(r->sense[15], 0x80);
	ck_assert_uint_eq(get_be16(r->sense + 16), progress);
}

void in_progress_expect_tur(struct harness *h, int nexus, uint16_t asc_ascq, uint16_t progress)
{
	static const uint8_t tur[6] = { 0x00 };
	struct harness_result r;

	harness_run(h, nexus, tur, 6, NULL, 0, 0, &r);
	in_progress_expect_sense(&r, asc_ascq, progress);
}

static void request_sense(struct harness *h, int nexus, bool desc, struct harness_result *r)
{
	uint8_t cdb[6] = { 0x03, desc ? 0x01 : 0x00, 0, 0, 252, 0 };

	harness_run(h, nexus, cdb, 6, NULL, 0, 0, r);
}

uint16_t in_progress_request_sense(struct harness *h, int nexus, uint16_t asc_ascq)
{
	struct harness_result r;
	uint16_t progress;

	request_sense(h, nexus, false, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in_len, 18);
	ck_assert_uint_eq(r.data_in[0], 0x70);
	ck_assert_uint_eq(r.data_in[2] & 0x0f, SENSE_KEY_NOT_READY);
	ck_assert_uint_eq(get_be16(r.data_in + 12), asc_ascq);
	ck_assert_uint_eq(r.data_in[15], 0x80);
	progress = get_be16(r.data_in + 16);

	request_sense(h, nexus, true, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in_len, 16);
	ck_assert_uint_eq(r.data_in[0], 0x72);
	ck_assert_uint_eq(r.data_in[1] & 0x0f, SENSE_KEY_NOT_READY);
	ck_assert_uint_eq(get_be16(r.data_in + 2), asc_ascq);
	ck_assert_uint_eq(r.data_in[7], 8);
	ck_assert_uint_eq(r.data_in[8], 0x02);
	ck_assert_uint_eq(r.data_in[9], 0x06);
	ck_assert_uint_eq(r.data_in[12], 0x80);
	ck_assert_uint_eq(get_be16(r.data_in + 13), progress);
	return progress;
}

void in_progress_only_informational(struct harness *h, struct spy_backend *spy, int nexus, uint16_t asc_ascq,
				    uint16_t progress)
{
	static const uint8_t read10[10] = { 0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
	static const uint8_t write10[10] = { 0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
	static const uint8_t sync10[10] = { 0x35 };
	static const uint8_t inquiry[6] = { 0x12, 0, 0, 0, 96, 0 };
	static const uint8_t report_luns[12] = { 0xa0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 0 };
	uint8_t block[512];
	unsigned writes = spy->writes, flushes = spy->flushes, discards = spy->discards;
	struct harness_result r;

	memset(block, 0xee, sizeof(block));
	in_progress_expect_tur(h, nexus, asc_ascq, progress);
	harness_run(h, nexus, read10, 10, NULL, 0, 0, &r);
	in_progress_expect_sense(&r, asc_ascq, progress);
	ck_assert_uint_eq(r.data_in_len, 0);
	harness_run(h, nexus, write10, 10, block, sizeof(block), 0, &r);
	in_progress_expect_sense(&r, asc_ascq, progress);
	harness_run(h, nexus, sync10, 10, NULL, 0, 0, &r);
	in_progress_expect_sense(&r, asc_ascq, progress);
	ck_assert_uint_eq(spy->writes, writes);
	ck_assert_uint_eq(spy->flushes, flushes);
	ck_assert_uint_eq(spy->discards, discards);

	harness_run(h, nexus, inquiry, 6, NULL, 0, 0, &r);
	harness_expect_good(&r);
	ck_assert_uint_ge(r.data_in_len, 36);
	ck_assert_uint_eq(r.data_in[0] & 0xe0, 0x00); /* PERIPHERAL QUALIFIER 000b: the LU is there */
	harness_run(h, nexus, report_luns, 12, NULL, 0, 0, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in_len, 16);
	ck_assert_uint_eq(get_be32(r.data_in), 8); /* LUN LIST LENGTH: LUN 0 */
	ck_assert_uint_eq(in_progress_request_sense(h, nexus, asc_ascq), progress);
}
