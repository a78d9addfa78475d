/*
 * A simulated kernel side of TCMU for the front end's tests: a mailbox,
 * command ring and data area in shared memory laid out as
 * linux/target_core_user.h says, filled and reaped the way
 * drivers/target/target_core_user.c does (entries at cmd_head with a PAD
 * entry where one would run past the end of the ring, data in fixed-size
 * blocks of the data area, completions reaped from the last cleaned entry
 * to cmd_tail by the cmd_id each one carries, a kick through the UIO fd).
 */
#ifndef SBCEMU_TEST_FAKE_KERNEL_H
#define SBCEMU_TEST_FAKE_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define __LINUX_UIO_H
#include <linux/target_core_user.h>

#define FK_MAX_CMDS 512
#define FK_BLOCK 4096u

enum fk_dir { FK_NONE, FK_TO_DEVICE, FK_FROM_DEVICE };

struct fk_cmd {
	bool queued;           /* in the ring, no completion reaped yet */
	bool completed;        /* a completion was reaped */
	unsigned completions;  /* completions reaped for this cmd_id (1 for a good run) */
	uint8_t status;
	uint8_t sense[TCMU_SENSE_BUFFERSIZE];
	uint8_t uflags;
	uint32_t read_len;
	uint32_t len;          /* data buffer length */
	unsigned nblocks;
	uint32_t blocks[64];   /* data area blocks, in buffer order */
};

struct fake_kernel {
	int memfd;
	uint8_t *map;          /* the kernel's view */
	size_t map_len;
	struct tcmu_mailbox *mb;
	uint32_t cmdr_off, cmdr_size, data_off, nblocks;
	uint32_t last_cleaned;
	uint8_t *block_used;
	bool fragment;         /* hand out every other free block, so buffers need several iovecs */
	int kernel_fd;         /* the kernel's end of the UIO fd pair */
	int user_fd;           /* the handler's end, until fk_attach hands it over */
	uint16_t next_id;
	bool broken;           /* a completion named a cmd_id with no command: the kernel marks the ring broken */
	unsigned kicks_seen;   /* 4-byte writes the handler made */
	struct fk_cmd cmd[FK_MAX_CMDS];
};

/* A ring of cmdr_size bytes and a data area of nblocks blocks; flags: TCMU_MAILBOX_FLAG_CAP_*. */
void fk_init(struct fake_kernel *k, uint32_t cmdr_size, uint32_t nblocks, uint16_t flags);
void fk_destroy(struct fake_kernel *k);

/*
 * A second mapping of the shared area and a fresh UIO fd pair for the
 * handler (what mmap of /dev/uioN and open give it): *map, *map_len, *fd.
 */
void fk_handler_view(struct fake_kernel *k, void **map, size_t *map_len, int *fd);

/*
 * Queues a command (the CDB, a data buffer of len bytes; for FK_TO_DEVICE
 * out is copied into it).  Returns the cmd_id, or -1 when ring or data
 * area has no room (the kernel would hold it in its qfull queue).
 */
int fk_queue(struct fake_kernel *k, const uint8_t *cdb, size_t cdb_len, enum fk_dir dir, const void *out,
	     uint32_t len);
/* Queues a TMR entry naming ids[n]; false when the ring has no room. */
bool fk_queue_tmr(struct fake_kernel *k, uint8_t type, const uint16_t *ids, uint32_t n);
/* Copies the data buffer of cmd_id (what a READ brought) into buf. */
void fk_data(const struct fake_kernel *k, uint16_t cmd_id, void *buf, uint32_t len);
/* Reaps completions (tcmu_handle_completions) and counts the handler's kicks; returns how many were reaped. */
unsigned fk_reap(struct fake_kernel *k);
/*
 * What the kernel's reset_ring action does (tcmu_reset_ring): every command
 * in the ring completes to the initiator with BUSY, head and tail go back
 * to 0.  Returns how many commands it failed.
 */
unsigned fk_reset_ring(struct fake_kernel *k);
/* Bytes free in the command ring. */
uint32_t fk_ring_free(const struct fake_kernel *k);

#endif
