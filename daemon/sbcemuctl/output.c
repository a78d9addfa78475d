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
	case JSON_OBJECT: {
		/* Names with a word each ("frontends"): "iscsi running, tcmu off"; anything else as JSON. */
		const char *key;
		json_t *val;

		s = format("%s", "");
		json_object_foreach((json_t *)v, key, val) {
			char *joined;

			if (!json_is_string(val)) {
				free(s);
				return oom_check(json_dumps(v, JSON_COMPACT));
			}
			joined = format("%s%s%s %s", s, s[0] ? ", " : "", key, json_string_value(val));
			free(s);
			s = joined;
		}
		return s;
	}
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
					    "control_socket", "portals", "frontends", "targets", "lus", "sessions",
					    "commands",	"buffer_bytes", "fault_rules" };

	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		const json_t *v = json_object_get(result, keys[k]);
		char *s;

		/* For people: the uptime rounded (--json keeps every digit). */
		if (strcmp(keys[k], "uptime_seconds") == 0 && json_is_number(v)) {
			double t = json_number_value(v);
			long long secs = (long long)(t + 0.5);

			s = t < 60 ? format("%.1f s", t)
			    : secs < 3600 ? format("%lld min %lld s", secs / 60, secs % 60)
			    : secs < 86400 ? format("%lld h %lld min", secs / 3600, secs % 3600 / 60)
					  : format("%lld d %lld h", secs / 86400, secs % 86400 / 3600);
			printf("uptime:%*s%s\n", (int)(strlen("control_socket") - strlen("uptime") + 1), "", s);
			free(s);
			continue;
		}
		s = value_text(v);
		printf("%s:%*s%s\n", keys[k], (int)(strlen("control_socket") - strlen(keys[k]) + 1), "", s);
		free(s);
	}
}

/* A size for people: 1.0 GiB, 64 MiB, 512 B. */
static char *human_bytes(double bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	unsigned u = 0;

	while (bytes >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		bytes /= 1024;
		u++;
	}
	return u && bytes < 10 ? format("%.1f %s", bytes, units[u]) : format("%.0f %s", bytes, units[u]);
}

/* The fault rules of LU lun of owner (a target's name, or "frontend:name"). */
static unsigned rules_of(const json_t *rules, const char *owner, json_int_t lun)
{
	unsigned n = 0;
	const json_t *r;
	size_t i;

	json_array_foreach(rules, i, r) {
		const char *t = json_string_value(json_object_get(r, "target"));

		n += t && strcmp(t, owner) == 0 && json_integer_value(json_object_get(r, "lun")) == lun;
	}
	return n;
}

static void print_lu_line(const json_t *lu, const json_t *rules, const char *owner, const char *indent)
{
	json_int_t lun = json_integer_value(json_object_get(lu, "lun"));
	double bytes = (double)json_integer_value(json_object_get(lu, "blocks")) *
		       (double)json_integer_value(json_object_get(lu, "block_size"));
	const char *kind = json_string_value(json_object_get(lu, "kind"));
	const char *state = json_string_value(json_object_get(lu, "state"));
	const char *backing = json_string_value(json_object_get(lu, "backing"));
	json_int_t pi = json_integer_value(json_object_get(lu, "protection_type"));
	unsigned nrules = rules_of(rules, owner, lun);
	char *size = human_bytes(bytes);

	printf("%slun %-3" JSON_INTEGER_FORMAT " %-13s ", indent, lun, kind ? kind : "?");
	if (json_object_get(lu, "subsidiaries"))
		printf("%" JSON_INTEGER_FORMAT " subsidiaries (sbcemuctl subsidiaries %" JSON_INTEGER_FORMAT ")",
		       json_integer_value(json_object_get(lu, "subsidiaries")), lun);
	else
		printf("%s, %" JSON_INTEGER_FORMAT "-byte blocks", size,
		       json_integer_value(json_object_get(lu, "block_size")));
	if (pi)
		printf(", PI type %" JSON_INTEGER_FORMAT, pi);
	if (json_object_get(lu, "zones"))
		printf(", %" JSON_INTEGER_FORMAT " zones", json_integer_value(json_object_get(lu, "zones")));
	printf(", %s%s", state ? state : "?", json_is_true(json_object_get(lu, "write_protect")) ? ", write-protected" : "");
	if (nrules)
		printf(", %u fault rule%s", nrules, nrules == 1 ? "" : "s");
	if (backing && backing[0])
		printf("  %s", backing);
	putchar('\n');
	free(size);
}

void print_show(const json_t *result)
{
	const json_t *rules = json_object_get(result, "rules"), *t, *lu;
	char *frontends = value_text(json_object_get(result, "frontends"));
	size_t i, k;

	json_array_foreach(json_object_get(result, "targets"), i, t) {
		const char *name = json_string_value(json_object_get(t, "name"));
		const char *alias = json_string_value(json_object_get(t, "alias"));
		const char *chap = json_string_value(json_object_get(t, "chap_user"));
		const char *mutual = json_string_value(json_object_get(t, "mutual_user"));
		char *portals = value_text(json_object_get(t, "portals"));
		const json_t *acls = json_object_get(t, "acls"), *a;

		printf("target %s", name ? name : "?");
		if (alias && alias[0])
			printf(" (alias \"%s\")", alias);
		printf(", tpgt %" JSON_INTEGER_FORMAT ", portals %s\n", json_integer_value(json_object_get(t, "tpgt")),
		       portals);
		free(portals);
		printf("  auth: %s%s%s%s\n", chap && chap[0] ? "CHAP user " : "none", chap ? chap : "",
		       mutual && mutual[0] ? ", mutual user " : "", mutual ? mutual : "");
		if (!json_array_size(acls))
			printf("  acls: any initiator\n");
		json_array_foreach(acls, k, a) {
			const char *user = json_string_value(json_object_get(a, "chap_user"));

			printf("  acl %s%s%s\n", json_string_value(json_object_get(a, "initiator")),
			       user && user[0] ? ", CHAP user " : "", user ? user : "");
		}
		json_array_foreach(json_object_get(t, "luns"), k, lu)
			print_lu_line(lu, rules, name ? name : "", "  ");
	}
	json_array_foreach(json_object_get(result, "frontend_lus"), k, lu) {
		const char *fe = json_string_value(json_object_get(lu, "frontend"));
		const char *name = fe ? json_string_value(json_object_get(lu, fe)) : NULL;
		char *owner = format("%s:%s", fe ? fe : "?", name ? name : "?");

		printf("%s\n", owner);
		print_lu_line(lu, rules, owner, "  ");
		free(owner);
	}
	printf("front ends: %s\n", frontends);
	free(frontends);
}
