/* Discovery sessions and SendTargets (RFC 7143 4.3, Appendix C), Text Request/Response (11.10, 11.11). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iscsi_harness.h"
#include "pdu.h"

static int fd, port;
static uint32_t exp_stat_sn;

static void setup(void)
{
	char text[512];
	uint32_t len = 0;
	uint8_t bhs[48];
	struct pdu rsp;

	port = harness_start(NULL);
	fd = harness_connect();
	text_add(text, &len, "InitiatorName=" HARNESS_INITIATOR);
	text_add(text, &len, "SessionType=Discovery");
	text_add(text, &len, "MaxBurstLength=65536");
	bhs_login(bhs, 0x80 | (1 << 2) | 3, harness_isid, 0, 1, 1, 0);
	pdu_send(fd, bhs, text, len);
	ck_assert(pdu_recv(fd, &rsp, 5000));
	ck_assert_uint_eq(rsp.bhs[36], 0);
	ck_assert_uint_eq(rsp.bhs[37], 0);
	/* session keys are irrelevant to a discovery session; no TPGT in its first response */
	ck_assert_str_eq(text_get(&rsp, "MaxBurstLength"), "Irrelevant");
	ck_assert_ptr_null(text_get(&rsp, "TargetPortalGroupTag"));
	exp_stat_sn = get_be32(rsp.bhs + 24) + 1;
	pdu_free(&rsp);
}

static void teardown(void)
{
	close(fd);
	harness_stop();
}

static void text_request(uint32_t itt, const char *kv, struct pdu *rsp)
{
	uint8_t bhs[48] = { 0x44, 0x80 };

	put_be32(bhs + 16, itt);
	put_be32(bhs + 20, 0xffffffff);
	put_be32(bhs + 24, 1);
	put_be32(bhs + 28, exp_stat_sn);
	pdu_send(fd, bhs, kv, (uint32_t)strlen(kv) + 1);
	ck_assert(pdu_recv(fd, rsp, 5000));
	ck_assert_uint_eq(rsp->bhs[0], 0x24);
	ck_assert_uint_eq(get_be32(rsp->bhs + 16), itt);
	exp_stat_sn = get_be32(rsp->bhs + 24) + 1;
}

/* SendTargets=All: TargetName and one TargetAddress "<ip>:<port>,<tpgt>" per portal. */
START_TEST(send_targets_all)
{
	struct pdu rsp;
	char addr[64];

	text_request(0x10, "SendTargets=All", &rsp);
	ck_assert_uint_eq(rsp.bhs[1], 0x80);
	ck_assert_uint_eq(get_be32(rsp.bhs + 20), 0xffffffff);
	ck_assert_str_eq(text_get(&rsp, "TargetName"), HARNESS_TARGET);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d,1", port);
	ck_assert_str_eq(text_get(&rsp, "TargetAddress"), addr);
	pdu_free(&rsp);
}
END_TEST

/* Unknown keys -> NotUnderstood; a value that is neither All nor an iSCSI name -> Reject. */
START_TEST(send_targets_invalid)
{
	struct pdu rsp;

	text_request(0x11, "SendTargetsPlease=All", &rsp);
	ck_assert_str_eq(text_get(&rsp, "SendTargetsPlease"), "NotUnderstood");
	pdu_free(&rsp);
	text_request(0x12, "SendTargets=Alle", &rsp);
	ck_assert_str_eq(text_get(&rsp, "SendTargets"), "Reject");
	pdu_free(&rsp);
	text_request(0x13, "sENDtARGETS=aLL", &rsp);
	ck_assert_str_eq(text_get(&rsp, "sENDtARGETS"), "NotUnderstood");
	pdu_free(&rsp);
	text_request(0x14, "SendTargets=iqn.2024-01.org.none:x", &rsp);
	ck_assert_uint_eq(rsp.data_len, 0);
	pdu_free(&rsp);
}
END_TEST

/* A SCSI Command in a discovery session is rejected (protocol error). */
START_TEST(scsi_command_in_discovery)
{
	uint8_t cdb[16] = { 0 }, bhs[48];
	struct pdu rsp;

	bhs_scsi_cmd(bhs, 0x81, 0x20, 0, 1, exp_stat_sn, cdb, 6);
	pdu_send(fd, bhs, NULL, 0);
	ck_assert(pdu_recv(fd, &rsp, 5000));
	ck_assert_uint_eq(rsp.bhs[0], 0x3f);
	ck_assert_uint_eq(rsp.bhs[2], 0x04);
	pdu_free(&rsp);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iscsi_discovery");
	TCase *tc = tcase_create("discovery");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, send_targets_all);
	tcase_add_test(tc, send_targets_invalid);
	tcase_add_test(tc, scsi_command_in_discovery);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
