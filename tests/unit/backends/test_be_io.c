/*
 * be_io.c: be_pwrite_all, be_pread_all, their vectored forms be_pwritev_all
 * and be_preadv_all, and be_fdatasync (backend.h) on a
 * real file in a temporary directory under $TMPDIR or /tmp.  A short write
 * is made with RLIMIT_FSIZE (setrlimit(2): a write that crosses the limit
 * writes up to it, the next one fails with EFBIG once SIGXFSZ is ignored);
 * EINTR cannot be provoked on a regular file and is not tested here.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backend.h"

static char dir[256];
static char path[300];
static int fd = -1;

static void setup(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/be_io_test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/file", dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
}

static void teardown(void)
{
	close(fd);
	unlink(path);
	rmdir(dir);
}

static off_t file_size(void)
{
	struct stat st;

	ck_assert_int_eq(fstat(fd, &st), 0);
	return st.st_size;
}

START_TEST(writes_all_and_reads_it_back)
{
	const uint8_t data[5] = { 1, 2, 3, 4, 5 };
	uint8_t back[16];

	ck_assert_int_eq(be_pwrite_all(fd, data, sizeof(data), 10, 0), 0);
	ck_assert_int_eq(file_size(), 15);
	memset(back, 0xff, sizeof(back));
	ck_assert_int_eq(be_pread_all(fd, back, 15, 0), 15);
	for (int i = 0; i < 10; i++)
		ck_assert_uint_eq(back[i], 0); /* the hole before offset 10 */
	ck_assert_mem_eq(back + 10, data, sizeof(data));
	ck_assert_int_eq(be_fdatasync(fd), 0);
}
END_TEST

START_TEST(rwf_writes_through_pwritev2)
{
	const uint8_t data[4] = { 9, 8, 7, 6 };
	uint8_t back[4];
	int rc = be_pwrite_all(fd, data, sizeof(data), 0, RWF_DSYNC);

	if (rc == -EOPNOTSUPP || rc == -EINVAL)
		return; /* a kernel or file system without RWF_DSYNC (pwritev2(2)): be_file falls back */
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(be_pread_all(fd, back, sizeof(back), 0), (ssize_t)sizeof(back));
	ck_assert_mem_eq(back, data, sizeof(data));
}
END_TEST

START_TEST(a_read_past_the_end_returns_what_there_is)
{
	const uint8_t data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint8_t back[32];

	ck_assert_int_eq(be_pwrite_all(fd, data, sizeof(data), 0, 0), 0);
	ck_assert_int_eq(be_pread_all(fd, back, sizeof(back), 0), 8);
	ck_assert_mem_eq(back, data, sizeof(data));
	ck_assert_int_eq(be_pread_all(fd, back, sizeof(back), 6), 2);
	ck_assert_int_eq(be_pread_all(fd, back, sizeof(back), 100), 0);
}
END_TEST

/*
 * Runs write(iov, iovcnt) with RLIMIT_FSIZE at 100 bytes and SIGXFSZ
 * ignored, then puts both back before anything is asserted (without
 * CK_FORK the next tests run in this process).  Returns write's result.
 */
static int write_under_fsize_limit(int (*write)(const struct iovec *, unsigned), const struct iovec *iov,
				   unsigned iovcnt)
{
	struct rlimit before, limit;
	void (*old_handler)(int);
	int rc;

	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &before), 0);
	limit = before;
	limit.rlim_cur = 100;
	old_handler = signal(SIGXFSZ, SIG_IGN);
	ck_assert_ptr_ne(old_handler, SIG_ERR);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &limit), 0);
	rc = write(iov, iovcnt);
	setrlimit(RLIMIT_FSIZE, &before);
	signal(SIGXFSZ, old_handler);
	return rc;
}

static int write_plain(const struct iovec *iov, unsigned iovcnt)
{
	ck_assert_uint_eq(iovcnt, 1);
	return be_pwrite_all(fd, iov->iov_base, iov->iov_len, 0, 0);
}

static int write_vectored(const struct iovec *iov, unsigned iovcnt)
{
	return be_pwritev_all(fd, iov, iovcnt, 0, 0);
}

/* The write that crosses RLIMIT_FSIZE is short; the helper goes on and reports the next one's EFBIG. */
START_TEST(a_short_write_goes_on_and_its_failure_is_reported)
{
	uint8_t data[200], back[200];
	struct iovec iov = { data, sizeof(data) };

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)i;
	ck_assert_int_eq(write_under_fsize_limit(write_plain, &iov, 1), -EFBIG);
	ck_assert_int_eq(file_size(), 100);
	ck_assert_int_eq(be_pread_all(fd, back, sizeof(back), 0), 100);
	ck_assert_mem_eq(back, data, 100);
}
END_TEST

/* The pieces go one after the other, an empty one among them; one call reads them back whole. */
START_TEST(vectored_pieces_follow_each_other)
{
	uint8_t a[3] = { 1, 2, 3 }, b[5] = { 4, 5, 6, 7, 8 }, back[8], ra[2], rb[6];
	struct iovec out[3] = { { a, sizeof(a) }, { NULL, 0 }, { b, sizeof(b) } };
	struct iovec in[2] = { { ra, sizeof(ra) }, { rb, sizeof(rb) } };

	ck_assert_int_eq(be_pwritev_all(fd, out, 3, 4, 0), 0);
	ck_assert_int_eq(file_size(), 12);
	ck_assert_int_eq(be_pread_all(fd, back, sizeof(back), 4), 8);
	ck_assert_mem_eq(back, a, 3);
	ck_assert_mem_eq(back + 3, b, 5);
	ck_assert_int_eq(be_preadv_all(fd, in, 2, 4, 0), 8);
	ck_assert_mem_eq(ra, a, 2);
	ck_assert_uint_eq(rb[0], 3);
	ck_assert_mem_eq(rb + 1, b, 5);
	/* Past the end: what there is (4 of the 8 asked for). */
	ck_assert_int_eq(be_preadv_all(fd, in, 2, 8, 0), 4);
	ck_assert_mem_eq(ra, b + 1, 2);
}
END_TEST

/*
 * RWF_NOWAIT (preadv2(2)): bytes just written are in the page cache, so the
 * read takes them without waiting; a file system that does not take the
 * flag says EOPNOTSUPP (be_file turns both that and a short transfer into
 * -EAGAIN, backend.h).  Never a partial count.
 */
START_TEST(nowait_read_of_cached_bytes)
{
	uint8_t data[4096], back[4096];
	struct iovec in = { back, sizeof(back) };
	ssize_t n;

	memset(data, 0x5a, sizeof(data));
	ck_assert_int_eq(be_pwrite_all(fd, data, sizeof(data), 0, 0), 0);
	n = be_preadv_all(fd, &in, 1, 0, RWF_NOWAIT);
	if (n == -EOPNOTSUPP)
		return;
	ck_assert_int_eq(n, (ssize_t)sizeof(back));
	ck_assert_mem_eq(back, data, sizeof(data));
}
END_TEST

/* The vectored write that crosses RLIMIT_FSIZE: the piece it stopped in goes on alone, then EFBIG. */
START_TEST(a_short_vectored_write_goes_on_and_fails)
{
	uint8_t a[60], b[140], back[200];
	struct iovec out[2] = { { a, sizeof(a) }, { b, sizeof(b) } };

	memset(a, 0x11, sizeof(a));
	memset(b, 0x22, sizeof(b));
	ck_assert_int_eq(write_under_fsize_limit(write_vectored, out, 2), -EFBIG);
	ck_assert_int_eq(file_size(), 100);
	ck_assert_int_eq(be_pread_all(fd, back, sizeof(back), 0), 100);
	ck_assert_mem_eq(back, a, sizeof(a));
	ck_assert_mem_eq(back + 60, b, 40);
}
END_TEST

START_TEST(errors_are_negative_errnos)
{
	uint8_t buf[4] = { 0 };

	ck_assert_int_eq(be_pwrite_all(-1, buf, sizeof(buf), 0, 0), -EBADF);
	ck_assert_int_eq(be_pread_all(-1, buf, sizeof(buf), 0), -EBADF);
	ck_assert_int_eq(be_fdatasync(-1), -EBADF);
	ck_assert_int_eq(be_pwritev_all(-1, &(struct iovec){ buf, sizeof(buf) }, 1, 0, 0), -EBADF);
	ck_assert_int_eq(be_preadv_all(-1, &(struct iovec){ buf, sizeof(buf) }, 1, 0, 0), -EBADF);
	/* Nothing to transfer: no call is made. */
	ck_assert_int_eq(be_pwrite_all(-1, buf, 0, 0, 0), 0);
	ck_assert_int_eq(be_pread_all(-1, buf, 0, 0), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("be_io");
	TCase *tc = tcase_create("io");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, writes_all_and_reads_it_back);
	tcase_add_test(tc, rwf_writes_through_pwritev2);
	tcase_add_test(tc, a_read_past_the_end_returns_what_there_is);
	tcase_add_test(tc, a_short_write_goes_on_and_its_failure_is_reported);
	tcase_add_test(tc, vectored_pieces_follow_each_other);
	tcase_add_test(tc, nowait_read_of_cached_bytes);
	tcase_add_test(tc, a_short_vectored_write_goes_on_and_fails);
	tcase_add_test(tc, errors_are_negative_errnos);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
