/* Task management (RFC 7143 11.5, 11.6) over the wire. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iscsi_harness.h"
#include "pdu.h"

static struct session S;

static void setup(void)
{
	harness_start(NULL);
	session_open(&S, "InitialR2T=Yes\nImmediateData=No");
}

static void teardown(void)
{
	close(S.fd);
	harness_stop();
}

static void send_tmf(uint8_t function, uint64_t lun, uint32_t itt, uint32_t ref_itt, uint32_t ref_cmd_sn)
{
	uint8_t bhs[48] = { 0x42, (uint8_t)(0x80 | function) };

	put_be64(bhs + 8, lun);
	put_be32(bhs + 16, itt);
	put_be32(bhs + 20, ref_itt);
	put_be32(bhs + 24, S.cmd_sn);
	put_be32(bhs + 28, S.exp_stat_sn);
	put_be32(bhs + 32, ref_cmd_sn);
	pdu_send(S.fd, bhs, NULL, 0);
}

static uint8_t tmf_response(uint32_t itt)
{
	struct pdu p;
	uint8_t r;

	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x22);
	ck_assert_uint_eq(get_be32(p.bhs + 16), itt);
	r = p.bhs[2];
	S.exp_stat_sn = get_be32(p.bhs + 24) + 1;
	pdu_free(&p);
	return r;
}

/* RFC 7143 11.5.1 c): an unknown task whose RefCmdSN is outside the window -> "Task does not exist". */
START_TEST(abort_unknown_task)
{
	send_tmf(1, 0, 0x900, 0x12345, S.cmd_sn - 1);
	ck_assert_uint_eq(tmf_response(0x900), 1);
}
END_TEST

/* ABORT TASK of a write waiting for Data-Out: "Function complete" and no response for the write. */
START_TEST(abort_task_waiting_for_data)
{
	uint8_t cdb[16], bhs[48];
	struct pdu p;

	cdb_rw10(cdb, 0x2a, 0, 8);
	bhs_scsi_cmd(bhs, 0xa1, 0x500, 4096, S.cmd_sn++, S.exp_stat_sn, cdb, 10);
	pdu_send(S.fd, bhs, NULL, 0);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x31);
	pdu_free(&p);
	send_tmf(1, 0, 0x901, 0x500, S.cmd_sn - 1);
	ck_assert_uint_eq(tmf_response(0x901), 0);
	/* the next PDU is the NOP-In to our ping, not a SCSI Response for ITT 0x500 */
	memset(bhs, 0, sizeof(bhs));
	bhs[0] = 0x40;
	bhs[1] = 0x80;
	put_be32(bhs + 16, 0x902);
	put_be32(bhs + 20, 0xffffffff);
	put_be32(bhs + 24, S.cmd_sn);
	pdu_send(S.fd, bhs, NULL, 0);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x20);
	pdu_free(&p);
}
END_TEST

/* LOGICAL UNIT RESET -> Function complete; on a LUN without LU -> "LUN does not exist". */
START_TEST(lu_reset)
{
	send_tmf(5, 0, 0x903, 0xffffffff, 0);
	ck_assert_uint_eq(tmf_response(0x903), 0);
	send_tmf(5, 0x0005000000000000ull, 0x904, 0xffffffff, 0);
	ck_assert_uint_eq(tmf_response(0x904), 2);
}
END_TEST

/* TASK REASSIGN needs ERL 2 (response 4); CLEAR ACA and unknown functions: not supported (5). */
START_TEST(unsupported_functions)
{
	send_tmf(8, 0, 0x905, 0x1, 0);
	ck_assert_uint_eq(tmf_response(0x905), 4);
	send_tmf(3, 0, 0x906, 0xffffffff, 0);
	ck_assert_uint_eq(tmf_response(0x906), 5);
	send_tmf(0x20, 0, 0x907, 0xffffffff, 0);
	ck_assert_uint_eq(tmf_response(0x907), 5);
}
END_TEST

/* TARGET COLD RESET: the response, then the connection is closed (RFC 7143 11.5.1). */
START_TEST(target_cold_reset)
{
	send_tmf(7, 0, 0x908, 0xffffffff, 0);
	ck_assert_uint_eq(tmf_response(0x908), 0);
	ck_assert(peer_closed(S.fd, 2000));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iscsi_tmf");
	TCase *tc = tcase_create("tmf");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, abort_unknown_task);
	tcase_add_test(tc, abort_task_waiting_for_data);
	tcase_add_test(tc, lu_reset);
	tcase_add_test(tc, unsupported_functions);
	tcase_add_test(tc, target_cold_reset);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
