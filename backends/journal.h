/*
 * An intent log for all-or-nothing writes of a byte range (docs/atomic.md):
 * the range's new bytes are made durable in a side file before they are
 * written in place, so that after a crash (kill -9, power loss) the range is
 * either wholly old (the record never became durable: it is discarded) or
 * wholly new (the record is durable: it is replayed).  It knows nothing of
 * SCSI; be_file.c uses it for write_atomic.
 *
 * One record at a time; the caller serialises journal_write calls.
 */
#ifndef SBCEMU_JOURNAL_H
#define SBCEMU_JOURNAL_H

#ifndef SBCE_BUILDING_BACKENDS
#error "sbcemu layering: journal.h is internal to backends/: use its public header"
#endif

#include <stddef.h>
#include <stdint.h>

#include "backend.h" /* struct be_range */

struct journal;

/*
 * Opens (creating it when missing) the journal file at path for the data
 * file data_fd, of data_size bytes.  A complete record left by a crash is
 * replayed into the data file (written in place and fdatasync'd), a torn
 * one discarded; what happened is written into note (empty when there was
 * nothing to do).  Returns NULL with a message in err on failure.
 */
struct journal *journal_open(const char *path, int data_fd, uint64_t data_size, char *note, size_t notelen,
			     char *err, size_t errlen);
void journal_close(struct journal *j);

/*
 * The all-or-nothing write: the record (header with zlib crc32s, then the
 * data) is written and fdatasync'd, then the data is applied in place, then
 * the record is invalidated (and that made durable) before returning, so a
 * later write to the range can never be overwritten by a stale replay.
 * 0 or a negative errno.
 */
int journal_write(struct journal *j, const void *buf, size_t len, uint64_t offset);
/*
 * The same for n ranges (1 to 131 072) as one all-or-nothing unit; data
 * holds their bytes one range after the other.
 */
int journal_write_ranges(struct journal *j, const struct be_range *r, unsigned n, const void *data);

/*
 * A streamed record, for writes too big to hold in memory: journal_begin
 * writes the range table, journal_append the data in order (any number of
 * pieces, from any thread, one call at a time), journal_commit makes the
 * record durable and applies it as journal_write_ranges does (reading the
 * data back from the journal file in pieces).  Until the commit nothing is
 * durable: journal_abandon (or a crash) leaves the old data.  One record at
 * a time: the caller keeps journal_write_ranges out meanwhile.  0 or a
 * negative errno; a failed append or commit abandons the record.
 */
int journal_begin(struct journal *j, const struct be_range *r, unsigned n);
int journal_append(struct journal *j, const void *data, size_t len);
int journal_commit(struct journal *j);
void journal_abandon(struct journal *j);

/*
 * Test hook for crash tests (docs/atomic.md): when the environment variable
 * SBCEMU_JOURNAL_CRASH is "mid-record", "after-record" or "mid-apply", the process kills
 * itself (SIGKILL) at that point of the next journal_write.
 */

#endif
