/*
 * The control's conglomerate commands (docs/control.md, docs/conglomerate.md):
 * subsidiary-create, subsidiary-destroy, subsidiary-bind, subsidiary-unbind
 * on the administrative LU "lun" of "target", for "elements" ("5",
 * "1-100, 200"), and subsidiaries, the list.  The way a vVol array's
 * management API binds a virtual volume to a host (VMware vSphere Storage,
 * "Binding and Unbinding Virtual Volumes to Protocol Endpoints"), out of
 * band.  Each change is recorded in the running configuration for save.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "control_internal.h"

enum change { CREATE, DESTROY, BIND, UNBIND };

struct apply {
	struct scsi_lu *admin;
	enum change change;
	const char *initiator;
	bool checking;                          /* the first pass: nothing changes */
	uint64_t seen[(SCSI_MAX_LUN + 1) / 64]; /* elements the list named so far */
	unsigned done;
	char *err;
	size_t errlen;
};

struct bound_to {
	const char *initiator;
	bool yes;
};

static void is_initiator(void *arg, const char *initiator)
{
	struct bound_to *b = arg;

	b->yes |= strcmp(b->initiator, initiator) == 0;
}

/* Whether the change of element e would be refused (why in a->err): the same rules the core applies. */
static bool refused(struct apply *a, uint16_t e)
{
	struct scsi_subsidiary_info one;
	bool exists = scsi_subsidiary_list(a->admin, e, &one, 1) == 1 && one.element == e;
	struct bound_to b = { .initiator = a->initiator };
	struct scsi_lu_info info;
	uint32_t lun;

	scsi_lu_describe(a->admin, &info);
	lun = info.lun;
	if (a->seen[e / 64] >> (e % 64) & 1) {
		snprintf(a->err, a->errlen, "element %u is named twice", e);
		return true;
	}
	a->seen[e / 64] |= 1ull << (e % 64);
	if (a->change == CREATE) {
		if (exists)
			snprintf(a->err, a->errlen, "LUN %u/%u already exists", lun, e);
		return exists;
	}
	if (!exists) {
		snprintf(a->err, a->errlen, "LUN %u/%u does not exist", lun, e);
		return true;
	}
	if (a->change == DESTROY) {
		if (one.binding_count)
			snprintf(a->err, a->errlen, "LUN %u/%u is bound to %u initiator(s); unbind it first", lun, e,
				 one.binding_count);
		if (!one.binding_count && one.lu) {
			scsi_lu_describe(one.lu, &info);
			if (info.commands)
				snprintf(a->err, a->errlen, "LUN %u/%u has %u commands in its task set", lun, e,
					 info.commands);
			return info.commands != 0;
		}
		return one.binding_count != 0;
	}
	scsi_subsidiary_bindings(a->admin, e, is_initiator, &b);
	if (a->change == BIND && b.yes)
		snprintf(a->err, a->errlen, "LUN %u/%u is already bound to %s", lun, e, a->initiator);
	if (a->change == UNBIND && !b.yes)
		snprintf(a->err, a->errlen, "LUN %u/%u is not bound to %s", lun, e, a->initiator);
	return a->change == BIND ? b.yes : !b.yes;
}

/*
 * A range of the list: checked (first pass), or applied (second).  A
 * refused request changes nothing (docs/control.md): every element is
 * checked before any changes.
 */
static int apply_range(void *arg, uint32_t first, uint32_t last)
{
	struct apply *a = arg;

	if (first == 0 || last > SCSI_MAX_LUN) {
		snprintf(a->err, a->errlen, "subsidiary elements are 1..%u", SCSI_MAX_LUN);
		return -1;
	}
	for (uint32_t e = first; e <= last && a->checking; e++)
		if (refused(a, (uint16_t)e))
			return -1;
	for (uint32_t e = first; e <= last && !a->checking; e++) {
		uint16_t el = (uint16_t)e;
		int rc = a->change == CREATE	? scsi_subsidiary_create(a->admin, el, a->err, a->errlen)
			 : a->change == DESTROY ? scsi_subsidiary_destroy(a->admin, el, a->err, a->errlen)
			 : a->change == BIND	? scsi_subsidiary_bind(a->admin, el, a->initiator, a->err, a->errlen)
						: scsi_subsidiary_unbind(a->admin, el, a->initiator, a->err, a->errlen);

		if (rc != 0)
			return -1;
		a->done++;
	}
	return 0;
}

/* The administrative LU a request names, and its target's index. */
static int admin_lu(struct sbce_daemon *d, const json_t *req, struct scsi_lu **admin, size_t *index, char *err,
		    size_t errlen)
{
	const char *target;
	struct scsi_lu_info info;

	if (sbce_control_lu(d, req, admin, &target, err, errlen) != 0)
		return -1;
	for (*index = 0; *index < d->cfg->target_count && strcmp(d->cfg->targets[*index]->name, target) != 0;
	     ++*index)
		;
	scsi_lu_describe(*admin, &info);
	if (*index == d->cfg->target_count || info.kind != SCSI_LU_ADMIN) {
		snprintf(err, errlen, "LUN %u is not a conglomerate's administrative LU (kind conglomerate)", info.lun);
		return -1;
	}
	return 0;
}

/* iSCSI names compare case-folded (RFC 3722); the core compares bytes, the names the front end gives it are lower case. */
static void fold(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

static int change(struct sbce_daemon *d, const json_t *req, json_t *result, enum change what, char *err,
		  size_t errlen)
{
	const json_t *elements = json_object_get(req, "elements"), *initiator = json_object_get(req, "initiator");
	struct apply a = { .change = what, .err = err, .errlen = errlen };
	struct scsi_lu_info info;
	char name[224], why[256];
	size_t i;
	int rc;

	if (admin_lu(d, req, &a.admin, &i, err, errlen) != 0)
		return -1;
	if (!json_is_string(elements)) {
		snprintf(err, errlen, "\"elements\" must be a string of subsidiary elements: \"5\" or \"1-8, 12\"");
		return -1;
	}
	if (what == BIND || what == UNBIND) {
		if (!json_is_string(initiator) || !json_string_value(initiator)[0]) {
			snprintf(err, errlen, "\"initiator\" must be an initiator name, or \"*\" for every initiator");
			return -1;
		}
		snprintf(name, sizeof(name), "%s", json_string_value(initiator));
		fold(name);
		a.initiator = name;
	}
	a.checking = true;
	rc = cfg_zone_list_walk(json_string_value(elements), apply_range, &a, why, sizeof(why));
	if (rc == 0) {
		a.checking = false;
		rc = cfg_zone_list_walk(json_string_value(elements), apply_range, &a, why, sizeof(why));
	}
	if (rc > 0 || (rc < 0 && a.err[0] == '\0'))
		snprintf(err, errlen, "\"%s\" is not a list of subsidiary elements (like \"5\" or \"1-8, 12\")",
			 json_string_value(elements));
	scsi_lu_describe(a.admin, &info);
	if (a.done)
		sbce_conglomerate_track(d, i, a.admin, info.lun);
	if (rc != 0) {
		if (a.done) { /* checked, yet the core refused (a backing store that would not flush) */
			size_t n = strlen(err);

			snprintf(err + n, errlen - n, " (%u before it done)", a.done);
		}
		return -1;
	}
	json_object_set_new(result, "lun", json_integer(info.lun));
	json_object_set_new(result, "changed", json_integer(a.done));
	json_object_set_new(result, "subsidiaries", json_integer(scsi_subsidiary_count(a.admin)));
	if (a.initiator)
		json_object_set_new(result, "initiator", json_string(a.initiator));
	sbce_info("control: target %s LUN %u: %u subsidiaries %s%s%s (%s)", d->cfg->targets[i]->name, info.lun,
		  a.done, what == CREATE ? "created" : what == DESTROY ? "destroyed" : what == BIND ? "bound" : "unbound",
		  a.initiator ? " for " : "", a.initiator ? a.initiator : "", json_string_value(elements));
	return 0;
}

int sbce_control_subsidiary_create(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	err[0] = '\0';
	return change(d, req, result, CREATE, err, errlen);
}

int sbce_control_subsidiary_destroy(struct sbce_daemon *d, const json_t *req, json_t *result, char *err,
				    size_t errlen)
{
	err[0] = '\0';
	return change(d, req, result, DESTROY, err, errlen);
}

int sbce_control_subsidiary_bind(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	err[0] = '\0';
	return change(d, req, result, BIND, err, errlen);
}

int sbce_control_subsidiary_unbind(struct sbce_daemon *d, const json_t *req, json_t *result, char *err,
				   size_t errlen)
{
	err[0] = '\0';
	return change(d, req, result, UNBIND, err, errlen);
}

static void binding_json(void *arg, const char *initiator)
{
	json_array_append_new(arg, json_string(initiator));
}

int sbce_control_subsidiaries(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	struct scsi_subsidiary_info info[256];
	json_t *list = json_array();
	struct scsi_lu *admin;
	uint16_t next = 1;
	size_t i, n;

	if (!list || admin_lu(d, req, &admin, &i, err, errlen) != 0) {
		json_decref(list);
		return -1;
	}
	while ((n = scsi_subsidiary_list(admin, next, info, 256)) > 0) {
		for (size_t k = 0; k < n; k++) {
			json_t *bound = json_array(), *o;
			struct scsi_lu_info li;

			scsi_subsidiary_bindings(admin, info[k].element, binding_json, bound);
			o = json_pack("{s:i, s:s, s:o}", "element", info[k].element, "state",
				      info[k].lu ? "open" : "closed", "bound", bound);
			if (o && info[k].lu) {
				scsi_lu_describe(info[k].lu, &li);
				json_object_set_new(o, "blocks", json_integer((json_int_t)li.num_blocks));
				json_object_set_new(o, "commands", json_integer((json_int_t)li.counters.commands));
			}
			json_array_append_new(list, o);
		}
		if (info[n - 1].element >= SCSI_MAX_LUN)
			break;
		next = (uint16_t)(info[n - 1].element + 1);
	}
	json_object_set_new(result, "subsidiaries", list);
	return 0;
}
