/*
 * bench_load: the project's load generator for scripts/bench, on
 * libiscsi's asynchronous API: S sessions to one LU, each keeping QD
 * READ(16) or WRITE(16) commands of BS bytes in flight for SECONDS, random
 * or sequential LBAs, reads and writes mixed in a given share.  It prints
 * one line of key=value for the script:
 *
 *   ops=123456 iops=41152 mib_s=160.8 p50_us=760 p99_us=1480 errors=0
 *
 * Usage: bench_load PORTAL TARGET LUN [--qd N] [--bs BYTES] [--read-pct P]
 *                   [--seq] [--seconds N] [--sessions N] [--seed N]
 */
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define MAX_SESSIONS 64
#define LAT_MAX (1u << 22) /* latency samples kept (the first ones; enough for percentiles) */

struct load {
	struct iscsi_context *ctx[MAX_SESSIONS];
	unsigned nsessions;
	int lun;
	uint32_t bs, block;     /* transfer bytes, logical block bytes */
	uint64_t nblocks;       /* of the LU */
	unsigned read_pct;
	int seq;
	uint64_t next_lba;      /* sequential: the next one */
	uint64_t rng;
	double t_end;
	int running, lost;
	unsigned inflight;
	uint64_t ops, errors;
	uint32_t *lat_us;
	size_t nlat;
};

struct slot {
	struct load *l;
	int session;
	uint8_t *buf;
	struct scsi_iovec iov;
	double t0;
};

static void submit(struct slot *s);

static void done(struct iscsi_context *ctx, int status, void *command_data, void *private_data)
{
	struct slot *s = private_data;
	struct load *l = s->l;
	double t = bench_now();

	(void)ctx;
	l->inflight--;
	if (status != SCSI_STATUS_GOOD) {
		l->errors++;
	} else if (t <= l->t_end) {
		l->ops++;
		if (l->nlat < LAT_MAX)
			l->lat_us[l->nlat++] = (uint32_t)((t - s->t0) * 1e6);
	}
	if (command_data)
		scsi_free_scsi_task(command_data);
	if (l->running && !l->lost)
		submit(s);
}

static void submit(struct slot *s)
{
	struct load *l = s->l;
	uint32_t blocks = l->bs / l->block;
	uint64_t span = l->nblocks - blocks + 1, lba;
	int read = (unsigned)(bench_rnd(&l->rng) % 100) < l->read_pct;
	struct scsi_task *t;

	if (l->seq) {
		lba = l->next_lba;
		l->next_lba = (l->next_lba + blocks) % span;
	} else {
		lba = (bench_rnd(&l->rng) % (span / blocks)) * blocks; /* aligned to the transfer */
	}
	s->iov.iov_base = s->buf;
	s->iov.iov_len = l->bs;
	s->t0 = bench_now();
	if (read)
		t = iscsi_read16_iov_task(l->ctx[s->session], l->lun, lba, l->bs, (int)l->block, 0, 0, 0, 0, 0, done, s,
					  &s->iov, 1);
	else
		t = iscsi_write16_iov_task(l->ctx[s->session], l->lun, lba, NULL, l->bs, (int)l->block, 0, 0, 0, 0, 0,
					   done, s, &s->iov, 1);
	if (!t) {
		fprintf(stderr, "bench_load: cannot queue a command: %s\n", iscsi_get_error(l->ctx[s->session]));
		l->lost = 1;
		return;
	}
	l->inflight++;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static uint32_t percentile(const uint32_t *v, size_t n, double p)
{
	return n ? v[(size_t)(p * (double)(n - 1))] : 0;
}

/* READ CAPACITY(16) of the LU: block size and count. */
static int capacity(struct load *l)
{
	struct scsi_task *t = iscsi_readcapacity16_sync(l->ctx[0], l->lun);
	struct scsi_readcapacity16 *rc16 = t && t->status == SCSI_STATUS_GOOD ? scsi_datain_unmarshall(t) : NULL;

	if (!rc16) {
		fprintf(stderr, "bench_load: READ CAPACITY(16) failed: %s\n", iscsi_get_error(l->ctx[0]));
		if (t)
			scsi_free_scsi_task(t);
		return -1;
	}
	l->block = rc16->block_length;
	l->nblocks = rc16->returned_lba + 1;
	scsi_free_scsi_task(t);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long qd = 32, bs = 4096, read_pct = 100, seconds = 5, sessions = 1, seed = 1;
	struct load l = { 0 };
	struct slot *slots = NULL;
	struct pollfd pfd[MAX_SESSIONS];
	double t_start;
	int rc = 1;

	if (argc < 4) {
		fprintf(stderr, "usage: bench_load PORTAL TARGET LUN [--qd N] [--bs BYTES] [--read-pct P] [--seq] "
				"[--seconds N] [--sessions N] [--seed N]\n");
		return 2;
	}
	l.lun = atoi(argv[3]);
	for (int i = 4; i < argc; i++) {
		unsigned long *v = !strcmp(argv[i], "--qd")	      ? &qd
				   : !strcmp(argv[i], "--bs")	      ? &bs
				   : !strcmp(argv[i], "--read-pct")   ? &read_pct
				   : !strcmp(argv[i], "--seconds")    ? &seconds
				   : !strcmp(argv[i], "--sessions")   ? &sessions
				   : !strcmp(argv[i], "--seed")	      ? &seed
								      : NULL;

		if (!strcmp(argv[i], "--seq")) {
			l.seq = 1;
			continue;
		}
		if (!v || i + 1 >= argc || bench_parse_uint(argv[++i], 1ul << 30, v) != 0) {
			fprintf(stderr, "bench_load: bad argument %s\n", argv[i]);
			return 2;
		}
	}
	if (!qd || !bs || read_pct > 100 || !sessions || sessions > MAX_SESSIONS || !seconds) {
		fprintf(stderr, "bench_load: out-of-range argument\n");
		return 2;
	}
	l.nsessions = (unsigned)sessions;
	l.read_pct = (unsigned)read_pct;
	l.bs = (uint32_t)bs;
	l.rng = seed ? seed : 1;
	l.lat_us = malloc(LAT_MAX * sizeof(*l.lat_us));
	slots = calloc(qd * sessions, sizeof(*slots));
	if (!l.lat_us || !slots)
		goto out;
	for (unsigned i = 0; i < l.nsessions; i++) {
		char initiator[128];

		snprintf(initiator, sizeof(initiator), "iqn.2026-12.org.sbcemu:bench-load-%u", i);
		l.ctx[i] = bench_open_session("bench_load", initiator, argv[1], argv[2], l.lun, 30);
		if (!l.ctx[i])
			goto out;
	}
	if (capacity(&l) != 0)
		goto out;
	if (l.bs % l.block || l.bs / l.block > l.nblocks) {
		fprintf(stderr, "bench_load: --bs %u is not a multiple of the %u-byte block, or larger than the LU\n", l.bs,
			l.block);
		goto out;
	}
	for (size_t i = 0; i < qd * sessions; i++) {
		slots[i] = (struct slot){ .l = &l, .session = (int)(i % sessions), .buf = malloc(bs) };
		if (!slots[i].buf)
			goto out;
		memset(slots[i].buf, (int)(i & 0xff), bs);
	}
	l.running = 1;
	t_start = bench_now();
	l.t_end = t_start + (double)seconds;
	for (size_t i = 0; i < qd * sessions && !l.lost; i++)
		submit(&slots[i]);
	while (!l.lost && (l.running || l.inflight)) {
		if (l.running && bench_now() >= l.t_end)
			l.running = 0;
		if (bench_now() > l.t_end + 30) {
			fprintf(stderr, "bench_load: %u commands still outstanding 30 s after the end\n", l.inflight);
			l.lost = 1;
			break;
		}
		for (unsigned i = 0; i < l.nsessions; i++) {
			pfd[i].fd = iscsi_get_fd(l.ctx[i]);
			pfd[i].events = (short)iscsi_which_events(l.ctx[i]);
			pfd[i].revents = 0;
		}
		if (poll(pfd, l.nsessions, 100) < 0)
			continue;
		for (unsigned i = 0; i < l.nsessions && !l.lost; i++) {
			if (iscsi_service(l.ctx[i], pfd[i].revents) < 0) {
				fprintf(stderr, "bench_load: session %u failed: %s\n", i, iscsi_get_error(l.ctx[i]));
				l.lost = 1;
			}
		}
	}
	qsort(l.lat_us, l.nlat, sizeof(*l.lat_us), cmp_u32);
	printf("ops=%" PRIu64 " iops=%.0f mib_s=%.1f p50_us=%u p99_us=%u errors=%" PRIu64 "\n", l.ops,
	       (double)l.ops / (double)seconds, (double)l.ops * l.bs / (double)seconds / (1024.0 * 1024.0),
	       percentile(l.lat_us, l.nlat, 0.50), percentile(l.lat_us, l.nlat, 0.99), l.errors);
	rc = l.lost || l.errors ? 1 : 0;
out:
	for (unsigned i = 0; i < l.nsessions; i++) {
		if (!l.ctx[i])
			continue;
		if (!l.lost)
			iscsi_logout_sync(l.ctx[i]);
		iscsi_destroy_context(l.ctx[i]);
	}
	for (size_t i = 0; slots && i < qd * sessions; i++)
		free(slots[i].buf);
	free(slots);
	free(l.lat_us);
	return rc;
}
