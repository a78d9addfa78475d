/*
 * What the core keeps per I_T_L nexus (struct scsi_itl): pending unit
 * attentions, commands in the LU's task set, the SET PRIORITY priority.
 * Made the first time the nexus needs one for an LU (a command, a unit
 * attention that a power on does not already cover), so a nexus costs
 * nothing for the LUs it never touched, however many the device has.  A
 * small chained hash table per nexus, keyed by the LUN id.
 *
 * The POWER ON, RESET, OR BUS DEVICE RESET OCCURRED a new nexus has on
 * every LU (SAM-5 6.3.1) is not written into entries ahead: an entry starts
 * with it (unless scsi_nexus_continue said a restart kept that LU's state),
 * and a unit attention that a power on already implies (SAM-5 5.14) makes
 * no entry for an LU the nexus never touched (scsi_ua_establish_all).
 */
#include <stdlib.h>

#include "core/scsi_internal.h"

#define ITL_MIN_BUCKETS 16u

static unsigned bucket_of(unsigned nbuckets, uint32_t lun)
{
	return (unsigned)((lun * 2654435761u) >> 8) & (nbuckets - 1);
}

struct scsi_itl *scsi_itl_find(const struct scsi_nexus *n, uint32_t lun)
{
	if (!n->itl_nbuckets)
		return NULL;
	for (struct scsi_itl *t = n->itl_buckets[bucket_of(n->itl_nbuckets, lun)]; t; t = t->next)
		if (t->lun == lun)
			return t;
	return NULL;
}

static void grow(struct scsi_nexus *n)
{
	unsigned nb = n->itl_nbuckets ? n->itl_nbuckets * 2 : ITL_MIN_BUCKETS;
	struct scsi_itl **b = calloc(nb, sizeof(*b));

	if (!b)
		return; /* the chains get longer */
	for (unsigned i = 0; i < n->itl_nbuckets; i++) {
		struct scsi_itl *t = n->itl_buckets[i];

		while (t) {
			struct scsi_itl *next = t->next;
			unsigned k = bucket_of(nb, t->lun);

			t->next = b[k];
			b[k] = t;
			t = next;
		}
	}
	free(n->itl_buckets);
	n->itl_buckets = b;
	n->itl_nbuckets = nb;
}

bool scsi_itl_untouched_power_on(const struct scsi_nexus *n, const struct scsi_lu *lu)
{
	return lu && !(n->continued && lu->state_kept);
}

struct scsi_itl *scsi_itl_get(struct scsi_nexus *n, uint32_t lun)
{
	struct scsi_itl *t = scsi_itl_find(n, lun);

	if (t)
		return t;
	if (n->itl_count + 1 > n->itl_nbuckets)
		grow(n);
	if (!n->itl_nbuckets || !(t = calloc(1, sizeof(*t))))
		return NULL;
	t->lun = lun;
	if (scsi_itl_untouched_power_on(n, scsi_device_lu(n->dev, lun)))
		t->ua_pending = 1u << SCSI_UA_POWER_ON_RESET;
	t->next = n->itl_buckets[bucket_of(n->itl_nbuckets, lun)];
	n->itl_buckets[bucket_of(n->itl_nbuckets, lun)] = t;
	n->itl_count++;
	return t;
}

void scsi_itl_drop(struct scsi_nexus *n, uint32_t lun)
{
	struct scsi_itl **pp;

	if (!n->itl_nbuckets)
		return;
	for (pp = &n->itl_buckets[bucket_of(n->itl_nbuckets, lun)]; *pp; pp = &(*pp)->next) {
		if ((*pp)->lun == lun) {
			struct scsi_itl *t = *pp;

			*pp = t->next;
			free(t->rod_lists); /* the token-based copies' results it held (rod_token.c) */
			free(t->copies);    /* the EXTENDED COPY results (extended_copy.c) */
			free(t);
			n->itl_count--;
			return;
		}
	}
}

void scsi_itl_fini(struct scsi_nexus *n)
{
	for (unsigned i = 0; i < n->itl_nbuckets; i++) {
		struct scsi_itl *t = n->itl_buckets[i];

		while (t) {
			struct scsi_itl *next = t->next;

			free(t->rod_lists);
			free(t->copies);
			free(t);
			t = next;
		}
	}
	free(n->itl_buckets);
	n->itl_buckets = NULL;
	n->itl_nbuckets = n->itl_count = 0;
}
