/*
 * A volatile write-back cache in front of another backend, for power-loss
 * emulation (docs/atomic.md): writes without BE_WRITE_FUA stay in this
 * process's memory until a flush, so killing the process (SIGKILL: the
 * "power cut") loses exactly what a drive with a volatile write cache would
 * lose, and keeps everything flushed, written with FUA, or written through
 * write_atomic (durable on its own, the intent log).
 *
 * The cache holds whole pages of PAGE_LEN bytes, and only pages not yet
 * durable below: a write into a page that is not cached reads the page from
 * below first.  Reads overlay the cached pages on what the backend below
 * returns.  A page leaves the cache in three ways only: a write-back wrote
 * it below and the flush below that followed succeeded; a discard or
 * write_zeroes covered it whole (its bytes are zeros now, below); or the
 * cache is closed.
 *
 * Write-backs (a flush, a full cache at CACHE_MAX_PAGES, resize, close)
 * write every cached page below, then flush below, then drop the pages that
 * got there.  A page whose write fails (the file system below is full:
 * ENOSPC, or EIO) stays cached, dirty and readable, and so does every page
 * when the flush below fails (after a failed fdatasync the file system may
 * have let go of what the writes left in its page cache; only a rewrite from
 * here brings it back).  So, as on a drive, every later flush tries again
 * and fails again while the data cannot be written, and succeeds once it
 * can (space was freed, by an UNMAP of this LU or outside).  A cached write
 * that needs room in a cache full of such pages fails with the write-back's
 * error instead of dropping any of them.  Discard and write_zeroes do not
 * write the cache back (that may be impossible, and a discard is how space
 * comes back): they act below, then zero the bytes of the cached pages they
 * touch and drop the pages they cover whole.  extent reports from below,
 * with the cached pages (data that will be allocated once written back)
 * counted as allocated.
 *
 * A streamed atomic write (stream_*) goes to the backend below as it
 * arrives, never into the cache; at the commit the cached pages it covers
 * are written back and dropped first, so that neither they nor the reads
 * overlaying them can put older data over it.
 *
 * The lock is a read-write lock.  A read holds it shared from its read of
 * the backend below to the end of its overlay of the cached pages: were it
 * released in between, a write-back could write a newer cached page below
 * and drop it after the read below and before the overlay, and the read
 * would return data older than a write acknowledged before it began.
 * extent holds it shared too.  Everything that changes the page table,
 * writes pages back or writes below through the cache holds it
 * exclusively, and the *_locked functions are called with it held so.  A
 * flush lets go of it while the backend below flushes (an fdatasync may take
 * long): every write-back stamps the pages it wrote with its own ticket,
 * anything that changes a page clears the stamp, and the flush drops only
 * the pages still carrying its ticket.  Writers are preferred where the C
 * library offers it (glibc), so that a steady stream of reads cannot starve
 * writes and flushes.
 *
 * Errors from the backend below are counted by kind, with the write-backs
 * that failed and the writes refused (be_cache_stats; the counters are
 * atomics, read without the lock), and the daemon hears when the cache
 * starts holding data it cannot write back and when it no longer does
 * (be_cache_set_reporter), to log both.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

#define PAGE_LEN 4096u
#define CACHE_MAX_PAGES 16384u /* 64 MiB */
#define BUCKETS 4096u

struct page {
	struct page *next;
	uint64_t index;
	/* the write-back that wrote this content below and may drop it after its flush below; 0: none */
	uint64_t ticket;
	uint8_t data[PAGE_LEN];
};

struct be_cache {
	struct backend be;
	struct backend *lower;
	pthread_rwlock_t lock; /* shared: cache_read, cache_extent; exclusive: the rest (see the top) */
	struct page *bucket[BUCKETS];
	unsigned pages;        /* changed with the lock held exclusively, through pages_set (be_cache_stats) */
	uint64_t next_ticket;  /* the last write-back ticket handed out */
	/* the ranges of the stream under way (stream_begin .. commit / abandon) */
	struct be_range *stream_ranges;
	unsigned stream_n;
	/* be_cache_stats: updated and read with __atomic builtins */
	uint64_t below_enospc, below_eio, below_other;
	uint64_t write_back_failures, refused_writes;
	int error;
	/* be_cache_set_reporter: called, with the lock held exclusively, when error turns nonzero or back to 0 */
	be_cache_report_fn report;
	char *label;
};

static struct be_cache *cache_from(struct backend *be)
{
	return (struct be_cache *)be;
}

/* Counts a failure of a call to the backend below and passes its result on. */
static int below(struct be_cache *c, int rc)
{
	uint64_t *counter;

	if (rc >= 0)
		return rc;
	switch (-rc) {
	case ENOSPC:
	case EDQUOT:
		counter = &c->below_enospc;
		break;
	case EIO:
		counter = &c->below_eio;
		break;
	default:
		counter = &c->below_other;
		break;
	}
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
	return rc;
}

/* The cache's error changes (lock held exclusively); the reporter hears of a new episode and of its end. */
static void error_set(struct be_cache *c, int error)
{
	int was = c->error;
	struct be_cache_stats st;

	__atomic_store_n(&c->error, error, __ATOMIC_RELAXED);
	if (c->report && !was != !error && be_cache_stats(&c->be, &st))
		c->report(c->label, &st);
}

/* The number of cached pages changes; an empty cache holds nothing it failed to write back. */
static void pages_set(struct be_cache *c, unsigned pages)
{
	__atomic_store_n(&c->pages, pages, __ATOMIC_RELAXED);
	if (!pages && c->error)
		error_set(c, 0);
}

static struct page **slot(struct be_cache *c, uint64_t index)
{
	struct page **pp = &c->bucket[index % BUCKETS];

	while (*pp && (*pp)->index != index)
		pp = &(*pp)->next;
	return pp;
}

/* Bytes of page index that lie inside the device. */
static size_t page_len(const struct be_cache *c, uint64_t index)
{
	uint64_t start = index * PAGE_LEN;

	return c->be.size - start < PAGE_LEN ? (size_t)(c->be.size - start) : PAGE_LEN;
}

/* Unlinks and frees *pp (a cached page). */
static void drop_page_locked(struct be_cache *c, struct page **pp)
{
	struct page *p = *pp;

	*pp = p->next;
	free(p);
	pages_set(c, c->pages - 1);
}

/*
 * Write-back, first step: writes every cached page below and stamps the
 * ones written with a new ticket.  Returns the first error; *written is the
 * number of pages written, *ticket the ticket.
 */
static int write_pages_locked(struct be_cache *c, unsigned *written, uint64_t *ticket)
{
	int rc = 0;

	*ticket = ++c->next_ticket;
	*written = 0;
	for (unsigned b = 0; b < BUCKETS; b++) {
		for (struct page *p = c->bucket[b]; p; p = p->next) {
			int r = below(c, c->lower->ops->write(c->lower, p->data, page_len(c, p->index),
							      p->index * PAGE_LEN, 0));

			if (r) {
				if (!rc)
					rc = r;
				continue;
			}
			p->ticket = *ticket;
			(*written)++;
		}
	}
	return rc;
}

/*
 * Write-back, last step, after the flush below: drops the pages still
 * stamped with ticket if that flush succeeded (durable), else clears their
 * stamps (the next write-back writes them again).  rc is the write-back's
 * result: a failure that leaves pages in the cache is counted and kept as
 * the cache's error.
 */
static void finish_write_back_locked(struct be_cache *c, uint64_t ticket, bool durable, int rc)
{
	for (unsigned b = 0; b < BUCKETS; b++) {
		struct page **pp = &c->bucket[b];

		while (*pp) {
			if ((*pp)->ticket == ticket && durable) {
				drop_page_locked(c, pp);
				continue;
			}
			if ((*pp)->ticket == ticket)
				(*pp)->ticket = 0;
			pp = &(*pp)->next;
		}
	}
	if (rc && c->pages) {
		__atomic_fetch_add(&c->write_back_failures, 1, __ATOMIC_RELAXED);
		error_set(c, rc);
	}
}

/*
 * Writes every cached page below and flushes below, with the lock held
 * throughout; the pages that reached the medium leave the cache, the others
 * stay.  Returns 0 when the cache is empty afterwards, else the first error.
 * *flushed (if not NULL): the flush below ran and succeeded.
 */
static int write_back_locked(struct be_cache *c, bool *flushed)
{
	unsigned written;
	uint64_t ticket;
	int rc, frc = 0;

	if (flushed)
		*flushed = false;
	if (!c->pages)
		return 0;
	rc = write_pages_locked(c, &written, &ticket);
	if (written) {
		frc = below(c, c->lower->ops->flush(c->lower));
		if (!frc && flushed)
			*flushed = true;
	}
	if (!rc)
		rc = frc;
	finish_write_back_locked(c, ticket, written && !frc, rc);
	return rc;
}

/*
 * Copies buf (len bytes at off) into the cached pages it overlaps; with add,
 * caches missing pages first.  Every page it changes loses its write-back
 * stamp: its new content has not been written below.
 */
static int update_pages_locked(struct be_cache *c, const uint8_t *buf, size_t len, uint64_t off, bool add)
{
	uint64_t end = off + len;

	for (uint64_t index = off / PAGE_LEN; index * PAGE_LEN < end; index++) {
		uint64_t start = index * PAGE_LEN;
		uint64_t from = off > start ? off : start;
		uint64_t to = end < start + PAGE_LEN ? end : start + PAGE_LEN;
		struct page **pp = slot(c, index);

		if (!*pp) {
			int rc;

			if (!add)
				continue;
			*pp = calloc(1, sizeof(struct page));
			if (!*pp)
				return -ENOMEM;
			(*pp)->index = index;
			rc = below(c, c->lower->ops->read(c->lower, (*pp)->data, page_len(c, index), start));
			if (rc) {
				free(*pp);
				*pp = NULL;
				return rc;
			}
			pages_set(c, c->pages + 1);
		}
		memcpy((*pp)->data + (from - start), buf + (from - off), to - from);
		(*pp)->ticket = 0;
	}
	return 0;
}

/*
 * Makes room for the pages of [off, off + len) not cached yet.  Past
 * CACHE_MAX_PAGES the cache is written back; if what stays (pages that could
 * not be written) still leaves no room, the write is refused with the
 * write-back's error: no acknowledged data is ever dropped to make room.  A
 * write bigger than the whole cache fits an empty one.
 */
static int make_room_locked(struct be_cache *c, uint64_t off, size_t len)
{
	uint64_t missing = 0;
	int rc;

	for (uint64_t index = off / PAGE_LEN; index * PAGE_LEN < off + len; index++)
		missing += !*slot(c, index);
	if (c->pages + missing <= CACHE_MAX_PAGES)
		return 0;
	rc = write_back_locked(c, NULL);
	if (!c->pages || c->pages + missing <= CACHE_MAX_PAGES)
		return 0;
	__atomic_fetch_add(&c->refused_writes, 1, __ATOMIC_RELAXED);
	return rc ? rc : -ENOSPC;
}

/*
 * A discard or write_zeroes of [off, off + len) was done below: the cached
 * pages it covers whole go (their bytes are zeros below now, and nothing
 * else of them is cached), the ones it touches get zeros there.  Iterates
 * over the range's pages or over the cache, whichever is smaller.
 */
static bool zero_page_locked(struct be_cache *c, struct page **pp, uint64_t off, uint64_t len)
{
	struct page *p = *pp;
	uint64_t start, end, from, to;

	if (!p)
		return false;
	start = p->index * PAGE_LEN;
	end = start + page_len(c, p->index);
	from = off > start ? off : start;
	to = off + len < end ? off + len : end;
	if (from >= to)
		return false;
	if (from == start && to == end) {
		drop_page_locked(c, pp);
		return true;
	}
	memset(p->data + (from - start), 0, to - from);
	p->ticket = 0;
	return false;
}

static void zero_range_locked(struct be_cache *c, uint64_t off, uint64_t len)
{
	uint64_t first, last;

	if (!len || !c->pages)
		return;
	first = off / PAGE_LEN;
	last = (off + len - 1) / PAGE_LEN;
	if (last - first < BUCKETS) {
		for (uint64_t index = first; index <= last; index++)
			zero_page_locked(c, slot(c, index), off, len);
		return;
	}
	for (unsigned b = 0; b < BUCKETS; b++) {
		struct page **pp = &c->bucket[b];

		while (*pp) {
			if ((*pp)->index >= first && (*pp)->index <= last && zero_page_locked(c, pp, off, len))
				continue;
			pp = &(*pp)->next;
		}
	}
}

/* The lowest index of a cached page in [first, last], or UINT64_MAX. */
static uint64_t first_cached_locked(struct be_cache *c, uint64_t first, uint64_t last)
{
	uint64_t found = UINT64_MAX;

	if (last - first < BUCKETS) {
		for (uint64_t index = first; index <= last; index++)
			if (*slot(c, index))
				return index;
		return found;
	}
	for (unsigned b = 0; b < BUCKETS; b++)
		for (struct page *p = c->bucket[b]; p; p = p->next)
			if (p->index >= first && p->index <= last && p->index < found)
				found = p->index;
	return found;
}

static void free_pages_locked(struct be_cache *c)
{
	for (unsigned b = 0; b < BUCKETS; b++)
		while (c->bucket[b])
			drop_page_locked(c, &c->bucket[b]);
}

static void cache_close(struct backend *be)
{
	struct be_cache *c = cache_from(be);
	bool flushed;

	/*
	 * A clean close is not a power cut: what the cache holds goes down.
	 * What cannot (the daemon's last flush already failed and said so) is
	 * lost with the process.
	 */
	if (write_back_locked(c, &flushed) == 0 && !flushed)
		below(c, c->lower->ops->flush(c->lower));
	c->report = NULL; /* what is freed here was not written back */
	free_pages_locked(c);
	be_close(c->lower);
	pthread_rwlock_destroy(&c->lock);
	free(c->stream_ranges);
	free(c->label);
	free(c);
}

/* The power is cut: the cached pages, never written back, are lost (the top of this file). */
static uint64_t cache_power_loss(struct backend *be)
{
	struct be_cache *c = cache_from(be);
	uint64_t lost;

	pthread_rwlock_wrlock(&c->lock);
	lost = (uint64_t)c->pages * PAGE_LEN;
	free_pages_locked(c);
	pthread_rwlock_unlock(&c->lock);
	return lost;
}

static int cache_read(struct backend *be, void *buf, size_t len, uint64_t off)
{
	struct be_cache *c = cache_from(be);
	uint8_t *out = buf;
	uint64_t end = off + len;
	int rc;

	/* Shared across both steps: no write-back may come between the read below and the overlay. */
	pthread_rwlock_rdlock(&c->lock);
	rc = below(c, c->lower->ops->read(c->lower, buf, len, off));
	for (uint64_t index = off / PAGE_LEN; !rc && index * PAGE_LEN < end && c->pages; index++) {
		struct page *p = *slot(c, index);
		uint64_t start = index * PAGE_LEN;
		uint64_t from = off > start ? off : start;
		uint64_t to = end < start + PAGE_LEN ? end : start + PAGE_LEN;

		if (p)
			memcpy(out + (from - off), p->data + (from - start), to - from);
	}
	pthread_rwlock_unlock(&c->lock);
	return rc;
}

static int cache_write(struct backend *be, const void *buf, size_t len, uint64_t off, unsigned flags)
{
	struct be_cache *c = cache_from(be);
	int rc;

	if (off > be->size || len > be->size - off)
		return -EINVAL;
	pthread_rwlock_wrlock(&c->lock);
	if (flags & BE_WRITE_FUA) {
		/* Through to the medium; cached copies of those bytes follow. */
		rc = below(c, c->lower->ops->write(c->lower, buf, len, off, flags));
		if (!rc)
			rc = update_pages_locked(c, buf, len, off, false);
	} else {
		rc = make_room_locked(c, off, len);
		if (!rc)
			rc = update_pages_locked(c, buf, len, off, true);
	}
	pthread_rwlock_unlock(&c->lock);
	return rc;
}

/*
 * The pages are written below with the lock held, the flush below runs
 * without it (reads and writes go on meanwhile), and the pages it made
 * durable are dropped with it held again: those still stamped with this
 * write-back's ticket, i.e. not changed since.
 */
static int cache_flush(struct backend *be)
{
	struct be_cache *c = cache_from(be);
	unsigned written = 0;
	uint64_t ticket = 0;
	int rc = 0, frc;

	pthread_rwlock_wrlock(&c->lock);
	if (c->pages)
		rc = write_pages_locked(c, &written, &ticket);
	pthread_rwlock_unlock(&c->lock);
	frc = below(c, c->lower->ops->flush(c->lower));
	if (!rc)
		rc = frc;
	if (ticket) {
		pthread_rwlock_wrlock(&c->lock);
		finish_write_back_locked(c, ticket, written && !frc, rc);
		pthread_rwlock_unlock(&c->lock);
	}
	return rc;
}

/*
 * discard and write_zeroes act on the backend below, then on the cached
 * pages (zero_range_locked), under one exclusive hold of the lock: no write
 * can cache a page of the range, read from below before the change, in
 * between (its stale bytes would come back over the discarded ones at the
 * next write-back), and no read can see the one done without the other.
 * If the call below fails the cached pages stay as they were.
 */
static int cache_discard(struct backend *be, uint64_t off, uint64_t len)
{
	struct be_cache *c = cache_from(be);
	int rc;

	pthread_rwlock_wrlock(&c->lock);
	rc = below(c, c->lower->ops->discard(c->lower, off, len));
	if (!rc)
		zero_range_locked(c, off, len);
	pthread_rwlock_unlock(&c->lock);
	return rc;
}

static int cache_write_zeroes(struct backend *be, uint64_t off, uint64_t len, unsigned flags)
{
	struct be_cache *c = cache_from(be);
	int rc;

	pthread_rwlock_wrlock(&c->lock);
	rc = below(c, c->lower->ops->write_zeroes(c->lower, off, len, flags));
	if (!rc)
		zero_range_locked(c, off, len);
	pthread_rwlock_unlock(&c->lock);
	return rc;
}

/*
 * The allocation below, plus what writing the cache back would allocate:
 * the bytes of each cached page that lie in a hole below (counted as
 * extent counts them: allocated once written back).  An estimate (SBC-4
 * calls the resource counts one): a page's hole is measured from its start.
 */
static int cache_allocated(struct backend *be, uint64_t *bytes)
{
	struct be_cache *c = cache_from(be);
	const struct backend_ops *ops = c->lower->ops;
	uint64_t total;
	int rc;

	if (!ops->allocated)
		return -EOPNOTSUPP;
	pthread_rwlock_rdlock(&c->lock);
	rc = ops->allocated(c->lower, &total);
	for (unsigned b = 0; rc == 0 && b < BUCKETS; b++) {
		for (const struct page *p = c->bucket[b]; p; p = p->next) {
			enum be_extent_kind kind;
			uint64_t off = p->index * PAGE_LEN, len = 0;

			if (off >= c->lower->size)
				continue;
			if (ops->extent(c->lower, off, page_len(c, p->index), &kind, &len) == 0 && kind == BE_EXTENT_HOLE)
				total += len;
		}
	}
	pthread_rwlock_unlock(&c->lock);
	if (rc == 0)
		*bytes = total;
	/* Not knowing is no failure below (the stats count failures). */
	return rc == -EOPNOTSUPP ? rc : below(c, rc);
}

/*
 * Extents come from below, where the cached pages are not yet: a hole below
 * is cut short at the first cached page in it, and reported allocated from
 * a cached page on, through the run of cached pages (allocated once written
 * back, as a write-back of the cache would make them).
 */
static int cache_extent(struct backend *be, uint64_t off, uint64_t max_len, enum be_extent_kind *kind,
			uint64_t *len)
{
	struct be_cache *c = cache_from(be);
	uint64_t end, first, index;
	int rc;

	pthread_rwlock_rdlock(&c->lock);
	rc = below(c, c->lower->ops->extent(c->lower, off, max_len, kind, len));
	if (rc || *kind != BE_EXTENT_HOLE || !*len || !c->pages)
		goto out;
	end = off + *len;
	first = first_cached_locked(c, off / PAGE_LEN, (end - 1) / PAGE_LEN);
	if (first == UINT64_MAX)
		goto out;
	if (first * PAGE_LEN > off) {
		*len = first * PAGE_LEN - off;
		goto out;
	}
	for (index = first; index * PAGE_LEN < end && *slot(c, index); index++)
		;
	*kind = BE_EXTENT_ALLOCATED;
	*len = (index * PAGE_LEN < end ? index * PAGE_LEN : end) - off;
out:
	pthread_rwlock_unlock(&c->lock);
	return rc;
}

/* A resize starts from an empty cache (the page lengths change): it fails if the cache cannot be written back. */
static int cache_resize(struct backend *be, uint64_t size)
{
	struct be_cache *c = cache_from(be);
	int rc;

	pthread_rwlock_wrlock(&c->lock);
	rc = write_back_locked(c, NULL);
	if (!rc)
		rc = below(c, c->lower->ops->resize(c->lower, size));
	if (!rc)
		be->size = c->lower->size;
	pthread_rwlock_unlock(&c->lock);
	return rc;
}

static int cache_write_atomic_ranges(struct backend *be, const struct be_range *r, unsigned n, const void *buf)
{
	struct be_cache *c = cache_from(be);
	const uint8_t *p = buf;
	int rc;

	pthread_rwlock_wrlock(&c->lock);
	rc = below(c, c->lower->ops->write_atomic_ranges(c->lower, r, n, buf));
	for (unsigned i = 0; i < n && !rc; p += r[i].len, i++)
		rc = update_pages_locked(c, p, r[i].len, r[i].offset, false);
	pthread_rwlock_unlock(&c->lock);
	return rc;
}

static int cache_write_atomic(struct backend *be, const void *buf, size_t len, uint64_t off)
{
	struct be_range r = { .offset = off, .len = len };

	return cache_write_atomic_ranges(be, &r, 1, buf);
}

static int cache_stream_begin(struct backend *be, const struct be_range *r, unsigned n)
{
	struct be_cache *c = cache_from(be);
	int rc;

	if (!c->lower->ops->stream_begin)
		return -EOPNOTSUPP;
	pthread_rwlock_wrlock(&c->lock);
	if (c->stream_ranges) {
		rc = -EBUSY;
	} else {
		c->stream_ranges = malloc((size_t)n * sizeof(*r));
		rc = c->stream_ranges ? below(c, c->lower->ops->stream_begin(c->lower, r, n)) : -ENOMEM;
		if (rc == 0) {
			memcpy(c->stream_ranges, r, (size_t)n * sizeof(*r));
			c->stream_n = n;
		} else {
			free(c->stream_ranges);
			c->stream_ranges = NULL;
		}
	}
	pthread_rwlock_unlock(&c->lock);
	return rc;
}

static void stream_end_locked(struct be_cache *c)
{
	free(c->stream_ranges);
	c->stream_ranges = NULL;
	c->stream_n = 0;
}

static int cache_stream_append(struct backend *be, const void *buf, size_t len)
{
	struct be_cache *c = cache_from(be);
	int rc = below(c, c->lower->ops->stream_append(c->lower, buf, len));

	if (rc) {
		pthread_rwlock_wrlock(&c->lock);
		stream_end_locked(c); /* a failed append ends the stream below too */
		pthread_rwlock_unlock(&c->lock);
	}
	return rc;
}

/*
 * Writes back and drops the cached pages that overlap [off, off + len); a
 * page that cannot be written stays, and the commit fails.
 */
static int evict_locked(struct be_cache *c, uint64_t off, uint64_t len)
{
	for (uint64_t index = off / PAGE_LEN; len && index * PAGE_LEN < off + len; index++) {
		struct page **pp = slot(c, index), *page = *pp;
		int rc;

		if (!page)
			continue;
		rc = below(c, c->lower->ops->write(c->lower, page->data, page_len(c, index), index * PAGE_LEN, 0));
		if (rc) {
			__atomic_fetch_add(&c->write_back_failures, 1, __ATOMIC_RELAXED);
			error_set(c, rc);
			return rc;
		}
		drop_page_locked(c, pp);
	}
	return 0;
}

static int cache_stream_commit(struct backend *be)
{
	struct be_cache *c = cache_from(be);
	int rc = 0;

	pthread_rwlock_wrlock(&c->lock);
	for (unsigned i = 0; i < c->stream_n && !rc; i++)
		rc = evict_locked(c, c->stream_ranges[i].offset, c->stream_ranges[i].len);
	if (rc)
		c->lower->ops->stream_abandon(c->lower);
	else
		rc = below(c, c->lower->ops->stream_commit(c->lower));
	stream_end_locked(c);
	pthread_rwlock_unlock(&c->lock);
	return rc;
}

static void cache_stream_abandon(struct backend *be)
{
	struct be_cache *c = cache_from(be);

	c->lower->ops->stream_abandon(c->lower);
	pthread_rwlock_wrlock(&c->lock);
	stream_end_locked(c);
	pthread_rwlock_unlock(&c->lock);
}

static const struct backend_ops be_cache_ops = {
	.name = "volatile write cache",
	.close = cache_close,
	.read = cache_read,
	.write = cache_write,
	.flush = cache_flush,
	.discard = cache_discard,
	.write_zeroes = cache_write_zeroes,
	.extent = cache_extent,
	.allocated = cache_allocated,
	.resize = cache_resize,
	.write_atomic = cache_write_atomic,
	.write_atomic_ranges = cache_write_atomic_ranges,
	.stream_begin = cache_stream_begin,
	.stream_append = cache_stream_append,
	.stream_commit = cache_stream_commit,
	.stream_abandon = cache_stream_abandon,
	.power_loss = cache_power_loss,
};

static void init_lock(pthread_rwlock_t *lock)
{
	pthread_rwlockattr_t attr;

	pthread_rwlockattr_init(&attr);
#ifdef __GLIBC__
	/* glibc prefers readers by default: a steady stream of reads would starve writes and flushes. */
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
	pthread_rwlock_init(lock, &attr);
	pthread_rwlockattr_destroy(&attr);
}

struct backend *be_cache_wrap(struct backend *lower)
{
	struct be_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (!lower->ops->write_atomic_ranges) {
		free(c);
		return NULL;
	}
	c->be = *lower;
	c->be.ops = &be_cache_ops;
	c->lower = lower;
	init_lock(&c->lock);
	return &c->be;
}

int be_cache_set_reporter(struct backend *be, be_cache_report_fn report, const char *label)
{
	struct be_cache *c = cache_from(be);
	char *copy = strdup(label);

	if (!copy)
		return -ENOMEM;
	pthread_rwlock_wrlock(&c->lock);
	free(c->label);
	c->label = copy;
	c->report = report;
	pthread_rwlock_unlock(&c->lock);
	return 0;
}

bool be_cache_stats(const struct backend *be, struct be_cache_stats *st)
{
	const struct be_cache *c;

	if (!be || be->ops != &be_cache_ops)
		return false;
	c = (const struct be_cache *)be;
	*st = (struct be_cache_stats){
		.below_enospc = __atomic_load_n(&c->below_enospc, __ATOMIC_RELAXED),
		.below_eio = __atomic_load_n(&c->below_eio, __ATOMIC_RELAXED),
		.below_other = __atomic_load_n(&c->below_other, __ATOMIC_RELAXED),
		.write_back_failures = __atomic_load_n(&c->write_back_failures, __ATOMIC_RELAXED),
		.refused_writes = __atomic_load_n(&c->refused_writes, __ATOMIC_RELAXED),
		.dirty_bytes = (uint64_t)__atomic_load_n(&c->pages, __ATOMIC_RELAXED) * PAGE_LEN,
		.error = __atomic_load_n(&c->error, __ATOMIC_RELAXED),
	};
	return true;
}
