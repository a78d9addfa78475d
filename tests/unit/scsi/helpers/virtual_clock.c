#include "virtual_clock.h"

static uint64_t clock_now(void *arg)
{
	return ((struct virtual_clock *)arg)->now_ns;
}

static void clock_arm(void *arg, uint64_t when_ns)
{
	struct virtual_clock *c = arg;

	c->alarm_ns = when_ns;
	c->armed = true;
}

void virtual_clock_install(struct virtual_clock *c, struct scsi_device *dev, uint64_t start_ns)
{
	*c = (struct virtual_clock){ .dev = dev, .now_ns = start_ns };
	scsi_device_set_clock(dev, clock_now, c);
	scsi_device_set_alarm(dev, clock_arm, c);
}

void virtual_clock_advance(struct virtual_clock *c, uint64_t ns)
{
	uint64_t end = c->now_ns + ns;

	while (c->armed && c->alarm_ns <= end) {
		if (c->alarm_ns > c->now_ns)
			c->now_ns = c->alarm_ns;
		c->armed = false;
		scsi_device_alarm(c->dev);
	}
	c->now_ns = end;
}
