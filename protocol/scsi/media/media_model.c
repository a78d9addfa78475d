/*
 * The media latency model (media_model.h, docs/latency.md): the parameter
 * check, the dispatch by model, and the two models without a position:
 * fixed (a time per class of operation) and distribution (a seeded
 * log-normal time).  The rotating model is in media_rotating.c.
 *
 * Pure arithmetic: no clock, no I/O, no globals; each model's state (the
 * random stream, the head) belongs to its LU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "media/media_internal.h"

#define NS_PER_US 1000ull

/* The standard normal's 99th percentile: Phi^-1(0.99). */
#define Z99 2.3263478740408408

/*
 * A log-normal time with mean m and 99th percentile q: ln T ~ N(mu, s^2)
 * with m = exp(mu + s^2/2) and q = exp(mu + Z99 s), so
 * s^2/2 - Z99 s + ln(q/m) = 0.  The smaller root, s = Z99 - sqrt(Z99^2 -
 * 2 ln(q/m)), is the one that goes to 0 as q approaches m; a root exists
 * while ln(q/m) <= Z99^2/2, i.e. q/m <= exp(Z99^2/2) ~ 14.97.
 */
static bool lognormal_fit(double mean, double p99, double *mu, double *sigma)
{
	double r = log(p99 / mean);
	double disc = Z99 * Z99 - 2.0 * r;

	if (!(r > 0.0) || disc < 0.0)
		return false;
	*sigma = Z99 - sqrt(disc);
	*mu = log(mean) - *sigma * *sigma / 2.0;
	return true;
}

static int distribution_check(const struct scsi_latency_params *p, char *err, size_t errlen)
{
	double mu, sigma;

	if (!p->mean_us || !p->p99_us) {
		snprintf(err, errlen, "latency: model distribution needs mean_us and p99_us (mean_us %u, p99_us %u)",
			 p->mean_us, p->p99_us);
		return -1;
	}
	if (p->p99_us <= p->mean_us) {
		snprintf(err, errlen, "latency: p99_us (%u) must exceed mean_us (%u) for a log-normal time",
			 p->p99_us, p->mean_us);
		return -1;
	}
	if (!lognormal_fit(p->mean_us, p->p99_us, &mu, &sigma)) {
		snprintf(err, errlen,
			 "latency: p99_us (%u) / mean_us (%u) = %.2f: no log-normal time has a 99th percentile above %.2f times its mean",
			 p->p99_us, p->mean_us, (double)p->p99_us / p->mean_us, exp(Z99 * Z99 / 2.0));
		return -1;
	}
	return 0;
}

int scsi_latency_params_check(const struct scsi_latency_params *p, char *err, size_t errlen)
{
	struct scsi_latency_params d;

	if (errlen)
		err[0] = '\0';
	switch (p->model) {
	case SCSI_LATENCY_NONE:
	case SCSI_LATENCY_FIXED:
		/* Any time per class; 0 is 0 (served in 1 ns). */
		return 0;
	case SCSI_LATENCY_DISTRIBUTION:
		return distribution_check(p, err, errlen);
	case SCSI_LATENCY_ROTATING:
		/* Fields left 0 take their defaults, and the defaults take part in the order checks. */
		d = *p;
		scsi_media_rotating_defaults(&d);
		return scsi_media_rotating_check(&d, err, errlen);
	}
	snprintf(err, errlen, "latency: model (%d) is not none, fixed, distribution or rotating", (int)p->model);
	return -1;
}

struct scsi_media_model *scsi_media_model_create(const struct scsi_latency_params *p, uint64_t num_blocks,
						 uint32_t block_size, bool zoned)
{
	struct scsi_media_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->model = p->model;
	switch (p->model) {
	case SCSI_LATENCY_NONE:
		break;
	case SCSI_LATENCY_FIXED:
		m->servers = p->servers;
		m->u.fixed.ns[SCSI_MEDIA_READ] = (uint64_t)p->read_us * NS_PER_US;
		m->u.fixed.ns[SCSI_MEDIA_WRITE] = (uint64_t)p->write_us * NS_PER_US;
		m->u.fixed.ns[SCSI_MEDIA_OTHER] = (uint64_t)p->other_us * NS_PER_US;
		break;
	case SCSI_LATENCY_DISTRIBUTION:
		m->servers = p->servers;
		if (!lognormal_fit(p->mean_us, p->p99_us, &m->u.dist.mu, &m->u.dist.sigma)) {
			/* Unchecked parameters: a constant time at the mean rather than nonsense. */
			m->u.dist.mu = log(p->mean_us ? p->mean_us : 1);
			m->u.dist.sigma = 0.0;
		}
		m->u.dist.rng = p->seed;
		break;
	case SCSI_LATENCY_ROTATING:
		m->servers = 1;
		scsi_media_rotating_init(&m->u.rot, p, num_blocks, block_size, zoned);
		break;
	}
	return m;
}

void scsi_media_model_destroy(struct scsi_media_model *m)
{
	free(m);
}

unsigned scsi_media_model_servers(const struct scsi_media_model *m)
{
	return m->servers;
}

bool scsi_media_model_reorders(const struct scsi_media_model *m)
{
	return m->model == SCSI_LATENCY_ROTATING;
}

/* A uniform double in (0, 1): 53 random bits, never 0 (log below). */
static double dist_uniform(struct scsi_media_model *m)
{
	return ((double)(scsi_media_splitmix64(&m->u.dist.rng) >> 11) + 0.5) * 0x1.0p-53;
}

/* A standard normal by Box-Muller (the pair's second half kept for the next call). */
static double dist_normal(struct scsi_media_model *m)
{
	double u1, u2, rad;

	if (m->u.dist.has_spare) {
		m->u.dist.has_spare = false;
		return m->u.dist.spare;
	}
	u1 = dist_uniform(m);
	u2 = dist_uniform(m);
	rad = sqrt(-2.0 * log(u1));
	m->u.dist.spare = rad * sin(2.0 * M_PI * u2);
	m->u.dist.has_spare = true;
	return rad * cos(2.0 * M_PI * u2);
}

uint64_t scsi_media_model_access_ns(const struct scsi_media_model *m, const struct scsi_media_request *req,
				    uint64_t now_ns)
{
	switch (m->model) {
	case SCSI_LATENCY_NONE:
	case SCSI_LATENCY_FIXED:
	case SCSI_LATENCY_DISTRIBUTION:
		/* No position: every command can start at once. */
		return 0;
	case SCSI_LATENCY_ROTATING:
		return scsi_media_rotating_access_ns(&m->u.rot, req, now_ns);
	}
	return 0;
}

uint64_t scsi_media_model_serve(struct scsi_media_model *m, const struct scsi_media_request *req, uint64_t now_ns)
{
	double us, ns;
	uint64_t t = 1;

	switch (m->model) {
	case SCSI_LATENCY_NONE:
		break;
	case SCSI_LATENCY_FIXED:
		t = m->u.fixed.ns[req->cls <= SCSI_MEDIA_OTHER ? req->cls : SCSI_MEDIA_OTHER];
		break;
	case SCSI_LATENCY_DISTRIBUTION:
		us = exp(m->u.dist.mu + m->u.dist.sigma * dist_normal(m));
		ns = us * (double)NS_PER_US;
		/* exp() of a normal is unbounded: keep the time below ~292 years. */
		t = ns < 9.2e18 ? (uint64_t)llround(ns) : (uint64_t)9.2e18;
		break;
	case SCSI_LATENCY_ROTATING:
		return scsi_media_rotating_serve(&m->u.rot, req, now_ns);
	}
	return t ? t : 1;
}
