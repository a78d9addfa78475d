/*
 * A SCSI core test harness: one device with one conventional LU on the memory
 * backend, one or two I_T nexuses, the inline executor, and a fake transport
 * that records what the core sends back.
 */
#ifndef SBCEMU_TEST_HARNESS_H
#define SBCEMU_TEST_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "scsi.h"

struct harness {
	struct scsi_device *dev;
	struct scsi_lu *lu;
	struct scsi_nexus *nexus[2];
	char state_dir[256];
};

/* The outcome of one command as the transport saw it. */
struct harness_result {
	bool completed;
	bool aborted;
	uint8_t status;
	uint8_t sense[SCSI_SENSE_BUFFER_MAX];
	uint32_t sense_len;
	uint8_t data_in[65536];
	uint32_t data_in_len;
	enum scsi_residual_kind residual_kind;
	uint32_t residual;
	/* harness_submit with hold_data_out: the core asked for the Data-Out, which waits for harness_deliver_data_out */
	bool data_out_wanted;
	void *task;
};

/* How harness_submit sends a command. */
struct harness_opts {
	int nexus;                 /* 0 or 1 */
	enum scsi_task_attr attr;  /* SCSI_TASK_SIMPLE, ... */
	uint32_t expected_length;  /* 0 = derive (as harness_run) */
	bool hold_data_out;        /* keep the Data-Out until harness_deliver_data_out */
	uint32_t lun;              /* 0 unless a test made more LUs */
};

/* The harness's fake transport (for nexuses a test creates itself). */
extern const struct scsi_transport_ops harness_transport;

/* A harness with an LU of num_blocks blocks of block_size bytes; params_in may be NULL. */
void harness_init(struct harness *h, uint64_t num_blocks, uint32_t block_size,
		  const struct scsi_lu_params *params_in);
void harness_fini(struct harness *h);
/* Clears the POWER ON unit attentions of both nexuses (with TEST UNIT READY). */
void harness_clear_ua(struct harness *h);

/*
 * Runs one command on nexus index 0 or 1.  data_out (may be NULL) is handed
 * over when the core asks for Data-Out; expected_length is the transport's
 * expected transfer length (0 = derive: data_out_len for writes, 65536 for reads).
 */
void harness_run(struct harness *h, int nexus, const uint8_t *cdb, unsigned cdb_len,
		 const void *data_out, uint32_t data_out_len, uint32_t expected_length,
		 struct harness_result *r);

/*
 * harness_run with options.  The result r must stay valid until the command
 * completes (it may complete later, with a manual executor or a held Data-Out).
 */
void harness_submit(struct harness *h, const struct harness_opts *o, const uint8_t *cdb, unsigned cdb_len,
		    const void *data_out, uint32_t data_out_len, struct harness_result *r);
/* Hands over the Data-Out the core asked for (false if it did not ask). */
bool harness_deliver_data_out(struct harness_result *r);

/* Convenience: sense key / ASC / ASCQ from r (fixed or descriptor format). */
uint8_t harness_sense_key(const struct harness_result *r);
uint16_t harness_asc_ascq(const struct harness_result *r);

/* Check assertions on a result (fixed-format sense, as the harness LU reports it). */
void harness_expect_good(const struct harness_result *r);
void harness_expect_sense(const struct harness_result *r, uint8_t key, uint16_t asc_ascq);
/* SENSE KEY SPECIFIC field pointer: SKSV, C/D = 1, BPV and BIT POINTER when bit >= 0, FIELD POINTER = byte. */
void harness_expect_field_pointer(const struct harness_result *r, uint16_t byte, int bit);
/* VALID = 1 and INFORMATION (bytes 3-6) = information. */
void harness_expect_information(const struct harness_result *r, uint32_t information);

/* WRITE(16) / READ(16) of n blocks of block_size bytes on nexus 0, expecting GOOD. */
/* Fills nblocks blocks of the LU's backend at lba with value, straight through the backend. */
void harness_fill(struct harness *h, uint64_t lba, uint32_t nblocks, uint8_t value);
/* Whether the backend's nblocks blocks at lba all hold value. */
bool harness_holds(struct harness *h, uint64_t lba, uint32_t nblocks, uint8_t value);
void harness_write16(struct harness *h, uint32_t block_size, uint64_t lba, uint32_t n, const uint8_t *data);
void harness_read16(struct harness *h, uint32_t block_size, uint64_t lba, uint32_t n, struct harness_result *r);

#endif
