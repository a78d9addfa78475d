/*
 * SPC foundation over iSCSI: TEST UNIT READY, INQUIRY (standard data and the
 * VPD pages 00h 80h 83h 86h B0h B1h B2h), READ CAPACITY(10/16), REPORT LUNS,
 * REQUEST SENSE, and the generic prologue's errors: unknown operation code
 * (05/20/00), reserved bits (05/24/00 with the field pointer), LBA out of
 * range (05/21/00), LUN not supported (05/25/00).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"

#define LU0_BLOCKS (64u * 1024 * 1024 / 512)
#define LU1_BLOCKS (64u * 1024 * 1024 / 4096)

static struct iscsi_context *s;

/* Sends the CDB given as bytes and checks the outcome. */
#define EXPECT(lun, name, e, dir, out, olen, ilen, r, ...)                                              \
	do {                                                                                            \
		const uint8_t cdb_[] = { __VA_ARGS__ };                                                 \
		itest_expect_cmd(s, lun, name, cdb_, (int)sizeof(cdb_), dir, out, olen, ilen, e, r);  \
	} while (0)

/* Fetches a VPD page (allocation length 4096); returns bytes, or -1 (check recorded). */
static int get_vpd(int lun, uint8_t page, uint8_t *buf, size_t cap)
{
	uint8_t cdb[6] = { 0x12, 0x01, page, 0x10, 0x00, 0 };
	struct itest_result r;
	char name[128];
	int n;

	itest_cmd(s, lun, cdb, 6, ITEST_IN, NULL, 0, 4096, &r);
	snprintf(name, sizeof(name), "LUN %d INQUIRY VPD %02Xh -> GOOD", lun, page);
	if (!itest_ok(r.transport_ok && r.status == 0 && r.data_len >= 4, name, "%s, %d bytes", itest_result_str(&r),
		      r.data_len)) {
		itest_result_free(&r);
		return -1;
	}
	n = r.data_len < (int)cap ? r.data_len : (int)cap;
	memcpy(buf, r.data, (size_t)n);
	itest_result_free(&r);
	snprintf(name, sizeof(name), "LUN %d VPD %02Xh: PAGE CODE = %02Xh, PAGE LENGTH = bytes returned - 4", lun, page,
		 page);
	itest_ok(buf[1] == page && itest_get_be16(buf + 2) + 4 == n, name, "page code %02Xh, page length %u, %d bytes",
		 buf[1], itest_get_be16(buf + 2), n);
	return n;
}

static void test_tur(void)
{
	EXPECT(0, "TEST UNIT READY on a ready LU -> GOOD", EXPECT_GOOD, ITEST_NONE, NULL, 0, 0, NULL, 0x00, 0, 0, 0, 0, 0);
	EXPECT(7, "TEST UNIT READY to LUN 7 (not configured) -> 05/25/00", EXPECT_SENSE(5, 0x25, 0x00), ITEST_NONE, NULL, 0,
	       0, NULL, 0x00, 0, 0, 0, 0, 0);
	EXPECT(7, "REPORT LUNS to LUN 7 (not configured) -> GOOD (SPC: any LUN answers REPORT LUNS)", EXPECT_GOOD, ITEST_IN,
	       NULL, 0, 256, NULL, 0xa0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x00, 0, 0);
}

static void test_inquiry_standard(void)
{
	struct itest_result r;
	bool printable = true;

	EXPECT(0, "INQUIRY standard data, allocation length 96 -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 96, &r, 0x12, 0,
	       0, 0, 96, 0);
	if (r.data_len >= 36) {
		const uint8_t *d = r.data;
		itest_ok((d[0] & 0x1f) == 0 && (d[0] >> 5) == 0, "INQUIRY: PERIPHERAL QUALIFIER 0, DEVICE TYPE 00h",
			 "byte 0 = %02Xh", d[0]);
		itest_ok(!(d[1] & 0x80), "INQUIRY: RMB = 0 (not removable by default)", "byte 1 = %02Xh", d[1]);
		itest_ok(d[2] >= 0x05, "INQUIRY: VERSION >= 05h (SPC-3 or later)", "VERSION = %02Xh", d[2]);
		itest_ok((d[3] & 0x0f) == 2, "INQUIRY: RESPONSE DATA FORMAT = 2", "byte 3 = %02Xh", d[3]);
		itest_ok(d[4] >= 31 && d[4] + 5 >= r.data_len, "INQUIRY: ADDITIONAL LENGTH >= 31 and consistent",
			 "ADDITIONAL LENGTH %u, %d bytes", d[4], r.data_len);
		itest_ok(d[7] & 0x02, "INQUIRY: CMDQUE = 1 (iSCSI requires command queuing)", "byte 7 = %02Xh", d[7]);
		for (int i = 8; i < 36; i++)
			if (d[i] < 0x20 || d[i] > 0x7e)
				printable = false;
		itest_ok(printable, "INQUIRY: T10 VENDOR, PRODUCT, REVISION are printable ASCII", "%.28s", d + 8);
	} else {
		itest_ok(false, "INQUIRY: standard data is at least 36 bytes", "%d bytes", r.data_len);
	}
	itest_result_free(&r);

	EXPECT(0, "INQUIRY allocation length 5 -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 5, &r, 0x12, 0, 0, 0, 5, 0);
	itest_ok(r.data_len == 5, "INQUIRY allocation length 5 returns exactly 5 bytes", "%d bytes", r.data_len);
	itest_result_free(&r);

	EXPECT(0, "INQUIRY EVPD=0 with PAGE CODE 80h -> 05/24/00", EXPECT_SENSE(5, 0x24, 0x00), ITEST_IN, NULL, 0, 255, &r,
	       0x12, 0, 0x80, 0, 255, 0);
	itest_expect_field_pointer("INQUIRY EVPD=0 PAGE CODE 80h: field pointer at CDB byte 2", &r, 1, 2, -1);
	EXPECT(0, "INQUIRY VPD page C7h (not supported) -> 05/24/00", EXPECT_SENSE(5, 0x24, 0x00), ITEST_IN, NULL, 0, 255,
	       NULL, 0x12, 1, 0xc7, 0, 255, 0);
	EXPECT(7, "INQUIRY to LUN 7 (not configured): GOOD with PERIPHERAL QUALIFIER 011b / TYPE 1Fh", EXPECT_GOOD,
	       ITEST_IN, NULL, 0, 96, &r, 0x12, 0, 0, 0, 96, 0);
	itest_ok(r.data_len >= 1 && r.data[0] == 0x7f, "INQUIRY LUN 7: byte 0 = 7Fh", "byte 0 = %02Xh",
		 r.data_len ? r.data[0] : 0);
	itest_result_free(&r);
}

static bool page_listed(const uint8_t *p, int n, uint8_t code)
{
	for (int i = 4; i < n; i++)
		if (p[i] == code)
			return true;
	return false;
}

/* Walks the designation descriptors of VPD 83h; returns a bit mask of (association << 4 | type) seen. */
static void check_vpd83(int lun, uint64_t *naa_out)
{
	uint8_t p[1024];
	int n = get_vpd(lun, 0x83, p, sizeof(p));
	bool naa_lu = false, rel_port = false, name_string = false, well_formed = true;
	char name[160];

	*naa_out = 0;
	if (n < 4)
		return;
	for (int off = 4; off + 4 <= n;) {
		int code_set = p[off] & 0x0f, assoc = (p[off + 1] >> 4) & 3, type = p[off + 1] & 0x0f;
		int len = p[off + 3];
		if (off + 4 + len > n) {
			well_formed = false;
			break;
		}
		if (type == 3 && assoc == 0 && code_set == 1 && len >= 8) {
			naa_lu = true;
			*naa_out = itest_get_be64(p + off + 4);
		}
		if (type == 4 && assoc == 1 && len == 4)
			rel_port = true;
		if (type == 8 && code_set == 3)
			name_string = true;
		off += 4 + len;
	}
	snprintf(name, sizeof(name), "LUN %d VPD 83h: designation descriptors fit the page", lun);
	itest_ok(well_formed, name, "a descriptor runs past the page length");
	snprintf(name, sizeof(name), "LUN %d VPD 83h: NAA designator (type 3, binary) for the logical unit", lun);
	itest_ok(naa_lu, name, "missing");
	snprintf(name, sizeof(name), "LUN %d VPD 83h: relative target port identifier (type 4, association 1)", lun);
	itest_ok(rel_port, name, "missing");
	snprintf(name, sizeof(name), "LUN %d VPD 83h: SCSI name string designator (type 8, UTF-8)", lun);
	itest_ok(name_string, name, "missing");
}

static void test_vpd(int lun, bool thin)
{
	uint8_t p[1024], q[1024];
	int n, m;
	char name[160];
	static const uint8_t required[] = { 0x00, 0x80, 0x83, 0x86, 0xb0, 0xb1, 0xb2 };

	n = get_vpd(lun, 0x00, p, sizeof(p));
	if (n >= 4) {
		bool ascending = true;
		for (int i = 5; i < n; i++)
			if (p[i] <= p[i - 1])
				ascending = false;
		snprintf(name, sizeof(name), "LUN %d VPD 00h: page list in ascending order", lun);
		itest_ok(ascending, name, NULL);
		for (size_t i = 0; i < sizeof(required); i++) {
			snprintf(name, sizeof(name), "LUN %d VPD 00h lists page %02Xh", lun, required[i]);
			itest_ok(page_listed(p, n, required[i]), name, "not listed");
		}
		/* Every listed page must be returned with its own page code (get_vpd checks it). */
		for (int i = 4; i < n; i++) {
			if (p[i] == 0x00 || p[i] == 0x83)
				continue;
			m = get_vpd(lun, p[i], q, sizeof(q));
			(void)m;
		}
	}

	n = get_vpd(lun, 0x80, p, sizeof(p));
	if (n >= 4) {
		bool printable = n > 4;
		for (int i = 4; i < n; i++)
			if (p[i] < 0x20 || p[i] > 0x7e)
				printable = false;
		snprintf(name, sizeof(name), "LUN %d VPD 80h: PRODUCT SERIAL NUMBER non-empty printable ASCII", lun);
		itest_ok(printable, name, "%d bytes", n - 4);
	}

	n = get_vpd(lun, 0x86, p, sizeof(p));
	if (n >= 4) {
		snprintf(name, sizeof(name), "LUN %d VPD 86h: PAGE LENGTH = 003Ch", lun);
		itest_ok(itest_get_be16(p + 2) == 0x3c, name, "%u", itest_get_be16(p + 2));
	}

	n = get_vpd(lun, 0xb0, p, sizeof(p));
	if (n >= 4) {
		snprintf(name, sizeof(name), "LUN %d VPD B0h: PAGE LENGTH = 003Ch", lun);
		itest_ok(itest_get_be16(p + 2) == 0x3c, name, "%u", itest_get_be16(p + 2));
		if (n >= 64 && thin) {
			snprintf(name, sizeof(name), "LUN %d VPD B0h: MAXIMUM UNMAP LBA COUNT > 0 on a thin LU", lun);
			itest_ok(itest_get_be32(p + 20) > 0, name, "%u", itest_get_be32(p + 20));
			snprintf(name, sizeof(name), "LUN %d VPD B0h: MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT > 0 on a thin LU",
				 lun);
			itest_ok(itest_get_be32(p + 24) > 0, name, "%u", itest_get_be32(p + 24));
		}
		if (n >= 64) {
			uint32_t max_xfer = itest_get_be32(p + 8), opt_xfer = itest_get_be32(p + 12);
			snprintf(name, sizeof(name),
				 "LUN %d VPD B0h: OPTIMAL TRANSFER LENGTH <= MAXIMUM TRANSFER LENGTH (when both set)", lun);
			itest_ok(!max_xfer || !opt_xfer || opt_xfer <= max_xfer, name, "optimal %u, maximum %u", opt_xfer,
				 max_xfer);
		}
	}

	n = get_vpd(lun, 0xb1, p, sizeof(p));
	if (n >= 4) {
		snprintf(name, sizeof(name), "LUN %d VPD B1h: PAGE LENGTH = 003Ch", lun);
		itest_ok(itest_get_be16(p + 2) == 0x3c, name, "%u", itest_get_be16(p + 2));
	}

	n = get_vpd(lun, 0xb2, p, sizeof(p));
	if (n >= 8) {
		snprintf(name, sizeof(name), "LUN %d VPD B2h: PAGE LENGTH >= 0004h", lun);
		itest_ok(itest_get_be16(p + 2) >= 4, name, "%u", itest_get_be16(p + 2));
		if (thin) {
			snprintf(name, sizeof(name), "LUN %d VPD B2h: LBPU = 1 (UNMAP supported) on a thin LU", lun);
			itest_ok(p[5] & 0x80, name, "byte 5 = %02Xh", p[5]);
			snprintf(name, sizeof(name), "LUN %d VPD B2h: LBPWS = 1 (WRITE SAME(16) UNMAP) on a thin LU", lun);
			itest_ok(p[5] & 0x40, name, "byte 5 = %02Xh", p[5]);
			snprintf(name, sizeof(name), "LUN %d VPD B2h: PROVISIONING TYPE = 010b (thin)", lun);
			itest_ok((p[6] & 7) == 2, name, "byte 6 = %02Xh", p[6]);
		} else {
			snprintf(name, sizeof(name), "LUN %d VPD B2h: LBPU = 0 and PROVISIONING TYPE != thin on a thick LU",
				 lun);
			itest_ok(!(p[5] & 0x80) && (p[6] & 7) != 2, name, "byte 5 = %02Xh, byte 6 = %02Xh", p[5], p[6]);
		}
	}
}

static void test_read_capacity(int lun, uint32_t blocks, uint32_t block_size, bool thin)
{
	struct itest_result r;
	char name[160];

	snprintf(name, sizeof(name), "LUN %d READ CAPACITY(10) -> GOOD", lun);
	EXPECT(lun, name, EXPECT_GOOD, ITEST_IN, NULL, 0, 8, &r, 0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0);
	if (r.data_len == 8) {
		snprintf(name, sizeof(name), "LUN %d READ CAPACITY(10): RETURNED LBA = %u, BLOCK LENGTH = %u", lun,
			 blocks - 1, block_size);
		itest_ok(itest_get_be32(r.data) == blocks - 1 && itest_get_be32(r.data + 4) == block_size, name,
			 "LBA %u, length %u", itest_get_be32(r.data), itest_get_be32(r.data + 4));
	}
	itest_result_free(&r);

	snprintf(name, sizeof(name), "LUN %d READ CAPACITY(16) -> GOOD", lun);
	EXPECT(lun, name, EXPECT_GOOD, ITEST_IN, NULL, 0, 32, &r, 0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0,
	       0);
	if (r.data_len == 32) {
		snprintf(name, sizeof(name), "LUN %d READ CAPACITY(16): RETURNED LBA = %u, BLOCK LENGTH = %u", lun,
			 blocks - 1, block_size);
		itest_ok(itest_get_be64(r.data) == blocks - 1 && itest_get_be32(r.data + 8) == block_size, name,
			 "LBA %llu, length %u", (unsigned long long)itest_get_be64(r.data), itest_get_be32(r.data + 8));
		snprintf(name, sizeof(name), "LUN %d READ CAPACITY(16): LBPME = %d", lun, thin);
		itest_ok(!!(r.data[14] & 0x80) == thin, name, "byte 14 = %02Xh", r.data[14]);
		snprintf(name, sizeof(name), "LUN %d READ CAPACITY(16): P_TYPE/PROT_EN = 0 (no protection information)",
			 lun);
		itest_ok((r.data[12] & 0x0f) == 0, name, "byte 12 = %02Xh", r.data[12]);
	} else {
		snprintf(name, sizeof(name), "LUN %d READ CAPACITY(16) returns 32 bytes", lun);
		itest_ok(false, name, "%d bytes", r.data_len);
	}
	itest_result_free(&r);

	snprintf(name, sizeof(name), "LUN %d READ CAPACITY(16) allocation length 8 -> GOOD, 8 bytes", lun);
	EXPECT(lun, name, EXPECT_GOOD, ITEST_IN, NULL, 0, 8, &r, 0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0);
	itest_result_free(&r);
}

static void test_report_luns(void)
{
	struct itest_result r;

	EXPECT(0, "REPORT LUNS SELECT REPORT 00h -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 4096, &r, 0xa0, 0, 0x00, 0, 0,
	       0, 0, 0, 0x10, 0x00, 0, 0);
	if (r.data_len >= 8) {
		uint32_t len = itest_get_be32(r.data);
		bool lun0 = false, lun1 = false;
		for (uint32_t off = 8; off + 8 <= 8 + len && (int)off + 8 <= r.data_len; off += 8) {
			uint64_t l = itest_get_be64(r.data + off);
			if (l == 0)
				lun0 = true;
			if (l == 0x0001000000000000ull)
				lun1 = true;
		}
		itest_ok(len == 16, "REPORT LUNS: LUN LIST LENGTH = 16 (two LUs)", "%u", len);
		itest_ok(lun0 && lun1, "REPORT LUNS lists LUN 0 and LUN 1 (peripheral device addressing)", NULL);
	}
	itest_result_free(&r);
	EXPECT(0, "REPORT LUNS SELECT REPORT 02h (all) -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 4096, NULL, 0xa0, 0, 0x02,
	       0, 0, 0, 0, 0, 0x10, 0x00, 0, 0);
	EXPECT(0, "REPORT LUNS SELECT REPORT 07h (reserved) -> 05/24/00", EXPECT_SENSE(5, 0x24, 0), ITEST_IN, NULL, 0, 4096,
	       &r, 0xa0, 0, 0x07, 0, 0, 0, 0, 0, 0x10, 0x00, 0, 0);
	itest_expect_field_pointer("REPORT LUNS SELECT REPORT 07h: field pointer at CDB byte 2", &r, 1, 2, -1);
}

static void test_request_sense(void)
{
	struct itest_result r;

	EXPECT(0, "REQUEST SENSE, nothing pending -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 252, &r, 0x03, 0, 0, 0, 252,
	       0);
	if (r.data_len >= 14) {
		itest_ok((r.data[0] & 0x7f) == 0x70, "REQUEST SENSE DESC=0: fixed format (70h)", "byte 0 = %02Xh",
			 r.data[0]);
		itest_ok((r.data[2] & 0x0f) == 0 && r.data[12] == 0 && r.data[13] == 0,
			 "REQUEST SENSE, nothing pending: NO SENSE 00/00/00", "%02X/%02X/%02X", r.data[2] & 0x0f,
			 r.data[12], r.data[13]);
	} else {
		itest_ok(false, "REQUEST SENSE returns at least 18 bytes of fixed sense", "%d bytes", r.data_len);
	}
	itest_result_free(&r);
	EXPECT(0, "REQUEST SENSE DESC=1 -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 252, &r, 0x03, 1, 0, 0, 252, 0);
	itest_ok(r.data_len >= 8 && (r.data[0] & 0x7f) == 0x72, "REQUEST SENSE DESC=1: descriptor format (72h)",
		 "byte 0 = %02Xh, %d bytes", r.data_len ? r.data[0] : 0, r.data_len);
	itest_result_free(&r);
	EXPECT(0, "REQUEST SENSE allocation length 0 -> GOOD, no data", EXPECT_GOOD, ITEST_IN, NULL, 0, 0, &r, 0x03, 0, 0,
	       0, 0, 0);
	itest_result_free(&r);
}

/* Operation codes the SBC-4 / SPC-5 foundation does not implement. */
static void test_unknown_opcodes(void)
{
	struct itest_result r;

	EXPECT(0, "operation code 02h (unassigned) -> 05/20/00", EXPECT_SENSE(5, 0x20, 0), ITEST_NONE, NULL, 0, 0, &r,
	       0x02, 0, 0, 0, 0, 0);
	/* SPC-4 leaves the field pointer optional for INVALID COMMAND OPERATION CODE: only report it. */
	if (r.status == 2)
		itest_note("operation code 02h: SKSV=%d", r.sense.sksv);
	/* SEND DIAGNOSTIC and LOG SENSE are served (test_health.c, test_log_pages.c). */
	EXPECT(0, "REASSIGN BLOCKS (07h, not implemented) -> 05/20/00", EXPECT_SENSE(5, 0x20, 0), ITEST_NONE, NULL, 0, 0,
	       NULL, 0x07, 0, 0, 0, 0, 0);
	EXPECT(0, "READ BUFFER(10) (3Ch, not implemented) -> 05/20/00", EXPECT_SENSE(5, 0x20, 0), ITEST_IN, NULL, 0, 255,
	       NULL, 0x3c, 0x02, 0, 0, 0, 0, 0, 0, 255, 0);
	EXPECT(0, "vendor-specific operation code C5h -> 05/20/00", EXPECT_SENSE(5, 0x20, 0), ITEST_NONE, NULL, 0, 0, NULL,
	       0xc5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
	EXPECT(0, "SERVICE ACTION IN(16) with service action 1Fh -> 05/24/00", EXPECT_SENSE(5, 0x24, 0), ITEST_IN, NULL,
	       0, 32, &r, 0x9e, 0x1f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0);
	itest_expect_field_pointer("SERVICE ACTION IN(16) SA 1Fh: field pointer at CDB byte 1 bit 4", &r, 1, 1, 4);
}

/* A reserved (or unsupported) bit set in a CDB: 05/24/00, field pointer on that byte and bit. */
struct reserved_case {
	const char *name;
	uint8_t cdb[16];
	int len;
	enum itest_dir dir;
	size_t in_len;
	int byte, bit;
};

static const struct reserved_case reserved_cases[] = {
	{ "TEST UNIT READY byte 1 bit 0 (reserved)", { 0x00, 0x01 }, 6, ITEST_NONE, 0, 1, 0 },
	{ "TEST UNIT READY CONTROL NACA=1 (ACA not supported)", { 0x00, 0, 0, 0, 0, 0x04 }, 6, ITEST_NONE, 0, 5, 2 },
	{ "INQUIRY byte 1 bit 1 (obsolete CMDDT)", { 0x12, 0x02, 0, 0, 96, 0 }, 6, ITEST_IN, 96, 1, 1 },
	{ "READ(10) byte 1 bit 0 (obsolete)", { 0x28, 0x01, 0, 0, 0, 0, 0, 0, 1, 0 }, 10, ITEST_IN, 512, 1, 0 },
	{ "READ(10) byte 6 bit 7 (reserved)", { 0x28, 0, 0, 0, 0, 0, 0x80, 0, 1, 0 }, 10, ITEST_IN, 512, 6, 7 },
	{ "READ(16) byte 14 bit 6 (reserved)", { 0x88, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x40, 0 }, 16, ITEST_IN, 512,
	  14, 6 },
	{ "WRITE(10) byte 1 bit 0 (obsolete)", { 0x2a, 0x01, 0, 0, 0, 0, 0, 0, 0, 0 }, 10, ITEST_NONE, 0, 1, 0 },
	{ "MODE SENSE(6) byte 1 bit 4 (reserved)", { 0x1a, 0x10, 0x3f, 0, 255, 0 }, 6, ITEST_IN, 255, 1, 4 },
	{ "READ CAPACITY(10) byte 1 bit 0 (obsolete RELADR)", { 0x25, 0x01, 0, 0, 0, 0, 0, 0, 0, 0 }, 10, ITEST_IN, 8, 1,
	  0 },
	{ "READ CAPACITY(16) byte 14 bit 1 (reserved)", { 0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0x02, 0 }, 16,
	  ITEST_IN, 32, 14, 1 },
	{ "SYNCHRONIZE CACHE(10) byte 1 bit 0 (obsolete)", { 0x35, 0x01, 0, 0, 0, 0, 0, 0, 0, 0 }, 10, ITEST_NONE, 0, 1,
	  0 },
	{ "REPORT LUNS byte 1 bit 0 (reserved)", { 0xa0, 0x01, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0 }, 12, ITEST_IN, 4096, 1,
	  0 },
	{ "REQUEST SENSE byte 2 bit 0 (reserved)", { 0x03, 0, 0x01, 0, 252, 0 }, 6, ITEST_IN, 252, 2, 0 },
	{ "UNMAP ANCHOR=1 (anchored LBAs not supported)", { 0x42, 0x01, 0, 0, 0, 0, 0, 0, 0, 0 }, 10, ITEST_NONE, 0, 1,
	  0 },
	{ "PRE-FETCH(10) byte 1 bit 0 (reserved)", { 0x34, 0x01, 0, 0, 0, 0, 0, 0, 1, 0 }, 10, ITEST_NONE, 0, 1, 0 },
};

static void test_reserved_bits(void)
{
	char name[200];

	for (size_t i = 0; i < sizeof(reserved_cases) / sizeof(reserved_cases[0]); i++) {
		const struct reserved_case *c = &reserved_cases[i];
		struct itest_result r;
		snprintf(name, sizeof(name), "%s -> 05/24/00", c->name);
		itest_expect_cmd(s, 0, name, c->cdb, c->len, c->dir, NULL, 0, c->in_len, EXPECT_SENSE(5, 0x24, 0), &r);
		snprintf(name, sizeof(name), "%s: SKSV=1 C/D=1 FIELD POINTER byte %d BIT POINTER %d", c->name, c->byte,
			 c->bit);
		itest_expect_field_pointer(name, &r, 1, c->byte, c->bit);
		itest_result_free(&r);
	}
}

static void test_lba_range(void)
{
	uint32_t cap = LU0_BLOCKS;
	uint8_t cdb[16];

	/* SBC-4 4.5: an LBA range past the capacity -> LOGICAL BLOCK ADDRESS OUT OF RANGE. */
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x28;
	itest_put_be32(cdb + 2, cap);
	itest_put_be16(cdb + 7, 1);
	itest_expect_cmd(s, 0, "READ(10) LBA = capacity -> 05/21/00", cdb, 10, ITEST_IN, NULL, 0, 512,
			 EXPECT_SENSE(5, 0x21, 0), NULL);
	itest_put_be32(cdb + 2, cap - 1);
	itest_put_be16(cdb + 7, 2);
	itest_expect_cmd(s, 0, "READ(10) last LBA + 2 blocks -> 05/21/00", cdb, 10, ITEST_IN, NULL, 0, 1024,
			 EXPECT_SENSE(5, 0x21, 0), NULL);
	itest_put_be32(cdb + 2, 0xffffffffu);
	itest_put_be16(cdb + 7, 0);
	itest_expect_cmd(s, 0, "READ(10) LBA FFFFFFFFh, 0 blocks -> 05/21/00", cdb, 10, ITEST_IN, NULL, 0, 0,
			 EXPECT_SENSE(5, 0x21, 0), NULL);
	itest_put_be32(cdb + 2, cap - 1);
	itest_put_be16(cdb + 7, 1);
	itest_expect_cmd(s, 0, "READ(10) last LBA, 1 block -> GOOD", cdb, 10, ITEST_IN, NULL, 0, 512, EXPECT_GOOD, NULL);
	itest_put_be32(cdb + 2, 0);
	itest_put_be16(cdb + 7, 0);
	itest_expect_cmd(s, 0, "READ(10) LBA 0, 0 blocks -> GOOD", cdb, 10, ITEST_IN, NULL, 0, 0, EXPECT_GOOD, NULL);

	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x88;
	itest_put_be64(cdb + 2, 0x8000000000000000ull);
	itest_put_be32(cdb + 10, 1);
	itest_expect_cmd(s, 0, "READ(16) LBA 2^63 -> 05/21/00", cdb, 16, ITEST_IN, NULL, 0, 512, EXPECT_SENSE(5, 0x21, 0),
			 NULL);
	itest_put_be64(cdb + 2, 0xffffffffffffffffull);
	itest_put_be32(cdb + 10, 2);
	itest_expect_cmd(s, 0, "READ(16) LBA 2^64-1 + 2 blocks (wraps) -> 05/21/00", cdb, 16, ITEST_IN, NULL, 0, 1024,
			 EXPECT_SENSE(5, 0x21, 0), NULL);

	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x08;
	cdb[1] = 0x1f;
	cdb[2] = 0xff;
	cdb[3] = 0xff;
	cdb[4] = 1;
	itest_expect_cmd(s, 0, "READ(6) LBA 1FFFFFh (past 64 MiB) -> 05/21/00", cdb, 6, ITEST_IN, NULL, 0, 512,
			 EXPECT_SENSE(5, 0x21, 0), NULL);

	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x28;
	itest_put_be32(cdb + 2, LU1_BLOCKS);
	itest_put_be16(cdb + 7, 1);
	itest_expect_cmd(s, 1, "LUN 1 (4096-byte blocks) READ(10) LBA = capacity -> 05/21/00", cdb, 10, ITEST_IN, NULL, 0,
			 4096, EXPECT_SENSE(5, 0x21, 0), NULL);
}

int main(int argc, char **argv)
{
	struct itest_daemon d;
	uint64_t naa0 = 0, naa1 = 0;

	itest_init(argc, argv, "test_spc: INQUIRY/VPD, READ CAPACITY, REPORT LUNS, REQUEST SENSE, CDB checks");
	itest_daemon_up(&d, "spc", itest_default_config);
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s)
		return itest_finish();
	itest_clear_ua(s, 0);
	itest_clear_ua(s, 1);

	test_tur();
	test_inquiry_standard();
	test_vpd(0, true);
	test_vpd(1, false);
	check_vpd83(0, &naa0);
	check_vpd83(1, &naa1);
	itest_ok(naa0 && naa1 && naa0 != naa1, "VPD 83h: LUN 0 and LUN 1 have different NAA designators",
		 "%016llx vs %016llx", (unsigned long long)naa0, (unsigned long long)naa1);
	test_read_capacity(0, LU0_BLOCKS, 512, true);
	test_read_capacity(1, LU1_BLOCKS, 4096, false);
	test_report_luns();
	test_request_sense();
	test_unknown_opcodes();
	test_reserved_bits();
	test_lba_range();

	itest_close(s);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
