/*
 * sbcemuctl save (docs/control.md): the running configuration, with what
 * changed at run time (an LU added, one removed, a resize, write
 * protection), written as a file that sbcemud --check accepts and that a
 * restarted sbcemud serves the same way: the LUs REPORT LUNS lists, the
 * capacity READ CAPACITY(10) reports, 07/27/00 WRITE PROTECTED for a write,
 * and the fault rules made of the configuration's fault keys.
 *
 * Environment: SBCEMUCTL (the sbcemuctl binary; CMake sets it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"

static const char config[] = "[lun \"" ITEST_TARGET "\" 0]\n"
			     "path = @DIR@/lun0.img\nsize = 16M\n"
			     "[lun \"" ITEST_TARGET "\" 1]\n"
			     "path = @DIR@/lun1.img\nsize = 16M\nprofile = usb-bridge\nquirks = no-vpd\n"
			     "[lun \"" ITEST_TARGET "\" 2]\n"
			     "path = @DIR@/lun2.img\nsize = 64M\nkind = zbc-hm\nzone_size = 8M\noffline_zones = 3\n"
			     "[lun \"" ITEST_TARGET "\" 3]\n"
			     "path = @DIR@/lun3.img\nsize = 16M\nprotection_type = 1\npi_faults = guard 10\n";

static struct itest_daemon d;
static char saved[65536], out[65536];

/* REPORT LUNS: a bit per LUN 0..63 present. */
static uint64_t report_luns(struct iscsi_context *s)
{
	uint8_t cdb[12] = { 0xa0, 0, 0, 0, 0, 0, 0, 0, 0x04, 0x00, 0, 0 };
	struct itest_result r;
	uint64_t bits = 0;

	itest_cmd(s, 0, cdb, 12, ITEST_IN, NULL, 0, 1024, &r);
	if (r.transport_ok && r.status == 0 && r.data_len >= 8)
		for (int off = 8; off + 8 <= r.data_len && off < 8 + (int)itest_get_be32(r.data); off += 8)
			if (r.data[off + 1] < 64)
				bits |= 1ull << r.data[off + 1];
	itest_result_free(&r);
	return bits;
}

static bool ctl(const char *args, const char *name)
{
	return itest_ctl_expect(&d, out, sizeof(out), 0, args, name);
}

int main(int argc, char **argv)
{
	uint8_t block[512] = { 0 }, write10[10] = { 0x2a, 0, 0, 0, 0, 100, 0, 0, 1, 0 };
	struct iscsi_context *s;
	char cmd[2048];
	FILE *f;
	int st;

	itest_init(argc, argv, "test_save: sbcemuctl save writes the running configuration");
	itest_daemon_up(&d, "save", config);
	if (!ctl("lu add 5 'size=8M;path=added5.img'", "sbcemuctl lu add 5 -> exit 0") ||
	    !ctl("lu remove 1", "sbcemuctl lu remove 1 -> exit 0") ||
	    !ctl("lu resize 0 32M", "sbcemuctl lu resize 0 32M -> exit 0") ||
	    !ctl("lu write-protect 0 on", "sbcemuctl lu write-protect 0 on -> exit 0"))
		return itest_finish();
	if (!itest_ok(itest_ctl(&d, saved, sizeof(saved), "save") == 0, "sbcemuctl save -> exit 0", NULL))
		return itest_finish();
	itest_ok(strstr(saved, "[lun \"" ITEST_TARGET "\" 5]") && !strstr(saved, "[lun \"" ITEST_TARGET "\" 1]") &&
			 strstr(saved, "size = 33554432\n") && strstr(saved, "write_protect = true\n") &&
			 strstr(saved, "offline_zones = 3\n") && strstr(saved, "pi_faults = guard 10\n"),
		 "the saved text has LUN 5, not LUN 1, LUN 0's new size and write protection, the fault keys", "%s",
		 saved);

	/* sbcemud --check accepts it once the daemon that holds the state directory is gone. */
	snprintf(cmd, sizeof(cmd), "%s/saved.ini", d.dir);
	f = fopen(cmd, "w");
	if (f) {
		fputs(saved, f);
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd), "'%s' --check -c '%s/saved.ini' >>'%s' 2>&1", d.bin, d.dir, d.log);
	st = system(cmd);
	itest_ok(WIFEXITED(st) && WEXITSTATUS(st) == 1,
		 "sbcemud --check -c <saved> while the daemon holds its state directory -> exit 1", "status %d", st);
	itest_daemon_stop(&d, 15);
	st = system(cmd);
	itest_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "sbcemud --check -c <saved> -> exit 0", "status %d", st);

	/* A restart on it serves the same device. */
	if (itest_daemon_write_config(&d, saved) != 0 || itest_daemon_start(&d) != 0) {
		itest_ok(false, "sbcemud starts on the saved configuration", NULL);
		return itest_finish();
	}
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (s) {
		for (int lun = 1; lun < 6; lun++)
			itest_clear_ua(s, lun);
		itest_ok(report_luns(s) == ((1ull << 0) | (1ull << 2) | (1ull << 3) | (1ull << 5)),
			 "after the restart: REPORT LUNS lists LUNs 0, 2, 3 and 5", "bits %llx",
			 (unsigned long long)report_luns(s));
		itest_ok(itest_capacity10(s, 0) == 65536, "after the restart: READ CAPACITY(10) of LUN 0 -> 65536 blocks",
			 "%lld", itest_capacity10(s, 0));
		itest_expect_cmd(s, 0, "after the restart: WRITE(10) to LUN 0 -> 07/27/00 (WRITE PROTECTED)", write10, 10,
				 ITEST_OUT, block, sizeof(block), 0, EXPECT_SENSE(7, 0x27, 0), NULL);
		itest_ok(itest_capacity10(s, 5) == 16384, "after the restart: LUN 5 (added at run time) has 16384 blocks",
			 "%lld", itest_capacity10(s, 5));
		itest_close(s);
	}
	itest_ok(itest_ctl(&d, out, sizeof(out), "--json fault list") == 0 && strstr(out, "\"zone-offline\"") &&
			 strstr(out, "\"corrupt-pi\""),
		 "after the restart: the fault keys are fault rules again (zone-offline, corrupt-pi)", "%.300s", out);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);

	/* daemon.autosave: a change the control makes is in the -c file at once; the old file as .bak. */
	itest_daemon_stop(&d, 15);
	{
		char *daemon_section = strstr(saved, "[daemon]\n");

		if (daemon_section)
			snprintf(out, sizeof(out), "%.*s[daemon]\nautosave = true\n%s", (int)(daemon_section - saved), saved,
				 daemon_section + strlen("[daemon]\n"));
	}
	if (itest_daemon_write_config(&d, out) != 0 || itest_daemon_start(&d) != 0) {
		itest_ok(false, "sbcemud starts with daemon.autosave = true", NULL);
		return itest_finish();
	}
	ctl("lu add 6 'size=8M;path=added6.img'", "autosave: sbcemuctl lu add 6 -> exit 0");
	f = fopen(d.conf, "r");
	saved[0] = '\0';
	if (f) {
		saved[fread(saved, 1, sizeof(saved) - 1, f)] = '\0';
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd), "%s.bak", d.conf);
	itest_ok(strstr(saved, "[lun \"" ITEST_TARGET "\" 6]") && strstr(saved, "autosave = true") &&
			 access(cmd, F_OK) == 0,
		 "autosave: the -c file now has LUN 6 (and autosave), the one before it is FILE.bak", "%.400s", saved);
	itest_daemon_stop(&d, 15);
	if (itest_daemon_start(&d) == 0 && (s = itest_session(&d, ITEST_INITIATOR_1, 6))) {
		itest_ok(itest_capacity10(s, 6) == 16384, "autosave: after a restart LUN 6 is there (16384 blocks)", "%lld",
			 itest_capacity10(s, 6));
		itest_close(s);
	} else {
		itest_ok(false, "autosave: sbcemud restarts on the autosaved file", NULL);
	}
	itest_daemon_cleanup(&d);
	return itest_finish();
}
