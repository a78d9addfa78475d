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
};

/* An empty queue; install it with dev->executor = &m->ex. */
void manual_executor_init(struct manual_executor *m);
/* Runs up to max queued jobs (work then done, in order); returns how many ran. */
unsigned manual_executor_run(struct manual_executor *m, unsigned max);
/* Jobs waiting. */
unsigned manual_executor_pending(const struct manual_executor *m);

#endif
