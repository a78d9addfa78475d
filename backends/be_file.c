/*
 * The file backend: a regular file (created and sized sparse when missing)
 * or a block device, reached with pread/pwrite from worker threads.
 *
 * What it maps to what:
 *   read/write     pread/pwrite loops (short transfers and EINTR retried)
 *   write + FUA    pwritev2(RWF_DSYNC), or pwrite + fdatasync where that is refused
 *   flush          fdatasync
 *   discard        fallocate(PUNCH_HOLE | KEEP_SIZE): deallocates and reads back zeros
 *   write_zeroes   PUNCH_HOLE when the caller allows deallocation, else
 *                  fallocate(ZERO_RANGE), else plain writes of zeros
 *   extent         lseek(SEEK_DATA / SEEK_HOLE) (regular files only)
 *   resize         ftruncate (regular files only)
 *   write_atomic   one untorn write (pwritev2 RWF_ATOMIC, untorn.h) where the
 *                  kernel offers them and the write fits; else a record in
 *                  the intent log "<side>.journal" (journal.h), <side> being
 *                  the file's path, or for a block device the side_base the
 *                  caller gives (without one, FUA writes: not crash-atomic)
 *   stream_*       a second intent log "<side>.sjournal"
 *   (open)         an exclusive flock(2) on the file, so that a second
 *                  process (another sbcemud) cannot open it as a backend too
 *
 * It does not know logical blocks: offsets and lengths are bytes and the core
 * keeps them block aligned.  A file that shrinks under us (truncated by
 * someone else) reads as -EIO past its end rather than as zeros: data the
 * initiator wrote is gone, and saying so beats inventing it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <limits.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "backend.h"
#include "journal.h"
#include "resident.h"
#include "untorn.h"

#define BE_FILE_ZERO_CHUNK (1024 * 1024)

struct file_lock;

struct be_file {
	struct backend be;
	int fd;
	struct file_lock *lock;
	bool is_block_device;
	/* Learned at run time; read and written by several workers, hence atomics. */
	bool no_rwf_dsync;
	bool no_zero_range;
	bool no_copy_range;   /* copy_file_range(2) refused once: not tried again */
	bool no_nowait_write; /* the file system does not take buffered writes with RWF_NOWAIT */
	bool no_nowait_read;  /* nor reads (tmpfs, overlayfs): resident.h tells instead (loop thread only) */
	struct resident resident;
	/* write_atomic: untorn writes where the kernel offers them (NULL: not offered) */
	struct untorn *untorn;
	/* write_atomic: the intent log "<side>.journal", one record at a time. */
	struct journal *journal;
	pthread_mutex_t journal_lock;
	/* stream_*: a second intent log "<side>.sjournal", so a long stream never holds up write_atomic. */
	struct journal *sjournal;
	bool streaming;
	char side[PATH_MAX];   /* the intent logs' path without suffix; "" = none (a block device without side_base) */
	char path[];
};

static struct be_file *be_file_from(struct backend *be)
{
	return (struct be_file *)((char *)be - offsetof(struct be_file, be));
}

static bool flag_get(const bool *flag)
{
	return __atomic_load_n(flag, __ATOMIC_RELAXED);
}

static void flag_set(bool *flag)
{
	__atomic_store_n(flag, true, __ATOMIC_RELAXED);
}

static int range_check(const struct backend *be, uint64_t offset, uint64_t len)
{
	if (offset > be->size || len > be->size - offset)
		return -EINVAL;
	return 0;
}

/* What every write, discard and write_zeroes checks first: the range (-EINVAL), then the mode (-EROFS). */
static int write_check(const struct backend *be, uint64_t offset, uint64_t len)
{
	int rc = range_check(be, offset, len);

	return rc ? rc : be->read_only ? -EROFS : 0;
}

/*
 * Backing-file locks: one exclusive flock(2) per file and process.  A
 * flock lock belongs to an open file description, and a second open(2) of
 * the same file in this process would be refused by it (flock(2), NOTES);
 * yet the daemon does open a backing file again while the old descriptor
 * is still open (a TCMU backstore removed and added back while its old LU
 * is still being flushed).  So the lock is held by a dup(2) kept here, and
 * every be_file of that file (device and inode) shares it.
 */
struct file_lock {
	dev_t dev;
	ino_t ino;
	int fd;             /* holds the lock; shares the first opener's open file description */
	unsigned users;
	struct file_lock *next;
};

static struct file_lock *file_locks;
static pthread_mutex_t file_locks_mutex = PTHREAD_MUTEX_INITIALIZER;

/* The pid holding a FLOCK lock on the file, from /proc/locks (proc(5)); 0 when unknown. */
static long lock_holder(const struct stat *st)
{
	FILE *in = fopen("/proc/locks", "re");
	char line[256], type[16];
	unsigned major_id, minor_id;
	unsigned long long ino;
	long pid = 0, p;

	if (!in)
		return 0;
	/* "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"; waiters read "1: -> FLOCK ..." and do not match. */
	while (pid == 0 && fgets(line, sizeof(line), in))
		if (sscanf(line, "%*d: %15s %*s %*s %ld %x:%x:%llu", type, &p, &major_id, &minor_id, &ino) == 5 &&
		    strcmp(type, "FLOCK") == 0 && makedev(major_id, minor_id) == st->st_dev && ino == st->st_ino)
			pid = p;
	fclose(in);
	return pid;
}

/* The message of a lock held elsewhere, naming the holder when /proc/locks does. */
static void lock_held_message(const char *path, const struct stat *st, char *err, size_t errlen)
{
	long holder = lock_holder(st);

	if (holder)
		snprintf(err, errlen, "%s: in use by another process (pid %ld holds its lock)", path, holder);
	else
		snprintf(err, errlen, "%s: in use by another process (it holds its lock)", path);
}

static int lock_take(struct be_file *f, const struct stat *st, char *err, size_t errlen)
{
	struct file_lock *l;
	int rc = 0;

	pthread_mutex_lock(&file_locks_mutex);
	for (l = file_locks; l && (l->dev != st->st_dev || l->ino != st->st_ino); l = l->next)
		;
	if (!l) {
		l = calloc(1, sizeof(*l));
		if (!l || (l->fd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0)) < 0) {
			snprintf(err, errlen, "%s: cannot lock: %s", f->path, strerror(l ? errno : ENOMEM));
			rc = -1;
		} else if (flock(l->fd, LOCK_EX | LOCK_NB) != 0) {
			if (errno == EWOULDBLOCK)
				lock_held_message(f->path, st, err, errlen);
			else
				snprintf(err, errlen, "%s: cannot lock: %s", f->path, strerror(errno));
			close(l->fd);
			rc = -1;
		}
		if (rc == 0) {
			l->dev = st->st_dev;
			l->ino = st->st_ino;
			l->next = file_locks;
			file_locks = l;
		} else {
			free(l);
		}
	}
	if (rc == 0) {
		l->users++;
		f->lock = l;
	}
	pthread_mutex_unlock(&file_locks_mutex);
	return rc;
}

int be_file_lock_probe(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	int rc = 0;

	if (fd < 0)
		return 0; /* no file yet, or one that opening reports itself */
	if (fstat(fd, &st) == 0 && flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
		lock_held_message(path, &st, err, errlen);
		rc = -1;
	}
	close(fd); /* lets go of the lock, if it was taken */
	return rc;
}

static void lock_drop(struct file_lock *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&file_locks_mutex);
	if (--l->users == 0) {
		struct file_lock **pp = &file_locks;

		while (*pp != l)
			pp = &(*pp)->next;
		*pp = l->next;
		close(l->fd); /* the last descriptor of that open file description: the lock goes */
		free(l);
	}
	pthread_mutex_unlock(&file_locks_mutex);
}

int be_state_open(const char *path, int flags)
{
	return open(path, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
}

const char *be_state_strerror(int errnum)
{
	return errnum == ELOOP ? "it is a symbolic link, which is never followed" : strerror(errnum);
}

/* Kernel pseudo file systems: their files are interfaces to the kernel, not storage (proc(5), sysfs(5)). */
static const char *pseudo_fs(const char *path)
{
	static const struct {
		long magic;
		const char *name;
	} fs[] = {
		{ PROC_SUPER_MAGIC, "procfs" },       { SYSFS_MAGIC, "sysfs" },        { DEBUGFS_MAGIC, "debugfs" },
		{ TRACEFS_MAGIC, "tracefs" },         { SECURITYFS_MAGIC, "securityfs" }, { CGROUP_SUPER_MAGIC, "cgroup" },
		{ CGROUP2_SUPER_MAGIC, "cgroup2" },   { BPF_FS_MAGIC, "bpf" },          { EFIVARFS_MAGIC, "efivarfs" },
		{ DEVPTS_SUPER_MAGIC, "devpts" },
	};
	struct statfs s;

	if (statfs(path, &s) != 0)
		return NULL;
	for (size_t i = 0; i < sizeof(fs) / sizeof(fs[0]); i++)
		if ((long)s.f_type == fs[i].magic)
			return fs[i].name;
	return NULL;
}

int be_file_check_dir(const char *dir, bool make_parents, char *err, size_t errlen)
{
	char at[PATH_MAX], why[PATH_MAX + 128] = "";
	const char *fs;
	struct stat st;

	if (snprintf(at, sizeof(at), "%s", dir) >= (int)sizeof(at)) {
		snprintf(err, errlen, "%s: the path is too long", dir);
		return -1;
	}
	/* The nearest existing directory: the one whose entries mkdir(2) or open(2) will add. */
	while (stat(at, &st) != 0) {
		char *slash = strrchr(at, '/');

		if ((errno != ENOENT && errno != ENOTDIR) || !slash || !make_parents || !strcmp(at, "/")) {
			snprintf(why, sizeof(why), "%s: %s", at, strerror(errno));
			break;
		}
		slash[slash == at] = '\0'; /* "/a" -> "/" */
	}
	if (why[0])
		;
	else if (!S_ISDIR(st.st_mode))
		snprintf(why, sizeof(why), "%s is not a directory", at);
	else if ((fs = pseudo_fs(at)))
		snprintf(why, sizeof(why), "%s is on %s, a kernel pseudo file system, not storage", at, fs);
	else if (faccessat(AT_FDCWD, at, W_OK | X_OK, AT_EACCESS) != 0)
		snprintf(why, sizeof(why), "%s is not writable: %s", at, strerror(errno));
	if (!why[0])
		return 0;
	if (strcmp(at, dir) != 0)
		snprintf(err, errlen, "cannot create %s: %s", dir, why);
	else
		snprintf(err, errlen, "%s", why);
	return -1;
}

/*
 * What be_file_open refuses in an existing path (st): not a regular file or
 * a block device, on a pseudo file system, sizes that do not fit.  fd is
 * open on it (any mode; -1 for a regular file) to read a block device's
 * size, stored in *bytes (a regular file's too).  Returns 0, or -1 with why.
 */
static int check_existing(const char *path, int fd, const struct stat *st, uint64_t size, bool read_only,
			  uint64_t *bytes, char *err, size_t errlen)
{
	const char *fs = pseudo_fs(path);

	if (!S_ISREG(st->st_mode) && !S_ISBLK(st->st_mode)) {
		snprintf(err, errlen, "%s: neither a regular file nor a block device", path);
		return -1;
	}
	if (fs) {
		snprintf(err, errlen, "%s is on %s, a kernel pseudo file system, not storage", path, fs);
		return -1;
	}
	if (S_ISBLK(st->st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, bytes) != 0) {
			snprintf(err, errlen, "%s: cannot read the block device size: %s", path, strerror(errno));
			return -1;
		}
		if (size > *bytes) {
			snprintf(err, errlen, "%s: the configured size %llu is larger than the block device (%llu bytes)",
				 path, (unsigned long long)size, (unsigned long long)*bytes);
			return -1;
		}
		return 0;
	}
	*bytes = (uint64_t)st->st_size;
	if (size == 0 && *bytes == 0) {
		snprintf(err, errlen, "%s: the file is empty and no size is configured", path);
		return -1;
	}
	if (size != 0 && *bytes > size) {
		snprintf(err, errlen,
			 "%s: the file holds %llu bytes, more than the configured size %llu; refusing to shrink it",
			 path, (unsigned long long)*bytes, (unsigned long long)size);
		return -1;
	}
	if (size > *bytes && read_only) {
		snprintf(err, errlen, "%s: the file holds %llu bytes, less than the configured size %llu, "
			 "and it is opened read-only", path, (unsigned long long)*bytes, (unsigned long long)size);
		return -1;
	}
	return 0;
}

int be_file_check(const char *path, uint64_t size, bool read_only, bool make_parents, char *err, size_t errlen)
{
	char parent[PATH_MAX];
	uint64_t bytes;
	struct stat st;
	int fd = -1, rc;

	if (stat(path, &st) != 0) {
		if (errno != ENOENT && errno != ENOTDIR) {
			snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
			return -1;
		}
		if (read_only) {
			snprintf(err, errlen, "%s: the file does not exist, and a read-only one is never created", path);
			return -1;
		}
		if (size == 0) {
			snprintf(err, errlen, "%s: the file does not exist and no size is configured to create it", path);
			return -1;
		}
		snprintf(parent, sizeof(parent), "%s", path);
		if (strrchr(parent, '/'))
			*strrchr(parent, '/') = '\0';
		return be_file_check_dir(parent[0] ? parent : "/", make_parents, err, errlen);
	}
	/* Only a block device is opened, for its size: opening other special files can have effects. */
	if (S_ISBLK(st.st_mode) && (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	rc = check_existing(path, fd, &st, size, read_only, &bytes, err, errlen);
	if (fd >= 0)
		close(fd);
	return rc;
}

static void be_file_close(struct backend *be)
{
	struct be_file *f = be_file_from(be);

	untorn_close(f->untorn);
	resident_close(&f->resident);
	journal_close(f->journal);
	journal_close(f->sjournal);
	pthread_mutex_destroy(&f->journal_lock);
	close(f->fd);
	lock_drop(f->lock);
	free(f);
}

static int be_file_flush(struct backend *be)
{
	return be_fdatasync(be_file_from(be)->fd);
}

/* One call whatever the transport's pieces (backend.h); read and write are its one-piece case. */
static uint64_t iov_bytes(const struct iovec *iov, unsigned iovcnt)
{
	uint64_t len = 0;

	for (unsigned i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	return len;
}

static int be_file_readv(struct backend *be, const struct iovec *iov, unsigned iovcnt, uint64_t offset,
			 unsigned flags)
{
	struct be_file *f = be_file_from(be);
	uint64_t len = iov_bytes(iov, iovcnt);
	int rc = range_check(be, offset, len);
	ssize_t n;

	if (rc)
		return rc;
	if ((flags & BE_IO_NOWAIT) && f->no_nowait_read) {
		if (!resident_range(&f->resident, f->fd, be->size, offset, len))
			return -EAGAIN;
		flags &= ~BE_IO_NOWAIT;
	}
	n = be_preadv_all(f->fd, iov, iovcnt, offset, flags & BE_IO_NOWAIT ? RWF_NOWAIT : 0);
	if (n == -EOPNOTSUPP && (flags & BE_IO_NOWAIT)) {
		f->no_nowait_read = true; /* preadv2(2): "not supported for this file" */
		return be_file_readv(be, iov, iovcnt, offset, flags);
	}
	if (n < 0)
		return (int)n;
	return (uint64_t)n < len ? -EIO : 0; /* end of file inside the backend's size: the file was truncated */
}

static int be_file_writev(struct backend *be, const struct iovec *iov, unsigned iovcnt, uint64_t offset,
			  unsigned flags)
{
	struct be_file *f = be_file_from(be);
	int rc = write_check(be, offset, iov_bytes(iov, iovcnt));

	if (rc)
		return rc;
	if (flags & BE_IO_NOWAIT) {
		/* A durable write waits for the medium by definition. */
		if (flags & BE_WRITE_FUA)
			return -EAGAIN;
		if (!flag_get(&f->no_nowait_write)) {
			rc = be_pwritev_all(f->fd, iov, iovcnt, offset, RWF_NOWAIT);
			if (rc != -EOPNOTSUPP)
				return rc;
			flag_set(&f->no_nowait_write); /* pwritev2(2): "not supported for this file" */
		}
		/* tmpfs and ramfs take no RWF_NOWAIT, and their buffered writes wait for no device. */
		return f->resident.kind == RESIDENT_MEMORY ? be_pwritev_all(f->fd, iov, iovcnt, offset, 0) : -EAGAIN;
	}
	if (!(flags & BE_WRITE_FUA))
		return be_pwritev_all(f->fd, iov, iovcnt, offset, 0);
	if (!flag_get(&f->no_rwf_dsync)) {
		rc = be_pwritev_all(f->fd, iov, iovcnt, offset, RWF_DSYNC);
		if (rc != -EOPNOTSUPP && rc != -EINVAL)
			return rc;
		flag_set(&f->no_rwf_dsync); /* kernel or file system without RWF_DSYNC */
	}
	rc = be_pwritev_all(f->fd, iov, iovcnt, offset, 0);
	return rc ? rc : be_file_flush(be);
}

static int be_file_read(struct backend *be, void *buf, size_t len, uint64_t offset)
{
	struct iovec v = { .iov_base = buf, .iov_len = len };

	return be_file_readv(be, &v, 1, offset, 0);
}

static int be_file_write(struct backend *be, const void *buf, size_t len, uint64_t offset, unsigned flags)
{
	struct iovec v = { .iov_base = (void *)buf, .iov_len = len };

	return be_file_writev(be, &v, 1, offset, flags);
}

/* Writes zeros over [offset, offset + len) with ordinary writes: the fallback for everything. */
static int write_zero_bytes(struct be_file *f, uint64_t offset, uint64_t len)
{
	size_t chunk = len < BE_FILE_ZERO_CHUNK ? (size_t)len : BE_FILE_ZERO_CHUNK;
	void *zeros = calloc(1, chunk ? chunk : 1);
	int rc = 0;

	if (!zeros)
		return -ENOMEM;
	while (len > 0 && rc == 0) {
		size_t n = len < chunk ? (size_t)len : chunk;

		rc = be_pwrite_all(f->fd, zeros, n, offset, 0);
		offset += n;
		len -= n;
	}
	free(zeros);
	return rc;
}

static int fallocate_range(struct be_file *f, int mode, uint64_t offset, uint64_t len)
{
	while (fallocate(f->fd, mode, (off_t)offset, (off_t)len) != 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

/*
 * copy_file_range(2) inside the file: the kernel moves the bytes (a
 * reflink on a file system that shares extents, XFS or Btrfs; a copy in
 * the page cache on ext4), none through this process.  A file system or
 * kernel that refuses (EOPNOTSUPP, EXDEV, ENOSYS, EINVAL for a file it
 * cannot) is not asked again: -EOPNOTSUPP, the caller copies itself.
 */
static int be_file_copy_range(struct backend *be, uint64_t src, uint64_t dst, uint64_t len, unsigned flags)
{
	struct be_file *f = be_file_from(be);
	int rc = range_check(be, src, len);

	if (rc == 0)
		rc = write_check(be, dst, len);
	if (rc)
		return rc;
	if (src < dst + len && dst < src + len)
		return -EINVAL;
	if (flag_get(&f->no_copy_range))
		return -EOPNOTSUPP;
	while (len > 0) {
		loff_t in = (loff_t)src, out = (loff_t)dst;
		ssize_t n = copy_file_range(f->fd, &in, f->fd, &out, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EOPNOTSUPP || errno == EXDEV || errno == ENOSYS || errno == EINVAL)) {
			flag_set(&f->no_copy_range);
			return -EOPNOTSUPP;
		}
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO; /* end of file inside the backend's size: the file was truncated */
		src += (uint64_t)n;
		dst += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return flags & BE_WRITE_FUA ? be_file_flush(be) : 0;
}

/*
 * Deallocates the range, which reads back as zeros: fallocate(2)
 * FALLOC_FL_PUNCH_HOLE, for files and (since Linux 4.9) for block devices,
 * where it becomes a zeroing write that unmaps when the device can.
 * BLKDISCARD is not used: a device may return old data after it, which
 * would break the contract of discard (backend.h).  -EOPNOTSUPP: the file
 * system cannot.
 */
static int punch_hole(struct be_file *f, uint64_t offset, uint64_t len)
{
	return fallocate_range(f, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset, len);
}

static int be_file_discard(struct backend *be, uint64_t offset, uint64_t len)
{
	int rc = write_check(be, offset, len);

	if (rc || len == 0)
		return rc;
	rc = punch_hole(be_file_from(be), offset, len);
	if (rc != -EOPNOTSUPP)
		return rc;
	return be->ops->write_zeroes(be, offset, len, 0);
}

static int be_file_write_zeroes(struct backend *be, uint64_t offset, uint64_t len, unsigned flags)
{
	struct be_file *f = be_file_from(be);
	int rc = write_check(be, offset, len);

	if (rc || len == 0)
		return rc;
	if ((flags & BE_ZERO_MAY_DISCARD) && be->can_discard) {
		rc = punch_hole(f, offset, len);
		if (rc != -EOPNOTSUPP)
			return rc;
	}
	if (!flag_get(&f->no_zero_range)) {
		rc = fallocate_range(f, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, offset, len);
		if (rc != -EOPNOTSUPP)
			return rc;
		flag_set(&f->no_zero_range);
	}
	return write_zero_bytes(f, offset, len);
}

static int be_file_extent(struct backend *be, uint64_t offset, uint64_t max_len, enum be_extent_kind *kind,
			  uint64_t *len)
{
	struct be_file *f = be_file_from(be);
	uint64_t end, limit;
	off_t data, hole;

	if (f->is_block_device)
		return -EOPNOTSUPP;
	if (offset >= be->size)
		return -EINVAL;
	limit = be->size - offset < max_len ? be->size - offset : max_len;
	data = lseek(f->fd, (off_t)offset, SEEK_DATA);
	if (data < 0) {
		if (errno == ENXIO) { /* no data from offset to end of file */
			*kind = BE_EXTENT_HOLE;
			*len = limit;
			return 0;
		}
		return errno == EINVAL ? -EOPNOTSUPP : -errno;
	}
	if ((uint64_t)data > offset) {
		end = (uint64_t)data;
		*kind = BE_EXTENT_HOLE;
	} else {
		hole = lseek(f->fd, (off_t)offset, SEEK_HOLE);
		if (hole < 0)
			return -errno;
		end = (uint64_t)hole;
		*kind = BE_EXTENT_ALLOCATED;
	}
	*len = end - offset < limit ? end - offset : limit;
	return 0;
}

/*
 * The file's allocated bytes: st_blocks counts 512-byte units whatever the
 * file system's block size (stat(2)), holes not included.  The intent logs
 * are files of their own and do not count.  A block device cannot tell.
 */
static int be_file_allocated(struct backend *be, uint64_t *bytes)
{
	struct be_file *f = be_file_from(be);
	struct stat st;

	if (f->is_block_device)
		return -EOPNOTSUPP;
	if (fstat(f->fd, &st) != 0)
		return -errno;
	*bytes = (uint64_t)st.st_blocks * 512;
	return 0;
}

static int be_file_resize(struct backend *be, uint64_t size)
{
	struct be_file *f = be_file_from(be);

	if (be->read_only)
		return -EROFS;
	if (size > (uint64_t)INT64_MAX)
		return -EFBIG;
	if (f->is_block_device)
		return -EOPNOTSUPP;
	while (ftruncate(f->fd, (off_t)size) != 0) {
		if (errno != EINTR)
			return -errno;
	}
	be->size = size;
	return 0;
}

/* An intent log's path: <side> and suffix, ".journal" (write_atomic) or ".sjournal" (stream_*). */
static const char *side_path(const struct be_file *f, const char *suffix, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", f->side, suffix);
	return buf;
}

/*
 * The intent log *j (<side><suffix>), opened by the first call that needs it
 * (journal_lock held); NULL when it cannot be opened.
 */
static struct journal *journal_get(struct be_file *f, struct journal **j, const char *suffix)
{
	char path[PATH_MAX + 16], err[256], note[8];

	if (!*j)
		*j = journal_open(side_path(f, suffix, path, sizeof(path)), f->fd, f->be.size, note, sizeof(note), err,
				  sizeof(err));
	return *j;
}

/* Every range within the backend, and the backend writable: 0 or a negative errno. */
static int ranges_writable(struct backend *be, const struct be_range *ranges, unsigned n)
{
	int rc = 0;

	for (unsigned i = 0; i < n && !rc; i++)
		rc = range_check(be, ranges[i].offset, ranges[i].len);
	if (rc == 0 && be->read_only)
		rc = -EROFS;
	return rc;
}

static int be_file_write_atomic_ranges(struct backend *be, const struct be_range *ranges, unsigned n,
				       const void *buf)
{
	struct be_file *f = be_file_from(be);
	const uint8_t *p = buf;
	int rc = ranges_writable(be, ranges, n);

	if (rc)
		return rc;
	/* The fast path: one untorn write, no record (refused by the kernel: the journal). */
	if (n == 1 && untorn_fits(f->untorn, ranges[0].len, ranges[0].offset)) {
		rc = untorn_write(f->untorn, buf, ranges[0].len, ranges[0].offset);
		if (rc != -EOPNOTSUPP)
			return rc;
	}
	if (!f->side[0]) { /* no side file: FUA writes are the best there is */
		for (unsigned i = 0; i < n && !rc; i++, p += ranges[i - 1].len)
			rc = be_file_write(be, p, ranges[i].len, ranges[i].offset, BE_WRITE_FUA);
		return rc;
	}
	pthread_mutex_lock(&f->journal_lock);
	rc = journal_get(f, &f->journal, ".journal") ? journal_write_ranges(f->journal, ranges, n, buf) : -EIO;
	pthread_mutex_unlock(&f->journal_lock);
	return rc;
}

static int be_file_stream_begin(struct backend *be, const struct be_range *ranges, unsigned n)
{
	struct be_file *f = be_file_from(be);
	int rc = ranges_writable(be, ranges, n);

	if (rc)
		return rc;
	if (!f->side[0])
		return -EOPNOTSUPP;
	pthread_mutex_lock(&f->journal_lock);
	if (f->streaming) {
		rc = -EBUSY;
	} else {
		rc = journal_get(f, &f->sjournal, ".sjournal") ? journal_begin(f->sjournal, ranges, n) : -EIO;
		f->streaming = rc == 0;
	}
	pthread_mutex_unlock(&f->journal_lock);
	return rc;
}

static void stream_end(struct be_file *f)
{
	pthread_mutex_lock(&f->journal_lock);
	f->streaming = false;
	pthread_mutex_unlock(&f->journal_lock);
}

static int be_file_stream_append(struct backend *be, const void *buf, size_t len)
{
	struct be_file *f = be_file_from(be);
	int rc = f->streaming ? journal_append(f->sjournal, buf, len) : -EINVAL;

	if (rc && f->streaming)
		stream_end(f);
	return rc;
}

static int be_file_stream_commit(struct backend *be)
{
	struct be_file *f = be_file_from(be);
	int rc;

	if (!f->streaming)
		return -EINVAL;
	rc = journal_commit(f->sjournal);
	stream_end(f);
	return rc;
}

static void be_file_stream_abandon(struct backend *be)
{
	struct be_file *f = be_file_from(be);

	if (!f->streaming)
		return;
	journal_abandon(f->sjournal);
	stream_end(f);
}

static int be_file_write_atomic(struct backend *be, const void *buf, size_t len, uint64_t offset)
{
	struct be_range r = { .offset = offset, .len = len };

	return be_file_write_atomic_ranges(be, &r, 1, buf);
}

static const struct backend_ops be_file_ops = {
	.name = "file",
	.close = be_file_close,
	.read = be_file_read,
	.write = be_file_write,
	.readv = be_file_readv,
	.writev = be_file_writev,
	.flush = be_file_flush,
	.discard = be_file_discard,
	.write_zeroes = be_file_write_zeroes,
	.copy_range = be_file_copy_range,
	.extent = be_file_extent,
	.allocated = be_file_allocated,
	.resize = be_file_resize,
	.write_atomic = be_file_write_atomic,
	.write_atomic_ranges = be_file_write_atomic_ranges,
	.stream_begin = be_file_stream_begin,
	.stream_append = be_file_stream_append,
	.stream_commit = be_file_stream_commit,
	.stream_abandon = be_file_stream_abandon,
};

/*
 * Whether PUNCH_HOLE works here: a probe past the end of the file (which
 * changes nothing, KEEP_SIZE) fails with EOPNOTSUPP on file systems without it.
 */
static bool probe_punch_hole(int fd, uint64_t file_size)
{
	off_t at = (off_t)((file_size + 4095) & ~(uint64_t)4095);

	return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, at, 4096) == 0 || errno != EOPNOTSUPP;
}

/* Sizes the backend; check_existing() has accepted the file (bytes: its size). */
static int open_sized(struct be_file *f, bool is_block_device, uint64_t bytes, uint64_t size, char *err,
		      size_t errlen)
{
	if (is_block_device) {
		f->is_block_device = true;
		f->be.size = size ? size : bytes;
		/* Zeroing works (see be_file_discard), but whether it deallocates is up to the device. */
		f->be.can_discard = false;
		return 0;
	}
	if (size > bytes) {
		/* Grows the file sparse: the new range is a hole and reads as zeros. */
		if (ftruncate(f->fd, (off_t)size) != 0) {
			snprintf(err, errlen, "%s: cannot size the file to %llu bytes: %s", f->path,
				 (unsigned long long)size, strerror(errno));
			return -1;
		}
		bytes = size;
	}
	f->be.size = bytes;
	f->be.can_discard = !f->be.read_only && probe_punch_hole(f->fd, bytes);
	return 0;
}

/* Whether a directory entry named path exists (a dangling symbolic link does). */
static bool present(const char *path)
{
	return faccessat(AT_FDCWD, path, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

uint64_t be_file_untorn_writes(const struct backend *be, uint32_t *unit_min, uint32_t *unit_max)
{
	const struct be_file *f = be_file_from((struct backend *)be);

	untorn_limits(f->untorn, unit_min, unit_max);
	return untorn_count(f->untorn);
}

/*
 * Opens path for be_file_open, creating it (empty, mode 0600) when it is
 * missing and a size is configured.  Returns the descriptor, or -1 with why.
 */
static int open_backing(const char *path, uint64_t size, bool read_only, char *err, size_t errlen)
{
	int flags = (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC;
	int fd = open(path, flags);

	if (fd < 0 && errno == ENOENT && !read_only && size != 0)
		fd = open(path, flags | O_CREAT | O_EXCL, 0600);
	if (fd < 0) {
		if (errno == ENOENT && size == 0)
			snprintf(err, errlen, "%s: the file does not exist and no size is configured to create it",
				 path);
		else
			snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
	}
	return fd;
}

/* Checks the open file (check_existing), locks it and sizes the backend.  Returns 0, or -1 with why. */
static int open_checked(struct be_file *f, uint64_t size, char *err, size_t errlen)
{
	uint64_t bytes = 0;
	struct stat st;
	int rc;

	if (fstat(f->fd, &st) != 0) {
		snprintf(err, errlen, "%s: cannot stat: %s", f->path, strerror(errno));
		return -1;
	}
	/* Locked before anything writes to it: the sizing below, the journal replays. */
	rc = check_existing(f->path, f->fd, &st, size, f->be.read_only, &bytes, err, errlen);
	if (rc == 0)
		rc = lock_take(f, &st, err, errlen);
	if (rc == 0)
		rc = open_sized(f, S_ISBLK(st.st_mode), bytes, size, err, errlen);
	return rc;
}

/*
 * What write_atomic needs: the intent logs' path without suffix (side),
 * untorn writes where the kernel offers them, and what an earlier run left
 * in the intent logs, recovered.  Returns 0, or -1 with why.
 */
static int open_side(struct be_file *f, const char *side_base, char *err, size_t errlen)
{
	const char *side = f->is_block_device ? side_base : f->path;
	char jpath[PATH_MAX + 16], note[sizeof(f->be.note)];

	if (side && snprintf(f->side, sizeof(f->side), "%s", side) >= (int)sizeof(f->side) - 16) {
		snprintf(err, errlen, "%s: the intent log path is too long", f->path);
		return -1;
	}
	if (!f->be.read_only)
		f->untorn = untorn_open(f->path, f->fd);
	/* With an intent log every atomic write keeps its promise (without one, only those the kernel does untorn). */
	f->be.can_write_atomic = f->side[0] != '\0';
	if (!f->side[0] || f->be.read_only)
		return 0;
	/*
	 * A journal left by an earlier run is recovered now; a new one is created by the first write_atomic.
	 * A symbolic link in its place is found here too (AT_SYMLINK_NOFOLLOW), and journal_open refuses it.
	 */
	if (present(side_path(f, ".journal", jpath, sizeof(jpath)))) {
		f->journal = journal_open(jpath, f->fd, f->be.size, f->be.note, sizeof(f->be.note), err, errlen);
		if (!f->journal)
			return -1;
	}
	if (present(side_path(f, ".sjournal", jpath, sizeof(jpath)))) {
		f->sjournal = journal_open(jpath, f->fd, f->be.size, note, sizeof(note), err, errlen);
		if (!f->sjournal)
			return -1;
		if (note[0] && !f->be.note[0])
			snprintf(f->be.note, sizeof(f->be.note), "%s", note);
	}
	return 0;
}

struct backend *be_file_open(const char *path, uint64_t size, bool read_only, const char *side_base, char *err,
			     size_t errlen)
{
	size_t path_len = strlen(path);
	struct be_file *f;

	if (size > (uint64_t)INT64_MAX) {
		snprintf(err, errlen, "%s: size %llu is too large", path, (unsigned long long)size);
		return NULL;
	}
	f = calloc(1, sizeof(*f) + path_len + 1);
	if (!f) {
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	memcpy(f->path, path, path_len + 1);
	f->be.ops = &be_file_ops;
	f->be.read_only = read_only;
	f->fd = open_backing(path, size, read_only, err, errlen);
	if (f->fd < 0) {
		free(f);
		return NULL;
	}
	pthread_mutex_init(&f->journal_lock, NULL);
	resident_init(&f->resident, f->fd, !read_only);
	if (open_checked(f, size, err, errlen) != 0 || open_side(f, side_base, err, errlen) != 0) {
		be_file_close(&f->be); /* closes what is open, drops the lock if taken */
		return NULL;
	}
	return &f->be;
}
