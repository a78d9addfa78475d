/*
 * resident.c: where a file system answers no RWF_NOWAIT, which reads can
 * still be done at once.  tmpfs: every one (and be_file then reads and
 * writes with BE_IO_NOWAIT at once, never -EAGAIN); the mincore(2)
 * question: true for pages in the page cache, false once they are dropped
 * (POSIX_FADV_DONTNEED after fdatasync) and for a range past the mapping;
 * a device node (on devtmpfs, whose f_type is tmpfs's) is never taken for
 * memory.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "backend.h"
#include "resident.h"

#define TMPFS_MAGIC_ 0x01021994

static char path[300];

static int temp_file(const char *dir)
{
	int fd;

	snprintf(path, sizeof(path), "%s/resident_test.XXXXXX", dir);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	return fd;
}

START_TEST(tmpfs_reads_and_writes_done_at_once)
{
	uint8_t data[8192], back[8192];
	struct iovec out = { data, sizeof(data) }, in = { back, sizeof(back) };
	struct statfs s;
	struct backend *be;
	char err[256] = "";
	int fd;

	ck_assert_int_eq(statfs("/dev/shm", &s), 0);
	ck_assert_msg(s.f_type == TMPFS_MAGIC_, "/dev/shm is not a tmpfs here");
	fd = temp_file("/dev/shm");
	close(fd);
	be = be_file_open(path, 1u << 20, false, NULL, err, sizeof(err));
	ck_assert_msg(be != NULL, "be_file_open: %s", err);
	memset(data, 0x5a, sizeof(data));
	/* pwritev2(RWF_NOWAIT) and preadv2(RWF_NOWAIT) say EOPNOTSUPP on tmpfs; both are done all the same. */
	ck_assert_int_eq(be->ops->writev(be, &out, 1, 4096, BE_IO_NOWAIT), 0);
	ck_assert_int_eq(be->ops->writev(be, &out, 1, 65536, BE_IO_NOWAIT), 0);
	ck_assert_int_eq(be->ops->readv(be, &in, 1, 4096, BE_IO_NOWAIT), 0);
	ck_assert_mem_eq(back, data, sizeof(data));
	memset(back, 0, sizeof(back));
	ck_assert_int_eq(be->ops->readv(be, &in, 1, 65536, BE_IO_NOWAIT), 0);
	ck_assert_mem_eq(back, data, sizeof(data));
	/* A durable write is never done at once. */
	ck_assert_int_eq(be->ops->writev(be, &out, 1, 4096, BE_IO_NOWAIT | BE_WRITE_FUA), -EAGAIN);
	be_close(be);
	unlink(path);
}
END_TEST

START_TEST(mincore_answers_from_the_page_cache)
{
	const char *tmp = getenv("TMPDIR");
	static uint8_t data[2u << 20];
	struct resident r;
	int fd = temp_file(tmp && *tmp ? tmp : "/tmp");

	memset(data, 0x33, sizeof(data));
	ck_assert_int_eq(pwrite(fd, data, sizeof(data), 0), (ssize_t)sizeof(data));
	resident_init(&r, fd, true);
	r.kind = RESIDENT_MINCORE; /* whatever the file system, ask mincore */
	ck_assert(resident_range(&r, fd, sizeof(data), 0, 4096));
	ck_assert(resident_range(&r, fd, sizeof(data), 8191, 65536));
	/* Past the file's size when the mapping was made: not asked, not resident. */
	ck_assert(!resident_range(&r, fd, sizeof(data), sizeof(data) - 512, 4096));
	/* More pages than one question covers. */
	ck_assert(!resident_range(&r, fd, sizeof(data), 0, 257 * 4096));
	ck_assert_int_eq(fdatasync(fd), 0);
	ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	ck_assert(!resident_range(&r, fd, sizeof(data), 0, 4096));
	ck_assert(!resident_range(&r, fd, sizeof(data), 65536, 4096));
	resident_close(&r);
	close(fd);
	unlink(path);
}
END_TEST

START_TEST(kinds_by_file_system)
{
	struct resident r;
	int fd = temp_file("/dev/shm");

	resident_init(&r, fd, false);
	ck_assert_int_eq(r.kind, RESIDENT_MEMORY);
	ck_assert(resident_range(&r, fd, 0, 0, 4096));
	resident_close(&r);
	ck_assert_int_eq(r.kind, RESIDENT_NEVER);
	ck_assert(!resident_range(&r, fd, 4096, 0, 4096));
	close(fd);
	unlink(path);
	/* A device node on devtmpfs (tmpfs's f_type): not a regular file, never done at once. */
	fd = open("/dev/null", O_RDWR);
	ck_assert_int_ge(fd, 0);
	resident_init(&r, fd, true);
	ck_assert_int_eq(r.kind, RESIDENT_NEVER);
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("resident");
	TCase *tc = tcase_create("resident");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, tmpfs_reads_and_writes_done_at_once);
	tcase_add_test(tc, mincore_answers_from_the_page_cache);
	tcase_add_test(tc, kinds_by_file_system);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
