/*
 * LOG SENSE / LOG SELECT (SPC-4 6.5, 6.6, 7.3) as host tools drive them:
 * sg_logs -a (every page of the Supported Log Pages list, each read twice:
 * a 4-byte probe, then the whole page), smartctl (PC = 01b, 00h/FFh,
 * RSOC for 4Dh), cdladm (05/24/00 for a page the device lacks); the
 * counters against the commands that moved them; LOG SELECT resets and
 * saved parameters across a restart of the daemon; the Logical Block
 * Provisioning page against WRITE and UNMAP; profiles.
 *
 * Environment: SBCEMUCTL (the sbcemuctl binary; CMake sets it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"

static const char config[] =
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\nsize = 16M\n"
	"[lun \"" ITEST_TARGET "\" 1]\n"
	"path = @DIR@/lun1.img\nsize = 16M\nprofile = sbc4-minimal\n";

static struct itest_daemon d;
static struct iscsi_context *s;

static void log_sense(int lun, uint8_t byte1, uint8_t pc_page, uint8_t sub, uint16_t pointer, uint16_t alloc,
		      struct itest_result *r)
{
	uint8_t cdb[10] = { 0x4d, byte1, pc_page, sub, 0, (uint8_t)(pointer >> 8), (uint8_t)pointer,
			    (uint8_t)(alloc >> 8), (uint8_t)alloc, 0 };
	itest_cmd(s, lun, cdb, 10, ITEST_IN, NULL, 0, alloc, r);
}

static bool log_select(uint8_t byte1, uint8_t pc_page, uint8_t sub, const uint8_t *list, uint16_t len, const char *name,
		       struct itest_expect e, struct itest_result *r)
{
	uint8_t cdb[10] = { 0x4c, byte1, pc_page, sub, 0, 0, 0, (uint8_t)(len >> 8), (uint8_t)len, 0 };
	return itest_expect_cmd(s, 0, name, cdb, 10, len ? ITEST_OUT : ITEST_NONE, list, len, 0, e, r);
}

/* The value of counter parameter code of page (PC = 01b), or -1. */
static long long counter(uint8_t page, uint16_t code)
{
	struct itest_result r;
	long long v = -1;

	log_sense(0, 0, 0x40 | page, 0, 0, 1024, &r);
	if (r.status == 0 && r.data_len >= 4) {
		int end = 4 + itest_get_be16(r.data + 2);

		for (int off = 4; off + 4 <= end && off + 4 <= r.data_len; off += 4 + r.data[off + 3]) {
			if (itest_get_be16(r.data + off) == code && r.data[off + 3] == 8 && off + 12 <= r.data_len)
				v = (long long)itest_get_be64(r.data + off + 4);
		}
	}
	itest_result_free(&r);
	return v;
}

static struct itest_expect check(int key, int asc, int ascq)
{
	return (struct itest_expect){ 2, key, asc, ascq };
}

/* sg_logs -a: 00h, then each page listed, probe of 4 then the whole page; all GOOD, the page code echoed. */
static void test_every_page(void)
{
	struct itest_result r, probe, page;
	bool all = true;
	char bad[128] = "";

	log_sense(0, 0, 0x40, 0, 0, 4, &probe);
	itest_ok(probe.status == 0 && probe.data_len == 4,
		 "LOG SENSE 00h allocation length 4 (sg_logs' probe): GOOD, exactly 4 bytes (SPC-4 4.2.5.6)", "%s, %d bytes",
		 itest_result_str(&probe), probe.data_len);
	log_sense(0, 0, 0x40, 0, 0, 255, &r);
	itest_ok(r.status == 0 && r.data_len > 4 && r.data[0] == 0 && r.data[4] == 0 &&
			 (probe.data_len < 4 || itest_get_be16(probe.data + 2) == itest_get_be16(r.data + 2)),
		 "LOG SENSE 00h Supported Log Pages: 00h first, the probe's PAGE LENGTH (SPC-4 7.3.18)", "%s",
		 itest_result_str(&r));
	itest_result_free(&probe);
	for (int i = 4; r.status == 0 && i < r.data_len; i++) {
		uint8_t pg = r.data[i];

		log_sense(0, 0, 0x40 | pg, 0, 0, 4, &probe);
		log_sense(0, 0, 0x40 | pg, 0, 0,
			  probe.data_len == 4 ? (uint16_t)(itest_get_be16(probe.data + 2) + 4) : 4096, &page);
		if (probe.status != 0 || probe.data_len != 4 || page.status != 0 || (page.data[0] & 0x3f) != pg ||
		    itest_get_be16(page.data + 2) == 0 || page.data_len != 4 + itest_get_be16(page.data + 2)) {
			all = false;
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), " %02xh(%s)", pg, itest_result_str(&page));
		}
		itest_result_free(&probe);
		itest_result_free(&page);
	}
	itest_ok(all, "every page of the Supported Log Pages page is served whole, its code echoed, length not 0",
		 "bad:%s", bad);
	itest_result_free(&r);

	/* smartctl: 00h/FFh single fetch of 16124 bytes; SPF = 1, FFh, pairs */
	log_sense(0, 0, 0x40, 0xff, 0, 16124, &r);
	itest_ok(r.status == 0 && r.data_len >= 8 && r.data[0] == 0x40 && r.data[1] == 0xff && r.data[4] == 0 &&
			 r.data[5] == 0 && r.data[6] == 0 && r.data[7] == 0xff,
		 "LOG SENSE 00h/FFh: SPF = 1, SUBPAGE FFh, (00h,00h) (00h,FFh) first (SPC-4 7.3.18)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	/* smartctl -x and smartd need these with these exact shapes */
	log_sense(0, 0, 0x40 | 0x10, 0, 0, 0x194, &r);
	itest_ok(r.status == 0 && r.data[0] == 0x10 && itest_get_be16(r.data + 2) == 0x190,
		 "LOG SENSE 10h: byte 0 exactly 10h, PAGE LENGTH 0190h (20 self-test results, SPC-4 7.3.17)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	log_sense(0, 0, 0x40 | 0x0d, 0, 0, 252, &r);
	itest_ok(r.status == 0 && r.data_len == 16 && itest_get_be16(r.data + 4) == 0 && itest_get_be16(r.data + 10) == 1 &&
			 r.data[9] == 30 && r.data[15] == 70,
		 "LOG SENSE 0Dh: 0000h temperature (byte 9), 0001h reference temperature (byte 15) (SPC-4 7.3.21)",
		 "%s", itest_result_str(&r));
	itest_result_free(&r);
}

/* Exact sense for what the LU lacks or a field it refuses. */
static void test_errors(void)
{
	struct itest_result r;

	log_sense(0, 0, 0x40 | 0x30, 0, 0, 255, &r);
	itest_ok(itest_result_matches(&r, check(5, 0x24, 0)), "LOG SENSE of page 30h -> 05/24/00 (SPC-4 6.6)", "%s",
		 itest_result_str(&r));
	itest_expect_field_pointer("... field pointer on PAGE CODE (byte 2 bit 5)", &r, 1, 2, 5);
	itest_result_free(&r);
	log_sense(0, 0, 0x40 | 0x19, 0x21, 0, 2048, &r);
	itest_ok(itest_result_matches(&r, check(5, 0x24, 0)),
		 "LOG SENSE 19h/21h on an LU without command duration limits -> 05/24/00 (what cdladm accepts)", "%s",
		 itest_result_str(&r));
	itest_expect_field_pointer("... field pointer on SUBPAGE CODE (byte 3)", &r, 1, 3, 7);
	itest_result_free(&r);
	log_sense(0, 0, 0x40 | 0x03, 0, 7, 255, &r);
	itest_ok(itest_result_matches(&r, check(5, 0x24, 0)),
		 "LOG SENSE 03h PARAMETER POINTER 7 (past 0006h) -> 05/24/00 (SPC-4 6.6)", "%s", itest_result_str(&r));
	itest_expect_field_pointer("... field pointer on PARAMETER POINTER (byte 5)", &r, 1, 5, 7);
	itest_result_free(&r);
	log_sense(0, 0, 0x40 | 0x03, 0, 5, 255, &r);
	itest_ok(r.status == 0 && itest_get_be16(r.data + 2) == 24 && itest_get_be16(r.data + 4) == 5,
		 "LOG SENSE 03h PARAMETER POINTER 5: parameters 0005h and 0006h only (SPC-4 6.6)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	{
		uint8_t list[16] = { 0x03, 0, 0, 12, 0, 6, 0, 8 };

		log_select(0x02, 0x40, 0, list, 16, "LOG SELECT PCR = 1 with a parameter list -> 05/24/00 (SPC-4 6.5)",
			   check(5, 0x24, 0), &r);
		itest_expect_field_pointer("... field pointer on PCR (byte 1 bit 1)", &r, 1, 1, 1);
		itest_result_free(&r);
		log_select(0, 0x40 | 0x03, 0, list, 16,
			   "LOG SELECT with a parameter list and PAGE CODE 03h in the CDB -> 05/24/00 (SPC-4 6.5)",
			   check(5, 0x24, 0), NULL);
		list[0] = 0x10;
		log_select(0, 0x40, 0, list, 16,
			   "LOG SELECT of the Self-Test Results page (nothing settable) -> 05/26/00 (SPC-4 6.5)",
			   check(5, 0x26, 0), NULL);
	}
}

/* Counters count what the LU did: a medium-error rule's READ, a GOOD READ's bytes, a VERIFY. */
static void test_counters(void)
{
	uint8_t buf[8 * 512];
	uint8_t read16[16] = { 0x88, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 1, 0, 0 };
	long long before_unc = counter(0x03, 6), before_bytes = counter(0x03, 5), before_w = counter(0x02, 5);
	char out[256];

	itest_ctl(&d, out, sizeof(out), "fault add 0 medium-error --lba 10-10");
	itest_expect_cmd(s, 0, "READ(16) of a medium-error block -> 03/11/00", read16, 16, ITEST_IN, NULL, 0, 512,
			 check(3, 0x11, 0), NULL);
	itest_ok(counter(0x03, 6) == before_unc + 1,
		 "Read Error Counter 0006h (total uncorrected errors) counts that READ (SPC-4 7.3.16)", "%lld -> %lld",
		 before_unc, counter(0x03, 6));
	itest_read16(s, 0, 100, buf, 8, 512, "READ(16) of 8 good blocks");
	itest_ok(counter(0x03, 5) == before_bytes + 8 * 512,
		 "Read Error Counter 0005h (total bytes processed) moves by the 4096 bytes read", "%lld -> %lld",
		 before_bytes, counter(0x03, 5));
	memset(buf, 0xa5, sizeof(buf));
	itest_write16(s, 0, 200, buf, 2, 512, false, "WRITE(16) of 2 blocks");
	itest_ok(counter(0x02, 5) == before_w + 2 * 512,
		 "Write Error Counter 0005h moves by the 1024 bytes written (SPC-4 7.3.22)", "%lld -> %lld", before_w,
		 counter(0x02, 5));
	/* LOG SELECT PCR = 1, no list: every cumulative value back to its default (SPC-4 table 147) */
	log_select(0x02, 0, 0, NULL, 0, "LOG SELECT PCR = 1 without a list: GOOD", EXPECT_GOOD, NULL);
	itest_ok(counter(0x03, 6) == 0 && counter(0x03, 5) == 0 && counter(0x02, 5) == 0,
		 "... the error counters read 0 after the reset", "0006h %lld", counter(0x03, 6));
	itest_ctl(&d, out, sizeof(out), "fault remove all");
}

/* Logical Block Provisioning (0Ch): the RESOURCE COUNT of parameter code (PARAMETER LENGTH 08h, SCOPE 01b), or -1. */
static long long lbp_count(uint16_t code)
{
	struct itest_result r;
	long long v = -1;

	log_sense(0, 0, 0x40 | 0x0c, 0, 0, 255, &r);
	if (r.status == 0 && r.data_len >= 4 && r.data[0] == 0x8c) {
		int end = 4 + itest_get_be16(r.data + 2);

		for (int off = 4; off + 12 <= end && off + 12 <= r.data_len; off += 4 + r.data[off + 3]) {
			if (itest_get_be16(r.data + off) == code && r.data[off + 2] == 0x03 && r.data[off + 3] == 8 &&
			    (r.data[off + 8] & 3) == 1)
				v = code == 3 ? itest_get_be16(r.data + off + 4) : itest_get_be32(r.data + off + 4);
		}
	}
	itest_result_free(&r);
	return v;
}

/* SBC-4 6.4.5: the page decodes on a thin LU, and its counts follow WRITE and UNMAP (the sparse file's blocks). */
static void test_lbp(void)
{
	enum { LBA = 20000, N = 64, CAPACITY = 16 * 1024 * 1024 / 512 };
	uint8_t buf[N * 512];
	uint8_t unmap[10] = { 0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0 };
	uint8_t list[24] = { 0, 22, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (uint8_t)(LBA >> 8), (uint8_t)LBA, 0, 0, 0, N };
	struct itest_result r;
	long long used0, avail0, used1, used2;

	log_sense(0, 0, 0x40 | 0x0c, 0, 0, 255, &r);
	itest_ok(r.status == 0 && r.data_len == 40 && r.data[0] == 0x8c && r.data[1] == 0 &&
			 itest_get_be16(r.data + 2) == 36 && itest_get_be16(r.data + 4) == 1 &&
			 itest_get_be16(r.data + 16) == 2 && itest_get_be16(r.data + 28) == 3,
		 "LOG SENSE 0Ch: DS = 1, SPF = 0, 0001h 0002h 0003h of 12 bytes each (SBC-4 6.4.5)", "%s, %d bytes",
		 itest_result_str(&r), r.data_len);
	itest_result_free(&r);
	used0 = lbp_count(2);
	avail0 = lbp_count(1);
	itest_ok(used0 >= 0 && avail0 >= 0 && used0 + avail0 == CAPACITY && lbp_count(3) == avail0 * 100 / CAPACITY,
		 "0Ch: available + used = the capacity, percentage = available / capacity (binary list, SCOPE 01b)",
		 "used %lld available %lld", used0, avail0);
	memset(buf, 0x3c, sizeof(buf));
	itest_write16(s, 0, LBA, buf, N, 512, false, "WRITE(16) of 64 unmapped blocks");
	used1 = lbp_count(2);
	itest_ok(used1 >= used0 + N && lbp_count(1) == CAPACITY - used1,
		 "0Ch Used LBA Mapping Resource Count rises by the 64 blocks written, Available falls", "%lld -> %lld",
		 used0, used1);
	itest_cmd(s, 0, unmap, 10, ITEST_OUT, list, sizeof(list), 0, &r);
	itest_ok(r.status == 0, "UNMAP of them: GOOD", "%s", itest_result_str(&r));
	itest_result_free(&r);
	used2 = lbp_count(2);
	itest_ok(used2 == used0 && lbp_count(1) == avail0,
		 "0Ch after UNMAP: the counts are back where they were (the blocks deallocated)", "%lld -> %lld -> %lld",
		 used0, used1, used2);
	/* SBC-4 6.4.5: Never resettable */
	log_select(0x02, 0, 0, NULL, 0, "LOG SELECT PCR = 1: GOOD", EXPECT_GOOD, NULL);
	itest_ok(lbp_count(2) == used0, "0Ch after LOG SELECT PCR = 1: unchanged (its parameters are never reset)",
		 "%lld", lbp_count(2));
}

/* SP = 1 saves the log parameters; a restart of the daemon finds them (SPC-4 6.5, 6.6). */
static void test_saved(void)
{
	uint8_t list[16] = { 0x03, 0, 0, 12, 0, 6, 0, 8, 0, 0, 0, 0, 0, 0, 0, 42 };

	log_select(0x01, 0x40, 0, list, 16, "LOG SELECT SP = 1 sets Read Error Counter 0006h to 42: GOOD", EXPECT_GOOD,
		   NULL);
	itest_ok(counter(0x03, 6) == 42, "... LOG SENSE reads 42", "%lld", counter(0x03, 6));
	itest_close(s);
	itest_daemon_stop(&d, 15);
	if (itest_daemon_start(&d) != 0) {
		itest_ok(false, "daemon restarts", "no");
		return;
	}
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s)
		return;
	itest_ok(counter(0x03, 6) == 42, "after a restart the saved counter is still 42", "%lld", counter(0x03, 6));
}

/* smartctl: RSOC one-command for LOG SENSE with CDB usage of byte 3 (subpages) non-zero; sbc4-minimal has no log pages. */
static void test_rsoc_and_profiles(void)
{
	uint8_t rsoc[12] = { 0xa3, 0x0c, 0x01, 0x4d, 0, 0, 0, 0, 0, 64, 0, 0 };
	uint8_t ls[10] = { 0x4d, 0, 0x40, 0, 0, 0, 0, 0, 255, 0 };
	struct itest_result r;
	struct iscsi_context *m;

	itest_cmd(s, 0, rsoc, 12, ITEST_IN, NULL, 0, 64, &r);
	itest_ok(r.status == 0 && r.data_len >= 8 && (r.data[1] & 7) == 3 && r.data[4 + 3] != 0,
		 "RSOC one-command LOG SENSE: supported, CDB USAGE DATA byte 3 (SUBPAGE CODE) not 0 (smartctl)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	m = itest_session(&d, ITEST_INITIATOR_2, 1);
	if (!m)
		return;
	itest_expect_cmd(m, 1, "sbc4-minimal profile: LOG SENSE -> 05/20/00 (not in the minimal command set)", ls, 10,
			 ITEST_IN, NULL, 0, 255, check(5, 0x20, 0), NULL);
	itest_close(m);
}

int main(int argc, char **argv)
{
	itest_init(argc, argv, "test_log_pages");
	itest_daemon_up(&d, "log-pages", config);
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (s) {
		test_every_page();
		test_errors();
		test_counters();
		test_lbp();
		test_rsoc_and_profiles();
		test_saved();
	}
	itest_close(s);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
