/*
 * sbcemuctl: the command line client of sbcemud's control socket.
 *
 * The contract is docs/control.md: the client sends one JSON request on one
 * line over the Unix stream socket, the daemon answers one JSON line,
 * {"ok": true, "result": {...}} or {"ok": false, "error": "..."}, and closes.
 * This file implements the section "sbcemuctl" of that document: global
 * options, then COMMAND [ARGS]; a readable table (or key: value lines) by
 * default, the daemon's result object with --json.
 *
 * Exit status: 0 done; 1 refused by the daemon (its reason on stderr) or no
 * daemon to talk to; 2 usage error (nothing sent).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "config.h"

#define EXIT_REFUSED 1
#define EXIT_USAGE 2
#define REQUEST_MAX 65536     /* the request line, newline included (docs/control.md) */
#define REPLY_MAX (16u << 20) /* a longer reply is refused */
#define TIMEOUT_SECONDS 10
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char usage_text[] =
	"Usage: sbcemuctl [-s SOCKET | --state-dir DIR] [--json] COMMAND [ARGS]\n"
	"Inspects and changes a running sbcemud through its control socket (docs/control.md).\n"
	"\n"
	"  status | targets | lus | sessions\n"
	"  lu state LUN STATE [--force] [--target IQN]      STATE: ready, becoming-ready, not-ready, offline,\n"
	"                                                   no-medium (--force: even while removal is prevented)\n"
	"  lu write-protect LUN on|off [--target IQN]\n"
	"  lu resize LUN SIZE [--force] [--target IQN]      SIZE in bytes, suffix K, M, G, T (x1024)\n"
	"  lu mode-defaults LUN FIELDS [--replace] [--target IQN]\n"
	"                                                   FIELDS: \"wce=0 d_sense=1\" (wce, rcd, d_sense,\n"
	"                                                   swp, dexcpt, mrie); --replace: the others back\n"
	"                                                   to the device's defaults\n"
	"  lu add LUN CFGSTRING [--target IQN]              CFGSTRING: [lun] keys, \"kind=zbc-hm;size=1G;path=x.img\"\n"
	"  lu remove LUN [--force] [--target IQN]\n"
	"  target add IQN LUN0-CFGSTRING [--alias A] [--tpgt N] [--allowed-initiators LIST]\n"
	"             [--chap-user U --chap-secret S [--mutual-user U --mutual-secret S]]\n"
	"                                                   a new target with LUN 0 (add more with lu add)\n"
	"  target remove IQN [--force]                      logins get Target removed, connections drop\n"
	"  power-cut [--target IQN]                         drop the write cache and every connection, come back\n"
	"                                                   as after a power cycle\n"
	"  save                                             the running configuration, for sbcemud -c\n"
	"  fault add LUN ACTION [--target IQN] [--opcode OP[,OP...]] [--service-action SA]\n"
	"                       [--lba FIRST[-LAST]] [--initiator TEXT] [--every N] [--count N]\n"
	"                       [--probability P] [--seed N] [--after MS] [--for MS]\n"
	"                       [--sense KEY/ASC/ASCQ] [--status S] [--delay MS] [--blocks N] [--zone N]\n"
	"                       [--pi-field guard|app-tag|ref-tag]\n"
	"  (lu state, lu write-protect, lu mode-defaults and fault add take --tcmu NAME instead of\n"
	"   --target: LUN 0 of the TCMU backstore NAME)\n"
	"  fault list\n"
	"  fault remove ID|all\n"
	"\n"
	"  -s, --socket SOCKET  the control socket; else $SBCEMU_CONTROL_SOCKET, else\n"
	"                       control.sock in --state-dir, else in the runtime directory\n"
	"                       (/run/sbcemu for root), else in the default state directory\n"
	"      --state-dir DIR  the daemon's state directory\n"
	"      --json           print the daemon's result object as JSON\n"
	"  -h, --help           show this help\n"
	"\n"
	"Numbers are decimal or 0x hexadecimal.\n"
	"Exit status: 0 done, 1 refused by the daemon or no daemon, 2 usage error.\n";

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("sbcemuctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'sbcemuctl --help' for more information.\n", stderr);
	return -1;
}

static void *oom_check(void *p)
{
	if (!p) {
		fputs("sbcemuctl: out of memory\n", stderr);
		exit(EXIT_REFUSED);
	}
	return p;
}

__attribute__((format(printf, 1, 2))) static char *format(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return oom_check(n < 0 ? NULL : s);
}

static void set_member(json_t *obj, const char *key, json_t *value)
{
	if (json_object_set_new(obj, key, oom_check(value)))
		oom_check(NULL);
}

/* ---- numbers ---- */

/*
 * Decimal or 0x hexadecimal, no sign or space, at most max.  With rest, the
 * text after the number is returned there; without, there must be none.
 */
static int parse_number(const char *text, uint64_t max, uint64_t *out, const char **rest)
{
	const char *p = text;
	int base = 10;
	char *end;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
		if (!isxdigit((unsigned char)p[0]) || (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')))
			return -1;
	} else if (!isdigit((unsigned char)p[0])) {
		return -1;
	}
	errno = 0;
	*out = strtoull(p, &end, base);
	if (errno || *out > max || (!rest && *end))
		return -1;
	if (rest)
		*rest = end;
	return 0;
}

static int parse_arg(const char *what, const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	if (parse_number(text, max, out, NULL) || *out < min)
		return usage_error("invalid %s '%s' (a number from %llu to %llu)", what, text,
				   (unsigned long long)min, (unsigned long long)max);
	return 0;
}

/* SIZE: bytes with an optional K, M, G or T suffix (powers of 1024). */
static int parse_size(const char *text, uint64_t *out)
{
	static const char suffixes[] = "KMGT";
	const char *rest, *s;
	uint64_t v, mult = 1;

	if (parse_number(text, INT64_MAX, &v, &rest))
		return usage_error("invalid SIZE '%s'", text);
	if (*rest) {
		s = strchr(suffixes, toupper((unsigned char)rest[0]));
		if (!s || !rest[0] || rest[1])
			return usage_error("invalid SIZE '%s' (bytes, suffix K, M, G or T)", text);
		mult = (uint64_t)1 << (10 * (s - suffixes + 1));
	}
	if (v > INT64_MAX / mult)
		return usage_error("SIZE '%s' is too large", text);
	*out = v * mult;
	return 0;
}

/* ---- command options ---- */

enum opt_kind {
	OPT_STRING,  /* the text */
	OPT_FLAG,    /* true; takes no value */
	OPT_UINT,    /* a number from min to max */
	OPT_OPCODES, /* OP[,OP...], appended to the array "opcodes" */
	OPT_LBA,     /* FIRST[-LAST] -> lba_first, lba_last */
	OPT_PROB,    /* a real from 0 to 1 */
	OPT_SENSE,   /* KEY/ASC/ASCQ -> sense_key, asc, ascq */
};

struct opt {
	const char *name;   /* without its "--" */
	enum opt_kind kind;
	const char *member; /* the request member */
	uint64_t min, max;
};

static const struct opt lu_opts[] = {
	{ .name = "target", .kind = OPT_STRING, .member = "target" },
	{ .name = NULL },
};

/* lu write-protect: also a TCMU backstore's LU (--tcmu NAME, LUN 0). */
static const struct opt lu_tcmu_opts[] = {
	{ .name = "target", .kind = OPT_STRING, .member = "target" },
	{ .name = "tcmu", .kind = OPT_STRING, .member = "tcmu" },
	{ .name = NULL },
};

/* lu state: --force, and --tcmu. */
static const struct opt state_opts[] = {
	{ .name = "target", .kind = OPT_STRING, .member = "target" },
	{ .name = "tcmu", .kind = OPT_STRING, .member = "tcmu" },
	{ .name = "force", .kind = OPT_FLAG, .member = "force" },
	{ .name = NULL },
};

/* lu state, lu resize, lu remove: --force overrides the refusal that protects data or the host's wish. */
static const struct opt force_opts[] = {
	{ .name = "target", .kind = OPT_STRING, .member = "target" },
	{ .name = "force", .kind = OPT_FLAG, .member = "force" },
	{ .name = NULL },
};

/* target add: the [target] keys (docs/config.md). */
static const struct opt target_opts[] = {
	{ .name = "alias", .kind = OPT_STRING, .member = "alias" },
	{ .name = "tpgt", .kind = OPT_UINT, .member = "tpgt", .min = 1, .max = 65535 },
	{ .name = "allowed-initiators", .kind = OPT_STRING, .member = "allowed_initiators" },
	{ .name = "chap-user", .kind = OPT_STRING, .member = "chap_user" },
	{ .name = "chap-secret", .kind = OPT_STRING, .member = "chap_secret" },
	{ .name = "mutual-user", .kind = OPT_STRING, .member = "mutual_user" },
	{ .name = "mutual-secret", .kind = OPT_STRING, .member = "mutual_secret" },
	{ .name = NULL },
};

static const struct opt target_remove_opts[] = {
	{ .name = "force", .kind = OPT_FLAG, .member = "force" },
	{ .name = NULL },
};

/* lu mode-defaults: --replace gives the whole set (the fields left out go back to the device's own defaults). */
static const struct opt replace_opts[] = {
	{ .name = "target", .kind = OPT_STRING, .member = "target" },
	{ .name = "tcmu", .kind = OPT_STRING, .member = "tcmu" },
	{ .name = "replace", .kind = OPT_FLAG, .member = "replace" },
	{ .name = NULL },
};

static const struct opt fault_opts[] = {
	{ .name = "target", .kind = OPT_STRING, .member = "target" },
	{ .name = "tcmu", .kind = OPT_STRING, .member = "tcmu" },
	{ .name = "opcode", .kind = OPT_OPCODES },
	{ .name = "service-action", .kind = OPT_UINT, .member = "service_action", .max = 0xffff },
	{ .name = "lba", .kind = OPT_LBA },
	{ .name = "initiator", .kind = OPT_STRING, .member = "initiator" },
	{ .name = "every", .kind = OPT_UINT, .member = "every", .min = 1, .max = INT64_MAX },
	{ .name = "count", .kind = OPT_UINT, .member = "count", .max = INT64_MAX },
	{ .name = "probability", .kind = OPT_PROB, .member = "probability" },
	{ .name = "seed", .kind = OPT_UINT, .member = "seed", .max = INT64_MAX },
	{ .name = "after", .kind = OPT_UINT, .member = "after_ms", .max = UINT32_MAX },
	{ .name = "for", .kind = OPT_UINT, .member = "for_ms", .max = UINT32_MAX },
	{ .name = "sense", .kind = OPT_SENSE },
	{ .name = "status", .kind = OPT_UINT, .member = "status", .max = 255 },
	{ .name = "delay", .kind = OPT_UINT, .member = "delay_ms", .min = 1, .max = 3600000 },
	{ .name = "blocks", .kind = OPT_UINT, .member = "blocks", .max = UINT32_MAX },
	{ .name = "zone", .kind = OPT_UINT, .member = "zone", .max = UINT32_MAX },
	{ .name = "pi-field", .kind = OPT_STRING, .member = "pi_field" },
	{ .name = NULL },
};

/* Up to maxn numbers (at most max each) separated by sep: their count, or -1. */
static int parse_numbers(const char *text, char sep, uint64_t max, uint64_t *v, int maxn)
{
	const char *rest;
	int n = 0;

	while (n < maxn && parse_number(text, max, &v[n], &rest) == 0) {
		n++;
		if (!*rest)
			return n;
		if (*rest != sep)
			break;
		text = rest + 1;
	}
	return -1;
}

static int apply_option(const struct opt *o, const char *value, json_t *opts)
{
	json_t *list = json_object_get(opts, "opcodes");
	uint64_t v[256];
	char *end;
	double d;
	int n;

	switch (o->kind) {
	case OPT_STRING:
		set_member(opts, o->member, json_string(value));
		return 0;
	case OPT_FLAG:
		set_member(opts, o->member, json_true());
		return 0;
	case OPT_UINT:
		if (parse_number(value, o->max, &v[0], NULL) || v[0] < o->min)
			return usage_error("invalid --%s '%s' (a number from %llu to %llu)", o->name, value,
					   (unsigned long long)o->min, (unsigned long long)o->max);
		set_member(opts, o->member, json_integer((json_int_t)v[0]));
		return 0;
	case OPT_OPCODES:
		n = parse_numbers(value, ',', 255, v, 256);
		if (n < 0)
			return usage_error("invalid --opcode '%s' (numbers from 0 to 255, comma separated)", value);
		if (!list)
			set_member(opts, "opcodes", list = json_array());
		for (int i = 0; i < n; i++)
			if (json_array_append_new(list, oom_check(json_integer((json_int_t)v[i]))))
				oom_check(NULL);
		return 0;
	case OPT_LBA:
		n = parse_numbers(value, '-', INT64_MAX, v, 2);
		if (n == 1)
			v[1] = v[0];
		if (n < 0 || v[1] < v[0])
			return usage_error("invalid --lba '%s' (FIRST or FIRST-LAST, FIRST <= LAST)", value);
		set_member(opts, "lba_first", json_integer((json_int_t)v[0]));
		set_member(opts, "lba_last", json_integer((json_int_t)v[1]));
		return 0;
	case OPT_PROB:
		errno = 0;
		d = strtod(value, &end);
		/* no sign, space, inf or nan; !(0 <= d <= 1) also refuses NaN */
		if ((!isdigit((unsigned char)value[0]) && value[0] != '.') || errno || *end || !(d >= 0.0 && d <= 1.0))
			return usage_error("invalid --probability '%s' (a number from 0 to 1)", value);
		set_member(opts, o->member, json_real(d));
		return 0;
	case OPT_SENSE:
		if (parse_numbers(value, '/', 255, v, 3) != 3 || v[0] > 15)
			return usage_error("invalid --sense '%s' (KEY/ASC/ASCQ, 0-15/0-255/0-255)", value);
		set_member(opts, "sense_key", json_integer((json_int_t)v[0]));
		set_member(opts, "asc", json_integer((json_int_t)v[1]));
		set_member(opts, "ascq", json_integer((json_int_t)v[2]));
		return 0;
	}
	return -1;
}

/*
 * Splits args into exactly npos positionals and the options of specs
 * (--name VALUE or --name=VALUE, anywhere; "--" ends the options), which are
 * set in opts.
 */
static int scan_args(int argc, char **argv, const struct opt *specs, json_t *opts, const char **pos, int npos,
		     const char *synopsis)
{
	bool options = true;
	int n = 0;

	for (int i = 0; i < argc; i++) {
		const char *arg = argv[i], *eq = strchr(arg, '='), *value = NULL;
		size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
		const struct opt *o = specs;

		if (options && strcmp(arg, "--") == 0) {
			options = false;
			continue;
		}
		if (!options || arg[0] != '-' || arg[1] == '\0') {
			if (n == npos)
				return usage_error("unexpected argument '%s'\nUsage: sbcemuctl %s", arg, synopsis);
			pos[n++] = arg;
			continue;
		}
		while (o && o->name && !(strncmp(arg, "--", 2) == 0 && strlen(o->name) == len - 2 &&
					 strncmp(arg + 2, o->name, len - 2) == 0))
			o++;
		if (!o || !o->name)
			return usage_error("unknown option '%.*s'\nUsage: sbcemuctl %s", (int)len, arg, synopsis);
		if (o->kind == OPT_FLAG && eq)
			return usage_error("option '--%s' takes no value", o->name);
		if (o->kind != OPT_FLAG && !eq && i + 1 == argc)
			return usage_error("option '--%s' needs a value", o->name);
		if (o->kind != OPT_FLAG)
			value = eq ? eq + 1 : argv[++i];
		if (apply_option(o, value, opts))
			return -1;
	}
	if (n < npos)
		return usage_error("missing argument\nUsage: sbcemuctl %s", synopsis);
	return 0;
}

/* ---- output ---- */

/* A reply value as malloc'd text: "-" when missing or null, arrays comma separated, booleans on/off. */
static char *value_text(const json_t *v)
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

/* A table column: a member of the row (a.b: member b of member a), or computed. */
struct column {
	const char *head, *member;
	char *(*text)(const json_t *row);
};

static const struct column target_columns[] = {
	{ "NAME", "name", NULL }, { "PORTALS", "portals", NULL }, { "LUNS", "luns", NULL },
	{ "SESSIONS", "sessions", NULL }, { NULL, NULL, NULL },
};

/* Whose LU a row is: the target's name, or "tcmu:" and the TCMU backstore's. */
static char *lu_owner(const json_t *row)
{
	const char *tcmu = json_string_value(json_object_get(row, "tcmu"));
	const char *target = json_string_value(json_object_get(row, "target"));

	return tcmu ? format("tcmu:%s", tcmu) : format("%s", target ? target : "-");
}

static const struct column lu_columns[] = {
	{ "TARGET", NULL, lu_owner },	     { "LUN", "lun", NULL },
	{ "KIND", "kind", NULL },	     { "PROFILE", "profile", NULL },	{ "STATE", "state", NULL },
	{ "WP", "write_protect", NULL },     { "BLOCKS", "blocks", NULL },
	{ "BSIZE", "block_size", NULL },     { "CMDS", "counters.commands", NULL },
	{ "ERRORS", "counters.check_condition", NULL }, { NULL, NULL, NULL },
};

static const struct column session_columns[] = {
	{ "TARGET", "target", NULL }, { "INITIATOR", "initiator", NULL }, { "ISID", "isid", NULL },
	{ "TSIH", "tsih", NULL },     { "TYPE", "type", NULL },		  { "PEER", "peer", NULL },
	{ "CMDS", "commands", NULL }, { NULL, NULL, NULL },
};

static const struct column rule_columns[] = {
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
static void print_table(const json_t *rows, const struct column *cols)
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

static void print_status(const json_t *result)
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

/* ---- commands ---- */

/* The last positional argument (after the LUN when there are two). */
enum arg {
	ARG_NONE,
	ARG_STRING,  /* the text */
	ARG_ONOFF,   /* on|off -> true|false */
	ARG_SIZE,    /* SIZE -> bytes */
	ARG_RULE_ID, /* ID|all, alone -> "id": ID or "all": true */
	ARG_LUN,     /* the LUN alone */
	ARG_TARGET,  /* the target's name first (not a LUN), then the text when there are two */
};

enum output {
	OUT_STATUS,  /* key: value lines */
	OUT_LU,      /* "lun N: <list>" and the result's backing file when it has one */
	OUT_TABLE,   /* the result's array list, by columns */
	OUT_CHANGE,  /* "lun 0: LABEL <result member> (was <previous>)" */
	OUT_ADDED,   /* "rule 3 added" */
	OUT_REMOVED, /* "removed 2 rules" */
	OUT_FIELDS,  /* the result's members, "key: value" in the daemon's order */
	OUT_CONFIG,  /* the result's "config" text as it is */
};

struct command {
	const char *group, *name; /* the command words: "lu", "state"; or "status", NULL */
	const char *wire;         /* the request's "command" */
	const char *synopsis;
	int npos;                 /* positional arguments after the command words */
	const struct opt *opts;
	enum arg arg;
	const char *member;       /* the request member of arg */
	enum output output;
	const char *list;         /* OUT_TABLE: the result's array; OUT_CHANGE: the label */
	const struct column *columns;
	const char *result;       /* OUT_CHANGE: the result member */
};

static const struct command commands[] = {
	{ .group = "status", .wire = "status", .synopsis = "status", .output = OUT_STATUS },
	{ .group = "targets", .wire = "targets", .synopsis = "targets", .output = OUT_TABLE, .list = "targets",
	  .columns = target_columns },
	{ .group = "lus", .wire = "lus", .synopsis = "lus", .output = OUT_TABLE, .list = "lus", .columns = lu_columns },
	{ .group = "sessions", .wire = "sessions", .synopsis = "sessions", .output = OUT_TABLE, .list = "sessions",
	  .columns = session_columns },
	{ .group = "lu", .name = "state", .wire = "lu-state",
	  .synopsis = "lu state LUN STATE [--force] [--target IQN | --tcmu NAME]", .npos = 2, .opts = state_opts,
	  .arg = ARG_STRING, .member = "state", .output = OUT_CHANGE, .list = "state",
	  .result = "state" },
	{ .group = "lu", .name = "write-protect", .wire = "lu-write-protect",
	  .synopsis = "lu write-protect LUN on|off [--target IQN | --tcmu NAME]", .npos = 2, .opts = lu_tcmu_opts,
	  .arg = ARG_ONOFF,
	  .member = "enable", .output = OUT_CHANGE, .list = "write-protect", .result = "write_protect" },
	{ .group = "lu", .name = "resize", .wire = "lu-resize", .synopsis = "lu resize LUN SIZE [--force] [--target IQN]",
	  .npos = 2, .opts = force_opts, .arg = ARG_SIZE, .member = "bytes", .output = OUT_CHANGE, .list = "blocks",
	  .result = "blocks" },
	{ .group = "lu", .name = "mode-defaults", .wire = "lu-mode-defaults",
	  .synopsis = "lu mode-defaults LUN FIELDS [--replace] [--target IQN]", .npos = 2, .opts = replace_opts,
	  .arg = ARG_STRING, .member = "fields", .output = OUT_CHANGE, .list = "mode defaults",
	  .result = "mode_defaults" },
	{ .group = "lu", .name = "add", .wire = "lu-add", .synopsis = "lu add LUN CFGSTRING [--target IQN]", .npos = 2,
	  .opts = lu_opts, .arg = ARG_STRING, .member = "cfgstring", .output = OUT_LU, .list = "added" },
	{ .group = "lu", .name = "remove", .wire = "lu-remove", .synopsis = "lu remove LUN [--force] [--target IQN]",
	  .npos = 1, .opts = force_opts, .arg = ARG_LUN, .output = OUT_LU, .list = "removed" },
	{ .group = "target", .name = "add", .wire = "target-add",
	  .synopsis = "target add IQN LUN0-CFGSTRING [--alias A] [--tpgt N] [--allowed-initiators LIST] [CHAP options]",
	  .npos = 2, .opts = target_opts, .arg = ARG_TARGET, .member = "cfgstring", .output = OUT_FIELDS },
	{ .group = "target", .name = "remove", .wire = "target-remove", .synopsis = "target remove IQN [--force]",
	  .npos = 1, .opts = target_remove_opts, .arg = ARG_TARGET, .output = OUT_FIELDS },
	{ .group = "power-cut", .wire = "power-cut", .synopsis = "power-cut [--target IQN]", .opts = lu_opts,
	  .output = OUT_FIELDS },
	{ .group = "save", .wire = "save", .synopsis = "save", .output = OUT_CONFIG },
	{ .group = "fault", .name = "add", .wire = "fault-add", .synopsis = "fault add LUN ACTION [OPTIONS] (see --help)",
	  .npos = 2, .opts = fault_opts, .arg = ARG_STRING, .member = "action", .output = OUT_ADDED },
	{ .group = "fault", .name = "list", .wire = "fault-list", .synopsis = "fault list", .output = OUT_TABLE,
	  .list = "rules", .columns = rule_columns },
	{ .group = "fault", .name = "remove", .wire = "fault-remove", .synopsis = "fault remove ID|all", .npos = 1,
	  .arg = ARG_RULE_ID, .output = OUT_REMOVED },
};

/* The command that argv names; *used gets the number of its words. */
static const struct command *find_command(int argc, char **argv, int *used)
{
	bool group_known = false;

	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		const struct command *c = &commands[i];

		if (strcmp(argv[0], c->group) != 0)
			continue;
		group_known = true;
		*used = c->name ? 2 : 1;
		if (!c->name || (argc > 1 && strcmp(argv[1], c->name) == 0))
			return c;
	}
	if (group_known && argc > 1)
		usage_error("unknown command '%s %s'", argv[0], argv[1]);
	else if (group_known)
		usage_error("'%s' needs a sub-command", argv[0]);
	else
		usage_error("unknown command '%s'", argv[0]);
	return NULL;
}

/* The positional arguments' members: LUN, then the last one as c->arg says. */
static int put_positionals(const struct command *c, json_t *req, const char **pos)
{
	const char *last = c->npos ? pos[c->npos - 1] : NULL;
	uint64_t n = 0;

	if (c->arg == ARG_NONE)
		return 0;
	if (c->arg == ARG_RULE_ID) {
		if (strcmp(last, "all") == 0)
			set_member(req, "all", json_true());
		else if (parse_arg("rule ID", last, 0, INT64_MAX, &n))
			return -1;
		else
			set_member(req, "id", json_integer((json_int_t)n));
		return 0;
	}
	if (c->arg == ARG_TARGET) {
		set_member(req, "target", json_string(pos[0]));
		if (c->npos == 2)
			set_member(req, c->member, json_string(last));
		return 0;
	}
	if (parse_arg("LUN", pos[0], 0, CFG_MAX_LUN, &n))
		return -1;
	set_member(req, "lun", json_integer((json_int_t)n));
	if (c->arg == ARG_LUN) {
		/* nothing more */
	} else if (c->arg == ARG_STRING) {
		set_member(req, c->member, json_string(last));
	} else if (c->arg == ARG_ONOFF) {
		if (strcmp(last, "on") != 0 && strcmp(last, "off") != 0)
			return usage_error("expected 'on' or 'off', not '%s'", last);
		set_member(req, c->member, json_boolean(strcmp(last, "on") == 0));
	} else {
		if (parse_size(last, &n))
			return -1;
		set_member(req, c->member, json_integer((json_int_t)n));
	}
	return 0;
}

/* The request (members: command, target, the positionals, the options), or NULL after a usage error. */
static json_t *build_request(const struct command *c, int argc, char **argv)
{
	json_t *req = oom_check(json_object()), *opts = oom_check(json_object()), *target;
	const char *pos[2];

	set_member(req, "command", json_string(c->wire));
	if (scan_args(argc, argv, c->opts, opts, pos, c->npos, c->synopsis))
		goto fail;
	target = json_object_get(opts, "target");
	if (target) {
		set_member(req, "target", json_incref(target));
		json_object_del(opts, "target");
	}
	if (put_positionals(c, req, pos) || json_object_update(req, opts))
		goto fail;
	json_decref(opts);
	return req;
fail:
	json_decref(opts);
	json_decref(req);
	return NULL;
}

static void print_result(const struct command *c, const json_t *req, const json_t *result)
{
	const json_t *n = json_object_get(result, c->output == OUT_ADDED ? "id" : "removed");
	char *a, *b, *d;

	switch (c->output) {
	case OUT_STATUS:
		print_status(result);
		break;
	case OUT_TABLE:
		print_table(json_object_get(result, c->list), c->columns);
		break;
	case OUT_CHANGE:
		a = value_text(json_object_get(req, "lun"));
		b = value_text(json_object_get(result, c->result));
		d = value_text(json_object_get(result, "previous"));
		printf("lun %s: %s %s (was %s)\n", a, c->list, b, d);
		free(a);
		free(b);
		free(d);
		break;
	case OUT_LU:
		a = value_text(json_object_get(req, "lun"));
		b = value_text(json_object_get(result, "backing"));
		printf("lun %s: %s%s%s\n", a, c->list, json_object_get(result, "backing") ? " " : "",
		       json_object_get(result, "backing") ? b : "");
		free(a);
		free(b);
		break;
	case OUT_FIELDS: {
		const char *key;
		json_t *v;

		json_object_foreach((json_t *)result, key, v) {
			a = value_text(v);
			printf("%s: %s\n", key, a);
			free(a);
		}
		break;
	}
	case OUT_CONFIG:
		a = format("%s", json_is_string(json_object_get(result, "config"))
					 ? json_string_value(json_object_get(result, "config"))
					 : "");
		fputs(a, stdout);
		free(a);
		break;
	case OUT_ADDED:
	case OUT_REMOVED:
		a = value_text(n);
		if (c->output == OUT_ADDED)
			printf("rule %s added\n", a);
		else
			printf("removed %s rule%s\n", a, json_is_integer(n) && json_integer_value(n) == 1 ? "" : "s");
		free(a);
		break;
	}
}

/* ---- the socket ---- */

struct globals {
	const char *socket, *state_dir;
	bool json;
};

/* Returns -1 to go on (optind is then the command's index), else the exit status. */
static int parse_globals(int argc, char **argv, struct globals *g)
{
	enum { OPT_STATE_DIR = 256, OPT_JSON };
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "+hs:", longopts, NULL)) != -1) {
		if (c == 's') {
			g->socket = optarg;
		} else if (c == OPT_STATE_DIR) {
			g->state_dir = optarg;
		} else if (c == OPT_JSON) {
			g->json = true;
		} else if (c == 'h') {
			fputs(usage_text, stdout);
			return EXIT_SUCCESS;
		} else {
			fputs("Try 'sbcemuctl --help' for more information.\n", stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc)
		return -1;
	usage_error("no command given");
	return EXIT_USAGE;
}

/*
 * The socket path (malloc'd): -s, else $SBCEMU_CONTROL_SOCKET, else
 * control.sock in --state-dir, else the one a daemon on the default state
 * directory makes in the runtime directory (config/finish.c), else
 * control.sock in the default state directory (a daemon configured so).
 */
static char *socket_path(const struct globals *g)
{
	const char *env = getenv("SBCEMU_CONTROL_SOCKET");
	char dir[CFG_PATH_MAX];
	struct stat st;

	if (g->socket || (env && env[0]))
		return format("%s", g->socket ? g->socket : env);
	if (g->state_dir) {
		char *path = format("%s/control.sock", g->state_dir);

		/* The default state directory given by name: its daemon's socket may be in the runtime directory. */
		if (stat(path, &st) == 0 || cfg_default_state_dir(dir, sizeof(dir)) != 0 || strcmp(dir, g->state_dir) != 0)
			return path;
		free(path);
	}
	if (cfg_default_runtime_dir(dir, sizeof(dir)) == 0) {
		char *path = format("%s/control.sock", dir);

		if (stat(path, &st) == 0)
			return path;
		free(path);
	}
	if (cfg_default_state_dir(dir, sizeof(dir)) == 0)
		return format("%s/control.sock", dir);
	fputs("sbcemuctl: no default state directory (no home directory): use -s or --state-dir\n", stderr);
	return NULL;
}

/* A connected socket with the timeouts set, or -1 with errno. */
static int connect_socket(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = TIMEOUT_SECONDS };
	int fd = -1, err;

	if (strlen(path) >= sizeof(addr.sun_path))
		errno = ENAMETOOLONG;
	else
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	memcpy(addr.sun_path, path, strlen(path) + 1);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* json_load_callback's source: the socket, up to EOF and at most REPLY_MAX bytes. */
struct reader {
	int fd, err;
	size_t total;
};

static size_t read_reply(void *buf, size_t len, void *data)
{
	struct reader *r = data;
	ssize_t n;

	do
		n = recv(r->fd, buf, len, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		r->err = errno == EAGAIN || errno == EWOULDBLOCK ? ETIMEDOUT : errno;
	else if ((r->total += (size_t)n) > REPLY_MAX)
		r->err = EMSGSIZE;
	return r->err ? (size_t)-1 : (size_t)n;
}

/* Sends the request line and returns the parsed reply, or NULL after a message. */
static json_t *exchange(const char *path, const char *request)
{
	char *line = format("%s\n", request);
	struct reader r = { .fd = connect_socket(path) };
	size_t sent = 0, len = strlen(line);
	json_error_t jerr;
	json_t *doc = NULL;
	ssize_t n;

	if (r.fd < 0) {
		fprintf(stderr, "sbcemuctl: cannot connect to %s: %s\n", path, strerror(errno));
		free(line);
		return NULL;
	}
	while (sent < len && ((n = send(r.fd, line + sent, len - sent, MSG_NOSIGNAL)) > 0 || errno == EINTR))
		sent += n > 0 ? (size_t)n : 0;
	if (sent < len)
		fprintf(stderr, "sbcemuctl: cannot send to %s: %s\n", path, strerror(errno));
	else if (!(doc = json_load_callback(read_reply, &r, 0, &jerr)) && r.err)
		fprintf(stderr, "sbcemuctl: cannot read the reply from %s: %s\n", path, strerror(r.err));
	else if (!doc && !r.total)
		fprintf(stderr, "sbcemuctl: %s closed the connection without a reply\n", path);
	else if (!doc)
		fprintf(stderr, "sbcemuctl: unreadable reply from %s: %s\n", path, jerr.text);
	close(r.fd);
	free(line);
	return doc;
}

/* Prints the reply's result or error; returns the exit status. */
static int handle_reply(const struct command *c, const struct globals *g, const json_t *req, const json_t *reply)
{
	const json_t *ok = json_object_get(reply, "ok"), *result = json_object_get(reply, "result");
	const char *error = json_string_value(json_object_get(reply, "error"));
	char *text;

	if (json_is_false(ok)) {
		fprintf(stderr, "sbcemuctl: %s\n", error ? error : "refused (no reason given)");
		return EXIT_REFUSED;
	}
	if (!json_is_true(ok) || !json_is_object(result)) {
		fputs("sbcemuctl: malformed reply (no \"ok\": true with a \"result\" object)\n", stderr);
		return EXIT_REFUSED;
	}
	if (g->json) {
		text = oom_check(json_dumps(result, JSON_INDENT(2)));
		printf("%s\n", text);
		free(text);
	} else {
		print_result(c, req, result);
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "sbcemuctl: cannot write the output: %s\n", strerror(errno));
		return EXIT_REFUSED;
	}
	return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	struct globals g = { 0 };
	const struct command *c;
	char *path = NULL, *text;
	json_t *req, *reply;
	int rc, used = 0;

	rc = parse_globals(argc, argv, &g);
	if (rc >= 0)
		return rc;
	c = find_command(argc - optind, argv + optind, &used);
	req = c ? build_request(c, argc - optind - used, argv + optind + used) : NULL;
	if (!req)
		return EXIT_USAGE;
	text = oom_check(json_dumps(req, JSON_COMPACT));
	if (strlen(text) + 1 > REQUEST_MAX) {
		usage_error("the request is longer than %d bytes", REQUEST_MAX);
		rc = EXIT_USAGE;
	} else if (!(path = socket_path(&g)) || !(reply = exchange(path, text))) {
		rc = EXIT_REFUSED;
	} else {
		rc = handle_reply(c, &g, req, reply);
		json_decref(reply);
	}
	free(path);
	free(text);
	json_decref(req);
	return rc;
}
