/*
 * WRITE SCATTERED(16) (9Fh / 12h) and WRITE SCATTERED(32) (7Fh / 0011h):
 * SBC-4 5.54, 5.55.
 *
 * CDB (16): byte 2 WRPROTECT / DPO / FUA, 4-5 LOGICAL BLOCK DATA OFFSET
 * (LBDOF), 8-9 NUMBER OF LBA RANGE DESCRIPTORS, 10-13 BUFFER TRANSFER LENGTH
 * (BTL), 14 GROUP NUMBER.  CDB (32): 6 GROUP NUMBER, 10 WRPROTECT / DPO /
 * FUA, 12-13 LBDOF, 16-17 NUMBER OF LBA RANGE DESCRIPTORS, 28-31 BTL.
 *
 * Data-Out: (LBDOF + BTL) logical blocks: a 32-byte header, 32-byte LBA range
 * descriptors (LBA b0-7, NUMBER OF LOGICAL BLOCKS b8-11), padding up to
 * LBDOF blocks, then the data of every range in descriptor order.
 *
 * The CDB is checked in parse (INVALID FIELD IN CDB, 05/24/00, field pointer
 * on the field): the PROTECT field and DPO/FUA as for WRITE(16); more
 * descriptors than the Block Limits Extension page's MAXIMUM SCATTERED LBA
 * RANGE DESCRIPTOR COUNT; BTL above MAXIMUM SCATTERED TRANSFER LENGTH or
 * MAXIMUM TRANSFER LENGTH; LBDOF 0 with descriptors, or too small to hold
 * them.  Every descriptor is then checked before anything is written, so an
 * error never leaves part of the command done: an LBA range past the
 * capacity is LOGICAL BLOCK ADDRESS OUT OF RANGE (05/21/00); a range longer
 * than MAXIMUM SCATTERED LBA RANGE TRANSFER LENGTH, ranges that overlap, or
 * NUMBER OF LOGICAL BLOCKS that do not add up to BTL are INVALID FIELD IN
 * PARAMETER LIST (05/26/00, field pointer on the descriptor's field); the
 * public sources do not settle these three answers (docs/atomic.md).
 * Zero descriptors or BTL 0 with no range data: nothing is written.
 *
 * The ranges are written one after the other, each like a WRITE; the
 * command as a whole is not atomic (SBC-4), unless the LU sets the
 * non-standard write_scattered_atomic: then all ranges go to the backend's
 * write_atomic_ranges (the intent log) as one unit, exclusive of other I/O.  The 32-byte form, whose
 * per-descriptor expected tags only mean something with type 2 protection,
 * is supported on type 2 LUs, or everywhere with the LU's allow_32_byte_cdbs
 * (as Linux scsi_debug does).
 */
#include <stdlib.h>
#include <string.h>

#include "sbc/sbc.h"
#include "sched/task_set.h"

#define HEADER_LEN 32
#define DESCRIPTOR_LEN 32

struct scattered_cdb {
	uint32_t lbdof;
	uint32_t count;   /* NUMBER OF LBA RANGE DESCRIPTORS */
	uint32_t btl;
	uint16_t flags_offset, lbdof_offset, count_offset, btl_offset;
};

bool sbc_write_scattered_enabled(const struct scsi_lu *lu)
{
	return lu->params.write_scattered;
}

/*
 * write_scattered_atomic holds only where the backend keeps atomic promises
 * (backend.h: can_write_atomic); elsewhere WRITE SCATTERED writes its ranges
 * one after the other, as SBC-4 allows, streamed or not.
 */
bool sbc_write_scattered_is_atomic(const struct scsi_lu *lu)
{
	return lu->params.write_scattered_atomic && lu->backend->can_write_atomic;
}

bool sbc_write_scattered_32_enabled(const struct scsi_lu *lu)
{
	/* Like every 32-byte CDB, for type 2 protection (or allowed by the LU's allow_32_byte_cdbs). */
	return lu->params.write_scattered && (sbc_pi_type2_enabled(lu) || lu->params.allow_32_byte_cdbs);
}

static void decode(struct scsi_cmd *cmd, struct scattered_cdb *c)
{
	const uint8_t *cdb = cmd->cdb;

	if (cdb[0] == SCSI_OP_SERVICE_ACTION_OUT_16) {
		*c = (struct scattered_cdb){ .lbdof = get_be16(cdb + 4), .count = get_be16(cdb + 8),
					     .btl = get_be32(cdb + 10), .flags_offset = 2, .lbdof_offset = 4,
					     .count_offset = 8, .btl_offset = 10 };
		cmd->group_number = cdb[14] & 0x3f;
	} else {
		*c = (struct scattered_cdb){ .lbdof = get_be16(cdb + 12), .count = get_be16(cdb + 16),
					     .btl = get_be32(cdb + 28), .flags_offset = 10, .lbdof_offset = 12,
					     .count_offset = 16, .btl_offset = 28 };
		cmd->group_number = cdb[6] & 0x3f;
	}
	cmd->protect = (uint8_t)(cdb[c->flags_offset] >> 5);
	cmd->dpo = (cdb[c->flags_offset] & 0x10) != 0;
	cmd->fua = (cdb[c->flags_offset] & 0x08) != 0;
}

enum scsi_result sbc_write_scattered_parse(struct scsi_cmd *cmd)
{
	const struct scsi_lu_params *p = &cmd->lu->params;
	uint32_t bs = cmd->lu->block_size;
	struct scattered_cdb c;

	decode(cmd, &c);
	if (sbc_check_protect(cmd, cmd->protect) != SCSI_OK)
		return SCSI_FAILED;
	/*
	 * PI LUs: the tuples are generated, reference tags from the LBA of each
	 * range.  Tuples interleaved in the Data-Out (WRPROTECT != 0) and the
	 * descriptors' expected tags are not supported (docs/pi.md).
	 */
	if (cmd->protect)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(c.flags_offset, 7));
	cmd->pi_cdb32 = false;
	if (!cmd->lu->mode_current.dpofua && (cmd->dpo || cmd->fua))
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(c.flags_offset, cmd->dpo ? 4 : 3));
	if (p->max_scattered_lba_range_descriptors && c.count > p->max_scattered_lba_range_descriptors)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(c.count_offset, -1));
	if (p->max_scattered_transfer_length && c.btl > p->max_scattered_transfer_length)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(c.btl_offset, -1));
	if (c.count && (c.lbdof == 0 || HEADER_LEN + (uint64_t)c.count * DESCRIPTOR_LEN > (uint64_t)c.lbdof * bs))
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(c.lbdof_offset, -1));
	if (sbc_check_max_transfer_length(cmd, (uint64_t)c.lbdof + c.btl, c.btl_offset) != SCSI_OK)
		return SCSI_FAILED;
	cmd->nblocks = c.btl;
	cmd->data_length = (c.lbdof + c.btl) * bs;
	/* Too big to hold: the Data-Out comes in pieces (sbc_write_scattered_stream.c). */
	if (cmd->data_length > SBC_STREAM_WINDOW &&
	    (!sbc_write_scattered_is_atomic(cmd->lu) || cmd->lu->backend->ops->stream_begin)) {
		cmd->data_out_window = SBC_STREAM_WINDOW;
		if ((uint64_t)c.lbdof * bs > cmd->data_out_window)
			cmd->data_out_window = c.lbdof * bs;
	}
	return SCSI_OK;
}

struct lba_range {
	uint64_t lba;
	uint32_t n;
	uint32_t index;   /* descriptor number */
};

static int by_lba(const void *a, const void *b)
{
	const struct lba_range *x = a, *y = b;

	return x->lba < y->lba ? -1 : x->lba > y->lba;
}

/* Byte offset in the parameter list of descriptor i's field at off. */
static uint16_t field_of(uint32_t i, unsigned off)
{
	uint64_t pos = HEADER_LEN + (uint64_t)i * DESCRIPTOR_LEN + off;

	return pos > UINT16_MAX ? UINT16_MAX : (uint16_t)pos;
}

/* Checks every descriptor (before anything is written); fills ranges. */
static enum scsi_result check_ranges(struct scsi_cmd *cmd, const struct scattered_cdb *c, struct lba_range *ranges)
{
	const struct scsi_lu_params *p = &cmd->lu->params;
	uint64_t total = 0;

	for (uint32_t i = 0; i < c->count; i++) {
		const uint8_t *d = cmd->data_out + HEADER_LEN + (size_t)i * DESCRIPTOR_LEN;

		ranges[i] = (struct lba_range){ .lba = get_be64(d), .n = get_be32(d + 8), .index = i };
		if (ranges[i].n && scsi_lu_range_bad(cmd->lu, ranges[i].lba, ranges[i].n))
			return scsi_cmd_fail(cmd, sense_lba_out_of_range());
		if (p->max_scattered_lba_range_transfer_length && ranges[i].n > p->max_scattered_lba_range_transfer_length)
			return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(field_of(i, 8), -1));
		total += ranges[i].n;
		if (total > c->btl)
			return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(field_of(i, 8), -1));
	}
	if (total != c->btl)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(
						  field_of(c->count ? c->count - 1 : 0, 8), -1));
	/*
	 * Overlaps: in LBA order each non-empty range must start at or past the
	 * furthest end of those before it (empty ranges overlap nothing and must
	 * not hide an overlap of their neighbours).
	 */
	qsort(ranges, c->count, sizeof(*ranges), by_lba);
	{
		const struct lba_range *furthest = NULL;

		for (uint32_t i = 0; i < c->count; i++) {
			if (!ranges[i].n)
				continue;
			if (furthest && ranges[i].lba < furthest->lba + furthest->n) {
				uint32_t later = ranges[i].index > furthest->index ? ranges[i].index : furthest->index;

				return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(field_of(later, 0), -1));
			}
			if (!furthest || ranges[i].lba + ranges[i].n > furthest->lba + furthest->n)
				furthest = &ranges[i];
		}
	}
	return SCSI_OK;
}

/*
 * The LBA lock of WRITE SCATTERED: the descriptors' ranges (in the Data-Out,
 * or its first piece when streamed), alone; exclusively with
 * write_scattered_atomic, like WRITE ATOMIC.  Descriptors the exec refuses
 * lock what they name within the LU: nothing is written then anyway.
 */
void sbc_write_scattered_lock(struct scsi_cmd *cmd)
{
	struct scattered_cdb c;
	uint64_t room;

	decode(cmd, &c);
	cmd->lock.mode = sbc_write_scattered_is_atomic(cmd->lu) ? SCSI_LBA_LOCK_EXCLUSIVE : SCSI_LBA_LOCK_WRITE;
	room = cmd->data_out && cmd->data_out_len > HEADER_LEN ? (cmd->data_out_len - HEADER_LEN) / DESCRIPTOR_LEN : 0;
	for (uint32_t i = 0; i < c.count && i < room; i++) {
		const uint8_t *d = cmd->data_out + HEADER_LEN + (size_t)i * DESCRIPTOR_LEN;
		uint64_t lba = get_be64(d);
		uint32_t n = get_be32(d + 8);

		if (!scsi_lu_range_bad(cmd->lu, lba, n))
			scsi_lba_lock_add(cmd, lba, n);
	}
}

/*
 * write_scattered_atomic (non-standard): every range in one backend
 * write_atomic_ranges, the ranges' LBA locks held exclusively, like WRITE
 * ATOMIC.
 */
static void write_scattered_atomic_work(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	struct backend *be = lu->backend;
	struct scattered_cdb c;
	struct be_range *r;
	bool pi = sbc_lu_has_pi(lu);
	const uint8_t *data;
	uint8_t *buf = NULL;
	uint64_t data_len, tuple_pos;
	unsigned n = 0;
	int rc;

	decode(cmd, &c);
	data = cmd->data_out + (size_t)c.lbdof * lu->block_size;
	data_len = (uint64_t)c.btl * lu->block_size;
	r = calloc((size_t)c.count * (pi ? 2 : 1) + 1, sizeof(*r));
	/* With PI: the data ranges then the tuple ranges, and a buffer with the data then the tuples. */
	if (r && pi) {
		buf = malloc(data_len + sbc_pi_bytes(lu, c.btl) + 1);
		if (buf)
			memcpy(buf, data, data_len);
	}
	if (!r || (pi && !buf)) {
		free(r);
		scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
		return;
	}
	tuple_pos = data_len;
	for (int pass = 0; pass < (pi ? 2 : 1); pass++) {
		const uint8_t *range_data = data;

		for (uint32_t i = 0; i < c.count; i++) {
			const uint8_t *d = cmd->data_out + HEADER_LEN + (size_t)i * DESCRIPTOR_LEN;
			uint32_t blocks = get_be32(d + 8);

			if (!blocks)
				continue;
			if (pass == 0) {
				r[n++] = (struct be_range){ .offset = scsi_lu_offset(lu, get_be64(d)),
							    .len = (uint64_t)blocks * lu->block_size };
			} else {
				r[n++] = (struct be_range){ .offset = sbc_pi_offset(lu, get_be64(d)),
							    .len = sbc_pi_bytes(lu, blocks) };
				sbc_pi_generate(cmd, range_data, get_be64(d), blocks, 0, buf + tuple_pos);
				sbc_pi_medium_form(buf + tuple_pos, sbc_pi_bytes(lu, blocks));
				tuple_pos += sbc_pi_bytes(lu, blocks);
			}
			range_data += (size_t)blocks * lu->block_size;
		}
	}
	rc = be->ops->write_atomic_ranges(be, r, n, pi ? buf : data);
	free(buf);
	free(r);
	if (rc < 0)
		scsi_cmd_fail_errno(cmd, rc, true);
}

static void write_scattered_work(struct scsi_cmd *cmd)
{
	struct scattered_cdb c;
	uint32_t bs = cmd->lu->block_size;
	const uint8_t *data;

	decode(cmd, &c);
	data = cmd->data_out + (size_t)c.lbdof * bs;
	for (uint32_t i = 0; i < c.count; i++) {
		const uint8_t *d = cmd->data_out + HEADER_LEN + (size_t)i * DESCRIPTOR_LEN;
		uint32_t n = get_be32(d + 8);
		struct sbc_write_data w;
		struct scsi_sense_info s;
		int rc;

		if (!n)
			continue;
		rc = sbc_write_data_prepare(cmd, data, get_be64(d), n, 0, &w, &s);
		if (rc == 0)
			rc = sbc_medium_write_pi(cmd->lu, w.data, w.tuples, get_be64(d), n, sbc_write_flags(cmd));
		sbc_write_data_free(&w);
		if (rc < 0) {
			scsi_cmd_fail_errno(cmd, rc, true);
			return;
		}
		data += (size_t)n * bs;
	}
}

enum scsi_result sbc_write_scattered_exec(struct scsi_cmd *cmd)
{
	struct scattered_cdb c;
	struct lba_range *ranges;
	enum scsi_result r;

	decode(cmd, &c);
	/* No descriptor: nothing to write (with BTL 0 the descriptors are still checked). */
	if (c.count == 0 && c.btl == 0)
		return SCSI_OK;
	ranges = calloc(c.count, sizeof(*ranges));
	if (!ranges)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	r = check_ranges(cmd, &c, ranges);
	free(ranges);
	if (r != SCSI_OK || c.btl == 0)
		return r;
	sbc_apply_write_cache(cmd);
	if (cmd->data_out_window)
		return sbc_write_scattered_stream_exec(cmd, c.lbdof, c.count);
	if (sbc_write_scattered_is_atomic(cmd->lu))
		return scsi_cmd_run_io(cmd, write_scattered_atomic_work, NULL);
	return scsi_cmd_run_io(cmd, write_scattered_work, NULL);
}
