/*
 * bench_copy: a copy of BYTES inside one LU, from LBA SRC to LBA DST, done
 * three ways (scripts/bench --copy, docs/copy.md):
 *   host   the host reads and writes the bytes over iSCSI, in pieces of
 *          1 MiB, 8 pieces in flight (each read, then written);
 *   xcopy  EXTENDED COPY(LID1), block-to-block segments of 16 MiB, 16 per
 *          command (the copy manager's limit, RECEIVE COPY RESULTS
 *          OPERATING PARAMETERS);
 *   token  POPULATE TOKEN of the source, RECEIVE ROD TOKEN INFORMATION,
 *          WRITE USING TOKEN to the destination (SBC-4).
 * Prints one line: mode=M bytes=N seconds=S mib_s=R.  Exits 1 when a
 * command fails (its sense on stderr).
 *
 * usage: bench_copy PORTAL TARGET LUN --mode host|xcopy|token --bytes N
 *                   [--src LBA] [--dst LBA]
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define PIECE (1u << 20)
#define HOST_DEPTH 8 /* the host's copy: pieces in flight */
#define SEGMENT_BLOCKS_MAX 32768u /* 16 MiB of 512-byte blocks */
#define SEGMENTS_PER_LIST 16

static struct iscsi_context *ctx;
static int lun;
static uint32_t block_size;

/* One CDB with optional Data-Out or Data-In; the task (the caller frees it), or NULL after a message. */
static struct scsi_task *command(const char *what, const uint8_t *cdb, int cdb_len, const uint8_t *out,
				 uint32_t out_len, uint32_t in_len)
{
	struct scsi_task *t = calloc(1, sizeof(*t));
	struct iscsi_data d = { .data = (unsigned char *)out, .size = out_len };

	if (!t)
		return NULL;
	memcpy(t->cdb, cdb, (size_t)cdb_len);
	t->cdb_size = cdb_len;
	t->xfer_dir = out_len ? SCSI_XFER_WRITE : in_len ? SCSI_XFER_READ : SCSI_XFER_NONE;
	t->expxferlen = out_len ? out_len : in_len;
	if (!iscsi_scsi_command_sync(ctx, lun, t, out_len ? &d : NULL) || t->status != SCSI_STATUS_GOOD) {
		fprintf(stderr, "bench_copy: %s failed: %s\n", what, iscsi_get_error(ctx));
		scsi_free_scsi_task(t);
		return NULL;
	}
	return t;
}

/* The LU's NAA designator as an E4h CSCD descriptor (32 bytes), or false. */
static bool cscd_of_lu(uint8_t d[32])
{
	uint8_t cdb[6] = { 0x12, 0x01, 0x83, 0x01, 0x00, 0 };
	struct scsi_task *t = command("INQUIRY VPD 83h", cdb, 6, NULL, 0, 256);
	bool ok = false;

	for (int off = 4; t && off + 4 <= t->datain.size && !ok; off += 4 + t->datain.data[off + 3]) {
		const uint8_t *p = t->datain.data + off;

		if ((p[1] & 0x3f) == 0x03 && p[3] <= 20) {
			memset(d, 0, 32);
			d[0] = 0xe4;
			memcpy(d + 4, p, 4 + (size_t)p[3]);
			d[4] &= 0x0f;
			d[5] &= 0x3f;
			put_be24(d + 29, block_size);
			ok = true;
		}
	}
	if (t)
		scsi_free_scsi_task(t);
	return ok;
}

/* The host's copy: pieces of 1 MiB, each read then written, HOST_DEPTH of them in flight. */
struct piece {
	uint64_t off;            /* blocks into the copy */
	struct scsi_task *read;  /* while its data is written */
};

static struct {
	uint64_t src, dst, blocks, next; /* next: blocks handed out */
	unsigned inflight;
	bool failed;
} host;

static void host_next(struct piece *p);

static void host_done(struct iscsi_context *c, int status, void *command_data, void *private_data)
{
	struct scsi_task *t = command_data;
	struct piece *p = private_data;

	(void)c;
	host.inflight--;
	if (status != SCSI_STATUS_GOOD) {
		fprintf(stderr, "bench_copy: %s failed: %s\n", p->read ? "WRITE(16)" : "READ(16)", iscsi_get_error(ctx));
		host.failed = true;
		scsi_free_scsi_task(t);
	} else if (!p->read) {
		/* The read's buffer is the write's data: kept until the write is done. */
		p->read = t;
		if (iscsi_write16_task(ctx, lun, host.dst + p->off, t->datain.data, PIECE, block_size, 0, 0, 0, 0, 0,
				       host_done, p))
			host.inflight++;
		else
			host.failed = true;
		return;
	} else {
		scsi_free_scsi_task(t);
		scsi_free_scsi_task(p->read);
		p->read = NULL;
		host_next(p);
	}
}

static void host_next(struct piece *p)
{
	if (host.failed || host.next >= host.blocks)
		return;
	p->off = host.next;
	p->read = NULL;
	host.next += PIECE / block_size;
	if (!iscsi_read16_task(ctx, lun, host.src + p->off, PIECE, block_size, 0, 0, 0, 0, 0, host_done, p))
		host.failed = true;
	else
		host.inflight++;
}

static bool copy_host(uint64_t src, uint64_t dst, uint64_t bytes)
{
	struct piece pieces[HOST_DEPTH];

	host.src = src;
	host.dst = dst;
	host.blocks = bytes / block_size;
	for (unsigned i = 0; i < HOST_DEPTH; i++)
		host_next(&pieces[i]);
	while (host.inflight) {
		struct pollfd pfd = { .fd = iscsi_get_fd(ctx), .events = (short)iscsi_which_events(ctx) };

		if (poll(&pfd, 1, 1000) < 0)
			continue;
		if (iscsi_service(ctx, pfd.revents) < 0) {
			fprintf(stderr, "bench_copy: the session failed: %s\n", iscsi_get_error(ctx));
			return false;
		}
	}
	return !host.failed;
}

static bool copy_xcopy(uint64_t src, uint64_t dst, uint64_t bytes)
{
	uint64_t blocks = bytes / block_size, done = 0;
	uint8_t list[16 + 32 + 28 * SEGMENTS_PER_LIST];

	if (!cscd_of_lu(list + 16))
		return false;
	while (done < blocks) {
		uint8_t cdb[16] = { 0x83, 0x00 };
		unsigned n = 0;
		struct scsi_task *t;

		memset(list, 0, 16);
		list[1] = 0x3 << 3; /* LIST ID USAGE 11b: nothing held */
		put_be16(list + 2, 32);
		for (; n < SEGMENTS_PER_LIST && done < blocks; n++) {
			uint8_t *s = list + 48 + 28 * n;
			uint64_t k = blocks - done < SEGMENT_BLOCKS_MAX ? blocks - done : SEGMENT_BLOCKS_MAX;

			memset(s, 0, 28);
			s[0] = 0x02;
			s[3] = 0x18;
			put_be16(s + 10, (uint16_t)k);
			put_be64(s + 12, src + done);
			put_be64(s + 20, dst + done);
			done += k;
		}
		put_be32(list + 8, 28 * n);
		put_be32(cdb + 10, 48 + 28 * n);
		t = command("EXTENDED COPY", cdb, 16, list, 48 + 28 * n, 0);
		if (!t)
			return false;
		scsi_free_scsi_task(t);
	}
	return true;
}

static bool copy_token(uint64_t src, uint64_t dst, uint64_t bytes)
{
	uint8_t pt[16] = { 0x83, 0x10 }, rrti[16] = { 0x84, 0x07 }, wut[16] = { 0x83, 0x11 };
	uint8_t pl[32] = { 0 }, wl[552] = { 0 };
	struct scsi_task *t;

	put_be32(pt + 6, 1);
	put_be32(pt + 10, sizeof(pl));
	put_be16(pl, sizeof(pl) - 2);
	put_be16(pl + 14, 16);
	put_be64(pl + 16, src);
	put_be32(pl + 24, (uint32_t)(bytes / block_size));
	t = command("POPULATE TOKEN", pt, 16, pl, sizeof(pl), 0);
	if (!t)
		return false;
	scsi_free_scsi_task(t);
	put_be32(rrti + 2, 1);
	put_be32(rrti + 10, 1024);
	t = command("RECEIVE ROD TOKEN INFORMATION", rrti, 16, NULL, 0, 1024);
	if (!t)
		return false;
	if (t->datain.size < 32 + 4 + 2 + 512 || t->datain.data[13] != 0) {
		fprintf(stderr, "bench_copy: no token in RECEIVE ROD TOKEN INFORMATION\n");
		scsi_free_scsi_task(t);
		return false;
	}
	memcpy(wl + 16, t->datain.data + 38, 512);
	scsi_free_scsi_task(t);
	put_be16(wl, sizeof(wl) - 2);
	wl[2] = 0x02; /* DEL_TKN: used once */
	put_be16(wl + 534, 16);
	put_be64(wl + 536, dst);
	put_be32(wl + 544, (uint32_t)(bytes / block_size));
	put_be32(wut + 6, 2);
	put_be32(wut + 10, sizeof(wl));
	t = command("WRITE USING TOKEN", wut, 16, wl, sizeof(wl), 0);
	if (!t)
		return false;
	scsi_free_scsi_task(t);
	return true;
}

int main(int argc, char **argv)
{
	const char *mode = NULL;
	unsigned long bytes = 0, src = 0, dst = 0, lun_arg;
	struct scsi_task *cap;
	double t0, t1;
	bool ok;

	if (argc < 4 || bench_parse_uint(argv[3], 255, &lun_arg) != 0)
		goto usage;
	for (int i = 4; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--mode") == 0)
			mode = argv[i + 1];
		else if (strcmp(argv[i], "--bytes") == 0 && bench_parse_uint(argv[i + 1], 1ul << 40, &bytes) == 0)
			;
		else if (strcmp(argv[i], "--src") == 0 && bench_parse_uint(argv[i + 1], ~0ul, &src) == 0)
			;
		else if (strcmp(argv[i], "--dst") == 0 && bench_parse_uint(argv[i + 1], ~0ul, &dst) == 0)
			;
		else
			goto usage;
	}
	if (!mode || bytes == 0 || bytes % PIECE)
		goto usage;
	lun = (int)lun_arg;
	ctx = bench_open_session("bench_copy", "iqn.2026-12.org.sbcemu:bench-copy", argv[1], argv[2], lun, 120);
	if (!ctx)
		return 1;
	cap = iscsi_readcapacity16_sync(ctx, lun);
	if (!cap || cap->status != SCSI_STATUS_GOOD || cap->datain.size < 12) {
		fprintf(stderr, "bench_copy: READ CAPACITY(16) failed\n");
		return 1;
	}
	block_size = get_be32(cap->datain.data + 8);
	scsi_free_scsi_task(cap);
	t0 = bench_now();
	if (strcmp(mode, "host") == 0)
		ok = copy_host(src, dst, bytes);
	else if (strcmp(mode, "xcopy") == 0)
		ok = copy_xcopy(src, dst, bytes);
	else if (strcmp(mode, "token") == 0)
		ok = copy_token(src, dst, bytes);
	else
		goto usage;
	t1 = bench_now();
	iscsi_logout_sync(ctx);
	iscsi_destroy_context(ctx);
	if (!ok)
		return 1;
	printf("mode=%s bytes=%lu seconds=%.3f mib_s=%.1f\n", mode, bytes, t1 - t0, bytes / 1048576.0 / (t1 - t0));
	return 0;
usage:
	fprintf(stderr, "usage: bench_copy PORTAL TARGET LUN --mode host|xcopy|token --bytes N (a multiple of 1 MiB) "
			"[--src LBA] [--dst LBA]\n");
	return 2;
}
