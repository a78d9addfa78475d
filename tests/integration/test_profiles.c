/*
 * Device profiles (docs/profiles.md) seen by an iSCSI initiator: what each
 * profile claims and answers, each usb-bridge quirk on its own, and the
 * card reader's medium ejected and inserted at run time (sbcemuctl lu state)
 * with PREVENT ALLOW MEDIUM REMOVAL honoured.
 *
 * Environment: SBCEMUCTL (the sbcemuctl binary; CMake sets it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

#define BLOCKS (16u * 1024 * 1024 / 512)

enum { LUN_PLAIN, LUN_MINIMAL, LUN_BRIDGE, LUN_TRUNCATED, LUN_CARD, LUN_READ_ONLY };

static const char config[] =
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\nsize = 16M\n"
	"[lun \"" ITEST_TARGET "\" 1]\n"
	"path = @DIR@/lun1.img\nsize = 16M\nprofile = sbc4-minimal\n"
	"[lun \"" ITEST_TARGET "\" 2]\n"
	"path = @DIR@/lun2.img\nsize = 16M\nprofile = usb-bridge\n"
	"[lun \"" ITEST_TARGET "\" 3]\n"
	"path = @DIR@/lun3.img\nsize = 16M\nprofile = usb-bridge\nquirks = vpd-truncated\n"
	"[lun \"" ITEST_TARGET "\" 4]\n"
	"path = @DIR@/lun4.img\nsize = 16M\nprofile = card-reader\nproduct_type = mmc\n"
	"[lun \"" ITEST_TARGET "\" 5]\n"
	"path = @DIR@/lun5.img\nsize = 16M\nprofile = read-only\n";

static struct itest_daemon d;
static struct iscsi_context *s;

static void cmd(int lun, const uint8_t *cdb, int len, enum itest_dir dir, size_t in_len, struct itest_result *r)
{
	static uint8_t out[4096];

	itest_cmd(s, lun, cdb, len, dir, dir == ITEST_OUT ? out : NULL, dir == ITEST_OUT ? in_len : 0,
		  dir == ITEST_IN ? in_len : 0, r);
}

static bool expect(int lun, const char *name, const uint8_t *cdb, int len, enum itest_dir dir, size_t n,
		   struct itest_expect e)
{
	static uint8_t out[4096];

	return itest_expect_cmd(s, lun, name, cdb, len, dir, dir == ITEST_OUT ? out : NULL, dir == ITEST_OUT ? n : 0,
				dir == ITEST_IN ? n : 0, e, NULL);
}

static const uint8_t read_capacity_16[16] = { 0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0 };
static const uint8_t read_capacity_10[10] = { 0x25 };
static const uint8_t mode_sense_6[6] = { 0x1a, 0x08, 0x3f, 0, 0xff, 0 };
static const uint8_t mode_sense_10[10] = { 0x5a, 0x08, 0x3f, 0, 0, 0, 0, 0x01, 0x00, 0 };
static const uint8_t sync_cache_10[10] = { 0x35 };
static const uint8_t rsoc_all[12] = { 0xa3, 0x0c, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0 };
static const uint8_t test_unit_ready[6] = { 0 };
static const uint8_t log_sense[10] = { 0x4d, 0, 0x40, 0, 0, 0, 0, 0, 255, 0 };
static const uint8_t log_select_pcr[10] = { 0x4c, 0x02 };
static const uint8_t send_diagnostic[6] = { 0x1d, 0x04 }; /* SELFTEST = 1: the default self-test */
static const uint8_t receive_diagnostic[6] = { 0x1c, 0, 0, 0, 255, 0 };
static uint8_t rsoc_one[12] = { 0xa3, 0x0c, 0x01, 0, 0, 0, 0, 0, 0, 64, 0, 0 };

static void inquiry_vpd(int lun, uint8_t page, struct itest_result *r)
{
	uint8_t cdb[6] = { 0x12, 0x01, page, 0x01, 0x00, 0 };
	cmd(lun, cdb, 6, ITEST_IN, 256, r);
}

/* ---- sbc4-minimal ---- */

static void test_minimal(void)
{
	static const uint8_t unmap[10] = { 0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0 };
	static const uint8_t start_stop[6] = { 0x1b, 0, 0, 0, 0x01, 0 };
	static const uint8_t minimal[][2] = { /* opcode, service action */
		{ 0x00, 0 }, { 0x03, 0 }, { 0x12, 0 }, { 0x25, 0 }, { 0x28, 0 }, { 0x2a, 0 }, { 0x35, 0 },
		{ 0x88, 0 }, { 0x8a, 0 }, { 0x91, 0 }, { 0x9e, 0x10 }, { 0xa0, 0 }, { 0xa3, 0x0c },
	};
	struct itest_result r;
	bool all_minimal = true;
	int n = 0;

	cmd(LUN_MINIMAL, rsoc_all, 12, ITEST_IN, 4096, &r);
	if (itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.data_len >= 4,
		     "sbc4-minimal: REPORT SUPPORTED OPERATION CODES (all) -> GOOD", "%s", itest_result_str(&r))) {
		for (int off = 4; off + 8 <= r.data_len; off += 8, n++) {
			bool found = false;
			for (size_t i = 0; i < sizeof(minimal) / sizeof(minimal[0]); i++)
				found |= r.data[off] == minimal[i][0] && itest_get_be16(r.data + off + 2) == minimal[i][1];
			if (!found) {
				all_minimal = false;
				itest_note("listed: %02x/%04x", r.data[off], itest_get_be16(r.data + off + 2));
			}
		}
		itest_ok(all_minimal && n == (int)(sizeof(minimal) / sizeof(minimal[0])),
			 "sbc4-minimal: RSOC lists exactly the 13 commands of the minimal set", "%d listed", n);
	}
	itest_result_free(&r);
	expect(LUN_MINIMAL, "sbc4-minimal: MODE SENSE(6) -> 05/20/00 INVALID COMMAND OPERATION CODE", mode_sense_6, 6,
	       ITEST_IN, 255, EXPECT_SENSE(5, 0x20, 0x00));
	expect(LUN_MINIMAL, "sbc4-minimal: UNMAP -> 05/20/00", unmap, 10, ITEST_OUT, 24, EXPECT_SENSE(5, 0x20, 0x00));
	expect(LUN_MINIMAL, "sbc4-minimal: START STOP UNIT -> 05/20/00", start_stop, 6, ITEST_NONE, 0,
	       EXPECT_SENSE(5, 0x20, 0x00));
	expect(LUN_MINIMAL, "sbc4-minimal: LOG SENSE -> 05/20/00", log_sense, 10, ITEST_IN, 255,
	       EXPECT_SENSE(5, 0x20, 0x00));
	expect(LUN_MINIMAL, "sbc4-minimal: SEND DIAGNOSTIC -> 05/20/00", send_diagnostic, 6, ITEST_NONE, 0,
	       EXPECT_SENSE(5, 0x20, 0x00));
	expect(LUN_PLAIN, "no profile: MODE SENSE(6) -> GOOD", mode_sense_6, 6, ITEST_IN, 255, EXPECT_GOOD);
	expect(LUN_PLAIN, "no profile: LOG SENSE -> GOOD", log_sense, 10, ITEST_IN, 255, EXPECT_GOOD);

	inquiry_vpd(LUN_MINIMAL, 0x00, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.data_len == 6 && itest_get_be16(r.data + 2) == 2 &&
			 r.data[4] == 0x00 && r.data[5] == 0x83,
		 "sbc4-minimal: Supported VPD Pages lists 00h and 83h only (SPC-4 7.8: the mandatory pages)", "%s, %d bytes",
		 itest_result_str(&r), r.data_len);
	itest_result_free(&r);
	inquiry_vpd(LUN_MINIMAL, 0xb0, &r);
	itest_ok(itest_result_matches(&r, EXPECT_SENSE(5, 0x24, 0x00)),
		 "sbc4-minimal: INQUIRY VPD B0h (Block Limits) -> 05/24/00 INVALID FIELD IN CDB", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	cmd(LUN_MINIMAL, read_capacity_16, 16, ITEST_IN, 32, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.data_len >= 16 && !(r.data[14] & 0x80),
		 "sbc4-minimal: READ CAPACITY(16) -> GOOD, LBPME = 0 (no UNMAP)", "%s", itest_result_str(&r));
	itest_result_free(&r);
}

/* ---- usb-bridge ---- */

static void test_usb_bridge(void)
{
	static const uint8_t inquiry_std[6] = { 0x12, 0, 0, 0, 0xff, 0 };
	uint8_t read_last[10] = { 0x28 };
	struct itest_result r;

	expect(LUN_BRIDGE, "usb-bridge no-read-capacity-16: READ CAPACITY(16) -> 05/20/00", read_capacity_16, 16,
	       ITEST_IN, 32, EXPECT_SENSE(5, 0x20, 0x00));
	cmd(LUN_BRIDGE, read_capacity_10, 10, ITEST_IN, 8, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.data_len == 8 && itest_get_be32(r.data) == BLOCKS,
		 "usb-bridge fix-capacity: READ CAPACITY(10) RETURNED LOGICAL BLOCK ADDRESS = the block count (one too many)",
		 "%s, %u", itest_result_str(&r), r.data_len == 8 ? itest_get_be32(r.data) : 0);
	itest_result_free(&r);
	itest_put_be32(read_last + 2, BLOCKS);
	read_last[8] = 1;
	expect(LUN_BRIDGE, "usb-bridge fix-capacity: READ(10) of that claimed last LBA -> 05/21/00", read_last, 10,
	       ITEST_IN, 512, EXPECT_SENSE(5, 0x21, 0x00));
	inquiry_vpd(LUN_BRIDGE, 0x00, &r);
	itest_ok(itest_result_matches(&r, EXPECT_SENSE(5, 0x24, 0x00)),
		 "usb-bridge no-vpd: INQUIRY EVPD=1 page 00h -> 05/24/00", "%s", itest_result_str(&r));
	itest_result_free(&r);
	expect(LUN_BRIDGE, "usb-bridge no-mode-sense-10: MODE SENSE(10) -> 05/20/00", mode_sense_10, 10, ITEST_IN, 256,
	       EXPECT_SENSE(5, 0x20, 0x00));
	expect(LUN_BRIDGE, "usb-bridge: MODE SENSE(6) still -> GOOD", mode_sense_6, 6, ITEST_IN, 255, EXPECT_GOOD);
	expect(LUN_BRIDGE, "usb-bridge no-sync-cache: SYNCHRONIZE CACHE(10) -> 05/20/00", sync_cache_10, 10,
	       ITEST_NONE, 0, EXPECT_SENSE(5, 0x20, 0x00));
	expect(LUN_BRIDGE, "usb-bridge no-rsoc: REPORT SUPPORTED OPERATION CODES -> 05/20/00", rsoc_all, 12, ITEST_IN,
	       4096, EXPECT_SENSE(5, 0x20, 0x00));

	cmd(LUN_BRIDGE, inquiry_std, 6, ITEST_IN, 255, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.data_len < 255 && r.residual_kind == 0,
		 "usb-bridge no-residual: INQUIRY (ALLOCATION LENGTH 255) sends fewer bytes and reports no underflow",
		 "%s, %d bytes, residual kind %d", itest_result_str(&r), r.data_len, r.residual_kind);
	itest_result_free(&r);
	cmd(LUN_TRUNCATED, inquiry_std, 6, ITEST_IN, 255, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.residual_kind == 1 &&
			 r.residual == (size_t)(255 - r.data_len),
		 "usb-bridge quirks = vpd-truncated only: INQUIRY reports its underflow (RFC 7143 11.4.5.2)",
		 "%s, %d bytes, residual kind %d %zu", itest_result_str(&r), r.data_len, r.residual_kind, r.residual);
	itest_result_free(&r);
	inquiry_vpd(LUN_TRUNCATED, 0x83, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.data_len == 8 && itest_get_be16(r.data + 2) > 4,
		 "usb-bridge vpd-truncated: VPD 83h stops after 8 bytes, PAGE LENGTH still the whole page's",
		 "%s, %d bytes", itest_result_str(&r), r.data_len);
	itest_result_free(&r);
	expect(LUN_TRUNCATED, "usb-bridge quirks = vpd-truncated only: READ CAPACITY(16) -> GOOD", read_capacity_16, 16,
	       ITEST_IN, 32, EXPECT_GOOD);

	/* A bridge without SAT translation (every quirk on) lacks the logging and diagnostic commands. */
	expect(LUN_BRIDGE, "usb-bridge (quirks = all, no SAT): LOG SENSE -> 05/20/00", log_sense, 10, ITEST_IN, 255,
	       EXPECT_SENSE(5, 0x20, 0x00));
	expect(LUN_BRIDGE, "usb-bridge (quirks = all, no SAT): LOG SELECT -> 05/20/00", log_select_pcr, 10, ITEST_NONE,
	       0, EXPECT_SENSE(5, 0x20, 0x00));
	expect(LUN_BRIDGE, "usb-bridge (quirks = all, no SAT): SEND DIAGNOSTIC -> 05/20/00", send_diagnostic, 6,
	       ITEST_NONE, 0, EXPECT_SENSE(5, 0x20, 0x00));
	expect(LUN_BRIDGE, "usb-bridge (quirks = all, no SAT): RECEIVE DIAGNOSTIC RESULTS -> 05/20/00",
	       receive_diagnostic, 6, ITEST_IN, 255, EXPECT_SENSE(5, 0x20, 0x00));
	expect(LUN_TRUNCATED, "usb-bridge quirks = vpd-truncated only (a SAT bridge): LOG SENSE -> GOOD", log_sense, 10,
	       ITEST_IN, 255, EXPECT_GOOD);
	rsoc_one[3] = 0x4d;
	cmd(LUN_TRUNCATED, rsoc_one, 12, ITEST_IN, 64, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.data_len >= 2 && (r.data[1] & 7) == 3,
		 "usb-bridge quirks = vpd-truncated only: RSOC lists LOG SENSE as supported (SUPPORT 011b)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
}

/* ---- card-reader ---- */

static int ctl(const char *args)
{
	return itest_ctl(&d, NULL, 0, "%s", args);
}

static void test_card_reader(void)
{
	static const uint8_t inquiry_std[6] = { 0x12, 0, 0, 0, 0x24, 0 };
	static const uint8_t prevent[6] = { 0x1e, 0, 0, 0, 0x01, 0 };
	static const uint8_t allow[6] = { 0x1e, 0, 0, 0, 0x00, 0 };
	static const uint8_t eject[6] = { 0x1b, 0, 0, 0, 0x02, 0 };
	struct itest_result r;

	cmd(LUN_CARD, inquiry_std, 6, ITEST_IN, 36, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.data_len >= 2 && (r.data[1] & 0x80),
		 "card-reader: INQUIRY RMB = 1 (removable medium)", "%s", itest_result_str(&r));
	itest_result_free(&r);
	inquiry_vpd(LUN_CARD, 0xb1, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.data_len > 6 && r.data[6] == 0x04,
		 "card-reader product_type = mmc: Block Device Characteristics PRODUCT TYPE = 04h (MultiMediaCard)",
		 "%s, byte 6 = %02x", itest_result_str(&r), r.data_len > 6 ? r.data[6] : 0xff);
	itest_result_free(&r);

	expect(LUN_CARD, "card-reader: PREVENT ALLOW MEDIUM REMOVAL PREVENT = 1 -> GOOD", prevent, 6, ITEST_NONE, 0,
	       EXPECT_GOOD);
	expect(LUN_CARD, "card-reader: START STOP UNIT LOEJ = 1 while prevented -> 05/53/02 MEDIUM REMOVAL PREVENTED",
	       eject, 6, ITEST_NONE, 0, EXPECT_SENSE(5, 0x53, 0x02));
	itest_ok(ctl("lu state 4 no-medium") == 1, "card-reader: sbcemuctl lu state no-medium while prevented -> refused (exit 1)",
		 NULL);
	expect(LUN_CARD, "card-reader: after the refused eject the medium is still there (TUR GOOD)", test_unit_ready,
	       6, ITEST_NONE, 0, EXPECT_GOOD);
	itest_ok(ctl("lu state 4 no-medium --force") == 0,
		 "card-reader: sbcemuctl lu state no-medium --force pulls the medium anyway (exit 0)", NULL);
	expect(LUN_CARD, "card-reader: medium pulled -> TUR 02/3A/00 MEDIUM NOT PRESENT", test_unit_ready, 6,
	       ITEST_NONE, 0, EXPECT_SENSE(2, 0x3a, 0x00));
	expect(LUN_CARD, "card-reader: PREVENT ALLOW MEDIUM REMOVAL PREVENT = 0 -> GOOD", allow, 6, ITEST_NONE, 0,
	       EXPECT_GOOD);
	itest_ok(ctl("lu state 4 ready") == 0, "card-reader: sbcemuctl lu state ready inserts a medium (exit 0)", NULL);
	expect(LUN_CARD, "card-reader: medium inserted -> 06/28/00 NOT READY TO READY CHANGE, MEDIUM MAY HAVE CHANGED",
	       test_unit_ready, 6, ITEST_NONE, 0, EXPECT_SENSE(6, 0x28, 0x00));
	expect(LUN_CARD, "card-reader: then TUR -> GOOD", test_unit_ready, 6, ITEST_NONE, 0, EXPECT_GOOD);
	expect(LUN_CARD, "card-reader: START STOP UNIT LOEJ = 1 when allowed -> GOOD (ejected)", eject, 6, ITEST_NONE, 0,
	       EXPECT_GOOD);
	expect(LUN_CARD, "card-reader: ejected by the host -> TUR 02/3A/00", test_unit_ready, 6, ITEST_NONE, 0,
	       EXPECT_SENSE(2, 0x3a, 0x00));
	itest_ok(ctl("lu state 4 ready") == 0, "card-reader: a new card goes in (sbcemuctl lu state ready)", NULL);
	itest_clear_ua(s, LUN_CARD);
}

/* ---- read-only ---- */

static void test_read_only(void)
{
	uint8_t write10[10] = { 0x2a, 0, 0, 0, 0, 8, 0, 0, 1, 0 };
	struct itest_result r;

	expect(LUN_READ_ONLY, "read-only: WRITE(10) -> 07/27/00 WRITE PROTECTED", write10, 10, ITEST_OUT, 512,
	       EXPECT_SENSE(7, 0x27, 0x00));
	cmd(LUN_READ_ONLY, mode_sense_6, 6, ITEST_IN, 255, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.data_len >= 4 && (r.data[2] & 0x80),
		 "read-only: MODE SENSE(6) DEVICE-SPECIFIC PARAMETER WP = 1 (SBC-4 6.5.1)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	cmd(LUN_PLAIN, mode_sense_6, 6, ITEST_IN, 255, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.data_len >= 4 && !(r.data[2] & 0x80),
		 "no profile: MODE SENSE(6) WP = 0", "%s", itest_result_str(&r));
	itest_result_free(&r);
}

int main(int argc, char **argv)
{
	char ro_path[700];

	itest_init(argc, argv, "test_profiles");
	itest_daemon_init(&d, "profiles");
	/* A write-protected backing file is never created (docs/config.md): make LUN 5's first. */
	snprintf(ro_path, sizeof(ro_path), "%s/lun5.img", d.dir);
	if (truncate(ro_path, 0) != 0) {
		FILE *f = fopen(ro_path, "w");
		if (f)
			fclose(f);
	}
	if (truncate(ro_path, 16 << 20) != 0 || itest_daemon_write_config(&d, config) != 0 ||
	    itest_daemon_start(&d) != 0) {
		itest_ok(false, "sbcemud starts with the profiles configuration", NULL);
		itest_daemon_cleanup(&d);
		return itest_finish();
	}
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s) {
		itest_daemon_cleanup(&d);
		return itest_finish();
	}
	for (int lun = 1; lun <= LUN_READ_ONLY; lun++)
		itest_clear_ua(s, lun);
	test_minimal();
	test_usb_bridge();
	test_card_reader();
	test_read_only();
	itest_close(s);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
