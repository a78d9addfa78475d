/*
 * A volatile write cache on a full disk (volatile_write_cache; be_cache.c).
 * The LU's backing file lives on a tmpfs of FS_MIB MiB mounted inside the
 * scratch directory (root only: else the test is skipped, exit 77), much
 * smaller than the thin LU, so write-backs of the cache run out of space.
 *
 * Phase 1, the defect: WRITE(16)s of 1 MiB are acknowledged into the cache
 * past the free space, until the cache (64 MiB) is full of data that cannot
 * be written back; then a WRITE must fail with DATA PROTECT, SPACE
 * ALLOCATION FAILED WRITE PROTECT rather than evict any of it.  SYNCHRONIZE
 * CACHE fails with the same sense, every acknowledged block still reads back
 * what was written, a second SYNCHRONIZE CACHE fails again, and SIGTERM's
 * final flush fails: the daemon logs it and exits 1 (README).  Before the
 * fix (4264db2) every WRITE was GOOD (the cache dropped what it could not
 * write back to make room), acknowledged blocks read back as zeros, the
 * second SYNCHRONIZE CACHE was GOOD and SIGTERM exited 0.
 *
 * Phase 2, the way out: on a fresh file, a few MiB more than the file
 * system takes are cached, SYNCHRONIZE CACHE fails; an UNMAP of the first
 * half frees space (a discard needs no write-back), and SYNCHRONIZE CACHE
 * then succeeds; what was not unmapped reads back, survives SIGTERM (exit
 * 0) and a restart.
 *
 * Phase 3 (phase3()): the same full file system without the cache.
 *
 * Rules: SBC-4 5.26 SYNCHRONIZE CACHE(10) (the cached data must be on the
 * medium when it returns GOOD; an error ends it with CHECK CONDITION); SBC-3
 * 4.7.3.6 / SBC-4 4.7.3 logical block provisioning resource exhaustion (a
 * write the thin LU has no resources for: 07/27/07 DATA PROTECT, SPACE
 * ALLOCATION FAILED WRITE PROTECT); SBC-4 4.15 caches (data in a volatile
 * cache is what reads return).
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"

#define BS 512u
#define MIB (1024u * 1024u)
#define CHUNK_BLOCKS (MIB / BS)
#define FS_MIB 8u        /* the tmpfs under the backing file */
#define LU_MIB 128u      /* the thin LU: far more than the tmpfs */
#define MAX_CHUNKS 100u  /* phase 1 gives up after this many GOOD writes (a cache that never refuses: all of them) */
#define PHASE2_CHUNKS 12u

static const char config[] =
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/small/lun0.img\n"
	"size = 128M\n"
	"logical_block_size = 512\n"
	"thin_provisioning = true\n"
	"volatile_write_cache = true\n";

static struct itest_daemon d;
static char mnt[600];
static bool mounted;

/* Unmounts the tmpfs; the daemon, if still running, is killed first (it holds the file open). */
static void unmount_small(void)
{
	if (!mounted)
		return;
	if (d.pid > 0) {
		kill(d.pid, SIGKILL);
		waitpid(d.pid, NULL, 0);
		d.pid = -1;
	}
	if (umount(mnt) != 0 && umount2(mnt, MNT_DETACH) != 0)
		printf("# umount %s: %s\n", mnt, strerror(errno));
	mounted = false;
}

/* Empties the tmpfs (the daemon is stopped): the backing file and its intent logs. */
static void empty_small(void)
{
	DIR *dir = opendir(mnt);
	struct dirent *e;
	char path[900];

	if (!dir)
		return;
	while ((e = readdir(dir)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", mnt, e->d_name);
			unlink(path);
		}
	closedir(dir);
}

static void chunk_data(uint8_t *buf, unsigned n)
{
	itest_pattern(buf, MIB, 0xc0de0000u + n);
}

/* WRITE(16) of chunk n (1 MiB at LBA n * CHUNK_BLOCKS); the result in *r. */
static void write_chunk(struct iscsi_context *s, unsigned n, uint8_t *buf, struct itest_result *r)
{
	uint8_t cdb[16] = { 0x8a };

	chunk_data(buf, n);
	itest_put_be64(cdb + 2, (uint64_t)n * CHUNK_BLOCKS);
	itest_put_be32(cdb + 10, CHUNK_BLOCKS);
	itest_cmd(s, 0, cdb, 16, ITEST_OUT, buf, MIB, 0, r);
}

/*
 * Reads chunks [from, to) and compares them with what was written; counts
 * the ones that read back as zeros and as other data.  Returns the number
 * that match.
 */
static unsigned chunks_read_back(struct iscsi_context *s, unsigned from, unsigned to, unsigned *zeros,
				 unsigned *other, char *first_bad, size_t first_bad_len)
{
	uint8_t *want = malloc(MIB), *got = malloc(MIB);
	unsigned good = 0;

	*zeros = *other = 0;
	first_bad[0] = '\0';
	for (unsigned n = from; n < to && want && got; n++) {
		bool all_zero = true;

		chunk_data(want, n);
		if (!itest_read16(s, 0, (uint64_t)n * CHUNK_BLOCKS, got, CHUNK_BLOCKS, BS, NULL)) {
			(*other)++;
			if (!first_bad[0])
				snprintf(first_bad, first_bad_len, "chunk %u: READ(16) failed", n);
			continue;
		}
		if (memcmp(want, got, MIB) == 0) {
			good++;
			continue;
		}
		for (size_t i = 0; i < MIB && all_zero; i++)
			all_zero = got[i] == 0;
		if (all_zero)
			(*zeros)++;
		else
			(*other)++;
		if (!first_bad[0])
			snprintf(first_bad, first_bad_len, "chunk %u (LBA %u) reads back %s", n, n * CHUNK_BLOCKS,
				 all_zero ? "zeros" : "other data");
	}
	free(want);
	free(got);
	return good;
}

static bool sync_cache(struct iscsi_context *s, const char *name, struct itest_expect e)
{
	uint8_t sync10[10] = { 0x35 };

	return itest_expect_cmd(s, 0, name, sync10, 10, ITEST_NONE, NULL, 0, 0, e, NULL);
}

static void unmap_chunks(struct iscsi_context *s, unsigned from, unsigned to, const char *name)
{
	uint8_t p[24] = { 0 }, cdb[10] = { 0x42 };

	itest_put_be16(p, sizeof(p) - 2);
	itest_put_be16(p + 2, 16);
	itest_put_be64(p + 8, (uint64_t)from * CHUNK_BLOCKS);
	itest_put_be32(p + 16, (to - from) * CHUNK_BLOCKS);
	itest_put_be16(cdb + 7, sizeof(p));
	itest_expect_cmd(s, 0, name, cdb, 10, ITEST_OUT, p, sizeof(p), 0, EXPECT_GOOD, NULL);
}

/* Where in the log the current phase's lines start (log_has looks from there). */
static long log_from;

/* Whether the daemon logged a line at level (" error: ", " warn: ") holding both what and err. */
static bool log_has(const char *level, const char *what, const char *err)
{
	FILE *f = fopen(d.log, "r");
	char line[2048];
	bool found = false;

	if (f)
		fseek(f, log_from, SEEK_SET);
	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, level) && strstr(line, what) && strstr(line, err);
	if (f)
		fclose(f);
	return found;
}

static struct iscsi_context *session(void)
{
	struct iscsi_context *s = itest_session(&d, ITEST_INITIATOR_1, 0);

	if (s)
		itest_clear_ua(s, 0);
	return s;
}

static const struct itest_expect space_allocation_failed = EXPECT_SENSE(0x07, 0x27, 0x07);

static void phase1(uint8_t *buf)
{
	struct iscsi_context *s = session();
	struct itest_result r = { 0 };
	unsigned acked, zeros, other, good;
	char bad[200];
	int st;

	if (!s)
		return;
	for (acked = 0; acked < MAX_CHUNKS; acked++) {
		write_chunk(s, acked, buf, &r);
		if (!r.transport_ok || r.status != 0)
			break;
		itest_result_free(&r);
	}
	itest_note("phase 1: %u WRITE(16)s of 1 MiB acknowledged on a %u MiB file system; then %s", acked, FS_MIB,
		   acked < MAX_CHUNKS ? itest_result_str(&r) : "none failed");
	itest_ok(acked > FS_MIB, "volatile write cache: WRITE(16)s past the free space are acknowledged (cached)",
		 "only %u MiB acknowledged", acked);
	itest_ok(acked < MAX_CHUNKS && itest_result_matches(&r, space_allocation_failed),
		 "a WRITE(16) that needs room in a cache full of data that cannot be written back -> 07/27/07 "
		 "DATA PROTECT, SPACE ALLOCATION FAILED WRITE PROTECT (SBC-3 4.7.3.6 / SBC-4 4.7.3 resource "
		 "exhaustion), no acknowledged data evicted",
		 "%s", acked < MAX_CHUNKS ? itest_result_str(&r)
					  : "all 100 WRITE(16)s GOOD: the cache made room by dropping data it could not "
					    "write back");
	itest_result_free(&r);

	sync_cache(s, "SYNCHRONIZE CACHE(10) with cached data that cannot be written back -> 07/27/07 (SBC-4 5.26)",
		   space_allocation_failed);
	itest_ok(log_has(" error: ", "the volatile write cache cannot write back", "No space left on device"),
		 "the first failed write-back is logged at once as an error naming ENOSPC and the bytes held",
		 "no such line in %s", d.log);

	good = chunks_read_back(s, 0, acked, &zeros, &other, bad, sizeof(bad));
	itest_ok(good == acked,
		 "after the failed SYNCHRONIZE CACHE every acknowledged WRITE(16) reads back what was written "
		 "(SBC-4 4.15: the data stays in the cache)",
		 "%u of %u chunks wrong: %u read zeros, %u other data; first: %s", acked - good, acked, zeros, other,
		 bad);

	sync_cache(s,
		   "a second SYNCHRONIZE CACHE(10) fails again with 07/27/07 while the data still cannot be written "
		   "(SBC-4 5.26; not GOOD over lost data)",
		   space_allocation_failed);
	itest_close(s);

	st = itest_daemon_stop(&d, SIGTERM);
	itest_ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 1,
		 "SIGTERM: the final flush cannot write the cache back, sbcemud exits 1 (README: 1 if a flush failed)",
		 "wait status 0x%x (%s %d)", (unsigned)st, st != -1 && WIFEXITED(st) ? "exit" : "signal",
		 st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : st != -1 && WIFSIGNALED(st) ? WTERMSIG(st) : -1);
	itest_ok(log_has(" error: ", "flush", "No space left on device"),
		 "SIGTERM: the failed final flush is logged as an error naming ENOSPC", "no such line in %s", d.log);
}

static void phase2(uint8_t *buf)
{
	struct iscsi_context *s;
	struct itest_result r = { 0 };
	unsigned half = PHASE2_CHUNKS / 2, zeros, other, good, acked;
	char bad[200];
	int st;

	empty_small();
	if (itest_daemon_start(&d) != 0) {
		itest_ok(false, "phase 2: sbcemud starts on a fresh backing file", "see the log above (%s)", d.log);
		return;
	}
	s = session();
	if (!s)
		return;
	for (acked = 0; acked < PHASE2_CHUNKS; acked++) {
		write_chunk(s, acked, buf, &r);
		if (!r.transport_ok || r.status != 0)
			break;
		itest_result_free(&r);
	}
	itest_ok(acked == PHASE2_CHUNKS, "phase 2: 12 WRITE(16)s of 1 MiB cached on the 8 MiB file system",
		 "write %u: %s", acked, itest_result_str(&r));
	itest_result_free(&r);
	sync_cache(s, "phase 2: SYNCHRONIZE CACHE(10) with 12 MiB cached on 8 MiB -> 07/27/07 (SBC-4 5.26)",
		   space_allocation_failed);
	unmap_chunks(s, 0, half, "phase 2: UNMAP of the first 6 MiB -> GOOD while the cache cannot be written back");
	sync_cache(s,
		   "phase 2: once the UNMAP freed space, SYNCHRONIZE CACHE(10) writes the cache back -> GOOD "
		   "(SBC-4 5.26)",
		   EXPECT_GOOD);
	itest_ok(log_has(" warn: ", "the volatile write cache wrote back all it held", ""),
		 "phase 2: the end of the episode is logged (flushes succeed again)", "no such line in %s", d.log);
	good = chunks_read_back(s, half, acked, &zeros, &other, bad, sizeof(bad));
	itest_ok(good == acked - half, "phase 2: the chunks not unmapped read back after the write-back",
		 "%u read zeros, %u other data; first: %s", zeros, other, bad);
	itest_close(s);

	st = itest_daemon_stop(&d, SIGTERM);
	itest_ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		 "phase 2: SIGTERM with nothing left that cannot be written -> exit 0", "wait status 0x%x",
		 (unsigned)st);
	if (itest_daemon_start(&d) != 0) {
		itest_ok(false, "phase 2: sbcemud restarts", "see the log above (%s)", d.log);
		return;
	}
	s = session();
	if (!s)
		return;
	good = chunks_read_back(s, half, acked, &zeros, &other, bad, sizeof(bad));
	itest_ok(good == acked - half, "phase 2: after a restart the written-back chunks are on the medium",
		 "%u read zeros, %u other data; first: %s", zeros, other, bad);
	itest_close(s);
}

/*
 * Phase 3, without the cache: a WRITE past the free space fails at once
 * with 07/27/07 (nothing is acknowledged that is not written), and the
 * daemon logs it as a backing-store error with the LU's count.  Before
 * (4264db2) the sense was the same but nothing was logged.
 */
static void phase3(uint8_t *buf)
{
	static const char uncached[] = "[target \"" ITEST_TARGET "\"]\n"
				       "[lun \"" ITEST_TARGET "\" 0]\n"
				       "path = @DIR@/small/lun0.img\n"
				       "size = 128M\n"
				       "logical_block_size = 512\n"
				       "thin_provisioning = true\n";
	struct itest_result r = { 0 };
	struct iscsi_context *s;
	unsigned acked;
	struct stat st;

	if (d.pid > 0)
		itest_daemon_stop(&d, SIGTERM);
	log_from = stat(d.log, &st) == 0 ? (long)st.st_size : 0;
	empty_small();
	if (itest_daemon_write_config(&d, uncached) != 0 || itest_daemon_start(&d) != 0) {
		itest_ok(false, "phase 3: sbcemud starts without the write cache", "see the log above (%s)", d.log);
		return;
	}
	s = session();
	if (!s)
		return;
	for (acked = 0; acked < 2 * FS_MIB; acked++) {
		write_chunk(s, acked, buf, &r);
		if (!r.transport_ok || r.status != 0)
			break;
		itest_result_free(&r);
	}
	itest_ok(acked <= FS_MIB && itest_result_matches(&r, space_allocation_failed),
		 "phase 3, no write cache: the WRITE(16) that finds the file system full -> 07/27/07 (SBC-4 4.7.3)",
		 "%u MiB acknowledged, then %s", acked, itest_result_str(&r));
	itest_result_free(&r);
	itest_close(s);
	itest_ok(log_has(" error: ", "a command failed because the backing store did: No space left on device",
			 "1 no space"),
		 "phase 3: the failure is logged as an error naming the LUN, ENOSPC and the LU's count",
		 "no such line in %s", d.log);
	itest_daemon_stop(&d, SIGTERM);
}

int main(int argc, char **argv)
{
	uint8_t *buf;
	char opts[32];

	itest_init(argc, argv, "test_cache_full_disk: a volatile write cache whose write-backs run out of space");
	if (geteuid() != 0) {
		printf("1..0 # SKIP needs root: the backing file goes on a small tmpfs mounted for the test\n");
		return 77;
	}
	itest_daemon_init(&d, "cache-full-disk");
	snprintf(mnt, sizeof(mnt), "%s/small", d.dir);
	snprintf(opts, sizeof(opts), "size=%um,mode=0700", FS_MIB);
	if (mkdir(mnt, 0700) != 0 || mount("tmpfs", mnt, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0) {
		printf("1..0 # SKIP cannot mount a %u MiB tmpfs on %s: %s\n", FS_MIB, mnt, strerror(errno));
		itest_daemon_cleanup(&d);
		return 77;
	}
	mounted = true;
	atexit(unmount_small); /* runs before the framework removes the scratch directory */
	if (itest_daemon_write_config(&d, config) != 0 || itest_daemon_start(&d) != 0) {
		itest_ok(false, "sbcemud starts with its backing file on the tmpfs", "see the log above (%s)", d.log);
		return itest_finish();
	}
	itest_note("sbcemud pid %d on 127.0.0.1:%d, scratch %s, %u MiB tmpfs on %s", (int)d.pid, d.port, d.dir, FS_MIB,
		   mnt);
	buf = malloc(MIB);
	if (!buf)
		return 1;
	phase1(buf);
	phase2(buf);
	phase3(buf);
	free(buf);
	if (d.pid > 0)
		itest_daemon_stop(&d, SIGTERM);
	unmount_small();
	itest_daemon_cleanup(&d);
	return itest_finish();
}
