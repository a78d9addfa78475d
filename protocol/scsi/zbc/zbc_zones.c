/*
 * The zone engine: zone layout and set-up, the zone condition state machine
 * and open zone resources.  Facts: ZBC-2, as Linux sd_zbc.c, scsi_debug and libzbc implement it (from Linux
 * scsi_debug and sd_zbc, tcmu-runner file_zbc.c, libzbc's 01_sk_ascq_check
 * and 02_state_machine_check scripts).
 *
 * Not here: the read/write rules, write tickets and deferral (zbc_rw.c), the
 * state file (zbc_persist.c), REPORT ZONES (zbc_in.c), ZBC OUT (zbc_out.c),
 * ZBC-2 zone domains, realms, SOBR and gap zones.
 *
 * Everything runs on the loop thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zbc/zbc.h"

bool zbc_lu_is_zoned(const struct scsi_lu *lu)
{
	return lu && (lu->kind == SCSI_LU_ZBC_HM || lu->kind == SCSI_LU_ZBC_HA);
}

uint8_t zbc_rc_basis(const struct scsi_lu *lu)
{
	/* ZBC READ CAPACITY(16): RC BASIS 01b = the RETURNED LOGICAL BLOCK ADDRESS is the last LBA of the LU. */
	return zbc_lu_is_zoned(lu) ? 1 : 0;
}

/* ---- conditions and open zone resources ---- */

void zbc_zone_set_condition(struct zbc_state *z, struct zbc_zone *zone, enum zbc_zone_condition condition)
{
	if (zbc_zone_uses_resources(zone)) {
		if (zone->condition == ZBC_ZC_IMPLICITLY_OPENED)
			z->nr_implicit_open--;
		else if (zone->condition == ZBC_ZC_EXPLICITLY_OPENED)
			z->nr_explicit_open--;
		if (condition == ZBC_ZC_IMPLICITLY_OPENED)
			z->nr_implicit_open++;
		else if (condition == ZBC_ZC_EXPLICITLY_OPENED)
			z->nr_explicit_open++;
	}
	zone->condition = condition;
}

/* ZBC CLOSE: an open zone becomes CLOSED, or EMPTY if nothing was written (scsi_debug zbc_close_zone). */
static void close_zone(struct zbc_state *z, struct zbc_zone *zone)
{
	zbc_zone_set_condition(z, zone, zone->wp == zone->start ? ZBC_ZC_EMPTY : ZBC_ZC_CLOSED);
	zbc_zone_changed(z, zone);
}

bool zbc_zone_fault_sense(const struct zbc_zone *zone, struct scsi_sense_info *sense)
{
	if (zone->condition == ZBC_ZC_OFFLINE) {
		*sense = sense_make(SENSE_KEY_DATA_PROTECT, ASC_ZONE_IS_OFFLINE);
		return true;
	}
	if (zone->condition == ZBC_ZC_READ_ONLY) {
		*sense = sense_make(SENSE_KEY_DATA_PROTECT, ASC_ZONE_IS_READ_ONLY);
		return true;
	}
	/* ZBC-2: a zone of a realm active in the other domain (zbc_domains.c). */
	if (zone->condition == ZBC_ZC_INACTIVE) {
		*sense = sense_make(SENSE_KEY_DATA_PROTECT, ASC_ZONE_IS_INACTIVE);
		return true;
	}
	return false;
}

/*
 * Makes room for one more open SWR zone (ZBC-2 open zone resources; Linux scsi_debug): with MAX zones
 * open, an implicitly opened zone is closed first; if all MAX are explicitly
 * open, DATA PROTECT, INSUFFICIENT ZONE RESOURCES.
 */
bool zbc_zone_acquire_resource(struct zbc_state *z, struct scsi_sense_info *sense)
{
	if (z->max_open == 0)
		return true;
	if (z->nr_explicit_open >= z->max_open) {
		*sense = sense_make(SENSE_KEY_DATA_PROTECT, ASC_INSUFFICIENT_ZONE_RESOURCES);
		return false;
	}
	if (z->nr_implicit_open + z->nr_explicit_open >= z->max_open) {
		for (uint32_t i = 0; i < z->nr_zones; i++) {
			struct zbc_zone *victim = &z->zones[i];
			if (zbc_zone_uses_resources(victim) && victim->condition == ZBC_ZC_IMPLICITLY_OPENED) {
				close_zone(z, victim);
				break;
			}
		}
	}
	return true;
}

bool zbc_zone_open(struct zbc_state *z, struct zbc_zone *zone, struct scsi_sense_info *sense)
{
	if (zbc_zone_fault_sense(zone, sense))
		return false;
	switch (zone->condition) {
	case ZBC_ZC_EXPLICITLY_OPENED:
	case ZBC_ZC_FULL:
	case ZBC_ZC_NOT_WRITE_POINTER:
	case ZBC_ZC_READ_ONLY:
	case ZBC_ZC_OFFLINE:
	case ZBC_ZC_INACTIVE:
		/* OPEN of an EXPLICITLY OPENED or FULL zone is a no-op (libzbc 02/009, 02/021). */
		return true;
	case ZBC_ZC_IMPLICITLY_OPENED:
		/* Becomes explicit and keeps its resource (libzbc 02/005). */
		break;
	case ZBC_ZC_EMPTY:
	case ZBC_ZC_CLOSED:
		if (zbc_zone_uses_resources(zone) && !zbc_zone_acquire_resource(z, sense))
			return false;
		break;
	}
	zbc_zone_set_condition(z, zone, ZBC_ZC_EXPLICITLY_OPENED);
	zbc_zone_changed(z, zone);
	return true;
}

bool zbc_zone_close(struct zbc_state *z, struct zbc_zone *zone, struct scsi_sense_info *sense)
{
	if (zbc_zone_fault_sense(zone, sense))
		return false;
	/* CLOSE of an EMPTY, CLOSED or FULL zone is a no-op (libzbc 02/002, 02/018, 02/022). */
	if (zbc_condition_is_open(zone->condition))
		close_zone(z, zone);
	return true;
}

void zbc_zone_fill(struct zbc_state *z, struct zbc_zone *zone)
{
	zbc_zone_set_condition(z, zone, ZBC_ZC_FULL);
	zone->wp = zone->start + zone->length;
	zone->non_seq = false;
	zone->reset_recommended = false;
	zbc_zone_changed(z, zone);
}

bool zbc_zone_finish(struct zbc_state *z, struct zbc_zone *zone, struct scsi_sense_info *sense)
{
	if (zbc_zone_fault_sense(zone, sense))
		return false;
	/* An SOBR zone cannot be finished, whatever its condition (libzbc 02/003, 02/007, 02/023). */
	if (zbc_zone_is_sobr(zone)) {
		*sense = sense_invalid_field_in_cdb(2, -1);
		return false;
	}
	switch (zone->condition) {
	case ZBC_ZC_FULL:
	case ZBC_ZC_NOT_WRITE_POINTER:
	case ZBC_ZC_READ_ONLY:
	case ZBC_ZC_OFFLINE:
	case ZBC_ZC_INACTIVE:
		return true;
	case ZBC_ZC_EMPTY:
	case ZBC_ZC_CLOSED:
		/*
		 * Finishing an EMPTY or CLOSED zone passes through an open
		 * condition (ZBC 4.4.3.5.2, cited by libzbc 01/140-141): with all
		 * MAX resources explicitly open it fails with INSUFFICIENT ZONE
		 * RESOURCES.  FINISH ALL never does (zbc_out.c).
		 */
		if (zbc_zone_uses_resources(zone) && z->max_open && z->nr_explicit_open >= z->max_open) {
			*sense = sense_make(SENSE_KEY_DATA_PROTECT, ASC_INSUFFICIENT_ZONE_RESOURCES);
			return false;
		}
		break;
	case ZBC_ZC_IMPLICITLY_OPENED:
	case ZBC_ZC_EXPLICITLY_OPENED:
		break;
	}
	zbc_zone_fill(z, zone);
	return true;
}

void zbc_zone_empty(struct zbc_state *z, struct zbc_zone *zone)
{
	zbc_zone_set_condition(z, zone, ZBC_ZC_EMPTY);
	zone->wp = zone->start;
	zone->non_seq = false;
	zone->reset_recommended = false;
	zbc_zone_changed(z, zone);
}

/* Calls set for every write pointer zone whose write pointer may move (not READ ONLY, OFFLINE or INACTIVE). */
static void each_movable_zone(struct scsi_lu *lu, void (*set)(struct zbc_state *z, struct zbc_zone *zone))
{
	struct zbc_state *z = lu->zbc;

	if (!z)
		return;
	for (uint32_t i = 0; i < z->nr_zones; i++) {
		struct zbc_zone *zone = &z->zones[i];
		if (zbc_is_write_pointer_zone(zone) && zone->condition != ZBC_ZC_READ_ONLY &&
		    zone->condition != ZBC_ZC_OFFLINE && zone->condition != ZBC_ZC_INACTIVE)
			set(z, zone);
	}
}

void zbc_reset_all_zones(struct scsi_lu *lu)
{
	each_movable_zone(lu, zbc_zone_empty);
}

void zbc_fill_all_zones(struct scsi_lu *lu)
{
	each_movable_zone(lu, zbc_zone_fill);
}

/* ---- set-up ---- */

int zbc_init(struct scsi_lu *lu, char *err, size_t errlen)
{
	const struct scsi_lu_params *p = &lu->params;
	struct zbc_state *z;
	uint64_t zone_size, nr_zones;

	if (!zbc_lu_is_zoned(lu) || lu->zbc)
		return 0;
	zone_size = p->zone_size ? p->zone_size : (256ull << 20) / lu->block_size;
	if (zone_size == 0 || (zone_size & (zone_size - 1)) != 0) {
		snprintf(err, errlen, "zone size %llu blocks is not a power of two", (unsigned long long)zone_size);
		return -1;
	}
	if (lu->num_blocks == 0) {
		snprintf(err, errlen, "a zoned LU needs a capacity of at least one block");
		return -1;
	}
	nr_zones = (lu->num_blocks + zone_size - 1) / zone_size;
	/* Every zone descriptor of a full REPORT ZONES must fit a 32-bit transfer. */
	if (nr_zones > (UINT32_MAX - 64) / 64) {
		snprintf(err, errlen, "%llu zones are too many", (unsigned long long)nr_zones);
		return -1;
	}
	if (p->conventional_zones > nr_zones) {
		snprintf(err, errlen, "%u conventional zones asked for, the LU has %llu zones",
			 p->conventional_zones, (unsigned long long)nr_zones);
		return -1;
	}
	z = calloc(1, sizeof(*z));
	if (z)
		z->zones = calloc(nr_zones, sizeof(*z->zones));
	if (!z || !z->zones) {
		free(z);
		snprintf(err, errlen, "out of memory for %llu zones", (unsigned long long)nr_zones);
		return -1;
	}
	z->nr_zones = (uint32_t)nr_zones;
	z->zone_size = zone_size;
	while ((1ull << z->zone_shift) < zone_size)
		z->zone_shift++;
	z->nr_conventional = p->conventional_zones;
	z->host_aware = lu->kind == SCSI_LU_ZBC_HA;
	z->max_open = z->host_aware ? 0 : p->max_open_zones;
	z->lblocks_per_pblock = 1u << (p->lbppbe & 0x0f);
	z->state_fd = -1;
	pthread_mutex_init(&z->shadow_lock, NULL);
	pthread_mutex_init(&z->file_lock, NULL);
	for (uint32_t i = 0; i < z->nr_zones; i++) {
		struct zbc_zone *zone = &z->zones[i];

		zone->start = (uint64_t)i * zone_size;
		/* Only the last zone may be shorter (a "runt"; Linux sd_zbc accepts it). */
		zone->length = lu->num_blocks - zone->start < zone_size ? lu->num_blocks - zone->start : zone_size;
		if (i < z->nr_conventional) {
			zone->type = ZBC_ZONE_TYPE_CONVENTIONAL;
			zone->condition = ZBC_ZC_NOT_WRITE_POINTER;
		} else {
			zone->type = z->host_aware ? ZBC_ZONE_TYPE_SEQUENTIAL_WRITE_PREFERRED
						   : ZBC_ZONE_TYPE_SEQUENTIAL_WRITE_REQUIRED;
			zone->condition = ZBC_ZC_EMPTY;
		}
		zone->wp = zone->start;
	}
	if (zbc_domains_setup(lu, z, err, errlen) != 0) {
		free(z->zones);
		free(z);
		return -1;
	}
	lu->zbc = z;
	if (zbc_state_open(lu, err, errlen) != 0) {
		zbc_fini(lu);
		return -1;
	}
	return 0;
}

void zbc_fini(struct scsi_lu *lu)
{
	struct zbc_state *z = lu->zbc;

	if (!z)
		return;
	zbc_rw_fini(z);
	zbc_state_close(z);
	pthread_mutex_destroy(&z->shadow_lock);
	pthread_mutex_destroy(&z->file_lock);
	free(z->zones);
	free(z);
	lu->zbc = NULL;
}

int zbc_set_condition(struct scsi_lu *lu, uint64_t zone_start, enum zbc_zone_condition condition,
		      char *err, size_t errlen)
{
	struct zbc_state *z = lu->zbc;
	struct zbc_zone *zone;

	if (!z) {
		snprintf(err, errlen, "LUN %u is not zoned", lu->lun);
		return -1;
	}
	if (zone_start >= lu->num_blocks || zbc_zone_of(z, zone_start)->start != zone_start) {
		snprintf(err, errlen, "LBA %llu is not the start of a zone (zones are %llu blocks)",
			 (unsigned long long)zone_start, (unsigned long long)z->zone_size);
		return -1;
	}
	zone = zbc_zone_of(z, zone_start);
	switch (condition) {
	case ZBC_ZC_OFFLINE:
	case ZBC_ZC_READ_ONLY:
		zbc_zone_set_condition(z, zone, condition);
		break;
	case ZBC_ZC_EMPTY:
		/* Repair: back to the condition of a new zone. */
		if (zbc_is_write_pointer_zone(zone)) {
			zbc_zone_set_condition(z, zone, ZBC_ZC_EMPTY);
			zone->wp = zone->start;
			zone->non_seq = false;
		} else {
			zone->condition = ZBC_ZC_NOT_WRITE_POINTER;
		}
		/* Zone domains: a zone of a realm active in the other domain comes back INACTIVE. */
		if (zbc_domains_zone_inactive(z, zone)) {
			zbc_zone_set_condition(z, zone, ZBC_ZC_INACTIVE);
			zone->wp = zone->start;
		}
		break;
	case ZBC_ZC_NOT_WRITE_POINTER:
	case ZBC_ZC_IMPLICITLY_OPENED:
	case ZBC_ZC_EXPLICITLY_OPENED:
	case ZBC_ZC_CLOSED:
	case ZBC_ZC_FULL:
	case ZBC_ZC_INACTIVE:
		snprintf(err, errlen, "zone condition %xh cannot be set from the configuration", (unsigned)condition);
		return -1;
	}
	zbc_zone_changed(z, zone);
	if (zbc_state_write_now(z, zbc_zone_index(z, zone)) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", z->path, strerror(errno));
		return -1;
	}
	return 0;
}


uint32_t scsi_lu_zone_count(const struct scsi_lu *lu)
{
	return lu->zbc ? lu->zbc->nr_zones : 0;
}

int scsi_lu_set_zone_fault(struct scsi_lu *lu, uint32_t zone_index, enum scsi_zone_fault fault, char *err,
			   size_t errlen)
{
	struct zbc_state *z = lu->zbc;
	struct zbc_zone *zone;
	enum zbc_zone_condition want = ZBC_ZC_EMPTY;

	if (!z || zone_index >= z->nr_zones) {
		snprintf(err, errlen, "zone %u does not exist (LUN %u has %u zones)", zone_index, lu->lun,
			 z ? z->nr_zones : 0);
		return -1;
	}
	zone = &z->zones[zone_index];
	switch (fault) {
	case SCSI_ZONE_FAULT_NONE:
		if (zone->condition != ZBC_ZC_OFFLINE && zone->condition != ZBC_ZC_READ_ONLY)
			return 0;
		want = ZBC_ZC_EMPTY;
		break;
	case SCSI_ZONE_FAULT_OFFLINE:
		want = ZBC_ZC_OFFLINE;
		break;
	case SCSI_ZONE_FAULT_READ_ONLY:
		want = ZBC_ZC_READ_ONLY;
		break;
	}
	if (zone->condition == want)
		return 0;
	return zbc_set_condition(lu, zone->start, want, err, errlen);
}

void zbc_power_on(struct scsi_lu *lu)
{
	struct zbc_state *z = lu->zbc;
	struct scsi_sense_info unused;

	/* ZBC-2 4.4.3.2.x (zone condition after power on): open zones come back CLOSED (or EMPTY at their start). */
	for (uint32_t i = 0; z && i < z->nr_zones; i++)
		if (zbc_condition_is_open(z->zones[i].condition))
			(void)zbc_zone_close(z, &z->zones[i], &unused);
}
