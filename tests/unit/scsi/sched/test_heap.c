/*
 * sched/heap.c, the pairing heap under the timers and the deadline queues:
 * whatever the order of inserts and removals (of the first node or any
 * other), the nodes come out in the heap's order.
 */
#include <check.h>
#include <stdlib.h>

#include "core/scsi_internal.h"
#include "sched/heap.h"

#define N 4000

struct item {
	struct scsi_heap_node node; /* first: the heap's node is the item */
	unsigned key;
	bool in;
};

static bool item_before(const struct scsi_heap_node *a, const struct scsi_heap_node *b)
{
	return ((const struct item *)a)->key < ((const struct item *)b)->key;
}

static struct item items[N];

START_TEST(comes_out_in_order)
{
	struct scsi_heap heap = { .before = item_before };
	unsigned last = 0, out = 0, removed = 0;

	srand(12345);
	for (unsigned i = 0; i < N; i++) {
		items[i].key = (unsigned)rand() % 1000;
		items[i].in = true;
		scsi_heap_insert(&heap, &items[i].node);
		/* Now and then one in the middle goes (a cancelled timer, an aborted command). */
		if (i % 7 == 3) {
			struct item *x = &items[(unsigned)rand() % (i + 1)];

			if (x->in) {
				scsi_heap_remove(&heap, &x->node);
				x->in = false;
				removed++;
			}
		}
	}
	ck_assert_uint_eq(heap.count, N - removed);
	while (heap.root) {
		struct item *first = (struct item *)heap.root;

		ck_assert_uint_ge(first->key, last);
		last = first->key;
		ck_assert(first->in);
		scsi_heap_remove(&heap, heap.root);
		first->in = false;
		out++;
	}
	ck_assert_uint_eq(out, N - removed);
	ck_assert_uint_eq(heap.count, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("heap");
	TCase *tc = tcase_create("heap");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, comes_out_in_order);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
