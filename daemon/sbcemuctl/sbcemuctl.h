/*
 * sbcemuctl's parts (docs/control.md, "sbcemuctl"): sbcemuctl.c has the
 * commands, the socket and main; options.c reads numbers and command
 * options into the request; output.c prints results as tables and lines.
 */
#ifndef SBCEMUCTL_H
#define SBCEMUCTL_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#define EXIT_REFUSED 1
#define EXIT_USAGE 2
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* sbcemuctl.c: prints "sbcemuctl: <message>" and the --help hint on stderr; returns -1. */
__attribute__((format(printf, 1, 2))) int usage_error(const char *fmt, ...);
/* p, or exits with EXIT_REFUSED after "out of memory" when p is NULL. */
void *oom_check(void *p);
/* A malloc'd printf. */
__attribute__((format(printf, 1, 2))) char *format(const char *fmt, ...);
/* json_object_set_new, exiting when out of memory. */
void set_member(json_t *obj, const char *key, json_t *value);

/* ---- options.c ---- */

enum opt_kind {
	OPT_STRING,  /* the text */
	OPT_FLAG,    /* true; takes no value */
	OPT_UINT,    /* a number from min to max */
	OPT_OPCODES, /* OP[,OP...], appended to the array "opcodes" */
	OPT_LBA,     /* FIRST[-LAST] -> lba_first, lba_last */
	OPT_PROB,    /* a real from 0 to 1 */
	OPT_SENSE,   /* KEY/ASC/ASCQ -> sense_key, asc, ascq */
	OPT_FRONTEND_LU, /* FRONTEND:NAME -> FRONTEND: NAME (an LU a front end made itself) */
};

struct opt {
	const char *name;   /* without its "--" */
	enum opt_kind kind;
	const char *member; /* the request member */
	uint64_t min, max;
};

/*
 * Decimal or 0x hexadecimal, no sign or space, at most max; with rest, the
 * text after the number is left there, else there must be none.  0 or -1.
 */
int parse_number(const char *text, uint64_t max, uint64_t *out, const char **rest);
/* A number argument named what, from min to max: 0, or -1 after a usage error. */
int parse_arg(const char *what, const char *text, uint64_t min, uint64_t max, uint64_t *out);
/* SIZE: bytes with an optional K, M, G or T (x1024): 0, or -1 after a usage error. */
int parse_size(const char *text, uint64_t *out);
/*
 * Splits args into exactly npos positionals and the options of specs
 * (--name VALUE or --name=VALUE, anywhere; "--" ends the options), which are
 * set in opts.  0, or -1 after a usage error.
 */
int scan_args(int argc, char **argv, const struct opt *specs, json_t *opts, const char **pos, int npos,
	      const char *synopsis);
/* Each command's options. */
extern const struct opt lu_opts[], binding_opts[], chap_opts[], lu_tcmu_opts[], state_opts[], force_opts[], target_opts[], target_remove_opts[],
	reload_opts[], replace_opts[], fault_opts[], stats_opts[];

/* ---- output.c ---- */

/* A table column: a member of the row (a.b: member b of member a), or computed. */
struct column {
	const char *head, *member;
	char *(*text)(const json_t *row);
};

/* A reply value as malloc'd text: "-" when missing or null, arrays comma separated, booleans on/off. */
char *value_text(const json_t *v);
/* The array rows as a table: a header line, then aligned columns (the last unpadded). */
void print_table(const json_t *rows, const struct column *cols);
/* status: key: value lines. */
void print_status(const json_t *result);
/* show: every target with its portals, authentication, ACLs and LUs, then front ends' LUs and fault rules. */
void print_show(const json_t *result);
/* The tables' columns. */
extern const struct column target_columns[], lu_columns[], session_columns[], rule_columns[], stats_columns[],
    subsidiary_columns[];

/*
 * A refusal of the daemon (its "error") told in the command's terms: the
 * option for a missing member, the closest word for an unknown state or
 * fault action (errors.c).  Returns the exit status: EXIT_USAGE for an
 * unknown word, else EXIT_REFUSED.
 */
int explain_refusal(const json_t *req, const struct opt *opts, const char *error);

#endif
