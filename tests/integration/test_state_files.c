/*
 * The state directory is one daemon's own (docs/security.md):
 *
 * - One daemon per state directory and per backing file: a second sbcemud
 *   on the same state directory, or on a backing file another one serves,
 *   fails at start with one line naming the holder's pid and the path
 *   (flock(2) on <state_dir>/sbcemud.lock and on each backing file).  The
 *   kernel drops the locks when a daemon dies, so a restart after kill -9
 *   works; --check takes no lock, yet says what start-up would refuse: a
 *   state directory another daemon holds.
 * - The files the daemon makes under it are 0600, its directories 0700;
 *   no symbolic link is followed there (open(2) O_NOFOLLOW): one planted in
 *   place of a state file fails the LU's start, one in place of a
 *   temporary file fails the write, and the file it points to stays as it was.
 * - A configuration file or a state directory that its group or every user
 *   may write is named in a warning at start.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"

/* LUN 0: a volatile write cache; LUN 1: PI type 1 (FORMAT UNIT saves its format); LUN 2: zoned (zones.state). */
#define CONFIG_LUNS(DIR)                                                                                            \
	"[target \"" ITEST_TARGET "\"]\n"                                                                          \
	"[lun \"" ITEST_TARGET "\" 0]\n"                                                                           \
	"path = " DIR "/lun0.img\n"                                                                                \
	"size = 16M\n"                                                                                             \
	"logical_block_size = 512\n"                                                                               \
	"volatile_write_cache = true\n"                                                                            \
	"[lun \"" ITEST_TARGET "\" 1]\n"                                                                           \
	"path = " DIR "/lun1.img\n"                                                                                \
	"size = 16M\n"                                                                                             \
	"logical_block_size = 512\n"                                                                               \
	"protection_type = 1\n"                                                                                    \
	"[lun \"" ITEST_TARGET "\" 2]\n"                                                                           \
	"path = " DIR "/lun2.img\n"                                                                                \
	"kind = zbc-hm\n"                                                                                          \
	"size = 8M\n"                                                                                              \
	"zone_size = 1M\n"                                                                                         \
	"conventional_zones = 1\n"

static const char config[] = CONFIG_LUNS("@DIR@");

/* The whole file (at most len - 1 bytes) into buf, NUL-terminated; "" when unreadable. */
static const char *slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	return buf;
}

static bool log_has(const struct itest_daemon *d, const char *needle)
{
	static char log[1 << 20];

	return strstr(slurp(d->log, log, sizeof(log)), needle) != NULL;
}

/* A second daemon (scratch name) with this configuration text, its state directory state (NULL: its own). */
static int start_second(struct itest_daemon *d2, const char *name, const char *text, const char *state)
{
	itest_daemon_init(d2, name);
	if (state)
		snprintf(d2->state, sizeof(d2->state), "%s", state);
	if (itest_daemon_write_config(d2, text) != 0)
		return -1;
	return itest_daemon_start(d2);
}

/* ---- item A: one daemon per state directory and per backing file ---- */

static void test_locks(struct itest_daemon *d)
{
	struct itest_daemon d2, d3;
	char path[700], want[1600], buf[64], cmd[2200], text[8192];
	struct iscsi_context *s;
	struct stat st;
	int rc;

	snprintf(path, sizeof(path), "%s/sbcemud.lock", d->state);
	itest_ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600,
		 "the state directory's lock file sbcemud.lock exists, mode 0600", "mode %04o",
		 (unsigned)(st.st_mode & 07777));
	snprintf(want, sizeof(want), "%ld\n", (long)d->pid);
	itest_ok(strcmp(slurp(path, buf, sizeof(buf)), want) == 0, "the lock file holds the daemon's pid",
		 "\"%s\", want %ld", buf, (long)d->pid);

	/* Same state directory, its own backing files. */
	rc = start_second(&d2, "lock-second", config, d->state);
	snprintf(want, sizeof(want),
		 "error: the state directory %s is in use by another sbcemud (pid %ld, lock file %s)", d->state,
		 (long)d->pid, path);
	itest_ok(rc != 0 && log_has(&d2, want),
		 "a second sbcemud on the same state directory fails at start naming the holder's pid and the lock",
		 "%s; want \"%s\"", rc == 0 ? "it started" : "other message", want);
	itest_daemon_cleanup(&d2);

	/* Its own state directory, the first daemon's backing file for LUN 0. */
	snprintf(text, sizeof(text), CONFIG_LUNS("%s"), d->dir, d->dir, d->dir);
	rc = start_second(&d3, "lock-backing", text, NULL);
	snprintf(want, sizeof(want), "%s/lun0.img: in use by another process (pid %ld holds its lock)", d->dir,
		 (long)d->pid);
	itest_ok(rc != 0 && log_has(&d3, want),
		 "a second sbcemud on another's backing file fails at start naming the holder's pid and the file",
		 "%s; want \"%s\"", rc == 0 ? "it started" : "other message", want);
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s')\"", d3.state);
	rc = system(cmd);
	itest_ok(WIFEXITED(rc) && WEXITSTATUS(rc) == 0,
		 "... and, refused, it created nothing in its state directory (the backing files' locks are tried first)",
		 "%s is not empty", d3.state);
	itest_daemon_cleanup(&d3);

	s = itest_session(d, ITEST_INITIATOR_1, 0);
	itest_ok(s != NULL && itest_daemon_alive(d), "the first daemon still serves", "%s", s ? "" : "no session");
	itest_close(s);

	snprintf(cmd, sizeof(cmd), "'%s' -c '%s' --state-dir '%s' --check >/dev/null 2>&1", d->bin, d->conf, d->state);
	rc = system(cmd);
	itest_ok(WIFEXITED(rc) && WEXITSTATUS(rc) == 1,
		 "sbcemud --check while the daemon runs on its state directory: exit 1, as the start would be refused",
		 "status 0x%x", rc);
	itest_ok(itest_daemon_alive(d) && (s = itest_session(d, ITEST_INITIATOR_1, 0)) != NULL,
		 "... and --check took no lock: the daemon serves on", NULL);
	itest_close(s);

	/* kill -9: the kernel drops the locks with the process (flock(2)). */
	itest_daemon_stop(d, SIGKILL);
	itest_ok(itest_daemon_start(d) == 0, "after kill -9 the daemon starts again on its state directory", "see log");
	snprintf(want, sizeof(want), "%ld\n", (long)d->pid);
	itest_ok(strcmp(slurp(path, buf, sizeof(buf)), want) == 0, "... and the lock file holds the new pid",
		 "\"%s\"", buf);
}

/* ---- item B: modes, no symbolic links followed ---- */

static int bad_modes;

static int check_mode(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	/* The harness made the state directory itself; everything below it is the daemon's. */
	if (ftw->level == 0)
		return 0;
	if ((flag == FTW_F && (st->st_mode & 07777) != 0600) || (flag == FTW_D && (st->st_mode & 07777) != 0700) ||
	    flag == FTW_SL) {
		itest_note("  %s: mode %04o%s", path, (unsigned)(st->st_mode & 07777), flag == FTW_SL ? " (a link)" : "");
		bad_modes++;
	}
	return 0;
}

static void select_control_page(struct iscsi_context *s, struct itest_result *r)
{
	uint8_t sense10[10] = { 0x5a, 0x08, 0x0a, 0, 0, 0, 0, 0x01, 0x00, 0 }, buf[64] = { 0 };
	uint8_t select10[10] = { 0x55, 0x11, 0, 0, 0, 0, 0, 0, 0, 0 }; /* PF = 1, SP = 1 */
	struct itest_result m;
	int len;

	itest_cmd(s, 0, sense10, 10, ITEST_IN, NULL, 0, 256, &m);
	len = m.status == 0 && m.data_len >= 8 + 12 ? 12 : 0;
	if (len)
		memcpy(buf + 8, m.data + 8 + itest_get_be16(m.data + 6), (size_t)len);
	itest_result_free(&m);
	buf[8] &= 0x7f; /* PS is reserved in MODE SELECT */
	itest_put_be16(select10 + 7, (uint16_t)(8 + len));
	itest_cmd(s, 0, select10, 10, ITEST_OUT, buf, (size_t)(8 + len), 0, r);
}

static void test_files(struct itest_daemon *d)
{
	uint8_t prout[10] = { 0x5f, 0x00, 0, 0, 0, 0, 0, 0, 24, 0 }, param[24] = { 0 };
	uint8_t format[6] = { 0x04, 0x80, 0, 0, 0, 0 }; /* FMTPINFO = 10b: type 1, no parameter list */
	char lu0[800], lu2[800], link[900], victim[700], outside[700], buf[64], want[1200];
	struct iscsi_context *s = itest_session(d, ITEST_INITIATOR_1, 0);
	struct itest_result r;
	struct stat st = { 0 };
	bool made;
	int fd;

	if (!s)
		return;
	itest_clear_ua(s, 1);
	/* Every kind of state file: saved mode pages, APTPL reservations, a PI format, zone state. */
	select_control_page(s, &r);
	itest_ok(r.status == 0, "MODE SELECT(10) SP=1 saves the Control mode page", "%s", itest_result_str(&r));
	itest_result_free(&r);
	itest_put_be64(param + 8, 0xabc);
	param[20] = 0x01; /* APTPL */
	itest_expect_cmd(s, 0, "PERSISTENT RESERVE OUT REGISTER APTPL=1 -> GOOD", prout, 10, ITEST_OUT, param, 24, 0,
			 EXPECT_GOOD, NULL);
	itest_expect_cmd(s, 1, "FORMAT UNIT FMTPINFO=10b saves the protection format -> GOOD", format, 6, ITEST_NONE,
			 NULL, 0, 0, EXPECT_GOOD, NULL);
	bad_modes = 0;
	nftw(d->state, check_mode, 16, FTW_PHYS);
	itest_ok(bad_modes == 0, "every file the daemon made in its state directory is 0600, every directory 0700",
		 "%d other(s), listed above", bad_modes);

	/* A link planted in place of the temporary file of a state file, while the daemon runs. */
	snprintf(lu0, sizeof(lu0), "%s/%s/lun0", d->state, ITEST_TARGET);
	snprintf(link, sizeof(link), "%s/mode_pages.tmp", lu0);
	snprintf(victim, sizeof(victim), "%s/victim", d->dir);
	fd = open(victim, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	if (fd < 0 || write(fd, "precious", 8) != 8 || symlink(victim, link) != 0)
		itest_note("cannot plant the link %s: %s", link, strerror(errno));
	if (fd >= 0)
		close(fd);
	select_control_page(s, &r);
	itest_result_free(&r);
	itest_ok(strcmp(slurp(victim, buf, sizeof(buf)), "precious") == 0,
		 "a saving MODE SELECT does not write through a link planted as mode_pages.tmp (O_NOFOLLOW)",
		 "the file it points to now holds %zu bytes", strlen(buf));
	unlink(link);
	unlink(victim);
	itest_close(s);

	/* A dangling link planted in place of zones.state, the daemon stopped. */
	itest_daemon_stop(d, SIGTERM);
	snprintf(lu2, sizeof(lu2), "%s/%s/lun2", d->state, ITEST_TARGET);
	snprintf(link, sizeof(link), "%s/zones.state", lu2);
	snprintf(outside, sizeof(outside), "%s/outside.state", d->dir);
	snprintf(want, sizeof(want), "%s/zones.state.saved", lu2);
	if (rename(link, want) != 0 || symlink(outside, link) != 0)
		itest_note("cannot plant the link %s: %s", link, strerror(errno));
	snprintf(want, sizeof(want), "%s is a symbolic link; the daemon follows none in its state directory", link);
	itest_ok(itest_daemon_start(d) != 0 && log_has(d, want),
		 "a link in place of zones.state fails the LU's start, with the link named", "%s; want \"%s\"",
		 d->pid > 0 ? "it started" : "other message", want);
	made = stat(outside, &st) == 0;
	itest_ok(!made, "... and the file it points to is not created", "%s exists (mode %04o)", outside,
		 (unsigned)(st.st_mode & 07777));
	itest_daemon_stop(d, SIGTERM);
	unlink(link);
	snprintf(want, sizeof(want), "%s/zones.state.saved", lu2);
	rename(want, link);
}

/* ---- the configuration file's mode ---- */

static void test_config_mode(void)
{
	struct itest_daemon d;
	char want[800];

	itest_daemon_init(&d, "conf-mode");
	if (itest_daemon_write_config(&d, config) != 0 || chmod(d.conf, 0666) != 0) {
		itest_ok(false, "write a configuration file of mode 0666", "%s", strerror(errno));
		return;
	}
	itest_daemon_start(&d);
	snprintf(want, sizeof(want), "warn: the configuration file %s is writable by every user (mode 0666)", d.conf);
	itest_ok(log_has(&d, want), "a configuration file of mode 0666 is named in a warning at start", "want \"%s\"",
		 want);
	itest_daemon_stop(&d, SIGTERM);
	chmod(d.conf, 0620);
	itest_daemon_start(&d);
	snprintf(want, sizeof(want), "warn: the configuration file %s is writable by its group (mode 0620)", d.conf);
	itest_ok(log_has(&d, want), "a configuration file of mode 0620 is named in a warning at start", "want \"%s\"",
		 want);
	itest_daemon_stop(&d, SIGTERM);
	chmod(d.state, 0777);
	itest_daemon_start(&d);
	snprintf(want, sizeof(want), "warn: the state directory %s is writable by every user (mode 0777)", d.state);
	itest_ok(log_has(&d, want), "a state directory of mode 0777 is named in a warning at start", "want \"%s\"",
		 want);
	itest_daemon_cleanup(&d);
}

/* A backing file that is a symbolic link is followed, with a warning naming the link and its target. */
static void test_backing_link(void)
{
	struct itest_daemon d4;
	char text[1024], real[700], link[700], want[1600];
	int fd, rc;

	itest_daemon_init(&d4, "backing-link");
	snprintf(real, sizeof(real), "%s/real.img", d4.dir);
	snprintf(link, sizeof(link), "%s/link.img", d4.dir);
	fd = open(real, O_CREAT | O_WRONLY, 0600);
	if (fd < 0 || ftruncate(fd, 16 << 20) != 0 || symlink(real, link) != 0) {
		itest_ok(false, "a backing file behind a symbolic link", "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	snprintf(text, sizeof(text), "[target \"" ITEST_TARGET "\"]\n[lun \"" ITEST_TARGET "\" 0]\npath = %s\n", link);
	rc = itest_daemon_write_config(&d4, text) == 0 ? itest_daemon_start(&d4) : -1;
	snprintf(want, sizeof(want), "the backing file %s is a symbolic link to %s", link, real);
	itest_ok(rc == 0 && log_has(&d4, want), "a backing file that is a symbolic link: followed, with a warning",
		 "%s; want \"%s\"", rc == 0 ? "no warning" : "no start", want);
	itest_daemon_cleanup(&d4);
}

int main(int argc, char **argv)
{
	struct itest_daemon d;

	itest_init(argc, argv, "test_state_files: one daemon per state directory, its files 0600, no links followed");
	itest_daemon_up(&d, "state-files", config);
	test_locks(&d);
	test_files(&d);
	itest_daemon_cleanup(&d);
	test_config_mode();
	test_backing_link();
	return itest_finish();
}
