/*
 * sbcemuctl: the daemon's results as people read them (docs/control.md,
 * "sbcemuctl"): tables of targets, LUs, sessions and fault rules, and
 * key: value lines.  --json prints the result object instead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbcemuctl.h"

/* ---- output ---- */

/* A reply value as malloc'd text: "-" when missing or null, arrays comma separated, booleans on/off. */
char *value_text(const json_t *v)
{
	char *s = NULL, *item;
	size_t i;
	json_t *elem;

	switch (v ? json_typeof(v) : JSON_NULL) {
	case JSON_STRING:
		return oom_check(strdup(json_string_value(v)));
	case JSON_INTEGER:
		return format("%" JSON_INTEGER_FORMAT, json_integer_value(v));
	case JSON_REAL:
		return format("%.15g", json_real_value(v));
	case JSON_TRUE:
		return format("on");
	case JSON_FALSE:
		return format("off");
	case JSON_ARRAY:
		s = format("%s", "");
		json_array_foreach(v, i, elem) {
			char *joined = format("%s%s%s", s, i ? "," : "", item = value_text(elem));

			free(item);
			free(s);
			s = joined;
		}
		return s;
	case JSON_OBJECT:
		return oom_check(json_dumps(v, JSON_COMPACT));
	case JSON_NULL:
		break;
	}
	return format("-");
}

/* Members of the fault rule r, for the fault-list columns. */
#define RULE_INT(name) ((long long)json_integer_value(json_object_get(r, name)))
#define RULE_HAS(name) json_is_integer(json_object_get(r, name))
#define SEP(f) (ftell(f) ? " " : "")

/* MATCH: the rule's conditions, "any" without any. */
static char *rule_match(const json_t *r)
{
	const char *initiator = json_string_value(json_object_get(r, "initiator"));
	const json_t *ops = json_object_get(r, "opcodes");
	char *buf = NULL;
	size_t size = 0, i;
	FILE *f = oom_check(open_memstream(&buf, &size));
	json_t *op;

	json_array_foreach(ops, i, op)
		fprintf(f, "%s0x%02llx", i ? "," : "op=", (long long)json_integer_value(op));
	if (RULE_HAS("service_action"))
		fprintf(f, "%ssa=0x%llx", SEP(f), RULE_INT("service_action"));
	if (RULE_HAS("lba_first") && RULE_HAS("lba_last"))
		fprintf(f, "%slba=%lld-%lld", SEP(f), RULE_INT("lba_first"), RULE_INT("lba_last"));
	if (initiator)
		fprintf(f, "%sinitiator=%s", SEP(f), initiator);
	if (!ftell(f))
		fputs("any", f);
	fclose(f);
	return oom_check(buf);
}

/* TRIGGER: what differs from the defaults, "always" when nothing does; "-" for medium-error. */
static char *rule_trigger(const json_t *r)
{
	const char *action = json_string_value(json_object_get(r, "action"));
	const json_t *p = json_object_get(r, "probability");
	char *buf = NULL;
	size_t size = 0;
	FILE *f;

	if (action && strcmp(action, "medium-error") == 0)
		return format("-");
	f = oom_check(open_memstream(&buf, &size));
	if (RULE_HAS("every") && RULE_INT("every") != 1)
		fprintf(f, "every=%lld", RULE_INT("every"));
	if (json_is_number(p) && json_number_value(p) != 1.0)
		fprintf(f, "%sp=%.15g seed=%lld", SEP(f), json_number_value(p), RULE_INT("seed"));
	if (RULE_HAS("count") && RULE_INT("count") != 0)
		fprintf(f, "%scount=%lld", SEP(f), RULE_INT("count"));
	if (json_is_string(json_object_get(r, "window")))
		fprintf(f, "%safter=%lldms for=%lldms (%s)", SEP(f), RULE_INT("after_ms"), RULE_INT("for_ms"),
			json_string_value(json_object_get(r, "window")));
	if (!ftell(f))
		fputs("always", f);
	fclose(f);
	return oom_check(buf);
}

#undef RULE_INT
#undef RULE_HAS
#undef SEP


const struct column target_columns[] = {
	{ "NAME", "name", NULL }, { "PORTALS", "portals", NULL }, { "LUNS", "luns", NULL },
	{ "SESSIONS", "sessions", NULL }, { NULL, NULL, NULL },
};

/* Whose LU a row is: the target's name, or a front end's name, ':' and the LU's name there ("tcmu:zbc0"). */
static char *lu_owner(const json_t *row)
{
	const char *frontend = json_string_value(json_object_get(row, "frontend"));
	const char *target = json_string_value(json_object_get(row, "target"));
	const char *name = frontend ? json_string_value(json_object_get(row, frontend)) : NULL;

	return frontend && name ? format("%s:%s", frontend, name) : format("%s", target ? target : "-");
}

const struct column lu_columns[] = {
	{ "TARGET", NULL, lu_owner },	     { "LUN", "lun", NULL },
	{ "KIND", "kind", NULL },	     { "PROFILE", "profile", NULL },	{ "STATE", "state", NULL },
	{ "WP", "write_protect", NULL },     { "BLOCKS", "blocks", NULL },
	{ "BSIZE", "block_size", NULL },     { "CMDS", "counters.commands", NULL },
	{ "ERRORS", "counters.check_condition", NULL }, { NULL, NULL, NULL },
};

/* LIMITS MISSED: every limit of every duration limit descriptor that passed, "-" without limits. */
static char *limits_missed(const json_t *row)
{
	const json_t *list = json_object_get(row, "duration_limits"), *d;
	long long n = 0;
	size_t i;

	if (!json_is_array(list))
		return format("-");
	json_array_foreach(list, i, d)
		n += (long long)(json_integer_value(json_object_get(d, "inactive_miss")) +
				 json_integer_value(json_object_get(d, "active_miss")) +
				 json_integer_value(json_object_get(d, "guideline_miss")));
	return format("%lld", n);
}

/* stats: times in microseconds (docs/control.md, "stats"). */
const struct column subsidiary_columns[] = {
	{ "ELEMENT", "element", NULL }, { "STATE", "state", NULL }, { "BLOCKS", "blocks", NULL },
	{ "CMDS", "commands", NULL },	{ "BOUND", "bound", NULL }, { NULL, NULL, NULL },
};

const struct column stats_columns[] = {
	{ "TARGET", NULL, lu_owner },		     { "LUN", "lun", NULL },
	{ "CMDS", "total_us.count", NULL },	     { "QUEUED_P50", "queued_us.p50", NULL },
	{ "QUEUED_P99", "queued_us.p99", NULL },     { "ACTIVE_P50", "active_us.p50", NULL },
	{ "ACTIVE_P99", "active_us.p99", NULL },     { "MAX", "total_us.max", NULL },
	{ "LIMITS_MISSED", NULL, limits_missed },    { NULL, NULL, NULL },
};

const struct column session_columns[] = {
	{ "FRONTEND", "frontend", NULL }, { "TARGET", "target", NULL }, { "INITIATOR", "initiator", NULL },
	{ "ISID", "isid", NULL },	  { "TSIH", "tsih", NULL },	    { "TYPE", "type", NULL },
	{ "PEER", "peer", NULL },	  { "CMDS", "commands", NULL },	    { NULL, NULL, NULL },
};

const struct column rule_columns[] = {
	{ "ID", "id", NULL },	     { "TARGET", NULL, lu_owner }, { "LUN", "lun", NULL },	{ "ACTION", "action", NULL },
	{ "MATCH", NULL, rule_match }, { "TRIGGER", NULL, rule_trigger }, { "FIRED", "fired", NULL },
	{ NULL, NULL, NULL },
};

static char *column_text(const struct column *c, const json_t *row)
{
	const char *dot;
	char first[64];

	if (c->text)
		return c->text(row);
	dot = strchr(c->member, '.');
	if (!dot)
		return value_text(json_object_get(row, c->member));
	snprintf(first, sizeof(first), "%.*s", (int)(dot - c->member), c->member);
	return value_text(json_object_get(json_object_get(row, first), dot + 1));
}

/* The array rows as a table: a header line, then aligned columns (the last unpadded). */
void print_table(const json_t *rows, const struct column *cols)
{
	size_t ncols = 0, nrows = json_array_size(rows) + 1, width[16] = { 0 };
	char **cell;

	while (cols[ncols].head && ncols < ARRAY_SIZE(width))
		ncols++;
	cell = oom_check(calloc(nrows * ncols, sizeof(*cell)));
	for (size_t r = 0; r < nrows; r++) {
		for (size_t c = 0; c < ncols; c++) {
			char *s = r ? column_text(&cols[c], json_array_get(rows, r - 1)) : format("%s", cols[c].head);

			cell[r * ncols + c] = s;
			width[c] = strlen(s) > width[c] ? strlen(s) : width[c];
		}
	}
	for (size_t i = 0; i < nrows * ncols; i++) {
		if (i % ncols + 1 < ncols)
			printf("%-*s  ", (int)width[i % ncols], cell[i]);
		else
			printf("%s\n", cell[i]);
		free(cell[i]);
	}
	free(cell);
}

void print_status(const json_t *result)
{
	static const char *const keys[] = { "version",	"pid",	   "uptime_seconds", "state_dir",
					    "control_socket", "targets", "lus", "sessions",
					    "commands",	"buffer_bytes", "fault_rules" };

	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		char *s = value_text(json_object_get(result, keys[k]));

		printf("%s:%*s%s\n", keys[k], (int)(strlen("control_socket") - strlen(keys[k]) + 1), "", s);
		free(s);
	}
}
