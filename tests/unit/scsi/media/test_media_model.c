/* media_model.c, media_rotating.c: the media latency models (docs/latency.md). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "media/media_model.h"

#define BS 4096u
#define NBLOCKS (4ull << 40) / BS /* a 4 TiB LU */
#define US 1000ull
#define MS 1000000ull

static uint64_t test_rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static struct scsi_media_request rq(enum scsi_media_class cls, uint64_t lba, uint64_t nblocks)
{
	return (struct scsi_media_request){ .cls = cls, .lba = lba, .nblocks = nblocks };
}

static struct scsi_media_model *mk(const struct scsi_latency_params *p, bool zoned)
{
	char err[256];
	struct scsi_media_model *m;

	ck_assert_msg(scsi_latency_params_check(p, err, sizeof(err)) == 0, "%s", err);
	m = scsi_media_model_create(p, NBLOCKS, BS, zoned);
	ck_assert_ptr_nonnull(m);
	return m;
}

static struct scsi_latency_params rotating(void)
{
	return (struct scsi_latency_params){ .model = SCSI_LATENCY_ROTATING, .seed = 42 };
}

/* The default transfer rate (bytes per ns) at the radius of lba: 250 MB/s outer to 120 MB/s inner, linear. */
static double default_rate(uint64_t lba)
{
	double x = (double)lba / (double)(NBLOCKS);

	return (250.0 + (120.0 - 250.0) * x) / 1000.0;
}

/* fixed: each class takes its own time, exactly; 0 is served in 1 ns; no reordering. */
START_TEST(fixed_times_exact_per_class)
{
	struct scsi_latency_params p = { .model = SCSI_LATENCY_FIXED, .read_us = 100, .write_us = 250, .servers = 4 };
	struct scsi_media_model *m = mk(&p, false);
	struct scsi_media_request r = rq(SCSI_MEDIA_READ, 7, 8);

	ck_assert_uint_eq(scsi_media_model_serve(m, &r, 0), 100 * US);
	r.cls = SCSI_MEDIA_WRITE;
	ck_assert_uint_eq(scsi_media_model_serve(m, &r, 5), 250 * US);
	r.cls = SCSI_MEDIA_OTHER;
	ck_assert_uint_eq(scsi_media_model_serve(m, &r, 9), 1);
	ck_assert_uint_eq(scsi_media_model_access_ns(m, &r, 9), 0);
	ck_assert_uint_eq(scsi_media_model_servers(m), 4);
	ck_assert(!scsi_media_model_reorders(m));
	scsi_media_model_destroy(m);
}
END_TEST

/* distribution: the same seed gives the same sequence; another seed another one. */
START_TEST(distribution_reproducible_for_a_seed)
{
	struct scsi_latency_params p = { .model = SCSI_LATENCY_DISTRIBUTION, .mean_us = 500, .p99_us = 2000,
					 .seed = 7 };
	struct scsi_media_model *a = mk(&p, false), *b = mk(&p, false), *c;
	struct scsi_media_request r = rq(SCSI_MEDIA_READ, 0, 1);
	int i, differ = 0;

	p.seed = 8;
	c = mk(&p, false);
	for (i = 0; i < 1000; i++) {
		uint64_t ta = scsi_media_model_serve(a, &r, 0);

		ck_assert_uint_eq(ta, scsi_media_model_serve(b, &r, 0));
		differ += ta != scsi_media_model_serve(c, &r, 0);
	}
	ck_assert_int_gt(differ, 990);
	ck_assert_uint_eq(scsi_media_model_servers(a), 0);
	ck_assert(!scsi_media_model_reorders(a));
	scsi_media_model_destroy(a);
	scsi_media_model_destroy(b);
	scsi_media_model_destroy(c);
}
END_TEST

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* distribution: over 100 000 samples the mean and the 99th percentile are the parameters' (within 3 %). */
START_TEST(distribution_mean_and_p99_match)
{
	static const uint32_t cases[][2] = { { 1000, 3000 }, { 200, 250 }, { 100, 1400 } };
	enum { N = 100000 };
	uint64_t *s = malloc(N * sizeof(*s));
	unsigned c;

	ck_assert_ptr_nonnull(s);
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct scsi_latency_params p = { .model = SCSI_LATENCY_DISTRIBUTION, .mean_us = cases[c][0],
						 .p99_us = cases[c][1], .seed = 1234 + c };
		struct scsi_media_model *m = mk(&p, false);
		struct scsi_media_request r = rq(SCSI_MEDIA_WRITE, 0, 1);
		double sum = 0, mean, p99;
		int i;

		for (i = 0; i < N; i++) {
			s[i] = scsi_media_model_serve(m, &r, 0);
			sum += s[i];
		}
		qsort(s, N, sizeof(*s), cmp_u64);
		mean = sum / N / US;
		p99 = (double)s[N * 99 / 100] / US;
		ck_assert_msg(fabs(mean / p.mean_us - 1) < 0.03, "mean %.1f us, want %u", mean, p.mean_us);
		ck_assert_msg(fabs(p99 / p.p99_us - 1) < 0.03, "p99 %.1f us, want %u", p99, p.p99_us);
		scsi_media_model_destroy(m);
	}
	free(s);
}
END_TEST

/*
 * rotating: 4 KiB random reads at QD1 average overhead + average seek + half
 * a revolution + transfer (50 us + 8.5 ms + 4.17 ms + ~22 us = 12.74 ms with
 * the defaults), within 2 % (seek_avg_us is the mean over random seek
 * distances, as datasheets define it); that is 75..100 IOPS.
 */
static double random_reads_mean_ns(struct scsi_media_model *m, uint64_t *rng, int n)
{
	uint64_t now = 0, sum = 0;
	int i;

	for (i = 0; i < n; i++) {
		struct scsi_media_request r = rq(SCSI_MEDIA_READ, test_rng(rng) % (NBLOCKS), 1);
		uint64_t t = scsi_media_model_serve(m, &r, now);

		now += t;
		sum += t;
	}
	return (double)sum / n;
}

START_TEST(rotating_random_4k_read_mean)
{
	struct scsi_latency_params p = rotating();
	struct scsi_media_model *m = mk(&p, false);
	uint64_t rng = 99;
	double mean = random_reads_mean_ns(m, &rng, 20000), expect = 50e3 + 8500e3 + 60e9 / 7200 / 2 + 4096 / 0.185;

	fprintf(stderr, "rotating 4 KiB random read QD1: mean %.3f ms (expected %.3f), %.1f IOPS\n", mean / 1e6,
		expect / 1e6, 1e9 / mean);
	ck_assert_msg(fabs(mean / expect - 1) < 0.02, "mean %.0f ns, expected %.0f", mean, expect);
	ck_assert(1e9 / mean > 75 && 1e9 / mean < 100);
	ck_assert_uint_eq(scsi_media_model_servers(m), 1);
	ck_assert(scsi_media_model_reorders(m));
	scsi_media_model_destroy(m);
}
END_TEST

/* rotating: back-to-back sequential reads stream at the transfer rate of their radius; outer beats inner. */
static double sequential_mbs(uint64_t start)
{
	struct scsi_latency_params p = rotating();
	struct scsi_media_model *m = mk(&p, false);
	uint64_t now = 0, lba = start, t0 = 0;
	int i;

	for (i = 0; i < 257; i++) {
		struct scsi_media_request r = rq(SCSI_MEDIA_READ, lba, 256); /* 1 MiB */

		if (i == 1)
			t0 = now; /* the first one seeks */
		now += scsi_media_model_serve(m, &r, now);
		lba += 256;
	}
	scsi_media_model_destroy(m);
	return 256.0 * 256 * BS / ((double)(now - t0) / 1e9) / 1e6;
}

START_TEST(rotating_sequential_at_radius_rate)
{
	double outer = sequential_mbs(0), inner = sequential_mbs((NBLOCKS) - 300 * 256);

	fprintf(stderr, "rotating sequential 1 MiB reads: outer %.1f MB/s, inner %.1f MB/s\n", outer, inner);
	/* 1 MiB at 250 MB/s is 4.19 ms, plus 50 us overhead: 1.2 % below the media rate. */
	ck_assert_msg(outer > 250 * 0.97 && outer <= 250, "outer %.1f MB/s", outer);
	ck_assert_msg(inner > 120 * 0.97 && inner <= 121, "inner %.1f MB/s", inner);
	ck_assert(outer > inner * 1.9);
}
END_TEST

/* rotating: access_ns changes nothing, and serve = access_ns + transfer for the same request. */
START_TEST(rotating_access_is_pure_and_is_the_positioning)
{
	struct scsi_latency_params p = rotating();
	struct scsi_media_model *a = mk(&p, false), *b = mk(&p, false);
	uint64_t rng = 5, now = 123456789;
	int i, j;

	for (i = 0; i < 2000; i++) {
		struct scsi_media_request r = rq(i % 3 ? SCSI_MEDIA_READ : SCSI_MEDIA_WRITE,
						 test_rng(&rng) % (NBLOCKS - 64), 1 + test_rng(&rng) % 64);
		uint64_t acc = scsi_media_model_access_ns(a, &r, now), ta, tb;
		uint64_t xfer = (uint64_t)llround((double)r.nblocks * BS / default_rate(r.lba));

		/* Asking about other requests, and again about this one, moves nothing. */
		for (j = 0; j < 4; j++) {
			struct scsi_media_request o = rq(SCSI_MEDIA_READ, test_rng(&rng) % (NBLOCKS), 8);

			scsi_media_model_access_ns(a, &o, now + j);
		}
		ck_assert_uint_eq(scsi_media_model_access_ns(a, &r, now), acc);
		ta = scsi_media_model_serve(a, &r, now);
		tb = scsi_media_model_serve(b, &r, now);
		ck_assert_uint_eq(ta, tb);
		ck_assert_uint_eq(ta, acc + xfer);
		ck_assert_uint_ge(acc, 50 * US);
		ck_assert_uint_lt(acc, 50 * US + 16000 * US + 60 * MS * 1000 / 7200 + 1000);
		now += ta + test_rng(&rng) % (5 * MS);
	}
	scsi_media_model_destroy(a);
	scsi_media_model_destroy(b);
}
END_TEST

/*
 * rotating, SATF: of queued requests, the one with the smaller access_ns
 * really is positioned sooner when served; and serving a queue of 32 that
 * way gives 2-4 times the IOPS of QD1.
 */
START_TEST(rotating_satf_choice_is_shorter)
{
	struct scsi_latency_params p = rotating();
	struct scsi_media_model *a = mk(&p, false), *b = mk(&p, false), *q = mk(&p, false);
	struct scsi_media_request queue[32];
	uint64_t rng = 77, now = 0, lo, hi, acc, best;
	double qd1, qd32;
	int i, j, k;

	for (i = 0; i < 200; i++) {
		struct scsi_media_request x = rq(SCSI_MEDIA_READ, test_rng(&rng) % (NBLOCKS), 1);
		struct scsi_media_request y = rq(SCSI_MEDIA_READ, test_rng(&rng) % (NBLOCKS), 1);
		uint64_t ax = scsi_media_model_access_ns(a, &x, now), ay = scsi_media_model_access_ns(a, &y, now);
		struct scsi_media_request *sm = ax <= ay ? &x : &y, *lg = ax <= ay ? &y : &x;

		/* One twin serves the smaller, the other the larger: the smaller finishes positioning first. */
		lo = scsi_media_model_serve(a, sm, now) - (uint64_t)llround(BS / default_rate(sm->lba));
		hi = scsi_media_model_serve(b, lg, now) - (uint64_t)llround(BS / default_rate(lg->lba));
		ck_assert_uint_le(lo, hi);
		/* Bring b to where a is. */
		scsi_media_model_destroy(b);
		b = mk(&p, false);
		scsi_media_model_serve(b, sm, now);
		ck_assert_uint_eq(scsi_media_model_access_ns(a, &x, now + 1), scsi_media_model_access_ns(b, &x, now + 1));
		now += 20 * MS;
	}

	rng = 99;
	qd1 = random_reads_mean_ns(q, &rng, 5000);
	for (i = 0; i < 32; i++)
		queue[i] = rq(SCSI_MEDIA_READ, test_rng(&rng) % (NBLOCKS), 1);
	now = 0;
	for (i = 0; i < 20000; i++) {
		best = UINT64_MAX;
		for (j = 0, k = 0; j < 32; j++) {
			acc = scsi_media_model_access_ns(q, &queue[j], now);
			if (acc < best) {
				best = acc;
				k = j;
			}
		}
		now += scsi_media_model_serve(q, &queue[k], now);
		queue[k] = rq(SCSI_MEDIA_READ, test_rng(&rng) % (NBLOCKS), 1);
	}
	qd32 = (double)now / 20000;
	fprintf(stderr, "rotating 4 KiB random read: QD1 %.1f IOPS, QD32 SATF %.1f IOPS (x%.2f)\n", 1e9 / qd1,
		1e9 / qd32, qd1 / qd32);
	ck_assert(qd1 / qd32 > 2.0 && qd1 / qd32 < 4.0);
	scsi_media_model_destroy(a);
	scsi_media_model_destroy(b);
	scsi_media_model_destroy(q);
}
END_TEST

/* rotating: SYNCHRONIZE CACHE (other, no blocks), or any command without blocks, costs the overhead only and leaves the head where it was. */
START_TEST(rotating_no_blocks_is_overhead_only)
{
	struct scsi_latency_params p = rotating();
	struct scsi_media_model *m = mk(&p, false), *twin = mk(&p, false);
	struct scsi_media_request sync = rq(SCSI_MEDIA_OTHER, 0, 0), unmap = rq(SCSI_MEDIA_WRITE, 0, 0);
	struct scsi_media_request far = rq(SCSI_MEDIA_READ, (NBLOCKS) / 2, 1);
	uint64_t now = 0, t;

	now += scsi_media_model_serve(m, &far, now);
	scsi_media_model_serve(twin, &far, 0);
	far.lba += 1;
	/* 10 ms later: more than a revolution, so no streaming; nothing the sync does revives it. */
	ck_assert_uint_eq(scsi_media_model_access_ns(m, &sync, now + 10 * MS), 50 * US);
	ck_assert_uint_eq(scsi_media_model_serve(m, &sync, now + 10 * MS), 50 * US);
	/* A write of no blocks at LBA 0 (UNMAP): no seek there either. */
	ck_assert_uint_eq(scsi_media_model_serve(m, &unmap, now + 11 * MS), 50 * US);
	/* The head, the stream and the platter are where the twin that served neither has them. */
	for (t = now + 12 * MS; t < now + 30 * MS; t += 777 * US)
		ck_assert_uint_eq(scsi_media_model_access_ns(m, &far, t), scsi_media_model_access_ns(twin, &far, t));
	t = scsi_media_model_access_ns(m, &far, now + 12 * MS);
	ck_assert_uint_lt(t, 50 * US + 60 * MS * 1000 / 7200);
	scsi_media_model_destroy(m);
	scsi_media_model_destroy(twin);
}
END_TEST

/* rotating: a non-sequential request on the same cylinder costs a head switch, not a seek. */
START_TEST(rotating_same_cylinder_head_switch)
{
	struct scsi_latency_params p = rotating();
	struct scsi_media_model *m = mk(&p, false);
	struct scsi_media_request r = rq(SCSI_MEDIA_READ, 1000000, 1);
	uint64_t now = scsi_media_model_serve(m, &r, 0), acc;

	r.lba += 2; /* not where the last one ended, same cylinder (a cylinder holds ~3600 blocks) */
	acc = scsi_media_model_access_ns(m, &r, now);
	ck_assert_uint_ge(acc, 50 * US + 1000 * US);
	ck_assert_uint_lt(acc, 50 * US + 1000 * US + 60 * MS * 1000 / 7200);
	/* Sequential, but late (two revolutions idle): no head switch, a rotation's wait. */
	r.lba -= 1;
	acc = scsi_media_model_access_ns(m, &r, now + 20 * MS);
	ck_assert_uint_lt(acc, 50 * US + 60 * MS * 1000 / 7200);
	/* Sequential and in time: overhead only. */
	ck_assert_uint_eq(scsi_media_model_access_ns(m, &r, now + 1 * MS), 50 * US);
	scsi_media_model_destroy(m);
}
END_TEST

/* SMR: random 4 KiB writes to conventional zones cost overhead + transfer until 1 MiB of cache fills, then one stall of 1 MiB / 100 MB/s. */
START_TEST(smr_random_writes_fast_until_cache_fills)
{
	struct scsi_latency_params p = rotating();
	struct scsi_media_model *m;
	uint64_t rng = 3, now = 0, t, fast = 50 * US + (uint64_t)llround(BS / 0.25);
	int i;

	p.smr_cache_mib = 1;
	m = mk(&p, true);
	for (i = 0; i < 256; i++) {
		struct scsi_media_request r = rq(SCSI_MEDIA_WRITE, test_rng(&rng) % (NBLOCKS), 1);

		t = scsi_media_model_serve(m, &r, now);
		/* The first one seeks from wherever the head was; the head starts at the outer edge. */
		ck_assert_uint_eq(t, fast);
		now += t;
	}
	{
		struct scsi_media_request r = rq(SCSI_MEDIA_WRITE, test_rng(&rng) % (NBLOCKS), 1);

		ck_assert_uint_eq(scsi_media_model_access_ns(m, &r, now), 50 * US + 10485760);
		t = scsi_media_model_serve(m, &r, now);
		ck_assert_uint_eq(t, fast + 10485760); /* 1 MiB at 100 MB/s = 10.49 ms */
		now += t;
		/* After the stall the cache holds only that write: fast again. */
		t = scsi_media_model_serve(m, &r, now);
		ck_assert_uint_eq(t, fast);
	}
	scsi_media_model_destroy(m);
}
END_TEST

/* SMR: an idle drive cleans its media cache at smr_clean_mbs. */
START_TEST(smr_idle_time_empties_cache)
{
	struct scsi_latency_params p = rotating();
	struct scsi_media_model *m;
	struct scsi_media_request r = rq(SCSI_MEDIA_WRITE, 12345, 1);
	uint64_t now = 0, t;
	int i;

	p.smr_cache_mib = 1;
	p.smr_clean_mbs = 50;
	m = mk(&p, true);
	for (i = 0; i < 256; i++)
		now += scsi_media_model_serve(m, &r, now);
	/* Idle for half the cleaning time (1 MiB / 50 MB/s = 20.97 ms): half the cache is free. */
	now += 10485760;
	for (i = 0; i < 128; i++) {
		t = scsi_media_model_serve(m, &r, now);
		ck_assert_uint_lt(t, 1 * MS);
		now += t;
	}
	t = scsi_media_model_serve(m, &r, now);
	ck_assert_uint_gt(t, 20 * MS);
	now += t + 30 * MS;
	/* Idle long enough: a whole cache of writes without a stall, then the stall. */
	for (i = 0; i < 256; i++) {
		t = scsi_media_model_serve(m, &r, now);
		ck_assert_uint_lt(t, 1 * MS);
		now += t;
	}
	ck_assert_uint_gt(scsi_media_model_serve(m, &r, now), 20 * MS);
	scsi_media_model_destroy(m);
}
END_TEST

/* SMR: writes to sequential write required zones go to their place (a rotating write), not the cache; a LU that is not zoned has no media cache. */
START_TEST(smr_sequential_zone_writes_bypass_cache)
{
	struct scsi_latency_params p = rotating();
	struct scsi_media_model *z, *nz;
	uint64_t rng = 11, now = 0, t, fast = 50 * US + (uint64_t)llround(BS / 0.25), slow = 0;
	int i;

	p.smr_cache_mib = 1;
	z = mk(&p, true);
	nz = mk(&p, false);
	for (i = 0; i < 1000; i++) {
		struct scsi_media_request r = rq(SCSI_MEDIA_WRITE, test_rng(&rng) % (NBLOCKS), 1);

		r.sequential_zone = true;
		t = scsi_media_model_serve(z, &r, now);
		slow += t > fast;
		ck_assert_uint_lt(t, 10 * MS + 50 * US + 16 * MS);
		r.sequential_zone = false;
		ck_assert_uint_eq(t, scsi_media_model_serve(nz, &r, now));
		now += t;
	}
	ck_assert_int_gt(slow, 990);
	/* Nothing went to the cache: 256 cache writes fit without a stall. */
	for (i = 0; i < 256; i++) {
		struct scsi_media_request r = rq(SCSI_MEDIA_WRITE, test_rng(&rng) % (NBLOCKS), 1);

		t = scsi_media_model_serve(z, &r, now);
		ck_assert_uint_le(t, fast + 16 * MS);
		now += t;
	}
	scsi_media_model_destroy(z);
	scsi_media_model_destroy(nz);
}
END_TEST

/* check(): what it refuses, naming the configuration key, and the zeros (defaults) it accepts. */
struct refusal {
	struct scsi_latency_params p;
	const char *says;
};

static const struct refusal refusals[] = {
	{ { .model = SCSI_LATENCY_DISTRIBUTION, .p99_us = 10 }, "mean_us" },
	{ { .model = SCSI_LATENCY_DISTRIBUTION, .mean_us = 10 }, "p99_us" },
	{ { .model = SCSI_LATENCY_DISTRIBUTION, .mean_us = 10, .p99_us = 10 }, "p99_us (10) must exceed mean_us (10)" },
	{ { .model = SCSI_LATENCY_DISTRIBUTION, .mean_us = 10, .p99_us = 150 }, "p99_us (150) / mean_us (10)" },
	{ { .model = SCSI_LATENCY_ROTATING, .rpm = 3000 }, "rpm (3000)" },
	{ { .model = SCSI_LATENCY_ROTATING, .rpm = 25000 }, "rpm (25000)" },
	{ { .model = SCSI_LATENCY_ROTATING, .seek_avg_us = 20000 },
	  "latency: seek_avg_us (20000) must lie between seek_track_us (600) and seek_full_us (16000)" },
	{ { .model = SCSI_LATENCY_ROTATING, .seek_avg_us = 500 }, "seek_avg_us (500)" },
	{ { .model = SCSI_LATENCY_ROTATING, .seek_track_us = 20000 }, "seek_track_us (20000)" },
	{ { .model = SCSI_LATENCY_ROTATING, .rate_inner_mbs = 300 }, "rate_inner_mbs (300) must not exceed rate_outer_mbs (250)" },
	{ { .model = SCSI_LATENCY_ROTATING, .cylinders = 5 }, "cylinders (5)" },
	{ { .model = SCSI_LATENCY_ROTATING, .overhead_us = 2000000 }, "overhead_us" },
	{ { .model = (enum scsi_latency_model)9 }, "model" },
};

START_TEST(check_refuses)
{
	char err[256] = "";

	ck_assert_int_eq(scsi_latency_params_check(&refusals[_i].p, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, refusals[_i].says) && !strncmp(err, "latency: ", 9), "case %d: \"%s\"", _i, err);
}
END_TEST

static const struct scsi_latency_params acceptances[] = {
	{ .model = SCSI_LATENCY_NONE },
	{ .model = SCSI_LATENCY_FIXED },
	{ .model = SCSI_LATENCY_DISTRIBUTION, .mean_us = 100, .p99_us = 1400 },
	{ .model = SCSI_LATENCY_ROTATING },
	{ .model = SCSI_LATENCY_ROTATING, .rpm = 15000, .seek_track_us = 200, .seek_avg_us = 3500, .seek_full_us = 7000,
	  .rate_outer_mbs = 300, .rate_inner_mbs = 300, .cylinders = 100000, .smr_cache_mib = 256 },
	{ .model = SCSI_LATENCY_ROTATING, .rpm = 5400, .seek_avg_us = 12000, .seek_full_us = 24000 },
};

START_TEST(check_accepts)
{
	char err[256] = "";

	ck_assert_msg(scsi_latency_params_check(&acceptances[_i], err, sizeof(err)) == 0, "case %d: %s", _i, err);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("media_model");
	TCase *fixed = tcase_create("fixed"), *dist = tcase_create("distribution");
	TCase *rot = tcase_create("rotating"), *smr = tcase_create("smr"), *check = tcase_create("check");
	SRunner *sr;
	int failed;

	tcase_add_test(fixed, fixed_times_exact_per_class);
	tcase_add_test(dist, distribution_reproducible_for_a_seed);
	tcase_add_test(dist, distribution_mean_and_p99_match);
	tcase_add_test(rot, rotating_random_4k_read_mean);
	tcase_add_test(rot, rotating_sequential_at_radius_rate);
	tcase_add_test(rot, rotating_access_is_pure_and_is_the_positioning);
	tcase_add_test(rot, rotating_satf_choice_is_shorter);
	tcase_add_test(rot, rotating_no_blocks_is_overhead_only);
	tcase_add_test(rot, rotating_same_cylinder_head_switch);
	tcase_add_test(smr, smr_random_writes_fast_until_cache_fills);
	tcase_add_test(smr, smr_idle_time_empties_cache);
	tcase_add_test(smr, smr_sequential_zone_writes_bypass_cache);
	tcase_add_loop_test(check, check_refuses, 0, sizeof(refusals) / sizeof(refusals[0]));
	tcase_add_loop_test(check, check_accepts, 0, sizeof(acceptances) / sizeof(acceptances[0]));
	tcase_set_timeout(rot, 60);
	tcase_set_timeout(dist, 60);
	suite_add_tcase(s, fixed);
	suite_add_tcase(s, dist);
	suite_add_tcase(s, rot);
	suite_add_tcase(s, smr);
	suite_add_tcase(s, check);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
