/* Reject paths (RFC 7143 11.17) and digest errors (7.8, 13.1). */
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
}

static void teardown(void)
{
	close(S.fd);
	harness_stop();
}

static void expect_reject(uint8_t reason, const uint8_t *rejected_bhs)
{
	struct pdu p;

	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x3f);
	ck_assert_uint_eq(p.bhs[1], 0x80);
	ck_assert_uint_eq(p.bhs[2], reason);
	ck_assert_uint_eq(get_be32(p.bhs + 16), 0xffffffff);
	ck_assert_uint_eq(get_be32(p.bhs + 24), S.exp_stat_sn);
	ck_assert_uint_eq(p.data_len, 48);
	if (rejected_bhs)
		ck_assert_mem_eq(p.data, rejected_bhs, 48);
	S.exp_stat_sn++;
	pdu_free(&p);
}

/* An opcode the target does not know: "Command not supported" with the header returned. */
START_TEST(unknown_opcode)
{
	uint8_t bhs[48] = { 0x1a, 0x80 };

	session_open(&S, NULL);
	put_be32(bhs + 16, 0x33);
	pdu_send(S.fd, bhs, NULL, 0);
	expect_reject(0x05, bhs);
}
END_TEST

/* SNACK at ErrorRecoveryLevel 0, and a Login Request in full feature phase: protocol error. */
START_TEST(snack_and_login_in_ffp)
{
	uint8_t snack[48] = { 0x10, 0x80 }, login[48];

	session_open(&S, NULL);
	pdu_send(S.fd, snack, NULL, 0);
	expect_reject(0x04, snack);
	bhs_login(login, 0x87, harness_isid, 0, 5, S.cmd_sn, S.exp_stat_sn);
	pdu_send(S.fd, login, NULL, 0);
	expect_reject(0x04, login);
}
END_TEST

/* An ITT still in use: "Task in progress". */
START_TEST(duplicate_itt)
{
	uint8_t cdb[16], bhs[48];
	struct pdu p;

	session_open(&S, "InitialR2T=Yes\nImmediateData=No");
	cdb_rw10(cdb, 0x2a, 0, 1);
	bhs_scsi_cmd(bhs, 0xa1, 0x77, 512, S.cmd_sn++, S.exp_stat_sn, cdb, 10);
	pdu_send(S.fd, bhs, NULL, 0);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x31);
	pdu_free(&p);
	bhs_scsi_cmd(bhs, 0xa1, 0x77, 512, S.cmd_sn++, S.exp_stat_sn, cdb, 10);
	pdu_send(S.fd, bhs, NULL, 0);
	expect_reject(0x07, bhs);
}
END_TEST

/* Immediate data with ImmediateData=No: protocol error. */
START_TEST(immediate_data_not_allowed)
{
	uint8_t cdb[16], bhs[48], data[512] = { 0 };

	session_open(&S, "ImmediateData=No");
	cdb_rw10(cdb, 0x2a, 0, 1);
	bhs_scsi_cmd(bhs, 0xa1, 0x78, 512, S.cmd_sn, S.exp_stat_sn, cdb, 10);
	pdu_send(S.fd, bhs, data, 512);
	put_be24(bhs + 5, 512);
	expect_reject(0x04, bhs);
}
END_TEST

/* RFC 7143 7.8: a data digest error -> Reject "data digest error"; the connection survives. */
START_TEST(data_digest_error)
{
	uint8_t bhs[48] = { 0x40, 0x80 }, wire[48 + 4 + 8 + 4];
	struct pdu p;

	session_open(&S, "HeaderDigest=CRC32C\nDataDigest=CRC32C");
	put_be32(bhs + 16, 0x44);
	put_be32(bhs + 20, 0xffffffff);
	put_be32(bhs + 24, S.cmd_sn);
	put_be24(bhs + 5, 8);
	memcpy(wire, bhs, 48);
	iscsi_digest_put(wire + 48, iscsi_crc32c(bhs, 48));
	memcpy(wire + 52, "pingping", 8);
	iscsi_digest_put(wire + 60, 0xdeadbeef);
	pdu_send_raw(S.fd, wire, sizeof(wire));
	expect_reject(0x02, bhs);
	pdu_send(S.fd, bhs, "pingping", 8);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x20);
	ck_assert_str_eq((char *)p.data, "pingping");
	pdu_free(&p);
}
END_TEST

/* RFC 7143 7.8: a header digest error at ErrorRecoveryLevel 0 ends the connection. */
START_TEST(header_digest_error)
{
	uint8_t wire[52] = { 0x40, 0x80 };

	session_open(&S, "HeaderDigest=CRC32C");
	put_be32(wire + 16, 0x45);
	iscsi_digest_put(wire + 48, 0x12345678);
	pdu_send_raw(S.fd, wire, sizeof(wire));
	ck_assert(peer_closed(S.fd, 2000));
}
END_TEST

/* A data segment longer than our MaxRecvDataSegmentLength: Reject, then the connection closes. */
START_TEST(data_segment_too_long)
{
	uint8_t bhs[48] = { 0x40, 0x80 };
	static uint8_t big[262144 + 4];

	session_open(&S, NULL);
	put_be32(bhs + 16, 0x46);
	put_be32(bhs + 20, 0xffffffff);
	pdu_send(S.fd, bhs, big, sizeof(big));
	put_be24(bhs + 5, sizeof(big));
	expect_reject(0x04, bhs);
	ck_assert(peer_closed(S.fd, 2000));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iscsi_reject");
	TCase *tc = tcase_create("reject");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, unknown_opcode);
	tcase_add_test(tc, snack_and_login_in_ffp);
	tcase_add_test(tc, duplicate_itt);
	tcase_add_test(tc, immediate_data_not_allowed);
	tcase_add_test(tc, data_digest_error);
	tcase_add_test(tc, header_digest_error);
	tcase_add_test(tc, data_segment_too_long);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
