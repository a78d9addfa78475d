/*
 * spc_log_pages.c, spc_log.c: the Logical Block Provisioning log page (0Ch;
 * SBC-4 6.4.5, SBC-5 6.4.5 tables 196-202) on the memory backend, whose
 * allocated() counts the 512-byte grains written and not discarded.  Each
 * test names the rule it checks.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "manual_executor.h"
#include "core/scsi_internal.h"

#define NUM_BLOCKS 2048
#define BS 512

static struct harness h;
static struct harness_result r;
static struct manual_executor mex;

static void setup(void)
{
	harness_init(&h, NUM_BLOCKS, BS, NULL); /* thin provisioned */
	harness_clear_ua(&h);
}

/* A fully provisioned LU (thin_provisioning = false). */
static void setup_thick(void)
{
	struct scsi_lu_params p = { .kind = SCSI_LU_CONVENTIONAL };

	harness_init(&h, NUM_BLOCKS, BS, &p);
	harness_clear_ua(&h);
}

static void teardown(void)
{
	if (h.dev->executor == &mex.ex)
		manual_executor_run(&mex, ~0u);
	harness_fini(&h);
}

static void log_sense(uint8_t pc_page, uint8_t sub, uint16_t alloc)
{
	uint8_t cdb[10] = { 0x4d, 0, pc_page, sub, 0, 0, 0, (uint8_t)(alloc >> 8), (uint8_t)alloc, 0 };
	harness_run(&h, 0, cdb, 10, NULL, 0, 0, &r);
}

static void write_blocks(uint64_t lba, uint32_t n)
{
	uint8_t cdb[16] = { 0x8a };
	uint8_t *buf = malloc((size_t)n * BS);

	memset(buf, 0x5a, (size_t)n * BS);
	put_be64(cdb + 2, lba);
	put_be32(cdb + 10, n);
	harness_run(&h, 0, cdb, 16, buf, n * BS, n * BS, &r);
	harness_expect_good(&r);
	free(buf);
}

static void unmap_blocks(uint64_t lba, uint32_t n)
{
	uint8_t cdb[10] = { 0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0 };
	uint8_t list[24] = { 0, 22, 0, 16 };

	put_be64(list + 8, lba);
	put_be32(list + 16, n);
	harness_run(&h, 0, cdb, 10, list, sizeof(list), sizeof(list), &r);
	harness_expect_good(&r);
}

/* The RESOURCE COUNT of parameter code in the last 0Ch response (checking the parameter's shape), or abort. */
static uint32_t resource(uint16_t code)
{
	size_t end = 4 + get_be16(r.data_in + 2);

	for (size_t off = 4; off + 4 <= end; off += 4 + r.data_in[off + 3]) {
		const uint8_t *p = r.data_in + off;

		if (get_be16(p) != code)
			continue;
		/* SBC-4 6.4.5: binary format list parameter (FORMAT AND LINKING 11b), PARAMETER LENGTH 08h */
		ck_assert_uint_eq(p[2], 0x03);
		ck_assert_uint_eq(p[3], 0x08);
		/* SCOPE 01b: the resources are dedicated to the LU */
		ck_assert_uint_eq(p[8] & 0x03, 0x01);
		return code == 0x0003 ? get_be16(p + 4) : get_be32(p + 4);
	}
	ck_abort_msg("parameter %04xh missing", code);
	return 0;
}

static void read_lbp(void)
{
	log_sense(0x40 | 0x0c, 0, 255);
	harness_expect_good(&r);
}

/* SBC-4 6.4.5: DS = 1, SPF = 0, page 0Ch; 0001h, 0002h, 0003h in order, 12 bytes each; a new LU uses nothing. */
START_TEST(page_shape)
{
	read_lbp();
	ck_assert_uint_eq(r.data_in[0], 0x80 | 0x0c);
	ck_assert_uint_eq(r.data_in[1], 0);
	ck_assert_uint_eq(get_be16(r.data_in + 2), 36);
	ck_assert_uint_eq(get_be16(r.data_in + 4), 0x0001);
	ck_assert_uint_eq(get_be16(r.data_in + 16), 0x0002);
	ck_assert_uint_eq(get_be16(r.data_in + 28), 0x0003);
	/* THRESHOLD EXPONENT 0 (B2h): threshold sets of 2^0 = 1 LBA */
	ck_assert_uint_eq(resource(0x0001), NUM_BLOCKS);
	ck_assert_uint_eq(resource(0x0002), 0);
	ck_assert_uint_eq(resource(0x0003), 100);
}
END_TEST

/* SPC-4 7.3.18 / 7.3.19: the supported pages lists name 0Ch on an LU that has it. */
START_TEST(listed)
{
	bool found = false;

	log_sense(0x40, 0, 255);
	harness_expect_good(&r);
	for (size_t i = 4; i < 4u + get_be16(r.data_in + 2); i++)
		found |= r.data_in[i] == 0x0c;
	ck_assert(found);
	found = false;
	log_sense(0x40, 0xff, 1024);
	harness_expect_good(&r);
	for (size_t i = 4; i + 1 < 4u + get_be16(r.data_in + 2); i += 2)
		found |= r.data_in[i] == 0x0c && r.data_in[i + 1] == 0x00;
	ck_assert(found);
}
END_TEST

/* Used LBA Mapping Resource Count = blocks the backing store holds: writes raise it, UNMAP lowers it; Available follows. */
START_TEST(writes_and_unmap_move_counts)
{
	write_blocks(100, 8);
	write_blocks(1000, 4);
	read_lbp();
	ck_assert_uint_eq(resource(0x0002), 12);
	ck_assert_uint_eq(resource(0x0001), NUM_BLOCKS - 12);
	ck_assert_uint_eq(resource(0x0003), (NUM_BLOCKS - 12) * 100 / NUM_BLOCKS);
	/* rewriting mapped blocks maps nothing new */
	write_blocks(100, 8);
	read_lbp();
	ck_assert_uint_eq(resource(0x0002), 12);
	unmap_blocks(100, 8);
	read_lbp();
	ck_assert_uint_eq(resource(0x0002), 4);
	ck_assert_uint_eq(resource(0x0001), NUM_BLOCKS - 4);
	unmap_blocks(1000, 4);
	read_lbp();
	ck_assert_uint_eq(resource(0x0002), 0);
	ck_assert_uint_eq(resource(0x0001), NUM_BLOCKS);
}
END_TEST

/* WRITE SAME(16) with UNMAP = 1 deallocates too (SBC-4 5.50): the used count falls. */
START_TEST(write_same_unmap_moves_counts)
{
	uint8_t cdb[16] = { 0x93, 0x08 };
	uint8_t zero[BS] = { 0 };

	write_blocks(0, 16);
	put_be64(cdb + 2, 0);
	put_be32(cdb + 10, 16);
	harness_run(&h, 0, cdb, 16, zero, BS, BS, &r);
	harness_expect_good(&r);
	read_lbp();
	ck_assert_uint_eq(resource(0x0002), 0);
}
END_TEST

/* SBC-4 6.4.5: every parameter is "Never" resettable or changeable: LOG SELECT PCR = 1 leaves it; a list is refused. */
START_TEST(never_reset)
{
	uint8_t pcr[10] = { 0x4c, 0x02, 0, 0, 0, 0, 0, 0, 0, 0 };
	uint8_t sel[10] = { 0x4c, 0, 0x40, 0, 0, 0, 0, 0, 16, 0 };
	uint8_t list[16] = { 0x0c, 0, 0, 12, 0, 2, 0x03, 8 };

	write_blocks(10, 3);
	harness_run(&h, 0, pcr, 10, NULL, 0, 0, &r);
	harness_expect_good(&r);
	pcr[2] = 0x40 | 0x0c;
	harness_run(&h, 0, pcr, 10, NULL, 0, 0, &r);
	harness_expect_good(&r);
	read_lbp();
	ck_assert_uint_eq(resource(0x0002), 3);
	/* SPC-4 6.5: a page whose parameters cannot be set -> 05/26/00 on the PAGE CODE of the list */
	harness_run(&h, 0, sel, 10, list, sizeof(list), sizeof(list), &r);
	harness_expect_sense(&r, 0x5, 0x2600);
	/* SKSV, C/D = 0 (parameter list), BPV, bit 5; FIELD POINTER 0 */
	ck_assert_uint_eq(r.sense[15], 0x80 | 0x08 | 5);
	ck_assert_uint_eq(get_be16(r.sense + 16), 0);
}
END_TEST

/* SPC-4 6.6: the allocation length truncates (sg_logs' 4-byte probe) and the PAGE LENGTH still counts all. */
START_TEST(probe)
{
	log_sense(0x40 | 0x0c, 0, 4);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in_len, 4);
	ck_assert_uint_eq(get_be16(r.data_in + 2), 36);
}
END_TEST

/* The backend is asked on a worker (scsi_cmd_run_io), never on the loop thread: LOG SENSE 0Ch waits for its job. */
START_TEST(backend_on_worker)
{
	uint8_t cdb[10] = { 0x4d, 0, 0x40 | 0x0c, 0, 0, 0, 0, 0, 255, 0 };
	struct harness_opts o = { .attr = SCSI_TASK_SIMPLE };

	manual_executor_init(&mex);
	h.dev->executor = &mex.ex;
	harness_submit(&h, &o, cdb, 10, NULL, 0, &r);
	ck_assert(!r.completed);
	ck_assert_uint_eq(manual_executor_pending(&mex), 1);
	manual_executor_run(&mex, 1);
	ck_assert(r.completed);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in[0], 0x8c);
	/* a page without a gather step is answered at once */
	cdb[2] = 0x40 | 0x0d;
	harness_submit(&h, &o, cdb, 10, NULL, 0, &r);
	ck_assert(r.completed);
}
END_TEST

/* SBC-4 6.4.5: the page is there only with logical block provisioning; else 05/24/00 on PAGE CODE (SPC-4 6.6). */
START_TEST(absent_without_thin_provisioning)
{
	log_sense(0x40 | 0x0c, 0, 255);
	harness_expect_sense(&r, 0x5, 0x2400);
	harness_expect_field_pointer(&r, 2, 5);
	log_sense(0x40, 0, 255);
	harness_expect_good(&r);
	for (size_t i = 4; i < 4u + get_be16(r.data_in + 2); i++)
		ck_assert_uint_ne(r.data_in[i], 0x0c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spc_log_lbp");
	TCase *tc = tcase_create("thin");
	TCase *thick = tcase_create("thick");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, page_shape);
	tcase_add_test(tc, listed);
	tcase_add_test(tc, writes_and_unmap_move_counts);
	tcase_add_test(tc, write_same_unmap_moves_counts);
	tcase_add_test(tc, never_reset);
	tcase_add_test(tc, probe);
	tcase_add_test(tc, backend_on_worker);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(thick, setup_thick, teardown);
	tcase_add_test(thick, absent_without_thin_provisioning);
	suite_add_tcase(s, thick);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
