/*
 * The login phase (RFC 7143 6): Login Request/Response PDUs, the
 * security -> operational -> full feature stage transitions (CSG/NSG, T and
 * C bits), target lookup, ACL and authentication, and the final step that
 * creates (or reinstates) the session.
 *
 * Key negotiation itself is param.c's; CHAP is chap.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "iscsi_internal.h"

#define LOGIN_MAX_PAIRS 256

void iscsi_login_free(struct iscsi_login *login)
{
	if (!login)
		return;
	free(login->text);
	free(login);
}

/* Sends a Login Response. */
static void login_respond(struct iscsi_conn *conn, struct iscsi_login *login, bool transit, uint8_t csg, uint8_t nsg,
			  uint16_t status, const struct iscsi_text *text)
{
	uint8_t bhs[ISCSI_BHS_LEN];
	uint8_t flags = 0;

	if (status == ISCSI_LOGIN_STATUS_SUCCESS) {
		flags = (uint8_t)(csg << ISCSI_LOGIN_CSG_SHIFT);
		if (transit)
			flags |= ISCSI_LOGIN_FLAG_TRANSIT | nsg;
	}
	iscsi_bhs_init(bhs, ISCSI_OP_LOGIN_RSP, flags, 0);
	bhs[ISCSI_LOGIN_VERSION_MAX] = 0x00;
	bhs[ISCSI_LOGIN_VERSION_MIN] = 0x00; /* VersionActive */
	memcpy(bhs + ISCSI_LOGIN_ISID, login->isid, 6);
	put_be16(bhs + ISCSI_LOGIN_TSIH, login->tsih);
	put_be32(bhs + ISCSI_BHS_ITT, login->itt);
	iscsi_conn_fill_sn(conn, bhs, true);
	bhs[ISCSI_LOGIN_STATUS_CLASS] = (uint8_t)(status >> 8);
	bhs[ISCSI_LOGIN_STATUS_DETAIL] = (uint8_t)status;
	iscsi_conn_queue(conn, bhs, text && text->len ? text->buf : NULL, text ? (uint32_t)text->len : 0, NULL);
}

/* ---- failed logins by peer address ---- */

/*
 * Guessing a CHAP secret (RFC 7143 12.1.3) or an allowed initiator name
 * takes many logins: an address with login_failures_per_minute failed
 * authentications or authorizations in a minute gets Login reject "Service
 * unavailable" (03/01, RFC 7143 11.13.5) until the minute is over.  A
 * small table, the oldest entry replaced.
 */
#define LOGIN_FAILURE_SLOTS 64

struct login_failure {
	uint8_t key[17];
	size_t len;
	ev_tstamp window;     /* start of the current minute */
	unsigned count;
	bool warned;          /* the throttle was logged in this minute */
};

struct iscsi_login_failures {
	struct login_failure slot[LOGIN_FAILURE_SLOTS];
};

void iscsi_login_failures_free(struct iscsi_server *srv)
{
	free(srv->login_failures);
	srv->login_failures = NULL;
}

static struct login_failure *failure_slot(struct iscsi_conn *conn, bool create)
{
	struct iscsi_server *srv = conn->srv;
	struct login_failure *oldest = NULL;
	ev_tstamp now = ev_now(srv->loop);
	uint8_t key[17];
	size_t len = iscsi_addr_key(&conn->peer_addr, key);

	if (!len || (!srv->login_failures && (!create || !(srv->login_failures = calloc(1, sizeof(*srv->login_failures))))))
		return NULL;
	for (unsigned i = 0; i < LOGIN_FAILURE_SLOTS; i++) {
		struct login_failure *f = &srv->login_failures->slot[i];

		if (f->len == len && memcmp(f->key, key, len) == 0) {
			if (now - f->window >= 60.) {
				f->window = now;
				f->count = 0;
				f->warned = false;
			}
			return f;
		}
		if (!oldest || f->window < oldest->window)
			oldest = f;
	}
	if (!create)
		return NULL;
	memset(oldest, 0, sizeof(*oldest));
	memcpy(oldest->key, key, len);
	oldest->len = len;
	oldest->window = now;
	return oldest;
}

bool iscsi_login_throttled(struct iscsi_conn *conn)
{
	unsigned limit = conn->srv->params.login_failures_per_minute;
	struct login_failure *f = limit ? failure_slot(conn, false) : NULL;

	if (!f || f->count < limit)
		return false;
	if (!f->warned)
		iscsi_log(conn->srv, ISCSI_LOG_WARNING,
			  "%s: logins refused for the rest of the minute: %u failed logins "
			  "(iscsi.login_failures_per_minute)", conn->peer, f->count);
	f->warned = true;
	return true;
}

/* A failed login: the response carries the status; the connection closes once it is written (RFC 7143 6.7). */
static void login_fail(struct iscsi_conn *conn, struct iscsi_login *login, enum iscsi_login_status status)
{
	if (status == ISCSI_LOGIN_STATUS_AUTHENTICATION_FAILURE || status == ISCSI_LOGIN_STATUS_AUTHORIZATION_FAILURE) {
		struct login_failure *f = failure_slot(conn, true);

		if (f)
			f->count++;
		iscsi_log(conn->srv, ISCSI_LOG_WARNING, "%s: login failed: %s (initiator %s, target %s)", conn->peer,
			  status == ISCSI_LOGIN_STATUS_AUTHENTICATION_FAILURE ? "authentication failure"
									     : "initiator not allowed",
			  login->neg.initiator_name[0] ? login->neg.initiator_name : "?",
			  login->target ? login->target->name : login->neg.session_type == ISCSI_SESSION_DISCOVERY
									? "(discovery)" : "?");
	}
	ISCSI_PEER_ERROR(conn->srv, "%s: login failed: status %02x/%02x", conn->peer, status >> 8, status & 0xff);
	login->tsih = 0;
	login_respond(conn, login, false, 0, 0, (uint16_t)status, NULL);
	iscsi_conn_close_after_flush(conn);
}

void iscsi_login_refuse_pdu(struct iscsi_conn *conn, const uint8_t *bhs, enum iscsi_login_status status)
{
	uint8_t rsp[ISCSI_BHS_LEN];

	ISCSI_PEER_ERROR(conn->srv, "%s: Login Request refused: status %02x/%02x", conn->peer, status >> 8, status & 0xff);
	iscsi_bhs_init(rsp, ISCSI_OP_LOGIN_RSP, 0, 0);
	memcpy(rsp + ISCSI_LOGIN_ISID, bhs + ISCSI_LOGIN_ISID, 6);
	put_be32(rsp + ISCSI_BHS_ITT, get_be32(bhs + ISCSI_BHS_ITT));
	iscsi_conn_fill_sn(conn, rsp, true);
	rsp[ISCSI_LOGIN_STATUS_CLASS] = (uint8_t)(status >> 8);
	rsp[ISCSI_LOGIN_STATUS_DETAIL] = (uint8_t)status;
	iscsi_conn_queue(conn, rsp, NULL, 0, NULL);
	iscsi_conn_close_after_flush(conn);
}

static const struct iscsi_acl_entry *acl_lookup(const struct iscsi_target *t, const char *initiator, bool *allowed)
{
	const struct iscsi_acl_entry *wildcard = NULL;

	if (t->acl_len == 0) {
		*allowed = true;
		return NULL;
	}
	for (size_t i = 0; i < t->acl_len; i++) {
		const char *name = t->acl[i].initiator_name;
		if (!name)
			continue;
		if (strcasecmp(name, initiator) == 0) {
			*allowed = true;
			return &t->acl[i];
		}
		if (strcmp(name, "*") == 0 && !wildcard)
			wildcard = &t->acl[i];
	}
	*allowed = wildcard != NULL;
	return wildcard;
}

static bool auth_required(const struct iscsi_conn *conn, const struct iscsi_login *login)
{
	const struct iscsi_acl_entry *e = login->acl_entry;

	if (login->neg.session_type == ISCSI_SESSION_DISCOVERY)
		return conn->srv->discovery_chap.user != NULL;
	if (e && e->chap.user)
		return true;
	return login->target && login->target->chap.user;
}

/*
 * The keys every login must bring in its first PDU (RFC 7143 13.4, 13.5,
 * 13.21): InitiatorName always, TargetName for a normal session.  Looks the
 * target up and applies its ACL.
 */
static enum iscsi_login_status login_first_pdu(struct iscsi_conn *conn, struct iscsi_login *login)
{
	bool allowed;

	if (!login->neg.initiator_name[0])
		return ISCSI_LOGIN_STATUS_MISSING_PARAMETER;
	if (login->neg.session_type == ISCSI_SESSION_DISCOVERY)
		return ISCSI_LOGIN_STATUS_SUCCESS;
	if (!login->neg.target_name[0])
		return ISCSI_LOGIN_STATUS_MISSING_PARAMETER;
	login->target = iscsi_server_find_target(conn->srv, login->neg.target_name);
	/* RFC 7143 11.13.5: 0204h Target removed, for a target the runtime control took away. */
	if (!login->target && iscsi_server_find_removed_target(conn->srv, login->neg.target_name))
		return ISCSI_LOGIN_STATUS_TARGET_REMOVED;
	if (!login->target)
		return ISCSI_LOGIN_STATUS_NOT_FOUND;
	login->acl_entry = acl_lookup(login->target, login->neg.initiator_name, &allowed);
	if (!allowed)
		return ISCSI_LOGIN_STATUS_AUTHORIZATION_FAILURE;
	return ISCSI_LOGIN_STATUS_SUCCESS;
}

/* AuthMethod (RFC 7143 12.1): a list; we pick CHAP when credentials apply, None otherwise. */
static enum iscsi_login_status negotiate_auth_method(const struct iscsi_conn *conn, struct iscsi_login *login,
						     const char *value, struct iscsi_text *out)
{
	bool required = auth_required(conn, login);
	bool offers_chap = false, offers_none = false;
	char buf[256];
	char *save = NULL;

	snprintf(buf, sizeof(buf), "%s", value);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "CHAP") == 0)
			offers_chap = true;
		else if (strcmp(tok, "None") == 0)
			offers_none = true;
	}
	if (required && offers_chap) {
		login->auth_chap = true;
		iscsi_text_append(out, "AuthMethod", "CHAP");
		return ISCSI_LOGIN_STATUS_SUCCESS;
	}
	if (!required && offers_none) {
		login->security_done = true;
		iscsi_text_append(out, "AuthMethod", "None");
		return ISCSI_LOGIN_STATUS_SUCCESS;
	}
	iscsi_text_append(out, "AuthMethod", "Reject");
	return ISCSI_LOGIN_STATUS_AUTHENTICATION_FAILURE;
}

/* Creates the session (or reinstates it) at the transition to full feature phase. */
static enum iscsi_login_status login_complete(struct iscsi_conn *conn, struct iscsi_login *login)
{
	struct iscsi_server *srv = conn->srv;
	struct iscsi_session *old, *s;

	if (login->tsih != 0) {
		/*
		 * Adding a connection to an existing session.  We offer
		 * MaxConnections=1 and ErrorRecoveryLevel=0, and an ERL 0
		 * session ends with its connection: there is nothing to join
		 * (RFC 7143 6.3.1, 11.13.5 "Session does not exist").
		 */
		return ISCSI_LOGIN_STATUS_SESSION_DOES_NOT_EXIST;
	}
	/* RFC 7143 6.3.5: a new login with the ISID of an existing session reinstates it. */
	old = iscsi_session_find(srv, login->neg.initiator_name, login->isid, login->target, login->neg.session_type);
	if (old)
		iscsi_session_end(old, "session reinstatement");
	iscsi_param_finish(&login->neg);
	s = iscsi_session_create(conn, login);
	if (!s)
		return ISCSI_LOGIN_STATUS_OUT_OF_RESOURCES;
	login->tsih = s->tsih;
	return ISCSI_LOGIN_STATUS_SUCCESS;
}

/* The stage fields of a Login Request's byte 1: T, C, CSG and NSG (RFC 7143 11.12.1-11.12.3). */
struct login_stage {
	bool transit;
	bool cont;
	uint8_t csg;
	uint8_t nsg;
};

static struct login_stage login_stage_decode(uint8_t flags)
{
	return (struct login_stage){
		.transit = flags & ISCSI_LOGIN_FLAG_TRANSIT,
		.cont = flags & ISCSI_LOGIN_FLAG_CONTINUE,
		.csg = (flags >> ISCSI_LOGIN_CSG_SHIFT) & ISCSI_LOGIN_STAGE_MASK,
		.nsg = flags & ISCSI_LOGIN_STAGE_MASK,
	};
}

/*
 * The first Login Request of a connection: the login state, with the ISID,
 * TSIH, ITT, CmdSN and CID it brings (RFC 7143 11.12).  NULL when out of
 * memory (the connection is dropped).
 */
static struct iscsi_login *login_start(struct iscsi_conn *conn, const uint8_t *bhs, uint8_t csg)
{
	struct iscsi_login *login = calloc(1, sizeof(*login));

	if (!login) {
		iscsi_conn_drop(conn, "out of memory");
		return NULL;
	}
	conn->login = login;
	memcpy(login->isid, bhs + ISCSI_LOGIN_ISID, 6);
	login->tsih = get_be16(bhs + ISCSI_LOGIN_TSIH);
	login->itt = get_be32(bhs + ISCSI_BHS_ITT);
	login->cmd_sn = get_be32(bhs + ISCSI_BHS_CMD_SN);
	login->current_stage = (enum iscsi_login_stage)csg;
	conn->cid = get_be16(bhs + ISCSI_LOGIN_CID);
	conn->stat_sn = 1; /* RFC 7143 11.13.4: any value for the first response */
	iscsi_negotiation_init(&login->neg, &conn->srv->params, true);
	return login;
}

/* Whether the first Login Request of a connection may go on: the peer address's throttle, the version. */
static enum iscsi_login_status login_first_request_check(struct iscsi_conn *conn, const uint8_t *bhs)
{
	if (iscsi_login_throttled(conn))
		return ISCSI_LOGIN_STATUS_SERVICE_UNAVAILABLE;
	/* RFC 7143 11.12.4: we speak version 0x00 only. */
	if (bhs[ISCSI_LOGIN_VERSION_MIN] != 0x00)
		return ISCSI_LOGIN_STATUS_UNSUPPORTED_VERSION;
	return ISCSI_LOGIN_STATUS_SUCCESS;
}

/* A later Login Request of the same login: it brings a new ITT. */
static enum iscsi_login_status login_next_request(struct iscsi_conn *conn, struct iscsi_login *login,
						  const uint8_t *bhs)
{
	/* RFC 7143 6.2: ISID, TSIH and CID stay the same during a login. */
	if (memcmp(login->isid, bhs + ISCSI_LOGIN_ISID, 6) != 0 || login->tsih != get_be16(bhs + ISCSI_LOGIN_TSIH) ||
	    conn->cid != get_be16(bhs + ISCSI_LOGIN_CID))
		return ISCSI_LOGIN_STATUS_INITIATOR_ERROR;
	login->itt = get_be32(bhs + ISCSI_BHS_ITT);
	return ISCSI_LOGIN_STATUS_SUCCESS;
}

/*
 * RFC 7143 11.12.3: CSG must be the current stage, NSG must move forward
 * when T is set, and T and C are never set together.
 */
static enum iscsi_login_status login_stage_check(const struct iscsi_login *login, const struct login_stage *st)
{
	if (st->csg != login->current_stage || st->csg == 2 || st->csg == ISCSI_STAGE_FULL_FEATURE ||
	    (st->transit && (st->nsg <= st->csg || st->nsg == 2)) || (st->transit && st->cont))
		return ISCSI_LOGIN_STATUS_INITIATOR_ERROR;
	return ISCSI_LOGIN_STATUS_SUCCESS;
}

/* Appends the PDU's data segment to the text assembled over C-bit PDUs (RFC 7143 6.3, 11.12.2). */
static enum iscsi_login_status login_append_text(struct iscsi_login *login, const struct iscsi_pdu *pdu)
{
	char *nt;

	if (!pdu->data_len)
		return ISCSI_LOGIN_STATUS_SUCCESS;
	if (login->text_len + pdu->data_len > ISCSI_TEXT_MAX)
		return ISCSI_LOGIN_STATUS_OUT_OF_RESOURCES;
	nt = realloc(login->text, login->text_len + pdu->data_len + 1);
	if (!nt)
		return ISCSI_LOGIN_STATUS_OUT_OF_RESOURCES;
	login->text = nt;
	memcpy(login->text + login->text_len, pdu->data, pdu->data_len);
	login->text_len += pdu->data_len;
	return ISCSI_LOGIN_STATUS_SUCCESS;
}

/* Splits the assembled text into its key=value pairs (RFC 7143 6.1); *nkv is their count. */
static enum iscsi_login_status login_parse_text(struct iscsi_conn *conn, struct iscsi_login *login,
						struct iscsi_kv *kv, int *nkv)
{
	/* iscsi_text_parse writes a NUL past the text: an empty text needs that byte too. */
	if (!login->text) {
		login->text = malloc(1);
		if (!login->text)
			return ISCSI_LOGIN_STATUS_OUT_OF_RESOURCES;
	}
	*nkv = iscsi_text_parse(login->text, login->text_len, kv, LOGIN_MAX_PAIRS);
	if (*nkv < 0)
		return ISCSI_LOGIN_STATUS_INITIATOR_ERROR;
	for (int i = 0; i < *nkv; i++)
		ISCSI_DEBUG(conn->srv, "%s: login key %s=%s", conn->peer, kv[i].key, kv[i].value);
	return ISCSI_LOGIN_STATUS_SUCCESS;
}

/* InitiatorName, TargetName, SessionType: the declarations that decide everything else. */
static bool key_is_declaration(const char *key)
{
	return strcmp(key, "InitiatorName") == 0 || strcmp(key, "TargetName") == 0 || strcmp(key, "SessionType") == 0;
}

/* CHAP_A, CHAP_I, CHAP_C, CHAP_N, CHAP_R (RFC 7143 12.1.3). */
static bool key_is_chap(const char *key)
{
	return strncmp(key, "CHAP_", 5) == 0;
}

static bool has_chap_keys(const struct iscsi_kv *kv, int nkv)
{
	for (int i = 0; i < nkv; i++)
		if (key_is_chap(kv[i].key))
			return true;
	return false;
}

/*
 * The declarations come first, whatever their order in the PDU; the first
 * PDU of a login must bring them (login_first_pdu), and the first response
 * of a normal session names the target portal group.
 */
static enum iscsi_login_status login_declarations(struct iscsi_conn *conn, struct iscsi_login *login,
						  const struct iscsi_kv *kv, int nkv, struct iscsi_text *out)
{
	bool first = false;

	for (int i = 0; i < nkv; i++) {
		const char *k = kv[i].key;

		if (!key_is_declaration(k))
			continue;
		if (iscsi_param_negotiate(&login->neg, k, kv[i].value, out) != ISCSI_NEGOTIATE_OK)
			return ISCSI_LOGIN_STATUS_INITIATOR_ERROR;
		if (strcmp(k, "SessionType") == 0 && out->len)
			return ISCSI_LOGIN_STATUS_SESSION_TYPE_NOT_SUPPORTED;
	}
	if (!login->first_pdu_seen) {
		enum iscsi_login_status status;

		first = true;
		login->first_pdu_seen = true;
		status = login_first_pdu(conn, login);
		if (status != ISCSI_LOGIN_STATUS_SUCCESS)
			return status;
	}
	if (out->len)
		return ISCSI_LOGIN_STATUS_INITIATOR_ERROR; /* a name value that did not fit */
	if (first && login->neg.session_type == ISCSI_SESSION_NORMAL) {
		/* RFC 7143 13.9: TargetPortalGroupTag in the first response of a normal session. */
		iscsi_text_appendf(out, "TargetPortalGroupTag", "%u", login->target->tpgt);
		if (login->target->alias)
			iscsi_text_append(out, "TargetAlias", login->target->alias);
	}
	return ISCSI_LOGIN_STATUS_SUCCESS;
}

/*
 * The other keys but CHAP's: AuthMethod (a security key, RFC 7143 6.3),
 * SendTargets (discovery's, Irrelevant in a login), the operational keys
 * through param.c's table.  Our MaxRecvDataSegmentLength is declared with
 * the answer to the initiator's (RFC 7143 13.12).
 */
static enum iscsi_login_status login_negotiate_keys(struct iscsi_conn *conn, struct iscsi_login *login,
						    uint8_t csg, const struct iscsi_kv *kv, int nkv,
						    struct iscsi_text *out)
{
	enum iscsi_login_status status;

	for (int i = 0; i < nkv; i++) {
		const char *k = kv[i].key;

		if (key_is_declaration(k) || key_is_chap(k))
			continue;
		if (strcmp(k, "AuthMethod") == 0) {
			/* RFC 7143 6.3: security keys belong to the security stage. */
			if (csg != ISCSI_STAGE_SECURITY)
				return ISCSI_LOGIN_STATUS_INITIATOR_ERROR;
			status = negotiate_auth_method(conn, login, kv[i].value, out);
			if (status != ISCSI_LOGIN_STATUS_SUCCESS)
				return status;
			continue;
		}
		if (strcmp(k, "SendTargets") == 0) {
			iscsi_text_append(out, k, "Irrelevant");
			continue;
		}
		switch (iscsi_param_negotiate(&login->neg, k, kv[i].value, out)) {
		case ISCSI_NEGOTIATE_OK:
			if (strcmp(k, "MaxRecvDataSegmentLength") == 0 && !login->target_declared_mrdsl) {
				iscsi_param_declare(&login->neg, out);
				login->target_declared_mrdsl = true;
			}
			break;
		case ISCSI_NEGOTIATE_REPEATED_KEY:
			return ISCSI_LOGIN_STATUS_INITIATOR_ERROR;
		case ISCSI_NEGOTIATE_NO_MEMORY:
			return ISCSI_LOGIN_STATUS_OUT_OF_RESOURCES;
		}
	}
	return ISCSI_LOGIN_STATUS_SUCCESS;
}

/*
 * The security stage (RFC 7143 6.3, 12.1): CHAP runs once AuthMethod=CHAP
 * is agreed, and CHAP keys without it fail the authentication.  Leaving the
 * stage (T = 1) needs the authentication the target requires; while CHAP is
 * still running the response stays in the stage (*transit cleared).
 */
static enum iscsi_login_status login_security_stage(struct iscsi_conn *conn, struct iscsi_login *login,
						    struct iscsi_kv *kv, int nkv, bool *transit,
						    struct iscsi_text *out)
{
	if (login->auth_chap) {
		enum iscsi_login_status status = iscsi_chap_handle(conn, login, kv, nkv, out);

		if (status != ISCSI_LOGIN_STATUS_SUCCESS)
			return status;
	} else if (has_chap_keys(kv, nkv)) {
		return ISCSI_LOGIN_STATUS_AUTHENTICATION_FAILURE;
	}
	if (*transit && !login->security_done) {
		/* RFC 7143 12.1: leaving security negotiation without authenticating. */
		if (auth_required(conn, login) && !login->auth_chap)
			return ISCSI_LOGIN_STATUS_AUTHENTICATION_FAILURE;
		if (!login->auth_chap)
			login->security_done = true; /* no AuthMethod negotiated and none required */
		else
			*transit = false;            /* CHAP still running: stay (T = 0) */
	}
	return ISCSI_LOGIN_STATUS_SUCCESS;
}

/*
 * The operational stage: the authentication a target requires is behind us,
 * and CHAP keys are out of place.
 */
static enum iscsi_login_status login_operational_stage(const struct iscsi_conn *conn, const struct iscsi_login *login,
						       const struct iscsi_kv *kv, int nkv)
{
	/* The initiator skipped the security stage of a target that requires CHAP. */
	if (auth_required(conn, login) && !login->security_done)
		return ISCSI_LOGIN_STATUS_AUTHENTICATION_FAILURE;
	/* RFC 7143 6.3: security keys belong to the security stage. */
	if (has_chap_keys(kv, nkv))
		return ISCSI_LOGIN_STATUS_INITIATOR_ERROR;
	return ISCSI_LOGIN_STATUS_SUCCESS;
}

/* The pairs of a complete Login Request (its last C-bit PDU): negotiated into login->neg, answered in out. */
static enum iscsi_login_status login_negotiate(struct iscsi_conn *conn, struct iscsi_login *login,
					       struct login_stage *st, struct iscsi_kv *kv, int nkv,
					       struct iscsi_text *out)
{
	enum iscsi_login_status status = login_declarations(conn, login, kv, nkv, out);

	if (status == ISCSI_LOGIN_STATUS_SUCCESS)
		status = login_negotiate_keys(conn, login, st->csg, kv, nkv, out);
	if (status != ISCSI_LOGIN_STATUS_SUCCESS)
		return status;
	if (st->csg == ISCSI_STAGE_SECURITY)
		return login_security_stage(conn, login, kv, nkv, &st->transit, out);
	return login_operational_stage(conn, login, kv, nkv);
}

/*
 * The transition to full feature phase: the session is created (or
 * reinstated), the response sent, and the negotiated connection parameters
 * take effect; the login state is freed.
 */
static enum iscsi_login_status login_enter_full_feature(struct iscsi_conn *conn, struct iscsi_login *login,
							const struct login_stage *st, struct iscsi_text *out)
{
	struct iscsi_conn_params params;
	enum iscsi_login_status status;

	if (st->csg == ISCSI_STAGE_OPERATIONAL && !login->target_declared_mrdsl) {
		iscsi_param_declare(&login->neg, out);
		login->target_declared_mrdsl = true;
	}
	status = login_complete(conn, login);
	if (status != ISCSI_LOGIN_STATUS_SUCCESS)
		return status;
	params = login->neg.conn;
	/* RFC 7143 13.12: what we accept is what we declared, 8192 if we never did. */
	if (!login->target_declared_mrdsl)
		params.max_recv_data_segment_length = ISCSI_LOGIN_MAX_RECV_DSL;
	login_respond(conn, login, true, st->csg, st->nsg, ISCSI_LOGIN_STATUS_SUCCESS, out);
	/* Digests start with the first full-feature PDU (RFC 7143 13.1). */
	conn->params = params;
	iscsi_login_free(login);
	conn->login = NULL;
	iscsi_conn_enter_full_feature(conn);
	ISCSI_DEBUG(conn->srv,
		    "%s: full feature phase, session TSIH %u: digests %d/%d MRDSL %u/%u burst %u/%u "
		    "InitialR2T %d ImmediateData %d MaxOutstandingR2T %u",
		    conn->peer, conn->session->tsih, params.header_digest, params.data_digest,
		    params.max_recv_data_segment_length, params.max_xmit_data_segment_length,
		    conn->session->params.first_burst_length, conn->session->params.max_burst_length,
		    conn->session->params.initial_r2t, conn->session->params.immediate_data,
		    conn->session->params.max_outstanding_r2t);
	return ISCSI_LOGIN_STATUS_SUCCESS;
}

/* The response to a complete Login Request, in the stage it moves to (RFC 7143 6.3). */
static enum iscsi_login_status login_transit(struct iscsi_conn *conn, struct iscsi_login *login,
					     const struct login_stage *st, struct iscsi_text *out)
{
	if (st->transit && st->nsg == ISCSI_STAGE_FULL_FEATURE)
		return login_enter_full_feature(conn, login, st, out);
	if (st->transit && st->nsg == ISCSI_STAGE_OPERATIONAL) {
		login->current_stage = ISCSI_STAGE_OPERATIONAL;
		login_respond(conn, login, true, st->csg, st->nsg, ISCSI_LOGIN_STATUS_SUCCESS, out);
	} else {
		login_respond(conn, login, false, st->csg, 0, ISCSI_LOGIN_STATUS_SUCCESS, out);
	}
	return ISCSI_LOGIN_STATUS_SUCCESS;
}

void iscsi_login_handle(struct iscsi_conn *conn, const struct iscsi_pdu *pdu)
{
	struct login_stage st = login_stage_decode(pdu->bhs[1]);
	struct iscsi_login *login = conn->login;
	struct iscsi_kv kv[LOGIN_MAX_PAIRS];
	struct iscsi_text out = { 0 };
	enum iscsi_login_status status;
	int nkv = 0;

	if (!login) {
		login = login_start(conn, pdu->bhs, st.csg);
		if (!login)
			return;
		status = login_first_request_check(conn, pdu->bhs);
	} else {
		status = login_next_request(conn, login, pdu->bhs);
	}
	if (status == ISCSI_LOGIN_STATUS_SUCCESS)
		status = login_stage_check(login, &st);
	if (status == ISCSI_LOGIN_STATUS_SUCCESS)
		status = login_append_text(login, pdu);
	if (status == ISCSI_LOGIN_STATUS_SUCCESS && st.cont) {
		/* More text follows: an empty response asks for it. */
		login_respond(conn, login, false, st.csg, 0, ISCSI_LOGIN_STATUS_SUCCESS, NULL);
		return;
	}
	if (status == ISCSI_LOGIN_STATUS_SUCCESS)
		status = login_parse_text(conn, login, kv, &nkv);
	if (status == ISCSI_LOGIN_STATUS_SUCCESS)
		status = login_negotiate(conn, login, &st, kv, nkv, &out);
	if (status == ISCSI_LOGIN_STATUS_SUCCESS) {
		free(login->text);
		login->text = NULL;
		login->text_len = 0;
		status = login_transit(conn, login, &st, &out);
	}
	iscsi_text_free(&out);
	if (status != ISCSI_LOGIN_STATUS_SUCCESS)
		login_fail(conn, login, status);
}
