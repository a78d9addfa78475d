/*
 * The TCMU command ring (ring.h).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ring.h"

static uint32_t load_head(const struct tcmu_ring *r)
{
	return __atomic_load_n(&r->mb->cmd_head, __ATOMIC_ACQUIRE);
}

static uint32_t load_tail(const struct tcmu_ring *r)
{
	return __atomic_load_n(&r->mb->cmd_tail, __ATOMIC_RELAXED);
}

static void store_tail(struct tcmu_ring *r, uint32_t tail)
{
	__atomic_store_n(&r->mb->cmd_tail, tail, __ATOMIC_RELEASE);
}

static struct tcmu_cmd_entry_hdr *hdr_at(const struct tcmu_ring *r, uint32_t off)
{
	return (struct tcmu_cmd_entry_hdr *)(r->cmdr + off);
}

int tcmu_ring_init(struct tcmu_ring *r, void *map, size_t map_len, char *err, size_t errlen)
{
	struct tcmu_mailbox *mb = map;

	memset(r, 0, sizeof(*r));
	if (map_len < sizeof(*mb)) {
		snprintf(err, errlen, "the map (%zu bytes) is smaller than a mailbox", map_len);
		return -1;
	}
	if (mb->version != TCMU_MAILBOX_VERSION) {
		snprintf(err, errlen, "mailbox version %u, not %u", mb->version, TCMU_MAILBOX_VERSION);
		return -1;
	}
	if (mb->cmdr_off < sizeof(*mb) || mb->cmdr_size < sizeof(struct tcmu_cmd_entry) ||
	    (uint64_t)mb->cmdr_off + mb->cmdr_size > map_len || mb->cmdr_size % TCMU_OP_ALIGN_SIZE) {
		snprintf(err, errlen, "the command ring (offset %u, %u bytes) does not fit the %zu-byte map",
			 mb->cmdr_off, mb->cmdr_size, map_len);
		return -1;
	}
	r->map = map;
	r->map_len = map_len;
	r->mb = mb;
	r->cmdr = (uint8_t *)map + mb->cmdr_off;
	r->cmdr_size = mb->cmdr_size;
	r->flags = mb->flags;
	/* The kernel keeps both ends on entry boundaries (TCMU_OP_ALIGN_SIZE, target_core_user.h). */
	if (load_tail(r) % TCMU_OP_ALIGN_SIZE) {
		snprintf(err, errlen, "cmd_tail %u is not a multiple of %u", load_tail(r), (unsigned)TCMU_OP_ALIGN_SIZE);
		return -1;
	}
	r->next = load_tail(r) % r->cmdr_size;
	return 0;
}

/* An entry at off of length len lies in the ring without wrapping (the kernel pads the end instead). */
static bool entry_fits(const struct tcmu_ring *r, uint32_t off, uint32_t len)
{
	return len >= sizeof(struct tcmu_cmd_entry_hdr) && len % TCMU_OP_ALIGN_SIZE == 0 && len <= r->cmdr_size - off;
}

static int broken(char *err, size_t errlen, const char *what, uint32_t off)
{
	snprintf(err, errlen, "ring entry at %u: %s", off, what);
	return -1;
}

/* A map offset and length that lie inside the data area (past the command ring). */
static bool in_data_area(const struct tcmu_ring *r, uint64_t off, uint64_t len)
{
	uint64_t data_start = (uint64_t)r->mb->cmdr_off + r->cmdr_size;

	return off >= data_start && off <= r->map_len && len <= r->map_len - off;
}

static int decode_cmd(struct tcmu_ring *r, uint32_t off, uint32_t len, struct tcmu_ring_entry *e, char *err,
		      size_t errlen)
{
	const struct tcmu_cmd_entry *ent = (const struct tcmu_cmd_entry *)(r->cmdr + off);
	uint32_t cnt;
	uint64_t cdb_off;

	if (len < sizeof(struct tcmu_cmd_entry))
		return broken(err, errlen, "a command entry shorter than struct tcmu_cmd_entry", off);
	cnt = ent->req.iov_cnt;
	/*
	 * The data iovecs, then (not read: no BIDI command is served) the bidi
	 * ones, then the DIF ones, from req.iov on; they may overlay the response
	 * (tcmu_cmd_get_base_cmd_size: the entry is at least a whole struct).
	 */
	if ((uint64_t)ent->req.iov_cnt + ent->req.iov_bidi_cnt + ent->req.iov_dif_cnt >
	    (len - offsetof(struct tcmu_cmd_entry, req.iov)) / sizeof(struct iovec))
		return broken(err, errlen, "more iovecs than the entry holds", off);
	/* The entry is a packed struct: its iovecs are read with memcpy. */
	e->raw_iov = (const uint8_t *)ent + offsetof(struct tcmu_cmd_entry, req.iov);
	e->data_len = 0;
	for (uint32_t i = 0; i < cnt; i++) {
		struct iovec v;

		memcpy(&v, e->raw_iov + (size_t)i * sizeof(v), sizeof(v));
		if (!in_data_area(r, (uint64_t)(uintptr_t)v.iov_base, v.iov_len))
			return broken(err, errlen, "an iovec outside the data area", off);
		e->data_len += v.iov_len;
	}
	cdb_off = ent->req.cdb_off;
	if (cdb_off >= r->map_len)
		return broken(err, errlen, "a CDB outside the map", off);
	e->op = TCMU_OP_CMD;
	e->cmd_id = ent->hdr.cmd_id;
	e->cdb = r->map + cdb_off;
	e->cdb_max = r->map_len - cdb_off;
	e->iovcnt = cnt;
	return 1;
}

void tcmu_ring_iovecs(const struct tcmu_ring *r, const struct tcmu_ring_entry *e, struct iovec *iov)
{
	for (unsigned i = 0; i < e->iovcnt; i++) {
		struct iovec v;

		memcpy(&v, e->raw_iov + (size_t)i * sizeof(v), sizeof(v));
		iov[i].iov_base = r->map + (uintptr_t)v.iov_base;
		iov[i].iov_len = v.iov_len;
	}
}

uint16_t tcmu_ring_tmr_cmd_id(const struct tcmu_ring_entry *e, uint32_t i)
{
	uint16_t id;

	memcpy(&id, e->tmr_cmd_ids + (size_t)i * sizeof(id), sizeof(id));
	return id;
}

static int decode_tmr(struct tcmu_ring *r, uint32_t off, uint32_t len, struct tcmu_ring_entry *e, char *err,
		      size_t errlen)
{
	const struct tcmu_tmr_entry *ent = (const struct tcmu_tmr_entry *)(r->cmdr + off);

	if (len < sizeof(*ent) || ent->cmd_cnt > (len - sizeof(*ent)) / sizeof(uint16_t))
		return broken(err, errlen, "a task management entry longer than its length", off);
	e->op = TCMU_OP_TMR;
	e->cmd_id = ent->hdr.cmd_id;
	e->tmr_type = ent->tmr_type;
	e->tmr_cmd_ids = (const uint8_t *)ent + offsetof(struct tcmu_tmr_entry, cmd_ids);
	e->tmr_cmd_cnt = ent->cmd_cnt;
	return 1;
}

int tcmu_ring_next(struct tcmu_ring *r, struct tcmu_ring_entry *e, char *err, size_t errlen)
{
	/* PAD entries skipped in this call: more than the ring holds means cmd_head is not where entries end. */
	uint64_t skipped = 0;

	for (;;) {
		uint32_t head = load_head(r) % r->cmdr_size, off = r->next;
		const struct tcmu_cmd_entry_hdr *h;
		uint32_t len;
		int rc;

		if (head % TCMU_OP_ALIGN_SIZE)
			return broken(err, errlen, "cmd_head is not on an entry boundary", off);
		if (off == head)
			return 0;
		h = hdr_at(r, off);
		len = tcmu_hdr_get_len(h->len_op);
		if (!entry_fits(r, off, len))
			return broken(err, errlen, "a length that does not fit the ring", off);
		/* The kernel's entries end exactly at cmd_head: one that runs past it is not one of them. */
		if (len > (head + r->cmdr_size - off) % r->cmdr_size)
			return broken(err, errlen, "an entry running past cmd_head", off);
		switch (tcmu_hdr_get_op(h->len_op)) {
		case TCMU_OP_PAD:
			skipped += len;
			if (skipped > r->cmdr_size)
				return broken(err, errlen, "padding all around the ring without reaching cmd_head", off);
			r->next = (off + len) % r->cmdr_size;
			continue;
		case TCMU_OP_CMD:
			rc = decode_cmd(r, off, len, e, err, errlen);
			break;
		case TCMU_OP_TMR:
			rc = decode_tmr(r, off, len, e, err, errlen);
			break;
		default:
			return broken(err, errlen, "an unknown opcode", off);
		}
		if (rc > 0)
			r->next = (off + len) % r->cmdr_size;
		return rc;
	}
}

/* cmd_tail moved past PAD and TMR entries, to the oldest CMD slot (or to the cursor). */
static uint32_t skip_to_cmd(struct tcmu_ring *r, uint32_t tail)
{
	while (tail != r->next) {
		const struct tcmu_cmd_entry_hdr *h = hdr_at(r, tail);

		if (tcmu_hdr_get_op(h->len_op) == TCMU_OP_CMD)
			break;
		tail = (tail + tcmu_hdr_get_len(h->len_op)) % r->cmdr_size;
	}
	return tail;
}

bool tcmu_ring_complete(struct tcmu_ring *r, uint16_t cmd_id, uint8_t scsi_status, const uint8_t *sense,
			size_t sense_len, uint32_t read_len)
{
	uint32_t tail = skip_to_cmd(r, load_tail(r) % r->cmdr_size);
	struct tcmu_cmd_entry *ent;

	if (tail == r->next) {
		store_tail(r, tail);
		return false;
	}
	ent = (struct tcmu_cmd_entry *)(r->cmdr + tail);
	ent->hdr.cmd_id = cmd_id;
	ent->hdr.uflags = 0;
	/* The response overlays the request: its iovecs and CDB were read when the command was. */
	ent->rsp.scsi_status = scsi_status;
	ent->rsp.__pad1 = 0;
	ent->rsp.__pad2 = 0;
	memset(ent->rsp.sense_buffer, 0, sizeof(ent->rsp.sense_buffer));
	if (sense_len > sizeof(ent->rsp.sense_buffer))
		sense_len = sizeof(ent->rsp.sense_buffer);
	if (sense_len)
		memcpy(ent->rsp.sense_buffer, sense, sense_len);
	ent->rsp.read_len = 0;
	if (r->flags & TCMU_MAILBOX_FLAG_CAP_READ_LEN) {
		ent->hdr.uflags |= TCMU_UFLAG_READ_LEN;
		ent->rsp.read_len = read_len;
	}
	/* PAD and TMR entries right behind it are consumed too: the kernel can reuse their room. */
	store_tail(r, skip_to_cmd(r, (tail + tcmu_hdr_get_len(ent->hdr.len_op)) % r->cmdr_size));
	return true;
}

bool tcmu_ring_skip_idle(struct tcmu_ring *r)
{
	uint32_t tail = load_tail(r) % r->cmdr_size, moved = skip_to_cmd(r, tail);

	if (moved == tail)
		return false;
	store_tail(r, moved);
	return true;
}

unsigned tcmu_ring_outstanding(const struct tcmu_ring *r)
{
	uint32_t off = load_tail(r) % r->cmdr_size;
	unsigned n = 0;

	while (off != r->next) {
		const struct tcmu_cmd_entry_hdr *h = hdr_at(r, off);
		uint32_t len = tcmu_hdr_get_len(h->len_op);

		if (len == 0)
			break;
		if (tcmu_hdr_get_op(h->len_op) == TCMU_OP_CMD)
			n++;
		off = (off + len) % r->cmdr_size;
	}
	return n;
}
