#include <stddef.h>
#include <string.h>

#include "manual_executor.h"

static void append(struct scsi_io_job **head, struct scsi_io_job **tail, struct scsi_io_job *job)
{
	job->next = NULL;
	if (*tail)
		(*tail)->next = job;
	else
		*head = job;
	*tail = job;
}

/* The first job of a list, taken off it; NULL when it is empty. */
static struct scsi_io_job *take(struct scsi_io_job **head, struct scsi_io_job **tail)
{
	struct scsi_io_job *job = *head;

	if (job) {
		*head = job->next;
		if (!*head)
			*tail = NULL;
	}
	return job;
}

static void manual_submit(struct scsi_executor *ex, struct scsi_io_job *job)
{
	struct manual_executor *m = (struct manual_executor *)ex;

	append(&m->head, &m->tail, job);
}

static bool manual_submit_async(struct scsi_executor *ex, struct scsi_io_job *job)
{
	job->executor = ex;
	return job->work_async(job);
}

static void manual_complete(struct scsi_executor *ex, struct scsi_io_job *job)
{
	struct manual_executor *m = (struct manual_executor *)ex;

	append(&m->ended_head, &m->ended_tail, job);
}

void manual_executor_init(struct manual_executor *m)
{
	memset(m, 0, sizeof(*m));
	m->ex.submit = manual_submit;
}

unsigned manual_executor_run(struct manual_executor *m, unsigned max)
{
	struct scsi_io_job *job;
	unsigned n = 0;

	for (; n < max && (job = take(&m->head, &m->tail)) != NULL; n++) {
		job->work(job);
		job->done(job);
	}
	return n;
}

unsigned manual_executor_pending(const struct manual_executor *m)
{
	unsigned n = 0;

	for (const struct scsi_io_job *j = m->head; j; j = j->next)
		n++;
	return n;
}

void manual_executor_enable_async(struct manual_executor *m)
{
	m->ex.submit_async = manual_submit_async;
	m->ex.complete = manual_complete;
}

unsigned manual_executor_end_async(struct manual_executor *m, unsigned max)
{
	struct scsi_io_job *job;
	unsigned n = 0;

	for (; n < max && (job = take(&m->ended_head, &m->ended_tail)) != NULL; n++)
		job->done(job);
	return n;
}
