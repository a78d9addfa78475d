/*
 * be_cache.c: the volatile write-back cache, in front of be_file on a
 * temporary sparse file (be_cache_wrap needs write_atomic_ranges below,
 * which be_mem does not offer).  Cached writes read back and reach the
 * backend below only at a flush; FUA writes go through and update the
 * cached copy; a discard after a cached write reads zeros; and a read never
 * returns data older than a write acknowledged before it began, while
 * flushes and discards keep writing the cache back underneath it; nor does
 * a discard come back under cached writes beside it.
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"

#define PAGE 4096u
#define MIB (1024u * 1024u)

static char dir[256];
static char path[300];

static void setup(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/be_cache_test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/lun.img", dir);
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

/* A cache over a new sparse file of size bytes; *lower (if not NULL) is the be_file below, for peeking. */
static struct backend *open_cache(uint64_t size, struct backend **lower)
{
	char err[256] = "";
	struct backend *file = be_file_open(path, size, false, NULL, err, sizeof(err));
	struct backend *be;

	ck_assert_msg(file != NULL, "be_file_open: %s", err);
	be = be_cache_wrap(file);
	ck_assert_ptr_nonnull(be);
	ck_assert_uint_eq(be->size, size);
	if (lower)
		*lower = file;
	return be;
}

static bool all_bytes(const uint8_t *p, size_t len, uint8_t value)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != value)
			return false;
	return true;
}

/* be_cache_wrap refuses a backend without write_atomic_ranges (its atomic writes pass through). */
START_TEST(wrap_needs_write_atomic_ranges)
{
	struct backend *mem = be_mem_open(MIB);
	const struct backend_ops *ops;
	struct backend_ops no_atomic;

	ck_assert_ptr_nonnull(mem);
	ops = mem->ops;
	no_atomic = *ops;
	no_atomic.write_atomic_ranges = NULL;
	mem->ops = &no_atomic;
	ck_assert_ptr_null(be_cache_wrap(mem));
	mem->ops = ops;
	be_close(mem); /* not taken over when refused */
}
END_TEST

/* A cached write reads back at once, stays out of the backend below until a flush, and is there after it. */
START_TEST(cached_write_reads_back_and_flush_writes_it_below)
{
	struct backend *lower;
	struct backend *be = open_cache(MIB, &lower);
	uint8_t buf[2 * PAGE], back[2 * PAGE];

	/* Something below first: a partial cached write must keep the rest of its page. */
	memset(buf, 0x77, PAGE);
	ck_assert_int_eq(lower->ops->write(lower, buf, PAGE, 4 * PAGE, 0), 0);

	memset(buf, 0x5a, sizeof(buf));
	ck_assert_int_eq(be->ops->write(be, buf, 512, 4 * PAGE + 1024, 0), 0);
	ck_assert_int_eq(be->ops->write(be, buf, 2 * PAGE, 8 * PAGE, 0), 0);

	ck_assert_int_eq(be->ops->read(be, back, PAGE, 4 * PAGE), 0);
	ck_assert(all_bytes(back, 1024, 0x77));
	ck_assert(all_bytes(back + 1024, 512, 0x5a));
	ck_assert(all_bytes(back + 1536, PAGE - 1536, 0x77));
	ck_assert_int_eq(be->ops->read(be, back, 2 * PAGE, 8 * PAGE), 0);
	ck_assert(all_bytes(back, 2 * PAGE, 0x5a));

	/* Not below yet: a power cut now would lose them. */
	ck_assert_int_eq(lower->ops->read(lower, back, PAGE, 4 * PAGE), 0);
	ck_assert(all_bytes(back, PAGE, 0x77));
	ck_assert_int_eq(lower->ops->read(lower, back, 2 * PAGE, 8 * PAGE), 0);
	ck_assert(all_bytes(back, 2 * PAGE, 0));

	ck_assert_int_eq(be->ops->flush(be), 0);
	ck_assert_int_eq(lower->ops->read(lower, back, PAGE, 4 * PAGE), 0);
	ck_assert(all_bytes(back, 1024, 0x77));
	ck_assert(all_bytes(back + 1024, 512, 0x5a));
	ck_assert(all_bytes(back + 1536, PAGE - 1536, 0x77));
	ck_assert_int_eq(lower->ops->read(lower, back, 2 * PAGE, 8 * PAGE), 0);
	ck_assert(all_bytes(back, 2 * PAGE, 0x5a));
	ck_assert_int_eq(be->ops->read(be, back, 2 * PAGE, 8 * PAGE), 0);
	ck_assert(all_bytes(back, 2 * PAGE, 0x5a));
	be_close(be);
}
END_TEST

/* A FUA write goes to the backend below at once and updates the cached copy of its page. */
START_TEST(fua_write_goes_through_and_updates_cached_copy)
{
	struct backend *lower;
	struct backend *be = open_cache(MIB, &lower);
	uint8_t buf[PAGE], back[PAGE];

	memset(buf, 0x11, PAGE);
	ck_assert_int_eq(be->ops->write(be, buf, PAGE, 2 * PAGE, 0), 0);
	memset(buf, 0x22, 512);
	ck_assert_int_eq(be->ops->write(be, buf, 512, 2 * PAGE + 512, BE_WRITE_FUA), 0);

	/* Below: only the FUA bytes (the cached page has not been written back). */
	ck_assert_int_eq(lower->ops->read(lower, back, PAGE, 2 * PAGE), 0);
	ck_assert(all_bytes(back, 512, 0));
	ck_assert(all_bytes(back + 512, 512, 0x22));
	ck_assert(all_bytes(back + 1024, PAGE - 1024, 0));

	/* Through the cache, and below after a flush: the cached page with the FUA bytes in it. */
	for (int pass = 0; pass < 2; pass++) {
		struct backend *from = pass ? lower : be;

		if (pass)
			ck_assert_int_eq(be->ops->flush(be), 0);
		ck_assert_int_eq(from->ops->read(from, back, PAGE, 2 * PAGE), 0);
		ck_assert(all_bytes(back, 512, 0x11));
		ck_assert(all_bytes(back + 512, 512, 0x22));
		ck_assert(all_bytes(back + 1024, PAGE - 1024, 0x11));
	}
	be_close(be);
}
END_TEST

/* A discard writes the cache back first; the discarded range then reads zeros, the rest the cached data. */
START_TEST(discard_after_cached_write_reads_zeros)
{
	struct backend *lower;
	struct backend *be = open_cache(MIB, &lower);
	uint8_t buf[2 * PAGE], back[2 * PAGE];

	memset(buf, 0x33, sizeof(buf));
	ck_assert_int_eq(be->ops->write(be, buf, 2 * PAGE, 16 * PAGE, 0), 0);
	ck_assert_int_eq(be->ops->discard(be, 16 * PAGE, PAGE), 0);

	ck_assert_int_eq(be->ops->read(be, back, 2 * PAGE, 16 * PAGE), 0);
	ck_assert(all_bytes(back, PAGE, 0));
	ck_assert(all_bytes(back + PAGE, PAGE, 0x33));
	ck_assert_int_eq(lower->ops->read(lower, back, 2 * PAGE, 16 * PAGE), 0);
	ck_assert(all_bytes(back, PAGE, 0));
	ck_assert(all_bytes(back + PAGE, PAGE, 0x33));
	be_close(be);
}
END_TEST

/*
 * The race: one thread writes (cached, flags 0) an increasing sequence
 * number over whole pages and publishes, after each write returned, the
 * number it acknowledged per page; another keeps writing the cache back
 * (flush, and discard of an unrelated page, which writes back first).  A
 * reader notes the acknowledged numbers, then reads the pages: each must
 * hold at least the number acknowledged before the read began, the same
 * in every word of the page.
 */
#define RACE_PAGES 4u              /* pages 0 .. RACE_PAGES - 1, read in one call */
#define RACE_MAX_READS 20000u
#define RACE_SECONDS 2.0
#define RACE_UNRELATED (64u * PAGE) /* the page the write-back thread discards */

struct race {
	struct backend *be;
	_Atomic uint64_t acked[RACE_PAGES];
	atomic_bool stop;
	atomic_int error;              /* first failing call's rc, or 0 */
	atomic_ulong writes, write_backs;
};

static void race_error(struct race *r, int rc)
{
	int none = 0;

	atomic_compare_exchange_strong(&r->error, &none, rc);
	atomic_store(&r->stop, true);
}

static void *race_writer(void *arg)
{
	struct race *r = arg;
	uint64_t page[PAGE / sizeof(uint64_t)];
	uint64_t seq = 1;

	while (!atomic_load(&r->stop)) {
		for (unsigned i = 0; i < RACE_PAGES; i++, seq++) {
			int rc;

			for (size_t w = 0; w < PAGE / sizeof(uint64_t); w++)
				page[w] = seq;
			rc = r->be->ops->write(r->be, page, PAGE, (uint64_t)i * PAGE, 0);
			if (rc) {
				race_error(r, rc);
				return NULL;
			}
			atomic_store(&r->acked[i], seq); /* acknowledged: the write returned 0 */
			atomic_fetch_add(&r->writes, 1);
		}
	}
	return NULL;
}

static void *race_write_back(void *arg)
{
	struct race *r = arg;

	for (unsigned long n = 0; !atomic_load(&r->stop); n++) {
		int rc = n % 2 ? r->be->ops->discard(r->be, RACE_UNRELATED, PAGE) : r->be->ops->flush(r->be);

		if (rc) {
			race_error(r, rc);
			return NULL;
		}
		atomic_fetch_add(&r->write_backs, 1);
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

START_TEST(read_never_older_than_acknowledged_write)
{
	static struct race r; /* static: big enough to keep off a thread stack, and zeroed */
	static uint64_t back[RACE_PAGES][PAGE / sizeof(uint64_t)];
	pthread_t writer, write_back;
	double start = now();
	unsigned reads = 0;
	char violation[200] = "";

	r.be = open_cache(MIB, NULL);
	ck_assert_int_eq(pthread_create(&writer, NULL, race_writer, &r), 0);
	ck_assert_int_eq(pthread_create(&write_back, NULL, race_write_back, &r), 0);
	while (reads < RACE_MAX_READS && now() - start < RACE_SECONDS && !atomic_load(&r.stop)) {
		uint64_t acked[RACE_PAGES];
		int rc;

		for (unsigned i = 0; i < RACE_PAGES; i++)
			acked[i] = atomic_load(&r.acked[i]);
		rc = r.be->ops->read(r.be, back, sizeof(back), 0);
		reads++;
		if (rc) {
			snprintf(violation, sizeof(violation), "read %u failed: %d", reads, rc);
			break;
		}
		for (unsigned i = 0; i < RACE_PAGES && !violation[0]; i++) {
			size_t w = 1;

			while (w < PAGE / sizeof(uint64_t) && back[i][w] == back[i][0])
				w++;
			if (back[i][0] < acked[i])
				snprintf(violation, sizeof(violation),
					 "violation after %u reads: page %u read %llu, acknowledged %llu before the read began",
					 reads, i, (unsigned long long)back[i][0], (unsigned long long)acked[i]);
			else if (w < PAGE / sizeof(uint64_t))
				snprintf(violation, sizeof(violation),
					 "torn page after %u reads: page %u word 0 is %llu, word %zu is %llu", reads, i,
					 (unsigned long long)back[i][0], w, (unsigned long long)back[i][w]);
		}
		if (violation[0])
			break;
	}
	atomic_store(&r.stop, true);
	pthread_join(writer, NULL);
	pthread_join(write_back, NULL);
	fprintf(stderr, "read_never_older_than_acknowledged_write: %u reads, %lu writes, %lu write-backs in %.2f s\n",
		reads, atomic_load(&r.writes), atomic_load(&r.write_backs), now() - start);
	ck_assert_msg(!violation[0], "%s (%lu writes, %lu write-backs)", violation, atomic_load(&r.writes),
		      atomic_load(&r.write_backs));
	ck_assert_msg(atomic_load(&r.error) == 0, "a write or write-back failed: %d", atomic_load(&r.error));
	/* The race was really run: writes and write-backs overlapped the reads. */
	ck_assert_uint_gt(atomic_load(&r.writes), 0);
	ck_assert_uint_gt(atomic_load(&r.write_backs), 0);
	be_close(r.be);
}
END_TEST

/* The neighbour writer: cached writes to the second half of page 0 until told to stop. */
struct neighbour {
	struct backend *be;
	atomic_bool stop;
	atomic_ulong writes;
};

static void *neighbour_writer(void *arg)
{
	struct neighbour *n = arg;
	uint8_t half[PAGE / 2];

	memset(half, 0x77, sizeof(half));
	while (!atomic_load(&n->stop)) {
		if (n->be->ops->write(n->be, half, sizeof(half), PAGE / 2, 0) == 0)
			atomic_fetch_add(&n->writes, 1);
	}
	return NULL;
}

/*
 * A discard of the first half of a page never comes back while another
 * thread keeps caching writes to the second half (backend.h: disjoint
 * ranges are safe together).  Before the fix a write that read the page
 * from below just before the discard laid its stale first half over it.
 */
START_TEST(discard_beside_cached_writes_stays_discarded)
{
	struct neighbour n = { .be = open_cache(MIB, NULL) };
	uint8_t first[PAGE / 2], back[PAGE / 2], zeros[PAGE / 2] = { 0 };
	pthread_t writer;
	unsigned rounds, bad = 0;
	double start = now();

	memset(first, 0xaa, sizeof(first));
	ck_assert_int_eq(pthread_create(&writer, NULL, neighbour_writer, &n), 0);
	for (rounds = 0; rounds < 4000 && now() - start < 5.0 && !bad; rounds++) {
		ck_assert_int_eq(n.be->ops->write(n.be, first, sizeof(first), 0, BE_WRITE_FUA), 0);
		ck_assert_int_eq(n.be->ops->discard(n.be, 0, sizeof(first)), 0);
		ck_assert_int_eq(n.be->ops->read(n.be, back, sizeof(back), 0), 0);
		if (memcmp(back, zeros, sizeof(back)) != 0)
			bad = rounds + 1;
	}
	atomic_store(&n.stop, true);
	pthread_join(writer, NULL);
	fprintf(stderr, "discard_beside_cached_writes_stays_discarded: %u rounds, %lu neighbour writes\n", rounds,
		atomic_load(&n.writes));
	ck_assert_msg(!bad, "round %u: discarded bytes came back", bad);
	ck_assert_uint_gt(atomic_load(&n.writes), 0);
	be_close(n.be);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("be_cache");
	TCase *tc = tcase_create("cache");
	TCase *race = tcase_create("race");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, wrap_needs_write_atomic_ranges);
	tcase_add_test(tc, cached_write_reads_back_and_flush_writes_it_below);
	tcase_add_test(tc, fua_write_goes_through_and_updates_cached_copy);
	tcase_add_test(tc, discard_after_cached_write_reads_zeros);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(race, setup, teardown);
	tcase_set_timeout(race, 30);
	tcase_add_test(race, read_never_older_than_acknowledged_write);
	tcase_add_test(race, discard_beside_cached_writes_stays_discarded);
	suite_add_tcase(s, race);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
