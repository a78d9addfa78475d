/*
 * The control's target-add and target-remove (docs/control.md).  An added
 * target is checked as the configuration file is: its keys and LUN 0's
 * cfgstring are set into a configuration of their own (cfg_set, so the same
 * setters give the same reasons) that cfg_finish() checks whole (CHAP
 * secrets, paths, ...); sbce_target_add (targets.c) then serves it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_internal.h"

/* The [target] keys target-add takes as request members (docs/config.md). */
static const char *const target_keys[] = { "alias",	  "tpgt",	 "chap_user", "chap_secret",
					   "mutual_user", "mutual_secret", "allowed_initiators" };

/* A request member as configuration text: a string as it is, an integer in decimal; NULL with the reason. */
static const char *member_text(const json_t *v, const char *key, char *buf, size_t len, char *err, size_t errlen)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
		return buf;
	}
	snprintf(err, errlen, "\"%s\" must be a string", key);
	return NULL;
}

/* Sets the cfgstring's "key=value;..." pairs into section of cfg; -1 with the reason for a pair without '='. */
static int set_cfgstring(struct cfg *cfg, const char *section, const char *cfgstring, struct cfg_diag *diag,
			 char *err, size_t errlen)
{
	char *copy = strdup(cfgstring), *save = NULL;
	int rc = 0;

	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (char *item = strtok_r(copy, ";", &save); item && rc == 0; item = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(item, '=');

		item += strspn(item, " \t");
		if (!*item)
			continue;
		if (!eq) {
			snprintf(err, errlen, "cfgstring: \"%.64s\" is not key=value", item);
			rc = -1;
			continue;
		}
		*eq = '\0';
		cfg_set(cfg, "target-add", section, item, eq + 1, diag);
	}
	free(copy);
	return rc;
}

/* The target a target-add request describes, in a finished configuration of its own (*out), or -1 with the reason. */
static int requested_target(struct sbce_daemon *d, const json_t *req, const char *name, struct cfg **out, char *err,
			    size_t errlen)
{
	const json_t *cfgstring = json_object_get(req, "cfgstring");
	struct cfg *cand = cfg_create();
	struct cfg_diag diag = { 0 };
	char section[CFG_NAME_MAX + 32], buf[32];

	if (!cand) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (!json_is_string(cfgstring)) {
		snprintf(err, errlen, "\"cfgstring\" must be a string of LUN 0's [lun] keys: \"size=1G;path=x.img\"");
		goto fail;
	}
	cand->daemon = d->cfg->daemon; /* relative paths and state directories as the running daemon has them */
	snprintf(section, sizeof(section), "target \"%s\"", name);
	for (size_t k = 0; k < sizeof(target_keys) / sizeof(target_keys[0]); k++) {
		const json_t *v = json_object_get(req, target_keys[k]);
		const char *text;

		if (!v)
			continue;
		if (!(text = member_text(v, target_keys[k], buf, sizeof(buf), err, errlen)))
			goto fail;
		cfg_set(cand, "target-add", section, target_keys[k], text, &diag);
	}
	snprintf(section, sizeof(section), "lun \"%s\" 0", name);
	if (set_cfgstring(cand, section, json_string_value(cfgstring), &diag, err, errlen) != 0)
		goto fail;
	if (diag.count == 0)
		cfg_finish(cand, &diag);
	if (diag.count) {
		snprintf(err, errlen, "%.*s", (int)strcspn(diag.text, "\n"), diag.text);
		goto fail;
	}
	/* An empty cfgstring ("", ";") sets no key: no LUN 0, and no target either. */
	if (cand->target_count != 1 || cand->targets[0]->lun_count == 0) {
		snprintf(err, errlen, "\"cfgstring\" sets no key of LUN 0: a new target needs its LUN 0 (\"size=1G;path=x.img\")");
		goto fail;
	}
	cfg_diag_free(&diag);
	*out = cand;
	return 0;
fail:
	cfg_diag_free(&diag);
	cfg_free(cand);
	return -1;
}

int sbce_control_target_add(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	const json_t *target = json_object_get(req, "target");
	struct cfg *cand;
	int rc;

	if (!json_is_string(target)) {
		snprintf(err, errlen, "\"target\" must be the new target's name");
		return -1;
	}
	if (sbce_target_index(d, json_string_value(target)) >= 0) {
		snprintf(err, errlen, "target %s already exists", json_string_value(target));
		return -1;
	}
	if (requested_target(d, req, json_string_value(target), &cand, err, errlen) != 0)
		return -1;
	rc = sbce_target_add(d, cand->targets[0], "control", err, errlen);
	if (rc == 0) {
		json_object_set_new(result, "target", json_string(cand->targets[0]->name));
		json_object_set_new(result, "luns", json_pack("[i]", 0));
		json_object_set_new(result, "backing", json_string(cand->targets[0]->luns[0]->path));
	}
	cfg_free(cand);
	return rc;
}

int sbce_control_target_remove(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	const json_t *target = json_object_get(req, "target");
	unsigned ended = 0;
	bool force;
	int i;

	if (!json_is_string(target)) {
		snprintf(err, errlen, "\"target\" must be a target's name");
		return -1;
	}
	if (sbce_control_bool(req, "force", false, &force, err, errlen) < 0)
		return -1;
	i = sbce_target_index(d, json_string_value(target));
	if (i < 0) {
		snprintf(err, errlen, "no target \"%.224s\"", json_string_value(target));
		return -1;
	}
	json_object_set_new(result, "removed", json_string(json_string_value(target)));
	if (sbce_target_remove(d, (size_t)i, force, "control", &ended, err, errlen) != 0)
		return -1;
	json_object_set_new(result, "ended", json_integer(ended));
	return 0;
}
