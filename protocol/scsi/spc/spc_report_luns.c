/*
 * REPORT LUNS (SPC-4 6.33; SELECT REPORT 10h-12h from SPC-5 as sg3_utils'
 * doc/sg_luns.8 --select restates them).
 *
 * CDB (12 bytes): byte 2 SELECT REPORT, bytes 6-9 ALLOCATION LENGTH (below
 * 16: INVALID FIELD IN CDB, SPC-4 6.33).  The inventory is the one of the
 * I_T nexus: a conglomerate's subsidiary LUs are in it when they are bound
 * to the nexus's initiator (core/conglomerate.c), each after its
 * administrative LU, in the order of their LUN bytes.
 *   00h  every LU but well-known LUs, subsidiaries included
 *   01h  the well-known LUs: REPORT LUNS (C101h, SAM-5 4.7.4)
 *   02h  00h and 01h
 *   10h  the administrative LUs only        } sent to LUN 0 or the REPORT LUNS
 *   11h  10h and the LUs of no conglomerate } well-known LUN, else 05/24/00
 *   12h  the addressed administrative LU and its subsidiaries; sent to any
 *        other LU, NOT AN ADMINISTRATIVE LOGICAL UNIT (05/20/0D)
 *   others (and the vendor-specific F8h-FFh): INVALID FIELD IN CDB.
 * The LUN LIST LENGTH is always the whole list's; the Data-In is cut at
 * the ALLOCATION LENGTH.
 *
 * The command runs for a LUN without a logical unit (OP_NO_LU_OK): SAM-5
 * hosts send it to LUN 0 whether or not LUN 0 exists.
 */
#include <stdlib.h>

#include "spc/spc.h"

enum select_report {
	SELECT_REPORT_ALL_BUT_WELL_KNOWN = 0x00,
	SELECT_REPORT_WELL_KNOWN_ONLY = 0x01,
	SELECT_REPORT_ALL = 0x02,
	SELECT_REPORT_ADMINISTRATIVE = 0x10,
	SELECT_REPORT_ADMINISTRATIVE_AND_NOT_CONGLOMERATE = 0x11,
	SELECT_REPORT_ADMINISTRATIVE_AND_SUBSIDIARIES = 0x12,
};

/* SAM-5 4.7.4 table 17: the REPORT LUNS well-known logical unit, extended addressing, W-LUN 01h. */
#define REPORT_LUNS_WLUN 0xc101000000000000ull

struct inventory {
	uint64_t *luns;
	size_t count;
};

static void add(struct inventory *inv, uint32_t id)
{
	inv->luns[inv->count++] = scsi_lun_encode(id);
}

/* The LUs the nexus sees that select_report asks for; false when out of memory. */
static bool make_inventory(const struct scsi_cmd *cmd, uint8_t select_report, struct inventory *inv)
{
	const struct scsi_device *dev = cmd->nexus->dev;
	uint32_t *ids = NULL, *bound = NULL;
	size_t n, room = 1;
	bool subsidiaries = select_report == SELECT_REPORT_ALL_BUT_WELL_KNOWN || select_report == SELECT_REPORT_ALL;

	inv->count = 0;
	if (select_report == SELECT_REPORT_ADMINISTRATIVE_AND_SUBSIDIARIES) {
		room += 1 + scsi_subsidiary_count(cmd->lu);
		if (!(inv->luns = malloc(room * sizeof(*inv->luns))) || !(bound = malloc(room * sizeof(*bound)))) {
			free(inv->luns);
			return false;
		}
		add(inv, cmd->lu->lun);
		n = scsi_conglomerate_bound_luns(cmd->nexus, cmd->lu, bound);
		for (size_t i = 0; i < n; i++)
			add(inv, bound[i]);
		free(bound);
		return true;
	}
	n = scsi_device_lun_ids(dev, &ids);
	room += n;
	for (size_t i = 0; i < n && subsidiaries; i++) {
		const struct scsi_lu *lu = (ids[i] >> 16) ? NULL : scsi_device_lu(dev, ids[i]);

		room += lu ? scsi_subsidiary_count(lu) : 0;
	}
	inv->luns = malloc(room * sizeof(*inv->luns));
	bound = subsidiaries ? malloc(room * sizeof(*bound)) : NULL;
	if (!inv->luns || (subsidiaries && !bound)) {
		free(ids);
		free(bound);
		free(inv->luns);
		return false;
	}
	for (size_t i = 0; i < n && select_report != SELECT_REPORT_WELL_KNOWN_ONLY; i++) {
		const struct scsi_lu *lu;

		if (ids[i] >> 16)
			continue; /* a subsidiary LU opened earlier: listed under its administrative LU if bound */
		lu = scsi_device_lu(dev, ids[i]);
		if (select_report == SELECT_REPORT_ADMINISTRATIVE && lu->kind != SCSI_LU_ADMIN)
			continue;
		add(inv, ids[i]);
		if (subsidiaries && lu->kind == SCSI_LU_ADMIN) {
			size_t k = scsi_conglomerate_bound_luns(cmd->nexus, lu, bound);

			for (size_t j = 0; j < k; j++)
				add(inv, bound[j]);
		}
	}
	if (select_report == SELECT_REPORT_WELL_KNOWN_ONLY || select_report == SELECT_REPORT_ALL)
		inv->luns[inv->count++] = REPORT_LUNS_WLUN;
	free(ids);
	free(bound);
	return true;
}

enum scsi_result spc_report_luns_exec(struct scsi_cmd *cmd)
{
	uint8_t select_report = cmd->cdb[2];
	struct inventory inv;
	uint8_t *b;

	cmd->allocation_length = get_be32(cmd->cdb + 6);
	switch (select_report) {
	case SELECT_REPORT_ALL_BUT_WELL_KNOWN:
	case SELECT_REPORT_WELL_KNOWN_ONLY:
	case SELECT_REPORT_ALL:
		break;
	case SELECT_REPORT_ADMINISTRATIVE:
	case SELECT_REPORT_ADMINISTRATIVE_AND_NOT_CONGLOMERATE:
		/* sg_luns(8): "the DEVICE must be either LUN 0 or the REPORT LUNS well known logical unit". */
		if (cmd->lun != 0 && cmd->lun != REPORT_LUNS_WLUN)
			return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, -1));
		break;
	case SELECT_REPORT_ADMINISTRATIVE_AND_SUBSIDIARIES:
		if (!cmd->lu || cmd->lu->kind != SCSI_LU_ADMIN)
			return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ILLEGAL_REQUEST,
							     ASC_NOT_AN_ADMINISTRATIVE_LOGICAL_UNIT));
		break;
	default:
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, -1));
	}
	if (cmd->allocation_length < 16)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(6, -1));
	if (!make_inventory(cmd, select_report, &inv))
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	b = scsi_cmd_alloc_data_in(cmd, 8 + 8 * inv.count);
	if (!b) {
		free(inv.luns);
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	}
	put_be32(b, (uint32_t)(8 * inv.count)); /* LUN LIST LENGTH */
	for (size_t i = 0; i < inv.count; i++)
		put_be64(b + 8 + 8 * i, inv.luns[i]);
	free(inv.luns);
	scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	return SCSI_OK;
}
