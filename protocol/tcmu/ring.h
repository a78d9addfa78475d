/*
 * The TCMU command ring (the user side of linux/target_core_user.h, "Ring
 * Design"): the only code that touches struct tcmu_mailbox and the entries.
 *
 * The shared map is the mailbox, then the command ring (cmdr_off,
 * cmdr_size), then the data area.  The kernel appends entries and moves
 * cmd_head; the handler reads them from its own cursor (`next`), and writes
 * completions at cmd_tail, moving it past each: with
 * TCMU_MAILBOX_FLAG_CAP_OOOC a completion goes into the oldest CMD slot at
 * the tail whichever command it is for (the kernel finds the command by the
 * entry's cmd_id), so every CMD entry is consumed by exactly one completion
 * and PAD / TMR entries at the tail are stepped over.  cmd_head is read
 * with acquire ordering, cmd_tail written with release ordering (the
 * tcmu-runner aarch64 lesson: issue #688).
 */
#ifndef SBCEMU_TCMU_RING_H
#define SBCEMU_TCMU_RING_H

#ifndef SBCE_BUILDING_TCMU
#error "sbcemu layering: ring.h is internal to the TCMU front end (protocol/tcmu/): use its public header"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/*
 * linux/uio.h, which the UAPI header includes, defines struct iovec again
 * without a guard; glibc's <sys/uio.h> has the same layout.
 */
#define __LINUX_UIO_H
#include <linux/target_core_user.h>

struct tcmu_ring {
	uint8_t *map;
	size_t map_len;
	struct tcmu_mailbox *mb;
	uint8_t *cmdr;
	uint32_t cmdr_size;
	uint32_t next;      /* offset of the next entry to read */
	uint16_t flags;     /* the mailbox's capability flags */
};

/*
 * Checks the mailbox of a mapped area (version 2, the ring inside the map)
 * and starts reading at cmd_tail (entries past it that a previous handler
 * read but did not complete are read again).  0, or -1 with err.
 */
int tcmu_ring_init(struct tcmu_ring *r, void *map, size_t map_len, char *err, size_t errlen);

/* An entry the kernel queued: a command or a task management notification. */
struct tcmu_ring_entry {
	enum tcmu_opcode op;           /* TCMU_OP_CMD or TCMU_OP_TMR */
	uint16_t cmd_id;
	/* CMD: the CDB (pointer into the map) and the data buffers (tcmu_ring_iovecs) */
	const uint8_t *cdb;
	size_t cdb_max;                /* bytes from cdb to the end of the map */
	const uint8_t *raw_iov;        /* the entry's struct iovecs (offsets into the map, checked; unaligned) */
	unsigned iovcnt;               /* data iovecs */
	uint64_t data_len;             /* sum of the data iovecs */
	/* TMR: the function and the commands it concerns */
	uint8_t tmr_type;
	const uint8_t *tmr_cmd_ids;    /* tmr_cmd_cnt 16-bit cmd_ids, in the map (tcmu_ring_tmr_cmd_id) */
	uint32_t tmr_cmd_cnt;
};

/*
 * The next entry the kernel queued (PAD entries are stepped over), or 0
 * when there is none: 1 with *e filled, or -1 with err when the entry is not
 * one the kernel could have written (an iovec outside the data area, a CDB
 * outside the map, a length that does not fit the ring): the ring is broken.
 */
int tcmu_ring_next(struct tcmu_ring *r, struct tcmu_ring_entry *e, char *err, size_t errlen);
/* The i-th command a TMR entry names. */
uint16_t tcmu_ring_tmr_cmd_id(const struct tcmu_ring_entry *e, uint32_t i);
/* The data buffers of a CMD entry as pointers into the map (iov: e->iovcnt slots). */
void tcmu_ring_iovecs(const struct tcmu_ring *r, const struct tcmu_ring_entry *e, struct iovec *iov);

/*
 * Writes the completion of cmd_id at cmd_tail (out-of-order completion:
 * the oldest CMD slot, whoever it held) and moves cmd_tail past it.
 * sense_len bytes of sense (at most TCMU_SENSE_BUFFERSIZE); read_len, when
 * the kernel offers TCMU_MAILBOX_FLAG_CAP_READ_LEN, is the Data-In length.
 * Returns false when no CMD entry is left between cmd_tail and the read
 * cursor (a completion for a command that was never read).
 */
bool tcmu_ring_complete(struct tcmu_ring *r, uint16_t cmd_id, uint8_t scsi_status, const uint8_t *sense,
			size_t sense_len, uint32_t read_len);

/*
 * Moves cmd_tail past PAD and TMR entries that have been read and hold no
 * command (a TMR read while nothing else was outstanding).  True if it moved.
 */
bool tcmu_ring_skip_idle(struct tcmu_ring *r);

/* CMD entries read and not yet completed (the slots between cmd_tail and the cursor). */
unsigned tcmu_ring_outstanding(const struct tcmu_ring *r);

#endif
