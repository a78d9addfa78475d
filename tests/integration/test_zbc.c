/*
 * Zoned logical units over iSCSI (ZBC-2, as Linux sd_zbc.c, scsi_debug and libzbc implement it; docs/zbc.md):
 * identification (PDT 14h, B6h, B1h ZONED, RC BASIS, RSOC), REPORT ZONES
 * with every reporting option and PARTIAL, ZBC OUT OPEN / CLOSE / FINISH /
 * RESET WRITE POINTER with and without ALL, the zone condition transitions,
 * every row of the read/write rule table with its sense code, open zone
 * resources, host-aware (SWP) writes, WRITE SAME / UNMAP / VERIFY / COMPARE
 * AND WRITE / FORMAT UNIT / SANITIZE on zoned LUs, zone faults from the
 * configuration, and persistence of the zone state across a clean restart
 * and a kill -9.
 *
 * LUN 1: host managed, 16 zones of 1 MiB (2048 blocks of 512 bytes), zones 0-1
 *        conventional, at most 3 open, URSWRZ on, zone 14 OFFLINE, 15 READ ONLY.
 * LUN 2: host managed, 4 zones, zone 0 conventional, URSWRZ off, 4096-byte
 *        physical blocks (lbppbe 3), no open limit.
 * LUN 3: host aware, 4 zones, zone 0 conventional.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "itest.h"
#include "itest_zbc.h"

#define BS 512
#define ZS 2048u                 /* zone size in blocks */
#define Z(i) ((uint64_t)(i) * ZS)
#define HM 1
#define HM_STRICT 2
#define HA 3
#define HM_ZONES 16

static struct itest_daemon d;
static struct iscsi_context *s;

static const char config_fmt[] =
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\n"
	"size = 1M\n"
	"[lun \"" ITEST_TARGET "\" 1]\n"
	"kind = zbc-hm\n"
	"path = @DIR@/lun1.img\n"
	"size = 16M\n"
	"zone_size = 1M\n"
	"conventional_zones = 2\n"
	"max_open_zones = 3\n"
	"%s"
	"[lun \"" ITEST_TARGET "\" 2]\n"
	"kind = zbc-hm\n"
	"path = @DIR@/lun2.img\n"
	"size = 4M\n"
	"zone_size = 1M\n"
	"conventional_zones = 1\n"
	"urswrz = false\n"
	"lbppbe = 3\n"
	"[lun \"" ITEST_TARGET "\" 3]\n"
	"kind = zbc-ha\n"
	"path = @DIR@/lun3.img\n"
	"size = 4M\n"
	"zone_size = 1M\n"
	"conventional_zones = 1\n";

static const char faults[] = "offline_zones = 14\nread_only_zones = 15\n";

static char *config_text(const char *lun1_extra)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf), config_fmt, lun1_extra);
	return buf;
}

/* ---- small checks ---- */

static bool expect_zone(int lun, uint64_t start, int cond, uint64_t wp, const char *name)
{
	struct zinfo z;
	bool ok = zbc_zone_get(s, lun, start, &z);

	return itest_ok(ok && z.start == start && z.cond == cond && (wp == UINT64_MAX || z.wp == wp), name,
			"zone at %llu: condition %s (%xh), write pointer %llu; want %s, %llu",
			(unsigned long long)z.start, zc_name(z.cond), z.cond, (unsigned long long)z.wp, zc_name(cond),
			(unsigned long long)wp);
}

static bool out_expect(int lun, uint8_t sa, uint64_t zone_id, bool all, struct itest_expect e, const char *name)
{
	uint8_t cdb[16];

	zbc_out_cdb(cdb, sa, zone_id, all);
	return itest_expect_cmd(s, lun, name, cdb, 16, ITEST_NONE, NULL, 0, 0, e, NULL);
}

static bool write_expect(int lun, uint64_t lba, uint32_t n, struct itest_expect e, const char *name)
{
	return zbc_expect_write(s, lun, lba, n, BS, (uint32_t)lba, e, name);
}

static bool read_expect(int lun, uint64_t lba, uint32_t n, struct itest_expect e, const char *name)
{
	return zbc_expect_read(s, lun, lba, n, BS, e, name);
}

static void reset_all(int lun)
{
	struct itest_result r = zbc_out(s, lun, ZBC_RESET, 0, true);

	if (!itest_result_matches(&r, EXPECT_GOOD))
		itest_ok(false, "RESET WRITE POINTER ALL (set-up)", "%s", itest_result_str(&r));
	itest_result_free(&r);
}

static void write_ok(int lun, uint64_t lba, uint32_t n)
{
	struct itest_result r;

	zbc_write(s, lun, lba, n, BS, (uint32_t)lba, &r);
	if (!itest_result_matches(&r, EXPECT_GOOD))
		itest_ok(false, "WRITE(16) (set-up)", "LBA %llu: %s", (unsigned long long)lba, itest_result_str(&r));
	itest_result_free(&r);
}

static void out_ok(int lun, uint8_t sa, uint64_t zone_id)
{
	struct itest_result r = zbc_out(s, lun, sa, zone_id, false);

	if (!itest_result_matches(&r, EXPECT_GOOD))
		itest_ok(false, "ZBC OUT (set-up)", "SA %u zone %llu: %s", sa, (unsigned long long)zone_id,
			 itest_result_str(&r));
	itest_result_free(&r);
}

/* ---- identification ---- */

static void test_identification(void)
{
	uint8_t cdb[16];
	struct itest_result r;

	/* INQUIRY: host managed = PDT 14h; host aware = PDT 00h. */
	memset(cdb, 0, 6);
	cdb[0] = 0x12;
	cdb[4] = 96;
	itest_cmd(s, HM, cdb, 6, ITEST_IN, NULL, 0, 96, &r);
	itest_ok(r.status == 0 && r.data_len > 0 && (r.data[0] & 0x1f) == 0x14, "INQUIRY host-managed LU: PDT 14h",
		 "%s, byte 0 %02xh", itest_result_str(&r), r.data_len ? r.data[0] : 0);
	itest_result_free(&r);
	itest_cmd(s, HA, cdb, 6, ITEST_IN, NULL, 0, 96, &r);
	itest_ok(r.status == 0 && r.data_len > 0 && (r.data[0] & 0x1f) == 0x00, "INQUIRY host-aware LU: PDT 00h",
		 "%s", itest_result_str(&r));
	itest_result_free(&r);

	/* Supported VPD pages list B6h. */
	cdb[1] = 0x01;
	cdb[2] = 0x00;
	cdb[4] = 255;
	itest_cmd(s, HM, cdb, 6, ITEST_IN, NULL, 0, 255, &r);
	{
		bool found = false;

		for (int i = 4; i < r.data_len; i++)
			found |= r.data[i] == 0xb6;
		itest_ok(r.status == 0 && found, "Supported VPD Pages (00h) lists B6h on a zoned LU", "%s",
			 itest_result_str(&r));
	}
	itest_result_free(&r);

	/* B6h: PAGE LENGTH 3Ch, URSWRZ, MAXIMUM NUMBER OF OPEN SWR ZONES, ZONE ALIGNMENT METHOD. */
	cdb[2] = 0xb6;
	cdb[4] = 64;
	itest_cmd(s, HM, cdb, 6, ITEST_IN, NULL, 0, 64, &r);
	itest_ok(r.status == 0 && r.data_len == 64 && (r.data[0] & 0x1f) == 0x14 && r.data[1] == 0xb6 &&
			 itest_get_be16(r.data + 2) == 0x3c && (r.data[4] & 0x01) && (r.data[4] >> 4) == 0 &&
			 itest_get_be32(r.data + 16) == 3,
		 "B6h VPD host-managed: PAGE LENGTH 3Ch, URSWRZ 1, MAXIMUM NUMBER OF OPEN SWR ZONES 3", "%s, %d bytes",
		 itest_result_str(&r), r.data_len);
	itest_result_free(&r);
	itest_cmd(s, HM_STRICT, cdb, 6, ITEST_IN, NULL, 0, 64, &r);
	itest_ok(r.status == 0 && r.data_len == 64 && !(r.data[4] & 0x01) && itest_get_be32(r.data + 16) == 0xffffffffu,
		 "B6h VPD urswrz = false: URSWRZ 0, no open zone limit (FFFFFFFFh)", "%s", itest_result_str(&r));
	itest_result_free(&r);
	itest_cmd(s, HA, cdb, 6, ITEST_IN, NULL, 0, 64, &r);
	itest_ok(r.status == 0 && r.data_len == 64 && (r.data[4] >> 4) == 1,
		 "B6h VPD host-aware: ZONED BLOCK DEVICE EXTENSION 1h", "%s", itest_result_str(&r));
	itest_result_free(&r);
	cdb[2] = 0xb1;
	itest_cmd(s, HA, cdb, 6, ITEST_IN, NULL, 0, 64, &r);
	itest_ok(r.status == 0 && r.data_len >= 9 && ((r.data[8] >> 4) & 3) == 1,
		 "B1h VPD host-aware: ZONED 01b", "%s", itest_result_str(&r));
	itest_result_free(&r);
	cdb[2] = 0xb6;
	itest_expect_cmd(s, 0, "B6h VPD on a conventional LU -> 05/24/00", cdb, 6, ITEST_IN, NULL, 0, 64,
			 EXPECT_SENSE(5, 0x24, 0x00), NULL);

	/* READ CAPACITY(16): RC BASIS 01b, RETURNED LOGICAL BLOCK ADDRESS = last LBA of the LU. */
	memset(cdb, 0, 16);
	cdb[0] = 0x9e;
	cdb[1] = 0x10;
	itest_put_be32(cdb + 10, 32);
	itest_cmd(s, HM, cdb, 16, ITEST_IN, NULL, 0, 32, &r);
	itest_ok(r.status == 0 && r.data_len == 32 && ((r.data[12] >> 4) & 3) == 1 &&
			 itest_get_be64(r.data) == HM_ZONES * ZS - 1,
		 "READ CAPACITY(16) zoned LU: RC BASIS 01b, last LBA of the LU", "%s", itest_result_str(&r));
	itest_result_free(&r);

	/* RSOC one-command form (REPORTING OPTIONS 010b): SUPPORT 011b for ZBC IN/OUT service actions. */
	{
		static const struct { uint8_t op; uint16_t sa; const char *name; } cmds[] = {
			{ 0x95, 0x00, "RSOC: REPORT ZONES (95h/00h) supported" },
			{ 0x94, 0x01, "RSOC: CLOSE ZONE (94h/01h) supported" },
			{ 0x94, 0x02, "RSOC: FINISH ZONE (94h/02h) supported" },
			{ 0x94, 0x03, "RSOC: OPEN ZONE (94h/03h) supported" },
			{ 0x94, 0x04, "RSOC: RESET WRITE POINTER (94h/04h) supported" },
		};

		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
			memset(cdb, 0, 12);
			cdb[0] = 0xa3;
			cdb[1] = 0x0c;
			cdb[2] = 0x02;
			cdb[3] = cmds[i].op;
			itest_put_be16(cdb + 4, cmds[i].sa);
			itest_put_be32(cdb + 6, 64);
			itest_cmd(s, HM, cdb, 12, ITEST_IN, NULL, 0, 64, &r);
			itest_ok(r.status == 0 && r.data_len >= 4 && (r.data[1] & 7) == 3 && itest_get_be16(r.data + 2) == 16,
				 cmds[i].name, "%s, support %d", itest_result_str(&r), r.data_len >= 2 ? r.data[1] & 7 : -1);
			itest_result_free(&r);
		}
		cdb[3] = 0x95;
		itest_put_be16(cdb + 4, 0);
		itest_cmd(s, 0, cdb, 12, ITEST_IN, NULL, 0, 64, &r);
		itest_ok(r.status == 0 && r.data_len >= 2 && (r.data[1] & 7) == 1,
			 "RSOC on a conventional LU: REPORT ZONES not supported (SUPPORT 001b)", "%s",
			 itest_result_str(&r));
		itest_result_free(&r);
	}
	memset(cdb, 0, 16);
	zbc_report_cdb(cdb, 0, 128, 0, false);
	itest_expect_cmd(s, 0, "REPORT ZONES on a conventional LU -> 05/20/00", cdb, 16, ITEST_IN, NULL, 0, 128,
			 EXPECT_SENSE(5, 0x20, 0x00), NULL);
}

/* ---- REPORT ZONES ---- */

static void test_report_zones_layout(void)
{
	struct itest_result r;
	uint32_t alloc = 64 + HM_ZONES * 64;
	bool ok = true;

	zbc_report(s, HM, 0, 0, false, alloc, &r);
	itest_ok(r.status == 0 && r.data_len == (int)alloc && itest_get_be32(r.data) == HM_ZONES * 64 &&
			 itest_get_be64(r.data + 8) == HM_ZONES * ZS - 1 && (r.data[4] & 0x0f) == 3,
		 "REPORT ZONES header: ZONE LIST LENGTH, MAXIMUM LBA = last LBA, SAME 3h (one length, types differ)",
		 "%s, %d bytes, list %u, same %u", itest_result_str(&r), r.data_len,
		 r.data_len >= 4 ? itest_get_be32(r.data) : 0, r.data_len > 4 ? r.data[4] & 0x0f : 99);
	for (int i = 0; i < HM_ZONES && r.data_len == (int)alloc; i++) {
		struct zinfo z;
		int want_type = i < 2 ? ZT_CONV : ZT_SWR;
		int want_cond = i < 2 ? ZC_NWP : i == 14 ? ZC_OFFLINE : i == 15 ? ZC_RDONLY : ZC_EMPTY;
		uint64_t want_wp = (i < 2 || i >= 14) ? UINT64_MAX : Z(i);

		zinfo_decode(r.data + 64 + 64 * i, &z);
		if (z.type != want_type || z.cond != want_cond || z.start != Z(i) || z.length != ZS || z.wp != want_wp) {
			ok = false;
			itest_note("zone %d: type %d cond %xh start %llu length %llu wp %llx", i, z.type, z.cond,
				   (unsigned long long)z.start, (unsigned long long)z.length, (unsigned long long)z.wp);
		}
	}
	itest_ok(ok && r.data_len == (int)alloc,
		 "REPORT ZONES descriptors: conventional zones NOT WRITE POINTER (WP all FFh), SWR zones EMPTY at "
		 "their start, offline_zones OFFLINE, read_only_zones READ ONLY",
		 " ");
	itest_result_free(&r);

	/* The report starts with the zone that holds ZONE START LBA. */
	zbc_report(s, HM, Z(5) + 7, 0, false, 128, &r);
	itest_ok(r.status == 0 && r.data_len == 128 && itest_get_be64(r.data + 64 + 16) == Z(5) &&
			 itest_get_be32(r.data) == (HM_ZONES - 5) * 64,
		 "REPORT ZONES ZONE START LBA inside zone 5: list starts with zone 5", "%s", itest_result_str(&r));
	itest_result_free(&r);

	/* PARTIAL = 0: ZONE LIST LENGTH covers every matching zone; PARTIAL = 1: only those that fit. */
	zbc_report(s, HM, 0, 0, false, 64 + 2 * 64, &r);
	itest_ok(r.status == 0 && r.data_len == 192 && itest_get_be32(r.data) == HM_ZONES * 64,
		 "REPORT ZONES PARTIAL=0, short allocation: ZONE LIST LENGTH counts all zones", "%s, list %u",
		 itest_result_str(&r), r.data_len >= 4 ? itest_get_be32(r.data) : 0);
	itest_result_free(&r);
	zbc_report(s, HM, 0, 0, true, 64 + 2 * 64, &r);
	itest_ok(r.status == 0 && r.data_len == 192 && itest_get_be32(r.data) == 2 * 64,
		 "REPORT ZONES PARTIAL=1, short allocation: ZONE LIST LENGTH counts the descriptors returned",
		 "%s, list %u", itest_result_str(&r), r.data_len >= 4 ? itest_get_be32(r.data) : 0);
	itest_result_free(&r);
	zbc_report(s, HM, 0, 0, false, 32, &r);
	itest_ok(r.status == 0 && r.data_len == 32 && itest_get_be32(r.data) == HM_ZONES * 64,
		 "REPORT ZONES allocation length below the header: truncated header, GOOD", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);

	/* Errors (libzbc 01/010, 01/011). */
	{
		uint8_t cdb[16];

		zbc_report_cdb(cdb, HM_ZONES * ZS, 128, 0, false);
		itest_expect_cmd(s, HM, "REPORT ZONES ZONE START LBA past MAXIMUM LBA -> 05/21/00", cdb, 16, ITEST_IN, NULL,
				 0, 128, EXPECT_SENSE(5, 0x21, 0x00), NULL);
		zbc_report_cdb(cdb, 0, 128, 0x08, false);
		itest_expect_cmd(s, HM, "REPORT ZONES reserved REPORTING OPTIONS 08h -> 05/24/00", cdb, 16, ITEST_IN, NULL,
				 0, 128, EXPECT_SENSE(5, 0x24, 0x00), NULL);
		zbc_report_cdb(cdb, 0, 128, 0x12, false);
		itest_expect_cmd(s, HM, "REPORT ZONES reserved REPORTING OPTIONS 12h -> 05/24/00", cdb, 16, ITEST_IN, NULL,
				 0, 128, EXPECT_SENSE(5, 0x24, 0x00), NULL);
	}
}

/* Puts LUN 1 zones 2-7 in: 2 IMPLICITLY OPENED, 3 EXPLICITLY OPENED, 4 CLOSED, 5 FULL, 6-13 EMPTY. */
static void make_conditions(void)
{
	reset_all(HM);
	write_ok(HM, Z(2), 8);
	out_ok(HM, ZBC_OPEN, Z(3));
	write_ok(HM, Z(4), 16);
	out_ok(HM, ZBC_CLOSE, Z(4));
	out_ok(HM, ZBC_FINISH, Z(5));
}

static void test_reporting_options(void)
{
	static const struct {
		uint8_t ro;
		int n;
		int first_zone;
		int cond;
		const char *name;
	} cases[] = {
		{ 0x00, 16, 0, ZC_NWP, "REPORT ZONES REPORTING OPTIONS 00h: all zones" },
		{ 0x01, 8, 6, ZC_EMPTY, "REPORT ZONES REPORTING OPTIONS 01h: EMPTY zones only" },
		{ 0x02, 1, 2, ZC_IOPEN, "REPORT ZONES REPORTING OPTIONS 02h: IMPLICITLY OPENED zones only" },
		{ 0x03, 1, 3, ZC_EOPEN, "REPORT ZONES REPORTING OPTIONS 03h: EXPLICITLY OPENED zones only" },
		{ 0x04, 1, 4, ZC_CLOSED, "REPORT ZONES REPORTING OPTIONS 04h: CLOSED zones only" },
		{ 0x05, 1, 5, ZC_FULL, "REPORT ZONES REPORTING OPTIONS 05h: FULL zones only" },
		{ 0x06, 1, 15, ZC_RDONLY, "REPORT ZONES REPORTING OPTIONS 06h: READ ONLY zones only" },
		{ 0x07, 1, 14, ZC_OFFLINE, "REPORT ZONES REPORTING OPTIONS 07h: OFFLINE zones only" },
		{ 0x10, 0, 0, 0, "REPORT ZONES REPORTING OPTIONS 10h: RWP RECOMMENDED zones (none)" },
		{ 0x11, 0, 0, 0, "REPORT ZONES REPORTING OPTIONS 11h: NON_SEQ zones (none on host-managed)" },
		{ 0x3f, 2, 0, ZC_NWP, "REPORT ZONES REPORTING OPTIONS 3Fh: NOT WRITE POINTER zones only" },
	};

	make_conditions();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct itest_result r;
		struct zinfo z = { 0 };
		bool ok;

		zbc_report(s, HM, 0, cases[i].ro, false, 64 + HM_ZONES * 64, &r);
		ok = r.status == 0 && itest_get_be32(r.data) == (uint32_t)cases[i].n * 64 &&
		     r.data_len == 64 + cases[i].n * 64;
		if (ok && cases[i].n) {
			zinfo_decode(r.data + 64, &z);
			ok = z.start == Z(cases[i].first_zone) && z.cond == cases[i].cond;
			for (int k = 0; k < cases[i].n && ok && cases[i].ro != 0; k++) {
				zinfo_decode(r.data + 64 + 64 * k, &z);
				ok = cases[i].ro == 0x3f ? z.cond == ZC_NWP : z.cond == cases[i].cond;
			}
		}
		itest_ok(ok, cases[i].name, "%s, %d bytes, list %u", itest_result_str(&r), r.data_len,
			 r.data_len >= 4 ? itest_get_be32(r.data) : 0);
		itest_result_free(&r);
	}
	/* SAME describes the listed zones, not the zone that holds ZONE START LBA. */
	{
		struct itest_result r;

		zbc_report(s, HM, 0, 0x01, false, 64 + HM_ZONES * 64, &r);
		itest_ok(r.status == 0 && r.data_len > 4 && (r.data[4] & 0x0f) == 1,
			 "REPORT ZONES EMPTY from LBA 0 (a conventional zone): SAME 1h for the listed SWR zones",
			 "%s, SAME %d", itest_result_str(&r), r.data_len > 4 ? r.data[4] & 0x0f : -1);
		itest_result_free(&r);
	}
	/* PARTIAL with an option: only matching descriptors, counted as they fit. */
	{
		struct itest_result r;

		zbc_report(s, HM, Z(7), 0x01, true, 64 + 3 * 64, &r);
		itest_ok(r.status == 0 && r.data_len == 64 + 3 * 64 && itest_get_be32(r.data) == 3 * 64 &&
				 itest_get_be64(r.data + 64 + 16) == Z(7),
			 "REPORT ZONES EMPTY from zone 7 PARTIAL=1: 3 descriptors, ZONE LIST LENGTH 3 x 64", "%s",
			 itest_result_str(&r));
		itest_result_free(&r);
	}
}

/* ---- zone condition transitions (ZBC-2 zone conditions; libzbc zbc.h) ---- */

static void test_transitions(void)
{
	reset_all(HM);
	/* EMPTY */
	out_expect(HM, ZBC_OPEN, Z(2), false, EXPECT_GOOD, "OPEN ZONE on EMPTY -> GOOD");
	expect_zone(HM, Z(2), ZC_EOPEN, Z(2), "OPEN ZONE: EMPTY -> EXPLICITLY OPENED");
	out_expect(HM, ZBC_CLOSE, Z(3), false, EXPECT_GOOD, "CLOSE ZONE on EMPTY -> GOOD");
	expect_zone(HM, Z(3), ZC_EMPTY, Z(3), "CLOSE ZONE: EMPTY stays EMPTY");
	out_expect(HM, ZBC_RESET, Z(3), false, EXPECT_GOOD, "RESET WRITE POINTER on EMPTY -> GOOD");
	expect_zone(HM, Z(3), ZC_EMPTY, Z(3), "RESET WRITE POINTER: EMPTY stays EMPTY");
	out_expect(HM, ZBC_FINISH, Z(3), false, EXPECT_GOOD, "FINISH ZONE on EMPTY -> GOOD");
	expect_zone(HM, Z(3), ZC_FULL, UINT64_MAX, "FINISH ZONE: EMPTY -> FULL");
	write_expect(HM, Z(4), 8, EXPECT_GOOD, "WRITE(16) at the WP of an EMPTY zone -> GOOD");
	expect_zone(HM, Z(4), ZC_IOPEN, Z(4) + 8, "WRITE: EMPTY -> IMPLICITLY OPENED, WP advances");

	/* EXPLICITLY OPENED (zone 2, nothing written) */
	out_expect(HM, ZBC_OPEN, Z(2), false, EXPECT_GOOD, "OPEN ZONE on EXPLICITLY OPENED -> GOOD");
	expect_zone(HM, Z(2), ZC_EOPEN, Z(2), "OPEN ZONE: EXPLICITLY OPENED stays (no-op)");
	write_expect(HM, Z(2), 8, EXPECT_GOOD, "WRITE(16) to an EXPLICITLY OPENED zone -> GOOD");
	expect_zone(HM, Z(2), ZC_EOPEN, Z(2) + 8, "WRITE: EXPLICITLY OPENED stays EXPLICITLY OPENED, WP advances");
	out_ok(HM, ZBC_CLOSE, Z(2));
	expect_zone(HM, Z(2), ZC_CLOSED, Z(2) + 8, "CLOSE ZONE: EXPLICITLY OPENED (WP past start) -> CLOSED");
	out_ok(HM, ZBC_OPEN, Z(6));
	out_ok(HM, ZBC_CLOSE, Z(6));
	expect_zone(HM, Z(6), ZC_EMPTY, Z(6), "CLOSE ZONE: EXPLICITLY OPENED with WP at zone start -> EMPTY");
	out_ok(HM, ZBC_OPEN, Z(6));
	out_ok(HM, ZBC_FINISH, Z(6));
	expect_zone(HM, Z(6), ZC_FULL, UINT64_MAX, "FINISH ZONE: EXPLICITLY OPENED -> FULL");
	out_ok(HM, ZBC_OPEN, Z(7));
	write_ok(HM, Z(7), 8);
	out_ok(HM, ZBC_RESET, Z(7));
	expect_zone(HM, Z(7), ZC_EMPTY, Z(7), "RESET WRITE POINTER: EXPLICITLY OPENED -> EMPTY, WP = zone start");

	/* IMPLICITLY OPENED (zone 4, 8 blocks written) */
	out_expect(HM, ZBC_OPEN, Z(4), false, EXPECT_GOOD, "OPEN ZONE on IMPLICITLY OPENED -> GOOD");
	expect_zone(HM, Z(4), ZC_EOPEN, Z(4) + 8, "OPEN ZONE: IMPLICITLY OPENED -> EXPLICITLY OPENED");
	write_ok(HM, Z(8), 8);
	out_ok(HM, ZBC_CLOSE, Z(8));
	expect_zone(HM, Z(8), ZC_CLOSED, Z(8) + 8, "CLOSE ZONE: IMPLICITLY OPENED -> CLOSED");
	write_ok(HM, Z(9), 8);
	out_ok(HM, ZBC_FINISH, Z(9));
	expect_zone(HM, Z(9), ZC_FULL, UINT64_MAX, "FINISH ZONE: IMPLICITLY OPENED -> FULL");
	write_ok(HM, Z(10), 8);
	out_ok(HM, ZBC_RESET, Z(10));
	expect_zone(HM, Z(10), ZC_EMPTY, Z(10), "RESET WRITE POINTER: IMPLICITLY OPENED -> EMPTY");

	/* CLOSED (zones 2, 8) */
	out_expect(HM, ZBC_CLOSE, Z(8), false, EXPECT_GOOD, "CLOSE ZONE on CLOSED -> GOOD");
	expect_zone(HM, Z(8), ZC_CLOSED, Z(8) + 8, "CLOSE ZONE: CLOSED stays CLOSED");
	write_ok(HM, Z(8) + 8, 8);
	expect_zone(HM, Z(8), ZC_IOPEN, Z(8) + 16, "WRITE: CLOSED -> IMPLICITLY OPENED");
	out_ok(HM, ZBC_OPEN, Z(2));
	expect_zone(HM, Z(2), ZC_EOPEN, Z(2) + 8, "OPEN ZONE: CLOSED -> EXPLICITLY OPENED");
	out_ok(HM, ZBC_CLOSE, Z(2));
	out_ok(HM, ZBC_FINISH, Z(2));
	expect_zone(HM, Z(2), ZC_FULL, UINT64_MAX, "FINISH ZONE: CLOSED -> FULL");
	out_ok(HM, ZBC_CLOSE, Z(8));
	out_ok(HM, ZBC_RESET, Z(8));
	expect_zone(HM, Z(8), ZC_EMPTY, Z(8), "RESET WRITE POINTER: CLOSED -> EMPTY");

	/* FULL (zone 3): OPEN, CLOSE, FINISH are no-ops; RESET empties it; a write filling a zone makes it FULL. */
	out_expect(HM, ZBC_OPEN, Z(3), false, EXPECT_GOOD, "OPEN ZONE on FULL -> GOOD");
	out_expect(HM, ZBC_CLOSE, Z(3), false, EXPECT_GOOD, "CLOSE ZONE on FULL -> GOOD");
	out_expect(HM, ZBC_FINISH, Z(3), false, EXPECT_GOOD, "FINISH ZONE on FULL -> GOOD");
	expect_zone(HM, Z(3), ZC_FULL, UINT64_MAX, "OPEN / CLOSE / FINISH ZONE: FULL stays FULL");
	out_ok(HM, ZBC_RESET, Z(3));
	expect_zone(HM, Z(3), ZC_EMPTY, Z(3), "RESET WRITE POINTER: FULL -> EMPTY");
	write_ok(HM, Z(11), ZS - 8);
	write_expect(HM, Z(11) + ZS - 8, 8, EXPECT_GOOD, "WRITE(16) of a zone's last blocks -> GOOD");
	expect_zone(HM, Z(11), ZC_FULL, UINT64_MAX, "WRITE up to the zone end: IMPLICITLY OPENED -> FULL");
	{
		struct zinfo z;

		zbc_zone_get(s, HM, Z(11), &z);
		itest_ok(z.wp == Z(12), "REPORT ZONES FULL zone: WRITE POINTER LBA = zone end", "wp %llu",
			 (unsigned long long)z.wp);
	}
}

static void test_zbc_out_all(void)
{
	reset_all(HM);
	/* zones: 2 implicit, 3 explicit, 4 closed, 5 full, others empty */
	write_ok(HM, Z(2), 8);
	out_ok(HM, ZBC_OPEN, Z(3));
	write_ok(HM, Z(3), 8);
	write_ok(HM, Z(4), 8);
	out_ok(HM, ZBC_CLOSE, Z(4));
	out_ok(HM, ZBC_FINISH, Z(5));
	out_expect(HM, ZBC_CLOSE, 12345, true, EXPECT_GOOD, "CLOSE ZONE ALL=1 (ZONE ID ignored) -> GOOD");
	expect_zone(HM, Z(2), ZC_CLOSED, Z(2) + 8, "CLOSE ALL: IMPLICITLY OPENED -> CLOSED");
	expect_zone(HM, Z(3), ZC_CLOSED, Z(3) + 8, "CLOSE ALL: EXPLICITLY OPENED -> CLOSED");
	expect_zone(HM, Z(5), ZC_FULL, UINT64_MAX, "CLOSE ALL: FULL untouched");
	out_expect(HM, ZBC_OPEN, HM_ZONES * ZS + 5, true, EXPECT_GOOD,
		   "OPEN ZONE ALL=1 with ZONE ID past the capacity -> GOOD (ignored)");
	expect_zone(HM, Z(2), ZC_EOPEN, Z(2) + 8, "OPEN ALL: CLOSED -> EXPLICITLY OPENED");
	expect_zone(HM, Z(4), ZC_EOPEN, Z(4) + 8, "OPEN ALL: every CLOSED zone opened");
	expect_zone(HM, Z(6), ZC_EMPTY, Z(6), "OPEN ALL: EMPTY zones untouched");
	out_ok(HM, ZBC_CLOSE, Z(4));
	out_expect(HM, ZBC_FINISH, Z(0), true, EXPECT_GOOD, "FINISH ZONE ALL=1 (ZONE ID on a conventional zone) -> GOOD");
	expect_zone(HM, Z(2), ZC_FULL, UINT64_MAX, "FINISH ALL: EXPLICITLY OPENED -> FULL");
	expect_zone(HM, Z(4), ZC_FULL, UINT64_MAX, "FINISH ALL: CLOSED -> FULL");
	expect_zone(HM, Z(6), ZC_EMPTY, Z(6), "FINISH ALL: EMPTY zones stay EMPTY");
	out_expect(HM, ZBC_RESET, 0, true, EXPECT_GOOD, "RESET WRITE POINTER ALL=1 -> GOOD");
	{
		struct itest_result r;

		zbc_report(s, HM, 0, 0x01, false, 64 + HM_ZONES * 64, &r);
		itest_ok(r.status == 0 && itest_get_be32(r.data) == 12 * 64,
			 "RESET ALL: every SWR zone EMPTY, READ ONLY and OFFLINE zones left alone", "%s, list %u",
			 itest_result_str(&r), r.data_len >= 4 ? itest_get_be32(r.data) : 0);
		itest_result_free(&r);
	}
	expect_zone(HM, Z(14), ZC_OFFLINE, UINT64_MAX, "RESET ALL: OFFLINE zone stays OFFLINE");
	expect_zone(HM, Z(15), ZC_RDONLY, UINT64_MAX, "RESET ALL: READ ONLY zone stays READ ONLY");

	/* ZONE ID errors with ALL = 0 (libzbc 01/020-054). */
	for (uint8_t sa = ZBC_CLOSE; sa <= ZBC_RESET; sa++) {
		static const char *const names[] = { "", "CLOSE ZONE", "FINISH ZONE", "OPEN ZONE", "RESET WRITE POINTER" };
		char name[160];

		snprintf(name, sizeof(name), "%s ZONE ID not a zone start -> 05/24/00", names[sa]);
		out_expect(HM, sa, Z(3) + 1, false, EXPECT_SENSE(5, 0x24, 0x00), name);
		snprintf(name, sizeof(name), "%s ZONE ID of a conventional zone -> 05/24/00", names[sa]);
		out_expect(HM, sa, Z(1), false, EXPECT_SENSE(5, 0x24, 0x00), name);
		snprintf(name, sizeof(name), "%s ZONE ID past the capacity -> 05/21/00", names[sa]);
		out_expect(HM, sa, HM_ZONES * ZS, false, EXPECT_SENSE(5, 0x21, 0x00), name);
		snprintf(name, sizeof(name), "%s of a READ ONLY zone -> 07/27/08", names[sa]);
		out_expect(HM, sa, Z(15), false, EXPECT_SENSE(7, 0x27, 0x08), name);
		snprintf(name, sizeof(name), "%s of an OFFLINE zone -> 07/2C/0E", names[sa]);
		out_expect(HM, sa, Z(14), false, EXPECT_SENSE(7, 0x2c, 0x0e), name);
	}
	{
		uint8_t cdb[16];

		zbc_out_cdb(cdb, 0x05, Z(3), false);
		itest_expect_cmd(s, HM, "ZBC OUT reserved service action 05h -> 05/24/00", cdb, 16, ITEST_NONE, NULL, 0,
				 0, EXPECT_SENSE(5, 0x24, 0x00), NULL);
		zbc_out_cdb(cdb, ZBC_OPEN, Z(3), false);
		itest_put_be16(cdb + 12, 2);
		itest_expect_cmd(s, HM, "ZBC OUT ZONE COUNT 2 (ZBC-2, not supported) -> 05/24/00", cdb, 16, ITEST_NONE,
				 NULL, 0, 0, EXPECT_SENSE(5, 0x24, 0x00), NULL);
		zbc_out_cdb(cdb, ZBC_OPEN, 0, false);
		itest_expect_cmd(s, 0, "ZBC OUT on a conventional LU -> 05/20/00", cdb, 16, ITEST_NONE, NULL, 0, 0,
				 EXPECT_SENSE(5, 0x20, 0x00), NULL);
	}
}

/* ---- open zone resources (ZBC-2 open zone resources; Linux scsi_debug), LUN 1 allows 3 ---- */

static void test_open_resources(void)
{
	reset_all(HM);
	out_ok(HM, ZBC_OPEN, Z(2));
	out_ok(HM, ZBC_OPEN, Z(3));
	out_ok(HM, ZBC_OPEN, Z(4));
	write_expect(HM, Z(5), 8, EXPECT_SENSE(7, 0x55, 0x0e),
		     "WRITE needing an implicit open, all open zones explicit -> 07/55/0E INSUFFICIENT ZONE RESOURCES");
	expect_zone(HM, Z(5), ZC_EMPTY, Z(5), "refused write leaves the zone EMPTY");
	out_expect(HM, ZBC_OPEN, Z(5), false, EXPECT_SENSE(7, 0x55, 0x0e),
		   "OPEN ZONE beyond MAXIMUM NUMBER OF OPEN SWR ZONES -> 07/55/0E");
	out_expect(HM, ZBC_FINISH, Z(5), false, EXPECT_SENSE(7, 0x55, 0x0e),
		   "FINISH ZONE of an EMPTY zone, all open zones explicit -> 07/55/0E");
	write_expect(HM, Z(2), 8, EXPECT_GOOD, "WRITE to an already open zone at the limit -> GOOD");

	/* Implicit opens close an implicitly opened zone to make room. */
	reset_all(HM);
	write_ok(HM, Z(2), 8);
	write_ok(HM, Z(3), 8);
	write_ok(HM, Z(4), 8);
	write_expect(HM, Z(5), 8, EXPECT_GOOD, "WRITE needing a 4th open zone with 3 implicitly open -> GOOD");
	expect_zone(HM, Z(2), ZC_CLOSED, Z(2) + 8, "implicit open at the limit closes an IMPLICITLY OPENED zone");
	expect_zone(HM, Z(5), ZC_IOPEN, Z(5) + 8, "the written zone is IMPLICITLY OPENED");
	out_expect(HM, ZBC_OPEN, Z(6), false, EXPECT_GOOD, "OPEN ZONE at the limit with implicitly open zones -> GOOD");
	expect_zone(HM, Z(6), ZC_EOPEN, Z(6), "explicit OPEN at the limit closes an IMPLICITLY OPENED zone");

	/* OPEN ALL needs room for every CLOSED zone, else nothing is opened. */
	out_ok(HM, ZBC_CLOSE, Z(6));
	out_expect(HM, ZBC_CLOSE, 0, true, EXPECT_GOOD, "CLOSE ALL -> GOOD");
	out_expect(HM, ZBC_OPEN, 0, true, EXPECT_SENSE(7, 0x55, 0x0e),
		   "OPEN ALL with more CLOSED zones than MAXIMUM NUMBER OF OPEN SWR ZONES -> 07/55/0E");
	expect_zone(HM, Z(2), ZC_CLOSED, Z(2) + 8, "refused OPEN ALL opens nothing");
	out_ok(HM, ZBC_FINISH, Z(5));
	out_expect(HM, ZBC_OPEN, 0, true, EXPECT_GOOD, "OPEN ALL with 3 CLOSED zones and a limit of 3 -> GOOD");
	expect_zone(HM, Z(4), ZC_EOPEN, Z(4) + 8, "OPEN ALL within the limit: CLOSED -> EXPLICITLY OPENED");
	out_expect(HM, ZBC_FINISH, 0, true, EXPECT_GOOD, "FINISH ALL with all resources explicitly open -> GOOD");
	reset_all(HM);
}

/* ---- read/write rules (libzbc 01_sk_ascq_check; Linux scsi_debug check_zbc_access_params) ---- */

static void test_rules(void)
{
	uint8_t cdb[16];
	struct itest_result r;

	reset_all(HM);
	reset_all(HM_STRICT);
	write_ok(HM, Z(2), 16);
	write_expect(HM, Z(2) + 24, 8, EXPECT_SENSE(5, 0x21, 0x04), "WRITE above the WP of an SWR zone -> 05/21/04");
	write_expect(HM, Z(2) + 8, 8, EXPECT_SENSE(5, 0x21, 0x04), "WRITE below the WP of an SWR zone -> 05/21/04");
	write_expect(HM, Z(3), ZS + 8, EXPECT_SENSE(5, 0x21, 0x05),
		     "WRITE crossing an SWR zone boundary -> 05/21/05 WRITE BOUNDARY VIOLATION");
	write_expect(HM, Z(2) - 8, 16, EXPECT_SENSE(5, 0x21, 0x05),
		     "WRITE crossing from a conventional into an SWR zone -> 05/21/05");
	write_expect(HM, Z(0) + 77, 300, EXPECT_GOOD, "WRITE anywhere in conventional zones -> GOOD");
	write_expect(HM, Z(1) - 8, 16, EXPECT_GOOD, "WRITE across conventional zones -> GOOD");
	out_ok(HM, ZBC_FINISH, Z(4));
	write_expect(HM, Z(4), 8, EXPECT_SENSE(5, 0x24, 0x00), "WRITE to a FULL zone -> 05/24/00");
	write_expect(HM, Z(15), 8, EXPECT_SENSE(7, 0x27, 0x08), "WRITE to a READ ONLY zone -> 07/27/08 ZONE IS READ ONLY");
	read_expect(HM, Z(15), 8, EXPECT_GOOD, "READ of a READ ONLY zone -> GOOD");
	write_expect(HM, Z(14), 8, EXPECT_SENSE(7, 0x2c, 0x0e), "WRITE to an OFFLINE zone -> 07/2C/0E ZONE IS OFFLINE");
	read_expect(HM, Z(14), 8, EXPECT_SENSE(7, 0x2c, 0x0e), "READ of an OFFLINE zone -> 07/2C/0E");
	read_expect(HM, Z(13) + ZS - 4, 8, EXPECT_SENSE(7, 0x2c, 0x0e), "READ ending in an OFFLINE zone -> 07/2C/0E");
	read_expect(HM, Z(2) - 8, 16, EXPECT_SENSE(5, 0x21, 0x07),
		    "READ crossing from a conventional into an SWR zone -> 05/21/07 READ BOUNDARY VIOLATION");

	/* URSWRZ = 1: reads past the WP and across SWR zones return zeros. */
	zbc_read(s, HM, Z(2), 64, BS, &r);
	{
		bool zeros = r.data_len == 64 * BS;

		for (int i = 16 * BS; i < r.data_len && zeros; i++)
			zeros = r.data[i] == 0;
		itest_ok(r.status == 0 && zeros, "URSWRZ=1: READ past the WP -> GOOD, zeros past the WP", "%s",
			 itest_result_str(&r));
	}
	itest_result_free(&r);
	read_expect(HM, Z(5) - 8, 16, EXPECT_GOOD, "URSWRZ=1: READ across an SWR zone boundary -> GOOD");

	/* URSWRZ = 0 (LUN 2). */
	write_ok(HM_STRICT, Z(1), 16);
	read_expect(HM_STRICT, Z(1), 16, EXPECT_GOOD, "URSWRZ=0: READ below the WP -> GOOD");
	read_expect(HM_STRICT, Z(1) + 8, 16, EXPECT_SENSE(5, 0x21, 0x06),
		    "URSWRZ=0: READ past the WP -> 05/21/06 ATTEMPT TO READ INVALID DATA");
	read_expect(HM_STRICT, Z(2), 1, EXPECT_SENSE(5, 0x21, 0x06),
		    "URSWRZ=0: READ of an EMPTY zone -> 05/21/06");
	out_ok(HM_STRICT, ZBC_FINISH, Z(2));
	out_ok(HM_STRICT, ZBC_FINISH, Z(3));
	read_expect(HM_STRICT, Z(2), ZS, EXPECT_GOOD, "URSWRZ=0: READ of a FULL zone -> GOOD");
	read_expect(HM_STRICT, Z(3) - 8, 16, EXPECT_SENSE(5, 0x21, 0x07),
		    "URSWRZ=0: READ across an SWR zone boundary -> 05/21/07");
	memset(cdb, 0, 16);
	cdb[0] = 0x8f; /* VERIFY(16), BYTCHK 0 */
	itest_put_be64(cdb + 2, Z(1) + 8);
	itest_put_be32(cdb + 10, 16);
	itest_expect_cmd(s, HM_STRICT, "URSWRZ=0: VERIFY(16) past the WP -> 05/21/06", cdb, 16, ITEST_NONE, NULL, 0, 0,
			 EXPECT_SENSE(5, 0x21, 0x06), NULL);
	itest_put_be64(cdb + 2, Z(1));
	itest_put_be32(cdb + 10, 16);
	itest_expect_cmd(s, HM_STRICT, "URSWRZ=0: VERIFY(16) below the WP -> GOOD", cdb, 16, ITEST_NONE, NULL, 0, 0,
			 EXPECT_GOOD, NULL);
	/* 4096-byte physical blocks: a write ending at or past the WP must end on a physical block boundary. */
	write_expect(HM_STRICT, Z(1) + 16, 4, EXPECT_SENSE(5, 0x21, 0x04),
		     "WRITE ending off a physical block boundary (lbppbe 3) -> 05/21/04");
	write_expect(HM_STRICT, Z(1) + 16, 8, EXPECT_GOOD, "WRITE ending on a physical block boundary -> GOOD");
}

/* ---- other commands on zoned LUs ---- */

static void test_other_commands(void)
{
	uint8_t cdb[16];
	uint8_t *buf = calloc(2, 8 * BS);

	reset_all(HM);
	/* WRITE SAME(16) follows the write rules and moves the WP. */
	memset(cdb, 0, 16);
	cdb[0] = 0x93;
	itest_put_be64(cdb + 2, Z(2));
	itest_put_be32(cdb + 10, 32);
	itest_expect_cmd(s, HM, "WRITE SAME(16) at the WP of an SWR zone -> GOOD", cdb, 16, ITEST_OUT, buf, BS, 0,
			 EXPECT_GOOD, NULL);
	expect_zone(HM, Z(2), ZC_IOPEN, Z(2) + 32, "WRITE SAME(16): WP advances by NUMBER OF LOGICAL BLOCKS");
	itest_put_be64(cdb + 2, Z(2) + 64);
	itest_expect_cmd(s, HM, "WRITE SAME(16) above the WP -> 05/21/04", cdb, 16, ITEST_OUT, buf, BS, 0,
			 EXPECT_SENSE(5, 0x21, 0x04), NULL);
	itest_put_be64(cdb + 2, Z(3) - 16);
	itest_expect_cmd(s, HM, "WRITE SAME(16) crossing into an SWR zone -> 05/21/05", cdb, 16, ITEST_OUT, buf, BS, 0,
			 EXPECT_SENSE(5, 0x21, 0x05), NULL);
	cdb[1] = 0x08;
	itest_put_be64(cdb + 2, Z(0));
	itest_expect_cmd(s, HM, "WRITE SAME(16) UNMAP=1 on a zoned LU (no provisioning) -> 05/24/00", cdb, 16,
			 ITEST_OUT, buf, BS, 0, EXPECT_SENSE(5, 0x24, 0x00), NULL);
	/* UNMAP: zoned LUs have no logical block provisioning. */
	memset(cdb, 0, 10);
	cdb[0] = 0x42;
	itest_put_be16(cdb + 7, 24);
	memset(buf, 0, 24);
	itest_put_be16(buf, 22);
	itest_put_be16(buf + 2, 16);
	itest_put_be64(buf + 8, Z(0));
	itest_put_be32(buf + 16, 8);
	itest_expect_cmd(s, HM, "UNMAP on a zoned LU -> 05/20/00 (no logical block provisioning)", cdb, 10, ITEST_OUT,
			 buf, 24, 0, EXPECT_SENSE(5, 0x20, 0x00), NULL);
	/* COMPARE AND WRITE: a write at the WP; the compare sees zeros there (URSWRZ = 1). */
	memset(buf, 0, 16 * BS);
	itest_pattern(buf + 8 * BS, 8 * BS, 99);
	memset(cdb, 0, 16);
	cdb[0] = 0x89;
	itest_put_be64(cdb + 2, Z(2) + 32);
	cdb[13] = 8;
	itest_expect_cmd(s, HM, "COMPARE AND WRITE at the WP of an SWR zone -> GOOD", cdb, 16, ITEST_OUT, buf, 16 * BS, 0,
			 EXPECT_GOOD, NULL);
	expect_zone(HM, Z(2), ZC_IOPEN, Z(2) + 40, "COMPARE AND WRITE: WP advances");
	itest_put_be64(cdb + 2, Z(2));
	itest_expect_cmd(s, HM, "COMPARE AND WRITE below the WP -> 05/21/04", cdb, 16, ITEST_OUT, buf, 16 * BS, 0,
			 EXPECT_SENSE(5, 0x21, 0x04), NULL);
	/* FORMAT UNIT empties every write pointer zone; faults stay. */
	write_ok(HM, Z(3), 8);
	out_ok(HM, ZBC_FINISH, Z(4));
	memset(cdb, 0, 6);
	cdb[0] = 0x04;
	itest_expect_cmd(s, HM, "FORMAT UNIT on a zoned LU -> GOOD", cdb, 6, ITEST_NONE, NULL, 0, 0, EXPECT_GOOD, NULL);
	itest_clear_ua(s, HM);
	{
		struct itest_result r;

		zbc_report(s, HM, 0, 0x01, false, 64 + HM_ZONES * 64, &r);
		itest_ok(r.status == 0 && itest_get_be32(r.data) == 12 * 64, "FORMAT UNIT: every SWR zone EMPTY", "%s",
			 itest_result_str(&r));
		itest_result_free(&r);
	}
	expect_zone(HM, Z(14), ZC_OFFLINE, UINT64_MAX, "FORMAT UNIT: OFFLINE zone stays OFFLINE");
	/* SANITIZE CRYPTOGRAPHIC ERASE: ZNR = 1 leaves the zones FULL, ZNR = 0 empties them. */
	write_ok(HM, Z(3), 8);
	memset(cdb, 0, 10);
	cdb[0] = 0x48;
	cdb[1] = 0x40 | 0x03;
	itest_expect_cmd(s, HM, "SANITIZE CRYPTOGRAPHIC ERASE ZNR=1 on a zoned LU -> GOOD", cdb, 10, ITEST_NONE, NULL, 0,
			 0, EXPECT_GOOD, NULL);
	itest_clear_ua(s, HM);
	expect_zone(HM, Z(3), ZC_FULL, UINT64_MAX, "SANITIZE ZNR=1: write pointer zones FULL");
	expect_zone(HM, Z(7), ZC_FULL, UINT64_MAX, "SANITIZE ZNR=1: EMPTY zones FULL too");
	cdb[1] = 0x03;
	itest_expect_cmd(s, HM, "SANITIZE CRYPTOGRAPHIC ERASE ZNR=0 on a zoned LU -> GOOD", cdb, 10, ITEST_NONE, NULL, 0,
			 0, EXPECT_GOOD, NULL);
	itest_clear_ua(s, HM);
	expect_zone(HM, Z(3), ZC_EMPTY, Z(3), "SANITIZE ZNR=0: write pointer zones EMPTY");
	expect_zone(HM, Z(15), ZC_RDONLY, UINT64_MAX, "SANITIZE: READ ONLY zone stays READ ONLY");
	cdb[1] = 0x40 | 0x03;
	itest_expect_cmd(s, 0, "SANITIZE ZNR=1 on a conventional LU -> 05/24/00", cdb, 10, ITEST_NONE, NULL, 0, 0,
			 EXPECT_SENSE(5, 0x24, 0x00), NULL);
	free(buf);
}

static long long allocated_bytes(const char *name)
{
	char path[700];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", d.dir, name);
	return stat(path, &st) == 0 ? (long long)st.st_blocks * 512 : -1;
}

/* Whether n blocks from lba read back as all zeros. */
static bool reads_zeros(int lun, uint64_t lba, uint32_t n, const char *name)
{
	struct itest_result r;
	uint8_t *zero = calloc(n, BS);
	bool ok;

	zbc_read(s, lun, lba, n, BS, &r);
	ok = r.status == 0 && r.data_len == (int)(n * BS) && memcmp(r.data, zero, (size_t)n * BS) == 0;
	itest_ok(ok, name, "%s", itest_result_str(&r));
	itest_result_free(&r);
	free(zero);
	return ok;
}

static bool data_matches(int lun, uint64_t lba, uint32_t n, uint32_t seed, const char *name);
static void restart(int sig, const char *config);

/*
 * RESET WRITE POINTER keeps an SWR zone's blocks in the backing file (the
 * next pass need not allocate them again: docs/performance.md), and what
 * lies at or above the write pointer reads as zeros all the same (ZBC-2:
 * unwritten blocks return the initialization pattern) to READ, VERIFY
 * BYTCHK = 01b, COMPARE AND WRITE and ORWRITE; FINISH ZONE releases the
 * blocks between the write pointer and the zone end.
 */
static void test_reset_keeps_blocks(void)
{
	uint8_t cdb[16];
	uint8_t *buf = calloc(2, 8 * BS);
	long long before, after;
	struct itest_result r;

	reset_all(HM);
	write_ok(HM, Z(6), ZS / 2);
	write_ok(HM, Z(6) + ZS / 2, ZS / 2);
	write_ok(HM, Z(7), ZS);
	before = allocated_bytes("lun1.img");
	out_ok(HM, ZBC_RESET, Z(6));
	after = allocated_bytes("lun1.img");
	itest_ok(after >= before, "RESET WRITE POINTER of an SWR zone keeps its blocks in the backing file",
		 "allocated %lld -> %lld bytes", before, after);
	reads_zeros(HM, Z(6), 64, "READ of a reset SWR zone (URSWRZ = 1) -> zeros, not the old data");
	reads_zeros(HM, Z(6) + ZS - 8, 8, "READ at the end of a reset SWR zone -> zeros");
	write_ok(HM, Z(6), 8);
	zbc_read(s, HM, Z(6), 16, BS, &r);
	itest_pattern(buf, 8 * BS, (uint32_t)Z(6));
	itest_ok(r.status == 0 && r.data_len == 16 * BS && memcmp(r.data, buf, 8 * BS) == 0 &&
			 memcmp(r.data + 8 * BS, (uint8_t[8 * BS]){ 0 }, 8 * BS) == 0,
		 "READ across the write pointer: the data written below it, zeros from it", "%s", itest_result_str(&r));
	itest_result_free(&r);
	/* A read spanning two zones: the end of a FULL zone, then a reset zone's written blocks and its zeros. */
	zbc_read(s, HM, Z(6) - 8, 24, BS, &r);
	itest_ok(r.status == 0 && r.data_len == 24 * BS && memcmp(r.data + 8 * BS, buf, 8 * BS) == 0 &&
			 memcmp(r.data + 16 * BS, (uint8_t[8 * BS]){ 0 }, 8 * BS) == 0,
		 "READ across an SWR zone boundary (URSWRZ = 1): the second zone's zeros from its write pointer", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);

	/* VERIFY(16) BYTCHK = 01b: the blocks from the write pointer compare equal to zeros. */
	memset(buf, 0, 16 * BS);
	memset(cdb, 0, 16);
	cdb[0] = 0x8f;
	cdb[1] = 0x02;
	itest_put_be64(cdb + 2, Z(6) + 8);
	itest_put_be32(cdb + 10, 8);
	itest_expect_cmd(s, HM, "VERIFY(16) BYTCHK=01b of zeros above the WP of a reset zone -> GOOD", cdb, 16, ITEST_OUT,
			 buf, 8 * BS, 0, EXPECT_GOOD, NULL);
	/* COMPARE AND WRITE at the WP: the old data is not what the compare sees (SBC-4 5.3: 0E/1D/00 if it were). */
	itest_pattern(buf, 8 * BS, (uint32_t)(Z(6) + 8));
	itest_pattern(buf + 8 * BS, 8 * BS, 7);
	memset(cdb, 0, 16);
	cdb[0] = 0x89;
	itest_put_be64(cdb + 2, Z(6) + 8);
	cdb[13] = 8;
	itest_expect_cmd(s, HM, "COMPARE AND WRITE at the WP expecting the pre-reset data -> 0E/1D/00", cdb, 16,
			 ITEST_OUT, buf, 16 * BS, 0, EXPECT_SENSE(0x0e, 0x1d, 0x00), NULL);
	memset(buf, 0, 8 * BS);
	itest_expect_cmd(s, HM, "COMPARE AND WRITE at the WP expecting zeros -> GOOD", cdb, 16, ITEST_OUT, buf, 16 * BS,
			 0, EXPECT_GOOD, NULL);
	data_matches(HM, Z(6) + 8, 8, 7, "COMPARE AND WRITE: its data reads back");
	/* ORWRITE(16) at the WP ORs into zeros: the result is the Data-Out, not the Data-Out ORed with old data. */
	itest_pattern(buf, 8 * BS, 11);
	memset(cdb, 0, 16);
	cdb[0] = 0x8b;
	itest_put_be64(cdb + 2, Z(6) + 16);
	itest_put_be32(cdb + 10, 8);
	itest_expect_cmd(s, HM, "ORWRITE(16) at the WP of a reset zone -> GOOD", cdb, 16, ITEST_OUT, buf, 8 * BS, 0,
			 EXPECT_GOOD, NULL);
	data_matches(HM, Z(6) + 16, 8, 11, "ORWRITE(16) at the WP: the blocks hold exactly its Data-Out");

	/* FINISH ZONE: the blocks above the write pointer read as zeros in the FULL zone, and are released. */
	before = allocated_bytes("lun1.img");
	out_ok(HM, ZBC_FINISH, Z(6));
	after = allocated_bytes("lun1.img");
	expect_zone(HM, Z(6), ZC_FULL, UINT64_MAX, "FINISH ZONE of a reset, partly written zone: FULL");
	reads_zeros(HM, Z(6) + 24, 64, "FINISH ZONE: the blocks above the old WP read as zeros");
	reads_zeros(HM, Z(6) + ZS - 8, 8, "FINISH ZONE: the zone's last blocks read as zeros");
	itest_ok(before - after >= (long long)(ZS - 24) * BS - 65536,
		 "FINISH ZONE releases the blocks between the WP and the zone end", "allocated %lld -> %lld bytes", before,
		 after);
	data_matches(HM, Z(6) + 16, 8, 11, "FINISH ZONE: the data below the old WP stays");

	/* A reset, then kill -9: the persisted write pointer still hides the old data. */
	out_ok(HM, ZBC_RESET, Z(7));
	restart(SIGKILL, NULL);
	reads_zeros(HM, Z(7), 64, "after kill -9: a reset zone still reads as zeros");
	free(buf);
}

/* A reset of an SWP zone (host aware) releases its blocks: a host writes them anywhere, not only at the WP. */
static void test_host_aware_reset_releases(void)
{
	long long before, after;

	reset_all(HA);
	write_ok(HA, Z(2) + 100, 8);
	before = allocated_bytes("lun3.img");
	out_ok(HA, ZBC_RESET, Z(2));
	after = allocated_bytes("lun3.img");
	itest_ok(after < before, "RESET WRITE POINTER of an SWP zone releases its blocks", "allocated %lld -> %lld bytes",
		 before, after);
	write_ok(HA, Z(2) + 200, 8);
	reads_zeros(HA, Z(2) + 100, 8, "SWP zone after a reset: a block written before it and not since reads as zeros");
}

/* ---- host aware (LUN 3): SWP zones take writes anywhere ---- */

static void test_host_aware(void)
{
	struct zinfo z;
	struct itest_result r;

	reset_all(HA);
	zbc_zone_get(s, HA, Z(1), &z);
	itest_ok(z.type == ZT_SWP && z.cond == ZC_EMPTY, "host-aware REPORT ZONES: ZONE TYPE 3h (SWP), EMPTY",
		 "type %d cond %xh", z.type, z.cond);
	write_expect(HA, Z(1) + 100, 8, EXPECT_GOOD, "host-aware WRITE above the WP -> GOOD");
	zbc_zone_get(s, HA, Z(1), &z);
	itest_ok(z.cond == ZC_IOPEN && z.non_seq && z.wp == Z(1) + 108,
		 "host-aware non-sequential write: NON_SEQ 1, WP = end of the highest write", "cond %xh non_seq %d wp %llu",
		 z.cond, z.non_seq, (unsigned long long)z.wp);
	write_expect(HA, Z(1) + 10, 8, EXPECT_GOOD, "host-aware WRITE below the WP -> GOOD");
	zbc_zone_get(s, HA, Z(1), &z);
	itest_ok(z.wp == Z(1) + 108, "host-aware write below the WP leaves the WP", "wp %llu", (unsigned long long)z.wp);
	write_expect(HA, Z(2) - 8, 16, EXPECT_GOOD, "host-aware WRITE across SWP zones -> GOOD");
	write_expect(HA, Z(1) - 8, 16, EXPECT_SENSE(5, 0x21, 0x05),
		     "host-aware WRITE from a conventional into an SWP zone -> 05/21/05");
	read_expect(HA, Z(1) - 8, 16, EXPECT_GOOD, "host-aware READ across zone types -> GOOD");
	zbc_report(s, HA, 0, 0x11, false, 64 + 4 * 64, &r);
	itest_ok(r.status == 0 && itest_get_be32(r.data) >= 64, "REPORT ZONES 11h on host-aware: NON_SEQ zones listed",
		 "%s", itest_result_str(&r));
	itest_result_free(&r);
	out_ok(HA, ZBC_RESET, Z(1));
	zbc_zone_get(s, HA, Z(1), &z);
	itest_ok(z.cond == ZC_EMPTY && !z.non_seq && z.wp == Z(1), "RESET WRITE POINTER on SWP: EMPTY, NON_SEQ cleared",
		 "cond %xh non_seq %d", z.cond, z.non_seq);
	write_ok(HA, Z(3), ZS);
	expect_zone(HA, Z(3), ZC_FULL, UINT64_MAX, "host-aware write of a whole zone: FULL");
	write_expect(HA, Z(3), 8, EXPECT_GOOD, "host-aware WRITE into a FULL SWP zone -> GOOD");
}

/* ---- persistence: clean restart and kill -9 ---- */

static void reconnect(void)
{
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s) {
		itest_finish();
		exit(1);
	}
	for (int lun = 1; lun <= 3; lun++)
		itest_clear_ua(s, lun);
}

static void restart(int sig, const char *config)
{
	itest_close(s);
	s = NULL;
	itest_daemon_stop(&d, sig);
	if (config)
		itest_daemon_write_config(&d, config);
	if (itest_daemon_start(&d) != 0) {
		itest_ok(false, "daemon restarts", "see log");
		itest_finish();
		exit(1);
	}
	reconnect();
}

static bool data_matches(int lun, uint64_t lba, uint32_t n, uint32_t seed, const char *name)
{
	struct itest_result r;
	uint8_t *want = malloc((size_t)n * BS);
	bool ok;

	itest_pattern(want, (size_t)n * BS, seed);
	zbc_read(s, lun, lba, n, BS, &r);
	ok = r.status == 0 && r.data_len == (int)(n * BS) && memcmp(r.data, want, (size_t)n * BS) == 0;
	itest_ok(ok, name, "%s", itest_result_str(&r));
	itest_result_free(&r);
	free(want);
	return ok;
}

static void test_persistence(void)
{
	uint64_t acked[HM_ZONES] = { 0 };

	reset_all(HM);
	write_ok(HM, Z(2), 100);
	write_ok(HM, Z(3), ZS);
	out_ok(HM, ZBC_OPEN, Z(4));
	write_ok(HM, Z(5), 40);
	out_ok(HM, ZBC_CLOSE, Z(5));
	out_ok(HM, ZBC_FINISH, Z(6));
	restart(SIGTERM, NULL);
	expect_zone(HM, Z(2), ZC_CLOSED, Z(2) + 100, "after restart: an IMPLICITLY OPENED zone is CLOSED at its WP");
	expect_zone(HM, Z(3), ZC_FULL, UINT64_MAX, "after restart: a written-full zone is FULL");
	expect_zone(HM, Z(4), ZC_EMPTY, Z(4), "after restart: an EXPLICITLY OPENED empty zone is EMPTY");
	expect_zone(HM, Z(5), ZC_CLOSED, Z(5) + 40, "after restart: a CLOSED zone keeps its WP");
	expect_zone(HM, Z(6), ZC_FULL, UINT64_MAX, "after restart: a FINISHed zone is FULL");
	data_matches(HM, Z(2), 100, (uint32_t)Z(2), "after restart: data below the WP is the data written");
	write_expect(HM, Z(2) + 100, 8, EXPECT_GOOD, "after restart: WRITE at the restored WP -> GOOD");

	/* kill -9 right after acknowledged writes: every WP covers exactly the acknowledged data. */
	reset_all(HM);
	for (int round = 0; round < 20; round++) {
		int zone = 2 + round % 6;
		uint32_t n = (uint32_t)(8 + 8 * (round % 5));
		struct itest_result r;

		if (acked[zone] + n > ZS)
			continue;
		zbc_write(s, HM, Z(zone) + acked[zone], n, BS, (uint32_t)(Z(zone) + acked[zone]), &r);
		if (r.status == 0)
			acked[zone] += n;
		itest_result_free(&r);
	}
	restart(SIGKILL, NULL);
	{
		bool ok = true;

		for (int zone = 2; zone < 8; zone++) {
			struct zinfo z;

			zbc_zone_get(s, HM, Z(zone), &z);
			if (z.wp != Z(zone) + acked[zone] || z.cond != (acked[zone] ? ZC_CLOSED : ZC_EMPTY)) {
				ok = false;
				itest_note("zone %d: cond %xh wp +%lld, acknowledged %llu", zone, z.cond,
					   (long long)(z.wp - Z(zone)), (unsigned long long)acked[zone]);
			}
		}
		itest_ok(ok, "after kill -9: every write pointer = zone start + acknowledged blocks", " ");
	}
	{
		/* The first write of zone 2 was 8 blocks at its start with seed = its LBA. */
		data_matches(HM, Z(2), 8, (uint32_t)Z(2), "after kill -9: acknowledged data is readable");
	}

	/* Faults come from the configuration: dropping them repairs the zones at the next start. */
	restart(SIGTERM, config_text("read_only_zones = 13\n"));
	expect_zone(HM, Z(14), ZC_EMPTY, Z(14), "offline_zones removed: the zone is repaired (EMPTY) at start");
	expect_zone(HM, Z(15), ZC_EMPTY, Z(15), "read_only_zones changed: the old zone is repaired");
	expect_zone(HM, Z(13), ZC_RDONLY, UINT64_MAX, "read_only_zones = 13: zone 13 READ ONLY");
}

int main(int argc, char **argv)
{
	itest_init(argc, argv, "test_zbc");
	itest_daemon_up(&d, "zbc", config_text(faults));
	reconnect();
	test_identification();
	test_report_zones_layout();
	test_reporting_options();
	test_transitions();
	test_zbc_out_all();
	test_open_resources();
	test_rules();
	test_other_commands();
	test_host_aware();
	test_host_aware_reset_releases();
	test_reset_keeps_blocks();
	test_persistence();
	itest_close(s);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
