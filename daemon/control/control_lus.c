/*
 * The control's lu-add and lu-remove (docs/control.md).  An added LU is
 * described by a cfgstring over the [lun] keys of the configuration (the
 * syntax of TCMU backstores, docs/tcmu.md), checked as the configuration
 * file is; sbce_lu_add and sbce_lu_remove (lus.c) do the rest.
 */
#include <stdio.h>
#include <string.h>

#include "control_internal.h"

int sbce_control_lu_add(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	const json_t *cfgstring = json_object_get(req, "cfgstring");
	struct cfg_diag diag = { 0 };
	struct cfg_target *t;
	struct cfg_lun l;
	uint64_t lun;
	size_t i;

	if (sbce_control_target(d, req, &i, err, errlen) != 0 ||
	    sbce_control_uint(req, "lun", CFG_MAX_LUN, true, &lun, err, errlen) < 0)
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
	if (sbce_lu_add(d, i, &l, "control", err, errlen) != 0)
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
