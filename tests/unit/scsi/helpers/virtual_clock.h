/*
 * A virtual clock for a device (scsi_device_set_clock / scsi_device_set_alarm):
 * time moves only when the test says, and the device's alarm fires at the
 * exact times it asked for, so the scheduler's timing is deterministic.
 */
#ifndef SBCEMU_TEST_VIRTUAL_CLOCK_H
#define SBCEMU_TEST_VIRTUAL_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "scsi.h"

struct virtual_clock {
	struct scsi_device *dev;
	uint64_t now_ns;
	uint64_t alarm_ns;
	bool armed;
};

/* The device runs on c from now on, at time start_ns. */
void virtual_clock_install(struct virtual_clock *c, struct scsi_device *dev, uint64_t start_ns);
/* Moves time on by ns, firing the device's alarm at each time it asked for on the way. */
void virtual_clock_advance(struct virtual_clock *c, uint64_t ns);
#define VC_MS 1000000ull
#define VC_US 1000ull

#endif
