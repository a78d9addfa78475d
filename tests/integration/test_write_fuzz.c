/*
 * Bad input never hurts, atomic and scattered writes (docs/atomic.md): many
 * random WRITE SCATTERED(16) and (32) commands (LBDOF, descriptor count, BUFFER
 * TRANSFER LENGTH, descriptors with overlaps, zero lengths, ranges past the
 * end, WRPROTECT / DPO / FUA / reserved bits, a Data-Out shorter or longer
 * than the CDB says) and WRITE ATOMIC(16) and (32) commands (length,
 * alignment, boundary; the 32-byte forms through a raw session with an
 * Extended CDB AHS, their Data-Out kept within 8 KiB of immediate data)
 * against three LUs: one with every scattered and atomic limit
 * set, one with protection information (type 1), and one whose WRITE
 * SCATTERED is atomic as a whole behind a volatile write cache.
 *
 * Every answer must be GOOD or CHECK CONDITION with ILLEGAL REQUEST (or
 * ABORTED COMMAND), and the medium must hold exactly what the GOOD commands
 * wrote: the test keeps a shadow of each LU's first 2 MiB, where every
 * command aims (now and then past the end), and compares it with the LU
 * every 2000 commands, after a kill -9 in the middle (the volatile-cache LU
 * excepted: its unflushed writes are lost by design, so it is flushed
 * first) and at the end.  WRITE_FUZZ_SEED replays a run, WRITE_FUZZ_OPS sets
 * the count (default 8000).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "itest_raw.h"

#define BS 512u
#define AREA 4096u /* blocks of each LU the commands aim at (2 MiB) */
#define NLUNS 3

static const char config[] =
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\n"
	"size = 16M\n"
	"logical_block_size = 512\n"
	"write_scattered = true\n"
	"max_scattered_lba_range_descriptors = 8\n"
	"max_scattered_lba_range_transfer_length = 64\n"
	"max_scattered_transfer_length = 256\n"
	"max_atomic_transfer_length = 64\n"
	"atomic_alignment = 8\n"
	"atomic_transfer_length_granularity = 4\n"
	"max_atomic_transfer_length_with_boundary = 128\n"
	"max_atomic_boundary_size = 16\n"
	"allow_32_byte_cdbs = true\n"
	"[lun \"" ITEST_TARGET "\" 1]\n"
	"path = @DIR@/lun1.img\n"
	"size = 16M\n"
	"logical_block_size = 512\n"
	"protection_type = 1\n"
	"write_scattered = true\n"
	"max_atomic_transfer_length = 32\n"
	"[lun \"" ITEST_TARGET "\" 2]\n"
	"path = @DIR@/lun2.img\n"
	"size = 16M\n"
	"logical_block_size = 512\n"
	"write_scattered = true\n"
	"write_scattered_atomic = true\n"
	"volatile_write_cache = true\n"
	"max_atomic_transfer_length = 256\n"
	"allow_32_byte_cdbs = true\n";

static struct itest_daemon d;
static struct iscsi_context *s;
static struct itest_raw raw; /* the 32-byte CDBs (libiscsi sends at most 16 bytes) */
static uint64_t rng;
static uint8_t shadow[NLUNS][AREA * BS];
static unsigned bad_answers, bad_media;
static unsigned long counts[3]; /* GOOD, ILLEGAL REQUEST, ABORTED COMMAND */
static unsigned long long_good; /* GOOD answers to 32-byte CDBs */

static uint64_t rnd(void)
{
	return itest_rnd(&rng);
}

static uint64_t below(uint64_t n)
{
	return itest_below(&rng, n);
}

/* Mostly inside the area, now and then at or past the end of the LU (32768 blocks). */
static uint64_t pick_lba(void)
{
	switch (below(20)) {
	case 0:
		return 32768 - below(8);
	case 1:
		return 32768 + below(4);
	case 2:
		return rnd();
	default:
		return below(AREA - 80);
	}
}

/* Copies what a GOOD command wrote into the shadow (the part inside the area). */
static void shadow_write(int lun, uint64_t lba, uint32_t n, const uint8_t *data)
{
	if (lba < AREA)
		memcpy(shadow[lun] + lba * BS, data, (size_t)(n < AREA - lba ? n : AREA - lba) * BS);
}

static int classify(const struct itest_result *r)
{
	if (r->status == 0)
		return 0;
	if (r->status == 2 && r->sense.key == 5)
		return 1;
	if (r->status == 2 && r->sense.key == 0xb)
		return 2;
	return -1;
}

static void answer(const struct itest_result *r, const char *what)
{
	int k = classify(r);

	if (k >= 0)
		counts[k]++;
	else if (++bad_answers <= 5)
		itest_note("%s: %s", what, itest_result_str(r));
}

/* Sends a 16- or 32-byte CDB with Data-Out. */
static void send(int lun, const uint8_t *cdb, int cdb_len, const void *out, size_t len, struct itest_result *r)
{
	if (cdb_len == 16)
		itest_cmd(s, lun, cdb, 16, len ? ITEST_OUT : ITEST_NONE, len ? out : NULL, len, 0, r);
	else
		itest_raw_long_cdb_cmd(&raw, lun, cdb, cdb_len, out, (uint32_t)len, r);
}

static void fuzz_scattered(int lun)
{
	bool long_cdb = below(4) == 0;
	unsigned count = (unsigned)(long_cdb ? below(4) : below(4) ? 1 + below(8) : below(12));
	uint64_t lba[12];
	uint32_t nb[12], sum = 0, btl;
	uint16_t lbdof = (uint16_t)(below(6) ? 1 + (32 + 32 * count) / BS : below(3));
	uint8_t cdb[32] = { 0x9f, 0x12 }, *buf;
	size_t len, need;
	struct itest_result r;
	uint64_t pos = 0;

	for (unsigned i = 0; i < count; i++) {
		lba[i] = below(8) ? pick_lba() : i ? lba[i - 1] + below(3) : 0; /* sometimes overlapping */
		nb[i] = (uint32_t)(long_cdb ? below(4) : below(10) ? 1 + below(24) : below(80));
		sum += nb[i];
	}
	btl = below(6) ? sum : (uint32_t)below(sum + 4);
	need = ((size_t)lbdof + btl) * BS;
	len = below(8) || need < BS ? need : below(3) ? need - BS * below(2) : need + BS;
	buf = calloc(1, need + BS);
	for (unsigned i = 0; i < count && 32 + 32 * (i + 1) <= (size_t)lbdof * BS; i++) {
		itest_put_be64(buf + 32 + 32 * i, lba[i]);
		itest_put_be32(buf + 32 + 32 * i + 8, nb[i]);
		if (below(30) == 0)
			buf[32 + 32 * i + 12 + below(20)] = (uint8_t)rnd(); /* reserved bytes */
	}
	itest_pattern(buf + (size_t)lbdof * BS, (size_t)btl * BS, (uint32_t)rnd());
	if (below(15) == 0)
		cdb[2] = (uint8_t)(below(8) << 5); /* WRPROTECT */
	if (below(8) == 0)
		cdb[2] |= 0x18; /* DPO, FUA */
	if (below(30) == 0)
		cdb[3 + 3 * below(2)] = (uint8_t)rnd(); /* reserved bytes 3, 6 */
	itest_put_be16(cdb + 4, lbdof);
	itest_put_be16(cdb + 8, (uint16_t)count);
	itest_put_be32(cdb + 10, btl);
	if (long_cdb) { /* WRITE SCATTERED(32): 7Fh, SA 0011h; b10 flags, b12 LBDOF, b16 count, b28 BTL */
		uint8_t flags = cdb[2];

		memset(cdb, 0, sizeof(cdb));
		cdb[0] = 0x7f;
		cdb[7] = 0x18;
		cdb[9] = 0x11;
		cdb[10] = flags;
		itest_put_be16(cdb + 12, lbdof);
		itest_put_be16(cdb + 16, (uint16_t)count);
		itest_put_be32(cdb + 28, btl);
	}
	send(lun, cdb, long_cdb ? 32 : 16, buf, len, &r);
	answer(&r, long_cdb ? "WRITE SCATTERED(32)" : "WRITE SCATTERED(16)");
	long_good += long_cdb && r.status == 0;
	if (r.status == 0) {
		for (unsigned i = 0; i < count; i++) {
			shadow_write(lun, lba[i], nb[i], buf + (size_t)lbdof * BS + pos * BS);
			pos += nb[i];
		}
	}
	itest_result_free(&r);
	free(buf);
}

static void fuzz_atomic(int lun)
{
	bool long_cdb = below(4) == 0;
	uint64_t lba = below(4) ? below(AREA / 8) * 8 : pick_lba();
	uint32_t n = (uint32_t)(long_cdb ? below(17) : below(3) ? 4 * (1 + below(16)) : below(300));
	uint16_t boundary = (uint16_t)(below(4) ? 0 : below(3) ? 4 * below(8) : below(40));
	uint8_t cdb[32] = { 0x9c }, *buf = malloc((size_t)(n ? n : 1) * BS);
	size_t len = (size_t)n * BS;
	struct itest_result r;

	itest_pattern(buf, len, (uint32_t)rnd());
	if (below(15) == 0)
		cdb[1] = (uint8_t)(below(8) << 5);
	itest_put_be64(cdb + 2, lba);
	itest_put_be16(cdb + 10, boundary);
	itest_put_be16(cdb + 12, (uint16_t)n);
	if (long_cdb) { /* WRITE ATOMIC(32): 7Fh, SA 000Fh; b10 flags, b12 LBA, b28 TRANSFER LENGTH */
		uint8_t flags = cdb[1];

		memset(cdb, 0, sizeof(cdb));
		cdb[0] = 0x7f;
		cdb[7] = 0x18;
		cdb[9] = 0x0f;
		cdb[10] = flags;
		itest_put_be64(cdb + 12, lba);
		itest_put_be32(cdb + 28, n);
	}
	send(lun, cdb, long_cdb ? 32 : 16, buf, len, &r);
	answer(&r, long_cdb ? "WRITE ATOMIC(32)" : "WRITE ATOMIC(16)");
	long_good += long_cdb && r.status == 0;
	if (r.status == 0)
		shadow_write(lun, lba, n, buf);
	itest_result_free(&r);
	free(buf);
}

/* The first AREA blocks of each LU against the shadow. */
static void compare(const char *when)
{
	uint8_t *got = malloc(256 * BS);

	for (int lun = 0; lun < NLUNS; lun++) {
		for (uint32_t b = 0; b < AREA; b += 256) {
			if (!itest_read16(s, lun, b, got, 256, BS, "READ(16)") ||
			    memcmp(got, shadow[lun] + (size_t)b * BS, 256 * BS) != 0) {
				if (++bad_media <= 5)
					itest_note("%s: LUN %d blocks %u-%u differ from what the GOOD commands wrote", when,
						   lun, b, b + 255);
				break;
			}
		}
	}
	free(got);
}

/* The libiscsi session and the raw one (immediate data for the 32-byte CDBs), unit attentions cleared. */
static bool connect_both(void)
{
	char err[256];

	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s)
		return false;
	if (itest_raw_login(&raw, &d, ITEST_INITIATOR_2, ITEST_TARGET, false, false, true, err, sizeof(err)))
		return itest_ok(false, "raw session for the 32-byte CDBs", "%s", err);
	for (int lun = 0; lun < NLUNS; lun++) {
		itest_clear_ua(s, lun);
		itest_raw_clear_ua(&raw, lun);
	}
	return true;
}

int main(int argc, char **argv)
{
	const char *env_ops = getenv("WRITE_FUZZ_OPS");
	unsigned long ops = env_ops ? strtoul(env_ops, NULL, 10) : 8000;
	uint64_t seed = itest_seed("WRITE_FUZZ_SEED");
	uint8_t sync_cache[10] = { 0x35 };

	itest_init(argc, argv, "test_write_fuzz: random WRITE SCATTERED and WRITE ATOMIC commands");
	rng = seed;
	itest_note("seed %llu (replay: WRITE_FUZZ_SEED=%llu), %lu commands", (unsigned long long)rng,
		   (unsigned long long)rng, ops);
	itest_daemon_up(&d, "write-fuzz", config);
	if (!connect_both())
		return itest_finish();
	for (unsigned long i = 1; i <= ops; i++) {
		int lun = (int)below(NLUNS);

		if (below(3))
			fuzz_scattered(lun);
		else
			fuzz_atomic(lun);
		if (i % 2000 == 0)
			compare("during the run");
		if (i == ops / 2) {
			struct itest_result r;

			itest_cmd(s, 2, sync_cache, 10, ITEST_NONE, NULL, 0, 0, &r);
			itest_result_free(&r);
			itest_close(s);
			itest_raw_close(&raw);
			itest_daemon_stop(&d, SIGKILL);
			itest_daemon_start(&d);
			if (!connect_both())
				return itest_finish();
			compare("after kill -9");
		}
	}
	compare("at the end");
	itest_ok(bad_answers == 0, "every answer is GOOD or CHECK CONDITION with ILLEGAL REQUEST / ABORTED COMMAND",
		 "%u other answers (seed %llu)", bad_answers, (unsigned long long)seed);
	itest_ok(bad_media == 0,
		 "the media hold exactly what the GOOD commands wrote (refused ones wrote nothing), also after kill -9",
		 "%u differing spans (seed %llu)", bad_media, (unsigned long long)seed);
	itest_ok(counts[0] > ops / 10 && counts[1] > ops / 10 && long_good > ops / 100,
		 "the run reached both GOOD and ILLEGAL REQUEST answers, GOOD ones for 32-byte CDBs too",
		 "GOOD %lu (32-byte %lu), ILLEGAL REQUEST %lu, ABORTED COMMAND %lu", counts[0], long_good, counts[1],
		 counts[2]);
	itest_note("GOOD %lu (32-byte %lu), ILLEGAL REQUEST %lu, ABORTED COMMAND %lu", counts[0], long_good, counts[1],
		   counts[2]);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_close(s);
	itest_raw_close(&raw);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
