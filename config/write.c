/*
 * A configuration written back as a file (docs/control.md, save): every
 * section with the keys that were set (in a file, on the command line, in a
 * cfgstring, or at run time through cfg_set()), each formatted so that the
 * setter of its schema row reads it back to the same value.  Keys left at
 * their defaults stay out, so a device profile's presets stay presets.
 */
#include <inttypes.h>
#include <stdio.h>
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
			if ((uint64_t)e->value == v && !e->unsupported)
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
		    !(lines->set_mask >> cfg_schema_index(key) & 1))
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
