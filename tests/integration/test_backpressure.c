/*
 * Backpressure through the raw iSCSI client:
 *
 * - RFC 7143 4.2.2.1 command window: MaxCmdSN = ExpCmdSN + cmd_window - 1
 *   less the non-immediate SCSI commands delivered and not yet completed, so
 *   it advances as commands complete, not as they arrive; a command beyond
 *   MaxCmdSN is silently ignored (and may be sent again once the window
 *   opens).
 * - SAM-5 5.3: an LU's task set holds queue_depth commands; past it a
 *   session that already has a command there gets TASK SET FULL, a session
 *   with none is admitted.  Past the daemon's max_commands: TASK SET FULL when
 *   the session has a command in that LU's task set, else BUSY.
 * - Buffer room: a flood of 4 MiB READs from a slow reader keeps the
 *   daemon's peak RSS near max_buffer_bytes (the daemon used to buffer every
 *   command's Data-In: ~1.6 GB for this flood).
 *
 * Several commands go out in one write() so that the daemon reads them in one
 * batch, before any of them can complete: what the window and the task set
 * look like at that moment is then known exactly.  Commands that must stay in
 * the task set are WRITEs waiting for their Data-Out (InitialR2T=Yes): they
 * stay until the test answers their R2T.
 *
 * ITEST_OLD_DAEMON=1 writes the configurations without the keys the previous
 * daemon does not know (cmd_window, queue_depth, max_commands,
 * max_buffer_bytes, max_session_buffer_bytes), to compare it with this one.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"
#include "itest_raw.h"

#define MIB (1024u * 1024u)
#define BIG_BLOCKS 8192u                 /* 4 MiB of 512-byte blocks */
#define BIG_BYTES (BIG_BLOCKS * 512u)
#define MAX_CMDS 512
#define ITT_BASE 0x10000u
#define NOP_ITT_BASE 0x200000u
#define MAX_NOPS 16
#define STATUS_GOOD 0x00
#define STATUS_BUSY 0x08
#define STATUS_TASK_SET_FULL 0x28

static bool old_daemon;

/* ---- a raw session that keeps track of its commands ---- */

struct bp_cmd {
	bool used, done;
	uint8_t lun;
	uint32_t cmdsn;
	int status;
	uint64_t bytes;          /* Data-In received */
	uint32_t sense_len;
	int order;               /* 1 = first status this session received */
	uint32_t exp, max;       /* ExpCmdSN/MaxCmdSN of the PDU with the status */
	bool r2t;                /* an R2T waits for its Data-Out */
	uint32_t r2t_ttt, r2t_off, r2t_len;
	int r2ts;
};

struct bp_nop {
	uint32_t itt;
	bool got;
	uint32_t exp, max;
	int statuses_before;     /* statuses received before this NOP-In */
};

struct bp_sess {
	struct itest_raw c;
	bool up;
	const char *name;
	struct bp_cmd cmd[MAX_CMDS];
	int ncmd;
	int statuses;
	uint32_t exp, max;       /* highest ExpCmdSN/MaxCmdSN seen (serial arithmetic) */
	bool sn_seen;
	int sn_bad;              /* PDUs with MaxCmdSN < ExpCmdSN - 1 */
	int rejects, unexpected;
	struct bp_nop nop[MAX_NOPS];
	int nnop;
};

/* A batch of header-only PDUs sent with one write(). */
struct bp_batch {
	uint8_t buf[48 * 520];
	size_t len;
};

static bool sn_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static int window_of(uint32_t exp, uint32_t max)
{
	return (int32_t)(max - exp) + 1;
}

static void sess_init(struct bp_sess *s)
{
	memset(s, 0, sizeof(*s));
	s->c.fd = -1;
}

static bool sess_login(struct bp_sess *s, const struct itest_daemon *d, const char *initiator, bool initial_r2t,
		       const char *name)
{
	char err[256];

	sess_init(s);
	s->name = name;
	if (itest_raw_login(&s->c, d, initiator, ITEST_TARGET, false, initial_r2t, !initial_r2t, err, sizeof(err))) {
		itest_ok(false, "raw login", "%s: %s", name, err);
		s->c.fd = -1;
		return false;
	}
	s->up = true;
	return true;
}

static void sess_close(struct bp_sess *s)
{
	itest_raw_close(&s->c);
	s->up = false;
}

static void take_statsn(struct bp_sess *s, const uint8_t *bhs)
{
	uint32_t next = itest_get_be32(bhs + 24) + 1;

	if (sn_lt(s->c.exp_statsn, next))
		s->c.exp_statsn = next;
}

/* Handles one received PDU. */
static void sess_take(struct bp_sess *s, const struct itest_pdu *p)
{
	uint8_t op = p->bhs[0] & 0x3f;
	uint32_t itt = itest_get_be32(p->bhs + 16);
	uint32_t exp = itest_get_be32(p->bhs + 28), max = itest_get_be32(p->bhs + 32);
	struct bp_cmd *c = NULL;

	if (op != RAW_OP_REJECT) {
		if (sn_lt(max, exp - 1))
			s->sn_bad++;
		if (!s->sn_seen || sn_lt(s->exp, exp))
			s->exp = exp;
		if (!s->sn_seen || sn_lt(s->max, max))
			s->max = max;
		s->sn_seen = true;
	}
	if (itt >= ITT_BASE && itt < ITT_BASE + MAX_CMDS && s->cmd[itt - ITT_BASE].used)
		c = &s->cmd[itt - ITT_BASE];
	switch (op) {
	case RAW_OP_DATA_IN:
		if (!c) {
			s->unexpected++;
			return;
		}
		c->bytes += p->data_len;
		if (p->bhs[1] & 0x01) { /* S: the status rides in it */
			c->status = p->bhs[3];
			goto done;
		}
		return;
	case RAW_OP_SCSI_RSP:
		if (!c) {
			s->unexpected++;
			return;
		}
		c->status = p->bhs[3];
		if (p->bhs[2] != 0) /* iSCSI response: not "completed at target" */
			c->status = 0x100 | p->bhs[2];
		if (p->data_len >= 2)
			c->sense_len = itest_get_be16(p->data);
		goto done;
	case RAW_OP_R2T:
		if (!c) {
			s->unexpected++;
			return;
		}
		c->r2t = true;
		c->r2ts++;
		c->r2t_ttt = itest_get_be32(p->bhs + 20);
		c->r2t_off = itest_get_be32(p->bhs + 40);
		c->r2t_len = itest_get_be32(p->bhs + 44);
		return;
	case RAW_OP_NOP_IN:
		if (itt == 0xffffffffu)
			return; /* the target's own ping (nop_in_interval is 30 s; not expected) */
		take_statsn(s, p->bhs);
		for (int i = 0; i < s->nnop; i++) {
			if (s->nop[i].itt == itt) {
				s->nop[i].got = true;
				s->nop[i].exp = exp;
				s->nop[i].max = max;
				s->nop[i].statuses_before = s->statuses;
			}
		}
		return;
	case RAW_OP_REJECT:
		s->rejects++;
		return;
	default:
		s->unexpected++;
		return;
	}
done:
	take_statsn(s, p->bhs);
	c->done = true;
	c->exp = exp;
	c->max = max;
	c->order = ++s->statuses;
}

/* Receives and handles one PDU: 1, or what itest_raw_recv returned. */
static int sess_pump(struct bp_sess *s, int timeout_ms)
{
	struct itest_pdu p;
	int rc = itest_raw_recv(&s->c, &p, timeout_ms);

	if (rc != 1)
		return rc;
	sess_take(s, &p);
	itest_pdu_free(&p);
	return 1;
}

/* One PDU from whichever of n sessions has one: 1, -2 on timeout, else an error. */
static int pump_any(struct bp_sess **ss, int n, int timeout_ms)
{
	struct pollfd pfd[4];
	int r;

	for (int i = 0; i < n; i++)
		pfd[i] = (struct pollfd){ .fd = ss[i]->c.fd, .events = POLLIN };
	r = poll(pfd, (nfds_t)n, timeout_ms);
	if (r == 0)
		return -2;
	if (r < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (pfd[i].revents)
			return sess_pump(ss[i], 10000); /* a PDU has begun: the rest follows */
	return -1;
}

static int new_cmd(struct bp_sess *s)
{
	if (s->ncmd >= MAX_CMDS) {
		printf("Bail out! more than %d commands on one session\n", MAX_CMDS);
		exit(1);
	}
	memset(&s->cmd[s->ncmd], 0, sizeof(s->cmd[0]));
	s->cmd[s->ncmd].used = true;
	s->cmd[s->ncmd].status = -1;
	return s->ncmd++;
}

/*
 * Adds a SCSI Command (READ(16) with dir 'r', WRITE(16) with 'w', no data
 * otherwise) to the batch; returns its index.  Immediate commands do not
 * take a CmdSN.
 */
static int batch_cmd(struct bp_sess *s, struct bp_batch *b, int lun, char dir, uint64_t lba, uint32_t nblocks,
		     bool immediate)
{
	uint8_t cdb[16] = { 0 }, *bhs = b->buf + b->len;
	int idx = new_cmd(s);
	uint32_t edtl = dir == 'r' || dir == 'w' ? nblocks * 512u : 0;

	if (dir == 'r' || dir == 'w') {
		cdb[0] = dir == 'r' ? 0x88 : 0x8a;
		itest_put_be64(cdb + 2, lba);
		itest_put_be32(cdb + 10, nblocks);
	} /* else TEST UNIT READY */
	itest_raw_scsi_cmd(&s->c, bhs, lun, cdb, dir ? 16 : 6, dir == 'r', dir == 'w', edtl);
	itest_put_be32(bhs + 16, ITT_BASE + (uint32_t)idx);
	if (immediate) {
		bhs[0] |= 0x40;
		s->c.cmdsn--;
	}
	s->cmd[idx].lun = (uint8_t)lun;
	s->cmd[idx].cmdsn = itest_get_be32(bhs + 24);
	b->len += 48;
	return idx;
}

/* Adds an immediate NOP-Out (a ping the target answers with a NOP-In); returns its slot. */
static int batch_nop(struct bp_sess *s, struct bp_batch *b)
{
	uint8_t *bhs = b->buf + b->len;
	int k = s->nnop < MAX_NOPS ? s->nnop++ : MAX_NOPS - 1;

	memset(bhs, 0, 48);
	bhs[0] = 0x40 | RAW_OP_NOP_OUT;
	bhs[1] = 0x80;
	s->nop[k] = (struct bp_nop){ .itt = NOP_ITT_BASE + (uint32_t)k };
	itest_put_be32(bhs + 16, s->nop[k].itt);
	itest_put_be32(bhs + 20, 0xffffffffu);
	itest_put_be32(bhs + 24, s->c.cmdsn);
	itest_put_be32(bhs + 28, s->c.exp_statsn);
	b->len += 48;
	return k;
}

static bool batch_send(struct bp_sess *s, struct bp_batch *b)
{
	bool ok = b->len == 0 || itest_raw_write(s->c.fd, b->buf, b->len) == 0;

	b->len = 0;
	return ok;
}

/* Pumps until cmd idx has its status (true) or the time is up. */
static bool wait_cmd(struct bp_sess *s, int idx, int timeout_ms)
{
	uint64_t end = itest_now_ms() + (uint64_t)timeout_ms;

	while (!s->cmd[idx].done) {
		uint64_t now = itest_now_ms();
		if (now >= end || sess_pump(s, (int)(end - now)) != 1)
			break;
	}
	return s->cmd[idx].done;
}

static bool wait_nop(struct bp_sess *s, int k, int timeout_ms)
{
	uint64_t end = itest_now_ms() + (uint64_t)timeout_ms;

	while (!s->nop[k].got) {
		uint64_t now = itest_now_ms();
		if (now >= end || sess_pump(s, (int)(end - now)) != 1)
			break;
	}
	return s->nop[k].got;
}

/* Sends one command and waits for its status; returns the status or -1. */
static int one_cmd(struct bp_sess *s, int lun, char dir, uint64_t lba, uint32_t nblocks, int *idx_out)
{
	struct bp_batch b = { .len = 0 };
	int idx = batch_cmd(s, &b, lun, dir, lba, nblocks, false);

	if (idx_out)
		*idx_out = idx;
	if (!batch_send(s, &b) || !wait_cmd(s, idx, 15000))
		return -1;
	return s->cmd[idx].status;
}

/* Pings with an immediate NOP-Out; the window its NOP-In shows (ExpCmdSN in *exp), or INT32_MIN. */
static int ping_window(struct bp_sess *s, uint32_t *exp)
{
	struct bp_batch b = { .len = 0 };
	int k = batch_nop(s, &b);

	if (!batch_send(s, &b) || !wait_nop(s, k, 10000))
		return INT32_MIN;
	*exp = s->nop[k].exp;
	return window_of(s->nop[k].exp, s->nop[k].max);
}

/* Waits for count R2Ts on the commands from..from+n-1 (first R2T of each). */
static bool wait_r2ts(struct bp_sess *s, int from, int n, int timeout_ms)
{
	uint64_t end = itest_now_ms() + (uint64_t)timeout_ms;

	for (;;) {
		int got = 0;
		uint64_t now = itest_now_ms();
		for (int i = from; i < from + n; i++)
			got += s->cmd[i].r2ts > 0 || s->cmd[i].done;
		if (got == n)
			return true;
		if (now >= end || sess_pump(s, (int)(end - now)) != 1)
			return false;
	}
}

/* Answers every pending R2T with zero-filled Data-Out PDUs. */
static bool answer_r2ts(struct bp_sess *s)
{
	static const uint8_t zeros[65536];

	for (int i = 0; i < s->ncmd; i++) {
		struct bp_cmd *c = &s->cmd[i];
		uint32_t off, left, datasn = 0;

		if (!c->r2t)
			continue;
		c->r2t = false;
		off = c->r2t_off;
		left = c->r2t_len;
		while (left > 0) {
			uint8_t bhs[48] = { 0 };
			uint32_t n = left < sizeof(zeros) ? left : (uint32_t)sizeof(zeros);

			if (n > s->c.target_mrdsl)
				n = s->c.target_mrdsl;
			bhs[0] = RAW_OP_DATA_OUT;
			bhs[1] = n == left ? 0x80 : 0;
			bhs[9] = c->lun;
			itest_put_be32(bhs + 16, ITT_BASE + (uint32_t)i);
			itest_put_be32(bhs + 20, c->r2t_ttt);
			itest_put_be32(bhs + 28, s->c.exp_statsn);
			itest_put_be32(bhs + 36, datasn++);
			itest_put_be32(bhs + 40, off);
			if (itest_raw_send(&s->c, bhs, zeros, n))
				return false;
			off += n;
			left -= n;
		}
	}
	return true;
}

/* Answers R2Ts until commands from..from+n-1 all have their status. */
static bool finish_writes(struct bp_sess *s, int from, int n, int timeout_ms)
{
	uint64_t end = itest_now_ms() + (uint64_t)timeout_ms;

	for (;;) {
		int done = 0;
		uint64_t now = itest_now_ms();
		if (!answer_r2ts(s))
			return false;
		for (int i = from; i < from + n; i++)
			done += s->cmd[i].done;
		if (done == n)
			return true;
		if (now >= end || sess_pump(s, (int)(end - now)) != 1)
			return false;
	}
}

static const char *status_name(int st)
{
	static char buf[32];

	switch (st) {
	case -1: return "no status";
	case STATUS_GOOD: return "GOOD";
	case 0x02: return "CHECK CONDITION";
	case STATUS_BUSY: return "BUSY";
	case 0x18: return "RESERVATION CONFLICT";
	case STATUS_TASK_SET_FULL: return "TASK SET FULL";
	default: snprintf(buf, sizeof(buf), "status 0x%02x", st); return buf;
	}
}

/* ---- configuration ---- */

/*
 * One target, LU 0 = 1 GiB sparse (512-byte blocks, READs of 4 MiB allowed),
 * LU 1 = 64 MiB sparse.  daemon_keys/iscsi_keys/lu0_keys are left out for
 * the old daemon.
 */
static void daemon_up(struct itest_daemon *d, const char *name, const char *daemon_keys, const char *iscsi_keys,
		      const char *lu0_keys)
{
	char cfg[4096];

	if (old_daemon)
		daemon_keys = iscsi_keys = lu0_keys = "";
	snprintf(cfg, sizeof(cfg),
		 "# test_backpressure: %s\n"
		 "[daemon]\n"
		 "workers = 4\n"
		 "%s"
		 "\n[iscsi]\n"
		 "%s"
		 "\n[target \"" ITEST_TARGET "\"]\n"
		 "alias = itest\n"
		 "\n[lun \"" ITEST_TARGET "\" 0]\n"
		 "path = @DIR@/lun0.img\n"
		 "size = 1G\n"
		 "logical_block_size = 512\n"
		 "thin_provisioning = true\n"
		 "max_transfer_length = 16384\n"
		 "%s"
		 "\n[lun \"" ITEST_TARGET "\" 1]\n"
		 "path = @DIR@/lun1.img\n"
		 "size = 64M\n"
		 "logical_block_size = 512\n"
		 "thin_provisioning = true\n",
		 name, daemon_keys, iscsi_keys, lu0_keys);
	itest_daemon_up(d, name, cfg);
}

/* ---- 1: the command window ---- */

static void test_cmd_window(void)
{
	struct itest_daemon d;
	struct bp_sess s;
	struct bp_batch b = { .len = 0 };
	uint32_t n, exp = 0;
	int w, nop_a, nop_b, ninth, resend, taken;
	uint32_t exp_after;
	int good = 0, window_ok = 0, exp_ok = 0;
	char why[512] = "";
	size_t wl = 0;
	uint64_t end;

	sess_init(&s);
	daemon_up(&d, "bp-window", "", "cmd_window = 8\n", "");
	if (!sess_login(&s, &d, ITEST_INITIATOR_1, false, "window"))
		goto out;
	itest_raw_clear_ua(&s.c, 0);

	w = ping_window(&s, &exp);
	itest_note("window at rest: ExpCmdSN %u, window %d", exp, w);
	itest_ok(w == 8 && exp == s.c.cmdsn,
		 "RFC 7143 4.2.2.1: at rest MaxCmdSN = ExpCmdSN + cmd_window - 1 (cmd_window 8)",
		 "immediate NOP-Out answered with ExpCmdSN %u (next CmdSN %u), window %d", exp, s.c.cmdsn, w);

	/*
	 * One write: 8 READ(16) of 4 MiB (CmdSN n .. n+7), an immediate NOP-Out
	 * (A), a 9th READ with CmdSN n+8, another immediate NOP-Out (B).
	 */
	n = s.c.cmdsn;
	for (int i = 0; i < 8; i++)
		batch_cmd(&s, &b, 0, 'r', (uint64_t)i * BIG_BLOCKS, BIG_BLOCKS, false);
	nop_a = batch_nop(&s, &b);
	ninth = batch_cmd(&s, &b, 0, 'r', 8ull * BIG_BLOCKS, BIG_BLOCKS, false);
	nop_b = batch_nop(&s, &b);
	if (!batch_send(&s, &b)) {
		itest_ok(false, "send 8 READs and two NOP-Outs", "write failed");
		goto out;
	}
	end = itest_now_ms() + 20000;
	for (;;) {
		int done = 0;
		uint64_t now = itest_now_ms();
		for (int i = 0; i < 8; i++)
			done += s.cmd[i].done;
		if (done == 8 && s.nop[nop_a].got && s.nop[nop_b].got)
			break;
		if (now >= end || sess_pump(&s, (int)(end - now)) != 1)
			break;
	}
	/* The 9th gets 1 s more to answer, if it was (wrongly) taken in. */
	end = itest_now_ms() + 1000;
	while (!s.cmd[ninth].done) {
		uint64_t now = itest_now_ms();
		if (now >= end || sess_pump(&s, (int)(end - now)) != 1)
			break;
	}

	{
		struct bp_nop *a = &s.nop[nop_a], *bb = &s.nop[nop_b];
		int wa = window_of(a->exp, a->max), wb = window_of(bb->exp, bb->max);

		itest_note("NOP-In A (after 8 READs): ExpCmdSN %u MaxCmdSN %u window %d, %d statuses before it", a->exp,
			   a->max, wa, a->statuses_before);
		itest_note("NOP-In B (after the 9th READ, CmdSN %u): ExpCmdSN %u MaxCmdSN %u window %d", n + 8, bb->exp,
			   bb->max, wb);
		itest_ok(a->got && a->exp == n + 8 && wa < 8,
			 "RFC 7143 4.2.2.1: MaxCmdSN does not advance as commands arrive (8 READs outstanding: window < 8)",
			 "%s ExpCmdSN %u (want %u), window %d", a->got ? "NOP-In:" : "no NOP-In;", a->exp, n + 8, wa);
		itest_ok(a->got && wa == a->statuses_before,
			 "RFC 7143 4.2.2.1: window = cmd_window - commands delivered and not completed (NOP-In A)",
			 "window %d, but %d of the 8 READs had completed (statuses before it)", wa, a->statuses_before);
		itest_ok(a->got && bb->got && sn_lt(a->max, n + 8) && bb->exp == n + 8 && !s.cmd[ninth].done,
			 "RFC 7143 4.2.2.1: a READ with CmdSN beyond MaxCmdSN (window closed) is silently ignored",
			 "MaxCmdSN before it %u, its CmdSN %u; ExpCmdSN after it %u (want %u); %s", a->max, n + 8, bb->exp,
			 n + 8, s.cmd[ninth].done ? status_name(s.cmd[ninth].status) : "no response");
	}

	/*
	 * The checks below hold whether or not the 9th READ was (wrongly) taken
	 * in, so that one fault fails one check: with it taken in, 9 commands
	 * were outstanding and ExpCmdSN is n+9.
	 */
	exp_after = s.nop[nop_b].got ? s.nop[nop_b].exp : n + 8;
	taken = exp_after == n + 9 ? 1 : 0;
	for (int i = 0; i < 8; i++) {
		struct bp_cmd *c = &s.cmd[i];
		int wc = window_of(c->exp, c->max);

		good += c->done && c->status == STATUS_GOOD && c->bytes == BIG_BYTES;
		exp_ok += c->done && c->exp == exp_after;
		/* The response of the k-th completion was built after k completions: window >= k (- the 9th). */
		if (c->done && wc >= c->order - taken && wc <= 8)
			window_ok++;
		else if (wl < sizeof(why) - 40)
			wl += (size_t)snprintf(why + wl, sizeof(why) - wl, " [#%d: %d-th status, window %d]", i,
					       c->order, wc);
		if (itest_verbose())
			itest_note("READ %d: %s, %llu bytes, %d-th status, ExpCmdSN %u MaxCmdSN %u window %d", i,
				   status_name(c->status), (unsigned long long)c->bytes, c->order, c->exp, c->max, wc);
	}
	itest_ok(good == 8, "8 READ(16) of 4 MiB within the window -> GOOD with 4 MiB each", "%d of 8", good);
	itest_ok(window_ok == 8 && exp_ok == 8,
		 "RFC 7143 4.2.2.1: MaxCmdSN advances as commands complete (k-th response: window >= k)",
		 "%d of 8 right, %d with ExpCmdSN %u:%s", window_ok, exp_ok, exp_after, why);

	w = ping_window(&s, &exp);
	itest_ok(w == 8 && exp == exp_after,
		 "RFC 7143 4.2.2.1: after every response arrived the window is cmd_window again",
		 "ExpCmdSN %u (want %u), window %d", exp, exp_after, w);

	/* The initiator sends the ignored command again, same CmdSN, now inside the window. */
	if (!taken) {
		int st;

		s.c.cmdsn = n + 8;
		st = one_cmd(&s, 0, 'r', 8ull * BIG_BLOCKS, BIG_BLOCKS, &resend);
		itest_ok(st == STATUS_GOOD && s.cmd[resend].bytes == BIG_BYTES,
			 "RFC 7143 4.2.2.1: the ignored command sent again with the same CmdSN inside the window -> GOOD",
			 "%s, %llu bytes", status_name(st), (unsigned long long)s.cmd[resend].bytes);
	} else {
		itest_note("the 9th READ was executed (%s): not sent again", status_name(s.cmd[ninth].status));
	}
	w = ping_window(&s, &exp);
	itest_ok(w == 8 && exp == n + 9, "after it: ExpCmdSN is past the 9th command, window cmd_window",
		 "ExpCmdSN %u (want %u), window %d", exp, n + 9, w);
	itest_ok(s.sn_bad == 0 && s.rejects == 0,
		 "RFC 7143 4.2.2.1: every PDU has MaxCmdSN >= ExpCmdSN - 1; no Reject",
		 "%d PDUs with MaxCmdSN < ExpCmdSN - 1, %d Rejects", s.sn_bad, s.rejects);
out:
	sess_close(&s);
	itest_daemon_cleanup(&d);
}

/* ---- 2: TASK SET FULL ---- */

static void test_task_set_full(void)
{
	struct itest_daemon d;
	struct bp_sess s1, s2, *both[2] = { &s1, &s2 };
	struct bp_batch b = { .len = 0 };
	int good = 0, tsf = 0, tsf_sense = 0, first4 = 0, other, st, w0, idx;
	uint64_t end;
	char seq[64] = "";

	sess_init(&s1);
	sess_init(&s2);
	daemon_up(&d, "bp-tsf", "max_buffer_bytes = 8M\n", "cmd_window = 64\n", "queue_depth = 4\n");
	if (!sess_login(&s1, &d, ITEST_INITIATOR_1, true, "tsf-1") ||
	    !sess_login(&s2, &d, ITEST_INITIATOR_2, true, "tsf-2"))
		goto out;
	itest_raw_clear_ua(&s1.c, 0);
	itest_raw_clear_ua(&s2.c, 0);

	/* 10 READs of 4 MiB in one write: the daemon admits them before any completes. */
	for (int i = 0; i < 10; i++)
		batch_cmd(&s1, &b, 0, 'r', (uint64_t)i * BIG_BLOCKS, BIG_BLOCKS, false);
	batch_send(&s1, &b);
	/*
	 * The other session's READ goes once the daemon has read all ten (the
	 * TASK SET FULLs come at once): sent together, it may be read first and
	 * take one of the four places.
	 */
	end = itest_now_ms() + 30000;
	for (;;) {
		int done = 0;
		for (int i = 0; i < 10; i++)
			done += s1.cmd[i].done;
		if (done >= 6 || itest_now_ms() >= end || pump_any(both, 2, (int)(end - itest_now_ms())) != 1)
			break;
	}
	other = batch_cmd(&s2, &b, 0, 'r', 100ull * BIG_BLOCKS, BIG_BLOCKS, false);
	batch_send(&s2, &b);
	for (;;) {
		int done = s2.cmd[other].done;
		for (int i = 0; i < 10; i++)
			done += s1.cmd[i].done;
		if (done == 11 || itest_now_ms() >= end || pump_any(both, 2, (int)(end - itest_now_ms())) != 1)
			break;
	}
	for (int i = 0; i < 10; i++) {
		struct bp_cmd *c = &s1.cmd[i];
		if (c->status == STATUS_GOOD && c->bytes == BIG_BYTES) {
			good++;
			first4 += i < 4;
		}
		if (c->status == STATUS_TASK_SET_FULL) {
			tsf++;
			tsf_sense += c->sense_len == 0 && c->bytes == 0;
		}
		seq[i] = c->status == STATUS_GOOD ? 'G' : c->status == STATUS_TASK_SET_FULL ? 'F' : '?';
	}
	itest_note("10 READs at once, queue_depth 4, max_buffer_bytes 8M: %s (G GOOD, F TASK SET FULL)", seq);
	itest_ok(good == 4 && first4 == 4,
		 "SAM-5 5.3: queue_depth 4, 10 READs at once from one session -> the first 4 admitted (GOOD, 4 MiB each)",
		 "%d GOOD (%d of them among the first 4): %s", good, first4, seq);
	itest_ok(tsf == 6 && tsf_sense == 6,
		 "SAM-5 5.3: the other 6 (session has commands in the full task set) -> TASK SET FULL, no sense data",
		 "%d TASK SET FULL, %d of them without sense or data", tsf, tsf_sense);
	itest_ok(s2.cmd[other].status == STATUS_GOOD && s2.cmd[other].bytes == BIG_BYTES,
		 "SAM-5 5.3: meanwhile another session's READ (none of its commands in the task set) -> GOOD",
		 "%s, %llu bytes", status_name(s2.cmd[other].status), (unsigned long long)s2.cmd[other].bytes);

	/*
	 * Deterministic: 4 WRITEs waiting for their Data-Out (their R2T
	 * unanswered) hold the task set; then one more command from each session.
	 */
	w0 = s1.ncmd;
	for (int i = 0; i < 4; i++)
		batch_cmd(&s1, &b, 0, 'w', (1ull << 20) + (uint64_t)i * 128, 128, false);
	batch_send(&s1, &b);
	if (!itest_ok(wait_r2ts(&s1, w0, 4, 10000), "4 WRITE(16) with InitialR2T=Yes -> an R2T each (task set full)",
		      "R2Ts: %d %d %d %d", s1.cmd[w0].r2ts, s1.cmd[w0 + 1].r2ts, s1.cmd[w0 + 2].r2ts, s1.cmd[w0 + 3].r2ts))
		goto out;
	st = one_cmd(&s1, 0, 'r', 0, 8, &idx);
	itest_ok(st == STATUS_TASK_SET_FULL && s1.cmd[idx].sense_len == 0,
		 "SAM-5 5.3: 4 WRITEs in the task set (queue_depth 4): the same session's READ -> TASK SET FULL",
		 "%s", status_name(st));
	st = one_cmd(&s2, 0, 'r', 0, 8, &idx);
	itest_ok(st == STATUS_GOOD && s2.cmd[idx].bytes == 4096,
		 "SAM-5 5.3: task set full, a session with no command in it is admitted: READ -> GOOD", "%s",
		 status_name(st));
	itest_ok(finish_writes(&s1, w0, 4, 10000) && s1.cmd[w0].status == STATUS_GOOD &&
			 s1.cmd[w0 + 1].status == STATUS_GOOD && s1.cmd[w0 + 2].status == STATUS_GOOD &&
			 s1.cmd[w0 + 3].status == STATUS_GOOD,
		 "the 4 WRITEs complete GOOD once their Data-Out is sent", "%s %s %s %s",
		 status_name(s1.cmd[w0].status), status_name(s1.cmd[w0 + 1].status), status_name(s1.cmd[w0 + 2].status),
		 status_name(s1.cmd[w0 + 3].status));
	st = one_cmd(&s1, 0, 'r', 0, 8, NULL);
	itest_ok(st == STATUS_GOOD, "SAM-5 5.3: after its commands ended the session is admitted again: READ -> GOOD",
		 "%s", status_name(st));
	itest_ok(s1.rejects + s2.rejects == 0 && s1.unexpected + s2.unexpected == 0,
		 "no Reject and no unexpected PDU on either session", "%d Rejects, %d unexpected PDUs",
		 s1.rejects + s2.rejects, s1.unexpected + s2.unexpected);
out:
	sess_close(&s1);
	sess_close(&s2);
	itest_daemon_cleanup(&d);
}

/* ---- 3: BUSY ---- */

static void test_busy(void)
{
	struct itest_daemon d;
	struct bp_sess s1, s2;
	struct bp_batch b = { .len = 0 };
	int w0, st, tries = 0;

	sess_init(&s1);
	sess_init(&s2);
	daemon_up(&d, "bp-busy", "max_commands = 2\n", "", "");
	if (!sess_login(&s1, &d, ITEST_INITIATOR_1, true, "busy-1") ||
	    !sess_login(&s2, &d, ITEST_INITIATOR_2, true, "busy-2"))
		goto out;
	for (int lun = 0; lun < 2; lun++) {
		itest_raw_clear_ua(&s1.c, lun);
		itest_raw_clear_ua(&s2.c, lun);
	}
	/* Session 1 holds the daemon's 2 commands: WRITEs on LU 0 waiting for their Data-Out. */
	w0 = s1.ncmd;
	batch_cmd(&s1, &b, 0, 'w', 4096, 128, false);
	batch_cmd(&s1, &b, 0, 'w', 8192, 128, false);
	batch_send(&s1, &b);
	if (!itest_ok(wait_r2ts(&s1, w0, 2, 10000), "2 WRITE(16) on LU 0 with InitialR2T=Yes -> an R2T each",
		      "R2Ts: %d %d", s1.cmd[w0].r2ts, s1.cmd[w0 + 1].r2ts))
		goto out;

	st = one_cmd(&s2, 1, 'r', 0, 8, NULL);
	itest_ok(st == STATUS_BUSY,
		 "SAM-5 5.3: max_commands reached, session with no command in LU 1's task set: READ on LU 1 -> BUSY",
		 "%s", status_name(st));
	st = one_cmd(&s2, 0, 'r', 0, 8, NULL);
	itest_ok(st == STATUS_BUSY,
		 "SAM-5 5.3: max_commands reached, session with no command in LU 0's task set: READ on LU 0 -> BUSY",
		 "%s", status_name(st));
	st = one_cmd(&s1, 0, 'r', 0, 8, NULL);
	itest_ok(st == STATUS_TASK_SET_FULL,
		 "SAM-5 5.3: max_commands reached, session with commands in LU 0's task set: READ on LU 0 -> TASK SET FULL",
		 "%s", status_name(st));
	st = one_cmd(&s1, 1, 'r', 0, 8, NULL);
	itest_ok(st == STATUS_BUSY,
		 "SAM-5 5.3: max_commands reached, the same session on LU 1 (none of its commands there) -> BUSY", "%s",
		 status_name(st));

	itest_ok(finish_writes(&s1, w0, 2, 10000) && s1.cmd[w0].status == STATUS_GOOD &&
			 s1.cmd[w0 + 1].status == STATUS_GOOD,
		 "the 2 WRITEs complete GOOD once their Data-Out is sent", "%s %s", status_name(s1.cmd[w0].status),
		 status_name(s1.cmd[w0 + 1].status));
	/* Their place is released when their responses were sent: allow a moment. */
	do {
		st = one_cmd(&s2, 1, 'r', 0, 8, NULL);
		if (st == STATUS_BUSY)
			usleep(50000);
	} while (st == STATUS_BUSY && ++tries < 20);
	itest_ok(st == STATUS_GOOD, "SAM-5 5.3: once the commands ended, the other session's READ on LU 1 -> GOOD",
		 "%s after %d tries", status_name(st), tries + 1);
	if (tries)
		itest_note("BUSY %d more time(s) after the WRITEs' responses arrived", tries);
out:
	sess_close(&s1);
	sess_close(&s2);
	itest_daemon_cleanup(&d);
}

/* ---- 4: bounded memory under a flood ---- */

static void test_flood(void)
{
	enum { FLOOD = 400 };
	const long limit_kib = 32 * 1024, slack_kib = 48 * 1024;
	struct itest_daemon d;
	struct bp_sess *s = calloc(1, sizeof(*s));
	struct bp_batch b = { .len = 0 };
	uint32_t exp = 0;
	int sent = 0, done = 0, good = 0, peak_out = 0, w, max_window = 0;
	long hwm0, rss0, hwm1, rss1, rss_peak = 0;
	uint64_t t0, lba_span = (1ull << 30) / 512;
	bool broken = false;

	if (!s) {
		itest_ok(false, "flood: memory for the session table", NULL);
		return;
	}
	sess_init(s);
	/*
	 * A sanitizer build of the daemon keeps freed memory in its quarantine
	 * (256 MiB by default), which would count as growth here: a small
	 * quarantine keeps the measure about the daemon's own buffers.
	 */
	{
		const char *asan = getenv("ASAN_OPTIONS");
		char opts[512];

		snprintf(opts, sizeof(opts), "%s%squarantine_size_mb=4", asan && *asan ? asan : "", asan && *asan ? ":" : "");
		setenv("ASAN_OPTIONS", opts, 1);
	}
	daemon_up(&d, "bp-flood", "max_buffer_bytes = 32M\nmax_session_buffer_bytes = 32M\n", "cmd_window = 128\n",
		  "");
	if (!sess_login(s, &d, ITEST_INITIATOR_1, false, "flood"))
		goto out;
	itest_raw_clear_ua(&s->c, 0);
	w = ping_window(s, &exp);
	hwm0 = itest_proc_kib(d.pid, "VmHWM");
	rss0 = itest_proc_kib(d.pid, "VmRSS");
	itest_note("flood: window at rest %d; daemon VmHWM %ld KiB, VmRSS %ld KiB before", w, hwm0, rss0);

	t0 = itest_now_ms();
	while (done < FLOOD) {
		int before = s->statuses, rc;

		/* As many commands as the window allows. */
		while (sent < FLOOD && !sn_lt(s->max, s->c.cmdsn) && b.len + 48 <= sizeof(b.buf)) {
			batch_cmd(s, &b, 0, 'r', ((uint64_t)sent * BIG_BLOCKS) % lba_span, BIG_BLOCKS, false);
			sent++;
		}
		if (!batch_send(s, &b)) {
			broken = true;
			break;
		}
		if (sent - done > peak_out)
			peak_out = sent - done;
		rc = sess_pump(s, 20000);
		if (rc != 1) {
			itest_note("flood: receive failed (%d) after %d of %d responses", rc, done, FLOOD);
			broken = true;
			break;
		}
		if (window_of(s->exp, s->max) > max_window)
			max_window = window_of(s->exp, s->max);
		if (s->statuses != before) {
			done = s->statuses;
			usleep(2000); /* a slow reader */
			if (done % 20 == 0) {
				long r = itest_proc_kib(d.pid, "VmRSS");
				if (r > rss_peak)
					rss_peak = r;
			}
		}
	}
	for (int i = 0; i < s->ncmd; i++)
		good += s->cmd[i].done && s->cmd[i].status == STATUS_GOOD && s->cmd[i].bytes == BIG_BYTES;
	hwm1 = itest_proc_kib(d.pid, "VmHWM");
	rss1 = itest_proc_kib(d.pid, "VmRSS");
	itest_note("flood: %d READ(16) of 4 MiB in %.1f s, at most %d sent without their status yet, largest window seen %d",
		   done, (double)(itest_now_ms() - t0) / 1000.0, peak_out, max_window);
	itest_note("flood: daemon VmHWM %ld -> %ld KiB (growth %ld KiB = %.1f MiB), VmRSS %ld -> %ld KiB, sampled "
		   "VmRSS peak %ld KiB",
		   hwm0, hwm1, hwm1 - hwm0, (double)(hwm1 - hwm0) / 1024.0, rss0, rss1, rss_peak);
	itest_ok(!broken && good == FLOOD, "flood: 400 READ(16) of 4 MiB sent as the window allows -> GOOD, 4 MiB each",
		 "%d GOOD of %d sent, %d statuses", good, sent, done);
	itest_ok(hwm0 > 0 && hwm1 > 0 && hwm1 - hwm0 < limit_kib + slack_kib,
		 "buffer room: flood from a slow reader grows the daemon's peak RSS by < max_buffer_bytes (32M) + 48M",
		 "VmHWM grew by %ld KiB", hwm1 - hwm0);
	itest_ok(s->sn_bad == 0 && s->rejects == 0, "flood: every PDU has MaxCmdSN >= ExpCmdSN - 1; no Reject",
		 "%d PDUs with MaxCmdSN < ExpCmdSN - 1, %d Rejects", s->sn_bad, s->rejects);
	itest_ok(itest_daemon_alive(&d), "flood: sbcemud still running", NULL);
out:
	sess_close(s);
	free(s);
	itest_daemon_cleanup(&d);
}

int main(int argc, char **argv)
{
	const char *old = getenv("ITEST_OLD_DAEMON");

	old_daemon = old && *old && strcmp(old, "0") != 0;
	itest_init(argc, argv, "test_backpressure: CmdSN window, TASK SET FULL / BUSY, bounded buffers");
	if (old_daemon)
		itest_note("ITEST_OLD_DAEMON: configurations without cmd_window, queue_depth, max_commands, "
			   "max_buffer_bytes, max_session_buffer_bytes");
	test_cmd_window();
	test_task_set_full();
	test_busy();
	test_flood();
	return itest_finish();
}
