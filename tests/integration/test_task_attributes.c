/*
 * Task attributes end to end (SAM-5 8.6; RFC 7143 11.3.1.3 carries the
 * attribute in byte 1 bits 2:0 of the SCSI Command PDU: 1 SIMPLE, 2 ORDERED,
 * 3 HEAD OF QUEUE).  Through a raw iSCSI session, several commands go out
 * back to back behind a slow WRITE SAME(16) (one non-zero block repeated over
 * the first half, 512 MiB, of a thick 1 GiB LU), and the order in which their
 * final statuses come back is checked against the rules:
 *   - a SIMPLE command need not wait for an older SIMPLE one (other blocks);
 *   - HEAD OF QUEUE starts at once, and INQUIRY is head of queue whatever
 *     attribute it was sent with;
 *   - ORDERED waits for every older command, and younger SIMPLE commands wait
 *     for it;
 *   - two ORDERED commands in a row complete in CmdSN order.
 * The reads never touch blocks the writes touch, so LBA locks cannot be what
 * orders them.  Every scenario runs three times.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "itest_raw.h"

#define BS 512u
#define LU_BLOCKS (1024ull * 1024 * 1024 / BS)   /* 1 GiB */
#define HALF (LU_BLOCKS / 2)                     /* the slow WRITE SAME covers [0, HALF) */
#define READ_BLOCKS 8u
#define READ_BASE (HALF + 4096)                  /* reads: second half, away from the writes there */
#define O1_LBA (HALF + 65536)                    /* scenario 2's ORDERED WRITE SAME: [O1_LBA, end), 480 MiB */
#define O1_BLOCKS ((uint32_t)(LU_BLOCKS - O1_LBA))
#define ROUNDS 3

#define ATTR_SIMPLE 1
#define ATTR_ORDERED 2
#define ATTR_HOQ 3

static const char config[] =
	"[iscsi]\n"
	"nop_in_interval = 0\n"
	"\n"
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/ta-lun0.img\n"
	"size = 1G\n"
	"logical_block_size = 512\n"
	"thin_provisioning = false\n"
	"max_write_same_length = 0\n";

static struct itest_daemon d;

/* One command of a mix and what became of it. */
struct op {
	const char *name;
	int attr;
	uint32_t itt;
	int status;        /* SAM status of the final answer; -1 none yet */
	int response;      /* iSCSI response byte of a SCSI Response (0 = completed at target) */
	int rank;          /* 0-based position among the final statuses of the mix */
	uint64_t done_ms;  /* ms after the mix was sent */
	uint8_t *in;       /* optional Data-In buffer */
	uint32_t in_len;
};

static const char *attr_name(int attr)
{
	static const char *const n[] = { "untagged", "SIMPLE", "ORDERED", "HEAD OF QUEUE" };
	return attr >= 0 && attr <= 3 ? n[attr] : "?";
}

static bool raw_login(struct itest_raw *c)
{
	char err[256];

	/* ImmediateData=Yes, InitialR2T=No: the WRITE SAME block rides in the command PDU. */
	if (itest_raw_login(c, &d, ITEST_INITIATOR_1, ITEST_TARGET, false, false, true, err, sizeof(err)) != 0) {
		itest_ok(false, "raw login (ImmediateData=Yes)", "%s", err);
		return false;
	}
	if (!c->immediate_data) {
		itest_ok(false, "raw login negotiates ImmediateData=Yes", "target said No");
		itest_raw_close(c);
		return false;
	}
	itest_raw_clear_ua(c, 0);
	return true;
}

/* Sends one SCSI Command PDU with task attribute attr (immediate data: out). */
static bool send_op(struct itest_raw *c, struct op *o, const char *name, int attr, const uint8_t *cdb, int cdb_len,
		    bool read, const void *out, uint32_t out_len, uint32_t in_len)
{
	uint8_t bhs[48];

	memset(o, 0, sizeof(*o));
	o->name = name;
	o->attr = attr;
	o->status = -1;
	o->response = -1;
	o->rank = -1;
	o->itt = c->itt;
	itest_raw_scsi_cmd(c, bhs, 0, cdb, cdb_len, read, out_len > 0, read ? in_len : out_len);
	bhs[1] = (uint8_t)((bhs[1] & ~7u) | (unsigned)attr);
	return itest_raw_send(c, bhs, out, out_len) == 0;
}

static struct op *find_op(struct op *ops, int n, uint32_t itt)
{
	for (int i = 0; i < n; i++)
		if (ops[i].itt == itt)
			return &ops[i];
	return NULL;
}

/*
 * Reads PDUs until every op has its final status (SCSI Response, or Data-In
 * with the S bit) or timeout_ms passes; answers target NOP-In pings.  Returns
 * how many ops completed.
 */
static int collect(struct itest_raw *c, struct op *ops, int n, uint64_t t0, int timeout_ms, char *why, size_t whylen)
{
	uint64_t deadline = itest_now_ms() + (uint64_t)timeout_ms;
	int done = 0;

	why[0] = '\0';
	while (done < n) {
		uint64_t now = itest_now_ms();
		struct itest_pdu p;
		struct op *o;
		int rc, opcode;

		if (now >= deadline) {
			snprintf(why, whylen, "timeout after %d ms, %d of %d answered", timeout_ms, done, n);
			break;
		}
		rc = itest_raw_recv(c, &p, (int)(deadline - now));
		if (rc != 1) {
			if (rc != -2)
				snprintf(why, whylen, "receive failed (%d), %d of %d answered", rc, done, n);
			itest_pdu_free(&p);
			if (rc != -2)
				break;
			continue;
		}
		opcode = p.bhs[0] & 0x3f;
		o = find_op(ops, n, itest_get_be32(p.bhs + 16));
		if (opcode == RAW_OP_DATA_IN && o) {
			uint32_t off = itest_get_be32(p.bhs + 40);
			if (o->in && off < o->in_len)
				memcpy(o->in + off, p.data,
				       p.data_len < o->in_len - off ? p.data_len : o->in_len - off);
			if ((p.bhs[1] & 0x01) && o->status < 0) { /* S: status in the last Data-In */
				o->status = p.bhs[3];
				o->response = 0;
				o->rank = done++;
				o->done_ms = itest_now_ms() - t0;
				c->exp_statsn = itest_get_be32(p.bhs + 24) + 1;
			}
		} else if (opcode == RAW_OP_SCSI_RSP && o && o->status < 0) {
			o->status = p.bhs[3];
			o->response = p.bhs[2];
			o->rank = done++;
			o->done_ms = itest_now_ms() - t0;
			c->exp_statsn = itest_get_be32(p.bhs + 24) + 1;
		} else if (opcode == RAW_OP_NOP_IN && itest_get_be32(p.bhs + 20) != 0xffffffffu) {
			uint8_t nop[48] = { 0x40 | RAW_OP_NOP_OUT, 0x80 };
			memcpy(nop + 8, p.bhs + 8, 8);           /* LUN */
			itest_put_be32(nop + 16, 0xffffffffu);    /* ITT: an answer */
			memcpy(nop + 20, p.bhs + 20, 4);          /* TTT echoed */
			itest_put_be32(nop + 24, c->cmdsn);
			itest_put_be32(nop + 28, c->exp_statsn);
			itest_raw_send(c, nop, NULL, 0);
		} else if (opcode == RAW_OP_REJECT) {
			snprintf(why, whylen, "Reject, reason %02Xh", p.bhs[2]);
			itest_pdu_free(&p);
			break;
		}
		itest_pdu_free(&p);
	}
	return done;
}

static void note_order(int round, const char *what, const struct op *ops, int n)
{
	char line[1024];
	size_t len = 0;

	for (int r = 0; r < n; r++)
		for (int i = 0; i < n; i++)
			if (ops[i].rank == r)
				len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s (%s) %llu ms",
							r ? ", " : "", ops[i].name, attr_name(ops[i].attr),
							(unsigned long long)ops[i].done_ms);
	itest_note("round %d %s, completion order: %s", round, what, len ? line : "(nothing)");
}

/* "a completes before b", as a check; both must have completed. */
static void check_before(int round, const char *rule, const struct op *a, const struct op *b)
{
	char name[512];

	snprintf(name, sizeof(name), "round %d: %s", round, rule);
	if (a->rank < 0 || b->rank < 0) {
		itest_ok(false, name, "%s%s%s unanswered", a->rank < 0 ? a->name : "",
			 a->rank < 0 && b->rank < 0 ? " and " : "", b->rank < 0 ? b->name : "");
		return;
	}
	itest_ok(a->rank < b->rank, name, "%s completed #%d (%llu ms), %s completed #%d (%llu ms)", a->name,
		 a->rank + 1, (unsigned long long)a->done_ms, b->name, b->rank + 1, (unsigned long long)b->done_ms);
}

static void check_all_good(int round, const char *name, const struct op *ops, int n)
{
	char full[512], why[512];
	size_t len = 0;

	why[0] = '\0';
	for (int i = 0; i < n; i++)
		if (ops[i].status != 0 || ops[i].response != 0)
			len += (size_t)snprintf(why + len, sizeof(why) - len, "%s%s: %s", len ? "; " : "", ops[i].name,
						ops[i].status < 0 ? "no answer" : ops[i].response != 0 ? "iSCSI response" :
						"not GOOD");
	for (int i = 0; i < n && len < sizeof(why) - 32; i++)
		if (ops[i].status > 0)
			len += (size_t)snprintf(why + len, sizeof(why) - len, " [%s status %02Xh]", ops[i].name,
						(unsigned)ops[i].status);
	snprintf(full, sizeof(full), "round %d: %s", round, name);
	itest_ok(len == 0, full, "%s", why);
}

static void ws16_cdb(uint8_t cdb[16], uint64_t lba, uint32_t nblocks)
{
	memset(cdb, 0, 16);
	cdb[0] = 0x93;
	itest_put_be64(cdb + 2, lba);
	itest_put_be32(cdb + 10, nblocks);
}

static void read16_cdb(uint8_t cdb[16], uint64_t lba, uint32_t nblocks)
{
	memset(cdb, 0, 16);
	cdb[0] = 0x88;
	itest_put_be64(cdb + 2, lba);
	itest_put_be32(cdb + 10, nblocks);
}

static void fill_block(uint8_t *block, int seed)
{
	itest_pattern(block, BS, (uint32_t)seed * 7919u + 13u);
	block[0] |= 0x01; /* never all zeros (a zero block would take the write-zeroes path) */
}

/* One READ(16) of one block on the session, waited for; true and buf filled on GOOD. */
static bool read_block(struct itest_raw *c, uint64_t lba, uint8_t *buf)
{
	uint8_t cdb[16];
	struct op o;
	char why[256];

	read16_cdb(cdb, lba, 1);
	if (!send_op(c, &o, "verify READ(16)", ATTR_SIMPLE, cdb, 16, true, NULL, 0, BS))
		return false;
	o.in = buf;
	o.in_len = BS;
	return collect(c, &o, 1, itest_now_ms(), 30000, why, sizeof(why)) == 1 && o.status == 0;
}

/*
 * Scenario 1: WRITE SAME (SIMPLE, slow), READ A (SIMPLE), READ B (ORDERED),
 * READ C (SIMPLE), READ D (HEAD OF QUEUE), INQUIRY E (SIMPLE, implicitly
 * head of queue), sent back to back.
 */
static void scenario_mix(int round, uint64_t *ws_ms)
{
	struct itest_raw c;
	struct op ops[6];
	uint8_t cdb[16], block[BS], got[BS];
	char why[256], name[256];
	uint64_t t0;
	bool sent = true;
	int done;

	if (!raw_login(&c))
		return;
	fill_block(block, round);
	t0 = itest_now_ms();
	ws16_cdb(cdb, 0, (uint32_t)HALF);
	sent &= send_op(&c, &ops[0], "WRITE SAME(16) 512 MiB", ATTR_SIMPLE, cdb, 16, false, block, BS, 0);
	read16_cdb(cdb, READ_BASE, READ_BLOCKS);
	sent &= send_op(&c, &ops[1], "READ A", ATTR_SIMPLE, cdb, 16, true, NULL, 0, READ_BLOCKS * BS);
	read16_cdb(cdb, READ_BASE + 1000, READ_BLOCKS);
	sent &= send_op(&c, &ops[2], "READ B", ATTR_ORDERED, cdb, 16, true, NULL, 0, READ_BLOCKS * BS);
	read16_cdb(cdb, READ_BASE + 2000, READ_BLOCKS);
	sent &= send_op(&c, &ops[3], "READ C", ATTR_SIMPLE, cdb, 16, true, NULL, 0, READ_BLOCKS * BS);
	read16_cdb(cdb, READ_BASE + 3000, READ_BLOCKS);
	sent &= send_op(&c, &ops[4], "READ D", ATTR_HOQ, cdb, 16, true, NULL, 0, READ_BLOCKS * BS);
	memset(cdb, 0, 16);
	cdb[0] = 0x12;
	cdb[4] = 96; /* ALLOCATION LENGTH */
	sent &= send_op(&c, &ops[5], "INQUIRY E", ATTR_SIMPLE, cdb, 6, true, NULL, 0, 96);
	snprintf(name, sizeof(name), "round %d: six commands sent back to back on one session", round);
	itest_ok(sent, name, "send failed");

	done = collect(&c, ops, 6, t0, 300000, why, sizeof(why));
	snprintf(name, sizeof(name), "round %d: all six commands answered", round);
	itest_ok(done == 6, name, "%s", why);
	note_order(round, "mix", ops, 6);
	if (ops[0].rank >= 0) {
		*ws_ms = ops[0].done_ms;
		itest_note("round %d: WRITE SAME(16) of %llu blocks (512 MiB) took %llu ms", round,
			   (unsigned long long)HALF, (unsigned long long)ops[0].done_ms);
	}

	check_all_good(round, "every command of the mix ends GOOD (WRITE SAME, READ A-D, INQUIRY)", ops, 6);
	check_before(round, "SIMPLE READ A (other blocks) completes before the older SIMPLE WRITE SAME "
			    "(SAM-5 8.6: SIMPLE tasks do not wait for older SIMPLE ones)", &ops[1], &ops[0]);
	check_before(round, "HEAD OF QUEUE READ D completes before the older WRITE SAME (SAM-5 8.6)", &ops[4], &ops[0]);
	check_before(round, "INQUIRY E sent SIMPLE completes before the older WRITE SAME "
			    "(INQUIRY is implicitly HEAD OF QUEUE, SAM-5 8.6)", &ops[5], &ops[0]);
	check_before(round, "ORDERED READ B completes after the older WRITE SAME "
			    "(SAM-5 8.6: ORDERED waits for every older task)", &ops[0], &ops[2]);
	check_before(round, "ORDERED READ B completes after the older SIMPLE READ A", &ops[1], &ops[2]);
	check_before(round, "SIMPLE READ C completes after the older ORDERED READ B "
			    "(SAM-5 8.6: SIMPLE waits for older ORDERED tasks)", &ops[2], &ops[3]);

	/* The WRITE SAME really wrote its block over the whole range (it was not a no-op). */
	if (round == 1) {
		bool ok = read_block(&c, 0, got) && !memcmp(got, block, BS);
		ok = ok && read_block(&c, HALF - 1, got) && !memcmp(got, block, BS);
		snprintf(name, sizeof(name), "round %d: the WRITE SAME's block reads back at its first and last LBA",
			 round);
		itest_ok(ok, name, "read failed or data differs");
	}
	itest_raw_close(&c);
}

/*
 * Scenario 2: a slow SIMPLE WRITE SAME, then two ORDERED commands in a row
 * (a 480 MiB WRITE SAME in the second half, then a READ(16) elsewhere), then
 * a SIMPLE READ(16).
 */
static void scenario_two_ordered(int round)
{
	struct itest_raw c;
	struct op ops[4];
	uint8_t cdb[16], block[BS], block2[BS];
	char why[256], name[256];
	uint64_t t0;
	bool sent = true;
	int done;

	if (!raw_login(&c))
		return;
	fill_block(block, 100 + round);
	fill_block(block2, 200 + round);
	t0 = itest_now_ms();
	ws16_cdb(cdb, 0, (uint32_t)HALF);
	sent &= send_op(&c, &ops[0], "WRITE SAME(16) 512 MiB", ATTR_SIMPLE, cdb, 16, false, block, BS, 0);
	ws16_cdb(cdb, O1_LBA, O1_BLOCKS);
	sent &= send_op(&c, &ops[1], "ORDERED 1 WRITE SAME(16) 480 MiB", ATTR_ORDERED, cdb, 16, false, block2, BS, 0);
	read16_cdb(cdb, READ_BASE + 4000, READ_BLOCKS);
	sent &= send_op(&c, &ops[2], "ORDERED 2 READ(16)", ATTR_ORDERED, cdb, 16, true, NULL, 0, READ_BLOCKS * BS);
	read16_cdb(cdb, READ_BASE + 5000, READ_BLOCKS);
	sent &= send_op(&c, &ops[3], "SIMPLE READ(16)", ATTR_SIMPLE, cdb, 16, true, NULL, 0, READ_BLOCKS * BS);
	snprintf(name, sizeof(name), "round %d: slow WRITE SAME + two ORDERED + one SIMPLE sent back to back", round);
	itest_ok(sent, name, "send failed");

	done = collect(&c, ops, 4, t0, 300000, why, sizeof(why));
	snprintf(name, sizeof(name), "round %d: all four commands answered", round);
	itest_ok(done == 4, name, "%s", why);
	note_order(round, "two ORDERED", ops, 4);

	check_all_good(round, "every command of the two-ORDERED sequence ends GOOD", ops, 4);
	check_before(round, "first ORDERED command completes after the older slow SIMPLE WRITE SAME", &ops[0], &ops[1]);
	check_before(round, "two ORDERED commands in a row complete in CmdSN order "
			    "(the second, a quick READ, waits for the first, a 480 MiB WRITE SAME)", &ops[1], &ops[2]);
	check_before(round, "SIMPLE READ completes after the two older ORDERED commands", &ops[2], &ops[3]);
	itest_raw_close(&c);
}

int main(int argc, char **argv)
{
	uint64_t ws_ms[ROUNDS] = { 0 }, t_all;

	itest_init(argc, argv, "test_task_attributes: SIMPLE, ORDERED, HEAD OF QUEUE through iSCSI (SAM-5 8.6)");
	itest_daemon_up(&d, "task-attr", config);
	t_all = itest_now_ms();
	for (int round = 1; round <= ROUNDS; round++) {
		scenario_mix(round, &ws_ms[round - 1]);
		scenario_two_ordered(round);
	}
	itest_note("WRITE SAME(16) of 512 MiB: %llu / %llu / %llu ms; all rounds %llu ms",
		   (unsigned long long)ws_ms[0], (unsigned long long)ws_ms[1], (unsigned long long)ws_ms[2],
		   (unsigned long long)(itest_now_ms() - t_all));
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
