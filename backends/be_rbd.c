/*
 * A backend on a Ceph RBD image, through librbd (librbd.h, Ceph 16.2).
 *
 * Every call is librbd's synchronous form, made on a worker thread as the
 * file backend's calls are; the vectored ones go through rbd_aio_readv /
 * rbd_aio_writev and wait for their completion.  The connection is opened
 * with the librbd cache off (rbd_cache = false), so a write librbd
 * acknowledges has been acknowledged by the OSDs, which do so once the
 * write is on every replica's journal or store ("RBD cache config
 * settings", https://docs.ceph.com/en/pacific/rbd/rbd-config-ref/; "Data
 * durability", https://docs.ceph.com/en/pacific/architecture/): every
 * completed write is durable, FUA needs nothing more and flush is
 * rbd_flush, which then has nothing to write back.
 *
 * Deallocation: discard is rbd_write_zeroes without THICK_PROVISION, which
 * deallocates the whole objects of the range and zeroes its partial ones,
 * so later reads return zeros whatever the range's alignment (rbd_discard
 * skips partial objects by default: rbd_skip_partial_discard).
 *
 * Not offered: atomic writes (a write that spans RADOS objects is not all
 * or nothing), extents and allocation counts (-EOPNOTSUPP), the power cut.
 * BE_IO_NOWAIT calls answer -EAGAIN at once: whether an image's bytes can
 * be had without waiting is never known here.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rados/librados.h>
#include <rbd/librbd.h>

#include "backend.h"

struct be_rbd {
	struct backend be;
	rados_t cluster;
	rados_ioctx_t ioctx;
	rbd_image_t image;
};

static struct be_rbd *be_rbd_from(struct backend *be)
{
	return (struct be_rbd *)((char *)be - offsetof(struct be_rbd, be));
}

static int range_check(const struct backend *be, uint64_t offset, uint64_t len)
{
	return offset > be->size || len > be->size - offset ? -EINVAL : 0;
}

static int write_check(const struct backend *be, uint64_t offset, uint64_t len)
{
	int rc = range_check(be, offset, len);

	return rc ? rc : be->read_only ? -EROFS : 0;
}

/* librbd's byte counts and errors: all of want, or the negative errno (-EIO for a short count). */
static int whole(ssize_t n, size_t want)
{
	if (n < 0)
		return (int)n;
	return (size_t)n == want ? 0 : -EIO;
}

static void be_rbd_close(struct backend *be)
{
	struct be_rbd *r = be_rbd_from(be);

	if (r->image)
		rbd_close(r->image);
	if (r->ioctx)
		rados_ioctx_destroy(r->ioctx);
	if (r->cluster)
		rados_shutdown(r->cluster);
	free(r);
}

static int be_rbd_read(struct backend *be, void *buf, size_t len, uint64_t offset)
{
	int rc = range_check(be, offset, len);

	if (rc || len == 0)
		return rc;
	return whole(rbd_read(be_rbd_from(be)->image, offset, len, buf), len);
}

static int be_rbd_write(struct backend *be, const void *buf, size_t len, uint64_t offset, unsigned flags)
{
	int rc = write_check(be, offset, len);

	(void)flags; /* every acknowledged write is durable (above) */
	if (rc || len == 0)
		return rc;
	return whole(rbd_write(be_rbd_from(be)->image, offset, len, buf), len);
}

static size_t iov_bytes(const struct iovec *iov, unsigned iovcnt)
{
	size_t n = 0;

	for (unsigned i = 0; i < iovcnt; i++)
		n += iov[i].iov_len;
	return n;
}

/* One rbd_aio_readv / rbd_aio_writev, waited for. */
static int vectored(struct be_rbd *r, const struct iovec *iov, unsigned iovcnt, uint64_t offset, bool write)
{
	size_t len = iov_bytes(iov, iovcnt);
	rbd_completion_t c;
	ssize_t n;
	int rc;

	if (len == 0)
		return 0;
	rc = rbd_aio_create_completion(NULL, NULL, &c);
	if (rc < 0)
		return rc;
	rc = write ? rbd_aio_writev(r->image, iov, (int)iovcnt, offset, c)
		   : rbd_aio_readv(r->image, iov, (int)iovcnt, offset, c);
	if (rc < 0) {
		rbd_aio_release(c);
		return rc;
	}
	rbd_aio_wait_for_complete(c);
	n = rbd_aio_get_return_value(c);
	rbd_aio_release(c);
	/* An asynchronous write completes with 0, a read with the bytes read (librbd.h, librbd::RBD::AioCompletion). */
	return write && n == 0 ? 0 : whole(n, len);
}

static int be_rbd_readv(struct backend *be, const struct iovec *iov, unsigned iovcnt, uint64_t offset, unsigned flags)
{
	int rc = range_check(be, offset, iov_bytes(iov, iovcnt));

	if (rc)
		return rc;
	if (flags & BE_IO_NOWAIT)
		return -EAGAIN;
	return vectored(be_rbd_from(be), iov, iovcnt, offset, false);
}

static int be_rbd_writev(struct backend *be, const struct iovec *iov, unsigned iovcnt, uint64_t offset,
			 unsigned flags)
{
	int rc = write_check(be, offset, iov_bytes(iov, iovcnt));

	if (rc)
		return rc;
	if (flags & BE_IO_NOWAIT)
		return -EAGAIN;
	return vectored(be_rbd_from(be), iov, iovcnt, offset, true);
}

static int be_rbd_flush(struct backend *be)
{
	return rbd_flush(be_rbd_from(be)->image);
}

/* rbd_write_zeroes takes a size_t; so do the pieces. */
static int zero_range(struct be_rbd *r, uint64_t offset, uint64_t len, int zero_flags)
{
	const uint64_t piece = 1ull << 30;

	while (len) {
		size_t n = (size_t)(len < piece ? len : piece);
		int rc = whole(rbd_write_zeroes(r->image, offset, n, zero_flags, 0), n);

		if (rc)
			return rc;
		offset += n;
		len -= n;
	}
	return 0;
}

static int be_rbd_discard(struct backend *be, uint64_t offset, uint64_t len)
{
	int rc = write_check(be, offset, len);

	return rc ? rc : zero_range(be_rbd_from(be), offset, len, 0);
}

static int be_rbd_write_zeroes(struct backend *be, uint64_t offset, uint64_t len, unsigned flags)
{
	int rc = write_check(be, offset, len);

	if (rc)
		return rc;
	return zero_range(be_rbd_from(be), offset, len,
			  (flags & BE_ZERO_MAY_DISCARD) ? 0 : RBD_WRITE_ZEROES_FLAG_THICK_PROVISION);
}

static int be_rbd_extent(struct backend *be, uint64_t offset, uint64_t max_len, enum be_extent_kind *kind,
			 uint64_t *len)
{
	(void)be, (void)offset, (void)max_len, (void)kind, (void)len;
	return -EOPNOTSUPP;
}

static int be_rbd_resize(struct backend *be, uint64_t size)
{
	int rc;

	if (be->read_only)
		return -EROFS;
	rc = rbd_resize(be_rbd_from(be)->image, size);
	if (rc == 0)
		be->size = size;
	return rc;
}

static const struct backend_ops be_rbd_ops = {
	.name = "rbd",
	.close = be_rbd_close,
	.read = be_rbd_read,
	.write = be_rbd_write,
	.readv = be_rbd_readv,
	.writev = be_rbd_writev,
	.flush = be_rbd_flush,
	.discard = be_rbd_discard,
	.write_zeroes = be_rbd_write_zeroes,
	.extent = be_rbd_extent,
	.resize = be_rbd_resize,
};

/* Connects to the cluster and opens the pool.  0, or a negative errno with the step in err. */
static int connect_pool(struct be_rbd *r, const struct be_rbd_params *p, char *err, size_t errlen)
{
	int rc = rados_create(&r->cluster, p->id);

	if (rc < 0) {
		snprintf(err, errlen, "rados_create(%s): %s", p->id, strerror(-rc));
		return rc;
	}
	rc = rados_conf_read_file(r->cluster, p->conf);
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", p->conf, strerror(-rc));
		return rc;
	}
	rc = rados_conf_set(r->cluster, "rbd_cache", "false");
	if (rc == 0) /* a client that cannot reach the monitors must fail, not wait forever */
		rc = rados_conf_set(r->cluster, "client_mount_timeout", "30");
	if (rc < 0) {
		snprintf(err, errlen, "rados_conf_set: %s", strerror(-rc));
		return rc;
	}
	rc = rados_connect(r->cluster);
	if (rc < 0) {
		snprintf(err, errlen, "cannot connect to the cluster of %s as client.%s: %s", p->conf, p->id,
			 strerror(-rc));
		return rc;
	}
	rc = rados_ioctx_create(r->cluster, p->pool, &r->ioctx);
	if (rc < 0)
		snprintf(err, errlen, "pool %s: %s", p->pool, strerror(-rc));
	return rc;
}

/* Opens the image, creating it at size when it is missing; grows one smaller than size. */
static int open_image(struct be_rbd *r, const struct be_rbd_params *p, uint64_t size, bool read_only, char *err,
		      size_t errlen)
{
	uint64_t have;
	int order = 0, rc;

	rc = read_only ? rbd_open_read_only(r->ioctx, p->image, &r->image, NULL)
		       : rbd_open(r->ioctx, p->image, &r->image, NULL);
	if (rc == -ENOENT && !read_only && size) {
		rc = rbd_create(r->ioctx, p->image, size, &order);
		if (rc == 0)
			rc = rbd_open(r->ioctx, p->image, &r->image, NULL);
	} else if (rc == -ENOENT) {
		snprintf(err, errlen, "image %s/%s does not exist%s", p->pool, p->image,
			 read_only ? " (and write_protect never creates one)" : " and no size was configured to create it");
		return rc;
	}
	if (rc < 0) {
		snprintf(err, errlen, "image %s/%s: %s", p->pool, p->image, strerror(-rc));
		return rc;
	}
	rc = rbd_get_size(r->image, &have);
	if (rc == 0 && size && have > size) {
		snprintf(err, errlen, "image %s/%s holds %llu bytes, more than the configured size %llu; refusing to "
			 "shrink it", p->pool, p->image, (unsigned long long)have, (unsigned long long)size);
		return -EINVAL;
	}
	if (rc == 0 && size > have) {
		rc = read_only ? -EROFS : rbd_resize(r->image, size);
		have = size;
	}
	if (rc < 0) {
		snprintf(err, errlen, "image %s/%s: cannot size it: %s", p->pool, p->image, strerror(-rc));
		return rc;
	}
	r->be.size = have;
	return 0;
}

struct backend *be_rbd_open(const struct be_rbd_params *p, uint64_t size, bool read_only, char *err, size_t errlen)
{
	struct be_rbd *r = calloc(1, sizeof(*r));

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->be.ops = &be_rbd_ops;
	r->be.read_only = read_only;
	r->be.can_discard = true;
	if (connect_pool(r, p, err, errlen) < 0 || open_image(r, p, size, read_only, err, errlen) < 0) {
		be_rbd_close(&r->be);
		return NULL;
	}
	return &r->be;
}
