/*
 * The configuration's mode_defaults text (config/mode.c) as the SCSI core
 * takes it (struct scsi_mode_defaults, spc_mode_pages.c), and back: for
 * start-up (setup.c), the runtime control's lu-mode-defaults and lus, and
 * SIGHUP.
 */
#include <string.h>

#include "sbcemud.h"

/* The cfg and SCSI enumerations of mode fields are one list (config/mode.c, spc_mode_pages.c). */
_Static_assert((int)CFG_MODE_FIELD_COUNT == (int)SCSI_MODE_FIELD_COUNT, "one list of mode fields");
_Static_assert((int)CFG_MODE_WCE == (int)SCSI_MODE_WCE && (int)CFG_MODE_RCD == (int)SCSI_MODE_RCD &&
		       (int)CFG_MODE_D_SENSE == (int)SCSI_MODE_D_SENSE && (int)CFG_MODE_SWP == (int)SCSI_MODE_SWP &&
		       (int)CFG_MODE_DEXCPT == (int)SCSI_MODE_DEXCPT && (int)CFG_MODE_MRIE == (int)SCSI_MODE_MRIE,
	       "one order of mode fields");

int sbce_mode_defaults(const char *text, struct scsi_mode_defaults *out, char *err, size_t errlen)
{
	struct cfg_mode_defaults md;

	if (cfg_mode_defaults_parse(text, &md, err, errlen) != 0)
		return -1;
	out->set = md.set;
	memcpy(out->value, md.value, sizeof(out->value));
	return 0;
}

void sbce_mode_defaults_text(const struct scsi_mode_defaults *md, char *buf, size_t len)
{
	struct cfg_mode_defaults c = { .set = md->set };

	memcpy(c.value, md->value, sizeof(c.value));
	cfg_mode_defaults_format(&c, buf, len);
}
