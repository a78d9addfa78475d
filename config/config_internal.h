/*
 * Shared between the configuration library's files: the schema table
 * (schema.c), the value converters (values.c) and the parser (parse.c).
 */
#ifndef SBCEMU_CONFIG_INTERNAL_H
#define SBCEMU_CONFIG_INTERNAL_H

#ifndef SBCE_BUILDING_CONFIG
#error "sbcemu layering: config_internal.h is internal to config/: use its public header"
#endif

#include <stdarg.h>

#include "config.h"

enum cfg_section_kind {
	CFG_SECTION_DAEMON,
	CFG_SECTION_ISCSI,
	CFG_SECTION_TARGET,
	CFG_SECTION_ACL,
	CFG_SECTION_LUN,
	CFG_SECTION_TCMU,
	CFG_SECTION_LU, /* [lu "NAME"]: a template; its keys are the rows of CFG_SECTION_LUN */
	CFG_SECTION_COUNT
};

enum cfg_type {
	CFG_TYPE_BOOL,
	CFG_TYPE_U32,
	CFG_TYPE_U64,       /* with binary size suffixes K, M, G, T, P; or 0x hex */
	CFG_TYPE_ENUM,
	CFG_TYPE_STRING,    /* printable ASCII; min/max bound the length */
	CFG_TYPE_PATH,
	CFG_TYPE_ADDRESS,   /* list of IP:port */
	CFG_TYPE_NAME,      /* one iSCSI name */
	CFG_TYPE_NAME_LIST, /* iSCSI names separated by spaces or commas */
	CFG_TYPE_FLAGS,     /* names of `values` separated by spaces or commas, OR-ed into a u32; all; none */
};

struct cfg_enum_value {
	const char *name;
	uint32_t value;
};

struct cfg_key;

/*
 * Converts value, range-checks it and stores it into object (the section's
 * struct).  Returns 0, or -1 with the reason in why.
 */
typedef int (*cfg_setter)(const struct cfg_key *key, void *object, const char *value, char *why,
			  size_t whylen);

/* One row of the schema: everything the parser, the error messages and the documentation need. */
struct cfg_key {
	enum cfg_section_kind section;
	const char *name;
	enum cfg_type type;
	const char *default_value;   /* NULL: the key is required */
	uint64_t min, max;           /* numbers: range; strings and paths: length */
	const struct cfg_enum_value *values; /* CFG_TYPE_ENUM, NULL-name terminated */
	const char *doc;
	size_t offset, size;         /* where the value lands in the section's struct */
	cfg_setter set;              /* converts and stores (cfg_set_<type> unless special) */
};

struct cfg_section_desc {
	enum cfg_section_kind kind;
	const char *word;    /* first word of the header: "daemon", "lun" */
	const char *syntax;  /* "lun \"TARGET\" N" */
	const char *doc;
};

extern const struct cfg_key cfg_schema[];
extern const size_t cfg_schema_len;
extern const struct cfg_section_desc cfg_sections[CFG_SECTION_COUNT];

/* The schema rows of one section, and a row's index within its section (for struct cfg_key_lines). */
const struct cfg_key *cfg_schema_find(enum cfg_section_kind section, const char *name, unsigned *index);
unsigned cfg_schema_index(const struct cfg_key *key);

/* Stores every default of a section's rows into object. */
void cfg_apply_defaults(enum cfg_section_kind section, void *object);

/* Setters by type (values.c). */
int cfg_set_bool(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen);
int cfg_set_u32(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen);
int cfg_set_u64(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen);
int cfg_set_enum(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen);
int cfg_set_string(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen);
int cfg_set_path(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen);
int cfg_set_listen(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen);
int cfg_set_allowed_initiators(const struct cfg_key *key, void *object, const char *value, char *why,
			       size_t whylen);
int cfg_set_flags(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen);
int cfg_set_naa(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen);
/* A zone list (zones.c): checks the syntax, stores the text. */
/* conglomerate.c: the keys of kind conglomerate, and the checks that span them. */
int cfg_set_element_list(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen);
int cfg_set_bindings(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen);
int cfg_check_subsidiary_template(const struct cfg *cfg, const char *name, char *why, size_t whylen);
int cfg_set_zone_list(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen);
/* A decimal number at *p (advanced past it) of at most max: 0, or -1 (no digits, too big). */
int cfg_parse_decimal(const char **p, uint64_t max, uint64_t *out);
int cfg_set_mode_defaults(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen);
int cfg_set_pi_faults(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen);

/* Checks an iSCSI name (RFC 7143 4.2.7.1: iqn., eui., naa. formats).  Returns 0 or -1 with why. */
int cfg_check_iscsi_name(const char *name, char *why, size_t whylen);

/* Appends one message (a line) to diag. */
void cfg_diag_add(struct cfg_diag *diag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * Appends "file:line: section.key: reason"; line 0, section or key NULL:
 * those parts are left out ("file: key: reason" without a section).
 */
void cfg_report(struct cfg_diag *diag, const char *file, unsigned line, const char *section, const char *key,
		const char *reason);
/* cfg_report with the reason formatted from fmt and ap (vsnprintf(3); cut at 1023 bytes). */
void cfg_vreport(struct cfg_diag *diag, const char *file, unsigned line, const char *section, const char *key,
		 const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));

/* The rows a section's keys are looked up in (an [lu] template has those of [lun]). */
static inline enum cfg_section_kind cfg_rows_of(enum cfg_section_kind section)
{
	return section == CFG_SECTION_LU ? CFG_SECTION_LUN : section;
}

/* LUN checks shared by the file's [lun] sections, templates and cfgstrings (finish.c). */
struct cfg_lun_check {
	struct cfg_diag *diag;
	const char *source;        /* file name, or "cfgstring of NAME" */
	const char *section;       /* "lun \"IQN\" 0", "lu \"NAME\"", or NULL (cfgstrings: key only) */
	const char *state_dir;
	const char *serial_seed;   /* the serial number derives from it when none is set */
	bool template;             /* path may be missing and stays as written */
};
void cfg_finish_lun(const struct cfg_lun_check *c, struct cfg_lun *l);
void cfg_finish_conglomerate(const struct cfg_lun_check *c, struct cfg_lun *l);
/* alua.c: lun.alua_peer_groups. */
int cfg_set_alua_peers(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen);
void cfg_finish_alua_peers(const struct cfg_lun_check *c, struct cfg_lun *l);
/*
 * Reports "file:line: section.key: reason" for a LUN check, line being the
 * one that set key in l (cfg_key_line: else the section header).
 */
void cfg_lun_fail(const struct cfg_lun_check *c, const struct cfg_lun *l, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The line to blame for key `name` of a section: where it was set, else the section header. */
unsigned cfg_key_line(const struct cfg_key_lines *lines, enum cfg_section_kind kind, const char *name);
/* True if key `name` of the LUN was set (in a file, on the command line or in a cfgstring). */
bool cfg_lun_key_set(const struct cfg_lun *l, const char *name);
/* A device profile's presets for the keys the LUN leaves unset, and its conflicts (profiles.c). */
void cfg_finish_profile(const struct cfg_lun_check *c, struct cfg_lun *l);

/* Adds an ACL entry for initiator to target (or returns the existing one); NULL when out of memory. */
struct cfg_acl *cfg_target_acl(struct cfg_target *target, const char *initiator, bool *created);

#endif
