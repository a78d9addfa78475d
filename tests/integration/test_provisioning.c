/*
 * Logical block provisioning over iSCSI on a thin LU (SBC-4 4.7, 5.30, 5.45,
 * 5.48, 5.20): WRITE SAME(10/16) with data, UNMAP=1 and NDOB=1; UNMAP and its
 * parameter-list errors (05/1A/00, 05/26/00, 05/21/00); GET LBA STATUS
 * reporting mapped / deallocated, and unmapped blocks reading back as zeros.
 * Ranges are 1 MiB aligned so any unmap granularity is honoured.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"

#define BS 512u
#define LU0_BLOCKS (64u * 1024 * 1024 / BS)
#define CHUNK 2048u /* 1 MiB of 512-byte blocks */

static struct iscsi_context *s;
static uint32_t max_unmap_lba, max_unmap_desc;
static uint64_t max_ws_len;
static bool wsnz;

static void read_limits(void)
{
	uint8_t cdb[6] = { 0x12, 1, 0xb0, 0, 0xff, 0 };
	struct itest_result r;

	itest_cmd(s, 0, cdb, 6, ITEST_IN, NULL, 0, 255, &r);
	if (itest_ok(r.transport_ok && r.status == 0 && r.data_len >= 44, "VPD B0h read for the limits", "%s",
		     itest_result_str(&r))) {
		wsnz = r.data[4] & 1;
		max_unmap_lba = itest_get_be32(r.data + 20);
		max_unmap_desc = itest_get_be32(r.data + 24);
		max_ws_len = itest_get_be64(r.data + 36);
		itest_note("WSNZ %d, MAXIMUM UNMAP LBA COUNT %u, MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT %u, "
			   "MAXIMUM WRITE SAME LENGTH %llu, OPTIMAL UNMAP GRANULARITY %u",
			   wsnz, max_unmap_lba, max_unmap_desc, (unsigned long long)max_ws_len, itest_get_be32(r.data + 28));
	}
	itest_result_free(&r);
}

/* GET LBA STATUS at lba: provisioning status of the first descriptor (or -1), its block count in *count. */
static int lba_status(uint64_t lba, uint32_t *count, struct itest_result *out)
{
	uint8_t cdb[16] = { 0x9e, 0x12 };
	struct itest_result r;
	int status = -1;

	itest_put_be64(cdb + 2, lba);
	itest_put_be32(cdb + 10, 4096);
	itest_cmd(s, 0, cdb, 16, ITEST_IN, NULL, 0, 4096, &r);
	*count = 0;
	if (r.transport_ok && r.status == 0 && r.data_len >= 24 && itest_get_be64(r.data + 8) == lba) {
		status = r.data[8 + 12] & 0x0f;
		*count = itest_get_be32(r.data + 8 + 8);
	}
	if (out)
		*out = r;
	else
		itest_result_free(&r);
	return status;
}

static bool reads_zero(uint64_t lba, uint32_t n)
{
	uint8_t *buf = malloc((size_t)n * BS);
	bool ok = itest_read16(s, 0, lba, buf, n, BS, "read back");
	for (size_t i = 0; ok && i < (size_t)n * BS; i++)
		if (buf[i])
			ok = false;
	free(buf);
	return ok;
}

static bool reads_block_pattern(uint64_t lba, uint32_t n, const uint8_t *block)
{
	uint8_t *buf = malloc((size_t)n * BS);
	bool ok = itest_read16(s, 0, lba, buf, n, BS, "read back");
	for (uint32_t i = 0; ok && i < n; i++)
		if (memcmp(buf + (size_t)i * BS, block, BS))
			ok = false;
	free(buf);
	return ok;
}

static void fill(uint64_t lba, uint32_t n)
{
	uint8_t *buf = malloc((size_t)n * BS);
	itest_pattern(buf, (size_t)n * BS, (uint32_t)lba);
	itest_write16(s, 0, lba, buf, n, BS, false, "write data to be unmapped");
	free(buf);
}

/* One UNMAP with the given descriptors; param list built exactly. */
static void unmap(const uint64_t *lbas, const uint32_t *counts, int n, struct itest_result *r)
{
	size_t len = 8 + 16 * (size_t)n;
	uint8_t *p = calloc(1, len);
	uint8_t cdb[10] = { 0x42 };

	itest_put_be16(p, (uint16_t)(len - 2));
	itest_put_be16(p + 2, (uint16_t)(16 * n));
	for (int i = 0; i < n; i++) {
		itest_put_be64(p + 8 + 16 * i, lbas[i]);
		itest_put_be32(p + 8 + 16 * i + 8, counts[i]);
	}
	itest_put_be16(cdb + 7, (uint16_t)len);
	itest_cmd(s, 0, cdb, 10, ITEST_OUT, p, len, 0, r);
	free(p);
}

static void test_unmap(void)
{
	uint64_t lba = 8 * CHUNK;
	uint32_t count;
	struct itest_result r;
	int st;

	itest_ok(reads_zero(40 * CHUNK, 16), "never-written LBAs of a thin LU read as zeros", NULL);
	st = lba_status(40 * CHUNK, &count, NULL);
	itest_ok(st == 1, "GET LBA STATUS: never-written LBAs are deallocated (1h)", "status %d", st);

	fill(lba, CHUNK);
	st = lba_status(lba, &count, NULL);
	itest_ok(st == 0 && count >= CHUNK, "GET LBA STATUS after WRITE: mapped (0h), >= 2048 blocks",
		 "status %d, %u blocks", st, count);
	{
		uint32_t c = CHUNK;
		unmap(&lba, &c, 1, &r);
		itest_ok(itest_result_matches(&r, EXPECT_GOOD), "UNMAP one 1 MiB descriptor -> GOOD", "%s",
			 itest_result_str(&r));
	}
	st = lba_status(lba, &count, NULL);
	itest_ok(st == 1 && count >= CHUNK, "GET LBA STATUS after UNMAP: deallocated (1h), >= 2048 blocks",
		 "status %d, %u blocks", st, count);
	itest_ok(reads_zero(lba, CHUNK), "UNMAP: unmapped LBAs read as zeros (LBPRZ)", NULL);

	/* Two descriptors, one of them zero-length (a no-op). */
	{
		uint64_t l[2] = { 10 * CHUNK, 11 * CHUNK };
		uint32_t c[2] = { CHUNK, 0 };
		fill(10 * CHUNK, CHUNK);
		unmap(l, c, 2, &r);
		itest_ok(itest_result_matches(&r, EXPECT_GOOD), "UNMAP with a zero-length descriptor -> GOOD", "%s",
			 itest_result_str(&r));
		st = lba_status(10 * CHUNK, &count, NULL);
		itest_ok(st == 1, "UNMAP two descriptors: first range deallocated", "status %d", st);
	}

	/* Parameter list errors. */
	{
		uint8_t cdb[10] = { 0x42 };
		itest_expect_cmd(s, 0, "UNMAP PARAMETER LIST LENGTH 0 -> GOOD (nothing to do)", cdb, 10, ITEST_NONE, NULL, 0,
				 0, EXPECT_GOOD, NULL);
	}
	{
		uint8_t p[4] = { 0, 2, 0, 0 }, cdb[10] = { 0x42, 0, 0, 0, 0, 0, 0, 0, 4, 0 };
		itest_cmd(s, 0, cdb, 10, ITEST_OUT, p, 4, 0, &r);
		itest_ok(itest_result_matches(&r, EXPECT_SENSE(5, 0x1a, 0)) ||
				 itest_result_matches(&r, EXPECT_SENSE(5, 0x26, 0)),
			 "UNMAP PARAMETER LIST LENGTH 4 (< 8-byte header) -> 05/1A/00 or 05/26/00", "%s",
			 itest_result_str(&r));
	}
	{
		/*
		 * UNMAP DATA LENGTH and BLOCK DESCRIPTOR DATA LENGTH claim two descriptors; one is sent.
		 * SBC leaves this open (LIO uses what arrived, stricter targets give 05/26/00): report it.
		 */
		uint8_t p[24] = { 0 }, cdb[10] = { 0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0 };
		itest_put_be16(p, 38);
		itest_put_be16(p + 2, 32);
		itest_put_be64(p + 8, 12 * CHUNK);
		itest_put_be32(p + 16, 8);
		itest_cmd(s, 0, cdb, 10, ITEST_OUT, p, 24, 0, &r);
		itest_note("UNMAP with descriptor lengths larger than the parameter list: %s", itest_result_str(&r));
	}
	{
		/* SBC-4 5.32.2: a BLOCK DESCRIPTOR DATA LENGTH that is not a multiple of 16 leaves an
		 * incomplete last descriptor, which is ignored; the complete ones are processed. */
		uint8_t p[32] = { 0 }, cdb[10] = { 0x42, 0, 0, 0, 0, 0, 0, 0, 32, 0 };
		fill(13 * CHUNK, CHUNK);
		itest_put_be16(p, 30);
		itest_put_be16(p + 2, 24);
		itest_put_be64(p + 8, 13 * CHUNK);
		itest_put_be32(p + 16, CHUNK);
		itest_put_be64(p + 24, 14 * CHUNK);
		itest_cmd(s, 0, cdb, 10, ITEST_OUT, p, 32, 0, &r);
		itest_ok(itest_result_matches(&r, EXPECT_GOOD),
			 "UNMAP BLOCK DESCRIPTOR DATA LENGTH 24 (one and a half descriptors) -> GOOD", "%s",
			 itest_result_str(&r));
		st = lba_status(13 * CHUNK, &count, NULL);
		itest_ok(st == 1, "UNMAP with an incomplete last descriptor: the complete descriptor is processed",
			 "status %d", st);
	}
	{
		uint64_t l = LU0_BLOCKS - 8;
		uint32_t c = 16;
		unmap(&l, &c, 1, &r);
		itest_ok(itest_result_matches(&r, EXPECT_SENSE(5, 0x21, 0)),
			 "UNMAP descriptor past the capacity -> 05/21/00", "%s", itest_result_str(&r));
	}
	if (max_unmap_lba && max_unmap_lba < LU0_BLOCKS) {
		uint64_t l = 0;
		uint32_t c = max_unmap_lba + 1;
		unmap(&l, &c, 1, &r);
		itest_ok(itest_result_matches(&r, EXPECT_SENSE(5, 0x26, 0)),
			 "UNMAP descriptor NUMBER OF LOGICAL BLOCKS > MAXIMUM UNMAP LBA COUNT -> 05/26/00", "%s",
			 itest_result_str(&r));
	} else {
		itest_note("MAXIMUM UNMAP LBA COUNT %u >= capacity: over-limit descriptor check skipped", max_unmap_lba);
	}
	if (max_unmap_desc && max_unmap_desc < 4000) {
		int n = (int)max_unmap_desc + 1;
		uint64_t *l = calloc((size_t)n, sizeof(*l));
		uint32_t *c = calloc((size_t)n, sizeof(*c));
		for (int i = 0; i < n; i++) {
			l[i] = (uint64_t)i * 8;
			c[i] = 1;
		}
		unmap(l, c, n, &r);
		itest_ok(itest_result_matches(&r, EXPECT_SENSE(5, 0x26, 0)),
			 "UNMAP with MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT + 1 descriptors -> 05/26/00", "%s",
			 itest_result_str(&r));
		free(l);
		free(c);
	}
}

static void ws_cdb(uint8_t *cdb, int size, uint8_t flags, uint64_t lba, uint32_t n)
{
	memset(cdb, 0, 16);
	if (size == 10) {
		cdb[0] = 0x41;
		cdb[1] = flags;
		itest_put_be32(cdb + 2, (uint32_t)lba);
		itest_put_be16(cdb + 7, (uint16_t)n);
	} else {
		cdb[0] = 0x93;
		cdb[1] = flags;
		itest_put_be64(cdb + 2, lba);
		itest_put_be32(cdb + 10, n);
	}
}

static void test_write_same(void)
{
	uint8_t block[BS], zero[BS] = { 0 }, cdb[16];
	uint32_t count;
	struct itest_result r;
	char name[200];
	int st;

	itest_pattern(block, BS, 99);
	for (int size = 10; size <= 16; size += 6) {
		uint64_t lba = size == 10 ? 16 * CHUNK : 17 * CHUNK;
		ws_cdb(cdb, size, 0, lba, 16);
		snprintf(name, sizeof(name), "WRITE SAME(%d) 16 blocks with a data block -> GOOD", size);
		itest_expect_cmd(s, 0, name, cdb, size, ITEST_OUT, block, BS, 0, EXPECT_GOOD, NULL);
		snprintf(name, sizeof(name), "WRITE SAME(%d): every block reads back as the data block", size);
		itest_ok(reads_block_pattern(lba, 16, block), name, NULL);

		/* UNMAP=1 with zero data on a mapped 1 MiB range. */
		lba = size == 10 ? 18 * CHUNK : 19 * CHUNK;
		fill(lba, CHUNK);
		ws_cdb(cdb, size, 0x08, lba, CHUNK);
		snprintf(name, sizeof(name), "WRITE SAME(%d) UNMAP=1, zero data block, 2048 blocks -> GOOD", size);
		itest_expect_cmd(s, 0, name, cdb, size, ITEST_OUT, zero, BS, 0, EXPECT_GOOD, NULL);
		snprintf(name, sizeof(name), "WRITE SAME(%d) UNMAP=1: range reads as zeros", size);
		itest_ok(reads_zero(lba, CHUNK), name, NULL);
		st = lba_status(lba, &count, NULL);
		snprintf(name, sizeof(name), "WRITE SAME(%d) UNMAP=1: GET LBA STATUS deallocated (1h)", size);
		itest_ok(st == 1, name, "status %d, %u blocks", st, count);

		ws_cdb(cdb, size, 0, LU0_BLOCKS - 1, 2);
		snprintf(name, sizeof(name), "WRITE SAME(%d) last LBA + 2 blocks -> 05/21/00", size);
		itest_expect_cmd(s, 0, name, cdb, size, ITEST_OUT, block, BS, 0, EXPECT_SENSE(5, 0x21, 0), NULL);
	}

	/* NDOB=1: no Data-Out, the LBAs are written with zeros (or unmapped with UNMAP=1). */
	fill(20 * CHUNK, 16);
	ws_cdb(cdb, 16, 0x01, 20 * CHUNK, 16);
	itest_expect_cmd(s, 0, "WRITE SAME(16) NDOB=1, no Data-Out, 16 blocks -> GOOD", cdb, 16, ITEST_NONE, NULL, 0, 0,
			 EXPECT_GOOD, NULL);
	itest_ok(reads_zero(20 * CHUNK, 16), "WRITE SAME(16) NDOB=1: blocks read as zeros", NULL);
	fill(21 * CHUNK, CHUNK);
	ws_cdb(cdb, 16, 0x09, 21 * CHUNK, CHUNK);
	itest_expect_cmd(s, 0, "WRITE SAME(16) NDOB=1 UNMAP=1, 2048 blocks -> GOOD", cdb, 16, ITEST_NONE, NULL, 0, 0,
			 EXPECT_GOOD, NULL);
	st = lba_status(21 * CHUNK, &count, NULL);
	itest_ok(st == 1 && reads_zero(21 * CHUNK, CHUNK), "WRITE SAME(16) NDOB=1 UNMAP=1: deallocated and reads zeros",
		 "status %d", st);

	ws_cdb(cdb, 16, 0x10, 22 * CHUNK, 8);
	itest_expect_cmd(s, 0, "WRITE SAME(16) ANCHOR=1 (anchored LBAs not supported) -> 05/24/00", cdb, 16, ITEST_OUT,
			 zero, BS, 0, EXPECT_SENSE(5, 0x24, 0), NULL);
	if (max_ws_len && max_ws_len < LU0_BLOCKS) {
		ws_cdb(cdb, 16, 0, 0, (uint32_t)max_ws_len + 1);
		itest_expect_cmd(s, 0, "WRITE SAME(16) NUMBER OF LOGICAL BLOCKS > MAXIMUM WRITE SAME LENGTH -> 05/24/00",
				 cdb, 16, ITEST_OUT, zero, BS, 0, EXPECT_SENSE(5, 0x24, 0), NULL);
	}
	/* NUMBER OF LOGICAL BLOCKS 0: to the end of the LU if WSNZ = 0, else INVALID FIELD IN CDB. */
	ws_cdb(cdb, 16, 0, LU0_BLOCKS - 16, 0);
	if (wsnz) {
		itest_expect_cmd(s, 0, "WRITE SAME(16) NUMBER OF LOGICAL BLOCKS 0 with WSNZ=1 -> 05/24/00", cdb, 16,
				 ITEST_OUT, block, BS, 0, EXPECT_SENSE(5, 0x24, 0), NULL);
	} else if (!max_ws_len || max_ws_len >= 16) {
		itest_expect_cmd(s, 0, "WRITE SAME(16) NUMBER OF LOGICAL BLOCKS 0 (WSNZ=0) -> GOOD, writes to the end", cdb,
				 16, ITEST_OUT, block, BS, 0, EXPECT_GOOD, NULL);
		itest_ok(reads_block_pattern(LU0_BLOCKS - 16, 16, block),
			 "WRITE SAME(16) NUMBER OF LOGICAL BLOCKS 0: the last 16 blocks hold the data block", NULL);
	}
	/* Data-Out of the wrong size: WRITE SAME takes exactly one logical block. */
	{
		uint8_t two[2 * BS] = { 0 };
		ws_cdb(cdb, 10, 0, 22 * CHUNK, 4);
		itest_cmd(s, 0, cdb, 10, ITEST_OUT, two, sizeof(two), 0, &r);
		itest_ok(r.transport_ok && r.status == 2,
			 "WRITE SAME(10) with two blocks of Data-Out (EDTL 1024) -> CHECK CONDITION", "%s",
			 itest_result_str(&r));
	}
}

/*
 * Ranges that do not cover whole physical blocks (512e: 8 logical blocks per
 * 4096-byte physical block).  Whether the LBAs get deallocated is up to the
 * device, but with LBPRZ = 1 they must read back as zeros (SBC-4 4.7.4.5).
 */
static void test_unaligned(void)
{
	uint8_t ff[16 * BS], zero[BS] = { 0 }, cdb[16];
	uint64_t base = 30 * CHUNK;
	struct itest_result r;
	char name[200];

	memset(ff, 0xff, sizeof(ff));
	itest_write16(s, 0, base, ff, 16, BS, false, "write 0xFF");
	{
		uint64_t l = base + 3;
		uint32_t c = 2;
		unmap(&l, &c, 1, &r);
		itest_ok(itest_result_matches(&r, EXPECT_GOOD), "UNMAP of 2 LBAs inside one physical block -> GOOD", "%s",
			 itest_result_str(&r));
	}
	itest_ok(reads_zero(base + 3, 2), "UNMAP inside a physical block: the 2 LBAs read as zeros (LBPRZ=1)", NULL);
	{
		uint8_t buf[BS];
		bool ok = itest_read16(s, 0, base + 2, buf, 1, BS, NULL) && buf[0] == 0xff && buf[BS - 1] == 0xff &&
			  itest_read16(s, 0, base + 5, buf, 1, BS, NULL) && buf[0] == 0xff;
		itest_ok(ok, "UNMAP inside a physical block: neighbouring LBAs keep their data", NULL);
	}
	{
		uint64_t l = base + 7;
		uint32_t c = 5; /* crosses into the next physical block */
		unmap(&l, &c, 1, &r);
		itest_ok(itest_result_matches(&r, EXPECT_GOOD) && reads_zero(base + 7, 5),
			 "UNMAP across a physical block boundary: the LBAs read as zeros", "%s", itest_result_str(&r));
	}
	for (uint32_t n = 1; n <= 9; n += 4) {
		itest_write16(s, 0, LU0_BLOCKS - n, ff, n, BS, false, "write 0xFF at the end");
		ws_cdb(cdb, 10, 0x08, LU0_BLOCKS - n, 0);
		snprintf(name, sizeof(name), "WRITE SAME(10) UNMAP=1 NUMBER OF LOGICAL BLOCKS 0 on the last %u LBAs -> GOOD", n);
		itest_expect_cmd(s, 0, name, cdb, 10, ITEST_OUT, zero, BS, 0, EXPECT_GOOD, NULL);
		snprintf(name, sizeof(name), "WRITE SAME(10) UNMAP=1 to the end, %u LBAs: they read as zeros", n);
		itest_ok(reads_zero(LU0_BLOCKS - n, n), name, NULL);
		itest_write16(s, 0, LU0_BLOCKS - n, ff, n, BS, false, "write 0xFF at the end");
		ws_cdb(cdb, 16, 0x08, LU0_BLOCKS - n, 0);
		snprintf(name, sizeof(name), "WRITE SAME(16) UNMAP=1 to the end, %u LBAs: they read as zeros", n);
		itest_cmd(s, 0, cdb, 16, ITEST_OUT, zero, BS, 0, &r);
		itest_ok(itest_result_matches(&r, EXPECT_GOOD) && reads_zero(LU0_BLOCKS - n, n), name, "%s",
			 itest_result_str(&r));
	}
}

static void test_get_lba_status(void)
{
	uint8_t cdb[16] = { 0x9e, 0x12 };
	struct itest_result r;

	itest_put_be64(cdb + 2, LU0_BLOCKS);
	itest_put_be32(cdb + 10, 4096);
	itest_expect_cmd(s, 0, "GET LBA STATUS STARTING LBA = capacity -> 05/21/00", cdb, 16, ITEST_IN, NULL, 0, 4096,
			 EXPECT_SENSE(5, 0x21, 0), NULL);
	itest_put_be64(cdb + 2, 0);
	itest_put_be32(cdb + 10, 24);
	itest_expect_cmd(s, 0, "GET LBA STATUS allocation length 24 -> GOOD", cdb, 16, ITEST_IN, NULL, 0, 24, EXPECT_GOOD,
			 &r);
	itest_ok(r.data_len == 24 && itest_get_be32(r.data) >= 20 && itest_get_be64(r.data + 8) == 0,
		 "GET LBA STATUS: PARAMETER DATA LENGTH >= 20, first descriptor starts at the STARTING LBA",
		 "%d bytes", r.data_len);
	itest_result_free(&r);
	/* Descriptors are contiguous from the starting LBA. */
	itest_put_be64(cdb + 2, 8 * CHUNK - 100);
	itest_put_be32(cdb + 10, 4096);
	itest_cmd(s, 0, cdb, 16, ITEST_IN, NULL, 0, 4096, &r);
	if (r.transport_ok && r.status == 0 && r.data_len >= 24) {
		uint64_t next = 8 * CHUNK - 100;
		bool ok = true;
		int n = 0;
		for (int off = 8; off + 16 <= r.data_len; off += 16, n++) {
			if (itest_get_be64(r.data + off) != next)
				ok = false;
			next += itest_get_be32(r.data + off + 8);
		}
		itest_ok(ok && n >= 1, "GET LBA STATUS: LBA status descriptors are contiguous", "%d descriptors", n);
	} else {
		itest_ok(false, "GET LBA STATUS at a mapped/unmapped boundary -> GOOD", "%s", itest_result_str(&r));
	}
	itest_result_free(&r);
}

int main(int argc, char **argv)
{
	struct itest_daemon d;

	itest_init(argc, argv, "test_provisioning: WRITE SAME, UNMAP, GET LBA STATUS on a thin LU");
	itest_daemon_up(&d, "prov", itest_default_config);
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s)
		return itest_finish();
	itest_clear_ua(s, 0);

	read_limits();
	test_unmap();
	test_write_same();
	test_unaligned();
	test_get_lba_status();

	itest_close(s);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
