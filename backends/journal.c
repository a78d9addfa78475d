/*
 * The intent log (journal.h).  File layout: one record at offset 0,
 *
 *   bytes 0-7    magic "SBCEJNL2"
 *   bytes 8-11   RANGE COUNT n, at least 1 (little endian, like every field)
 *   bytes 16-23  DATA LENGTH: the sum of the ranges' lengths
 *   bytes 24-27  zlib crc32 of the range table and the data
 *   bytes 28-59  reserved (0)
 *   bytes 60-63  zlib crc32 of bytes 0-59
 *   bytes 64-    the range table: n x (OFFSET in the data file, 8 bytes;
 *                LENGTH, 8 bytes), then the data of every range in order
 *
 * A record is valid when the magic, both crc32s and every range (within the
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
static const char magic[8] = { 'S', 'B', 'C', 'E', 'J', 'N', 'L', '2' };
#define RANGE_LEN 16
#define MAX_RANGES 131072u /* 65535 LBA ranges and their PI tuple ranges */

/* Bytes copied per step when a record is checked or applied from the journal file. */
#define COPY_CHUNK (1u << 20)

struct journal {
	int fd;
	int data_fd;
	uint64_t data_size;
	/* the streamed record being written (journal_begin .. journal_commit) */
	struct be_range *stream_ranges;
	unsigned stream_n;
	uint64_t stream_len;      /* DATA LENGTH */
	uint64_t stream_pos;      /* data bytes appended */
	uint32_t stream_crc;
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

static uint32_t crc_more(uint32_t c, const void *p, size_t len)
{
	const Bytef *b = p;

	/* zlib's crc32 takes a uInt length: feed it in pieces. */
	while (len > 0) {
		uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;

		c = (uint32_t)crc32(c, b, n);
		b += n;
		len -= n;
	}
	return c;
}

static uint32_t crc(const void *p, size_t len)
{
	return crc_more(0, p, len);
}

/* be_pread_all of exactly len bytes: -ENODATA when the file ends first (recover: a short or empty journal). */
static int pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n = be_pread_all(fd, buf, len, off);

	return n < 0 ? (int)n : (size_t)n < len ? -ENODATA : 0;
}

/*
 * The in-place writes of a record's ranges, made durable; at most limit bytes
 * of data (the crash test's "mid-apply" stops half way).
 */
static int apply(struct journal *j, const struct be_range *r, unsigned n, const uint8_t *data, uint64_t limit)
{
	for (unsigned i = 0; i < n && limit; i++) {
		uint64_t len = r[i].len < limit ? r[i].len : limit;
		int rc = be_pwrite_all(j->data_fd, data, len, r[i].offset, 0);

		if (rc)
			return rc;
		data += r[i].len;
		limit -= len;
	}
	return be_fdatasync(j->data_fd);
}

static int invalidate(struct journal *j)
{
	static const uint8_t zeros[HEADER_LEN];
	int rc = be_pwrite_all(j->fd, zeros, HEADER_LEN, 0, 0);

	return rc ? rc : be_fdatasync(j->fd);
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

/*
 * Reads the range table of a record whose header checked out and checks the
 * crc32 of the table and the data, reading the data in pieces (a record may
 * hold a gigabyte).  Returns the ranges (malloc'd), or NULL if torn.
 */
static struct be_range *read_table(struct journal *j, unsigned n, uint64_t data_len, uint32_t want_crc)
{
	size_t table_len = (size_t)n * RANGE_LEN;
	uint8_t *table = malloc(table_len), *chunk = malloc(COPY_CHUNK);
	struct be_range *r = calloc(n, sizeof(*r));
	uint64_t sum = 0;
	uint32_t c;
	bool ok = table && chunk && r && pread_full(j->fd, table, table_len, HEADER_LEN) == 0;

	if (ok) {
		c = crc(table, table_len);
		for (uint64_t pos = 0; ok && pos < data_len; pos += COPY_CHUNK) {
			size_t len = data_len - pos < COPY_CHUNK ? (size_t)(data_len - pos) : COPY_CHUNK;

			ok = pread_full(j->fd, chunk, len, HEADER_LEN + table_len + pos) == 0;
			c = crc_more(c, chunk, len);
		}
		ok = ok && c == want_crc;
	}
	for (unsigned i = 0; ok && i < n; i++) {
		r[i].offset = get_le(table + (size_t)i * RANGE_LEN, 8);
		r[i].len = get_le(table + (size_t)i * RANGE_LEN + 8, 8);
		sum += r[i].len;
		ok = r[i].offset <= j->data_size && r[i].len <= j->data_size - r[i].offset;
	}
	free(table);
	free(chunk);
	if (!ok || sum != data_len) {
		free(r);
		return NULL;
	}
	return r;
}

/* apply() with the data read from the record in the journal file, a piece at a time; at most limit bytes. */
static int apply_from_file(struct journal *j, const struct be_range *r, unsigned n, uint64_t limit)
{
	uint64_t src = HEADER_LEN + (uint64_t)n * RANGE_LEN;
	uint8_t *chunk = malloc(COPY_CHUNK);
	int rc = 0;

	if (!chunk)
		return -ENOMEM;
	for (unsigned i = 0; i < n && limit && !rc; i++) {
		for (uint64_t done = 0; done < r[i].len && limit && !rc;) {
			size_t len = r[i].len - done < COPY_CHUNK ? (size_t)(r[i].len - done) : COPY_CHUNK;

			if (len > limit)
				len = (size_t)limit;
			rc = pread_full(j->fd, chunk, len, src);
			if (!rc)
				rc = be_pwrite_all(j->data_fd, chunk, len, r[i].offset + done, 0);
			done += len;
			src += len;
			limit -= len;
		}
	}
	free(chunk);
	return rc ? rc : be_fdatasync(j->data_fd);
}

/* Replays or discards what a crash left; describes it in note. */
static int recover(struct journal *j, char *note, size_t notelen)
{
	uint8_t h[HEADER_LEN];
	struct be_range *r;
	uint64_t data_len;
	unsigned n;
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
	n = (unsigned)get_le(h + 8, 4);
	data_len = get_le(h + 16, 8);
	if ((uint32_t)get_le(h + 60, 4) != crc(h, 60) || n == 0 || n > MAX_RANGES || data_len > j->data_size) {
		snprintf(note, notelen, "discarded a torn journal record (bad header)");
		return invalidate(j);
	}
	r = read_table(j, n, data_len, (uint32_t)get_le(h + 24, 4));
	if (!r) {
		snprintf(note, notelen, "discarded a torn journal record (%u ranges, %llu bytes): the old data stands",
			 n, (unsigned long long)data_len);
		return invalidate(j);
	}
	rc = apply_from_file(j, r, n, UINT64_MAX);
	if (rc == 0)
		snprintf(note, notelen, "replayed a journal record: %llu bytes in %u range(s), the first at offset %llu",
			 (unsigned long long)data_len, n, (unsigned long long)r[0].offset);
	free(r);
	return rc ? rc : invalidate(j);
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
	j->fd = be_state_open(path, O_RDWR | O_CREAT);
	if (j->fd < 0) {
		snprintf(err, errlen, "%s: cannot open the journal: %s", path,
			 be_state_strerror(errno));
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
		journal_abandon(j);
		close(j->fd);
		free(j);
	}
}

int journal_write_ranges(struct journal *j, const struct be_range *r, unsigned n, const void *data)
{
	uint8_t h[HEADER_LEN] = { 0 }, *table;
	size_t table_len = (size_t)n * RANGE_LEN;
	uint64_t data_len = 0;
	int rc;

	if (n == 0 || n > MAX_RANGES)
		return -EINVAL;
	table = malloc(table_len);
	if (!table)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		put_le(table + (size_t)i * RANGE_LEN, r[i].offset, 8);
		put_le(table + (size_t)i * RANGE_LEN + 8, r[i].len, 8);
		data_len += r[i].len;
	}
	memcpy(h, magic, sizeof(magic));
	put_le(h + 8, n, 4);
	put_le(h + 16, data_len, 8);
	put_le(h + 24, crc_more(crc(table, table_len), data, data_len), 4);
	put_le(h + 60, crc(h, 60), 4);
	/* The body first, the header last: a record is never valid before its body is there. */
	rc = be_pwrite_all(j->fd, table, table_len, HEADER_LEN, 0);
	if (!rc)
		rc = be_pwrite_all(j->fd, data, data_len, HEADER_LEN + table_len, 0);
	free(table);
	crash_point("mid-record");
	if (!rc)
		rc = be_pwrite_all(j->fd, h, HEADER_LEN, 0, 0);
	if (!rc)
		rc = be_fdatasync(j->fd);
	if (rc)
		return rc;
	crash_point("after-record");
	if (data_len > 1 && crash_wanted("mid-apply")) {
		/* Half the data in place, then the crash: recovery must complete it. */
		apply(j, r, n, data, data_len / 2);
		crash_point("mid-apply");
	}
	rc = apply(j, r, n, data, UINT64_MAX);
	return rc ? rc : invalidate(j);
}

int journal_write(struct journal *j, const void *buf, size_t len, uint64_t offset)
{
	struct be_range r = { .offset = offset, .len = len };

	return journal_write_ranges(j, &r, 1, buf);
}

/* ---- streamed records ---- */

int journal_begin(struct journal *j, const struct be_range *r, unsigned n)
{
	size_t table_len = (size_t)n * RANGE_LEN;
	uint8_t *table;
	int rc;

	if (n == 0 || n > MAX_RANGES || j->stream_ranges)
		return -EINVAL;
	table = malloc(table_len);
	j->stream_ranges = malloc((size_t)n * sizeof(*r));
	if (!table || !j->stream_ranges) {
		free(table);
		free(j->stream_ranges);
		j->stream_ranges = NULL;
		return -ENOMEM;
	}
	memcpy(j->stream_ranges, r, (size_t)n * sizeof(*r));
	j->stream_n = n;
	j->stream_len = 0;
	j->stream_pos = 0;
	for (unsigned i = 0; i < n; i++) {
		put_le(table + (size_t)i * RANGE_LEN, r[i].offset, 8);
		put_le(table + (size_t)i * RANGE_LEN + 8, r[i].len, 8);
		j->stream_len += r[i].len;
	}
	/* Whatever header is there now is invalid (journal_commit and recovery invalidate): body first. */
	j->stream_crc = crc(table, table_len);
	rc = be_pwrite_all(j->fd, table, table_len, HEADER_LEN, 0);
	free(table);
	if (rc)
		journal_abandon(j);
	return rc;
}

int journal_append(struct journal *j, const void *data, size_t len)
{
	int rc;

	if (!j->stream_ranges || len > j->stream_len - j->stream_pos)
		return -EINVAL;
	rc = be_pwrite_all(j->fd, data, len, HEADER_LEN + (uint64_t)j->stream_n * RANGE_LEN + j->stream_pos, 0);
	if (rc) {
		journal_abandon(j);
		return rc;
	}
	j->stream_crc = crc_more(j->stream_crc, data, len);
	j->stream_pos += len;
	if (j->stream_pos >= j->stream_len / 2 && j->stream_pos - len < j->stream_len / 2)
		crash_point("mid-record");
	return 0;
}

int journal_commit(struct journal *j)
{
	uint8_t h[HEADER_LEN] = { 0 };
	int rc;

	if (!j->stream_ranges || j->stream_pos != j->stream_len) {
		journal_abandon(j);
		return -EINVAL;
	}
	memcpy(h, magic, sizeof(magic));
	put_le(h + 8, j->stream_n, 4);
	put_le(h + 16, j->stream_len, 8);
	put_le(h + 24, j->stream_crc, 4);
	put_le(h + 60, crc(h, 60), 4);
	rc = be_pwrite_all(j->fd, h, HEADER_LEN, 0, 0);
	if (!rc)
		rc = be_fdatasync(j->fd);
	if (!rc) {
		crash_point("after-record");
		if (j->stream_len > 1 && crash_wanted("mid-apply")) {
			apply_from_file(j, j->stream_ranges, j->stream_n, j->stream_len / 2);
			crash_point("mid-apply");
		}
		rc = apply_from_file(j, j->stream_ranges, j->stream_n, UINT64_MAX);
		if (!rc)
			rc = invalidate(j);
		/* The record is dead: give back its space (a streamed record may be a gigabyte). */
		if (!rc && ftruncate(j->fd, HEADER_LEN) != 0)
			rc = 0; /* the space stays taken, nothing else is wrong */
	}
	journal_abandon(j);
	return rc;
}

void journal_abandon(struct journal *j)
{
	free(j->stream_ranges);
	j->stream_ranges = NULL;
	j->stream_n = 0;
	j->stream_len = j->stream_pos = 0;
}
