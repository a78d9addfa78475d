/*
 * The device's timers: one heap of struct scsi_timer per device, the
 * daemon's alarm armed for the first (scsi_device_set_alarm).
 */
#ifndef SBCEMU_TIMER_H
#define SBCEMU_TIMER_H

#ifndef SBCE_BUILDING_SCSI
#error "sbcemu layering: timer.h is internal to the SCSI core (protocol/scsi/): use its public headers"
#endif

#include "core/scsi_internal.h"

/* Whether the device can wait at all (an alarm is installed). */
bool scsi_timer_available(const struct scsi_device *dev);
/* Arms t (re-arms it if armed) to fire at when_ns; t->fire must be set. */
void scsi_timer_arm(struct scsi_device *dev, struct scsi_timer *t, uint64_t when_ns);
void scsi_timer_cancel(struct scsi_device *dev, struct scsi_timer *t);
bool scsi_timer_armed(const struct scsi_device *dev, const struct scsi_timer *t);

#endif
