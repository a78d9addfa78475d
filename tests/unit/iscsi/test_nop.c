/* NOP-Out / NOP-In (RFC 7143 11.18, 11.19): pings both ways, and the dead-connection timeout. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iscsi_harness.h"
#include "pdu.h"

static struct session S;

static void fast_pings(struct iscsi_server_params *p)
{
	p->nop_in_interval = 1;
	p->nop_in_timeout = 1;
}

static void teardown(void)
{
	close(S.fd);
	harness_stop();
}

/* The initiator's ping: NOP-In echoes ITT, LUN and data; TTT reserved; StatSN advances. */
START_TEST(nop_out_echo)
{
	uint8_t bhs[48] = { 0x00, 0x80 };
	struct pdu p;

	harness_start(NULL);
	session_open(&S, NULL);
	put_be64(bhs + 8, 0x0001000000000000ull);
	put_be32(bhs + 16, 0x4711);
	put_be32(bhs + 20, 0xffffffff);
	put_be32(bhs + 24, S.cmd_sn++);
	put_be32(bhs + 28, S.exp_stat_sn);
	pdu_send(S.fd, bhs, "nopping", 8);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x20);
	ck_assert_uint_eq(p.bhs[1], 0x80);
	ck_assert_uint_eq(get_be64(p.bhs + 8), 0x0001000000000000ull);
	ck_assert_uint_eq(get_be32(p.bhs + 16), 0x4711);
	ck_assert_uint_eq(get_be32(p.bhs + 20), 0xffffffff);
	ck_assert_uint_eq(get_be32(p.bhs + 24), S.exp_stat_sn);
	ck_assert_uint_eq(get_be32(p.bhs + 28), S.cmd_sn); /* non-immediate NOP-Out consumed a CmdSN */
	ck_assert_uint_eq(p.data_len, 8);
	ck_assert_str_eq((char *)p.data, "nopping");
	pdu_free(&p);
}
END_TEST

/* The target's ping: ITT reserved, a TTT; answered -> the connection stays. */
START_TEST(target_ping_answered)
{
	struct harness_config cfg = { .params = fast_pings };
	uint8_t bhs[48] = { 0x40, 0x80 };
	struct pdu p;

	harness_start(&cfg);
	session_open(&S, NULL);
	for (int round = 0; round < 2; round++) {
		ck_assert(pdu_recv(S.fd, &p, 4000));
		ck_assert_uint_eq(p.bhs[0], 0x20);
		ck_assert_uint_eq(get_be32(p.bhs + 16), 0xffffffff);
		ck_assert_uint_ne(get_be32(p.bhs + 20), 0xffffffff);
		ck_assert_uint_eq(get_be32(p.bhs + 24), S.exp_stat_sn); /* StatSN not advanced */
		put_be32(bhs + 16, 0xffffffff);
		memcpy(bhs + 20, p.bhs + 20, 4);
		put_be32(bhs + 24, S.cmd_sn);
		pdu_send(S.fd, bhs, NULL, 0);
		pdu_free(&p);
	}
	ck_assert(!peer_closed(S.fd, 500));
}
END_TEST

/* Unanswered ping: the connection is dropped after nop_in_timeout. */
START_TEST(target_ping_unanswered)
{
	struct harness_config cfg = { .params = fast_pings };
	struct pdu p;

	harness_start(&cfg);
	session_open(&S, NULL);
	ck_assert(pdu_recv(S.fd, &p, 4000));
	ck_assert_uint_eq(p.bhs[0], 0x20);
	pdu_free(&p);
	ck_assert(peer_closed(S.fd, 5000));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iscsi_nop");
	TCase *tc = tcase_create("nop");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, nop_out_echo);
	tcase_add_test(tc, target_ping_answered);
	tcase_add_test(tc, target_ping_unanswered);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
