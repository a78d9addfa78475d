/*
 * The executor's queues (dispatch.h).  The executor takes at most capacity
 * command jobs for its workers and at most async_capacity jobs started
 * asynchronously (scsi_executor.submit_async: a librbd aio call, which holds
 * no worker); the rest wait in its service queues, so the core, not the
 * order of arrival at a thread pool or a cluster, decides which command's
 * I/O runs next (docs/architecture.md, "Priority and time").
 */
#include "sched/dispatch.h"
#include "sched/service_queue.h"

/* A job waits at most this long for a worker, whatever its rank. */
#define DISPATCH_AGING_NS 1000000000ull

#define CMD_OF_ENTRY(e) ((struct scsi_cmd *)((char *)(e) - offsetof(struct scsi_cmd, service)))

static bool has_room(unsigned in_flight, unsigned capacity)
{
	return !capacity || in_flight < capacity;
}

/* The best-ranked command of a nonempty queue q, taken out of it. */
static struct scsi_cmd *take_next(struct scsi_service_queue *q)
{
	/* The devices of one executor share a clock (one daemon, or one test). */
	uint64_t now = scsi_device_now(CMD_OF_ENTRY(q->head)->lu->dev);
	struct scsi_cmd *cmd = CMD_OF_ENTRY(scsi_service_queue_take(q, now, DISPATCH_AGING_NS, NULL, NULL));

	cmd->service_queue = NULL;
	return cmd;
}

static void wait_in(struct scsi_service_queue *q, struct scsi_cmd *cmd)
{
	cmd->service_queue = q;
	scsi_service_queue_add(q, &cmd->service, cmd->service_level, cmd->deadline_ns, scsi_device_now(cmd->lu->dev));
}

/* To a worker now, or to the workers' queue. */
static void submit_to_worker(struct scsi_executor *ex, struct scsi_cmd *cmd)
{
	if (has_room(ex->in_flight, ex->capacity)) {
		ex->in_flight++;
		ex->submit(ex, &cmd->io_job);
		return;
	}
	wait_in(&ex->waiting, cmd);
}

/* Started asynchronously if the backend can start it now, else to a worker. */
static void submit_async_or_worker(struct scsi_executor *ex, struct scsi_cmd *cmd)
{
	cmd->io_async = ex->submit_async(ex, &cmd->io_job);
	if (cmd->io_async)
		ex->async_in_flight++;
	else
		submit_to_worker(ex, cmd);
}

void scsi_dispatch_submit(struct scsi_cmd *cmd)
{
	struct scsi_executor *ex = cmd->lu->dev->executor;

	cmd->io_async = false;
	if (!cmd->io_job.work_async || !ex->submit_async)
		submit_to_worker(ex, cmd);
	else if (has_room(ex->async_in_flight, ex->async_capacity))
		submit_async_or_worker(ex, cmd);
	else
		wait_in(&ex->async_waiting, cmd);
}

void scsi_dispatch_done(struct scsi_executor *ex, bool async)
{
	if (async) {
		ex->async_in_flight--;
		while (ex->async_waiting.count && has_room(ex->async_in_flight, ex->async_capacity))
			submit_async_or_worker(ex, take_next(&ex->async_waiting));
		return;
	}
	ex->in_flight--;
	while (ex->waiting.count && has_room(ex->in_flight, ex->capacity)) {
		ex->in_flight++;
		ex->submit(ex, &take_next(&ex->waiting)->io_job);
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
