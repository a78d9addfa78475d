/*
 * sbcemu SCSI core: the public API for transports (front ends) and the daemon.
 *
 * The core emulates SCSI target devices (SAM-5 "SCSI target device": a set of
 * logical units reached through target ports) made of SBC-4 logical units.
 * It knows nothing of iSCSI PDUs or TCMU ring entries: a transport embeds a
 * struct scsi_cmd in its own task object, fills the identity, CDB and transfer
 * fields, calls scsi_cmd_submit(), supplies Data-Out when asked, and receives
 * the finished command through its scsi_transport_ops.
 *
 * Threading: every function here runs on the one event-loop thread that owns
 * the devices.  Backend I/O runs on worker threads through the scsi_executor
 * the daemon installs; its completions come back to the loop thread.
 */
#ifndef SBCEMU_SCSI_H
#define SBCEMU_SCSI_H

/* The other nodes' target port groups an LU can list (scsi_lu_params.alua_peers). */
#define SCSI_ALUA_PEERS_MAX 8

/* Layering (docs/architecture.md): a backend knows nothing of SCSI. */
#ifdef SBCE_BUILDING_BACKENDS
#error "sbcemu layering: a backend knows nothing of SCSI (backends/ may not include the SCSI core)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "scsi_sense.h"

struct backend;
struct scsi_cmd;
struct scsi_device;
struct scsi_lu;
struct scsi_nexus;
struct scsi_op;
struct scsi_tmf_wait;
struct scsi_resources;

/* A scatter-gather list: buffers owned by whoever set it (the transport). */
struct scsi_sgl {
	struct iovec *iov;
	unsigned iovcnt;
};

#define SCSI_MAX_CDB_LEN 32

/*
 * SPC-4 4.2.5.1 (operation code group): the length of the CDB at cdb that its
 * operation code implies (7Fh: 8 + ADDITIONAL CDB LENGTH; reserved and vendor
 * groups: 16), at most SCSI_MAX_CDB_LEN and max, the bytes there are.  For a
 * transport that hands the core a CDB without its length (TCMU).
 */
size_t scsi_cdb_length(const uint8_t *cdb, size_t max);
#define SCSI_SENSE_BUFFER_MAX 252
/*
 * The largest LUN of a logical unit, and of an element of a conglomerate's
 * LUN (SAM-5 4.7: 14 bits, flat space or simple logical unit addressing).
 * Inside the core an LU is known by its 32-bit LUN id: the LUN, or for a
 * subsidiary LU the administrative element | the subsidiary element << 16
 * (Linux scsilun_to_int gives the same number).
 */
#define SCSI_MAX_LUN 16383

/*
 * What a parse or exec function returns.  SCSI_OK and SCSI_FAILED mean the
 * command is finished (status GOOD, or the status/sense already stored with
 * scsi_cmd_fail()/scsi_cmd_set_status()); SCSI_PENDING means the handler
 * completes it later through scsi_cmd_complete() (usually via
 * scsi_cmd_run_io()).
 */
enum scsi_result {
	SCSI_OK = 0,
	SCSI_PENDING = 1,
	SCSI_FAILED = 2,
};

/* SAM-5 status codes. */
enum scsi_status {
	SCSI_STATUS_GOOD = 0x00,
	SCSI_STATUS_CHECK_CONDITION = 0x02,
	SCSI_STATUS_CONDITION_MET = 0x04,
	SCSI_STATUS_BUSY = 0x08,
	SCSI_STATUS_RESERVATION_CONFLICT = 0x18,
	SCSI_STATUS_TASK_SET_FULL = 0x28,
	SCSI_STATUS_ACA_ACTIVE = 0x30,
	SCSI_STATUS_TASK_ABORTED = 0x40,
};

/* SAM-5 task attributes. */
enum scsi_task_attr {
	SCSI_TASK_SIMPLE,
	SCSI_TASK_ORDERED,
	SCSI_TASK_HEAD_OF_QUEUE,
	SCSI_TASK_ACA,
};

/* Direction of the data transfer as the transport announced it. */
enum scsi_data_dir {
	SCSI_DIR_NONE,
	SCSI_DIR_TO_DEVICE,   /* Data-Out (write) */
	SCSI_DIR_FROM_DEVICE, /* Data-In (read) */
	SCSI_DIR_BIDI,
};

/*
 * Where a command is in its life (docs/architecture.md, "The one scheduler").
 * Between NEW and DONE it sits in its LU's task set, the only place a command
 * waits.
 */
enum scsi_cmd_state {
	SCSI_CMD_STATE_NEW,
	SCSI_CMD_STATE_WAIT_BUFFER,   /* admitted; waits for buffer room before its Data-Out is asked for */
	SCSI_CMD_STATE_WAIT_DATA_OUT, /* the transport is collecting Data-Out */
	SCSI_CMD_STATE_WAIT_START,    /* ready; waits for its task attribute, LBA locks, quiesce, buffer room */
	SCSI_CMD_STATE_RUNNING,       /* executing (possibly on a worker) */
	SCSI_CMD_STATE_DONE,
};

/* Logical unit kinds (bit mask, so opcode rows can name the kinds they serve). */
/* The ASYMMETRIC ACCESS STATE of a target port group (SPC-4 6.37, REPORT TARGET PORT GROUPS). */
enum scsi_alua_state {
	SCSI_ALUA_ACTIVE_OPTIMIZED = 0x0,
	SCSI_ALUA_ACTIVE_NON_OPTIMIZED = 0x1,
	SCSI_ALUA_STANDBY = 0x2,
	SCSI_ALUA_UNAVAILABLE = 0x3,
	SCSI_ALUA_TRANSITIONING = 0xf,
};

/* INQUIRY TPGS (SPC-4 6.4.2): which asymmetric access transitions the LU supports. */
#define SCSI_TPGS_IMPLICIT 0x1
#define SCSI_TPGS_EXPLICIT 0x2

enum scsi_lu_kind {
	SCSI_LU_CONVENTIONAL = 1u << 0,
	SCSI_LU_ZBC_HM = 1u << 1,
	SCSI_LU_ZBC_HA = 1u << 2,
	SCSI_LU_ADMIN = 1u << 3, /* administrative LU of a conglomerate */
};

/* Unit attention conditions, kept per I_T nexus and LU (SAM-5 5.14). */
enum scsi_ua {
	SCSI_UA_POWER_ON_RESET,             /* 29/00 */
	SCSI_UA_BUS_DEVICE_RESET,           /* 29/03: LOGICAL UNIT RESET */
	SCSI_UA_I_T_NEXUS_LOSS,             /* 29/07 */
	SCSI_UA_MODE_PARAMETERS_CHANGED,    /* 2A/01 */
	SCSI_UA_RESERVATIONS_PREEMPTED,     /* 2A/03 */
	SCSI_UA_RESERVATIONS_RELEASED,      /* 2A/04 */
	SCSI_UA_REGISTRATIONS_PREEMPTED,    /* 2A/05 */
	SCSI_UA_CAPACITY_DATA_HAS_CHANGED,  /* 2A/09 */
	SCSI_UA_REPORTED_LUNS_DATA_CHANGED, /* 3F/0E */
	SCSI_UA_SUBSIDIARY_BINDING_CHANGED, /* 3F/1A, on an administrative LU (core/conglomerate.c) */
	SCSI_UA_INQUIRY_DATA_CHANGED,       /* 3F/03 */
	SCSI_UA_COMMANDS_CLEARED_BY_ANOTHER_INITIATOR, /* 2F/00 */
	SCSI_UA_NOT_READY_TO_READY_CHANGE,  /* 28/00 */
	SCSI_UA_PRIORITY_CHANGED,           /* 2A/08 */
	SCSI_UA_ASYMMETRIC_ACCESS_STATE_CHANGED, /* 2A/06 */
	SCSI_UA_INFORMATIONAL_EXCEPTION,    /* MRIE 2h: the exception's own ASC/ASCQ (spc_ie.c) */
	SCSI_UA_COUNT
};

/* Task management functions (SAM-5 7). */
enum scsi_tmf_function {
	SCSI_TMF_ABORT_TASK,
	SCSI_TMF_ABORT_TASK_SET,
	SCSI_TMF_CLEAR_TASK_SET,
	SCSI_TMF_LOGICAL_UNIT_RESET,
	SCSI_TMF_I_T_NEXUS_RESET,
	SCSI_TMF_TARGET_RESET, /* every LU of the device (iSCSI's TARGET WARM RESET) */
	SCSI_TMF_TARGET_COLD_RESET,
};

/* Task management service responses (SAM-5 7.1). */
enum scsi_tmf_response {
	SCSI_TMF_FUNCTION_COMPLETE,
	SCSI_TMF_FUNCTION_SUCCEEDED,
	SCSI_TMF_FUNCTION_REJECTED,
	SCSI_TMF_INCORRECT_LOGICAL_UNIT_NUMBER,
	SCSI_TMF_SERVICE_DELIVERY_FAILURE,
	/* Not SAM: a fault rule (ignore-abort-task) lost the request; the transport sends nothing. */
	SCSI_TMF_NO_RESPONSE,
};

/*
 * What a transport (a front end: iSCSI, TCMU) provides.  All callbacks run on
 * the loop thread.
 */
struct scsi_transport_ops {
	/*
	 * The command needs scsi_cmd_data_out_want(cmd) bytes of Data-Out,
	 * those from byte cmd->data_out_offset of the Data-Out Buffer on (all
	 * cmd->data_length bytes unless the command streams its Data-Out).
	 * The transport collects them into buffers it owns, hands them over
	 * with scsi_cmd_set_data_out(), then calls scsi_cmd_data_out_ready(cmd).
	 * If the transport already holds them all at submit time it may hand
	 * them over before scsi_cmd_submit(); the core then does not call
	 * need_data_out.
	 */
	void (*need_data_out)(struct scsi_cmd *cmd);
	/*
	 * Optional: memory for len bytes of Data-In, owned by the transport
	 * (the TCMU data area, or a buffer the iSCSI Data-In PDUs point into).
	 * Sets *sgl to at most len bytes of it and returns 0, or a negative
	 * errno.  Without it the core allocates Data-In itself.  The core
	 * writes the Data-In there (through one bounce copy if the handler
	 * needs it contiguous and the transport gave several pieces).
	 */
	int (*alloc_data_in)(struct scsi_cmd *cmd, uint32_t len, struct scsi_sgl *sgl);
	/*
	 * The command is finished: status, sense, Data-In and residual are
	 * final (cmd->data_in holds data_in_len bytes, in the transport's own
	 * buffer when it provided alloc_data_in).  The transport sends them and
	 * then calls scsi_cmd_release(cmd).
	 */
	void (*complete)(struct scsi_cmd *cmd);
	/*
	 * The command was aborted by a task management function or a reset: no
	 * status is to be sent.  The transport calls scsi_cmd_release(cmd).
	 */
	void (*aborted)(struct scsi_cmd *cmd);
	/* Longest sense data the transport can carry (SPC-4 4.5.1: 252; TCMU's ring entry: 96). */
	uint32_t max_sense_len;
	/* SPC-4 7.6.1 (table 362): PROTOCOL IDENTIFIER (iSCSI 5h, SAS 6h, ...), for VPD designators. */
	uint8_t protocol_identifier;
	/*
	 * SPC-4 6.6.2: the VERSION DESCRIPTOR standard INQUIRY data claims for
	 * the transport protocol (iSCSI 0960h, RFC 7143); 0 when the transport
	 * cannot tell which protocol reaches the initiator (TCMU: any LIO
	 * fabric), and then none is claimed.
	 */
	uint16_t version_descriptor;
	/*
	 * The protocol's TransportID codec (SPC-4 7.6.4): encode an initiator
	 * port name into tid (returns its length, 0 if it does not fit), and
	 * decode a TransportID of this protocol (PERSISTENT RESERVE OUT
	 * parameter data) into the initiator port name (returns false if it is
	 * not one this protocol accepts).  NULL: the transport has no
	 * TransportIDs (then PR OUT with TransportIDs is refused).
	 */
	size_t (*transport_id_encode)(const char *initiator_port_name, uint8_t *tid, size_t cap);
	bool (*transport_id_decode)(const uint8_t *tid, size_t len, char *initiator_port_name, size_t cap);
	/*
	 * Optional: close the connection that carried cmd as a pulled cable
	 * would (the drop-connection fault rule): no response goes out, and the
	 * I_T nexus is lost with its commands, cmd included (aborted).  Called
	 * from scsi_device_alarm(), never from inside a call into the core.
	 * NULL: the transport cannot (the command then stays held, as by a
	 * hold rule).
	 */
	void (*drop_connection)(struct scsi_cmd *cmd);
};

enum scsi_residual_kind {
	SCSI_RESIDUAL_NONE,
	SCSI_RESIDUAL_UNDERFLOW,
	SCSI_RESIDUAL_OVERFLOW,
};

/*
 * A job that runs backend I/O on a worker thread.  work() runs on a worker and
 * may touch only the backend and the buffers of its command; done() runs on
 * the loop thread afterwards.
 *
 * work_nowait (NULL: none) is work() done at once on the thread that
 * submits, when that needs no waiting (the data in the page cache, the
 * backend's BE_IO_NOWAIT): it returns true when it did the whole of work(),
 * false when it would have waited, leaving what work() reads as it was
 * (work() then runs as usual).  The executor decides whether to try it and
 * calls done() after the call that submitted returns, never inside it.
 */
struct scsi_io_job {
	struct scsi_io_job *next; /* for the executor's queues */
	void (*work)(struct scsi_io_job *job);
	bool (*work_nowait)(struct scsi_io_job *job);
	/*
	 * work_async (NULL: none) starts work() without waiting, on the thread
	 * that submits (the backend's submit_rw): true when it started, after
	 * which the backend's completion calls scsi_io_job_complete() once,
	 * from any thread; false when it did not (work() then runs as usual).
	 * Only an executor with submit_async tries it.
	 */
	bool (*work_async)(struct scsi_io_job *job);
	void (*done)(struct scsi_io_job *job);
	struct scsi_executor *executor; /* [executor] set by submit_async */
};

/* Any thread: the backend call a job's work_async started has finished (done() follows on the loop thread). */
void scsi_io_job_complete(struct scsi_io_job *job);

/* A node of the core's intrusive heaps (sched/heap.h); zeroed: in no heap. */
struct scsi_heap_node {
	struct scsi_heap_node *child, *next, *prev;
};

/* The heap: its first node, the order, the count (sched/heap.h). */
struct scsi_heap {
	struct scsi_heap_node *root;
	bool (*before)(const struct scsi_heap_node *a, const struct scsi_heap_node *b);
	unsigned count;
};

/*
 * A time at which the core must act (sched/timer.c): on the device's clock,
 * fired from scsi_device_alarm(), never inside another call into the core.
 */
struct scsi_timer {
	struct scsi_heap_node node;
	uint64_t when_ns;
	uint64_t seq;                  /* arming order: equal times fire in it */
	void (*fire)(struct scsi_timer *t);
};

/*
 * The ranks of the service queues (sched/service_queue.c): 0 goes first
 * (HEAD OF QUEUE, or a command a duration limit policy hurries), then the
 * command priorities 1 (highest) to 15 (lowest), then commands without a
 * priority (SAM-5 8.7: COMMAND PRIORITY 0).
 */
#define SCSI_SERVICE_LEVELS 17

/* A command's place in a service queue; zeroed: in none. */
struct scsi_service_entry {
	struct scsi_service_entry *prev, *next;             /* the queue's arrival order (aging) */
	struct scsi_service_entry *level_prev, *level_next; /* its level's arrival order (no deadline) */
	struct scsi_heap_node deadline_node;                 /* the queue's deadline heap (a deadline) */
	uint64_t queued_ns;
	uint64_t deadline_ns;                                /* 0: none */
	uint64_t seq;
	uint8_t level;
	bool queued;
};

/*
 * Where commands wait for service, in the order they get it: commands
 * waiting longer than the aging bound first (oldest first), then by level,
 * within a level those with a deadline by deadline, then the rest in
 * arrival order (or, for a drive that reorders, by access time).
 */
struct scsi_service_queue {
	struct scsi_service_entry *head, *tail;
	struct scsi_service_entry *level_head[SCSI_SERVICE_LEVELS], *level_tail[SCSI_SERVICE_LEVELS];
	struct scsi_heap deadlines;
	unsigned count;
	uint64_t seq;
};

/*
 * Installed by the daemon; a synchronous one (work then done) serves unit
 * tests.  The core hands a command's jobs to submit() at most capacity at a
 * time and keeps the rest itself, by priority and deadline (sched/dispatch.c),
 * so that a high-priority command never waits behind a worker queue of
 * lower ones.  Jobs of other kinds (background operations, flushes) go to
 * submit() at once.
 */
struct scsi_executor {
	void (*submit)(struct scsi_executor *ex, struct scsi_io_job *job);
	/*
	 * NULL: no asynchronous jobs.  Tries job->work_async on the loop
	 * thread: true when it started (complete() then comes from any thread,
	 * and done() runs on the loop thread after it), false when it did not.
	 * A started job holds no worker, so it does not count against
	 * capacity; at most async_capacity are started at a time, the rest
	 * wait in async_waiting, by priority and deadline.
	 */
	bool (*submit_async)(struct scsi_executor *ex, struct scsi_io_job *job);
	void (*complete)(struct scsi_executor *ex, struct scsi_io_job *job);
	/*
	 * NULL: not offered.  From any thread: job->done() is to run on the
	 * loop thread soon; the job does no work and is no command's (the
	 * core's way to hear of an event on another thread: spc_pr_peer.c).
	 */
	void (*post)(struct scsi_executor *ex, struct scsi_io_job *job);
	unsigned capacity;                /* [daemon] 0: no limit */
	unsigned in_flight;               /* [core] command jobs submitted, not done */
	struct scsi_service_queue waiting; /* [core] command jobs not yet submitted */
	unsigned async_capacity;          /* [daemon] 0: no limit */
	unsigned async_in_flight;         /* [core] command jobs started asynchronously, not done */
	struct scsi_service_queue async_waiting; /* [core] command jobs that wait for async_capacity */
};

/* Executes work() then done() on the caller's thread. */
extern struct scsi_executor scsi_executor_inline;

/* LBA locks (lba_lock.c): how a command shares the blocks it touches. */
enum scsi_lba_lock_mode {
	SCSI_LBA_LOCK_NONE,
	SCSI_LBA_LOCK_SHARED,    /* reads: beside other readers */
	SCSI_LBA_LOCK_WRITE,     /* writes: alone on their blocks */
	SCSI_LBA_LOCK_EXCLUSIVE, /* read-modify-write and atomic writes: alone (also with lba_locks = lu) */
};

struct scsi_lba_range {
	uint64_t lba;
	uint64_t nblocks;
};

#define SCSI_LBA_LOCK_RANGES 8 /* more ranges than this are locked as their span */

struct scsi_lba_lock {
	enum scsi_lba_lock_mode mode;
	unsigned nranges;
	struct scsi_lba_range ranges[SCSI_LBA_LOCK_RANGES];
	bool held;
	struct scsi_lba_lock *next_holder; /* the LU's holders */
};

struct scsi_lba_locks_elsewhere; /* a command's locks on other LUs of its device (lba_lock.c) */

/*
 * The command duration limits a command carries (SPC-6 T2A/T2B, SPC-5 A/B;
 * sched/duration_limits.c), taken from the mode page its DLD selects when
 * it arrives.  Times in nanoseconds, 0: no such limit.
 */
struct scsi_cmd_limits {
	uint8_t page;                  /* 0: none; else the subpage of the Control mode page (03h, 04h, 07h, 08h) */
	uint8_t descriptor;            /* 1..7: the DLD, or the one continue-next-limit moved to */
	uint8_t named_page, named_descriptor; /* what the DLD named: the statistics count it there */
	bool guideline_passed;         /* some descriptor's guideline passed (continue-next-limit keeps it) */
	uint64_t max_inactive_ns;
	uint64_t max_active_ns;
	uint64_t guideline_ns;
	uint8_t max_inactive_policy, max_active_policy, guideline_policy;
	bool inactive_missed, active_missed, guideline_missed;
	bool ended;                    /* a policy ended it: nothing more runs, it completes with ... */
	uint8_t end_sense_key;         /* ... this sense: ABORTED COMMAND (CHECK CONDITION) or COMPLETED (GOOD) */
	uint16_t end_asc_ascq;
};

/*
 * The transport-neutral command.  Fields marked [transport] are written by the
 * transport before scsi_cmd_submit(); [core] fields are written by the core.
 */
struct scsi_cmd {
	/* identity [transport] */
	struct scsi_nexus *nexus;
	uint64_t lun; /* SAM 8-byte LUN, as a 64-bit big-endian value */
	uint64_t tag; /* the transport's task tag (SAM-5 4.13), opaque to the core */
	const struct scsi_transport_ops *transport;

	/* CDB [transport] */
	uint8_t cdb[SCSI_MAX_CDB_LEN];
	uint8_t cdb_len; /* bytes the transport received (a transport may pad a shorter CDB) */
	enum scsi_task_attr task_attr;
	uint8_t command_priority;

	/* transfer [transport] */
	enum scsi_data_dir dir;
	/*
	 * The size of the application client's Data-In or Data-Out buffer
	 * (SAM-5 5.1, Execute Command: Data-In / Data-Out Buffer Size), as the
	 * transport carried it; the residual is counted against it.
	 */
	uint32_t expected_length;
	/*
	 * A transport-level failure found before or while the Data-Out arrived
	 * (scsi_cmd_fail_transport()): the command ends with CHECK CONDITION
	 * and this sense instead of executing.
	 */
	bool transport_failed;
	struct scsi_sense_info transport_sense;

	/* Data-Out: the transport's buffers (scsi_cmd_set_data_out) and the core's view of them */
	struct scsi_sgl data_out_sgl;  /* [transport] */
	uint32_t data_out_len;         /* [transport] bytes in data_out_sgl */
	uint8_t *data_out;             /* [core] the same bytes contiguous (the iovec itself when there is one) */
	uint8_t *data_out_bounce;      /* [core] what data_out points to when it had to be gathered */

	/* parsed from the CDB [core] */
	struct scsi_lu *lu;
	const struct scsi_op *op;
	uint64_t lba;
	uint32_t nblocks;
	uint32_t data_length;          /* Data-Out bytes the command requires */
	/*
	 * Streamed Data-Out (scsi_cmd_next_data_out): 0 = the whole Data-Out
	 * at once; else the transport collects it in pieces of at most this
	 * many bytes, data_out holding the bytes from data_out_offset on.
	 */
	uint32_t data_out_window;
	uint32_t data_out_offset;
	enum scsi_result (*data_out_next)(struct scsi_cmd *cmd);
	uint32_t allocation_length;
	bool fua;
	bool dpo;
	uint8_t protect;               /* RDPROTECT / WRPROTECT / VRPROTECT */
	uint8_t group_number;
	/* 32-byte CDBs (sbc_pi.h): the expected PI tags */
	bool pi_cdb32;
	uint32_t pi_ref_tag;           /* EXPECTED INITIAL LOGICAL BLOCK REFERENCE TAG */
	uint16_t pi_app_tag;           /* EXPECTED LOGICAL BLOCK APPLICATION TAG */
	uint16_t pi_app_mask;          /* LOGICAL BLOCK APPLICATION TAG MASK */

	/* result [core] */
	uint8_t *data_in;              /* where the Data-In is: the transport's buffer, or the core's */
	uint32_t data_in_len;          /* bytes the device server transfers */
	struct scsi_sgl data_in_sgl;   /* the transport's Data-In buffers (alloc_data_in), or empty */
	uint8_t *data_in_core;         /* Data-In the core allocated (freed by scsi_cmd_release) */
	struct iovec data_in_core_iov; /* data_in_core as a one-piece list */
	struct scsi_sgl io_sgl;        /* the Data-In buffers the READ data path fills (scsi_cmd_data_in_buffers) */
	uint8_t status;                /* enum scsi_status */
	int backing_errno;             /* the backing store's error that failed it (scsi_cmd_fail_errno), 0: none */
	struct scsi_sense_info sense_info;
	uint8_t sense[SCSI_SENSE_BUFFER_MAX];
	uint32_t sense_len;
	enum scsi_residual_kind residual_kind;
	uint32_t residual;

	/* plumbing [core] */
	enum scsi_cmd_state state;
	bool aborted;
	bool started;                  /* exec ran (counts in the LU's running commands until completion) */
	bool admitted;                 /* counted in the LU's queue and the daemon's commands */
	struct scsi_cmd *ts_prev, *ts_next; /* the LU's task set, in arrival order */
	struct scsi_lba_lock lock;
	struct scsi_lba_locks_elsewhere *locks_elsewhere; /* an EXTENDED COPY between LUs: its locks there, or NULL */
	bool quiesce_released;         /* OP_QUIESCE: younger commands may start (scsi_cmd_unquiesce) */
	uint64_t buffer_need;          /* buffer bytes the command will hold (scsi_resources) */
	uint64_t buffer_held;          /* ... reserved so far, returned by scsi_cmd_release */
	uint32_t lu_generation;        /* the LU's format generation its parse saw */
	uint32_t faults;               /* injected faults that hit this command (SCSI_FAULT_*, scsi_internal.h) */
	uint32_t fault_tear_blocks;    /* SCSI_FAULT_TEAR_ATOMIC: the blocks written before the tear */
	bool fault_held;               /* waits on its LU's held list (a hold or delay fault rule, fault_rules.c) */
	uint32_t fault_held_rule;      /* ... for this rule */
	struct scsi_timer fault_timer; /* ... until it fires (a delay rule), else until aborted or the rule goes */
	bool fault_drop;               /* ... then its connection is dropped (drop-connection) */
	struct scsi_cmd *fault_held_next;
	struct scsi_io_job io_job;
	void (*io_work)(struct scsi_cmd *cmd);
	bool (*io_work_nowait)(struct scsi_cmd *cmd);
	bool (*io_work_async)(struct scsi_cmd *cmd);
	bool io_async;                     /* io_job was started asynchronously: it holds no executor slot */
	enum scsi_result (*io_after)(struct scsi_cmd *cmd);
	struct scsi_tmf_wait *tmf_wait;          /* the TMF waiting for this command to end */
	void *handler_state;               /* private to the executing handler */
	void (*handler_state_free)(void *state);
	void (*handler_end)(struct scsi_cmd *cmd); /* the handler sees it end, status final (not when aborted) */
	bool copy_abort;                   /* COPY OPERATION ABORT named this copy: it stops before its next piece */
	uint64_t start_ns;                 /* arrival (scsi_cmd_submit), on the device's clock */
	uint64_t done_ns;                  /* completion (scsi_cmd_complete), read once for all its counters */

	/* priority and time [core] (docs/architecture.md, "Priority and time") */
	uint8_t service_level;             /* its rank in the service queues (SCSI_SERVICE_LEVELS) */
	uint64_t deadline_ns;              /* the earliest time a duration limit names; 0: none */
	uint64_t active_ns;                /* when it began to be processed (the medium took it, or exec); 0: not yet */
	struct scsi_service_entry service; /* waiting for the medium or a worker ... */
	struct scsi_service_queue *service_queue; /* ... in this queue */
	struct scsi_timer media_timer;     /* the end of its time on the medium (media/media_queue.c) */
	bool media_busy;                   /* it occupies one of the medium's servers until media_timer */
	bool media_hold;                   /* done, its response held until media_timer */
	struct scsi_cmd_limits limits;     /* its command duration limits (sched/duration_limits.c) */
	struct scsi_timer limit_timer;     /* ... the next time one of them is due */
};

/* ---- configuration of a logical unit (filled by config/, read by the core) ---- */

/*
 * The media latency model of an LU (protocol/scsi/media/media_model.h,
 * docs/latency.md): when each command that touches the medium completes.
 * The data goes to the backing file at once whatever the model says.
 * Times in microseconds, rates in MB/s (10^6 bytes per second).
 */
enum scsi_latency_model {
	SCSI_LATENCY_NONE,         /* as fast as the backing file */
	SCSI_LATENCY_FIXED,        /* read_us / write_us / other_us */
	SCSI_LATENCY_DISTRIBUTION, /* log-normal: mean_us, p99_us, seed */
	SCSI_LATENCY_ROTATING,     /* a disk drive: rpm, seeks, transfer rate by radius */
};

enum scsi_cdl_pages {
	SCSI_CDL_NONE,
	SCSI_CDL_T2, /* reads: Command Duration Limit T2A (0Ah/07h), writes: T2B (0Ah/08h) */
	SCSI_CDL_AB, /* reads: Command Duration Limit A (0Ah/03h), writes: B (0Ah/04h) */
};

struct scsi_latency_params {
	enum scsi_latency_model model;
	uint32_t servers;          /* fixed, distribution: commands served at once; 0 = any number */
	uint32_t aging_ms;         /* a command queued for the medium this long goes first; 0: 1000 */
	/* fixed */
	uint32_t read_us, write_us, other_us;
	/* distribution */
	uint32_t mean_us, p99_us;
	uint64_t seed;             /* also rotating: the starting rotational position */
	/* rotating */
	uint32_t rpm;
	uint32_t seek_track_us;    /* track-to-track (one cylinder) seek */
	uint32_t seek_avg_us;      /* average seek (a third of the stroke) */
	uint32_t seek_full_us;     /* full-stroke seek */
	uint32_t head_switch_us;
	uint32_t overhead_us;      /* command overhead, every command */
	uint32_t rate_outer_mbs;   /* sustained transfer rate at LBA 0 (outer tracks) */
	uint32_t rate_inner_mbs;   /* ... at the last LBA (inner tracks) */
	uint32_t cylinders;
	/* rotating, zoned LUs: the media cache of conventional zones; 0 = none */
	uint32_t smr_cache_mib;
	uint32_t smr_clean_mbs;    /* rate at which a full cache is cleaned (the drive stalls) */
};

struct scsi_lu_params {
	enum scsi_lu_kind kind;
	uint32_t lun;
	uint32_t logical_block_size;  /* 512 or 4096 */
	uint8_t lbppbe;               /* LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT */
	uint64_t num_blocks;          /* capacity in logical blocks */
	char vendor[9];               /* T10 VENDOR IDENTIFICATION, space padded on the wire */
	char product[17];
	char revision[5];
	char serial[33];
	uint64_t naa;                 /* NAA IEEE Registered (type 6) high 64 bits; 0 = derive */
	bool thin_provisioning;       /* LBPME: UNMAP punches holes; unmapped reads zero */
	bool write_protect;
	bool removable;
	uint32_t max_transfer_length; /* blocks; Block Limits VPD */
	uint32_t optimal_transfer_length;
	uint32_t max_unmap_lba_count;
	uint32_t max_unmap_descriptors;
	uint32_t max_compare_and_write; /* blocks; 0 disables COMPARE AND WRITE */
	uint64_t max_write_same_length;
	/*
	 * WRITE ATOMIC (sbc_write_atomic.c): the Block Limits VPD atomic
	 * fields, in logical blocks.  WRITE ATOMIC is supported when
	 * max_atomic_transfer_length or max_atomic_transfer_length_with_boundary
	 * is nonzero.
	 */
	uint32_t max_atomic_transfer_length;
	uint32_t atomic_alignment;                 /* 0: any LBA */
	uint32_t atomic_transfer_length_granularity; /* 0: any length */
	uint32_t max_atomic_transfer_length_with_boundary;
	uint32_t max_atomic_boundary_size;
	/*
	 * WRITE SCATTERED (sbc_write_scattered.c) and the Block Limits
	 * Extension VPD page; the limits are in logical blocks, 0 = no limit.
	 */
	bool write_scattered;
	bool write_scattered_atomic;  /* non-standard: all ranges of a WRITE SCATTERED as one atomic unit */
	/*
	 * Accept WRITE ATOMIC(32) and WRITE SCATTERED(32) on LUs without
	 * type 2 protection (non-standard, as scsi_debug does for WRITE
	 * SCATTERED(32)); off: SBC-4's rule, the 32-byte forms need type 2.
	 */
	bool allow_32_byte_cdbs;
	uint32_t max_scattered_lba_range_transfer_length;
	uint16_t max_scattered_lba_range_descriptors;
	uint32_t max_scattered_transfer_length;
	const char *state_dir;        /* where mode pages and PR state persist */
	struct scsi_latency_params latency; /* zeroed: SCSI_LATENCY_NONE */
	/*
	 * Command duration limits (SPC-6, sched/duration_limits.c): which mode
	 * pages the DLD field of READ(16)/(32) and WRITE(16)/(32) and WRITE
	 * SCATTERED(16) selects from; SCSI_CDL_NONE: the DLD bits are ignored.
	 */
	enum scsi_cdl_pages cdl_pages;
	/* zoned LUs (SCSI_LU_ZBC_HM / SCSI_LU_ZBC_HA; zbc.h) */
	uint64_t zone_size;           /* blocks, a power of two; 0 = 256 MiB worth of blocks */
	uint32_t conventional_zones;  /* the first zones are conventional */
	uint32_t max_open_zones;      /* MAXIMUM NUMBER OF OPEN SWR ZONES; 0 = no limit (FFFFFFFFh) */
	bool urswrz;                  /* unrestricted reads of sequential write required zones */
	uint32_t realm_zones;         /* ZBC-2 zone domains (kind zbc-zd, on SCSI_LU_ZBC_HM): zones per realm; 0 = none */
	uint8_t active_domain;        /* the zone domain (0 or 1) every realm starts active in */
	uint32_t gap_zones;           /* zbc-zd: gap zones between the two domains */
	bool sobr_zones;              /* zbc-zd: domain 0 is sequential or before required, not conventional */
	/*
	 * Protection information (sbc_pi.h, docs/pi.md): 0 = the LU has no PI
	 * support; 1..3 = it supports PI and is formatted with that type
	 * (with 2^p_i_exponent intervals per block) until a FORMAT UNIT
	 * changes it.  The PI lives in the backend after the data
	 * (scsi_lu_backing_bytes).
	 */
	uint8_t protection_type;
	uint8_t p_i_exponent;
	/*
	 * The task set (task_set.c): at most queue_depth commands (0: no
	 * limit) before new ones get TASK SET FULL (SAM-5 5.3); each
	 * I_T nexus always gets one in.  lba_locks_whole_lu: every LBA lock
	 * covers the whole LU, as one LU-wide lock would (for the comparison
	 * benchmark, scripts/bench-lba-locks.sh).
	 */
	uint32_t queue_depth;
	bool lba_locks_whole_lu;
	/*
	 * Device profiles (lu_profile.c, docs/profiles.md): what the LU leaves
	 * out or gets wrong on purpose.  minimal_command_set: only the rows
	 * flagged OP_MINIMAL and the VPD pages SPC-4 makes mandatory (00h,
	 * 83h); quirks: SCSI_QUIRK_* misbehaviours; product_type: the Block
	 * Device Characteristics VPD PRODUCT TYPE (SBC-4 6.6.2; 05h Secure
	 * Digital card, ...).
	 */
	bool minimal_command_set;
	uint32_t quirks;
	uint8_t product_type;
	/*
	 * Asymmetric logical unit access (SPC-4 5.15, spc/spc_alua.c):
	 * alua_tpgs is the INQUIRY TPGS field (0 none, 1 implicit, 2 explicit,
	 * 3 both); target_port_group the group of the device's target port
	 * (Device Identification VPD page, REPORT TARGET PORT GROUPS); the LU
	 * starts in alua_state there; a transition shows as transitioning
	 * (02/04/0A) for alua_transition_ms first.
	 */
	uint8_t alua_tpgs;
	uint16_t target_port_group;
	uint8_t alua_state;           /* enum scsi_alua_state */
	uint32_t alua_transition_ms;
	/*
	 * A backend still being opened (backend_ops.ready false) keeps the
	 * group in standby rather than the LU becoming ready, and the LU's
	 * group moves to active/optimized when it is (implicitly): the node
	 * that has the medium is the active one (docs/rbd.md, rbd_unavailable
	 * = standby).  Needs alua_tpgs with implicit.
	 */
	bool alua_standby_until_backend;
	/*
	 * With alua_standby_until_backend: the target port groups of the other
	 * nodes serving the same medium, each with the relative target port
	 * identifier of its one port.  REPORT TARGET PORT GROUPS lists them
	 * beside the LU's own group, in the states this node sees: the group
	 * the backend names as the medium's holder (backend_ops.holder_note,
	 * scsi_alua_holder_note) active/optimized, the others standby.
	 */
	uint8_t alua_peer_count;
	struct scsi_alua_peer {
		uint16_t group;
		uint16_t relative_target_port;
	} alua_peers[SCSI_ALUA_PEERS_MAX];
	/* Default values of mode page fields (spc_mode_pages.c; PC = 10b), where they differ from the device's own. */
	struct scsi_mode_defaults {
		uint32_t set;                    /* bit i: field i (enum scsi_mode_field) has a value */
		uint8_t value[6];
	} mode_defaults;
};

/* The mode page fields whose defaults an LU may be given (spc_mode_pages.c names page, byte and bits). */
enum scsi_mode_field {
	SCSI_MODE_WCE,     /* Caching: WRITE CACHE ENABLE */
	SCSI_MODE_RCD,     /* Caching: READ CACHE DISABLE */
	SCSI_MODE_D_SENSE, /* Control: descriptor format sense data */
	SCSI_MODE_SWP,     /* Control: SOFTWARE WRITE PROTECT */
	SCSI_MODE_DEXCPT,  /* Informational Exceptions Control: DISABLE EXCEPTION CONTROL */
	SCSI_MODE_MRIE,    /* Informational Exceptions Control: METHOD OF REPORTING INFORMATIONAL EXCEPTIONS */
	SCSI_MODE_FIELD_COUNT,
};

/*
 * Misbehaviours of cheap USB-SATA bridges, as Linux works around them
 * (include/linux/usb_usual.h US_FL_*, include/scsi/scsi_devinfo.h BLIST_*,
 * drivers/scsi/sd.c); each one on its own (docs/profiles.md, usb-bridge).
 */
enum scsi_quirk {
	SCSI_QUIRK_NO_READ_CAPACITY_16 = 1u << 0, /* SERVICE ACTION IN(16) is INVALID COMMAND OPERATION CODE */
	SCSI_QUIRK_FIX_CAPACITY = 1u << 1,        /* READ CAPACITY returns the block count as the last LBA */
	SCSI_QUIRK_NO_VPD = 1u << 2,              /* INQUIRY EVPD = 1: INVALID FIELD IN CDB for every page */
	SCSI_QUIRK_VPD_TRUNCATED = 1u << 3,       /* VPD pages cut after 8 bytes, PAGE LENGTH unchanged */
	SCSI_QUIRK_NO_MODE_SENSE_10 = 1u << 4,    /* MODE SENSE(10) / MODE SELECT(10) not supported */
	SCSI_QUIRK_NO_SYNC_CACHE = 1u << 5,       /* SYNCHRONIZE CACHE(10)/(16) not supported */
	SCSI_QUIRK_NO_RESIDUAL = 1u << 6,         /* a short Data-In is reported with no residual */
	SCSI_QUIRK_NO_RSOC = 1u << 7,             /* REPORT SUPPORTED OPERATION CODES not supported */
	SCSI_QUIRK_NO_SAT = 1u << 8,              /* LOG SENSE/SELECT, SEND/RECEIVE DIAGNOSTIC not supported */
	SCSI_QUIRK_ALL = (1u << 9) - 1,
};

/*
 * The backend bytes an LU of num_blocks logical blocks needs: the data, then
 * for an LU with PI support room for the tuples of the finest protection
 * interval (512 bytes: block_size / 64 bytes per block).  And the other way
 * round: the logical blocks a backend of bytes holds.
 */
static inline uint64_t scsi_lu_backing_bytes(uint32_t block_size, uint64_t num_blocks, bool pi)
{
	return num_blocks * (block_size + (pi ? block_size / 64 : 0));
}

static inline uint64_t scsi_lu_blocks_in_backing(uint32_t block_size, uint64_t bytes, bool pi)
{
	return bytes / (block_size + (pi ? block_size / 64 : 0));
}

/* ---- resources: what all the devices of a daemon may hold at once ---- */

/*
 * Backpressure (docs/architecture.md, "Backpressure"; the [daemon] keys in
 * docs/config.md).  0 in a field means no limit.
 */
struct scsi_limits {
	uint32_t max_commands;          /* commands in every task set together; more: TASK SET FULL / BUSY */
	uint64_t max_buffer_bytes;      /* Data-Out and Data-In buffers of all commands together */
	uint64_t max_nexus_buffer_bytes; /* ... of the commands of one I_T nexus */
};

/*
 * The accounting the devices share.  A command that would take more buffer
 * room than is left waits in its task set (no Data-Out is asked for, it does
 * not start) until commands holding room are released; one command alone
 * always fits, however large.
 */
struct scsi_resources *scsi_resources_create(const struct scsi_limits *limits);
void scsi_resources_destroy(struct scsi_resources *res);
/* Commands and buffer bytes held now (for logs and tests). */
void scsi_resources_usage(const struct scsi_resources *res, uint32_t *commands, uint64_t *buffer_bytes);

/* ---- devices, logical units and nexuses ---- */

/*
 * A SCSI target device (SAM-5 4.6): the logical units one front end
 * exposes under one name (an iSCSI target, a TCMU backstore).  name is
 * used in designators and persistent state paths.
 * res (may be NULL: no limits) is shared by the devices of one daemon and
 * must outlive them.
 */
struct scsi_device *scsi_device_create(const char *name, struct scsi_executor *executor,
				       struct scsi_resources *res);
void scsi_device_destroy(struct scsi_device *dev);
/*
 * Makes everything the device's LUs acknowledged durable (backend flush,
 * zone state), on the executor; done(arg, err) runs on the loop thread with
 * 0 or the first negative errno once every LU is done (possibly before
 * return).  For a clean shutdown, after the front ends drained.
 */
void scsi_device_flush(struct scsi_device *dev, void (*done)(void *arg, int err), void *arg);
/*
 * Stops taking commands from the other nodes that serve its LUs' media
 * (backend_ops.serve, spc_pr_peer.c), whose arrival the executor's post()
 * reports: call before the executor goes.  Commands already taken finish.
 */
void scsi_device_stop_peers(struct scsi_device *dev);

/*
 * Adds a logical unit served by an open backend (the LU takes ownership of it).
 * Returns NULL and writes a message into err on failure; the backend is then
 * still the caller's to close.
 */
struct scsi_lu *scsi_lu_create(struct scsi_device *dev, const struct scsi_lu_params *params,
			       struct backend *backend, char *err, size_t errlen);
struct scsi_lu *scsi_device_find_lu(struct scsi_device *dev, uint64_t lun);
/* The LU with this LUN id (SCSI_MAX_LUN), or NULL. */
struct scsi_lu *scsi_device_lu(const struct scsi_device *dev, uint32_t lun);
/*
 * The LUN ids of the device's LUs in ascending order, in *out (malloc'd;
 * the caller frees it, also when 0 is returned).  0 when there are none or
 * memory ran out.
 */
size_t scsi_device_lun_ids(const struct scsi_device *dev, uint32_t **out);
/*
 * Takes LUN lun (a flat number) out of dev: its backend flushed (blocking),
 * REPORTED LUNS DATA HAS CHANGED established for every I_T nexus on the LUs
 * left, the LU freed.  Only with an empty task set.  0, or -1 with the
 * reason in err and nothing changed.
 */
int scsi_lu_remove(struct scsi_device *dev, uint32_t lun, char *err, size_t errlen);

/* Zoned LUs: the number of zones (0 for other kinds). */
uint32_t scsi_lu_zone_count(const struct scsi_lu *lu);

/*
 * Commands of an LU that failed because its backing store did (ENOSPC or
 * EDQUOT: no space; EIO; anything else), counted when they complete, on the
 * loop thread; they reach the initiator as scsi_sense_from_errno() says.
 */
struct scsi_backing_errors {
	uint64_t no_space;
	uint64_t io;
	uint64_t other;
};
/*
 * observe(arg, device, lun, err, counts) is called on the loop thread for
 * every command of dev's LUs that fails so (device: dev's name; err: the
 * positive errno; counts: the LU's so far), for the daemon to log; NULL
 * stops it.
 */
typedef void (*scsi_backing_error_fn)(void *arg, const char *device, uint32_t lun, int err,
				      const struct scsi_backing_errors *counts);
void scsi_device_observe_backing_errors(struct scsi_device *dev, scsi_backing_error_fn observe, void *arg);

/*
 * Time (sched/timer.c): delay fault rules, the media latency model and
 * command duration limits act at given times.  The core calls arm(arg,
 * when_ns) when it wants scsi_device_alarm(dev) called at time when_ns of
 * the device's clock (a later arm replaces an earlier one; a call that comes
 * early does no harm).  Without an alarm nothing waits: delay rules do not
 * delay, the latency model is not applied, duration limits are not enforced.
 */
void scsi_device_set_alarm(struct scsi_device *dev, void (*arm)(void *arg, uint64_t when_ns), void *arg);
void scsi_device_alarm(struct scsi_device *dev);
/*
 * The device's clock: CLOCK_MONOTONIC unless set (unit tests run the
 * scheduler on a virtual clock).  now_ns NULL: CLOCK_MONOTONIC again.
 */
void scsi_device_set_clock(struct scsi_device *dev, uint64_t (*now_ns)(void *arg), void *arg);
uint64_t scsi_device_now(const struct scsi_device *dev);

/* ---- what the runtime control reads and changes (docs/control.md) ---- */

/*
 * Checks a latency model (ranges, and the fields that must agree, e.g. p99
 * above the mean) and says what is wrong in err, naming the key: 0, or -1
 * (media/media_model.c).  The configuration and the runtime control ask
 * before anything changes.
 */
int scsi_latency_params_check(const struct scsi_latency_params *p, char *err, size_t errlen);
/*
 * The LU's media latency model from now on (docs/latency.md): commands the
 * medium already took keep their times.  0, or -1 with err set (p refused).
 */
int scsi_lu_set_latency(struct scsi_lu *lu, const struct scsi_latency_params *p, char *err, size_t errlen);

/*
 * Readiness of an LU as TEST UNIT READY and every medium-access command see
 * it (SPC-4 4.5.1 table 51 / SBC-4 4.10): the sense each not-ready state
 * gives is in lu.c.
 */
enum scsi_lu_readiness {
	SCSI_LU_READY,
	SCSI_LU_BECOMING_READY, /* 02/04/01 */
	SCSI_LU_NOT_READY,      /* 02/04/02 */
	SCSI_LU_OFFLINE,        /* 02/04/03 */
	SCSI_LU_NO_MEDIUM,      /* 02/3A/00 */
};

/* Finished commands of an LU since start, counted on the loop thread. */
struct scsi_lu_counters {
	uint64_t commands;
	uint64_t good, check_condition, busy, task_set_full, reservation_conflict, other_status, aborted;
	uint64_t read_bytes, write_bytes;      /* Data-In sent, Data-Out received */
	uint64_t sense_keys[16];               /* CHECK CONDITIONs by sense key */
	uint64_t latency[6];                   /* submission to completion: <=100 us, 1 ms, 10 ms, 100 ms, 1 s, more */
};

struct scsi_lu_info {
	uint32_t lun;
	enum scsi_lu_kind kind;
	uint32_t block_size;
	uint64_t num_blocks;
	uint8_t protection_type;
	enum scsi_lu_readiness readiness;
	bool write_protect;
	bool removable;                        /* RMB */
	bool removal_prevented;                /* an I_T nexus holds PREVENT ALLOW MEDIUM REMOVAL PREVENT = 1 */
	unsigned commands;                     /* in its task set now */
	struct scsi_mode_defaults mode_defaults; /* the defaults it was given (scsi_lu_set_mode_defaults) */
	struct scsi_latency_params latency;    /* its media latency model (scsi_lu_set_latency) */
	enum scsi_cdl_pages cdl_pages;
	struct scsi_lu_counters counters;
	struct scsi_backing_errors backing_errors;
	uint8_t alua_tpgs;                     /* 0: no asymmetric access */
	uint16_t target_port_group;
	enum scsi_alua_state alua_state;       /* now (transitioning during a transition) */
	enum scsi_alua_state alua_target;      /* where a transition ends; else alua_state */
	char backend_status[256];              /* what its backend tells (backend_ops.status), or "" */
};

void scsi_lu_describe(const struct scsi_lu *lu, struct scsi_lu_info *info);
/*
 * Latency statistics (core/stats.c, docs/latency.md): per LU, the time
 * commands waited before they were processed (queued: until the medium took
 * them, or their handler ran), the time they were processed (active), and
 * the whole; per command duration limit descriptor (T2A, T2B) the same and
 * what its limits and policies did.  Percentiles come from log-linear
 * buckets (1/8 of a power of two: within 12.5 %).
 */
struct scsi_latency_summary {
	uint64_t count;
	uint64_t mean_ns, p50_ns, p99_ns, p999_ns, max_ns;
};

struct scsi_cdl_descriptor_summary {
	struct scsi_latency_summary queued, active;
	uint64_t commands;
	uint64_t inactive_miss, active_miss, guideline_miss; /* each limit that passed */
	uint64_t policy_actions[16];                        /* by policy code (SPC-6 T2 descriptor) */
};

struct scsi_lu_stats {
	struct scsi_latency_summary queued, active, total;
	bool cdl;                                            /* the LU has command duration limits */
	struct scsi_cdl_descriptor_summary descriptor[2][7]; /* [0]: T2A, [1]: T2B; descriptors 1..7 */
	uint64_t good_with_sense;  /* complete-unavailable answers: GOOD with sense, which Linux over iSCSI drops */
	uint64_t elapsed_ns;       /* since the statistics began (the LU's first command, or a reset) */
};

void scsi_lu_get_stats(const struct scsi_lu *lu, struct scsi_lu_stats *out);
void scsi_lu_reset_stats(struct scsi_lu *lu);

/*
 * Sets the readiness; back to ready from another state establishes NOT READY
 * TO READY CHANGE, MEDIUM MAY HAVE CHANGED (06/28/00) for every I_T nexus.
 */
void scsi_lu_set_readiness(struct scsi_lu *lu, enum scsi_lu_readiness readiness);
/*
 * A power cycle of the device (docs/control.md, power-cut), after the
 * transports dropped their I_T nexuses: every command still in a task set
 * ends without status, what the backends held volatile is lost (the volatile
 * write cache), and each LU comes back as after a power on: saved mode
 * pages, no reservation or registration but APTPL ones, no prevent, open
 * zones closed, started, and POWER ON, RESET, OR BUS DEVICE RESET OCCURRED
 * (06/29/00) for every I_T nexus, as at start-up.  Fault rules and the
 * runtime readiness (lu-state) stay.  Returns the bytes lost.
 */
uint64_t scsi_device_power_cycle(struct scsi_device *dev);
/*
 * An implicit asymmetric access state transition of the LU's target port
 * group (SPC-4 5.15.2.2): transitioning for the LU's alua_transition_ms,
 * then state; ASYMMETRIC ACCESS STATE CHANGED (06/2A/06) for every I_T
 * nexus.  -1 with the reason in err when the LU has no asymmetric access or
 * state is not one a group can be put in.
 */
int scsi_lu_set_alua_state(struct scsi_lu *lu, enum scsi_alua_state state, char *err, size_t errlen);
/*
 * The note a node that holds a shared medium leaves for the nodes that wait
 * for it (a backend's holder_note, be_rbd_params.holder_note): the name of
 * its target port group, which their REPORT TARGET PORT GROUPS shows as
 * active/optimized.
 */
void scsi_alua_holder_note(uint16_t target_port_group, char *buf, size_t len);
/* Write-protects the medium (07/27/00 for writes, WP in MODE SENSE) or lifts it. */
void scsi_lu_set_write_protect(struct scsi_lu *lu, bool on);
/*
 * Replaces the LU's mode page defaults with md (a field md leaves out takes
 * the device's own default).  Each field whose default moved takes the new
 * default as its current value too, and as its saved value while MODE
 * SELECT has saved none (SPC-4 7.5.1: saved values start as the defaults).
 * If a current value changed, every I_T nexus gets MODE PARAMETERS CHANGED
 * (06/2A/01).  Returns whether one did.
 */
bool scsi_lu_set_mode_defaults(struct scsi_lu *lu, const struct scsi_mode_defaults *md);
/*
 * Changes the capacity to num_blocks (the backend resized with it) and
 * establishes CAPACITY DATA HAS CHANGED (06/2A/09) for every I_T nexus.
 * Conventional LUs without protection information, with an empty task set,
 * only; shrinking needs allow_shrink.  Blocking (the backend's resize runs on
 * the caller's thread).  0, or -1 with the reason in err and nothing changed.
 */
int scsi_lu_resize(struct scsi_lu *lu, uint64_t num_blocks, bool allow_shrink, char *err, size_t errlen);

/*
 * Ends every command of lu's task set that is not running I/O (waiting, or
 * held by a fault rule) with CHECK CONDITION and this sense.  0 when the
 * task set is empty afterwards, -1 when running commands are left.
 */
int scsi_lu_end_commands(struct scsi_lu *lu, uint8_t sense_key, uint16_t asc_ascq);

/*
 * I_T nexus, reached through transport (whose protocol identifier and
 * TransportID codec the core uses for it).  initiator_port_name is the SCSI
 * initiator port name (SAM-5 4.6.4) as the transport defines it, in a form
 * the core compares byte for byte: a transport whose names compare without
 * regard to case gives them in one case (iSCSI names are case-folded
 * before they are compared, RFC 3722: lower case).  relative_target_port is the RELATIVE TARGET PORT IDENTIFIER.
 * Creating a nexus establishes POWER ON/RESET unit attentions for it.  NULL
 * when out of memory.
 */
struct scsi_nexus *scsi_nexus_create(struct scsi_device *dev, const struct scsi_transport_ops *transport,
				     const char *initiator_port_name, const char *target_port_name,
				     uint16_t relative_target_port);
/* Aborts the nexus's outstanding commands (their aborted() callbacks run) and frees it once none remain. */
void scsi_nexus_destroy(struct scsi_nexus *nexus);
/*
 * The nexus goes on from one the transport had before the daemon restarted
 * (TCMU: the kernel's device and its initiators stayed).  A power on is
 * reported with POWER ON, RESET, OR BUS DEVICE RESET OCCURRED (SAM-5 6.3.3);
 * an LU that a clean flush left with nothing held only in memory (no
 * reservation or registration without APTPL, no unsaved mode value, no
 * prevented removal, no open zone, its cache written back) changed in
 * nothing, and that unit attention is withdrawn for it.  After a crash the
 * daemon cannot know what it lost: the unit attention stays.
 */
void scsi_nexus_continue(struct scsi_nexus *nexus);

/* ---- command life cycle ---- */

/* Initialises the core fields; call before filling the transport fields. */
void scsi_cmd_init(struct scsi_cmd *cmd, const struct scsi_transport_ops *transport,
		   struct scsi_nexus *nexus);
/*
 * Submits a command.  The core parses and gates it, asks for Data-Out if it
 * needs any, executes it and finally calls transport->complete() (possibly
 * before this function returns).
 */
void scsi_cmd_submit(struct scsi_cmd *cmd);
/*
 * Hands the core len bytes of Data-Out in the transport's buffers (they stay
 * the transport's; the core reads them until the command completes or asks
 * for the next piece of a streamed Data-Out).
 */
void scsi_cmd_set_data_out(struct scsi_cmd *cmd, struct iovec *iov, unsigned iovcnt, uint32_t len);
/* The Data-Out asked for by need_data_out is there (scsi_cmd_set_data_out). */
void scsi_cmd_data_out_ready(struct scsi_cmd *cmd);
/*
 * The transport cannot deliver the command's data (for iSCSI a Data-Out
 * sequence error, RFC 7143 11.4.7.2): the command ends with CHECK CONDITION
 * and s, through the core's completion like any other (before
 * scsi_cmd_submit(), or while it waits for Data-Out).
 */
void scsi_cmd_fail_transport(struct scsi_cmd *cmd, struct scsi_sense_info s);
/* The Data-Out bytes need_data_out asks for (from cmd->data_out_offset). */
static inline uint32_t scsi_cmd_data_out_want(const struct scsi_cmd *cmd)
{
	uint32_t left = cmd->data_length > cmd->data_out_offset ? cmd->data_length - cmd->data_out_offset : 0;

	return cmd->data_out_window && cmd->data_out_window < left ? cmd->data_out_window : left;
}
/*
 * The transport is done with a finished command (its response went out):
 * frees what the core allocated (Data-In, handler state) and returns its
 * buffer room to the scsi_resources.
 */
void scsi_cmd_release(struct scsi_cmd *cmd);

/*
 * Task management.  done(arg, response) is called once every command the
 * function terminates has been terminated (possibly before return).
 * referenced is the command named by ABORT TASK (NULL if the transport does
 * not know it: the function then completes with FUNCTION COMPLETE).
 */
void scsi_tmf(struct scsi_nexus *nexus, uint64_t lun, enum scsi_tmf_function function,
	      struct scsi_cmd *referenced, void (*done)(void *arg, enum scsi_tmf_response response),
	      void *arg);

/* ---- conglomerates (core/conglomerate.c, docs/conglomerate.md) ---- */

/*
 * An LU of kind SCSI_LU_ADMIN is the administrative LU of a conglomerate
 * (SPC-5 4.33 as sg3_utils' sg_luns restates it): no medium of its own, any
 * number of subsidiary LUs reached through it at LUN <admin>/<element>
 * (element 1..SCSI_MAX_LUN), each seen only by the initiators it is bound
 * to.  A subsidiary is created empty: its scsi_lu is made by the device's
 * subsidiary opener the first time a bound initiator sends it a command,
 * so an idle one costs a few bytes and no descriptor.
 *
 * open(arg, dev, admin_lun, element, err, errlen) makes the subsidiary's
 * LU with scsi_lu_create() (params.lun = scsi_subsidiary_lun(admin_lun,
 * element)) and returns it, or NULL with the reason in err.  Runs on the
 * loop thread.
 */
typedef struct scsi_lu *(*scsi_subsidiary_open_fn)(void *arg, struct scsi_device *dev, uint32_t admin_lun,
						      uint16_t element, char *err, size_t errlen);
void scsi_device_set_subsidiary_opener(struct scsi_device *dev, scsi_subsidiary_open_fn open, void *arg);

static inline uint32_t scsi_subsidiary_lun(uint32_t admin_lun, uint16_t element)
{
	return admin_lun | (uint32_t)element << 16;
}

/*
 * Create and destroy a subsidiary; destroy refuses one that is bound or has
 * commands in its task set (its LU, when open, is removed and its backend
 * closed).  Bind and unbind it for initiator (an initiator name as the
 * transport gives it, without the ",i,0x..." ISID part; "*" is every
 * initiator): each I_T nexus of that initiator gets REPORTED LUNS DATA HAS
 * CHANGED and, on the administrative LU, SUBSIDIARY BINDING CHANGED.
 * Commands an unbound nexus already has in the subsidiary's task set run
 * to their end; new ones get SUBSIDIARY LOGICAL UNIT NOT CONFIGURED.
 * Each returns 0, or -1 with the reason in err and nothing changed.
 */
int scsi_subsidiary_create(struct scsi_lu *admin, uint16_t element, char *err, size_t errlen);
int scsi_subsidiary_destroy(struct scsi_lu *admin, uint16_t element, char *err, size_t errlen);
int scsi_subsidiary_bind(struct scsi_lu *admin, uint16_t element, const char *initiator, char *err, size_t errlen);
int scsi_subsidiary_unbind(struct scsi_lu *admin, uint16_t element, const char *initiator, char *err,
			   size_t errlen);

/* Unbinds and destroys every subsidiary of admin (before it goes).  0, or -1 with err (one is busy). */
int scsi_conglomerate_clear(struct scsi_lu *admin, char *err, size_t errlen);

/* What the runtime control lists: one subsidiary. */
struct scsi_subsidiary_info {
	uint16_t element;
	struct scsi_lu *lu;         /* NULL: not opened yet */
	unsigned binding_count;     /* initiators (or "*") it is bound to */
};
/* Subsidiaries of admin in ascending element order, from element first on, at most max; returns how many. */
size_t scsi_subsidiary_list(const struct scsi_lu *admin, uint16_t first, struct scsi_subsidiary_info *out,
			    size_t max);
/* The initiators (or "*") the subsidiary is bound to: calls each(arg, name) for each one. */
void scsi_subsidiary_bindings(const struct scsi_lu *admin, uint16_t element,
			      void (*each)(void *arg, const char *initiator), void *arg);
/* The number of subsidiaries of admin (0 for an LU that is not administrative). */
uint32_t scsi_subsidiary_count(const struct scsi_lu *admin);

/* Encodes SAM LUN <-> flat LUN numbers (SAM-5 4.7: peripheral and flat addressing). */
uint64_t scsi_lun_encode(uint32_t lun);
bool scsi_lun_decode(uint64_t sam_lun, uint32_t *lun);

#endif
