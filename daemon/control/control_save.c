/*
 * The runtime control and the configuration file (docs/control.md): save,
 * the running configuration as a file that sbcemud -c accepts, with what
 * changed at run time (LUs added and removed, resized, write-protected; the
 * daemon returns the text and sbcemuctl writes the file, so the daemon
 * never writes where a request says); and reload, the file read again as
 * SIGHUP does (reload.c), with leave to take every target away.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
