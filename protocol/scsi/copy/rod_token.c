/*
 * Token-based copy (SBC-4, ROD tokens; the copy offload Windows calls
 * ODX) in the copy manager of an LU (conventional or zoned: copy_piece.c):
 *
 * POPULATE TOKEN (83h/10h; LIST IDENTIFIER b6-9, PARAMETER LIST LENGTH
 * b10-13): a 16-byte header (b0-1 DATA LENGTH, b2 bit 1 RTV, bit 0 IMMED,
 * b4-7 INACTIVITY TIMEOUT, b8-11 ROD TYPE, b14-15 BLOCK DEVICE RANGE
 * DESCRIPTOR LENGTH), then range descriptors of 16 bytes (b0-7 LBA, b8-11
 * NUMBER OF LOGICAL BLOCKS).  It makes a ROD token of type "point in time,
 * change vulnerable" (00800001h) that represents the blocks of the ranges
 * as they are now; RECEIVE ROD TOKEN INFORMATION (84h/07h; LIST IDENTIFIER
 * b2-5, ALLOCATION LENGTH b10-13) then returns it.
 *
 * WRITE USING TOKEN (83h/11h): a 536-byte header (b2 bit 1 DEL_TKN, bit 0
 * IMMED, b8-15 OFFSET INTO ROD in blocks, b16-527 the ROD TOKEN, b534-535
 * BLOCK DEVICE RANGE DESCRIPTOR LENGTH), then range descriptors: the
 * token's blocks from OFFSET INTO ROD on are written to the ranges, in
 * pieces on the workers as EXTENDED COPY's are (copy_blocks), abortable
 * at a piece boundary.  The block device zero ROD token (ROD TYPE
 * FFFF0001h) writes zeros (with protection information, FFh tuples).
 *
 * A token is 512 bytes (SPC-4 ROD token format): b0-3 ROD TYPE, b6-7 ROD
 * TOKEN LENGTH 01F8h, b8-15 a serial number, b16-47 the creating LU as an
 * identification CSCD descriptor (E4h: its NAA designator and block
 * length), b48-63 the bytes it represents, b96-99 the block length, and
 * 384 random bytes (getrandom(2)).  It is unforgeable because a token is
 * used only when all 512 bytes equal one the copy manager made and still
 * keeps: guessing one means guessing 3072 random bits; nothing in it
 * points at memory.  What a token can still be asked is kept per LU
 * (ROD_TOKENS_MAX, the oldest replaced), so a token that was used up says
 * why rather than "unknown" for as long as its record stays:
 *   - a write to any block it represents (any command that writes the
 *     medium and locks those blocks: sched/lba_lock.c calls
 *     rod_tokens_written) revokes it: 05/23/06 TOKEN REVOKED;
 *   - past its inactivity timeout (default 60 s, at most 600 s, counted
 *     from its creation or last use): 05/23/07 TOKEN EXPIRED;
 *   - deleted by a WRITE USING TOKEN with DEL_TKN: 05/23/09 TOKEN DELETED;
 *   - not known here (another target's, altered): 05/23/04 TOKEN UNKNOWN.
 * WRITE USING TOKEN takes the tokens of every LU of the target (its
 * device): one made on another LU is copied from that LU's medium when it
 * has the same block length (its tuples retagged as within one LU when the
 * protection formats are one, else made as a WRITE makes them, copy_blocks;
 * a zoned source's blocks are read under its zone rules, copy_piece.c);
 * else 05/23/00 INVALID TOKEN OPERATION, CAUSE NOT REPORTABLE, before any
 * block moves.  The source LU
 * cannot be removed while the copy reads it (scsi_lu.copy_readers); a write
 * to the token's blocks there revokes it as on its own LU, and the copy
 * ends at the next piece with 05/23/06.
 * Checks before any block moves, with the sense FreeBSD's CTL
 * (sys/cam/ctl/ctl_tpc.c) gives where SBC-4 leaves a choice: PARAMETER
 * LIST LENGTH shorter than the header and one descriptor, or longer than
 * ROD_MAX_RANGES descriptors: 05/24/00 on CDB b10; DATA LENGTH too short:
 * 05/26/00 on b0; BLOCK DEVICE RANGE DESCRIPTOR LENGTH not whole
 * descriptors or past the list: 05/26/00 on it; INACTIVITY TIMEOUT over
 * the maximum: 05/26/00 on b4; RTV with a ROD TYPE other than the point in
 * time ones: 05/26/00 on b8; a range past the capacity: 05/21/00;
 * overlapping ranges: 05/26/00; a list identifier of this I_T nexus whose
 * result is held: replaced (as CTL does); OFFSET INTO ROD past the token,
 * or fewer blocks left in the token than the ranges hold: 05/26/00 on b8
 * (CTL finds that only when the copy reaches it).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "copy/copy.h"
#include "sbc/sbc_pi.h"
#include "sched/task_set.h"
#include "spc/spc.h"

#define ROD_TOKENS_MAX 64 /* per LU, the oldest record replaced */
#define PT_HEADER_LEN 16
#define WUT_HEADER_LEN 536
#define RANGE_LEN 16

/* INVALID TOKEN OPERATION ASCQs (SPC-4; sg3_utils' sg_lib_data.c lists them). */
#define ASC_TOKEN_CAUSE_NOT_REPORTABLE 0x2300
#define ASC_TOKEN_UNKNOWN 0x2304
#define ASC_TOKEN_REVOKED 0x2306
#define ASC_TOKEN_EXPIRED 0x2307
#define ASC_TOKEN_DELETED 0x2309

enum rod_state { ROD_LIVE, ROD_REVOKED, ROD_DELETED };

struct rod_token {
	uint8_t bytes[ROD_TOKEN_LEN];
	enum rod_state state;
	unsigned nranges;
	struct scsi_lba_range ranges[ROD_MAX_RANGES];
	uint64_t blocks;
	uint32_t timeout_s;
	double last_use;  /* CLOCK_MONOTONIC seconds */
	uint64_t serial;  /* the oldest record is replaced */
};

struct rod_token_store {
	unsigned n;
	uint64_t next_serial;
	struct rod_token tokens[ROD_TOKENS_MAX];
};

struct rod_ranges {
	unsigned n;
	struct scsi_lba_range r[ROD_MAX_RANGES];
	uint64_t blocks;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool ranges_overlap(const struct scsi_lba_range *a, const struct scsi_lba_range *b)
{
	return a->nblocks && b->nblocks && a->lba < b->lba + b->nblocks && b->lba < a->lba + a->nblocks;
}

/*
 * Decodes the range descriptors of a parameter list p of len bytes whose
 * header is hdr bytes with the BLOCK DEVICE RANGE DESCRIPTOR LENGTH at
 * len_at, after the length checks; SCSI_OK, or the failure in cmd.
 */
static enum scsi_result decode_ranges(struct scsi_cmd *cmd, const uint8_t *p, size_t len, size_t hdr, size_t len_at,
				      struct rod_ranges *out)
{
	uint32_t dlen, rlen;

	if (len < hdr + RANGE_LEN || len > hdr + ROD_MAX_RANGES * RANGE_LEN)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(10, -1));
	dlen = get_be16(p);
	rlen = get_be16(p + len_at);
	if (dlen < hdr - 2 + RANGE_LEN)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(0, -1));
	if (rlen < RANGE_LEN || rlen % RANGE_LEN || hdr + rlen > len || hdr - 2 + rlen > dlen)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list((uint16_t)len_at, -1));
	memset(out, 0, sizeof(*out));
	for (size_t off = hdr; off < hdr + rlen; off += RANGE_LEN) {
		struct scsi_lba_range *r = &out->r[out->n++];

		r->lba = get_be64(p + off);
		r->nblocks = get_be32(p + off + 8);
		if (scsi_lu_range_bad(cmd->lu, r->lba, r->nblocks))
			return scsi_cmd_fail(cmd, sense_lba_out_of_range());
		for (unsigned i = 0; i + 1 < out->n; i++)
			if (ranges_overlap(&out->r[i], r))
				return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ILLEGAL_REQUEST,
								     ASC_INVALID_FIELD_IN_PARAMETER_LIST));
		out->blocks += r->nblocks;
	}
	return SCSI_OK;
}

/* The LBA lock of a list's ranges (those inside the LU); none when the list is too short or too long. */
static void lock_ranges(struct scsi_cmd *cmd, size_t hdr, size_t len_at, enum scsi_lba_lock_mode mode)
{
	const uint8_t *p = cmd->data_out;
	size_t len = p ? cmd->data_length : 0;
	uint32_t rlen;

	cmd->lock.mode = mode;
	if (len < hdr + RANGE_LEN || len > hdr + ROD_MAX_RANGES * RANGE_LEN)
		return;
	rlen = get_be16(p + len_at);
	for (size_t off = hdr; off + RANGE_LEN <= hdr + rlen && off + RANGE_LEN <= len; off += RANGE_LEN) {
		uint64_t lba = get_be64(p + off);
		uint32_t n = get_be32(p + off + 8);

		if (!scsi_lu_range_bad(cmd->lu, lba, n))
			scsi_lba_lock_add(cmd, lba, n);
	}
}

enum scsi_result rod_token_parse(struct scsi_cmd *cmd)
{
	cmd->data_length = get_be32(cmd->cdb + 10);
	return SCSI_OK;
}

/* POPULATE TOKEN reads its ranges beside other readers; WRITE USING TOKEN writes its own alone. */
void populate_token_lock(struct scsi_cmd *cmd)
{
	lock_ranges(cmd, PT_HEADER_LEN, 14, SCSI_LBA_LOCK_SHARED);
}

void write_using_token_lock(struct scsi_cmd *cmd)
{
	lock_ranges(cmd, WUT_HEADER_LEN, 534, SCSI_LBA_LOCK_WRITE);
}

/* ---- held results for RECEIVE ROD TOKEN INFORMATION ---- */

/* The nexus's slot for list id: the one it has, else a free one or the oldest. */
static struct scsi_rod_list *list_slot(struct scsi_cmd *cmd, uint32_t id)
{
	struct scsi_itl *itl = scsi_itl_get(cmd->nexus, cmd->lu->lun);
	struct scsi_rod_list *slot;

	if (!itl)
		return NULL;
	if (!itl->rod_lists && !(itl->rod_lists = calloc(SCSI_ROD_LISTS_HELD, sizeof(*itl->rod_lists))))
		return NULL;
	slot = &itl->rod_lists[0];
	for (unsigned i = 0; i < SCSI_ROD_LISTS_HELD; i++) {
		struct scsi_rod_list *l = &itl->rod_lists[i];

		if (l->held && l->list_id == id)
			return l;
		if (!l->held || (slot->held && l->age < slot->age))
			slot = l;
	}
	memset(slot, 0, sizeof(*slot));
	slot->age = ++itl->copy_age;
	return slot;
}

/* Loop thread, as the command ends: what RECEIVE ROD TOKEN INFORMATION will say of it. */
static void hold_result(struct scsi_cmd *cmd, uint8_t sa, uint64_t blocks, const uint8_t *token)
{
	struct scsi_rod_list *l = list_slot(cmd, get_be32(cmd->cdb + 6));

	if (!l)
		return;
	l->held = true;
	l->list_id = get_be32(cmd->cdb + 6);
	l->service_action = sa;
	l->good = cmd->status == SCSI_STATUS_GOOD;
	l->aborted = cmd->status == SCSI_STATUS_TASK_ABORTED;
	l->blocks = blocks;
	/* The sense the command ends with, encoded as the core will encode it (the LU's D_SENSE). */
	l->sense_len = cmd->status != SCSI_STATUS_CHECK_CONDITION ? 0
			       : (uint8_t)scsi_sense_encode(&cmd->sense_info, cmd->lu->mode_current.d_sense, l->sense,
							    sizeof(l->sense));
	l->has_token = token != NULL;
	if (token)
		memcpy(l->token, token, ROD_TOKEN_LEN);
}

/* ---- the token store ---- */

static struct rod_token_store *store_of(struct scsi_lu *lu)
{
	if (!lu->rod_tokens)
		lu->rod_tokens = calloc(1, sizeof(*lu->rod_tokens));
	return lu->rod_tokens;
}

void rod_tokens_free(struct scsi_lu *lu)
{
	free(lu->rod_tokens);
	lu->rod_tokens = NULL;
}

static bool expired(const struct rod_token *t, double now)
{
	return t->state == ROD_LIVE && now > t->last_use + t->timeout_s;
}

/* Writes the token's 512 bytes; false if no random bytes could be had. */
static bool make_token(struct scsi_lu *lu, struct rod_token *t, uint64_t serial)
{
	uint8_t *b = t->bytes;
	uint8_t naa[16];
	size_t n = spc_lu_naa(lu, naa);

	memset(b, 0, ROD_TOKEN_LEN);
	put_be32(b, ROD_TYPE_PIT_CHANGE_VULNERABLE);
	put_be16(b + 6, ROD_TOKEN_LEN - 8);
	put_be64(b + 8, serial);
	/* The creating LU as an identification CSCD descriptor (E4h), as EXTENDED COPY names LUs. */
	b[16] = XCOPY_CSCD_ID;
	b[20] = 0x01; /* CODE SET binary */
	b[21] = 0x03; /* association LU, designator type NAA */
	b[23] = (uint8_t)n;
	memcpy(b + 24, naa, n);
	put_be24(b + 45, lu->block_size);
	put_be64(b + 56, t->blocks * lu->block_size); /* NUMBER OF BYTES REPRESENTED (b48-63) */
	put_be32(b + 96, lu->block_size);
	return getrandom(b + 128, ROD_TOKEN_LEN - 128, 0) == ROD_TOKEN_LEN - 128;
}

static bool usable(const struct rod_token *t, double now)
{
	return t->state == ROD_LIVE && !expired(t, now);
}

/* A record for a new token: a free one, else the oldest of those used up or expired, else the oldest. */
static struct rod_token *new_record(struct rod_token_store *s, double now)
{
	struct rod_token *victim = NULL;

	if (s->n < ROD_TOKENS_MAX)
		return &s->tokens[s->n++];
	for (unsigned i = 0; i < s->n; i++) {
		struct rod_token *t = &s->tokens[i];

		if (!victim || (usable(victim, now) && !usable(t, now)) ||
		    (usable(victim, now) == usable(t, now) && t->serial < victim->serial))
			victim = t;
	}
	return victim;
}

/* The live tokens of lu (but own, when not NULL) that represent a block of the n ranges r: revoked. */
static void revoke(struct scsi_lu *lu, const struct scsi_lba_range *r, unsigned n, const uint8_t *own)
{
	struct rod_token_store *s = lu->rod_tokens;

	for (unsigned i = 0; s && i < s->n; i++) {
		struct rod_token *t = &s->tokens[i];

		if (t->state != ROD_LIVE || (own && memcmp(own, t->bytes, ROD_TOKEN_LEN) == 0))
			continue;
		for (unsigned j = 0; j < t->nranges && t->state == ROD_LIVE; j++)
			for (unsigned k = 0; k < n; k++)
				if (ranges_overlap(&t->ranges[j], &r[k]))
					t->state = ROD_REVOKED;
	}
}

void rod_tokens_written(struct scsi_lu *lu, const struct scsi_cmd *cmd, const struct scsi_lba_lock *lock)
{
	const uint8_t *own = NULL;

	/* An EXTENDED COPY locks the blocks it reads too: it revokes those it writes alone (rod_tokens_copied_to). */
	if (!lu->rod_tokens || lock->mode == SCSI_LBA_LOCK_NONE || cmd->op->exec == extended_copy_exec)
		return;
	/* A WRITE USING TOKEN does not revoke the token it reads (wut_done does, if it wrote over its blocks). */
	if (cmd->op->exec == write_using_token_exec && cmd->data_out && cmd->data_length >= WUT_HEADER_LEN)
		own = cmd->data_out + 16;
	revoke(lu, lock->ranges, lock->nranges, own);
}

void rod_tokens_copied_to(struct scsi_lu *lu, uint64_t lba, uint64_t nblocks)
{
	const struct scsi_lba_range r = { .lba = lba, .nblocks = nblocks };

	if (nblocks)
		revoke(lu, &r, 1, NULL);
}

/* ---- POPULATE TOKEN ---- */

enum scsi_result populate_token_exec(struct scsi_cmd *cmd)
{
	const uint8_t *p = cmd->data_out;
	struct rod_ranges rr;
	struct rod_token_store *s;
	struct rod_token *t;
	uint32_t timeout;
	enum scsi_result r;
	double now = now_s();

	r = decode_ranges(cmd, p, p ? cmd->data_length : 0, PT_HEADER_LEN, 14, &rr);
	if (r != SCSI_OK)
		goto out;
	timeout = get_be32(p + 4);
	if (timeout > ROD_MAX_TIMEOUT_S) {
		r = scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(4, -1));
		goto out;
	}
	if ((p[2] & 0x02) && get_be32(p + 8) != ROD_TYPE_PIT_DEFAULT && get_be32(p + 8) != ROD_TYPE_PIT_CHANGE_VULNERABLE) {
		r = scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(8, -1));
		goto out;
	}
	s = store_of(cmd->lu);
	if (!s) {
		r = scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
		goto out;
	}
	t = new_record(s, now);
	memset(t, 0, sizeof(*t));
	t->nranges = rr.n;
	memcpy(t->ranges, rr.r, sizeof(rr.r[0]) * rr.n);
	t->blocks = rr.blocks;
	t->timeout_s = timeout ? timeout : ROD_DEFAULT_TIMEOUT_S;
	t->last_use = now;
	t->serial = ++s->next_serial;
	if (!make_token(cmd->lu, t, t->serial)) {
		t->state = ROD_DELETED;
		r = scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
		goto out;
	}
	hold_result(cmd, COPY_SA_POPULATE_TOKEN, rr.blocks, t->bytes);
	return SCSI_OK;
out:
	hold_result(cmd, COPY_SA_POPULATE_TOKEN, 0, NULL);
	return r;
}

/* ---- WRITE USING TOKEN ---- */

struct wut_run {
	struct scsi_lu *src_lu; /* the LU whose store holds the token */
	bool pinned;            /* src_lu is another LU: its copy_readers counts this copy */
	struct rod_ranges dst;
	struct scsi_lba_range src[ROD_MAX_RANGES]; /* the token's ranges */
	unsigned nsrc;
	uint8_t token[ROD_TOKEN_LEN];
	bool zero;
	bool del_tkn;        /* DEL_TKN: the token is deleted at the end */
	unsigned d, s;       /* current destination and source range */
	uint64_t d_off, s_off; /* blocks done in them */
	uint64_t done;       /* destination blocks written */
	unsigned flags;      /* backend write flags */
	struct copy_piece piece; /* the piece in flight (copy_piece.c) */
};

static void wut_run_free(void *p)
{
	struct wut_run *run = p;

	if (run->pinned)
		run->src_lu->copy_readers--;
	copy_piece_free(&run->piece);
	free(run);
}

/*
 * The record of the token in lu's store, or NULL with why in *asc (TOKEN
 * UNKNOWN: lu has no such record).  While the copy that uses it runs
 * (running) it does not expire: a piece that outlasts the inactivity
 * timeout is use, not inactivity (wut_done counts the timeout again from
 * the copy's end).
 */
static struct rod_token *token_in(struct scsi_lu *lu, const uint8_t *bytes, bool running, uint16_t *asc)
{
	struct rod_token_store *s = lu->rod_tokens;

	*asc = ASC_TOKEN_UNKNOWN;
	for (unsigned i = 0; s && i < s->n; i++) {
		struct rod_token *t = &s->tokens[i];

		if (memcmp(t->bytes, bytes, ROD_TOKEN_LEN) != 0)
			continue;
		if (!running && expired(t, now_s()))
			*asc = ASC_TOKEN_EXPIRED;
		else if (t->state == ROD_REVOKED)
			*asc = ASC_TOKEN_REVOKED;
		else if (t->state == ROD_DELETED)
			*asc = ASC_TOKEN_DELETED;
		else
			return t;
		break;
	}
	return NULL;
}

/* The token in src_lu's store, or NULL with the sense of why in cmd. */
static struct rod_token *find_token(struct scsi_cmd *cmd, struct scsi_lu *src_lu, const uint8_t *bytes, bool running)
{
	uint16_t asc;
	struct rod_token *t = token_in(src_lu, bytes, running, &asc);

	if (!t)
		scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ILLEGAL_REQUEST, asc));
	return t;
}

/* The LU of the target whose store knows the token: cmd's own first; NULL: none (TOKEN UNKNOWN). */
static struct scsi_lu *token_owner(struct scsi_cmd *cmd, const uint8_t *bytes)
{
	uint16_t asc;

	if (token_in(cmd->lu, bytes, false, &asc) || asc != ASC_TOKEN_UNKNOWN)
		return cmd->lu;
	SCSI_DEVICE_FOREACH_LU(cmd->lu->dev, lu)
		if (lu != cmd->lu && (token_in(lu, bytes, false, &asc) || asc != ASC_TOKEN_UNKNOWN))
			return lu;
	return NULL;
}

/* The next piece: at most COPY_PIECE bytes, inside the current destination range and (not zeros) source range. */
static uint32_t piece_blocks(const struct scsi_cmd *cmd, const struct wut_run *run)
{
	uint64_t n = run->dst.r[run->d].nblocks - run->d_off, per = COPY_PIECE / cmd->lu->block_size;

	if (n > per)
		n = per;
	if (!run->zero && n > run->src[run->s].nblocks - run->s_off)
		n = run->src[run->s].nblocks - run->s_off;
	return (uint32_t)n;
}

/* Worker: the next piece (piece_blocks). */
static void wut_work(struct scsi_cmd *cmd)
{
	struct wut_run *run = cmd->handler_state;
	uint32_t n = run->piece.n;
	int rc = copy_blocks(cmd, &run->piece, run->flags);

	if (rc != 0)
		return;
	run->done += n;
	run->d_off += n;
	run->s_off += n;
	if (!run->zero && run->s_off == run->src[run->s].nblocks) {
		run->s++;
		run->s_off = 0;
	}
}

/* Past ranges of no block, and to the next range when one is done. */
static void wut_skip(struct wut_run *run)
{
	while (run->d < run->dst.n && run->d_off == run->dst.r[run->d].nblocks) {
		run->d++;
		run->d_off = 0;
	}
	while (!run->zero && run->s < run->nsrc && run->s_off == run->src[run->s].nblocks) {
		run->s++;
		run->s_off = 0;
	}
}

/* Loop thread, at the end: the token's last use, DEL_TKN, a write over its own source, the held result. */
static enum scsi_result wut_done(struct scsi_cmd *cmd)
{
	struct wut_run *run = cmd->handler_state;
	struct rod_token_store *s = run->zero ? NULL : run->src_lu->rod_tokens;

	for (unsigned i = 0; s && i < s->n; i++) {
		struct rod_token *t = &s->tokens[i];

		if (memcmp(t->bytes, run->token, ROD_TOKEN_LEN) != 0 || t->state != ROD_LIVE)
			continue;
		t->last_use = now_s();
		if (run->del_tkn)
			t->state = ROD_DELETED;
		/* Its own blocks written over (a copy within one LU): revoked, as any write revokes it. */
		for (unsigned j = 0; run->src_lu == cmd->lu && j < t->nranges; j++)
			for (unsigned k = 0; k < run->dst.n; k++)
				if (ranges_overlap(&t->ranges[j], &run->dst.r[k]))
					t->state = ROD_REVOKED;
	}
	hold_result(cmd, COPY_SA_WRITE_USING_TOKEN, run->done, NULL);
	return SCSI_OK;
}

/*
 * Loop thread, after each piece: the next, or the end.  The token is
 * looked at again before each: a write that revoked it while the copy ran
 * ends the copy with 05/23/06 (the blocks written so far stay written, as
 * for any command that fails partway).
 */
static enum scsi_result wut_next(struct scsi_cmd *cmd)
{
	struct wut_run *run = cmd->handler_state;

	copy_piece_end(cmd, &run->piece);
	if (cmd->copy_abort) { /* COPY OPERATION ABORT (copy_abort.c) */
		scsi_cmd_set_status(cmd, SCSI_STATUS_TASK_ABORTED);
		hold_result(cmd, COPY_SA_WRITE_USING_TOKEN, run->done, NULL);
		return SCSI_FAILED;
	}
	wut_skip(run);
	if (!run->zero && !find_token(cmd, run->src_lu, run->token, true)) {
		hold_result(cmd, COPY_SA_WRITE_USING_TOKEN, run->done, NULL);
		return SCSI_FAILED;
	}
	if (run->d == run->dst.n)
		return wut_done(cmd);
	if (copy_piece_begin(cmd, &run->piece, run->src_lu, run->zero ? COPY_ZEROS : run->src[run->s].lba + run->s_off,
			     cmd->lu, run->dst.r[run->d].lba + run->d_off, piece_blocks(cmd, run)) != SCSI_OK) {
		hold_result(cmd, COPY_SA_WRITE_USING_TOKEN, run->done, NULL);
		return SCSI_FAILED;
	}
	return scsi_cmd_run_io(cmd, wut_work, wut_next);
}

enum scsi_result write_using_token_exec(struct scsi_cmd *cmd)
{
	const uint8_t *p = cmd->data_out;
	struct wut_run *run = calloc(1, sizeof(*run));
	const struct rod_token *t;
	uint64_t offset, skip;
	enum scsi_result r;

	if (!run) {
		r = scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
		goto fail;
	}
	cmd->handler_state = run;
	cmd->handler_state_free = wut_run_free;
	r = decode_ranges(cmd, p, p ? cmd->data_length : 0, WUT_HEADER_LEN, 534, &run->dst);
	if (r != SCSI_OK)
		goto fail;
	memcpy(run->token, p + 16, ROD_TOKEN_LEN);
	run->del_tkn = p[2] & 0x02;
	run->flags = cmd->lu->mode_current.wce ? 0 : BE_WRITE_FUA;
	run->zero = get_be32(run->token) == ROD_TYPE_BLOCK_ZERO;
	run->src_lu = cmd->lu;
	if (run->zero)
		return wut_next(cmd);
	run->src_lu = token_owner(cmd, run->token);
	if (!run->src_lu)
		run->src_lu = cmd->lu; /* unknown: find_token says so */
	t = find_token(cmd, run->src_lu, run->token, false);
	if (!t) {
		r = SCSI_FAILED;
		goto fail;
	}
	if (run->src_lu->block_size != cmd->lu->block_size) { /* the ranges count blocks of both */
		r = scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ILLEGAL_REQUEST, ASC_TOKEN_CAUSE_NOT_REPORTABLE));
		goto fail;
	}
	if (run->src_lu != cmd->lu) {
		run->src_lu->copy_readers++; /* wut_run_free lets it go */
		run->pinned = true;
	}
	/* OFFSET INTO ROD (blocks): the token must hold the ranges' blocks after it. */
	offset = get_be64(p + 8);
	if (offset >= t->blocks || run->dst.blocks > t->blocks - offset) {
		r = scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(8, -1));
		goto fail;
	}
	run->nsrc = t->nranges;
	memcpy(run->src, t->ranges, sizeof(t->ranges[0]) * t->nranges);
	for (skip = offset; skip >= run->src[run->s].nblocks; run->s++)
		skip -= run->src[run->s].nblocks;
	run->s_off = skip;
	return wut_next(cmd);
fail:
	hold_result(cmd, COPY_SA_WRITE_USING_TOKEN, 0, NULL);
	return r;
}
