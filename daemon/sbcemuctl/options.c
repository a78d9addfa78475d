/*
 * sbcemuctl: numbers and command options (docs/control.md, "sbcemuctl"),
 * read into the members of the request.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbcemuctl.h"

/* ---- numbers ---- */

/*
 * Decimal or 0x hexadecimal, no sign or space, at most max.  With rest, the
 * text after the number is returned there; without, there must be none.
 */
int parse_number(const char *text, uint64_t max, uint64_t *out, const char **rest)
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

int parse_arg(const char *what, const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	if (parse_number(text, max, out, NULL) || *out < min)
		return usage_error("invalid %s '%s' (a number from %llu to %llu)", what, text,
				   (unsigned long long)min, (unsigned long long)max);
	return 0;
}

/* SIZE: bytes with an optional K, M, G or T suffix (powers of 1024). */
int parse_size(const char *text, uint64_t *out)
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



const struct opt lu_opts[] = {
	{ .name = "target", .kind = OPT_STRING, .member = "target" },
	{ .name = NULL },
};

/* acl add, target auth: CHAP credentials ("" clears one). */
const struct opt chap_opts[] = {
	{ .name = "chap-user", .kind = OPT_STRING, .member = "chap_user" },
	{ .name = "chap-secret", .kind = OPT_STRING, .member = "chap_secret" },
	{ .name = "mutual-user", .kind = OPT_STRING, .member = "mutual_user" },
	{ .name = "mutual-secret", .kind = OPT_STRING, .member = "mutual_secret" },
	{ .name = NULL },
};

/* subsidiary bind / unbind: the initiator ("*": every one). */
const struct opt binding_opts[] = {
	{ .name = "target", .kind = OPT_STRING, .member = "target" },
	{ .name = "initiator", .kind = OPT_STRING, .member = "initiator" },
	{ .name = NULL },
};

/* lu write-protect: also a TCMU backstore's LU (--tcmu NAME, LUN 0). */
const struct opt lu_tcmu_opts[] = {
	{ .name = "target", .kind = OPT_STRING, .member = "target" },
	{ .name = "tcmu", .kind = OPT_STRING, .member = "tcmu" },
	{ .name = "frontend-lu", .kind = OPT_FRONTEND_LU },
	{ .name = NULL },
};

/* lu state: --force, and --tcmu. */
const struct opt state_opts[] = {
	{ .name = "target", .kind = OPT_STRING, .member = "target" },
	{ .name = "tcmu", .kind = OPT_STRING, .member = "tcmu" },
	{ .name = "frontend-lu", .kind = OPT_FRONTEND_LU },
	{ .name = "force", .kind = OPT_FLAG, .member = "force" },
	{ .name = NULL },
};

/* lu state, lu resize, lu remove: --force overrides the refusal that protects data or the host's wish. */
const struct opt force_opts[] = {
	{ .name = "target", .kind = OPT_STRING, .member = "target" },
	{ .name = "force", .kind = OPT_FLAG, .member = "force" },
	{ .name = NULL },
};

/* target add: the [target] keys (docs/config.md). */
const struct opt target_opts[] = {
	{ .name = "alias", .kind = OPT_STRING, .member = "alias" },
	{ .name = "tpgt", .kind = OPT_UINT, .member = "tpgt", .min = 1, .max = 65535 },
	{ .name = "allowed-initiators", .kind = OPT_STRING, .member = "allowed_initiators" },
	{ .name = "chap-user", .kind = OPT_STRING, .member = "chap_user" },
	{ .name = "chap-secret", .kind = OPT_STRING, .member = "chap_secret" },
	{ .name = "mutual-user", .kind = OPT_STRING, .member = "mutual_user" },
	{ .name = "mutual-secret", .kind = OPT_STRING, .member = "mutual_secret" },
	{ .name = NULL },
};

const struct opt reload_opts[] = {
	{ .name = "remove-all-targets", .kind = OPT_FLAG, .member = "remove_all_targets" },
	{ .name = NULL },
};

const struct opt stats_opts[] = {
	{ .name = "reset", .kind = OPT_FLAG, .member = "reset" },
	{ .name = NULL },
};

const struct opt target_remove_opts[] = {
	{ .name = "force", .kind = OPT_FLAG, .member = "force" },
	{ .name = NULL },
};

/* lu mode-defaults: --replace gives the whole set (the fields left out go back to the device's own defaults). */
const struct opt replace_opts[] = {
	{ .name = "target", .kind = OPT_STRING, .member = "target" },
	{ .name = "tcmu", .kind = OPT_STRING, .member = "tcmu" },
	{ .name = "frontend-lu", .kind = OPT_FRONTEND_LU },
	{ .name = "replace", .kind = OPT_FLAG, .member = "replace" },
	{ .name = NULL },
};

const struct opt fault_opts[] = {
	{ .name = "target", .kind = OPT_STRING, .member = "target" },
	{ .name = "tcmu", .kind = OPT_STRING, .member = "tcmu" },
	{ .name = "frontend-lu", .kind = OPT_FRONTEND_LU },
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
	{ .name = "asc", .kind = OPT_UINT, .member = "asc", .max = 255 },
	{ .name = "ascq", .kind = OPT_UINT, .member = "ascq", .max = 255 },
	{ .name = "temperature", .kind = OPT_UINT, .member = "temperature", .min = 1, .max = 254 },
	{ .name = "temperature-threshold", .kind = OPT_UINT, .member = "temperature_threshold", .min = 1, .max = 254 },
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
	case OPT_FRONTEND_LU: {
		char frontend[64];

		end = strchr(value, ':');
		if (!end || end == value || !end[1] || (size_t)(end - value) >= sizeof(frontend))
			return usage_error("invalid --frontend-lu '%s' (FRONTEND:NAME, e.g. tcmu:zbc0)", value);
		snprintf(frontend, sizeof(frontend), "%.*s", (int)(end - value), value);
		set_member(opts, frontend, json_string(end + 1));
		return 0;
	}
	}
	return -1;
}

/*
 * Splits args into exactly npos positionals and the options of specs
 * (--name VALUE or --name=VALUE, anywhere; "--" ends the options), which are
 * set in opts.
 */
int scan_args(int argc, char **argv, const struct opt *specs, json_t *opts, const char **pos, int npos,
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
