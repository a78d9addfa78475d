/*
 * Sessions (RFC 7143 4.2.2, 6.3): the session table keyed by (InitiatorName,
 * ISID, target), TSIH allocation, session reinstatement, the I_T nexus of a
 * normal session, and the CmdSN window that orders commands.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "iscsi_internal.h"

uint32_t iscsi_session_max_cmd_sn(const struct iscsi_session *s)
{
	/*
	 * RFC 7143 4.2.2.1: the window is [ExpCmdSN, MaxCmdSN].  At most
	 * cmd_window commands may be outstanding: each delivered and unfinished
	 * SCSI command keeps a place, so MaxCmdSN moves on as commands finish
	 * and never goes back (an arrival advances ExpCmdSN and the count
	 * together).  MaxCmdSN = ExpCmdSN - 1 closes the window.
	 */
	uint32_t free = s->srv->params.cmd_window > s->cmds_in_window ? s->srv->params.cmd_window - s->cmds_in_window : 0;

	return s->exp_cmd_sn + free - 1;
}

void iscsi_session_get(struct iscsi_session *s)
{
	s->refs++;
}

void iscsi_session_put(struct iscsi_session *s)
{
	if (--s->refs > 0)
		return;
	free(s);
}

struct iscsi_session *iscsi_session_find(struct iscsi_server *srv, const char *initiator_name,
					 const uint8_t *isid, const struct iscsi_target *target,
					 enum iscsi_session_type type)
{
	for (struct iscsi_session *s = srv->sessions; s; s = s->next) {
		if (s->type == type && s->target == target && memcmp(s->isid, isid, 6) == 0 &&
		    strcasecmp(s->initiator_name, initiator_name) == 0)
			return s;
	}
	return NULL;
}

struct iscsi_session *iscsi_session_find_tsih(struct iscsi_server *srv, uint16_t tsih)
{
	for (struct iscsi_session *s = srv->sessions; s; s = s->next)
		if (s->tsih == tsih)
			return s;
	return NULL;
}

static uint16_t allocate_tsih(struct iscsi_server *srv)
{
	/* RFC 7143 11.12.6: TSIH 0 is reserved for "new session". */
	for (;;) {
		uint16_t tsih = srv->next_tsih++;
		if (tsih == 0)
			continue;
		if (!iscsi_session_find_tsih(srv, tsih))
			return tsih;
	}
}

struct iscsi_session *iscsi_session_create(struct iscsi_conn *conn, struct iscsi_login *login)
{
	struct iscsi_server *srv = conn->srv;
	struct iscsi_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->srv = srv;
	s->target = login->target;
	s->type = login->neg.session_type;
	snprintf(s->initiator_name, sizeof(s->initiator_name), "%s", login->neg.initiator_name);
	memcpy(s->isid, login->isid, 6);
	s->params = login->neg.sess;
	s->exp_cmd_sn = login->cmd_sn;
	if (s->type == ISCSI_SESSION_NORMAL) {
		char port_name[ISCSI_NAME_MAX + 32], target_port[ISCSI_NAME_MAX + 32];

		/* RFC 7143 10.1 / SAM-5: initiator port name "<name>,i,0x<ISID>", target port "<name>,t,0x<TPGT>". */
		snprintf(port_name, sizeof(port_name), "%s,i,0x%02x%02x%02x%02x%02x%02x", s->initiator_name,
			 s->isid[0], s->isid[1], s->isid[2], s->isid[3], s->isid[4], s->isid[5]);
		iscsi_port_name_fold(port_name);
		snprintf(target_port, sizeof(target_port), "%s,t,0x%04x", s->target->name, s->target->tpgt);
		s->nexus = scsi_nexus_create(s->target->device, &iscsi_scsi_transport, port_name, target_port,
					     s->target->tpgt);
		if (!s->nexus) {
			free(s);
			return NULL;
		}
	}
	s->tsih = allocate_tsih(srv);
	s->refs = 1; /* the table */
	s->in_table = true;
	s->next = srv->sessions;
	srv->sessions = s;
	s->conn = conn;
	iscsi_session_get(s); /* the connection */
	conn->session = s;
	return s;
}

void iscsi_session_clear_ordered(struct iscsi_session *s)
{
	while (s->ordered) {
		struct iscsi_ordered *o = s->ordered;
		s->ordered = o->next;
		if (o->task) {
			o->task->state = ISCSI_TASK_STATE_DONE;
			iscsi_task_maybe_retire(o->task);
		}
		free(o->copy);
		free(o);
	}
	s->ordered_count = 0;
}

void iscsi_session_end(struct iscsi_session *s, const char *why)
{
	struct iscsi_server *srv = s->srv;

	if (!s->in_table)
		return;
	ISCSI_DEBUG(srv, "session TSIH %u of %s ends: %s", s->tsih, s->initiator_name, why);
	s->in_table = false;
	for (struct iscsi_session **pp = &srv->sessions; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	iscsi_session_get(s);
	if (s->conn)
		iscsi_conn_drop(s->conn, why); /* comes back here with in_table false */
	if (s->nexus) {
		struct scsi_nexus *nexus = s->nexus;
		s->nexus = NULL;
		/* Commands still in the core end through aborted(); the nexus goes when the last is released. */
		scsi_nexus_destroy(nexus);
	}
	s->refs--; /* the table's; the one taken above keeps s alive */
	iscsi_session_put(s);
}

/* ---- CmdSN ordering (RFC 7143 3.2.2.1) ---- */

bool iscsi_session_cmd_sn_acceptable(const struct iscsi_session *s, uint32_t cmd_sn)
{
	if (iscsi_sn_lt(cmd_sn, s->exp_cmd_sn) || iscsi_sn_lt(iscsi_session_max_cmd_sn(s), cmd_sn))
		return false;
	for (const struct iscsi_ordered *o = s->ordered; o; o = o->next)
		if (o->cmd_sn == cmd_sn)
			return false;
	return true;
}

int iscsi_session_order(struct iscsi_session *s, const struct iscsi_pdu *pdu, struct iscsi_task *task)
{
	uint32_t cmd_sn = get_be32(pdu->bhs + ISCSI_BHS_CMD_SN);
	uint32_t max_cmd_sn = iscsi_session_max_cmd_sn(s);
	struct iscsi_ordered *o, **pp;

	/* Outside [ExpCmdSN, MaxCmdSN] (empty while the window is closed): "silently ignored" (RFC 7143 4.2.2.1). */
	if (iscsi_sn_lt(cmd_sn, s->exp_cmd_sn) || iscsi_sn_lt(max_cmd_sn, cmd_sn)) {
		ISCSI_PEER_ERROR(s->srv, "CmdSN %u outside window [%u, %u]: ignored", cmd_sn, s->exp_cmd_sn, max_cmd_sn);
		return -1;
	}
	if (cmd_sn == s->exp_cmd_sn) {
		s->exp_cmd_sn++;
		return 1;
	}
	for (o = s->ordered; o; o = o->next) {
		if (o->cmd_sn == cmd_sn) {
			ISCSI_PEER_ERROR(s->srv, "CmdSN %u received twice: ignored", cmd_sn);
			return -1;
		}
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		return -1;
	o->cmd_sn = cmd_sn;
	if (task) {
		o->task = task;
	} else {
		size_t len = ISCSI_BHS_LEN + pdu->data_len;
		o->copy = malloc(len);
		if (!o->copy) {
			free(o);
			return -1;
		}
		memcpy(o->copy, pdu->bhs, ISCSI_BHS_LEN);
		if (pdu->data_len)
			memcpy(o->copy + ISCSI_BHS_LEN, pdu->data, pdu->data_len);
		o->pdu.bhs = o->copy;
		o->pdu.data = pdu->data_len ? o->copy + ISCSI_BHS_LEN : NULL;
		o->pdu.data_len = pdu->data_len;
	}
	for (pp = &s->ordered; *pp && iscsi_sn_lt((*pp)->cmd_sn, cmd_sn); pp = &(*pp)->next)
		;
	o->next = *pp;
	*pp = o;
	s->ordered_count++;
	return 0;
}

void iscsi_session_run_ordered(struct iscsi_session *s)
{
	iscsi_session_get(s);
	while (s->ordered && s->ordered->cmd_sn == s->exp_cmd_sn && s->conn &&
	       s->conn->state != ISCSI_CONN_STATE_CLOSED) {
		struct iscsi_ordered *o = s->ordered;
		s->ordered = o->next;
		s->ordered_count--;
		s->exp_cmd_sn++;
		if (o->task)
			iscsi_task_submit(o->task);
		else
			iscsi_conn_dispatch_ordered(s->conn, &o->pdu);
		free(o->copy);
		free(o);
	}
	iscsi_session_put(s);
}

void iscsi_server_foreach_session(struct iscsi_server *srv,
				  void (*fn)(void *arg, const struct iscsi_session_info *info), void *arg)
{
	for (struct iscsi_session *s = srv->sessions; s; s = s->next) {
		struct iscsi_conn *c = s->conn;
		struct iscsi_session_info info = {
			.target = s->target ? s->target->name : NULL,
			.initiator = s->initiator_name,
			.tsih = s->tsih,
			.connections = c ? 1 : 0,
			.peer = c ? c->peer : "",
			.portal = c ? c->local : "",
			.cid = c ? c->cid : 0,
			.exp_cmd_sn = s->exp_cmd_sn,
			.max_cmd_sn = iscsi_session_max_cmd_sn(s),
			.commands = s->cmds_in_window + s->immediate_active,
			.header_digest = c && c->params.header_digest == ISCSI_DIGEST_CRC32C,
			.data_digest = c && c->params.data_digest == ISCSI_DIGEST_CRC32C,
			.immediate_data = s->params.immediate_data,
			.initial_r2t = s->params.initial_r2t,
			.max_burst_length = s->params.max_burst_length,
			.first_burst_length = s->params.first_burst_length,
			.max_recv_data_segment_length = c ? c->params.max_recv_data_segment_length : 0,
		};

		memcpy(info.isid, s->isid, sizeof(info.isid));
		fn(arg, &info);
	}
}

unsigned iscsi_server_drop_target(struct iscsi_server *srv, const char *target, const char *why)
{
	unsigned dropped = 0;

	/* A drop may end and unlink the session: look again from the head after each. */
	for (;;) {
		struct iscsi_session *s = srv->sessions;

		while (s && !(s->conn && s->target && strcmp(s->target->name, target) == 0))
			s = s->next;
		if (!s)
			return dropped;
		iscsi_conn_drop(s->conn, why);
		dropped++;
	}
}
