/*
 * sbcemu iSCSI target (RFC 7143): the public API the daemon uses.
 *
 * The server runs on a libev loop supplied by the daemon; every call here is
 * made on that loop's thread.  It owns portals (listening sockets),
 * connections and sessions, and maps each session to an I_T nexus of the
 * SCSI core's device for the target the initiator logged into.
 */
#ifndef SBCEMU_ISCSI_H
#define SBCEMU_ISCSI_H

/*
 * Layering (docs/architecture.md): only the daemon's front-end adapter
 * (daemon/frontends/) includes a transport; the rest of the daemon reaches
 * it through frontend.h.
 */
#if defined(SBCE_BUILDING_BACKENDS) || defined(SBCE_BUILDING_SCSI) || defined(SBCE_BUILDING_CONFIG) || \
	defined(SBCE_BUILDING_TCMU) || defined(SBCE_BUILDING_DAEMON)
#error "sbcemu layering: the iSCSI front end is included by daemon/frontends/ only (the daemon uses frontend.h)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ev_loop;
struct scsi_device;
struct iscsi_server;

/* CHAP credentials: user name and secret (RFC 7143 12.1.3; secrets of 12..255 bytes recommended). */
struct iscsi_chap_credentials {
	const char *user;   /* NULL: not configured */
	const char *secret;
};

/* One initiator allowed to log into a target (an ACL entry). */
struct iscsi_acl_entry {
	const char *initiator_name;            /* iSCSI name, or "*" for any */
	struct iscsi_chap_credentials chap;    /* overrides the target's one-way CHAP if user != NULL */
	struct iscsi_chap_credentials mutual;  /* overrides the target's mutual CHAP if user != NULL */
};

struct iscsi_target_params {
	const char *name;                      /* IQN / EUI / NAA name */
	const char *alias;                     /* TargetAlias, may be NULL */
	uint16_t tpgt;                         /* target portal group tag (relative target port id) */
	struct scsi_device *device;            /* the LUs behind this target (owned by the caller) */
	struct iscsi_chap_credentials chap;    /* one-way CHAP: the initiator proves itself */
	struct iscsi_chap_credentials mutual;  /* mutual CHAP: the target proves itself */
	const struct iscsi_acl_entry *acl;     /* NULL or empty: any initiator may log in */
	size_t acl_len;
};

/* Operational limits and defaults the target offers in negotiation (RFC 7143 13). */
struct iscsi_server_params {
	uint32_t max_recv_data_segment_length; /* default 262144 */
	uint32_t max_burst_length;             /* default 1048576 */
	uint32_t first_burst_length;           /* default 262144 */
	bool immediate_data;                   /* default true */
	bool initial_r2t;                      /* default false (target prefers unsolicited data) */
	uint32_t max_outstanding_r2t;          /* default 1 */
	uint32_t max_connections;              /* default 1 */
	uint32_t default_time2wait;            /* default 2 */
	uint32_t default_time2retain;          /* default 20 */
	uint32_t cmd_window;                   /* commands the CmdSN window admits, default 128 */
	uint32_t nop_in_interval;              /* seconds between target NOP-Ins on an idle connection; 0 = never */
	uint32_t nop_in_timeout;               /* seconds to wait for the NOP-Out answer before dropping */
	uint32_t login_timeout;                /* seconds a connection may stay in login */
	bool header_digest_crc32c_allowed;     /* offer CRC32C in HeaderDigest, default true */
	bool data_digest_crc32c_allowed;       /* offer CRC32C in DataDigest, default true */
	/* What one peer may hold (docs/security.md); 0 = no limit. */
	uint32_t max_portal_connections;       /* open connections on one portal, default 1024 */
	uint32_t max_address_connections;      /* open connections from one IP address, default 64 */
	uint32_t output_stall_timeout;         /* seconds queued output may go unread before a drop, default 60 */
	uint32_t login_failures_per_minute;    /* failed logins from one address before it waits, default 10 */
};

/* Fills p with the defaults listed above. */
void iscsi_server_params_default(struct iscsi_server_params *p);

struct iscsi_server *iscsi_server_create(struct ev_loop *loop, const struct iscsi_server_params *params);

/*
 * Listens on addr ("127.0.0.1:3260", "[::1]:3260", "0.0.0.0:3260").
 * Returns 0, or -1 with a message in err.
 */
int iscsi_server_add_portal(struct iscsi_server *srv, const char *addr, char *err, size_t errlen);
/*
 * Stops listening on portal addr (numeric, as added): no new connection
 * there, no longer in SendTargets; connections made through it stay.  0,
 * or -1 with the reason in err.
 */
int iscsi_server_remove_portal(struct iscsi_server *srv, const char *addr, char *err, size_t errlen);

/* Adds a target; strings are copied.  Returns 0, or -1 with a message in err. */
int iscsi_server_add_target(struct iscsi_server *srv, const struct iscsi_target_params *t, char *err,
			    size_t errlen);
/*
 * Replaces the CHAP credentials and ACL of target t->name with t's (its
 * other fields are ignored): logins from then on follow them; sessions
 * logged in stay; a login under way is dropped (the initiator retries).
 * 0, or -1 with the reason in err and nothing changed.
 */
int iscsi_server_set_target_access(struct iscsi_server *srv, const struct iscsi_target_params *t, char *err,
				   size_t errlen);

/*
 * Graceful shutdown: stops listening and accepting commands, lets commands in
 * flight finish and their responses go out, then closes every connection and
 * calls done(arg).  Safe to call once.
 */
void iscsi_server_shutdown(struct iscsi_server *srv, void (*done)(void *arg), void *arg);

/* What the server reports through its log callback. */
enum iscsi_log_kind {
	ISCSI_LOG_TRACE,      /* every PDU in and out, connections, sessions: a debug trace */
	ISCSI_LOG_PEER_ERROR, /* what a peer did wrong (malformed PDU, protocol or digest error) */
	ISCSI_LOG_WARNING,    /* a limit hit, a failed login, descriptors exhausted: the operator should see it */
};

/*
 * Where the server's messages go, one line each.  A peer can cause
 * ISCSI_LOG_PEER_ERROR lines at will, so the receiver should rate-limit
 * them and keep them at debug level (style.md principle 11).  NULL (the
 * default): nothing is reported (and nothing formatted).
 */
void iscsi_server_set_log(struct iscsi_server *srv,
			  void (*log)(void *arg, enum iscsi_log_kind kind, const char *message), void *arg);
/* Whether ISCSI_LOG_TRACE lines are made at all (default: yes); a peer can cause WARNING lines too. */
void iscsi_server_set_trace(struct iscsi_server *srv, bool trace);

/*
 * CHAP for SendTargets discovery sessions (RFC 7143 12.1): with chap.user
 * set, a discovery session must authenticate as it, and with mutual.user
 * the target authenticates itself too.  Strings are copied.  0, or -1 when
 * out of memory.
 */
int iscsi_server_set_discovery_auth(struct iscsi_server *srv, const struct iscsi_chap_credentials *chap,
				    const struct iscsi_chap_credentials *mutual);

/* What the runtime control shows of a session (docs/control.md, "sessions"). */
struct iscsi_session_info {
	const char *target;            /* NULL: a discovery session */
	const char *initiator;
	uint8_t isid[6];
	uint16_t tsih;
	unsigned connections;
	const char *peer;              /* "address:port" of its connection, or "" */
	const char *portal;            /* the local "address:port" it came in on, or "" */
	uint16_t cid;                  /* its connection's CID */
	uint32_t exp_cmd_sn, max_cmd_sn; /* the command window (RFC 7143 4.2.2.1) */
	unsigned commands;             /* SCSI commands delivered and not yet answered */
	bool header_digest, data_digest; /* CRC32C negotiated */
	bool immediate_data, initial_r2t;
	uint32_t max_burst_length, first_burst_length, max_recv_data_segment_length;
};

/* Calls fn for every logged-in session. */
void iscsi_server_foreach_session(struct iscsi_server *srv,
				  void (*fn)(void *arg, const struct iscsi_session_info *info), void *arg);
/*
 * Closes the connection of every session logged into target (a cable pulled:
 * no response goes out, the sessions' commands are aborted through their
 * nexuses, RFC 7143 ErrorRecoveryLevel 0).  Returns the connections closed.
 */
unsigned iscsi_server_drop_target(struct iscsi_server *srv, const char *target, const char *why);

/*
 * Takes a target away at run time: SendTargets no longer lists it, a login
 * to it gets Target removed (0204h, RFC 7143 11.13.5), and its connections
 * are dropped as by iscsi_server_drop_target().  The target stays allocated
 * (its device too, the caller's) until iscsi_server_destroy(), for sessions
 * still ending.  A target added again later with the same name is a new one.
 * Returns the connections closed.
 */
unsigned iscsi_server_remove_target(struct iscsi_server *srv, const char *name, const char *why);

/* Frees the server after shutdown completed. */
void iscsi_server_destroy(struct iscsi_server *srv);

#endif
