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
#include <sys/types.h>
#include <sys/uio.h>

#define BE_WRITE_FUA 0x1          /* data is durable when write() returns */
#define BE_ZERO_MAY_DISCARD 0x1   /* write_zeroes may deallocate the range */
#define BE_IO_NOWAIT 0x2          /* readv / writev: -EAGAIN rather than wait (below) */

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
	/*
	 * Whether the backend can serve calls yet (any thread).  NULL: from the
	 * start.  One still being opened (be_rbd_open_later) fails them with
	 * -ESHUTDOWN until it is.
	 */
	bool (*ready)(struct backend *be);
	/*
	 * What the backend would tell an operator now, in a few words, into buf
	 * (any thread, nothing waited for).  NULL: nothing to tell.
	 */
	void (*status)(struct backend *be, char *buf, size_t len);
	void (*close)(struct backend *be);
	int (*read)(struct backend *be, void *buf, size_t len, uint64_t offset);
	int (*write)(struct backend *be, const void *buf, size_t len, uint64_t offset, unsigned flags);
	/*
	 * read and write for the bytes of iov[0..iovcnt) one after the other
	 * from offset, in one call (a file: preadv2(2) / pwritev2(2)); iovcnt is
	 * at most IOV_MAX.  flags: BE_WRITE_FUA (writev), and BE_IO_NOWAIT:
	 * only what needs no waiting for the medium is done (the bytes are in
	 * the page cache: RWF_NOWAIT, preadv2(2)), else -EAGAIN, after which a
	 * write may be partly done and must be made again without the flag.
	 * BE_IO_NOWAIT calls may come from the event loop's thread.  NULL: the
	 * caller uses read / write piece by piece, and never waits less.
	 */
	int (*readv)(struct backend *be, const struct iovec *iov, unsigned iovcnt, uint64_t offset, unsigned flags);
	int (*writev)(struct backend *be, const struct iovec *iov, unsigned iovcnt, uint64_t offset, unsigned flags);
	/*
	 * readv (write false) or writev started and finished later (NULL: not
	 * offered): 0 once started, after which done(arg, rc) is called exactly
	 * once, from another thread, with 0 or a negative errno; or a negative
	 * errno, with nothing started and no call of done.  Called from the
	 * event loop's thread, so it never waits for the medium.
	 */
	int (*submit_rw)(struct backend *be, bool write, const struct iovec *iov, unsigned iovcnt, uint64_t offset,
			 unsigned flags, void (*done)(void *arg, int rc), void *arg);
	/* Makes every completed write durable (fdatasync). */
	int (*flush)(struct backend *be);
	/* Deallocates a range; later reads of it return zeros. */
	int (*discard)(struct backend *be, uint64_t offset, uint64_t len);
	int (*write_zeroes)(struct backend *be, uint64_t offset, uint64_t len, unsigned flags);
	/*
	 * Copies len bytes from offset src to offset dst inside the backend,
	 * without the caller's buffers (a file: copy_file_range(2), a reflink
	 * where the file system shares extents); BE_WRITE_FUA: durable when it
	 * returns.  The ranges must not overlap (-EINVAL).  -EOPNOTSUPP: the
	 * medium cannot (the caller reads and writes instead).  NULL: not
	 * offered.
	 */
	int (*copy_range)(struct backend *be, uint64_t src, uint64_t dst, uint64_t len, unsigned flags);
	/*
	 * Finds the extent that starts at offset: sets *kind and *len (bytes, at
	 * most max_len).  Returns -EOPNOTSUPP if the backend cannot tell.
	 */
	int (*extent)(struct backend *be, uint64_t offset, uint64_t max_len,
		      enum be_extent_kind *kind, uint64_t *len);
	/*
	 * The bytes of backing store the backend holds allocated now, however
	 * scattered (a sparse file: st_blocks * 512), for the Logical Block
	 * Provisioning log page.  May exceed size (metadata, rounding up to
	 * the file system's blocks).  Returns -EOPNOTSUPP if the backend cannot
	 * tell (a block device); NULL: the same.
	 */
	int (*allocated)(struct backend *be, uint64_t *bytes);
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
	/*
	 * A power cut (docs/control.md, power-cut): what the backend holds that
	 * is not durable is gone; returns the bytes lost.  NULL: everything a
	 * completed write wrote is durable below (nothing to lose).
	 */
	uint64_t (*power_loss)(struct backend *be);
	/*
	 * Named blobs of state kept with the medium, for a medium that several
	 * nodes serve in turn (be_rbd.c: an object beside the image).  NULL:
	 * not offered (the caller keeps its state in its own files).
	 * state_load: a copy of the blob name in *data (malloc) and *len, from
	 * what the backend read when it was opened and wrote since (no I/O:
	 * any thread); -ENOENT when there is none, -EFBIG when it exceeds max,
	 * -ESHUTDOWN when the backend is not ready.  state_store: replaces the
	 * blob whole (len 0: removes it), atomically and durably when it
	 * returns; fails like a write once another node has taken the medium
	 * (-ESHUTDOWN).  A worker's call.
	 */
	int (*state_load)(struct backend *be, const char *name, uint8_t **data, size_t *len, size_t max);
	int (*state_store)(struct backend *be, const char *name, const uint8_t *data, size_t len);
	/*
	 * state_load for a backend that is not ready because another node
	 * holds the medium: the blob as the holder last stored it, read from
	 * the shared store now (I/O: a worker's call).  Once ready, the same
	 * as state_load.  Errors as state_load, or the store's (-ETIMEDOUT
	 * and the like).  NULL: not offered.
	 */
	int (*state_peek)(struct backend *be, const char *name, uint8_t **data, size_t *len, size_t max);
	/*
	 * The note that the client holding the medium left when it took it
	 * (be_rbd_params.holder_note), as this backend last read it: its own
	 * once it holds the medium, else what its last attempt to take it
	 * found.  NUL-terminated in buf: 0, or -ENOENT when none was read.  No
	 * I/O: any thread.  NULL: not offered.
	 */
	int (*holder_note)(struct backend *be, char *buf, size_t len);
	/*
	 * Whether the client that leaves note (be_rbd_params.holder_note)
	 * beside the medium lives: 1 its heartbeat moved in the last few
	 * seconds, 0 it did not (dead, or cut off from the medium), -ENOENT
	 * not known.  No I/O: any thread.  NULL: not offered.
	 */
	int (*peer_alive)(struct backend *be, const char *note);
	/*
	 * Messages between the clients that serve one medium, through its
	 * shared store (be_rbd_ask.c: notifications of the state object).
	 * ask_holder: sends req to the client that holds the medium and
	 * waits (at most a few seconds) for its answer, in *reply (malloc)
	 * and *reply_len: 0; -ENOTCONN when no holder answered, or the store's
	 * error.  A worker's call.
	 * tell_peers: sends msg to every client that waits for the medium this
	 * one holds and waits (at most a few seconds) until each has answered
	 * it (they answer once they acted on it): 0; -ETIMEDOUT when one did
	 * not, -ENOTCONN when this client does not hold the medium, or the
	 * store's error.  A worker's call.
	 * serve: from now on (arrived NULL: no longer), a message sent to this
	 * client while it holds the medium (ask_holder), or while it waits for
	 * it (tell_peers), is kept for take_request and arrived(arg) is called,
	 * on any thread; once serve(be, NULL, NULL) returns, arrived is never
	 * called again.
	 * take_request: the oldest message kept: 0 with *req (malloc), *len
	 * and *token for answer; -ENOENT when none.  No I/O: any thread.
	 * answer: sends reply for token (len 0: an empty answer) and forgets
	 * token; every token taken is answered once, before close.  It does not
	 * wait for the store: any thread.
	 * All NULL: not offered.
	 */
	int (*ask_holder)(struct backend *be, const uint8_t *req, size_t len, uint8_t **reply, size_t *reply_len);
	int (*tell_peers)(struct backend *be, const uint8_t *msg, size_t len);
	void (*serve)(struct backend *be, void (*arrived)(void *arg), void *arg);
	int (*take_request)(struct backend *be, uint8_t **req, size_t *len, void **token);
	void (*answer)(struct backend *be, void *token, const uint8_t *reply, size_t len);
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
	/*
	 * Nonzero: write_atomic keeps its promise only for a range inside one
	 * aligned unit of this many bytes (an RBD object: be_rbd.c), and fails
	 * others with -EINVAL; the caller's limits must keep WRITE ATOMIC
	 * inside one.  0: any range.
	 */
	uint64_t atomic_unit;
	bool read_only;
	char note[200];       /* what opening it did that is worth a log line (a journal replay), or "" */
};

/*
 * Opens (creating and sizing if needed) a regular file, or opens a block
 * device, as a backend.  size 0 means "use the existing size".  The intent
 * logs of write_atomic are "<path>.journal" and "<path>.sjournal" for a
 * file; for a block device, side_base replaces <path> (NULL: a block
 * device has no intent log, and its atomic writes that the kernel cannot do
 * untorn are plain FUA writes).  The file is locked against other processes
 * (an exclusive flock(2), a block device's too): when another process holds
 * the lock, be_file_open fails naming that process; opening the same file
 * again in this process shares the lock.
 */
struct backend *be_file_open(const char *path, uint64_t size, bool read_only, const char *side_base, char *err,
			     size_t errlen);
/* Where an RBD image is (be_rbd_open). */
struct be_rbd_params {
	const char *conf;  /* the Ceph configuration file */
	const char *id;    /* the client name without "client." */
	const char *pool;
	const char *image;
	const char *owner_record; /* a file only this process uses: the lock owner (be_rbd.c); NULL: none */
	/*
	 * be_rbd_open_later: a lock another client holds is asked for at each
	 * attempt (rbd_lock_acquire), so the image is had once that client
	 * gives it up or dies (failover: be_rbd.c); without it such a lock
	 * fails the attempt.
	 */
	bool ask_holder;
	/*
	 * Written beside the image's state (omap key "holder") each time this
	 * client takes the lock, for the clients that wait for it
	 * (backend_ops.holder_note); NULL: none.
	 */
	const char *holder_note;
	/*
	 * Once fenced (another client broke the lock, this one is
	 * blocklisted): the image is opened again with a new connection, as
	 * be_rbd_open_later opens it (asking the holder with ask_holder), and
	 * ready() is false meanwhile.  Without it every call fails with
	 * -ESHUTDOWN from then on.
	 */
	bool rejoin;
	/*
	 * Other nodes serve the image too (lun.alua_peer_groups): with a
	 * holder_note, this client beats beside the image and reads their
	 * heartbeats (be_rbd_beat.c, backend_ops.peer_alive), on a RADOS
	 * connection of its own.
	 */
	bool peers;
};

/*
 * The rbd backend (be_rbd.c) is a module of its own, sbcemu-rbd.so, that
 * alone links librbd and librados: a daemon with no rbd LU never maps them
 * (about 14 MiB of resident pages with Ceph 16.2; docs/performance.md).
 * be_rbd_module loads it on first use (dlopen(3); be_rbd_load.c) and
 * returns its entry points, or NULL with the reason in err.
 */
struct be_rbd_entry {
	/*
	 * Opens a Ceph RBD image as a backend: connects as client.id with
	 * conf, opens the image in pool, creating it at size when it is
	 * missing and growing it when it is smaller (size 0: the image's
	 * size; a larger image is refused).  A writable image is held with
	 * its exclusive lock; calls fail with -ESHUTDOWN once another client
	 * has broken it.  NULL with the reason in err.
	 */
	struct backend *(*open)(const struct be_rbd_params *p, uint64_t size, bool read_only, char *err,
				size_t errlen);
	/*
	 * The same image, opened later: a backend of size bytes (not 0) whose
	 * own thread makes open's attempt every 5 s until one succeeds (the
	 * image must then hold size bytes); until then ready() is false, every
	 * call fails with -ESHUTDOWN, and status() tells why the last attempt
	 * failed (at first: why, the failure of open).  NULL when out of memory.
	 */
	struct backend *(*open_later)(const struct be_rbd_params *p, uint64_t size, bool read_only, const char *why);
};
/* The name of the table the module exports (be_rbd.c). */
#define BE_RBD_ENTRY_SYMBOL "sbce_be_rbd_entry"
const struct be_rbd_entry *be_rbd_module(char *err, size_t errlen);
/*
 * Whether be_file_open(path, size, read_only, ...) would accept path, found
 * without creating or changing anything: an existing path must be a regular
 * file or a block device, not on a kernel pseudo file system (procfs,
 * sysfs, ...), with sizes that fit; a missing one needs a size, no
 * read_only, and a directory to be created in (make_parents: the caller
 * makes missing directories above it, so the nearest existing one counts).
 * The lock is not checked.  Returns 0, or -1 with the reason in err.
 */
int be_file_check(const char *path, uint64_t size, bool read_only, bool make_parents, char *err, size_t errlen);
/*
 * Whether another process holds the lock of the existing file at path (the
 * exclusive flock(2) be_file_open takes; a state directory's lock file):
 * tried and let go at once, so that a daemon that cannot have the file
 * says so before it creates anything.  0 (also when there is no file), or
 * -1 with "PATH: in use by another process (pid N holds its lock)" in err.
 */
int be_file_lock_probe(const char *path, char *err, size_t errlen);
/*
 * Whether files can be created in directory dir: it is a directory on
 * storage (not a kernel pseudo file system) that this process may write,
 * or, with make_parents, it is missing and its nearest existing ancestor
 * is one.  Creates nothing.  Returns 0, or -1 with the reason in err.
 */
int be_file_check_dir(const char *dir, bool make_parents, char *err, size_t errlen);
/*
 * Opens a file the daemon keeps for itself (the LU state files, intent
 * logs, the state directory's lock file), as open(2) with flags, plus:
 * never through a symbolic link in the last component (O_NOFOLLOW: fails
 * with ELOOP, open(2)), closed on exec (O_CLOEXEC), created mode 0600 (less
 * the umask).  Returns the descriptor, or -1 with errno.
 */
int be_state_open(const char *path, int flags);
/* strerror(errnum), but ELOOP from be_state_open says that the file is a symbolic link. */
const char *be_state_strerror(int errnum);
/*
 * Descriptor I/O for the backends and for the files the core keeps for
 * itself (be_io.c): each call is retried when a signal interrupts it
 * (EINTR), and short transfers go on where they stopped.
 *
 * be_pwrite_all writes all len bytes at offset with pwrite(2), or with
 * pwritev2(2) and its flags rwf (RWF_DSYNC) when rwf is not 0.  Returns 0
 * or a negative errno (-EIO when a write takes no bytes); on failure, part
 * of the range may have been written.
 *
 * be_pread_all reads len bytes at offset with pread(2).  Returns the bytes
 * read, fewer than len only when the file ends first, or a negative errno.
 *
 * be_fdatasync is fdatasync(2): 0 or a negative errno.
 */
int be_pwrite_all(int fd, const void *buf, size_t len, uint64_t offset, int rwf);
ssize_t be_pread_all(int fd, void *buf, size_t len, uint64_t offset);
/*
 * be_pwrite_all and be_pread_all for the bytes of iov[0..iovcnt) one after
 * the other, with pwritev2(2) / preadv2(2) and their flags rwf (RWF_DSYNC,
 * RWF_NOWAIT).  A short transfer goes on where it stopped, except with
 * RWF_NOWAIT, where it is -EAGAIN (the rest would wait).
 * be_preadv_all returns the bytes read (fewer only at the end of the file).
 */
int be_pwritev_all(int fd, const struct iovec *iov, unsigned iovcnt, uint64_t offset, int rwf);
ssize_t be_preadv_all(int fd, const struct iovec *iov, unsigned iovcnt, uint64_t offset, int rwf);
int be_fdatasync(int fd);
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
/*
 * be_cache only: what the volatile write cache could not write back, for
 * the daemon to log and expose.  Data a write-back cannot write below stays
 * cached (readable, and retried at every later flush, which fails while it
 * cannot be written); a cached write that finds the cache full of it fails.
 * The counters only grow.
 */
struct be_cache_stats {
	/* failed calls to the backend below (page writes, flushes, reads, discards ...), by errno */
	uint64_t below_enospc;        /* ENOSPC or EDQUOT: the file system below is full */
	uint64_t below_eio;           /* EIO */
	uint64_t below_other;         /* any other errno */
	uint64_t write_back_failures; /* write-backs (flush, full cache, resize, stream commit) that left data cached */
	uint64_t refused_writes;      /* cached writes refused: the cache full of data it could not write back */
	uint64_t dirty_bytes;         /* held now, not yet durable below (whole 4 KiB pages) */
	int error;                    /* negative errno of the last failed write-back while data is cached; 0 when none is */
};
/*
 * Fills *st; false (*st untouched) if be is not a be_cache.  Lock-free (atomic
 * loads): any thread may call it, the event loop's too, without waiting for a
 * write-back.
 */
bool be_cache_stats(const struct backend *be, struct be_cache_stats *st);
/*
 * be_cache only: report(label, stats) is called when a write-back first
 * fails to write data it then keeps (st->error nonzero) and when the cache
 * is rid of such data again (st->error 0): once per episode, on whatever
 * thread did the write-back, with the cache's lock held (report must not
 * call into the cache).  label is copied.  Returns 0 or -ENOMEM.
 */
typedef void (*be_cache_report_fn)(const char *label, const struct be_cache_stats *st);
int be_cache_set_reporter(struct backend *be, be_cache_report_fn report, const char *label);
/* An in-memory backend, for tests. */
struct backend *be_mem_open(uint64_t size);

static inline void be_close(struct backend *be)
{
	if (be)
		be->ops->close(be);
}

#endif
