/*
 * Inside the runtime control (docs/control.md): the socket (control.c)
 * reads one JSON request per connection and runs it as one of the commands
 * (control_commands.c has the table and the introspection; control_lus.c,
 * control_targets.c, control_faults.c, control_power.c and control_save.c
 * the others), whose members control_request.c reads.  The commands act
 * through the daemon's own functions (sbcemud.h), never on a front end
 * directly.
 */
#ifndef SBCEMU_CONTROL_INTERNAL_H
#define SBCEMU_CONTROL_INTERNAL_H

#ifndef SBCE_BUILDING_CONTROL
#error "sbcemu layering: control_internal.h is internal to the runtime control (daemon/control/)"
#endif

#include <jansson.h>

#include "control.h"
#include "sbcemud.h"

/*
 * A command: members lists the request members it accepts besides
 * "command" (NULL-terminated); run() checks their values, changes nothing
 * when it refuses (-1 with the reason in err) and fills result on success.
 */
struct sbce_control_command {
	const char *name;
	const char *const *members;
	int (*run)(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);
	bool saves; /* it changes what `save` writes: daemon.autosave writes the file after it */
};

/* Every command, ending with a NULL name (control_commands.c). */
extern const struct sbce_control_command sbce_control_commands[];

/* control_faults.c */
int sbce_control_fault_add(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);
int sbce_control_fault_list(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);
int sbce_control_fault_remove(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);

/* control_lus.c */
int sbce_control_lu_add(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);
int sbce_control_lu_remove(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);

/* control_targets.c */
int sbce_control_target_add(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);
int sbce_control_target_remove(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);

/* control_save.c */
int sbce_control_save(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);
/* daemon.autosave: the running configuration written back after a change (logged, never refused). */
void sbce_control_autosave(struct sbce_daemon *d);
int sbce_control_reload(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);
/* control_stats.c */
int sbce_control_lu_latency(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);
int sbce_control_stats(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);
/* control_subsidiaries.c */
int sbce_control_subsidiary_create(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);
int sbce_control_subsidiary_destroy(struct sbce_daemon *d, const json_t *req, json_t *result, char *err,
				    size_t errlen);
int sbce_control_subsidiary_bind(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);
int sbce_control_subsidiary_unbind(struct sbce_daemon *d, const json_t *req, json_t *result, char *err,
				   size_t errlen);
int sbce_control_subsidiaries(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);

/* control_access.c */
int sbce_control_acl_add(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);
int sbce_control_acl_remove(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);
int sbce_control_target_auth(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);
int sbce_control_portal_add(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);
int sbce_control_portal_remove(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);

/* control_power.c */
int sbce_control_power_cut(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);

/* ---- request members (control_request.c) ---- */

/*
 * In a command's member list: the name of any running front end that makes
 * LUs of its own ("tcmu": a backstore's name), which sbce_control_lu takes.
 */
#define SBCE_CONTROL_MEMBER_FRONTEND_LU "<frontend>"

/* The target a request names ("target", optional with one target): 0 with *index set, or -1 with the reason. */
int sbce_control_target(struct sbce_daemon *d, const json_t *req, size_t *index, char *err, size_t errlen);

/*
 * The LU a request names: "target" (optional with one target) and "lun";
 * or a front end's name with the name of an LU it made itself ("tcmu": a
 * backstore's) and "lun" 0.  0 with *lu and *target set (the target's name,
 * or the LU's in its front end), or -1 with the reason in err.
 */
int sbce_control_lu(struct sbce_daemon *d, const json_t *req, struct scsi_lu **lu, const char **target, char *err,
		    size_t errlen);
/*
 * An integer member between 0 and max: 1 with *out set, 0 when absent (and
 * not required), -1 with the reason in err.
 */
int sbce_control_uint(const json_t *req, const char *name, uint64_t max, bool required, uint64_t *out, char *err,
		      size_t errlen);
/* A boolean member: 1 with *out set, 0 when absent (and not required; *out = false), -1 with the reason in err. */
int sbce_control_bool(const json_t *req, const char *name, bool required, bool *out, char *err, size_t errlen);

#endif
