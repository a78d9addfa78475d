/*
 * The time-window trigger of fault rules (docs/control.md, fault-add:
 * after_ms, for_ms), seen by a libiscsi initiator:
 *  - a sense rule on TEST UNIT READY with --after 3000 --for 3000 lets TEST
 *    UNIT READY through (GOOD) before its window, fails it with the rule's
 *    sense (04/44/00 INTERNAL TARGET FAILURE, SPC-4) inside the window, and
 *    lets it through again after; fault-list shows the window "waiting",
 *    "open", "closed" and counts only the commands inside it as matched;
 *  - `every` counts only matching commands inside the window;
 *  - a window on a rule that matches no commands (medium-error) is refused,
 *    and a refused request adds nothing.
 * Times are generous (3 s) so a loaded machine or the sanitizer build does
 * not blur the edges; each check records the elapsed time it relied on.
 *
 * Environment: SBCEMUCTL (the sbcemuctl binary; CMake sets it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

static const char config[] = "[lun \"" ITEST_TARGET "\" 0]\n"
			     "path = @DIR@/lun0.img\nsize = 16M\n";

static struct itest_daemon d;
static struct iscsi_context *s;
static char out[8192];

static bool ctl_ok(const char *args, const char *name)
{
	return itest_ctl_expect(&d, out, sizeof(out), 0, args, name);
}

static bool out_has(const char *text)
{
	return strstr(out, text) != NULL;
}

static void tur(struct itest_result *r)
{
	uint8_t cdb[6] = { 0 };

	itest_cmd(s, 0, cdb, 6, ITEST_NONE, NULL, 0, 0, r);
}

static void sleep_until(uint64_t t0, uint64_t ms)
{
	uint64_t now = itest_now_ms();

	if (now - t0 < ms)
		usleep((useconds_t)((ms - (now - t0)) * 1000));
}

static void test_window(void)
{
	struct itest_result r;
	uint64_t t0, t;

	if (!ctl_ok("--json fault add 0 sense --opcode 0 --sense 4/0x44/0 --after 3000 --for 3000",
		    "sbcemuctl fault add 0 sense --opcode 0 --sense 4/0x44/0 --after 3000 --for 3000 -> exit 0"))
		return;
	t0 = itest_now_ms();
	tur(&r);
	t = itest_now_ms() - t0;
	itest_ok(itest_result_matches(&r, EXPECT_GOOD) && t < 3000,
		 "time window, before it opens: TEST UNIT READY -> GOOD", "%s after %llu ms", itest_result_str(&r),
		 (unsigned long long)t);
	itest_result_free(&r);
	ctl_ok("--json fault list", "sbcemuctl --json fault list (window waiting) -> exit 0");
	itest_ok(out_has("\"window\": \"waiting\"") && itest_json_num(out, "matched") == 0 && itest_json_num(out, "after_ms") == 3000 &&
			 itest_json_num(out, "for_ms") == 3000,
		 "fault list before the window: \"window\": \"waiting\", after_ms 3000, for_ms 3000, matched 0 (commands "
		 "outside the window are not seen)",
		 "%.400s", out);

	sleep_until(t0, 3700);
	tur(&r);
	t = itest_now_ms() - t0;
	itest_ok(itest_result_matches(&r, EXPECT_SENSE(4, 0x44, 0)) && t < 6000,
		 "time window open: TEST UNIT READY -> CHECK CONDITION 04/44/00 (the rule's sense)", "%s after %llu ms",
		 itest_result_str(&r), (unsigned long long)t);
	itest_result_free(&r);
	tur(&r);
	itest_ok(itest_result_matches(&r, EXPECT_SENSE(4, 0x44, 0)) && itest_now_ms() - t0 < 6000,
		 "time window open: a second TEST UNIT READY -> 04/44/00 (no count: every command in the window)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	ctl_ok("--json fault list", "sbcemuctl --json fault list (window open) -> exit 0");
	itest_ok(out_has("\"window\": \"open\"") && itest_json_num(out, "matched") == 2 && itest_json_num(out, "fired") == 2,
		 "fault list in the window: \"window\": \"open\", matched 2, fired 2", "%.400s", out);

	sleep_until(t0, 6700);
	tur(&r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD), "time window closed: TEST UNIT READY -> GOOD", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	ctl_ok("--json fault list", "sbcemuctl --json fault list (window closed) -> exit 0");
	itest_ok(out_has("\"window\": \"closed\"") && itest_json_num(out, "matched") == 2 && itest_json_num(out, "fired") == 2,
		 "fault list after the window: \"window\": \"closed\", still matched 2, fired 2", "%.400s", out);
	ctl_ok("fault list", "sbcemuctl fault list (table, with the window in TRIGGER) -> exit 0");
	itest_ok(out_has("after=3000ms for=3000ms (closed)"), "fault list table: TRIGGER shows after=3000ms for=3000ms (closed)",
		 "%.400s", out);
	ctl_ok("fault remove all", "sbcemuctl fault remove all -> exit 0");
}

/* `every` counts matching commands in the window only; a window with no end (for 0) stays open. */
static void test_every_in_window(void)
{
	struct itest_result r;
	uint64_t t0;
	int fails = 0;

	if (!ctl_ok("fault add 0 sense --opcode 0 --sense 4/0x44/0 --after 2000 --every 2",
		    "sbcemuctl fault add 0 sense --opcode 0 --sense 4/0x44/0 --after 2000 --every 2 -> exit 0"))
		return;
	t0 = itest_now_ms();
	tur(&r); /* before the window: not counted, so it does not shift every 2 */
	itest_result_free(&r);
	if (!itest_ok(itest_now_ms() - t0 < 2000, "every in a window: the first TEST UNIT READY came before it opened",
		      "after %llu ms", (unsigned long long)(itest_now_ms() - t0)))
		return;
	sleep_until(t0, 2500);
	for (int i = 0; i < 4; i++) {
		tur(&r);
		if (itest_result_matches(&r, EXPECT_SENSE(4, 0x44, 0)))
			fails |= 1 << i;
		itest_result_free(&r);
	}
	itest_ok(fails == 0xa,
		 "--after 2000 --every 2: of four TEST UNIT READYs in the window the 2nd and 4th fail (the one before "
		 "the window did not count)",
		 "failed mask 0x%x (want 0xa)", fails);
	itest_ctl(&d, out, sizeof(out), "--json fault list");
	itest_ok(out_has("\"window\": \"open\"") && itest_json_num(out, "for_ms") == 0 && itest_json_num(out, "matched") == 4,
		 "fault list: --for absent (0): the window stays \"open\", matched 4", "%.400s", out);
	ctl_ok("fault remove all", "sbcemuctl fault remove all (every rule) -> exit 0");
}

static void test_refused(void)
{
	int rc = itest_ctl(&d, out, sizeof(out), "fault add 0 medium-error --lba 10-11 --after 1000");

	itest_ok(rc == 1,
		 "fault add medium-error --after 1000 -> exit 1 (a medium-error rule matches no commands: no window)",
		 "exit %d: %.300s", rc, out);
	rc = itest_ctl(&d, out, sizeof(out), "fault add 0 hold --after -5");
	itest_ok(rc == 2, "fault add hold --after -5 -> exit 2 (usage: not a number)", "exit %d: %.300s", rc, out);
	rc = itest_ctl(&d, out, sizeof(out), "fault add 0 hold --for 4294967296");
	itest_ok(rc == 2, "fault add hold --for 4294967296 -> exit 2 (usage: past 2^32 - 1 ms)", "exit %d: %.300s", rc,
		 out);
	rc = itest_ctl(&d, out, sizeof(out), "--json fault list");
	itest_ok(rc == 0 && !out_has("\"id\""), "after the refusals: fault list has no rules (a refused request adds nothing)",
		 "%.300s", out);
}

int main(int argc, char **argv)
{
	itest_init(argc, argv, "test_fault_window: the time-window trigger of fault rules (after_ms, for_ms)");
	itest_daemon_up(&d, "fault-window", config);
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s) {
		itest_daemon_cleanup(&d);
		return itest_finish();
	}
	itest_clear_ua(s, 0);
	test_window();
	test_every_in_window();
	test_refused();
	itest_ok(itest_daemon_alive(&d), "sbcemud still running after every check", NULL);
	itest_close(s);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
