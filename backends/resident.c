/* Whether a read of the backing file can wait (resident.h). */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "resident.h"

/* linux/magic.h */
#define TMPFS_MAGIC_ 0x01021994
#define RAMFS_MAGIC_ 0x858458f6
#define OVERLAYFS_SUPER_MAGIC_ 0x794c7630

/* The most pages one question covers: reads done at once are small (NOWAIT_MAX_BYTES in sbc_rw.c). */
#define RESIDENT_MAX_PAGES 256

void resident_init(struct resident *r, int fd, bool writable)
{
	struct statfs s;
	struct stat st;

	*r = (struct resident){ .kind = RESIDENT_NEVER };
	/* Regular files only: a block device node lives on devtmpfs, whose f_type is tmpfs's. */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || fstatfs(fd, &s) != 0)
		return;
	if (s.f_type == TMPFS_MAGIC_ || s.f_type == RAMFS_MAGIC_)
		r->kind = RESIDENT_MEMORY;
	else if (s.f_type == OVERLAYFS_SUPER_MAGIC_ && writable)
		r->kind = RESIDENT_MINCORE;
}

bool resident_range(struct resident *r, int fd, uint64_t size, uint64_t offset, uint64_t len)
{
	unsigned char vec[RESIDENT_MAX_PAGES];
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t first, end, pages;

	if (r->kind == RESIDENT_MEMORY)
		return true;
	if (r->kind != RESIDENT_MINCORE || len == 0)
		return false;
	if (!r->map && !r->map_failed) {
		void *m = size ? mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;

		if (m == MAP_FAILED) {
			r->map_failed = true;
			return false;
		}
		r->map = m;
		r->map_len = (size_t)size;
	}
	/* A file grown since the mapping was made: its new part is not asked about. */
	if (!r->map || offset > r->map_len || len > r->map_len - offset)
		return false;
	first = offset / page * page;
	end = offset + len;
	pages = (end - first + page - 1) / page;
	if (pages > RESIDENT_MAX_PAGES || mincore((char *)r->map + first, (size_t)(end - first), vec) != 0)
		return false;
	for (uint64_t i = 0; i < pages; i++)
		if (!(vec[i] & 1))
			return false;
	return true;
}

void resident_close(struct resident *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	*r = (struct resident){ .kind = RESIDENT_NEVER };
}
