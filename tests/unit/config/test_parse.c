/*
 * parse.c: sections and keys onto the schema, and the exact
 * "file:line: section.key: reason" message for each kind of mistake.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_test.h"

#define T "iqn.2026-12.org.example:t"

/* A file using every section: values land in their fields, lists are normalised. */
START_TEST(good_file)
{
	struct cfg *cfg = cfg_test_parse_ok("# comment\n"
					    "; another\n"
					    "[daemon]\n"
					    "listen = 127.0.0.2, [::1]:3261 0.0.0.0:860\n"
					    "state_dir = /srv/sbcemu ; inline comment\n"
					    "log_level = debug\n"
					    "workers = 8\n"
					    "\n"
					    "[iscsi]\n"
					    "max_burst_length = 0x200000\n"
					    "immediate_data = no\n"
					    "initial_r2t = On\n"
					    "\n"
					    "[target \"" T "\"]\n"
					    "alias = test target\n"
					    "tpgt = 7\n"
					    "chap_user = alice\n"
					    "chap_secret = twelve-bytes\n"
					    "allowed_initiators = iqn.1993-08.org.debian:01:aa,iqn.1993-08.org.debian:01:bb\n"
					    "\n"
					    "[lun \"" T "\" 1]\n"
					    "path = /dev/null-not-opened-here\n"
					    "[lun \"" T "\" 0]\n"
					    "path = disk0.img\n"
					    "size = 2G\n"
					    "logical_block_size = 4096\n"
					    "lbppbe = 0\n"
					    "vendor = ACME\n"
					    "write_protect = true\n"
					    "naa = 0x6001405123456789\n"
					    "max_compare_and_write = 1\n"
					    "\n"
					    "[acl \"" T "\" \"iqn.1993-08.org.debian:01:bb\"]\n"
					    "chap_user = bob\n"
					    "chap_secret = another-secret\n",
					    true);
	struct cfg_target *t;
	struct cfg_lun *l;

	ck_assert_uint_eq(cfg->daemon.listen_count, 3);
	ck_assert_str_eq(cfg->daemon.listen[0], "127.0.0.2:3260");
	ck_assert_str_eq(cfg->daemon.listen[1], "[::1]:3261");
	ck_assert_str_eq(cfg->daemon.listen[2], "0.0.0.0:860");
	ck_assert_str_eq(cfg->daemon.state_dir, "/srv/sbcemu");
	ck_assert_int_eq(cfg->daemon.log_level, CFG_LOG_DEBUG);
	ck_assert_uint_eq(cfg->daemon.workers, 8);
	ck_assert_uint_eq(cfg->iscsi.max_burst_length, 0x200000);
	ck_assert_uint_eq(cfg->iscsi.first_burst_length, 262144); /* default */
	ck_assert(!cfg->iscsi.immediate_data);
	ck_assert(cfg->iscsi.initial_r2t);

	ck_assert_uint_eq(cfg->target_count, 1);
	t = cfg->targets[0];
	ck_assert_str_eq(t->name, T);
	ck_assert_str_eq(t->alias, "test target");
	ck_assert_uint_eq(t->tpgt, 7);
	ck_assert_str_eq(t->chap_user, "alice");
	ck_assert_uint_eq(t->acl_count, 2);
	ck_assert_str_eq(t->acls[0]->initiator, "iqn.1993-08.org.debian:01:aa");
	ck_assert_str_eq(t->acls[0]->chap_user, "");
	ck_assert_str_eq(t->acls[1]->initiator, "iqn.1993-08.org.debian:01:bb");
	ck_assert_str_eq(t->acls[1]->chap_user, "bob");

	ck_assert_uint_eq(t->lun_count, 2);
	ck_assert_uint_eq(t->luns[0]->lun, 1);
	l = t->luns[1];
	ck_assert_uint_eq(l->lun, 0);
	ck_assert_str_eq(l->path, "/srv/sbcemu/disk0.img"); /* relative: from state_dir */
	ck_assert_uint_eq(l->size, 2ull << 30);
	ck_assert_uint_eq(l->logical_block_size, 4096);
	ck_assert_str_eq(l->vendor, "ACME");
	ck_assert_str_eq(l->product, "sbcemu disk");
	ck_assert(l->write_protect);
	ck_assert(l->thin_provisioning);
	ck_assert_uint_eq(l->naa, 0x6001405123456789ull);
	ck_assert_uint_eq(l->max_compare_and_write, 1);
	ck_assert_int_eq(l->kind, CFG_LU_CONVENTIONAL);
	cfg_free(cfg);
}
END_TEST

START_TEST(unknown_section)
{
	cfg_test_expect("[daemon]\nworkers = 2\n[frob]\nx = 1\n", false,
			"t.ini:3: frob: unknown section (expected daemon, iscsi, target \"NAME\", "
			"acl \"TARGET\" \"INITIATOR\", lun \"TARGET\" N, tcmu or lu \"NAME\")\n");
}
END_TEST

START_TEST(unknown_key)
{
	cfg_test_expect("[daemon]\nworker = 2\n", false, "t.ini:2: daemon.worker: unknown key\n");
}
END_TEST

START_TEST(bad_values)
{
	cfg_test_expect("[daemon]\n"
			"log_level = verbose\n"
			"listen = 127.0.0.1:0\n"
			"[iscsi]\n"
			"immediate_data = maybe\n"
			"cmd_window = lots\n"
			"[lun \"" T "\" 0]\n"
			"size = 12Q\n"
			"kind = zbc\n"
			"vendor = \x01" "bad\n",
			false,
			"t.ini:2: daemon.log_level: \"verbose\" is not one of error, warn, info or debug\n"
			"t.ini:3: daemon.listen: \"127.0.0.1:0\": the port must be a number 1..65535\n"
			"t.ini:5: iscsi.immediate_data: \"maybe\" is not a boolean (true or false)\n"
			"t.ini:6: iscsi.cmd_window: \"lots\" is not a number\n"
			"t.ini:8: lun \"" T "\" 0.size: \"12Q\" is not a size (a number with an optional K, M, G, "
			"T or P suffix)\n"
			"t.ini:9: lun \"" T "\" 0.kind: \"zbc\" is not one of conventional, zbc-hm, zbc-ha, zbc-zd or conglomerate\n"
			"t.ini:10: lun \"" T "\" 0.vendor: contains a character that is not printable ASCII\n");
}
END_TEST

/*
 * A value quoted in a message reaches logs and terminals: control
 * characters and bytes that are not well-formed UTF-8 (RFC 3629) are
 * written as \xNN; well-formed UTF-8 stays as it is.
 */
START_TEST(quoted_values_escaped)
{
	cfg_test_expect("[daemon]\n"
			"log_level = \x1b[2Jverbose\xff\n"
			"[iscsi]\n"
			"cmd_window = caf\xc3\xa9\xc0\xaf\n",
			false,
			"t.ini:2: daemon.log_level: \"\\x1b[2Jverbose\\xff\" is not one of error, warn, info or debug\n"
			"t.ini:4: iscsi.cmd_window: \"caf\xc3\xa9\\xc0\\xaf\" is not a number\n");
}
END_TEST

START_TEST(out_of_range)
{
	cfg_test_expect("[daemon]\nworkers = 65\n[iscsi]\nmax_recv_data_segment_length = 511\n"
			"[lun \"" T "\" 0]\nlbppbe = 16\nmax_compare_and_write = 256\nsize = 8192P\n",
			false,
			"t.ini:2: daemon.workers: 65 is out of range (1..64)\n"
			"t.ini:4: iscsi.max_recv_data_segment_length: 511 is out of range (512..16777215)\n"
			"t.ini:6: lun \"" T "\" 0.lbppbe: 16 is out of range (0..15)\n"
			"t.ini:7: lun \"" T "\" 0.max_compare_and_write: 256 is out of range (0..255)\n"
			"t.ini:8: lun \"" T "\" 0.size: 8192P is out of range (0..9223372036854775807)\n");
}
END_TEST

/* A key may appear once per section, even when its first value was refused. */
START_TEST(duplicate_key)
{
	cfg_test_expect("[daemon]\nworkers = 2\nworkers = 3\nlog_level = x\nlog_level = info\n", false,
			"t.ini:3: daemon.workers: set twice (first at line 2)\n"
			"t.ini:4: daemon.log_level: \"x\" is not one of error, warn, info or debug\n"
			"t.ini:5: daemon.log_level: set twice (first at line 4)\n");
}
END_TEST

/* A section may be defined once: a second [lun "T" 0] is a duplicate LUN, wherever it appears. */
START_TEST(duplicate_section)
{
	cfg_test_expect("[lun \"" T "\" 0]\npath = a.img\n[daemon]\nworkers = 2\n"
			"[lun \"" T "\" 0]\npath = b.img\n[daemon]\n",
			false,
			"t.ini:5: lun \"" T "\" 0: defined twice (first at line 1)\n"
			"t.ini:7: daemon: defined twice (first at line 3)\n");
}
END_TEST

START_TEST(syntax_errors)
{
	cfg_test_expect("workers = 2\n"
			"[daemon]\n"
			"just words\n"
			"[iscsi\n"
			"cmd_window = 1\n"
			"[daemon2]\n",
			false,
			"t.ini:1: workers: key outside any section\n"
			"t.ini:3: syntax error (expected key = value, [section] or a comment)\n"
			"t.ini:4: syntax error: section header without ']'\n"
			"t.ini:6: daemon2: unknown section (expected daemon, iscsi, target \"NAME\", "
			"acl \"TARGET\" \"INITIATOR\", lun \"TARGET\" N, tcmu or lu \"NAME\")\n");
}
END_TEST

START_TEST(malformed_headers)
{
	cfg_test_expect("[target iqn.2026-12.org.example:t]\n"
			"[lun \"" T "\"]\n"
			"[lun \"" T "\" x]\n"
			"[lun \"" T "\" 256]\n"
			"[acl \"" T "\"]\n"
			"[daemon \"x\"]\n"
			"[target \"iqn.2026-13.org.example:t\"]\n"
			"[target \"" T "]\n",
			false,
			"t.ini:1: target iqn.2026-12.org.example:t: malformed section header (expected "
			"[target \"NAME\"])\n"
			"t.ini:2: lun \"" T "\": malformed section header (expected [lun \"TARGET\" N])\n"
			"t.ini:3: lun \"" T "\" x: malformed section header (expected [lun \"TARGET\" N])\n"
			"t.ini:4: lun \"" T "\" 256: LUN 256 is out of range (0..255)\n"
			"t.ini:5: acl \"" T "\": malformed section header (expected [acl \"TARGET\" \"INITIATOR\"])\n"
			"t.ini:6: daemon \"x\": malformed section header (expected [daemon])\n"
			"t.ini:7: target \"iqn.2026-13.org.example:t\": \"iqn.2026-13.org.example:t\": an iqn. name "
			"is iqn.YYYY-MM.reversed.domain[:identifier]\n"
			"t.ini:8: target \"" T ": malformed section header (expected [target \"NAME\"])\n");
}
END_TEST

/* libinih would read an indented line as a continuation of the previous value: refused. */
START_TEST(continuation_line)
{
	cfg_test_expect("[daemon]\nlisten = 127.0.0.1\n  workers = 3\n", false,
			"t.ini:3: daemon.listen: an indented line continues the previous value, which is not "
			"supported (write the value on one line; do not indent keys)\n");
}
END_TEST

/* libinih's line buffer is 200 bytes; a longer line is reported, not cut in two. */
START_TEST(long_line)
{
	char text[512];

	snprintf(text, sizeof(text), "[lun \"" T "\" 0]\nserial = %0250d\npath = x.img\n", 7);
	cfg_test_expect(text, false, "t.ini:2: line is longer than 199 characters\n");
}
END_TEST

/* A header with no key still declares its section: an empty [lun] misses its path. */
START_TEST(empty_sections)
{
	cfg_test_expect("[daemon]\nstate_dir = /srv\n[target \"" T "\"]\n\n[lun \"" T "\" 0]\n# nothing\n", true,
			"t.ini:5: lun \"" T "\" 0.path: required key is missing\n");
	cfg_test_expect("[daemon]\n[daemon]\n", false, "t.ini:2: daemon: defined twice (first at line 1)\n");
}
END_TEST

/* libinih cuts section names at 49 characters; iSCSI names are longer, and must survive. */
START_TEST(long_section_names)
{
	const char *name = "iqn.2026-12.org.example.a.rather.long.domain:and-an-even-longer-target-identifier";
	char text[1024];
	struct cfg *cfg;

	snprintf(text, sizeof(text), "[daemon]\nstate_dir = /srv\n[lun \"%s\" 0]\npath = /x.img\n", name);
	cfg = cfg_test_parse_ok(text, true);
	ck_assert_str_eq(cfg->targets[0]->name, name);
	cfg_free(cfg);
}
END_TEST

/* Every mistake is reported, in file order, not only the first. */
START_TEST(all_errors_reported)
{
	cfg_test_expect("[daemon]\nworkers = 0\nfoo = 1\n[iscsi]\ncmd_window = 0\n", false,
			"t.ini:2: daemon.workers: 0 is out of range (1..64)\n"
			"t.ini:3: daemon.foo: unknown key\n"
			"t.ini:5: iscsi.cmd_window: 0 is out of range (1..65535)\n");
}
END_TEST

START_TEST(missing_file)
{
	struct cfg_diag diag = { 0 };
	struct cfg *cfg = cfg_create();

	ck_assert_int_eq(cfg_parse_file(cfg, "/nonexistent/sbcemu.ini", &diag), -1);
	ck_assert_str_eq(diag.text, "/nonexistent/sbcemu.ini: cannot open: No such file or directory\n");
	cfg_diag_free(&diag);
	cfg_free(cfg);
}
END_TEST

/* cfg_set: command-line overrides go through the same setters; messages name their origin. */
START_TEST(command_line_overrides)
{
	struct cfg_diag diag = { 0 };
	struct cfg *cfg = cfg_test_parse_ok(CFG_TEST_MINIMAL, false);

	ck_assert_int_eq(cfg_set(cfg, "command line", "daemon", "listen", "[::1]:3300 127.0.0.9", &diag), 0);
	ck_assert_int_eq(cfg_set(cfg, "command line", "daemon", "log_level", "warn", &diag), 0);
	ck_assert_uint_eq(cfg->daemon.listen_count, 2);
	ck_assert_str_eq(cfg->daemon.listen[0], "[::1]:3300");
	ck_assert_str_eq(cfg->daemon.listen[1], "127.0.0.9:3260");
	ck_assert_int_eq(cfg->daemon.log_level, CFG_LOG_WARN);
	ck_assert_uint_eq(diag.count, 0);
	ck_assert_int_eq(cfg_set(cfg, "command line", "daemon", "listen", "::1", &diag), -1);
	ck_assert_int_eq(cfg_set(cfg, "command line", "daemon", "log_level", "loud", &diag), -1);
	ck_assert_int_eq(cfg_set(cfg, "command line", "daemon", "nothing", "1", &diag), -1);
	ck_assert_str_eq(diag.text,
			 "command line: daemon.listen: \"::1\": write IPv6 addresses in brackets, e.g. [::1]:3260\n"
			 "command line: daemon.log_level: \"loud\" is not one of error, warn, info or debug\n"
			 "command line: daemon.nothing: unknown key\n");
	cfg_diag_free(&diag);
	cfg_free(cfg);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("config_parse");
	TCase *tc = tcase_create("parse");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, good_file);
	tcase_add_test(tc, unknown_section);
	tcase_add_test(tc, unknown_key);
	tcase_add_test(tc, bad_values);
	tcase_add_test(tc, quoted_values_escaped);
	tcase_add_test(tc, out_of_range);
	tcase_add_test(tc, duplicate_key);
	tcase_add_test(tc, duplicate_section);
	tcase_add_test(tc, syntax_errors);
	tcase_add_test(tc, malformed_headers);
	tcase_add_test(tc, continuation_line);
	tcase_add_test(tc, long_line);
	tcase_add_test(tc, empty_sections);
	tcase_add_test(tc, long_section_names);
	tcase_add_test(tc, all_errors_reported);
	tcase_add_test(tc, missing_file);
	tcase_add_test(tc, command_line_overrides);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
