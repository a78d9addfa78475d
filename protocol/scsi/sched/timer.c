/*
 * The device's clock and timers (timer.h).  The daemon's alarm is armed for
 * the first timer; scsi_device_alarm() fires every timer that is due, in
 * time order, each from the top of the call stack (no core call is running),
 * so a timer may complete commands and start others.
 */
#include <time.h>

#include "sched/heap.h"
#include "sched/timer.h"

static uint64_t monotonic_ns(void *arg)
{
	struct timespec ts;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool timer_before(const struct scsi_heap_node *a, const struct scsi_heap_node *b)
{
	const struct scsi_timer *x = (const struct scsi_timer *)a, *y = (const struct scsi_timer *)b;

	return x->when_ns < y->when_ns || (x->when_ns == y->when_ns && x->seq < y->seq);
}

void scsi_device_set_clock(struct scsi_device *dev, uint64_t (*now_ns)(void *arg), void *arg)
{
	dev->clock_now = now_ns ? now_ns : monotonic_ns;
	dev->clock_arg = now_ns ? arg : NULL;
}

uint64_t scsi_device_now(const struct scsi_device *dev)
{
	return dev->clock_now ? dev->clock_now(dev->clock_arg) : monotonic_ns(NULL);
}

void scsi_device_set_alarm(struct scsi_device *dev, void (*arm)(void *arg, uint64_t when_ns), void *arg)
{
	dev->alarm_arm = arm;
	dev->alarm_arg = arg;
	dev->timers.before = timer_before;
	if (arm && dev->timers.root)
		arm(arg, ((struct scsi_timer *)dev->timers.root)->when_ns);
}

bool scsi_timer_available(const struct scsi_device *dev)
{
	return dev->alarm_arm != NULL;
}

bool scsi_timer_armed(const struct scsi_device *dev, const struct scsi_timer *t)
{
	return scsi_heap_linked(&dev->timers, &t->node);
}

void scsi_timer_arm(struct scsi_device *dev, struct scsi_timer *t, uint64_t when_ns)
{
	dev->timers.before = timer_before;
	if (scsi_timer_armed(dev, t))
		scsi_heap_remove(&dev->timers, &t->node);
	t->when_ns = when_ns;
	t->seq = ++dev->timer_seq;
	scsi_heap_insert(&dev->timers, &t->node);
	if (dev->timers.root == &t->node && dev->alarm_arm)
		dev->alarm_arm(dev->alarm_arg, when_ns);
}

void scsi_timer_cancel(struct scsi_device *dev, struct scsi_timer *t)
{
	if (scsi_timer_armed(dev, t))
		scsi_heap_remove(&dev->timers, &t->node);
}

void scsi_device_alarm(struct scsi_device *dev)
{
	struct scsi_timer *t;

	while ((t = (struct scsi_timer *)dev->timers.root) && t->when_ns <= scsi_device_now(dev)) {
		scsi_heap_remove(&dev->timers, &t->node);
		t->fire(t);
	}
	if (t && dev->alarm_arm)
		dev->alarm_arm(dev->alarm_arg, t->when_ns);
}
