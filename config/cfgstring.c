/*
 * TCMU cfgstrings (docs/tcmu.md): the logical unit of a `user:sbcemu`
 * backstore, written "key=value;key=value" over the keys of [lun] sections,
 * optionally starting with lu=NAME to take an [lu "NAME"] template.  The
 * same setters and checks as the file give the same reasons.
 *
 * What LIO does to the string limits it (linux
 * drivers/target/target_core_user.c tcmu_set_configfs_dev_params; rtslib-fb
 * tcm.py): the kernel cuts `control` at commas and keeps 255 bytes of
 * dev_config, rtslib refuses ':' and reads the string back from the `info`
 * file only up to the first space.  A cfgstring with any of those would be
 * changed on its way to the daemon or lost by saveconfig, so it is refused
 * here with the reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"

const struct cfg_lun *cfg_find_template(const struct cfg *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->template_count; i++)
		if (strcmp(cfg->templates[i]->template_name, name) == 0)
			return cfg->templates[i];
	return NULL;
}

/* Marks key as set by the cfgstring (line 0) and stores value; reports a refused value. */
static void set_key(struct cfg_diag *diag, const char *source, struct cfg_lun *l, const char *key,
		    const char *value)
{
	unsigned index;
	const struct cfg_key *k = cfg_schema_find(CFG_SECTION_LUN, key, &index);
	char why[1024];

	if (!k) {
		cfg_report(diag, source, 0, NULL, key, "unknown key (the keys of [lun] sections, or lu=NAME first)");
		return;
	}
	if (l->lines.key[index] == UINT32_MAX) {
		cfg_report(diag, source, 0, NULL, key, "set twice");
		return;
	}
	cfg_key_mark_set(&l->lines, index, true);
	l->lines.key[index] = UINT32_MAX; /* set here (a template's keys may be set again once) */
	if (k->set(k, l, value, why, sizeof(why)))
		cfg_report(diag, source, 0, NULL, key, why);
}

/* "  text  " -> "text" in place. */
static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	return s;
}

int cfg_lun_from_cfgstring(const struct cfg *cfg, const char *name, const char *cfgstring, uint64_t dev_size,
			   struct cfg_lun *out, struct cfg_diag *diag)
{
	unsigned before = diag->count, size_index;
	char source[CFG_NAME_MAX + 32], seed[CFG_NAME_MAX + 16];
	char *copy, *save = NULL, *pair;
	bool first = true;
	struct cfg_lun_check c = {
		.diag = diag, .source = source, .state_dir = cfg->daemon.state_dir, .serial_seed = seed,
	};
	size_t bad;

	if (name[0])
		snprintf(source, sizeof(source), "cfgstring of %s", name);
	else
		snprintf(source, sizeof(source), "cfgstring");
	memset(out, 0, sizeof(*out));
	cfg_apply_defaults(CFG_SECTION_LUN, out);
	if (strlen(cfgstring) >= CFG_CFGSTRING_MAX) {
		cfg_report(diag, source, 0, NULL, NULL,
			   "longer than the kernel's 255 bytes (put the keys in an [lu \"NAME\"] template and write "
			   "lu=NAME)");
		return -1;
	}
	bad = strcspn(cfgstring, ",: \t\n");
	if (cfgstring[bad]) {
		cfg_report(diag, source, 0, NULL, NULL,
			   cfgstring[bad] == ','   ? "has a ',' (LIO cuts the device's control string at commas; "
						     "use an [lu \"NAME\"] template for lists)"
			   : cfgstring[bad] == ':' ? "has a ':' (rtslib refuses it in a user backstore's config)"
						   : "has white space (saveconfig would keep only what precedes it)");
		return -1;
	}
	copy = strdup(cfgstring);
	if (!copy) {
		cfg_report(diag, source, 0, NULL, NULL, "out of memory");
		return -1;
	}
	for (pair = strtok_r(copy, ";", &save); pair; pair = strtok_r(NULL, ";", &save), first = false) {
		char *eq = strchr(pair, '='), *key, *value;

		if (!eq) {
			cfg_report(diag, source, 0, NULL, NULL, "expected key=value pairs separated by ';'");
			continue;
		}
		*eq = '\0';
		key = trim(pair);
		value = trim(eq + 1);
		if (strcmp(key, "lu") == 0) {
			const struct cfg_lun *t = cfg_find_template(cfg, value);

			if (!first)
				cfg_report(diag, source, 0, NULL, "lu", "must come first (the other keys override it)");
			else if (!t)
				cfg_report(diag, source, 0, NULL, "lu", "no [lu \"NAME\"] template of that name");
			else {
				/* Its keys count as set (by the cfgstring, for the messages). */
				*out = *t;
				memset(out->lines.key, 0, sizeof(out->lines.key));
				out->lines.section = 0;
			}
			continue;
		}
		set_key(diag, source, out, key, value);
	}
	free(copy);
	/* The backstore's size in LIO is the LU's, unless the cfgstring says otherwise; then they must agree. */
	cfg_schema_find(CFG_SECTION_LUN, "size", &size_index);
	if (!cfg_key_was_set(&out->lines, size_index) && dev_size) {
		out->size = dev_size;
		cfg_key_mark_set(&out->lines, size_index, true);
	} else if (dev_size && out->size != dev_size) {
		char why[128];

		snprintf(why, sizeof(why), "%llu differs from the backstore's size in LIO (%llu bytes)",
			 (unsigned long long)out->size, (unsigned long long)dev_size);
		cfg_report(diag, source, 0, NULL, "size", why);
	}
	/* The ring has no room for protection information (the kernel never fills iov_dif_cnt). */
	if (out->protection_type)
		cfg_report(diag, source, 0, NULL, "protection_type",
			   "protection information does not reach a TCMU handler (LIO passes none through the ring); "
			   "serve this LU over iSCSI");
	if (diag->count != before)
		return -1;
	memset(out->lines.key, 0, sizeof(out->lines.key)); /* messages from the checks name no line */
	out->template_name[0] = '\0';
	/* The serial number of a TCMU LU hashes "user:sbcemu/<name>". */
	snprintf(seed, sizeof(seed), "user:sbcemu/%s", name);
	cfg_finish_lun(&c, out);
	return diag->count == before ? 0 : -1;
}
