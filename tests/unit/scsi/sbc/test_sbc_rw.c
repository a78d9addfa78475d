/* sbc_rw.c: READ/WRITE(6/10/12/16), WRITE AND VERIFY(10/12/16), ORWRITE(16) (SBC-4 5.9, 5.15-5.18, 5.42-5.48). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sbc/sbc.h"

#define NUM_BLOCKS 2048
#define BS 512

static struct harness h;
static uint8_t buf[64 * BS];

static void setup(void)
{
	harness_init(&h, NUM_BLOCKS, BS, NULL);
	harness_clear_ua(&h);
}

static void setup_limited(void)
{
	struct scsi_lu_params p;

	memset(&p, 0, sizeof(p));
	p.kind = SCSI_LU_CONVENTIONAL;
	p.max_transfer_length = 8;
	harness_init(&h, NUM_BLOCKS, BS, &p);
	harness_clear_ua(&h);
}

static void teardown(void)
{
	harness_fini(&h);
}

static void cdb6(uint8_t *c, uint8_t op, uint32_t lba, uint8_t len)
{
	memset(c, 0, 6);
	c[0] = op;
	c[1] = (uint8_t)((lba >> 16) & 0x1f);
	put_be16(c + 2, (uint16_t)lba);
	c[4] = len;
}

static void cdb10(uint8_t *c, uint8_t op, uint8_t b1, uint32_t lba, uint16_t len)
{
	memset(c, 0, 10);
	c[0] = op;
	c[1] = b1;
	put_be32(c + 2, lba);
	put_be16(c + 7, len);
}

static void cdb12(uint8_t *c, uint8_t op, uint8_t b1, uint32_t lba, uint32_t len)
{
	memset(c, 0, 12);
	c[0] = op;
	c[1] = b1;
	put_be32(c + 2, lba);
	put_be32(c + 6, len);
}

static void cdb16(uint8_t *c, uint8_t op, uint8_t b1, uint64_t lba, uint32_t len)
{
	memset(c, 0, 16);
	c[0] = op;
	c[1] = b1;
	put_be64(c + 2, lba);
	put_be32(c + 10, len);
}

static void write10(uint32_t lba, uint16_t n, uint8_t fill)
{
	uint8_t c[10];
	struct harness_result r;

	memset(buf, fill, (size_t)n * BS);
	cdb10(c, SCSI_OP_WRITE_10, 0, lba, n);
	harness_run(&h, 0, c, 10, buf, n * BS, 0, &r);
	harness_expect_good(&r);
}

/* SBC-4 5.43 / 5.17: what WRITE(10) stores, READ(10) returns. */
START_TEST(write10_read10_round_trip)
{
	uint8_t c[10];
	struct harness_result r;

	write10(100, 4, 0x5a);
	cdb10(c, SCSI_OP_READ_10, 0, 100, 4);
	harness_run(&h, 0, c, 10, NULL, 0, 4 * BS, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in_len, 4 * BS);
	for (unsigned i = 0; i < 4 * BS; i++)
		ck_assert_uint_eq(r.data_in[i], 0x5a);
	ck_assert_uint_eq(r.residual_kind, SCSI_RESIDUAL_NONE);
}
END_TEST

/* READ(6)/WRITE(6): 21-bit LBA (byte 1 bits 4:0, bytes 2-3); data round trip. */
START_TEST(write6_read6_round_trip)
{
	uint8_t c[6];
	struct harness_result r;

	memset(buf, 0x11, 2 * BS);
	cdb6(c, SCSI_OP_WRITE_6, 0x700, 2);
	harness_run(&h, 0, c, 6, buf, 2 * BS, 0, &r);
	harness_expect_good(&r);
	cdb6(c, SCSI_OP_READ_6, 0x700, 2);
	harness_run(&h, 0, c, 6, NULL, 0, 2 * BS, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in_len, 2 * BS);
	ck_assert_uint_eq(r.data_in[0], 0x11);
	ck_assert_uint_eq(r.data_in[2 * BS - 1], 0x11);
}
END_TEST

/* SBC-4 5.15: READ(6) TRANSFER LENGTH 0 means 256 blocks. */
START_TEST(read6_zero_means_256_blocks)
{
	uint8_t c[6];
	struct harness_result r;

	cdb6(c, SCSI_OP_READ_6, 0, 0);
	harness_run(&h, 0, c, 6, NULL, 0, 256 * BS, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.residual_kind, SCSI_RESIDUAL_NONE);
}
END_TEST

/* SBC-4 5.15: READ(6) at 0x1fffff (the largest 21-bit LBA) on a small LU -> 05/21/00. */
START_TEST(read6_lba_out_of_range)
{
	uint8_t c[6];
	struct harness_result r;

	cdb6(c, SCSI_OP_READ_6, 0x1fffff, 1);
	harness_run(&h, 0, c, 6, NULL, 0, BS, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
}
END_TEST

/* SBC-4 5.17: TRANSFER LENGTH 0 is not an error and transfers nothing. */
START_TEST(read10_zero_blocks_good)
{
	uint8_t c[10];
	struct harness_result r;

	cdb10(c, SCSI_OP_READ_10, 0, 0, 0);
	harness_run(&h, 0, c, 10, NULL, 0, 0xffffffff, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in_len, 0);
}
END_TEST

/* SBC-4 4.5: 0 blocks at LBA past the end still checks the LBA -> 05/21/00. */
START_TEST(read10_zero_blocks_past_end)
{
	uint8_t c[10];
	struct harness_result r;

	cdb10(c, SCSI_OP_READ_10, 0, NUM_BLOCKS + 1, 0);
	harness_run(&h, 0, c, 10, NULL, 0, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
}
END_TEST

/* SBC-4 4.5: LBA + TRANSFER LENGTH past the capacity -> 05/21/00; the last blocks themselves are fine. */
START_TEST(read_beyond_eol)
{
	uint8_t c[16];
	struct harness_result r;

	cdb10(c, SCSI_OP_READ_10, 0, NUM_BLOCKS - 1, 2);
	harness_run(&h, 0, c, 10, NULL, 0, 2 * BS, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
	cdb10(c, SCSI_OP_READ_10, 0, NUM_BLOCKS - 2, 2);
	harness_run(&h, 0, c, 10, NULL, 0, 2 * BS, &r);
	harness_expect_good(&r);
	cdb12(c, SCSI_OP_READ_12, 0, NUM_BLOCKS, 1);
	harness_run(&h, 0, c, 12, NULL, 0, BS, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
	/* LBA -1 with 1 block: the sum wraps; still out of range */
	cdb16(c, SCSI_OP_READ_16, 0, UINT64_MAX, 1);
	harness_run(&h, 0, c, 16, NULL, 0, BS, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
}
END_TEST

/*
 * SBC-4 5.17: RDPROTECT != 0 on an LU without PI -> 05/24/00 on byte 1 (the
 * CDB USAGE DATA check in cmd.c catches it first and points at the highest
 * bit set).
 */
START_TEST(read10_rdprotect_invalid)
{
	uint8_t c[10];
	struct harness_result r;

	for (uint8_t p = 1; p < 8; p++) {
		cdb10(c, SCSI_OP_READ_10, (uint8_t)(p << 5), 0, 1);
		harness_run(&h, 0, c, 10, NULL, 0, BS, &r);
		harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
		/* SPC-4 4.5.2.4.2: the bit pointer names the leftmost bit of the RDPROTECT field. */
		harness_expect_field_pointer(&r, 1, 7);
	}
}
END_TEST

/* SBC-4 5.17: DPO and FUA are accepted when the DPOFUA bit is one. */
START_TEST(read_write_dpo_fua_accepted)
{
	uint8_t c[16];
	struct harness_result r;

	cdb16(c, SCSI_OP_READ_16, 0x18, 0, 1);
	harness_run(&h, 0, c, 16, NULL, 0, BS, &r);
	harness_expect_good(&r);
	memset(buf, 0x77, BS);
	cdb12(c, SCSI_OP_WRITE_12, 0x18, 3, 1);
	harness_run(&h, 0, c, 12, buf, BS, 0, &r);
	harness_expect_good(&r);
}
END_TEST

/* DPOFUA = 0 in the mode parameter header: DPO -> 05/24/00 byte 1 bit 4, FUA -> byte 1 bit 3. */
START_TEST(dpo_fua_rejected_without_dpofua)
{
	uint8_t c[10];
	struct harness_result r;

	h.lu->mode_current.dpofua = false;
	cdb10(c, SCSI_OP_READ_10, 0x10, 0, 1);
	harness_run(&h, 0, c, 10, NULL, 0, BS, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 1, 4);
	cdb10(c, SCSI_OP_READ_10, 0x08, 0, 1);
	harness_run(&h, 0, c, 10, NULL, 0, BS, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 1, 3);
}
END_TEST

/* SBC-4 6.6.4: TRANSFER LENGTH over MAXIMUM TRANSFER LENGTH -> 05/24/00 on the TRANSFER LENGTH field. */
START_TEST(max_transfer_length_exceeded)
{
	uint8_t c[16];
	struct harness_result r;

	cdb10(c, SCSI_OP_READ_10, 0, 0, 9);
	harness_run(&h, 0, c, 10, NULL, 0, 9 * BS, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 7, -1);
	cdb16(c, SCSI_OP_WRITE_16, 0, 0, 9);
	harness_run(&h, 0, c, 16, buf, 9 * BS, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 10, -1);
	cdb10(c, SCSI_OP_READ_10, 0, 0, 8);
	harness_run(&h, 0, c, 10, NULL, 0, 8 * BS, &r);
	harness_expect_good(&r);
}
END_TEST

/* SBC-4 5.43: WRITE(16) with TRANSFER LENGTH 0 and no Data-Out is GOOD; past the end -> 05/21/00. */
START_TEST(write16_zero_blocks)
{
	uint8_t c[16];
	struct harness_result r;

	cdb16(c, SCSI_OP_WRITE_16, 0, 0, 0);
	harness_run(&h, 0, c, 16, NULL, 0, 0, &r);
	harness_expect_good(&r);
	cdb16(c, SCSI_OP_WRITE_16, 0, NUM_BLOCKS + 1, 0);
	harness_run(&h, 0, c, 16, NULL, 0, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
}
END_TEST

/* SBC-4 5.43: the Data-Out beyond TRANSFER LENGTH (EDTL > SPDTL) is not written. */
START_TEST(write10_only_transfer_length_written)
{
	uint8_t c[10];
	struct harness_result r;

	write10(10, 2, 'a');
	memset(buf, 'b', 2 * BS);
	cdb10(c, SCSI_OP_WRITE_10, 0, 10, 1);
	harness_run(&h, 0, c, 10, buf, 2 * BS, 2 * BS, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.residual_kind, SCSI_RESIDUAL_UNDERFLOW);
	ck_assert_uint_eq(r.residual, BS);
	cdb10(c, SCSI_OP_READ_10, 0, 10, 2);
	harness_run(&h, 0, c, 10, NULL, 0, 2 * BS, &r);
	ck_assert_uint_eq(r.data_in[BS - 1], 'b');
	ck_assert_uint_eq(r.data_in[BS], 'a');
}
END_TEST

/* SBC-4 5.46: WRITE AND VERIFY BYTCHK 00b and 01b write the data and succeed. */
START_TEST(write_and_verify_bytchk_0_1)
{
	uint8_t c[16];
	struct harness_result r;

	memset(buf, 0xa6, 4 * BS);
	cdb10(c, SCSI_OP_WRITE_AND_VERIFY_10, 0x00, 20, 4);
	harness_run(&h, 0, c, 10, buf, 4 * BS, 0, &r);
	harness_expect_good(&r);
	memset(buf, 0xa7, 4 * BS);
	cdb12(c, SCSI_OP_WRITE_AND_VERIFY_12, 0x02, 20, 4);
	harness_run(&h, 0, c, 12, buf, 4 * BS, 0, &r);
	harness_expect_good(&r);
	memset(buf, 0xa8, 4 * BS);
	cdb16(c, SCSI_OP_WRITE_AND_VERIFY_16, 0x12, 20, 4); /* DPO + BYTCHK 01b */
	harness_run(&h, 0, c, 16, buf, 4 * BS, 0, &r);
	harness_expect_good(&r);
	cdb10(c, SCSI_OP_READ_10, 0, 20, 4);
	harness_run(&h, 0, c, 10, NULL, 0, 4 * BS, &r);
	ck_assert_uint_eq(r.data_in[0], 0xa8);
	ck_assert_uint_eq(r.data_in[4 * BS - 1], 0xa8);
}
END_TEST

/* SBC-4 5.46: WRITE AND VERIFY BYTCHK 10b and 11b are reserved -> 05/24/00 field pointer byte 1 bit 2. */
START_TEST(write_and_verify_bytchk_reserved)
{
	uint8_t c[10];
	struct harness_result r;

	cdb10(c, SCSI_OP_WRITE_AND_VERIFY_10, 0x04, 0, 1);
	harness_run(&h, 0, c, 10, buf, BS, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 1, 2);
	cdb10(c, SCSI_OP_WRITE_AND_VERIFY_10, 0x06, 0, 1);
	harness_run(&h, 0, c, 10, buf, BS, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 1, 2);
}
END_TEST

/* SBC-4 5.46: WRITE AND VERIFY 0 blocks GOOD; 0 blocks past the end -> 05/21/00. */
START_TEST(write_and_verify_zero_blocks)
{
	uint8_t c[10];
	struct harness_result r;

	cdb10(c, SCSI_OP_WRITE_AND_VERIFY_10, 0, 0, 0);
	harness_run(&h, 0, c, 10, NULL, 0, 0, &r);
	harness_expect_good(&r);
	cdb10(c, SCSI_OP_WRITE_AND_VERIFY_10, 0, 0xffffffff, 0);
	harness_run(&h, 0, c, 10, NULL, 0, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
}
END_TEST

/* SBC-4 5.9: ORWRITE(16) ORs the Data-Out into the medium (0x0f | 0xf0 = 0xff). */
START_TEST(orwrite_ors_data)
{
	uint8_t c[16];
	struct harness_result r;

	write10(30, 3, 0x0f);
	memset(buf, 0xf0, 3 * BS);
	buf[5] = 0x00;
	cdb16(c, SCSI_OP_ORWRITE_16, 0, 30, 3);
	harness_run(&h, 0, c, 16, buf, 3 * BS, 0, &r);
	harness_expect_good(&r);
	cdb10(c, SCSI_OP_READ_10, 0, 30, 3);
	harness_run(&h, 0, c, 10, NULL, 0, 3 * BS, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in[0], 0xff);
	ck_assert_uint_eq(r.data_in[5], 0x0f);
	ck_assert_uint_eq(r.data_in[3 * BS - 1], 0xff);
}
END_TEST

/* SBC-4 5.9: ORPROTECT != 0 without PI -> 05/24/00; 0 blocks past the end -> 05/21/00. */
START_TEST(orwrite_errors)
{
	uint8_t c[16];
	struct harness_result r;

	cdb16(c, SCSI_OP_ORWRITE_16, 0x20, 0, 1);
	harness_run(&h, 0, c, 16, buf, BS, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	cdb16(c, SCSI_OP_ORWRITE_16, 0, 0x8000000000000000ull, 0);
	harness_run(&h, 0, c, 16, NULL, 0, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
	cdb16(c, SCSI_OP_ORWRITE_16, 0, 0, 0);
	harness_run(&h, 0, c, 16, NULL, 0, 0, &r);
	harness_expect_good(&r);
}
END_TEST

/* The CDB-shape decoders of sbc.h (SBC-4 READ/WRITE layouts). */
START_TEST(cdb_decoders)
{
	uint8_t c[16];

	cdb6(c, SCSI_OP_READ_6, 0x1abcde, 0);
	ck_assert_uint_eq(sbc_cdb_shape(c), 6);
	ck_assert_uint_eq(sbc_cdb_lba(c), 0x1abcde);
	ck_assert_uint_eq(sbc_cdb_transfer_length(c), 256);
	ck_assert_uint_eq(sbc_cdb_transfer_length_raw(c), 0);
	cdb10(c, SCSI_OP_WRITE_10, 0xf8, 0x12345678, 0x9abc);
	c[6] = 0x3f;
	ck_assert_uint_eq(sbc_cdb_shape(c), 10);
	ck_assert_uint_eq(sbc_cdb_lba(c), 0x12345678);
	ck_assert_uint_eq(sbc_cdb_transfer_length(c), 0x9abc);
	ck_assert_uint_eq(sbc_cdb_protect(c), 7);
	ck_assert(sbc_cdb_dpo(c) && sbc_cdb_fua(c));
	ck_assert_uint_eq(sbc_cdb_group_number(c), 0x3f);
	cdb12(c, SCSI_OP_READ_12, 0, 0x01020304, 0x05060708);
	c[10] = 0x05;
	ck_assert_uint_eq(sbc_cdb_shape(c), 12);
	ck_assert_uint_eq(sbc_cdb_transfer_length(c), 0x05060708);
	ck_assert_uint_eq(sbc_cdb_transfer_length_offset(c), 6);
	ck_assert_uint_eq(sbc_cdb_group_number(c), 5);
	cdb16(c, SCSI_OP_READ_16, 0, 0x0102030405060708ull, 0x0a0b0c0d);
	ck_assert_uint_eq(sbc_cdb_shape(c), 16);
	ck_assert_uint_eq(sbc_cdb_lba(c), 0x0102030405060708ull);
	ck_assert_uint_eq(sbc_cdb_transfer_length(c), 0x0a0b0c0d);
	ck_assert_uint_eq(sbc_cdb_transfer_length_offset(c), 10);
}
END_TEST

/*
 * FCP-4 9.4.2 a) / libiscsi iSCSIResiduals: an expected transfer length of
 * whole blocks shorter than TRANSFER LENGTH -> GOOD, only those blocks
 * written, overflow residual; a partial block -> 05/0E/03, nothing written.
 */
START_TEST(short_data_out_whole_blocks)
{
	uint8_t c[10];
	struct harness_result r;

	write10(10, 2, 'a');
	memset(buf, 'b', 2 * BS);
	cdb10(c, SCSI_OP_WRITE_10, 0, 10, 2);
	harness_run(&h, 0, c, 10, buf, 2 * BS, BS, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.residual_kind, SCSI_RESIDUAL_OVERFLOW);
	ck_assert_uint_eq(r.residual, BS);
	cdb10(c, SCSI_OP_WRITE_AND_VERIFY_10, 0x02, 10, 2);
	memset(buf, 'c', 2 * BS);
	harness_run(&h, 0, c, 10, buf, 2 * BS, 200, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_COMMAND_INFORMATION_UNIT);
	ck_assert_uint_eq(r.residual_kind, SCSI_RESIDUAL_OVERFLOW);
	ck_assert_uint_eq(r.residual, 2 * BS - 200);
	cdb10(c, SCSI_OP_READ_10, 0, 10, 2);
	harness_run(&h, 0, c, 10, NULL, 0, 2 * BS, &r);
	ck_assert_uint_eq(r.data_in[0], 'b');
	ck_assert_uint_eq(r.data_in[BS - 1], 'b');
	ck_assert_uint_eq(r.data_in[BS], 'a');
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sbc_rw");
	TCase *tc = tcase_create("rw");
	TCase *lim = tcase_create("limits");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, write10_read10_round_trip);
	tcase_add_test(tc, write6_read6_round_trip);
	tcase_add_test(tc, read6_zero_means_256_blocks);
	tcase_add_test(tc, read6_lba_out_of_range);
	tcase_add_test(tc, read10_zero_blocks_good);
	tcase_add_test(tc, read10_zero_blocks_past_end);
	tcase_add_test(tc, read_beyond_eol);
	tcase_add_test(tc, read10_rdprotect_invalid);
	tcase_add_test(tc, read_write_dpo_fua_accepted);
	tcase_add_test(tc, dpo_fua_rejected_without_dpofua);
	tcase_add_test(tc, write16_zero_blocks);
	tcase_add_test(tc, write10_only_transfer_length_written);
	tcase_add_test(tc, write_and_verify_bytchk_0_1);
	tcase_add_test(tc, write_and_verify_bytchk_reserved);
	tcase_add_test(tc, write_and_verify_zero_blocks);
	tcase_add_test(tc, orwrite_ors_data);
	tcase_add_test(tc, orwrite_errors);
	tcase_add_test(tc, cdb_decoders);
	tcase_add_test(tc, short_data_out_whole_blocks);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(lim, setup_limited, teardown);
	tcase_add_test(lim, max_transfer_length_exceeded);
	suite_add_tcase(s, lim);
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
