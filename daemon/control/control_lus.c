/*
 * Logical units added to and removed from a running target through the
 * control socket (docs/control.md, lu-add and lu-remove).  An added LU is
 * described by a cfgstring over the [lun] keys of the configuration (the
 * syntax of TCMU backstores, docs/tcmu.md), checked as the configuration
 * file is; the running configuration (d->cfg) gains or loses it, so that
 * `lus`, save and the other commands see what the target serves.  A reload
 * (reload.c) adds and removes LUs the same way.
 */
#include <stdio.h>
#include <string.h>

#include "control.h"

/* The target a request names ("target", optional with one target): its index, or -1 with the reason in err. */
static int request_target(struct sbce_daemon *d, const json_t *req, char *err, size_t errlen)
{
	const json_t *t = json_object_get(req, "target");
	int i;

	if (t && !json_is_string(t)) {
		snprintf(err, errlen, "\"target\" must be a string");
		return -1;
	}
	if (!t) {
		if (d->device_count == 1)
			return 0;
		snprintf(err, errlen, "\"target\" is missing (the daemon has %zu targets)", d->device_count);
		return -1;
	}
	i = sbce_target_index(d, json_string_value(t));
	if (i < 0)
		snprintf(err, errlen, "no target \"%.224s\"", json_string_value(t));
	return i;
}

const char *sbce_path_user(const struct sbce_daemon *d, const char *path)
{
	for (size_t i = 0; i < d->cfg->target_count; i++)
		for (size_t k = 0; k < d->cfg->targets[i]->lun_count; k++)
			if (strcmp(d->cfg->targets[i]->luns[k]->path, path) == 0)
				return d->cfg->targets[i]->name;
	return NULL;
}

int sbce_lu_add(struct sbce_daemon *d, size_t i, const struct cfg_lun *l, const char *why, char *err, size_t errlen)
{
	struct cfg_target *t = d->cfg->targets[i];
	char state_dir[CFG_PATH_MAX + 2 * CFG_NAME_MAX], who[CFG_NAME_MAX + 32];
	const char *user;

	if (scsi_device_find_lu(d->devices[i], scsi_lun_encode(l->lun))) {
		snprintf(err, errlen, "target %s already has LUN %u", t->name, l->lun);
		return -1;
	}
	if ((user = sbce_path_user(d, l->path))) {
		snprintf(err, errlen, "%s is already the backing file of an LU of %s", l->path, user);
		return -1;
	}
	sbce_lu_state_dir(d->cfg, t, l, state_dir, sizeof(state_dir));
	snprintf(who, sizeof(who), "target %s LUN %u", t->name, l->lun);
	if (sbce_lu_open(d, d->devices[i], l, who, state_dir, err, errlen) != 0)
		return -1;
	if (cfg_target_add_lun(t, l) != 0) {
		char ignored[64];

		scsi_lu_remove(d->devices[i], l->lun, ignored, sizeof(ignored));
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	sbce_info("%s: %s added (%s, %s)", why, who, cfg_lu_kind_name(l->kind), l->path);
	return 0;
}

int sbce_lu_remove(struct sbce_daemon *d, size_t i, uint32_t lun, bool force, const char *why, unsigned *ended,
		   char *err, size_t errlen)
{
	struct scsi_lu *lu = scsi_device_find_lu(d->devices[i], scsi_lun_encode(lun));
	struct scsi_lu_info info;

	if (!lu) {
		snprintf(err, errlen, "target %s has no LUN %u", d->cfg->targets[i]->name, lun);
		return -1;
	}
	scsi_lu_describe(lu, &info);
	if (info.commands && !force) {
		snprintf(err, errlen, "%u commands are in the LU's task set (force ends them)", info.commands);
		return -1;
	}
	/* SPC-4 4.6.3: what reaches a LUN without an LU; running I/O cannot be cut short, so it must be done. */
	if (info.commands && scsi_lu_end_commands(lu, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_UNIT_NOT_SUPPORTED) != 0) {
		snprintf(err, errlen, "commands of the LU are running I/O; try again");
		return -1;
	}
	if (scsi_lu_remove(d->devices[i], lun, err, errlen) != 0)
		return -1;
	cfg_target_remove_lun(d->cfg->targets[i], lun);
	sbce_info("%s: target %s LUN %u removed%s", why, d->cfg->targets[i]->name, lun,
		  info.commands ? " (its commands ended with 05/25/00)" : "");
	*ended = info.commands;
	return 0;
}

int sbce_control_lu_add(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	const json_t *cfgstring = json_object_get(req, "cfgstring");
	struct cfg_diag diag = { 0 };
	struct cfg_target *t;
	struct cfg_lun l;
	uint64_t lun;
	int i = request_target(d, req, err, errlen);

	if (i < 0 || sbce_control_uint(req, "lun", SCSI_MAX_LUNS - 1, true, &lun, err, errlen) < 0)
		return -1;
	t = d->cfg->targets[i];
	if (scsi_device_find_lu(d->devices[i], scsi_lun_encode((uint32_t)lun))) {
		snprintf(err, errlen, "target %s already has LUN %llu", t->name, (unsigned long long)lun);
		return -1;
	}
	if (!json_is_string(cfgstring)) {
		snprintf(err, errlen, "\"cfgstring\" must be a string of [lun] keys: \"kind=zbc-hm;size=1G;path=x.img\"");
		return -1;
	}
	if (cfg_lun_from_cfgstring(d->cfg, "", json_string_value(cfgstring), 0, &l, &diag) != 0) {
		const char *text = diag.text ? diag.text : "invalid";

		snprintf(err, errlen, "%.*s", (int)strcspn(text, "\n"), text);
		cfg_diag_free(&diag);
		return -1;
	}
	cfg_diag_free(&diag);
	l.lun = (uint32_t)lun;
	if (sbce_lu_add(d, (size_t)i, &l, "control", err, errlen) != 0)
		return -1;
	json_object_set_new(result, "target", json_string(t->name));
	json_object_set_new(result, "lun", json_integer(l.lun));
	json_object_set_new(result, "kind", json_string(cfg_lu_kind_name(l.kind)));
	json_object_set_new(result, "backing", json_string(l.path));
	return 0;
}

int sbce_control_lu_remove(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	struct scsi_lu *lu;
	struct scsi_lu_info info;
	const char *target;
	bool force = false;
	unsigned ended = 0;
	size_t i;

	if (sbce_control_lu(d, req, &lu, &target, err, errlen) != 0 ||
	    sbce_control_bool(req, "force", false, &force, err, errlen) < 0)
		return -1;
	for (i = 0; strcmp(d->cfg->targets[i]->name, target) != 0; i++)
		;
	scsi_lu_describe(lu, &info);
	if (sbce_lu_remove(d, i, info.lun, force, "control", &ended, err, errlen) != 0)
		return -1;
	json_object_set_new(result, "removed", json_integer(info.lun));
	json_object_set_new(result, "ended", json_integer(ended));
	return 0;
}
