/*
 * be_file.c: the file backend on a real file system (a temporary directory
 * under $TMPDIR or /tmp): sparse creation, holes read as zeros, hole punching
 * releases blocks, extents from SEEK_DATA/SEEK_HOLE, and the error contract
 * of backend.h (negative errno, messages from be_file_open).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
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

	snprintf(dir, sizeof(dir), "%s/be_file_test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/lun.img", dir);
}

static void teardown(void)
{
	char journal[320];

	snprintf(journal, sizeof(journal), "%s.journal", path);
	unlink(journal);
	unlink(path);
	rmdir(dir);
}

static struct backend *open_ok(uint64_t size, bool read_only)
{
	char err[256] = "";
	struct backend *be = be_file_open(path, size, read_only, NULL, err, sizeof(err));

	ck_assert_msg(be != NULL, "be_file_open: %s", err);
	return be;
}

static bool all_bytes(const uint8_t *p, size_t len, uint8_t value)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != value)
			return false;
	return true;
}

static struct stat stat_path(void)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	return st;
}

/* A missing file is created with the configured size and no allocated blocks (sparse). */
START_TEST(create_missing_file_sparse)
{
	struct backend *be = open_ok(64 * MIB, false);
	struct stat st = stat_path();

	ck_assert_uint_eq(be->size, 64 * MIB);
	ck_assert_uint_eq(st.st_size, 64 * MIB);
	ck_assert_uint_eq(st.st_blocks, 0);
	ck_assert(!be->read_only);
	ck_assert(be->can_discard);
	ck_assert_str_eq(be->ops->name, "file");
	be_close(be);
}
END_TEST

/* Holes read as zeros; written data reads back; size 0 reopens with the existing size. */
START_TEST(holes_read_zero_and_data_round_trips)
{
	struct backend *be = open_ok(8 * MIB, false);
	uint8_t *buf = malloc(MIB);

	memset(buf, 0xa5, MIB);
	ck_assert_int_eq(be->ops->read(be, buf, MIB, 2 * MIB), 0);
	ck_assert(all_bytes(buf, MIB, 0));
	memset(buf, 0x5a, 4096);
	ck_assert_int_eq(be->ops->write(be, buf, 4096, 4096, 0), 0);
	memset(buf, 0x3c, 512);
	ck_assert_int_eq(be->ops->write(be, buf, 512, 8 * MIB - 512, BE_WRITE_FUA), 0);
	ck_assert_int_eq(be->ops->flush(be), 0);
	be_close(be);

	be = open_ok(0, true);
	ck_assert_uint_eq(be->size, 8 * MIB);
	ck_assert(be->read_only);
	ck_assert_int_eq(be->ops->read(be, buf, 8192, 0), 0);
	ck_assert(all_bytes(buf, 4096, 0));
	ck_assert(all_bytes(buf + 4096, 4096, 0x5a));
	ck_assert_int_eq(be->ops->read(be, buf, 512, 8 * MIB - 512), 0);
	ck_assert(all_bytes(buf, 512, 0x3c));
	be_close(be);
	free(buf);
}
END_TEST

/*
 * readv / writev (backend.h): the pieces one after the other in one call,
 * FUA too; BE_IO_NOWAIT reads what is cached, or says -EAGAIN, and a
 * BE_IO_NOWAIT write never waits for durability (FUA: -EAGAIN at once); the
 * range checks as for read and write.
 */
START_TEST(vectored_and_nowait)
{
	struct backend *be = open_ok(MIB, false);
	uint8_t a[4096], b[512], back[4608];
	struct iovec out[2] = { { a, sizeof(a) }, { b, sizeof(b) } }, in = { back, sizeof(back) };
	int rc;

	memset(a, 0x61, sizeof(a));
	memset(b, 0x62, sizeof(b));
	ck_assert_int_eq(be->ops->writev(be, out, 2, 8192, 0), 0);
	ck_assert_int_eq(be->ops->writev(be, out, 2, 65536, BE_WRITE_FUA), 0);
	ck_assert_int_eq(be->ops->writev(be, out, 2, 65536, BE_WRITE_FUA | BE_IO_NOWAIT), -EAGAIN);
	rc = be->ops->writev(be, out, 2, 16384, BE_IO_NOWAIT);
	ck_assert_msg(rc == 0 || rc == -EAGAIN, "a nowait write: %d", rc);
	ck_assert_int_eq(be->ops->readv(be, &in, 1, 8192, 0), 0);
	ck_assert(all_bytes(back, 4096, 0x61) && all_bytes(back + 4096, 512, 0x62));
	memset(back, 0, sizeof(back));
	rc = be->ops->readv(be, &in, 1, 65536, BE_IO_NOWAIT);
	ck_assert_msg(rc == 0 || rc == -EAGAIN, "a nowait read: %d", rc);
	if (rc == 0)
		ck_assert(all_bytes(back, 4096, 0x61) && all_bytes(back + 4096, 512, 0x62));
	ck_assert_int_eq(be->ops->readv(be, &in, 1, MIB - 512, 0), -EINVAL);
	ck_assert_int_eq(be->ops->writev(be, out, 2, MIB - 4096, 0), -EINVAL);
	be_close(be);
}
END_TEST

/* discard = PUNCH_HOLE | KEEP_SIZE: st_blocks drops, the size stays, the range reads as zeros. */
START_TEST(discard_releases_blocks)
{
	struct backend *be = open_ok(4 * MIB, false);
	uint8_t *buf = malloc(MIB);
	struct stat st;

	memset(buf, 0xff, MIB);
	ck_assert_int_eq(be->ops->write(be, buf, MIB, MIB, 0), 0);
	ck_assert_int_eq(be->ops->flush(be), 0);
	st = stat_path();
	ck_assert_int_ge(st.st_blocks, MIB / 512);
	ck_assert_int_eq(be->ops->discard(be, MIB, MIB), 0);
	st = stat_path();
	ck_assert_int_eq(st.st_blocks, 0);
	ck_assert_uint_eq(st.st_size, 4 * MIB);
	ck_assert_int_eq(be->ops->read(be, buf, MIB, MIB), 0);
	ck_assert(all_bytes(buf, MIB, 0));
	be_close(be);
	free(buf);
}
END_TEST

/* write_zeroes: BE_ZERO_MAY_DISCARD punches a hole; without it the range stays allocated. */
START_TEST(write_zeroes_with_and_without_discard)
{
	struct backend *be = open_ok(4 * MIB, false);
	uint8_t *buf = malloc(MIB);
	struct stat st;

	memset(buf, 0x11, MIB);
	ck_assert_int_eq(be->ops->write(be, buf, MIB, 0, 0), 0);
	ck_assert_int_eq(be->ops->write(be, buf, MIB, MIB, 0), 0);
	ck_assert_int_eq(be->ops->flush(be), 0);

	ck_assert_int_eq(be->ops->write_zeroes(be, 0, MIB, BE_ZERO_MAY_DISCARD), 0);
	st = stat_path();
	ck_assert_int_eq(st.st_blocks, MIB / 512);

	ck_assert_int_eq(be->ops->write_zeroes(be, MIB, MIB, 0), 0);
	st = stat_path();
	ck_assert_int_eq(st.st_blocks, MIB / 512);

	ck_assert_int_eq(be->ops->read(be, buf, MIB, 0), 0);
	ck_assert(all_bytes(buf, MIB, 0));
	ck_assert_int_eq(be->ops->read(be, buf, MIB, MIB), 0);
	ck_assert(all_bytes(buf, MIB, 0));
	be_close(be);
	free(buf);
}
END_TEST

/* extent: hole / allocated / hole, each bounded by max_len and by the backend size. */
START_TEST(extent_reporting)
{
	struct backend *be = open_ok(4 * MIB, false);
	uint8_t buf[65536];
	enum be_extent_kind kind;
	uint64_t len;

	memset(buf, 0x77, sizeof(buf));
	ck_assert_int_eq(be->ops->write(be, buf, sizeof(buf), MIB, 0), 0);

	ck_assert_int_eq(be->ops->extent(be, 0, UINT64_MAX, &kind, &len), 0);
	ck_assert_int_eq(kind, BE_EXTENT_HOLE);
	ck_assert_uint_eq(len, MIB);

	ck_assert_int_eq(be->ops->extent(be, 4096, 8192, &kind, &len), 0);
	ck_assert_int_eq(kind, BE_EXTENT_HOLE);
	ck_assert_uint_eq(len, 8192);

	ck_assert_int_eq(be->ops->extent(be, MIB, UINT64_MAX, &kind, &len), 0);
	ck_assert_int_eq(kind, BE_EXTENT_ALLOCATED);
	ck_assert_uint_eq(len, sizeof(buf));

	ck_assert_int_eq(be->ops->extent(be, MIB + 4096, 4096, &kind, &len), 0);
	ck_assert_int_eq(kind, BE_EXTENT_ALLOCATED);
	ck_assert_uint_eq(len, 4096);

	ck_assert_int_eq(be->ops->extent(be, MIB + sizeof(buf), UINT64_MAX, &kind, &len), 0);
	ck_assert_int_eq(kind, BE_EXTENT_HOLE);
	ck_assert_uint_eq(len, 3 * MIB - sizeof(buf));

	ck_assert_int_eq(be->ops->extent(be, 4 * MIB, 4096, &kind, &len), -EINVAL);
	be_close(be);
}
END_TEST

/* A file truncated behind the backend's back: reads past its new end are -EIO, not zeros. */
START_TEST(short_file_read_is_eio)
{
	struct backend *be = open_ok(MIB, false);
	uint8_t buf[8192];

	ck_assert_int_eq(truncate(path, MIB / 2), 0);
	ck_assert_int_eq(be->ops->read(be, buf, 4096, MIB / 2 + 4096), -EIO);
	ck_assert_int_eq(be->ops->read(be, buf, 8192, MIB / 2 - 4096), -EIO);
	ck_assert_int_eq(be->ops->read(be, buf, 4096, 0), 0);
	be_close(be);
}
END_TEST

/* Ranges outside the backend size are -EINVAL; writes to a read-only backend are -EROFS. */
START_TEST(range_and_read_only_errors)
{
	struct backend *be = open_ok(MIB, false);
	uint8_t buf[4096] = { 0 };

	ck_assert_int_eq(be->ops->read(be, buf, 4096, MIB - 2048), -EINVAL);
	ck_assert_int_eq(be->ops->write(be, buf, 4096, MIB, 0), -EINVAL);
	ck_assert_int_eq(be->ops->discard(be, UINT64_MAX - 10, 20), -EINVAL);
	ck_assert_int_eq(be->ops->write_zeroes(be, MIB, 1, 0), -EINVAL);
	be_close(be);

	be = open_ok(0, true);
	ck_assert(!be->can_discard);
	ck_assert_int_eq(be->ops->write(be, buf, 4096, 0, 0), -EROFS);
	ck_assert_int_eq(be->ops->discard(be, 0, 4096), -EROFS);
	ck_assert_int_eq(be->ops->write_zeroes(be, 0, 4096, 0), -EROFS);
	ck_assert_int_eq(be->ops->resize(be, 2 * MIB), -EROFS);
	be_close(be);
}
END_TEST

/*
 * copy_range (copy_file_range(2) inside the file): the bytes arrive, with
 * FUA too; overlapping ranges and ranges past the size are -EINVAL, a
 * read-only backend -EROFS.
 */
START_TEST(copy_range_inside_the_file)
{
	struct backend *be = open_ok(4 * MIB, false);
	uint8_t *src = malloc(MIB), *got = malloc(MIB);

	for (size_t i = 0; i < MIB; i++)
		src[i] = (uint8_t)(i * 31 + i / 4096);
	ck_assert_int_eq(be->ops->write(be, src, MIB, 0, 0), 0);
	ck_assert_int_eq(be->ops->copy_range(be, 0, 2 * MIB, MIB, 0), 0);
	ck_assert_int_eq(be->ops->read(be, got, MIB, 2 * MIB), 0);
	ck_assert_mem_eq(got, src, MIB);
	ck_assert_int_eq(be->ops->copy_range(be, 4096, 3 * MIB + 512, 65536, BE_WRITE_FUA), 0);
	ck_assert_int_eq(be->ops->read(be, got, 65536, 3 * MIB + 512), 0);
	ck_assert_mem_eq(got, src + 4096, 65536);
	ck_assert_int_eq(be->ops->copy_range(be, 0, 4096, 8192, 0), -EINVAL);
	ck_assert_int_eq(be->ops->copy_range(be, 0, 4 * MIB - 4096, 8192, 0), -EINVAL);
	ck_assert_int_eq(be->ops->copy_range(be, 4 * MIB, 0, 1, 0), -EINVAL);
	be_close(be);
	be = open_ok(0, true);
	ck_assert_int_eq(be->ops->copy_range(be, 0, 2 * MIB, 4096, 0), -EROFS);
	be_close(be);
	free(src);
	free(got);
}
END_TEST

/* An existing smaller file grows sparse to the configured size; resize changes it again. */
START_TEST(grow_existing_and_resize)
{
	struct backend *be;
	int fd = open(path, O_CREAT | O_WRONLY, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, MIB), 0);
	close(fd);
	be = open_ok(2 * MIB, false);
	ck_assert_uint_eq(be->size, 2 * MIB);
	ck_assert_uint_eq(stat_path().st_size, 2 * MIB);
	ck_assert_int_eq(be->ops->resize(be, 3 * MIB), 0);
	ck_assert_uint_eq(be->size, 3 * MIB);
	ck_assert_uint_eq(stat_path().st_size, 3 * MIB);
	be_close(be);
}
END_TEST

static void expect_open_error(uint64_t size, bool read_only, const char *expected)
{
	char err[512] = "";
	char want[600];

	ck_assert_ptr_null(be_file_open(path, size, read_only, NULL, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: %s", path, expected);
	ck_assert_str_eq(err, want);
}

/* be_file_open's messages name the path and the reason. */
START_TEST(open_errors)
{
	int fd;

	expect_open_error(0, false, "the file does not exist and no size is configured to create it");
	expect_open_error(MIB, true, "cannot open: No such file or directory");
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	ck_assert_int_ge(fd, 0);
	expect_open_error(0, false, "the file is empty and no size is configured");
	ck_assert_int_eq(ftruncate(fd, 2 * MIB), 0);
	close(fd);
	expect_open_error(MIB, false,
			  "the file holds 2097152 bytes, more than the configured size 1048576; refusing to shrink it");
	expect_open_error(4 * MIB, true,
			  "the file holds 2097152 bytes, less than the configured size 4194304, "
			  "and it is opened read-only");
	unlink(path);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	expect_open_error(MIB, false, "cannot open: Is a directory");
	expect_open_error(0, true, "neither a regular file nor a block device");
	rmdir(path);
}
END_TEST

/*
 * A block device keeps its intent log at side_base (backend.h): WRITE
 * ATOMIC's record lands there, and a record left by a crash after it became
 * durable is replayed at the next open.  Needs a loop device (root); the
 * host's devices offer no untorn writes, so the journal path is the one
 * exercised (the untorn path is the kernel check "untorn", Linux 6.12).
 */
START_TEST(block_device_intent_log)
{
	char cmd[400], loop[64] = "", side[300], jpath[320], err[256];
	struct backend *be;
	uint8_t *buf = malloc(64 * 1024), *back = malloc(64 * 1024);
	uint32_t unit_min, unit_max;
	FILE *p;
	int status;
	pid_t child;

	be = open_ok(16 * MIB, false);
	be_close(be);
	snprintf(cmd, sizeof(cmd), "losetup -f --show %s 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p || !fgets(loop, sizeof(loop), p) || loop[0] != '/') {
		if (p)
			pclose(p);
		fprintf(stderr, "block_device_intent_log: no loop device (not root?): not run\n");
		free(buf);
		free(back);
		return;
	}
	pclose(p);
	loop[strcspn(loop, "\n")] = '\0';
	snprintf(side, sizeof(side), "%s/backing", dir);
	snprintf(jpath, sizeof(jpath), "%s.journal", side);
	be = be_file_open(loop, 0, false, side, err, sizeof(err));
	ck_assert_msg(be != NULL, "be_file_open %s: %s", loop, err);
	ck_assert_uint_eq(be->size, 16 * MIB);
	be_file_untorn_writes(be, &unit_min, &unit_max);
	memset(buf, 0x5a, 64 * 1024);
	ck_assert_int_eq(be->ops->write_atomic(be, buf, 64 * 1024, MIB), 0);
	ck_assert_int_eq(be->ops->read(be, back, 64 * 1024, MIB), 0);
	ck_assert(all_bytes(back, 64 * 1024, 0x5a));
	/* Without untorn writes the record went through <side_base>.journal. */
	ck_assert(unit_max > 0 || access(jpath, F_OK) == 0);
	be_close(be);
	/* A crash after the record became durable, before the in-place write: replayed at open. */
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		setenv("SBCEMU_JOURNAL_CRASH", "after-record", 1);
		be = be_file_open(loop, 0, false, side, err, sizeof(err));
		memset(buf, 0xa5, 64 * 1024);
		if (be)
			be->ops->write_atomic(be, buf, 64 * 1024, 2 * MIB);
		_exit(3);
	}
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	if (unit_max == 0) {
		ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the child was not killed mid-write");
		be = be_file_open(loop, 0, false, side, err, sizeof(err));
		ck_assert_msg(be != NULL, "reopen: %s", err);
		ck_assert_msg(be->note[0] != '\0', "no replay note");
		ck_assert_int_eq(be->ops->read(be, back, 64 * 1024, 2 * MIB), 0);
		ck_assert(all_bytes(back, 64 * 1024, 0xa5));
		be_close(be);
	}
	snprintf(cmd, sizeof(cmd), "losetup -d %s", loop);
	ck_assert_int_eq(system(cmd), 0);
	unlink(jpath);
	free(buf);
	free(back);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("be_file");
	TCase *tc = tcase_create("file");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, create_missing_file_sparse);
	tcase_add_test(tc, holes_read_zero_and_data_round_trips);
	tcase_add_test(tc, vectored_and_nowait);
	tcase_add_test(tc, discard_releases_blocks);
	tcase_add_test(tc, write_zeroes_with_and_without_discard);
	tcase_add_test(tc, extent_reporting);
	tcase_add_test(tc, short_file_read_is_eio);
	tcase_add_test(tc, range_and_read_only_errors);
	tcase_add_test(tc, copy_range_inside_the_file);
	tcase_add_test(tc, grow_existing_and_resize);
	tcase_add_test(tc, open_errors);
	tcase_add_test(tc, block_device_intent_log);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
