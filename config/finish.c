/*
 * Checks that span keys or sections (required keys, key pairs, LUN 0, one
 * backing file per LU), and the values derived once everything is known:
 * the state directory, absolute backing paths, serial numbers.
 */
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "config_internal.h"

struct finish {
	struct cfg *cfg;
	struct cfg_diag *diag;
	unsigned before;
};

static void fail(struct finish *f, unsigned line, const char *section, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void fail(struct finish *f, unsigned line, const char *section, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cfg_vreport(f->diag, f->cfg->source, line, section, key, fmt, ap);
	va_end(ap);
}

void cfg_lun_fail(const struct cfg_lun_check *c, const struct cfg_lun *l, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cfg_vreport(c->diag, c->source, cfg_key_line(&l->lines, CFG_SECTION_LUN, key), c->section, key, fmt, ap);
	va_end(ap);
}

unsigned cfg_key_line(const struct cfg_key_lines *lines, enum cfg_section_kind kind, const char *name)
{
	unsigned index;

	if (cfg_schema_find(kind, name, &index) && cfg_key_was_set(lines, index) && lines->key[index])
		return lines->key[index];
	return lines->section;
}

static void check_required(struct finish *f, enum cfg_section_kind kind, const struct cfg_key_lines *lines,
			   const char *section)
{
	for (size_t i = 0; i < cfg_schema_len; i++) {
		const struct cfg_key *key = &cfg_schema[i];

		if (key->section == kind && !key->default_value && !cfg_key_was_set(lines, cfg_schema_index(key)))
			fail(f, lines->section, section, key->name, "required key is missing");
	}
}

/* The keys of one CHAP configuration: "chap_user" ... or "discovery_chap_user" ... (prefix). */
struct chap_keys {
	const char *prefix;
	const char *user, *secret, *mutual_user, *mutual_secret;
	const char *one_way_elsewhere; /* the one-way secret this section falls back on ("": none) */
};

/*
 * RFC 7143 12.1.3: CHAP needs a name and a secret; mutual CHAP only makes
 * sense on top of one-way CHAP, and "the same CHAP secret SHOULD NOT be
 * configured for authentication of multiple initiators or multiple
 * targets": the target's secret (mutual) must differ from the initiator's.
 */
static void check_chap(struct finish *f, enum cfg_section_kind kind, const struct cfg_key_lines *lines,
		       const char *section, const struct chap_keys *k)
{
	char user[64], secret[64], muser[64], msecret[64];
	const char *one_way = k->secret[0] ? k->secret : k->one_way_elsewhere;

	snprintf(user, sizeof(user), "%schap_user", k->prefix);
	snprintf(secret, sizeof(secret), "%schap_secret", k->prefix);
	snprintf(muser, sizeof(muser), "%smutual_user", k->prefix);
	snprintf(msecret, sizeof(msecret), "%smutual_secret", k->prefix);
	if (!!k->user[0] != !!k->secret[0]) {
		const char *missing = k->user[0] ? secret : user;
		const char *present = k->user[0] ? user : secret;

		fail(f, cfg_key_line(lines, kind, present), section, missing, "required when %s is set", present);
	}
	if (!!k->mutual_user[0] != !!k->mutual_secret[0]) {
		const char *missing = k->mutual_user[0] ? msecret : muser;
		const char *present = k->mutual_user[0] ? muser : msecret;

		fail(f, cfg_key_line(lines, kind, present), section, missing, "required when %s is set", present);
	}
	if (k->mutual_user[0] && !k->user[0] && !k->one_way_elsewhere[0])
		fail(f, cfg_key_line(lines, kind, muser), section, muser, "mutual CHAP needs one-way CHAP too (%s and %s)",
		     user, secret);
	if (k->mutual_secret[0] && one_way[0] && strcmp(k->mutual_secret, one_way) == 0)
		fail(f, cfg_key_line(lines, kind, msecret), section, msecret,
		     "equal to the one-way CHAP secret; the two directions need different secrets (RFC 7143 12.1.3)");
}

static void check_iscsi(struct finish *f)
{
	const struct cfg_iscsi *i = &f->cfg->iscsi;

	check_chap(f, CFG_SECTION_ISCSI, &i->lines, "iscsi",
		   &(struct chap_keys){ "discovery_", i->discovery_chap_user, i->discovery_chap_secret,
					i->discovery_mutual_user, i->discovery_mutual_secret, "" });
	/* RFC 7143 13.14: FirstBurstLength must not exceed MaxBurstLength. */
	if (i->first_burst_length > i->max_burst_length)
		fail(f, cfg_key_line(&i->lines, CFG_SECTION_ISCSI, "first_burst_length"), "iscsi", "first_burst_length",
		     "%u is larger than max_burst_length (%u)", i->first_burst_length, i->max_burst_length);
}

/* Makes a relative path absolute by prefixing base.  Returns -1 when the result does not fit. */
static int resolve_path(const char *base, char *path, size_t size)
{
	char joined[CFG_PATH_MAX];

	if (path[0] == '/')
		return 0;
	if ((size_t)snprintf(joined, sizeof(joined), "%s/%s", base, path) >= sizeof(joined) ||
	    strlen(joined) >= size)
		return -1;
	snprintf(path, size, "%s", joined);
	return 0;
}

/* 64-bit FNV-1a: a stable serial number from the target name and LUN. */
static uint64_t fnv1a(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

bool cfg_lun_key_set(const struct cfg_lun *l, const char *name)
{
	unsigned index;

	return cfg_schema_find(CFG_SECTION_LUN, name, &index) && cfg_key_was_set(&l->lines, index);
}

struct zone_list_check {
	uint64_t nr_zones;      /* 0: unknown (size 0 = the existing file's) */
	uint8_t *seen;          /* one byte per zone when nr_zones is known */
	uint8_t mark;
	uint32_t bad_index;
	bool overlap;
};

static int check_zone_range(void *arg, uint32_t first, uint32_t last)
{
	struct zone_list_check *c = arg;

	if (!c->nr_zones)
		return 0;
	for (uint64_t i = first; i <= last && i < c->nr_zones && c->seen; i++) {
		if (c->seen[i] && c->seen[i] != c->mark)
			c->overlap = true;
		c->seen[i] = c->mark;
	}
	if (last >= c->nr_zones) {
		c->bad_index = last;
		return 1;
	}
	return 0;
}

/* WRITE ATOMIC limits (docs/atomic.md): consistent with each other and with max_transfer_length. */
static void finish_atomic_lun(const struct cfg_lun_check *c, const struct cfg_lun *l)
{
	static const char *const keys[] = { "max_atomic_transfer_length", "max_atomic_transfer_length_with_boundary" };
	const uint32_t lengths[] = { l->max_atomic_transfer_length, l->max_atomic_transfer_length_with_boundary };
	uint32_t gran = l->atomic_transfer_length_granularity;

	for (unsigned i = 0; i < 2; i++) {
		if (lengths[i] && l->kind != CFG_LU_CONVENTIONAL)
			cfg_lun_fail(c, l, keys[i], "WRITE ATOMIC is not supported on %s LUs",
				     cfg_lu_kind_name(l->kind));
		else if (l->max_transfer_length && lengths[i] > l->max_transfer_length)
			cfg_lun_fail(c, l, keys[i], "%u is larger than max_transfer_length (%u)", lengths[i],
				     l->max_transfer_length);
		else if (gran && lengths[i] % gran)
			cfg_lun_fail(c, l, keys[i], "%u is not a multiple of atomic_transfer_length_granularity (%u)",
				     lengths[i], gran);
	}
	if (l->write_scattered && l->kind != CFG_LU_CONVENTIONAL)
		cfg_lun_fail(c, l, "write_scattered", "WRITE SCATTERED is not supported on %s LUs",
			     cfg_lu_kind_name(l->kind));
	if (l->max_atomic_transfer_length_with_boundary && !l->max_atomic_boundary_size)
		cfg_lun_fail(c, l, "max_atomic_boundary_size",
			     "must be set when max_atomic_transfer_length_with_boundary is");
}

/*
 * The keys a LU's kind does not have: zone domain keys (but on zbc-zd), zone
 * keys (but on zoned kinds).  Returns whether the kind is zoned.
 */
static bool check_zone_keys(const struct cfg_lun_check *chk, const struct cfg_lun *l)
{
	static const char *const zone_keys[] = { "zone_size", "conventional_zones", "max_open_zones", "urswrz",
						 "offline_zones", "read_only_zones" };

	if (l->kind != CFG_LU_ZBC_ZD) {
		static const char *const zd_keys[] = { "realm_zones", "active_domain", "gap_zones", "sobr_zones" };
		static const char *const zd_what[] = { "realms", "realms", "gap zones", "SOBR zones" };
		for (size_t i = 0; i < sizeof(zd_keys) / sizeof(zd_keys[0]); i++)
			if (cfg_lun_key_set(l, zd_keys[i]))
				cfg_lun_fail(chk, l, zd_keys[i],
					     "only zone domain logical units (kind zbc-zd) have %s", zd_what[i]);
	} else if (cfg_lun_key_set(l, "conventional_zones")) {
		cfg_lun_fail(chk, l, "conventional_zones",
			     "a zbc-zd logical unit's conventional zones are its first zone domain, half of its zones");
	}
	if (l->kind == CFG_LU_ZBC_HM || l->kind == CFG_LU_ZBC_HA || l->kind == CFG_LU_ZBC_ZD)
		return true;
	for (size_t i = 0; i < sizeof(zone_keys) / sizeof(zone_keys[0]); i++)
		if (cfg_lun_key_set(l, zone_keys[i]))
			cfg_lun_fail(chk, l, zone_keys[i],
				     "only zoned logical units (kind zbc-hm, zbc-ha or zbc-zd) have zones");
	return false;
}

/* offline_zones and read_only_zones: zones that exist (0 .. nr_zones - 1), none in both lists. */
static void check_zone_lists(const struct cfg_lun_check *chk, const struct cfg_lun *l, uint64_t nr_zones)
{
	struct zone_list_check c = { .nr_zones = nr_zones };
	char why[256];

	c.seen = c.nr_zones <= (1u << 24) ? calloc(c.nr_zones, 1) : NULL;
	for (unsigned k = 0; k < 2; k++) {
		const char *key = k ? "read_only_zones" : "offline_zones";
		const char *list = k ? l->read_only_zones : l->offline_zones;

		c.mark = (uint8_t)(k + 1);
		c.overlap = false;
		if (cfg_zone_list_walk(list, check_zone_range, &c, why, sizeof(why)) == 1)
			cfg_lun_fail(chk, l, key,
				     "zone %u does not exist (the logical unit has %llu zones, 0..%llu)", c.bad_index,
				     (unsigned long long)c.nr_zones, (unsigned long long)c.nr_zones - 1);
		else if (c.overlap)
			cfg_lun_fail(chk, l, key, "names a zone that offline_zones names too");
	}
	free(c.seen);
}

/*
 * Zoned kinds (docs/zbc.md): a power-of-two zone of whole logical blocks,
 * conventional zones and fault lists within the zone count (when the size
 * is configured), no thin provisioning.  Other kinds: no zone keys.
 */
static void finish_zoned_lun(const struct cfg_lun_check *chk, struct cfg_lun *l)
{
	uint64_t zone_blocks = l->zone_size / l->logical_block_size;
	uint64_t nr_zones;

	if (!check_zone_keys(chk, l))
		return;
	/* Host-aware zones are sequential write preferred: no open zone resources, no read restrictions. */
	if (l->kind == CFG_LU_ZBC_HA && l->max_open_zones)
		cfg_lun_fail(chk, l, "max_open_zones", "only host-managed (zbc-hm) logical units limit open zones");
	if (l->kind == CFG_LU_ZBC_HA && !l->urswrz)
		cfg_lun_fail(chk, l, "urswrz", "host-aware (zbc-ha) logical units always allow unrestricted reads");
	/* The zone engine does not model deallocated blocks below a write pointer. */
	if (l->thin_provisioning && cfg_lun_key_set(l, "thin_provisioning"))
		cfg_lun_fail(chk, l, "thin_provisioning",
			     "zoned logical units do not support logical block provisioning (their zones manage "
			     "their space: docs/zbc.md)");
	l->thin_provisioning = false;
	/* ZBC and Linux sd_zbc: zones of one power-of-two size (but the last). */
	if (l->zone_size % l->logical_block_size || zone_blocks == 0 || (zone_blocks & (zone_blocks - 1))) {
		cfg_lun_fail(chk, l, "zone_size", "%llu bytes is not a power-of-two number of %u-byte logical blocks",
			     (unsigned long long)l->zone_size, l->logical_block_size);
		return;
	}
	if (l->size == 0 || l->size % l->logical_block_size)
		return; /* the daemon checks against the existing file's size */
	nr_zones = (l->size / l->logical_block_size + zone_blocks - 1) / zone_blocks;
	if (l->kind == CFG_LU_ZBC_ZD) {
		uint64_t domain = nr_zones > l->gap_zones ? (nr_zones - l->gap_zones) / 2 : 0;

		if ((l->size / l->logical_block_size) % zone_blocks || nr_zones <= l->gap_zones ||
		    (nr_zones - l->gap_zones) % 2 || domain % l->realm_zones)
			cfg_lun_fail(chk, l, "realm_zones",
				     "a zbc-zd logical unit needs whole zones (%llu), an even number of them besides "
				     "the %u gap zones, and %u-zone realms dividing each zone domain",
				     (unsigned long long)nr_zones, l->gap_zones, l->realm_zones);
		l->conventional_zones = (uint32_t)domain;
	}
	if (l->conventional_zones > nr_zones)
		cfg_lun_fail(chk, l, "conventional_zones", "%u is more than the %llu zones of the logical unit",
			     l->conventional_zones, (unsigned long long)nr_zones);
	check_zone_lists(chk, l, nr_zones);
}

struct pi_fault_check {
	uint64_t num_blocks; /* 0: not known before the backing file is opened */
	uint64_t bad_lba;
};

static int check_pi_fault(void *arg, enum cfg_pi_field field, uint64_t first, uint64_t last)
{
	struct pi_fault_check *c = arg;

	(void)field;
	(void)first;
	if (c->num_blocks && last >= c->num_blocks) {
		c->bad_lba = last;
		return 1;
	}
	return 0;
}

/* Protection information (docs/pi.md). */
static void finish_pi_lun(const struct cfg_lun_check *chk, const struct cfg_lun *l)
{
	struct pi_fault_check c = { 0 };
	char why[256];

	if (l->protection_type == 0) {
		static const char *const keys[] = { "p_i_exponent", "pi_faults" };
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (cfg_lun_key_set(l, keys[i]))
				cfg_lun_fail(chk, l, keys[i], "needs protection_type 1, 2 or 3");
		return;
	}
	if (l->kind != CFG_LU_CONVENTIONAL) {
		cfg_lun_fail(chk, l, "protection_type",
			     "protection information is supported on conventional logical units only");
		return;
	}
	/* A protection interval holds at least 512 bytes of data (SBC-4 4.22.2: 2^n intervals per block). */
	if ((l->logical_block_size >> l->p_i_exponent) < 512)
		cfg_lun_fail(chk, l, "p_i_exponent",
			     "%u-byte logical blocks cannot hold 2^%u protection intervals of at least 512 bytes",
			     l->logical_block_size, l->p_i_exponent);
	if (l->size % l->logical_block_size == 0)
		c.num_blocks = l->size / l->logical_block_size;
	if (cfg_pi_fault_walk(l->pi_faults, check_pi_fault, &c, why, sizeof(why)) == 1)
		cfg_lun_fail(chk, l, "pi_faults", "LBA %llu is past the last LBA %llu", (unsigned long long)c.bad_lba,
			     (unsigned long long)c.num_blocks - 1);
}

static bool lun_key_set(const struct cfg_lun *l, const char *name)
{
	unsigned index;

	return cfg_schema_find(CFG_SECTION_LUN, name, &index) && cfg_key_was_set(&l->lines, index);
}

/* backend rbd (docs/rbd.md): an image instead of a path; conglomerates and templates keep files. */
static void finish_rbd_lun(const struct cfg_lun_check *c, struct cfg_lun *l)
{
	if (l->backend != CFG_BACKEND_RBD) {
		if (l->rbd_unavailable)
			cfg_lun_fail(c, l, "rbd_unavailable", "only with backend rbd");
		cfg_finish_alua_peers(c, l);
		return;
	}
	if (c->template || l->kind == CFG_LU_CONGLOMERATE)
		cfg_lun_fail(c, l, "backend", "rbd is for LUs with a medium of their own (not %s)",
			     c->template ? "subsidiary templates" : "a conglomerate's administrative LU");
	if (lun_key_set(l, "path"))
		cfg_lun_fail(c, l, "path", "backend rbd keeps the blocks in rbd_image; remove path");
	if (!l->rbd_image[0])
		cfg_lun_fail(c, l, "rbd_image", "required key is missing (backend rbd)");
	if (!l->rbd_pool[0])
		cfg_lun_fail(c, l, "rbd_pool", "must not be empty (backend rbd)");
	if (!l->ceph_id[0])
		cfg_lun_fail(c, l, "ceph_id", "must not be empty (backend rbd)");
	/* The cache writes back through write_atomic_ranges (backend.h: be_cache_wrap), which rbd does not offer. */
	if (l->volatile_write_cache)
		cfg_lun_fail(c, l, "volatile_write_cache", "not with backend rbd (it has no atomic writes to write "
			     "the cache back with)");
	if (resolve_path(c->state_dir, l->ceph_conf, sizeof(l->ceph_conf)))
		cfg_lun_fail(c, l, "ceph_conf", "too long once joined to state_dir");
	/* The LU's capacity must be known before the image is. */
	if (l->rbd_unavailable && !l->size)
		cfg_lun_fail(c, l, "rbd_unavailable", "%s needs size (the capacity before the image is there)",
			     l->rbd_unavailable == CFG_RBD_UNAVAILABLE_STANDBY ? "standby" : "not-ready");
	/* The group's move to active/optimized when the image is had is an implicit transition (SPC-4 5.15.2.2). */
	if (l->rbd_unavailable == CFG_RBD_UNAVAILABLE_STANDBY && !(l->alua & 1))
		cfg_lun_fail(c, l, "rbd_unavailable", "standby needs alua = implicit or both (the LU's target port "
			     "group becomes active/optimized by itself when it has the image)");
	cfg_finish_alua_peers(c, l);
}

void cfg_finish_lun(const struct cfg_lun_check *c, struct cfg_lun *l)
{
	for (size_t i = 0; i < cfg_schema_len; i++) {
		const struct cfg_key *key = &cfg_schema[i];

		if (key->section == CFG_SECTION_LUN && !key->default_value &&
		    !cfg_key_was_set(&l->lines, cfg_schema_index(key)) &&
		    !((c->template || l->kind == CFG_LU_CONGLOMERATE || l->backend == CFG_BACKEND_RBD) &&
		      strcmp(key->name, "path") == 0))
			cfg_lun_fail(c, l, key->name, "required key is missing"); /* unset: blames the header */
	}
	finish_rbd_lun(c, l);
	cfg_finish_profile(c, l);
	if (l->size % l->logical_block_size)
		cfg_lun_fail(c, l, "size", "%llu is not a multiple of logical_block_size (%u)",
			     (unsigned long long)l->size, l->logical_block_size);
	/* Linux sd ignores an optimal transfer length above the maximum; so would others. */
	if (l->max_transfer_length && l->optimal_transfer_length > l->max_transfer_length)
		cfg_lun_fail(c, l, "optimal_transfer_length", "%u is larger than max_transfer_length (%u)",
			     l->optimal_transfer_length, l->max_transfer_length);
	if (l->max_transfer_length && l->max_compare_and_write > l->max_transfer_length)
		cfg_lun_fail(c, l, "max_compare_and_write", "%u is larger than max_transfer_length (%u)",
			     l->max_compare_and_write, l->max_transfer_length);
	finish_zoned_lun(c, l);
	finish_atomic_lun(c, l);
	finish_pi_lun(c, l);
	cfg_finish_conglomerate(c, l);
	if (c->template)
		return;
	if (l->path[0] && resolve_path(c->state_dir, l->path, sizeof(l->path)))
		cfg_lun_fail(c, l, "path", "too long once joined to state_dir");
	if (!l->serial[0])
		snprintf(l->serial, sizeof(l->serial), "%016llx",
			 (unsigned long long)fnv1a(c->serial_seed, 0xcbf29ce484222325ull));
}

static void finish_lun(struct finish *f, struct cfg_target *t, struct cfg_lun *l)
{
	char section[CFG_NAME_MAX + 32], seed[CFG_NAME_MAX + 16], why[256];
	struct cfg_lun_check c = {
		.diag = f->diag,
		.source = f->cfg->source,
		.section = section,
		.state_dir = f->cfg->daemon.state_dir,
		.serial_seed = seed,
	};

	snprintf(section, sizeof(section), "lun \"%s\" %u", t->name, l->lun);
	/* The serial number of the target's LU N hashes "<target name>/<N>". */
	snprintf(seed, sizeof(seed), "%s/%u", t->name, l->lun);
	cfg_finish_lun(&c, l);
	if (l->kind == CFG_LU_CONGLOMERATE && l->subsidiary_template[0] &&
	    cfg_check_subsidiary_template(f->cfg, l->subsidiary_template, why, sizeof(why)) != 0)
		cfg_lun_fail(&c, l, "subsidiary_template", "%s", why);
}

/* Two logical units on one backing file would overwrite each other's data. */
static void check_shared_paths(struct finish *f)
{
	struct cfg *cfg = f->cfg;

	for (size_t i = 0; i < cfg->target_count; i++) {
		for (size_t j = 0; j < cfg->targets[i]->lun_count; j++) {
			struct cfg_lun *l = cfg->targets[i]->luns[j];
			bool reported = false;

			for (size_t k = 0; k <= i && !reported; k++) {
				size_t end = k == i ? j : cfg->targets[k]->lun_count;

				for (size_t m = 0; m < end && !reported; m++) {
					struct cfg_lun *o = cfg->targets[k]->luns[m];
					char section[CFG_NAME_MAX + 32];

					bool same_image = l->backend == CFG_BACKEND_RBD && o->backend == CFG_BACKEND_RBD &&
							  !strcmp(l->rbd_pool, o->rbd_pool) &&
							  !strcmp(l->rbd_image, o->rbd_image) &&
							  !strcmp(l->ceph_conf, o->ceph_conf);

					if (!same_image && (!l->path[0] || strcmp(l->path, o->path) != 0))
						continue;
					snprintf(section, sizeof(section), "lun \"%s\" %u", cfg->targets[i]->name,
						 l->lun);
					if (same_image)
						fail(f, cfg_key_line(&l->lines, CFG_SECTION_LUN, "rbd_image"), section,
						     "rbd_image", "%s/%s is already the image of lun \"%s\" %u", l->rbd_pool,
						     l->rbd_image, cfg->targets[k]->name, o->lun);
					else
						fail(f, cfg_key_line(&l->lines, CFG_SECTION_LUN, "path"), section, "path",
						     "%s is already the backing file of lun \"%s\" %u", l->path,
						     cfg->targets[k]->name, o->lun);
					reported = true;
				}
			}
		}
	}
}

static void finish_target(struct finish *f, struct cfg_target *t)
{
	char section[CFG_NAME_MAX + 16];
	bool has_lun0 = false;
	unsigned line = t->lines.section ? t->lines.section : t->first_line;

	snprintf(section, sizeof(section), "target \"%s\"", t->name);
	check_chap(f, CFG_SECTION_TARGET, &t->lines, section,
		   &(struct chap_keys){ "", t->chap_user, t->chap_secret, t->mutual_user, t->mutual_secret, "" });
	for (size_t i = 0; i < t->acl_count; i++) {
		struct cfg_acl *a = t->acls[i];
		char acl[2 * CFG_NAME_MAX + 16];

		snprintf(acl, sizeof(acl), "acl \"%s\" \"%s\"", t->name, a->initiator);
		check_chap(f, CFG_SECTION_ACL, &a->lines, acl,
			   &(struct chap_keys){ "", a->chap_user, a->chap_secret, a->mutual_user, a->mutual_secret,
						t->chap_secret });
	}
	for (size_t i = 0; i < t->lun_count; i++) {
		finish_lun(f, t, t->luns[i]);
		has_lun0 |= t->luns[i]->lun == 0;
	}
	/* Initiators discover LUNs with REPORT LUNS sent to LUN 0, so LUN 0 must exist. */
	if (t->lun_count == 0)
		fail(f, line, section, NULL, "has no logical unit (add a [lun \"%s\" 0] section)", t->name);
	else if (!has_lun0)
		fail(f, line, section, NULL, "has no LUN 0, which initiators use to discover the others");
}

void cfg_report_key(struct cfg_diag *diag, const struct cfg *cfg, const struct cfg_target *t, const struct cfg_lun *lun,
		    const char *key, const char *fmt, ...)
{
	enum cfg_section_kind kind = lun ? CFG_SECTION_LUN : CFG_SECTION_DAEMON;
	const struct cfg_key_lines *lines = lun ? &lun->lines : &cfg->daemon.lines;
	bool from_command_line;
	char section[CFG_NAME_MAX + 32];
	unsigned index;
	va_list ap;

	if (lun)
		snprintf(section, sizeof(section), "lun \"%s\" %u", t->name, lun->lun);
	else
		snprintf(section, sizeof(section), "daemon");
	/* Set, but on no line: by cfg_set(), from the command line. */
	from_command_line = cfg_schema_find(kind, key, &index) && cfg_key_was_set(lines, index) && !lines->key[index];
	va_start(ap, fmt);
	cfg_vreport(diag, from_command_line ? "command line" : cfg->source,
		    from_command_line ? 0 : cfg_key_line(lines, kind, key), section, key, fmt, ap);
	va_end(ap);
}

int cfg_default_state_dir(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	int n;

	if (geteuid() == 0) {
		n = snprintf(buf, len, "/var/lib/sbcemu");
	} else if (xdg && xdg[0] == '/') {
		n = snprintf(buf, len, "%s/sbcemu", xdg);
	} else {
		if (!home || home[0] != '/') {
			struct passwd *pw = getpwuid(geteuid());

			home = pw ? pw->pw_dir : NULL;
		}
		if (!home || home[0] != '/')
			return -1;
		n = snprintf(buf, len, "%s/.local/state/sbcemu", home);
	}
	return n > 0 && (size_t)n < len ? 0 : -1;
}

int cfg_default_runtime_dir(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n;

	if (geteuid() == 0)
		n = snprintf(buf, len, "/run/sbcemu");
	else if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/sbcemu", xdg);
	else
		return -1;
	return n > 0 && (size_t)n < len ? 0 : -1;
}

/*
 * An unset control_socket of a daemon on the default state directory goes in
 * the runtime directory (one such daemon at a time: the state directory's
 * lock); a daemon given its own state directory keeps it there, so daemons
 * on different state directories never share a socket.
 */
static void default_control_socket(struct cfg_daemon *d, bool state_dir_default)
{
	char dir[CFG_PATH_MAX];
	unsigned index;

	if (!state_dir_default || !cfg_schema_find(CFG_SECTION_DAEMON, "control_socket", &index) ||
	    cfg_key_was_set(&d->lines, index) || cfg_default_runtime_dir(dir, sizeof(dir)) != 0)
		return;
	snprintf(d->control_socket, sizeof(d->control_socket), "%.*s/control.sock",
		 (int)(sizeof(d->control_socket) - sizeof("/control.sock")), dir);
}

int cfg_finish(struct cfg *cfg, struct cfg_diag *diag)
{
	struct finish f = { .cfg = cfg, .diag = diag, .before = diag->count };
	struct cfg_daemon *d = &cfg->daemon;

	check_required(&f, CFG_SECTION_DAEMON, &d->lines, "daemon");
	check_required(&f, CFG_SECTION_ISCSI, &cfg->iscsi.lines, "iscsi");
	check_iscsi(&f);
	default_control_socket(d, !d->state_dir[0]);
	if (!d->state_dir[0] && cfg_default_state_dir(d->state_dir, sizeof(d->state_dir)))
		fail(&f, 0, "daemon", "state_dir", "no default state directory (HOME is not set): set state_dir");
	if (d->state_dir[0] && d->state_dir[0] != '/') {
		/* A relative state directory is taken from the working directory at start-up. */
		char cwd[CFG_PATH_MAX];

		if (!getcwd(cwd, sizeof(cwd)) || resolve_path(cwd, d->state_dir, sizeof(d->state_dir)))
			fail(&f, cfg_key_line(&d->lines, CFG_SECTION_DAEMON, "state_dir"), "daemon", "state_dir",
			     "cannot make %s absolute", d->state_dir);
	}
	if (d->control_socket[0] && resolve_path(d->state_dir, d->control_socket, sizeof(d->control_socket)) == 0 &&
	    strlen(d->control_socket) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		fail(&f, cfg_key_line(&d->lines, CFG_SECTION_DAEMON, "control_socket"), "daemon", "control_socket",
		     "%s is longer than a Unix socket path may be (%zu bytes)", d->control_socket,
		     sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
	/* With the TCMU front end on, LIO may bring every logical unit: no target is needed. */
	if (cfg->target_count == 0 && cfg->tcmu.enabled == CFG_TCMU_NO)
		fail(&f, 0, NULL, NULL, "no target is configured (add [target \"iqn...\"] and [lun \"iqn...\" 0] "
		     "sections) and tcmu.enabled = no");
	for (size_t i = 0; i < cfg->target_count; i++)
		finish_target(&f, cfg->targets[i]);
	for (size_t i = 0; i < cfg->template_count; i++) {
		struct cfg_lun *l = cfg->templates[i];
		char section[CFG_TEMPLATE_NAME_MAX + 8];
		struct cfg_lun_check c = {
			.diag = diag, .source = cfg->source, .section = section, .template = true,
		};

		snprintf(section, sizeof(section), "lu \"%s\"", l->template_name);
		cfg_finish_lun(&c, l);
	}
	check_shared_paths(&f);
	return diag->count == f.before ? 0 : -1;
}

struct cfg *cfg_load_default(struct cfg_diag *diag)
{
	struct cfg *cfg = cfg_create();

	if (!cfg) {
		cfg_diag_add(diag, "out of memory");
		return NULL;
	}
	if (cfg_parse_string(cfg, "default configuration", cfg_default_ini, diag) || cfg_finish(cfg, diag)) {
		cfg_free(cfg);
		return NULL;
	}
	return cfg;
}



const char *cfg_lu_kind_name(enum cfg_lu_kind kind)
{
	switch (kind) {
	case CFG_LU_CONVENTIONAL:
		return "conventional";
	case CFG_LU_ZBC_HM:
		return "zbc-hm";
	case CFG_LU_ZBC_HA:
		return "zbc-ha";
	case CFG_LU_CONGLOMERATE:
		return "conglomerate";
	case CFG_LU_ZBC_ZD:
		return "zbc-zd";
	}
	return "?";
}
