/*
 * ZBC-2 zone domains and realms (the "zone domains" zoned block device
 * extension, B6h extension 2h; ZBC-2; libzbc zbc.h; docs/zbc.md): the zbc-zd
 * kind, a host-managed LU whose zones form two zone domains,
 *
 *   domain 0: the first zones, conventional (or, with params.sobr_zones,
 *             sequential or before required, SOBR, type 4h: zbc_rw.c);
 *   params.gap_zones gap zones (type 5h: ATTEMPT TO ACCESS GAP ZONE, 05/21/09);
 *   domain 1: as many zones again, sequential write required,
 *
 * cut into realms of params.realm_zones zones: realm r is zones
 * r * realm_zones .. of each domain.  A realm is active in one domain; its
 * zones in the other are INACTIVE (5h): reads, writes and zone management
 * there fail with DATA PROTECT, ZONE IS INACTIVE (07/2C/12).  The active
 * domain of a realm is its zones' conditions, so the zone state file keeps it.
 *
 * Commands (ZBC IN, 95h; the REPORT ZONES CDB layout: b2-9 locator LBA,
 * b10-13 ALLOCATION LENGTH, b14 reporting options; sg3_utils sg_rep_zones):
 *   REPORT REALMS (06h): 64-byte header (b0-3 descriptor bytes, b4-7
 *     REALMS COUNT, b8-11 REALM DESCRIPTOR LENGTH = 48, b12-19 NEXT REALM
 *     LOCATOR), descriptors: b0-3 REALM ID, b4-5 restrictions, b7 ACTIVE
 *     ZONE DOMAIN ID, then per domain its start and end LBA (b16-31, b32-47);
 *   REPORT ZONE DOMAINS (07h): header b0-3 descriptor bytes, b4-7 the
 *     bytes returned with the header (below), b8 domains supported, b9
 *     reported, b10 reporting options, b16-23 locator; 96-byte descriptors:
 *     b0 ZONE DOMAIN ID, b16-23 NUMBER OF ZONES, b24-31 start LBA, b32-39
 *     end LBA, b40 ZONE DOMAIN ZONE TYPE, VZDZT (below);
 *   ZONE ACTIVATE(16) (08h) and ZONE QUERY(16) (09h), ZONE ACTIVATE(32) and
 *     ZONE QUERY(32) (7Fh, F800h / F801h), all as libzbc builds them
 *     (lib/zbc_scsi.c zbc_scsi_zone_activate16 / 32; decode()).  Results
 *     as libzbc reads them: a 64-byte header (b0-3 descriptor bytes, b4-7
 *     the bytes returned, b8 NZ_VALID 80h / ZIWUP_VALID 40h / ACTIVATED
 *     01h, b9 unmet prerequisites, b10 OTHER ZONE DOMAIN ID, b11 ALL,
 *     b16-19 NUMBER OF ZONES, b24-29 ZONE ID WITH UNMET PREREQUISITE) and
 *     24-byte descriptors (b0 zone type, b1 bits 7:4 condition, b2 domain
 *     ID, b8-15 zone count, b16-23 first zone's LBA).
 *     The number of zones is the CDB's with ZSRC, else FSNOZ of the Zoned
 *     Block Device Control mode page (spc_mode_pages.c); 0 means the rest
 *     of ZONE ID's realm.  ZONE ID past the capacity: 05/21/00; ZONE ID
 *     and the number of zones past the last zone: 05/24/00 (libzbc
 *     03_xmr_command_check 101, 102); more realms than MAXIMUM ACTIVATION
 *     (same page): 05/24/00 (libzbc 100).
 *
 * Readings (ZBC-2 is not public: libzbc's and sg3_utils' field names
 * are followed): the zones named by ZONE ID and
 * NUMBER OF ZONES (0 means 1) may be in either domain and must cover whole
 * realms (else unmet prerequisite REALM ALIGNMENT, 04h); every realm they
 * name moves to OTHER ZONE DOMAIN ID (realms already there are left as they
 * are); the zones it leaves must be EMPTY (SWR) or NOT WRITE POINTER
 * (conventional) (else NOT EMPTY, 02h), the zones it enters INACTIVE (else
 * NOT INACTIVE, 01h).  SOBR zones left behind must be EMPTY too.  An unmet prerequisite is reported with GOOD status,
 * ACTIVATED = 0 and the first failing zone in ZIWUP; ZONE QUERY never
 * changes anything.  A conventional zone left behind loses its data (it is
 * deallocated, as RESET WRITE POINTER does to an SWR zone).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zbc/zbc.h"

#define HEADER_LEN 64
#define REALM_DESCRIPTOR_LEN 48
#define DOMAIN_DESCRIPTOR_LEN 96
#define ACTIVATION_DESCRIPTOR_LEN 24

#define UNMET_NOT_INACTIVE 0x01
#define UNMET_NOT_EMPTY 0x02
#define UNMET_REALM_ALIGNMENT 0x04

bool zbc_domains_enabled(const struct scsi_lu *lu)
{
	return lu->zbc && lu->zbc->realm_zones;
}

/* The index of the first zone of domain d. */
static uint32_t domain_start(const struct zbc_state *z, unsigned d)
{
	return d ? z->domain_zones + z->gap_zones : 0;
}

/* The domain of zone idx (2 for a gap zone) and its index within the domain. */
static unsigned domain_of(const struct zbc_state *z, uint32_t idx, uint32_t *in_domain)
{
	if (idx < z->domain_zones) {
		*in_domain = idx;
		return 0;
	}
	if (idx < domain_start(z, 1)) {
		*in_domain = 0;
		return 2;
	}
	*in_domain = idx - domain_start(z, 1);
	return 1;
}

/* The first zone of realm r in domain d. */
static struct zbc_zone *realm_zone(struct zbc_state *z, unsigned d, uint32_t r)
{
	return &z->zones[domain_start(z, d) + r * z->realm_zones];
}

/* A realm is active where its zones are not INACTIVE (domain 0 when neither is: a faulty zone). */
static unsigned active_domain(struct zbc_state *z, uint32_t r)
{
	return realm_zone(z, 0, r)->condition == ZBC_ZC_INACTIVE ? 1 : 0;
}

bool zbc_domains_zone_inactive(struct zbc_state *z, const struct zbc_zone *zone)
{
	uint32_t in_domain;
	unsigned d;

	if (!z->realm_zones)
		return false;
	d = domain_of(z, zbc_zone_index(z, zone), &in_domain);
	if (d > 1)
		return false;
	/* The realm is active where its zones are not INACTIVE: here, unless the other domain's zone is active. */
	return z->zones[domain_start(z, 1 - d) + in_domain].condition != ZBC_ZC_INACTIVE;
}

int zbc_domains_setup(struct scsi_lu *lu, struct zbc_state *z, char *err, size_t errlen)
{
	uint32_t rz = lu->params.realm_zones, gap = lu->params.gap_zones;

	if (rz == 0)
		return 0;
	if (z->zones[z->nr_zones - 1].length != z->zone_size || gap > z->nr_zones ||
	    z->nr_conventional * 2 + gap != z->nr_zones || z->nr_conventional % rz) {
		snprintf(err, errlen,
			 "zone domains need equal zones (%u), %u gap zones between two domains of %u (conventional) "
			 "zones each, and %u-zone realms dividing a domain",
			 z->nr_zones, gap, z->nr_conventional, rz);
		return -1;
	}
	z->realm_zones = rz;
	z->domain_zones = z->nr_conventional;
	z->gap_zones = gap;
	z->nr_realms = z->domain_zones / rz;
	/*
	 * sobr_zones: domain 0 is sequential or before required (type 4h), a
	 * write pointer zone type that takes no open zone resources; no zone is
	 * conventional then.
	 */
	if (lu->params.sobr_zones) {
		for (uint32_t i = 0; i < z->domain_zones; i++) {
			z->zones[i].type = ZBC_ZONE_TYPE_SEQUENTIAL_OR_BEFORE_REQUIRED;
			z->zones[i].condition = ZBC_ZC_EMPTY;
		}
		z->nr_conventional = 0;
	}
	/* Gap zones hold no data: type 5h, no write pointer. */
	for (uint32_t i = z->domain_zones; i < domain_start(z, 1); i++) {
		z->zones[i].type = ZBC_ZONE_TYPE_GAP;
		z->zones[i].condition = ZBC_ZC_NOT_WRITE_POINTER;
	}
	for (uint32_t r = 0; r < z->nr_realms; r++) {
		struct zbc_zone *zone = realm_zone(z, lu->params.active_domain ? 0 : 1, r);

		for (uint32_t k = 0; k < rz; k++) {
			zone[k].condition = ZBC_ZC_INACTIVE;
			zone[k].wp = zone[k].start;
		}
	}
	return 0;
}

/*
 * Common CDB checks of the ZBC IN reports: REPORTING OPTIONS (b14 bits 5:0)
 * up to max_option, the locator within the capacity.
 */
static enum scsi_result report_parse(struct scsi_cmd *cmd, uint64_t *locator, uint8_t max_option)
{
	*locator = get_be64(cmd->cdb + 2);
	cmd->allocation_length = get_be32(cmd->cdb + 10);
	if ((cmd->cdb[14] & 0x3f) > max_option)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(14, 5));
	if (*locator >= cmd->lu->num_blocks)
		return scsi_cmd_fail(cmd, sense_lba_out_of_range());
	return SCSI_OK;
}

/*
 * REPORT REALMS REPORTING OPTIONS (libzbc enum zbc_realm_report_options):
 * 00h every realm, 01h / 02h / 03h the realms whose active zones are SOBR /
 * SWR / SWP; higher values are INVALID FIELD IN CDB.
 */
#define REALMS_REPORT_SWP 0x03

static bool realm_reported(struct zbc_state *z, uint32_t r, uint8_t option)
{
	static const enum zbc_zone_type wanted[] = { 0, ZBC_ZONE_TYPE_SEQUENTIAL_OR_BEFORE_REQUIRED,
						     ZBC_ZONE_TYPE_SEQUENTIAL_WRITE_REQUIRED,
						     ZBC_ZONE_TYPE_SEQUENTIAL_WRITE_PREFERRED };

	return option == 0 || realm_zone(z, active_domain(z, r), r)->type == wanted[option];
}

enum scsi_result zbc_report_realms_exec(struct scsi_cmd *cmd)
{
	struct zbc_state *z = cmd->lu->zbc;
	uint64_t locator;
	uint32_t first, count = 0;
	uint8_t *b, option;

	if (report_parse(cmd, &locator, REALMS_REPORT_SWP) != SCSI_OK)
		return SCSI_FAILED;
	option = cmd->cdb[14] & 0x3f;
	/* Realms from the one holding the locator's zone (in either domain; a gap: from realm 0) on. */
	domain_of(z, zbc_zone_index(z, zbc_zone_of(z, locator)), &first);
	first /= z->realm_zones;
	for (uint32_t r = first; r < z->nr_realms; r++)
		count += realm_reported(z, r, option);
	b = scsi_cmd_alloc_data_in(cmd, HEADER_LEN + (size_t)count * REALM_DESCRIPTOR_LEN);
	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	put_be32(b, count * REALM_DESCRIPTOR_LEN);
	put_be32(b + 4, count);
	put_be32(b + 8, REALM_DESCRIPTOR_LEN);
	for (uint32_t i = 0, r = first; i < count; r++) {
		uint8_t *d = b + HEADER_LEN + (size_t)i * REALM_DESCRIPTOR_LEN;

		if (!realm_reported(z, r, option))
			continue;
		i++;
		put_be32(d, r);
		d[7] = (uint8_t)active_domain(z, r);
		for (unsigned dom = 0; dom < 2; dom++) {
			const struct zbc_zone *zone = realm_zone(z, dom, r);

			put_be64(d + 16 + dom * 16, zone->start);
			put_be64(d + 24 + dom * 16, zone[z->realm_zones - 1].start + zone[z->realm_zones - 1].length - 1);
		}
	}
	scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	return SCSI_OK;
}

/*
 * REPORT ZONE DOMAINS REPORTING OPTIONS (sg3_utils sg_rep_zones; libzbc
 * enum zbc_domain_report_options): 00h every domain, 01h the domains whose
 * zones are all active, 02h those with active zones, 03h those with none;
 * higher values are INVALID FIELD IN CDB.  A domain's zones are active in
 * the realms whose active domain it is.
 */
#define DOMAINS_REPORT_NONE_ACTIVE 0x03

static bool domain_reported(struct zbc_state *z, unsigned dom, uint8_t option)
{
	uint32_t active = 0;

	for (uint32_t r = 0; r < z->nr_realms; r++)
		active += active_domain(z, r) == dom;
	switch (option) {
	case 0x01:
		return active == z->nr_realms;
	case 0x02:
		return active > 0;
	case DOMAINS_REPORT_NONE_ACTIVE:
		return active == 0;
	default:
		return true;
	}
}

/*
 * The header's two lengths, read two ways by host software (ZBC-2 is not
 * public): sg3_utils' sg_rep_zones divides bytes 0-3 by the descriptor
 * length; libzbc's zbc_scsi_report_domains takes bytes 4-7 less the 64-byte
 * header as the descriptor bytes.  So bytes 0-3 count the descriptors and
 * bytes 4-7 the header too.  VALID ZONE DOMAIN ZONE TYPE is bit 1 of byte
 * 42 for sg3_utils (byte 42 bit 0 SRB) and of byte 41 for libzbc, which
 * refuses a domain without it ("Zone type not valid for domain"): it is set
 * in both.
 */
enum scsi_result zbc_report_zone_domains_exec(struct scsi_cmd *cmd)
{
	struct zbc_state *z = cmd->lu->zbc;
	uint64_t locator;
	unsigned first, count = 0, reported[2];
	uint8_t *b, option;

	if (report_parse(cmd, &locator, DOMAINS_REPORT_NONE_ACTIVE) != SCSI_OK)
		return SCSI_FAILED;
	option = cmd->cdb[14] & 0x3f;
	/* From the locator's domain (a gap zone: the domain after it). */
	first = zbc_zone_index(z, zbc_zone_of(z, locator)) >= z->domain_zones ? 1 : 0;
	for (unsigned dom = first; dom < 2; dom++)
		if (domain_reported(z, dom, option))
			reported[count++] = dom;
	b = scsi_cmd_alloc_data_in(cmd, HEADER_LEN + (size_t)count * DOMAIN_DESCRIPTOR_LEN);
	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	put_be32(b, count * DOMAIN_DESCRIPTOR_LEN);
	put_be32(b + 4, HEADER_LEN + count * DOMAIN_DESCRIPTOR_LEN);
	b[8] = 2;     /* ZONE DOMAINS SUPPORTED */
	b[9] = (uint8_t)count; /* ZONE DOMAINS REPORTED */
	b[10] = option;
	put_be64(b + 16, locator);
	for (unsigned i = 0; i < count; i++) {
		uint8_t *d = b + HEADER_LEN + (size_t)i * DOMAIN_DESCRIPTOR_LEN;
		unsigned dom = reported[i];
		const struct zbc_zone *zone = &z->zones[domain_start(z, dom)];
		const struct zbc_zone *last = &z->zones[domain_start(z, dom) + z->domain_zones - 1];

		d[0] = (uint8_t)dom;
		put_be64(d + 16, z->domain_zones);
		put_be64(d + 24, zone->start);
		put_be64(d + 32, last->start + last->length - 1);
		d[40] = (uint8_t)zone->type;
		d[41] = 0x02; /* VZDZT as libzbc reads it (above) */
		d[42] = 0x02; /* VZDZT as sg3_utils reads it: every zone of the domain has that type */
	}
	scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	return SCSI_OK;
}

/* ---- ZONE ACTIVATE / ZONE QUERY ---- */

/* The fields of ZONE ACTIVATE / ZONE QUERY, 16- or 32-byte. */
struct activate_cdb {
	bool query, all, zsrc;
	uint64_t zone_id;
	uint32_t nr_zones;     /* NUMBER OF ZONES with ZSRC, else FSNOZ (0: the rest of the realm, plan()) */
	uint32_t allocation_length;
	uint8_t other;         /* OTHER ZONE DOMAIN ID */
	uint16_t other_offset; /* its byte, for the field pointer */
	int8_t other_bit;      /* its highest bit (-1: the whole byte) */
	uint16_t zone_id_offset, nr_zones_offset;
};

/*
 * 16 bytes (95h/08h, 09h): b2 bit 7 ALL, bit 6 ZSRC (NUMBER OF ZONES valid),
 * bits 5:0 OTHER ZONE DOMAIN ID, b3-8 ZONE ID, b9-12 ALLOCATION LENGTH, b13-14
 * NUMBER OF ZONES.  32 bytes (7Fh, F800h / F801h): b10 bit 7 ALL, bit 6 ZSRC,
 * b11 OTHER ZONE DOMAIN ID, b12-19 ZONE ID, b20-23 NUMBER OF ZONES, b28-31
 * ALLOCATION LENGTH.  Both libzbc's (lib/zbc_scsi.c); sg3_utils'
 * sg_z_act_query encodes the 16-byte form otherwise (docs/zbc.md).
 */
static void decode(const struct scsi_cmd *cmd, struct activate_cdb *a)
{
	const uint8_t *c = cmd->cdb;

	if (c[0] == SCSI_OP_VARIABLE_LENGTH) {
		*a = (struct activate_cdb){ .query = get_be16(c + 8) == ZBC_SA_ZONE_QUERY_32, .all = c[10] & 0x80,
					    .zsrc = c[10] & 0x40, .zone_id = get_be64(c + 12), .nr_zones = get_be32(c + 20),
					    .allocation_length = get_be32(c + 28), .other = c[11], .other_offset = 11,
					    .other_bit = -1, .zone_id_offset = 12, .nr_zones_offset = 20 };
	} else {
		*a = (struct activate_cdb){ .query = (c[1] & 0x1f) == ZBC_SA_ZONE_QUERY, .all = c[2] & 0x80,
					    .zsrc = c[2] & 0x40, .zone_id = get_be48(c + 3), .nr_zones = get_be16(c + 13),
					    .allocation_length = get_be32(c + 9), .other = c[2] & 0x3f, .other_offset = 2,
					    .other_bit = 5, .zone_id_offset = 3, .nr_zones_offset = 13 };
	}
	if (!a->zsrc)
		a->nr_zones = cmd->lu->mode_current.fsnoz;
}

/* MAXIMUM ACTIVATION of the mode page: 0, and FFFEh or more (libzbc's "unlimited"), set no limit. */
static bool over_maximum_activation(const struct scsi_lu *lu, uint32_t realms)
{
	uint16_t max = lu->mode_current.max_activation;

	return max != 0 && max < 0xfffe && realms > max;
}

struct activation {
	uint32_t first_realm, nr_realms; /* ALL: every realm */
	unsigned target;                 /* OTHER ZONE DOMAIN ID */
	uint8_t unmet;
	uint64_t ziwup;
	uint32_t nr_zones;               /* zones activated (or that would be) */
};

enum scsi_result zbc_zone_activate_parse(struct scsi_cmd *cmd)
{
	struct zbc_state *z = cmd->lu->zbc;
	struct activate_cdb a;

	decode(cmd, &a);
	cmd->allocation_length = a.allocation_length;
	/* OTHER ZONE DOMAIN ID: a domain of the LU. */
	if (a.other > 1)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(a.other_offset, a.other_bit));
	if (a.all)
		return SCSI_OK;
	/* ZONE ID: inside the capacity (libzbc 03/101: LBA OUT OF RANGE) ... */
	if (a.zone_id >= cmd->lu->num_blocks)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE));
	/* ... the start of a zone of a domain (not a gap zone) ... */
	if (zbc_zone_of(z, a.zone_id)->start != a.zone_id || zbc_zone_of(z, a.zone_id)->type == ZBC_ZONE_TYPE_GAP)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(a.zone_id_offset, -1));
	/* ... and with the number of zones, not past the last zone (libzbc 03/102: INVALID FIELD IN CDB). */
	if ((uint64_t)zbc_zone_index(z, zbc_zone_of(z, a.zone_id)) + a.nr_zones > z->nr_zones)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(a.zsrc ? a.nr_zones_offset : a.zone_id_offset, -1));
	return SCSI_OK;
}

/* Which realms the CDB names, and whether they can move (the prerequisites, ZBC-2 readings above). */
static void plan(struct scsi_cmd *cmd, struct activation *a)
{
	struct zbc_state *z = cmd->lu->zbc;
	uint32_t rz = z->realm_zones;
	struct activate_cdb c;

	decode(cmd, &c);
	*a = (struct activation){ .target = c.other };
	if (c.all) {
		a->nr_realms = z->nr_realms;
	} else {
		uint32_t idx = zbc_zone_index(z, zbc_zone_of(z, c.zone_id)), in_domain;

		domain_of(z, idx, &in_domain);
		/* No zones (NUMBER OF ZONES or FSNOZ 0): the rest of ZONE ID's realm. */
		uint64_t nz = c.nr_zones ? c.nr_zones : rz - in_domain % rz;

		if (in_domain % rz || nz % rz || in_domain + nz > z->domain_zones) {
			a->unmet = UNMET_REALM_ALIGNMENT;
			a->ziwup = z->zones[idx].start;
			return;
		}
		a->first_realm = in_domain / rz;
		a->nr_realms = (uint32_t)(nz / rz);
	}
	for (uint32_t r = a->first_realm; r < a->first_realm + a->nr_realms; r++) {
		struct zbc_zone *leave = realm_zone(z, 1 - a->target, r), *enter = realm_zone(z, a->target, r);

		if (active_domain(z, r) == a->target)
			continue;
		for (uint32_t k = 0; k < rz && !a->unmet; k++) {
			bool empty = leave[k].condition == ZBC_ZC_EMPTY || leave[k].condition == ZBC_ZC_NOT_WRITE_POINTER;

			if (!empty) {
				a->unmet = UNMET_NOT_EMPTY;
				a->ziwup = leave[k].start;
			} else if (enter[k].condition != ZBC_ZC_INACTIVE) {
				a->unmet = UNMET_NOT_INACTIVE;
				a->ziwup = enter[k].start;
			}
		}
		if (a->unmet)
			return;
		a->nr_zones += rz;
	}
}

/* The zones of the realms that move become active in the target domain, inactive in the other. */
static void activate(struct zbc_state *z, const struct activation *a)
{
	for (uint32_t r = a->first_realm; r < a->first_realm + a->nr_realms; r++) {
		struct zbc_zone *leave = realm_zone(z, 1 - a->target, r), *enter = realm_zone(z, a->target, r);

		if (active_domain(z, r) == a->target)
			continue;
		for (uint32_t k = 0; k < z->realm_zones; k++) {
			zbc_zone_set_condition(z, &leave[k], ZBC_ZC_INACTIVE);
			leave[k].wp = leave[k].start;
			zbc_zone_changed(z, &leave[k]);
			zbc_zone_set_condition(z, &enter[k], zbc_is_write_pointer_zone(&enter[k]) ? ZBC_ZC_EMPTY
												 : ZBC_ZC_NOT_WRITE_POINTER);
			enter[k].wp = enter[k].start;
			enter[k].non_seq = false;
			zbc_zone_changed(z, &enter[k]);
		}
	}
}

/* Worker: the conventional zones left behind lose their data; the zone state is made durable. */
static void activate_work(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	struct zbc_state *z = lu->zbc;
	struct backend *be = lu->backend;
	int rc = 0;

	for (uint32_t i = 0; i < z->domain_zones && rc == 0; i++) {
		const struct zbc_zone *zone = &z->zones[i]; /* domain 0: the conventional zones */

		if (zone->condition == ZBC_ZC_INACTIVE)
			rc = be->ops->discard(be, scsi_lu_offset(lu, zone->start), zone->length * lu->block_size);
	}
	if (rc == 0)
		rc = zbc_persist_all(lu, BE_WRITE_FUA);
	if (rc < 0)
		scsi_cmd_fail_errno(cmd, rc, true);
}

enum scsi_result zbc_zone_activate_exec(struct scsi_cmd *cmd)
{
	struct zbc_state *z = cmd->lu->zbc;
	struct activate_cdb c;
	struct activation a;
	uint32_t nd = 0;
	uint8_t *b;
	bool query;

	decode(cmd, &c);
	query = c.query;
	plan(cmd, &a);
	if (!a.unmet && over_maximum_activation(cmd->lu, a.nr_realms))
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(c.zsrc ? c.nr_zones_offset : c.zone_id_offset, -1));
	/* One descriptor per run of realms that move (contiguous zones of the target domain). */
	if (!a.unmet)
		for (uint32_t r = a.first_realm; r < a.first_realm + a.nr_realms; r++)
			if (active_domain(z, r) != a.target &&
			    (r == a.first_realm || active_domain(z, r - 1) == a.target))
				nd++;
	b = scsi_cmd_alloc_data_in(cmd, HEADER_LEN + (size_t)nd * ACTIVATION_DESCRIPTOR_LEN);
	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	put_be32(b, nd * ACTIVATION_DESCRIPTOR_LEN);
	put_be32(b + 4, nd * ACTIVATION_DESCRIPTOR_LEN);
	b[10] = (uint8_t)a.target;
	b[11] = c.all ? 0x01 : 0x00;
	if (a.unmet) {
		b[8] = 0x40; /* ZIWUP_VALID */
		b[9] = a.unmet;
		put_be48(b + 24, a.ziwup);
	} else {
		uint8_t *d = b + HEADER_LEN;

		b[8] = 0x80; /* NZ_VALID */
		put_be32(b + 16, a.nr_zones);
		for (uint32_t r = a.first_realm; r < a.first_realm + a.nr_realms; r++) {
			const struct zbc_zone *enter = realm_zone(z, a.target, r);

			if (active_domain(z, r) == a.target)
				continue;
			if (r == a.first_realm || active_domain(z, r - 1) == a.target) {
				d[0] = (uint8_t)enter->type;
				d[1] = (uint8_t)((zbc_is_write_pointer_zone(enter) ? ZBC_ZC_EMPTY : ZBC_ZC_NOT_WRITE_POINTER)
						 << 4);
				d[2] = (uint8_t)a.target;
				put_be64(d + 16, enter->start);
				d += ACTIVATION_DESCRIPTOR_LEN;
			}
			put_be64(d - ACTIVATION_DESCRIPTOR_LEN + 8, get_be64(d - ACTIVATION_DESCRIPTOR_LEN + 8) + z->realm_zones);
		}
	}
	scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	if (query || a.unmet || a.nr_zones == 0)
		return SCSI_OK;
	b[8] |= 0x01; /* ACTIVATED */
	activate(z, &a);
	return scsi_cmd_run_io(cmd, activate_work, NULL);
}
