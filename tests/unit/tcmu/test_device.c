/*
 * The TCMU front end against a simulated kernel (helpers/fake_kernel.c):
 * real CDBs through the mailbox, ring and data area, completions reaped as
 * target_core_user.c reaps them.  Each test names the ring rule it checks
 * (linux/target_core_user.h, "Ring Design") or the SCSI rule (SAM-5, SPC-4,
 * SBC-4) behind the status and sense it expects.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend.h"
#include "fake_kernel.h"
#include "manual_executor.h"
#include "tcmu_internal.h"

#define LU_BLOCKS 32768u /* 16 MiB of 512-byte blocks */
#define MINOR 7

static struct fake_kernel K;
static struct ev_loop *loop;
static struct tcmu_server *srv;
static struct manual_executor manual;
static bool use_manual;
static unsigned opened, closed;
static char last_log[512];

static bool refuse_next;
static struct tcmu_device_info opened_info;

static struct scsi_device *open_device(void *arg, const struct tcmu_device_info *info, char *reason, size_t len)
{
	struct scsi_device *dev = scsi_device_create(info->name, use_manual ? &manual.ex : &scsi_executor_inline, NULL);
	struct scsi_lu_params lp;

	(void)arg;
	opened_info = *info;
	if (refuse_next) {
		/* The daemon's answer to a bad cfgstring: a device without LU, and the reason. */
		snprintf(reason, len, "kind: \"floppy\" is not one of conventional, zbc-hm, zbc-ha, zbc-zd or conglomerate");
		opened++;
		return dev;
	}
	memset(&lp, 0, sizeof(lp));
	lp.kind = SCSI_LU_CONVENTIONAL;
	lp.logical_block_size = 512;
	lp.num_blocks = LU_BLOCKS;
	snprintf(lp.vendor, sizeof(lp.vendor), "SBCEMU");
	snprintf(lp.product, sizeof(lp.product), "TCMU TEST");
	snprintf(lp.revision, sizeof(lp.revision), "0001");
	snprintf(lp.serial, sizeof(lp.serial), "t1");
	lp.state_dir = "/tmp";
	if (!scsi_lu_create(dev, &lp, be_mem_open((uint64_t)LU_BLOCKS * 512), reason, len)) {
		scsi_device_destroy(dev);
		return NULL;
	}
	opened++;
	return dev;
}

static void close_device(void *arg, struct scsi_device *dev)
{
	(void)arg;
	scsi_device_destroy(dev);
	closed++;
}

static void log_line(void *arg, int level, const char *message)
{
	(void)arg;
	if (level <= 1)
		snprintf(last_log, sizeof(last_log), "%s", message);
}

static const struct tcmu_handler handler = {
	.open_device = open_device,
	.close_device = close_device,
	.log = log_line,
	.log_level = 3,
};

static void attach_view(void)
{
	struct tcmu_device_info info = { .uio_minor = MINOR, .hba = 1 };
	char reason[256];
	size_t map_len;
	void *map;
	int fd;

	snprintf(info.name, sizeof(info.name), "disk0");
	fk_handler_view(&K, &map, &map_len, &fd);
	ck_assert_msg(tcmu_server_attach(srv, &info, map, map_len, fd, reason, sizeof(reason)) == 0, "%s", reason);
}

static unsigned resets;

/* The configfs reset_ring sequence, as the simulated kernel carries it out. */
static int fake_reset_ring(struct tcmu_server *s, const struct tcmu_device_info *info)
{
	(void)s;
	(void)info;
	resets++;
	fk_reset_ring(&K);
	return 0;
}

/* One loop iteration: a device whose last command ended goes then. */
static void turn(void)
{
	ev_run(loop, EVRUN_NOWAIT);
}

static void new_server(void)
{
	loop = ev_loop_new(EVFLAG_AUTO);
	srv = tcmu_server_create(loop, "sbcemu", &handler);
	ck_assert_ptr_nonnull(srv);
	srv->reset_ring = fake_reset_ring;
}

static void start_unattached(uint32_t cmdr_size, uint32_t nblocks, uint16_t flags, bool manual_exec)
{
	fk_init(&K, cmdr_size, nblocks, flags);
	use_manual = manual_exec;
	manual_executor_init(&manual);
	opened = closed = resets = 0;
	refuse_next = false;
	last_log[0] = 0;
	new_server();
}

static void start(uint32_t cmdr_size, uint32_t nblocks, uint16_t flags, bool manual_exec)
{
	start_unattached(cmdr_size, nblocks, flags, manual_exec);
	attach_view();
}

static void stop(void)
{
	if (tcmu_server_device_count(srv))
		tcmu_server_detach(srv, MINOR, NULL, NULL);
	while (manual_executor_run(&manual, 1000))
		;
	turn();
	tcmu_server_destroy(srv);
	ev_loop_destroy(loop);
	fk_destroy(&K);
}

static const uint32_t ALL_CAPS = TCMU_MAILBOX_FLAG_CAP_OOOC | TCMU_MAILBOX_FLAG_CAP_READ_LEN |
				 TCMU_MAILBOX_FLAG_CAP_TMR;

/* The handler reads the ring and the simulated kernel reaps what it wrote back. */
static unsigned run(void)
{
	tcmu_server_poll(srv, MINOR);
	return fk_reap(&K);
}

static int queue_cdb6(uint8_t op, uint8_t b4, enum fk_dir dir, uint32_t len)
{
	uint8_t cdb[6] = { op, 0, 0, 0, b4, 0 };

	return fk_queue(&K, cdb, sizeof(cdb), dir, NULL, len);
}

static int queue_rw10(uint8_t op, uint32_t lba, uint16_t blocks, const void *out)
{
	uint8_t cdb[10] = { op, 0, lba >> 24, lba >> 16, lba >> 8, lba, 0, blocks >> 8, blocks, 0 };

	return fk_queue(&K, cdb, sizeof(cdb), op == 0x28 ? FK_FROM_DEVICE : FK_TO_DEVICE, out, blocks * 512u);
}

static void assert_sense(int id, uint8_t key, uint8_t asc, uint8_t ascq)
{
	const struct fk_cmd *c = &K.cmd[id];

	ck_assert_msg(c->completed, "cmd_id %d: no completion", id);
	ck_assert_uint_eq(c->status, SCSI_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(c->sense[0] & 0x7f, 0x70);
	ck_assert_msg((c->sense[2] & 0xf) == key && c->sense[12] == asc && c->sense[13] == ascq,
		      "cmd_id %d: sense %x/%02x/%02x, expected %x/%02x/%02x", id, c->sense[2] & 0xf, c->sense[12],
		      c->sense[13], key, asc, ascq);
}

static void assert_good(int id)
{
	const struct fk_cmd *c = &K.cmd[id];

	ck_assert_msg(c->completed, "cmd_id %d: no completion", id);
	ck_assert_msg(c->status == SCSI_STATUS_GOOD, "cmd_id %d: status %02x, sense %x/%02x/%02x", id, c->status,
		      c->sense[2] & 0xf, c->sense[12], c->sense[13]);
	ck_assert_uint_eq(c->completions, 1);
}

/* The POWER ON unit attention of the device's one I_T nexus (SAM-5 6.3.3), consumed by a TEST UNIT READY. */
static void consume_power_on(void)
{
	int id = queue_cdb6(0x00, 0, FK_NONE, 0);

	ck_assert_uint_eq(run(), 1);
	assert_sense(id, 0x6, 0x29, 0x00);
}

/* INQUIRY through the ring; READ_LEN (TCMU_MAILBOX_FLAG_CAP_READ_LEN) is the Data-In length the core sent. */
START_TEST(inquiry_with_read_len)
{
	uint8_t data[255];
	int id;

	start(64 * 1024, 64, ALL_CAPS, false);
	ck_assert_uint_eq(opened, 1);
	id = queue_cdb6(0x12, 255, FK_FROM_DEVICE, 255);
	ck_assert_int_ge(id, 0);
	ck_assert_uint_eq(run(), 1);
	assert_good(id);
	fk_data(&K, (uint16_t)id, data, sizeof(data));
	ck_assert_uint_eq(data[0], 0x00);                   /* SBC direct access block device */
	ck_assert_int_eq(memcmp(data + 8, "SBCEMU  ", 8), 0); /* T10 VENDOR IDENTIFICATION */
	ck_assert(K.cmd[id].uflags & TCMU_UFLAG_READ_LEN);
	ck_assert_uint_eq(K.cmd[id].read_len, data[4] + 5u);   /* ADDITIONAL LENGTH + 5 < 255 */
	ck_assert_uint_lt(K.cmd[id].read_len, 255);
	ck_assert_uint_ge(K.kicks_seen, 1);                 /* the handler told the kernel */
	stop();
}
END_TEST

/* Without CAP_READ_LEN the entry's read_len and its flag stay clear (the kernel would not read them). */
START_TEST(no_read_len_without_cap)
{
	int id;

	start(64 * 1024, 64, TCMU_MAILBOX_FLAG_CAP_OOOC, false);
	id = queue_cdb6(0x12, 255, FK_FROM_DEVICE, 255);
	ck_assert_uint_eq(run(), 1);
	assert_good(id);
	ck_assert_uint_eq(K.cmd[id].uflags & TCMU_UFLAG_READ_LEN, 0);
	ck_assert_uint_eq(K.cmd[id].read_len, 0);
	stop();
}
END_TEST

/* Sense data goes in the entry (rsp.sense_buffer): an unsupported opcode is 05/20/00 (SPC-4 4.5.6). */
START_TEST(sense_in_the_entry)
{
	int id;

	start(64 * 1024, 64, ALL_CAPS, false);
	consume_power_on();
	id = queue_cdb6(0xff, 0, FK_NONE, 0);
	ck_assert_uint_eq(run(), 1);
	assert_sense(id, 0x5, 0x20, 0x00);
	/* READ(10) past the capacity: 05/21/00 LOGICAL BLOCK ADDRESS OUT OF RANGE (SBC-4 4.5) */
	id = queue_rw10(0x28, LU_BLOCKS, 1, NULL);
	ck_assert_uint_eq(run(), 1);
	assert_sense(id, 0x5, 0x21, 0x00);
	stop();
}
END_TEST

/*
 * Data buffers in several iovecs (the data area's blocks are not adjacent):
 * WRITE(10) takes Data-Out from every piece, READ(10) fills every piece.
 * The tasks are cached (device.c, task_alloc): one with room for fewer
 * iovecs is not reused for 16, one with room for 16 is, and its data
 * buffers are the new command's.
 */
START_TEST(data_in_several_iovecs)
{
	enum { LEN = 64 * 1024 };
	uint8_t *out = malloc(LEN), *in = malloc(LEN);
	int w, r;

	start(64 * 1024, 64, ALL_CAPS, false);
	K.fragment = true;
	consume_power_on();
	ck_assert_uint_eq(srv->task_cache_len, 1); /* the TEST UNIT READY's, room for TCMU_TASK_IOV_MIN */
	for (unsigned i = 0; i < LEN; i++)
		out[i] = (uint8_t)(i * 7 + i / 512);
	w = queue_rw10(0x2a, 100, LEN / 512, out);
	ck_assert_int_ge(w, 0);
	ck_assert_uint_eq(run(), 1);
	assert_good(w);
	ck_assert_uint_eq(srv->task_cache_len, 2); /* 16 iovecs did not fit the cached task: a new one */
	ck_assert_uint_eq(srv->task_cache->iov_room, 16);
	r = queue_rw10(0x28, 100, LEN / 512, NULL);
	ck_assert_uint_eq(run(), 1);
	assert_good(r);
	ck_assert_uint_eq(srv->task_cache_len, 2); /* the WRITE's task served the READ */
	ck_assert_uint_eq(K.cmd[r].read_len, LEN);
	fk_data(&K, (uint16_t)r, in, LEN);
	ck_assert_int_eq(memcmp(in, out, LEN), 0);
	free(out);
	free(in);
	stop();
}
END_TEST

/*
 * A ring of 1 KiB wraps every few commands: the kernel pads the end with a
 * PAD entry, the handler steps over it and completes every command once.
 */
START_TEST(wrapped_ring_and_pad_entries)
{
	uint8_t block[512], back[512];
	unsigned pads = 0;

	start(1024, 16, ALL_CAPS, false);
	consume_power_on();
	for (unsigned i = 0; i < 300; i++) {
		uint32_t head = K.mb->cmd_head;
		int w, r;

		memset(block, (int)i, sizeof(block));
		w = queue_rw10(0x2a, i, 1, block);
		ck_assert_int_ge(w, 0);
		if (K.mb->cmd_head < head)
			pads += K.mb->cmd_head != 0 || head != 0;
		ck_assert_uint_eq(run(), 1);
		assert_good(w);
		r = queue_rw10(0x28, i, 1, NULL);
		ck_assert_int_ge(r, 0);
		ck_assert_uint_eq(run(), 1);
		assert_good(r);
		fk_data(&K, (uint16_t)r, back, sizeof(back));
		ck_assert_int_eq(memcmp(back, block, sizeof(back)), 0);
	}
	ck_assert_uint_gt(pads, 10);
	ck_assert_uint_eq(K.mb->cmd_tail, K.mb->cmd_head); /* everything completed, PADs stepped over */
	ck_assert(!K.broken);
	stop();
}
END_TEST

/*
 * Out-of-order completion (TCMU_MAILBOX_FLAG_CAP_OOOC): a TEST UNIT READY
 * queued behind a READ that waits for the medium completes first; its
 * completion takes the oldest slot and the kernel finds each command by the
 * cmd_id in the entry.
 */
START_TEST(out_of_order_completion)
{
	int reads[4], tur;

	start(64 * 1024, 64, ALL_CAPS, true);
	consume_power_on();
	for (unsigned i = 0; i < 4; i++)
		reads[i] = queue_rw10(0x28, i * 8, 8, NULL);
	tur = queue_cdb6(0x00, 0, FK_NONE, 0);
	ck_assert_uint_eq(run(), 1);
	assert_good(tur);
	for (unsigned i = 0; i < 4; i++)
		ck_assert(!K.cmd[reads[i]].completed);
	ck_assert_uint_eq(tcmu_ring_outstanding(&srv->devices->ring), 4);
	ck_assert_uint_eq(manual_executor_run(&manual, 2), 2);
	ck_assert_uint_eq(fk_reap(&K), 2);
	ck_assert_uint_eq(manual_executor_run(&manual, 100), 2);
	ck_assert_uint_eq(fk_reap(&K), 2);
	for (unsigned i = 0; i < 4; i++)
		assert_good(reads[i]);
	ck_assert(!K.broken);
	ck_assert_uint_eq(K.mb->cmd_tail, K.mb->cmd_head);
	stop();
}
END_TEST

/*
 * A full ring: the kernel cannot queue more until completions free room
 * (is_ring_space_avail); once the handler completes, the freed slots take
 * new commands.
 */
START_TEST(full_ring)
{
	unsigned queued = 0;
	int id;

	start(1024, 64, ALL_CAPS, true);
	consume_power_on();
	while ((id = queue_rw10(0x28, queued, 1, NULL)) >= 0)
		queued++;
	ck_assert_uint_ge(queued, 3);
	ck_assert_uint_lt(fk_ring_free(&K), 400); /* a 144-byte entry and the PAD it would need do not fit */
	ck_assert_uint_eq(run(), 0);
	ck_assert_uint_eq(manual_executor_run(&manual, 1000), queued);
	ck_assert_uint_eq(fk_reap(&K), queued);
	ck_assert_uint_eq(fk_ring_free(&K), 1023);
	for (unsigned i = 0; i < queued; i++) {
		id = queue_rw10(0x28, i, 1, NULL);
		ck_assert_int_ge(id, 0);
	}
	ck_assert_uint_eq(run(), 0);
	manual_executor_run(&manual, 1000);
	ck_assert_uint_eq(fk_reap(&K), queued);
	ck_assert(!K.broken);
	stop();
}
END_TEST

/*
 * TMR notification ABORT_TASK (TCMU_MAILBOX_FLAG_CAP_TMR): a WRITE waiting
 * behind another WRITE to the same blocks is aborted without running (its
 * data never reaches the medium) and its slot gets a TASK ABORTED
 * completion (SAM-5 7.2, status 40h); the WRITE holding the blocks
 * finishes normally.
 */
START_TEST(tmr_abort_task)
{
	uint8_t a[512], b[512], back[512];
	int wa, wb, r;
	uint16_t ids[1];

	start(64 * 1024, 64, ALL_CAPS, true);
	consume_power_on();
	memset(a, 0xaa, sizeof(a));
	memset(b, 0xbb, sizeof(b));
	wa = queue_rw10(0x2a, 5, 1, a);
	wb = queue_rw10(0x2a, 5, 1, b);
	ck_assert_uint_eq(run(), 0);
	ids[0] = (uint16_t)wb;
	ck_assert(fk_queue_tmr(&K, TCMU_TMR_ABORT_TASK, ids, 1));
	ck_assert_uint_eq(run(), 1);
	ck_assert(K.cmd[wb].completed);
	ck_assert_uint_eq(K.cmd[wb].status, SCSI_STATUS_TASK_ABORTED);
	ck_assert(!K.cmd[wa].completed);
	manual_executor_run(&manual, 1000);
	ck_assert_uint_eq(fk_reap(&K), 1);
	assert_good(wa);
	r = queue_rw10(0x28, 5, 1, NULL);
	run();
	manual_executor_run(&manual, 1000);
	fk_reap(&K);
	assert_good(r);
	fk_data(&K, (uint16_t)r, back, sizeof(back));
	ck_assert_int_eq(memcmp(back, a, sizeof(back)), 0);
	ck_assert_uint_eq(K.mb->cmd_tail, K.mb->cmd_head); /* the TMR entry was stepped over too */
	stop();
}
END_TEST

/* TMR LUN_RESET names every command of the LU: each one ends, and every slot is completed once. */
START_TEST(tmr_lun_reset)
{
	uint16_t ids[6];
	uint8_t block[512] = { 1 };

	start(64 * 1024, 64, ALL_CAPS, true);
	consume_power_on();
	for (unsigned i = 0; i < 6; i++)
		ids[i] = (uint16_t)queue_rw10(0x2a, 9, 1, block);
	ck_assert_uint_eq(run(), 0);
	ck_assert(fk_queue_tmr(&K, TCMU_TMR_LUN_RESET, ids, 6));
	ck_assert_uint_eq(run(), 5); /* the five waiting behind the first are aborted at once */
	manual_executor_run(&manual, 1000);
	ck_assert_uint_eq(fk_reap(&K), 1);
	for (unsigned i = 0; i < 6; i++)
		ck_assert_uint_eq(K.cmd[ids[i]].completions, 1);
	ck_assert_uint_eq(K.mb->cmd_tail, K.mb->cmd_head);
	stop();
}
END_TEST

/* A TMR for a command already completed (it raced the completion) changes nothing. */
START_TEST(tmr_for_completed_command)
{
	uint16_t id;
	int tur;

	start(64 * 1024, 64, ALL_CAPS, false);
	consume_power_on();
	id = (uint16_t)queue_cdb6(0x00, 0, FK_NONE, 0);
	ck_assert_uint_eq(run(), 1);
	ck_assert(fk_queue_tmr(&K, TCMU_TMR_ABORT_TASK, &id, 1));
	tur = queue_cdb6(0x00, 0, FK_NONE, 0);
	ck_assert_uint_eq(run(), 1);
	assert_good(tur);
	ck_assert(!K.broken);
	stop();
}
END_TEST

static unsigned detached_calls;
static int detached_err;

static void detached(void *arg, int err)
{
	(void)arg;
	detached_calls++;
	detached_err = err;
}

/*
 * Removing a device with commands in flight: the one waiting is aborted,
 * the one on the medium finishes, both slots get their completions, and
 * only then is the device closed; what the kernel queues meanwhile is not
 * read.
 */
START_TEST(removal_with_commands_in_flight)
{
	uint8_t block[512] = { 2 };
	int w1, w2, late;

	start(64 * 1024, 64, ALL_CAPS, true);
	consume_power_on();
	w1 = queue_rw10(0x2a, 1, 1, block);
	w2 = queue_rw10(0x2a, 1, 1, block);
	ck_assert_uint_eq(run(), 0);
	detached_calls = 0;
	tcmu_server_detach(srv, MINOR, detached, NULL);
	ck_assert_uint_eq(detached_calls, 0);
	ck_assert_uint_eq(closed, 0);
	late = queue_cdb6(0x00, 0, FK_NONE, 0);
	tcmu_server_poll(srv, MINOR); /* the device is going: the ring is not read any more */
	ck_assert_uint_eq(fk_reap(&K), 1);
	ck_assert_uint_eq(K.cmd[w2].status, SCSI_STATUS_TASK_ABORTED);
	manual_executor_run(&manual, 1000);
	ck_assert_uint_eq(detached_calls, 0); /* the device goes on the next loop iteration */
	turn();
	ck_assert_uint_eq(detached_calls, 1);
	ck_assert_int_eq(detached_err, 0);
	ck_assert_uint_eq(closed, 1);
	ck_assert_uint_eq(tcmu_server_device_count(srv), 0);
	ck_assert_uint_eq(fk_reap(&K), 1);
	ck_assert(K.cmd[w1].completed);
	ck_assert(!K.cmd[late].completed);
	tcmu_server_detach(srv, MINOR, detached, NULL);
	ck_assert_int_eq(detached_err, -ENODEV);
	stop();
}
END_TEST

static unsigned drained_calls;

static void drained(void *arg)
{
	(void)arg;
	drained_calls++;
}

/* Draining (daemon shutdown): commands in flight finish with their real status before the device lets go. */
START_TEST(drain_finishes_commands)
{
	uint8_t block[512] = { 3 };
	int w;

	start(64 * 1024, 64, ALL_CAPS, true);
	consume_power_on();
	w = queue_rw10(0x2a, 3, 1, block);
	ck_assert_uint_eq(run(), 0);
	drained_calls = 0;
	tcmu_server_drain(srv, drained, NULL);
	ck_assert_uint_eq(drained_calls, 0);
	manual_executor_run(&manual, 1000);
	turn();
	ck_assert_uint_eq(drained_calls, 1);
	ck_assert_uint_eq(fk_reap(&K), 1);
	assert_good(w);
	stop();
}
END_TEST

/*
 * Entries the kernel cannot have written (an iovec outside the data area, a
 * length that runs off the ring) stop the device without touching memory
 * outside the map; the log says which entry.
 */
START_TEST(broken_entries_stop_the_device)
{
	struct tcmu_cmd_entry *ent;
	int id;

	start(64 * 1024, 64, ALL_CAPS, false);
	consume_power_on();
	id = queue_rw10(0x28, 0, 1, NULL);
	ent = (struct tcmu_cmd_entry *)(K.map + K.cmdr_off + (K.mb->cmd_tail % K.cmdr_size));
	{
		struct iovec v = { .iov_base = (void *)(uintptr_t)(K.map_len - 100), .iov_len = 512 };

		memcpy((uint8_t *)ent + offsetof(struct tcmu_cmd_entry, req.iov), &v, sizeof(v));
	}
	ck_assert_uint_eq(run(), 0);
	ck_assert(!K.cmd[id].completed);
	ck_assert_ptr_nonnull(strstr(last_log, "an iovec outside the data area"));
	stop();

	start(64 * 1024, 64, ALL_CAPS, false);
	id = queue_cdb6(0x00, 0, FK_NONE, 0);
	ent = (struct tcmu_cmd_entry *)(K.map + K.cmdr_off);
	ent->hdr.len_op = (ent->hdr.len_op & TCMU_OP_MASK) | (K.cmdr_size + 8);
	ck_assert_uint_eq(run(), 0);
	ck_assert_ptr_nonnull(strstr(last_log, "a length that does not fit the ring"));
	stop();
}
END_TEST

/* A mailbox of another version is refused at attach, with the reason. */
START_TEST(bad_mailbox_refused)
{
	struct tcmu_device_info info = { .uio_minor = 3 };
	char reason[256];
	size_t map_len;
	void *map;
	int fd;

	fk_init(&K, 4096, 4, ALL_CAPS);
	K.mb->version = 1;
	srv = tcmu_server_create(NULL, "sbcemu", &handler);
	fk_handler_view(&K, &map, &map_len, &fd);
	ck_assert_int_eq(tcmu_server_attach(srv, &info, map, map_len, fd, reason, sizeof(reason)), -1);
	ck_assert_str_eq(reason, "mailbox version 1, not 2");
	munmap(map, map_len);
	close(fd);
	tcmu_server_destroy(srv);
	fk_destroy(&K);
}
END_TEST

/*
 * Start-up after a crash: commands the kernel queued for a handler that
 * died (read or not, some completed out of order) cannot be sorted out, so
 * the kernel is asked to fail them back (BUSY: the initiator retries); the
 * ring starts afresh and new commands are served.  A ring with nothing
 * outstanding is left alone.
 */
START_TEST(restart_fails_back_commands_left_in_the_ring)
{
	int left[3], id;

	start_unattached(4096, 16, ALL_CAPS, false);
	for (unsigned i = 0; i < 3; i++)
		left[i] = queue_rw10(0x28, i, 1, NULL);
	attach_view();
	ck_assert_uint_eq(resets, 1);
	for (unsigned i = 0; i < 3; i++) {
		ck_assert(K.cmd[left[i]].completed);
		ck_assert_uint_eq(K.cmd[left[i]].status, 0x08); /* BUSY, from the kernel */
		ck_assert_uint_eq(K.cmd[left[i]].completions, 0); /* none came through the ring */
	}
	consume_power_on();
	id = queue_rw10(0x28, 0, 1, NULL);
	ck_assert_uint_eq(run(), 1);
	assert_good(id);
	ck_assert(!K.broken);
	stop();

	start(4096, 16, ALL_CAPS, false);
	ck_assert_uint_eq(resets, 0);
	stop();
}
END_TEST

/*
 * A device whose LU the daemon refused (a bad cfgstring) is still served:
 * INQUIRY says no device can be here (SPC-4 6.6.2: PERIPHERAL QUALIFIER
 * 011b, type 1Fh), everything else gets 05/25/00 LOGICAL UNIT NOT
 * SUPPORTED at once, instead of a 30-second timeout.
 */
START_TEST(refused_device_answers_at_once)
{
	struct tcmu_device_info info = { .uio_minor = 9 };
	uint8_t data[36];
	char reason[256];
	size_t map_len;
	void *map;
	int fd, id;

	start_unattached(4096, 16, ALL_CAPS, false);
	refuse_next = true;
	snprintf(info.name, sizeof(info.name), "bad0");
	fk_handler_view(&K, &map, &map_len, &fd);
	ck_assert_int_eq(tcmu_server_attach(srv, &info, map, map_len, fd, reason, sizeof(reason)), 1);
	ck_assert_str_eq(reason, "kind: \"floppy\" is not one of conventional, zbc-hm, zbc-ha, zbc-zd or conglomerate");
	ck_assert_ptr_nonnull(strstr(last_log, "bad0 refused: kind:"));
	id = queue_cdb6(0x12, 36, FK_FROM_DEVICE, 36);
	tcmu_server_poll(srv, 9);
	ck_assert_uint_eq(fk_reap(&K), 1);
	assert_good(id);
	fk_data(&K, (uint16_t)id, data, sizeof(data));
	ck_assert_uint_eq(data[0], 0x7f);
	id = queue_cdb6(0x00, 0, FK_NONE, 0);
	tcmu_server_poll(srv, 9);
	ck_assert_uint_eq(fk_reap(&K), 1);
	assert_sense(id, 0x5, 0x25, 0x00);
	tcmu_server_detach(srv, 9, NULL, NULL);
	ck_assert_uint_eq(closed, 1);
	tcmu_server_destroy(srv);
	ev_loop_destroy(loop);
	fk_destroy(&K);
}
END_TEST

/* UIO names: "tcm-user/<hba>/<name>/<subtype>/<cfgstring>" (target_core_user.c tcmu_update_uio_info). */
START_TEST(uio_names)
{
	struct tcmu_device_info info;

	memset(&info, 0, sizeof(info));
	ck_assert_int_eq(tcmu_parse_uio_name("tcm-user/3/zbc0/sbcemu/kind=zbc-hm;path=a/b.img", "sbcemu", &info), 0);
	ck_assert_uint_eq(info.hba, 3);
	ck_assert_str_eq(info.name, "zbc0");
	ck_assert_str_eq(info.cfgstring, "kind=zbc-hm;path=a/b.img");
	/* Another handler's subtype, even one that starts like ours, is not ours. */
	ck_assert_int_eq(tcmu_parse_uio_name("tcm-user/3/z/zbc/model-HM/zsize-16@/tmp/z.raw", "sbcemu", &info), 1);
	ck_assert_int_eq(tcmu_parse_uio_name("tcm-user/3/z/sbcemu2/path=x", "sbcemu", &info), 1);
	ck_assert_int_eq(tcmu_parse_uio_name("tcm-user/3/z/sbcem/path=x", "sbcemu", &info), 1);
	/* A device without dev_config, or names that are not TCMU's. */
	ck_assert_int_eq(tcmu_parse_uio_name("tcm-user/3/z", "sbcemu", &info), -1);
	ck_assert_int_eq(tcmu_parse_uio_name("tcm-user/x/z/sbcemu/p", "sbcemu", &info), -1);
	ck_assert_int_eq(tcmu_parse_uio_name("uio_pdrv_genirq", "sbcemu", &info), -1);
}
END_TEST

static void put_file(const char *dir, const char *rel, const char *text)
{
	char path[1024], cmd[1200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	ck_assert_int_eq(system(cmd), 0);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/*
 * The start-up scan opens only devices of its own subtype: tcmu-runner's
 * (zbc, fbo, ...) are not even opened (the kernel lets one process open a
 * UIO device), and an sbcemu device that cannot be opened is logged.
 */
START_TEST(scan_opens_only_its_subtype)
{
	char dir[] = "/tmp/sbce-tcmu-scan-XXXXXX", cmd[128];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	put_file(dir, "class/uio0/name", "tcm-user/1/z0/zbc/model-HM/zsize-16@/tmp/z.raw\n");
	put_file(dir, "class/uio0/maps/map0/size", "0x40800000\n");
	put_file(dir, "class/uio1/name", "tcm-user/2/f0/fbo/x\n");
	put_file(dir, "class/uio3/name", "uio_pdrv_genirq\n");
	start_unattached(4096, 16, ALL_CAPS, false);
	snprintf(srv->paths.uio_class, sizeof(srv->paths.uio_class), "%s/class", dir);
	snprintf(srv->paths.dev_dir, sizeof(srv->paths.dev_dir), "%s/dev", dir); /* no device file at all */
	snprintf(srv->paths.configfs, sizeof(srv->paths.configfs), "%s/configfs", dir);
	ck_assert_int_eq(tcmu_server_scan(srv), 0);
	ck_assert_str_eq(last_log, ""); /* nothing was tried */
	put_file(dir, "class/uio2/name", "tcm-user/4/mine/sbcemu/path=m.img\n");
	put_file(dir, "class/uio2/maps/map0/size", "0x40800000\n");
	ck_assert_int_eq(tcmu_server_scan(srv), 0);
	ck_assert_ptr_nonnull(strstr(last_log, "uio2 (tcm-user/4/mine/sbcemu/path=m.img): not served: "));
	ck_assert_ptr_nonnull(strstr(last_log, "/dev/uio2: No such file or directory"));
	ck_assert_uint_eq(opened, 0);
	tcmu_server_destroy(srv);
	ev_loop_destroy(loop);
	fk_destroy(&K);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("tcmu_device");
	TCase *tc = tcase_create("ring");

	tcase_add_test(tc, inquiry_with_read_len);
	tcase_add_test(tc, no_read_len_without_cap);
	tcase_add_test(tc, sense_in_the_entry);
	tcase_add_test(tc, data_in_several_iovecs);
	tcase_add_test(tc, wrapped_ring_and_pad_entries);
	tcase_add_test(tc, out_of_order_completion);
	tcase_add_test(tc, full_ring);
	tcase_add_test(tc, tmr_abort_task);
	tcase_add_test(tc, tmr_lun_reset);
	tcase_add_test(tc, tmr_for_completed_command);
	tcase_add_test(tc, removal_with_commands_in_flight);
	tcase_add_test(tc, drain_finishes_commands);
	tcase_add_test(tc, broken_entries_stop_the_device);
	tcase_add_test(tc, bad_mailbox_refused);
	tcase_add_test(tc, restart_fails_back_commands_left_in_the_ring);
	tcase_add_test(tc, refused_device_answers_at_once);
	tcase_add_test(tc, uio_names);
	tcase_add_test(tc, scan_opens_only_its_subtype);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
