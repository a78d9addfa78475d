/*
 * copy/rod_token.c: WRITE USING TOKEN runs one job per piece of at most
 * 1 MiB and looks at its token before each.  A WRITE to the token's
 * blocks while the copy runs revokes the token (SBC-4: a point in time,
 * change vulnerable ROD token represents the blocks as they were), and
 * the copy ends at the next piece with INVALID TOKEN OPERATION, TOKEN
 * REVOKED (05/23/06): the pieces done hold the source's blocks, the rest
 * its old data.  ABORT TASK ends it at a piece boundary as EXTENDED COPY,
 * and so does COPY OPERATION ABORT of its list identifier (copy_abort.c),
 * with TASK ABORTED status.  A token does not expire while a copy that uses
 * it runs.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "manual_executor.h"
#include "core/scsi_internal.h"

#define BS 512
#define PIECE_BLOCKS (1024 * 1024 / BS) /* copy.h COPY_PIECE */
#define NUM_BLOCKS (8 * PIECE_BLOCKS)
#define DST (4 * PIECE_BLOCKS)

static struct harness h;
static struct manual_executor mex;
static uint8_t token[512];

/* POPULATE TOKEN of LBA 0 .. 3 pieces (list 1, INACTIVITY TIMEOUT timeout s), then the token into token. */
static void make_token(uint32_t timeout)
{
	uint8_t pt[16] = { 0x83, 0x10 }, p[32] = { 0, 30 }, rrti[16] = { 0x84, 0x07 };
	struct harness_result r;

	pt[9] = 1;
	pt[13] = sizeof(p);
	put_be32(p + 4, timeout);
	p[15] = 16;
	put_be32(p + 24, 3 * PIECE_BLOCKS);
	harness_run(&h, 0, pt, 16, p, sizeof(p), 0, &r);
	harness_expect_good(&r);
	rrti[5] = 1;
	rrti[12] = 0x04; /* ALLOCATION LENGTH 1024 */
	harness_run(&h, 0, rrti, 16, NULL, 0, 1024, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in_len, 32 + 4 + 2 + 512);
	memcpy(token, r.data_in + 38, 512);
}

static void setup(void)
{
	harness_init(&h, NUM_BLOCKS, BS, NULL);
	harness_clear_ua(&h);
	harness_fill(&h, 0, 3 * PIECE_BLOCKS, 'a');
	harness_fill(&h, DST, 3 * PIECE_BLOCKS, 'b');
	make_token(0);
	manual_executor_init(&mex);
	h.dev->executor = &mex.ex;
}

static void teardown(void)
{
	manual_executor_run(&mex, ~0u);
	harness_fini(&h);
}

/* WRITE USING TOKEN (list 2) of the whole token to DST of LUN lun. */
static void submit_wut_to(uint32_t lun, struct harness_result *r)
{
	static uint8_t p[536 + 16];
	uint8_t cdb[16] = { 0x83, 0x11 };
	struct harness_opts o = { .nexus = 0, .attr = SCSI_TASK_SIMPLE, .lun = lun };

	memset(p, 0, sizeof(p));
	put_be16(p, sizeof(p) - 2);
	memcpy(p + 16, token, 512);
	put_be16(p + 534, 16);
	put_be64(p + 536, DST);
	put_be32(p + 544, 3 * PIECE_BLOCKS);
	cdb[9] = 2;
	put_be32(cdb + 10, sizeof(p));
	harness_submit(&h, &o, cdb, 16, p, sizeof(p), r);
}

static void submit_wut(struct harness_result *r)
{
	submit_wut_to(0, r);
}

static void tmf_done(void *arg, enum scsi_tmf_response response)
{
	*(int *)arg = (int)response + 1;
}

/*
 * LUN 0's token written to LUN 1 (rod_token.c, tokens between LUs): piece
 * by piece from LUN 0's medium; while it runs LUN 0 cannot be removed
 * (scsi_lu_remove names the copy), once it ended it can be again.
 */
START_TEST(a_token_of_another_lu)
{
	struct scsi_lu_params p = h.lu->params;
	struct scsi_lu *lu1;
	struct harness_result r;
	char err[256];

	p.lun = 1;
	snprintf(p.serial, sizeof(p.serial), "HARNESS0002");
	lu1 = scsi_lu_create(h.dev, &p, be_mem_open(NUM_BLOCKS * BS), err, sizeof(err));
	ck_assert_msg(lu1 != NULL, "%s", err);
	for (int i = 0; i < 4; i++) { /* its unit attentions (POWER ON) reported first */
		uint8_t tur[6] = { 0 };
		struct harness_opts o = { .nexus = 0, .attr = SCSI_TASK_SIMPLE, .lun = 1 };

		harness_submit(&h, &o, tur, 6, NULL, 0, &r);
		manual_executor_run(&mex, ~0u);
		if (r.completed && r.status == SCSI_STATUS_GOOD)
			break;
	}
	harness_expect_good(&r);
	submit_wut_to(1, &r);
	ck_assert_uint_eq(manual_executor_run(&mex, 1), 1);
	ck_assert(!r.completed);
	ck_assert_uint_eq(h.lu->copy_readers, 1);
	ck_assert_int_eq(scsi_lu_remove(h.dev, 0, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "1 copies on other LUs read or write its blocks");
	ck_assert_uint_eq(manual_executor_run(&mex, ~0u), 2);
	harness_expect_good(&r);
	ck_assert_uint_eq(h.lu->copy_readers, 0);
	ck_assert(harness_holds(&h, DST, 3 * PIECE_BLOCKS, 'b')); /* LUN 0's own blocks untouched */
	{
		uint8_t rd[16] = { 0x88 };
		struct harness_opts o = { .nexus = 0, .attr = SCSI_TASK_SIMPLE, .lun = 1 };
		struct harness_result rr;

		put_be64(rd + 2, DST + 2 * PIECE_BLOCKS);
		put_be32(rd + 10, 8);
		harness_submit(&h, &o, rd, 16, NULL, 0, &rr);
		manual_executor_run(&mex, ~0u);
		harness_expect_good(&rr);
		for (unsigned i = 0; i < 8 * BS; i++)
			ck_assert_uint_eq(rr.data_in[i], 'a'); /* LUN 1 holds LUN 0's token blocks */
	}
	ck_assert_int_eq(scsi_lu_remove(h.dev, 1, err, sizeof(err)), 0);
}
END_TEST

START_TEST(runs_piece_by_piece)
{
	struct harness_result r;

	submit_wut(&r);
	ck_assert(!r.completed);
	ck_assert_uint_eq(manual_executor_run(&mex, ~0u), 3);
	harness_expect_good(&r);
	ck_assert(harness_holds(&h, DST, 3 * PIECE_BLOCKS, 'a'));
}
END_TEST

/*
 * A WRITE(16) of one block of the token's third piece, from the other
 * nexus, after the copy's first piece: it runs beside the copy (their LBA
 * locks do not meet), revokes the token, and the copy ends after the piece
 * already queued with 05/23/06; the third piece was not copied.
 */
START_TEST(a_write_to_the_source_revokes_it_mid_copy)
{
	struct harness_result r, w;
	uint8_t cdb[16] = { 0x8a }, block[BS];
	struct harness_opts o = { .nexus = 1, .attr = SCSI_TASK_SIMPLE };

	memset(block, 'c', sizeof(block));
	submit_wut(&r);
	ck_assert_uint_eq(manual_executor_run(&mex, 1), 1);
	put_be64(cdb + 2, 2 * PIECE_BLOCKS + 5);
	put_be32(cdb + 10, 1);
	harness_submit(&h, &o, cdb, 16, block, sizeof(block), &w);
	manual_executor_run(&mex, ~0u);
	harness_expect_good(&w);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, 0x2306);
	ck_assert(harness_holds(&h, DST, 2 * PIECE_BLOCKS, 'a'));
	ck_assert(harness_holds(&h, DST + 2 * PIECE_BLOCKS, PIECE_BLOCKS, 'b'));
}
END_TEST

START_TEST(abort_task_stops_at_a_piece_boundary)
{
	struct harness_result r;
	int tmf = 0;

	submit_wut(&r);
	ck_assert_uint_eq(manual_executor_run(&mex, 1), 1);
	scsi_tmf(h.nexus[0], scsi_lun_encode(0), SCSI_TMF_ABORT_TASK, h.lu->ts.head, tmf_done, &tmf);
	ck_assert_uint_eq(manual_executor_run(&mex, ~0u), 1);
	ck_assert(r.aborted);
	ck_assert_int_eq(tmf, SCSI_TMF_FUNCTION_COMPLETE + 1);
	ck_assert(harness_holds(&h, DST, 2 * PIECE_BLOCKS, 'a'));
	ck_assert(harness_holds(&h, DST + 2 * PIECE_BLOCKS, PIECE_BLOCKS, 'b'));
}
END_TEST

/*
 * A token of INACTIVITY TIMEOUT 1 s whose copy waits 1.3 s between two
 * pieces: a copy that runs is use, not inactivity, so it completes; the
 * timeout counts again from its end (05/23/07 1.3 s after it).
 */
START_TEST(copy_operation_abort_stops_it_at_a_piece_boundary)
{
	struct harness_result r, a;
	uint8_t coa[16] = { 0x83, 0x1c };

	submit_wut(&r);
	ck_assert_uint_eq(manual_executor_run(&mex, 1), 1); /* the first piece; the second is queued */
	coa[5] = 2;                                          /* LIST IDENTIFIER 2, the copy's */
	harness_run(&h, 0, coa, 16, NULL, 0, 0, &a);
	harness_expect_good(&a);
	ck_assert(!r.completed);
	ck_assert_uint_eq(manual_executor_run(&mex, ~0u), 1); /* the queued piece, then no third */
	ck_assert(r.completed);
	ck_assert_uint_eq(r.status, SCSI_STATUS_TASK_ABORTED);
	ck_assert(harness_holds(&h, DST, 2 * PIECE_BLOCKS, 'a'));
	ck_assert(harness_holds(&h, DST + 2 * PIECE_BLOCKS, PIECE_BLOCKS, 'b'));
	coa[5] = 9; /* no copy of list 9 from this nexus, running or held */
	harness_run(&h, 0, coa, 16, NULL, 0, 0, &a);
	ck_assert_uint_eq(a.status, SCSI_STATUS_CHECK_CONDITION);
}
END_TEST

START_TEST(a_running_copy_keeps_its_token)
{
	struct harness_result r;

	h.dev->executor = &scsi_executor_inline;
	make_token(1);
	h.dev->executor = &mex.ex;
	submit_wut(&r);
	ck_assert_uint_eq(manual_executor_run(&mex, 1), 1);
	usleep(1300 * 1000);
	manual_executor_run(&mex, ~0u);
	harness_expect_good(&r);
	ck_assert(harness_holds(&h, DST, 3 * PIECE_BLOCKS, 'a'));
	usleep(1300 * 1000);
	submit_wut(&r);
	manual_executor_run(&mex, ~0u);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, 0x2307);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("rod_token");
	TCase *tc = tcase_create("pieces");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, a_token_of_another_lu);
	tcase_add_test(tc, runs_piece_by_piece);
	tcase_add_test(tc, a_write_to_the_source_revokes_it_mid_copy);
	tcase_add_test(tc, abort_task_stops_at_a_piece_boundary);
	tcase_add_test(tc, copy_operation_abort_stops_it_at_a_piece_boundary);
	tcase_add_test(tc, a_running_copy_keeps_its_token);
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
