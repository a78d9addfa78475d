/* Unit tests for param.c: key=value parsing and the RFC 7143 6.2 result functions of each key. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "iscsi_internal.h"

static struct iscsi_server_params ours;
static struct iscsi_negotiation neg;
static struct iscsi_text out;

static void setup(void)
{
	iscsi_server_params_default(&ours);
	iscsi_negotiation_init(&neg, &ours, true);
	memset(&out, 0, sizeof(out));
}

static void teardown(void)
{
	iscsi_text_free(&out);
}

/* The response text as one string with '\0' separators shown as '|'. */
static const char *response(void)
{
	static char buf[4096];
	size_t n = out.len < sizeof(buf) - 1 ? out.len : sizeof(buf) - 1;
	for (size_t i = 0; i < n; i++)
		buf[i] = out.buf[i] ? out.buf[i] : '|';
	buf[n] = '\0';
	return buf;
}

static void negotiate(const char *key, const char *value)
{
	ck_assert_int_eq(iscsi_param_negotiate(&neg, key, value, &out), ISCSI_NEGOTIATE_OK);
}

/* RFC 7143 6.1: pairs end with NUL; an entry without '=' is malformed. */
START_TEST(text_parse)
{
	char text[] = "A=1\0B=two\0\0\0";
	char bad[] = "A=1\0noequals\0";
	struct iscsi_kv kv[4];

	ck_assert_int_eq(iscsi_text_parse(text, sizeof(text) - 1, kv, 4), 2);
	ck_assert_str_eq(kv[0].key, "A");
	ck_assert_str_eq(kv[0].value, "1");
	ck_assert_str_eq(kv[1].key, "B");
	ck_assert_str_eq(kv[1].value, "two");
	ck_assert_int_eq(iscsi_text_parse(bad, sizeof(bad) - 1, kv, 4), -1);
}
END_TEST

/* HeaderDigest/DataDigest (13.1): list; the first value of the offer we support. */
START_TEST(digest_list)
{
	negotiate("HeaderDigest", "CRC32C,None");
	negotiate("DataDigest", "None,CRC32C");
	ck_assert_str_eq(response(), "HeaderDigest=CRC32C|DataDigest=None|");
	ck_assert_int_eq(neg.conn.header_digest, ISCSI_DIGEST_CRC32C);
	ck_assert_int_eq(neg.conn.data_digest, ISCSI_DIGEST_NONE);
}
END_TEST

START_TEST(digest_not_allowed_and_reject)
{
	ours.header_digest_crc32c_allowed = false;
	negotiate("HeaderDigest", "CRC32C,None");
	negotiate("DataDigest", "MD5");
	ck_assert_str_eq(response(), "HeaderDigest=None|DataDigest=Reject|");
	ck_assert_int_eq(neg.conn.header_digest, ISCSI_DIGEST_NONE);
}
END_TEST

/* InitialR2T (13.10): OR; ImmediateData (13.11): AND. */
START_TEST(boolean_and_or)
{
	ours.initial_r2t = false;
	ours.immediate_data = true;
	negotiate("InitialR2T", "No");
	negotiate("ImmediateData", "Yes");
	ck_assert_str_eq(response(), "InitialR2T=No|ImmediateData=Yes|");
	ck_assert(!neg.sess.initial_r2t);
	ck_assert(neg.sess.immediate_data);

	teardown();
	setup();
	ours.immediate_data = false;
	negotiate("InitialR2T", "Yes");
	negotiate("ImmediateData", "Yes");
	ck_assert_str_eq(response(), "InitialR2T=Yes|ImmediateData=No|");
	ck_assert(neg.sess.initial_r2t);
	ck_assert(!neg.sess.immediate_data);
}
END_TEST

/* Values outside the key's domain: Reject (RFC 7143 6.2). */
START_TEST(boolean_bad_value)
{
	negotiate("ImmediateData", "yes");
	ck_assert_str_eq(response(), "ImmediateData=Reject|");
	ck_assert(neg.sess.immediate_data); /* default kept */
}
END_TEST

/* MaxBurstLength/FirstBurstLength (13.13, 13.14): numerical minimum; DefaultTime2Wait (13.15): maximum. */
START_TEST(numerical_min_max)
{
	negotiate("MaxBurstLength", "16776192");
	negotiate("FirstBurstLength", "4096");
	negotiate("DefaultTime2Wait", "0");
	negotiate("DefaultTime2Retain", "0");
	negotiate("MaxOutstandingR2T", "8");
	negotiate("ErrorRecoveryLevel", "2");
	negotiate("MaxConnections", "4");
	ck_assert_str_eq(response(), "MaxBurstLength=1048576|FirstBurstLength=4096|DefaultTime2Wait=2|"
				     "DefaultTime2Retain=0|MaxOutstandingR2T=1|ErrorRecoveryLevel=0|MaxConnections=1|");
	ck_assert_uint_eq(neg.sess.max_burst_length, 1048576);
	ck_assert_uint_eq(neg.sess.first_burst_length, 4096);
	ck_assert_uint_eq(neg.sess.default_time2wait, 2);
	ck_assert_uint_eq(neg.sess.default_time2retain, 0);
	ck_assert_uint_eq(neg.sess.max_outstanding_r2t, 1);
	ck_assert_uint_eq(neg.sess.error_recovery_level, 0);
	ck_assert_uint_eq(neg.sess.max_connections, 1);
}
END_TEST

/* Out of range (512..2^24-1) or not a number: Reject; hex numbers are numbers (RFC 7143 5.1). */
START_TEST(numerical_range)
{
	negotiate("MaxBurstLength", "511");
	negotiate("FirstBurstLength", "16777216");
	negotiate("DefaultTime2Wait", "abc");
	negotiate("MaxOutstandingR2T", "0x2");
	ck_assert_str_eq(response(), "MaxBurstLength=Reject|FirstBurstLength=Reject|DefaultTime2Wait=Reject|"
				     "MaxOutstandingR2T=1|");
	ck_assert_uint_eq(neg.sess.max_burst_length, 262144);
}
END_TEST

/* MaxRecvDataSegmentLength (13.12): declarative, stored for our transmit side; ours declared separately. */
START_TEST(declarative_mrdsl)
{
	negotiate("MaxRecvDataSegmentLength", "65536");
	ck_assert_str_eq(response(), "");
	ck_assert_uint_eq(neg.conn.max_xmit_data_segment_length, 65536);
	iscsi_param_declare(&neg, &out);
	ck_assert_str_eq(response(), "MaxRecvDataSegmentLength=262144|");
}
END_TEST

/* InitiatorName/TargetName/SessionType (13.4, 13.5, 13.21): stored, not answered. */
START_TEST(declarative_names)
{
	negotiate("InitiatorName", "iqn.1994-05.com.example:host");
	negotiate("TargetName", "iqn.2024-01.org.sbcemu:t");
	negotiate("SessionType", "Discovery");
	ck_assert_str_eq(response(), "");
	ck_assert_str_eq(neg.initiator_name, "iqn.1994-05.com.example:host");
	ck_assert_str_eq(neg.target_name, "iqn.2024-01.org.sbcemu:t");
	ck_assert_int_eq(neg.session_type, ISCSI_SESSION_DISCOVERY);
}
END_TEST

/* Unknown and X- keys: NotUnderstood (RFC 7143 6.2). */
START_TEST(not_understood)
{
	negotiate("X-com.example.Foo", "1");
	negotiate("NoSuchKey", "Yes");
	ck_assert_str_eq(response(), "X-com.example.Foo=NotUnderstood|NoSuchKey=NotUnderstood|");
}
END_TEST

/* A key offered twice in one negotiation fails the login (RFC 7143 6.1). */
START_TEST(repeated_key)
{
	negotiate("MaxBurstLength", "65536");
	ck_assert_int_eq(iscsi_param_negotiate(&neg, "MaxBurstLength", "65536", &out), ISCSI_NEGOTIATE_REPEATED_KEY);
}
END_TEST

/* A declaration repeated unchanged (libiscsi does so after AuthMethod=None) is accepted; a changed one is not. */
START_TEST(repeated_declaration)
{
	negotiate("InitiatorName", "iqn.1994-05.com.example:host");
	negotiate("SessionType", "Normal");
	negotiate("InitiatorName", "iqn.1994-05.com.example:host");
	negotiate("SessionType", "Normal");
	ck_assert_str_eq(response(), "");
	ck_assert_int_eq(iscsi_param_negotiate(&neg, "InitiatorName", "iqn.1994-05.com.example:other", &out),
			 ISCSI_NEGOTIATE_REPEATED_KEY);
	ck_assert_int_eq(iscsi_param_negotiate(&neg, "SessionType", "Discovery", &out), ISCSI_NEGOTIATE_REPEATED_KEY);
}
END_TEST

/* Session keys in a discovery session: Irrelevant. */
START_TEST(discovery_irrelevant)
{
	neg.session_type = ISCSI_SESSION_DISCOVERY;
	negotiate("MaxBurstLength", "65536");
	negotiate("ImmediateData", "Yes");
	negotiate("HeaderDigest", "None");
	ck_assert_str_eq(response(), "MaxBurstLength=Irrelevant|ImmediateData=Irrelevant|HeaderDigest=None|");
}
END_TEST

/* Obsolete markers (RFC 7143 13.25): No; their intervals Irrelevant; target-only keys from the initiator. */
START_TEST(markers_and_target_keys)
{
	negotiate("IFMarker", "Yes");
	negotiate("OFMarkInt", "1~65535");
	negotiate("TargetAlias", "x");
	ck_assert_str_eq(response(), "IFMarker=No|OFMarkInt=Irrelevant|TargetAlias=Irrelevant|");
}
END_TEST

/* Login-only keys in a Text negotiation of full feature phase: Reject. */
START_TEST(full_feature_phase)
{
	neg.full_feature = true;
	negotiate("MaxBurstLength", "65536");
	negotiate("MaxRecvDataSegmentLength", "4096");
	ck_assert_str_eq(response(), "MaxBurstLength=Reject|");
	ck_assert_uint_eq(neg.conn.max_xmit_data_segment_length, 4096);
}
END_TEST

/* RFC 7143 13.14: FirstBurstLength must not exceed MaxBurstLength. */
START_TEST(finish_first_burst)
{
	negotiate("MaxBurstLength", "8192");
	iscsi_param_finish(&neg);
	ck_assert_uint_eq(neg.sess.first_burst_length, 8192);
}
END_TEST

/* RFC 7143 4.2.7: iqn., eui. (16 hex), naa. (16 or 32 hex). */
START_TEST(name_valid)
{
	ck_assert(iscsi_name_valid("iqn.2024-01.org.sbcemu:t"));
	ck_assert(iscsi_name_valid("eui.02004567A425678D"));
	ck_assert(iscsi_name_valid("naa.52004567BA64678D"));
	ck_assert(!iscsi_name_valid("eui.0200"));
	ck_assert(!iscsi_name_valid("Alle"));
	ck_assert(!iscsi_name_valid("iqn."));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iscsi_param");
	TCase *tc = tcase_create("param");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, text_parse);
	tcase_add_test(tc, digest_list);
	tcase_add_test(tc, digest_not_allowed_and_reject);
	tcase_add_test(tc, boolean_and_or);
	tcase_add_test(tc, boolean_bad_value);
	tcase_add_test(tc, numerical_min_max);
	tcase_add_test(tc, numerical_range);
	tcase_add_test(tc, declarative_mrdsl);
	tcase_add_test(tc, declarative_names);
	tcase_add_test(tc, not_understood);
	tcase_add_test(tc, repeated_key);
	tcase_add_test(tc, repeated_declaration);
	tcase_add_test(tc, discovery_irrelevant);
	tcase_add_test(tc, markers_and_target_keys);
	tcase_add_test(tc, full_feature_phase);
	tcase_add_test(tc, finish_first_burst);
	tcase_add_test(tc, name_valid);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
