/*
 * WRITE SCATTERED(16)/(32) over iSCSI (SBC-4 5.54, 5.55): the
 * Block Limits Extension VPD page, REPORT SUPPORTED OPERATION CODES, data
 * landing at every range, and each CDB and parameter-list rule with its
 * sense and field pointer; a refused command writes nothing.
 *
 * LUN 0: MAXIMUM SCATTERED LBA RANGE DESCRIPTOR COUNT 4, MAXIMUM SCATTERED
 * LBA RANGE TRANSFER LENGTH 64, MAXIMUM SCATTERED TRANSFER LENGTH 96;
 * LUN 1: no WRITE SCATTERED.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "itest_raw.h"

#define BS 512u
#define LU0_BLOCKS (64u * 1024 * 1024 / BS)

static const char config[] =
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\n"
	"size = 64M\n"
	"logical_block_size = 512\n"
	"max_transfer_length = 1024\n"
	"write_scattered = true\n"
	"max_scattered_lba_range_descriptors = 4\n"
	"max_scattered_lba_range_transfer_length = 64\n"
	"max_scattered_transfer_length = 96\n"
	"allow_32_byte_cdbs = true\n"
	"[lun \"" ITEST_TARGET "\" 1]\n"
	"path = @DIR@/lun1.img\n"
	"size = 16M\n"
	"logical_block_size = 512\n";

static struct iscsi_context *s;
/* libiscsi sends at most 16 CDB bytes: the 32-byte forms go through a raw session (Extended CDB AHS). */
static struct itest_raw raw;

/* Sends a WRITE SCATTERED CDB of either size and records a check that the outcome matches e. */
static void send_expect(int size, int lun, const char *name, const uint8_t *cdb, const void *out, size_t len,
			struct itest_expect e, struct itest_result *res)
{
	if (size == 16) {
		itest_expect_cmd(s, lun, name, cdb, 16, ITEST_OUT, out, len, 0, e, res);
		return;
	}
	itest_raw_long_cdb_cmd(&raw, lun, cdb, size, out, (uint32_t)len, res);
	itest_ok(itest_result_matches(res, e), name, "got %s", itest_result_str(res));
}

struct range {
	uint64_t lba;
	uint32_t n;
};

/*
 * Builds the CDB (16 or 32 bytes) and the Data-Out of a WRITE SCATTERED with
 * LBDOF 1 (header and up to 15 descriptors in the first block); the data of
 * range i is the pattern with seed lba.  btl < 0: the sum of the ranges.
 */
static size_t build(int size, uint8_t *cdb, uint8_t **out, const struct range *r, unsigned count, long btl,
		    uint16_t lbdof)
{
	uint32_t sum = 0, blocks;
	uint8_t *p;

	for (unsigned i = 0; i < count; i++)
		sum += r[i].n;
	if (btl < 0)
		btl = sum;
	blocks = lbdof + (uint32_t)(btl > sum ? btl : sum);
	*out = p = calloc(blocks ? blocks : 1, BS);
	for (unsigned i = 0; i < count && 32 + 32 * (i + 1) <= (unsigned)lbdof * BS; i++) {
		itest_put_be64(p + 32 + 32 * i, r[i].lba);
		itest_put_be32(p + 32 + 32 * i + 8, r[i].n);
	}
	p += (size_t)lbdof * BS;
	for (unsigned i = 0; i < count; i++) {
		itest_pattern(p, (size_t)r[i].n * BS, (uint32_t)r[i].lba);
		p += (size_t)r[i].n * BS;
	}
	memset(cdb, 0, 32);
	if (size == 16) {
		cdb[0] = 0x9f;
		cdb[1] = 0x12;
		itest_put_be16(cdb + 4, lbdof);
		itest_put_be16(cdb + 8, (uint16_t)count);
		itest_put_be32(cdb + 10, (uint32_t)btl);
	} else {
		cdb[0] = 0x7f;
		cdb[7] = 0x18;
		cdb[9] = 0x11;
		itest_put_be16(cdb + 12, lbdof);
		itest_put_be16(cdb + 16, (uint16_t)count);
		itest_put_be32(cdb + 28, (uint32_t)btl);
	}
	return (size_t)(lbdof + (uint32_t)btl) * BS;
}

/* Sends it; checks the outcome and, for CHECK CONDITION with ILLEGAL REQUEST, the field pointer (cd, byte). */
static void expect_ws(int size, const char *name, const struct range *r, unsigned count, long btl, uint16_t lbdof,
		      struct itest_expect e, int cd, int byte)
{
	uint8_t cdb[32], *out;
	size_t len = build(size, cdb, &out, r, count, btl, lbdof);
	struct itest_result res;
	char full[300];

	snprintf(full, sizeof(full), "WRITE SCATTERED(%d) %s", size, name);
	send_expect(size, 0, full, cdb, out, len, e, &res);
	if (byte >= 0) {
		char fp[340];

		snprintf(fp, sizeof(fp), "%s: field pointer %s byte %d", full, cd ? "CDB" : "parameter list", byte);
		itest_expect_field_pointer(fp, &res, cd, byte, -1);
	}
	itest_result_free(&res);
	free(out);
}

/* Each range holds its pattern (written == true) or the filler (written == false). */
static void expect_ranges(const char *name, const struct range *r, unsigned count, bool written)
{
	for (unsigned i = 0; i < count; i++) {
		uint8_t *want, *got;

		if (r[i].n == 0) /* a degenerate descriptor: nothing to read */
			continue;
		want = malloc((size_t)r[i].n * BS);
		got = malloc((size_t)r[i].n * BS);
		char check[300];

		if (written)
			itest_pattern(want, (size_t)r[i].n * BS, (uint32_t)r[i].lba);
		else
			memset(want, 0x5a, (size_t)r[i].n * BS);
		snprintf(check, sizeof(check), "%s: range %u (LBA %llu, %u blocks) %s", name, i,
			 (unsigned long long)r[i].lba, r[i].n, written ? "holds its data" : "unchanged");
		itest_read16(s, 0, r[i].lba, got, r[i].n, BS, check);
		itest_ok(memcmp(want, got, (size_t)r[i].n * BS) == 0, check, NULL);
		free(want);
		free(got);
	}
}

static void fill(const struct range *r, unsigned count)
{
	for (unsigned i = 0; i < count; i++) {
		uint8_t *b;

		if (r[i].n == 0)
			continue;
		b = malloc((size_t)r[i].n * BS);

		memset(b, 0x5a, (size_t)r[i].n * BS);
		itest_write16(s, 0, r[i].lba, b, r[i].n, BS, false, "WRITE(16) filler");
		free(b);
	}
}

static void test_vpd_and_rsoc(void)
{
	uint8_t inq[6] = { 0x12, 0x01, 0xb7, 0x00, 0xff, 0x00 };
	uint8_t rsoc[12] = { 0xa3, 0x0c, 0x02, 0x9f, 0x00, 0x12, 0, 0, 0, 0x20, 0, 0 };
	struct itest_result r;

	itest_cmd(s, 0, inq, 6, ITEST_IN, NULL, 0, 255, &r);
	itest_ok(r.status == 0 && r.data_len >= 32 && itest_get_be16(r.data + 2) == 0x1c &&
			 itest_get_be32(r.data + 16) == 64 && itest_get_be16(r.data + 22) == 4 &&
			 itest_get_be32(r.data + 24) == 96,
		 "Block Limits Extension VPD (B7h): PAGE LENGTH 1Ch, MAXIMUM SCATTERED LBA RANGE TRANSFER LENGTH 64, "
		 "DESCRIPTOR COUNT 4, MAXIMUM SCATTERED TRANSFER LENGTH 96",
		 "%s, %d bytes", itest_result_str(&r), r.data_len);
	itest_result_free(&r);
	itest_cmd(s, 1, inq, 6, ITEST_IN, NULL, 0, 255, &r);
	itest_ok(r.status == 2 && r.sense.key == 5 && r.sense.asc == 0x24,
		 "B7h on an LU without WRITE SCATTERED -> 05/24/00 (page not supported)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	itest_cmd(s, 0, rsoc, 12, ITEST_IN, NULL, 0, 32, &r);
	itest_ok(r.status == 0 && r.data_len >= 2 && (r.data[1] & 7) == 3,
		 "RSOC one command 9Fh/12h: SUPPORT 011b", "%s", itest_result_str(&r));
	itest_result_free(&r);
	itest_cmd(s, 1, rsoc, 12, ITEST_IN, NULL, 0, 32, &r);
	itest_ok(r.status == 0 && r.data_len >= 2 && (r.data[1] & 7) == 1,
		 "RSOC one command 9Fh/12h on an LU without WRITE SCATTERED: SUPPORT 001b", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
}

static void test_size(int size)
{
	const struct range good[3] = { { 1000, 8 }, { 100, 16 }, { 5000, 1 } };
	const struct range degenerate[3] = { { 2000, 4 }, { 0, 0 }, { 2100, 4 } };
	const struct range overlap[2] = { { 3000, 16 }, { 3008, 16 } };
	const struct range big[2] = { { 4000, 65 }, { 4100, 1 } };
	const struct range five[5] = { { 6000, 1 }, { 6010, 1 }, { 6020, 1 }, { 6030, 1 }, { 6040, 1 } };
	const struct range over[2] = { { 7000, 64 }, { 7100, 33 } };
	const struct range eol[2] = { { 8000, 4 }, { LU0_BLOCKS - 2, 4 } };
	uint8_t cdb[32], *out;
	struct itest_result res;
	char name[200];

	fill(good, 3);
	expect_ws(size, "3 ranges -> GOOD", good, 3, -1, 1, EXPECT_GOOD, 1, -1);
	snprintf(name, sizeof(name), "WRITE SCATTERED(%d) 3 ranges", size);
	expect_ranges(name, good, 3, true);

	fill(degenerate, 3);
	expect_ws(size, "with a degenerate descriptor (LBA 0, 0 blocks) -> GOOD", degenerate, 3, -1, 1, EXPECT_GOOD,
		  1, -1);
	snprintf(name, sizeof(name), "WRITE SCATTERED(%d) with a degenerate descriptor", size);
	expect_ranges(name, degenerate, 3, true);

	expect_ws(size, "0 descriptors, BUFFER TRANSFER LENGTH 0 -> GOOD", NULL, 0, 0, 0, EXPECT_GOOD, 1, -1);

	/* Refused: nothing written. */
	fill(overlap, 2);
	expect_ws(size, "overlapping LBA ranges -> 05/26/00", overlap, 2, -1, 1, EXPECT_SENSE(5, 0x26, 0), 0, 64);
	snprintf(name, sizeof(name), "WRITE SCATTERED(%d) refused for overlapping ranges", size);
	expect_ranges(name, overlap, 2, false);

	fill(big, 2);
	expect_ws(size, "a range of 65 blocks > MAXIMUM SCATTERED LBA RANGE TRANSFER LENGTH 64 -> 05/26/00", big, 2,
		  -1, 1, EXPECT_SENSE(5, 0x26, 0), 0, 40);
	snprintf(name, sizeof(name), "WRITE SCATTERED(%d) refused for a long range", size);
	expect_ranges(name, big, 2, false);

	expect_ws(size, "5 descriptors > MAXIMUM SCATTERED LBA RANGE DESCRIPTOR COUNT 4 -> 05/24/00", five, 5, -1, 1,
		  EXPECT_SENSE(5, 0x24, 0), 1, size == 16 ? 8 : 16);
	expect_ws(size, "BUFFER TRANSFER LENGTH 97 > MAXIMUM SCATTERED TRANSFER LENGTH 96 -> 05/24/00", over, 2, -1,
		  1, EXPECT_SENSE(5, 0x24, 0), 1, size == 16 ? 10 : 28);
	expect_ws(size, "LOGICAL BLOCK DATA OFFSET 0 with descriptors -> 05/24/00", good, 3, -1, 0,
		  EXPECT_SENSE(5, 0x24, 0), 1, size == 16 ? 4 : 12);

	fill(eol, 1);
	expect_ws(size, "a range past the last LBA -> 05/21/00", eol, 2, -1, 1, EXPECT_SENSE(5, 0x21, 0), 1, -1);
	snprintf(name, sizeof(name), "WRITE SCATTERED(%d) refused for a range past the end", size);
	expect_ranges(name, eol, 1, false);

	fill(good, 3);
	expect_ws(size, "NUMBER OF LOGICAL BLOCKS summing to more than BUFFER TRANSFER LENGTH -> 05/26/00", good, 3,
		  20, 1, EXPECT_SENSE(5, 0x26, 0), 0, 72);
	expect_ws(size, "NUMBER OF LOGICAL BLOCKS summing to less than BUFFER TRANSFER LENGTH -> 05/26/00", good, 3,
		  30, 1, EXPECT_SENSE(5, 0x26, 0), 0, 104);
	snprintf(name, sizeof(name), "WRITE SCATTERED(%d) refused for a wrong BUFFER TRANSFER LENGTH", size);
	expect_ranges(name, good, 3, false);

	build(size, cdb, &out, good, 3, -1, 1);
	cdb[size == 16 ? 2 : 10] = 0x20;
	snprintf(name, sizeof(name), "WRITE SCATTERED(%d) WRPROTECT 001b without protection information -> 05/24/00",
		 size);
	send_expect(size, 0, name, cdb, out, 26 * BS, EXPECT_SENSE(5, 0x24, 0), &res);
	itest_result_free(&res);
	snprintf(name, sizeof(name), "WRITE SCATTERED(%d) on an LU without WRITE SCATTERED -> 05/20/00", size);
	cdb[size == 16 ? 2 : 10] = 0;
	send_expect(size, 1, name, cdb, out, 26 * BS, EXPECT_SENSE(5, 0x20, 0), &res);
	itest_result_free(&res);
	free(out);
}

int main(int argc, char **argv)
{
	struct itest_daemon d;

	itest_init(argc, argv, "test_scattered: WRITE SCATTERED(16)/(32)");
	itest_daemon_up(&d, "scattered", config);
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s)
		return itest_finish();
	itest_clear_ua(s, 0);
	itest_clear_ua(s, 1);
	{
		char err[256];

		if (itest_raw_login(&raw, &d, ITEST_INITIATOR_2, ITEST_TARGET, false, false, true, err, sizeof(err))) {
			itest_ok(false, "raw session for the 32-byte CDBs", "%s", err);
			return itest_finish();
		}
		itest_raw_clear_ua(&raw, 0);
		itest_raw_clear_ua(&raw, 1);
	}

	test_vpd_and_rsoc();
	test_size(16);
	test_size(32);

	itest_raw_close(&raw);
	itest_close(s);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
