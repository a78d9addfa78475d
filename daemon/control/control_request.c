/*
 * The members of control requests (docs/control.md) as the commands read
 * them: each checked for its type and range, with a reason that names it.
 */
#include <stdio.h>
#include <string.h>

#include "control_internal.h"

int sbce_control_uint(const json_t *req, const char *name, uint64_t max, bool required, uint64_t *out, char *err,
		      size_t errlen)
{
	const json_t *v = json_object_get(req, name);

	if (!v) {
		if (required)
			snprintf(err, errlen, "\"%s\" is missing", name);
		return required ? -1 : 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > max) {
		snprintf(err, errlen, "\"%s\" must be an integer from 0 to %llu", name, (unsigned long long)max);
		return -1;
	}
	*out = (uint64_t)json_integer_value(v);
	return 1;
}

int sbce_control_bool(const json_t *req, const char *name, bool required, bool *out, char *err, size_t errlen)
{
	const json_t *v = json_object_get(req, name);

	if (!v) {
		*out = false; /* an optional flag left out is off */
		if (required)
			snprintf(err, errlen, "\"%s\" is missing", name);
		return required ? -1 : 0;
	}
	if (!json_is_boolean(v)) {
		snprintf(err, errlen, "\"%s\" must be true or false", name);
		return -1;
	}
	*out = json_is_true(v);
	return 1;
}

int sbce_control_target(struct sbce_daemon *d, const json_t *req, size_t *index, char *err, size_t errlen)
{
	const json_t *t = json_object_get(req, "target");
	int i;

	if (t && !json_is_string(t)) {
		snprintf(err, errlen, "\"target\" must be a string");
		return -1;
	}
	if (!t) {
		if (d->device_count == 1) {
			*index = 0;
			return 0;
		}
		snprintf(err, errlen, "\"target\" is missing (the daemon has %zu targets)", d->device_count);
		return -1;
	}
	i = sbce_target_index(d, json_string_value(t));
	if (i < 0) {
		snprintf(err, errlen, "no target \"%.224s\"", json_string_value(t));
		return -1;
	}
	*index = (size_t)i;
	return 0;
}

/*
 * The front end whose own LU a request names: the member named after a
 * running front end with LUs of its own ("tcmu"), or NULL.
 */
static const char *frontend_member(struct sbce_daemon *d, const json_t *req)
{
	const char *key;
	json_t *value;

	json_object_foreach((json_t *)req, key, value) {
		(void)value;
		if (sbce_frontend_has_lus(d, key))
			return key;
	}
	return NULL;
}

int sbce_control_lu(struct sbce_daemon *d, const json_t *req, struct scsi_lu **lu, const char **target, char *err,
		    size_t errlen)
{
	const char *frontend = frontend_member(d, req);
	uint64_t lun;
	size_t i;

	if (frontend) { /* an LU the front end made itself (a TCMU backstore's): its one LU is LUN 0 */
		const json_t *name = json_object_get(req, frontend);

		if (!json_is_string(name) || json_object_get(req, "target")) {
			snprintf(err, errlen, "\"%s\" names an LU of that front end (a string, without \"target\")",
				 frontend);
			return -1;
		}
		if (sbce_control_uint(req, "lun", 0, true, &lun, err, errlen) < 0)
			return -1;
		*lu = sbce_frontend_find_lu(d, frontend, json_string_value(name));
		if (!*lu) {
			snprintf(err, errlen, "%s serves no LU \"%.200s\"", frontend, json_string_value(name));
			return -1;
		}
		*target = json_string_value(name);
		return 0;
	}
	/* "lun": an LU's LUN, or a conglomerate's subsidiary as administrative LUN | element << 16. */
	if (sbce_control_target(d, req, &i, err, errlen) != 0 ||
	    sbce_control_uint(req, "lun", scsi_subsidiary_lun(CFG_MAX_LUN, SCSI_MAX_LUN), true, &lun, err, errlen) < 0)
		return -1;
	if ((lun & 0xffff) > CFG_MAX_LUN || (lun >> 16) > SCSI_MAX_LUN) {
		snprintf(err, errlen, "\"lun\" %llu is neither a LUN (0..%u) nor LUN | element << 16 (element 1..%u)",
			 (unsigned long long)lun, CFG_MAX_LUN, SCSI_MAX_LUN);
		return -1;
	}
	*lu = scsi_device_lu(d->devices[i], (uint32_t)lun);
	if (!*lu && (lun >> 16)) {
		snprintf(err, errlen, "target %s has no open LU %llu/%llu (a subsidiary opens on the first command a "
			 "bound initiator sends it)", d->cfg->targets[i]->name, (unsigned long long)(lun & 0xffff),
			 (unsigned long long)(lun >> 16));
		return -1;
	}
	if (!*lu) {
		snprintf(err, errlen, "target %s has no LUN %llu", d->cfg->targets[i]->name, (unsigned long long)lun);
		return -1;
	}
	*target = d->cfg->targets[i]->name;
	return 0;
}
