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

#include "control_internal.h"

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
