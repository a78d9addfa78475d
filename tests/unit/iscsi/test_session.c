/* Sessions (RFC 7143 4.2.2.1, 6.3.5): the CmdSN window, ordering, immediate commands, reinstatement. */
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

static void send_read0(uint32_t itt, uint32_t cmd_sn, bool immediate)
{
	uint8_t cdb[16], bhs[48];

	cdb_rw10(cdb, 0x28, 0, 0);
	bhs_scsi_cmd(bhs, 0x81, itt, 0, cmd_sn, S.exp_stat_sn, cdb, 10);
	if (immediate)
		bhs[0] |= 0x40;
	pdu_send(S.fd, bhs, NULL, 0);
}

/* RFC 7143 4.2.2.1: CmdSN above MaxCmdSN or below ExpCmdSN is silently ignored. */
START_TEST(cmd_sn_outside_window_ignored)
{
	struct pdu p;

	send_read0(0x10, S.cmd_sn + 128, false); /* MaxCmdSN + 1 */
	ck_assert(!pdu_recv(S.fd, &p, 300));
	send_read0(0x11, S.cmd_sn - 1, false);
	ck_assert(!pdu_recv(S.fd, &p, 300));
	send_read0(0x12, S.cmd_sn, false);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(get_be32(p.bhs + 16), 0x12);
	ck_assert_uint_eq(p.bhs[3], 0x00);
	ck_assert_uint_eq(get_be32(p.bhs + 28), S.cmd_sn + 1);       /* ExpCmdSN */
	ck_assert_uint_eq(get_be32(p.bhs + 32), S.cmd_sn + 1 + 127); /* MaxCmdSN */
	pdu_free(&p);
}
END_TEST

/* A command ahead of ExpCmdSN waits for the gap to fill, then both run in CmdSN order. */
START_TEST(cmd_sn_gap_ordering)
{
	struct pdu p;

	send_read0(0x21, S.cmd_sn + 1, false);
	ck_assert(!pdu_recv(S.fd, &p, 300));
	send_read0(0x20, S.cmd_sn, false);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(get_be32(p.bhs + 16), 0x20);
	pdu_free(&p);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(get_be32(p.bhs + 16), 0x21);
	ck_assert_uint_eq(get_be32(p.bhs + 28), S.cmd_sn + 2);
	pdu_free(&p);
}
END_TEST

/* RFC 7143 3.2.2.1: an immediate command runs at once and does not advance ExpCmdSN. */
START_TEST(immediate_command)
{
	struct pdu p;

	send_read0(0x30, S.cmd_sn, true);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(get_be32(p.bhs + 16), 0x30);
	ck_assert_uint_eq(get_be32(p.bhs + 28), S.cmd_sn);
	pdu_free(&p);
}
END_TEST

/* RFC 7143 6.3.5: a new login (TSIH 0) with the same InitiatorName and ISID reinstates the session. */
START_TEST(session_reinstatement)
{
	struct pdu rsp;
	uint32_t cmd_sn = 1, exp_stat_sn;
	int fd2 = harness_connect();

	ck_assert_int_eq(login_normal(fd2, harness_isid, NULL, &cmd_sn, &exp_stat_sn, &rsp), 0);
	pdu_free(&rsp);
	ck_assert(peer_closed(S.fd, 2000));
	close(fd2);
}
END_TEST

/* A different ISID is a different session: both stay up. */
START_TEST(second_session)
{
	static const uint8_t isid2[6] = { 0x80, 0x12, 0x34, 0x56, 0x00, 0x02 };
	struct pdu rsp;
	uint32_t cmd_sn = 1, exp_stat_sn;
	int fd2 = harness_connect();

	ck_assert_int_eq(login_normal(fd2, isid2, NULL, &cmd_sn, &exp_stat_sn, &rsp), 0);
	pdu_free(&rsp);
	ck_assert(!peer_closed(S.fd, 300));
	close(fd2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iscsi_session");
	TCase *tc = tcase_create("session");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, cmd_sn_outside_window_ignored);
	tcase_add_test(tc, cmd_sn_gap_ordering);
	tcase_add_test(tc, immediate_command);
	tcase_add_test(tc, session_reinstatement);
	tcase_add_test(tc, second_session);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
