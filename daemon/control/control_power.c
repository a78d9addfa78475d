/*
 * The runtime control's power cut (docs/control.md, power-cut): a target
 * device loses power and comes back at once, without the process
 * restarting.  Every connection to it is cut as a pulled cable would (no
 * response goes out), then the SCSI core power-cycles the device: what the
 * volatile write caches held is lost, and each LU comes back as after a
 * power on (scsi_device_power_cycle).  What was acknowledged as durable
 * (flushed, FUA, atomic) stays.
 */
#include <stdio.h>

#include "control_internal.h"

int sbce_control_power_cut(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	const char *target;
	unsigned dropped;
	uint64_t lost;
	size_t i;

	if (sbce_control_target(d, req, &i, err, errlen) != 0)
		return -1;
	target = d->cfg->targets[i]->name;
	dropped = sbce_frontends_drop_connections(d, target, "power cut");
	lost = scsi_device_power_cycle(d->devices[i]);
	sbce_warn("control: target %s: power cut: %u connections dropped, %llu bytes of volatile write cache lost", target,
		  dropped, (unsigned long long)lost);
	json_object_set_new(result, "target", json_string(target));
	json_object_set_new(result, "connections_dropped", json_integer(dropped));
	json_object_set_new(result, "cache_bytes_lost", json_integer((json_int_t)lost));
	return 0;
}
