/*
 * values.c: text to typed values, one setter per schema type, called
 * through the schema rows the way the parser calls them.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"

static char why[1024];

static const struct cfg_key *key(enum cfg_section_kind section, const char *name)
{
	const struct cfg_key *k = cfg_schema_find(section, name, NULL);

	ck_assert_ptr_nonnull(k);
	return k;
}

static int set(enum cfg_section_kind section, void *object, const char *name, const char *value)
{
	const struct cfg_key *k = key(section, name);

	why[0] = '\0';
	return k->set(k, object, value, why, sizeof(why));
}

START_TEST(booleans)
{
	struct cfg_lun l = { 0 };
	static const char *const yes[] = { "true", "TRUE", "yes", "on", "1" };
	static const char *const no[] = { "false", "No", "off", "0" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		l.removable = false;
		ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "removable", yes[i]), 0);
		ck_assert(l.removable);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		l.removable = true;
		ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "removable", no[i]), 0);
		ck_assert(!l.removable);
	}
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "removable", "2"), -1);
	ck_assert_str_eq(why, "\"2\" is not a boolean (true or false)");
}
END_TEST

/* Sizes: binary multiples K..P, hex without units, overflow is out of range. */
START_TEST(sizes)
{
	struct cfg_lun l = { 0 };

	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "size", "1G"), 0);
	ck_assert_uint_eq(l.size, 1ull << 30);
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "size", "512m"), 0);
	ck_assert_uint_eq(l.size, 512ull << 20);
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "size", "3K"), 0);
	ck_assert_uint_eq(l.size, 3072);
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "size", "2T"), 0);
	ck_assert_uint_eq(l.size, 2ull << 40);
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "size", "0x1000"), 0);
	ck_assert_uint_eq(l.size, 4096);
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "size", "123"), 0);
	ck_assert_uint_eq(l.size, 123);
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "size", "1GB"), -1);
	ck_assert_str_eq(why, "\"1GB\" is not a size (a number with an optional K, M, G, T or P suffix)");
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "size", "-1"), -1);
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "size", ""), -1);
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "size", "0x1000K"), -1);
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "size", "99999999999999999999"), -1);
	ck_assert_str_eq(why, "99999999999999999999 is out of range (0..9223372036854775807)");
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "size", "100000P"), -1);
	ck_assert_str_eq(why, "100000P is out of range (0..9223372036854775807)");
}
END_TEST

/* u32 keys take no units and stay within their row's range. */
START_TEST(u32_ranges)
{
	struct cfg_iscsi i = { 0 };

	ck_assert_int_eq(set(CFG_SECTION_ISCSI, &i, "max_burst_length", "16777215"), 0);
	ck_assert_uint_eq(i.max_burst_length, 16777215);
	ck_assert_int_eq(set(CFG_SECTION_ISCSI, &i, "max_burst_length", "16777216"), -1);
	ck_assert_str_eq(why, "16777216 is out of range (512..16777215)");
	ck_assert_int_eq(set(CFG_SECTION_ISCSI, &i, "max_burst_length", "1M"), -1);
	ck_assert_str_eq(why, "\"1M\" is not a number");
	ck_assert_int_eq(set(CFG_SECTION_ISCSI, &i, "default_time2wait", "0"), 0);
	ck_assert_uint_eq(i.default_time2wait, 0);
}
END_TEST

START_TEST(enums)
{
	struct cfg_lun l = { 0 };

	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "logical_block_size", "4096"), 0);
	ck_assert_uint_eq(l.logical_block_size, 4096);
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "logical_block_size", "1024"), -1);
	ck_assert_str_eq(why, "\"1024\" is not one of 512 or 4096");
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "kind", "conventional"), 0);
	ck_assert_int_eq(l.kind, CFG_LU_CONVENTIONAL);
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "kind", "admin"), -1);
	ck_assert_str_eq(why, "\"admin\" is not one of conventional, zbc-hm, zbc-ha, zbc-zd or conglomerate");
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "kind", "conglomerate"), 0);
	ck_assert_int_eq(l.kind, CFG_LU_CONGLOMERATE);
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "kind", "zbc-ha"), 0);
	ck_assert_int_eq(l.kind, CFG_LU_ZBC_HA);
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "kind", "zbc-hm"), 0);
	ck_assert_int_eq(l.kind, CFG_LU_ZBC_HM);
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "kind", "Conventional"), -1);
	ck_assert_str_eq(why, "\"Conventional\" is not one of conventional, zbc-hm, zbc-ha, zbc-zd or conglomerate");
}
END_TEST

/* SPC-4 4.3.1: INQUIRY ASCII fields: printable, bounded by the field's length. */
START_TEST(strings)
{
	struct cfg_lun l = { 0 };
	struct cfg_target t = { 0 };

	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "vendor", "ABCDEFGH"), 0);
	ck_assert_str_eq(l.vendor, "ABCDEFGH");
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "vendor", "ABCDEFGHI"), -1);
	ck_assert_str_eq(why, "is longer than 8 characters");
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "product", "tab\there"), -1);
	ck_assert_str_eq(why, "contains a character that is not printable ASCII");
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "serial", ""), 0);
	/* CHAP secrets: 12..255 bytes (RFC 7143 12.1.3); empty = not configured. */
	ck_assert_int_eq(set(CFG_SECTION_TARGET, &t, "chap_secret", "short"), -1);
	ck_assert_str_eq(why, "is shorter than 12 characters");
	ck_assert_int_eq(set(CFG_SECTION_TARGET, &t, "chap_secret", "exactly12chr"), 0);
	ck_assert_int_eq(set(CFG_SECTION_TARGET, &t, "chap_secret", ""), 0);
	ck_assert_str_eq(t.chap_secret, "");
}
END_TEST

START_TEST(paths)
{
	struct cfg_lun l = { 0 };
	struct cfg_daemon d = { 0 };
	char long_path[CFG_PATH_MAX + 1];

	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "path", ""), -1);
	ck_assert_str_eq(why, "must not be empty");
	ck_assert_int_eq(set(CFG_SECTION_DAEMON, &d, "state_dir", ""), 0);
	memset(long_path, 'a', CFG_PATH_MAX);
	long_path[CFG_PATH_MAX] = '\0';
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "path", long_path), -1);
	ck_assert_str_eq(why, "is longer than 4095 characters");
}
END_TEST

/* Portals: IPv4[:port] or [IPv6][:port], normalised with port 3260 by default. */
START_TEST(addresses)
{
	struct cfg_daemon d = { 0 };

	ck_assert_int_eq(set(CFG_SECTION_DAEMON, &d, "listen", "[::1] 127.0.0.1:3261,[fe80::1]:4000"), 0);
	ck_assert_uint_eq(d.listen_count, 3);
	ck_assert_str_eq(d.listen[0], "[::1]:3260");
	ck_assert_str_eq(d.listen[1], "127.0.0.1:3261");
	ck_assert_str_eq(d.listen[2], "[fe80::1]:4000");
	ck_assert_int_eq(set(CFG_SECTION_DAEMON, &d, "listen", "localhost:3260"), -1);
	ck_assert_str_eq(why, "\"localhost\" is not a numeric IPv4 address");
	ck_assert_int_eq(set(CFG_SECTION_DAEMON, &d, "listen", "[::1"), -1);
	ck_assert_str_eq(why, "\"[::1\": missing ']' after the IPv6 address");
	ck_assert_int_eq(set(CFG_SECTION_DAEMON, &d, "listen", "[::1]x"), -1);
	ck_assert_str_eq(why, "\"[::1]x\" is not an address (IPv4:port or [IPv6]:port)");
	ck_assert_int_eq(set(CFG_SECTION_DAEMON, &d, "listen", "1.2.3.4:80 1.2.3.4:80"), -1);
	ck_assert_str_eq(why, "1.2.3.4:80 is listed twice");
	ck_assert_int_eq(set(CFG_SECTION_DAEMON, &d, "listen", " , "), -1);
	ck_assert_str_eq(why, "needs at least one address");
	ck_assert_uint_eq(d.listen_count, 3); /* unchanged by refused values */
}
END_TEST

/* RFC 7143 4.2.7: iqn.YYYY-MM.authority[:id], eui. + 16 hex digits, naa. + 16 or 32. */
START_TEST(iscsi_names)
{
	ck_assert_int_eq(cfg_check_iscsi_name("iqn.2026-12.org.sbcemu:default", why, sizeof(why)), 0);
	ck_assert_int_eq(cfg_check_iscsi_name("iqn.1993-08.org.debian:01:abcdef", why, sizeof(why)), 0);
	ck_assert_int_eq(cfg_check_iscsi_name("eui.02004567A425678D", why, sizeof(why)), 0);
	ck_assert_int_eq(cfg_check_iscsi_name("naa.52004567BA64678D", why, sizeof(why)), 0);
	ck_assert_int_eq(cfg_check_iscsi_name("naa.62004567BA64678D0123456789ABCDEF", why, sizeof(why)), 0);
	ck_assert_int_eq(cfg_check_iscsi_name("eui.0200", why, sizeof(why)), -1);
	ck_assert_str_eq(why, "\"eui.0200\": an eui. name has 16 hexadecimal digits");
	ck_assert_int_eq(cfg_check_iscsi_name("iqn.2026-00.org.x", why, sizeof(why)), -1);
	ck_assert_str_eq(why, "\"iqn.2026-00.org.x\": an iqn. name is iqn.YYYY-MM.reversed.domain[:identifier]");
	ck_assert_int_eq(cfg_check_iscsi_name("iqn.2026-12.", why, sizeof(why)), -1);
	ck_assert_int_eq(cfg_check_iscsi_name("iqn.2026-12.Org.x", why, sizeof(why)), -1);
	ck_assert_str_eq(why, "\"iqn.2026-12.Org.x\": iSCSI names are lower case (RFC 3722)");
	ck_assert_int_eq(cfg_check_iscsi_name("iqn.2026-12.org.x/y", why, sizeof(why)), -1);
	ck_assert_str_eq(why, "\"iqn.2026-12.org.x/y\": iSCSI names use only a-z, 0-9, '-', '.' and ':'");
	ck_assert_int_eq(cfg_check_iscsi_name("disk1", why, sizeof(why)), -1);
	ck_assert_str_eq(why, "\"disk1\" is not an iSCSI name (iqn.YYYY-MM.reversed.domain[:id], eui. or naa.)");
}
END_TEST

START_TEST(allowed_initiators)
{
	struct cfg_target t = { 0 };

	ck_assert_int_eq(set(CFG_SECTION_TARGET, &t, "allowed_initiators",
			     "iqn.1993-08.org.debian:01:a eui.02004567A425678D"), 0);
	ck_assert_uint_eq(t.acl_count, 2);
	ck_assert_str_eq(t.acls[1]->initiator, "eui.02004567A425678D");
	ck_assert_int_eq(set(CFG_SECTION_TARGET, &t, "allowed_initiators", "iqn.1993-08.org.debian:01:a"), -1);
	ck_assert_str_eq(why, "iqn.1993-08.org.debian:01:a is listed twice");
	for (size_t i = 0; i < t.acl_count; i++)
		free(t.acls[i]);
	free(t.acls);
}
END_TEST

/* SPC-4 7.8.6.6: NAA 6 (IEEE Registered Extended) designators start with hex digit 6. */
START_TEST(naa)
{
	struct cfg_lun l = { 0 };

	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "naa", "6001405abcdef012"), 0);
	ck_assert_uint_eq(l.naa, 0x6001405abcdef012ull);
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "naa", "0"), 0);
	ck_assert_uint_eq(l.naa, 0);
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "naa", "0x5001405abcdef012"), -1);
	ck_assert_str_eq(why, "\"0x5001405abcdef012\" does not start with 6 (NAA IEEE Registered Extended)");
	ck_assert_int_eq(set(CFG_SECTION_LUN, &l, "naa", "6001405"), -1);
	ck_assert_str_eq(why, "\"6001405\" is not 16 hexadecimal digits");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("config_values");
	TCase *tc = tcase_create("values");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, booleans);
	tcase_add_test(tc, sizes);
	tcase_add_test(tc, u32_ranges);
	tcase_add_test(tc, enums);
	tcase_add_test(tc, strings);
	tcase_add_test(tc, paths);
	tcase_add_test(tc, addresses);
	tcase_add_test(tc, iscsi_names);
	tcase_add_test(tc, allowed_initiators);
	tcase_add_test(tc, naa);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
