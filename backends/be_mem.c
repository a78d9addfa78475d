/*
 * An in-memory backend for unit tests.  Holes are not tracked: every byte
 * reads as written (zero when never written).  Every call holds one mutex,
 * so an atomic write is whole or absent for every reader (there is no crash
 * to survive: the memory goes with the process).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

struct be_mem {
	struct backend be;
	uint8_t *data;
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

static void mem_close(struct backend *be)
{
	struct be_mem *m = to_mem(be);
	pthread_mutex_destroy(&m->lock);
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
	(void)flags;
	if (check(be, off, len))
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	memset(m->data + off, 0, len);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static int mem_discard(struct backend *be, uint64_t off, uint64_t len)
{
	return mem_zero(be, off, len, 0);
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
	uint8_t *p = realloc(m->data, size ? size : 1);
	if (!p)
		return -ENOMEM;
	if (size > be->size)
		memset(p + be->size, 0, size - be->size);
	m->data = p;
	be->size = size;
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
	if (!m->data) {
		free(m);
		return NULL;
	}
	pthread_mutex_init(&m->lock, NULL);
	m->be.ops = &mem_ops;
	m->be.size = size;
	m->be.can_discard = false;
	m->be.can_write_atomic = true;
	return &m->be;
}
