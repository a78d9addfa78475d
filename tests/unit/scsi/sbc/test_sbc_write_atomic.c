/* sbc_write_atomic.c: WRITE ATOMIC(16) and (32) (SBC-4 4.29, 5.48, 5.49). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "core/scsi_internal.h"

#define NUM_BLOCKS 2048
#define BS 512

/* The LU's atomic limits (Block Limits VPD page, SBC-4 6.6.4). */
#define MAX_ATOMIC 16          /* MAXIMUM ATOMIC TRANSFER LENGTH */
#define ALIGNMENT 4            /* ATOMIC ALIGNMENT */
#define GRANULARITY 2          /* ATOMIC TRANSFER LENGTH GRANULARITY */
#define MAX_WITH_BOUNDARY 8    /* MAXIMUM ATOMIC TRANSFER LENGTH WITH ATOMIC BOUNDARY */
#define MAX_BOUNDARY 4         /* MAXIMUM ATOMIC BOUNDARY SIZE */

#define OLD 0xee               /* what the medium holds before a test writes */

static struct harness h;
static uint8_t buf[64 * BS];

static void base_params(struct scsi_lu_params *p)
{
	memset(p, 0, sizeof(*p));
	p->kind = SCSI_LU_CONVENTIONAL;
	p->max_compare_and_write = 255;
}

/* The medium: OLD everywhere in the first 128 blocks. */
static void prefill(void)
{
	static uint8_t old[128 * BS];

	memset(old, OLD, sizeof(old));
	ck_assert_int_eq(h.lu->backend->ops->write(h.lu->backend, old, sizeof(old), 0, 0), 0);
}

static void setup(void)
{
	struct scsi_lu_params p;

	base_params(&p);
	p.max_atomic_transfer_length = MAX_ATOMIC;
	p.atomic_alignment = ALIGNMENT;
	p.atomic_transfer_length_granularity = GRANULARITY;
	p.max_atomic_transfer_length_with_boundary = MAX_WITH_BOUNDARY;
	p.max_atomic_boundary_size = MAX_BOUNDARY;
	harness_init(&h, NUM_BLOCKS, BS, &p);
	harness_clear_ua(&h);
	prefill();
}

/* No atomic lengths advertised. */
static void setup_no_atomic(void)
{
	struct scsi_lu_params p;

	base_params(&p);
	harness_init(&h, NUM_BLOCKS, BS, &p);
	harness_clear_ua(&h);
	prefill();
}

static void teardown(void)
{
	harness_fini(&h);
}

/* Fills n blocks of buf with tag + block index. */
static void pattern(uint8_t tag, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		memset(buf + (size_t)i * BS, (uint8_t)(tag + i), BS);
}

/* WRITE ATOMIC(16); len = bytes of Data-Out sent, edtl = expected length (0: len). */
static void wa16(uint8_t b1, uint64_t lba, uint16_t boundary, uint16_t tl, uint32_t len, uint32_t edtl,
		 struct harness_result *r)
{
	uint8_t c[16] = { SCSI_OP_WRITE_ATOMIC_16, b1 };

	put_be64(c + 2, lba);
	put_be16(c + 10, boundary);
	put_be16(c + 12, tl);
	harness_run(&h, 0, c, 16, buf, len, edtl, r);
}

/* The common case: the whole Data-Out. */
static void wa(uint64_t lba, uint16_t boundary, uint16_t tl, struct harness_result *r)
{
	wa16(0, lba, boundary, tl, (uint32_t)tl * BS, 0, r);
}

static void expect_invalid_cdb(const struct harness_result *r, uint16_t byte)
{
	harness_expect_sense(r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(r, byte, -1);
}

/* Every byte of blocks [lba, lba + n) on the backend is v. */
static void expect_medium_byte(uint64_t lba, uint32_t n, uint8_t v)
{
	static uint8_t back[64 * BS];

	ck_assert_uint_le(n, 64);
	ck_assert_int_eq(h.lu->backend->ops->read(h.lu->backend, back, (size_t)n * BS, lba * BS), 0);
	for (size_t i = 0; i < (size_t)n * BS; i++)
		if (back[i] != v)
			ck_abort_msg("LBA %llu byte %zu: %#x, expected %#x", (unsigned long long)(lba + i / BS), i % BS,
				     back[i], v);
}

/* Blocks [lba, lba + n) on the backend hold pattern(tag, ...) from its block 'first'. */
static void expect_medium_pattern(uint64_t lba, uint32_t n, uint8_t tag, uint32_t first)
{
	for (uint32_t i = 0; i < n; i++)
		expect_medium_byte(lba + i, 1, (uint8_t)(tag + first + i));
}

/* SBC-4 5.48: WRITE ATOMIC(16) writes TRANSFER LENGTH blocks at the LBA, GOOD; nothing around them changes. */
START_TEST(good_writes)
{
	struct harness_result r;

	pattern(0x10, 8);
	wa(8, 0, 8, &r);
	harness_expect_good(&r);
	expect_medium_pattern(8, 8, 0x10, 0);
	expect_medium_byte(7, 1, OLD);
	expect_medium_byte(16, 1, OLD);
}
END_TEST

/* SBC-4 5.48: with FUA (and DPO) the write is the same, GOOD (the LU supports DPO and FUA). */
START_TEST(good_with_fua)
{
	struct harness_result r;

	pattern(0x30, 4);
	wa16(0x18, 4, 0, 4, 4 * BS, 0, &r);
	harness_expect_good(&r);
	expect_medium_pattern(4, 4, 0x30, 0);
}
END_TEST

/*
 * SBC-4 5.48: the limits themselves are allowed: MAXIMUM ATOMIC TRANSFER
 * LENGTH blocks; ATOMIC BOUNDARY = MAXIMUM ATOMIC BOUNDARY SIZE with MAXIMUM
 * ATOMIC TRANSFER LENGTH WITH ATOMIC BOUNDARY blocks.
 */
START_TEST(good_at_limits)
{
	struct harness_result r;

	pattern(0x40, MAX_ATOMIC);
	wa(0, 0, MAX_ATOMIC, &r);
	harness_expect_good(&r);
	expect_medium_pattern(0, MAX_ATOMIC, 0x40, 0);
	pattern(0x60, MAX_WITH_BOUNDARY);
	wa(32, MAX_BOUNDARY, MAX_WITH_BOUNDARY, &r);
	harness_expect_good(&r);
	expect_medium_pattern(32, MAX_WITH_BOUNDARY, 0x60, 0);
}
END_TEST

/* SBC-4 5.48, 6.6.4: ATOMIC BOUNDARY 0 and TRANSFER LENGTH > MAXIMUM ATOMIC TRANSFER LENGTH -> 05/24/00 on byte 12. */
START_TEST(over_max_atomic)
{
	struct harness_result r;

	pattern(0x10, MAX_ATOMIC + 2);
	wa(0, 0, MAX_ATOMIC + 2, &r);
	expect_invalid_cdb(&r, 12);
	expect_medium_byte(0, MAX_ATOMIC + 2, OLD);
}
END_TEST

/* SBC-4 5.48: ATOMIC BOUNDARY > MAXIMUM ATOMIC BOUNDARY SIZE -> 05/24/00 on byte 10 (ATOMIC BOUNDARY). */
START_TEST(boundary_over_max)
{
	struct harness_result r;

	pattern(0x10, 4);
	wa(0, MAX_BOUNDARY + 1, 4, &r);
	expect_invalid_cdb(&r, 10);
	expect_medium_byte(0, 4, OLD);
}
END_TEST

/*
 * SBC-4 5.48: ATOMIC BOUNDARY nonzero: the limit is MAXIMUM ATOMIC TRANSFER
 * LENGTH WITH ATOMIC BOUNDARY (8), not MAXIMUM ATOMIC TRANSFER LENGTH (16):
 * 10 blocks -> 05/24/00 on byte 12; the same 10 blocks with boundary 0 are GOOD.
 */
START_TEST(boundary_uses_with_boundary_limit)
{
	struct harness_result r;

	pattern(0x10, 10);
	wa(0, 2, 10, &r);
	expect_invalid_cdb(&r, 12);
	expect_medium_byte(0, 10, OLD);
	wa(0, 0, 10, &r);
	harness_expect_good(&r);
	expect_medium_pattern(0, 10, 0x10, 0);
}
END_TEST

/* SBC-4 5.48: ATOMIC ALIGNMENT: an LBA that is not a multiple of it -> 05/24/00 on byte 2 (LBA). */
START_TEST(misaligned_lba)
{
	struct harness_result r;

	pattern(0x10, 4);
	wa(ALIGNMENT + 2, 0, 4, &r);
	expect_invalid_cdb(&r, 2);
	expect_medium_byte(0, 12, OLD);
}
END_TEST

/* SBC-4 5.48: ATOMIC TRANSFER LENGTH GRANULARITY: a TRANSFER LENGTH not a multiple of it -> 05/24/00 on byte 12. */
START_TEST(length_not_granular)
{
	struct harness_result r;

	pattern(0x10, 3);
	wa(0, 0, 3, &r);
	expect_invalid_cdb(&r, 12);
	expect_medium_byte(0, 3, OLD);
}
END_TEST

/*
 * sbc_write_atomic.c's order: maximum (or boundary) first, then alignment,
 * then granularity, then WRITE(16)'s checks (WRPROTECT, LBA range).
 */
START_TEST(check_order)
{
	struct harness_result r;

	pattern(0x10, 20);
	/* bad boundary + too long + misaligned + not granular: the boundary */
	wa16(0, 6, MAX_BOUNDARY + 1, 17, 17 * BS, 0, &r);
	expect_invalid_cdb(&r, 10);
	/* boundary 0, too long + misaligned: the length */
	wa16(0, 6, 0, MAX_ATOMIC + 2, (MAX_ATOMIC + 2) * BS, 0, &r);
	expect_invalid_cdb(&r, 12);
	/* boundary ok, too long for it + misaligned: the length */
	wa16(0, 6, 2, MAX_WITH_BOUNDARY + 2, (MAX_WITH_BOUNDARY + 2) * BS, 0, &r);
	expect_invalid_cdb(&r, 12);
	/* misaligned + not granular: the LBA */
	wa16(0, 6, 0, 3, 3 * BS, 0, &r);
	expect_invalid_cdb(&r, 2);
	/* not granular + past the capacity (aligned): granularity first, not 21/00 */
	wa16(0, NUM_BLOCKS, 0, 3, 3 * BS, 0, &r);
	expect_invalid_cdb(&r, 12);
	/* too long + WRPROTECT on an LU without PI: the atomic limit first, not byte 1 */
	wa16(0x20, 0, 0, MAX_ATOMIC + 2, (MAX_ATOMIC + 2) * BS, 0, &r);
	expect_invalid_cdb(&r, 12);
	/* within the limits, WRPROTECT != 0 without PI: 05/24/00 on byte 1 bit 7 */
	wa16(0x20, 0, 0, 4, 4 * BS, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 1, 7);
	expect_medium_byte(0, 20, OLD);
}
END_TEST

/* SBC-4 4.5: LBA + TRANSFER LENGTH past the capacity -> 05/21/00, nothing written. */
START_TEST(lba_out_of_range)
{
	struct harness_result r;

	pattern(0x10, 8);
	wa(NUM_BLOCKS - 4, 0, 8, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
	expect_medium_byte(NUM_BLOCKS - 4, 4, 0);
	wa(NUM_BLOCKS + 4, 0, 0, &r); /* even with TRANSFER LENGTH 0 */
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
	/* the last blocks themselves are fine */
	wa(NUM_BLOCKS - 8, 0, 8, &r);
	harness_expect_good(&r);
	expect_medium_pattern(NUM_BLOCKS - 8, 8, 0x10, 0);
}
END_TEST

/* SBC-4 5.48: TRANSFER LENGTH 0: no data is transferred, nothing is written, GOOD. */
START_TEST(zero_length_writes_nothing)
{
	struct harness_result r;

	pattern(0x10, 4);
	wa16(0, 8, 0, 0, 0, 0, &r);
	harness_expect_good(&r);
	expect_medium_byte(0, 32, OLD);
}
END_TEST

/*
 * FCP-4 9.4.2 b) (cmd.c): a Data-Out shorter than the transfer (the
 * expected length is too small) is refused with 05/0E/03 and nothing is
 * written: an atomic write is all or nothing.
 */
START_TEST(short_data_out_refused)
{
	struct harness_result r;

	pattern(0x10, 8);
	wa16(0, 8, 0, 8, 4 * BS, 4 * BS, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_COMMAND_INFORMATION_UNIT);
	expect_medium_byte(8, 8, OLD);
	/* even one block short */
	wa16(0, 8, 0, 8, 7 * BS, 7 * BS, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_COMMAND_INFORMATION_UNIT);
	expect_medium_byte(8, 8, OLD);
}
END_TEST

/* The Block Limits VPD page (B0h) bytes 44-63 through INQUIRY EVPD = 1. */
static void block_limits(struct harness_result *r)
{
	static const uint8_t cdb[6] = { SCSI_OP_INQUIRY, 0x01, VPD_BLOCK_LIMITS, 0, 255, 0 };

	harness_run(&h, 0, cdb, 6, NULL, 0, 0, r);
	harness_expect_good(r);
	ck_assert_uint_eq(r->data_in[1], VPD_BLOCK_LIMITS);
	ck_assert_uint_ge(r->data_in_len, 64);
}

/* REPORT SUPPORTED OPERATION CODES, one command (REPORTING OPTIONS 001b): the SUPPORT field. */
static uint8_t rsoc_support(uint8_t opcode)
{
	uint8_t cdb[12] = { SCSI_OP_MAINTENANCE_IN, SCSI_SA_REPORT_SUPPORTED_OPERATION_CODES, 0x01, opcode };
	struct harness_result r;

	put_be32(cdb + 6, 512);
	harness_run(&h, 0, cdb, 12, NULL, 0, 0, &r);
	harness_expect_good(&r);
	return r.data_in[1] & 0x07;
}

/* SBC-4 6.6.4: the Block Limits page reports the atomic limits of an LU that supports WRITE ATOMIC. */
START_TEST(vpd_reports_limits)
{
	struct harness_result r;

	block_limits(&r);
	ck_assert_uint_eq(get_be32(r.data_in + 44), MAX_ATOMIC);
	ck_assert_uint_eq(get_be32(r.data_in + 48), ALIGNMENT);
	ck_assert_uint_eq(get_be32(r.data_in + 52), GRANULARITY);
	ck_assert_uint_eq(get_be32(r.data_in + 56), MAX_WITH_BOUNDARY);
	ck_assert_uint_eq(get_be32(r.data_in + 60), MAX_BOUNDARY);
	ck_assert_uint_eq(rsoc_support(SCSI_OP_WRITE_ATOMIC_16), 0x3); /* supported, standard */
}
END_TEST

/*
 * A backend that cannot keep the atomic promise (can_write_atomic = false):
 * WRITE ATOMIC is not supported (05/20/00, REPORT SUPPORTED OPERATION CODES
 * SUPPORT 001b) and the Block Limits page's atomic fields (bytes 44-63) are 0.
 */
START_TEST(backend_cannot_write_atomic)
{
	struct harness_result r;

	h.lu->backend->can_write_atomic = false;
	ck_assert(!sbc_write_atomic_enabled(h.lu));
	pattern(0x10, 4);
	wa(0, 0, 4, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_COMMAND_OPERATION_CODE);
	expect_medium_byte(0, 4, OLD);
	block_limits(&r);
	for (unsigned i = 44; i < 64; i++)
		ck_assert_uint_eq(r.data_in[i], 0);
	ck_assert_uint_eq(rsoc_support(SCSI_OP_WRITE_ATOMIC_16), 0x1); /* not supported */
	/* and back */
	h.lu->backend->can_write_atomic = true;
	wa(0, 0, 4, &r);
	harness_expect_good(&r);
	expect_medium_pattern(0, 4, 0x10, 0);
}
END_TEST

/*
 * SBC-4 5.48 / 6.6.4: an LU that advertises no atomic lengths does not
 * support WRITE ATOMIC: 05/20/00, nothing written, the VPD atomic fields 0.
 */
START_TEST(no_atomic_lengths_unsupported)
{
	struct harness_result r;

	ck_assert(!sbc_write_atomic_enabled(h.lu));
	pattern(0x10, 4);
	wa(0, 0, 4, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_COMMAND_OPERATION_CODE);
	expect_medium_byte(0, 4, OLD);
	block_limits(&r);
	for (unsigned i = 44; i < 64; i++)
		ck_assert_uint_eq(r.data_in[i], 0);
	ck_assert_uint_eq(rsoc_support(SCSI_OP_WRITE_ATOMIC_16), 0x1);
}
END_TEST

/* sbc_write_atomic_enabled: MAXIMUM ATOMIC TRANSFER LENGTH WITH ATOMIC BOUNDARY alone is enough. */
START_TEST(with_boundary_alone_enables)
{
	struct harness_result r;

	h.lu->params.max_atomic_transfer_length_with_boundary = 8;
	h.lu->params.max_atomic_boundary_size = 4;
	ck_assert(sbc_write_atomic_enabled(h.lu));
	pattern(0x20, 4);
	wa(0, 2, 4, &r);
	harness_expect_good(&r);
	expect_medium_pattern(0, 4, 0x20, 0);
}
END_TEST

/* The tear-atomic rule sbcemud makes of atomic_tear_write = every and atomic_tear_block = blocks (scsi_faults.h). */
static void tear_rule(uint32_t every, uint32_t blocks)
{
	struct scsi_fault_rule_params p = { .action = SCSI_FAULT_ACTION_TEAR_ATOMIC, .every = every, .count = 1,
					    .blocks = blocks, .probability = 1.0 };
	char err[128];

	ck_assert_msg(scsi_lu_fault_add(h.lu, 1, &p, err, sizeof(err)) == 0, "%s", err);
}

/*
 * Fault injection: a tear-atomic rule every 2, count 1, blocks 3: the second
 * WRITE ATOMIC that writes something writes only its first 3 blocks and
 * still returns GOOD; the first and third are whole.  Commands that write
 * nothing (TRANSFER LENGTH 0, refused) do not count.
 */
START_TEST(torn_write_fault)
{
	struct harness_result r;

	tear_rule(2, 3);
	wa16(0, 0, 0, 0, 0, 0, &r); /* TRANSFER LENGTH 0 */
	harness_expect_good(&r);
	pattern(0x10, 8);
	wa(0, 0, 8, &r);             /* the first */
	harness_expect_good(&r);
	expect_medium_pattern(0, 8, 0x10, 0);
	wa(18, 0, 8, &r);            /* refused (misaligned) */
	expect_invalid_cdb(&r, 2);
	pattern(0x30, 8);
	wa(16, 0, 8, &r);            /* the second: torn, GOOD */
	harness_expect_good(&r);
	expect_medium_pattern(16, 3, 0x30, 0);
	expect_medium_byte(19, 5, OLD);
	pattern(0x50, 8);
	wa(32, 0, 8, &r);            /* the third: whole */
	harness_expect_good(&r);
	expect_medium_pattern(32, 8, 0x50, 0);
}
END_TEST

/* atomic_tear_block >= TRANSFER LENGTH: the torn write writes every block (tear_blocks is clipped). */
START_TEST(torn_write_clipped)
{
	struct harness_result r;

	tear_rule(1, 100);
	pattern(0x10, 4);
	wa(0, 0, 4, &r);
	harness_expect_good(&r);
	expect_medium_pattern(0, 4, 0x10, 0);
	expect_medium_byte(4, 4, OLD);
}
END_TEST

/* WRITE ATOMIC(32): ATOMIC BOUNDARY b4-5, LBA b12-19, TRANSFER LENGTH b28-31. */
static void wa32(uint64_t lba, uint16_t boundary, uint32_t tl, struct harness_result *r)
{
	uint8_t c[32] = { SCSI_OP_VARIABLE_LENGTH };

	put_be16(c + 4, boundary);
	c[7] = 0x18;
	put_be16(c + 8, SCSI_SA_WRITE_ATOMIC_32);
	put_be64(c + 12, lba);
	put_be32(c + 28, tl);
	harness_run(&h, 0, c, 32, buf, tl * BS, 0, r);
}

/*
 * SBC-4 5.49: WRITE ATOMIC(32) is for type 2 protection: without it (and
 * without allow_32_byte_cdbs) the command is not supported (05/20/00).
 */
START_TEST(cdb32_needs_type2)
{
	struct harness_result r;

	pattern(0x10, 4);
	wa32(0, 0, 4, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_COMMAND_OPERATION_CODE);
	expect_medium_byte(0, 4, OLD);
}
END_TEST

/* allow_32_byte_cdbs: WRITE ATOMIC(32) writes, and its field pointers name its own fields (4, 12, 28). */
START_TEST(cdb32_allowed)
{
	struct harness_result r;

	h.lu->params.allow_32_byte_cdbs = true;
	pattern(0x10, 4);
	wa32(4, 0, 4, &r);
	harness_expect_good(&r);
	expect_medium_pattern(4, 4, 0x10, 0);
	wa32(0, MAX_BOUNDARY + 1, 4, &r);
	expect_invalid_cdb(&r, 4);
	wa32(2, 0, 4, &r);
	expect_invalid_cdb(&r, 12);
	wa32(0, 0, 3, &r);
	expect_invalid_cdb(&r, 28);
	wa32(0, 0, MAX_ATOMIC + 2, &r);
	expect_invalid_cdb(&r, 28);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sbc_write_atomic");
	TCase *tc = tcase_create("write_atomic");
	TCase *off = tcase_create("no_atomic_lengths");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, good_writes);
	tcase_add_test(tc, good_with_fua);
	tcase_add_test(tc, good_at_limits);
	tcase_add_test(tc, over_max_atomic);
	tcase_add_test(tc, boundary_over_max);
	tcase_add_test(tc, boundary_uses_with_boundary_limit);
	tcase_add_test(tc, misaligned_lba);
	tcase_add_test(tc, length_not_granular);
	tcase_add_test(tc, check_order);
	tcase_add_test(tc, lba_out_of_range);
	tcase_add_test(tc, zero_length_writes_nothing);
	tcase_add_test(tc, short_data_out_refused);
	tcase_add_test(tc, vpd_reports_limits);
	tcase_add_test(tc, backend_cannot_write_atomic);
	tcase_add_test(tc, torn_write_fault);
	tcase_add_test(tc, torn_write_clipped);
	tcase_add_test(tc, cdb32_needs_type2);
	tcase_add_test(tc, cdb32_allowed);
	suite_add_tcase(s, tc);

	tcase_add_checked_fixture(off, setup_no_atomic, teardown);
	tcase_add_test(off, no_atomic_lengths_unsupported);
	tcase_add_test(off, with_boundary_alone_enables);
	suite_add_tcase(s, off);
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
