/*
 * be_file.c, what keeps the daemon to its own files: the exclusive lock on
 * a backing file (flock(2): another process is refused and named, this
 * process may open the file again), be_state_open() (O_NOFOLLOW, 0600),
 * the intent log refused when a symbolic link stands in its place, and
 * be_file_check() / be_file_check_dir(), which find what be_file_open would
 * refuse without creating anything.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"

#define MIB (1024u * 1024u)

static char dir[256];
static char path[300];

static void setup(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/be_file_lock_test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/lun.img", dir);
}

static void teardown(void)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/*
 * be_file_open(path) in another process, as another daemon would: this
 * program run again with "--open PATH" (a forked child alone would share
 * the lock, which fork(2) hands down).  Its error message in err, "" when
 * it opened the file.
 */
static void open_in_child(char *err, size_t errlen)
{
	int fds[2];
	pid_t pid;
	ssize_t n;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		execl("/proc/self/exe", "test_be_file_lock", "--open", path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	n = read(fds[0], err, errlen - 1);
	err[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	waitpid(pid, NULL, 0);
}

/* The other process of open_in_child(). */
static int open_and_report(const char *p)
{
	char why[512] = "";
	struct backend *be = be_file_open(p, MIB, false, NULL, why, sizeof(why));

	fputs(why, stdout);
	be_close(be);
	return 0;
}

START_TEST(another_process_is_refused_and_the_holder_named)
{
	char err[512], want[512];
	struct backend *be = be_file_open(path, MIB, false, NULL, err, sizeof(err));

	ck_assert_msg(be != NULL, "%s", err);
	open_in_child(err, sizeof(err));
	snprintf(want, sizeof(want), "%s: in use by another process (pid %ld holds its lock)", path, (long)getpid());
	ck_assert_str_eq(err, want);
	be_close(be);
	open_in_child(err, sizeof(err));
	ck_assert_msg(err[0] == '\0', "after the close, another process opens it: %s", err);
}
END_TEST

START_TEST(this_process_opens_again_and_the_lock_outlives_the_first)
{
	char err[512] = "";
	struct backend *a = be_file_open(path, MIB, false, NULL, err, sizeof(err));
	struct backend *b;

	ck_assert_msg(a != NULL, "%s", err);
	/* A TCMU backstore added back while its old LU is still flushing opens the file again. */
	b = be_file_open(path, MIB, false, NULL, err, sizeof(err));
	ck_assert_msg(b != NULL, "the same process opens the file a second time: %s", err);
	be_close(a);
	open_in_child(err, sizeof(err));
	ck_assert_msg(strstr(err, "in use by another process") != NULL,
		      "the second opener still holds the lock after the first closed: \"%s\"", err);
	be_close(b);
	open_in_child(err, sizeof(err));
	ck_assert_msg(err[0] == '\0', "%s", err);
}
END_TEST

START_TEST(state_files_are_0600_and_never_followed)
{
	char file[320], link[320], victim[320];
	struct stat st;
	mode_t old = umask(022);
	int fd;

	snprintf(file, sizeof(file), "%s/state", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	fd = be_state_open(file, O_RDWR | O_CREAT);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_msg((st.st_mode & 07777) == 0600, "created mode %04o, want 0600", (unsigned)(st.st_mode & 07777));
	ck_assert_int_ne(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	close(fd);
	/* open(2) O_NOFOLLOW: ELOOP when the last component is a symbolic link, dangling or not. */
	ck_assert_int_eq(symlink(victim, link), 0);
	ck_assert_int_eq(be_state_open(link, O_RDWR | O_CREAT | O_TRUNC), -1);
	ck_assert_int_eq(errno, ELOOP);
	ck_assert_int_ne(access(victim, F_OK), 0);
	ck_assert_str_eq(be_state_strerror(ELOOP), "it is a symbolic link, which is never followed");
	umask(old);
}
END_TEST

START_TEST(a_symbolic_link_in_place_of_the_intent_log_is_refused)
{
	char journal[320], victim[320], err[512] = "", want[700], back[16] = "";
	struct backend *be = be_file_open(path, MIB, false, NULL, err, sizeof(err));
	int fd;

	ck_assert_msg(be != NULL, "%s", err);
	be_close(be);
	snprintf(journal, sizeof(journal), "%s.journal", path);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	fd = open(victim, O_CREAT | O_WRONLY, 0600);
	ck_assert_int_eq(write(fd, "precious", 8), 8);
	close(fd);
	ck_assert_int_eq(symlink(victim, journal), 0);
	ck_assert_ptr_null(be_file_open(path, MIB, false, NULL, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: cannot open the journal: it is a symbolic link, which is never followed",
		 journal);
	ck_assert_str_eq(err, want);
	fd = open(victim, O_RDONLY);
	ck_assert_int_eq(read(fd, back, sizeof(back)), 8);
	close(fd);
	ck_assert_str_eq(back, "precious");
}
END_TEST

static void expect_check(const char *p, uint64_t size, bool read_only, bool make_parents, const char *want)
{
	char err[512] = "", full[700];

	snprintf(full, sizeof(full), want, p);
	ck_assert_int_eq(be_file_check(p, size, read_only, make_parents, err, sizeof(err)), want[0] ? -1 : 0);
	ck_assert_str_eq(err, want[0] ? full : "");
}

START_TEST(check_finds_what_open_refuses_and_creates_nothing)
{
	char missing[320], deep[340], file[320];
	struct stat st;
	int fd;

	snprintf(missing, sizeof(missing), "%s/sub/lun.img", dir);
	snprintf(deep, sizeof(deep), "%s/file/lun.img", dir);
	snprintf(file, sizeof(file), "%s/file", dir);
	expect_check("/proc/version", MIB, false, false,
		     "%s is on procfs, a kernel pseudo file system, not storage");
	expect_check(dir, MIB, false, false, "%s: neither a regular file nor a block device");
	expect_check(path, 0, false, true, "%s: the file does not exist and no size is configured to create it");
	expect_check(path, MIB, true, true, "%s: the file does not exist, and a read-only one is never created");
	expect_check(path, MIB, false, false, "");
	/* Missing directories above: made by the caller (make_parents), else an error. */
	expect_check(missing, MIB, false, true, "");
	{
		char want[700];

		snprintf(want, sizeof(want), "%s/sub: No such file or directory", dir);
		expect_check(missing, MIB, false, false, want);
	}
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	close(fd);
	{
		char want[700];

		snprintf(want, sizeof(want), "%s/file is not a directory", dir);
		expect_check(deep, MIB, false, true, want);
	}
	expect_check(file, 0, false, false, "%s: the file is empty and no size is configured");
	ck_assert_int_eq(truncate(file, 2 * MIB), 0);
	expect_check(file, MIB, false, false,
		     "%s: the file holds 2097152 bytes, more than the configured size 1048576; refusing to shrink it");
	expect_check(file, 4 * MIB, true, false,
		     "%s: the file holds 2097152 bytes, less than the configured size 4194304, and it is opened read-only");
	expect_check(file, 4 * MIB, false, false, "");
	/* Nothing was made or changed. */
	ck_assert_int_ne(stat(path, &st), 0);
	ck_assert_int_ne(stat(missing, &st), 0);
	ck_assert_int_eq(stat(file, &st), 0);
	ck_assert_int_eq(st.st_size, 2 * MIB);
}
END_TEST

START_TEST(check_dir_refuses_pseudo_file_systems_and_files)
{
	char err[512] = "", file[320], want[700];
	int fd;

	ck_assert_int_eq(be_file_check_dir("/proc/sbcemu/state", true, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "cannot create /proc/sbcemu/state: /proc is on procfs, a kernel pseudo file system, "
			      "not storage");
	ck_assert_int_eq(be_file_check_dir("/sys/sbcemu", true, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "cannot create /sys/sbcemu: /sys is on sysfs, a kernel pseudo file system, not storage");
	snprintf(file, sizeof(file), "%s/file", dir);
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	close(fd);
	ck_assert_int_eq(be_file_check_dir(file, true, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s is not a directory", file);
	ck_assert_str_eq(err, want);
	ck_assert_int_eq(be_file_check_dir(dir, false, err, sizeof(err)), 0);
	if (geteuid() != 0) { /* root writes anywhere but on read-only mounts */
		ck_assert_int_eq(chmod(dir, 0500), 0);
		ck_assert_int_eq(be_file_check_dir(dir, false, err, sizeof(err)), -1);
		snprintf(want, sizeof(want), "%s is not writable: Permission denied", dir);
		ck_assert_str_eq(err, want);
		ck_assert_int_eq(chmod(dir, 0700), 0);
	}
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s;
	TCase *tc;
	SRunner *sr;
	int failed;

	if (argc == 3 && strcmp(argv[1], "--open") == 0)
		return open_and_report(argv[2]);
	s = suite_create("be_file_lock");
	tc = tcase_create("lock");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, another_process_is_refused_and_the_holder_named);
	tcase_add_test(tc, this_process_opens_again_and_the_lock_outlives_the_first);
	tcase_add_test(tc, state_files_are_0600_and_never_followed);
	tcase_add_test(tc, a_symbolic_link_in_place_of_the_intent_log_is_refused);
	tcase_add_test(tc, check_finds_what_open_refuses_and_creates_nothing);
	tcase_add_test(tc, check_dir_refuses_pseudo_file_systems_and_files);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
