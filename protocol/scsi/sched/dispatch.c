/*
 * The workers' queue (dispatch.h).  The executor takes at most capacity
 * command jobs; the rest wait in its service queue, so the core, not the
 * order of arrival at a thread pool, decides which command's I/O runs next
 * (docs/architecture.md, "Priority and time").  A job the executor starts
 * asynchronously (scsi_executor.submit_async) holds no worker and takes no
 * slot: it is in the backend's hands at once.
 */
#include "sched/dispatch.h"
#include "sched/service_queue.h"

/* A job waits at most this long for a worker, whatever its rank. */
#define DISPATCH_AGING_NS 1000000000ull

#define CMD_OF_ENTRY(e) ((struct scsi_cmd *)((char *)(e) - offsetof(struct scsi_cmd, service)))

void scsi_dispatch_submit(struct scsi_cmd *cmd)
{
	struct scsi_executor *ex = cmd->lu->dev->executor;

	/* Started asynchronously, it waits for the backend, not for a worker: no slot, no queue. */
	cmd->io_async = cmd->io_job.work_async && ex->submit_async && ex->submit_async(ex, &cmd->io_job);
	if (cmd->io_async)
		return;
	if (!ex->capacity || ex->in_flight < ex->capacity) {
		ex->in_flight++;
		ex->submit(ex, &cmd->io_job);
		return;
	}
	cmd->service_queue = &ex->waiting;
	scsi_service_queue_add(&ex->waiting, &cmd->service, cmd->service_level, cmd->deadline_ns,
			       scsi_device_now(cmd->lu->dev));
}

void scsi_dispatch_done(struct scsi_executor *ex)
{
	ex->in_flight--;
	while (ex->waiting.count && (!ex->capacity || ex->in_flight < ex->capacity)) {
		struct scsi_service_entry *e;
		struct scsi_cmd *cmd;
		/* The devices of one executor share a clock (one daemon, or one test). */
		uint64_t now = scsi_device_now(CMD_OF_ENTRY(ex->waiting.head)->lu->dev);

		e = scsi_service_queue_take(&ex->waiting, now, DISPATCH_AGING_NS, NULL, NULL);
		cmd = CMD_OF_ENTRY(e);
		cmd->service_queue = NULL;
		ex->in_flight++;
		ex->submit(ex, &cmd->io_job);
	}
}

void scsi_service_hurry(struct scsi_cmd *cmd)
{
	struct scsi_service_queue *q = cmd->service_queue;
	uint64_t queued_ns = cmd->service.queued_ns;

	cmd->service_level = 0;
	if (!q)
		return;
	scsi_service_queue_remove(q, &cmd->service);
	scsi_service_queue_add(q, &cmd->service, 0, cmd->deadline_ns, queued_ns);
}

void scsi_service_forget(struct scsi_cmd *cmd)
{
	if (cmd->service_queue) {
		scsi_service_queue_remove(cmd->service_queue, &cmd->service);
		cmd->service_queue = NULL;
	}
}
