/*
 * MODE SENSE(6/10) and MODE SELECT(6/10) over iSCSI (SPC-4 6.11-6.14, 7.5):
 * all pages with PC current/changeable/default/saved, header and block
 * descriptor fields, a changeable field changed and read back, the MODE
 * PARAMETERS CHANGED unit attention (06/2A/01) seen by the other I_T nexus
 * only, parameter-list errors (05/1A/00, 05/26/00 with the field pointer),
 * and saved pages across a daemon restart.
 *
 * Then mode page defaults (config key mode_defaults, docs/config.md; the
 * runtime control's lu-mode-defaults, docs/control.md) on a second daemon:
 * an LU configured with "wce=0 d_sense=1" reports them with PC = 10b and
 * 00b and answers in descriptor sense (SPC-4 7.5.8 D_SENSE); with a volatile
 * write cache and WCE = 0 a power cut loses nothing (SBC-4 6.5.5: every write
 * is on the medium first).  Changed at run time, the current values follow,
 * every I_T nexus gets MODE PARAMETERS CHANGED (06/2A/01), SWP = 1 makes
 * writes fail with 07/27/00; pages saved with MODE SELECT SP = 1 stay saved
 * (PC = 11b) and come back after a power cut; `save` keeps the key.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"

static struct itest_daemon d;
static struct iscsi_context *a, *b;

struct page {
	uint8_t code, subpage;
	bool spf;
	int offset, len; /* offset of the page in the data; total bytes including its header */
};

/* Walks the mode pages after header+block descriptors; returns the count or -1 on a malformed list. */
static int walk_pages(const uint8_t *p, int n, int start, struct page *pages, int max)
{
	int count = 0, off = start;

	while (off < n) {
		struct page pg = { .code = p[off] & 0x3f, .spf = (p[off] & 0x40) != 0, .offset = off };
		if (pg.spf) {
			if (off + 4 > n)
				return -1;
			pg.subpage = p[off + 1];
			pg.len = 4 + itest_get_be16(p + off + 2);
		} else {
			if (off + 2 > n)
				return -1;
			pg.len = 2 + p[off + 1];
		}
		if (off + pg.len > n)
			return -1;
		if (count < max)
			pages[count] = pg;
		count++;
		off += pg.len;
	}
	return count;
}

static const struct page *find_page(const struct page *pages, int n, uint8_t code, uint8_t subpage)
{
	for (int i = 0; i < n; i++)
		if (pages[i].code == code && pages[i].subpage == subpage)
			return &pages[i];
	return NULL;
}

/* MODE SENSE(10) for one page (or 3Fh) with page control pc; returns data length (r owns data). */
static void mode_sense10(struct iscsi_context *s, uint8_t page, uint8_t subpage, int pc, bool dbd,
			 struct itest_result *r)
{
	uint8_t cdb[10] = { 0x5a, dbd ? 0x08 : 0x00, (uint8_t)(pc << 6 | page), subpage, 0, 0, 0, 0x10, 0x00, 0 };
	itest_cmd(s, 0, cdb, 10, ITEST_IN, NULL, 0, 4096, r);
}

static void test_mode_sense_all(void)
{
	struct itest_result r;
	struct page pages[64];
	int np;
	char name[160];
	static const char *pc_names[] = { "current", "changeable", "default", "saved" };
	int counts[4] = { -1, -1, -1, -1 };

	/* MODE SENSE(6), all pages, current values. */
	{
		uint8_t cdb[6] = { 0x1a, 0x00, 0x3f, 0x00, 255, 0 };
		itest_expect_cmd(a, 0, "MODE SENSE(6) page 3Fh PC=current -> GOOD", cdb, 6, ITEST_IN, NULL, 0, 255,
				 EXPECT_GOOD, &r);
	}
	if (r.data_len >= 4) {
		const uint8_t *p = r.data;
		itest_ok(p[0] == r.data_len - 1, "MODE SENSE(6): MODE DATA LENGTH = bytes returned - 1", "%u vs %d", p[0],
			 r.data_len);
		itest_ok(!(p[2] & 0x80), "MODE SENSE(6): DEVICE-SPECIFIC PARAMETER WP = 0 (writable LU)", "%02Xh", p[2]);
		itest_ok(p[2] & 0x10, "MODE SENSE(6): DPOFUA = 1 (DPO and FUA supported)", "%02Xh", p[2]);
		itest_ok(p[3] == 8, "MODE SENSE(6) DBD=0: BLOCK DESCRIPTOR LENGTH = 8", "%u", p[3]);
		if (p[3] == 8 && r.data_len >= 12) {
			uint32_t bl = (uint32_t)p[9] << 16 | (uint32_t)p[10] << 8 | p[11];
			itest_ok(bl == 512, "MODE SENSE(6) block descriptor: LOGICAL BLOCK LENGTH = 512", "%u", bl);
		}
		np = walk_pages(p, r.data_len, 4 + p[3], pages, 64);
		itest_ok(np > 0, "MODE SENSE(6) 3Fh: page list is well formed", "walk result %d", np);
		if (np > 0) {
			const struct page *c = find_page(pages, np, 0x08, 0), *k = find_page(pages, np, 0x0a, 0);
			bool ascending = true;
			itest_ok(c && c->len == 2 + 0x12, "MODE SENSE(6) 3Fh: Caching page (08h), PAGE LENGTH 12h",
				 c ? "length %d" : "missing", c ? c->len - 2 : 0);
			itest_ok(k && k->len == 2 + 0x0a, "MODE SENSE(6) 3Fh: Control page (0Ah), PAGE LENGTH 0Ah",
				 k ? "length %d" : "missing", k ? k->len - 2 : 0);
			for (int i = 1; i < np && i < 64; i++)
				if (pages[i].code < pages[i - 1].code)
					ascending = false;
			itest_ok(ascending, "MODE SENSE 3Fh: pages in ascending page code order", NULL);
			for (int i = 0; i < np && i < 64; i++)
				if (pages[i].spf)
					ascending = false;
			itest_ok(ascending, "MODE SENSE 3Fh subpage 00h: no subpages (SPF=0 only)", NULL);
		}
	}
	itest_result_free(&r);

	{
		uint8_t cdb[6] = { 0x1a, 0x08, 0x3f, 0x00, 255, 0 };
		itest_expect_cmd(a, 0, "MODE SENSE(6) DBD=1 -> GOOD", cdb, 6, ITEST_IN, NULL, 0, 255, EXPECT_GOOD, &r);
		itest_ok(r.data_len >= 4 && r.data[3] == 0, "MODE SENSE(6) DBD=1: BLOCK DESCRIPTOR LENGTH = 0", "%u",
			 r.data_len >= 4 ? r.data[3] : 0xff);
		itest_result_free(&r);
	}
	{
		uint8_t cdb[6] = { 0x1a, 0x00, 0x3f, 0x00, 4, 0 };
		itest_expect_cmd(a, 0, "MODE SENSE(6) allocation length 4 -> GOOD, 4 bytes (truncated)", cdb, 6, ITEST_IN,
				 NULL, 0, 4, EXPECT_GOOD, &r);
		itest_ok(r.data_len == 4, "MODE SENSE(6) allocation length 4 returns 4 bytes", "%d", r.data_len);
		itest_result_free(&r);
	}

	/* MODE SENSE(10), every page control value. */
	for (int pc = 0; pc < 4; pc++) {
		mode_sense10(a, 0x3f, 0, pc, false, &r);
		snprintf(name, sizeof(name), "MODE SENSE(10) page 3Fh PC=%s -> GOOD%s", pc_names[pc],
			 pc == 3 ? " (or 05/39/00 SAVING PARAMETERS NOT SUPPORTED)" : "");
		if (pc == 3 && itest_result_matches(&r, EXPECT_SENSE(5, 0x39, 0))) {
			itest_ok(true, name, NULL);
			itest_note("saved pages not supported; PC=saved reported 05/39/00");
			itest_result_free(&r);
			continue;
		}
		if (!itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.data_len >= 8, name, "%s",
			      itest_result_str(&r))) {
			itest_result_free(&r);
			continue;
		}
		snprintf(name, sizeof(name), "MODE SENSE(10) PC=%s: MODE DATA LENGTH = bytes returned - 2", pc_names[pc]);
		itest_ok(itest_get_be16(r.data) == r.data_len - 2, name, "%u vs %d", itest_get_be16(r.data), r.data_len);
		np = walk_pages(r.data, r.data_len, 8 + itest_get_be16(r.data + 6), pages, 64);
		snprintf(name, sizeof(name), "MODE SENSE(10) PC=%s: page list is well formed", pc_names[pc]);
		itest_ok(np > 0, name, "walk result %d", np);
		counts[pc] = np;
		itest_result_free(&r);
	}
	itest_ok(counts[0] > 0 && counts[1] == counts[0] && counts[2] == counts[0],
		 "MODE SENSE: current, changeable and default list the same pages", "%d / %d / %d", counts[0], counts[1],
		 counts[2]);

	{
		uint8_t cdb[10] = { 0x5a, 0x10, 0x3f, 0, 0, 0, 0, 0x10, 0, 0 };
		itest_expect_cmd(a, 0, "MODE SENSE(10) LLBAA=1 -> GOOD", cdb, 10, ITEST_IN, NULL, 0, 4096, EXPECT_GOOD, &r);
		if (r.data_len >= 8) {
			int bdl = itest_get_be16(r.data + 6), longlba = r.data[4] & 1;
			itest_ok((longlba && bdl == 16) || (!longlba && bdl == 8),
				 "MODE SENSE(10) LLBAA=1: BLOCK DESCRIPTOR LENGTH 16 with LONGLBA=1, or 8 with LONGLBA=0",
				 "LONGLBA %d, length %d", longlba, bdl);
		}
		itest_result_free(&r);
	}
	{
		uint8_t cdb[10] = { 0x5a, 0x00, 0x3f, 0xff, 0, 0, 0, 0x10, 0, 0 };
		itest_expect_cmd(a, 0, "MODE SENSE(10) page 3Fh subpage FFh (all pages and subpages) -> GOOD", cdb, 10,
				 ITEST_IN, NULL, 0, 4096, EXPECT_GOOD, NULL);
	}
	{
		uint8_t cdb[6] = { 0x1a, 0x00, 0x3e, 0x00, 255, 0 };
		itest_expect_cmd(a, 0, "MODE SENSE(6) page 3Eh (not supported) -> 05/24/00", cdb, 6, ITEST_IN, NULL, 0, 255,
				 EXPECT_SENSE(5, 0x24, 0), &r);
		itest_expect_field_pointer("MODE SENSE(6) page 3Eh: field pointer at CDB byte 2", &r, 1, 2, -1);
		itest_result_free(&r);
	}
	{
		uint8_t cdb[6] = { 0x1a, 0x00, 0x0a, 0x00, 255, 0 };
		itest_expect_cmd(a, 0, "MODE SENSE(6) page 0Ah (Control) alone -> GOOD", cdb, 6, ITEST_IN, NULL, 0, 255,
				 EXPECT_GOOD, &r);
		if (r.data_len >= 4) {
			np = walk_pages(r.data, r.data_len, 4 + r.data[3], pages, 64);
			itest_ok(np == 1 && pages[0].code == 0x0a, "MODE SENSE(6) page 0Ah returns exactly the Control page",
				 "%d pages", np);
		}
		itest_result_free(&r);
	}
}

/* Reads one page (subpage 0) via MODE SENSE(10) DBD=1, PC pc, into page[] (with its header). Returns its length. */
static int read_page(struct iscsi_context *s, uint8_t code, int pc, uint8_t *page, int cap)
{
	struct itest_result r;
	int len = -1;

	mode_sense10(s, code, 0, pc, true, &r);
	if (r.transport_ok && r.status == 0 && r.data_len >= 10) {
		int off = 8 + itest_get_be16(r.data + 6);
		if (off + 2 <= r.data_len && (r.data[off] & 0x3f) == code) {
			len = 2 + r.data[off + 1];
			if (off + len > r.data_len || len > cap)
				len = -1;
			else
				memcpy(page, r.data + off, (size_t)len);
		}
	}
	itest_result_free(&r);
	return len;
}

/* MODE SELECT(10) PF=1 with one page; returns the result (caller frees). */
static void mode_select10(struct iscsi_context *s, const uint8_t *page, int len, bool sp, struct itest_result *r)
{
	uint8_t buf[512] = { 0 };
	uint8_t cdb[10] = { 0x55, (uint8_t)(0x10 | (sp ? 1 : 0)), 0, 0, 0, 0, 0, 0, 0, 0 };

	memcpy(buf + 8, page, (size_t)len);
	buf[8] &= 0x7f; /* PS is reserved in MODE SELECT */
	itest_put_be16(cdb + 7, (uint16_t)(8 + len));
	itest_cmd(s, 0, cdb, 10, ITEST_OUT, buf, (size_t)(8 + len), 0, r);
}

static void mode_select6(struct iscsi_context *s, const uint8_t *page, int len, bool sp, struct itest_result *r)
{
	uint8_t buf[260] = { 0 };
	uint8_t cdb[6] = { 0x15, (uint8_t)(0x10 | (sp ? 1 : 0)), 0, 0, (uint8_t)(4 + len), 0 };

	memcpy(buf + 4, page, (size_t)len);
	buf[4] &= 0x7f;
	itest_cmd(s, 0, cdb, 6, ITEST_OUT, buf, (size_t)(4 + len), 0, r);
}

/* A failing command's sense format: 0x70 or 0x72 (or -1). */
static int sense_format(struct iscsi_context *s)
{
	uint8_t cdb[6] = { 0x02, 0, 0, 0, 0, 0 };
	struct itest_result r;

	itest_cmd(s, 0, cdb, 6, ITEST_NONE, NULL, 0, 0, &r);
	return r.status == 2 && r.sense.len ? (r.sense.raw[0] & 0x7f) : -1;
}

static void expect_tur(struct iscsi_context *s, const char *name, struct itest_expect e)
{
	uint8_t cdb[6] = { 0 };
	itest_expect_cmd(s, 0, name, cdb, 6, ITEST_NONE, NULL, 0, 0, e, NULL);
}

static void test_mode_select(void)
{
	uint8_t cur[64], chg[64], page[64];
	int len, clen;
	struct itest_result r;

	len = read_page(a, 0x0a, 0, cur, sizeof(cur));
	clen = read_page(a, 0x0a, 1, chg, sizeof(chg));
	if (!itest_ok(len == 12 && clen == 12, "Control page (0Ah) current and changeable values read", "%d / %d", len,
		      clen))
		return;
	itest_clear_ua(a, 0);
	itest_clear_ua(b, 0);

	if (itest_ok(chg[2] & 0x04, "Control page: D_SENSE is changeable", "changeable byte 2 = %02Xh", chg[2])) {
		memcpy(page, cur, 12);
		page[2] |= 0x04;
		mode_select10(a, page, 12, false, &r);
		itest_ok(itest_result_matches(&r, EXPECT_GOOD), "MODE SELECT(10) Control D_SENSE=1 -> GOOD", "%s",
			 itest_result_str(&r));
		len = read_page(a, 0x0a, 0, page, sizeof(page));
		itest_ok(len == 12 && (page[2] & 0x04), "MODE SENSE after MODE SELECT: D_SENSE = 1 (read back)",
			 "byte 2 = %02Xh", page[2]);
		expect_tur(a, "MODE SELECT: the nexus that changed the page gets no unit attention", EXPECT_GOOD);
		expect_tur(b, "MODE SELECT: other I_T nexus -> 06/2A/01 MODE PARAMETERS CHANGED",
			   EXPECT_SENSE(6, 0x2a, 0x01));
		expect_tur(b, "MODE PARAMETERS CHANGED reported once: next command GOOD", EXPECT_GOOD);
		itest_ok(sense_format(a) == 0x72, "D_SENSE=1: CHECK CONDITION sense in descriptor format (72h)",
			 "response code %02Xh", sense_format(a));

		memcpy(page, cur, 12);
		page[2] &= (uint8_t)~0x04;
		mode_select6(a, page, 12, false, &r);
		itest_ok(itest_result_matches(&r, EXPECT_GOOD), "MODE SELECT(6) Control D_SENSE=0 -> GOOD", "%s",
			 itest_result_str(&r));
		len = read_page(a, 0x0a, 0, page, sizeof(page));
		itest_ok(len == 12 && !(page[2] & 0x04), "MODE SENSE after MODE SELECT(6): D_SENSE = 0 (read back)",
			 "byte 2 = %02Xh", page[2]);
		itest_ok(sense_format(a) == 0x70, "D_SENSE=0: CHECK CONDITION sense in fixed format (70h)",
			 "response code %02Xh", sense_format(a));
		itest_clear_ua(b, 0);
	}

	/* Caching page WCE, when changeable, toggled through MODE SELECT(10). */
	len = read_page(a, 0x08, 0, cur, sizeof(cur));
	clen = read_page(a, 0x08, 1, chg, sizeof(chg));
	if (len == 20 && clen == 20 && (chg[2] & 0x04)) {
		memcpy(page, cur, 20);
		page[2] ^= 0x04;
		mode_select10(a, page, 20, false, &r);
		itest_ok(itest_result_matches(&r, EXPECT_GOOD), "MODE SELECT(10) Caching WCE toggled -> GOOD", "%s",
			 itest_result_str(&r));
		len = read_page(a, 0x08, 0, page, sizeof(page));
		itest_ok(len == 20 && (page[2] & 0x04) != (cur[2] & 0x04), "MODE SENSE: Caching WCE reads back toggled",
			 "byte 2 = %02Xh", page[2]);
		mode_select10(a, cur, 20, false, &r);
		itest_ok(itest_result_matches(&r, EXPECT_GOOD), "MODE SELECT(10) Caching WCE restored -> GOOD", "%s",
			 itest_result_str(&r));
		itest_clear_ua(b, 0);
	} else {
		itest_note("Caching page WCE not changeable (len %d/%d): toggle skipped", len, clen);
	}

	/* A bit the changeable mask says cannot change -> INVALID FIELD IN PARAMETER LIST. */
	len = read_page(a, 0x0a, 0, cur, sizeof(cur));
	clen = read_page(a, 0x0a, 1, chg, sizeof(chg));
	if (len == 12 && clen == 12) {
		int byte = -1, bit = -1;
		for (int i = 2; i < 12 && byte < 0; i++)
			for (int k = 7; k >= 0; k--)
				if (!(chg[i] & (1 << k))) {
					byte = i;
					bit = k;
					break;
				}
		if (byte >= 0) {
			char name[200];
			memcpy(page, cur, 12);
			page[byte] ^= (uint8_t)(1 << bit);
			mode_select10(a, page, 12, false, &r);
			snprintf(name, sizeof(name),
				 "MODE SELECT(10) changing a non-changeable Control page bit (byte %d bit %d) -> 05/26/00", byte,
				 bit);
			itest_ok(itest_result_matches(&r, EXPECT_SENSE(5, 0x26, 0)), name, "%s", itest_result_str(&r));
			snprintf(name, sizeof(name),
				 "MODE SELECT(10) bad bit: field pointer C/D=0 at parameter byte %d bit %d", 8 + byte, bit);
			itest_expect_field_pointer(name, &r, 0, 8 + byte, bit);
		}
	}

	/* Wrong PAGE LENGTH for the Control page. */
	memcpy(page, cur, 12);
	page[1] = 0x0b;
	page[12] = 0;
	mode_select10(a, page, 13, false, &r);
	itest_ok(itest_result_matches(&r, EXPECT_SENSE(5, 0x26, 0)), "MODE SELECT(10) Control PAGE LENGTH 0Bh -> 05/26/00",
		 "%s", itest_result_str(&r));

	/* Parameter list shorter than the mode parameter header. */
	{
		uint8_t buf[3] = { 0 };
		uint8_t cdb6[6] = { 0x15, 0x10, 0, 0, 3, 0 };
		itest_expect_cmd(a, 0, "MODE SELECT(6) PARAMETER LIST LENGTH 3 (header truncated) -> 05/1A/00", cdb6, 6,
				 ITEST_OUT, buf, 3, 0, EXPECT_SENSE(5, 0x1a, 0), NULL);
	}
	/* A page truncated by the parameter list length. */
	{
		uint8_t buf[16] = { 0 };
		uint8_t cdb10[10] = { 0x55, 0x10, 0, 0, 0, 0, 0, 0, 14, 0 };
		memcpy(buf + 8, cur, 6);
		buf[8] &= 0x7f;
		itest_expect_cmd(a, 0, "MODE SELECT(10) Control page cut short by PARAMETER LIST LENGTH -> 05/1A/00", cdb10,
				 10, ITEST_OUT, buf, 14, 0, EXPECT_SENSE(5, 0x1a, 0), NULL);
	}
	/* MODE SELECT with parameter list length 0 does nothing. */
	{
		uint8_t cdb10[10] = { 0x55, 0x10, 0, 0, 0, 0, 0, 0, 0, 0 };
		itest_expect_cmd(a, 0, "MODE SELECT(10) PARAMETER LIST LENGTH 0 -> GOOD", cdb10, 10, ITEST_NONE, NULL, 0, 0,
				 EXPECT_GOOD, NULL);
	}
	/* A page the device does not have. */
	{
		uint8_t buf[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0x3e, 0x02, 0, 0 };
		uint8_t cdb10[10] = { 0x55, 0x10, 0, 0, 0, 0, 0, 0, 12, 0 };
		itest_expect_cmd(a, 0, "MODE SELECT(10) with unsupported page 3Eh -> 05/26/00", cdb10, 10, ITEST_OUT, buf,
				 12, 0, EXPECT_SENSE(5, 0x26, 0), NULL);
	}
	itest_clear_ua(b, 0);
}

/* SP=1 saves the page; after a restart the saved value is the current one. */
static void test_saved_pages(void)
{
	uint8_t cur[64], page[64];
	int len = read_page(a, 0x0a, 0, cur, sizeof(cur));
	struct itest_result r;

	/* The device saves mode pages (SPC-4 7.5.1: PS = 1 in MODE SENSE; SP = 1 must be taken). */
	if (!itest_ok(len == 12 && (cur[0] & 0x80), "MODE SENSE(10) Control page: 12 bytes, PS = 1 (the page is savable)",
		      "len %d byte 0 = %02Xh", len, len > 0 ? cur[0] : 0))
		return;
	memcpy(page, cur, 12);
	page[2] |= 0x04;
	mode_select10(a, page, 12, true, &r);
	if (!itest_ok(itest_result_matches(&r, EXPECT_GOOD), "MODE SELECT(10) SP=1 Control D_SENSE=1 -> GOOD", "%s",
		      itest_result_str(&r)))
		return;
	len = read_page(a, 0x0a, 3, page, sizeof(page));
	itest_ok(len == 12 && (page[2] & 0x04), "MODE SENSE PC=saved after SP=1: D_SENSE = 1", "len %d byte 2 = %02Xh", len,
		 page[2]);
	itest_close(a);
	itest_close(b);
	a = b = NULL;
	itest_ok(itest_daemon_stop(&d, SIGTERM) == 0, "sbcemud exits 0 on SIGTERM", NULL);
	if (!itest_ok(itest_daemon_start(&d) == 0, "sbcemud restarts on the same state directory", NULL))
		return;
	a = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!a)
		return;
	itest_clear_ua(a, 0);
	len = read_page(a, 0x0a, 0, page, sizeof(page));
	itest_ok(len == 12 && (page[2] & 0x04), "after restart: saved D_SENSE = 1 is the current value",
		 "len %d byte 2 = %02Xh", len, page[2]);
	page[2] &= (uint8_t)~0x04;
	mode_select10(a, page, 12, true, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD), "MODE SELECT(10) SP=1 Control D_SENSE=0 -> GOOD", "%s",
		 itest_result_str(&r));
}

/* ---- mode page defaults (second daemon) ---- */

static struct itest_daemon d2;
static char out[16384];

static const char defaults_config[] = "[lun \"" ITEST_TARGET "\" 0]\n"
				      "path = @DIR@/lun0.img\nsize = 16M\nvolatile_write_cache = true\n"
				      "mode_defaults = wce=0 d_sense=1\n";

/* Bit mask of page code's byte at pc (0 current, 2 default, 3 saved), or -1. */
static int page_bits(struct iscsi_context *s, uint8_t code, int pc, int byte, int mask)
{
	uint8_t page[64];
	int len = read_page(s, code, pc, page, sizeof(page));

	return len > byte ? page[byte] & mask : -1;
}

static bool ctl(int want, const char *args, const char *name)
{
	return itest_ctl_expect(&d2, out, sizeof(out), want, args, name);
}

static void write_block(struct iscsi_context *s, uint32_t lba, uint8_t fill, struct itest_result *r)
{
	uint8_t cdb[10] = { 0x2a }, buf[512];

	memset(buf, fill, sizeof(buf));
	itest_put_be32(cdb + 2, lba);
	cdb[8] = 1;
	itest_cmd(s, 0, cdb, 10, ITEST_OUT, buf, sizeof(buf), 0, r);
}

static void test_defaults_at_start(struct iscsi_context *s)
{
	struct itest_result r;
	long long lost = -1;
	const char *p;

	itest_ok(page_bits(s, 0x08, 2, 2, 0x04) == 0 && page_bits(s, 0x08, 0, 2, 0x04) == 0,
		 "mode_defaults wce=0: Caching page WCE = 0 with PC = 10b (default) and 00b (current)", NULL);
	itest_ok(page_bits(s, 0x0a, 2, 2, 0x04) == 0x04 && sense_format(s) == 0x72,
		 "mode_defaults d_sense=1: Control page D_SENSE = 1 and a failing command's sense is descriptor format "
		 "(72h, SPC-4 7.5.8)",
		 NULL);
	write_block(s, 7, 0x5a, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD), "WCE = 0 with volatile_write_cache: WRITE(10) LBA 7 -> GOOD",
		 "%s", itest_result_str(&r));
	itest_result_free(&r);
	ctl(0, "--json power-cut", "sbcemuctl power-cut (WCE = 0) -> exit 0");
	p = strstr(out, "\"cache_bytes_lost\":");
	if (p)
		lost = strtoll(p + strlen("\"cache_bytes_lost\":"), NULL, 10);
	itest_ok(lost == 0, "WCE = 0: the power cut loses 0 bytes (SBC-4 6.5.5: writes reach the medium before status)",
		 "cache_bytes_lost %lld: %.200s", lost, out);
}

static void test_defaults_at_run_time(struct iscsi_context *s, struct iscsi_context *t)
{
	struct itest_result r;
	uint8_t page[64];
	int len;

	ctl(0, "--json lu mode-defaults 0 \"wce=1 swp=1\"", "sbcemuctl lu mode-defaults 0 \"wce=1 swp=1\" -> exit 0");
	itest_ok(strstr(out, "\"mode_defaults\": \"wce=1 d_sense=1 swp=1\"") && strstr(out, "\"current_changed\": true"),
		 "lu-mode-defaults merges with the configured defaults: \"wce=1 d_sense=1 swp=1\", current values changed",
		 "%.300s", out);
	expect_tur(s, "after lu-mode-defaults: first session's TEST UNIT READY -> 06/2A/01 MODE PARAMETERS CHANGED",
		   EXPECT_SENSE(6, 0x2a, 0x01));
	expect_tur(t, "after lu-mode-defaults: second session's TEST UNIT READY -> 06/2A/01 too (no nexus made the change)",
		   EXPECT_SENSE(6, 0x2a, 0x01));
	itest_ok(page_bits(s, 0x08, 2, 2, 0x04) == 0x04 && page_bits(s, 0x08, 0, 2, 0x04) == 0x04,
		 "wce=1: WCE = 1 with PC = 10b and 00b", NULL);
	itest_ok(page_bits(s, 0x0a, 0, 4, 0x08) == 0x08, "swp=1: Control page SWP = 1 (current)", NULL);
	write_block(s, 8, 0x11, &r);
	itest_ok(itest_result_matches(&r, EXPECT_SENSE(7, 0x27, 0)),
		 "SWP = 1: WRITE(10) -> DATA PROTECT, WRITE PROTECTED (07/27/00; SPC-4 7.5.8)", "%s", itest_result_str(&r));
	itest_result_free(&r);
	ctl(0, "--json lus", "sbcemuctl --json lus -> exit 0");
	itest_ok(strstr(out, "\"mode_defaults\": \"wce=1 d_sense=1 swp=1\"") != NULL,
		 "lus shows \"mode_defaults\": \"wce=1 d_sense=1 swp=1\"", "%.300s", out);
	ctl(0, "save", "sbcemuctl save -> exit 0");
	itest_ok(strstr(out, "mode_defaults = wce=1 d_sense=1 swp=1") != NULL,
		 "save writes mode_defaults = wce=1 d_sense=1 swp=1", "%.200s", strstr(out, "[lun") ? strstr(out, "[lun") : out);

	ctl(0, "lu mode-defaults 0 '' --replace", "sbcemuctl lu mode-defaults 0 '' --replace -> exit 0");
	itest_clear_ua(s, 0);
	itest_clear_ua(t, 0);
	itest_ok(page_bits(s, 0x08, 2, 2, 0x04) == 0x04 && page_bits(s, 0x0a, 0, 2, 0x04) == 0 &&
			 page_bits(s, 0x0a, 0, 4, 0x08) == 0,
		 "--replace with no fields: the device's own defaults again (WCE 1, D_SENSE 0, SWP 0)", NULL);
	write_block(s, 8, 0x11, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD), "SWP back to 0: WRITE(10) -> GOOD", "%s", itest_result_str(&r));
	itest_result_free(&r);

	/* Saved values no longer follow the defaults once MODE SELECT saved them (SPC-4 7.5.1). */
	len = read_page(s, 0x08, 0, page, sizeof(page));
	if (!itest_ok(len == 20, "MODE SENSE Caching page -> 20 bytes", "len %d", len))
		return;
	page[2] &= (uint8_t)~0x04;
	mode_select10(s, page, len, true, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD), "MODE SELECT(10) SP=1 Caching WCE=0 -> GOOD", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	ctl(0, "lu mode-defaults 0 wce=1", "sbcemuctl lu mode-defaults 0 wce=1 (after WCE=0 saved) -> exit 0");
	itest_clear_ua(s, 0);
	itest_ok(page_bits(s, 0x08, 2, 2, 0x04) == 0x04 && page_bits(s, 0x08, 3, 2, 0x04) == 0,
		 "defaults WCE 1, saved WCE 0 (saved pages do not follow the defaults)", NULL);
	ctl(0, "power-cut", "sbcemuctl power-cut -> exit 0");
}

static void test_defaults_refused(void)
{
	ctl(1, "lu mode-defaults 0 wce=5", "lu mode-defaults 0 wce=5 -> exit 1 (wce takes 0 to 1)");
	ctl(1, "lu mode-defaults 0 qerr=1", "lu mode-defaults 0 qerr=1 -> exit 1 (not a field the device acts on)");
	ctl(1, "lu mode-defaults 9 wce=0", "lu mode-defaults 9 wce=0 -> exit 1 (no LUN 9)");
	ctl(0, "--json lus", "sbcemuctl --json lus -> exit 0");
	itest_ok(strstr(out, "\"mode_defaults\": \"wce=1\"") != NULL, "after the refusals the defaults are still \"wce=1\"",
		 "%.300s", out);
}

static void test_mode_defaults(void)
{
	struct iscsi_context *s, *t;

	itest_daemon_init(&d2, "mode-defaults");
	if (!itest_ok(itest_daemon_write_config(&d2, defaults_config) == 0 && itest_daemon_start(&d2) == 0,
		      "second sbcemud (mode_defaults = wce=0 d_sense=1) starts", NULL))
		return;
	s = itest_session(&d2, ITEST_INITIATOR_1, 0);
	if (s) {
		itest_clear_ua(s, 0);
		test_defaults_at_start(s);
		itest_close(s);
	}
	s = itest_session(&d2, ITEST_INITIATOR_1, 0);
	t = itest_session(&d2, ITEST_INITIATOR_2, 0);
	if (s && t) {
		itest_clear_ua(s, 0);
		itest_clear_ua(t, 0);
		test_defaults_at_run_time(s, t);
	}
	if (s)
		itest_close(s);
	if (t)
		itest_close(t);
	s = itest_session(&d2, ITEST_INITIATOR_1, 0);
	if (s) {
		itest_clear_ua(s, 0);
		itest_ok(page_bits(s, 0x08, 0, 2, 0x04) == 0, "after the power cut: current WCE = 0, the saved value", NULL);
		itest_close(s);
	}
	test_defaults_refused();
	itest_ok(itest_daemon_alive(&d2), "second sbcemud still running", NULL);
	itest_daemon_cleanup(&d2);
}

int main(int argc, char **argv)
{
	itest_init(argc, argv, "test_mode: MODE SENSE / MODE SELECT, MODE PARAMETERS CHANGED");
	itest_daemon_up(&d, "mode", itest_default_config);
	a = itest_session(&d, ITEST_INITIATOR_1, 0);
	b = itest_session(&d, ITEST_INITIATOR_2, 0);
	if (!a || !b)
		return itest_finish();
	itest_clear_ua(a, 0);
	itest_clear_ua(b, 0);

	test_mode_sense_all();
	test_mode_select();
	test_saved_pages();
	test_mode_defaults();

	itest_close(a);
	itest_close(b);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
