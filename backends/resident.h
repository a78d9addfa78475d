/*
 * Whether reading a range of the backing file can wait, where the file
 * system does not answer RWF_NOWAIT (preadv2(2): EOPNOTSUPP): tmpfs and
 * ramfs (their reads and buffered writes never wait for a device: the
 * pages are memory), and overlayfs (tests/kernel keeps its guests' images
 * on one, over tmpfs), whose reads are asked of the page cache with
 * mincore(2) on a read-only mapping of the file.  Other file systems
 * without RWF_NOWAIT (NFS, 9p, FUSE, ...) may wait on the network even
 * for cached pages (attribute revalidation): for them nothing is ever done
 * at once.  Regular files only: a block device node lives on devtmpfs,
 * whose f_type is tmpfs's.
 *
 * resident_range: loop thread only (the BE_IO_NOWAIT path of be_file.c).
 */
#ifndef SBCEMU_RESIDENT_H
#define SBCEMU_RESIDENT_H

#ifndef SBCE_BUILDING_BACKENDS
#error "sbcemu layering: resident.h is internal to backends/: use its public header"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum resident_kind {
	RESIDENT_NEVER,   /* no way to tell: every read may wait */
	RESIDENT_MEMORY,  /* tmpfs, ramfs: nothing waits for a device */
	RESIDENT_MINCORE, /* ask mincore(2) */
};

struct resident {
	enum resident_kind kind;
	void *map;        /* MINCORE: PROT_READ, MAP_SHARED mapping of the file, made at first use */
	size_t map_len;
	bool map_failed;
};

/*
 * What fd's file system allows (fstatfs(2) f_type).  writable: fd is open
 * for writing; mincore(2) reports every page resident for a file the
 * caller may not write (mm/mincore.c can_do_mincore), so it is only asked
 * about such files.
 */
void resident_init(struct resident *r, int fd, bool writable);
/* Whether [offset, offset + len) of the file (of size bytes) is in memory, so a read of it does not wait. */
bool resident_range(struct resident *r, int fd, uint64_t size, uint64_t offset, uint64_t len);
void resident_close(struct resident *r);

#endif
