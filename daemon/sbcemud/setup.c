/*
 * From configuration to objects: one SCSI device per target, its logical
 * units with their backing files and state directories.  The front ends
 * (frontend.h) put themselves in front of the devices afterwards.  Runs once,
 * at start-up, on the loop thread (opening and sizing backing files is the
 * only I/O done outside the workers).
 *
 * Check first, then create: sbce_check_luns() finds, without creating
 * anything, every path start-up would refuse (sbcemud --check runs it too),
 * so a configuration that fails leaves no directory or file behind.
 *
 * The state directory is the daemon's own: one daemon at a time
 * (sbce_state_dir_lock), directories made 0700, files 0600
 * (be_state_open), and no symbolic link is followed inside an LU's state
 * directory (a planted one would send the state files elsewhere).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbcemud.h"

#define STATE_DIR_LOCK_FILE "sbcemud.lock"

/* Directories the daemon makes are 0700: they hold reservation keys and backing files. */
int sbce_make_dirs(const char *path)
{
	char buf[CFG_PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0700) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int sbce_probe_backing_locks(const struct cfg *cfg, char *err, size_t errlen)
{
	for (size_t i = 0; i < cfg->target_count; i++)
		for (size_t k = 0; k < cfg->targets[i]->lun_count; k++)
			if (cfg->targets[i]->luns[k]->path[0] &&
			    be_file_lock_probe(cfg->targets[i]->luns[k]->path, err, errlen) != 0)
				return -1;
	return 0;
}

int sbce_state_dir_lock_probe(const char *state_dir, char *err, size_t errlen)
{
	char path[CFG_PATH_MAX + sizeof(STATE_DIR_LOCK_FILE) + 1], pid[24] = "";
	int fd, rc = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/" STATE_DIR_LOCK_FILE, state_dir);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0; /* no lock file: nobody holds it (and --check creates nothing) */
	/* A shared lock is refused while a running daemon holds its exclusive one. */
	if (flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
		n = pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? strcspn(pid, "\n") : 0] = '\0';
		snprintf(err, errlen, "the state directory %s is in use by another sbcemud (pid %s, lock file %s)",
			 state_dir, pid[0] ? pid : "unknown", path);
		rc = -1;
	}
	close(fd);
	return rc;
}

int sbce_state_dir_lock(const char *state_dir, int *lock_fd, char *err, size_t errlen)
{
	char path[CFG_PATH_MAX + sizeof(STATE_DIR_LOCK_FILE) + 1], pid[24] = "";
	int fd;

	snprintf(path, sizeof(path), "%s/" STATE_DIR_LOCK_FILE, state_dir);
	fd = be_state_open(path, O_RDWR | O_CREAT);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, be_state_strerror(errno));
		return -1;
	}
	/* flock(2): exclusive, without waiting; the kernel lets go when this process ends, however it ends. */
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;
		ssize_t n = e == EWOULDBLOCK ? pread(fd, pid, sizeof(pid) - 1, 0) : -1;

		pid[n > 0 ? strcspn(pid, "\n") : 0] = '\0';
		if (e == EWOULDBLOCK)
			snprintf(err, errlen, "the state directory %s is in use by another sbcemud (pid %s, lock file %s)",
				 state_dir, pid[0] ? pid : "unknown", path);
		else
			snprintf(err, errlen, "cannot lock %s: %s", path, strerror(e));
		close(fd);
		return -1;
	}
	/* The pid is for the next daemon's message only: the lock, not the file's contents, decides. */
	snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, strlen(pid), 0) != (ssize_t)strlen(pid))
		sbce_warn("cannot write the pid into %s: %s", path, strerror(errno));
	*lock_fd = fd;
	return 0;
}

/* Bytes of backing store the LU needs, 0 for the existing file's size (data and PI tuples). */
static uint64_t backing_bytes(const struct cfg_lun *l)
{
	return l->size ? scsi_lu_backing_bytes(l->logical_block_size, l->size / l->logical_block_size,
					       l->protection_type != 0)
		       : 0;
}

/* Whether path lies in directory dir (a strict prefix followed by '/'). */
static bool path_below(const char *path, const char *dir)
{
	size_t len = strlen(dir);

	return strncmp(path, dir, len) == 0 && path[len] == '/';
}

/*
 * The directories below the state directory on the way to an LU's state
 * directory are the daemon's own, and so are the files in it (but the
 * backing file the user may have put there): none may be a symbolic link.
 * Returns 0, or -1 with why.
 */
static int check_no_symlinks(const char *state_root, const char *lu_dir, const char *backing, char *err,
			     size_t errlen)
{
	char at[CFG_PATH_MAX + 2 * CFG_NAME_MAX + 256];
	struct stat st;
	struct dirent *e;
	DIR *dir;
	int rc = 0;

	snprintf(at, sizeof(at), "%s", lu_dir);
	for (char *p = path_below(at, state_root) ? at + strlen(state_root) + 1 : at + strlen(at); rc == 0; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (lstat(at, &st) == 0 && S_ISLNK(st.st_mode)) {
			snprintf(err, errlen, "%s is a symbolic link; the daemon follows none in its state directory", at);
			rc = -1;
		}
		*p = c;
		if (c == '\0')
			break;
	}
	dir = rc == 0 ? opendir(lu_dir) : NULL;
	while (dir && rc == 0 && (e = readdir(dir))) {
		if (path_below(backing, lu_dir) && strcmp(backing + strlen(lu_dir) + 1, e->d_name) == 0)
			continue;
		if (fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
			snprintf(err, errlen, "%s/%s is a symbolic link; the daemon follows none in its state directory",
				 lu_dir, e->d_name);
			rc = -1;
		}
	}
	if (dir)
		closedir(dir);
	return rc;
}

/*
 * What sbce_lu_open() and start-up will do with the paths, checked without
 * creating anything: the state directory, each LU's state directory in it
 * (blamed on daemon.state_dir) and its backing file (on lun.path); and each
 * LU's latency model (on lun.latency).
 */
int sbce_check_luns(const struct cfg *cfg, struct cfg_diag *diag)
{
	const char *sd = cfg->daemon.state_dir;
	unsigned before = diag->count;
	char err[512];

	if (be_file_check_dir(sd, true, err, sizeof(err)) != 0) {
		cfg_report_key(diag, cfg, NULL, NULL, "state_dir", "%s", err);
		return -1; /* every LU would repeat it */
	}
	for (size_t i = 0; i < cfg->target_count; i++) {
		const struct cfg_target *t = cfg->targets[i];

		for (size_t k = 0; k < t->lun_count; k++) {
			const struct cfg_lun *l = t->luns[k];
			char lu_dir[CFG_PATH_MAX + 2 * CFG_NAME_MAX];

			sbce_lu_state_dir(cfg, t, l, lu_dir, sizeof(lu_dir));
			struct scsi_latency_params latency;

			if (l->kind != CFG_LU_CONGLOMERATE && l->backend == CFG_BACKEND_FILE &&
			    be_file_check(l->path, backing_bytes(l), l->write_protect, path_below(l->path, sd), err,
					  sizeof(err)) != 0)
				cfg_report_key(diag, cfg, t, l, "path", "%s", err);
			if (sbce_latency_parse(l->latency, &latency, err, sizeof(err)) != 0)
				cfg_report_key(diag, cfg, t, l, "latency", "%s", err);
			if (be_file_check_dir(lu_dir, true, err, sizeof(err)) != 0 ||
			    check_no_symlinks(sd, lu_dir, l->path, err, sizeof(err)) != 0)
				cfg_report_key(diag, cfg, NULL, NULL, "state_dir", "%s", err);
		}
	}
	return diag->count == before ? 0 : -1;
}

void sbce_lu_state_dir(const struct cfg *cfg, const struct cfg_target *t, const struct cfg_lun *l, char *buf,
		       size_t len)
{
	snprintf(buf, len, "%s/%s/lun%u", cfg->daemon.state_dir, t->name, l->lun);
}

/*
 * The volatile write cache of an LU began or stopped holding data it cannot
 * write back (be_cache_set_reporter): the initiator sees failed SYNCHRONIZE
 * CACHEs, whoever runs the daemon sees this.
 */
static void cache_report(const char *who, const struct be_cache_stats *st)
{
	if (st->error)
		sbce_error("%s: the volatile write cache cannot write back %llu bytes: %s; they stay cached and "
			   "readable, and every flush fails until they can be written (so far: %llu ENOSPC, %llu EIO, "
			   "%llu other errors from the backing store, %llu failed write-backs, %llu writes refused)",
			   who, (unsigned long long)st->dirty_bytes, strerror(-st->error),
			   (unsigned long long)st->below_enospc, (unsigned long long)st->below_eio,
			   (unsigned long long)st->below_other, (unsigned long long)st->write_back_failures,
			   (unsigned long long)st->refused_writes);
	else
		sbce_warn("%s: the volatile write cache wrote back all it held; flushes succeed again", who);
}

static void backing_error(void *arg, const char *device, uint32_t lun, int err,
			  const struct scsi_backing_errors *counts)
{
	struct sbce_daemon *d = arg;

	sbce_log_ratelimited(&d->backing_error_limit, SBCE_LOG_ERROR,
			     "%s LUN %u: a command failed because the backing store did: %s (so far on this LU: "
			     "%llu no space, %llu EIO, %llu other)",
			     device, lun, strerror(err), (unsigned long long)counts->no_space,
			     (unsigned long long)counts->io, (unsigned long long)counts->other);
}

void sbce_observe_backing_errors(struct sbce_daemon *d, struct scsi_device *dev)
{
	scsi_device_observe_backing_errors(dev, backing_error, d);
}

static enum scsi_lu_kind lu_kind(enum cfg_lu_kind kind)
{
	switch (kind) {
	case CFG_LU_CONVENTIONAL:
		return SCSI_LU_CONVENTIONAL;
	case CFG_LU_ZBC_HM:
		return SCSI_LU_ZBC_HM;
	case CFG_LU_ZBC_HA:
		return SCSI_LU_ZBC_HA;
	case CFG_LU_CONGLOMERATE:
		return SCSI_LU_ADMIN;
	case CFG_LU_ZBC_ZD:
		return SCSI_LU_ZBC_HM; /* with params.realm_zones */
	}
	return SCSI_LU_CONVENTIONAL;
}

/* config.h's quirk bits are the core's (docs/profiles.md). */
#define SAME_QUIRK(q) ((unsigned)CFG_QUIRK_##q == (unsigned)SCSI_QUIRK_##q)
_Static_assert(SAME_QUIRK(NO_READ_CAPACITY_16) && SAME_QUIRK(FIX_CAPACITY) && SAME_QUIRK(NO_VPD) &&
		       SAME_QUIRK(VPD_TRUNCATED) && SAME_QUIRK(NO_MODE_SENSE_10) && SAME_QUIRK(NO_SYNC_CACHE) &&
		       SAME_QUIRK(NO_RESIDUAL) && SAME_QUIRK(NO_RSOC) && SAME_QUIRK(NO_SAT) && SAME_QUIRK(ALL),
	       "config and core quirk bits differ");

/* The LU's state directory, and the backing file's directory when it lies under the state directory. */
static int make_lu_dirs(const struct sbce_daemon *d, const struct cfg_lun *l, const char *state_dir, char *err,
			size_t errlen)
{
	const char *sd = d->cfg->daemon.state_dir;
	int rc = sbce_make_dirs(state_dir);

	/* A backing file under the state directory may sit in a subdirectory nobody has made yet. */
	if (rc == 0 && path_below(l->path, sd)) {
		char parent[CFG_PATH_MAX];

		snprintf(parent, sizeof(parent), "%s", l->path);
		*strrchr(parent, '/') = '\0';
		rc = sbce_make_dirs(parent);
	}
	if (rc != 0) {
		snprintf(err, errlen, "cannot create %s: %s", state_dir, strerror(-rc));
		return -1;
	}
	return check_no_symlinks(sd, state_dir, l->path, err, errlen);
}

/*
 * A backing file that is a symbolic link is followed (a link the operator
 * made on purpose is how a file elsewhere is used), but never silently:
 * whoever can change the link chooses what the LU writes.
 */
static void warn_if_link(const char *who, const char *path)
{
	char target[CFG_PATH_MAX];
	struct stat st;
	ssize_t n;

	if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
		return;
	n = readlink(path, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = '\0';
	sbce_warn("%s: the backing file %s is a symbolic link to %s: the LU's data go there, and whoever can change "
		  "the link chooses another file", who, path, target);
}

/*
 * The LU's backend: its backing file (created sparse if missing), behind a
 * volatile write cache when the configuration asks for one.  NULL with the
 * reason in err.
 */
static struct backend *open_backend(const struct cfg_lun *l, const char *who, const char *state_dir, char *err,
				    size_t errlen)
{
	char side_base[CFG_PATH_MAX + 2 * CFG_NAME_MAX + 8], where[2 * CFG_RBD_NAME_MAX + 8];
	uint32_t unit_min, unit_max;
	struct backend *be, *cached;

	/*
	 * With PI support the tuples follow the data in the backing file
	 * (protocol/scsi/sbc/sbc_pi.h).  A block device keeps its intent logs in the
	 * state directory (a file keeps them next to itself).
	 */
	if (l->backend == CFG_BACKEND_RBD) {
		/* The state directory's lock (sbce_state_dir_lock) makes this process the record's only user. */
		char owner_record[CFG_PATH_MAX + 2 * CFG_NAME_MAX + 16], note[32];
		struct be_rbd_params rbd = {
			.conf = l->ceph_conf, .id = l->ceph_id, .pool = l->rbd_pool, .image = l->rbd_image,
			.owner_record = owner_record, .ask_holder = l->rbd_unavailable == CFG_RBD_UNAVAILABLE_STANDBY,
			.holder_note = l->alua ? note : NULL, .rejoin = l->rbd_unavailable != CFG_RBD_UNAVAILABLE_FAIL,
			.peers = l->alua_peer_groups[0] != '\0',
		};

		const struct be_rbd_entry *rbd_backend = be_rbd_module(err, errlen);

		if (!rbd_backend)
			return NULL;
		snprintf(owner_record, sizeof(owner_record), "%s/rbd-lock-owner", state_dir);
		scsi_alua_holder_note((uint16_t)l->target_port_group, note, sizeof(note));

		be = rbd_backend->open(&rbd, backing_bytes(l), l->write_protect, err, errlen);
		if (!be && l->rbd_unavailable) {
			sbce_warn("%s: %s; %s", who, err,
				  l->rbd_unavailable == CFG_RBD_UNAVAILABLE_STANDBY
					  ? "the LU's target port group is in standby (02/04/0B) until this node has the "
					    "image: it is tried again every 5 s, asking for its lock (rbd_unavailable = standby)"
					  : "the LU answers NOT READY, IN PROCESS OF BECOMING READY (02/04/01) until the image "
					    "can be had: it is tried again every 5 s (rbd_unavailable = not-ready)");
			if (!(be = rbd_backend->open_later(&rbd, backing_bytes(l), l->write_protect, err)))
				snprintf(err, errlen, "out of memory");
		}
	} else {
		snprintf(side_base, sizeof(side_base), "%s/backing", state_dir);
		warn_if_link(who, l->path);
		be = be_file_open(l->path, backing_bytes(l), l->write_protect, side_base, err, errlen);
	}
	if (!be)
		return NULL;
	if (be->note[0])
		sbce_warn("%s: %s: %s", who, l->path, be->note);
	if (l->backend == CFG_BACKEND_FILE)
		be_file_untorn_writes(be, &unit_min, &unit_max);
	else
		unit_max = 0;
	if (be->can_write_atomic && be->atomic_unit && (l->max_atomic_transfer_length ||
							l->max_atomic_transfer_length_with_boundary || l->write_scattered_atomic)) {
		/*
		 * Atomic only inside one unit (an RBD object): every WRITE ATOMIC
		 * the limits let through must fit in one, and nothing else (PI
		 * tuples beside the data, several ranges, boundaries) can be kept.
		 */
		uint64_t unit_blocks = be->atomic_unit / l->logical_block_size;

		if (l->protection_type || l->write_scattered_atomic || l->max_atomic_transfer_length_with_boundary ||
		    !l->atomic_alignment || unit_blocks % l->atomic_alignment ||
		    l->max_atomic_transfer_length > l->atomic_alignment) {
			be->can_write_atomic = false;
			sbce_warn("%s: %s writes atomically only inside one of its %llu-block objects: WRITE ATOMIC is "
				  "offered with atomic_alignment dividing %llu and max_atomic_transfer_length at most "
				  "atomic_alignment, without protection_type, write_scattered_atomic and "
				  "max_atomic_transfer_length_with_boundary (docs/rbd.md)",
				  who, sbce_lu_backing(l, where, sizeof(where)), (unsigned long long)unit_blocks,
				  (unsigned long long)unit_blocks);
		}
	}
	if (!be->can_write_atomic && (l->max_atomic_transfer_length || l->max_atomic_transfer_length_with_boundary ||
				      l->write_scattered_atomic))
		sbce_warn("%s: %s cannot write atomically: WRITE ATOMIC is not offered (docs/rbd.md)", who,
			  sbce_lu_backing(l, where, sizeof(where)));
	if (unit_max)
		sbce_info("%s: %s: the kernel offers untorn writes of %u to %u bytes; atomic writes that fit "
			  "skip the intent log", who, l->path, unit_min, unit_max);
	if (!l->protection_type && be->size % l->logical_block_size)
		sbce_warn("%s: %s: the last %llu bytes are not a whole logical block and are unused", who,
			  sbce_lu_backing(l, where, sizeof(where)), (unsigned long long)(be->size % l->logical_block_size));
	if (!l->volatile_write_cache)
		return be;
	cached = be_cache_wrap(be);
	if (!cached || be_cache_set_reporter(cached, cache_report, who) != 0) {
		snprintf(err, errlen, "%s: no volatile write cache on this backend", sbce_lu_backing(l, where, sizeof(where)));
		be_close(cached ? cached : be);
		return NULL;
	}
	return cached;
}

/* cfg_alua_peers_walk: one of lun.alua_peer_groups (the config checked the count and the groups). */
static int add_alua_peer(void *arg, uint32_t group, uint32_t port)
{
	struct scsi_lu_params *p = arg;

	if (p->alua_peer_count < SCSI_ALUA_PEERS_MAX)
		p->alua_peers[p->alua_peer_count++] = (struct scsi_alua_peer){ (uint16_t)group, (uint16_t)port };
	return 0;
}

/* The SCSI core's parameters of LU l, num_blocks of them in its backend.  0, or -1 with the reason in err. */
static int lu_params(const struct cfg_lun *l, uint64_t num_blocks, const char *state_dir, struct scsi_lu_params *p,
		     char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->kind = lu_kind(l->kind);
	p->lun = l->lun;
	p->logical_block_size = l->logical_block_size;
	p->lbppbe = (uint8_t)l->lbppbe;
	p->num_blocks = num_blocks;
	snprintf(p->vendor, sizeof(p->vendor), "%s", l->vendor);
	snprintf(p->product, sizeof(p->product), "%s", l->product);
	snprintf(p->revision, sizeof(p->revision), "%s", l->revision);
	snprintf(p->serial, sizeof(p->serial), "%s", l->serial);
	p->naa = l->naa;
	p->thin_provisioning = l->thin_provisioning;
	p->write_protect = l->write_protect;
	p->removable = l->removable;
	p->max_transfer_length = l->max_transfer_length;
	p->optimal_transfer_length = l->optimal_transfer_length;
	p->max_unmap_lba_count = l->max_unmap_lba_count;
	p->max_unmap_descriptors = l->max_unmap_descriptors;
	p->max_compare_and_write = l->max_compare_and_write;
	p->max_write_same_length = l->max_write_same_length;
	p->max_atomic_transfer_length = l->max_atomic_transfer_length;
	p->atomic_alignment = l->atomic_alignment;
	p->atomic_transfer_length_granularity = l->atomic_transfer_length_granularity;
	p->max_atomic_transfer_length_with_boundary = l->max_atomic_transfer_length_with_boundary;
	p->max_atomic_boundary_size = l->max_atomic_boundary_size;
	p->write_scattered = l->write_scattered;
	p->write_scattered_atomic = l->write_scattered_atomic;
	p->allow_32_byte_cdbs = l->allow_32_byte_cdbs;
	p->max_scattered_lba_range_transfer_length = l->max_scattered_lba_range_transfer_length;
	p->max_scattered_lba_range_descriptors = (uint16_t)l->max_scattered_lba_range_descriptors;
	p->max_scattered_transfer_length = l->max_scattered_transfer_length;
	p->state_dir = state_dir;
	p->zone_size = l->zone_size / l->logical_block_size;
	p->conventional_zones = l->conventional_zones;
	p->max_open_zones = l->max_open_zones;
	p->urswrz = l->urswrz;
	if (l->kind == CFG_LU_ZBC_ZD) {
		p->realm_zones = l->realm_zones;
		p->active_domain = (uint8_t)l->active_domain;
		p->gap_zones = l->gap_zones;
		p->sobr_zones = l->sobr_zones;
		/* The first zone domain is conventional: half the zones besides the gap (the size may come from the file). */
		if (p->num_blocks / p->zone_size > l->gap_zones)
			p->conventional_zones = (uint32_t)((p->num_blocks / p->zone_size - l->gap_zones) / 2);
	}
	p->protection_type = (uint8_t)l->protection_type;
	p->p_i_exponent = (uint8_t)l->p_i_exponent;
	p->queue_depth = l->queue_depth;
	p->alua_tpgs = (uint8_t)l->alua;
	p->target_port_group = (uint16_t)l->target_port_group;
	p->alua_state = (uint8_t)l->alua_state;
	p->alua_transition_ms = l->alua_transition_ms;
	p->alua_standby_until_backend = l->rbd_unavailable == CFG_RBD_UNAVAILABLE_STANDBY;
	p->alua_peer_count = 0;
	if (cfg_alua_peers_walk(l->alua_peer_groups, add_alua_peer, p, err, errlen) != 0)
		return -1;
	p->lba_locks_whole_lu = l->lba_locks == CFG_LBA_LOCKS_LU;
	p->minimal_command_set = l->profile == CFG_PROFILE_SBC4_MINIMAL;
	p->quirks = l->quirks;
	p->product_type = (uint8_t)l->product_type;
	p->cdl_pages = l->command_duration_limits == CFG_CDL_T2   ? SCSI_CDL_T2
		       : l->command_duration_limits == CFG_CDL_AB ? SCSI_CDL_AB
								  : SCSI_CDL_NONE;
	if (sbce_latency_parse(l->latency, &p->latency, err, errlen) != 0)
		return -1;
	return sbce_mode_defaults(l->mode_defaults, &p->mode_defaults, err, errlen);
}

/* What the operator learns of a new LU. */
static void log_lu(const char *who, const struct cfg_lun *l, const struct scsi_lu *lu, const struct scsi_lu_params *p)
{
	char where[2 * CFG_RBD_NAME_MAX + 8];

	if (l->profile != CFG_PROFILE_NONE || l->quirks)
		sbce_info("%s: profile %s, quirks 0x%02x", who, cfg_profile_name(l->profile), l->quirks);
	sbce_info("%s: %s, %llu blocks of %u bytes%s%s", who, sbce_lu_backing(l, where, sizeof(where)),
		  (unsigned long long)p->num_blocks,
		  l->logical_block_size, l->thin_provisioning ? ", thin" : "", l->write_protect ? ", write-protected" : "");
	if (l->protection_type)
		sbce_info("%s: protection information type %u, %u interval(s) per block%s%s", who, l->protection_type,
			  1u << l->p_i_exponent, l->pi_faults[0] ? ", pi_faults " : "", l->pi_faults);
	if (scsi_lu_zone_count(lu))
		sbce_info("%s: %s, %u zones of %llu blocks (%u conventional), max open %u, urswrz %s", who,
			  cfg_lu_kind_name(l->kind), scsi_lu_zone_count(lu), (unsigned long long)p->zone_size,
			  l->conventional_zones, l->max_open_zones, l->urswrz ? "on" : "off");
}

int sbce_lu_open(struct sbce_daemon *d, struct scsi_device *dev, const struct cfg_lun *l, const char *who,
		 const char *state_dir, char *err, size_t errlen)
{
	struct scsi_lu_params params;
	struct backend *be;
	struct scsi_lu *lu;

	if (l->kind == CFG_LU_CONGLOMERATE) /* no medium: mode pages and reservations in its state directory */
		be = sbce_make_dirs(state_dir) == 0 ? be_mem_open(0) : NULL;
	else if (make_lu_dirs(d, l, state_dir, err, errlen) != 0)
		return -1;
	else
		be = open_backend(l, who, state_dir, err, errlen);
	if (!be) {
		if (l->kind == CFG_LU_CONGLOMERATE)
			snprintf(err, errlen, "cannot create %s", state_dir);
		return -1;
	}
	if (lu_params(l, scsi_lu_blocks_in_backing(l->logical_block_size, be->size, l->protection_type != 0),
		      state_dir, &params, err, errlen) != 0 ||
	    !(lu = scsi_lu_create(dev, &params, be, err, errlen))) {
		be_close(be);
		return -1;
	}
	if (sbce_lu_config_faults(d, l, lu, who, err, errlen) != 0)
		return -1;
	if (l->kind == CFG_LU_CONGLOMERATE) {
		if (sbce_conglomerate_apply(lu, l, err, errlen) != 0)
			return -1;
		sbce_info("%s: conglomerate, %u subsidiaries (template %s), bindings \"%s\"", who,
			  scsi_subsidiary_count(lu), l->subsidiary_template[0] ? l->subsidiary_template : "none",
			  l->bindings);
		return 0;
	}
	log_lu(who, l, lu, &params);
	return 0;
}

int sbce_devices_create(struct sbce_daemon *d)
{
	const struct cfg *cfg = d->cfg;

	d->devices = calloc(cfg->target_count ? cfg->target_count : 1, sizeof(*d->devices));
	if (!d->devices) {
		sbce_error("out of memory");
		return -1;
	}
	for (size_t i = 0; i < cfg->target_count; i++) {
		const struct cfg_target *t = cfg->targets[i];
		struct scsi_device *dev = scsi_device_create(t->name, sbce_workers_executor(d->workers), d->resources);

		if (!dev) {
			sbce_error("target %s: out of memory", t->name);
			return -1;
		}
		d->devices[d->device_count++] = dev;
		sbce_observe_backing_errors(d, dev);
		sbce_conglomerate_device(d, dev);
		for (size_t k = 0; k < t->lun_count; k++) {
			const struct cfg_lun *l = t->luns[k];
			char who[CFG_NAME_MAX + 32], state_dir[CFG_PATH_MAX + 2 * CFG_NAME_MAX], err[512];

			snprintf(who, sizeof(who), "target %s LUN %u", t->name, l->lun);
			sbce_lu_state_dir(cfg, t, l, state_dir, sizeof(state_dir));
			if (sbce_lu_open(d, dev, l, who, state_dir, err, sizeof(err))) {
				sbce_error("%s: %s", who, err);
				return -1;
			}
		}
	}
	return 0;
}
