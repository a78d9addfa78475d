/*
 * write.c: a configuration written back (sbcemuctl save, docs/control.md)
 * parses to the same configuration: written again it gives the same text,
 * and the keys set at run time (cfg_set, as sbcemuctl lu resize does) are in it.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_test.h"

#define T "iqn.2026-12.org.example:t"

static const char rich[] =
	"[daemon]\n"
	"listen = 127.0.0.1:3261, [::1]:3262\n"
	"log_level = debug\n"
	"max_buffer_bytes = 64M\n"
	"[iscsi]\n"
	"max_burst_length = 65536\n"
	"first_burst_length = 65536\n"
	"immediate_data = false\n"
	"discovery_chap_user = disc\n"
	"discovery_chap_secret = discoverysecret1\n"
	"[tcmu]\n"
	"enabled = no\n"
	"[lu \"small\"]\n"
	"size = 16M\n"
	"kind = zbc-hm\n"
	"zone_size = 4M\n"
	"[target \"" T "\"]\n"
	"alias = the alias\n"
	"chap_user = user1\n"
	"chap_secret = targetsecret12\n"
	"[acl \"" T "\" \"iqn.2026-12.org.example:host\"]\n"
	"chap_user = hostuser\n"
	"chap_secret = hostsecret123\n"
	"[lun \"" T "\" 0]\n"
	"path = /srv/a.img\n"
	"size = 1G\n"
	"logical_block_size = 4096\n"
	"naa = 6001405123456789\n"
	"product = my disk\n"
	"thin_provisioning = false\n"
	"protection_type = 1\n"
	"p_i_exponent = 1\n"
	"pi_faults = guard 100-107, ref 2048\n"
	"mode_defaults = wce=0, d_sense=1 mrie=4\n"
	"max_atomic_transfer_length = 64\n"
	"atomic_tear_write = 3\n"
	"atomic_tear_block = 2\n"
	"[lun \"" T "\" 1]\n"
	"path = /srv/z.img\n"
	"size = 256M\n"
	"kind = zbc-hm\n"
	"zone_size = 16M\n"
	"offline_zones = 3, 7-9\n"
	"read_only_zones = 4\n"
	"[lun \"" T "\" 2]\n"
	"path = /srv/u.img\n"
	"size = 16M\n"
	"profile = usb-bridge\n"
	"quirks = no-vpd, no-sync-cache\n"
	"[lun \"" T "\" 3]\n"
	"path = /srv/c.img\n"
	"size = 16M\n"
	"profile = card-reader\n"
	"product_type = sd\n";

/* Parses text (state_dir /srv) and finishes it; fails the test on any message. */
static struct cfg *load(const char *text)
{
	struct cfg_diag diag = { 0 };
	struct cfg *cfg = cfg_create();

	ck_assert_ptr_nonnull(cfg);
	ck_assert_msg(cfg_parse_string(cfg, "t.ini", text, &diag) == 0, "%s", diag.text ? diag.text : "");
	ck_assert_int_eq(cfg_set(cfg, "test", "daemon", "state_dir", "/srv", &diag), 0);
	ck_assert_msg(cfg_finish(cfg, &diag) == 0, "%s", diag.text ? diag.text : "");
	cfg_diag_free(&diag);
	return cfg;
}

/* cfg_write() into a malloc'd string. */
static char *written(const struct cfg *cfg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(cfg_write(cfg, f), 0);
	fclose(f);
	return buf;
}

static void round_trip(const char *text)
{
	struct cfg *a = load(text), *b;
	char *first = written(a), *second;

	b = load(first);
	second = written(b);
	ck_assert_str_eq(first, second);
	ck_assert_uint_eq(a->target_count, b->target_count);
	for (size_t t = 0; t < a->target_count; t++) {
		ck_assert_uint_eq(a->targets[t]->lun_count, b->targets[t]->lun_count);
		ck_assert_uint_eq(a->targets[t]->acl_count, b->targets[t]->acl_count);
		for (size_t l = 0; l < a->targets[t]->lun_count; l++) {
			const struct cfg_lun *x = a->targets[t]->luns[l], *y = b->targets[t]->luns[l];

			ck_assert_str_eq(x->path, y->path);
			ck_assert_uint_eq(x->size, y->size);
			ck_assert_int_eq(x->kind, y->kind);
			ck_assert_uint_eq(x->naa, y->naa);
			ck_assert_str_eq(x->serial, y->serial);
			ck_assert_uint_eq(x->quirks, y->quirks);
			ck_assert_int_eq(x->profile, y->profile);
			ck_assert_int_eq(x->removable, y->removable);
			ck_assert_str_eq(x->pi_faults, y->pi_faults);
			ck_assert_str_eq(x->mode_defaults, y->mode_defaults);
			ck_assert_str_eq(x->offline_zones, y->offline_zones);
		}
	}
	ck_assert_uint_eq(a->daemon.listen_count, b->daemon.listen_count);
	ck_assert_uint_eq(a->template_count, b->template_count);
	free(first);
	free(second);
	cfg_free(a);
	cfg_free(b);
}

START_TEST(rich_configuration_round_trips)
{
	struct cfg *cfg = load(rich);
	char *text = written(cfg);

	ck_assert_ptr_nonnull(strstr(text, "listen = 127.0.0.1:3261, [::1]:3262\n"));
	ck_assert_ptr_nonnull(strstr(text, "naa = 6001405123456789\n"));
	ck_assert_ptr_nonnull(strstr(text, "quirks = no-vpd, no-sync-cache\n"));
	ck_assert_ptr_nonnull(strstr(text, "[acl \"" T "\" \"iqn.2026-12.org.example:host\"]\n"));
	ck_assert_ptr_nonnull(strstr(text, "[lu \"small\"]\n"));
	ck_assert_ptr_nonnull(strstr(text, "product_type = sd\n"));
	/* Presets of a profile are not written: the profile sets them again. */
	ck_assert_ptr_null(strstr(text, "removable ="));
	free(text);
	cfg_free(cfg);
	round_trip(rich);
}
END_TEST

START_TEST(embedded_default_round_trips)
{
	round_trip(cfg_default_ini);
}
END_TEST

/* A resize and write protection at run time (sbcemuctl lu resize, lu write-protect) are saved. */
START_TEST(run_time_changes_are_written)
{
	struct cfg *cfg = load(rich), *back;
	struct cfg_diag diag = { 0 };
	char *text;

	ck_assert_int_eq(cfg_set(cfg, "sbcemuctl", "lun \"" T "\" 2", "size", "33554432", &diag), 0);
	ck_assert_int_eq(cfg_set(cfg, "sbcemuctl", "lun \"" T "\" 2", "write_protect", "true", &diag), 0);
	text = written(cfg);
	back = load(text);
	ck_assert_uint_eq(back->targets[0]->luns[2]->size, 32ull << 20);
	ck_assert(back->targets[0]->luns[2]->write_protect);
	free(text);
	cfg_free(back);
	cfg_free(cfg);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("write");
	TCase *tc = tcase_create("write");

	tcase_add_test(tc, rich_configuration_round_trips);
	tcase_add_test(tc, embedded_default_round_trips);
	tcase_add_test(tc, run_time_changes_are_written);
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
