/*
 * rwf_atomic: one O_DIRECT pwritev2(RWF_ATOMIC) on a block device, for the
 * kernel suite "atomic" (tests/kernel/guest/atomic.sh).  Built static on the
 * host by tests/kernel/run.sh and run in the guest.
 *
 *   rwf_atomic DEVICE OFFSET LENGTH BYTE
 *
 * Writes LENGTH bytes of BYTE at OFFSET with RWF_ATOMIC (Linux 6.11+: sd
 * turns it into WRITE ATOMIC(16)), reads them back with O_DIRECT and prints
 * one line: "write=ok readback=ok", "write=ok readback=differs" or
 * "write=errno:NAME".  Exit status 0 when the program itself worked (the
 * write's outcome is in the output), 2 on usage or set-up errors.
 *
 * Debian 12's headers predate RWF_ATOMIC, hence the literal (linux/fs.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef RWF_ATOMIC
#define RWF_ATOMIC 0x00000040
#endif

static const char *errno_name(int e)
{
	switch (e) {
	case EINVAL:
		return "EINVAL";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	case EIO:
		return "EIO";
	case ENOSPC:
		return "ENOSPC";
	default:
		return strerror(e);
	}
}

int main(int argc, char **argv)
{
	struct iovec iov;
	unsigned char *buf, *back;
	long long offset;
	size_t len;
	ssize_t n;
	int fd;

	if (argc != 5) {
		fprintf(stderr, "usage: rwf_atomic DEVICE OFFSET LENGTH BYTE\n");
		return 2;
	}
	offset = strtoll(argv[2], NULL, 0);
	len = strtoull(argv[3], NULL, 0);
	if (len == 0 || posix_memalign((void **)&buf, 4096, len) || posix_memalign((void **)&back, 4096, len)) {
		fprintf(stderr, "rwf_atomic: bad length or out of memory\n");
		return 2;
	}
	memset(buf, (int)strtol(argv[4], NULL, 0), len);
	fd = open(argv[1], O_RDWR | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "rwf_atomic: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	iov.iov_base = buf;
	iov.iov_len = len;
	n = pwritev2(fd, &iov, 1, offset, RWF_ATOMIC);
	if (n < 0) {
		printf("write=errno:%s\n", errno_name(errno));
		return 0;
	}
	if ((size_t)n != len) {
		printf("write=short:%zd\n", n);
		return 0;
	}
	if (pread(fd, back, len, offset) != (ssize_t)len) {
		printf("write=ok readback=errno:%s\n", errno_name(errno));
		return 0;
	}
	printf("write=ok readback=%s\n", memcmp(buf, back, len) ? "differs" : "ok");
	close(fd);
	return 0;
}
