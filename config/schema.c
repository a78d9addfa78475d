/*
 * The configuration schema: one row per key.  The parser (parse.c), the
 * checks (finish.c), the error messages and docs/config.md all come from
 * these rows; add a key here and nowhere else (plus its field in config.h).
 */
#include <stddef.h>
#include <string.h>

#include "config_internal.h"

#define ROW(sec, st, field, typ, def, lo, hi, vals, setter, text)                                             \
	{                                                                                                      \
		.section = sec, .name = #field, .type = typ, .default_value = def, .min = lo, .max = hi,      \
		.values = vals, .doc = text, .offset = offsetof(st, field),                                   \
		.size = sizeof(((st *)0)->field), .set = setter,                                              \
	}

#define DAEMON(field, typ, def, lo, hi, vals, setter, text) \
	ROW(CFG_SECTION_DAEMON, struct cfg_daemon, field, typ, def, lo, hi, vals, setter, text)
#define ISCSI_U32(field, def, lo, hi, text) \
	ROW(CFG_SECTION_ISCSI, struct cfg_iscsi, field, CFG_TYPE_U32, def, lo, hi, NULL, cfg_set_u32, text)
#define ISCSI_BOOL(field, def, text) \
	ROW(CFG_SECTION_ISCSI, struct cfg_iscsi, field, CFG_TYPE_BOOL, def, 0, 1, NULL, cfg_set_bool, text)
#define ISCSI_STRING(field, lo, hi, text) \
	ROW(CFG_SECTION_ISCSI, struct cfg_iscsi, field, CFG_TYPE_STRING, "", lo, hi, NULL, cfg_set_string, text)
#define TARGET(field, typ, def, lo, hi, setter, text) \
	ROW(CFG_SECTION_TARGET, struct cfg_target, field, typ, def, lo, hi, NULL, setter, text)
#define ACL(field, typ, def, lo, hi, setter, text) \
	ROW(CFG_SECTION_ACL, struct cfg_acl, field, typ, def, lo, hi, NULL, setter, text)
#define LUN(field, typ, def, lo, hi, vals, setter, text) \
	ROW(CFG_SECTION_LUN, struct cfg_lun, field, typ, def, lo, hi, vals, setter, text)
#define TCMU(field, typ, def, lo, hi, vals, setter, text) \
	ROW(CFG_SECTION_TCMU, struct cfg_tcmu, field, typ, def, lo, hi, vals, setter, text)
#define LUN_U32(field, def, lo, hi, text) LUN(field, CFG_TYPE_U32, def, lo, hi, NULL, cfg_set_u32, text)
#define LUN_BOOL(field, def, text) LUN(field, CFG_TYPE_BOOL, def, 0, 1, NULL, cfg_set_bool, text)
#define LUN_STRING(field, def, hi, text) LUN(field, CFG_TYPE_STRING, def, 0, hi, NULL, cfg_set_string, text)

/* RFC 7143 13: data segment and burst lengths are 512..2^24-1 bytes. */
#define ISCSI_LENGTH_MAX 16777215

_Static_assert(sizeof(enum cfg_log_level) == sizeof(uint32_t), "enum setters store 32 bits");
_Static_assert(sizeof(enum cfg_lu_kind) == sizeof(uint32_t), "enum setters store 32 bits");
_Static_assert(sizeof(enum cfg_lba_locks) == sizeof(uint32_t), "enum setters store 32 bits");
_Static_assert(sizeof(enum cfg_tcmu_enabled) == sizeof(uint32_t), "enum setters store 32 bits");
_Static_assert(sizeof(enum cfg_profile) == sizeof(uint32_t), "enum setters store 32 bits");
_Static_assert(sizeof(enum cfg_cdl_pages) == sizeof(uint32_t), "enum setters store 32 bits");
_Static_assert(sizeof(enum cfg_backend) == sizeof(uint32_t), "enum setters store 32 bits");

static const struct cfg_enum_value tcmu_enabled[] = {
	{ "auto", CFG_TCMU_AUTO },
	{ "yes", CFG_TCMU_YES },
	{ "no", CFG_TCMU_NO },
	{ NULL, 0 },
};

static const struct cfg_enum_value log_levels[] = {
	{ "error", CFG_LOG_ERROR },
	{ "warn", CFG_LOG_WARN },
	{ "info", CFG_LOG_INFO },
	{ "debug", CFG_LOG_DEBUG },
	{ NULL, 0 },
};

static const struct cfg_enum_value lu_kinds[] = {
	{ "conventional", CFG_LU_CONVENTIONAL },
	{ "zbc-hm", CFG_LU_ZBC_HM },
	{ "zbc-ha", CFG_LU_ZBC_HA },
	{ "zbc-zd", CFG_LU_ZBC_ZD },
	{ "conglomerate", CFG_LU_CONGLOMERATE },
	{ NULL, 0 },
};

static const struct cfg_enum_value backends[] = {
	{ "file", CFG_BACKEND_FILE },
	{ "rbd", CFG_BACKEND_RBD },
	{ NULL, 0 },
};

static const struct cfg_enum_value lba_locks[] = {
	{ "range", CFG_LBA_LOCKS_RANGE },
	{ "lu", CFG_LBA_LOCKS_LU },
	{ NULL, 0 },
};

static const struct cfg_enum_value profiles[] = {
	{ "none", CFG_PROFILE_NONE },
	{ "sbc4-minimal", CFG_PROFILE_SBC4_MINIMAL },
	{ "usb-bridge", CFG_PROFILE_USB_BRIDGE },
	{ "card-reader", CFG_PROFILE_CARD_READER },
	{ "read-only", CFG_PROFILE_READ_ONLY },
	{ NULL, 0 },
};

static const struct cfg_enum_value cdl_pages[] = {
	{ "none", CFG_CDL_NONE },
	{ "t2", CFG_CDL_T2 },
	{ "ab", CFG_CDL_AB },
	{ NULL, 0 },
};

/* The usb-bridge misbehaviours (docs/profiles.md); bits of enum cfg_quirk. */
static const struct cfg_enum_value quirks[] = {
	{ "no-read-capacity-16", CFG_QUIRK_NO_READ_CAPACITY_16 },
	{ "fix-capacity", CFG_QUIRK_FIX_CAPACITY },
	{ "no-vpd", CFG_QUIRK_NO_VPD },
	{ "vpd-truncated", CFG_QUIRK_VPD_TRUNCATED },
	{ "no-mode-sense-10", CFG_QUIRK_NO_MODE_SENSE_10 },
	{ "no-sync-cache", CFG_QUIRK_NO_SYNC_CACHE },
	{ "no-residual", CFG_QUIRK_NO_RESIDUAL },
	{ "no-rsoc", CFG_QUIRK_NO_RSOC },
	{ "no-sat", CFG_QUIRK_NO_SAT },
	{ NULL, 0 },
};

/* SBC-4 6.6.2 Block Device Characteristics VPD page, PRODUCT TYPE. */
static const struct cfg_enum_value product_types[] = {
	{ "none", 0x00 },
	{ "cfast", 0x01 },
	{ "compactflash", 0x02 },
	{ "memory-stick", 0x03 },
	{ "mmc", 0x04 },
	{ "sd", 0x05 },
	{ "xqd", 0x06 },
	{ "ufs", 0x07 },
	{ NULL, 0 },
};

static const struct cfg_enum_value rbd_unavailable[] = {
	{ "fail", 0 },
	{ "not-ready", 1 },
	{ "standby", 2 },
	{ NULL, 0 },
};

/* INQUIRY TPGS (SPC-4 6.4.2). */
static const struct cfg_enum_value alua_modes[] = {
	{ "none", 0 },
	{ "implicit", 1 },
	{ "explicit", 2 },
	{ "both", 3 },
	{ NULL, 0 },
};

/* ASYMMETRIC ACCESS STATE (SPC-4 6.37) a target port group can be put in. */
static const struct cfg_enum_value alua_states[] = {
	{ "active/optimized", 0x0 },
	{ "active/non-optimized", 0x1 },
	{ "standby", 0x2 },
	{ "unavailable", 0x3 },
	{ NULL, 0 },
};

static const struct cfg_enum_value block_sizes[] = {
	{ "512", 512 },
	{ "4096", 4096 },
	{ NULL, 0 },
};

const struct cfg_key cfg_schema[] = {
	DAEMON(listen, CFG_TYPE_ADDRESS, "127.0.0.1:3260", 1, CFG_LISTEN_MAX, NULL, cfg_set_listen,
	       "Portals to listen on: IPv4:port or [IPv6]:port (port 3260 if omitted), separated by spaces "
	       "or commas; --listen replaces them."),
	DAEMON(state_dir, CFG_TYPE_PATH, "", 0, CFG_PATH_MAX - 1, NULL, cfg_set_path,
	       "Directory for backing files named by relative paths and for per-LUN state "
	       "(`<state_dir>/<target>/lun<N>/`); empty: `/var/lib/sbcemu` for root, else "
	       "`$XDG_STATE_HOME/sbcemu` or `~/.local/state/sbcemu`."),
	DAEMON(log_level, CFG_TYPE_ENUM, "info", 0, 0, log_levels, cfg_set_enum,
	       "Least severe message written to stderr."),
	DAEMON(control_socket, CFG_TYPE_PATH, "control.sock", 0, 107, NULL, cfg_set_path,
	       "Unix socket of the runtime control (`sbcemuctl`, docs/control.md), mode 0600; a relative "
	       "path is taken from state_dir; empty: no control socket. Unset, a daemon on the default state "
	       "directory puts it in the runtime directory (`/run/sbcemu/control.sock` for root, else "
	       "`$XDG_RUNTIME_DIR/sbcemu/control.sock`), one given a state directory in that directory."),
	DAEMON(workers, CFG_TYPE_U32, "4", 1, 64, NULL, cfg_set_u32,
	       "Worker threads that run backend I/O (the event loop never blocks on it)."),
	DAEMON(async_io_depth, CFG_TYPE_U32, "128", 0, 65535, NULL, cfg_set_u32,
	       "Commands whose I/O a backend runs asynchronously (READ and WRITE without protection "
	       "information on rbd LUs, docs/rbd.md) that the backend holds at once; the others wait in the "
	       "core's priority and deadline order, as the commands waiting for a worker do "
	       "(docs/architecture.md). 0: no limit."),
	DAEMON(max_commands, CFG_TYPE_U32, "4096", 0, UINT32_MAX, NULL, cfg_set_u32,
	       "Commands all logical units together hold at once (admitted and not yet released). Past it a "
	       "new command gets TASK SET FULL, or BUSY when its I_T nexus has no command in that LU's task "
	       "set (SAM-5 5.3). 0: no limit."),
	DAEMON(max_buffer_bytes, CFG_TYPE_U64, "256M", 0, INT64_MAX, NULL, cfg_set_u64,
	       "Bytes of Data-Out and Data-In buffers all commands together hold, from before their Data-Out "
	       "is asked for until their response is sent; a copy (EXTENDED COPY, WRITE USING TOKEN) also "
	       "holds the 1 MiB work buffer of its pieces (docs/copy.md). A command that does not fit waits in its task set "
	       "(no R2T, not started) until others release theirs; a command alone always fits. 0: no limit."),
	DAEMON(max_session_buffer_bytes, CFG_TYPE_U64, "64M", 0, INT64_MAX, NULL, cfg_set_u64,
	       "The same limit for the commands of one I_T nexus (an iSCSI session, with its one connection). "
	       "0: no limit."),
	DAEMON(autosave, CFG_TYPE_BOOL, "false", 0, 1, NULL, cfg_set_bool,
	       "Runtime changes kept across restarts, as targetcli saves its configuration: after each change the "
	       "runtime control makes that `sbcemuctl save` would write (LUs and targets added or removed, "
	       "resize, write protection, mode defaults, latency, subsidiaries), the running configuration is "
	       "written back, atomically: to the -c file (the one before kept as FILE.bak), or with the "
	       "embedded default to `<state_dir>/sbcemud.ini` (start with `-c` on it). Fault rules and LU "
	       "states are not configuration and are not kept. false: only `sbcemuctl save` writes it."),

	ISCSI_U32(max_recv_data_segment_length, "262144", 512, ISCSI_LENGTH_MAX,
		  "MaxRecvDataSegmentLength the target declares: the largest data segment it accepts (bytes)."),
	ISCSI_U32(max_burst_length, "1048576", 512, ISCSI_LENGTH_MAX,
		  "MaxBurstLength offered: largest solicited Data-Out or Data-In sequence (bytes)."),
	ISCSI_U32(first_burst_length, "262144", 512, ISCSI_LENGTH_MAX,
		  "FirstBurstLength offered: unsolicited data per command (bytes); at most max_burst_length."),
	ISCSI_BOOL(immediate_data, "true", "ImmediateData offered: data may ride in the SCSI Command PDU."),
	ISCSI_BOOL(initial_r2t, "false", "InitialR2T offered: false lets initiators send unsolicited Data-Out."),
	ISCSI_U32(max_outstanding_r2t, "1", 1, 65535, "MaxOutstandingR2T offered, per command."),
	ISCSI_U32(max_connections, "1", 1, 65535, "MaxConnections offered, per session."),
	ISCSI_U32(default_time2wait, "2", 0, 3600, "DefaultTime2Wait offered (seconds)."),
	ISCSI_U32(default_time2retain, "20", 0, 3600, "DefaultTime2Retain offered (seconds)."),
	ISCSI_U32(cmd_window, "128", 1, 65535,
		  "Commands a session may have outstanding (RFC 7143 4.2.2.1): MaxCmdSN is ExpCmdSN + cmd_window "
		  "- 1 less one per SCSI command delivered and not yet completed, so it advances as commands "
		  "complete; commands past it are ignored."),
	ISCSI_U32(nop_in_interval, "30", 0, 3600,
		  "Seconds of idleness before the target pings with a NOP-In; 0 = never."),
	ISCSI_U32(nop_in_timeout, "30", 1, 3600,
		  "Seconds to wait for the NOP-Out answer before dropping the connection."),
	ISCSI_U32(login_timeout, "30", 1, 3600, "Seconds a connection may spend in the login phase."),
	ISCSI_BOOL(header_digest_crc32c, "true", "Offer CRC32C in HeaderDigest (None is always offered)."),
	ISCSI_BOOL(data_digest_crc32c, "true", "Offer CRC32C in DataDigest (None is always offered)."),
	ISCSI_U32(max_portal_connections, "1024", 0, 1000000,
		  "Open connections one portal takes; past it new ones are closed at once, with a warning. 0: no limit."),
	ISCSI_U32(max_connections_per_address, "64", 0, 1000000,
		  "Open connections from one IP address (all portals); past it new ones are closed at once, with a "
		  "warning. 0: no limit."),
	ISCSI_U32(output_stall_timeout, "60", 0, 86400,
		  "Seconds a connection's queued responses may go unread before it is dropped, with a warning (a "
		  "peer that stops reading would hold them and their buffers for ever). 0: never."),
	ISCSI_STRING(discovery_chap_user, 0, 255,
		     "One-way CHAP for SendTargets discovery sessions: the name they must log in with; empty: discovery "
		     "needs no authentication (it lists only the targets whose ACLs admit the initiator name)."),
	ISCSI_STRING(discovery_chap_secret, 12, 255, "Its secret (RFC 7143 12.1.3 asks for at least 12 bytes)."),
	ISCSI_STRING(discovery_mutual_user, 0, 255,
		     "Mutual CHAP on discovery sessions: the name the target answers with; needs discovery_chap_user."),
	ISCSI_STRING(discovery_mutual_secret, 12, 255, "Its secret; it must differ from discovery_chap_secret."),
	ISCSI_U32(login_failures_per_minute, "10", 0, 1000000,
		  "Failed authentications or authorizations one IP address may have in a minute; past it its "
		  "logins get Login reject 03/01 (Service unavailable) until the minute ends. Each failure is "
		  "logged as a warning. 0: no limit."),

	TARGET(alias, CFG_TYPE_STRING, "", 0, 255, cfg_set_string, "TargetAlias sent at login; empty: none."),
	TARGET(tpgt, CFG_TYPE_U32, "1", 1, 65535, cfg_set_u32,
	       "Target portal group tag; also the RELATIVE TARGET PORT IDENTIFIER."),
	TARGET(chap_user, CFG_TYPE_STRING, "", 0, 255, cfg_set_string,
	       "One-way CHAP: the name initiators must log in with; empty: no authentication."),
	TARGET(chap_secret, CFG_TYPE_STRING, "", 12, 255, cfg_set_string,
	       "One-way CHAP secret (RFC 7143 12.1.3 asks for at least 12 bytes)."),
	TARGET(mutual_user, CFG_TYPE_STRING, "", 0, 255, cfg_set_string,
	       "Mutual CHAP: the name the target answers with; needs one-way CHAP too."),
	TARGET(mutual_secret, CFG_TYPE_STRING, "", 12, 255, cfg_set_string, "Mutual CHAP secret."),
	{
		.section = CFG_SECTION_TARGET,
		.name = "allowed_initiators",
		.type = CFG_TYPE_NAME_LIST,
		.default_value = "",
		.min = 0,
		.max = CFG_NAME_MAX - 1,
		.doc = "Initiator names allowed to log in, separated by spaces or commas; empty and no [acl] "
		       "section: any initiator.",
		.set = cfg_set_allowed_initiators,
	},

	ACL(chap_user, CFG_TYPE_STRING, "", 0, 255, cfg_set_string,
	    "One-way CHAP name for this initiator; empty: the target's."),
	ACL(chap_secret, CFG_TYPE_STRING, "", 12, 255, cfg_set_string, "One-way CHAP secret for this initiator."),
	ACL(mutual_user, CFG_TYPE_STRING, "", 0, 255, cfg_set_string,
	    "Mutual CHAP name for this initiator; empty: the target's."),
	ACL(mutual_secret, CFG_TYPE_STRING, "", 12, 255, cfg_set_string, "Mutual CHAP secret for this initiator."),

	LUN(backend, CFG_TYPE_ENUM, "file", 0, 0, backends, cfg_set_enum,
	    "Where the blocks live: file (`path`) or rbd (a Ceph RBD image, `rbd_pool` and `rbd_image`, "
	    "through librbd; docs/rbd.md)."),
	LUN(path, CFG_TYPE_PATH, NULL, 1, CFG_PATH_MAX - 1, NULL, cfg_set_path,
	    "Backing regular file or block device; a relative path is taken from state_dir. Required with "
	    "backend file, refused with backend rbd."),
	LUN_STRING(rbd_pool, "rbd", CFG_RBD_NAME_MAX - 1, "Backend rbd: the RADOS pool that holds the image."),
	LUN_STRING(rbd_image, "", CFG_RBD_NAME_MAX - 1,
		   "Backend rbd (required there): the image, created at `size` when missing."),
	LUN(ceph_conf, CFG_TYPE_PATH, "/etc/ceph/ceph.conf", 1, CFG_PATH_MAX - 1, NULL, cfg_set_path,
	    "Backend rbd: the Ceph configuration file (monitors, keyring); a relative path is taken from "
	    "state_dir."),
	LUN_STRING(ceph_id, "admin", CFG_RBD_NAME_MAX - 1,
		   "Backend rbd: the Ceph client name without `client.` (its key comes from the keyring "
		   "ceph_conf names)."),
	LUN(rbd_unavailable, CFG_TYPE_ENUM, "fail", 0, 0, rbd_unavailable, cfg_set_enum,
	    "Backend rbd: when the image cannot be had at start-up (the cluster out of reach, the pool or image "
	    "missing, its lock held by a live client): `fail`: the daemon does not start, naming the reason; "
	    "`not-ready`: the reason is logged, the LU answers NOT READY, LOGICAL UNIT IS IN PROCESS OF BECOMING "
	    "READY (02/04/01) to medium access and the image is tried again every 5 s until it comes (needs "
	    "`size`); `standby`: the same, but the LU's target port group waits in standby (02/04/0B) and "
	    "becomes active/optimized when this node has the image, asking another node's lock at each attempt "
	    "(failover when that node dies; needs `size` and `alua` implicit or both: docs/rbd.md). With "
	    "`not-ready` or `standby` a node fenced later (another broke its lock) opens the image again the "
	    "same way; with `fail` it answers 02/04/03 until restarted."),
	LUN(size, CFG_TYPE_U64, "0", 0, INT64_MAX, NULL, cfg_set_u64,
	    "Capacity in bytes (K, M, G, T, P: powers of 1024); a missing file is created sparse; "
	    "0: the existing file's size."),
	LUN(logical_block_size, CFG_TYPE_ENUM, "512", 0, 0, block_sizes, cfg_set_enum,
	    "Logical block length in bytes."),
	LUN_U32(lbppbe, "0", 0, 15,
		"LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT: physical block = logical block << lbppbe."),
	LUN(kind, CFG_TYPE_ENUM, "conventional", 0, 0, lu_kinds, cfg_set_enum,
	    "Logical unit type: conventional (SBC disk), zbc-hm (host-managed zoned, peripheral device type "
	    "14h), zbc-ha (host-aware zoned) or zbc-zd (host-managed with ZBC-2 zone domains and realms: the "
	    "first half of the zones conventional, the second sequential write required); zoned kinds: "
	    "docs/zbc.md; conglomerate: the administrative LU of a conglomerate (no medium, no path; "
	    "subsidiary LUs reached at LUN N/ELEMENT, docs/conglomerate.md)."),
	LUN_STRING(vendor, "SBCEMU", 8, "T10 VENDOR IDENTIFICATION (INQUIRY), padded with spaces."),
	LUN_STRING(product, "sbcemu disk", 16, "PRODUCT IDENTIFICATION (INQUIRY)."),
	LUN_STRING(revision, "0001", 4, "PRODUCT REVISION LEVEL (INQUIRY)."),
	LUN_STRING(serial, "", 32, "Unit Serial Number VPD page; empty: derived from the target name and LUN."),
	LUN(naa, CFG_TYPE_U64, "0", 0, UINT64_MAX, NULL, cfg_set_naa,
	    "High 64 bits of the NAA IEEE Registered Extended designator (16 hex digits starting with 6); "
	    "0: derived."),
	LUN_BOOL(thin_provisioning, "true",
		 "Logical block provisioning management (LBPME): UNMAP and WRITE SAME with UNMAP deallocate; "
		 "zoned kinds: off (their zones manage their space: docs/zbc.md), true is refused."),
	LUN_BOOL(write_protect, "false", "Write-protected medium; the backing file is opened read-only."),
	LUN_BOOL(removable, "false", "RMB bit in INQUIRY (removable medium)."),
	LUN_U32(max_transfer_length, "8192", 0, UINT32_MAX,
		"Block Limits VPD MAXIMUM TRANSFER LENGTH (logical blocks); 0: no limit reported."),
	LUN_U32(optimal_transfer_length, "256", 0, UINT32_MAX,
		"Block Limits VPD OPTIMAL TRANSFER LENGTH (logical blocks); at most max_transfer_length."),
	LUN_U32(max_unmap_lba_count, "1048576", 0, UINT32_MAX,
		"Block Limits VPD MAXIMUM UNMAP LBA COUNT (logical blocks per UNMAP command)."),
	LUN_U32(max_unmap_descriptors, "256", 0, UINT32_MAX,
		"Block Limits VPD MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT."),
	LUN_U32(max_compare_and_write, "255", 0, 255,
		"Block Limits VPD MAXIMUM COMPARE AND WRITE LENGTH (logical blocks); 0 disables the command."),
	LUN(max_write_same_length, CFG_TYPE_U64, "65535", 0, UINT64_MAX, NULL, cfg_set_u64,
	    "Block Limits VPD MAXIMUM WRITE SAME LENGTH (logical blocks); 0: no limit reported."),
	LUN_U32(max_atomic_transfer_length, "0", 0, UINT32_MAX,
		"Block Limits VPD MAXIMUM ATOMIC TRANSFER LENGTH (logical blocks): the longest WRITE ATOMIC "
		"with ATOMIC BOUNDARY 0; at most max_transfer_length. 0 (and "
		"max_atomic_transfer_length_with_boundary 0): WRITE ATOMIC is not supported."),
	LUN_U32(atomic_alignment, "0", 0, UINT32_MAX,
		"Block Limits VPD ATOMIC ALIGNMENT (logical blocks): WRITE ATOMIC must start at a multiple of it; "
		"0: any LBA."),
	LUN_U32(atomic_transfer_length_granularity, "0", 0, UINT32_MAX,
		"Block Limits VPD ATOMIC TRANSFER LENGTH GRANULARITY (logical blocks): WRITE ATOMIC lengths must "
		"be multiples of it; 0: any length."),
	LUN_U32(max_atomic_transfer_length_with_boundary, "0", 0, UINT32_MAX,
		"Block Limits VPD MAXIMUM ATOMIC TRANSFER LENGTH WITH ATOMIC BOUNDARY (logical blocks): the "
		"longest WRITE ATOMIC with a nonzero ATOMIC BOUNDARY; 0: such commands are refused."),
	LUN_U32(max_atomic_boundary_size, "0", 0, UINT32_MAX,
		"Block Limits VPD MAXIMUM ATOMIC BOUNDARY SIZE (logical blocks): the largest ATOMIC BOUNDARY."),
	LUN_BOOL(volatile_write_cache, "false",
		 "Power-loss emulation: writes without FUA stay in sbcemud's memory (up to 64 MiB) until SYNCHRONIZE "
		 "CACHE, so a SIGKILL of sbcemud (the power cut) loses them, as a drive's volatile cache would; "
		 "flushed, FUA and atomic writes survive."),
	LUN_U32(atomic_tear_write, "0", 0, UINT32_MAX,
		"Fault injection (breaks the atomic promise on purpose): the Nth WRITE ATOMIC after start that "
		"writes something is torn, only its first atomic_tear_block blocks written, yet it returns GOOD; "
		"0: never. Becomes a tear-atomic fault rule (docs/control.md)."),
	LUN_U32(atomic_tear_block, "0", 0, UINT32_MAX,
		"Fault injection: where atomic_tear_write tears the write (blocks written before the tear)."),
	LUN_BOOL(write_scattered, "false",
		 "WRITE SCATTERED(16)/(32) and the Block Limits Extension VPD page (conventional LUs)."),
	LUN_BOOL(write_scattered_atomic, "false",
		 "Non-standard extension: each WRITE SCATTERED is one atomic unit, all of its ranges or none, "
		 "even across a crash (the intent log of WRITE ATOMIC; docs/atomic.md)."),
	LUN_BOOL(allow_32_byte_cdbs, "false",
		 "Non-standard: also accept WRITE ATOMIC(32) and WRITE SCATTERED(32) without type 2 protection "
		 "(as Linux scsi_debug does for WRITE SCATTERED(32)); SBC-4 reserves the 32-byte forms for type 2."),
	LUN_U32(max_scattered_lba_range_transfer_length, "0", 0, UINT32_MAX,
		"Block Limits Extension VPD MAXIMUM SCATTERED LBA RANGE TRANSFER LENGTH (logical blocks per LBA "
		"range descriptor); 0: no limit."),
	LUN_U32(max_scattered_lba_range_descriptors, "0", 0, 65535,
		"Block Limits Extension VPD MAXIMUM SCATTERED LBA RANGE DESCRIPTOR COUNT; 0: no limit."),
	LUN_U32(max_scattered_transfer_length, "0", 0, UINT32_MAX,
		"Block Limits Extension VPD MAXIMUM SCATTERED TRANSFER LENGTH (logical blocks of data per "
		"command); 0: no limit beyond max_transfer_length."),
	LUN(zone_size, CFG_TYPE_U64, "256M", 1, INT64_MAX, NULL, cfg_set_u64,
	    "Zoned kinds: zone length in bytes (K, M, G suffixes); a power-of-two number of logical blocks. "
	    "The last zone may be shorter."),
	LUN_U32(conventional_zones, "0", 0, UINT32_MAX,
		"Zoned kinds: how many zones at the start of the LBA space are conventional (random writes)."),
	LUN_U32(max_open_zones, "0", 0, UINT32_MAX - 1,
		"zbc-hm: MAXIMUM NUMBER OF OPEN SEQUENTIAL WRITE REQUIRED ZONES (B6h VPD); 0: no limit."),
	LUN_BOOL(urswrz, "true",
		 "zbc-hm: unrestricted reads of sequential write required zones (B6h URSWRZ); false makes reads "
		 "past the write pointer or across zones fail (Linux refuses such disks)."),
	LUN(offline_zones, CFG_TYPE_STRING, "", 0, CFG_ZONE_LIST_MAX - 1, NULL, cfg_set_zone_list,
	    "Zoned kinds, fault injection: zone indexes (0 = first zone) and ranges put in the OFFLINE "
	    "condition, e.g. `3, 7-9`, one zone-offline fault rule per zone (docs/control.md); zones not "
	    "listed here or in read_only_zones are repaired at start."),
	LUN(read_only_zones, CFG_TYPE_STRING, "", 0, CFG_ZONE_LIST_MAX - 1, NULL, cfg_set_zone_list,
	    "Zoned kinds, fault injection: zone indexes and ranges put in the READ ONLY condition (zone-read-only "
	    "fault rules)."),
	LUN_U32(realm_zones, "1", 1, UINT32_MAX,
		"zbc-zd: zones per realm (in each zone domain); must divide half the zone count."),
	LUN_U32(active_domain, "1", 0, 1,
		"zbc-zd: the zone domain every realm is active in at first start (0 conventional, 1 sequential "
		"write required); ZONE ACTIVATE moves realms later and the zone state keeps it."),
	LUN_U32(gap_zones, "0", 0, UINT32_MAX,
		"zbc-zd: gap zones (type 5h, no data: ATTEMPT TO ACCESS GAP ZONE) between the two zone domains; "
		"the other zones are split evenly between the domains."),
	LUN_BOOL(sobr_zones, "false",
		 "zbc-zd: the first zone domain's zones are sequential or before required (type 4h: writes start "
		 "at or below the write pointer; FINISH ZONE refused) instead of conventional."),
	LUN_U32(protection_type, "0", 0, 3,
		"T10 protection information (docs/pi.md): 0 none (the LU has no PI support); 1, 2 or 3: the LU "
		"supports PI (INQUIRY PROTECT = 1) and is formatted with that type at first start, an 8-byte PI "
		"tuple per protection interval stored after the data in the backing file. FORMAT UNIT may change "
		"the type later; the change is kept in the state directory. Conventional LUs only."),
	LUN_U32(p_i_exponent, "0", 0, 3,
		"PROTECTION INTERVAL EXPONENT (READ CAPACITY(16) P_I_EXPONENT): 2^n protection intervals (and PI "
		"tuples) per logical block; intervals are at least 512 bytes, so 512-byte blocks take 0 only."),
	LUN(pi_faults, CFG_TYPE_STRING, "", 0, CFG_PI_FAULTS_TEXT_MAX - 1, NULL, cfg_set_pi_faults,
	    "Fault injection for PI LUs: the medium returns the named PI field of these LBAs corrupted "
	    "(its lowest bit flipped), e.g. `guard 100-107, ref 2048, app 4096`; at most 16 items. Blocks "
	    "whose stored PI is the escape (never written) stay unchecked. Each item becomes a corrupt-pi fault "
	    "rule (docs/control.md)."),
	LUN_BOOL(predict_failure, "false",
		 "Fault injection: the LU predicts its own failure (FAILURE PREDICTION THRESHOLD EXCEEDED, 5D/00) from "
		 "start-up, reported as the Informational Exceptions Control mode page says (DEXCPT, MRIE; "
		 "`mode_defaults = dexcpt=0 mrie=4`) and in the Informational Exceptions log page; a predict-failure "
		 "fault rule (docs/control.md)."),
	LUN(mode_defaults, CFG_TYPE_STRING, "", 0, CFG_MODE_DEFAULTS_TEXT_MAX - 1, NULL, cfg_set_mode_defaults,
	    "Default values of mode page fields (MODE SENSE with PC = 10b), e.g. `wce=0 d_sense=1`: `wce`, `rcd` "
	    "(Caching page), `d_sense`, `swp` (Control page), `dexcpt`, `mrie` (0-6; Informational Exceptions "
	    "Control page). The current values start from them unless MODE SELECT saved others (SP = 1); the "
	    "runtime control changes them while the daemon runs (lu-mode-defaults, docs/control.md)."),
	LUN(latency, CFG_TYPE_STRING, "none", 1, CFG_LATENCY_TEXT_MAX - 1, NULL, cfg_set_string,
	    "Media latency model (docs/latency.md): when each command that touches the medium completes; the "
	    "data goes to the backing file at once. `none` (as fast as the file); `fixed read_us=N write_us=N "
	    "other_us=N [servers=N]`; `distribution mean_us=N p99_us=N [seed=N] [servers=N]` (log-normal); "
	    "`rotating [rpm=7200] [seek_avg_us=8500] ...` (a disk drive: seeks, rotation, transfer rate by "
	    "radius, shortest-access-time-first reordering; on zoned LUs `smr_cache_mib=N` adds a media cache). "
	    "`aging_ms=N` (default 1000) bounds how long a queued command waits whatever its priority. The "
	    "runtime control changes it (lu-latency)."),
	LUN(command_duration_limits, CFG_TYPE_ENUM, "none", 0, 0, cdl_pages, cfg_set_enum,
	    "Command duration limits (SPC-6, docs/latency.md): `t2`: the DLD field of READ(16)/(32) selects a "
	    "descriptor of the Command Duration Limit T2A mode page, of WRITE(16)/(32) and WRITE SCATTERED(16) "
	    "one of T2B, with max inactive time, max active time, duration guideline and their policies; "
	    "`ab`: the SPC-5 A and B pages instead; `none`: no limits (the DLD bits are reserved). With limits the "
	    "LU reports INQUIRY VERSION 07h (SPC-5), which Linux needs to use them."),
	LUN_U32(queue_depth, "128", 0, 65535,
		"Commands this LU's task set holds. Past it a command from an I_T nexus that already has one "
		"there gets TASK SET FULL (SAM-5 5.3); a nexus with none there always gets one in. 0: no limit."),
	LUN(alua, CFG_TYPE_ENUM, "none", 0, 0, alua_modes, cfg_set_enum,
	    "Asymmetric logical unit access (SPC-4 5.15, docs/alua.md), the INQUIRY TPGS field: `implicit` "
	    "(sbcemuctl alua changes the state), `explicit` (SET TARGET PORT GROUPS does), `both`, or `none` (no "
	    "REPORT TARGET PORT GROUPS)."),
	LUN_U32(target_port_group, "1", 1, 65535,
		"The target port group the target port belongs to for this LU (Device Identification VPD page, "
		"REPORT TARGET PORT GROUPS)."),
	LUN(alua_state, CFG_TYPE_ENUM, "active/optimized", 0, 0, alua_states, cfg_set_enum,
	    "The asymmetric access state the LU starts in there: active/optimized, active/non-optimized, standby "
	    "(NOT READY 02/04/0B to all but the commands SPC-4 5.15.2.4.4 lists) or unavailable (02/04/0C)."),
	LUN_U32(alua_transition_ms, "0", 0, 60000,
		"Milliseconds each state change shows as transitioning (02/04/0A) first; REPORT TARGET PORT GROUPS' "
		"IMPLICIT TRANSITION TIME is this in seconds, rounded up."),
	LUN(alua_peer_groups, CFG_TYPE_STRING, "", 0, CFG_ALUA_PEERS_TEXT_MAX - 1, NULL, cfg_set_alua_peers,
	    "With rbd_unavailable = standby: the target port groups of the other nodes serving the same image, "
	    "`GROUP:PORT` items (the group and the relative target port identifier of its port, that node's "
	    "tpgt), e.g. `2:2`. REPORT TARGET PORT GROUPS then lists every group, the same through each node: "
	    "the one holding the image active/optimized, the others standby (docs/rbd.md)."),
	LUN(lba_locks, CFG_TYPE_ENUM, "range", 0, 0, lba_locks, cfg_set_enum,
	    "How commands share blocks: `range` locks only the blocks each command touches (reads together, "
	    "writes alone, atomic writes and COMPARE AND WRITE alone); `lu` makes every lock cover the whole LU, "
	    "as the LU-wide lock before it did (for scripts/bench-lba-locks.sh)."),
	LUN(profile, CFG_TYPE_ENUM, "none", 0, 0, profiles, cfg_set_enum,
	    "Device profile (docs/profiles.md): presets for the keys this section leaves unset, so the LU looks "
	    "like a kind of device: `sbc4-minimal` (only the mandatory commands and VPD pages), `usb-bridge` (a "
	    "USB-SATA bridge's misbehaviours, see quirks), `card-reader` (a removable memory card slot), "
	    "`read-only` (write-protected medium); `none`: no presets."),
	LUN(quirks, CFG_TYPE_FLAGS, "none", 0, 0, quirks, cfg_set_flags,
	    "Misbehaviours on purpose, separated by spaces or commas, each described in docs/profiles.md; `all`; "
	    "`none`. Profile usb-bridge: all unless set."),
	LUN(product_type, CFG_TYPE_ENUM, "none", 0, 0, product_types, cfg_set_enum,
	    "Block Device Characteristics VPD PRODUCT TYPE: none, cfast, compactflash, memory-stick, mmc, sd, "
	    "xqd or ufs. Profile card-reader: sd unless set."),
	LUN(subsidiary_template, CFG_TYPE_STRING, "", 0, CFG_TEMPLATE_NAME_MAX - 1, NULL, cfg_set_string,
	    "kind conglomerate: the [lu \"NAME\"] template each subsidiary LU is made from (its kind, size, block "
	    "size, PI, atomic and other keys); subsidiary E's backing file is sub<E>.img in this LU's state "
	    "directory, created sparse when E is first used."),
	LUN(subsidiaries, CFG_TYPE_STRING, "", 0, CFG_ELEMENT_LIST_MAX - 1, NULL, cfg_set_element_list,
	    "kind conglomerate: the subsidiary elements created at start (1..16383), e.g. `1-8, 12`; the "
	    "runtime control creates and destroys others (sbcemuctl subsidiary)."),
	LUN(bindings, CFG_TYPE_STRING, "", 0, CFG_BINDINGS_MAX - 1, NULL, cfg_set_bindings,
	    "kind conglomerate: which initiators see which subsidiaries, `INITIATOR=LIST; ...` (`*`: every "
	    "initiator), e.g. `*=1-4; iqn.2026-12.org.example:host1=5-8`; an initiator sees LUN N/E and finds it "
	    "in REPORT LUNS only when E is bound to it. Every element named must be in subsidiaries."),
	TCMU(enabled, CFG_TYPE_ENUM, "auto", 0, 0, tcmu_enabled, cfg_set_enum,
	     "The TCMU front end (docs/tcmu.md): LIO's targetcli creates `user:sbcemu` backstores served by this "
	     "daemon. `auto`: on when LIO's configfs (/sys/kernel/config/target) is there and usable, else one "
	     "log line says why not; `yes`: start-up fails if it cannot run; `no`: off."),
};

const size_t cfg_schema_len = sizeof(cfg_schema) / sizeof(cfg_schema[0]);

const struct cfg_section_desc cfg_sections[CFG_SECTION_COUNT] = {
	[CFG_SECTION_DAEMON] = { CFG_SECTION_DAEMON, "daemon", "daemon",
				 "The daemon itself: where it listens, where it keeps state, what it logs." },
	[CFG_SECTION_ISCSI] = { CFG_SECTION_ISCSI, "iscsi", "iscsi",
				"What every target offers in iSCSI login negotiation (RFC 7143 13), and the "
				"connection timers." },
	[CFG_SECTION_TARGET] = { CFG_SECTION_TARGET, "target", "target \"NAME\"",
				 "One iSCSI target; NAME is its iSCSI name (iqn.YYYY-MM.reversed.domain[:id], "
				 "eui. or naa.).  Every target needs a LUN 0.  With chap_user and chap_secret "
				 "set, initiators must authenticate (one-way CHAP); mutual_user and mutual_secret "
				 "make the target authenticate itself too.  A target is also created by the first "
				 "[lun] or [acl] section that names it, so this section may be left out when "
				 "all its keys keep their defaults." },
	[CFG_SECTION_ACL] = { CFG_SECTION_ACL, "acl", "acl \"TARGET\" \"INITIATOR\"",
			      "Allows INITIATOR (an iSCSI name) to log into TARGET, optionally with CHAP "
			      "credentials of its own that replace the target's.  Once a target has an entry "
			      "(here or in allowed_initiators), only listed initiators may log in." },
	[CFG_SECTION_LUN] = { CFG_SECTION_LUN, "lun", "lun \"TARGET\" N",
			      "Logical unit N (0..255) of TARGET, stored in a regular file or block device.  "
			      "Mode pages and persistent reservations are kept in `<state_dir>/<TARGET>/lun<N>/`." },
	[CFG_SECTION_TCMU] = { CFG_SECTION_TCMU, "tcmu", "tcmu",
			       "The TCMU front end: sbcemu logical units as LIO `user:sbcemu` backstores, each one "
			       "described by its cfgstring (docs/tcmu.md)." },
	[CFG_SECTION_LU] = { CFG_SECTION_LU, "lu", "lu \"NAME\"",
			     "A logical unit template that a TCMU cfgstring names with `lu=NAME` (for what does not "
			     "fit the kernel's 256-byte cfgstring); NAME is 1..63 letters, digits, `.`, `_` or `-`. "
			     "It takes the keys of [lun] sections; `path` may be left to the cfgstring." },
};

const struct cfg_key *cfg_schema_find(enum cfg_section_kind section, const char *name, unsigned *index)
{
	unsigned n = 0;

	section = cfg_rows_of(section);
	for (size_t i = 0; i < cfg_schema_len; i++) {
		if (cfg_schema[i].section != section)
			continue;
		if (strcmp(cfg_schema[i].name, name) == 0) {
			if (index)
				*index = n;
			return &cfg_schema[i];
		}
		n++;
	}
	return NULL;
}

unsigned cfg_schema_index(const struct cfg_key *key)
{
	unsigned n = 0;

	for (const struct cfg_key *k = cfg_schema; k < key; k++)
		if (k->section == key->section)
			n++;
	return n;
}

void cfg_apply_defaults(enum cfg_section_kind section, void *object)
{
	char why[256];

	/* The defaults are checked by tests/unit/config/test_schema.c, so a failure here cannot happen. */
	section = cfg_rows_of(section);
	for (size_t i = 0; i < cfg_schema_len; i++)
		if (cfg_schema[i].section == section && cfg_schema[i].default_value)
			(void)cfg_schema[i].set(&cfg_schema[i], object, cfg_schema[i].default_value, why, sizeof(why));
}
