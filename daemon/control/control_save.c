/*
 * The runtime control and the configuration file (docs/control.md): save,
 * the running configuration as a file that sbcemud -c accepts, with what
 * changed at run time (LUs added and removed, resized, write-protected; the
 * daemon returns the text and sbcemuctl writes the file, so the daemon
 * never writes where a request says); and reload, the file read again as
 * SIGHUP does (reload.c), with leave to take every target away.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control_internal.h"

int sbce_control_save(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	(void)req;
	if (sbce_conglomerates_saveable(d, err, errlen) != 0) {
		if (f)
			fclose(f);
		free(text);
		return -1;
	}
	if (!f) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = cfg_write(d->cfg, f);
	if (fclose(f) != 0 || rc != 0) {
		free(text);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	json_object_set_new(result, "config", json_string(text));
	free(text);
	return 0;
}

int sbce_control_reload(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	struct sbce_reload_counts counts;
	bool remove_all;

	if (sbce_control_bool(req, "remove_all_targets", false, &remove_all, err, errlen) < 0 ||
	    sbce_reload_file(d, "control reload", remove_all, &counts, err, errlen) != 0)
		return -1;
	json_object_set_new(result, "applied", json_integer(counts.applied));
	json_object_set_new(result, "at_restart", json_integer(counts.at_restart));
	json_object_set_new(result, "refused", json_integer(counts.refused));
	return 0;
}

/*
 * daemon.autosave: the running configuration into the -c file (or
 * <state_dir>/sbcemud.ini), through FILE.tmp, fsync and rename, so that a
 * crash leaves the old file or the new one, never half of one; the old one
 * stays as FILE.bak.  Failures are logged: the change itself was made.
 */
void sbce_control_autosave(struct sbce_daemon *d)
{
	char path[CFG_PATH_MAX + 16], tmp[CFG_PATH_MAX + 32], bak[CFG_PATH_MAX + 32], err[512];
	struct stat st;
	FILE *f;
	int fd, rc;

	if (d->source && d->source->path)
		snprintf(path, sizeof(path), "%s", d->source->path);
	else
		snprintf(path, sizeof(path), "%s/sbcemud.ini", d->cfg->daemon.state_dir);
	if (sbce_conglomerates_saveable(d, err, sizeof(err)) != 0) {
		sbce_warn("autosave: %s not written: %s", path, err);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	snprintf(bak, sizeof(bak), "%s.bak", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  stat(path, &st) == 0 ? st.st_mode & 0777 : 0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		sbce_warn("autosave: cannot write %s: %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	rc = cfg_write(d->cfg, f);
	if (fflush(f) != 0 || fsync(fd) != 0)
		rc = -1;
	if (fclose(f) != 0 || rc != 0) {
		sbce_warn("autosave: cannot write %s: %s", tmp, strerror(errno));
		unlink(tmp);
		return;
	}
	if ((access(path, F_OK) == 0 && link(path, bak) != 0 && (unlink(bak) != 0 || link(path, bak) != 0)) ||
	    rename(tmp, path) != 0) {
		sbce_warn("autosave: cannot replace %s: %s", path, strerror(errno));
		unlink(tmp);
		return;
	}
	sbce_info("autosave: the running configuration is in %s", path);
}
