/*
 * Declarations shared between the files of the SCSI core only.  Transports
 * and the daemon use scsi.h.
 */
#ifndef SBCEMU_SCSI_INTERNAL_H
#define SBCEMU_SCSI_INTERNAL_H

#ifndef SBCE_BUILDING_SCSI
#error "sbcemu layering: scsi_internal.h is internal to the SCSI core (protocol/scsi/): use its public headers"
#endif

#include <limits.h>
#include <pthread.h>

#include "scsi.h"
#include "scsi_faults.h"
#include "core/scsi_proto.h"
#include "sched/heap.h"
#include "scsi_wire.h"
#include "backend.h"

/* ---- handler results ---- */

typedef enum scsi_result (*scsi_parse_fn)(struct scsi_cmd *cmd);
typedef enum scsi_result (*scsi_exec_fn)(struct scsi_cmd *cmd);
typedef bool (*scsi_enabled_fn)(const struct scsi_lu *lu);
/*
 * Fills cmd->lock (mode and ranges) for a command whose blocks are known
 * only from its Data-Out (lba_lock.c has the default from the row's flags).
 * Runs on the loop thread when the command is about to start.
 */
typedef void (*scsi_lock_fn)(struct scsi_cmd *cmd);

/* ---- the opcode table (op_table.c) ---- */

/* Where a command's service action lives in its CDB. */
enum scsi_sa_location {
	SCSI_SA_NONE,
	SCSI_SA_BYTE1,     /* byte 1 bits 4:0 (MAINTENANCE IN, SERVICE ACTION IN(16), PR, SANITIZE) */
	SCSI_SA_BYTES8_9,  /* variable-length CDBs (7Fh) */
};

/* Reservation conflict classes (SPC-4 5.13.1, table 52; SPC-2 reservations). */
enum scsi_pr_class {
	SCSI_PR_ALLOWED,    /* never conflicts (INQUIRY, REPORT LUNS, PR IN/OUT, ...) */
	SCSI_PR_READ,       /* conflicts with Exclusive Access types */
	SCSI_PR_WRITE,      /* conflicts with Write Exclusive and Exclusive Access types */
	SCSI_PR_CONFLICT,   /* conflicts with any reservation held by another I_T nexus */
};

#define OP_DATA_IN          (1u << 0)  /* transfers Data-In */
#define OP_DATA_OUT         (1u << 1)  /* transfers Data-Out */
#define OP_MEDIUM_ACCESS    (1u << 2)  /* NOT READY while stopped */
#define OP_SKIP_UA          (1u << 3)  /* not stopped by a pending unit attention */
#define OP_HEAD_OF_QUEUE    (1u << 4)  /* implicit HEAD OF QUEUE (SAM-5 8.6) */
#define OP_WRITES_MEDIUM    (1u << 5)  /* refused with DATA PROTECT when write protected */
#define OP_NO_LU_OK         (1u << 6)  /* runs for a LUN that has no LU (cmd->lu == NULL) */
#define OP_IN_PROGRESS_OK   (1u << 7)  /* allowed while a sanitize or format runs */
#define OP_SHORT_DATA_OUT_OK (1u << 8) /* exec handles a Data-Out shorter than data_length (FCP-4 9.4.2 a) */
/*
 * The CDB has an RDPROTECT / WRPROTECT / VRPROTECT field (byte 1; byte 2 of
 * WRITE SCATTERED(16); byte 10 of 32-byte CDBs): REPORT SUPPORTED OPERATION
 * CODES shows it only on LUs formatted with protection information.
 */
#define OP_PROTECT_FIELD    (1u << 9)
/*
 * LBA locks (lba_lock.c), taken when the command starts on [cmd->lba,
 * cmd->lba + cmd->nblocks) as parse decoded them: shared by reads; alone
 * for writes; alone even with lba_locks = lu for read-modify-write and
 * atomic writes.  A row's lock function, when it has one, decides instead.
 */
#define OP_LBA_READ         (1u << 10)
#define OP_LBA_WRITE        (1u << 11)
#define OP_LBA_EXCLUSIVE    (1u << 12)
/*
 * The command changes the whole medium or its layout (FORMAT UNIT, SANITIZE,
 * ZONE ACTIVATE): it starts only when no other command of the LU runs, and
 * holds every block until it calls scsi_cmd_unquiesce() or completes;
 * younger commands that touch the medium wait for that, then meet the NOT
 * READY gate if the operation goes on in the background.
 */
#define OP_QUIESCE          (1u << 13)
/* exec reads the Data-Out through cmd->data_out_sgl (in pieces); else it finds it gathered in cmd->data_out. */
#define OP_DATA_OUT_SGL     (1u << 14)
/* In the minimal command set of the sbc4-minimal profile (lu_profile.c, docs/profiles.md). */
#define OP_MINIMAL          (1u << 15)
/* The CDB has a DURATION LIMIT DESCRIPTOR field (scsi_op_dld; SPC-6 command duration limits). */
#define OP_DLD              (1u << 16)
/*
 * Processed while the LU's target port group is in the standby, unavailable
 * or transitioning asymmetric access state (SPC-4 5.15.2.4.4, 5.15.2.4.5,
 * 5.15.2.5, as Linux's drivers/target/target_core_alua.c lists them); any
 * other command gets NOT READY, LOGICAL UNIT NOT ACCESSIBLE (spc_alua.c).
 */
#define OP_ALUA_STANDBY_OK  (1u << 17)
#define OP_ALUA_UNAVAILABLE_OK (1u << 18)
#define OP_ALUA_TRANSITIONING_OK (1u << 19)
/*
 * Runs in pieces of SCSI_COPY_PIECE bytes through a work buffer of its own
 * (the copy manager, copy/): the buffer budgets count that room beside its
 * Data-Out, from its start to its end (sched/resources.c).
 */
#define OP_PIECE_BUFFER     (1u << 20)
#define SCSI_COPY_PIECE (1u << 20)

/* struct scsi_cmd faults: what an injected fault does to this command (scsi_faults.h). */
#define SCSI_FAULT_TEAR_ATOMIC (1u << 0) /* WRITE ATOMIC: write a prefix only, return GOOD */
#define SCSI_FAULT_CORRUPT_READ (1u << 1) /* a fault rule: invert the first byte of the Data-In */
#define SCSI_FAULT_SHORT_READ (1u << 2)   /* a fault rule: send half the Data-In */

/* The NOT READY sense of an LU whose readiness is not SCSI_LU_READY (lu.c). */
struct scsi_sense_info scsi_lu_not_ready_sense(const struct scsi_lu *lu);

/* ---- device profiles (lu_profile.c) ---- */

/* True if the LU's profile takes the row away (scsi_op_supported). */
bool scsi_lu_profile_hides_op(const struct scsi_lu *lu, const struct scsi_op *op);
/* True if the LU's profile takes VPD page code away (spc_vpd.c). */
bool scsi_lu_profile_hides_vpd(const struct scsi_lu *lu, uint8_t code);

/* ---- fault rules (fault_rules.c) ---- */

struct scsi_fault_rule;

enum scsi_fault_verdict {
	SCSI_FAULT_PASS, /* execute the command */
	SCSI_FAULT_DONE, /* a rule set its status: complete it */
	SCSI_FAULT_HELD, /* a rule holds it: scsi_cmd_resume() or an abort ends that */
};

/* Before exec, when the command starts: what the LU's rules do to it. */
enum scsi_fault_verdict scsi_fault_check(struct scsi_cmd *cmd);
/* At completion of a GOOD command, before its residual: what corrupt-read / short-read rules do to its Data-In. */
void scsi_fault_data_in(struct scsi_cmd *cmd);
/*
 * An ABORT TASK names referenced: what the LU's reject-abort-task and
 * ignore-abort-task rules make of it: SCSI_TMF_FUNCTION_REJECTED,
 * SCSI_TMF_NO_RESPONSE, or SCSI_TMF_FUNCTION_COMPLETE (no rule fired: abort it).
 */
enum scsi_tmf_response scsi_fault_abort_task(struct scsi_cmd *referenced);
/*
 * Calls fn for each corrupt-pi rule of lu (its field and LBA range), under
 * the rules' lock: safe on a worker thread (sbc_pi.c, reading the medium).
 */
void scsi_fault_corrupt_pi_foreach(struct scsi_lu *lu,
				   void (*fn)(void *arg, enum scsi_pi_field field, uint64_t first, uint64_t last), void *arg);
/*
 * A copy manager (copy/) about to read [first, first + n) of lu's medium,
 * on the loop thread: true with the first block a medium-error rule holds
 * bad in *lba (the rule counts it, as it counts a READ it fails).
 */
bool scsi_fault_read_range(struct scsi_lu *lu, uint64_t first, uint64_t n, uint64_t *lba);
/* The lowest block a medium-error rule still holds bad: true with *lba set (a self-test finds it, spc_diag.c). */
bool scsi_fault_first_bad_block(const struct scsi_lu *lu, uint64_t *lba);
/* At completion: off the held list; a write repairs the medium-error blocks it covered. */
void scsi_fault_cmd_done(struct scsi_cmd *cmd);
/* Loop thread: [first, first + n) of lu's medium was written (a copy manager's piece): its bad blocks repaired. */
void scsi_fault_written_range(struct scsi_lu *lu, uint64_t first, uint64_t n);
void scsi_fault_lu_fini(struct scsi_lu *lu);
/* A held command goes on: executes (or completes, when aborted meanwhile). */
void scsi_cmd_resume(struct scsi_cmd *cmd);

struct scsi_op {
	const char *name;               /* as the standard writes it: "WRITE SAME(16)" */
	uint8_t opcode;
	uint16_t service_action;
	enum scsi_sa_location sa_location;
	uint8_t cdb_len;
	uint8_t usage[SCSI_MAX_CDB_LEN]; /* CDB USAGE DATA (SPC-4 6.35.3): also the reserved-bit mask */
	uint32_t flags;
	enum scsi_pr_class pr_class;
	uint32_t lu_kinds;              /* enum scsi_lu_kind mask */
	scsi_parse_fn parse;            /* may be NULL: nothing to decode */
	scsi_exec_fn exec;
	scsi_enabled_fn enabled;        /* may be NULL: always enabled */
	scsi_lock_fn lock;              /* may be NULL: the OP_LBA_* flags decide */
	uint32_t nominal_timeout;       /* seconds, RSOC command timeouts descriptor */
	uint32_t recommended_timeout;
};

extern const struct scsi_op scsi_op_table[];
extern const size_t scsi_op_table_len;

/*
 * Looks up (opcode, service action) in cdb.  Returns the row, or NULL with
 * *sense set (INVALID COMMAND OPERATION CODE, or INVALID FIELD IN CDB on the
 * service action field).  Rows not enabled for lu (or not serving its kind)
 * are invisible.
 */
const struct scsi_op *scsi_op_lookup(const struct scsi_lu *lu, const uint8_t *cdb,
				     struct scsi_sense_info *sense);
/* True if the row is served by lu (kind matches and enabled() agrees). */
bool scsi_op_supported(const struct scsi_op *op, const struct scsi_lu *lu);
/* Byte `byte` of the row's CDB USAGE DATA as lu serves it (the DLD bits only with duration limits). */
uint8_t scsi_op_usage(const struct scsi_op *op, const struct scsi_lu *lu, unsigned byte);
/* The DURATION LIMIT DESCRIPTOR of a CDB of that row: 0 (none) .. 7. */
uint8_t scsi_op_dld(const struct scsi_op *op, const uint8_t *cdb);
/*
 * REPORT SUPPORTED OPERATION CODES' CDLP for the row on lu (SPC-6: 0 none,
 * 1 the A or T2A page, 2 the B or T2B page) and RWCDLP (T2 pages).
 */
uint8_t scsi_op_cdlp(const struct scsi_op *op, const struct scsi_lu *lu, bool *rwcdlp);

/* ---- logical units, devices, nexuses ---- */

/*
 * The mode parameter values other parts of the core read.  spc_mode.c owns
 * the pages and keeps this in step with the current values.
 */
struct scsi_mode_current {
	bool d_sense;     /* Control: descriptor format sense */
	bool swp;         /* Control: software write protect */
	bool tas;         /* Control: task aborted status */
	uint8_t qerr;
	bool wce;         /* Caching: write cache enable */
	bool rcd;         /* Caching: read cache disable */
	bool dpofua;      /* device-specific parameter: DPO and FUA supported */
	bool urswrz;      /* Zoned Block Device Control URSWRZ (host-managed zoned LUs; zbc_urswrz()) */
	uint32_t fsnoz;   /* Zoned Block Device Control FSNOZ: zones ZONE ACTIVATE acts on without ZSRC */
	uint16_t max_activation; /* Zoned Block Device Control MAXIMUM ACTIVATION: realms at once (0, FFFEh+: no limit) */
	uint8_t initial_priority; /* Control Extension INITIAL COMMAND PRIORITY */
};

struct spc_mode_state;  /* spc_mode.c */
struct spc_pr_state;    /* spc_pr.c */
struct spc_pr_peer;     /* spc_pr_peer.c */
struct spc_log_state;   /* spc_log.c: log pages, self-tests, informational exceptions */

/* A long-running operation reported through sense progress (sanitize, format). */
struct scsi_lu_progress {
	bool active;
	uint16_t asc_ascq;     /* ASC_SANITIZE_IN_PROGRESS_NR or ..._FORMAT_IN_PROGRESS */
	uint16_t fraction;     /* progress indication, 0..65535 */
};

/* The task set of an LU (task_set.c): every command between admission and completion. */
struct scsi_task_set {
	struct scsi_cmd *head, *tail;  /* arrival order */
	unsigned count;                /* commands in it (queue_depth) */
	unsigned running;              /* started and not completed */
	struct scsi_lba_lock *holders; /* the LBA locks held: of its commands, and of copies on other LUs (lba_lock.c) */
	struct scsi_cmd *cursor;       /* the scheduler's next command, kept valid across removals */
	unsigned removals;             /* commands taken out so far (the scheduler's pointers stay valid while unchanged) */
	bool scheduling, again;        /* the scheduler is running / must run once more */
	bool waits_outside;            /* a command waits for buffer room or another LU's LBA lock (scsi_resources) */
};

/*
 * What the commands that named a T2 command duration limit descriptor did
 * (SPC-6 Command Duration Limits Statistics log page 19h/21h, as sg3_utils
 * sg_logs decodes it): per page (0 = T2A, 1 = T2B) and descriptor (0..6).
 */
struct scsi_cdl_descriptor_stats {
	uint32_t inactive_miss;  /* its max inactive time was exceeded (only) */
	uint32_t active_miss;    /* its max active time was exceeded (only) */
	uint32_t both_miss;      /* both were */
	uint32_t commands;       /* commands completed with it */
};

/* A latency histogram (core/stats.c): 8 buckets per power of two of nanoseconds. */
#define SCSI_HISTOGRAM_BUCKETS (42 * 8)
struct scsi_histogram {
	uint64_t count, sum_ns, max_ns;
	uint32_t bucket[SCSI_HISTOGRAM_BUCKETS];
};

/* What core/stats.c keeps per LU (allocated with the LU's first command; loop thread only). */
struct scsi_lu_stat_data {
	struct scsi_histogram queued, active, total;
	struct scsi_histogram cdl_queued[2][7], cdl_active[2][7];
	uint64_t cdl_guideline_miss[2][7];
	uint64_t cdl_policy_actions[2][7][16];
	uint64_t good_with_sense;
	uint64_t since_ns;
};

/* An LU's medium as the latency model sees it (media/media_queue.c). */
struct scsi_media_queue {
	struct scsi_media_model *model;      /* NULL: SCSI_LATENCY_NONE, commands go straight to exec */
	struct scsi_latency_params params;   /* the model's, as set */
	struct scsi_service_queue waiting;   /* started, waiting for the medium */
	unsigned servers;                    /* commands the medium serves at once; 0: any number */
	unsigned busy;                       /* ... serving now */
	uint64_t last_free_ns;               /* when a server last came free, as the model said (not when its timer ran) */
	bool reorders;                       /* shortest access time first among equals */
	uint64_t aging_ns;
};

struct scsi_lu {
	struct scsi_device *dev;
	struct scsi_lu *map_next;                  /* the device's map (lu_map.c): its bucket ... */
	struct scsi_lu *all_next, *all_prev;       /* ... and the list of every LU */
	struct scsi_lu_params params;
	uint32_t generation;             /* bumped when the format changes what parse decides (FORMAT UNIT) */
	char state_dir[PATH_MAX];
	struct backend *backend;
	struct rod_token_store *rod_tokens;        /* copy/rod_token.c; NULL until the first POPULATE TOKEN */
	unsigned copy_readers;                     /* copies on other LUs that read or write this one (rod_token.c, lba_lock.c): it stays */
	uint32_t lun;
	enum scsi_lu_kind kind;
	uint32_t block_size;
	uint64_t num_blocks;
	struct scsi_backing_errors backing_errors; /* loop thread only */
	struct scsi_lu_counters counters;          /* loop thread only */
	struct scsi_cdl_descriptor_stats cdl_stats[2][7]; /* loop thread only (sched/duration_limits.c) */
	struct scsi_lu_stat_data *stats;           /* core/stats.c; NULL until the first command */
	enum scsi_lu_readiness readiness;          /* the runtime control's lu-state */
	bool backend_pending;                      /* becoming ready until backend->ops->ready() (cmd.c) */
	bool atomic_withdrawn;                     /* WRITE ATOMIC no longer offered (sbc_write_atomic_recheck) */
	struct scsi_fault_rule *fault_rules;       /* fault_rules.c, oldest first */
	/* Held while the loop thread links or unlinks a rule and while a worker walks the corrupt-pi rules. */
	pthread_mutex_t fault_rules_lock;
	bool state_kept;                           /* a clean flush before this start kept everything (lu.c) */
	struct scsi_cmd *fault_held;               /* commands a hold or delay rule holds */

	/* state */
	bool stopped;                  /* START STOP UNIT START = 0 */
	unsigned prevent_count;        /* PREVENT ALLOW MEDIUM REMOVAL holders */
	struct scsi_lu_progress progress;
	bool sanitize_failed;          /* SBC-4 4.11.4: medium access fails until EXIT FAILURE MODE */
	bool sanitize_failed_ause;     /* the failed SANITIZE had AUSE = 1 (EXIT FAILURE MODE allowed) */
	struct scsi_mode_current mode_current;
	struct spc_mode_state *mode;
	struct spc_pr_state *pr;
	struct spc_pr_peer *pr_peer;               /* the other nodes' PERSISTENT RESERVE OUT (spc_pr_peer.c) */
	struct spc_log_state *log;
	struct scsi_nexus *spc2_reservation_holder; /* RESERVE(6)/(10) */

	struct scsi_task_set ts;
	struct scsi_media_queue media;

	/* asymmetric access of the device's target port group (spc_alua.c) */
	struct scsi_alua {
		enum scsi_alua_state state;  /* what REPORT TARGET PORT GROUPS reports now */
		enum scsi_alua_state target; /* where a transition ends; state otherwise */
		uint8_t status;              /* its STATUS CODE: 0 none, 1 by SET TARGET PORT GROUPS, 2 implicit */
		struct scsi_timer timer;     /* the end of a transition */
		struct scsi_nexus *requester; /* a reference: the nexus whose SET TARGET PORT GROUPS started it */
	} alua;

	struct zbc_state *zbc;         /* zone engine of a zoned LU (zbc.h); NULL otherwise */
	struct scsi_conglomerate *conglomerate; /* an administrative LU's subsidiaries (conglomerate.c) */

	/* protection information (sbc_pi.h): the current format */
	uint8_t protection_type;       /* 0: formatted without PI */
	uint8_t p_i_exponent;
	uint64_t pi_offset;            /* backend byte offset of the tuple of LBA 0 */
};

/* The LUs of a device by LUN id (lu_map.c). */
struct scsi_lu_map {
	struct scsi_lu **buckets;
	unsigned nbuckets;                  /* a power of two, or 0 before the first LU */
	unsigned count;
	struct scsi_lu *all;                /* every LU, newest first */
};

/* Every LU of dev; the body may not remove any but lu itself (next is read first). */
#define SCSI_DEVICE_FOREACH_LU(dev, lu)                                                                    \
	for (struct scsi_lu *lu = (dev)->lus.all, *lu##_next_ = lu ? lu->all_next : NULL; lu;                \
	     lu = lu##_next_, lu##_next_ = lu ? lu->all_next : NULL)

struct scsi_device {
	char name[224];
	struct scsi_executor *executor;
	struct scsi_resources *res;         /* NULL: no limits */
	struct scsi_device *res_next;       /* res->devices */
	struct scsi_lu_map lus;
	struct scsi_nexus *nexuses;
	scsi_backing_error_fn backing_error_observer; /* scsi_device_observe_backing_errors */
	void (*alarm_arm)(void *arg, uint64_t when_ns); /* scsi_device_set_alarm */
	void *alarm_arg;
	uint64_t (*clock_now)(void *arg);   /* scsi_device_set_clock; NULL: CLOCK_MONOTONIC */
	void *clock_arg;
	struct scsi_heap timers;            /* sched/timer.c */
	uint64_t timer_seq;
	void *backing_error_arg;
	scsi_subsidiary_open_fn subsidiary_open; /* scsi_device_set_subsidiary_opener */
	void *subsidiary_open_arg;
	/*
	 * A transport with a TransportID codec of each PROTOCOL IDENTIFIER the
	 * device's I_T nexuses came through (scsi_nexus_create), for the
	 * stand-in nexuses of other nodes (spc_pr_peer.c); NULL: none seen.
	 */
	const struct scsi_transport_ops *codec_of[16];
};

/* What the devices of one daemon hold (resources.c). */
struct scsi_resources {
	struct scsi_limits limits;
	uint32_t commands;                  /* admitted, not released */
	uint64_t buffer_bytes;              /* reserved, not released */
	struct scsi_device *devices;
	unsigned sections;                  /* scheduler sections open (scsi_resources_enter) */
	bool freed;                         /* buffer room or an LBA lock came free: the waiting LUs look again */
	unsigned lus_waiting;               /* LUs whose ts.waits_outside is set (task_set.c); 0: nobody to wake */
};

struct scsi_nexus {
	struct scsi_device *dev;
	struct scsi_nexus *next;
	const struct scsi_transport_ops *transport;
	char initiator_port_name[256];
	uint8_t transport_id[256];
	size_t transport_id_len;
	char target_port_name[256];
	uint16_t relative_target_port;
	/* Its I_T_L nexuses' state (itl.c), for the LUs it touched. */
	struct scsi_itl **itl_buckets;
	unsigned itl_nbuckets, itl_count;
	bool continued;                     /* scsi_nexus_continue: no POWER ON where the LU's state was kept */
	bool reported_luns_changed;         /* REPORTED LUNS DATA HAS CHANGED pending, for whichever LU (LUICLR) */
	uint64_t buffer_bytes;              /* buffer room its commands hold */
	unsigned outstanding;               /* commands submitted and not released */
	bool destroying;
	bool peer;                          /* stands for another node's I_T nexus (spc_pr_peer.c) */
};

/* ---- command helpers for handlers ---- */

/* Stores CHECK CONDITION with s; returns SCSI_FAILED. */
enum scsi_result scsi_cmd_fail(struct scsi_cmd *cmd, struct scsi_sense_info s);
/* Fails cmd because the backing store returned err (negative or positive errno): counted, observed. */
enum scsi_result scsi_cmd_fail_errno(struct scsi_cmd *cmd, int err, bool writing);
/*
 * The gates a command passes before it starts (ALUA state, a long operation
 * in progress, readiness, reservations, write protection with writes),
 * passed on lu, another LU whose blocks it reads (and writes) as if it had
 * been sent there: an EXTENDED COPY between LUs.  false with the answer in cmd.
 */
bool scsi_cmd_gates_pass_on(struct scsi_cmd *cmd, struct scsi_lu *lu, bool writes);
/* Stores a status other than GOOD or CHECK CONDITION; returns SCSI_FAILED (or SCSI_OK for CONDITION MET). */
enum scsi_result scsi_cmd_set_status(struct scsi_cmd *cmd, enum scsi_status status);
/*
 * A zeroed, contiguous Data-In buffer of len bytes (the transport's when it
 * offers one in one piece, else the core's, copied to the transport's at
 * completion); data_in_len = len.  NULL on ENOMEM.
 */
uint8_t *scsi_cmd_alloc_data_in(struct scsi_cmd *cmd, size_t len);
/*
 * The buffers for len bytes of Data-In, not zeroed, in as many pieces as the
 * transport gave (for the data path, which fills them from the backend
 * without a copy).  0 or -ENOMEM.
 */
int scsi_cmd_data_in_buffers(struct scsi_cmd *cmd, uint32_t len, struct scsi_sgl *sgl);
/* The Data-Out gathered in one piece (a no-op when it came in one); NULL on ENOMEM. */
uint8_t *scsi_cmd_data_out_contig(struct scsi_cmd *cmd);
/*
 * An OP_QUIESCE command lets younger commands start (its LU-wide lock goes):
 * the operation it began now keeps them out through the NOT READY gate
 * (lu->progress), or it has changed what it had to.
 */
void scsi_cmd_unquiesce(struct scsi_cmd *cmd);
/* Limits the Data-In transfer to the ALLOCATION LENGTH (SPC-4 4.2.5.6). */
void scsi_cmd_limit_data_in(struct scsi_cmd *cmd, uint32_t allocation_length);
/*
 * Runs work(cmd) on a worker thread, then after(cmd) (if not NULL) on the
 * loop thread; after returns SCSI_PENDING if it started more work, else the
 * command completes.  work may only touch the backend and cmd's buffers and
 * reports errors with scsi_cmd_fail.  Returns SCSI_PENDING.
 */
enum scsi_result scsi_cmd_run_io(struct scsi_cmd *cmd, void (*work)(struct scsi_cmd *cmd),
				 enum scsi_result (*after)(struct scsi_cmd *cmd));
/*
 * scsi_cmd_run_io with nowait (scsi_io_job.work_nowait): the same work done
 * at once on the loop thread when it need not wait (BE_IO_NOWAIT); true if
 * it did it all, false (nothing reported, nothing the retry depends on
 * changed) if work must run on a worker.
 */
enum scsi_result scsi_cmd_run_io_nowait(struct scsi_cmd *cmd, void (*work)(struct scsi_cmd *cmd),
					bool (*nowait)(struct scsi_cmd *cmd),
					enum scsi_result (*after)(struct scsi_cmd *cmd));
/*
 * scsi_cmd_run_io_nowait with async (scsi_io_job.work_async): work started
 * on the loop thread through an asynchronous backend call, true if it
 * started; its completion calls scsi_io_job_complete(&cmd->io_job) once,
 * from any thread, after recording any error in cmd.
 */
enum scsi_result scsi_cmd_run_io_async(struct scsi_cmd *cmd, void (*work)(struct scsi_cmd *cmd),
				       bool (*nowait)(struct scsi_cmd *cmd), bool (*async)(struct scsi_cmd *cmd),
				       enum scsi_result (*after)(struct scsi_cmd *cmd));
/*
 * Streamed Data-Out (a handler whose parse set cmd->data_out_window): the
 * bytes in data_out are done with; asks the transport for the next piece
 * and runs next(cmd) on the loop thread once it is in data_out (next returns
 * like exec).  Returns SCSI_PENDING.  An abort in between ends the command.
 */
enum scsi_result scsi_cmd_next_data_out(struct scsi_cmd *cmd, enum scsi_result (*next)(struct scsi_cmd *cmd));
/* Finishes a command whose handler returned SCSI_PENDING. */
void scsi_cmd_complete(struct scsi_cmd *cmd);
/* The one errno -> sense mapping for backend failures. */
struct scsi_sense_info scsi_sense_from_errno(int err, bool writing);
/* Byte offset of an LBA. */
static inline uint64_t scsi_lu_offset(const struct scsi_lu *lu, uint64_t lba)
{
	return lba * lu->block_size;
}
/* True if [lba, lba + nblocks) is past the capacity (no overflow). */
static inline bool scsi_lu_range_bad(const struct scsi_lu *lu, uint64_t lba, uint64_t nblocks)
{
	return lba > lu->num_blocks || nblocks > lu->num_blocks - lba;
}

/* ---- the LU map (lu_map.c) and the I_T_L nexuses (itl.c) ---- */

bool scsi_lu_map_insert(struct scsi_lu_map *m, struct scsi_lu *lu);
void scsi_lu_map_remove(struct scsi_lu_map *m, struct scsi_lu *lu);
void scsi_lu_map_fini(struct scsi_lu_map *m);

/* What the core keeps per I_T_L nexus. */
/* A copy's result held for RECEIVE COPY RESULTS COPY STATUS (copy/extended_copy.c). */
struct scsi_copy_status {
	bool held;
	uint8_t service_action;  /* EXTENDED COPY(LID1) 00h or (LID4) 01h */
	uint32_t list_id;
	uint16_t segments;  /* segments processed */
	uint32_t age;       /* the oldest is replaced */
	uint64_t bytes;     /* bytes written */
	uint8_t status;     /* the command's: GOOD, else the copy failed (COPY MANAGER STATUS 02h) */
	uint8_t sense_len;  /* ... its sense data, for FAILED SEGMENT DETAILS */
	uint8_t sense[96];
};
#define SCSI_COPY_STATUS_HELD 4

/* A token-based copy's result held for RECEIVE ROD TOKEN INFORMATION (copy/rod_token.c). */
struct scsi_rod_list {
	bool held;
	bool good;              /* ended GOOD */
	bool aborted;           /* ended TASK ABORTED by COPY OPERATION ABORT (copy/copy_abort.c) */
	bool has_token;         /* POPULATE TOKEN's */
	uint8_t service_action; /* 10h POPULATE TOKEN, 11h WRITE USING TOKEN */
	uint8_t sense_len;
	uint32_t list_id;
	uint32_t age;           /* the oldest is replaced */
	uint64_t blocks;        /* TRANSFER COUNT */
	uint8_t sense[96];
	uint8_t token[512];
};
#define SCSI_ROD_LISTS_HELD 4

struct scsi_itl {
	struct scsi_itl *next;
	uint32_t lun;
	uint32_t ua_pending;                /* bit (1 << enum scsi_ua) */
	uint16_t ie_asc_ascq;               /* SCSI_UA_INFORMATIONAL_EXCEPTION: its ASC/ASCQ (spc_ie.c) */
	uint16_t commands;                  /* commands of the nexus in the LU's task set */
	uint8_t priority;                   /* SET PRIORITY's; 0: INITIAL COMMAND PRIORITY */
	uint32_t copy_age;                  /* EXTENDED COPY results held so far */
	struct scsi_copy_status *copies;    /* SCSI_COPY_STATUS_HELD, made at the first held EXTENDED COPY */
	struct scsi_rod_list *rod_lists;    /* SCSI_ROD_LISTS_HELD, made at the first token-based copy */
};

/*
 * Conglomerates (conglomerate.c).  scsi_conglomerate_reach: the LU a
 * command from nexus for LUN id lun reaches (a subsidiary's LU opened on
 * first use), or NULL.  scsi_no_lu_sense: what a command for a LUN that
 * reaches no LU gets (LOGICAL UNIT NOT SUPPORTED; SUBSIDIARY LOGICAL UNIT
 * NOT CONFIGURED under an administrative LU).  scsi_conglomerate_visible:
 * whether nexus sees the subsidiary.  scsi_conglomerate_bound_luns: the
 * LUN ids of admin's subsidiaries bound to nexus, ascending, appended to
 * ids (room for scsi_subsidiary_count more).
 */
struct scsi_lu *scsi_conglomerate_reach(struct scsi_nexus *nexus, uint32_t lun);
struct scsi_sense_info scsi_no_lu_sense(const struct scsi_nexus *nexus, uint32_t lun);
bool scsi_conglomerate_visible(const struct scsi_nexus *nexus, const struct scsi_lu *admin, uint16_t element);
size_t scsi_conglomerate_bound_luns(const struct scsi_nexus *nexus, const struct scsi_lu *admin, uint32_t *ids);
int scsi_conglomerate_init(struct scsi_lu *admin);
void scsi_conglomerate_fini(struct scsi_lu *admin);
/* An LU goes: its subsidiary record (if it is one) forgets it, its conglomerate (if it has one) is freed. */
void scsi_conglomerate_forget(struct scsi_lu *lu);

struct scsi_itl *scsi_itl_find(const struct scsi_nexus *n, uint32_t lun);
/* The entry, made if there is none (NULL only when out of memory). */
struct scsi_itl *scsi_itl_get(struct scsi_nexus *n, uint32_t lun);
void scsi_itl_drop(struct scsi_nexus *n, uint32_t lun);
void scsi_itl_fini(struct scsi_nexus *n);
/* Whether an entry n makes for lu starts with POWER ON (the one every nexus has at first, SAM-5 6.3.1). */
bool scsi_itl_untouched_power_on(const struct scsi_nexus *n, const struct scsi_lu *lu);

/* ---- statistics (stats.c) ---- */

/* A command of lu ends (not aborted): its queued and active times are counted. */
void scsi_stats_record(struct scsi_cmd *cmd, uint64_t now_ns);
/* A duration limit's policy acted on the command (sched/duration_limits.c). */
void scsi_stats_policy(struct scsi_cmd *cmd, uint8_t policy);
void scsi_stats_fini(struct scsi_lu *lu);

/* ---- unit attentions (ua.c) ---- */

/* Establishes ua for lu on every nexus of its device except 'except' (may be NULL). */
void scsi_ua_establish_all(struct scsi_lu *lu, enum scsi_ua ua, const struct scsi_nexus *except);
void scsi_ua_establish(struct scsi_nexus *nexus, uint32_t lun, enum scsi_ua ua);
/* Takes the highest-priority pending UA for (nexus, lun) into *s and clears it. */
bool scsi_ua_take(struct scsi_nexus *nexus, uint32_t lun, struct scsi_sense_info *s);

/* ---- cross-module hooks ---- */

/* spc_mode.c: create/free the mode page state (loads saved pages from state_dir). */
int spc_mode_init(struct scsi_lu *lu);
void spc_mode_fini(struct scsi_lu *lu);
/* spc_mode.c: a power cycle: the current mode pages become the saved ones. */
void spc_mode_power_on(struct scsi_lu *lu);
/* spc_pr.c: create/free reservation state (loads APTPL state from state_dir). */
int spc_pr_init(struct scsi_lu *lu);
void spc_pr_fini(struct scsi_lu *lu);
/*
 * spc_pr_peer.c: while the backend holds the medium, run the PERSISTENT
 * RESERVE OUT commands other nodes send it (backend_ops.serve); fini before
 * the backend closes.
 */
void spc_pr_peer_init(struct scsi_lu *lu);
void spc_pr_peer_stop(struct scsi_lu *lu); /* no question taken any more (scsi_device_stop_peers) */
void spc_pr_peer_fini(struct scsi_lu *lu);
/*
 * spc_pr_peer.c, holding the medium: ua for the I_T nexuses of other nodes
 * that reg names (but except), into the notice of the command that runs;
 * take_notice hands that notice over (malloc; NULL: none) and forgets it.
 */
struct spc_pr_registration;
void spc_pr_peer_note_ua(struct scsi_lu *lu, const struct spc_pr_registration *reg, const struct scsi_nexus *except,
			 enum scsi_ua ua);
uint8_t *spc_pr_peer_take_notice(struct scsi_lu *lu, size_t *len);
/* spc_pr.c: true if cmd conflicts with a persistent or SPC-2 reservation. */
bool spc_reservation_conflict(const struct scsi_cmd *cmd);
/* spc_pr.c: an I_T nexus is gone (drops SPC-2 reservations it held). */
void spc_pr_nexus_lost(struct scsi_lu *lu, const struct scsi_nexus *nexus);
/* spc_pr.c / spc_reserve.c: LOGICAL UNIT RESET side effects on reservations. */
void spc_pr_lu_reset(struct scsi_lu *lu);
/* spc_pr.c: a power cycle: a LOGICAL UNIT RESET's effects, and registrations gone unless APTPL. */
void spc_pr_power_on(struct scsi_lu *lu);

/* spc_log.c: create/free the log pages' state (loads the saved log parameters from state_dir); 0 or -1. */
int spc_log_init(struct scsi_lu *lu);
void spc_log_fini(struct scsi_lu *lu);
/*
 * spc_ie.c: once per completed command, on the loop thread, before its sense
 * is encoded (scsi_cmd_complete): counts what it did into the log pages and,
 * with MRIE 3 (PER = 1), 4 or 5, turns the first GOOD command after an
 * informational exception into CHECK CONDITION, RECOVERED ERROR (MRIE 5: NO
 * SENSE) with the exception's ASC/ASCQ (SPC-4 7.5.12); such a command
 * completed, so its Data-In must still go out.
 */
void spc_ie_cmd_done(struct scsi_cmd *cmd);
/* spc_ie.c: what the LU's predict-failure and temperature fault rules say now (fault_rules.c); 0: none. */
void spc_ie_fault(struct scsi_lu *lu, uint16_t predicted_asc_ascq, uint8_t temperature, uint8_t threshold);
/* spc_diag.c: a LOGICAL UNIT RESET or power on: a background self-test ends, aborted (result 2). */
void spc_diag_abort(struct scsi_lu *lu);

/* sbc_pi.c: the LU's current protection format (loads a FORMAT UNIT's choice from state_dir). */
int sbc_pi_init(struct scsi_lu *lu, char *err, size_t errlen);

/* ---- command handlers, by the standard that defines them ---- */

/* SPC: spc_inquiry.c, spc_vpd.c */
enum scsi_result spc_inquiry_exec(struct scsi_cmd *cmd);
/* spc_misc.c */
enum scsi_result spc_test_unit_ready_exec(struct scsi_cmd *cmd);
enum scsi_result spc_prevent_allow_medium_removal_exec(struct scsi_cmd *cmd);
/* spc_request_sense.c */
enum scsi_result spc_request_sense_exec(struct scsi_cmd *cmd);
/* spc_mode.c */
enum scsi_result spc_mode_sense_exec(struct scsi_cmd *cmd);
enum scsi_result spc_mode_select_parse(struct scsi_cmd *cmd);
enum scsi_result spc_mode_select_exec(struct scsi_cmd *cmd);
/* spc_report_luns.c */
enum scsi_result spc_report_luns_exec(struct scsi_cmd *cmd);
/* spc_rsoc.c */
enum scsi_result spc_report_supported_operation_codes_exec(struct scsi_cmd *cmd);
enum scsi_result spc_report_supported_tmf_exec(struct scsi_cmd *cmd);
/* copy/: the copy manager (EXTENDED COPY LID1, token-based copy, RECEIVE COPY RESULTS) of every LU with a medium; enabled: its rows serve lu */
bool copy_manager_enabled(const struct scsi_lu *lu);
enum scsi_result extended_copy_parse(struct scsi_cmd *cmd);
void extended_copy_lock(struct scsi_cmd *cmd);
enum scsi_result extended_copy_exec(struct scsi_cmd *cmd);
enum scsi_result receive_copy_results_parse(struct scsi_cmd *cmd);
enum scsi_result receive_copy_results_exec(struct scsi_cmd *cmd);
enum scsi_result rod_token_parse(struct scsi_cmd *cmd);
void populate_token_lock(struct scsi_cmd *cmd);
void write_using_token_lock(struct scsi_cmd *cmd);
enum scsi_result populate_token_exec(struct scsi_cmd *cmd);
enum scsi_result write_using_token_exec(struct scsi_cmd *cmd);
enum scsi_result receive_rod_token_information_exec(struct scsi_cmd *cmd);
enum scsi_result copy_operation_abort_exec(struct scsi_cmd *cmd);
/* A command that writes the medium takes its LBA lock (on lu): the ROD tokens of its blocks are revoked. */
void rod_tokens_written(struct scsi_lu *lu, const struct scsi_cmd *cmd, const struct scsi_lba_lock *lock);
/* An EXTENDED COPY about to write [lba, lba + nblocks) of lu (it holds their lock): their ROD tokens are revoked. */
void rod_tokens_copied_to(struct scsi_lu *lu, uint64_t lba, uint64_t nblocks);
void rod_tokens_free(struct scsi_lu *lu);
/* spc_reserve.c */
enum scsi_result spc_reserve_exec(struct scsi_cmd *cmd);
enum scsi_result spc_release_exec(struct scsi_cmd *cmd);
/* spc_pr.c */
enum scsi_result spc_persistent_reserve_in_exec(struct scsi_cmd *cmd);
enum scsi_result spc_persistent_reserve_out_parse(struct scsi_cmd *cmd);
enum scsi_result spc_persistent_reserve_out_exec(struct scsi_cmd *cmd);
/*
 * A backend opened in the background that keeps state with the medium
 * (backend_ops.state_store): the reservations, saved mode pages and saved
 * log parameters the node that had the medium before left there, taken
 * over whole (spc_pr.c, spc_mode_pages.c, spc_log.c).  Loop thread; no I/O
 * (the backend read them when it opened).
 */
void spc_pr_reload(struct scsi_lu *lu);
void spc_mode_reload(struct scsi_lu *lu);
void spc_log_reload(struct scsi_lu *lu);
/* spc_alua.c */
void spc_alua_init(struct scsi_lu *lu);
void spc_alua_fini(struct scsi_lu *lu);
/*
 * The backend is still being opened (lu->backend_pending): true when the
 * group waits for it in standby (params.alua_standby_until_backend), false
 * when the LU must be becoming ready instead.  spc_alua_backend_ready: it is
 * open now: the group that waited becomes active/optimized (implicit).
 */
bool spc_alua_wait_for_backend(struct scsi_lu *lu);
/* The LU's group waits in standby for a medium another node holds (spc_alua_wait_for_backend). */
bool spc_alua_waits_for_backend(const struct scsi_lu *lu);
void spc_alua_backend_ready(struct scsi_lu *lu);
/*
 * The backend lost the medium (backend_ops.ready false again): the group
 * that follows its backend goes back to standby (an implicit transition);
 * false when it does not follow it.
 */
bool spc_alua_backend_lost(struct scsi_lu *lu);
/*
 * Whether the command may be processed in the asymmetric access state of
 * the LU's target port group (the op table's OP_ALUA_* flags); false with
 * NOT READY, LOGICAL UNIT NOT ACCESSIBLE and the state's ASCQ stored.
 */
bool spc_alua_gate(struct scsi_cmd *cmd);
enum scsi_result spc_report_target_port_groups_exec(struct scsi_cmd *cmd);
enum scsi_result spc_set_target_port_groups_parse(struct scsi_cmd *cmd);
enum scsi_result spc_set_target_port_groups_exec(struct scsi_cmd *cmd);
bool spc_alua_enabled(const struct scsi_lu *lu);
bool spc_alua_explicit_enabled(const struct scsi_lu *lu);
/* spc_priority.c */
enum scsi_result spc_report_priority_exec(struct scsi_cmd *cmd);
enum scsi_result spc_set_priority_parse(struct scsi_cmd *cmd);
enum scsi_result spc_set_priority_exec(struct scsi_cmd *cmd);

/* spc_log.c */
enum scsi_result spc_log_sense_exec(struct scsi_cmd *cmd);
enum scsi_result spc_log_select_parse(struct scsi_cmd *cmd);
enum scsi_result spc_log_select_exec(struct scsi_cmd *cmd);
/* spc_diag.c */
enum scsi_result spc_send_diagnostic_parse(struct scsi_cmd *cmd);
enum scsi_result spc_send_diagnostic_exec(struct scsi_cmd *cmd);
enum scsi_result spc_receive_diagnostic_results_exec(struct scsi_cmd *cmd);

/* SBC: sbc_start_stop.c */
enum scsi_result sbc_start_stop_unit_exec(struct scsi_cmd *cmd);
/* sbc_rw.c: READ/WRITE(6/10/12/16), WRITE AND VERIFY, ORWRITE */
enum scsi_result sbc_read_parse(struct scsi_cmd *cmd);
enum scsi_result sbc_read_exec(struct scsi_cmd *cmd);
enum scsi_result sbc_write_parse(struct scsi_cmd *cmd);
enum scsi_result sbc_write_exec(struct scsi_cmd *cmd);
enum scsi_result sbc_write_and_verify_parse(struct scsi_cmd *cmd);
enum scsi_result sbc_write_and_verify_exec(struct scsi_cmd *cmd);
enum scsi_result sbc_orwrite_parse(struct scsi_cmd *cmd);
enum scsi_result sbc_orwrite_exec(struct scsi_cmd *cmd);
/* sbc_write_atomic.c: WRITE ATOMIC(16)/(32) */
enum scsi_result sbc_write_atomic_parse(struct scsi_cmd *cmd);
enum scsi_result sbc_write_atomic_exec(struct scsi_cmd *cmd);
bool sbc_write_atomic_enabled(const struct scsi_lu *lu);
/*
 * The backend, opened in the background, is ready: WRITE ATOMIC stops being
 * offered if the atomic unit it found cannot hold the LU's atomic
 * alignment (sbc_write_atomic.c).
 */
void sbc_write_atomic_recheck(struct scsi_lu *lu);
bool sbc_write_atomic_32_enabled(const struct scsi_lu *lu);
/* sbc_write_scattered.c: WRITE SCATTERED(16)/(32) */
enum scsi_result sbc_write_scattered_parse(struct scsi_cmd *cmd);
enum scsi_result sbc_write_scattered_exec(struct scsi_cmd *cmd);
bool sbc_write_scattered_enabled(const struct scsi_lu *lu);
bool sbc_write_scattered_32_enabled(const struct scsi_lu *lu);
void sbc_write_scattered_lock(struct scsi_cmd *cmd);
/* sbc_verify.c */
enum scsi_result sbc_verify_parse(struct scsi_cmd *cmd);
enum scsi_result sbc_verify_exec(struct scsi_cmd *cmd);
/* sbc_compare_and_write.c */
enum scsi_result sbc_compare_and_write_parse(struct scsi_cmd *cmd);
enum scsi_result sbc_compare_and_write_exec(struct scsi_cmd *cmd);
bool sbc_compare_and_write_enabled(const struct scsi_lu *lu);
/* sbc_capacity.c */
enum scsi_result sbc_read_capacity_10_exec(struct scsi_cmd *cmd);
enum scsi_result sbc_read_capacity_16_exec(struct scsi_cmd *cmd);
/* sbc_cache.c: SYNCHRONIZE CACHE, PRE-FETCH */
enum scsi_result sbc_synchronize_cache_parse(struct scsi_cmd *cmd);
enum scsi_result sbc_synchronize_cache_exec(struct scsi_cmd *cmd);
enum scsi_result sbc_pre_fetch_parse(struct scsi_cmd *cmd);
enum scsi_result sbc_pre_fetch_exec(struct scsi_cmd *cmd);
/* sbc_defect.c */
enum scsi_result sbc_read_defect_data_exec(struct scsi_cmd *cmd);
/* sbc_write_same.c */
enum scsi_result sbc_write_same_parse(struct scsi_cmd *cmd);
enum scsi_result sbc_write_same_exec(struct scsi_cmd *cmd);
/* sbc_unmap.c */
enum scsi_result sbc_unmap_parse(struct scsi_cmd *cmd);
enum scsi_result sbc_unmap_exec(struct scsi_cmd *cmd);
void sbc_unmap_lock(struct scsi_cmd *cmd);
bool sbc_thin_provisioning_enabled(const struct scsi_lu *lu);
/* sbc_lba_status.c */
enum scsi_result sbc_get_lba_status_exec(struct scsi_cmd *cmd);
/* sbc_format.c */
enum scsi_result sbc_format_unit_parse(struct scsi_cmd *cmd);
enum scsi_result sbc_format_unit_exec(struct scsi_cmd *cmd);
/* sbc_pi.c: the 32-byte READ/VERIFY/WRITE/WRITE AND VERIFY/WRITE SAME rows exist on type 2 LUs */
bool sbc_pi_type2_enabled(const struct scsi_lu *lu);
/* sbc_sanitize.c */
enum scsi_result sbc_sanitize_parse(struct scsi_cmd *cmd);
enum scsi_result sbc_sanitize_exec(struct scsi_cmd *cmd);

#endif
