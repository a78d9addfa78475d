/*
 * An LU whose backend is still being opened (backend_ops.ready false, as
 * be_rbd_open_later's): medium access gets NOT READY, LOGICAL UNIT IS IN
 * PROCESS OF BECOMING READY (02/04/01), INQUIRY is served; once ready, the
 * next command of each I_T nexus gets NOT READY TO READY CHANGE (06/28/00),
 * then I/O runs.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "harness.h"

#define NUM_BLOCKS 1024
#define BS 512

static bool backend_ready;
static struct backend_ops later_ops;

static bool later_ready(struct backend *be)
{
	(void)be;
	return backend_ready;
}

START_TEST(becoming_ready_until_the_backend_is)
{
	static const uint8_t tur[6] = { 0x00 };
	static const uint8_t inquiry[6] = { 0x12, 0, 0, 0, 96, 0 };
	static const uint8_t read10[10] = { 0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
	struct scsi_device *dev = scsi_device_create("iqn.2026-12.org.sbcemu:later", NULL, NULL);
	struct backend *be = be_mem_open(NUM_BLOCKS * BS);
	struct scsi_lu_params p;
	struct harness h;
	struct harness_result r;
	char err[256], dir[] = "/tmp/sbce-later-XXXXXX";
	struct scsi_lu *lu;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	later_ops = *be->ops;
	later_ops.ready = later_ready;
	be->ops = &later_ops;
	backend_ready = false;
	memset(&p, 0, sizeof(p));
	p.kind = SCSI_LU_CONVENTIONAL;
	p.logical_block_size = BS;
	p.num_blocks = NUM_BLOCKS;
	p.state_dir = dir;
	lu = scsi_lu_create(dev, &p, be, err, sizeof(err));
	ck_assert_msg(lu != NULL, "%s", err);
	/* The harness's commands, on this device: its nexuses are made here. */
	memset(&h, 0, sizeof(h));
	h.dev = dev;
	h.lu = lu;
	snprintf(h.state_dir, sizeof(h.state_dir), "%s", dir);
	h.nexus[0] = scsi_nexus_create(dev, &harness_transport, "iqn.2026-12.org.sbcemu:a", "", 1);
	h.nexus[1] = scsi_nexus_create(dev, &harness_transport, "iqn.2026-12.org.sbcemu:b", "", 1);
	harness_run(&h, 0, inquiry, sizeof(inquiry), NULL, 0, 96, &r);
	harness_expect_good(&r);
	harness_run(&h, 0, tur, sizeof(tur), NULL, 0, 0, &r);
	harness_expect_sense(&r, 0x6, 0x2900); /* the power on first */
	harness_run(&h, 0, tur, sizeof(tur), NULL, 0, 0, &r);
	harness_expect_sense(&r, 0x2, 0x0401);
	harness_run(&h, 0, read10, sizeof(read10), NULL, 0, 512, &r);
	harness_expect_sense(&r, 0x2, 0x0401);

	backend_ready = true;
	harness_run(&h, 0, tur, sizeof(tur), NULL, 0, 0, &r);
	harness_expect_sense(&r, 0x6, 0x2800);
	harness_run(&h, 0, read10, sizeof(read10), NULL, 0, 512, &r);
	harness_expect_good(&r);
	harness_run(&h, 1, tur, sizeof(tur), NULL, 0, 0, &r);
	harness_expect_sense(&r, 0x6, 0x2900); /* the other nexus: its power on, then the change */
	harness_run(&h, 1, tur, sizeof(tur), NULL, 0, 0, &r);
	harness_expect_sense(&r, 0x6, 0x2800);
	harness_run(&h, 1, read10, sizeof(read10), NULL, 0, 512, &r);
	harness_expect_good(&r);
	harness_fini(&h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("backend_ready");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, becoming_ready_until_the_backend_is);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
