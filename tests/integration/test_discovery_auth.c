/*
 * SendTargets discovery with CHAP (RFC 7143 12.1; iscsi.discovery_chap_*):
 * a discovery session must authenticate when discovery credentials are
 * configured (failures logged as warnings and counted like other failed
 * logins), and discovery lists only the targets whose ACL admits the
 * initiator (RFC 7143 Appendix C: "the targets the initiator may access").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"

#define T_LOCKED "iqn.2026-12.org.sbcemu:itest-locked"
#define DISC_USER "disc-user"
#define DISC_SECRET "discovery-secret-1234"

static const char config[] =
	"[iscsi]\n"
	"discovery_chap_user = " DISC_USER "\n"
	"discovery_chap_secret = " DISC_SECRET "\n"
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\n"
	"size = 16M\n"
	"[target \"" T_LOCKED "\"]\n"
	"allowed_initiators = " ITEST_INITIATOR_2 "\n"
	"[lun \"" T_LOCKED "\" 0]\n"
	"path = @DIR@/locked.img\n"
	"size = 16M\n";

static struct itest_daemon d;

/* Target names SendTargets=All gives initiator, as "name name ..."; NULL when the login fails. */
static char *discover(const char *initiator, const char *user, const char *secret, char *err, size_t errlen)
{
	struct itest_login o = { .discovery = true, .initiator = initiator, .chap_user = user, .chap_secret = secret,
				 .initial_r2t = -1, .immediate_data = -1 };
	struct iscsi_context *s = itest_connect(&d, &o, 0, err, errlen);
	struct iscsi_discovery_address *list;
	char *names;

	if (!s)
		return NULL;
	names = calloc(1, 4096);
	list = iscsi_discovery_sync(s);
	for (struct iscsi_discovery_address *a = list; a; a = a->next) {
		strncat(names, a->target_name, 4000 - strlen(names));
		strcat(names, " ");
	}
	if (list)
		iscsi_free_discovery_data(s, list);
	itest_close(s);
	return names;
}

int main(int argc, char **argv)
{
	char err[256], *names;

	itest_init(argc, argv, "test_discovery_auth: CHAP on discovery sessions, ACL-filtered SendTargets");
	itest_daemon_up(&d, "discovery-auth", config);

	names = discover(ITEST_INITIATOR_1, NULL, NULL, err, sizeof(err));
	itest_ok(names == NULL, "RFC 7143 12.1: discovery without CHAP while discovery_chap_user is set -> login fails",
		 "listed: %s", names ? names : "");
	free(names);
	names = discover(ITEST_INITIATOR_1, DISC_USER, "wrong-secret-9999999", err, sizeof(err));
	itest_ok(names == NULL, "discovery with a wrong secret -> login fails", "listed: %s", names ? names : "");
	free(names);

	names = discover(ITEST_INITIATOR_1, DISC_USER, DISC_SECRET, err, sizeof(err));
	itest_ok(names && strstr(names, ITEST_TARGET " ") && !strstr(names, T_LOCKED),
		 "discovery with the right secret -> the open target listed, not the one whose ACL excludes the initiator",
		 "%s", names ? names : err);
	free(names);
	names = discover(ITEST_INITIATOR_2, DISC_USER, DISC_SECRET, err, sizeof(err));
	itest_ok(names && strstr(names, ITEST_TARGET " ") && strstr(names, T_LOCKED),
		 "the initiator the ACL admits -> both targets listed", "%s", names ? names : err);
	free(names);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
