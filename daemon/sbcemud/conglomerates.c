/*
 * Conglomerates in the daemon (docs/conglomerate.md): the subsidiaries and
 * bindings a configuration names, the opener that makes a subsidiary's LU
 * from the administrative LU's template the first time it is used, and the
 * texts that record the running state for save (the SCSI core keeps the
 * state itself: protocol/scsi/core/conglomerate.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbcemud.h"

/* The target index of dev, or -1. */
static int device_index(const struct sbce_daemon *d, const struct scsi_device *dev)
{
	for (size_t i = 0; i < d->device_count; i++)
		if (d->devices[i] == dev)
			return (int)i;
	return -1;
}

const struct cfg_lun *sbce_config_lun(const struct cfg_target *t, uint32_t lun)
{
	for (size_t k = 0; k < t->lun_count; k++)
		if (t->luns[k]->lun == lun)
			return t->luns[k];
	return NULL;
}

/*
 * The configuration of subsidiary element of the administrative LU admin of
 * target t: the template's keys, its backing file sub<E>.img and its state
 * in sub<E>/ under the administrative LU's state directory, its serial
 * number the administrative LU's with "-<E>".
 */
int sbce_subsidiary_config(const struct cfg *cfg, const struct cfg_target *t, const struct cfg_lun *admin,
			   uint16_t element, struct cfg_lun *out, char *state_dir, size_t state_len, char *err,
			   size_t errlen)
{
	const struct cfg_lun *tpl = cfg_find_template(cfg, admin->subsidiary_template);
	char admin_dir[CFG_PATH_MAX + 2 * CFG_NAME_MAX];
	int n;

	if (!tpl) {
		snprintf(err, errlen, "LUN %u has no subsidiary_template (or its [lu] section is gone)", admin->lun);
		return -1;
	}
	*out = *tpl;
	out->template_name[0] = '\0';
	out->lun = scsi_subsidiary_lun(admin->lun, element);
	sbce_lu_state_dir(cfg, t, admin, admin_dir, sizeof(admin_dir));
	n = snprintf(out->path, sizeof(out->path), "%s/sub%u.img", admin_dir, element);
	if (n < 0 || (size_t)n >= sizeof(out->path) ||
	    (size_t)snprintf(state_dir, state_len, "%s/sub%u", admin_dir, element) >= state_len) {
		snprintf(err, errlen, "the state directory path is too long");
		return -1;
	}
	snprintf(out->serial, sizeof(out->serial), "%.26s-%X", admin->serial, element);
	return 0;
}

/* scsi_subsidiary_open_fn: the subsidiary's LU, made when a bound initiator first uses it. */
static struct scsi_lu *open_subsidiary(void *arg, struct scsi_device *dev, uint32_t admin_lun, uint16_t element,
				       char *err, size_t errlen)
{
	struct sbce_daemon *d = arg;
	int i = device_index(d, dev);
	char who[CFG_NAME_MAX + 48], state_dir[CFG_PATH_MAX + 2 * CFG_NAME_MAX + 16];
	const struct cfg_lun *al;
	struct cfg_lun sub;

	if (i < 0 || !(al = sbce_config_lun(d->cfg->targets[i], admin_lun))) {
		snprintf(err, errlen, "the administrative LU is not in the configuration");
		return NULL;
	}
	snprintf(who, sizeof(who), "target %s LUN %u/%u", d->cfg->targets[i]->name, admin_lun, element);
	if (sbce_subsidiary_config(d->cfg, d->cfg->targets[i], al, element, &sub, state_dir, sizeof(state_dir), err,
				   errlen) != 0 ||
	    sbce_lu_open(d, dev, &sub, who, state_dir, err, errlen) != 0) {
		sbce_log_ratelimited(&d->backing_error_limit, SBCE_LOG_ERROR,
				     "%s: cannot open the subsidiary LU (commands get 02/04/03 until it opens): %s", who,
				     err);
		return NULL;
	}
	sbce_info("%s: opened on first use", who);
	return scsi_device_lu(dev, sub.lun);
}

void sbce_conglomerate_device(struct sbce_daemon *d, struct scsi_device *dev)
{
	scsi_device_set_subsidiary_opener(dev, open_subsidiary, d);
}

struct apply {
	struct scsi_lu *admin;
	char *err;
	size_t errlen;
};

static int create_range(void *arg, uint32_t first, uint32_t last)
{
	struct apply *a = arg;

	for (uint32_t e = first; e <= last; e++)
		if (scsi_subsidiary_create(a->admin, (uint16_t)e, a->err, a->errlen) != 0)
			return -1;
	return 0;
}

static int bind_range(void *arg, const char *initiator, uint32_t first, uint32_t last)
{
	struct apply *a = arg;

	for (uint32_t e = first; e <= last; e++)
		if (scsi_subsidiary_bind(a->admin, (uint16_t)e, initiator, a->err, a->errlen) != 0)
			return -1;
	return 0;
}

int sbce_conglomerate_apply(struct scsi_lu *admin, const struct cfg_lun *l, char *err, size_t errlen)
{
	struct apply a = { .admin = admin, .err = err, .errlen = errlen };
	char why[256];

	if (cfg_zone_list_walk(l->subsidiaries, create_range, &a, why, sizeof(why)) != 0 ||
	    cfg_bindings_walk(l->bindings, bind_range, &a, why, sizeof(why)) != 0)
		return -1;
	return 0;
}

/* ---- the running state as configuration text (save; sbcemuctl subsidiaries) ---- */

/* Appends "a-b" or "a" to buf, with ", " between items. */
static void append_range(char *buf, size_t len, uint32_t a, uint32_t b)
{
	size_t used = strlen(buf);

	if (used + 1 >= len)
		return;
	if (a == b)
		snprintf(buf + used, len - used, "%s%u", used ? ", " : "", a);
	else
		snprintf(buf + used, len - used, "%s%u-%u", used ? ", " : "", a, b);
}

void sbce_subsidiaries_text(const struct scsi_lu *admin, char *buf, size_t len)
{
	struct scsi_subsidiary_info info[256];
	uint32_t run_first = 0, run_last = 0;
	uint16_t next = 1;
	size_t n;

	buf[0] = '\0';
	while ((n = scsi_subsidiary_list(admin, next, info, 256)) > 0) {
		for (size_t i = 0; i < n; i++) {
			uint32_t e = info[i].element;

			if (run_first && e == run_last + 1) {
				run_last = e;
				continue;
			}
			if (run_first)
				append_range(buf, len, run_first, run_last);
			run_first = run_last = e;
		}
		if (info[n - 1].element >= SCSI_MAX_LUN)
			break;
		next = (uint16_t)(info[n - 1].element + 1);
	}
	if (run_first)
		append_range(buf, len, run_first, run_last);
}

struct bindings_text {
	char names[64][224];
	char lists[64][CFG_ELEMENT_LIST_MAX];
	uint32_t last[64], first[64];
	unsigned count;
	uint16_t element;
};

static void note_binding(void *arg, const char *initiator)
{
	struct bindings_text *bt = arg;
	unsigned i;

	for (i = 0; i < bt->count; i++)
		if (strcmp(bt->names[i], initiator) == 0)
			break;
	if (i == bt->count) {
		if (bt->count == 64)
			return;
		snprintf(bt->names[i], sizeof(bt->names[i]), "%s", initiator);
		bt->lists[i][0] = '\0';
		bt->first[i] = bt->last[i] = 0;
		bt->count++;
	}
	if (bt->first[i] && bt->element == bt->last[i] + 1) {
		bt->last[i] = bt->element;
		return;
	}
	if (bt->first[i])
		append_range(bt->lists[i], sizeof(bt->lists[i]), bt->first[i], bt->last[i]);
	bt->first[i] = bt->last[i] = bt->element;
}

int sbce_bindings_text(const struct scsi_lu *admin, char *buf, size_t len)
{
	struct bindings_text *bt = calloc(1, sizeof(*bt));
	struct scsi_subsidiary_info info[256];
	uint16_t next = 1;
	size_t n;

	if (!bt)
		return -1;
	buf[0] = '\0';
	while ((n = scsi_subsidiary_list(admin, next, info, 256)) > 0) {
		for (size_t i = 0; i < n; i++) {
			if (!info[i].binding_count)
				continue;
			bt->element = info[i].element;
			scsi_subsidiary_bindings(admin, info[i].element, note_binding, bt);
		}
		if (info[n - 1].element >= SCSI_MAX_LUN)
			break;
		next = (uint16_t)(info[n - 1].element + 1);
	}
	for (unsigned i = 0; i < bt->count; i++) {
		size_t used = strlen(buf);

		append_range(bt->lists[i], sizeof(bt->lists[i]), bt->first[i], bt->last[i]);
		snprintf(buf + used, len - used, "%s%s=%s", used ? "; " : "", bt->names[i], bt->lists[i]);
	}
	free(bt);
	return 0;
}

/* The texts of admin's subsidiaries and bindings, malloc'd (large enough for any); false when out of memory. */
static bool running_texts(const struct scsi_lu *admin, char **subs, char **binds)
{
	const size_t cap = 8 * (SCSI_MAX_LUN + 1) + 64 * 256;

	*subs = malloc(cap);
	*binds = malloc(cap);
	if (!*subs || !*binds || sbce_bindings_text(admin, *binds, cap) != 0) {
		free(*subs);
		free(*binds);
		return false;
	}
	sbce_subsidiaries_text(admin, *subs, cap);
	return true;
}

/* Whether both texts fit their keys; else why in err. */
static bool texts_fit(uint32_t lun, const char *subs, const char *binds, char *err, size_t errlen)
{
	const char *key = strlen(subs) >= CFG_ELEMENT_LIST_MAX ? "subsidiaries" : "bindings";

	if (strlen(subs) < CFG_ELEMENT_LIST_MAX && strlen(binds) < CFG_BINDINGS_MAX)
		return true;
	snprintf(err, errlen, "LUN %u: its %s (%zu characters) no longer fit one configuration line (at most %d); "
		 "create and bind subsidiaries in ranges (1-100) so that save can write them", lun, key,
		 strlen(key[0] == 's' ? subs : binds), key[0] == 's' ? CFG_ELEMENT_LIST_MAX - 1 : CFG_BINDINGS_MAX - 1);
	return false;
}

void sbce_conglomerate_track(struct sbce_daemon *d, size_t i, const struct scsi_lu *admin, uint32_t lun)
{
	char *subs, *binds, why[256];

	if (!running_texts(admin, &subs, &binds))
		return;
	if (texts_fit(lun, subs, binds, why, sizeof(why))) {
		sbce_lu_track(d, d->cfg->targets[i]->name, lun, "subsidiaries", subs);
		sbce_lu_track(d, d->cfg->targets[i]->name, lun, "bindings", binds);
	} else {
		sbce_warn("target %s %s: `sbcemuctl save` refuses until they do", d->cfg->targets[i]->name, why);
	}
	free(subs);
	free(binds);
}

int sbce_conglomerates_saveable(const struct sbce_daemon *d, char *err, size_t errlen)
{
	for (size_t i = 0; i < d->device_count; i++) {
		const struct cfg_target *t = d->cfg->targets[i];

		for (size_t k = 0; k < t->lun_count; k++) {
			struct scsi_lu *admin = scsi_device_lu(d->devices[i], t->luns[k]->lun);
			char *subs, *binds;
			bool fit;

			if (t->luns[k]->kind != CFG_LU_CONGLOMERATE || !admin)
				continue;
			if (!running_texts(admin, &subs, &binds)) {
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			fit = texts_fit(t->luns[k]->lun, subs, binds, err, errlen);
			free(subs);
			free(binds);
			if (!fit)
				return -1;
		}
	}
	return 0;
}

/* ---- reload: the running conglomerate made what the configuration says ---- */

#define ELEMENT_WORDS ((SCSI_MAX_LUN + 1) / 64)

struct wanted {
	uint64_t subsidiaries[ELEMENT_WORDS];
	struct wanted_group {
		char initiator[224];
		uint64_t bits[ELEMENT_WORDS];
	} *groups;
	size_t group_count;
	/* bindings the LU has that the configuration does not want, collected, then undone */
	struct {
		char initiator[224];
		uint16_t element;
	} *stale;
	size_t stale_count, stale_cap;
	uint16_t element;
	bool out_of_memory;
};

static bool has(const uint64_t *bits, uint32_t e)
{
	return (bits[e / 64] >> (e % 64)) & 1;
}

static int want_subsidiaries(void *arg, uint32_t first, uint32_t last)
{
	struct wanted *w = arg;

	for (uint32_t e = first; e <= last; e++)
		w->subsidiaries[e / 64] |= 1ull << (e % 64);
	return 0;
}

static struct wanted_group *wanted_group(struct wanted *w, const char *initiator, bool add)
{
	struct wanted_group *g;

	for (size_t i = 0; i < w->group_count; i++)
		if (strcmp(w->groups[i].initiator, initiator) == 0)
			return &w->groups[i];
	if (!add)
		return NULL;
	g = realloc(w->groups, (w->group_count + 1) * sizeof(*g));
	if (!g)
		return NULL;
	w->groups = g;
	g = &w->groups[w->group_count++];
	memset(g, 0, sizeof(*g));
	snprintf(g->initiator, sizeof(g->initiator), "%s", initiator);
	return g;
}

static int want_binding(void *arg, const char *initiator, uint32_t first, uint32_t last)
{
	struct wanted *w = arg;
	char name[224];
	struct wanted_group *g;

	snprintf(name, sizeof(name), "%s", initiator);
	for (char *p = name; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	if (!(g = wanted_group(w, name, true)))
		return -1;
	for (uint32_t e = first; e <= last; e++)
		g->bits[e / 64] |= 1ull << (e % 64);
	return 0;
}

static void note_stale(void *arg, const char *initiator)
{
	struct wanted *w = arg;
	const struct wanted_group *g = wanted_group(w, initiator, false);

	if (g && has(g->bits, w->element))
		return;
	if (w->stale_count == w->stale_cap) {
		size_t cap = w->stale_cap ? 2 * w->stale_cap : 64;
		void *p = realloc(w->stale, cap * sizeof(*w->stale));

		if (!p) {
			w->out_of_memory = true;
			return;
		}
		w->stale = p;
		w->stale_cap = cap;
	}
	snprintf(w->stale[w->stale_count].initiator, sizeof(w->stale[0].initiator), "%s", initiator);
	w->stale[w->stale_count++].element = w->element;
}

/* What reconcile does, step by step, with the first refusal kept in err. */
static void step(int rc, unsigned *changes, unsigned *refusals)
{
	if (rc == 0)
		++*changes;
	else
		++*refusals;
}

int sbce_conglomerate_reconcile(struct scsi_lu *admin, const struct cfg_lun *l, unsigned *changes, char *err,
				size_t errlen)
{
	struct wanted *w = calloc(1, sizeof(*w));
	struct scsi_subsidiary_info info[256];
	char why[256], first_err[256] = "";
	unsigned refusals = 0;
	uint16_t next;
	size_t n;

	*changes = 0;
	if (!w || cfg_zone_list_walk(l->subsidiaries, want_subsidiaries, w, why, sizeof(why)) != 0 ||
	    cfg_bindings_walk(l->bindings, want_binding, w, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "out of memory");
		free(w);
		return -1;
	}
	/* 1. subsidiaries the configuration adds */
	for (uint32_t e = 1; e <= SCSI_MAX_LUN; e++) {
		struct scsi_subsidiary_info one;

		if (has(w->subsidiaries, e) &&
		    !(scsi_subsidiary_list(admin, (uint16_t)e, &one, 1) == 1 && one.element == e))
			step(scsi_subsidiary_create(admin, (uint16_t)e, first_err[0] ? why : first_err, sizeof(why)),
			     changes, &refusals);
	}
	/* 2. bindings it takes away, then those it adds */
	for (next = 1; (n = scsi_subsidiary_list(admin, next, info, 256)) > 0; next = (uint16_t)(info[n - 1].element + 1)) {
		for (size_t i = 0; i < n; i++) {
			w->element = info[i].element;
			scsi_subsidiary_bindings(admin, info[i].element, note_stale, w);
		}
		if (info[n - 1].element >= SCSI_MAX_LUN)
			break;
	}
	for (size_t i = 0; i < w->stale_count; i++)
		step(scsi_subsidiary_unbind(admin, w->stale[i].element, w->stale[i].initiator,
					    first_err[0] ? why : first_err, sizeof(why)),
		     changes, &refusals);
	for (size_t g = 0; g < w->group_count; g++) {
		for (uint32_t e = 1; e <= SCSI_MAX_LUN; e++) {
			if (!has(w->groups[g].bits, e))
				continue;
			if (scsi_subsidiary_bind(admin, (uint16_t)e, w->groups[g].initiator, why, sizeof(why)) == 0)
				++*changes; /* "already bound" is no change */
		}
	}
	/* 3. subsidiaries it takes away (refused while bound or busy) */
	for (next = 1; (n = scsi_subsidiary_list(admin, next, info, 256)) > 0; next = (uint16_t)(info[n - 1].element + 1)) {
		for (size_t i = 0; i < n; i++)
			if (!has(w->subsidiaries, info[i].element))
				step(scsi_subsidiary_destroy(admin, info[i].element, first_err[0] ? why : first_err,
							     sizeof(why)),
				     changes, &refusals);
		if (info[n - 1].element >= SCSI_MAX_LUN)
			break;
	}
	if (w->out_of_memory && !refusals++)
		snprintf(first_err, sizeof(first_err), "out of memory");
	free(w->groups);
	free(w->stale);
	free(w);
	if (refusals)
		snprintf(err, errlen, "%u change(s) refused, the first: %s", refusals, first_err);
	return refusals ? -1 : 0;
}
