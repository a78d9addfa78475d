/*
 * SendTargets (RFC 7143 Appendix C, 13.3 TargetAddress): TargetName and one TargetAddress
 * per portal for each target the initiator may see.  A portal bound to a
 * wildcard address is reported with the address the initiator reached us on.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "iscsi_internal.h"

static bool initiator_allowed(const struct iscsi_target *t, const char *initiator)
{
	if (t->acl_len == 0)
		return true;
	for (size_t i = 0; i < t->acl_len; i++) {
		const char *name = t->acl[i].initiator_name;
		if (name && (strcmp(name, "*") == 0 || strcasecmp(name, initiator) == 0))
			return true;
	}
	return false;
}

static bool addr_is_wildcard(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_addr.s_addr == htonl(INADDR_ANY);
	if (ss->ss_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)ss)->sin6_addr);
	return false;
}

static void format_address(const struct sockaddr_storage *host, const struct sockaddr_storage *port_from, char *out,
			   size_t len)
{
	char buf[INET6_ADDRSTRLEN] = "";
	unsigned port;

	port = port_from->ss_family == AF_INET6 ? ntohs(((const struct sockaddr_in6 *)port_from)->sin6_port)
						 : ntohs(((const struct sockaddr_in *)port_from)->sin_port);
	if (host->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)host;
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], buf, sizeof(buf));
			snprintf(out, len, "%s:%u", buf, port);
		} else {
			inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof(buf));
			snprintf(out, len, "[%s]:%u", buf, port);
		}
	} else {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)host)->sin_addr, buf, sizeof(buf));
		snprintf(out, len, "%s:%u", buf, port);
	}
}

static void append_target(struct iscsi_conn *conn, const struct iscsi_target *t, struct iscsi_text *out)
{
	iscsi_text_append(out, "TargetName", t->name);
	for (const struct iscsi_portal *p = conn->srv->portals; p; p = p->next) {
		if (p->fd < 0)
			continue; /* removed (iscsi_server_remove_portal): no longer advertised */
		char addr[INET6_ADDRSTRLEN + 16];
		const struct sockaddr_storage *host = &p->addr;

		if (addr_is_wildcard(&p->addr)) {
			/* A wildcard portal answers on the address the initiator used, if of the same family. */
			if (conn->local_addr.ss_family != p->addr.ss_family)
				continue;
			host = &conn->local_addr;
		}
		format_address(host, &p->addr, addr, sizeof(addr));
		iscsi_text_appendf(out, "TargetAddress", "%s,%u", addr, t->tpgt);
	}
}

int iscsi_discovery_send_targets(struct iscsi_conn *conn, const char *value, struct iscsi_text *out)
{
	struct iscsi_session *s = conn->session;

	if (strcmp(value, "All") == 0) {
		for (const struct iscsi_target *t = conn->srv->targets; t; t = t->next)
			if (initiator_allowed(t, s->initiator_name))
				append_target(conn, t, out);
		return 0;
	}
	if (value[0] == '\0') {
		/* RFC 7143 Appendix C: an empty value in a normal session names the session's target. */
		if (s->type == ISCSI_SESSION_NORMAL && s->target)
			append_target(conn, s->target, out);
		return 0;
	}
	if (!iscsi_name_valid(value)) {
		iscsi_text_append(out, "SendTargets", "Reject");
		return -1;
	}
	for (const struct iscsi_target *t = conn->srv->targets; t; t = t->next)
		if (strcasecmp(t->name, value) == 0 && initiator_allowed(t, s->initiator_name))
			append_target(conn, t, out);
	return 0;
}
