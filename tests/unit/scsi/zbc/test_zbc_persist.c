/*
 * zbc_persist.c: the zone state file (format in zbc_persist.c's header
 * comment): exact header and record bytes, records written only by the
 * worker-side persist calls (so a crash before them loses the advance, as
 * it loses the unacknowledged data), open zones coming back CLOSED/EMPTY
 * after a restart, faults surviving, and files of another layout refused.
 *
 * A restart is zbc_fini + zbc_init on the same LU and state directory.
 * Layout: 8 zones of 64 blocks, zones 0-1 conventional.
 */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zbc_fixture.h"

#define ZS 64
#define Z(n) ((uint64_t)(n) * ZS)
#define FILE_LEN (64 + 8 * 32)

static struct harness h;
static struct harness_result r;
static char err[512];

static void setup(void)
{
	zbc_fixture_init(&h, SCSI_LU_ZBC_HM, 8 * ZS, ZS, 2, 2, true, 0);
}

static void teardown(void)
{
	zbc_fixture_fini(&h);
}

static void state_path(char *buf, size_t len)
{
	snprintf(buf, len, "%s/zones.state", h.state_dir);
}

static size_t read_state(uint8_t *buf, size_t len)
{
	char path[512];
	int fd;
	ssize_t n;

	state_path(path, sizeof(path));
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, len);
	close(fd);
	ck_assert_int_ge(n, 0);
	return (size_t)n;
}

static void restart(void)
{
	zbc_fini(h.lu);
	ck_assert_msg(zbc_init(h.lu, err, sizeof(err)) == 0, "%s", err);
}

static void write_ok(uint64_t lba, uint32_t n)
{
	ck_assert_int_eq(zbc_test_write(&h, lba, n, NULL, NULL), SCSI_OK);
}

/* A new LU gets a state file: 64-byte header, then one 32-byte record per zone. */
START_TEST(new_file_layout)
{
	static const uint8_t header[64] = {
		'S', 'B', 'C', 'E', 'Z', 'O', 'N', 'E',
		0, 0, 0, 1,  0, 0, 0, 32,        /* version 1, record size 32 */
		0, 0, 2, 0,  0, 0, 0, 8,         /* block size 512, 8 zones */
		0, 0, 0, 0, 0, 0, 0, 64,         /* zone size */
		0, 0, 0, 2,  0x02, 0, 0, 0,      /* 2 conventional, write pointer zones SWR */
		0, 0, 0, 0, 0, 0, 0x02, 0x00,    /* capacity 512 */
	};
	static const uint8_t conventional[32] = { 0x01, 0x00 };
	static const uint8_t empty_zone2[32] = {
		0x02, 0x01, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0x80,
		0, 0, 0, 0, 0, 0, 0, 0x80,
	};
	uint8_t buf[1024];

	ck_assert_uint_eq(read_state(buf, sizeof(buf)), FILE_LEN);
	ck_assert_mem_eq(buf, header, 64);
	ck_assert_mem_eq(buf + 64, conventional, 32);
	ck_assert_mem_eq(buf + 64 + 2 * 32, empty_zone2, 32);
}
END_TEST

/* The worker's zbc_persist_range writes the zone's record; an open zone is recorded CLOSED. */
START_TEST(persist_range_writes_the_record)
{
	static const uint8_t closed_zone2[32] = {
		0x02, 0x04, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0x80,
		0, 0, 0, 0, 0, 0, 0, 0x88,
	};
	uint8_t buf[1024];

	write_ok(Z(2), 8);
	read_state(buf, sizeof(buf));
	ck_assert_uint_eq(buf[64 + 2 * 32 + 1], 0x01); /* not written until the worker persists */
	ck_assert_int_eq(zbc_persist_range(h.lu, Z(2), 8, 0), 0);
	read_state(buf, sizeof(buf));
	ck_assert_mem_eq(buf + 64 + 2 * 32, closed_zone2, 32);
	/* A conventional range writes nothing; FUA syncs. */
	ck_assert_int_eq(zbc_persist_range(h.lu, 0, 8, BE_WRITE_FUA), 0);
	ck_assert_int_eq(zbc_flush(h.lu), 0);
}
END_TEST

/* After a restart: written zones come back CLOSED with their WP, opened-but-empty zones EMPTY, FULL stays FULL. */
START_TEST(restart_restores_write_pointers)
{
	write_ok(Z(2), 8);
	ck_assert_int_eq(zbc_persist_range(h.lu, Z(2), 8, 0), 0);
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(3), false, &r);   /* explicitly opened, nothing written */
	zbc_test_out(&h, ZBC_SA_FINISH_ZONE, Z(4), false, &r); /* persisted by ZBC OUT */
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	restart();
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->condition, ZBC_ZC_CLOSED);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->wp, Z(2) + 8);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(3))->condition, ZBC_ZC_EMPTY);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(4))->condition, ZBC_ZC_FULL);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(4))->wp, Z(5));
	ck_assert_uint_eq(h.lu->zbc->nr_implicit_open + h.lu->zbc->nr_explicit_open, 0);
	/* The write pointer continues where it was. */
	write_ok(Z(2) + 8, 8);
}
END_TEST

/* A write whose record was never written (daemon killed before the worker persisted) is not in the file. */
START_TEST(unpersisted_advance_is_lost)
{
	write_ok(Z(2), 8);
	restart();
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->condition, ZBC_ZC_EMPTY);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->wp, Z(2));
}
END_TEST

/* kill -9 after the worker persisted: the acknowledged write's write pointer is in the file. */
START_TEST(killed_process_keeps_persisted_write_pointer)
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		write_ok(Z(2), 16);
		if (zbc_persist_range(h.lu, Z(2), 16, 0) == 0)
			kill(getpid(), SIGKILL);
		_exit(1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	restart();
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->condition, ZBC_ZC_CLOSED);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->wp, Z(2) + 16);
}
END_TEST

/* Two writes in flight: the first persist writes the newest state, so the file never goes back. */
START_TEST(persist_writes_newest_state)
{
	struct zbc_test_cmd a, b;
	uint8_t buf[1024];

	zbc_test_cmd_init(&a, &h, Z(2), 8);
	zbc_test_cmd_init(&b, &h, Z(2) + 8, 8);
	ck_assert_int_eq(zbc_test_write_begin(&a), SCSI_OK);
	ck_assert_int_eq(zbc_test_write_begin(&b), SCSI_OK);
	ck_assert_int_eq(zbc_persist_range(h.lu, Z(2) + 8, 8, 0), 0); /* b's worker finishes first */
	ck_assert_int_eq(zbc_persist_range(h.lu, Z(2), 8, 0), 0);
	read_state(buf, sizeof(buf));
	ck_assert_uint_eq(get_be64(buf + 64 + 2 * 32 + 16), Z(2) + 16);
	zbc_write_end(&a.cmd, true);
	zbc_write_end(&b.cmd, true);
}
END_TEST

/* RESET WRITE POINTER is persisted by ZBC OUT itself. */
START_TEST(reset_is_persisted)
{
	write_ok(Z(2), ZS);
	ck_assert_int_eq(zbc_persist_range(h.lu, Z(2), ZS, 0), 0);
	zbc_test_out(&h, ZBC_SA_RESET_WRITE_POINTER, Z(2), false, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	restart();
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->condition, ZBC_ZC_EMPTY);
	zbc_fill_all_zones(h.lu);
	ck_assert_int_eq(zbc_persist_all(h.lu, BE_WRITE_FUA), 0);
	restart();
	ck_assert_uint_eq(zbc_test_zone(&h, Z(7))->condition, ZBC_ZC_FULL);
}
END_TEST

/* Zone faults (config offline_zones / read_only_zones) survive a restart; EMPTY repairs them. */
START_TEST(faults_survive_restart)
{
	ck_assert_int_eq(zbc_set_condition(h.lu, Z(4), ZBC_ZC_OFFLINE, err, sizeof(err)), 0);
	ck_assert_int_eq(zbc_set_condition(h.lu, Z(5), ZBC_ZC_READ_ONLY, err, sizeof(err)), 0);
	restart();
	ck_assert_uint_eq(zbc_test_zone(&h, Z(4))->condition, ZBC_ZC_OFFLINE);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(5))->condition, ZBC_ZC_READ_ONLY);
	ck_assert_int_eq(zbc_set_condition(h.lu, Z(4), ZBC_ZC_EMPTY, err, sizeof(err)), 0);
	restart();
	ck_assert_uint_eq(zbc_test_zone(&h, Z(4))->condition, ZBC_ZC_EMPTY);
	ck_assert_int_eq(zbc_set_condition(h.lu, Z(4), ZBC_ZC_FULL, err, sizeof(err)), -1);
}
END_TEST

/* A file written for another layout is refused with both layouts named; nothing is reset. */
START_TEST(other_layout_refused)
{
	uint8_t before[1024], after[1024];

	write_ok(Z(2), 8);
	ck_assert_int_eq(zbc_persist_range(h.lu, Z(2), 8, 0), 0);
	read_state(before, sizeof(before));
	zbc_fini(h.lu);
	h.lu->params.zone_size = 32;
	ck_assert_int_eq(zbc_init(h.lu, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "was written for 8 zones of 64 blocks"));
	ck_assert_ptr_nonnull(strstr(err, "this LU has 16 zones of 32 blocks"));
	ck_assert_ptr_null(h.lu->zbc);
	h.lu->params.zone_size = 64;
	h.lu->params.conventional_zones = 1;
	ck_assert_int_eq(zbc_init(h.lu, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "1 conventional"));
	ck_assert_uint_eq(read_state(after, sizeof(after)), FILE_LEN);
	ck_assert_mem_eq(before, after, FILE_LEN);
	h.lu->params.conventional_zones = 2;
	ck_assert_int_eq(zbc_init(h.lu, err, sizeof(err)), 0);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->wp, Z(2) + 8);
}
END_TEST

/* A file that is not a zone state file, or is truncated, or holds a corrupt record, is refused. */
START_TEST(corrupt_files_refused)
{
	char path[512];
	int fd;

	zbc_fini(h.lu);
	state_path(path, sizeof(path));
	ck_assert_int_eq(truncate(path, FILE_LEN - 32), 0);
	ck_assert_int_eq(zbc_init(h.lu, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "truncated"));
	ck_assert_int_eq(truncate(path, FILE_LEN), 0); /* the last record is now all zeros: type 0 */
	ck_assert_int_eq(zbc_init(h.lu, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "record of zone 7"));
	fd = open(path, O_WRONLY);
	ck_assert_int_eq(pwrite(fd, "NOTZONES", 8, 0), 8);
	close(fd);
	ck_assert_int_eq(zbc_init(h.lu, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not a zone state file"));
	/* Removing the file starts over. */
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(zbc_init(h.lu, err, sizeof(err)), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("zbc_persist");
	TCase *tc = tcase_create("state_file");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, new_file_layout);
	tcase_add_test(tc, persist_range_writes_the_record);
	tcase_add_test(tc, restart_restores_write_pointers);
	tcase_add_test(tc, unpersisted_advance_is_lost);
	tcase_add_test(tc, killed_process_keeps_persisted_write_pointer);
	tcase_add_test(tc, persist_writes_newest_state);
	tcase_add_test(tc, reset_is_persisted);
	tcase_add_test(tc, faults_survive_restart);
	tcase_add_test(tc, other_layout_refused);
	tcase_add_test(tc, corrupt_files_refused);
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
