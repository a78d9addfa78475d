/*
 * Bad input never hurts, zoned LUs: thousands of random CDBs of the zone
 * commands (ZBC IN 95h with every service action: REPORT ZONES, REPORT
 * REALMS, REPORT ZONE DOMAINS, ZONE ACTIVATE / QUERY; ZBC OUT 94h with
 * random service actions, ZONE ID, ZONE COUNT and ALL), MODE SELECT of the
 * Zoned Block Device Control page with random bytes, and small reads and
 * writes, with random reserved bits, against three zoned LUs: a zbc-zd LU
 * with SOBR zones and gap zones, a zbc-hm LU with faulty zones, a zbc-zd LU
 * with conventional and SWR domains.
 *
 * Every command must end with GOOD or CHECK CONDITION with ILLEGAL REQUEST,
 * DATA PROTECT or UNIT ATTENTION (never a dropped connection, another
 * status, or another sense key), and every REPORT ZONES taken along the way
 * must be self-consistent: zones tile the LBA space, each zone's type is
 * the one its place in the layout says, its condition is one that type can
 * have, and a write pointer zone's write pointer lies inside it.  After a
 * kill -9 the daemon restarts on the state it left and passes the same
 * checks.  ZBC_FUZZ_SEED replays a run, ZBC_FUZZ_OPS sets the count
 * (default 20000).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"

#define BS 512u
#define ZS 128u /* zone size, blocks */

static const char config[] =
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"kind = zbc-zd\n"
	"path = @DIR@/lun0.img\n"
	"size = 1664K\n"
	"zone_size = 64K\n"
	"realm_zones = 3\n"
	"gap_zones = 2\n"
	"active_domain = 0\n"
	"sobr_zones = true\n"
	"max_open_zones = 2\n"
	"urswrz = false\n"
	"[lun \"" ITEST_TARGET "\" 1]\n"
	"kind = zbc-hm\n"
	"path = @DIR@/lun1.img\n"
	"size = 1536K\n"
	"zone_size = 64K\n"
	"conventional_zones = 2\n"
	"max_open_zones = 3\n"
	"offline_zones = 20\n"
	"read_only_zones = 21\n"
	"[lun \"" ITEST_TARGET "\" 2]\n"
	"kind = zbc-zd\n"
	"path = @DIR@/lun2.img\n"
	"size = 1536K\n"
	"zone_size = 64K\n"
	"realm_zones = 2\n"
	"active_domain = 1\n";

#define NLUNS 3
static const unsigned nzones[NLUNS] = { 26, 24, 24 };

static struct itest_daemon d;
static struct iscsi_context *s;
static uint64_t rng;
static unsigned bad_answers, bad_reports;
static unsigned long counts[4]; /* GOOD, ILLEGAL REQUEST, DATA PROTECT, UNIT ATTENTION */

static uint64_t rnd(void)
{
	return itest_rnd(&rng);
}

static uint64_t below(uint64_t n)
{
	return itest_below(&rng, n);
}

/* The zone type the layout gives zone i of LUN lun. */
static int layout_type(int lun, unsigned i)
{
	switch (lun) {
	case 0:
		return i < 12 ? 4 : i < 14 ? 5 : 2;
	case 1:
		return i < 2 ? 1 : 2;
	default:
		return i < 12 ? 1 : 2;
	}
}

static bool condition_fits(int type, int cond)
{
	switch (type) {
	case 1:
	case 5:
		return cond == 0x0 || (type == 1 && (cond == 0x5 || cond == 0xd || cond == 0xf));
	default:
		return (cond >= 0x1 && cond <= 0x5) || cond == 0xd || cond == 0xe || cond == 0xf;
	}
}

/* REPORT ZONES of the whole LU: the layout and the per-zone invariants. */
static void check_report(int lun, const char *when)
{
	uint32_t alloc = 64 + 64 * nzones[lun];
	uint8_t c[16] = { 0x95, 0x00 };
	struct itest_result r;
	char why[200] = "";

	itest_put_be32(c + 10, alloc);
	itest_cmd(s, lun, c, 16, ITEST_IN, NULL, 0, alloc, &r);
	if (r.status != 0 || r.data_len != (int)alloc || itest_get_be32(r.data) != 64 * nzones[lun]) {
		snprintf(why, sizeof(why), "%s, %d bytes", itest_result_str(&r), r.data_len);
	} else {
		for (unsigned i = 0; i < nzones[lun] && !why[0]; i++) {
			const uint8_t *z = r.data + 64 + 64 * i;
			int type = z[0] & 0x0f, cond = z[1] >> 4;
			uint64_t len = itest_get_be64(z + 8), start = itest_get_be64(z + 16), wp = itest_get_be64(z + 24);

			if (len != ZS || start != (uint64_t)i * ZS || type != layout_type(lun, i) ||
			    !condition_fits(type, cond) ||
			    (cond >= 0x1 && cond <= 0x4 && (wp < start || wp > start + ZS)) ||
			    (cond == 0x1 && wp != start))
				snprintf(why, sizeof(why), "zone %u: type %d condition %xh start %llu length %llu wp %llu", i,
					 type, cond, (unsigned long long)start, (unsigned long long)len,
					 (unsigned long long)wp);
		}
	}
	if (why[0] && ++bad_reports <= 5)
		itest_note("LUN %d %s: REPORT ZONES: %s", lun, when, why);
	itest_result_free(&r);
}

static void answer(const struct itest_result *r, const uint8_t *cdb)
{
	int k = r->status == 0 ? 0 : r->status == 2 && r->sense.key == 5 ? 1 : r->status == 2 && r->sense.key == 7 ? 2
		: r->status == 2 && r->sense.key == 6 ? 3 : -1;

	if (k >= 0) {
		counts[k]++;
		return;
	}
	if (++bad_answers <= 5)
		itest_note("CDB %02x %02x ... %02x %02x: %s", cdb[0], cdb[1], cdb[13], cdb[14], itest_result_str(r));
}

/* A zone start, an LBA near one, anywhere, or past the end. */
static uint64_t pick_lba(int lun)
{
	uint64_t cap = (uint64_t)nzones[lun] * ZS;

	switch (below(6)) {
	case 0:
		return below(cap);
	case 1:
		return cap + below(3) - 1;
	case 2:
		return rnd();
	default:
		return below(nzones[lun]) * ZS + (below(4) ? 0 : below(3));
	}
}

static void fuzz_one(int lun)
{
	uint8_t c[16] = { 0 }, out[BS * 4] = { 0 };
	size_t out_len = 0, in_len = 0;
	enum itest_dir dir = ITEST_NONE;
	struct itest_result r;
	static const uint8_t in_sas[] = { 0x00, 0x06, 0x07, 0x08, 0x09 };

	switch (below(6)) {
	case 0:
	case 1: /* ZBC IN */
		c[0] = 0x95;
		c[1] = below(4) ? in_sas[below(5)] : (uint8_t)below(32);
		if (below(8) == 0)
			c[1] |= 0x80; /* reserved */
		itest_put_be64(c + 2, pick_lba(lun));
		if (c[1] & 0x1f) {
			in_len = below(4) ? 64 + 32 * below(8) : below(300);
			itest_put_be32(c + 10, (uint32_t)in_len);
		}
		if ((c[1] & 0x1f) == 0x08 || (c[1] & 0x1f) == 0x09) {
			/* libzbc's layout: b2 ALL | ZSRC | domain, b3-8 ZONE ID, b9-12 ALLOCATION LENGTH, b13-14 zones. */
			uint64_t lba = pick_lba(lun);

			c[2] = (uint8_t)((below(4) == 0 ? 0x80 : 0) | (below(2) ? 0x40 : 0) | (below(4) ? below(3) : rnd() & 0x3f));
			for (int i = 0; i < 6; i++)
				c[3 + i] = (uint8_t)(lba >> (40 - 8 * i));
			in_len = below(4) ? 64 + 24 * below(8) : below(300);
			itest_put_be32(c + 9, (uint32_t)in_len);
			itest_put_be16(c + 13, (uint16_t)(below(3) ? below(8) : rnd()));
		} else {
			in_len = below(4) ? 64 + 64 * below(nzones[lun] + 2) : below(300);
			itest_put_be32(c + 10, (uint32_t)in_len);
			c[14] = (uint8_t)(below(3) ? below(9) | (below(2) ? 0x80 : 0) : rnd());
		}
		dir = ITEST_IN;
		break;
	case 2:
	case 3: /* ZBC OUT */
		c[0] = 0x94;
		c[1] = (uint8_t)(below(5) ? 1 + below(4) : below(32));
		itest_put_be64(c + 2, pick_lba(lun));
		itest_put_be16(c + 12, (uint16_t)(below(3) ? 0 : below(4) ? below(6) : rnd()));
		c[14] = (uint8_t)(below(6) ? 0 : below(2) ? 1 : rnd());
		break;
	case 4: /* WRITE(16) / READ(16), small */
		c[0] = below(2) ? 0x8a : 0x88;
		itest_put_be64(c + 2, below(4) ? pick_lba(lun) : below(nzones[lun]) * ZS + below(ZS));
		itest_put_be32(c + 10, (uint32_t)(1 + below(4)));
		if (c[0] == 0x8a) {
			dir = ITEST_OUT;
			out_len = (size_t)itest_get_be32(c + 10) * BS;
			itest_pattern(out, out_len, (uint32_t)rnd());
		} else {
			dir = ITEST_IN;
			in_len = (size_t)itest_get_be32(c + 10) * BS;
		}
		break;
	default: /* MODE SELECT(10) of 0Ah/0Fh, random page bytes */
		c[0] = 0x55;
		c[1] = 0x10;
		out_len = 8 + 16;
		itest_put_be16(c + 7, (uint16_t)out_len);
		out[8] = 0x4a;
		out[9] = below(4) ? 0x0f : (uint8_t)rnd();
		out[11] = below(4) ? 0x0c : (uint8_t)rnd();
		out[12] = (uint8_t)(below(2) ? below(2) : rnd());
		out[13] = (uint8_t)(below(2) ? below(2) : rnd());
		dir = ITEST_OUT;
		break;
	}
	itest_cmd(s, lun, c, 16, dir, out_len ? out : NULL, out_len, in_len, &r);
	answer(&r, c);
	itest_result_free(&r);
}

static bool restart(void)
{
	itest_close(s);
	itest_daemon_stop(&d, SIGKILL);
	if (itest_daemon_start(&d) != 0)
		return false;
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	for (int lun = 0; s && lun < NLUNS; lun++)
		itest_clear_ua(s, lun);
	return s != NULL;
}

int main(int argc, char **argv)
{
	const char *env_ops = getenv("ZBC_FUZZ_OPS");
	unsigned long ops = env_ops ? strtoul(env_ops, NULL, 10) : 20000;
	uint64_t seed = itest_seed("ZBC_FUZZ_SEED");
	char name[200];

	itest_init(argc, argv, "test_zbc_fuzz: random zone command CDBs");
	rng = seed;
	itest_note("seed %llu (replay: ZBC_FUZZ_SEED=%llu), %lu commands", (unsigned long long)rng,
		   (unsigned long long)rng, ops);
	itest_daemon_up(&d, "zbc-fuzz", config);
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s)
		return itest_finish();
	for (int lun = 0; lun < NLUNS; lun++)
		itest_clear_ua(s, lun);
	for (unsigned long i = 1; i <= ops; i++) {
		int lun = (int)below(NLUNS);

		fuzz_one(lun);
		if (i % 500 == 0)
			check_report(lun, "during the run");
		if (i == ops / 2) {
			snprintf(name, sizeof(name), "commands 1-%lu: GOOD or CHECK CONDITION 05 / 07 / 06 only", i);
			itest_ok(bad_answers == 0, name, "%u other answers (seed %llu)", bad_answers, (unsigned long long)seed);
			if (!itest_ok(restart(), "kill -9 in the middle, restart on the state left", NULL))
				return itest_finish();
			for (int l = 0; l < NLUNS; l++)
				check_report(l, "after kill -9");
		}
	}
	snprintf(name, sizeof(name), "commands %lu-%lu: GOOD or CHECK CONDITION 05 / 07 / 06 only", ops / 2 + 1, ops);
	itest_ok(bad_answers == 0, name, "%u other answers (seed %llu)", bad_answers, (unsigned long long)seed);
	for (int l = 0; l < NLUNS; l++)
		check_report(l, "at the end");
	itest_ok(bad_reports == 0, "every REPORT ZONES along the way tiles the LU with the configured zone types, "
		 "conditions each type can have and write pointers inside their zones", "%u bad reports", bad_reports);
	itest_ok(counts[0] > ops / 10 && counts[1] > ops / 10 && counts[2] > 0,
		 "the run reached GOOD, ILLEGAL REQUEST and DATA PROTECT answers",
		 "GOOD %lu, ILLEGAL REQUEST %lu, DATA PROTECT %lu, UNIT ATTENTION %lu", counts[0], counts[1], counts[2],
		 counts[3]);
	itest_note("GOOD %lu, ILLEGAL REQUEST %lu, DATA PROTECT %lu, UNIT ATTENTION %lu", counts[0], counts[1],
		   counts[2], counts[3]);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_close(s);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
