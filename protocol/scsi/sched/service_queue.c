/*
 * The service queues of service_queue.h.  Three views of the same entries:
 * the arrival order of the whole queue (for aging), the arrival order of
 * each level (the entries without a deadline), and a heap of the entries
 * with a deadline, ordered by level, then deadline, then arrival.
 */
#include "sched/service_queue.h"

#define ENTRY_OF_DEADLINE(n) \
	((struct scsi_service_entry *)((char *)(n) - offsetof(struct scsi_service_entry, deadline_node)))

static bool deadline_before(const struct scsi_heap_node *a, const struct scsi_heap_node *b)
{
	const struct scsi_service_entry *x = ENTRY_OF_DEADLINE(a), *y = ENTRY_OF_DEADLINE(b);

	if (x->level != y->level)
		return x->level < y->level;
	if (x->deadline_ns != y->deadline_ns)
		return x->deadline_ns < y->deadline_ns;
	return x->seq < y->seq;
}

void scsi_service_queue_add(struct scsi_service_queue *q, struct scsi_service_entry *e, uint8_t level,
			    uint64_t deadline_ns, uint64_t now_ns)
{
	if (level >= SCSI_SERVICE_LEVELS)
		level = SCSI_SERVICE_LEVELS - 1;
	e->level = level;
	e->deadline_ns = deadline_ns;
	e->queued_ns = now_ns;
	e->seq = ++q->seq;
	e->queued = true;
	e->next = NULL;
	e->prev = q->tail;
	if (q->tail)
		q->tail->next = e;
	else
		q->head = e;
	q->tail = e;
	if (deadline_ns) {
		q->deadlines.before = deadline_before;
		scsi_heap_insert(&q->deadlines, &e->deadline_node);
	} else {
		e->level_next = NULL;
		e->level_prev = q->level_tail[level];
		if (q->level_tail[level])
			q->level_tail[level]->level_next = e;
		else
			q->level_head[level] = e;
		q->level_tail[level] = e;
	}
	q->count++;
}

void scsi_service_queue_remove(struct scsi_service_queue *q, struct scsi_service_entry *e)
{
	if (!e->queued)
		return;
	if (e->prev)
		e->prev->next = e->next;
	else
		q->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		q->tail = e->prev;
	if (e->deadline_ns) {
		scsi_heap_remove(&q->deadlines, &e->deadline_node);
	} else {
		if (e->level_prev)
			e->level_prev->level_next = e->level_next;
		else
			q->level_head[e->level] = e->level_next;
		if (e->level_next)
			e->level_next->level_prev = e->level_prev;
		else
			q->level_tail[e->level] = e->level_prev;
	}
	e->prev = e->next = e->level_prev = e->level_next = NULL;
	e->queued = false;
	q->count--;
}

/* Of the first entries of a level, the one the drive reaches first. */
static struct scsi_service_entry *nearest(struct scsi_service_entry *first,
					  uint64_t (*access_ns)(void *arg, const struct scsi_service_entry *e),
					  void *arg)
{
	struct scsi_service_entry *best = first;
	uint64_t best_ns = access_ns(arg, first);
	unsigned seen = 1;

	for (struct scsi_service_entry *e = first->level_next; e && seen < SCSI_SERVICE_REORDER_WINDOW;
	     e = e->level_next, seen++) {
		uint64_t ns = access_ns(arg, e);

		if (ns < best_ns) {
			best = e;
			best_ns = ns;
		}
	}
	return best;
}

struct scsi_service_entry *scsi_service_queue_take(struct scsi_service_queue *q, uint64_t now_ns, uint64_t aging_ns,
						   uint64_t (*access_ns)(void *arg, const struct scsi_service_entry *e),
						   void *arg)
{
	struct scsi_service_entry *e = q->head, *timed;
	unsigned level;

	if (!e)
		return NULL;
	/* SAM-5 8.6 leaves the order of SIMPLE commands to the device; no command waits past the bound. */
	if (!(aging_ns && now_ns - e->queued_ns >= aging_ns)) {
		timed = q->deadlines.root ? ENTRY_OF_DEADLINE(q->deadlines.root) : NULL;
		for (level = 0; level < SCSI_SERVICE_LEVELS && !q->level_head[level]; level++)
			;
		if (timed && (level == SCSI_SERVICE_LEVELS || timed->level <= level))
			e = timed;
		else
			e = access_ns ? nearest(q->level_head[level], access_ns, arg) : q->level_head[level];
	}
	scsi_service_queue_remove(q, e);
	return e;
}
