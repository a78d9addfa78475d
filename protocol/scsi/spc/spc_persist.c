/*
 * State files of the SPC handlers: saved mode pages (MODE SELECT SP = 1,
 * SPC-4 6.11) and persistent reservations with APTPL = 1 (they persist
 * through power loss, SPC-4 5.13).  See struct spc_persist_file in spc.h.
 *
 * A file is replaced atomically: the image goes to "<name>.tmp", is
 * fsync'd, then renamed over the file, and the directory is fsync'd, so a
 * crash leaves either the old or the new image, never a torn one.  Both
 * files are opened with be_state_open(): never through a symbolic link
 * (rename(2) replaces a link at the file's own name, it does not follow it).
 * A backend that keeps state with the medium (backend_ops.state_store: an
 * RBD image several nodes serve) keeps the images instead, as named blobs
 * it replaces whole, so that the node that takes the medium over has them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spc/spc.h"

void spc_persist_init(struct spc_persist_file *f, const struct scsi_lu *lu, const char *name)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "%s/%s", lu->state_dir, name);
	snprintf(f->name, sizeof(f->name), "%s", name);
	if (lu->backend && lu->backend->ops->state_load && lu->backend->ops->state_store)
		f->shared = lu->backend;
	pthread_mutex_init(&f->lock, NULL);
}

void spc_persist_fini(struct spc_persist_file *f)
{
	pthread_mutex_destroy(&f->lock);
}

int spc_persist_peek(const struct spc_persist_file *f, uint8_t **data, size_t *len, size_t max)
{
	*data = NULL;
	*len = 0;
	if (!f->shared || !f->shared->ops->state_peek)
		return -EOPNOTSUPP;
	return f->shared->ops->state_peek(f->shared, f->name, data, len, max);
}

int spc_persist_load(const struct spc_persist_file *f, uint8_t **data, size_t *len, size_t max)
{
	int fd;
	uint8_t *buf;
	size_t n = 0;

	if (f->shared)
		return f->shared->ops->state_load(f->shared, f->name, data, len, max);
	fd = be_state_open(f->path, O_RDONLY);
	*data = NULL;
	*len = 0;
	if (fd < 0)
		return -errno;
	buf = malloc(max + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t r = read(fd, buf + n, max + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = -errno;
			free(buf);
			close(fd);
			return err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			/* Longer than any image we write: treat as corrupt. */
			free(buf);
			close(fd);
			return -EFBIG;
		}
	}
	close(fd);
	*data = buf;
	*len = n;
	return 0;
}

static int fsync_dir_of(const char *path)
{
	char dir[PATH_MAX + 32];
	char *slash;
	int fd, rc = 0;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return 0;
	*slash = '\0';
	fd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) != 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* Writes (or removes, when image is NULL) the file now. */
static int write_file(const char *path, const uint8_t *image, size_t len)
{
	char tmp[PATH_MAX + 40];
	int fd, rc = 0;

	if (!image) {
		if (unlink(path) != 0 && errno != ENOENT)
			return -errno;
		return fsync_dir_of(path);
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = be_state_open(tmp, O_WRONLY | O_CREAT | O_TRUNC);
	if (fd < 0)
		return -errno;
	rc = be_pwrite_all(fd, image, len, 0, 0);
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	close(fd);
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc != 0) {
		unlink(tmp);
		return rc;
	}
	return fsync_dir_of(path);
}

/* Writes image as generation gen unless a newer generation is already on disk. */
static int write_generation(struct spc_persist_file *f, uint64_t gen, const uint8_t *image, size_t len)
{
	int rc = 0;

	pthread_mutex_lock(&f->lock);
	if (gen > f->gen_written) {
		rc = f->shared ? f->shared->ops->state_store(f->shared, f->name, image, image ? len : 0)
			       : write_file(f->path, image, len);
		if (rc == 0)
			f->gen_written = gen;
	}
	pthread_mutex_unlock(&f->lock);
	return rc;
}

int spc_persist_write_now(struct spc_persist_file *f, const uint8_t *image, size_t len)
{
	return write_generation(f, ++f->gen_next, image, len);
}

struct persist_job {
	struct spc_persist_file *file;
	uint64_t gen;
	uint8_t *image;
	size_t len;
	uint8_t *notice; /* for the nodes that wait for the medium, once written (spc_pr_peer.c); NULL: none */
	size_t notice_len;
};

static void persist_job_free(void *state)
{
	struct persist_job *job = state;

	free(job->image);
	free(job->notice);
	free(job);
}

static void persist_work(struct scsi_cmd *cmd)
{
	struct persist_job *job = cmd->handler_state;
	struct backend *be = cmd->lu->backend;
	int rc = write_generation(job->file, job->gen, job->image, job->len);

	if (rc != 0)
		scsi_cmd_fail_errno(cmd, rc, true);
	else if (job->notice && be->ops->tell_peers)
		(void)be->ops->tell_peers(be, job->notice, job->notice_len); /* a node that does not answer misses it */
}

enum scsi_result spc_persist_cmd(struct scsi_cmd *cmd, struct spc_persist_file *f, uint8_t *image, size_t len,
				 enum scsi_result (*after)(struct scsi_cmd *cmd))
{
	return spc_persist_cmd_notice(cmd, f, image, len, after, NULL, 0);
}

enum scsi_result spc_persist_cmd_notice(struct scsi_cmd *cmd, struct spc_persist_file *f, uint8_t *image,
					size_t len, enum scsi_result (*after)(struct scsi_cmd *cmd), uint8_t *notice,
					size_t notice_len)
{
	struct persist_job *job = calloc(1, sizeof(*job));

	if (!job) {
		free(image);
		free(notice);
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	}
	job->notice = notice;
	job->notice_len = notice_len;
	job->file = f;
	job->gen = ++f->gen_next;
	job->image = image;
	job->len = image ? len : 0;
	if (cmd->handler_state && cmd->handler_state_free)
		cmd->handler_state_free(cmd->handler_state);
	cmd->handler_state = job;
	cmd->handler_state_free = persist_job_free;
	return scsi_cmd_run_io(cmd, persist_work, after);
}
