/*
 * An executor for unit tests that queues jobs until the test runs them, so a
 * test can look at the LU between two chunks of a background operation
 * (progress indication, NOT READY gating, aborts).
 */
#ifndef SBCEMU_TEST_MANUAL_EXECUTOR_H
#define SBCEMU_TEST_MANUAL_EXECUTOR_H

#include "scsi.h"

struct manual_executor {
	struct scsi_executor ex;
	struct scsi_io_job *head, *tail;
	struct scsi_io_job *ended_head, *ended_tail; /* asynchronous jobs complete() handed back */
};

/* An empty queue; install it with dev->executor = &m->ex. */
void manual_executor_init(struct manual_executor *m);
/* Runs up to max queued jobs (work then done, in order); returns how many ran. */
unsigned manual_executor_run(struct manual_executor *m, unsigned max);
/* Jobs waiting. */
unsigned manual_executor_pending(const struct manual_executor *m);
/*
 * Asynchronous jobs from now on (scsi_executor.submit_async): job->work_async
 * starts them; the backend's completion (complete()) holds them until
 * manual_executor_end_async runs their done().
 */
void manual_executor_enable_async(struct manual_executor *m);
/* Runs done() of up to max asynchronous jobs that completed, in order; returns how many. */
unsigned manual_executor_end_async(struct manual_executor *m, unsigned max);

#endif
