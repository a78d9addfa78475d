/*
 * Conglomerates (docs/conglomerate.md; SPC-5 4.33 as sg3_utils restates it,
 * SAM-5 4.7 for the two-level LUN) over the raw iSCSI client, which sends
 * whole 8-byte LUNs (libiscsi 1.19 sets only bytes 0-1):
 *  - identification: standard INQUIRY LU_CONG, Extended INQUIRY VPD
 *    LU_COLL_TYPE, the Device Identification VPD's tie "naa.<admin>,s,<E>";
 *  - REPORT LUNS, every SELECT REPORT value, per initiator (bindings), the
 *    refusals (10h/11h off LUN 0, 12h off an administrative LU, reserved
 *    values) and the cut at ALLOCATION LENGTH;
 *  - the administrative LU has no medium (READ -> 05/20/00);
 *  - I/O to subsidiaries made from templates of every kind (conventional,
 *    zbc-hm, PI type 1, atomic writes);
 *  - 05/68/01 for an unbound or absent element, 05/25/00 under a LUN that is
 *    no conglomerate;
 *  - bind / unbind at run time: unit attentions 3F/0E then 3F/1A on the
 *    nexuses of the initiator concerned only, the inventory, commands racing
 *    an unbind (each GOOD or 05/68/01, nothing acknowledged lost);
 *  - lazy opening (sbcemuctl subsidiaries: open / closed, no sub<E>.img);
 *  - sbcemuctl save + restart keeps run-time bindings and the data;
 *  - subsidiary destroy refused while bound.
 *
 * Environment: SBCEMUCTL (the sbcemuctl binary; CMake sets it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "itest.h"
#include "itest_raw.h"

#define BS 512u
/* The SAM LUNs used (itest_raw.h): LUN N, and subsidiary element E of administrative LU N. */
#define L(n) ITEST_LUN_SIMPLE(n)
#define S(n, e) ITEST_LUN_SUBSIDIARY(n, e)
/* SAM-5 4.7.4: the REPORT LUNS well-known LUN. */
#define WLUN_REPORT_LUNS 0xc101000000000000ull
#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/*
 * LUN 0 conventional; LUN 5, 7, 8, 9 conglomerates, one per template: vvol
 * (conventional, writes slowed so that commands are in flight when an
 * unbind comes), zoned (zbc-hm), pi (protection type 1), atomic (WRITE
 * ATOMIC).  No LU 6.
 */
static const char config[] =
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\n"
	"size = 16M\n"
	"[lun \"" ITEST_TARGET "\" 5]\n"
	"kind = conglomerate\n"
	"subsidiary_template = vvol\n"
	"subsidiaries = 1-4\n"
	"bindings = *=1-2; " ITEST_INITIATOR_2 "=3\n"
	"[lun \"" ITEST_TARGET "\" 7]\n"
	"kind = conglomerate\n"
	"subsidiary_template = zoned\n"
	"subsidiaries = 1\n"
	"bindings = *=1\n"
	"[lun \"" ITEST_TARGET "\" 8]\n"
	"kind = conglomerate\n"
	"subsidiary_template = pi\n"
	"subsidiaries = 1\n"
	"bindings = *=1\n"
	"[lun \"" ITEST_TARGET "\" 9]\n"
	"kind = conglomerate\n"
	"subsidiary_template = atomic\n"
	"subsidiaries = 1\n"
	"bindings = *=1\n"
	"[lu \"vvol\"]\n"
	"size = 16M\n"
	"latency = fixed write_us=25000 servers=1\n"
	"[lu \"zoned\"]\n"
	"kind = zbc-hm\n"
	"size = 16M\n"
	"zone_size = 1M\n"
	"conventional_zones = 2\n"
	"[lu \"pi\"]\n"
	"size = 16M\n"
	"protection_type = 1\n"
	"[lu \"atomic\"]\n"
	"size = 16M\n"
	"max_atomic_transfer_length = 64\n";

static struct itest_daemon d;
static struct itest_raw c1, c2; /* nexuses of ITEST_INITIATOR_1 and ITEST_INITIATOR_2 */
static char out[65536];

/* ---- commands ---- */

static void cmd(struct itest_raw *c, uint64_t lun, const uint8_t *cdb, int cdb_len, const void *data,
		uint32_t out_len, uint32_t in_len, struct itest_result *r)
{
	itest_raw_cmd_lun64(c, lun, cdb, cdb_len, data, out_len, in_len, r);
	if (itest_verbose())
		itest_note("LUN %016llx CDB %02x -> %s", (unsigned long long)lun, cdb[0], itest_result_str(r));
}

/* Sends the CDB and records a check named name that the outcome matches e; r (may be NULL) keeps the result. */
static bool expect(struct itest_raw *c, uint64_t lun, const char *name, const uint8_t *cdb, int cdb_len,
		   const void *data, uint32_t out_len, uint32_t in_len, struct itest_expect e, struct itest_result *r)
{
	struct itest_result local;
	bool pass;

	if (!r)
		r = &local;
	cmd(c, lun, cdb, cdb_len, data, out_len, in_len, r);
	pass = itest_result_matches(r, e);
	itest_ok(pass, name, "got %s", itest_result_str(r));
	if (r == &local)
		itest_result_free(&local);
	return pass;
}

static const uint8_t tur[6] = { 0 };

/* TEST UNIT READY until no UNIT ATTENTION (at most 10 times). */
static void clear_ua(struct itest_raw *c, uint64_t lun)
{
	struct itest_result r;

	for (int i = 0; i < 10; i++) {
		cmd(c, lun, tur, 6, NULL, 0, 0, &r);
		if (!r.transport_ok || r.status != 2 || r.sense.key != 6)
			return;
	}
}

static bool login(struct itest_raw *c, const char *initiator)
{
	char err[256];

	/* ImmediateData=Yes, no digests: what itest_raw_cmd_lun64 needs. */
	return itest_ok(itest_raw_login(c, &d, initiator, ITEST_TARGET, false, false, true, err, sizeof(err)) == 0,
			strcmp(initiator, ITEST_INITIATOR_1) ? "raw login of initiator 2" : "raw login of initiator 1",
			"%s", err);
}

static void inquiry_cdb(uint8_t cdb[6], uint8_t page, uint16_t len)
{
	cdb[0] = 0x12;
	cdb[1] = page ? 0x01 : 0x00;
	cdb[2] = page;
	itest_put_be16(cdb + 3, len);
	cdb[5] = 0;
}

/* INQUIRY (page 0: standard data) into r; true on GOOD with at least min bytes. */
static bool inquiry(struct itest_raw *c, uint64_t lun, uint8_t page, int min, struct itest_result *r)
{
	uint8_t cdb[6];

	inquiry_cdb(cdb, page, 255);
	cmd(c, lun, cdb, 6, NULL, 0, 255, r);
	return r->transport_ok && r->status == 0 && r->data_len >= min;
}

static void rw10_cdb(uint8_t cdb[10], uint8_t op, uint32_t lba, uint16_t blocks)
{
	memset(cdb, 0, 10);
	cdb[0] = op;
	itest_put_be32(cdb + 2, lba);
	itest_put_be16(cdb + 7, blocks);
}

/* WRITE(10) of n blocks of pattern seed at lba, then READ(10) back: two checks, named after what. */
static void round_trip(struct itest_raw *c, uint64_t lun, uint32_t lba, uint16_t n, uint32_t seed, const char *what)
{
	uint8_t cdb[10], *buf = malloc((size_t)n * BS);
	struct itest_result r;
	char name[256];

	itest_pattern(buf, (size_t)n * BS, seed);
	rw10_cdb(cdb, 0x2a, lba, n);
	snprintf(name, sizeof(name), "%s: WRITE(10) %u blocks at LBA %u -> GOOD", what, n, lba);
	expect(c, lun, name, cdb, 10, buf, n * BS, 0, EXPECT_GOOD, NULL);
	rw10_cdb(cdb, 0x28, lba, n);
	snprintf(name, sizeof(name), "%s: READ(10) returns the data written", what);
	cmd(c, lun, cdb, 10, NULL, 0, n * BS, &r);
	itest_ok(r.transport_ok && r.status == 0 && r.data_len == (int)(n * BS) && !memcmp(r.data, buf, n * BS), name,
		 "%s, %d bytes%s", itest_result_str(&r), r.data_len,
		 r.data_len == (int)(n * BS) ? ", different data" : "");
	itest_result_free(&r);
	free(buf);
}

/* Whether READ(10) of n blocks at lba of lun returns pattern seed. */
static bool reads_back(struct itest_raw *c, uint64_t lun, uint32_t lba, uint16_t n, uint32_t seed)
{
	uint8_t cdb[10], *buf = malloc((size_t)n * BS);
	struct itest_result r;
	bool same;

	itest_pattern(buf, (size_t)n * BS, seed);
	rw10_cdb(cdb, 0x28, lba, n);
	cmd(c, lun, cdb, 10, NULL, 0, n * BS, &r);
	same = r.transport_ok && r.status == 0 && r.data_len == (int)(n * BS) && !memcmp(r.data, buf, n * BS);
	if (!same)
		itest_note("READ(10) LUN %016llx LBA %u: %s, %d bytes", (unsigned long long)lun, lba,
			   itest_result_str(&r), r.data_len);
	itest_result_free(&r);
	free(buf);
	return same;
}

/* ---- REPORT LUNS ---- */

static void report_luns_cdb(uint8_t cdb[12], uint8_t select, uint32_t alloc)
{
	memset(cdb, 0, 12);
	cdb[0] = 0xa0;
	cdb[2] = select;
	itest_put_be32(cdb + 6, alloc);
}

static void lun_list_str(const uint8_t *p, int n, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < n && used + 20 < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%016llx", i ? " " : "",
					 (unsigned long long)itest_get_be64(p + 8 * i));
}

/*
 * SPC-4 6.33: REPORT LUNS with SELECT REPORT select sent to lun: GOOD, LUN
 * LIST LENGTH = 8 x n, the list exactly want[0..n-1] in that order.
 */
static void expect_report(struct itest_raw *c, uint64_t lun, uint8_t select, const uint64_t *want, int n,
			  const char *name)
{
	uint8_t cdb[12];
	struct itest_result r;
	char got[1024];
	bool same;

	report_luns_cdb(cdb, select, 4096);
	cmd(c, lun, cdb, 12, NULL, 0, 4096, &r);
	if (!r.transport_ok || r.status != 0 || r.data_len < 8) {
		itest_ok(false, name, "%s, %d bytes", itest_result_str(&r), r.data_len);
		itest_result_free(&r);
		return;
	}
	same = itest_get_be32(r.data) == 8u * (uint32_t)n && r.data_len == 8 + 8 * n;
	for (int i = 0; same && i < n; i++)
		same = itest_get_be64(r.data + 8 + 8 * i) == want[i];
	lun_list_str(r.data + 8, (r.data_len - 8) / 8, got, sizeof(got));
	itest_ok(same, name, "LUN LIST LENGTH %u, %d bytes: %s", itest_get_be32(r.data), r.data_len, got);
	itest_result_free(&r);
}

/* REPORT LUNS with select sent to lun -> CHECK CONDITION key/asc/ascq (and field pointer byte fp, if >= 0). */
static void expect_report_refused(struct itest_raw *c, uint64_t lun, uint8_t select, uint32_t alloc,
				  struct itest_expect e, int fp, const char *name)
{
	uint8_t cdb[12];
	struct itest_result r;
	char fpname[320];

	report_luns_cdb(cdb, select, alloc);
	if (expect(c, lun, name, cdb, 12, NULL, 0, alloc, e, &r) && fp >= 0) {
		snprintf(fpname, sizeof(fpname), "%s: field pointer byte %d", name, fp);
		itest_expect_field_pointer(fpname, &r, 1, fp, -1);
	}
	itest_result_free(&r);
}

static void test_report_luns(void)
{
	/* Initiator 1 sees 5/1-2 ("*"), initiator 2 also 5/3 (its own binding). */
	static const uint64_t all1[] = { L(0), L(5), S(5, 1), S(5, 2), L(7), S(7, 1), L(8), S(8, 1), L(9), S(9, 1) };
	static const uint64_t all2[] = { L(0),	  L(5), S(5, 1), S(5, 2), S(5, 3), L(7),
					 S(7, 1), L(8), S(8, 1), L(9),	  S(9, 1) };
	static const uint64_t all1_w[] = { L(0), L(5), S(5, 1), S(5, 2), L(7), S(7, 1), L(8), S(8, 1), L(9), S(9, 1),
					   WLUN_REPORT_LUNS };
	static const uint64_t all2_w[] = { L(0), L(5),	  S(5, 1), S(5, 2), S(5, 3),	      L(7),
					   S(7, 1), L(8), S(8, 1), L(9),	  S(9, 1), WLUN_REPORT_LUNS };
	static const uint64_t wlun[] = { WLUN_REPORT_LUNS };
	static const uint64_t admin[] = { L(5), L(7), L(8), L(9) };
	static const uint64_t admin_plain[] = { L(0), L(5), L(7), L(8), L(9) };
	static const uint64_t cong5_1[] = { L(5), S(5, 1), S(5, 2) };
	static const uint64_t cong5_2[] = { L(5), S(5, 1), S(5, 2), S(5, 3) };
	static const uint64_t cong7[] = { L(7), S(7, 1) };
	uint8_t cdb[12];
	struct itest_result r;

	expect_report(&c1, L(0), 0x00, all1, N(all1),
		      "REPORT LUNS SELECT REPORT 00h, initiator 1: 0, 5, 5/1, 5/2, 7, 7/1, 8, 8/1, 9, 9/1 (bound to *)");
	expect_report(&c2, L(0), 0x00, all2, N(all2),
		      "REPORT LUNS SELECT REPORT 00h, initiator 2: also 5/3 (bound to it), after 5/2");
	expect_report(&c1, L(0), 0x01, wlun, N(wlun),
		      "REPORT LUNS SELECT REPORT 01h: only the REPORT LUNS well-known LUN C101000000000000h");
	expect_report(&c2, L(0), 0x01, wlun, N(wlun), "REPORT LUNS SELECT REPORT 01h, initiator 2: only C101h");
	expect_report(&c1, L(0), 0x02, all1_w, N(all1_w),
		      "REPORT LUNS SELECT REPORT 02h, initiator 1: the 00h list, then C101h");
	expect_report(&c2, L(0), 0x02, all2_w, N(all2_w),
		      "REPORT LUNS SELECT REPORT 02h, initiator 2: the 00h list (with 5/3), then C101h");
	expect_report(&c1, L(0), 0x10, admin, N(admin),
		      "REPORT LUNS SELECT REPORT 10h to LUN 0: the administrative LUs 5, 7, 8, 9 only");
	expect_report(&c2, L(0), 0x10, admin, N(admin), "REPORT LUNS SELECT REPORT 10h to LUN 0, initiator 2: 5, 7, 8, 9");
	expect_report(&c1, WLUN_REPORT_LUNS, 0x10, admin, N(admin),
		      "REPORT LUNS SELECT REPORT 10h to the W-LUN C101h: 5, 7, 8, 9");
	expect_report(&c1, L(0), 0x11, admin_plain, N(admin_plain),
		      "REPORT LUNS SELECT REPORT 11h to LUN 0: administrative LUs and LUs of no conglomerate (0, 5, 7, 8, "
		      "9), no subsidiaries");
	expect_report(&c2, L(0), 0x11, admin_plain, N(admin_plain),
		      "REPORT LUNS SELECT REPORT 11h to LUN 0, initiator 2: 0, 5, 7, 8, 9");
	expect_report(&c1, L(5), 0x12, cong5_1, N(cong5_1),
		      "REPORT LUNS SELECT REPORT 12h to administrative LU 5, initiator 1: 5, 5/1, 5/2");
	expect_report(&c2, L(5), 0x12, cong5_2, N(cong5_2),
		      "REPORT LUNS SELECT REPORT 12h to administrative LU 5, initiator 2: 5, 5/1, 5/2, 5/3");
	expect_report(&c1, L(7), 0x12, cong7, N(cong7),
		      "REPORT LUNS SELECT REPORT 12h to administrative LU 7: 7, 7/1 (its own conglomerate only)");

	expect_report_refused(&c1, L(5), 0x10, 4096, EXPECT_SENSE(5, 0x24, 0), 2,
			      "REPORT LUNS SELECT REPORT 10h to LUN 5 (not LUN 0 nor C101h) -> 05/24/00");
	expect_report_refused(&c1, S(5, 1), 0x11, 4096, EXPECT_SENSE(5, 0x24, 0), 2,
			      "REPORT LUNS SELECT REPORT 11h to LUN 5/1 -> 05/24/00");
	expect_report_refused(&c1, L(0), 0x12, 4096, EXPECT_SENSE(5, 0x20, 0x0d), -1,
			      "REPORT LUNS SELECT REPORT 12h to LUN 0 (a non-administrative LU) -> 05/20/0D");
	expect_report_refused(&c1, S(5, 1), 0x12, 4096, EXPECT_SENSE(5, 0x20, 0x0d), -1,
			      "REPORT LUNS SELECT REPORT 12h to subsidiary LUN 5/1 -> 05/20/0D");
	expect_report_refused(&c1, L(0), 0x03, 4096, EXPECT_SENSE(5, 0x24, 0), 2,
			      "REPORT LUNS SELECT REPORT 03h (reserved) -> 05/24/00");
	expect_report_refused(&c1, L(0), 0x13, 4096, EXPECT_SENSE(5, 0x24, 0), 2,
			      "REPORT LUNS SELECT REPORT 13h (reserved) -> 05/24/00");
	expect_report_refused(&c1, L(0), 0xf8, 4096, EXPECT_SENSE(5, 0x24, 0), 2,
			      "REPORT LUNS SELECT REPORT F8h (vendor specific, not supported) -> 05/24/00");
	expect_report_refused(&c1, L(0), 0x00, 15, EXPECT_SENSE(5, 0x24, 0), 6,
			      "REPORT LUNS ALLOCATION LENGTH 15 (< 16) -> 05/24/00");

	/* SPC-4 6.33: the data is cut at ALLOCATION LENGTH, LUN LIST LENGTH stays the whole list's. */
	report_luns_cdb(cdb, 0x00, 16);
	cmd(&c1, L(0), cdb, 12, NULL, 0, 16, &r);
	itest_ok(r.transport_ok && r.status == 0 && r.data_len == 16 && itest_get_be32(r.data) == 8u * N(all1) &&
			 itest_get_be64(r.data + 8) == L(0),
		 "REPORT LUNS 00h ALLOCATION LENGTH 16: 16 bytes (LUN 0), LUN LIST LENGTH still 80 (10 LUNs)",
		 "%s, %d bytes, LUN LIST LENGTH %u", itest_result_str(&r), r.data_len,
		 r.data_len >= 4 ? itest_get_be32(r.data) : 0);
	itest_result_free(&r);
}

/* ---- identification ---- */

/* The first designator of type type (association LU) in a Device Identification VPD page, or NULL; *len its length. */
static const uint8_t *designator(const struct itest_result *r, int type, int *len)
{
	int end = r->data_len < 4 + itest_get_be16(r->data + 2) ? r->data_len : 4 + itest_get_be16(r->data + 2);

	for (int off = 4; off + 4 <= end && off + 4 + r->data[off + 3] <= end; off += 4 + r->data[off + 3]) {
		if ((r->data[off + 1] & 0x0f) == type && ((r->data[off + 1] >> 4) & 3) == 0) {
			*len = r->data[off + 3];
			return r->data + off;
		}
	}
	return NULL;
}

static void test_identification(void)
{
	struct itest_result r, a;
	const uint8_t *naa, *name, *own;
	uint8_t admin_naa[16];
	int naa_len = 0, name_len = 0, own_len = 0;
	char want[128], got[260];

	/* SPC-5 standard INQUIRY data byte 1 bit 6 LU_CONG. */
	inquiry(&c1, L(0), 0, 2, &r);
	itest_ok(r.data_len >= 2 && !(r.data[1] & 0x40), "INQUIRY LUN 0 (no conglomerate): byte 1 LU_CONG = 0",
		 "%s, byte 1 %02x", itest_result_str(&r), r.data_len >= 2 ? r.data[1] : 0);
	itest_result_free(&r);
	inquiry(&c1, L(5), 0, 2, &r);
	itest_ok(r.data_len >= 2 && (r.data[1] & 0x40), "INQUIRY administrative LU 5: byte 1 LU_CONG = 1",
		 "%s, byte 1 %02x", itest_result_str(&r), r.data_len >= 2 ? r.data[1] : 0);
	itest_result_free(&r);
	inquiry(&c1, S(5, 1), 0, 2, &r);
	itest_ok(r.data_len >= 2 && (r.data[1] & 0x40) && (r.data[0] & 0x1f) == 0,
		 "INQUIRY subsidiary LU 5/1: byte 1 LU_CONG = 1, a direct-access device", "%s, bytes 0-1 %02x %02x",
		 itest_result_str(&r), r.data_len >= 1 ? r.data[0] : 0, r.data_len >= 2 ? r.data[1] : 0);
	itest_result_free(&r);

	/* SPC-5 Extended INQUIRY Data VPD page byte 8 bits 7:5 LU_COLL_TYPE: 001b, in a conglomerate. */
	inquiry(&c1, L(5), 0x86, 9, &r);
	itest_ok(r.data_len >= 9 && (r.data[8] >> 5) == 1, "VPD 86h of administrative LU 5: byte 8 LU_COLL_TYPE = 001b",
		 "%s, byte 8 %02x", itest_result_str(&r), r.data_len >= 9 ? r.data[8] : 0);
	itest_result_free(&r);
	inquiry(&c1, S(5, 1), 0x86, 9, &r);
	itest_ok(r.data_len >= 9 && (r.data[8] >> 5) == 1, "VPD 86h of subsidiary LU 5/1: byte 8 LU_COLL_TYPE = 001b",
		 "%s, byte 8 %02x", itest_result_str(&r), r.data_len >= 9 ? r.data[8] : 0);
	itest_result_free(&r);
	inquiry(&c1, L(0), 0x86, 9, &r);
	itest_ok(r.data_len >= 9 && (r.data[8] >> 5) == 0, "VPD 86h of LUN 0: byte 8 LU_COLL_TYPE = 000b",
		 "%s, byte 8 %02x", itest_result_str(&r), r.data_len >= 9 ? r.data[8] : 0);
	itest_result_free(&r);

	/* docs/conglomerate.md: VPD 83h of a subsidiary names its conglomerate, "naa.<admin NAA>,s,<E hex>". */
	if (!itest_ok(inquiry(&c1, L(5), 0x83, 8, &a) && (naa = designator(&a, 3, &naa_len)) != NULL,
		      "VPD 83h of administrative LU 5 has an NAA designator", "%s", itest_result_str(&a))) {
		itest_result_free(&a);
		return;
	}
	naa_len = naa_len < 16 ? naa_len : 16;
	memcpy(admin_naa, naa + 4, (size_t)naa_len);
	itest_result_free(&a);
	snprintf(want, sizeof(want), "naa.");
	for (int i = 0; i < naa_len; i++)
		snprintf(want + 4 + 2 * i, 3, "%02X", admin_naa[i]);
	strcat(want, ",s,1");
	inquiry(&c1, S(5, 1), 0x83, 8, &r);
	name = r.transport_ok && r.status == 0 && r.data_len >= 8 ? designator(&r, 8, &name_len) : NULL;
	snprintf(got, sizeof(got), "%.*s", name ? name_len : 0, name ? (const char *)name + 4 : "");
	itest_ok(name && (name[0] & 0x0f) == 3 && !strcmp(got, want),
		 "VPD 83h of subsidiary LU 5/1: SCSI name string (UTF-8, LU) \"naa.<LU 5's NAA>,s,1\"",
		 "%s: got \"%s\" (code set %d), want \"%s\"", itest_result_str(&r), got, name ? name[0] & 0x0f : -1,
		 want);
	own = r.transport_ok && r.status == 0 && r.data_len >= 8 ? designator(&r, 3, &own_len) : NULL;
	itest_ok(own && (own_len != naa_len || memcmp(own + 4, admin_naa, (size_t)naa_len)),
		 "VPD 83h of subsidiary LU 5/1: its own NAA designator (first), not LU 5's", NULL);
	itest_result_free(&r);
}

/* ---- the administrative LU, and LUNs without an LU ---- */

static void test_admin_lu(void)
{
	uint8_t rc10[10] = { 0x25 }, cdb[10], block[BS] = { 0 };
	struct itest_result r;

	cmd(&c1, L(5), rc10, 10, NULL, 0, 8, &r);
	itest_ok(r.transport_ok && r.status == 0 && r.data_len == 8 && itest_get_be32(r.data) == 0 &&
			 itest_get_be32(r.data + 4) == 512,
		 "READ CAPACITY(10) on administrative LU 5 -> GOOD, RETURNED LOGICAL BLOCK ADDRESS 0, block length 512",
		 "%s, %d bytes: %08x %08x", itest_result_str(&r), r.data_len, r.data_len >= 4 ? itest_get_be32(r.data) : 0,
		 r.data_len >= 8 ? itest_get_be32(r.data + 4) : 0);
	itest_result_free(&r);
	rw10_cdb(cdb, 0x28, 0, 1);
	expect(&c1, L(5), "READ(10) on administrative LU 5 (no medium) -> 05/20/00", cdb, 10, NULL, 0, BS,
	       EXPECT_SENSE(5, 0x20, 0), NULL);
	rw10_cdb(cdb, 0x2a, 0, 1);
	expect(&c1, L(5), "WRITE(10) on administrative LU 5 -> 05/20/00", cdb, 10, block, BS, 0,
	       EXPECT_SENSE(5, 0x20, 0), NULL);
	expect(&c1, L(5), "TEST UNIT READY on administrative LU 5 -> GOOD", tur, 6, NULL, 0, 0, EXPECT_GOOD, NULL);
}

static void test_not_configured(void)
{
	uint8_t inq[6], rs[6] = { 0x03, 0, 0, 0, 252, 0 };
	struct itest_result r;
	struct itest_sense s;

	expect(&c1, S(5, 3), "TEST UNIT READY to 5/3 from initiator 1 (bound to initiator 2 only) -> 05/68/01", tur, 6,
	       NULL, 0, 0, EXPECT_SENSE(5, 0x68, 0x01), NULL);
	inquiry_cdb(inq, 0, 96);
	cmd(&c1, S(5, 3), inq, 6, NULL, 0, 96, &r);
	itest_ok(r.transport_ok && r.status == 0 && r.data_len >= 1 && r.data[0] == 0x7f,
		 "INQUIRY to 5/3 from initiator 1 -> GOOD, byte 0 7Fh (PERIPHERAL QUALIFIER 011b, PDT 1Fh)",
		 "%s, byte 0 %02x", itest_result_str(&r), r.data_len >= 1 ? r.data[0] : 0);
	itest_result_free(&r);
	cmd(&c1, S(5, 3), rs, 6, NULL, 0, 252, &r);
	memset(&s, 0, sizeof(s));
	if (r.transport_ok && r.status == 0 && r.data_len >= 8)
		itest_parse_sense(&s, r.data, r.data_len);
	itest_ok(r.transport_ok && r.status == 0 && s.key == 5 && s.asc == 0x68 && s.ascq == 0x01,
		 "REQUEST SENSE to 5/3 from initiator 1 -> GOOD, sense data 05/68/01", "%s, sense %02x/%02x/%02x",
		 itest_result_str(&r), s.key, s.asc, s.ascq);
	itest_result_free(&r);
	inquiry(&c2, S(5, 3), 0, 36, &r);
	itest_ok(r.transport_ok && r.status == 0 && r.data_len >= 2 && r.data[0] == 0x00 && (r.data[1] & 0x40),
		 "INQUIRY to 5/3 from initiator 2 (bound to it) -> a direct-access LU, LU_CONG = 1", "%s, bytes 0-1 %02x %02x",
		 itest_result_str(&r), r.data_len >= 1 ? r.data[0] : 0, r.data_len >= 2 ? r.data[1] : 0);
	itest_result_free(&r);
	expect(&c1, S(5, 9), "TEST UNIT READY to 5/9 (no such element) -> 05/68/01", tur, 6, NULL, 0, 0,
	       EXPECT_SENSE(5, 0x68, 0x01), NULL);
	cmd(&c1, S(5, 9), inq, 6, NULL, 0, 96, &r);
	itest_ok(r.transport_ok && r.status == 0 && r.data_len >= 1 && r.data[0] == 0x7f,
		 "INQUIRY to 5/9 (no such element) -> byte 0 7Fh", "%s, byte 0 %02x", itest_result_str(&r),
		 r.data_len >= 1 ? r.data[0] : 0);
	itest_result_free(&r);
	expect(&c1, S(6, 1), "TEST UNIT READY to 6/1 (no LU 6) -> 05/25/00 LOGICAL UNIT NOT SUPPORTED", tur, 6, NULL, 0,
	       0, EXPECT_SENSE(5, 0x25, 0), NULL);
	expect(&c1, S(0, 1), "TEST UNIT READY to 0/1 (LU 0 is no conglomerate) -> 05/25/00", tur, 6, NULL, 0, 0,
	       EXPECT_SENSE(5, 0x25, 0), NULL);
}

/* ---- I/O to subsidiaries of every template kind ---- */

static void test_zoned(void)
{
	uint8_t rz[16] = { 0x95, 0x00 }, cdb[16] = { 0 }, *buf = malloc(8 * BS);
	struct itest_result r;
	uint64_t start = 0, wp = 0;
	bool found = false;

	/* ZBC-2 REPORT ZONES: the first sequential write required zone and its write pointer. */
	itest_put_be32(rz + 10, 64 + 64 * 16);
	cmd(&c1, S(7, 1), rz, 16, NULL, 0, 64 + 64 * 16, &r);
	for (int off = 64; r.transport_ok && r.status == 0 && off + 64 <= r.data_len && !found; off += 64) {
		if ((r.data[off] & 0x0f) == 2) {
			start = itest_get_be64(r.data + off + 16);
			wp = itest_get_be64(r.data + off + 24);
			found = true;
		}
	}
	itest_ok(found && wp == start,
		 "zbc-hm subsidiary 7/1: REPORT ZONES lists a sequential zone, write pointer at its start",
		 "%s, %d bytes, start %llu wp %llu", itest_result_str(&r), r.data_len, (unsigned long long)start,
		 (unsigned long long)wp);
	itest_result_free(&r);
	if (!found) {
		free(buf);
		return;
	}
	itest_pattern(buf, 8 * BS, 7);
	cdb[0] = 0x8a;
	itest_put_be64(cdb + 2, wp);
	itest_put_be32(cdb + 10, 8);
	expect(&c1, S(7, 1), "zbc-hm subsidiary 7/1: WRITE(16) 8 blocks at the write pointer -> GOOD", cdb, 16, buf,
	       8 * BS, 0, EXPECT_GOOD, NULL);
	expect(&c1, S(7, 1), "zbc-hm subsidiary 7/1: WRITE(16) at the old write pointer -> 05/21/04 UNALIGNED WRITE",
	       cdb, 16, buf, 8 * BS, 0, EXPECT_SENSE(5, 0x21, 0x04), NULL);
	itest_ok(reads_back(&c1, S(7, 1), (uint32_t)wp, 8, 7), "zbc-hm subsidiary 7/1: READ(10) returns the zone's data",
		 NULL);
	free(buf);
}

static void test_pi(void)
{
	uint8_t rc16[16] = { 0x9e, 0x10 };
	struct itest_result r;

	/* SBC-4 READ CAPACITY(16) byte 12: P_TYPE 000b (type 1), PROT_EN 1 -- the template's protection_type. */
	itest_put_be32(rc16 + 10, 32);
	cmd(&c1, S(8, 1), rc16, 16, NULL, 0, 32, &r);
	itest_ok(r.transport_ok && r.status == 0 && r.data_len >= 13 && (r.data[12] & 0x0f) == 0x01,
		 "PI subsidiary 8/1: READ CAPACITY(16) P_TYPE 0 PROT_EN 1 (protection type 1)", "%s, byte 12 %02x",
		 itest_result_str(&r), r.data_len >= 13 ? r.data[12] : 0);
	itest_result_free(&r);
	round_trip(&c1, S(8, 1), 64, 4, 8, "PI type 1 subsidiary 8/1, WRPROTECT/RDPROTECT 0");
}

static void test_atomic(void)
{
	uint8_t cdb[16] = { 0x9c }, *buf = malloc(68 * BS);

	/* SBC-4 5.48 WRITE ATOMIC(16): LBA bytes 2-9, ATOMIC BOUNDARY 10-11, TRANSFER LENGTH 12-13. */
	itest_pattern(buf, 68 * BS, 9);
	itest_put_be64(cdb + 2, 16);
	itest_put_be16(cdb + 12, 8);
	expect(&c1, S(9, 1), "atomic subsidiary 9/1: WRITE ATOMIC(16) 8 blocks -> GOOD", cdb, 16, buf, 8 * BS, 0,
	       EXPECT_GOOD, NULL);
	itest_ok(reads_back(&c1, S(9, 1), 16, 8, 9), "atomic subsidiary 9/1: READ(10) after WRITE ATOMIC(16) returns the data",
		 NULL);
	itest_put_be16(cdb + 12, 68);
	expect(&c1, S(9, 1),
	       "atomic subsidiary 9/1: WRITE ATOMIC(16) 68 blocks > the template's max_atomic_transfer_length 64 -> 05/24/00",
	       cdb, 16, buf, 68 * BS, 0, EXPECT_SENSE(5, 0x24, 0), NULL);
	free(buf);
}

/* The runtime control names a subsidiary as N/E: a medium-error fault rule on 5/1 fails its READ with 03/11/00. */
static void test_fault_on_subsidiary(void)
{
	const uint8_t read10[10] = { 0x28, 0, 0, 0, 0, 40, 0, 0, 1, 0 };
	char reply[1024];

	itest_ctl_expect(&d, reply, sizeof(reply), 0, "fault add 5/1 medium-error --lba 40",
			 "sbcemuctl fault add 5/1 medium-error --lba 40 (LUN N/E) -> exit 0");
	expect(&c1, S(5, 1), "READ(10) of LBA 40 on 5/1 with a medium-error rule -> 03/11/00", read10, 10, NULL, 0, 512,
	       EXPECT_SENSE(3, 0x11, 0x00), NULL);
	expect(&c1, S(9, 1), "READ(10) of LBA 40 on 9/1: the rule is 5/1's only -> GOOD", read10, 10, NULL, 0, 512,
	       EXPECT_GOOD, NULL);
	itest_ctl_expect(&d, reply, sizeof(reply), 0, "fault remove all", "sbcemuctl fault remove all -> exit 0");
	itest_ctl_expect(&d, reply, sizeof(reply), 1, "fault add 5/4 medium-error --lba 40",
			 "sbcemuctl fault add 5/4 (never used, not open) -> exit 1");
}

static void test_io(void)
{
	round_trip(&c1, S(5, 1), 0, 8, 51, "subsidiary 5/1 (LUN 00 05 00 01 00 00 00 00), initiator 1");
	itest_ok(reads_back(&c2, S(5, 1), 0, 8, 51), "subsidiary 5/1: initiator 2 reads what initiator 1 wrote", NULL);
	round_trip(&c2, S(5, 3), 0, 8, 53, "subsidiary 5/3, initiator 2 (its own binding)");
	test_zoned();
	test_pi();
	test_atomic();
	test_fault_on_subsidiary();
}

/* ---- lazy opening ---- */

/* The row of element e in the `sbcemuctl subsidiaries 5` table (ELEMENT STATE BLOCKS CMDS BOUND), or "". */
static const char *row_of(const char *table, unsigned e, char *row, size_t len)
{
	const char *line = table;

	row[0] = '\0';
	while (line && *line) {
		const char *end = strchr(line, '\n');
		unsigned el;

		if (sscanf(line, "%u", &el) == 1 && el == e) {
			snprintf(row, len, "%.*s", end ? (int)(end - line) : (int)strlen(line), line);
			break;
		}
		line = end ? end + 1 : NULL;
	}
	return row;
}

/* The STATE column of element e, or "" when it is not listed. */
static const char *state_of(const char *table, unsigned e, char *state, size_t len)
{
	char row[512], st[32] = "";

	if (sscanf(row_of(table, e, row, sizeof(row)), "%*u %31s", st) != 1)
		st[0] = '\0';
	snprintf(state, len, "%s", st);
	return state;
}

static bool file_exists(unsigned admin, unsigned e)
{
	char path[1024];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s/lun%u/sub%u.img", d.state, ITEST_TARGET, admin, e);
	return stat(path, &st) == 0;
}

static void test_subsidiaries_list(void)
{
	char s1[32], s2[32], s3[32], s4[32], r1[512], r3[512], r4[512];
	int rc = itest_ctl(&d, out, sizeof(out), "subsidiaries 5");

	state_of(out, 1, s1, sizeof(s1));
	state_of(out, 2, s2, sizeof(s2));
	state_of(out, 3, s3, sizeof(s3));
	state_of(out, 4, s4, sizeof(s4));
	itest_ok(rc == 0 && !strcmp(s1, "open") && !strcmp(s2, "closed") && !strcmp(s3, "open") && !strcmp(s4, "closed"),
		 "sbcemuctl subsidiaries 5: 1 open, 2 closed (never used), 3 open, 4 closed",
		 "exit %d: 1 \"%s\" 2 \"%s\" 3 \"%s\" 4 \"%s\": %.600s", rc, s1, s2, s3, s4, out);
	row_of(out, 1, r1, sizeof(r1));
	row_of(out, 3, r3, sizeof(r3));
	row_of(out, 4, r4, sizeof(r4));
	itest_ok(strchr(r1, '*') && strstr(r3, ITEST_INITIATOR_2) && !strchr(r3, '*') && !strchr(r4, '*') &&
			 !strstr(r4, "iqn."),
		 "sbcemuctl subsidiaries 5 BOUND: 1 *, 3 <initiator 2>, 4 nobody", "%.600s", out);
	itest_ok(file_exists(5, 1) && !file_exists(5, 2),
		 "lazy opening: <state>/<target>/lun5/sub1.img exists, sub2.img (never used) does not", "sub1 %d sub2 %d",
		 file_exists(5, 1), file_exists(5, 2));
}

/* ---- bind and unbind at run time ---- */

/* Runs sbcemuctl ARGS (printf-style) and records a check that it exits 0. */
static bool ctl_ok(const char *name, const char *fmt, const char *arg)
{
	int rc = itest_ctl(&d, out, sizeof(out), fmt, arg);

	return itest_ok(rc == 0, name, "exit %d: %.300s", rc, out);
}

/*
 * SPC-5 / docs/conglomerate.md: after a binding change, the nexus's next
 * commands to the administrative LU get 06/3F/0E, then 06/3F/1A, then GOOD.
 */
static void expect_binding_uas(struct itest_raw *c, const char *who, const char *after)
{
	char name[320];

	snprintf(name, sizeof(name), "%s: %s, TUR LUN 5 -> 06/3F/0E REPORTED LUNS DATA HAS CHANGED first", after, who);
	expect(c, L(5), name, tur, 6, NULL, 0, 0, EXPECT_SENSE(6, 0x3f, 0x0e), NULL);
	snprintf(name, sizeof(name), "%s: %s, next TUR LUN 5 -> 06/3F/1A SUBSIDIARY BINDING CHANGED", after, who);
	expect(c, L(5), name, tur, 6, NULL, 0, 0, EXPECT_SENSE(6, 0x3f, 0x1a), NULL);
	snprintf(name, sizeof(name), "%s: %s, then TUR LUN 5 -> GOOD", after, who);
	expect(c, L(5), name, tur, 6, NULL, 0, 0, EXPECT_GOOD, NULL);
}

static void test_bind_unbind(void)
{
	static const uint64_t with4_1[] = { L(5), S(5, 1), S(5, 2), S(5, 4) };
	static const uint64_t with4_2[] = { L(5), S(5, 1), S(5, 2), S(5, 3), S(5, 4) };
	static const uint64_t without3[] = { L(5), S(5, 1), S(5, 2) };

	if (ctl_ok("sbcemuctl subsidiary bind 5 4 --initiator '*' -> exit 0", "subsidiary bind 5 4 --initiator %s", "'*'")) {
		expect_binding_uas(&c1, "initiator 1", "after bind 5/4 *");
		expect_binding_uas(&c2, "initiator 2", "after bind 5/4 *");
		expect_report(&c1, L(5), 0x12, with4_1, N(with4_1),
			      "after bind 5/4 *: REPORT LUNS 12h, initiator 1: 5, 5/1, 5/2, 5/4");
		expect_report(&c2, L(5), 0x12, with4_2, N(with4_2),
			      "after bind 5/4 *: REPORT LUNS 12h, initiator 2: 5, 5/1, 5/2, 5/3, 5/4");
		clear_ua(&c1, S(5, 4));
		round_trip(&c1, S(5, 4), 8, 8, 54, "after bind 5/4 *: subsidiary 5/4");
	}
	if (ctl_ok("sbcemuctl subsidiary unbind 5 4 --initiator '*' -> exit 0", "subsidiary unbind 5 4 --initiator %s",
		   "'*'")) {
		expect_binding_uas(&c1, "initiator 1", "after unbind 5/4 *");
		expect_binding_uas(&c2, "initiator 2", "after unbind 5/4 *");
		expect(&c1, S(5, 4), "after unbind 5/4 *: TEST UNIT READY to 5/4 -> 05/68/01", tur, 6, NULL, 0, 0,
		       EXPECT_SENSE(5, 0x68, 0x01), NULL);
		expect(&c2, S(5, 4), "after unbind 5/4 *: initiator 2 TEST UNIT READY to 5/4 -> 05/68/01", tur, 6, NULL, 0,
		       0, EXPECT_SENSE(5, 0x68, 0x01), NULL);
	}
	/* A binding of one initiator: the other initiator's nexus is not concerned. */
	if (ctl_ok("sbcemuctl subsidiary unbind 5 3 --initiator <initiator 2> -> exit 0",
		   "subsidiary unbind 5 3 --initiator %s", ITEST_INITIATOR_2)) {
		expect(&c1, L(5), "after unbind 5/3 of initiator 2: initiator 1 TUR LUN 5 -> GOOD (no unit attention)", tur,
		       6, NULL, 0, 0, EXPECT_GOOD, NULL);
		expect(&c1, L(0), "after unbind 5/3 of initiator 2: initiator 1 TUR LUN 0 -> GOOD (no 3F/0E)", tur, 6, NULL,
		       0, 0, EXPECT_GOOD, NULL);
		expect_binding_uas(&c2, "initiator 2", "after unbind 5/3 of initiator 2");
		expect(&c2, S(5, 3), "after unbind 5/3 of initiator 2: initiator 2 TUR 5/3 -> 05/68/01", tur, 6, NULL, 0,
		       0, EXPECT_SENSE(5, 0x68, 0x01), NULL);
		expect_report(&c2, L(5), 0x12, without3, N(without3),
			      "after unbind 5/3 of initiator 2: REPORT LUNS 12h, initiator 2: 5, 5/1, 5/2");
	}
}

/*
 * Commands racing an unbind (docs/conglomerate.md): those already in 5/1's
 * task set run to their end (GOOD), later ones get 05/68/01; none is lost,
 * and every write acknowledged GOOD is there once 5/1 is bound again.
 */
#define RACE_BEFORE 16
#define RACE_AFTER 4
#define RACE_BLOCKS 8

static void test_unbind_race(void)
{
	uint32_t itts[RACE_BEFORE + RACE_AFTER];
	int outcome[RACE_BEFORE + RACE_AFTER]; /* -1 no answer, 0 GOOD, 1 05/68/01, 2 other */
	uint8_t cdb[10], *buf = malloc(RACE_BLOCKS * BS);
	int sent = 0, answered = 0, good = 0, refused = 0, other = 0, after_refused = 0, rc = -1;
	char err[256] = "", others[512] = "";
	uint64_t unbound_at = 0, last_good_at = 0;
	bool all_back = true;

	for (int i = 0; i < RACE_BEFORE + RACE_AFTER; i++) {
		if (i == RACE_BEFORE) { /* while the first ones are in flight (25 ms of medium time each) */
			rc = itest_ctl(&d, out, sizeof(out), "subsidiary unbind 5 1 --initiator '*'");
			unbound_at = itest_now_ms();
		}
		itest_pattern(buf, RACE_BLOCKS * BS, 1000u + (uint32_t)i);
		rw10_cdb(cdb, 0x2a, 1024u + (uint32_t)i * RACE_BLOCKS, RACE_BLOCKS);
		outcome[i] = -1;
		if (itest_raw_submit_lun64(&c1, S(5, 1), cdb, 10, buf, RACE_BLOCKS * BS, 0, &itts[i], err, sizeof(err)))
			break;
		sent++;
	}
	itest_ok(sent == RACE_BEFORE + RACE_AFTER && rc == 0,
		 "unbind race: 16 WRITE(10)s to 5/1 sent, unbind 5 1 '*' (exit 0), 4 more sent", "sent %d (%s), unbind exit %d",
		 sent, err, rc);
	for (int k = 0; k < sent; k++) {
		struct itest_result r;
		uint32_t itt = ITEST_RAW_ANY_ITT;

		itest_raw_collect(&c1, &itt, 0, &r);
		if (!r.transport_ok)
			break;
		for (int i = 0; i < sent; i++) {
			if (itts[i] != itt || outcome[i] != -1)
				continue;
			outcome[i] = r.status == 0 ? 0 : itest_result_matches(&r, EXPECT_SENSE(5, 0x68, 0x01)) ? 1 : 2;
			if (outcome[i] == 0)
				last_good_at = itest_now_ms();
			if (outcome[i] == 2 && strlen(others) < 400)
				snprintf(others + strlen(others), sizeof(others) - strlen(others), " #%d %s", i,
					 itest_result_str(&r));
			answered++;
		}
	}
	for (int i = 0; i < sent; i++) {
		good += outcome[i] == 0;
		refused += outcome[i] == 1;
		other += outcome[i] == 2;
		after_refused += i >= RACE_BEFORE && outcome[i] == 1;
	}
	itest_note("unbind race: %d GOOD, %d 05/68/01, %d other of %d", good, refused, other, sent);
	/* What makes it a race: WRITEs acknowledged well after the unbind were in 5/1's task set during it. */
	itest_ok(last_good_at > unbound_at + 30,
		 "unbind race: WRITEs were still in flight during the unbind (the last GOOD came > 30 ms after it)",
		 "%lld ms after", (long long)(last_good_at - unbound_at));
	itest_ok(answered == sent, "unbind race: every command sent gets its SCSI Response (none lost)", "%d of %d",
		 answered, sent);
	itest_ok(other == 0 && answered == sent, "unbind race: each response is GOOD or 05/68/01, no other error",
		 "%d other:%s", other, others);
	itest_ok(after_refused == RACE_AFTER, "unbind race: the 4 WRITEs sent after the unbind -> 05/68/01",
		 "%d of 4", after_refused);
	if (ctl_ok("unbind race: sbcemuctl subsidiary bind 5 1 --initiator '*' again -> exit 0",
		   "subsidiary bind 5 1 --initiator %s", "'*'")) {
		clear_ua(&c1, L(5));
		clear_ua(&c1, S(5, 1));
		for (int i = 0; i < sent; i++)
			if (outcome[i] == 0 && !reads_back(&c1, S(5, 1), 1024u + (uint32_t)i * RACE_BLOCKS, RACE_BLOCKS,
							   1000u + (uint32_t)i))
				all_back = false;
		itest_ok(all_back && good > 0, "unbind race: every WRITE acknowledged GOOD reads back after the rebind",
			 "%d GOOD", good);
	}
	clear_ua(&c2, L(5));
	free(buf);
}

/* ---- save and restart ---- */

/*
 * Logs both initiators in and clears the unit attentions (POWER ON) of the
 * LUs they use, subsidiaries included (which opens them); 5/2 and 5/4 are
 * left alone (never used: closed).
 */
static bool relogin(void)
{
	static const uint64_t luns[] = { L(0), L(5), L(7), L(8), L(9), S(5, 1), S(7, 1), S(8, 1), S(9, 1) };
	bool ok1 = login(&c1, ITEST_INITIATOR_1), ok2 = login(&c2, ITEST_INITIATOR_2), ok = ok1 && ok2;

	for (int i = 0; ok && i < N(luns); i++) {
		clear_ua(&c1, luns[i]);
		clear_ua(&c2, luns[i]);
	}
	if (ok)
		clear_ua(&c2, S(5, 3));
	return ok;
}

static void test_save_restart(void)
{
	static const uint64_t after1[] = { L(5), S(5, 1), S(5, 2), S(5, 4) };
	static const uint64_t after2[] = { L(5), S(5, 1), S(5, 2) };
	static char saved[65536];
	uint8_t cdb[10], *buf = malloc(8 * BS);

	/* A run-time binding for initiator 1 only, and data on it. */
	if (!ctl_ok("sbcemuctl subsidiary bind 5 4 --initiator <initiator 1> -> exit 0",
		    "subsidiary bind 5 4 --initiator %s", ITEST_INITIATOR_1)) {
		free(buf);
		return;
	}
	clear_ua(&c1, L(5));
	clear_ua(&c1, S(5, 4));
	itest_pattern(buf, 8 * BS, 4444);
	rw10_cdb(cdb, 0x2a, 100, 8);
	expect(&c1, S(5, 4), "before the restart: WRITE(10) to 5/4 (bound to initiator 1 at run time) -> GOOD", cdb, 10,
	       buf, 8 * BS, 0, EXPECT_GOOD, NULL);
	free(buf);
	if (!itest_ok(itest_ctl(&d, saved, sizeof(saved), "save") == 0, "sbcemuctl save -> exit 0", NULL))
		return;
	itest_ok(strstr(saved, "subsidiaries = 1-4\n") && strstr(saved, ITEST_INITIATOR_1 "=4") &&
			 !strstr(saved, ITEST_INITIATOR_2 "=3"),
		 "sbcemuctl save: LUN 5's subsidiaries 1-4, the run-time binding <initiator 1>=4, not the unbound "
		 "<initiator 2>=3",
		 "%.1500s", saved);
	itest_raw_close(&c1);
	itest_raw_close(&c2);
	itest_daemon_stop(&d, 15);
	if (!itest_ok(itest_daemon_write_config(&d, saved) == 0 && itest_daemon_start(&d) == 0,
		      "sbcemud restarts on the saved configuration", NULL) ||
	    !relogin())
		return;
	expect_report(&c1, L(5), 0x12, after1, N(after1),
		      "after the restart: REPORT LUNS 12h, initiator 1: 5, 5/1, 5/2, 5/4 (the run-time binding kept)");
	expect_report(&c2, L(5), 0x12, after2, N(after2),
		      "after the restart: REPORT LUNS 12h, initiator 2: 5, 5/1, 5/2 (its unbind kept)");
	clear_ua(&c1, S(5, 4));
	itest_ok(reads_back(&c1, S(5, 4), 100, 8, 4444), "after the restart: 5/4 has the data written before it", NULL);
	clear_ua(&c1, S(5, 1));
	itest_ok(reads_back(&c1, S(5, 1), 0, 8, 51), "after the restart: 5/1 has the data written before it", NULL);
}

/* ---- destroy ---- */

static void test_destroy(void)
{
	char st[32];
	int rc;

	rc = itest_ctl(&d, out, sizeof(out), "subsidiary destroy 5 2");
	itest_ok(rc != 0 && itest_daemon_log_has(&d, "LUN 5/2 is bound to 1 initiator(s); unbind it first"),
		 "sbcemuctl subsidiary destroy 5 2 while bound to * -> refused, \"LUN 5/2 is bound to 1 initiator(s); "
		 "unbind it first\"",
		 "exit %d", rc);
	itest_ctl(&d, out, sizeof(out), "subsidiaries 5");
	itest_ok(state_of(out, 2, st, sizeof(st))[0] != '\0', "after the refused destroy: subsidiaries 5 still lists 2",
		 "%.600s", out);
	ctl_ok("sbcemuctl subsidiary unbind 5 2 --initiator '*' -> exit 0", "subsidiary unbind 5 2 --initiator %s", "'*'");
	ctl_ok("sbcemuctl subsidiary destroy 5 2 after the unbind -> exit 0", "subsidiary destroy 5 %s", "2");
	rc = itest_ctl(&d, out, sizeof(out), "subsidiaries 5");
	itest_ok(rc == 0 && state_of(out, 2, st, sizeof(st))[0] == '\0' && state_of(out, 1, st, sizeof(st))[0],
		 "after destroy 5 2: subsidiaries 5 lists 1, not 2", "%.600s", out);
	clear_ua(&c1, L(5));
	expect(&c1, S(5, 2), "after destroy 5 2: TEST UNIT READY to 5/2 -> 05/68/01", tur, 6, NULL, 0, 0,
	       EXPECT_SENSE(5, 0x68, 0x01), NULL);
	/* docs/control.md: every element of a list is checked first; a refused request changes nothing. */
	rc = itest_ctl(&d, out, sizeof(out), "subsidiary create 5 '10-12, 4'");
	itest_ok(rc == 1 && itest_daemon_log_has(&d, "LUN 5/4 already exists"),
		 "sbcemuctl subsidiary create 5 '10-12, 4' with 4 there -> exit 1, \"LUN 5/4 already exists\"", "exit %d",
		 rc);
	itest_ctl(&d, out, sizeof(out), "subsidiaries 5");
	itest_ok(state_of(out, 10, st, sizeof(st))[0] == '\0' && state_of(out, 12, st, sizeof(st))[0] == '\0',
		 "after the refused create: 10-12 were not created either", "%.600s", out);
	rc = itest_ctl(&d, out, sizeof(out), "subsidiary bind 5 '4, 4' --initiator x");
	itest_ok(rc == 1 && itest_daemon_log_has(&d, "element 4 is named twice"),
		 "sbcemuctl subsidiary bind 5 '4, 4' -> exit 1, \"element 4 is named twice\", 4 not bound", "exit %d", rc);
}

int main(int argc, char **argv)
{
	itest_init(argc, argv, "test_conglomerate: administrative and subsidiary LUs (docs/conglomerate.md)");
	itest_daemon_up(&d, "conglomerate", config);
	if (!relogin()) {
		itest_daemon_cleanup(&d);
		return itest_finish();
	}
	test_identification();
	test_report_luns();
	test_admin_lu();
	test_not_configured();
	test_io();
	test_subsidiaries_list();
	test_bind_unbind();
	test_unbind_race();
	test_save_restart();
	test_destroy();
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_raw_close(&c1);
	itest_raw_close(&c2);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
