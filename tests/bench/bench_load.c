/*
 * bench_load: the project's load generator for scripts/bench, on
 * libiscsi's asynchronous API: S sessions, each keeping QD READ(16) and
 * WRITE(16) (or WRITE ATOMIC(16)) commands of BS bytes in flight for
 * SECONDS, random or sequential LBAs, reads and writes mixed in a given
 * share.  It prints one line of key=value for the script:
 *
 *   ops=123456 iops=41152 mib_s=160.8 p50_us=760 p99_us=1480 errors=0
 *
 * Usage: bench_load PORTAL TARGET LUN [--qd N] [--bs BYTES] [--read-pct P]
 *                   [--seq] [--seconds N] [--sessions N] [--seed N]
 *                   [--opcode write16|writeatomic16] [--luns L1,L2,...]
 *                   [--zoned] [--streams] [--fill] [--fua]
 *   --qd N      commands in flight per session
 *   --seq       sequential LBAs, each session its own stream from LBA 0
 *   --streams   writes only: the LU cut into as many equal regions as there
 *               are command slots (QD x S), each slot writing its own region
 *               sequentially, one command in flight each: the access pattern
 *               of --zoned on a conventional LU (its baseline in scripts/bench)
 *   --opcode    what the writes are: WRITE(16) or WRITE ATOMIC(16) (SBC-4
 *               5.48; checked against the Block Limits VPD page first)
 *   --fua       WRITE(16) with FUA = 1 (SBC-4 5.47): durable when acknowledged,
 *               as every WRITE ATOMIC is, so the fair baseline for its cost
 *   --luns      session i logs into LUN Li mod the list's length (replaces LUN)
 *   --zoned     a host-managed zoned LU (ZBC): every write pointer is reset
 *               (ZBC OUT RESET WRITE POINTER, ALL = 1) first; then each of the
 *               QD x S command slots owns its own sequential write required
 *               zones (slot i: zones i, i + QD x S, ...) and writes
 *               sequentially at its zone's write pointer, one command in
 *               flight per zone, since ZBC fails a write that does not start
 *               at the write pointer (ZBC-2 4.5.3.4.2) and commands in
 *               flight together may be reordered; a slot's next zone is reset
 *               before it is written again.  Writes only.
 *   --fill      write every block of the LU(s) once, sequentially, then stop
 *               (no --seconds): an LU with protection information must be
 *               written before reads of it check anything (docs/pi.md)
 */
#include <inttypes.h>
#include <malloc.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define MAX_SESSIONS 64
#define MAX_LUNS 16
#define LAT_MAX (1u << 22) /* latency samples kept (the first ones; enough for percentiles) */
#define ZONES_ALLOC (64u * 1024) /* REPORT ZONES allocation length: the header and 1023 zones */

struct session {
	struct iscsi_context *ctx;
	int lun;
	uint64_t nblocks;   /* of its LU */
	uint64_t next_lba;  /* sequential and fill: the next one */
	int filled;         /* fill: the LU's last block has been sent */
};

/* A sequential write required zone; each belongs to one slot. */
struct zone {
	uint64_t start, len, wp; /* in logical blocks; wp: where the next write goes */
};

struct load {
	struct session s[MAX_SESSIONS];
	unsigned nsessions;
	uint32_t bs, block;     /* transfer bytes, logical block bytes */
	unsigned read_pct;
	int seq, fill, atomic, fua, streams;
	struct zone *zones;     /* --zoned: the LU's sequential write required zones */
	unsigned nzones, nslots;
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
	unsigned zone;          /* --zoned: index of the zone it writes now */
	uint64_t region_start, region_len, region_next; /* --streams: its region, the next LBA in it */
	int resetting;          /* --zoned: the command in flight is a RESET WRITE POINTER */
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
		struct scsi_task *task = command_data;

		if (l->errors++ < 5 && task && task->sense.key)
			fprintf(stderr, "bench_load: %s: sense %x/%02x/%02x\n",
				s->resetting ? "RESET WRITE POINTER" : "command", task->sense.key,
				task->sense.ascq >> 8, task->sense.ascq & 0xff);
	} else if (!s->resetting && (l->fill || t <= l->t_end)) {
		l->ops++;
		if (l->nlat < LAT_MAX)
			l->lat_us[l->nlat++] = (uint32_t)((t - s->t0) * 1e6);
	}
	s->resetting = 0;
	if (command_data)
		scsi_free_scsi_task(command_data);
	if (l->running && !l->lost)
		submit(s);
}

/* ZBC OUT (94h) RESET WRITE POINTER (service action 04h, ZBC-2 5.6): of the zone at lba, or of all zones. */
static struct scsi_task *reset_wp_task(uint64_t lba, int all)
{
	uint8_t cdb[16] = { 0x94, 0x04 };

	put_be64(cdb + 2, lba);
	cdb[14] = all ? 1 : 0;
	return scsi_create_task(16, cdb, SCSI_XFER_NONE, 0);
}

/* --zoned: the LBA of the slot's next write; 0 after queueing a RESET WRITE POINTER of its next zone instead. */
static int zoned_next(struct slot *s, uint32_t blocks, uint64_t *lba)
{
	struct load *l = s->l;
	struct zone *z = &l->zones[s->zone];
	struct session *se = &l->s[s->session];
	struct scsi_task *t;

	if (z->wp + blocks <= z->start + z->len) {
		*lba = z->wp;
		z->wp += blocks;
		return 1;
	}
	s->zone = s->zone + l->nslots < l->nzones ? s->zone + l->nslots : s->zone % l->nslots;
	z = &l->zones[s->zone];
	if (z->wp == z->start) /* still empty */
		return zoned_next(s, blocks, lba);
	t = reset_wp_task(z->start, 0);
	if (!t || iscsi_scsi_command_async(se->ctx, se->lun, t, done, NULL, s) != 0) {
		fprintf(stderr, "bench_load: cannot queue a RESET WRITE POINTER: %s\n", iscsi_get_error(se->ctx));
		if (t)
			scsi_free_scsi_task(t);
		l->lost = 1;
		return 0;
	}
	z->wp = z->start;
	s->resetting = 1;
	s->t0 = bench_now();
	l->inflight++;
	return 0;
}

static void submit(struct slot *s)
{
	struct load *l = s->l;
	struct session *se = &l->s[s->session];
	uint32_t blocks = l->bs / l->block;
	uint64_t span = se->nblocks - blocks + 1, lba;
	int read = !l->fill && (unsigned)(bench_rnd(&l->rng) % 100) < l->read_pct;
	uint32_t len = l->bs;
	struct scsi_task *t;

	if (l->zones) {
		if (!zoned_next(s, blocks, &lba))
			return;
	} else if (l->streams) {
		lba = s->region_start + s->region_next;
		s->region_next = s->region_next + 2 * blocks <= s->region_len ? s->region_next + blocks : 0;
	} else if (l->fill) {
		if (se->filled)
			return; /* this slot idles; the run ends when all have */
		lba = se->next_lba;
		if (se->nblocks - lba <= blocks) {
			len = (uint32_t)(se->nblocks - lba) * l->block; /* the last, maybe shorter */
			se->filled = 1;
		}
		se->next_lba += blocks;
	} else if (l->seq) {
		lba = se->next_lba;
		se->next_lba = (se->next_lba + blocks) % span;
	} else {
		lba = (bench_rnd(&l->rng) % (span / blocks)) * blocks; /* aligned to the transfer */
	}
	s->iov.iov_base = s->buf;
	s->iov.iov_len = len;
	s->t0 = bench_now();
	if (read)
		t = iscsi_read16_iov_task(se->ctx, se->lun, lba, len, (int)l->block, 0, 0, 0, 0, 0, done, s, &s->iov,
					  1);
	else if (l->atomic)
		t = iscsi_writeatomic16_iov_task(se->ctx, se->lun, lba, NULL, len, (int)l->block, 0, 0, 0, 0, done, s,
						 &s->iov, 1);
	else
		t = iscsi_write16_iov_task(se->ctx, se->lun, lba, NULL, len, (int)l->block, 0, 0, l->fua, 0, 0, done,
					   s, &s->iov, 1);
	if (!t) {
		fprintf(stderr, "bench_load: cannot queue a command: %s\n", iscsi_get_error(se->ctx));
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

/* READ CAPACITY(16) of session i's LU: its block count; the block size, the same on every LU. */
static int capacity(struct load *l, unsigned i)
{
	struct session *se = &l->s[i];
	struct scsi_task *t = iscsi_readcapacity16_sync(se->ctx, se->lun);
	struct scsi_readcapacity16 *rc16 = t && t->status == SCSI_STATUS_GOOD ? scsi_datain_unmarshall(t) : NULL;

	if (!rc16) {
		fprintf(stderr, "bench_load: READ CAPACITY(16) of LUN %d failed: %s\n", se->lun,
			iscsi_get_error(se->ctx));
		if (t)
			scsi_free_scsi_task(t);
		return -1;
	}
	if (l->block && l->block != rc16->block_length) {
		fprintf(stderr, "bench_load: LUN %d has %u-byte blocks, another %u\n", se->lun, rc16->block_length,
			l->block);
		scsi_free_scsi_task(t);
		return -1;
	}
	l->block = rc16->block_length;
	se->nblocks = rc16->returned_lba + 1;
	scsi_free_scsi_task(t);
	return 0;
}

/* --opcode writeatomic16: the Block Limits VPD page (SBC-4 6.6.4) must allow the transfer at any aligned LBA. */
static int check_atomic(struct load *l)
{
	struct session *se = &l->s[0];
	struct scsi_task *t = iscsi_inquiry_sync(se->ctx, se->lun, 1, SCSI_INQUIRY_PAGECODE_BLOCK_LIMITS, 255);
	struct scsi_inquiry_block_limits *bl = t && t->status == SCSI_STATUS_GOOD ? scsi_datain_unmarshall(t) : NULL;
	uint32_t blocks = l->bs / l->block;
	int ok;

	if (!bl) {
		fprintf(stderr, "bench_load: INQUIRY Block Limits VPD failed: %s\n", iscsi_get_error(se->ctx));
		if (t)
			scsi_free_scsi_task(t);
		return -1;
	}
	ok = bl->max_atomic_xfer_len >= blocks && (bl->atomic_align <= 1 || blocks % bl->atomic_align == 0) &&
	     (bl->atomic_gran <= 1 || blocks % bl->atomic_gran == 0);
	if (!ok)
		fprintf(stderr,
			"bench_load: WRITE ATOMIC(16) of %u blocks not allowed: MAXIMUM ATOMIC TRANSFER LENGTH %u, "
			"ATOMIC ALIGNMENT %u, GRANULARITY %u (set max_atomic_transfer_length)\n",
			blocks, bl->max_atomic_xfer_len, bl->atomic_align, bl->atomic_gran);
	scsi_free_scsi_task(t);
	return ok ? 0 : -1;
}

/*
 * --zoned: RESET WRITE POINTER of every zone, then REPORT ZONES (ZBC IN 95h,
 * service action 00h, ZBC-2 5.4: a 64-byte header, then one 64-byte
 * descriptor per zone: type in byte 0, ZONE LENGTH bytes 8-15, ZONE START
 * LBA bytes 16-23) for the sequential write required zones (type 2h).
 */
static int setup_zones(struct load *l)
{
	struct session *se = &l->s[0];
	uint8_t cdb[16] = { 0x95, 0x00 };
	struct scsi_task *t = reset_wp_task(0, 1);
	uint32_t blocks = l->bs / l->block, n;
	const uint8_t *d;

	if (!t || !iscsi_scsi_command_sync(se->ctx, se->lun, t, NULL) || t->status != SCSI_STATUS_GOOD) {
		fprintf(stderr, "bench_load: RESET WRITE POINTER (ALL) failed: %s\n", iscsi_get_error(se->ctx));
		if (t)
			scsi_free_scsi_task(t);
		return -1;
	}
	scsi_free_scsi_task(t);
	put_be32(cdb + 10, ZONES_ALLOC);
	t = scsi_create_task(16, cdb, SCSI_XFER_READ, ZONES_ALLOC);
	if (!t || !iscsi_scsi_command_sync(se->ctx, se->lun, t, NULL) || t->status != SCSI_STATUS_GOOD ||
	    t->datain.size < 64) {
		fprintf(stderr, "bench_load: REPORT ZONES failed: %s\n", iscsi_get_error(se->ctx));
		if (t)
			scsi_free_scsi_task(t);
		return -1;
	}
	d = t->datain.data;
	n = get_be32(d) / 64;
	if (n > (uint32_t)(t->datain.size - 64) / 64)
		n = (uint32_t)(t->datain.size - 64) / 64;
	l->zones = calloc(n ? n : 1, sizeof(*l->zones));
	for (uint32_t i = 0; l->zones && i < n; i++) {
		const uint8_t *z = d + 64 + 64 * i;

		if ((z[0] & 0x0f) != 0x2)
			continue;
		l->zones[l->nzones].start = l->zones[l->nzones].wp = get_be64(z + 16);
		l->zones[l->nzones].len = get_be64(z + 8);
		if (l->zones[l->nzones].len % blocks) {
			fprintf(stderr, "bench_load: --bs %u does not divide the %" PRIu64 "-block zones\n", l->bs,
				l->zones[l->nzones].len);
			n = 0;
			l->nzones = 0;
			break;
		}
		l->nzones++;
	}
	scsi_free_scsi_task(t);
	if (l->nzones < l->nslots) {
		fprintf(stderr, "bench_load: --zoned needs a sequential write required zone per command slot: "
				"%u for %u\n",
			l->nzones, l->nslots);
		return -1;
	}
	return 0;
}

/* "L1,L2,...": up to MAX_LUNS LUNs of 0 to 255. */
static int parse_luns(const char *arg, int *luns, unsigned *n)
{
	char buf[256], *tok, *save = NULL;
	unsigned long v;

	snprintf(buf, sizeof(buf), "%s", arg);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == MAX_LUNS || bench_parse_uint(tok, 255, &v) != 0)
			return -1;
		luns[(*n)++] = (int)v;
	}
	return *n ? 0 : -1;
}

int main(int argc, char **argv)
{
	unsigned long qd = 32, bs = 4096, read_pct = 100, seconds = 5, sessions = 1, seed = 1;
	struct load l = { 0 };
	struct slot *slots = NULL;
	struct pollfd pfd[MAX_SESSIONS];
	int luns[MAX_LUNS], zoned = 0;
	unsigned nluns = 1;
	double t_start, elapsed;
	int rc = 1;

	/*
	 * libiscsi allocates each command's Data-In buffer: keep freed ones in
	 * the heap rather than mmap and munmap 1 MiB per command (mallopt(3);
	 * the daemon does the same, daemon/sbcemud/main.c), so that the client
	 * does not cap the large transfers it measures.
	 */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	if (argc < 4) {
		fprintf(stderr, "usage: bench_load PORTAL TARGET LUN [--qd N] [--bs BYTES] [--read-pct P] [--seq] "
				"[--seconds N] [--sessions N] [--seed N] [--opcode write16|writeatomic16] "
				"[--luns L1,L2,...] [--zoned] [--streams] [--fill] [--fua]\n");
		return 2;
	}
	luns[0] = atoi(argv[3]);
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
		if (!strcmp(argv[i], "--zoned")) {
			zoned = 1;
			continue;
		}
		if (!strcmp(argv[i], "--streams")) {
			l.streams = 1;
			continue;
		}
		if (!strcmp(argv[i], "--fua")) {
			l.fua = 1;
			continue;
		}
		if (!strcmp(argv[i], "--fill")) {
			l.fill = 1;
			continue;
		}
		if (!strcmp(argv[i], "--opcode") && i + 1 < argc) {
			i++;
			if (strcmp(argv[i], "write16") && strcmp(argv[i], "writeatomic16")) {
				fprintf(stderr, "bench_load: --opcode write16 or writeatomic16, not %s\n", argv[i]);
				return 2;
			}
			l.atomic = !strcmp(argv[i], "writeatomic16");
			continue;
		}
		if (!strcmp(argv[i], "--luns") && i + 1 < argc) {
			if (parse_luns(argv[++i], luns, &nluns) != 0) {
				fprintf(stderr, "bench_load: --luns takes 1 to %d LUNs (0-255), comma-separated\n",
					MAX_LUNS);
				return 2;
			}
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
	if ((zoned || l.streams) && (read_pct || nluns > 1 || l.fill || (zoned && l.streams))) {
		fprintf(stderr, "bench_load: --zoned or --streams writes one LU (--read-pct 0, one LUN, no --fill)\n");
		return 2;
	}
	l.nsessions = (unsigned)sessions;
	l.nslots = (unsigned)(qd * sessions);
	l.read_pct = (unsigned)read_pct;
	l.bs = (uint32_t)bs;
	l.rng = seed ? seed : 1;
	l.lat_us = malloc(LAT_MAX * sizeof(*l.lat_us));
	slots = calloc(l.nslots, sizeof(*slots));
	if (!l.lat_us || !slots)
		goto out;
	for (unsigned i = 0; i < l.nsessions; i++) {
		char initiator[128];

		snprintf(initiator, sizeof(initiator), "iqn.2026-12.org.sbcemu:bench-load-%u", i);
		l.s[i].lun = luns[i % nluns];
		l.s[i].ctx = bench_open_session("bench_load", initiator, argv[1], argv[2], l.s[i].lun, 30);
		if (!l.s[i].ctx || capacity(&l, i) != 0)
			goto out;
		if (l.bs % l.block || l.bs / l.block > l.s[i].nblocks) {
			fprintf(stderr,
				"bench_load: --bs %u is not a multiple of the %u-byte block, or larger than LUN %d\n",
				l.bs, l.block, l.s[i].lun);
			goto out;
		}
	}
	/* --fill: one session per LU does it (the others would write the same blocks again). */
	if (l.fill && nluns < l.nsessions) {
		for (unsigned i = nluns; i < l.nsessions; i++)
			l.s[i].filled = 1;
	}
	if (l.atomic && check_atomic(&l) != 0)
		goto out;
	if (zoned && setup_zones(&l) != 0)
		goto out;
	for (size_t i = 0; i < l.nslots; i++) {
		slots[i] = (struct slot){
			.l = &l, .session = (int)(i % sessions), .zone = (unsigned)i, .buf = malloc(bs)
		};
		if (!slots[i].buf)
			goto out;
		memset(slots[i].buf, (int)(i & 0xff), bs);
		if (l.streams) {
			/* Regions of whole transfers; slot i writes the i-th. */
			uint32_t blocks = l.bs / l.block;
			uint64_t len = l.s[0].nblocks / l.nslots / blocks * blocks;

			if (len < blocks) {
				fprintf(stderr, "bench_load: --streams needs a transfer per slot within the LU\n");
				goto out;
			}
			slots[i].region_start = i * len;
			slots[i].region_len = len;
		}
	}
	l.running = 1;
	t_start = bench_now();
	l.t_end = t_start + (l.fill ? 1e9 : (double)seconds);
	for (size_t i = 0; i < l.nslots && !l.lost; i++)
		submit(&slots[i]);
	while (!l.lost && (l.running || l.inflight)) {
		if (l.running && (bench_now() >= l.t_end || (l.fill && !l.inflight)))
			l.running = 0;
		if (bench_now() > l.t_end + 30) {
			fprintf(stderr, "bench_load: %u commands still outstanding 30 s after the end\n", l.inflight);
			l.lost = 1;
			break;
		}
		for (unsigned i = 0; i < l.nsessions; i++) {
			pfd[i].fd = iscsi_get_fd(l.s[i].ctx);
			pfd[i].events = (short)iscsi_which_events(l.s[i].ctx);
			pfd[i].revents = 0;
		}
		if (poll(pfd, l.nsessions, 100) < 0)
			continue;
		for (unsigned i = 0; i < l.nsessions && !l.lost; i++) {
			if (iscsi_service(l.s[i].ctx, pfd[i].revents) < 0) {
				fprintf(stderr, "bench_load: session %u failed: %s\n", i, iscsi_get_error(l.s[i].ctx));
				l.lost = 1;
			}
		}
	}
	elapsed = l.fill ? bench_now() - t_start : (double)seconds;
	qsort(l.lat_us, l.nlat, sizeof(*l.lat_us), cmp_u32);
	printf("ops=%" PRIu64 " iops=%.0f mib_s=%.1f p50_us=%u p99_us=%u errors=%" PRIu64 "\n", l.ops,
	       (double)l.ops / elapsed, (double)l.ops * l.bs / elapsed / (1024.0 * 1024.0),
	       percentile(l.lat_us, l.nlat, 0.50), percentile(l.lat_us, l.nlat, 0.99), l.errors);
	rc = l.lost || l.errors ? 1 : 0;
out:
	for (unsigned i = 0; i < l.nsessions; i++) {
		if (!l.s[i].ctx)
			continue;
		if (!l.lost)
			iscsi_logout_sync(l.s[i].ctx);
		iscsi_destroy_context(l.s[i].ctx);
	}
	for (size_t i = 0; slots && i < l.nslots; i++)
		free(slots[i].buf);
	free(slots);
	free(l.zones);
	free(l.lat_us);
	return rc;
}
