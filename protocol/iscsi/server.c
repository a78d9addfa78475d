/*
 * The iSCSI server object: portals (listening sockets), targets, the flush
 * hook that writes queued PDUs before the loop sleeps, and shutdown.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iscsi_internal.h"

void iscsi_server_params_default(struct iscsi_server_params *p)
{
	memset(p, 0, sizeof(*p));
	p->max_recv_data_segment_length = 262144;
	p->max_burst_length = 1048576;
	p->first_burst_length = 262144;
	p->immediate_data = true;
	p->initial_r2t = false;
	p->max_outstanding_r2t = 1;
	p->max_connections = 1;
	p->default_time2wait = 2;
	p->default_time2retain = 20;
	p->cmd_window = 128;
	p->nop_in_interval = 30;
	p->nop_in_timeout = 30;
	p->login_timeout = 30;
	p->header_digest_crc32c_allowed = true;
	p->data_digest_crc32c_allowed = true;
	p->max_portal_connections = 1024;
	p->max_address_connections = 64;
	p->output_stall_timeout = 60;
	p->login_failures_per_minute = 10;
}

void iscsi_log(const struct iscsi_server *srv, enum iscsi_log_kind kind, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!srv || !srv->log || (kind == ISCSI_LOG_TRACE && !srv->trace))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	srv->log(srv->log_arg, kind, msg);
}

void iscsi_server_set_log(struct iscsi_server *srv,
			  void (*log)(void *arg, enum iscsi_log_kind kind, const char *message), void *arg)
{
	srv->log = log;
	srv->log_arg = arg;
}

void iscsi_server_set_trace(struct iscsi_server *srv, bool trace)
{
	srv->trace = trace;
}

static void credentials_free(struct iscsi_chap_credentials *c)
{
	free((char *)c->user);
	free((char *)c->secret);
	c->user = c->secret = NULL;
}

static int credentials_copy(struct iscsi_chap_credentials *to, const struct iscsi_chap_credentials *from)
{
	credentials_free(to);
	if (!from || !from->user)
		return 0;
	to->user = strdup(from->user);
	to->secret = strdup(from->secret ? from->secret : "");
	return to->user && to->secret ? 0 : -1;
}

int iscsi_server_set_discovery_auth(struct iscsi_server *srv, const struct iscsi_chap_credentials *chap,
				    const struct iscsi_chap_credentials *mutual)
{
	return credentials_copy(&srv->discovery_chap, chap) | credentials_copy(&srv->discovery_mutual, mutual);
}

/* Writes every connection's queued output once per loop iteration, before the loop sleeps (docs/architecture.md, "Threads"). */
static void server_prepare_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct iscsi_server *srv = (struct iscsi_server *)((char *)w - offsetof(struct iscsi_server, prepare));
	(void)loop;
	(void)revents;

	while (srv->flush_list) {
		struct iscsi_conn *conn = srv->flush_list;
		srv->flush_list = conn->flush_next;
		conn->flush_next = NULL;
		conn->on_flush_list = false;
		iscsi_conn_flush(conn);
		iscsi_conn_put(conn);
	}
}

static uint32_t clamp_u32(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

struct iscsi_server *iscsi_server_create(struct ev_loop *loop, const struct iscsi_server_params *params)
{
	struct iscsi_server *srv = calloc(1, sizeof(*srv));

	if (!srv)
		return NULL;
	srv->loop = loop;
	srv->trace = true;
	if (params)
		srv->params = *params;
	else
		iscsi_server_params_default(&srv->params);
	/* RFC 7143 13: ranges of the keys we offer. */
	srv->params.max_recv_data_segment_length = clamp_u32(srv->params.max_recv_data_segment_length, 512, 16777215);
	srv->params.max_burst_length = clamp_u32(srv->params.max_burst_length, 512, 16777215);
	srv->params.first_burst_length = clamp_u32(srv->params.first_burst_length, 512, srv->params.max_burst_length);
	srv->params.max_outstanding_r2t = clamp_u32(srv->params.max_outstanding_r2t, 1, ISCSI_MAX_R2T);
	srv->params.max_connections = 1; /* one connection per session (see iscsi_internal.h) */
	srv->params.default_time2wait = clamp_u32(srv->params.default_time2wait, 0, 3600);
	srv->params.default_time2retain = clamp_u32(srv->params.default_time2retain, 0, 3600);
	srv->params.cmd_window = clamp_u32(srv->params.cmd_window, 1, 4096);
	srv->next_tsih = 1;
	ev_prepare_init(&srv->prepare, server_prepare_cb);
	ev_prepare_start(loop, &srv->prepare);
	return srv;
}

/* Open connections from the address of peer (any portal). */
static unsigned connections_from(const struct iscsi_server *srv, const struct sockaddr_storage *peer)
{
	uint8_t key[17], other[17];
	size_t len = iscsi_addr_key(peer, key);
	unsigned n = 0;

	for (const struct iscsi_conn *c = srv->conns; c && len; c = c->next)
		n += iscsi_addr_key(&c->peer_addr, other) == len && memcmp(key, other, len) == 0;
	return n;
}

static void portal_resume_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct iscsi_portal *portal = (struct iscsi_portal *)((char *)w - offsetof(struct iscsi_portal, resume));

	(void)revents;
	if (portal->fd >= 0)
		ev_io_start(loop, &portal->io);
}

/*
 * Out of descriptors (or memory): the pending connection cannot be taken
 * and would wake the loop again at once.  The portal stops accepting for a
 * second; the first time of an episode is logged (accept(2): EMFILE,
 * ENFILE, ENOBUFS, ENOMEM).
 */
static void portal_pause(struct iscsi_portal *portal, int err)
{
	struct iscsi_server *srv = portal->srv;

	if (!portal->exhausted)
		iscsi_log(srv, ISCSI_LOG_WARNING, "portal: cannot accept connections: %s; retrying every second",
			  strerror(err));
	portal->exhausted = true;
	ev_io_stop(srv->loop, &portal->io);
	ev_timer_set(&portal->resume, 1., 0.);
	ev_timer_start(srv->loop, &portal->resume);
}

static void portal_accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct iscsi_portal *portal = (struct iscsi_portal *)((char *)w - offsetof(struct iscsi_portal, io));
	struct iscsi_server *srv = portal->srv;
	(void)loop;
	(void)revents;

	for (int i = 0; i < 16; i++) {
		struct sockaddr_storage peer;
		socklen_t len = sizeof(peer);
		int fd = accept4(portal->fd, (struct sockaddr *)&peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct iscsi_conn *conn;
		char why[96] = "";

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				portal_pause(portal, errno);
			else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				ISCSI_DEBUG(srv, "accept: %s", strerror(errno));
			return;
		}
		if (portal->exhausted) {
			portal->exhausted = false;
			iscsi_log(srv, ISCSI_LOG_WARNING, "portal: accepting connections again");
		}
		if (srv->shutting_down) {
			close(fd);
			continue;
		}
		if (srv->params.max_portal_connections && portal->nconns >= srv->params.max_portal_connections)
			snprintf(why, sizeof(why), "%u connections on this portal (iscsi.max_portal_connections)",
				 portal->nconns);
		else if (srv->params.max_address_connections &&
			 connections_from(srv, &peer) >= srv->params.max_address_connections)
			snprintf(why, sizeof(why), "%u connections from that address (iscsi.max_connections_per_address)",
				 srv->params.max_address_connections);
		if (why[0]) {
			char host[INET6_ADDRSTRLEN] = "?";

			if (peer.ss_family == AF_INET)
				inet_ntop(AF_INET, &((struct sockaddr_in *)&peer)->sin_addr, host, sizeof(host));
			else if (peer.ss_family == AF_INET6)
				inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&peer)->sin6_addr, host, sizeof(host));
			iscsi_log(srv, ISCSI_LOG_WARNING, "connection from %s refused: %s", host, why);
			close(fd);
			continue;
		}
		conn = iscsi_conn_accept(srv, fd);
		if (conn) {
			conn->portal = portal;
			portal->nconns++;
		}
	}
}

/* Splits "host:port", "[v6]:port" or "host" (port 3260). */
static int split_addr(const char *addr, char *host, size_t hostlen, char *port, size_t portlen)
{
	const char *colon;

	if (addr[0] == '[') {
		const char *close_br = strchr(addr, ']');
		if (!close_br || (size_t)(close_br - addr - 1) >= hostlen)
			return -1;
		memcpy(host, addr + 1, (size_t)(close_br - addr - 1));
		host[close_br - addr - 1] = '\0';
		colon = close_br[1] == ':' ? close_br + 1 : NULL;
		if (close_br[1] && !colon)
			return -1;
	} else {
		colon = strrchr(addr, ':');
		size_t n = colon ? (size_t)(colon - addr) : strlen(addr);
		if (n >= hostlen)
			return -1;
		memcpy(host, addr, n);
		host[n] = '\0';
	}
	snprintf(port, portlen, "%s", colon ? colon + 1 : "3260");
	return 0;
}

int iscsi_server_add_portal(struct iscsi_server *srv, const char *addr, char *err, size_t errlen)
{
	char host[256], port[16];
	struct addrinfo hints, *res = NULL;
	struct iscsi_portal *portal;
	int fd, one = 1, rc;

	if (split_addr(addr, host, sizeof(host), port, sizeof(port)) != 0) {
		snprintf(err, errlen, "bad portal address '%s'", addr);
		return -1;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
	if (rc != 0) {
		snprintf(err, errlen, "portal '%s': %s", addr, gai_strerror(rc));
		return -1;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "portal '%s': socket: %s", addr, strerror(errno));
		freeaddrinfo(res);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (res->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 64) != 0) {
		snprintf(err, errlen, "portal '%s': %s", addr, strerror(errno));
		close(fd);
		freeaddrinfo(res);
		return -1;
	}
	portal = calloc(1, sizeof(*portal));
	if (!portal) {
		snprintf(err, errlen, "out of memory");
		close(fd);
		freeaddrinfo(res);
		return -1;
	}
	portal->srv = srv;
	portal->fd = fd;
	portal->addr_len = sizeof(portal->addr);
	getsockname(fd, (struct sockaddr *)&portal->addr, &portal->addr_len);
	freeaddrinfo(res);
	ev_io_init(&portal->io, portal_accept_cb, fd, EV_READ);
	ev_io_start(srv->loop, &portal->io);
	ev_init(&portal->resume, portal_resume_cb);
	portal->next = srv->portals;
	srv->portals = portal;
	return 0;
}

/* Whether sockaddr a is the address and port of b. */
static bool same_address(const struct sockaddr *a, const struct sockaddr_storage *b)
{
	if (a->sa_family != b->ss_family)
		return false;
	if (a->sa_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->sa_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return x->sin6_port == y->sin6_port && memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) == 0;
	}
	return false;
}

int iscsi_server_remove_portal(struct iscsi_server *srv, const char *addr, char *err, size_t errlen)
{
	char host[256], port[16];
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV | AI_NUMERICHOST },
			*res = NULL;
	int rc;

	if (split_addr(addr, host, sizeof(host), port, sizeof(port)) != 0 ||
	    (rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &res)) != 0) {
		snprintf(err, errlen, "bad portal address '%s'", addr);
		return -1;
	}
	for (struct iscsi_portal *p = srv->portals; p; p = p->next) {
		if (p->fd < 0 || !same_address(res->ai_addr, &p->addr))
			continue;
		/* Inert from now on (its connections still count on it), freed with the server. */
		ev_timer_stop(srv->loop, &p->resume);
		ev_io_stop(srv->loop, &p->io);
		close(p->fd);
		p->fd = -1;
		freeaddrinfo(res);
		return 0;
	}
	freeaddrinfo(res);
	snprintf(err, errlen, "no portal %s", addr);
	return -1;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* The CHAP credentials and ACL of t (strings owned). */
static void access_free(struct iscsi_target *t)
{
	free((char *)t->chap.user);
	free((char *)t->chap.secret);
	free((char *)t->mutual.user);
	free((char *)t->mutual.secret);
	for (size_t i = 0; i < t->acl_len; i++) {
		free((char *)t->acl[i].initiator_name);
		free((char *)t->acl[i].chap.user);
		free((char *)t->acl[i].chap.secret);
		free((char *)t->acl[i].mutual.user);
		free((char *)t->acl[i].mutual.secret);
	}
	free(t->acl);
	t->acl = NULL;
	t->acl_len = 0;
	t->chap = t->mutual = (struct iscsi_chap_credentials){ 0 };
}

/* p's CHAP credentials and ACL copied into t: 0, or -1 when out of memory (t then holds part of them). */
static int access_copy(struct iscsi_target *t, const struct iscsi_target_params *p)
{
	bool nomem;

	t->chap.user = dup_or_null(p->chap.user);
	t->chap.secret = dup_or_null(p->chap.secret);
	t->mutual.user = dup_or_null(p->mutual.user);
	t->mutual.secret = dup_or_null(p->mutual.secret);
	nomem = (p->chap.user && !t->chap.user) || (p->chap.secret && !t->chap.secret) ||
		(p->mutual.user && !t->mutual.user) || (p->mutual.secret && !t->mutual.secret);
	if (p->acl_len) {
		t->acl = calloc(p->acl_len, sizeof(*t->acl));
		if (!t->acl)
			return -1;
		t->acl_len = p->acl_len;
		for (size_t i = 0; i < p->acl_len; i++) {
			t->acl[i].initiator_name = dup_or_null(p->acl[i].initiator_name);
			t->acl[i].chap.user = dup_or_null(p->acl[i].chap.user);
			t->acl[i].chap.secret = dup_or_null(p->acl[i].chap.secret);
			t->acl[i].mutual.user = dup_or_null(p->acl[i].mutual.user);
			t->acl[i].mutual.secret = dup_or_null(p->acl[i].mutual.secret);
			nomem |= !t->acl[i].initiator_name;
		}
	}
	return nomem ? -1 : 0;
}

static void target_free(struct iscsi_target *t)
{
	if (!t)
		return;
	free(t->name);
	free(t->alias);
	access_free(t);
	free(t);
}

int iscsi_server_add_target(struct iscsi_server *srv, const struct iscsi_target_params *p, char *err,
			    size_t errlen)
{
	struct iscsi_target *t;

	if (!p->name || !iscsi_name_valid(p->name)) {
		snprintf(err, errlen, "invalid iSCSI target name '%s'", p->name ? p->name : "");
		return -1;
	}
	if (iscsi_server_find_target(srv, p->name)) {
		snprintf(err, errlen, "target '%s' defined twice", p->name);
		return -1;
	}
	if (!p->device) {
		snprintf(err, errlen, "target '%s' has no device", p->name);
		return -1;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		goto nomem;
	t->name = strdup(p->name);
	t->alias = dup_or_null(p->alias);
	t->tpgt = p->tpgt ? p->tpgt : 1;
	t->device = p->device;
	if (access_copy(t, p) != 0)
		goto nomem;
	if (!t->name || (p->alias && !t->alias))
		goto nomem;
	t->next = NULL;
	/* keep definition order for SendTargets */
	struct iscsi_target **pp = &srv->targets;
	while (*pp)
		pp = &(*pp)->next;
	*pp = t;
	return 0;
nomem:
	target_free(t);
	snprintf(err, errlen, "out of memory");
	return -1;
}

int iscsi_server_set_target_access(struct iscsi_server *srv, const struct iscsi_target_params *p, char *err,
				   size_t errlen)
{
	struct iscsi_target *t = p->name ? iscsi_server_find_target(srv, p->name) : NULL, fresh = { 0 };

	if (!t) {
		snprintf(err, errlen, "no target '%s'", p->name ? p->name : "");
		return -1;
	}
	if (access_copy(&fresh, p) != 0) {
		access_free(&fresh);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/*
	 * A login under way holds pointers into the old ACL (its entry, its
	 * credentials): it is dropped and the initiator tries again under the
	 * new rules.  Sessions already logged in stay (RFC 7143 has no way to
	 * ask them to authenticate again).
	 */
	for (struct iscsi_conn *c = srv->conns, *next; c; c = next) {
		next = c->next;
		if (c->state == ISCSI_CONN_STATE_LOGIN && c->login && c->login->target == t)
			iscsi_conn_drop(c, "the target's access rules changed during the login");
	}
	access_free(t);
	t->chap = fresh.chap;
	t->mutual = fresh.mutual;
	t->acl = fresh.acl;
	t->acl_len = fresh.acl_len;
	return 0;
}

static struct iscsi_target *find_in(struct iscsi_target *list, const char *name)
{
	/* RFC 7143 4.2.7.1: names are compared after stringprep; we accept them as sent, case-insensitively. */
	for (struct iscsi_target *t = list; t; t = t->next)
		if (strcasecmp(t->name, name) == 0)
			return t;
	return NULL;
}

struct iscsi_target *iscsi_server_find_target(struct iscsi_server *srv, const char *name)
{
	return find_in(srv->targets, name);
}

struct iscsi_target *iscsi_server_find_removed_target(struct iscsi_server *srv, const char *name)
{
	return find_in(srv->removed_targets, name);
}

unsigned iscsi_server_remove_target(struct iscsi_server *srv, const char *name, const char *why)
{
	struct iscsi_target **pp = &srv->targets, *t;

	while (*pp && strcasecmp((*pp)->name, name) != 0)
		pp = &(*pp)->next;
	if (!*pp)
		return 0;
	t = *pp;
	*pp = t->next;
	t->next = srv->removed_targets;
	srv->removed_targets = t;
	return iscsi_server_drop_target(srv, t->name, why);
}

static void shutdown_check_done(struct iscsi_server *srv)
{
	if (srv->shutting_down && srv->nconns_alive == 0 && srv->shutdown_done) {
		void (*done)(void *) = srv->shutdown_done;
		srv->shutdown_done = NULL;
		done(srv->shutdown_arg);
	}
}

void iscsi_server_conn_freed(struct iscsi_server *srv)
{
	srv->nconns_alive--;
	shutdown_check_done(srv);
}

void iscsi_server_shutdown(struct iscsi_server *srv, void (*done)(void *arg), void *arg)
{
	if (srv->shutting_down)
		return;
	srv->shutting_down = true;
	srv->shutdown_done = done;
	srv->shutdown_arg = arg;
	for (struct iscsi_portal *p = srv->portals; p; p = p->next) {
		ev_timer_stop(srv->loop, &p->resume);
		if (p->fd >= 0) {
			ev_io_stop(srv->loop, &p->io);
			close(p->fd);
			p->fd = -1;
		}
	}
	/* Each connection finishes its commands, sends their responses, then closes. */
	for (struct iscsi_conn *c = srv->conns, *next; c; c = next) {
		next = c->next;
		iscsi_conn_check_idle(c);
	}
	shutdown_check_done(srv);
}

void iscsi_server_destroy(struct iscsi_server *srv)
{
	if (!srv)
		return;
	/* Connections still open (shutdown not awaited) are dropped here. */
	while (srv->conns)
		iscsi_conn_drop(srv->conns, "server destroyed");
	while (srv->sessions)
		iscsi_session_end(srv->sessions, "server destroyed");
	while (srv->portals) {
		struct iscsi_portal *p = srv->portals;
		srv->portals = p->next;
		ev_timer_stop(srv->loop, &p->resume);
		if (p->fd >= 0) {
			ev_io_stop(srv->loop, &p->io);
			close(p->fd);
		}
		free(p);
	}
	while (srv->removed_targets) {
		struct iscsi_target *t = srv->removed_targets;
		srv->removed_targets = t->next;
		target_free(t);
	}
	while (srv->targets) {
		struct iscsi_target *t = srv->targets;
		srv->targets = t->next;
		target_free(t);
	}
	ev_prepare_stop(srv->loop, &srv->prepare);
	iscsi_login_failures_free(srv);
	iscsi_task_cache_free(srv);
	credentials_free(&srv->discovery_chap);
	credentials_free(&srv->discovery_mutual);
	free(srv);
}
