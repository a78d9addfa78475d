/*
 * The random operations, one at a time, on the sessions in turn: WRITE(16)
 * (sometimes FUA), READ(16) checked against the model, SYNCHRONIZE CACHE,
 * random CDBs, READ/WRITE past the capacity, LOGICAL UNIT RESET, ABORT
 * TASK, connections dropped without Logout, malformed PDUs (raw.c).
 *
 * Rules checked here (the model's are in model.c):
 *   - a command ended by a unit attention did not run and is sent again
 *     (SAM-5 5.14); every other answer is the one the command calls for;
 *   - WRITE(16) and READ(16) in range, and SYNCHRONIZE CACHE: GOOD;
 *   - an LBA range past the capacity: CHECK CONDITION, ILLEGAL REQUEST,
 *     LOGICAL BLOCK ADDRESS OUT OF RANGE (05/21/00, SBC-4 4.5), nothing
 *     written;
 *   - a random CDB: GOOD, CONDITION MET or CHECK CONDITION, never a dropped
 *     connection or no answer;
 *   - LOGICAL UNIT RESET: Function complete; ABORT TASK: Function complete
 *     or Task does not exist (RFC 7143 11.5.1, 11.6.1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "soak.h"

#define HOT_BLOCKS 4096u  /* a quarter of the commands aim here, so that WRITEs overlap */
#define UA_RETRIES 4
#define OP_BYTES (128u * 1024)
#define READ_BYTES (256u * 1024)
#define BG_BYTES (1024u * 1024)
#define VERIFY_BYTES (1024u * 1024)

const char *const op_names[OP_KINDS] = {
	"write", "read", "sync", "invalid-cdb", "out-of-range", "lu-reset", "abort-task", "drop", "malformed-pdu",
};

static unsigned next_sess;

/* The next session in turn, logged in again if it was dropped. */
static struct soak_sess *pick_sess(void)
{
	for (unsigned tries = 0; tries < soak.o.sessions && !soak.stop; tries++) {
		struct soak_sess *s = &soak.sess[next_sess++ % soak.o.sessions];

		if (s->ctx || sess_reconnect(s, WR_DROPPED))
			return s;
	}
	return NULL;
}

static struct soak_sess *other_sess(const struct soak_sess *s)
{
	for (unsigned i = 1; i < soak.o.sessions; i++) {
		struct soak_sess *a = &soak.sess[((unsigned)s->idx + i) % soak.o.sessions];

		if (a->ctx && !a->bg.busy)
			return a;
	}
	return NULL;
}

/* Mostly short, now and then up to max blocks; in the hot spot, at the end, or anywhere. */
static void pick_range(int lun, uint32_t max, uint64_t *lba, uint32_t *n)
{
	uint64_t nb = lu_blocks(lun);

	*n = 1 + (uint32_t)below(below(4) ? (max < 16 ? max : 16) : max);
	switch (below(8)) {
	case 0:
		*lba = nb - *n - below(8 < nb - *n ? 8 : 1);
		break;
	case 1:
	case 2:
		*lba = below(HOT_BLOCKS - *n + 1);
		break;
	default:
		*lba = below(nb - *n + 1);
	}
}

static void cdb16(uint8_t *cdb, uint8_t op, uint8_t flags, uint64_t lba, uint32_t n)
{
	memset(cdb, 0, 16);
	cdb[0] = op;
	cdb[1] = flags;
	itest_put_be64(cdb + 2, lba);
	itest_put_be32(cdb + 10, n);
}

static bool is_ua(const struct cmd_res *r)
{
	return r->rc == W_DONE && r->status == SCSI_STATUS_CHECK_CONDITION && r->sense.key == 6;
}

static const char *res_str(const struct cmd_res *r)
{
	static char buf[4][200];
	static int next;
	char *b = buf[next++ % 4];

	if (r->rc != W_DONE)
		snprintf(b, sizeof(buf[0]), "%s: %s", r->rc == W_TIMEOUT ? "no answer" : "connection lost", r->why);
	else if (r->status == SCSI_STATUS_CHECK_CONDITION)
		snprintf(b, sizeof(buf[0]), "CHECK CONDITION %02X/%02X/%02X", r->sense.key & 0xff, r->sense.asc & 0xff,
			 r->sense.ascq & 0xff);
	else
		snprintf(b, sizeof(buf[0]), "status %02Xh", r->status);
	return b;
}

/*
 * A command without Data-Out, sent again while it meets a unit attention
 * (SAM-5 5.14).  false: no answer (reported; the session is dropped).
 * Otherwise the command stays open for its data: end it with sess_cmd_end().
 */
static bool cmd_ua_retry(struct soak_sess *s, int lun, const uint8_t *cdb, int len, int dir, uint32_t in_len,
			 struct cmd_res *r, const char *what)
{
	for (int i = 0;; i++) {
		sess_cmd(s, lun, cdb, len, dir, NULL, in_len, r);
		if (r->rc != W_DONE) {
			cmd_trouble(s, r, what);
			return false;
		}
		if (!is_ua(r) || i == UA_RETRIES)
			return true;
		soak.st.unit_attentions++;
		sess_cmd_end(s);
	}
}

/* ---- WRITE and READ ---- */

/* WRITE(16) of the pattern of op opno (FUA: SBC-4, byte 1 bit 3), sent again after a unit attention. */
static void op_write(struct soak_sess *s)
{
	int lun = (int)below(SOAK_LUNS);
	uint32_t bs = lu_bs(lun), n, opno = soak.opno;
	bool fua = below(5) == 0;
	uint8_t cdb[16];
	struct cmd_res r;
	uint64_t lba;

	pick_range(lun, OP_BYTES / bs, &lba, &n);
	cdb16(cdb, 0x8a, fua ? 0x08 : 0, lba, n);
	soak.st.fua_writes += fua;
	wlog_add(opno, lun, lba, n, s->idx, fua);
	for (int i = 0;; i++) {
		uint8_t *buf = malloc((size_t)n * bs);

		pattern_fill(buf, lun, lba, n, opno);
		sess_cmd(s, lun, cdb, 16, SCSI_XFER_WRITE, buf, n * bs, &r);
		sess_cmd_end(s);
		if (!is_ua(&r) || i == UA_RETRIES)
			break;
		soak.st.unit_attentions++;
	}
	if (write_settle(opno, lun, lba, n, r.rc == W_DONE, r.status, r.sense.key, WR_DROPPED) == WR_ACKED)
		return;
	if (r.rc != W_DONE)
		cmd_trouble(s, &r, "WRITE(16)");
	else
		fail_note(&soak.st.unexpected, "WRITE(16) LUN %d LBA %llu+%u: %s, expected GOOD", lun,
			  (unsigned long long)lba, n, res_str(&r));
}

/* READ(16) of n blocks, compared with the model (settle: after a kill, pin "old or new" down). */
static void read_check(struct soak_sess *s, int lun, uint64_t lba, uint32_t n, bool settle, const char *what)
{
	uint32_t bs = lu_bs(lun);
	uint8_t cdb[16];
	struct cmd_res r;

	cdb16(cdb, 0x88, 0, lba, n);
	if (!cmd_ua_retry(s, lun, cdb, 16, SCSI_XFER_READ, n * bs, &r, what))
		return;
	if (r.status == SCSI_STATUS_GOOD && r.data_len == (int)(n * bs))
		model_check(lun, lba, n, r.data, settle, what);
	else
		fail_note(&soak.st.unexpected, "%s: READ(16) LUN %d LBA %llu+%u: %s with %d of %u bytes, expected GOOD",
			  what, lun, (unsigned long long)lba, n, res_str(&r), r.data_len, n * bs);
	sess_cmd_end(s);
}

static void op_read(struct soak_sess *s)
{
	int lun = (int)below(SOAK_LUNS);
	uint32_t n;
	uint64_t lba;

	pick_range(lun, READ_BYTES / lu_bs(lun), &lba, &n);
	read_check(s, lun, lba, n, false, "READ(16)");
}

/* Every block of both LUs, 1 MiB per READ(16), the sessions in turn. */
void verify_all(bool settle, const char *what)
{
	for (int lun = 0; lun < SOAK_LUNS; lun++) {
		uint32_t chunk = VERIFY_BYTES / lu_bs(lun);

		for (uint64_t lba = 0; lba < lu_blocks(lun) && !soak.stop; lba += chunk) {
			struct soak_sess *s = pick_sess();

			if (!s)
				return;
			read_check(s, lun, lba, chunk, settle, what);
		}
	}
	watch_idle();
}

/* SYNCHRONIZE CACHE(10) or (16), of the whole LU (NUMBER OF BLOCKS 0) or of a range. */
static void op_sync(struct soak_sess *s)
{
	int lun = (int)below(SOAK_LUNS);
	uint8_t cdb[16] = { 0 };
	struct cmd_res r;
	uint64_t lba = 0;
	uint32_t n = 0;
	int len = below(2) ? 10 : 16;

	if (below(2))
		pick_range(lun, 4096, &lba, &n);
	if (len == 10) {
		cdb[0] = 0x35;
		itest_put_be32(cdb + 2, (uint32_t)lba);
		itest_put_be16(cdb + 7, (uint16_t)n);
	} else {
		cdb16(cdb, 0x91, 0, lba, n);
	}
	if (!cmd_ua_retry(s, lun, cdb, len, SCSI_XFER_NONE, 0, &r, "SYNCHRONIZE CACHE"))
		return;
	if (r.status != SCSI_STATUS_GOOD)
		fail_note(&soak.st.unexpected, "SYNCHRONIZE CACHE(%d) LUN %d LBA %llu+%u: %s, expected GOOD", len, lun,
			  (unsigned long long)lba, n, res_str(&r));
	sess_cmd_end(s);
}

/* ---- commands that must fail ---- */

/* An LBA range that ends past the capacity: it straddles the end, starts past it, or is absurd. */
static void out_of_range(int lun, uint64_t *lba, uint32_t *n)
{
	uint64_t nb = lu_blocks(lun);

	*n = 1 + (uint32_t)below(64);
	switch (below(3)) {
	case 0:
		*lba = nb - *n + 1 + below(*n);
		break;
	case 1:
		*lba = nb + below(100000);
		break;
	default:
		*lba = rnd() | 1ull << 62;
	}
}

/* SBC-4 4.5: 05/21/00, and a WRITE must not touch the blocks inside the capacity either. */
static void op_out_of_range(struct soak_sess *s)
{
	int lun = (int)below(SOAK_LUNS);
	uint32_t bs = lu_bs(lun), n, opno = soak.opno;
	bool write = below(2);
	uint8_t cdb[16];
	struct cmd_res r;
	uint64_t lba;

	out_of_range(lun, &lba, &n);
	cdb16(cdb, write ? 0x8a : 0x88, 0, lba, n);
	if (write)
		wlog_add(opno, lun, lba, n, s->idx, false);
	for (int i = 0;; i++) {
		uint8_t *buf = write ? malloc((size_t)n * bs) : NULL;

		if (buf)
			pattern_fill(buf, lun, lba, n, opno);
		sess_cmd(s, lun, cdb, 16, write ? SCSI_XFER_WRITE : SCSI_XFER_READ, buf, n * bs, &r);
		sess_cmd_end(s);
		if (!is_ua(&r) || i == UA_RETRIES)
			break;
		soak.st.unit_attentions++;
	}
	if (r.rc != W_DONE) {
		if (write && lba < lu_blocks(lun))
			model_maybe(lun, lba, (uint32_t)(lu_blocks(lun) - lba), opno);
		cmd_trouble(s, &r, write ? "WRITE(16) past the capacity" : "READ(16) past the capacity");
		return;
	}
	if (r.status == SCSI_STATUS_CHECK_CONDITION && r.sense.key == 5 && r.sense.asc == 0x21 && r.sense.ascq == 0) {
		if (write)
			wlog_set(opno, WR_NOT_EXECUTED);
		return;
	}
	fail_note(&soak.st.unexpected, "%s LUN %d LBA %llu+%u (capacity %llu blocks): %s, expected 05/21/00",
		  write ? "WRITE(16)" : "READ(16)", lun, (unsigned long long)lba, n,
		  (unsigned long long)lu_blocks(lun), res_str(&r));
	if (write && lba < lu_blocks(lun)) /* the part inside the capacity may hold it now */
		model_maybe(lun, lba, (uint32_t)(lu_blocks(lun) - lba), opno);
	if (write)
		wlog_set(opno, WR_FAILED);
}

/*
 * Commands that change the medium or the LU's state (FORMAT UNIT, SANITIZE,
 * WRITE SAME with NDOB, START STOP UNIT, reservations, MODE SELECT, the
 * write family, zone commands, the 32-byte CDBs): a random CDB must not
 * make them, the model would not know what they did.
 */
static const uint8_t state_changing[] = {
	0x04, 0x07, 0x0a, 0x15, 0x16, 0x17, 0x1b, 0x1d, 0x1e, 0x2a, 0x2e, 0x3b, 0x3f, 0x41, 0x42, 0x48, 0x4c,
	0x55, 0x56, 0x57, 0x5f, 0x7f, 0x83, 0x89, 0x8a, 0x8b, 0x8d, 0x8e, 0x93, 0x94, 0x95, 0x9c, 0x9d, 0x9f,
	0xa4, 0xa9, 0xaa, 0xae, 0xb5,
};

static bool changes_state(uint8_t op)
{
	return memchr(state_changing, op, sizeof(state_changing)) != NULL;
}

/* The CDB length of the opcode's group (SPC-4 4.2.5.1), else any. */
static int group_len(uint8_t op)
{
	static const int len[8] = { 6, 10, 10, 0, 16, 12, 0, 0 };
	int l = len[op >> 5];

	return l ? l : (int)(6 + below(11));
}

static void random_cdb(uint8_t cdb[16], int *len)
{
	for (int i = 0; i < 16; i++)
		cdb[i] = (uint8_t)rnd();
	while (changes_state(cdb[0]))
		cdb[0] = (uint8_t)rnd();
	*len = below(4) ? group_len(cdb[0]) : (int)(6 + below(11)); /* now and then the wrong length */
}

static void op_invalid_cdb(struct soak_sess *s)
{
	int lun = (int)below(SOAK_LUNS), len, dir;
	uint32_t xfer = 0;
	uint8_t cdb[16], *buf = NULL;
	char what[128];
	struct cmd_res r;
	unsigned k = (unsigned)below(10);

	random_cdb(cdb, &len);
	dir = k < 5 ? SCSI_XFER_READ : k < 8 ? SCSI_XFER_NONE : SCSI_XFER_WRITE;
	if (dir == SCSI_XFER_READ)
		xfer = 1 + (uint32_t)below(65536);
	if (dir == SCSI_XFER_WRITE) {
		xfer = 1 + (uint32_t)below(8192);
		buf = malloc(xfer);
		memset(buf, 0xa5, xfer);
	}
	snprintf(what, sizeof(what), "random CDB");
	for (int i = 0; i < len; i++)
		snprintf(what + strlen(what), sizeof(what) - strlen(what), " %02x", cdb[i]);
	sess_cmd(s, lun, cdb, len, dir, buf, xfer, &r);
	sess_cmd_end(s);
	if (r.rc != W_DONE) {
		cmd_trouble(s, &r, what);
		return;
	}
	if (r.status == SCSI_STATUS_GOOD || r.status == SCSI_STATUS_CONDITION_MET)
		soak.st.invalid_answers[0]++;
	else if (r.status == SCSI_STATUS_CHECK_CONDITION)
		soak.st.invalid_answers[1]++;
	else
		soak.st.invalid_answers[2]++;
	if (r.status != SCSI_STATUS_GOOD && r.status != SCSI_STATUS_CONDITION_MET &&
	    r.status != SCSI_STATUS_CHECK_CONDITION)
		fail_note(&soak.st.unexpected, "%s (LUN %d, %u bytes %s): %s", what, lun, xfer,
			  dir == SCSI_XFER_WRITE ? "out" : "in", res_str(&r));
}

/* ---- task management and dropped connections ---- */

/* A large WRITE(16) left in flight on s: its command PDU (and unsolicited data) sent, its status not awaited. */
void write_in_flight(struct soak_sess *s, int lun)
{
	uint32_t opno, bs, n;
	uint8_t cdb[16], *buf;
	enum wait_rc rc;
	uint64_t lba;

	if (!s->ctx || s->bg.busy)
		return;
	opno = ++soak.opno;
	if (lun < 0)
		lun = (int)below(SOAK_LUNS);
	bs = lu_bs(lun);
	pick_range(lun, BG_BYTES / bs, &lba, &n);
	buf = malloc((size_t)n * bs);
	pattern_fill(buf, lun, lba, n, opno);
	cdb16(cdb, 0x8a, 0, lba, n);
	if (inflight_submit(s, &s->bg, lun, cdb, 16, SCSI_XFER_WRITE, buf, n * bs))
		return;
	s->bg.write = true;
	s->bg.opno = opno;
	s->bg.lun = lun;
	s->bg.lba = lba;
	s->bg.n = n;
	wlog_add(opno, lun, lba, n, s->idx, false);
	soak.st.bg_writes++;
	rc = sess_flush_rc(s, soak.o.op_timeout * 1000u);
	if (rc != W_DONE) {
		struct cmd_res r = { .rc = rc };

		snprintf(r.why, sizeof(r.why), "sending a WRITE(16) of %u bytes", n * bs);
		cmd_trouble(s, &r, "WRITE(16) left in flight");
	}
}

/* The status of a WRITE in flight on a, if it comes within ms; then its outcome. */
static void bg_collect(struct soak_sess *a, unsigned ms, enum wr_outcome if_unanswered)
{
	struct cmd_res r = { .rc = W_DONE };

	if (!a->ctx || !a->bg.busy)
		return;
	if (!a->bg.done)
		r.rc = inflight_wait(a, &a->bg, ms);
	if (r.rc == W_LOST) {
		snprintf(r.why, sizeof(r.why), "%s", iscsi_get_error(a->ctx));
		cmd_trouble(a, &r, "a WRITE(16) in flight");
		return;
	}
	bg_write_resolve(a, if_unanswered);
}

static void tmf_trouble(struct soak_sess *s, enum wait_rc rc, const char *what)
{
	struct cmd_res r = { .rc = rc };

	snprintf(r.why, sizeof(r.why), "%s", s->ctx ? iscsi_get_error(s->ctx) : "");
	cmd_trouble(s, &r, what);
}

/*
 * LOGICAL UNIT RESET, now and then with a WRITE of another session in
 * flight on the LU: with TAS = 0 (the Control mode page's default) an
 * aborted command of another I_T nexus ends without a status (SAM-5), so
 * that WRITE is old or new unless its GOOD came.
 */
static void op_lu_reset(struct soak_sess *s)
{
	int lun = (int)below(SOAK_LUNS);
	struct soak_sess *a = below(2) ? other_sess(s) : NULL;
	uint32_t resp = 0xff;
	enum wait_rc rc;

	if (a)
		write_in_flight(a, lun);
	rc = sess_tmf(s, lun, ISCSI_TM_LUN_RESET, NULL, &resp);
	if (rc != W_DONE)
		tmf_trouble(s, rc, "LOGICAL UNIT RESET");
	else if (resp != ISCSI_TMR_FUNC_COMPLETE)
		fail_note(&soak.st.unexpected, "LOGICAL UNIT RESET of LUN %d: response %u, expected 0 (Function complete)",
			  lun, resp);
	else
		soak.st.tmf_responses[0]++;
	if (a)
		bg_collect(a, 2000, WR_ABORTED);
}

/* ABORT TASK of a WRITE in flight on the same session; the session goes on. */
static void op_abort_task(struct soak_sess *s)
{
	uint32_t resp = 0xff;
	enum wait_rc rc;

	write_in_flight(s, -1);
	if (!s->ctx || !s->bg.busy)
		return;
	rc = sess_tmf(s, s->bg.lun, ISCSI_TM_ABORT_TASK, s->bg.task, &resp);
	if (rc != W_DONE) {
		tmf_trouble(s, rc, "ABORT TASK");
		return;
	}
	if (resp <= ISCSI_TMR_TASK_DOES_NOT_EXIST)
		soak.st.tmf_responses[resp]++;
	else
		fail_note(&soak.st.unexpected,
			  "ABORT TASK: response %u, expected 0 (Function complete) or 1 (Task does not exist)", resp);
	bg_collect(s, 500, WR_ABORTED);
}

/* The connection closes without Logout, sometimes with a WRITE in flight; then the session is reinstated. */
static void op_drop(struct soak_sess *s)
{
	if (below(2)) {
		write_in_flight(s, -1);
		if (below(2) && s->ctx && s->bg.busy) { /* let it run a little */
			enum wait_rc rc = inflight_wait(s, &s->bg, below(20));

			if (rc == W_LOST)
				tmf_trouble(s, rc, "a WRITE(16) in flight");
		}
	}
	sess_reconnect(s, WR_DROPPED);
}

void run_one_op(void)
{
	unsigned k = (unsigned)below(1000);
	enum soak_op op = k < 380 ? OP_WRITE : k < 730 ? OP_READ : k < 770 ? OP_SYNC : k < 890 ? OP_INVALID_CDB :
			  k < 920 ? OP_OUT_OF_RANGE : k < 930 ? OP_LU_RESET : k < 960 ? OP_ABORT_TASK :
			  k < 990 ? OP_DROP : OP_MALFORMED;
	struct soak_sess *s;

	soak.opno++;
	soak.st.ops[op]++;
	if (op == OP_MALFORMED) {
		op_malformed();
		return;
	}
	s = pick_sess();
	if (!s)
		return;
	switch (op) {
	case OP_WRITE:
		op_write(s);
		break;
	case OP_READ:
		op_read(s);
		break;
	case OP_SYNC:
		op_sync(s);
		break;
	case OP_INVALID_CDB:
		op_invalid_cdb(s);
		break;
	case OP_OUT_OF_RANGE:
		op_out_of_range(s);
		break;
	case OP_LU_RESET:
		op_lu_reset(s);
		break;
	case OP_ABORT_TASK:
		op_abort_task(s);
		break;
	case OP_DROP:
		op_drop(s);
		break;
	case OP_MALFORMED: /* above */
	case OP_KINDS:
		break;
	}
	watch_idle();
}
