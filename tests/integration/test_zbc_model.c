/*
 * Randomized model test of a host-managed zoned LU: thousands of random
 * WRITE(16), READ(16), ZBC OUT (OPEN / CLOSE / FINISH / RESET WRITE POINTER,
 * with and without ALL) and REPORT ZONES (random options, PARTIAL, start and
 * allocation length) against the daemon and against a reference model of
 * the zone state and the data written, kept here.  Every status and sense
 * code, every byte read and every REPORT ZONES byte must match the model.
 * The daemon is restarted cleanly at one third of the run and killed with
 * SIGKILL at two thirds; after each restart the open zones are CLOSED (or
 * EMPTY with the write pointer at the zone start) and everything else is
 * as acknowledged.
 *
 * The model follows the rule table of ZBC-2, as Linux sd_zbc.c, scsi_debug and libzbc implement it (see
 * docs/zbc.md).  One choice the standard leaves to the device is fixed here:
 * when an implicit or explicit open needs a resource that an implicitly
 * opened zone holds, the lowest-numbered implicitly opened zone is closed
 * (as Linux scsi_debug does).
 *
 * The run is made twice: on a zbc-hm LU (LUN 1: conventional and SWR
 * zones), then on a zbc-zd LU with sobr_zones (LUN 2: ZBC-2, the first zone
 * domain's SOBR zones active, the SWR domain INACTIVE; docs/zbc.md): writes
 * at or below the write pointer, across SOBR zones, FINISH refused, no open
 * zone resources, INACTIVE zones refusing everything (URSWRZ 0), and
 * REPORT ZONES with the ZBC-2 reporting options 08h and 3Eh.
 *
 * Environment: ZBC_MODEL_SEED (decimal) replays a run; ZBC_MODEL_OPS sets
 * the number of random operations (default 20000 per LU).  The seed is
 * printed.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "itest_zbc.h"

#define BS 512u
#define ZS 128u                     /* zone size, blocks */
#define NZ 24u                      /* zones */
#define MAX_OPEN 4u
#define CAP ((uint64_t)NZ * ZS)
#define ZT_SOBR 4
#define ZC_INACTIVE 5

static const char config[] =
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\n"
	"size = 1M\n"
	"[lun \"" ITEST_TARGET "\" 1]\n"
	"kind = zbc-hm\n"
	"path = @DIR@/lun1.img\n"
	"size = 1536K\n"
	"zone_size = 64K\n"
	"conventional_zones = 2\n"
	"max_open_zones = 4\n"
	"urswrz = false\n"
	"offline_zones = 20\n"
	"read_only_zones = 21\n"
	"[lun \"" ITEST_TARGET "\" 2]\n"
	"kind = zbc-zd\n"
	"path = @DIR@/lun2.img\n"
	"size = 1536K\n"
	"zone_size = 64K\n"
	"realm_zones = 3\n"
	"active_domain = 0\n"
	"sobr_zones = true\n"
	"max_open_zones = 4\n"
	"urswrz = false\n"
	"offline_zones = 8\n"
	"read_only_zones = 9\n";

/*
 * The LU under test: LUN 1 (zbc-hm: zones 0-1 conventional, 2-23 SWR, 20
 * OFFLINE, 21 READ ONLY) or LUN 2 (zbc-zd: zones 0-11 SOBR, 8 OFFLINE, 9
 * READ ONLY; 12-23 SWR, INACTIVE).
 */
static int lun;
static bool zd;
static unsigned nconv;

struct mzone {
	int type, cond;
	uint64_t start, wp;
};

static struct mzone mz[NZ];
static uint8_t shadow[CAP * BS];
static uint64_t rng;
static struct itest_daemon d;
static struct iscsi_context *s;
static unsigned long op_index;
static unsigned mismatches;

static uint64_t below(uint64_t n)
{
	return itest_below(&rng, n);
}

/* ---- the model ---- */

#define SENSE(k, a, q) (((k) << 16) | ((a) << 8) | (q))

static void model_init(void)
{
	unsigned offline = zd ? 8 : 20, rdonly = zd ? 9 : 21;

	memset(shadow, 0, sizeof(shadow));
	for (unsigned i = 0; i < NZ; i++) {
		mz[i].start = (uint64_t)i * ZS;
		mz[i].wp = mz[i].start;
		if (zd) {
			mz[i].type = i < NZ / 2 ? ZT_SOBR : ZT_SWR;
			mz[i].cond = i >= NZ / 2 ? ZC_INACTIVE : ZC_EMPTY;
		} else {
			mz[i].type = i < nconv ? ZT_CONV : ZT_SWR;
			mz[i].cond = i < nconv ? ZC_NWP : ZC_EMPTY;
		}
		if (i == offline)
			mz[i].cond = ZC_OFFLINE;
		else if (i == rdonly)
			mz[i].cond = ZC_RDONLY;
	}
}

/* SWR zones in condition cond: only SWR zones take open zone resources (libzbc ZT_W_OZR). */
static unsigned count(int cond)
{
	unsigned n = 0;

	for (unsigned i = 0; i < NZ; i++)
		n += mz[i].cond == cond && mz[i].type == ZT_SWR;
	return n;
}

static void close_zone(struct mzone *z)
{
	z->cond = z->wp == z->start ? ZC_EMPTY : ZC_CLOSED;
}

/* Room for one more open zone: 0, or the packed sense. */
static int acquire(void)
{
	if (count(ZC_EOPEN) >= MAX_OPEN)
		return SENSE(7, 0x55, 0x0e);
	if (count(ZC_EOPEN) + count(ZC_IOPEN) >= MAX_OPEN) {
		for (unsigned i = 0; i < NZ; i++) {
			if (mz[i].cond == ZC_IOPEN && mz[i].type == ZT_SWR) {
				close_zone(&mz[i]);
				break;
			}
		}
	}
	return 0;
}

static int fault_sense(const struct mzone *z)
{
	if (z->cond == ZC_OFFLINE)
		return SENSE(7, 0x2c, 0x0e);
	if (z->cond == ZC_RDONLY)
		return SENSE(7, 0x27, 0x08);
	if (z->cond == ZC_INACTIVE)
		return SENSE(7, 0x2c, 0x12);
	return 0;
}

/* SOBR: at or below the write pointer (a FULL zone anywhere), on into the next SOBR zones. */
static int model_write_sobr(struct mzone *first, struct mzone *last, uint64_t lba, uint64_t end)
{
	if (first->cond != ZC_FULL && lba > first->wp)
		return SENSE(5, 0x21, 0x04);
	for (struct mzone *z = first; z <= last; z++) {
		uint64_t part_end = end < z->start + ZS ? end : z->start + ZS;

		if (z->cond == ZC_EMPTY || z->cond == ZC_CLOSED)
			z->cond = ZC_IOPEN;
		if (z->cond != ZC_FULL && part_end > z->wp)
			z->wp = part_end;
		if (z->cond != ZC_FULL && z->wp == z->start + ZS)
			z->cond = ZC_FULL;
	}
	return 0;
}

/* Expected outcome of WRITE(16) [lba, lba + n): 0 = GOOD (model updated), else packed sense. */
static int model_write(uint64_t lba, uint32_t n, const uint8_t *data)
{
	uint64_t end = lba + n;
	struct mzone *first, *last;
	int r;

	if (end > CAP || end < lba)
		return SENSE(5, 0x21, 0x00);
	first = &mz[lba / ZS];
	last = &mz[(end - 1) / ZS];
	for (struct mzone *z = first; z <= last; z++)
		if ((r = fault_sense(z)))
			return r;
	if (first->type != last->type)
		return SENSE(5, 0x21, 0x05);
	if (first->type == ZT_SOBR && (r = model_write_sobr(first, last, lba, end)))
		return r;
	if (first->type == ZT_SWR) {
		if (first != last)
			return SENSE(5, 0x21, 0x05);
		if (first->cond == ZC_FULL)
			return SENSE(5, 0x24, 0x00);
		if (lba != first->wp)
			return SENSE(5, 0x21, 0x04);
		if ((first->cond == ZC_EMPTY || first->cond == ZC_CLOSED) && (r = acquire()))
			return r;
		if (first->cond == ZC_EMPTY || first->cond == ZC_CLOSED)
			first->cond = ZC_IOPEN;
		first->wp = end;
		if (first->wp == first->start + ZS)
			first->cond = ZC_FULL;
	}
	memcpy(shadow + lba * BS, data, (size_t)n * BS);
	return 0;
}

/* READ(16) with URSWRZ = 0. */
static int model_read(uint64_t lba, uint32_t n)
{
	uint64_t end = lba + n;
	struct mzone *first, *last;

	if (end > CAP || end < lba)
		return SENSE(5, 0x21, 0x00);
	first = &mz[lba / ZS];
	last = &mz[(end - 1) / ZS];
	for (struct mzone *z = first; z <= last; z++) {
		if (z->cond == ZC_OFFLINE)
			return SENSE(7, 0x2c, 0x0e);
		if (z->cond == ZC_INACTIVE)
			return SENSE(7, 0x2c, 0x12);
	}
	if (first->type != last->type)
		return SENSE(5, 0x21, 0x07);
	if (first->type == ZT_CONV)
		return 0;
	if (first->type == ZT_SOBR) {
		for (struct mzone *z = first; z <= last; z++)
			if (z->cond != ZC_FULL && z->cond != ZC_RDONLY && (end < z->start + ZS ? end : z->start + ZS) > z->wp)
				return SENSE(5, 0x21, 0x06);
		return 0;
	}
	if (first != last)
		return SENSE(5, 0x21, 0x07);
	if (first->cond != ZC_FULL && first->cond != ZC_RDONLY && end > first->wp)
		return SENSE(5, 0x21, 0x06);
	return 0;
}

static void reset_zone(struct mzone *z)
{
	z->cond = ZC_EMPTY;
	z->wp = z->start;
	memset(shadow + z->start * BS, 0, (size_t)ZS * BS);
}

static int model_out(uint8_t sa, uint64_t zone_id, bool all)
{
	struct mzone *z;
	int r;

	if (sa < ZBC_CLOSE || sa > ZBC_RESET)
		return SENSE(5, 0x24, 0x00);
	if (all) {
		switch (sa) {
		case ZBC_CLOSE:
			for (unsigned i = 0; i < NZ; i++)
				if (mz[i].cond == ZC_IOPEN || mz[i].cond == ZC_EOPEN)
					close_zone(&mz[i]);
			return 0;
		case ZBC_OPEN: {
			bool mark[NZ];

			if (count(ZC_EOPEN) + count(ZC_CLOSED) > MAX_OPEN)
				return SENSE(7, 0x55, 0x0e);
			for (unsigned i = 0; i < NZ; i++)
				mark[i] = mz[i].cond == ZC_CLOSED;
			for (unsigned i = 0; i < NZ; i++) {
				if (!mark[i])
					continue;
				if (mz[i].cond == ZC_CLOSED && mz[i].type == ZT_SWR && acquire())
					return SENSE(7, 0x55, 0x0e);
				mz[i].cond = ZC_EOPEN;
			}
			return 0;
		}
		case ZBC_FINISH:
			for (unsigned i = 0; i < NZ; i++)
				if (mz[i].type == ZT_SOBR && (mz[i].cond == ZC_IOPEN || mz[i].cond == ZC_EOPEN ||
							      mz[i].cond == ZC_CLOSED))
					return SENSE(5, 0x24, 0x00);
			for (unsigned i = 0; i < NZ; i++) {
				if (mz[i].cond == ZC_IOPEN || mz[i].cond == ZC_EOPEN || mz[i].cond == ZC_CLOSED) {
					mz[i].cond = ZC_FULL;
					mz[i].wp = mz[i].start + ZS;
				}
			}
			return 0;
		default:
			for (unsigned i = nconv; i < NZ; i++)
				if (mz[i].cond != ZC_EMPTY && !fault_sense(&mz[i]))
					reset_zone(&mz[i]);
			return 0;
		}
	}
	if (zone_id >= CAP)
		return SENSE(5, 0x21, 0x00);
	z = &mz[zone_id / ZS];
	if (z->start != zone_id || z->type == ZT_CONV)
		return SENSE(5, 0x24, 0x00);
	if ((r = fault_sense(z)))
		return r;
	switch (sa) {
	case ZBC_CLOSE:
		if (z->cond == ZC_IOPEN || z->cond == ZC_EOPEN)
			close_zone(z);
		return 0;
	case ZBC_OPEN:
		if (z->cond == ZC_EOPEN || z->cond == ZC_FULL)
			return 0;
		if ((z->cond == ZC_EMPTY || z->cond == ZC_CLOSED) && z->type == ZT_SWR && (r = acquire()))
			return r;
		z->cond = ZC_EOPEN;
		return 0;
	case ZBC_FINISH:
		if (z->type == ZT_SOBR)
			return SENSE(5, 0x24, 0x00);
		if (z->cond == ZC_FULL)
			return 0;
		if ((z->cond == ZC_EMPTY || z->cond == ZC_CLOSED) && count(ZC_EOPEN) >= MAX_OPEN)
			return SENSE(7, 0x55, 0x0e);
		z->cond = ZC_FULL;
		z->wp = z->start + ZS;
		return 0;
	default:
		if (z->cond != ZC_EMPTY)
			reset_zone(z);
		return 0;
	}
}

static bool ro_valid(uint8_t ro)
{
	return ro <= 7 || ro == 0x10 || ro == 0x11 || ro == 0x3f || (zd && (ro == 0x08 || ro == 0x3e));
}

static bool matches(const struct mzone *z, uint8_t ro)
{
	switch (ro) {
	case 0x00: return true;
	case 0x10: case 0x11: return false;
	case 0x3f: return z->cond == ZC_NWP;
	case 0x01: return z->cond == ZC_EMPTY;
	case 0x02: return z->cond == ZC_IOPEN;
	case 0x03: return z->cond == ZC_EOPEN;
	case 0x04: return z->cond == ZC_CLOSED;
	case 0x05: return z->cond == ZC_FULL;
	case 0x06: return z->cond == ZC_RDONLY;
	case 0x07: return z->cond == ZC_OFFLINE;
	case 0x08: return z->cond == ZC_INACTIVE;
	case 0x3e: return true; /* every zone but the gap zones: there are none here */
	}
	return false;
}

/*
 * The expected REPORT ZONES parameter data (all of it, before the
 * allocation length cuts it) into buf; returns its length, or -(sense).
 */
static long model_report(uint64_t start, uint8_t ro, bool partial, uint32_t alloc, uint8_t *buf)
{
	uint64_t matching = 0, n_list, fit = alloc >= 64 ? (alloc - 64) / 64 : 0;
	uint8_t *p = buf + 64;
	int first_type = -1;
	bool types_same = true;

	if (!ro_valid(ro))
		return -SENSE(5, 0x24, 0x00);
	if (start >= CAP)
		return -SENSE(5, 0x21, 0x00);
	memset(buf, 0, 64 + NZ * 64);
	for (unsigned i = (unsigned)(start / ZS); i < NZ; i++)
		matching += matches(&mz[i], ro);
	n_list = partial && fit < matching ? fit : matching;
	itest_put_be32(buf, (uint32_t)(n_list * 64));
	itest_put_be64(buf + 8, CAP - 1);
	for (unsigned i = (unsigned)(start / ZS), k = 0; i < NZ; i++) {
		const struct mzone *z = &mz[i];
		uint64_t wp = z->wp;

		if (!matches(z, ro))
			continue;
		if (k < n_list) {
			if (first_type < 0)
				first_type = z->type;
			types_same &= z->type == first_type;
		}
		k++;
		p[0] = (uint8_t)z->type;
		p[1] = (uint8_t)(z->cond << 4);
		itest_put_be64(p + 8, ZS);
		itest_put_be64(p + 16, z->start);
		if (z->cond == ZC_NWP || z->cond == ZC_RDONLY || z->cond == ZC_OFFLINE || z->cond == ZC_INACTIVE)
			wp = UINT64_MAX;
		else if (z->cond == ZC_FULL)
			wp = z->start + ZS;
		itest_put_be64(p + 24, wp);
		p += 64;
	}
	/* SAME: every zone has one length; 1h when the listed zones also share a type, else 3h; 0h for none. */
	buf[4] = n_list == 0 ? 0 : types_same ? 1 : 3;
	if (partial)
		return 64 + (long)n_list * 64;
	return p - buf;
}

/* After a restart: open conditions are volatile. */
static void model_restart(void)
{
	for (unsigned i = 0; i < NZ; i++)
		if (mz[i].cond == ZC_IOPEN || mz[i].cond == ZC_EOPEN)
			close_zone(&mz[i]);
}

/* ---- comparing with the daemon ---- */

static int packed(const struct itest_result *r)
{
	if (!r->transport_ok)
		return -1;
	if (r->status == 0)
		return 0;
	if (r->status != 2)
		return -2;
	return SENSE(r->sense.key, r->sense.asc, r->sense.ascq);
}

static void mismatch(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void mismatch(const char *what, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (++mismatches <= 10)
		itest_note("op %lu %s: %s", op_index, what, why);
}

/* Outcomes seen (to show that the run reached the error paths). */
static struct { int code; unsigned long n; } outcomes[32];

static void tally(int code)
{
	for (unsigned i = 0; i < 32; i++) {
		if (outcomes[i].n == 0 || outcomes[i].code == code) {
			outcomes[i].code = code;
			outcomes[i].n++;
			return;
		}
	}
}

static void compare_status(const char *what, const struct itest_result *r, int want)
{
	int got = packed(r);

	tally(want);
	if (got != want)
		mismatch(what, "got %s (%06x), model %06x", itest_result_str(r), got, want);
}

static uint32_t pick_alloc(void)
{
	switch (below(4)) {
	case 0:
		return (uint32_t)below(64);
	case 1:
		return 64 + 64 * (uint32_t)below(NZ + 1);
	case 2:
		return (uint32_t)below(64 + 64 * NZ + 100);
	default:
		return 64 + 64 * NZ;
	}
}

static void do_report(uint64_t start, uint8_t ro, bool partial, uint32_t alloc)
{
	static uint8_t want[64 + 64 * NZ];
	struct itest_result r;
	long len = model_report(start, ro, partial, alloc, want);

	zbc_report(s, lun, start, ro, partial, alloc, &r);
	if (len < 0) {
		compare_status("REPORT ZONES", &r, (int)-len);
	} else {
		long n = len < (long)alloc ? len : (long)alloc;

		if (packed(&r) != 0 || r.data_len != n || (n > 0 && memcmp(r.data, want, (size_t)n) != 0)) {
			int at = -1;

			for (int i = 0; i < n && i < r.data_len && at < 0; i++)
				if (r.data[i] != want[i])
					at = i;
			mismatch("REPORT ZONES", "start %llu ro %02xh partial %d alloc %u: %s, %d bytes (model %ld), "
				 "first difference at byte %d (zone %d)",
				 (unsigned long long)start, ro, partial, alloc, itest_result_str(&r), r.data_len, n, at,
				 at >= 64 ? (at - 64) / 64 : -1);
		}
	}
	itest_result_free(&r);
}

static uint64_t pick_lba(void)
{
	/* zbc-zd: mostly the active SOBR domain (the INACTIVE one refuses everything). */
	unsigned zone = zd ? (unsigned)below(below(8) ? NZ / 2 : NZ) : nconv + (unsigned)below(NZ - nconv);

	switch (below(10)) {
	case 0:
		if (zd)                                 /* at or below the write pointer */
			return mz[zone].start + below(mz[zone].wp - mz[zone].start + 1);
		return below(nconv * ZS);               /* conventional */
	case 1:
		return below(nconv * ZS);               /* conventional (zbc-zd: the first zone) */
	case 2:
		return below(CAP);                      /* anywhere */
	case 3:
		return mz[zone].wp + below(5) - 2;      /* near the write pointer */
	default:
		return mz[zone].wp;                     /* at the write pointer */
	}
}

static uint32_t pick_len(void)
{
	return below(12) == 0 ? 1 + (uint32_t)below(300) : 1 + (uint32_t)below(24);
}

static void do_write(void)
{
	uint64_t lba = pick_lba();
	uint32_t n = pick_len();
	uint8_t cdb[16] = { 0x8a };
	uint8_t *buf = malloc((size_t)n * BS);
	struct itest_result r;
	int want;

	itest_pattern(buf, (size_t)n * BS, (uint32_t)op_index);
	want = model_write(lba, n, buf);
	itest_put_be64(cdb + 2, lba);
	itest_put_be32(cdb + 10, n);
	itest_cmd(s, lun, cdb, 16, ITEST_OUT, buf, (size_t)n * BS, 0, &r);
	compare_status("WRITE(16)", &r, want);
	itest_result_free(&r);
	free(buf);
}

static void check_read(uint64_t lba, uint32_t n)
{
	struct itest_result r;
	int want = model_read(lba, n);

	zbc_read(s, lun, lba, n, BS, &r);
	compare_status("READ(16)", &r, want);
	if (want == 0 && packed(&r) == 0 &&
	    (r.data_len != (int)(n * BS) || memcmp(r.data, shadow + lba * BS, (size_t)n * BS) != 0))
		mismatch("READ(16)", "LBA %llu, %u blocks: data differs from the model", (unsigned long long)lba, n);
	itest_result_free(&r);
}

static void do_read(void)
{
	uint64_t lba = pick_lba();
	uint32_t n = pick_len();

	/* Mostly reads the model allows: start of a zone up to its write pointer. */
	if (below(2)) {
		const struct mzone *z = &mz[below(NZ)];
		uint64_t valid = z->cond == ZC_FULL || z->type == ZT_CONV ? ZS : z->wp - z->start;

		if (valid) {
			lba = z->start + below(valid);
			n = 1 + (uint32_t)below(z->start + valid - lba);
		}
	}
	check_read(lba, n);
}

static void do_out(void)
{
	uint8_t sa = below(40) == 0 ? 0x05 : (uint8_t)(1 + below(4));
	bool all = below(6) == 0;
	uint64_t zone_id = (zd ? below(below(8) ? NZ / 2 : NZ) : nconv + below(NZ - nconv)) * (uint64_t)ZS;
	struct itest_result r;
	int want;

	if (below(15) == 0)
		zone_id = below(CAP + 10);
	want = model_out(sa, zone_id, all);
	r = zbc_out(s, lun, sa, zone_id, all);
	compare_status("ZBC OUT", &r, want);
	itest_result_free(&r);
}

static void full_check(const char *when)
{
	unsigned before = mismatches;

	do_report(0, 0, false, 64 + 64 * NZ);
	for (unsigned i = 0; i < NZ; i++) {
		uint64_t valid = mz[i].cond == ZC_FULL || mz[i].type == ZT_CONV ? ZS : mz[i].wp - mz[i].start;

		if (mz[i].cond != ZC_OFFLINE && valid)
			check_read(mz[i].start, (uint32_t)valid);
	}
	itest_ok(mismatches == before, when, "%u mismatches", mismatches - before);
}

static void restart(int sig)
{
	itest_close(s);
	itest_daemon_stop(&d, sig);
	if (itest_daemon_start(&d) != 0) {
		itest_ok(false, "daemon restarts", "see the log");
		itest_finish();
		exit(1);
	}
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s) {
		itest_finish();
		exit(1);
	}
	itest_clear_ua(s, lun);
	model_restart();
}

/* One model run of ops operations on LUN lun_ (zd_: the zbc-zd LU), with a clean restart and a kill -9. */
static void run(int lun_, bool zd_, unsigned long ops, uint64_t seed)
{
	const char *label = zd_ ? "zbc-zd SOBR" : "zbc-hm";
	unsigned long phase_start = 0;
	char name[200];
	uint64_t t0;

	lun = lun_;
	zd = zd_;
	nconv = zd ? 0 : 2;
	mismatches = 0;
	memset(outcomes, 0, sizeof(outcomes));
	itest_clear_ua(s, lun);
	model_init();
	t0 = itest_now_ms();
	snprintf(name, sizeof(name), "%s: REPORT ZONES and data match the model at start", label);
	full_check(name);
	for (op_index = 1; op_index <= ops; op_index++) {
		uint64_t k = below(100);

		if (k < 45)
			do_write();
		else if (k < 70)
			do_read();
		else if (k < 90)
			do_out();
		else
			do_report(below(8) ? below(CAP) : below(CAP + 300),
				  below(10) ? (uint8_t)below(zd ? 9 : 8) : (uint8_t)below(64), below(2), pick_alloc());
		if (op_index % 500 == 0)
			do_report(0, 0, false, 64 + 64 * NZ);
		if (op_index == ops / 3 || op_index == 2 * ops / 3 || op_index == ops) {
			snprintf(name, sizeof(name), "%s: operations %lu-%lu: every status, sense, read and REPORT ZONES "
				 "matches the model", label, phase_start + 1, op_index);
			itest_ok(mismatches == 0, name, "%u mismatches (seed %llu)", mismatches, (unsigned long long)seed);
			phase_start = op_index;
			if (op_index == ops / 3) {
				restart(SIGTERM);
				snprintf(name, sizeof(name), "%s: after a clean restart: zone state and data match the model",
					 label);
				full_check(name);
			} else if (op_index == 2 * ops / 3) {
				restart(SIGKILL);
				snprintf(name, sizeof(name),
					 "%s: after kill -9: zone state and data match the model (acknowledged = durable)",
					 label);
				full_check(name);
			}
		}
	}
	itest_note("%s: %lu operations in %llu ms", label, ops, (unsigned long long)(itest_now_ms() - t0));
	for (unsigned i = 0; i < 32 && outcomes[i].n; i++)
		itest_note("%s: outcome %02X/%02X/%02X: %lu", label, outcomes[i].code >> 16,
			   (outcomes[i].code >> 8) & 0xff, outcomes[i].code & 0xff, outcomes[i].n);
}

int main(int argc, char **argv)
{
	const char *env_ops = getenv("ZBC_MODEL_OPS");
	unsigned long ops = env_ops ? strtoul(env_ops, NULL, 10) : 20000;
	uint64_t seed = itest_seed("ZBC_MODEL_SEED");

	itest_init(argc, argv, "test_zbc_model");
	rng = seed;
	itest_note("seed %llu (replay: ZBC_MODEL_SEED=%llu), %lu operations per LU", (unsigned long long)seed,
		   (unsigned long long)seed, ops);
	itest_daemon_up(&d, "zbc-model", config);
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s)
		return itest_finish();
	run(1, false, ops, seed);
	run(2, true, ops, seed);
	itest_close(s);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
