/*
 * SCSI target devices, logical units and I_T nexuses.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "media/media_model.h"
#include "media/media_queue.h"
#include "sched/task_set.h"
#include "spc/spc.h"
#include "zbc/zbc.h"

/*
 * SAM-5 4.7.4: peripheral device addressing (00b, bus 0) below 256, flat
 * space addressing (01b) above.  A subsidiary LU of a conglomerate (SPC-5
 * conglomerates, sg3_utils sg_luns decode_lun with LU_CONG = 1): the
 * administrative element in bytes 0-1 and the subsidiary element in bytes
 * 2-3, each simple logical unit addressing (00b, 14 bits); administrative
 * LUs are below 256, where the two first-level forms are the same bytes.
 */
uint64_t scsi_lun_encode(uint32_t lun)
{
	uint32_t admin = lun & 0xffff, sub = lun >> 16;

	if (sub)
		return ((uint64_t)(admin & 0x3fff) << 48) | ((uint64_t)(sub & 0x3fff) << 32);
	if (admin < 256)
		return (uint64_t)admin << 48;
	return ((uint64_t)(0x4000 | (admin & 0x3fff))) << 48;
}

bool scsi_lun_decode(uint64_t sam_lun, uint32_t *lun)
{
	uint16_t first = (uint16_t)(sam_lun >> 48), second = (uint16_t)(sam_lun >> 32);

	if (sam_lun & 0x00000000ffffffffull)
		return false;
	if (second) {
		/* A subsidiary element under an administrative one: both simple logical unit addressing. */
		if ((first & 0xff00) || (second & 0xc000) || !(second & 0x3fff))
			return false;
		*lun = first | (uint32_t)(second & 0x3fff) << 16;
		return true;
	}
	switch (first >> 14) {
	case 0: /* peripheral device addressing, bus 0 */
		if (first & 0x3f00)
			return false;
		*lun = first & 0xff;
		return true;
	case 1: /* flat space addressing */
		*lun = first & 0x3fff;
		return true;
	default:
		return false;
	}
}

struct scsi_device *scsi_device_create(const char *name, struct scsi_executor *executor,
				       struct scsi_resources *res)
{
	struct scsi_device *dev = calloc(1, sizeof(*dev));

	if (!dev)
		return NULL;
	snprintf(dev->name, sizeof(dev->name), "%s", name);
	dev->executor = executor ? executor : &scsi_executor_inline;
	scsi_resources_add_device(res, dev);
	return dev;
}

static void lu_destroy(struct scsi_lu *lu)
{
	if (lu->ts.waits_outside && lu->dev && lu->dev->res && lu->dev->res->lus_waiting)
		lu->dev->res->lus_waiting--; /* task_set.c counts the LUs that wait */
	scsi_conglomerate_forget(lu);
	scsi_media_queue_fini(lu);
	scsi_stats_fini(lu);
	scsi_fault_lu_fini(lu);
	spc_alua_fini(lu);
	pthread_mutex_destroy(&lu->fault_rules_lock);
	zbc_fini(lu);
	spc_log_fini(lu);
	spc_pr_peer_fini(lu);
	spc_pr_fini(lu);
	spc_mode_fini(lu);
	rod_tokens_free(lu);
	be_close(lu->backend);
	free(lu);
}

int scsi_lu_remove(struct scsi_device *dev, uint32_t lun, char *err, size_t errlen)
{
	struct scsi_lu *lu = scsi_device_lu(dev, lun);
	int rc;

	if (!lu) {
		snprintf(err, errlen, "no LUN %u", lun);
		return -1;
	}
	if (lu->ts.count) {
		snprintf(err, errlen, "%u commands are in the LU's task set", lu->ts.count);
		return -1;
	}
	if (lu->copy_readers) {
		snprintf(err, errlen, "%u copies on other LUs read or write its blocks", lu->copy_readers);
		return -1;
	}
	if (scsi_subsidiary_count(lu)) {
		snprintf(err, errlen, "the conglomerate has %u subsidiary LUs; destroy them first",
			 scsi_subsidiary_count(lu));
		return -1;
	}
	/* What it acknowledged stays (as at shutdown): the backend and the zone state made durable first. */
	rc = lu->backend->ops->flush(lu->backend);
	if (rc == 0 && lu->zbc)
		rc = zbc_flush(lu);
	if (rc != 0) {
		snprintf(err, errlen, "flushing its backing store failed (%s); the LU stays", strerror(-rc));
		return -1;
	}
	scsi_lu_map_remove(&dev->lus, lu);
	/*
	 * SPC-4 REPORT LUNS: the inventory changed, for every I_T nexus (3F/0E);
	 * a subsidiary LU goes only once no nexus may see it (conglomerate.c).
	 */
	for (struct scsi_nexus *n = dev->nexuses; n; n = n->next) {
		scsi_itl_drop(n, lun);
		if (!(lun >> 16))
			scsi_ua_establish(n, lun, SCSI_UA_REPORTED_LUNS_DATA_CHANGED);
	}
	lu_destroy(lu);
	return 0;
}

void scsi_device_destroy(struct scsi_device *dev)
{
	if (!dev)
		return;
	scsi_resources_remove_device(dev->res, dev);
	SCSI_DEVICE_FOREACH_LU(dev, lu) {
		scsi_lu_map_remove(&dev->lus, lu);
		lu_destroy(lu);
	}
	scsi_lu_map_fini(&dev->lus);
	free(dev);
}

/* ---- what a restart of the daemon keeps ---- */

/*
 * The file a clean flush leaves in the LU's state directory when nothing of
 * the LU lives only in memory; the next scsi_lu_create takes it away again
 * (a crash after that must not find it) and remembers that the state was
 * kept (scsi_nexus_continue).
 */
#define STATE_KEPT_FILE "state.kept"

/*
 * What a power on changes of an LU beyond its medium (SAM-5 6.3.3; SPC-4
 * 5.13 and 7.5): reservations and registrations without APTPL, current mode
 * values that were not saved, a prevented medium removal, open zones (ZBC-2:
 * they come back closed).  A volatile write cache holds nothing once the
 * device was flushed.
 */
static bool lu_has_volatile_state(const struct scsi_lu *lu)
{
	const struct spc_pr_state *pr = lu->pr;

	if (lu->prevent_count || (pr && !pr->aptpl && (pr->regs || pr->reserved)))
		return true;
	if (lu->mode && memcmp(lu->mode->current, lu->mode->saved, sizeof(lu->mode->current)) != 0)
		return true;
	return lu->zbc && (lu->zbc->nr_implicit_open || lu->zbc->nr_explicit_open);
}

/* ---- flushing a device (a clean shutdown) ---- */

struct device_flush {
	struct scsi_io_job job;
	struct scsi_lu *lu;
	struct device_flush_state *state;
	bool kept;              /* nothing of the LU lives only in memory: leave STATE_KEPT_FILE */
	int rc;
};

struct device_flush_state {
	unsigned pending;
	int err;
	void (*done)(void *arg, int err);
	void *arg;
};

/* Worker: the backend's completed writes, then the zone state file (SBC-4 SYNCHRONIZE CACHE's effect). */
static void flush_work(struct scsi_io_job *job)
{
	struct device_flush *f = (struct device_flush *)job;

	f->rc = f->lu->backend->ops->flush(f->lu->backend);
	if (f->rc == 0 && f->lu->zbc)
		f->rc = zbc_flush(f->lu);
	if (f->rc == 0 && f->kept) {
		char path[sizeof(f->lu->state_dir) + sizeof(STATE_KEPT_FILE) + 1];
		int fd;

		snprintf(path, sizeof(path), "%s/" STATE_KEPT_FILE, f->lu->state_dir);
		fd = be_state_open(path, O_WRONLY | O_CREAT | O_TRUNC);
		if (fd >= 0)
			close(fd); /* without it the next start reports a power on: no harm */
	}
}

static void flush_state_put(struct device_flush_state *st)
{
	if (--st->pending)
		return;
	st->done(st->arg, st->err);
	free(st);
}

static void flush_done(struct scsi_io_job *job)
{
	struct device_flush *f = (struct device_flush *)job;

	if (f->rc && !f->state->err)
		f->state->err = f->rc;
	flush_state_put(f->state);
	free(f);
}

void scsi_device_stop_peers(struct scsi_device *dev)
{
	if (!dev)
		return;
	SCSI_DEVICE_FOREACH_LU(dev, lu)
		spc_pr_peer_stop(lu);
}

void scsi_device_flush(struct scsi_device *dev, void (*done)(void *arg, int err), void *arg)
{
	struct device_flush_state *st = calloc(1, sizeof(*st));

	if (!st) {
		done(arg, -ENOMEM);
		return;
	}
	*st = (struct device_flush_state){ .pending = 1, .done = done, .arg = arg };
	SCSI_DEVICE_FOREACH_LU(dev, lu) {
		struct device_flush *f = calloc(1, sizeof(*f));

		if (!f) {
			st->err = -ENOMEM;
			continue;
		}
		*f = (struct device_flush){ .job = { .work = flush_work, .done = flush_done }, .lu = lu,
					    .state = st, .kept = !lu_has_volatile_state(lu) };
		st->pending++;
		dev->executor->submit(dev->executor, &f->job);
	}
	flush_state_put(st);
}

struct scsi_lu *scsi_device_find_lu(struct scsi_device *dev, uint64_t sam_lun)
{
	uint32_t lun;

	if (!scsi_lun_decode(sam_lun, &lun))
		return NULL;
	return scsi_device_lu(dev, lun);
}

int scsi_lu_set_latency(struct scsi_lu *lu, const struct scsi_latency_params *p, char *err, size_t errlen)
{
	if (scsi_latency_params_check(p, err, errlen) != 0)
		return -1;
	if (scsi_media_queue_set(lu, p) != 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	lu->params.latency = *p;
	return 0;
}

struct scsi_lu *scsi_lu_create(struct scsi_device *dev, const struct scsi_lu_params *params,
			       struct backend *backend, char *err, size_t errlen)
{
	struct scsi_lu *lu;

	if ((params->lun & 0xffff) > SCSI_MAX_LUN || (params->lun >> 16) > SCSI_MAX_LUN) {
		snprintf(err, errlen, "LUN %u is out of range (0..%u)", params->lun, SCSI_MAX_LUN);
		return NULL;
	}
	if (scsi_device_lu(dev, params->lun)) {
		snprintf(err, errlen, "LUN %u is defined twice", params->lun);
		return NULL;
	}
	if (params->logical_block_size != 512 && params->logical_block_size != 4096) {
		snprintf(err, errlen, "logical block size %u is not 512 or 4096", params->logical_block_size);
		return NULL;
	}
	lu = calloc(1, sizeof(*lu));
	if (!lu) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	lu->dev = dev;
	lu->params = *params;
	snprintf(lu->state_dir, sizeof(lu->state_dir), "%s", params->state_dir ? params->state_dir : ".");
	lu->params.state_dir = lu->state_dir;
	lu->backend = backend;
	lu->lun = params->lun;
	lu->kind = params->kind;
	lu->block_size = params->logical_block_size;
	lu->num_blocks = params->num_blocks ? params->num_blocks : backend->size / lu->block_size;
	lu->mode_current.dpofua = true;
	lu->mode_current.wce = true;
	if (lu->kind == SCSI_LU_ADMIN) {
		/* No medium (conglomerate.c): nothing to provision, no cache to write back (Caching WCE = 0). */
		lu->params.thin_provisioning = false;
		if (!(lu->params.mode_defaults.set & (1u << SCSI_MODE_WCE))) {
			lu->params.mode_defaults.set |= 1u << SCSI_MODE_WCE;
			lu->params.mode_defaults.value[SCSI_MODE_WCE] = 0;
		}
	}
	if (spc_mode_init(lu) != 0 || spc_pr_init(lu) != 0 || spc_log_init(lu) != 0) {
		snprintf(err, errlen, "cannot load the saved state of LUN %u from %s", params->lun, lu->state_dir);
		spc_log_fini(lu);
		spc_pr_fini(lu);
		spc_mode_fini(lu);
		free(lu);
		return NULL;
	}
	if (zbc_init(lu, err, errlen) != 0 || sbc_pi_init(lu, err, errlen) != 0 ||
	    scsi_lu_set_latency(lu, &params->latency, err, errlen) != 0 ||
	    (lu->kind == SCSI_LU_ADMIN && scsi_conglomerate_init(lu) != 0 &&
	     snprintf(err, errlen, "out of memory"))) {
		scsi_conglomerate_fini(lu);
		zbc_fini(lu);
		spc_log_fini(lu);
		spc_pr_fini(lu);
		spc_mode_fini(lu);
		free(lu);
		return NULL;
	}
	pthread_mutex_init(&lu->fault_rules_lock, NULL);
	spc_alua_init(lu);
	spc_pr_peer_init(lu);
	if (backend->ops->ready && !backend->ops->ready(backend)) {
		/*
		 * Still being opened (be_rbd_open_later): 02/04/01 until it is
		 * (cmd.c, scsi_cmd_submit), or the group's standby (02/04/0B).
		 */
		lu->backend_pending = true;
		if (!spc_alua_wait_for_backend(lu))
			lu->readiness = SCSI_LU_BECOMING_READY;
	}
	{
		char kept[sizeof(lu->state_dir) + sizeof(STATE_KEPT_FILE) + 1];

		snprintf(kept, sizeof(kept), "%s/" STATE_KEPT_FILE, lu->state_dir);
		lu->state_kept = unlink(kept) == 0; /* it was there: the last flush found nothing volatile */
	}
	if (!scsi_lu_map_insert(&dev->lus, lu)) {
		snprintf(err, errlen, "out of memory");
		lu_destroy(lu);
		return NULL;
	}
	/* A subsidiary LU opened on first use changes no inventory: its binding did (conglomerate.c). */
	for (struct scsi_nexus *n = dev->nexuses; n && !(lu->lun >> 16); n = n->next)
		scsi_ua_establish(n, lu->lun, SCSI_UA_REPORTED_LUNS_DATA_CHANGED);
	return lu;
}

void scsi_device_observe_backing_errors(struct scsi_device *dev, scsi_backing_error_fn observe, void *arg)
{
	dev->backing_error_observer = observe;
	dev->backing_error_arg = arg;
}

struct scsi_nexus *scsi_nexus_create(struct scsi_device *dev, const struct scsi_transport_ops *transport,
				     const char *initiator_port_name, const char *target_port_name,
				     uint16_t relative_target_port)
{
	struct scsi_nexus *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->dev = dev;
	n->transport = transport;
	snprintf(n->initiator_port_name, sizeof(n->initiator_port_name), "%s", initiator_port_name);
	/* SPC-4 7.6.4: the nexus's TransportID, for persistent reservations. */
	if (transport && transport->transport_id_decode && transport->protocol_identifier < 16)
		dev->codec_of[transport->protocol_identifier] = transport;
	if (transport && transport->transport_id_encode)
		n->transport_id_len = transport->transport_id_encode(initiator_port_name, n->transport_id,
								     sizeof(n->transport_id));
	snprintf(n->target_port_name, sizeof(n->target_port_name), "%s", target_port_name);
	n->relative_target_port = relative_target_port;
	/* SAM-5 6.3.1: POWER ON on every LU for a new I_T nexus, kept in its I_T_L entries as they come (itl.c). */
	n->outstanding = 1; /* the creator's reference, dropped by scsi_nexus_destroy */
	n->next = dev->nexuses;
	dev->nexuses = n;
	return n;
}

void scsi_nexus_continue(struct scsi_nexus *nexus)
{
	SCSI_DEVICE_FOREACH_LU(nexus->dev, lu) {
		struct scsi_itl *t = scsi_itl_find(nexus, lu->lun);

		if (t && lu->state_kept)
			t->ua_pending &= ~(1u << SCSI_UA_POWER_ON_RESET);
	}
	nexus->continued = true;
}

void scsi_nexus_get(struct scsi_nexus *nexus)
{
	nexus->outstanding++;
}

void scsi_nexus_put(struct scsi_nexus *nexus)
{
	struct scsi_nexus **pp;

	if (--nexus->outstanding > 0)
		return;
	for (pp = &nexus->dev->nexuses; *pp; pp = &(*pp)->next) {
		if (*pp == nexus) {
			*pp = nexus->next;
			break;
		}
	}
	scsi_itl_fini(nexus);
	free(nexus);
}

static bool match_nexus(const struct scsi_cmd *cmd, const void *nexus)
{
	return cmd->nexus == nexus;
}

void scsi_nexus_destroy(struct scsi_nexus *nexus)
{
	struct scsi_device *dev = nexus->dev;

	nexus->destroying = true;
	scsi_nexus_get(nexus);
	SCSI_DEVICE_FOREACH_LU(dev, lu) {
		scsi_task_set_abort(lu, match_nexus, nexus, NULL);
		spc_pr_nexus_lost(lu, nexus);
	}
	nexus->outstanding--;  /* the creator's reference (ours keeps it above zero) */
	scsi_nexus_put(nexus); /* ours: frees the nexus once no command holds it */
}
