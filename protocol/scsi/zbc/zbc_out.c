/*
 * ZBC OUT (94h): CLOSE ZONE (01h), FINISH ZONE (02h), OPEN ZONE (03h) and
 * RESET WRITE POINTER (04h), each for one zone (ZONE ID) or, with ALL = 1,
 * for every zone it applies to (ZBC-2 ZBC OUT; sg3_utils sg_zone.c).  ZONE COUNT (bytes 12-13,
 * ZBC-2) is served on zone domain LUs (kind zbc-zd): that many zones from
 * ZONE ID (0 means 1), each a write pointer zone, all checked before any
 * changes; on ZBC-1 LUs a non-zero value is INVALID FIELD IN CDB.
 *
 * OPEN and CLOSE change only volatile state: no I/O.  FINISH and RESET
 * WRITE POINTER write the zone records, and release blocks in the backend
 * (discard: later reads return zeros): FINISH those above the write
 * pointer, a reset the blocks of SWP zones (the others keep theirs and
 * read as zeros at and above the write pointer: zbc.h, "Unwritten
 * blocks").  RESET WRITE POINTER and FINISH
 * ZONE take their zones' blocks with an exclusive LBA lock (zbc_out_lock,
 * sched/lba_lock.c): the scheduler starts a reset only once the writes in
 * flight to its zones are done, and starts writes to them only once the
 * discard is, so no acknowledged write lands before a discard that was
 * meant to precede it, or after one that was meant to follow it.
 */
#include <errno.h>
#include <stdlib.h>

#include "sched/task_set.h"
#include "zbc/zbc.h"

/*
 * CDB: b1 bits 4:0 SERVICE ACTION, b2-9 ZONE ID, b14 bit 0 ALL.  With
 * ALL = 1 the ZONE ID is ignored (libzbc 01/025, 033, 043, 053: not an error
 * even past the capacity or on a conventional zone).  The checks depend only
 * on the CDB and the zone layout, which never changes.
 */
static int top_bit(uint8_t v)
{
	int bit = 7;

	while (bit > 0 && !(v & (1u << bit)))
		bit--;
	return bit;
}

/* ZONE COUNT (ZBC-2; 0 means 1). */
static uint32_t zone_count(const struct scsi_cmd *cmd)
{
	uint16_t n = get_be16(cmd->cdb + 12);

	return n ? n : 1;
}

enum scsi_result zbc_out_parse(struct scsi_cmd *cmd)
{
	struct zbc_state *z = cmd->lu->zbc;
	uint64_t zone_id = get_be64(cmd->cdb + 2);
	struct zbc_zone *zone;
	uint32_t first;

	if (!z)
		return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
	/* ZBC-1 LUs: ZONE COUNT is reserved (field pointer on its highest set bit). */
	if (!z->realm_zones && (cmd->cdb[12] || cmd->cdb[13]))
		return scsi_cmd_fail(cmd, cmd->cdb[12] ? sense_invalid_field_in_cdb(12, top_bit(cmd->cdb[12]))
						       : sense_invalid_field_in_cdb(13, top_bit(cmd->cdb[13])));
	if (cmd->cdb[14] & 0x01)
		return SCSI_OK;
	cmd->lba = zone_id;
	/* ZONE ID past the capacity: LOGICAL BLOCK ADDRESS OUT OF RANGE (ZBC-2; libzbc 01/024 accepts it). */
	if (zone_id >= cmd->lu->num_blocks)
		return scsi_cmd_fail(cmd, sense_lba_out_of_range());
	zone = zbc_zone_of(z, zone_id);
	/* Not the start of a zone, or a zone without write pointer: INVALID FIELD IN CDB (libzbc 01/020, 023). */
	if (zone->start != zone_id || !zbc_is_write_pointer_zone(zone))
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, -1));
	/* ZONE COUNT zones from ZONE ID: all within the LU and all write pointer zones. */
	first = zbc_zone_index(z, zone);
	if (zone_count(cmd) > z->nr_zones - first)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(12, -1));
	for (uint32_t i = first; i < first + zone_count(cmd); i++)
		if (!zbc_is_write_pointer_zone(&z->zones[i]))
			return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(12, -1));
	return SCSI_OK;
}

/* The first zone of the ZONE ID / ZONE COUNT range. */
static uint32_t range_first(struct scsi_cmd *cmd, struct zbc_state *z)
{
	return zbc_zone_index(z, zbc_zone_of(z, cmd->lba));
}

/* The blocks of the range (the last zone may be short). */
static uint64_t range_blocks(struct scsi_cmd *cmd, struct zbc_state *z)
{
	const struct zbc_zone *last = &z->zones[range_first(cmd, z) + zone_count(cmd) - 1];

	return last->start + last->length - cmd->lba;
}

/* The zones of a ZONE COUNT range must all be fit for the action: the sense of the first one that is not. */
static bool range_faulty(struct scsi_cmd *cmd, struct zbc_state *z, struct scsi_sense_info *sense)
{
	uint32_t first = range_first(cmd, z);

	for (uint32_t i = first; i < first + zone_count(cmd); i++)
		if (zbc_zone_fault_sense(&z->zones[i], sense))
			return true;
	return false;
}

/* OPEN or CLOSE of a ZONE COUNT range: all or nothing (OPEN counts the resources first, as OPEN ALL). */
static enum scsi_result open_close_range(struct scsi_cmd *cmd, struct zbc_state *z, bool open)
{
	uint32_t first = range_first(cmd, z), need = 0;
	struct scsi_sense_info sense;

	if (range_faulty(cmd, z, &sense))
		return scsi_cmd_fail(cmd, sense);
	for (uint32_t i = first; open && i < first + zone_count(cmd); i++)
		if ((z->zones[i].condition == ZBC_ZC_EMPTY || z->zones[i].condition == ZBC_ZC_CLOSED) &&
		    zbc_zone_uses_resources(&z->zones[i]))
			need++;
	if (open && z->max_open && z->nr_explicit_open + need > z->max_open)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_DATA_PROTECT, ASC_INSUFFICIENT_ZONE_RESOURCES));
	for (uint32_t i = first; i < first + zone_count(cmd); i++) {
		bool ok = open ? zbc_zone_open(z, &z->zones[i], &sense) : zbc_zone_close(z, &z->zones[i], &sense);

		if (!ok)
			return scsi_cmd_fail(cmd, sense); /* not reached: checked above */
	}
	return SCSI_OK;
}

/* ---- CLOSE, OPEN ---- */

static enum scsi_result close_all(struct zbc_state *z)
{
	struct scsi_sense_info unused;

	/* CLOSE ALL: every open zone (libzbc 02/030, 02/038). */
	for (uint32_t i = 0; i < z->nr_zones; i++)
		if (z->zones[i].condition == ZBC_ZC_IMPLICITLY_OPENED ||
		    z->zones[i].condition == ZBC_ZC_EXPLICITLY_OPENED)
			zbc_zone_close(z, &z->zones[i], &unused);
	return SCSI_OK;
}

static enum scsi_result open_all(struct scsi_cmd *cmd, struct zbc_state *z)
{
	struct scsi_sense_info sense;
	uint32_t closed_swr = 0;

	for (uint32_t i = 0; i < z->nr_zones; i++)
		if (z->zones[i].condition == ZBC_ZC_CLOSED &&
		    z->zones[i].type == ZBC_ZONE_TYPE_SEQUENTIAL_WRITE_REQUIRED)
			closed_swr++;
	/*
	 * OPEN ALL opens every CLOSED zone (EMPTY and open zones stay as they
	 * are: libzbc 02/025, 02/029).  If the explicitly opened plus the
	 * CLOSED SWR zones exceed the limit, nothing is opened: DATA PROTECT,
	 * INSUFFICIENT ZONE RESOURCES (libzbc 01/022; scsi_debug resp_open_zone).
	 */
	if (z->max_open && z->nr_explicit_open + closed_swr > z->max_open)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_DATA_PROTECT, ASC_INSUFFICIENT_ZONE_RESOURCES));
	/* Mark first: zones that the opens below close implicitly must not be opened in turn. */
	for (uint32_t i = 0; i < z->nr_zones; i++)
		z->zones[i].mark = z->zones[i].condition == ZBC_ZC_CLOSED;
	for (uint32_t i = 0; i < z->nr_zones; i++) {
		if (!z->zones[i].mark)
			continue;
		z->zones[i].mark = false;
		if (!zbc_zone_open(z, &z->zones[i], &sense))
			return scsi_cmd_fail(cmd, sense); /* not reached: the count above leaves room */
	}
	return SCSI_OK;
}

/* ---- what FINISH ZONE and RESET WRITE POINTER do on a worker ---- */

/* The blocks a FINISH or a reset releases (their space goes back to the backend: later reads return zeros). */
struct zbc_release {
	uint32_t n;
	struct scsi_lba_range range[];
};

/* A release list for at most max ranges, as cmd's handler state; NULL on ENOMEM. */
static struct zbc_release *release_new(struct scsi_cmd *cmd, uint32_t max)
{
	struct zbc_release *r = malloc(sizeof(*r) + (size_t)(max ? max : 1) * sizeof(r->range[0]));

	if (!r)
		return NULL;
	r->n = 0;
	cmd->handler_state = r;
	cmd->handler_state_free = free;
	return r;
}

/*
 * FINISH ZONE: a zone that keeps its blocks at a reset (zbc_zone_keeps_blocks)
 * releases those between its write pointer and its end, which would read as
 * zeros no longer once the zone is FULL.  Call before the finish.
 */
static void release_tail(struct zbc_release *r, const struct zbc_zone *zone)
{
	uint64_t zone_end = zone->start + zone->length;

	if (zbc_zone_keeps_blocks(zone) && zone->wp < zone_end) /* a FULL zone's write pointer is its end */
		r->range[r->n++] = (struct scsi_lba_range){ .lba = zone->wp, .nblocks = zone_end - zone->wp };
}

static void release_and_persist_work(struct scsi_cmd *cmd)
{
	struct zbc_release *r = cmd->handler_state;
	struct scsi_lu *lu = cmd->lu;
	struct backend *be = lu->backend;
	int rc = 0;

	for (uint32_t i = 0; i < r->n && rc == 0; i++)
		rc = be->ops->discard(be, scsi_lu_offset(lu, r->range[i].lba), r->range[i].nblocks * lu->block_size);
	/* Zone management is durable when it completes, like a FUA write. */
	if (rc == 0)
		rc = cmd->cdb[14] & 0x01 ? zbc_persist_all(lu, BE_WRITE_FUA)
					 : zbc_persist_range(lu, cmd->lba, range_blocks(cmd, lu->zbc), BE_WRITE_FUA);
	if (rc < 0)
		scsi_cmd_fail_errno(cmd, rc, true);
}

/* ---- FINISH ---- */

static enum scsi_result finish(struct scsi_cmd *cmd, struct zbc_state *z, bool all)
{
	struct zbc_release *r = release_new(cmd, all ? z->nr_zones : zone_count(cmd));
	struct scsi_sense_info sense;
	struct zbc_zone *zone;
	uint64_t seq_before;

	if (!r)
		return scsi_cmd_fail(cmd, scsi_sense_from_errno(ENOMEM, true));
	if (all) {
		/*
		 * FINISH ALL: every open or CLOSED zone becomes FULL; EMPTY zones
		 * stay EMPTY (libzbc 02/027), and it never runs out of resources
		 * (libzbc 01/148-149).
		 */
		bool changed = false;

		/* ZBC-2, libzbc 02/031: not while an SOBR zone is open or CLOSED (one FINISH ALL would act on). */
		for (uint32_t i = 0; i < z->nr_zones; i++)
			if (zbc_zone_is_sobr(&z->zones[i]) &&
			    (zbc_condition_is_open(z->zones[i].condition) || z->zones[i].condition == ZBC_ZC_CLOSED))
				return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(14, 0));
		for (uint32_t i = 0; i < z->nr_zones; i++) {
			zone = &z->zones[i];
			if (zone->condition == ZBC_ZC_IMPLICITLY_OPENED || zone->condition == ZBC_ZC_EXPLICITLY_OPENED ||
			    zone->condition == ZBC_ZC_CLOSED) {
				release_tail(r, zone);
				zbc_zone_fill(z, zone);
				changed = true;
			}
		}
		return changed ? scsi_cmd_run_io(cmd, release_and_persist_work, NULL) : SCSI_OK;
	}
	if (zone_count(cmd) > 1) {
		/* A ZONE COUNT range: all checked first; FINISH of each never needs more than one resource at a time. */
		uint32_t first = range_first(cmd, z);

		if (range_faulty(cmd, z, &sense))
			return scsi_cmd_fail(cmd, sense);
		for (uint32_t i = first; i < first + zone_count(cmd); i++)
			if (zbc_zone_is_sobr(&z->zones[i]))
				return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(i == first ? 2 : 12, -1));
		for (uint32_t i = first; i < first + zone_count(cmd); i++) {
			release_tail(r, &z->zones[i]);
			if (!zbc_zone_finish(z, &z->zones[i], &sense))
				return scsi_cmd_fail(cmd, sense);
		}
		return scsi_cmd_run_io(cmd, release_and_persist_work, NULL);
	}
	zone = zbc_zone_of(z, cmd->lba);
	seq_before = zone->seq;
	release_tail(r, zone); /* a finish that fails runs no work: the range goes unused */
	if (!zbc_zone_finish(z, zone, &sense))
		return scsi_cmd_fail(cmd, sense);
	return zone->seq != seq_before ? scsi_cmd_run_io(cmd, release_and_persist_work, NULL) : SCSI_OK;
}

/* ---- RESET WRITE POINTER ---- */

/*
 * The reset holds its zones' blocks exclusively (zbc_out_lock): the writes
 * in flight to them have ended before it starts, and writes queued behind it
 * start after its release, checked against the reset write pointer.  Only
 * zones that do not keep their blocks (SWP: zbc_zone_keeps_blocks) release
 * them; the others read as zeros at and above the write pointer anyway.
 */
static enum scsi_result reset(struct scsi_cmd *cmd, struct zbc_state *z, bool all)
{
	struct zbc_release *r;
	struct scsi_sense_info sense;
	uint32_t first = all ? z->nr_conventional : range_first(cmd, z);
	uint32_t count = all ? z->nr_zones - z->nr_conventional : zone_count(cmd);
	bool changed = false;

	if (!all) {
		if (range_faulty(cmd, z, &sense))
			return scsi_cmd_fail(cmd, sense);
		if (z->zones[first].condition == ZBC_ZC_EMPTY && count == 1)
			return SCSI_OK; /* libzbc 02/004: EMPTY stays EMPTY, nothing to release */
	}
	r = release_new(cmd, count);
	if (!r)
		return scsi_cmd_fail(cmd, scsi_sense_from_errno(ENOMEM, true));
	/*
	 * RESET ALL: every write pointer zone that is not EMPTY (READ ONLY and
	 * OFFLINE zones are left alone); the write pointer goes back to the
	 * zone start and NON_SEQ / RESET are cleared.
	 */
	for (uint32_t i = first; i < first + count; i++) {
		struct zbc_zone *zone = &z->zones[i];

		if (!zbc_is_write_pointer_zone(zone) || zone->condition == ZBC_ZC_EMPTY ||
		    zbc_zone_fault_sense(zone, &sense))
			continue;
		zbc_zone_empty(z, zone);
		changed = true;
		if (!zbc_zone_keeps_blocks(zone))
			r->range[r->n++] = (struct scsi_lba_range){ .lba = zone->start, .nblocks = zone->length };
	}
	return changed ? scsi_cmd_run_io(cmd, release_and_persist_work, NULL) : SCSI_OK;
}

/*
 * The LBA lock of RESET WRITE POINTER and FINISH ZONE: their zones,
 * exclusively (with ALL, every zone from the first write pointer zone on).
 * Bad ZONE IDs were refused by parse.
 */
void zbc_out_lock(struct scsi_cmd *cmd)
{
	struct zbc_state *z = cmd->lu->zbc;

	cmd->lock.mode = SCSI_LBA_LOCK_EXCLUSIVE;
	if (cmd->cdb[14] & 0x01) {
		uint64_t start = z->nr_conventional < z->nr_zones ? z->zones[z->nr_conventional].start : cmd->lu->num_blocks;

		scsi_lba_lock_add(cmd, start, cmd->lu->num_blocks - start);
	} else {
		scsi_lba_lock_add(cmd, cmd->lba, range_blocks(cmd, z));
	}
}

enum scsi_result zbc_out_exec(struct scsi_cmd *cmd)
{
	struct zbc_state *z = cmd->lu->zbc;
	bool all = cmd->cdb[14] & 0x01;
	struct scsi_sense_info sense;

	switch (cmd->op->service_action) {
	case ZBC_SA_CLOSE_ZONE:
		if (all)
			return close_all(z);
		if (zone_count(cmd) > 1)
			return open_close_range(cmd, z, false);
		if (!zbc_zone_close(z, zbc_zone_of(z, cmd->lba), &sense))
			return scsi_cmd_fail(cmd, sense);
		return SCSI_OK;
	case ZBC_SA_OPEN_ZONE:
		if (all)
			return open_all(cmd, z);
		if (zone_count(cmd) > 1)
			return open_close_range(cmd, z, true);
		if (!zbc_zone_open(z, zbc_zone_of(z, cmd->lba), &sense))
			return scsi_cmd_fail(cmd, sense);
		return SCSI_OK;
	case ZBC_SA_FINISH_ZONE:
		return finish(cmd, z, all);
	case ZBC_SA_RESET_WRITE_POINTER:
		return reset(cmd, z, all);
	default:
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(1, 4));
	}
}
