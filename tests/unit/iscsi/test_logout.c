/* Logout (RFC 7143 11.14, 11.15). */
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
	session_open(&S, NULL);
}

static void teardown(void)
{
	close(S.fd);
	harness_stop();
}

static void send_logout(uint8_t reason, uint16_t cid, uint32_t itt)
{
	uint8_t bhs[48] = { 0x06, (uint8_t)(0x80 | reason) };

	put_be32(bhs + 16, itt);
	put_be16(bhs + 20, cid);
	put_be32(bhs + 24, S.cmd_sn++);
	put_be32(bhs + 28, S.exp_stat_sn);
	pdu_send(S.fd, bhs, NULL, 0);
}

/* Close the session: response 0 ("closed successfully"), then the connection closes. */
START_TEST(logout_close_session)
{
	struct pdu p;

	send_logout(0, 1, 0x61);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x26);
	ck_assert_uint_eq(p.bhs[1], 0x80);
	ck_assert_uint_eq(p.bhs[2], 0);
	ck_assert_uint_eq(get_be32(p.bhs + 16), 0x61);
	ck_assert_uint_eq(get_be32(p.bhs + 24), S.exp_stat_sn);
	ck_assert_uint_eq(get_be32(p.bhs + 28), S.cmd_sn);
	pdu_free(&p);
	ck_assert(peer_closed(S.fd, 2000));
}
END_TEST

/* A CID that is not ours: 1; connection recovery at ERL 0: 2.  The connection stays. */
START_TEST(logout_other_reasons)
{
	struct pdu p;

	send_logout(1, 7, 0x62);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[2], 1);
	pdu_free(&p);
	send_logout(2, 1, 0x63);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[2], 2);
	pdu_free(&p);
	ck_assert(!peer_closed(S.fd, 300));
}
END_TEST

/* A write still waiting for Data-Out does not hold the logout up: it is aborted (no response of its own). */
START_TEST(logout_with_write_waiting_for_data)
{
	uint8_t cdb[16], bhs[48];
	struct pdu p;

	close(S.fd);
	session_open(&S, "InitialR2T=Yes\nImmediateData=No");
	cdb_rw10(cdb, 0x2a, 0, 4);
	bhs_scsi_cmd(bhs, 0xa1, 0x64, 2048, S.cmd_sn++, S.exp_stat_sn, cdb, 10);
	pdu_send(S.fd, bhs, NULL, 0);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x31);
	pdu_free(&p);
	send_logout(0, 1, 0x65);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x26);
	ck_assert_uint_eq(p.bhs[2], 0);
	pdu_free(&p);
	ck_assert(peer_closed(S.fd, 2000));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iscsi_logout");
	TCase *tc = tcase_create("logout");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, logout_close_session);
	tcase_add_test(tc, logout_other_reasons);
	tcase_add_test(tc, logout_with_write_waiting_for_data);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
