/*
 * UNMAP (SBC-4 5.30) and the logical block provisioning
 * switch that hides UNMAP and GET LBA STATUS on fully provisioned LUs.
 *
 * CDB: byte 1 bit 0 ANCHOR (refused by the opcode table's CDB USAGE DATA:
 * ANC_SUP = 0), byte 6 GROUP NUMBER, bytes 7-8 PARAMETER LIST LENGTH.
 *
 * Parameter list (SBC-4 5.30): bytes 0-1 UNMAP DATA LENGTH (n - 1), bytes
 * 2-3 UNMAP BLOCK DESCRIPTOR DATA LENGTH (n - 7), bytes 4-7 reserved, then
 * 16-byte descriptors: bytes 0-7 LBA, 8-11 NUMBER OF LOGICAL BLOCKS.
 *
 * Every descriptor is checked before any block is touched, so a bad list
 * unmaps nothing.  The unmapping itself is the backend's discard (a hole
 * punched in the backing file), on a worker.
 */
#include <stdlib.h>

#include "sbc/sbc.h"
#include "sched/task_set.h"

#define UNMAP_HEADER_LEN 8
#define UNMAP_DESCRIPTOR_LEN 16

/*
 * The LBA lock of UNMAP: the descriptors' ranges, alone (lba_lock.c), read
 * from the parameter list as it came; a list the exec refuses locks what it
 * names within the LU, which changes nothing since nothing is unmapped.
 */
void sbc_unmap_lock(struct scsi_cmd *cmd)
{
	const uint8_t *p = cmd->data_out;
	uint32_t n = cmd->data_out_len > UNMAP_HEADER_LEN ? (cmd->data_out_len - UNMAP_HEADER_LEN) / UNMAP_DESCRIPTOR_LEN
							   : 0;

	cmd->lock.mode = SCSI_LBA_LOCK_WRITE;
	for (uint32_t i = 0; i < n && p; i++) {
		const uint8_t *d = p + UNMAP_HEADER_LEN + (size_t)i * UNMAP_DESCRIPTOR_LEN;
		uint64_t lba = get_be64(d);
		uint32_t nblocks = get_be32(d + 8);

		if (!scsi_lu_range_bad(cmd->lu, lba, nblocks))
			scsi_lba_lock_add(cmd, lba, nblocks);
	}
}

bool sbc_thin_provisioning_enabled(const struct scsi_lu *lu)
{
	return lu->params.thin_provisioning;
}

enum scsi_result sbc_unmap_parse(struct scsi_cmd *cmd)
{
	uint16_t parameter_list_length = get_be16(cmd->cdb + 7);

	cmd->group_number = cmd->cdb[6] & 0x3f;
	/*
	 * SBC-4 5.30: PARAMETER LIST LENGTH 0 transfers nothing and is not
	 * an error; 1 to 7 (shorter than the header) is PARAMETER LIST LENGTH
	 * ERROR.
	 */
	if (parameter_list_length > 0 && parameter_list_length < UNMAP_HEADER_LEN)
		return scsi_cmd_fail(cmd, sense_parameter_list_length_error());
	cmd->data_length = parameter_list_length;
	return SCSI_OK;
}

/* Descriptors to unmap, validated on the loop thread. */
struct unmap_state {
	uint32_t count;
};

static void unmap_work(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	struct unmap_state *st = cmd->handler_state;
	const uint8_t *d = cmd->data_out + UNMAP_HEADER_LEN;
	int rc = 0;

	for (uint32_t i = 0; i < st->count && rc == 0; i++, d += UNMAP_DESCRIPTOR_LEN) {
		uint64_t lba = get_be64(d);
		uint32_t nblocks = get_be32(d + 8);

		if (nblocks)
			rc = lu->backend->ops->discard(lu->backend, scsi_lu_offset(lu, lba),
						       (uint64_t)nblocks * lu->block_size);
		/* Unmapped blocks carry the escape PI (SBC-4 4.7.4.5, sbc_pi.h). */
		if (nblocks && rc == 0)
			rc = sbc_pi_discard(lu, lba, nblocks);
	}
	if (rc < 0)
		scsi_cmd_fail_errno(cmd, rc, true);
}

enum scsi_result sbc_unmap_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	const uint8_t *p = cmd->data_out;
	uint32_t max_descriptors = lu->params.max_unmap_descriptors;
	uint32_t max_lba_count = lu->params.max_unmap_lba_count;
	uint16_t unmap_data_length, block_descriptor_data_length;
	uint32_t available, count;
	uint64_t total = 0;
	struct unmap_state *st;

	if (cmd->data_length == 0)
		return SCSI_OK;
	unmap_data_length = get_be16(p);
	block_descriptor_data_length = get_be16(p + 2);
	/*
	 * SBC-4 5.30 (parameter list): descriptors are what UNMAP BLOCK DESCRIPTOR DATA LENGTH
	 * announces, cut by what PARAMETER LIST LENGTH transferred; a partial
	 * last descriptor is ignored.  An UNMAP DATA LENGTH too short to cover
	 * the descriptors it precedes contradicts the header: INVALID FIELD IN
	 * PARAMETER LIST rather than guessing which length is right.
	 */
	if (block_descriptor_data_length > 0 &&
	    (uint32_t)unmap_data_length < (uint32_t)block_descriptor_data_length + UNMAP_HEADER_LEN - 2)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(0, -1));
	available = cmd->data_out_len - UNMAP_HEADER_LEN;
	if (available > block_descriptor_data_length)
		available = block_descriptor_data_length;
	count = available / UNMAP_DESCRIPTOR_LEN;
	/*
	 * More descriptors than MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT, or more
	 * blocks in total than MAXIMUM UNMAP LBA COUNT (Block Limits VPD):
	 * INVALID FIELD IN PARAMETER LIST.  FFFFFFFFh (and 0, which the
	 * configuration never pairs with thin provisioning) mean no limit.
	 */
	if (max_descriptors != 0 && max_descriptors != UINT32_MAX && count > max_descriptors)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(2, -1));
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *d = p + UNMAP_HEADER_LEN + (size_t)i * UNMAP_DESCRIPTOR_LEN;
		uint64_t lba = get_be64(d);
		uint32_t nblocks = get_be32(d + 8);

		/* SBC-4 5.30 (parameter list): an LBA plus count past the capacity -> LBA OUT OF RANGE. */
		if (scsi_lu_range_bad(lu, lba, nblocks))
			return scsi_cmd_fail(cmd, sense_lba_out_of_range());
		total += nblocks;
		if (max_lba_count != 0 && max_lba_count != UINT32_MAX && total > max_lba_count)
			return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(
							  (uint16_t)(UNMAP_HEADER_LEN + i * UNMAP_DESCRIPTOR_LEN + 8), -1));
	}
	if (total == 0)
		return SCSI_OK;
	st = calloc(1, sizeof(*st));
	if (!st)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	st->count = count;
	cmd->handler_state = st;
	cmd->handler_state_free = free;
	return scsi_cmd_run_io(cmd, unmap_work, NULL);
}
