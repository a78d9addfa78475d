/* sbc_write_same.c: WRITE SAME(10) and WRITE SAME(16) (SBC-4 WRITE SAME(10), WRITE SAME(16)). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "core/scsi_internal.h"
#include "spy_backend.h"
#include "zbc/zbc.h"

#define NUM_BLOCKS 4096 /* 2 MiB: a whole-medium pattern write takes two 1 MiB chunks */
#define BS 512

static struct harness h;
static struct spy_backend *spy;
static uint8_t block[BS];

static void setup_params(const struct scsi_lu_params *p)
{
	harness_init(&h, NUM_BLOCKS, BS, p);
	harness_clear_ua(&h);
	spy = spy_backend_install(h.lu);
	memset(block, 0xa5, sizeof(block));
}

static void setup(void)
{
	setup_params(NULL); /* the harness default: thin provisioned */
}

static void teardown(void)
{
	harness_fini(&h);
}

static struct scsi_lu_params thick_params(void)
{
	struct scsi_lu_params p;

	memset(&p, 0, sizeof(p));
	p.kind = SCSI_LU_CONVENTIONAL;
	p.thin_provisioning = false;
	return p;
}

static void ws10(uint64_t lba, uint16_t n, uint8_t byte1, const void *data, uint32_t len, struct harness_result *r)
{
	uint8_t cdb[10] = { 0x41, byte1 };

	put_be32(cdb + 2, (uint32_t)lba);
	put_be16(cdb + 7, n);
	harness_run(&h, 0, cdb, 10, data, len, 0, r);
}

static void ws16(uint64_t lba, uint32_t n, uint8_t byte1, const void *data, uint32_t len, struct harness_result *r)
{
	uint8_t cdb[16] = { 0x93, byte1 };

	put_be64(cdb + 2, lba);
	put_be32(cdb + 10, n);
	harness_run(&h, 0, cdb, 16, data, len, 0, r);
}

static void read_blocks(uint64_t lba, void *buf, uint32_t n)
{
	ck_assert_int_eq(h.lu->backend->ops->read(h.lu->backend, buf, (size_t)n * BS, lba * BS), 0);
}

static bool blocks_are(uint64_t lba, uint32_t n, uint8_t value)
{
	uint8_t *buf = malloc((size_t)n * BS);
	bool ok = true;

	read_blocks(lba, buf, n);
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

/* Fixed-format sense-key-specific bytes 15-17: SKSV, C/D, BPV, bit pointer, field pointer. */
static void assert_field_pointer(const struct harness_result *r, uint8_t byte15, uint16_t field)
{
	ck_assert_uint_eq(r->sense[15], byte15);
	ck_assert_uint_eq(get_be16(r->sense + 16), field);
}

/* SBC-4 WRITE SAME(10): WRITE SAME(10) writes the one Data-Out block to each LBA of the range, nothing else. */
START_TEST(ws10_writes_block_to_range)
{
	struct harness_result r;

	ws10(10, 5, 0, block, BS, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(blocks_are(10, 5, 0xa5));
	ck_assert(blocks_are(9, 1, 0x00));
	ck_assert(blocks_are(15, 1, 0x00));
	ck_assert_uint_eq(spy->writes, 1);
}
END_TEST

/* SBC-4 WRITE SAME(16) with WSNZ = 0: NUMBER OF LOGICAL BLOCKS 0 writes through the last LBA (in 1 MiB chunks). */
START_TEST(ws16_zero_blocks_writes_to_end_of_medium)
{
	struct harness_result r;

	ws16(0, 0, 0, block, BS, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(blocks_are(0, NUM_BLOCKS, 0xa5));
	ck_assert_uint_eq(spy->writes, 2);
	ck_assert_uint_eq(spy->written_bytes, (uint64_t)NUM_BLOCKS * BS);
}
END_TEST

/* WSNZ = 0: NUMBER OF LOGICAL BLOCKS 0 from LBA n writes n .. last and nothing before. */
START_TEST(ws10_zero_blocks_from_lba_to_end)
{
	struct harness_result r;

	ws10(NUM_BLOCKS - 8, 0, 0, block, BS, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(blocks_are(NUM_BLOCKS - 8, 8, 0xa5));
	ck_assert(blocks_are(NUM_BLOCKS - 9, 1, 0x00));
}
END_TEST

/* NUMBER OF LOGICAL BLOCKS 0 at an LBA past the last one: LOGICAL BLOCK ADDRESS OUT OF RANGE 05/21/00. */
START_TEST(ws_zero_blocks_past_end_lba_out_of_range)
{
	struct harness_result r;

	ws16(NUM_BLOCKS, 0, 0, block, BS, &r);
	assert_check_condition(&r, 0x5, 0x2100);
	ws10(NUM_BLOCKS + 1, 0, 0, block, BS, &r);
	assert_check_condition(&r, 0x5, 0x2100);
	ws16(UINT64_MAX, 0, 0, block, BS, &r);
	assert_check_condition(&r, 0x5, 0x2100);
}
END_TEST

/* SBC-4: a range past the capacity -> 05/21/00, and nothing is written. */
START_TEST(ws_beyond_end_lba_out_of_range)
{
	struct harness_result r;

	ws10(NUM_BLOCKS - 1, 2, 0, block, BS, &r);
	assert_check_condition(&r, 0x5, 0x2100);
	ws10(0xffffffff, 1, 0, block, BS, &r);
	assert_check_condition(&r, 0x5, 0x2100);
	ws16(0x8000000000000000ull, 1, 0, block, BS, &r);
	assert_check_condition(&r, 0x5, 0x2100);
	ck_assert_uint_eq(spy->writes, 0);
}
END_TEST

/* SBC-4 WRITE SAME: more than MAXIMUM WRITE SAME LENGTH -> 05/24/00 on NUMBER OF LOGICAL BLOCKS. */
START_TEST(ws_over_maximum_write_same_length)
{
	struct scsi_lu_params p = thick_params();
	struct harness_result r;

	teardown();
	p.max_write_same_length = 16;
	setup_params(&p);
	ws10(0, 17, 0, block, BS, &r);
	assert_check_condition(&r, 0x5, 0x2400);
	assert_field_pointer(&r, 0xc0, 7); /* SKSV, C/D = CDB, no bit pointer, byte 7 */
	ws16(0, 17, 0, block, BS, &r);
	assert_check_condition(&r, 0x5, 0x2400);
	assert_field_pointer(&r, 0xc0, 10);
	/* "to the end of the medium" counts too */
	ws16(0, 0, 0, block, BS, &r);
	assert_check_condition(&r, 0x5, 0x2400);
	ws16(NUM_BLOCKS - 16, 0, 0, block, BS, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ws10(0, 16, 0, block, BS, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
}
END_TEST

/* UNMAP = 1 without logical block provisioning (LBPWS = 0): 05/24/00, byte 1 bit 3. */
START_TEST(ws_unmap_without_thin_provisioning)
{
	struct scsi_lu_params p = thick_params();
	struct harness_result r;

	teardown();
	setup_params(&p);
	memset(block, 0, sizeof(block));
	ws16(0, 8, 0x08, block, BS, &r);
	assert_check_condition(&r, 0x5, 0x2400);
	assert_field_pointer(&r, 0xc8 | 3, 1);
	ws10(0, 8, 0x08, block, BS, &r);
	assert_check_condition(&r, 0x5, 0x2400);
	ck_assert_uint_eq(spy->zeroes + spy->writes, 0);
}
END_TEST

/* SBC-4 WRITE SAME, UNMAP bit: UNMAP = 1 with an all-zero block deallocates (write_zeroes that may discard). */
START_TEST(ws_unmap_zero_block_deallocates)
{
	struct harness_result r;

	ws10(0, 32, 0, block, BS, &r);
	memset(block, 0, sizeof(block));
	ws16(0, 32, 0x08, block, BS, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(spy->zeroes_may_discard, 1);
	ck_assert_uint_eq(spy->zeroed_bytes, 32 * BS);
	ck_assert(blocks_are(0, 32, 0x00));
	ws10(0, 32, 0x08, block, BS, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(spy->zeroes_may_discard, 2);
}
END_TEST

/*
 * WRITE SAME UNMAP = 1 with a nonzero Data-Out block on a thin LU: the blocks
 * are deallocated and read back as zeros (LBPRZ = 1), whatever the block holds
 * (what Linux scsi_debug and LIO do and libiscsi's WriteSame10.UnmapUntilEnd
 * expects).
 */
START_TEST(ws_unmap_nonzero_block_deallocates)
{
	struct harness_result r;

	ws16(100, 3, 0x08, block, BS, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(spy->zeroes_may_discard, 1);
	ck_assert(blocks_are(100, 3, 0x00));
}
END_TEST

/* UNMAP = 0 with an all-zero block: zeroes that keep the blocks mapped (no MAY_DISCARD). */
START_TEST(ws_zero_block_without_unmap_stays_mapped)
{
	struct harness_result r;

	ws10(0, 4, 0, block, BS, &r);
	memset(block, 0, sizeof(block));
	ws10(0, 4, 0, block, BS, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(spy->zeroes, 1);
	ck_assert_uint_eq(spy->zeroes_may_discard, 0);
	ck_assert(blocks_are(0, 4, 0x00));
}
END_TEST

/* SBC-4 WRITE SAME: NDOB = 1 transfers no Data-Out and writes zeros. */
START_TEST(ws16_ndob_writes_zeros_without_data)
{
	uint8_t cdb[16] = { 0x93, 0x01 };
	struct harness_result r;

	ws16(7, 2, 0, block, BS, &r);
	put_be64(cdb + 2, 7);
	put_be32(cdb + 10, 2);
	harness_run(&h, 0, cdb, 16, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(blocks_are(7, 2, 0x00));
}
END_TEST

/* ANCHOR = 1 with ANC_SUP = 0, WRPROTECT != 0 without PI, LBDATA: 05/24/00 with the bit pointer. */
START_TEST(ws_refused_cdb_bits)
{
	struct harness_result r;

	ws16(0, 1, 0x10, block, BS, &r); /* ANCHOR */
	assert_check_condition(&r, 0x5, 0x2400);
	assert_field_pointer(&r, 0xc8 | 4, 1);
	ws10(0, 1, 0x18, block, BS, &r); /* ANCHOR + UNMAP */
	assert_check_condition(&r, 0x5, 0x2400);
	assert_field_pointer(&r, 0xc8 | 4, 1);
	ws10(0, 1, 0x20, block, BS, &r); /* WRPROTECT = 1 */
	assert_check_condition(&r, 0x5, 0x2400);
	assert_field_pointer(&r, 0xc8 | 7, 1); /* the leftmost bit of WRPROTECT */
	ws10(0, 1, 0x02, block, BS, &r); /* LBDATA */
	assert_check_condition(&r, 0x5, 0x2400);
	assert_field_pointer(&r, 0xc8 | 1, 1);
	ck_assert_uint_eq(spy->writes, 0);
}
END_TEST

/*
 * The Data-Out is one logical block: a transport announcing two blocks is
 * refused before any data moves, one announcing half a block after (cmd.c):
 * both 05/0E/03, nothing written.
 */
START_TEST(ws_data_out_not_one_block)
{
	uint8_t two[2 * BS];
	uint8_t cdb[10] = { 0x41, 0x00, 0, 0, 0, 0, 0, 0, 1, 0 };
	struct harness_result r;

	memset(two, 0xa5, sizeof(two));
	harness_run(&h, 0, cdb, 10, two, sizeof(two), 0, &r);
	assert_check_condition(&r, 0x5, 0x0e03);
	harness_run(&h, 0, cdb, 10, two, BS / 2, 0, &r);
	assert_check_condition(&r, 0x5, 0x0e03);
	ck_assert_uint_eq(spy->writes, 0);
}
END_TEST

/* A backend error is MEDIUM ERROR, WRITE ERROR 03/0C/00 with INFORMATION = the chunk's first LBA. */
START_TEST(ws_backend_error_write_error)
{
	struct harness_result r;

	spy->fail_errno = 5; /* EIO */
	ws10(42, 2, 0, block, BS, &r);
	assert_check_condition(&r, 0x3, 0x0c00);
	ck_assert_uint_eq(r.sense[0], 0xf0); /* VALID, current, fixed */
	ck_assert_uint_eq(get_be32(r.sense + 3), 42);
}
END_TEST

/* Zoned LUs: WRITE SAME follows the write rules (ZBC): at the write pointer it advances it, elsewhere 05/21/04. */
START_TEST(ws_zoned_write_pointer_rules)
{
	struct scsi_lu_params p = thick_params();
	struct harness_result r;

	teardown();
	p.kind = SCSI_LU_ZBC_HM;
	p.zone_size = 256;
	p.conventional_zones = 1;
	setup_params(&p);
	ws16(256, 8, 0, block, BS, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(h.lu->zbc->zones[1].wp, 264);
	ck_assert(blocks_are(256, 8, 0xa5));
	ws16(300, 8, 0, block, BS, &r);
	assert_check_condition(&r, 0x5, 0x2104); /* UNALIGNED WRITE COMMAND */
	ck_assert_uint_eq(h.lu->zbc->zones[1].wp, 264);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sbc_write_same");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, ws10_writes_block_to_range);
	tcase_add_test(tc, ws16_zero_blocks_writes_to_end_of_medium);
	tcase_add_test(tc, ws10_zero_blocks_from_lba_to_end);
	tcase_add_test(tc, ws_zero_blocks_past_end_lba_out_of_range);
	tcase_add_test(tc, ws_beyond_end_lba_out_of_range);
	tcase_add_test(tc, ws_over_maximum_write_same_length);
	tcase_add_test(tc, ws_unmap_without_thin_provisioning);
	tcase_add_test(tc, ws_unmap_zero_block_deallocates);
	tcase_add_test(tc, ws_unmap_nonzero_block_deallocates);
	tcase_add_test(tc, ws_zero_block_without_unmap_stays_mapped);
	tcase_add_test(tc, ws16_ndob_writes_zeros_without_data);
	tcase_add_test(tc, ws_refused_cdb_bits);
	tcase_add_test(tc, ws_data_out_not_one_block);
	tcase_add_test(tc, ws_backend_error_write_error);
	tcase_add_test(tc, ws_zoned_write_pointer_rules);
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
