/*
 * A configuration written back as a file (docs/control.md, save), and two
 * configurations compared key by key (a reload on SIGHUP).  Written: every
 * section with the keys that were set (in a file, on the command line, in a
 * cfgstring, or at run time through cfg_set()), each formatted so that the
 * setter of its schema row reads it back to the same value.  Keys left at
 * their defaults stay out, so a device profile's presets stay presets.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"

static const void *field(const void *object, const struct cfg_key *key)
{
	return (const char *)object + key->offset;
}

static uint64_t number(const void *object, const struct cfg_key *key)
{
	const void *p = field(object, key);
	uint64_t v64;
	uint32_t v32;
	uint8_t v8;

	if (key->size == sizeof(v64)) {
		memcpy(&v64, p, sizeof(v64));
		return v64;
	}
	if (key->size == sizeof(v32)) {
		memcpy(&v32, p, sizeof(v32));
		return v32;
	}
	memcpy(&v8, p, sizeof(v8));
	return v8;
}

static void write_value(FILE *out, const void *object, const struct cfg_key *key)
{
	uint64_t v = key->type == CFG_TYPE_STRING || key->type == CFG_TYPE_PATH || key->type == CFG_TYPE_NAME ||
				     key->type == CFG_TYPE_ADDRESS
			     ? 0
			     : number(object, key);
	const char *sep = "";

	switch (key->type) {
	case CFG_TYPE_BOOL:
		fputs(v ? "true" : "false", out);
		break;
	case CFG_TYPE_U32:
	case CFG_TYPE_U64:
		if (key->set == cfg_set_naa && v)
			fprintf(out, "%016" PRIx64, v);
		else
			fprintf(out, "%" PRIu64, v);
		break;
	case CFG_TYPE_ENUM:
		for (const struct cfg_enum_value *e = key->values; e->name; e++)
			if ((uint64_t)e->value == v)
				fputs(e->name, out);
		break;
	case CFG_TYPE_FLAGS:
		for (const struct cfg_enum_value *e = key->values; e->name; e++) {
			if (v & e->value) {
				fprintf(out, "%s%s", sep, e->name);
				sep = ", ";
			}
		}
		if (!v)
			fputs("none", out);
		break;
	case CFG_TYPE_ADDRESS: {
		const struct cfg_daemon *d = object;

		for (unsigned i = 0; i < d->listen_count; i++)
			fprintf(out, "%s%s", i ? ", " : "", d->listen[i]);
		break;
	}
	case CFG_TYPE_STRING:
	case CFG_TYPE_PATH:
	case CFG_TYPE_NAME:
		fputs(field(object, key), out);
		break;
	case CFG_TYPE_NAME_LIST:
		break;
	}
}

/* The keys of a section object that were set; allowed_initiators is written as [acl] sections instead. */
static void write_keys(FILE *out, enum cfg_section_kind kind, const void *object, const struct cfg_key_lines *lines)
{
	for (size_t i = 0; i < cfg_schema_len; i++) {
		const struct cfg_key *key = &cfg_schema[i];

		if (key->section != cfg_rows_of(kind) || key->type == CFG_TYPE_NAME_LIST ||
		    !cfg_key_was_set(lines, cfg_schema_index(key)))
			continue;
		fprintf(out, "%s = ", key->name);
		write_value(out, object, key);
		fputc('\n', out);
	}
}

int cfg_write(const struct cfg *cfg, FILE *out)
{
	fputs("# sbcemu configuration written by the running daemon (sbcemuctl save)\n", out);
	fputs("[daemon]\n", out);
	write_keys(out, CFG_SECTION_DAEMON, &cfg->daemon, &cfg->daemon.lines);
	fputs("\n[iscsi]\n", out);
	write_keys(out, CFG_SECTION_ISCSI, &cfg->iscsi, &cfg->iscsi.lines);
	fputs("\n[tcmu]\n", out);
	write_keys(out, CFG_SECTION_TCMU, &cfg->tcmu, &cfg->tcmu.lines);
	for (size_t i = 0; i < cfg->template_count; i++) {
		fprintf(out, "\n[lu \"%s\"]\n", cfg->templates[i]->template_name);
		write_keys(out, CFG_SECTION_LU, cfg->templates[i], &cfg->templates[i]->lines);
	}
	for (size_t t = 0; t < cfg->target_count; t++) {
		const struct cfg_target *target = cfg->targets[t];

		fprintf(out, "\n[target \"%s\"]\n", target->name);
		write_keys(out, CFG_SECTION_TARGET, target, &target->lines);
		for (size_t a = 0; a < target->acl_count; a++) {
			fprintf(out, "\n[acl \"%s\" \"%s\"]\n", target->name, target->acls[a]->initiator);
			write_keys(out, CFG_SECTION_ACL, target->acls[a], &target->acls[a]->lines);
		}
		for (size_t l = 0; l < target->lun_count; l++) {
			fprintf(out, "\n[lun \"%s\" %" PRIu32 "]\n", target->name, target->luns[l]->lun);
			write_keys(out, CFG_SECTION_LUN, target->luns[l], &target->luns[l]->lines);
		}
	}
	return ferror(out) ? -1 : 0;
}

/* ---- comparing ---- */

/* The value of key in object as cfg_write() writes it (malloc'd; NULL when out of memory). */
static char *value_text(const void *object, const struct cfg_key *key)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	write_value(f, object, key);
	fclose(f);
	return buf;
}

/* Every key of a section whose value differs between a and b. */
static void diff_keys(enum cfg_section_kind kind, const void *a, const void *b, struct cfg_change *c,
		      void (*fn)(void *arg, const struct cfg_change *c), void *arg)
{
	for (size_t i = 0; i < cfg_schema_len; i++) {
		const struct cfg_key *key = &cfg_schema[i];
		char *x, *y;

		if (key->section != cfg_rows_of(kind) || key->type == CFG_TYPE_NAME_LIST)
			continue;
		x = value_text(a, key);
		y = value_text(b, key);
		if (x && y && strcmp(x, y) != 0) {
			c->key = key->name;
			c->old_value = x;
			c->new_value = y;
			fn(arg, c);
		}
		free(x);
		free(y);
	}
	c->key = c->old_value = c->new_value = NULL;
}

static const struct cfg_target *find_target(const struct cfg *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->target_count; i++)
		if (strcmp(cfg->targets[i]->name, name) == 0)
			return cfg->targets[i];
	return NULL;
}

static const struct cfg_lun *find_lun(const struct cfg_target *t, uint32_t lun)
{
	for (size_t i = 0; t && i < t->lun_count; i++)
		if (t->luns[i]->lun == lun)
			return t->luns[i];
	return NULL;
}

static const struct cfg_acl *find_acl(const struct cfg_target *t, const char *initiator)
{
	for (size_t i = 0; t && i < t->acl_count; i++)
		if (strcmp(t->acls[i]->initiator, initiator) == 0)
			return t->acls[i];
	return NULL;
}

/* The sections of `from` missing in `to` (kind: what they are to the caller), then the keys of those in both. */
static void diff_targets(const struct cfg *from, const struct cfg *to, enum cfg_change_kind missing, bool keys,
			 void (*fn)(void *arg, const struct cfg_change *c), void *arg)
{
	for (size_t i = 0; i < from->target_count; i++) {
		const struct cfg_target *t = from->targets[i], *u = find_target(to, t->name);
		struct cfg_change c = { .kind = missing, .section = "target", .target = t->name };

		if (!u) {
			fn(arg, &c);
			continue;
		}
		c.kind = CFG_CHANGE_KEY;
		if (keys)
			diff_keys(CFG_SECTION_TARGET, t, u, &c, fn, arg);
		for (size_t a = 0; a < t->acl_count; a++) {
			const struct cfg_acl *other = find_acl(u, t->acls[a]->initiator);
			struct cfg_change ca = { .kind = other ? CFG_CHANGE_KEY : missing, .section = "acl",
						 .target = t->name, .name = t->acls[a]->initiator };

			if (!other)
				fn(arg, &ca);
			else if (keys)
				diff_keys(CFG_SECTION_ACL, t->acls[a], other, &ca, fn, arg);
		}
		for (size_t l = 0; l < t->lun_count; l++) {
			const struct cfg_lun *other = find_lun(u, t->luns[l]->lun);
			struct cfg_change cl = { .kind = other ? CFG_CHANGE_KEY : missing, .section = "lun",
						 .target = t->name, .lun = t->luns[l]->lun };

			cl.old_lun = keys ? t->luns[l] : other;
			cl.new_lun = keys ? other : t->luns[l];
			if (!other)
				fn(arg, &cl);
			else if (keys)
				diff_keys(CFG_SECTION_LUN, t->luns[l], other, &cl, fn, arg);
		}
	}
}

void cfg_diff(const struct cfg *a, const struct cfg *b, void (*fn)(void *arg, const struct cfg_change *c), void *arg)
{
	struct cfg_change c = { .kind = CFG_CHANGE_KEY, .section = "daemon" };

	diff_keys(CFG_SECTION_DAEMON, &a->daemon, &b->daemon, &c, fn, arg);
	c.section = "iscsi";
	diff_keys(CFG_SECTION_ISCSI, &a->iscsi, &b->iscsi, &c, fn, arg);
	c.section = "tcmu";
	diff_keys(CFG_SECTION_TCMU, &a->tcmu, &b->tcmu, &c, fn, arg);
	for (size_t i = 0; i < a->template_count; i++) {
		const struct cfg_lun *other = cfg_find_template(b, a->templates[i]->template_name);
		struct cfg_change ct = { .kind = other ? CFG_CHANGE_KEY : CFG_CHANGE_REMOVED, .section = "lu",
					 .name = a->templates[i]->template_name };

		if (!other)
			fn(arg, &ct);
		else
			diff_keys(CFG_SECTION_LU, a->templates[i], other, &ct, fn, arg);
	}
	for (size_t i = 0; i < b->template_count; i++) {
		struct cfg_change ct = { .kind = CFG_CHANGE_ADDED, .section = "lu", .name = b->templates[i]->template_name };

		if (!cfg_find_template(a, b->templates[i]->template_name))
			fn(arg, &ct);
	}
	diff_targets(a, b, CFG_CHANGE_REMOVED, true, fn, arg);
	diff_targets(b, a, CFG_CHANGE_ADDED, false, fn, arg);
}
