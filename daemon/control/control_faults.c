/*
 * Fault rules through the control socket (docs/control.md, fault-add,
 * fault-list, fault-remove) on the SCSI core's rules (scsi_faults.h); the
 * alarms delayed commands wait on, and removing rules across the daemon,
 * are the daemon's (faults.c).
 */
#include <stdio.h>
#include <string.h>

#include "control_internal.h"

static const char *const action_names[] = {
	[SCSI_FAULT_ACTION_SENSE] = "sense",
	[SCSI_FAULT_ACTION_STATUS] = "status",
	[SCSI_FAULT_ACTION_DELAY] = "delay",
	[SCSI_FAULT_ACTION_HOLD] = "hold",
	[SCSI_FAULT_ACTION_MEDIUM_ERROR] = "medium-error",
	[SCSI_FAULT_ACTION_CORRUPT_READ] = "corrupt-read",
	[SCSI_FAULT_ACTION_SHORT_READ] = "short-read",
	[SCSI_FAULT_ACTION_TEAR_ATOMIC] = "tear-atomic",
	[SCSI_FAULT_ACTION_ZONE_OFFLINE] = "zone-offline",
	[SCSI_FAULT_ACTION_ZONE_READ_ONLY] = "zone-read-only",
	[SCSI_FAULT_ACTION_DROP_CONNECTION] = "drop-connection",
	[SCSI_FAULT_ACTION_REJECT_ABORT_TASK] = "reject-abort-task",
	[SCSI_FAULT_ACTION_IGNORE_ABORT_TASK] = "ignore-abort-task",
	[SCSI_FAULT_ACTION_CORRUPT_PI] = "corrupt-pi",
	[SCSI_FAULT_ACTION_PREDICT_FAILURE] = "predict-failure",
	[SCSI_FAULT_ACTION_TEMPERATURE] = "temperature",
};
static const char *const pi_field_names[] = {
	[SCSI_PI_GUARD] = "guard",
	[SCSI_PI_APP_TAG] = "app-tag",
	[SCSI_PI_REF_TAG] = "ref-tag",
};
#define ACTION_COUNT (sizeof(action_names) / sizeof(action_names[0]))

/* ---- fault-add ---- */

static int parse_action(const json_t *req, struct scsi_fault_rule_params *p, char *err, size_t errlen)
{
	const json_t *a = json_object_get(req, "action");
	unsigned i;

	for (i = 0; json_is_string(a) && i < ACTION_COUNT; i++)
		if (strcmp(action_names[i], json_string_value(a)) == 0)
			break;
	if (!json_is_string(a) || i == ACTION_COUNT) {
		snprintf(err, errlen, "\"action\" must be sense, status, delay, hold, medium-error, corrupt-read, "
			 "short-read, tear-atomic, zone-offline, zone-read-only, drop-connection, reject-abort-task, "
			 "ignore-abort-task, corrupt-pi, predict-failure or temperature");
		return -1;
	}
	p->action = (enum scsi_fault_action)i;
	return 0;
}

static int parse_match(const json_t *req, struct scsi_fault_rule_params *p, char *err, size_t errlen)
{
	const json_t *ops = json_object_get(req, "opcodes"), *ini = json_object_get(req, "initiator");
	uint64_t v;
	int has_first, has_last;
	size_t i;
	json_t *op;

	if (ops) {
		if (!json_is_array(ops) || json_array_size(ops) == 0 || json_array_size(ops) > SCSI_FAULT_OPCODES_MAX) {
			snprintf(err, errlen, "\"opcodes\" must be an array of 1 to %d operation codes",
				 SCSI_FAULT_OPCODES_MAX);
			return -1;
		}
		json_array_foreach(ops, i, op) {
			if (!json_is_integer(op) || json_integer_value(op) < 0 || json_integer_value(op) > 255) {
				snprintf(err, errlen, "\"opcodes\" must hold integers from 0 to 255");
				return -1;
			}
			p->opcodes[p->opcode_count++] = (uint8_t)json_integer_value(op);
		}
	}
	switch (sbce_control_uint(req, "service_action", 0xffff, false, &v, err, errlen)) {
	case -1:
		return -1;
	case 1:
		p->has_service_action = true;
		p->service_action = (uint16_t)v;
		break;
	}
	has_first = sbce_control_uint(req, "lba_first", INT64_MAX, false, &p->lba_first, err, errlen);
	has_last = sbce_control_uint(req, "lba_last", INT64_MAX, false, &p->lba_last, err, errlen);
	if (has_first < 0 || has_last < 0)
		return -1;
	if (has_first != has_last) {
		snprintf(err, errlen, "give both \"lba_first\" and \"lba_last\", or neither");
		return -1;
	}
	p->has_lba = has_first;
	if (ini && (!json_is_string(ini) || json_string_length(ini) >= sizeof(p->initiator))) {
		snprintf(err, errlen, "\"initiator\" must be a string of at most %zu bytes", sizeof(p->initiator) - 1);
		return -1;
	}
	if (ini)
		snprintf(p->initiator, sizeof(p->initiator), "%s", json_string_value(ini));
	return 0;
}

static int parse_trigger(const json_t *req, uint32_t id, struct scsi_fault_rule_params *p, char *err,
			 size_t errlen)
{
	const json_t *prob = json_object_get(req, "probability");
	uint64_t every = 1, after = 0, length = 0;

	if (sbce_control_uint(req, "every", UINT32_MAX, false, &every, err, errlen) < 0 ||
	    sbce_control_uint(req, "count", INT64_MAX, false, &p->count, err, errlen) < 0)
		return -1;
	if (every == 0) {
		snprintf(err, errlen, "\"every\" must be at least 1");
		return -1;
	}
	p->every = (uint32_t)every;
	p->seed = id;
	if (sbce_control_uint(req, "seed", INT64_MAX, false, &p->seed, err, errlen) < 0)
		return -1;
	p->probability = 1.0;
	if (prob && (!json_is_number(prob) || !(json_number_value(prob) >= 0.0 && json_number_value(prob) <= 1.0))) {
		snprintf(err, errlen, "\"probability\" must be a number from 0 to 1");
		return -1;
	}
	if (prob)
		p->probability = json_number_value(prob);
	if (sbce_control_uint(req, "after_ms", UINT32_MAX, false, &after, err, errlen) < 0 ||
	    sbce_control_uint(req, "for_ms", UINT32_MAX, false, &length, err, errlen) < 0)
		return -1;
	p->after_ms = (uint32_t)after;
	p->for_ms = (uint32_t)length;
	return 0;
}

/*
 * The members each action takes: its own (sense_key ... zone: required) and
 * whether it matches commands at all (medium-error and zone rules stand on
 * their own: no opcodes, initiator or trigger).
 */
enum { M_SENSE_KEY, M_ASC, M_ASCQ, M_STATUS, M_DELAY_MS, M_BLOCKS, M_ZONE, M_TEMPERATURE, M_THRESHOLD, M_COUNT };
static const char *const action_members[M_COUNT] = { "sense_key", "asc", "ascq", "status", "delay_ms", "blocks",
						     "zone", "temperature", "temperature_threshold" };
static const uint64_t action_member_max[M_COUNT] = { 15, 255, 255, 255, SCSI_FAULT_DELAY_MS_MAX, UINT32_MAX,
						     UINT32_MAX, 254, 254 };
/* The members an action may leave out (the rest of its own are required). */
static unsigned optional_members(enum scsi_fault_action a)
{
	return 1u << M_THRESHOLD | (a == SCSI_FAULT_ACTION_PREDICT_FAILURE ? 1u << M_ASC | 1u << M_ASCQ : 0);
}

static unsigned members_of(enum scsi_fault_action a)
{
	switch (a) {
	case SCSI_FAULT_ACTION_SENSE:
		return 1u << M_SENSE_KEY | 1u << M_ASC | 1u << M_ASCQ;
	case SCSI_FAULT_ACTION_STATUS:
		return 1u << M_STATUS;
	case SCSI_FAULT_ACTION_DELAY:
		return 1u << M_DELAY_MS;
	case SCSI_FAULT_ACTION_TEAR_ATOMIC:
		return 1u << M_BLOCKS;
	case SCSI_FAULT_ACTION_ZONE_OFFLINE:
	case SCSI_FAULT_ACTION_ZONE_READ_ONLY:
		return 1u << M_ZONE;
	case SCSI_FAULT_ACTION_PREDICT_FAILURE:
		return 1u << M_ASC | 1u << M_ASCQ; /* optional: 5D/00 when left out */
	case SCSI_FAULT_ACTION_TEMPERATURE:
		return 1u << M_TEMPERATURE | 1u << M_THRESHOLD;
	case SCSI_FAULT_ACTION_HOLD:
	case SCSI_FAULT_ACTION_MEDIUM_ERROR:
	case SCSI_FAULT_ACTION_CORRUPT_READ:
	case SCSI_FAULT_ACTION_SHORT_READ:
	case SCSI_FAULT_ACTION_DROP_CONNECTION:
	case SCSI_FAULT_ACTION_REJECT_ABORT_TASK:
	case SCSI_FAULT_ACTION_IGNORE_ABORT_TASK:
	case SCSI_FAULT_ACTION_CORRUPT_PI: /* pi_field: parse_pi_field */
		break;
	}
	return 0;
}

/* corrupt-pi's "pi_field": guard, app-tag or ref-tag; refused with any other action. */
static int parse_pi_field(const json_t *req, struct scsi_fault_rule_params *p, char *err, size_t errlen)
{
	const json_t *f = json_object_get(req, "pi_field");
	unsigned i;

	if (p->action != SCSI_FAULT_ACTION_CORRUPT_PI) {
		if (!f)
			return 0;
		snprintf(err, errlen, "\"pi_field\" does not go with action %s", action_names[p->action]);
		return -1;
	}
	for (i = 0; json_is_string(f) && i < sizeof(pi_field_names) / sizeof(pi_field_names[0]); i++)
		if (strcmp(pi_field_names[i], json_string_value(f)) == 0)
			break;
	if (!json_is_string(f) || i == sizeof(pi_field_names) / sizeof(pi_field_names[0])) {
		snprintf(err, errlen, "\"pi_field\" must be guard, app-tag or ref-tag");
		return -1;
	}
	p->pi_field = (enum scsi_pi_field)i;
	return 0;
}

static int parse_action_members(const json_t *req, struct scsi_fault_rule_params *p, char *err, size_t errlen)
{
	static const char *const matching[] = { "every",   "probability",    "count",     "seed",  "opcodes",
						"service_action", "initiator", "after_ms", "for_ms" };
	bool zone = p->action == SCSI_FAULT_ACTION_ZONE_OFFLINE || p->action == SCSI_FAULT_ACTION_ZONE_READ_ONLY;
	unsigned wanted = members_of(p->action);
	uint64_t v[M_COUNT] = { 0 };

	for (unsigned i = 0; i < M_COUNT; i++) {
		if (!(wanted & (1u << i)) && json_object_get(req, action_members[i])) {
			snprintf(err, errlen, "\"%s\" does not go with action %s", action_members[i],
				 action_names[p->action]);
			return -1;
		}
		if ((wanted & (1u << i)) &&
		    sbce_control_uint(req, action_members[i], action_member_max[i], !(optional_members(p->action) & (1u << i)),
				      &v[i], err, errlen) < 0)
			return -1;
	}
	if (p->action == SCSI_FAULT_ACTION_MEDIUM_ERROR || p->action == SCSI_FAULT_ACTION_CORRUPT_PI || zone ||
	    p->action == SCSI_FAULT_ACTION_PREDICT_FAILURE || p->action == SCSI_FAULT_ACTION_TEMPERATURE) {
		for (unsigned i = 0; i < sizeof(matching) / sizeof(matching[0]); i++) {
			if (json_object_get(req, matching[i])) {
				snprintf(err, errlen, "a %s rule matches no commands: \"%s\" does not go with it",
					 action_names[p->action], matching[i]);
				return -1;
			}
		}
	}
	if (zone && p->has_lba) {
		snprintf(err, errlen, "a %s rule names its zone with \"zone\", not an LBA range", action_names[p->action]);
		return -1;
	}
	p->sense_key = (uint8_t)v[M_SENSE_KEY];
	p->asc = (uint8_t)v[M_ASC];
	p->ascq = (uint8_t)v[M_ASCQ];
	p->status = (uint8_t)v[M_STATUS];
	p->delay_ms = (uint32_t)v[M_DELAY_MS];
	p->blocks = (uint32_t)v[M_BLOCKS];
	p->zone = (uint32_t)v[M_ZONE];
	p->temperature = (uint8_t)v[M_TEMPERATURE];
	p->temperature_threshold = (uint8_t)v[M_THRESHOLD];
	return 0;
}

int sbce_control_fault_add(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	struct scsi_fault_rule_params p;
	struct scsi_lu *lu;
	const char *target;
	uint32_t id = d->next_fault_id + 1;

	memset(&p, 0, sizeof(p));
	if (sbce_control_lu(d, req, &lu, &target, err, errlen) != 0 || parse_action(req, &p, err, errlen) != 0 ||
	    parse_match(req, &p, err, errlen) != 0 || parse_trigger(req, id, &p, err, errlen) != 0 ||
	    parse_action_members(req, &p, err, errlen) != 0 || parse_pi_field(req, &p, err, errlen) != 0 ||
	    scsi_lu_fault_add(lu, id, &p, err, errlen) != 0)
		return -1;
	d->next_fault_id = id;
	sbce_info("control: %s: fault rule %u (%s) added", target, id, action_names[p.action]);
	json_object_set_new(result, "id", json_integer(id));
	return 0;
}

/* ---- fault-list ---- */

/* Where a rule with a time window stands: "waiting" (not open yet), "open", "closed" (past its end). */
static const char *window_state(const struct scsi_fault_rule_params *p, const struct scsi_fault_rule_stats *st)
{
	if (st->age_ms < p->after_ms)
		return "waiting";
	return !p->for_ms || st->age_ms - p->after_ms < p->for_ms ? "open" : "closed";
}

struct list_ctx {
	json_t *rules;
	const char *key;      /* "target", or the name of the front end that made the LU */
	const char *target;   /* the target's name, or the LU's in its front end */
	uint32_t lun;
};

static void list_rule(void *arg, uint32_t id, const struct scsi_fault_rule_params *p,
		      const struct scsi_fault_rule_stats *st)
{
	struct list_ctx *ctx = arg;
	json_t *r = json_pack("{s:i, s:s, s:i, s:s, s:i, s:f, s:I, s:I, s:I, s:I, s:i}", "id", (int)id,
			      ctx->key, ctx->target, "lun", (int)ctx->lun, "action", action_names[p->action], "every",
			      (int)p->every, "probability", p->probability, "seed", (json_int_t)p->seed, "count",
			      (json_int_t)p->count, "matched", (json_int_t)st->matched, "fired", (json_int_t)st->fired,
			      "held", (int)st->held);

	if (!r)
		return;
	if (strcmp(ctx->key, "target") != 0)
		json_object_set_new(r, "frontend", json_string(ctx->key));
	if (p->opcode_count) {
		json_t *ops = json_array();

		for (unsigned i = 0; i < p->opcode_count; i++)
			json_array_append_new(ops, json_integer(p->opcodes[i]));
		json_object_set_new(r, "opcodes", ops);
	}
	if (p->has_service_action)
		json_object_set_new(r, "service_action", json_integer(p->service_action));
	if (p->has_lba) {
		json_object_set_new(r, "lba_first", json_integer((json_int_t)p->lba_first));
		json_object_set_new(r, "lba_last", json_integer((json_int_t)p->lba_last));
	}
	if (p->initiator[0])
		json_object_set_new(r, "initiator", json_string(p->initiator));
	if (p->after_ms || p->for_ms) {
		json_object_set_new(r, "after_ms", json_integer(p->after_ms));
		json_object_set_new(r, "for_ms", json_integer(p->for_ms));
		json_object_set_new(r, "window", json_string(window_state(p, st)));
	}
	switch (p->action) {
	case SCSI_FAULT_ACTION_SENSE:
		json_object_set_new(r, "sense_key", json_integer(p->sense_key));
		json_object_set_new(r, "asc", json_integer(p->asc));
		json_object_set_new(r, "ascq", json_integer(p->ascq));
		break;
	case SCSI_FAULT_ACTION_STATUS:
		json_object_set_new(r, "status", json_integer(p->status));
		break;
	case SCSI_FAULT_ACTION_DELAY:
		json_object_set_new(r, "delay_ms", json_integer(p->delay_ms));
		break;
	case SCSI_FAULT_ACTION_MEDIUM_ERROR:
		json_object_set_new(r, "bad_blocks", json_integer((json_int_t)st->bad_blocks));
		break;
	case SCSI_FAULT_ACTION_TEAR_ATOMIC:
		json_object_set_new(r, "blocks", json_integer(p->blocks));
		break;
	case SCSI_FAULT_ACTION_ZONE_OFFLINE:
	case SCSI_FAULT_ACTION_ZONE_READ_ONLY:
		json_object_set_new(r, "zone", json_integer(p->zone));
		break;
	case SCSI_FAULT_ACTION_CORRUPT_PI:
		json_object_set_new(r, "pi_field", json_string(pi_field_names[p->pi_field]));
		break;
	case SCSI_FAULT_ACTION_PREDICT_FAILURE:
		json_object_set_new(r, "asc", json_integer(p->asc || p->ascq ? p->asc : 0x5d));
		json_object_set_new(r, "ascq", json_integer(p->ascq));
		break;
	case SCSI_FAULT_ACTION_TEMPERATURE:
		json_object_set_new(r, "temperature", json_integer(p->temperature));
		if (p->temperature_threshold)
			json_object_set_new(r, "temperature_threshold", json_integer(p->temperature_threshold));
		break;
	case SCSI_FAULT_ACTION_HOLD:
	case SCSI_FAULT_ACTION_CORRUPT_READ:
	case SCSI_FAULT_ACTION_SHORT_READ:
	case SCSI_FAULT_ACTION_DROP_CONNECTION:
	case SCSI_FAULT_ACTION_REJECT_ABORT_TASK:
	case SCSI_FAULT_ACTION_IGNORE_ABORT_TASK:
		break;
	}
	json_array_append_new(ctx->rules, r);
}

static void list_lu(void *arg, const struct sbce_lu_ref *ref)
{
	struct list_ctx *ctx = arg;
	struct scsi_lu_info info;

	scsi_lu_describe(ref->lu, &info);
	ctx->key = ref->frontend ? ref->frontend : "target";
	ctx->target = ref->owner;
	ctx->lun = info.lun;
	scsi_lu_fault_foreach(ref->lu, list_rule, ctx);
}

int sbce_control_fault_list(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	struct list_ctx ctx = { .rules = json_array() };

	(void)req;
	(void)err;
	(void)errlen;
	sbce_foreach_lu(d, list_lu, &ctx);
	json_object_set_new(result, "rules", ctx.rules);
	return 0;
}

/* ---- fault-remove ---- */

int sbce_control_fault_remove(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	uint64_t id = 0;
	bool all = false;
	unsigned removed;
	int has_id = sbce_control_uint(req, "id", UINT32_MAX, false, &id, err, errlen);
	int has_all = sbce_control_bool(req, "all", false, &all, err, errlen);

	if (has_id < 0 || has_all < 0)
		return -1;
	if (has_id + (has_all && all) != 1) {
		snprintf(err, errlen, "give \"id\" or \"all\": true");
		return -1;
	}
	removed = sbce_faults_remove(d, all, (uint32_t)id);
	if (has_id && !removed) {
		snprintf(err, errlen, "no fault rule %llu", (unsigned long long)id);
		return -1;
	}
	sbce_info("control: %u fault rule%s removed", removed, removed == 1 ? "" : "s");
	json_object_set_new(result, "removed", json_integer(removed));
	return 0;
}
