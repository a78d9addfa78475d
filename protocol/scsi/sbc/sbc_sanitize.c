/*
 * SANITIZE (SBC-4 5.32): OVERWRITE, BLOCK ERASE,
 * CRYPTOGRAPHIC ERASE and EXIT FAILURE MODE.
 *
 * CDB: byte 1 bit 7 IMMED, bit 6 ZNR, bit 5 AUSE, bits 4:0 SERVICE ACTION;
 * bytes 7-8 PARAMETER LIST LENGTH.  The opcode table's CDB USAGE DATA
 * rejects the reserved bytes; ZNR (zoned no reset) is refused by the parse
 * below on LUs that are not zoned.
 *
 * The medium work runs as an sbc_background operation (sbc_background.h):
 * progress in lu->progress with 02/04/1B, so every command but the
 * informational ones gets NOT READY, SANITIZE IN PROGRESS while it runs.
 *
 * How each method is emulated (the result is what SBC-4 4.11 asks an
 * application client to see afterwards; WABEREQ = WACEREQ = 01b in the Block
 * Device Characteristics VPD page: reads of sanitized blocks succeed):
 *   OVERWRITE           writes the pattern OVERWRITE COUNT times, inverting
 *                       it between passes when INVERT = 1, paced to an
 *                       emulated medium speed (SBC_SANITIZE_OVERWRITE_RATE);
 *   BLOCK ERASE         deallocates every block (thin-provisioned LUs only:
 *                       without logical block provisioning there is no
 *                       "block erase" state to reach, see
 *                       sbc_sanitize_block_erase_enabled);
 *   CRYPTOGRAPHIC ERASE deallocates every block on a thin-provisioned LU,
 *                       else zeroes it (the "key" is the data itself).
 */
#include <stdlib.h>
#include <string.h>

#include "sbc/sbc_background.h"
#include "zbc/zbc.h"

/*
 * The emulated medium overwrites at 128 MiB/s, so an OVERWRITE pass over a
 * 1 GiB LU lasts 8 s whatever the backing file's speed.  Real drives take
 * hours; a sanitize that ends before anyone can observe it would not
 * exercise the host's handling of SANITIZE IN PROGRESS (libiscsi's
 * Sanitize.Reset expects an OVERWRITE still running seconds later).
 */
#define SBC_SANITIZE_OVERWRITE_RATE (128ull << 20)

/* OVERWRITE parameter list (SBC-4 5.32, OVERWRITE). */
#define OVERWRITE_HEADER_LEN 4
#define OVERWRITE_INVERT 0x80
#define OVERWRITE_TEST_MASK 0x60
#define OVERWRITE_COUNT_MASK 0x1f

#define SANITIZE_IMMED 0x80
#define SANITIZE_ZNR 0x40
#define SANITIZE_AUSE 0x20

/*
 * BLOCK ERASE needs logical block provisioning (see the file comment); the
 * opcode table's BLOCK ERASE row uses sbc_thin_provisioning_enabled, the
 * same predicate, so REPORT SUPPORTED OPERATION CODES agrees.
 */
static bool sbc_sanitize_block_erase_enabled(const struct scsi_lu *lu)
{
	return sbc_thin_provisioning_enabled(lu);
}

enum scsi_result sbc_sanitize_parse(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	struct scsi_lu *lu = cmd->lu;
	uint8_t service_action = cdb[1] & 0x1f;
	uint16_t parameter_list_length = get_be16(cdb + 7);

	/* ZNR only means something on a zoned LU (SBC-4 5.32); elsewhere it is treated as a reserved bit. */
	if ((cdb[1] & SANITIZE_ZNR) && !lu->zbc && service_action != SCSI_SA_SANITIZE_EXIT_FAILURE_MODE)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(1, 6));

	switch (service_action) {
	case SCSI_SA_SANITIZE_OVERWRITE:
		/*
		 * SBC-4 5.32 (service action table): OVERWRITE needs a
		 * PARAMETER LIST LENGTH greater than 4 and less than the
		 * logical block length + 5, else INVALID FIELD IN CDB.
		 */
		if (parameter_list_length <= OVERWRITE_HEADER_LEN ||
		    parameter_list_length > lu->block_size + OVERWRITE_HEADER_LEN)
			return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(7, -1));
		break;
	case SCSI_SA_SANITIZE_BLOCK_ERASE:
		if (!sbc_sanitize_block_erase_enabled(lu))
			return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(1, 4));
		/* fall through */
	case SCSI_SA_SANITIZE_CRYPTOGRAPHIC_ERASE:
	case SCSI_SA_SANITIZE_EXIT_FAILURE_MODE:
		/* SBC-4 5.32 (service action table): these take no parameter list. */
		if (parameter_list_length != 0)
			return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(7, -1));
		break;
	default:
		/* The opcode table has a row per supported service action; not reached. */
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(1, 4));
	}
	/*
	 * SBC-4 4.11 (sanitize completion modes): after a sanitize operation
	 * in the restricted completion mode (AUSE = 0) failed, a SANITIZE
	 * asking for the unrestricted mode (AUSE = 1) is INVALID FIELD IN CDB,
	 * and so is EXIT FAILURE MODE.
	 */
	if (lu->sanitize_failed && !lu->sanitize_failed_ause) {
		if (service_action == SCSI_SA_SANITIZE_EXIT_FAILURE_MODE)
			return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(1, 4));
		if (cdb[1] & SANITIZE_AUSE)
			return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(1, 5));
	}
	cmd->data_length = parameter_list_length;
	return SCSI_OK;
}

/*
 * Validates the OVERWRITE parameter list (SBC-4 5.32, OVERWRITE) and builds the
 * one-block pattern: the INITIALIZATION PATTERN repeated from the first byte
 * of every block.  Returns NULL with the sense stored on error.
 */
static uint8_t *overwrite_pattern(struct scsi_cmd *cmd, unsigned *passes, bool *invert)
{
	const uint8_t *p = cmd->data_out;
	uint32_t block_size = cmd->lu->block_size;
	uint16_t pattern_length;
	uint8_t *block;

	if (p[0] & OVERWRITE_TEST_MASK) {
		/* TEST values other than 00b are vendor specific: none here. */
		scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(0, 6));
		return NULL;
	}
	if ((p[0] & OVERWRITE_COUNT_MASK) == 0) {
		/* OVERWRITE COUNT 00h is reserved. */
		scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(0, 4));
		return NULL;
	}
	if (p[1] != 0) {
		int bit = 7;
		while (!(p[1] & (1u << bit)))
			bit--;
		scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(1, bit));
		return NULL;
	}
	pattern_length = get_be16(p + 2);
	/*
	 * INITIALIZATION PATTERN LENGTH 0 or beyond the logical block length:
	 * INVALID FIELD IN PARAMETER LIST.  It must also account for the rest
	 * of the parameter list (PARAMETER LIST LENGTH = 4 + pattern length).
	 */
	if (pattern_length == 0 || pattern_length > block_size ||
	    (uint32_t)pattern_length + OVERWRITE_HEADER_LEN != cmd->data_length) {
		scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(2, -1));
		return NULL;
	}
	block = malloc(block_size);
	if (!block) {
		scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
		return NULL;
	}
	for (uint32_t off = 0; off < block_size; off += pattern_length) {
		uint32_t n = block_size - off < pattern_length ? block_size - off : pattern_length;
		memcpy(block + off, p + OVERWRITE_HEADER_LEN, n);
	}
	*passes = p[0] & OVERWRITE_COUNT_MASK;
	*invert = (p[0] & OVERWRITE_INVERT) != 0;
	return block;
}

/*
 * SBC-4 4.11: a failed sanitize leaves the LU in the sanitize failure mode
 * (medium access gets 03/31/03, see cmd.c) until a later sanitize succeeds or,
 * if the failed one had AUSE = 1, EXIT FAILURE MODE.
 */
static void sanitize_end(struct sbc_background_op *op, int err)
{
	struct scsi_lu *lu = op->lu;

	if (err == 0) {
		lu->sanitize_failed = false;
		lu->sanitize_failed_ause = false;
		return;
	}
	lu->sanitize_failed = true;
	lu->sanitize_failed_ause = op->ause;
	if (op->cmd)
		scsi_cmd_fail(op->cmd, sense_make(SENSE_KEY_MEDIUM_ERROR, ASC_SANITIZE_COMMAND_FAILED));
}

enum scsi_result sbc_sanitize_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	uint8_t service_action = cmd->cdb[1] & 0x1f;
	bool immed = (cmd->cdb[1] & SANITIZE_IMMED) != 0;
	struct sbc_background_op *op;

	if (service_action == SCSI_SA_SANITIZE_EXIT_FAILURE_MODE) {
		/*
		 * SBC-4 5.32 (EXIT FAILURE MODE): process as if the failed
		 * sanitize had completed without error.  Outside the failure
		 * mode there is nothing to exit: GOOD.
		 */
		lu->sanitize_failed = false;
		lu->sanitize_failed_ause = false;
		return SCSI_OK;
	}
	op = sbc_background_alloc(lu);
	if (!op)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	op->asc_ascq = ASC_SANITIZE_IN_PROGRESS_NR;
	op->end = sanitize_end;
	op->ause = (cmd->cdb[1] & SANITIZE_AUSE) != 0;
	switch (service_action) {
	case SCSI_SA_SANITIZE_OVERWRITE:
		op->method = SBC_BG_PATTERN;
		op->pattern = overwrite_pattern(cmd, &op->passes, &op->invert);
		if (!op->pattern) {
			sbc_background_free(op);
			return SCSI_FAILED;
		}
		op->rate = SBC_SANITIZE_OVERWRITE_RATE;
		break;
	case SCSI_SA_SANITIZE_BLOCK_ERASE:
		op->method = SBC_BG_DEALLOCATE;
		break;
	case SCSI_SA_SANITIZE_CRYPTOGRAPHIC_ERASE:
	default:
		/* Zoned LUs: deallocating keeps the file sparse, as RESET WRITE POINTER does; reads see zeros. */
		op->method = lu->params.thin_provisioning || lu->zbc ? SBC_BG_DEALLOCATE : SBC_BG_ZEROES;
		break;
	}
	/* IMMED = 1: GOOD now that the CDB and parameter list are valid; the operation goes on. */
	op->cmd = immed ? NULL : cmd;
	/*
	 * Zoned LUs (SBC-4 5.32, ZNR): ZNR = 0 resets every write pointer
	 * zone to EMPTY; ZNR = 1 leaves no readable data behind a write
	 * pointer either, so the zones become FULL.  The engine persists the
	 * zone state with the last chunk.
	 */
	if (lu->zbc) {
		if (cmd->cdb[1] & SANITIZE_ZNR)
			zbc_fill_all_zones(lu);
		else
			zbc_reset_all_zones(lu);
	}
	if (!sbc_background_start(op, cmd))
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	return immed ? SCSI_OK : SCSI_PENDING;
}
