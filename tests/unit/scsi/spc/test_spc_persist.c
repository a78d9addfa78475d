/* spc_persist.c: the state files of saved mode pages and APTPL reservations. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "manual_executor.h"
#include "spc/spc.h"

static struct harness h;
static struct spc_persist_file f;

static void setup(void)
{
	harness_init(&h, 2048, 512, NULL);
	spc_persist_init(&f, h.lu, "test_state");
}

static void teardown(void)
{
	spc_persist_fini(&f);
	harness_fini(&h);
}

/* Write, read back, replace, remove. */
START_TEST(write_load_remove)
{
	uint8_t *data;
	size_t len;

	ck_assert_int_eq(spc_persist_load(&f, &data, &len, 64), -ENOENT);
	ck_assert_int_eq(spc_persist_write_now(&f, (const uint8_t *)"hello", 5), 0);
	ck_assert_int_eq(spc_persist_load(&f, &data, &len, 64), 0);
	ck_assert_uint_eq(len, 5);
	ck_assert_mem_eq(data, "hello", 5);
	free(data);
	ck_assert_int_eq(spc_persist_write_now(&f, (const uint8_t *)"hi", 2), 0);
	ck_assert_int_eq(spc_persist_load(&f, &data, &len, 64), 0);
	ck_assert_uint_eq(len, 2);
	free(data);
	/* No temporary file is left behind. */
	{
		char tmp[PATH_MAX + 40];
		snprintf(tmp, sizeof(tmp), "%s.tmp", f.path);
		ck_assert_int_ne(access(tmp, F_OK), 0);
	}
	ck_assert_int_eq(spc_persist_write_now(&f, NULL, 0), 0);
	ck_assert_int_eq(spc_persist_load(&f, &data, &len, 64), -ENOENT);
}
END_TEST

/* A file longer than the caller's maximum is refused (treated as corrupt). */
START_TEST(load_too_long)
{
	uint8_t big[100] = { 0 }, *data;
	size_t len;

	ck_assert_int_eq(spc_persist_write_now(&f, big, sizeof(big)), 0);
	ck_assert_int_eq(spc_persist_load(&f, &data, &len, 64), -EFBIG);
	ck_assert_ptr_null(data);
}
END_TEST

/* A MODE SELECT(10) SP = 1 of the Control page with D_SENSE = d_sense, left pending on the executor. */
static void select_save(uint8_t d_sense, struct harness_result *r)
{
	uint8_t list[20] = { 0 }, cdb[10] = { 0x55, 0x11, 0, 0, 0, 0, 0, 0, 20, 0 };

	/* The Control page as spc_mode_pages.c serves it (EXTENDED SELF-TEST COMPLETION TIME 20 s), D_SENSE aside. */
	memcpy(list + 8, (const uint8_t[]){ 0x0a, 0x0a, d_sense ? 0x04 : 0x00, 0x10, 0, 0, 0, 0, 0xff, 0xff, 0, 20 },
	       12);
	harness_run(&h, 0, cdb, 10, list, 20, 20, r);
}

/*
 * Two saves whose writes overtake each other on the workers: the older
 * image, written last, must not replace the newer one.
 */
START_TEST(older_generation_ignored)
{
	struct manual_executor m;
	struct harness_result r1, r2;
	struct scsi_io_job *first, *second;
	struct scsi_device *dev2;
	struct scsi_lu *lu2;
	struct scsi_lu_params p = h.lu->params;
	char err[128];

	harness_clear_ua(&h);
	manual_executor_init(&m);
	h.dev->executor = &m.ex;
	select_save(1, &r1);
	select_save(0, &r2);
	ck_assert_uint_eq(manual_executor_pending(&m), 2);
	/* Run the second write first. */
	first = m.head;
	second = first->next;
	second->next = first;
	first->next = NULL;
	m.head = second;
	m.tail = first;
	manual_executor_run(&m, 10);
	h.dev->executor = &scsi_executor_inline;
	ck_assert_uint_eq(r1.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r2.status, SCSI_STATUS_GOOD);
	dev2 = scsi_device_create("iqn.2026-12.org.sbcemu:reload", NULL, NULL);
	lu2 = scsi_lu_create(dev2, &p, be_mem_open(2048 * 512), err, sizeof(err));
	ck_assert_ptr_nonnull(lu2);
	ck_assert(!lu2->mode_current.d_sense);
	scsi_device_destroy(dev2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spc_persist");
	TCase *tc = tcase_create("persist");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, write_load_remove);
	tcase_add_test(tc, load_too_long);
	tcase_add_test(tc, older_generation_ignored);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
