/*
 * finish.c: checks across keys and sections, derived values, and the
 * embedded default configuration.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg_test.h"

#define T "iqn.2026-12.org.example:t"

/* The embedded default (config/default.ini) parses and validates; its LUN 0 is what the README promises. */
START_TEST(embedded_default_validates)
{
	struct cfg_diag diag = { 0 };
	struct cfg *cfg = cfg_create();
	struct cfg_lun *l;

	ck_assert_int_eq(cfg_parse_string(cfg, "default", cfg_default_ini, &diag), 0);
	ck_assert_int_eq(cfg_set(cfg, "test", "daemon", "state_dir", "/srv/state", &diag), 0);
	ck_assert_int_eq(cfg_finish(cfg, &diag), 0);
	ck_assert_uint_eq(diag.count, 0);
	ck_assert_uint_eq(cfg->daemon.listen_count, 1);
	ck_assert_str_eq(cfg->daemon.listen[0], "127.0.0.1:3260");
	ck_assert_uint_eq(cfg->target_count, 1);
	ck_assert_str_eq(cfg->targets[0]->name, "iqn.2026-12.org.sbcemu:default");
	ck_assert_uint_eq(cfg->targets[0]->acl_count, 0);
	ck_assert_uint_ge(cfg->targets[0]->lun_count, 2);
	l = cfg->targets[0]->luns[0];
	ck_assert_uint_eq(l->lun, 0);
	ck_assert_int_eq(l->kind, CFG_LU_CONVENTIONAL);
	ck_assert_str_eq(l->path, "/srv/state/default-lun0.img");
	ck_assert_uint_eq(l->size, 1ull << 30);
	ck_assert_uint_eq(l->logical_block_size, 512);
	ck_assert(l->thin_provisioning);
	ck_assert_uint_eq(l->max_compare_and_write, 255);
	/* Derived serial: FNV-1a 64 of the target name then "/0", as 16 hex digits. */
	ck_assert_str_eq(l->serial, "1f270915c6238a30");
	/* LUN 1: a host-managed zoned disk, 8 zones of 256 MiB, the first conventional. */
	l = cfg->targets[0]->luns[1];
	ck_assert_uint_eq(l->lun, 1);
	ck_assert_int_eq(l->kind, CFG_LU_ZBC_HM);
	ck_assert_str_eq(l->path, "/srv/state/default-lun1-zbc.img");
	ck_assert_uint_eq(l->size, 2ull << 30);
	ck_assert_uint_eq(l->zone_size, 256ull << 20);
	ck_assert_uint_eq(l->conventional_zones, 1);
	ck_assert_uint_eq(l->max_open_zones, 16);
	ck_assert(l->urswrz);
	ck_assert(!l->thin_provisioning);
	/* LUN 6: a conglomerate, subsidiaries 1-4 from [lu "vvol"], 1 and 2 bound to every initiator. */
	l = cfg->targets[0]->luns[6];
	ck_assert_uint_eq(l->lun, 6);
	ck_assert_int_eq(l->kind, CFG_LU_CONGLOMERATE);
	ck_assert_str_eq(l->subsidiary_template, "vvol");
	ck_assert_str_eq(l->subsidiaries, "1-4");
	ck_assert_str_eq(l->bindings, "*=1-2");
	cfg_free(cfg);

	cfg = cfg_load_default(&diag);
	ck_assert_ptr_nonnull(cfg);
	ck_assert_uint_eq(diag.count, 0);
	ck_assert_int_eq(cfg->daemon.state_dir[0], '/');
	cfg_free(cfg);
}
END_TEST

START_TEST(no_target)
{
	/* Without TCMU nothing could bring a logical unit (tests/unit/config/test_cfgstring.c: with it, fine). */
	cfg_test_expect("[daemon]\nstate_dir = /srv\n[tcmu]\nenabled = no\n", true,
			"t.ini: no target is configured (add [target \"iqn...\"] and [lun \"iqn...\" 0] sections) and "
			"tcmu.enabled = no\n");
}
END_TEST

/* Initiators send REPORT LUNS to LUN 0: a target needs one. */
START_TEST(target_without_lun0)
{
	cfg_test_expect("[daemon]\nstate_dir = /srv\n[target \"" T "\"]\nalias = a\n[lun \"" T "\" 1]\npath = x\n", true,
			"t.ini:3: target \"" T "\": has no LUN 0, which initiators use to discover the others\n");
	cfg_test_expect("[daemon]\nstate_dir = /srv\n[target \"" T "\"]\nalias = a\n", true,
			"t.ini:3: target \"" T "\": has no logical unit (add a [lun \"" T "\" 0] section)\n");
}
END_TEST

START_TEST(required_key)
{
	cfg_test_expect("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\nsize = 1M\n", true,
			"t.ini:3: lun \"" T "\" 0.path: required key is missing\n");
}
END_TEST

/* RFC 7143 13.14: FirstBurstLength <= MaxBurstLength. */
START_TEST(first_burst_above_max_burst)
{
	cfg_test_expect(CFG_TEST_MINIMAL "[iscsi]\nmax_burst_length = 65536\nfirst_burst_length = 131072\n", true,
			"t.ini:7: iscsi.first_burst_length: 131072 is larger than max_burst_length (65536)\n");
}
END_TEST

START_TEST(chap_pairs)
{
	cfg_test_expect(CFG_TEST_MINIMAL "[target \"" T "\"]\nchap_user = alice\nmutual_secret = mutual-secret\n",
			true,
			"t.ini:6: target \"" T "\".chap_secret: required when chap_user is set\n"
			"t.ini:7: target \"" T "\".mutual_user: required when mutual_secret is set\n");
	cfg_test_expect(CFG_TEST_MINIMAL "[target \"" T "\"]\nmutual_user = tgt\nmutual_secret = mutual-secret\n",
			true,
			"t.ini:6: target \"" T "\".mutual_user: mutual CHAP needs one-way CHAP too "
			"(chap_user and chap_secret)\n");
	/* An ACL entry's mutual CHAP may rest on the target's one-way CHAP. */
	cfg_test_expect(CFG_TEST_MINIMAL "[target \"" T "\"]\nchap_user = a\nchap_secret = one-way-secret\n"
			"[acl \"" T "\" \"iqn.1993-08.org.debian:01:x\"]\nmutual_user = t\n"
			"mutual_secret = mutual-secret\n",
			true, "");
	/* RFC 7143 12.1.3: the two directions need different secrets, also when the ACL's rests on the target's. */
	cfg_test_expect(CFG_TEST_MINIMAL "[target \"" T "\"]\nchap_user = a\nchap_secret = same-secret-1\n"
			"mutual_user = t\nmutual_secret = same-secret-1\n",
			true,
			"t.ini:9: target \"" T "\".mutual_secret: equal to the one-way CHAP secret; the two directions "
			"need different secrets (RFC 7143 12.1.3)\n");
	cfg_test_expect(CFG_TEST_MINIMAL "[target \"" T "\"]\nchap_user = a\nchap_secret = same-secret-1\n"
			"[acl \"" T "\" \"iqn.1993-08.org.debian:01:x\"]\nmutual_user = t\n"
			"mutual_secret = same-secret-1\n",
			true,
			"t.ini:10: acl \"" T "\" \"iqn.1993-08.org.debian:01:x\".mutual_secret: equal to the one-way CHAP "
			"secret; the two directions need different secrets (RFC 7143 12.1.3)\n");
	/* Discovery CHAP ([iscsi] discovery_*): the same rules. */
	cfg_test_expect(CFG_TEST_MINIMAL "[iscsi]\ndiscovery_mutual_user = t\ndiscovery_mutual_secret = mutual-secret\n",
			true,
			"t.ini:6: iscsi.discovery_mutual_user: mutual CHAP needs one-way CHAP too "
			"(discovery_chap_user and discovery_chap_secret)\n");
	cfg_test_expect(CFG_TEST_MINIMAL "[iscsi]\ndiscovery_chap_user = a\ndiscovery_chap_secret = same-secret-1\n"
			"discovery_mutual_user = t\ndiscovery_mutual_secret = same-secret-1\n",
			true,
			"t.ini:9: iscsi.discovery_mutual_secret: equal to the one-way CHAP secret; the two directions "
			"need different secrets (RFC 7143 12.1.3)\n");
	cfg_test_expect(CFG_TEST_MINIMAL "[iscsi]\ndiscovery_chap_secret = one-way-secret\n", true,
			"t.ini:6: iscsi.discovery_chap_user: required when discovery_chap_secret is set\n");
}
END_TEST

START_TEST(lun_geometry_and_limits)
{
	cfg_test_expect("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\npath = a\nsize = 1000\n"
			"max_transfer_length = 128\noptimal_transfer_length = 256\nmax_compare_and_write = 200\n",
			true,
			"t.ini:5: lun \"" T "\" 0.size: 1000 is not a multiple of logical_block_size (512)\n"
			"t.ini:7: lun \"" T "\" 0.optimal_transfer_length: 256 is larger than max_transfer_length "
			"(128)\n"
			"t.ini:8: lun \"" T "\" 0.max_compare_and_write: 200 is larger than max_transfer_length "
			"(128)\n");
}
END_TEST

/* Zoned kinds: power-of-two zones of whole blocks; zone counts and fault lists within the LU; no thin provisioning. */
START_TEST(zoned_lun_checks)
{
	struct cfg *cfg;

	cfg_test_expect("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\npath = a\nsize = 64M\nkind = zbc-hm\n"
			"zone_size = 3M\n",
			true,
			"t.ini:7: lun \"" T "\" 0.zone_size: 3145728 bytes is not a power-of-two number of "
			"512-byte logical blocks\n");
	cfg_test_expect("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\npath = a\nsize = 64M\nkind = zbc-hm\n"
			"zone_size = 16M\nconventional_zones = 5\noffline_zones = 1, 3-4\nread_only_zones = 2-3\n"
			"thin_provisioning = true\n",
			true,
			"t.ini:11: lun \"" T "\" 0.thin_provisioning: zoned logical units do not support logical "
			"block provisioning (their zones manage their space: docs/zbc.md)\n"
			"t.ini:8: lun \"" T "\" 0.conventional_zones: 5 is more than the 4 zones of the logical "
			"unit\n"
			"t.ini:9: lun \"" T "\" 0.offline_zones: zone 4 does not exist (the logical unit has 4 zones, "
			"0..3)\n"
			"t.ini:10: lun \"" T "\" 0.read_only_zones: names a zone that offline_zones names too\n");
	cfg_test_expect("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\npath = a\nzone_size = 16M\nurswrz = false\n",
			true,
			"t.ini:5: lun \"" T "\" 0.zone_size: only zoned logical units (kind zbc-hm, zbc-ha or zbc-zd) have "
			"zones\n"
			"t.ini:6: lun \"" T "\" 0.urswrz: only zoned logical units (kind zbc-hm, zbc-ha or zbc-zd) have "
			"zones\n");
	cfg_test_expect("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\npath = a\nkind = zbc-ha\nmax_open_zones = 4\n"
			"urswrz = off\n",
			true,
			"t.ini:6: lun \"" T "\" 0.max_open_zones: only host-managed (zbc-hm) logical units limit open "
			"zones\n"
			"t.ini:7: lun \"" T "\" 0.urswrz: host-aware (zbc-ha) logical units always allow unrestricted "
			"reads\n");
	cfg_test_expect("[lun \"" T "\" 0]\noffline_zones = 3,x\nread_only_zones = 5-2\n", false,
			"t.ini:2: lun \"" T "\" 0.offline_zones: \"3,x\" is not a list of zone indexes and ranges "
			"(like \"3, 7-9\")\n"
			"t.ini:3: lun \"" T "\" 0.read_only_zones: \"5-2\": the range ends before it starts\n");
	/* Defaults: 256 MiB zones, URSWRZ on; thin provisioning quietly off for zoned kinds. */
	cfg = cfg_test_parse_ok("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\npath = a\nsize = 1G\n"
				"kind = zbc-ha\noffline_zones = 0 2\n",
				true);
	ck_assert_int_eq(cfg->targets[0]->luns[0]->kind, CFG_LU_ZBC_HA);
	ck_assert_uint_eq(cfg->targets[0]->luns[0]->zone_size, 256ull << 20);
	ck_assert(cfg->targets[0]->luns[0]->urswrz);
	ck_assert(!cfg->targets[0]->luns[0]->thin_provisioning);
	ck_assert_str_eq(cfg->targets[0]->luns[0]->offline_zones, "0 2");
	cfg_free(cfg);
}
END_TEST

/* Two logical units on one backing file would overwrite each other. */
START_TEST(shared_backing_file)
{
	cfg_test_expect("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\npath = a.img\n"
			"[lun \"iqn.2026-12.org.example:u\" 0]\npath = /srv/a.img\n",
			true,
			"t.ini:6: lun \"iqn.2026-12.org.example:u\" 0.path: /srv/a.img is already the backing file "
			"of lun \"" T "\" 0\n");
}
END_TEST

/* A relative state_dir is taken from the working directory. */
START_TEST(relative_state_dir)
{
	char cwd[1024], want[2048];
	struct cfg *cfg = cfg_test_parse_ok("[daemon]\nstate_dir = var/state\n[lun \"" T "\" 0]\npath = a.img\n",
					    true);

	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	snprintf(want, sizeof(want), "%s/var/state", cwd);
	ck_assert_str_eq(cfg->daemon.state_dir, want);
	snprintf(want, sizeof(want), "%s/var/state/a.img", cwd);
	ck_assert_str_eq(cfg->targets[0]->luns[0]->path, want);
	cfg_free(cfg);
}
END_TEST

/* Default state directory: /var/lib/sbcemu for root, else XDG_STATE_HOME, else ~/.local/state. */
START_TEST(default_state_dir)
{
	char buf[256];

	setenv("XDG_STATE_HOME", "/xdg", 1);
	setenv("HOME", "/home/u", 1);
	ck_assert_int_eq(cfg_default_state_dir(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, geteuid() == 0 ? "/var/lib/sbcemu" : "/xdg/sbcemu");
	unsetenv("XDG_STATE_HOME");
	ck_assert_int_eq(cfg_default_state_dir(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, geteuid() == 0 ? "/var/lib/sbcemu" : "/home/u/.local/state/sbcemu");
	ck_assert_int_eq(cfg_default_state_dir(buf, 4), -1);
}
END_TEST

/*
 * daemon.control_socket (docs/config.md): unset, in the runtime directory for
 * a daemon on the default state directory, else in its state directory; set,
 * relative to the state directory.
 */
START_TEST(default_control_socket)
{
	const char *lun = "[lun \"" T "\" 0]\npath = a\n";
	char text[256], want[256];
	struct cfg *cfg;

	setenv("XDG_RUNTIME_DIR", "/run/user/1000", 1);
	setenv("XDG_STATE_HOME", "/xdg", 1);
	cfg = cfg_test_parse_ok(lun, true);
	ck_assert_str_eq(cfg->daemon.control_socket,
			 geteuid() == 0 ? "/run/sbcemu/control.sock" : "/run/user/1000/sbcemu/control.sock");
	ck_assert_int_eq(cfg_default_runtime_dir(want, sizeof(want)), 0);
	ck_assert_str_eq(want, geteuid() == 0 ? "/run/sbcemu" : "/run/user/1000/sbcemu");
	cfg_free(cfg);
	snprintf(text, sizeof(text), "[daemon]\nstate_dir = /srv\n%s", lun);
	cfg = cfg_test_parse_ok(text, true);
	ck_assert_str_eq(cfg->daemon.control_socket, "/srv/control.sock");
	cfg_free(cfg);
	snprintf(text, sizeof(text), "[daemon]\ncontrol_socket = ctl.sock\n%s", lun);
	cfg = cfg_test_parse_ok(text, true);
	snprintf(want, sizeof(want), "%s/ctl.sock", geteuid() == 0 ? "/var/lib/sbcemu" : "/xdg/sbcemu");
	ck_assert_str_eq(cfg->daemon.control_socket, want);
	cfg_free(cfg);
	unsetenv("XDG_RUNTIME_DIR");
	unsetenv("XDG_STATE_HOME");
}
END_TEST

/* Protection information (docs/pi.md) and zone domains (docs/zbc.md): each error names file, line and key. */
START_TEST(pi_and_zone_domain_checks)
{
	struct cfg *cfg;

	cfg_test_expect("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\npath = a\nsize = 1M\nkind = zbc-hm\n"
			"protection_type = 1\n",
			true,
			"t.ini:7: lun \"" T "\" 0.protection_type: protection information is supported on conventional "
			"logical units only\n");
	cfg_test_expect("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\npath = a\nsize = 1M\np_i_exponent = 1\n"
			"pi_faults = guard 1\n",
			true,
			"t.ini:6: lun \"" T "\" 0.p_i_exponent: needs protection_type 1, 2 or 3\n"
			"t.ini:7: lun \"" T "\" 0.pi_faults: needs protection_type 1, 2 or 3\n");
	cfg_test_expect("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\npath = a\nsize = 1M\nprotection_type = 2\n"
			"p_i_exponent = 1\npi_faults = ref 2048\n",
			true,
			"t.ini:7: lun \"" T "\" 0.p_i_exponent: 512-byte logical blocks cannot hold 2^1 protection "
			"intervals of at least 512 bytes\n"
			"t.ini:8: lun \"" T "\" 0.pi_faults: LBA 2048 is past the last LBA 2047\n");
	/* lun.mode_defaults (config/mode.c): the field names and ranges of SPC-4 7.5.8, 7.5.12 and SBC-4 6.5.5. */
	cfg_test_expect("[lun \"" T "\" 0]\nmode_defaults = wce=2\n", false,
			"t.ini:2: lun \"" T "\" 0.mode_defaults: wce takes 0 to 1\n");
	cfg_test_expect("[lun \"" T "\" 0]\nmode_defaults = mrie=7\n", false,
			"t.ini:2: lun \"" T "\" 0.mode_defaults: mrie takes 0 to 6\n");
	cfg_test_expect("[lun \"" T "\" 0]\nmode_defaults = qerr=1\n", false,
			"t.ini:2: lun \"" T "\" 0.mode_defaults: \"qerr\" is not a mode field (wce, rcd, d_sense, swp, "
			"dexcpt, mrie; like \"wce=0 d_sense=1\")\n");
	cfg_test_expect("[lun \"" T "\" 0]\nmode_defaults = wce\n", false,
			"t.ini:2: lun \"" T "\" 0.mode_defaults: wce needs a value (wce=N)\n");
	{
		struct cfg_mode_defaults md;
		char why[200], text[CFG_MODE_DEFAULTS_TEXT_MAX];

		ck_assert_int_eq(cfg_mode_defaults_parse("mrie=6,wce=0  swp=1", &md, why, sizeof(why)), 0);
		ck_assert_uint_eq(md.set, (1u << CFG_MODE_WCE) | (1u << CFG_MODE_SWP) | (1u << CFG_MODE_MRIE));
		ck_assert_uint_eq(md.value[CFG_MODE_MRIE], 6);
		cfg_mode_defaults_format(&md, text, sizeof(text));
		ck_assert_str_eq(text, "wce=0 swp=1 mrie=6");
		ck_assert_int_eq(cfg_mode_defaults_parse("", &md, why, sizeof(why)), 0);
		ck_assert_uint_eq(md.set, 0);
	}
	cfg_test_expect("[lun \"" T "\" 0]\npi_faults = crc 5\n", false,
			"t.ini:2: lun \"" T "\" 0.pi_faults: \"crc 5\" is not a list of FIELD LBA or FIELD FIRST-LAST "
			"items, FIELD one of guard, app, ref (like \"guard 100-107, ref 2048\")\n");
	cfg_test_expect("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\npath = a\nsize = 48M\nkind = zbc-zd\n"
			"zone_size = 8M\nrealm_zones = 2\n",
			true,
			"t.ini:8: lun \"" T "\" 0.realm_zones: a zbc-zd logical unit needs whole zones (6), an even "
			"number of them besides the 0 gap zones, and 2-zone realms dividing each zone domain\n");
	cfg_test_expect("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\npath = a\nrealm_zones = 2\n", true,
			"t.ini:5: lun \"" T "\" 0.realm_zones: only zone domain logical units (kind zbc-zd) have "
			"realms\n");
	cfg_test_expect("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\npath = a\nkind = zbc-hm\nsobr_zones = yes\n",
			true,
			"t.ini:6: lun \"" T "\" 0.sobr_zones: only zone domain logical units (kind zbc-zd) have "
			"SOBR zones\n");
	cfg = cfg_test_parse_ok("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\npath = a\nsize = 64M\n"
				"kind = zbc-zd\nzone_size = 8M\nrealm_zones = 2\n",
				true);
	ck_assert_uint_eq(cfg->targets[0]->luns[0]->conventional_zones, 4);
	cfg_free(cfg);
	/* 10 zones, 2 of them gap zones: domains of 4. */
	cfg = cfg_test_parse_ok("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\npath = a\nsize = 80M\n"
				"kind = zbc-zd\nzone_size = 8M\nrealm_zones = 2\ngap_zones = 2\n",
				true);
	ck_assert_uint_eq(cfg->targets[0]->luns[0]->conventional_zones, 4);
	cfg_free(cfg);
}
END_TEST

/* Device profiles (config/profiles.c, docs/profiles.md): presets for unset keys, refusals for contradictions. */
START_TEST(profiles)
{
	struct cfg_diag diag = { 0 };
	struct cfg *cfg = cfg_create();
	const struct cfg_lun *l;

	ck_assert_int_eq(cfg_parse_string(cfg, "t.ini", CFG_TEST_MINIMAL "profile = card-reader\n"
				"[lun \"iqn.2026-12.org.example:t\" 1]\npath = b.img\nprofile = usb-bridge\n"
				"[lun \"iqn.2026-12.org.example:t\" 2]\npath = c.img\nprofile = usb-bridge\n"
				"quirks = no-vpd, fix-capacity\n"
				"[lun \"iqn.2026-12.org.example:t\" 3]\npath = d.img\nprofile = read-only\n",
				&diag), 0);
	ck_assert_int_eq(cfg_finish(cfg, &diag), 0);
	l = cfg->targets[0]->luns[0];
	ck_assert(l->removable);
	ck_assert(!l->thin_provisioning);
	ck_assert_uint_eq(l->product_type, 0x05); /* SBC-4 6.6.2: Secure Digital card */
	ck_assert_str_eq(l->product, "card reader");
	ck_assert_uint_eq(cfg->targets[0]->luns[1]->quirks, CFG_QUIRK_ALL);
	ck_assert_uint_eq(cfg->targets[0]->luns[2]->quirks, CFG_QUIRK_NO_VPD | CFG_QUIRK_FIX_CAPACITY);
	ck_assert(cfg->targets[0]->luns[3]->write_protect);
	cfg_free(cfg);
	free(diag.text);

	cfg_test_expect(CFG_TEST_MINIMAL "profile = read-only\nwrite_protect = false\n", true,
			"t.ini:6: lun \"iqn.2026-12.org.example:t\" 0.write_protect: profile read-only needs "
			"write_protect = true\n");
	cfg_test_expect(CFG_TEST_MINIMAL "profile = card-reader\nkind = zbc-hm\n", true,
			"t.ini:6: lun \"iqn.2026-12.org.example:t\" 0.kind: profile card-reader is a conventional disk "
			"(kind = conventional)\n");
	cfg_test_expect(CFG_TEST_MINIMAL "profile = sbc4-minimal\nthin_provisioning = true\n", true,
			"t.ini:6: lun \"iqn.2026-12.org.example:t\" 0.thin_provisioning: profile sbc4-minimal needs "
			"thin_provisioning = false\n");
	cfg_test_expect(CFG_TEST_MINIMAL "quirks = no-vpd, no-such\n", true,
			"t.ini:5: lun \"iqn.2026-12.org.example:t\" 0.quirks: unknown name \"no-such\" (all, none, or "
			"names listed in docs/config.md)\n");
}
END_TEST

/* Conglomerates (docs/conglomerate.md): the keys of kind conglomerate, and what they must agree on. */
START_TEST(conglomerates)
{
	struct cfg *cfg;

	cfg_test_expect("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\npath = a\n[lun \"" T "\" 5]\n"
			"kind = conglomerate\npath = b\nsubsidiaries = 1-4\nbindings = *=1; h=9\n"
			"[lun \"" T "\" 6]\nkind = conglomerate\nsubsidiary_template = nope\n"
			"[lun \"" T "\" 7]\npath = c\nsubsidiaries = 1\n"
			"[lu \"cong\"]\nkind = conglomerate\n",
			true,
			"t.ini:7: lun \"" T "\" 5.path: a conglomerate's administrative LU has no medium (its "
			"subsidiaries' files are sub<E>.img in its state directory)\n"
			"t.ini:8: lun \"" T "\" 5.subsidiaries: needs subsidiary_template (what the subsidiaries are "
			"made from)\n"
			"t.ini:9: lun \"" T "\" 5.bindings: element 9 is not in subsidiaries\n"
			"t.ini:12: lun \"" T "\" 6.subsidiary_template: no [lu \"nope\"] section\n"
			"t.ini:15: lun \"" T "\" 7.subsidiaries: only for kind conglomerate\n"
			"t.ini:17: lu \"cong\".kind: a conglomerate is served by the iSCSI front end only, not as a "
			"template or TCMU backstore\n");
	cfg_test_expect("[lun \"" T "\" 5]\nkind = conglomerate\nsubsidiaries = 0-2\nbindings = 1-2\n", false,
			"t.ini:3: lun \"" T "\" 5.subsidiaries: \"0-2\": subsidiary elements are 1..16383\n"
			"t.ini:4: lun \"" T "\" 5.bindings: \"1-2\" is not INITIATOR=LIST (like \"*=1-4\" or "
			"\"iqn.2026-12.org.example:h1=5\")\n");
	cfg = cfg_test_parse_ok("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\npath = a\n[lun \"" T "\" 5]\n"
				"kind = conglomerate\nsubsidiary_template = v\nsubsidiaries = 1-4, 9\n"
				"bindings = *=1-2; iqn.x:h1=3, 9\n[lu \"v\"]\nsize = 1M\n",
				true);
	ck_assert_int_eq(cfg->targets[0]->luns[1]->kind, CFG_LU_CONGLOMERATE);
	ck_assert_str_eq(cfg->targets[0]->luns[1]->path, "");
	ck_assert_str_eq(cfg->targets[0]->luns[1]->bindings, "*=1-2; iqn.x:h1=3, 9");
	cfg_free(cfg);
}
END_TEST

/*
 * lun.alua_peer_groups (config/alua.c): GROUP:PORT items, each 1..65535, at
 * most 8; only beside rbd_unavailable = standby; never the LU's own group,
 * never one group twice.
 */
START_TEST(alua_peer_groups)
{
#define RBD_STANDBY "backend = rbd\nrbd_image = x\nsize = 1M\nalua = both\n"
	cfg_test_expect("[lun \"" T "\" 0]\npath = a\nalua_peer_groups = 2-2\n", false,
			"t.ini:3: lun \"" T "\" 0.alua_peer_groups: \"2-2\" is not a list of GROUP:PORT (target port "
			"group and relative target port identifier, each 1..65535, like \"2:2, 3:3\")\n");
	cfg_test_expect("[lun \"" T "\" 0]\npath = a\nalua_peer_groups = 2:0\n", false,
			"t.ini:3: lun \"" T "\" 0.alua_peer_groups: \"2:0\" is not a list of GROUP:PORT (target port "
			"group and relative target port identifier, each 1..65535, like \"2:2, 3:3\")\n");
	cfg_test_expect("[lun \"" T "\" 0]\npath = a\nalua_peer_groups = 2:2 3:3 4:4 5:5 6:6 7:7 8:8 9:9 10:10\n",
			false, "t.ini:3: lun \"" T "\" 0.alua_peer_groups: at most 8 other target port groups\n");
	cfg_test_expect("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\npath = a\nalua_peer_groups = 2:2\n", true,
			"t.ini:5: lun \"" T "\" 0.alua_peer_groups: only with rbd_unavailable = standby (the other "
			"groups are the nodes that wait for the image while one holds it)\n");
	cfg_test_expect("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\n" RBD_STANDBY "rbd_unavailable = standby\n"
			"target_port_group = 2\nalua_peer_groups = 1:1, 2:2\n",
			true, "t.ini:10: lun \"" T "\" 0.alua_peer_groups: group 2 is this LU's own target_port_group\n");
	cfg_test_expect("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\n" RBD_STANDBY "rbd_unavailable = standby\n"
			"alua_peer_groups = 3:1,3:2\n",
			true, "t.ini:9: lun \"" T "\" 0.alua_peer_groups: group 3 is named twice\n");
	cfg_test_expect("[daemon]\nstate_dir = /srv\n[lun \"" T "\" 0]\n" RBD_STANDBY "rbd_unavailable = standby\n"
			"alua_peer_groups = 2:2, 3:3\n",
			true, "");
#undef RBD_STANDBY
}
END_TEST

int main(void)
{
	Suite *s = suite_create("config_finish");
	TCase *tc = tcase_create("finish");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, embedded_default_validates);
	tcase_add_test(tc, pi_and_zone_domain_checks);
	tcase_add_test(tc, no_target);
	tcase_add_test(tc, target_without_lun0);
	tcase_add_test(tc, required_key);
	tcase_add_test(tc, first_burst_above_max_burst);
	tcase_add_test(tc, chap_pairs);
	tcase_add_test(tc, lun_geometry_and_limits);
	tcase_add_test(tc, zoned_lun_checks);
	tcase_add_test(tc, shared_backing_file);
	tcase_add_test(tc, relative_state_dir);
	tcase_add_test(tc, default_state_dir);
	tcase_add_test(tc, default_control_socket);
	tcase_add_test(tc, profiles);
	tcase_add_test(tc, conglomerates);
	tcase_add_test(tc, alua_peer_groups);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
