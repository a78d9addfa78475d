/*
 * The SCSI core's state files (saved mode pages, APTPL reservations, the
 * PI format, the zone state) are opened with be_state_open: never through
 * a symbolic link (open(2) O_NOFOLLOW), created 0600.  A link in place of a
 * state file fails the LU's creation; one in place of a temporary file
 * fails the save; in both cases the file it points to is left as it was.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "sbc/sbc_pi.h"
#include "spc/spc.h"

#define BLOCKS 2048u
#define BS 512u

static char dir[256], victim[300];

static void setup(void)
{
	int fd;

	snprintf(dir, sizeof(dir), "/tmp/sbce-state-links-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	fd = open(victim, O_CREAT | O_WRONLY, 0600);
	ck_assert_int_eq(write(fd, "precious", 8), 8);
	close(fd);
}

static void teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void expect_victim_intact(void)
{
	char back[16] = "";
	int fd = open(victim, O_RDONLY);

	ck_assert_int_eq(read(fd, back, sizeof(back)), 8);
	close(fd);
	ck_assert_str_eq(back, "precious");
}

/* LU parameters of each kind of state file: [0] conventional, [1] with PI type 1, [2] host managed. */
static struct scsi_lu_params lu_params(int kind)
{
	struct scsi_lu_params p = { .logical_block_size = BS, .num_blocks = BLOCKS, .state_dir = dir };

	if (kind == 1)
		p.protection_type = 1;
	if (kind == 2) {
		p.kind = SCSI_LU_ZBC_HM;
		p.zone_size = 256;
		p.conventional_zones = 1;
	}
	return p;
}

static struct scsi_lu *lu_create(struct scsi_device *dev, int kind, char *err, size_t errlen)
{
	struct scsi_lu_params p = lu_params(kind);
	struct backend *be = be_mem_open(scsi_lu_backing_bytes(BS, BLOCKS, kind == 1));
	struct scsi_lu *lu = scsi_lu_create(dev, &p, be, err, errlen);

	if (!lu)
		be_close(be); /* a refused backend stays the caller's */
	return lu;
}

static const struct {
	const char *name;
	int kind;
} state_files[] = {
	{ "mode_pages", 0 },
	{ "persistent_reservations", 0 },
	{ "format", 1 },
	{ "zones.state", 2 },
};

START_TEST(a_link_in_place_of_a_state_file_fails_the_lu)
{
	struct scsi_device *dev = scsi_device_create("iqn.2026-12.org.sbcemu:links", NULL, NULL);
	char link[400], err[512] = "";
	struct scsi_lu *lu;

	snprintf(link, sizeof(link), "%s/%s", dir, state_files[_i].name);
	ck_assert_int_eq(symlink(victim, link), 0);
	lu = lu_create(dev, state_files[_i].kind, err, sizeof(err));
	ck_assert_msg(lu == NULL, "%s through a link: the LU was created", state_files[_i].name);
	expect_victim_intact();
	/* A dangling one: the file it names is not created either. */
	unlink(victim);
	lu = lu_create(dev, state_files[_i].kind, err, sizeof(err));
	ck_assert_ptr_null(lu);
	ck_assert_int_ne(access(victim, F_OK), 0);
	scsi_device_destroy(dev);
}
END_TEST

START_TEST(a_link_in_place_of_a_temporary_file_fails_the_save)
{
	struct scsi_device *dev = scsi_device_create("iqn.2026-12.org.sbcemu:links", NULL, NULL);
	char link[400], err[512] = "";
	struct spc_persist_file f;
	struct scsi_lu *lu = lu_create(dev, 1, err, sizeof(err));

	ck_assert_msg(lu != NULL, "%s", err);
	spc_persist_init(&f, lu, "test_state");
	snprintf(link, sizeof(link), "%s/test_state.tmp", dir);
	ck_assert_int_eq(symlink(victim, link), 0);
	ck_assert_int_eq(spc_persist_write_now(&f, (const uint8_t *)"image", 5), -ELOOP);
	expect_victim_intact();
	spc_persist_fini(&f);
	snprintf(link, sizeof(link), "%s/format.tmp", dir);
	ck_assert_int_eq(symlink(victim, link), 0);
	ck_assert_int_eq(sbc_pi_save_format(lu), -ELOOP);
	expect_victim_intact();
	scsi_device_destroy(dev);
}
END_TEST

START_TEST(state_files_are_created_0600)
{
	struct scsi_device *dev = scsi_device_create("iqn.2026-12.org.sbcemu:links", NULL, NULL);
	static const char *const names[] = { "zones.state", "format", "test_state" };
	char err[512] = "", path[400];
	struct spc_persist_file f;
	struct scsi_lu *pi, *zoned;
	mode_t old = umask(022);
	struct stat st;

	zoned = lu_create(dev, 2, err, sizeof(err));
	ck_assert_msg(zoned != NULL, "%s", err);
	scsi_device_destroy(dev);
	dev = scsi_device_create("iqn.2026-12.org.sbcemu:links", NULL, NULL);
	pi = lu_create(dev, 1, err, sizeof(err));
	ck_assert_msg(pi != NULL, "%s", err);
	ck_assert_int_eq(sbc_pi_save_format(pi), 0);
	spc_persist_init(&f, pi, "test_state");
	ck_assert_int_eq(spc_persist_write_now(&f, (const uint8_t *)"image", 5), 0);
	spc_persist_fini(&f);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_msg((st.st_mode & 07777) == 0600, "%s: mode %04o, want 0600", names[i],
			      (unsigned)(st.st_mode & 07777));
	}
	scsi_device_destroy(dev);
	umask(old);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("state_links");
	TCase *tc = tcase_create("links");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, a_link_in_place_of_a_state_file_fails_the_lu, 0,
			    (int)(sizeof(state_files) / sizeof(state_files[0])));
	tcase_add_test(tc, a_link_in_place_of_a_temporary_file_fails_the_save);
	tcase_add_test(tc, state_files_are_created_0600);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
