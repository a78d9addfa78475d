/*
 * What every block of the two LUs must hold.
 *
 * A WRITE's data is a pattern of (seed, operation number, LUN, LBA): a
 * 32-byte header (magic, operation, LUN, LBA, seed) and xorshift bytes, so a
 * block read back names the WRITE that put it there.  Operation 0 stands
 * for "never written": the LUs start as new sparse files and read zeros.
 *
 * Per block the model keeps the operation of the last WRITE acknowledged
 * with GOOD, and the WRITEs issued since then whose status never came or
 * was not GOOD (they may or may not have reached the medium, each block
 * being one or the other: SAM-5 leaves the medium of an aborted or failed
 * WRITE undefined, and a block is written whole).  A read accepts any of
 * them.  A GOOD WRITE replaces them all: an abandoned command must not land
 * after a later acknowledged one (RFC 7143 6.3.5, session reinstatement
 * ends the old session's tasks; SAM-5, a task aborted by LOGICAL UNIT
 * RESET or ABORT TASK is over when the function completes).  After a kill
 * -9 nothing is in flight any more, so the blocks read back then settle
 * the choice.  A block with more candidates than the model keeps is not
 * compared until it is written again with GOOD (or settled after a kill).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "soak.h"

#define MAGIC 0x534f414b424c4b31ull /* "SOAKBLK1" */
#define BLK_UNKNOWN 0x01            /* too many candidates */
#define BLK_BAD 0x02                /* a mismatch was reported; not counted again until rewritten */
#define MISMATCH_DETAILS 20

struct blk {
	uint32_t val;
	uint8_t nalt;
	uint8_t flags;
	uint32_t alt[SOAK_MAX_ALT];
};

struct lu_model {
	uint32_t bs;
	uint64_t nblocks;
	struct blk *blk;
};

struct wrec {
	uint32_t opno;
	uint32_t n;
	uint64_t lba;
	uint32_t t_ms;
	uint8_t lun, sess, fua, outcome;
};

static struct lu_model lus[SOAK_LUNS] = { { .bs = 512 }, { .bs = 4096 } };
static struct wrec *wlog;
static size_t wlog_len, wlog_cap;

uint32_t lu_bs(int lun)
{
	return lus[lun].bs;
}

uint64_t lu_blocks(int lun)
{
	return lus[lun].nblocks;
}

int model_init(void)
{
	for (int i = 0; i < SOAK_LUNS; i++) {
		lus[i].nblocks = SOAK_LU_BYTES / lus[i].bs;
		lus[i].blk = calloc(lus[i].nblocks, sizeof(struct blk));
		if (!lus[i].blk)
			return -1;
	}
	return 0;
}

void model_free(void)
{
	for (int i = 0; i < SOAK_LUNS; i++) {
		free(lus[i].blk);
		lus[i].blk = NULL;
	}
	free(wlog);
	wlog = NULL;
	wlog_len = wlog_cap = 0;
}

/* ---- patterns ---- */

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void block_fill(uint8_t *p, uint32_t bs, int lun, uint64_t lba, uint32_t opno)
{
	uint64_t x;

	if (!opno) {
		memset(p, 0, bs);
		return;
	}
	itest_put_be64(p, MAGIC);
	itest_put_be32(p + 8, opno);
	itest_put_be32(p + 12, (uint32_t)lun);
	itest_put_be64(p + 16, lba);
	itest_put_be64(p + 24, soak.o.seed);
	x = mix64(soak.o.seed ^ mix64((uint64_t)opno << 8 | (uint64_t)lun) ^ mix64(lba ^ 0x5a5a5a5aull)) | 1;
	for (uint32_t i = 32; i < bs; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
}

void pattern_fill(uint8_t *buf, int lun, uint64_t lba, uint32_t n, uint32_t opno)
{
	uint32_t bs = lu_bs(lun);

	for (uint32_t i = 0; i < n; i++)
		block_fill(buf + (size_t)i * bs, bs, lun, lba + i, opno);
}

static bool is_zero(const uint8_t *p, uint32_t bs)
{
	return p[0] == 0 && !memcmp(p, p + 1, bs - 1);
}

/* The operation whose pattern the block holds exactly: 0 for zeros, -1 if none. */
static int64_t block_owner(const uint8_t *p, int lun, uint64_t lba)
{
	static uint8_t want[4096];
	uint32_t bs = lu_bs(lun), opno;

	if (is_zero(p, bs))
		return 0;
	if (itest_get_be64(p) != MAGIC || itest_get_be32(p + 12) != (uint32_t)lun || itest_get_be64(p + 16) != lba ||
	    itest_get_be64(p + 24) != soak.o.seed)
		return -1;
	opno = itest_get_be32(p + 8);
	block_fill(want, bs, lun, lba, opno);
	return memcmp(want, p, bs) ? -1 : (int64_t)opno;
}

/* ---- the write log ---- */

void wlog_add(uint32_t opno, int lun, uint64_t lba, uint32_t n, int sess, bool fua)
{
	struct wrec *w;

	if (wlog_len == wlog_cap) {
		size_t cap = wlog_cap ? wlog_cap * 2 : 65536;
		struct wrec *p = realloc(wlog, cap * sizeof(*p));

		if (!p)
			return; /* diagnostics only */
		wlog = p;
		wlog_cap = cap;
	}
	w = &wlog[wlog_len++];
	w->opno = opno;
	w->lun = (uint8_t)lun;
	w->lba = lba;
	w->n = n;
	w->sess = (uint8_t)sess;
	w->fua = fua;
	w->outcome = WR_PENDING;
	w->t_ms = (uint32_t)(itest_now_ms() - soak.t0_ms);
}

/* Operation numbers only grow, so the log is sorted. */
static struct wrec *wlog_find(uint32_t opno)
{
	size_t lo = 0, hi = wlog_len;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (wlog[mid].opno == opno)
			return &wlog[mid];
		if (wlog[mid].opno < opno)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void wlog_set(uint32_t opno, enum wr_outcome outcome)
{
	struct wrec *w = wlog_find(opno);

	soak.st.writes_outcome[outcome]++;
	if (w)
		w->outcome = (uint8_t)outcome;
}

const char *wr_outcome_name(enum wr_outcome o)
{
	static const char *const names[WR_OUTCOMES] = {
		"pending", "acknowledged GOOD", "not executed", "failed", "aborted", "dropped with the connection",
		"killed with the daemon",
	};

	return o < WR_OUTCOMES ? names[o] : "?";
}

static void describe_op(uint32_t opno, char *out, size_t len)
{
	const struct wrec *w = opno ? wlog_find(opno) : NULL;

	if (!opno)
		snprintf(out, len, "zeros (never written)");
	else if (!w)
		snprintf(out, len, "op #%u (not a logged WRITE)", opno);
	else
		snprintf(out, len, "op #%u (WRITE(16)%s LUN %u LBA %llu+%u, session %u, at %.1f s, %s)", opno,
			 w->fua ? " FUA" : "", w->lun, (unsigned long long)w->lba, w->n, w->sess, w->t_ms / 1000.0,
			 wr_outcome_name((enum wr_outcome)w->outcome));
}

/* What a block holds, for a mismatch report. */
static void describe_block(const uint8_t *p, int lun, uint64_t lba, char *out, size_t len)
{
	int64_t owner = block_owner(p, lun, lba);

	if (owner >= 0) {
		describe_op((uint32_t)owner, out, len);
		return;
	}
	if (itest_get_be64(p) == MAGIC)
		snprintf(out, len, "a damaged or misplaced block of op #%u (header LUN %u LBA %llu)",
			 itest_get_be32(p + 8), itest_get_be32(p + 12), (unsigned long long)itest_get_be64(p + 16));
	else
		snprintf(out, len, "unrecognised data (%02x %02x %02x %02x %02x %02x %02x %02x ...)", p[0], p[1], p[2],
			 p[3], p[4], p[5], p[6], p[7]);
}

static void report_mismatch(int lun, uint64_t lba, const struct blk *b, const uint8_t *p, const char *when)
{
	char want[256], got[256];
	unsigned long nth = ++soak.st.mismatches;

	if (nth > MISMATCH_DETAILS) {
		if (nth == MISMATCH_DETAILS + 1)
			printf("# MISMATCH: further mismatches are counted, not shown\n");
		return;
	}
	describe_op(b->val, want, sizeof(want));
	describe_block(p, lun, lba, got, sizeof(got));
	printf("# MISMATCH %s (op #%u, %.1f s): LUN %d LBA %llu: expected %s", when, soak.opno, elapsed_s(), lun,
	       (unsigned long long)lba, want);
	for (unsigned i = 0; i < b->nalt; i++) {
		describe_op(b->alt[i], want, sizeof(want));
		printf("%s %s", i ? "," : " or (unsettled)", want);
	}
	printf("; found %s\n", got);
}

/* ---- the model ---- */

void model_ack(int lun, uint64_t lba, uint32_t n, uint32_t opno)
{
	struct blk *b = &lus[lun].blk[lba];

	for (uint32_t i = 0; i < n; i++, b++) {
		b->val = opno;
		b->nalt = 0;
		b->flags = 0;
	}
}

void model_maybe(int lun, uint64_t lba, uint32_t n, uint32_t opno)
{
	struct blk *b = &lus[lun].blk[lba];

	for (uint32_t i = 0; i < n; i++, b++) {
		if (b->flags & BLK_UNKNOWN)
			continue;
		if (b->nalt < SOAK_MAX_ALT) {
			b->alt[b->nalt++] = opno;
			continue;
		}
		b->flags |= BLK_UNKNOWN;
		soak.st.blocks_unknown++;
	}
}

/* Which candidate the block holds: 0 the acknowledged value, k alt[k - 1], -1 none. */
static int candidate(const struct blk *b, int64_t owner)
{
	if (owner < 0)
		return -1;
	if ((uint32_t)owner == b->val)
		return 0;
	for (unsigned i = 0; i < b->nalt; i++)
		if (b->alt[i] == (uint32_t)owner)
			return (int)i + 1;
	return -1;
}

/*
 * After a kill: a block with too many candidates holds whatever WRITE
 * covering it came last; accept the data of any logged WRITE of this block
 * not older than the acknowledged one (zeros only if it was never written).
 */
static bool settle_unknown(struct blk *b, int lun, uint64_t lba, int64_t owner)
{
	const struct wrec *w;

	if (owner < 0 || (uint32_t)owner < b->val || (owner == 0 && b->val != 0))
		return false;
	if (owner > 0) {
		w = wlog_find((uint32_t)owner);
		if (!w || w->lun != lun || lba < w->lba || lba >= w->lba + w->n || w->outcome == WR_NOT_EXECUTED)
			return false;
	}
	b->val = (uint32_t)owner;
	b->nalt = 0;
	b->flags = 0;
	return true;
}

static bool check_block(struct blk *b, int lun, uint64_t lba, const uint8_t *p, bool settle, const char *when)
{
	int64_t owner;
	int k;

	if (b->flags & BLK_BAD)
		return true;
	if ((b->flags & BLK_UNKNOWN) && !settle)
		return true;
	owner = block_owner(p, lun, lba);
	soak.st.blocks_verified++;
	if (b->flags & BLK_UNKNOWN) {
		if (settle_unknown(b, lun, lba, owner)) {
			soak.st.blocks_settled++;
			return true;
		}
		report_mismatch(lun, lba, b, p, when);
		b->flags |= BLK_BAD;
		return false;
	}
	k = candidate(b, owner);
	if (k < 0) {
		report_mismatch(lun, lba, b, p, when);
		b->flags |= BLK_BAD;
		return false;
	}
	if (settle && b->nalt) {
		b->val = k ? b->alt[k - 1] : b->val;
		b->nalt = 0;
		soak.st.blocks_settled++;
	}
	return true;
}

unsigned model_check(int lun, uint64_t lba, uint32_t n, const uint8_t *buf, bool settle, const char *when)
{
	uint32_t bs = lu_bs(lun);
	unsigned bad = 0;

	for (uint32_t i = 0; i < n; i++)
		bad += !check_block(&lus[lun].blk[lba + i], lun, lba + i, buf + (size_t)i * bs, settle, when);
	return bad;
}

/*
 * What a WRITE's end means for the model.  GOOD: the data is there (the
 * file backend pwrite()s it before the status, see soak.c).  UNIT
 * ATTENTION: not executed (SAM-5 5.14).  BUSY, TASK SET FULL: not entered
 * in the task set (SAM-5 5.3).  Anything else, or no status: old or new.
 */
enum wr_outcome write_settle(uint32_t opno, int lun, uint64_t lba, uint32_t n, bool answered, int status,
			     int sense_key, enum wr_outcome if_unanswered)
{
	enum wr_outcome o;

	if (!answered)
		o = if_unanswered;
	else if (status == SCSI_STATUS_GOOD)
		o = WR_ACKED;
	else if ((status == SCSI_STATUS_CHECK_CONDITION && sense_key == 6) || status == SCSI_STATUS_BUSY ||
		 status == SCSI_STATUS_TASK_SET_FULL)
		o = WR_NOT_EXECUTED;
	else if (status == SCSI_STATUS_TASK_ABORTED)
		o = WR_ABORTED;
	else
		o = WR_FAILED;
	if (o == WR_ACKED) {
		model_ack(lun, lba, n, opno);
		soak.st.writes_acked++;
	} else if (o != WR_NOT_EXECUTED) {
		model_maybe(lun, lba, n, opno);
	}
	wlog_set(opno, o);
	return o;
}
