/*
 * Untorn writes through statx(STATX_WRITE_ATOMIC) and pwritev2(RWF_ATOMIC)
 * (untorn.h).  The kernel rules followed (Documentation/filesystems and
 * block/fops.c of Linux 6.11-6.12): O_DIRECT only; one iovec; a length that
 * is a power of two between the unit minimum and maximum; an offset aligned
 * to the length; the buffer aligned as direct I/O asks (STATX_DIOALIGN).
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "untorn.h"

#define UNTORN_STATX_DIOALIGN 0x00002000u      /* linux/stat.h STATX_DIOALIGN (6.1) */
#define UNTORN_STATX_WRITE_ATOMIC 0x00010000u  /* linux/stat.h STATX_WRITE_ATOMIC (6.11) */
#define UNTORN_RWF_DSYNC 0x00000002            /* linux/fs.h RWF_DSYNC */
#define UNTORN_RWF_ATOMIC 0x00000040           /* linux/fs.h RWF_ATOMIC (6.11) */
#define UNTORN_AT_EMPTY_PATH 0x1000

/* struct statx of linux/stat.h (6.11), 256 bytes; only the fields used are named. */
struct untorn_statx {
	uint32_t stx_mask;                      /* 0x00 */
	uint8_t unused0[0x98 - 0x04];
	uint32_t stx_dio_mem_align;             /* 0x98 */
	uint32_t stx_dio_offset_align;          /* 0x9c */
	uint64_t stx_subvol;                    /* 0xa0 */
	uint32_t stx_atomic_write_unit_min;     /* 0xa8 */
	uint32_t stx_atomic_write_unit_max;     /* 0xac */
	uint32_t stx_atomic_write_segments_max; /* 0xb0 */
	uint8_t unused1[0x100 - 0xb4];
};

_Static_assert(sizeof(struct untorn_statx) == 0x100, "struct statx is 256 bytes");
_Static_assert(offsetof(struct untorn_statx, stx_dio_mem_align) == 0x98 &&
		       offsetof(struct untorn_statx, stx_atomic_write_unit_min) == 0xa8 &&
		       offsetof(struct untorn_statx, stx_atomic_write_segments_max) == 0xb0,
	       "struct statx layout (linux/stat.h)");

struct untorn {
	int fd;                 /* O_DIRECT */
	uint32_t unit_min, unit_max;
	uint32_t mem_align, offset_align;
	bool refused;           /* the kernel said no once: the journal from then on */
	uint64_t count;
};

struct untorn *untorn_open(const char *path, int fd)
{
	struct untorn_statx stx;
	struct untorn *u;
	int dfd;

	memset(&stx, 0, sizeof(stx));
	if (syscall(SYS_statx, fd, "", UNTORN_AT_EMPTY_PATH, UNTORN_STATX_WRITE_ATOMIC | UNTORN_STATX_DIOALIGN,
		    &stx) != 0)
		return NULL;
	/* Kernels before 6.11 do not know the bit and leave it clear in stx_mask. */
	if (!(stx.stx_mask & UNTORN_STATX_WRITE_ATOMIC) || stx.stx_atomic_write_unit_min == 0 ||
	    stx.stx_atomic_write_unit_max < stx.stx_atomic_write_unit_min || stx.stx_atomic_write_segments_max == 0)
		return NULL;
	dfd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (dfd < 0)
		return NULL;
	u = calloc(1, sizeof(*u));
	if (!u) {
		close(dfd);
		return NULL;
	}
	u->fd = dfd;
	u->unit_min = stx.stx_atomic_write_unit_min;
	u->unit_max = stx.stx_atomic_write_unit_max;
	u->mem_align = (stx.stx_mask & UNTORN_STATX_DIOALIGN) && stx.stx_dio_mem_align ? stx.stx_dio_mem_align : 4096;
	u->offset_align = (stx.stx_mask & UNTORN_STATX_DIOALIGN) ? stx.stx_dio_offset_align : 0;
	return u;
}

void untorn_close(struct untorn *u)
{
	if (!u)
		return;
	close(u->fd);
	free(u);
}

void untorn_limits(const struct untorn *u, uint32_t *unit_min, uint32_t *unit_max)
{
	*unit_min = u ? u->unit_min : 0;
	*unit_max = u ? u->unit_max : 0;
}

bool untorn_fits(const struct untorn *u, size_t len, uint64_t offset)
{
	if (!u || __atomic_load_n(&u->refused, __ATOMIC_RELAXED))
		return false;
	return len >= u->unit_min && len <= u->unit_max && (len & (len - 1)) == 0 && offset % len == 0 &&
	       (u->offset_align == 0 || offset % u->offset_align == 0);
}

int untorn_write(struct untorn *u, const void *buf, size_t len, uint64_t offset)
{
	void *bounce = NULL;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	ssize_t n;

	if (!untorn_fits(u, len, offset))
		return -EOPNOTSUPP;
	if ((uintptr_t)buf % u->mem_align) {
		if (posix_memalign(&bounce, u->mem_align, len) != 0)
			return -ENOMEM;
		memcpy(bounce, buf, len);
		iov.iov_base = bounce;
	}
	do {
		n = pwritev2(u->fd, &iov, 1, (off_t)offset, UNTORN_RWF_ATOMIC | UNTORN_RWF_DSYNC);
	} while (n < 0 && errno == EINTR);
	free(bounce);
	if (n == (ssize_t)len) {
		__atomic_add_fetch(&u->count, 1, __ATOMIC_RELAXED);
		return 0;
	}
	if (n >= 0)
		return -EIO; /* an atomic write is never short; if it were, the range is suspect */
	if (errno == EINVAL || errno == EOPNOTSUPP) {
		/* Refused before anything was written (the kernel checks the request first). */
		__atomic_store_n(&u->refused, true, __ATOMIC_RELAXED);
		return -EOPNOTSUPP;
	}
	return -errno;
}

uint64_t untorn_count(const struct untorn *u)
{
	return u ? __atomic_load_n(&u->count, __ATOMIC_RELAXED) : 0;
}
