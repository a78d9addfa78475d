/*
 * ZBC IN (95h) / REPORT ZONES (service action 00h), ZBC-1 (ZBC-2 REPORT ZONES; sg3_utils sg_rep_zones.c):
 * a 64-byte header, then one 64-byte descriptor per zone that matches the
 * REPORTING OPTIONS, starting with the zone that holds ZONE START LBA.
 *
 * ZBC-2's reporting options 08h (INACTIVE zones) and 3Eh (every zone but the
 * gap zones) are served on zone domain LUs (kind zbc-zd) and reserved
 * elsewhere.  3Eh as ZBC-2 and Linux scsi_debug (resp_report_zones, case
 * 0x3e: "All zones except gap zones") read it; libzbc names it
 * ZBC_RZ_RO_GAP, the gap zones alone (docs/zbc.md).  3Fh, zones whose
 * condition is NOT WRITE POINTER, holds the gap zones too.  Not here: the ZBC-2 service actions
 * (REPORT REALMS, REPORT ZONE DOMAINS, ZONE ACTIVATE, ZONE QUERY:
 * zbc_domains.c).
 */
#include <errno.h>

#include "zbc/zbc.h"

#define ZBC_REPORT_HEADER_LEN 64
#define ZBC_ZONE_DESCRIPTOR_LEN 64

/* REPORTING OPTIONS (CDB byte 14 bits 5:0). */
enum zbc_reporting_options {
	ZBC_RO_ALL = 0x00,
	ZBC_RO_EMPTY = 0x01,
	ZBC_RO_IMPLICITLY_OPENED = 0x02,
	ZBC_RO_EXPLICITLY_OPENED = 0x03,
	ZBC_RO_CLOSED = 0x04,
	ZBC_RO_FULL = 0x05,
	ZBC_RO_READ_ONLY = 0x06,
	ZBC_RO_OFFLINE = 0x07,
	ZBC_RO_INACTIVE = 0x08,        /* ZBC-2 */
	ZBC_RO_RWP_RECOMMENDED = 0x10,
	ZBC_RO_NON_SEQ = 0x11,
	ZBC_RO_ALL_BUT_GAP = 0x3e,     /* ZBC-2 */
	ZBC_RO_NOT_WRITE_POINTER = 0x3f,
};

static bool reporting_options_valid(const struct zbc_state *z, uint8_t ro)
{
	if (ro == ZBC_RO_INACTIVE || ro == ZBC_RO_ALL_BUT_GAP)
		return z->realm_zones != 0;
	return ro <= ZBC_RO_OFFLINE || ro == ZBC_RO_RWP_RECOMMENDED || ro == ZBC_RO_NON_SEQ ||
	       ro == ZBC_RO_NOT_WRITE_POINTER;
}

static bool zone_matches(const struct zbc_zone *zone, enum zbc_reporting_options ro)
{
	switch (ro) {
	case ZBC_RO_ALL:
		return true;
	case ZBC_RO_EMPTY:
		return zone->condition == ZBC_ZC_EMPTY;
	case ZBC_RO_IMPLICITLY_OPENED:
		return zone->condition == ZBC_ZC_IMPLICITLY_OPENED;
	case ZBC_RO_EXPLICITLY_OPENED:
		return zone->condition == ZBC_ZC_EXPLICITLY_OPENED;
	case ZBC_RO_CLOSED:
		return zone->condition == ZBC_ZC_CLOSED;
	case ZBC_RO_FULL:
		return zone->condition == ZBC_ZC_FULL;
	case ZBC_RO_READ_ONLY:
		return zone->condition == ZBC_ZC_READ_ONLY;
	case ZBC_RO_OFFLINE:
		return zone->condition == ZBC_ZC_OFFLINE;
	case ZBC_RO_RWP_RECOMMENDED:
		return zone->reset_recommended;
	case ZBC_RO_NON_SEQ:
		return zone->non_seq;
	case ZBC_RO_INACTIVE:
		return zone->condition == ZBC_ZC_INACTIVE;
	case ZBC_RO_ALL_BUT_GAP:
		return zone->type != ZBC_ZONE_TYPE_GAP;
	case ZBC_RO_NOT_WRITE_POINTER:
		return zone->condition == ZBC_ZC_NOT_WRITE_POINTER;
	}
	return false;
}

/*
 * CDB: b2-9 ZONE START LBA, b10-13 ALLOCATION LENGTH, b14 bit 7 PARTIAL,
 * bits 5:0 REPORTING OPTIONS.  Both checks depend only on the CDB and the
 * capacity, so they run before the command enters the task set.
 */
enum scsi_result zbc_report_zones_parse(struct scsi_cmd *cmd)
{
	uint8_t ro = cmd->cdb[14] & 0x3f;

	if (!cmd->lu->zbc)
		return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
	cmd->lba = get_be64(cmd->cdb + 2);
	cmd->allocation_length = get_be32(cmd->cdb + 10);
	/* A reserved REPORTING OPTIONS value is INVALID FIELD IN CDB (libzbc 01/011). */
	if (!reporting_options_valid(cmd->lu->zbc, ro))
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(14, 5));
	/* ZONE START LBA beyond MAXIMUM LBA is LOGICAL BLOCK ADDRESS OUT OF RANGE (libzbc 01/010). */
	if (cmd->lba >= cmd->lu->num_blocks)
		return scsi_cmd_fail(cmd, sense_lba_out_of_range());
	return SCSI_OK;
}

/*
 * Header SAME field over the zones of the zone list: 1h all have the type
 * and length of the first; 2h the same but the last zone's length differs;
 * 3h one length, types differ; 0h anything else.
 */
static uint8_t same_field(const struct zbc_zone *first, uint32_t n_list, enum zbc_reporting_options ro,
			  const struct zbc_zone *limit)
{
	const struct zbc_zone *last = NULL, *ref = NULL;
	bool types_same = true, lengths_same = true, lengths_same_but_last = true;
	uint32_t seen = 0;

	if (n_list == 0)
		return 0;
	/* Compared with the first zone of the list (not the zone holding ZONE START LBA, which may not match). */
	for (const struct zbc_zone *zone = first; zone < limit && seen < n_list; zone++) {
		if (!zone_matches(zone, ro))
			continue;
		if (last) {
			types_same &= zone->type == ref->type;
			lengths_same_but_last &= lengths_same;
			lengths_same &= zone->length == ref->length;
		} else {
			ref = zone;
		}
		last = zone;
		seen++;
	}
	if (types_same && lengths_same)
		return 1;
	if (types_same && lengths_same_but_last)
		return 2;
	if (lengths_same)
		return 3;
	return 0;
}

static void encode_descriptor(const struct zbc_zone *zone, uint8_t *d)
{
	uint64_t wp;

	d[0] = (uint8_t)zone->type;
	d[1] = (uint8_t)(zone->condition << 4) | (zone->non_seq ? 0x02 : 0) | (zone->reset_recommended ? 0x01 : 0);
	put_be64(d + 8, zone->length);
	put_be64(d + 16, zone->start);
	/*
	 * WRITE POINTER LBA: invalid (all FFh, as scsi_debug and tcmu-runner
	 * report it) for conventional, READ ONLY, OFFLINE and INACTIVE zones; a FULL
	 * zone reports the end of the zone (Linux uses start + length anyway).
	 */
	switch (zone->condition) {
	case ZBC_ZC_NOT_WRITE_POINTER:
	case ZBC_ZC_READ_ONLY:
	case ZBC_ZC_OFFLINE:
	case ZBC_ZC_INACTIVE:
		wp = UINT64_MAX;
		break;
	case ZBC_ZC_FULL:
		wp = zone->start + zone->length;
		break;
	case ZBC_ZC_EMPTY:
	case ZBC_ZC_IMPLICITLY_OPENED:
	case ZBC_ZC_EXPLICITLY_OPENED:
	case ZBC_ZC_CLOSED:
	default:
		wp = zone->wp;
		break;
	}
	put_be64(d + 24, wp);
}

enum scsi_result zbc_report_zones_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	struct zbc_state *z = lu->zbc;
	enum zbc_reporting_options ro = (enum zbc_reporting_options)(cmd->cdb[14] & 0x3f);
	bool partial = cmd->cdb[14] & 0x80;
	const struct zbc_zone *first = zbc_zone_of(z, cmd->lba), *limit = z->zones + z->nr_zones;
	uint64_t fit = 0, touched = 0, matching = 0, n_list, n_sent;
	uint8_t *d;

	/* Descriptors that fit whole in the allocation length, and those it reaches at all. */
	if (cmd->allocation_length >= ZBC_REPORT_HEADER_LEN) {
		fit = (cmd->allocation_length - ZBC_REPORT_HEADER_LEN) / ZBC_ZONE_DESCRIPTOR_LEN;
		touched = (cmd->allocation_length - ZBC_REPORT_HEADER_LEN + ZBC_ZONE_DESCRIPTOR_LEN - 1) /
			  ZBC_ZONE_DESCRIPTOR_LEN;
	}
	for (const struct zbc_zone *zone = first; zone < limit; zone++)
		matching += zone_matches(zone, ro);
	/*
	 * ZONE LIST LENGTH: PARTIAL = 0 counts every matching zone from the
	 * start LBA to the end, and the parameter data is that whole list,
	 * cut at the allocation length like any other (SPC-4 4.2.5.6), so the
	 * last descriptor may be cut too.  PARTIAL = 1: the list is only the
	 * descriptors that fit whole.
	 */
	if (partial) {
		n_sent = matching < fit ? matching : fit;
		n_list = n_sent;
	} else {
		n_sent = matching < touched ? matching : touched;
		n_list = matching;
	}
	if (n_list * ZBC_ZONE_DESCRIPTOR_LEN > UINT32_MAX)
		n_list = UINT32_MAX / ZBC_ZONE_DESCRIPTOR_LEN;
	d = scsi_cmd_alloc_data_in(cmd, ZBC_REPORT_HEADER_LEN + n_sent * ZBC_ZONE_DESCRIPTOR_LEN);
	if (!d)
		return scsi_cmd_fail(cmd, scsi_sense_from_errno(ENOMEM, false));
	put_be32(d, (uint32_t)(n_list * ZBC_ZONE_DESCRIPTOR_LEN));
	d[4] = same_field(first, (uint32_t)n_list, ro, limit);
	/* MAXIMUM LBA: the last LBA of the LU, whatever RC BASIS says. */
	put_be64(d + 8, lu->num_blocks - 1);
	/* bytes 16-23 REPORTED ZONE STARTING LBA GRANULARITY: 0, constant zone lengths. */
	d += ZBC_REPORT_HEADER_LEN;
	for (const struct zbc_zone *zone = first; zone < limit && n_sent > 0; zone++) {
		if (!zone_matches(zone, ro))
			continue;
		encode_descriptor(zone, d);
		d += ZBC_ZONE_DESCRIPTOR_LEN;
		n_sent--;
	}
	scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	return SCSI_OK;
}
