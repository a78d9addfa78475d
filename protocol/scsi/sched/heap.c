/*
 * The pairing heap of heap.h.  A node's prev is its parent when it is the
 * first child, else its left sibling; the root's prev is NULL.
 */
#include <stddef.h>

#include "sched/heap.h"

/* One tree of two: the later root becomes the first child of the earlier. */
static struct scsi_heap_node *meld(const struct scsi_heap *h, struct scsi_heap_node *a, struct scsi_heap_node *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (h->before(b, a)) {
		struct scsi_heap_node *t = a;

		a = b;
		b = t;
	}
	b->next = a->child;
	if (a->child)
		a->child->prev = b;
	b->prev = a;
	a->child = b;
	a->next = NULL;
	a->prev = NULL;
	return a;
}

/* The two-pass merge of a list of siblings: pairs left to right, then the pairs right to left. */
static struct scsi_heap_node *merge_pairs(const struct scsi_heap *h, struct scsi_heap_node *first)
{
	struct scsi_heap_node *pairs = NULL, *result = NULL;

	while (first) {
		struct scsi_heap_node *a = first, *b = a->next;

		first = b ? b->next : NULL;
		a->next = a->prev = NULL;
		if (b)
			b->next = b->prev = NULL;
		a = meld(h, a, b);
		a->next = pairs; /* a stack of the pairs, linked through next */
		pairs = a;
	}
	while (pairs) {
		struct scsi_heap_node *p = pairs;

		pairs = p->next;
		p->next = NULL;
		result = meld(h, result, p);
	}
	return result;
}

void scsi_heap_insert(struct scsi_heap *h, struct scsi_heap_node *n)
{
	n->child = n->next = n->prev = NULL;
	h->root = meld(h, h->root, n);
	h->count++;
}

void scsi_heap_remove(struct scsi_heap *h, struct scsi_heap_node *n)
{
	struct scsi_heap_node *sub = merge_pairs(h, n->child);

	if (n == h->root) {
		h->root = sub;
	} else {
		if (n->prev->child == n)
			n->prev->child = n->next;
		else
			n->prev->next = n->next;
		if (n->next)
			n->next->prev = n->prev;
		h->root = meld(h, h->root, sub);
	}
	n->child = n->next = n->prev = NULL;
	h->count--;
}
