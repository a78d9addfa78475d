/*
 * The host's untorn writes, the fast path of write_atomic (docs/atomic.md):
 * where the kernel and the file system or block device below the backing
 * file promise that a write is never torn (Linux 6.11 and later: statx
 * STATX_WRITE_ATOMIC reports the atomic write unit range, and an O_DIRECT
 * pwritev2(RWF_ATOMIC) of a power-of-two length in that range, aligned to
 * its length, is all or nothing), a write that fits goes straight to the
 * file, with no intent-log record.  Anything else uses the journal.
 *
 * Debian 12's headers predate these interfaces: the statx layout and the
 * flag values are spelled out in untorn.c (linux/stat.h, linux/fs.h).
 */
#ifndef SBCEMU_UNTORN_H
#define SBCEMU_UNTORN_H

#ifndef SBCE_BUILDING_BACKENDS
#error "sbcemu layering: untorn.h is internal to backends/: use its public header"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct untorn;

/*
 * Asks the kernel about fd (the backing file, opened at path): NULL when it
 * offers no untorn writes there (or path cannot be opened O_DIRECT), else
 * the fast path, with its own O_DIRECT descriptor.
 */
struct untorn *untorn_open(const char *path, int fd);
void untorn_close(struct untorn *u);
/* The atomic write unit range in bytes (0, 0 for NULL). */
void untorn_limits(const struct untorn *u, uint32_t *unit_min, uint32_t *unit_max);
/* Whether a write of len bytes at offset can be one untorn write. */
bool untorn_fits(const struct untorn *u, size_t len, uint64_t offset);
/*
 * One untorn write, durable when it returns (RWF_DSYNC).  0; -EOPNOTSUPP
 * when the kernel refused the request as such (nothing was written: the
 * caller falls back to the journal, and untorn_fits is false from then on);
 * or another negative errno.
 */
int untorn_write(struct untorn *u, const void *buf, size_t len, uint64_t offset);
/* Writes that took the fast path so far (for tests and the log). */
uint64_t untorn_count(const struct untorn *u);

#endif
