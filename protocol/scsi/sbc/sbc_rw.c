/*
 * SBC-4 data transfer commands: READ(6/10/12/16/32) (5.15-5.20),
 * WRITE(6/10/12/16/32) (5.42-5.47), WRITE AND VERIFY(10/12/16/32) (5.50-5.53)
 * and ORWRITE(16) (5.9), plus the worker-side I/O helpers the other SBC
 * handlers share (sbc.h).  The 32-byte forms exist on type 2 LUs only.
 *
 * Parse decodes the CDB (sbc_decode_rw: PROTECT, DPO/FUA, MAXIMUM TRANSFER
 * LENGTH, LBA range) before any Data-Out is solicited; exec runs the backend
 * I/O on a worker, the command holding its blocks' LBA lock (shared for
 * reads, alone for writes; lba_lock.c), or at once on the loop thread when
 * the page cache serves it without waiting (scsi_io_job.work_nowait).  On
 * an LU formatted with protection information every block's tuple is
 * checked on read (RDPROTECT table) and generated or checked on write
 * (WRPROTECT table), and with a nonzero PROTECT field it travels
 * interleaved with the data (sbc_pi.h).  Not here: zoned write-pointer
 * rules (zbc_rw.c), ORWRITE(32)'s BMOP / generation processing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sbc/sbc.h"

/* ---- shared worker-side helpers ---- */

int sbc_medium_read(struct scsi_lu *lu, void *buf, uint64_t lba, size_t len)
{
	int rc = lu->backend->ops->read(lu->backend, buf, len, scsi_lu_offset(lu, lba));

	return rc < 0 ? rc : 0;
}

/* The pieces handed to the backend in one readv / writev call (on the stack; IOV_MAX is 1024). */
#define SGL_CHUNK 64

/*
 * The largest transfer done on the loop thread (BE_IO_NOWAIT).  Saving the
 * two thread wake-ups pays for small transfers; a large one costs more in
 * copying than the hand-off, and on a worker its copy overlaps the loop's
 * sending of the previous one (measured with scripts/bench: 1 MiB reads
 * done on the loop thread took twice the CPU per operation).
 */
#define NOWAIT_MAX_BYTES (64u * 1024)

/* n pieces at off in one call when the backend has readv / writev, else piece by piece. */
static int medium_iov(struct backend *be, bool write, const struct iovec *iov, unsigned n, uint64_t off,
		      unsigned flags)
{
	if (write && be->ops->writev)
		return be->ops->writev(be, iov, n, off, flags);
	if (!write && be->ops->readv)
		return be->ops->readv(be, iov, n, off, flags);
	if (flags & BE_IO_NOWAIT)
		return -EAGAIN;
	for (unsigned i = 0; i < n; i++) {
		int rc = write ? be->ops->write(be, iov[i].iov_base, iov[i].iov_len, off, flags)
			       : be->ops->read(be, iov[i].iov_base, iov[i].iov_len, off);

		if (rc < 0)
			return rc;
		off += iov[i].iov_len;
	}
	return 0;
}

/*
 * The data path without PI: len bytes at lba straight between the medium
 * and the transport's buffers (no copy), SGL_CHUNK pieces per backend call.
 * flags: the backend's (BE_WRITE_FUA, BE_IO_NOWAIT).  0 or a negative errno.
 */
static int medium_io_sgl(struct scsi_lu *lu, const struct scsi_sgl *sgl, uint64_t lba, uint64_t len, bool write,
			 unsigned flags)
{
	struct iovec chunk[SGL_CHUNK];
	uint64_t off = scsi_lu_offset(lu, lba), chunk_len = 0;
	unsigned n = 0;

	for (unsigned i = 0; i < sgl->iovcnt && len; i++) {
		size_t piece = sgl->iov[i].iov_len < len ? sgl->iov[i].iov_len : (size_t)len;
		int rc;

		chunk[n++] = (struct iovec){ .iov_base = sgl->iov[i].iov_base, .iov_len = piece };
		chunk_len += piece;
		len -= piece;
		if (n < SGL_CHUNK && len && i + 1 < sgl->iovcnt)
			continue;
		rc = medium_iov(lu->backend, write, chunk, n, off, flags);
		if (rc < 0)
			return rc;
		off += chunk_len;
		chunk_len = 0;
		n = 0;
	}
	return 0;
}

/* The backend's thread: a READ or WRITE medium_io_async started has ended. */
static void medium_io_async_done(void *p, int rc)
{
	struct scsi_cmd *cmd = p;

	if (rc < 0)
		scsi_cmd_fail_errno(cmd, rc, (cmd->op->flags & OP_WRITES_MEDIUM) != 0);
	scsi_io_job_complete(&cmd->io_job);
}

/*
 * The data path without PI through an asynchronous backend (submit_rw):
 * the transport's pieces as they are, when they hold exactly len bytes in
 * at most SGL_CHUNK pieces (the backend may keep the vector until it
 * completes, and the command keeps it).  True when the call started;
 * medium_io_async_done follows from the backend's thread.
 */
static bool medium_io_async(struct scsi_cmd *cmd, const struct scsi_sgl *sgl, uint64_t len, bool write)
{
	struct backend *be = cmd->lu->backend;
	uint64_t have = 0;

	if (!be->ops->submit_rw || sgl->iovcnt == 0 || sgl->iovcnt > SGL_CHUNK)
		return false;
	for (unsigned i = 0; i < sgl->iovcnt; i++)
		have += sgl->iov[i].iov_len;
	return have == len && be->ops->submit_rw(be, write, sgl->iov, sgl->iovcnt, scsi_lu_offset(cmd->lu, cmd->lba),
						 write ? sbc_write_flags(cmd) : 0, medium_io_async_done, cmd) == 0;
}

bool sbc_compare(const uint8_t *medium, const uint8_t *expected, size_t len, size_t *first_offset)
{
	size_t i = 0;

	*first_offset = 0;
	if (memcmp(medium, expected, len) == 0)
		return true;
	while (i < len && medium[i] == expected[i])
		i++;
	*first_offset = i;
	return false;
}

struct scsi_sense_info sbc_sense_miscompare(uint64_t offset)
{
	return sense_with_information(sense_make(SENSE_KEY_MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY_OPERATION),
				      offset);
}

enum scsi_result sbc_zoned_plan_unwritten(struct scsi_cmd *cmd)
{
	struct zbc_unwritten *u;

	if (!cmd->lu->zbc)
		return SCSI_OK;
	/* exec may run again (sbc_zoned_write_begin): the plan of the earlier run goes. */
	if (cmd->handler_state && cmd->handler_state_free)
		cmd->handler_state_free(cmd->handler_state);
	cmd->handler_state = NULL;
	if (zbc_unwritten_plan(cmd->lu, cmd->lba, cmd->nblocks, &u) < 0)
		return scsi_cmd_fail(cmd, scsi_sense_from_errno(ENOMEM, false));
	cmd->handler_state = u;
	cmd->handler_state_free = free;
	return SCSI_OK;
}

void sbc_zoned_zero_unwritten(const struct scsi_cmd *cmd, uint64_t lba, uint8_t *buf, size_t len)
{
	if (cmd->lu->zbc && cmd->handler_state)
		zbc_unwritten_zero(cmd->handler_state, cmd->lu->block_size, lba, buf, len);
}

/* ---- READ(6/10/12/16) ---- */

enum scsi_result sbc_read_parse(struct scsi_cmd *cmd)
{
	cmd->data_length = 0; /* Data-In only */
	return sbc_decode_rw(cmd);
}

/*
 * READ on an LU with PI: the RDPROTECT checks, then the data alone or
 * interleaved with its tuples.  flags 0 (a worker) or BE_IO_NOWAIT (the
 * loop thread: false when the medium would make it wait, nothing reported).
 */
static bool read_pi(struct scsi_cmd *cmd, unsigned flags)
{
	struct scsi_lu *lu = cmd->lu;
	uint64_t data_len = (uint64_t)cmd->nblocks * lu->block_size;
	uint64_t tuple_len = sbc_pi_bytes(lu, cmd->nblocks);
	bool joined = cmd->protect != 0;
	uint8_t *buf = malloc((joined ? data_len : 0) + tuple_len);
	uint8_t *data = joined ? buf : cmd->data_in;
	struct sbc_pi_checks c;
	struct scsi_sense_info s;
	int rc;

	if (!buf) {
		if (flags & BE_IO_NOWAIT)
			return false;
		scsi_cmd_fail(cmd, scsi_sense_from_errno(ENOMEM, false));
		return true;
	}
	sbc_pi_checks_init(cmd, cmd->protect, &c);
	rc = sbc_medium_read_checked(lu, &c, cmd->lba, cmd->nblocks, 0, data, buf + (joined ? data_len : 0), &s,
				     flags);
	if (rc < 0 && (flags & BE_IO_NOWAIT)) {
		free(buf);
		return false;
	}
	if (rc < 0)
		scsi_cmd_fail_errno(cmd, rc, false);
	else if (rc > 0)
		scsi_cmd_fail(cmd, s);
	else if (joined)
		sbc_pi_join(lu, data, buf + data_len, cmd->nblocks, cmd->data_in);
	free(buf);
	return true;
}

static void read_work(struct scsi_cmd *cmd)
{
	int rc;

	if (sbc_lu_has_pi(cmd->lu)) {
		read_pi(cmd, 0);
		return;
	}
	rc = medium_io_sgl(cmd->lu, &cmd->io_sgl, cmd->lba, cmd->data_in_len, false, 0);
	if (rc < 0)
		scsi_cmd_fail_errno(cmd, rc, false);
}

/*
 * read_work on the loop thread when the blocks are in memory (BE_IO_NOWAIT);
 * a retry on a worker reads them all again.
 */
static bool read_nowait(struct scsi_cmd *cmd)
{
	if (cmd->data_in_len > NOWAIT_MAX_BYTES)
		return false;
	if (sbc_lu_has_pi(cmd->lu))
		return read_pi(cmd, BE_IO_NOWAIT);
	return medium_io_sgl(cmd->lu, &cmd->io_sgl, cmd->lba, cmd->data_in_len, false, BE_IO_NOWAIT) == 0;
}

/* read_work started asynchronously (medium_io_async), for LUs without PI. */
static bool read_async(struct scsi_cmd *cmd)
{
	return !sbc_lu_has_pi(cmd->lu) && medium_io_async(cmd, &cmd->io_sgl, cmd->data_in_len, false);
}

/* Zoned LUs, on the loop thread once the blocks are read (GOOD): the unwritten ones read as zeros. */
static enum scsi_result read_zoned_after(struct scsi_cmd *cmd)
{
	zbc_unwritten_zero_sgl(cmd->handler_state, cmd->lu->block_size, cmd->lba, &cmd->io_sgl);
	return SCSI_OK;
}

enum scsi_result sbc_read_exec(struct scsi_cmd *cmd)
{
	size_t len = (size_t)cmd->nblocks * sbc_wire_block_len(cmd);

	/* SBC-4 5.16: TRANSFER LENGTH 0 reads nothing and is not an error. */
	if (cmd->nblocks == 0)
		return SCSI_OK;
	if (sbc_zoned_check_read(cmd) != SCSI_OK || sbc_zoned_plan_unwritten(cmd) != SCSI_OK)
		return SCSI_FAILED;
	/* With PI the tuples are checked (and maybe joined) in one contiguous buffer. */
	if (sbc_lu_has_pi(cmd->lu) ? !scsi_cmd_alloc_data_in(cmd, len)
				   : scsi_cmd_data_in_buffers(cmd, (uint32_t)len, &cmd->io_sgl) != 0)
		return scsi_cmd_fail(cmd, scsi_sense_from_errno(ENOMEM, false));
	return scsi_cmd_run_io_async(cmd, read_work, read_nowait, read_async, cmd->handler_state ? read_zoned_after : NULL);
}

/* ---- WRITE(6/10/12/16) ---- */

/*
 * FCP-4 9.4.2 a), which iSCSI targets follow and libiscsi's iSCSIResiduals
 * tests check: when the transport's expected data transfer length is shorter
 * than the CDB's transfer, the command is processed on the Data-Out that
 * arrived (overflow residual).  That is only well defined for whole logical
 * blocks; a partial block gets option b), INVALID FIELD IN COMMAND
 * INFORMATION UNIT, with nothing written.  cmd->data_length stays the
 * CDB's transfer (the residual is computed from it); cmd->nblocks becomes
 * the blocks to write.  The core passes a short Data-Out on for the rows
 * flagged OP_SHORT_DATA_OUT_OK (op_table.c).
 */
static enum scsi_result clip_to_data_out(struct scsi_cmd *cmd)
{
	uint32_t bs = sbc_wire_block_len(cmd);

	if (cmd->data_out_len >= cmd->data_length)
		return SCSI_OK;
	if (cmd->data_out_len % bs != 0)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ILLEGAL_REQUEST,
						     ASC_INVALID_FIELD_IN_COMMAND_INFORMATION_UNIT));
	cmd->nblocks = cmd->data_out_len / bs;
	return SCSI_OK;
}

enum scsi_result sbc_write_parse(struct scsi_cmd *cmd)
{
	enum scsi_result r = sbc_decode_rw(cmd);

	if (r != SCSI_OK)
		return r;
	cmd->data_length = cmd->nblocks * sbc_wire_block_len(cmd);
	return SCSI_OK;
}

/*
 * Takes the user data and tuples of the Data-Out (sbc_write_data_prepare)
 * and writes them.  Returns true if the write was done; else the command
 * has failed.
 */
static bool write_blocks(struct scsi_cmd *cmd, unsigned flags, struct sbc_write_data *w)
{
	struct scsi_sense_info s;
	int rc = sbc_write_data_prepare(cmd, cmd->data_out, cmd->lba, cmd->nblocks, 0, w, &s);

	if (rc > 0) {
		scsi_cmd_fail(cmd, s);
		return false;
	}
	if (rc == 0)
		rc = sbc_medium_write_pi(cmd->lu, w->data, w->tuples, cmd->lba, cmd->nblocks, flags);
	if (rc < 0) {
		scsi_cmd_fail_errno(cmd, rc, true);
		return false;
	}
	sbc_zoned_persist(cmd, flags);
	return cmd->status == SCSI_STATUS_GOOD;
}

static void write_work(struct scsi_cmd *cmd)
{
	struct sbc_write_data w;
	int rc;

	if (!cmd->data_out) {
		/* No PI, Data-Out in the transport's pieces: straight to the medium. */
		rc = medium_io_sgl(cmd->lu, &cmd->data_out_sgl, cmd->lba, (uint64_t)cmd->nblocks * cmd->lu->block_size,
				   true, sbc_write_flags(cmd));
		if (rc < 0)
			scsi_cmd_fail_errno(cmd, rc, true);
		else
			sbc_zoned_persist(cmd, sbc_write_flags(cmd));
		return;
	}
	write_blocks(cmd, sbc_write_flags(cmd), &w);
	sbc_write_data_free(&w);
}

/*
 * write_work's plain case on the loop thread when the file system takes the
 * bytes without waiting (a buffered write, BE_IO_NOWAIT; never FUA).  Not
 * for zoned LUs, whose write pointers are then persisted.  A retry on a
 * worker writes the whole range again (the command holds its LBA lock).
 */
static bool write_nowait(struct scsi_cmd *cmd)
{
	if (cmd->data_out || cmd->lu->zbc || (uint64_t)cmd->nblocks * cmd->lu->block_size > NOWAIT_MAX_BYTES)
		return false;
	return medium_io_sgl(cmd->lu, &cmd->data_out_sgl, cmd->lba, (uint64_t)cmd->nblocks * cmd->lu->block_size, true,
			     sbc_write_flags(cmd) | BE_IO_NOWAIT) == 0;
}

/* write_work's plain case started asynchronously (medium_io_async); not for zoned LUs, as write_nowait. */
static bool write_async(struct scsi_cmd *cmd)
{
	return !cmd->data_out && !cmd->lu->zbc &&
	       medium_io_async(cmd, &cmd->data_out_sgl, (uint64_t)cmd->nblocks * cmd->lu->block_size, true);
}

static void orwrite_work(struct scsi_cmd *cmd);

/*
 * The exec of the WRITE family (WRITE, WRITE AND VERIFY, ORWRITE): the
 * Data-Out clipped to whole blocks, TRANSFER LENGTH 0 writes nothing and is
 * not an error (SBC-4 5.43), the zone rules, the write cache (not for WRITE
 * AND VERIFY, which is always on the medium), then work on a worker.
 */
static enum scsi_result write_family_exec(struct scsi_cmd *cmd, void (*work)(struct scsi_cmd *), bool cached)
{
	enum scsi_result r;

	if (clip_to_data_out(cmd) != SCSI_OK)
		return SCSI_FAILED;
	if (cmd->nblocks == 0)
		return SCSI_OK;
	/* Only a plain WRITE without PI writes the transport's pieces as they are (OP_DATA_OUT_SGL). */
	if ((work != write_work || sbc_lu_has_pi(cmd->lu)) && !scsi_cmd_data_out_contig(cmd))
		return scsi_cmd_fail(cmd, scsi_sense_from_errno(ENOMEM, true));
	/* ORWRITE reads the blocks it ORs into. */
	if (work == orwrite_work && sbc_zoned_plan_unwritten(cmd) != SCSI_OK)
		return SCSI_FAILED;
	r = sbc_zoned_write_begin(cmd);
	if (r != SCSI_OK)
		return r;
	if (cached)
		sbc_apply_write_cache(cmd);
	return scsi_cmd_run_io_async(cmd, work, work == write_work ? write_nowait : NULL,
				     work == write_work ? write_async : NULL, NULL);
}

enum scsi_result sbc_write_exec(struct scsi_cmd *cmd)
{
	return write_family_exec(cmd, write_work, true);
}

/* ---- WRITE AND VERIFY(10/12/16) ---- */

/*
 * SBC-4 5.46: BYTCHK 00b = write, then verify the medium (no compare);
 * 01b = write, then compare the Data-Out with what the medium holds; 10b and
 * (for WRITE AND VERIFY) 11b are reserved: INVALID FIELD IN CDB on the BYTCHK
 * field (byte 1 bit 2).  The command has no FUA bit; the verify implies the
 * data reached the medium, so the write is always durable.
 */
enum scsi_result sbc_write_and_verify_parse(struct scsi_cmd *cmd)
{
	enum scsi_result r;

	if (sbc_cdb_bytchk(cmd->cdb) & 0x2)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb((uint16_t)sbc_cdb_flags_byte(cmd->cdb), 2));
	r = sbc_decode_rw(cmd);
	if (r != SCSI_OK)
		return r;
	cmd->data_length = cmd->nblocks * sbc_wire_block_len(cmd);
	return SCSI_OK;
}

static void write_and_verify_work(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	size_t len = (size_t)cmd->nblocks * lu->block_size;
	struct sbc_write_data w;
	size_t first;
	uint8_t *medium;
	int rc;

	if (!write_blocks(cmd, BE_WRITE_FUA, &w)) {
		sbc_write_data_free(&w);
		return;
	}
	/* The verify step: read the blocks back (medium verification), and compare if BYTCHK = 01b. */
	medium = malloc(len);
	if (!medium) {
		sbc_write_data_free(&w);
		scsi_cmd_fail(cmd, scsi_sense_from_errno(ENOMEM, false));
		return;
	}
	rc = sbc_medium_read(lu, medium, cmd->lba, len);
	if (rc < 0)
		scsi_cmd_fail_errno(cmd, rc, false);
	else if (sbc_cdb_bytchk(cmd->cdb) == 1 && !sbc_compare(medium, w.data, len, &first))
		scsi_cmd_fail(cmd, sbc_sense_miscompare(first));
	free(medium);
	sbc_write_data_free(&w);
}

enum scsi_result sbc_write_and_verify_exec(struct scsi_cmd *cmd)
{
	return write_family_exec(cmd, write_and_verify_work, false);
}

/* ---- ORWRITE(16) ---- */

/*
 * SBC-4 5.9: ORWRITE(16) ORs the Data-Out into the addressed blocks (the
 * 16-byte form has no BMOP field: it is always the OR operation).  The
 * command holds its blocks' LBA lock exclusively (OP_LBA_EXCLUSIVE), so no
 * other command sees or changes them between the read and the write.
 */
enum scsi_result sbc_orwrite_parse(struct scsi_cmd *cmd)
{
	return sbc_write_parse(cmd);
}

/*
 * With PI the ORPROTECT field is checked like WRPROTECT on the received
 * tuples; the stored guards are those of the ORed data (the data changed),
 * the tags those received or generated.
 */
static void orwrite_work(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	struct backend *be = lu->backend;
	size_t len = (size_t)cmd->nblocks * lu->block_size;
	uint64_t offset = scsi_lu_offset(lu, cmd->lba);
	uint8_t *buf = malloc(len);
	struct sbc_write_data w;
	struct scsi_sense_info s;
	int rc;

	if (!buf) {
		scsi_cmd_fail(cmd, scsi_sense_from_errno(ENOMEM, true));
		return;
	}
	rc = sbc_write_data_prepare(cmd, cmd->data_out, cmd->lba, cmd->nblocks, 0, &w, &s);
	if (rc != 0) {
		(rc > 0 ? scsi_cmd_fail(cmd, s) : scsi_cmd_fail_errno(cmd, rc, true));
		goto out;
	}
	rc = be->ops->read(be, buf, len, offset);
	if (rc < 0) {
		scsi_cmd_fail_errno(cmd, rc, false);
		goto out;
	}
	sbc_zoned_zero_unwritten(cmd, cmd->lba, buf, len);
	for (size_t i = 0; i < len; i++)
		buf[i] |= w.data[i];
	rc = be->ops->write(be, buf, len, offset, sbc_write_flags(cmd));
	if (rc >= 0 && w.tuples) {
		uint32_t il = lu->block_size >> lu->p_i_exponent;

		for (uint64_t k = 0; k < ((uint64_t)cmd->nblocks << lu->p_i_exponent); k++)
			put_be16(w.tuples + k * PI_TUPLE_LEN, pi_guard(buf + k * il, il));
		rc = sbc_pi_store(lu, w.tuples, cmd->lba, cmd->nblocks, sbc_write_flags(cmd));
	}
	if (rc < 0)
		scsi_cmd_fail_errno(cmd, rc, true);
	sbc_zoned_persist(cmd, sbc_write_flags(cmd));
out:
	sbc_write_data_free(&w);
	free(buf);
}

enum scsi_result sbc_orwrite_exec(struct scsi_cmd *cmd)
{
	return write_family_exec(cmd, orwrite_work, true);
}
