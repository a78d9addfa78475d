/*
 * fuzz_control: the control socket's requests (daemon/control/,
 * with the daemon's own functions they call; docs/control.md) on a daemon with
 * the embedded default configuration's target (removed by target-remove:
 * made again) and one LU (LUN 0, memory
 * backed), as sbcemud would run them between two commands.
 *
 * Input: request lines separated by newlines, run one after the other (so
 * that a fault-add can be followed by a fault-list or a fault-remove).
 *
 * Checks beyond the sanitizers: every reply is {"ok": true, "result": {...}}
 * or {"ok": false, "error": "..."}, and a refused request changes nothing
 * (the LUs and the fault rules read the same before and after it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_internal.h"
#include "fuzz_lu.h"

/* No front end is linked into this harness (no sessions, no front end's own LUs; a target added is served by none). */

void sbce_observe_backing_errors(struct sbce_daemon *d, struct scsi_device *dev)
{
	(void)d;
	(void)dev;
}

/* The harness never starts the socket (sbce_control_start), which makes its directory. */
int sbce_make_dirs(const char *path)
{
	(void)path;
	return -38; /* ENOSYS */
}

/* No backing files here: lu-add is checked up to opening one, which this harness refuses. */
int sbce_lu_open(struct sbce_daemon *d, struct scsi_device *dev, const struct cfg_lun *l, const char *who,
		 const char *state_dir, char *err, size_t errlen)
{
	(void)d;
	(void)dev;
	(void)l;
	(void)who;
	(void)state_dir;
	snprintf(err, errlen, "no backing files in fuzz_control");
	return -1;
}

/* No configuration file here: reload is refused (its checks of the request itself still run). */
int sbce_reload_file(struct sbce_daemon *d, const char *why, bool remove_all, struct sbce_reload_counts *counts,
		     char *err, size_t errlen)
{
	(void)d;
	(void)why;
	(void)remove_all;
	(void)counts;
	snprintf(err, errlen, "no configuration file in fuzz_control");
	return -1;
}

void sbce_lu_state_dir(const struct cfg *cfg, const struct cfg_target *t, const struct cfg_lun *l, char *buf,
		       size_t len)
{
	(void)cfg;
	(void)t;
	(void)l;
	snprintf(buf, len, "%s", fuzz_state_dir());
}

static struct sbce_daemon daemon_state;
static struct scsi_device *device;
static const struct backend_ops *mem_ops;
static struct backend_ops capped_ops;

/* lu-resize may ask for any size: the memory backend gets at most 1 MiB. */
static int capped_resize(struct backend *be, uint64_t size)
{
	return size > (1u << 20) ? -27 /* EFBIG */ : mem_ops->resize(be, size);
}

/* LUN 0: 192 blocks of 512 bytes in memory, its resize capped (lu-remove may take it away: made again). */
static void create_lu(void)
{
	struct scsi_lu_params params = {
		.kind = SCSI_LU_CONVENTIONAL,
		.logical_block_size = 512,
		.num_blocks = 192,
		.vendor = "SBCEMU",
		.product = "FUZZ",
		.revision = "0001",
		.serial = "fuzz0",
		.thin_provisioning = true,
		.state_dir = fuzz_state_dir(),
	};
	struct backend *be = be_mem_open(192 * 512);
	char err[256];

	if (!be)
		abort();
	mem_ops = be->ops;
	capped_ops = *mem_ops;
	capped_ops.resize = capped_resize;
	be->ops = &capped_ops;
	if (!scsi_lu_create(device, &params, be, err, sizeof(err))) {
		fprintf(stderr, "fuzz_control: %s\n", err);
		abort();
	}
}

/*
 * LUN 6: the embedded default's conglomerate, subsidiaries 1-4 with 1 and 2
 * bound to every initiator (the opener is the daemon's: its sbce_lu_open is
 * the refusing one above, so a subsidiary never opens here).
 */
static void create_conglomerate(void)
{
	struct scsi_lu_params params = {
		.kind = SCSI_LU_ADMIN,
		.lun = 6,
		.logical_block_size = 512,
		.state_dir = fuzz_state_dir(),
	};
	struct scsi_lu *admin;
	char err[256];

	sbce_conglomerate_device(&daemon_state, device);
	admin = scsi_lu_create(device, &params, be_mem_open(0), err, sizeof(err));
	if (!admin || sbce_conglomerate_apply(admin, sbce_config_lun(daemon_state.cfg->targets[0], 6), err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_control: %s\n", admin ? err : "no administrative LU");
		abort();
	}
}

static void setup(void)
{
	struct cfg_diag diag = { 0 };

	sbce_log_set_level(SBCE_LOG_ERROR);
	daemon_state.cfg = cfg_load_default(&diag);
	if (!daemon_state.cfg)
		abort();
	daemon_state.loop.loop = ev_default_loop(0);
	daemon_state.resources = scsi_resources_create(&(struct scsi_limits){ 0 });
	device = scsi_device_create("fuzz", NULL, daemon_state.resources);
	create_lu();
	daemon_state.devices = calloc(1, sizeof(*daemon_state.devices));
	if (daemon_state.devices)
		daemon_state.devices[0] = device;
	daemon_state.device_count = 1;
	create_conglomerate();
	if (!daemon_state.devices)
		abort();
	daemon_state.devices[0] = device;
	daemon_state.device_count = 1;
	if (sbce_faults_start(&daemon_state) != 0)
		abort();
}

/* After a target-remove: the removed device goes, and the default target comes back. */
static void target_again(void)
{
	struct cfg_diag diag = { 0 };

	for (size_t i = 0; i < daemon_state.retired_count; i++)
		scsi_device_destroy(daemon_state.retired[i]);
	daemon_state.retired_count = 0;
	if (daemon_state.device_count)
		return;
	cfg_free(daemon_state.cfg);
	daemon_state.cfg = cfg_load_default(&diag);
	if (!daemon_state.cfg)
		abort();
	device = scsi_device_create("fuzz", NULL, daemon_state.resources);
	create_lu();
	daemon_state.devices[0] = device;
	daemon_state.device_count = 1;
	create_conglomerate();
	daemon_state.alarms[0] = sbce_alarm_attach(&daemon_state, device);
	if (!daemon_state.alarms[0])
		abort();
	daemon_state.device_count = 1;
}

/* What a refused request must leave alone. */
static char *snapshot(void)
{
	static const char *const reads[] = { "{\"command\":\"lus\"}", "{\"command\":\"fault-list\"}" };
	json_t *both = json_array();
	char *text;

	for (unsigned i = 0; i < 2; i++)
		json_array_append_new(both, sbce_control_run(&daemon_state, reads[i], strlen(reads[i])));
	/* A rule's time window moves on by itself ("waiting", "open", "closed"): not a change a request made. */
	{
		json_t *rules = json_object_get(json_object_get(json_array_get(both, 1), "result"), "rules"), *rule;
		size_t k;

		json_array_foreach(rules, k, rule)
			json_object_del(rule, "window");
	}
	text = json_dumps(both, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(both);
	if (!text)
		abort();
	return text;
}

static void check_reply(const json_t *reply, const char *line, size_t len)
{
	const json_t *ok = json_object_get(reply, "ok");

	if (!json_is_boolean(ok) ||
	    (json_is_true(ok) ? !json_is_object(json_object_get(reply, "result"))
			      : !json_is_string(json_object_get(reply, "error")))) {
		fprintf(stderr, "fuzz_control: malformed reply to %.*s\n", (int)len, line);
		abort();
	}
}

/* Puts the LU back as setup() made it: no rules, ready, writable, 192 blocks. */
static void reset(void)
{
	static const char *const lines[] = {
		"{\"command\":\"fault-remove\",\"all\":true}",
		"{\"command\":\"lu-state\",\"lun\":0,\"state\":\"ready\"}",
		"{\"command\":\"lu-write-protect\",\"lun\":0,\"enable\":false}",
		"{\"command\":\"lu-resize\",\"lun\":0,\"blocks\":192,\"force\":true}",
	};

	target_again();
	if (!scsi_device_find_lu(device, scsi_lun_encode(0)))
		create_lu();
	for (unsigned i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		json_decref(sbce_control_run(&daemon_state, lines[i], strlen(lines[i])));
	daemon_state.next_fault_id = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;

	if (!device)
		setup();
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl : end) - p);
		char *before = snapshot(), *after;
		json_t *reply = sbce_control_run(&daemon_state, p, len);

		if (!reply)
			abort();
		check_reply(reply, p, len);
		if (json_is_false(json_object_get(reply, "ok"))) {
			after = snapshot();
			if (strcmp(before, after) != 0) {
				fprintf(stderr, "fuzz_control: a refused request changed something: %.*s\n", (int)len, p);
				abort();
			}
			free(after);
		}
		free(before);
		json_decref(reply);
		p += len + (nl ? 1 : 0);
	}
	reset();
	return 0;
}
