/*
 * Descriptor I/O that finishes the job (backend.h): whole transfers despite
 * short reads and writes, and calls retried when a signal handler
 * interrupts them (EINTR; signal(7), "Interruption of system calls and
 * library functions by signal handlers").  For the backends (be_file.c,
 * journal.c) and for the files the core keeps for itself.
 *
 * It does not open, lock or size files, and it never writes less than
 * asked without saying so.
 */
#include <errno.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backend.h"

int be_pwrite_all(int fd, const void *buf, size_t len, uint64_t offset, int rwf)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n;

		if (rwf) {
			struct iovec iov = { .iov_base = (void *)p, .iov_len = len };

			n = pwritev2(fd, &iov, 1, (off_t)offset, rwf);
		} else {
			n = pwrite(fd, p, len, (off_t)offset);
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* Nothing written for a nonzero count: retrying would loop for ever. */
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		offset += (uint64_t)n;
	}
	return 0;
}

ssize_t be_pread_all(int fd, void *buf, size_t len, uint64_t offset)
{
	uint8_t *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, p + done, len - done, (off_t)(offset + done));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break; /* end of file (pread(2)) */
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/*
 * The vectored forms: one preadv2 / pwritev2 for the whole list while the
 * kernel takes it whole (the usual case).  After a short transfer the piece
 * it stopped in goes on alone, then the rest of the list.
 */
static ssize_t vec_all(bool write, int fd, const struct iovec *iov, unsigned iovcnt, uint64_t offset, int rwf)
{
	size_t done = 0, skip = 0; /* skip: the bytes of iov[i] done */
	unsigned i = 0;

	for (;;) {
		const struct iovec *v;
		struct iovec head;
		int cnt;
		ssize_t n;

		while (i < iovcnt && skip >= iov[i].iov_len) {
			skip -= iov[i].iov_len;
			i++;
		}
		if (i == iovcnt)
			break;
		/* RWF_NOWAIT (preadv2(2)): a short transfer means the rest would wait. */
		if (done && (rwf & RWF_NOWAIT))
			return -EAGAIN;
		v = iov + i;
		cnt = (int)(iovcnt - i);
		if (skip) {
			head = (struct iovec){ .iov_base = (uint8_t *)iov[i].iov_base + skip,
					       .iov_len = iov[i].iov_len - skip };
			v = &head;
			cnt = 1;
		}
		n = write ? pwritev2(fd, v, cnt, (off_t)(offset + done), rwf)
			  : preadv2(fd, v, cnt, (off_t)(offset + done), rwf);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0) /* a read: the end of the file; a write: retrying would loop for ever */
			return write ? -EIO : (ssize_t)done;
		done += (size_t)n;
		skip += (size_t)n;
	}
	return (ssize_t)done;
}

int be_pwritev_all(int fd, const struct iovec *iov, unsigned iovcnt, uint64_t offset, int rwf)
{
	ssize_t n = vec_all(true, fd, iov, iovcnt, offset, rwf);

	return n < 0 ? (int)n : 0;
}

ssize_t be_preadv_all(int fd, const struct iovec *iov, unsigned iovcnt, uint64_t offset, int rwf)
{
	return vec_all(false, fd, iov, iovcnt, offset, rwf);
}

int be_fdatasync(int fd)
{
	while (fdatasync(fd) != 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}
