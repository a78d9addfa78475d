/*
 * Mode page defaults (lun.mode_defaults): the default values of mode page
 * fields an LU starts with, e.g. "wce=0 d_sense=1".  The fields are the
 * ones MODE SELECT may change and the device acts on or reports:
 *   wce, rcd   Caching mode page (SBC-4 6.5.5): WRITE CACHE ENABLE, READ CACHE DISABLE;
 *   d_sense    Control mode page (SPC-4 7.5.8): descriptor format sense data;
 *   swp        Control mode page: SOFTWARE WRITE PROTECT;
 *   dexcpt     Informational Exceptions Control mode page (SPC-4 7.5.12): DISABLE EXCEPTION CONTROL;
 *   mrie       the same page's METHOD OF REPORTING INFORMATIONAL EXCEPTIONS (0h-6h).
 * The setter checks the text where the key is read, so errors carry file
 * and line; the runtime control (lu-mode-defaults) parses the same text.
 */
#include <stdio.h>
#include <string.h>

#include "config_internal.h"

static const struct {
	const char *name;
	uint8_t max;
} fields[CFG_MODE_FIELD_COUNT] = {
	[CFG_MODE_WCE] = { "wce", 1 },       [CFG_MODE_RCD] = { "rcd", 1 },       [CFG_MODE_D_SENSE] = { "d_sense", 1 },
	[CFG_MODE_SWP] = { "swp", 1 },       [CFG_MODE_DEXCPT] = { "dexcpt", 1 }, [CFG_MODE_MRIE] = { "mrie", 6 },
};

static int field_index(const char *name, size_t len)
{
	for (int i = 0; i < CFG_MODE_FIELD_COUNT; i++)
		if (strlen(fields[i].name) == len && strncmp(name, fields[i].name, len) == 0)
			return i;
	return -1;
}

int cfg_mode_defaults_parse(const char *text, struct cfg_mode_defaults *out, char *why, size_t whylen)
{
	const char *p = text;
	struct cfg_mode_defaults md = { 0 };

	for (;;) {
		const char *name;
		uint64_t v;
		int i;

		while (*p == ' ' || *p == ',' || *p == '\t')
			p++;
		if (!*p)
			break;
		name = p;
		while (*p && *p != '=' && *p != ' ' && *p != ',' && *p != '\t')
			p++;
		i = field_index(name, (size_t)(p - name));
		if (i < 0) {
			snprintf(why, whylen,
				 "\"%.*s\" is not a mode field (wce, rcd, d_sense, swp, dexcpt, mrie; like \"wce=0 d_sense=1\")",
				 (int)(p - name), name);
			return -1;
		}
		if (*p != '=') {
			snprintf(why, whylen, "%s needs a value (%s=N)", fields[i].name, fields[i].name);
			return -1;
		}
		p++;
		if (cfg_parse_decimal(&p, UINT64_MAX, &v) != 0 || (*p && *p != ' ' && *p != ',' && *p != '\t') ||
		    v > fields[i].max) {
			snprintf(why, whylen, "%s takes 0 to %u", fields[i].name, fields[i].max);
			return -1;
		}
		md.set |= 1u << i;
		md.value[i] = (uint8_t)v;
	}
	*out = md;
	return 0;
}

void cfg_mode_defaults_format(const struct cfg_mode_defaults *md, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < CFG_MODE_FIELD_COUNT && n < len; i++)
		if (md->set & (1u << i))
			n += (size_t)snprintf(buf + n, len - n, "%s%s=%u", n ? " " : "", fields[i].name, md->value[i]);
}

int cfg_set_mode_defaults(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen)
{
	struct cfg_mode_defaults md;

	if (cfg_mode_defaults_parse(value, &md, why, whylen) != 0)
		return -1;
	return cfg_set_string(key, object, value, why, whylen);
}
