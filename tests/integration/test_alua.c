/*
 * Asymmetric logical unit access over iSCSI (SPC-4 5.15, docs/alua.md):
 * INQUIRY TPGS, the target port group designator of the Device
 * Identification VPD page, REPORT TARGET PORT GROUPS in both formats and cut
 * at the allocation length, SET TARGET PORT GROUPS and its parameter
 * errors, the commands each state refuses with its sense (02/04/0B
 * standby, 02/04/0C unavailable, 02/04/0A transitioning), ASYMMETRIC ACCESS
 * STATE CHANGED (06/2A/06) for the other I_T nexus only, implicit
 * transitions through `sbcemuctl lu alua`, and an LU with alua = none.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

static const char config[] =
	"[target \"" ITEST_TARGET "\"]\n"
	"tpgt = 7\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\n"
	"size = 16M\n"
	"alua = both\n"
	"target_port_group = 42\n"
	"[lun \"" ITEST_TARGET "\" 1]\n"
	"path = @DIR@/lun1.img\n"
	"size = 16M\n"
	"alua = implicit\n"
	"alua_state = standby\n"
	"alua_transition_ms = 1500\n"
	"[lun \"" ITEST_TARGET "\" 2]\n"
	"path = @DIR@/lun2.img\n"
	"size = 16M\n";

static struct iscsi_context *s, *s2;
static struct itest_daemon d;

#define EXPECT(sess, lun, name, e, dir, out, olen, ilen, r, ...)                                               \
	do {                                                                                                   \
		const uint8_t cdb_[] = { __VA_ARGS__ };                                                        \
		itest_expect_cmd(sess, lun, name, cdb_, (int)sizeof(cdb_), dir, out, olen, ilen, e, r);      \
	} while (0)

#define RTPG(fmt, alloc) 0xa3, (uint8_t)(((fmt) << 5) | 0x0a), 0, 0, 0, 0, 0, 0, (uint8_t)((alloc) >> 8), \
	(uint8_t)(alloc), 0, 0
#define STPG(len) 0xa4, 0x0a, 0, 0, 0, 0, 0, 0, 0, (uint8_t)(len), 0, 0

/* The state REPORT TARGET PORT GROUPS reports for LUN lun (length-only format), or -1. */
static int rtpg_state(struct iscsi_context *sess, int lun)
{
	struct itest_result r;
	const uint8_t cdb[] = { RTPG(0, 64) };
	int state = -1;

	itest_cmd(sess, lun, cdb, sizeof(cdb), ITEST_IN, NULL, 0, 64, &r);
	if (r.status == 0 && r.data_len >= 12)
		state = r.data[4] & 0x0f;
	itest_result_free(&r);
	return state;
}

static void test_identification(void)
{
	struct itest_result r;
	bool found = false;

	EXPECT(s, 0, "INQUIRY on an LU with alua = both -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 96, &r, 0x12, 0, 0, 0,
	       96, 0);
	itest_ok(r.data_len > 5 && ((r.data[5] >> 4) & 3) == 3, "INQUIRY byte 5 TPGS = 11b (implicit and explicit)",
		 "byte 5 = %02X", r.data_len > 5 ? r.data[5] : 0);
	itest_result_free(&r);
	EXPECT(s, 2, "INQUIRY on an LU with alua = none -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 96, &r, 0x12, 0, 0, 0,
	       96, 0);
	itest_ok(r.data_len > 5 && ((r.data[5] >> 4) & 3) == 0, "alua = none: TPGS = 00b", NULL);
	itest_result_free(&r);

	EXPECT(s, 0, "INQUIRY VPD 83h -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 512, &r, 0x12, 1, 0x83, 0x02, 0x00, 0);
	for (int off = 4; off + 4 <= r.data_len; off += 4 + r.data[off + 3])
		if ((r.data[off + 1] & 0x0f) == 0x5 && off + 8 <= r.data_len)
			found = (r.data[off + 6] << 8 | r.data[off + 7]) == 42;
	itest_ok(found, "Device Identification: the target port group designator (type 5) is 42, as configured",
		 NULL);
	itest_result_free(&r);
}

static void test_report(void)
{
	struct itest_result r;

	EXPECT(s, 0, "REPORT TARGET PORT GROUPS, length-only format -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 64, &r,
	       RTPG(0, 64));
	itest_ok(r.data_len == 16, "RTPG: 4-byte header, one 8-byte group descriptor, one target port", "%d bytes",
		 r.data_len);
	if (r.data_len == 16) {
		itest_ok((r.data[0] << 24 | r.data[1] << 16 | r.data[2] << 8 | r.data[3]) == 12,
			 "RTPG RETURN DATA LENGTH = 12 (n - 3)", NULL);
		itest_ok((r.data[4] & 0x0f) == 0, "RTPG ASYMMETRIC ACCESS STATE = 0h (active/optimized)", "%02X",
			 r.data[4]);
		itest_ok(r.data[5] == 0x8f, "RTPG supported states: T_SUP U_SUP S_SUP AN_SUP AO_SUP (8Fh)", "%02X",
			 r.data[5]);
		itest_ok((r.data[6] << 8 | r.data[7]) == 42, "RTPG TARGET PORT GROUP = 42", NULL);
		itest_ok(r.data[11] == 1, "RTPG TARGET PORT COUNT = 1", NULL);
		itest_ok((r.data[14] << 8 | r.data[15]) == 7, "RTPG RELATIVE TARGET PORT IDENTIFIER = 7 (the tpgt)", NULL);
	}
	itest_result_free(&r);

	EXPECT(s, 0, "REPORT TARGET PORT GROUPS, extended format -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 64, &r,
	       RTPG(1, 64));
	itest_ok(r.data_len == 20 && (r.data[4] & 0x70) == 0x10 &&
			 (r.data[0] << 24 | r.data[1] << 16 | r.data[2] << 8 | r.data[3]) == 16,
		 "RTPG extended: FORMAT TYPE 001b, RETURN DATA LENGTH 16, descriptor at byte 8", "%d bytes",
		 r.data_len);
	itest_result_free(&r);
	EXPECT(s, 1, "RTPG extended on alua_transition_ms = 1500 -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 64, &r,
	       RTPG(1, 64));
	itest_ok(r.data_len > 5 && r.data[5] == 2, "RTPG IMPLICIT TRANSITION TIME = 2 s (1500 ms rounded up)", NULL);
	itest_result_free(&r);

	EXPECT(s, 0, "RTPG ALLOCATION LENGTH 4 -> GOOD, cut", EXPECT_GOOD, ITEST_IN, NULL, 0, 4, &r, RTPG(0, 4));
	itest_ok(r.data_len == 4 && r.data[3] == 12, "RTPG cut at 4 bytes still reports the whole length", NULL);
	itest_result_free(&r);
	EXPECT(s, 0, "RTPG PARAMETER DATA FORMAT 010b -> 05/24/00", EXPECT_SENSE(5, 0x24, 0x00), ITEST_IN, NULL, 0, 64,
	       &r, RTPG(2, 64));
	itest_expect_field_pointer("RTPG bad format: field pointer byte 1 bit 7", &r, 1, 1, 7);
	itest_result_free(&r);
	EXPECT(s, 2, "alua = none: REPORT TARGET PORT GROUPS -> 05/24/00 (service action not supported)",
	       EXPECT_SENSE(5, 0x24, 0x00), ITEST_IN, NULL, 0, 64, NULL, RTPG(0, 64));
}

static void test_set(void)
{
	uint8_t list[12] = { 0 };
	struct itest_result r;
	uint8_t block[512] = { 0 };

	/* Standby through SET TARGET PORT GROUPS from s: s2 gets the unit attention, s does not. */
	list[4] = 0x02;
	list[6] = 0;
	list[7] = 42;
	EXPECT(s, 0, "SET TARGET PORT GROUPS: group 42 to standby -> GOOD", EXPECT_GOOD, ITEST_OUT, list, 8, 0, NULL,
	       STPG(8));
	EXPECT(s2, 0, "the other I_T nexus: 06/2A/06 ASYMMETRIC ACCESS STATE CHANGED", EXPECT_SENSE(6, 0x2a, 0x06),
	       ITEST_NONE, NULL, 0, 0, NULL, 0x00, 0, 0, 0, 0, 0);
	EXPECT(s, 0, "standby: TEST UNIT READY from the requester (no unit attention) -> 02/04/0B",
	       EXPECT_SENSE(2, 0x04, 0x0b), ITEST_NONE, NULL, 0, 0, NULL, 0x00, 0, 0, 0, 0, 0);
	EXPECT(s, 0, "standby: READ(10) -> 02/04/0B", EXPECT_SENSE(2, 0x04, 0x0b), ITEST_IN, NULL, 0, 512, NULL, 0x28, 0,
	       0, 0, 0, 0, 0, 0, 1, 0);
	EXPECT(s, 0, "standby: WRITE(10) -> 02/04/0B", EXPECT_SENSE(2, 0x04, 0x0b), ITEST_OUT, block, 512, 0, NULL, 0x2a,
	       0, 0, 0, 0, 0, 0, 0, 1, 0);
	EXPECT(s, 0, "standby: INQUIRY -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 96, NULL, 0x12, 0, 0, 0, 96, 0);
	EXPECT(s, 0, "standby: MODE SENSE(6) -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 255, NULL, 0x1a, 0, 0x3f, 0, 255,
	       0);
	EXPECT(s, 0, "standby: READ CAPACITY(10) -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 8, NULL, 0x25, 0, 0, 0, 0, 0,
	       0, 0, 0, 0);
	EXPECT(s, 0, "standby: PERSISTENT RESERVE IN READ KEYS -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 64, NULL, 0x5e,
	       0, 0, 0, 0, 0, 0, 0, 64, 0);
	itest_ok(rtpg_state(s, 0) == 2, "standby: RTPG reports 2h", NULL);
	EXPECT(s, 0, "RTPG after SET TARGET PORT GROUPS -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 64, &r, RTPG(0, 64));
	itest_ok(r.data_len > 9 && r.data[9] == 0x01, "RTPG STATUS CODE 01h (altered by SET TARGET PORT GROUPS)", NULL);
	itest_result_free(&r);

	list[4] = 0x03;
	EXPECT(s, 0, "SET TARGET PORT GROUPS: to unavailable -> GOOD", EXPECT_GOOD, ITEST_OUT, list, 8, 0, NULL, STPG(8));
	itest_clear_ua(s2, 0);
	EXPECT(s, 0, "unavailable: MODE SENSE(6) -> 02/04/0C", EXPECT_SENSE(2, 0x04, 0x0c), ITEST_IN, NULL, 0, 255, NULL,
	       0x1a, 0, 0x3f, 0, 255, 0);
	EXPECT(s, 0, "unavailable: REPORT LUNS -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 256, NULL, 0xa0, 0, 0, 0, 0, 0, 0,
	       0, 1, 0, 0, 0);

	/* Parameter errors change nothing. */
	list[4] = 0x0f;
	EXPECT(s, 0, "SET TARGET PORT GROUPS to transitioning -> 05/26/00", EXPECT_SENSE(5, 0x26, 0x00), ITEST_OUT, list,
	       8, 0, &r, STPG(8));
	itest_expect_field_pointer("STPG bad state: field pointer byte 4", &r, 0, 4, 3);
	itest_result_free(&r);
	list[4] = 0x00;
	list[7] = 41;
	EXPECT(s, 0, "SET TARGET PORT GROUPS for an unknown group -> 05/26/00", EXPECT_SENSE(5, 0x26, 0x00), ITEST_OUT,
	       list, 8, 0, &r, STPG(8));
	itest_expect_field_pointer("STPG unknown group: field pointer byte 6", &r, 0, 6, 7);
	itest_result_free(&r);
	list[7] = 42;
	EXPECT(s, 0, "SET TARGET PORT GROUPS with a cut descriptor (6 bytes) -> 05/1A/00", EXPECT_SENSE(5, 0x1a, 0x00),
	       ITEST_OUT, list, 6, 0, NULL, STPG(6));
	list[8] = 0x00;
	list[11] = 42;
	EXPECT(s, 0, "SET TARGET PORT GROUPS naming group 42 twice -> 05/26/00", EXPECT_SENSE(5, 0x26, 0x00), ITEST_OUT,
	       list, 12, 0, NULL, STPG(12));
	itest_ok(rtpg_state(s, 0) == 3, "after the refused lists: still unavailable (3h)", NULL);

	EXPECT(s, 0, "SET TARGET PORT GROUPS: back to active/optimized -> GOOD", EXPECT_GOOD, ITEST_OUT, list, 8, 0, NULL,
	       STPG(8));
	EXPECT(s2, 0, "the other I_T nexus: 06/2A/06 again", EXPECT_SENSE(6, 0x2a, 0x06), ITEST_NONE, NULL, 0, 0, NULL,
	       0x00, 0, 0, 0, 0, 0);
	EXPECT(s2, 0, "active/optimized: READ(10) -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 512, NULL, 0x28, 0, 0, 0, 0,
	       0, 0, 0, 1, 0);
	EXPECT(s, 1, "alua = implicit: SET TARGET PORT GROUPS -> 05/24/00 (service action not supported)",
	       EXPECT_SENSE(5, 0x24, 0x00),
	       ITEST_OUT, list, 8, 0, NULL, STPG(8));
}

static void test_implicit(void)
{
	char out[4096];
	int polls = 0, state;

	itest_ok(rtpg_state(s, 1) == 2, "LUN 1 starts in standby (alua_state = standby)", NULL);
	EXPECT(s, 1, "LUN 1 standby: READ(10) -> 02/04/0B", EXPECT_SENSE(2, 0x04, 0x0b), ITEST_IN, NULL, 0, 512, NULL,
	       0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0);
	itest_ctl_expect(&d, out, sizeof(out), 0, "lu alua 1 active/non-optimized --target " ITEST_TARGET,
			 "sbcemuctl lu alua 1 active/non-optimized -> exit 0");
	EXPECT(s, 1, "implicit transition: 06/2A/06 for every I_T nexus", EXPECT_SENSE(6, 0x2a, 0x06), ITEST_NONE, NULL,
	       0, 0, NULL, 0x00, 0, 0, 0, 0, 0);
	EXPECT(s, 1, "transitioning (1.5 s): READ(10) -> 02/04/0A", EXPECT_SENSE(2, 0x04, 0x0a), ITEST_IN, NULL, 0, 512,
	       NULL, 0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0);
	itest_ok(rtpg_state(s, 1) == 0xf, "transitioning: RTPG reports Fh", NULL);
	/* s2 polls: its first answer after the end is the second unit attention (-1), then the new state. */
	itest_clear_ua(s2, 1);
	while ((state = rtpg_state(s2, 1)) == 0xf && polls++ < 100)
		usleep(50 * 1000);
	itest_ok(state == -1, "end of the transition: RTPG from the other I_T nexus gets a unit attention first", NULL);
	state = rtpg_state(s2, 1);
	itest_ok(state == 1, "after the transition time: RTPG reports 1h (active/non-optimized)", "state %d after %d polls",
		 state, polls);
	itest_ok(polls >= 10, "the transition lasted about its 1.5 s", "%d polls of 50 ms", polls);
	EXPECT(s, 1, "end of the transition: 06/2A/06 again", EXPECT_SENSE(6, 0x2a, 0x06), ITEST_NONE, NULL, 0, 0, NULL,
	       0x00, 0, 0, 0, 0, 0);
	EXPECT(s, 1, "active/non-optimized: READ(10) -> GOOD", EXPECT_GOOD, ITEST_IN, NULL, 0, 512, NULL, 0x28, 0, 0, 0,
	       0, 0, 0, 0, 1, 0);
	itest_ctl_expect(&d, out, sizeof(out), 0, "lu show 1 --target " ITEST_TARGET, "sbcemuctl lu show 1 -> exit 0");
	itest_ok(strstr(out, "active/non-optimized") != NULL, "lu show names the asymmetric access state", "%s", out);
	itest_ctl_expect(&d, out, sizeof(out), 2, "lu alua 1 transitioning --target " ITEST_TARGET,
			 "sbcemuctl lu alua 1 transitioning -> a usage error (exit 2): not a state to set");
	itest_ctl_expect(&d, out, sizeof(out), 1, "lu alua 2 standby --target " ITEST_TARGET,
			 "sbcemuctl lu alua on an LU with alua = none -> refused (exit 1)");
}

/* SIGHUP with alua_state changed in the file: applied at once, as lu-alua (docs/control.md). */
static void test_reload(void)
{
	char *text = malloc(sizeof(config) + 64);
	const char *lun0 = strstr(config, "target_port_group = 42\n");
	int polls = 0, state;

	if (!text || !lun0) {
		itest_ok(false, "reload: the test's configuration text", NULL);
		free(text);
		return;
	}
	snprintf(text, sizeof(config) + 64, "%.*salua_state = unavailable\n%s", (int)(lun0 - config) +
		 (int)strlen("target_port_group = 42\n"), config, lun0 + strlen("target_port_group = 42\n"));
	itest_ok(itest_daemon_write_config(&d, text) == 0, "reload: LUN 0 alua_state = unavailable written", NULL);
	free(text);
	itest_daemon_signal(&d, SIGHUP);
	itest_clear_ua(s2, 0);
	while ((state = rtpg_state(s2, 0)) != 3 && polls++ < 100)
		usleep(50 * 1000);
	itest_ok(state == 3, "after SIGHUP: RTPG reports 3h (unavailable)", "state %d", state);
}

int main(int argc, char **argv)
{
	itest_init(argc, argv, "test_alua: asymmetric logical unit access (RTPG, STPG, states, unit attentions)");
	itest_daemon_up(&d, "alua", config);
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	s2 = itest_session(&d, ITEST_INITIATOR_2, 0);
	if (!s || !s2)
		return itest_finish();
	for (int lun = 0; lun < 3; lun++) {
		itest_clear_ua(s, lun);
		itest_clear_ua(s2, lun);
	}
	test_identification();
	test_report();
	test_set();
	test_implicit();
	test_reload();
	itest_close(s);
	itest_close(s2);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
