/*
 * fuzz_tcmu_ring: the TCMU command ring as the kernel leaves it in the
 * shared map (linux/target_core_user.h, "Ring Design"): the mailbox checks
 * (tcmu_ring_init), entry decoding with its bounds (tcmu_ring_next: PAD,
 * CMD with its iovecs and CDB offset, TMR with its cmd_ids), completions
 * written back at cmd_tail (tcmu_ring_complete, tcmu_ring_skip_idle), and
 * in the second mode the whole device (protocol/tcmu/device.c): entries
 * become SCSI commands on a memory-backed LU whose Data-Out and Data-In are
 * the data area itself.
 *
 * The kernel is trusted to write a sane ring; this harness checks that a
 * ring it did not write (a kernel bug, a stale map after a restart, another
 * process with the UIO device open) cannot make the daemon read or write
 * outside the map.
 *
 * Input:
 *   byte 0     bit 0: 0 = the ring functions alone on a heap copy of the map
 *              (reads past its end are caught by ASan; the map is padded
 *              with zeros to a multiple of 64 bytes), 1 = the device
 *              (tcmu_server_attach / tcmu_server_poll / tcmu_server_detach),
 *              the map ending at an inaccessible page;
 *              bit 1: complete commands newest first (out-of-order, which
 *              TCMU_MAILBOX_FLAG_CAP_OOOC allows), else oldest first;
 *              bits 2-4: the LU variant (device mode, enum fuzz_lu_variant);
 *              bit 5 (device mode): leave cmd_head where the map says at
 *              attach time, so the attach goes through the kernel's
 *              reset_ring (simulated: head and tail back to 0)
 *   bytes 1-4  a second cmd_head (little endian, as the mailbox holds it):
 *              after the first round of entries is read and completed, the
 *              "kernel" moves cmd_head there and the ring is read again
 *   byte 5..   the map: struct tcmu_mailbox, the command ring at cmdr_off
 *              (cmdr_size bytes), the data area after it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "backend.h"
#include "fuzz_lu.h"
#include "tcmu_internal.h"

#define MAX_ENTRIES 256
#define MINOR 3
#define PAGE 4096u
/* struct tcmu_mailbox is 64-byte aligned (its cmd_tail is): the kernel's map starts on a page. */
#define MAP_ALIGN 64u

/* ---- the ring functions alone ---- */

static uint8_t touch(const uint8_t *p, size_t len)
{
	uint8_t x = 0;

	for (size_t i = 0; i < len; i++)
		x ^= p[i];
	return x;
}

/* Reads the entries the kernel queued and completes them; returns how many CMD entries there were. */
static unsigned ring_round(struct tcmu_ring *r, bool newest_first)
{
	static const uint8_t sense[18] = { 0x70, 0, 0x05, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x24, 0x00 };
	uint16_t ids[MAX_ENTRIES];
	unsigned n = 0;
	volatile uint8_t sink = 0;
	char err[160];

	for (int i = 0; i < MAX_ENTRIES; i++) {
		struct tcmu_ring_entry e;
		int rc = tcmu_ring_next(r, &e, err, sizeof(err));

		if (rc <= 0)
			break;
		if (getenv("FUZZ_VERBOSE"))
			fprintf(stderr, "entry: op %d cmd_id %u, %u iovecs, %llu bytes\n", e.op, e.cmd_id, e.iovcnt,
				(unsigned long long)e.data_len);
		if (e.op == TCMU_OP_CMD) {
			struct iovec *iov = calloc(e.iovcnt ? e.iovcnt : 1, sizeof(*iov));

			if (!iov)
				abort();
			/* What device.c reads: the CDB (at most 32 bytes, within cdb_max) and every data buffer. */
			sink ^= touch(e.cdb, e.cdb_max < SCSI_MAX_CDB_LEN ? e.cdb_max : SCSI_MAX_CDB_LEN);
			tcmu_ring_iovecs(r, &e, iov);
			for (unsigned j = 0; j < e.iovcnt; j++)
				sink ^= touch(iov[j].iov_base, iov[j].iov_len);
			free(iov);
			ids[n++] = e.cmd_id;
		} else {
			for (uint32_t j = 0; j < e.tmr_cmd_cnt; j++)
				sink ^= (uint8_t)tcmu_ring_tmr_cmd_id(&e, j);
		}
	}
	(void)sink;
	tcmu_ring_outstanding(r);
	for (unsigned i = 0; i < n; i++) {
		uint16_t id = ids[newest_first ? n - 1 - i : i];

		tcmu_ring_complete(r, id, i & 1 ? 0x02 : 0x00, i & 1 ? sense : NULL, i & 1 ? sizeof(sense) : 0,
				   512 * i);
	}
	tcmu_ring_skip_idle(r);
	return n;
}

static void fuzz_ring(const uint8_t *map_in, size_t map_len, uint32_t head2, bool newest_first)
{
	size_t padded = (map_len + MAP_ALIGN - 1) & ~(size_t)(MAP_ALIGN - 1);
	struct tcmu_ring r;
	char err[160];
	uint8_t *map = aligned_alloc(MAP_ALIGN, padded ? padded : MAP_ALIGN);

	if (!map)
		abort();
	memset(map, 0, padded);
	memcpy(map, map_in, map_len);
	if (tcmu_ring_init(&r, map, padded, err, sizeof(err)) == 0) {
		ring_round(&r, newest_first);
		/* The kernel queues more behind the completions (RFC-less: target_core_user.c queue_cmd_ring). */
		__atomic_store_n(&r.mb->cmd_head, head2, __ATOMIC_RELEASE);
		ring_round(&r, newest_first);
	}
	free(map);
}

/* ---- the device ---- */

static struct {
	struct ev_loop *loop;
	struct tcmu_server *srv;
	enum fuzz_lu_variant variant;
	struct tcmu_mailbox *mb;
} D;

static struct scsi_device *open_device(void *arg, const struct tcmu_device_info *info, char *reason, size_t len)
{
	struct scsi_device *dev = scsi_device_create(info->name, &scsi_executor_inline, NULL);

	(void)arg;
	(void)reason;
	(void)len;
	if (!dev)
		abort();
	fuzz_lu_create(dev, D.variant, 0);
	return dev;
}

static void close_device(void *arg, struct scsi_device *dev)
{
	(void)arg;
	scsi_device_destroy(dev);
}

/* Messages are formatted and dropped; FUZZ_VERBOSE=1 shows them (for checking seeds). */
static void log_discard(void *arg, int level, const char *message)
{
	(void)arg;
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "tcmu[%d]: %s\n", level, message);
}

/* The configfs action/reset_ring as target_core_user.c carries it out: the ring starts afresh. */
static int fake_reset_ring(struct tcmu_server *srv, const struct tcmu_device_info *info)
{
	(void)srv;
	(void)info;
	__atomic_store_n(&D.mb->cmd_head, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&D.mb->cmd_tail, 0, __ATOMIC_RELEASE);
	return 0;
}

static const struct tcmu_handler handler = {
	.open_device = open_device,
	.close_device = close_device,
	.log = log_discard,
	.log_level = 3,
};

static void turn(void)
{
	for (int i = 0; i < 4; i++)
		ev_run(D.loop, EVRUN_NOWAIT);
}

static void fuzz_device(const uint8_t *map_in, size_t map_len, uint32_t head2, uint8_t flags)
{
	struct tcmu_device_info info = { .uio_minor = MINOR, .hba = 1, .block_size = 512 };
	size_t padded = (map_len + MAP_ALIGN - 1) & ~(size_t)(MAP_ALIGN - 1), pages = (padded + PAGE - 1) / PAGE;
	uint8_t *region, *map;
	uint32_t head;
	char reason[256];
	int sv[2], rc;

	if (!D.loop) {
		D.loop = ev_loop_new(EVFLAG_AUTO);
		D.srv = tcmu_server_create(D.loop, "sbcemu", &handler);
		if (!D.loop || !D.srv)
			abort();
		D.srv->reset_ring = fake_reset_ring;
	}
	if (padded < sizeof(struct tcmu_mailbox))
		return;
	D.variant = fuzz_lu_variant((flags >> 2) & 7);
	/* The map ends where an inaccessible page begins: a read or write past it faults. */
	region = mmap(NULL, (pages + 1) * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		abort();
	mprotect(region + pages * PAGE, PAGE, PROT_NONE);
	map = region + pages * PAGE - padded;
	memset(map, 0, padded);
	memcpy(map, map_in, map_len);
	D.mb = (struct tcmu_mailbox *)map;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv) != 0)
		abort();
	snprintf(info.name, sizeof(info.name), "fuzz0");
	snprintf(info.cfgstring, sizeof(info.cfgstring), "kind=conventional");
	head = D.mb->cmd_head;
	if (!(flags & 0x20))
		D.mb->cmd_head = D.mb->cmd_tail; /* nothing queued yet when the handler comes */
	rc = tcmu_server_attach(D.srv, &info, map, padded, sv[1], reason, sizeof(reason));
	if (rc < 0) {
		close(sv[1]);
	} else {
		/* The kernel queues the entries and kicks the UIO device (uio_event_notify). */
		if (!(flags & 0x20))
			__atomic_store_n(&D.mb->cmd_head, head, __ATOMIC_RELEASE);
		tcmu_server_poll(D.srv, MINOR);
		turn();
		__atomic_store_n(&D.mb->cmd_head, head2, __ATOMIC_RELEASE);
		tcmu_server_poll(D.srv, MINOR);
		turn();
		tcmu_server_detach(D.srv, MINOR, NULL, NULL);
		for (int i = 0; i < 64 && tcmu_server_device_count(D.srv); i++)
			ev_run(D.loop, EVRUN_NOWAIT);
		if (tcmu_server_device_count(D.srv)) {
			fprintf(stderr, "fuzz_tcmu_ring: the device was not detached\n");
			abort();
		}
	}
	close(sv[0]);
	/* The device unmapped map (a no-op unless page aligned); the region goes here. */
	munmap(region, (pages + 1) * PAGE);
	fuzz_state_reset();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t head2;

	if (size < 5)
		return 0;
	head2 = (uint32_t)data[1] | (uint32_t)data[2] << 8 | (uint32_t)data[3] << 16 | (uint32_t)data[4] << 24;
	if (data[0] & 1)
		fuzz_device(data + 5, size - 5, head2, data[0]);
	else
		fuzz_ring(data + 5, size - 5, head2, data[0] & 2);
	return 0;
}
