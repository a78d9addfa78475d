/*
 * ZBC-2 zone domains and realms (kind zbc-zd; ZBC-2; libzbc zbc.h; docs/zbc.md)
 * over iSCSI: B6h ZONED BLOCK DEVICE EXTENSION 2h, REPORT ZONE DOMAINS,
 * REPORT REALMS, INACTIVE zones in REPORT ZONES and their sense (07/2C/12),
 * ZONE QUERY and ZONE ACTIVATE with each unmet prerequisite (NOT EMPTY,
 * REALM ALIGNMENT), ALL, the data of a conventional zone dropped when its
 * realm leaves, and the realms surviving a restart.
 *
 * LUN 0: zbc-zd, 64 MiB of 4 MiB zones: zones 0-7 domain 0 (conventional),
 * 8-15 domain 1 (SWR), realms of 2 zones (4 realms), all active in domain 1.
 * LUN 0 restricts reads (URSWRZ 0).  LUN 1: zbc-hm (no domains).  LUN 2: zbc-zd
 * with realms of 4 zones active in domain 0, unrestricted reads.  LUN 3: zbc-zd with
 * 2 gap zones (8, 9) between domain 0 (zones 0-7) and domain 1 (zones 10-17).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "itest_raw.h"

#define BS 512u
#define ZONE 8192u /* blocks */

static const char config[] =
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"kind = zbc-zd\n"
	"path = @DIR@/lun0.img\n"
	"size = 64M\n"
	"logical_block_size = 512\n"
	"zone_size = 4M\n"
	"realm_zones = 2\n"
	"active_domain = 1\n"
	"urswrz = false\n"
	"[lun \"" ITEST_TARGET "\" 1]\n"
	"kind = zbc-hm\n"
	"path = @DIR@/lun1.img\n"
	"size = 64M\n"
	"logical_block_size = 512\n"
	"zone_size = 4M\n"
	"[lun \"" ITEST_TARGET "\" 2]\n"
	"kind = zbc-zd\n"
	"path = @DIR@/lun2.img\n"
	"size = 64M\n"
	"logical_block_size = 512\n"
	"zone_size = 4M\n"
	"realm_zones = 4\n"
	"active_domain = 0\n"
	"[lun \"" ITEST_TARGET "\" 3]\n"
	"kind = zbc-zd\n"
	"path = @DIR@/lun3.img\n"
	"size = 72M\n"
	"logical_block_size = 512\n"
	"zone_size = 4M\n"
	"realm_zones = 2\n"
	"gap_zones = 2\n"
	"active_domain = 0\n";

static struct iscsi_context *s;

static void zbc_in(uint8_t *c, uint8_t sa, uint64_t lba, uint32_t alloc)
{
	memset(c, 0, 16);
	c[0] = 0x95;
	c[1] = sa;
	itest_put_be64(c + 2, lba);
	itest_put_be32(c + 10, alloc);
}

/*
 * ZONE ACTIVATE(16) / ZONE QUERY(16) as libzbc builds them (lib/zbc_scsi.c
 * zbc_scsi_zone_activate16): b1 service action, b2 ALL 80h | ZSRC 40h |
 * domain, b3-8 ZONE ID, b9-12 ALLOCATION LENGTH, b13-14 NUMBER OF ZONES (ZSRC).
 */
static void activate_cdb_zsrc(uint8_t *c, bool query, bool all, bool zsrc, uint64_t zone_id, uint16_t nz,
			      uint8_t other)
{
	memset(c, 0, 16);
	c[0] = 0x95;
	c[1] = query ? 0x09 : 0x08;
	c[2] = (uint8_t)((all ? 0x80 : 0) | (zsrc ? 0x40 : 0) | other);
	for (int i = 0; i < 6; i++)
		c[3 + i] = (uint8_t)(zone_id >> (40 - 8 * i));
	itest_put_be32(c + 9, 4096);
	if (zsrc)
		itest_put_be16(c + 13, nz);
}

static void activate_cdb(uint8_t *c, bool query, bool all, uint64_t zone_id, uint16_t nz, uint8_t other)
{
	activate_cdb_zsrc(c, query, all, true, zone_id, nz, other);
}

/* ZONE ID WITH UNMET PREREQUISITES: results bytes 24-29, as libzbc reads it. */
static uint64_t ziwup(const struct itest_result *r)
{
	return itest_get_be64(r->data + 24) >> 16;
}

/* Zone conditions from REPORT ZONES (16 zones). */
static bool zone_conditions(int lun, uint8_t cond[16], uint64_t wp[16])
{
	uint8_t c[16];
	struct itest_result r;
	bool ok;

	zbc_in(c, 0x00, 0, 64 + 16 * 64);
	itest_cmd(s, lun, c, 16, ITEST_IN, NULL, 0, 64 + 16 * 64, &r);
	ok = r.status == 0 && r.data_len == 64 + 16 * 64;
	for (int i = 0; ok && i < 16; i++) {
		cond[i] = r.data[64 + i * 64 + 1] >> 4;
		wp[i] = itest_get_be64(r.data + 64 + i * 64 + 24);
	}
	itest_result_free(&r);
	return ok;
}

static bool expect_conditions(const char *name, const char *want)
{
	uint8_t cond[16];
	uint64_t wp[16];
	char got[17] = { 0 };

	if (!zone_conditions(0, cond, wp))
		return itest_ok(false, name, "REPORT ZONES failed");
	for (int i = 0; i < 16; i++)
		got[i] = "0123456789abcdef"[cond[i]];
	return itest_ok(strcmp(got, want) == 0, name, "conditions %s, want %s", got, want);
}

/* Sends ZONE ACTIVATE / QUERY; returns the results (caller frees) or NULL. */
static bool act(const char *name, bool query, bool all, uint64_t zone_id, uint16_t nz, uint8_t other,
		struct itest_result *r)
{
	uint8_t c[16];

	activate_cdb(c, query, all, zone_id, nz, other);
	itest_cmd(s, 0, c, 16, ITEST_IN, NULL, 0, 4096, r);
	return itest_ok(r->status == 0 && r->data_len >= 64, name, "%s", itest_result_str(r));
}

/*
 * REPORT ZONE DOMAINS (95h/07h) with REPORTING OPTIONS option from LBA 0:
 * the domain IDs reported ("01", "1", "" ...), or "error".  Every
 * descriptor must carry VZDZT where libzbc (byte 41) and sg3_utils (byte
 * 42) read it, and bytes 4-7 the returned length with the header (libzbc).
 */
static const char *domains_reported(uint8_t option)
{
	static char ids[8];
	uint8_t c[16];
	struct itest_result r;
	size_t n = 0;

	zbc_in(c, 0x07, 0, 4096);
	c[14] = option;
	itest_cmd(s, 0, c, 16, ITEST_IN, NULL, 0, 4096, &r);
	if (r.status != 0 || r.data_len < 64 || r.data[10] != option ||
	    itest_get_be32(r.data + 4) != 64 + (uint32_t)r.data[9] * 96 || r.data_len != 64 + r.data[9] * 96) {
		itest_result_free(&r);
		return "error";
	}
	for (int i = 0; i < r.data[9] && n + 1 < sizeof(ids); i++) {
		const uint8_t *d = r.data + 64 + i * 96;

		if ((d[41] & 0x02) == 0 || (d[42] & 0x02) == 0) {
			itest_result_free(&r);
			return "error";
		}
		ids[n++] = (char)('0' + d[0]);
	}
	ids[n] = '\0';
	itest_result_free(&r);
	return ids;
}

static void test_reports(void)
{
	uint8_t c[16];
	struct itest_result r;

	memset(c, 0, 16);
	c[0] = 0x12;
	c[1] = 0x01;
	c[2] = 0xb6;
	c[4] = 64;
	itest_cmd(s, 0, c, 6, ITEST_IN, NULL, 0, 64, &r);
	itest_ok(r.status == 0 && r.data_len > 4 && (r.data[0] & 0x1f) == 0x14 && (r.data[4] >> 4) == 2,
		 "B6h: PDT 14h, ZONED BLOCK DEVICE EXTENSION 2h (zone domains)", "byte 0 %02x byte 4 %02x",
		 r.data_len > 4 ? r.data[0] : 0, r.data_len > 4 ? r.data[4] : 0);
	itest_result_free(&r);

	zbc_in(c, 0x07, 0, 4096);
	itest_cmd(s, 0, c, 16, ITEST_IN, NULL, 0, 4096, &r);
	itest_ok(r.status == 0 && r.data_len == 64 + 2 * 96 && itest_get_be32(r.data) == 2 * 96 &&
			 itest_get_be32(r.data + 4) == 64 + 2 * 96 && r.data[8] == 2 && r.data[9] == 2 &&
			 (r.data[64 + 41] & 0x02) && (r.data[64 + 42] & 0x02) &&
			 r.data[64] == 0 && itest_get_be64(r.data + 64 + 16) == 8 && itest_get_be64(r.data + 64 + 24) == 0 &&
			 itest_get_be64(r.data + 64 + 32) == 8 * ZONE - 1 && r.data[64 + 40] == 1 && r.data[160] == 1 &&
			 itest_get_be64(r.data + 160 + 24) == 8 * ZONE && itest_get_be64(r.data + 160 + 32) == 16 * ZONE - 1 &&
			 r.data[160 + 40] == 2,
		 "REPORT ZONE DOMAINS: bytes 0-3 192 (descriptors, sg_rep_zones), 4-7 256 (with the header, libzbc), "
		 "VZDZT in bytes 41 (libzbc) and 42 (sg_rep_zones); domain 0 = zones 0-7 conventional, domain 1 = zones "
		 "8-15 SWR", "%s len %d",
		 itest_result_str(&r), r.data_len);
	itest_result_free(&r);
	/* Domain 0's realms are all inactive at the start, domain 1's all active. */
	itest_ok(strcmp(domains_reported(0x01), "1") == 0,
		 "REPORT ZONE DOMAINS option 01h (all zones active) -> domain 1", "%s", domains_reported(0x01));
	itest_ok(strcmp(domains_reported(0x02), "1") == 0,
		 "REPORT ZONE DOMAINS option 02h (some zones active) -> domain 1", "%s", domains_reported(0x02));
	itest_ok(strcmp(domains_reported(0x03), "0") == 0,
		 "REPORT ZONE DOMAINS option 03h (no zone active) -> domain 0", "%s", domains_reported(0x03));
	zbc_in(c, 0x07, 0, 4096);
	c[14] = 0x04;
	itest_expect_cmd(s, 0, "REPORT ZONE DOMAINS option 04h (reserved) -> 05/24/00", c, 16,
			 ITEST_IN, NULL, 0, 4096, EXPECT_SENSE(5, 0x24, 0), NULL);
	zbc_in(c, 0x07, 9 * ZONE, 4096);
	itest_cmd(s, 0, c, 16, ITEST_IN, NULL, 0, 4096, &r);
	itest_ok(r.status == 0 && r.data_len == 64 + 96 && r.data[64] == 1,
		 "REPORT ZONE DOMAINS from a locator in domain 1: domain 1 only", "%s", itest_result_str(&r));
	itest_result_free(&r);

	zbc_in(c, 0x06, 0, 4096);
	itest_cmd(s, 0, c, 16, ITEST_IN, NULL, 0, 4096, &r);
	{
		bool ok = r.status == 0 && r.data_len == 64 + 4 * 48 && itest_get_be32(r.data + 4) == 4 &&
			  itest_get_be32(r.data + 8) == 48;

		for (uint32_t k = 0; ok && k < 4; k++) {
			const uint8_t *d = r.data + 64 + k * 48;

			ok = itest_get_be32(d) == k && d[7] == 1 && itest_get_be64(d + 16) == 2 * k * ZONE &&
			     itest_get_be64(d + 24) == (2 * k + 2) * ZONE - 1 &&
			     itest_get_be64(d + 32) == (8 + 2 * k) * ZONE &&
			     itest_get_be64(d + 40) == (10 + 2 * k) * ZONE - 1;
		}
		itest_ok(ok, "REPORT REALMS: 4 realms of 2 zones, each active in domain 1, with both domains' LBA ranges",
			 "%s len %d", itest_result_str(&r), r.data_len);
	}
	itest_result_free(&r);
	zbc_in(c, 0x06, 0, 4096);
	c[14] = 0x04;
	itest_expect_cmd(s, 0, "REPORT REALMS with reserved reporting option 04h -> 05/24/00", c, 16, ITEST_IN, NULL, 0, 4096,
			 EXPECT_SENSE(5, 0x24, 0), NULL);
	zbc_in(c, 0x06, 0, 4096);
	itest_expect_cmd(s, 1, "REPORT REALMS on a zbc-hm LU (no domains) -> 05/24/00", c, 16, ITEST_IN, NULL, 0, 4096,
			 EXPECT_SENSE(5, 0x24, 0), NULL);
	expect_conditions("REPORT ZONES: domain 0 INACTIVE (5h), domain 1 EMPTY", "5555555511111111");
	{
		uint8_t cond[16];
		uint64_t wp[16];

		zone_conditions(0, cond, wp);
		itest_ok(wp[0] == UINT64_MAX, "an INACTIVE zone reports WRITE POINTER LBA FFFFFFFFFFFFFFFFh", "%llx",
			 (unsigned long long)wp[0]);
	}
}

static void test_inactive_access(void)
{
	uint8_t c[16], buf[BS] = { 1 };

	memset(c, 0, 16);
	c[0] = 0x88;
	itest_put_be64(c + 2, 5);
	itest_put_be32(c + 10, 1);
	itest_expect_cmd(s, 0, "URSWRZ 0: READ(16) of an INACTIVE zone -> 07/2C/12 ZONE IS INACTIVE", c, 16, ITEST_IN,
			 NULL, 0, BS, EXPECT_SENSE(7, 0x2c, 0x12), NULL);
	itest_put_be64(c + 2, 9 * ZONE + 5);
	itest_expect_cmd(s, 2, "URSWRZ 1 (LUN 2, realms active in domain 0): READ(16) of an INACTIVE zone -> GOOD", c, 16,
			 ITEST_IN, NULL, 0, BS, EXPECT_GOOD, NULL);
	itest_put_be64(c + 2, 5);
	c[0] = 0x8a;
	itest_expect_cmd(s, 0, "WRITE(16) to an INACTIVE zone -> 07/2C/12", c, 16, ITEST_OUT, buf, BS, 0,
			 EXPECT_SENSE(7, 0x2c, 0x12), NULL);
	memset(c, 0, 16);
	c[0] = 0x94;
	c[1] = 0x03;
	itest_put_be64(c + 2, 8 * ZONE);
	itest_expect_cmd(s, 0, "OPEN ZONE of an active SWR zone -> GOOD", c, 16, ITEST_NONE, NULL, 0, 0, EXPECT_GOOD,
			 NULL);
	memset(c, 0, 16);
	c[0] = 0x94;
	c[1] = 0x01;
	c[14] = 0x01;
	itest_expect_cmd(s, 0, "CLOSE ZONE ALL leaves INACTIVE zones alone -> GOOD", c, 16, ITEST_NONE, NULL, 0, 0,
			 EXPECT_GOOD, NULL);
	itest_ok(itest_write16(s, 0, 8 * ZONE, buf, 1, BS, false, "WRITE(16) at zone 8's write pointer"),
		 "WRITE(16) at zone 8's write pointer (realm 0, domain 1) -> GOOD", NULL);
}

static void test_activate(void)
{
	struct itest_result r;
	uint8_t data[BS], back[BS];

	/* Realm 0's zone 8 is not empty: it cannot leave domain 1. */
	if (act("ZONE QUERY realm 0 to domain 0 -> GOOD", true, false, 8 * ZONE, 2, 0, &r))
		itest_ok(r.data[8] == 0x40 && r.data[9] == 0x02 && ziwup(&r) == 8 * ZONE,
			 "... ACTIVATED 0, unmet prerequisite NOT EMPTY, ZIWUP (bytes 24-29) = zone 8",
			 "b8 %02x b9 %02x ziwup %llu", r.data[8], r.data[9], (unsigned long long)ziwup(&r));
	itest_result_free(&r);
	if (act("ZONE QUERY zone 3 alone (half a realm) -> GOOD", true, false, 3 * ZONE, 1, 1, &r))
		itest_ok(r.data[8] == 0x40 && r.data[9] == 0x04 && ziwup(&r) == 3 * ZONE,
			 "... unmet prerequisite REALM ALIGNMENT, ZIWUP = zone 3", "b8 %02x b9 %02x", r.data[8], r.data[9]);
	itest_result_free(&r);
	if (act("ZONE QUERY realm 1 (zones 2-3) to domain 0 -> GOOD", true, false, 2 * ZONE, 2, 0, &r))
		itest_ok(r.data[8] == 0x80 && itest_get_be32(r.data + 16) == 2 && itest_get_be32(r.data) == 24 &&
				 r.data[64] == 1 && (r.data[65] >> 4) == 0 && r.data[66] == 0 &&
				 itest_get_be64(r.data + 64 + 8) == 2 && itest_get_be64(r.data + 64 + 16) == 2 * ZONE,
			 "... NZ_VALID, 2 zones, one 24-byte descriptor: conventional, NOT WRITE POINTER, domain 0, zones 2-3, "
			 "not ACTIVATED",
			 "b8 %02x nz %u", r.data[8], itest_get_be32(r.data + 16));
	itest_result_free(&r);
	expect_conditions("ZONE QUERY changed nothing", "5555555521111111");
	if (act("ZONE ACTIVATE realm 1 to domain 0 (ZONE ID in domain 1) -> GOOD", false, false, 10 * ZONE, 2, 0, &r))
		itest_ok(r.data[8] == 0x81 && itest_get_be32(r.data + 16) == 2, "... ACTIVATED, 2 zones",
			 "b8 %02x", r.data[8]);
	itest_result_free(&r);
	expect_conditions("... zones 2-3 NOT WRITE POINTER, zones 10-11 INACTIVE", "5500555521551111");
	itest_ok(strcmp(domains_reported(0x01), "") == 0 && strcmp(domains_reported(0x02), "01") == 0 &&
			 strcmp(domains_reported(0x03), "") == 0,
		 "REPORT ZONE DOMAINS with one realm in each: 01h none, 02h both, 03h none", "%s / %s / %s",
		 domains_reported(0x01), domains_reported(0x02), domains_reported(0x03));

	itest_pattern(data, BS, 3);
	itest_write16(s, 0, 2 * ZONE + 7, data, 1, BS, false, "WRITE(16) to the now active conventional zone 2");
	itest_read16(s, 0, 2 * ZONE + 7, back, 1, BS, "READ(16) it back");
	itest_ok(!memcmp(data, back, BS), "a conventional zone of an activated realm takes random writes", NULL);
	act("ZONE ACTIVATE realm 1 back to domain 1 -> GOOD", false, false, 2 * ZONE, 2, 1, &r);
	itest_result_free(&r);
	act("ZONE ACTIVATE realm 1 to domain 0 again -> GOOD", false, false, 2 * ZONE, 2, 0, &r);
	itest_result_free(&r);
	memset(data, 0, BS);
	itest_read16(s, 0, 2 * ZONE + 7, back, 1, BS, "READ(16) of zone 2 after the round trip");
	itest_ok(!memcmp(data, back, BS), "a conventional zone's data is dropped when its realm leaves the domain", NULL);
	if (act("ZONE ACTIVATE of realm 1, already in domain 0 -> GOOD", false, false, 2 * ZONE, 2, 0, &r))
		itest_ok(r.data[8] == 0x80 && itest_get_be32(r.data + 16) == 0 && itest_get_be32(r.data) == 0,
			 "... nothing to move: NZ 0, no descriptor, not ACTIVATED", "b8 %02x", r.data[8]);
	itest_result_free(&r);
	if (act("ZONE QUERY ALL to domain 0 -> GOOD", true, true, 0, 0, 0, &r))
		itest_ok(r.data[9] == 0x02 && r.data[11] == 0x01, "... NOT EMPTY (zone 8 was written), ALL reported",
			 "b9 %02x b11 %02x", r.data[9], r.data[11]);
	itest_result_free(&r);
	{
		uint8_t c[16] = { 0x94, 0x04 };

		itest_put_be64(c + 2, 8 * ZONE);
		itest_expect_cmd(s, 0, "RESET WRITE POINTER zone 8 -> GOOD", c, 16, ITEST_NONE, NULL, 0, 0, EXPECT_GOOD, NULL);
	}
	if (act("ZONE ACTIVATE ALL to domain 0 -> GOOD", false, true, 0, 0, 0, &r))
		itest_ok(r.data[8] == 0x81 && itest_get_be32(r.data + 16) == 6 && itest_get_be32(r.data) == 48 &&
				 itest_get_be64(r.data + 64 + 24 + 16) == 4 * ZONE && itest_get_be64(r.data + 64 + 24 + 8) == 4,
			 "... ACTIVATED, 6 zones, two descriptors of 24 bytes (realm 0; realms 2-3: 4 zones from zone 4)", "b8 %02x nz %u len %u", r.data[8],
			 itest_get_be32(r.data + 16), itest_get_be32(r.data));
	itest_result_free(&r);
	expect_conditions("... every realm in domain 0", "0000000055555555");
	{
		uint8_t c[16];

		activate_cdb(c, false, false, 0, 2, 2);
		itest_expect_cmd(s, 0, "ZONE ACTIVATE to domain 2 (none) -> 05/24/00", c, 16, ITEST_IN, NULL, 0, 4096,
				 EXPECT_SENSE(5, 0x24, 0), NULL);
		activate_cdb(c, false, false, 5, 2, 0);
		itest_expect_cmd(s, 0, "ZONE ACTIVATE with a ZONE ID that is no zone start -> 05/24/00", c, 16, ITEST_IN,
				 NULL, 0, 4096, EXPECT_SENSE(5, 0x24, 0), NULL);
	}
	act("ZONE ACTIVATE realms 2-3 back to domain 1 -> GOOD", false, false, 4 * ZONE, 4, 1, &r);
	itest_result_free(&r);
}

/* ZONE QUERY(32) (7Fh/F801h, libzbc's layout) through the raw client (libiscsi sends 16-byte CDBs at most). */
static void test_query32(struct itest_daemon *d)
{
	struct itest_raw raw;
	struct itest_result r;
	uint8_t c[32] = { 0x7f };
	char err[256];

	if (itest_raw_login(&raw, d, ITEST_INITIATOR_2, ITEST_TARGET, false, false, true, err, sizeof(err))) {
		itest_ok(false, "raw session for the 32-byte CDBs", "%s", err);
		return;
	}
	itest_raw_clear_ua(&raw, 0);
	c[7] = 0x18;
	itest_put_be16(c + 8, 0xf801);
	c[11] = 0;                       /* OTHER ZONE DOMAIN ID */
	itest_put_be64(c + 12, 4 * ZONE); /* realm 2, active in domain 1 */
	itest_put_be32(c + 28, 4096);
	itest_raw_long_cdb_io(&raw, 0, c, 32, NULL, 0, 4096, &r);
	itest_ok(r.status == 0 && r.data_len >= 64 && r.data[8] == 0x80 && itest_get_be32(r.data + 16) == 2,
		 "ZONE QUERY(32) without ZSRC: the realm of ZONE ID (2 zones), not activated", "%s b8 %02x nz %u",
		 itest_result_str(&r), r.data_len >= 64 ? r.data[8] : 0, r.data_len >= 64 ? itest_get_be32(r.data + 16) : 0);
	itest_result_free(&r);
	c[10] = 0x40; /* ZSRC */
	itest_put_be32(c + 20, 4);
	itest_raw_long_cdb_io(&raw, 0, c, 32, NULL, 0, 4096, &r);
	itest_ok(r.status == 0 && r.data_len >= 64 && itest_get_be32(r.data + 16) == 4,
		 "ZONE QUERY(32) with ZSRC and NUMBER OF ZONES 4: realms 2-3", "%s", itest_result_str(&r));
	itest_result_free(&r);
	c[11] = 3;
	itest_raw_long_cdb_io(&raw, 0, c, 32, NULL, 0, 4096, &r);
	itest_ok(r.status == 2 && r.sense.key == 5 && r.sense.asc == 0x24,
		 "ZONE QUERY(32) to domain 3 (none) -> 05/24/00", "%s", itest_result_str(&r));
	itest_result_free(&r);
	itest_raw_close(&raw);
}

static void test_restart(struct itest_daemon *d)
{
	itest_close(s);
	itest_daemon_stop(d, SIGKILL);
	itest_daemon_start(d);
	s = itest_session(d, ITEST_INITIATOR_1, 0);
	if (!s)
		return;
	for (int lun = 0; lun < 4; lun++)
		itest_clear_ua(s, lun);
	expect_conditions("after kill -9 and restart the realms are where ZONE ACTIVATE left them",
			  "0000555555551111");
}

static void zbc_out_count(uint8_t *c, uint8_t sa, uint32_t zone, uint16_t count)
{
	memset(c, 0, 16);
	c[0] = 0x94;
	c[1] = sa;
	itest_put_be64(c + 2, (uint64_t)zone * ZONE);
	itest_put_be16(c + 12, count);
}

/* ZBC OUT ZONE COUNT (ZBC-2), served on zone domain LUs; realms 2-3 (zones 12-15) are active in domain 1. */
static void test_zone_count(void)
{
	uint8_t c[16];

	zbc_out_count(c, 0x03, 12, 4);
	itest_expect_cmd(s, 0, "OPEN ZONE, ZONE COUNT 4 -> GOOD", c, 16, ITEST_NONE, NULL, 0, 0, EXPECT_GOOD, NULL);
	expect_conditions("... zones 12-15 EXPLICITLY OPENED", "0000555555553333");
	zbc_out_count(c, 0x01, 12, 4);
	itest_expect_cmd(s, 0, "CLOSE ZONE, ZONE COUNT 4 -> GOOD", c, 16, ITEST_NONE, NULL, 0, 0, EXPECT_GOOD, NULL);
	expect_conditions("... zones 12-15 EMPTY again (nothing written)", "0000555555551111");
	zbc_out_count(c, 0x02, 12, 2);
	itest_expect_cmd(s, 0, "FINISH ZONE, ZONE COUNT 2 -> GOOD", c, 16, ITEST_NONE, NULL, 0, 0, EXPECT_GOOD, NULL);
	expect_conditions("... zones 12-13 FULL", "000055555555ee11");
	zbc_out_count(c, 0x04, 12, 2);
	itest_expect_cmd(s, 0, "RESET WRITE POINTER, ZONE COUNT 2 -> GOOD", c, 16, ITEST_NONE, NULL, 0, 0, EXPECT_GOOD,
			 NULL);
	expect_conditions("... zones 12-13 EMPTY", "0000555555551111");
	zbc_out_count(c, 0x03, 10, 4);
	itest_expect_cmd(s, 0, "OPEN ZONE, ZONE COUNT 4 from INACTIVE zone 10 -> 07/2C/12, nothing opened", c, 16,
			 ITEST_NONE, NULL, 0, 0, EXPECT_SENSE(7, 0x2c, 0x12), NULL);
	expect_conditions("... no zone changed", "0000555555551111");
	zbc_out_count(c, 0x03, 14, 3);
	itest_expect_cmd(s, 0, "OPEN ZONE, ZONE COUNT past the last zone -> 05/24/00", c, 16, ITEST_NONE, NULL, 0, 0,
			 EXPECT_SENSE(5, 0x24, 0), NULL);
	zbc_out_count(c, 0x03, 8, 2);
	itest_expect_cmd(s, 1, "zbc-hm LU: ZONE COUNT 2 (ZBC-1) -> 05/24/00", c, 16, ITEST_NONE, NULL, 0, 0,
			 EXPECT_SENSE(5, 0x24, 0), NULL);
}

/* Gap zones (LUN 3): type 5h in REPORT ZONES, no data (05/21/09), no zone management, outside both domains. */
static void test_gap_zones(void)
{
	uint8_t c[16], buf[BS] = { 0 };
	struct itest_result r;

	zbc_in(c, 0x00, 0, 64 + 18 * 64);
	itest_cmd(s, 3, c, 16, ITEST_IN, NULL, 0, 64 + 18 * 64, &r);
	itest_ok(r.status == 0 && r.data_len == 64 + 18 * 64 && r.data[64 + 8 * 64] == 5 && r.data[64 + 9 * 64] == 5 &&
			 (r.data[64 + 8 * 64 + 1] >> 4) == 0 && r.data[64 + 7 * 64] == 1 && r.data[64 + 10 * 64] == 2 &&
			 (r.data[64 + 10 * 64 + 1] >> 4) == 5,
		 "REPORT ZONES: zones 8-9 type 5h (gap), NOT WRITE POINTER; zone 7 conventional, zone 10 SWR INACTIVE",
		 "%s", itest_result_str(&r));
	itest_result_free(&r);
	/*
	 * ZBC-2 reporting options: 3Eh every zone but the gap zones (Linux
	 * scsi_debug, sg3_utils; libzbc's ZBC_RZ_RO_GAP reads it otherwise:
	 * docs/zbc.md), 3Fh NOT WRITE POINTER (the gap zones and the active
	 * conventional ones), 08h INACTIVE.
	 */
	zbc_in(c, 0x00, 0, 64 + 18 * 64);
	c[14] = 0x3e;
	itest_cmd(s, 3, c, 16, ITEST_IN, NULL, 0, 64 + 18 * 64, &r);
	{
		bool no_gap = r.status == 0 && r.data_len == 64 + 16 * 64;

		for (int i = 0; no_gap && i < 16; i++)
			no_gap = (r.data[64 + i * 64] & 0x0f) != 5 &&
				 itest_get_be64(r.data + 64 + i * 64 + 16) == (uint64_t)(i < 8 ? i : i + 2) * ZONE;
		itest_ok(no_gap && itest_get_be32(r.data) == 16 * 64,
			 "REPORT ZONES reporting option 3Eh (all but gap zones): zones 0-7 and 10-17, LIST LENGTH 1024",
			 "%s", itest_result_str(&r));
	}
	itest_result_free(&r);
	zbc_in(c, 0x00, 7 * ZONE, 64 + 2 * 64);
	c[14] = 0x3e | 0x80;
	itest_cmd(s, 3, c, 16, ITEST_IN, NULL, 0, 64 + 2 * 64, &r);
	itest_ok(r.status == 0 && itest_get_be32(r.data) == 2 * 64 && itest_get_be64(r.data + 64 + 16) == 7 * ZONE &&
			 itest_get_be64(r.data + 128 + 16) == 10 * ZONE,
		 "REPORT ZONES 3Eh with PARTIAL from zone 7: zone 7, then zone 10 (the gap skipped)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	zbc_in(c, 0x00, 0, 64 + 18 * 64);
	c[14] = 0x3f;
	itest_cmd(s, 3, c, 16, ITEST_IN, NULL, 0, 64 + 18 * 64, &r);
	itest_ok(r.status == 0 && itest_get_be32(r.data) == 10 * 64 && r.data[64] == 1 && r.data[64 + 8 * 64] == 5 &&
			 r.data[64 + 9 * 64] == 5 && itest_get_be64(r.data + 64 + 9 * 64 + 16) == 9 * ZONE,
		 "REPORT ZONES reporting option 3Fh (NOT WRITE POINTER): zones 0-7 conventional, then gap zones 8-9",
		 "%s", itest_result_str(&r));
	itest_result_free(&r);
	c[14] = 0x08;
	itest_cmd(s, 3, c, 16, ITEST_IN, NULL, 0, 64 + 18 * 64, &r);
	itest_ok(r.status == 0 && itest_get_be32(r.data) == 8 * 64 && r.data_len == 64 + 8 * 64 &&
			 itest_get_be64(r.data + 64 + 16) == 10 * ZONE && (r.data[65] >> 4) == 5,
		 "REPORT ZONES reporting option 08h (INACTIVE): the 8 zones of domain 1, from zone 10", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	memset(c, 0, 16);
	c[0] = 0x88;
	itest_put_be64(c + 2, 8 * ZONE + 3);
	itest_put_be32(c + 10, 1);
	itest_expect_cmd(s, 3, "READ(16) in a gap zone -> 05/21/09 ATTEMPT TO ACCESS GAP ZONE", c, 16, ITEST_IN, NULL, 0,
			 BS, EXPECT_SENSE(5, 0x21, 0x09), NULL);
	itest_put_be64(c + 2, 8 * ZONE - 1);
	itest_put_be32(c + 10, 2);
	itest_expect_cmd(s, 3, "READ(16) from zone 7 into the gap -> 05/21/09", c, 16, ITEST_IN, NULL, 0, 2 * BS,
			 EXPECT_SENSE(5, 0x21, 0x09), NULL);
	c[0] = 0x8a;
	itest_put_be64(c + 2, 9 * ZONE);
	itest_put_be32(c + 10, 1);
	itest_expect_cmd(s, 3, "WRITE(16) to a gap zone -> 05/21/09", c, 16, ITEST_OUT, buf, BS, 0,
			 EXPECT_SENSE(5, 0x21, 0x09), NULL);
	memset(c, 0, 16);
	c[0] = 0x94;
	c[1] = 0x03;
	itest_put_be64(c + 2, 8 * ZONE);
	itest_expect_cmd(s, 3, "OPEN ZONE of a gap zone (no write pointer) -> 05/24/00", c, 16, ITEST_NONE, NULL, 0, 0,
			 EXPECT_SENSE(5, 0x24, 0), NULL);
	c[1] = 0x04;
	c[14] = 0x01;
	itest_expect_cmd(s, 3, "RESET WRITE POINTER ALL -> GOOD (gap zones untouched)", c, 16, ITEST_NONE, NULL, 0, 0,
			 EXPECT_GOOD, NULL);
	zbc_in(c, 0x07, 0, 4096);
	itest_cmd(s, 3, c, 16, ITEST_IN, NULL, 0, 4096, &r);
	itest_ok(r.status == 0 && r.data_len == 64 + 2 * 96 && itest_get_be64(r.data + 64 + 16) == 8 &&
			 itest_get_be64(r.data + 64 + 32) == 8 * ZONE - 1 && itest_get_be64(r.data + 160 + 24) == 10 * ZONE &&
			 itest_get_be64(r.data + 160 + 32) == 18 * ZONE - 1,
		 "REPORT ZONE DOMAINS: domain 0 = zones 0-7, domain 1 = zones 10-17 (the gap in neither)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	activate_cdb(c, false, false, 8 * ZONE, 2, 1);
	itest_expect_cmd(s, 3, "ZONE ACTIVATE with a gap zone as ZONE ID -> 05/24/00", c, 16, ITEST_IN, NULL, 0, 4096,
			 EXPECT_SENSE(5, 0x24, 0), NULL);
	activate_cdb(c, false, false, 2 * ZONE, 2, 1);
	itest_cmd(s, 3, c, 16, ITEST_IN, NULL, 0, 4096, &r);
	itest_ok(r.status == 0 && r.data_len >= 88 && r.data[8] == 0x81 && itest_get_be64(r.data + 64 + 16) == 12 * ZONE,
		 "ZONE ACTIVATE realm 1 to domain 1 across the gap -> ACTIVATED, zones from 12", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
}

/* Zone conditions of LUN lun (16 zones) as a string of hex digits. */
static void conditions_of(int lun, char got[17])
{
	uint8_t cond[16];
	uint64_t wp[16];

	memset(got, 0, 17);
	if (zone_conditions(lun, cond, wp))
		for (int i = 0; i < 16; i++)
			got[i] = "0123456789abcdef"[cond[i]];
}

/* MODE SELECT(10) of the Zoned Block Device Control page of LUN lun as libzbc sends it (PAGE LENGTH 26). */
static void zbd_control_select(int lun, uint32_t fsnoz, uint16_t max_activation)
{
	uint8_t c[10] = { 0x55, 0x10 }, p[8 + 4 + 26] = { 0 };
	char name[128];

	p[8] = 0x4a;
	p[9] = 0x0f;
	p[11] = 26;
	itest_put_be32(p + 12, fsnoz);
	itest_put_be16(p + 24, max_activation);
	itest_put_be16(c + 7, sizeof(p));
	snprintf(name, sizeof(name), "MODE SELECT(10) FSNOZ %u, MAXIMUM ACTIVATION %u (libzbc's layout) -> GOOD",
		 (unsigned)fsnoz, (unsigned)max_activation);
	itest_expect_cmd(s, lun, name, c, 10, ITEST_OUT, p, sizeof(p), 0, EXPECT_GOOD, NULL);
	itest_clear_ua(s, lun);
}

/* ZONE ACTIVATE / QUERY(16) to LUN 2; the result's ACTIVATED byte and NUMBER OF ZONES in *b8, *nz. */
static bool act2(const char *name, bool query, bool all, bool zsrc, uint64_t zone_id, uint16_t nz, uint8_t other,
		 uint8_t want_b8, uint32_t want_nz)
{
	uint8_t c[16];
	struct itest_result r;
	bool ok;

	activate_cdb_zsrc(c, query, all, zsrc, zone_id, nz, other);
	itest_cmd(s, 2, c, 16, ITEST_IN, NULL, 0, 4096, &r);
	ok = itest_ok(r.status == 0 && r.data_len >= 64 && r.data[8] == want_b8 &&
			      itest_get_be32(r.data + 16) == want_nz,
		      name, "%s b8 %02x nz %u", itest_result_str(&r), r.data_len >= 64 ? r.data[8] : 0,
		      r.data_len >= 64 ? itest_get_be32(r.data + 16) : 0);
	itest_result_free(&r);
	return ok;
}

/*
 * LUN 2 (realms of 4 zones, both in domain 0): ZONE ACTIVATE(16) / ZONE
 * QUERY(16) in libzbc's encoding, the number of zones from FSNOZ without
 * ZSRC, MAXIMUM ACTIVATION, a host's cycle through the layouts (all
 * conventional, all sequential and back), the sense for ZONE IDs past the
 * capacity (libzbc 03_xmr_command_check 101: 05/21/00) and ranges past the
 * last zone (102: 05/24/00), and the CDB usage data in REPORT SUPPORTED
 * OPERATION CODES.
 */
static void test_libzbc_activation(void)
{
	uint8_t c[16];
	struct itest_result r;
	char got[17];

	{
		uint8_t ms[10] = { 0x5a, 0x10, 0x0a, 0x0f, 0, 0, 0, 0, 255 };

		itest_cmd(s, 2, ms, 10, ITEST_IN, NULL, 0, 255, &r);
		itest_ok(r.status == 0 && r.data_len >= 8 + 20 && itest_get_be32(r.data + 12) == 4,
			 "Zoned Block Device Control of a zbc-zd LU with realm_zones = 4: FSNOZ 4 (libzbc byte 12)", "%s",
			 itest_result_str(&r));
		itest_result_free(&r);
	}
	act2("ZONE QUERY(16) without ZSRC at zone 8 to domain 1: FSNOZ's 4 zones (one realm), not activated", true,
	     false, false, 8 * ZONE, 0, 1, 0x80, 4);
	zbd_control_select(2, 8, 0);
	act2("ZONE QUERY(16) without ZSRC, FSNOZ 8: both realms", true, false, false, 8 * ZONE, 0, 1, 0x80, 8);
	act2("ZONE QUERY(16) with ZSRC, NUMBER OF ZONES 4 (FSNOZ 8 unused): one realm", true, false, true, 8 * ZONE, 4, 1,
	     0x80, 4);
	act2("ZONE ACTIVATE(16) ALL to domain 1 (all sequential) -> ACTIVATED, 8 zones", false, true, false, 0, 0, 1, 0x81,
	     8);
	conditions_of(2, got);
	itest_ok(strcmp(got, "5555555511111111") == 0, "... zones 0-7 INACTIVE, zones 8-15 EMPTY", "conditions %s", got);
	act2("ZONE ACTIVATE(16) without ZSRC at zone 0 to domain 0 (FSNOZ 8: all conventional) -> ACTIVATED, 8 zones",
	     false, false, false, 0, 0, 0, 0x81, 8);
	conditions_of(2, got);
	itest_ok(strcmp(got, "0000000055555555") == 0, "... zones 0-7 NOT WRITE POINTER, zones 8-15 INACTIVE",
		 "conditions %s", got);

	zbd_control_select(2, 8, 1);
	activate_cdb_zsrc(c, false, false, false, 8 * ZONE, 0, 1);
	itest_cmd(s, 2, c, 16, ITEST_IN, NULL, 0, 4096, &r);
	itest_ok(itest_result_matches(&r, EXPECT_SENSE(5, 0x24, 0)),
		 "MAXIMUM ACTIVATION 1: ZONE ACTIVATE of two realms (FSNOZ 8) -> 05/24/00 (libzbc 03/100)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	conditions_of(2, got);
	itest_ok(strcmp(got, "0000000055555555") == 0, "... nothing moved", "conditions %s", got);
	act2("MAXIMUM ACTIVATION 1: ZONE ACTIVATE(16) ZSRC of one realm to domain 1 -> ACTIVATED", false, false, true,
	     8 * ZONE, 4, 1, 0x81, 4);
	act2("... and back to domain 0 -> ACTIVATED", false, false, true, 0, 4, 0, 0x81, 4);
	zbd_control_select(2, 8, 0xfffe);
	act2("MAXIMUM ACTIVATION FFFEh (libzbc's \"unlimited\"): ZONE QUERY of two realms -> GOOD", true, false, false,
	     8 * ZONE, 0, 1, 0x80, 8);

	activate_cdb(c, false, false, 16 * ZONE, 4, 1);
	itest_expect_cmd(s, 2, "ZONE ACTIVATE(16) with ZONE ID = the capacity -> 05/21/00 LBA OUT OF RANGE", c, 16,
			 ITEST_IN, NULL, 0, 4096, EXPECT_SENSE(5, 0x21, 0x00), NULL);
	activate_cdb(c, true, false, 1ull << 40, 4, 1);
	itest_expect_cmd(s, 2, "ZONE QUERY(16) with ZONE ID 2^40 -> 05/21/00", c, 16, ITEST_IN, NULL, 0, 4096,
			 EXPECT_SENSE(5, 0x21, 0x00), NULL);
	activate_cdb(c, false, false, 12 * ZONE, 8, 1);
	itest_cmd(s, 2, c, 16, ITEST_IN, NULL, 0, 4096, &r);
	itest_ok(itest_result_matches(&r, EXPECT_SENSE(5, 0x24, 0)),
		 "ZONE ACTIVATE(16) zone 12 + 8 zones, past the last zone -> 05/24/00 (libzbc 03/102)", "%s",
		 itest_result_str(&r));
	itest_expect_field_pointer("... field pointer on NUMBER OF ZONES (CDB byte 13)", &r, 1, 13, -1);
	itest_result_free(&r);
	activate_cdb(c, false, false, 8 * ZONE, 4, 2);
	itest_cmd(s, 2, c, 16, ITEST_IN, NULL, 0, 4096, &r);
	itest_ok(itest_result_matches(&r, EXPECT_SENSE(5, 0x24, 0)), "ZONE ACTIVATE(16) to domain 2 (none) -> 05/24/00",
		 "%s", itest_result_str(&r));
	itest_expect_field_pointer("... field pointer on the domain ID (CDB byte 2 bit 5)", &r, 1, 2, 5);
	itest_result_free(&r);
	activate_cdb(c, false, false, 8 * ZONE + 1, 4, 1);
	itest_cmd(s, 2, c, 16, ITEST_IN, NULL, 0, 4096, &r);
	itest_ok(itest_result_matches(&r, EXPECT_SENSE(5, 0x24, 0)),
		 "ZONE ACTIVATE(16) with a ZONE ID inside a zone -> 05/24/00", "%s", itest_result_str(&r));
	itest_expect_field_pointer("... field pointer on ZONE ID (CDB byte 3)", &r, 1, 3, -1);
	itest_result_free(&r);
	zbd_control_select(2, 4, 0);
	conditions_of(2, got);
	itest_ok(strcmp(got, "0000000055555555") == 0, "LUN 2 back as it started: every realm in domain 0",
		 "conditions %s", got);

	{
		uint8_t rsoc[12] = { 0xa3, 0x0c, 0x02, 0x95, 0x00, 0x08, 0, 0, 0, 64 };
		static const uint8_t usage[16] = { 0x95, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
						   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00 };

		itest_cmd(s, 2, rsoc, 12, ITEST_IN, NULL, 0, 64, &r);
		itest_ok(r.status == 0 && r.data_len >= 4 + 16 && (r.data[1] & 0x07) == 3 &&
				 itest_get_be16(r.data + 2) == 16 && memcmp(r.data + 4, usage, 16) == 0,
			 "REPORT SUPPORTED OPERATION CODES 95h/08h: CDB USAGE DATA in libzbc's layout (b2 ALL, ZSRC, "
			 "domain; b3-14 ZONE ID, ALLOCATION LENGTH, NUMBER OF ZONES)",
			 "%s", itest_result_str(&r));
		itest_result_free(&r);
	}
}

/* Restarts the daemon on config with extra inserted after LUN 2's realm_zones line. */
static void restart_with(struct itest_daemon *d, const char *extra)
{
	char text[sizeof(config) + 64];
	const char *at = strstr(config, "realm_zones = 4\n") + strlen("realm_zones = 4\n");

	snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - config), config, extra, at);
	itest_close(s);
	s = NULL;
	itest_daemon_stop(d, SIGTERM);
	itest_daemon_write_config(d, text);
	itest_daemon_start(d);
	s = itest_session(d, ITEST_INITIATOR_1, 0);
	for (int lun = 0; s && lun < 4; lun++)
		itest_clear_ua(s, lun);
}

/* A zone fault on an INACTIVE zone, then repaired: the zone comes back INACTIVE, not EMPTY. */
static void test_fault_repair(struct itest_daemon *d)
{
	char got[17];

	restart_with(d, "offline_zones = 9\n");
	if (!s)
		return;
	conditions_of(2, got);
	itest_ok(strcmp(got, "000000005f555555") == 0, "LUN 2 offline_zones = 9: the INACTIVE zone 9 is OFFLINE",
		 "conditions %s", got);
	restart_with(d, "");
	if (!s)
		return;
	conditions_of(2, got);
	itest_ok(strcmp(got, "0000000055555555") == 0,
		 "zone 9 repaired: INACTIVE again (its realm is active in domain 0), not EMPTY", "conditions %s", got);
}

int main(int argc, char **argv)
{
	struct itest_daemon d;

	itest_init(argc, argv, "test_zbc_zd: ZBC-2 zone domains and realms");
	itest_daemon_up(&d, "zbc-zd", config);
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s)
		return itest_finish();
	for (int lun = 0; lun < 4; lun++)
		itest_clear_ua(s, lun);
	test_reports();
	test_inactive_access();
	test_activate();
	test_gap_zones();
	test_query32(&d);
	test_restart(&d);
	if (s) {
		test_zone_count();
		test_libzbc_activation();
	}
	if (s)
		test_fault_repair(&d);
	if (s)
		itest_close(s);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
