/*
 * Targets added to and removed from the running daemon (docs/control.md,
 * target-add and target-remove; a reload does the same, reload.c).
 *
 * An added target gets a SCSI device with its LUs, an alarm, a place in the
 * running configuration, and is served by the front ends last, so no
 * initiator logs in before its LUs exist.
 *
 * A removed target is taken away from the front ends (for iSCSI:
 * SendTargets no longer lists it, a login to it gets Target removed, RFC
 * 7143 11.13.5), its connections are dropped, its LUs flushed and closed
 * (their backing files free for another LU).  Its SCSI device is kept,
 * empty, until exit, for the sessions still ending.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbcemud.h"

int sbce_target_index(const struct sbce_daemon *d, const char *name)
{
	for (size_t i = 0; name && i < d->device_count; i++)
		if (strcmp(d->cfg->targets[i]->name, name) == 0)
			return (int)i;
	return -1;
}

int sbce_target_add(struct sbce_daemon *d, const struct cfg_target *t, const char *why, char *err, size_t errlen)
{
	struct scsi_device **devices;
	struct sbce_alarm **alarms, *alarm;
	struct scsi_device *dev;
	struct cfg_target *copy;
	const char *user;

	if (sbce_target_index(d, t->name) >= 0) {
		snprintf(err, errlen, "target %s already exists", t->name);
		return -1;
	}
	for (size_t k = 0; k < t->lun_count; k++) {
		if ((user = sbce_path_user(d, t->luns[k]->path))) {
			snprintf(err, errlen, "%s is already the backing file of an LU of %s", t->luns[k]->path, user);
			return -1;
		}
		if ((user = sbce_image_user(d, t->luns[k]))) {
			snprintf(err, errlen, "rbd image %s/%s is already the image of an LU of %s",
				 t->luns[k]->rbd_pool, t->luns[k]->rbd_image, user);
			return -1;
		}
	}
	devices = realloc(d->devices, (d->device_count + 1) * sizeof(*devices));
	if (devices)
		d->devices = devices;
	alarms = realloc(d->alarms, (d->device_count + 1) * sizeof(*alarms));
	if (alarms)
		d->alarms = alarms;
	dev = devices && alarms ? scsi_device_create(t->name, sbce_workers_executor(d->workers), d->resources) : NULL;
	alarm = dev ? sbce_alarm_attach(d, dev) : NULL;
	if (!alarm) {
		scsi_device_destroy(dev);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	sbce_observe_backing_errors(d, dev);
	sbce_conglomerate_device(d, dev);
	for (size_t k = 0; k < t->lun_count; k++) {
		const struct cfg_lun *l = t->luns[k];
		char who[CFG_NAME_MAX + 32], state_dir[CFG_PATH_MAX + 2 * CFG_NAME_MAX], why_lu[512];

		snprintf(who, sizeof(who), "target %s LUN %u", t->name, l->lun);
		sbce_lu_state_dir(d->cfg, t, l, state_dir, sizeof(state_dir));
		if (sbce_lu_open(d, dev, l, who, state_dir, why_lu, sizeof(why_lu)) != 0) {
			snprintf(err, errlen, "LUN %u: %s", l->lun, why_lu);
			goto fail;
		}
	}
	copy = cfg_add_target(d->cfg, t);
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (sbce_frontends_target_added(d, copy, dev, err, errlen) != 0) {
		cfg_remove_target(d->cfg, t->name);
		goto fail;
	}
	d->devices[d->device_count] = dev;
	d->alarms[d->device_count] = alarm;
	d->device_count++;
	sbce_info("%s: target %s added with %zu LU%s", why, t->name, t->lun_count, t->lun_count == 1 ? "" : "s");
	return 0;
fail:
	/* Nothing has seen the device yet: its LUs close as they opened. */
	sbce_alarm_detach(d, alarm);
	scsi_device_destroy(dev);
	return -1;
}

int sbce_target_remove(struct sbce_daemon *d, size_t i, bool force, const char *why, unsigned *ended, char *err,
		       size_t errlen)
{
	struct scsi_device *dev = d->devices[i], **retired;
	char name[CFG_NAME_MAX];
	unsigned commands = 0, dropped, kept = 0;

	snprintf(name, sizeof(name), "%s", d->cfg->targets[i]->name);
	uint32_t *ids;
	size_t count = scsi_device_lun_ids(dev, &ids);

	for (size_t k = 0; k < count; k++) {
		struct scsi_lu_info info;

		scsi_lu_describe(scsi_device_lu(dev, ids[k]), &info);
		commands += info.commands;
	}
	if (commands && !force) {
		snprintf(err, errlen, "%u commands are in the task sets of its LUs (force ends them)", commands);
		free(ids);
		return -1;
	}
	retired = realloc(d->retired, (d->retired_count + 1) * sizeof(*retired));
	if (!retired) {
		snprintf(err, errlen, "out of memory");
		free(ids);
		return -1;
	}
	d->retired = retired;
	/* From here on the target is gone for initiators: nothing below refuses. */
	dropped = sbce_frontends_target_removed(d, name, "target removed");
	for (size_t k = 0; k < count; k++) {
		uint32_t n = ids[k];
		struct scsi_lu *lu = scsi_device_lu(dev, n);
		char why_lu[256];

		if (!lu)
			continue;
		/* SPC-4 4.6.3: what reaches a LUN without an LU; commands running I/O must finish first. */
		(void)scsi_lu_end_commands(lu, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_UNIT_NOT_SUPPORTED);
		/* A conglomerate takes its subsidiaries with it (they come later in ids: no LU left there). */
		if (scsi_subsidiary_count(lu) && scsi_conglomerate_clear(lu, why_lu, sizeof(why_lu)) != 0)
			sbce_warn("%s: target %s LUN %u: %s", why, name, n, why_lu);
		if (scsi_lu_remove(dev, n, why_lu, sizeof(why_lu)) != 0) {
			kept++;
			sbce_warn("%s: target %s LUN %u stays open until exit: %s", why, name, n, why_lu);
		}
	}
	free(ids);
	sbce_alarm_detach(d, d->alarms[i]);
	d->retired[d->retired_count++] = dev;
	memmove(&d->devices[i], &d->devices[i + 1], (d->device_count - i - 1) * sizeof(d->devices[0]));
	memmove(&d->alarms[i], &d->alarms[i + 1], (d->device_count - i - 1) * sizeof(d->alarms[0]));
	d->device_count--;
	cfg_remove_target(d->cfg, name);
	sbce_info("%s: target %s removed (%u connection%s dropped%s%s)", why, name, dropped, dropped == 1 ? "" : "s",
		  commands ? ", its commands ended" : "", kept ? ", some LUs kept open" : "");
	*ended = commands;
	return 0;
}
