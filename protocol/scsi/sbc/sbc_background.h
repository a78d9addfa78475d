/*
 * Operations on the whole medium that may outlive their command: FORMAT UNIT
 * (SBC-4 5.4) and SANITIZE (SBC-4 5.32).  With IMMED = 1 the command returns
 * GOOD once its CDB and parameter data are validated and the operation goes
 * on alone; with IMMED = 0 the command waits for the end.  Either way the
 * operation runs in chunks, one struct scsi_io_job per chunk on the device's
 * executor, and publishes its progress in lu->progress: the core's NOT READY
 * gate then terminates other commands with 02/04/04 or 02/04/1B carrying the
 * progress indication, and REQUEST SENSE reports it (SPC-4 4.5 (sense-key specific PROGRESS INDICATION)).
 *
 * The operation belongs to the LU, not to the command: task management
 * functions and I_T nexus loss abort the waiting command (it is released at
 * the next chunk boundary) but not the operation (SBC-4 4.11: a sanitize
 * operation survives resets).
 *
 * Zoned LUs: the caller sets the zone conditions (zbc_reset_all_zones /
 * zbc_fill_all_zones) before the start; the last chunk persists them.
 *
 * Threading: sbc_background_start() and the end callback run on the loop
 * thread; the chunks run on workers.  FORMAT UNIT and SANITIZE are
 * OP_QUIESCE commands: they start only when no other command of the LU
 * runs, and sbc_background_start() lets younger commands go
 * (scsi_cmd_unquiesce) only once lu->progress is set, so each of them either
 * ended before the first chunk or meets the NOT READY gate; nothing else
 * touches the medium while the chunks run.
 */
#ifndef SBCEMU_SBC_BACKGROUND_H
#define SBCEMU_SBC_BACKGROUND_H

#ifndef SBCE_BUILDING_SCSI
#error "sbcemu layering: sbc_background.h is internal to the SCSI core (protocol/scsi/): use its public headers"
#endif

#include "core/scsi_internal.h"

/* What each pass does to every logical block. */
enum sbc_background_method {
	SBC_BG_DEALLOCATE, /* backend discard: the blocks become deallocated and read as zeros */
	SBC_BG_ZEROES,     /* backend write_zeroes: the blocks stay mapped and read as zeros */
	SBC_BG_PATTERN,    /* write a one-block pattern to every block */
};

struct sbc_background_op;

/*
 * Called once on the loop thread when the operation has ended, after
 * lu->progress was cleared.  err is 0 or the first negative errno of the
 * backend.  If op->cmd is not NULL the callback sets its status (GOOD is the
 * default) and the engine completes it afterwards.
 */
typedef void (*sbc_background_end_fn)(struct sbc_background_op *op, int err);

struct sbc_background_op {
	/* ---- filled by the caller before sbc_background_start() ---- */
	struct scsi_lu *lu;
	uint16_t asc_ascq;                  /* ASC_SANITIZE_IN_PROGRESS_NR or ..._FORMAT_IN_PROGRESS */
	enum sbc_background_method method;
	uint8_t *pattern;                   /* SBC_BG_PATTERN: one logical block, freed by the engine */
	unsigned passes;                    /* 1 or more */
	bool invert;                        /* SBC_BG_PATTERN: invert the pattern between passes */
	uint64_t rate;                      /* emulated medium speed in bytes per second; 0 = backend speed */
	struct scsi_cmd *cmd;               /* the command waiting for the end (IMMED = 0), or NULL */
	sbc_background_end_fn end;
	bool ause;                          /* SANITIZE: AUSE of the command that started it */
	bool save_format;                   /* FORMAT UNIT: record the new protection format first (worker) */

	/* ---- private to sbc_background.c ---- */
	struct scsi_io_job job;
	uint8_t *chunk;                     /* SBC_BG_PATTERN: the pattern repeated over one chunk */
	uint64_t size;                      /* bytes per pass */
	uint64_t offset;                    /* next byte of the current pass */
	unsigned pass;                      /* passes finished */
	uint64_t start_ns;
	int err;
};

/* A zeroed operation for lu, or NULL when out of memory. */
struct sbc_background_op *sbc_background_alloc(struct scsi_lu *lu);
/* Frees an operation that was never started. */
void sbc_background_free(struct sbc_background_op *op);
/*
 * Marks the LU busy (lu->progress), lets the younger commands of starter
 * (the FORMAT UNIT or SANITIZE command, an OP_QUIESCE one) go to the NOT
 * READY gate, and submits the first chunk.  Returns false (op freed, LU
 * untouched) when the chunk buffer cannot be allocated.  With the
 * synchronous executor the whole operation, end callback included, has run
 * when this returns: the caller must not touch op, op->cmd or starter after
 * a successful start.
 */
bool sbc_background_start(struct sbc_background_op *op, struct scsi_cmd *starter);

#endif
