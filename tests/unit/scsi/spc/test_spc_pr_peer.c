/*
 * spc_pr_peer.c.  The holder's side: a PERSISTENT RESERVE OUT another node
 * sends (a "question", backend_ops.serve / take_request / answer) is run as
 * that node's I_T nexus's command and answered with its status and sense;
 * a question that is not one (truncated, another version, lengths past its
 * end, another opcode, more parameter data than PR OUT takes) is answered
 * "not run" (FFh) and changes nothing.  The waiting node's side: its PR OUT
 * goes to the holder (backend_ops.ask_holder) as such a question, and the
 * holder's status and sense are its answer; no answer, or one that is not
 * one, leaves the standby answer 02/04/0B (SPC-4 5.15.2.4.4).  REGISTER AND
 * MOVE's TransportID is decoded with the codec of the holder's own nexuses.  Bad input
 * from another node never hurts (ASan runs this too).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "spc/spc.h"

#define NOT_RUN 0xff

static struct harness h;
static struct harness_result r;

/* The fake backend's side: the questions waiting, the last answer. */
static void (*arrived)(void *arg);
static void *arrived_arg;
static uint8_t question[1024];
static size_t question_len;
static bool question_waiting;
static uint8_t reply[64];
static size_t reply_len;
static int answers;
static struct backend_ops ops;
static struct scsi_executor ex;
static struct scsi_io_job *posted;

static void fake_serve(struct backend *be, void (*fn)(void *arg), void *arg)
{
	(void)be;
	arrived = fn;
	arrived_arg = arg;
}

static int fake_take(struct backend *be, uint8_t **req, size_t *len, void **token)
{
	(void)be;
	if (!question_waiting)
		return -ENOENT;
	question_waiting = false;
	*req = malloc(question_len ? question_len : 1);
	memcpy(*req, question, question_len);
	*len = question_len;
	*token = question;
	return 0;
}

static void fake_answer(struct backend *be, void *token, const uint8_t *data, size_t len)
{
	(void)be;
	ck_assert_ptr_eq(token, question);
	ck_assert_uint_le(len, sizeof(reply));
	if (len)
		memcpy(reply, data, len);
	reply_len = len;
	answers++;
}

/* The holder's notices to the waiting nodes (backend_ops.tell_peers), and the state "stored with the medium". */
static uint8_t notice[1024];
static size_t notice_len;
static int notices;

static int fake_tell(struct backend *be, const uint8_t *msg, size_t len)
{
	(void)be;
	ck_assert_uint_le(len, sizeof(notice));
	memcpy(notice, msg, len);
	notice_len = len;
	notices++;
	return 0;
}

static int fake_store(struct backend *be, const char *name, const uint8_t *data, size_t len)
{
	(void)be;
	(void)name;
	(void)data;
	(void)len;
	return 0;
}

static void post(struct scsi_executor *e, struct scsi_io_job *job)
{
	(void)e;
	posted = job;
}

static void setup(void)
{
	harness_init(&h, 2048, 512, NULL);
	harness_clear_ua(&h);
	ops = *h.lu->backend->ops;
	ops.serve = fake_serve;
	ops.take_request = fake_take;
	ops.answer = fake_answer;
	ops.tell_peers = fake_tell;
	ops.state_store = fake_store;
	h.lu->backend->ops = &ops;
	h.lu->pr->file.shared = h.lu->backend; /* the reservations are kept with the medium, as on rbd */
	notices = 0;
	notice_len = 0;
	ex = scsi_executor_inline;
	ex.post = post;
	h.dev->executor = &ex;
	spc_pr_peer_init(h.lu);
	ck_assert_ptr_nonnull(arrived);
}

static void teardown(void)
{
	harness_fini(&h);
	ck_assert_ptr_null(arrived);
}

/*
 * The question of an I_T nexus "iqn.2026-12.test:remote,i,0x0000000000aa"
 * through relative target port 2: PERSISTENT RESERVE OUT service action sa,
 * TYPE Write Exclusive, with the plen bytes of param.
 */
static size_t make_with(uint8_t *q, uint8_t sa, const uint8_t *param, uint16_t plen)
{
	static const char name[] = "iqn.2026-12.test:remote,i,0x0000000000aa";
	uint8_t tid[24] = { 0x45 }; /* FORMAT CODE 01b, iSCSI: the core only keeps it */
	size_t off = 0, n = strlen(name);

	q[off++] = 1;    /* version */
	q[off++] = 0x05; /* iSCSI */
	put_be16(q + off, 2);
	off += 2;
	q[off++] = (uint8_t)n;
	memcpy(q + off, name, n);
	off += n;
	put_be16(q + off, sizeof(tid));
	memcpy(q + off + 2, tid, sizeof(tid));
	off += 2 + sizeof(tid);
	q[off++] = 10;
	memset(q + off, 0, 10);
	q[off] = 0x5f;
	q[off + 1] = sa;
	q[off + 2] = 0x01; /* Write Exclusive */
	put_be32(q + off + 5, plen);
	off += 10;
	put_be16(q + off, plen);
	off += 2;
	memcpy(q + off, param, plen);
	return off + plen;
}

/* The same with the basic parameter list: RESERVATION KEY, SERVICE ACTION RESERVATION KEY, byte 20. */
static size_t make(uint8_t *q, uint8_t sa, uint64_t key, uint64_t sa_key, uint8_t flags)
{
	uint8_t param[24] = { 0 };

	put_be64(param, key);
	put_be64(param + 8, sa_key);
	param[20] = flags;
	return make_with(q, sa, param, sizeof(param));
}

/* Hands question[0..len) over as the backend would, and runs the posted job as the loop would. */
static void deliver(size_t len)
{
	question_len = len;
	question_waiting = true;
	posted = NULL;
	arrived(arrived_arg);
	ck_assert_ptr_nonnull(posted);
	posted->done(posted);
	ck_assert(!question_waiting);
}

/* A question to the holder: answered with a version and a status at least. */
static void ask(size_t len)
{
	reply_len = 0;
	deliver(len);
	ck_assert_uint_ge(reply_len, 2);
	ck_assert_uint_eq(reply[0], 1);
}

static unsigned nregs(void)
{
	unsigned n = 0;

	for (const struct spc_pr_registration *reg = h.lu->pr->regs; reg; reg = reg->next)
		n++;
	return n;
}

/* SPC-4 5.13: a REGISTER through another node is a registration of that I_T nexus; RESERVE's rules hold. */
START_TEST(runs_the_other_nodes_command)
{
	uint8_t rdkeys[10] = { 0x5e, 0x00, 0, 0, 0, 0, 0, 0, 64, 0 };

	ask(make(question, 0x00, 0, 0x77, 0));
	ck_assert_uint_eq(reply_len, 2);
	ck_assert_uint_eq(reply[1], SCSI_STATUS_GOOD);
	ck_assert_uint_eq(nregs(), 1);
	ck_assert_uint_eq(h.lu->pr->regs->relative_target_port, 2);
	ck_assert_str_eq(h.lu->pr->regs->initiator_port_name, "iqn.2026-12.test:remote,i,0x0000000000aa");
	ck_assert_uint_eq(h.lu->pr->regs->transport_id_len, 24);
	harness_run(&h, 0, rdkeys, 10, NULL, 0, 64, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(get_be32(r.data_in + 4), 8);
	ck_assert_uint_eq(get_be64(r.data_in + 8), 0x77);
	/* RESERVE by an unregistered nexus's key: RESERVATION CONFLICT, as status. */
	ask(make(question, 0x01, 0x99, 0, 0));
	ck_assert_uint_eq(reply_len, 2);
	ck_assert_uint_eq(reply[1], SCSI_STATUS_RESERVATION_CONFLICT);
	/* SPEC_I_PT = 1 (SIP_C 0): CHECK CONDITION 05/26/00, field pointer parameter byte 20 bit 3, all carried. */
	ask(make(question, 0x00, 0x77, 0x78, 0x08));
	ck_assert_uint_eq(reply_len, 2 + 24);
	ck_assert_uint_eq(reply[1], SCSI_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(reply[2], SENSE_KEY_ILLEGAL_REQUEST);
	ck_assert_uint_eq(get_be16(reply + 3), 0x2600);
	ck_assert_uint_eq(reply[22], SCSI_SKS_FIELD_POINTER);
	ck_assert_uint_eq(reply[23], 3);
	ck_assert_uint_eq(get_be16(reply + 24), 20);
	ck_assert(reply[5] & 0x08); /* BPV */
	ck_assert(!(reply[5] & 0x04)); /* C/D 0: parameter data */
	ck_assert_uint_eq(answers, 3);
}
END_TEST

/* PERSISTENT RESERVE OUT through nexus n: service action sa, TYPE Write Exclusive, key, sa_key; expects GOOD. */
static void prout_local(int n, uint8_t sa, uint64_t key, uint64_t sa_key)
{
	uint8_t cdb[10] = { 0x5f, sa, 0x01, 0, 0, 0, 0, 0, 24, 0 }, param[24] = { 0 };

	put_be64(param, key);
	put_be64(param + 8, sa_key);
	harness_run(&h, n, cdb, 10, param, 24, 0, &r);
	harness_expect_good(&r);
}

/*
 * SPC-4 5.13.11.4.3: PREEMPT on the holder removes the other node's
 * registration, whose I_T nexus is there: the holder sends the waiting
 * nodes a notice naming it with REGISTRATIONS PREEMPTED (the format in
 * spc_pr_peer.c) and the I_T nexus that preempted, once the state is stored.
 */
START_TEST(notice_of_a_preempted_registration)
{
	static const char remote[] = "iqn.2026-12.test:remote,i,0x0000000000aa";
	static const char local[] = "iqn.2026-12.test:i0,i,0x000000000001";
	const uint8_t *e;

	ask(make(question, 0x00, 0, 0x77, 0)); /* the other node's I_T nexus, port 2: 77h */
	ck_assert_uint_eq(reply[1], SCSI_STATUS_GOOD);
	prout_local(0, 0x00, 0, 0x11);
	ck_assert_int_eq(notices, 0); /* registering establishes no unit attention */
	prout_local(0, 0x04, 0x11, 0x77);
	ck_assert_int_eq(notices, 1);
	ck_assert_uint_eq(notice[0], 0x81);
	ck_assert_uint_eq(notice[1], 1);                /* one unit attention */
	ck_assert_uint_eq(get_be16(notice + 2), 1);      /* the preempting I_T nexus: port 1 ... */
	ck_assert_uint_eq(notice[4], strlen(local));     /* ... and its name */
	ck_assert_int_eq(memcmp(notice + 5, local, strlen(local)), 0);
	e = notice + 5 + strlen(local);
	ck_assert_uint_eq(e[0], 3);                      /* REGISTRATIONS PREEMPTED */
	ck_assert_uint_eq(e[1], 0);                      /* not ALL_TG_PT */
	ck_assert_uint_eq(get_be16(e + 2), 2);
	ck_assert_uint_eq(e[4], strlen(remote));
	ck_assert_int_eq(memcmp(e + 5, remote, strlen(remote)), 0);
	ck_assert_uint_eq(notice_len, (size_t)(e + 5 + strlen(remote) - notice));
	prout_local(0, 0x00, 0x11, 0); /* unregistering: nothing for the others either */
	ck_assert_int_eq(notices, 1);
}
END_TEST

/* A notice handed to this node as the backend would (tell_peers on the holder): answered empty once applied. */
static void hear(size_t len)
{
	int before = answers;

	reply_len = 99;
	deliver(len);
	ck_assert_int_eq(answers, before + 1);
	ck_assert_uint_eq(reply_len, 0);
}

/* A notice: from the I_T nexus (except_name, port 1), one unit attention ua for name through port rtpi. */
static size_t make_notice(uint8_t *q, const char *except_name, uint8_t ua, uint8_t flags, uint16_t rtpi,
			  const char *name)
{
	size_t off = 0, n = strlen(except_name), m = strlen(name);

	q[off++] = 0x81;
	q[off++] = 1;
	put_be16(q + off, 1);
	off += 2;
	q[off++] = (uint8_t)n;
	memcpy(q + off, except_name, n);
	off += n;
	q[off++] = ua;
	q[off++] = flags;
	put_be16(q + off, rtpi);
	off += 2;
	q[off++] = (uint8_t)m;
	memcpy(q + off, name, m);
	return off + m;
}

/*
 * The waiting node's side: a notice's unit attention is established for
 * its I_T nexuses the registration names (SPC-4 5.13: 06/2A/04
 * RESERVATIONS RELEASED here), not for the one that sent the command; a
 * notice that is not one (truncated, another version, an unknown unit
 * attention, a name past its end) is answered and changes nothing.
 */
START_TEST(notice_heard)
{
	static const char i0[] = "iqn.2026-12.test:i0,i,0x000000000001", i1[] = "iqn.2026-12.test:i1,i,0x000000000002";
	uint8_t tur[6] = { 0 };
	size_t len;

	/* Malformed: nothing established. */
	len = make_notice(question, i0, 2, 0, 1, i1);
	hear(3);
	question[0] = 0x82; /* neither a notice nor a question: answered "not run" */
	ask(len);
	ck_assert_uint_eq(reply[1], NOT_RUN);
	len = make_notice(question, i0, 9, 0, 1, i1);
	hear(len);
	len = make_notice(question, i0, 2, 0, 1, i1);
	question[len - strlen(i1) - 1] = 200; /* the name's length past the end */
	hear(len);
	hear(len - 1);
	harness_run(&h, 1, tur, 6, NULL, 0, 0, &r);
	harness_expect_good(&r);
	/* RESERVATIONS RELEASED for i1's registration (port 1), from i0: i1 gets it, i0 does not. */
	hear(make_notice(question, i0, 2, 0, 1, i1));
	harness_run(&h, 1, tur, 6, NULL, 0, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_UNIT_ATTENTION, 0x2a04);
	harness_run(&h, 1, tur, 6, NULL, 0, 0, &r);
	harness_expect_good(&r);
	harness_run(&h, 0, tur, 6, NULL, 0, 0, &r);
	harness_expect_good(&r);
	/* ALL_TG_PT names i0 through any port, but i0 sent it: nothing; through port 2 (no I_T nexus here): nothing. */
	hear(make_notice(question, i0, 1, 0x01, 2, i0));
	harness_run(&h, 0, tur, 6, NULL, 0, 0, &r);
	harness_expect_good(&r);
	/* From another node's I_T nexus: i0's ALL_TG_PT registration gets RESERVATIONS PREEMPTED. */
	hear(make_notice(question, "iqn.2026-12.test:remote,i,0x0000000000aa", 1, 0x01, 2, i0));
	harness_run(&h, 0, tur, 6, NULL, 0, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_UNIT_ATTENTION, 0x2a03);
}
END_TEST

/*
 * SPC-4 5.13 (REGISTER AND MOVE): the other node's nexus, holding the
 * reservation, moves it to this node's I_T nexus 0, named by an iSCSI
 * TransportID, which the holder decodes with the codec of its own nexuses'
 * transport; nexus 0 then holds it.
 */
START_TEST(register_and_move_from_the_other_node)
{
	static const char dest[] = "iqn.2026-12.test:i0,i,0x000000000001";
	uint8_t param[24 + 40] = { 0 }, write10[10] = { 0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0 }, block[512] = { 0 };

	ask(make(question, 0x00, 0, 0x77, 0));
	ck_assert_uint_eq(reply[1], SCSI_STATUS_GOOD);
	ask(make(question, 0x01, 0x77, 0, 0));
	ck_assert_uint_eq(reply[1], SCSI_STATUS_GOOD);
	put_be64(param, 0x77);
	put_be64(param + 8, 0x88);
	put_be16(param + 18, 1); /* RELATIVE TARGET PORT IDENTIFIER of nexus 0 */
	put_be32(param + 20, 40);
	param[24] = 0x45; /* FORMAT CODE 01b, PROTOCOL IDENTIFIER iSCSI */
	put_be16(param + 26, 36);
	memcpy(param + 28, dest, strlen(dest));
	ask(make_with(question, 0x07, param, sizeof(param)));
	ck_assert_uint_eq(reply_len, 2);
	ck_assert_uint_eq(reply[1], SCSI_STATUS_GOOD);
	ck_assert_ptr_nonnull(h.lu->pr->holder);
	ck_assert_str_eq(h.lu->pr->holder->initiator_port_name, dest);
	ck_assert_uint_eq(h.lu->pr->holder->key, 0x88);
	ck_assert_uint_eq(h.lu->pr->holder->relative_target_port, 1);
	harness_run(&h, 0, write10, 10, block, 512, 512, &r);
	harness_expect_good(&r);
	harness_run(&h, 1, write10, 10, block, 512, 512, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_RESERVATION_CONFLICT);
}
END_TEST

/* Questions that are not one: answered FFh, nothing changes, nothing is read past their end. */
START_TEST(refuses_what_is_not_a_question)
{
	size_t n = make(question, 0x00, 0, 0x77, 0), name_len = question[4], tid_at = 5 + name_len;
	size_t cdb_at = tid_at + 2 + 24, param_at = cdb_at + 1 + 10 + 2;
	uint8_t keep[1024];

	memcpy(keep, question, n);
	ask(0);
	ck_assert_uint_eq(reply[1], NOT_RUN);
	for (size_t cut = 1; cut < n; cut++) { /* every truncation */
		memcpy(question, keep, n);
		ask(cut);
		ck_assert_uint_eq(reply[1], NOT_RUN);
	}
	memcpy(question, keep, n);
	question[n] = 0;
	ask(n + 1); /* a byte after the parameter list */
	ck_assert_uint_eq(reply[1], NOT_RUN);
	memcpy(question, keep, n);
	question[0] = 2; /* another version */
	ask(n);
	ck_assert_uint_eq(reply[1], NOT_RUN);
	memcpy(question, keep, n);
	question[4] = 0; /* no initiator port name */
	ask(n);
	ck_assert_uint_eq(reply[1], NOT_RUN);
	memcpy(question, keep, n);
	question[4] = 0xff; /* a name past the end */
	ask(n);
	ck_assert_uint_eq(reply[1], NOT_RUN);
	memcpy(question, keep, n);
	put_be16(question + tid_at, 0xffff); /* a TransportID past the end */
	ask(n);
	ck_assert_uint_eq(reply[1], NOT_RUN);
	memcpy(question, keep, n);
	question[cdb_at] = 16; /* a CDB of another length */
	ask(n);
	ck_assert_uint_eq(reply[1], NOT_RUN);
	memcpy(question, keep, n);
	question[cdb_at + 1] = 0x5e; /* not PERSISTENT RESERVE OUT */
	ask(n);
	ck_assert_uint_eq(reply[1], NOT_RUN);
	memcpy(question, keep, n);
	put_be16(question + param_at - 2, 600); /* more parameter data than PERSISTENT RESERVE OUT takes */
	memset(question + param_at, 0, 600);
	ask(param_at + 600);
	ck_assert_uint_eq(reply[1], NOT_RUN);
	ck_assert_uint_eq(nregs(), 0);
	/* A CDB whose PARAMETER LIST LENGTH (24) the question's 10 bytes do not fill: CHECK CONDITION, no registration. */
	memcpy(question, keep, n);
	put_be16(question + param_at - 2, 10);
	ask(param_at + 10);
	ck_assert_uint_eq(reply[1], SCSI_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(nregs(), 0);
	/* The real one still runs. */
	memcpy(question, keep, n);
	ask(n);
	ck_assert_uint_eq(reply[1], SCSI_STATUS_GOOD);
	ck_assert_uint_eq(nregs(), 1);
}
END_TEST

/* ---- the waiting node ---- */

static uint8_t sent[1024], canned[64];
static size_t sent_len, canned_len;
static int asked, ask_rc;
static struct backend_ops waiting_ops;

static bool not_ready(struct backend *be)
{
	(void)be;
	return false;
}

static int fake_ask(struct backend *be, const uint8_t *req, size_t len, uint8_t **out, size_t *out_len)
{
	(void)be;
	asked++;
	ck_assert_uint_le(len, sizeof(sent));
	memcpy(sent, req, len);
	sent_len = len;
	*out = NULL;
	*out_len = 0;
	if (ask_rc < 0)
		return ask_rc;
	*out = malloc(canned_len ? canned_len : 1);
	memcpy(*out, canned, canned_len);
	*out_len = canned_len;
	return 0;
}

/* An LU whose group waits in standby for the medium (alua_standby_until_backend, ready() false). */
static void waiting_setup(void)
{
	struct scsi_lu_params p;
	struct backend *be = be_mem_open(2048 * 512);
	char err[256];

	memset(&h, 0, sizeof(h));
	snprintf(h.state_dir, sizeof(h.state_dir), "/tmp/sbce-waiting-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(h.state_dir));
	waiting_ops = *be->ops;
	waiting_ops.ready = not_ready;
	waiting_ops.ask_holder = fake_ask;
	be->ops = &waiting_ops;
	memset(&p, 0, sizeof(p));
	p.kind = SCSI_LU_CONVENTIONAL;
	p.logical_block_size = 512;
	p.num_blocks = 2048;
	p.state_dir = h.state_dir;
	p.alua_tpgs = SCSI_TPGS_IMPLICIT;
	p.target_port_group = 2;
	p.alua_standby_until_backend = true;
	h.dev = scsi_device_create("iqn.2026-12.org.sbcemu:waiting", NULL, NULL);
	h.lu = scsi_lu_create(h.dev, &p, be, err, sizeof(err));
	ck_assert_msg(h.lu != NULL, "%s", err);
	h.nexus[0] = scsi_nexus_create(h.dev, &harness_transport, "iqn.2026-12.test:host,i,0x000000000001", "", 2);
	h.nexus[1] = scsi_nexus_create(h.dev, &harness_transport, "iqn.2026-12.test:other,i,0x000000000002", "", 2);
	harness_clear_ua(&h);
	asked = 0;
	ask_rc = 0;
}

static void waiting_teardown(void)
{
	harness_fini(&h);
}

/* PERSISTENT RESERVE OUT service action sa (TYPE Write Exclusive), SERVICE ACTION RESERVATION KEY 1234h. */
static void register_key(uint8_t sa)
{
	uint8_t cdb[10] = { 0x5f, sa, 0x01, 0, 0, 0, 0, 0, 24, 0 }, param[24] = { 0 };

	put_be64(param + 8, 0x1234);
	harness_run(&h, 0, cdb, 10, param, 24, 24, &r);
}

/* The question: this I_T nexus (name, TransportID, relative target port), the CDB, the parameter list. */
START_TEST(asks_the_holder_and_answers_with_its_answer)
{
	const char *name = "iqn.2026-12.test:host,i,0x000000000001";
	size_t n = strlen(name), off;

	canned[0] = 1;
	canned[1] = SCSI_STATUS_GOOD;
	canned_len = 2;
	register_key(0x00);
	harness_expect_good(&r);
	ck_assert_int_eq(asked, 1);
	ck_assert_uint_eq(sent[0], 1);
	ck_assert_uint_eq(sent[1], 0x05); /* the transport's PROTOCOL IDENTIFIER */
	ck_assert_uint_eq(get_be16(sent + 2), 2);
	ck_assert_uint_eq(sent[4], n);
	ck_assert(memcmp(sent + 5, name, n) == 0);
	off = 5 + n;
	ck_assert_uint_eq(get_be16(sent + off), h.nexus[0]->transport_id_len);
	off += 2 + h.nexus[0]->transport_id_len;
	ck_assert_uint_eq(sent[off], 10);
	ck_assert_uint_eq(sent[off + 1], 0x5f);
	ck_assert_uint_eq(sent[off + 9], 24);
	ck_assert_uint_eq(get_be16(sent + off + 11), 24);
	ck_assert_uint_eq(get_be64(sent + off + 13 + 8), 0x1234);
	ck_assert_uint_eq(sent_len, off + 13 + 24);
	ck_assert_ptr_null(h.lu->pr->regs); /* the holder keeps the state, not this node */

	canned[1] = SCSI_STATUS_RESERVATION_CONFLICT;
	register_key(0x00);
	ck_assert_uint_eq(r.status, SCSI_STATUS_RESERVATION_CONFLICT);

	/* CHECK CONDITION 05/26/00, field pointer parameter byte 20 bit 3: the sense this node builds from it. */
	memset(canned, 0, sizeof(canned));
	canned[0] = 1;
	canned[1] = SCSI_STATUS_CHECK_CONDITION;
	canned[2] = SENSE_KEY_ILLEGAL_REQUEST;
	put_be16(canned + 3, 0x2600);
	canned[5] = 0x08; /* BPV */
	canned[22] = SCSI_SKS_FIELD_POINTER;
	canned[23] = 3;
	put_be16(canned + 24, 20);
	canned_len = 26;
	register_key(0x00);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, 0x2600);
	ck_assert_uint_eq(r.sense[15], 0x80 | 0x08 | 3); /* SKSV, C/D 0 (parameter data), BPV, bit 3 */
	ck_assert_uint_eq(get_be16(r.sense + 16), 20);
}
END_TEST

/* No holder, or an answer that is not one: the standby answer, 02/04/0B. */
START_TEST(standby_without_an_answer)
{
	ask_rc = -ENOTCONN;
	register_key(0x00);
	harness_expect_sense(&r, SENSE_KEY_NOT_READY, 0x040b);
	ask_rc = 0;
	canned_len = 1;
	canned[0] = 1;
	register_key(0x00);
	harness_expect_sense(&r, SENSE_KEY_NOT_READY, 0x040b);
	canned_len = 2;
	canned[0] = 2; /* another version */
	canned[1] = 0;
	register_key(0x00);
	harness_expect_sense(&r, SENSE_KEY_NOT_READY, 0x040b);
	canned[0] = 1;
	canned[1] = 0xff; /* not run: the holder no longer holds the medium */
	register_key(0x00);
	harness_expect_sense(&r, SENSE_KEY_NOT_READY, 0x040b);
	canned[1] = SCSI_STATUS_CHECK_CONDITION; /* without its sense */
	register_key(0x00);
	harness_expect_sense(&r, SENSE_KEY_NOT_READY, 0x040b);
	memset(canned + 2, 0, 24);
	canned[22] = 9; /* no such sense key specific kind */
	canned_len = 26;
	register_key(0x00);
	harness_expect_sense(&r, SENSE_KEY_NOT_READY, 0x040b);
	ck_assert_int_eq(asked, 6);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("spc_pr_peer");
	TCase *tc = tcase_create("holder"), *tw = tcase_create("waiting");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, runs_the_other_nodes_command);
	tcase_add_test(tc, register_and_move_from_the_other_node);
	tcase_add_test(tc, refuses_what_is_not_a_question);
	tcase_add_test(tc, notice_of_a_preempted_registration);
	tcase_add_test(tc, notice_heard);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tw, waiting_setup, waiting_teardown);
	tcase_add_test(tw, asks_the_holder_and_answers_with_its_answer);
	tcase_add_test(tw, standby_without_an_answer);
	suite_add_tcase(s, tw);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
