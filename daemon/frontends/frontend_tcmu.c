/*
 * The TCMU front end (frontend.h; docs/tcmu.md): LIO's `user:sbcemu`
 * backstores.  Each TCMU device the kernel has (or creates later) gets its
 * own SCSI device with one LU (LUN 0) built from the device's cfgstring
 * through the configuration's schema and checks, on the daemon's workers
 * and under its limits; its state lives in <state_dir>/tcmu/<name>/lun0/.
 * When the kernel removes a device (or the daemon stops), the LU is flushed
 * through the core before it is freed.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sbcemud.h"
#include "tcmu.h"

#define SUBTYPE "sbcemu"

/* One device the kernel brought. */
struct tcmu_lu {
	struct frontend_tcmu *fe;
	struct tcmu_lu *next;
	struct scsi_device *dev;
	struct sbce_alarm *alarm; /* delayed commands of fault rules (control_faults.c) */
	char name[256];           /* the backstore's name in LIO */
	char path[CFG_PATH_MAX]; /* its backing file ("" when refused) */
};

struct frontend_tcmu {
	struct sbce_daemon *d;
	struct tcmu_server *srv;
	struct tcmu_lu *lus;
	unsigned flushing;        /* LUs of removed devices being flushed */
	bool server_drained;
	void (*drained)(void *arg);
	void *drained_arg;
};

/* targetcli's `help create` (the ConfigDesc property). */
static const char config_desc[] =
	"sbcemu logical unit: key=value pairs separated by ';', the keys of [lun] sections in sbcemu's "
	"docs/config.md (kind=conventional|zbc-hm|zbc-ha|zbc-zd, path=FILE relative to the state directory, "
	"logical_block_size, zone_size, protection_type, max_atomic_transfer_length, ...), or lu=NAME first to start "
	"from an [lu \"NAME\"] template of the daemon's configuration. No ',', ':' or spaces. "
	"Example: kind=zbc-hm;zone_size=256M;path=zbc0.img";

/* The first message of diag, without its newline. */
static void first_message(const struct cfg_diag *diag, char *reason, size_t len)
{
	const char *text = diag->text ? diag->text : "invalid";

	snprintf(reason, len, "%.*s", (int)strcspn(text, "\n"), text);
}

/* A backing file already in use (an iSCSI LU of a target, another TCMU device) would be written twice. */
static const char *path_in_use(const struct frontend_tcmu *fe, const char *path)
{
	if (sbce_path_user(fe->d, path))
		return "a LUN of a target";
	for (const struct tcmu_lu *t = fe->lus; t; t = t->next)
		if (strcmp(t->path, path) == 0)
			return "another TCMU device";
	return NULL;
}

/*
 * What LIO answers itself for a TCMU backstore, so an LU cannot have it here:
 * conglomerates need two-level LUNs and REPORT LUNS (docs/conglomerate.md);
 * REPORT and SET TARGET PORT GROUPS are LIO's ALUA, whose groups INQUIRY's
 * TPGS and our Device Identification page would contradict (docs/tcmu.md).
 */
static bool refuse_lio_owned(const struct cfg_lun *l, char *reason, size_t len)
{
	if (l->kind == CFG_LU_CONGLOMERATE) {
		snprintf(reason, len, "kind: a conglomerate is served by the iSCSI front end only (LIO answers REPORT "
			 "LUNS itself and has no two-level LUNs)");
		return true;
	}
	if (l->alua) {
		snprintf(reason, len, "alua: LIO answers REPORT and SET TARGET PORT GROUPS for a TCMU backstore (its "
			 "own ALUA); keep alua = none");
		return true;
	}
	return false;
}

static int check_config(void *arg, const char *cfgstring, char *reason, size_t len)
{
	struct frontend_tcmu *fe = arg;
	struct cfg_diag diag = { 0 };
	struct cfg_lun l;
	const char *user;
	int rc = cfg_lun_from_cfgstring(fe->d->cfg, "", cfgstring, 0, &l, &diag);

	if (rc) {
		first_message(&diag, reason, len);
	} else if (refuse_lio_owned(&l, reason, len)) {
		rc = -1;
	} else if ((user = path_in_use(fe, l.path))) {
		/* targetcli shows the reason CheckConfig gives: say it here, not only in the log at creation. */
		snprintf(reason, len, "%s is already the backing file of %s", l.path, user);
		rc = -1;
	}
	cfg_diag_free(&diag);
	return rc;
}

static struct scsi_device *open_device(void *arg, const struct tcmu_device_info *info, char *reason, size_t len)
{
	struct frontend_tcmu *fe = arg;
	struct sbce_daemon *d = fe->d;
	struct tcmu_lu *t = calloc(1, sizeof(*t));
	char name[300], who[300], state_dir[CFG_PATH_MAX + 300];
	struct cfg_diag diag = { 0 };
	const char *user;
	struct cfg_lun l;

	snprintf(name, sizeof(name), "tcmu/%s", info->name);
	snprintf(who, sizeof(who), "tcmu %s", info->name);
	if (!t || !(t->dev = scsi_device_create(name, sbce_workers_executor(d->workers), d->resources))) {
		free(t);
		snprintf(reason, len, "out of memory");
		return NULL;
	}
	t->fe = fe;
	snprintf(t->name, sizeof(t->name), "%s", info->name);
	t->alarm = sbce_alarm_attach(d, t->dev); /* NULL (out of memory): delay rules then run at once */
	sbce_observe_backing_errors(d, t->dev);
	if (cfg_lun_from_cfgstring(d->cfg, info->name, info->cfgstring, info->dev_size, &l, &diag)) {
		first_message(&diag, reason, len);
	} else if (refuse_lio_owned(&l, reason, len)) {
		/* the device stays without an LU: its commands get LOGICAL UNIT NOT SUPPORTED */
	} else if ((user = path_in_use(fe, l.path))) {
		snprintf(reason, len, "%s is already the backing file of %s", l.path, user);
	} else {
		snprintf(state_dir, sizeof(state_dir), "%s/tcmu/%s/lun0", d->cfg->daemon.state_dir, info->name);
		if (sbce_lu_open(d, t->dev, &l, who, state_dir, reason, len) == 0) {
			snprintf(t->path, sizeof(t->path), "%s", l.path);
			if (info->block_size && info->block_size != l.logical_block_size)
				sbce_info("%s: LIO's hw_block_size is %u; initiators see the LU's %u-byte blocks (READ "
					  "CAPACITY is answered by sbcemu)", who, info->block_size, l.logical_block_size);
		}
	}
	cfg_diag_free(&diag);
	t->next = fe->lus;
	fe->lus = t;
	return t->dev;
}

static void maybe_drained(struct frontend_tcmu *fe)
{
	if (fe->server_drained && fe->flushing == 0 && fe->drained) {
		void (*done)(void *arg) = fe->drained;

		fe->drained = NULL;
		done(fe->drained_arg);
	}
}

static void lu_flushed(void *arg, int err)
{
	struct tcmu_lu *t = arg;
	struct frontend_tcmu *fe = t->fe;

	if (err)
		sbce_error("tcmu: flushing %s failed: %s", t->path, strerror(-err));
	sbce_alarm_detach(fe->d, t->alarm);
	scsi_device_destroy(t->dev);
	free(t);
	fe->flushing--;
	maybe_drained(fe);
}

/* The device went away, its commands have ended: what it acknowledged is made durable, then it is freed. */
static void close_device(void *arg, struct scsi_device *dev)
{
	struct frontend_tcmu *fe = arg;

	for (struct tcmu_lu **pp = &fe->lus; *pp; pp = &(*pp)->next) {
		struct tcmu_lu *t = *pp;

		if (t->dev != dev)
			continue;
		*pp = t->next;
		fe->flushing++;
		scsi_device_flush(dev, lu_flushed, t);
		return;
	}
}

static void log_line(void *arg, int level, const char *message)
{
	(void)arg;
	sbce_log(level <= 0 ? SBCE_LOG_ERROR : level == 1 ? SBCE_LOG_WARN : level == 2 ? SBCE_LOG_INFO : SBCE_LOG_DEBUG,
		 "tcmu: %s", message);
}

static void tcmu_destroy(void *state)
{
	struct frontend_tcmu *fe = state;

	if (!fe)
		return;
	tcmu_server_destroy(fe->srv);
	free(fe);
}

/* Declines (1) or fails (-1), as tcmu.enabled says, with why. */
static int unavailable(const struct cfg *cfg, const char *why)
{
	if (cfg->tcmu.enabled == CFG_TCMU_YES) {
		sbce_error("the TCMU front end cannot start (tcmu.enabled = yes): %s", why);
		return -1;
	}
	sbce_info("TCMU front end off: %s", why);
	return 1;
}

static int tcmu_start(struct sbce_daemon *d, void **state)
{
	const struct cfg *cfg = d->cfg;
	struct tcmu_handler h = {
		.check_config = check_config, .open_device = open_device, .close_device = close_device,
		.log = log_line,
		.log_level = sbce_log_enabled(SBCE_LOG_DEBUG) ? 3 : sbce_log_enabled(SBCE_LOG_INFO) ? 2 : 1,
	};
	struct frontend_tcmu *fe;
	struct stat st;
	char reason[512];

	*state = NULL;
	if (cfg->tcmu.enabled == CFG_TCMU_NO) {
		sbce_info("TCMU front end off (tcmu.enabled = no)");
		return 1;
	}
	if (stat("/sys/kernel/config/target", &st) != 0)
		return unavailable(cfg, "/sys/kernel/config/target is not there (LIO's target_core_mod is not loaded, "
				   "or configfs is not mounted)");
	fe = calloc(1, sizeof(*fe));
	*state = fe;
	if (!fe)
		return unavailable(cfg, "out of memory");
	fe->d = d;
	h.arg = fe;
	fe->srv = tcmu_server_create(d->loop.loop, SUBTYPE, &h);
	if (!fe->srv)
		return unavailable(cfg, "out of memory");
	if (tcmu_server_start(fe->srv, reason, sizeof(reason)) != 0)
		return unavailable(cfg, reason);
	if (tcmu_server_dbus_start(fe->srv, config_desc, reason, sizeof(reason)) != 0)
		sbce_warn("tcmu: targetcli will not list user:%s: %s (backstores made otherwise are served)", SUBTYPE,
			  reason);
	sbce_info("TCMU front end: serving user:%s backstores (%u now)", SUBTYPE, tcmu_server_device_count(fe->srv));
	return 0;
}

static void server_drained(void *arg)
{
	struct frontend_tcmu *fe = arg;

	fe->server_drained = true;
	maybe_drained(fe);
}

static void tcmu_drain(void *state, void (*done)(void *arg), void *arg)
{
	struct frontend_tcmu *fe = state;

	fe->drained = done;
	fe->drained_arg = arg;
	tcmu_server_drain(fe->srv, server_drained, fe);
}

static void tcmu_foreach_lu(void *state, void (*fn)(void *arg, const struct sbce_frontend_lu *lu), void *arg)
{
	struct frontend_tcmu *fe = state;

	for (struct tcmu_lu *t = fe->lus; t; t = t->next) {
		struct sbce_frontend_lu l = { t->name, t->path, scsi_device_find_lu(t->dev, scsi_lun_encode(0)) };

		if (l.lu)
			fn(arg, &l);
	}
}

static const struct sbce_frontend_ops frontend_tcmu = {
	.name = "tcmu",
	.start = tcmu_start,
	.drain = tcmu_drain,
	.destroy = tcmu_destroy,
	.foreach_lu = tcmu_foreach_lu,
};
SBCE_FRONTEND_REGISTER(frontend_tcmu)
