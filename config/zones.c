/*
 * Zone lists of zoned logical units (lun.offline_zones, lun.read_only_zones):
 * zone indexes and inclusive ranges, "3, 7-9".  The setter checks the
 * syntax where the key is read, so errors carry file and line; the daemon
 * walks the list again to apply it (daemon/sbcemud/setup.c), and finish.c checks the
 * indexes against the zone count when the size is known.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"

static int parse_index(const char **p, uint32_t *out)
{
	uint64_t v;

	if (cfg_parse_decimal(p, UINT32_MAX, &v) != 0)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int cfg_parse_decimal(const char **p, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)**p))
		return -1;
	errno = 0;
	v = strtoull(*p, &end, 10);
	if (errno || v > max)
		return -1;
	*out = v;
	*p = end;
	return 0;
}

int cfg_zone_list_walk(const char *text, int (*fn)(void *arg, uint32_t first, uint32_t last), void *arg,
		       char *why, size_t whylen)
{
	const char *p = text;

	for (;;) {
		uint32_t first, last;
		const char *item;
		int rc;

		while (*p == ' ' || *p == ',' || *p == '\t')
			p++;
		if (!*p)
			return 0;
		item = p;
		if (parse_index(&p, &first) != 0)
			goto bad;
		last = first;
		if (*p == '-') {
			p++;
			if (parse_index(&p, &last) != 0)
				goto bad;
			if (last < first) {
				snprintf(why, whylen, "\"%.*s\": the range ends before it starts",
					 (int)(p - item), item);
				return -1;
			}
		}
		if (*p && *p != ' ' && *p != ',' && *p != '\t')
			goto bad;
		if (fn && (rc = fn(arg, first, last)) != 0)
			return rc;
		continue;
bad:
		snprintf(why, whylen, "\"%s\" is not a list of zone indexes and ranges (like \"3, 7-9\")", text);
		return -1;
	}
}

int cfg_set_zone_list(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen)
{
	if (cfg_zone_list_walk(value, NULL, NULL, why, whylen) != 0)
		return -1;
	return cfg_set_string(key, object, value, why, whylen);
}
