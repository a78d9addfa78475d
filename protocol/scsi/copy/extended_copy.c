/*
 * The copy manager of an LU (SPC-4, the third-party copy model): EXTENDED
 * COPY (LID1, and LID4: check_lid4_header), served on conventional LUs (with protection
 * information too: copy_blocks) and on zoned LUs (copy_piece.c: each piece
 * checked as a READ of its source and a WRITE of its destination), within
 * one LU and between LUs of the target.
 *
 * EXTENDED COPY (83h/00h): a 16-byte parameter list header (b0 LIST
 * IDENTIFIER, b1 bits 4:3 LIST ID USAGE, b2-3 CSCD DESCRIPTOR LIST LENGTH,
 * b8-11 SEGMENT DESCRIPTOR LIST LENGTH, b12-15 INLINE DATA LENGTH), then
 * CSCD descriptors, then segment descriptors.  Taken:
 *   - CSCD descriptor E4h (identification descriptor, 32 bytes): b1
 *     bits 4:0 PERIPHERAL DEVICE TYPE 00h, b4-27 a designation descriptor
 *     matched against the LU's NAA designator of the Device Identification
 *     VPD page (code set, association, type, length, designator; the
 *     PROTOCOL IDENTIFIER and PIV bits ignored, as libiscsi zeroes them),
 *     b29-31 DISK BLOCK LENGTH = the LU's.  LU ID TYPE (b1 bits 7:6) is
 *     ignored: SPC-4 leaves it to the copy manager.  NUL = 1 (a null
 *     device) is not offered.
 *   - segment descriptor 02h (block device to block device, 28 bytes):
 *     b1 bit 1 DC (NUMBER OF BLOCKS counts the destination's blocks, else
 *     the source's; CAT, bit 0, is not looked at: no residue is kept),
 *     b4-5 source and b6-7 destination CSCD index, b10-11 NUMBER
 *     OF BLOCKS, b12-19 source LBA, b20-27 destination LBA.
 * Checks, all before any block moves, in this order (the order libiscsi's
 * ExtendedCopy tests expect, as Linux's target_core_xcopy.c does):
 *   PARAMETER LIST LENGTH 0: nothing to do, GOOD; shorter than the header:
 *   05/1A/00; LIST ID USAGE 11b with a LIST IDENTIFIER: 05/26/00; inline
 *   data: 05/26/00 (none is taken); the descriptor lists longer than
 *   MAXIMUM DESCRIPTOR LIST LENGTH, or longer than the parameter list:
 *   05/1A/00; CSCD list not whole descriptors: 05/26/00; more CSCDs than
 *   XCOPY_MAX_CSCD: 05/26/06 TOO MANY TARGET DESCRIPTORS; a CSCD other than
 *   E4h: 05/26/07 UNSUPPORTED TARGET DESCRIPTOR TYPE CODE; more segments than
 *   XCOPY_MAX_SEGMENTS: 05/26/08; a segment other than 02h: 05/26/09
 *   UNSUPPORTED SEGMENT DESCRIPTOR TYPE CODE; a segment's DESCRIPTOR LENGTH
 *   other than 0018h or past the list: 05/26/00.  Then, as COPY ABORTED
 *   (errors found processing a segment): a CSCD index with no
 *   descriptor 0A/08/04 UNREACHABLE COPY TARGET; a CSCD that names no LU
 *   of the target, a null device or another peripheral device type or
 *   block length 0A/0D/02 COPY TARGET DEVICE NOT REACHABLE; a segment
 *   between LUs of different block lengths whose bytes are not whole
 *   blocks of both 0A/26/0A UNEXPECTED INEXACT SEGMENT (as FreeBSD's CTL,
 *   sys/cam/ctl/ctl_tpc.c); a range past its LU's capacity 0A/00/00
 *   (libiscsi takes no LOGICAL BLOCK ADDRESS OUT OF RANGE there); on
 *   another LU, the answer a command sent there would get from its gates
 *   (scsi_cmd_gates_pass_on: ALUA state, readiness, reservations, and write
 *   protection where the copy writes).
 * The copy runs on workers, segment after segment, one job per piece of at
 * most COPY_PIECE bytes through the backend (read, then write; FUA when
 * the write cache is off), holding the LBA locks of every source and
 * destination range (extended_copy_lock): a write to them waits, and
 * GOOD means every block is on the medium as a WRITE's would be.  ABORT
 * TASK, a reset or the nexus's loss ends it at the next piece: the blocks
 * of the pieces done hold the source's, the others their old data.
 *
 * A copy with LIST ID USAGE 00b or 01b whose list decoded is held as it
 * ends, whole or failed, for RECEIVE COPY RESULTS (receive_copy_results.c)
 * with the I_T_L nexus: an EXTENDED COPY(LID1)'s for COPY STATUS, FAILED
 * SEGMENT DETAILS and RECEIVE COPY STATUS(LID4), an EXTENDED COPY(LID4)'s
 * for the latter (copy_end).
 *
 * Copies between LUs: a CSCD may name any LU of the target (its device)
 * with a medium; the LU the command was sent to is the copy manager.  The
 * command's locks cover the ranges of every LU it reads and writes (locks
 * elsewhere, sched/lba_lock.c: taken all at once when all are free), the
 * zone rules of each LU hold for its side of a piece (copy_piece.c), the
 * protection information is the destination's format (copy_blocks), and
 * the other LUs cannot be removed while the copy holds their blocks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "copy/copy.h"
#include "sbc/sbc_pi.h"
#include "zbc/zbc.h"
#include "sched/task_set.h"
#include "spc/spc.h"


struct xcopy_segment {
	uint16_t src, dst; /* CSCD indexes */
	uint16_t nblocks;  /* NUMBER OF BLOCKS: of the destination's blocks with DC = 1, else of the source's */
	bool dc;
	uint64_t src_lba, dst_lba;
	uint32_t src_blocks, dst_blocks; /* what it moves, in each LU's blocks (check_segments) */
};

/*
 * The blocks of LUs src and dst that segment s moves (NUMBER OF BLOCKS of
 * the destination's blocks with DC = 1, else of the source's); false when
 * they are not whole blocks of both: an inexact segment.
 */
static bool segment_blocks(const struct xcopy_segment *s, const struct scsi_lu *src, const struct scsi_lu *dst,
			   uint32_t *src_blocks, uint32_t *dst_blocks)
{
	uint64_t bytes = (uint64_t)s->nblocks * (s->dc ? dst->block_size : src->block_size);

	*src_blocks = (uint32_t)(bytes / src->block_size);
	*dst_blocks = (uint32_t)(bytes / dst->block_size);
	return bytes % src->block_size == 0 && bytes % dst->block_size == 0;
}

struct xcopy_list {
	uint32_t list_id;
	uint8_t usage, service_action; /* LID1 00h, LID4 01h */
	unsigned ncscd, nsegments;
	const uint8_t *cscd[XCOPY_MAX_CSCD];
	struct scsi_lu *lu[XCOPY_MAX_CSCD]; /* the LU each names (check_segments); NULL: none */
	struct xcopy_segment seg[XCOPY_MAX_SEGMENTS];
};

/* The copy in progress (cmd->handler_state). */
struct xcopy_run {
	struct xcopy_list list;
	unsigned done;      /* segments processed */
	uint32_t seg_done;  /* destination blocks of segment done copied */
	uint64_t bytes;     /* bytes written */
	unsigned flags;     /* backend write flags of the piece in flight (its destination's write cache) */
	bool taken;         /* its list decoded: its results are held as it ends (copy_end) */
	struct copy_piece piece; /* the piece in flight (copy_piece.c) */
};

static void xcopy_run_free(void *p)
{
	struct xcopy_run *run = p;

	copy_piece_free(&run->piece);
	free(run);
}

/*
 * The header of an EXTENDED COPY(LID4) parameter list (SPC-4; the layout of
 * FreeBSD's struct scsi_extended_copy_lid4_data, sys/cam/scsi/scsi_all.h):
 * b0 LIST FORMAT 01h, b1 bits 4:3 LIST ID USAGE, b2-3 HEADER CSCD
 * DESCRIPTOR LIST LENGTH, b15 bit 1 G_SENSE and bit 0 IMMED, b16 HEADER
 * CSCD TYPE CODE, b20-23 LIST IDENTIFIER, b42-43 CSCD DESCRIPTOR LIST
 * LENGTH, b44-45 SEGMENT DESCRIPTOR LIST LENGTH, b46-47 INLINE DATA
 * LENGTH; the descriptors follow at byte 48.  Taken with IMMED 0 and no
 * header CSCD descriptors: the rest is LID1's copy.  What LID1 has not
 * (decode checks the rest), refused with 05/26/00 and the field pointer on
 * the byte: another LIST FORMAT (b0), header CSCD descriptors (b2), IMMED
 * = 1 (b15 bit 0: the copy would go on after status, which this copy
 * manager does not do).  G_SENSE asks for the sense data of a copy that
 * ends GOOD; such a copy has none here.
 */
static enum scsi_result check_lid4_header(struct scsi_cmd *cmd, const uint8_t *p)
{
#define FAIL(s) return cmd ? scsi_cmd_fail(cmd, (s)) : SCSI_FAILED
	if (p[0] != XCOPY_LID4_LIST_FORMAT)
		FAIL(sense_invalid_field_in_parameter_list(0, -1));
	if (get_be16(p + 2) != 0)
		FAIL(sense_invalid_field_in_parameter_list(2, -1));
	if (p[15] & 0x01)
		FAIL(sense_invalid_field_in_parameter_list(15, 0));
	return SCSI_OK;
}

/*
 * Decodes and checks the parameter list of an EXTENDED COPY (LID1, or
 * LID4 when service_action says so; the checks before any block moves, in
 * the order above, with the field pointers where the format keeps each
 * field).  Returns SCSI_OK with l filled, or the failure stored in cmd.
 * Also used by the lock function, with cmd NULL: then nothing is stored.
 */
static enum scsi_result decode(struct scsi_cmd *cmd, uint8_t service_action, const uint8_t *p, size_t len,
			       struct xcopy_list *l)
{
	const bool lid4 = service_action == COPY_SA_EXTENDED_COPY_LID4;
	const uint32_t hlen = lid4 ? XCOPY_LID4_HEADER_LEN : XCOPY_HEADER_LEN;
	/* LIST IDENTIFIER, CSCD DESCRIPTOR LIST LENGTH and INLINE DATA LENGTH: their bytes in each header. */
	const uint16_t list_id_at = lid4 ? 20 : 0, cscd_len_at = lid4 ? 42 : 2, inline_len_at = lid4 ? 46 : 12;
	uint32_t cscd_len, seg_len, inline_len, off;

	memset(l, 0, sizeof(*l));
	if (len < hlen || !p)
		FAIL(sense_parameter_list_length_error());
	if (lid4 && check_lid4_header(cmd, p) != SCSI_OK)
		return SCSI_FAILED;
	l->service_action = service_action;
	l->usage = (p[1] >> 3) & 0x3;
	l->list_id = lid4 ? get_be32(p + list_id_at) : p[list_id_at];
	cscd_len = get_be16(p + cscd_len_at);
	seg_len = lid4 ? get_be16(p + 44) : get_be32(p + 8);
	inline_len = lid4 ? get_be16(p + inline_len_at) : get_be32(p + inline_len_at);
	if (l->usage == XCOPY_LIST_ID_USAGE_NONE && l->list_id != 0)
		FAIL(sense_invalid_field_in_parameter_list(list_id_at, -1));
	if (inline_len != 0)
		FAIL(sense_invalid_field_in_parameter_list(inline_len_at, -1));
	if ((uint64_t)cscd_len + seg_len > XCOPY_MAX_LIST_LENGTH || len < (uint64_t)hlen + cscd_len + seg_len)
		FAIL(sense_parameter_list_length_error());
	if (cscd_len % XCOPY_CSCD_LEN)
		FAIL(sense_invalid_field_in_parameter_list(cscd_len_at, -1));
	if (cscd_len / XCOPY_CSCD_LEN > XCOPY_MAX_CSCD)
		FAIL(sense_make(SENSE_KEY_ILLEGAL_REQUEST, ASC_TOO_MANY_TARGET_DESCRIPTORS));
	off = hlen;
	for (; off < hlen + cscd_len; off += XCOPY_CSCD_LEN) {
		if (p[off] != XCOPY_CSCD_ID)
			FAIL(sense_in_parameter_list(ASC_UNSUPPORTED_TARGET_DESCRIPTOR_TYPE_CODE, (uint16_t)off));
		l->cscd[l->ncscd++] = p + off;
	}
	while (off < hlen + cscd_len + seg_len) {
		const uint8_t *d = p + off;
		struct xcopy_segment *s = &l->seg[l->nsegments];

		if (l->nsegments == XCOPY_MAX_SEGMENTS)
			FAIL(sense_make(SENSE_KEY_ILLEGAL_REQUEST, ASC_TOO_MANY_SEGMENT_DESCRIPTORS));
		if (d[0] != XCOPY_SEG_B2B)
			FAIL(sense_in_parameter_list(ASC_UNSUPPORTED_SEGMENT_DESCRIPTOR_TYPE_CODE, (uint16_t)off));
		if (off + 4 > hlen + cscd_len + seg_len || get_be16(d + 2) != XCOPY_B2B_LEN - 4 ||
		    off + XCOPY_B2B_LEN > hlen + cscd_len + seg_len)
			FAIL(sense_invalid_field_in_parameter_list((uint16_t)(off + 2), -1));
		*s = (struct xcopy_segment){ .src = get_be16(d + 4), .dst = get_be16(d + 6), .nblocks = get_be16(d + 10),
					     .dc = d[1] & 0x02,
					     .src_lba = get_be64(d + 12), .dst_lba = get_be64(d + 20) };
		l->nsegments++;
		off += XCOPY_B2B_LEN;
	}
#undef FAIL
	return SCSI_OK;
}

/*
 * Whether the E4h descriptor d names lu, whose NAA designator (Device
 * Identification VPD page) is the n bytes of naa: that designator, lu's block length.
 */
static bool cscd_names(const uint8_t *d, const struct scsi_lu *lu, const uint8_t *naa, size_t n)
{
	/* b1: NUL (bit 5) and PERIPHERAL DEVICE TYPE (bits 4:0) 00h; LU ID TYPE (bits 7:6) ignored. */
	if (d[1] & 0x3f)
		return false;
	/* b4: CODE SET binary (PROTOCOL IDENTIFIER ignored); b5: association LU, type NAA (PIV ignored). */
	if ((d[4] & 0x0f) != 0x01 || (d[5] & 0x3f) != 0x03 || d[7] != n || memcmp(d + 8, naa, n) != 0)
		return false;
	return get_be24(d + 29) == lu->block_size;
}

/*
 * The LU of cmd's target (its device) that the E4h descriptor d names:
 * cmd's own first, else another with a copy manager (a medium); NULL: none.
 */
static struct scsi_lu *cscd_lu(const struct scsi_cmd *cmd, const uint8_t *d)
{
	uint8_t naa[16];
	size_t n = spc_lu_naa(cmd->lu, naa);

	if (cscd_names(d, cmd->lu, naa, n))
		return cmd->lu;
	SCSI_DEVICE_FOREACH_LU(cmd->lu->dev, lu) {
		if (lu == cmd->lu || !copy_manager_enabled(lu))
			continue;
		n = spc_lu_naa(lu, naa);
		if (cscd_names(d, lu, naa, n))
			return lu;
	}
	return NULL;
}

/* Whether cmd holds (took at its start) a lock on lu, another LU than its own. */
static bool locked_elsewhere(const struct scsi_cmd *cmd, const struct scsi_lu *lu)
{
	const struct scsi_lba_locks_elsewhere *e = cmd->locks_elsewhere;

	for (unsigned i = 0; e && i < e->n; i++)
		if (e->lu[i] == lu && e->lock[i].held)
			return true;
	return false;
}

/*
 * The other LUs the segments read or write (writes: some segment writes
 * it): each must pass the gates the command would meet there, and hold its
 * lock there (none when its plan found no room: ABORTED COMMAND,
 * INSUFFICIENT RESOURCES).
 */
static enum scsi_result check_other_lu(struct scsi_cmd *cmd, const struct xcopy_list *l, struct scsi_lu *lu)
{
	bool used = false, writes = false;

	for (unsigned i = 0; i < l->nsegments; i++) {
		used |= l->lu[l->seg[i].src] == lu || l->lu[l->seg[i].dst] == lu;
		writes |= l->lu[l->seg[i].dst] == lu;
	}
	if (!used || lu == cmd->lu)
		return SCSI_OK;
	if (!locked_elsewhere(cmd, lu))
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	return scsi_cmd_gates_pass_on(cmd, lu, writes) ? SCSI_OK : SCSI_FAILED;
}

/* The checks of each segment against the CSCDs and their LUs, as COPY ABORTED (above); l->lu filled. */
static enum scsi_result check_segments(struct scsi_cmd *cmd, struct xcopy_list *l)
{
	for (unsigned i = 0; i < l->ncscd; i++)
		l->lu[i] = cscd_lu(cmd, l->cscd[i]);
	for (unsigned i = 0; i < l->nsegments; i++) {
		struct xcopy_segment *s = &l->seg[i];
		struct scsi_lu *src, *dst;

		if (s->src >= l->ncscd || s->dst >= l->ncscd)
			return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_COPY_ABORTED, ASC_UNREACHABLE_COPY_TARGET));
		src = l->lu[s->src];
		dst = l->lu[s->dst];
		if (!src || !dst)
			return scsi_cmd_fail(cmd,
					     sense_make(SENSE_KEY_COPY_ABORTED, ASC_COPY_TARGET_DEVICE_NOT_REACHABLE));
		/* LUs of different block lengths: the bytes must be whole blocks of both (no residue is kept). */
		if (!segment_blocks(s, src, dst, &s->src_blocks, &s->dst_blocks))
			return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_COPY_ABORTED, ASC_UNEXPECTED_INEXACT_SEGMENT));
		if (scsi_lu_range_bad(src, s->src_lba, s->src_blocks) || scsi_lu_range_bad(dst, s->dst_lba, s->dst_blocks))
			return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_COPY_ABORTED, 0x0000));
	}
	for (unsigned i = 0; i < l->ncscd; i++)
		if (check_other_lu(cmd, l, l->lu[i]) != SCSI_OK)
			return SCSI_FAILED;
	return SCSI_OK;
}

enum scsi_result extended_copy_parse(struct scsi_cmd *cmd)
{
	cmd->data_length = get_be32(cmd->cdb + 10);
	return SCSI_OK;
}

/* A range of lu (NULL: none named) to lock, on cmd's LU or elsewhere; none past lu's capacity. */
static void lock_range(struct scsi_cmd *cmd, struct scsi_lu *lu, uint64_t lba, uint32_t nblocks)
{
	if (lu && !scsi_lu_range_bad(lu, lba, nblocks))
		scsi_lba_lock_add_elsewhere(cmd, lu, lba, nblocks);
}

/*
 * The LBA locks: every source and destination range of a list that
 * decodes, alone (read and written), on the LU its CSCD names: cmd's own,
 * or another LU of the target (a lock elsewhere, lba_lock.c).
 */
void extended_copy_lock(struct scsi_cmd *cmd)
{
	struct xcopy_list l;
	struct scsi_lu *lu[XCOPY_MAX_CSCD];

	cmd->lock.mode = SCSI_LBA_LOCK_EXCLUSIVE;
	if (decode(NULL, cmd->cdb[1] & 0x1f, cmd->data_out, cmd->data_out ? cmd->data_length : 0, &l) != SCSI_OK)
		return;
	for (unsigned i = 0; i < l.ncscd; i++)
		lu[i] = cscd_lu(cmd, l.cscd[i]);
	for (unsigned i = 0; i < l.nsegments; i++) {
		const struct xcopy_segment *s = &l.seg[i];
		struct scsi_lu *src = s->src < l.ncscd ? lu[s->src] : NULL, *dst = s->dst < l.ncscd ? lu[s->dst] : NULL;
		uint32_t src_blocks = s->nblocks, dst_blocks = s->nblocks;

		/* Each LU's blocks; a segment the checks will refuse locks NUMBER OF BLOCKS of what it names. */
		if (src && dst)
			segment_blocks(s, src, dst, &src_blocks, &dst_blocks);
		lock_range(cmd, src, s->src_lba, src_blocks);
		lock_range(cmd, dst, s->dst_lba, dst_blocks);
	}
}

/*
 * The tuples of blocks read at src_lba for dst_lba: guard and application
 * tag kept, the reference tags of types 1 and 2 made dst_lba's (the low 32
 * bits of the LBA, + j for interval j; sbc_pi.h), type 3's kept; escape
 * tuples (never written, unmapped) stay escapes.
 */
static void retag(const struct scsi_lu *lu, uint8_t *tuples, uint64_t dst_lba, uint32_t nblocks)
{
	unsigned per = sbc_pi_intervals(lu);

	if (lu->protection_type == 3)
		return;
	for (uint32_t b = 0; b < nblocks; b++)
		for (unsigned j = 0; j < per; j++) {
			uint8_t *t = tuples + ((uint64_t)b * per + j) * PI_TUPLE_LEN;
			struct pi_tuple v = pi_tuple_decode(t);

			if (pi_tuple_is_escape(lu->protection_type, v))
				continue;
			v.ref_tag = (uint32_t)(dst_lba + b) + j;
			pi_tuple_encode(t, v);
		}
}

/* Worker, a zoned LU: the write pointers the piece at dst moved, recorded (durable with FUA) as a WRITE's are. */
static int persist_zones(struct scsi_cmd *cmd, struct scsi_lu *lu, uint64_t dst, uint32_t n, unsigned flags)
{
	int rc = lu->zbc ? zbc_persist_range(lu, dst, n, flags) : 0;

	if (rc < 0)
		scsi_cmd_fail_errno(cmd, rc, true);
	return rc;
}

/* Whether lu's tuples and src's are of one format (the same block length, type and intervals per block). */
static bool same_pi_format(const struct scsi_lu *src, const struct scsi_lu *lu)
{
	return src->block_size == lu->block_size && src->protection_type == lu->protection_type &&
	       sbc_pi_intervals(src) == sbc_pi_intervals(lu);
}

/*
 * Worker: the n blocks of piece p (at most COPY_PIECE bytes) read at src of
 * its source LU and written at dst of its destination LU, or, with src
 * COPY_ZEROS, zeros written at dst with FFh protection information (SBC-4,
 * the block device zero ROD token).  A source with protection information
 * is read and checked as READ with RDPROTECT 000b reads it (a failed check:
 * COPY ABORTED with its ASC, 10/01 10/02 10/03, INFORMATION the LBA).  A
 * destination with protection information gets the source's tuples,
 * retagged for it, when both LUs have one format; else the tuples a WRITE
 * with WRPROTECT 000b makes (sbc_pi_copy_generate); one without gets the
 * data alone.  0, or nonzero with the failure in cmd.
 */
int copy_blocks(struct scsi_cmd *cmd, const struct copy_piece *p, unsigned flags)
{
	struct scsi_lu *lu = p->dst_lu, *src_lu = p->src_lu;
	struct backend *be = lu->backend;
	const bool zeros = p->src == COPY_ZEROS, read_pi = !zeros && sbc_lu_has_pi(src_lu);
	const bool keep_tuples = read_pi && sbc_lu_has_pi(lu) && same_pi_format(src_lu, lu);
	uint8_t *buf, *in = NULL, *out = NULL;
	struct sbc_pi_checks checks;
	struct scsi_sense_info s;
	int rc;

	/*
	 * Within one LU, without protection information (nothing to check or
	 * retag) and unwritten blocks (zeroed after the read) the backend copies
	 * by itself where it can (be_file: copy_file_range, no byte through this
	 * process); else, or when it cannot, the blocks are read and written here.
	 */
	if (!zeros && src_lu == lu && !sbc_lu_has_pi(lu) && !p->unwritten && be->ops->copy_range) {
		rc = be->ops->copy_range(be, scsi_lu_offset(lu, p->src), scsi_lu_offset(lu, p->dst),
					 (uint64_t)p->n * lu->block_size, flags);
		if (rc != -EOPNOTSUPP && rc != -EINVAL) {
			if (rc < 0)
				scsi_cmd_fail_errno(cmd, rc, true);
			return rc < 0 ? rc : persist_zones(cmd, lu, p->dst, p->n, flags);
		}
	}
	buf = calloc(p->n, lu->block_size);
	if (read_pi)
		in = malloc(sbc_pi_bytes(src_lu, p->src_n));
	if (sbc_lu_has_pi(lu))
		out = keep_tuples ? in : malloc(sbc_pi_bytes(lu, p->n));
	rc = buf && (in || !read_pi) && (out || !sbc_lu_has_pi(lu)) ? 0 : -ENOMEM;
	/* Without PI (no tuples) the helpers read and write the data alone. */
	sbc_pi_copy_checks(src_lu, &checks);
	if (rc == 0 && zeros && out)
		memset(out, 0xff, sbc_pi_bytes(lu, p->n));
	else if (rc == 0 && !zeros)
		rc = sbc_medium_read_checked(src_lu, &checks, p->src, p->src_n, 0, buf, in, &s, 0);
	if (rc == 0 && p->unwritten)
		zbc_unwritten_zero(p->unwritten, src_lu->block_size, p->src, buf, (size_t)p->n * lu->block_size);
	if (rc == 1) {
		s.key = SENSE_KEY_COPY_ABORTED;
		scsi_cmd_fail(cmd, s);
	} else if (rc == 0) {
		if (keep_tuples)
			retag(lu, out, p->dst, p->n);
		else if (out && !zeros)
			sbc_pi_copy_generate(lu, buf, p->dst, p->n, out);
		rc = sbc_medium_write_pi(lu, buf, out, p->dst, p->n, flags);
	}
	free(buf);
	if (out != in)
		free(out);
	free(in);
	if (rc < 0)
		scsi_cmd_fail_errno(cmd, rc, true);
	return rc ? rc : persist_zones(cmd, lu, p->dst, p->n, flags);
}

/* The blocks of the next piece of the current segment (at most COPY_PIECE bytes of its LUs' blocks). */
static uint32_t piece_blocks(const struct xcopy_run *run)
{
	const struct xcopy_segment *seg = &run->list.seg[run->done];
	uint32_t per_piece = COPY_PIECE / run->list.lu[seg->dst]->block_size, left = seg->dst_blocks - run->seg_done;

	return left < per_piece ? left : per_piece;
}

/*
 * Worker: the next piece, at most COPY_PIECE bytes of the current segment
 * (copy_next runs one piece per job, so a copy never holds a worker long
 * and an abort takes effect at the next piece).
 */
static void copy_work(struct scsi_cmd *cmd)
{
	struct xcopy_run *run = cmd->handler_state;
	const struct xcopy_segment *seg = &run->list.seg[run->done];
	uint32_t n = run->piece.n;

	if (copy_blocks(cmd, &run->piece, run->flags) != 0)
		return;
	run->bytes += (uint64_t)n * run->piece.dst_lu->block_size;
	run->seg_done += n;
	if (run->seg_done == seg->dst_blocks) {
		run->done++;
		run->seg_done = 0;
	}
}

/* Segments with no block are done at once (NUMBER OF BLOCKS 0: nothing to copy). */
static void skip_empty(struct xcopy_run *run)
{
	while (run->done < run->list.nsegments && run->list.seg[run->done].dst_blocks == 0)
		run->done++;
}

/*
 * Loop thread, as the command ends (cmd->handler_end), whatever its status
 * once its list was taken (it decoded): held for RECEIVE COPY RESULTS with
 * the I_T_L nexus when its LIST ID USAGE asks (00b, 01b), four lists at
 * most, the oldest replaced: COPY STATUS, RECEIVE COPY STATUS(LID4), and
 * for a copy that failed its sense data, for FAILED SEGMENT DETAILS
 * (receive_copy_results.c).
 */
static void copy_end(struct scsi_cmd *cmd)
{
	struct xcopy_run *run = cmd->handler_state;
	struct scsi_itl *itl;
	struct scsi_copy_status *slot;

	if (!run || !run->taken || run->list.usage > 0x1 || !(itl = scsi_itl_get(cmd->nexus, cmd->lu->lun)))
		return;
	/* Made at the first held list: every I_T_L nexus has the state, few hold a copy's results. */
	if (!itl->copies && !(itl->copies = calloc(SCSI_COPY_STATUS_HELD, sizeof(*itl->copies))))
		return;
	slot = &itl->copies[0];
	for (unsigned i = 0; i < SCSI_COPY_STATUS_HELD; i++) {
		struct scsi_copy_status *h = &itl->copies[i];

		if (h->held && h->list_id == run->list.list_id) {
			slot = h;
			break;
		}
		if (!h->held || h->age < slot->age)
			slot = h;
	}
	*slot = (struct scsi_copy_status){ .held = true, .service_action = run->list.service_action,
					   .list_id = run->list.list_id, .age = ++itl->copy_age,
					   .segments = (uint16_t)run->done, .bytes = run->bytes, .status = cmd->status };
	/* The sense as the core will encode it (the LU's D_SENSE). */
	if (cmd->status == SCSI_STATUS_CHECK_CONDITION)
		slot->sense_len = (uint8_t)scsi_sense_encode(&cmd->sense_info, cmd->lu->mode_current.d_sense, slot->sense,
							    sizeof(slot->sense));
}

/*
 * Loop thread, after each piece (the core calls it only while the command
 * is GOOD and not aborted): the next piece, or the end.
 */
static enum scsi_result copy_next(struct scsi_cmd *cmd)
{
	struct xcopy_run *run = cmd->handler_state;
	const struct xcopy_segment *seg;
	struct scsi_lu *src_lu, *dst_lu;
	uint64_t src;

	copy_piece_end(cmd, &run->piece);
	if (cmd->copy_abort) { /* COPY OPERATION ABORT (copy_abort.c): held as ended with errors */
		scsi_cmd_set_status(cmd, SCSI_STATUS_TASK_ABORTED);
		return SCSI_FAILED;
	}
	skip_empty(run);
	if (run->done == run->list.nsegments)
		return SCSI_OK;
	seg = &run->list.seg[run->done];
	src_lu = run->list.lu[seg->src];
	dst_lu = run->list.lu[seg->dst];
	/* The source position in its own blocks: the blocks done are whole blocks of both LUs. */
	src = seg->src_lba + (uint64_t)run->seg_done * dst_lu->block_size / src_lu->block_size;
	if (copy_piece_begin(cmd, &run->piece, src_lu, src, dst_lu, seg->dst_lba + run->seg_done, piece_blocks(run)) !=
	    SCSI_OK)
		return SCSI_FAILED;
	run->flags = dst_lu->mode_current.wce ? 0 : BE_WRITE_FUA;
	return scsi_cmd_run_io(cmd, copy_work, copy_next);
}

enum scsi_result extended_copy_exec(struct scsi_cmd *cmd)
{
	struct xcopy_run *run;
	enum scsi_result r;

	if (cmd->data_length == 0)
		return SCSI_OK;
	run = calloc(1, sizeof(*run));
	if (!run)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	cmd->handler_state = run;
	cmd->handler_state_free = xcopy_run_free;
	r = decode(cmd, cmd->cdb[1] & 0x1f, cmd->data_out, cmd->data_length, &run->list);
	/* From here on its results are kept as it ends (copy_end), failed or not. */
	run->taken = r == SCSI_OK;
	cmd->handler_end = copy_end;
	if (r == SCSI_OK)
		r = check_segments(cmd, &run->list);
	if (r != SCSI_OK)
		return r;
	/* The blocks it will write change: the ROD tokens that represent them are revoked (those it reads stay). */
	for (unsigned i = 0; i < run->list.nsegments; i++)
		rod_tokens_copied_to(run->list.lu[run->list.seg[i].dst], run->list.seg[i].dst_lba,
				     run->list.seg[i].dst_blocks);
	return copy_next(cmd);
}

bool copy_manager_enabled(const struct scsi_lu *lu)
{
	static const uint8_t extended_copy[16] = { 0x83, 0x00 };
	struct scsi_sense_info s;

	return lu && scsi_op_lookup(lu, extended_copy, &s) != NULL;
}

