/*
 * The backend interface: byte ranges, buffers, flags and errno.  A backend
 * knows nothing of SCSI; the core maps its errors to sense data.
 *
 * Calls are synchronous and thread-safe for disjoint or overlapping ranges
 * (they run on worker threads, several at once).  Every call returns 0 (or a
 * byte count where stated) on success and a negative errno on failure.
 */
#ifndef SBCEMU_BACKEND_H
#define SBCEMU_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BE_WRITE_FUA 0x1          /* data is durable when write() returns */
#define BE_ZERO_MAY_DISCARD 0x1   /* write_zeroes may deallocate the range */

/* Allocation status of a byte range (for GET LBA STATUS). */
enum be_extent_kind {
	BE_EXTENT_ALLOCATED,
	BE_EXTENT_HOLE, /* deallocated; reads return zeros */
};

struct backend;

/* A byte range (write_atomic_ranges). */
struct be_range {
	uint64_t offset;
	uint64_t len;
};

struct backend_ops {
	const char *name;
	void (*close)(struct backend *be);
	int (*read)(struct backend *be, void *buf, size_t len, uint64_t offset);
	int (*write)(struct backend *be, const void *buf, size_t len, uint64_t offset, unsigned flags);
	/* Makes every completed write durable (fdatasync). */
	int (*flush)(struct backend *be);
	/* Deallocates a range; later reads of it return zeros. */
	int (*discard)(struct backend *be, uint64_t offset, uint64_t len);
	int (*write_zeroes)(struct backend *be, uint64_t offset, uint64_t len, unsigned flags);
	/*
	 * Finds the extent that starts at offset: sets *kind and *len (bytes, at
	 * most max_len).  Returns -EOPNOTSUPP if the backend cannot tell.
	 */
	int (*extent)(struct backend *be, uint64_t offset, uint64_t max_len,
		      enum be_extent_kind *kind, uint64_t *len);
	/* Changes the size (FORMAT UNIT, capacity changes). */
	int (*resize)(struct backend *be, uint64_t size);
	/*
	 * All or nothing, durable when it returns, even across a crash of the
	 * process or the machine (be_file: an intent log, journal.h).  NULL:
	 * not offered.  The caller keeps concurrent I/O to the range out.
	 */
	int (*write_atomic)(struct backend *be, const void *buf, size_t len, uint64_t offset);
	/* The same for n ranges as one unit; buf holds their bytes one range after the other. */
	int (*write_atomic_ranges)(struct backend *be, const struct be_range *ranges, unsigned n, const void *buf);
	/*
	 * write_atomic_ranges for writes too big to hold in memory: the bytes
	 * of the ranges come in pieces, in order (stream_append, one call at a
	 * time from any thread); nothing is durable until stream_commit, which
	 * is all or nothing like write_atomic_ranges.  One stream per backend
	 * at a time: stream_begin returns -EBUSY otherwise.  A failed append or
	 * commit ends the stream.  NULL: not offered.
	 */
	int (*stream_begin)(struct backend *be, const struct be_range *ranges, unsigned n);
	int (*stream_append)(struct backend *be, const void *buf, size_t len);
	int (*stream_commit)(struct backend *be);
	void (*stream_abandon)(struct backend *be);
};

struct backend {
	const struct backend_ops *ops;
	uint64_t size;        /* bytes */
	bool can_discard;     /* discard really deallocates */
	/*
	 * write_atomic / write_atomic_ranges keep their promise: all or
	 * nothing, even across a crash (be_file with an intent log).  Without
	 * it the core does not offer WRITE ATOMIC.
	 */
	bool can_write_atomic;
	bool read_only;
	char note[200];       /* what opening it did that is worth a log line (a journal replay), or "" */
};

/*
 * Opens (creating and sizing if needed) a regular file, or opens a block
 * device, as a backend.  size 0 means "use the existing size".  The intent
 * logs of write_atomic are "<path>.journal" and "<path>.sjournal" for a
 * file; for a block device, side_base replaces <path> (NULL: a block
 * device has no intent log, and its atomic writes that the kernel cannot do
 * untorn are plain FUA writes).
 */
struct backend *be_file_open(const char *path, uint64_t size, bool read_only, const char *side_base, char *err,
			     size_t errlen);
/*
 * be_file only: how many write_atomic calls took the untorn fast path
 * (untorn.h), and its unit range in bytes (0, 0: not offered here).
 */
uint64_t be_file_untorn_writes(const struct backend *be, uint32_t *unit_min, uint32_t *unit_max);
/*
 * Puts a volatile write-back cache in front of a backend (be_cache.c; power
 * loss emulation: unflushed writes live only in this process).  Takes
 * ownership of lower; NULL if lower cannot do write_atomic_ranges.
 */
struct backend *be_cache_wrap(struct backend *lower);
/* An in-memory backend, for tests. */
struct backend *be_mem_open(uint64_t size);

static inline void be_close(struct backend *be)
{
	if (be)
		be->ops->close(be);
}

#endif
