/*
 * The iSCSI front end (frontend.h): one iSCSI target per configured target,
 * in front of the SCSI device the daemon built for it, and the portals last,
 * so no initiator connects before its target exists.  Targets added and
 * removed at run time, the sessions the control lists and the connections
 * a power cut drops come through the same interface.
 */
#include <stdio.h>
#include <stdlib.h>

#include "iscsi.h"
#include "sbcemud.h"

struct frontend_iscsi {
	struct iscsi_server *server;
	struct sbce_ratelimit peer_log_limit;
	struct sbce_ratelimit warning_limit;
};

static void server_params(const struct cfg_iscsi *c, struct iscsi_server_params *p)
{
	iscsi_server_params_default(p);
	p->max_recv_data_segment_length = c->max_recv_data_segment_length;
	p->max_burst_length = c->max_burst_length;
	p->first_burst_length = c->first_burst_length;
	p->immediate_data = c->immediate_data;
	p->initial_r2t = c->initial_r2t;
	p->max_outstanding_r2t = c->max_outstanding_r2t;
	p->max_connections = c->max_connections;
	p->default_time2wait = c->default_time2wait;
	p->default_time2retain = c->default_time2retain;
	p->cmd_window = c->cmd_window;
	p->nop_in_interval = c->nop_in_interval;
	p->nop_in_timeout = c->nop_in_timeout;
	p->login_timeout = c->login_timeout;
	p->header_digest_crc32c_allowed = c->header_digest_crc32c;
	p->data_digest_crc32c_allowed = c->data_digest_crc32c;
	p->max_portal_connections = c->max_portal_connections;
	p->max_address_connections = c->max_connections_per_address;
	p->output_stall_timeout = c->output_stall_timeout;
	p->login_failures_per_minute = c->login_failures_per_minute;
}

/* The ACL entries iscsi_server_add_target() wants (it copies them: free the array after). */
static struct iscsi_acl_entry *make_acl(const struct cfg_target *t)
{
	struct iscsi_acl_entry *acl = calloc(t->acl_count ? t->acl_count : 1, sizeof(*acl));

	if (!acl)
		return NULL;
	for (size_t i = 0; i < t->acl_count; i++) {
		const struct cfg_acl *a = t->acls[i];

		acl[i].initiator_name = a->initiator;
		acl[i].chap.user = a->chap_user[0] ? a->chap_user : NULL;
		acl[i].chap.secret = a->chap_user[0] ? a->chap_secret : NULL;
		acl[i].mutual.user = a->mutual_user[0] ? a->mutual_user : NULL;
		acl[i].mutual.secret = a->mutual_user[0] ? a->mutual_secret : NULL;
	}
	return acl;
}

/* t's CHAP credentials and ACL in params (acl: malloc'd, the caller frees it); false when out of memory. */
static bool access_params(const struct cfg_target *t, struct iscsi_target_params *params, struct iscsi_acl_entry **acl)
{
	*acl = make_acl(t);
	if (!*acl)
		return false;
	params->chap.user = t->chap_user[0] ? t->chap_user : NULL;
	params->chap.secret = t->chap_user[0] ? t->chap_secret : NULL;
	params->mutual.user = t->mutual_user[0] ? t->mutual_user : NULL;
	params->mutual.secret = t->mutual_user[0] ? t->mutual_secret : NULL;
	params->acl = t->acl_count ? *acl : NULL;
	params->acl_len = t->acl_count;
	return true;
}

static int add_target(struct frontend_iscsi *fe, const struct cfg_target *t, struct scsi_device *dev, char *err,
		      size_t errlen)
{
	struct iscsi_target_params params = { 0 };
	struct iscsi_acl_entry *acl;
	int rc;

	if (!access_params(t, &params, &acl)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	params.name = t->name;
	params.alias = t->alias[0] ? t->alias : NULL;
	params.tpgt = (uint16_t)t->tpgt;
	params.device = dev;
	rc = iscsi_server_add_target(fe->server, &params, err, errlen);
	free(acl);
	return rc;
}

static int target_access_changed(void *state, const struct cfg_target *t, char *err, size_t errlen)
{
	struct frontend_iscsi *fe = state;
	struct iscsi_target_params params = { .name = t->name };
	struct iscsi_acl_entry *acl;
	int rc;

	if (!access_params(t, &params, &acl)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = iscsi_server_set_target_access(fe->server, &params, err, errlen);
	free(acl);
	return rc;
}

/*
 * The server's messages: the trace at debug level as it comes (log_level =
 * debug asks for it; the kernel tests count commands in it); what peers do
 * wrong at debug level, and what the operator should see (limits hit,
 * failed logins) as warnings, each at most 20 lines per 5 s (a peer can
 * cause them at will).
 */
static void server_log(void *arg, enum iscsi_log_kind kind, const char *message)
{
	struct frontend_iscsi *fe = arg;

	if (kind == ISCSI_LOG_PEER_ERROR)
		sbce_log_ratelimited(&fe->peer_log_limit, SBCE_LOG_DEBUG, "iscsi: %s", message);
	else if (kind == ISCSI_LOG_WARNING)
		sbce_log_ratelimited(&fe->warning_limit, SBCE_LOG_WARN, "iscsi: %s", message);
	else
		sbce_debug("iscsi: %s", message);
}

static void iscsi_destroy(void *state)
{
	struct frontend_iscsi *fe = state;

	if (!fe)
		return;
	if (fe->server)
		iscsi_server_destroy(fe->server);
	free(fe);
}

static int iscsi_start(struct sbce_daemon *d, void **state)
{
	const struct cfg *cfg = d->cfg;
	struct iscsi_server_params params;
	struct frontend_iscsi *fe = calloc(1, sizeof(*fe));
	char err[512];

	*state = fe;
	if (!fe) {
		sbce_error("cannot create the iSCSI server: out of memory");
		return -1;
	}
	server_params(&cfg->iscsi, &params);
	fe->server = iscsi_server_create(d->loop.loop, &params);
	if (!fe->server) {
		sbce_error("cannot create the iSCSI server: out of memory");
		return -1;
	}
	fe->peer_log_limit = (struct sbce_ratelimit)SBCE_RATELIMIT_INIT(5, 20);
	fe->warning_limit = (struct sbce_ratelimit)SBCE_RATELIMIT_INIT(5, 20);
	iscsi_server_set_log(fe->server, server_log, fe);
	iscsi_server_set_trace(fe->server, sbce_log_enabled(SBCE_LOG_DEBUG));
	{
		const struct cfg_iscsi *c = &cfg->iscsi;
		struct iscsi_chap_credentials chap = { c->discovery_chap_user[0] ? c->discovery_chap_user : NULL,
						       c->discovery_chap_secret };
		struct iscsi_chap_credentials mutual = { c->discovery_mutual_user[0] ? c->discovery_mutual_user : NULL,
							 c->discovery_mutual_secret };

		if (iscsi_server_set_discovery_auth(fe->server, &chap, &mutual) != 0) {
			sbce_error("cannot create the iSCSI server: out of memory");
			return -1;
		}
	}
	for (size_t i = 0; i < cfg->target_count; i++) {
		if (add_target(fe, cfg->targets[i], d->devices[i], err, sizeof(err)) != 0) {
			sbce_error("target %s: %s", cfg->targets[i]->name, err);
			return -1;
		}
	}
	for (unsigned i = 0; i < cfg->daemon.listen_count; i++) {
		if (iscsi_server_add_portal(fe->server, cfg->daemon.listen[i], err, sizeof(err))) {
			sbce_error("cannot listen on %s: %s", cfg->daemon.listen[i], err);
			return -1;
		}
		sbce_info("listening on %s", cfg->daemon.listen[i]);
	}
	return 0;
}

static void iscsi_drain(void *state, void (*done)(void *arg), void *arg)
{
	struct frontend_iscsi *fe = state;

	iscsi_server_shutdown(fe->server, done, arg);
}

static int iscsi_target_added(void *state, const struct cfg_target *t, struct scsi_device *dev, char *err,
			      size_t errlen)
{
	return add_target(state, t, dev, err, errlen);
}

static unsigned iscsi_target_removed(void *state, const char *name, const char *why)
{
	struct frontend_iscsi *fe = state;

	return iscsi_server_remove_target(fe->server, name, why);
}

static unsigned iscsi_drop_connections(void *state, const char *name, const char *why)
{
	struct frontend_iscsi *fe = state;

	return iscsi_server_drop_target(fe->server, name, why);
}

struct session_walk {
	void (*fn)(void *arg, const struct sbce_session *s);
	void *arg;
};

/* One session as the control shows it: what every transport has, then the iSCSI values (RFC 7143 names). */
static void each_session(void *arg, const struct iscsi_session_info *info)
{
	struct session_walk *w = arg;
	char isid[13];
	struct sbce_attr attrs[] = {
		{ "isid", SBCE_ATTR_STRING, .string = isid },
		{ "tsih", SBCE_ATTR_INTEGER, .integer = info->tsih },
		{ "type", SBCE_ATTR_STRING, .string = info->target ? "normal" : "discovery" },
		{ "connections", SBCE_ATTR_INTEGER, .integer = info->connections },
		{ "cid", SBCE_ATTR_INTEGER, .integer = info->cid },
		{ "peer", SBCE_ATTR_STRING, .string = info->peer },
		{ "portal", SBCE_ATTR_STRING, .string = info->portal },
		{ "exp_cmd_sn", SBCE_ATTR_INTEGER, .integer = info->exp_cmd_sn },
		{ "max_cmd_sn", SBCE_ATTR_INTEGER, .integer = info->max_cmd_sn },
		{ "header_digest", SBCE_ATTR_STRING, .string = info->header_digest ? "CRC32C" : "None" },
		{ "data_digest", SBCE_ATTR_STRING, .string = info->data_digest ? "CRC32C" : "None" },
		{ "immediate_data", SBCE_ATTR_BOOLEAN, .boolean = info->immediate_data },
		{ "initial_r2t", SBCE_ATTR_BOOLEAN, .boolean = info->initial_r2t },
		{ "max_burst_length", SBCE_ATTR_INTEGER, .integer = info->max_burst_length },
		{ "first_burst_length", SBCE_ATTR_INTEGER, .integer = info->first_burst_length },
		{ "max_recv_data_segment_length", SBCE_ATTR_INTEGER, .integer = info->max_recv_data_segment_length },
	};
	struct sbce_session s = {
		.target = info->target, .initiator = info->initiator, .commands = info->commands,
		.attrs = attrs, .attr_count = sizeof(attrs) / sizeof(attrs[0]),
	};

	snprintf(isid, sizeof(isid), "%02x%02x%02x%02x%02x%02x", info->isid[0], info->isid[1], info->isid[2],
		 info->isid[3], info->isid[4], info->isid[5]);
	w->fn(w->arg, &s);
}

static void iscsi_foreach_session(void *state, void (*fn)(void *arg, const struct sbce_session *s), void *arg)
{
	struct frontend_iscsi *fe = state;
	struct session_walk w = { fn, arg };

	iscsi_server_foreach_session(fe->server, each_session, &w);
}

static int portal_changed(void *state, const char *addr, bool add, char *err, size_t errlen)
{
	struct frontend_iscsi *fe = state;

	return add ? iscsi_server_add_portal(fe->server, addr, err, errlen)
		   : iscsi_server_remove_portal(fe->server, addr, err, errlen);
}

static const struct sbce_frontend_ops frontend_iscsi = {
	.name = "iscsi",
	.portal_changed = portal_changed,
	.target_access_changed = target_access_changed,
	.start = iscsi_start,
	.drain = iscsi_drain,
	.destroy = iscsi_destroy,
	.foreach_session = iscsi_foreach_session,
	.target_added = iscsi_target_added,
	.target_removed = iscsi_target_removed,
	.drop_connections = iscsi_drop_connections,
};
SBCE_FRONTEND_REGISTER(frontend_iscsi)
