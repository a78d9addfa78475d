/*
 * Asymmetric logical unit access (SPC-4 5.15): the target port group of the
 * device's target port, its asymmetric access state for each LU, REPORT
 * TARGET PORT GROUPS (MAINTENANCE IN A3h, SA 0Ah; SPC-4 6.37) and SET
 * TARGET PORT GROUPS (MAINTENANCE OUT A4h, SA 0Ah; SPC-4 6.45).
 *
 * One target port group per device: the daemon's node.  With
 * params.alua_standby_until_backend the group waits in standby while the
 * backend is being opened (another node holds the medium) and becomes
 * active/optimized once it is open (docs/rbd.md).  The groups of the other
 * nodes serving that medium (params.alua_peers) are listed beside it, in
 * the states this node sees: while it holds the medium they wait in
 * standby; while it waits, the group named in the holder's note
 * (backend_ops.holder_note, scsi_alua_holder_note) is active/optimized and
 * the others standby.  So every node reports the same groups.  A group
 * whose node the backend finds dead (backend_ops.peer_alive: its heartbeat
 * beside the medium stopped) is offline (SPC-4 5.15.2.4.6: its ports are
 * not accessible), whichever of the two it would be.
 * Supported states: active/optimized, active/non-optimized, standby,
 * unavailable, and transitioning between them; offline for the groups of
 * other nodes when the backend tells whether they live; not logical block
 * dependent.
 *
 * Which commands each state still processes is the op table's OP_ALUA_*
 * flags: the lists of SPC-4 5.15.2.4.4 (standby), 5.15.2.4.5 (unavailable)
 * and 5.15.2.5 (transitioning) as Linux's drivers/target/target_core_alua.c
 * (core_alua_state_standby, _unavailable, _transition) implements them,
 * with MODE SENSE(10) / MODE SELECT(10) beside the 6-byte forms.  READ
 * CAPACITY in standby is not in SPC-4's list; Linux's target and SCST
 * (scst_tg.c) both allow it, so that a host can size the disk through a
 * standby path.  TEST UNIT READY gets the NOT READY of the state, as LIO
 * answers (dm-multipath's tur checker reads 02/04/0B as a standby path).
 *
 * A transition (SPC-4 5.15.2.2 implicit, 5.15.2.3 explicit) shows as
 * transitioning (NOT READY 02/04/0A) for the LU's alua_transition_ms, then
 * as the new state.  Each step establishes ASYMMETRIC ACCESS STATE CHANGED
 * (06/2A/06) for every I_T nexus but the one whose SET TARGET PORT GROUPS
 * asked for it, as LIO does (core_alua_queue_state_change_ua).
 */
#include <stddef.h>
#include <stdio.h>

#include "sched/task_set.h"
#include "sched/timer.h"
#include "spc/spc.h"

#define STATUS_NONE 0x00
#define STATUS_BY_STPG 0x01     /* altered by SET TARGET PORT GROUPS */
#define STATUS_BY_IMPLICIT 0x02 /* altered by implicit asymmetric access behaviour */

/* Target port group descriptor byte 1: T_SUP, U_SUP, S_SUP, AN_SUP, AO_SUP (no LBD_SUP); O_SUP apart. */
#define SUPPORTED_STATES 0x8f
#define O_SUP 0x40
/* ASYMMETRIC ACCESS STATE Eh, offline (SPC-4 6.37): shown for another node's group only, never this LU's state. */
#define STATE_OFFLINE 0xe

#define FORMAT_LENGTH_ONLY 0x0
#define FORMAT_EXTENDED 0x1

bool spc_alua_enabled(const struct scsi_lu *lu)
{
	return lu->params.alua_tpgs != 0;
}

bool spc_alua_explicit_enabled(const struct scsi_lu *lu)
{
	return (lu->params.alua_tpgs & SCSI_TPGS_EXPLICIT) != 0;
}

static bool settable(unsigned state)
{
	return state == SCSI_ALUA_ACTIVE_OPTIMIZED || state == SCSI_ALUA_ACTIVE_NON_OPTIMIZED ||
	       state == SCSI_ALUA_STANDBY || state == SCSI_ALUA_UNAVAILABLE;
}

static void state_changed(struct scsi_lu *lu)
{
	scsi_ua_establish_all(lu, SCSI_UA_ASYMMETRIC_ACCESS_STATE_CHANGED, lu->alua.requester);
}

static void transition_end(struct scsi_lu *lu)
{
	lu->alua.state = lu->alua.target;
	state_changed(lu);
	if (lu->alua.requester)
		scsi_nexus_put(lu->alua.requester);
	lu->alua.requester = NULL;
}

static void transition_timer_fire(struct scsi_timer *t)
{
	struct scsi_lu *lu = (struct scsi_lu *)((char *)t - offsetof(struct scsi_lu, alua.timer));

	transition_end(lu);
}

/* Moves the group to state; requester: the nexus of a SET TARGET PORT GROUPS (NULL: implicit). */
static void transition(struct scsi_lu *lu, enum scsi_alua_state state, struct scsi_nexus *requester)
{
	uint64_t ms = lu->params.alua_transition_ms;

	if (lu->alua.state == state)
		return; /* no change: no unit attention */
	lu->alua.target = state;
	lu->alua.status = requester ? STATUS_BY_STPG : STATUS_BY_IMPLICIT;
	/* A new request during a transition: it ends in the new state, on the old schedule. */
	if (scsi_timer_armed(lu->dev, &lu->alua.timer))
		return;
	lu->alua.requester = requester;
	if (requester)
		scsi_nexus_get(requester);
	if (ms == 0 || !scsi_timer_available(lu->dev)) {
		transition_end(lu);
		return;
	}
	lu->alua.state = SCSI_ALUA_TRANSITIONING;
	state_changed(lu);
	lu->alua.timer.fire = transition_timer_fire;
	scsi_timer_arm(lu->dev, &lu->alua.timer, scsi_device_now(lu->dev) + ms * 1000000ull);
}

void spc_alua_init(struct scsi_lu *lu)
{
	if (!lu->params.target_port_group)
		lu->params.target_port_group = 1;
	if (!settable(lu->params.alua_state))
		lu->params.alua_state = SCSI_ALUA_ACTIVE_OPTIMIZED;
	lu->alua.state = lu->alua.target = lu->params.alua_state;
	lu->alua.status = STATUS_NONE;
}

/* The group follows its backend: standby until it is open, then active/optimized (an implicit transition). */
static bool follows_backend(const struct scsi_lu *lu)
{
	return lu->params.alua_standby_until_backend && (lu->params.alua_tpgs & SCSI_TPGS_IMPLICIT);
}

bool spc_alua_wait_for_backend(struct scsi_lu *lu)
{
	if (!follows_backend(lu))
		return false;
	lu->alua.state = lu->alua.target = SCSI_ALUA_STANDBY;
	return true;
}

void spc_alua_backend_ready(struct scsi_lu *lu)
{
	if (follows_backend(lu))
		transition(lu, SCSI_ALUA_ACTIVE_OPTIMIZED, NULL);
}

bool spc_alua_backend_lost(struct scsi_lu *lu)
{
	if (!follows_backend(lu))
		return false;
	transition(lu, SCSI_ALUA_STANDBY, NULL);
	return true;
}

static bool waits_for_backend(const struct scsi_lu *lu)
{
	return lu->backend_pending && follows_backend(lu);
}

bool spc_alua_waits_for_backend(const struct scsi_lu *lu)
{
	return waits_for_backend(lu);
}

/* Whether the group may become active now: not while it waits for its backend (spc_alua_wait_for_backend). */
static bool may_be_active(const struct scsi_lu *lu, enum scsi_alua_state state)
{
	return !waits_for_backend(lu) ||
	       (state != SCSI_ALUA_ACTIVE_OPTIMIZED && state != SCSI_ALUA_ACTIVE_NON_OPTIMIZED);
}

void spc_alua_fini(struct scsi_lu *lu)
{
	if (scsi_timer_armed(lu->dev, &lu->alua.timer))
		scsi_timer_cancel(lu->dev, &lu->alua.timer);
	if (lu->alua.requester)
		scsi_nexus_put(lu->alua.requester);
	lu->alua.requester = NULL;
}

int scsi_lu_set_alua_state(struct scsi_lu *lu, enum scsi_alua_state state, char *err, size_t errlen)
{
	if (!spc_alua_enabled(lu)) {
		snprintf(err, errlen, "LUN %u has no asymmetric access (its target's alua is none)", lu->lun);
		return -1;
	}
	if (!settable(state)) {
		snprintf(err, errlen, "a target port group can be active/optimized, active/non-optimized, standby "
				      "or unavailable");
		return -1;
	}
	if (!may_be_active(lu, state)) {
		snprintf(err, errlen, "LUN %u waits for its medium in standby (rbd_unavailable = standby): it becomes "
			 "active/optimized when it has it", lu->lun);
		return -1;
	}
	transition(lu, state, NULL);
	return 0;
}

/*
 * PERSISTENT RESERVE OUT, MODE SELECT(6/10), LOG SELECT: the state they save
 * lives with the medium (backend_ops.state_store: docs/rbd.md), which only
 * the node that holds it may write; they get the standby state's 02/04/0B
 * on a node that waits for it rather than change the node's own stale copy.
 * PERSISTENT RESERVE IN reads the holder's state from the shared store
 * (backend_ops.state_peek, spc_pr_in.c), and PERSISTENT RESERVE OUT is run
 * by the holder (backend_ops.ask_holder, spc_pr_peer.c), where the backend
 * offers that.
 */
static bool keeps_state_with_medium(const struct scsi_cmd *cmd)
{
	const struct backend *be = cmd->lu->backend;

	if (cmd->op->opcode == SCSI_OP_PERSISTENT_RESERVE_IN)
		return !be || !be->ops->state_peek;
	if (cmd->op->opcode == SCSI_OP_PERSISTENT_RESERVE_OUT)
		return !be || !be->ops->ask_holder;
	return cmd->op->opcode == SCSI_OP_MODE_SELECT_6 || cmd->op->opcode == SCSI_OP_MODE_SELECT_10 ||
	       cmd->op->opcode == SCSI_OP_LOG_SELECT;
}

bool spc_alua_gate(struct scsi_cmd *cmd)
{
	uint32_t flags = cmd->op->flags;
	uint16_t asc_ascq;

	if (!spc_alua_enabled(cmd->lu))
		return true;
	switch (cmd->lu->alua.state) {
	case SCSI_ALUA_ACTIVE_OPTIMIZED:
	case SCSI_ALUA_ACTIVE_NON_OPTIMIZED:
		return true;
	case SCSI_ALUA_STANDBY:
		if ((flags & OP_ALUA_STANDBY_OK) && !(waits_for_backend(cmd->lu) && keeps_state_with_medium(cmd)))
			return true;
		asc_ascq = ASC_LOGICAL_UNIT_NOT_ACCESSIBLE_TARGET_PORT_IN_STANDBY_STATE;
		break;
	case SCSI_ALUA_UNAVAILABLE:
		if (flags & OP_ALUA_UNAVAILABLE_OK)
			return true;
		asc_ascq = ASC_LOGICAL_UNIT_NOT_ACCESSIBLE_TARGET_PORT_IN_UNAVAILABLE_STATE;
		break;
	case SCSI_ALUA_TRANSITIONING:
	default:
		if (flags & OP_ALUA_TRANSITIONING_OK)
			return true;
		asc_ascq = ASC_LOGICAL_UNIT_NOT_ACCESSIBLE_ASYMMETRIC_ACCESS_STATE_TRANSITION;
		break;
	}
	scsi_cmd_fail(cmd, sense_make(SENSE_KEY_NOT_READY, asc_ascq));
	return false;
}

#define NOTE_FORMAT "target port group %u"

void scsi_alua_holder_note(uint16_t target_port_group, char *buf, size_t len)
{
	snprintf(buf, len, NOTE_FORMAT, (unsigned)target_port_group);
}

/* The group of the node holding the medium, as the backend last heard (backend_ops.holder_note); 0: not known. */
static uint16_t holder_group(const struct scsi_lu *lu)
{
	char note[64];
	unsigned group;

	if (!lu->backend || !lu->backend->ops->holder_note ||
	    lu->backend->ops->holder_note(lu->backend, note, sizeof(note)) != 0 ||
	    sscanf(note, NOTE_FORMAT, &group) != 1 || group == 0 || group > 0xffff)
		return 0;
	return (uint16_t)group;
}

/* Whether the backend tells if other nodes live (backend_ops.peer_alive). */
static bool peers_watched(const struct scsi_lu *lu)
{
	return lu->params.alua_peer_count && lu->backend && lu->backend->ops->peer_alive;
}

/* Whether the node of group, another node's, is known dead (backend_ops.peer_alive). */
static bool peer_dead(const struct scsi_lu *lu, uint16_t group)
{
	char note[64];

	if (!peers_watched(lu))
		return false;
	scsi_alua_holder_note(group, note, sizeof(note));
	return lu->backend->ops->peer_alive(lu->backend, note) == 0;
}

/* A target port group as this node sees it. */
struct group_view {
	uint16_t group;
	uint16_t relative_target_port;
	uint8_t state;
	uint8_t status;
};

/* The LU's own group (with port own_port) and the other nodes' (module comment), in group order; the count. */
static unsigned groups_seen(const struct scsi_lu *lu, uint16_t own_port, struct group_view *v)
{
	uint16_t holder = waits_for_backend(lu) ? holder_group(lu) : 0;
	unsigned n = 0;

	v[n++] = (struct group_view){ lu->params.target_port_group, own_port, (uint8_t)lu->alua.state,
				      lu->alua.status };
	for (unsigned i = 0; i < lu->params.alua_peer_count && i < SCSI_ALUA_PEERS_MAX; i++) {
		const struct scsi_alua_peer *p = &lu->params.alua_peers[i];
		struct group_view g = { p->group, p->relative_target_port, SCSI_ALUA_STANDBY, STATUS_NONE };
		unsigned j = n++;

		if (peer_dead(lu, p->group))
			g.state = STATE_OFFLINE;
		else if (p->group == holder)
			g.state = SCSI_ALUA_ACTIVE_OPTIMIZED;

		for (; j > 0 && v[j - 1].group > g.group; j--)
			v[j] = v[j - 1];
		v[j] = g;
	}
	return n;
}

/*
 * REPORT TARGET PORT GROUPS (SPC-4 6.37): PARAMETER DATA FORMAT (byte 1
 * bits 7:5) 000b gives the 4-byte header, 001b the extended one (FORMAT
 * TYPE 001b, IMPLICIT TRANSITION TIME in seconds); ALLOCATION LENGTH bytes
 * 6-9.  RETURN DATA LENGTH counts every byte after itself (n - 3), in both
 * formats, as sg3_utils' sg_rtpg reads it.  The data is cut at the
 * allocation length, whatever it cuts (libiscsi's test_rtpg_alloc_length).
 *
 * A descriptor per group (groups_seen; 8 bytes + 4 per target port): byte
 * 0 PREF (0) and ASYMMETRIC ACCESS STATE, byte 1 the supported states,
 * bytes 2-3 TARGET PORT GROUP, byte 5 STATUS CODE (00h for another node's
 * group: this node does not know what moved it), byte 7 TARGET PORT COUNT
 * (1); the target port descriptor has its RELATIVE TARGET PORT IDENTIFIER
 * in bytes 2-3.
 */
enum scsi_result spc_report_target_port_groups_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	uint8_t format = cmd->cdb[1] >> 5;
	struct group_view v[1 + SCSI_ALUA_PEERS_MAX];
	unsigned n = groups_seen(lu, cmd->nexus->relative_target_port, v);
	size_t hdr = format == FORMAT_EXTENDED ? 8 : 4, len = hdr + n * (8 + 4);
	uint8_t *b, *d;

	cmd->allocation_length = get_be32(cmd->cdb + 6);
	if (format != FORMAT_LENGTH_ONLY && format != FORMAT_EXTENDED)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(1, 7));
	b = scsi_cmd_alloc_data_in(cmd, len);
	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	put_be32(b, (uint32_t)(len - 4)); /* RETURN DATA LENGTH */
	if (format == FORMAT_EXTENDED) {
		uint32_t secs = (lu->params.alua_transition_ms + 999) / 1000;

		b[4] = FORMAT_EXTENDED << 4;                 /* FORMAT TYPE */
		b[5] = (uint8_t)(secs > 255 ? 255 : secs);   /* IMPLICIT TRANSITION TIME */
	}
	for (unsigned i = 0; i < n; i++) {
		d = b + hdr + i * (8 + 4);
		d[0] = v[i].state;
		d[1] = SUPPORTED_STATES | (peers_watched(lu) ? O_SUP : 0);
		put_be16(d + 2, v[i].group);
		d[5] = v[i].status;
		d[7] = 1; /* TARGET PORT COUNT */
		put_be16(d + 8 + 2, v[i].relative_target_port);
	}
	scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	return SCSI_OK;
}

/* A parameter list: 4 reserved bytes and a 4-byte descriptor per group to set. */
#define STPG_LIST_MAX (4 + 4 * 64)

enum scsi_result spc_set_target_port_groups_parse(struct scsi_cmd *cmd)
{
	uint32_t len = get_be32(cmd->cdb + 6);

	if (len > STPG_LIST_MAX)
		return scsi_cmd_fail(cmd, sense_parameter_list_length_error());
	cmd->data_length = len;
	return SCSI_OK;
}

/*
 * SET TARGET PORT GROUPS (SPC-4 6.45): each descriptor has the ASYMMETRIC
 * ACCESS STATE in byte 0 bits 3:0 and the TARGET PORT GROUP in bytes 2-3.
 * A list that cuts a descriptor: PARAMETER LIST LENGTH ERROR (05/1A/00); an
 * unknown group, a state that cannot be requested (transitioning, offline,
 * logical block dependent, reserved) or one group named twice: INVALID
 * FIELD IN PARAMETER LIST (05/26/00) with the field pointer, and nothing
 * changed.  No descriptor: nothing to do.
 *
 * Another node's group (params.alua_peers) is moved by that node alone: a
 * descriptor asking it for the state it is in changes nothing; one asking
 * for another state fails the command (below).
 */
enum scsi_result spc_set_target_port_groups_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	const uint8_t *p = cmd->data_out;
	size_t len = cmd->data_length;
	struct group_view v[1 + SCSI_ALUA_PEERS_MAX];
	unsigned n = groups_seen(lu, cmd->nexus->relative_target_port, v), named = 0, i;
	bool refused = false;
	int own = -1;

	if (len == 0)
		return SCSI_OK;
	if (len < 4 || (len - 4) % 4 || !p)
		return scsi_cmd_fail(cmd, sense_parameter_list_length_error());
	for (size_t off = 4; off < len; off += 4) {
		uint16_t group = get_be16(p + off + 2);

		if (p[off] & 0xf0)
			return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list((uint16_t)off, 7));
		if (!settable(p[off] & 0x0f))
			return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list((uint16_t)off, 3));
		for (i = 0; i < n && v[i].group != group; i++)
			;
		if (i == n || (named & (1u << i)))
			return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list((uint16_t)(off + 2), 7));
		named |= 1u << i;
		if (group == lu->params.target_port_group)
			own = (int)off;
		else if ((p[off] & 0x0f) != v[i].state)
			refused = true;
	}
	/*
	 * Another node's group asked to move, or a group that waits for its
	 * medium (another node holds it) asked to be active: HARDWARE ERROR,
	 * SET TARGET PORT GROUPS COMMAND FAILED (SPC-4 6.45; tcmu-runner's
	 * alua.c answers so when its image lock cannot be had).  Nothing
	 * changes.
	 */
	if (refused || (own >= 0 && !may_be_active(lu, (enum scsi_alua_state)(p[own] & 0x0f))))
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_HARDWARE_ERROR, ASC_SET_TARGET_PORT_GROUPS_COMMAND_FAILED));
	if (own >= 0)
		transition(lu, (enum scsi_alua_state)(p[own] & 0x0f), cmd->nexus);
	return SCSI_OK;
}
