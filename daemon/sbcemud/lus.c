/*
 * Logical units added to and removed from a running target (docs/control.md,
 * lu-add and lu-remove; a reload does the same, reload.c), and run-time
 * changes of an LU's keys recorded in the running configuration (d->cfg),
 * so that `lus`, save and the other commands see what the target serves.
 */
#include <stdio.h>
#include <string.h>

#include "sbcemud.h"

const char *sbce_path_user(const struct sbce_daemon *d, const char *path)
{
	if (!path[0]) /* a conglomerate's administrative LU has no backing file */
		return NULL;
	for (size_t i = 0; i < d->cfg->target_count; i++)
		for (size_t k = 0; k < d->cfg->targets[i]->lun_count; k++)
			if (strcmp(d->cfg->targets[i]->luns[k]->path, path) == 0)
				return d->cfg->targets[i]->name;
	return NULL;
}

const char *sbce_image_user(const struct sbce_daemon *d, const struct cfg_lun *l)
{
	if (l->backend != CFG_BACKEND_RBD)
		return NULL;
	for (size_t i = 0; i < d->cfg->target_count; i++)
		for (size_t k = 0; k < d->cfg->targets[i]->lun_count; k++) {
			const struct cfg_lun *o = d->cfg->targets[i]->luns[k];

			if (o->backend == CFG_BACKEND_RBD && !strcmp(o->rbd_pool, l->rbd_pool) &&
			    !strcmp(o->rbd_image, l->rbd_image) && !strcmp(o->ceph_conf, l->ceph_conf))
				return d->cfg->targets[i]->name;
		}
	return NULL;
}

const char *sbce_lu_backing(const struct cfg_lun *l, char *buf, size_t len)
{
	if (l->backend != CFG_BACKEND_RBD)
		return l->path;
	snprintf(buf, len, "rbd:%s/%s", l->rbd_pool, l->rbd_image);
	return buf;
}

int sbce_lu_add(struct sbce_daemon *d, size_t i, const struct cfg_lun *l, const char *why, char *err, size_t errlen)
{
	struct cfg_target *t = d->cfg->targets[i];
	char state_dir[CFG_PATH_MAX + 2 * CFG_NAME_MAX], who[CFG_NAME_MAX + 32];
	char backing[2 * CFG_RBD_NAME_MAX + 8];
	const char *user;

	if (scsi_device_find_lu(d->devices[i], scsi_lun_encode(l->lun))) {
		snprintf(err, errlen, "target %s already has LUN %u", t->name, l->lun);
		return -1;
	}
	if ((user = sbce_path_user(d, l->path))) {
		snprintf(err, errlen, "%s is already the backing file of an LU of %s", l->path, user);
		return -1;
	}
	if ((user = sbce_image_user(d, l))) {
		snprintf(err, errlen, "rbd image %s/%s is already the image of an LU of %s", l->rbd_pool, l->rbd_image,
			 user);
		return -1;
	}
	sbce_lu_state_dir(d->cfg, t, l, state_dir, sizeof(state_dir));
	snprintf(who, sizeof(who), "target %s LUN %u", t->name, l->lun);
	if (sbce_lu_open(d, d->devices[i], l, who, state_dir, err, errlen) != 0)
		return -1;
	if (cfg_target_add_lun(t, l) != 0) {
		char ignored[64];

		scsi_lu_remove(d->devices[i], l->lun, ignored, sizeof(ignored));
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	sbce_info("%s: %s added (%s, %s)", why, who, cfg_lu_kind_name(l->kind),
		  sbce_lu_backing(l, backing, sizeof(backing)));
	return 0;
}

int sbce_lu_remove(struct sbce_daemon *d, size_t i, uint32_t lun, bool force, const char *why, unsigned *ended,
		   char *err, size_t errlen)
{
	struct scsi_lu *lu = scsi_device_find_lu(d->devices[i], scsi_lun_encode(lun));
	struct scsi_lu_info info;

	if (!lu) {
		snprintf(err, errlen, "target %s has no LUN %u", d->cfg->targets[i]->name, lun);
		return -1;
	}
	scsi_lu_describe(lu, &info);
	if (info.commands && !force) {
		snprintf(err, errlen, "%u commands are in the LU's task set (force ends them)", info.commands);
		return -1;
	}
	/* SPC-4 4.6.3: what reaches a LUN without an LU; running I/O cannot be cut short, so it must be done. */
	if (info.commands && scsi_lu_end_commands(lu, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_UNIT_NOT_SUPPORTED) != 0) {
		snprintf(err, errlen, "commands of the LU are running I/O; try again");
		return -1;
	}
	if (scsi_lu_remove(d->devices[i], lun, err, errlen) != 0)
		return -1;
	cfg_target_remove_lun(d->cfg->targets[i], lun);
	sbce_info("%s: target %s LUN %u removed%s", why, d->cfg->targets[i]->name, lun,
		  info.commands ? " (its commands ended with 05/25/00)" : "");
	*ended = info.commands;
	return 0;
}

void sbce_lu_track(struct sbce_daemon *d, const char *target, uint32_t lun, const char *key, const char *text)
{
	struct cfg_diag diag = { 0 };
	char section[CFG_NAME_MAX + 32];

	if (sbce_target_index(d, target) < 0)
		return;
	snprintf(section, sizeof(section), "lun \"%s\" %u", target, lun);
	if (cfg_set(d->cfg, "sbcemuctl", section, key, text, &diag) != 0)
		sbce_warn("%s LUN %u: %s = %s not kept for save: %s", target, lun, key, text,
			  diag.text ? diag.text : "");
	cfg_diag_free(&diag);
}

/* ---- the latency statistics at shutdown (docs/latency.md) ---- */

/* "T2A descriptor 1: 3 commands, missed inactive 0 active 1 guideline 0; policies abort 1" */
static void log_descriptor(const struct sbce_lu_ref *ref, uint32_t lun, int page, int k,
			   const struct scsi_cdl_descriptor_summary *s)
{
	static const char *const policies[16] = { [0x0] = "complete-earliest", [0x1] = "continue-next-limit",
						  [0x2] = "continue-no-limit", [0xd] = "complete-unavailable",
						  [0xe] = "abort-recovery", [0xf] = "abort" };
	char acts[256] = "";
	size_t n = 0;

	if (!s->commands)
		return;
	for (unsigned c = 0; c < 16 && n < sizeof(acts); c++)
		if (s->policy_actions[c] && policies[c])
			n += (size_t)snprintf(acts + n, sizeof(acts) - n, " %s %llu", policies[c],
					      (unsigned long long)s->policy_actions[c]);
	sbce_info("stats: %s %s LUN %u: %s descriptor %d: %llu command%s, missed inactive %llu active %llu "
		  "guideline %llu; policies%s",
		  ref->frontend ? ref->frontend : "target", ref->owner, lun, page ? "T2B" : "T2A", k + 1,
		  (unsigned long long)s->commands, s->commands == 1 ? "" : "s", (unsigned long long)s->inactive_miss,
		  (unsigned long long)s->active_miss, (unsigned long long)s->guideline_miss, n ? acts : " none");
}

static void log_lu_stats(void *arg, const struct sbce_lu_ref *ref)
{
	struct scsi_lu_stats st;
	struct scsi_lu_info info;
	uint64_t inactive = 0, active = 0, guideline = 0;

	(void)arg;
	scsi_lu_get_stats(ref->lu, &st);
	if (!st.total.count)
		return;
	scsi_lu_describe(ref->lu, &info);
	for (int p = 0; p < 2; p++)
		for (int k = 0; k < 7; k++) {
			inactive += st.descriptor[p][k].inactive_miss;
			active += st.descriptor[p][k].active_miss;
			guideline += st.descriptor[p][k].guideline_miss;
		}
	sbce_info("stats: %s %s LUN %u: %llu commands in %llu s; queued us p50 %llu p99 %llu max %llu; "
		  "active us p50 %llu p99 %llu max %llu",
		  ref->frontend ? ref->frontend : "target", ref->owner, info.lun, (unsigned long long)st.total.count,
		  (unsigned long long)(st.elapsed_ns / 1000000000ull), (unsigned long long)(st.queued.p50_ns / 1000),
		  (unsigned long long)(st.queued.p99_ns / 1000), (unsigned long long)(st.queued.max_ns / 1000),
		  (unsigned long long)(st.active.p50_ns / 1000), (unsigned long long)(st.active.p99_ns / 1000),
		  (unsigned long long)(st.active.max_ns / 1000));
	if (!st.cdl)
		return;
	sbce_info("stats: %s %s LUN %u: duration limits missed: inactive %llu, active %llu, guideline %llu; "
		  "GOOD with sense %llu",
		  ref->frontend ? ref->frontend : "target", ref->owner, info.lun, (unsigned long long)inactive,
		  (unsigned long long)active, (unsigned long long)guideline, (unsigned long long)st.good_with_sense);
	for (int p = 0; p < 2; p++)
		for (int k = 0; k < 7; k++)
			log_descriptor(ref, info.lun, p, k, &st.descriptor[p][k]);
}

void sbce_log_stats(struct sbce_daemon *d)
{
	sbce_foreach_lu(d, log_lu_stats, NULL);
}
