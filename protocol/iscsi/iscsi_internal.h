/*
 * iSCSI target internals shared by the files of protocol/iscsi/.
 *
 * Object model (RFC 7143 4): a server owns portals, targets, connections and
 * sessions.  A connection carries one session (MaxConnections is offered as
 * 1); a normal session maps to one I_T nexus of its target's SCSI device.  A
 * task embeds the transport-neutral struct scsi_cmd.
 *
 * Lifetimes are reference counted so that nothing a submitted command points
 * at goes away before the core is done with it:
 *   task: one reference while it is on its connection's task list, one while
 *         the core holds the command (submit .. complete/aborted), one per
 *         queued PDU that points into its Data-In buffer.  The last put calls
 *         scsi_cmd_release() (if it was submitted) and frees it.
 *   conn: one reference while its socket is open, one per live task.
 *   session: one while it is in the session table, one per connection.
 * Everything runs on the server's loop thread; there are no globals, so a
 * server per loop (one loop per core) needs no locks here.
 */
#ifndef SBCEMU_ISCSI_INTERNAL_H
#define SBCEMU_ISCSI_INTERNAL_H

#ifndef SBCE_BUILDING_ISCSI
#error "sbcemu layering: iscsi_internal.h is internal to the iSCSI front end (protocol/iscsi/): use its public header"
#endif

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <ev.h>

#include "iscsi.h"
#include "pdu.h"
#include "scsi.h"

#define ISCSI_NAME_MAX 224           /* RFC 7143 4.2.7.1: iSCSI names are at most 223 bytes */
#define ISCSI_LOGIN_MAX_RECV_DSL 8192 /* what we accept before MaxRecvDataSegmentLength is declared */
#define ISCSI_TEXT_MAX 65536          /* longest login/text key=value sequence we assemble */
#define ISCSI_MAX_R2T 16              /* upper bound of MaxOutstandingR2T we offer */
#define ISCSI_CHAP_CHALLENGE_LEN 16
#define ISCSI_MD5_LEN 16
#define ISCSI_PROTOCOL_IDENTIFIER 0x5 /* SPC-4 7.6.1, table 362 */

/* A trace line; its arguments (opcode names, sense fields) are not even computed unless tracing is on. */
#define ISCSI_DEBUG(srv, ...)                                                   \
	do {                                                                    \
		if (iscsi_server_tracing(srv))                                  \
			iscsi_log((srv), ISCSI_LOG_TRACE, __VA_ARGS__);         \
	} while (0)
#define ISCSI_PEER_ERROR(srv, ...) iscsi_log((srv), ISCSI_LOG_PEER_ERROR, __VA_ARGS__)

struct iscsi_conn;
struct iscsi_session;
struct iscsi_task;

enum iscsi_digest {
	ISCSI_DIGEST_NONE,
	ISCSI_DIGEST_CRC32C,
};

enum iscsi_session_type {
	ISCSI_SESSION_NORMAL,
	ISCSI_SESSION_DISCOVERY,
};

/* ---- negotiated parameters (RFC 7143 13), typed, negotiated once ---- */

/* Connection-scoped keys. */
struct iscsi_conn_params {
	enum iscsi_digest header_digest;
	enum iscsi_digest data_digest;
	uint32_t max_recv_data_segment_length; /* we declared: the longest data segment we accept */
	uint32_t max_xmit_data_segment_length; /* the initiator declared: the longest we may send */
};

/* Session-scoped (leading only) keys. */
struct iscsi_sess_params {
	uint32_t max_connections;
	bool initial_r2t;
	bool immediate_data;
	uint32_t max_burst_length;
	uint32_t first_burst_length;
	uint32_t default_time2wait;
	uint32_t default_time2retain;
	uint32_t max_outstanding_r2t;
	bool data_pdu_in_order;
	bool data_sequence_in_order;
	uint32_t error_recovery_level;
};

/* Growing buffer of key=value\0 pairs for Login/Text responses. */
struct iscsi_text {
	char *buf;
	size_t len;
	size_t cap;
	bool failed; /* allocation failed: the whole response is dropped */
};

/* One key=value pair of a received text segment (pointers into the assembled text). */
struct iscsi_kv {
	const char *key;
	const char *value;
};

/*
 * The state of one negotiation (a login, or a text exchange in full
 * feature phase).  The typed result fields start from the RFC defaults.
 */
struct iscsi_negotiation {
	struct iscsi_conn_params conn;
	struct iscsi_sess_params sess;
	enum iscsi_session_type session_type;
	bool leading;                 /* first connection of a session: LO keys allowed */
	bool full_feature;            /* a Text negotiation in full feature phase */
	uint64_t seen;                /* bit per table row: already offered once */
	char initiator_name[ISCSI_NAME_MAX];
	char target_name[ISCSI_NAME_MAX];
	char initiator_alias[256];
	const struct iscsi_server_params *ours;
};

/* Result of negotiating a list of pairs. */
enum iscsi_negotiate_result {
	ISCSI_NEGOTIATE_OK,
	ISCSI_NEGOTIATE_REPEATED_KEY,   /* RFC 7143 6.1: renegotiation attempt -> Login reject 02/00 */
	ISCSI_NEGOTIATE_NO_MEMORY,
};

/* ---- server objects ---- */

struct iscsi_target {
	struct iscsi_target *next;
	char *name;
	char *alias;
	uint16_t tpgt;
	struct scsi_device *device;
	struct iscsi_chap_credentials chap;   /* strings owned */
	struct iscsi_chap_credentials mutual;
	struct iscsi_acl_entry *acl;          /* strings owned */
	size_t acl_len;
};

struct iscsi_portal {
	struct iscsi_portal *next;
	struct iscsi_server *srv;
	int fd;
	ev_io io;
	ev_timer resume;                 /* accepting again after descriptors ran out */
	bool exhausted;                  /* logged once per episode */
	unsigned nconns;                 /* its open connections */
	struct sockaddr_storage addr;
	socklen_t addr_len;
};

struct iscsi_server {
	struct ev_loop *loop;
	struct iscsi_server_params params;
	struct iscsi_portal *portals;
	struct iscsi_target *targets;
	struct iscsi_target *removed_targets; /* iscsi_server_remove_target(): kept for their sessions until destroy */
	struct iscsi_session *sessions;
	struct iscsi_conn *conns;         /* every connection whose socket is open */
	struct iscsi_conn *flush_list;    /* connections with output to write before the loop sleeps */
	ev_prepare prepare;
	uint16_t next_tsih;
	unsigned nconns_alive;            /* connection objects not yet freed */
	void (*log)(void *arg, enum iscsi_log_kind kind, const char *message); /* iscsi_server_set_log */
	void *log_arg;
	bool trace;                       /* make ISCSI_LOG_TRACE lines (iscsi_server_set_trace) */
	struct iscsi_chap_credentials discovery_chap;   /* strings owned; user NULL: discovery needs none */
	struct iscsi_chap_credentials discovery_mutual;
	struct iscsi_login_failures *login_failures; /* per address, login.c */
	bool shutting_down;
	void (*shutdown_done)(void *arg);
	void *shutdown_arg;
	struct iscsi_task *task_cache;    /* freed tasks, linked by hnext, for the next commands (scsi_cmd.c) */
	unsigned task_cache_len;
};

/* ---- connections ---- */

enum iscsi_conn_state {
	ISCSI_CONN_STATE_LOGIN,          /* login phase: only Login Requests */
	ISCSI_CONN_STATE_FULL_FEATURE,
	ISCSI_CONN_STATE_LOGOUT_PENDING, /* Logout received: waiting for active tasks, then the response */
	/*
	 * Writing what is queued, then closing in order: input is read and
	 * discarded (no PDU is handled), the send side shut down once the
	 * output is out, the socket closed when the peer closes its side or
	 * ISCSI_LINGER_SECONDS later (iscsi_conn_close_after_flush).
	 */
	ISCSI_CONN_STATE_CLOSING,
	ISCSI_CONN_STATE_CLOSED,         /* socket closed; waiting for tasks to be released */
};

/* One PDU on the transmit queue: header (+ digest), optional data, padding + data digest. */
struct iscsi_tx {
	struct iscsi_tx *next;
	uint8_t hdr[ISCSI_BHS_LEN + ISCSI_DIGEST_LEN];
	uint32_t hdr_len;
	const uint8_t *data;
	uint32_t data_len;
	uint8_t trailer[3 + ISCSI_DIGEST_LEN];
	uint32_t trailer_len;
	size_t sent;                /* bytes of hdr+data+trailer already written */
	uint8_t *owned;             /* data copied for this PDU, freed with it */
	struct iscsi_task *task;    /* data points into this task's buffer; holds a reference */
	size_t held;                /* what it costs beyond a task's own buffers (iscsi_conn.tx_held) */
};

/* Login phase state (login.c), freed on entering full feature phase. */
struct iscsi_login {
	enum iscsi_login_stage current_stage;
	bool first_pdu_seen;
	bool security_done;         /* authentication succeeded (or AuthMethod=None agreed) */
	bool auth_chap;             /* AuthMethod=CHAP chosen */
	bool target_sent_tpgt;
	bool target_declared_mrdsl;
	uint8_t isid[6];
	uint16_t tsih;
	uint32_t itt;
	uint32_t cmd_sn;
	char *text;                 /* request text assembled over C-bit PDUs */
	size_t text_len;
	struct iscsi_negotiation neg;
	struct iscsi_target *target;
	const struct iscsi_acl_entry *acl_entry;
	/* CHAP (chap.c) */
	enum {
		ISCSI_CHAP_STATE_START,       /* waiting for CHAP_A */
		ISCSI_CHAP_STATE_CHALLENGED,  /* sent CHAP_I/CHAP_C, waiting for CHAP_N/CHAP_R */
		ISCSI_CHAP_STATE_DONE,
	} chap_state;
	uint8_t chap_id;
	uint8_t chap_challenge[ISCSI_CHAP_CHALLENGE_LEN];
};

/* Pending Text Response continuation (RFC 7143 11.11: the C bit and TTT). */
struct iscsi_text_continuation {
	char *buf;
	size_t len;
	size_t off;
	uint32_t itt;
	uint32_t ttt;
};

struct iscsi_conn {
	struct iscsi_server *srv;
	struct iscsi_conn *prev, *next;   /* srv->conns */
	struct iscsi_conn *flush_next;
	bool on_flush_list;
	int fd;
	ev_io io;
	int io_events;
	ev_timer timer;                   /* login timeout, then NOP-In pings; in CLOSING the linger time */
	bool lingering;                   /* CLOSING: the send side is shut down, input is drained */
	bool peer_closed;                 /* CLOSING: the peer's end of file came */
	size_t tx_held;                   /* the queued PDUs' held bytes (struct iscsi_tx) */
	bool rx_paused;                   /* not read while tx_held is past ISCSI_TX_HELD_MAX */
	enum iscsi_conn_state state;
	unsigned refs;
	char peer[64];                    /* for logs */
	char local[64];                   /* the portal address it came in on, "address:port" */
	struct sockaddr_storage peer_addr;
	struct iscsi_portal *portal;      /* accepted on; NULL once the socket is closed */
	ev_tstamp tx_progress;            /* queued output last moved (or was queued into an empty queue) */
	struct sockaddr_storage local_addr;
	socklen_t local_addr_len;

	/* receive */
	uint8_t *rx_buf;
	size_t rx_len;
	size_t rx_cap;
	struct iscsi_rx_direct {          /* a data segment read in place (conn.c, rx_direct_start) */
		struct iscsi_task *task;  /* a Data-Out's task (a reference), else NULL */
		uint8_t *imm_buf;         /* a SCSI Command's buffer (iscsi_cmd_immediate_dest), till its task takes it */
		uint8_t bhs[ISCSI_BHS_LEN];
		uint8_t *dest;            /* where the segment goes; NULL when no segment is read in place */
		uint32_t len, got;
		uint8_t trailer[3 + ISCSI_DIGEST_LEN]; /* padding, data digest */
		uint32_t trailer_len, trailer_got;
	} rx_direct;

	/* transmit */
	struct iscsi_tx *tx_head, *tx_tail;
	size_t tx_bytes;

	/* numbering (RFC 7143 4.2.2.2) */
	uint16_t cid;
	uint32_t stat_sn;
	uint32_t exp_stat_sn;
	uint32_t next_ttt;

	struct iscsi_conn_params params;
	struct iscsi_login *login;
	struct iscsi_session *session;
	struct iscsi_text_continuation text_cont;

	/* tasks */
	LIST_HEAD(, iscsi_task) tasks;    /* every task of this connection, newest first */
	struct iscsi_task **itt_buckets;  /* the same tasks by ITT (scsi_cmd.c): O(1) lookups */
	unsigned itt_nbuckets;            /* a power of two, or 0 before the first task */
	unsigned ntasks;                  /* tasks on the list */
	unsigned tasks_active;            /* submitted and not yet completed/aborted */

	/* NOP-In pings (nop.c) */
	ev_tstamp last_rx;
	bool ping_outstanding;
	uint32_t ping_ttt;
	ev_tstamp ping_sent;

	/* logout */
	uint8_t logout_bhs[ISCSI_BHS_LEN];
};

/* ---- sessions ---- */

/* A PDU that arrived ahead of ExpCmdSN, held until its turn (RFC 7143 3.2.2.1). */
struct iscsi_ordered {
	struct iscsi_ordered *next;
	uint32_t cmd_sn;
	struct iscsi_task *task;         /* SCSI Command: the task already built */
	uint8_t *copy;                   /* other PDUs: BHS + data copied */
	struct iscsi_pdu pdu;
};

struct iscsi_session {
	struct iscsi_server *srv;
	struct iscsi_session *next;
	struct iscsi_target *target;     /* NULL for discovery sessions */
	enum iscsi_session_type type;
	char initiator_name[ISCSI_NAME_MAX];
	uint8_t isid[6];
	uint16_t tsih;
	struct iscsi_sess_params params;
	uint32_t exp_cmd_sn;
	/*
	 * Non-immediate SCSI commands delivered and not yet finished: they
	 * hold the CmdSN window closed (iscsi_session_max_cmd_sn), so MaxCmdSN
	 * advances as commands complete, not as they arrive.
	 */
	unsigned cmds_in_window;
	/* Immediate SCSI commands (outside the window) not yet finished: at most ISCSI_MAX_IMMEDIATE_COMMANDS. */
	unsigned immediate_active;
	struct iscsi_ordered *ordered;   /* sorted by CmdSN */
	unsigned ordered_count;
	struct scsi_nexus *nexus;
	struct iscsi_conn *conn;
	unsigned refs;
	bool in_table;
};

/* ---- tasks ---- */

enum iscsi_task_state {
	ISCSI_TASK_STATE_QUEUED,        /* waiting for its CmdSN turn */
	ISCSI_TASK_STATE_SUBMITTED,     /* in the core */
	ISCSI_TASK_STATE_WAIT_DATA_OUT, /* the core asked for Data-Out: collecting it */
	ISCSI_TASK_STATE_DONE,          /* the core finished it (or it never got there) */
};

/* One outstanding R2T (RFC 7143 11.8). */
struct iscsi_r2t {
	uint32_t ttt;
	uint32_t r2t_sn;
	uint32_t buffer_offset;
	uint32_t desired_length;
	uint32_t received;
	uint32_t next_data_sn;
};

struct iscsi_task {
	struct scsi_cmd cmd;             /* embedded: container_of from the core's callbacks */
	struct iscsi_conn *conn;
	LIST_ENTRY(iscsi_task) link;     /* conn->tasks */
	struct iscsi_task *hnext;        /* conn->itt_buckets chain */
	bool on_list;
	bool immediate;                  /* the I bit: outside the CmdSN window */
	bool in_window;                  /* counted in session->cmds_in_window */
	bool submitted;                  /* scsi_cmd_submit called: scsi_cmd_release owed */
	bool core_holds;                 /* between submit and complete/aborted */
	unsigned refs;
	enum iscsi_task_state state;

	uint32_t itt;
	uint32_t cmd_sn;
	uint32_t edtl;                   /* Expected Data Transfer Length */
	bool write;                      /* W bit */
	bool read;                       /* R bit */

	/* Data-Out collection (data.c) */
	uint8_t *buf;
	uint32_t buf_cap;
	struct iovec data_out_iov;       /* buf, handed to the core (scsi_cmd_set_data_out) */
	uint32_t want;                   /* end of the Data-Out the core asked for (at most EDTL) */
	uint32_t win_off;                /* where buf starts in the Data-Out (streamed Data-Out, scsi.h) */
	uint32_t unsol_expected;         /* immediate + unsolicited bytes the initiator sends */
	uint32_t unsol_received;
	uint32_t unsol_data_sn;
	bool unsol_done;
	uint32_t r2t_next_offset;        /* first byte not yet asked for by an R2T */
	uint32_t r2t_sn;
	struct iscsi_r2t r2t[ISCSI_MAX_R2T];
	unsigned r2t_count;

	/*
	 * A Data-Out sequence error (DataSN, offset, length): the task ends
	 * with CHECK CONDITION, ABORTED COMMAND and this ASC/ASCQ instead of
	 * executing (RFC 7143 11.4.7.2, 7.1.5), through the core
	 * (scsi_cmd_fail_transport).
	 */
	uint16_t data_out_error;

	/* Data-In (data.c): the buffer the core fills (alloc_data_in) and the Data-In PDUs point into */
	uint8_t *data_in_buf;
	uint32_t data_in_cap;            /* bytes data_in_buf holds (kept with the task in the task cache) */
	struct iovec data_in_iov;
	uint32_t data_in_pdus;           /* DataSN of the next Data-In, and ExpDataSN in the response */
};

static inline struct iscsi_task *iscsi_task_of(struct scsi_cmd *cmd)
{
	return (struct iscsi_task *)((char *)cmd - offsetof(struct iscsi_task, cmd));
}

/* Serial number arithmetic (RFC 1982, RFC 7143 4.2.2.1) for 32-bit sequence numbers. */
static inline bool iscsi_sn_lt(uint32_t a, uint32_t b)
{
	return a != b && (int32_t)(a - b) < 0;
}

static inline bool iscsi_sn_le(uint32_t a, uint32_t b)
{
	return a == b || iscsi_sn_lt(a, b);
}

/* ---- server.c ---- */
void iscsi_log(const struct iscsi_server *srv, enum iscsi_log_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Whether ISCSI_LOG_TRACE lines are made (a log set, iscsi_server_set_trace on). */
static inline bool iscsi_server_tracing(const struct iscsi_server *srv)
{
	return srv && srv->log && srv->trace;
}
struct iscsi_target *iscsi_server_find_target(struct iscsi_server *srv, const char *name);
/* A target removed at run time with that name (login: Target removed), or NULL. */
struct iscsi_target *iscsi_server_find_removed_target(struct iscsi_server *srv, const char *name);
/* Called when a connection object is freed (shutdown bookkeeping). */
void iscsi_server_conn_freed(struct iscsi_server *srv);

/* ---- conn.c ---- */
/* A connection on an accepted socket (the caller sets its portal); NULL when out of memory (fd closed). */
struct iscsi_conn *iscsi_conn_accept(struct iscsi_server *srv, int fd);
void iscsi_conn_get(struct iscsi_conn *conn);
void iscsi_conn_put(struct iscsi_conn *conn);
/* Queues a PDU; data is copied unless task is given (then data points into the task and is referenced). */
void iscsi_conn_queue(struct iscsi_conn *conn, const uint8_t *bhs, const void *data, uint32_t data_len,
		      struct iscsi_task *task);
/* Fills StatSN (and advances it if advance), ExpCmdSN and MaxCmdSN of an outgoing BHS. */
void iscsi_conn_fill_sn(struct iscsi_conn *conn, uint8_t *bhs, bool advance_stat_sn);
/* Closes the socket now and releases what the connection holds. */
void iscsi_conn_drop(struct iscsi_conn *conn, const char *why);
/* Writes what is queued until the socket would block (the server's ev_prepare hook, EV_WRITE). */
void iscsi_conn_flush(struct iscsi_conn *conn);
/* Stops reading, writes what is queued, then drops the connection. */
void iscsi_conn_close_after_flush(struct iscsi_conn *conn);
/* Re-evaluates whether a pending logout or shutdown can finish now. */
void iscsi_conn_check_idle(struct iscsi_conn *conn);
/* dispatch.c: routes a received PDU (BHS already checked, digests verified). */
void iscsi_conn_handle_pdu(struct iscsi_conn *conn, const struct iscsi_pdu *pdu);
/* dispatch.c: dispatches one non-SCSI PDU in full feature phase once its CmdSN turn came. */
void iscsi_conn_dispatch_ordered(struct iscsi_conn *conn, const struct iscsi_pdu *pdu);
void iscsi_conn_enter_full_feature(struct iscsi_conn *conn);

/* ---- login.c ---- */
void iscsi_login_handle(struct iscsi_conn *conn, const struct iscsi_pdu *pdu);
/*
 * A Login Request that cannot be taken as it is (its data segment past the
 * MaxRecvDataSegmentLength of the login phase, 8192 bytes, RFC 7143 13.12):
 * a Login Response with status (11.13.5: 02h Initiator Error; a login is
 * refused in its own response, the Reject PDU is for the full feature
 * phase), then the connection closes.
 */
void iscsi_login_refuse_pdu(struct iscsi_conn *conn, const uint8_t *bhs, enum iscsi_login_status status);
void iscsi_login_free(struct iscsi_login *login);

/* ---- param.c ---- */
void iscsi_negotiation_init(struct iscsi_negotiation *neg, const struct iscsi_server_params *ours,
			    bool leading);
/* Splits text into pairs; returns the count, or -1 on a malformed pair. */
int iscsi_text_parse(char *text, size_t len, struct iscsi_kv *kv, int max);
/* True if key is handled by the negotiation table (not AuthMethod/CHAP_* /SendTargets). */
bool iscsi_param_is_operational(const char *key);
/* Negotiates one pair, appending the response to out. */
enum iscsi_negotiate_result iscsi_param_negotiate(struct iscsi_negotiation *neg, const char *key,
						  const char *value, struct iscsi_text *out);
void iscsi_text_append(struct iscsi_text *t, const char *key, const char *value);
void iscsi_text_appendf(struct iscsi_text *t, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void iscsi_text_free(struct iscsi_text *t);
/* Declarative keys the target sends in the operational stage (MaxRecvDataSegmentLength). */
void iscsi_param_declare(struct iscsi_negotiation *neg, struct iscsi_text *out);
/* Fixes cross-key constraints (FirstBurstLength <= MaxBurstLength) after negotiation. */
void iscsi_param_finish(struct iscsi_negotiation *neg);
bool iscsi_name_valid(const char *name);

/* ---- chap.c ---- */
/*
 * Processes the security-stage pairs CHAP_A, CHAP_N, CHAP_R, CHAP_I, CHAP_C.
 * Returns a login status (0 = go on).
 */
enum iscsi_login_status iscsi_chap_handle(struct iscsi_conn *conn, struct iscsi_login *login,
					  struct iscsi_kv *kv, int nkv, struct iscsi_text *out);
/* RFC 1994: Response = MD5(Identifier || secret || Challenge). */
int iscsi_chap_md5(uint8_t id, const uint8_t *secret, size_t secret_len, const uint8_t *challenge,
		   size_t challenge_len, uint8_t out[ISCSI_MD5_LEN]);
/* Decodes a binary value in hex (0x) or base64 (0b) form; returns the length or -1. */
int iscsi_chap_decode_binary(const char *value, uint8_t *out, size_t cap);

/* ---- session.c ---- */
struct iscsi_session *iscsi_session_create(struct iscsi_conn *conn, struct iscsi_login *login);
struct iscsi_session *iscsi_session_find(struct iscsi_server *srv, const char *initiator_name,
					 const uint8_t *isid, const struct iscsi_target *target,
					 enum iscsi_session_type type);
struct iscsi_session *iscsi_session_find_tsih(struct iscsi_server *srv, uint16_t tsih);
void iscsi_session_get(struct iscsi_session *s);
void iscsi_session_put(struct iscsi_session *s);
/* Ends a session: removes it from the table, destroys its nexus, drops its connection. */
void iscsi_session_end(struct iscsi_session *s, const char *why);
uint32_t iscsi_session_max_cmd_sn(const struct iscsi_session *s);
/*
 * Whether a non-immediate command with cmd_sn would be taken: inside
 * [ExpCmdSN, MaxCmdSN] and not queued already.  A command that is not is
 * ignored before anything is allocated for it (RFC 7143 4.2.2.1).
 */
bool iscsi_session_cmd_sn_acceptable(const struct iscsi_session *s, uint32_t cmd_sn);
/*
 * RFC 7143 3.2.2.1 command numbering for a non-immediate PDU.  Returns 1 if
 * it is the expected one (ExpCmdSN advanced: process it now), 0 if it was
 * queued for later (the callee copied what it needs), -1 if outside the
 * window (silently ignored).
 */
int iscsi_session_order(struct iscsi_session *s, const struct iscsi_pdu *pdu, struct iscsi_task *task);
/* Processes queued PDUs whose turn came. */
void iscsi_session_run_ordered(struct iscsi_session *s);
/* Drops the ordered queue (connection gone). */
void iscsi_session_clear_ordered(struct iscsi_session *s);

/* ---- scsi_cmd.c ---- */
extern const struct scsi_transport_ops iscsi_scsi_transport;
void iscsi_scsi_cmd_handle(struct iscsi_conn *conn, const struct iscsi_pdu *pdu);
uint8_t *iscsi_cmd_immediate_dest(struct iscsi_conn *conn, const uint8_t *bhs, uint32_t len);
void iscsi_task_submit(struct iscsi_task *task);
/*
 * Immediate commands bypass the CmdSN window (RFC 7143 3.2.2.1), so they are
 * bounded on their own: past this many unfinished ones per session a new one
 * gets Reject reason 06h, "Immediate command reject - too many immediate
 * commands" (RFC 7143 11.17.1).
 */
#define ISCSI_MAX_IMMEDIATE_COMMANDS 16
/*
 * A connection closing after its last response waits this long for the
 * peer to close its side, reading and discarding what it still sends:
 * close(2) with unread input resets the connection (RFC 793 3.5; Linux
 * sends RST), and a reset drops what the peer has not read and tells it of
 * a failure where there was none.
 */
#define ISCSI_LINGER_SECONDS 2.0
/*
 * Output a connection holds that is no command's data (NOP-In echoes,
 * Rejects, text and login responses, and every queued PDU's own header):
 * past this many bytes the connection is not read until its peer has read
 * half of it, so a peer that sends without reading cannot grow it (a
 * command's data is in the SCSI core's buffer budget instead).
 */
#define ISCSI_TX_HELD_MAX (1u << 20)

/* login.c: failed logins per peer address (login_failures_per_minute). */
bool iscsi_login_throttled(struct iscsi_conn *conn);
void iscsi_login_failures_free(struct iscsi_server *srv);
/* Frees the tasks the task cache keeps (scsi_cmd.c), at server destroy. */
void iscsi_task_cache_free(struct iscsi_server *srv);
/* The IP address of a socket address, as bytes to compare (port left out): its length, 0 if not IP. */
size_t iscsi_addr_key(const struct sockaddr_storage *ss, uint8_t key[17]);

struct iscsi_task *iscsi_task_find(struct iscsi_conn *conn, uint32_t itt);
bool iscsi_task_link(struct iscsi_task *task);
void iscsi_task_get(struct iscsi_task *task);
void iscsi_task_put(struct iscsi_task *task);
/* Takes the task off its connection's list if nothing more is expected for it. */
void iscsi_task_maybe_retire(struct iscsi_task *task);
void iscsi_task_unlink(struct iscsi_task *task);

/* ---- data.c ---- */
void iscsi_data_out_handle(struct iscsi_conn *conn, const struct iscsi_pdu *pdu);
uint8_t *iscsi_data_out_dest(struct iscsi_conn *conn, const uint8_t *bhs, uint32_t len, struct iscsi_task **taskp);
void iscsi_data_need_data_out(struct iscsi_task *task);
/* Hands the Data-Out to the core if everything arrived. */
void iscsi_data_check_done(struct iscsi_task *task);
/* Sends Data-In, and the status (collapsed or in a SCSI Response). */
void iscsi_data_send_result(struct iscsi_task *task);

/* ---- transport_id.c: the iSCSI TransportID (SPC-4 7.6.4.6) ---- */
size_t iscsi_transport_id_encode(const char *initiator_port_name, uint8_t *tid, size_t cap);
/* The initiator port name of a TransportID, folded (iscsi_port_name_fold); false if it is not one. */
bool iscsi_transport_id_decode(const uint8_t *tid, size_t len, char *initiator_port_name, size_t cap);
/*
 * An initiator port name ("<iSCSI name>,i,0x<ISID>") in the one case the
 * SCSI core compares byte for byte: iSCSI names compare after case folding
 * (RFC 3722, the stringprep profile of iSCSI names: lower case), and so do
 * the ISID's hexadecimal digits.  ASCII letters only: the name types in use
 * (iqn., eui., naa.) are ASCII.
 */
void iscsi_port_name_fold(char *name);

/* ---- tmf.c ---- */
void iscsi_tmf_handle(struct iscsi_conn *conn, const struct iscsi_pdu *pdu);

/* ---- nop.c ---- */
void iscsi_nop_out_handle(struct iscsi_conn *conn, const struct iscsi_pdu *pdu);
void iscsi_nop_timer(struct iscsi_conn *conn, ev_tstamp now);

/* ---- text.c / discovery.c ---- */
void iscsi_text_handle(struct iscsi_conn *conn, const struct iscsi_pdu *pdu);
/* Appends TargetName/TargetAddress pairs for SendTargets=value (RFC 7143 Appendix C). */
int iscsi_discovery_send_targets(struct iscsi_conn *conn, const char *value, struct iscsi_text *out);

/* ---- logout.c ---- */
void iscsi_logout_handle(struct iscsi_conn *conn, const struct iscsi_pdu *pdu);
void iscsi_logout_respond(struct iscsi_conn *conn);

/* ---- reject.c ---- */
void iscsi_reject(struct iscsi_conn *conn, const uint8_t *bhs, enum iscsi_reject_reason reason);

#endif
