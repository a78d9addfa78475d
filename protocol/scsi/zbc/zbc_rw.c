/*
 * The read and write rules of zoned LUs (libzbc 01_sk_ascq_check; Linux
 * scsi_debug check_zbc_access_params) and write tickets
 * (a write between zbc_write_begin and zbc_write_end, so a failed data write
 * can be rolled back).  Writes and zone resets never overlap: each holds its
 * blocks' LBA lock (lba_lock.c), so a write queued behind a RESET WRITE
 * POINTER of its zone starts after the reset's discard.
 * Facts: Linux scsi_debug check_zbc_access_params / zbc_inc_wp, libzbc
 * 01_sk_ascq_check and zbc_test_lib.sh zone-type masks.
 *
 * Everything runs on the loop thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "zbc/zbc.h"

/* A write between zbc_write_begin and zbc_write_end: what to restore if its data never lands. */
struct zbc_saved {
	uint64_t wp;
	enum zbc_zone_condition condition;
	bool non_seq;
	uint64_t seq_after;    /* the zone's seq right after this write's advance */
};

struct zbc_ticket {
	struct zbc_ticket *next;
	const struct scsi_cmd *cmd;
	uint32_t first;        /* index of the first zone written */
	uint32_t count;
	struct zbc_saved saved[];
};

/* ---- read rules ---- */

static enum scsi_result fail(struct scsi_cmd *cmd, enum scsi_sense_key key, uint16_t asc_ascq)
{
	return scsi_cmd_fail(cmd, sense_make(key, asc_ascq));
}

/*
 * The zones cmd's blocks span, first to last: false when there is nothing
 * for the zone engine to check (not a zoned LU, no blocks, or a range the
 * command's own checks refuse).
 */
static bool zones_spanned(const struct scsi_cmd *cmd, struct zbc_zone **first, struct zbc_zone **last)
{
	struct zbc_state *z = cmd->lu ? cmd->lu->zbc : NULL;

	if (!z || cmd->nblocks == 0 || scsi_lu_range_bad(cmd->lu, cmd->lba, cmd->nblocks))
		return false;
	*first = zbc_zone_of(z, cmd->lba);
	*last = zbc_zone_of(z, cmd->lba + cmd->nblocks - 1);
	return true;
}

enum scsi_result zbc_check_read(struct scsi_cmd *cmd)
{
	struct zbc_zone *first, *last;
	struct zbc_state *z;
	uint64_t end;

	if (!zones_spanned(cmd, &first, &last))
		return SCSI_OK;
	z = cmd->lu->zbc;
	end = cmd->lba + cmd->nblocks;
	/*
	 * A read of an OFFLINE zone is DATA PROTECT, ZONE IS OFFLINE; of an
	 * INACTIVE one (ZBC-2), ZONE IS INACTIVE when reads are restricted
	 * (URSWRZ = 0; libzbc ZT_RESTRICT_READ_INACTIVE), else it returns
	 * zeros (an inactive zone holds nothing).
	 */
	for (struct zbc_zone *zone = first; zone <= last; zone++) {
		/* ZBC-2: a gap zone has no data: ILLEGAL REQUEST, ATTEMPT TO ACCESS GAP ZONE (libzbc). */
		if (zone->type == ZBC_ZONE_TYPE_GAP)
			return fail(cmd, SENSE_KEY_ILLEGAL_REQUEST, ASC_ATTEMPT_TO_ACCESS_GAP_ZONE);
		if (zone->condition == ZBC_ZC_OFFLINE)
			return fail(cmd, SENSE_KEY_DATA_PROTECT, ASC_ZONE_IS_OFFLINE);
		if (zone->condition == ZBC_ZC_INACTIVE && !zbc_urswrz(cmd->lu))
			return fail(cmd, SENSE_KEY_DATA_PROTECT, ASC_ZONE_IS_INACTIVE);
	}
	/* A host-aware LU reads like a conventional disk. */
	if (z->host_aware)
		return SCSI_OK;
	/* Host managed: a read may not cross into a zone of another type (scsi_debug): READ BOUNDARY VIOLATION. */
	if (first->type != last->type)
		return fail(cmd, SENSE_KEY_ILLEGAL_REQUEST, ASC_READ_BOUNDARY_VIOLATION);
	/*
	 * SOBR zones with URSWRZ = 0: no read past a write pointer (libzbc
	 * 01_sk_ascq_check); a read may cross from one SOBR zone into the next (the
	 * boundary rule is SWR's only).
	 */
	if (!zbc_urswrz(cmd->lu) && zbc_zone_is_sobr(first)) {
		for (struct zbc_zone *zone = first; zone <= last; zone++) {
			uint64_t zone_end = zone->start + zone->length;

			if (zone->condition != ZBC_ZC_FULL && zone->condition != ZBC_ZC_READ_ONLY &&
			    (end < zone_end ? end : zone_end) > zone->wp)
				return fail(cmd, SENSE_KEY_ILLEGAL_REQUEST, ASC_ATTEMPT_TO_READ_INVALID_DATA);
		}
	}
	if (zbc_urswrz(cmd->lu) || first->type != ZBC_ZONE_TYPE_SEQUENTIAL_WRITE_REQUIRED)
		return SCSI_OK;
	/* URSWRZ = 0: no read across an SWR zone boundary (libzbc 01/061, 01/080-083) ... */
	if (first != last)
		return fail(cmd, SENSE_KEY_ILLEGAL_REQUEST, ASC_READ_BOUNDARY_VIOLATION);
	/* ... nor past the write pointer (libzbc 01/060, 01/064).  FULL and READ ONLY zones have no valid one. */
	if (first->condition != ZBC_ZC_FULL && first->condition != ZBC_ZC_READ_ONLY && end > first->wp)
		return fail(cmd, SENSE_KEY_ILLEGAL_REQUEST, ASC_ATTEMPT_TO_READ_INVALID_DATA);
	return SCSI_OK;
}

/* ---- unwritten blocks (zbc.h) ---- */

/*
 * SWR and SOBR zones: every block written since the last reset lies below
 * the write pointer, so a reset need not release the zone's blocks.  Not
 * SWP zones: a host-aware host writes them anywhere (the write pointer is
 * the highest block written), so their resets release the space.
 */
bool zbc_zone_keeps_blocks(const struct zbc_zone *zone)
{
	return zone->type == ZBC_ZONE_TYPE_SEQUENTIAL_WRITE_REQUIRED || zbc_zone_is_sobr(zone);
}

int zbc_unwritten_plan(const struct scsi_lu *lu, uint64_t lba, uint64_t nblocks, struct zbc_unwritten **out)
{
	struct zbc_state *z = lu->zbc;
	uint64_t end = lba + nblocks;
	struct zbc_zone *first, *last;
	struct zbc_unwritten *u;

	*out = NULL;
	if (!z || nblocks == 0 || scsi_lu_range_bad(lu, lba, nblocks))
		return 0;
	first = zbc_zone_of(z, lba);
	last = zbc_zone_of(z, end - 1);
	u = NULL;
	for (struct zbc_zone *zone = first; zone <= last; zone++) {
		uint64_t zone_end = zone->start + zone->length;
		uint64_t from = zone->wp > lba ? zone->wp : lba;
		uint64_t to = zone_end < end ? zone_end : end;

		/* FULL zones hold their blocks (FINISH ZONE released the rest); OFFLINE ones are never read. */
		if (!zbc_zone_keeps_blocks(zone) || zone->condition == ZBC_ZC_FULL ||
		    zone->condition == ZBC_ZC_OFFLINE || from >= to)
			continue;
		if (!u) {
			u = malloc(sizeof(*u) + (size_t)(last - zone + 1) * sizeof(u->range[0]));
			if (!u)
				return -ENOMEM;
			u->n = 0;
		}
		/* Zones with nothing written at their start continue the previous range. */
		if (u->n && u->range[u->n - 1].lba + u->range[u->n - 1].nblocks == from)
			u->range[u->n - 1].nblocks += to - from;
		else
			u->range[u->n++] = (struct scsi_lba_range){ .lba = from, .nblocks = to - from };
	}
	*out = u;
	return 0;
}

void zbc_unwritten_zero(const struct zbc_unwritten *u, uint32_t block_size, uint64_t lba, uint8_t *buf,
			size_t buf_len)
{
	struct iovec iov = { .iov_base = buf, .iov_len = buf_len };
	struct scsi_sgl sgl = { .iov = &iov, .iovcnt = 1 };

	zbc_unwritten_zero_sgl(u, block_size, lba, &sgl);
}

void zbc_unwritten_zero_sgl(const struct zbc_unwritten *u, uint32_t block_size, uint64_t lba,
			    const struct scsi_sgl *sgl)
{
	for (unsigned i = 0; u && i < u->n; i++) {
		/* The range's bytes, as offsets into the blocks read from lba. */
		uint64_t from, to, piece_start = 0;

		if (u->range[i].lba + u->range[i].nblocks <= lba)
			continue;
		from = u->range[i].lba > lba ? (u->range[i].lba - lba) * block_size : 0;
		to = (u->range[i].lba + u->range[i].nblocks - lba) * block_size;
		for (unsigned k = 0; k < sgl->iovcnt && piece_start < to; k++) {
			uint64_t piece_end = piece_start + sgl->iov[k].iov_len;
			uint64_t a = from > piece_start ? from : piece_start;
			uint64_t b = to < piece_end ? to : piece_end;

			if (a < b)
				memset((uint8_t *)sgl->iov[k].iov_base + (a - piece_start), 0, b - a);
			piece_start = piece_end;
		}
	}
}

/* ---- write rules and tickets ---- */

static struct zbc_ticket **find_ticket(struct zbc_state *z, const struct scsi_cmd *cmd)
{
	struct zbc_ticket **pp;

	for (pp = &z->tickets; *pp; pp = &(*pp)->next)
		if ((*pp)->cmd == cmd)
			return pp;
	return NULL;
}

/* SWR (scsi_debug check_zbc_access_params; libzbc 01/070-077, 090-096, 170-176). */
static enum scsi_result check_swr_write(struct scsi_cmd *cmd, struct zbc_state *z, struct zbc_zone *zone,
					struct zbc_zone *last)
{
	uint64_t end = cmd->lba + cmd->nblocks;
	struct scsi_sense_info sense;

	if (last != zone)
		return fail(cmd, SENSE_KEY_ILLEGAL_REQUEST, ASC_WRITE_BOUNDARY_VIOLATION);
	/* A write to a FULL SWR zone is INVALID FIELD IN CDB (libzbc 01/073). */
	if (zone->condition == ZBC_ZC_FULL)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB));
	/* The write must start exactly at the write pointer. */
	if (cmd->lba != zone->wp)
		return fail(cmd, SENSE_KEY_ILLEGAL_REQUEST, ASC_UNALIGNED_WRITE_COMMAND);
	/* A write ending at or beyond the write pointer must end on a physical block boundary (01/075). */
	if (end != zone->start + zone->length && (end - zone->start) % z->lblocks_per_pblock != 0)
		return fail(cmd, SENSE_KEY_ILLEGAL_REQUEST, ASC_UNALIGNED_WRITE_COMMAND);
	if ((zone->condition == ZBC_ZC_EMPTY || zone->condition == ZBC_ZC_CLOSED) && !zbc_zone_acquire_resource(z, &sense))
		return scsi_cmd_fail(cmd, sense);
	return SCSI_OK;
}

/*
 * SOBR (ZBC-2; ZBC-2; libzbc zbc_test_lib.sh; libzbc 01/074): a write may start at or
 * below the write pointer, never above it, and may run on into the next
 * SOBR zones (each of which it enters at its start); one that ends past the
 * write pointer ends on a physical block boundary (or at the zone end).  A
 * FULL zone takes writes (all below its write pointer).  No open zone
 * resources are involved.
 */
static enum scsi_result check_sobr_write(struct scsi_cmd *cmd, struct zbc_state *z, struct zbc_zone *zone,
					 struct zbc_zone *last)
{
	uint64_t end = cmd->lba + cmd->nblocks;

	if (zone->condition != ZBC_ZC_FULL && cmd->lba > zone->wp)
		return fail(cmd, SENSE_KEY_ILLEGAL_REQUEST, ASC_UNALIGNED_WRITE_COMMAND);
	if (last->condition != ZBC_ZC_FULL && end > last->wp && end != last->start + last->length &&
	    (end - last->start) % z->lblocks_per_pblock != 0)
		return fail(cmd, SENSE_KEY_ILLEGAL_REQUEST, ASC_UNALIGNED_WRITE_COMMAND);
	return SCSI_OK;
}

/* The write's state change of one zone: implicit open, write pointer, FULL at the end. */
static void advance(struct zbc_state *z, struct zbc_zone *zone, uint64_t lba, uint64_t end)
{
	uint64_t zone_end = zone->start + zone->length;
	uint64_t part_start = lba > zone->start ? lba : zone->start;
	uint64_t part_end = end < zone_end ? end : zone_end;

	if (zone->condition == ZBC_ZC_EMPTY || zone->condition == ZBC_ZC_CLOSED)
		zbc_zone_set_condition(z, zone, ZBC_ZC_IMPLICITLY_OPENED);
	if (zone->type == ZBC_ZONE_TYPE_SEQUENTIAL_WRITE_PREFERRED || zbc_zone_is_sobr(zone)) {
		/*
		 * SWP: writes anywhere; the device tracks the highest written LBA
		 * and NON_SEQ (scsi_debug zbc_inc_wp).  SOBR: writes at or below
		 * the write pointer, which only moves up.
		 */
		if (part_start != zone->wp && !zbc_zone_is_sobr(zone))
			zone->non_seq = true;
		if (zone->condition != ZBC_ZC_FULL && part_end > zone->wp)
			zone->wp = part_end;
	} else {
		zone->wp = part_end;
	}
	if (zone->condition != ZBC_ZC_FULL && zone->wp >= zone_end)
		zbc_zone_set_condition(z, zone, ZBC_ZC_FULL);
	zbc_zone_changed(z, zone);
}

enum scsi_result zbc_write_begin(struct scsi_cmd *cmd)
{
	struct zbc_state *z = cmd->lu ? cmd->lu->zbc : NULL;
	struct zbc_zone *first, *last;
	struct zbc_ticket *t;
	struct scsi_sense_info sense;
	uint32_t count;
	enum scsi_result r;

	if (!zones_spanned(cmd, &first, &last))
		return SCSI_OK;
	for (struct zbc_zone *zone = first; zone <= last; zone++) {
		if (zone->type == ZBC_ZONE_TYPE_GAP)
			return fail(cmd, SENSE_KEY_ILLEGAL_REQUEST, ASC_ATTEMPT_TO_ACCESS_GAP_ZONE);
		if (zbc_zone_fault_sense(zone, &sense))
			return scsi_cmd_fail(cmd, sense);
	}
	/* No write may cross into a zone of another type: WRITE BOUNDARY VIOLATION (libzbc ZT_DISALLOW_WRITE_XTYPE). */
	if (first->type != last->type)
		return fail(cmd, SENSE_KEY_ILLEGAL_REQUEST, ASC_WRITE_BOUNDARY_VIOLATION);
	if (first->type == ZBC_ZONE_TYPE_CONVENTIONAL)
		return SCSI_OK;
	if (first->type == ZBC_ZONE_TYPE_SEQUENTIAL_WRITE_REQUIRED || zbc_zone_is_sobr(first)) {
		r = zbc_zone_is_sobr(first) ? check_sobr_write(cmd, z, first, last) : check_swr_write(cmd, z, first, last);
		if (r != SCSI_OK)
			return r;
	}
	count = zbc_zone_index(z, last) - zbc_zone_index(z, first) + 1;
	t = calloc(1, sizeof(*t) + count * sizeof(t->saved[0]));
	if (!t)
		return scsi_cmd_fail(cmd, scsi_sense_from_errno(ENOMEM, true));
	t->cmd = cmd;
	t->first = zbc_zone_index(z, first);
	t->count = count;
	for (uint32_t i = 0; i < count; i++) {
		struct zbc_zone *zone = first + i;

		t->saved[i].wp = zone->wp;
		t->saved[i].condition = zone->condition;
		t->saved[i].non_seq = zone->non_seq;
		advance(z, zone, cmd->lba, cmd->lba + cmd->nblocks);
		t->saved[i].seq_after = zone->seq;
	}
	t->next = z->tickets;
	z->tickets = t;
	return SCSI_OK;
}

/* Puts a zone back as the failed write found it, if nothing else changed it since. */
static void roll_back(struct zbc_state *z, struct zbc_zone *zone, const struct zbc_saved *saved)
{
	enum zbc_zone_condition condition = saved->condition;

	if (zone->seq != saved->seq_after)
		return;
	/* Re-opening needs a resource the zone may have given up (it became FULL): else it comes back CLOSED. */
	if (zbc_zone_uses_resources(zone) && zbc_condition_is_open(condition) &&
	    !zbc_condition_is_open(zone->condition) && z->max_open &&
	    z->nr_implicit_open + z->nr_explicit_open >= z->max_open)
		condition = saved->wp == zone->start ? ZBC_ZC_EMPTY : ZBC_ZC_CLOSED;
	zone->wp = saved->wp;
	zone->non_seq = saved->non_seq;
	zbc_zone_set_condition(z, zone, condition);
	zbc_zone_changed(z, zone);
}

void zbc_write_end(struct scsi_cmd *cmd, bool ok)
{
	if (cmd->lu)
		zbc_write_end_on(cmd->lu, cmd, ok);
}

void zbc_write_end_on(struct scsi_lu *lu, struct scsi_cmd *cmd, bool ok)
{
	struct zbc_state *z = lu->zbc;
	struct zbc_ticket **pp, *t;

	if (!z || !z->tickets || !(pp = find_ticket(z, cmd)))
		return;
	t = *pp;
	*pp = t->next;
	for (uint32_t i = 0; i < t->count && !ok; i++)
		roll_back(z, &z->zones[t->first + i], &t->saved[i]);
	free(t);
}

void zbc_cmd_complete(struct scsi_cmd *cmd)
{
	struct zbc_state *z = cmd->lu ? cmd->lu->zbc : NULL;

	if (z && z->tickets)
		zbc_write_end(cmd, cmd->status == SCSI_STATUS_GOOD);
}

void zbc_rw_fini(struct zbc_state *z)
{
	while (z->tickets) {
		struct zbc_ticket *t = z->tickets;
		z->tickets = t->next;
		free(t);
	}
}
