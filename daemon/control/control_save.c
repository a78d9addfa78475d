/*
 * The runtime control's save (docs/control.md, save): the running
 * configuration as a configuration file that sbcemud -c accepts, with what
 * changed at run time (LUs added and removed, resized, write-protected).
 * The daemon returns the text; sbcemuctl writes the file, so the daemon
 * never writes where a request says.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "sbcemud.h"

void sbce_control_track(struct sbce_daemon *d, const char *target, uint32_t lun, const char *key, const char *text)
{
	struct cfg_diag diag = { 0 };
	char section[CFG_NAME_MAX + 32];

	if (sbce_target_index(d, target) < 0)
		return;
	snprintf(section, sizeof(section), "lun \"%s\" %u", target, lun);
	if (cfg_set(d->cfg, "sbcemuctl", section, key, text, &diag) != 0)
		sbce_warn("control: %s LUN %u: %s = %s not kept for save: %s", target, lun, key, text,
			  diag.text ? diag.text : "");
	cfg_diag_free(&diag);
}

int sbce_control_save(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	(void)req;
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
