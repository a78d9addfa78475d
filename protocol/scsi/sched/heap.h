/*
 * An intrusive pairing heap (Fredman, Sedgewick, Sleator, Tarjan, "The
 * pairing heap: a new form of self-adjusting heap", Algorithmica 1986):
 * insert in O(1), removal of the first or of any node in O(log n)
 * amortized, and no allocation, so arming a timer or queueing a command
 * cannot fail.  The node and the heap (struct scsi_heap_node, struct
 * scsi_heap, scsi.h) live in their owners; the heap orders by before().
 */
#ifndef SBCEMU_HEAP_H
#define SBCEMU_HEAP_H

#ifndef SBCE_BUILDING_SCSI
#error "sbcemu layering: heap.h is internal to the SCSI core (protocol/scsi/): use its public headers"
#endif

#include <stdbool.h>

#include "scsi.h"

static inline bool scsi_heap_linked(const struct scsi_heap *h, const struct scsi_heap_node *n)
{
	return n->prev || h->root == n;
}

void scsi_heap_insert(struct scsi_heap *h, struct scsi_heap_node *n);
/* Takes n out (it must be in h). */
void scsi_heap_remove(struct scsi_heap *h, struct scsi_heap_node *n);

#endif
