#include <stddef.h>
#include <string.h>

#include "manual_executor.h"

static void manual_submit(struct scsi_executor *ex, struct scsi_io_job *job)
{
	struct manual_executor *m = (struct manual_executor *)ex;

	job->next = NULL;
	if (m->tail)
		m->tail->next = job;
	else
		m->head = job;
	m->tail = job;
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
