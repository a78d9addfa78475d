/*
 * bench_lba_locks: how much atomic writes on one half of a logical unit
 * stall reads on the other half.  Two iSCSI sessions (two initiator names)
 * to the same LU, driven asynchronously from one poll loop:
 *
 *   session R keeps QD_READ READ(16)s of 8 blocks outstanding at random LBAs
 *             in the first half of the LU;
 *   session W keeps QD_WRITE commands outstanding in the second half,
 *             alternating WRITE ATOMIC(16) of 128 blocks (ATOMIC BOUNDARY 0)
 *             and COMPARE AND WRITE of 1 block.
 *
 * With LBA-range locks the two halves never conflict and reads should run at
 * full speed; with an LU-wide lock (`lba_locks = lu`) every atomic write and
 * COMPARE AND WRITE runs alone and the reads queue behind them.
 *
 * COMPARE AND WRITE targets a small fixed set of LBAs at the start of the
 * second half (never touched by the WRITE ATOMICs) whose content the program
 * tracks: each block holds a pattern of (LBA, generation); the set is written
 * with plain WRITE(16) at start, at most one COMPARE AND WRITE per LBA is in
 * flight, and a successful one moves that LBA to the next generation.  A
 * failed one (MISCOMPARE or other) makes the program rewrite the block it
 * expected before that LBA is used again.
 *
 * After SECONDS it stops issuing, drains what is in flight, and prints one
 * line on stdout:
 *
 *   read_iops=<n> read_p99_us=<n> write_ops=<n> caw_fail=<n> errors=<n>
 *
 * read_iops and read_p99_us cover the reads completed within the SECONDS
 * window; write_ops is the number of WRITE ATOMIC and COMPARE AND WRITE
 * commands completed with GOOD in the window; caw_fail counts COMPARE AND
 * WRITEs that ended in MISCOMPARE; errors counts every command that did not
 * end in GOOD (MISCOMPAREs included), for the whole run.  The first few
 * errors are described on stderr, with a human-readable summary.
 *
 * Exit status: 0 when the run completed (whatever the error count), 2 for
 * bad arguments, 1 when setup failed (login, READ CAPACITY(16), an LU
 * without WRITE ATOMIC or COMPARE AND WRITE, too small) or a session was
 * lost during the run.
 *
 * scripts/bench-lba-locks.sh starts sbcemud and runs this in both lock
 * modes; not a test (ctest does not run it).
 *
 *   bench_lba_locks PORTAL TARGET_IQN LUN SECONDS QD_READ QD_WRITE
 *   e.g. bench_lba_locks 127.0.0.1:3260 iqn.2026-12.org.sbcemu:default 0 5 16 4
 */
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#define READ_BLOCKS 8
#define ATOMIC_BLOCKS 128
#define CAW_MIN_LBAS 64
#define MAX_QD 1024
#define ERRORS_SHOWN 5
#define DRAIN_SECONDS 30.0

#define INITIATOR_R "iqn.2026-12.org.sbcemu.bench:lba-locks-reader"
#define INITIATOR_W "iqn.2026-12.org.sbcemu.bench:lba-locks-writer"

enum wkind { W_ATOMIC, W_CAW, W_RESYNC };

struct bench;

struct rslot {
	struct bench *b;
	uint8_t *buf;
	struct scsi_iovec iov;
	uint64_t lba;
	double t0;
};

struct wslot {
	struct bench *b;
	uint8_t *buf;
	struct scsi_iovec iov;
	enum wkind kind;
	uint64_t lba;
	uint32_t caw_idx;
};

struct bench {
	struct iscsi_context *r, *w;
	int lun;
	uint32_t bs;
	uint64_t nblocks, half;
	/* COMPARE AND WRITE LBAs: caw_base + [0, ncaw); WRITE ATOMIC starts in [at_lo, at_hi]. */
	uint64_t caw_base, at_lo, at_hi;
	uint32_t ncaw;
	uint64_t *caw_gen;
	uint8_t *caw_busy;
	uint64_t rng;
	int running, lost;
	double t_start, t_end;
	unsigned inflight_r, inflight_w;
	uint64_t wseq;
	/* results */
	uint64_t reads, writes, atomics, caws, caw_fail, errors;
	uint32_t *lat_us;
	size_t nlat, lat_cap;
};

/* The content of a COMPARE AND WRITE block: a function of its LBA and generation. */
static void fill_block(uint8_t *p, uint32_t bs, uint64_t lba, uint64_t gen)
{
	for (uint32_t off = 0; off < bs; off += 8)
		put_be64(p + off, (lba * 0x9E3779B97F4A7C15ULL) ^ (gen << 20) ^ off);
}

static const char *status_name(int status)
{
	switch (status) {
	case SCSI_STATUS_GOOD: return "GOOD";
	case SCSI_STATUS_CHECK_CONDITION: return "CHECK CONDITION";
	case SCSI_STATUS_CONDITION_MET: return "CONDITION MET";
	case SCSI_STATUS_BUSY: return "BUSY";
	case SCSI_STATUS_RESERVATION_CONFLICT: return "RESERVATION CONFLICT";
	case SCSI_STATUS_TASK_SET_FULL: return "TASK SET FULL";
	case SCSI_STATUS_ACA_ACTIVE: return "ACA ACTIVE";
	case SCSI_STATUS_TASK_ABORTED: return "TASK ABORTED";
	case SCSI_STATUS_CANCELLED: return "cancelled (libiscsi)";
	case SCSI_STATUS_ERROR: return "transport error (libiscsi)";
	case SCSI_STATUS_TIMEOUT: return "timeout (libiscsi)";
	default: return "unknown status";
	}
}

static int is_miscompare(int status, const struct scsi_task *task)
{
	return status == SCSI_STATUS_CHECK_CONDITION && task && task->sense.key == SCSI_SENSE_MISCOMPARE;
}

/* Counts a non-GOOD completion and describes the first few on stderr. */
static void record_error(struct bench *b, struct iscsi_context *ctx, const char *what, uint64_t lba, int status,
			 const struct scsi_task *task)
{
	b->errors++;
	if (b->errors > ERRORS_SHOWN)
		return;
	if (status == SCSI_STATUS_CHECK_CONDITION && task)
		fprintf(stderr,
			"bench_lba_locks: %s lba %" PRIu64 ": CHECK CONDITION, sense key 0x%x (%s) ASC 0x%02x ASCQ 0x%02x (%s)\n",
			what, lba, (unsigned)task->sense.key, scsi_sense_key_str(task->sense.key),
			(unsigned)(task->sense.ascq >> 8) & 0xff, (unsigned)task->sense.ascq & 0xff,
			scsi_sense_ascq_str(task->sense.ascq));
	else
		fprintf(stderr, "bench_lba_locks: %s lba %" PRIu64 ": status 0x%x (%s): %s\n", what, lba,
			(unsigned)status, status_name(status), iscsi_get_error(ctx));
	if (b->errors == ERRORS_SHOWN)
		fprintf(stderr, "bench_lba_locks: (further errors are only counted)\n");
}

static void lat_add(struct bench *b, double seconds)
{
	if (b->nlat == b->lat_cap) {
		size_t cap = b->lat_cap ? 2 * b->lat_cap : 65536;
		uint32_t *p = realloc(b->lat_us, cap * sizeof(*p));

		if (!p)
			return; /* keep counting IOPS; lose this sample */
		b->lat_us = p;
		b->lat_cap = cap;
	}
	b->lat_us[b->nlat++] = (uint32_t)(seconds * 1e6 + 0.5);
}

/* ---- session R: READ(16) in the first half ---- */

static void read_submit(struct bench *b, struct rslot *s);

static void read_cb(struct iscsi_context *ctx, int status, void *command_data, void *private_data)
{
	struct rslot *s = private_data;
	struct bench *b = s->b;
	struct scsi_task *task = command_data;
	double t = bench_now();

	b->inflight_r--;
	if (status == SCSI_STATUS_GOOD) {
		if (t <= b->t_end) {
			b->reads++;
			lat_add(b, t - s->t0);
		}
	} else {
		record_error(b, ctx, "READ(16)", s->lba, status, task);
	}
	if (task)
		scsi_free_scsi_task(task);
	if (b->running && !b->lost)
		read_submit(b, s);
}

static void read_submit(struct bench *b, struct rslot *s)
{
	struct scsi_task *task;

	s->lba = bench_rnd(&b->rng) % (b->half - READ_BLOCKS + 1);
	s->iov.iov_base = s->buf;
	s->iov.iov_len = (size_t)READ_BLOCKS * b->bs;
	s->t0 = bench_now();
	task = iscsi_read16_iov_task(b->r, b->lun, s->lba, READ_BLOCKS * b->bs, (int)b->bs, 0, 0, 0, 0, 0, read_cb, s,
				     &s->iov, 1);
	if (!task) {
		fprintf(stderr, "bench_lba_locks: cannot queue READ(16): %s\n", iscsi_get_error(b->r));
		b->lost = 1;
		return;
	}
	b->inflight_r++;
}

/* ---- session W: WRITE ATOMIC(16) and COMPARE AND WRITE in the second half ---- */

static void write_submit(struct bench *b, struct wslot *s);

static void write_cb(struct iscsi_context *ctx, int status, void *command_data, void *private_data)
{
	struct wslot *s = private_data;
	struct bench *b = s->b;
	struct scsi_task *task = command_data;
	int in_window = bench_now() <= b->t_end;

	b->inflight_w--;
	switch (s->kind) {
	case W_ATOMIC:
		if (status == SCSI_STATUS_GOOD) {
			if (in_window) {
				b->writes++;
				b->atomics++;
			}
		} else {
			record_error(b, ctx, "WRITE ATOMIC(16)", s->lba, status, task);
		}
		break;
	case W_CAW:
		if (status == SCSI_STATUS_GOOD) {
			b->caw_gen[s->caw_idx]++;
			b->caw_busy[s->caw_idx] = 0;
			if (in_window) {
				b->writes++;
				b->caws++;
			}
		} else {
			if (is_miscompare(status, task))
				b->caw_fail++;
			record_error(b, ctx, "COMPARE AND WRITE", s->lba, status, task);
			/* The block's content is now uncertain: rewrite the expected one before reuse. */
			if (task)
				scsi_free_scsi_task(task);
			if (!b->lost) {
				struct scsi_task *t;

				s->kind = W_RESYNC;
				fill_block(s->buf, b->bs, s->lba, b->caw_gen[s->caw_idx]);
				s->iov.iov_base = s->buf;
				s->iov.iov_len = b->bs;
				t = iscsi_write16_iov_task(b->w, b->lun, s->lba, NULL, b->bs, (int)b->bs, 0, 0, 0, 0, 0,
							   write_cb, s, &s->iov, 1);
				if (t) {
					b->inflight_w++;
					return;
				}
				fprintf(stderr, "bench_lba_locks: cannot queue WRITE(16): %s\n", iscsi_get_error(b->w));
				b->lost = 1;
			}
			return;
		}
		break;
	case W_RESYNC:
		if (status == SCSI_STATUS_GOOD)
			b->caw_busy[s->caw_idx] = 0;
		else
			record_error(b, ctx, "WRITE(16) (COMPARE AND WRITE resync)", s->lba, status, task);
		/* on failure the LBA stays busy: it is never used again */
		break;
	}
	if (task)
		scsi_free_scsi_task(task);
	if (b->running && !b->lost)
		write_submit(b, s);
}

static int send_write(struct bench *b, struct wslot *s, const uint8_t *cdb, uint32_t nbytes)
{
	struct scsi_task *task = scsi_create_task(16, (unsigned char *)cdb, SCSI_XFER_WRITE, (int)nbytes);

	if (!task) {
		fprintf(stderr, "bench_lba_locks: out of memory for a task\n");
		b->lost = 1;
		return -1;
	}
	s->iov.iov_base = s->buf;
	s->iov.iov_len = nbytes;
	scsi_task_set_iov_out(task, &s->iov, 1);
	if (iscsi_scsi_command_async(b->w, b->lun, task, write_cb, NULL, s) != 0) {
		fprintf(stderr, "bench_lba_locks: cannot queue a write: %s\n", iscsi_get_error(b->w));
		scsi_free_scsi_task(task);
		b->lost = 1;
		return -1;
	}
	b->inflight_w++;
	return 0;
}

static void write_submit(struct bench *b, struct wslot *s)
{
	uint8_t cdb[16];

	memset(cdb, 0, sizeof(cdb));
	if (b->wseq++ & 1) {
		/* COMPARE AND WRITE on a free tracked LBA (there is always one: ncaw >= QD_WRITE). */
		uint32_t start = (uint32_t)(bench_rnd(&b->rng) % b->ncaw), i;

		for (i = 0; i < b->ncaw; i++)
			if (!b->caw_busy[(start + i) % b->ncaw])
				break;
		if (i < b->ncaw) {
			uint32_t idx = (start + i) % b->ncaw;

			b->caw_busy[idx] = 1;
			s->kind = W_CAW;
			s->caw_idx = idx;
			s->lba = b->caw_base + idx;
			fill_block(s->buf, b->bs, s->lba, b->caw_gen[idx]);
			fill_block(s->buf + b->bs, b->bs, s->lba, b->caw_gen[idx] + 1);
			cdb[0] = 0x89;
			put_be64(cdb + 2, s->lba);
			cdb[13] = 1; /* NUMBER OF LOGICAL BLOCKS */
			if (send_write(b, s, cdb, 2 * b->bs) != 0)
				b->caw_busy[idx] = 0;
			return;
		}
	}
	s->kind = W_ATOMIC;
	s->lba = b->at_lo + bench_rnd(&b->rng) % (b->at_hi - b->at_lo + 1);
	cdb[0] = 0x9c;
	put_be64(cdb + 2, s->lba);
	put_be16(cdb + 10, 0); /* ATOMIC BOUNDARY */
	put_be16(cdb + 12, ATOMIC_BLOCKS);
	send_write(b, s, cdb, ATOMIC_BLOCKS * b->bs);
}

/* ---- setup ---- */

static int read_capacity(struct bench *b)
{
	struct scsi_task *t = iscsi_readcapacity16_sync(b->r, b->lun);
	struct scsi_readcapacity16 *rc;

	if (!t || t->status != SCSI_STATUS_GOOD || !(rc = scsi_datain_unmarshall(t))) {
		fprintf(stderr, "bench_lba_locks: READ CAPACITY(16) failed: %s\n", iscsi_get_error(b->r));
		if (t)
			scsi_free_scsi_task(t);
		return -1;
	}
	b->nblocks = rc->returned_lba + 1;
	b->bs = rc->block_length;
	scsi_free_scsi_task(t);
	if (b->bs == 0 || b->bs % 8) {
		fprintf(stderr, "bench_lba_locks: odd logical block length %u\n", b->bs);
		return -1;
	}
	return 0;
}

/* The Block Limits VPD page must allow what the benchmark sends. */
static int check_block_limits(struct bench *b)
{
	struct scsi_task *t = iscsi_inquiry_sync(b->w, b->lun, 1, SCSI_INQUIRY_PAGECODE_BLOCK_LIMITS, 255);
	struct scsi_inquiry_block_limits *bl;
	int ok = 1;

	if (!t || t->status != SCSI_STATUS_GOOD || !(bl = scsi_datain_unmarshall(t))) {
		fprintf(stderr, "bench_lba_locks: INQUIRY Block Limits VPD failed: %s\n", iscsi_get_error(b->w));
		if (t)
			scsi_free_scsi_task(t);
		return -1;
	}
	if (bl->max_atomic_xfer_len < ATOMIC_BLOCKS) {
		fprintf(stderr,
			"bench_lba_locks: MAXIMUM ATOMIC TRANSFER LENGTH is %u blocks, need %u "
			"(set max_atomic_transfer_length)\n",
			bl->max_atomic_xfer_len, ATOMIC_BLOCKS);
		ok = 0;
	}
	if (bl->atomic_align > 1 || bl->atomic_gran > 1) {
		fprintf(stderr, "bench_lba_locks: ATOMIC ALIGNMENT %u / GRANULARITY %u: need 0 (any LBA and length)\n",
			bl->atomic_align, bl->atomic_gran);
		ok = 0;
	}
	if (bl->max_cmp < 1) {
		fprintf(stderr, "bench_lba_locks: COMPARE AND WRITE disabled (max_compare_and_write = 0)\n");
		ok = 0;
	}
	if (bl->max_xfer_len && bl->max_xfer_len < ATOMIC_BLOCKS) {
		fprintf(stderr, "bench_lba_locks: MAXIMUM TRANSFER LENGTH %u < %u blocks\n", bl->max_xfer_len,
			ATOMIC_BLOCKS);
		ok = 0;
	}
	scsi_free_scsi_task(t);
	return ok ? 0 : -1;
}

/* Writes generation 0 of every COMPARE AND WRITE block. */
static int init_caw_blocks(struct bench *b)
{
	size_t len = (size_t)b->ncaw * b->bs;
	uint8_t *buf = malloc(len);
	struct scsi_task *t;
	int ok;

	if (!buf)
		return -1;
	for (uint32_t i = 0; i < b->ncaw; i++)
		fill_block(buf + (size_t)i * b->bs, b->bs, b->caw_base + i, 0);
	t = iscsi_write16_sync(b->w, b->lun, b->caw_base, buf, (uint32_t)len, (int)b->bs, 0, 0, 0, 0, 0);
	ok = t && t->status == SCSI_STATUS_GOOD;
	if (!ok)
		fprintf(stderr, "bench_lba_locks: initial WRITE(16) of the COMPARE AND WRITE blocks failed: %s\n",
			iscsi_get_error(b->w));
	if (t)
		scsi_free_scsi_task(t);
	free(buf);
	return ok ? 0 : -1;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static uint32_t percentile(const uint32_t *v, size_t n, double p)
{
	size_t rank;

	if (n == 0)
		return 0;
	rank = (size_t)(p * (double)n + 0.999999); /* nearest rank, 1-based */
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1];
}

int main(int argc, char **argv)
{
	struct bench b0 = { 0 }, *b = &b0;
	struct rslot *rs = NULL;
	struct wslot *ws = NULL;
	unsigned long lun, seconds, qd_r, qd_w;
	const char *portal, *target;
	double deadline_drain, elapsed;
	int rc = 1;

	if (argc != 7 || bench_parse_uint(argv[3], 255, &lun) || bench_parse_uint(argv[4], 86400, &seconds) || seconds == 0 ||
	    bench_parse_uint(argv[5], MAX_QD, &qd_r) || bench_parse_uint(argv[6], MAX_QD, &qd_w) || qd_r + qd_w == 0) {
		fprintf(stderr,
			"usage: %s PORTAL TARGET_IQN LUN SECONDS QD_READ QD_WRITE\n"
			"  e.g. %s 127.0.0.1:3260 iqn.2026-12.org.sbcemu:default 0 5 16 4\n"
			"  (SECONDS >= 1; queue depths 0..%d, not both 0)\n",
			argv[0], argv[0], MAX_QD);
		return 2;
	}
	portal = argv[1];
	target = argv[2];
	b->lun = (int)lun;
	b->rng = 0x5bce5bce12345678ULL;
	signal(SIGPIPE, SIG_IGN);

	b->r = bench_open_session("bench_lba_locks", INITIATOR_R, portal, target, b->lun, 60);
	if (!b->r)
		return 1;
	b->w = bench_open_session("bench_lba_locks", INITIATOR_W, portal, target, b->lun, 60);
	if (!b->w)
		goto out;
	if (read_capacity(b) != 0)
		goto out;
	b->half = b->nblocks / 2;
	b->ncaw = qd_w > CAW_MIN_LBAS / 2 ? 2 * (uint32_t)qd_w : CAW_MIN_LBAS;
	b->caw_base = b->half;
	b->at_lo = b->half + b->ncaw;
	if (b->half < READ_BLOCKS || b->nblocks < b->at_lo + ATOMIC_BLOCKS) {
		fprintf(stderr, "bench_lba_locks: LU of %" PRIu64 " blocks is too small\n", b->nblocks);
		goto out;
	}
	b->at_hi = b->nblocks - ATOMIC_BLOCKS;
	if (qd_w) {
		if (check_block_limits(b) != 0)
			goto out;
		b->caw_gen = calloc(b->ncaw, sizeof(*b->caw_gen));
		b->caw_busy = calloc(b->ncaw, 1);
		if (!b->caw_gen || !b->caw_busy || init_caw_blocks(b) != 0)
			goto out;
	}

	rs = calloc(qd_r ? qd_r : 1, sizeof(*rs));
	ws = calloc(qd_w ? qd_w : 1, sizeof(*ws));
	if (!rs || !ws)
		goto out;
	for (unsigned long i = 0; i < qd_r; i++) {
		rs[i].b = b;
		if (!(rs[i].buf = malloc((size_t)READ_BLOCKS * b->bs)))
			goto out;
	}
	for (unsigned long i = 0; i < qd_w; i++) {
		ws[i].b = b;
		if (!(ws[i].buf = malloc((size_t)ATOMIC_BLOCKS * b->bs)))
			goto out;
		memset(ws[i].buf, 0xa5 ^ (int)i, (size_t)ATOMIC_BLOCKS * b->bs);
	}

	/* ---- run ---- */
	b->running = 1;
	b->t_start = bench_now();
	b->t_end = b->t_start + (double)seconds;
	for (unsigned long i = 0; i < qd_w && !b->lost; i++)
		write_submit(b, &ws[i]);
	for (unsigned long i = 0; i < qd_r && !b->lost; i++)
		read_submit(b, &rs[i]);
	deadline_drain = b->t_end + DRAIN_SECONDS;
	while (!b->lost) {
		struct iscsi_context *ctx[2] = { b->r, b->w };
		struct pollfd pfd[2];
		double t = bench_now();

		if (b->running && t >= b->t_end)
			b->running = 0;
		if (!b->running && b->inflight_r == 0 && b->inflight_w == 0)
			break;
		if (t >= deadline_drain) {
			fprintf(stderr, "bench_lba_locks: %u reads and %u writes still outstanding %.0f s after the end\n",
				b->inflight_r, b->inflight_w, DRAIN_SECONDS);
			b->errors += b->inflight_r + b->inflight_w;
			b->lost = 1;
			break;
		}
		for (int i = 0; i < 2; i++) {
			pfd[i].fd = iscsi_get_fd(ctx[i]);
			pfd[i].events = (short)iscsi_which_events(ctx[i]);
			pfd[i].revents = 0;
		}
		if (poll(pfd, 2, 100) < 0)
			continue; /* EINTR */
		for (int i = 0; i < 2 && !b->lost; i++) {
			if (iscsi_service(ctx[i], pfd[i].revents) < 0) {
				fprintf(stderr, "bench_lba_locks: session %s failed: %s\n", i ? "W" : "R",
					iscsi_get_error(ctx[i]));
				b->lost = 1;
			}
		}
	}
	if (b->lost && (b->inflight_r || b->inflight_w)) {
		b->errors += b->inflight_r + b->inflight_w;
		fprintf(stderr, "bench_lba_locks: run aborted with %u commands outstanding\n",
			b->inflight_r + b->inflight_w);
	}

	/* ---- report ---- */
	elapsed = b->t_end - b->t_start;
	qsort(b->lat_us, b->nlat, sizeof(*b->lat_us), cmp_u32);
	printf("read_iops=%.0f read_p99_us=%u write_ops=%" PRIu64 " caw_fail=%" PRIu64 " errors=%" PRIu64 "\n",
	       (double)b->reads / elapsed, percentile(b->lat_us, b->nlat, 0.99), b->writes, b->caw_fail, b->errors);
	fflush(stdout);
	fprintf(stderr,
		"bench_lba_locks: %" PRIu64 " blocks of %u bytes, %lu s, qd read %lu write %lu: "
		"reads %" PRIu64 " (p50 %u us, p99 %u us, max %u us), WRITE ATOMIC %" PRIu64
		", COMPARE AND WRITE %" PRIu64 " (%.0f writes/s)\n",
		b->nblocks, b->bs, seconds, qd_r, qd_w, b->reads, percentile(b->lat_us, b->nlat, 0.50),
		percentile(b->lat_us, b->nlat, 0.99), b->nlat ? b->lat_us[b->nlat - 1] : 0, b->atomics, b->caws,
		(double)b->writes / elapsed);
	rc = b->lost ? 1 : 0;
	if (!b->lost) {
		iscsi_logout_sync(b->r);
		iscsi_logout_sync(b->w);
	}
out:
	if (b->r)
		iscsi_destroy_context(b->r);
	if (b->w)
		iscsi_destroy_context(b->w);
	for (unsigned long i = 0; rs && i < qd_r; i++)
		free(rs[i].buf);
	for (unsigned long i = 0; ws && i < qd_w; i++)
		free(ws[i].buf);
	free(rs);
	free(ws);
	free(b->caw_gen);
	free(b->caw_busy);
	free(b->lat_us);
	return rc;
}
