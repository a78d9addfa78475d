/*
 * Fault rules across the daemon (docs/control.md): removing them from every
 * LU, and the alarm each device's delayed commands wait on (one ev_timer
 * per device, scsi_device_set_alarm).  The rules themselves are the SCSI
 * core's (scsi_faults.h); the control adds and lists them, and the
 * configuration's fault keys become rules at start-up (config_faults.c).
 */
#include <stdlib.h>
#include <time.h>

#include "sbcemud.h"

/* ---- removing rules ---- */

struct remove_ctx {
	bool all;
	uint32_t id;
	unsigned removed;
	uint32_t *ids; /* all: the LU's rule ids, gathered before removing */
	size_t nids, cap;
};

static void gather_id(void *arg, uint32_t id, const struct scsi_fault_rule_params *p,
		      const struct scsi_fault_rule_stats *st)
{
	struct remove_ctx *ctx = arg;

	(void)p;
	(void)st;
	if (ctx->nids == ctx->cap) {
		size_t cap = ctx->cap ? 2 * ctx->cap : 16;
		uint32_t *ids = realloc(ctx->ids, cap * sizeof(*ids));

		if (!ids)
			return;
		ctx->ids = ids;
		ctx->cap = cap;
	}
	ctx->ids[ctx->nids++] = id;
}

static void remove_lu_rules(void *arg, const struct sbce_lu_ref *ref)
{
	struct remove_ctx *ctx = arg;

	if (!ctx->all) {
		ctx->removed += scsi_lu_fault_remove(ref->lu, ctx->id) == 0;
		return;
	}
	ctx->nids = 0;
	scsi_lu_fault_foreach(ref->lu, gather_id, ctx);
	for (size_t i = 0; i < ctx->nids; i++)
		ctx->removed += scsi_lu_fault_remove(ref->lu, ctx->ids[i]) == 0;
}

unsigned sbce_faults_remove(struct sbce_daemon *d, bool all, uint32_t id)
{
	struct remove_ctx ctx = { .all = all, .id = id };

	sbce_foreach_lu(d, remove_lu_rules, &ctx);
	free(ctx.ids);
	return ctx.removed;
}

/* ---- alarms ---- */

struct sbce_alarm {
	ev_timer timer;
	struct scsi_device *dev;
};

static void alarm_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	scsi_device_alarm(((struct sbce_alarm *)w)->dev);
}

/* The core wants scsi_device_alarm() at CLOCK_MONOTONIC time when_ns: a relative libev timer. */
static void alarm_arm(void *arg, uint64_t when_ns)
{
	struct sbce_alarm *a = arg;
	struct ev_loop *loop = a->timer.data;
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	ev_timer_stop(loop, &a->timer);
	ev_timer_set(&a->timer, when_ns > now ? (double)(when_ns - now) / 1e9 : 0., 0.);
	ev_timer_start(loop, &a->timer);
}

struct sbce_alarm *sbce_alarm_attach(struct sbce_daemon *d, struct scsi_device *dev)
{
	struct sbce_alarm *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	ev_timer_init(&a->timer, alarm_cb, 0., 0.);
	a->timer.data = d->loop.loop;
	a->dev = dev;
	scsi_device_set_alarm(dev, alarm_arm, a);
	return a;
}

void sbce_alarm_detach(struct sbce_daemon *d, struct sbce_alarm *a)
{
	if (!a)
		return;
	ev_timer_stop(d->loop.loop, &a->timer);
	scsi_device_set_alarm(a->dev, NULL, NULL);
	free(a);
}

int sbce_faults_start(struct sbce_daemon *d)
{
	d->alarms = calloc(d->device_count ? d->device_count : 1, sizeof(*d->alarms));
	if (!d->alarms) {
		sbce_error("out of memory");
		return -1;
	}
	for (size_t i = 0; i < d->device_count; i++) {
		d->alarms[i] = sbce_alarm_attach(d, d->devices[i]);
		if (!d->alarms[i]) {
			sbce_error("out of memory");
			return -1;
		}
	}
	return 0;
}

void sbce_faults_stop(struct sbce_daemon *d)
{
	if (!d->alarms)
		return;
	sbce_faults_remove(d, true, 0);
	for (size_t i = 0; i < d->device_count; i++) {
		sbce_alarm_detach(d, d->alarms[i]);
		d->alarms[i] = NULL;
	}
}
