/*
 * The rotating model: a disk drive with one actuator (docs/latency.md).
 *
 * A command costs overhead + seek + rotational latency + transfer.  The
 * seek curve follows Ruemmler and Wilkes, "An introduction to disk drive
 * modeling", IEEE Computer 27(3), 1994: a + b * sqrt(d) for short seeks
 * (the arm accelerates, then decelerates), c + e * d for long ones (it
 * coasts at full speed).  Outer tracks hold more bytes, so the transfer
 * rate falls linearly from the outer edge (LBA 0) to the inner one.  The
 * platter turns whatever the drive does: its angle is a function of time
 * alone, (t + phase) / revolution mod 1.
 *
 * On zoned LUs with a media cache (smr_cache_mib), writes outside
 * sequential write required zones go to a cache at the outer edge; a full
 * cache stalls the drive while it is cleaned, and an idle drive cleans it
 * in the background.
 *
 * What this does not model: zoned bit recording steps (the rate is linear
 * in the LBA), the spare areas, the seek settling difference between reads
 * and writes, the head position after background cleaning, reads hitting
 * data still in the media cache, the drive's read cache beyond streaming.
 */
#include <math.h>
#include <stdio.h>

#include "media/media_internal.h"

#define NS_PER_US 1000ull

void scsi_media_rotating_defaults(struct scsi_latency_params *p)
{
	if (!p->rpm)
		p->rpm = 7200;
	if (!p->seek_track_us)
		p->seek_track_us = 600;
	if (!p->seek_avg_us)
		p->seek_avg_us = 8500;
	if (!p->seek_full_us)
		p->seek_full_us = 16000;
	if (!p->head_switch_us)
		p->head_switch_us = 1000;
	if (!p->overhead_us)
		p->overhead_us = 50;
	if (!p->rate_outer_mbs)
		p->rate_outer_mbs = 250;
	if (!p->rate_inner_mbs)
		p->rate_inner_mbs = 120;
	if (!p->cylinders)
		p->cylinders = 300000;
	if (!p->smr_clean_mbs)
		p->smr_clean_mbs = 100;
}

/* Times above a second are a typing mistake, not a drive. */
#define ROT_MAX_US 1000000u

static int too_long(const char *key, uint32_t v, char *err, size_t errlen)
{
	if (v <= ROT_MAX_US)
		return 0;
	snprintf(err, errlen, "latency: %s (%u) must be at most %u (1 s)", key, v, ROT_MAX_US);
	return -1;
}

int scsi_media_rotating_check(const struct scsi_latency_params *p, char *err, size_t errlen)
{
	if (p->rpm < 3600 || p->rpm > 20000) {
		snprintf(err, errlen, "latency: rpm (%u) must lie between 3600 and 20000", p->rpm);
		return -1;
	}
	if (too_long("seek_full_us", p->seek_full_us, err, errlen) ||
	    too_long("head_switch_us", p->head_switch_us, err, errlen) ||
	    too_long("overhead_us", p->overhead_us, err, errlen))
		return -1;
	/* The seek curve rises with the distance: track-to-track <= a third of the stroke <= full stroke. */
	if (p->seek_track_us > p->seek_full_us) {
		snprintf(err, errlen, "latency: seek_track_us (%u) must not exceed seek_full_us (%u)",
			 p->seek_track_us, p->seek_full_us);
		return -1;
	}
	if (p->seek_avg_us < p->seek_track_us || p->seek_avg_us > p->seek_full_us) {
		snprintf(err, errlen, "latency: seek_avg_us (%u) must lie between seek_track_us (%u) and seek_full_us (%u)",
			 p->seek_avg_us, p->seek_track_us, p->seek_full_us);
		return -1;
	}
	/* Outer tracks are longer and pass under the head faster. */
	if (p->rate_inner_mbs > p->rate_outer_mbs) {
		snprintf(err, errlen, "latency: rate_inner_mbs (%u) must not exceed rate_outer_mbs (%u)",
			 p->rate_inner_mbs, p->rate_outer_mbs);
		return -1;
	}
	/* The square-root part of the seek curve needs cylinders / 3 > 1 (sqrt(knee) - 1 >= 1). */
	if (p->cylinders < 12) {
		snprintf(err, errlen, "latency: cylinders (%u) must be at least 12", p->cylinders);
		return -1;
	}
	return 0;
}

/* The seek curve through (1, track), (C/3, v), (C, full) (scsi_media_rotating_init). */
static void seek_curve(struct scsi_media_rotating *r, uint32_t cylinders, double track, double v, double full)
{
	r->seek_b_ns = (v - track) / (sqrt(r->seek_knee) - 1.0);
	r->seek_a_ns = track - r->seek_b_ns;
	r->seek_e_ns = (full - v) / (cylinders - r->seek_knee);
	r->seek_c_ns = v - r->seek_e_ns * r->seek_knee;
}

/* The mean seek time over all pairs of distinct cylinders: distance d has weight C - d. */
static double mean_seek_ns(const struct scsi_media_rotating *r, uint32_t cylinders)
{
	double sum = 0.0, weight = 0.0;

	for (uint32_t d = 1; d < cylinders; d++) {
		double w = (double)(cylinders - d);

		sum += w * (d <= r->seek_knee ? r->seek_a_ns + r->seek_b_ns * sqrt((double)d)
					      : r->seek_c_ns + r->seek_e_ns * d);
		weight += w;
	}
	return weight > 0.0 ? sum / weight : 0.0;
}

void scsi_media_rotating_init(struct scsi_media_rotating *r, const struct scsi_latency_params *params,
			      uint64_t num_blocks, uint32_t block_size, bool zoned)
{
	struct scsi_latency_params p = *params;
	double track, avg, full;
	uint64_t s = p.seed;

	scsi_media_rotating_defaults(&p);
	*r = (struct scsi_media_rotating){ 0 };
	r->num_blocks = num_blocks;
	r->block_size = block_size;
	r->rev_ns = (60ull * 1000000000ull + p.rpm / 2) / p.rpm;
	r->phase_ns = scsi_media_splitmix64(&s) % r->rev_ns;
	r->cylinders = p.cylinders;
	/*
	 * Through (1, track) and (C/3, v) with a + b sqrt(d), then through
	 * (C/3, v) and (C, full) with c + e d: continuous at the knee.  v is
	 * chosen so that the mean seek over all pairs of cylinders (a
	 * datasheet's "average seek": distance d weighted by C - d, as the
	 * Hitachi and HGST specifications define it) is seek_avg_us.  That
	 * mean is affine in v: two curves give it.
	 */
	track = (double)p.seek_track_us * NS_PER_US;
	avg = (double)p.seek_avg_us * NS_PER_US;
	full = (double)p.seek_full_us * NS_PER_US;
	r->seek_knee = p.cylinders / 3.0;
	{
		double m_track, m_full, v;

		seek_curve(r, p.cylinders, track, track, full);
		m_track = mean_seek_ns(r, p.cylinders);
		seek_curve(r, p.cylinders, track, full, full);
		m_full = mean_seek_ns(r, p.cylinders);
		v = m_full > m_track ? track + (avg - m_track) * (full - track) / (m_full - m_track) : avg;
		seek_curve(r, p.cylinders, track, v < track ? track : v > full ? full : v, full);
	}
	r->head_switch_ns = (uint64_t)p.head_switch_us * NS_PER_US;
	r->overhead_ns = (uint64_t)p.overhead_us * NS_PER_US;
	r->rate_outer = p.rate_outer_mbs / 1000.0;
	r->rate_inner = p.rate_inner_mbs / 1000.0;
	r->smr = zoned && p.smr_cache_mib > 0;
	r->smr_cache_bytes = (double)p.smr_cache_mib * 1048576.0;
	r->smr_clean_rate = p.smr_clean_mbs / 1000.0;
}

/* A time in ns from a double, kept in range whatever the request's length (2^62 ns is 146 years). */
static uint64_t rot_ns(double ns)
{
	return ns <= 0.0 ? 0 : ns >= 0x1.0p62 ? (uint64_t)1 << 62 : (uint64_t)llround(ns);
}

/* Radius fraction of an LBA: 0 at the outer edge (LBA 0), towards 1 at the inner one. */
static double rot_radius(const struct scsi_media_rotating *r, uint64_t lba)
{
	double x;

	if (!r->num_blocks)
		return 0.0;
	x = (double)lba / (double)r->num_blocks;
	return x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x;
}

static uint64_t rot_cylinder(const struct scsi_media_rotating *r, uint64_t lba)
{
	uint64_t c = (uint64_t)(rot_radius(r, lba) * r->cylinders);

	return c >= r->cylinders ? r->cylinders - 1 : c;
}

/* Bytes per ns under the head at radius x (MB/s / 1000). */
static double rot_rate(const struct scsi_media_rotating *r, double x)
{
	return r->rate_outer + (r->rate_inner - r->rate_outer) * x;
}

static uint64_t rot_seek_ns(const struct scsi_media_rotating *r, uint64_t from, uint64_t to)
{
	double d = from > to ? (double)(from - to) : (double)(to - from);

	if (d == 0.0)
		return 0;
	if (d <= r->seek_knee)
		return rot_ns(r->seek_a_ns + r->seek_b_ns * sqrt(d));
	return rot_ns(r->seek_c_ns + r->seek_e_ns * d);
}

/* The media cache fill at now_ns: the drive cleans it at smr_clean_rate while idle. */
static double rot_smr_fill_at(const struct scsi_media_rotating *r, uint64_t now_ns)
{
	double idle = now_ns > r->last_end_ns ? (double)(now_ns - r->last_end_ns) : 0.0;
	double fill = r->smr_fill - idle * r->smr_clean_rate;

	return fill > 0.0 ? fill : 0.0;
}

enum rot_path {
	ROT_OVERHEAD_ONLY, /* no blocks: no transfer, no positioning (SYNCHRONIZE CACHE, ...) */
	ROT_STREAM,        /* continues the last transfer: no seek, no rotational latency */
	ROT_POSITIONED,    /* seek and wait for the block to come round */
	ROT_MEDIA_CACHE,   /* SMR: written to the media cache at the outer edge */
};

/* What serving req from now_ns costs and where it leaves the drive; computed without changing r. */
struct rot_plan {
	enum rot_path path;
	uint64_t position_ns;   /* overhead, cleaning stall, seek, rotational latency */
	uint64_t transfer_ns;
	double fill_after;      /* media cache fill when done */
};

static struct rot_plan rot_plan(const struct scsi_media_rotating *r, const struct scsi_media_request *req,
				uint64_t now_ns)
{
	struct rot_plan pl = { .path = ROT_POSITIONED, .position_ns = r->overhead_ns };
	double bytes = (double)req->nblocks * r->block_size;
	double x, bpt, angle;
	uint64_t cyl, seek, platter, block, t;

	pl.fill_after = r->smr ? rot_smr_fill_at(r, now_ns) : 0.0;
	/*
	 * No blocks, whatever the class (SYNCHRONIZE CACHE, a transfer length
	 * of 0, UNMAP whose ranges are in its parameter list): the drive
	 * does not move its head for it.
	 */
	if (!req->nblocks) {
		pl.path = ROT_OVERHEAD_ONLY;
		return pl;
	}
	if (r->smr && req->cls == SCSI_MEDIA_WRITE && !req->sequential_zone &&
	    bytes <= r->smr_cache_bytes) {
		pl.path = ROT_MEDIA_CACHE;
		if (pl.fill_after + bytes > r->smr_cache_bytes) {
			/* Full: the drive cleans the whole cache first, and the command waits. */
			pl.position_ns += rot_ns(pl.fill_after / r->smr_clean_rate);
			pl.fill_after = 0.0;
		}
		pl.fill_after += bytes;
		/* The cache is a log at the outer edge: appends need no rotational wait. */
		pl.position_ns += rot_seek_ns(r, r->cylinder, 0);
		pl.transfer_ns = rot_ns(bytes / r->rate_outer);
		return pl;
	}
	x = rot_radius(r, req->lba);
	pl.transfer_ns = rot_ns(bytes / rot_rate(r, x));
	/* Read-ahead and write streaming: a command that continues the last one within a revolution. */
	if (r->streaming && req->lba == r->next_lba && now_ns <= r->stream_end_ns + r->rev_ns) {
		pl.path = ROT_STREAM;
		return pl;
	}
	cyl = rot_cylinder(r, req->lba);
	seek = rot_seek_ns(r, r->cylinder, cyl);
	if (cyl == r->cylinder && !(r->streaming && req->lba == r->next_lba))
		seek = r->head_switch_ns;
	pl.position_ns += seek;
	/* The block's angle on its track, and the platter's when the head is there. */
	bpt = rot_rate(r, x) * (double)r->rev_ns;
	angle = fmod((double)req->lba * r->block_size, bpt) / bpt;
	block = (uint64_t)(angle * (double)r->rev_ns);
	if (block >= r->rev_ns)
		block = r->rev_ns - 1;
	t = now_ns + pl.position_ns;
	platter = (t % r->rev_ns + r->phase_ns) % r->rev_ns;
	pl.position_ns += (block + r->rev_ns - platter) % r->rev_ns;
	return pl;
}

uint64_t scsi_media_rotating_access_ns(const struct scsi_media_rotating *r, const struct scsi_media_request *req,
				       uint64_t now_ns)
{
	return rot_plan(r, req, now_ns).position_ns;
}

uint64_t scsi_media_rotating_serve(struct scsi_media_rotating *r, const struct scsi_media_request *req,
				   uint64_t now_ns)
{
	struct rot_plan pl = rot_plan(r, req, now_ns);
	uint64_t service = pl.position_ns + pl.transfer_ns;

	if (!service)
		service = 1;
	switch (pl.path) {
	case ROT_OVERHEAD_ONLY:
		break;
	case ROT_MEDIA_CACHE:
		r->cylinder = 0;
		r->streaming = false;
		break;
	case ROT_STREAM:
	case ROT_POSITIONED:
		r->cylinder = rot_cylinder(r, req->lba + req->nblocks - 1);
		r->streaming = true;
		r->next_lba = req->lba + req->nblocks;
		r->stream_end_ns = now_ns + service;
		break;
	}
	r->smr_fill = pl.fill_after;
	r->last_end_ns = now_ns + service;
	return service;
}
