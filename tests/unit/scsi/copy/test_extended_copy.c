/*
 * copy/extended_copy.c: EXTENDED COPY (LID1, LID4) runs one job per piece of at
 * most 1 MiB, so ABORT TASK or LOGICAL UNIT RESET (SAM-5 task management)
 * ends it at a piece boundary: the pieces done hold the source's blocks,
 * the rest its old data; a copy that runs to its end moves every piece;
 * COPY OPERATION ABORT stops an EXTENDED COPY(LID4) the same way.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "manual_executor.h"
#include "core/scsi_internal.h"
#include "spc/spc.h"

#define BS 512
#define PIECE_BLOCKS (1024 * 1024 / BS) /* extended_copy.c XCOPY_CHUNK */
#define NUM_BLOCKS (8 * PIECE_BLOCKS)
#define DST (4 * PIECE_BLOCKS)

static struct harness h;
static struct manual_executor mex;

static void setup(void)
{
	harness_init(&h, NUM_BLOCKS, BS, NULL);
	harness_clear_ua(&h);
	harness_fill(&h, 0, 3 * PIECE_BLOCKS, 'a');
	harness_fill(&h, DST, 3 * PIECE_BLOCKS, 'b');
	manual_executor_init(&mex);
	h.dev->executor = &mex.ex;
}

static void teardown(void)
{
	manual_executor_run(&mex, ~0u);
	harness_fini(&h);
}

/* One E4h CSCD naming the LU and one 02h segment of nblocks from LBA 0 to DST (76 bytes). */
static void list_of(uint8_t p[76], uint16_t nblocks)
{
	uint8_t naa[16];
	size_t n = spc_lu_naa(h.lu, naa);

	memset(p, 0, 76);
	p[3] = 32;  /* CSCD DESCRIPTOR LIST LENGTH */
	p[11] = 28; /* SEGMENT DESCRIPTOR LIST LENGTH */
	p[16] = 0xe4;
	p[20] = 0x01;              /* CODE SET binary */
	p[21] = 0x03;              /* association LU, NAA */
	p[23] = (uint8_t)n;
	memcpy(p + 24, naa, n);
	p[46] = BS >> 8;           /* DISK BLOCK LENGTH */
	p[48] = 0x02;
	p[51] = 0x18;
	p[58] = (uint8_t)(nblocks >> 8);
	p[59] = (uint8_t)nblocks;
	p[72] = (uint8_t)(DST >> 24); /* destination LBA, segment bytes 20-27 */
	p[73] = (uint8_t)(DST >> 16);
	p[74] = (uint8_t)(DST >> 8);
	p[75] = (uint8_t)DST;
}

static void submit(uint16_t nblocks, struct harness_result *r)
{
	static uint8_t p[76];
	uint8_t cdb[16] = { 0x83, 0x00 };
	struct harness_opts o = { .nexus = 0, .attr = SCSI_TASK_SIMPLE };

	list_of(p, nblocks);
	cdb[13] = sizeof(p);
	harness_submit(&h, &o, cdb, 16, p, sizeof(p), r);
}

/*
 * The same list as EXTENDED COPY(LID4) (83h/01h): the 48-byte header (b0 LIST
 * FORMAT 01h, b20-23 LIST IDENTIFIER, b42-43 and b44-45 the descriptor list
 * lengths), then the same descriptors.
 */
static void submit_lid4(uint16_t nblocks, uint32_t list_id, struct harness_result *r)
{
	static uint8_t p[108];
	uint8_t lid1[76], cdb[16] = { 0x83, 0x01 };
	struct harness_opts o = { .nexus = 0, .attr = SCSI_TASK_SIMPLE };

	list_of(lid1, nblocks);
	memset(p, 0, 48);
	p[0] = 0x01;
	p[20] = (uint8_t)(list_id >> 24);
	p[21] = (uint8_t)(list_id >> 16);
	p[22] = (uint8_t)(list_id >> 8);
	p[23] = (uint8_t)list_id;
	p[43] = 32;
	p[45] = 28;
	memcpy(p + 48, lid1 + 16, 60);
	cdb[13] = sizeof(p);
	harness_submit(&h, &o, cdb, 16, p, sizeof(p), r);
}

static void tmf_done(void *arg, enum scsi_tmf_response response)
{
	*(int *)arg = (int)response + 1;
}

/* Three pieces: all run, GOOD, every block copied. */
START_TEST(runs_piece_by_piece)
{
	struct harness_result r;

	submit(3 * PIECE_BLOCKS, &r);
	ck_assert(!r.completed);
	ck_assert_uint_eq(manual_executor_run(&mex, 1), 1);
	ck_assert(!r.completed);
	ck_assert(harness_holds(&h, DST, PIECE_BLOCKS, 'a'));
	ck_assert(harness_holds(&h, DST + PIECE_BLOCKS, 2 * PIECE_BLOCKS, 'b'));
	ck_assert_uint_eq(manual_executor_run(&mex, ~0u), 2);
	ck_assert(r.completed);
	harness_expect_good(&r);
	ck_assert(harness_holds(&h, DST, 3 * PIECE_BLOCKS, 'a'));
}
END_TEST

/*
 * ABORT TASK after the first piece: the piece already queued finishes, no
 * other starts; the command ends aborted, the third piece keeps its old data.
 */
START_TEST(abort_task_stops_at_a_piece_boundary)
{
	struct harness_result r;
	int tmf = 0;

	submit(3 * PIECE_BLOCKS, &r);
	ck_assert_uint_eq(manual_executor_run(&mex, 1), 1);
	ck_assert_ptr_nonnull(h.lu->ts.head); /* the copy, alone in the task set */
	scsi_tmf(h.nexus[0], scsi_lun_encode(0), SCSI_TMF_ABORT_TASK, h.lu->ts.head, tmf_done, &tmf);
	ck_assert_uint_eq(manual_executor_run(&mex, ~0u), 1);
	ck_assert(r.aborted);
	ck_assert_int_eq(tmf, SCSI_TMF_FUNCTION_COMPLETE + 1);
	ck_assert(harness_holds(&h, DST, 2 * PIECE_BLOCKS, 'a'));
	ck_assert(harness_holds(&h, DST + 2 * PIECE_BLOCKS, PIECE_BLOCKS, 'b'));
}
END_TEST

/* LOGICAL UNIT RESET from the other nexus ends it the same way. */
START_TEST(lun_reset_stops_at_a_piece_boundary)
{
	struct harness_result r;
	int tmf = 0;

	submit(3 * PIECE_BLOCKS, &r);
	scsi_tmf(h.nexus[1], scsi_lun_encode(0), SCSI_TMF_LOGICAL_UNIT_RESET, NULL, tmf_done, &tmf);
	ck_assert_uint_eq(manual_executor_run(&mex, ~0u), 1);
	ck_assert(r.aborted);
	ck_assert(harness_holds(&h, DST, PIECE_BLOCKS, 'a'));
	ck_assert(harness_holds(&h, DST + PIECE_BLOCKS, 2 * PIECE_BLOCKS, 'b'));
}
END_TEST

/*
 * COPY OPERATION ABORT (83h/1Ch) names an EXTENDED COPY(LID4) by its
 * four-byte LIST IDENTIFIER (copy_abort.c): it stops at the next piece
 * boundary and ends with TASK ABORTED; a LID1 list identifier is its low byte only.
 */
START_TEST(copy_operation_abort_stops_a_lid4_copy)
{
	struct harness_result r, a;
	uint8_t coa[16] = { 0x83, 0x1c, 0x00, 0x01, 0x02, 0x34 };

	submit_lid4(3 * PIECE_BLOCKS, 0x10234, &r);
	ck_assert_uint_eq(manual_executor_run(&mex, 1), 1);
	harness_run(&h, 0, coa, 16, NULL, 0, 0, &a);
	harness_expect_good(&a);
	ck_assert(!r.completed);
	ck_assert_uint_eq(manual_executor_run(&mex, ~0u), 1);
	ck_assert(r.completed);
	ck_assert_uint_eq(r.status, SCSI_STATUS_TASK_ABORTED);
	ck_assert(harness_holds(&h, DST, 2 * PIECE_BLOCKS, 'a'));
	ck_assert(harness_holds(&h, DST + 2 * PIECE_BLOCKS, PIECE_BLOCKS, 'b'));
	coa[3] = 0x00; /* list 234h: none */
	harness_run(&h, 0, coa, 16, NULL, 0, 0, &a);
	harness_expect_sense(&a, SENSE_KEY_ILLEGAL_REQUEST, 0x2400);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("extended_copy");
	TCase *tc = tcase_create("pieces");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, runs_piece_by_piece);
	tcase_add_test(tc, abort_task_stops_at_a_piece_boundary);
	tcase_add_test(tc, lun_reset_stops_at_a_piece_boundary);
	tcase_add_test(tc, copy_operation_abort_stops_a_lid4_copy);
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
