/*
 * An in-memory backend for unit tests.  Every byte reads as written (zero
 * when never written).  Allocation is tracked in grains of MEM_GRAIN bytes,
 * as a sparse file's blocks: a write allocates the grains it touches, a
 * discard (and write_zeroes that may discard) frees the grains it covers
 * whole, write_zeroes otherwise allocates (FALLOC_FL_ZERO_RANGE does);
 * allocated() counts them.  extent still reports everything allocated (GET
 * LBA STATUS on this backend: "mapped or unknown").  Every call holds one mutex,
 * so an atomic write is whole or absent for every reader (there is no crash
 * to survive: the memory goes with the process).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

#define MEM_GRAIN 512u

struct be_mem {
	struct backend be;
	uint8_t *data;
	uint8_t *map;       /* bit g: grain g is allocated */
	uint64_t grains;    /* allocated grains */
	pthread_mutex_t lock;
};

static struct be_mem *to_mem(struct backend *be)
{
	return (struct be_mem *)be;
}

static int check(struct backend *be, uint64_t off, uint64_t len)
{
	return (off > be->size || len > be->size - off) ? -EINVAL : 0;
}

static uint64_t map_bytes(uint64_t size)
{
	uint64_t bits = (size + MEM_GRAIN - 1) / MEM_GRAIN;

	return bits / 8 + 1;
}

/* Grains [first, end) allocated or not; the lock is held. */
static void map_set(struct be_mem *m, uint64_t first, uint64_t end, bool allocated)
{
	for (uint64_t g = first; g < end; g++) {
		uint8_t bit = (uint8_t)(1u << (g % 8));
		bool was = m->map[g / 8] & bit;

		if (allocated && !was) {
			m->map[g / 8] |= bit;
			m->grains++;
		} else if (!allocated && was) {
			m->map[g / 8] &= (uint8_t)~bit;
			m->grains--;
		}
	}
}

/* Every grain the range touches is allocated; the lock is held. */
static void map_touch(struct be_mem *m, uint64_t off, uint64_t len)
{
	if (len)
		map_set(m, off / MEM_GRAIN, (off + len - 1) / MEM_GRAIN + 1, true);
}

/* The grains the range covers whole are freed; the lock is held. */
static void map_free(struct be_mem *m, uint64_t off, uint64_t len)
{
	uint64_t first = (off + MEM_GRAIN - 1) / MEM_GRAIN, end = (off + len) / MEM_GRAIN;

	/* The last grain may be short: the range reaching the end of the backend covers it. */
	if (off + len == m->be.size && m->be.size % MEM_GRAIN)
		end++;
	if (end > first)
		map_set(m, first, end, false);
}

static void mem_close(struct backend *be)
{
	struct be_mem *m = to_mem(be);
	pthread_mutex_destroy(&m->lock);
	free(m->map);
	free(m->data);
	free(m);
}

static int mem_read(struct backend *be, void *buf, size_t len, uint64_t off)
{
	struct be_mem *m = to_mem(be);
	if (check(be, off, len))
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	memcpy(buf, m->data + off, len);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static int mem_write(struct backend *be, const void *buf, size_t len, uint64_t off, unsigned flags)
{
	struct be_mem *m = to_mem(be);
	(void)flags;
	if (check(be, off, len))
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	memcpy(m->data + off, buf, len);
	map_touch(m, off, len);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static int mem_write_atomic_ranges(struct backend *be, const struct be_range *ranges, unsigned n, const void *buf)
{
	struct be_mem *m = to_mem(be);
	const uint8_t *p = buf;

	for (unsigned i = 0; i < n; i++)
		if (check(be, ranges[i].offset, ranges[i].len))
			return -EINVAL;
	pthread_mutex_lock(&m->lock);
	for (unsigned i = 0; i < n; i++) {
		memcpy(m->data + ranges[i].offset, p, ranges[i].len);
		map_touch(m, ranges[i].offset, ranges[i].len);
		p += ranges[i].len;
	}
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static int mem_write_atomic(struct backend *be, const void *buf, size_t len, uint64_t off)
{
	struct be_range r = { .offset = off, .len = len };

	return mem_write_atomic_ranges(be, &r, 1, buf);
}

static int mem_flush(struct backend *be)
{
	(void)be;
	return 0;
}

static int mem_zero(struct backend *be, uint64_t off, uint64_t len, unsigned flags)
{
	struct be_mem *m = to_mem(be);
	if (check(be, off, len))
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	memset(m->data + off, 0, len);
	/* A grain the range cuts stays allocated, as a punched file keeps a partial block. */
	if (flags & BE_ZERO_MAY_DISCARD)
		map_free(m, off, len);
	else
		map_touch(m, off, len);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static int mem_discard(struct backend *be, uint64_t off, uint64_t len)
{
	return mem_zero(be, off, len, BE_ZERO_MAY_DISCARD);
}

static int mem_allocated(struct backend *be, uint64_t *bytes)
{
	struct be_mem *m = to_mem(be);

	pthread_mutex_lock(&m->lock);
	*bytes = m->grains * MEM_GRAIN;
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static int mem_extent(struct backend *be, uint64_t off, uint64_t max_len, enum be_extent_kind *kind,
		      uint64_t *len)
{
	(void)be;
	(void)off;
	*kind = BE_EXTENT_ALLOCATED;
	*len = max_len;
	return 0;
}

static int mem_resize(struct backend *be, uint64_t size)
{
	struct be_mem *m = to_mem(be);
	uint8_t *p, *map;
	uint64_t old_map = map_bytes(be->size), new_map = map_bytes(size);

	pthread_mutex_lock(&m->lock);
	/* Shrinking frees the grains past the new end (ftruncate(2) does). */
	if (size < be->size)
		map_set(m, (size + MEM_GRAIN - 1) / MEM_GRAIN, (be->size + MEM_GRAIN - 1) / MEM_GRAIN, false);
	map = realloc(m->map, new_map);
	p = map ? realloc(m->data, size ? size : 1) : NULL;
	if (map)
		m->map = map;
	if (!p) {
		pthread_mutex_unlock(&m->lock);
		return -ENOMEM;
	}
	if (new_map > old_map)
		memset(m->map + old_map, 0, new_map - old_map);
	if (size > be->size)
		memset(p + be->size, 0, size - be->size);
	m->data = p;
	be->size = size;
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static const struct backend_ops mem_ops = {
	.name = "mem",
	.close = mem_close,
	.read = mem_read,
	.write = mem_write,
	.flush = mem_flush,
	.discard = mem_discard,
	.write_zeroes = mem_zero,
	.extent = mem_extent,
	.allocated = mem_allocated,
	.resize = mem_resize,
	.write_atomic = mem_write_atomic,
	.write_atomic_ranges = mem_write_atomic_ranges,
};

struct backend *be_mem_open(uint64_t size)
{
	struct be_mem *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->data = calloc(1, size ? size : 1);
	m->map = calloc(1, map_bytes(size));
	if (!m->data || !m->map) {
		free(m->data);
		free(m->map);
		free(m);
		return NULL;
	}
	pthread_mutex_init(&m->lock, NULL);
	m->be.ops = &mem_ops;
	m->be.size = size;
	m->be.can_discard = true;
	m->be.can_write_atomic = true;
	return &m->be;
}
