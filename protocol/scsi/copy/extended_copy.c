/*
 * The copy manager of an LU (SPC-4, the third-party copy model): EXTENDED
 * COPY (LID1, and LID4: check_lid4_header), served on conventional LUs (with protection
 * information too: copy_work) and on zoned LUs (copy_piece.c: each piece
 * checked as a READ of its source and a WRITE of its destination).
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
 *   descriptor 0A/08/04 UNREACHABLE COPY TARGET; a CSCD that names no LU,
 *   another LU than this one (copies between LUs: not yet), a null device or
 *   another peripheral device type or block length 0A/0D/02 COPY TARGET
 *   DEVICE NOT REACHABLE; a range past the capacity 0A/00/00 (libiscsi
 *   takes no LOGICAL BLOCK ADDRESS OUT OF RANGE there).
 * The copy runs on workers, segment after segment, one job per piece of at
 * most COPY_PIECE bytes through the backend (read, then write; FUA when
 * the write cache is off), holding the LBA locks of every source and
 * destination range (extended_copy_lock): a write to them waits, and
 * GOOD means every block is on the medium as a WRITE's would be.  ABORT
 * TASK, a reset or the nexus's loss ends it at the next piece: the blocks
 * of the pieces done hold the source's, the others their old data.
 *
 * A copy that completes whole with LIST ID USAGE 00b or 01b is held for
 * RECEIVE COPY RESULTS (receive_copy_results.c) with the I_T_L nexus: an
 * EXTENDED COPY(LID1)'s for COPY STATUS and RECEIVE COPY STATUS(LID4), an
 * EXTENDED COPY(LID4)'s for the latter.
 *
 * Not yet: copies between LUs.
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
	uint16_t nblocks;
	uint64_t src_lba, dst_lba;
};

struct xcopy_list {
	uint32_t list_id;
	uint8_t usage, service_action; /* LID1 00h, LID4 01h */
	unsigned ncscd, nsegments;
	const uint8_t *cscd[XCOPY_MAX_CSCD];
	struct xcopy_segment seg[XCOPY_MAX_SEGMENTS];
};

/* The copy in progress (cmd->handler_state). */
struct xcopy_run {
	struct xcopy_list list;
	unsigned done;      /* segments processed */
	uint32_t seg_done;  /* blocks of segment done copied */
	uint64_t bytes;     /* bytes written */
	unsigned flags;     /* backend write flags */
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

/* The checks of each segment against the CSCDs and the LU, as COPY ABORTED (above). */
static enum scsi_result check_segments(struct scsi_cmd *cmd, const struct xcopy_list *l)
{
	struct scsi_lu *lu = cmd->lu;
	uint8_t naa[16];
	size_t n = spc_lu_naa(lu, naa);

	for (unsigned i = 0; i < l->nsegments; i++) {
		const struct xcopy_segment *s = &l->seg[i];

		if (s->src >= l->ncscd || s->dst >= l->ncscd)
			return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_COPY_ABORTED, ASC_UNREACHABLE_COPY_TARGET));
		if (!cscd_names(l->cscd[s->src], lu, naa, n) || !cscd_names(l->cscd[s->dst], lu, naa, n))
			return scsi_cmd_fail(cmd,
					     sense_make(SENSE_KEY_COPY_ABORTED, ASC_COPY_TARGET_DEVICE_NOT_REACHABLE));
		if (scsi_lu_range_bad(lu, s->src_lba, s->nblocks) || scsi_lu_range_bad(lu, s->dst_lba, s->nblocks))
			return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_COPY_ABORTED, 0x0000));
	}
	return SCSI_OK;
}

enum scsi_result extended_copy_parse(struct scsi_cmd *cmd)
{
	cmd->data_length = get_be32(cmd->cdb + 10);
	return SCSI_OK;
}

/* The LBA locks: every source and destination range of a list that decodes, alone (read and written). */
void extended_copy_lock(struct scsi_cmd *cmd)
{
	struct xcopy_list l;

	cmd->lock.mode = SCSI_LBA_LOCK_EXCLUSIVE;
	if (decode(NULL, cmd->cdb[1] & 0x1f, cmd->data_out, cmd->data_out ? cmd->data_length : 0, &l) != SCSI_OK)
		return;
	for (unsigned i = 0; i < l.nsegments; i++) {
		if (!scsi_lu_range_bad(cmd->lu, l.seg[i].src_lba, l.seg[i].nblocks))
			scsi_lba_lock_add(cmd, l.seg[i].src_lba, l.seg[i].nblocks);
		if (!scsi_lu_range_bad(cmd->lu, l.seg[i].dst_lba, l.seg[i].nblocks))
			scsi_lba_lock_add(cmd, l.seg[i].dst_lba, l.seg[i].nblocks);
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
static int persist_zones(struct scsi_cmd *cmd, uint64_t dst, uint32_t n, unsigned flags)
{
	int rc = cmd->lu->zbc ? zbc_persist_range(cmd->lu, dst, n, flags) : 0;

	if (rc < 0)
		scsi_cmd_fail_errno(cmd, rc, true);
	return rc;
}

/*
 * Worker: n blocks (at most COPY_PIECE bytes) read at src and written at
 * dst, or, with src COPY_ZEROS, zeros written at dst with FFh protection
 * information (SBC-4, the block device zero ROD token).  On an LU with
 * protection information the blocks are read and checked as READ with
 * RDPROTECT 000b reads them (a failed check: COPY ABORTED with its ASC,
 * 10/01 10/02 10/03, INFORMATION the LBA) and written with their tuples,
 * retagged for the destination.  0, or nonzero with the failure in cmd.
 */
int copy_blocks(struct scsi_cmd *cmd, struct scsi_lu *src_lu, uint64_t src, uint64_t dst, uint32_t n, unsigned flags,
		const struct zbc_unwritten *unwritten)
{
	struct scsi_lu *lu = cmd->lu;
	struct backend *be = lu->backend;
	uint8_t *buf;
	uint8_t *tuples;
	struct sbc_pi_checks checks;
	struct scsi_sense_info s;
	int rc;

	/*
	 * Without protection information (nothing to check or retag) and
	 * unwritten blocks (zeroed after the read) the backend copies by itself
	 * where it can (be_file: copy_file_range, no byte through this
	 * process); else, or when it cannot, the blocks are read and written here.
	 */
	if (src != COPY_ZEROS && src_lu == lu && !sbc_lu_has_pi(lu) && !unwritten && be->ops->copy_range) {
		rc = be->ops->copy_range(be, scsi_lu_offset(lu, src), scsi_lu_offset(lu, dst),
					 (uint64_t)n * lu->block_size, flags);
		if (rc != -EOPNOTSUPP && rc != -EINVAL) {
			if (rc < 0)
				scsi_cmd_fail_errno(cmd, rc, true);
			return rc < 0 ? rc : persist_zones(cmd, dst, n, flags);
		}
	}
	buf = calloc(n, lu->block_size);
	tuples = sbc_lu_has_pi(lu) ? malloc(sbc_pi_bytes(lu, n)) : NULL;
	rc = buf && (tuples || !sbc_lu_has_pi(lu)) ? 0 : -ENOMEM;
	/* Without PI (tuples NULL) the helpers read and write the data alone. */
	sbc_pi_checks_init(cmd, 0, &checks);
	if (rc == 0 && src == COPY_ZEROS && tuples)
		memset(tuples, 0xff, sbc_pi_bytes(lu, n));
	else if (rc == 0 && src != COPY_ZEROS)
		rc = sbc_medium_read_checked(src_lu, &checks, src, n, 0, buf, tuples, &s, 0);
	if (rc == 0 && unwritten)
		zbc_unwritten_zero(unwritten, lu->block_size, src, buf, (size_t)n * lu->block_size);
	if (rc == 1) {
		s.key = SENSE_KEY_COPY_ABORTED;
		scsi_cmd_fail(cmd, s);
	} else if (rc == 0) {
		if (tuples && src != COPY_ZEROS)
			retag(lu, tuples, dst, n);
		rc = sbc_medium_write_pi(lu, buf, tuples, dst, n, flags);
	}
	free(buf);
	free(tuples);
	if (rc < 0)
		scsi_cmd_fail_errno(cmd, rc, true);
	return rc ? rc : persist_zones(cmd, dst, n, flags);
}

/* The blocks of the next piece of the current segment (at most COPY_PIECE bytes). */
static uint32_t piece_blocks(const struct scsi_cmd *cmd, const struct xcopy_run *run)
{
	uint32_t per_piece = COPY_PIECE / cmd->lu->block_size, left = run->list.seg[run->done].nblocks - run->seg_done;

	return left < per_piece ? left : per_piece;
}

/*
 * Worker: the next piece of the copy, at most COPY_PIECE bytes of the
 * current segment (copy_next runs one piece per job, so a copy never holds
 * a worker long and an abort takes effect at the next piece).
 */
static void copy_work(struct scsi_cmd *cmd)
{
	struct xcopy_run *run = cmd->handler_state;
	const struct xcopy_segment *seg = &run->list.seg[run->done];
	uint32_t n = piece_blocks(cmd, run);

	if (copy_blocks(cmd, cmd->lu, seg->src_lba + run->seg_done, seg->dst_lba + run->seg_done, n, run->flags,
			run->piece.unwritten) != 0)
		return;
	run->bytes += (uint64_t)n * cmd->lu->block_size;
	run->seg_done += n;
	if (run->seg_done == seg->nblocks) {
		run->done++;
		run->seg_done = 0;
	}
}

/* Segments with no block are done at once (NUMBER OF BLOCKS 0: nothing to copy). */
static void skip_empty(struct xcopy_run *run)
{
	while (run->done < run->list.nsegments && run->list.seg[run->done].nblocks == 0)
		run->done++;
}

/* Loop thread: a copy that completed whole is held for COPY STATUS when its LIST ID USAGE asks (00b, 01b). */
static enum scsi_result copy_done(struct scsi_cmd *cmd)
{
	struct xcopy_run *run = cmd->handler_state;
	struct scsi_itl *itl;
	struct scsi_copy_status *slot;

	if (cmd->status != SCSI_STATUS_GOOD || run->list.usage > 0x1)
		return SCSI_OK;
	itl = scsi_itl_get(cmd->nexus, cmd->lu->lun);
	if (!itl)
		return SCSI_OK;
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
					   .segments = (uint16_t)run->done, .bytes = run->bytes };
	return SCSI_OK;
}

/*
 * Loop thread, after each piece (the core calls it only while the command
 * is GOOD and not aborted): the next piece, or the end.
 */
static enum scsi_result copy_next(struct scsi_cmd *cmd)
{
	struct xcopy_run *run = cmd->handler_state;
	const struct xcopy_segment *seg;

	copy_piece_end(cmd, &run->piece);
	if (cmd->copy_abort) { /* COPY OPERATION ABORT (copy_abort.c): nothing held for COPY STATUS */
		scsi_cmd_set_status(cmd, SCSI_STATUS_TASK_ABORTED);
		return SCSI_FAILED;
	}
	skip_empty(run);
	if (run->done == run->list.nsegments)
		return copy_done(cmd);
	seg = &run->list.seg[run->done];
	if (copy_piece_begin(cmd, cmd->lu, &run->piece, seg->src_lba + run->seg_done, seg->dst_lba + run->seg_done,
			     piece_blocks(cmd, run)) != SCSI_OK)
		return SCSI_FAILED;
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
	if (r == SCSI_OK)
		r = check_segments(cmd, &run->list);
	if (r != SCSI_OK)
		return r;
	run->flags = cmd->lu->mode_current.wce ? 0 : BE_WRITE_FUA;
	return copy_next(cmd);
}

bool copy_manager_enabled(const struct scsi_lu *lu)
{
	static const uint8_t extended_copy[16] = { 0x83, 0x00 };
	struct scsi_sense_info s;

	return lu && scsi_op_lookup(lu, extended_copy, &s) != NULL;
}

