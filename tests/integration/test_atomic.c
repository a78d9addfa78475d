/*
 * WRITE ATOMIC(16)/(32) over iSCSI (SBC-4 4.29, 5.48, 5.49):
 * the Block Limits VPD atomic fields, REPORT SUPPORTED OPERATION CODES, every
 * limit rule with its sense and field pointer, and atomicity against
 * concurrent readers (two sessions: a reader never sees a range half old,
 * half new).
 *
 * LUN 0 advertises MAXIMUM ATOMIC TRANSFER LENGTH 64, ATOMIC ALIGNMENT 8,
 * ATOMIC TRANSFER LENGTH GRANULARITY 4, MAXIMUM ATOMIC TRANSFER LENGTH WITH
 * ATOMIC BOUNDARY 256 and MAXIMUM ATOMIC BOUNDARY SIZE 32; LUN 1 none.
 */
#include <pthread.h>
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
	"max_atomic_transfer_length = 64\n"
	"atomic_alignment = 8\n"
	"atomic_transfer_length_granularity = 4\n"
	"max_atomic_transfer_length_with_boundary = 256\n"
	"max_atomic_boundary_size = 32\n"
	"[lun \"" ITEST_TARGET "\" 1]\n"
	"path = @DIR@/lun1.img\n"
	"size = 16M\n"
	"logical_block_size = 512\n"
	"[lun \"" ITEST_TARGET "\" 2]\n"
	"path = @DIR@/lun2.img\n"
	"size = 16M\n"
	"logical_block_size = 512\n"
	"max_atomic_transfer_length = 64\n"
	"allow_32_byte_cdbs = true\n"
	"[lun \"" ITEST_TARGET "\" 3]\n"
	"path = @DIR@/lun3.img\n"
	"size = 16M\n"
	"logical_block_size = 512\n"
	"max_atomic_transfer_length = 64\n"
	"atomic_tear_write = 2\n"
	"atomic_tear_block = 3\n";

static struct iscsi_context *s;

static int wa16(uint8_t *cdb, uint8_t byte1, uint64_t lba, uint16_t boundary, uint16_t n)
{
	memset(cdb, 0, 16);
	cdb[0] = 0x9c;
	cdb[1] = byte1;
	itest_put_be64(cdb + 2, lba);
	itest_put_be16(cdb + 10, boundary);
	itest_put_be16(cdb + 12, n);
	return 16;
}

/* WRITE ATOMIC(16) of n blocks of pattern seed; checks the outcome (and the field pointer when byte >= 0). */
static void expect_wa16(const char *name, uint64_t lba, uint16_t boundary, uint16_t n, struct itest_expect e,
			int byte)
{
	uint8_t cdb[16], *buf = calloc(n ? n : 1, BS);
	struct itest_result r;

	itest_pattern(buf, (size_t)n * BS, (uint32_t)lba);
	wa16(cdb, 0, lba, boundary, n);
	itest_expect_cmd(s, 0, name, cdb, 16, ITEST_OUT, buf, (size_t)n * BS, 0, e, &r);
	if (byte >= 0) {
		char fp[300];

		snprintf(fp, sizeof(fp), "%s: field pointer byte %d", name, byte);
		itest_expect_field_pointer(fp, &r, 1, byte, -1);
	}
	itest_result_free(&r);
	free(buf);
}

static void test_vpd_and_rsoc(void)
{
	uint8_t inq[6] = { 0x12, 0x01, 0xb0, 0x00, 0xff, 0x00 };
	uint8_t rsoc[12] = { 0xa3, 0x0c, 0x01, 0x9c, 0, 0, 0, 0, 0, 0x20, 0, 0 };
	struct itest_result r;

	itest_cmd(s, 0, inq, 6, ITEST_IN, NULL, 0, 255, &r);
	itest_ok(r.status == 0 && r.data_len >= 64 && itest_get_be32(r.data + 44) == 64 &&
			 itest_get_be32(r.data + 48) == 8 && itest_get_be32(r.data + 52) == 4 &&
			 itest_get_be32(r.data + 56) == 256 && itest_get_be32(r.data + 60) == 32,
		 "Block Limits VPD: MAXIMUM ATOMIC TRANSFER LENGTH 64, ATOMIC ALIGNMENT 8, GRANULARITY 4, "
		 "WITH BOUNDARY 256, MAXIMUM ATOMIC BOUNDARY SIZE 32",
		 "%s, %d bytes", itest_result_str(&r), r.data_len);
	itest_result_free(&r);
	itest_cmd(s, 0, rsoc, 12, ITEST_IN, NULL, 0, 32, &r);
	itest_ok(r.status == 0 && r.data_len >= 2 && (r.data[1] & 7) == 3,
		 "RSOC one command 9Ch on an atomic LU: SUPPORT 011b", "%s, byte 1 %02x", itest_result_str(&r),
		 r.data_len >= 2 ? r.data[1] : 0);
	itest_result_free(&r);
	itest_cmd(s, 1, rsoc, 12, ITEST_IN, NULL, 0, 32, &r);
	itest_ok(r.status == 0 && r.data_len >= 2 && (r.data[1] & 7) == 1,
		 "RSOC one command 9Ch on an LU without atomic limits: SUPPORT 001b", "%s, byte 1 %02x",
		 itest_result_str(&r), r.data_len >= 2 ? r.data[1] : 0);
	itest_result_free(&r);
}

static void test_rules(struct itest_daemon *d)
{
	uint8_t cdb[32], buf[16 * BS], back[16 * BS];
	struct itest_result r;

	expect_wa16("WRITE ATOMIC(16) 64 blocks at LBA 16, ATOMIC BOUNDARY 0 -> GOOD", 16, 0, 64, EXPECT_GOOD, -1);
	itest_pattern(buf, sizeof(buf), 16);
	itest_read16(s, 0, 16, back, 16, BS, "READ(16) after WRITE ATOMIC(16)");
	itest_ok(memcmp(buf, back, sizeof(buf)) == 0, "WRITE ATOMIC(16): the data reads back", NULL);
	expect_wa16("WRITE ATOMIC(16) TRANSFER LENGTH 0 -> GOOD (nothing written)", 0, 0, 0, EXPECT_GOOD, -1);
	expect_wa16("WRITE ATOMIC(16) 68 blocks > MAXIMUM ATOMIC TRANSFER LENGTH 64 -> 05/24/00", 0, 0, 68,
		    EXPECT_SENSE(5, 0x24, 0), 12);
	expect_wa16("WRITE ATOMIC(16) at LBA 4, not a multiple of ATOMIC ALIGNMENT 8 -> 05/24/00", 4, 0, 8,
		    EXPECT_SENSE(5, 0x24, 0), 2);
	expect_wa16("WRITE ATOMIC(16) 6 blocks, not a multiple of ATOMIC TRANSFER LENGTH GRANULARITY 4 -> 05/24/00",
		    0, 0, 6, EXPECT_SENSE(5, 0x24, 0), 12);
	expect_wa16("WRITE ATOMIC(16) ATOMIC BOUNDARY 32, 256 blocks (MAXIMUM WITH BOUNDARY) -> GOOD", 0, 32, 256,
		    EXPECT_GOOD, -1);
	expect_wa16("WRITE ATOMIC(16) ATOMIC BOUNDARY 64 > MAXIMUM ATOMIC BOUNDARY SIZE 32 -> 05/24/00", 0, 64, 64,
		    EXPECT_SENSE(5, 0x24, 0), 10);
	expect_wa16("WRITE ATOMIC(16) ATOMIC BOUNDARY 32, 260 blocks > MAXIMUM WITH BOUNDARY 256 -> 05/24/00", 0, 32,
		    260, EXPECT_SENSE(5, 0x24, 0), 12);
	expect_wa16("WRITE ATOMIC(16) past the last LBA -> 05/21/00", LU0_BLOCKS - 8, 0, 16, EXPECT_SENSE(5, 0x21, 0),
		    -1);

	memset(buf, 0, sizeof(buf));
	wa16(cdb, 0x20, 0, 0, 8);
	itest_expect_cmd(s, 0, "WRITE ATOMIC(16) WRPROTECT 001b on an LU without protection information -> 05/24/00",
			 cdb, 16, ITEST_OUT, buf, 8 * BS, 0, EXPECT_SENSE(5, 0x24, 0), NULL);
	wa16(cdb, 0, 0, 0, 8);
	itest_expect_cmd(s, 1, "WRITE ATOMIC(16) on an LU without atomic limits -> 05/20/00", cdb, 16, ITEST_OUT, buf,
			 8 * BS, 0, EXPECT_SENSE(5, 0x20, 0), NULL);

	memset(cdb, 0, 32);
	cdb[0] = 0x7f;
	cdb[7] = 0x18;
	cdb[9] = 0x0f;
	itest_put_be64(cdb + 12, 0);
	itest_put_be32(cdb + 28, 8);
	/* libiscsi sends at most 16 CDB bytes: the 32-byte form goes through a raw session (Extended CDB AHS). */
	{
		struct itest_raw raw;
		char err[256];

		if (itest_raw_login(&raw, d, ITEST_INITIATOR_2, ITEST_TARGET, false, false, true, err, sizeof(err))) {
			itest_ok(false, "raw session for WRITE ATOMIC(32)", "%s", err);
		} else {
			itest_raw_clear_ua(&raw, 0);
			itest_raw_clear_ua(&raw, 2);
			itest_raw_long_cdb_cmd(&raw, 0, cdb, 32, buf, 8 * BS, &r);
			itest_ok(itest_result_matches(&r, EXPECT_SENSE(5, 0x20, 0)),
				 "WRITE ATOMIC(32) on an LU without type 2 protection -> 05/20/00", "got %s",
				 itest_result_str(&r));
			itest_result_free(&r);
			/* LUN 2 accepts the 32-byte form without type 2 (allow_32_byte_cdbs). */
			itest_pattern(buf, 8 * BS, 4321);
			itest_put_be64(cdb + 12, 64);
			itest_raw_long_cdb_cmd(&raw, 2, cdb, 32, buf, 8 * BS, &r);
			itest_ok(itest_result_matches(&r, EXPECT_GOOD),
				 "WRITE ATOMIC(32) 8 blocks at LBA 64 (allow_32_byte_cdbs) -> GOOD", "got %s",
				 itest_result_str(&r));
			itest_result_free(&r);
			itest_read16(s, 2, 64, back, 8, BS, "READ(16) after WRITE ATOMIC(32)");
			itest_ok(memcmp(buf, back, 8 * BS) == 0, "WRITE ATOMIC(32): the data reads back", NULL);
			itest_put_be32(cdb + 28, 72);
			itest_raw_long_cdb_cmd(&raw, 2, cdb, 32, NULL, 0, &r);
			itest_ok(itest_result_matches(&r, EXPECT_SENSE(5, 0x24, 0)),
				 "WRITE ATOMIC(32) 72 blocks > MAXIMUM ATOMIC TRANSFER LENGTH 64 -> 05/24/00", "got %s",
				 itest_result_str(&r));
			itest_expect_field_pointer("WRITE ATOMIC(32) too long: field pointer byte 28", &r, 1, 28, -1);
			itest_result_free(&r);
			itest_raw_close(&raw);
		}
	}

	/* A Data-Out shorter than the transfer: refused as a whole, nothing of it written. */
	itest_pattern(buf, sizeof(buf), 77);
	itest_write16(s, 0, 512, buf, 16, BS, false, "WRITE(16) before the short WRITE ATOMIC");
	memset(back, 0xee, sizeof(back));
	wa16(cdb, 0, 512, 0, 16);
	itest_cmd(s, 0, cdb, 16, ITEST_OUT, back, 8 * BS, 0, &r);
	itest_ok(r.status == 2, "WRITE ATOMIC(16) 16 blocks with 8 blocks of Data-Out -> CHECK CONDITION", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	itest_read16(s, 0, 512, back, 16, BS, "READ(16) after the short WRITE ATOMIC");
	itest_ok(memcmp(buf, back, sizeof(buf)) == 0, "short WRITE ATOMIC(16): no block of it was written", NULL);
}

/* ---- broken-promise injection: atomic_tear_write / atomic_tear_block ---- */

static void test_tear_injection(void)
{
	uint8_t cdb[16], a[8 * BS], b[8 * BS], got[8 * BS];
	struct itest_result r;
	bool torn_as_asked;

	memset(a, 0xa1, sizeof(a));
	memset(b, 0xb2, sizeof(b));
	wa16(cdb, 0, 100, 0, 8);
	itest_cmd(s, 3, cdb, 16, ITEST_OUT, a, sizeof(a), 0, &r);
	itest_ok(r.status == 0, "tear injection: the 1st WRITE ATOMIC(16) -> GOOD", "%s", itest_result_str(&r));
	itest_result_free(&r);
	itest_cmd(s, 3, cdb, 16, ITEST_OUT, b, sizeof(b), 0, &r);
	itest_ok(r.status == 0, "tear injection: the 2nd WRITE ATOMIC(16), torn on purpose, still -> GOOD", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	itest_read16(s, 3, 100, got, 8, BS, "READ(16) of the torn write");
	torn_as_asked = memcmp(got, b, 3 * BS) == 0 && memcmp(got + 3 * BS, a + 3 * BS, 5 * BS) == 0;
	itest_ok(torn_as_asked, "tear injection: blocks 0-2 new, 3-7 old (atomic_tear_write 2, atomic_tear_block 3)",
		 NULL);
	itest_cmd(s, 3, cdb, 16, ITEST_OUT, b, sizeof(b), 0, &r);
	itest_result_free(&r);
	itest_read16(s, 3, 100, got, 8, BS, "READ(16) after the 3rd WRITE ATOMIC");
	itest_ok(memcmp(got, b, sizeof(b)) == 0, "tear injection: the 3rd WRITE ATOMIC(16) is whole again", NULL);
}

/* ---- atomicity against a concurrent reader ---- */

#define RANGE_LBA 4096u
#define RANGE_BLOCKS 64u
#define RUN_MS 2000

struct race {
	struct itest_daemon *d;
	volatile int stop;
	unsigned writes, reads, torn, errors;
};

static void *writer(void *arg)
{
	struct race *rc = arg;
	struct iscsi_context *w = itest_session(rc->d, ITEST_INITIATOR_2, 0);
	uint8_t cdb[16], *buf = malloc(RANGE_BLOCKS * BS);
	struct itest_result r;

	if (!w) {
		rc->errors++;
		free(buf);
		return NULL;
	}
	itest_clear_ua(w, 0);
	for (unsigned i = 0; !rc->stop; i++) {
		memset(buf, (i & 1) ? 0xbb : 0xaa, RANGE_BLOCKS * BS);
		wa16(cdb, 0, RANGE_LBA, 0, RANGE_BLOCKS);
		itest_cmd(w, 0, cdb, 16, ITEST_OUT, buf, RANGE_BLOCKS * BS, 0, &r);
		if (r.status != 0)
			rc->errors++;
		itest_result_free(&r);
		rc->writes++;
	}
	itest_close(w);
	free(buf);
	return NULL;
}

static void test_concurrent_reader(struct itest_daemon *d)
{
	struct race rc = { .d = d };
	uint8_t *buf = calloc(RANGE_BLOCKS, BS);
	pthread_t t;
	uint64_t end;

	memset(buf, 0xaa, RANGE_BLOCKS * BS);
	itest_write16(s, 0, RANGE_LBA, buf, RANGE_BLOCKS, BS, false, "WRITE(16) of the raced range");
	pthread_create(&t, NULL, writer, &rc);
	end = itest_now_ms() + RUN_MS;
	while (itest_now_ms() < end) {
		if (!itest_read16(s, 0, RANGE_LBA, buf, RANGE_BLOCKS, BS, "READ(16) during WRITE ATOMIC(16)")) {
			rc.errors++;
			break;
		}
		for (size_t i = 1; i < RANGE_BLOCKS * BS; i++) {
			if (buf[i] != buf[0]) {
				rc.torn++;
				break;
			}
		}
		rc.reads++;
	}
	rc.stop = 1;
	pthread_join(t, NULL);
	itest_note("%u atomic writes, %u reads in %d ms", rc.writes, rc.reads, RUN_MS);
	itest_ok(rc.writes > 10 && rc.reads > 10, "reader and atomic writer both made progress", "%u writes, %u reads",
		 rc.writes, rc.reads);
	itest_ok(rc.torn == 0 && rc.errors == 0,
		 "READ(16) concurrent with WRITE ATOMIC(16) never returns a mix of old and new data (SBC-4 4.29)",
		 "%u torn reads, %u errors", rc.torn, rc.errors);
	free(buf);
}

int main(int argc, char **argv)
{
	struct itest_daemon d;

	itest_init(argc, argv, "test_atomic: WRITE ATOMIC(16)/(32)");
	itest_daemon_up(&d, "atomic", config);
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s)
		return itest_finish();
	itest_clear_ua(s, 0);
	itest_clear_ua(s, 1);
	itest_clear_ua(s, 2);
	itest_clear_ua(s, 3);

	test_vpd_and_rsoc();
	test_rules(&d);
	test_tear_injection();
	test_concurrent_reader(&d);

	itest_close(s);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
