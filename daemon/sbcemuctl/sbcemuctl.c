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
#include "sbcemuctl.h"

#define REQUEST_MAX 65536     /* the request line, newline included (docs/control.md) */
#define REPLY_MAX (16u << 20) /* a longer reply is refused */
#define TIMEOUT_SECONDS 10

static const char usage_text[] =
	"Usage: sbcemuctl [-s SOCKET | --state-dir DIR] [--json] COMMAND [ARGS]\n"
	"Inspects and changes a running sbcemud through its control socket (docs/control.md).\n"
	"\n"
	"  status | show | targets | lus [--target IQN] | sessions\n"
	"  lu show LUN [--target IQN]                       every field of one LU (LUN, or N/E)\n"
	"  lu state LUN STATE [--force] [--target IQN]      STATE: ready, becoming-ready, not-ready, offline,\n"
	"                                                   no-medium (--force: even while removal is prevented)\n"
	"  lu write-protect LUN on|off [--target IQN]\n"
	"  lu alua LUN STATE [--target IQN]                STATE: active/optimized, active/non-optimized,\n"
	"                                                   standby, unavailable (an implicit transition of\n"
	"                                                   the LU's target port group, docs/alua.md)\n"
	"  lu resize LUN SIZE [--force] [--target IQN]      SIZE in bytes, suffix K, M, G, T (x1024)\n"
	"  lu mode-defaults LUN FIELDS [--replace] [--target IQN]\n"
	"                                                   FIELDS: \"wce=0 d_sense=1\" (wce, rcd, d_sense,\n"
	"                                                   swp, dexcpt, mrie); --replace: the others back\n"
	"                                                   to the device's defaults\n"
	"  lu latency LUN MODEL [--target IQN]              MODEL: the latency key's text, \"rotating rpm=5400\",\n"
	"                                                   \"fixed read_us=500 write_us=800\", \"none\"\n"
	"                                                   (docs/latency.md)\n"
	"  lu add LUN CFGSTRING [--target IQN]              CFGSTRING: [lun] keys, \"kind=zbc-hm;size=1G;path=x.img\"\n"
	"  lu remove LUN [--force] [--target IQN]\n"
	"  target add IQN LUN0-CFGSTRING [--alias A] [--tpgt N] [--allowed-initiators LIST]\n"
	"             [--chap-user U --chap-secret S [--mutual-user U --mutual-secret S]]\n"
	"                                                   a new target with LUN 0 (add more with lu add)\n"
	"  target remove IQN [--force]                      logins get Target removed, connections drop\n"
	"  target auth IQN [--chap-user U] [--chap-secret S] [--mutual-user U] [--mutual-secret S]\n"
	"                                                   the target's CHAP (\"\" clears a key)\n"
	"  acl add IQN INITIATOR [--chap-user U --chap-secret S [--mutual-user U --mutual-secret S]]\n"
	"  acl remove IQN INITIATOR                         who may log in from now on; sessions stay\n"
	"  portal add|remove ADDRESS                        listen there from now on (or no longer);\n"
	"                                                   connections stay\n"
	"  power-cut [--target IQN]                         drop the write cache and every connection, come back\n"
	"                                                   as after a power cycle\n"
	"  stats [--reset]                                  latency per LU: queued and active time (us),\n"
	"                                                   duration limits missed; --reset starts again\n"
	"  subsidiaries LUN [--target IQN]                  a conglomerate's subsidiaries (docs/conglomerate.md)\n"
	"  subsidiary create|destroy LUN ELEMENTS [--target IQN]\n"
	"                                                   ELEMENTS: \"5\" or \"1-8, 12\" (1..16383); destroy\n"
	"                                                   only what no initiator is bound to\n"
	"  subsidiary bind|unbind LUN ELEMENTS --initiator NAME|'*' [--target IQN]\n"
	"                                                   the initiators that see LUN LUN/ELEMENT\n"
	"  save                                             the running configuration, for sbcemud -c\n"
	"  reload [--remove-all-targets]                    read the configuration file again, as SIGHUP\n"
	"                                                   (a file without targets removes them only with\n"
	"                                                   --remove-all-targets)\n"
	"  fault add LUN ACTION [--target IQN] [--opcode OP[,OP...]] [--service-action SA]\n"
	"                       [--lba FIRST[-LAST]] [--initiator TEXT] [--every N] [--count N]\n"
	"                       [--probability P] [--seed N] [--after MS] [--for MS]\n"
	"                       [--sense KEY/ASC/ASCQ] [--status S] [--delay MS] [--blocks N] [--zone N]\n"
	"                       [--pi-field guard|app-tag|ref-tag] [--asc ASC --ascq ASCQ]\n"
	"                       [--temperature C [--temperature-threshold C]]\n"
	"                       ACTION: sense, status, delay, hold, medium-error, corrupt-read,\n"
	"                       short-read, tear-atomic, zone-offline, zone-read-only, drop-connection,\n"
	"                       reject-abort-task, ignore-abort-task, corrupt-pi, predict-failure,\n"
	"                       temperature (docs/control.md)\n"
	"  (lu state, lu write-protect, lu alua, lu mode-defaults, lu latency and fault add take --tcmu NAME instead of\n"
	"   --target: LUN 0 of the TCMU backstore NAME; --frontend-lu FRONTEND:NAME names the LU\n"
	"   NAME of any front end that makes LUs of its own, --tcmu NAME is --frontend-lu tcmu:NAME)\n"
	"  fault list\n"
	"  fault remove ID|all\n"
	"\n"
	"  -s, --socket SOCKET  the control socket; else $SBCEMU_CONTROL_SOCKET, else\n"
	"                       control.sock in --state-dir, else in the runtime directory\n"
	"                       (/run/sbcemu for root), else in the default state directory\n"
	"      --state-dir DIR  the daemon's state directory\n"
	"      --json           print the daemon's result object as JSON\n"
	"  -h, --help           show this help\n"
	"      --version        show the version\n"
	"\n"
	"Numbers are decimal or 0x hexadecimal.  LUN N/E is element E of conglomerate N (once it is open).\n"
	"Exit status: 0 done, 1 refused by the daemon or no daemon, 2 usage error.\n";

int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("sbcemuctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'sbcemuctl --help' for more information.\n", stderr);
	return -1;
}

void *oom_check(void *p)
{
	if (!p) {
		fputs("sbcemuctl: out of memory\n", stderr);
		exit(EXIT_REFUSED);
	}
	return p;
}

char *format(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return oom_check(n < 0 ? NULL : s);
}

void set_member(json_t *obj, const char *key, json_t *value)
{
	if (json_object_set_new(obj, key, oom_check(value)))
		oom_check(NULL);
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
	ARG_WORD,    /* one word, the member (a portal's address) */
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
	OUT_SHOW,    /* show: targets, portals, ACLs, LUs as a tree */
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
	{ .group = "lus", .wire = "lus", .synopsis = "lus [--target IQN]", .opts = lu_opts, .output = OUT_TABLE,
	  .list = "lus", .columns = lu_columns },
	{ .group = "show", .wire = "show", .synopsis = "show", .output = OUT_SHOW },
	{ .group = "lu", .name = "show", .wire = "lus", .synopsis = "lu show LUN [--target IQN]", .npos = 1,
	  .opts = lu_opts, .arg = ARG_LUN, .output = OUT_FIELDS },
	{ .group = "sessions", .wire = "sessions", .synopsis = "sessions", .output = OUT_TABLE, .list = "sessions",
	  .columns = session_columns },
	{ .group = "lu", .name = "state", .wire = "lu-state",
	  .synopsis = "lu state LUN STATE [--force] [--target IQN | --tcmu NAME | --frontend-lu FE:NAME]", .npos = 2,
	  .opts = state_opts, .arg = ARG_STRING, .member = "state", .output = OUT_CHANGE, .list = "state",
	  .result = "state" },
	{ .group = "lu", .name = "write-protect", .wire = "lu-write-protect",
	  .synopsis = "lu write-protect LUN on|off [--target IQN | --tcmu NAME | --frontend-lu FE:NAME]", .npos = 2,
	  .opts = lu_tcmu_opts, .arg = ARG_ONOFF,
	  .member = "enable", .output = OUT_CHANGE, .list = "write-protect", .result = "write_protect" },
	{ .group = "lu", .name = "alua", .wire = "lu-alua",
	  .synopsis = "lu alua LUN STATE [--target IQN | --tcmu NAME | --frontend-lu FE:NAME]", .npos = 2,
	  .opts = lu_tcmu_opts, .arg = ARG_STRING, .member = "state", .output = OUT_CHANGE, .list = "asymmetric access state",
	  .result = "alua_state" },
	{ .group = "lu", .name = "resize", .wire = "lu-resize", .synopsis = "lu resize LUN SIZE [--force] [--target IQN]",
	  .npos = 2, .opts = force_opts, .arg = ARG_SIZE, .member = "bytes", .output = OUT_CHANGE, .list = "blocks",
	  .result = "blocks" },
	{ .group = "lu", .name = "mode-defaults", .wire = "lu-mode-defaults",
	  .synopsis = "lu mode-defaults LUN FIELDS [--replace] [--target IQN]", .npos = 2, .opts = replace_opts,
	  .arg = ARG_STRING, .member = "fields", .output = OUT_CHANGE, .list = "mode defaults",
	  .result = "mode_defaults" },
	{ .group = "lu", .name = "latency", .wire = "lu-latency",
	  .synopsis = "lu latency LUN MODEL [--target IQN | --tcmu NAME | --frontend-lu FE:NAME]", .npos = 2,
	  .opts = lu_tcmu_opts, .arg = ARG_STRING, .member = "model", .output = OUT_CHANGE, .list = "latency",
	  .result = "latency" },
	{ .group = "lu", .name = "add", .wire = "lu-add", .synopsis = "lu add LUN CFGSTRING [--target IQN]", .npos = 2,
	  .opts = lu_opts, .arg = ARG_STRING, .member = "cfgstring", .output = OUT_LU, .list = "added" },
	{ .group = "lu", .name = "remove", .wire = "lu-remove", .synopsis = "lu remove LUN [--force] [--target IQN]",
	  .npos = 1, .opts = force_opts, .arg = ARG_LUN, .output = OUT_LU, .list = "removed" },
	{ .group = "target", .name = "add", .wire = "target-add",
	  .synopsis = "target add IQN LUN0-CFGSTRING [--alias A] [--tpgt N] [--allowed-initiators LIST] [CHAP options]",
	  .npos = 2, .opts = target_opts, .arg = ARG_TARGET, .member = "cfgstring", .output = OUT_FIELDS },
	{ .group = "target", .name = "remove", .wire = "target-remove", .synopsis = "target remove IQN [--force]",
	  .npos = 1, .opts = target_remove_opts, .arg = ARG_TARGET, .output = OUT_FIELDS },
	{ .group = "acl", .name = "add", .wire = "acl-add",
	  .synopsis = "acl add IQN INITIATOR [--chap-user U --chap-secret S [--mutual-user U --mutual-secret S]]",
	  .npos = 2, .opts = chap_opts, .arg = ARG_TARGET, .member = "initiator", .output = OUT_FIELDS },
	{ .group = "acl", .name = "remove", .wire = "acl-remove", .synopsis = "acl remove IQN INITIATOR", .npos = 2,
	  .arg = ARG_TARGET, .member = "initiator", .output = OUT_FIELDS },
	{ .group = "target", .name = "auth", .wire = "target-auth",
	  .synopsis = "target auth IQN [--chap-user U] [--chap-secret S] [--mutual-user U] [--mutual-secret S]",
	  .npos = 1, .opts = chap_opts, .arg = ARG_TARGET, .output = OUT_FIELDS },
	{ .group = "portal", .name = "add", .wire = "portal-add", .synopsis = "portal add ADDRESS", .npos = 1,
	  .arg = ARG_WORD, .member = "address", .output = OUT_FIELDS },
	{ .group = "portal", .name = "remove", .wire = "portal-remove", .synopsis = "portal remove ADDRESS",
	  .npos = 1, .arg = ARG_WORD, .member = "address", .output = OUT_FIELDS },
	{ .group = "power-cut", .wire = "power-cut", .synopsis = "power-cut [--target IQN]", .opts = lu_opts,
	  .output = OUT_FIELDS },
	{ .group = "stats", .wire = "stats", .synopsis = "stats [--reset]", .opts = stats_opts, .output = OUT_TABLE,
	  .list = "lus", .columns = stats_columns },
	{ .group = "save", .wire = "save", .synopsis = "save", .output = OUT_CONFIG },
	{ .group = "reload", .wire = "reload", .synopsis = "reload [--remove-all-targets]", .opts = reload_opts,
	  .output = OUT_FIELDS },
	{ .group = "subsidiary", .name = "create", .wire = "subsidiary-create",
	  .synopsis = "subsidiary create LUN ELEMENTS [--target IQN]", .npos = 2, .opts = lu_opts, .arg = ARG_STRING,
	  .member = "elements", .output = OUT_FIELDS },
	{ .group = "subsidiary", .name = "destroy", .wire = "subsidiary-destroy",
	  .synopsis = "subsidiary destroy LUN ELEMENTS [--target IQN]", .npos = 2, .opts = lu_opts, .arg = ARG_STRING,
	  .member = "elements", .output = OUT_FIELDS },
	{ .group = "subsidiary", .name = "bind", .wire = "subsidiary-bind",
	  .synopsis = "subsidiary bind LUN ELEMENTS --initiator NAME|'*' [--target IQN]", .npos = 2,
	  .opts = binding_opts, .arg = ARG_STRING, .member = "elements", .output = OUT_FIELDS },
	{ .group = "subsidiary", .name = "unbind", .wire = "subsidiary-unbind",
	  .synopsis = "subsidiary unbind LUN ELEMENTS --initiator NAME|'*' [--target IQN]", .npos = 2,
	  .opts = binding_opts, .arg = ARG_STRING, .member = "elements", .output = OUT_FIELDS },
	{ .group = "subsidiaries", .wire = "subsidiaries", .synopsis = "subsidiaries LUN [--target IQN]", .npos = 1,
	  .opts = lu_opts, .arg = ARG_LUN, .output = OUT_TABLE, .list = "subsidiaries",
	  .columns = subsidiary_columns },
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

/*
 * LUN: a number (0..255), or N/E for element E of conglomerate N (docs/conglomerate.md), which the
 * request carries as the Linux integer LUN, N | E << 16.
 */
static int parse_lun(const char *text, uint64_t *out)
{
	const char *slash = strchr(text, '/');
	char first[32];
	uint64_t e;

	if (!slash)
		return parse_arg("LUN", text, 0, CFG_MAX_LUN, out);
	snprintf(first, sizeof(first), "%.*s", (int)(slash - text), text);
	if (parse_arg("LUN", first, 0, CFG_MAX_LUN, out) || parse_arg("subsidiary element", slash + 1, 1, 16383, &e))
		return -1;
	*out |= e << 16;
	return 0;
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
	if (c->arg == ARG_WORD) {
		set_member(req, c->member, json_string(pos[0]));
		return 0;
	}
	if (c->arg == ARG_TARGET) {
		set_member(req, "target", json_string(pos[0]));
		if (c->npos == 2)
			set_member(req, c->member, json_string(last));
		return 0;
	}
	if (parse_lun(pos[0], &n))
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
	case OUT_SHOW:
		print_show(result);
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
	enum { OPT_STATE_DIR = 256, OPT_JSON, OPT_VERSION };
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
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
		} else if (c == OPT_VERSION) {
			printf("sbcemuctl %s\n", SBCEMU_VERSION);
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
static const char *socket_why = ""; /* what chose the socket (socket_path), for the message when nobody answers */

static char *socket_path(const struct globals *g)
{
	const char *env = getenv("SBCEMU_CONTROL_SOCKET");
	char dir[CFG_PATH_MAX];
	struct stat st;

	if (g->socket || (env && env[0])) {
		socket_why = g->socket ? "-s" : "$SBCEMU_CONTROL_SOCKET";
		return format("%s", g->socket ? g->socket : env);
	}
	socket_why = g->state_dir ? "--state-dir" : "the default state directory";
	if (g->state_dir) {
		char *path = format("%s/control.sock", g->state_dir);

		/* The default state directory given by name: its daemon's socket may be in the runtime directory. */
		if (stat(path, &st) == 0 || cfg_default_state_dir(dir, sizeof(dir)) != 0 || strcmp(dir, g->state_dir) != 0)
			return path;
		free(path);
	}
	if (cfg_default_runtime_dir(dir, sizeof(dir)) == 0) {
		char *path = format("%s/control.sock", dir);

		if (stat(path, &st) == 0) {
			socket_why = "the runtime directory";
			return path;
		}
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
		int e = errno;

		fprintf(stderr, "sbcemuctl: cannot connect to %s (chosen by %s): %s\n", path, socket_why, strerror(e));
		if (e == ENOENT || e == ECONNREFUSED)
			fputs("sbcemuctl: is sbcemud running? Point at its socket with -s SOCKET, --state-dir DIR (its "
			      "state directory) or $SBCEMU_CONTROL_SOCKET; `sbcemud` logs \"control socket PATH\" at "
			      "start.\n",
			      stderr);
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
		if (error)
			return explain_refusal(req, c->opts, error);
		fputs("sbcemuctl: refused (no reason given)\n", stderr);
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
