/*
 * SIGHUP reloads the configuration file (docs/control.md, "Reload on
 * SIGHUP"): an LU added and one removed (REPORTED LUNS DATA HAS CHANGED,
 * 06/3F/0E, SPC-4), an LU grown (CAPACITY DATA HAS CHANGED, 06/2A/09), one
 * write-protected (07/27/00) while the session stays logged in; keys that
 * cannot change live are named in a warning and left alone; a file that
 * does not load changes nothing and its error is logged as file:line.
 * What cannot be a configuration file changes nothing either, without
 * blocking the daemon: /dev/zero, a directory, a FIFO; and an emptied file
 * takes the targets away only when asked (sbcemuctl reload
 * --remove-all-targets).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "itest.h"

#define LUN(n, size, extra) "[lun \"" ITEST_TARGET "\" " #n "]\npath = @DIR@/lun" #n ".img\nsize = " size "\n" extra

static const char before[] = "[iscsi]\nmax_burst_length = 262144\n" LUN(0, "16M", "") LUN(1, "16M", "")
	LUN(3, "16M", "");
/* A write-protected backing file is opened read-only and cannot grow: the resize and the protection go to two LUs. */
static const char after[] = "[daemon]\nworkers = 2\n"
			    "[iscsi]\nmax_burst_length = 131072\nfirst_burst_length = 65536\n"
			    LUN(0, "32M", "vendor = CHANGED\n") LUN(2, "16M", "") LUN(3, "16M", "write_protect = true\nmode_defaults = d_sense=1\n");
static const char broken[] = "[lun \"" ITEST_TARGET "\" 0]\npath = @DIR@/lun0.img\nsize = lots\n";

static struct itest_daemon d;

/* Sends SIGHUP and waits until the daemon logs the reload's last line (or 5 s). */
static bool hangup(const char *last)
{
	uint64_t end = itest_now_ms() + 5000;
	char line[512];
	long seen = 0;
	FILE *f;

	f = fopen(d.log, "r");
	if (f) {
		fseek(f, 0, SEEK_END);
		seen = ftell(f);
		fclose(f);
	}
	itest_daemon_signal(&d, SIGHUP);
	while (itest_now_ms() < end) {
		f = fopen(d.log, "r");
		if (f) {
			fseek(f, seen, SEEK_SET);
			while (fgets(line, sizeof(line), f))
				if (strstr(line, last)) {
					fclose(f);
					return true;
				}
			fclose(f);
		}
		usleep(50000);
	}
	return false;
}

/* Whether the daemon still answers its control socket (its loop is not blocked). */
static bool answers(void)
{
	char out[4096];

	return itest_ctl(&d, out, sizeof(out), "status") == 0;
}

/* The configuration file's path replaced by what cannot be one; each SIGHUP changes nothing. */
static void unreadable_files(struct iscsi_context *s)
{
	static const uint8_t tur[6] = { 0 };
	char out[4096];

	unlink(d.conf);
	if (symlink("/dev/zero", d.conf) == 0)
		itest_ok(hangup("sbcemud.conf: not a regular file (a device)") && answers(),
			 "SIGHUP, the file a link to /dev/zero: not read (\"not a regular file (a device)\")", NULL);
	unlink(d.conf);
	if (mkdir(d.conf, 0700) == 0)
		itest_ok(hangup("sbcemud.conf: not a regular file (a directory)") && answers(),
			 "SIGHUP, the file a directory: \"not a regular file (a directory)\"", NULL);
	rmdir(d.conf);
	if (mkfifo(d.conf, 0600) == 0)
		itest_ok(hangup("sbcemud.conf: not a regular file (a FIFO)") && answers(),
			 "SIGHUP, the file a FIFO nobody writes: refused at once, the daemon goes on serving", NULL);
	unlink(d.conf);
	itest_daemon_write_config(&d, "");
	itest_ok(hangup("has no target: refusing to remove every running target"),
		 "SIGHUP with an emptied file: refused, every target stays (the log names --remove-all-targets)", NULL);
	itest_expect_cmd(s, 0, "... the target still serves: TEST UNIT READY LUN 0 -> GOOD", tur, 6, ITEST_NONE, NULL,
			 0, 0, EXPECT_GOOD, NULL);
	itest_ctl_expect(&d, out, sizeof(out), 1, "reload", "sbcemuctl reload with the emptied file -> refused (exit 1)");
	itest_ctl_expect(&d, out, sizeof(out), 0, "reload --remove-all-targets",
			 "sbcemuctl reload --remove-all-targets -> the targets go (exit 0)");
	itest_ctl(&d, out, sizeof(out), "--json targets");
	itest_ok(strstr(out, ITEST_TARGET) == NULL, "... and the target is gone", "%.200s", out);
}

int main(int argc, char **argv)
{
	uint8_t tur[6] = { 0 }, block[512] = { 0 }, write10[10] = { 0x2a, 0, 0, 0, 0, 100, 0, 0, 1, 0 };
	struct iscsi_context *s;
	struct itest_result r;
	long long n;

	itest_init(argc, argv, "test_reload: SIGHUP reloads the configuration file");
	itest_daemon_up(&d, "reload", before);
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s)
		return itest_finish();
	itest_clear_ua(s, 1);
	itest_clear_ua(s, 3);

	/* A file that does not load: nothing changes. */
	itest_daemon_write_config(&d, broken);
	itest_ok(hangup("does not load: nothing changed"), "SIGHUP with a broken file: the daemon says nothing changed",
		 NULL);
	itest_ok(itest_daemon_log_has(&d, "sbcemud.conf:3: lun \"" ITEST_TARGET "\" 0.size: \"lots\" is not a size"),
		 "... and logs the error as file:line: section.key: reason", NULL);
	itest_expect_cmd(s, 0, "after the broken reload: TEST UNIT READY LUN 0 -> GOOD (no unit attention)", tur, 6,
			 ITEST_NONE, NULL, 0, 0, EXPECT_GOOD, NULL);

	/* The changed file. */
	itest_daemon_write_config(&d, after);
	if (!itest_ok(hangup("SIGHUP: 5 changes applied, 4 at the next start"),
			      "SIGHUP: 5 changes applied (LUN 1 removed, LUN 2 added, LUN 0 size, LUN 3 write_protect and "
			      "mode_defaults), 4 "
			      "at the next start (workers, max_burst_length, first_burst_length, vendor)", NULL)) {
		itest_daemon_log_tail(&d, 20);
		return itest_finish();
	}
	itest_ok(itest_daemon_log_has(&d, "[iscsi] max_burst_length changed (262144 -> 131072): takes effect at the next start"),
		 "the [iscsi] change is named as taking effect at the next start", NULL);
	itest_ok(itest_daemon_log_has(&d, "vendor changed (SBCEMU -> CHANGED)") || itest_daemon_log_has(&d, "] vendor changed"),
		 "an LU key that cannot change live (vendor) is named", NULL);
	itest_expect_cmd(s, 0, "after the reload: TEST UNIT READY LUN 0 -> 06/2A/09 (CAPACITY DATA HAS CHANGED)", tur, 6,
			 ITEST_NONE, NULL, 0, 0, EXPECT_SENSE(6, 0x2a, 0x09), NULL);
	itest_expect_cmd(s, 0, "... the next TEST UNIT READY -> 06/3F/0E (REPORTED LUNS DATA HAS CHANGED)", tur, 6,
			 ITEST_NONE, NULL, 0, 0, EXPECT_SENSE(6, 0x3f, 0x0e), NULL);
	itest_clear_ua(s, 0);
	n = itest_capacity10(s, 0);
	itest_ok(n == 65536, "after the reload: READ CAPACITY(10) LUN 0 -> 65536 blocks (size = 32M)", "%lld", n);
	itest_clear_ua(s, 3);
	itest_expect_cmd(s, 3, "after the reload: WRITE(10) LUN 3 -> 07/27/00 (write_protect = true)", write10, 10,
			 ITEST_OUT, block, sizeof(block), 0, EXPECT_SENSE(7, 0x27, 0), &r);
	itest_ok(r.sense.len > 0 && (r.sense.raw[0] & 0x7f) == 0x72,
		 "... in descriptor format (72h): mode_defaults = d_sense=1 applied live (SPC-4 7.5.8 D_SENSE)",
		 "response code %02Xh", r.sense.len ? r.sense.raw[0] : 0);
	itest_result_free(&r);
	itest_expect_cmd(s, 1, "after the reload: TEST UNIT READY LUN 1 (removed) -> 05/25/00", tur, 6, ITEST_NONE, NULL,
			 0, 0, EXPECT_SENSE(5, 0x25, 0), NULL);
	itest_clear_ua(s, 2);
	n = itest_capacity10(s, 2);
	itest_ok(n == 32768, "after the reload: LUN 2 (added) -> 32768 blocks", "%lld", n);

	/* The same file again: nothing left to apply but what needs a restart. */
	itest_ok(hangup("SIGHUP: 0 changes applied, 4 at the next start"),
		 "SIGHUP with the same file: 0 changes applied, the same 4 at the next start", NULL);
	unreadable_files(s);
	itest_close(s);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
