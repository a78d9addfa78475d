/*
 * WRITE SCATTERED at the scale filesystems ask for (docs/atomic.md,
 * "Scale"): one WRITE SCATTERED(16) with 65 535 LBA range descriptors (the
 * CDB's limit) and 1 GiB of data, atomic as a whole (write_scattered_atomic),
 * must work with sbcemud never holding the payload: its peak resident set
 * (VmHWM) stays far below the payload.  Time and memory are printed.  Then
 * the streamed intent-log record is tested across crashes: a kill -9 in the
 * middle of the stream leaves every range wholly old, one after the record
 * is durable leaves every range wholly new; and a streamed command without
 * write_scattered_atomic (written in place as it arrives) lands too.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"

#define BS 512u
#define RANGES 65535u
#define GAP 8u /* blocks left untouched between ranges */

static const char config_atomic[] =
	"[iscsi]\n"
	"max_burst_length = 1048576\n"
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\n"
	"size = 2G\n"
	"logical_block_size = 512\n"
	"max_transfer_length = 0\n"
	"write_scattered = true\n"
	"write_scattered_atomic = true\n"
	"max_scattered_lba_range_descriptors = 0\n"
	"[lun \"" ITEST_TARGET "\" 1]\n"
	"path = @DIR@/lun1.img\n"
	"size = 512M\n"
	"logical_block_size = 512\n"
	"max_transfer_length = 0\n"
	"write_scattered = true\n"
	"[lun \"" ITEST_TARGET "\" 2]\n"
	"path = @DIR@/lun2.img\n"
	"size = 512M\n"
	"logical_block_size = 512\n"
	"max_transfer_length = 0\n"
	"write_scattered = true\n"
	"write_scattered_atomic = true\n"
	"volatile_write_cache = true\n";

static struct iscsi_context *s;

struct plan {
	uint32_t count;
	uint64_t lba[RANGES];
	uint32_t n[RANGES];
	uint32_t lbdof, btl;
};

/* count ranges of `each` blocks (the last one takes the rest of total), GAP blocks apart from LBA base. */
static void make_plan(struct plan *p, uint32_t count, uint32_t total, uint64_t base)
{
	uint32_t each = total / count;

	p->count = count;
	p->btl = total;
	p->lbdof = (32 + count * 32 + BS - 1) / BS;
	for (uint32_t i = 0; i < count; i++) {
		p->lba[i] = base + (uint64_t)i * (each + GAP);
		p->n[i] = i + 1 == count ? total - each * (count - 1) : each;
	}
}

/* The Data-Out: header, descriptors, then each range's data (pattern seed + range index). */
static uint8_t *make_data_out(const struct plan *p, uint32_t seed, size_t *len)
{
	uint8_t *buf;
	size_t pos;

	*len = ((size_t)p->lbdof + p->btl) * BS;
	buf = calloc(1, *len);
	if (!buf)
		return NULL;
	for (uint32_t i = 0; i < p->count; i++) {
		uint8_t *d = buf + 32 + (size_t)i * 32;

		itest_put_be64(d, p->lba[i]);
		itest_put_be32(d + 8, p->n[i]);
	}
	pos = (size_t)p->lbdof * BS;
	for (uint32_t i = 0; i < p->count; i++) {
		itest_pattern(buf + pos, (size_t)p->n[i] * BS, seed + i);
		pos += (size_t)p->n[i] * BS;
	}
	return buf;
}

static void ws16(uint8_t *c, const struct plan *p)
{
	memset(c, 0, 16);
	c[0] = 0x9f;
	c[1] = 0x12;
	itest_put_be16(c + 4, (uint16_t)p->lbdof);
	itest_put_be16(c + 8, (uint16_t)p->count);
	itest_put_be32(c + 10, p->btl);
}

/* VmHWM of the daemon in KiB, or -1. */
static long peak_rss_kib(const struct itest_daemon *d)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)d->pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* Counts ranges (every step-th, and the last) holding wholly the new data, wholly zeros, or a mix. */
static void classify(int lun, const struct plan *p, uint32_t seed, uint32_t step, unsigned *whole_new,
		     unsigned *whole_old, unsigned *mixed)
{
	uint32_t max = 0;
	uint8_t *got, *want;

	for (uint32_t i = 0; i < p->count; i++)
		max = p->n[i] > max ? p->n[i] : max;
	got = malloc((size_t)max * BS);
	want = malloc((size_t)max * BS);
	*whole_new = *whole_old = *mixed = 0;
	for (uint32_t i = 0; i < p->count; i = i + 1 == p->count ? p->count : i + step < p->count ? i + step : p->count - 1) {
		size_t len = (size_t)p->n[i] * BS;
		bool is_new = true, is_old = true;

		if (!itest_read16(s, lun, p->lba[i], got, p->n[i], BS, "READ(16) of a range")) {
			(*mixed)++;
			continue;
		}
		itest_pattern(want, len, seed + i);
		for (size_t b = 0; b < len; b += BS) {
			bool nb = !memcmp(got + b, want + b, BS);
			bool ob = true;

			for (size_t k = 0; k < BS && ob; k++)
				ob = got[b + k] == 0;
			is_new = is_new && nb;
			is_old = is_old && ob;
		}
		if (is_new)
			(*whole_new)++;
		else if (is_old)
			(*whole_old)++;
		else
			(*mixed)++;
	}
	free(got);
	free(want);
}

static void reconnect(struct itest_daemon *d)
{
	if (s)
		itest_close(s);
	s = itest_session(d, ITEST_INITIATOR_1, 0);
	if (s) {
		iscsi_set_timeout(s, 600);
		itest_clear_ua(s, 0);
		itest_clear_ua(s, 1);
		itest_clear_ua(s, 2);
	}
}

/* SIGKILL (a crash, or a power cut for a volatile cache), restart, log in again: false if that failed. */
static bool kill_and_reconnect(struct itest_daemon *d)
{
	itest_close(s);
	s = NULL;
	itest_daemon_stop(d, SIGKILL);
	itest_daemon_start(d);
	reconnect(d);
	return s != NULL;
}

static void test_gigabyte(struct itest_daemon *d)
{
	static struct plan p;
	struct itest_result r;
	uint8_t c[16];
	size_t len;
	uint8_t *buf;
	uint64_t t0, ms;
	long before, after;
	unsigned n_new, n_old, n_mixed;

	make_plan(&p, RANGES, (1u << 30) / BS, 0);
	buf = make_data_out(&p, 1000, &len);
	if (!itest_ok(buf != NULL, "1 GiB Data-Out built", NULL))
		return;
	before = peak_rss_kib(d);
	ws16(c, &p);
	t0 = itest_now_ms();
	itest_cmd(s, 0, c, 16, ITEST_OUT, buf, len, 0, &r);
	ms = itest_now_ms() - t0;
	after = peak_rss_kib(d);
	free(buf);
	itest_note("WRITE SCATTERED(16), %u ranges, %u blocks (%zu bytes of Data-Out), write_scattered_atomic: %s in "
		   "%llu ms (%.0f MB/s); sbcemud VmHWM %ld KiB before, %ld KiB after",
		   p.count, p.btl, len, itest_result_str(&r), (unsigned long long)ms, len / 1e3 / (ms ? ms : 1), before,
		   after);
	itest_ok(r.status == 0, "WRITE SCATTERED(16) with 65535 LBA range descriptors and 1 GiB, atomic -> GOOD", "%s",
		 itest_result_str(&r));
	itest_ok(after > 0 && after < 256 * 1024,
		 "sbcemud's peak resident set stays under 256 MiB for a 1 GiB payload (streamed Data-Out)", "VmHWM %ld KiB",
		 after);
	classify(0, &p, 1000, 97, &n_new, &n_old, &n_mixed);
	itest_ok(n_new > 600 && n_old == 0 && n_mixed == 0, "every range checked (every 97th and the last) holds its data",
		 "%u new, %u old, %u mixed", n_new, n_old, n_mixed);
}

/* A kill -9 at a point of the streamed record (SBCEMU_JOURNAL_CRASH), then a restart. */
static void test_crash(struct itest_daemon *d, const char *point, bool want_new, uint64_t base, uint32_t seed)
{
	static struct plan p;
	struct itest_result r;
	uint8_t c[16];
	size_t len;
	uint8_t *buf;
	unsigned n_new, n_old, n_mixed;
	char name[200];

	make_plan(&p, 4096, (96u << 20) / BS, base);
	buf = make_data_out(&p, seed, &len);
	itest_close(s);
	s = NULL;
	itest_daemon_stop(d, SIGTERM);
	setenv("SBCEMU_JOURNAL_CRASH", point, 1);
	itest_daemon_start(d);
	unsetenv("SBCEMU_JOURNAL_CRASH");
	reconnect(d);
	if (!s || !buf) {
		free(buf);
		return;
	}
	ws16(c, &p);
	itest_cmd(s, 0, c, 16, ITEST_OUT, buf, len, 0, &r);
	free(buf);
	snprintf(name, sizeof(name), "crash %s: the daemon died during the 96 MiB streamed WRITE SCATTERED", point);
	itest_ok(itest_daemon_exits_within(d, 5000), name, "%s", itest_result_str(&r));
	if (!kill_and_reconnect(d))
		return;
	classify(0, &p, seed, 1, &n_new, &n_old, &n_mixed);
	snprintf(name, sizeof(name), "crash %s, restart: all 4096 ranges wholly %s (intent log %s)", point,
		 want_new ? "new" : "old", want_new ? "replayed" : "discarded");
	itest_ok(n_mixed == 0 && (want_new ? n_old == 0 && n_new == p.count : n_new == 0 && n_old == p.count), name,
		 "%u new, %u old, %u mixed", n_new, n_old, n_mixed);
}

static void test_not_atomic(void)
{
	static struct plan p;
	struct itest_result r;
	uint8_t c[16];
	size_t len;
	uint8_t *buf;
	unsigned n_new, n_old, n_mixed;

	make_plan(&p, 1000, (80u << 20) / BS, 0);
	buf = make_data_out(&p, 7, &len);
	ws16(c, &p);
	itest_cmd(s, 1, c, 16, ITEST_OUT, buf, len, 0, &r);
	free(buf);
	itest_ok(r.status == 0, "WRITE SCATTERED(16) of 80 MiB, not atomic (streamed, written as it arrives) -> GOOD", "%s",
		 itest_result_str(&r));
	classify(1, &p, 7, 1, &n_new, &n_old, &n_mixed);
	itest_ok(n_new == p.count, "... all 1000 ranges hold their data", "%u new, %u old, %u mixed", n_new, n_old,
		 n_mixed);
}

/*
 * LUN 2 has a volatile write cache (docs/atomic.md, power-loss emulation):
 * a 96 MiB atomic WRITE SCATTERED streams past the cache too (the daemon's
 * peak memory does not grow by the payload), lands over cached writes it
 * covers, and survives a power cut (SIGKILL) that loses an unflushed write
 * beside it.
 */
static void test_volatile_cache(struct itest_daemon *d)
{
	static struct plan p;
	struct itest_result r;
	uint8_t c[16], blocks[8 * BS], got[8 * BS];
	size_t len;
	uint8_t *buf;
	long before, after;
	unsigned n_new, n_old, n_mixed;
	uint64_t beside;

	make_plan(&p, 4096, (96u << 20) / BS, 0);
	beside = p.lba[1] - GAP; /* in the gap after range 0: no range covers it */
	itest_pattern(blocks, sizeof(blocks), 901);
	itest_write16(s, 2, p.lba[0] + 4, blocks, 8, BS, false, "WRITE(16) into range 0, cached (no FUA)");
	itest_write16(s, 2, beside, blocks, 8, BS, false, "WRITE(16) beside the ranges, cached (no FUA)");
	buf = make_data_out(&p, 80, &len);
	if (!buf)
		return;
	before = peak_rss_kib(d);
	ws16(c, &p);
	itest_cmd(s, 2, c, 16, ITEST_OUT, buf, len, 0, &r);
	after = peak_rss_kib(d);
	free(buf);
	itest_ok(r.status == 0, "volatile cache LU: 96 MiB atomic WRITE SCATTERED(16), 4096 ranges -> GOOD", "%s",
		 itest_result_str(&r));
	itest_ok(before > 0 && after - before < 48 * 1024,
		 "... streamed past the cache: sbcemud's peak resident set grows by less than 48 MiB", "VmHWM %ld -> %ld KiB",
		 before, after);
	classify(2, &p, 80, 1, &n_new, &n_old, &n_mixed);
	itest_ok(n_new == p.count, "... every range reads its new data (the cached write inside range 0 overwritten)",
		 "%u new, %u old, %u mixed", n_new, n_old, n_mixed);
	itest_ok(itest_read16(s, 2, beside, got, 8, BS, "READ(16)") && memcmp(got, blocks, sizeof(got)) == 0,
		 "... the cached write beside the ranges still reads back", NULL);
	if (!kill_and_reconnect(d))
		return;
	classify(2, &p, 80, 1, &n_new, &n_old, &n_mixed);
	itest_ok(n_new == p.count, "power cut (SIGKILL), restart: every range of the atomic write is there",
		 "%u new, %u old, %u mixed", n_new, n_old, n_mixed);
	memset(blocks, 0, sizeof(blocks));
	itest_ok(itest_read16(s, 2, beside, got, 8, BS, "READ(16)") && memcmp(got, blocks, sizeof(got)) == 0,
		 "... and the unflushed write beside them is lost (zeros), as the power cut says", NULL);
}

int main(int argc, char **argv)
{
	struct itest_daemon d;

	itest_init(argc, argv, "test_scattered_scale: WRITE SCATTERED with 65535 ranges and 1 GiB, streamed");
	itest_daemon_up(&d, "scattered-scale", config_atomic);
	reconnect(&d);
	if (!s)
		return itest_finish();
	test_gigabyte(&d);
	test_not_atomic();
	test_crash(&d, "mid-record", false, 3000000, 50);
	test_crash(&d, "after-record", true, 3000000, 60);
	test_crash(&d, "mid-apply", true, 3000000, 70);
	if (s)
		test_volatile_cache(&d);
	if (s)
		itest_close(s);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
