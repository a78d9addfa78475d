/*
 * SBC data path over iSCSI: READ/WRITE(6/10/12/16) round trips (both block
 * sizes, large multi-PDU transfers), VERIFY(10/12/16) with BYTCHK 00b/01b/11b
 * and MISCOMPARE (0E/1D/00 with the offset in INFORMATION), WRITE AND VERIFY,
 * ORWRITE, COMPARE AND WRITE (match; miscompare with the offset; data left
 * unchanged), PRE-FETCH and SYNCHRONIZE CACHE, and their range errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"

#define LU0_BLOCKS (64u * 1024 * 1024 / 512)
#define LU1_BLOCKS (64u * 1024 * 1024 / 4096)

static struct iscsi_context *s;

/* Builds READ/WRITE CDBs of each size. */
static int rw_cdb(uint8_t *cdb, int size, bool write, uint64_t lba, uint32_t n, uint8_t flags)
{
	memset(cdb, 0, 16);
	switch (size) {
	case 6:
		cdb[0] = write ? 0x0a : 0x08;
		cdb[1] = (uint8_t)(lba >> 16) & 0x1f;
		cdb[2] = (uint8_t)(lba >> 8);
		cdb[3] = (uint8_t)lba;
		cdb[4] = (uint8_t)n; /* 0 means 256 */
		return 6;
	case 10:
		cdb[0] = write ? 0x2a : 0x28;
		cdb[1] = flags;
		itest_put_be32(cdb + 2, (uint32_t)lba);
		itest_put_be16(cdb + 7, (uint16_t)n);
		return 10;
	case 12:
		cdb[0] = write ? 0xaa : 0xa8;
		cdb[1] = flags;
		itest_put_be32(cdb + 2, (uint32_t)lba);
		itest_put_be32(cdb + 6, n);
		return 12;
	default:
		cdb[0] = write ? 0x8a : 0x88;
		cdb[1] = flags;
		itest_put_be64(cdb + 2, lba);
		itest_put_be32(cdb + 10, n);
		return 16;
	}
}

static void round_trip(int lun, uint32_t bs, int wsize, int rsize, uint64_t lba, uint32_t n, uint8_t wflags,
		       const char *name)
{
	size_t len = (size_t)n * bs;
	uint8_t *buf = malloc(len);
	uint8_t cdb[16];
	struct itest_result r;
	int cl;
	char check[256];

	itest_pattern(buf, len, (uint32_t)(lba * 31 + n + wsize));
	cl = rw_cdb(cdb, wsize, true, lba, n, wflags);
	itest_cmd(s, lun, cdb, cl, ITEST_OUT, buf, len, 0, &r);
	snprintf(check, sizeof(check), "%s: WRITE(%d) -> GOOD", name, wsize);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD), check, "%s", itest_result_str(&r));
	cl = rw_cdb(cdb, rsize, false, lba, n, 0);
	itest_cmd(s, lun, cdb, cl, ITEST_IN, NULL, 0, len, &r);
	snprintf(check, sizeof(check), "%s: READ(%d) returns the data written", name, rsize);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD) && (size_t)r.data_len == len && !memcmp(r.data, buf, len), check,
		 "%s, %d bytes%s", itest_result_str(&r), r.data_len,
		 (size_t)r.data_len == len && memcmp(r.data, buf, len) ? ", data differs" : "");
	itest_result_free(&r);
	free(buf);
}

static void test_read_write(void)
{
	round_trip(0, 512, 6, 6, 100, 8, 0, "LUN 0 READ/WRITE(6) 8 blocks at LBA 100");
	round_trip(0, 512, 6, 16, 200, 256, 0, "LUN 0 WRITE(6) TRANSFER LENGTH 0 = 256 blocks");
	round_trip(0, 512, 10, 10, 1000, 16, 0, "LUN 0 READ/WRITE(10) 16 blocks");
	round_trip(0, 512, 10, 16, 2000, 7, 0x18, "LUN 0 WRITE(10) DPO=1 FUA=1, READ(16)");
	round_trip(0, 512, 12, 12, 3000, 33, 0, "LUN 0 READ/WRITE(12) 33 blocks");
	round_trip(0, 512, 16, 16, LU0_BLOCKS - 5, 5, 0, "LUN 0 READ/WRITE(16) last 5 blocks");
	round_trip(0, 512, 16, 10, 4096, 2048, 0, "LUN 0 1 MiB WRITE(16) / READ(10) (many Data-Out/Data-In PDUs)");
	round_trip(0, 512, 16, 12, 8191, 4097, 0x08, "LUN 0 2 MiB + 512 FUA WRITE(16), unaligned LBA");
	round_trip(1, 4096, 10, 16, 10, 3, 0, "LUN 1 (4096-byte blocks) READ/WRITE(10) 3 blocks");
	round_trip(1, 4096, 16, 16, LU1_BLOCKS - 1, 1, 0, "LUN 1 READ/WRITE(16) last block");

	{
		uint8_t cdb[16];
		struct itest_result r;
		int cl = rw_cdb(cdb, 10, false, 50, 0, 0);
		itest_cmd(s, 0, cdb, cl, ITEST_IN, NULL, 0, 0, &r);
		itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.data_len == 0,
			 "READ(10) TRANSFER LENGTH 0 -> GOOD, no data", "%s, %d bytes", itest_result_str(&r), r.data_len);
		itest_result_free(&r);
		cl = rw_cdb(cdb, 16, true, 50, 0, 0);
		itest_expect_cmd(s, 0, "WRITE(16) TRANSFER LENGTH 0 -> GOOD", cdb, cl, ITEST_NONE, NULL, 0, 0, EXPECT_GOOD,
				 NULL);
	}
	/* Range errors for each size (SBC-4 4.5). */
	{
		static const int sizes[] = { 10, 12, 16 };
		char name[160];
		for (size_t i = 0; i < 3; i++) {
			uint8_t cdb[16], buf[1024] = { 0 };
			int cl = rw_cdb(cdb, sizes[i], true, LU0_BLOCKS - 1, 2, 0);
			snprintf(name, sizeof(name), "WRITE(%d) last LBA + 2 blocks -> 05/21/00", sizes[i]);
			itest_expect_cmd(s, 0, name, cdb, cl, ITEST_OUT, buf, 1024, 0, EXPECT_SENSE(5, 0x21, 0), NULL);
			cl = rw_cdb(cdb, sizes[i], false, LU0_BLOCKS, 1, 0);
			snprintf(name, sizeof(name), "READ(%d) LBA = capacity -> 05/21/00", sizes[i]);
			itest_expect_cmd(s, 0, name, cdb, cl, ITEST_IN, NULL, 0, 512, EXPECT_SENSE(5, 0x21, 0), NULL);
		}
	}
	/* RDPROTECT/WRPROTECT without protection information -> INVALID FIELD IN CDB (SBC-4 5.16). */
	{
		uint8_t cdb[16];
		int cl = rw_cdb(cdb, 10, false, 0, 1, 0x20);
		itest_expect_cmd(s, 0, "READ(10) RDPROTECT=001b on an LU without PI -> 05/24/00", cdb, cl, ITEST_IN, NULL, 0,
				 512, EXPECT_SENSE(5, 0x24, 0), NULL);
	}
}

static void write_pattern(int lun, uint64_t lba, uint32_t n, uint32_t bs, uint32_t seed, uint8_t *buf)
{
	itest_pattern(buf, (size_t)n * bs, seed);
	itest_write16(s, lun, lba, buf, n, bs, false, "write test pattern");
}

static void verify_cdb(uint8_t *cdb, int size, uint8_t bytchk, uint64_t lba, uint32_t n)
{
	memset(cdb, 0, 16);
	switch (size) {
	case 10:
		cdb[0] = 0x2f;
		cdb[1] = (uint8_t)(bytchk << 1);
		itest_put_be32(cdb + 2, (uint32_t)lba);
		itest_put_be16(cdb + 7, (uint16_t)n);
		break;
	case 12:
		cdb[0] = 0xaf;
		cdb[1] = (uint8_t)(bytchk << 1);
		itest_put_be32(cdb + 2, (uint32_t)lba);
		itest_put_be32(cdb + 6, n);
		break;
	default:
		cdb[0] = 0x8f;
		cdb[1] = (uint8_t)(bytchk << 1);
		itest_put_be64(cdb + 2, lba);
		itest_put_be32(cdb + 10, n);
		break;
	}
}

static void test_verify(void)
{
	static const int sizes[] = { 10, 12, 16 };
	uint8_t buf[8 * 512], same[8 * 512], cdb[16];
	char name[200];
	struct itest_result r;

	write_pattern(0, 5000, 8, 512, 77, buf);
	for (int i = 0; i < 8; i++)
		memcpy(same + i * 512, buf, 512);
	itest_write16(s, 0, 6000, same, 8, 512, false, "write 8 identical blocks");

	for (size_t i = 0; i < 3; i++) {
		int sz = sizes[i];
		verify_cdb(cdb, sz, 0, 5000, 8);
		snprintf(name, sizeof(name), "VERIFY(%d) BYTCHK=00b (medium verification) -> GOOD", sz);
		itest_expect_cmd(s, 0, name, cdb, sz, ITEST_NONE, NULL, 0, 0, EXPECT_GOOD, NULL);

		verify_cdb(cdb, sz, 1, 5000, 8);
		snprintf(name, sizeof(name), "VERIFY(%d) BYTCHK=01b, matching data -> GOOD", sz);
		itest_expect_cmd(s, 0, name, cdb, sz, ITEST_OUT, buf, sizeof(buf), 0, EXPECT_GOOD, NULL);

		buf[1234] ^= 0x5a;
		snprintf(name, sizeof(name), "VERIFY(%d) BYTCHK=01b, byte 1234 differs -> 0E/1D/00 MISCOMPARE", sz);
		itest_expect_cmd(s, 0, name, cdb, sz, ITEST_OUT, buf, sizeof(buf), 0, EXPECT_SENSE(0x0e, 0x1d, 0), &r);
		snprintf(name, sizeof(name), "VERIFY(%d) miscompare: VALID=1, INFORMATION = 1234 (offset of the first difference)",
			 sz);
		itest_ok(r.sense.info_valid && r.sense.information == 1234, name, "VALID %d INFORMATION %llu",
			 r.sense.info_valid, (unsigned long long)r.sense.information);
		buf[1234] ^= 0x5a;

		verify_cdb(cdb, sz, 3, 6000, 8);
		snprintf(name, sizeof(name), "VERIFY(%d) BYTCHK=11b, one block equal to all 8 -> GOOD", sz);
		itest_expect_cmd(s, 0, name, cdb, sz, ITEST_OUT, same, 512, 0, EXPECT_GOOD, NULL);
		verify_cdb(cdb, sz, 3, 5000, 8);
		snprintf(name, sizeof(name), "VERIFY(%d) BYTCHK=11b, block differs from block 1 -> 0E/1D/00", sz);
		itest_expect_cmd(s, 0, name, cdb, sz, ITEST_OUT, buf, 512, 0, EXPECT_SENSE(0x0e, 0x1d, 0), NULL);

		verify_cdb(cdb, sz, 2, 5000, 8);
		snprintf(name, sizeof(name), "VERIFY(%d) BYTCHK=10b (reserved) -> 05/24/00", sz);
		itest_expect_cmd(s, 0, name, cdb, sz, ITEST_NONE, NULL, 0, 0, EXPECT_SENSE(5, 0x24, 0), NULL);

		verify_cdb(cdb, sz, 0, LU0_BLOCKS - 1, 2);
		snprintf(name, sizeof(name), "VERIFY(%d) last LBA + 2 blocks -> 05/21/00", sz);
		itest_expect_cmd(s, 0, name, cdb, sz, ITEST_NONE, NULL, 0, 0, EXPECT_SENSE(5, 0x21, 0), NULL);

		verify_cdb(cdb, sz, 1, 5000, 0);
		snprintf(name, sizeof(name), "VERIFY(%d) VERIFICATION LENGTH 0 -> GOOD", sz);
		itest_expect_cmd(s, 0, name, cdb, sz, ITEST_NONE, NULL, 0, 0, EXPECT_GOOD, NULL);
	}
}

static void test_write_and_verify(void)
{
	static const uint8_t ops[] = { 0x2e, 0xae, 0x8e };
	static const int sizes[] = { 10, 12, 16 };
	uint8_t buf[4 * 512], back[4 * 512], cdb[16];
	char name[200];

	for (size_t i = 0; i < 3; i++) {
		for (int bytchk = 0; bytchk <= 1; bytchk++) {
			uint64_t lba = 7000 + i * 10 + (uint64_t)bytchk * 4;
			memset(cdb, 0, sizeof(cdb));
			cdb[0] = ops[i];
			cdb[1] = (uint8_t)(bytchk << 1);
			if (sizes[i] == 10) {
				itest_put_be32(cdb + 2, (uint32_t)lba);
				itest_put_be16(cdb + 7, 4);
			} else if (sizes[i] == 12) {
				itest_put_be32(cdb + 2, (uint32_t)lba);
				itest_put_be32(cdb + 6, 4);
			} else {
				itest_put_be64(cdb + 2, lba);
				itest_put_be32(cdb + 10, 4);
			}
			itest_pattern(buf, sizeof(buf), (uint32_t)(lba + 3));
			snprintf(name, sizeof(name), "WRITE AND VERIFY(%d) BYTCHK=%d, 4 blocks -> GOOD", sizes[i], bytchk);
			itest_expect_cmd(s, 0, name, cdb, sizes[i], ITEST_OUT, buf, sizeof(buf), 0, EXPECT_GOOD, NULL);
			snprintf(name, sizeof(name), "WRITE AND VERIFY(%d) BYTCHK=%d: data reads back", sizes[i], bytchk);
			itest_ok(itest_read16(s, 0, lba, back, 4, 512, name) && !memcmp(buf, back, sizeof(buf)), name,
				 "data differs");
		}
	}
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x2e;
	itest_put_be32(cdb + 2, LU0_BLOCKS - 1);
	itest_put_be16(cdb + 7, 2);
	itest_expect_cmd(s, 0, "WRITE AND VERIFY(10) last LBA + 2 blocks -> 05/21/00", cdb, 10, ITEST_OUT, buf, 1024, 0,
			 EXPECT_SENSE(5, 0x21, 0), NULL);
}

static void test_orwrite(void)
{
	uint8_t x[4 * 512], y[4 * 512], back[4 * 512], want[4 * 512], cdb[16] = { 0x8b };

	itest_pattern(x, sizeof(x), 11);
	itest_pattern(y, sizeof(y), 12);
	for (size_t i = 0; i < sizeof(x); i++)
		want[i] = x[i] | y[i];
	itest_write16(s, 0, 9000, x, 4, 512, false, "ORWRITE set-up write");
	itest_put_be64(cdb + 2, 9000);
	itest_put_be32(cdb + 10, 4);
	itest_expect_cmd(s, 0, "ORWRITE(16) 4 blocks -> GOOD", cdb, 16, ITEST_OUT, y, sizeof(y), 0, EXPECT_GOOD, NULL);
	itest_ok(itest_read16(s, 0, 9000, back, 4, 512, "ORWRITE read back") && !memcmp(back, want, sizeof(want)),
		 "ORWRITE(16): medium holds old OR new data", "data differs");
	itest_put_be64(cdb + 2, LU0_BLOCKS - 1);
	itest_put_be32(cdb + 10, 2);
	itest_expect_cmd(s, 0, "ORWRITE(16) last LBA + 2 blocks -> 05/21/00", cdb, 16, ITEST_OUT, y, 1024, 0,
			 EXPECT_SENSE(5, 0x21, 0), NULL);
}

static uint32_t max_compare_and_write(void)
{
	uint8_t cdb[6] = { 0x12, 1, 0xb0, 0, 0xff, 0 };
	struct itest_result r;
	uint32_t v = 0;

	itest_cmd(s, 0, cdb, 6, ITEST_IN, NULL, 0, 255, &r);
	if (r.transport_ok && r.status == 0 && r.data_len >= 6)
		v = r.data[5];
	itest_result_free(&r);
	return v;
}

static void test_compare_and_write(void)
{
	uint8_t old[4 * 512], both[8 * 512], back[4 * 512], cdb[16] = { 0x89 };
	uint32_t max = max_compare_and_write();
	struct itest_result r;

	itest_ok(max > 0, "VPD B0h: MAXIMUM COMPARE AND WRITE LENGTH > 0", "%u", max);
	uint32_t n = max >= 4 ? 4 : 1;
	itest_pattern(old, n * 512, 21);
	itest_write16(s, 0, 10000, old, n, 512, false, "COMPARE AND WRITE set-up write");
	memcpy(both, old, n * 512);
	itest_pattern(both + n * 512, n * 512, 22);
	itest_put_be64(cdb + 2, 10000);
	cdb[13] = (uint8_t)n;
	itest_expect_cmd(s, 0, "COMPARE AND WRITE, verify data matches -> GOOD", cdb, 16, ITEST_OUT, both, 2 * n * 512, 0,
			 EXPECT_GOOD, NULL);
	itest_ok(itest_read16(s, 0, 10000, back, n, 512, "CAW read back") && !memcmp(back, both + n * 512, n * 512),
		 "COMPARE AND WRITE match: the write data is on the medium", "data differs");

	/* Now the medium holds the second half; compare against old data -> miscompare at offset 0.. */
	memcpy(both, back, n * 512);
	both[n * 512 - 27] ^= 0xff;
	itest_pattern(both + n * 512, n * 512, 23);
	itest_expect_cmd(s, 0, "COMPARE AND WRITE, one byte differs -> 0E/1D/00 MISCOMPARE", cdb, 16, ITEST_OUT, both,
			 2 * n * 512, 0, EXPECT_SENSE(0x0e, 0x1d, 0), &r);
	itest_ok(r.sense.info_valid && r.sense.information == n * 512 - 27,
		 "COMPARE AND WRITE miscompare: VALID=1, INFORMATION = offset of the first differing byte",
		 "VALID %d INFORMATION %llu, expected %u", r.sense.info_valid, (unsigned long long)r.sense.information,
		 n * 512 - 27);
	{
		uint8_t now[4 * 512];
		itest_ok(itest_read16(s, 0, 10000, now, n, 512, "CAW read back") && !memcmp(now, back, n * 512),
			 "COMPARE AND WRITE miscompare: medium unchanged", "data changed");
	}
	cdb[13] = 0;
	itest_expect_cmd(s, 0, "COMPARE AND WRITE NUMBER OF LOGICAL BLOCKS 0 -> GOOD", cdb, 16, ITEST_NONE, NULL, 0, 0,
			 EXPECT_GOOD, NULL);
	if (max > 0 && max < 255) {
		uint8_t *big = calloc(2 * (max + 1), 512);
		cdb[13] = (uint8_t)(max + 1);
		itest_expect_cmd(s, 0, "COMPARE AND WRITE NUMBER OF LOGICAL BLOCKS > MAXIMUM -> 05/24/00", cdb, 16,
				 ITEST_OUT, big, 2 * (size_t)(max + 1) * 512, 0, EXPECT_SENSE(5, 0x24, 0), NULL);
		free(big);
	}
	itest_put_be64(cdb + 2, LU0_BLOCKS - 1);
	cdb[13] = 2;
	{
		uint8_t z[4 * 512] = { 0 };
		itest_expect_cmd(s, 0, "COMPARE AND WRITE last LBA + 2 blocks -> 05/21/00", cdb, 16, ITEST_OUT, z, 4 * 512, 0,
				 EXPECT_SENSE(5, 0x21, 0), NULL);
		/* Data-Out length that does not match 2 x NUMBER OF LOGICAL BLOCKS x block size. */
		itest_put_be64(cdb + 2, 10000);
		cdb[13] = 1;
		itest_cmd(s, 0, cdb, 16, ITEST_OUT, z, 512, 0, &r);
		itest_ok(r.transport_ok && r.status == 2,
			 "COMPARE AND WRITE with half the Data-Out (EDTL 512 for 1 block) -> CHECK CONDITION", "%s",
			 itest_result_str(&r));
	}
}

static void test_prefetch_sync(void)
{
	uint8_t cdb[16];
	struct itest_result r;

	/* PRE-FETCH returns CONDITION MET when the cache could hold the range, else GOOD (SBC-4 5.9). */
	memset(cdb, 0, 16);
	cdb[0] = 0x34;
	itest_put_be32(cdb + 2, 100);
	itest_put_be16(cdb + 7, 64);
	itest_cmd(s, 0, cdb, 10, ITEST_NONE, NULL, 0, 0, &r);
	itest_ok(r.transport_ok && (r.status == 0 || r.status == 4), "PRE-FETCH(10) 64 blocks -> GOOD or CONDITION MET",
		 "%s", itest_result_str(&r));
	memset(cdb, 0, 16);
	cdb[0] = 0x90;
	itest_put_be64(cdb + 2, 100);
	itest_put_be32(cdb + 10, 64);
	itest_cmd(s, 0, cdb, 16, ITEST_NONE, NULL, 0, 0, &r);
	itest_ok(r.transport_ok && (r.status == 0 || r.status == 4), "PRE-FETCH(16) 64 blocks -> GOOD or CONDITION MET",
		 "%s", itest_result_str(&r));
	cdb[1] = 0x02;
	itest_cmd(s, 0, cdb, 16, ITEST_NONE, NULL, 0, 0, &r);
	itest_ok(r.transport_ok && (r.status == 0 || r.status == 4), "PRE-FETCH(16) IMMED=1 -> GOOD or CONDITION MET",
		 "%s", itest_result_str(&r));
	memset(cdb, 0, 16);
	cdb[0] = 0x34;
	itest_put_be32(cdb + 2, LU0_BLOCKS - 1);
	itest_put_be16(cdb + 7, 2);
	itest_expect_cmd(s, 0, "PRE-FETCH(10) last LBA + 2 blocks -> 05/21/00", cdb, 10, ITEST_NONE, NULL, 0, 0,
			 EXPECT_SENSE(5, 0x21, 0), NULL);

	memset(cdb, 0, 16);
	cdb[0] = 0x35;
	itest_expect_cmd(s, 0, "SYNCHRONIZE CACHE(10) whole LU -> GOOD", cdb, 10, ITEST_NONE, NULL, 0, 0, EXPECT_GOOD, NULL);
	cdb[1] = 0x02;
	itest_expect_cmd(s, 0, "SYNCHRONIZE CACHE(10) IMMED=1 -> GOOD", cdb, 10, ITEST_NONE, NULL, 0, 0, EXPECT_GOOD, NULL);
	memset(cdb, 0, 16);
	cdb[0] = 0x91;
	itest_put_be64(cdb + 2, 1000);
	itest_put_be32(cdb + 10, 100);
	itest_expect_cmd(s, 0, "SYNCHRONIZE CACHE(16) 100 blocks -> GOOD", cdb, 16, ITEST_NONE, NULL, 0, 0, EXPECT_GOOD,
			 NULL);
	itest_put_be64(cdb + 2, LU0_BLOCKS);
	itest_put_be32(cdb + 10, 1);
	itest_expect_cmd(s, 0, "SYNCHRONIZE CACHE(16) LBA = capacity -> 05/21/00", cdb, 16, ITEST_NONE, NULL, 0, 0,
			 EXPECT_SENSE(5, 0x21, 0), NULL);
}

int main(int argc, char **argv)
{
	struct itest_daemon d;

	itest_init(argc, argv, "test_rw: READ/WRITE, VERIFY, WRITE AND VERIFY, ORWRITE, COMPARE AND WRITE, cache");
	itest_daemon_up(&d, "rw", itest_default_config);
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s)
		return itest_finish();
	itest_clear_ua(s, 0);
	itest_clear_ua(s, 1);

	test_read_write();
	test_verify();
	test_write_and_verify();
	test_orwrite();
	test_compare_and_write();
	test_prefetch_sync();

	itest_close(s);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
