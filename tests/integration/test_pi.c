/*
 * T10 protection information over iSCSI (SBC-4 4.22): the
 * reporting (INQUIRY PROTECT, READ CAPACITY(16) PROT_EN / P_TYPE /
 * P_I_EXPONENT, Extended INQUIRY SPT / GRD_CHK / APP_CHK / REF_CHK, Control
 * ATO, REPORT SUPPORTED OPERATION CODES), every RDPROTECT / WRPROTECT /
 * VRPROTECT value on types 1, 2 and 3, the 32-byte CDBs of type 2, the
 * escape, the check-failure sense with the failing LBA in INFORMATION, the
 * injected faults (pi_faults), FORMAT UNIT FMTPINFO / PROTECTION FIELD
 * USAGE, and PI surviving a restart.  Tuples are checked against a bitwise
 * CRC-16/T10-DIF written here, independent of the daemon's ISA-L one.
 *
 * LUN 0: type 1, 512-byte blocks, thin, WRITE ATOMIC, faults at LBAs 1000-1002;
 * LUN 1: type 2, 512-byte blocks; LUN 2: type 3, 4096-byte blocks with
 * P_I_EXPONENT 3 (eight 512-byte intervals per block); LUN 3: no PI; LUN 4:
 * type 3, 512-byte blocks (the PROTECT tables).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "itest_raw.h"

#define BS 512u
#define TUPLE 8u

static const char config[] =
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\n"
	"size = 16M\n"
	"logical_block_size = 512\n"
	"protection_type = 1\n"
	"max_atomic_transfer_length = 64\n"
	"pi_faults = guard 1000, ref 1001, app 1002\n"
	"[lun \"" ITEST_TARGET "\" 1]\n"
	"path = @DIR@/lun1.img\n"
	"size = 16M\n"
	"logical_block_size = 512\n"
	"protection_type = 2\n"
	"[lun \"" ITEST_TARGET "\" 2]\n"
	"path = @DIR@/lun2.img\n"
	"size = 16M\n"
	"logical_block_size = 4096\n"
	"protection_type = 3\n"
	"p_i_exponent = 3\n"
	"[lun \"" ITEST_TARGET "\" 3]\n"
	"path = @DIR@/lun3.img\n"
	"size = 16M\n"
	"logical_block_size = 512\n"
	"[lun \"" ITEST_TARGET "\" 4]\n"
	"path = @DIR@/lun4.img\n"
	"size = 16M\n"
	"logical_block_size = 512\n"
	"protection_type = 3\n";

static struct iscsi_context *s;
static struct itest_raw raw; /* the 32-byte CDBs (libiscsi sends at most 16 CDB bytes) */

/* CRC-16/T10-DIF, bit by bit: polynomial 8BB7h, initial 0, no reflection (check value D0DBh). */
static uint16_t crc_t10dif(const uint8_t *p, size_t n)
{
	uint16_t crc = 0;

	for (size_t i = 0; i < n; i++) {
		crc ^= (uint16_t)(p[i] << 8);
		for (int b = 0; b < 8; b++)
			crc = (uint16_t)(crc & 0x8000 ? (crc << 1) ^ 0x8bb7 : crc << 1);
	}
	return crc;
}

static void put_tuple(uint8_t *t, uint16_t guard, uint16_t app, uint32_t ref)
{
	itest_put_be16(t, guard);
	itest_put_be16(t + 2, app);
	itest_put_be32(t + 4, ref);
}

/* Wire form of n 512-byte blocks with tuples: good guards, app, ref counting up from ref0. */
static void make_wire(uint8_t *wire, const uint8_t *data, unsigned n, uint16_t app, uint32_t ref0)
{
	for (unsigned i = 0; i < n; i++) {
		memcpy(wire + i * (BS + TUPLE), data + i * BS, BS);
		put_tuple(wire + i * (BS + TUPLE) + BS, crc_t10dif(data + i * BS, BS), app, ref0 + i);
	}
}

static void cdb10(uint8_t *c, uint8_t op, uint8_t protect, uint32_t lba, uint16_t n)
{
	memset(c, 0, 10);
	c[0] = op;
	c[1] = (uint8_t)(protect << 5);
	itest_put_be32(c + 2, lba);
	itest_put_be16(c + 7, n);
}

static void cdb16(uint8_t *c, uint8_t op, uint8_t protect, uint64_t lba, uint32_t n)
{
	memset(c, 0, 16);
	c[0] = op;
	c[1] = (uint8_t)(protect << 5);
	itest_put_be64(c + 2, lba);
	itest_put_be32(c + 10, n);
}

static void cdb32(uint8_t *c, uint16_t sa, uint8_t protect, uint64_t lba, uint32_t n, uint32_t eilbrt, uint16_t elbat,
		  uint16_t lbatm)
{
	memset(c, 0, 32);
	c[0] = 0x7f;
	c[7] = 0x18;
	itest_put_be16(c + 8, sa);
	c[10] = (uint8_t)(protect << 5);
	itest_put_be64(c + 12, lba);
	itest_put_be32(c + 20, eilbrt);
	itest_put_be16(c + 24, elbat);
	itest_put_be16(c + 26, lbatm);
	itest_put_be32(c + 28, n);
}

static bool expect_info(const char *name, const struct itest_result *r, uint64_t lba)
{
	return itest_ok(r->sense.info_valid && r->sense.information == lba, name, "INFORMATION valid %d = %llu",
			r->sense.info_valid, (unsigned long long)r->sense.information);
}

/* READ(10) of one block with RDPROTECT rd into buf (520 bytes with PI, else 512); returns GOOD. */
static bool read1(int lun, uint32_t lba, uint8_t rd, uint8_t *buf, struct itest_result *r)
{
	uint8_t c[10];
	size_t len = rd ? BS + TUPLE : BS;

	cdb10(c, 0x28, rd, lba, 1);
	itest_cmd(s, lun, c, 10, ITEST_IN, NULL, 0, len, r);
	if (r->status == 0 && r->data_len == (int)len && buf)
		memcpy(buf, r->data, len);
	return r->status == 0;
}

static void test_reporting(void)
{
	static const uint8_t protect[4] = { 1, 1, 1, 0 };
	static const uint8_t p_type_byte[4] = { 0x01, 0x03, 0x05, 0x00 };
	static const uint8_t p_i_exp[4] = { 0, 0, 3, 0 };

	for (int lun = 0; lun < 4; lun++) {
		uint8_t c[16] = { 0x12, 0, 0, 0, 96, 0 };
		struct itest_result r;
		char name[160];

		itest_cmd(s, lun, c, 6, ITEST_IN, NULL, 0, 96, &r);
		snprintf(name, sizeof(name), "LUN %d: standard INQUIRY PROTECT = %d (SPC-4 6.6.2 byte 5 bit 0)", lun,
			 protect[lun]);
		itest_ok(r.status == 0 && r.data_len > 5 && (r.data[5] & 1) == protect[lun], name, "%s",
			 itest_result_str(&r));
		itest_result_free(&r);

		memset(c, 0, 16);
		c[0] = 0x9e;
		c[1] = 0x10;
		c[13] = 32;
		itest_cmd(s, lun, c, 16, ITEST_IN, NULL, 0, 32, &r);
		snprintf(name, sizeof(name),
			 "LUN %d: READ CAPACITY(16) byte 12 P_TYPE/PROT_EN = %02xh, P_I_EXPONENT = %u (SBC-4 5.21.2)", lun,
			 p_type_byte[lun], p_i_exp[lun]);
		itest_ok(r.status == 0 && r.data_len >= 14 && (r.data[12] & 0x0f) == p_type_byte[lun] &&
				 (r.data[13] >> 4) == p_i_exp[lun],
			 name, "byte 12 %02x byte 13 %02x", r.data_len >= 14 ? r.data[12] : 0,
			 r.data_len >= 14 ? r.data[13] : 0);
		itest_result_free(&r);

		memset(c, 0, 16);
		c[0] = 0x12;
		c[1] = 0x01;
		c[2] = 0x86;
		c[4] = 64;
		itest_cmd(s, lun, c, 6, ITEST_IN, NULL, 0, 64, &r);
		snprintf(name, sizeof(name), "LUN %d: Extended INQUIRY Data VPD byte 4 SPT/GRD_CHK/APP_CHK/REF_CHK = %02xh",
			 lun, protect[lun] ? 0x3f : 0);
		itest_ok(r.status == 0 && r.data_len > 4 && r.data[4] == (protect[lun] ? 0x3f : 0), name, "byte 4 %02x",
			 r.data_len > 4 ? r.data[4] : 0);
		itest_result_free(&r);

		memset(c, 0, 16);
		c[0] = 0x1a;
		c[1] = 0x08; /* DBD: no block descriptor */
		c[2] = 0x0a;
		c[4] = 64;
		itest_cmd(s, lun, c, 6, ITEST_IN, NULL, 0, 64, &r);
		snprintf(name, sizeof(name), "LUN %d: Control mode page ATO = %d (SPC-4 7.5.8 byte 5 bit 7)", lun,
			 protect[lun]);
		itest_ok(r.status == 0 && r.data_len >= 4 + 12 && r.data[3] == 0 &&
				 (r.data[4 + 5] >> 7) == protect[lun],
			 name, "%s", itest_result_str(&r));
		itest_result_free(&r);

		/* REPORT SUPPORTED OPERATION CODES, one command: READ(32) only on type 2, RDPROTECT only with PI. */
		memset(c, 0, 16);
		c[0] = 0xa3;
		c[1] = 0x0c;
		c[2] = 0x03;
		c[3] = 0x7f;
		itest_put_be16(c + 4, 0x0009);
		itest_put_be32(c + 6, 64);
		itest_cmd(s, lun, c, 12, ITEST_IN, NULL, 0, 64, &r);
		snprintf(name, sizeof(name), "LUN %d: RSOC READ(32) SUPPORT = %s", lun, lun == 1 ? "011b" : "001b");
		itest_ok(r.status == 0 && r.data_len >= 2 && (r.data[1] & 7) == (lun == 1 ? 3 : 1), name, "%s SUPPORT %d",
			 itest_result_str(&r), r.data_len >= 2 ? r.data[1] & 7 : -1);
		itest_result_free(&r);
		c[2] = 0x01;
		c[3] = 0x28;
		itest_put_be16(c + 4, 0);
		itest_cmd(s, lun, c, 12, ITEST_IN, NULL, 0, 64, &r);
		snprintf(name, sizeof(name), "LUN %d: RSOC READ(10) CDB USAGE DATA byte 1 RDPROTECT bits %s", lun,
			 protect[lun] ? "set" : "clear");
		itest_ok(r.status == 0 && r.data_len >= 6 && (r.data[5] & 0xe0) == (protect[lun] ? 0xe0 : 0), name,
			 "usage byte 1 %02x", r.data_len >= 6 ? r.data[5] : 0);
		itest_result_free(&r);
	}
}

/* Type 1 (LUN 0): generation, RDPROTECT and WRPROTECT tables, escape, sense, VERIFY, WRITE SAME, UNMAP. */
static void test_type1(void)
{
	uint8_t data[4 * BS], wire[4 * (BS + TUPLE)], back[BS + TUPLE], c[16];
	struct itest_result r;

	itest_pattern(data, sizeof(data), 11);
	cdb10(c, 0x2a, 0, 100, 1);
	itest_expect_cmd(s, 0, "WRITE(10) WRPROTECT=000b on type 1 -> GOOD (the LU generates PI)", c, 10, ITEST_OUT,
			 data, BS, 0, EXPECT_GOOD, NULL);
	read1(0, 100, 1, back, &r);
	itest_ok(r.status == 0 && r.data_len == BS + TUPLE && !memcmp(back, data, BS) &&
			 itest_get_be16(back + BS) == crc_t10dif(data, BS) && itest_get_be16(back + BS + 2) == 0 &&
			 itest_get_be32(back + BS + 4) == 100,
		 "READ(10) RDPROTECT=001b: data then the generated tuple (guard = CRC, app 0, ref = LBA)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	read1(0, 100, 0, back, &r);
	itest_ok(r.status == 0 && r.data_len == BS && !memcmp(back, data, BS),
		 "READ(10) RDPROTECT=000b: 512 bytes, PI stripped", "%s", itest_result_str(&r));
	itest_result_free(&r);
	read1(0, 200, 1, back, &r);
	itest_ok(r.status == 0 && itest_get_be32(back + BS) == 0xffffffff && itest_get_be32(back + BS + 4) == 0xffffffff,
		 "never-written block: the escape tuple FFFF_FFFF_FFFF_FFFFh (SBC-4 4.22.3)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);

	/* WRPROTECT=001b with good PI: stored as received (ATO = 1, the app tag is the client's). */
	make_wire(wire, data, 2, 0x1234, 300);
	cdb10(c, 0x2a, 1, 300, 2);
	itest_expect_cmd(s, 0, "WRITE(10) WRPROTECT=001b with correct PI -> GOOD", c, 10, ITEST_OUT, wire,
			 2 * (BS + TUPLE), 0, EXPECT_GOOD, NULL);
	read1(0, 301, 3, back, &r);
	itest_ok(r.status == 0 && !memcmp(back, wire + BS + TUPLE, BS + TUPLE),
		 "READ(10) RDPROTECT=011b returns the stored tuple (app 1234h kept)", "%s", itest_result_str(&r));
	itest_result_free(&r);

	/* Check failures: ABORTED COMMAND 10/01, 10/03 with the failing LBA; nothing written. */
	make_wire(wire, data + 2 * BS, 2, 0, 300);
	wire[BS + TUPLE + BS] ^= 0x40; /* second block's guard */
	cdb10(c, 0x2a, 1, 300, 2);
	itest_expect_cmd(s, 0, "WRITE(10) WRPROTECT=001b, bad guard in block 2 -> 0B/10/01", c, 10, ITEST_OUT, wire,
			 2 * (BS + TUPLE), 0, EXPECT_SENSE(0x0b, 0x10, 0x01), &r);
	expect_info("... INFORMATION = 301, the LBA of the failing block", &r, 301);
	itest_result_free(&r);
	read1(0, 300, 0, back, &r);
	itest_ok(r.status == 0 && !memcmp(back, data, BS), "... and nothing was written (LBA 300 keeps its data)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	make_wire(wire, data, 1, 0, 999);
	cdb10(c, 0x2a, 1, 310, 1);
	itest_expect_cmd(s, 0, "WRITE(10) WRPROTECT=001b, ref tag != LBA -> 0B/10/03", c, 10, ITEST_OUT, wire,
			 BS + TUPLE, 0, EXPECT_SENSE(0x0b, 0x10, 0x03), &r);
	expect_info("... INFORMATION = 310", &r, 310);
	itest_result_free(&r);
	cdb10(c, 0x2a, 5, 310, 1);
	itest_expect_cmd(s, 0, "WRITE(10) WRPROTECT=101b, ref tag != LBA -> 0B/10/03", c, 10, ITEST_OUT, wire,
			 BS + TUPLE, 0, EXPECT_SENSE(0x0b, 0x10, 0x03), NULL);
	cdb10(c, 0x2a, 4, 310, 1);
	itest_expect_cmd(s, 0, "WRITE(10) WRPROTECT=100b (guard only), bad ref -> GOOD", c, 10, ITEST_OUT, wire,
			 BS + TUPLE, 0, EXPECT_GOOD, NULL);
	make_wire(wire, data, 1, 0, 311);
	wire[BS] ^= 1;
	cdb10(c, 0x2a, 4, 311, 1);
	itest_expect_cmd(s, 0, "WRITE(10) WRPROTECT=100b, bad guard -> 0B/10/01", c, 10, ITEST_OUT, wire, BS + TUPLE, 0,
			 EXPECT_SENSE(0x0b, 0x10, 0x01), NULL);
	cdb10(c, 0x2a, 2, 311, 1);
	itest_expect_cmd(s, 0, "WRITE(10) WRPROTECT=010b (no guard check), bad guard -> GOOD", c, 10, ITEST_OUT, wire,
			 BS + TUPLE, 0, EXPECT_GOOD, NULL);
	make_wire(wire, data, 1, 0, 5);
	wire[BS] ^= 1;
	cdb10(c, 0x2a, 3, 312, 1);
	itest_expect_cmd(s, 0, "WRITE(10) WRPROTECT=011b (no checks), bad guard and ref -> GOOD", c, 10, ITEST_OUT, wire,
			 BS + TUPLE, 0, EXPECT_GOOD, NULL);
	put_tuple(wire + BS, 0xdead, 0xffff, 0x77);
	cdb10(c, 0x2a, 1, 313, 1);
	itest_expect_cmd(s, 0, "WRITE(10) WRPROTECT=001b, app tag FFFFh: the escape, no check -> GOOD", c, 10, ITEST_OUT,
			 wire, BS + TUPLE, 0, EXPECT_GOOD, NULL);

	/* The stored bad guard of LBA 311 and bad PI of 312 are found on read, by the RDPROTECT table. */
	read1(0, 311, 0, back, &r);
	itest_ok(r.status == 2 && r.sense.key == 0x0b && r.sense.asc == 0x10 && r.sense.ascq == 0x01,
		 "READ(10) RDPROTECT=000b of a block with a bad stored guard -> 0B/10/01", "%s", itest_result_str(&r));
	expect_info("... INFORMATION = 311", &r, 311);
	itest_result_free(&r);
	read1(0, 311, 2, back, &r);
	itest_ok(r.status == 0, "READ(10) RDPROTECT=010b (no guard check) of it -> GOOD", "%s", itest_result_str(&r));
	itest_result_free(&r);
	read1(0, 311, 4, back, &r);
	itest_ok(r.status == 2 && r.sense.asc == 0x10 && r.sense.ascq == 0x01, "READ(10) RDPROTECT=100b of it -> 0B/10/01",
		 "%s", itest_result_str(&r));
	itest_result_free(&r);
	read1(0, 312, 4, back, &r);
	itest_ok(r.status == 2 && r.sense.ascq == 0x01, "READ(10) RDPROTECT=100b, bad guard and ref -> the guard (10/01)",
		 "%s", itest_result_str(&r));
	itest_result_free(&r);
	read1(0, 310, 1, back, &r);
	itest_ok(r.status == 2 && r.sense.key == 0x0b && r.sense.ascq == 0x03,
		 "READ(10) RDPROTECT=001b of a block with a bad stored ref tag -> 0B/10/03", "%s", itest_result_str(&r));
	itest_result_free(&r);
	read1(0, 310, 4, back, &r);
	itest_ok(r.status == 0, "READ(10) RDPROTECT=100b (guard only) of it -> GOOD", "%s", itest_result_str(&r));
	itest_result_free(&r);
	read1(0, 312, 3, back, &r);
	itest_ok(r.status == 0, "READ(10) RDPROTECT=011b (no checks) -> GOOD", "%s", itest_result_str(&r));
	itest_result_free(&r);
	read1(0, 313, 0, back, &r);
	itest_ok(r.status == 0, "READ(10) of the escape block written with a garbage guard -> GOOD", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	for (uint8_t p = 6; p < 8; p++) {
		char name[96];

		snprintf(name, sizeof(name), "READ(10) RDPROTECT=%u%u%ub (reserved) -> 05/24/00", p >> 2, (p >> 1) & 1, p & 1);
		read1(0, 100, p, back, &r);
		itest_ok(r.status == 2 && r.sense.key == 5 && r.sense.asc == 0x24, name, "%s", itest_result_str(&r));
		itest_result_free(&r);
	}
	cdb16(c, 0x88, 1, 300, 2);
	itest_expect_cmd(s, 0, "READ(16) RDPROTECT=001b of two good blocks -> GOOD", c, 16, ITEST_IN, NULL, 0,
			 2 * (BS + TUPLE), EXPECT_GOOD, NULL);
	cdb10(c, 0xa8, 0, 0, 0);
	c[0] = 0xa8;
	c[1] = 0x20;
	itest_put_be32(c + 2, 310);
	itest_put_be32(c + 6, 1);
	itest_expect_cmd(s, 0, "READ(12) RDPROTECT=001b, bad stored ref -> 0B/10/03", c, 12, ITEST_IN, NULL, 0,
			 BS + TUPLE, EXPECT_SENSE(0x0b, 0x10, 0x03), NULL);

	/* VERIFY: VRPROTECT against the stored PI; BYTCHK=01b compares the user data. */
	cdb10(c, 0x2f, 0, 311, 1);
	itest_expect_cmd(s, 0, "VERIFY(10) VRPROTECT=000b BYTCHK=00b of the bad-guard block -> 0B/10/01", c, 10,
			 ITEST_NONE, NULL, 0, 0, EXPECT_SENSE(0x0b, 0x10, 0x01), NULL);
	cdb10(c, 0x2f, 3, 311, 1);
	itest_expect_cmd(s, 0, "VERIFY(10) VRPROTECT=011b BYTCHK=00b -> GOOD", c, 10, ITEST_NONE, NULL, 0, 0,
			 EXPECT_GOOD, NULL);
	make_wire(wire, data, 1, 0x1234, 300);
	cdb10(c, 0x2f, 1, 300, 1);
	c[1] |= 0x02;
	itest_expect_cmd(s, 0, "VERIFY(10) VRPROTECT=001b BYTCHK=01b, same data -> GOOD", c, 10, ITEST_OUT, wire,
			 BS + TUPLE, 0, EXPECT_GOOD, NULL);
	wire[7] ^= 1;
	itest_expect_cmd(s, 0, "VERIFY(10) VRPROTECT=001b BYTCHK=01b, other data -> 0E/1D/00", c, 10, ITEST_OUT, wire,
			 BS + TUPLE, 0, EXPECT_SENSE(0x0e, 0x1d, 0x00), NULL);

	/* WRITE SAME(10) WRPROTECT=001b: one block's tuple repeated, ref tags following the LBA. */
	make_wire(wire, data, 1, 0x0042, 400);
	cdb10(c, 0x41, 1, 400, 8);
	itest_expect_cmd(s, 0, "WRITE SAME(10) WRPROTECT=001b -> GOOD", c, 10, ITEST_OUT, wire, BS + TUPLE, 0,
			 EXPECT_GOOD, NULL);
	read1(0, 407, 1, back, &r);
	itest_ok(r.status == 0 && !memcmp(back, data, BS) && itest_get_be16(back + BS) == crc_t10dif(data, BS) &&
			 itest_get_be16(back + BS + 2) == 0x42 && itest_get_be32(back + BS + 4) == 407,
		 "... LBA 407 holds the data, the guard, app 0042h and ref tag 407", "%s", itest_result_str(&r));
	itest_result_free(&r);
	wire[BS + 4] ^= 1;
	itest_expect_cmd(s, 0, "WRITE SAME(10) WRPROTECT=001b, ref tag != LBA -> 0B/10/03", c, 10, ITEST_OUT, wire,
			 BS + TUPLE, 0, EXPECT_SENSE(0x0b, 0x10, 0x03), NULL);
	cdb16(c, 0x93, 1, 400, 8);
	c[1] |= 0x01; /* NDOB */
	itest_expect_cmd(s, 0, "WRITE SAME(16) NDOB=1 with WRPROTECT=001b (no PI to check) -> 05/24/00", c, 16, ITEST_NONE,
			 NULL, 0, 0, EXPECT_SENSE(5, 0x24, 0), NULL);
	c[1] = 0x01;
	itest_expect_cmd(s, 0, "WRITE SAME(16) NDOB=1 on type 1 -> GOOD (zeros with generated PI)", c, 16, ITEST_NONE,
			 NULL, 0, 0, EXPECT_GOOD, NULL);
	read1(0, 404, 1, back, &r);
	itest_ok(r.status == 0 && itest_get_be16(back + BS) == 0 && itest_get_be32(back + BS + 4) == 404,
		 "... LBA 404: guard 0000h (CRC of zeros), ref tag 404", "%s", itest_result_str(&r));
	itest_result_free(&r);
	/* UNMAP: deallocated blocks carry the escape. */
	{
		uint8_t list[24] = { 0, 22, 0, 16 };

		itest_put_be64(list + 8, 400);
		itest_put_be32(list + 16, 8);
		memset(c, 0, 10);
		c[0] = 0x42;
		itest_put_be16(c + 7, 24);
		itest_expect_cmd(s, 0, "UNMAP LBAs 400-407 -> GOOD", c, 10, ITEST_OUT, list, 24, 0, EXPECT_GOOD, NULL);
		read1(0, 403, 1, back, &r);
		itest_ok(r.status == 0 && itest_get_be32(back + BS) == 0xffffffff &&
				 itest_get_be32(back + BS + 4) == 0xffffffff,
			 "... an unmapped block reads back with the escape tuple (SBC-4 4.7.4.5)", "%s",
			 itest_result_str(&r));
		itest_result_free(&r);
	}
	/* COMPARE AND WRITE, ORWRITE and WRITE ATOMIC with WRPROTECT=000b keep the PI right. */
	{
		uint8_t caw[2 * BS];

		memcpy(caw, data, BS);
		memcpy(caw + BS, data + BS, BS);
		memset(c, 0, 16);
		c[0] = 0x89;
		itest_put_be64(c + 2, 100);
		c[13] = 1;
		itest_expect_cmd(s, 0, "COMPARE AND WRITE on type 1 -> GOOD", c, 16, ITEST_OUT, caw, 2 * BS, 0, EXPECT_GOOD,
				 NULL);
		read1(0, 100, 1, back, &r);
		itest_ok(r.status == 0 && itest_get_be16(back + BS) == crc_t10dif(data + BS, BS),
			 "... the written block has its new guard", "%s", itest_result_str(&r));
		itest_result_free(&r);
		cdb16(c, 0x8b, 0, 100, 1);
		itest_expect_cmd(s, 0, "ORWRITE(16) on type 1 -> GOOD", c, 16, ITEST_OUT, data + 2 * BS, BS, 0,
				 EXPECT_GOOD, NULL);
		read1(0, 100, 0, back, &r);
		itest_ok(r.status == 0, "... READ RDPROTECT=000b checks the regenerated guard of the ORed data -> GOOD",
			 "%s", itest_result_str(&r));
		itest_result_free(&r);
		make_wire(wire, data, 4, 0x77, 500);
		memset(c, 0, 16);
		c[0] = 0x9c;
		c[1] = 0x20;
		itest_put_be64(c + 2, 500);
		itest_put_be16(c + 12, 4);
		itest_expect_cmd(s, 0, "WRITE ATOMIC(16) WRPROTECT=001b -> GOOD (data and PI in one intent-log record)", c,
				 16, ITEST_OUT, wire, 4 * (BS + TUPLE), 0, EXPECT_GOOD, NULL);
		read1(0, 503, 3, back, &r);
		itest_ok(r.status == 0 && !memcmp(back, wire + 3 * (BS + TUPLE), BS + TUPLE),
			 "... LBA 503 holds the data and the tuple sent", "%s", itest_result_str(&r));
		itest_result_free(&r);
	}
}

/* pi_faults = guard 1000, ref 1001, app 1002: the medium returns those fields corrupted. */
static void test_faults(void)
{
	uint8_t data[3 * BS], back[BS + TUPLE], c[10];
	struct itest_result r;

	itest_pattern(data, sizeof(data), 5);
	cdb10(c, 0x2a, 0, 1000, 3);
	itest_expect_cmd(s, 0, "WRITE(10) LBAs 1000-1002 -> GOOD", c, 10, ITEST_OUT, data, sizeof(data), 0, EXPECT_GOOD,
			 NULL);
	read1(0, 1000, 0, back, &r);
	itest_ok(r.status == 2 && r.sense.key == 0x0b && r.sense.asc == 0x10 && r.sense.ascq == 0x01,
		 "pi_faults guard 1000: READ(10) -> 0B/10/01", "%s", itest_result_str(&r));
	expect_info("... INFORMATION = 1000", &r, 1000);
	itest_result_free(&r);
	cdb10(c, 0x28, 0, 999, 3);
	itest_expect_cmd(s, 0, "READ(10) LBAs 999-1001 -> 0B/10/01 at the first failing block", c, 10, ITEST_IN, NULL, 0,
			 3 * BS, EXPECT_SENSE(0x0b, 0x10, 0x01), &r);
	expect_info("... INFORMATION = 1000", &r, 1000);
	itest_result_free(&r);
	read1(0, 1001, 0, back, &r);
	itest_ok(r.status == 2 && r.sense.ascq == 0x03, "pi_faults ref 1001: READ(10) -> 0B/10/03", "%s",
		 itest_result_str(&r));
	expect_info("... INFORMATION = 1001", &r, 1001);
	itest_result_free(&r);
	read1(0, 1002, 3, back, &r);
	itest_ok(r.status == 0 && itest_get_be16(back + BS + 2) == 0x0001,
		 "pi_faults app 1002: the application tag read is 0001h (generated 0000h, bit 0 flipped)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	read1(0, 1003, 0, back, &r);
	itest_ok(r.status == 0, "LBA 1003 (no fault) -> GOOD", "%s", itest_result_str(&r));
	itest_result_free(&r);
}

/*
 * pi_faults are corrupt-pi fault rules (docs/control.md): listed, removable
 * at run time; a corrupt-pi rule added at run time acts the same way.
 */
static void test_fault_rules(struct itest_daemon *d)
{
	uint8_t back[BS + TUPLE], data[BS], c[10];
	char out[8192];
	struct itest_result r;
	const char *p;
	int n = 0;

	if (!itest_ok(itest_ctl(d, out, sizeof(out), "--json fault list") == 0, "sbcemuctl --json fault list -> exit 0",
		      NULL))
		return;
	for (p = out; (p = strstr(p, "\"corrupt-pi\"")) != NULL; p++)
		n++;
	itest_ok(n == 3 && strstr(out, "\"pi_field\": \"guard\"") && strstr(out, "\"pi_field\": \"ref-tag\"") &&
			 strstr(out, "\"pi_field\": \"app-tag\""),
		 "pi_faults = guard 1000, ref 1001, app 1002 are listed as three corrupt-pi rules", "%.400s", out);
	itest_ok(itest_ctl(d, out, sizeof(out), "fault remove 1") == 0, "sbcemuctl fault remove 1 (guard 1000) -> exit 0",
		 NULL);
	read1(0, 1000, 0, back, &r);
	itest_ok(r.status == 0, "the guard rule removed: READ(10) LBA 1000 -> GOOD", "%s", itest_result_str(&r));
	itest_result_free(&r);
	itest_pattern(data, sizeof(data), 6);
	cdb10(c, 0x2a, 0, 1003, 1);
	itest_expect_cmd(s, 0, "WRITE(10) LBA 1003 -> GOOD (a written block: its PI is checked)", c, 10, ITEST_OUT, data,
			 sizeof(data), 0, EXPECT_GOOD, NULL);
	itest_ok(itest_ctl(d, out, sizeof(out), "--json fault add 0 corrupt-pi --lba 1003 --pi-field guard") == 0,
		 "sbcemuctl fault add 0 corrupt-pi --lba 1003 --pi-field guard -> exit 0", "%s", out);
	read1(0, 1003, 0, back, &r);
	itest_ok(r.status == 2 && r.sense.key == 0x0b && r.sense.asc == 0x10 && r.sense.ascq == 0x01,
		 "corrupt-pi guard 1003 at run time: READ(10) -> 0B/10/01", "%s", itest_result_str(&r));
	expect_info("... INFORMATION = 1003", &r, 1003);
	itest_result_free(&r);
	itest_ok(itest_ctl(d, out, sizeof(out), "fault remove 4") == 0, "sbcemuctl fault remove 4 -> exit 0", NULL);
	read1(0, 1003, 0, back, &r);
	itest_ok(r.status == 0, "the run-time rule removed: READ(10) LBA 1003 -> GOOD", "%s", itest_result_str(&r));
	itest_result_free(&r);
	itest_ok(itest_ctl(d, out, sizeof(out), "fault add 3 corrupt-pi --lba 0 --pi-field guard") == 1,
		 "sbcemuctl fault add 3 corrupt-pi on an LU without PI -> exit 1 (refused)", NULL);
}

/* Type 2 (LUN 1): 32-byte CDBs with expected tags; PROTECT != 0 in short CDBs is refused. */
static void test_type2(void)
{
	uint8_t data[2 * BS], wire[2 * (BS + TUPLE)], c[32], back[BS + TUPLE];
	struct itest_result r;

	itest_pattern(data, sizeof(data), 21);
	cdb10(c, 0x28, 1, 0, 1);
	itest_expect_cmd(s, 1, "type 2: READ(10) RDPROTECT=001b -> 05/20/00 (the 32-byte CDB is required)", c, 10,
			 ITEST_IN, NULL, 0, BS + TUPLE, EXPECT_SENSE(5, 0x20, 0), NULL);
	cdb10(c, 0x2a, 0, 50, 2);
	itest_expect_cmd(s, 1, "type 2: WRITE(10) WRPROTECT=000b -> GOOD", c, 10, ITEST_OUT, data, 2 * BS, 0, EXPECT_GOOD,
			 NULL);
	read1(1, 50, 0, back, &r);
	itest_ok(r.status == 0 && !memcmp(back, data, BS), "type 2: READ(10) RDPROTECT=000b -> GOOD", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);

	make_wire(wire, data, 2, 0xabcd, 0x5000);
	cdb32(c, 0x000b, 1, 60, 2, 0x5000, 0xabcd, 0xffff);
	itest_raw_long_cdb_io(&raw, 1, c, 32, wire, sizeof(wire), 0, &r);
	itest_ok(r.status == 0, "WRITE(32) WRPROTECT=001b, refs from EXPECTED INITIAL LOGICAL BLOCK REFERENCE TAG -> GOOD",
		 "%s", itest_result_str(&r));
	cdb32(c, 0x000b, 1, 60, 2, 0x5001, 0xabcd, 0xffff);
	itest_raw_long_cdb_io(&raw, 1, c, 32, wire, sizeof(wire), 0, &r);
	itest_ok(r.status == 2 && r.sense.key == 0x0b && r.sense.ascq == 0x03 && r.sense.information == 60,
		 "WRITE(32) with EILBRT one off -> 0B/10/03, INFORMATION 60", "%s", itest_result_str(&r));
	cdb32(c, 0x000b, 1, 60, 2, 0x5000, 0xabce, 0xffff);
	itest_raw_long_cdb_io(&raw, 1, c, 32, wire, sizeof(wire), 0, &r);
	itest_ok(r.status == 2 && r.sense.ascq == 0x02, "WRITE(32) with another ELBAT under mask FFFFh -> 0B/10/02",
		 "%s", itest_result_str(&r));
	cdb32(c, 0x000b, 1, 60, 2, 0x5000, 0xabce, 0xff00);
	itest_raw_long_cdb_io(&raw, 1, c, 32, wire, sizeof(wire), 0, &r);
	itest_ok(r.status == 0, "WRITE(32) with ELBAT differing only outside LBATM FF00h -> GOOD", "%s",
		 itest_result_str(&r));

	cdb32(c, 0x0009, 1, 60, 2, 0x5000, 0xabcd, 0xffff);
	itest_raw_long_cdb_io(&raw, 1, c, 32, NULL, 0, sizeof(wire), &r);
	itest_ok(r.status == 0 && r.data_len == (int)sizeof(wire) && !memcmp(r.data, wire, sizeof(wire)),
		 "READ(32) RDPROTECT=001b -> GOOD with the data and tuples written", "%s len %d", itest_result_str(&r),
		 r.data_len);
	itest_result_free(&r);
	cdb32(c, 0x0009, 0, 60, 2, 0x6000, 0, 0);
	itest_raw_long_cdb_io(&raw, 1, c, 32, NULL, 0, 2 * BS, &r);
	itest_ok(r.status == 2 && r.sense.key == 0x0b && r.sense.ascq == 0x03 && r.sense.information == 60,
		 "READ(32) RDPROTECT=000b with another EILBRT -> 0B/10/03, INFORMATION 60", "%s", itest_result_str(&r));
	itest_result_free(&r);
	cdb32(c, 0x0009, 0, 60, 2, 0x5000, 0x1111, 0xffff);
	itest_raw_long_cdb_io(&raw, 1, c, 32, NULL, 0, 2 * BS, &r);
	itest_ok(r.status == 2 && r.sense.ascq == 0x02, "READ(32) with another ELBAT -> 0B/10/02", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	cdb32(c, 0x0009, 0, 60, 2, 0x5000, 0x1111, 0x0000);
	itest_raw_long_cdb_io(&raw, 1, c, 32, NULL, 0, 2 * BS, &r);
	itest_ok(r.status == 0 && r.data_len == 2 * BS && !memcmp(r.data, data, 2 * BS),
		 "READ(32) with LBATM 0000h (app tag unchecked) -> GOOD, PI stripped", "%s", itest_result_str(&r));
	itest_result_free(&r);
	cdb32(c, 0x0009, 4, 60, 2, 0x1, 0x1111, 0xffff);
	itest_raw_long_cdb_io(&raw, 1, c, 32, NULL, 0, sizeof(wire), &r);
	itest_ok(r.status == 0, "READ(32) RDPROTECT=100b (guard only), wrong tags -> GOOD", "%s", itest_result_str(&r));
	itest_result_free(&r);

	/* WRPROTECT=000b with a 32-byte CDB: refs count from EILBRT, app tag = ELBAT. */
	cdb32(c, 0x000b, 0, 70, 2, 7, 0x42, 0xffff);
	itest_raw_long_cdb_io(&raw, 1, c, 32, data, 2 * BS, 0, &r);
	itest_ok(r.status == 0, "WRITE(32) WRPROTECT=000b -> GOOD", "%s", itest_result_str(&r));
	cdb32(c, 0x0009, 3, 70, 2, 0, 0, 0);
	itest_raw_long_cdb_io(&raw, 1, c, 32, NULL, 0, sizeof(wire), &r);
	itest_ok(r.status == 0 && r.data_len == (int)sizeof(wire) &&
			 itest_get_be16(r.data + BS + 2) == 0x42 && itest_get_be32(r.data + BS + 4) == 7 &&
			 itest_get_be32(r.data + 2 * BS + TUPLE + 4) == 8 &&
			 itest_get_be16(r.data + BS) == crc_t10dif(data, BS),
		 "... generated tuples: guard, app 0042h, ref 7 and 8", "%s", itest_result_str(&r));
	itest_result_free(&r);
	cdb32(c, 0x000a, 0, 70, 2, 7, 0x42, 0xffff);
	itest_raw_long_cdb_io(&raw, 1, c, 32, NULL, 0, 0, &r);
	itest_ok(r.status == 0, "VERIFY(32) VRPROTECT=000b with the right tags -> GOOD", "%s", itest_result_str(&r));
	cdb32(c, 0x000a, 0, 70, 2, 9, 0x42, 0xffff);
	itest_raw_long_cdb_io(&raw, 1, c, 32, NULL, 0, 0, &r);
	itest_ok(r.status == 2 && r.sense.ascq == 0x03, "VERIFY(32) with another EILBRT -> 0B/10/03", "%s",
		 itest_result_str(&r));
	make_wire(wire, data, 1, 0x99, 0x100);
	cdb32(c, 0x000d, 1, 80, 4, 0x100, 0x99, 0xffff);
	itest_raw_long_cdb_io(&raw, 1, c, 32, wire, BS + TUPLE, 0, &r);
	itest_ok(r.status == 0, "WRITE SAME(32) WRPROTECT=001b -> GOOD", "%s", itest_result_str(&r));
	cdb32(c, 0x0009, 0, 80, 4, 0x100, 0x99, 0xffff);
	itest_raw_long_cdb_io(&raw, 1, c, 32, NULL, 0, 4 * BS, &r);
	itest_ok(r.status == 0, "... READ(32) with EILBRT 100h: refs counted up over the 4 blocks -> GOOD", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	cdb32(c, 0x000c, 0, 90, 1, 1, 0, 0);
	itest_raw_long_cdb_io(&raw, 1, c, 32, data, BS, 0, &r);
	itest_ok(r.status == 0, "WRITE AND VERIFY(32) -> GOOD", "%s", itest_result_str(&r));
	cdb32(c, 0x0009, 0, 60, 1, 0x5000, 0, 0);
	itest_raw_long_cdb_io(&raw, 0, c, 32, NULL, 0, BS, &r);
	itest_ok(r.status == 2 && r.sense.key == 5 && r.sense.asc == 0x20,
		 "READ(32) on the type 1 LU -> 05/20/00 (32-byte CDBs are for type 2)", "%s", itest_result_str(&r));
	itest_result_free(&r);
}

/* Type 3 with P_I_EXPONENT 3 (LUN 2): a tuple per 512-byte interval; ref tags never checked. */
static void test_type3_intervals(void)
{
	enum { LBS = 4096, IV = 512, N = 8 };
	uint8_t data[LBS], wire[LBS + N * TUPLE], c[16];
	struct itest_result r;
	bool ok = true;

	itest_pattern(data, sizeof(data), 31);
	cdb16(c, 0x8a, 0, 3, 1);
	itest_expect_cmd(s, 2, "type 3, 8 intervals: WRITE(16) WRPROTECT=000b -> GOOD", c, 16, ITEST_OUT, data, LBS, 0,
			 EXPECT_GOOD, NULL);
	cdb16(c, 0x88, 1, 3, 1);
	itest_cmd(s, 2, c, 16, ITEST_IN, NULL, 0, sizeof(wire), &r);
	for (unsigned k = 0; k < N && r.data_len == (int)sizeof(wire); k++)
		ok = ok && !memcmp(r.data + k * (IV + TUPLE), data + k * IV, IV) &&
		     itest_get_be16(r.data + k * (IV + TUPLE) + IV) == crc_t10dif(data + k * IV, IV);
	itest_ok(r.status == 0 && r.data_len == (int)sizeof(wire) && ok,
		 "READ(16) RDPROTECT=001b: 8 x (512 bytes + tuple), each guard the CRC of its interval", "%s len %d",
		 itest_result_str(&r), r.data_len);
	itest_result_free(&r);
	for (unsigned k = 0; k < N; k++) {
		memcpy(wire + k * (IV + TUPLE), data + k * IV, IV);
		put_tuple(wire + k * (IV + TUPLE) + IV, crc_t10dif(data + k * IV, IV), 0x10, 0xdead0000 + k * 3);
	}
	cdb16(c, 0x8a, 1, 4, 1);
	itest_expect_cmd(s, 2, "type 3: WRITE(16) WRPROTECT=001b, arbitrary ref tags -> GOOD (not checked)", c, 16,
			 ITEST_OUT, wire, sizeof(wire), 0, EXPECT_GOOD, NULL);
	wire[5 * (IV + TUPLE) + IV + 1] ^= 1;
	itest_expect_cmd(s, 2, "type 3: bad guard in interval 6 -> 0B/10/01", c, 16, ITEST_OUT, wire, sizeof(wire), 0,
			 EXPECT_SENSE(0x0b, 0x10, 0x01), &r);
	expect_info("... INFORMATION = 4, the logical block", &r, 4);
	itest_result_free(&r);
	put_tuple(wire + 5 * (IV + TUPLE) + IV, 0, 0xffff, 0x1234);
	itest_expect_cmd(s, 2, "type 3: app FFFFh with ref != FFFFFFFFh is no escape -> 0B/10/01", c, 16, ITEST_OUT, wire,
			 sizeof(wire), 0, EXPECT_SENSE(0x0b, 0x10, 0x01), NULL);
	put_tuple(wire + 5 * (IV + TUPLE) + IV, 0, 0xffff, 0xffffffff);
	itest_expect_cmd(s, 2, "type 3: app FFFFh and ref FFFFFFFFh is the escape -> GOOD", c, 16, ITEST_OUT, wire,
			 sizeof(wire), 0, EXPECT_GOOD, NULL);
}

/* ---- no false check failures when a read races a write of the same blocks ---- */

#define RACE_LBA 8192u
#define RACE_BLOCKS 64u
#define RACE_MS 2000

struct race {
	struct itest_daemon *d;
	volatile int stop;
	unsigned writes, errors;
};

static void *race_writer(void *arg)
{
	struct race *rc = arg;
	struct iscsi_context *w = itest_session(rc->d, ITEST_INITIATOR_2, 0);
	uint8_t *buf = malloc(RACE_BLOCKS * BS);

	if (!w) {
		rc->errors++;
		free(buf);
		return NULL;
	}
	itest_clear_ua(w, 0);
	for (unsigned i = 0; !rc->stop; i++) {
		itest_pattern(buf, RACE_BLOCKS * BS, i);
		if (!itest_write16(w, 0, RACE_LBA, buf, RACE_BLOCKS, BS, false, "WRITE(16) of the raced range"))
			rc->errors++;
		rc->writes++;
	}
	itest_close(w);
	free(buf);
	return NULL;
}

/* docs/pi.md: a write stores data then tuples; a read caught in between must not report a PI error. */
static void test_race(struct itest_daemon *d)
{
	struct race rc = { .d = d };
	unsigned reads = 0, pi_errors = 0;
	uint8_t c[16];
	pthread_t t;
	uint64_t end;

	pthread_create(&t, NULL, race_writer, &rc);
	end = itest_now_ms() + RACE_MS;
	while (itest_now_ms() < end) {
		struct itest_result r;

		cdb16(c, 0x88, 0, RACE_LBA, RACE_BLOCKS);
		itest_cmd(s, 0, c, 16, ITEST_IN, NULL, 0, RACE_BLOCKS * BS, &r);
		if (r.status != 0)
			pi_errors++;
		itest_result_free(&r);
		reads++;
	}
	rc.stop = 1;
	pthread_join(t, NULL);
	itest_note("%u writes, %u reads in %d ms", rc.writes, reads, RACE_MS);
	itest_ok(rc.writes > 10 && reads > 10 && rc.errors == 0, "reader and writer both made progress",
		 "%u writes (%u failed), %u reads", rc.writes, rc.errors, reads);
	itest_ok(pi_errors == 0, "READ(16) RDPROTECT=000b racing WRITE(16) of the same blocks: no PI check failure",
		 "%u of %u reads failed", pi_errors, reads);
}

/* ---- every PROTECT value on every type (the SBC-4 RDPROTECT / WRPROTECT / VRPROTECT tables) ---- */

/* Which fields PROTECT p checks: 000b, 001b, 101b all; 010b no guard; 011b none; 100b the guard only. */
static bool checks_guard(uint8_t p)
{
	return p == 0 || p == 1 || p == 4 || p == 5;
}

static bool checks_tags(uint8_t p)
{
	return p == 0 || p == 1 || p == 2 || p == 5;
}

/*
 * One command of the table on LUN lun (type 2: the 32-byte form through the
 * raw session, with EILBRT = ref0 and ELBAT 1234h under mask FFFFh; others:
 * the 10-byte form).  kind 'r' READ, 'w' WRITE (out = one block + tuple),
 * 'v' VERIFY BYTCHK 00b.  Returns the result (caller frees).
 */
static void table_cmd(int lun, bool long_cdb, char kind, uint8_t p, uint32_t lba, uint32_t ref0, const uint8_t *out,
		      struct itest_result *r)
{
	uint8_t c[32];
	size_t in_len = kind == 'r' ? (p ? BS + TUPLE : BS) : 0;
	size_t out_len = kind == 'w' ? (p ? BS + TUPLE : BS) : 0;

	if (long_cdb) {
		cdb32(c, kind == 'r' ? 0x0009 : kind == 'w' ? 0x000b : 0x000a, p, lba, 1, ref0, 0x1234, 0xffff);
		itest_raw_long_cdb_io(&raw, lun, c, 32, out, (uint32_t)out_len, (uint32_t)in_len, r);
		return;
	}
	cdb10(c, kind == 'r' ? 0x28 : kind == 'w' ? 0x2a : 0x2f, p, lba, 1);
	itest_cmd(s, lun, c, 10, kind == 'r' ? ITEST_IN : kind == 'w' ? ITEST_OUT : ITEST_NONE, out, out_len, in_len, r);
}

static void table_expect(const char *what, int type, char kind, uint8_t p, const struct itest_result *r, int want_ascq)
{
	char name[200];
	bool ok;

	if (p > 5)
		ok = r->status == 2 && r->sense.key == 5 && r->sense.asc == 0x24;
	else if (want_ascq)
		ok = r->status == 2 && r->sense.key == 0x0b && r->sense.asc == 0x10 && r->sense.ascq == want_ascq;
	else
		ok = r->status == 0;
	snprintf(name, sizeof(name), "type %d: %s %sPROTECT=%u%u%ub, %s -> %s", type,
		 kind == 'r' ? "READ" : kind == 'w' ? "WRITE" : "VERIFY", kind == 'r' ? "RD" : kind == 'w' ? "WR" : "VR",
		 p >> 2, (p >> 1) & 1, p & 1, what,
		 p > 5 ? "05/24/00" : want_ascq == 1 ? "0B/10/01" : want_ascq == 2 ? "0B/10/02" : want_ascq == 3 ? "0B/10/03" : "GOOD");
	itest_ok(ok, name, "%s", itest_result_str(r));
}

/*
 * Stored blocks at base: base + 0 with a bad guard, base + 1 with a bad
 * reference tag, base + 2 (type 2) with application tag 1111h; every
 * RDPROTECT and VRPROTECT value against them, every WRPROTECT value against
 * received tuples with the same faults.
 */
static void test_tables_for(int lun, int type, uint32_t base)
{
	bool long_cdb = type == 2;
	uint8_t data[BS], wire[BS + TUPLE];
	struct itest_result r;
	/* The expected reference tag of LBA x: the LBA (types 1 and 3), or EILBRT = x + 100h (type 2). */
	uint32_t ref_of_base = long_cdb ? base + 0x100 : base;

	itest_pattern(data, BS, (uint32_t)lun);
	for (uint32_t i = 0; i < 3; i++) {
		uint32_t ref = ref_of_base + i;

		make_wire(wire, data, 1, i == 2 ? 0x1111 : 0x1234, i == 1 ? ref + 7 : ref);
		if (i == 0)
			wire[BS] ^= 0x01;
		table_cmd(lun, long_cdb, 'w', 3, base + i, ref, wire, &r);
		itest_ok(r.status == 0, "stored a block with a bad guard / ref / app tag (WRPROTECT=011b)", "%s",
			 itest_result_str(&r));
		itest_result_free(&r);
	}
	for (uint8_t p = 0; p < 8; p++) {
		for (char kind = 'r'; kind; kind = kind == 'r' ? 'v' : 0) {
			table_cmd(lun, long_cdb, kind, p, base, ref_of_base, NULL, &r);
			table_expect("stored bad guard", type, kind, p, &r, checks_guard(p) ? 1 : 0);
			itest_result_free(&r);
			table_cmd(lun, long_cdb, kind, p, base + 1, ref_of_base + 1, NULL, &r);
			table_expect("stored bad ref tag", type, kind, p, &r, type != 3 && checks_tags(p) ? 3 : 0);
			itest_result_free(&r);
			if (type == 2) {
				table_cmd(lun, long_cdb, kind, p, base + 2, ref_of_base + 2, NULL, &r);
				table_expect("stored app tag 1111h, expected 1234h", type, kind, p, &r, checks_tags(p) ? 2 : 0);
				itest_result_free(&r);
			}
		}
	}
	for (uint8_t p = 1; p < 8; p++) {
		make_wire(wire, data, 1, 0x1234, ref_of_base + 8);
		wire[BS] ^= 0x01;
		table_cmd(lun, long_cdb, 'w', p, base + 8, ref_of_base + 8, wire, &r);
		table_expect("received bad guard", type, 'w', p, &r, checks_guard(p) ? 1 : 0);
		itest_result_free(&r);
		make_wire(wire, data, 1, 0x1234, ref_of_base + 9 + 7);
		table_cmd(lun, long_cdb, 'w', p, base + 9, ref_of_base + 9, wire, &r);
		table_expect("received bad ref tag", type, 'w', p, &r, type != 3 && checks_tags(p) ? 3 : 0);
		itest_result_free(&r);
		if (type == 2) {
			make_wire(wire, data, 1, 0x1111, ref_of_base + 10);
			table_cmd(lun, long_cdb, 'w', p, base + 10, ref_of_base + 10, wire, &r);
			table_expect("received app tag 1111h, expected 1234h", type, 'w', p, &r, checks_tags(p) ? 2 : 0);
			itest_result_free(&r);
		}
	}
}

static void test_tables(void)
{
	test_tables_for(0, 1, 12000);
	test_tables_for(1, 2, 12000);
	test_tables_for(4, 3, 12000);
}

static void test_no_pi(void)
{
	uint8_t c[10];

	for (uint8_t p = 1; p < 8; p++) {
		char name[96];

		snprintf(name, sizeof(name), "no PI (LUN 3): READ(10) RDPROTECT=%u -> 05/24/00", p);
		cdb10(c, 0x28, p, 0, 1);
		itest_expect_cmd(s, 3, name, c, 10, ITEST_IN, NULL, 0, BS, EXPECT_SENSE(5, 0x24, 0), NULL);
	}
}

/* FORMAT UNIT: FMTPINFO and PROTECTION FIELD USAGE (SBC-4 5.4). */
static void test_format(struct itest_daemon *d)
{
	uint8_t c[6] = { 0x04 }, hdr[4] = { 0 }, rc16[16] = { 0x9e, 0x10 };
	struct itest_result r;

	rc16[13] = 32;
	c[1] = 0x40 | 0x10;
	itest_expect_cmd(s, 0, "FORMAT UNIT FMTPINFO=01b -> 05/24/00", c, 6, ITEST_OUT, hdr, 4, 0,
			 EXPECT_SENSE(5, 0x24, 0), NULL);
	c[1] = 0x80;
	itest_expect_cmd(s, 3, "FORMAT UNIT FMTPINFO=10b on an LU without PI -> 05/24/00", c, 6, ITEST_NONE, NULL, 0, 0,
			 EXPECT_SENSE(5, 0x24, 0), NULL);
	c[1] = 0xc0 | 0x10;
	hdr[0] = 0x05;
	itest_expect_cmd(s, 0, "FORMAT UNIT FMTPINFO=11b PFU=101b -> 05/26/00", c, 6, ITEST_OUT, hdr, 4, 0,
			 EXPECT_SENSE(5, 0x26, 0), NULL);
	hdr[0] = 0x01;
	itest_expect_cmd(s, 0, "FORMAT UNIT FMTPINFO=11b PFU=001b (type 3) -> GOOD", c, 6, ITEST_OUT, hdr, 4, 0,
			 EXPECT_GOOD, NULL);
	itest_clear_ua(s, 0);
	itest_cmd(s, 0, rc16, 16, ITEST_IN, NULL, 0, 32, &r);
	itest_ok(r.status == 0 && r.data_len >= 13 && (r.data[12] & 0x0f) == 0x05,
		 "... READ CAPACITY(16) P_TYPE 010b PROT_EN 1 (type 3)", "%s", itest_result_str(&r));
	itest_result_free(&r);
	{
		uint8_t back[BS + TUPLE];

		read1(0, 300, 1, back, &r);
		itest_ok(r.status == 0 && itest_get_be32(back + BS) == 0xffffffff,
			 "... every tuple is the escape after the format", "%s", itest_result_str(&r));
		itest_result_free(&r);
	}
	itest_close(s);
	itest_daemon_stop(d, SIGTERM);
	itest_daemon_start(d);
	s = itest_session(d, ITEST_INITIATOR_1, 0);
	if (!s)
		return;
	itest_clear_ua(s, 0);
	itest_cmd(s, 0, rc16, 16, ITEST_IN, NULL, 0, 32, &r);
	itest_ok(r.status == 0 && r.data_len >= 13 && (r.data[12] & 0x0f) == 0x05,
		 "after a restart the LU is still formatted with type 3", "%s", itest_result_str(&r));
	itest_result_free(&r);
	c[1] = 0x80;
	itest_expect_cmd(s, 0, "FORMAT UNIT FMTPINFO=10b, no parameter list (type 1) -> GOOD", c, 6, ITEST_NONE, NULL, 0,
			 0, EXPECT_GOOD, NULL);
	itest_clear_ua(s, 0);
	itest_cmd(s, 0, rc16, 16, ITEST_IN, NULL, 0, 32, &r);
	itest_ok(r.status == 0 && r.data_len >= 13 && (r.data[12] & 0x0f) == 0x01, "... type 1 again", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
}

/* PI is stored with the data: a restart (and a kill -9) keeps every tuple. */
static void test_restart(struct itest_daemon *d)
{
	uint8_t before[2][BS + TUPLE], after[BS + TUPLE];
	struct itest_result r;

	read1(0, 301, 3, before[0], &r);
	itest_result_free(&r);
	read1(0, 311, 3, before[1], &r);
	itest_result_free(&r);
	itest_close(s);
	itest_daemon_stop(d, SIGKILL);
	itest_daemon_start(d);
	s = itest_session(d, ITEST_INITIATOR_1, 0);
	if (!s)
		return;
	for (int lun = 0; lun < 5; lun++)
		itest_clear_ua(s, lun);
	read1(0, 301, 3, after, &r);
	itest_ok(r.status == 0 && !memcmp(after, before[0], sizeof(after)),
		 "after kill -9 and restart LBA 301 reads back the same data and tuple", "%s", itest_result_str(&r));
	itest_result_free(&r);
	read1(0, 311, 0, after, &r);
	itest_ok(r.status == 2 && r.sense.ascq == 0x01, "... and LBA 311's bad stored guard is still detected", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
}

int main(int argc, char **argv)
{
	struct itest_daemon d;
	char err[256];

	itest_init(argc, argv, "test_pi: T10 protection information, types 1, 2, 3");
	itest_daemon_up(&d, "pi", config);
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s)
		return itest_finish();
	for (int lun = 0; lun < 5; lun++)
		itest_clear_ua(s, lun);
	if (itest_raw_login(&raw, &d, ITEST_INITIATOR_2, ITEST_TARGET, false, false, true, err, sizeof(err))) {
		itest_ok(false, "raw session for the 32-byte CDBs", "%s", err);
		return itest_finish();
	}
	for (int lun = 0; lun < 5; lun++)
		itest_raw_clear_ua(&raw, lun);

	test_reporting();
	test_type1();
	test_faults();
	test_fault_rules(&d);
	test_type2();
	test_type3_intervals();
	test_tables();
	test_no_pi();
	test_race(&d);
	itest_raw_close(&raw);
	test_restart(&d);
	if (s)
		test_format(&d);

	if (s)
		itest_close(s);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
