/*
 * The service queues (struct scsi_service_queue, scsi.h): where a started
 * command waits for the medium (media/media_queue.c) or for a worker
 * (sched/dispatch.c), ranked by command priority and deadline, with
 * starvation bounded by aging.  docs/architecture.md, "Priority and time".
 */
#ifndef SBCEMU_SERVICE_QUEUE_H
#define SBCEMU_SERVICE_QUEUE_H

#ifndef SBCE_BUILDING_SCSI
#error "sbcemu layering: service_queue.h is internal to the SCSI core (protocol/scsi/): use its public headers"
#endif

#include "core/scsi_internal.h"

/* How many of the first commands of a level a reordering drive compares (a drive's tagged queue). */
#define SCSI_SERVICE_REORDER_WINDOW 32

void scsi_service_queue_add(struct scsi_service_queue *q, struct scsi_service_entry *e, uint8_t level,
			    uint64_t deadline_ns, uint64_t now_ns);
void scsi_service_queue_remove(struct scsi_service_queue *q, struct scsi_service_entry *e);
/*
 * The entry that goes next, taken out of q (NULL when q is empty): one
 * queued for aging_ns or longer (the oldest), else the best level's
 * earliest deadline, else that level's oldest, or, with access_ns set, the
 * one of its first SCSI_SERVICE_REORDER_WINDOW with the shortest
 * access_ns(arg, e).
 */
struct scsi_service_entry *scsi_service_queue_take(struct scsi_service_queue *q, uint64_t now_ns, uint64_t aging_ns,
						   uint64_t (*access_ns)(void *arg, const struct scsi_service_entry *e),
						   void *arg);

#endif
