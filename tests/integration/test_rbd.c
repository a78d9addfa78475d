/*
 * Backend rbd (docs/rbd.md): LUs whose blocks live in Ceph RBD images,
 * served by sbcemud through librbd, against a throwaway one-node cluster
 * (scripts/ceph-cluster).
 *
 * Each LU kind is configured twice, once on a file and once on an image,
 * and the same commands go to both: status, sense and Data-In must be the
 * same byte for byte (conventional: WRITE, READ, UNMAP, WRITE SAME,
 * COMPARE AND WRITE; type 1 PI: READ(16) with RDPROTECT 1 returns the
 * tuples the target made; zbc-hm: write pointer rules, REPORT ZONES, RESET
 * WRITE POINTER).  Then what an image must keep: the images are created at
 * the configured size, and acknowledged writes, PI tuples and write pointers
 * survive a restart and a kill -9.  One node per image: a second daemon on
 * an image that one serves does not start, and a daemon whose lock another
 * client breaks (and so blocklists) never writes again.  Configuration
 * errors name the key.
 *
 * Environment: SBCE_CEPH_CLUSTER (scripts/ceph-cluster; CMake sets it).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

#define BS 512u
#define ZONE_BLOCKS 2048u /* 1 MiB zones */

static char conf_path[600];

/* file LU, rbd LU of the same kind */
static const struct pair {
	const char *kind;
	int file_lun, rbd_lun;
} pairs[] = { { "conventional", 0, 1 }, { "PI type 1", 2, 3 }, { "zbc-hm", 4, 5 } };

static void write_config(struct itest_daemon *d)
{
	char text[4096];

	snprintf(text, sizeof(text),
		 "[target \"" ITEST_TARGET "\"]\n"
		 "[lun \"" ITEST_TARGET "\" 0]\npath = @DIR@/conv.img\nsize = 16M\n"
		 "[lun \"" ITEST_TARGET "\" 1]\nbackend = rbd\nrbd_image = conv\nceph_conf = %s\nsize = 16M\n"
		 "max_atomic_transfer_length = 8\n"
		 "[lun \"" ITEST_TARGET "\" 2]\npath = @DIR@/pi.img\nsize = 16M\nprotection_type = 1\n"
		 "[lun \"" ITEST_TARGET "\" 3]\nbackend = rbd\nrbd_image = pi\nceph_conf = %s\nsize = 16M\n"
		 "protection_type = 1\n"
		 "[lun \"" ITEST_TARGET "\" 4]\npath = @DIR@/zbc.img\nsize = 16M\nkind = zbc-hm\nzone_size = 1M\n"
		 "[lun \"" ITEST_TARGET "\" 5]\nbackend = rbd\nrbd_image = zbc\nrbd_pool = rbd\nceph_id = admin\n"
		 "ceph_conf = %s\nsize = 16M\nkind = zbc-hm\nzone_size = 1M\n"
		 "[lun \"" ITEST_TARGET "\" 6]\nbackend = rbd\nrbd_image = atomic\nceph_conf = %s\nsize = 16M\n"
		 "max_atomic_transfer_length = 16\natomic_alignment = 16\n",
		 conf_path, conf_path, conf_path, conf_path);
	if (itest_daemon_write_config(d, text) != 0) {
		printf("Bail out! cannot write %s\n", d->conf);
		exit(1);
	}
}

/* ---- the same commands to both LUs of a pair ---- */

struct step {
	const char *name;
	uint8_t cdb[16];
	int cdb_len;
	enum itest_dir dir;
	size_t out_len; /* ITEST_OUT: bytes of the pattern (or of out) */
	const uint8_t *out;
	size_t in_len;
};

static void cdb16(uint8_t *c, uint8_t op, uint8_t b1, uint64_t lba, uint32_t n)
{
	memset(c, 0, 16);
	c[0] = op;
	c[1] = b1;
	itest_put_be64(c + 2, lba);
	itest_put_be32(c + 10, n);
}

static bool same_result(const struct itest_result *a, const struct itest_result *b)
{
	return a->transport_ok && b->transport_ok && a->status == b->status && a->sense.key == b->sense.key &&
	       a->sense.asc == b->sense.asc && a->sense.ascq == b->sense.ascq && a->data_len == b->data_len &&
	       (a->data_len == 0 || memcmp(a->data, b->data, (size_t)a->data_len) == 0);
}

static void run_steps(struct iscsi_context *s, const struct pair *p, const struct step *steps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct step *st = &steps[i];
		struct itest_result a, b;
		uint8_t *out = NULL;

		if (st->dir == ITEST_OUT && !st->out) {
			out = malloc(st->out_len);
			itest_pattern(out, st->out_len, (uint32_t)i + 7);
		}
		itest_cmd(s, p->file_lun, st->cdb, st->cdb_len, st->dir, st->out ? st->out : out, st->out_len,
			  st->in_len, &a);
		itest_cmd(s, p->rbd_lun, st->cdb, st->cdb_len, st->dir, st->out ? st->out : out, st->out_len,
			  st->in_len, &b);
		itest_ok(same_result(&a, &b), st->name, "%s: file LU %s (%d bytes), rbd LU %s (%d bytes)", p->kind,
			 itest_result_str(&a), a.data_len, itest_result_str(&b), b.data_len);
		itest_result_free(&a);
		itest_result_free(&b);
		free(out);
	}
}

static void conventional_steps(struct iscsi_context *s)
{
	static uint8_t unmap_list[24], caw[2 * BS];
	struct step st[9] = {
		{ .name = "rbd = file: WRITE(16) 8 blocks at LBA 10 -> GOOD", .cdb_len = 16, .dir = ITEST_OUT,
		  .out_len = 8 * BS },
		{ .name = "rbd = file: READ(16) of them returns the data written", .cdb_len = 16, .dir = ITEST_IN,
		  .in_len = 8 * BS },
		{ .name = "rbd = file: UNMAP of LBA 11-12 (SBC-4 5.30) -> GOOD", .cdb_len = 10, .dir = ITEST_OUT,
		  .out = unmap_list, .out_len = sizeof(unmap_list) },
		{ .name = "rbd = file: READ(16) after UNMAP returns zeros there (LBPRZ)", .cdb_len = 16,
		  .dir = ITEST_IN, .in_len = 8 * BS },
		{ .name = "rbd = file: WRITE SAME(16) UNMAP of 3 blocks -> GOOD", .cdb_len = 16, .dir = ITEST_OUT,
		  .out_len = BS },
		{ .name = "rbd = file: READ(16) across the WRITE SAME range", .cdb_len = 16, .dir = ITEST_IN,
		  .in_len = 8 * BS },
		{ .name = "rbd = file: COMPARE AND WRITE with a mismatch -> 0E/1D/00", .cdb_len = 16, .dir = ITEST_OUT,
		  .out = caw, .out_len = sizeof(caw) },
		{ .name = "rbd = file: READ CAPACITY(16): the image was created at the configured size", .cdb_len = 16,
		  .dir = ITEST_IN, .in_len = 32 },
		{ .name = "rbd = file: WRITE(16) past the capacity -> 05/21/00", .cdb_len = 16, .dir = ITEST_OUT,
		  .out_len = 2 * BS },
	};

	cdb16(st[0].cdb, 0x8a, 0, 10, 8);
	cdb16(st[1].cdb, 0x88, 0, 10, 8);
	memset(st[2].cdb, 0, 16);
	st[2].cdb[0] = 0x42;
	itest_put_be16(st[2].cdb + 7, sizeof(unmap_list));
	itest_put_be16(unmap_list, 22);
	itest_put_be16(unmap_list + 2, 16);
	itest_put_be64(unmap_list + 8, 11);
	itest_put_be32(unmap_list + 16, 2);
	cdb16(st[3].cdb, 0x88, 0, 10, 8);
	cdb16(st[4].cdb, 0x93, 0x08, 13, 3); /* UNMAP bit; the block of zeros below */
	cdb16(st[5].cdb, 0x88, 0, 10, 8);
	memset(caw, 0xa5, sizeof(caw)); /* the compare half does not match what is there */
	cdb16(st[6].cdb, 0x89, 0, 10, 0);
	st[6].cdb[13] = 1;
	memset(st[7].cdb, 0, 16);
	st[7].cdb[0] = 0x9e;
	st[7].cdb[1] = 0x10;
	itest_put_be32(st[7].cdb + 10, 32);
	cdb16(st[8].cdb, 0x8a, 0, 16 * 2048 - 1, 2);
	{
		static const uint8_t zeros[BS];

		st[4].out = zeros;
	}
	run_steps(s, &pairs[0], st, sizeof(st) / sizeof(st[0]));
}

static void pi_steps(struct iscsi_context *s)
{
	struct step st[3] = {
		{ .name = "rbd = file: PI type 1 WRITE(16) WRPROTECT 0 (the target makes the tuples) -> GOOD",
		  .cdb_len = 16, .dir = ITEST_OUT, .out_len = 4 * BS },
		{ .name = "rbd = file: PI type 1 READ(16) RDPROTECT 1 returns data and the same tuples", .cdb_len = 16,
		  .dir = ITEST_IN, .in_len = 4 * (BS + 8) },
		{ .name = "rbd = file: PI type 1 READ(16) RDPROTECT 1 of never-written blocks", .cdb_len = 16,
		  .dir = ITEST_IN, .in_len = 2 * (BS + 8) },
	};

	cdb16(st[0].cdb, 0x8a, 0, 40, 4);
	cdb16(st[1].cdb, 0x88, 0x20, 40, 4);
	cdb16(st[2].cdb, 0x88, 0x20, 1000, 2);
	run_steps(s, &pairs[1], st, sizeof(st) / sizeof(st[0]));
}

static void zbc_steps(struct iscsi_context *s)
{
	struct step st[6] = {
		{ .name = "rbd = file: zbc-hm WRITE(16) at the write pointer of zone 1 -> GOOD", .cdb_len = 16,
		  .dir = ITEST_OUT, .out_len = 8 * BS },
		{ .name = "rbd = file: zbc-hm WRITE(16) not at the write pointer -> 05/21/04 (ZBC-2 4.4.3.2)",
		  .cdb_len = 16, .dir = ITEST_OUT, .out_len = 8 * BS },
		{ .name = "rbd = file: zbc-hm REPORT ZONES: the same zones and write pointers", .cdb_len = 16,
		  .dir = ITEST_IN, .in_len = 64 + 4 * 64 },
		{ .name = "rbd = file: zbc-hm READ(16) of the written blocks", .cdb_len = 16, .dir = ITEST_IN,
		  .in_len = 8 * BS },
		{ .name = "rbd = file: zbc-hm RESET WRITE POINTER of zone 1 -> GOOD", .cdb_len = 16, .dir = ITEST_NONE },
		{ .name = "rbd = file: zbc-hm REPORT ZONES after the reset", .cdb_len = 16, .dir = ITEST_IN,
		  .in_len = 64 + 4 * 64 },
	};

	cdb16(st[0].cdb, 0x8a, 0, ZONE_BLOCKS, 8);
	cdb16(st[1].cdb, 0x8a, 0, ZONE_BLOCKS, 8);
	memset(st[2].cdb, 0, 16);
	st[2].cdb[0] = 0x95;
	itest_put_be32(st[2].cdb + 10, 64 + 4 * 64);
	cdb16(st[3].cdb, 0x88, 0, ZONE_BLOCKS, 8);
	memset(st[4].cdb, 0, 16);
	st[4].cdb[0] = 0x94;
	st[4].cdb[1] = 0x04;
	itest_put_be64(st[4].cdb + 2, ZONE_BLOCKS);
	memcpy(st[5].cdb, st[2].cdb, 16);
	run_steps(s, &pairs[2], st, sizeof(st) / sizeof(st[0]));
}

/* GET LBA STATUS(16) at lba of the rbd conventional LU: the first descriptor's PROVISIONING STATUS, or -1. */
static int lba_status(struct iscsi_context *s, uint64_t lba)
{
	uint8_t cdb[16];
	struct itest_result r;
	int status = -1;

	cdb16(cdb, 0x9e, 0x12, lba, 64);
	itest_cmd(s, 1, cdb, 16, ITEST_IN, NULL, 0, 64, &r);
	if (r.transport_ok && r.status == 0 && r.data_len >= 24 && itest_get_be64(r.data + 8) == lba)
		status = r.data[8 + 12] & 0x0f;
	itest_result_free(&r);
	return status;
}

/*
 * GET LBA STATUS (SBC-4 5.9) from the image's allocation: written blocks are
 * mapped (0), an UNMAP of a whole RADOS object (4 MiB) deallocates it (1).
 */
static void provisioning(struct iscsi_context *s)
{
	const uint64_t object = 4u << 20, lba = 2 * object / BS;
	uint8_t cdb[16], buf[8 * BS], list[24];

	itest_pattern(buf, sizeof(buf), 21);
	itest_write16(s, 1, lba, buf, 8, BS, false, "WRITE(16) into the image's third object");
	itest_ok(lba_status(s, lba) == 0, "rbd LU: GET LBA STATUS of written blocks -> mapped (0)", "got %d",
		 lba_status(s, lba));
	memset(cdb, 0, 10);
	cdb[0] = 0x42;
	itest_put_be16(cdb + 7, sizeof(list));
	memset(list, 0, sizeof(list));
	itest_put_be16(list, 22);
	itest_put_be16(list + 2, 16);
	itest_put_be64(list + 8, lba);
	itest_put_be32(list + 16, (uint32_t)(object / BS));
	itest_expect_cmd(s, 1, "rbd LU: UNMAP of a whole object -> GOOD", cdb, 10, ITEST_OUT, list, sizeof(list), 0,
			 EXPECT_GOOD, NULL);
	itest_ok(lba_status(s, lba) == 1, "rbd LU: GET LBA STATUS after UNMAP of the whole object -> deallocated (1)",
		 "got %d", lba_status(s, lba));
}

/*
 * WRITE ATOMIC(16) is offered on an image only when its limits keep every
 * atomic write inside one RADOS object (docs/rbd.md): LUN 1 has a maximum
 * length but no alignment, so not there.
 */
static void no_atomic(struct iscsi_context *s, struct itest_daemon *d)
{
	uint8_t cdb[16], buf[BS];

	memset(buf, 0x5a, sizeof(buf));
	cdb16(cdb, 0x9c, 0, 20, 1);
	itest_expect_cmd(s, 1, "rbd LU with max_atomic_transfer_length: WRITE ATOMIC(16) -> 05/20/00 (not offered)",
			 cdb, 16, ITEST_OUT, buf, sizeof(buf), 0, EXPECT_SENSE(0x05, 0x20, 0x00), NULL);
	itest_ok(itest_daemon_log_has(d, "cannot write atomically: WRITE ATOMIC is not offered") &&
			 itest_daemon_log_has(d, "WRITE ATOMIC is offered with atomic_alignment dividing 8192"),
		 "rbd LU with max_atomic_transfer_length: the log says WRITE ATOMIC is not offered, and what would do",
		 "no such lines");
}

/*
 * LUN 6: max_atomic_transfer_length 16 and atomic_alignment 16, so every
 * WRITE ATOMIC lies inside one 4 MiB object: one RADOS operation, all or
 * nothing.  The Block Limits VPD page (B0h) reports both (SBC-4 6.6.4,
 * bytes 44-47 and 48-51); a misaligned LBA or a longer transfer is INVALID
 * FIELD IN CDB (SBC-4 5.48).
 */
static void atomic_in_one_object(struct iscsi_context *s)
{
	uint8_t cdb[16], inq[6] = { 0x12, 0x01, 0xb0, 0, 64, 0 }, buf[16 * BS], got[16 * BS];
	struct itest_result r;

	itest_cmd(s, 6, inq, 6, ITEST_IN, NULL, 0, 64, &r);
	itest_ok(r.status == 0 && r.data_len >= 52 && itest_get_be32(r.data + 44) == 16 &&
			 itest_get_be32(r.data + 48) == 16,
		 "rbd LU 6: Block Limits VPD MAXIMUM ATOMIC TRANSFER LENGTH 16, ATOMIC ALIGNMENT 16", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	itest_pattern(buf, sizeof(buf), 41);
	cdb16(cdb, 0x9c, 0, 32, 16);
	itest_expect_cmd(s, 6, "rbd LU 6: WRITE ATOMIC(16) of 16 aligned blocks -> GOOD", cdb, 16, ITEST_OUT, buf,
			 sizeof(buf), 0, EXPECT_GOOD, NULL);
	itest_ok(itest_read16(s, 6, 32, got, 16, BS, "READ(16) of LU 6") && memcmp(got, buf, sizeof(buf)) == 0,
		 "rbd LU 6: the atomic write reads back", "different data");
	cdb16(cdb, 0x9c, 0, 40, 16);
	itest_expect_cmd(s, 6, "rbd LU 6: WRITE ATOMIC(16) at a misaligned LBA -> 05/24/00", cdb, 16, ITEST_OUT, buf,
			 sizeof(buf), 0, EXPECT_SENSE(0x05, 0x24, 0x00), NULL);
}

/* ---- what an image keeps ---- */

static struct iscsi_context *session(struct itest_daemon *d)
{
	struct iscsi_context *s = itest_session(d, ITEST_INITIATOR_1, 0);

	if (s)
		for (int lun = 0; lun <= 6; lun++)
			itest_clear_ua(s, lun);
	return s;
}

static bool reads_back(struct iscsi_context *s, uint64_t lba, uint32_t seed)
{
	uint8_t want[16 * BS], got[16 * BS];

	itest_pattern(want, sizeof(want), seed);
	return itest_read16(s, 1, lba, got, 16, BS, "READ(16) of the rbd LU") && memcmp(want, got, sizeof(got)) == 0;
}

static void write_pattern(struct iscsi_context *s, uint64_t lba, uint32_t seed)
{
	uint8_t buf[16 * BS];

	itest_pattern(buf, sizeof(buf), seed);
	itest_write16(s, 1, lba, buf, 16, BS, false, "WRITE(16) to the rbd LU");
}

/* WRITE(16) of 8 blocks at LBA of LUN lun: its status. */
static int zoned_write_to(struct iscsi_context *s, int lun, uint64_t lba)
{
	uint8_t cdb[16], buf[8 * BS];
	struct itest_result r;
	int status;

	memset(buf, 0x3c, sizeof(buf));
	cdb16(cdb, 0x8a, 0, lba, 8);
	itest_cmd(s, lun, cdb, 16, ITEST_OUT, buf, sizeof(buf), 0, &r);
	status = r.transport_ok ? r.status : -1;
	itest_result_free(&r);
	return status;
}

/* WRITE(16) at LBA of the zbc-hm rbd LU: its status. */
static int zoned_write(struct iscsi_context *s, uint64_t lba)
{
	return zoned_write_to(s, 5, lba);
}

static void survives(struct itest_daemon *d)
{
	struct iscsi_context *s = session(d);

	if (!itest_ok(s != NULL, "login before the restarts", "no session"))
		return;
	write_pattern(s, 300, 11);
	itest_ok(zoned_write(s, 2 * ZONE_BLOCKS) == 0, "zbc-hm rbd LU: WRITE(16) at zone 2's write pointer -> GOOD",
		 "not GOOD");
	itest_close(s);

	itest_daemon_stop(d, SIGTERM);
	itest_ok(itest_daemon_start(d) == 0, "sbcemud starts again on the same images", "see the log");
	s = session(d);
	itest_ok(s && reads_back(s, 300, 11), "rbd LU: a write acknowledged before a restart reads back after it",
		 "different data");
	itest_ok(s && zoned_write(s, 2 * ZONE_BLOCKS + 8) == 0,
		 "zbc-hm rbd LU: the write pointer survives a restart (WRITE at the old pointer + 8 -> GOOD)",
		 "not GOOD");
	if (s)
		write_pattern(s, 400, 12);
	if (s)
		itest_close(s);

	itest_daemon_stop(d, SIGKILL);
	itest_ok(itest_daemon_start(d) == 0, "sbcemud starts again after kill -9", "see the log");
	s = session(d);
	itest_ok(s && reads_back(s, 400, 12), "rbd LU: a write acknowledged before kill -9 reads back after it",
		 "different data");
	itest_ok(s && reads_back(s, 300, 11), "rbd LU: the earlier write too", "different data");
	if (s)
		itest_close(s);
}

/* ---- one node per image ---- */

/* A second daemon configured with an image the first one serves does not start (docs/rbd.md). */
static void second_node_refused(void)
{
	struct itest_daemon d2;
	char text[1024];

	itest_daemon_init(&d2, "rbd-second");
	snprintf(text, sizeof(text),
		 "[target \"" ITEST_TARGET "\"]\n[lun \"" ITEST_TARGET "\" 0]\nbackend = rbd\nrbd_image = conv\n"
		 "ceph_conf = %s\n",
		 conf_path);
	itest_daemon_write_config(&d2, text);
	itest_ok(itest_daemon_start(&d2) != 0 && itest_daemon_log_has(&d2, "its exclusive lock is held by"),
		 "a second sbcemud on an image another one serves refuses to start, naming the lock's holder",
		 "it started, or said something else (%s)", d2.log);
	if (d2.pid > 0)
		itest_daemon_stop(&d2, SIGTERM);
	itest_daemon_cleanup(&d2);
}

/* Breaks the exclusive lock of image conv from outside, as a failover would (rbd lock rm blocklists the holder). */
static bool break_lock(void)
{
	char cmd[2400];

	snprintf(cmd, sizeof(cmd),
		 "j=$(rbd -c '%s' lock ls conv --format json) && "
		 "id=$(printf '%%s' \"$j\" | sed -n 's/.*\"id\":\"\\([^\"]*\\)\".*/\\1/p') && "
		 "who=$(printf '%%s' \"$j\" | sed -n 's/.*\"locker\":\"\\([^\"]*\\)\".*/\\1/p') && "
		 "[ -n \"$id\" ] && rbd -c '%s' lock rm conv \"$id\" \"$who\"",
		 conf_path, conf_path);
	return system(cmd) == 0;
}

/* A node whose lock another client broke never writes again: NOT READY, MANUAL INTERVENTION REQUIRED. */
static void fenced(struct itest_daemon *d)
{
	struct iscsi_context *s = session(d);
	uint8_t cdb[16], buf[16 * BS];

	if (!itest_ok(s != NULL, "login before the lock is broken", "no session"))
		return;
	write_pattern(s, 500, 13);
	if (!itest_ok(break_lock(), "rbd lock rm breaks the serving daemon's lock (blocklisting it)", "it failed")) {
		itest_close(s);
		return;
	}
	itest_pattern(buf, sizeof(buf), 14);
	cdb16(cdb, 0x8a, 0, 500, 16);
	itest_expect_cmd(s, 1, "fenced node: WRITE(16) -> 02/04/03 (SPC-4: LOGICAL UNIT NOT READY, MANUAL INTERVENTION "
			 "REQUIRED), the write not done", cdb, 16, ITEST_OUT, buf, sizeof(buf), 0,
			 EXPECT_SENSE(0x02, 0x04, 0x03), NULL);
	cdb16(cdb, 0x88, 0, 500, 16);
	itest_expect_cmd(s, 1, "fenced node: READ(16) -> 02/04/03", cdb, 16, ITEST_IN, NULL, 0, sizeof(buf),
			 EXPECT_SENSE(0x02, 0x04, 0x03), NULL);
	itest_close(s);
	itest_daemon_stop(d, SIGTERM);
	itest_ok(itest_daemon_start(d) == 0, "the fenced daemon, restarted, takes the free lock again", "see the log");
	s = session(d);
	itest_ok(s && reads_back(s, 500, 13),
		 "after fencing: the image holds what was acknowledged before, not the fenced node's write",
		 "different data");
	if (s)
		itest_close(s);
}

/* ---- two nodes, one image: ALUA standby and failover ---- */

/*
 * A node serving image ha as LUN 1, in target port group tpg (1 or 2) with
 * one target port, relative target port identifier tpg (the target's
 * tpgt), waiting in standby when another holds it; the other node's group
 * (3 - tpg, port 3 - tpg) is its peer.
 */
static bool node_start(struct itest_daemon *n, int tpg)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "[target \"" ITEST_TARGET "\"]\ntpgt = %d\n[lun \"" ITEST_TARGET "\" 0]\npath = @DIR@/lun0.img\nsize = 1M\n"
		 "[lun \"" ITEST_TARGET "\" 1]\nbackend = rbd\nrbd_image = ha\nsize = 16M\nceph_conf = %s\n"
		 "rbd_unavailable = standby\nalua = both\ntarget_port_group = %d\nalua_peer_groups = %d:%d\n"
		 "[lun \"" ITEST_TARGET "\" 2]\nbackend = rbd\nrbd_image = hazbc\nsize = 16M\nceph_conf = %s\n"
		 "kind = zbc-hm\nzone_size = 1M\nrbd_unavailable = standby\nalua = both\ntarget_port_group = %d\n",
		 tpg, conf_path, tpg, 3 - tpg, 3 - tpg, conf_path, tpg);
	itest_daemon_write_config(n, text);
	return itest_daemon_start(n) == 0;
}

/*
 * REPORT TARGET PORT GROUPS (MAINTENANCE IN A3h/0Ah) on LUN 1 through s, as "G:STATE:PORT ..." for
 * each descriptor (the STATUS CODE left out: a node reports 00h for another
 * node's group, whose moves it does not see).  Whether it was GOOD.
 */
static bool rtpg_groups(struct iscsi_context *s, char *out, size_t len)
{
	uint8_t cdb[12] = { 0xa3, 0x0a, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0 };
	struct itest_result r;
	bool ok;
	size_t used = 0;

	out[0] = '\0';
	itest_cmd(s, 1, cdb, 12, ITEST_IN, NULL, 0, 256, &r);
	ok = r.transport_ok && r.status == 0 && r.data_len >= 4;
	for (size_t off = 4; ok && off + 12 <= (size_t)r.data_len && used < len; off += 12)
		used += (size_t)snprintf(out + used, len - used, "%s%u:%u:%u", off > 4 ? " " : "",
					 itest_get_be16(r.data + off + 2), r.data[off] & 0x0f,
					 itest_get_be16(r.data + off + 10));
	itest_result_free(&r);
	return ok;
}

/*
 * REPORT TARGET PORT GROUPS through two nodes (SPC-4 6.37): the same
 * groups, states and ports through both, polled for at most 15 s (a waiting
 * node learns the holder from the note its next attempt reads, every 5 s),
 * and equal to want.
 */
static void same_groups_through_both(struct iscsi_context *s1, struct iscsi_context *s2, const char *want,
				     const char *name)
{
	char g1[128], g2[128];

	for (int i = 0; i < 60; i++) {
		if (rtpg_groups(s1, g1, sizeof(g1)) && rtpg_groups(s2, g2, sizeof(g2)) && strcmp(g1, want) == 0 &&
		    strcmp(g2, want) == 0)
			break;
		usleep(250 * 1000);
	}
	itest_ok(strcmp(g1, want) == 0 && strcmp(g2, want) == 0, name, "one node: %s, the other: %s", g1, g2);
}

/*
 * REPORT TARGET PORT GROUPS through s, polled for at most 20 s until it is
 * want (a node sees another's heartbeat stop within 10 s and come back within
 * 2 s, be_rbd_beat.c).  Whether it came; what was seen last in got.
 */
static bool groups_become(struct iscsi_context *s, const char *want, char *got, size_t len)
{
	for (int i = 0; i < 80; i++) {
		if (rtpg_groups(s, got, len) && strcmp(got, want) == 0)
			return true;
		usleep(250 * 1000);
	}
	return false;
}

/* Byte 1 of every descriptor of REPORT TARGET PORT GROUPS on LUN 1 through s, the supported states; -1 when not GOOD or not all the same. */
static int rtpg_supported(struct iscsi_context *s)
{
	uint8_t cdb[12] = { 0xa3, 0x0a, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0 };
	struct itest_result r;
	int sup = -1;

	itest_cmd(s, 1, cdb, 12, ITEST_IN, NULL, 0, 256, &r);
	for (size_t off = 4; r.transport_ok && r.status == 0 && off + 12 <= (size_t)r.data_len; off += 12) {
		if (sup >= 0 && sup != r.data[off + 1]) {
			sup = -1;
			break;
		}
		sup = r.data[off + 1];
	}
	itest_result_free(&r);
	return sup;
}

/* Polls TEST UNIT READY on LUN lun until GOOD (at most 60 s): whether it came, and whether 06/2A/06 came first. */
static bool becomes_active(struct iscsi_context *s, int lun, bool *saw_ua, double *seconds)
{
	uint8_t tur[6] = { 0 };
	struct itest_result r;
	bool active = false;
	int waited = 0;

	*saw_ua = false;
	for (; waited < 240 && !active; waited++) {
		itest_cmd(s, lun, tur, 6, ITEST_NONE, NULL, 0, 0, &r);
		*saw_ua |= itest_result_matches(&r, EXPECT_SENSE(0x06, 0x2a, 0x06));
		active = itest_result_matches(&r, EXPECT_GOOD);
		itest_result_free(&r);
		if (!active)
			usleep(250 * 1000);
	}
	*seconds = waited / 4.0;
	return active;
}

/* Polls TEST UNIT READY on LUN 1 until 02/04/0B (at most 30 s): whether it came, and whether 06/2A/06 came first. */
static bool back_in_standby(struct iscsi_context *s, bool *saw_ua)
{
	uint8_t tur[6] = { 0 };
	struct itest_result r;
	bool standby = false;

	*saw_ua = false;
	for (int i = 0; i < 120 && !standby; i++) {
		itest_cmd(s, 1, tur, 6, ITEST_NONE, NULL, 0, 0, &r);
		*saw_ua |= itest_result_matches(&r, EXPECT_SENSE(0x06, 0x2a, 0x06));
		standby = itest_result_matches(&r, EXPECT_SENSE(0x02, 0x04, 0x0b));
		itest_result_free(&r);
		if (!standby)
			usleep(250 * 1000);
	}
	return standby;
}

/*
 * The host's session to a node: one I_T nexus whatever the node (the same
 * initiator name and ISID, the same target name and target port group tag),
 * as a host that logs in again to a portal that moved.
 */
static struct iscsi_context *host_session(struct itest_daemon *n)
{
	struct itest_login opt = { .initiator = ITEST_INITIATOR_1, .initial_r2t = -1, .immediate_data = -1,
				   .fixed_isid = true, .isid_random = 0x5eed };
	char err[256];
	struct iscsi_context *s = itest_connect(n, &opt, 1, err, sizeof(err));

	if (!s)
		itest_note("login: %s", err);
	for (int lun = 0; s && lun <= 2; lun++)
		itest_clear_ua(s, lun);
	return s;
}

/*
 * PERSISTENT RESERVE OUT (5Fh) on LUN 1: service action sa, TYPE type,
 * RESERVATION KEY key, SERVICE ACTION RESERVATION KEY sa_key; ALL_TG_PT
 * (byte 20 bit 2: the host's I_T nexuses through every target port, each
 * node's one) with REGISTER, as a multipath host registers.
 */
static bool prout1(struct iscsi_context *s, const char *name, uint8_t sa, uint8_t type, uint64_t key, uint64_t sa_key)
{
	uint8_t param[24] = { 0 }, cdb[10] = { 0x5f, sa, type, 0, 0, 0, 0, 0, 24, 0 };

	itest_put_be64(param, key);
	itest_put_be64(param + 8, sa_key);
	if (sa == 0x00)
		param[20] = 0x04;
	return itest_expect_cmd(s, 1, name, cdb, 10, ITEST_OUT, param, 24, 0, EXPECT_GOOD, NULL);
}

/*
 * LOG SENSE (4Dh), cumulative values (PC 01b), Read Error Counter page 03h
 * on LUN 1: the 8-byte value of parameter 0006h (total uncorrected
 * errors), or -1.
 */
static long long read_error_counter(struct iscsi_context *s)
{
	uint8_t cdb[10] = { 0x4d, 0, 0x40 | 0x03, 0, 0, 0, 0, 4, 0, 0 };
	struct itest_result r;
	long long v = -1;

	itest_cmd(s, 1, cdb, 10, ITEST_IN, NULL, 0, 1024, &r);
	if (r.transport_ok && r.status == 0 && r.data_len >= 4) {
		int end = 4 + itest_get_be16(r.data + 2);

		for (int off = 4; off + 4 <= end && off + 12 <= r.data_len; off += 4 + r.data[off + 3])
			if (itest_get_be16(r.data + off) == 6 && r.data[off + 3] == 8)
				v = (long long)itest_get_be64(r.data + off + 4);
	}
	itest_result_free(&r);
	return v;
}

/* The same REGISTER, expecting exp. */
static bool prout_expect(struct iscsi_context *s, const char *name, uint64_t sa_key, struct itest_expect exp)
{
	uint8_t param[24] = { 0 }, cdb[10] = { 0x5f, 0x00, 0, 0, 0, 0, 0, 0, 24, 0 };

	itest_put_be64(param + 8, sa_key);
	param[20] = 0x04;
	return itest_expect_cmd(s, 1, name, cdb, 10, ITEST_OUT, param, 24, 0, exp, NULL);
}

/* PERSISTENT RESERVE IN (5Eh) READ KEYS on LUN 1: the keys in hex, space-separated, in out; false unless GOOD. */
static bool read_keys(struct iscsi_context *s, char *out, size_t len)
{
	uint8_t cdb[10] = { 0x5e, 0x00, 0, 0, 0, 0, 0, 0x10, 0x00, 0 };
	struct itest_result r;
	size_t n = 0;
	bool ok;

	out[0] = '\0';
	itest_cmd(s, 1, cdb, 10, ITEST_IN, NULL, 0, 4096, &r);
	ok = r.transport_ok && r.status == 0 && r.data_len >= 8;
	for (int off = 8; ok && off + 8 <= r.data_len && off < 8 + (int)itest_get_be32(r.data + 4) && n < len; off += 8)
		n += (size_t)snprintf(out + n, len - n, "%s%llx", n ? " " : "",
				      (unsigned long long)itest_get_be64(r.data + off));
	if (!ok)
		snprintf(out, len, "status %d, sense %02x/%02x/%02x", r.status, r.sense.key, r.sense.asc, r.sense.ascq);
	itest_result_free(&r);
	return ok;
}

/* PERSISTENT RESERVE IN (5Eh) READ RESERVATION on LUN 1: whether key holds a reservation of type. */
static bool reserved_by(struct iscsi_context *s, uint64_t key, int type)
{
	uint8_t cdb[10] = { 0x5e, 0x01, 0, 0, 0, 0, 0, 0, 255, 0 };
	struct itest_result r;
	bool ok;

	itest_cmd(s, 1, cdb, 10, ITEST_IN, NULL, 0, 255, &r);
	ok = r.transport_ok && r.status == 0 && r.data_len >= 24 && itest_get_be32(r.data + 4) >= 16 &&
	     itest_get_be64(r.data + 8) == key && (r.data[21] & 0x0f) == type;
	itest_result_free(&r);
	return ok;
}

/* The end of a two-node test: each node still running stopped (SIGTERM), both cleaned up. */
static void nodes_end(struct itest_daemon *a, struct itest_daemon *b)
{
	if (a->pid > 0)
		itest_daemon_stop(a, SIGTERM);
	if (b->pid > 0)
		itest_daemon_stop(b, SIGTERM);
	itest_daemon_cleanup(a);
	itest_daemon_cleanup(b);
}

/*
 * PERSISTENT RESERVE OUT through node B, which waits in standby: node A,
 * the holder, runs it (spc_pr_peer.c) and its answer is B's, status and
 * sense alike; the registrations are one state, read through either node
 * (SPC-4 5.13.1, 5.15.2.4.4).  On entry the host's I_T nexuses hold key
 * ABC0FFEEh (ALL_TG_PT, so through B's port too) and a Write Exclusive
 * reservation; initiator 2's hold 5678h.
 */
static void forwarded_prout(struct iscsi_context *hb, struct itest_daemon *b)
{
	const char *third = "iqn.2026-12.org.sbcemu:itest-initiator-3";
	uint8_t cdb[10] = { 0x5f, 0x00, 0, 0, 0, 0, 0, 0, 24, 0 }, param[24] = { 0 };
	struct iscsi_context *s3 = itest_session(b, third, 1);
	struct itest_result r;
	char out[256];

	prout_expect(hb, "node B in standby: REGISTER with RESERVATION KEY 0 from the host's I_T nexus, registered "
		     "through node A with ALL_TG_PT -> RESERVATION CONFLICT (SPC-4 5.13, registering; run by the "
		     "holder)", 0x5679, EXPECT_CONFLICT);
	if (!itest_ok(s3 != NULL, "a third initiator logs in to node B", "no session"))
		return;
	itest_clear_ua(s3, 1);
	itest_put_be64(param + 8, 0x7777);
	param[20] = 0x08; /* SPEC_I_PT: SIP_C is 0 */
	itest_expect_cmd(s3, 1, "node B: REGISTER with SPEC_I_PT = 1 -> 05/26/00 (INVALID FIELD IN PARAMETER LIST, "
			 "the holder's sense)", cdb, 10, ITEST_OUT, param, 24, 0, EXPECT_SENSE(0x05, 0x26, 0x00), &r);
	itest_expect_field_pointer("... its field pointer: parameter list byte 20, bit 3 (carried from the holder)", &r, 0,
				   20, 3);
	itest_result_free(&r);
	param[20] = 0;
	itest_expect_cmd(s3, 1, "node B: REGISTER 7777h from a third initiator's I_T nexus through node B's port -> GOOD",
			 cdb, 10, ITEST_OUT, param, 24, 0, EXPECT_GOOD, NULL);
	itest_ok(read_keys(hb, out, sizeof(out)) && strcmp(out, "abc0ffee 5678 7777") == 0,
		 "node B: READ KEYS -> the three keys, 7777h stored by the holder", "%s", out);
	cdb[1] = 0x01;
	cdb[2] = 0x01;
	itest_put_be64(param, 0x7777);
	itest_put_be64(param + 8, 0);
	itest_expect_cmd(s3, 1, "node B: RESERVE Write Exclusive by 7777h while the host holds one -> RESERVATION "
			 "CONFLICT (SPC-4 5.13, reserving)", cdb, 10, ITEST_OUT, param, 24, 0, EXPECT_CONFLICT, NULL);
	cdb[1] = 0x00;
	cdb[2] = 0x00;
	itest_expect_cmd(s3, 1, "node B: REGISTER with SERVICE ACTION RESERVATION KEY 0 (unregistering) -> GOOD", cdb, 10,
			 ITEST_OUT, param, 24, 0, EXPECT_GOOD, NULL);
	itest_close(s3);
}

/*
 * A unit attention a reservation change on the holder establishes for an
 * I_T nexus of node B reaches it there (spc_pr_peer.c, the notice): a third
 * initiator registers through B, the host preempts that registration
 * through A, and the third initiator's next command through B gets 06/2A/05
 * REGISTRATIONS PREEMPTED (SPC-4 5.13.11.4.3: "establish a unit attention
 * condition for the initiator port associated with every I_T nexus that
 * lost its registration"), before B's standby answer; the host's own I_T
 * nexus through B (not preempted) gets none.  On entry the host holds key
 * ABC0FFEEh and a Write Exclusive reservation.
 */
static void ua_through_b(struct iscsi_context *ha, struct iscsi_context *hb, struct itest_daemon *b)
{
	const char *third = "iqn.2026-12.org.sbcemu:itest-initiator-3";
	uint8_t tur[6] = { 0 };
	struct iscsi_context *s3 = itest_session(b, third, 1);
	char out[256];

	if (!itest_ok(s3 != NULL, "a third initiator logs in to node B again", "no session"))
		return;
	itest_clear_ua(s3, 1);
	prout1(s3, "node B: the third initiator REGISTERs 7777h (run by the holder) -> GOOD", 0x00, 0, 0, 0x7777);
	itest_expect_cmd(hb, 1, "node B: the host's TEST UNIT READY -> 02/04/0B (nothing pending for it)", tur, 6,
			 ITEST_NONE, NULL, 0, 0, EXPECT_SENSE(0x02, 0x04, 0x0b), NULL);
	prout1(ha, "node A: the host PREEMPTs 7777h (SERVICE ACTION RESERVATION KEY 7777h) -> GOOD", 0x04, 0x01,
	       0xabc0ffee, 0x7777);
	itest_ok(read_keys(hb, out, sizeof(out)) && strcmp(out, "abc0ffee 5678") == 0,
		 "node B: READ KEYS -> 7777h is gone", "%s", out);
	itest_expect_cmd(s3, 1, "node B: the third initiator's TEST UNIT READY -> 06/2A/05 REGISTRATIONS PREEMPTED, "
			 "established on node B by the holder's notice", tur, 6, ITEST_NONE, NULL, 0, 0,
			 EXPECT_SENSE(0x06, 0x2a, 0x05), NULL);
	itest_expect_cmd(s3, 1, "node B: ... then -> 02/04/0B (the unit attention was reported once)", tur, 6,
			 ITEST_NONE, NULL, 0, 0, EXPECT_SENSE(0x02, 0x04, 0x0b), NULL);
	itest_expect_cmd(hb, 1, "node B: the host's TEST UNIT READY -> 02/04/0B (its registration was not preempted: "
			 "no unit attention)", tur, 6, ITEST_NONE, NULL, 0, 0, EXPECT_SENSE(0x02, 0x04, 0x0b), NULL);
	itest_close(s3);
}

/*
 * rbd_unavailable = standby: node A (group 1) has the image, node B (group
 * 2) waits in standby (SPC-4 5.15.2.4.4: 02/04/0B; SET TARGET PORT GROUPS
 * to active: 04/67/0A, as tcmu-runner answers when its lock cannot be had)
 * but answers PERSISTENT RESERVE IN from the reservations A stored with the
 * image, read at each command, and has A run PERSISTENT RESERVE OUT
 * (forwarded_prout: only the holder writes them).
 * A is killed (-9): once the OSDs drop its watch (the cluster's
 * osd_client_watch_timeout, 10 s here) B's next attempt breaks A's lock
 * (blocklisting A) and takes it, and B's group becomes active/optimized
 * (06/2A/06 ASYMMETRIC ACCESS STATE CHANGED), with every write A
 * acknowledged and the persistent reservation A's host made (its key, its
 * type, RESERVATION CONFLICT for another I_T nexus's WRITE).  A, restarted,
 * finds B's live lock and waits in standby.  REPORT TARGET PORT GROUPS
 * (SPC-4 6.37) lists both groups, the same through each node, with the
 * holder's active/optimized (alua_peer_groups), and a dead node's group
 * offline (Eh, SPC-4 5.15.2.4.6) once its heartbeat beside the image has
 * stopped for 10 s (be_rbd_beat.c), standby again when it beats again.
 * Then B only stops (SIGSTOP: cut off, not dead): A takes over the same
 * way, reservation included, and shows B's group offline; B, back and
 * idle, hears of its fencing from its watch and rejoins with a new
 * connection, in standby, writing nothing, and takes the image over again
 * when A is killed.
 */
static void standby_and_failover(void)
{
	const uint64_t key = 0xabc0ffee;
	struct itest_daemon a, b;
	struct iscsi_context *ha = NULL, *hb = NULL, *other = NULL;
	uint8_t tur[6] = { 0 }, cdb[16], buf[16 * BS];
	uint8_t stpg[12] = { 0xa4, 0x0a, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0 }, to_optimized[8] = { 0, 0, 0, 0, 0, 0, 0, 2 };
	char out[8192];
	bool saw_ua = false;
	double seconds;
	char groups[128];
	int status;
	uint8_t log_select[10] = { 0x4c, 0x01, 0x40, 0, 0, 0, 0, 0, 16, 0 };
	const uint8_t counter42[16] = { 0x03, 0, 0, 12, 0, 6, 0, 8, 0, 0, 0, 0, 0, 0, 0, 42 };
	struct timespec t0, t1;

	itest_daemon_init(&a, "rbd-node-a");
	itest_daemon_init(&b, "rbd-node-b");
	if (!itest_ok(node_start(&a, 1), "node A (group 1) starts and takes image ha", "see %s", a.log))
		goto out;
	ha = host_session(&a);
	if (!itest_ok(ha != NULL, "the host logs in to node A", "no session"))
		goto out;
	itest_ok(rtpg_groups(ha, groups, sizeof(groups)) && strcmp(groups, "1:0:1 2:2:2") == 0,
		 "node A: REPORT TARGET PORT GROUPS -> group 1 (port 1) active/optimized, group 2 (port 2) standby",
		 "%s", groups);
	itest_ok(rtpg_supported(ha) == 0xcf,
		 "node A: every descriptor's supported states are T, O, U, S, AN and AO (CFh: O_SUP, its peers' "
		 "heartbeats are watched)", "%d", rtpg_supported(ha));
	write_pattern(ha, 700, 31);
	prout1(ha, "node A: PERSISTENT RESERVE OUT REGISTER -> GOOD", 0x00, 0, 0, key);
	prout1(ha, "node A: PERSISTENT RESERVE OUT RESERVE, Write Exclusive -> GOOD", 0x01, 0x01, key, 0);
	itest_expect_cmd(ha, 1, "node A: LOG SELECT SP = 1, Read Error Counter 0006h = 42 -> GOOD (SPC-4 6.5)", log_select,
			 10, ITEST_OUT, counter42, sizeof(counter42), 0, EXPECT_GOOD, NULL);
	itest_ok(zoned_write_to(ha, 2, 2 * ZONE_BLOCKS) == 0, "node A, zbc-hm LUN 2: WRITE at zone 2's write pointer -> GOOD",
		 "not GOOD");
	if (!itest_ok(node_start(&b, 2) && itest_daemon_log_has(&b, "standby"),
		      "node B (group 2) on the same image starts, in standby, logging why", "see %s", b.log))
		goto out;
	hb = host_session(&b);
	if (!itest_ok(hb != NULL, "the host logs in to node B", "no session"))
		goto out;
	itest_expect_cmd(hb, 1, "node B: TEST UNIT READY -> 02/04/0B (TARGET PORT IN STANDBY STATE)", tur, 6, ITEST_NONE,
			 NULL, 0, 0, EXPECT_SENSE(0x02, 0x04, 0x0b), NULL);
	cdb16(cdb, 0x88, 0, 700, 16);
	itest_expect_cmd(hb, 1, "node B: READ(16) -> 02/04/0B", cdb, 16, ITEST_IN, NULL, 0, sizeof(buf),
			 EXPECT_SENSE(0x02, 0x04, 0x0b), NULL);
	itest_ok(read_keys(hb, out, sizeof(out)) && strcmp(out, "abc0ffee") == 0,
		 "node B in standby: PERSISTENT RESERVE IN READ KEYS -> GOOD, the key registered through node A "
		 "(SPC-4 5.15.2.4.4: a standby port processes it)", "%s", out);
	itest_ok(reserved_by(hb, key, 0x01),
		 "node B in standby: READ RESERVATION -> node A's key and type (Write Exclusive)", NULL);
	other = itest_session(&a, ITEST_INITIATOR_2, 1);
	if (other) {
		prout1(other, "node A: another I_T nexus REGISTERs key 5678h -> GOOD", 0x00, 0, 0, 0x5678);
		itest_close(other);
		other = NULL;
	}
	itest_ok(read_keys(hb, out, sizeof(out)) && strcmp(out, "abc0ffee 5678") == 0,
		 "node B in standby: READ KEYS right after -> both keys (read from the image's state, not a copy)", "%s",
		 out);
	forwarded_prout(hb, &b);
	ua_through_b(ha, hb, &b);
	same_groups_through_both(ha, hb, "1:0:1 2:2:2", "REPORT TARGET PORT GROUPS through node A and node B: the "
				 "same, group 1 (A, port 1) active/optimized, group 2 (B, port 2) standby");
	itest_expect_cmd(hb, 1, "node B: SET TARGET PORT GROUPS to active/optimized -> 04/67/0A (COMMAND FAILED)", stpg,
			 12, ITEST_OUT, to_optimized, sizeof(to_optimized), 0, EXPECT_SENSE(0x04, 0x67, 0x0a), NULL);
	itest_ctl_expect(&b, out, sizeof(out), 0, "lu show 1", "node B: sbcemuctl lu show 1 -> exit 0");
	itest_ok(strstr(out, "waiting for the image") && strstr(out, "its exclusive lock is held by"),
		 "node B: backend_status says it waits for the image, whose lock another client holds", "%s", out);

	itest_close(ha);
	ha = NULL;
	itest_daemon_stop(&a, SIGKILL);
	itest_ok(becomes_active(hb, 1, &saw_ua, &seconds),
		 "after kill -9 of node A: node B's TEST UNIT READY -> GOOD within 60 s", NULL);
	itest_note("node B took over %.1f s after node A was killed", seconds);
	itest_ok(saw_ua, "before that: 06/2A/06 ASYMMETRIC ACCESS STATE CHANGED", NULL);
	itest_ok(groups_become(hb, "1:14:1 2:0:2", groups, sizeof(groups)),
		 "node B: REPORT TARGET PORT GROUPS -> group 1 offline (Eh: node A's heartbeat stopped; SPC-4 "
		 "5.15.2.4.6), group 2 active/optimized", "%s", groups);
	itest_ok(reads_back(hb, 700, 31), "node B reads what node A acknowledged before it died", "different data");
	itest_ok(reserved_by(hb, key, 0x01),
		 "node B: READ RESERVATION -> the key and type (Write Exclusive) reserved through node A", NULL);
	itest_ok(read_error_counter(hb) == 42, "node B: LOG SENSE -> the log parameter node A saved (42)", "%lld",
		 read_error_counter(hb));
	/* LUN 2 takes its image over at its own first command after its backend has it (06/2A/06 first, as LUN 1). */
	itest_ok(becomes_active(hb, 2, &saw_ua, &seconds) && saw_ua, "node B, zbc-hm LUN 2: active too, with 06/2A/06",
		 NULL);
	itest_ok(zoned_write_to(hb, 2, 2 * ZONE_BLOCKS + 8) == 0,
		 "node B, zbc-hm LUN 2: WRITE at the write pointer node A left (zone 2 + 8) -> GOOD", "not GOOD");
	itest_ok(zoned_write_to(hb, 2, 2 * ZONE_BLOCKS) == 2,
		 "node B, zbc-hm LUN 2: WRITE at the zone start, below that pointer -> CHECK CONDITION", "not so");
	other = itest_session(&b, ITEST_INITIATOR_2, 1);
	itest_pattern(buf, sizeof(buf), 35);
	cdb16(cdb, 0x8a, 0, 800, 16);
	if (other)
		itest_expect_cmd(other, 1, "node B: another I_T nexus's WRITE(16) -> RESERVATION CONFLICT (the reservation "
				 "came over)", cdb, 16, ITEST_OUT, buf, sizeof(buf), 0, EXPECT_CONFLICT, NULL);
	write_pattern(hb, 800, 32);
	itest_ok(reads_back(hb, 800, 32), "node B: the reservation holder writes and reads back", "different data");

	if (itest_ok(itest_daemon_start(&a) == 0, "node A restarts", "see %s", a.log)) {
		ha = host_session(&a);
		itest_ok(ha != NULL, "the host logs in to the restarted node A", "no session");
		if (ha)
			itest_expect_cmd(ha, 1, "restarted node A waits in standby (B holds the lock) -> 02/04/0B", tur, 6,
					 ITEST_NONE, NULL, 0, 0, EXPECT_SENSE(0x02, 0x04, 0x0b), NULL);
		if (ha)
			same_groups_through_both(ha, hb, "1:2:1 2:0:2", "REPORT TARGET PORT GROUPS through the restarted "
						 "node A and node B: the same, group 2 (B) active/optimized");
	}
	if (!ha)
		goto out;
	/*
	 * A node that only lost contact (stopped, not dead): the other takes
	 * the image once its watch lapses, and when it comes back it cannot
	 * write: blocklisted, 02/04/03 (Fenced, docs/rbd.md).
	 */
	itest_daemon_signal(&b, SIGSTOP);
	itest_ok(becomes_active(ha, 1, &saw_ua, &seconds) && saw_ua,
		 "node B stopped (SIGSTOP): node A becomes active within 60 s, with 06/2A/06 first", NULL);
	itest_note("node A took over %.1f s after node B was stopped", seconds);
	itest_ok(reserved_by(ha, key, 0x01), "node A: the reservation came back with the image", NULL);
	itest_ok(groups_become(ha, "1:0:1 2:14:2", groups, sizeof(groups)),
		 "node A: REPORT TARGET PORT GROUPS -> group 1 active/optimized again, group 2 offline (node B, "
		 "stopped, beats no more)", "%s", groups);
	write_pattern(ha, 900, 33);
	itest_daemon_signal(&b, SIGCONT);
	/*
	 * Fenced, node B rejoins with a new connection (rbd_unavailable =
	 * standby), without a call of its own to the cluster: its watch of the
	 * state object hears of the fencing (be_rbd.c, fence_watch), so its
	 * group goes back to standby (06/2A/06, then 02/04/0B) with nothing sent
	 * to it but TEST UNIT READY, which does not reach the cluster.  Both
	 * nodes report the same groups again, and B takes the image over once
	 * more when A dies, with what A wrote meanwhile.
	 */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	itest_ok(back_in_standby(hb, &saw_ua), "node B, fenced while stopped, idle since: TEST UNIT READY -> 02/04/0B "
		 "within 30 s (it heard of the fencing without a write)", NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	itest_note("node B was in standby %.1f s after SIGCONT",
		   (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	itest_ok(saw_ua, "before that: 06/2A/06 ASYMMETRIC ACCESS STATE CHANGED", NULL);
	itest_pattern(buf, sizeof(buf), 34);
	cdb16(cdb, 0x8a, 0, 900, 16);
	itest_expect_cmd(hb, 1, "node B, back after losing the image: WRITE(16) -> 02/04/0B, not done", cdb, 16,
			 ITEST_OUT, buf, sizeof(buf), 0, EXPECT_SENSE(0x02, 0x04, 0x0b), NULL);
	itest_ok(reads_back(ha, 900, 33), "node A still reads its own write there, not node B's", "different data");
	same_groups_through_both(ha, hb, "1:0:1 2:2:2", "REPORT TARGET PORT GROUPS through node A and the "
				 "rejoined node B: group 1 active/optimized, group 2 standby");
	itest_ctl_expect(&b, out, sizeof(out), 0, "lu show 1", "node B: sbcemuctl lu show 1 -> exit 0");
	itest_ok(strstr(out, "waiting for the image") != NULL, "node B: backend_status says it waits for the image",
		 "%s", out);
	itest_close(ha);
	ha = NULL;
	itest_daemon_stop(&a, SIGKILL);
	itest_ok(becomes_active(hb, 1, &saw_ua, &seconds) && saw_ua,
		 "after kill -9 of node A: the rejoined node B becomes active again, with 06/2A/06 first", NULL);
	itest_note("node B took over again %.1f s after node A was killed", seconds);
	itest_ok(reads_back(hb, 900, 33), "node B reads what node A wrote while B was fenced", "different data");
	itest_close(hb);
	hb = NULL;
	status = itest_daemon_stop(&b, SIGTERM);
	itest_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		 "node B, which rejoined, stops on SIGTERM with status 0 (its fenced connection closed too)", "status 0x%x",
		 status);
out:
	if (ha)
		itest_close(ha);
	if (hb)
		itest_close(hb);
	if (other)
		itest_close(other);
	nodes_end(&a, &b);
}

/* ---- an image that comes later ---- */

/* MAXIMUM ATOMIC TRANSFER LENGTH of the Block Limits VPD page (B0h, bytes 44-47) of LUN 1; -1 when not read. */
/*
 * The holder's watch of the state object lapses without a fencing: node A
 * is stopped (SIGSTOP) for longer than osd_client_watch_timeout (10 s)
 * while no other node asks for the image, so the OSD drops its watches and
 * nobody breaks its lock.  Continued, A hears the watch's error (ENOTCONN),
 * finds it is not fenced and watches again (be_rbd.c, fence_watch_renew):
 * a node B started afterwards in standby gets its PERSISTENT RESERVE OUT
 * answered by A through that new watch (without it: 02/04/0B for ever).
 */
static void watch_lapses(void)
{
	const char *fourth = "iqn.2026-12.org.sbcemu:itest-initiator-4";
	uint8_t cdb[10] = { 0x5f, 0x00, 0, 0, 0, 0, 0, 0, 24, 0 }, param[24] = { 0 };
	struct itest_daemon a, b;
	struct iscsi_context *ha = NULL, *s4 = NULL;
	struct itest_result r;
	bool saw_ua, good = false;
	double seconds;
	char out[256];
	int tries = 0;

	itest_daemon_init(&a, "rbd-node-c");
	itest_daemon_init(&b, "rbd-node-d");
	if (!itest_ok(node_start(&a, 1), "node A (group 1) starts on image ha again", "see %s", a.log))
		goto out;
	ha = host_session(&a);
	if (!itest_ok(ha != NULL && becomes_active(ha, 1, &saw_ua, &seconds), "node A has the image (TEST UNIT "
		      "READY -> GOOD)", "no"))
		goto out;
	itest_daemon_signal(&a, SIGSTOP);
	sleep(13);
	itest_daemon_signal(&a, SIGCONT);
	itest_ok(becomes_active(ha, 1, &saw_ua, &seconds) && seconds < 1,
		 "node A, stopped 13 s with nobody waiting for the image: still the holder (TEST UNIT READY -> GOOD)",
		 "%.1f s", seconds);
	if (!itest_ok(node_start(&b, 2) && itest_daemon_log_has(&b, "standby"), "node B starts, in standby", "see %s",
		      b.log))
		goto out;
	s4 = itest_session(&b, fourth, 1);
	if (!itest_ok(s4 != NULL, "a fourth initiator logs in to node B", "no session"))
		goto out;
	itest_clear_ua(s4, 1);
	itest_put_be64(param + 8, 0x4444);
	for (; tries < 30 && !good; tries++) {
		itest_cmd(s4, 1, cdb, 10, ITEST_OUT, param, 24, 0, &r);
		good = itest_result_matches(&r, EXPECT_GOOD);
		itest_result_free(&r);
		if (!good)
			sleep(1);
	}
	itest_ok(good, "node B: REGISTER 4444h -> GOOD within 30 s: node A, whose watch lapsed, watches again and "
		 "answers", "still not GOOD after %d tries", tries);
	if (good)
		itest_note("node B's REGISTER was answered at try %d", tries);
	itest_ok(read_keys(ha, out, sizeof(out)) && strstr(out, "4444") != NULL,
		 "node A: READ KEYS -> 4444h among them", "%s", out);
	itest_put_be64(param, 0x4444);
	itest_put_be64(param + 8, 0);
	itest_expect_cmd(s4, 1, "node B: REGISTER with SERVICE ACTION RESERVATION KEY 0 (unregistering) -> GOOD", cdb, 10,
			 ITEST_OUT, param, 24, 0, EXPECT_GOOD, NULL);
out:
	if (ha)
		itest_close(ha);
	if (s4)
		itest_close(s4);
	nodes_end(&a, &b);
}

static long long max_atomic(struct iscsi_context *s)
{
	uint8_t inq[6] = { 0x12, 0x01, 0xb0, 0, 64, 0 };
	struct itest_result r;
	long long v = -1;

	itest_cmd(s, 1, inq, 6, ITEST_IN, NULL, 0, 64, &r);
	if (r.transport_ok && r.status == 0 && r.data_len >= 48)
		v = itest_get_be32(r.data + 44);
	itest_result_free(&r);
	return v;
}

/*
 * rbd_unavailable = not-ready: the pool is missing at start-up; the daemon
 * starts anyway, the LU answers 02/04/01 (LOGICAL UNIT IS IN PROCESS OF
 * BECOMING READY) to medium access and INQUIRY as usual; once the pool is
 * made the backend's thread opens the image (every 5 s), and the LU is
 * ready: 06/28/00 (NOT READY TO READY CHANGE), then I/O.  WRITE ATOMIC,
 * offered on an assumed 4 MiB object until then, is withdrawn with 06/3F/03
 * when the image came with 512 KiB objects, smaller than ATOMIC ALIGNMENT.
 */
static void comes_later(void)
{
	struct itest_daemon d3;
	struct iscsi_context *s;
	uint8_t tur[6] = { 0 }, inq[6] = { 0x12, 0, 0, 0, 96, 0 }, cdb[16], buf[16 * BS];
	char text[1024], cmd[4096], out[8192];
	struct itest_result r;
	bool ready = false, saw_ua = false, saw_inquiry_ua = false;

	itest_daemon_init(&d3, "rbd-later");
	snprintf(text, sizeof(text),
		 "[target \"" ITEST_TARGET "\"]\n[lun \"" ITEST_TARGET "\" 0]\npath = @DIR@/lun0.img\nsize = 1M\n"
		 "[lun \"" ITEST_TARGET "\" 1]\nbackend = rbd\nrbd_pool = later\n"
		 "rbd_image = img\nsize = 64M\nrbd_unavailable = not-ready\nceph_conf = %s\n"
		 "max_atomic_transfer_length = 2048\natomic_alignment = 2048\n",
		 conf_path);
	itest_daemon_write_config(&d3, text);
	if (!itest_ok(itest_daemon_start(&d3) == 0 && itest_daemon_log_has(&d3, "tried again every 5 s"),
		      "rbd_unavailable = not-ready: sbcemud starts without the pool, logging why", "see %s", d3.log)) {
		itest_daemon_cleanup(&d3);
		return;
	}
	s = session(&d3);
	if (!itest_ok(s != NULL, "login to the LU without an image", "no session")) {
		itest_daemon_stop(&d3, SIGTERM);
		itest_daemon_cleanup(&d3);
		return;
	}
	itest_clear_ua(s, 1);
	itest_expect_cmd(s, 1, "no image yet: TEST UNIT READY -> 02/04/01 (IN PROCESS OF BECOMING READY)", tur, 6,
			 ITEST_NONE, NULL, 0, 0, EXPECT_SENSE(0x02, 0x04, 0x01), NULL);
	cdb16(cdb, 0x88, 0, 0, 16);
	itest_expect_cmd(s, 1, "no image yet: READ(16) -> 02/04/01", cdb, 16, ITEST_IN, NULL, 0, sizeof(buf),
			 EXPECT_SENSE(0x02, 0x04, 0x01), NULL);
	itest_expect_cmd(s, 1, "no image yet: INQUIRY -> GOOD", inq, 6, ITEST_IN, NULL, 0, 96, EXPECT_GOOD, NULL);
	itest_ok(max_atomic(s) == 2048, "no image yet: Block Limits MAXIMUM ATOMIC TRANSFER LENGTH 2048 (offered on "
		 "RBD's default 4 MiB objects, 8192 blocks)", "%lld", max_atomic(s));
	itest_ctl_expect(&d3, out, sizeof(out), 0, "lu show 1", "sbcemuctl lu show 1 -> exit 0");
	itest_ok(strstr(out, "waiting for the image") && strstr(out, "pool later"),
		 "lu show: backend_status says it waits for the image, and why (pool later)", "%s", out);
	/*
	 * The image made beforehand with 512 KiB objects (1024 blocks), in a
	 * pool renamed into place at once: the daemon's next attempt finds it
	 * there, never the pool without it (it would make the image, with 4 MiB
	 * objects).
	 */
	snprintf(cmd, sizeof(cmd),
		 "ceph -c '%s' osd pool create latertmp 8 8 >/dev/null 2>&1 && rbd -c '%s' pool init latertmp && "
		 "rbd -c '%s' create --size 64M --object-size 512K latertmp/img && "
		 "ceph -c '%s' osd pool rename latertmp later >/dev/null 2>&1",
		 conf_path, conf_path, conf_path, conf_path);
	if (!itest_ok(system(cmd) == 0, "the pool is made with the image, of 512 KiB objects (ceph osd pool create, "
		      "rbd pool init, rbd create --object-size 512K, ceph osd pool rename)", "it failed")) {
		itest_close(s);
		itest_daemon_stop(&d3, SIGTERM);
		itest_daemon_cleanup(&d3);
		return;
	}
	for (int i = 0; i < 120 && !ready; i++) {
		itest_cmd(s, 1, tur, 6, ITEST_NONE, NULL, 0, 0, &r);
		saw_ua |= itest_result_matches(&r, EXPECT_SENSE(0x06, 0x28, 0x00));
		saw_inquiry_ua |= itest_result_matches(&r, EXPECT_SENSE(0x06, 0x3f, 0x03));
		ready = itest_result_matches(&r, EXPECT_GOOD);
		itest_result_free(&r);
		if (!ready)
			usleep(250 * 1000);
	}
	itest_ok(ready, "within 30 s of the pool: TEST UNIT READY -> GOOD", NULL);
	itest_ok(saw_ua, "before that: 06/28/00 NOT READY TO READY CHANGE", NULL);
	/* 1024-block objects hold no whole 2048-block granule: WRITE ATOMIC is withdrawn (sbc_write_atomic_recheck). */
	itest_ok(saw_inquiry_ua, "and 06/3F/03 INQUIRY DATA HAS CHANGED (the Block Limits VPD page changed): the "
		 "image's objects are smaller than ATOMIC ALIGNMENT", NULL);
	itest_ok(max_atomic(s) == 0, "Block Limits MAXIMUM ATOMIC TRANSFER LENGTH now 0", "%lld", max_atomic(s));
	cdb16(cdb, 0x9c, 0, 0, 1);
	itest_expect_cmd(s, 1, "WRITE ATOMIC(16) -> 05/20/00 (no longer offered)", cdb, 16, ITEST_OUT, buf, BS, 0,
			 EXPECT_SENSE(0x05, 0x20, 0x00), NULL);
	write_pattern(s, 300, 21);
	itest_ok(reads_back(s, 300, 21), "the LU whose image came later writes and reads back", "different data");
	itest_ctl_expect(&d3, out, sizeof(out), 0, "lu show 1", "sbcemuctl lu show 1 -> exit 0 (image open)");
	itest_ok(strstr(out, "exclusive lock held by this node") != NULL,
		 "lu show: backend_status names the lock this node holds", "%s", out);
	itest_close(s);
	itest_daemon_stop(&d3, SIGTERM);
	itest_daemon_cleanup(&d3);
}

/* Closed while the image is still being tried (between attempts): a clean stop, at once. */
static void stops_while_waiting(void)
{
	struct itest_daemon d4;
	char text[1024];
	int status;

	itest_daemon_init(&d4, "rbd-never");
	snprintf(text, sizeof(text),
		 "[target \"" ITEST_TARGET "\"]\n[lun \"" ITEST_TARGET "\" 0]\nbackend = rbd\nrbd_pool = never\n"
		 "rbd_image = img\nsize = 64M\nrbd_unavailable = not-ready\nceph_conf = %s\n",
		 conf_path);
	itest_daemon_write_config(&d4, text);
	if (itest_ok(itest_daemon_start(&d4) == 0, "rbd_unavailable = not-ready: starts without pool never", "see %s",
		     d4.log)) {
		status = itest_daemon_stop(&d4, SIGTERM);
		itest_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			 "SIGTERM while the image is still tried: exit status 0", "status %d", status);
	}
	itest_daemon_cleanup(&d4);
}

/* ---- configuration errors ---- */

static void config_refused(struct itest_daemon *d, const char *name, const char *lun_keys, const char *want)
{
	char path[700], cmd[3000], out[4096] = "";
	size_t n = 0;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/bad.ini", d->dir);
	f = fopen(path, "w");
	if (!f) {
		itest_ok(false, name, "cannot write %s", path);
		return;
	}
	fprintf(f, "[target \"" ITEST_TARGET "\"]\n[lun \"" ITEST_TARGET "\" 0]\n%s", lun_keys);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "'%s' --check -c '%s' --state-dir '%s/badstate' 2>&1", d->bin, path, d->dir);
	f = popen(cmd, "r");
	if (f) {
		n = fread(out, 1, sizeof(out) - 1, f);
		out[n] = '\0';
		rc = pclose(f);
	} else {
		rc = 0;
	}
	itest_ok(rc != 0 && strstr(out, want) != NULL, name, "exit %d, output: %s", rc, out);
}

/* ---- librbd is loaded only for an rbd LU (be_rbd_load.c) ---- */

/* Whether the process maps a file whose path holds name (/proc/PID/maps). */
static bool maps(pid_t pid, const char *name)
{
	char path[64], line[1024];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, name) != NULL;
	fclose(f);
	return found;
}

static void module_loaded_on_use(const struct itest_daemon *with_rbd)
{
	struct itest_daemon plain, missing;
	char text[1024];

	itest_ok(maps(with_rbd->pid, "librbd.so") && maps(with_rbd->pid, "sbcemu-rbd.so"),
		 "a daemon with rbd LUs maps sbcemu-rbd.so and librbd", "not in /proc/%d/maps", (int)with_rbd->pid);

	itest_daemon_init(&plain, "rbd-none");
	if (itest_daemon_write_config(&plain, itest_default_config) == 0 && itest_daemon_start(&plain) == 0) {
		itest_ok(!maps(plain.pid, "librbd") && !maps(plain.pid, "librados") && !maps(plain.pid, "sbcemu-rbd"),
			 "a daemon with file LUs only maps neither librbd, librados nor the rbd module",
			 "see /proc/%d/maps", (int)plain.pid);
		itest_daemon_stop(&plain, SIGTERM);
	} else {
		itest_ok(false, "a daemon with file LUs only starts", "see %s", plain.log);
	}

	itest_daemon_init(&missing, "rbd-nomodule");
	snprintf(text, sizeof(text),
		 "[target \"" ITEST_TARGET "\"]\n[lun \"" ITEST_TARGET "\" 0]\nbackend = rbd\nrbd_image = nomodule\n"
		 "ceph_conf = %s\nsize = 1M\nrbd_unavailable = not-ready\n",
		 conf_path);
	setenv("SBCEMU_RBD_MODULE", "/nonexistent/sbcemu-rbd.so", 1);
	if (itest_daemon_write_config(&missing, text) == 0)
		itest_ok(itest_daemon_start(&missing) != 0 &&
				 itest_daemon_log_has(&missing, "backend rbd: cannot load its module: /nonexistent/"),
			 "without the rbd module an rbd LU is refused at start-up, naming the module (even with "
			 "rbd_unavailable = not-ready: a missing module is not an unavailable cluster)",
			 "see %s", missing.log);
	unsetenv("SBCEMU_RBD_MODULE");
}

/* ---- the cluster ---- */

static char cluster_dir[600];

/*
 * Under LeakSanitizer: librbd 16.2 leaks on a fenced (blocklisted) client
 * (2 objects of 64 bytes, 62 below them, all allocated inside librbd.so.1;
 * its images there are kept open, never closed: be_rbd.c).  The daemons
 * started here are told to leave librbd's leaks aside, nothing else.
 */
static char lsan_supp[64];

static void leaks_of_librbd_aside(void)
{
	const char *was = getenv("LSAN_OPTIONS");
	char opts[1024];
	FILE *f;

	snprintf(lsan_supp, sizeof(lsan_supp), "/tmp/sbcemu-lsan-rbd.%d.supp", (int)getpid());
	f = fopen(lsan_supp, "w");
	if (!f)
		return;
	fputs("leak:librbd.so\n", f);
	fclose(f);
	snprintf(opts, sizeof(opts), "%s%ssuppressions=%s", was ? was : "", was && was[0] ? ":" : "", lsan_supp);
	setenv("LSAN_OPTIONS", opts, 1);
}

static bool cluster_up(void)
{
	const char *script = getenv("SBCE_CEPH_CLUSTER");
	char cmd[1400];
	FILE *f;
	size_t n;

	if (!script) {
		itest_note("SBCE_CEPH_CLUSTER is not set (CMake sets it to scripts/ceph-cluster)");
		return false;
	}
	snprintf(cluster_dir, sizeof(cluster_dir), "/tmp/sbcemu-ceph.%d", (int)getpid());
	/* A killed node's lock is broken 10 s after its death rather than 30 (standby_and_failover). */
	snprintf(cmd, sizeof(cmd), "OSD_CLIENT_WATCH_TIMEOUT=10 '%s' up '%s' | tail -n 1", script, cluster_dir);
	f = popen(cmd, "r");
	if (!f)
		return false;
	n = fread(conf_path, 1, sizeof(conf_path) - 1, f);
	conf_path[n] = '\0';
	conf_path[strcspn(conf_path, "\n")] = '\0';
	return pclose(f) == 0 && conf_path[0] == '/';
}

static void cluster_down(void)
{
	char cmd[1400];

	snprintf(cmd, sizeof(cmd), "'%s' down '%s' >/dev/null 2>&1", getenv("SBCE_CEPH_CLUSTER"), cluster_dir);
	if (system(cmd) != 0)
		itest_note("stopping the cluster in %s failed", cluster_dir);
}

int main(int argc, char **argv)
{
	struct itest_daemon d;
	struct iscsi_context *s;

	itest_init(argc, argv, "test_rbd");
	leaks_of_librbd_aside();
	if (!itest_ok(cluster_up(), "a throwaway Ceph cluster starts (scripts/ceph-cluster up)", "it did not"))
		return itest_finish();
	itest_daemon_init(&d, "rbd");
	write_config(&d);
	if (!itest_ok(itest_daemon_start(&d) == 0, "sbcemud starts with LUs on RBD images", "see %s", d.log)) {
		cluster_down();
		return itest_finish();
	}
	module_loaded_on_use(&d);
	s = session(&d);
	if (itest_ok(s != NULL, "login", "no session")) {
		conventional_steps(s);
		pi_steps(s);
		zbc_steps(s);
		no_atomic(s, &d);
		atomic_in_one_object(s);
		provisioning(s);
		itest_close(s);
	}
	second_node_refused();
	standby_and_failover();
	watch_lapses();
	comes_later();
	stops_while_waiting();
	survives(&d);
	fenced(&d);
	{
		int status = itest_daemon_stop(&d, SIGTERM);

		/* librbd 16.2's rbd_close crashes on a blocklisted client's image (be_rbd.c keeps it open). */
		itest_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			 "the fenced daemon (rbd_unavailable = fail) stops on SIGTERM with status 0", "status 0x%x",
			 status);
	}

	config_refused(&d, "config: backend rbd without rbd_image -> error naming rbd_image",
		       "backend = rbd\nsize = 1M\n", "rbd_image: required key is missing");
	config_refused(&d, "config: backend rbd with a path -> error naming path",
		       "backend = rbd\nrbd_image = x\npath = /tmp/x.img\n", "path: backend rbd keeps");
	config_refused(&d, "config: backend rbd with volatile_write_cache -> error naming it",
		       "backend = rbd\nrbd_image = x\nvolatile_write_cache = true\n", "volatile_write_cache: not with");
	config_refused(&d, "config: rbd_unavailable = not-ready without size -> error naming it",
		       "backend = rbd\nrbd_image = x\nrbd_unavailable = not-ready\n", "not-ready needs size");
	config_refused(&d, "config: rbd_unavailable = standby without alua -> error naming it",
		       "backend = rbd\nrbd_image = x\nsize = 1M\nrbd_unavailable = standby\n",
		       "standby needs alua = implicit or both");
	config_refused(&d, "config: rbd_unavailable on a file LU -> error naming it",
		       "path = x.img\nsize = 1M\nrbd_unavailable = not-ready\n", "only with backend rbd");
	config_refused(&d, "config: backend nfs -> error naming backend", "backend = nfs\npath = x.img\nsize = 1M\n",
		       "backend");
	itest_daemon_cleanup(&d);
	cluster_down();
	if (lsan_supp[0])
		unlink(lsan_supp);
	return itest_finish();
}
