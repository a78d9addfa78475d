/*
 * The copy manager over iSCSI (SPC-4 EXTENDED COPY (LID1), RECEIVE COPY
 * RESULTS, the Third-party Copy VPD page; protocol/scsi/spc/spc_xcopy.c):
 * 3PC in INQUIRY, the 8Fh page, OPERATING PARAMETERS byte for byte, copies
 * of one and two block-to-block segments read back, COPY STATUS held per
 * I_T nexus and list identifier, every parameter-list check with its sense
 * (and nothing written), copies on an LU with protection information (the
 * tuples retagged for the destination, a bad source guard caught), and
 * copies on zoned LUs (copy/copy_piece.c: the zone rules of a READ of the
 * source and a WRITE of the destination, per piece, as COPY ABORTED).
 *
 * LUN 0: conventional, 512-byte blocks, 64 MiB.  LUN 1: conventional, 4096-byte
 * blocks.  LUN 2: protection information type 1.  LUN 3: zbc-hm, zones of
 * 8192 blocks, zones 0 and 1 conventional, URSWRZ 0.  LUN 4: write
 * protected.  LUN 5: 1 GiB with protection information type 1, for a copy of
 * 512 MiB killed in the middle (with PI every piece is read, checked and
 * written by the daemon; without, copy_file_range moves 512 MiB before the
 * test can kill it).  LUN 6: zbc-hm, zone 0 conventional, URSWRZ 1.
 * The daemon's max_buffer_bytes is 2 MiB (test_buffer_budget).
 */
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"

#define BS 512u
#define LU0_BLOCKS (64u * 1024 * 1024 / BS)

static const char config[] =
	"[daemon]\nmax_buffer_bytes = 2M\n"
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\nsize = 64M\nlogical_block_size = 512\n"
	"[lun \"" ITEST_TARGET "\" 1]\n"
	"path = @DIR@/lun1.img\nsize = 16M\nlogical_block_size = 4096\n"
	"[lun \"" ITEST_TARGET "\" 2]\n"
	"path = @DIR@/lun2.img\nsize = 16M\nlogical_block_size = 512\nprotection_type = 1\n"
	"[lun \"" ITEST_TARGET "\" 3]\n"
	"kind = zbc-hm\npath = @DIR@/lun3.img\nsize = 64M\nlogical_block_size = 512\nzone_size = 4M\n"
	"conventional_zones = 2\nurswrz = false\n"
	"[lun \"" ITEST_TARGET "\" 4]\n"
	"path = @DIR@/lun4.img\nsize = 16M\nlogical_block_size = 512\nwrite_protect = true\n"
	"[lun \"" ITEST_TARGET "\" 5]\n"
	"path = @DIR@/lun5.img\nsize = 1G\nlogical_block_size = 512\nprotection_type = 1\n"
	"[lun \"" ITEST_TARGET "\" 6]\n"
	"kind = zbc-hm\npath = @DIR@/lun6.img\nsize = 64M\nlogical_block_size = 512\nzone_size = 4M\n"
	"conventional_zones = 1\n";

static struct iscsi_context *s, *s2;
static uint8_t naa[7][20]; /* the NAA designation descriptor of each LU (VPD 83h), 4 + length bytes */

/* The first NAA designator (type 3, association LU) of LUN lun's Device Identification page, as a descriptor. */
static bool fetch_naa(int lun)
{
	uint8_t cdb[6] = { 0x12, 0x01, 0x83, 0x01, 0x00, 0 };
	struct itest_result r;
	bool ok = false;

	itest_cmd(s, lun, cdb, 6, ITEST_IN, NULL, 0, 256, &r);
	for (int off = 4; r.status == 0 && off + 4 <= r.data_len && !ok; off += 4 + r.data[off + 3]) {
		const uint8_t *d = r.data + off;

		if ((d[1] & 0x3f) == 0x03 && d[3] <= 16) {
			memcpy(naa[lun], d, 4 + d[3]);
			ok = true;
		}
	}
	itest_result_free(&r);
	return itest_ok(ok, "Device Identification VPD page of the LU has an NAA designator", "LUN %d", lun);
}

/* An E4h CSCD descriptor naming LUN lun as libiscsi builds it (PROTOCOL IDENTIFIER, PIV zeroed). */
static void cscd(uint8_t *d, int lun, uint32_t block_size)
{
	memset(d, 0, 32);
	d[0] = 0xe4;
	memcpy(d + 4, naa[lun], 4 + naa[lun][3]);
	d[4] &= 0x0f;
	d[5] &= 0x3f;
	d[29] = (uint8_t)(block_size >> 16);
	d[30] = (uint8_t)(block_size >> 8);
	d[31] = (uint8_t)block_size;
}

/* A 02h segment descriptor (block to block). */
static void segment(uint8_t *d, uint16_t src, uint16_t dst, uint16_t nblocks, uint64_t src_lba, uint64_t dst_lba)
{
	memset(d, 0, 28);
	d[0] = 0x02;
	d[3] = 0x18;
	itest_put_be16(d + 4, src);
	itest_put_be16(d + 6, dst);
	itest_put_be16(d + 10, nblocks);
	itest_put_be64(d + 12, src_lba);
	itest_put_be64(d + 20, dst_lba);
}

/* The 16-byte parameter list header. */
static void header(uint8_t *p, uint8_t list_id, uint8_t usage, uint16_t cscd_len, uint32_t seg_len)
{
	memset(p, 0, 16);
	p[0] = list_id;
	p[1] = (uint8_t)(usage << 3);
	itest_put_be16(p + 2, cscd_len);
	itest_put_be32(p + 8, seg_len);
}

/* EXTENDED COPY(LID1) of len bytes of p (PARAMETER LIST LENGTH pll) to LUN lun; checks the outcome. */
static bool xcopy(struct iscsi_context *sess, int lun, const char *name, const uint8_t *p, uint32_t len, uint32_t pll,
		  struct itest_expect e, struct itest_result *r)
{
	uint8_t cdb[16] = { 0x83, 0x00 };

	itest_put_be32(cdb + 10, pll);
	return itest_expect_cmd(sess, lun, name, cdb, 16, len ? ITEST_OUT : ITEST_NONE, p, len, 0, e, r);
}

/* One CSCD (LUN lun) and one segment: the list libiscsi's ExtendedCopy.Simple sends (76 bytes). */
static uint32_t simple_list(uint8_t *p, int lun, uint8_t list_id, uint8_t usage, uint16_t nblocks, uint64_t src,
			    uint64_t dst)
{
	header(p, list_id, usage, 32, 28);
	cscd(p + 16, lun, BS);
	segment(p + 48, 0, 0, nblocks, src, dst);
	return 76;
}

/* RECEIVE COPY RESULTS service action sa (LID1: LIST IDENTIFIER b2) of list_id on LUN lun into r. */
static void rcr(int lun, uint8_t sa, uint8_t list_id, struct itest_result *r)
{
	uint8_t cdb[16] = { 0x84, sa, list_id, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x04, 0 };

	itest_cmd(s, lun, cdb, 16, ITEST_IN, NULL, 0, 1024, r);
}

static void test_identification(void)
{
	uint8_t inq[6] = { 0x12, 0x00, 0x00, 0x00, 96, 0 }, vpd0[6] = { 0x12, 0x01, 0x00, 0x00, 255, 0 };
	uint8_t vpd8f[6] = { 0x12, 0x01, 0x8f, 0x02, 0x00, 0 };
	/* header, PAGE LENGTH 296: the two below and the token descriptors (test_token_copy.c checks those) */
	static const uint8_t page8f[] = { 0x00, 0x8f, 0x01, 0x28,
					  0x00, 0x01, 0x00, 0x10, 0x0e, 0x83, 0x05, 0x00, /* Supported Commands */
					  0x01, 0x10, 0x11, 0x1c, 0x84, 0x05, 0x00, 0x03, 0x04, 0x05, 0x07, 0x00,
					  0x00, 0x08, 0x00, 0x04, 0x02, 0x02, 0xe4, 0x00 }; /* Supported Descriptors */
	struct itest_result r;

	itest_cmd(s, 0, inq, 6, ITEST_IN, NULL, 0, 96, &r);
	itest_ok(r.status == 0 && (r.data[5] & 0x08), "INQUIRY of a conventional LU: 3PC = 1 (byte 5 bit 3)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	itest_cmd(s, 2, inq, 6, ITEST_IN, NULL, 0, 96, &r);
	itest_ok(r.status == 0 && (r.data[5] & 0x09) == 0x09, "INQUIRY of a PI LU: 3PC = 1, PROTECT = 1", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	itest_cmd(s, 3, inq, 6, ITEST_IN, NULL, 0, 96, &r);
	itest_ok(r.status == 0 && (r.data[5] & 0x08), "INQUIRY of a zbc-hm LU: 3PC = 1", "%s", itest_result_str(&r));
	itest_result_free(&r);
	itest_cmd(s, 0, vpd0, 6, ITEST_IN, NULL, 0, 255, &r);
	itest_ok(r.status == 0 && memchr(r.data + 4, 0x8f, r.data_len > 4 ? (size_t)r.data_len - 4 : 0) != NULL,
		 "Supported VPD Pages lists 8Fh", "%s", itest_result_str(&r));
	itest_result_free(&r);
	itest_cmd(s, 0, vpd8f, 6, ITEST_IN, NULL, 0, 512, &r);
	itest_ok(r.status == 0 && r.data_len == 300 && memcmp(r.data, page8f, sizeof(page8f)) == 0,
		 "VPD 8Fh: Supported Commands 83h/00h 01h 10h 11h 1Ch, 84h/00h 03h 04h 05h 07h; Supported Descriptors 02h E4h; "
		 "descriptors padded to 4 bytes",
		 "%s", itest_result_str(&r));
	itest_result_free(&r);
	itest_cmd(s, 3, vpd8f, 6, ITEST_IN, NULL, 0, 512, &r);
	itest_ok(r.status == 0 && r.data_len == 300 && r.data[0] == 0x14 && memcmp(r.data + 1, page8f + 1, sizeof(page8f) - 1) == 0,
		 "VPD 8Fh of a zbc-hm LU: the same page (PERIPHERAL DEVICE TYPE 14h)", "%s", itest_result_str(&r));
	itest_result_free(&r);
}

static void test_operating_parameters(void)
{
	uint8_t cdb[16] = { 0x84, 0x03 };
	static const uint8_t want[46] = {
		[3] = 42,                   /* AVAILABLE DATA */
		[9] = 2,                    /* MAXIMUM CSCD DESCRIPTOR COUNT */
		[11] = 16,                  /* MAXIMUM SEGMENT DESCRIPTOR COUNT */
		[14] = 0x04,                /* MAXIMUM DESCRIPTOR LIST LENGTH 1024 */
		[16] = 0x10,                /* MAXIMUM SEGMENT LENGTH 256 MiB */
		[35] = 0xff, [36] = 0xff,   /* TOTAL / MAXIMUM CONCURRENT COPIES */
		[37] = 9,                   /* DATA SEGMENT GRANULARITY: 2^9 */
		[43] = 2, [44] = 0x02, [45] = 0xe4, /* IMPLEMENTED DESCRIPTOR LIST */
	};
	struct itest_result r;

	itest_put_be32(cdb + 10, 1024);
	itest_cmd(s, 0, cdb, 16, ITEST_IN, NULL, 0, 1024, &r);
	itest_ok(r.status == 0 && r.data_len == 46 && memcmp(r.data, want, 46) == 0,
		 "RECEIVE COPY RESULTS OPERATING PARAMETERS: AVAILABLE DATA 42, 2 CSCDs, 16 segments, list 1024 bytes, "
		 "segments of 256 MiB, granularity 2^9, implemented 02h E4h",
		 "%s", itest_result_str(&r));
	itest_result_free(&r);
	itest_put_be32(cdb + 10, 1024);
	itest_cmd(s, 1, cdb, 16, ITEST_IN, NULL, 0, 1024, &r);
	itest_ok(r.status == 0 && r.data_len == 46 && r.data[37] == 12,
		 "OPERATING PARAMETERS of a 4096-byte LU: DATA SEGMENT GRANULARITY 12", "%s", itest_result_str(&r));
	itest_result_free(&r);
	cdb[1] = 0x01;
	itest_expect_cmd(s, 0, "RECEIVE COPY RESULTS service action 01h (RECEIVE DATA, not offered) -> 05/24/00", cdb,
			 16, ITEST_IN, NULL, 0, 1024, EXPECT_SENSE(5, 0x24, 0x00), NULL);
}

static void test_copies(void)
{
	uint8_t p[256], *data = malloc(2048 * BS), *zeros = calloc(2048, BS), *two = malloc(64 * BS);
	uint8_t rcr[16] = { 0x84, 0x00, 1 };
	struct itest_result r;

	if (!data || !zeros || !two)
		abort();
	itest_put_be32(rcr + 10, 1024);
	itest_expect_cmd(s, 0, "COPY STATUS of list 1 before any copy -> 05/24/00 (field pointer b2)", rcr, 16, ITEST_IN,
			 NULL, 0, 1024, EXPECT_SENSE(5, 0x24, 0x00), &r);
	itest_expect_field_pointer("... field pointer on LIST IDENTIFIER (CDB byte 2)", &r, 1, 2, -1);
	itest_result_free(&r);

	itest_pattern(data, 2048 * BS, 11);
	itest_write16(s, 0, 0, data, 2048, BS, false, "WRITE(16) 2048 blocks at LBA 0");
	itest_write16(s, 0, LU0_BLOCKS - 2048, zeros, 2048, BS, false, "WRITE(16) zeros at the destination");
	xcopy(s, 0, "EXTENDED COPY 2048 blocks 0 -> capacity - 2048, LIST ID USAGE 10b (libiscsi Simple) -> GOOD", p,
	      simple_list(p, 0, 1, 0x2, 2048, 0, LU0_BLOCKS - 2048), 76, EXPECT_GOOD, NULL);
	itest_ok(itest_blocks_are(s, 0, LU0_BLOCKS - 2048, 2048, BS, data), "the destination holds the source's blocks",
		 NULL);
	itest_expect_cmd(s, 0, "COPY STATUS of list 1 after a copy with LIST ID USAGE 10b (nothing held) -> 05/24/00",
			 rcr, 16, ITEST_IN, NULL, 0, 1024, EXPECT_SENSE(5, 0x24, 0x00), NULL);

	/* Two segments in one list, held (00b). */
	header(p, 1, 0x0, 32, 56);
	cscd(p + 16, 0, BS);
	segment(p + 48, 0, 0, 32, 100, 4000);
	segment(p + 76, 0, 0, 32, 200, 4032);
	xcopy(s, 0, "EXTENDED COPY two segments (100 -> 4000, 200 -> 4032, 32 blocks each), HOLD -> GOOD", p, 104, 104,
	      EXPECT_GOOD, NULL);
	memcpy(two, data + 100 * BS, 32 * BS);
	memcpy(two + 32 * BS, data + 200 * BS, 32 * BS);
	itest_ok(itest_blocks_are(s, 0, 4000, 64, BS, two), "both segments copied, in order", NULL);
	itest_cmd(s, 0, rcr, 16, ITEST_IN, NULL, 0, 1024, &r);
	itest_ok(r.status == 0 && r.data_len == 12 && itest_get_be32(r.data) == 8 && r.data[4] == 0x01 &&
			 itest_get_be16(r.data + 5) == 2 && r.data[7] == 0x00 && itest_get_be32(r.data + 8) == 64 * BS,
		 "COPY STATUS of list 1: AVAILABLE DATA 8, COPY MANAGER STATUS 01h (completed without errors; 00h is in "
		 "progress), 2 segments, 32768 bytes", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	{
		uint8_t lid4[16] = { 0x84, 0x05 }; /* RECEIVE COPY STATUS(LID4), LIST IDENTIFIER b2-5 */

		itest_put_be32(lid4 + 2, 1);
		itest_put_be32(lid4 + 10, 1024);
		itest_cmd(s, 0, lid4, 16, ITEST_IN, NULL, 0, 1024, &r);
		itest_ok(r.status == 0 && r.data_len == 32 && itest_get_be32(r.data) == 28 && r.data[4] == 0x00 &&
				 r.data[5] == 0x01 && r.data[12] == 0x00 && r.data[15] == 0x00 &&
				 itest_get_be64(r.data + 16) == 64 * BS && itest_get_be16(r.data + 24) == 2,
			 "RECEIVE COPY STATUS(LID4) of list 1: EXTENDED COPY(LID1) (00h), completed (01h), 32768 bytes "
			 "(units 00h), 2 segments",
			 "%s", itest_result_str(&r));
		itest_result_free(&r);
		itest_put_be32(lid4 + 2, 0x101);
		itest_expect_cmd(s, 0, "RECEIVE COPY STATUS(LID4) of list 101h (never used) -> 05/24/00", lid4, 16,
				 ITEST_IN, NULL, 0, 1024, EXPECT_SENSE(5, 0x24, 0x00), NULL);
	}
	itest_expect_cmd(s2, 0, "COPY STATUS of list 1 from another I_T nexus -> 05/24/00 (held per nexus)", rcr, 16,
			 ITEST_IN, NULL, 0, 1024, EXPECT_SENSE(5, 0x24, 0x00), NULL);
	rcr[2] = 2;
	itest_expect_cmd(s, 0, "COPY STATUS of list 2 (never used) -> 05/24/00", rcr, 16, ITEST_IN, NULL, 0, 1024,
			 EXPECT_SENSE(5, 0x24, 0x00), NULL);
	xcopy(s, 0, "EXTENDED COPY with PARAMETER LIST LENGTH 0 -> GOOD, nothing copied", NULL, 0, 0, EXPECT_GOOD, NULL);

	/* The 4096-byte LU: the CSCD's DISK BLOCK LENGTH must be its. */
	{
		uint8_t *big = malloc(8 * 4096);

		itest_pattern(big, 8 * 4096, 5);
		itest_write16(s, 1, 0, big, 8, 4096, false, "WRITE(16) 8 blocks at LBA 0 of the 4096-byte LU");
		header(p, 3, 0x2, 32, 28);
		cscd(p + 16, 1, 4096);
		segment(p + 48, 0, 0, 8, 0, 100);
		xcopy(s, 1, "EXTENDED COPY on the 4096-byte LU (DISK BLOCK LENGTH 4096) -> GOOD", p, 76, 76, EXPECT_GOOD,
		      NULL);
		{
			uint8_t *got = malloc(8 * 4096);

			itest_ok(got && itest_read16(s, 1, 100, got, 8, 4096, "READ(16)") && !memcmp(got, big, 8 * 4096),
				 "the 4096-byte blocks copied", NULL);
			free(got);
		}
		cscd(p + 16, 1, 512);
		xcopy(s, 1, "EXTENDED COPY with DISK BLOCK LENGTH 512 on the 4096-byte LU -> 0A/0D/02", p, 76, 76,
		      EXPECT_SENSE(0xa, 0x0d, 0x02), NULL);
		free(big);
	}
	free(data);
	free(zeros);
	free(two);
}

/* Every parameter-list check, with the destination (LBA 8000, 8 blocks) left as it was. */
static void test_checks(void)
{
	uint8_t p[1200], before[8 * BS];
	struct itest_result r;
	uint32_t n;

	itest_pattern(before, sizeof(before), 77);
	itest_write16(s, 0, 8000, before, 8, BS, false, "WRITE(16) the destination's old blocks");
	n = simple_list(p, 0, 1, 0, 8, 0, 8000);
	xcopy(s, 0, "PARAMETER LIST LENGTH 47 (the CSCD cut) -> 05/1A/00", p, 47, 47, EXPECT_SENSE(5, 0x1a, 0x00), NULL);
	xcopy(s, 0, "PARAMETER LIST LENGTH 75 (the segment cut) -> 05/1A/00", p, 75, 75, EXPECT_SENSE(5, 0x1a, 0x00), NULL);
	xcopy(s, 0, "PARAMETER LIST LENGTH 10 (the header cut) -> 05/1A/00", p, 10, 10, EXPECT_SENSE(5, 0x1a, 0x00), NULL);
	itest_put_be32(p + 12, 4);
	xcopy(s, 0, "INLINE DATA LENGTH 4 (none is taken) -> 05/26/00 on byte 12", p, n, n, EXPECT_SENSE(5, 0x26, 0x00),
	      &r);
	itest_expect_field_pointer("... field pointer on INLINE DATA LENGTH (parameter byte 12)", &r, 0, 12, -1);
	itest_result_free(&r);
	n = simple_list(p, 0, 5, 0x3, 8, 0, 8000);
	xcopy(s, 0, "LIST ID USAGE 11b with LIST IDENTIFIER 5 -> 05/26/00", p, n, n, EXPECT_SENSE(5, 0x26, 0x00), NULL);
	n = simple_list(p, 0, 1, 0, 8, 0, 8000);
	p[16] = 0xe0;
	xcopy(s, 0, "CSCD descriptor E0h -> 05/26/07 UNSUPPORTED TARGET DESCRIPTOR TYPE CODE", p, n, n,
	      EXPECT_SENSE(5, 0x26, 0x07), &r);
	itest_expect_field_pointer("... field pointer on the descriptor (parameter byte 16)", &r, 0, 16, -1);
	itest_result_free(&r);
	header(p, 1, 0, 32, 20);
	cscd(p + 16, 0, BS);
	memset(p + 48, 0, 20);
	p[48] = 0x03;
	p[51] = 0x10;
	xcopy(s, 0, "segment descriptor 03h (stream to stream) -> 05/26/09", p, 68, 68, EXPECT_SENSE(5, 0x26, 0x09), NULL);
	header(p, 1, 0, 96, 28);
	for (int i = 0; i < 3; i++)
		cscd(p + 16 + 32 * i, 0, BS);
	segment(p + 112, 0, 0, 8, 0, 8000);
	xcopy(s, 0, "3 CSCD descriptors (2 at most) -> 05/26/06 TOO MANY TARGET DESCRIPTORS", p, 140, 140,
	      EXPECT_SENSE(5, 0x26, 0x06), NULL);
	header(p, 1, 0, 32, 17 * 28);
	cscd(p + 16, 0, BS);
	for (int i = 0; i < 17; i++)
		segment(p + 48 + 28 * i, 0, 0, 1, 0, 8000);
	xcopy(s, 0, "17 segment descriptors (16 at most) -> 05/26/08 TOO MANY SEGMENT DESCRIPTORS", p, 48 + 17 * 28,
	      48 + 17 * 28, EXPECT_SENSE(5, 0x26, 0x08), NULL);
	header(p, 1, 0, 64, 37 * 28);
	cscd(p + 16, 0, BS);
	cscd(p + 48, 0, BS);
	for (int i = 0; i < 37; i++)
		segment(p + 80 + 28 * i, 0, 0, 1, 0, 8000);
	xcopy(s, 0, "descriptor lists of 1100 bytes (MAXIMUM DESCRIPTOR LIST LENGTH 1024) -> 05/1A/00 before the counts",
	      p, 80 + 37 * 28, 80 + 37 * 28, EXPECT_SENSE(5, 0x1a, 0x00), NULL);
	n = simple_list(p, 0, 1, 0, 8, 0, 8000);
	p[50] = 0x1c;
	xcopy(s, 0, "segment DESCRIPTOR LENGTH 001Ch for type 02h -> 05/26/00", p, n, n, EXPECT_SENSE(5, 0x26, 0x00), NULL);
	n = simple_list(p, 0, 1, 0, 8, 0, 8000);
	itest_put_be16(p + 54, 1);
	xcopy(s, 0, "destination CSCD index 1 (one descriptor) -> 0A/08/04 UNREACHABLE COPY TARGET", p, n, n,
	      EXPECT_SENSE(0xa, 0x08, 0x04), NULL);
	n = simple_list(p, 0, 1, 0, 8, 0, 8000);
	p[16 + 8 + naa[0][3] - 1] ^= 0xff;
	xcopy(s, 0, "a CSCD naming no LU of the target -> 0A/0D/02 COPY TARGET DEVICE NOT REACHABLE", p, n, n,
	      EXPECT_SENSE(0xa, 0x0d, 0x02), NULL);
	n = simple_list(p, 0, 1, 0, 8, 0, 8000);
	cscd(p + 16, 1, 512);
	xcopy(s, 0, "a CSCD naming LUN 1 with DISK BLOCK LENGTH 512 (LUN 1's is 4096) -> 0A/0D/02", p, n, n,
	      EXPECT_SENSE(0xa, 0x0d, 0x02), NULL);
	n = simple_list(p, 0, 1, 0, 8, 0, 8000);
	p[17] = 0x20;
	xcopy(s, 0, "a CSCD with NUL = 1 -> 0A/0D/02", p, n, n, EXPECT_SENSE(0xa, 0x0d, 0x02), NULL);
	n = simple_list(p, 0, 1, 0, 8, 0, 8000);
	p[17] = 0x80;
	xcopy(s, 0, "LU ID TYPE 10b (SPC-4: the copy manager's choice) is ignored -> GOOD", p, n, n, EXPECT_GOOD, NULL);
	itest_write16(s, 0, 8000, before, 8, BS, false, "WRITE(16) the old blocks back");
	n = simple_list(p, 0, 1, 0, 8, 0, LU0_BLOCKS - 4);
	xcopy(s, 0, "destination range past the capacity -> 0A/00/00 COPY ABORTED (libiscsi ValidSegDescr)", p, n, n,
	      EXPECT_SENSE(0xa, 0x00, 0x00), NULL);
	header(p, 1, 0, 32, 56);
	cscd(p + 16, 0, BS);
	segment(p + 48, 0, 0, 8, 0, 8000);
	segment(p + 76, 0, 0, 8, LU0_BLOCKS, 0);
	xcopy(s, 0, "second segment's source past the capacity -> 0A/00/00, the first segment not copied either", p, 104,
	      104, EXPECT_SENSE(0xa, 0x00, 0x00), NULL);
	itest_ok(itest_blocks_are(s, 0, 8000, 8, BS, before),
		 "after every refused list the destination holds its old blocks", NULL);

	n = simple_list(p, 4, 1, 0, 8, 0, 100);
	xcopy(s, 4, "EXTENDED COPY to a write-protected LU -> 07/27/00", p, n, n, EXPECT_SENSE(7, 0x27, 0x00), NULL);
}

/*
 * EXTENDED COPY(LID4) (83h/01h): the 48-byte header (b0 LIST FORMAT 01h, b1
 * LIST ID USAGE, b2-3 HEADER CSCD DESCRIPTOR LIST LENGTH, b15 IMMED,
 * b20-23 LIST IDENTIFIER, b42-43 / b44-45 / b46-47 the CSCD, segment and
 * inline lengths), then the descriptors of LID1; the result held for
 * RECEIVE COPY STATUS(LID4) (RESPONSE TO SERVICE ACTION 01h), not for
 * COPY STATUS, which reports EXTENDED COPY(LID1)s.
 */
static uint32_t lid4_list(uint8_t *p, uint32_t list_id, uint8_t usage, uint16_t nblocks, uint64_t src, uint64_t dst)
{
	memset(p, 0, 48);
	p[0] = 0x01;
	p[1] = (uint8_t)(usage << 3);
	itest_put_be32(p + 20, list_id);
	itest_put_be16(p + 42, 32);
	itest_put_be16(p + 44, 28);
	cscd(p + 48, 0, BS);
	segment(p + 80, 0, 0, nblocks, src, dst);
	return 108;
}

static void test_lid4(void)
{
	uint8_t p[256], cdb[16] = { 0x83, 0x01 }, lid4[16] = { 0x84, 0x05 }, rcr[16] = { 0x84, 0x00, 0x12 };
	uint8_t *data = malloc(64 * BS), *old = malloc(64 * BS);
	struct itest_result r;
	uint32_t n;

	if (!data || !old)
		abort();
	itest_pattern(data, 64 * BS, 41);
	itest_pattern(old, 64 * BS, 42);
	itest_write16(s, 0, 6000, data, 64, BS, false, "WRITE(16) 64 blocks at LBA 6000");
	itest_write16(s, 0, 7000, old, 64, BS, false, "WRITE(16) the destination's old blocks at LBA 7000");
	n = lid4_list(p, 0x12, 0x0, 64, 6000, 7000);
	itest_put_be32(cdb + 10, n);
	itest_expect_cmd(s, 0, "EXTENDED COPY(LID4) list 12h, 64 blocks 6000 -> 7000, held -> GOOD", cdb, 16, ITEST_OUT,
			 p, n, 0, EXPECT_GOOD, NULL);
	itest_ok(itest_blocks_are(s, 0, 7000, 64, BS, data), "... the destination holds the source's blocks", NULL);
	itest_put_be32(lid4 + 2, 0x12);
	itest_put_be32(lid4 + 10, 1024);
	itest_cmd(s, 0, lid4, 16, ITEST_IN, NULL, 0, 1024, &r);
	itest_ok(r.status == 0 && r.data_len == 32 && r.data[4] == 0x01 && r.data[5] == 0x01 &&
			 itest_get_be64(r.data + 16) == 64 * BS && itest_get_be16(r.data + 24) == 1,
		 "RECEIVE COPY STATUS(LID4) of list 12h: RESPONSE TO SERVICE ACTION 01h (EXTENDED COPY(LID4)), "
		 "completed, 32768 bytes, 1 segment", "%s", itest_result_str(&r));
	itest_result_free(&r);
	itest_put_be32(rcr + 10, 1024);
	itest_expect_cmd(s, 0, "COPY STATUS (LID1) of list 12h -> 05/24/00: it reports EXTENDED COPY(LID1)s only", rcr,
			 16, ITEST_IN, NULL, 0, 1024, EXPECT_SENSE(5, 0x24, 0x00), NULL);

	itest_write16(s, 0, 7000, old, 64, BS, false, "WRITE(16) the old blocks back");
	n = lid4_list(p, 0x13, 0x0, 64, 6000, 7000);
	p[0] = 0x00;
	itest_expect_cmd(s, 0, "EXTENDED COPY(LID4) with LIST FORMAT 00h -> 05/26/00", cdb, 16, ITEST_OUT, p, n, 0,
			 EXPECT_SENSE(5, 0x26, 0x00), &r);
	itest_expect_field_pointer("... field pointer on LIST FORMAT (parameter byte 0)", &r, 0, 0, -1);
	itest_result_free(&r);
	n = lid4_list(p, 0x13, 0x0, 64, 6000, 7000);
	p[15] = 0x01;
	itest_expect_cmd(s, 0, "EXTENDED COPY(LID4) with IMMED = 1 (not offered) -> 05/26/00", cdb, 16, ITEST_OUT, p, n,
			 0, EXPECT_SENSE(5, 0x26, 0x00), &r);
	itest_expect_field_pointer("... field pointer on IMMED (parameter byte 15, bit 0)", &r, 0, 15, 0);
	itest_result_free(&r);
	n = lid4_list(p, 0x13, 0x0, 64, 6000, 7000);
	itest_put_be16(p + 2, 32);
	itest_expect_cmd(s, 0, "EXTENDED COPY(LID4) with HEADER CSCD DESCRIPTOR LIST LENGTH 32 -> 05/26/00", cdb, 16,
			 ITEST_OUT, p, n, 0, EXPECT_SENSE(5, 0x26, 0x00), &r);
	itest_expect_field_pointer("... field pointer on parameter byte 2", &r, 0, 2, -1);
	itest_result_free(&r);
	n = lid4_list(p, 0x13, 0x3, 64, 6000, 7000);
	itest_expect_cmd(s, 0, "EXTENDED COPY(LID4) with LIST ID USAGE 11b and LIST IDENTIFIER 13h -> 05/26/00", cdb,
			 16, ITEST_OUT, p, n, 0, EXPECT_SENSE(5, 0x26, 0x00), &r);
	itest_expect_field_pointer("... field pointer on LIST IDENTIFIER (parameter byte 20)", &r, 0, 20, -1);
	itest_result_free(&r);
	n = lid4_list(p, 0x13, 0x0, 64, 6000, 7000);
	itest_put_be16(p + 46, 4);
	itest_expect_cmd(s, 0, "EXTENDED COPY(LID4) with INLINE DATA LENGTH 4 -> 05/26/00", cdb, 16, ITEST_OUT, p, n, 0,
			 EXPECT_SENSE(5, 0x26, 0x00), &r);
	itest_expect_field_pointer("... field pointer on INLINE DATA LENGTH (parameter byte 46)", &r, 0, 46, -1);
	itest_result_free(&r);
	n = lid4_list(p, 0x13, 0x0, 64, 6000, 7000);
	itest_put_be32(cdb + 10, 40);
	itest_expect_cmd(s, 0, "EXTENDED COPY(LID4) with PARAMETER LIST LENGTH 40 (the header cut) -> 05/1A/00", cdb, 16,
			 ITEST_OUT, p, 40, 0, EXPECT_SENSE(5, 0x1a, 0x00), NULL);
	itest_put_be32(cdb + 10, 100);
	itest_expect_cmd(s, 0, "EXTENDED COPY(LID4) with PARAMETER LIST LENGTH 100 (the segment cut) -> 05/1A/00", cdb,
			 16, ITEST_OUT, p, 100, 0, EXPECT_SENSE(5, 0x1a, 0x00), NULL);
	itest_ok(itest_blocks_are(s, 0, 7000, 64, BS, old), "after every refused list the destination holds its old "
		 "blocks", NULL);
	free(data);
	free(old);
}

/* RESET WRITE POINTER of the zone at lba of LUN lun (ZBC OUT 94h/04h). */
static struct itest_result zbc_reset(int lun, uint64_t lba)
{
	uint8_t cdb[16] = { 0x94, 0x04 };
	struct itest_result r;

	itest_put_be64(cdb + 2, lba);
	itest_cmd(s, lun, cdb, 16, ITEST_NONE, NULL, 0, 0, &r);
	return r;
}

/* The write pointer of the zone at lba of LUN lun (REPORT ZONES), or UINT64_MAX. */
static uint64_t zone_wp(int lun, uint64_t lba, int *cond)
{
	uint8_t rz[16] = { 0x95, 0x00 };
	struct itest_result r;
	uint64_t wp = UINT64_MAX;

	itest_put_be64(rz + 2, lba);
	itest_put_be32(rz + 10, 128);
	itest_cmd(s, lun, rz, 16, ITEST_IN, NULL, 0, 128, &r);
	if (r.status == 0 && r.data_len >= 128) {
		wp = itest_get_be64(r.data + 64 + 24);
		if (cond)
			*cond = r.data[64 + 1] >> 4;
	}
	itest_result_free(&r);
	return wp;
}

/*
 * Zoned LUs (copy/copy_piece.c; ZBC-2's write pointer rules hold for the
 * copy manager's writes as for a WRITE's): LUN 3, zones of 8192 blocks,
 * zones 0 and 1 conventional, URSWRZ 0; LUN 6, zone 0 conventional, URSWRZ 1.
 */
#define ZB 8192u
static void test_zoned(void)
{
	uint8_t p[256], *data = malloc(4096 * BS), *zeros = calloc(16, BS);
	uint32_t n;
	int cond = -1;

	if (!data || !zeros)
		abort();
	itest_pattern(data, 4096 * BS, 31);
	if (!itest_write16(s, 3, 0, data, 4096, BS, false, "zbc-hm: WRITE(16) 4096 blocks into conventional zone 0"))
		return;
	n = simple_list(p, 3, 1, 0x2, 4096, 0, 2 * ZB);
	xcopy(s, 3, "zbc-hm: EXTENDED COPY 4096 blocks (two pieces) from zone 0 to the write pointer of SWR zone 2 -> GOOD",
	      p, n, n, EXPECT_GOOD, NULL);
	itest_ok(itest_blocks_are(s, 3, 2 * ZB, 4096, BS, data), "... zone 2 holds the copied blocks", NULL);
	itest_ok(zone_wp(3, 2 * ZB, &cond) == 2 * ZB + 4096 && cond == 0x2,
		 "... zone 2's write pointer advanced by 4096 blocks, implicitly open (REPORT ZONES)", "cond %d", cond);

	n = simple_list(p, 3, 1, 0x2, 8, 0, 2 * ZB + 5000);
	xcopy(s, 3, "zbc-hm: EXTENDED COPY to zone 2 past its write pointer -> 0A/21/04 (UNALIGNED WRITE COMMAND, as a "
	      "WRITE gets it, COPY ABORTED)", p, n, n, EXPECT_SENSE(0xa, 0x21, 0x04), NULL);
	itest_ok(zone_wp(3, 2 * ZB, NULL) == 2 * ZB + 4096, "... zone 2's write pointer where it was", NULL);

	header(p, 1, 0x2, 32, 56);
	cscd(p + 16, 3, BS);
	segment(p + 48, 0, 0, 16, 0, 3 * ZB);
	segment(p + 76, 0, 0, 16, 16, 3 * ZB + 16);
	xcopy(s, 3, "zbc-hm: two segments into zone 3, the second at the write pointer the first moved -> GOOD", p, 104,
	      104, EXPECT_GOOD, NULL);
	itest_ok(itest_blocks_are(s, 3, 3 * ZB, 32, BS, data) && zone_wp(3, 3 * ZB, NULL) == 3 * ZB + 32,
		 "... zone 3 holds both, its write pointer at 32", NULL);

	n = simple_list(p, 3, 1, 0x2, 8, 2 * ZB + 4096, 1000);
	xcopy(s, 3, "zbc-hm, URSWRZ 0: a source at zone 2's write pointer (unwritten) -> 0A/21/06 (ATTEMPT TO READ "
	      "INVALID DATA, as a READ gets it)", p, n, n, EXPECT_SENSE(0xa, 0x21, 0x06), NULL);
	itest_ok(itest_blocks_are(s, 3, 1000, 8, BS, data + 1000 * BS), "... the destination holds its old blocks", NULL);

	n = simple_list(p, 3, 1, 0x2, 8, 0, 2 * ZB - 4);
	xcopy(s, 3, "zbc-hm: a destination from conventional zone 1 into SWR zone 2 -> 0A/21/05 (WRITE BOUNDARY "
	      "VIOLATION)", p, n, n, EXPECT_SENSE(0xa, 0x21, 0x05), NULL);

	/* URSWRZ 1: blocks above a write pointer read as zeros, also when the copy manager reads them. */
	if (itest_write16(s, 6, ZB, data, 16, BS, false, "zbc-hm (URSWRZ 1): WRITE(16) 16 blocks at zone 1's start")) {
		struct itest_result r = zbc_reset(6, ZB);

		itest_ok(r.status == 0, "... RESET WRITE POINTER of zone 1 (the blocks stay in the file)", "%s",
			 itest_result_str(&r));
		itest_result_free(&r);
		n = simple_list(p, 6, 1, 0x2, 16, ZB, 2 * ZB);
		xcopy(s, 6, "zbc-hm (URSWRZ 1): EXTENDED COPY of zone 1's unwritten blocks to zone 2 -> GOOD", p, n, n,
		      EXPECT_GOOD, NULL);
		itest_ok(itest_blocks_are(s, 6, 2 * ZB, 16, BS, zeros),
			 "... zone 2 reads zeros, as READ reads the source (not what the reset left in the file)", NULL);
	}
	free(data);
	free(zeros);
}

/*
 * LUN 2, protection information type 1: the copy reads as READ with
 * RDPROTECT 000b checks and writes the tuples with the destination's
 * reference tags, so READ(16) of the destination (which checks them) is
 * GOOD; a corrupted source guard stops the copy with COPY ABORTED, 10/01.
 */
/* One block of LUN lun read with its tuple (READ(16) RDPROTECT 011b: nothing checked): REFERENCE TAG lba, APPLICATION TAG 0. */
static void tags_are(int lun, uint32_t lba, const char *name)
{
	uint8_t rd16[16] = { 0x88, 0x60 };
	struct itest_result r;

	itest_put_be64(rd16 + 2, lba);
	itest_put_be32(rd16 + 10, 1);
	itest_cmd(s, lun, rd16, 16, ITEST_IN, NULL, 0, BS + 8, &r);
	itest_ok(r.status == 0 && r.data_len == (int)BS + 8 && itest_get_be32(r.data + BS + 4) == lba &&
			 itest_get_be16(r.data + BS + 2) == 0,
		 name, "%s", itest_result_str(&r));
	itest_result_free(&r);
}

static void test_pi(struct itest_daemon *d)
{
	uint8_t p[128], data[16 * BS], got[16 * BS];
	struct itest_result r;
	char out[512];
	uint32_t n;

	itest_pattern(data, sizeof(data), 21);
	itest_write16(s, 2, 40, data, 16, BS, false, "PI LU: WRITE(16) 16 blocks at LBA 40 (tuples generated)");
	n = simple_list(p, 2, 1, 0x2, 16, 40, 1000);
	xcopy(s, 2, "PI LU: EXTENDED COPY 16 blocks 40 -> 1000 -> GOOD", p, n, n, EXPECT_GOOD, NULL);
	itest_ok(itest_read16(s, 2, 1000, got, 16, BS, "PI LU: READ(16) of the destination (reference tags checked)") &&
			 !memcmp(got, data, sizeof(data)),
		 "PI LU: the copied blocks read back, their reference tags the destination's", NULL);
	tags_are(2, 1000, "PI LU: READ(16) RDPROTECT 011b of LBA 1000: REFERENCE TAG 1000, APPLICATION TAG 0");
	if (itest_ok(itest_ctl(d, out, sizeof(out), "fault add 2 corrupt-pi --lba 45 --pi-field guard") == 0,
		     "sbcemuctl fault add 2 corrupt-pi --lba 45 --pi-field guard -> exit 0", "%s", out)) {
		n = simple_list(p, 2, 1, 0x2, 16, 40, 2000);
		xcopy(s, 2, "PI LU: EXTENDED COPY over a block whose guard is bad -> 0A/10/01 (COPY ABORTED, GUARD CHECK)",
		      p, n, n, EXPECT_SENSE(0xa, 0x10, 0x01), &r);
		itest_ok(r.sense.info_valid && r.sense.information == 45, "... INFORMATION = 45, the block that failed", "%s",
			 itest_result_str(&r));
		itest_result_free(&r);
	}
	/* A medium-error fault rule fails the copy's read as it fails a READ (docs/control.md). */
	if (itest_ok(itest_ctl(d, out, sizeof(out), "fault add 0 medium-error --lba 5000-5001") == 0,
		     "sbcemuctl fault add 0 medium-error --lba 5000-5001 -> exit 0", "%s", out)) {
		n = simple_list(p, 0, 1, 0x2, 2048, 4096, 20000);
		xcopy(s, 0, "EXTENDED COPY over a bad block -> 0A/11/00 (COPY ABORTED, UNRECOVERED READ ERROR)", p, n, n,
		      EXPECT_SENSE(0xa, 0x11, 0x00), &r);
		itest_ok(r.sense.info_valid && r.sense.information == 5000, "... INFORMATION = 5000, the first bad block",
			 "%s", itest_result_str(&r));
		itest_result_free(&r);
		itest_ctl(d, out, sizeof(out), "fault remove all");
	}
}

/* Two CSCDs (LUNs a, b, of blocks of bs bytes) and one segment from CSCD 0 to CSCD 1: 108 bytes. */
static uint32_t two_lu_list(uint8_t *p, int a, int b, uint32_t bs, uint16_t nblocks, uint64_t src, uint64_t dst)
{
	header(p, 1, 0x2, 64, 28);
	cscd(p + 16, a, bs);
	cscd(p + 48, b, bs);
	segment(p + 80, 0, 1, nblocks, src, dst);
	return 108;
}

/* 2 MiB (two pieces) from LUN 0's 512-byte blocks 0.. to LUN 1's 4096-byte blocks 3000..: the same bytes. */
static void copy_in_pieces_between_block_lengths(void)
{
	static uint8_t want[2 << 20], got[2 << 20];
	uint8_t p[108];
	uint32_t n = two_lu_list(p, 0, 1, BS, 4096, 0, 3000);

	cscd(p + 48, 1, 4096);
	itest_pattern(want, sizeof(want), 93);
	if (!itest_write16(s, 0, 0, want, 4096, BS, false, "LUN 0: WRITE(16) of LBA 0..4095"))
		return;
	xcopy(s, 0, "LUN 0 -> LUN 1, 4096 source blocks (2 MiB, two pieces) -> GOOD", p, n, n, EXPECT_GOOD, NULL);
	itest_ok(itest_read16(s, 1, 3000, got, 512, 4096, "LUN 1: READ(16) of LBA 3000..3511") &&
			 !memcmp(got, want, sizeof(want)),
		 "... LUN 1 LBA 3000..3511 hold LUN 0's 0..4095", NULL);
}

/*
 * An EXTENDED COPY sent to LUN lun of 16 blocks from LUN from's src to LUN
 * to's dst (512-byte blocks both), then the destination read back (with its
 * tuples checked on a PI LU) and compared with want.
 */
static void copy_16_between(int lun, int from, uint64_t src, int to, uint64_t dst, const uint8_t *want,
			    const char *name, const char *back)
{
	static uint8_t got[16 * BS];
	uint8_t p[108];
	uint32_t n = two_lu_list(p, from, to, BS, 16, src, dst);

	xcopy(s, lun, name, p, n, n, EXPECT_GOOD, NULL);
	itest_ok(itest_read16(s, to, dst, got, 16, BS, "READ(16) of the destination") && !memcmp(got, want, sizeof(got)),
		 back, NULL);
}

/*
 * Copies between LUs of the target (copy/extended_copy.c: each CSCD names
 * any LU of the target; the copy manager is the LU the command was sent to):
 * sent to the source and to the destination; to a PI LU from one without
 * (tuples made as a WRITE makes them) and back; to a zbc-hm LU's write
 * pointer and past it; between LUs of 512- and 4096-byte blocks both ways
 * (DC 0 and 1), refused where the bytes are not whole blocks of both
 * (0A/26/0A UNEXPECTED INEXACT SEGMENT); refused where the destination LU
 * is write protected (07/27/00, as a WRITE there), taken from a
 * write-protected source.
 */
static void test_between_lus(void)
{
	static uint8_t a[16 * BS], got[16 * BS];
	uint8_t p[128];
	uint32_t n;

	itest_pattern(a, sizeof(a), 71);
	if (!itest_write16(s, 0, 7000, a, 16, BS, false, "LUN 0: WRITE(16) of LBA 7000 (16 blocks)"))
		return;
	copy_16_between(0, 0, 7000, 2, 3000, a, "sent to LUN 0: LUN 0 LBA 7000 -> LUN 2 (PI type 1) LBA 3000 -> GOOD",
			"... LUN 2 LBA 3000.. hold LUN 0's blocks, read back with their tuples checked");
	tags_are(2, 3005, "... READ(16) RDPROTECT 011b of LBA 3005: REFERENCE TAG 3005, APPLICATION TAG 0 (as a WRITE "
		 "makes them)");
	n = two_lu_list(p, 2, 0, BS, 16, 3000, 7100);
	xcopy(s, 0, "sent to LUN 0 again: LUN 2 (PI) LBA 3000 -> LUN 0 LBA 7100 (the tuples checked, then left) -> GOOD",
	      p, n, n, EXPECT_GOOD, NULL);
	itest_ok(itest_blocks_are(s, 0, 7100, 16, BS, a), "... LUN 0 LBA 7100.. hold them", "different");
	copy_16_between(5, 0, 7000, 5, 4000, a, "sent to the destination, LUN 5: LUN 0 LBA 7000 -> LUN 5 LBA 4000 -> GOOD",
			"... LUN 5 LBA 4000.. hold them, their tuples checked");
	copy_16_between(0, 5, 4000, 2, 3100, a,
			"sent to LUN 0, neither's: LUN 5 LBA 4000 -> LUN 2 LBA 3100 (locks on two other LUs) -> GOOD",
			"... LUN 2 LBA 3100.. hold them, retagged (both PI type 1) and checked");
	n = two_lu_list(p, 0, 3, BS, 16, 7000, 5 * ZB);
	xcopy(s, 0, "LUN 0 -> the write pointer of LUN 3's (zbc-hm) zone 5 -> GOOD", p, n, n, EXPECT_GOOD, NULL);
	itest_ok(zone_wp(3, 5 * ZB, NULL) == 5 * ZB + 16, "... zone 5's write pointer moved 16 blocks", NULL);
	itest_ok(itest_blocks_are(s, 3, 5 * ZB, 16, BS, a), "... zone 5 holds LUN 0's blocks", "different");
	n = two_lu_list(p, 0, 3, BS, 16, 7000, 5 * ZB + 100);
	xcopy(s, 0, "LUN 0 -> past zone 5's write pointer -> 0A/21/04 (the WRITE's sense, COPY ABORTED)", p, n, n,
	      EXPECT_SENSE(0xa, 0x21, 0x04), NULL);
	itest_ok(zone_wp(3, 5 * ZB, NULL) == 5 * ZB + 16, "... zone 5's write pointer where it was", NULL);
	/* LUN 1's blocks are 4096 bytes: a segment moves whole blocks of both LUs (DC: whose NUMBER OF BLOCKS counts). */
	n = two_lu_list(p, 0, 1, BS, 16, 7000, 3900);
	cscd(p + 48, 1, 4096);
	xcopy(s, 0, "LUN 0 (512-byte blocks) -> LUN 1 (4096), 16 source blocks (DC 0) -> GOOD", p, n, n, EXPECT_GOOD,
	      NULL);
	itest_ok(itest_blocks_are(s, 1, 3900, 2, 4096, a), "... LUN 1 LBA 3900, 3901 hold LUN 0's 7000..7015", "different");
	segment(p + 80, 0, 1, 1, 7000, 3902);
	p[81] = 0x02;
	xcopy(s, 0, "LUN 0 -> LUN 1, NUMBER OF BLOCKS 1 with DC 1 (one 4096-byte block: 8 source blocks) -> GOOD", p, n, n,
	      EXPECT_GOOD, NULL);
	itest_ok(itest_blocks_are(s, 1, 3902, 1, 4096, a), "... LUN 1 LBA 3902 holds LUN 0's 7000..7007", "different");
	n = two_lu_list(p, 1, 0, 4096, 2, 3900, 7400);
	cscd(p + 48, 0, BS);
	xcopy(s, 0, "LUN 1 -> LUN 0, 2 source blocks of 4096 bytes -> GOOD", p, n, n, EXPECT_GOOD, NULL);
	itest_ok(itest_blocks_are(s, 0, 7400, 16, BS, a), "... LUN 0 LBA 7400..7415 hold them", "different");
	n = two_lu_list(p, 1, 5, 4096, 2, 3900, 6000);
	cscd(p + 48, 5, BS);
	xcopy(s, 5, "LUN 1 (4096, no PI) -> LUN 5 (512, PI type 1), sent to LUN 5 -> GOOD", p, n, n, EXPECT_GOOD, NULL);
	itest_ok(itest_read16(s, 5, 6000, got, 16, BS, "LUN 5: READ(16) of LBA 6000 (guards, reference tags checked)") &&
			 !memcmp(got, a, sizeof(a)),
		 "... LUN 5 LBA 6000.. hold them, their tuples made for 512-byte blocks", NULL);
	copy_in_pieces_between_block_lengths();
	n = two_lu_list(p, 0, 1, BS, 12, 7000, 3903);
	cscd(p + 48, 1, 4096);
	xcopy(s, 0, "LUN 0 -> LUN 1, 12 source blocks (6 KiB: not whole 4096-byte blocks) -> 0A/26/0A UNEXPECTED "
	      "INEXACT SEGMENT", p, n, n, EXPECT_SENSE(0xa, 0x26, 0x0a), NULL);
	n = two_lu_list(p, 0, 4, BS, 16, 7000, 100);
	xcopy(s, 0, "LUN 0 -> LUN 4 (write protected) -> 07/27/00, as a WRITE there", p, n, n,
	      EXPECT_SENSE(0x7, 0x27, 0x00), NULL);
	n = two_lu_list(p, 4, 0, BS, 16, 100, 7200);
	xcopy(s, 0, "LUN 4 (write protected, the source) -> LUN 0 -> GOOD", p, n, n, EXPECT_GOOD, NULL);
}

static void service_both(int ms, const bool *stop);

/* A command of 16 bytes for test_locks_between_lus: its session, LUN, CDB and Data-Out (NULL: none). */
struct async_cmd {
	struct iscsi_context *sess;
	int lun;
	uint8_t cdb[16];
	struct iscsi_data *data;
	struct itest_async done;
	struct scsi_task *task;
};

static bool send_async(struct async_cmd *c)
{
	c->done = (struct itest_async){ 0 };
	c->task = scsi_create_task(16, c->cdb, c->data ? SCSI_XFER_WRITE : SCSI_XFER_NONE, c->data ? c->data->size : 0);
	if (c->task && iscsi_scsi_command_async(c->sess, c->lun, c->task, itest_async_cmd_cb, c->data, &c->done) == 0)
		return true;
	itest_ok(false, "a command sent asynchronously", "%s", iscsi_get_error(c->sess));
	if (c->task)
		scsi_free_scsi_task(c->task);
	return false;
}

/*
 * first, held by the fault rule `rule` (sbcemuctl fault add ...) once it
 * has started and taken its LBA locks, then second: second must wait
 * (unanswered for 0.7 s, what names it); the rule removed, both complete
 * GOOD.  during (may be NULL) runs while first is held, before second.
 */
static bool held_then_waits(struct itest_daemon *d, const char *rule, struct async_cmd *first, struct async_cmd *second,
			    void (*during)(void), const char *what)
{
	char out[1024], name[256];
	bool ok;

	snprintf(name, sizeof(name), "sbcemuctl %s -> exit 0", rule);
	if (!itest_ok(itest_ctl(d, out, sizeof(out), "%s", rule) == 0, name, "%s", out) || !send_async(first)) {
		itest_ctl(d, out, sizeof(out), "fault remove all");
		return false;
	}
	service_both(300, &first->done.done);
	if (during)
		during();
	if (first->done.done || !send_async(second)) {
		itest_ok(false, "the first command held by the rule", "answered 0x%x", first->done.status);
		itest_ctl(d, out, sizeof(out), "fault remove all");
		return false;
	}
	service_both(700, &second->done.done);
	itest_ok(!second->done.done, what, "answered 0x%x", second->done.status);
	itest_ctl(d, out, sizeof(out), "fault remove all");
	service_both(5000, &first->done.done);
	service_both(5000, &second->done.done);
	ok = first->done.done && first->done.status == SCSI_STATUS_GOOD && second->done.done &&
	     second->done.status == SCSI_STATUS_GOOD;
	itest_ok(ok, "... the rule removed: the first completes, and its end starts the second -> both GOOD",
		 "first %d/0x%x second %d/0x%x", first->done.done, first->done.status, second->done.done,
		 second->done.status);
	if (first->done.done)
		scsi_free_scsi_task(first->task);
	if (second->done.done)
		scsi_free_scsi_task(second->task);
	return ok;
}

/*
 * COPY OPERATION ABORT of an EXTENDED COPY(LID1) held by a fault rule
 * (list 7, LIST ID USAGE 00b): it ends TASK ABORTED once let go, and its
 * list is held as ended with errors: COPY STATUS 02h, RECEIVE COPY
 * STATUS(LID4) COPY OPERATION STATUS 60h with status 40h.
 */
static void test_abort_held(struct itest_daemon *d)
{
	static uint8_t p[76];
	struct iscsi_data copy = { .size = 76, .data = p };
	struct async_cmd cp = { .sess = s, .lun = 0, .cdb = { 0x83, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 76 },
				.data = &copy };
	uint8_t abort[16] = { 0x83, 0x1c, 0, 0, 0, 7 }, lid4[16] = { 0x84, 0x05, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0x04, 0 };
	struct itest_result r;
	char out[512];

	simple_list(p, 0, 7, 0x0, 16, 7000, 9500);
	if (!itest_ok(itest_ctl(d, out, sizeof(out), "fault add 0 hold --opcode 0x83 --count 1") == 0,
		      "sbcemuctl fault add 0 hold --opcode 0x83 --count 1 -> exit 0", "%s", out) ||
	    !send_async(&cp)) {
		itest_ctl(d, out, sizeof(out), "fault remove all");
		return;
	}
	service_both(300, &cp.done.done);
	itest_expect_cmd(s2, 0, "COPY OPERATION ABORT of list 7 from another I_T nexus -> 05/24/00", abort, 16, ITEST_NONE,
			 NULL, 0, 0, EXPECT_SENSE(5, 0x24, 0x00), NULL);
	itest_expect_cmd(s, 0, "COPY OPERATION ABORT of list 7 (held by the rule) -> GOOD", abort, 16, ITEST_NONE, NULL, 0,
			 0, EXPECT_GOOD, NULL);
	itest_ctl(d, out, sizeof(out), "fault remove all");
	service_both(5000, &cp.done.done);
	itest_ok(cp.done.done && cp.done.status == SCSI_STATUS_TASK_ABORTED,
		 "... the rule removed: the EXTENDED COPY ends TASK ABORTED", "%d/0x%x", cp.done.done, cp.done.status);
	if (cp.done.done)
		scsi_free_scsi_task(cp.task);
	rcr(0, 0x00, 7, &r);
	itest_ok(r.status == 0 && r.data_len == 12 && r.data[4] == 0x02 && itest_get_be16(r.data + 5) == 0,
		 "COPY STATUS of list 7: 02h (ended with errors), 0 segments", "%s", itest_result_str(&r));
	itest_result_free(&r);
	itest_cmd(s, 0, lid4, 16, ITEST_IN, NULL, 0, 1024, &r);
	itest_ok(r.status == 0 && r.data_len == 32 && r.data[5] == 0x60 && r.data[12] == 0x40,
		 "RECEIVE COPY STATUS(LID4) of list 7: COPY OPERATION STATUS 60h, status 40h (TASK ABORTED)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
}

static uint8_t lock_b[16 * BS];

/* While the copy is held: a WRITE to other blocks of LUN 2 goes on. */
static void write_elsewhere(void)
{
	itest_ok(itest_write16(s2, 2, 3600, lock_b, 16, BS, false, "LUN 2: WRITE(16) of LBA 3600 (not the copy's) -> GOOD"),
		 "... a WRITE to other blocks of LUN 2 goes on while the copy is held", NULL);
}

/*
 * A copy between LUs holds the LBA locks of its blocks on both LUs
 * (sched/lba_lock.c, locks elsewhere), each case with a fault rule holding
 * the first command once started:
 *   - an EXTENDED COPY sent to LUN 0 from LUN 0 to LUN 2: a WRITE(16) to
 *     its destination blocks on LUN 2 waits for it, one to other blocks of
 *     LUN 2 does not, and LUN 2 holds the WRITE's data (it came after);
 *   - a WRITE(16) to LUN 2 first: the copy waits, and its data wins;
 *   - a RESET WRITE POINTER of LUN 3's zone 6 first (an LBA lock and no
 *     buffer room): the copy into that zone waits, and the reset's end
 *     alone (no room comes free) starts it (sched/task_set.c);
 *   - two copies between LUN 0 and LUN 2 in opposite directions over the
 *     same blocks, sent together to each LU: both complete (each takes its
 *     locks on both LUs at once, never one while it waits for the other).
 */
static void test_locks_between_lus(struct itest_daemon *d)
{
	static uint8_t p[108], a[16 * BS], p2[108];
	struct iscsi_data copy = { .size = 108, .data = p }, write = { .size = sizeof(lock_b), .data = lock_b },
			  copy2 = { .size = 108, .data = p2 };
	struct async_cmd cp = { .sess = s, .lun = 0, .cdb = { 0x83, 0x00 }, .data = &copy },
			 wr = { .sess = s2, .lun = 2, .cdb = { 0x8a }, .data = &write },
			 rs = { .sess = s2, .lun = 3, .cdb = { 0x94, 0x04 } },
			 cp2 = { .sess = s2, .lun = 2, .cdb = { 0x83, 0x00 }, .data = &copy2 };

	itest_pattern(a, sizeof(a), 81);
	itest_pattern(lock_b, sizeof(lock_b), 82);
	if (!itest_write16(s, 0, 7300, a, 16, BS, false, "LUN 0: WRITE(16) of LBA 7300 (16 blocks)"))
		return;
	itest_put_be32(cp.cdb + 10, 108);
	itest_put_be32(cp2.cdb + 10, 108);
	two_lu_list(p, 0, 2, BS, 16, 7300, 3500);
	itest_put_be64(wr.cdb + 2, 3500);
	itest_put_be32(wr.cdb + 10, 16);
	if (held_then_waits(d, "fault add 0 hold --opcode 0x83 --count 1", &cp, &wr, write_elsewhere,
			    "EXTENDED COPY LUN 0 LBA 7300 -> LUN 2 LBA 3500 held: a WRITE(16) to LUN 2 LBA 3500 waits 0.7 s"))
		itest_ok(itest_blocks_are(s, 2, 3500, 16, BS, lock_b),
			 "LUN 2 LBA 3500.. hold the WRITE's data, written after the copy", "different");
	if (held_then_waits(d, "fault add 2 hold --opcode 0x8a --count 1", &wr, &cp, NULL,
			    "a WRITE(16) to LUN 2 LBA 3500 held: the copy LUN 0 -> LUN 2 LBA 3500 waits 0.7 s"))
		itest_ok(itest_blocks_are(s, 2, 3500, 16, BS, a),
			 "LUN 2 LBA 3500.. hold the copy's data, written after the WRITE", "different");
	two_lu_list(p, 0, 3, BS, 16, 7300, 6 * ZB);
	itest_put_be64(rs.cdb + 2, 6 * ZB);
	if (held_then_waits(d, "fault add 3 hold --opcode 0x94 --count 1", &rs, &cp, NULL,
			    "RESET WRITE POINTER of LUN 3's zone 6 held: the copy LUN 0 -> zone 6 waits 0.7 s"))
		itest_ok(zone_wp(3, 6 * ZB, NULL) == 6 * ZB + 16, "... zone 6's write pointer 16 blocks in", NULL);
	two_lu_list(p, 0, 2, BS, 2048, 8192, 4096);
	two_lu_list(p2, 2, 0, BS, 2048, 4096, 8192);
	if (!send_async(&cp) || !send_async(&cp2))
		return;
	for (uint64_t end = itest_now_ms() + 10000; itest_now_ms() < end && !(cp.done.done && cp2.done.done);)
		service_both(50, NULL);
	itest_ok(cp.done.done && cp.done.status == SCSI_STATUS_GOOD && cp2.done.done && cp2.done.status == SCSI_STATUS_GOOD,
		 "1 MiB LUN 0 -> LUN 2 sent to LUN 0 and the same blocks LUN 2 -> LUN 0 sent to LUN 2, together -> both GOOD",
		 "first %d/0x%x second %d/0x%x", cp.done.done, cp.done.status, cp2.done.done, cp2.done.status);
	if (cp.done.done)
		scsi_free_scsi_task(cp.task);
	if (cp2.done.done)
		scsi_free_scsi_task(cp2.task);
}

/* POPULATE TOKEN of LUN lun's blocks [lba, lba + n) as list 90h, then its token (RECEIVE ROD TOKEN INFORMATION). */
static bool token_of(int lun, uint64_t lba, uint32_t n, uint8_t token[512])
{
	uint8_t pt[16] = { 0x83, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x90, 0, 0, 0, 32 }, list[32] = { 0, 30 };
	uint8_t rrti[16] = { 0x84, 0x07, 0, 0, 0, 0x90, 0, 0, 0, 0, 0, 0, 0x04, 0 };
	struct itest_result r;
	bool ok;

	itest_put_be16(list + 14, 16);
	itest_put_be64(list + 16, lba);
	itest_put_be32(list + 24, n);
	if (!itest_expect_cmd(s, lun, "POPULATE TOKEN -> GOOD", pt, 16, ITEST_OUT, list, 32, 0, EXPECT_GOOD, NULL))
		return false;
	itest_cmd(s, lun, rrti, 16, ITEST_IN, NULL, 0, 1024, &r);
	ok = r.status == 0 && r.data_len >= 38 + 512;
	if (ok)
		memcpy(token, r.data + 38, 512);
	itest_result_free(&r);
	return itest_ok(ok, "... RECEIVE ROD TOKEN INFORMATION -> GOOD with the token", NULL);
}

/* WRITE USING TOKEN of token to LUN lun's blocks [lba, lba + n) as list 91h. */
static void write_token(int lun, const uint8_t *token, uint64_t lba, uint32_t n, const char *name, struct itest_expect e)
{
	uint8_t wut[16] = { 0x83, 0x11, 0, 0, 0, 0, 0, 0, 0, 0x91, 0, 0, 0x02, 0x28 }, list[552] = { 0x02, 0x26 };

	memcpy(list + 16, token, 512);
	itest_put_be16(list + 534, 16);
	itest_put_be64(list + 536, lba);
	itest_put_be32(list + 544, n);
	itest_expect_cmd(s, lun, name, wut, 16, ITEST_OUT, list, sizeof(list), 0, e, NULL);
}

/*
 * EXTENDED COPY and ROD tokens (copy/rod_token.c, rod_tokens_copied_to): a
 * copy out of a token's blocks leaves the token live (it reads them, its
 * lock covering them notwithstanding); a copy into them revokes it, on the
 * LU the copy writes, also when the command was sent to another LU.
 */
static void test_copies_and_tokens(void)
{
	static uint8_t a[16 * BS];
	uint8_t p[128], token[512], token2[512];
	uint32_t n;

	itest_pattern(a, sizeof(a), 91);
	if (!itest_write16(s, 0, 9000, a, 16, BS, false, "LUN 0: WRITE(16) of LBA 9000 (16 blocks)") ||
	    !token_of(0, 9000, 16, token))
		return;
	n = simple_list(p, 0, 1, 0x2, 16, 9000, 9100);
	xcopy(s, 0, "EXTENDED COPY out of the token's blocks (9000 -> 9100) -> GOOD", p, n, n, EXPECT_GOOD, NULL);
	write_token(0, token, 9200, 16, "WRITE USING TOKEN of it afterwards -> GOOD: the token is live", EXPECT_GOOD);
	itest_ok(itest_blocks_are(s, 0, 9200, 16, BS, a), "... LBA 9200.. hold the token's blocks", "different");
	n = simple_list(p, 0, 1, 0x2, 4, 7000, 9004);
	xcopy(s, 0, "EXTENDED COPY into 4 of the token's blocks (7000 -> 9004) -> GOOD", p, n, n, EXPECT_GOOD, NULL);
	write_token(0, token, 9300, 16, "WRITE USING TOKEN of it afterwards -> 05/23/06 TOKEN REVOKED",
		    EXPECT_SENSE(5, 0x23, 0x06));
	if (!itest_write16(s, 2, 10000, a, 16, BS, false, "LUN 2: WRITE(16) of LBA 10000 (16 blocks)") ||
	    !token_of(2, 10000, 16, token2))
		return;
	n = two_lu_list(p, 0, 2, BS, 4, 7000, 10008);
	xcopy(s, 0, "EXTENDED COPY sent to LUN 0 into LUN 2's token blocks (LUN 0 7000 -> LUN 2 10008) -> GOOD", p, n, n,
	      EXPECT_GOOD, NULL);
	write_token(2, token2, 10100, 16, "LUN 2: WRITE USING TOKEN of LUN 2's token afterwards -> 05/23/06 TOKEN REVOKED",
		    EXPECT_SENSE(5, 0x23, 0x06));
}

/*
 * A copy that fails is held too when its LIST ID USAGE asks (00b), with its
 * sense data (receive_copy_results.c): COPY STATUS says COPY MANAGER STATUS
 * 02h (completed with errors) and how far it got, RECEIVE COPY STATUS(LID4)
 * the same with the sense, FAILED SEGMENT DETAILS (84h/04h) the status and
 * sense, and then the list is gone (05/24/00).  Once for a list refused by
 * a segment check (0A/00/00), once for a PI guard that fails on a worker in
 * the second segment (0A/10/01, the first segment copied).
 */
static void test_failed_lists(struct itest_daemon *d)
{
	uint8_t p[128];
	struct itest_result r;
	char out[512];

	simple_list(p, 0, 5, 0x0, 16, LU0_BLOCKS - 8, 100);
	xcopy(s, 0, "list 5, LIST ID USAGE 00b, a source past the capacity -> 0A/00/00", p, 76, 76,
	      EXPECT_SENSE(0xa, 0x00, 0x00), NULL);
	rcr(0, 0x00, 5, &r);
	itest_ok(r.status == 0 && r.data_len == 12 && r.data[4] == 0x02 && itest_get_be16(r.data + 5) == 0 &&
			 itest_get_be32(r.data + 8) == 0,
		 "COPY STATUS of list 5: COPY MANAGER STATUS 02h (completed with errors), 0 segments, 0 bytes", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	{
		uint8_t lid4[16] = { 0x84, 0x05, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0x04, 0 };

		itest_cmd(s, 0, lid4, 16, ITEST_IN, NULL, 0, 1024, &r);
		itest_ok(r.status == 0 && r.data_len >= 32 + 18 && r.data[4] == 0x00 && r.data[5] == 0x02 &&
				 r.data[12] == 0x02 && r.data[14] >= 18 && (r.data[32 + 2] & 0x0f) == 0x0a,
			 "RECEIVE COPY STATUS(LID4) of list 5: EXTENDED COPY(LID1), COPY OPERATION STATUS 02h, "
			 "CHECK CONDITION, its sense (COPY ABORTED)", "%s", itest_result_str(&r));
		itest_result_free(&r);
	}
	rcr(0, 0x04, 5, &r);
	itest_ok(r.status == 0 && r.data_len >= 60 + 18 && itest_get_be32(r.data) == (uint32_t)r.data_len - 4 &&
			 r.data[56] == 0x02 && itest_get_be16(r.data + 58) == (uint32_t)r.data_len - 60 &&
			 (r.data[60 + 2] & 0x0f) == 0x0a && r.data[60 + 12] == 0x00 && r.data[60 + 13] == 0x00,
		 "FAILED SEGMENT DETAILS of list 5: COPY COMMAND STATUS 02h, the sense 0A/00/00", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	rcr(0, 0x04, 5, &r);
	itest_ok(r.status == 2 && r.sense.key == 5 && r.sense.asc == 0x24,
		 "... read once: FAILED SEGMENT DETAILS of list 5 again -> 05/24/00 (the list released)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	if (!itest_ok(itest_ctl(d, out, sizeof(out), "fault add 2 corrupt-pi --lba 1005 --pi-field guard") == 0,
		      "sbcemuctl fault add 2 corrupt-pi --lba 1005 --pi-field guard -> exit 0", "%s", out))
		return;
	header(p, 6, 0x0, 32, 56);
	cscd(p + 16, 2, BS);
	segment(p + 48, 0, 0, 16, 40, 2200);
	segment(p + 76, 0, 0, 16, 1000, 2300);
	xcopy(s, 2, "PI LU, list 6 (00b): a second segment over a bad guard (LBA 1005) -> 0A/10/01", p, 104, 104,
	      EXPECT_SENSE(0xa, 0x10, 0x01), NULL);
	rcr(2, 0x00, 6, &r);
	itest_ok(r.status == 0 && r.data_len == 12 && r.data[4] == 0x02 && itest_get_be16(r.data + 5) == 1 &&
			 itest_get_be32(r.data + 8) == 16 * BS,
		 "COPY STATUS of list 6: 02h, 1 segment processed, 8192 bytes", "%s", itest_result_str(&r));
	itest_result_free(&r);
	rcr(2, 0x04, 6, &r);
	itest_ok(r.status == 0 && r.data_len >= 60 + 18 && r.data[56] == 0x02 && (r.data[60 + 2] & 0x0f) == 0x0a &&
			 r.data[60 + 12] == 0x10 && r.data[60 + 13] == 0x01 && itest_get_be32(r.data + 60 + 3) == 1005,
		 "FAILED SEGMENT DETAILS of list 6: the sense 0A/10/01, INFORMATION 1005", "%s", itest_result_str(&r));
	itest_result_free(&r);
	itest_ctl(d, out, sizeof(out), "fault remove all");
}

/*
 * kill -9 in the middle of a copy (LUN 5): 16 segments of 65535 blocks
 * (512 MiB) from a 32 MiB source to never-written blocks, sent by a child
 * process; the daemon is killed once the copy is in the task set.  After the restart every
 * destination block is either the source's block or still zeros (docs/copy.md).
 */
#define KILL_SRC_BLOCKS 65535u
#define KILL_DST 131072u
#define KILL_SEGMENTS 16u

static void test_kill_in_the_middle(struct itest_daemon *d)
{
	static uint8_t p[16 + 32 + KILL_SEGMENTS * 28];
	uint32_t chunk = 2048, len = (uint32_t)sizeof(p);
	uint8_t *src = malloc((size_t)KILL_SRC_BLOCKS * BS), *got = malloc((size_t)chunk * BS);
	uint64_t old = 0, new = 0, bad = 0;
	pid_t child;

	if (!src || !got)
		abort();
	itest_pattern(src, (size_t)KILL_SRC_BLOCKS * BS, 99);
	for (uint32_t lba = 0; lba < KILL_SRC_BLOCKS; lba += chunk) {
		uint32_t n = KILL_SRC_BLOCKS - lba < chunk ? KILL_SRC_BLOCKS - lba : chunk;

		itest_write16(s, 5, lba, src + (size_t)lba * BS, n, BS, false, "WRITE(16) the 32 MiB source");
	}
	header(p, 9, 0x2, 32, KILL_SEGMENTS * 28);
	cscd(p + 16, 5, BS);
	for (uint32_t i = 0; i < KILL_SEGMENTS; i++)
		segment(p + 48 + 28 * i, 0, 0, (uint16_t)KILL_SRC_BLOCKS, 0, KILL_DST + (uint64_t)i * KILL_SRC_BLOCKS);
	fflush(stdout);
	child = fork();
	if (child == 0) {
		struct iscsi_context *c = itest_session(d, ITEST_INITIATOR_2, 5);
		uint8_t cdb[16] = { 0x83, 0x00 };
		struct itest_result r;

		if (c) {
			itest_clear_ua(c, 5);
			itest_put_be32(cdb + 10, len);
			itest_cmd(c, 5, cdb, 16, ITEST_OUT, p, len, 0, &r);
		}
		_exit(0);
	}
	/* Killed as soon as the copy is in LUN 5's task set (sbcemuctl lus: "queued"), so in its first pieces. */
	for (int i = 0; i < 2000; i++) {
		static char out[65536];
		const char *q;

		if (itest_ctl(d, out, sizeof(out), "--json lus") == 0 && (q = strstr(out, "lun5.img")) &&
		    (q = strstr(q, "\"queued\": ")) && atoi(q + 10) > 0)
			break;
		usleep(1000);
	}
	itest_close(s);
	itest_close(s2);
	itest_daemon_stop(d, SIGKILL);
	waitpid(child, NULL, 0);
	if (!itest_ok(itest_daemon_start(d) == 0, "sbcemud starts again after kill -9 in the middle of a copy", "see %s",
		      d->log))
		goto out;
	s = itest_session(d, ITEST_INITIATOR_1, 0);
	s2 = itest_session(d, ITEST_INITIATOR_2, 0);
	if (!s || !s2)
		goto out;
	for (int lun = 0; lun < 7; lun++) {
		itest_clear_ua(s, lun);
		itest_clear_ua(s2, lun);
	}
	for (uint32_t i = 0; i < KILL_SEGMENTS; i++)
		for (uint32_t b = 0; b < KILL_SRC_BLOCKS; b += chunk) {
			uint32_t n = KILL_SRC_BLOCKS - b < chunk ? KILL_SRC_BLOCKS - b : chunk;

			if (!itest_read16(s, 5, KILL_DST + (uint64_t)i * KILL_SRC_BLOCKS + b, got, n, BS,
					  "READ(16) the destination"))
				goto out;
			for (uint32_t k = 0; k < n; k++) {
				const uint8_t *blk = got + (size_t)k * BS;
				static const uint8_t zeros[BS];

				if (!memcmp(blk, src + (size_t)(b + k) * BS, BS))
					new++;
				else if (!memcmp(blk, zeros, BS))
					old++;
				else
					bad++;
			}
		}
	itest_note("after kill -9: %llu destination blocks new, %llu old (of %u)", (unsigned long long)new,
		   (unsigned long long)old, KILL_SEGMENTS * KILL_SRC_BLOCKS);
	itest_ok(new < (uint64_t)KILL_SEGMENTS * KILL_SRC_BLOCKS, "the kill came before the copy's end", "%llu new",
		 (unsigned long long)new);
	itest_ok(bad == 0 && new + old == (uint64_t)KILL_SEGMENTS * KILL_SRC_BLOCKS,
		 "after kill -9 in the middle of a copy every destination block is the source's or its old zeros",
		 "%llu blocks neither", (unsigned long long)bad);
out:
	free(src);
	free(got);
}

/* REPORT SUPPORTED OPERATION CODES of 83h/00h: the CDB usage data. */
/* Runs the event loops of both sessions for up to ms, or until *stop. */
static void service_both(int ms, const bool *stop)
{
	uint64_t end = itest_now_ms() + (uint64_t)ms;

	while (itest_now_ms() < end && !(stop && *stop)) {
		itest_service(s, 10, stop);
		itest_service(s2, 10, stop);
	}
}

/*
 * A copy's work buffer counts against the buffer budgets (OP_PIECE_BUFFER,
 * sched/resources.c): with max_buffer_bytes 2 MiB and a READ(16) of 1 MiB
 * held by a fault rule, an EXTENDED COPY (1 MiB of pieces beside its
 * parameter list) waits unstarted in its task set until the READ ends.
 */
static void test_buffer_budget(struct itest_daemon *d)
{
	static uint8_t p[76];
	uint8_t cdb[16] = { 0x83, 0x00 };
	struct iscsi_data data = { .size = 76, .data = p };
	struct itest_async rd = { 0 }, cp = { 0 };
	struct scsi_task *rtask, *ctask;
	char out[1024];

	if (!itest_ok(itest_ctl(d, out, sizeof(out), "fault add 0 hold --opcode 0x88 --count 1") == 0,
		      "sbcemuctl fault add 0 hold --opcode 0x88 --count 1 -> exit 0", "%s", out))
		return;
	rtask = iscsi_read16_task(s, 0, 0, 2048 * BS, BS, 0, 0, 0, 0, 0, itest_async_cmd_cb, &rd);
	service_both(300, &rd.done);
	itest_ok(rtask && !rd.done, "a READ(16) of 1 MiB, held by the rule, keeps its buffer room", "done %d", rd.done);
	simple_list(p, 0, 1, 0x2, 64, 4000, 8000); /* blocks the READ does not lock */
	itest_put_be32(cdb + 10, 76);
	ctask = scsi_create_task(16, cdb, SCSI_XFER_WRITE, 76);
	if (!ctask || iscsi_scsi_command_async(s2, 0, ctask, itest_async_cmd_cb, &data, &cp) != 0) {
		itest_ok(false, "EXTENDED COPY sent asynchronously", "%s", iscsi_get_error(s2));
		itest_ctl(d, out, sizeof(out), "fault remove all");
		return;
	}
	service_both(700, &cp.done);
	itest_ok(!cp.done, "max_buffer_bytes 2 MiB, 1 MiB held: EXTENDED COPY (1 MiB of pieces) waits, unanswered for "
		 "0.7 s", "answered with status 0x%x", cp.status);
	itest_ctl(d, out, sizeof(out), "fault remove all");
	service_both(5000, &cp.done);
	service_both(5000, &rd.done);
	itest_ok(rd.done && rd.status == SCSI_STATUS_GOOD && cp.done && cp.status == SCSI_STATUS_GOOD,
		 "the rule removed: the READ(16) completes, then the EXTENDED COPY -> GOOD", "read %d/0x%x copy %d/0x%x",
		 rd.done, rd.status, cp.done, cp.status);
	if (rtask && rd.done)
		scsi_free_scsi_task(rtask);
	if (cp.done)
		scsi_free_scsi_task(ctask);
}

static void test_rsoc(void)
{
	uint8_t cdb[12] = { 0xa3, 0x0c, 0x02, 0x83, 0x00, 0x00, 0, 0, 0, 64 };
	static const uint8_t usage[16] = { 0x83, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0 };
	struct itest_result r;

	itest_cmd(s, 0, cdb, 12, ITEST_IN, NULL, 0, 64, &r);
	itest_ok(r.status == 0 && r.data_len >= 20 && (r.data[1] & 7) == 3 && memcmp(r.data + 4, usage, 16) == 0,
		 "REPORT SUPPORTED OPERATION CODES 83h/00h: supported, usage data (PARAMETER LIST LENGTH b10-13)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
}

int main(int argc, char **argv)
{
	struct itest_daemon d;

	itest_init(argc, argv, "test_xcopy: EXTENDED COPY (LID1) and RECEIVE COPY RESULTS");
	itest_daemon_init(&d, "xcopy");
	{
		char path[700];
		FILE *f;

		/* The write-protected LU's file must exist: a read-only one is never created. */
		snprintf(path, sizeof(path), "%s/lun4.img", d.dir);
		f = fopen(path, "w");
		if (!f || ftruncate(fileno(f), 16 << 20) != 0 || itest_daemon_write_config(&d, config) != 0 ||
		    itest_daemon_start(&d) != 0) {
			printf("Bail out! cannot start sbcemud (see %s)\n", d.log);
			return 1;
		}
		fclose(f);
	}
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	s2 = itest_session(&d, ITEST_INITIATOR_2, 0);
	if (!s || !s2)
		return itest_finish();
	for (int lun = 0; lun < 7; lun++) {
		itest_clear_ua(s, lun);
		itest_clear_ua(s2, lun);
	}
	if (fetch_naa(0) && fetch_naa(1) && fetch_naa(2) && fetch_naa(3) && fetch_naa(4) && fetch_naa(5) &&
	    fetch_naa(6)) {
		test_identification();
		test_operating_parameters();
		test_copies();
		test_checks();
		test_lid4();
		test_pi(&d);
		test_failed_lists(&d);
		test_zoned();
		test_between_lus();
		test_copies_and_tokens();
		test_rsoc();
		test_buffer_budget(&d);
		test_locks_between_lus(&d);
		test_abort_held(&d);
		test_kill_in_the_middle(&d);
	}
	if (s)
		itest_close(s);
	if (s2)
		itest_close(s2);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
