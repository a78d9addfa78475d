/*
 * cfgstring.c: TCMU cfgstrings become logical units through the same schema
 * and checks as [lun] sections, with the same reasons; what LIO would
 * change on the way (commas, colons, white space, more than 255 bytes) is
 * refused.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_test.h"

static struct cfg *base(const char *extra)
{
	char text[2048];

	snprintf(text, sizeof(text), CFG_TEST_MINIMAL "%s", extra ? extra : "");
	return cfg_test_parse_ok(text, true);
}

/* Returns the messages of a refused cfgstring (asserting it is refused). */
static char *refused(const struct cfg *cfg, const char *name, const char *cfgstring, uint64_t dev_size)
{
	struct cfg_diag diag = { 0 };
	struct cfg_lun l;
	char *text;

	ck_assert_int_eq(cfg_lun_from_cfgstring(cfg, name, cfgstring, dev_size, &l, &diag), -1);
	text = strdup(diag.text ? diag.text : "");
	cfg_diag_free(&diag);
	return text;
}

static void expect_refused(const struct cfg *cfg, const char *cfgstring, uint64_t dev_size, const char *expected)
{
	char *text = refused(cfg, "d0", cfgstring, dev_size);

	ck_assert_str_eq(text, expected);
	free(text);
}

START_TEST(zoned_lu_from_cfgstring)
{
	struct cfg *cfg = base(NULL);
	struct cfg_diag diag = { 0 };
	struct cfg_lun l, again;

	ck_assert_int_eq(cfg_lun_from_cfgstring(cfg, "zbc0", "kind=zbc-hm;zone_size=256M;path=zbc0.img", 2ull << 30,
						&l, &diag),
			 0);
	ck_assert_uint_eq(diag.count, 0);
	ck_assert_int_eq(l.kind, CFG_LU_ZBC_HM);
	ck_assert_uint_eq(l.zone_size, 256ull << 20);
	ck_assert_uint_eq(l.size, 2ull << 30); /* the backstore's size in LIO */
	ck_assert_str_eq(l.path, "/srv/sbcemu/zbc0.img");
	ck_assert_uint_eq(l.logical_block_size, 512); /* the [lun] default */
	ck_assert(!l.thin_provisioning);              /* zoned: as for a [lun] section */
	ck_assert_uint_eq(strlen(l.serial), 16);
	/* The serial number is stable: derived from the backstore's name. */
	ck_assert_int_eq(cfg_lun_from_cfgstring(cfg, "zbc0", "path=/var/tmp/x.img;kind=zbc-hm", 1ull << 30, &again,
						&diag),
			 0);
	ck_assert_str_eq(again.serial, l.serial);
	ck_assert_str_eq(again.path, "/var/tmp/x.img");
	ck_assert_uint_eq(again.zone_size, 256ull << 20); /* the [lun] default zone size */
	cfg_free(cfg);
}
END_TEST

/* The reasons are those of the file: the same value in a [lun] section gives the same text after "key: ". */
START_TEST(same_reasons_as_the_file)
{
	struct cfg *cfg = base(NULL);
	char *file = cfg_test_messages(CFG_TEST_MINIMAL "kind = zbc-hm\nzone_size = 100\nsize = 1G\n", true);

	ck_assert_str_eq(file, "t.ini:6: lun \"iqn.2026-12.org.example:t\" 0.zone_size: 100 bytes is not a "
			       "power-of-two number of 512-byte logical blocks\n");
	expect_refused(cfg, "kind=zbc-hm;zone_size=100;path=a.img", 1ull << 30,
		       "cfgstring of d0: zone_size: 100 bytes is not a power-of-two number of 512-byte logical "
		       "blocks\n");
	free(file);
	expect_refused(cfg, "path=a.img;logical_block_size=1024", 0,
		       "cfgstring of d0: logical_block_size: \"1024\" is not one of 512 or 4096\n");
	expect_refused(cfg, "path=a.img;max_atomic_transfer_length=64;kind=zbc-hm", 1ull << 30,
		       "cfgstring of d0: max_atomic_transfer_length: WRITE ATOMIC is not supported on zbc-hm LUs\n");
	cfg_free(cfg);
}
END_TEST

/* What TCMU cannot carry is refused, not pretended: protection information has no place in the ring. */
START_TEST(no_protection_information_over_tcmu)
{
	struct cfg *cfg = base(NULL);

	expect_refused(cfg, "path=a.img;protection_type=1", 1ull << 30,
		       "cfgstring of d0: protection_type: protection information does not reach a TCMU handler (LIO "
		       "passes none through the ring); serve this LU over iSCSI\n");
	cfg_free(cfg);
}
END_TEST

START_TEST(grammar_errors)
{
	struct cfg *cfg = base(NULL);
	char big[400];

	expect_refused(cfg, "colour=blue;path=a.img", 0,
		       "cfgstring of d0: colour: unknown key (the keys of [lun] sections, or lu=NAME first)\n");
	expect_refused(cfg, "path=a.img;kind", 0, "cfgstring of d0: expected key=value pairs separated by ';'\n");
	expect_refused(cfg, "path=a.img;path=b.img", 0, "cfgstring of d0: path: set twice\n");
	expect_refused(cfg, "kind=zbc-hm", 1ull << 30, "cfgstring of d0: path: required key is missing\n");
	expect_refused(cfg, "path=a.img;size=1G", 2ull << 30,
		       "cfgstring of d0: size: 1073741824 differs from the backstore's size in LIO (2147483648 "
		       "bytes)\n");
	memset(big, 'a', sizeof(big));
	memcpy(big, "path=", 5);
	big[sizeof(big) - 1] = '\0';
	expect_refused(cfg, big, 0,
		       "cfgstring of d0: longer than the kernel's 255 bytes (put the keys in an [lu \"NAME\"] "
		       "template and write lu=NAME)\n");
	cfg_free(cfg);
}
END_TEST

/* What LIO would change: the kernel cuts at ',', rtslib refuses ':', saveconfig keeps what precedes a space. */
START_TEST(what_lio_would_change_is_refused)
{
	struct cfg *cfg = base(NULL);

	expect_refused(cfg, "path=a.img;kind=zbc-hm;offline_zones=3,5", 1ull << 30,
		       "cfgstring of d0: has a ',' (LIO cuts the device's control string at commas; use an [lu "
		       "\"NAME\"] template for lists)\n");
	expect_refused(cfg, "path=c:a.img", 0,
		       "cfgstring of d0: has a ':' (rtslib refuses it in a user backstore's config)\n");
	expect_refused(cfg, "path=a.img; kind=zbc-hm", 0,
		       "cfgstring of d0: has white space (saveconfig would keep only what precedes it)\n");
	cfg_free(cfg);
}
END_TEST

START_TEST(templates)
{
	struct cfg *cfg = base("[lu \"hm\"]\nkind = zbc-hm\nzone_size = 64M\noffline_zones = 3, 5\n"
			       "logical_block_size = 4096\n");
	struct cfg_diag diag = { 0 };
	struct cfg_lun l;

	ck_assert_uint_eq(cfg->template_count, 1);
	ck_assert_int_eq(cfg_lun_from_cfgstring(cfg, "z", "lu=hm;path=z.img;max_open_zones=4", 1ull << 30, &l, &diag),
			 0);
	ck_assert_int_eq(l.kind, CFG_LU_ZBC_HM);
	ck_assert_uint_eq(l.zone_size, 64ull << 20);
	ck_assert_str_eq(l.offline_zones, "3, 5");
	ck_assert_uint_eq(l.logical_block_size, 4096);
	ck_assert_uint_eq(l.max_open_zones, 4);
	ck_assert_str_eq(l.template_name, "");
	/* A cfgstring key overrides the template's once. */
	ck_assert_int_eq(cfg_lun_from_cfgstring(cfg, "z", "lu=hm;path=z.img;zone_size=128M", 1ull << 30, &l, &diag),
			 0);
	ck_assert_uint_eq(l.zone_size, 128ull << 20);
	expect_refused(cfg, "path=z.img;lu=hm", 0, "cfgstring of d0: lu: must come first (the other keys override it)\n");
	expect_refused(cfg, "lu=nope;path=z.img", 0, "cfgstring of d0: lu: no [lu \"NAME\"] template of that name\n");
	/* Zone 5 of a 16-zone LU is fine; the same template on a 4-zone LU is checked as a whole. */
	expect_refused(cfg, "lu=hm;path=z.img", 256ull << 20,
		       "cfgstring of d0: offline_zones: zone 5 does not exist (the logical unit has 4 zones, 0..3)\n");
	cfg_free(cfg);
}
END_TEST

/* Templates are checked when the file is: a bad combination names the file, the line and the template. */
START_TEST(templates_checked_with_the_file)
{
	cfg_test_expect(CFG_TEST_MINIMAL "[lu \"t1\"]\nkind = zbc-ha\nmax_open_zones = 3\n", true,
			"t.ini:7: lu \"t1\".max_open_zones: only host-managed (zbc-hm) logical units limit open zones\n");
	cfg_test_expect(CFG_TEST_MINIMAL "[lu \"no good\"]\nkind = zbc-ha\n", true,
			"t.ini:5: lu \"no good\": a template name is 1..63 letters, digits, '.', '_' or '-'\n");
	cfg_test_expect(CFG_TEST_MINIMAL "[lu \"t2\"]\ncolour = red\n", true, "t.ini:6: lu \"t2\".colour: unknown key\n");
	/* A template needs no path: each backstore brings its own. */
	cfg_test_expect(CFG_TEST_MINIMAL "[lu \"t3\"]\nkind = zbc-hm\n", true, "");
}
END_TEST

/* [tcmu] enabled: auto, yes or no; with it on, no iSCSI target is needed. */
START_TEST(tcmu_section)
{
	struct cfg *cfg = cfg_test_parse_ok("[daemon]\nstate_dir = /srv/x\n[tcmu]\nenabled = yes\n", true);

	ck_assert_int_eq(cfg->tcmu.enabled, CFG_TCMU_YES);
	ck_assert_uint_eq(cfg->target_count, 0);
	cfg_free(cfg);
	cfg = cfg_test_parse_ok("[daemon]\nstate_dir = /srv/x\n", true);
	ck_assert_int_eq(cfg->tcmu.enabled, CFG_TCMU_AUTO);
	cfg_free(cfg);
	cfg_test_expect("[daemon]\nstate_dir = /srv/x\n[tcmu]\nenabled = no\n", true,
			"t.ini: no target is configured (add [target \"iqn...\"] and [lun \"iqn...\" 0] sections) and "
			"tcmu.enabled = no\n");
	cfg_test_expect("[daemon]\nstate_dir = /srv/x\n[tcmu]\nenabled = maybe\n", false,
			"t.ini:4: tcmu.enabled: \"maybe\" is not one of auto, yes or no\n");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("cfgstring");
	TCase *tc = tcase_create("cfgstring");

	tcase_add_test(tc, zoned_lu_from_cfgstring);
	tcase_add_test(tc, same_reasons_as_the_file);
	tcase_add_test(tc, grammar_errors);
	tcase_add_test(tc, no_protection_information_over_tcmu);
	tcase_add_test(tc, what_lio_would_change_is_refused);
	tcase_add_test(tc, templates);
	tcase_add_test(tc, templates_checked_with_the_file);
	tcase_add_test(tc, tcmu_section);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
