/*
 * Who may log into a running target (docs/control.md): acl-add, acl-remove
 * and target-auth, what tgtadm's account and acl modes and targetcli's acls
 * do.  The changed access is checked as the configuration file is: the
 * target's CHAP keys and ACL, with the change, are set into a configuration
 * of their own (cfg_set: the same setters give the same reasons) that
 * cfg_finish() checks whole (RFC 7143 12.1.3 secret lengths, mutual CHAP
 * only over one-way CHAP, ...).  Then the running configuration takes it
 * and the front ends apply it to logins from now on; sessions already
 * logged in stay.  CHAP secrets are never echoed.
 */
#include <stdio.h>
#include <string.h>

#include "control_internal.h"

enum access_change { ACL_ADD, ACL_REMOVE, TARGET_AUTH };

static const char *const chap_keys[] = { "chap_user", "chap_secret", "mutual_user", "mutual_secret" };

/* The value of chap key k in o (a struct cfg_target or cfg_acl: the same four fields). */
static const char *chap_value(const char *user, const char *secret, const char *muser, const char *msecret, size_t k)
{
	const char *v[] = { user, secret, muser, msecret };

	return v[k];
}

/* A string member (absent: NULL), or -1 with the reason. */
static int string_member(const json_t *req, const char *name, const char **out, char *err, size_t errlen)
{
	const json_t *v = json_object_get(req, name);

	*out = NULL;
	if (!v)
		return 0;
	if (!json_is_string(v)) {
		snprintf(err, errlen, "\"%s\" must be a string", name);
		return -1;
	}
	*out = json_string_value(v);
	return 0;
}

/* The first message of diag, as err. */
static void first_error(const struct cfg_diag *diag, char *err, size_t errlen)
{
	const char *text = diag->text ? diag->text : "invalid";

	snprintf(err, errlen, "%.*s", (int)strcspn(text, "\n"), text);
}

static int access_change(struct sbce_daemon *d, const json_t *req, json_t *result, enum access_change what, char *err,
			 size_t errlen)
{
	const char *initiator = NULL, *given[4];
	struct cfg *cand = cfg_create();
	struct cfg_diag diag = { 0 };
	struct cfg_target *t;
	char section[2 * CFG_NAME_MAX + 16];
	bool found = false;
	size_t i;
	int rc = -1;

	if (!cand) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (sbce_control_target(d, req, &i, err, errlen) != 0 ||
	    (what != TARGET_AUTH && string_member(req, "initiator", &initiator, err, errlen) != 0))
		goto out;
	for (size_t k = 0; k < 4; k++)
		if (string_member(req, chap_keys[k], &given[k], err, errlen) != 0)
			goto out;
	if (what != TARGET_AUTH && (!initiator || !initiator[0])) {
		snprintf(err, errlen, "\"initiator\" (an iSCSI name) is required");
		goto out;
	}
	t = d->cfg->targets[i];
	cand->daemon = d->cfg->daemon;
	/* The target's CHAP keys: as running, or as target-auth gives them ("" clears one). */
	snprintf(section, sizeof(section), "target \"%s\"", t->name);
	for (size_t k = 0; k < 4; k++) {
		const char *v = what == TARGET_AUTH && given[k] ? given[k]
				: chap_value(t->chap_user, t->chap_secret, t->mutual_user, t->mutual_secret, k);

		if (v[0])
			cfg_set(cand, "control", section, chap_keys[k], v, &diag);
	}
	/* The ACL: as running, one entry replaced, added or taken away. */
	for (size_t a = 0; a < t->acl_count; a++) {
		const struct cfg_acl *acl = t->acls[a];

		if (initiator && strcmp(acl->initiator, initiator) == 0) {
			found = true;
			if (what == ACL_REMOVE)
				continue;
		}
		snprintf(section, sizeof(section), "acl \"%s\" \"%s\"", t->name, acl->initiator);
		cfg_set(cand, "control", section, "chap_user", "", &diag); /* the section, even without keys */
		for (size_t k = 0; k < 4; k++) {
			const char *v = initiator && what == ACL_ADD && strcmp(acl->initiator, initiator) == 0 && given[k]
					? given[k]
					: chap_value(acl->chap_user, acl->chap_secret, acl->mutual_user, acl->mutual_secret, k);

			if (v[0])
				cfg_set(cand, "control", section, chap_keys[k], v, &diag);
		}
	}
	if (what == ACL_REMOVE && !found) {
		snprintf(err, errlen, "target %s has no ACL entry for %s", t->name, initiator);
		goto out;
	}
	if (what == ACL_ADD && !found) {
		snprintf(section, sizeof(section), "acl \"%s\" \"%s\"", t->name, initiator);
		cfg_set(cand, "control", section, "chap_user", "", &diag);
		for (size_t k = 0; k < 4; k++)
			if (given[k] && given[k][0])
				cfg_set(cand, "control", section, chap_keys[k], given[k], &diag);
	}
	/* A LUN 0 stands in for the target's LUs, which this change leaves alone. */
	snprintf(section, sizeof(section), "lun \"%s\" 0", t->name);
	cfg_set(cand, "control", section, "path", "/dev/null", &diag);
	if (diag.count || cfg_finish(cand, &diag) != 0) {
		first_error(&diag, err, errlen);
		goto out;
	}
	/* The front ends first (from the candidate, which has the same name): a refusal there changes nothing. */
	if (sbce_frontends_target_access_changed(d, cand->targets[0], err, errlen) != 0)
		goto out;
	if (cfg_target_set_access(t, cand->targets[0]) != 0) {
		snprintf(err, errlen, "out of memory (the front ends already follow the change; save would not)");
		goto out;
	}
	json_object_set_new(result, "target", json_string(t->name));
	json_object_set_new(result, "acls", json_integer((json_int_t)t->acl_count));
	json_object_set_new(result, "chap", json_boolean(t->chap_user[0] != '\0'));
	json_object_set_new(result, "mutual_chap", json_boolean(t->mutual_user[0] != '\0'));
	sbce_info("control: target %s: %s%s%s (%zu ACL entries, CHAP %s); logins from now on follow it", t->name,
		  what == ACL_ADD ? (found ? "ACL entry changed for " : "ACL entry added for ")
		  : what == ACL_REMOVE ? "ACL entry removed for " : "authentication changed",
		  initiator ? initiator : "", "", t->acl_count, t->chap_user[0] ? "on" : "off");
	rc = 0;
out:
	cfg_diag_free(&diag);
	cfg_free(cand);
	return rc;
}

int sbce_control_acl_add(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	return access_change(d, req, result, ACL_ADD, err, errlen);
}

int sbce_control_acl_remove(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	return access_change(d, req, result, ACL_REMOVE, err, errlen);
}

int sbce_control_target_auth(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	return access_change(d, req, result, TARGET_AUTH, err, errlen);
}

/*
 * portal-add and portal-remove: where the iSCSI front end listens, changed
 * live.  The new daemon.listen list is checked as the configuration file's
 * would be (address syntax, at most 16), then the front end opens or closes
 * the listening socket; connections made through a removed portal stay.
 */
static int portal_change(struct sbce_daemon *d, const json_t *req, json_t *result, bool add, char *err,
			 size_t errlen)
{
	const char *addr = json_string_value(json_object_get(req, "address"));
	struct cfg_daemon *dm = &d->cfg->daemon;
	char list[CFG_LISTEN_MAX * (CFG_ADDRESS_MAX + 1)] = "";
	struct cfg_diag diag = { 0 };
	struct cfg *cand = cfg_create();
	unsigned found = dm->listen_count;
	int rc = -1;

	if (!cand || !addr || !addr[0]) {
		snprintf(err, errlen, cand ? "\"address\" must be a portal address, IPv4:port or [IPv6]:port"
					   : "out of memory");
		goto out;
	}
	for (unsigned i = 0; i < dm->listen_count; i++) {
		if (strcmp(dm->listen[i], addr) == 0) {
			found = i;
			if (!add)
				continue;
		}
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", list[0] ? " " : "", dm->listen[i]);
	}
	if (add && found < dm->listen_count) {
		snprintf(err, errlen, "already listening on %s", addr);
		goto out;
	}
	if (!add && found == dm->listen_count) {
		snprintf(err, errlen, "not listening on %s (portals: sbcemuctl status)", addr);
		goto out;
	}
	if (!add && dm->listen_count == 1) {
		snprintf(err, errlen, "%s is the last portal: add another first, or initiators could not reach the "
			 "daemon", addr);
		goto out;
	}
	if (add)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", list[0] ? " " : "", addr);
	if (cfg_set(cand, "control", "daemon", "listen", list, &diag) != 0) {
		first_error(&diag, err, errlen);
		goto out;
	}
	if (sbce_frontends_portal_changed(d, addr, add, err, errlen) != 0 ||
	    cfg_set(d->cfg, "control", "daemon", "listen", list, &diag) != 0) /* the running list, for save */
		goto out;
	json_object_set_new(result, add ? "added" : "removed", json_string(addr));
	json_object_set_new(result, "portals", json_integer(dm->listen_count));
	sbce_info("control: portal %s %s (%u portals)", addr, add ? "added" : "removed: its connections stay",
		  dm->listen_count);
	rc = 0;
out:
	cfg_diag_free(&diag);
	cfg_free(cand);
	return rc;
}

int sbce_control_portal_add(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	return portal_change(d, req, result, true, err, errlen);
}

int sbce_control_portal_remove(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	return portal_change(d, req, result, false, err, errlen);
}
