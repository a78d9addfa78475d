/*
 * GET LBA STATUS(16) (SBC-4): SERVICE ACTION IN(16)
 * 9Eh / 12h.  CDB bytes 2-9 STARTING LOGICAL BLOCK ADDRESS, 10-13
 * ALLOCATION LENGTH, byte 14 REPORT TYPE (only 00h, all LBAs: the opcode
 * table's CDB USAGE DATA refuses the others).
 *
 * Response: bytes 0-3 PARAMETER DATA LENGTH (n - 3), byte 7 COMPLETION
 * CONDITION (bits 3:1) and RTP (bit 0), then 16-byte LBA status
 * descriptors: LBA, NUMBER OF LOGICAL BLOCKS, PROVISIONING STATUS (byte 12
 * bits 3:0: 0h mapped, 1h deallocated; anchored 2h never happens, ANC_SUP =
 * 0).  The descriptors start at the requested LBA and are contiguous.
 *
 * The backend reports allocation in bytes (SEEK_DATA/SEEK_HOLE on a file);
 * a logical block is deallocated only when all of it lies in a hole: a
 * partly allocated block reads back data, so it is mapped.  Adjacent runs
 * of one status are merged.  A backend that cannot tell (a block device)
 * reports everything mapped, which SBC-4 allows ("mapped or unknown").
 */
#include <errno.h>

#include "sbc/sbc.h"

#define LBA_STATUS_HEADER_LEN 8
#define LBA_STATUS_DESCRIPTOR_LEN 16
/* A bound on the work one command does, whatever its ALLOCATION LENGTH. */
#define LBA_STATUS_MAX_DESCRIPTORS 4096

#define PROVISIONING_MAPPED 0x0
#define PROVISIONING_DEALLOCATED 0x1

/* COMPLETION CONDITION (sbc4r14): why the list ended. */
#define COMPLETION_ALLOCATION_LENGTH 0x1
#define COMPLETION_END_OF_CAPACITY 0x3

struct lba_status_list {
	uint8_t *buf;       /* cmd->data_in */
	uint32_t max;       /* descriptors that fit */
	uint32_t count;     /* descriptors written */
	bool full;          /* a run did not fit */
};

/*
 * Appends (lba, nblocks, status), merging with the last descriptor when it
 * continues it.  Returns false when the list is full.
 */
static bool list_add(struct lba_status_list *l, uint64_t lba, uint64_t nblocks, uint8_t status)
{
	while (nblocks > 0) {
		uint8_t *d;
		uint64_t room;

		if (l->count > 0) {
			d = l->buf + LBA_STATUS_HEADER_LEN + (size_t)(l->count - 1) * LBA_STATUS_DESCRIPTOR_LEN;
			room = UINT32_MAX - get_be32(d + 8);
			if ((d[12] & 0x0f) == status && get_be64(d) + get_be32(d + 8) == lba && room > 0) {
				uint64_t n = nblocks < room ? nblocks : room;
				put_be32(d + 8, (uint32_t)(get_be32(d + 8) + n));
				lba += n;
				nblocks -= n;
				continue;
			}
		}
		if (l->count == l->max) {
			l->full = true;
			return false;
		}
		d = l->buf + LBA_STATUS_HEADER_LEN + (size_t)l->count * LBA_STATUS_DESCRIPTOR_LEN;
		put_be64(d, lba);
		put_be32(d + 8, 0);
		d[12] = status;
		l->count++;
	}
	return true;
}

static void get_lba_status_work(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	struct backend *be = lu->backend;
	uint64_t bs = lu->block_size;
	uint64_t lba = get_be64(cmd->cdb + 2);
	struct lba_status_list l = {
		.buf = cmd->data_in,
		.max = (cmd->data_in_len - LBA_STATUS_HEADER_LEN) / LBA_STATUS_DESCRIPTOR_LEN,
	};
	uint32_t total_len;
	int rc = 0;

	while (lba < lu->num_blocks) {
		uint64_t offset = lba * bs;
		uint64_t end = lu->num_blocks * bs;
		enum be_extent_kind kind = BE_EXTENT_ALLOCATED;
		uint64_t len = 0, nblocks;
		uint8_t status;

		rc = be->ops->extent(be, offset, end - offset, &kind, &len);
		if (rc == -EOPNOTSUPP) {
			kind = BE_EXTENT_ALLOCATED;
			len = end - offset;
			rc = 0;
		} else if (rc < 0) {
			break;
		}
		if (len == 0 || len > end - offset)
			len = end - offset;
		if (kind == BE_EXTENT_HOLE && len >= bs) {
			/* Whole blocks inside the hole. */
			nblocks = len / bs;
			status = PROVISIONING_DEALLOCATED;
		} else {
			/* Allocated bytes, or a hole smaller than a block: every block they touch is mapped. */
			nblocks = kind == BE_EXTENT_HOLE ? 1 : (len + bs - 1) / bs;
			status = PROVISIONING_MAPPED;
		}
		if (!list_add(&l, lba, nblocks, status))
			break;
		lba += nblocks;
	}
	if (rc < 0) {
		scsi_cmd_fail_errno(cmd, rc, false);
		return;
	}
	total_len = LBA_STATUS_HEADER_LEN + l.count * LBA_STATUS_DESCRIPTOR_LEN;
	put_be32(cmd->data_in, total_len - 4);
	/* RTP = 1: REPORT TYPE 00h was processed. */
	cmd->data_in[7] = (uint8_t)(((l.full ? COMPLETION_ALLOCATION_LENGTH : COMPLETION_END_OF_CAPACITY) << 1) | 1);
	cmd->data_in_len = total_len;
}

static enum scsi_result get_lba_status_after(struct scsi_cmd *cmd)
{
	scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	return SCSI_OK;
}

enum scsi_result sbc_get_lba_status_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	uint64_t lba = get_be64(cmd->cdb + 2);
	uint32_t max;

	cmd->allocation_length = get_be32(cmd->cdb + 10);
	/* SBC-4 GET LBA STATUS: a STARTING LOGICAL BLOCK ADDRESS past the last LBA -> LBA OUT OF RANGE. */
	if (lba >= lu->num_blocks)
		return scsi_cmd_fail(cmd, sense_lba_out_of_range());
	/* SPC-4 4.2.5.6: ALLOCATION LENGTH 0 is not an error; nothing is transferred. */
	if (cmd->allocation_length == 0)
		return SCSI_OK;
	/*
	 * As many descriptors as the ALLOCATION LENGTH holds, at least one (a
	 * shorter allocation length truncates the data, SPC-4 4.2.5.6).
	 */
	max = cmd->allocation_length < LBA_STATUS_HEADER_LEN + LBA_STATUS_DESCRIPTOR_LEN
		      ? 1
		      : (cmd->allocation_length - LBA_STATUS_HEADER_LEN) / LBA_STATUS_DESCRIPTOR_LEN;
	if (max > LBA_STATUS_MAX_DESCRIPTORS)
		max = LBA_STATUS_MAX_DESCRIPTORS;
	if (!scsi_cmd_alloc_data_in(cmd, LBA_STATUS_HEADER_LEN + (size_t)max * LBA_STATUS_DESCRIPTOR_LEN))
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	return scsi_cmd_run_io(cmd, get_lba_status_work, get_lba_status_after);
}
