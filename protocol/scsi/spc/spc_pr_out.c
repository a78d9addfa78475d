/*
 * PERSISTENT RESERVE OUT (SPC-4 6.17, model in 5.13): REGISTER, RESERVE,
 * RELEASE, CLEAR, PREEMPT, PREEMPT AND ABORT, REGISTER AND IGNORE EXISTING
 * KEY and REGISTER AND MOVE.
 *
 * CDB: byte 1 SERVICE ACTION; byte 2 SCOPE (bits 7:4) and TYPE (bits 3:0);
 * bytes 5-8 PARAMETER LIST LENGTH.  The basic parameter list (24 bytes):
 * 0-7 RESERVATION KEY, 8-15 SERVICE ACTION RESERVATION KEY, byte 20
 * SPEC_I_PT (bit 3), ALL_TG_PT (bit 2), APTPL (bit 0).
 *
 * Choices and limits (REPORT CAPABILITIES says the same):
 *   - SPEC_I_PT is not supported (SIP_C = 0): SPEC_I_PT = 1 -> 05/26/00 on
 *     that bit; so every service action but REGISTER AND MOVE takes exactly
 *     24 bytes of parameter data, anything else -> 05/1A/00 (SPC-4 6.17.3);
 *   - SCOPE other than LU_SCOPE, or a TYPE that is not one of the six, in
 *     RESERVE, RELEASE, PREEMPT, PREEMPT AND ABORT, REGISTER AND MOVE ->
 *     05/24/00 on the field;
 *   - REPLACE LOST RESERVATION (SPC-5) is not supported -> 05/24/00 on the
 *     SERVICE ACTION (the reservation state is never lost: APTPL state is
 *     written before GOOD);
 *   - REGISTER AND MOVE takes a TransportID of the protocol of the I_T nexus
 *     that sends it, which that transport decodes (iSCSI: FORMAT CODE 01b,
 *     an initiator port "<name>,i,0x<ISID>"); other protocols and formats
 *     the transport refuses -> 05/26/00 on the TransportID;
 *   - while an SPC-2 reservation exists, every PERSISTENT RESERVE OUT gets
 *     RESERVATION CONFLICT (SPC-4 5.13 leaves the mix undefined; LIO does
 *     the same).
 * PRGENERATION advances with every REGISTER, REGISTER AND IGNORE EXISTING
 * KEY, CLEAR, PREEMPT, PREEMPT AND ABORT and REGISTER AND MOVE that changes
 * something, never with RESERVE or RELEASE (SPC-4 6.16.2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spc/spc.h"
#include "sched/task_set.h"

#define PROUT_BASIC_LEN 24
#define PROUT_MOVE_MAX (24 + 4 + 256)

static struct scsi_sense_info no_memory(void)
{
	return sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES);
}

static enum scsi_result conflict(struct scsi_cmd *cmd)
{
	return scsi_cmd_set_status(cmd, SCSI_STATUS_RESERVATION_CONFLICT);
}

enum scsi_result spc_persistent_reserve_out_parse(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	uint8_t sa = cdb[1] & 0x1f, scope = cdb[2] >> 4, type = cdb[2] & 0x0f;
	uint32_t len = get_be32(cdb + 5);

	switch (sa) {
	case SCSI_SA_PROUT_RESERVE:
	case SCSI_SA_PROUT_RELEASE:
	case SCSI_SA_PROUT_PREEMPT:
	case SCSI_SA_PROUT_PREEMPT_AND_ABORT:
	case SCSI_SA_PROUT_REGISTER_AND_MOVE:
		if (scope != 0)
			return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, 7));
		if (!spc_pr_type_valid(type))
			return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, 3));
		break;
	case SCSI_SA_PROUT_REPLACE_LOST_RESERVATION:
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(1, 4));
	default:
		break;
	}
	if (sa == SCSI_SA_PROUT_REGISTER_AND_MOVE) {
		if (len < PROUT_BASIC_LEN || len > PROUT_MOVE_MAX)
			return scsi_cmd_fail(cmd, sense_parameter_list_length_error());
	} else if (len != PROUT_BASIC_LEN) {
		return scsi_cmd_fail(cmd, sense_parameter_list_length_error());
	}
	cmd->data_length = len;
	return SCSI_OK;
}

static struct spc_pr_registration *new_registration(struct spc_pr_state *pr, const struct scsi_nexus *n,
						    uint64_t key, bool all_tg_pt)
{
	struct spc_pr_registration *r = calloc(1, sizeof(*r)), **tail;

	if (!r)
		return NULL;
	r->key = key;
	snprintf(r->initiator_port_name, sizeof(r->initiator_port_name), "%s", n->initiator_port_name);
	r->relative_target_port = n->relative_target_port;
	r->all_tg_pt = all_tg_pt;
	r->transport_id_len = (uint16_t)(n->transport_id_len < sizeof(r->transport_id) ? n->transport_id_len
											: sizeof(r->transport_id));
	memcpy(r->transport_id, n->transport_id, r->transport_id_len);
	for (tail = &pr->regs; *tail; tail = &(*tail)->next)
		;
	*tail = r;
	return r;
}

/* REGISTER (ignore_key = false) and REGISTER AND IGNORE EXISTING KEY (SPC-4 5.13, registering). */
static enum scsi_result do_register(struct scsi_cmd *cmd, struct spc_pr_registration *reg, uint64_t key,
				    uint64_t sa_key, bool all_tg_pt, bool aptpl, bool ignore_key)
{
	struct scsi_lu *lu = cmd->lu;
	struct spc_pr_state *pr = lu->pr;

	if (!reg) {
		/* An unregistered I_T nexus must send RESERVATION KEY 0. */
		if (!ignore_key && key != 0)
			return conflict(cmd);
		if (sa_key == 0)
			return SCSI_OK; /* nothing to register, nothing changes */
		if (!new_registration(pr, cmd->nexus, sa_key, all_tg_pt))
			return scsi_cmd_fail(cmd, no_memory());
	} else {
		if (!ignore_key && key != reg->key)
			return conflict(cmd);
		if (sa_key == 0)
			spc_pr_unregister(lu, reg, cmd->nexus);
		else
			reg->key = sa_key;
	}
	/* SPC-4 6.17.3 APTPL: the last registering command decides whether the state persists. */
	if (sa_key != 0)
		pr->aptpl = aptpl;
	pr->generation++;
	return spc_pr_changed(cmd);
}

static enum scsi_result do_reserve(struct scsi_cmd *cmd, struct spc_pr_registration *reg, uint64_t key, uint8_t type)
{
	struct spc_pr_state *pr = cmd->lu->pr;

	if (!reg || key != reg->key)
		return conflict(cmd);
	if (pr->reserved) {
		/* SPC-4 5.13 (reserving): the holder may repeat its reservation; anything else conflicts. */
		if (spc_pr_is_holder(pr, cmd->nexus) && pr->type == type)
			return SCSI_OK;
		return conflict(cmd);
	}
	pr->reserved = true;
	pr->type = type;
	pr->holder = reg;
	return spc_pr_changed(cmd);
}

static enum scsi_result do_release(struct scsi_cmd *cmd, struct spc_pr_registration *reg, uint64_t key, uint8_t type)
{
	struct scsi_lu *lu = cmd->lu;
	struct spc_pr_state *pr = lu->pr;

	if (!reg || key != reg->key)
		return conflict(cmd);
	/* SPC-4 5.13 (releasing): no reservation, or one this nexus does not hold: GOOD, nothing changes. */
	if (!pr->reserved || !spc_pr_is_holder(pr, cmd->nexus))
		return SCSI_OK;
	if (pr->type != type)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_RELEASE_OF_PERSISTENT_RESERVATION));
	pr->reserved = false;
	pr->holder = NULL;
	/* Registrants only and all registrants types: the other registrants learn of it. */
	if (spc_pr_type_registrants_access(type))
		spc_pr_ua_registrants(lu, cmd->nexus, SCSI_UA_RESERVATIONS_RELEASED);
	return spc_pr_changed(cmd);
}

static enum scsi_result do_clear(struct scsi_cmd *cmd, struct spc_pr_registration *reg, uint64_t key)
{
	struct scsi_lu *lu = cmd->lu;
	struct spc_pr_state *pr = lu->pr;

	if (!reg || key != reg->key)
		return conflict(cmd);
	/* SPC-4 5.13 CLEAR: every other registered I_T nexus gets RESERVATIONS PREEMPTED. */
	spc_pr_ua_registrants(lu, cmd->nexus, SCSI_UA_RESERVATIONS_PREEMPTED);
	pr->reserved = false;
	pr->holder = NULL;
	while (pr->regs) {
		struct spc_pr_registration *r = pr->regs;
		pr->regs = r->next;
		free(r);
	}
	pr->generation++;
	return spc_pr_changed(cmd);
}

/* The preempted I_T nexus identities, for PREEMPT AND ABORT. */
struct preempted {
	struct spc_pr_registration **regs;
	size_t n;
};

static bool match_preempted(const struct scsi_cmd *c, const void *arg)
{
	const struct preempted *p = arg;

	for (size_t i = 0; i < p->n; i++)
		if (spc_pr_reg_matches(p->regs[i], c->nexus))
			return true;
	return false;
}

/*
 * Removes the registrations with key sa_key but the preempting nexus's own
 * (SPC-4 5.13, preempting), telling their nexuses REGISTRATIONS PREEMPTED.  With
 * keep (PREEMPT AND ABORT) the removed registrations go to *out (caller
 * frees) instead of being freed.  Returns the number removed, or -1 when out
 * of memory.
 */
static long remove_by_key(struct scsi_cmd *cmd, const struct spc_pr_registration *self, bool all, uint64_t sa_key,
			  struct preempted *out)
{
	struct spc_pr_state *pr = cmd->lu->pr;
	struct spc_pr_registration **pp = &pr->regs;
	long removed = 0;

	while (*pp) {
		struct spc_pr_registration *r = *pp;
		if (r == self || (!all && r->key != sa_key)) {
			pp = &r->next;
			continue;
		}
		if (out) {
			struct spc_pr_registration **grown = realloc(out->regs, (out->n + 1) * sizeof(*grown));
			if (!grown)
				return -1;
			out->regs = grown;
			out->regs[out->n++] = r;
		}
		*pp = r->next;
		if (pr->holder == r)
			pr->holder = NULL;
		spc_pr_ua_reg(cmd->lu, r, cmd->nexus, SCSI_UA_REGISTRATIONS_PREEMPTED);
		if (!out)
			free(r);
		removed++;
	}
	return removed;
}

static enum scsi_result do_preempt(struct scsi_cmd *cmd, struct spc_pr_registration *reg, uint64_t key,
				   uint64_t sa_key, uint8_t type, bool abort)
{
	struct scsi_lu *lu = cmd->lu;
	struct spc_pr_state *pr = lu->pr;
	struct preempted gone = { NULL, 0 };
	bool new_reservation = false, released = false;
	uint8_t old_type = pr->type;
	long removed;

	if (!reg || key != reg->key)
		return conflict(cmd);
	if (!pr->reserved) {
		/* No reservation: only registrations are preempted; key 0 names none (SPC-4 5.13). */
		if (sa_key == 0)
			return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(8, -1));
		removed = remove_by_key(cmd, reg, false, sa_key, abort ? &gone : NULL);
	} else if (spc_pr_type_all_registrants(pr->type)) {
		if (sa_key == 0) {
			/* SPC-4 5.13 (preempting): every other registrant goes; a new reservation for this nexus. */
			removed = remove_by_key(cmd, reg, true, 0, abort ? &gone : NULL);
			new_reservation = true;
		} else {
			removed = remove_by_key(cmd, reg, false, sa_key, abort ? &gone : NULL);
		}
	} else if (pr->holder && pr->holder->key == sa_key) {
		/* Preempting the holder: its registrations go and the reservation becomes ours. */
		removed = remove_by_key(cmd, reg, false, sa_key, abort ? &gone : NULL);
		new_reservation = true;
		if (removed == 0 && pr->holder == reg)
			removed = 1; /* preempting one's own reservation (a type change) */
	} else {
		if (sa_key == 0)
			return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(8, -1));
		removed = remove_by_key(cmd, reg, false, sa_key, abort ? &gone : NULL);
	}
	if (removed < 0) {
		free(gone.regs);
		return scsi_cmd_fail(cmd, no_memory());
	}
	/* SPC-4 5.13 (preempting): a key that names no registration -> RESERVATION CONFLICT. */
	if (removed == 0) {
		free(gone.regs);
		return conflict(cmd);
	}
	if (new_reservation) {
		released = pr->reserved && old_type != type;
		pr->reserved = true;
		pr->type = type;
		pr->holder = reg;
		/* A changed type: the remaining registrants learn that the old reservation is gone. */
		if (released)
			spc_pr_ua_registrants(lu, cmd->nexus, SCSI_UA_RESERVATIONS_RELEASED);
	}
	pr->generation++;
	if (abort && gone.n) {
		/* SPC-4 5.13, PREEMPT AND ABORT: the preempted nexuses' commands end, without status. */
		scsi_task_set_abort(lu, match_preempted, &gone, NULL);
	}
	for (size_t i = 0; i < gone.n; i++)
		free(gone.regs[i]);
	free(gone.regs);
	return spc_pr_changed(cmd);
}

bool spc_transport_id_parse(const struct scsi_cmd *cmd, const uint8_t *tid, size_t len, char *name, size_t cap)
{
	const struct scsi_transport_ops *t = cmd->nexus->transport;

	if (len < 4 || !t || !t->transport_id_decode || (tid[0] & 0x0f) != t->protocol_identifier)
		return false;
	return t->transport_id_decode(tid, len, name, cap);
}

/* REGISTER AND MOVE (SPC-4 5.13). */
static enum scsi_result do_register_and_move(struct scsi_cmd *cmd, struct spc_pr_registration *reg)
{
	struct scsi_lu *lu = cmd->lu;
	struct spc_pr_state *pr = lu->pr;
	const uint8_t *p = cmd->data_out;
	uint64_t key = get_be64(p), sa_key = get_be64(p + 8);
	bool unreg = p[17] & 0x02, aptpl = p[17] & 0x01;
	uint16_t rtp = get_be16(p + 18);
	uint32_t tid_len = get_be32(p + 20);
	struct spc_pr_registration *dest = NULL;
	char name[256];

	if (!reg || key != reg->key)
		return conflict(cmd);
	/* Only the holder of a reservation that is not all registrants may move it. */
	if (!pr->reserved || spc_pr_type_all_registrants(pr->type) || pr->holder != reg)
		return conflict(cmd);
	if (sa_key == 0)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(8, -1));
	if (tid_len > cmd->data_length - PROUT_BASIC_LEN)
		return scsi_cmd_fail(cmd, sense_parameter_list_length_error());
	if (!spc_transport_id_parse(cmd, p + 24, tid_len, name, sizeof(name)))
		return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(24, -1));
	/* The destination cannot be the I_T nexus that sends the command. */
	if (strcmp(name, cmd->nexus->initiator_port_name) == 0 && rtp == cmd->nexus->relative_target_port)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(18, -1));
	for (struct spc_pr_registration *r = pr->regs; r; r = r->next)
		if (strcmp(r->initiator_port_name, name) == 0 && (r->all_tg_pt || r->relative_target_port == rtp))
			dest = r;
	if (dest) {
		dest->key = sa_key;
	} else {
		dest = calloc(1, sizeof(*dest));
		if (!dest)
			return scsi_cmd_fail(cmd, no_memory());
		dest->key = sa_key;
		snprintf(dest->initiator_port_name, sizeof(dest->initiator_port_name), "%s", name);
		dest->relative_target_port = rtp;
		dest->transport_id_len = (uint16_t)tid_len;
		memcpy(dest->transport_id, p + 24, tid_len);
		dest->next = pr->regs;
		pr->regs = dest;
	}
	pr->holder = dest;
	if (unreg)
		spc_pr_unregister(lu, reg, cmd->nexus);
	pr->aptpl = aptpl;
	pr->generation++;
	return spc_pr_changed(cmd);
}

enum scsi_result spc_persistent_reserve_out_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	struct spc_pr_state *pr = lu->pr;
	const uint8_t *p = cmd->data_out;
	uint8_t sa = cmd->cdb[1] & 0x1f, type = cmd->cdb[2] & 0x0f;
	struct spc_pr_registration *reg;
	uint64_t key, sa_key;
	bool all_tg_pt, aptpl;
	size_t stale_len;

	/* Another node holds the medium and the reservation state kept with it: it runs the command. */
	if (spc_alua_waits_for_backend(lu))
		return spc_pr_out_forward(cmd);
	/* The notice for the other nodes (spc_pr_changed) is this command's alone. */
	free(spc_pr_peer_take_notice(lu, &stale_len));
	if (lu->spc2_reservation_holder)
		return conflict(cmd);
	if (!p || cmd->data_out_len < PROUT_BASIC_LEN)
		return scsi_cmd_fail(cmd, sense_parameter_list_length_error());
	reg = spc_pr_find(pr, cmd->nexus);
	if (sa == SCSI_SA_PROUT_REGISTER_AND_MOVE)
		return do_register_and_move(cmd, reg);
	key = get_be64(p);
	sa_key = get_be64(p + 8);
	all_tg_pt = p[20] & 0x04;
	aptpl = p[20] & 0x01;
	/* SIP_C = 0: SPEC_I_PT is not supported. */
	if (p[20] & 0x08)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(20, 3));
	switch (sa) {
	case SCSI_SA_PROUT_REGISTER:
		return do_register(cmd, reg, key, sa_key, all_tg_pt, aptpl, false);
	case SCSI_SA_PROUT_REGISTER_AND_IGNORE_EXISTING_KEY:
		return do_register(cmd, reg, key, sa_key, all_tg_pt, aptpl, true);
	case SCSI_SA_PROUT_RESERVE:
		return do_reserve(cmd, reg, key, type);
	case SCSI_SA_PROUT_RELEASE:
		return do_release(cmd, reg, key, type);
	case SCSI_SA_PROUT_CLEAR:
		return do_clear(cmd, reg, key);
	case SCSI_SA_PROUT_PREEMPT:
		return do_preempt(cmd, reg, key, sa_key, type, false);
	case SCSI_SA_PROUT_PREEMPT_AND_ABORT:
		return do_preempt(cmd, reg, key, sa_key, type, true);
	default: /* parse refused the rest */
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(1, 4));
	}
}
