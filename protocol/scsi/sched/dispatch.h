/*
 * The executor's queues, kept by the core (struct scsi_executor, scsi.h): a
 * command's backend job goes to the executor when it has room for its kind
 * (a worker's, or one started asynchronously), else it waits here by
 * priority and deadline.
 */
#ifndef SBCEMU_DISPATCH_H
#define SBCEMU_DISPATCH_H

#ifndef SBCE_BUILDING_SCSI
#error "sbcemu layering: dispatch.h is internal to the SCSI core (protocol/scsi/): use its public headers"
#endif

#include "core/scsi_internal.h"

/* Hands cmd->io_job to its device's executor, now or when it has room. */
void scsi_dispatch_submit(struct scsi_cmd *cmd);
/*
 * A command job of ex is done (loop thread), one a worker ran or (async)
 * one started asynchronously: the next waiting one of its kind goes.
 */
void scsi_dispatch_done(struct scsi_executor *ex, bool async);
/* Takes cmd out of the queue it waits in, if any (it ends). */
void scsi_service_forget(struct scsi_cmd *cmd);
/*
 * cmd ranks first from now on, in whichever queue it waits (an abort, a
 * duration limit's policy); it keeps its place in the aging order.
 */
void scsi_service_hurry(struct scsi_cmd *cmd);

#endif
