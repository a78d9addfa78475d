/*
 * Token-based copy over iSCSI (SBC-4 POPULATE TOKEN 83h/10h, WRITE USING
 * TOKEN 83h/11h, RECEIVE ROD TOKEN INFORMATION 84h/07h; the Third-party
 * Copy VPD page's token descriptors; protocol/scsi/copy/rod_token.c): a
 * token made over two ranges and written elsewhere, with and without
 * OFFSET INTO ROD, read back; the held results; a token revoked by a write
 * to its blocks (05/23/06), deleted by DEL_TKN (05/23/09), expired
 * (05/23/07), unknown (05/23/04, also on another LU); the block device
 * zero ROD token; every parameter-list check with its sense and nothing
 * written; the same on an LU with protection information (tuples retagged,
 * READ with RDPROTECT 001b passes); on a zoned LU (copy/copy_piece.c),
 * a token of a conventional zone written at a write pointer, the pointer
 * advanced, and one written elsewhere refused as a WRITE would be, as COPY
 * ABORTED.
 *
 * LUN 0: conventional, 512-byte blocks, 64 MiB.  LUN 1: protection
 * information type 1, 16 MiB.  LUN 2: zbc-hm, zones of 8192 blocks, zone 0
 * conventional.  LUN 3: conventional, 16 MiB.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

#define BS 512u
#define TOKEN_LEN 512

static const char config[] =
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\nsize = 64M\nlogical_block_size = 512\n"
	"[lun \"" ITEST_TARGET "\" 1]\n"
	"path = @DIR@/lun1.img\nsize = 16M\nlogical_block_size = 512\nprotection_type = 1\n"
	"[lun \"" ITEST_TARGET "\" 2]\n"
	"kind = zbc-hm\npath = @DIR@/lun2.img\nsize = 64M\nlogical_block_size = 512\nzone_size = 4M\n"
	"conventional_zones = 1\n"
	"[lun \"" ITEST_TARGET "\" 3]\n"
	"path = @DIR@/lun3.img\nsize = 16M\nlogical_block_size = 512\n"
	"[lun \"" ITEST_TARGET "\" 4]\n"
	"path = @DIR@/lun4.img\nsize = 16M\nlogical_block_size = 4096\n";

static struct iscsi_context *s;

struct range {
	uint64_t lba;
	uint32_t n;
};

/* POPULATE TOKEN's parameter list: flags b2, INACTIVITY TIMEOUT, ROD TYPE, the ranges; returns its length. */
static uint32_t pt_list(uint8_t *p, uint8_t flags, uint32_t timeout, uint32_t rod_type, const struct range *r,
			unsigned n)
{
	memset(p, 0, 16 + 16 * n);
	itest_put_be16(p, (uint16_t)(14 + 16 * n));
	p[2] = flags;
	itest_put_be32(p + 4, timeout);
	itest_put_be32(p + 8, rod_type);
	itest_put_be16(p + 14, (uint16_t)(16 * n));
	for (unsigned i = 0; i < n; i++) {
		itest_put_be64(p + 16 + 16 * i, r[i].lba);
		itest_put_be32(p + 24 + 16 * i, r[i].n);
	}
	return 16 + 16 * n;
}

/* WRITE USING TOKEN's: flags b2 (DEL_TKN 02h), OFFSET INTO ROD, the token, the ranges; returns its length. */
static uint32_t wut_list(uint8_t *p, uint8_t flags, uint64_t offset, const uint8_t *token, const struct range *r,
			 unsigned n)
{
	memset(p, 0, 536 + 16 * n);
	itest_put_be16(p, (uint16_t)(534 + 16 * n));
	p[2] = flags;
	itest_put_be64(p + 8, offset);
	memcpy(p + 16, token, TOKEN_LEN);
	itest_put_be16(p + 534, (uint16_t)(16 * n));
	for (unsigned i = 0; i < n; i++) {
		itest_put_be64(p + 536 + 16 * i, r[i].lba);
		itest_put_be32(p + 544 + 16 * i, r[i].n);
	}
	return 536 + 16 * n;
}

static bool tpc_out(int lun, uint8_t sa, uint32_t list_id, const char *name, const uint8_t *p, uint32_t len,
		    uint32_t pll, struct itest_expect e, struct itest_result *r)
{
	uint8_t cdb[16] = { 0x83, sa };

	itest_put_be32(cdb + 6, list_id);
	itest_put_be32(cdb + 10, pll);
	return itest_expect_cmd(s, lun, name, cdb, 16, len ? ITEST_OUT : ITEST_NONE, p, len, 0, e, r);
}

/* RECEIVE ROD TOKEN INFORMATION of list_id into r (the caller frees it). */
static void rrti(int lun, uint32_t list_id, struct itest_result *r)
{
	uint8_t cdb[16] = { 0x84, 0x07 };

	itest_put_be32(cdb + 2, list_id);
	itest_put_be32(cdb + 10, 1024);
	itest_cmd(s, lun, cdb, 16, ITEST_IN, NULL, 0, 1024, r);
}

/* POPULATE TOKEN of the ranges as list list_id, then its token through RECEIVE ROD TOKEN INFORMATION. */
static bool make_token(int lun, uint32_t list_id, uint32_t timeout, const struct range *rg, unsigned n,
		       uint8_t token[TOKEN_LEN])
{
	uint8_t p[16 + 16 * 8];
	uint32_t len = pt_list(p, 0, timeout, 0, rg, n);
	struct itest_result r;
	bool ok;

	if (!tpc_out(lun, 0x10, list_id, "POPULATE TOKEN -> GOOD", p, len, len, EXPECT_GOOD, NULL))
		return false;
	rrti(lun, list_id, &r);
	ok = r.status == 0 && r.data_len >= 32 + 4 + 2 + TOKEN_LEN && r.data[13] == 0;
	if (ok)
		memcpy(token, r.data + 32 + 6, TOKEN_LEN);
	itest_result_free(&r);
	return itest_ok(ok, "RECEIVE ROD TOKEN INFORMATION -> GOOD with the token", NULL);
}

static bool wut(int lun, uint32_t list_id, const char *name, uint8_t flags, uint64_t offset, const uint8_t *token,
		const struct range *rg, unsigned n, struct itest_expect e, struct itest_result *r)
{
	uint8_t p[536 + 16 * 8];
	uint32_t len = wut_list(p, flags, offset, token, rg, n);

	return tpc_out(lun, 0x11, list_id, name, p, len, len, e, r);
}

static void test_vpd(void)
{
	uint8_t cdb[6] = { 0x12, 0x01, 0x8f, 0x02, 0x00, 0 };
	struct itest_result r;
	const uint8_t *b;
	bool ok;

	itest_cmd(s, 0, cdb, 6, ITEST_IN, NULL, 0, 512, &r);
	/* After the Supported Commands (20 bytes) and Supported Descriptors (8) descriptors: the token ones. */
	b = r.data + 4 + 28;
	ok = r.status == 0 && r.data_len == 300 && itest_get_be16(b) == 0x0000 && itest_get_be16(b + 2) == 32 &&
	     itest_get_be16(b + 10) == 64 && itest_get_be32(b + 12) == 600 && itest_get_be32(b + 16) == 60;
	itest_ok(ok, "VPD 8Fh Block Device ROD Limits (0000h): 64 ranges, inactivity timeout 600 s at most, 60 s by "
		 "default", "%s", itest_result_str(&r));
	b += 36;
	ok = r.status == 0 && itest_get_be16(b) == 0x0106 && itest_get_be16(b + 2) == 92 &&
	     itest_get_be32(b + 24) == 600 && itest_get_be16(b + 46) == 48;
	itest_ok(ok, "VPD 8Fh ROD Token Features (0106h): maximum inactivity timeout 600 s, a block device descriptor",
		 NULL);
	b += 96;
	ok = r.status == 0 && itest_get_be16(b) == 0x0108 && itest_get_be16(b + 6) == 128 &&
	     itest_get_be32(b + 8) == 0x00800001 && b[12] == 0x03 && itest_get_be32(b + 72) == 0xffff0001 &&
	     b[76] == 0x02;
	itest_ok(ok, "VPD 8Fh Supported ROD Types (0108h): point in time change vulnerable in and out, the block "
		 "device zero ROD token in", NULL);
	itest_result_free(&r);
}

static void test_copies(void)
{
	static uint8_t a[16 * BS], b[8 * BS], both[24 * BS], zeros[24 * BS];
	static const struct range src[2] = { { 100, 16 }, { 300, 8 } };
	uint8_t token[TOKEN_LEN], p[16 + 16 * 2];
	struct itest_result r;
	bool ok;

	itest_pattern(a, sizeof(a), 71);
	itest_pattern(b, sizeof(b), 72);
	memcpy(both, a, sizeof(a));
	memcpy(both + sizeof(a), b, sizeof(b));
	if (!itest_write16(s, 0, 100, a, 16, BS, false, "WRITE(16) of the first source range") ||
	    !itest_write16(s, 0, 300, b, 8, BS, false, "WRITE(16) of the second source range"))
		return;
	if (!tpc_out(0, 0x10, 1, "POPULATE TOKEN of LBA 100 (16 blocks) and 300 (8), list 1 -> GOOD", p,
		     pt_list(p, 0, 0, 0, src, 2), 48, EXPECT_GOOD, NULL))
		return;
	rrti(0, 1, &r);
	ok = r.status == 0 && r.data_len == 32 + 4 + 2 + TOKEN_LEN && itest_get_be32(r.data) == (uint32_t)r.data_len - 4 &&
	     (r.data[4] & 0x1f) == 0x10 && r.data[5] == 0x01 && r.data[13] == 0 && r.data[15] == 0xf1 &&
	     itest_get_be64(r.data + 16) == 24 && itest_get_be32(r.data + 32) == 514;
	itest_ok(ok, "RECEIVE ROD TOKEN INFORMATION of list 1: RESPONSE TO SERVICE ACTION 10h, COPY OPERATION STATUS "
		 "01h, TRANSFER COUNT 24 blocks (units F1h), ROD TOKEN DESCRIPTORS LENGTH 514", "%s",
		 itest_result_str(&r));
	if (!ok) {
		itest_result_free(&r);
		return;
	}
	memcpy(token, r.data + 38, TOKEN_LEN);
	itest_result_free(&r);
	itest_ok(itest_get_be32(token) == 0x00800001 && itest_get_be16(token + 6) == 0x01f8 && token[16] == 0xe4 &&
		 itest_get_be64(token + 56) == 24 * BS,
		 "the token: ROD TYPE 00800001h, ROD TOKEN LENGTH 01F8h, the creator as an E4h descriptor, 12288 bytes "
		 "represented", NULL);
	rrti(0, 1, &r);
	itest_ok(r.status == 2 && r.sense.key == 5 && r.sense.asc == 0x24,
		 "RECEIVE ROD TOKEN INFORMATION of list 1 again -> 05/24/00 (the result is released once read)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);

	wut(0, 2, "WRITE USING TOKEN to LBA 1000 (24 blocks), list 2 -> GOOD", 0, 0, token,
	    (const struct range[]){ { 1000, 24 } }, 1, EXPECT_GOOD, NULL);
	itest_ok(itest_blocks_are(s, 0, 1000, 24, BS, both), "LBA 1000..1023 hold the two source ranges, in order",
		 "different");
	rrti(0, 2, &r);
	itest_ok(r.status == 0 && r.data_len == 36 && (r.data[4] & 0x1f) == 0x11 && r.data[5] == 0x01 &&
			 itest_get_be64(r.data + 16) == 24 && itest_get_be32(r.data + 32) == 0,
		 "RECEIVE ROD TOKEN INFORMATION of list 2: service action 11h, status 01h, 24 blocks, no token", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	wut(0, 3, "WRITE USING TOKEN, OFFSET INTO ROD 16, to LBA 2000 and 2100 (4 blocks each) -> GOOD", 0, 16, token,
	    (const struct range[]){ { 2000, 4 }, { 2100, 4 } }, 2, EXPECT_GOOD, NULL);
	itest_ok(itest_blocks_are(s, 0, 2000, 4, BS, b) && itest_blocks_are(s, 0, 2100, 4, BS, b + 4 * BS),
		 "they hold the token's blocks 16..23 (the second source range)", "different");
	wut(0, 4, "WRITE USING TOKEN of 25 blocks from a token of 24 -> 05/26/00", 0, 0, token,
	    (const struct range[]){ { 3000, 25 } }, 1, EXPECT_SENSE(5, 0x26, 0x00), &r);
	itest_expect_field_pointer("... field pointer on OFFSET INTO ROD (parameter byte 8)", &r, 0, 8, -1);
	itest_result_free(&r);
	memset(zeros, 0, sizeof(zeros));
	itest_ok(itest_blocks_are(s, 0, 3000, 24, BS, zeros), "... and nothing written there", "written");
	wut(0, 5, "WRITE USING TOKEN, OFFSET INTO ROD 24 (past the token) -> 05/26/00", 0, 24, token,
	    (const struct range[]){ { 3000, 1 } }, 1, EXPECT_SENSE(5, 0x26, 0x00), NULL);
	token[200] ^= 1;
	wut(0, 5, "a token with one bit changed -> 05/23/04 TOKEN UNKNOWN", 0, 0, token,
	    (const struct range[]){ { 3000, 24 } }, 1, EXPECT_SENSE(5, 0x23, 0x04), NULL);
	token[200] ^= 1;

	/* A write to one of its blocks revokes the token (point in time, change vulnerable). */
	itest_write16(s, 0, 305, b, 1, BS, false, "WRITE(16) of LBA 305, inside the token's second range");
	wut(0, 6, "WRITE USING TOKEN after a write to its blocks -> 05/23/06 TOKEN REVOKED", 0, 0, token,
	    (const struct range[]){ { 3000, 24 } }, 1, EXPECT_SENSE(5, 0x23, 0x06), NULL);
	itest_ok(itest_blocks_are(s, 0, 3000, 24, BS, zeros), "... and nothing written", "written");
	rrti(0, 6, &r);
	itest_ok(r.status == 0 && r.data[5] == 0x02 && r.data[13] >= 14 && (r.data[32 + 2] & 0x0f) == 5 &&
			 r.data[32 + 12] == 0x23 && r.data[32 + 13] == 0x06,
		 "RECEIVE ROD TOKEN INFORMATION of list 6: status 02h (completed with errors) with the sense 05/23/06",
		 "%s", itest_result_str(&r));
	itest_result_free(&r);

	/* DEL_TKN, expiry. */
	if (make_token(0, 7, 0, src, 1, token)) {
		wut(0, 8, "WRITE USING TOKEN with DEL_TKN -> GOOD", 0x02, 0, token, (const struct range[]){ { 4000, 16 } },
		    1, EXPECT_GOOD, NULL);
		itest_ok(itest_blocks_are(s, 0, 4000, 16, BS, a), "it wrote the token's blocks", "different");
		wut(0, 9, "the deleted token again -> 05/23/09 TOKEN DELETED", 0, 0, token,
		    (const struct range[]){ { 4000, 16 } }, 1, EXPECT_SENSE(5, 0x23, 0x09), NULL);
	}
	if (make_token(0, 10, 1, src, 1, token)) {
		usleep(2200 * 1000);
		wut(0, 11, "a token with INACTIVITY TIMEOUT 1 s, 2.2 s later -> 05/23/07 TOKEN EXPIRED", 0, 0, token,
		    (const struct range[]){ { 4000, 16 } }, 1, EXPECT_SENSE(5, 0x23, 0x07), NULL);
	}

	/* The block device zero ROD token. */
	memset(token, 0, sizeof(token));
	itest_put_be32(token, 0xffff0001);
	itest_put_be16(token + 6, 0x01f8);
	wut(0, 12, "WRITE USING TOKEN of the block device zero ROD token (FFFF0001h) over LBA 1000 (24) -> GOOD", 0, 0,
	    token, (const struct range[]){ { 1000, 24 } }, 1, EXPECT_GOOD, NULL);
	itest_ok(itest_blocks_are(s, 0, 1000, 24, BS, zeros), "LBA 1000..1023 read zeros", "not zeros");
}

static void test_checks(void)
{
	uint8_t p[16 + 16 * 70];
	struct itest_result r;
	uint32_t len;

	len = pt_list(p, 0, 0, 0, (const struct range[]){ { 0, 8 } }, 1);
	tpc_out(0, 0x10, 20, "POPULATE TOKEN with PARAMETER LIST LENGTH 0 -> 05/24/00", NULL, 0, 0,
		EXPECT_SENSE(5, 0x24, 0x00), &r);
	itest_expect_field_pointer("... field pointer on PARAMETER LIST LENGTH (CDB byte 10)", &r, 1, 10, -1);
	itest_result_free(&r);
	{
		struct range many[65];

		for (unsigned i = 0; i < 65; i++)
			many[i] = (struct range){ i * 10u, 1 };
		len = pt_list(p, 0, 0, 0, many, 65);
		tpc_out(0, 0x10, 20, "POPULATE TOKEN of 65 ranges (64 at most: VPD 8Fh) -> 05/24/00", p, len, len,
			EXPECT_SENSE(5, 0x24, 0x00), NULL);
	}
	len = pt_list(p, 0, 0, 0, (const struct range[]){ { 0, 8 } }, 1);
	itest_put_be16(p + 14, 15);
	tpc_out(0, 0x10, 20, "BLOCK DEVICE RANGE DESCRIPTOR LENGTH 15 -> 05/26/00", p, len, len,
		EXPECT_SENSE(5, 0x26, 0x00), &r);
	itest_expect_field_pointer("... field pointer on parameter byte 14", &r, 0, 14, -1);
	itest_result_free(&r);
	len = pt_list(p, 0, 601, 0, (const struct range[]){ { 0, 8 } }, 1);
	tpc_out(0, 0x10, 20, "INACTIVITY TIMEOUT 601 s (600 at most) -> 05/26/00", p, len, len,
		EXPECT_SENSE(5, 0x26, 0x00), &r);
	itest_expect_field_pointer("... field pointer on INACTIVITY TIMEOUT (parameter byte 4)", &r, 0, 4, -1);
	itest_result_free(&r);
	len = pt_list(p, 0x02, 0, 0xffff0001, (const struct range[]){ { 0, 8 } }, 1);
	tpc_out(0, 0x10, 20, "RTV = 1 asking for the zero ROD token type (only accepted in) -> 05/26/00", p, len, len,
		EXPECT_SENSE(5, 0x26, 0x00), &r);
	itest_expect_field_pointer("... field pointer on ROD TYPE (parameter byte 8)", &r, 0, 8, -1);
	itest_result_free(&r);
	len = pt_list(p, 0x02, 0, 0x00800001, (const struct range[]){ { 0, 8 } }, 1);
	tpc_out(0, 0x10, 20, "RTV = 1 with ROD TYPE 00800001h -> GOOD", p, len, len, EXPECT_GOOD, NULL);
	len = pt_list(p, 0, 0, 0, (const struct range[]){ { 131072 - 4, 8 } }, 1);
	tpc_out(0, 0x10, 20, "a range past the capacity -> 05/21/00", p, len, len, EXPECT_SENSE(5, 0x21, 0x00), NULL);
	len = pt_list(p, 0, 0, 0, (const struct range[]){ { 0, 8 }, { 4, 8 } }, 2);
	tpc_out(0, 0x10, 20, "overlapping ranges -> 05/26/00", p, len, len, EXPECT_SENSE(5, 0x26, 0x00), NULL);
	{
		uint8_t w[536 + 16], token[TOKEN_LEN] = { 0 };

		len = wut_list(w, 0, 0, token, (const struct range[]){ { 0, 8 } }, 1);
		tpc_out(0, 0x11, 21, "WRITE USING TOKEN shorter than its header and a range -> 05/24/00", w, 540, 540,
			EXPECT_SENSE(5, 0x24, 0x00), NULL);
		itest_put_be16(w, 100);
		tpc_out(0, 0x11, 21, "WRITE USING TOKEN DATA LENGTH too short -> 05/26/00", w, len, len,
			EXPECT_SENSE(5, 0x26, 0x00), &r);
		itest_expect_field_pointer("... field pointer on parameter byte 0", &r, 0, 0, -1);
		itest_result_free(&r);
	}
}

/*
 * LUN 2, zbc-hm (zones of 8192 blocks, zone 0 conventional): a token of
 * conventional blocks written at the write pointer of a sequential write
 * required zone, which moves as a WRITE's would; written anywhere else, the
 * WRITE's UNALIGNED WRITE COMMAND as COPY ABORTED (0A/21/04), the pointer
 * where it was; the block device zero token into a zone.
 */
static void test_zoned(void)
{
	static uint8_t a[16 * BS], zeros[16 * BS];
	uint8_t token[TOKEN_LEN], inq[6] = { 0x12, 0x00, 0x00, 0x00, 96, 0 };
	uint8_t rz[16] = { 0x95, 0x00 }; /* REPORT ZONES */
	struct itest_result r;

	itest_cmd(s, 2, inq, 6, ITEST_IN, NULL, 0, 96, &r);
	itest_ok(r.status == 0 && (r.data[5] & 0x08), "INQUIRY of a zbc-hm LU: 3PC = 1", "%s", itest_result_str(&r));
	itest_result_free(&r);
	itest_pattern(a, sizeof(a), 91);
	if (!itest_write16(s, 2, 100, a, 16, BS, false, "zbc-hm LU: WRITE(16) of LBA 100 (conventional zone 0)") ||
	    !make_token(2, 40, 0, (const struct range[]){ { 100, 16 } }, 1, token))
		return;
	wut(2, 41, "zbc-hm LU: WRITE USING TOKEN to LBA 8192, the write pointer of zone 1 -> GOOD", 0, 0, token,
	    (const struct range[]){ { 8192, 16 } }, 1, EXPECT_GOOD, NULL);
	itest_ok(itest_blocks_are(s, 2, 8192, 16, BS, a), "zone 1 holds the token's blocks", NULL);
	itest_put_be64(rz + 2, 8192);
	itest_put_be32(rz + 10, 128);
	itest_cmd(s, 2, rz, 16, ITEST_IN, NULL, 0, 128, &r);
	itest_ok(r.status == 0 && r.data_len >= 128 && itest_get_be64(r.data + 64 + 24) == 8192 + 16 &&
			 (r.data[64 + 1] >> 4) == 0x2,
		 "REPORT ZONES: zone 1's write pointer 8208, implicitly open", "%s", itest_result_str(&r));
	itest_result_free(&r);
	wut(2, 42, "zbc-hm LU: WRITE USING TOKEN to LBA 8300, past zone 1's write pointer -> 0A/21/04", 0, 0, token,
	    (const struct range[]){ { 8300, 16 } }, 1, EXPECT_SENSE(0xa, 0x21, 0x04), NULL);
	itest_cmd(s, 2, rz, 16, ITEST_IN, NULL, 0, 128, &r);
	itest_ok(r.status == 0 && r.data_len >= 128 && itest_get_be64(r.data + 64 + 24) == 8192 + 16,
		 "... zone 1's write pointer still 8208", "%s", itest_result_str(&r));
	itest_result_free(&r);
	{
		uint8_t zero_token[TOKEN_LEN] = { 0xff, 0xff, 0x00, 0x01 };

		itest_put_be16(zero_token + 6, 0x01f8);
		wut(2, 43, "zbc-hm LU: WRITE USING TOKEN with the block device zero token at zone 1's write pointer -> GOOD",
		    0, 0, zero_token, (const struct range[]){ { 8208, 16 } }, 1, EXPECT_GOOD, NULL);
		itest_ok(itest_blocks_are(s, 2, 8208, 16, BS, zeros), "... zeros written there", NULL);
	}
	/* RESET WRITE POINTER changes the zone's blocks: a token of them is revoked, as by a WRITE. */
	if (make_token(2, 44, 0, (const struct range[]){ { 8192, 16 } }, 1, token)) {
		uint8_t reset[16] = { 0x94, 0x04 };

		itest_put_be64(reset + 2, 8192);
		itest_expect_cmd(s, 2, "RESET WRITE POINTER of zone 1", reset, 16, ITEST_NONE, NULL, 0, 0, EXPECT_GOOD,
				 NULL);
		wut(2, 45, "zbc-hm LU: WRITE USING TOKEN with a token of zone 1's blocks, after its reset -> 05/23/06",
		    0, 0, token, (const struct range[]){ { 100, 16 } }, 1, EXPECT_SENSE(5, 0x23, 0x06), NULL);
	}
}

/*
 * A token used on another LU of the target (rod_token.c): LUN 0's token
 * written to LUN 3 (conventional, the same block length) and to a
 * sequential zone of LUN 2 (the write pointer rules of the destination);
 * LUN 2's token of a zone's written blocks to LUN 0 (the source read under
 * its zone rules); LUN 1's token (PI type 1) to LUN 0 (no PI: the tuples
 * checked, then left); refused on LUN 4, whose blocks are of another length
 * (05/23/00 INVALID TOKEN OPERATION, CAUSE NOT REPORTABLE); a write to its
 * blocks on LUN 0 revokes it for LUN 3 too.
 */
static void test_between_lus(void)
{
	static uint8_t a[16 * BS], p1[8 * BS];
	static const struct range src = { 5000, 16 };
	uint8_t token[TOKEN_LEN], pi_token[TOKEN_LEN], zoned_token[TOKEN_LEN];

	itest_pattern(a, sizeof(a), 61);
	if (!itest_write16(s, 0, 5000, a, 16, BS, false, "LUN 0: WRITE(16) of LBA 5000 (16 blocks)") ||
	    !make_token(0, 60, 0, &src, 1, token))
		return;
	wut(3, 61, "LUN 3: WRITE USING TOKEN of LUN 0's token to LBA 0 (16 blocks) -> GOOD", 0, 0, token,
	    (const struct range[]){ { 0, 16 } }, 1, EXPECT_GOOD, NULL);
	itest_ok(itest_blocks_are(s, 3, 0, 16, BS, a), "LUN 3 LBA 0..15 hold LUN 0's blocks 5000..5015", "different");
	wut(3, 62, "LUN 3: the same token, OFFSET INTO ROD 8, to LBA 100 (8 blocks) -> GOOD", 0, 8, token,
	    (const struct range[]){ { 100, 8 } }, 1, EXPECT_GOOD, NULL);
	itest_ok(itest_blocks_are(s, 3, 100, 8, BS, a + 8 * BS), "... they hold the token's blocks 8..15", "different");
	wut(2, 63, "LUN 2 (zbc-hm): LUN 0's token at the write pointer of zone 3 (LBA 24576) -> GOOD", 0, 0, token,
	    (const struct range[]){ { 24576, 16 } }, 1, EXPECT_GOOD, NULL);
	itest_ok(itest_blocks_are(s, 2, 24576, 16, BS, a), "... zone 3 holds LUN 0's blocks", "different");
	wut(2, 64, "LUN 2: LUN 0's token past zone 3's write pointer (LBA 25000) -> 0A/21/04 (the WRITE's sense, COPY "
	    "ABORTED)", 0, 0, token, (const struct range[]){ { 25000, 16 } }, 1, EXPECT_SENSE(0xa, 0x21, 0x04), NULL);
	itest_pattern(p1, sizeof(p1), 62);
	if (itest_write16(s, 1, 60, p1, 8, BS, false, "LUN 1 (PI type 1): WRITE(16) of LBA 60") &&
	    make_token(1, 65, 0, (const struct range[]){ { 60, 8 } }, 1, pi_token) &&
	    wut(0, 66, "LUN 0: a token of LUN 1's blocks (protection information type 1; LUN 0 has none) -> GOOD", 0, 0,
		pi_token, (const struct range[]){ { 6000, 8 } }, 1, EXPECT_GOOD, NULL))
		itest_ok(itest_blocks_are(s, 0, 6000, 8, BS, p1), "... LUN 0 LBA 6000.. hold them (the tuples checked, "
			 "then left)", "different");
	wut(4, 70, "LUN 4 (4096-byte blocks): LUN 0's token (512-byte blocks) -> 05/23/00 INVALID TOKEN OPERATION, "
	    "CAUSE NOT REPORTABLE", 0, 0, token, (const struct range[]){ { 0, 2 } }, 1, EXPECT_SENSE(5, 0x23, 0x00), NULL);
	if (make_token(2, 67, 0, (const struct range[]){ { 24576, 16 } }, 1, zoned_token)) {
		wut(0, 68, "LUN 0: a token of LUN 2's blocks in zone 3 (below its write pointer) -> GOOD", 0, 0,
		    zoned_token, (const struct range[]){ { 6000, 16 } }, 1, EXPECT_GOOD, NULL);
		itest_ok(itest_blocks_are(s, 0, 6000, 16, BS, a), "... LUN 0 LBA 6000.. hold them", "different");
	}
	itest_write16(s, 0, 5003, a, 1, BS, false, "LUN 0: WRITE(16) of LBA 5003, one of the token's blocks");
	wut(3, 69, "LUN 3: LUN 0's token after that write -> 05/23/06 TOKEN REVOKED", 0, 0, token,
	    (const struct range[]){ { 200, 16 } }, 1, EXPECT_SENSE(5, 0x23, 0x06), NULL);
}

/* LUN 1, protection information type 1: the tuples come with the blocks, retagged for the destination. */
static void test_pi(void)
{
	static uint8_t a[8 * BS], zeros[BS];
	uint8_t token[TOKEN_LEN], rd[16] = { 0x88, 0x20 }; /* READ(16), RDPROTECT 001b */
	struct itest_result r;
	bool ok;

	itest_pattern(a, sizeof(a), 81);
	if (!itest_write16(s, 1, 50, a, 8, BS, false, "PI LU: WRITE(16) of LBA 50 (8 blocks)") ||
	    !make_token(1, 30, 0, (const struct range[]){ { 50, 8 } }, 1, token))
		return;
	wut(1, 31, "PI LU: WRITE USING TOKEN to LBA 900 -> GOOD", 0, 0, token, (const struct range[]){ { 900, 8 } }, 1,
	    EXPECT_GOOD, NULL);
	itest_put_be64(rd + 2, 900);
	itest_put_be32(rd + 10, 8);
	itest_cmd(s, 1, rd, 16, ITEST_IN, NULL, 0, 8 * (BS + 8), &r);
	ok = r.status == 0 && r.data_len == 8 * (BS + 8);
	for (unsigned i = 0; ok && i < 8; i++)
		ok = memcmp(r.data + i * (BS + 8), a + i * BS, BS) == 0 && itest_get_be32(r.data + i * (BS + 8) + BS + 4) == 900 + i;
	itest_ok(ok, "PI LU: READ(16) RDPROTECT 001b of LBA 900 -> GOOD, the data, reference tags 900.. (retagged)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	memset(token, 0, sizeof(token));
	itest_put_be32(token, 0xffff0001);
	itest_put_be16(token + 6, 0x01f8);
	wut(1, 32, "PI LU: the zero ROD token over LBA 900 -> GOOD", 0, 0, token, (const struct range[]){ { 900, 8 } },
	    1, EXPECT_GOOD, NULL);
	itest_cmd(s, 1, rd, 16, ITEST_IN, NULL, 0, 8 * (BS + 8), &r);
	ok = r.status == 0 && r.data_len == 8 * (BS + 8);
	for (unsigned i = 0; ok && i < 8; i++)
		ok = memcmp(r.data + i * (BS + 8), zeros, BS) == 0 && itest_get_be64(r.data + i * (BS + 8) + BS) == UINT64_MAX;
	itest_ok(ok, "PI LU: READ(16) RDPROTECT 001b -> GOOD, zeros with FFh tuples (no check)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
}

/*
 * A medium-error fault rule on a block of the token's second piece: the
 * first piece is written, then the copy fails as the read would, as COPY
 * ABORTED (0A/11/00, INFORMATION the bad block); the rule counts it.
 */
/*
 * COPY OPERATION ABORT (83h/1Ch, copy/copy_abort.c): a WRITE USING TOKEN held
 * by a fault rule before it starts is named by its list identifier; let go,
 * it ends TASK ABORTED with nothing written, and RECEIVE ROD TOKEN
 * INFORMATION says COPY OPERATION STATUS 60h.  A list already ended: GOOD;
 * one never used: 05/24/00 on CDB byte 2.
 */
static void test_copy_operation_abort(struct itest_daemon *d)
{
	static uint8_t before[64 * BS], p[536 + 16];
	uint8_t token[TOKEN_LEN], coa[16] = { 0x83, 0x1c }, wcdb[16] = { 0x83, 0x11 };
	struct iscsi_data data = { .size = 552, .data = p };
	struct itest_async a = { 0 };
	struct scsi_task *task;
	struct itest_result r;
	char out[1024];
	uint32_t len;

	itest_pattern(before, sizeof(before), 61);
	if (!itest_write16(s, 0, 5000, before, 64, BS, false, "WRITE(16) of LBA 5000 (64 blocks), the destination") ||
	    !make_token(0, 50, 0, (const struct range[]){ { 0, 64 } }, 1, token) ||
	    !itest_ok(itest_ctl(d, out, sizeof(out), "fault add 0 hold --opcode 0x83 --service-action 0x11 --count 1") ==
			      0,
		      "sbcemuctl fault add 0 hold --opcode 0x83 --service-action 0x11 --count 1 -> exit 0", "%s", out))
		return;
	len = wut_list(p, 0, 0, token, (const struct range[]){ { 5000, 64 } }, 1);
	data.size = len;
	itest_put_be32(wcdb + 6, 51);
	itest_put_be32(wcdb + 10, len);
	task = scsi_create_task(16, wcdb, SCSI_XFER_WRITE, (int)len);
	if (!task || iscsi_scsi_command_async(s, 0, task, itest_async_cmd_cb, &data, &a) != 0) {
		itest_ok(false, "WRITE USING TOKEN (list 51) sent asynchronously", "%s", iscsi_get_error(s));
		itest_ctl(d, out, sizeof(out), "fault remove all");
		return;
	}
	itest_service(s, 300, &a.done);
	itest_ok(!a.done, "WRITE USING TOKEN list 51, held by the rule, not answered", "status 0x%x", a.status);
	itest_put_be32(coa + 2, 51);
	itest_expect_cmd(s, 0, "COPY OPERATION ABORT of list 51 -> GOOD", coa, 16, ITEST_NONE, NULL, 0, 0, EXPECT_GOOD,
			 NULL);
	itest_ctl(d, out, sizeof(out), "fault remove all");
	itest_service(s, 5000, &a.done);
	itest_ok(a.done && a.status == SCSI_STATUS_TASK_ABORTED, "... the WRITE USING TOKEN ends TASK ABORTED (40h)",
		 "%s, status 0x%x", a.done ? "answered" : "no answer in 5 s", a.status);
	if (a.done)
		scsi_free_scsi_task(task);
	itest_ok(itest_blocks_are(s, 0, 5000, 64, BS, before), "... nothing written", NULL);
	itest_expect_cmd(s, 0, "COPY OPERATION ABORT of list 51 again (ended, held) -> GOOD", coa, 16, ITEST_NONE, NULL, 0,
			 0, EXPECT_GOOD, NULL);
	rrti(0, 51, &r);
	itest_ok(r.status == 0 && r.data_len >= 32 && r.data[5] == 0x60 && r.data[12] == 0x40 &&
			 itest_get_be64(r.data + 16) == 0,
		 "RECEIVE ROD TOKEN INFORMATION of list 51: COPY OPERATION STATUS 60h (aborted), status 40h, "
		 "TRANSFER COUNT 0", "%s", itest_result_str(&r));
	itest_result_free(&r);
	itest_put_be32(coa + 2, 77);
	itest_expect_cmd(s, 0, "COPY OPERATION ABORT of list 77 (never used) -> 05/24/00", coa, 16, ITEST_NONE, NULL, 0,
			 0, EXPECT_SENSE(5, 0x24, 0x00), &r);
	itest_expect_field_pointer("... field pointer on LIST IDENTIFIER (CDB byte 2)", &r, 1, 2, -1);
	itest_result_free(&r);
}

static void test_medium_error(struct itest_daemon *d)
{
	uint8_t token[TOKEN_LEN];
	struct itest_result r;
	char out[1024];

	if (!make_token(0, 40, 0, (const struct range[]){ { 20000, 4096 } }, 1, token) ||
	    !itest_ok(itest_ctl(d, out, sizeof(out), "fault add 0 medium-error --lba 22500") == 0,
		      "sbcemuctl fault add 0 medium-error --lba 22500 -> exit 0", "%s", out))
		return;
	wut(0, 41, "WRITE USING TOKEN over a bad source block in its second piece -> 0A/11/00 (COPY ABORTED, "
	    "UNRECOVERED READ ERROR)", 0, 0, token, (const struct range[]){ { 40000, 4096 } }, 1,
	    EXPECT_SENSE(0xa, 0x11, 0x00), &r);
	itest_ok(r.sense.info_valid && r.sense.information == 22500, "... INFORMATION = 22500", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	{
		uint8_t lid4[16] = { 0x84, 0x05 }; /* RECEIVE COPY STATUS(LID4) */

		itest_put_be32(lid4 + 2, 41);
		itest_put_be32(lid4 + 10, 1024);
		itest_cmd(s, 0, lid4, 16, ITEST_IN, NULL, 0, 1024, &r);
		itest_ok(r.status == 0 && r.data_len == 32 + r.data[13] && r.data[13] >= 18 && r.data[4] == 0x11 &&
				 r.data[5] == 0x02 && r.data[12] == 0x02 && r.data[15] == 0xf1 &&
				 itest_get_be64(r.data + 16) == 2048 && (r.data[32 + 2] & 0x0f) == 0x0a &&
				 r.data[32 + 12] == 0x11,
			 "RECEIVE COPY STATUS(LID4) of list 41: WRITE USING TOKEN (11h), completed with errors (02h), "
			 "CHECK CONDITION, 2048 blocks (units F1h), the sense 0A/11/00 after the header",
			 "%s", itest_result_str(&r));
		itest_result_free(&r);
		itest_expect_cmd(s, 0, "... read once, the result is released: RECEIVE ROD TOKEN INFORMATION of list 41 "
				 "-> 05/24/00", (const uint8_t[16]){ 0x84, 0x07, 0, 0, 0, 41, 0, 0, 0, 0, 0, 0, 4, 0 }, 16,
				 ITEST_IN, NULL, 0, 1024, EXPECT_SENSE(5, 0x24, 0x00), NULL);
	}
	itest_ok(itest_ctl(d, out, sizeof(out), "--json fault list") == 0 && strstr(out, "\"fired\": 1,"),
		 "sbcemuctl fault list: the rule fired once", "%s", out);
	itest_ctl(d, out, sizeof(out), "fault remove all");

	/* A copy's write repairs the bad blocks it covers, as a WRITE's does (copy/copy_piece.c). */
	if (!itest_ok(itest_ctl(d, out, sizeof(out), "fault add 0 medium-error --lba 60010-60011") == 0,
		      "sbcemuctl fault add 0 medium-error --lba 60010-60011 -> exit 0", "%s", out))
		return;
	{
		uint8_t rd[16] = { 0x88 }, *want = malloc(16 * BS);

		itest_put_be64(rd + 2, 60000);
		itest_put_be32(rd + 10, 16);
		itest_expect_cmd(s, 0, "READ(16) of LBA 60000 (16 blocks) over the bad blocks -> 03/11/00", rd, 16, ITEST_IN,
				 NULL, 0, 16 * BS, EXPECT_SENSE(3, 0x11, 0x00), NULL);
		wut(0, 42, "WRITE USING TOKEN to LBA 60000 (16 blocks), over the bad blocks -> GOOD", 0, 0, token,
		    (const struct range[]){ { 60000, 16 } }, 1, EXPECT_GOOD, NULL);
		itest_ok(want && itest_read16(s, 0, 20000, want, 16, BS, "READ(16) of the token's first blocks") &&
				 itest_blocks_are(s, 0, 60000, 16, BS, want),
			 "READ(16) of LBA 60000 -> GOOD with the token's blocks: the copy repaired them", NULL);
		free(want);
	}
	itest_ok(itest_ctl(d, out, sizeof(out), "--json fault list") == 0 && strstr(out, "\"bad_blocks\": 0"),
		 "sbcemuctl fault list: no bad block left", "%s", out);
	itest_ctl(d, out, sizeof(out), "fault remove all");
}

int main(int argc, char **argv)
{
	struct itest_daemon d;

	itest_init(argc, argv, "test_token_copy: POPULATE TOKEN, WRITE USING TOKEN, RECEIVE ROD TOKEN INFORMATION");
	itest_daemon_init(&d, "token-copy");
	if (itest_daemon_write_config(&d, config) != 0 || itest_daemon_start(&d) != 0) {
		printf("Bail out! cannot start sbcemud (see %s)\n", d.log);
		return 1;
	}
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s)
		return itest_finish();
	for (int lun = 0; lun < 5; lun++)
		itest_clear_ua(s, lun);
	test_vpd();
	test_copies();
	test_checks();
	test_pi();
	test_zoned();
	test_between_lus();
	test_copy_operation_abort(&d);
	test_medium_error(&d);
	itest_close(s);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
