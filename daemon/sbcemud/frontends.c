/*
 * The front ends sbcemud runs (frontend.h): the registry their constructors
 * fill, starting them, and what the daemon and its runtime control ask of
 * them all (sessions, their own LUs, targets added and removed, a power
 * cut).  Nothing here, nor anywhere else in the daemon, names a front end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbcemud.h"

#define FRONTENDS_MAX 8

static const struct sbce_frontend_ops *registered[FRONTENDS_MAX];
static size_t registered_count;

void sbce_frontend_register(const struct sbce_frontend_ops *ops)
{
	size_t i = registered_count;

	if (registered_count == FRONTENDS_MAX) {
		fprintf(stderr, "sbcemud: more than %d front ends registered; %s left out\n", FRONTENDS_MAX, ops->name);
		return;
	}
	/* Name order: the start order does not depend on the order the linker ran the constructors in. */
	for (; i > 0 && strcmp(registered[i - 1]->name, ops->name) > 0; i--)
		registered[i] = registered[i - 1];
	registered[i] = ops;
	registered_count++;
}

int sbce_frontends_start(struct sbce_daemon *d)
{
	d->frontends = calloc(registered_count ? registered_count : 1, sizeof(*d->frontends));
	if (!d->frontends) {
		sbce_error("out of memory");
		return -1;
	}
	for (size_t i = 0; i < registered_count; i++) {
		struct daemon_frontend *fe = &d->frontends[d->frontend_count];
		int rc;

		fe->ops = registered[i];
		rc = fe->ops->start(d, &fe->state);
		if (rc < 0) {
			d->frontend_count++; /* drained and destroyed with the others */
			return -1;
		}
		if (rc == 0)
			d->frontend_count++;
		else
			fe->ops->destroy(fe->state);
	}
	return 0;
}

/* ---- sessions ---- */

struct session_walk {
	void (*fn)(void *arg, const char *frontend, const struct sbce_session *s);
	void *arg;
	const char *frontend;
};

static void each_session(void *arg, const struct sbce_session *s)
{
	struct session_walk *w = arg;

	w->fn(w->arg, w->frontend, s);
}

void sbce_foreach_session(struct sbce_daemon *d,
			  void (*fn)(void *arg, const char *frontend, const struct sbce_session *s), void *arg)
{
	for (size_t i = 0; i < d->frontend_count; i++) {
		const struct sbce_frontend_ops *ops = d->frontends[i].ops;
		struct session_walk w = { fn, arg, ops->name };

		if (ops->foreach_session)
			ops->foreach_session(d->frontends[i].state, each_session, &w);
	}
}

/* ---- targets ---- */

int sbce_frontends_target_added(struct sbce_daemon *d, const struct cfg_target *t, struct scsi_device *dev,
				char *err, size_t errlen)
{
	for (size_t i = 0; i < d->frontend_count; i++) {
		const struct sbce_frontend_ops *ops = d->frontends[i].ops;

		if (!ops->target_added || ops->target_added(d->frontends[i].state, t, dev, err, errlen) == 0)
			continue;
		/* The ones told already let it go again. */
		while (i-- > 0)
			if (d->frontends[i].ops->target_removed)
				d->frontends[i].ops->target_removed(d->frontends[i].state, t->name, "target not added");
		return -1;
	}
	return 0;
}

int sbce_frontends_target_access_changed(struct sbce_daemon *d, const struct cfg_target *t, char *err, size_t errlen)
{
	for (size_t i = 0; i < d->frontend_count; i++) {
		const struct sbce_frontend_ops *ops = d->frontends[i].ops;

		if (ops->target_access_changed && ops->target_access_changed(d->frontends[i].state, t, err, errlen) != 0)
			return -1;
	}
	return 0;
}

int sbce_frontends_portal_changed(struct sbce_daemon *d, const char *addr, bool add, char *err, size_t errlen)
{
	unsigned done = 0;

	for (size_t i = 0; i < d->frontend_count; i++) {
		const struct sbce_frontend_ops *ops = d->frontends[i].ops;

		if (!ops->portal_changed)
			continue;
		if (ops->portal_changed(d->frontends[i].state, addr, add, err, errlen) != 0)
			return -1;
		done++;
	}
	if (!done) {
		snprintf(err, errlen, "no running front end listens on portals");
		return -1;
	}
	return 0;
}

/* Every front end drops the connections to target name, taking the target away too when removed. */
static unsigned drop(struct sbce_daemon *d, bool removed, const char *name, const char *why)
{
	unsigned dropped = 0;

	for (size_t i = 0; i < d->frontend_count; i++) {
		const struct sbce_frontend_ops *ops = d->frontends[i].ops;
		unsigned (*fn)(void *state, const char *name, const char *why) =
			removed ? ops->target_removed : ops->drop_connections;

		if (fn)
			dropped += fn(d->frontends[i].state, name, why);
	}
	return dropped;
}

unsigned sbce_frontends_target_removed(struct sbce_daemon *d, const char *name, const char *why)
{
	return drop(d, true, name, why);
}

unsigned sbce_frontends_drop_connections(struct sbce_daemon *d, const char *name, const char *why)
{
	return drop(d, false, name, why);
}

/* ---- LUs ---- */

bool sbce_frontend_has_lus(const struct sbce_daemon *d, const char *name)
{
	for (size_t i = 0; i < d->frontend_count; i++)
		if (d->frontends[i].ops->foreach_lu && strcmp(d->frontends[i].ops->name, name) == 0)
			return true;
	return false;
}

struct lu_walk {
	void (*fn)(void *arg, const struct sbce_lu_ref *ref);
	void *arg;
	const char *frontend;
};

static void each_frontend_lu(void *arg, const struct sbce_frontend_lu *l)
{
	struct lu_walk *w = arg;
	struct sbce_lu_ref ref = {
		.frontend = w->frontend, .owner = l->name, .target = -1, .path = l->path, .lu = l->lu,
	};

	w->fn(w->arg, &ref);
}

/* The configuration of LUN lun of target t, or NULL. */
static const struct cfg_lun *target_lun(const struct cfg_target *t, uint32_t lun)
{
	for (size_t k = 0; k < t->lun_count; k++)
		if (t->luns[k]->lun == lun)
			return t->luns[k];
	return NULL;
}

void sbce_foreach_lu(struct sbce_daemon *d, void (*fn)(void *arg, const struct sbce_lu_ref *ref), void *arg)
{
	for (size_t i = 0; i < d->device_count; i++) {
		const struct cfg_target *t = d->cfg->targets[i];

		uint32_t *ids;
		size_t count = scsi_device_lun_ids(d->devices[i], &ids);

		for (size_t k = 0; k < count; k++) {
			struct scsi_lu *lu = scsi_device_lu(d->devices[i], ids[k]);
			struct sbce_lu_ref ref = { .owner = t->name, .target = (int)i, .lu = lu };

			ref.cfg = target_lun(t, ids[k]);
			ref.path = ref.cfg ? ref.cfg->path : "";
			fn(arg, &ref);
		}
		free(ids);
	}
	for (size_t i = 0; i < d->frontend_count; i++) {
		const struct sbce_frontend_ops *ops = d->frontends[i].ops;
		struct lu_walk w = { fn, arg, ops->name };

		if (ops->foreach_lu)
			ops->foreach_lu(d->frontends[i].state, each_frontend_lu, &w);
	}
}

struct find_lu {
	const char *frontend, *name;
	struct scsi_lu *lu;
};

static void match_lu(void *arg, const struct sbce_lu_ref *ref)
{
	struct find_lu *f = arg;

	if (ref->frontend && strcmp(ref->frontend, f->frontend) == 0 && strcmp(ref->owner, f->name) == 0)
		f->lu = ref->lu;
}

struct scsi_lu *sbce_frontend_find_lu(struct sbce_daemon *d, const char *frontend, const char *name)
{
	struct find_lu f = { frontend, name, NULL };

	sbce_foreach_lu(d, match_lu, &f);
	return f.lu;
}

void sbce_frontends_describe(const struct sbce_daemon *d, void (*fn)(void *arg, const char *name, bool running),
			     void *arg)
{
	for (size_t i = 0; i < registered_count; i++) {
		bool running = false;

		for (size_t k = 0; k < d->frontend_count; k++)
			running |= d->frontends[k].ops == registered[i];
		fn(arg, registered[i]->name, running);
	}
}
