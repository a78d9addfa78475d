/* Login phase over the wire (RFC 7143 6, 11.12, 11.13, 12.1.3). */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iscsi_harness.h"
#include "iscsi_internal.h"

static int fd;

static void setup(void)
{
	harness_start(NULL);
	fd = harness_connect();
}

static void teardown(void)
{
	close(fd);
	harness_stop();
}

/* One login PDU from CSG/NSG with text; returns the response. */
static void login_pdu(uint8_t flags, uint16_t tsih, const char *const *kvs, struct pdu *rsp)
{
	char text[4096];
	uint32_t len = 0;
	uint8_t bhs[48];

	for (int i = 0; kvs && kvs[i]; i++)
		text_add(text, &len, kvs[i]);
	bhs_login(bhs, flags, harness_isid, tsih, 0x77, 5, 0);
	pdu_send(fd, bhs, text, len);
	ck_assert(pdu_recv(fd, rsp, 5000));
	ck_assert_uint_eq(rsp->bhs[0], 0x23);
}

static int status_of(const struct pdu *p)
{
	return p->bhs[36] << 8 | p->bhs[37];
}

/* A successful login: T, CSG=1, NSG=3, TSIH set, StatSN/ExpCmdSN/MaxCmdSN, TPGT and MRDSL declared. */
START_TEST(login_success)
{
	static const char *const kvs[] = { "InitiatorName=" HARNESS_INITIATOR, "TargetName=" HARNESS_TARGET,
					   "SessionType=Normal", "MaxRecvDataSegmentLength=65536",
					   "ImmediateData=Yes", "X-vendor.key=1", NULL };
	struct pdu rsp;

	login_pdu(0x80 | (1 << 2) | 3, 0, kvs, &rsp);
	ck_assert_int_eq(status_of(&rsp), 0);
	ck_assert_uint_eq(rsp.bhs[1], 0x80 | (1 << 2) | 3);
	ck_assert_mem_eq(rsp.bhs + 8, harness_isid, 6);
	ck_assert_uint_ne(get_be16(rsp.bhs + 14), 0);         /* TSIH assigned */
	ck_assert_uint_eq(get_be32(rsp.bhs + 16), 0x77);       /* ITT echoed */
	ck_assert_uint_eq(get_be32(rsp.bhs + 28), 5);          /* ExpCmdSN = the login's CmdSN */
	ck_assert_uint_eq(get_be32(rsp.bhs + 32), 5 + 128 - 1); /* MaxCmdSN: the default window */
	ck_assert_str_eq(text_get(&rsp, "TargetPortalGroupTag"), "1");
	ck_assert_str_eq(text_get(&rsp, "TargetAlias"), "test-alias");
	ck_assert_str_eq(text_get(&rsp, "MaxRecvDataSegmentLength"), "262144");
	ck_assert_str_eq(text_get(&rsp, "ImmediateData"), "Yes");
	ck_assert_str_eq(text_get(&rsp, "X-vendor.key"), "NotUnderstood");
	pdu_free(&rsp);
}
END_TEST

/* RFC 7143 11.13.5: 02/03 Not found. */
START_TEST(login_target_not_found)
{
	static const char *const kvs[] = { "InitiatorName=" HARNESS_INITIATOR, "TargetName=iqn.2024-01.org.none:x",
					   NULL };
	struct pdu rsp;

	login_pdu(0x80 | (1 << 2) | 3, 0, kvs, &rsp);
	ck_assert_int_eq(status_of(&rsp), 0x0203);
	ck_assert_uint_eq(get_be16(rsp.bhs + 14), 0);
	pdu_free(&rsp);
	ck_assert(peer_closed(fd, 2000));
}
END_TEST

/* RFC 7143 11.13.5: 02/07 Missing parameter (no InitiatorName; no TargetName in a normal session). */
START_TEST(login_missing_parameter)
{
	static const char *const kvs[] = { "TargetName=" HARNESS_TARGET, NULL };
	struct pdu rsp;

	login_pdu(0x80 | (1 << 2) | 3, 0, kvs, &rsp);
	ck_assert_int_eq(status_of(&rsp), 0x0207);
	pdu_free(&rsp);
}
END_TEST

/* RFC 7143 11.12.4: VersionMin above 0x00 -> 02/05 Unsupported version. */
START_TEST(login_unsupported_version)
{
	static const char *const kvs[] = { "InitiatorName=" HARNESS_INITIATOR, "TargetName=" HARNESS_TARGET, NULL };
	char text[512];
	uint32_t len = 0;
	uint8_t bhs[48];
	struct pdu rsp;

	for (int i = 0; kvs[i]; i++)
		text_add(text, &len, kvs[i]);
	bhs_login(bhs, 0x87, harness_isid, 0, 1, 1, 0);
	bhs[2] = 2; /* VersionMax */
	bhs[3] = 1; /* VersionMin */
	pdu_send(fd, bhs, text, len);
	ck_assert(pdu_recv(fd, &rsp, 5000));
	ck_assert_int_eq(status_of(&rsp), 0x0205);
	pdu_free(&rsp);
}
END_TEST

/*
 * RFC 7143 13.12: MaxRecvDataSegmentLength is 8192 during the login phase;
 * a longer Login Request is an initiator error answered in a Login Response
 * (11.13.5: 02/00), not a Reject, and the connection closes.
 */
START_TEST(login_oversize_pdu)
{
	static char text[16384];
	uint8_t bhs[48];
	struct pdu rsp;

	memset(text, 'x', sizeof(text));
	bhs_login(bhs, 0x87, harness_isid, 0, 0x99, 1, 0);
	pdu_send(fd, bhs, text, sizeof(text));
	ck_assert(pdu_recv(fd, &rsp, 5000));
	ck_assert_uint_eq(rsp.bhs[0] & 0x3f, 0x23);      /* Login Response, not Reject (3Fh) */
	ck_assert_int_eq(status_of(&rsp), 0x0200);       /* Initiator error */
	ck_assert_uint_eq(get_be32(rsp.bhs + 16), 0x99); /* its ITT */
	pdu_free(&rsp);
	ck_assert(peer_closed(fd, 5000));
}
END_TEST

/* RFC 7143 11.13.5: a TSIH of no session -> 02/0a Session does not exist. */
START_TEST(login_session_does_not_exist)
{
	static const char *const kvs[] = { "InitiatorName=" HARNESS_INITIATOR, "TargetName=" HARNESS_TARGET, NULL };
	struct pdu rsp;

	login_pdu(0x80 | (1 << 2) | 3, 0x4242, kvs, &rsp);
	ck_assert_int_eq(status_of(&rsp), 0x020a);
	pdu_free(&rsp);
}
END_TEST

/* RFC 7143 6.1: a key offered twice -> 02/00 Initiator error. */
START_TEST(login_repeated_key)
{
	static const char *const kvs[] = { "InitiatorName=" HARNESS_INITIATOR, "TargetName=" HARNESS_TARGET,
					   "MaxBurstLength=65536", "MaxBurstLength=65536", NULL };
	struct pdu rsp;

	login_pdu(0x80 | (1 << 2) | 3, 0, kvs, &rsp);
	ck_assert_int_eq(status_of(&rsp), 0x0200);
	pdu_free(&rsp);
}
END_TEST

/* RFC 7143 11.12.3: T with NSG not above CSG is an initiator error. */
START_TEST(login_bad_stage_transition)
{
	static const char *const kvs[] = { "InitiatorName=" HARNESS_INITIATOR, "TargetName=" HARNESS_TARGET, NULL };
	struct pdu rsp;

	login_pdu(0x80 | (1 << 2) | 0, 0, kvs, &rsp);
	ck_assert_int_eq(status_of(&rsp), 0x0200);
	pdu_free(&rsp);
}
END_TEST

/* Security stage with AuthMethod=None, then operational, then full feature (three exchanges). */
START_TEST(login_security_then_operational)
{
	static const char *const sec[] = { "InitiatorName=" HARNESS_INITIATOR, "TargetName=" HARNESS_TARGET,
					   "SessionType=Normal", "AuthMethod=CHAP,None", NULL };
	static const char *const op[] = { "HeaderDigest=None", "MaxRecvDataSegmentLength=8192", NULL };
	struct pdu rsp;
	uint32_t stat_sn;

	login_pdu(0x80 | (0 << 2) | 1, 0, sec, &rsp);
	ck_assert_int_eq(status_of(&rsp), 0);
	ck_assert_uint_eq(rsp.bhs[1], 0x80 | (0 << 2) | 1);
	ck_assert_str_eq(text_get(&rsp, "AuthMethod"), "None");
	ck_assert_str_eq(text_get(&rsp, "TargetPortalGroupTag"), "1");
	ck_assert_uint_eq(get_be16(rsp.bhs + 14), 0); /* TSIH only in the final response */
	stat_sn = get_be32(rsp.bhs + 24);
	pdu_free(&rsp);
	login_pdu(0x80 | (1 << 2) | 3, 0, op, &rsp);
	ck_assert_int_eq(status_of(&rsp), 0);
	ck_assert_uint_eq(get_be32(rsp.bhs + 24), stat_sn + 1);
	ck_assert_str_eq(text_get(&rsp, "HeaderDigest"), "None");
	ck_assert_ptr_null(text_get(&rsp, "TargetPortalGroupTag"));
	ck_assert_uint_ne(get_be16(rsp.bhs + 14), 0);
	pdu_free(&rsp);
}
END_TEST

/* RFC 7143 6.3 / 11.12.2: text split over C-bit PDUs; the target answers each with an empty response. */
START_TEST(login_continuation)
{
	const char part1[] = "InitiatorName=" HARNESS_INITIATOR "\0TargetName=iqn.2024-01.org.sb";
	const char part2[] = "cemu:test\0MaxBurstLength=65536";
	uint8_t bhs[48];
	struct pdu rsp;

	bhs_login(bhs, 0x40 | (1 << 2), harness_isid, 0, 9, 1, 0);
	pdu_send(fd, bhs, part1, sizeof(part1) - 1);
	ck_assert(pdu_recv(fd, &rsp, 5000));
	ck_assert_int_eq(status_of(&rsp), 0);
	ck_assert_uint_eq(rsp.data_len, 0);
	ck_assert_uint_eq(rsp.bhs[1] & 0x80, 0);
	pdu_free(&rsp);
	bhs_login(bhs, 0x80 | (1 << 2) | 3, harness_isid, 0, 9, 1, 0);
	pdu_send(fd, bhs, part2, sizeof(part2));
	ck_assert(pdu_recv(fd, &rsp, 5000));
	ck_assert_int_eq(status_of(&rsp), 0);
	ck_assert_str_eq(text_get(&rsp, "MaxBurstLength"), "65536");
	pdu_free(&rsp);
}
END_TEST

/* A PDU other than Login during login: the connection is closed (RFC 7143 6.1). */
START_TEST(login_non_login_pdu)
{
	uint8_t bhs[48] = { 0x00, 0x80 };

	put_be32(bhs + 16, 1);
	pdu_send(fd, bhs, NULL, 0);
	ck_assert(peer_closed(fd, 2000));
}
END_TEST

/* ---- ACL and CHAP (RFC 7143 12.1.3) ---- */

static const struct iscsi_acl_entry acl_other[] = { { .initiator_name = "iqn.2024-01.org.other:x" } };

START_TEST(login_acl_denied)
{
	struct harness_config cfg = { .acl = acl_other, .acl_len = 1 };
	static const char *const kvs[] = { "InitiatorName=" HARNESS_INITIATOR, "TargetName=" HARNESS_TARGET, NULL };
	struct pdu rsp;

	teardown();
	harness_start(&cfg);
	fd = harness_connect();
	login_pdu(0x80 | (1 << 2) | 3, 0, kvs, &rsp);
	ck_assert_int_eq(status_of(&rsp), 0x0202); /* Authorization failure */
	pdu_free(&rsp);
}
END_TEST

static void hex(const uint8_t *b, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";
	*out++ = '0';
	*out++ = 'x';
	for (size_t i = 0; i < n; i++) {
		*out++ = d[b[i] >> 4];
		*out++ = d[b[i] & 15];
	}
	*out = '\0';
}

/* Skipping security when the target requires CHAP: 02/01 Authentication failure. */
START_TEST(login_chap_required)
{
	struct harness_config cfg = { .chap = { "alice", "alicesecret1" } };
	static const char *const kvs[] = { "InitiatorName=" HARNESS_INITIATOR, "TargetName=" HARNESS_TARGET, NULL };
	static const char *const none[] = { "InitiatorName=" HARNESS_INITIATOR, "TargetName=" HARNESS_TARGET,
					    "AuthMethod=None", NULL };
	struct pdu rsp;

	teardown();
	harness_start(&cfg);
	fd = harness_connect();
	login_pdu(0x80 | (1 << 2) | 3, 0, kvs, &rsp);
	ck_assert_int_eq(status_of(&rsp), 0x0201);
	pdu_free(&rsp);
	close(fd);
	fd = harness_connect();
	login_pdu(0x80 | (0 << 2) | 1, 0, none, &rsp);
	ck_assert_int_eq(status_of(&rsp), 0x0201);
	pdu_free(&rsp);
}
END_TEST

/* Full mutual CHAP exchange: CHAP_A -> CHAP_I/CHAP_C; CHAP_N/CHAP_R (+ CHAP_I/CHAP_C) -> target's CHAP_N/CHAP_R. */
static void chap_exchange(const char *secret, bool mutual, int expect_status)
{
	static const char *const a1[] = { "InitiatorName=" HARNESS_INITIATOR, "TargetName=" HARNESS_TARGET,
					  "AuthMethod=CHAP,None", NULL };
	static const char *const a2[] = { "CHAP_A=7,5", NULL };
	char kv_n[64] = "CHAP_N=alice", kv_r[64], kv_i[32] = "CHAP_I=33", kv_c[64];
	const char *a3[6] = { kv_n, kv_r, NULL, NULL, NULL, NULL };
	uint8_t challenge[64], resp[16], my_challenge[16];
	struct pdu rsp;
	int clen;
	unsigned id;

	login_pdu(0x80 | (0 << 2) | 1, 0, a1, &rsp);
	ck_assert_int_eq(status_of(&rsp), 0);
	ck_assert_str_eq(text_get(&rsp, "AuthMethod"), "CHAP");
	ck_assert_uint_eq(rsp.bhs[1] & 0x80, 0); /* no transit before authentication */
	pdu_free(&rsp);
	login_pdu(0x80 | (0 << 2) | 1, 0, a2, &rsp);
	ck_assert_int_eq(status_of(&rsp), 0);
	ck_assert_str_eq(text_get(&rsp, "CHAP_A"), "5");
	id = (unsigned)atoi(text_get(&rsp, "CHAP_I"));
	clen = iscsi_chap_decode_binary(text_get(&rsp, "CHAP_C"), challenge, sizeof(challenge));
	ck_assert_int_eq(clen, 16);
	pdu_free(&rsp);
	ck_assert_int_eq(iscsi_chap_md5((uint8_t)id, (const uint8_t *)secret, strlen(secret), challenge, 16, resp), 0);
	strcpy(kv_r, "CHAP_R=");
	hex(resp, 16, kv_r + 7);
	if (mutual) {
		for (int i = 0; i < 16; i++)
			my_challenge[i] = (uint8_t)(0xa0 + i);
		strcpy(kv_c, "CHAP_C=");
		hex(my_challenge, 16, kv_c + 7);
		a3[2] = kv_i;
		a3[3] = kv_c;
	}
	login_pdu(0x80 | (0 << 2) | 1, 0, a3, &rsp);
	ck_assert_int_eq(status_of(&rsp), expect_status);
	if (expect_status == 0) {
		ck_assert_uint_eq(rsp.bhs[1], 0x80 | (0 << 2) | 1);
		if (mutual) {
			uint8_t expect[16], got[16];
			ck_assert_str_eq(text_get(&rsp, "CHAP_N"), "target");
			ck_assert_int_eq(iscsi_chap_md5(33, (const uint8_t *)"targetsecret", 12, my_challenge, 16, expect), 0);
			ck_assert_int_eq(iscsi_chap_decode_binary(text_get(&rsp, "CHAP_R"), got, 16), 16);
			ck_assert_mem_eq(got, expect, 16);
		}
	}
	pdu_free(&rsp);
}

START_TEST(login_chap_one_way_and_mutual)
{
	struct harness_config cfg = { .chap = { "alice", "alicesecret1" }, .mutual = { "target", "targetsecret" } };

	teardown();
	harness_start(&cfg);
	fd = harness_connect();
	chap_exchange("alicesecret1", false, 0);
	close(fd);
	fd = harness_connect();
	chap_exchange("alicesecret1", true, 0);
	close(fd);
	fd = harness_connect();
	chap_exchange("wrongsecret1", false, 0x0201);
}
END_TEST

/* CHAP_A without 5 (MD5): CHAP_A=Reject and 02/01. */
START_TEST(login_chap_bad_algorithm)
{
	struct harness_config cfg = { .chap = { "alice", "alicesecret1" } };
	static const char *const a1[] = { "InitiatorName=" HARNESS_INITIATOR, "TargetName=" HARNESS_TARGET,
					  "AuthMethod=CHAP", NULL };
	static const char *const a2[] = { "CHAP_A=56", NULL };
	struct pdu rsp;

	teardown();
	harness_start(&cfg);
	fd = harness_connect();
	login_pdu(0x00 | (0 << 2), 0, a1, &rsp);
	ck_assert_int_eq(status_of(&rsp), 0);
	pdu_free(&rsp);
	login_pdu(0x00 | (0 << 2), 0, a2, &rsp);
	ck_assert_int_eq(status_of(&rsp), 0x0201);
	pdu_free(&rsp);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iscsi_login");
	TCase *tc = tcase_create("login");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, login_success);
	tcase_add_test(tc, login_target_not_found);
	tcase_add_test(tc, login_missing_parameter);
	tcase_add_test(tc, login_unsupported_version);
	tcase_add_test(tc, login_oversize_pdu);
	tcase_add_test(tc, login_session_does_not_exist);
	tcase_add_test(tc, login_repeated_key);
	tcase_add_test(tc, login_bad_stage_transition);
	tcase_add_test(tc, login_security_then_operational);
	tcase_add_test(tc, login_continuation);
	tcase_add_test(tc, login_non_login_pdu);
	tcase_add_test(tc, login_acl_denied);
	tcase_add_test(tc, login_chap_required);
	tcase_add_test(tc, login_chap_one_way_and_mutual);
	tcase_add_test(tc, login_chap_bad_algorithm);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
