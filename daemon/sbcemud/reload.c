/*
 * Reload (SIGHUP, or the control's reload): the configuration file read
 * again and what changed applied with the rules of the runtime control
 * (docs/control.md, "Reload on SIGHUP"):
 *   - live: daemon.log_level; LUs added to and removed from a running
 *     target (removal refused while commands are in the LU's task set);
 *     an LU's size (as lu-resize), write_protect (as lu-write-protect),
 *     mode_defaults (as lu-mode-defaults with replace), latency (as
 *     lu-latency), alua_state (as lu-alua), a conglomerate's subsidiaries and bindings (as the
 *     subsidiary commands: a bound subsidiary is not destroyed);
 *   - targets added (as target-add) and removed (as target-remove without
 *     force: refused while commands are in its LUs' task sets);
 *   - everything else (listening portals, [iscsi], targets' keys,
 *     ACLs, an LU's other keys, templates) takes effect at the next start:
 *     one warning per key names it with its old and new value.
 * A file that does not load changes nothing; its errors are logged.  Nor
 * does one that would take every running target away (an emptied or
 * truncated file), unless the reload is asked to (sbcemuctl reload
 * --remove-all-targets).  What was applied is in the running configuration
 * (sbcemuctl save).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbcemud.h"

struct reload {
	struct sbce_daemon *d;
	const char *why;            /* starts every log line: "SIGHUP", "control" */
	const struct cfg *next;     /* the configuration reloaded */
	unsigned applied, at_restart, refused;
	struct cfg_change *changes; /* collected first: applying them changes the running configuration */
	size_t count;
	bool out_of_memory;
};

static void describe(const struct cfg_change *c, char *buf, size_t len)
{
	if (strcmp(c->section, "lun") == 0)
		snprintf(buf, len, "lun \"%s\" %u", c->target, c->lun);
	else if (strcmp(c->section, "acl") == 0)
		snprintf(buf, len, "acl \"%s\" \"%s\"", c->target, c->name);
	else if (strcmp(c->section, "target") == 0)
		snprintf(buf, len, "target \"%s\"", c->target);
	else if (strcmp(c->section, "lu") == 0)
		snprintf(buf, len, "lu \"%s\"", c->name);
	else
		snprintf(buf, len, "%s", c->section);
}

static void at_restart(struct reload *r, const struct cfg_change *c, const char *why)
{
	char where[CFG_NAME_MAX * 2 + 32];

	describe(c, where, sizeof(where));
	r->at_restart++;
	if (c->kind == CFG_CHANGE_KEY)
		sbce_warn("%s: [%s] %s changed (%s -> %s): %s", r->why, where, c->key, c->old_value, c->new_value, why);
	else
		sbce_warn("%s: [%s] %s: %s", r->why, where, c->kind == CFG_CHANGE_ADDED ? "added" : "removed", why);
}

static void refused(struct reload *r, const struct cfg_change *c, const char *err)
{
	char where[CFG_NAME_MAX * 2 + 32];

	describe(c, where, sizeof(where));
	r->refused++;
	sbce_warn("%s: [%s] %s%s not applied: %s", r->why, where, c->key ? c->key : "", c->key ? "" : "change", err);
}

static void lun_key(struct reload *r, const struct cfg_change *c, size_t i)
{
	struct scsi_lu *lu = scsi_device_find_lu(r->d->devices[i], scsi_lun_encode(c->lun));
	char err[256];

	if (!lu) {
		refused(r, c, "the LU is not running (removed at run time)");
	} else if (strcmp(c->key, "size") == 0) {
		uint64_t blocks = c->new_lun->size / c->new_lun->logical_block_size;

		if (c->new_lun->size % c->new_lun->logical_block_size || c->new_lun->size == 0) {
			refused(r, c, "not a whole number of blocks");
		} else if (scsi_lu_resize(lu, blocks, false, err, sizeof(err)) != 0) {
			refused(r, c, err);
		} else {
			sbce_lu_track(r->d, c->target, c->lun, "size", c->new_value);
			sbce_info("%s: target %s LUN %u resized to %llu blocks", r->why, c->target, c->lun,
				  (unsigned long long)blocks);
			r->applied++;
		}
	} else if (strcmp(c->key, "write_protect") == 0) {
		scsi_lu_set_write_protect(lu, c->new_lun->write_protect);
		sbce_lu_track(r->d, c->target, c->lun, "write_protect", c->new_value);
		sbce_info("%s: target %s LUN %u: write protection %s", r->why, c->target, c->lun,
			  c->new_lun->write_protect ? "on" : "off");
		r->applied++;
	} else if (strcmp(c->key, "alua_state") == 0) {
		if (scsi_lu_set_alua_state(lu, (enum scsi_alua_state)c->new_lun->alua_state, err, sizeof(err)) != 0) {
			refused(r, c, err);
		} else {
			sbce_lu_track(r->d, c->target, c->lun, "alua_state", c->new_value);
			sbce_info("%s: target %s LUN %u: asymmetric access state %s", r->why, c->target, c->lun,
				  c->new_value);
			r->applied++;
		}
	} else if (strcmp(c->key, "mode_defaults") == 0) {
		struct scsi_mode_defaults md;

		if (sbce_mode_defaults(c->new_lun->mode_defaults, &md, err, sizeof(err)) != 0) {
			refused(r, c, err);
		} else {
			bool changed = scsi_lu_set_mode_defaults(lu, &md);

			sbce_lu_track(r->d, c->target, c->lun, "mode_defaults", c->new_lun->mode_defaults);
			sbce_info("%s: target %s LUN %u: mode defaults \"%s\"%s", r->why, c->target, c->lun,
				  c->new_lun->mode_defaults, changed ? ", current values changed" : "");
			r->applied++;
		}
	} else if (strcmp(c->key, "latency") == 0) {
		struct scsi_latency_params p;

		if (sbce_latency_parse(c->new_lun->latency, &p, err, sizeof(err)) != 0 ||
		    scsi_lu_set_latency(lu, &p, err, sizeof(err)) != 0) {
			refused(r, c, err);
		} else {
			sbce_lu_track(r->d, c->target, c->lun, "latency", c->new_lun->latency);
			sbce_info("%s: target %s LUN %u: latency \"%s\"", r->why, c->target, c->lun, c->new_lun->latency);
			r->applied++;
		}
	} else if (strcmp(c->key, "subsidiaries") == 0 || strcmp(c->key, "bindings") == 0) {
		unsigned changes;
		int rc = sbce_conglomerate_reconcile(lu, c->new_lun, &changes, err, sizeof(err));

		sbce_conglomerate_track(r->d, i, lu, c->lun);
		if (rc != 0)
			refused(r, c, err);
		if (changes) {
			sbce_info("%s: target %s LUN %u: %u subsidiary changes (%s)", r->why, c->target, c->lun, changes,
				  c->key);
			r->applied++;
		}
	} else {
		at_restart(r, c, "takes effect at the next start (or remove and add the LU: sbcemuctl lu remove, lu add)");
	}
}

/* A target added (as target-add) or removed (as target-remove without force). */
static void target_change(struct reload *r, const struct cfg_change *c, int i)
{
	char err[512];
	unsigned ended;

	if (c->kind == CFG_CHANGE_ADDED) {
		const struct cfg_target *t = NULL;

		for (size_t k = 0; k < r->next->target_count && !t; k++)
			if (strcmp(r->next->targets[k]->name, c->target) == 0)
				t = r->next->targets[k];
		if (!t || sbce_target_add(r->d, t, r->why, err, sizeof(err)) != 0)
			refused(r, c, t ? err : "not in the reloaded configuration");
		else
			r->applied++;
	} else if (i < 0) {
		refused(r, c, "the target is not running");
	} else if (sbce_target_remove(r->d, (size_t)i, false, r->why, &ended, err, sizeof(err)) != 0) {
		refused(r, c, err);
	} else {
		r->applied++;
	}
}

static void apply(void *arg, const struct cfg_change *c)
{
	struct reload *r = arg;
	struct sbce_daemon *d = r->d;
	int i = sbce_target_index(d, c->target);
	char err[256];
	unsigned ended;

	if (strcmp(c->section, "daemon") == 0 && strcmp(c->key, "log_level") == 0) {
		struct cfg_diag diag = { 0 };

		if (cfg_set(d->cfg, r->why, "daemon", "log_level", c->new_value, &diag) == 0) {
			sbce_log_set_level((enum sbce_log_level)d->cfg->daemon.log_level);
			sbce_info("%s: log level %s", r->why, c->new_value);
			r->applied++;
		}
		cfg_diag_free(&diag);
	} else if (strcmp(c->section, "target") == 0 && c->kind != CFG_CHANGE_KEY) {
		target_change(r, c, i);
	} else if (strcmp(c->section, "lun") != 0 || i < 0) {
		at_restart(r, c, "takes effect at the next start");
	} else if (c->kind == CFG_CHANGE_REMOVED) {
		if (sbce_lu_remove(d, (size_t)i, c->lun, false, r->why, &ended, err, sizeof(err)) != 0)
			refused(r, c, err);
		else
			r->applied++;
	} else if (c->kind == CFG_CHANGE_ADDED) {
		if (sbce_lu_add(d, (size_t)i, c->new_lun, r->why, err, sizeof(err)) != 0)
			refused(r, c, err);
		else
			r->applied++;
	} else {
		lun_key(r, c, (size_t)i);
	}
}

/* The command line's overrides of [daemon] keys: 0, or -1 with "--listen: daemon.listen: reason" in diag. */
static int apply_overrides(struct cfg *cfg, const struct sbce_config_source *src, struct cfg_diag *diag)
{
	int rc = 0;

	if (src->listen)
		rc |= cfg_set(cfg, "--listen", "daemon", "listen", src->listen, diag);
	if (src->state_dir)
		rc |= cfg_set(cfg, "--state-dir", "daemon", "state_dir", src->state_dir, diag);
	if (src->log_level)
		rc |= cfg_set(cfg, "--log-level", "daemon", "log_level", src->log_level, diag);
	return rc;
}

int sbce_config_check_overrides(const struct sbce_config_source *src, struct cfg_diag *diag)
{
	struct cfg *cfg = cfg_create();
	int rc;

	if (!cfg)
		return -1; /* nothing in diag: the caller says out of memory */
	rc = apply_overrides(cfg, src, diag);
	cfg_free(cfg);
	return rc;
}

/* Copies a change (its values are freed after the call; names point into configurations that stay). */
static void collect(void *arg, const struct cfg_change *c)
{
	struct reload *r = arg;
	struct cfg_change *grown = realloc(r->changes, (r->count + 1) * sizeof(*grown));

	if (!grown) {
		r->out_of_memory = true;
		return;
	}
	r->changes = grown;
	grown[r->count] = *c;
	grown[r->count].old_value = c->old_value ? strdup(c->old_value) : NULL;
	grown[r->count].new_value = c->new_value ? strdup(c->new_value) : NULL;
	r->count++;
}

struct cfg *sbce_config_read(const struct sbce_config_source *src, struct cfg_diag *diag)
{
	struct cfg *cfg = cfg_create();
	int rc;

	if (!cfg)
		return NULL;
	if (src->path)
		rc = cfg_parse_file(cfg, src->path, diag);
	else
		rc = cfg_parse_string(cfg, "default configuration", cfg_default_ini, diag);
	rc |= apply_overrides(cfg, src, diag);
	if (rc == 0)
		rc = cfg_finish(cfg, diag);
	if (rc == 0)
		rc = sbce_check_luns(cfg, diag);
	if (rc != 0) {
		cfg_free(cfg);
		return NULL;
	}
	return cfg;
}

/* Logs each of diag's messages ("file:line: section.key: reason", one per line). */
static void log_errors(const char *why, const struct cfg_diag *diag)
{
	const char *text = diag->text ? diag->text : "";

	while (*text) {
		size_t n = strcspn(text, "\n");

		sbce_error("%s: %.*s", why, (int)n, text);
		text += n + (text[n] == '\n');
	}
}

/* Applies what differs between the running configuration and next. */
static void reload(struct sbce_daemon *d, const char *why, const struct cfg *next, struct sbce_reload_counts *counts)
{
	struct reload r = { .d = d, .why = why, .next = next };

	cfg_diff(d->cfg, next, collect, &r);
	if (r.out_of_memory)
		sbce_error("%s: out of memory: nothing changed", why);
	for (size_t i = 0; i < r.count; i++) {
		if (!r.out_of_memory)
			apply(&r, &r.changes[i]);
		free((char *)r.changes[i].old_value);
		free((char *)r.changes[i].new_value);
	}
	free(r.changes);
	if (!r.out_of_memory)
		sbce_info("%s: %u change%s applied, %u at the next start, %u refused", why, r.applied,
			  r.applied == 1 ? "" : "s", r.at_restart, r.refused);
	if (counts)
		*counts = (struct sbce_reload_counts){ r.applied, r.at_restart, r.refused };
}

int sbce_reload_file(struct sbce_daemon *d, const char *why, bool remove_all, struct sbce_reload_counts *counts,
		     char *err, size_t errlen)
{
	const char *path = d->source ? d->source->path : NULL;
	struct cfg_diag diag = { 0 };
	struct cfg *next;

	if (!path) {
		snprintf(err, errlen, "running on the embedded default configuration: no file to reload");
		return -1;
	}
	next = sbce_config_read(d->source, &diag);
	if (!next) {
		log_errors(why, &diag);
		cfg_diag_free(&diag);
		sbce_error("%s: %s does not load: nothing changed", why, path);
		snprintf(err, errlen, "%s does not load (its errors are in the log): nothing changed", path);
		return -1;
	}
	cfg_diag_free(&diag);
	/* An emptied or truncated file would take every target away: only when asked for. */
	if (next->target_count == 0 && d->device_count > 0 && !remove_all) {
		sbce_error("%s: %s has no target: refusing to remove every running target (sbcemuctl reload "
			   "--remove-all-targets does that); nothing changed", why, path);
		snprintf(err, errlen, "%s has no target: refusing to remove every running target (--remove-all-targets "
			 "does that); nothing changed", path);
		cfg_free(next);
		return -1;
	}
	sbce_info("%s: reloading %s", why, path);
	reload(d, why, next, counts);
	cfg_free(next);
	return 0;
}
