/*
 * Internals shared by the files of the media latency model
 * (media_model.c: checks, dispatch, the fixed and distribution models;
 * media_rotating.c: the rotating model and the SMR media cache).  Nothing
 * outside protocol/scsi/media/ includes this: the rest of the core uses
 * media_model.h.
 */
#ifndef SBCEMU_MEDIA_INTERNAL_H
#define SBCEMU_MEDIA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "media/media_model.h"

/* The rotating model, its defaults applied and its units converted (ns, bytes, bytes per ns). */
struct scsi_media_rotating {
	uint64_t num_blocks;
	uint32_t block_size;
	uint64_t rev_ns;           /* one revolution: 60 s / rpm, rounded to the ns */
	uint64_t phase_ns;         /* rotational position at t = 0, from the seed */
	uint32_t cylinders;
	double seek_knee;          /* cylinders / 3: square-root curve below, linear above */
	double seek_a_ns, seek_b_ns; /* short seeks: a + b * sqrt(d) */
	double seek_c_ns, seek_e_ns; /* long seeks: c + e * d */
	uint64_t head_switch_ns;
	uint64_t overhead_ns;
	double rate_outer, rate_inner; /* bytes per ns (MB/s / 1000) */
	/* SMR media cache (zoned LUs, smr_cache_mib > 0) */
	bool smr;
	double smr_cache_bytes;
	double smr_clean_rate;     /* bytes per ns */

	/* State: where the medium is when the last command served ends. */
	uint64_t cylinder;
	bool streaming;            /* next_lba is meaningful */
	uint64_t next_lba;         /* the block after the last one transferred */
	uint64_t stream_end_ns;    /* when that transfer ended */
	uint64_t last_end_ns;      /* when the last command served ended */
	double smr_fill;           /* bytes in the media cache at last_end_ns */
};

struct scsi_media_model {
	enum scsi_latency_model model;
	unsigned servers;
	union {
		struct {
			uint64_t ns[3];    /* by enum scsi_media_class */
		} fixed;
		struct {
			double mu, sigma;  /* of ln(service time in us) */
			uint64_t rng;      /* splitmix64 state */
			bool has_spare;    /* Box-Muller gives normals in pairs */
			double spare;
		} dist;
		struct scsi_media_rotating rot;
	} u;
};

/* splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014). */
static inline uint64_t scsi_media_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The rotating defaults (docs/latency.md) put in every field left 0. */
void scsi_media_rotating_defaults(struct scsi_latency_params *p);
/* The rotating part of scsi_latency_params_check, on p with its defaults applied. */
int scsi_media_rotating_check(const struct scsi_latency_params *p, char *err, size_t errlen);
/* Fills r from p (defaults applied here) for an LU of num_blocks blocks of block_size bytes. */
void scsi_media_rotating_init(struct scsi_media_rotating *r, const struct scsi_latency_params *p,
			      uint64_t num_blocks, uint32_t block_size, bool zoned);
uint64_t scsi_media_rotating_access_ns(const struct scsi_media_rotating *r, const struct scsi_media_request *req,
				       uint64_t now_ns);
uint64_t scsi_media_rotating_serve(struct scsi_media_rotating *r, const struct scsi_media_request *req,
				   uint64_t now_ns);

#endif
