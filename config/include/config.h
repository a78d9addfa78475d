/*
 * sbcemu configuration: an INI file (parsed by libinih) described by one
 * schema table (schema.c).  The table gives every key its type, default,
 * range, documentation line and setter; the same table validates files, the
 * embedded default configuration and command-line overrides, and generates
 * docs/config.md.
 *
 * Sections:
 *   [daemon]                              listen addresses, state directory, logging, workers
 *   [iscsi]                               iSCSI negotiation defaults and timers
 *   [target "IQN"]                        one iSCSI target (alias, TPGT, CHAP, allowed initiators)
 *   [acl "TARGET-IQN" "INITIATOR-IQN"]    one initiator allowed into a target, with its own CHAP
 *   [lun "TARGET-IQN" N]                  logical unit N of a target (backing file, geometry, limits)
 *
 * Errors are collected, never printed by the library: each is one line of the
 * form "file:line: section.key: reason" in a struct cfg_diag.
 *
 * The library does no I/O beyond reading the configuration file; it knows
 * nothing of SCSI or iSCSI objects (the daemon builds those from struct cfg).
 */
#ifndef SBCEMU_CONFIG_H
#define SBCEMU_CONFIG_H

/* Layering (docs/architecture.md): the configuration is the daemon's. */
#if defined(SBCE_BUILDING_BACKENDS) || defined(SBCE_BUILDING_SCSI) || defined(SBCE_BUILDING_ISCSI) || \
	defined(SBCE_BUILDING_TCMU)
#error "sbcemu layering: config/ is the daemon's (nothing below the daemon includes config.h)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CFG_NAME_MAX 224     /* iSCSI names are at most 223 bytes (RFC 7143 4.2.7) */
#define CFG_SECRET_MAX 256   /* CHAP names and secrets: at most 255 bytes */
#define CFG_PATH_MAX 4096
#define CFG_RBD_NAME_MAX 128   /* rbd_pool, rbd_image, ceph_id (with the NUL) */
/* The largest configuration file read (cfg_parse_file): a larger one is refused, not read. */
#define CFG_FILE_MAX (16u << 20)
#define CFG_ADDRESS_MAX 64   /* "[ipv6]:port" */
#define CFG_LISTEN_MAX 16
#define CFG_MAX_LUN 255      /* LUNs 0..255 (peripheral device addressing) */
#define CFG_SECTION_KEYS_MAX 128 /* a multiple of 64: set_mask's bits */
#define CFG_ZONE_LIST_MAX 192 /* offline_zones / read_only_zones text */
#define CFG_PI_FAULTS_TEXT_MAX 256 /* pi_faults text */
#define CFG_PI_FAULTS_MAX 16 /* pi_faults items */
#define CFG_MODE_DEFAULTS_TEXT_MAX 128 /* mode_defaults text */
#define CFG_LATENCY_TEXT_MAX 256 /* latency text (daemon/sbcemud/latency.c parses it) */
#define CFG_TEMPLATE_NAME_MAX 64 /* [lu "NAME"] */
/* subsidiaries and bindings texts: "key = value" must fit one line of the parser (199 characters) */
#define CFG_ELEMENT_LIST_MAX 185
#define CFG_BINDINGS_MAX 189
#define CFG_MAX_ELEMENT 16383 /* a conglomerate's subsidiary elements: 1..16383 (SAM-5 4.7, 14 bits) */
#define CFG_CFGSTRING_MAX 256 /* the kernel's TCMU_CONFIG_LEN (target_core_user.c) */
#define CFG_ALUA_PEERS_MAX 8 /* lun.alua_peer_groups items */
#define CFG_ALUA_PEERS_TEXT_MAX 128

enum cfg_log_level {
	CFG_LOG_ERROR,
	CFG_LOG_WARN,
	CFG_LOG_INFO,
	CFG_LOG_DEBUG,
};

/* The PI field a pi_faults item corrupts. */
enum cfg_pi_field {
	CFG_PI_GUARD,
	CFG_PI_APP_TAG,
	CFG_PI_REF_TAG,
};

enum cfg_lu_kind {
	CFG_LU_CONVENTIONAL,
	CFG_LU_ZBC_HM,
	CFG_LU_ZBC_HA,
	CFG_LU_CONGLOMERATE, /* the administrative LU of a conglomerate */
	CFG_LU_ZBC_ZD, /* host managed with ZBC-2 zone domains and realms */
};

/* Where an LU's blocks live (lun.backend; docs/rbd.md). */
enum cfg_backend {
	CFG_BACKEND_FILE, /* lun.path: a regular file or a block device */
	CFG_BACKEND_RBD,  /* lun.rbd_pool / rbd_image: a Ceph RBD image through librbd */
};

/* lun.rbd_unavailable: an image that cannot be had at start-up (docs/rbd.md). */
enum cfg_rbd_unavailable {
	CFG_RBD_UNAVAILABLE_FAIL,      /* the daemon does not start */
	CFG_RBD_UNAVAILABLE_NOT_READY, /* the LU is becoming ready until it has the image */
	CFG_RBD_UNAVAILABLE_STANDBY,   /* its target port group is in standby until then */
};

/* lun.profile: device profiles (config/profiles.c, docs/profiles.md). */
/* Which mode pages a DLD selects from (lun.command_duration_limits). */
enum cfg_cdl_pages {
	CFG_CDL_NONE,
	CFG_CDL_T2, /* reads T2A, writes T2B (SPC-6) */
	CFG_CDL_AB, /* reads A, writes B (SPC-5) */
};

enum cfg_profile {
	CFG_PROFILE_NONE,
	CFG_PROFILE_SBC4_MINIMAL,
	CFG_PROFILE_USB_BRIDGE,
	CFG_PROFILE_CARD_READER,
	CFG_PROFILE_READ_ONLY,
};

/*
 * lun.quirks: the usb-bridge profile's misbehaviours, one bit each, the same
 * bits as the SCSI core's enum scsi_quirk (daemon/sbcemud/setup.c checks that).
 */
enum cfg_quirk {
	CFG_QUIRK_NO_READ_CAPACITY_16 = 1u << 0,
	CFG_QUIRK_FIX_CAPACITY = 1u << 1,
	CFG_QUIRK_NO_VPD = 1u << 2,
	CFG_QUIRK_VPD_TRUNCATED = 1u << 3,
	CFG_QUIRK_NO_MODE_SENSE_10 = 1u << 4,
	CFG_QUIRK_NO_SYNC_CACHE = 1u << 5,
	CFG_QUIRK_NO_RESIDUAL = 1u << 6,
	CFG_QUIRK_NO_RSOC = 1u << 7,
	CFG_QUIRK_NO_SAT = 1u << 8,
	CFG_QUIRK_ALL = (1u << 9) - 1,
};

/* lun.lba_locks: how commands share blocks (protocol/scsi/sched/lba_lock.c). */
enum cfg_lba_locks {
	CFG_LBA_LOCKS_RANGE, /* each command locks the blocks it touches */
	CFG_LBA_LOCKS_LU,    /* every lock covers the LU (the comparison benchmark) */
};

/* tcmu.enabled: the TCMU front end (docs/tcmu.md). */
enum cfg_tcmu_enabled {
	CFG_TCMU_AUTO, /* on when LIO's configfs is there and usable; a one-line log says why not otherwise */
	CFG_TCMU_YES,  /* on; start-up fails if it cannot run */
	CFG_TCMU_NO,
};

/* Where each key of one section object was set: line numbers, 0 = default.  Parser-private. */
struct cfg_key_lines {
	unsigned section; /* line of the section header (0: created implicitly or by default) */
	uint64_t set_mask[CFG_SECTION_KEYS_MAX / 64]; /* bit i: key i was set (from a file or the command line) */
	unsigned key[CFG_SECTION_KEYS_MAX]; /* line where key i was set (0: command line) */
};

static inline bool cfg_key_was_set(const struct cfg_key_lines *l, unsigned i)
{
	return l->set_mask[i / 64] >> (i % 64) & 1;
}

static inline void cfg_key_mark_set(struct cfg_key_lines *l, unsigned i, bool set)
{
	if (set)
		l->set_mask[i / 64] |= 1ull << (i % 64);
	else
		l->set_mask[i / 64] &= ~(1ull << (i % 64));
}

struct cfg_daemon {
	char listen[CFG_LISTEN_MAX][CFG_ADDRESS_MAX]; /* "127.0.0.1:3260", "[::1]:3260" */
	unsigned listen_count;
	char state_dir[CFG_PATH_MAX]; /* "" until cfg_finish() fills in the automatic default */
	enum cfg_log_level log_level;
	uint32_t workers;
	uint32_t async_io_depth;
	char control_socket[CFG_PATH_MAX]; /* absolute after cfg_finish(); "" = no control socket */
	/* backpressure: struct scsi_limits (protocol/scsi/include/scsi.h); 0 = no limit */
	uint32_t max_commands;
	uint64_t max_buffer_bytes;
	uint64_t max_session_buffer_bytes;
	bool autosave;                /* runtime changes written back (daemon/control/control_save.c) */
	struct cfg_key_lines lines;
};

/* Mirrors struct iscsi_server_params (protocol/iscsi/iscsi.h). */
struct cfg_iscsi {
	uint32_t max_recv_data_segment_length;
	uint32_t max_burst_length;
	uint32_t first_burst_length;
	bool immediate_data;
	bool initial_r2t;
	uint32_t max_outstanding_r2t;
	uint32_t max_connections;
	uint32_t default_time2wait;
	uint32_t default_time2retain;
	uint32_t cmd_window;
	uint32_t nop_in_interval;
	uint32_t nop_in_timeout;
	uint32_t login_timeout;
	bool header_digest_crc32c;
	bool data_digest_crc32c;
	/* what one peer may hold (docs/security.md) */
	uint32_t max_portal_connections;
	uint32_t max_connections_per_address;
	uint32_t output_stall_timeout;
	uint32_t login_failures_per_minute;
	char discovery_chap_user[CFG_SECRET_MAX];
	char discovery_chap_secret[CFG_SECRET_MAX];
	char discovery_mutual_user[CFG_SECRET_MAX];
	char discovery_mutual_secret[CFG_SECRET_MAX];
	struct cfg_key_lines lines;
};

struct cfg_tcmu {
	enum cfg_tcmu_enabled enabled;
	struct cfg_key_lines lines;
};

/* One initiator allowed into a target; CHAP fields empty = use the target's. */
struct cfg_acl {
	char initiator[CFG_NAME_MAX];
	char chap_user[CFG_SECRET_MAX];
	char chap_secret[CFG_SECRET_MAX];
	char mutual_user[CFG_SECRET_MAX];
	char mutual_secret[CFG_SECRET_MAX];
	struct cfg_key_lines lines;
};

struct cfg_lun {
	uint32_t lun;
	char template_name[CFG_TEMPLATE_NAME_MAX]; /* [lu "NAME"] templates only */
	enum cfg_backend backend;
	char path[CFG_PATH_MAX];   /* backend file: absolute after cfg_finish() */
	char rbd_pool[CFG_RBD_NAME_MAX];   /* backend rbd */
	char rbd_image[CFG_RBD_NAME_MAX];
	char ceph_conf[CFG_PATH_MAX];
	char ceph_id[CFG_RBD_NAME_MAX];
	uint32_t rbd_unavailable;  /* 0 fail: the daemon does not start; 1 not-ready: the LU waits for the image; 2 standby: in ALUA standby */
	uint64_t size;             /* bytes; 0 = the existing file's size */
	uint32_t logical_block_size;
	uint32_t lbppbe;
	enum cfg_lu_kind kind;
	char vendor[9];
	char product[17];
	char revision[5];
	char serial[33];           /* derived by cfg_finish() when not configured */
	uint64_t naa;              /* 0 = derived by the SCSI core */
	bool thin_provisioning;
	bool write_protect;
	bool removable;
	uint32_t max_transfer_length;
	uint32_t optimal_transfer_length;
	uint32_t max_unmap_lba_count;
	uint32_t max_unmap_descriptors;
	uint32_t max_compare_and_write;
	uint64_t max_write_same_length;
	/* WRITE ATOMIC: Block Limits VPD atomic fields (docs/atomic.md) */
	uint32_t max_atomic_transfer_length;
	uint32_t atomic_alignment;
	uint32_t atomic_transfer_length_granularity;
	uint32_t max_atomic_transfer_length_with_boundary;
	uint32_t max_atomic_boundary_size;
	uint32_t atomic_tear_write;
	uint32_t atomic_tear_block;
	/* WRITE SCATTERED: Block Limits Extension VPD (docs/atomic.md) */
	bool volatile_write_cache;
	bool write_scattered;
	bool write_scattered_atomic;
	bool allow_32_byte_cdbs;
	uint32_t max_scattered_lba_range_transfer_length;
	uint32_t max_scattered_lba_range_descriptors;
	uint32_t max_scattered_transfer_length;
	/* zoned kinds (zbc-hm, zbc-ha): docs/zbc.md */
	uint64_t zone_size;        /* bytes; a power-of-two number of logical blocks */
	uint32_t conventional_zones;
	uint32_t max_open_zones;   /* 0 = no limit */
	bool urswrz;
	char offline_zones[CFG_ZONE_LIST_MAX];   /* zone indexes and ranges: "3, 7-9" */
	char read_only_zones[CFG_ZONE_LIST_MAX];
	uint32_t realm_zones;      /* zbc-zd: zones per realm */
	uint32_t active_domain;    /* zbc-zd: the zone domain every realm starts in */
	uint32_t gap_zones;        /* zbc-zd: gap zones between the domains */
	bool sobr_zones;           /* zbc-zd: the first domain's zones are sequential or before required */
	/* protection information: docs/pi.md */
	uint32_t protection_type;  /* 0: none; 1..3: formatted with that type */
	uint32_t p_i_exponent;
	char pi_faults[CFG_PI_FAULTS_TEXT_MAX];
	bool predict_failure;      /* a predict-failure fault rule from start-up (docs/control.md) */
	/* the task set */
	uint32_t queue_depth;      /* 0 = no limit */
	/* asymmetric access: docs/alua.md */
	uint32_t alua;             /* INQUIRY TPGS: 0 none, 1 implicit, 2 explicit, 3 both */
	uint32_t target_port_group;
	uint32_t alua_state;       /* ASYMMETRIC ACCESS STATE (enum scsi_alua_state) */
	uint32_t alua_transition_ms;
	char alua_peer_groups[CFG_ALUA_PEERS_TEXT_MAX]; /* "2:2, 3:3": the other nodes' groups (config/alua.c) */
	enum cfg_lba_locks lba_locks;
	/* device profiles: docs/profiles.md */
	enum cfg_profile profile;
	uint32_t quirks;           /* SCSI_QUIRK_* bits (protocol/scsi/include/scsi.h) */
	uint32_t product_type;     /* Block Device Characteristics PRODUCT TYPE */
	/* mode pages: "wce=0 d_sense=1" (cfg_mode_defaults_parse) */
	char mode_defaults[CFG_MODE_DEFAULTS_TEXT_MAX];
	char latency[CFG_LATENCY_TEXT_MAX];       /* "rotating rpm=7200", ... */
	enum cfg_cdl_pages command_duration_limits;
	/* conglomerates (kind conglomerate): docs/conglomerate.md */
	char subsidiary_template[CFG_TEMPLATE_NAME_MAX];
	char subsidiaries[CFG_ELEMENT_LIST_MAX];  /* elements and ranges: "1-8, 12" */
	char bindings[CFG_BINDINGS_MAX];          /* "INITIATOR=1-4; *=5" */
	struct cfg_key_lines lines;
};

struct cfg_target {
	char name[CFG_NAME_MAX];
	char alias[256];
	uint32_t tpgt;
	char chap_user[CFG_SECRET_MAX];
	char chap_secret[CFG_SECRET_MAX];
	char mutual_user[CFG_SECRET_MAX];
	char mutual_secret[CFG_SECRET_MAX];
	struct cfg_acl **acls;     /* empty: any initiator may log in */
	size_t acl_count;
	struct cfg_lun **luns;     /* in order of appearance */
	size_t lun_count;
	unsigned first_line;       /* where the target was first named (for messages) */
	struct cfg_key_lines lines;
};

struct cfg {
	struct cfg_daemon daemon;
	struct cfg_iscsi iscsi;
	struct cfg_tcmu tcmu;
	struct cfg_target **targets;
	size_t target_count;
	struct cfg_lun **templates; /* [lu "NAME"]: logical units TCMU cfgstrings name with lu=NAME */
	size_t template_count;
	char source[CFG_PATH_MAX]; /* last file (or string name) parsed, for messages without a line */
};

/* Collected error messages, one per line, each ending in '\n'. */
struct cfg_diag {
	char *text;
	size_t len, cap;
	unsigned count;
};

void cfg_diag_free(struct cfg_diag *diag);

/* A configuration holding the schema defaults of [daemon] and [iscsi] and no target. */
struct cfg *cfg_create(void);
void cfg_free(struct cfg *cfg);

/*
 * Parses a file, or a string that messages call `name`, into cfg (keys add to
 * or override what is there).  Returns 0, or -1 with messages in diag.
 */
int cfg_parse_file(struct cfg *cfg, const char *path, struct cfg_diag *diag);
int cfg_parse_string(struct cfg *cfg, const char *name, const char *text, struct cfg_diag *diag);

/*
 * Sets one key as if it appeared in section `section` ("daemon", "iscsi",
 * "target \"IQN\"", ...), overriding any earlier value; messages start with
 * `origin` ("command line").  Returns 0 or -1.
 */
int cfg_set(struct cfg *cfg, const char *origin, const char *section, const char *key, const char *value,
	    struct cfg_diag *diag);

/*
 * Checks what single keys cannot (required keys, pairs of keys, targets
 * without LUN 0, ...), fills in derived values (state directory, serial
 * numbers) and makes LUN paths absolute.  Returns 0 or -1.
 */
int cfg_finish(struct cfg *cfg, struct cfg_diag *diag);

/*
 * Reports a problem with a key that only its user can see (a path the
 * daemon cannot use), in the form of cfg_finish()'s messages: "file:line:
 * section.key: reason", the line being where the key was set (else the
 * section's header), "command line: daemon.key: reason" for a key set by
 * cfg_set().  The key is one of [daemon] when lun is NULL, else of LUN lun
 * of target t.
 */
void cfg_report_key(struct cfg_diag *diag, const struct cfg *cfg, const struct cfg_target *t, const struct cfg_lun *lun,
		    const char *key, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* A configuration made from the embedded default, finished.  NULL with messages in diag on error. */
struct cfg *cfg_load_default(struct cfg_diag *diag);

/* The embedded default configuration (config/default.ini), NUL-terminated. */
extern const char cfg_default_ini[];

/* /var/lib/sbcemu for root, else $XDG_STATE_HOME/sbcemu or ~/.local/state/sbcemu.  Returns 0 or -1. */
int cfg_default_state_dir(char *buf, size_t len);
/* /run/sbcemu for root, else $XDG_RUNTIME_DIR/sbcemu.  Returns 0, or -1 when there is none. */
int cfg_default_runtime_dir(char *buf, size_t len);

/*
 * A zone list (lun.offline_zones, lun.read_only_zones): zone indexes and
 * inclusive ranges "3, 7-9" separated by spaces or commas.  Calls fn for
 * each range in order; fn returning non-zero stops the walk and is returned.
 * Returns 0, or -1 with the reason in why for bad syntax.
 */
/*
 * A conglomerate's bindings text, "INITIATOR=LIST; INITIATOR=LIST" (LIST
 * as cfg_zone_list_walk reads it; INITIATOR "*" is every initiator):
 * calls fn(arg, initiator, first, last) for each range.  0, fn's nonzero
 * result, or -1 with the reason in why.
 */
int cfg_bindings_walk(const char *text, int (*fn)(void *arg, const char *initiator, uint32_t first, uint32_t last),
		      void *arg, char *why, size_t whylen);
int cfg_zone_list_walk(const char *text, int (*fn)(void *arg, uint32_t first, uint32_t last), void *arg,
		       char *why, size_t whylen);
/*
 * lun.alua_peer_groups, "GROUP:PORT" items separated by spaces or commas:
 * calls fn(arg, group, port) for each.  0, fn's nonzero result, or -1 with
 * the reason in why (config/alua.c).
 */
int cfg_alua_peers_walk(const char *text, int (*fn)(void *arg, uint32_t group, uint32_t port), void *arg,
			char *why, size_t whylen);

/*
 * A PI fault list (lun.pi_faults): "FIELD LBA" or "FIELD FIRST-LAST" items,
 * FIELD one of guard, app, ref, separated by commas or spaces.  Calls fn for
 * each item in order; fn returning non-zero stops the walk and is returned.
 * Returns 0, or -1 with the reason in why for bad syntax.
 */
int cfg_pi_fault_walk(const char *text, int (*fn)(void *arg, enum cfg_pi_field field, uint64_t first, uint64_t last),
		      void *arg, char *why, size_t whylen);

/* The mode page fields lun.mode_defaults sets (config/mode.c says which page and bit each is). */
enum cfg_mode_field {
	CFG_MODE_WCE,
	CFG_MODE_RCD,
	CFG_MODE_D_SENSE,
	CFG_MODE_SWP,
	CFG_MODE_DEXCPT,
	CFG_MODE_MRIE,
	CFG_MODE_FIELD_COUNT,
};
struct cfg_mode_defaults {
	uint32_t set;                          /* bit i: field i has a value */
	uint8_t value[CFG_MODE_FIELD_COUNT];
};
/*
 * A mode_defaults text: "FIELD=N" items separated by spaces or commas, FIELD
 * one of wce, rcd, d_sense, swp, dexcpt, mrie.  0, or -1 with the reason in
 * why (and *out unchanged).
 */
int cfg_mode_defaults_parse(const char *text, struct cfg_mode_defaults *out, char *why, size_t whylen);
/* The canonical text of md ("wce=0 d_sense=1", fields in the order above; "" when none). */
void cfg_mode_defaults_format(const struct cfg_mode_defaults *md, char *buf, size_t len);

/*
 * The logical unit a TCMU device's cfgstring describes (docs/tcmu.md):
 * "key=value;key=value..." over the keys of [lun] sections, the first pair
 * optionally lu=NAME, an [lu "NAME"] template of cfg that the other pairs
 * override.  name is the backstore's name (messages, the serial number);
 * dev_size (bytes, 0: unknown) is the backstore's size in LIO, the LU's
 * size unless the cfgstring or template sets one, which must then agree.
 * Relative paths are taken from cfg's state directory.  The same checks and
 * reasons as for the file; returns 0, or -1 with every error in diag as
 * "cfgstring of NAME: key: reason" ("cfgstring: key: reason" for name "").
 */
/* The [lu "NAME"] template called name, or NULL. */
const struct cfg_lun *cfg_find_template(const struct cfg *cfg, const char *name);
int cfg_lun_from_cfgstring(const struct cfg *cfg, const char *name, const char *cfgstring, uint64_t dev_size,
			   struct cfg_lun *out, struct cfg_diag *diag);

/*
 * The runtime control's lu-add / lu-remove (docs/control.md): adds a copy of
 * l to target (0, or -1 when its LUN is taken or out of memory), removes LUN
 * lun from it (nothing when absent).
 */
int cfg_target_add_lun(struct cfg_target *target, const struct cfg_lun *l);
void cfg_target_remove_lun(struct cfg_target *target, uint32_t lun);
/*
 * The runtime control's target-add / target-remove: adds a copy of t (its
 * ACLs and LUNs too) to cfg and returns it (NULL: out of memory, or cfg has
 * a target of that name); removes the target called name with its sections
 * (nothing when there is none).
 */
struct cfg_target *cfg_add_target(struct cfg *cfg, const struct cfg_target *t);
void cfg_remove_target(struct cfg *cfg, const char *name);
/*
 * The runtime control's acl-add, acl-remove and target-auth: dst takes
 * src's CHAP keys and a copy of its ACL (the keys as set in src, for
 * save).  0, or -1 when out of memory (dst unchanged).
 */
int cfg_target_set_access(struct cfg_target *dst, const struct cfg_target *src);

/*
 * Writes cfg as a configuration file that cfg_parse_file() and cfg_finish()
 * read back to the same configuration: every section, with the keys that
 * were set (config/write.c).  0, or -1 on a write error.
 */
int cfg_write(const struct cfg *cfg, FILE *out);

/* One difference between two configurations (cfg_diff). */
enum cfg_change_kind {
	CFG_CHANGE_KEY,     /* key differs: old_value -> new_value */
	CFG_CHANGE_ADDED,   /* the section is only in the new configuration */
	CFG_CHANGE_REMOVED, /* the section is only in the old one */
};

struct cfg_change {
	enum cfg_change_kind kind;
	const char *section;            /* "daemon", "iscsi", "tcmu", "lu", "target", "acl", "lun" */
	const char *target;             /* target, acl, lun */
	const char *name;               /* acl: the initiator; lu: the template */
	uint32_t lun;                   /* lun */
	const struct cfg_lun *old_lun;  /* lun: the old section (NULL when added) */
	const struct cfg_lun *new_lun;  /* lun: the new section (NULL when removed) */
	const char *key;                /* CFG_CHANGE_KEY */
	const char *old_value, *new_value;
};

/*
 * Compares a (running) with b (reloaded), every key of every section as
 * cfg_write() formats it, and calls fn once per difference: keys first
 * ([daemon], [iscsi], [tcmu], templates, then each target's keys, ACLs and
 * LUNs), sections only in b last (config/write.c).
 */
void cfg_diff(const struct cfg *a, const struct cfg *b, void (*fn)(void *arg, const struct cfg_change *c), void *arg);

/* Writes docs/config.md (Markdown) from the schema table. */
void cfg_print_doc(FILE *out);
/* The same reference as the manual page sbcemu.ini(5), in roff (sbcemud --print-config-doc=man). */
void cfg_print_man(FILE *out, const char *version);
/*
 * The keys of every section, or of section ("daemon", "lun", ...): name,
 * type and default, one per line (sbcemud --list-keys).  -1 for an unknown
 * section.
 */
int cfg_print_keys(FILE *out, const char *section);

const char *cfg_lu_kind_name(enum cfg_lu_kind kind);
const char *cfg_profile_name(enum cfg_profile profile);

#endif
