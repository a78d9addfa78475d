/*
 * be_cache.c: the volatile write-back cache, in front of be_file on a
 * temporary sparse file.  Cached writes read back and reach the backend
 * below only at a flush; FUA writes go through and update the cached copy;
 * a discard after a cached write reads zeros; and a read never returns data
 * older than a write acknowledged before it began, while flushes and
 * discards keep writing the cache back underneath it; nor does a discard
 * come back under cached writes beside it.
 *
 * In front of a failing backend (struct failing: be_mem whose writes past an
 * offset, or whose flushes, fail with a chosen errno, the way a full file
 * system does), nothing acknowledged is lost: data a write-back cannot write
 * stays cached and readable, every later flush fails again with the same
 * errno (which the core turns into the sense: ENOSPC -> DATA PROTECT, SPACE
 * ALLOCATION FAILED WRITE PROTECT) until the backend takes it, a cache full
 * of it refuses new writes instead of dropping any, a failed flush below
 * keeps the pages for a rewrite, discards still work (they are how space
 * comes back), and be_cache_stats counts it all.
 */
#include <check.h>
#include <errno.h>
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

/*
 * A discard drops the cached page it covers (no write-back: on a full disk
 * that may be impossible, and a discard is how space comes back); the
 * discarded range reads zeros, the rest the cached data, which reaches the
 * backend below at the next flush.
 */
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
	ck_assert(all_bytes(back, 2 * PAGE, 0)); /* the second page is still only cached */
	ck_assert_int_eq(be->ops->flush(be), 0);
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

/* ---- a failing backend below: full file systems and failing flushes ---- */

#define CACHE_BYTES (64u * MIB) /* be_cache.c CACHE_MAX_PAGES pages of 4 KiB */

/*
 * be_mem with faults: writes (FUA or not) that reach past fail_from fail
 * with -write_errno, as on a full file system where the blocks before
 * fail_from are allocated already and the others cannot be; flushes fail
 * with -flush_errno; extent reports holes only.  0 turns a fault off.
 */
struct failing {
	struct backend be;
	struct backend *mem;
	int write_errno;
	uint64_t fail_from;
	int flush_errno;
	unsigned writes, failed_writes, flushes;
};

static struct failing *failing_from(struct backend *be)
{
	return (struct failing *)be;
}

static void failing_close(struct backend *be)
{
	be_close(failing_from(be)->mem);
	free(be);
}

static int failing_read(struct backend *be, void *buf, size_t len, uint64_t off)
{
	struct backend *mem = failing_from(be)->mem;

	return mem->ops->read(mem, buf, len, off);
}

static int failing_write(struct backend *be, const void *buf, size_t len, uint64_t off, unsigned flags)
{
	struct failing *f = failing_from(be);

	f->writes++;
	if (f->write_errno && off + len > f->fail_from) {
		f->failed_writes++;
		return -f->write_errno;
	}
	return f->mem->ops->write(f->mem, buf, len, off, flags);
}

static int failing_flush(struct backend *be)
{
	struct failing *f = failing_from(be);

	f->flushes++;
	return f->flush_errno ? -f->flush_errno : 0;
}

static int failing_discard(struct backend *be, uint64_t off, uint64_t len)
{
	struct backend *mem = failing_from(be)->mem;

	return mem->ops->discard(mem, off, len);
}

static int failing_write_zeroes(struct backend *be, uint64_t off, uint64_t len, unsigned flags)
{
	struct backend *mem = failing_from(be)->mem;

	return mem->ops->write_zeroes(mem, off, len, flags);
}

static int failing_extent(struct backend *be, uint64_t off, uint64_t max_len, enum be_extent_kind *kind,
			  uint64_t *len)
{
	(void)be;
	(void)off;
	*kind = BE_EXTENT_HOLE;
	*len = max_len;
	return 0;
}

static int failing_resize(struct backend *be, uint64_t size)
{
	struct failing *f = failing_from(be);
	int rc = f->mem->ops->resize(f->mem, size);

	if (!rc)
		be->size = f->mem->size;
	return rc;
}

static int failing_write_atomic_ranges(struct backend *be, const struct be_range *r, unsigned n, const void *buf)
{
	struct backend *mem = failing_from(be)->mem;

	return mem->ops->write_atomic_ranges(mem, r, n, buf);
}

static const struct backend_ops failing_ops = {
	.name = "failing",
	.close = failing_close,
	.read = failing_read,
	.write = failing_write,
	.flush = failing_flush,
	.discard = failing_discard,
	.write_zeroes = failing_write_zeroes,
	.extent = failing_extent,
	.resize = failing_resize,
	.write_atomic_ranges = failing_write_atomic_ranges,
};

/* A cache over a failing backend of size bytes (no faults yet); *below is the failing backend. */
static struct backend *open_failing_cache(uint64_t size, struct failing **below)
{
	struct failing *f = calloc(1, sizeof(*f));
	struct backend *be;

	ck_assert_ptr_nonnull(f);
	f->mem = be_mem_open(size);
	ck_assert_ptr_nonnull(f->mem);
	f->be.ops = &failing_ops;
	f->be.size = size;
	be = be_cache_wrap(&f->be);
	ck_assert_ptr_nonnull(be);
	*below = f;
	return be;
}

static struct be_cache_stats stats_of(const struct backend *be)
{
	struct be_cache_stats st;

	memset(&st, 0xee, sizeof(st));
	ck_assert(be_cache_stats(be, &st));
	return st;
}

/* What the backend below holds (bypassing the cache). */
static void read_below(struct failing *f, void *buf, size_t len, uint64_t off)
{
	ck_assert_int_eq(f->mem->ops->read(f->mem, buf, len, off), 0);
}

/* The errnos of a write-back that fails, and the counter each one goes to. */
static const struct {
	int err;
	size_t counter; /* offset in struct be_cache_stats */
} write_back_errors[] = {
	{ ENOSPC, offsetof(struct be_cache_stats, below_enospc) },
	{ EDQUOT, offsetof(struct be_cache_stats, below_enospc) },
	{ EIO, offsetof(struct be_cache_stats, below_eio) },
	{ EROFS, offsetof(struct be_cache_stats, below_other) },
};

static uint64_t counter_of(const struct be_cache_stats *st, size_t counter)
{
	uint64_t v;

	memcpy(&v, (const char *)st + counter, sizeof(v));
	return v;
}

/*
 * The defect this guards against: the write-back dropped the pages it could
 * not write, so the first flush failed and later reads returned zeros and
 * later flushes GOOD.  Now: data that cannot be written back stays cached
 * and reads back; every flush tries it again and fails with the same errno
 * (counted by kind, the other counters untouched); once the backend takes
 * it, a flush succeeds and the backend below holds it all.
 */
START_TEST(write_back_failure_keeps_data_and_flushes_keep_failing)
{
	int err = write_back_errors[_i].err;
	size_t counter = write_back_errors[_i].counter;
	struct failing *f;
	struct backend *be = open_failing_cache(MIB, &f);
	struct be_cache_stats st;
	uint8_t buf[3 * PAGE], back[3 * PAGE];

	memset(buf, 0x5a, sizeof(buf));
	ck_assert_int_eq(be->ops->write(be, buf, 3 * PAGE, 2 * PAGE, 0), 0);
	memset(buf, 0x6b, 512);
	ck_assert_int_eq(be->ops->write(be, buf, 512, 10 * PAGE + 100, 0), 0);
	st = stats_of(be);
	ck_assert_uint_eq(st.dirty_bytes, 4 * PAGE);
	ck_assert_int_eq(st.error, 0);

	f->write_errno = err;
	for (unsigned pass = 1; pass <= 3; pass++) {
		ck_assert_int_eq(be->ops->flush(be), -err);
		/* Still readable, through the cache: reads return what was written. */
		ck_assert_int_eq(be->ops->read(be, back, 3 * PAGE, 2 * PAGE), 0);
		ck_assert(all_bytes(back, 3 * PAGE, 0x5a));
		ck_assert_int_eq(be->ops->read(be, back, PAGE, 10 * PAGE), 0);
		ck_assert(all_bytes(back, 100, 0));
		ck_assert(all_bytes(back + 100, 512, 0x6b));
		ck_assert(all_bytes(back + 612, PAGE - 612, 0));
		read_below(f, back, 3 * PAGE, 2 * PAGE);
		ck_assert(all_bytes(back, 3 * PAGE, 0));
		st = stats_of(be);
		ck_assert_uint_eq(st.dirty_bytes, 4 * PAGE);
		ck_assert_int_eq(st.error, -err);
		ck_assert_uint_eq(st.write_back_failures, pass);
		ck_assert_uint_eq(counter_of(&st, counter), 4 * pass); /* each page's write, each flush */
		ck_assert_uint_eq(st.below_enospc + st.below_eio + st.below_other, 4 * pass);
		ck_assert_uint_eq(st.refused_writes, 0);
	}

	f->write_errno = 0; /* space was freed */
	ck_assert_int_eq(be->ops->flush(be), 0);
	read_below(f, back, 3 * PAGE, 2 * PAGE);
	ck_assert(all_bytes(back, 3 * PAGE, 0x5a));
	read_below(f, back, PAGE, 10 * PAGE);
	ck_assert(all_bytes(back + 100, 512, 0x6b));
	st = stats_of(be);
	ck_assert_uint_eq(st.dirty_bytes, 0);
	ck_assert_int_eq(st.error, 0);
	ck_assert_uint_eq(st.write_back_failures, 3);
	ck_assert_uint_eq(counter_of(&st, counter), 12);
	ck_assert_int_eq(be->ops->flush(be), 0);
	be_close(be);
}
END_TEST

/*
 * A flush below that fails (fdatasync: EIO) keeps every page cached even
 * though its write went through: the file system may have dropped what it
 * held (emulated by zeroing the bytes below behind the cache's back), and
 * the next flush writes the pages again.
 */
START_TEST(failed_flush_below_keeps_pages_for_a_rewrite)
{
	struct failing *f;
	struct backend *be = open_failing_cache(MIB, &f);
	struct be_cache_stats st;
	uint8_t buf[2 * PAGE], back[2 * PAGE];

	memset(buf, 0x3c, sizeof(buf));
	ck_assert_int_eq(be->ops->write(be, buf, sizeof(buf), 7 * PAGE, 0), 0);
	f->flush_errno = EIO;
	ck_assert_int_eq(be->ops->flush(be), -EIO);
	st = stats_of(be);
	ck_assert_uint_eq(st.dirty_bytes, 2 * PAGE);
	ck_assert_int_eq(st.error, -EIO);
	ck_assert_uint_eq(st.below_eio, 1);
	ck_assert_uint_eq(st.write_back_failures, 1);

	ck_assert_int_eq(f->mem->ops->write_zeroes(f->mem, 7 * PAGE, 2 * PAGE, 0), 0); /* lost below */
	ck_assert_int_eq(be->ops->read(be, back, sizeof(back), 7 * PAGE), 0);
	ck_assert(all_bytes(back, sizeof(back), 0x3c));
	ck_assert_int_eq(be->ops->flush(be), -EIO);

	f->flush_errno = 0;
	f->writes = 0;
	ck_assert_int_eq(be->ops->flush(be), 0);
	ck_assert_uint_eq(f->writes, 2); /* written again */
	read_below(f, back, sizeof(back), 7 * PAGE);
	ck_assert(all_bytes(back, sizeof(back), 0x3c));
	st = stats_of(be);
	ck_assert_uint_eq(st.dirty_bytes, 0);
	ck_assert_int_eq(st.error, 0);
	be_close(be);
}
END_TEST

/* The pattern of 1 MiB chunk n (never all zeros). */
static void chunk_pattern(uint8_t *buf, unsigned n)
{
	for (size_t i = 0; i < MIB; i += sizeof(uint32_t)) {
		uint32_t v = (n + 1) * 0x9e3779b1u ^ (uint32_t)i;

		memcpy(buf + i, &v, sizeof(v));
	}
}

/*
 * Cached writes of 1 MiB fill the cache (64 MiB) over a backend that can
 * take only its first 4 MiB.  Past the cache's size a write-back writes
 * those 4 MiB and makes room for 4 more chunks; then the cache is full of
 * data it cannot write back, and the next write fails with ENOSPC (DATA
 * PROTECT, SPACE ALLOCATION FAILED WRITE PROTECT) instead of evicting any of
 * it.  Every acknowledged chunk reads back, the refused one changed nothing,
 * and once the backend takes data again the refused write succeeds and a
 * flush puts everything below.
 */
START_TEST(full_cache_of_unwritable_data_refuses_writes)
{
	const unsigned max_chunks = 128;
	struct failing *f;
	struct backend *be = open_failing_cache((uint64_t)max_chunks * MIB, &f);
	uint8_t *buf = malloc(MIB), *back = malloc(MIB);
	struct be_cache_stats st;
	unsigned acked;
	int rc = 0;

	ck_assert_ptr_nonnull(buf);
	ck_assert_ptr_nonnull(back);
	f->write_errno = ENOSPC;
	f->fail_from = 4 * MIB;
	for (acked = 0; acked < max_chunks; acked++) {
		chunk_pattern(buf, acked);
		rc = be->ops->write(be, buf, MIB, (uint64_t)acked * MIB, 0);
		if (rc)
			break;
	}
	ck_assert_int_eq(rc, -ENOSPC);
	ck_assert_uint_eq(acked, CACHE_BYTES / MIB + 4);
	st = stats_of(be);
	ck_assert_uint_eq(st.refused_writes, 1);
	ck_assert_uint_eq(st.dirty_bytes, CACHE_BYTES);
	ck_assert_int_eq(st.error, -ENOSPC);
	ck_assert_uint_eq(st.write_back_failures, 2); /* the write-back that made room for 4 chunks, and this one */

	for (unsigned n = 0; n < acked; n++) {
		chunk_pattern(buf, n);
		ck_assert_int_eq(be->ops->read(be, back, MIB, (uint64_t)n * MIB), 0);
		ck_assert_msg(memcmp(buf, back, MIB) == 0, "acknowledged chunk %u does not read back", n);
	}
	ck_assert_int_eq(be->ops->read(be, back, MIB, (uint64_t)acked * MIB), 0);
	ck_assert(all_bytes(back, MIB, 0)); /* the refused write left nothing */

	chunk_pattern(buf, acked);
	ck_assert_int_eq(be->ops->write(be, buf, MIB, (uint64_t)acked * MIB, 0), -ENOSPC);
	ck_assert_int_eq(be->ops->flush(be), -ENOSPC);
	st = stats_of(be);
	ck_assert_uint_eq(st.refused_writes, 2);
	ck_assert_uint_eq(st.dirty_bytes, CACHE_BYTES);

	f->write_errno = 0;
	ck_assert_int_eq(be->ops->write(be, buf, MIB, (uint64_t)acked * MIB, 0), 0);
	ck_assert_int_eq(be->ops->flush(be), 0);
	for (unsigned n = 0; n <= acked; n++) {
		chunk_pattern(buf, n);
		read_below(f, back, MIB, (uint64_t)n * MIB);
		ck_assert_msg(memcmp(buf, back, MIB) == 0, "chunk %u is not below after the flush", n);
	}
	st = stats_of(be);
	ck_assert_uint_eq(st.dirty_bytes, 0);
	ck_assert_int_eq(st.error, 0);
	free(buf);
	free(back);
	be_close(be);
}
END_TEST

/*
 * Discard and write_zeroes need no write-back (on a full disk they are how
 * space comes back): they drop the cached pages they cover whole and zero
 * the bytes they touch in the others, while the rest stays cached,
 * unwritable, and keeps the flushes failing until the backend takes it.
 */
START_TEST(discard_works_while_the_cache_cannot_be_written_back)
{
	struct failing *f;
	struct backend *be = open_failing_cache(MIB, &f);
	uint8_t buf[4 * PAGE], back[4 * PAGE];

	f->write_errno = ENOSPC;
	memset(buf, 0x44, sizeof(buf));
	ck_assert_int_eq(be->ops->write(be, buf, 4 * PAGE, 0, 0), 0);
	memset(buf, 0x55, PAGE / 2);
	ck_assert_int_eq(be->ops->write(be, buf, PAGE / 2, 5 * PAGE, 0), 0);
	ck_assert_int_eq(be->ops->flush(be), -ENOSPC);
	ck_assert_uint_eq(stats_of(be).dirty_bytes, 5 * PAGE);

	ck_assert_int_eq(be->ops->discard(be, PAGE, 2 * PAGE), 0);               /* pages 1, 2 whole */
	ck_assert_int_eq(be->ops->write_zeroes(be, 3 * PAGE, PAGE, 0), 0);       /* page 3 whole */
	ck_assert_int_eq(be->ops->discard(be, 5 * PAGE + 1024, 512), 0);         /* inside page 5 */
	ck_assert_uint_eq(stats_of(be).dirty_bytes, 2 * PAGE);

	for (int pass = 0; pass < 2; pass++) {
		if (pass) {
			ck_assert_int_eq(be->ops->flush(be), -ENOSPC);
			f->write_errno = 0;
			ck_assert_int_eq(be->ops->flush(be), 0);
			ck_assert_uint_eq(stats_of(be).dirty_bytes, 0);
		}
		/* Through the cache before, below after the successful flush: the same bytes. */
		if (pass)
			read_below(f, back, 4 * PAGE, 0);
		else
			ck_assert_int_eq(be->ops->read(be, back, 4 * PAGE, 0), 0);
		ck_assert(all_bytes(back, PAGE, 0x44));
		ck_assert(all_bytes(back + PAGE, 3 * PAGE, 0));
		if (pass)
			read_below(f, back, PAGE, 5 * PAGE);
		else
			ck_assert_int_eq(be->ops->read(be, back, PAGE, 5 * PAGE), 0);
		ck_assert(all_bytes(back, 1024, 0x55));
		ck_assert(all_bytes(back + 1024, 512, 0));
		ck_assert(all_bytes(back + 1536, PAGE / 2 - 1536, 0x55));
		ck_assert(all_bytes(back + PAGE / 2, PAGE / 2, 0));
	}
	be_close(be);
}
END_TEST

/*
 * extent needs no write-back either: holes below are reported allocated
 * where cached pages (allocated once written back) lie, and cut short
 * before them.
 */
START_TEST(extent_counts_cached_pages_as_allocated)
{
	struct failing *f;
	struct backend *be = open_failing_cache(32 * MIB, &f);
	uint8_t buf[2 * PAGE];
	enum be_extent_kind kind;
	uint64_t len;
	static const struct {
		uint64_t off, max_len;
		enum be_extent_kind kind;
		uint64_t len;
	} cases[] = {
		{ 0, 16 * PAGE, BE_EXTENT_HOLE, 4 * PAGE },
		{ 4 * PAGE, 16 * PAGE, BE_EXTENT_ALLOCATED, 2 * PAGE },
		{ 5 * PAGE + 512, PAGE, BE_EXTENT_ALLOCATED, PAGE - 512 },
		{ 6 * PAGE, 16 * PAGE, BE_EXTENT_HOLE, 3 * PAGE },
		{ 9 * PAGE + 512, 16 * PAGE, BE_EXTENT_ALLOCATED, PAGE - 512 },
		{ 10 * PAGE, 6 * PAGE, BE_EXTENT_HOLE, 6 * PAGE },
		{ 0, 32 * MIB, BE_EXTENT_HOLE, 4 * PAGE }, /* more pages than buckets: the walk over the cache */
		{ 4 * PAGE, 32 * MIB - 4 * PAGE, BE_EXTENT_ALLOCATED, 2 * PAGE },
	};

	f->write_errno = ENOSPC;
	memset(buf, 0x21, sizeof(buf));
	ck_assert_int_eq(be->ops->write(be, buf, 2 * PAGE, 4 * PAGE, 0), 0);
	ck_assert_int_eq(be->ops->write(be, buf, 512, 9 * PAGE + 1024, 0), 0);
	ck_assert_int_eq(be->ops->flush(be), -ENOSPC);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_int_eq(be->ops->extent(be, cases[i].off, cases[i].max_len, &kind, &len), 0);
		ck_assert_msg(kind == cases[i].kind && len == cases[i].len,
			      "extent at %llu: kind %d len %llu, want kind %d len %llu",
			      (unsigned long long)cases[i].off, kind, (unsigned long long)len, cases[i].kind,
			      (unsigned long long)cases[i].len);
	}
	ck_assert_uint_eq(stats_of(be).dirty_bytes, 3 * PAGE);
	ck_assert_int_eq(stats_of(be).error, -ENOSPC);
	/* Zeroing the whole LU (FORMAT UNIT, SANITIZE) drops every page, and with them the error. */
	ck_assert_int_eq(be->ops->write_zeroes(be, 0, 32 * MIB, BE_ZERO_MAY_DISCARD), 0);
	ck_assert_uint_eq(stats_of(be).dirty_bytes, 0);
	ck_assert_int_eq(stats_of(be).error, 0);
	ck_assert_int_eq(be->ops->flush(be), 0);
	be_close(be);
}
END_TEST

/* A resize starts from an empty cache: with a write-back that fails it fails, and the data stays. */
START_TEST(resize_fails_while_the_cache_cannot_be_written_back)
{
	struct failing *f;
	struct backend *be = open_failing_cache(MIB, &f);
	uint8_t buf[PAGE], back[PAGE];

	memset(buf, 0x71, sizeof(buf));
	ck_assert_int_eq(be->ops->write(be, buf, PAGE, 3 * PAGE, 0), 0);
	f->write_errno = EIO;
	ck_assert_int_eq(be->ops->resize(be, 2 * MIB), -EIO);
	ck_assert_uint_eq(be->size, MIB);
	ck_assert_int_eq(be->ops->read(be, back, PAGE, 3 * PAGE), 0);
	ck_assert(all_bytes(back, PAGE, 0x71));
	f->write_errno = 0;
	ck_assert_int_eq(be->ops->resize(be, 2 * MIB), 0);
	ck_assert_uint_eq(be->size, 2 * MIB);
	read_below(f, back, PAGE, 3 * PAGE);
	ck_assert(all_bytes(back, PAGE, 0x71));
	be_close(be);
}
END_TEST

/* be_cache_stats answers for a be_cache only. */
START_TEST(stats_only_for_a_cache)
{
	struct backend *mem = be_mem_open(MIB), *be;
	struct be_cache_stats st = { .refused_writes = 42 };

	ck_assert(!be_cache_stats(mem, &st));
	ck_assert(!be_cache_stats(NULL, &st));
	ck_assert_uint_eq(st.refused_writes, 42);
	be = be_cache_wrap(mem);
	ck_assert(be_cache_stats(be, &st));
	ck_assert_uint_eq(st.refused_writes, 0);
	be_close(be);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("be_cache");
	TCase *tc = tcase_create("cache");
	TCase *failing = tcase_create("failing below");
	TCase *race = tcase_create("race");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, wrap_needs_write_atomic_ranges);
	tcase_add_test(tc, cached_write_reads_back_and_flush_writes_it_below);
	tcase_add_test(tc, fua_write_goes_through_and_updates_cached_copy);
	tcase_add_test(tc, discard_after_cached_write_reads_zeros);
	suite_add_tcase(s, tc);
	tcase_add_loop_test(failing, write_back_failure_keeps_data_and_flushes_keep_failing, 0,
			    (int)(sizeof(write_back_errors) / sizeof(write_back_errors[0])));
	tcase_add_test(failing, failed_flush_below_keeps_pages_for_a_rewrite);
	tcase_add_test(failing, full_cache_of_unwritable_data_refuses_writes);
	tcase_add_test(failing, discard_works_while_the_cache_cannot_be_written_back);
	tcase_add_test(failing, extent_counts_cached_pages_as_allocated);
	tcase_add_test(failing, resize_fails_while_the_cache_cannot_be_written_back);
	tcase_add_test(failing, stats_only_for_a_cache);
	tcase_set_timeout(failing, 60);
	suite_add_tcase(s, failing);
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
