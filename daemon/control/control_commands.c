/*
 * The control socket's commands (docs/control.md): introspection (status,
 * targets, lus, sessions) and changes to a running LU (lu-state,
 * lu-write-protect, lu-resize); the fault rules are in control_faults.c.
 * Each command checks every member before it changes anything.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "control_internal.h"

/* ---- names ---- */

static const char *const readiness_names[] = {
	[SCSI_LU_READY] = "ready",
	[SCSI_LU_BECOMING_READY] = "becoming-ready",
	[SCSI_LU_NOT_READY] = "not-ready",
	[SCSI_LU_OFFLINE] = "offline",
	[SCSI_LU_NO_MEDIUM] = "no-medium",
};

/* SPC-4's sense key descriptions. */
static const char *const sense_key_names[16] = {
	"NO SENSE", "RECOVERED ERROR", "NOT READY", "MEDIUM ERROR", "HARDWARE ERROR", "ILLEGAL REQUEST",
	"UNIT ATTENTION", "DATA PROTECT", "BLANK CHECK", "VENDOR SPECIFIC", "COPY ABORTED", "ABORTED COMMAND",
	"RESERVED (Ch)", "VOLUME OVERFLOW", "MISCOMPARE", "COMPLETED",
};

static const char *kind_name(enum scsi_lu_kind kind)
{
	switch (kind) {
	case SCSI_LU_ZBC_HM:
		return "zbc-hm";
	case SCSI_LU_ZBC_HA:
		return "zbc-ha";
	case SCSI_LU_ADMIN:
		return "conglomerate";
	case SCSI_LU_CONVENTIONAL:
	default:
		return "conventional";
	}
}

/* ---- introspection ---- */

static void count_lu(void *arg, const struct sbce_lu_ref *ref)
{
	(void)ref;
	++*(unsigned *)arg;
}

static void count_session(void *arg, const char *frontend, const struct sbce_session *s)
{
	(void)frontend;
	(void)s;
	++*(unsigned *)arg;
}

static unsigned fault_rule_count(struct sbce_daemon *d)
{
	json_t *result = json_object();
	unsigned n = 0;
	char err[8];

	if (result && sbce_control_fault_list(d, NULL, result, err, sizeof(err)) == 0)
		n = (unsigned)json_array_size(json_object_get(result, "rules"));
	json_decref(result);
	return n;
}

static void frontend_state(void *arg, const char *name, bool running)
{
	json_object_set_new(arg, name, json_string(running ? "running" : "off"));
}

static int cmd_status(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	json_t *portals = json_array(), *frontends = json_object();
	uint32_t commands = 0;
	uint64_t buffer_bytes = 0;
	unsigned sessions = 0, lus = 0;

	(void)req;
	(void)err;
	(void)errlen;
	scsi_resources_usage(d->resources, &commands, &buffer_bytes);
	sbce_foreach_session(d, count_session, &sessions);
	sbce_foreach_lu(d, count_lu, &lus);
	json_object_set_new(result, "version", json_string(SBCEMU_VERSION));
	json_object_set_new(result, "pid", json_integer(getpid()));
	json_object_set_new(result, "uptime_seconds", json_real(ev_now(d->loop.loop) - d->started));
	json_object_set_new(result, "state_dir", json_string(d->cfg->daemon.state_dir));
	json_object_set_new(result, "control_socket", json_string(d->cfg->daemon.control_socket));
	json_object_set_new(result, "targets", json_integer((json_int_t)d->device_count));
	json_object_set_new(result, "lus", json_integer(lus));
	json_object_set_new(result, "sessions", json_integer(sessions));
	json_object_set_new(result, "commands", json_integer(commands));
	json_object_set_new(result, "buffer_bytes", json_integer((json_int_t)buffer_bytes));
	json_object_set_new(result, "fault_rules", json_integer(fault_rule_count(d)));
	/* Where initiators reach it: the iSCSI portals, and which front ends run (TCMU off says why in the log). */
	for (unsigned i = 0; i < d->cfg->daemon.listen_count; i++)
		json_array_append_new(portals, json_string(d->cfg->daemon.listen[i]));
	sbce_frontends_describe(d, frontend_state, frontends);
	json_object_set_new(result, "portals", portals);
	json_object_set_new(result, "frontends", frontends);
	return 0;
}

struct target_sessions {
	const char *target;
	unsigned n;
};

static void count_target_session(void *arg, const char *frontend, const struct sbce_session *s)
{
	struct target_sessions *ts = arg;

	(void)frontend;
	ts->n += s->target && strcmp(s->target, ts->target) == 0;
}

static int cmd_targets(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	json_t *targets = json_array();

	(void)req;
	(void)err;
	(void)errlen;
	for (size_t i = 0; i < d->device_count; i++) {
		struct target_sessions ts = { .target = d->cfg->targets[i]->name };
		json_t *portals = json_array(), *luns = json_array();

		for (unsigned p = 0; p < d->cfg->daemon.listen_count; p++)
			json_array_append_new(portals, json_string(d->cfg->daemon.listen[p]));
		uint32_t *ids;
		size_t n = scsi_device_lun_ids(d->devices[i], &ids);

		for (size_t k = 0; k < n; k++)
			if (!(ids[k] >> 16)) /* a conglomerate's subsidiaries are listed by `subsidiaries` */
				json_array_append_new(luns, json_integer(ids[k]));
		free(ids);
		sbce_foreach_session(d, count_target_session, &ts);
		json_array_append_new(targets, json_pack("{s:s, s:o, s:o, s:I}", "name", ts.target, "portals", portals,
							 "luns", luns, "sessions", (json_int_t)ts.n));
	}
	json_object_set_new(result, "targets", targets);
	return 0;
}

static json_t *counters_json(const struct scsi_lu_counters *c)
{
	static const char *const buckets[6] = { "100", "1000", "10000", "100000", "1000000", "inf" };
	json_t *keys = json_object(), *latency = json_object();

	for (unsigned k = 0; k < 16; k++)
		if (c->sense_keys[k])
			json_object_set_new(keys, sense_key_names[k], json_integer((json_int_t)c->sense_keys[k]));
	for (unsigned b = 0; b < 6; b++)
		json_object_set_new(latency, buckets[b], json_integer((json_int_t)c->latency[b]));
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o}", "commands",
			 (json_int_t)c->commands, "good", (json_int_t)c->good, "check_condition",
			 (json_int_t)c->check_condition, "busy", (json_int_t)c->busy, "task_set_full",
			 (json_int_t)c->task_set_full, "reservation_conflict", (json_int_t)c->reservation_conflict,
			 "other_status", (json_int_t)c->other_status, "aborted", (json_int_t)c->aborted,
			 "read_bytes", (json_int_t)c->read_bytes, "write_bytes", (json_int_t)c->write_bytes,
			 "sense_keys", keys, "latency_us", latency);
}

/* ASYMMETRIC ACCESS STATE names (docs/alua.md), as the config's alua_state takes them. */
static const char *alua_state_name(enum scsi_alua_state s)
{
	switch (s) {
	case SCSI_ALUA_ACTIVE_OPTIMIZED:
		return "active/optimized";
	case SCSI_ALUA_ACTIVE_NON_OPTIMIZED:
		return "active/non-optimized";
	case SCSI_ALUA_STANDBY:
		return "standby";
	case SCSI_ALUA_UNAVAILABLE:
		return "unavailable";
	case SCSI_ALUA_TRANSITIONING:
		return "transitioning";
	}
	return "?";
}

/* One LU of `lus`: key is "target" (name the target's) or a front end's name (name the LU's there). */
static json_t *lu_json(const char *key, const char *name, const char *path, const char *profile, struct scsi_lu *lu)
{
	struct scsi_lu_info info;
	char md[CFG_MODE_DEFAULTS_TEXT_MAX];
	json_t *o;

	scsi_lu_describe(lu, &info);
	sbce_mode_defaults_text(&info.mode_defaults, md, sizeof(md));
	o = json_pack("{s:s, s:i, s:s, s:i, s:I, s:i, s:s, s:s, s:b, s:i, s:o, s:{s:I, s:I, s:I}}", key, name, "lun",
		      (int)info.lun, "kind", kind_name(info.kind), "block_size", (int)info.block_size, "blocks",
		      (json_int_t)info.num_blocks, "protection_type", (int)info.protection_type, "backing", path,
		      "state", readiness_names[info.readiness], "write_protect", info.write_protect, "queued",
		      (int)info.commands, "counters", counters_json(&info.counters), "backing_errors", "no_space",
		      (json_int_t)info.backing_errors.no_space, "io", (json_int_t)info.backing_errors.io, "other",
		      (json_int_t)info.backing_errors.other);
	if (!o)
		return NULL;
	json_object_set_new(o, "profile", json_string(profile));
	json_object_set_new(o, "removable", json_boolean(info.removable));
	json_object_set_new(o, "removal_prevented", json_boolean(info.removal_prevented));
	json_object_set_new(o, "mode_defaults", json_string(md));
	if (info.backend_status[0])
		json_object_set_new(o, "backend_status", json_string(info.backend_status));
	if (info.alua_tpgs) {
		static const char *const modes[] = { "none", "implicit", "explicit", "both" };

		json_object_set_new(o, "alua", json_string(modes[info.alua_tpgs & 3]));
		json_object_set_new(o, "target_port_group", json_integer(info.target_port_group));
		json_object_set_new(o, "alua_state", json_string(alua_state_name(info.alua_state)));
	}
	{
		static const char *const cdl[] = { [SCSI_CDL_NONE] = "none", [SCSI_CDL_T2] = "t2", [SCSI_CDL_AB] = "ab" };
		char latency[CFG_LATENCY_TEXT_MAX];

		sbce_latency_text(&info.latency, latency, sizeof(latency));
		json_object_set_new(o, "latency", json_string(latency));
		json_object_set_new(o, "command_duration_limits", json_string(cdl[info.cdl_pages]));
	}
	return o;
}

static void each_lu_json(void *arg, const struct sbce_lu_ref *ref)
{
	const struct cfg_lun *l = ref->cfg;
	json_t *o = lu_json(ref->frontend ? ref->frontend : "target", ref->owner, ref->path,
			    l ? cfg_profile_name(l->profile) : ref->frontend ? "-" : "none", ref->lu);

	if (o && l) /* zbc-zd is a zbc-hm LU to the core: the configuration's name */
		json_object_set_new(o, "kind", json_string(cfg_lu_kind_name(l->kind)));
	if (o && l && l->kind == CFG_LU_CONGLOMERATE)
		json_object_set_new(o, "subsidiaries", json_integer(scsi_subsidiary_count(ref->lu)));
	if (o && ref->frontend)
		json_object_set_new(o, "frontend", json_string(ref->frontend));
	if (o && scsi_lu_zone_count(ref->lu))
		json_object_set_new(o, "zones", json_integer(scsi_lu_zone_count(ref->lu)));
	json_array_append_new(arg, o);
}

/* The LUs of lus that belong to target (every one when NULL). */
static json_t *lus_of(const json_t *lus, const char *target)
{
	json_t *out = json_array(), *o;
	size_t i;

	json_array_foreach(lus, i, o) {
		const char *t = json_string_value(json_object_get(o, "target"));

		if (!target || (t && !json_object_get(o, "frontend") && strcmp(t, target) == 0))
			json_array_append(out, o);
	}
	return out;
}

static int cmd_lus(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	const char *target = json_string_value(json_object_get(req, "target"));
	json_t *lus = json_array(), *one, *o;
	struct scsi_lu_info info;
	struct scsi_lu *lu;
	size_t i;

	/* "target": that target's LUs only (sbcemuctl lus --target IQN); with "lun", that LU (lu show). */
	if (json_object_get(req, "lun")) {
		if (sbce_control_lu(d, req, &lu, &target, err, errlen) != 0) {
			json_decref(lus);
			return -1;
		}
		scsi_lu_describe(lu, &info);
	} else if (target && sbce_control_target(d, req, &i, err, errlen) != 0) {
		json_decref(lus);
		return -1;
	}
	sbce_foreach_lu(d, each_lu_json, lus);
	one = target ? lus_of(lus, target) : json_incref(lus);
	json_decref(lus);
	if (json_object_get(req, "lun")) {
		json_t *match = NULL;

		json_array_foreach(one, i, o)
			if (json_integer_value(json_object_get(o, "lun")) == (json_int_t)info.lun)
				match = o;
		if (!match) {
			json_decref(one);
			snprintf(err, errlen, "LUN %u is not a configured LU of %s (a subsidiary: sbcemuctl subsidiaries)",
				 info.lun, target);
			return -1;
		}
		json_object_update(result, match);
		json_decref(one);
		return 0;
	}
	json_object_set_new(result, "lus", one);
	return 0;
}

/*
 * One view of everything (what tgtadm --op show and targetcli ls give):
 * each target with its portals, authentication (CHAP user names, never
 * secrets), ACLs and LUs; the LUs front ends made; the fault rules; the
 * front ends.
 */
static int cmd_show(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	json_t *lus = json_array(), *targets = json_array(), *frontend_lus = json_array(), *frontends = json_object();
	json_t *o;
	size_t k;

	(void)req;
	sbce_foreach_lu(d, each_lu_json, lus);
	for (size_t i = 0; i < d->device_count; i++) {
		const struct cfg_target *t = d->cfg->targets[i];
		json_t *portals = json_array(), *acls = json_array();

		for (unsigned p = 0; p < d->cfg->daemon.listen_count; p++)
			json_array_append_new(portals, json_string(d->cfg->daemon.listen[p]));
		for (size_t a = 0; a < t->acl_count; a++)
			json_array_append_new(acls, json_pack("{s:s, s:s, s:s}", "initiator", t->acls[a]->initiator,
							      "chap_user", t->acls[a]->chap_user, "mutual_user",
							      t->acls[a]->mutual_user));
		json_array_append_new(targets, json_pack("{s:s, s:s, s:i, s:o, s:s, s:s, s:o, s:o}", "name", t->name,
							 "alias", t->alias, "tpgt", (int)t->tpgt, "portals", portals,
							 "chap_user", t->chap_user, "mutual_user", t->mutual_user,
							 "acls", acls, "luns", lus_of(lus, t->name)));
	}
	json_array_foreach(lus, k, o)
		if (json_object_get(o, "frontend"))
			json_array_append(frontend_lus, o);
	json_decref(lus);
	sbce_frontends_describe(d, frontend_state, frontends);
	json_object_set_new(result, "targets", targets);
	json_object_set_new(result, "frontend_lus", frontend_lus);
	json_object_set_new(result, "frontends", frontends);
	return sbce_control_fault_list(d, NULL, result, err, errlen);
}

static void session_json(void *arg, const char *frontend, const struct sbce_session *s)
{
	json_t *o = json_pack("{s:s, s:s?, s:s, s:i}", "frontend", frontend, "target", s->target, "initiator",
			      s->initiator, "commands", (int)s->commands);

	if (!o)
		return;
	/* What only this transport has (iSCSI: ISID, TSIH, digests, the command window ...). */
	for (size_t i = 0; i < s->attr_count; i++) {
		const struct sbce_attr *a = &s->attrs[i];

		switch (a->type) {
		case SBCE_ATTR_STRING:
			json_object_set_new(o, a->name, json_string(a->string ? a->string : ""));
			break;
		case SBCE_ATTR_INTEGER:
			json_object_set_new(o, a->name, json_integer((json_int_t)a->integer));
			break;
		case SBCE_ATTR_BOOLEAN:
			json_object_set_new(o, a->name, json_boolean(a->boolean));
			break;
		}
	}
	json_array_append_new(arg, o);
}

static int cmd_sessions(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	json_t *sessions = json_array();

	(void)req;
	(void)err;
	(void)errlen;
	sbce_foreach_session(d, session_json, sessions);
	json_object_set_new(result, "sessions", sessions);
	return 0;
}

/* ---- changes ---- */

/* An implicit asymmetric access state transition of the LU's target port group (spc_alua.c). */
static int cmd_lu_alua(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	static const enum scsi_alua_state settable[] = { SCSI_ALUA_ACTIVE_OPTIMIZED, SCSI_ALUA_ACTIVE_NON_OPTIMIZED,
							 SCSI_ALUA_STANDBY, SCSI_ALUA_UNAVAILABLE };
	const json_t *state = json_object_get(req, "state");
	struct scsi_lu *lu;
	struct scsi_lu_info info;
	const char *target;
	unsigned i = 0;

	if (sbce_control_lu(d, req, &lu, &target, err, errlen) != 0)
		return -1;
	while (json_is_string(state) && i < 4 && strcmp(alua_state_name(settable[i]), json_string_value(state)) != 0)
		i++;
	if (!json_is_string(state) || i == 4) {
		snprintf(err, errlen, "\"state\" must be active/optimized, active/non-optimized, standby or unavailable");
		return -1;
	}
	scsi_lu_describe(lu, &info);
	if (scsi_lu_set_alua_state(lu, settable[i], err, errlen) != 0)
		return -1;
	sbce_lu_track(d, target, info.lun, "alua_state", alua_state_name(settable[i]));
	sbce_info("control: target %s LUN %u: asymmetric access state %s (was %s)", target, info.lun,
		  alua_state_name(settable[i]), alua_state_name(info.alua_target));
	json_object_set_new(result, "alua_state", json_string(alua_state_name(settable[i])));
	json_object_set_new(result, "previous", json_string(alua_state_name(info.alua_target)));
	return 0;
}

static int cmd_lu_state(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	const json_t *state = json_object_get(req, "state");
	struct scsi_lu *lu;
	struct scsi_lu_info info;
	const char *target;
	unsigned r;
	bool force = false;

	if (sbce_control_lu(d, req, &lu, &target, err, errlen) != 0)
		return -1;
	for (r = 0; json_is_string(state) && r < sizeof(readiness_names) / sizeof(readiness_names[0]); r++)
		if (strcmp(readiness_names[r], json_string_value(state)) == 0)
			break;
	if (!json_is_string(state) || r == sizeof(readiness_names) / sizeof(readiness_names[0])) {
		snprintf(err, errlen, "\"state\" must be ready, becoming-ready, not-ready, offline or no-medium");
		return -1;
	}
	scsi_lu_describe(lu, &info);
	if (sbce_control_bool(req, "force", false, &force, err, errlen) < 0)
		return -1;
	/* SBC-4 5.28 (PREVENT ALLOW MEDIUM REMOVAL): a prevented medium is not ejected, unless forced out. */
	if (r == SCSI_LU_NO_MEDIUM && info.readiness != SCSI_LU_NO_MEDIUM && info.removal_prevented && !force) {
		snprintf(err, errlen, "an initiator prevents medium removal (PREVENT ALLOW MEDIUM REMOVAL); "
			 "force it to pull the medium anyway");
		return -1;
	}
	scsi_lu_set_readiness(lu, (enum scsi_lu_readiness)r);
	sbce_info("control: target %s LUN %u: state %s (was %s)", target, info.lun, readiness_names[r],
		  readiness_names[info.readiness]);
	json_object_set_new(result, "state", json_string(readiness_names[r]));
	json_object_set_new(result, "previous", json_string(readiness_names[info.readiness]));
	return 0;
}

static int cmd_lu_write_protect(struct sbce_daemon *d, const json_t *req, json_t *result, char *err,
				size_t errlen)
{
	struct scsi_lu *lu;
	struct scsi_lu_info info;
	const char *target;
	bool on;

	if (sbce_control_lu(d, req, &lu, &target, err, errlen) != 0 ||
	    sbce_control_bool(req, "enable", true, &on, err, errlen) < 0)
		return -1;
	scsi_lu_describe(lu, &info);
	scsi_lu_set_write_protect(lu, on);
	sbce_lu_track(d, target, info.lun, "write_protect", on ? "true" : "false");
	sbce_info("control: target %s LUN %u: write protection %s", target, info.lun, on ? "on" : "off");
	json_object_set_new(result, "write_protect", json_boolean(on));
	json_object_set_new(result, "previous", json_boolean(info.write_protect));
	return 0;
}

static int cmd_lu_mode_defaults(struct sbce_daemon *d, const json_t *req, json_t *result, char *err,
				size_t errlen)
{
	const json_t *fields = json_object_get(req, "fields");
	struct scsi_mode_defaults md;
	struct scsi_lu_info info;
	struct scsi_lu *lu;
	const char *target;
	char before[CFG_MODE_DEFAULTS_TEXT_MAX], after[CFG_MODE_DEFAULTS_TEXT_MAX];
	bool replace, changed;

	if (sbce_control_lu(d, req, &lu, &target, err, errlen) != 0 ||
	    sbce_control_bool(req, "replace", false, &replace, err, errlen) < 0)
		return -1;
	if (!json_is_string(fields)) {
		snprintf(err, errlen, "\"fields\" must be a string like \"wce=0 d_sense=1\"");
		return -1;
	}
	if (sbce_mode_defaults(json_string_value(fields), &md, err, errlen) != 0)
		return -1;
	scsi_lu_describe(lu, &info);
	if (!replace) { /* the fields given change, the others keep their defaults */
		for (int f = 0; f < SCSI_MODE_FIELD_COUNT; f++)
			if (!(md.set & (1u << f)) && (info.mode_defaults.set & (1u << f))) {
				md.set |= 1u << f;
				md.value[f] = info.mode_defaults.value[f];
			}
	}
	changed = scsi_lu_set_mode_defaults(lu, &md);
	sbce_mode_defaults_text(&info.mode_defaults, before, sizeof(before));
	sbce_mode_defaults_text(&md, after, sizeof(after));
	sbce_lu_track(d, target, info.lun, "mode_defaults", after);
	sbce_info("control: target %s LUN %u: mode defaults \"%s\" (were \"%s\")%s", target, info.lun, after, before,
		  changed ? ", current values changed" : "");
	json_object_set_new(result, "mode_defaults", json_string(after));
	json_object_set_new(result, "previous", json_string(before));
	json_object_set_new(result, "current_changed", json_boolean(changed));
	return 0;
}

static int cmd_lu_resize(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	struct scsi_lu *lu;
	struct scsi_lu_info info;
	const char *target;
	uint64_t bytes = 0, blocks = 0;
	bool force = false;
	int has_bytes, has_blocks;

	if (sbce_control_lu(d, req, &lu, &target, err, errlen) != 0)
		return -1;
	scsi_lu_describe(lu, &info);
	has_bytes = sbce_control_uint(req, "bytes", INT64_MAX, false, &bytes, err, errlen);
	has_blocks = sbce_control_uint(req, "blocks", INT64_MAX / info.block_size, false, &blocks, err, errlen);
	if (has_bytes < 0 || has_blocks < 0 || sbce_control_bool(req, "force", false, &force, err, errlen) < 0)
		return -1;
	if (has_bytes + has_blocks != 1) {
		snprintf(err, errlen, "give one of \"bytes\" and \"blocks\"");
		return -1;
	}
	if (has_bytes) {
		if (bytes % info.block_size) {
			snprintf(err, errlen, "%llu bytes is not a multiple of the block size %u",
				 (unsigned long long)bytes, info.block_size);
			return -1;
		}
		blocks = bytes / info.block_size;
	}
	if (scsi_lu_resize(lu, blocks, force, err, errlen) != 0)
		return -1;
	{
		char text[32];

		snprintf(text, sizeof(text), "%llu", (unsigned long long)(blocks * info.block_size));
		sbce_lu_track(d, target, info.lun, "size", text);
	}
	sbce_info("control: target %s LUN %u: resized from %llu to %llu blocks", target, info.lun,
		  (unsigned long long)info.num_blocks, (unsigned long long)blocks);
	json_object_set_new(result, "blocks", json_integer((json_int_t)blocks));
	json_object_set_new(result, "previous", json_integer((json_int_t)info.num_blocks));
	return 0;
}

/* ---- the table ---- */

static const char *const no_members[] = { NULL };
/* SBCE_CONTROL_MEMBER_FRONTEND_LU: the name of a front end with LUs of its own, instead of "target". */
#define LU_MEMBERS "target", SBCE_CONTROL_MEMBER_FRONTEND_LU, "lun"
static const char *const lu_state_members[] = { LU_MEMBERS, "state", "force", NULL };
static const char *const lu_wp_members[] = { LU_MEMBERS, "enable", NULL };
static const char *const lu_alua_members[] = { LU_MEMBERS, "state", NULL };
static const char *const lu_mode_defaults_members[] = { LU_MEMBERS, "fields", "replace", NULL };
static const char *const lu_resize_members[] = { "target", "lun", "bytes", "blocks", "force", NULL };
static const char *const fault_add_members[] = {
	LU_MEMBERS, "action", "opcodes", "service_action", "lba_first", "lba_last", "initiator", "every",
	"probability", "seed", "count", "after_ms", "for_ms", "sense_key", "asc", "ascq", "status", "delay_ms",
	"blocks", "zone", "pi_field", "temperature", "temperature_threshold", NULL,
};
static const char *const fault_remove_members[] = { "id", "all", NULL };
static const char *const lu_add_members[] = { "target", "lun", "cfgstring", NULL };
static const char *const lu_remove_members[] = { "target", "lun", "force", NULL };
static const char *const target_add_members[] = { "target",	  "cfgstring",	 "alias",
						   "tpgt",	  "chap_user",	 "chap_secret",
						   "mutual_user", "mutual_secret", "allowed_initiators",
						   NULL };
static const char *const target_remove_members[] = { "target", "force", NULL };
static const char *const power_cut_members[] = { "target", NULL };
static const char *const lu_latency_members[] = { LU_MEMBERS, "model", NULL };
static const char *const stats_members[] = { "reset", NULL };
static const char *const reload_members[] = { "remove_all_targets", NULL };
static const char *const subsidiary_members[] = { "target", "lun", "elements", NULL };
static const char *const binding_members[] = { "target", "lun", "elements", "initiator", NULL };
static const char *const subsidiaries_members[] = { "target", "lun", NULL };
static const char *const lus_members[] = { "target", "lun", NULL };
static const char *const acl_members[] = { "target", "initiator", "chap_user", "chap_secret", "mutual_user",
					   "mutual_secret", NULL };
static const char *const acl_remove_members[] = { "target", "initiator", NULL };
static const char *const portal_members[] = { "address", NULL };
static const char *const auth_members[] = { "target", "chap_user", "chap_secret", "mutual_user", "mutual_secret",
					    NULL };

const struct sbce_control_command sbce_control_commands[] = {
	{ "status", no_members, cmd_status, false },
	{ "targets", no_members, cmd_targets, false },
	{ "lus", lus_members, cmd_lus, false },
	{ "show", no_members, cmd_show, false },
	{ "sessions", no_members, cmd_sessions, false },
	{ "lu-state", lu_state_members, cmd_lu_state, false },
	{ "lu-write-protect", lu_wp_members, cmd_lu_write_protect, true },
	{ "lu-alua", lu_alua_members, cmd_lu_alua, true },
	{ "lu-resize", lu_resize_members, cmd_lu_resize, true },
	{ "lu-mode-defaults", lu_mode_defaults_members, cmd_lu_mode_defaults, true },
	{ "lu-latency", lu_latency_members, sbce_control_lu_latency, true },
	{ "stats", stats_members, sbce_control_stats, false },
	{ "lu-add", lu_add_members, sbce_control_lu_add, true },
	{ "lu-remove", lu_remove_members, sbce_control_lu_remove, true },
	{ "target-add", target_add_members, sbce_control_target_add, true },
	{ "target-remove", target_remove_members, sbce_control_target_remove, true },
	{ "power-cut", power_cut_members, sbce_control_power_cut, false },
	{ "save", no_members, sbce_control_save, false },
	{ "reload", reload_members, sbce_control_reload, false },
	{ "acl-add", acl_members, sbce_control_acl_add, true },
	{ "acl-remove", acl_remove_members, sbce_control_acl_remove, true },
	{ "target-auth", auth_members, sbce_control_target_auth, true },
	{ "portal-add", portal_members, sbce_control_portal_add, true },
	{ "portal-remove", portal_members, sbce_control_portal_remove, true },
	{ "subsidiary-create", subsidiary_members, sbce_control_subsidiary_create, true },
	{ "subsidiary-destroy", subsidiary_members, sbce_control_subsidiary_destroy, true },
	{ "subsidiary-bind", binding_members, sbce_control_subsidiary_bind, true },
	{ "subsidiary-unbind", binding_members, sbce_control_subsidiary_unbind, true },
	{ "subsidiaries", subsidiaries_members, sbce_control_subsidiaries, false },
	{ "fault-add", fault_add_members, sbce_control_fault_add, false },
	{ "fault-list", no_members, sbce_control_fault_list, false },
	{ "fault-remove", fault_remove_members, sbce_control_fault_remove, false },
	{ NULL, NULL, NULL, false },
};
