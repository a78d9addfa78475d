/*
 * The INI parser: libinih splits the file into sections and key = value
 * pairs; this file maps them onto the schema and records every error as
 * "file:line: section.key: reason".
 *
 * libinih (as Debian builds it) tells the handler neither the line number
 * nor about empty sections or lines it could not parse; it only returns the
 * first bad line.  So the parser feeds libinih through its own reader, which
 * counts lines and notes which line is a section header, and checks after
 * each line that a "key = value" line reached the handler: one that did not
 * is a syntax error, and a header followed by no key is an empty section
 * (still created, so that its missing required keys are reported).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_internal.h"

#define SECTION_TEXT_MAX (2 * CFG_NAME_MAX + 32)

enum line_kind {
	LINE_NONE,   /* blank, comment, or already reported */
	LINE_HEADER,
	LINE_KEY,    /* should reach the handler */
};

/* A resolved section: which object its keys set. */
struct section_ref {
	enum cfg_section_kind kind;
	void *object;
	struct cfg_key_lines *lines;
	char text[SECTION_TEXT_MAX]; /* canonical header text, for messages */
};

struct parse {
	struct cfg *cfg;
	struct cfg_diag *diag;
	const char *file;         /* file name, or the origin of command-line settings */
	FILE *in;
	char *buf;
	size_t cap;
	unsigned line;            /* line the reader returned last */
	enum line_kind kind;      /* of that line */
	bool handled;             /* the handler saw that line */
	bool indented;
	unsigned header_line;     /* last section header the reader returned */
	char header_name[SECTION_TEXT_MAX];
	bool header_used;         /* a key under that header reached the handler */
	bool header_broken;       /* it has no ']': its keys are ignored (the header is reported) */
	unsigned current_header;  /* header that `current` was resolved for */
	bool current_ok;
	struct section_ref current;
	char prev_key[64];
	int read_errno;           /* the stream failed (not its end): what it said */
};

/* ---- diagnostics ---- */

/*
 * The length of the well-formed UTF-8 sequence at p (RFC 3629 4: no
 * overlong forms, no surrogates, at most U+10FFFF), or 0.
 */
static size_t utf8_sequence(const unsigned char *p)
{
	unsigned c = p[0];
	size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;

	if (c >= 0xf5)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f) || (c == 0xf0 && p[1] < 0x90) ||
	    (c == 0xf4 && p[1] > 0x8f))
		return 0;
	return len;
}

/*
 * Appends text to diag, with what a log or a terminal must not receive raw
 * (control characters, bytes that are not well-formed UTF-8) written as
 * \xNN: a configuration line quoted in a message may hold anything.
 */
static void diag_append_escaped(struct cfg_diag *diag, const char *text)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t need = 4 * strlen(text) + 2;

	if (diag->len + need > diag->cap) {
		size_t cap = (diag->len + need) * 2;
		char *grown = realloc(diag->text, cap);

		if (!grown)
			return;
		diag->text = grown;
		diag->cap = cap;
	}
	while (*p) {
		size_t seq = *p >= 0x80 ? utf8_sequence(p) : (*p >= 0x20 && *p != 0x7f);

		if (seq) {
			memcpy(diag->text + diag->len, p, seq);
			diag->len += seq;
			p += seq;
		} else {
			diag->len += (size_t)sprintf(diag->text + diag->len, "\\x%02x", *p++);
		}
	}
	diag->text[diag->len++] = '\n';
	diag->text[diag->len] = '\0';
	diag->count++;
}

void cfg_diag_add(struct cfg_diag *diag, const char *fmt, ...)
{
	va_list ap;
	char *text;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	diag_append_escaped(diag, text);
	free(text);
}

void cfg_diag_free(struct cfg_diag *diag)
{
	free(diag->text);
	memset(diag, 0, sizeof(*diag));
}

void cfg_report(struct cfg_diag *diag, const char *file, unsigned line, const char *section, const char *key,
		const char *reason)
{
	char where[CFG_PATH_MAX + 16];

	if (line)
		snprintf(where, sizeof(where), "%s:%u", file, line);
	else
		snprintf(where, sizeof(where), "%s", file);
	if (section && key)
		cfg_diag_add(diag, "%s: %s.%s: %s", where, section, key, reason);
	else if (key)
		cfg_diag_add(diag, "%s: %s: %s", where, key, reason);
	else if (section)
		cfg_diag_add(diag, "%s: %s: %s", where, section, reason);
	else
		cfg_diag_add(diag, "%s: %s", where, reason);
}

void cfg_vreport(struct cfg_diag *diag, const char *file, unsigned line, const char *section, const char *key,
		 const char *fmt, va_list ap)
{
	char reason[1024];

	vsnprintf(reason, sizeof(reason), fmt, ap);
	cfg_report(diag, file, line, section, key, reason);
}

static void report(struct parse *p, unsigned line, const char *section, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void report(struct parse *p, unsigned line, const char *section, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cfg_vreport(p->diag, p->file, line, section, key, fmt, ap);
	va_end(ap);
}

/* ---- the object model: targets, their ACL entries and LUNs ---- */

struct cfg *cfg_create(void)
{
	struct cfg *cfg = calloc(1, sizeof(*cfg));

	if (!cfg)
		return NULL;
	cfg_apply_defaults(CFG_SECTION_DAEMON, &cfg->daemon);
	cfg_apply_defaults(CFG_SECTION_ISCSI, &cfg->iscsi);
	cfg_apply_defaults(CFG_SECTION_TCMU, &cfg->tcmu);
	return cfg;
}

static void target_free(struct cfg_target *t);

void cfg_free(struct cfg *cfg)
{
	if (!cfg)
		return;
	for (size_t i = 0; i < cfg->target_count; i++)
		target_free(cfg->targets[i]);
	free(cfg->targets);
	for (size_t i = 0; i < cfg->template_count; i++)
		free(cfg->templates[i]);
	free(cfg->templates);
	free(cfg);
}

static bool grow(void *array_ptr, size_t count)
{
	void **array = array_ptr;
	void *bigger = realloc(*array, (count + 1) * sizeof(void *));

	if (!bigger)
		return false;
	*array = bigger;
	return true;
}

/* The index of the target called name, or target_count when there is none. */
static size_t target_index(const struct cfg *cfg, const char *name)
{
	size_t i = 0;

	while (i < cfg->target_count && strcmp(cfg->targets[i]->name, name) != 0)
		i++;
	return i;
}

/* The index of LUN lun in target, or lun_count when there is none. */
static size_t lun_index(const struct cfg_target *target, uint32_t lun)
{
	size_t i = 0;

	while (i < target->lun_count && target->luns[i]->lun != lun)
		i++;
	return i;
}

static struct cfg_target *target_get(struct cfg *cfg, const char *name, unsigned line)
{
	size_t i = target_index(cfg, name);
	struct cfg_target *t;

	if (i < cfg->target_count)
		return cfg->targets[i];
	if (!grow(&cfg->targets, cfg->target_count) || !(t = calloc(1, sizeof(*t))))
		return NULL;
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->first_line = line;
	cfg_apply_defaults(CFG_SECTION_TARGET, t);
	cfg->targets[cfg->target_count++] = t;
	return t;
}

struct cfg_acl *cfg_target_acl(struct cfg_target *target, const char *initiator, bool *created)
{
	struct cfg_acl *a;

	*created = false;
	for (size_t i = 0; i < target->acl_count; i++)
		if (strcmp(target->acls[i]->initiator, initiator) == 0)
			return target->acls[i];
	if (!grow(&target->acls, target->acl_count) || !(a = calloc(1, sizeof(*a))))
		return NULL;
	snprintf(a->initiator, sizeof(a->initiator), "%s", initiator);
	cfg_apply_defaults(CFG_SECTION_ACL, a);
	target->acls[target->acl_count++] = a;
	*created = true;
	return a;
}

static struct cfg_lun *lun_get(struct cfg_target *target, uint32_t lun)
{
	size_t i = lun_index(target, lun);
	struct cfg_lun *l;

	if (i < target->lun_count)
		return target->luns[i];
	if (!grow(&target->luns, target->lun_count) || !(l = calloc(1, sizeof(*l))))
		return NULL;
	l->lun = lun;
	cfg_apply_defaults(CFG_SECTION_LUN, l);
	target->luns[target->lun_count++] = l;
	return l;
}

int cfg_target_add_lun(struct cfg_target *target, const struct cfg_lun *l)
{
	struct cfg_lun *copy;

	if (lun_index(target, l->lun) < target->lun_count)
		return -1;
	if (!grow(&target->luns, target->lun_count) || !(copy = malloc(sizeof(*copy))))
		return -1;
	*copy = *l;
	target->luns[target->lun_count++] = copy;
	return 0;
}

void cfg_target_remove_lun(struct cfg_target *target, uint32_t lun)
{
	size_t i = lun_index(target, lun);

	if (i == target->lun_count)
		return;
	free(target->luns[i]);
	memmove(&target->luns[i], &target->luns[i + 1], (target->lun_count - i - 1) * sizeof(target->luns[0]));
	target->lun_count--;
}

/* Frees a target and its sections. */
static void target_free(struct cfg_target *t)
{
	for (size_t j = 0; j < t->acl_count; j++)
		free(t->acls[j]);
	for (size_t j = 0; j < t->lun_count; j++)
		free(t->luns[j]);
	free(t->acls);
	free(t->luns);
	free(t);
}

struct cfg_target *cfg_add_target(struct cfg *cfg, const struct cfg_target *t)
{
	struct cfg_target *copy;

	if (target_index(cfg, t->name) < cfg->target_count)
		return NULL;
	if (!grow(&cfg->targets, cfg->target_count) || !(copy = calloc(1, sizeof(*copy))))
		return NULL;
	*copy = *t;
	copy->acls = calloc(t->acl_count ? t->acl_count : 1, sizeof(*copy->acls));
	copy->luns = calloc(t->lun_count ? t->lun_count : 1, sizeof(*copy->luns));
	copy->acl_count = copy->lun_count = 0;
	if (!copy->acls || !copy->luns)
		goto fail;
	for (size_t j = 0; j < t->acl_count; j++) {
		if (!(copy->acls[j] = malloc(sizeof(*copy->acls[j]))))
			goto fail;
		*copy->acls[j] = *t->acls[j];
		copy->acl_count++;
	}
	for (size_t j = 0; j < t->lun_count; j++) {
		if (!(copy->luns[j] = malloc(sizeof(*copy->luns[j]))))
			goto fail;
		*copy->luns[j] = *t->luns[j];
		copy->lun_count++;
	}
	cfg->targets[cfg->target_count++] = copy;
	return copy;
fail:
	target_free(copy);
	return NULL;
}

int cfg_target_set_access(struct cfg_target *dst, const struct cfg_target *src)
{
	static const char *const keys[] = { "chap_user", "chap_secret", "mutual_user", "mutual_secret" };
	struct cfg_acl **acls = calloc(src->acl_count ? src->acl_count : 1, sizeof(*acls));

	if (!acls)
		return -1;
	for (size_t j = 0; j < src->acl_count; j++) {
		if (!(acls[j] = malloc(sizeof(*acls[j])))) {
			while (j-- > 0)
				free(acls[j]);
			free(acls);
			return -1;
		}
		*acls[j] = *src->acls[j];
		/* An entry made without CHAP keys (the control sets an empty chap_user to make it): none written. */
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			const struct cfg_key *key;
			unsigned i;

			if ((key = cfg_schema_find(CFG_SECTION_ACL, keys[k], &i)) &&
			    !((const char *)acls[j] + key->offset)[0])
				cfg_key_mark_set(&acls[j]->lines, i, false);
		}
	}
	for (size_t j = 0; j < dst->acl_count; j++)
		free(dst->acls[j]);
	free(dst->acls);
	dst->acls = acls;
	dst->acl_count = src->acl_count;
	memcpy(dst->chap_user, src->chap_user, sizeof(dst->chap_user));
	memcpy(dst->chap_secret, src->chap_secret, sizeof(dst->chap_secret));
	memcpy(dst->mutual_user, src->mutual_user, sizeof(dst->mutual_user));
	memcpy(dst->mutual_secret, src->mutual_secret, sizeof(dst->mutual_secret));
	/* save writes the keys that were set: these four as src has them. */
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		unsigned i;

		if (!cfg_schema_find(CFG_SECTION_TARGET, keys[k], &i))
			continue;
		cfg_key_mark_set(&dst->lines, i, cfg_key_was_set(&src->lines, i));
		dst->lines.key[i] = src->lines.key[i];
	}
	return 0;
}

void cfg_remove_target(struct cfg *cfg, const char *name)
{
	size_t i = target_index(cfg, name);

	if (i == cfg->target_count)
		return;
	target_free(cfg->targets[i]);
	memmove(&cfg->targets[i], &cfg->targets[i + 1], (cfg->target_count - i - 1) * sizeof(cfg->targets[0]));
	cfg->target_count--;
}

static struct cfg_lun *template_get(struct cfg *cfg, const char *name)
{
	struct cfg_lun *l;

	for (size_t i = 0; i < cfg->template_count; i++)
		if (strcmp(cfg->templates[i]->template_name, name) == 0)
			return cfg->templates[i];
	if (!grow(&cfg->templates, cfg->template_count) || !(l = calloc(1, sizeof(*l))))
		return NULL;
	snprintf(l->template_name, sizeof(l->template_name), "%s", name);
	cfg_apply_defaults(CFG_SECTION_LU, l);
	cfg->templates[cfg->template_count++] = l;
	return l;
}

/* A template name: 1..63 of [A-Za-z0-9._-] (it appears in cfgstrings, between ';' and '='). */
static bool template_name_ok(const char *name)
{
	size_t len = strlen(name);

	return len > 0 && len < CFG_TEMPLATE_NAME_MAX &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == len;
}

/* ---- section headers ---- */

/* Splits a header into words; "quoted strings" are one word without their quotes. */
static int split_header(const char *text, char words[][CFG_NAME_MAX], int max_words, bool quoted[])
{
	const char *p = text;
	int n = 0;

	for (;;) {
		size_t len;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			return n;
		if (n == max_words)
			return -1;
		quoted[n] = *p == '"';
		if (quoted[n]) {
			const char *end = strchr(p + 1, '"');

			if (!end)
				return -1;
			len = (size_t)(end - p - 1);
			if (len >= CFG_NAME_MAX)
				return -1;
			memcpy(words[n], p + 1, len);
			p = end + 1;
			if (*p && !isspace((unsigned char)*p))
				return -1;
		} else {
			len = strcspn(p, " \t\"");
			if (len >= CFG_NAME_MAX)
				return -1;
			memcpy(words[n], p, len);
			p += len;
		}
		words[n][len] = '\0';
		n++;
	}
}

/* A section header split into words, and where it stands (for messages). */
struct header {
	const char *text;  /* as written (between the brackets, or given to cfg_set) */
	unsigned line;
	enum cfg_section_kind kind;
	int n;             /* words, or -1 when it does not split (split_header) */
	char words[3][CFG_NAME_MAX];
	bool quoted[3];
};

/* The kind a header's first word names, or CFG_SECTION_COUNT. */
static enum cfg_section_kind header_kind(const char *text)
{
	size_t word_len = strcspn(text, " \t\"");

	for (int k = 0; k < CFG_SECTION_COUNT; k++)
		if (strlen(cfg_sections[k].word) == word_len && strncmp(text, cfg_sections[k].word, word_len) == 0)
			return (enum cfg_section_kind)k;
	return CFG_SECTION_COUNT;
}

/* The openers below report what is wrong with a header through these, and return false. */
static bool header_malformed(struct parse *p, const struct header *h)
{
	report(p, h->line, h->text, NULL, "malformed section header (expected [%s])", cfg_sections[h->kind].syntax);
	return false;
}

static bool header_out_of_memory(struct parse *p, const struct header *h)
{
	report(p, h->line, h->text, NULL, "out of memory");
	return false;
}

/* Whether a word of the header is an iSCSI name; reports why not. */
static bool header_name_ok(struct parse *p, const struct header *h, const char *name)
{
	char why[512];

	if (cfg_check_iscsi_name(name, why, sizeof(why)) == 0)
		return true;
	report(p, h->line, h->text, NULL, "%s", why);
	return false;
}

/* [daemon], [iscsi], [tcmu]: every configuration has one of each. */
static bool open_single(struct parse *p, const struct header *h, struct section_ref *ref)
{
	if (h->n != 1)
		return header_malformed(p, h);
	ref->object = h->kind == CFG_SECTION_DAEMON  ? (void *)&p->cfg->daemon
		      : h->kind == CFG_SECTION_ISCSI ? (void *)&p->cfg->iscsi
						     : (void *)&p->cfg->tcmu;
	ref->lines = h->kind == CFG_SECTION_DAEMON  ? &p->cfg->daemon.lines
		     : h->kind == CFG_SECTION_ISCSI ? &p->cfg->iscsi.lines
						    : &p->cfg->tcmu.lines;
	snprintf(ref->text, sizeof(ref->text), "%s", h->words[0]);
	return true;
}

/* [lu "NAME"]: a template. */
static bool open_template(struct parse *p, const struct header *h, struct section_ref *ref)
{
	struct cfg_lun *l;

	if (h->n != 2 || !h->quoted[1])
		return header_malformed(p, h);
	if (!template_name_ok(h->words[1])) {
		report(p, h->line, h->text, NULL, "a template name is 1..%d letters, digits, '.', '_' or '-'",
		       CFG_TEMPLATE_NAME_MAX - 1);
		return false;
	}
	snprintf(ref->text, sizeof(ref->text), "lu \"%s\"", h->words[1]);
	if (!(l = template_get(p->cfg, h->words[1])))
		return header_out_of_memory(p, h);
	ref->object = l;
	ref->lines = &l->lines;
	return true;
}

/* [target "IQN"] */
static bool open_target(struct parse *p, const struct header *h, struct section_ref *ref)
{
	struct cfg_target *t;

	if (h->n != 2 || !h->quoted[1])
		return header_malformed(p, h);
	if (!header_name_ok(p, h, h->words[1]))
		return false;
	snprintf(ref->text, sizeof(ref->text), "target \"%s\"", h->words[1]);
	if (!(t = target_get(p->cfg, h->words[1], h->line)))
		return header_out_of_memory(p, h);
	ref->object = t;
	ref->lines = &t->lines;
	return true;
}

/* [acl "TARGET" "INITIATOR"]: creates the target too if it has no section (yet). */
static bool open_acl(struct parse *p, const struct header *h, struct section_ref *ref)
{
	struct cfg_target *t;
	struct cfg_acl *a;
	bool created;

	if (h->n != 3 || !h->quoted[1] || !h->quoted[2])
		return header_malformed(p, h);
	if (!header_name_ok(p, h, h->words[1]) || !header_name_ok(p, h, h->words[2]))
		return false;
	snprintf(ref->text, sizeof(ref->text), "acl \"%s\" \"%s\"", h->words[1], h->words[2]);
	if (!(t = target_get(p->cfg, h->words[1], h->line)) || !(a = cfg_target_acl(t, h->words[2], &created)))
		return header_out_of_memory(p, h);
	ref->object = a;
	ref->lines = &a->lines;
	return true;
}

/* [lun "TARGET" N]: creates the target too if it has no section (yet). */
static bool open_lun(struct parse *p, const struct header *h, struct section_ref *ref)
{
	struct cfg_target *t;
	struct cfg_lun *l;
	unsigned long lun;
	char *end;

	if (h->n != 3 || !h->quoted[1])
		return header_malformed(p, h);
	if (!header_name_ok(p, h, h->words[1]))
		return false;
	errno = 0;
	lun = strtoul(h->words[2], &end, 10);
	if (!isdigit((unsigned char)h->words[2][0]) || *end || errno)
		return header_malformed(p, h);
	if (lun > CFG_MAX_LUN) {
		report(p, h->line, h->text, NULL, "LUN %s is out of range (0..%d)", h->words[2], CFG_MAX_LUN);
		return false;
	}
	snprintf(ref->text, sizeof(ref->text), "lun \"%s\" %lu", h->words[1], lun);
	if (!(t = target_get(p->cfg, h->words[1], h->line)) || !(l = lun_get(t, (uint32_t)lun)))
		return header_out_of_memory(p, h);
	ref->object = l;
	ref->lines = &l->lines;
	return true;
}

/*
 * Resolves a header ("lun \"iqn...\" 0") to its object, creating it.  Reports
 * and returns false when the header is malformed or the section was already
 * defined (check_duplicate: not for command-line settings).
 */
static bool section_open(struct parse *p, const char *text, unsigned line, bool check_duplicate,
			 struct section_ref *ref)
{
	struct header h = { .text = text, .line = line, .kind = header_kind(text) };
	bool ok = false;

	if (h.kind == CFG_SECTION_COUNT) {
		report(p, line, text, NULL,
		       "unknown section (expected daemon, iscsi, target \"NAME\", acl \"TARGET\" \"INITIATOR\", "
		       "lun \"TARGET\" N, tcmu or lu \"NAME\")");
		return false;
	}
	ref->kind = h.kind;
	h.n = split_header(text, h.words, 3, h.quoted);
	switch (h.kind) {
	case CFG_SECTION_DAEMON:
	case CFG_SECTION_ISCSI:
	case CFG_SECTION_TCMU:
		ok = open_single(p, &h, ref);
		break;
	case CFG_SECTION_LU:
		ok = open_template(p, &h, ref);
		break;
	case CFG_SECTION_TARGET:
		ok = open_target(p, &h, ref);
		break;
	case CFG_SECTION_ACL:
		ok = open_acl(p, &h, ref);
		break;
	case CFG_SECTION_LUN:
		ok = open_lun(p, &h, ref);
		break;
	case CFG_SECTION_COUNT:
		break;
	}
	if (!ok || !check_duplicate)
		return ok;
	if (ref->lines->section) {
		report(p, line, ref->text, NULL, "defined twice (first at line %u)", ref->lines->section);
		return false;
	}
	ref->lines->section = line;
	return true;
}

/* ---- keys ---- */

static void key_set(struct parse *p, unsigned line, const struct section_ref *ref, const char *name,
		    const char *value, bool check_duplicate)
{
	unsigned index;
	const struct cfg_key *key = cfg_schema_find(ref->kind, name, &index);
	char why[1024];

	if (!key) {
		report(p, line, ref->text, name, "unknown key");
		return;
	}
	if (check_duplicate && cfg_key_was_set(ref->lines, index)) {
		report(p, line, ref->text, name, "set twice (first at line %u)", ref->lines->key[index]);
		return;
	}
	/* Marked as set even when the value is refused: a second line for it is still a duplicate. */
	ref->lines->key[index] = line;
	cfg_key_mark_set(ref->lines, index, true);
	if (key->set(key, ref->object, value, why, sizeof(why)))
		report(p, line, ref->text, name, "%s", why);
}

/*
 * libinih's handler.  The section text comes from the reader (header_name):
 * libinih cuts section names at 49 characters, shorter than an iSCSI name.
 */
static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse *p = user;
	bool new_section = p->current_header != p->header_line;

	(void)section;
	p->handled = true;
	if (p->header_line == 0) {
		report(p, p->line, NULL, NULL, "%s: key outside any section", name);
		return 1;
	}
	p->header_used = true;
	if (p->header_broken)
		return 1;
	if (new_section) {
		p->current_header = p->header_line;
		p->current_ok = section_open(p, p->header_name, p->header_line, true, &p->current);
		p->prev_key[0] = '\0';
	}
	if (!p->current_ok)
		return 1;
	if (p->indented && strcmp(name, p->prev_key) == 0) {
		report(p, p->line, p->current.text, name,
		       "an indented line continues the previous value, which is not supported "
		       "(write the value on one line; do not indent keys)");
		return 1;
	}
	snprintf(p->prev_key, sizeof(p->prev_key), "%s", name);
	key_set(p, p->line, &p->current, name, value, true);
	return 1;
}

/* ---- the reader: line numbers, headers, syntax errors ---- */

/* A header followed by no key still declares its section. */
static void close_header(struct parse *p)
{
	struct section_ref ref;

	if (p->header_line && !p->header_used) {
		p->header_used = true;
		section_open(p, p->header_name, p->header_line, true, &ref);
	}
}

/* Called before each new line and at the end: was the previous line understood? */
static void check_line(struct parse *p)
{
	if (p->kind == LINE_KEY && !p->handled)
		report(p, p->line, NULL, NULL,
		       p->buf && p->buf[strspn(p->buf, " \t")] == '['
			       ? "syntax error: section header without ']'"
			       : "syntax error (expected key = value, [section] or a comment)");
	p->kind = LINE_NONE;
}

static char *reader(char *str, int num, void *stream)
{
	struct parse *p = stream;
	ssize_t n;
	const char *s;

	check_line(p);
	n = getline(&p->buf, &p->cap, p->in);
	if (n < 0) {
		if (ferror(p->in))
			p->read_errno = errno ? errno : EIO; /* not the end of the file: parse_stream reports it */
		return NULL;
	}
	p->line++;
	p->handled = false;
	s = p->buf;
	if (p->line == 1 && strncmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3; /* libinih skips a UTF-8 byte order mark */
	p->indented = isspace((unsigned char)*s) && *s != '\n' && *s != '\r';
	s += strspn(s, " \t\r\n\v\f");
	if (n >= num) {
		/* libinih would cut the line and parse the rest as another line. */
		report(p, p->line, NULL, NULL, "line is longer than %d characters", num - 1);
		str[0] = '\n';
		str[1] = '\0';
		return str;
	}
	if (*s == '\0' || *s == ';' || *s == '#') {
		p->kind = LINE_NONE;
	} else if (*s == '[' && strchr(s, ']')) {
		size_t len = (size_t)(strchr(s, ']') - s - 1);

		close_header(p);
		p->kind = LINE_HEADER;
		p->header_line = p->line;
		p->header_used = false;
		p->header_broken = false;
		while (len > 0 && isspace((unsigned char)s[1]))
			s++, len--;
		while (len > 0 && isspace((unsigned char)s[len]))
			len--;
		if (len >= sizeof(p->header_name))
			len = sizeof(p->header_name) - 1;
		memcpy(p->header_name, s + 1, len);
		p->header_name[len] = '\0';
	} else if (*s == '[') {
		/* libinih rejects it and keeps the previous section; the keys below belong to neither. */
		close_header(p);
		p->kind = LINE_KEY; /* not handled: check_line reports it */
		p->header_line = p->line;
		p->header_used = true;
		p->header_broken = true;
	} else {
		p->kind = LINE_KEY;
	}
	memcpy(str, p->buf, (size_t)n + 1);
	return str;
}

static int parse_stream(struct cfg *cfg, const char *name, FILE *in, struct cfg_diag *diag)
{
	struct parse p = { .cfg = cfg, .diag = diag, .file = name, .in = in };
	unsigned before = diag->count;
	int rc;

	snprintf(cfg->source, sizeof(cfg->source), "%s", name);
	rc = ini_parse_stream(reader, &p, handler, &p);
	check_line(&p);
	close_header(&p);
	free(p.buf);
	if (p.read_errno)
		cfg_diag_add(diag, "%s: cannot read: %s", name, strerror(p.read_errno));
	else if (rc == -2)
		report(&p, 0, NULL, NULL, "out of memory");
	else if (rc > 0 && diag->count == before)
		report(&p, (unsigned)rc, NULL, NULL, "syntax error");
	return diag->count == before ? 0 : -1;
}

/*
 * The whole of a configuration file, NUL-terminated, in *text: a regular
 * file of at most CFG_FILE_MAX bytes.  Opened without blocking (a FIFO
 * would wait for a writer) and checked before a byte is read, so a
 * directory, a device (/dev/zero) or a pipe is refused at once.  0, or -1
 * with the reason in diag.
 */
static int read_file(const char *path, char **text, struct cfg_diag *diag)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	size_t len = 0;
	struct stat st;
	char *buf;

	if (fd < 0) {
		cfg_diag_add(diag, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > CFG_FILE_MAX) {
		int e = errno;

		if (fstat(fd, &st) != 0)
			cfg_diag_add(diag, "%s: cannot read: %s", path, strerror(e));
		else if (!S_ISREG(st.st_mode))
			cfg_diag_add(diag, "%s: not a regular file (%s): a configuration is read from a file", path,
				     S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO"
				     : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : "not a file");
		else
			cfg_diag_add(diag, "%s: larger than %u bytes: not a configuration file", path, CFG_FILE_MAX);
		close(fd);
		return -1;
	}
	buf = malloc((size_t)st.st_size + 2);
	/* At most one byte more than fstat said: a file that grows meanwhile is refused, not read without end. */
	while (buf && len <= (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			cfg_diag_add(diag, "%s: cannot read: %s", path, strerror(errno));
			free(buf);
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (!buf || len > (size_t)st.st_size) {
		cfg_diag_add(diag, "%s: %s", path, buf ? "changed while it was read" : "out of memory");
		free(buf);
		return -1;
	}
	buf[len] = '\0';
	if (strlen(buf) != len) {
		unsigned line = 1;

		for (const char *c = buf; *c; c++)
			line += *c == '\n';
		cfg_diag_add(diag, "%s:%u: a NUL byte: not a text file", path, line);
		free(buf);
		return -1;
	}
	*text = buf;
	return 0;
}

int cfg_parse_file(struct cfg *cfg, const char *path, struct cfg_diag *diag)
{
	char *text;
	int rc;

	if (read_file(path, &text, diag) != 0)
		return -1;
	rc = cfg_parse_string(cfg, path, text, diag);
	free(text);
	return rc;
}

int cfg_parse_string(struct cfg *cfg, const char *name, const char *text, struct cfg_diag *diag)
{
	FILE *in;
	int rc;

	snprintf(cfg->source, sizeof(cfg->source), "%s", name);
	if (text[0] == '\0')
		return 0; /* fmemopen refuses empty buffers */
	in = fmemopen((void *)text, strlen(text), "r");
	if (!in) {
		cfg_diag_add(diag, "%s: cannot read: %s", name, strerror(errno));
		return -1;
	}
	rc = parse_stream(cfg, name, in, diag);
	fclose(in);
	return rc;
}

int cfg_set(struct cfg *cfg, const char *origin, const char *section, const char *key, const char *value,
	    struct cfg_diag *diag)
{
	struct parse p = { .cfg = cfg, .diag = diag, .file = origin };
	struct section_ref ref;
	unsigned before = diag->count;

	if (section_open(&p, section, 0, false, &ref))
		key_set(&p, 0, &ref, key, value, false);
	return diag->count == before ? 0 : -1;
}
