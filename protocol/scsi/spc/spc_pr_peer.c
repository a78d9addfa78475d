/*
 * PERSISTENT RESERVE OUT through a node that waits for the medium
 * (docs/scale-out.md).  Where several nodes serve one medium, only the
 * node that holds it writes the reservation state kept with it; a node
 * whose target port group waits in standby must still process PERSISTENT
 * RESERVE OUT (SPC-4 5.15.2.4.4 lists it among the commands a standby
 * port processes), and the registrations are one state for every I_T
 * nexus through every node (SPC-4 5.13.1).  So a waiting node sends the
 * command to the holder (backend_ops.ask_holder), the holder runs it as a
 * command of that I_T nexus, and its status and sense are the waiting
 * node's answer.
 *
 * The holder runs it through scsi_cmd_submit on an I_T nexus of its own
 * that stands for the other node's (scsi_nexus.peer: the same initiator
 * port name, TransportID and relative target port identifier, no unit
 * attention of its own), made for the command and gone with it.  So the
 * reservation rules, the state's store and the unit attentions for the
 * holder's own I_T nexuses are those of any PERSISTENT RESERVE OUT.
 *
 * REGISTER AND MOVE's TransportID is decoded on the holder by a transport of
 * its protocol that the holder's own I_T nexuses came through
 * (scsi_device.codec_of); a holder that has none refuses it as it refuses a
 * TransportID its transport does not take (05/26/00).  A holder that does
 * not answer within RBD_ASK_TIMEOUT_MS (be_rbd_ask.h) leaves the command
 * the standby answer, 02/04/0B: a host then uses another path.
 *
 * The unit attentions a PERSISTENT RESERVE OUT on the holder establishes
 * (06/2A/03 RESERVATIONS PREEMPTED, 06/2A/04 RESERVATIONS RELEASED, 06/2A/05
 * REGISTRATIONS PREEMPTED: SPC-4 5.13) are for I_T nexuses of every node:
 * the holder establishes them for its own and sends the others a notice
 * (backend_ops.tell_peers) once the new state is stored; each waiting node
 * establishes them for its I_T nexuses that the registration named matches,
 * and answers the notice once it has, so the command's status follows
 * them.  A node that does not answer within RBD_TELL_TIMEOUT_MS misses them.
 * Notice (big-endian): byte 0 NOTICE_VERSION, byte 1 the number of unit
 * attentions U, bytes 2-3 the RELATIVE TARGET PORT IDENTIFIER of the I_T
 * nexus that sent the command (it gets none), byte 4 its initiator port
 * name's length N, N bytes of name; then U times: byte 0 the unit attention
 * (NOTICE_UA_*), byte 1 bit 0 ALL_TG_PT, bytes 2-3 the registration's
 * RELATIVE TARGET PORT IDENTIFIER, byte 4 name length M, M bytes of its
 * initiator port name.
 *
 * Question (all fields big-endian): byte 0 version (1), byte 1 PROTOCOL
 * IDENTIFIER, bytes 2-3 RELATIVE TARGET PORT IDENTIFIER, byte 4 name
 * length N, N bytes of initiator port name, 2 bytes TransportID length T,
 * T bytes of TransportID, 1 byte CDB length C, C bytes of CDB, 2 bytes
 * parameter list length P, P bytes of parameter list; nothing after.
 * Answer: byte 0 version (1), byte 1 status (FFh: not run, the holder no
 * longer holds the medium); with CHECK CONDITION 24 bytes more: sense key,
 * ASC/ASCQ (2), flags (bit 0 INFORMATION valid, 1 COMMAND-SPECIFIC valid,
 * 2 C/D, 3 BPV, 4 deferred), INFORMATION (8), COMMAND-SPECIFIC (8), the
 * sense key specific kind (0 none, 1 field pointer, 2 progress), bit
 * pointer, field pointer or progress (2): struct scsi_sense_info, from
 * which sense.c builds the sense data on the waiting node for its own
 * transport.
 */
#include <stdlib.h>
#include <string.h>

#include "spc/spc.h"

#define PEER_VERSION 1
#define PEER_NOT_RUN 0xff
#define PEER_SENSE_LEN 24
#define PEER_PARAM_MAX 512
#define NOTICE_VERSION 0x81
#define NOTICE_MAX 8192
enum { NOTICE_UA_RESERVATIONS_PREEMPTED = 1, NOTICE_UA_RESERVATIONS_RELEASED, NOTICE_UA_REGISTRATIONS_PREEMPTED };

/* ---- the waiting node ---- */

struct peer_ask {
	uint8_t *req, *reply;
	size_t len, reply_len;
	int rc;
};

static void ask_free(void *state)
{
	struct peer_ask *a = state;

	free(a->req);
	free(a->reply);
	free(a);
}

static void ask_work(struct scsi_cmd *cmd)
{
	struct peer_ask *a = cmd->handler_state;
	struct backend *be = cmd->lu->backend;

	a->rc = be->ops->ask_holder(be, a->req, a->len, &a->reply, &a->reply_len);
}

static enum scsi_result standby(struct scsi_cmd *cmd)
{
	return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_NOT_READY,
					      ASC_LOGICAL_UNIT_NOT_ACCESSIBLE_TARGET_PORT_IN_STANDBY_STATE));
}

static enum scsi_result ask_respond(struct scsi_cmd *cmd)
{
	const struct peer_ask *a = cmd->handler_state;
	const uint8_t *r = a->reply;
	struct scsi_sense_info s = { 0 };

	if (a->rc < 0 || a->reply_len < 2 || r[0] != PEER_VERSION || r[1] == PEER_NOT_RUN)
		return standby(cmd);
	if (r[1] != SCSI_STATUS_CHECK_CONDITION)
		return r[1] == SCSI_STATUS_GOOD ? SCSI_OK : scsi_cmd_set_status(cmd, r[1]);
	if (a->reply_len < 2 + PEER_SENSE_LEN || r[22] > SCSI_SKS_PROGRESS)
		return standby(cmd);
	r += 2;
	s.key = r[0];
	s.asc_ascq = get_be16(r + 1);
	s.information_valid = r[3] & 0x01;
	s.command_specific_valid = r[3] & 0x02;
	s.sks_cd = r[3] & 0x04;
	s.sks_bpv = r[3] & 0x08;
	s.deferred = r[3] & 0x10;
	s.information = get_be64(r + 4);
	s.command_specific = get_be64(r + 12);
	s.sks_kind = (enum scsi_sks_kind)r[20];
	s.sks_bit = r[21];
	s.sks_field = get_be16(r + 22);
	return scsi_cmd_fail(cmd, s);
}

enum scsi_result spc_pr_out_forward(struct scsi_cmd *cmd)
{
	const struct scsi_nexus *n = cmd->nexus;
	size_t name_len = strlen(n->initiator_port_name), off = 0;
	struct peer_ask *a;

	if (n->peer || !cmd->lu->backend->ops->ask_holder || name_len > 255 || cmd->data_out_len > PEER_PARAM_MAX)
		return standby(cmd);
	if (!(a = calloc(1, sizeof(*a))) ||
	    !(a->req = malloc(5 + name_len + 2 + n->transport_id_len + 1 + 10 + 2 + cmd->data_out_len))) {
		free(a);
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	}
	a->req[off++] = PEER_VERSION;
	a->req[off++] = n->transport ? n->transport->protocol_identifier : 0x0f;
	put_be16(a->req + off, n->relative_target_port);
	off += 2;
	a->req[off++] = (uint8_t)name_len;
	memcpy(a->req + off, n->initiator_port_name, name_len);
	off += name_len;
	put_be16(a->req + off, (uint16_t)n->transport_id_len);
	memcpy(a->req + off + 2, n->transport_id, n->transport_id_len);
	off += 2 + n->transport_id_len;
	a->req[off++] = 10;
	memcpy(a->req + off, cmd->cdb, 10);
	off += 10;
	put_be16(a->req + off, (uint16_t)cmd->data_out_len);
	memcpy(a->req + off + 2, cmd->data_out, cmd->data_out_len);
	a->len = off + 2 + cmd->data_out_len;
	cmd->handler_state = a;
	cmd->handler_state_free = ask_free;
	return scsi_cmd_run_io(cmd, ask_work, ask_respond);
}

/* ---- the holder ---- */

/* The LU's service of the other nodes' questions (lu->pr_peer). */
struct spc_pr_peer {
	struct scsi_io_job job;    /* posted (executor.post) when a question arrived */
	struct scsi_lu *lu;        /* NULL once the LU is gone */
	struct backend *backend;
	struct scsi_executor *ex;
	bool posted;               /* [atomic] job is posted and its done() has not begun */
	unsigned refs;             /* [atomic] the LU's, a posted job's, each command run for a question */
	size_t notice_len;         /* loop thread: the notice of the command that runs (0: none yet) */
	uint8_t notice[NOTICE_MAX];
};

/* A question being run: its command, on an I_T nexus standing for the other node's. */
struct peer_cmd {
	struct scsi_cmd cmd;
	struct scsi_transport_ops transport;
	struct spc_pr_peer *svc;
	struct scsi_nexus *nexus;
	void *token;
	struct iovec iov;
	uint8_t cdb[10];
	uint8_t params[PEER_PARAM_MAX];
};

static void svc_put(struct spc_pr_peer *svc)
{
	if (__atomic_sub_fetch(&svc->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(svc);
}

static void answer(struct spc_pr_peer *svc, void *token, const uint8_t *reply, size_t len)
{
	if (svc->lu)
		svc->backend->ops->answer(svc->backend, token, reply, len);
}

static void peer_cmd_end(struct peer_cmd *pc, const uint8_t *reply, size_t len)
{
	struct spc_pr_peer *svc = pc->svc;

	answer(svc, pc->token, reply, len);
	scsi_cmd_release(&pc->cmd);
	scsi_nexus_destroy(pc->nexus);
	free(pc);
	svc_put(svc);
}

static void peer_complete(struct scsi_cmd *cmd)
{
	struct peer_cmd *pc = (struct peer_cmd *)cmd;
	const struct scsi_sense_info *s = &cmd->sense_info;
	uint8_t r[2 + PEER_SENSE_LEN] = { PEER_VERSION, cmd->status };
	size_t len = 2;

	if (cmd->status == SCSI_STATUS_CHECK_CONDITION) {
		r[2] = s->key;
		put_be16(r + 3, s->asc_ascq);
		r[5] = (uint8_t)(s->information_valid | s->command_specific_valid << 1 | s->sks_cd << 2 |
				 s->sks_bpv << 3 | s->deferred << 4);
		put_be64(r + 6, s->information);
		put_be64(r + 14, s->command_specific);
		r[22] = (uint8_t)s->sks_kind;
		r[23] = s->sks_bit;
		put_be16(r + 24, s->sks_field);
		len += PEER_SENSE_LEN;
	}
	peer_cmd_end(pc, r, len);
}

static void peer_aborted(struct scsi_cmd *cmd)
{
	static const uint8_t not_run[2] = { PEER_VERSION, PEER_NOT_RUN };

	peer_cmd_end((struct peer_cmd *)cmd, not_run, sizeof(not_run));
}

static void peer_need_data_out(struct scsi_cmd *cmd)
{
	/* The whole parameter list was handed over before submit: nothing more to give. */
	scsi_cmd_fail_transport(cmd, sense_parameter_list_length_error());
}

/* Reads the question in req (the format above) into pc; false if it is not one. */
static bool question_parse(struct peer_cmd *pc, const uint8_t *req, size_t len, char *name, uint16_t *rtpi,
			   const uint8_t **tid, size_t *tid_len)
{
	size_t off = 5, n;

	if (len < 5 || req[0] != PEER_VERSION)
		return false;
	pc->transport.protocol_identifier = req[1] & 0x0f;
	*rtpi = get_be16(req + 2);
	n = req[4];
	if (n == 0 || off + n + 2 > len)
		return false;
	memcpy(name, req + off, n);
	name[n] = '\0';
	off += n;
	*tid_len = get_be16(req + off);
	*tid = req + off + 2;
	off += 2 + *tid_len;
	if (*tid_len > sizeof(pc->nexus->transport_id) || off + 1 > len || req[off] != 10 || off + 1 + 10 + 2 > len)
		return false;
	memcpy(pc->cdb, req + off + 1, 10);
	off += 1 + 10;
	n = get_be16(req + off);
	off += 2;
	if (pc->cdb[0] != SCSI_OP_PERSISTENT_RESERVE_OUT || n > sizeof(pc->params) || off + n != len)
		return false;
	memcpy(pc->params, req + off, n);
	pc->iov.iov_base = pc->params;
	pc->iov.iov_len = n;
	return true;
}

static void question_run(struct spc_pr_peer *svc, const uint8_t *req, size_t len, void *token)
{
	static const uint8_t not_run[2] = { PEER_VERSION, PEER_NOT_RUN };
	struct peer_cmd *pc = calloc(1, sizeof(*pc));
	const uint8_t *tid = NULL;
	size_t tid_len = 0;
	uint16_t rtpi = 0;
	char name[256];
	struct scsi_itl *itl;

	if (!pc || !question_parse(pc, req, len, name, &rtpi, &tid, &tid_len)) {
		free(pc);
		answer(svc, token, not_run, sizeof(not_run));
		return;
	}
	pc->transport.need_data_out = peer_need_data_out;
	pc->transport.complete = peer_complete;
	pc->transport.aborted = peer_aborted;
	pc->transport.max_sense_len = SCSI_SENSE_BUFFER_MAX;
	pc->nexus = scsi_nexus_create(svc->lu->dev, &pc->transport, name, "", rtpi);
	if (!pc->nexus || !(itl = scsi_itl_get(pc->nexus, svc->lu->lun))) {
		if (pc->nexus)
			scsi_nexus_destroy(pc->nexus);
		free(pc);
		answer(svc, token, not_run, sizeof(not_run));
		return;
	}
	pc->nexus->peer = true;
	/*
	 * REGISTER AND MOVE's TransportID: decoded by a transport of that
	 * protocol this device has (else refused); given after the nexus was
	 * made, so that the device does not take this short-lived one as a codec.
	 */
	if (svc->lu->dev->codec_of[pc->transport.protocol_identifier])
		pc->transport.transport_id_decode =
			svc->lu->dev->codec_of[pc->transport.protocol_identifier]->transport_id_decode;
	memcpy(pc->nexus->transport_id, tid, tid_len);
	pc->nexus->transport_id_len = tid_len;
	itl->ua_pending = 0; /* its unit attentions are the other node's to report */
	pc->svc = svc;
	pc->token = token;
	__atomic_add_fetch(&svc->refs, 1, __ATOMIC_ACQ_REL);
	scsi_cmd_init(&pc->cmd, &pc->transport, pc->nexus);
	memcpy(pc->cmd.cdb, pc->cdb, 10);
	pc->cmd.cdb_len = 10;
	pc->cmd.lun = scsi_lun_encode(svc->lu->lun);
	pc->cmd.expected_length = (uint32_t)pc->iov.iov_len;
	pc->cmd.dir = SCSI_DIR_TO_DEVICE;
	pc->cmd.task_attr = SCSI_TASK_SIMPLE;
	scsi_cmd_set_data_out(&pc->cmd, &pc->iov, 1, (uint32_t)pc->iov.iov_len);
	scsi_cmd_submit(&pc->cmd);
}

/* ---- unit attentions for every node ---- */

/* A unit attention's code in a notice; 0: not one a reservation change establishes. */
static uint8_t notice_ua(enum scsi_ua ua)
{
	return ua == SCSI_UA_RESERVATIONS_PREEMPTED    ? NOTICE_UA_RESERVATIONS_PREEMPTED :
	       ua == SCSI_UA_RESERVATIONS_RELEASED     ? NOTICE_UA_RESERVATIONS_RELEASED :
	       ua == SCSI_UA_REGISTRATIONS_PREEMPTED   ? NOTICE_UA_REGISTRATIONS_PREEMPTED :
							 0;
}

static bool ua_of_notice(uint8_t code, enum scsi_ua *ua)
{
	static const enum scsi_ua of[] = { [NOTICE_UA_RESERVATIONS_PREEMPTED] = SCSI_UA_RESERVATIONS_PREEMPTED,
					   [NOTICE_UA_RESERVATIONS_RELEASED] = SCSI_UA_RESERVATIONS_RELEASED,
					   [NOTICE_UA_REGISTRATIONS_PREEMPTED] = SCSI_UA_REGISTRATIONS_PREEMPTED };

	if (code < NOTICE_UA_RESERVATIONS_PREEMPTED || code > NOTICE_UA_REGISTRATIONS_PREEMPTED)
		return false;
	*ua = of[code];
	return true;
}

void spc_pr_peer_note_ua(struct scsi_lu *lu, const struct spc_pr_registration *reg, const struct scsi_nexus *except,
			 enum scsi_ua ua)
{
	struct spc_pr_peer *svc = lu->pr_peer;
	size_t name_len = strlen(reg->initiator_port_name);
	uint8_t *e;

	if (!svc || !svc->backend->ops->tell_peers || !notice_ua(ua) || name_len > 255)
		return;
	if (svc->notice_len == 0) {
		size_t except_len = except ? strlen(except->initiator_port_name) : 0;

		if (except_len > 255)
			return;
		svc->notice[0] = NOTICE_VERSION;
		svc->notice[1] = 0;
		put_be16(svc->notice + 2, except ? except->relative_target_port : 0);
		svc->notice[4] = (uint8_t)except_len;
		memcpy(svc->notice + 5, except ? except->initiator_port_name : "", except_len);
		svc->notice_len = 5 + except_len;
	}
	if (svc->notice[1] == UINT8_MAX || svc->notice_len + 5 + name_len > sizeof(svc->notice))
		return; /* more than a notice carries: those nodes miss it (docs/scale-out.md) */
	e = svc->notice + svc->notice_len;
	e[0] = notice_ua(ua);
	e[1] = reg->all_tg_pt ? 0x01 : 0x00;
	put_be16(e + 2, reg->relative_target_port);
	e[4] = (uint8_t)name_len;
	memcpy(e + 5, reg->initiator_port_name, name_len);
	svc->notice_len += 5 + name_len;
	svc->notice[1]++;
}

uint8_t *spc_pr_peer_take_notice(struct scsi_lu *lu, size_t *len)
{
	struct spc_pr_peer *svc = lu->pr_peer;
	uint8_t *n = NULL;

	*len = 0;
	if (!svc || svc->notice_len == 0)
		return NULL;
	if (svc->notice[1] && (n = malloc(svc->notice_len))) {
		memcpy(n, svc->notice, svc->notice_len);
		*len = svc->notice_len;
	}
	svc->notice_len = 0;
	return n;
}

/* Reads the name at p[0] (length) of a notice of len bytes at off; false past its end. */
static bool notice_name(const uint8_t *p, size_t len, size_t *off, char *name)
{
	size_t n;

	if (*off + 1 > len || *off + 1 + (n = p[*off]) > len)
		return false;
	memcpy(name, p + *off + 1, n);
	name[n] = '\0';
	*off += 1 + n;
	return true;
}

/*
 * Loop thread, a waiting node: the unit attentions of a notice (the format
 * above) for its own I_T nexuses; a malformed notice from its first bad
 * byte on is ignored.
 */
static void notice_apply(struct spc_pr_peer *svc, const uint8_t *p, size_t len)
{
	struct scsi_lu *lu = svc->lu;
	char except[256];
	uint16_t except_rtpi;
	size_t off = 4;
	unsigned count;

	if (len < 5 || p[0] != NOTICE_VERSION)
		return;
	count = p[1];
	except_rtpi = get_be16(p + 2);
	if (!notice_name(p, len, &off, except))
		return;
	for (unsigned i = 0; i < count; i++) {
		struct spc_pr_registration reg = { 0 };
		enum scsi_ua ua;

		if (off + 4 > len || !ua_of_notice(p[off], &ua))
			return;
		reg.all_tg_pt = p[off + 1] & 0x01;
		reg.relative_target_port = get_be16(p + off + 2);
		off += 4;
		if (!notice_name(p, len, &off, reg.initiator_port_name))
			return;
		for (struct scsi_nexus *n = lu->dev->nexuses; n; n = n->next)
			if (!n->peer && spc_pr_reg_matches(&reg, n) &&
			    !(n->relative_target_port == except_rtpi && strcmp(n->initiator_port_name, except) == 0))
				scsi_ua_establish(n, lu->lun, ua);
	}
}

/* Loop thread: the questions (holding the medium) and notices (waiting for it) that arrived. */
static void questions_done(struct scsi_io_job *job)
{
	struct spc_pr_peer *svc = (struct spc_pr_peer *)job;
	uint8_t *req;
	size_t len;
	void *token;

	__atomic_store_n(&svc->posted, false, __ATOMIC_RELEASE);
	while (svc->lu && svc->backend->ops->take_request(svc->backend, &req, &len, &token) == 0) {
		if (len > 0 && req[0] == NOTICE_VERSION) {
			notice_apply(svc, req, len);
			answer(svc, token, NULL, 0); /* done: the holder's command may complete */
		} else {
			question_run(svc, req, len, token);
		}
		free(req);
	}
	svc_put(svc);
}

/* Any thread (the backend's): a question arrived. */
static void question_arrived(void *arg)
{
	struct spc_pr_peer *svc = arg;

	if (!__atomic_exchange_n(&svc->posted, true, __ATOMIC_ACQ_REL)) {
		/* The posted job's reference: taken here, where the loop thread cannot drop the last one (svc->lu). */
		__atomic_add_fetch(&svc->refs, 1, __ATOMIC_ACQ_REL);
		svc->ex->post(svc->ex, &svc->job);
	}
}

void spc_pr_peer_init(struct scsi_lu *lu)
{
	struct backend *be = lu->backend;
	struct spc_pr_peer *svc;

	if (!be->ops->serve || !lu->dev->executor->post || !(svc = calloc(1, sizeof(*svc))))
		return;
	svc->job.done = questions_done;
	svc->lu = lu;
	svc->backend = be;
	svc->ex = lu->dev->executor;
	svc->refs = 1;
	lu->pr_peer = svc;
	be->ops->serve(be, question_arrived, svc);
}

void spc_pr_peer_stop(struct scsi_lu *lu)
{
	struct spc_pr_peer *svc = lu->pr_peer;

	if (svc)
		svc->backend->ops->serve(svc->backend, NULL, NULL); /* no question_arrived after this */
}

void spc_pr_peer_fini(struct scsi_lu *lu)
{
	struct spc_pr_peer *svc = lu->pr_peer;

	if (!svc)
		return;
	spc_pr_peer_stop(lu);
	svc->lu = NULL;
	lu->pr_peer = NULL;
	svc_put(svc);
}
