/*
 * The allocated() operation of backend.h (the Logical Block Provisioning
 * log page's source): be_file counts the file's blocks (st_blocks * 512),
 * be_mem its written grains, be_cache what is below plus the cached pages
 * over holes below.  Each test names the rule it checks.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"

#define KIB 1024u
#define MIB (1024u * 1024u)

static char dir[256];
static char path[300];
static uint8_t buf[64 * KIB];

static void setup(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/be_allocated_test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/lun.img", dir);
	memset(buf, 0xa5, sizeof(buf));
}

static void teardown(void)
{
	char side[320];

	snprintf(side, sizeof(side), "%s.journal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s.sjournal", path);
	unlink(side);
	unlink(path);
	rmdir(dir);
}

static struct backend *open_file(uint64_t size)
{
	char err[256] = "";
	struct backend *be = be_file_open(path, size, false, NULL, err, sizeof(err));

	ck_assert_msg(be != NULL, "be_file_open: %s", err);
	return be;
}

static uint64_t allocated(struct backend *be)
{
	uint64_t bytes = UINT64_MAX;

	ck_assert_int_eq(be->ops->allocated(be, &bytes), 0);
	return bytes;
}

/* be_file: allocated() is fstat's st_blocks * 512; writes raise it, a punched hole lowers it. */
START_TEST(file_counts_blocks)
{
	struct backend *be = open_file(16 * MIB);
	struct stat st;

	ck_assert_uint_eq(allocated(be), 0); /* created sparse */
	ck_assert_int_eq(be->ops->write(be, buf, sizeof(buf), 1 * MIB, 0), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(allocated(be), (uint64_t)st.st_blocks * 512);
	ck_assert_uint_ge(allocated(be), sizeof(buf));
	if (be->can_discard) {
		ck_assert_int_eq(be->ops->discard(be, 1 * MIB, sizeof(buf)), 0);
		ck_assert_uint_eq(allocated(be), 0);
	}
	be_close(be);
}
END_TEST

/* be_mem: 512-byte grains; a write allocates the grains it touches, a discard frees those it covers whole. */
START_TEST(mem_counts_grains)
{
	struct backend *be = be_mem_open(1 * MIB);

	ck_assert_uint_eq(allocated(be), 0);
	ck_assert_int_eq(be->ops->write(be, buf, 1024, 4096, 0), 0);
	ck_assert_uint_eq(allocated(be), 1024);
	ck_assert_int_eq(be->ops->write(be, buf, 1, 8191, 0), 0); /* touches one more grain */
	ck_assert_uint_eq(allocated(be), 1536);
	ck_assert_int_eq(be->ops->write(be, buf, 1024, 4096, 0), 0); /* already allocated */
	ck_assert_uint_eq(allocated(be), 1536);
	ck_assert_int_eq(be->ops->discard(be, 4096 + 100, 400), 0); /* inside one grain: covers none whole */
	ck_assert_uint_eq(allocated(be), 1536);
	ck_assert_int_eq(be->ops->discard(be, 4096, 4096), 0);
	ck_assert_uint_eq(allocated(be), 0);
	/* write_zeroes allocates (FALLOC_FL_ZERO_RANGE does), unless it may discard */
	ck_assert_int_eq(be->ops->write_zeroes(be, 0, 2048, 0), 0);
	ck_assert_uint_eq(allocated(be), 2048);
	ck_assert_int_eq(be->ops->write_zeroes(be, 0, 2048, BE_ZERO_MAY_DISCARD), 0);
	ck_assert_uint_eq(allocated(be), 0);
	/* shrinking frees what lies past the new end */
	ck_assert_int_eq(be->ops->write(be, buf, 512, 1 * MIB - 512, 0), 0);
	ck_assert_uint_eq(allocated(be), 512);
	ck_assert_int_eq(be->ops->resize(be, 512 * KIB), 0);
	ck_assert_uint_eq(allocated(be), 0);
	be_close(be);
}
END_TEST

/* be_cache: a cached write over a hole below counts (it is allocated once written back); a flush changes nothing. */
START_TEST(cache_counts_cached_pages)
{
	struct backend *be = be_cache_wrap(open_file(16 * MIB));
	uint64_t cached;

	ck_assert_ptr_nonnull(be);
	ck_assert_uint_eq(allocated(be), 0);
	ck_assert_int_eq(be->ops->write(be, buf, 8 * KIB, 2 * MIB, 0), 0);
	cached = allocated(be);
	ck_assert_uint_ge(cached, 8 * KIB);
	ck_assert_int_eq(be->ops->flush(be), 0);
	ck_assert_uint_eq(allocated(be), cached);
	be_close(be);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("be_allocated");
	TCase *tc = tcase_create("allocated");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, file_counts_blocks);
	tcase_add_test(tc, mem_counts_grains);
	tcase_add_test(tc, cache_counts_cached_pages);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
