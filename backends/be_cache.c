/*
 * A volatile write-back cache in front of another backend, for power-loss
 * emulation (docs/atomic.md): writes without BE_WRITE_FUA stay in this
 * process's memory until a flush, so killing the process (SIGKILL: the
 * "power cut") loses exactly what a drive with a volatile write cache would
 * lose, and keeps everything flushed, written with FUA, or written through
 * write_atomic (durable on its own, the intent log).
 *
 * The cache holds whole pages of PAGE_LEN bytes: a write into a page that is
 * not cached reads the page from below first.  Reads overlay the cached
 * pages on what the backend below returns.  Operations whose effect on
 * cached data would be hard to merge (discard, write_zeroes, extent, resize)
 * write the cache back first, as a drive may at any time; so does a full
 * cache (CACHE_MAX_PAGES).
 *
 * A streamed atomic write (stream_*) goes to the backend below as it
 * arrives, never into the cache; at the commit the cached pages it covers
 * are written back and dropped first, so that neither they nor the reads
 * overlaying them can put older data over it.
 *
 * The lock is a read-write lock.  A read holds it shared from its read of
 * the backend below to the end of its overlay of the cached pages: were it
 * released in between, a write-back (a flush, a full cache, discard,
 * write_zeroes, extent, resize, a stream commit) could write a newer cached
 * page below and drop it after the read below and before the overlay, and
 * the read would return data older than a write acknowledged before it
 * began.  Everything that changes the page table, writes pages back or
 * writes below through the cache (cache_write, the write-backs, the atomic
 * writes, the stream's bookkeeping and commit) holds it exclusively, and
 * the *_locked functions are called with it held so.  Writers are preferred
 * where the C library offers it (glibc), so that a steady stream of reads
 * cannot starve writes and flushes.
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
	uint8_t data[PAGE_LEN];
};

struct be_cache {
	struct backend be;
	struct backend *lower;
	pthread_rwlock_t lock; /* shared: cache_read; exclusive: the rest (see the top) */
	struct page *bucket[BUCKETS];
	unsigned pages;
	/* the ranges of the stream under way (stream_begin .. commit / abandon) */
	struct be_range *stream_ranges;
	unsigned stream_n;
};

static struct be_cache *cache_from(struct backend *be)
{
	return (struct be_cache *)be;
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

/* Writes every cached page below (no flush of the backend below) and empties the cache. */
static int write_back_locked(struct be_cache *c)
{
	int rc = 0;

	for (unsigned b = 0; b < BUCKETS; b++) {
		while (c->bucket[b]) {
			struct page *p = c->bucket[b];
			int r = c->lower->ops->write(c->lower, p->data, page_len(c, p->index), p->index * PAGE_LEN, 0);

			if (r && !rc)
				rc = r;
			c->bucket[b] = p->next;
			free(p);
		}
	}
	c->pages = 0;
	return rc;
}

/* Copies buf (len bytes at off) into the cached pages it overlaps; with add, caches missing pages first. */
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
			rc = c->lower->ops->read(c->lower, (*pp)->data, page_len(c, index), start);
			if (rc) {
				free(*pp);
				*pp = NULL;
				return rc;
			}
			c->pages++;
		}
		memcpy((*pp)->data + (from - start), buf + (from - off), to - from);
	}
	return 0;
}

static void cache_close(struct backend *be)
{
	struct be_cache *c = cache_from(be);

	/* A clean close is not a power cut: what the cache holds goes down. */
	write_back_locked(c);
	c->lower->ops->flush(c->lower);
	be_close(c->lower);
	pthread_rwlock_destroy(&c->lock);
	free(c->stream_ranges);
	free(c);
}

static int cache_read(struct backend *be, void *buf, size_t len, uint64_t off)
{
	struct be_cache *c = cache_from(be);
	uint8_t *out = buf;
	uint64_t end = off + len;
	int rc;

	/* Shared across both steps: no write-back may come between the read below and the overlay. */
	pthread_rwlock_rdlock(&c->lock);
	rc = c->lower->ops->read(c->lower, buf, len, off);
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
		rc = c->lower->ops->write(c->lower, buf, len, off, flags);
		if (!rc)
			rc = update_pages_locked(c, buf, len, off, false);
	} else {
		if (c->pages + len / PAGE_LEN + 2 > CACHE_MAX_PAGES)
			write_back_locked(c);
		rc = update_pages_locked(c, buf, len, off, true);
	}
	pthread_rwlock_unlock(&c->lock);
	return rc;
}

static int cache_flush(struct backend *be)
{
	struct be_cache *c = cache_from(be);
	int rc;

	pthread_rwlock_wrlock(&c->lock);
	rc = write_back_locked(c);
	pthread_rwlock_unlock(&c->lock);
	return rc ? rc : c->lower->ops->flush(c->lower);
}

/*
 * discard, write_zeroes and resize act on the backend below with the cache
 * written back first; the exclusive lock covers both steps, so no write can
 * cache a page of the range, read from below before the change, in between
 * (its stale bytes would come back over the discarded ones at the next
 * write-back).
 */
static int cache_discard(struct backend *be, uint64_t off, uint64_t len)
{
	struct be_cache *c = cache_from(be);
	int rc;

	pthread_rwlock_wrlock(&c->lock);
	rc = write_back_locked(c);
	if (!rc)
		rc = c->lower->ops->discard(c->lower, off, len);
	pthread_rwlock_unlock(&c->lock);
	return rc;
}

static int cache_write_zeroes(struct backend *be, uint64_t off, uint64_t len, unsigned flags)
{
	struct be_cache *c = cache_from(be);
	int rc;

	pthread_rwlock_wrlock(&c->lock);
	rc = write_back_locked(c);
	if (!rc)
		rc = c->lower->ops->write_zeroes(c->lower, off, len, flags);
	pthread_rwlock_unlock(&c->lock);
	return rc;
}

/* Extents are reported from below, where the cached pages are not: written back first. */
static int cache_extent(struct backend *be, uint64_t off, uint64_t max_len, enum be_extent_kind *kind,
			uint64_t *len)
{
	struct be_cache *c = cache_from(be);
	int rc;

	pthread_rwlock_wrlock(&c->lock);
	rc = write_back_locked(c);
	pthread_rwlock_unlock(&c->lock);
	return rc ? rc : c->lower->ops->extent(c->lower, off, max_len, kind, len);
}

static int cache_resize(struct backend *be, uint64_t size)
{
	struct be_cache *c = cache_from(be);
	int rc;

	pthread_rwlock_wrlock(&c->lock);
	rc = write_back_locked(c);
	if (!rc)
		rc = c->lower->ops->resize(c->lower, size);
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
	rc = c->lower->ops->write_atomic_ranges(c->lower, r, n, buf);
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
		rc = c->stream_ranges ? c->lower->ops->stream_begin(c->lower, r, n) : -ENOMEM;
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
	int rc = c->lower->ops->stream_append(c->lower, buf, len);

	if (rc) {
		pthread_rwlock_wrlock(&c->lock);
		stream_end_locked(c); /* a failed append ends the stream below too */
		pthread_rwlock_unlock(&c->lock);
	}
	return rc;
}

/* Writes back and drops the cached pages that overlap [off, off + len). */
static int evict_locked(struct be_cache *c, uint64_t off, uint64_t len)
{
	for (uint64_t index = off / PAGE_LEN; len && index * PAGE_LEN < off + len; index++) {
		struct page **pp = slot(c, index), *page = *pp;
		int rc;

		if (!page)
			continue;
		rc = c->lower->ops->write(c->lower, page->data, page_len(c, index), index * PAGE_LEN, 0);
		if (rc)
			return rc;
		*pp = page->next;
		free(page);
		c->pages--;
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
		rc = c->lower->ops->stream_commit(c->lower);
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
	.resize = cache_resize,
	.write_atomic = cache_write_atomic,
	.write_atomic_ranges = cache_write_atomic_ranges,
	.stream_begin = cache_stream_begin,
	.stream_append = cache_stream_append,
	.stream_commit = cache_stream_commit,
	.stream_abandon = cache_stream_abandon,
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
