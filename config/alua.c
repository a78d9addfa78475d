/*
 * lun.alua_peer_groups (docs/alua.md, docs/rbd.md): the target port groups
 * of the other nodes that serve the same RBD image, "GROUP:PORT" items (the
 * group's number and the relative target port identifier of its one port,
 * the peer's tpgt) separated by spaces or commas.  The setter checks the
 * syntax where the key is read, so errors carry file and line; the daemon
 * walks the list again to fill the LU's parameters.
 */
#include <stdio.h>
#include <string.h>

#include "config_internal.h"

int cfg_alua_peers_walk(const char *text, int (*fn)(void *arg, uint32_t group, uint32_t port), void *arg,
			char *why, size_t whylen)
{
	const char *p = text;
	unsigned n = 0;

	for (;;) {
		uint64_t group, port;
		int rc;

		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (!*p)
			return 0;
		if (cfg_parse_decimal(&p, 65535, &group) != 0 || *p++ != ':' || cfg_parse_decimal(&p, 65535, &port) != 0 ||
		    group == 0 || port == 0 || (*p && *p != ' ' && *p != '\t' && *p != ',')) {
			snprintf(why, whylen, "\"%.60s\" is not a list of GROUP:PORT (target port group and relative "
				 "target port identifier, each 1..65535, like \"2:2, 3:3\")", text);
			return -1;
		}
		if (++n > CFG_ALUA_PEERS_MAX) {
			snprintf(why, whylen, "at most %u other target port groups", CFG_ALUA_PEERS_MAX);
			return -1;
		}
		if (fn && (rc = fn(arg, (uint32_t)group, (uint32_t)port)) != 0)
			return rc;
	}
}

int cfg_set_alua_peers(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen)
{
	if (cfg_alua_peers_walk(value, NULL, NULL, why, whylen) != 0)
		return -1;
	return cfg_set_string(key, object, value, why, whylen);
}

/* Each group once, none the LU's own (finish.c). */
struct peers_check {
	uint32_t own, seen[CFG_ALUA_PEERS_MAX], n, bad;
};

static int peer_check(void *arg, uint32_t group, uint32_t port)
{
	struct peers_check *c = arg;
	int rc = group == c->own ? 1 : 0;

	(void)port;
	for (uint32_t i = 0; i < c->n && !rc; i++)
		if (c->seen[i] == group)
			rc = 2;
	if (rc)
		c->bad = group;
	else
		c->seen[c->n++] = group;
	return rc;
}

void cfg_finish_alua_peers(const struct cfg_lun_check *c, struct cfg_lun *l)
{
	struct peers_check pc = { .own = l->target_port_group };
	char why[256];
	int rc;

	if (!l->alua_peer_groups[0])
		return;
	if (l->rbd_unavailable != CFG_RBD_UNAVAILABLE_STANDBY) {
		cfg_lun_fail(c, l, "alua_peer_groups", "only with rbd_unavailable = standby (the other groups are the "
			     "nodes that wait for the image while one holds it)");
		return;
	}
	rc = cfg_alua_peers_walk(l->alua_peer_groups, peer_check, &pc, why, sizeof(why));
	if (rc == 1)
		cfg_lun_fail(c, l, "alua_peer_groups", "group %u is this LU's own target_port_group", pc.bad);
	else if (rc == 2)
		cfg_lun_fail(c, l, "alua_peer_groups", "group %u is named twice", pc.bad);
}
