#include <errno.h>
#include <stdlib.h>

#include "core/scsi_internal.h"
#include "spy_backend.h"

static struct spy_backend *spy(struct backend *be)
{
	return (struct spy_backend *)be;
}

static void spy_close(struct backend *be)
{
	be_close(spy(be)->inner);
	free(spy(be));
}

static int spy_read(struct backend *be, void *buf, size_t len, uint64_t offset)
{
	return spy(be)->inner->ops->read(spy(be)->inner, buf, len, offset);
}

static int spy_write(struct backend *be, const void *buf, size_t len, uint64_t offset, unsigned flags)
{
	struct spy_backend *s = spy(be);

	s->writes++;
	s->written_bytes += len;
	if (s->fail_errno)
		return -s->fail_errno;
	return s->inner->ops->write(s->inner, buf, len, offset, flags);
}

static int spy_flush(struct backend *be)
{
	struct spy_backend *s = spy(be);

	s->flushes++;
	if (s->flush_fail_errno)
		return -s->flush_fail_errno;
	return s->inner->ops->flush(s->inner);
}

static int spy_discard(struct backend *be, uint64_t offset, uint64_t len)
{
	struct spy_backend *s = spy(be);

	s->discards++;
	s->discarded_bytes += len;
	if (s->fail_errno)
		return -s->fail_errno;
	return s->inner->ops->discard(s->inner, offset, len);
}

static int spy_write_zeroes(struct backend *be, uint64_t offset, uint64_t len, unsigned flags)
{
	struct spy_backend *s = spy(be);

	s->zeroes++;
	s->zeroed_bytes += len;
	if (flags & BE_ZERO_MAY_DISCARD)
		s->zeroes_may_discard++;
	if (s->fail_errno)
		return -s->fail_errno;
	return s->inner->ops->write_zeroes(s->inner, offset, len, flags);
}

static int spy_extent(struct backend *be, uint64_t offset, uint64_t max_len, enum be_extent_kind *kind,
		      uint64_t *len)
{
	struct spy_backend *s = spy(be);
	uint64_t end = offset + max_len;

	s->extents++;
	if (s->extent_unsupported)
		return -EOPNOTSUPP;
	if (s->extent_max && max_len > s->extent_max)
		end = offset + s->extent_max;
	*kind = BE_EXTENT_ALLOCATED;
	for (unsigned i = 0; i < s->nholes; i++) {
		uint64_t hs = s->holes[i].offset, he = hs + s->holes[i].len;

		if (offset >= hs && offset < he) {
			*kind = BE_EXTENT_HOLE;
			if (he < end)
				end = he;
			break;
		}
		if (hs > offset && hs < end)
			end = hs;
	}
	*len = end - offset;
	return 0;
}

static int spy_resize(struct backend *be, uint64_t size)
{
	int rc = spy(be)->inner->ops->resize(spy(be)->inner, size);

	if (rc == 0)
		be->size = size;
	return rc;
}

static const struct backend_ops spy_ops = {
	.name = "spy",
	.close = spy_close,
	.read = spy_read,
	.write = spy_write,
	.flush = spy_flush,
	.discard = spy_discard,
	.write_zeroes = spy_write_zeroes,
	.extent = spy_extent,
	.resize = spy_resize,
};

struct spy_backend *spy_backend_install(struct scsi_lu *lu)
{
	struct spy_backend *s = calloc(1, sizeof(*s));

	if (!s)
		abort();
	s->inner = lu->backend;
	s->be = *lu->backend;
	s->be.ops = &spy_ops;
	lu->backend = &s->be;
	return s;
}
