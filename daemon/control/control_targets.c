/*
 * Targets added to and removed from the running daemon (docs/control.md,
 * target-add and target-remove; a reload does the same, reload.c).
 *
 * An added target is checked as the configuration file is: its keys and
 * LUN 0's cfgstring are set into a configuration of their own (cfg_set, so
 * the same setters give the same reasons) that cfg_finish() checks whole
 * (CHAP secrets, paths, ...).  It gets a SCSI device with its LUs, an alarm,
 * a place in the running configuration, and is served by the iSCSI front end
 * last, so no initiator logs in before its LUs exist.
 *
 * A removed target disappears from SendTargets and a login to it gets
 * Target removed (RFC 7143 11.13.5); its connections are dropped, its LUs
 * flushed and closed (their backing files free for another LU).  Its SCSI
 * device is kept, empty, until exit, for the sessions still ending.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"

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
	if (sbce_iscsi_add_target(d, copy, dev, err, errlen) != 0) {
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
	for (uint32_t n = 0; n < SCSI_MAX_LUNS; n++) {
		struct scsi_lu *lu = scsi_device_find_lu(dev, scsi_lun_encode(n));
		struct scsi_lu_info info;

		if (lu) {
			scsi_lu_describe(lu, &info);
			commands += info.commands;
		}
	}
	if (commands && !force) {
		snprintf(err, errlen, "%u commands are in the task sets of its LUs (force ends them)", commands);
		return -1;
	}
	retired = realloc(d->retired, (d->retired_count + 1) * sizeof(*retired));
	if (!retired) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	d->retired = retired;
	/* From here on the target is gone for initiators: nothing below refuses. */
	dropped = sbce_iscsi_remove_target(d, name, "target removed");
	for (uint32_t n = 0; n < SCSI_MAX_LUNS; n++) {
		struct scsi_lu *lu = scsi_device_find_lu(dev, scsi_lun_encode(n));
		char why_lu[256];

		if (!lu)
			continue;
		/* SPC-4 4.6.3: what reaches a LUN without an LU; commands running I/O must finish first. */
		(void)scsi_lu_end_commands(lu, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_UNIT_NOT_SUPPORTED);
		if (scsi_lu_remove(dev, n, why_lu, sizeof(why_lu)) != 0) {
			kept++;
			sbce_warn("%s: target %s LUN %u stays open until exit: %s", why, name, n, why_lu);
		}
	}
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

/* ---- target-add, target-remove ---- */

/* The [target] keys target-add takes as request members (docs/config.md). */
static const char *const target_keys[] = { "alias",	  "tpgt",	 "chap_user", "chap_secret",
					   "mutual_user", "mutual_secret", "allowed_initiators" };

/* A request member as configuration text: a string as it is, an integer in decimal; NULL with the reason. */
static const char *member_text(const json_t *v, const char *key, char *buf, size_t len, char *err, size_t errlen)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
		return buf;
	}
	snprintf(err, errlen, "\"%s\" must be a string", key);
	return NULL;
}

/* Sets the cfgstring's "key=value;..." pairs into section of cfg; -1 with the reason for a pair without '='. */
static int set_cfgstring(struct cfg *cfg, const char *section, const char *cfgstring, struct cfg_diag *diag,
			 char *err, size_t errlen)
{
	char *copy = strdup(cfgstring), *save = NULL;
	int rc = 0;

	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (char *item = strtok_r(copy, ";", &save); item && rc == 0; item = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(item, '=');

		item += strspn(item, " \t");
		if (!*item)
			continue;
		if (!eq) {
			snprintf(err, errlen, "cfgstring: \"%.64s\" is not key=value", item);
			rc = -1;
			continue;
		}
		*eq = '\0';
		cfg_set(cfg, "target-add", section, item, eq + 1, diag);
	}
	free(copy);
	return rc;
}

/* The target a target-add request describes, in a finished configuration of its own (*out), or -1 with the reason. */
static int requested_target(struct sbce_daemon *d, const json_t *req, const char *name, struct cfg **out, char *err,
			    size_t errlen)
{
	const json_t *cfgstring = json_object_get(req, "cfgstring");
	struct cfg *cand = cfg_create();
	struct cfg_diag diag = { 0 };
	char section[CFG_NAME_MAX + 32], buf[32];

	if (!cand) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (!json_is_string(cfgstring)) {
		snprintf(err, errlen, "\"cfgstring\" must be a string of LUN 0's [lun] keys: \"size=1G;path=x.img\"");
		goto fail;
	}
	cand->daemon = d->cfg->daemon; /* relative paths and state directories as the running daemon has them */
	snprintf(section, sizeof(section), "target \"%s\"", name);
	for (size_t k = 0; k < sizeof(target_keys) / sizeof(target_keys[0]); k++) {
		const json_t *v = json_object_get(req, target_keys[k]);
		const char *text;

		if (!v)
			continue;
		if (!(text = member_text(v, target_keys[k], buf, sizeof(buf), err, errlen)))
			goto fail;
		cfg_set(cand, "target-add", section, target_keys[k], text, &diag);
	}
	snprintf(section, sizeof(section), "lun \"%s\" 0", name);
	if (set_cfgstring(cand, section, json_string_value(cfgstring), &diag, err, errlen) != 0)
		goto fail;
	if (diag.count == 0)
		cfg_finish(cand, &diag);
	if (diag.count) {
		snprintf(err, errlen, "%.*s", (int)strcspn(diag.text, "\n"), diag.text);
		goto fail;
	}
	/* An empty cfgstring ("", ";") sets no key: no LUN 0, and no target either. */
	if (cand->target_count != 1 || cand->targets[0]->lun_count == 0) {
		snprintf(err, errlen, "\"cfgstring\" sets no key of LUN 0: a new target needs its LUN 0 (\"size=1G;path=x.img\")");
		goto fail;
	}
	cfg_diag_free(&diag);
	*out = cand;
	return 0;
fail:
	cfg_diag_free(&diag);
	cfg_free(cand);
	return -1;
}

int sbce_control_target_add(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	const json_t *target = json_object_get(req, "target");
	struct cfg *cand;
	int rc;

	if (!json_is_string(target)) {
		snprintf(err, errlen, "\"target\" must be the new target's name");
		return -1;
	}
	if (sbce_target_index(d, json_string_value(target)) >= 0) {
		snprintf(err, errlen, "target %s already exists", json_string_value(target));
		return -1;
	}
	if (requested_target(d, req, json_string_value(target), &cand, err, errlen) != 0)
		return -1;
	rc = sbce_target_add(d, cand->targets[0], "control", err, errlen);
	if (rc == 0) {
		json_object_set_new(result, "target", json_string(cand->targets[0]->name));
		json_object_set_new(result, "luns", json_pack("[i]", 0));
		json_object_set_new(result, "backing", json_string(cand->targets[0]->luns[0]->path));
	}
	cfg_free(cand);
	return rc;
}

int sbce_control_target_remove(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	const json_t *target = json_object_get(req, "target");
	unsigned ended = 0;
	bool force;
	int i;

	if (!json_is_string(target)) {
		snprintf(err, errlen, "\"target\" must be a target's name");
		return -1;
	}
	if (sbce_control_bool(req, "force", false, &force, err, errlen) < 0)
		return -1;
	i = sbce_target_index(d, json_string_value(target));
	if (i < 0) {
		snprintf(err, errlen, "no target \"%.224s\"", json_string_value(target));
		return -1;
	}
	json_object_set_new(result, "removed", json_string(json_string_value(target)));
	if (sbce_target_remove(d, (size_t)i, force, "control", &ended, err, errlen) != 0)
		return -1;
	json_object_set_new(result, "ended", json_integer(ended));
	return 0;
}
