/*
 * WRITE ATOMIC(16) across crashes (SBC-4 4.29; docs/atomic.md): the daemon
 * is killed in the middle of atomic writes and restarted, and every range is
 * either wholly old or wholly new, and wholly new when the write had been
 * acknowledged.
 *
 * 1. Crash points inside the intent log (SBCEMU_JOURNAL_CRASH, journal.h):
 *    "mid-record" (record not durable: the old data stands), "after-record"
 *    (record durable, nothing in place: replayed) and "mid-apply" (half the
 *    data in place: replayed to the whole).
 * 2. Random kills: four sessions issue WRITE ATOMIC(16)s of 64 blocks and
 *    atomic WRITE SCATTERED(16)s of three ranges, each block carrying the
 *    write's sequence number, while the test kills the daemon with SIGKILL
 *    at a random moment; after the restart every range holds one sequence
 *    number, at least the last one acknowledged.  ITEST_ATOMIC_KILLS sets
 *    the number of rounds (default 20).
 * 3. WRITE SCATTERED with write_scattered_atomic (non-standard): a crash in
 *    the middle leaves all of its ranges old or all new.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

#define BS 512u
#define RANGE_LBA 2048u
#define RANGE_BLOCKS 64u

static const char config[] =
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\n"
	"size = 16M\n"
	"logical_block_size = 512\n"
	"max_atomic_transfer_length = 64\n"
	"write_scattered = true\n"
	"write_scattered_atomic = true\n";

static void fill_seq(uint8_t *buf, uint32_t seq)
{
	for (size_t off = 0; off < RANGE_BLOCKS * BS; off += 4)
		itest_put_be32(buf + off, seq);
}

/* The sequence number every block holds, or -1 if they differ (a torn range). */
static long range_seq(struct iscsi_context *s, const char *name, uint64_t base)
{
	uint8_t *buf = malloc(RANGE_BLOCKS * BS);
	uint32_t first;
	long seq;

	if (!itest_read16(s, 0, RANGE_LBA + base, buf, RANGE_BLOCKS, BS, name)) {
		free(buf);
		return -2;
	}
	first = itest_get_be32(buf);
	seq = first;
	for (size_t off = 0; off < RANGE_BLOCKS * BS; off += 4)
		if (itest_get_be32(buf + off) != first)
			seq = -1;
	free(buf);
	return seq;
}

static int write_atomic(struct iscsi_context *s, uint32_t seq, uint64_t base)
{
	uint8_t cdb[16] = { 0x9c }, *buf = malloc(RANGE_BLOCKS * BS);
	struct itest_result r;
	int status;

	fill_seq(buf, seq);
	itest_put_be64(cdb + 2, RANGE_LBA + base);
	itest_put_be16(cdb + 12, RANGE_BLOCKS);
	itest_cmd(s, 0, cdb, 16, ITEST_OUT, buf, RANGE_BLOCKS * BS, 0, &r);
	status = r.transport_ok ? r.status : -1;
	itest_result_free(&r);
	free(buf);
	return status;
}

static struct iscsi_context *connect_lu(struct itest_daemon *d)
{
	struct iscsi_context *s = itest_session(d, ITEST_INITIATOR_1, 0);

	if (s)
		itest_clear_ua(s, 0);
	return s;
}

static int log_count(const struct itest_daemon *d, const char *what)
{
	char line[1024];
	int n = 0;
	FILE *f = fopen(d->log, "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, what))
			n++;
	if (f)
		fclose(f);
	return n;
}

static void crash_point(struct itest_daemon *d, const char *point, bool expect_new, const char *log_word)
{
	struct iscsi_context *s = connect_lu(d);
	uint8_t *buf = malloc(RANGE_BLOCKS * BS);
	char name[256];
	long seq;
	int st, before;

	fill_seq(buf, 1);
	itest_write16(s, 0, RANGE_LBA, buf, RANGE_BLOCKS, BS, true, "WRITE(16) FUA of the old data");
	free(buf);
	itest_close(s);
	itest_daemon_stop(d, SIGTERM);

	setenv("SBCEMU_JOURNAL_CRASH", point, 1);
	itest_daemon_start(d);
	unsetenv("SBCEMU_JOURNAL_CRASH");
	s = connect_lu(d);
	st = s ? write_atomic(s, 2, 0) : 0;
	snprintf(name, sizeof(name), "crash %s: the WRITE ATOMIC(16) gets no status (the daemon died)", point);
	itest_ok(st == -1, name, "status %d", st);
	if (s)
		itest_close(s);
	itest_daemon_stop(d, SIGKILL);

	before = log_count(d, log_word);
	itest_daemon_start(d);
	s = connect_lu(d);
	seq = s ? range_seq(s, "READ(16) after the restart", 0) : -2;
	snprintf(name, sizeof(name), "crash %s: after the restart the range is wholly %s", point,
		 expect_new ? "new (the journal record is replayed)" : "old (the torn record is discarded)");
	itest_ok(seq == (expect_new ? 2 : 1), name, "range holds %ld (-1: torn)", seq);
	snprintf(name, sizeof(name), "crash %s: the daemon log %s \"%s\"", point, expect_new ? "says" : "does not say",
		 log_word);
	itest_ok(log_count(d, log_word) == before + (expect_new ? 1 : 0), name, NULL);
	if (s)
		itest_close(s);
}

/* ---- WRITE SCATTERED as one atomic unit (write_scattered_atomic) ---- */

static const struct {
	uint64_t lba;
	uint32_t n;
} scat[3] = { { 4096, 8 }, { 6000, 16 }, { 8000, 8 } };

/* WRITE SCATTERED(16) of the three ranges, every block holding seq. */
static int write_scattered(struct iscsi_context *s, uint32_t seq, uint64_t base)
{
	uint8_t cdb[16] = { 0x9f, 0x12 }, *buf = calloc(1 + 32, BS);
	struct itest_result r;
	int status;

	for (unsigned i = 0; i < 3; i++) {
		itest_put_be64(buf + 32 + 32 * i, scat[i].lba + base);
		itest_put_be32(buf + 32 + 32 * i + 8, scat[i].n);
	}
	for (size_t off = BS; off < 33 * BS; off += 4)
		itest_put_be32(buf + off, seq);
	itest_put_be16(cdb + 4, 1);   /* LOGICAL BLOCK DATA OFFSET */
	itest_put_be16(cdb + 8, 3);   /* NUMBER OF LBA RANGE DESCRIPTORS */
	itest_put_be32(cdb + 10, 32); /* BUFFER TRANSFER LENGTH */
	itest_cmd(s, 0, cdb, 16, ITEST_OUT, buf, 33 * BS, 0, &r);
	status = r.transport_ok ? r.status : -1;
	itest_result_free(&r);
	free(buf);
	return status;
}

/* The sequence number all three ranges hold, or -1 if they differ anywhere. */
static long scattered_seq(struct iscsi_context *s, uint64_t base)
{
	long seq = -2;

	for (unsigned i = 0; i < 3; i++) {
		uint8_t *buf = malloc((size_t)scat[i].n * BS);

		if (!itest_read16(s, 0, scat[i].lba + base, buf, scat[i].n, BS, "READ(16) of a scattered range")) {
			free(buf);
			return -2;
		}
		for (size_t off = 0; off < (size_t)scat[i].n * BS; off += 4) {
			if (seq == -2)
				seq = itest_get_be32(buf + off);
			else if (itest_get_be32(buf + off) != (uint32_t)seq)
				seq = -1;
		}
		free(buf);
	}
	return seq;
}

static void scattered_crash(struct itest_daemon *d, const char *point, bool expect_new)
{
	struct iscsi_context *s = connect_lu(d);
	char name[256];
	long seq;
	int st;

	st = write_scattered(s, 7, 0);
	itest_ok(st == 0, "WRITE SCATTERED(16) of 3 ranges (write_scattered_atomic) -> GOOD", "status %d", st);
	itest_close(s);
	itest_daemon_stop(d, SIGTERM);
	setenv("SBCEMU_JOURNAL_CRASH", point, 1);
	itest_daemon_start(d);
	unsetenv("SBCEMU_JOURNAL_CRASH");
	s = connect_lu(d);
	st = s ? write_scattered(s, 8, 0) : 0;
	if (s)
		itest_close(s);
	itest_daemon_stop(d, SIGKILL);
	itest_daemon_start(d);
	s = connect_lu(d);
	seq = s ? scattered_seq(s, 0) : -2;
	snprintf(name, sizeof(name), "WRITE SCATTERED as one atomic unit, crash %s: all 3 ranges wholly %s", point,
		 expect_new ? "new" : "old");
	itest_ok(st == -1 && seq == (expect_new ? 8 : 7), name, "status %d, ranges hold %ld (-1: mixed)", st, seq);
	if (s)
		itest_close(s);
}

/* ---- random kills ---- */

#define WRITERS 4
#define SECOND_SET 16384u /* writers 2 and 3 use the same ranges this many blocks further */

struct writer {
	struct itest_daemon *d;
	bool scattered;        /* WRITE SCATTERED (write_scattered_atomic) instead of WRITE ATOMIC */
	uint64_t base;         /* added to every LBA of the writer's ranges */
	uint32_t next_seq;
	uint32_t last_acked;   /* 0: none yet */
	volatile int stop;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct iscsi_context *s = itest_session(w->d, w->scattered ? ITEST_INITIATOR_2 : ITEST_INITIATOR_1, 0);

	if (s)
		itest_clear_ua(s, 0);
	while (s && !w->stop) {
		uint32_t seq = w->next_seq++;

		if ((w->scattered ? write_scattered(s, seq, w->base) : write_atomic(s, seq, w->base)) != 0)
			break;
		__atomic_store_n(&w->last_acked, seq, __ATOMIC_SEQ_CST);
	}
	if (s)
		itest_close(s);
	return NULL;
}

/*
 * Four sessions at once, two issuing WRITE ATOMIC(16)s to a range each and two
 * WRITE SCATTERED(16)s (one atomic unit each) to three ranges each, and a
 * SIGKILL at a random moment; after the restart every range holds a single
 * sequence number, at least the last one acknowledged on its session.
 */
static void random_kills(struct itest_daemon *d, int rounds)
{
	uint32_t seq = 100;
	int torn = 0, lost = 0, errors = 0, writes = 0;

	for (int i = 0; i < rounds; i++) {
		struct writer w[WRITERS];
		pthread_t t[WRITERS];
		struct iscsi_context *s;
		long got[WRITERS];
		uint32_t next = 0;

		for (int k = 0; k < WRITERS; k++)
			w[k] = (struct writer){ .d = d, .scattered = k % 2, .base = k >= 2 ? SECOND_SET : 0, .next_seq = seq };
		for (int k = 0; k < WRITERS; k++)
			pthread_create(&t[k], NULL, writer_main, &w[k]);
		usleep(50000 + (useconds_t)(rand() % 250000));
		itest_daemon_stop(d, SIGKILL);
		for (int k = 0; k < WRITERS; k++) {
			w[k].stop = 1;
			pthread_join(t[k], NULL);
			writes += (int)(w[k].next_seq - seq);
		}
		if (itest_daemon_start(d) != 0 || !(s = connect_lu(d))) {
			errors++;
			break;
		}
		for (int k = 0; k < WRITERS; k++)
			got[k] = w[k].scattered ? scattered_seq(s, w[k].base) : range_seq(s, "READ(16) after a kill", w[k].base);
		for (int k = 0; k < WRITERS; k++) {
			if (got[k] < 0)
				torn++;
			else if (w[k].last_acked && (uint32_t)got[k] < w[k].last_acked)
				lost++;
		}
		itest_close(s);
		for (int k = 0; k < WRITERS; k++)
			next = w[k].next_seq > next ? w[k].next_seq : next;
		seq = next + 1;
	}
	itest_note("%d kill rounds, %d atomic and scattered writes issued from %d sessions", rounds, writes, WRITERS);
	itest_ok(errors == 0, "random kills: the daemon restarts after every SIGKILL", "%d failures", errors);
	itest_ok(torn == 0,
		 "random kills: no WRITE ATOMIC range and no atomic WRITE SCATTERED is ever torn (wholly old or new)",
		 "%d torn in %d rounds", torn, rounds);
	itest_ok(lost == 0, "random kills: an acknowledged atomic write is never lost", "%d lost", lost);
}

int main(int argc, char **argv)
{
	struct itest_daemon d;
	const char *env = getenv("ITEST_ATOMIC_KILLS");
	int rounds = env ? atoi(env) : 20;

	itest_init(argc, argv, "test_atomic_crash: WRITE ATOMIC(16) across crashes");
	srand((unsigned)getpid());
	itest_daemon_up(&d, "atomic-crash", config);

	crash_point(&d, "mid-record", false, "replayed a journal record");
	crash_point(&d, "after-record", true, "replayed a journal record");
	crash_point(&d, "mid-apply", true, "replayed a journal record");
	scattered_crash(&d, "mid-record", false);
	scattered_crash(&d, "mid-apply", true);
	random_kills(&d, rounds);

	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
