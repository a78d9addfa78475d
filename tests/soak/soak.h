/*
 * sbce_soak: a bounded-time soak of sbcemud over iSCSI (not a ctest test;
 * scripts/soak runs it).  One thread drives K libiscsi sessions round-robin
 * with random operations against two LUs (512-byte and 4096-byte blocks),
 * keeps a model of what every block must hold, kills the daemon with
 * SIGKILL now and then and restarts it on the same state directory, and at
 * the end verifies every block and the daemon's descriptors and RSS.
 *
 * Files: soak.c (options, run loop, kills, summary), model.c (block
 * patterns, the model, the write log), session.c (sessions and commands
 * with deadlines), ops.c (the random operations), raw.c (malformed PDUs
 * over a raw TCP connection), probe.c (/proc samples, watchdog, hang
 * reports).
 */
#ifndef SBCE_SOAK_H
#define SBCE_SOAK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "itest.h"

#define SOAK_LUNS 2
#define SOAK_LU_BYTES (64ull << 20)
#define SOAK_MAX_SESSIONS 64
#define SOAK_MAX_ALT 6          /* "old or new" candidates kept per block */
#define SOAK_INITIATOR "iqn.2026-12.org.sbcemu:soak-"

enum soak_op {
	OP_WRITE,
	OP_READ,
	OP_SYNC,
	OP_INVALID_CDB,
	OP_OUT_OF_RANGE,
	OP_LU_RESET,
	OP_ABORT_TASK,
	OP_DROP,
	OP_MALFORMED,
	OP_KINDS
};

/* What became of a WRITE (the write log, for diagnostics). */
enum wr_outcome {
	WR_PENDING,
	WR_ACKED,        /* GOOD: the model holds it */
	WR_NOT_EXECUTED, /* UNIT ATTENTION, BUSY, TASK SET FULL: SAM-5 says it did not run */
	WR_FAILED,       /* another CHECK CONDITION or status: old or new */
	WR_ABORTED,      /* ABORT TASK / LOGICAL UNIT RESET: old or new */
	WR_DROPPED,      /* connection dropped before the status: old or new */
	WR_KILLED,       /* daemon killed before the status: old or new */
	WR_OUTCOMES
};

struct soak_opts {
	unsigned seconds;
	unsigned sessions;
	unsigned kills;
	unsigned op_timeout;    /* seconds one operation may take before it is a hang */
	uint64_t seed;
	const char *daemon;
	bool keep;
	bool verbose;
};

struct soak_stats {
	unsigned long ops[OP_KINDS];
	unsigned long fua_writes;
	unsigned long writes_acked;
	unsigned long writes_outcome[WR_OUTCOMES];
	unsigned long bg_writes;        /* WRITEs left in flight for an abort, a drop or a kill */
	unsigned long blocks_verified;  /* block reads compared with the model */
	unsigned long blocks_settled;   /* "old or new" blocks pinned down after a restart */
	unsigned long blocks_unknown;   /* blocks with too many candidates, not comparable until rewritten */
	unsigned long kills;
	unsigned long malformed_pdus;
	unsigned long reconnects;
	unsigned long unit_attentions;
	unsigned long invalid_answers[3]; /* GOOD / CONDITION MET, CHECK CONDITION, other */
	unsigned long tmf_responses[2];   /* Function complete, Task does not exist */
	unsigned long raw_rejects, raw_drops, raw_pongs;
	/* failures */
	unsigned long mismatches;
	unsigned long hangs;
	unsigned long unexpected;        /* answers no rule allows */
	unsigned long lost_connections;  /* the target dropped a healthy session */
	unsigned long login_failures;
	bool daemon_died;
};

/* A command handed to libiscsi and not yet released. */
struct inflight {
	struct scsi_task *task;
	uint8_t *buf;           /* Data-Out buffer (libiscsi points into it until the task ends) */
	bool busy;              /* task submitted, not released */
	bool done;              /* the callback ran */
	int status;             /* callback status: SAM status or SCSI_STATUS_CANCELLED / ERROR / TIMEOUT */
	/* for WRITEs */
	bool write;
	uint32_t opno;
	int lun;
	uint64_t lba;
	uint32_t n;
};

struct soak_sess {
	struct iscsi_context *ctx;
	int idx;
	char iqn[96];
	struct inflight cmd;    /* the command being waited for */
	struct inflight bg;     /* a WRITE left in flight on purpose */
};

/* The outcome of one command. */
enum wait_rc { W_DONE, W_LOST, W_TIMEOUT };

struct cmd_res {
	enum wait_rc rc;
	int status;             /* SAM status, -1 if no SCSI Response arrived */
	struct itest_sense sense;
	const uint8_t *data;    /* Data-In, valid until the inflight is released */
	int data_len;
	char why[160];
};

struct soak {
	struct soak_opts o;
	struct soak_stats st;
	struct itest_daemon d;
	struct soak_sess sess[SOAK_MAX_SESSIONS];
	uint64_t rng;
	uint32_t opno;          /* number of the current operation, from 1 */
	uint64_t t0_ms;
	bool stop;              /* a hang or a dead daemon: the run ends */
};

extern struct soak soak;

/* soak.c */
uint64_t rnd(void);
uint64_t below(uint64_t n);
double elapsed_s(void);
void fail_note(unsigned long *counter, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool daemon_check(void);

/* model.c */
uint32_t lu_bs(int lun);
uint64_t lu_blocks(int lun);
int model_init(void);
void model_free(void);
void pattern_fill(uint8_t *buf, int lun, uint64_t lba, uint32_t n, uint32_t opno);
void model_ack(int lun, uint64_t lba, uint32_t n, uint32_t opno);
void model_maybe(int lun, uint64_t lba, uint32_t n, uint32_t opno);
unsigned model_check(int lun, uint64_t lba, uint32_t n, const uint8_t *buf, bool settle, const char *when);
void wlog_add(uint32_t opno, int lun, uint64_t lba, uint32_t n, int sess, bool fua);
void wlog_set(uint32_t opno, enum wr_outcome outcome);
const char *wr_outcome_name(enum wr_outcome o);
enum wr_outcome write_settle(uint32_t opno, int lun, uint64_t lba, uint32_t n, bool answered, int status,
			     int sense_key, enum wr_outcome if_unanswered);

/* session.c */
bool sess_connect(struct soak_sess *s);
void sess_drop(struct soak_sess *s, enum wr_outcome why);
void sess_logout(struct soak_sess *s);
bool sess_reconnect(struct soak_sess *s, enum wr_outcome why);
int inflight_submit(struct soak_sess *s, struct inflight *f, int lun, const uint8_t *cdb, int cdb_len, int dir,
		    uint8_t *buf, uint32_t len);
enum wait_rc inflight_wait(struct soak_sess *s, struct inflight *f, uint64_t timeout_ms);
void inflight_release(struct soak_sess *s, struct inflight *f);
void bg_write_resolve(struct soak_sess *s, enum wr_outcome if_unanswered);
enum wait_rc sess_flush_rc(struct soak_sess *s, unsigned ms);
void sess_cmd(struct soak_sess *s, int lun, const uint8_t *cdb, int cdb_len, int dir, uint8_t *buf, uint32_t len,
	      struct cmd_res *r);
void sess_cmd_end(struct soak_sess *s);
enum wait_rc sess_tmf(struct soak_sess *s, int lun, int function, struct scsi_task *ref, uint32_t *response);
void cmd_trouble(struct soak_sess *s, const struct cmd_res *r, const char *what);
void idle_service(unsigned ms);

/* ops.c */
extern const char *const op_names[OP_KINDS];
void run_one_op(void);
void write_in_flight(struct soak_sess *s, int lun);
void verify_all(bool settle, const char *what);

/* raw.c */
void op_malformed(void);

/* probe.c */
struct proc_sample {
	long rss_kb;
	long hwm_kb;
	int fds;
	int threads;
};
bool proc_sample(pid_t pid, struct proc_sample *p);
bool proc_sample_settled(pid_t pid, struct proc_sample *p);
void proc_print_fds(pid_t pid);
void watchdog_start(void);
void watch_op(const char *what, int sess);
void watch_idle(void);
void report_hang(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
