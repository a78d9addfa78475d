/*
 * The kernel's side of a TCMU device outside the ring: the UIO device that
 * carries it (/sys/class/uio/uioN/name = "tcm-user/<hba>/<name>/<subtype>/
 * <cfgstring>", map0 of /dev/uioN) and its configfs directory
 * (<configfs>/user_<hba>/<name>: info, attrib/, action/, enable).  Names,
 * files and the reset sequence follow linux drivers/target/target_core_user.c
 * (tcmu_update_uio_info, tcmu_show_configfs_dev_params, the block_dev and
 * reset_ring actions) and tcmu-runner's libtcmu.c (device_parse_cfg,
 * device_open_shm).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tcmu_internal.h"

/* A small sysfs or configfs file, without its last newline.  0 or -errno. */
static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : n < 0 ? -errno : -EIO;
}

int tcmu_parse_uio_name(const char *uio_name, const char *subtype, struct tcmu_device_info *info)
{
	const char *p = uio_name, *slash;
	char *end;
	unsigned long hba;
	size_t len;

	if (strncmp(p, "tcm-user/", 9) != 0)
		return -1;
	p += 9;
	hba = strtoul(p, &end, 10);
	if (end == p || *end != '/' || hba > UINT32_MAX)
		return -1;
	p = end + 1;
	slash = strchr(p, '/');
	if (!slash || slash == p || (size_t)(slash - p) >= sizeof(info->name))
		return -1;
	memcpy(info->name, p, (size_t)(slash - p));
	info->name[slash - p] = '\0';
	p = slash + 1;
	/* The subtype is the whole word before the next '/', not a prefix of it (tcmu-runner matches prefixes). */
	len = strlen(subtype);
	if (strncmp(p, subtype, len) != 0 || p[len] != '/')
		return 1;
	p += len + 1;
	if (strlen(p) >= sizeof(info->cfgstring))
		return -1;
	snprintf(info->cfgstring, sizeof(info->cfgstring), "%s", p);
	info->hba = (unsigned)hba;
	return 0;
}

static void configfs_path(const struct tcmu_server *srv, const struct tcmu_device_info *info, const char *file,
			  char *path, size_t len)
{
	snprintf(path, len, "%s/user_%u/%s/%s", srv->paths.configfs, info->hba, info->name, file);
}

int tcmu_configfs_read(const struct tcmu_server *srv, const struct tcmu_device_info *info, const char *file,
		       char *buf, size_t len)
{
	char path[TCMU_PATH_MAX];

	configfs_path(srv, info, file, path, sizeof(path));
	return read_text(path, buf, len);
}

int tcmu_configfs_write(const struct tcmu_server *srv, const struct tcmu_device_info *info, const char *file,
			const char *text)
{
	char path[TCMU_PATH_MAX];

	configfs_path(srv, info, file, path, sizeof(path));
	return write_text(path, text);
}

/*
 * The backstore's size and block size, where known: "Config: ... Size: N"
 * on the second line of its info file (tcmu_show_configfs_dev_params; the
 * first line has a "SectorSize: "), and attrib/hw_block_size.
 */
static void read_geometry(const struct tcmu_server *srv, struct tcmu_device_info *info)
{
	char buf[2048], *config, *size;

	if (tcmu_configfs_read(srv, info, "info", buf, sizeof(buf)) == 0 && (config = strstr(buf, "Config: ")) &&
	    (size = strstr(config, " Size: ")))
		info->dev_size = strtoull(size + 7, NULL, 10);
	if (tcmu_configfs_read(srv, info, "attrib/hw_block_size", buf, sizeof(buf)) == 0)
		info->block_size = (uint32_t)strtoul(buf, NULL, 10);
}

/*
 * Commands a previous handler read and did not complete (it was killed)
 * cannot be told apart from completed ones once completions went out of
 * order, so the kernel fails them (BUSY: the initiator retries them) and
 * starts the ring afresh: block_dev, reset_ring, unblock (the sequence
 * tcmu-runner's dev_added runs on every reopen).
 */
int tcmu_reset_ring(struct tcmu_server *srv, const struct tcmu_device_info *info)
{
	int rc = tcmu_configfs_write(srv, info, "action/block_dev", "1");

	if (rc == 0)
		rc = tcmu_configfs_write(srv, info, "action/reset_ring", "1");
	if (tcmu_configfs_write(srv, info, "action/block_dev", "0") != 0 && rc == 0)
		rc = -EIO;
	return rc;
}

int tcmu_uio_attach(struct tcmu_server *srv, unsigned minor, const char *uio_name, char *reason, size_t len)
{
	struct tcmu_device_info info = { .uio_minor = minor };
	char path[TCMU_PATH_MAX], buf[64];
	size_t map_len;
	void *map;
	int fd, rc;

	rc = tcmu_parse_uio_name(uio_name, srv->subtype, &info);
	if (rc != 0) {
		snprintf(reason, len, rc > 0 ? "not an %s device" : "not a TCMU device name", srv->subtype);
		return rc > 0 ? 1 : -1;
	}
	snprintf(path, sizeof(path), "%s/uio%u/maps/map0/size", srv->paths.uio_class, minor);
	if ((rc = read_text(path, buf, sizeof(buf))) != 0) {
		snprintf(reason, len, "%s: %s", path, strerror(-rc));
		return -1;
	}
	map_len = (size_t)strtoull(buf, NULL, 0);
	read_geometry(srv, &info);
	snprintf(path, sizeof(path), "%s/uio%u", srv->paths.dev_dir, minor);
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		/* EBUSY: another process has it open (the kernel allows one: tcmu_open). */
		snprintf(reason, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		snprintf(reason, len, "mmap of %s (%zu bytes): %s", path, map_len, strerror(errno));
		close(fd);
		return -1;
	}
	rc = tcmu_server_attach(srv, &info, map, map_len, fd, reason, len);
	if (rc < 0) {
		munmap(map, map_len);
		close(fd);
		return rc;
	}
	/*
	 * TMR notifications are off by default (tcmu_tmr_notification_store):
	 * with them an aborted command ends in the core at once instead of
	 * running to its end while the kernel waits for it.
	 */
	if (tcmu_configfs_write(srv, &info, "attrib/tmr_notification", "1") != 0)
		tcmu_log(srv, 3, "uio%u: attrib/tmr_notification could not be set", minor);
	return rc; /* 1: attached, its LU refused (the device has map and fd) */
}

/*
 * A device whose enable is still being written (configfs enable reads 0)
 * while its UIO device exists is one whose ADDED_DEVICE event nobody
 * answered (the kernel waits without a timeout): answer it now.
 */
static void answer_pending_enable(struct tcmu_server *srv, struct tcmu_dev *dev, int rc)
{
	char buf[16];

	if (dev && tcmu_configfs_read(srv, &dev->info, "enable", buf, sizeof(buf)) == 0 && strcmp(buf, "0") == 0 &&
	    tcmu_netlink_reply_added(srv, &dev->info, rc == 0 ? 0 : -EINVAL) == 0)
		tcmu_log(srv, 2, "uio%u: answered the kernel's pending ADDED_DEVICE", dev->info.uio_minor);
}

int tcmu_server_scan(struct tcmu_server *srv)
{
	DIR *dir = opendir(srv->paths.uio_class);
	struct dirent *de;
	int attached = 0;

	if (!dir)
		return 0; /* no UIO device at all (uio not loaded) */
	while ((de = readdir(dir))) {
		char path[TCMU_PATH_MAX], name[TCMU_PATH_MAX], reason[512], *end;
		unsigned long minor;
		int rc;

		if (strncmp(de->d_name, "uio", 3) != 0)
			continue;
		minor = strtoul(de->d_name + 3, &end, 10);
		if (end == de->d_name + 3 || *end || tcmu_find_device(srv, (unsigned)minor))
			continue;
		snprintf(path, sizeof(path), "%s/%s/name", srv->paths.uio_class, de->d_name);
		if (read_text(path, name, sizeof(name)) != 0)
			continue;
		rc = tcmu_uio_attach(srv, (unsigned)minor, name, reason, sizeof(reason));
		if (rc == 0)
			attached++;
		else if (rc < 0 && strncmp(name, "tcm-user/", 9) == 0)
			tcmu_log(srv, 0, "uio%lu (%s): not served: %s", minor, name, reason);
		if (rc == 0 || (rc == 1 && tcmu_find_device(srv, (unsigned)minor)))
			answer_pending_enable(srv, tcmu_find_device(srv, (unsigned)minor), rc);
	}
	closedir(dir);
	return attached;
}

int tcmu_server_start(struct tcmu_server *srv, char *reason, size_t len)
{
	int n;

	if (tcmu_netlink_open(srv, reason, len) != 0) {
		tcmu_netlink_close(srv, false);
		return -1;
	}
	n = tcmu_server_scan(srv);
	if (n)
		tcmu_log(srv, 2, "%d %s device%s found at start", n, srv->subtype, n == 1 ? "" : "s");
	return 0;
}
