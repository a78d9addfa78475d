/*
 * Device profiles (docs/profiles.md): an LU that serves less than the core
 * can, or answers the way a flawed device does, on purpose.  The daemon's
 * configuration turns a profile name into the scsi_lu_params fields read
 * here (minimal_command_set, quirks); the opcode table and the VPD table
 * stay the only descriptions of what exists, and these predicates take
 * rows away, so REPORT SUPPORTED OPERATION CODES and the Supported VPD
 * Pages page always tell what the LU really serves.
 */
#include "core/scsi_internal.h"
#include "core/scsi_proto.h"

/* Rows a quirk takes away (Linux's names for the quirk in the comments). */
static const struct {
	uint32_t quirk;
	uint8_t opcode;
} quirk_hidden_ops[] = {
	{ SCSI_QUIRK_NO_READ_CAPACITY_16, 0x9e }, /* US_FL_NO_READ_CAPACITY_16: the whole SERVICE ACTION IN(16) */
	{ SCSI_QUIRK_NO_MODE_SENSE_10, 0x5a },    /* sd's use_10_for_ms = 0: MODE SENSE(10) ... */
	{ SCSI_QUIRK_NO_MODE_SENSE_10, 0x55 },    /* ... and MODE SELECT(10) */
	{ SCSI_QUIRK_NO_SYNC_CACHE, 0x35 },       /* SYNCHRONIZE CACHE(10) ... */
	{ SCSI_QUIRK_NO_SYNC_CACHE, 0x91 },       /* ... and (16) */
	{ SCSI_QUIRK_NO_RSOC, 0xa3 },             /* US_FL_NO_REPORT_OPCODES, BLIST_NO_RSOC: MAINTENANCE IN */
	/*
	 * A USB-SATA bridge without SAT translation answers the SPC logging
	 * and diagnostic commands, which only SAT maps to ATA (SMART READ
	 * LOG, SMART EXECUTE OFF-LINE IMMEDIATE), with INVALID COMMAND
	 * OPERATION CODE: smartctl then needs -d sat (docs/profiles.md).
	 */
	{ SCSI_QUIRK_NO_SAT, 0x1c },              /* RECEIVE DIAGNOSTIC RESULTS */
	{ SCSI_QUIRK_NO_SAT, 0x1d },              /* SEND DIAGNOSTIC */
	{ SCSI_QUIRK_NO_SAT, 0x4c },              /* LOG SELECT */
	{ SCSI_QUIRK_NO_SAT, 0x4d },              /* LOG SENSE */
};

bool scsi_lu_profile_hides_op(const struct scsi_lu *lu, const struct scsi_op *op)
{
	const struct scsi_lu_params *p = &lu->params;

	if (p->minimal_command_set && !(op->flags & OP_MINIMAL))
		return true;
	for (size_t i = 0; i < sizeof(quirk_hidden_ops) / sizeof(quirk_hidden_ops[0]); i++)
		if ((p->quirks & quirk_hidden_ops[i].quirk) && op->opcode == quirk_hidden_ops[i].opcode)
			return true;
	return false;
}

bool scsi_lu_profile_hides_vpd(const struct scsi_lu *lu, uint8_t code)
{
	const struct scsi_lu_params *p = &lu->params;

	if (p->quirks & SCSI_QUIRK_NO_VPD)
		return true;
	/* SPC-4 7.8.1: the Supported VPD Pages and Device Identification pages are mandatory, the rest optional. */
	if (p->minimal_command_set)
		return code != VPD_SUPPORTED_VPD_PAGES && code != VPD_DEVICE_IDENTIFICATION;
	return false;
}
