/*
 * Fault rules across the daemon (docs/control.md): removing them from every
 * LU, and the alarm of each device's timers (delayed commands, media time,
 * duration limits: one timerfd per device, scsi_device_set_alarm).  The rules themselves are the SCSI
 * core's (scsi_faults.h); the control adds and lists them, and the
 * configuration's fault keys become rules at start-up (config_faults.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

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

/*
 * A timerfd on CLOCK_MONOTONIC, armed at the absolute time the core asks
 * for, watched by the loop: the alarm fires at that time to the
 * microsecond (a libev timer waits in whole milliseconds of epoll_wait,
 * which would add up to 1 ms to every media time and duration limit).
 */
struct sbce_alarm {
	ev_io io;
	int tfd;
	struct scsi_device *dev;
};

static void alarm_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct sbce_alarm *a = (struct sbce_alarm *)w;
	uint64_t expirations;

	(void)loop;
	(void)revents;
	if (read(a->tfd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		sbce_warn("alarm timer: %s", strerror(errno));
	scsi_device_alarm(a->dev);
}

/* The core wants scsi_device_alarm() at CLOCK_MONOTONIC time when_ns (a time already past: at once). */
static void alarm_arm(void *arg, uint64_t when_ns)
{
	struct sbce_alarm *a = arg;
	struct itimerspec its = { 0 };

	if (!when_ns)
		when_ns = 1; /* 0 would disarm the timer */
	its.it_value.tv_sec = (time_t)(when_ns / 1000000000ull);
	its.it_value.tv_nsec = (long)(when_ns % 1000000000ull);
	if (timerfd_settime(a->tfd, TFD_TIMER_ABSTIME, &its, NULL) != 0)
		sbce_warn("alarm timer: %s", strerror(errno));
}

struct sbce_alarm *sbce_alarm_attach(struct sbce_daemon *d, struct scsi_device *dev)
{
	struct sbce_alarm *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (a->tfd < 0) {
		sbce_warn("cannot create an alarm timer: %s", strerror(errno));
		free(a);
		return NULL;
	}
	ev_io_init(&a->io, alarm_cb, a->tfd, EV_READ);
	ev_io_start(d->loop.loop, &a->io);
	a->dev = dev;
	scsi_device_set_alarm(dev, alarm_arm, a);
	return a;
}

void sbce_alarm_detach(struct sbce_daemon *d, struct sbce_alarm *a)
{
	if (!a)
		return;
	ev_io_stop(d->loop.loop, &a->io);
	close(a->tfd);
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
