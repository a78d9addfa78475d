/*
 * The medium's queue (media_queue.h).  The task set starts a command as
 * SAM-5 allows (task attributes, LBA locks, buffer room); one that touches
 * the medium then waits here, ranked by priority and deadline
 * (sched/service_queue.c), until a server of the model's medium is free.
 * The medium takes it, the model says how long it keeps it, and the
 * command runs at once (its data goes to the backing file now); its
 * response waits for the end of that time (media_timer).  A drive that
 * reorders takes, among the first commands of the best rank, the one it
 * reaches first.
 */
#include <errno.h>

#include "media/media_model.h"
#include "media/media_queue.h"
#include "sched/dispatch.h"
#include "sched/service_queue.h"
#include "sched/task_set.h"
#include "sched/timer.h"
#include "zbc/zbc.h"

#define CMD_OF_ENTRY(e) ((struct scsi_cmd *)((char *)(e) - offsetof(struct scsi_cmd, service)))
#define DEFAULT_AGING_MS 1000u

int scsi_media_queue_set(struct scsi_lu *lu, const struct scsi_latency_params *p)
{
	struct scsi_media_queue *q = &lu->media;
	struct scsi_media_model *m = NULL;

	if (p->model != SCSI_LATENCY_NONE) {
		m = scsi_media_model_create(p, lu->num_blocks, lu->block_size, lu->zbc != NULL);
		if (!m)
			return -ENOMEM;
	}
	scsi_media_model_destroy(q->model);
	q->model = m;
	q->params = *p;
	q->servers = m ? scsi_media_model_servers(m) : 0;
	q->reorders = m && scsi_media_model_reorders(m);
	q->aging_ns = (uint64_t)(p->aging_ms ? p->aging_ms : DEFAULT_AGING_MS) * 1000000ull;
	scsi_task_set_run(lu); /* without a model, what waited goes now */
	return 0;
}

void scsi_media_queue_fini(struct scsi_lu *lu)
{
	scsi_media_model_destroy(lu->media.model);
	lu->media.model = NULL;
}

/* The medium's view of cmd; false if it takes no media time (format, sanitize, commands off the medium). */
static bool media_request(const struct scsi_cmd *cmd, struct scsi_media_request *req)
{
	const struct scsi_op *op = cmd->op;

	*req = (struct scsi_media_request){ .lba = cmd->lba, .nblocks = cmd->nblocks };
	if (op->flags & OP_QUIESCE)
		return false;
	if (op->flags & (OP_WRITES_MEDIUM | OP_LBA_WRITE)) {
		req->cls = SCSI_MEDIA_WRITE;
		/* Only sequential write required zones are written in place; a host-aware drive caches the rest. */
		if (cmd->lu->zbc && cmd->nblocks && cmd->lba < cmd->lu->num_blocks)
			req->sequential_zone = zbc_zone_of(cmd->lu->zbc, cmd->lba)->type ==
					       ZBC_ZONE_TYPE_SEQUENTIAL_WRITE_REQUIRED;
	} else if (op->flags & OP_LBA_READ) {
		req->cls = SCSI_MEDIA_READ;
	} else if (op->opcode == SCSI_OP_SYNCHRONIZE_CACHE_10 || op->opcode == SCSI_OP_SYNCHRONIZE_CACHE_16) {
		req->cls = SCSI_MEDIA_OTHER;
		req->nblocks = 0;
	} else {
		return false;
	}
	return true;
}

bool scsi_media_wants(const struct scsi_cmd *cmd)
{
	struct scsi_media_request req;

	return cmd->lu->media.model && scsi_timer_available(cmd->lu->dev) && media_request(cmd, &req);
}

void scsi_media_queue_add(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;

	cmd->service_queue = &lu->media.waiting;
	scsi_service_queue_add(&lu->media.waiting, &cmd->service, cmd->service_level, cmd->deadline_ns,
			       scsi_device_now(lu->dev));
}

/* The end of a command's time on the medium: its server is free, its held response goes. */
static void media_end(struct scsi_timer *t)
{
	struct scsi_cmd *cmd = (struct scsi_cmd *)((char *)t - offsetof(struct scsi_cmd, media_timer));
	struct scsi_lu *lu = cmd->lu;

	cmd->media_busy = false;
	lu->media.busy--;
	lu->media.last_free_ns = t->when_ns;
	if (cmd->media_hold) {
		cmd->media_hold = false;
		scsi_cmd_complete(cmd); /* runs the task set, which gives the medium its next command */
	} else {
		scsi_task_set_run(lu);
	}
}

struct access_arg {
	const struct scsi_media_model *model;
	uint64_t now;
};

static uint64_t access_time(void *arg, const struct scsi_service_entry *e)
{
	const struct access_arg *a = arg;
	struct scsi_media_request req;

	media_request(CMD_OF_ENTRY(e), &req);
	return scsi_media_model_access_ns(a->model, &req, a->now);
}

void scsi_media_queue_run(struct scsi_lu *lu)
{
	struct scsi_media_queue *q = &lu->media;

	while (q->waiting.count && (!q->servers || q->busy < q->servers)) {
		uint64_t now = scsi_device_now(lu->dev), start;
		/*
		 * A one-server medium that just came free takes the next command at
		 * the time the model freed it, not when its timer got to run: the
		 * model's pace does not depend on how busy the host is.
		 */
		uint64_t free_at = q->servers == 1 && q->last_free_ns < now ? q->last_free_ns : now;
		struct access_arg a = { .model = q->model, .now = free_at };
		struct scsi_service_entry *e =
			scsi_service_queue_take(&q->waiting, now, q->aging_ns, q->reorders ? access_time : NULL, &a);
		struct scsi_cmd *cmd = CMD_OF_ENTRY(e);
		struct scsi_media_request req;

		start = e->queued_ns > free_at ? e->queued_ns : free_at;
		if (start > now)
			start = now;
		cmd->service_queue = NULL;
		if (q->model && media_request(cmd, &req)) {
			cmd->media_busy = true;
			q->busy++;
			cmd->media_timer.fire = media_end;
			scsi_timer_arm(lu->dev, &cmd->media_timer, start + scsi_media_model_serve(q->model, &req, start));
		}
		scsi_cmd_execute(cmd); /* may complete it; its response then waits for media_end */
	}
}

bool scsi_media_hold(struct scsi_cmd *cmd)
{
	/* Completed again while held (the LU went offline), or no alarm left to end the hold: it ends now. */
	if (!cmd->media_busy || cmd->media_hold || !scsi_timer_available(cmd->lu->dev))
		return false;
	cmd->media_hold = true;
	return true;
}

void scsi_media_forget(struct scsi_cmd *cmd)
{
	scsi_service_forget(cmd);
	cmd->media_hold = false;
	if (cmd->media_busy) {
		/* Ended early (an abort, a duration limit): the medium lets go of it now. */
		scsi_timer_cancel(cmd->lu->dev, &cmd->media_timer);
		cmd->media_busy = false;
		cmd->lu->media.busy--;
		cmd->lu->media.last_free_ns = scsi_device_now(cmd->lu->dev);
	}
}
