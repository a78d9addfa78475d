/*
 * ZBC-2 sequential or before required (SOBR) zones and the Zoned Block
 * Device Control mode page (0Ah/0Fh), over iSCSI (docs/zbc.md).
 *
 * SOBR (zone type 4h; ZBC-2; libzbc zbc_test_lib.sh; libzbc 01/074, 02/003, 02/007,
 * 02/023, 02/031): writes start at or below the write pointer, never above
 * it (05/21/04); the write pointer only moves up; writes may run on into the
 * next SOBR zone; a FULL zone takes writes; URSWRZ = 0 limits reads to the
 * write pointer (05/21/06) but not across SOBR zones; FINISH ZONE (one zone
 * or ALL while an SOBR zone is open) is 05/24/00; no open zone resources.
 *
 * Mode page 0Ah/0Fh in libzbc's layout (FSNOZ bytes 4-7, URSWRZ byte 10,
 * MAXIMUM ACTIVATION bytes 16-17, all changeable) and as libzbc reads and
 * writes it; URSWRZ drives B6h URSWRZ and the read rules; a change raises
 * MODE PARAMETERS CHANGED for the other I_T nexuses; only host-managed
 * LUs have the page.
 *
 * LUN 0: zbc-zd with sobr_zones: zones 0-7 SOBR (domain 0, active), 8-15
 * SWR (INACTIVE); realms of 2 zones; URSWRZ 0; max_open_zones 1.  LUN 1:
 * zbc-hm (URSWRZ 1).  LUN 2: conventional.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "itest_zbc.h"

#define BS 512u
#define ZONE 8192u /* blocks */
#define ZT_SOBR 4
#define ZT_GAP 5

static const char config[] =
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"kind = zbc-zd\n"
	"path = @DIR@/lun0.img\n"
	"size = 64M\n"
	"logical_block_size = 512\n"
	"zone_size = 4M\n"
	"realm_zones = 2\n"
	"active_domain = 0\n"
	"sobr_zones = true\n"
	"urswrz = false\n"
	"max_open_zones = 1\n"
	"[lun \"" ITEST_TARGET "\" 1]\n"
	"kind = zbc-hm\n"
	"path = @DIR@/lun1.img\n"
	"size = 64M\n"
	"logical_block_size = 512\n"
	"zone_size = 4M\n"
	"[lun \"" ITEST_TARGET "\" 2]\n"
	"kind = conventional\n"
	"path = @DIR@/lun2.img\n"
	"size = 64M\n";

static struct iscsi_context *s, *s2;

/* Zone index i of LUN 0 by REPORT ZONES. */
static struct zinfo zone(uint32_t i)
{
	struct zinfo z;

	zbc_zone_get(s, 0, (uint64_t)i * ZONE, &z);
	return z;
}

static bool expect_zone(const char *name, uint32_t i, int type, int cond, uint64_t wp)
{
	struct zinfo z = zone(i);

	return itest_ok(z.type == type && z.cond == cond && (wp == UINT64_MAX || z.wp == wp), name,
			"zone %u: type %d condition %s wp %llu (want type %d %s wp %llu)", i, z.type, zc_name(z.cond),
			(unsigned long long)z.wp, type, zc_name(cond), (unsigned long long)wp);
}

static bool expect_write(const char *name, uint64_t lba, uint32_t n, uint32_t seed, struct itest_expect e)
{
	return zbc_expect_write(s, 0, lba, n, BS, seed, e, name);
}

static bool expect_read(int lun, const char *name, uint64_t lba, uint32_t n, struct itest_expect e)
{
	return zbc_expect_read(s, lun, lba, n, BS, e, name);
}

static bool expect_out(const char *name, uint8_t sa, uint64_t zone_id, bool all, struct itest_expect e)
{
	struct itest_result r = zbc_out(s, 0, sa, zone_id, all);
	bool ok = itest_ok(itest_result_matches(&r, e), name, "%s", itest_result_str(&r));

	itest_result_free(&r);
	return ok;
}

/* Block lba of LUN 0 holds pattern seed written at first_lba. */
static bool holds(uint64_t lba, uint64_t first_lba, uint32_t seed)
{
	uint32_t n = (uint32_t)(lba - first_lba + 1);
	uint8_t *want = malloc((size_t)n * BS), got[BS];
	bool ok;

	itest_pattern(want, (size_t)n * BS, seed);
	ok = itest_read16(s, 0, lba, got, 1, BS, "READ(16)") && memcmp(got, want + (size_t)(n - 1) * BS, BS) == 0;
	free(want);
	return ok;
}

/* Restarts the daemon (kill with sig) and logs both initiators in again, unit attentions cleared. */
static bool restart(struct itest_daemon *d, int sig)
{
	itest_close(s);
	itest_close(s2);
	itest_daemon_stop(d, sig);
	itest_daemon_start(d);
	s = itest_session(d, ITEST_INITIATOR_1, 0);
	s2 = itest_session(d, ITEST_INITIATOR_2, 0);
	for (int lun = 0; s && s2 && lun < 3; lun++) {
		itest_clear_ua(s, lun);
		itest_clear_ua(s2, lun);
	}
	return s && s2;
}

static void test_layout(void)
{
	uint8_t c[16] = { 0x95, 0x07 };
	struct itest_result r;

	expect_zone("REPORT ZONES: zone 0 type 4h (SOBR) EMPTY, write pointer at the start", 0, ZT_SOBR, ZC_EMPTY, 0);
	expect_zone("REPORT ZONES: zone 7 type 4h EMPTY", 7, ZT_SOBR, ZC_EMPTY, 7 * ZONE);
	expect_zone("REPORT ZONES: zone 8 SWR INACTIVE (5h)", 8, ZT_SWR, 5, UINT64_MAX);
	itest_put_be32(c + 10, 4096);
	itest_cmd(s, 0, c, 16, ITEST_IN, NULL, 0, 4096, &r);
	itest_ok(r.status == 0 && r.data_len == 64 + 2 * 96 && r.data[64 + 40] == ZT_SOBR && r.data[160 + 40] == ZT_SWR,
		 "REPORT ZONE DOMAINS: ZONE DOMAIN ZONE TYPE 4h for domain 0, 2h for domain 1", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	for (uint8_t option = 1; option <= 2; option++) {
		memset(c, 0, 16);
		c[0] = 0x95;
		c[1] = 0x06;
		itest_put_be32(c + 10, 4096);
		c[14] = option;
		itest_cmd(s, 0, c, 16, ITEST_IN, NULL, 0, 4096, &r);
		itest_ok(r.status == 0 && itest_get_be32(r.data + 4) == (option == 1 ? 4u : 0u),
			 option == 1 ? "REPORT REALMS option 01h (active SOBR zones): all 4 realms"
				     : "REPORT REALMS option 02h (active SWR zones): none",
			 "%s, %u realms", itest_result_str(&r), r.data_len >= 8 ? itest_get_be32(r.data + 4) : 0);
		itest_result_free(&r);
	}
	c[14] = 0x04;
	itest_expect_cmd(s, 0, "REPORT REALMS option 04h (reserved) -> 05/24/00", c, 16, ITEST_IN, NULL, 0, 4096,
			 EXPECT_SENSE(5, 0x24, 0), NULL);
}

static void test_writes(void)
{
	expect_write("WRITE(16) 8 blocks at the start of an EMPTY SOBR zone -> GOOD", 0, 8, 1, EXPECT_GOOD);
	expect_zone("the zone is IMPLICITLY OPENED with the write pointer at 8", 0, ZT_SOBR, ZC_IOPEN, 8);
	expect_write("WRITE(16) at LBA 4, below the write pointer -> GOOD (SOBR: at or before)", 4, 2, 2, EXPECT_GOOD);
	expect_zone("a write below the write pointer leaves it at 8", 0, ZT_SOBR, ZC_IOPEN, 8);
	itest_ok(holds(5, 4, 2) && holds(3, 0, 1), "the rewritten blocks hold the new data, the others the old", NULL);
	expect_write("WRITE(16) at LBA 9, above the write pointer -> 05/21/04 UNALIGNED WRITE COMMAND", 9, 1, 3,
		     EXPECT_SENSE(5, 0x21, 0x04));
	expect_write("WRITE(16) at the write pointer -> GOOD", 8, 8, 4, EXPECT_GOOD);
	expect_zone("write pointer at 16", 0, ZT_SOBR, ZC_IOPEN, 16);
	expect_read(0, "URSWRZ 0: READ(16) below the write pointer -> GOOD", 0, 16, EXPECT_GOOD);
	expect_read(0, "URSWRZ 0: READ(16) past the write pointer -> 05/21/06 ATTEMPT TO READ INVALID DATA", 10, 10,
		    EXPECT_SENSE(5, 0x21, 0x06));
	/* FINISH: libzbc 02/007 (implicitly open), 02/031 (ALL), 02/003 (EMPTY). */
	expect_out("FINISH ZONE of an IMPLICITLY OPENED SOBR zone -> 05/24/00", ZBC_FINISH, 0, false,
		   EXPECT_SENSE(5, 0x24, 0));
	expect_out("FINISH ZONE ALL with an open SOBR zone -> 05/24/00", ZBC_FINISH, 0, true, EXPECT_SENSE(5, 0x24, 0));
	expect_zone("after both FINISHes the zone is still IMPLICITLY OPENED", 0, ZT_SOBR, ZC_IOPEN, 16);
	expect_out("FINISH ZONE of an EMPTY SOBR zone -> 05/24/00", ZBC_FINISH, ZONE, false, EXPECT_SENSE(5, 0x24, 0));
	expect_zone("... and it stays EMPTY", 1, ZT_SOBR, ZC_EMPTY, ZONE);
	/* No open zone resources (libzbc ZT_W_OZR is SWR only): max_open_zones = 1 does not limit SOBR zones. */
	expect_out("OPEN ZONE of SOBR zone 0 -> GOOD", ZBC_OPEN, 0, false, EXPECT_GOOD);
	expect_write("max_open_zones 1, zone 0 explicitly open: WRITE(16) to EMPTY SOBR zone 2 -> GOOD", 2 * ZONE, 1, 5,
		     EXPECT_GOOD);
	expect_zone("zone 0 stays EXPLICITLY OPENED (no implicit close)", 0, ZT_SOBR, ZC_EOPEN, 16);
	expect_zone("zone 2 is IMPLICITLY OPENED", 2, ZT_SOBR, ZC_IOPEN, 2 * ZONE + 1);
	expect_out("CLOSE ZONE of zone 0 -> GOOD", ZBC_CLOSE, 0, false, EXPECT_GOOD);
	expect_zone("zone 0 CLOSED", 0, ZT_SOBR, ZC_CLOSED, 16);
	/* A write from zone 0's write pointer on into zone 1. */
	expect_write("WRITE(16) from zone 0's write pointer 8 blocks into zone 1 -> GOOD (SOBR zones may be crossed)", 16,
		     ZONE - 16 + 8, 6, EXPECT_GOOD);
	expect_zone("zone 0 FULL", 0, ZT_SOBR, ZC_FULL, UINT64_MAX);
	expect_zone("zone 1 IMPLICITLY OPENED, write pointer 8 blocks in", 1, ZT_SOBR, ZC_IOPEN, ZONE + 8);
	expect_write("WRITE(16) at the start of a FULL SOBR zone -> GOOD (libzbc 01/074)", 0, 1, 7, EXPECT_GOOD);
	expect_zone("... the zone stays FULL", 0, ZT_SOBR, ZC_FULL, UINT64_MAX);
	expect_out("FINISH ZONE of a FULL SOBR zone -> 05/24/00 (libzbc 02/023)", ZBC_FINISH, 0, false,
		   EXPECT_SENSE(5, 0x24, 0));
	expect_read(0, "URSWRZ 0: READ(16) across SOBR zones 0-1 up to zone 1's write pointer -> GOOD", ZONE - 4, 12,
		    EXPECT_GOOD);
	expect_read(0, "URSWRZ 0: READ(16) across zones 0-1 past zone 1's write pointer -> 05/21/06", ZONE - 4, 13,
		    EXPECT_SENSE(5, 0x21, 0x06));
	itest_ok(holds(ZONE + 7, 16, 6) && holds(0, 0, 7), "the cross-zone write and the FULL-zone write hold their data",
		 NULL);
}

/*
 * ZONE ACTIVATE(16) of a realm (2 zones) as libzbc builds it: b1 08h, b2
 * ZSRC | domain, b3-8 ZONE ID, b9-12 ALLOCATION LENGTH, b13-14 zones.
 */
static void activate(uint8_t *c, uint8_t domain, uint64_t zone_id)
{
	memset(c, 0, 16);
	c[0] = 0x95;
	c[1] = 0x08;
	c[2] = (uint8_t)(0x40 | domain);
	for (int i = 0; i < 6; i++)
		c[3 + i] = (uint8_t)(zone_id >> (40 - 8 * i));
	itest_put_be32(c + 9, 4096);
	itest_put_be16(c + 13, 2);
}

static void test_restart_and_activate(struct itest_daemon *d)
{
	struct itest_result r;
	uint8_t c[16];

	if (!restart(d, SIGKILL))
		return;
	expect_zone("after kill -9: zone 0 FULL", 0, ZT_SOBR, ZC_FULL, UINT64_MAX);
	expect_zone("after kill -9: zone 1 CLOSED, write pointer kept", 1, ZT_SOBR, ZC_CLOSED, ZONE + 8);
	itest_ok(holds(ZONE + 7, 16, 6), "after kill -9 the acknowledged data is there", NULL);
	activate(c, 1, 0);
	itest_cmd(s, 0, c, 16, ITEST_IN, NULL, 0, 4096, &r);
	itest_ok(r.status == 0 && r.data_len >= 64 && r.data[8] == 0x40 && r.data[9] == 0x02 &&
			 (itest_get_be64(r.data + 24) >> 16) == 0,
		 "ZONE ACTIVATE of a realm with written SOBR zones -> unmet NOT EMPTY at zone 0", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	expect_out("RESET WRITE POINTER ALL -> GOOD", ZBC_RESET, 0, true, EXPECT_GOOD);
	expect_zone("zone 0 EMPTY after RESET ALL", 0, ZT_SOBR, ZC_EMPTY, 0);
	expect_zone("zone 2 EMPTY after RESET ALL", 2, ZT_SOBR, ZC_EMPTY, 2 * ZONE);
	expect_read(0, "URSWRZ 0: READ(16) of a reset SOBR zone -> 05/21/06", 0, 1, EXPECT_SENSE(5, 0x21, 0x06));
	itest_cmd(s, 0, c, 16, ITEST_IN, NULL, 0, 4096, &r);
	itest_ok(r.status == 0 && r.data_len >= 88 && r.data[8] == 0x81 && r.data[64] == ZT_SWR,
		 "ZONE ACTIVATE realm 0 to domain 1 -> ACTIVATED, descriptor zone type 2h", "%s", itest_result_str(&r));
	itest_result_free(&r);
	expect_zone("zone 0 INACTIVE", 0, ZT_SOBR, 5, UINT64_MAX);
	activate(c, 0, 8 * ZONE);
	itest_cmd(s, 0, c, 16, ITEST_IN, NULL, 0, 4096, &r);
	itest_ok(r.status == 0 && r.data_len >= 88 && r.data[8] == 0x81 && r.data[64] == ZT_SOBR &&
			 (r.data[65] >> 4) == ZC_EMPTY,
		 "ZONE ACTIVATE back to domain 0 -> ACTIVATED, descriptor type 4h EMPTY", "%s", itest_result_str(&r));
	itest_result_free(&r);
	expect_zone("zone 0 EMPTY again", 0, ZT_SOBR, ZC_EMPTY, 0);
}

/* ---- the Zoned Block Device Control mode page ---- */

/*
 * MODE SENSE(10) of 0Ah/0Fh with PAGE CONTROL pc as libzbc sends it
 * (lib/zbc_scsi.c zbc_scsi_get_set_mode: byte 1 = 10h, LLBAA = 1 and DBD
 * = 0): the page is read at byte 12, so no block descriptor may come.
 */
static void mode_sense(struct iscsi_context *sess, int lun, int pc, struct itest_result *r)
{
	uint8_t c[10] = { 0x5a, 0x10, (uint8_t)((pc << 6) | 0x0a), 0x0f };

	itest_put_be16(c + 7, 255);
	itest_cmd(sess, lun, c, 10, ITEST_IN, NULL, 0, 255, r);
}

/* Bytes byte.. of the page (at byte 8 of the data: no block descriptor), big-endian, n of them; -1 on failure. */
static long page_field(int lun, int pc, int byte, int n)
{
	struct itest_result r;
	long v = -1;

	mode_sense(s, lun, pc, &r);
	if (r.status == 0 && r.data_len >= 8 + 20 && itest_get_be16(r.data + 6) == 0) {
		v = 0;
		for (int i = 0; i < n; i++)
			v = v << 8 | r.data[8 + byte + i];
	}
	itest_result_free(&r);
	return v;
}

/*
 * MODE SELECT(10) of the page with FSNOZ, URSWRZ and MAXIMUM ACTIVATION.
 * as_libzbc: as libzbc sends it, with the MODE DATA LENGTH it read (26)
 * as the PAGE LENGTH and zeros past the page's 20 bytes; else PAGE LENGTH
 * 0010h.
 */
static void mode_select(int lun, const char *name, uint32_t fsnoz, uint8_t urswrz, uint16_t max_activation,
			bool save, bool as_libzbc, struct itest_expect e)
{
	uint8_t c[10] = { 0x55, (uint8_t)(0x10 | (save ? 1 : 0)) }, p[8 + 4 + 26] = { 0 };
	size_t len = as_libzbc ? sizeof(p) : 8 + 20;

	p[8] = 0x4a;
	p[9] = 0x0f;
	itest_put_be16(p + 10, as_libzbc ? 26 : 0x10);
	itest_put_be32(p + 12, fsnoz);
	p[18] = urswrz;
	itest_put_be16(p + 24, max_activation);
	itest_put_be16(c + 7, (uint16_t)len);
	itest_expect_cmd(s, lun, name, c, 10, ITEST_OUT, p, len, 0, e, NULL);
}

static int b6_urswrz(int lun)
{
	uint8_t c[6] = { 0x12, 0x01, 0xb6, 0, 64 };
	struct itest_result r;
	int v = -1;

	itest_cmd(s, lun, c, 6, ITEST_IN, NULL, 0, 64, &r);
	if (r.status == 0 && r.data_len >= 8)
		v = r.data[4] & 0x01;
	itest_result_free(&r);
	return v;
}

static void test_mode_page(struct itest_daemon *d)
{
	struct itest_result r;
	uint8_t tur[6] = { 0 };

	mode_sense(s, 1, 0, &r);
	itest_ok(r.status == 0 && r.data_len == 8 + 20 && itest_get_be16(r.data) == 26 &&
			 itest_get_be16(r.data + 6) == 0 && r.data[8] == (0x80 | 0x40 | 0x0a) && r.data[9] == 0x0f &&
			 itest_get_be16(r.data + 10) == 0x10 && itest_get_be32(r.data + 12) == 0 &&
			 (r.data[18] & 0x01) == 1 && itest_get_be16(r.data + 24) == 0,
		 "MODE SENSE(10) 0Ah/0Fh as libzbc sends it, zbc-hm: no block descriptor (page at byte 8, FSNOZ at "
		 "libzbc's byte 12), PS, SPF, PAGE LENGTH 0010h, FSNOZ 0 (no realms), URSWRZ 1 (config urswrz = true), "
		 "MAXIMUM ACTIVATION 0",
		 "%s", itest_result_str(&r));
	itest_result_free(&r);
	itest_ok(page_field(1, 1, 4, 4) == 0xffffffffL && page_field(1, 1, 10, 1) == 0x01 &&
			 page_field(1, 1, 16, 2) == 0xffff && page_field(1, 1, 5, 1) == 0xff && page_field(1, 1, 8, 2) == 0,
		 "changeable values: FSNOZ (bytes 4-7), URSWRZ (byte 10 bit 0), MAXIMUM ACTIVATION (bytes 16-17)", NULL);
	itest_ok(page_field(0, 0, 4, 4) == 2 && page_field(0, 0, 10, 1) == 0x00,
		 "zbc-zd with realm_zones = 2 and urswrz = false: FSNOZ 2 (a realm), URSWRZ 0", NULL);
	{
		uint8_t c[10] = { 0x5a, 0x00, 0x0a, 0x0f };

		itest_put_be16(c + 7, 255);
		itest_cmd(s, 1, c, 10, ITEST_IN, NULL, 0, 255, &r);
		itest_ok(r.status == 0 && itest_get_be16(r.data + 6) == 0 && r.data_len == 8 + 20,
			 "MODE SENSE(10) 0Ah/0Fh with DBD = 0, LLBAA = 0: no block descriptor either", "%s",
			 itest_result_str(&r));
		itest_result_free(&r);
		c[2] = 0x3f;
		c[3] = 0xff;
		itest_cmd(s, 1, c, 10, ITEST_IN, NULL, 0, 255, &r);
		itest_ok(r.status == 0 && itest_get_be16(r.data + 6) == 8,
			 "MODE SENSE(10) of every page (3Fh/FFh): the block descriptor is there", "%s",
			 itest_result_str(&r));
		itest_result_free(&r);
	}
	mode_sense(s, 2, 0, &r);
	itest_ok(itest_result_matches(&r, EXPECT_SENSE(5, 0x24, 0)),
		 "MODE SENSE 0Ah/0Fh on a conventional LU -> 05/24/00", "%s", itest_result_str(&r));
	itest_expect_field_pointer("... field pointer on the SUBPAGE CODE (CDB byte 3)", &r, 1, 3, -1);
	itest_result_free(&r);

	expect_write("WRITE(16) 4 blocks at zone 3's start", 3 * ZONE, 4, 8, EXPECT_GOOD);
	expect_read(0, "URSWRZ 0: READ(16) past the write pointer -> 05/21/06", 3 * ZONE, 8,
		    EXPECT_SENSE(5, 0x21, 0x06));
	mode_select(0, "MODE SELECT(10) as libzbc sends it (PAGE LENGTH 26 = the MODE DATA LENGTH, zeros past the "
		       "page): URSWRZ = 1 -> GOOD",
		    2, 0x01, 0, false, true, EXPECT_GOOD);
	itest_ok(b6_urswrz(0) == 1, "B6h URSWRZ follows: 1", NULL);
	expect_read(0, "URSWRZ 1: READ(16) past the write pointer -> GOOD", 3 * ZONE, 8, EXPECT_GOOD);
	itest_expect_cmd(s2, 0, "other I_T nexus: 06/2A/01 MODE PARAMETERS CHANGED", tur, 6, ITEST_NONE, NULL, 0, 0,
			 EXPECT_SENSE(6, 0x2a, 0x01), NULL);
	itest_clear_ua(s2, 0);
	mode_select(0, "MODE SELECT(10) URSWRZ = 0, FSNOZ 4, MAXIMUM ACTIVATION 1 (PAGE LENGTH 0010h) -> GOOD", 4, 0x00,
		    1, false, false, EXPECT_GOOD);
	itest_clear_ua(s2, 0);
	itest_ok(b6_urswrz(0) == 0 && page_field(0, 0, 4, 4) == 4 && page_field(0, 0, 16, 2) == 1,
		 "B6h URSWRZ back to 0; FSNOZ 4 and MAXIMUM ACTIVATION 1 read back", NULL);
	expect_read(0, "URSWRZ 0 again: READ(16) past the write pointer -> 05/21/06", 3 * ZONE, 8,
		    EXPECT_SENSE(5, 0x21, 0x06));
	mode_select(0, "MODE SELECT(10) with a non-changeable bit (byte 10 bit 1) -> 05/26/00", 2, 0x02, 0, false, false,
		    EXPECT_SENSE(5, 0x26, 0x00));
	{
		uint8_t c[10] = { 0x55, 0x10 }, p[8 + 4 + 26] = { 0 };

		p[8] = 0x4a;
		p[9] = 0x0f;
		p[11] = 26;
		p[8 + 20 + 3] = 1;
		itest_put_be16(c + 7, sizeof(p));
		itest_expect_cmd(s, 0, "MODE SELECT(10) with PAGE LENGTH 26 and a byte set past the page -> 05/26/00",
				 c, 10, ITEST_OUT, p, sizeof(p), 0, EXPECT_SENSE(5, 0x26, 0x00), NULL);
		p[8 + 20 + 3] = 0;
		p[11] = 0x0e;
		itest_put_be16(c + 7, 8 + 18);
		itest_expect_cmd(s, 0, "MODE SELECT(10) with PAGE LENGTH 000Eh (shorter than the page) -> 05/26/00", c,
				 10, ITEST_OUT, p, 8 + 18, 0, EXPECT_SENSE(5, 0x26, 0x00), NULL);
	}
	mode_select(2, "MODE SELECT(10) of 0Ah/0Fh on a conventional LU -> 05/26/00", 0, 0x00, 0, false, false,
		    EXPECT_SENSE(5, 0x26, 0x00));
	mode_select(0, "MODE SELECT(10) SP = 1, URSWRZ = 1, FSNOZ 2 -> GOOD", 2, 0x01, 0, true, true, EXPECT_GOOD);
	if (!restart(d, SIGTERM))
		return;
	itest_ok(page_field(0, 0, 10, 1) == 0x01 && page_field(0, 3, 10, 1) == 0x01 && page_field(0, 2, 10, 1) == 0x00,
		 "after a restart the saved URSWRZ 1 is current and saved; the default is still the config's 0", NULL);
	itest_ok(b6_urswrz(0) == 1, "after a restart B6h URSWRZ is the saved 1", NULL);
	expect_read(0, "after a restart: READ(16) past the write pointer -> GOOD", 3 * ZONE, 8, EXPECT_GOOD);
}

int main(int argc, char **argv)
{
	struct itest_daemon d;

	itest_init(argc, argv, "test_zbc_sobr: SOBR zones and the Zoned Block Device Control mode page");
	itest_daemon_up(&d, "zbc-sobr", config);
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	s2 = itest_session(&d, ITEST_INITIATOR_2, 0);
	if (!s || !s2)
		return itest_finish();
	for (int lun = 0; lun < 3; lun++) {
		itest_clear_ua(s, lun);
		itest_clear_ua(s2, lun);
	}
	test_layout();
	test_writes();
	test_restart_and_activate(&d);
	if (s && s2)
		test_mode_page(&d);
	itest_close(s);
	itest_close(s2);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
