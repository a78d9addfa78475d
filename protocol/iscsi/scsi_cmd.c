/*
 * SCSI Command PDU (RFC 7143 11.3) -> struct scsi_cmd embedded in a task,
 * and the transport callbacks the core calls back through.
 *
 * This file decodes the command and manages task lifetimes; Data-Out
 * collection, R2T and Data-In/response generation live in data.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iscsi_internal.h"

/* ---- task lifetime ---- */

void iscsi_task_get(struct iscsi_task *task)
{
	task->refs++;
}

/*
 * The task cache: a freed task (and its Data-In buffer, up to
 * TASK_CACHE_BUF_MAX) is kept for the next command, up to TASK_CACHE_MAX
 * of them, instead of a calloc, a malloc and their frees per command (about
 * a sixth of the daemon's instructions per 4 KiB read in callgrind).
 */
#define TASK_CACHE_MAX 128
#define TASK_CACHE_BUF_MAX (64u << 10)

static struct iscsi_task *task_alloc(struct iscsi_server *srv)
{
	struct iscsi_task *task = srv->task_cache;
	uint8_t *buf;
	uint32_t cap;

	if (!task)
		return calloc(1, sizeof(*task));
	srv->task_cache = task->hnext;
	srv->task_cache_len--;
	buf = task->data_in_buf;
	cap = task->data_in_cap;
	memset(task, 0, sizeof(*task));
	task->data_in_buf = buf;
	task->data_in_cap = cap;
	return task;
}

static void task_free(struct iscsi_server *srv, struct iscsi_task *task)
{
	free(task->buf);
	if (srv->shutting_down || srv->task_cache_len >= TASK_CACHE_MAX) {
		free(task->data_in_buf);
		free(task);
		return;
	}
	if (task->data_in_cap > TASK_CACHE_BUF_MAX) {
		free(task->data_in_buf);
		task->data_in_buf = NULL;
		task->data_in_cap = 0;
	}
	task->hnext = srv->task_cache;
	srv->task_cache = task;
	srv->task_cache_len++;
}

void iscsi_task_cache_free(struct iscsi_server *srv)
{
	while (srv->task_cache) {
		struct iscsi_task *task = srv->task_cache;

		srv->task_cache = task->hnext;
		free(task->data_in_buf);
		free(task);
	}
	srv->task_cache_len = 0;
}

/* Drops n references at once; the last one frees the task. */
static void task_put_n(struct iscsi_task *task, unsigned n)
{
	struct iscsi_conn *conn;

	task->refs -= n;
	if (task->refs > 0)
		return;
	conn = task->conn;
	if (task->submitted)
		scsi_cmd_release(&task->cmd);
	task_free(conn->srv, task);
	iscsi_conn_put(conn);
}

void iscsi_task_put(struct iscsi_task *task)
{
	task_put_n(task, 1);
}

/* ---- the connection's tasks by ITT: a chained hash table, doubled as tasks grow ---- */

static unsigned itt_bucket(uint32_t itt, unsigned nbuckets)
{
	/* Fibonacci hashing: initiators count ITTs up, often in the high bits too. */
	return (unsigned)((itt * 2654435769u) >> 16) & (nbuckets - 1);
}

static bool itt_table_grow(struct iscsi_conn *conn)
{
	unsigned n = conn->itt_nbuckets ? conn->itt_nbuckets * 2 : 64;
	struct iscsi_task **b = calloc(n, sizeof(*b));
	struct iscsi_task *t;

	if (!b)
		return false;
	LIST_FOREACH(t, &conn->tasks, link) {
		unsigned i = itt_bucket(t->itt, n);

		t->hnext = b[i];
		b[i] = t;
	}
	free(conn->itt_buckets);
	conn->itt_buckets = b;
	conn->itt_nbuckets = n;
	return true;
}

/* Puts the task on its connection's list (it holds a reference).  False when out of memory. */
bool iscsi_task_link(struct iscsi_task *task)
{
	struct iscsi_conn *conn = task->conn;
	unsigned i;

	if (conn->ntasks >= 2 * conn->itt_nbuckets && !itt_table_grow(conn) && !conn->itt_nbuckets)
		return false;
	i = itt_bucket(task->itt, conn->itt_nbuckets);
	task->hnext = conn->itt_buckets[i];
	conn->itt_buckets[i] = task;
	LIST_INSERT_HEAD(&conn->tasks, task, link);
	task->on_list = true;
	conn->ntasks++;
	return true;
}

/* Takes the task off its connection's list; returns the list's reference for the caller to drop. */
static unsigned task_unlink_keep_ref(struct iscsi_task *task)
{
	struct iscsi_conn *conn = task->conn;

	if (!task->on_list)
		return 0;
	for (struct iscsi_task **pp = &conn->itt_buckets[itt_bucket(task->itt, conn->itt_nbuckets)]; *pp;
	     pp = &(*pp)->hnext) {
		if (*pp == task) {
			*pp = task->hnext;
			break;
		}
	}
	task->hnext = NULL;
	conn->ntasks--;
	LIST_REMOVE(task, link);
	task->on_list = false;
	return 1;
}

void iscsi_task_unlink(struct iscsi_task *task)
{
	task_put_n(task, task_unlink_keep_ref(task));
}

/*
 * A finished task stays findable by ITT until its unsolicited Data-Out has
 * all arrived, so that late unsolicited data is absorbed, not taken for a
 * reused ITT.  Returns the references the caller must drop (0 or 1).
 */
static unsigned task_retire_keep_ref(struct iscsi_task *task)
{
	if (task->state != ISCSI_TASK_STATE_DONE)
		return 0;
	if (task->unsol_done || task->conn->state == ISCSI_CONN_STATE_CLOSED)
		return task_unlink_keep_ref(task);
	return 0;
}

void iscsi_task_maybe_retire(struct iscsi_task *task)
{
	task_put_n(task, task_retire_keep_ref(task));
}

struct iscsi_task *iscsi_task_find(struct iscsi_conn *conn, uint32_t itt)
{
	if (!conn->itt_nbuckets)
		return NULL;
	for (struct iscsi_task *t = conn->itt_buckets[itt_bucket(itt, conn->itt_nbuckets)]; t; t = t->hnext)
		if (t->itt == itt)
			return t;
	return NULL;
}

/* ---- transport callbacks ---- */

static void transport_need_data_out(struct scsi_cmd *cmd)
{
	struct iscsi_task *task = iscsi_task_of(cmd);

	task->state = ISCSI_TASK_STATE_WAIT_DATA_OUT;
	iscsi_data_need_data_out(task);
}

static void task_finished(struct iscsi_task *task, bool send)
{
	struct iscsi_conn *conn = task->conn;
	struct iscsi_session *s = conn->session;

	task->state = ISCSI_TASK_STATE_DONE;
	task->core_holds = false;
	task->r2t_count = 0;
	conn->tasks_active--;
	/* Its place in the CmdSN window is free again: the response carries the larger MaxCmdSN. */
	if (task->in_window && s) {
		task->in_window = false;
		s->cmds_in_window--;
	}
	if (task->immediate && task->submitted && s && s->immediate_active)
		s->immediate_active--;
	iscsi_conn_get(conn);
	if (send && conn->state != ISCSI_CONN_STATE_CLOSED)
		iscsi_data_send_result(task);
	/* The list's reference (if it retires now) and the core's, dropped together. */
	task_put_n(task, task_retire_keep_ref(task) + 1);
	iscsi_conn_check_idle(conn);
	iscsi_conn_put(conn);
}

static void transport_complete(struct scsi_cmd *cmd)
{
	task_finished(iscsi_task_of(cmd), true);
}

/* SAM-5 7.2: a task aborted by a task management function gets no response. */
static void transport_aborted(struct scsi_cmd *cmd)
{
	task_finished(iscsi_task_of(cmd), false);
}

/* A drop-connection fault rule fired on cmd: its connection goes as a pulled cable's would (ErrorRecoveryLevel 0). */
static void transport_drop_connection(struct scsi_cmd *cmd)
{
	iscsi_conn_drop(iscsi_task_of(cmd)->conn, "fault rule drop-connection");
}

/* The Data-In buffer the Data-In PDUs will point into: the core fills it, with no copy in between. */
static int transport_alloc_data_in(struct scsi_cmd *cmd, uint32_t len, struct scsi_sgl *sgl)
{
	struct iscsi_task *task = iscsi_task_of(cmd);
	uint8_t *buf = task->data_in_buf;

	if (!buf || len > task->data_in_cap) {
		buf = realloc(task->data_in_buf, len ? len : 1);
		if (!buf)
			return -ENOMEM;
		task->data_in_buf = buf;
		task->data_in_cap = len;
	}
	task->data_in_iov = (struct iovec){ .iov_base = buf, .iov_len = len };
	*sgl = (struct scsi_sgl){ .iov = &task->data_in_iov, .iovcnt = 1 };
	return 0;
}

const struct scsi_transport_ops iscsi_scsi_transport = {
	.need_data_out = transport_need_data_out,
	.alloc_data_in = transport_alloc_data_in,
	.complete = transport_complete,
	.aborted = transport_aborted,
	.max_sense_len = SCSI_SENSE_BUFFER_MAX,
	.protocol_identifier = ISCSI_PROTOCOL_IDENTIFIER,
	.version_descriptor = 0x0960, /* iSCSI (no version claimed), SPC-4 6.6.2 */
	.transport_id_encode = iscsi_transport_id_encode,
	.transport_id_decode = iscsi_transport_id_decode,
	.drop_connection = transport_drop_connection,
};

void iscsi_task_submit(struct iscsi_task *task)
{
	struct iscsi_conn *conn = task->conn;
	struct iscsi_session *s = conn->session;

	if (task->state != ISCSI_TASK_STATE_QUEUED) {
		/* aborted by a task management function while it waited for its CmdSN */
		iscsi_task_maybe_retire(task);
		return;
	}
	if (!s || !s->nexus || conn->state == ISCSI_CONN_STATE_CLOSED) {
		task->state = ISCSI_TASK_STATE_DONE;
		iscsi_task_maybe_retire(task);
		return;
	}
	if (task->data_out_error) {
		/* Its unsolicited data failed while it waited for its CmdSN: the core ends it with that sense. */
		scsi_cmd_fail_transport(&task->cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, task->data_out_error));
	} else if (task->unsol_done && task->unsol_received) {
		/* Everything the initiator sends unasked is here: the core may not need to ask. */
		task->data_out_iov = (struct iovec){ .iov_base = task->buf, .iov_len = task->unsol_received };
		scsi_cmd_set_data_out(&task->cmd, &task->data_out_iov, 1, task->unsol_received);
	}
	task->state = ISCSI_TASK_STATE_SUBMITTED;
	task->submitted = true;
	task->core_holds = true;
	iscsi_task_get(task); /* the core's reference */
	conn->tasks_active++;
	if (!task->immediate) {
		task->in_window = true;
		s->cmds_in_window++;
	} else {
		s->immediate_active++;
	}
	iscsi_conn_get(conn);
	scsi_cmd_submit(&task->cmd);
	iscsi_conn_put(conn);
}

/* ---- the SCSI Command PDU ---- */

/*
 * RFC 7143 11.3.5 and 11.2.2: walks the AHS list; an Extended CDB AHS
 * (type 1) carries CDB bytes 16 onwards after one reserved byte.
 */
static int parse_ahs(const struct iscsi_pdu *pdu, struct scsi_cmd *cmd)
{
	uint32_t off = 0;

	while (off + 4 <= pdu->ahs_len) {
		const uint8_t *a = pdu->ahs + off;
		uint16_t ahs_length = get_be16(a);
		uint8_t type = a[2];
		uint32_t entry = (3 + (uint32_t)ahs_length + 3) & ~3u;

		if (ahs_length == 0 || off + entry > pdu->ahs_len)
			return -1;
		if (type == ISCSI_AHS_EXTENDED_CDB) {
			uint32_t extra = ahs_length - 1u;
			if (ISCSI_CMD_CDB_LEN + extra > SCSI_MAX_CDB_LEN)
				return -1;
			memcpy(cmd->cdb + ISCSI_CMD_CDB_LEN, a + 4, extra);
			cmd->cdb_len = (uint8_t)(ISCSI_CMD_CDB_LEN + extra);
		} else if (type != ISCSI_AHS_BIDI_READ_LENGTH) {
			return -1;
		}
		off += entry;
	}
	return off == pdu->ahs_len ? 0 : -1;
}

static enum scsi_task_attr task_attr_of(uint8_t attr)
{
	/* RFC 7143 11.3.1.3: 0 untagged, 1 simple, 2 ordered, 3 head of queue, 4 ACA; 5-7 reserved. */
	switch (attr) {
	case 2: return SCSI_TASK_ORDERED;
	case 3: return SCSI_TASK_HEAD_OF_QUEUE;
	case 4: return SCSI_TASK_ACA;
	default: return SCSI_TASK_SIMPLE;
	}
}

/*
 * The checks of a SCSI Command PDU before a task is built for it: 0, or the
 * reason of the Reject it gets (RFC 7143 11.17.1).
 */
static int scsi_cmd_pdu_check(struct iscsi_conn *conn, const struct iscsi_pdu *pdu)
{
	const uint8_t *bhs = pdu->bhs;
	const struct iscsi_session *s = conn->session;
	const struct iscsi_sess_params *sp = &s->params;
	uint8_t flags = bhs[1];
	uint32_t itt = get_be32(bhs + ISCSI_BHS_ITT);
	uint32_t edtl = get_be32(bhs + ISCSI_CMD_EDTL);

	if (itt == ISCSI_RESERVED_TAG)
		return ISCSI_REJECT_INVALID_PDU_FIELD;
	/*
	 * RFC 7143 11.3.1: R and/or W must be set when the Expected Data Transfer
	 * Length is not 0 (else the target could not tell which way the data goes).
	 */
	if (edtl && !(flags & (ISCSI_CMD_FLAG_READ | ISCSI_CMD_FLAG_WRITE)))
		return ISCSI_REJECT_INVALID_PDU_FIELD;
	if (iscsi_bhs_immediate(bhs) && s->immediate_active >= ISCSI_MAX_IMMEDIATE_COMMANDS)
		return ISCSI_REJECT_IMMEDIATE_COMMAND_REJECT;
	/* RFC 7143 11.17.1: an ITT already in use -> "Task in progress". */
	if (iscsi_task_find(conn, itt))
		return ISCSI_REJECT_TASK_IN_PROGRESS;
	/*
	 * RFC 7143 11.3.1.1 / 13.3, 13.4, 13.14: immediate data only with W,
	 * ImmediateData=Yes, within FirstBurstLength and EDTL; unsolicited
	 * Data-Out (F = 0) only with W and InitialR2T=No.
	 */
	if (pdu->data_len && (!(flags & ISCSI_CMD_FLAG_WRITE) || !sp->immediate_data ||
			      pdu->data_len > sp->first_burst_length || pdu->data_len > edtl))
		return ISCSI_REJECT_PROTOCOL_ERROR;
	if (!(flags & ISCSI_FLAG_FINAL) && (!(flags & ISCSI_CMD_FLAG_WRITE) || sp->initial_r2t))
		return ISCSI_REJECT_PROTOCOL_ERROR;
	return 0;
}

static enum scsi_data_dir data_dir_of(bool read, bool write)
{
	if (read && write)
		return SCSI_DIR_BIDI;
	if (write)
		return SCSI_DIR_TO_DEVICE;
	if (read)
		return SCSI_DIR_FROM_DEVICE;
	return SCSI_DIR_NONE;
}

/*
 * A task for a checked SCSI Command PDU, holding the task list's reference
 * (not yet on the list), its command filled from the BHS: ITT, CmdSN,
 * Expected Data Transfer Length, R and W, LUN, CDB, ATTR (RFC 7143 11.3.1).
 * NULL when out of memory.
 */
static struct iscsi_task *task_create(struct iscsi_conn *conn, const uint8_t *bhs)
{
	struct iscsi_task *task = task_alloc(conn->srv);
	uint8_t flags = bhs[1];

	if (!task)
		return NULL;
	scsi_cmd_init(&task->cmd, &iscsi_scsi_transport, conn->session->nexus);
	task->conn = conn;
	iscsi_conn_get(conn);
	task->refs = 1; /* the task list */
	task->itt = get_be32(bhs + ISCSI_BHS_ITT);
	task->cmd_sn = get_be32(bhs + ISCSI_BHS_CMD_SN);
	task->edtl = get_be32(bhs + ISCSI_CMD_EDTL);
	task->read = flags & ISCSI_CMD_FLAG_READ;
	task->write = flags & ISCSI_CMD_FLAG_WRITE;
	task->state = ISCSI_TASK_STATE_QUEUED;

	task->cmd.lun = get_be64(bhs + ISCSI_BHS_LUN);
	task->cmd.tag = task->itt;
	memcpy(task->cmd.cdb, bhs + ISCSI_CMD_CDB, ISCSI_CMD_CDB_LEN);
	task->cmd.cdb_len = ISCSI_CMD_CDB_LEN;
	task->cmd.task_attr = task_attr_of(flags & ISCSI_CMD_ATTR_MASK);
	task->cmd.expected_length = task->edtl;
	task->cmd.dir = data_dir_of(task->read, task->write);
	return task;
}

/*
 * The unsolicited data the initiator sends with a checked command whose
 * data segment is data_len bytes: the immediate data, plus Data-Out up to
 * min(FirstBurstLength, EDTL) if F = 0 (RFC 7143 13.14).
 */
static uint32_t unsolicited_len(const struct iscsi_sess_params *sp, const uint8_t *bhs, uint32_t data_len)
{
	uint32_t edtl = get_be32(bhs + ISCSI_CMD_EDTL);

	if (!(bhs[1] & ISCSI_CMD_FLAG_WRITE))
		return 0;
	if (bhs[1] & ISCSI_FLAG_FINAL)
		return data_len;
	return sp->first_burst_length < edtl ? sp->first_burst_length : edtl;
}

/*
 * The buffer for the unsolicited data of the SCSI Command PDU whose header
 * is bhs and whose immediate data (len bytes) has not all arrived, when
 * iscsi_scsi_cmd_handle will build a task that takes it: the receive path
 * (conn.c, rx_direct_start) reads the data from the socket straight into
 * it, and task_take_unsolicited_data adopts it, one copy per byte less
 * (docs/performance.md).  NULL when the PDU will be rejected or ignored: it
 * is received the usual way.  The handler checks it all again.
 */
uint8_t *iscsi_cmd_immediate_dest(struct iscsi_conn *conn, const uint8_t *bhs, uint32_t len)
{
	struct iscsi_pdu pdu = { .bhs = bhs, .data_len = len };
	uint32_t cap;

	if (!conn->session || conn->session->type != ISCSI_SESSION_NORMAL || scsi_cmd_pdu_check(conn, &pdu) ||
	    (!iscsi_bhs_immediate(bhs) &&
	     !iscsi_session_cmd_sn_acceptable(conn->session, get_be32(bhs + ISCSI_BHS_CMD_SN))))
		return NULL;
	cap = unsolicited_len(&conn->session->params, bhs, len);
	return cap >= len ? malloc(cap) : NULL;
}

/*
 * The unsolicited data of the command (unsolicited_len): the buffer is
 * sized for all of it and holds the immediate data, read there in place
 * (iscsi_cmd_immediate_dest) or copied.  False when out of memory.
 */
static bool task_take_unsolicited_data(struct iscsi_task *task, const struct iscsi_pdu *pdu)
{
	struct iscsi_conn *conn = task->conn;
	bool final = pdu->bhs[1] & ISCSI_FLAG_FINAL;

	task->unsol_expected = unsolicited_len(&conn->session->params, pdu->bhs, pdu->data_len);
	task->unsol_received = pdu->data_len;
	task->unsol_done = final || task->unsol_received >= task->unsol_expected;
	task->r2t_next_offset = task->unsol_expected;
	if (!task->unsol_expected)
		return true;
	if (pdu->data_len && pdu->data == conn->rx_direct.imm_buf) {
		task->buf = conn->rx_direct.imm_buf;
		conn->rx_direct.imm_buf = NULL;
	} else {
		task->buf = malloc(task->unsol_expected);
		if (!task->buf)
			return false;
		if (pdu->data_len)
			memcpy(task->buf, pdu->data, pdu->data_len);
	}
	task->buf_cap = task->unsol_expected;
	return true;
}

/*
 * RFC 7143 3.2.2.1: an immediate command goes to the core at once; any
 * other in CmdSN order, now if it is the expected one, later if it is
 * ahead, never if it is outside the window.
 */
static void task_deliver(struct iscsi_task *task, const struct iscsi_pdu *pdu)
{
	struct iscsi_conn *conn = task->conn;
	int r;

	if (iscsi_bhs_immediate(pdu->bhs)) {
		task->immediate = true;
		iscsi_task_submit(task);
		return;
	}
	r = iscsi_session_order(conn->session, pdu, task);
	if (r == 1) {
		iscsi_task_submit(task);
		if (conn->session)
			iscsi_session_run_ordered(conn->session);
	} else if (r < 0) {
		/* Outside the CmdSN window: ignored; its unsolicited data is absorbed until F. */
		task->state = ISCSI_TASK_STATE_DONE;
		iscsi_task_maybe_retire(task);
	}
}

void iscsi_scsi_cmd_handle(struct iscsi_conn *conn, const struct iscsi_pdu *pdu)
{
	int reason = scsi_cmd_pdu_check(conn, pdu);
	uint32_t cmd_sn = get_be32(pdu->bhs + ISCSI_BHS_CMD_SN);
	struct iscsi_task *task;

	if (reason) {
		iscsi_reject(conn, pdu->bhs, (enum iscsi_reject_reason)reason);
		return;
	}
	/*
	 * RFC 7143 4.2.2.1: a command outside the window is silently ignored,
	 * before it costs anything: no task, no buffer for its unsolicited
	 * data.  The Data-Out that follows it finds no task by its ITT and is
	 * discarded (data.c).
	 */
	if (!iscsi_bhs_immediate(pdu->bhs) && !iscsi_session_cmd_sn_acceptable(conn->session, cmd_sn)) {
		ISCSI_PEER_ERROR(conn->srv, "%s: CmdSN %u outside window [%u, %u] or queued already: ignored", conn->peer,
				 cmd_sn, conn->session->exp_cmd_sn, iscsi_session_max_cmd_sn(conn->session));
		return;
	}
	task = task_create(conn, pdu->bhs);
	if (!task) {
		iscsi_reject(conn, pdu->bhs, ISCSI_REJECT_LONG_OPERATION_REJECT);
		return;
	}
	if (pdu->ahs_len && parse_ahs(pdu, &task->cmd) != 0)
		reason = ISCSI_REJECT_INVALID_PDU_FIELD;
	else if (!task_take_unsolicited_data(task, pdu) || !iscsi_task_link(task))
		reason = ISCSI_REJECT_LONG_OPERATION_REJECT;
	if (reason) {
		iscsi_reject(conn, pdu->bhs, (enum iscsi_reject_reason)reason);
		iscsi_task_put(task);
		return;
	}
	task_deliver(task, pdu);
}
