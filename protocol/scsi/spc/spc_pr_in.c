/*
 * PERSISTENT RESERVE IN (SPC-4 6.16): READ KEYS, READ RESERVATION, REPORT
 * CAPABILITIES, READ FULL STATUS.  CDB bytes 7-8 ALLOCATION LENGTH; the
 * ADDITIONAL LENGTH fields always describe the full data, whatever the
 * allocation length cuts (libiscsi PrinReadKeys.Truncate).
 *
 * While another I_T nexus holds an SPC-2 reservation the command gets
 * RESERVATION CONFLICT (SPC-2 5.5.1 lets only INQUIRY, REPORT LUNS,
 * REQUEST SENSE and RELEASE through).
 */
#include <stdlib.h>
#include <string.h>

#include "spc/spc.h"

static enum scsi_result read_keys(struct scsi_cmd *cmd, const struct spc_pr_state *pr)
{
	size_t n = 0;
	uint8_t *b, *p;

	for (const struct spc_pr_registration *r = pr->regs; r; r = r->next)
		n++;
	b = scsi_cmd_alloc_data_in(cmd, 8 + 8 * n);
	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	put_be32(b, pr->generation);
	put_be32(b + 4, (uint32_t)(8 * n)); /* ADDITIONAL LENGTH */
	p = b + 8;
	for (const struct spc_pr_registration *r = pr->regs; r; r = r->next, p += 8)
		put_be64(p, r->key);
	return SCSI_OK;
}

static enum scsi_result read_reservation(struct scsi_cmd *cmd, const struct spc_pr_state *pr)
{
	uint8_t *b = scsi_cmd_alloc_data_in(cmd, pr->reserved ? 24 : 8);

	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	put_be32(b, pr->generation);
	if (pr->reserved) {
		put_be32(b + 4, 16);
		/* SPC-4 6.16.3: an all registrants reservation reports RESERVATION KEY 0. */
		if (!spc_pr_type_all_registrants(pr->type) && pr->holder)
			put_be64(b + 8, pr->holder->key);
		b[21] = pr->type; /* SCOPE 0h (LU_SCOPE), TYPE */
	}
	return SCSI_OK;
}

/*
 * REPORT CAPABILITIES (SPC-4 6.16.4): CRH = 1 (RESERVE/RELEASE follow SPC-4
 * 5.13.3), SIP_C = 0 (SPEC_I_PT refused), ATP_C = 1, PTPL_C = 1; TMV = 1
 * with all six types; ALLOW COMMANDS 001b (TEST UNIT READY is allowed under
 * Write Exclusive and Exclusive Access); PTPL_A = the APTPL state.
 */
static enum scsi_result report_capabilities(struct scsi_cmd *cmd, const struct spc_pr_state *pr)
{
	uint8_t *b = scsi_cmd_alloc_data_in(cmd, 8);

	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	put_be16(b, 8);
	b[2] = 0x10 | 0x04 | 0x01;                           /* CRH, ATP_C, PTPL_C */
	b[3] = (uint8_t)(0x80 | 0x01 << 4 | (pr->aptpl ? 0x01 : 0x00)); /* TMV, ALLOW COMMANDS, PTPL_A */
	b[4] = 0x80 | 0x40 | 0x20 | 0x08 | 0x02;              /* WR_EX_AR EX_AC_RO WR_EX_RO EX_AC WR_EX */
	b[5] = 0x01;                                          /* EX_AC_AR */
	return SCSI_OK;
}

/* READ FULL STATUS (SPC-4 6.16.5): one descriptor per registered I_T nexus. */
static enum scsi_result read_full_status(struct scsi_cmd *cmd, const struct spc_pr_state *pr)
{
	size_t n = 8, off = 8;
	uint8_t *b;

	for (const struct spc_pr_registration *r = pr->regs; r; r = r->next)
		n += 24 + r->transport_id_len;
	b = scsi_cmd_alloc_data_in(cmd, n);
	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	put_be32(b, pr->generation);
	put_be32(b + 4, (uint32_t)(n - 8));
	for (const struct spc_pr_registration *r = pr->regs; r; r = r->next) {
		uint8_t *d = b + off;
		bool holder = pr->reserved && (spc_pr_type_all_registrants(pr->type) || pr->holder == r);

		put_be64(d, r->key);
		d[12] = (uint8_t)((r->all_tg_pt ? 0x02 : 0) | (holder ? 0x01 : 0)); /* ALL_TG_PT, R_HOLDER */
		if (holder)
			d[13] = pr->type;
		put_be16(d + 18, r->all_tg_pt ? 0 : r->relative_target_port);
		put_be32(d + 20, r->transport_id_len);
		memcpy(d + 24, r->transport_id, r->transport_id_len);
		off += 24 + r->transport_id_len;
	}
	return SCSI_OK;
}

static enum scsi_result respond(struct scsi_cmd *cmd, const struct spc_pr_state *pr)
{
	enum scsi_result r;

	switch (cmd->cdb[1] & 0x1f) {
	case SCSI_SA_PRIN_READ_KEYS:
		r = read_keys(cmd, pr);
		break;
	case SCSI_SA_PRIN_READ_RESERVATION:
		r = read_reservation(cmd, pr);
		break;
	case SCSI_SA_PRIN_REPORT_CAPABILITIES:
		r = report_capabilities(cmd, pr);
		break;
	case SCSI_SA_PRIN_READ_FULL_STATUS:
		r = read_full_status(cmd, pr);
		break;
	default: /* the opcode table has a row per service action: not reached */
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(1, 4));
	}
	if (r == SCSI_OK)
		scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	return r;
}

/*
 * A node whose group waits in standby for the medium another node holds
 * (docs/scale-out.md) answers from the holder's state as it last stored
 * it, read now (SPC-4 5.15.2.4.4 lists PERSISTENT RESERVE IN among the
 * commands a standby port processes).  The registrations and the
 * reservation are then those every node reports; PRGENERATION too, except
 * after the last registration went (the holder removes the blob, so a
 * waiting node reads 0).
 */
static void peek_free(void *state)
{
	spc_pr_state_clear(state);
	free(state);
}

static void peek_work(struct scsi_cmd *cmd)
{
	int rc = spc_pr_peek(cmd->lu, cmd->handler_state);

	if (rc < 0)
		scsi_cmd_fail_errno(cmd, rc, false);
}

static enum scsi_result peek_respond(struct scsi_cmd *cmd)
{
	return respond(cmd, cmd->handler_state);
}

enum scsi_result spc_persistent_reserve_in_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;

	cmd->allocation_length = get_be16(cmd->cdb + 7);
	if (lu->spc2_reservation_holder && lu->spc2_reservation_holder != cmd->nexus)
		return scsi_cmd_set_status(cmd, SCSI_STATUS_RESERVATION_CONFLICT);
	if (spc_alua_waits_for_backend(lu)) {
		struct spc_pr_state *pr = calloc(1, sizeof(*pr));

		if (!pr)
			return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
		cmd->handler_state = pr;
		cmd->handler_state_free = peek_free;
		return scsi_cmd_run_io(cmd, peek_work, peek_respond);
	}
	return respond(cmd, lu->pr);
}
