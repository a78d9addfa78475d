/*
 * The media latency model of an LU: how long the medium takes to serve a
 * command (docs/latency.md).  Pure arithmetic on the model's own state (head
 * position, rotation, media cache, random stream): no clock, no I/O, no
 * commands.  The drive queue (media_queue.c) asks it which queued command
 * the drive would reach first and how long each one it serves takes.
 *
 * Models (struct scsi_latency_params, scsi.h):
 *   none          not used: commands take what the backing file takes;
 *   fixed         a fixed time per class of operation;
 *   distribution  a seeded log-normal time with a given mean and 99th
 *                 percentile;
 *   rotating      a disk drive: command overhead, seek time from the seek
 *                 distance, rotational position at the given rpm, transfer
 *                 rate by radius (outer tracks faster), head switches; on
 *                 zoned LUs with smr_cache_mib set, writes to conventional
 *                 zones go to a media cache that is cleaned when it fills
 *                 (the drive stalls) and while the drive is idle.
 */
#ifndef SBCEMU_MEDIA_MODEL_H
#define SBCEMU_MEDIA_MODEL_H

#ifndef SBCE_BUILDING_SCSI
#error "sbcemu layering: media_model.h is internal to the SCSI core (protocol/scsi/): use its public headers"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scsi.h"

enum scsi_media_class {
	SCSI_MEDIA_READ,  /* READ, VERIFY, PRE-FETCH, the read half of COMPARE AND WRITE */
	SCSI_MEDIA_WRITE, /* WRITE, WRITE SAME, WRITE ATOMIC, WRITE SCATTERED, UNMAP */
	SCSI_MEDIA_OTHER, /* SYNCHRONIZE CACHE, zone management, the rest that touches the medium */
};

/* One command as the medium sees it. */
struct scsi_media_request {
	enum scsi_media_class cls;
	uint64_t lba;
	uint64_t nblocks;          /* 0: no transfer (overhead, and positioning if lba is meaningful) */
	bool sequential_zone;      /* a write to a sequential write required zone (SMR: no media cache) */
};

struct scsi_media_model;

/* A model for an LU of num_blocks blocks of block_size bytes (NULL on ENOMEM); p was checked. */
struct scsi_media_model *scsi_media_model_create(const struct scsi_latency_params *p, uint64_t num_blocks,
						 uint32_t block_size, bool zoned);
void scsi_media_model_destroy(struct scsi_media_model *m);

/* How many commands the medium serves at once: 0 = any number (each takes its own time). */
unsigned scsi_media_model_servers(const struct scsi_media_model *m);
/* Whether the drive reorders equal commands by access time (rotating: shortest access time first). */
bool scsi_media_model_reorders(const struct scsi_media_model *m);
/*
 * Nanoseconds from now_ns until the medium could begin transferring req's
 * data (overhead, seek and rotational latency) from its present state,
 * without changing it: what shortest-access-time-first compares.
 */
uint64_t scsi_media_model_access_ns(const struct scsi_media_model *m, const struct scsi_media_request *req,
				    uint64_t now_ns);
/*
 * Serves req from now_ns: returns how long it takes in nanoseconds (at
 * least 1), and moves the model's state to where the medium is when it is
 * done (head position, media cache, random stream).
 */
uint64_t scsi_media_model_serve(struct scsi_media_model *m, const struct scsi_media_request *req, uint64_t now_ns);

#endif
