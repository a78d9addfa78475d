/*
 * bench_latency: the latency of every command of a random 4 KiB load, for
 * the media latency model and command duration limits (docs/latency.md,
 * "Measured").  One line per command goes to a CSV file; a summary per class
 * goes to stdout.  Two modes:
 *
 *   --qd N --count M   M READ(16)s of 4 KiB at random 4 KiB-aligned LBAs over
 *                      the whole LU, N outstanding at a time (class "read");
 *   --cdl SECONDS      session B keeps --bg-qd (default 16) untagged WRITE(16)s
 *                      of 4 KiB at random LBAs outstanding (class "bg"); after
 *                      --warmup-ms (default 1000) session C sends READ(16)s of
 *                      4 KiB at random LBAs with DURATION LIMIT DESCRIPTOR 1,
 *                      --cdl-qd (default 1) at a time (class "cdl").  Before
 *                      the run, descriptor 1 of the Command Duration Limit T2A
 *                      mode page (SPC-6, 0Ah/07h) is set with MODE SELECT(10)
 *                      to --limit-ms (default 50) of max inactive time (or, with
 *                      --limit-type active|guideline, max active time or
 *                      command duration guideline) with policy --policy
 *                      (hex, default 0: complete-earliest: no command fails,
 *                      the misses show in `sbcemuctl stats`).  Only commands
 *                      sent within the SECONDS are recorded.
 *
 * CSV columns (header line first):
 *
 *   class,seq,lba,submit_us,latency_us,status,sense
 *
 * submit_us: when the command was sent, from the start of the measured run (after any warm-up);
 * latency_us: sent to response (CLOCK_MONOTONIC, the initiator's view);
 * status: the SCSI status byte in hex, or libiscsi's name for a transport
 * failure; sense: KEY/ASC/ASCQ for CHECK CONDITION, else empty (libiscsi
 * drops sense data that comes with GOOD status, as Linux's iSCSI initiator
 * does, so a complete-unavailable completion looks like GOOD here).
 *
 * Summary on stdout, one line per class:
 *
 *   class=read n=400 seconds=5.123 iops=78.1 p50_us=12345 p90_us=... p99_us=... max_us=... not_good=0
 *
 * iops: commands completed per second from the first send to the last
 * response of the class; percentiles by nearest rank.  For --cdl, a line
 * `limit type=inactive ms=50 policy=0 units=... value=...` says what was set.
 *
 * Exit status: 0 when the run completed (whatever the statuses), 2 for bad
 * arguments, 1 when setup failed (login, READ CAPACITY(16), MODE SELECT) or
 * a session was lost.  scripts/bench-latency.sh starts sbcemud and runs
 * this; not a test (ctest does not run it).
 *
 *   bench_latency PORTAL TARGET_IQN LUN CSV --qd N --count M
 *   bench_latency PORTAL TARGET_IQN LUN CSV --cdl SECONDS [--bg-qd N] [--cdl-qd N]
 *                 [--limit-ms MS] [--limit-type inactive|active|guideline] [--policy HEX] [--warmup-ms MS]
 */
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#define IO_BYTES 4096u
#define MAX_QD 256
#define DRAIN_SECONDS 60.0
#define ERRORS_SHOWN 5

#define INITIATOR_READ "iqn.2026-12.org.sbcemu.bench:latency-reader"
#define INITIATOR_BG "iqn.2026-12.org.sbcemu.bench:latency-background"

enum klass { K_READ, K_CDL, K_BG, K_COUNT };
static const char *const klass_name[K_COUNT] = { "read", "cdl", "bg" };

struct sample {
	uint64_t lba;
	double submit, latency; /* seconds */
	int status;
	uint8_t key, asc, ascq;
};

struct bench;

/* One outstanding command. */
struct slot {
	struct bench *b;
	struct iscsi_context *ctx;
	enum klass k;
	bool write;
	uint8_t dld;
	uint8_t *buf;
	uint64_t lba;
	double t0;
};

struct bench {
	struct iscsi_context *s[2]; /* [0] reads (class read or cdl), [1] background writes */
	int nsess;
	int lun;
	uint32_t bs, io_blocks;
	uint64_t nblocks, nslots; /* 4 KiB slots in the LU */
	uint64_t rng;
	double t_start, t_measure, t_end; /* t_measure: commands sent earlier are not recorded (warm-up) */
	bool lost;
	/* per class */
	bool sending[K_COUNT];
	uint64_t to_send[K_COUNT]; /* qd mode: commands left to send */
	unsigned inflight[K_COUNT];
	struct sample *smp[K_COUNT];
	size_t n[K_COUNT], cap[K_COUNT];
	uint64_t not_good[K_COUNT];
	double first[K_COUNT], last[K_COUNT];
	uint64_t errors_shown;
};

static const char *status_name(int status)
{
	switch (status) {
	case SCSI_STATUS_GOOD: return "00";
	case SCSI_STATUS_CHECK_CONDITION: return "02";
	case SCSI_STATUS_CONDITION_MET: return "04";
	case SCSI_STATUS_BUSY: return "08";
	case SCSI_STATUS_RESERVATION_CONFLICT: return "18";
	case SCSI_STATUS_TASK_SET_FULL: return "28";
	case SCSI_STATUS_ACA_ACTIVE: return "30";
	case SCSI_STATUS_TASK_ABORTED: return "40";
	case SCSI_STATUS_CANCELLED: return "cancelled";
	case SCSI_STATUS_ERROR: return "error";
	case SCSI_STATUS_TIMEOUT: return "timeout";
	default: return "unknown";
	}
}

/* READ(16) or WRITE(16) with DURATION LIMIT DESCRIPTOR dld (SBC-4: DLD2 in byte 1 bit 0, DLD1:0 in byte 14 bits 7:6). */
static void rw16(uint8_t *cdb, bool write, uint64_t lba, uint32_t blocks, uint8_t dld)
{
	memset(cdb, 0, 16);
	cdb[0] = write ? 0x8a : 0x88;
	cdb[1] = (dld >> 2) & 0x01;
	put_be64(cdb + 2, lba);
	put_be32(cdb + 10, blocks);
	cdb[14] = (uint8_t)((dld & 0x03) << 6);
}

static void record(struct bench *b, struct slot *s, int status, const struct scsi_task *task, double t)
{
	struct sample *x;

	if (s->t0 < b->t_measure)
		return; /* sent during the warm-up */
	if (b->n[s->k] == b->cap[s->k]) {
		size_t cap = b->cap[s->k] ? 2 * b->cap[s->k] : 4096;
		struct sample *p = realloc(b->smp[s->k], cap * sizeof(*p));

		if (!p) {
			fprintf(stderr, "bench_latency: out of memory for samples\n");
			b->lost = true;
			return;
		}
		b->smp[s->k] = p;
		b->cap[s->k] = cap;
	}
	x = &b->smp[s->k][b->n[s->k]++];
	memset(x, 0, sizeof(*x));
	x->lba = s->lba;
	x->submit = s->t0 - b->t_measure;
	x->latency = t - s->t0;
	x->status = status;
	if (status == SCSI_STATUS_CHECK_CONDITION && task) {
		x->key = (uint8_t)task->sense.key;
		x->asc = (uint8_t)(task->sense.ascq >> 8);
		x->ascq = (uint8_t)task->sense.ascq;
	}
	if (status != SCSI_STATUS_GOOD) {
		b->not_good[s->k]++;
		if (b->errors_shown++ < ERRORS_SHOWN)
			fprintf(stderr, "bench_latency: %s %s lba %" PRIu64 ": status %s sense %x/%02x/%02x%s\n",
				klass_name[s->k], s->write ? "WRITE(16)" : "READ(16)", s->lba, status_name(status),
				x->key, x->asc, x->ascq, b->errors_shown == ERRORS_SHOWN ? " (further ones only counted)" : "");
	}
	if (t > b->last[s->k])
		b->last[s->k] = t;
}

static void submit(struct bench *b, struct slot *s);

static void done_cb(struct iscsi_context *ctx, int status, void *command_data, void *private_data)
{
	struct slot *s = private_data;
	struct bench *b = s->b;
	struct scsi_task *task = command_data;

	(void)ctx;
	b->inflight[s->k]--;
	record(b, s, status, task, bench_now());
	if (task)
		scsi_free_scsi_task(task);
	if (!b->lost)
		submit(b, s);
}

/* Sends the slot's next command if its class is still sending. */
static void submit(struct bench *b, struct slot *s)
{
	uint8_t cdb[16];
	struct scsi_task *task;
	struct iscsi_data data = { .size = IO_BYTES, .data = s->buf };

	if (!b->sending[s->k])
		return;
	if (s->k == K_READ) {
		if (b->to_send[K_READ] == 0) {
			b->sending[K_READ] = false;
			return;
		}
		b->to_send[K_READ]--;
	}
	s->lba = (bench_rnd(&b->rng) % b->nslots) * b->io_blocks;
	rw16(cdb, s->write, s->lba, b->io_blocks, s->dld);
	task = scsi_create_task(16, cdb, s->write ? SCSI_XFER_WRITE : SCSI_XFER_READ, IO_BYTES);
	if (!task) {
		fprintf(stderr, "bench_latency: out of memory for a task\n");
		b->lost = true;
		return;
	}
	s->t0 = bench_now();
	if (b->first[s->k] == 0 && s->t0 >= b->t_measure)
		b->first[s->k] = s->t0;
	if (iscsi_scsi_command_async(s->ctx, b->lun, task, done_cb, s->write ? &data : NULL, s) != 0) {
		fprintf(stderr, "bench_latency: cannot queue a command: %s\n", iscsi_get_error(s->ctx));
		scsi_free_scsi_task(task);
		b->lost = true;
		return;
	}
	b->inflight[s->k]++;
}

/* ---- setup ---- */

static int read_capacity(struct bench *b)
{
	struct scsi_task *t = iscsi_readcapacity16_sync(b->s[0], b->lun);
	struct scsi_readcapacity16 *rc;

	if (!t || t->status != SCSI_STATUS_GOOD || !(rc = scsi_datain_unmarshall(t))) {
		fprintf(stderr, "bench_latency: READ CAPACITY(16) failed: %s\n", iscsi_get_error(b->s[0]));
		if (t)
			scsi_free_scsi_task(t);
		return -1;
	}
	b->nblocks = rc->returned_lba + 1;
	b->bs = rc->block_length;
	scsi_free_scsi_task(t);
	if (b->bs == 0 || IO_BYTES % b->bs || b->nblocks < 2 * (IO_BYTES / b->bs)) {
		fprintf(stderr, "bench_latency: %" PRIu64 " blocks of %u bytes: need blocks dividing 4096, two 4 KiB\n",
			b->nblocks, b->bs);
		return -1;
	}
	b->io_blocks = IO_BYTES / b->bs;
	b->nslots = b->nblocks / b->io_blocks;
	return 0;
}

/* Runs a CDB synchronously; in: bytes expected from the LU, out: bytes sent to it.  The task, or NULL. */
static struct scsi_task *command(struct iscsi_context *ctx, int lun, uint8_t *cdb, int cdb_len, int xfer, uint8_t *out,
				 uint32_t out_len, uint32_t in_len)
{
	struct scsi_task *t = scsi_create_task(cdb_len, cdb, xfer, (int)(xfer == SCSI_XFER_WRITE ? out_len : in_len));
	struct iscsi_data data = { .size = out_len, .data = out };

	if (!t)
		return NULL;
	if (!iscsi_scsi_command_sync(ctx, lun, t, xfer == SCSI_XFER_WRITE ? &data : NULL)) {
		scsi_free_scsi_task(t);
		return NULL;
	}
	return t;
}

enum limit_type { L_INACTIVE, L_ACTIVE, L_GUIDELINE };
static const char *const limit_name[] = { "inactive", "active", "guideline" };

/*
 * Sets descriptor 1 of the T2A page (SPC-6 7.5.x; cdl-tools cdl_scsi_write_page): the current page from MODE
 * SENSE(10) (DBD = 1), descriptor 1 replaced, sent back with MODE SELECT(10) PF = 1 (not saved).
 */
static int set_t2a(struct bench *b, enum limit_type type, unsigned limit_ms, unsigned policy)
{
	uint8_t sense_cdb[10] = { 0x5a, 0x08, 0x0a, 0x07, 0, 0, 0, 0x02, 0x00, 0 };
	uint8_t select_cdb[10] = { 0x55, 0x10, 0, 0, 0, 0, 0, 0, 240, 0 };
	uint8_t list[240], *d = list + 16;
	uint8_t units;
	uint32_t value;
	struct scsi_task *t;
	int ok;

	t = command(b->s[0], b->lun, sense_cdb, 10, SCSI_XFER_READ, NULL, 0, 512);
	if (!t || t->status != SCSI_STATUS_GOOD || t->datain.size < (int)sizeof(list)) {
		fprintf(stderr, "bench_latency: MODE SENSE(10) of the T2A page (0Ah/07h) failed: %s%s\n",
			t ? status_name(t->status) : "", t ? "" : iscsi_get_error(b->s[0]));
		fprintf(stderr, "bench_latency: (does the LU have command_duration_limits = t2?)\n");
		if (t)
			scsi_free_scsi_task(t);
		return -1;
	}
	memcpy(list, t->datain.data, sizeof(list));
	scsi_free_scsi_task(t);
	/* Mode data length and the page's PS bit are reserved in MODE SELECT. */
	list[0] = list[1] = list[3] = 0;
	list[8] &= 0x7f;
	/* 1 us units while the limit fits 16 bits, else 10 ms units (rounded up). */
	if ((uint64_t)limit_ms * 1000 <= 0xffff) {
		units = 0x08;
		value = limit_ms * 1000;
	} else {
		units = 0x0a;
		value = (limit_ms + 9) / 10;
		if (value > 0xffff)
			value = 0xffff;
	}
	memset(d, 0, 32);
	d[0] = units;
	switch (type) {
	case L_INACTIVE:
		put_be16(d + 2, (uint16_t)value);
		d[6] = (uint8_t)(policy << 4);
		break;
	case L_ACTIVE:
		put_be16(d + 4, (uint16_t)value);
		d[6] = (uint8_t)policy;
		break;
	case L_GUIDELINE:
		put_be16(d + 10, (uint16_t)value);
		d[14] = (uint8_t)policy;
		break;
	}
	t = command(b->s[0], b->lun, select_cdb, 10, SCSI_XFER_WRITE, list, sizeof(list), 0);
	ok = t && t->status == SCSI_STATUS_GOOD;
	if (!ok) {
		if (t && t->status == SCSI_STATUS_CHECK_CONDITION)
			fprintf(stderr, "bench_latency: MODE SELECT(10) of T2A descriptor 1 refused: %x/%02x/%02x\n",
				(unsigned)t->sense.key, (unsigned)(t->sense.ascq >> 8) & 0xff,
				(unsigned)t->sense.ascq & 0xff);
		else
			fprintf(stderr, "bench_latency: MODE SELECT(10) of T2A descriptor 1 failed: %s\n",
				iscsi_get_error(b->s[0]));
	}
	if (t)
		scsi_free_scsi_task(t);
	if (ok)
		printf("limit type=%s ms=%u policy=%x units=%x value=%u\n", limit_name[type], limit_ms, policy, units,
		       value);
	return ok ? 0 : -1;
}

/* ---- run and report ---- */

/*
 * Polls every session until nothing is in flight and no class is sending, or a session fails.  The nlate
 * slots of late start at t_measure (after the warm-up); with t_end set every class stops sending then.
 */
static void run(struct bench *b, struct slot *late, unsigned nlate)
{
	double drain_end = 0;

	while (!b->lost) {
		struct pollfd pfd[2];
		double t = bench_now();
		unsigned inflight = 0;
		bool sending = false;

		if (late && t >= b->t_measure) {
			b->sending[late[0].k] = true;
			for (unsigned i = 0; i < nlate && !b->lost; i++)
				submit(b, &late[i]);
			late = NULL;
		}
		if (b->t_end > 0 && t >= b->t_end)
			for (int k = 0; k < K_COUNT; k++)
				b->sending[k] = false;
		for (int k = 0; k < K_COUNT; k++) {
			inflight += b->inflight[k];
			sending |= b->sending[k];
		}
		if (inflight == 0 && !late && !sending)
			break;
		if (!sending && !late) {
			if (drain_end == 0)
				drain_end = t + DRAIN_SECONDS;
			if (t >= drain_end) {
				fprintf(stderr, "bench_latency: %u commands still outstanding %.0f s after the end\n",
					inflight, DRAIN_SECONDS);
				b->lost = true;
				break;
			}
		}
		for (int i = 0; i < b->nsess; i++) {
			pfd[i].fd = iscsi_get_fd(b->s[i]);
			pfd[i].events = (short)iscsi_which_events(b->s[i]);
			pfd[i].revents = 0;
		}
		if (poll(pfd, (nfds_t)b->nsess, 20) < 0)
			continue; /* EINTR */
		for (int i = 0; i < b->nsess && !b->lost; i++) {
			if (iscsi_service(b->s[i], pfd[i].revents) < 0) {
				fprintf(stderr, "bench_latency: session %d failed: %s\n", i, iscsi_get_error(b->s[i]));
				b->lost = true;
			}
		}
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double percentile(const double *v, size_t n, double p)
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

static int write_csv(const struct bench *b, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		return -1;
	}
	fprintf(f, "class,seq,lba,submit_us,latency_us,status,sense\n");
	for (int k = 0; k < K_COUNT; k++) {
		for (size_t i = 0; i < b->n[k]; i++) {
			const struct sample *x = &b->smp[k][i];

			fprintf(f, "%s,%zu,%" PRIu64 ",%.0f,%.0f,%s,", klass_name[k], i, x->lba, x->submit * 1e6,
				x->latency * 1e6, status_name(x->status));
			if (x->status == SCSI_STATUS_CHECK_CONDITION)
				fprintf(f, "%x/%02x/%02x", x->key, x->asc, x->ascq);
			fputc('\n', f);
		}
	}
	if (fclose(f) != 0) {
		perror(path);
		return -1;
	}
	return 0;
}

static void summary(const struct bench *b, enum klass k)
{
	size_t n = b->n[k];
	double *v = malloc((n ? n : 1) * sizeof(*v)), secs = b->last[k] - b->first[k];

	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		v[i] = b->smp[k][i].latency * 1e6;
	qsort(v, n, sizeof(*v), cmp_double);
	printf("class=%s n=%zu seconds=%.3f iops=%.1f p50_us=%.0f p90_us=%.0f p99_us=%.0f max_us=%.0f not_good=%" PRIu64
	       "\n",
	       klass_name[k], n, secs, secs > 0 ? (double)n / secs : 0, percentile(v, n, 0.50), percentile(v, n, 0.90),
	       percentile(v, n, 0.99), n ? v[n - 1] : 0, b->not_good[k]);
	free(v);
}

static int usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s PORTAL TARGET_IQN LUN CSV --qd N --count M\n"
		"       %s PORTAL TARGET_IQN LUN CSV --cdl SECONDS [--bg-qd N] [--cdl-qd N] [--limit-ms MS]\n"
		"           [--limit-type inactive|active|guideline] [--policy HEX] [--warmup-ms MS]\n"
		"  e.g. %s 127.0.0.1:3260 iqn.2026-12.org.sbcemu:default 0 qd1.csv --qd 1 --count 400\n"
		"  (queue depths 1..%d; policy 0, 1, 2, d, e or f as SPC-6 allows for the limit type)\n",
		argv0, argv0, argv0, MAX_QD);
	return 2;
}

int main(int argc, char **argv)
{
	struct bench b0 = { 0 }, *b = &b0;
	struct slot *slots = NULL;
	unsigned long lun, qd = 0, count = 0, cdl_seconds = 0, bg_qd = 16, cdl_qd = 1, limit_ms = 50, policy = 0,
			   warmup_ms = 1000;
	enum limit_type ltype = L_INACTIVE;
	const char *portal, *target, *csv;
	int rc = 1;

	if (argc < 5 || bench_parse_uint(argv[3], 255, &lun))
		return usage(argv[0]);
	portal = argv[1];
	target = argv[2];
	csv = argv[4];
	for (int i = 5; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int bad;

		if (!v)
			return usage(argv[0]);
		if (!strcmp(o, "--qd"))
			bad = bench_parse_uint(v, MAX_QD, &qd) || qd == 0;
		else if (!strcmp(o, "--count"))
			bad = bench_parse_uint(v, 100000000, &count) || count == 0;
		else if (!strcmp(o, "--cdl"))
			bad = bench_parse_uint(v, 86400, &cdl_seconds) || cdl_seconds == 0;
		else if (!strcmp(o, "--bg-qd"))
			bad = bench_parse_uint(v, MAX_QD, &bg_qd);
		else if (!strcmp(o, "--cdl-qd"))
			bad = bench_parse_uint(v, MAX_QD, &cdl_qd) || cdl_qd == 0;
		else if (!strcmp(o, "--limit-ms"))
			bad = bench_parse_uint(v, 655350, &limit_ms) || limit_ms == 0;
		else if (!strcmp(o, "--warmup-ms"))
			bad = bench_parse_uint(v, 600000, &warmup_ms);
		else if (!strcmp(o, "--policy")) {
			char *end;

			policy = strtoul(v, &end, 16);
			bad = *v == '\0' || *end != '\0' || policy > 0xf;
		} else if (!strcmp(o, "--limit-type")) {
			bad = 0;
			if (!strcmp(v, "inactive"))
				ltype = L_INACTIVE;
			else if (!strcmp(v, "active"))
				ltype = L_ACTIVE;
			else if (!strcmp(v, "guideline"))
				ltype = L_GUIDELINE;
			else
				bad = 1;
		} else
			bad = 1;
		if (bad) {
			fprintf(stderr, "bench_latency: bad option or value: %s %s\n", o, v);
			return usage(argv[0]);
		}
		i++;
	}
	if ((qd != 0) == (cdl_seconds != 0) || (qd && !count)) {
		fprintf(stderr, "bench_latency: give either --qd and --count, or --cdl\n");
		return usage(argv[0]);
	}
	b->lun = (int)lun;
	b->rng = 0x5bce1a7e4c7d2b19ULL ^ (uint64_t)time(NULL);
	signal(SIGPIPE, SIG_IGN);

	b->s[0] = bench_open_session("bench_latency", INITIATOR_READ, portal, target, b->lun, 120);
	if (!b->s[0])
		return 1;
	b->nsess = 1;
	if (cdl_seconds) {
		b->s[1] = bench_open_session("bench_latency", INITIATOR_BG, portal, target, b->lun, 120);
		if (!b->s[1])
			goto out;
		b->nsess = 2;
	}
	if (read_capacity(b) != 0)
		goto out;
	if (cdl_seconds && set_t2a(b, ltype, (unsigned)limit_ms, (unsigned)policy) != 0)
		goto out;

	slots = calloc(qd + bg_qd + cdl_qd, sizeof(*slots));
	if (!slots)
		goto out;
	for (unsigned long i = 0; i < qd + bg_qd + cdl_qd; i++) {
		slots[i].b = b;
		if (!(slots[i].buf = malloc(IO_BYTES)))
			goto out;
		memset(slots[i].buf, 0x5a ^ (int)i, IO_BYTES);
	}

	b->t_start = bench_now();
	if (qd) {
		for (unsigned long i = 0; i < qd; i++) {
			slots[i].ctx = b->s[0];
			slots[i].k = K_READ;
		}
		b->sending[K_READ] = true;
		b->to_send[K_READ] = count;
		for (unsigned long i = 0; i < qd && !b->lost; i++)
			submit(b, &slots[i]);
		b->t_measure = b->t_start;
		run(b, NULL, 0);
	} else {
		struct slot *bg = slots, *cdl = slots + bg_qd;

		for (unsigned long i = 0; i < bg_qd; i++) {
			bg[i].ctx = b->s[1];
			bg[i].k = K_BG;
			bg[i].write = true;
		}
		for (unsigned long i = 0; i < cdl_qd; i++) {
			cdl[i].ctx = b->s[0];
			cdl[i].k = K_CDL;
			cdl[i].dld = 1;
		}
		b->t_measure = b->t_start + (double)warmup_ms / 1000;
		b->t_end = b->t_measure + (double)cdl_seconds;
		b->sending[K_BG] = true;
		for (unsigned long i = 0; i < bg_qd && !b->lost; i++)
			submit(b, &bg[i]);
		run(b, cdl, (unsigned)cdl_qd);
	}
	if (b->lost) {
		fprintf(stderr, "bench_latency: run aborted\n");
		goto out;
	}
	if (write_csv(b, csv) != 0)
		goto out;
	for (int k = 0; k < K_COUNT; k++)
		if (b->n[k])
			summary(b, (enum klass)k);
	fflush(stdout);
	rc = 0;
	for (int i = 0; i < b->nsess; i++)
		iscsi_logout_sync(b->s[i]);
out:
	for (int i = 0; i < 2; i++)
		if (b->s[i])
			iscsi_destroy_context(b->s[i]);
	for (unsigned long i = 0; slots && i < qd + bg_qd + cdl_qd; i++)
		free(slots[i].buf);
	free(slots);
	for (int k = 0; k < K_COUNT; k++)
		free(b->smp[k]);
	return rc;
}
