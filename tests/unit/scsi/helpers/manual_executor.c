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
	unsigned n = 0;

	while (n < max && m->head) {
		struct scsi_io_job *job = m->head;

		m->head = job->next;
		if (!m->head)
			m->tail = NULL;
		job->work(job);
		job->done(job);
		n++;
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
	unsigned n = 0;

	while (n < max && m->ended_head) {
		struct scsi_io_job *job = m->ended_head;

		m->ended_head = job->next;
		if (!m->ended_head)
			m->ended_tail = NULL;
		job->done(job);
		n++;
	}
	return n;
}
