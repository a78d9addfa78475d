/*
 * Integration-test framework: each test program starts its own sbcemud on a
 * spare 127.0.0.1 port with a scratch state directory and sparse backing
 * files (config written by the test), talks to it through libiscsi's sync
 * API (or a raw TCP socket for malformed PDUs), and prints one TAP line per
 * check, named after the rule it checks ("READ(10) LBA past capacity ->
 * 05/21/00").
 *
 * Exit status: 0 all checks passed, 1 some failed, 77 (ctest SKIP) no daemon
 * binary.  Environment: SBCEMUD (daemon path; CMake sets it), ITEST_KEEP=1
 * keeps the scratch directory, ITEST_VERBOSE=1 prints every command.
 */
#ifndef SBCEMU_ITEST_H
#define SBCEMU_ITEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

#define ITEST_TARGET "iqn.2026-12.org.sbcemu:itest"
#define ITEST_INITIATOR_1 "iqn.2026-12.org.sbcemu:itest-initiator-1"
#define ITEST_INITIATOR_2 "iqn.2026-12.org.sbcemu:itest-initiator-2"

/* ---- reporting ---- */

/* Parses argv (--keep, --verbose) and prints the TAP header comment. */
void itest_init(int argc, char **argv, const char *program);
/* Records one check; prints "ok N - name" or "not ok N - name: why" (printf-style why). */
bool itest_ok(bool pass, const char *name, const char *why_fmt, ...) __attribute__((format(printf, 3, 4)));
/* Prints a comment line ("# ..."). */
void itest_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints the plan and the summary, returns the exit status. */
int itest_finish(void);
bool itest_verbose(void);
/* Whether scratch directories are kept (--keep, ITEST_KEEP=1, or a check failed). */
bool itest_keep_scratch(void);

/* ---- daemon ---- */

struct itest_daemon {
	pid_t pid;
	int port;
	char dir[512];    /* scratch directory: config, state/, backing files, log */
	char conf[600];
	char state[600];
	char log[600];
	char bin[512];
	int slot;         /* framework bookkeeping */
};

/*
 * Creates the scratch directory and finds the daemon binary ($SBCEMUD, or
 * build/daemon/sbcemud relative to the program).  Exits with 77 when there is
 * no binary.
 */
void itest_daemon_init(struct itest_daemon *d, const char *name);
/*
 * Writes the configuration file; "@DIR@" in text is replaced by the scratch
 * directory.  Returns 0 or -1.
 */
int itest_daemon_write_config(struct itest_daemon *d, const char *text);
/* The standard test configuration: target ITEST_TARGET, LUN 0 = 64 MiB thin
 * 512-byte blocks on 4096-byte physical blocks (512e, like the embedded
 * default), LUN 1 = 64 MiB thick 4096-byte blocks. */
extern const char itest_default_config[];
/*
 * Starts the daemon (-c conf --listen 127.0.0.1:port --state-dir state
 * --log-level debug), output appended to the log; picks a port on the first
 * start and keeps it on restarts.  Waits until the port accepts.  Returns 0,
 * or -1 (the log tail is printed).
 */
int itest_daemon_start(struct itest_daemon *d);
/* Sends sig, waits up to 15 s (then SIGKILL).  Returns the wait status, or -1. */
int itest_daemon_stop(struct itest_daemon *d, int sig);
bool itest_daemon_alive(struct itest_daemon *d);
/*
 * kill(pid, sig) for a daemon that is running; -1 and nothing sent when it is
 * not (pid -1 after it died: kill(-1, sig) would signal every process).
 */
int itest_daemon_signal(const struct itest_daemon *d, int sig);
/*
 * Whether the daemon exits within ms milliseconds (it is reaped then).  A
 * daemon that kills itself closes its sockets before it can be reaped, so a
 * client sees the connection drop a moment before waitpid does.
 */
bool itest_daemon_exits_within(struct itest_daemon *d, unsigned ms);
/* Stops a running daemon (SIGTERM) and removes the scratch directory unless kept. */
void itest_daemon_cleanup(struct itest_daemon *d);
/* Prints the last lines of the daemon log as TAP comments. */
void itest_daemon_log_tail(const struct itest_daemon *d, int lines);
/* Convenience: init + write config + start; exits the program (status 1) on failure. */
void itest_daemon_up(struct itest_daemon *d, const char *name, const char *config_text);
/*
 * Runs "$SBCEMUCTL --state-dir <state> ARGS" (printf-style ARGS, shell words)
 * with its stdout in out (NUL-terminated, may be NULL) and stderr appended to
 * the daemon log.  Returns its exit status, or -1 (no $SBCEMUCTL, not run).
 */
int itest_ctl(const struct itest_daemon *d, char *out, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A check named name that "sbcemuctl ARGS" (itest_ctl) exits with want; its stdout stays in out. */
bool itest_ctl_expect(const struct itest_daemon *d, char *out, size_t cap, int want, const char *args,
		      const char *name);

/* ---- sessions ---- */

struct itest_login {
	const char *initiator;     /* default ITEST_INITIATOR_1 */
	const char *target;        /* default ITEST_TARGET; ignored for discovery */
	bool discovery;
	const char *chap_user, *chap_secret;
	const char *mutual_user, *mutual_secret;
	bool header_digest;        /* CRC32C on the header (and libiscsi: data too) */
	int initial_r2t;           /* -1 = libiscsi default, 0 No, 1 Yes */
	int immediate_data;        /* -1 = default */
	bool fixed_isid;           /* use isid_random as the ISID (same I_T nexus across reconnects) */
	uint32_t isid_random;
};

/* Logs in (iscsi_full_connect_sync to LUN lun, or a discovery session).  NULL on failure (reason in err). */
struct iscsi_context *itest_connect(const struct itest_daemon *d, const struct itest_login *opt, int lun,
				    char *err, size_t errlen);
/*
 * Shortcut: default options with this initiator, then clears the unit
 * attentions of LUN lun; on failure records a failed check and returns NULL.
 */
struct iscsi_context *itest_session(const struct itest_daemon *d, const char *initiator, int lun);
/* Logs out (if logged in) and destroys the context. */
void itest_close(struct iscsi_context *iscsi);

/* ---- commands ---- */

/* Parsed sense data (fixed or descriptor format). */
struct itest_sense {
	int len;
	uint8_t raw[260];
	bool descriptor;
	int key, asc, ascq;
	bool info_valid;
	uint64_t information;
	bool sksv;
	uint8_t sks[3];            /* sense key specific bytes */
};

struct itest_result {
	bool transport_ok;         /* a SCSI Response arrived */
	int status;                /* SAM status byte (or -1) */
	struct itest_sense sense;
	uint8_t *data;             /* Data-In (malloc'd, owned by the result) */
	int data_len;
	int residual_kind;         /* 0 none, 1 underflow, 2 overflow */
	size_t residual;
	char error[256];           /* libiscsi's error text when !transport_ok */
};

#define ITEST_DONT_CARE (-1)
/* Expected outcome, as data.  status 0 GOOD / 2 CHECK CONDITION / 0x18 RESERVATION CONFLICT. */
struct itest_expect {
	int status;
	int key, asc, ascq;        /* ITEST_DONT_CARE for any */
};
#define EXPECT_GOOD ((struct itest_expect){ 0, ITEST_DONT_CARE, ITEST_DONT_CARE, ITEST_DONT_CARE })
#define EXPECT_SENSE(k, a, q) ((struct itest_expect){ 2, (k), (a), (q) })
#define EXPECT_CONFLICT ((struct itest_expect){ 0x18, ITEST_DONT_CARE, ITEST_DONT_CARE, ITEST_DONT_CARE })

enum itest_dir { ITEST_NONE = SCSI_XFER_NONE, ITEST_IN = SCSI_XFER_READ, ITEST_OUT = SCSI_XFER_WRITE };

/*
 * Sends one CDB.  dir ITEST_OUT sends out/out_len bytes (Expected Data
 * Transfer Length = out_len); ITEST_IN expects up to in_len bytes.
 */
void itest_cmd(struct iscsi_context *iscsi, int lun, const uint8_t *cdb, int cdb_len, enum itest_dir dir,
	       const void *out, size_t out_len, size_t in_len, struct itest_result *r);
void itest_result_free(struct itest_result *r);
/* "GOOD", "CHECK CONDITION 05/24/00", "transport error: ..." */
const char *itest_result_str(const struct itest_result *r);
/* true if r matches e. */
bool itest_result_matches(const struct itest_result *r, struct itest_expect e);

/* Sends the CDB and records a check named name that the outcome matches e.  Returns the pass flag; r may be NULL. */
bool itest_expect_cmd(struct iscsi_context *iscsi, int lun, const char *name, const uint8_t *cdb, int cdb_len,
		      enum itest_dir dir, const void *out, size_t out_len, size_t in_len, struct itest_expect e,
		      struct itest_result *r);

/*
 * Checks the ILLEGAL REQUEST sense-key-specific field pointer: SKSV = 1,
 * C/D = cd, FIELD POINTER = byte, and if bit >= 0, BPV = 1 and BIT POINTER = bit.
 */
bool itest_expect_field_pointer(const char *name, const struct itest_result *r, int cd, int byte, int bit);

/* Decodes fixed or descriptor sense data. */
void itest_parse_sense(struct itest_sense *s, const uint8_t *p, int len);

/* Clears pending unit attentions with TEST UNIT READY (up to 10 tries). */
void itest_clear_ua(struct iscsi_context *iscsi, int lun);

/* ---- small helpers ---- */
void itest_put_be16(uint8_t *p, uint16_t v);
void itest_put_be32(uint8_t *p, uint32_t v);
void itest_put_be64(uint8_t *p, uint64_t v);
uint16_t itest_get_be16(const uint8_t *p);
uint32_t itest_get_be32(const uint8_t *p);
uint64_t itest_get_be64(const uint8_t *p);
/* Fills buf with a pattern derived from seed and the block number (block size bs). */
void itest_pattern(uint8_t *buf, size_t len, uint32_t seed);
/* READ(16)/WRITE(16) helpers: record a check on failure; return true on GOOD. */
bool itest_write16(struct iscsi_context *iscsi, int lun, uint64_t lba, const void *buf, uint32_t nblocks,
		   uint32_t block_size, bool fua, const char *name);
bool itest_read16(struct iscsi_context *iscsi, int lun, uint64_t lba, void *buf, uint32_t nblocks, uint32_t block_size,
		  const char *name);
/* Whether READ(16) of nblocks at lba returns want (a failed READ is a check of its own). */
bool itest_blocks_are(struct iscsi_context *iscsi, int lun, uint64_t lba, uint32_t nblocks, uint32_t block_size,
		      const uint8_t *want);
/* A "key:" line of /proc/PID/status in KiB (VmRSS, VmHWM), or -1 if unreadable. */
long itest_proc_kib(pid_t pid, const char *key);
/* The number after "key": in json (sbcemuctl --json output), or -1 when there is none. */
long long itest_json_num(const char *json, const char *key);
/* Whether the daemon's log has a line containing text. */
bool itest_daemon_log_has(const struct itest_daemon *d, const char *text);
/* READ CAPACITY(10) of lun: the number of blocks (RETURNED LOGICAL BLOCK ADDRESS + 1), or -1. */
long long itest_capacity10(struct iscsi_context *iscsi, int lun);
/* Monotonic milliseconds. */
uint64_t itest_now_ms(void);
/* What an asynchronous libiscsi command or task management function came back with (priv of the callbacks below). */
struct itest_async {
	bool done;
	int status;
	uint32_t response; /* TMF: the iSCSI response (ISCSI_TMR_*), 0xffffffff when none */
};
/* libiscsi callbacks filling a struct itest_async: a SCSI command's, a task management function's. */
void itest_async_cmd_cb(struct iscsi_context *iscsi, int status, void *command_data, void *priv);
void itest_async_tmf_cb(struct iscsi_context *iscsi, int status, void *command_data, void *priv);
/* Runs libiscsi's event loop of iscsi (asynchronous commands) for up to ms, or until *stop (stop may be NULL). */
void itest_service(struct iscsi_context *iscsi, int ms, const bool *stop);
/*
 * A seeded pseudo-random stream (xorshift64) for randomized tests: the seed
 * comes from the environment variable env (to replay a run) or from the
 * clock and the pid, and is never 0.
 */
uint64_t itest_seed(const char *env);
uint64_t itest_rnd(uint64_t *state);
/* 0 .. n - 1 (0 when n is 0). */
uint64_t itest_below(uint64_t *state, uint64_t n);

#endif
