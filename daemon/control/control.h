/*
 * The runtime control (docs/control.md): a Unix socket speaking one JSON
 * request and one JSON reply per connection (control.c), the commands it
 * runs (control_commands.c: introspection and LU changes;
 * control_faults.c: fault rules and the alarms delayed commands wait on).
 */
#ifndef SBCEMU_CONTROL_H
#define SBCEMU_CONTROL_H

#include <jansson.h>

#include "sbcemud.h"

/* Longest request line (without its newline) and most clients served at once. */
#define SBCE_CONTROL_REQUEST_MAX 65536
#define SBCE_CONTROL_CLIENTS_MAX 16
/* Seconds a client may take to send its request. */
#define SBCE_CONTROL_CLIENT_TIMEOUT 5.0

/*
 * A command: members lists the request members it accepts besides
 * "command" (NULL-terminated); run() checks their values, changes nothing
 * when it refuses (-1 with the reason in err) and fills result on success.
 */
struct sbce_control_command {
	const char *name;
	const char *const *members;
	int (*run)(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);
};

/*
 * Runs one request line (len bytes, no newline): the reply object, {"ok":
 * true, "result": ...} or {"ok": false, "error": ...}; NULL when out of
 * memory.  control.c; the fuzz harness fuzz_control feeds it.
 */
json_t *sbce_control_run(struct sbce_daemon *d, const char *line, size_t len);

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

/* save: the running configuration's text (control_save.c). */
int sbce_control_save(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);
/*
 * Records a run-time change of an LU key (its text) in the configuration
 * that save writes; nothing for an LU the configuration does not have (a
 * TCMU backstore's).
 */
void sbce_control_track(struct sbce_daemon *d, const char *target, uint32_t lun, const char *key, const char *text);
/* control_power.c */
int sbce_control_power_cut(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen);

/* ---- request members (control_commands.c) ---- */

/* The target a request names ("target", optional with one target): 0 with *index set, or -1 with the reason. */
int sbce_control_target(struct sbce_daemon *d, const json_t *req, size_t *index, char *err, size_t errlen);

/*
 * The LU a request names ("target", optional with one target, and "lun"; or
 * "tcmu", a TCMU backstore's name, and "lun" 0): 0 with *lu and *target set
 * (the target's name, or the backstore's), or -1 with the reason in err.
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
