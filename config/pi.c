/*
 * Protection information fault lists (lun.pi_faults): which stored PI field
 * of which logical blocks the medium returns corrupted, e.g.
 * "guard 100-107, ref 2048, app 4096-4099".  The setter checks the syntax
 * where the key is read, so errors carry file and line; the daemon walks the
 * list again to hand it to the SCSI core (daemon/sbcemud/setup.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"

static const char *const field_names[] = { "guard", "app", "ref" };

static int parse_field(const char **p, enum cfg_pi_field *field)
{
	for (size_t i = 0; i < sizeof(field_names) / sizeof(field_names[0]); i++) {
		size_t n = strlen(field_names[i]);

		if (strncmp(*p, field_names[i], n) == 0 && (*p)[n] == ' ') {
			*field = (enum cfg_pi_field)i;
			*p += n;
			return 0;
		}
	}
	return -1;
}

int cfg_pi_fault_walk(const char *text, int (*fn)(void *arg, enum cfg_pi_field field, uint64_t first, uint64_t last),
		      void *arg, char *why, size_t whylen)
{
	const char *p = text;

	for (;;) {
		enum cfg_pi_field field;
		uint64_t first, last;
		int rc;

		while (*p == ' ' || *p == ',' || *p == '\t')
			p++;
		if (!*p)
			return 0;
		if (parse_field(&p, &field) != 0)
			goto bad;
		while (*p == ' ')
			p++;
		if (cfg_parse_decimal(&p, UINT64_MAX, &first) != 0)
			goto bad;
		last = first;
		if (*p == '-') {
			p++;
			if (cfg_parse_decimal(&p, UINT64_MAX, &last) != 0)
				goto bad;
			if (last < first) {
				snprintf(why, whylen, "in \"%s\": a range ends before it starts", text);
				return -1;
			}
		}
		if (*p && *p != ' ' && *p != ',' && *p != '\t')
			goto bad;
		if (fn && (rc = fn(arg, field, first, last)) != 0)
			return rc;
		continue;
bad:
		snprintf(why, whylen,
			 "\"%s\" is not a list of FIELD LBA or FIELD FIRST-LAST items, FIELD one of guard, app, ref "
			 "(like \"guard 100-107, ref 2048\")",
			 text);
		return -1;
	}
}

static int count_item(void *arg, enum cfg_pi_field field, uint64_t first, uint64_t last)
{
	(void)field;
	(void)first;
	(void)last;
	++*(unsigned *)arg;
	return 0;
}

int cfg_set_pi_faults(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen)
{
	unsigned n = 0;

	if (cfg_pi_fault_walk(value, count_item, &n, why, whylen) != 0)
		return -1;
	if (n > CFG_PI_FAULTS_MAX) {
		snprintf(why, whylen, "%u items; at most %u", n, CFG_PI_FAULTS_MAX);
		return -1;
	}
	return cfg_set_string(key, object, value, why, whylen);
}
