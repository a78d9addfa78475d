/*
 * be_untorn: sbcemu's file backend (backends/be_file.c) on a block device
 * of the guest, for the kernel check "untorn" (tests/kernel/guest/untorn.sh):
 * does write_atomic take the untorn fast path (statx STATX_WRITE_ATOMIC,
 * pwritev2 RWF_ATOMIC; backends/untorn.h) where the kernel offers it, and
 * the intent log where the write does not fit?  Built static on the host
 * by tests/kernel/run.sh, with the backend's sources (guest-build below).
 *
 *   be_untorn DEVICE OFFSET
 *
 * 1. opens DEVICE with be_file_open (intent logs under /tmp/be-untorn);
 * 2. write_atomic of unit_max bytes of E5h at OFFSET (fits: one untorn
 *    write, which sd sends as WRITE ATOMIC(16));
 * 3. write_atomic of 2 x unit_max bytes of E6h at OFFSET + 4 x unit_max
 *    (does not fit: a journal record, then plain writes);
 * 4. reads both back through the backend.
 * Prints one line:
 *   limits=MIN-MAX fit=ok untorn=N nofit=ok untorn=N journal=yes|no readback=ok|differs
 * (without untorn writes, MIN-MAX is 0-0 and both writes use the journal,
 * 4096 and 8192 bytes).  Exit status 0 when it ran, 2 on set-up errors.
 *
 * guest-build: -D_GNU_SOURCE -DSBCE_BUILDING_BACKENDS -I@REPO@/backends -I@REPO@/backends/include @REPO@/backends/be_file.c @REPO@/backends/be_io.c @REPO@/backends/journal.c @REPO@/backends/resident.c @REPO@/backends/untorn.c -lz -pthread
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"

static int write_pattern(struct backend *be, uint64_t offset, size_t len, int byte)
{
	uint8_t *buf = malloc(len);
	int rc;

	if (!buf)
		return -ENOMEM;
	memset(buf, byte, len);
	rc = be->ops->write_atomic(be, buf, len, offset);
	free(buf);
	return rc;
}

static bool holds(struct backend *be, uint64_t offset, size_t len, int byte)
{
	uint8_t *buf = malloc(len);
	bool ok = buf && be->ops->read(be, buf, len, offset) == 0;

	for (size_t i = 0; ok && i < len; i++)
		ok = buf[i] == (uint8_t)byte;
	free(buf);
	return ok;
}

int main(int argc, char **argv)
{
	char err[512];
	struct backend *be;
	uint32_t unit_min, unit_max;
	uint64_t offset, fit_len, nofit_off, nofit_len, after_fit;
	int rc_fit, rc_nofit;

	if (argc != 3) {
		fprintf(stderr, "usage: be_untorn DEVICE OFFSET\n");
		return 2;
	}
	offset = strtoull(argv[2], NULL, 0);
	be = be_file_open(argv[1], 0, false, "/tmp/be-untorn", err, sizeof(err));
	if (!be) {
		fprintf(stderr, "be_untorn: %s\n", err);
		return 2;
	}
	be_file_untorn_writes(be, &unit_min, &unit_max);
	fit_len = unit_max ? unit_max : 4096;
	nofit_len = 2 * fit_len;
	nofit_off = offset + 4 * fit_len;
	rc_fit = write_pattern(be, offset, fit_len, 0xe5);
	after_fit = be_file_untorn_writes(be, &unit_min, &unit_max);
	rc_nofit = write_pattern(be, nofit_off, nofit_len, 0xe6);
	printf("limits=%u-%u fit=%s untorn=%llu nofit=%s untorn=%llu journal=%s readback=%s\n", unit_min, unit_max,
	       rc_fit ? strerror(-rc_fit) : "ok", (unsigned long long)after_fit, rc_nofit ? strerror(-rc_nofit) : "ok",
	       (unsigned long long)be_file_untorn_writes(be, &unit_min, &unit_max),
	       access("/tmp/be-untorn.journal", F_OK) == 0 ? "yes" : "no",
	       holds(be, offset, fit_len, 0xe5) && holds(be, nofit_off, nofit_len, 0xe6) ? "ok" : "differs");
	be_close(be);
	return 0;
}
