/*
 * transport_id.c: the iSCSI TransportID (SPC-4 7.6.4.6) and the initiator
 * port names the SCSI core compares byte for byte.  iSCSI names compare
 * after case folding (RFC 3722), and so do the ISID's hexadecimal digits:
 * the front end hands the core one case, lower.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "iscsi_internal.h"

/* SPC-4 7.6.4.6, FORMAT CODE 01b: 41h... , ADDITIONAL LENGTH a multiple of 4, the name NUL-terminated. */
START_TEST(encode_decode_round_trip)
{
	static const char name[] = "iqn.2026-12.test:host,i,0x23d000000001";
	uint8_t tid[256];
	char back[256];
	size_t len = iscsi_transport_id_encode(name, tid, sizeof(tid));

	ck_assert_uint_eq(tid[0], 0x45);
	ck_assert_uint_eq(len, 4 + ((sizeof(name) + 3) & ~3u));
	ck_assert_uint_eq((tid[2] << 8 | tid[3]) % 4, 0);
	ck_assert(iscsi_transport_id_decode(tid, len, back, sizeof(back)));
	ck_assert_str_eq(back, name);
}
END_TEST

/* A name and ISID given in capitals (PERSISTENT RESERVE OUT parameter data) come out folded. */
START_TEST(decode_folds_case)
{
	static const char name[] = "IQN.2026-12.Test:Host,i,0x23D00000000A";
	uint8_t tid[256];
	char back[256];
	size_t len = iscsi_transport_id_encode(name, tid, sizeof(tid));

	ck_assert(iscsi_transport_id_decode(tid, len, back, sizeof(back)));
	ck_assert_str_eq(back, "iqn.2026-12.test:host,i,0x23d00000000a");
}
END_TEST

/* FORMAT CODE 00b (a device name) and other protocols are not initiator ports of this transport. */
START_TEST(decode_refuses_other_forms)
{
	static const char name[] = "iqn.2026-12.test:host,i,0x23d000000001";
	uint8_t tid[256];
	char back[256];
	size_t len = iscsi_transport_id_encode(name, tid, sizeof(tid));

	tid[0] = 0x05; /* FORMAT CODE 00b */
	ck_assert(!iscsi_transport_id_decode(tid, len, back, sizeof(back)));
	tid[0] = 0x46; /* SAS */
	ck_assert(!iscsi_transport_id_decode(tid, len, back, sizeof(back)));
}
END_TEST

START_TEST(fold_touches_ascii_letters_only)
{
	char name[] = "IQN.2026-12.X:\xc3\x89t\xc3\xa9,i,0xABCDEF012345";

	iscsi_port_name_fold(name);
	ck_assert_str_eq(name, "iqn.2026-12.x:\xc3\x89t\xc3\xa9,i,0xabcdef012345");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("transport_id");
	TCase *tc = tcase_create("transport_id");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, encode_decode_round_trip);
	tcase_add_test(tc, decode_folds_case);
	tcase_add_test(tc, decode_refuses_other_forms);
	tcase_add_test(tc, fold_touches_ascii_letters_only);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
