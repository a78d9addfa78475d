/*
 * The simulated kernel side of TCMU (fake_kernel.h).  The ring rules follow
 * drivers/target/target_core_user.c: is_ring_space_avail (one byte kept
 * free, a PAD entry to the end of the ring when a command would wrap),
 * tcmu_setup_cmd / queue_cmd_ring (cdb_off and iov_base as offsets from the
 * mailbox, the iovecs from req.iov on, the CDB after them and after the
 * whole struct, the entry 8-byte aligned) and
 * tcmu_handle_completions (from cmdr_last_cleaned to cmd_tail, PAD and TMR
 * entries stepped over, each CMD entry's cmd_id names the command it
 * completes).
 */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fake_kernel.h"

#define ALIGN8(x) (((x) + 7u) & ~7u)

/* tcmu_hdr_set_op / tcmu_hdr_set_len, without a pointer into the packed header. */
static uint32_t len_op(enum tcmu_opcode op, uint32_t len)
{
	uint32_t v = 0;

	tcmu_hdr_set_op(&v, op);
	tcmu_hdr_set_len(&v, len);
	return v;
}

void fk_init(struct fake_kernel *k, uint32_t cmdr_size, uint32_t nblocks, uint16_t flags)
{
	memset(k, 0, sizeof(*k));
	k->cmdr_off = sizeof(struct tcmu_mailbox);
	k->cmdr_size = cmdr_size;
	k->data_off = (k->cmdr_off + cmdr_size + FK_BLOCK - 1) / FK_BLOCK * FK_BLOCK;
	k->nblocks = nblocks;
	k->map_len = k->data_off + (size_t)nblocks * FK_BLOCK;
	k->memfd = memfd_create("fake-tcmu", 0);
	ck_assert_int_ge(k->memfd, 0);
	ck_assert_int_eq(ftruncate(k->memfd, (off_t)k->map_len), 0);
	k->map = mmap(NULL, k->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, k->memfd, 0);
	ck_assert_ptr_ne(k->map, MAP_FAILED);
	k->mb = (struct tcmu_mailbox *)k->map;
	k->mb->version = TCMU_MAILBOX_VERSION;
	k->mb->flags = flags;
	k->mb->cmdr_off = k->cmdr_off;
	k->mb->cmdr_size = cmdr_size;
	k->block_used = calloc(nblocks, 1);
	k->kernel_fd = k->user_fd = -1;
	k->next_id = 1;
}

void fk_destroy(struct fake_kernel *k)
{
	munmap(k->map, k->map_len);
	close(k->memfd);
	if (k->kernel_fd >= 0)
		close(k->kernel_fd);
	free(k->block_used);
}

void fk_handler_view(struct fake_kernel *k, void **map, size_t *map_len, int *fd)
{
	int sv[2];

	*map = mmap(NULL, k->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, k->memfd, 0);
	ck_assert_ptr_ne(*map, MAP_FAILED);
	*map_len = k->map_len;
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv), 0);
	if (k->kernel_fd >= 0)
		close(k->kernel_fd);
	k->kernel_fd = sv[0];
	*fd = sv[1];
}

static uint32_t spc_free(uint32_t head, uint32_t tail, uint32_t size)
{
	uint32_t used = head >= tail ? head - tail : size - (tail - head);

	return size - used - 1;
}

uint32_t fk_ring_free(const struct fake_kernel *k)
{
	return spc_free(k->mb->cmd_head, k->last_cleaned, k->cmdr_size);
}

/* Room for an entry of size bytes at cmd_head, with the PAD it may need; pads the ring end if so. */
static bool ring_take(struct fake_kernel *k, uint32_t size, uint32_t *off)
{
	uint32_t head = k->mb->cmd_head, to_end = k->cmdr_size - head;
	uint32_t needed = to_end >= size ? size : size + to_end;

	if (spc_free(head, k->last_cleaned, k->cmdr_size) < needed)
		return false;
	if (to_end < size) {
		struct tcmu_cmd_entry_hdr *pad = (struct tcmu_cmd_entry_hdr *)(k->map + k->cmdr_off + head);

		pad->len_op = len_op(TCMU_OP_PAD, to_end);
		pad->cmd_id = 0;
		pad->kflags = pad->uflags = 0;
		head = 0;
	}
	*off = head;
	return true;
}

static void ring_publish(struct fake_kernel *k, uint32_t off, uint32_t size)
{
	uint32_t one = 1;

	__atomic_store_n(&k->mb->cmd_head, (off + size) % k->cmdr_size, __ATOMIC_RELEASE);
	if (k->kernel_fd >= 0) /* uio_event_notify; no handler has the device open yet otherwise */
		ck_assert_int_eq(write(k->kernel_fd, &one, sizeof(one)), sizeof(one));
}

static unsigned blocks_free(const struct fake_kernel *k)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < k->nblocks; i++)
		n += !k->block_used[i];
	return n;
}

int fk_queue(struct fake_kernel *k, const uint8_t *cdb, size_t cdb_len, enum fk_dir dir, const void *out,
	     uint32_t len)
{
	unsigned need = (len + FK_BLOCK - 1) / FK_BLOCK, niov = 0;
	uint32_t blocks[64], base, size, off;
	struct tcmu_cmd_entry *ent;
	struct fk_cmd *c;
	struct iovec iov[64];
	uint16_t id;

	ck_assert_uint_le(need, 64);
	if (blocks_free(k) < need * (k->fragment ? 2 : 1))
		return -1;
	for (uint32_t i = 0, n = 0; n < need && i < k->nblocks; i++) {
		if (k->block_used[i])
			continue;
		if (k->fragment && n && blocks[n - 1] + 1 == i)
			continue; /* leave a hole, so this buffer needs another iovec */
		blocks[n++] = i;
	}
	/* One iovec per run of adjacent blocks (tcmu_setup_iovs). */
	for (unsigned i = 0; i < need; i++) {
		uint32_t blen = i == need - 1 ? len - i * FK_BLOCK : FK_BLOCK;

		if (niov && blocks[i] == blocks[i - 1] + 1)
			iov[niov - 1].iov_len += blen;
		else
			iov[niov++] = (struct iovec){ .iov_base = (void *)(uintptr_t)(k->data_off + blocks[i] * FK_BLOCK),
						      .iov_len = blen };
	}
	/* tcmu_cmd_get_base_cmd_size: the iovecs from req.iov on, the entry at least a whole struct. */
	base = (uint32_t)(offsetof(struct tcmu_cmd_entry, req.iov) + niov * sizeof(struct iovec));
	if (base < sizeof(struct tcmu_cmd_entry))
		base = sizeof(struct tcmu_cmd_entry);
	size = ALIGN8(base + (uint32_t)cdb_len);
	if (!ring_take(k, size, &off))
		return -1;
	for (id = k->next_id; k->cmd[id].queued || id == 0; id = (uint16_t)((id + 1) % FK_MAX_CMDS))
		;
	k->next_id = (uint16_t)((id + 1) % FK_MAX_CMDS);
	c = &k->cmd[id];
	memset(c, 0, sizeof(*c));
	c->queued = true;
	c->len = len;
	c->nblocks = need;
	for (unsigned i = 0; i < need; i++) {
		c->blocks[i] = blocks[i];
		k->block_used[blocks[i]] = 1;
		memset(k->map + k->data_off + blocks[i] * FK_BLOCK, dir == FK_FROM_DEVICE ? 0xa5 : 0, FK_BLOCK);
	}
	if (dir == FK_TO_DEVICE)
		for (unsigned i = 0; i < need; i++) {
			uint32_t blen = i == need - 1 ? len - i * FK_BLOCK : FK_BLOCK;

			memcpy(k->map + k->data_off + blocks[i] * FK_BLOCK, (const uint8_t *)out + i * FK_BLOCK, blen);
		}
	ent = (struct tcmu_cmd_entry *)(k->map + k->cmdr_off + off);
	memset(ent, 0, size);
	ent->hdr.len_op = len_op(TCMU_OP_CMD, size);
	ent->hdr.cmd_id = id;
	ent->req.iov_cnt = niov;
	ent->req.cdb_off = k->cmdr_off + off + base;
	memcpy((uint8_t *)ent + offsetof(struct tcmu_cmd_entry, req.iov), iov, niov * sizeof(struct iovec));
	memcpy((uint8_t *)ent + base, cdb, cdb_len);
	ring_publish(k, off, size);
	return id;
}

bool fk_queue_tmr(struct fake_kernel *k, uint8_t type, const uint16_t *ids, uint32_t n)
{
	uint32_t size = ALIGN8((uint32_t)sizeof(struct tcmu_tmr_entry) + n * 2), off;
	struct tcmu_tmr_entry *ent;

	if (!ring_take(k, size, &off))
		return false;
	ent = (struct tcmu_tmr_entry *)(k->map + k->cmdr_off + off);
	memset(ent, 0, size);
	ent->hdr.len_op = len_op(TCMU_OP_TMR, size);
	ent->tmr_type = type;
	ent->cmd_cnt = n;
	memcpy((uint8_t *)ent + offsetof(struct tcmu_tmr_entry, cmd_ids), ids, n * 2);
	ring_publish(k, off, size);
	return true;
}

void fk_data(const struct fake_kernel *k, uint16_t cmd_id, void *buf, uint32_t len)
{
	const struct fk_cmd *c = &k->cmd[cmd_id];

	ck_assert_uint_le(len, c->len);
	for (unsigned i = 0; i * FK_BLOCK < len; i++) {
		uint32_t blen = len - i * FK_BLOCK < FK_BLOCK ? len - i * FK_BLOCK : FK_BLOCK;

		memcpy((uint8_t *)buf + i * FK_BLOCK, k->map + k->data_off + c->blocks[i] * FK_BLOCK, blen);
	}
}

unsigned fk_reap(struct fake_kernel *k)
{
	uint32_t tail = __atomic_load_n(&k->mb->cmd_tail, __ATOMIC_ACQUIRE), kick;
	unsigned n = 0;

	while (read(k->kernel_fd, &kick, sizeof(kick)) == sizeof(kick))
		k->kicks_seen++;
	while (k->last_cleaned != tail && !k->broken) {
		struct tcmu_cmd_entry *ent = (struct tcmu_cmd_entry *)(k->map + k->cmdr_off + k->last_cleaned);
		uint32_t len = tcmu_hdr_get_len(ent->hdr.len_op);
		struct fk_cmd *c;

		ck_assert_uint_ne(len, 0);
		if (tcmu_hdr_get_op(ent->hdr.len_op) == TCMU_OP_CMD) {
			c = ent->hdr.cmd_id < FK_MAX_CMDS ? &k->cmd[ent->hdr.cmd_id] : NULL;
			if (!c || !c->queued) {
				k->broken = true; /* "cmd_id %u not found, ring is broken" */
				break;
			}
			c->queued = false;
			c->completed = true;
			c->completions++;
			c->status = ent->rsp.scsi_status;
			c->uflags = ent->hdr.uflags;
			c->read_len = ent->rsp.read_len;
			memcpy(c->sense, ent->rsp.sense_buffer, sizeof(c->sense));
			for (unsigned i = 0; i < c->nblocks; i++)
				k->block_used[c->blocks[i]] = 0;
			n++;
		}
		k->last_cleaned = (k->last_cleaned + len) % k->cmdr_size;
	}
	return n;
}

unsigned fk_reset_ring(struct fake_kernel *k)
{
	unsigned n = 0;

	for (unsigned id = 0; id < FK_MAX_CMDS; id++) {
		struct fk_cmd *c = &k->cmd[id];

		if (!c->queued)
			continue;
		c->queued = false;
		c->completed = true;
		c->status = 0x08; /* SAM_STAT_BUSY */
		for (unsigned i = 0; i < c->nblocks; i++)
			k->block_used[c->blocks[i]] = 0;
		n++;
	}
	k->mb->cmd_head = 0;
	k->mb->cmd_tail = 0;
	k->last_cleaned = 0;
	return n;
}
