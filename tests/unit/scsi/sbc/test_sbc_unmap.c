/* sbc_unmap.c: UNMAP (SBC-4 5.30) and the thin-provisioning switch. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "core/scsi_internal.h"
#include "spy_backend.h"

#define NUM_BLOCKS 2048
#define BS 512

static struct harness h;
static struct spy_backend *spy;

static void setup_params(const struct scsi_lu_params *p)
{
	uint8_t *fill = malloc((size_t)NUM_BLOCKS * BS);

	harness_init(&h, NUM_BLOCKS, BS, p);
	harness_clear_ua(&h);
	memset(fill, 'a', (size_t)NUM_BLOCKS * BS);
	ck_assert_int_eq(h.lu->backend->ops->write(h.lu->backend, fill, (size_t)NUM_BLOCKS * BS, 0, 0), 0);
	free(fill);
	spy = spy_backend_install(h.lu);
}

static void setup(void)
{
	setup_params(NULL); /* thin provisioned, 256 descriptors, no LBA count limit */
}

static void teardown(void)
{
	harness_fini(&h);
}

static struct scsi_lu_params harness_like_params(void)
{
	struct scsi_lu_params p;

	memset(&p, 0, sizeof(p));
	p.kind = SCSI_LU_CONVENTIONAL;
	p.thin_provisioning = true;
	p.max_unmap_lba_count = 0xffffffff;
	p.max_unmap_descriptors = 256;
	return p;
}

struct desc {
	uint64_t lba;
	uint32_t n;
};

/* Builds a consistent parameter list (as libiscsi and Linux do) into buf; returns its length. */
static uint32_t build_list(uint8_t *buf, const struct desc *d, unsigned count)
{
	uint32_t len = 8 + 16 * count;

	memset(buf, 0, len);
	put_be16(buf, (uint16_t)(len - 2));
	put_be16(buf + 2, (uint16_t)(len - 8));
	for (unsigned i = 0; i < count; i++) {
		put_be64(buf + 8 + 16 * i, d[i].lba);
		put_be32(buf + 8 + 16 * i + 8, d[i].n);
	}
	return len;
}

static void unmap(uint8_t byte1, uint16_t parameter_list_length, const uint8_t *data, uint32_t len,
		  struct harness_result *r)
{
	uint8_t cdb[10] = { 0x42, byte1 };

	put_be16(cdb + 7, parameter_list_length);
	harness_run(&h, 0, cdb, 10, len ? data : NULL, len, 0, r);
}

static bool blocks_are(uint64_t lba, uint32_t n, uint8_t value)
{
	uint8_t *buf = malloc((size_t)n * BS);
	bool ok = true;

	ck_assert_int_eq(h.lu->backend->ops->read(h.lu->backend, buf, (size_t)n * BS, lba * BS), 0);
	for (size_t i = 0; i < (size_t)n * BS; i++)
		if (buf[i] != value)
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

/* SBC-4 5.30: PARAMETER LIST LENGTH 0 transfers nothing: GOOD, nothing unmapped. */
START_TEST(parameter_list_length_zero_good)
{
	struct harness_result r;

	unmap(0, 0, NULL, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(spy->discards, 0);
}
END_TEST

/* SBC-4 5.30: PARAMETER LIST LENGTH 1..7 -> PARAMETER LIST LENGTH ERROR 05/1A/00, before any Data-Out. */
START_TEST(parameter_list_length_short)
{
	uint8_t data[8] = { 0 };
	struct harness_result r;

	unmap(0, 7, data, 7, &r);
	assert_check_condition(&r, 0x5, 0x1a00);
	unmap(0, 1, data, 1, &r);
	assert_check_condition(&r, 0x5, 0x1a00);
}
END_TEST

/* A header with no descriptors (libiscsi "UNMAP without any descriptors"): GOOD. */
START_TEST(no_descriptors_good)
{
	uint8_t data[8];
	struct harness_result r;
	uint32_t len = build_list(data, NULL, 0);

	unmap(0, (uint16_t)len, data, len, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(spy->discards, 0);
}
END_TEST

/* SBC-4 5.30: each descriptor's blocks are discarded (read back as zeros); others are untouched. */
START_TEST(descriptors_discarded)
{
	struct desc d[2] = { { 10, 4 }, { 100, 1 } };
	uint8_t data[40];
	struct harness_result r;
	uint32_t len = build_list(data, d, 2);

	unmap(0, (uint16_t)len, data, len, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(spy->discards, 2);
	ck_assert_uint_eq(spy->discarded_bytes, 5 * BS);
	ck_assert(blocks_are(10, 4, 0));
	ck_assert(blocks_are(100, 1, 0));
	ck_assert(blocks_are(9, 1, 'a'));
	ck_assert(blocks_are(14, 1, 'a'));
	ck_assert(blocks_are(101, 1, 'a'));
}
END_TEST

/* NUMBER OF LOGICAL BLOCKS 0 is not an error, even at LBA = capacity (libiscsi Unmap.ZeroBlocks). */
START_TEST(zero_block_descriptors)
{
	struct desc d[3] = { { 0, 0 }, { 5, 0 }, { NUM_BLOCKS, 0 } };
	uint8_t data[56];
	struct harness_result r;
	uint32_t len = build_list(data, d, 3);

	unmap(0, (uint16_t)len, data, len, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(spy->discards, 0);
}
END_TEST

/* SBC-4 5.30 (parameter list): LBA + count past the capacity -> 05/21/00, and no descriptor is processed. */
START_TEST(lba_out_of_range_unmaps_nothing)
{
	struct desc d[2] = { { 0, 8 }, { NUM_BLOCKS - 1, 2 } };
	struct desc past[1] = { { NUM_BLOCKS + 1, 0 } };
	uint8_t data[40];
	struct harness_result r;
	uint32_t len = build_list(data, d, 2);

	unmap(0, (uint16_t)len, data, len, &r);
	assert_check_condition(&r, 0x5, 0x2100);
	ck_assert_uint_eq(spy->discards, 0);
	ck_assert(blocks_are(0, 8, 'a'));
	len = build_list(data, past, 1);
	unmap(0, (uint16_t)len, data, len, &r);
	assert_check_condition(&r, 0x5, 0x2100);
}
END_TEST

/* More descriptors than MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT (256) -> 05/26/00 on the descriptor length. */
START_TEST(too_many_descriptors)
{
	static struct desc d[257];
	static uint8_t data[8 + 16 * 257];
	struct harness_result r;
	uint32_t len;

	for (unsigned i = 0; i < 257; i++)
		d[i] = (struct desc){ i, 1 };
	len = build_list(data, d, 257);
	unmap(0, (uint16_t)len, data, len, &r);
	assert_check_condition(&r, 0x5, 0x2600);
	assert_field_pointer(&r, 0x80, 2); /* SKSV, C/D = parameter list, byte 2 */
	ck_assert_uint_eq(spy->discards, 0);
	len = build_list(data, d, 256);
	unmap(0, (uint16_t)len, data, len, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(spy->discards, 256);
}
END_TEST

/* SBC-4 5.30 (parameter list): the total of all descriptors above MAXIMUM UNMAP LBA COUNT -> 05/26/00. */
START_TEST(total_over_maximum_unmap_lba_count)
{
	struct scsi_lu_params p = harness_like_params();
	struct desc d[2] = { { 0, 6 }, { 100, 5 } };
	struct desc ok[2] = { { 0, 6 }, { 100, 4 } };
	uint8_t data[40];
	struct harness_result r;
	uint32_t len;

	teardown();
	p.max_unmap_lba_count = 10;
	setup_params(&p);
	len = build_list(data, d, 2);
	unmap(0, (uint16_t)len, data, len, &r);
	assert_check_condition(&r, 0x5, 0x2600);
	assert_field_pointer(&r, 0x80, 8 + 16 + 8); /* the second NUMBER OF LOGICAL BLOCKS */
	ck_assert_uint_eq(spy->discards, 0);
	len = build_list(data, ok, 2);
	unmap(0, (uint16_t)len, data, len, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
}
END_TEST

/* An UNMAP DATA LENGTH too short for the descriptors it precedes -> 05/26/00 on byte 0. */
START_TEST(inconsistent_unmap_data_length)
{
	struct desc d[1] = { { 0, 1 } };
	uint8_t data[24];
	struct harness_result r;
	uint32_t len = build_list(data, d, 1);

	put_be16(data, 6);
	unmap(0, (uint16_t)len, data, len, &r);
	assert_check_condition(&r, 0x5, 0x2600);
	assert_field_pointer(&r, 0x80, 0);
	ck_assert_uint_eq(spy->discards, 0);
}
END_TEST

/*
 * SBC-4 5.30 (parameter list): a descriptor length that is not a multiple of 16 ignores the
 * partial last descriptor; descriptors cut off by PARAMETER LIST LENGTH are
 * not processed either (T10 reflector, 2015: the shortest length governs).
 */
START_TEST(partial_and_truncated_descriptors_ignored)
{
	struct desc d[2] = { { 0, 1 }, { 1, 1 } };
	uint8_t data[40];
	struct harness_result r;
	uint32_t len = build_list(data, d, 2);

	put_be16(data + 2, 20); /* one and a quarter descriptors */
	unmap(0, (uint16_t)len, data, len, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(spy->discards, 1);
	ck_assert(blocks_are(1, 1, 'a'));

	len = build_list(data, d, 2);
	unmap(0, 24, data, 24, &r); /* header says two, 24 bytes carry one */
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(spy->discards, 2);
	ck_assert(blocks_are(1, 1, 'a'));
}
END_TEST

/* ANCHOR = 1 with ANC_SUP = 0 -> 05/24/00, byte 1 bit 0. */
START_TEST(anchor_refused)
{
	struct desc d[1] = { { 0, 1 } };
	uint8_t data[24];
	struct harness_result r;
	uint32_t len = build_list(data, d, 1);

	unmap(0x01, (uint16_t)len, data, len, &r);
	assert_check_condition(&r, 0x5, 0x2400);
	assert_field_pointer(&r, 0xc8, 1);
}
END_TEST

/* A backend failure: MEDIUM ERROR, WRITE ERROR 03/0C/00. */
START_TEST(backend_error)
{
	struct desc d[1] = { { 0, 1 } };
	uint8_t data[24];
	struct harness_result r;
	uint32_t len = build_list(data, d, 1);

	spy->fail_errno = 5;
	unmap(0, (uint16_t)len, data, len, &r);
	assert_check_condition(&r, 0x3, 0x0c00);
}
END_TEST

/* Without thin provisioning UNMAP does not exist (LBPU = 0): INVALID COMMAND OPERATION CODE. */
START_TEST(fully_provisioned_lu_has_no_unmap)
{
	struct scsi_lu_params p = harness_like_params();
	struct desc d[1] = { { 0, 1 } };
	uint8_t data[24];
	struct harness_result r;
	uint32_t len;

	teardown();
	p.thin_provisioning = false;
	setup_params(&p);
	ck_assert(!sbc_thin_provisioning_enabled(h.lu));
	len = build_list(data, d, 1);
	unmap(0, (uint16_t)len, data, len, &r);
	assert_check_condition(&r, 0x5, 0x2000);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sbc_unmap");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, parameter_list_length_zero_good);
	tcase_add_test(tc, parameter_list_length_short);
	tcase_add_test(tc, no_descriptors_good);
	tcase_add_test(tc, descriptors_discarded);
	tcase_add_test(tc, zero_block_descriptors);
	tcase_add_test(tc, lba_out_of_range_unmaps_nothing);
	tcase_add_test(tc, too_many_descriptors);
	tcase_add_test(tc, total_over_maximum_unmap_lba_count);
	tcase_add_test(tc, inconsistent_unmap_data_length);
	tcase_add_test(tc, partial_and_truncated_descriptors_ignored);
	tcase_add_test(tc, anchor_refused);
	tcase_add_test(tc, backend_error);
	tcase_add_test(tc, fully_provisioned_lu_has_no_unmap);
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
