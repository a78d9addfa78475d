/*
 * The medium of an LU and its queue (struct scsi_media_queue,
 * scsi_internal.h): a started command that touches the medium waits here
 * until the latency model's medium takes it, runs, and its response waits
 * for the end of its time on the medium.  docs/architecture.md, "Priority
 * and time".
 */
#ifndef SBCEMU_MEDIA_QUEUE_H
#define SBCEMU_MEDIA_QUEUE_H

#ifndef SBCE_BUILDING_SCSI
#error "sbcemu layering: media_queue.h is internal to the SCSI core (protocol/scsi/): use its public headers"
#endif

#include "core/scsi_internal.h"

/* Gives lu the model p (none: no model); commands on the medium keep their times.  0 or -ENOMEM. */
int scsi_media_queue_set(struct scsi_lu *lu, const struct scsi_latency_params *p);
void scsi_media_queue_fini(struct scsi_lu *lu);
/* Whether cmd takes time on lu's medium (a model is set, the device has a clock, cmd touches the medium). */
bool scsi_media_wants(const struct scsi_cmd *cmd);
/* A started command queues for the medium; scsi_media_queue_run starts it. */
void scsi_media_queue_add(struct scsi_cmd *cmd);
/* Hands the waiting commands to the medium as it has room (the task set's pass calls it). */
void scsi_media_queue_run(struct scsi_lu *lu);
/* At completion: true if the response must wait for the end of cmd's media time (it is held). */
bool scsi_media_hold(struct scsi_cmd *cmd);
/* The command ends: out of the queue, its server free. */
void scsi_media_forget(struct scsi_cmd *cmd);

#endif
