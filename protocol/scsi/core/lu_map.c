/*
 * The LUs of a device by LUN (struct scsi_lu_map): a chained hash table
 * keyed by the 32-bit LUN id (scsi_internal.h: the LUN, or administrative
 * element | subsidiary element << 16 for a conglomerate's subsidiary LU),
 * doubled as it fills, and a list of them all for the walks that need
 * every LU.  Lookup, insertion and removal take O(1) at any size: a device
 * with ten thousand subsidiary LUs costs what one with ten does per
 * command.
 */
#include <stdlib.h>

#include "core/scsi_internal.h"

#define MAP_MIN_BUCKETS 64u

static unsigned bucket_of(const struct scsi_lu_map *m, uint32_t lun)
{
	/* Fibonacci hashing: subsidiary elements sit in the high half of the id. */
	return (unsigned)((lun * 2654435761u) >> 8) & (m->nbuckets - 1);
}

struct scsi_lu *scsi_device_lu(const struct scsi_device *dev, uint32_t lun)
{
	const struct scsi_lu_map *m = &dev->lus;

	if (!m->nbuckets)
		return NULL;
	for (struct scsi_lu *lu = m->buckets[bucket_of(m, lun)]; lu; lu = lu->map_next)
		if (lu->lun == lun)
			return lu;
	return NULL;
}

/* Doubles the buckets (false when out of memory: the chains get longer, nothing breaks). */
static bool grow(struct scsi_lu_map *m)
{
	unsigned n = m->nbuckets ? m->nbuckets * 2 : MAP_MIN_BUCKETS;
	struct scsi_lu **b = calloc(n, sizeof(*b));
	struct scsi_lu_map bigger = { .buckets = b, .nbuckets = n };

	if (!b)
		return false;
	for (struct scsi_lu *lu = m->all; lu; lu = lu->all_next) {
		unsigned i = bucket_of(&bigger, lu->lun);

		lu->map_next = b[i];
		b[i] = lu;
	}
	free(m->buckets);
	m->buckets = b;
	m->nbuckets = n;
	return true;
}

bool scsi_lu_map_insert(struct scsi_lu_map *m, struct scsi_lu *lu)
{
	unsigned i;

	if ((m->count + 1 > m->nbuckets || !m->nbuckets) && !grow(m) && !m->nbuckets)
		return false;
	i = bucket_of(m, lu->lun);
	lu->map_next = m->buckets[i];
	m->buckets[i] = lu;
	lu->all_prev = NULL;
	lu->all_next = m->all;
	if (m->all)
		m->all->all_prev = lu;
	m->all = lu;
	m->count++;
	return true;
}

void scsi_lu_map_remove(struct scsi_lu_map *m, struct scsi_lu *lu)
{
	struct scsi_lu **pp;

	if (!m->nbuckets)
		return;
	for (pp = &m->buckets[bucket_of(m, lu->lun)]; *pp; pp = &(*pp)->map_next) {
		if (*pp == lu) {
			*pp = lu->map_next;
			break;
		}
	}
	if (lu->all_prev)
		lu->all_prev->all_next = lu->all_next;
	else
		m->all = lu->all_next;
	if (lu->all_next)
		lu->all_next->all_prev = lu->all_prev;
	lu->map_next = lu->all_next = lu->all_prev = NULL;
	m->count--;
}

void scsi_lu_map_fini(struct scsi_lu_map *m)
{
	free(m->buckets);
	*m = (struct scsi_lu_map){ 0 };
}

static int cmp_lun(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

size_t scsi_device_lun_ids(const struct scsi_device *dev, uint32_t **out)
{
	size_t n = 0;
	uint32_t *ids = malloc((dev->lus.count ? dev->lus.count : 1) * sizeof(*ids));

	*out = ids;
	if (!ids)
		return 0;
	SCSI_DEVICE_FOREACH_LU(dev, lu)
		ids[n++] = lu->lun;
	qsort(ids, n, sizeof(*ids), cmp_lun);
	return n;
}
