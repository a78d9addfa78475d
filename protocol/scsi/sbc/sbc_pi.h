/*
 * Protection information on SBC logical units (SBC-4 4.22;
 * docs/pi.md): the PI format of an LU, where its tuples live, which checks a
 * PROTECT field asks for, and the worker-side helpers every data command
 * uses to move user data and tuples together.
 *
 * Format.  An LU configured with protection_type 1..3 supports PI (INQUIRY
 * PROTECT = 1) and is formatted with that type; FORMAT UNIT may change the
 * type and the PROTECTION INTERVAL EXPONENT (n: 2^n intervals of
 * block_size >> n bytes per block, each with its own 8-byte tuple).
 *
 * Medium.  The tuples live in the same backend as the data, after it: the
 * tuple of interval j of LBA b at pi_offset + (b * 2^n + j) * 8.  They are
 * stored bit-inverted, so that a deallocated range (a hole reads zeros) holds
 * all-FFh tuples: the escape that switches checking off, which is what a
 * block never written or unmapped must carry (SBC-4 4.7.4.5, 4.22.4).  One
 * backend also means WRITE ATOMIC covers data and PI in one
 * intent-log record.
 *
 * Wire.  With a nonzero RDPROTECT/WRPROTECT/VRPROTECT the tuples travel
 * interleaved: interval data, its tuple, next interval (sbc_pi_split /
 * sbc_pi_join).  With zero the LU generates PI on write and strips it on
 * read, checking what it reads.
 *
 * Reference tags.  Type 1: the low 32 bits of the LBA, + j for interval j
 * of the block.  Type 2: with a 32-byte CDB the EXPECTED INITIAL LOGICAL
 * BLOCK REFERENCE TAG + k for the k-th interval of the command; with a
 * shorter CDB (PROTECT 0 only) generated as for type 1 and not checked.
 * Type 3: never checked; generated as 0 (Linux t10_pi_generate).
 * Application tags are checked only where the expected value is known: a
 * 32-byte CDB's EXPECTED LOGICAL BLOCK APPLICATION TAG under its mask (ATO
 * is 1).  They are generated as that expected tag, or 0.
 */
#ifndef SBCEMU_SBC_PI_H
#define SBCEMU_SBC_PI_H

#ifndef SBCE_BUILDING_SCSI
#error "sbcemu layering: sbc_pi.h is internal to the SCSI core (protocol/scsi/): use its public headers"
#endif

#include <stdbool.h>
#include <stdint.h>

#include "sbc/pi.h"
#include "core/scsi_internal.h"

/* INQUIRY PROTECT: the LU supports protection information. */
static inline bool sbc_lu_pi_capable(const struct scsi_lu *lu)
{
	return lu->params.protection_type != 0;
}

/* READ CAPACITY(16) PROT_EN: the LU is formatted with protection information. */
static inline bool sbc_lu_has_pi(const struct scsi_lu *lu)
{
	return lu->protection_type != 0;
}

/* PI tuples per logical block. */
static inline unsigned sbc_pi_intervals(const struct scsi_lu *lu)
{
	return 1u << lu->p_i_exponent;
}

/* Tuple bytes of nblocks logical blocks. */
static inline uint64_t sbc_pi_bytes(const struct scsi_lu *lu, uint64_t nblocks)
{
	return (nblocks * PI_TUPLE_LEN) << lu->p_i_exponent;
}

/* Bytes per logical block in the command's Data-In/Data-Out: the data, and its tuples when PROTECT != 0. */
static inline uint32_t sbc_wire_block_len(const struct scsi_cmd *cmd)
{
	const struct scsi_lu *lu = cmd->lu;

	if (cmd->protect && sbc_lu_has_pi(lu))
		return lu->block_size + (uint32_t)sbc_pi_bytes(lu, 1);
	return lu->block_size;
}

/* Which PI fields a command checks, and against what (the SBC-4 RDPROTECT / WRPROTECT / VRPROTECT tables). */
struct sbc_pi_checks {
	uint8_t type;
	bool guard, app, ref;
	bool ref_from_lba;     /* type 1 (and type 2 without a 32-byte CDB): tags follow the LBA */
	uint32_t ref_tag;      /* else: the expected tag of the command's first interval */
	uint16_t app_tag, app_mask;
};

/*
 * The checks a PROTECT value asks for (RDPROTECT, WRPROTECT, VRPROTECT all
 * share the table): 000b, 001b, 101b all; 010b no guard; 011b none; 100b the
 * guard only.
 */
void sbc_pi_checks_init(const struct scsi_cmd *cmd, uint8_t protect, struct sbc_pi_checks *c);

/*
 * Checks the tuples of nblocks blocks starting at lba against their data
 * (block_size bytes each); k0 is the command-relative index of the first
 * interval.  Returns true, or false with the sense of the first failure
 * (0B/10/01, 10/02, 10/03 with INFORMATION = its LBA) in *s.
 */
bool sbc_pi_verify(const struct scsi_lu *lu, const struct sbc_pi_checks *c, const uint8_t *data,
		   const uint8_t *tuples, uint64_t lba, uint32_t nblocks, uint64_t k0, struct scsi_sense_info *s);

/* The tuples a write with PROTECT 000b stores (guard computed, tags as described above). */
void sbc_pi_generate(const struct scsi_cmd *cmd, const uint8_t *data, uint64_t lba, uint32_t nblocks, uint64_t k0,
		     uint8_t *tuples);

/*
 * The copy manager's reads and writes of lu (copy/extended_copy.c), which
 * carry no expected tags: the checks of a READ with RDPROTECT 000b, and the
 * tuples a WRITE with WRPROTECT 000b would make.
 */
void sbc_pi_copy_checks(const struct scsi_lu *lu, struct sbc_pi_checks *c);
void sbc_pi_copy_generate(const struct scsi_lu *lu, const uint8_t *data, uint64_t lba, uint32_t nblocks, uint8_t *tuples);

/*
 * WRITE SAME: the tuples of blocks lba.. from those of the command's one
 * block (first): guards and application tags repeat; reference tags follow
 * the LBA (ref_from_lba), count up from first's (type 2), or repeat (type 3).
 */
void sbc_pi_replicate(const struct scsi_cmd *cmd, const uint8_t *first, uint64_t lba, uint32_t nblocks,
		      uint64_t k0, uint8_t *tuples);

/* Interleaved wire form <-> separate data and tuples. */
void sbc_pi_split(const struct scsi_lu *lu, const uint8_t *wire, uint32_t nblocks, uint8_t *data, uint8_t *tuples);
void sbc_pi_join(const struct scsi_lu *lu, const uint8_t *data, const uint8_t *tuples, uint32_t nblocks,
		 uint8_t *wire);

/* Tuples <-> their stored (bit-inverted) form, in place. */
void sbc_pi_medium_form(uint8_t *tuples, uint64_t len);

/* Backend byte offset of the tuple of the first interval of lba. */
static inline uint64_t sbc_pi_offset(const struct scsi_lu *lu, uint64_t lba)
{
	return lu->pi_offset + sbc_pi_bytes(lu, lba);
}

/*
 * The user data and tuples of nblocks blocks of a write's Data-Out (wire),
 * for any LU: without PI, data is wire and tuples NULL; with PROTECT 000b
 * tuples are generated; otherwise split from the wire and checked against
 * the WRPROTECT table.  k0 as for sbc_pi_verify.  Returns 0, a negative
 * errno, or 1 with the check failure in *s.  sbc_write_data_free releases.
 */
struct sbc_write_data {
	const uint8_t *data;
	uint8_t *tuples;
	uint8_t *owned;
};
int sbc_write_data_prepare(const struct scsi_cmd *cmd, const uint8_t *wire, uint64_t lba, uint32_t nblocks,
			   uint64_t k0, struct sbc_write_data *w, struct scsi_sense_info *s);
void sbc_write_data_free(struct sbc_write_data *w);

/*
 * Worker-side medium access with PI (the command holds the blocks' LBA
 * lock, lba_lock.c, so data and tuples move together).  Writes data
 * then tuples (tuples may be NULL: no PI; they are left in stored form).
 * Reads data and tuples (tuples may be NULL) and applies the LU's corrupt-pi fault rules;
 * flags 0, or BE_IO_NOWAIT: -EAGAIN rather than wait for the medium (the
 * loop thread, backend.h).  0 or a negative errno.
 */
int sbc_medium_write_pi(struct scsi_lu *lu, const uint8_t *data, uint8_t *tuples, uint64_t lba, uint32_t nblocks,
			unsigned flags);
int sbc_medium_read_pi(struct scsi_lu *lu, uint8_t *data, uint8_t *tuples, uint64_t lba, uint32_t nblocks,
		       unsigned flags);

/*
 * Reads nblocks at lba into data and (if not NULL) tuples and checks them
 * with c; flags as sbc_medium_read_pi's.  Returns 0, a negative errno, or 1
 * with *s set.
 */
int sbc_medium_read_checked(struct scsi_lu *lu, const struct sbc_pi_checks *c, uint64_t lba, uint32_t nblocks,
			    uint64_t k0, uint8_t *data, uint8_t *tuples, struct scsi_sense_info *s, unsigned flags);

/*
 * Writes the tuples of nblocks at lba (turned into their stored form in
 * place).  0 or a negative errno.
 */
int sbc_pi_store(struct scsi_lu *lu, uint8_t *tuples, uint64_t lba, uint32_t nblocks, unsigned flags);

/* Deallocates the tuples of a range (they read back as the escape). */
int sbc_pi_discard(struct scsi_lu *lu, uint64_t lba, uint64_t nblocks);

/*
 * FORMAT UNIT: the new protection format, at once for every later command
 * (loop thread; lu->generation moves, so a command parsed under the old
 * format is parsed again), and recorded in the state directory so that it
 * outlives a restart, until the configured type changes (sbc_pi_save_format,
 * a worker; 0 or a negative errno).
 */
void sbc_pi_set_format(struct scsi_lu *lu, uint8_t protection_type, uint8_t p_i_exponent);
int sbc_pi_save_format(struct scsi_lu *lu);

#endif
