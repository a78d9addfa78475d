/*
 * Targets added and removed while the daemon runs (docs/control.md,
 * target-add / target-remove; "Reload on SIGHUP"), seen by libiscsi:
 *  - target add: SendTargets lists the new target, a login to it works and
 *    its LUN 0 reads and writes; `targets` and `save` show it; lu add grows it;
 *  - target remove: refused while a command is in its task sets (a held
 *    READ) unless --force; done, the logged-in session loses its
 *    connection, SendTargets no longer lists it, a new login gets status
 *    class 2 detail 4, Target removed (RFC 7143 11.13.5), and the other
 *    target serves on;
 *  - the same name and backing file added again: the data written before is
 *    there (the LU was flushed and closed, not lost);
 *  - bad requests (existing name, bad cfgstring, a path in use, a short CHAP
 *    secret, an unknown target) are refused and change nothing;
 *  - SIGHUP with a file that adds a target and lacks one added at run time:
 *    the first is added, the second removed.
 *
 * Environment: SBCEMUCTL (the sbcemuctl binary; CMake sets it).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"
#include "itest_raw.h"

#define ADDED "iqn.2026-12.org.sbcemu:added"
#define HUP "iqn.2026-12.org.sbcemu:from-sighup"

static const char config[] = "[lun \"" ITEST_TARGET "\" 0]\npath = @DIR@/lun0.img\nsize = 16M\n";
static const char reloaded[] = "[lun \"" ITEST_TARGET "\" 0]\npath = @DIR@/lun0.img\nsize = 16M\n"
			       "[lun \"" HUP "\" 0]\npath = @DIR@/hup.img\nsize = 8M\n";

static struct itest_daemon d;
static char out[16384];

static int ctl(const char *args)
{
	return itest_ctl(&d, out, sizeof(out), "%s", args);
}

static struct iscsi_context *login(const char *target, char *err, size_t errlen)
{
	struct itest_login o = { .target = target, .initial_r2t = -1, .immediate_data = -1 };
	struct iscsi_context *s = itest_connect(&d, &o, 0, err, errlen);

	if (s)
		itest_clear_ua(s, 0);
	return s;
}

/* Whether SendTargets lists name. */
static bool discovered(const char *name)
{
	struct itest_login o = { .discovery = true, .initial_r2t = -1, .immediate_data = -1 };
	char err[256];
	struct iscsi_context *s = itest_connect(&d, &o, 0, err, sizeof(err));
	struct iscsi_discovery_address *list;
	bool found = false;

	if (!s) {
		itest_note("discovery login failed: %s", err);
		return false;
	}
	list = iscsi_discovery_sync(s);
	for (struct iscsi_discovery_address *a = list; a; a = a->next)
		found |= strcmp(a->target_name, name) == 0;
	if (list)
		iscsi_free_discovery_data(s, list);
	itest_close(s);
	return found;
}

static void test_add(void)
{
	struct iscsi_context *s;
	uint8_t buf[512];
	char err[256];
	int rc;

	rc = ctl("--json target add " ADDED " 'size=32M;path=added.img' --alias added-at-run-time");
	if (!itest_ok(rc == 0, "sbcemuctl target add " ADDED " 'size=32M;path=added.img' -> exit 0", "exit %d: %.300s",
		      rc, out))
		return;
	itest_ok(discovered(ADDED) && discovered(ITEST_TARGET),
		 "after target add: SendTargets lists the new target and the old one", NULL);
	s = login(ADDED, err, sizeof(err));
	if (!itest_ok(s != NULL, "login to the added target -> success", "%s", err))
		return;
	itest_ok(itest_capacity10(s, 0) == 65536, "added target LUN 0: READ CAPACITY(10) -> 65536 blocks (size=32M)", NULL);
	itest_pattern(buf, sizeof(buf), 77);
	itest_write16(s, 0, 1000, buf, 1, 512, true, "added target: WRITE(16) FUA LBA 1000");
	itest_close(s);
	ctl("--json targets");
	itest_ok(strstr(out, ADDED) != NULL, "sbcemuctl targets lists the added target", "%.300s", out);
	ctl("save");
	itest_ok(strstr(out, "[target \"" ADDED "\"]") && strstr(out, "alias = added-at-run-time") &&
			 strstr(out, "[lun \"" ADDED "\" 0]"),
		 "save writes the added target's [target] (alias) and [lun] sections", "%.600s", out);
	rc = ctl("lu add 1 'size=8M;path=added1.img' --target " ADDED);
	itest_ok(rc == 0, "sbcemuctl lu add 1 ... --target <added target> -> exit 0", "exit %d", rc);
}

static void test_refused(void)
{
	int rc;

	rc = ctl("target add " ADDED " 'size=8M;path=x.img'");
	itest_ok(rc == 1, "target add with a name that exists -> exit 1", "exit %d", rc);
	rc = ctl("target add iqn.2026-12.org.sbcemu:bad 'size=lots;path=x.img'");
	itest_ok(rc == 1, "target add with size=lots -> exit 1 (the file's own check)", "exit %d", rc);
	rc = ctl("target add iqn.2026-12.org.sbcemu:bad 'size=8M'");
	itest_ok(rc == 1, "target add without a path -> exit 1", "exit %d", rc);
	rc = itest_ctl(&d, out, sizeof(out), "target add iqn.2026-12.org.sbcemu:bad 'size=8M;path=%s/lun0.img'", d.dir);
	itest_ok(rc == 1, "target add on the backing file of the other target's LUN 0 -> exit 1", "exit %d", rc);
	rc = ctl("target add iqn.2026-12.org.sbcemu:bad 'size=8M;path=b.img' --chap-user u --chap-secret short");
	itest_ok(rc == 1, "target add with an 5-byte CHAP secret -> exit 1 (RFC 7143 12.1.3: at least 12)", "exit %d", rc);
	rc = ctl("target add iqn.2026-12.org.sbcemu:bad ''");
	itest_ok(rc == 1 && !itest_daemon_exits_within(&d, 300),
		 "target add with an empty cfgstring -> exit 1 (no LUN 0), the daemon still serving", "exit %d", rc);
	rc = ctl("target add iqn.2026-12.org.sbcemu:bad ';' --tpgt 2");
	itest_ok(rc == 1 && !itest_daemon_exits_within(&d, 300), "target add with cfgstring ';' and a target key only -> exit 1",
		 "exit %d", rc);
	rc = ctl("target add NotAnIqn 'size=8M;path=b.img'");
	itest_ok(rc == 1, "target add with a name that is no iSCSI name -> exit 1", "exit %d", rc);
	rc = ctl("target remove iqn.2026-12.org.sbcemu:nothing");
	itest_ok(rc == 1, "target remove of an unknown target -> exit 1", "exit %d", rc);
	ctl("--json targets");
	itest_ok(!strstr(out, "sbcemu:bad") && !strstr(out, "NotAnIqn"), "after the refusals: no target was added",
		 "%.300s", out);
	itest_ok(access(d.dir, F_OK) == 0, "scratch directory still there", NULL);
}

static void test_remove(void)
{
	struct iscsi_context *s, *other;
	struct scsi_task *task;
	struct itest_async a = { 0 };
	struct itest_raw raw;
	uint8_t tur[6] = { 0 };
	char err[256];
	int rc;

	s = login(ADDED, err, sizeof(err));
	other = login(ITEST_TARGET, err, sizeof(err));
	if (!itest_ok(s && other, "logins to both targets before the removal", "%s", err))
		return;
	/* A held READ keeps a command in the added target's task set. */
	if (ctl("fault add 0 hold --opcode 0x28 --count 1 --target " ADDED) != 0)
		itest_note("fault add hold failed: %.200s", out);
	task = iscsi_read10_task(s, 0, 5, 512, 512, 0, 0, 0, 0, 0, itest_async_cmd_cb, &a);
	itest_service(s, 300, &a.done);
	rc = ctl("target remove " ADDED);
	itest_ok(task && !a.done && rc == 1,
		 "target remove while a READ is held in its task set -> exit 1 (force ends it)", "exit %d, done %d", rc,
		 a.done);
	rc = ctl("--json target remove " ADDED " --force");
	itest_ok(rc == 0 && strstr(out, "\"ended\": 1"), "target remove --force -> exit 0, \"ended\": 1",
		 "exit %d: %.300s", rc, out);
	itest_service(s, 1000, &a.done);
	itest_ok(a.done && a.status != SCSI_STATUS_GOOD,
		 "the session of the removed target: its connection is gone, the held READ ends without GOOD",
		 "done %d, status 0x%x", a.done, (unsigned)a.status);
	if (task && !a.done)
		iscsi_scsi_cancel_task(s, task); /* libiscsi's copy: the callback runs with SCSI_STATUS_CANCELLED */
	if (task && a.done)
		scsi_free_scsi_task(task);
	itest_close(s);
	itest_ok(!discovered(ADDED) && discovered(ITEST_TARGET),
		 "after target remove: SendTargets no longer lists it, still lists the other", NULL);
	rc = itest_raw_login(&raw, &d, ITEST_INITIATOR_1, ADDED, false, false, true, err, sizeof(err));
	itest_ok(rc != 0 && strstr(err, "status class 2 detail 4"),
		 "login to the removed target -> status class 2 detail 4, Target removed (RFC 7143 11.13.5)", "%s", err);
	if (rc == 0)
		itest_raw_close(&raw);
	itest_expect_cmd(other, 0, "the other target's session -> TEST UNIT READY GOOD", tur, 6, ITEST_NONE, NULL, 0, 0,
			 EXPECT_GOOD, NULL);
	itest_close(other);
	ctl("save");
	itest_ok(!strstr(out, ADDED), "save no longer has the removed target", "%.300s", out);
}

static void test_add_again(void)
{
	struct iscsi_context *s;
	uint8_t want[512], got[512];
	char err[256];
	int rc;

	rc = ctl("target add " ADDED " 'size=32M;path=added.img'");
	if (!itest_ok(rc == 0, "the same name and backing file added again -> exit 0 (the file was closed)", "exit %d",
		      rc))
		return;
	s = login(ADDED, err, sizeof(err));
	if (!itest_ok(s != NULL, "login to the target added again -> success", "%s", err))
		return;
	itest_pattern(want, sizeof(want), 77);
	itest_ok(itest_read16(s, 0, 1000, got, 1, 512, "target added again: READ(16) LBA 1000") &&
			 memcmp(want, got, sizeof(got)) == 0,
		 "target added again: LBA 1000 holds what was written before the removal", NULL);
	itest_close(s);
}

static void test_sighup(void)
{
	struct iscsi_context *s;
	char err[256];
	uint64_t end;

	itest_daemon_write_config(&d, reloaded);
	itest_daemon_signal(&d, SIGHUP);
	for (end = itest_now_ms() + 5000; itest_now_ms() < end && !itest_daemon_log_has(&d, "SIGHUP: 2 changes applied");)
		usleep(50000);
	itest_ok(itest_daemon_log_has(&d, "SIGHUP: target " HUP " added") && itest_daemon_log_has(&d, "SIGHUP: target " ADDED " removed"),
		 "SIGHUP: the file's new target added, the one only added at run time removed", NULL);
	itest_ok(itest_daemon_log_has(&d, "SIGHUP: 2 changes applied"), "SIGHUP: 2 changes applied", NULL);
	s = login(HUP, err, sizeof(err));
	itest_ok(s && itest_capacity10(s, 0) == 16384, "login to the target SIGHUP added -> LUN 0 of 16384 blocks (8M)", "%s",
		 s ? "" : err);
	if (s)
		itest_close(s);
}

int main(int argc, char **argv)
{
	itest_init(argc, argv, "test_targets_runtime: targets added and removed at run time");
	itest_daemon_up(&d, "targets-runtime", config);
	test_add();
	test_refused();
	test_remove();
	test_add_again();
	test_sighup();
	itest_ok(itest_daemon_alive(&d), "sbcemud still running after every check", NULL);
	itest_ok(itest_daemon_stop(&d, SIGTERM) == 0, "sbcemud exits 0 on SIGTERM", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
