/*
 * Latency statistics (struct scsi_lu_stats, scsi.h).  Log-linear
 * histograms: a value v > 0 ns falls in power-of-two band msb(v) and in one
 * of 8 equal parts of it, so a percentile is known within 1/8 of its band
 * (reported as the part's upper edge, never below the truth).  Recorded on
 * the loop thread when a command ends; counted by the descriptor its DLD
 * named (SPC-6 T2A/T2B), beside the Command Duration Limits Statistics
 * counters of lu->cdl_stats.
 */
#include <stdlib.h>
#include <string.h>

#include "core/scsi_internal.h"

static unsigned bucket_of(uint64_t v)
{
	unsigned msb, part;

	if (v < 8)
		return (unsigned)v;
	msb = 63u - (unsigned)__builtin_clzll(v);
	part = (unsigned)(v >> (msb - 3)) & 7u;
	if (msb >= SCSI_HISTOGRAM_BUCKETS / 8)
		return SCSI_HISTOGRAM_BUCKETS - 1;
	return msb * 8 + part;
}

/* The largest value of bucket b. */
static uint64_t bucket_top(unsigned b)
{
	unsigned msb = b / 8, part = b % 8;

	if (b < 8)
		return b;
	return ((8ull + part + 1) << (msb - 3)) - 1;
}

static void add(struct scsi_histogram *h, uint64_t v)
{
	h->count++;
	h->sum_ns += v;
	if (v > h->max_ns)
		h->max_ns = v;
	h->bucket[bucket_of(v)]++;
}

/* The value below which a fraction q (per mille) of the samples lie. */
static uint64_t quantile(const struct scsi_histogram *h, unsigned per_mille)
{
	uint64_t rank = (h->count * per_mille + 999) / 1000, seen = 0;

	if (!h->count)
		return 0;
	for (unsigned b = 0; b < SCSI_HISTOGRAM_BUCKETS; b++) {
		seen += h->bucket[b];
		if (seen >= rank && seen) {
			uint64_t top = bucket_top(b);

			return top < h->max_ns ? top : h->max_ns;
		}
	}
	return h->max_ns;
}

static void summarize(const struct scsi_histogram *h, struct scsi_latency_summary *s)
{
	s->count = h->count;
	s->mean_ns = h->count ? h->sum_ns / h->count : 0;
	s->p50_ns = quantile(h, 500);
	s->p99_ns = quantile(h, 990);
	s->p999_ns = quantile(h, 999);
	s->max_ns = h->max_ns;
}

static struct scsi_lu_stat_data *data(struct scsi_lu *lu)
{
	if (!lu->stats) {
		lu->stats = calloc(1, sizeof(*lu->stats));
		if (lu->stats)
			lu->stats->since_ns = scsi_device_now(lu->dev);
	}
	return lu->stats;
}

/* The T2 page the command's DLD named (the descriptor it is counted under, whatever continue-next-limit did). */
static int page_index(const struct scsi_cmd_limits *l)
{
	if (l->named_page == MODE_SUBPAGE_CDL_T2A)
		return 0;
	if (l->named_page == MODE_SUBPAGE_CDL_T2B)
		return 1;
	return -1;
}

void scsi_stats_record(struct scsi_cmd *cmd, uint64_t now_ns)
{
	struct scsi_lu_stat_data *d = data(cmd->lu);
	uint64_t active = cmd->active_ns ? cmd->active_ns : now_ns;
	uint64_t queued_ns = active > cmd->start_ns ? active - cmd->start_ns : 0;
	uint64_t active_ns = now_ns > active ? now_ns - active : 0;
	int page = page_index(&cmd->limits);

	if (!d)
		return;
	add(&d->queued, queued_ns);
	add(&d->active, active_ns);
	add(&d->total, queued_ns + active_ns);
	if (page >= 0) {
		add(&d->cdl_queued[page][cmd->limits.named_descriptor - 1], queued_ns);
		add(&d->cdl_active[page][cmd->limits.named_descriptor - 1], active_ns);
		if (cmd->limits.guideline_passed)
			d->cdl_guideline_miss[page][cmd->limits.named_descriptor - 1]++;
	}
	if (cmd->limits.ended && cmd->status == SCSI_STATUS_GOOD)
		d->good_with_sense++;
}

void scsi_stats_policy(struct scsi_cmd *cmd, uint8_t policy)
{
	struct scsi_lu_stat_data *d = data(cmd->lu);
	int page = page_index(&cmd->limits);

	if (d && page >= 0)
		d->cdl_policy_actions[page][cmd->limits.named_descriptor - 1][policy & 0x0f]++;
}

void scsi_lu_get_stats(const struct scsi_lu *lu, struct scsi_lu_stats *out)
{
	const struct scsi_lu_stat_data *d = lu->stats;

	memset(out, 0, sizeof(*out));
	out->cdl = lu->params.cdl_pages != SCSI_CDL_NONE;
	out->elapsed_ns = d ? scsi_device_now(lu->dev) - d->since_ns : 0;
	for (int p = 0; p < 2; p++) {
		for (int k = 0; k < 7; k++) {
			struct scsi_cdl_descriptor_summary *s = &out->descriptor[p][k];
			const struct scsi_cdl_descriptor_stats *c = &lu->cdl_stats[p][k];

			s->commands = c->commands;
			s->inactive_miss = c->inactive_miss + c->both_miss;
			s->active_miss = c->active_miss + c->both_miss;
			if (!d)
				continue;
			summarize(&d->cdl_queued[p][k], &s->queued);
			summarize(&d->cdl_active[p][k], &s->active);
			s->guideline_miss = d->cdl_guideline_miss[p][k];
			memcpy(s->policy_actions, d->cdl_policy_actions[p][k], sizeof(s->policy_actions));
		}
	}
	if (!d)
		return;
	summarize(&d->queued, &out->queued);
	summarize(&d->active, &out->active);
	summarize(&d->total, &out->total);
	out->good_with_sense = d->good_with_sense;
}

void scsi_lu_reset_stats(struct scsi_lu *lu)
{
	if (lu->stats) {
		memset(lu->stats, 0, sizeof(*lu->stats));
		lu->stats->since_ns = scsi_device_now(lu->dev);
	}
	memset(lu->cdl_stats, 0, sizeof(lu->cdl_stats));
}

void scsi_stats_fini(struct scsi_lu *lu)
{
	free(lu->stats);
	lu->stats = NULL;
}
