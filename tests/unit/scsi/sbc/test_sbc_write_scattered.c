/*
 * sbc_write_scattered.c: WRITE SCATTERED(16) (SBC-4 5.54), on an LU with
 * write_scattered, and with the non-standard write_scattered_atomic (every
 * range in one backend write_atomic_ranges: all or nothing).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "core/scsi_internal.h"

#define NUM_BLOCKS 2048
#define BS 512
#define MAX_DESCRIPTORS 8      /* MAXIMUM SCATTERED LBA RANGE DESCRIPTOR COUNT */
#define MAX_RANGE 16           /* MAXIMUM SCATTERED LBA RANGE TRANSFER LENGTH */
#define HEADER_LEN 32
#define DESCRIPTOR_LEN 32
#define OLD 0xee               /* what the medium holds before a test writes */

/*
 * A backend wrapper that counts what the handler asks for: plain writes
 * and write_atomic_ranges calls (and their ranges); it can fail the plain
 * write number fail_write (1 = the first) with EIO.
 */
struct count_backend {
	struct backend be;
	struct backend *inner;
	unsigned writes;
	unsigned atomic_calls;
	unsigned atomic_ranges;
	unsigned fail_write;
};

static struct count_backend *cb_of(struct backend *be)
{
	return (struct count_backend *)be;
}

static void cb_close(struct backend *be)
{
	be_close(cb_of(be)->inner);
	free(cb_of(be));
}

static int cb_read(struct backend *be, void *buf, size_t len, uint64_t off)
{
	return cb_of(be)->inner->ops->read(cb_of(be)->inner, buf, len, off);
}

static int cb_write(struct backend *be, const void *buf, size_t len, uint64_t off, unsigned flags)
{
	struct count_backend *c = cb_of(be);

	if (++c->writes == c->fail_write)
		return -EIO;
	return c->inner->ops->write(c->inner, buf, len, off, flags);
}

static int cb_flush(struct backend *be)
{
	return cb_of(be)->inner->ops->flush(cb_of(be)->inner);
}

static int cb_discard(struct backend *be, uint64_t off, uint64_t len)
{
	return cb_of(be)->inner->ops->discard(cb_of(be)->inner, off, len);
}

static int cb_write_zeroes(struct backend *be, uint64_t off, uint64_t len, unsigned flags)
{
	return cb_of(be)->inner->ops->write_zeroes(cb_of(be)->inner, off, len, flags);
}

static int cb_extent(struct backend *be, uint64_t off, uint64_t max_len, enum be_extent_kind *kind, uint64_t *len)
{
	return cb_of(be)->inner->ops->extent(cb_of(be)->inner, off, max_len, kind, len);
}

static int cb_resize(struct backend *be, uint64_t size)
{
	int rc = cb_of(be)->inner->ops->resize(cb_of(be)->inner, size);

	if (rc == 0)
		be->size = size;
	return rc;
}

static int cb_write_atomic_ranges(struct backend *be, const struct be_range *r, unsigned n, const void *buf)
{
	struct count_backend *c = cb_of(be);

	c->atomic_calls++;
	c->atomic_ranges += n;
	return c->inner->ops->write_atomic_ranges(c->inner, r, n, buf);
}

static int cb_write_atomic(struct backend *be, const void *buf, size_t len, uint64_t off)
{
	struct be_range r = { .offset = off, .len = len };

	return cb_write_atomic_ranges(be, &r, 1, buf);
}

static const struct backend_ops count_ops = {
	.name = "count",
	.close = cb_close,
	.read = cb_read,
	.write = cb_write,
	.flush = cb_flush,
	.discard = cb_discard,
	.write_zeroes = cb_write_zeroes,
	.extent = cb_extent,
	.resize = cb_resize,
	.write_atomic = cb_write_atomic,
	.write_atomic_ranges = cb_write_atomic_ranges,
};

static struct harness h;
static struct count_backend *cb;
static bool atomic_mode;

static void setup_with(bool atomic)
{
	struct scsi_lu_params p;
	static uint8_t old[256 * BS];

	memset(&p, 0, sizeof(p));
	p.kind = SCSI_LU_CONVENTIONAL;
	p.write_scattered = true;
	p.write_scattered_atomic = atomic;
	p.max_scattered_lba_range_descriptors = MAX_DESCRIPTORS;
	p.max_scattered_lba_range_transfer_length = MAX_RANGE;
	harness_init(&h, NUM_BLOCKS, BS, &p);
	harness_clear_ua(&h);
	atomic_mode = atomic;
	/* The medium: OLD in the first 256 blocks. */
	memset(old, OLD, sizeof(old));
	ck_assert_int_eq(h.lu->backend->ops->write(h.lu->backend, old, sizeof(old), 0, 0), 0);
	cb = calloc(1, sizeof(*cb));
	ck_assert_ptr_nonnull(cb);
	cb->inner = h.lu->backend;
	cb->be = *h.lu->backend;
	cb->be.ops = &count_ops;
	h.lu->backend = &cb->be;
}

static void setup_plain(void)
{
	setup_with(false);
}

static void setup_atomic(void)
{
	setup_with(true);
}

static void setup_disabled(void)
{
	struct scsi_lu_params p;

	memset(&p, 0, sizeof(p));
	p.kind = SCSI_LU_CONVENTIONAL;
	harness_init(&h, NUM_BLOCKS, BS, &p);
	harness_clear_ua(&h);
	cb = NULL;
}

static void teardown(void)
{
	harness_fini(&h);
}

struct desc {
	uint64_t lba;
	uint32_t n;
};

/* The Data-Out: up to LBDOF 4 blocks of header and descriptors, then up to 64 blocks of data. */
static uint8_t dout[(4 + 64) * BS];

/*
 * Builds the Data-Out: header, descriptors, padding to lbdof blocks, then
 * btl data blocks, block k filled with tag + k.  Returns its length.
 */
static uint32_t build(const struct desc *d, unsigned count, uint16_t lbdof, uint32_t btl, uint8_t tag)
{
	uint32_t len = (uint32_t)(lbdof + btl) * BS;

	ck_assert_uint_le(len, sizeof(dout));
	memset(dout, 0, sizeof(dout));
	for (unsigned i = 0; i < count; i++) {
		uint8_t *p = dout + HEADER_LEN + (size_t)i * DESCRIPTOR_LEN;

		ck_assert_uint_le(HEADER_LEN + (i + 1) * DESCRIPTOR_LEN, sizeof(dout));
		put_be64(p, d[i].lba);
		put_be32(p + 8, d[i].n);
	}
	for (uint32_t k = 0; k < btl; k++)
		memset(dout + (size_t)(lbdof + k) * BS, (uint8_t)(tag + k), BS);
	return len;
}

/* WRITE SCATTERED(16): b2 WRPROTECT/DPO/FUA; len bytes of Data-Out; edtl the expected length (0: len). */
static void ws16(uint8_t b2, uint16_t lbdof, uint16_t count, uint32_t btl, uint32_t len, uint32_t edtl,
		 struct harness_result *r)
{
	uint8_t c[16] = { SCSI_OP_SERVICE_ACTION_OUT_16, 0x12, b2 };

	put_be16(c + 4, lbdof);
	put_be16(c + 8, count);
	put_be32(c + 10, btl);
	harness_run(&h, 0, c, 16, dout, len, edtl, r);
}

/* Build and send: LBDOF 1 block, BTL = btl. */
static void ws(const struct desc *d, unsigned count, uint32_t btl, uint8_t tag, struct harness_result *r)
{
	uint32_t len = build(d, count, 1, btl, tag);

	ws16(0, 1, (uint16_t)count, btl, len, 0, r);
}

/* Every byte of blocks [lba, lba + n) on the backend is v. */
static void expect_medium_byte(uint64_t lba, uint32_t n, uint8_t v)
{
	static uint8_t back[BS];

	for (uint32_t b = 0; b < n; b++) {
		ck_assert_int_eq(h.lu->backend->ops->read(h.lu->backend, back, BS, (lba + b) * BS), 0);
		for (size_t i = 0; i < BS; i++)
			if (back[i] != v)
				ck_abort_msg("LBA %llu byte %zu: %#x, expected %#x", (unsigned long long)(lba + b), i,
					     back[i], v);
	}
}

/* Blocks [lba, lba + n) hold the data blocks first, first + 1, ... of tag. */
static void expect_medium_data(uint64_t lba, uint32_t n, uint8_t tag, uint32_t first)
{
	for (uint32_t i = 0; i < n; i++)
		expect_medium_byte(lba + i, 1, (uint8_t)(tag + first + i));
}

/* Nothing reached the backend (no plain write, no atomic write). */
static void expect_nothing_written(void)
{
	ck_assert_uint_eq(cb->writes, 0);
	ck_assert_uint_eq(cb->atomic_calls, 0);
}

/* INVALID FIELD IN PARAMETER LIST with the field pointer on parameter list byte 'byte' (SKSV = 1, C/D = 0, BPV = 0). */
static void expect_param_pointer(const struct harness_result *r, uint16_t byte)
{
	harness_expect_sense(r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	ck_assert_uint_eq(r->sense[15], 0x80);
	ck_assert_uint_eq(get_be16(r->sense + 16), byte);
}

static void expect_cdb_pointer(const struct harness_result *r, uint16_t byte, int bit)
{
	harness_expect_sense(r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(r, byte, bit);
}

/* Byte of descriptor i's field at off in the parameter list. */
static uint16_t field(unsigned i, unsigned off)
{
	return (uint16_t)(HEADER_LEN + i * DESCRIPTOR_LEN + off);
}

/*
 * SBC-4 5.54: each range gets the next NUMBER OF LOGICAL BLOCKS blocks of
 * the data, in descriptor order (not LBA order); a descriptor with 0 blocks
 * takes none; blocks outside the ranges are unchanged.  Without
 * write_scattered_atomic one backend write per range; with it one
 * write_atomic_ranges call holding every nonempty range, and no plain write.
 */
START_TEST(ranges_in_descriptor_order)
{
	static const struct desc d[] = { { 100, 2 }, { 10, 3 }, { 50, 0 }, { 60, 1 } };
	struct harness_result r;

	ws(d, 4, 6, 0x10, &r);
	harness_expect_good(&r);
	expect_medium_data(100, 2, 0x10, 0);
	expect_medium_data(10, 3, 0x10, 2);
	expect_medium_data(60, 1, 0x10, 5);
	expect_medium_byte(50, 1, OLD);
	expect_medium_byte(9, 1, OLD);
	expect_medium_byte(13, 1, OLD);
	expect_medium_byte(59, 1, OLD);
	expect_medium_byte(61, 1, OLD);
	expect_medium_byte(99, 1, OLD);
	expect_medium_byte(102, 1, OLD);
	if (atomic_mode) {
		ck_assert_uint_eq(cb->writes, 0);
		ck_assert_uint_eq(cb->atomic_calls, 1);
		ck_assert_uint_eq(cb->atomic_ranges, 3);
	} else {
		ck_assert_uint_eq(cb->writes, 3);
		ck_assert_uint_eq(cb->atomic_calls, 0);
	}
}
END_TEST

/* SBC-4 5.54: ranges may touch (adjacent is not overlapping); LBDOF larger than needed is padding. */
START_TEST(adjacent_ranges_and_padding)
{
	static const struct desc d[] = { { 20, 4 }, { 24, 2 } };
	struct harness_result r;
	uint32_t len = build(d, 2, 3, 6, 0x40);

	ws16(0, 3, 2, 6, len, 0, &r);
	harness_expect_good(&r);
	expect_medium_data(20, 6, 0x40, 0);
	expect_medium_byte(26, 1, OLD);
}
END_TEST

/*
 * sbc_write_scattered.c (SBC-4 5.54): LBA ranges that overlap -> 05/26/00
 * with the field pointer on the LBA field of the later of the two
 * descriptors; nothing is written.  An empty range between two overlapping
 * ones does not hide the overlap.
 */
START_TEST(overlap_refused)
{
	static const struct desc a[] = { { 10, 4 }, { 12, 2 } };
	static const struct desc b[] = { { 12, 2 }, { 10, 4 } };
	static const struct desc c[] = { { 30, 1 }, { 10, 4 }, { 13, 1 } };
	static const struct desc same[] = { { 40, 1 }, { 40, 1 } };
	static const struct desc hidden[] = { { 10, 10 }, { 12, 0 }, { 15, 1 } };
	struct harness_result r;

	ws(a, 2, 6, 0x10, &r);
	expect_param_pointer(&r, field(1, 0));
	ws(b, 2, 6, 0x10, &r);
	expect_param_pointer(&r, field(1, 0));
	ws(c, 3, 6, 0x10, &r);
	expect_param_pointer(&r, field(2, 0));
	ws(same, 2, 2, 0x10, &r);
	expect_param_pointer(&r, field(1, 0));
	ws(hidden, 3, 11, 0x10, &r);
	expect_param_pointer(&r, field(2, 0));
	expect_medium_byte(10, 5, OLD);
	expect_medium_byte(30, 1, OLD);
	expect_medium_byte(40, 1, OLD);
	expect_nothing_written();
}
END_TEST

/*
 * sbc_write_scattered.c: the NUMBER OF LOGICAL BLOCKS fields must add up to
 * BUFFER TRANSFER LENGTH -> else 05/26/00, field pointer on the NUMBER OF
 * LOGICAL BLOCKS of the descriptor where the sum passes BTL, or of the last
 * one when it falls short; nothing is written.
 */
START_TEST(sum_not_btl_refused)
{
	static const struct desc shortd[] = { { 10, 2 }, { 20, 1 } };
	static const struct desc longd[] = { { 10, 2 }, { 20, 3 }, { 30, 1 } };
	struct harness_result r;

	ws(shortd, 2, 4, 0x10, &r);   /* 3 of 4 */
	expect_param_pointer(&r, field(1, 8));
	ws(longd, 3, 4, 0x10, &r);    /* 5 > 4 at descriptor 1 */
	expect_param_pointer(&r, field(1, 8));
	expect_medium_byte(10, 2, OLD);
	expect_medium_byte(20, 3, OLD);
	expect_medium_byte(30, 1, OLD);
	expect_nothing_written();
}
END_TEST

/* SBC-4 4.5, 5.54: an LBA range past the capacity -> 05/21/00, and the valid ranges before it are not written. */
START_TEST(range_past_capacity_refused)
{
	static const struct desc d[] = { { 10, 1 }, { NUM_BLOCKS - 1, 2 } };
	static const struct desc wrap[] = { { 10, 1 }, { UINT64_MAX, 1 } };
	struct harness_result r;

	ws(d, 2, 3, 0x10, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
	ws(wrap, 2, 2, 0x10, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
	expect_medium_byte(10, 1, OLD);
	expect_medium_byte(NUM_BLOCKS - 1, 1, 0);
	expect_nothing_written();
	/* the last block itself is fine */
	{
		static const struct desc last[] = { { NUM_BLOCKS - 1, 1 } };

		ws(last, 1, 1, 0x70, &r);
		harness_expect_good(&r);
		expect_medium_data(NUM_BLOCKS - 1, 1, 0x70, 0);
	}
}
END_TEST

/*
 * SBC-4 5.54 / 6.6.5: NUMBER OF LBA RANGE DESCRIPTORS above MAXIMUM
 * SCATTERED LBA RANGE DESCRIPTOR COUNT -> 05/24/00, field pointer on CDB
 * byte 8; nothing written.  The maximum itself is GOOD.
 */
START_TEST(too_many_descriptors_refused)
{
	struct desc d[MAX_DESCRIPTORS + 1];
	struct harness_result r;

	for (unsigned i = 0; i <= MAX_DESCRIPTORS; i++)
		d[i] = (struct desc){ 10 + 2 * i, 1 };
	ws(d, MAX_DESCRIPTORS + 1, MAX_DESCRIPTORS + 1, 0x10, &r);
	expect_cdb_pointer(&r, 8, -1);
	expect_medium_byte(10, 2 * MAX_DESCRIPTORS + 2, OLD);
	expect_nothing_written();
	ws(d, MAX_DESCRIPTORS, MAX_DESCRIPTORS, 0x10, &r);
	harness_expect_good(&r);
	for (unsigned i = 0; i < MAX_DESCRIPTORS; i++)
		expect_medium_data(10 + 2 * i, 1, 0x10, i);
}
END_TEST

/*
 * sbc_write_scattered.c (SBC-4 6.6.5): a range longer than MAXIMUM
 * SCATTERED LBA RANGE TRANSFER LENGTH -> 05/26/00, field pointer on its
 * NUMBER OF LOGICAL BLOCKS; nothing written (not even the valid range
 * before it).  The maximum itself is GOOD.
 */
START_TEST(range_too_long_refused)
{
	static const struct desc d[] = { { 10, 1 }, { 100, MAX_RANGE + 1 } };
	static const struct desc ok[] = { { 100, MAX_RANGE } };
	struct harness_result r;

	ws(d, 2, MAX_RANGE + 2, 0x10, &r);
	expect_param_pointer(&r, field(1, 8));
	expect_medium_byte(10, 1, OLD);
	expect_medium_byte(100, MAX_RANGE + 1, OLD);
	expect_nothing_written();
	ws(ok, 1, MAX_RANGE, 0x10, &r);
	harness_expect_good(&r);
	expect_medium_data(100, MAX_RANGE, 0x10, 0);
}
END_TEST

/*
 * SBC-4 5.54: LOGICAL BLOCK DATA OFFSET 0 with descriptors, or too small to
 * hold the header and the descriptors -> 05/24/00, field pointer on CDB
 * byte 4; nothing written.
 */
START_TEST(lbdof_too_small_refused)
{
	struct desc d[16];
	struct harness_result r;
	uint32_t len;

	h.lu->params.max_scattered_lba_range_descriptors = 0; /* no limit */
	for (unsigned i = 0; i < 16; i++)
		d[i] = (struct desc){ 10 + 2 * i, 1 };
	/* 32 + 16 x 32 = 544 bytes > 1 block */
	len = build(d, 16, 1, 16, 0x10);
	ws16(0, 1, 16, 16, len, 0, &r);
	expect_cdb_pointer(&r, 4, -1);
	/* LBDOF 0 with a descriptor */
	len = build(d, 1, 0, 1, 0x10);
	ws16(0, 0, 1, 1, len, 0, &r);
	expect_cdb_pointer(&r, 4, -1);
	expect_medium_byte(10, 32, OLD);
	expect_nothing_written();
	/* 15 descriptors fit exactly in one block */
	len = build(d, 15, 1, 15, 0x10);
	ws16(0, 1, 15, 15, len, 0, &r);
	harness_expect_good(&r);
	expect_medium_data(10 + 2 * 14, 1, 0x10, 14);
}
END_TEST

/* sbc_write_scattered.c: the descriptor count is checked before LBDOF (9 descriptors, LBDOF 0: byte 8). */
START_TEST(count_checked_before_lbdof)
{
	struct harness_result r;

	build(NULL, 0, 0, 0, 0);
	ws16(0, 0, MAX_DESCRIPTORS + 1, 0, 0, 0, &r);
	expect_cdb_pointer(&r, 8, -1);
}
END_TEST

/*
 * SBC-4 5.54: no LBA range descriptors and BUFFER TRANSFER LENGTH 0 -> GOOD,
 * nothing written (with LBDOF 0, no Data-Out at all; with LBDOF 1, a header
 * only).
 */
START_TEST(zero_descriptors_good)
{
	struct harness_result r;
	uint32_t len;

	len = build(NULL, 0, 0, 0, 0);
	ws16(0, 0, 0, 0, len, 0, &r);
	harness_expect_good(&r);
	len = build(NULL, 0, 1, 0, 0);
	ws16(0, 1, 0, 0, len, 0, &r);
	harness_expect_good(&r);
	expect_nothing_written();
}
END_TEST

/*
 * sbc_write_scattered.c: BTL 0 with descriptors: they are still checked:
 * all with 0 blocks is GOOD (nothing written); one with blocks -> 05/26/00
 * on its NUMBER OF LOGICAL BLOCKS.
 */
START_TEST(btl_zero_descriptors_checked)
{
	static const struct desc empty[] = { { 10, 0 }, { 20, 0 } };
	static const struct desc one[] = { { 10, 1 } };
	struct harness_result r;
	uint32_t len;

	len = build(empty, 2, 1, 0, 0);
	ws16(0, 1, 2, 0, len, 0, &r);
	harness_expect_good(&r);
	len = build(one, 1, 1, 0, 0);
	ws16(0, 1, 1, 0, len, 0, &r);
	expect_param_pointer(&r, field(0, 8));
	expect_medium_byte(10, 1, OLD);
	expect_nothing_written();
}
END_TEST

/* cmd.c (FCP-4 9.4.2 b): a Data-Out shorter than (LBDOF + BTL) blocks -> 05/0E/03, nothing written. */
START_TEST(short_data_out_refused)
{
	static const struct desc d[] = { { 10, 2 }, { 20, 2 } };
	struct harness_result r;
	uint32_t len = build(d, 2, 1, 4, 0x10);

	ws16(0, 1, 2, 4, len - BS, len - BS, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_COMMAND_INFORMATION_UNIT);
	expect_medium_byte(10, 2, OLD);
	expect_medium_byte(20, 2, OLD);
	expect_nothing_written();
}
END_TEST

/*
 * SBC-4 5.54 / sbc.h: WRPROTECT != 0 on an LU without PI -> 05/24/00 on
 * byte 2 bit 7; FUA (the LU supports DPO and FUA) is GOOD.
 */
START_TEST(flags_byte2)
{
	static const struct desc d[] = { { 10, 1 } };
	struct harness_result r;
	uint32_t len = build(d, 1, 1, 1, 0x10);

	ws16(0x20, 1, 1, 1, len, 0, &r);
	expect_cdb_pointer(&r, 2, 7);
	expect_medium_byte(10, 1, OLD);
	expect_nothing_written();
	ws16(0x18, 1, 1, 1, len, 0, &r);
	harness_expect_good(&r);
	expect_medium_data(10, 1, 0x10, 0);
}
END_TEST

/*
 * Without write_scattered_atomic the command is not atomic (SBC-4 5.54):
 * a backend failure on the second range leaves the first written; the
 * command ends with MEDIUM ERROR, WRITE ERROR (03/0C/00).
 */
START_TEST(plain_not_atomic_on_failure)
{
	static const struct desc d[] = { { 10, 2 }, { 20, 2 } };
	struct harness_result r;

	cb->fail_write = 2;
	ws(d, 2, 4, 0x10, &r);
	harness_expect_sense(&r, SENSE_KEY_MEDIUM_ERROR, ASC_WRITE_ERROR);
	expect_medium_data(10, 2, 0x10, 0);
	expect_medium_byte(20, 2, OLD);
}
END_TEST

/*
 * write_scattered_atomic: every range goes to the backend in one
 * write_atomic_ranges (the all-or-nothing unit), in descriptor order with
 * its data; no plain write is issued, so a failing plain write does not
 * matter.
 */
START_TEST(atomic_one_unit)
{
	static const struct desc d[] = { { 200, 1 }, { 10, 2 }, { 20, 2 } };
	struct harness_result r;

	cb->fail_write = 1;
	ws(d, 3, 5, 0x10, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(cb->writes, 0);
	ck_assert_uint_eq(cb->atomic_calls, 1);
	ck_assert_uint_eq(cb->atomic_ranges, 3);
	expect_medium_data(200, 1, 0x10, 0);
	expect_medium_data(10, 2, 0x10, 1);
	expect_medium_data(20, 2, 0x10, 3);
}
END_TEST

/* WRITE SCATTERED not enabled on the LU (write_scattered = false) -> 05/20/00. */
START_TEST(disabled_unsupported)
{
	static const struct desc d[] = { { 10, 1 } };
	struct harness_result r;
	uint32_t len = build(d, 1, 1, 1, 0x10);

	ck_assert(!sbc_write_scattered_enabled(h.lu));
	ws16(0, 1, 1, 1, len, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_COMMAND_OPERATION_CODE);
	expect_medium_byte(10, 1, 0);
}
END_TEST

static void add_shared(TCase *tc)
{
	tcase_add_test(tc, ranges_in_descriptor_order);
	tcase_add_test(tc, adjacent_ranges_and_padding);
	tcase_add_test(tc, overlap_refused);
	tcase_add_test(tc, sum_not_btl_refused);
	tcase_add_test(tc, range_past_capacity_refused);
	tcase_add_test(tc, too_many_descriptors_refused);
	tcase_add_test(tc, range_too_long_refused);
	tcase_add_test(tc, lbdof_too_small_refused);
	tcase_add_test(tc, count_checked_before_lbdof);
	tcase_add_test(tc, zero_descriptors_good);
	tcase_add_test(tc, btl_zero_descriptors_checked);
	tcase_add_test(tc, short_data_out_refused);
	tcase_add_test(tc, flags_byte2);
}

static Suite *suite(void)
{
	Suite *s = suite_create("sbc_write_scattered");
	TCase *plain = tcase_create("plain");
	TCase *atomic = tcase_create("atomic");
	TCase *off = tcase_create("disabled");

	tcase_add_checked_fixture(plain, setup_plain, teardown);
	add_shared(plain);
	tcase_add_test(plain, plain_not_atomic_on_failure);
	suite_add_tcase(s, plain);

	tcase_add_checked_fixture(atomic, setup_atomic, teardown);
	add_shared(atomic);
	tcase_add_test(atomic, atomic_one_unit);
	suite_add_tcase(s, atomic);

	tcase_add_checked_fixture(off, setup_disabled, teardown);
	tcase_add_test(off, disabled_unsupported);
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
