/*
 * Informational exceptions and self-tests as smartctl, smartd and
 * sg_senddiag see them (SPC-4 5.6, 6.27, 6.42, 7.3.8, 7.3.17, 7.5.12):
 * a predicted failure raised from the control socket (sbcemuctl fault add
 * LUN predict-failure) or the configuration (predict_failure), reported by
 * each MRIE method and seen by a second I_T nexus; DEXCPT; TEST; the
 * temperature and its threshold; the default, background and foreground
 * self-tests, aborted, and failed by a medium-error fault rule.
 *
 * Environment: SBCEMUCTL (the sbcemuctl binary; CMake sets it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

static const char config[] =
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\nsize = 16M\n"
	"[lun \"" ITEST_TARGET "\" 1]\n"
	"path = @DIR@/lun1.img\nsize = 16M\npredict_failure = true\nmode_defaults = dexcpt=0 mrie=6\n";

static struct itest_daemon d;
static struct iscsi_context *s, *s2;

static struct itest_expect check(int key, int asc, int ascq)
{
	return (struct itest_expect){ 2, key, asc, ascq };
}

/* MODE SELECT(10) PF = 1 of the Informational Exceptions Control page on ctx. */
static bool select_iec(struct iscsi_context *ctx, uint8_t byte2, uint8_t mrie, uint32_t interval, uint32_t count,
		       const char *name, struct itest_expect e)
{
	uint8_t list[20] = { 0 };
	uint8_t cdb[10] = { 0x55, 0x10, 0, 0, 0, 0, 0, 0, 20, 0 };

	list[8] = 0x1c;
	list[9] = 0x0a;
	list[10] = byte2;
	list[11] = mrie;
	itest_put_be32(list + 12, interval);
	itest_put_be32(list + 16, count);
	return itest_expect_cmd(ctx, 0, name, cdb, 10, ITEST_OUT, list, 20, 0, e, NULL);
}

/* IE ASC/ASCQ of the Informational Exceptions log page (2Fh) of lun, as one number, or -1. */
static int ie_log(struct iscsi_context *ctx, int lun, int *temperature)
{
	uint8_t cdb[10] = { 0x4d, 0, 0x40 | 0x2f, 0, 0, 0, 0, 0, 252, 0 };
	struct itest_result r;
	int v = -1;

	itest_cmd(ctx, lun, cdb, 10, ITEST_IN, NULL, 0, 252, &r);
	if (r.status == 0 && r.data_len >= 11 && itest_get_be16(r.data + 4) == 0) {
		v = r.data[8] << 8 | r.data[9];
		if (temperature)
			*temperature = r.data[10];
	}
	itest_result_free(&r);
	return v;
}

static void request_sense(struct iscsi_context *ctx, int lun, struct itest_result *r)
{
	uint8_t cdb[6] = { 0x03, 0, 0, 0, 18, 0 };

	itest_cmd(ctx, lun, cdb, 6, ITEST_IN, NULL, 0, 18, r);
}

static void tur(struct iscsi_context *ctx, struct itest_result *r)
{
	uint8_t cdb[6] = { 0 };

	itest_cmd(ctx, 0, cdb, 6, ITEST_NONE, NULL, 0, 0, r);
}

static void test_predict_failure(void)
{
	char out[256];
	struct itest_result r;
	int temp = -1;

	/* the configuration key: LUN 1 predicts from start-up, reported on request (mode_defaults mrie=6) */
	{
		struct iscsi_context *c = itest_session(&d, ITEST_INITIATOR_2, 1);

		if (c) {
			itest_ok(ie_log(c, 1, NULL) == 0x5d00, "predict_failure = true (config): page 2Fh 5D/00 from start-up",
				 "%04x", ie_log(c, 1, NULL));
			request_sense(c, 1, &r);
			itest_ok(r.status == 0 && r.data_len >= 14 && r.data[12] == 0x5d,
				 "... and REQUEST SENSE (MRIE 6h) returns 5D/00", "%s", itest_result_str(&r));
			itest_result_free(&r);
			itest_close(c);
		}
	}
	itest_ok(itest_ctl(&d, out, sizeof(out), "fault add 0 predict-failure") == 0,
		 "sbcemuctl fault add 0 predict-failure", "failed: %s", out);
	itest_ok(ie_log(s, 0, NULL) == 0, "DEXCPT = 1 (default): page 2Fh shows no exception (SPC-4 7.5.12)", "%04x",
		 ie_log(s, 0, NULL));
	/* MRIE 2h from nexus 1: every nexus gets a unit attention with 5D/00 */
	select_iec(s, 0x00, 2, 0, 0, "MODE SELECT IEC page DEXCPT = 0, MRIE 2h: GOOD", EXPECT_GOOD);
	tur(s2, &r);
	itest_ok(itest_result_matches(&r, check(6, 0x2a, 0x01)),
		 "second nexus: MODE PARAMETERS CHANGED first (06/2A/01)", "%s", itest_result_str(&r));
	itest_result_free(&r);
	tur(s2, &r);
	itest_ok(itest_result_matches(&r, check(6, 0x5d, 0x00)),
		 "second nexus: MRIE 2h unit attention FAILURE PREDICTION THRESHOLD EXCEEDED (06/5D/00)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	tur(s2, &r);
	itest_ok(r.status == 0, "... reported once (INTERVAL TIMER 0): the next TEST UNIT READY is GOOD", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	tur(s, &r);
	itest_ok(itest_result_matches(&r, check(6, 0x5d, 0x00)), "first nexus gets it too (06/5D/00)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	itest_ok(ie_log(s, 0, &temp) == 0x5d00 && temp == 30,
		 "page 2Fh: IE ASC/ASCQ 5D/00, MOST RECENT TEMPERATURE READING 30 (SPC-4 7.3.8; smartctl -H FAILED)",
		 "%04x %d", ie_log(s, 0, NULL), temp);
	/* MRIE 6h: REQUEST SENSE on request only */
	select_iec(s, 0x00, 6, 0, 0, "MODE SELECT MRIE 6h: GOOD", EXPECT_GOOD);
	request_sense(s2, 0, &r); /* the MODE PARAMETERS CHANGED unit attention */
	itest_result_free(&r);
	request_sense(s2, 0, &r);
	itest_ok(r.status == 0 && r.data_len >= 14 && (r.data[2] & 0x0f) == 0 && r.data[12] == 0x5d && r.data[13] == 0,
		 "MRIE 6h: REQUEST SENSE on the second nexus returns NO SENSE 5D/00 (SPC-4 7.5.12)", "%s key %x asc %02x",
		 itest_result_str(&r), r.data_len > 2 ? r.data[2] & 0xf : -1, r.data_len > 12 ? r.data[12] : -1);
	itest_result_free(&r);
	tur(s, &r);
	itest_result_free(&r);
	/* MRIE 4h: the next GOOD command ends RECOVERED ERROR 5D/00, on whichever nexus comes first */
	select_iec(s, 0x00, 4, 0, 0, "MODE SELECT MRIE 4h: GOOD (the report goes to a later command)", EXPECT_GOOD);
	tur(s2, &r);
	itest_ok(itest_result_matches(&r, check(6, 0x2a, 0x01)), "second nexus: MODE PARAMETERS CHANGED (06/2A/01)",
		 "%s", itest_result_str(&r));
	itest_result_free(&r);
	tur(s2, &r);
	itest_ok(itest_result_matches(&r, check(1, 0x5d, 0x00)),
		 "MRIE 4h: the next command ends CHECK CONDITION RECOVERED ERROR 5D/00 (needs spc_ie_cmd_done in cmd.c)",
		 "%s", itest_result_str(&r));
	itest_result_free(&r);
	tur(s2, &r);
	itest_ok(r.status == 0, "... once: the next one is GOOD", "%s", itest_result_str(&r));
	itest_result_free(&r);
	itest_ctl(&d, out, sizeof(out), "fault remove all");
	itest_ok(ie_log(s, 0, NULL) == 0, "the rule removed: page 2Fh shows no exception", "%04x", ie_log(s, 0, NULL));
}

static void test_test_bit_and_temperature(void)
{
	char out[256];
	struct itest_result r;
	uint8_t temp_cdb[10] = { 0x4d, 0, 0x40 | 0x0d, 0, 0, 0, 0, 0, 252, 0 };

	select_iec(s, 0x0c, 6, 0, 0, "MODE SELECT TEST = 1 with DEXCPT = 1 -> 05/26/00 (SPC-4 7.5.12)",
		   check(5, 0x26, 0x00));
	select_iec(s, 0x04, 6, 0, 0, "MODE SELECT TEST = 1, DEXCPT = 0, MRIE 6h: GOOD", EXPECT_GOOD);
	itest_ok(ie_log(s, 0, NULL) == 0x5dff, "TEST = 1: a false prediction 5D/FF in page 2Fh", "%04x",
		 ie_log(s, 0, NULL));
	itest_clear_ua(s2, 0);
	request_sense(s2, 0, &r);
	itest_ok(r.status == 0 && r.data_len >= 14 && (r.data[2] & 0xf) == 0 && r.data[12] == 0x5d && r.data[13] == 0xff,
		 "TEST = 1, MRIE 6h: REQUEST SENSE NO SENSE 5D/FF (as scsi_debug)", "%s", itest_result_str(&r));
	itest_result_free(&r);
	select_iec(s, 0x10, 6, 0, 0, "MODE SELECT TEST = 0, EWASC = 1, DEXCPT = 0: GOOD", EXPECT_GOOD);
	itest_ok(ie_log(s, 0, NULL) == 0, "TEST = 0: the false prediction is gone", "%04x", ie_log(s, 0, NULL));
	itest_ok(itest_ctl(&d, out, sizeof(out), "fault add 0 temperature --temperature 80 --temperature-threshold 60") ==
			 0,
		 "sbcemuctl fault add 0 temperature --temperature 80 --temperature-threshold 60", "%s", out);
	itest_cmd(s, 0, temp_cdb, 10, ITEST_IN, NULL, 0, 252, &r);
	itest_ok(r.status == 0 && r.data_len >= 16 && r.data[9] == 80 && r.data[15] == 60,
		 "page 0Dh: TEMPERATURE 80, REFERENCE TEMPERATURE 60", "%s", itest_result_str(&r));
	itest_result_free(&r);
	itest_ok(ie_log(s, 0, NULL) == 0x0b01,
		 "above the threshold with EWASC = 1: 0B/01 WARNING - SPECIFIED TEMPERATURE EXCEEDED in page 2Fh", "%04x",
		 ie_log(s, 0, NULL));
	itest_ctl(&d, out, sizeof(out), "fault remove all");
	itest_ok(ie_log(s, 0, NULL) == 0, "the temperature rule removed: no exception", "%04x", ie_log(s, 0, NULL));
	select_iec(s, 0x08, 0, 0, 0, "MODE SELECT DEXCPT = 1 again: GOOD", EXPECT_GOOD);
	itest_clear_ua(s2, 0);
}

/* The first (most recent) self-test results parameter: byte 4 (code << 5 | result), or -1. */
static int last_self_test(uint64_t *first_failure)
{
	uint8_t cdb[10] = { 0x4d, 0, 0x40 | 0x10, 0, 0, 0, 0, 0x01, 0x94, 0 };
	struct itest_result r;
	int v = -1;

	itest_cmd(s, 0, cdb, 10, ITEST_IN, NULL, 0, 0x194, &r);
	if (r.status == 0 && r.data_len >= 24) {
		v = r.data[8];
		if (first_failure)
			*first_failure = itest_get_be64(r.data + 12);
	}
	itest_result_free(&r);
	return v;
}

static void send_diag(uint8_t byte1, const char *name, struct itest_expect e)
{
	uint8_t cdb[6] = { 0x1d, byte1, 0, 0, 0, 0 };

	itest_expect_cmd(s, 0, name, cdb, 6, ITEST_NONE, NULL, 0, 0, e, NULL);
}

static void test_self_tests(void)
{
	struct itest_result r;
	uint64_t t0, ff = 0;
	char out[256];
	int v = -1;

	send_diag(0x04, "sg_senddiag --test: SEND DIAGNOSTIC SELFTEST = 1 -> GOOD (SPC-4 6.42)", EXPECT_GOOD);
	itest_ok(last_self_test(NULL) == 0x00, "... logged: code 000b, result 0h (SPC-4 7.3.17)", "%02x",
		 last_self_test(NULL));
	send_diag(0x24, "SELFTEST = 1 with SELF-TEST CODE 001b -> 05/24/00", check(5, 0x24, 0));
	send_diag(0x80, "abort (100b) with no background self-test -> 05/24/00", check(5, 0x24, 0));
	send_diag(0x20, "smartctl -t short: background short self-test -> GOOD", EXPECT_GOOD);
	itest_ok(last_self_test(NULL) == 0x2f, "... logged with result Fh (in progress)", "%02x", last_self_test(NULL));
	request_sense(s2, 0, &r);
	itest_ok(r.status == 0 && r.data_len >= 18 && (r.data[2] & 0xf) == 2 && r.data[12] == 4 && r.data[13] == 9 &&
			 (r.data[15] & 0x80),
		 "REQUEST SENSE meanwhile: NOT READY 04/09 with SKSV progress (smartctl's % remaining)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	send_diag(0x40, "another self-test while one runs -> 02/04/09", check(2, 0x04, 0x09));
	for (t0 = itest_now_ms(); itest_now_ms() - t0 < 5000 && (v = last_self_test(NULL)) == 0x2f;)
		usleep(100000);
	itest_ok(v == 0x20, "the short self-test completes in about 2 s, result 0h", "%02x", v);
	send_diag(0x40, "smartctl -t long: background extended self-test -> GOOD", EXPECT_GOOD);
	send_diag(0x80, "smartctl -X: abort it -> GOOD", EXPECT_GOOD);
	itest_ok(last_self_test(NULL) == 0x41, "... logged code 010b result 1h (aborted by SEND DIAGNOSTIC)", "%02x",
		 last_self_test(NULL));
	t0 = itest_now_ms();
	send_diag(0xa0, "smartctl -C -t short: foreground short self-test -> GOOD when it is done", EXPECT_GOOD);
	itest_ok(itest_now_ms() - t0 >= 1500, "... after about 2 s", "%llu ms", (unsigned long long)(itest_now_ms() - t0));
	itest_ctl(&d, out, sizeof(out), "fault add 0 medium-error --lba 77-80");
	send_diag(0x04, "a medium-error fault rule: the default self-test -> 04/3E/03 LOGICAL UNIT FAILED SELF-TEST",
		  check(4, 0x3e, 0x03));
	itest_ok(last_self_test(&ff) == 0x06 && ff == 77,
		 "... logged result 6h (second segment), ADDRESS OF FIRST FAILURE 77", "%02x %llu", last_self_test(NULL),
		 (unsigned long long)ff);
	itest_ctl(&d, out, sizeof(out), "fault remove all");
	{
		uint8_t page0[4] = { 0 };
		uint8_t sd[6] = { 0x1d, 0x10, 0, 0, 4, 0 };
		uint8_t rd[6] = { 0x1c, 0, 0, 0x10, 0, 0 };

		itest_expect_cmd(s, 0, "sg_senddiag --list: SEND DIAGNOSTIC PF = 1 with page 00h -> GOOD", sd, 6, ITEST_OUT,
				 page0, 4, 0, EXPECT_GOOD, NULL);
		itest_cmd(s, 0, rd, 6, ITEST_IN, NULL, 0, 4096, &r);
		itest_ok(r.status == 0 && r.data_len == 5 && r.data[0] == 0 && itest_get_be16(r.data + 2) == 1,
			 "RECEIVE DIAGNOSTIC RESULTS PCV = 0: the Supported Diagnostic Pages page (SPC-4 7.2.2)", "%s",
			 itest_result_str(&r));
		itest_result_free(&r);
	}
}

int main(int argc, char **argv)
{
	itest_init(argc, argv, "test_health");
	itest_daemon_up(&d, "health", config);
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	s2 = itest_session(&d, ITEST_INITIATOR_2, 0);
	if (s && s2) {
		test_predict_failure();
		test_test_bit_and_temperature();
		test_self_tests();
	}
	itest_close(s);
	itest_close(s2);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
