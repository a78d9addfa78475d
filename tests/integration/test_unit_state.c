/*
 * Commands that change the LU's state, over iSCSI: START STOP UNIT (stopped
 * -> 02/04/02 on medium access, INQUIRY still served), PREVENT ALLOW MEDIUM
 * REMOVAL, READ DEFECT DATA(10/12), FORMAT UNIT, SANITIZE (overwrite, block
 * erase, cryptographic erase, parameter errors, NOT READY 02/04/1B with the
 * progress indication in REQUEST SENSE while an IMMED sanitize runs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

#define LU0_BLOCKS (64u * 1024 * 1024 / 512)
#define LU2_BLOCKS (256u * 1024 * 1024 / 512)

static const char config[] =
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\n"
	"size = 64M\n"
	"logical_block_size = 512\n"
	"thin_provisioning = true\n"
	"[lun \"" ITEST_TARGET "\" 1]\n"
	"path = @DIR@/lun1.img\n"
	"size = 64M\n"
	"logical_block_size = 4096\n"
	"thin_provisioning = false\n"
	"[lun \"" ITEST_TARGET "\" 2]\n"
	"path = @DIR@/lun2.img\n"
	"size = 256M\n"
	"logical_block_size = 512\n"
	"thin_provisioning = false\n";

static struct iscsi_context *s, *s2;

#define EXPECT(sess, lun, name, e, dir, out, olen, ilen, r, ...)                                               \
	do {                                                                                                   \
		const uint8_t cdb_[] = { __VA_ARGS__ };                                                        \
		itest_expect_cmd(sess, lun, name, cdb_, (int)sizeof(cdb_), dir, out, olen, ilen, e, r);      \
	} while (0)

static void test_start_stop(void)
{
	struct itest_result r;
	uint8_t block[512] = { 0 };

	EXPECT(s, 0, "START STOP UNIT START=0 (stop) -> GOOD", EXPECT_GOOD, ITEST_NONE, NULL, 0, 0, NULL, 0x1b, 0, 0, 0,
	       0x00, 0);
	EXPECT(s, 0, "stopped LU: TEST UNIT READY -> 02/04/02 (INITIALIZING COMMAND REQUIRED)",
	       EXPECT_SENSE(2, 0x04, 0x02), ITEST_NONE, NULL, 0, 0, NULL, 0x00, 0, 0, 0, 0, 0);
	EXPECT(s, 0, "stopped LU: READ(10) -> 02/04/02", EXPECT_SENSE(2, 0x04, 0x02), ITEST_IN, NULL, 0, 512, NULL, 0x28,
	       0, 0, 0, 0, 0, 0, 0, 1, 0);
	EXPECT(s, 0, "stopped LU: WRITE(10) -> 02/04/02", EXPECT_SENSE(2, 0x04, 0x02), ITEST_OUT, block, 512, 0, NULL,
	       0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0);
	EXPECT(s2, 0, "stopped LU: READ(10) from another I_T nexus -> 02/04/02", EXPECT_SENSE(2, 0x04, 0x02), ITEST_IN,
	       NULL, 0, 512, NULL, 0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0);
	EXPECT(s, 0, "stopped LU: INQUIRY -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 96, NULL, 0x12, 0, 0, 0, 96, 0);
	EXPECT(s, 0, "stopped LU: REPORT LUNS -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 256, NULL, 0xa0, 0, 0, 0, 0, 0, 0,
	       0, 1, 0, 0, 0);
	EXPECT(s, 0, "stopped LU: REQUEST SENSE -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 252, &r, 0x03, 0, 0, 0, 252, 0);
	if (r.data_len >= 14)
		itest_note("REQUEST SENSE on a stopped LU returned %02X/%02X/%02X", r.data[2] & 0x0f, r.data[12],
			   r.data[13]);
	itest_result_free(&r);
	EXPECT(s, 1, "stopping LUN 0 leaves LUN 1 ready: TEST UNIT READY -> GOOD", EXPECT_GOOD, ITEST_NONE, NULL, 0, 0, NULL,
	       0x00, 0, 0, 0, 0, 0);
	EXPECT(s, 0, "START STOP UNIT START=1 -> GOOD", EXPECT_GOOD, ITEST_NONE, NULL, 0, 0, NULL, 0x1b, 0, 0, 0, 0x01, 0);
	EXPECT(s, 0, "started LU: READ(10) -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 512, NULL, 0x28, 0, 0, 0, 0, 0, 0, 0,
	       1, 0);

	EXPECT(s, 0, "START STOP UNIT IMMED=1 START=0 -> GOOD", EXPECT_GOOD, ITEST_NONE, NULL, 0, 0, NULL, 0x1b, 1, 0, 0,
	       0x00, 0);
	{
		uint8_t tur[6] = { 0 };
		bool stopped = false;
		for (int i = 0; i < 50 && !stopped; i++) {
			itest_cmd(s, 0, tur, 6, ITEST_NONE, NULL, 0, 0, &r);
			stopped = itest_result_matches(&r, EXPECT_SENSE(2, 0x04, 0x02));
			if (!stopped)
				usleep(100000);
		}
		itest_ok(stopped, "after IMMED stop: TEST UNIT READY -> 02/04/02", "%s", itest_result_str(&r));
	}
	EXPECT(s, 0, "START STOP UNIT IMMED=1 START=1 -> GOOD", EXPECT_GOOD, ITEST_NONE, NULL, 0, 0, NULL, 0x1b, 1, 0, 0,
	       0x01, 0);
	{
		uint8_t tur[6] = { 0 };
		bool ready = false;
		for (int i = 0; i < 50 && !ready; i++) {
			itest_cmd(s, 0, tur, 6, ITEST_NONE, NULL, 0, 0, &r);
			ready = itest_result_matches(&r, EXPECT_GOOD);
			if (!ready)
				usleep(100000);
		}
		itest_ok(ready, "after IMMED start: TEST UNIT READY -> GOOD", "%s", itest_result_str(&r));
	}
	EXPECT(s, 0, "START STOP UNIT byte 1 bit 1 (reserved) -> 05/24/00", EXPECT_SENSE(5, 0x24, 0), ITEST_NONE, NULL, 0,
	       0, &r, 0x1b, 0x02, 0, 0, 0x01, 0);
	itest_expect_field_pointer("START STOP UNIT byte 1 bit 1: field pointer byte 1 bit 1", &r, 1, 1, 1);
}

static void test_prevent_allow(void)
{
	struct itest_result r;

	EXPECT(s, 0, "PREVENT ALLOW MEDIUM REMOVAL PREVENT=01b -> GOOD", EXPECT_GOOD, ITEST_NONE, NULL, 0, 0, NULL, 0x1e,
	       0, 0, 0, 0x01, 0);
	EXPECT(s, 0, "PREVENT ALLOW MEDIUM REMOVAL PREVENT=00b -> GOOD", EXPECT_GOOD, ITEST_NONE, NULL, 0, 0, NULL, 0x1e,
	       0, 0, 0, 0x00, 0);
	EXPECT(s, 0, "PREVENT ALLOW MEDIUM REMOVAL byte 4 bit 2 (reserved) -> 05/24/00", EXPECT_SENSE(5, 0x24, 0),
	       ITEST_NONE, NULL, 0, 0, &r, 0x1e, 0, 0, 0, 0x04, 0);
	itest_expect_field_pointer("PREVENT ALLOW byte 4 bit 2: field pointer byte 4 bit 2", &r, 1, 4, 2);
}

static void test_read_defect_data(void)
{
	struct itest_result r;

	EXPECT(s, 0, "READ DEFECT DATA(10) REQ_PLIST=1 REQ_GLIST=1 short block format -> GOOD", EXPECT_GOOD, ITEST_IN, NULL,
	       0, 32, &r, 0x37, 0, 0x18, 0, 0, 0, 0, 0, 32, 0);
	itest_ok(r.data_len >= 4 && itest_get_be16(r.data + 2) == 0, "READ DEFECT DATA(10): DEFECT LIST LENGTH = 0",
		 "%d bytes, length %u", r.data_len, r.data_len >= 4 ? itest_get_be16(r.data + 2) : 0);
	itest_result_free(&r);
	EXPECT(s, 0, "READ DEFECT DATA(10) allocation length 4 -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 4, NULL, 0x37, 0,
	       0x18, 0, 0, 0, 0, 0, 4, 0);
	EXPECT(s, 0, "READ DEFECT DATA(12) -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 32, &r, 0xb7, 0x18, 0, 0, 0, 0, 0, 0,
	       0, 32, 0, 0);
	itest_ok(r.data_len >= 8 && itest_get_be32(r.data + 4) == 0, "READ DEFECT DATA(12): DEFECT LIST LENGTH = 0",
		 "%d bytes", r.data_len);
	itest_result_free(&r);
}

static bool block_is(int lun, uint64_t lba, uint8_t value, uint32_t bs)
{
	uint8_t *buf = malloc(bs);
	bool ok = itest_read16(s, lun, lba, buf, 1, bs, NULL);
	for (uint32_t i = 0; ok && i < bs; i++)
		if (buf[i] != value)
			ok = false;
	free(buf);
	return ok;
}

static void write_fill(int lun, uint64_t lba, uint8_t value, uint32_t n, uint32_t bs)
{
	uint8_t *buf = malloc((size_t)n * bs);
	memset(buf, value, (size_t)n * bs);
	itest_write16(s, lun, lba, buf, n, bs, false, "write fill pattern");
	free(buf);
}

static void test_format_unit(void)
{
	struct itest_result r;
	uint8_t hdr[4] = { 0 };

	write_fill(0, 0, 0x5a, 8, 512);
	EXPECT(s, 0, "FORMAT UNIT FMTDATA=0 -> GOOD", EXPECT_GOOD, ITEST_NONE, NULL, 0, 0, NULL, 0x04, 0, 0, 0, 0, 0);
	itest_ok(block_is(0, 0, 0x00, 512), "FORMAT UNIT on a thin LU: formatted LBAs read as zeros", NULL);
	EXPECT(s, 0, "FORMAT UNIT FMTDATA=1, short parameter list header (FOV=0) -> GOOD", EXPECT_GOOD, ITEST_OUT, hdr, 4,
	       0, NULL, 0x04, 0x10, 0, 0, 0, 0);
	EXPECT(s, 0, "FORMAT UNIT FMTPINFO=10b (no protection support) -> 05/24/00", EXPECT_SENSE(5, 0x24, 0), ITEST_NONE,
	       NULL, 0, 0, &r, 0x04, 0x80, 0, 0, 0, 0);
	itest_expect_field_pointer("FORMAT UNIT FMTPINFO: field pointer byte 1 bit 7", &r, 1, 1, 7);
	EXPECT(s, 0, "after FORMAT UNIT: READ(10) -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 512, NULL, 0x28, 0, 0, 0, 0, 0,
	       0, 0, 1, 0);
}

static void sanitize(int lun, uint8_t byte1, const void *param, uint16_t len, struct itest_result *r)
{
	uint8_t cdb[10] = { 0x48, byte1 };
	itest_put_be16(cdb + 7, len);
	itest_cmd(s, lun, cdb, 10, len ? ITEST_OUT : ITEST_NONE, param, len, 0, r);
}

static bool invalid_field(const struct itest_result *r)
{
	return itest_result_matches(r, EXPECT_SENSE(5, 0x24, 0)) || itest_result_matches(r, EXPECT_SENSE(5, 0x26, 0));
}

static void test_sanitize(void)
{
	struct itest_result r;
	uint8_t param[4 + 512];
	char name[200];

	sanitize(0, 0x00, NULL, 0, &r);
	itest_ok(itest_result_matches(&r, EXPECT_SENSE(5, 0x24, 0)), "SANITIZE service action 00h (reserved) -> 05/24/00",
		 "%s", itest_result_str(&r));
	itest_expect_field_pointer("SANITIZE SA 00h: field pointer byte 1 bit 4", &r, 1, 1, 4);

	/* OVERWRITE with a full-block pattern. */
	write_fill(0, 0, 0x11, 4, 512);
	write_fill(0, LU0_BLOCKS - 4, 0x11, 4, 512);
	param[0] = 0x01; /* OWCOUNT 1 */
	param[1] = 0;
	itest_put_be16(param + 2, 512);
	memset(param + 4, 0xaa, 512);
	sanitize(0, 0x01, param, 4 + 512, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD), "SANITIZE OVERWRITE, OWCOUNT 1, 512-byte pattern -> GOOD", "%s",
		 itest_result_str(&r));
	itest_ok(block_is(0, 0, 0xaa, 512) && block_is(0, LU0_BLOCKS - 1, 0xaa, 512),
		 "SANITIZE OVERWRITE: first and last LBA hold the pattern", NULL);
	for (uint16_t len = 0; len <= 4; len++) {
		sanitize(0, 0x01, param, len, &r);
		snprintf(name, sizeof(name), "SANITIZE OVERWRITE PARAMETER LIST LENGTH %u -> 05/24/00 or 05/26/00", len);
		itest_ok(invalid_field(&r), name, "%s", itest_result_str(&r));
	}
	param[0] = 0x00;
	sanitize(0, 0x01, param, 4 + 512, &r);
	itest_ok(invalid_field(&r), "SANITIZE OVERWRITE OVERWRITE COUNT 0 -> 05/24/00 or 05/26/00", "%s",
		 itest_result_str(&r));
	param[0] = 0x01;
	itest_put_be16(param + 2, 0);
	sanitize(0, 0x01, param, 4 + 512, &r);
	itest_ok(invalid_field(&r), "SANITIZE OVERWRITE INITIALIZATION PATTERN LENGTH 0 -> 05/24/00 or 05/26/00", "%s",
		 itest_result_str(&r));
	itest_put_be16(param + 2, 516);
	sanitize(0, 0x01, param, 4 + 512, &r);
	itest_ok(invalid_field(&r), "SANITIZE OVERWRITE pattern length > logical block length -> 05/24/00 or 05/26/00",
		 "%s", itest_result_str(&r));

	/* BLOCK ERASE and CRYPTOGRAPHIC ERASE take no parameter list. */
	write_fill(0, 0, 0x22, 4, 512);
	sanitize(0, 0x02, NULL, 0, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD), "SANITIZE BLOCK ERASE -> GOOD", "%s", itest_result_str(&r));
	{
		uint8_t cdb[10] = { 0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
		itest_expect_cmd(s, 0, "after BLOCK ERASE: READ(10) -> GOOD", cdb, 10, ITEST_IN, NULL, 0, 512, EXPECT_GOOD,
				 NULL);
	}
	itest_ok(!block_is(0, 0, 0x22, 512), "after BLOCK ERASE: the old data is gone", NULL);
	memset(param, 0, 8);
	sanitize(0, 0x02, param, 8, &r);
	itest_ok(invalid_field(&r), "SANITIZE BLOCK ERASE with PARAMETER LIST LENGTH 8 -> 05/24/00 or 05/26/00", "%s",
		 itest_result_str(&r));
	sanitize(0, 0x03, NULL, 0, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD), "SANITIZE CRYPTOGRAPHIC ERASE -> GOOD", "%s", itest_result_str(&r));
	sanitize(0, 0x1f, param, 8, &r);
	itest_ok(invalid_field(&r), "SANITIZE EXIT FAILURE MODE with PARAMETER LIST LENGTH 8 -> 05/24/00 or 05/26/00",
		 "%s", itest_result_str(&r));
}

/* An IMMED overwrite of 256 MiB: watch for NOT READY, SANITIZE IN PROGRESS and the progress indication. */
static void test_sanitize_progress(void)
{
	struct itest_result r;
	uint8_t param[4 + 4] = { 0x01, 0, 0, 4, 'S', 'B', 'C', 'E' };
	uint8_t rs[6] = { 0x03, 0, 0, 0, 252, 0 }, tur[6] = { 0 }, inq[6] = { 0x12, 0, 0, 0, 96, 0 };
	uint64_t start = itest_now_ms();
	int in_progress = 0, progress_ok = 0, tur_nr = 0, inq_ok = 0, last_progress = -1;
	bool monotonic = true, done = false;

	sanitize(2, 0x81, param, sizeof(param), &r);
	if (!itest_ok(itest_result_matches(&r, EXPECT_GOOD), "SANITIZE OVERWRITE IMMED=1 on a 256 MiB LU -> GOOD", "%s",
		      itest_result_str(&r)))
		return;
	while (itest_now_ms() - start < 120000) {
		itest_cmd(s, 2, rs, 6, ITEST_IN, NULL, 0, 252, &r);
		if (!r.transport_ok || r.status != 0 || r.data_len < 18) {
			itest_ok(false, "REQUEST SENSE during SANITIZE -> GOOD", "%s", itest_result_str(&r));
			itest_result_free(&r);
			break;
		}
		int key = r.data[2] & 0x0f, asc = r.data[12], ascq = r.data[13];
		if (key == 2 && asc == 0x04 && ascq == 0x1b) {
			in_progress++;
			if (r.data[15] & 0x80) {
				int p = itest_get_be16(r.data + 16);
				progress_ok++;
				if (p < last_progress)
					monotonic = false;
				last_progress = p;
			}
			itest_result_free(&r);
			itest_cmd(s2, 2, tur, 6, ITEST_NONE, NULL, 0, 0, &r);
			if (itest_result_matches(&r, EXPECT_SENSE(2, 0x04, 0x1b)))
				tur_nr++;
			itest_result_free(&r);
			itest_cmd(s2, 2, inq, 6, ITEST_IN, NULL, 0, 96, &r);
			if (itest_result_matches(&r, EXPECT_GOOD))
				inq_ok++;
			itest_result_free(&r);
			usleep(20000);
			continue;
		}
		itest_result_free(&r);
		done = key == 0;
		break;
	}
	itest_ok(done, "SANITIZE IMMED completes: REQUEST SENSE returns NO SENSE afterwards", "after %llu ms",
		 (unsigned long long)(itest_now_ms() - start));
	if (!in_progress) {
		itest_note("sanitize finished before the first poll: progress not observable on this machine");
		return;
	}
	itest_note("observed sanitize in progress %d times, last progress %d/65536", in_progress, last_progress);
	itest_ok(progress_ok == in_progress,
		 "REQUEST SENSE during SANITIZE: 02/04/1B with SKSV=1 and a PROGRESS INDICATION", "%d of %d polls",
		 progress_ok, in_progress);
	itest_ok(monotonic, "SANITIZE PROGRESS INDICATION never goes backwards", NULL);
	itest_ok(tur_nr > 0, "during SANITIZE: TEST UNIT READY from another nexus -> 02/04/1B", "%d polls", tur_nr);
	itest_ok(inq_ok > 0, "during SANITIZE: INQUIRY is still served", "%d polls", inq_ok);
	{
		uint8_t buf[512];
		bool ok = itest_read16(s, 2, LU2_BLOCKS - 1, buf, 1, 512, "read after sanitize");
		for (int i = 0; ok && i < 512; i++)
			if (buf[i] != "SBCE"[i % 4])
				ok = false;
		itest_ok(ok, "after SANITIZE OVERWRITE with a 4-byte pattern: the last block repeats the pattern", NULL);
	}
}

int main(int argc, char **argv)
{
	struct itest_daemon d;

	itest_init(argc, argv, "test_unit_state: START STOP UNIT, PREVENT ALLOW, READ DEFECT DATA, FORMAT UNIT, SANITIZE");
	itest_daemon_up(&d, "unit", config);
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	s2 = itest_session(&d, ITEST_INITIATOR_2, 0);
	if (!s || !s2)
		return itest_finish();
	for (int lun = 0; lun < 3; lun++) {
		itest_clear_ua(s, lun);
		itest_clear_ua(s2, lun);
	}

	test_start_stop();
	test_prevent_allow();
	test_read_defect_data();
	test_format_unit();
	test_sanitize();
	test_sanitize_progress();

	itest_close(s);
	itest_close(s2);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
