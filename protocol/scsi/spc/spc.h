/*
 * Declarations shared by the SPC-4 command handlers (spc_*.c) and START
 * STOP UNIT, and by nothing else: identification helpers (INQUIRY, VPD),
 * the state files (spc_persist.c), the reservation and medium-removal
 * state (spc_pr.c, used by spc_pr_in.c, spc_pr_out.c, spc_reserve.c,
 * spc_misc.c) and the mode pages (spc_mode_pages.c, used by spc_mode.c).
 * The copy manager (copy/) uses the identification helpers.
 */
#ifndef SBCEMU_SPC_H
#define SBCEMU_SPC_H

#ifndef SBCE_BUILDING_SCSI
#error "sbcemu layering: spc.h is internal to the SCSI core (protocol/scsi/): use its public headers"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/scsi_internal.h"

/* SPC-4 version descriptors (SPC-4 table 148; sg3_utils sg_lib_data.c). */
#define SPC_VERSION_SAM_5 0x00a0
#define SPC_VERSION_SPC_4 0x0460
#define SPC_VERSION_SPC_5 0x05c0
#define SPC_VERSION_SBC_3 0x04c0
#define SPC_VERSION_SBC_4 0x0600
#define SPC_VERSION_ZBC 0x0620

/*
 * Standard INQUIRY VERSION: 06h = SPC-4 (libiscsi's Inquiry tests accept
 * 04h..06h only); 07h = SPC-5 on LUs with command duration limits (Linux
 * probes CDL only from 07h on: scsi_cdl_check).
 */
#define SPC_INQUIRY_VERSION 0x06
#define SPC_INQUIRY_VERSION_SPC_5 0x07

/* PERIPHERAL QUALIFIER 011b: no logical unit at this LUN (SPC-4 6.6.2, table 143). */
#define SPC_PQ_NOT_SUPPORTED 0x03

/*
 * Byte 0 of INQUIRY data and of every VPD page: PERIPHERAL QUALIFIER and
 * PERIPHERAL DEVICE TYPE.  lu NULL means the LUN has no logical unit: 011b /
 * 1Fh.  Zoned host-managed LUs are 14h; everything else (conventional,
 * host-aware zoned) is a direct-access block device, 00h.
 */
static inline uint8_t spc_peripheral_byte(const struct scsi_lu *lu)
{
	if (!lu)
		return (SPC_PQ_NOT_SUPPORTED << 5) | SCSI_PDT_NO_DEVICE;
	if (lu->kind == SCSI_LU_ZBC_HM)
		return SCSI_PDT_ZBC_HOST_MANAGED;
	return SCSI_PDT_DIRECT_ACCESS;
}

/* Copies an ASCII string into a len-byte field, space padded (SPC-4 4.4.1). */
void spc_put_ascii(uint8_t *dst, const char *src, size_t len);

/*
 * A stable 64-bit hash of the device name and LUN (FNV-1a), used where the
 * configuration leaves an identifier to be derived (NAA, serial number).
 */
uint64_t spc_lu_hash(const struct scsi_lu *lu);
/* spc_vpd.c: the LU's NAA designator (Device Identification VPD page) in id; returns its length, 8 or 16. */
size_t spc_lu_naa(const struct scsi_lu *lu, uint8_t id[16]);


/* spc_vpd.c: answers INQUIRY with EVPD = 1.  lu may be NULL (no LU at the LUN). */
enum scsi_result spc_inquiry_vpd(struct scsi_cmd *cmd, struct scsi_lu *lu, uint8_t page_code);

/* ---- persistent state files (spc_persist.c) ---- */

/*
 * One state file in the LU's state directory (saved mode pages, APTPL
 * reservations).  Images are built on the loop thread and written by a
 * worker (write to a temporary file, fsync, rename), so the loop never
 * blocks on the disk; generations make sure an older image never replaces
 * a newer one when two writes overtake each other on the workers.
 */
struct spc_persist_file {
	char path[PATH_MAX + 32];
	/*
	 * A backend that keeps state with the medium (backend_ops.state_store,
	 * several nodes serving one medium in turn: docs/rbd.md): the image is
	 * the blob name there, not a file.  NULL: the file.
	 */
	struct backend *shared;
	char name[32];
	uint64_t gen_next;        /* loop thread */
	pthread_mutex_t lock;     /* workers: serialises the writes */
	uint64_t gen_written;     /* under lock */
};

/* Sets up f for the file name in lu's state directory. */
void spc_persist_init(struct spc_persist_file *f, const struct scsi_lu *lu, const char *name);
void spc_persist_fini(struct spc_persist_file *f);
/*
 * Reads the whole file (at most max bytes) into a malloc'd buffer: 0, or a
 * negative errno (-ENOENT when there is none).  Blocking: set-up time only.
 */
int spc_persist_load(const struct spc_persist_file *f, uint8_t **data, size_t *len, size_t max);
/*
 * spc_persist_load of a shared file on a node that waits for the medium:
 * the image the holder last stored, read now (backend_ops.state_peek; a
 * worker's call).  -EOPNOTSUPP when the backend does not offer it.
 */
int spc_persist_peek(const struct spc_persist_file *f, uint8_t **data, size_t *len, size_t max);
/*
 * Writes image (len bytes; ownership passes; NULL / 0 removes the file) from
 * a worker for cmd, then runs after (may be NULL) on the loop thread.  A
 * write error fails cmd with the errno's sense.  Returns SCSI_PENDING (or
 * SCSI_FAILED when out of memory).
 */
enum scsi_result spc_persist_cmd(struct scsi_cmd *cmd, struct spc_persist_file *f, uint8_t *image, size_t len,
				 enum scsi_result (*after)(struct scsi_cmd *cmd));
/*
 * The same, and once written, notice (notice_len bytes; ownership passes;
 * NULL: none) to the nodes that wait for the medium (backend_ops.tell_peers,
 * spc_pr_peer.c), before after runs: the command completes once they acted
 * on it, or a few seconds passed.
 */
enum scsi_result spc_persist_cmd_notice(struct scsi_cmd *cmd, struct spc_persist_file *f, uint8_t *image,
					size_t len, enum scsi_result (*after)(struct scsi_cmd *cmd), uint8_t *notice,
					size_t notice_len);
/* The same, synchronously on the calling thread (set-up and tests): 0 or a negative errno. */
int spc_persist_write_now(struct spc_persist_file *f, const uint8_t *image, size_t len);

/* ---- reservations and medium removal (spc_pr_state.c, spc_pr_in.c, spc_pr_out.c, spc_reserve.c) ---- */

/* PERSISTENT RESERVE OUT TYPE codes (SPC-4 table 198). */
enum spc_pr_type {
	SPC_PR_WRITE_EXCLUSIVE = 0x1,
	SPC_PR_EXCLUSIVE_ACCESS = 0x3,
	SPC_PR_WRITE_EXCLUSIVE_REGISTRANTS_ONLY = 0x5,
	SPC_PR_EXCLUSIVE_ACCESS_REGISTRANTS_ONLY = 0x6,
	SPC_PR_WRITE_EXCLUSIVE_ALL_REGISTRANTS = 0x7,
	SPC_PR_EXCLUSIVE_ACCESS_ALL_REGISTRANTS = 0x8,
};

/*
 * A registration: an I_T nexus identity (initiator port name and relative
 * target port, or every target port with ALL_TG_PT) and its reservation key.
 * Registrations outlive the nexus (SPC-4 5.13.1): a later nexus with the same
 * identity is the same registrant.
 */
struct spc_pr_registration {
	struct spc_pr_registration *next;
	uint64_t key;
	char initiator_port_name[256];
	uint16_t relative_target_port;
	bool all_tg_pt;
	uint8_t transport_id[256];      /* for READ FULL STATUS */
	uint16_t transport_id_len;
};

struct spc_pr_state {
	struct spc_pr_registration *regs;   /* in registration order */
	uint32_t generation;                /* PRGENERATION */
	bool reserved;
	uint8_t type;                       /* enum spc_pr_type, when reserved */
	struct spc_pr_registration *holder; /* non all-registrants types: the holder's registration */
	bool aptpl;                         /* persist through power loss */
	struct spc_persist_file file;
	bool file_present;                  /* the APTPL file exists (or is being written) */
	/* PREVENT ALLOW MEDIUM REMOVAL: the nexuses that prevent removal */
	const struct scsi_nexus **prevent;
	unsigned prevent_len, prevent_cap;
};

/*
 * PERSISTENT RESERVE IN on a node that waits for the medium: the holder's
 * state, read now into pr (zeroed by the caller) on a worker; 0, or a
 * negative errno (pr is then empty).  spc_pr_state_clear frees what it holds.
 */
int spc_pr_peek(const struct scsi_lu *lu, struct spc_pr_state *pr);
void spc_pr_state_clear(struct spc_pr_state *pr);
bool spc_pr_type_valid(uint8_t type);
/* All registrants types: every registrant is a reservation holder (SPC-4 5.13). */
bool spc_pr_type_all_registrants(uint8_t type);
/* Registrants only and all registrants types: registrants may access the medium. */
bool spc_pr_type_registrants_access(uint8_t type);
/* True if reg belongs to the I_T nexus n. */
bool spc_pr_reg_matches(const struct spc_pr_registration *reg, const struct scsi_nexus *n);
/* The registration of the I_T nexus n, or NULL. */
struct spc_pr_registration *spc_pr_find(const struct spc_pr_state *pr, const struct scsi_nexus *n);
/* True if the I_T nexus n holds the persistent reservation. */
bool spc_pr_is_holder(const struct spc_pr_state *pr, const struct scsi_nexus *n);
/* Removes reg (and the reservation it holds, SPC-4 5.13); frees it. */
void spc_pr_unregister(struct scsi_lu *lu, struct spc_pr_registration *reg, const struct scsi_nexus *except);
/* Establishes ua for every live nexus whose registration is reg (except the issuing one). */
void spc_pr_ua_reg(struct scsi_lu *lu, const struct spc_pr_registration *reg, const struct scsi_nexus *except,
		   enum scsi_ua ua);
/* Establishes ua for every live nexus that is registered, but except. */
void spc_pr_ua_registrants(struct scsi_lu *lu, const struct scsi_nexus *except, enum scsi_ua ua);
/*
 * After a change of the persistent reservation state: with APTPL the new
 * state is written (SPC-4 5.13, APTPL), else any saved state is removed.
 * Completes cmd through spc_persist_cmd (returns SCSI_PENDING) or returns
 * SCSI_OK when there is nothing to write.
 */
enum scsi_result spc_pr_changed(struct scsi_cmd *cmd);

/*
 * PREVENT ALLOW MEDIUM REMOVAL is tracked per I_T nexus (SBC-4 5.14: medium
 * removal stays prevented while any I_T nexus prevents it);
 * lu->prevent_count is the number of nexuses that prevent it.
 */
void spc_prevent_set(struct scsi_lu *lu, const struct scsi_nexus *nexus, bool prevent);

/* True if the LU has a persistent reservation or any registration (SPC-4 5.13). */
bool spc_pr_active(const struct scsi_lu *lu);
/*
 * SPC-4 5.13, CRH = 1: a RESERVE(6)/(10) or RELEASE(6)/(10) from the
 * persistent reservation holder, or from a registrant while a registrants
 * only or all registrants reservation is held, completes with GOOD and
 * changes nothing.
 */
bool spc_pr_crh_no_op(const struct scsi_lu *lu, const struct scsi_nexus *nexus);

/* ---- mode pages (spc_mode_pages.c; the commands are in spc_mode.c) ---- */

#define SPC_MODE_PAGE_MAX 232 /* longest page served, header included (CDL T2A / T2B) */
#define SPC_MODE_PAGES_MAX 12 /* pages in spc_mode_pages[] at most */

/* One mode page (SPC-4 7.5.7): header bytes included in defaults/changeable. */
struct spc_mode_page_def {
	const char *name;
	uint8_t page_code;
	uint8_t subpage_code;
	bool spf;                       /* sub_page format (4-byte header) */
	uint8_t len;                    /* bytes, header included */
	const uint8_t *defaults;
	const uint8_t *changeable;      /* bit mask of what MODE SELECT may change (bytes from the header on) */
	/*
	 * Checks the values of the changeable fields of a page that MODE
	 * SELECT sends (may be NULL): the byte offset of a bad field in the
	 * page, or -1 when the values are acceptable.
	 */
	int (*check)(const uint8_t *page);
	/* Whether the LU has the page (NULL: every LU). */
	bool (*present)(const struct scsi_lu *lu);
	/* Sets the LU's own default values in a copy of defaults (NULL: none). */
	void (*lu_defaults)(const struct scsi_lu *lu, uint8_t *page);
};

/* In ascending (page code, subpage code) order, as MODE SENSE returns them. */
extern const struct spc_mode_page_def spc_mode_pages[];
extern const size_t spc_mode_pages_len;

struct spc_mode_state {
	uint8_t current[SPC_MODE_PAGES_MAX][SPC_MODE_PAGE_MAX];
	uint8_t saved[SPC_MODE_PAGES_MAX][SPC_MODE_PAGE_MAX];
	bool saved_by_select;  /* MODE SELECT with SP = 1 saved pages (now or in the file): they no longer follow the defaults */
	struct spc_persist_file file;
};

/* The LU's default values of page i (the table's, with the LU's own: lu_defaults). */
void spc_mode_page_defaults(const struct scsi_lu *lu, size_t i, uint8_t *page);
/* Whether the LU has page i. */
bool spc_mode_page_present(const struct scsi_lu *lu, size_t i);
/* Keeps lu->mode_current in step with the current pages. */
void spc_mode_sync_current(struct scsi_lu *lu);
/* The saved-pages file image for the current values (malloc'd), or NULL. */
uint8_t *spc_mode_save_image(const struct spc_mode_state *m, size_t *len);
/* The current values of a page the LU has, or NULL. */
const uint8_t *spc_mode_current_page(const struct scsi_lu *lu, uint8_t page_code, uint8_t subpage_code);

/*
 * The initiator port name a TransportID (SPC-4 7.6.4) names, decoded by the
 * transport of the sending I_T nexus: byte 0 bits 3:0 are the PROTOCOL
 * IDENTIFIER, which must be that transport's.  Returns false if the
 * TransportID is not one it takes (spc_pr_out.c).
 */
/*
 * PERSISTENT RESERVE OUT on a node that waits for the medium another node
 * holds: run by the holder (spc_pr_peer.c), or 02/04/0B where it cannot be.
 */
enum scsi_result spc_pr_out_forward(struct scsi_cmd *cmd);

bool spc_transport_id_parse(const struct scsi_cmd *cmd, const uint8_t *tid, size_t len, char *name, size_t cap);

/* ---- command priority (spc_priority.c) ---- */

/* MODE SELECT changed INITIAL COMMAND PRIORITY from `was`: the nexuses it applies to are told (SPC-4 7.5.9). */
void spc_priority_initial_changed(struct scsi_lu *lu, uint8_t was, const struct scsi_nexus *by);

/* ---- the Command Duration Limit mode pages (spc_mode_cdl.c) ---- */

#define SPC_CDL_AB_LEN 36
#define SPC_CDL_T2_LEN 232

/* T2 descriptor policies (SPC-6; cdl-tools cdl_policy_str). */
#define SPC_CDL_POLICY_COMPLETE_EARLIEST 0x0
#define SPC_CDL_POLICY_CONTINUE_NEXT_LIMIT 0x1
#define SPC_CDL_POLICY_CONTINUE_NO_LIMIT 0x2
#define SPC_CDL_POLICY_COMPLETE_UNAVAILABLE 0xd
#define SPC_CDL_POLICY_ABORT_RECOVERY 0xe
#define SPC_CDL_POLICY_ABORT 0xf

extern const uint8_t spc_cdl_a_default[SPC_CDL_AB_LEN], spc_cdl_b_default[SPC_CDL_AB_LEN];
extern const uint8_t spc_cdl_ab_changeable[SPC_CDL_AB_LEN];
extern const uint8_t spc_cdl_t2a_default[SPC_CDL_T2_LEN], spc_cdl_t2b_default[SPC_CDL_T2_LEN];
extern const uint8_t spc_cdl_t2a_changeable[SPC_CDL_T2_LEN], spc_cdl_t2b_changeable[SPC_CDL_T2_LEN];
bool spc_cdl_pages_present(const struct scsi_lu *lu);
int spc_cdl_ab_check(const uint8_t *page);
int spc_cdl_t2_check(const uint8_t *page);
/*
 * The limits of descriptor 1..7 of the current A, B, T2A or T2B page
 * (subpage) in *l; false if the LU has no such page.
 */
bool spc_cdl_descriptor(const struct scsi_lu *lu, uint8_t subpage, uint8_t descriptor, struct scsi_cmd_limits *l);

/*
 * ---- log pages, diagnostics, informational exceptions ----
 * (spc_log.c: LOG SENSE / LOG SELECT from spc_log_pages[]; spc_log_pages.c:
 * the page builders; spc_diag.c: SEND DIAGNOSTIC / RECEIVE DIAGNOSTIC
 * RESULTS and the self-tests; spc_ie.c: informational exceptions and the
 * per-command accounting.)  All of it lives in lu->log, loop thread only.
 */

/* The error counter log pages (SPC-4 7.3.5 / 7.3.20 / 7.3.22): write 02h, read 03h, verify 05h. */
enum spc_err_dir { SPC_ERR_WRITE, SPC_ERR_READ, SPC_ERR_VERIFY, SPC_ERR_DIRS };
/* Their parameter codes 0000h-0006h (SPC-4 table 338). */
enum spc_err_param {
	SPC_ERR_CORRECTED_NO_DELAY,     /* 0000h errors corrected without substantial delay */
	SPC_ERR_CORRECTED_DELAY,        /* 0001h errors corrected with possible delays */
	SPC_ERR_REWRITES,               /* 0002h total rewrites or rereads */
	SPC_ERR_CORRECTED,              /* 0003h total errors corrected */
	SPC_ERR_ALGORITHM,              /* 0004h total times correction algorithm processed */
	SPC_ERR_BYTES,                  /* 0005h total bytes processed */
	SPC_ERR_UNCORRECTED,            /* 0006h total uncorrected errors */
	SPC_ERR_PARAMS
};

#define SPC_SELF_TEST_LOG_ENTRIES 20 /* SPC-4 7.3.17: parameters 0001h-0014h */

/* One self-test results log parameter (SPC-4 7.3.17, table 369). */
struct spc_self_test_entry {
	uint8_t code;                   /* SELF-TEST CODE */
	uint8_t result;                 /* SELF-TEST RESULTS */
	uint8_t number;                 /* SELF-TEST NUMBER: the segment that failed */
	uint16_t hours;                 /* ACCUMULATED POWER ON HOURS at the test */
	uint64_t first_failure;         /* ADDRESS OF FIRST FAILURE, all ones: none */
	uint8_t sense_key, asc, ascq;
};

/* What the informational exceptions (spc_ie.c) keep. */
struct spc_ie_state {
	uint16_t predicted_asc_ascq;    /* a predict-failure fault rule stands: what it predicts; 0: none */
	bool test_armed;                /* TEST = 1: a false prediction comes at the next interval */
	bool test_failure;              /* ... it came: 5D/FF */
	uint8_t temperature_set;        /* the temperature a fault rule set (0: none, the ambient one stands) */
	uint8_t threshold_set;          /* the threshold a fault rule set (0: none, the default stands) */
	uint16_t reported;              /* the condition being reported (ASC/ASCQ), 0: none */
	uint32_t reports;               /* how often it was reported (REPORT COUNT) */
	bool report_due;                /* MRIE 3/4/5: the next command that completes reports it */
	uint64_t due_since_ns;          /* ... one that arrived from then on */
	struct scsi_timer timer;        /* INTERVAL TIMER */
	uint8_t iec_seen[12];           /* the Informational Exceptions Control page as last seen */
	struct scsi_lu *lu;
};

/* A self-test under way (spc_diag.c). */
struct spc_self_test_run {
	bool active;
	bool foreground;
	uint8_t code;                   /* SELF-TEST CODE: 001b/010b background, 101b/110b foreground */
	uint64_t start_ns, end_ns;      /* the device's clock */
	struct scsi_cmd *cmd;           /* foreground: the SEND DIAGNOSTIC that waits for it */
	struct scsi_timer timer;
	struct scsi_lu *lu;
};

struct spc_log_state {
	/* cumulative values of the counters (LOG SELECT resets them; saved by SP = 1) */
	uint64_t errors[SPC_ERR_DIRS][SPC_ERR_PARAMS];
	uint64_t non_medium_errors;     /* 06h 0000h */
	uint32_t start_stop_cycles;     /* 0Eh 0004h */
	uint32_t load_unload_cycles;    /* 0Eh 0006h */
	/* 19h/00h General Statistics and Performance, parameter 0001h */
	uint64_t read_commands, write_commands, blocks_read, blocks_written;
	uint64_t read_ms, write_ms;
	uint64_t power_on_minutes_base; /* power-on minutes of earlier runs (saved) */
	uint64_t power_on_ns;           /* this run began (the device's clock) */
	/* 10h Self-Test Results, [0] most recent */
	struct spc_self_test_entry self_tests[SPC_SELF_TEST_LOG_ENTRIES];
	struct spc_self_test_run st;
	uint8_t diag_page;              /* the page SEND DIAGNOSTIC PF = 1 asked RECEIVE DIAGNOSTIC RESULTS for */
	bool diag_page_valid;
	struct spc_ie_state ie;
	/* LOG SENSE PPC = 1: the parameters each page returned last (SPC-4 6.6, PPC) */
	uint8_t *last[32];
	uint16_t last_len[32];
	struct spc_persist_file file;   /* "log_pages": what SP = 1 saved */
	uint64_t changes;               /* things counted since set-up: the LU's end saves them */
};

/* The saved-parameters file image of the current values (malloc'd), or NULL. */
uint8_t *spc_log_save_image(const struct scsi_lu *lu, size_t *len);
/* Minutes the LU has been powered on, earlier runs included. */
uint64_t spc_log_power_on_minutes(const struct scsi_lu *lu);

/*
 * One log page (SPC-4 7.3): build writes the page's parameters (no header)
 * for page control pc into out (at most max bytes) and returns their
 * length.  reset (may be NULL) sets the page's resettable parameters to
 * their defaults (LOG SELECT PCR = 1, or PC = 01b with no parameter list);
 * set (may be NULL: nothing settable) checks one parameter of a LOG SELECT
 * parameter list and, with apply, takes its value: -1 when it is
 * acceptable, else the byte offset (in the parameter) of the field refused.
 */
/*
 * What a page's gather step (below) learned from the backend on a worker,
 * for its build on the loop thread.
 */
struct spc_log_gathered {
	int allocated_rc;               /* 0, or the backend's negative errno (-EOPNOTSUPP: it cannot tell) */
	uint64_t allocated_bytes;       /* backend allocated(): the bytes the backing store holds */
};

/*
 * gather (may be NULL) is for a page whose values come from the backend: it
 * runs on a worker (scsi_cmd_run_io; it may only call lu->backend and fill
 * g), then build_gathered, not build, writes the page on the loop thread.
 */
struct spc_log_page_def {
	const char *name;
	uint8_t page_code, subpage_code;
	bool ds;                        /* DISABLE SAVE: nothing of the page is saved */
	bool (*present)(const struct scsi_lu *lu);   /* NULL: every LU */
	size_t (*build)(struct scsi_lu *lu, uint8_t pc, uint8_t *out, size_t max);
	void (*gather)(struct scsi_lu *lu, struct spc_log_gathered *g);
	size_t (*build_gathered)(struct scsi_lu *lu, uint8_t pc, const struct spc_log_gathered *g, uint8_t *out,
				 size_t max);
	void (*reset)(struct scsi_lu *lu);
	int (*set)(struct scsi_lu *lu, const uint8_t *param, bool apply);
};

/* In ascending (page code, subpage code) order (spc_log_pages.c). */
extern const struct spc_log_page_def spc_log_pages[];
extern const size_t spc_log_pages_len;
/* Whether the LU has page i (and its profile keeps it). */
bool spc_log_page_present(const struct scsi_lu *lu, size_t i);
/* Writes a parameter header (SPC-4 7.3.2.2.1) and returns 4: code, control byte, length. */
size_t spc_log_param(uint8_t *out, uint16_t code, uint8_t control, uint8_t len);

/* spc_diag.c */
/* A self-test under way: REQUEST SENSE reports NOT READY, SELF-TEST IN PROGRESS (04/09) with its progress. */
bool spc_diag_progress(const struct scsi_lu *lu, struct scsi_sense_info *s);
/* spc_ie.c */
/* The Informational Exceptions Control page's current values changed (MODE SELECT, mode defaults, power on). */
void spc_ie_mode_changed(struct scsi_lu *lu);
/* MRIE 6 (or any MRIE): the informational exception REQUEST SENSE reports, NO SENSE with its ASC/ASCQ. */
bool spc_ie_request_sense(struct scsi_lu *lu, struct scsi_sense_info *s);
/* The IE ASC/ASCQ of the Informational Exceptions log page (2Fh), 0: none. */
uint16_t spc_ie_current(const struct scsi_lu *lu);
/* The temperature in degrees Celsius, and its threshold (the Temperature log page's REFERENCE TEMPERATURE). */
uint8_t spc_ie_temperature(const struct scsi_lu *lu);
uint8_t spc_ie_threshold(const struct scsi_lu *lu);

#endif
