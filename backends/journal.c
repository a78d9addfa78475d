/*
 * The intent log (journal.h).  File layout: one record at offset 0,
 *
 *   bytes 0-7    magic "SBCEJNL1"
 *   bytes 8-15   OFFSET in the data file (little endian)
 *   bytes 16-23  LENGTH of the data
 *   bytes 24-27  zlib crc32 of the data
 *   bytes 28-59  reserved (0)
 *   bytes 60-63  zlib crc32 of bytes 0-59
 *   bytes 64-    the data
 *
 * A record is valid when the magic, both crc32s and the range (within the
 * data file) check out.  Invalidation overwrites the header with zeros.
 * Replay at open: a valid record is applied (again: applying is idempotent)
 * and invalidated; anything else is a record whose write never completed,
 * so the in-place write never started and the old data stands.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "journal.h"

#define HEADER_LEN 64
static const char magic[8] = { 'S', 'B', 'C', 'E', 'J', 'N', 'L', '1' };

struct journal {
	int fd;
	int data_fd;
	uint64_t data_size;
};

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static uint32_t crc(const void *p, size_t len)
{
	uLong c = crc32(0L, Z_NULL, 0);
	const Bytef *b = p;

	/* zlib's crc32 takes a uInt length: feed it in pieces. */
	while (len > 0) {
		uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;

		c = crc32(c, b, n);
		b += n;
		len -= n;
	}
	return (uint32_t)c;
}

static int pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ENODATA;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int sync_fd(int fd)
{
	while (fdatasync(fd) != 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/* The in-place write of a record's data, made durable. */
static int apply(struct journal *j, const void *buf, size_t len, uint64_t offset)
{
	int rc = pwrite_full(j->data_fd, buf, len, offset);

	return rc ? rc : sync_fd(j->data_fd);
}

static int invalidate(struct journal *j)
{
	static const uint8_t zeros[HEADER_LEN];
	int rc = pwrite_full(j->fd, zeros, HEADER_LEN, 0);

	return rc ? rc : sync_fd(j->fd);
}

/* Test hook (journal.h): whether SBCEMU_JOURNAL_CRASH names this point, and the SIGKILL there. */
static bool crash_wanted(const char *name)
{
	const char *want = getenv("SBCEMU_JOURNAL_CRASH");

	return want && strcmp(want, name) == 0;
}

static void crash_point(const char *name)
{
	if (crash_wanted(name))
		kill(getpid(), SIGKILL);
}

/* Replays or discards what a crash left; describes it in note. */
static int recover(struct journal *j, char *note, size_t notelen)
{
	uint8_t h[HEADER_LEN];
	uint64_t offset, len;
	uint8_t *data;
	int rc = pread_full(j->fd, h, HEADER_LEN, 0);

	note[0] = '\0';
	if (rc == -ENODATA)
		return 0; /* empty or short file: nothing was ever durable */
	if (rc)
		return rc;
	if (memcmp(h, magic, sizeof(magic)) != 0) {
		for (size_t i = 0; i < HEADER_LEN; i++)
			if (h[i]) {
				snprintf(note, notelen, "discarded a torn journal record (bad magic)");
				return invalidate(j);
			}
		return 0; /* invalidated record */
	}
	offset = get_le(h + 8, 8);
	len = get_le(h + 16, 8);
	if ((uint32_t)get_le(h + 60, 4) != crc(h, 60) || offset > j->data_size || len > j->data_size - offset ||
	    len > SIZE_MAX) {
		snprintf(note, notelen, "discarded a torn journal record (bad header)");
		return invalidate(j);
	}
	data = malloc(len ? len : 1);
	if (!data)
		return -ENOMEM;
	rc = pread_full(j->fd, data, len, HEADER_LEN);
	if (rc == -ENODATA || (rc == 0 && (uint32_t)get_le(h + 24, 4) != crc(data, len))) {
		free(data);
		snprintf(note, notelen, "discarded a torn journal record (%llu bytes at %llu): the old data stands",
			 (unsigned long long)len, (unsigned long long)offset);
		return invalidate(j);
	}
	if (rc == 0)
		rc = apply(j, data, len, offset);
	free(data);
	if (rc)
		return rc;
	snprintf(note, notelen, "replayed a journal record: %llu bytes at offset %llu", (unsigned long long)len,
		 (unsigned long long)offset);
	return invalidate(j);
}

struct journal *journal_open(const char *path, int data_fd, uint64_t data_size, char *note, size_t notelen,
			     char *err, size_t errlen)
{
	struct journal *j = calloc(1, sizeof(*j));
	int rc;

	if (!j) {
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	j->data_fd = data_fd;
	j->data_size = data_size;
	j->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (j->fd < 0) {
		snprintf(err, errlen, "%s: cannot open the journal: %s", path, strerror(errno));
		free(j);
		return NULL;
	}
	rc = recover(j, note, notelen);
	if (rc) {
		snprintf(err, errlen, "%s: journal recovery failed: %s", path, strerror(-rc));
		close(j->fd);
		free(j);
		return NULL;
	}
	return j;
}

void journal_close(struct journal *j)
{
	if (j) {
		close(j->fd);
		free(j);
	}
}

int journal_write(struct journal *j, const void *buf, size_t len, uint64_t offset)
{
	uint8_t h[HEADER_LEN] = { 0 };
	int rc;

	memcpy(h, magic, sizeof(magic));
	put_le(h + 8, offset, 8);
	put_le(h + 16, len, 8);
	put_le(h + 24, crc(buf, len), 4);
	put_le(h + 60, crc(h, 60), 4);
	/* The data first, the header last: a record is never valid before its data is there. */
	rc = pwrite_full(j->fd, buf, len, HEADER_LEN);
	crash_point("mid-record");
	if (!rc)
		rc = pwrite_full(j->fd, h, HEADER_LEN, 0);
	if (!rc)
		rc = sync_fd(j->fd);
	if (rc)
		return rc;
	crash_point("after-record");
	if (len > 1 && crash_wanted("mid-apply")) {
		/* Half the data in place, then the crash: recovery must complete it. */
		apply(j, buf, len / 2, offset);
		crash_point("mid-apply");
	}
	rc = apply(j, buf, len, offset);
	if (rc)
		return rc;
	return invalidate(j);
}
