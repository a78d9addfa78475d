/*
 * fuzz_config: the configuration library (config/): the INI parser on
 * libinih and the schema's value parsers and setters (cfg_parse_string),
 * the cross-key checks and derived values (cfg_finish), the zone and PI
 * fault lists the daemon walks when it builds LUs (cfg_zone_list_walk,
 * cfg_pi_fault_walk), and TCMU cfgstrings over the [lun] schema with
 * [lu "NAME"] templates (cfg_lun_from_cfgstring, docs/tcmu.md).
 *
 * Input: INI text, then optionally a NUL and a cfgstring, then optionally a
 * NUL and 8 bytes of the backstore's size (big endian).  The cfgstring is
 * read against the parsed configuration when it was valid, else against
 * the embedded default (whose [lu "zbc-faulty"] template it can name).
 *
 * Checks beyond the sanitizers: every message is one line of the form
 * "where: reason" and the message count matches the lines.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

static int count_range(void *arg, uint32_t first, uint32_t last)
{
	if (first > last) {
		fprintf(stderr, "fuzz_config: zone range %u-%u is reversed\n", first, last);
		abort();
	}
	(*(unsigned *)arg)++;
	return 0;
}

static int count_fault(void *arg, enum cfg_pi_field field, uint64_t first, uint64_t last)
{
	(void)field;
	if (first > last) {
		fprintf(stderr, "fuzz_config: PI fault range %llu-%llu is reversed\n", (unsigned long long)first,
			(unsigned long long)last);
		abort();
	}
	(*(unsigned *)arg)++;
	return 0;
}

/* What daemon/sbcemud/setup.c does with a LU's lists. */
static void walk_lists(const struct cfg_lun *l)
{
	char why[256];
	unsigned n = 0;

	cfg_zone_list_walk(l->offline_zones, count_range, &n, why, sizeof(why));
	cfg_zone_list_walk(l->read_only_zones, count_range, &n, why, sizeof(why));
	cfg_pi_fault_walk(l->pi_faults, count_fault, &n, why, sizeof(why));
}

/* Each message is a line; as many lines as messages were counted. */
static void check_diag(const struct cfg_diag *d)
{
	unsigned lines = 0;

	if (!d->text) {
		if (d->count) {
			fprintf(stderr, "fuzz_config: %u messages without text\n", d->count);
			abort();
		}
		return;
	}
	if (strlen(d->text) != d->len || (d->len && d->text[d->len - 1] != '\n')) {
		fprintf(stderr, "fuzz_config: messages are not whole lines\n");
		abort();
	}
	for (size_t i = 0; i < d->len; i++)
		lines += d->text[i] == '\n';
	if (lines != d->count) {
		fprintf(stderr, "fuzz_config: %u messages in %u lines:\n%s", d->count, lines, d->text);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cfg *def;
	struct cfg_diag diag = { 0 };
	struct cfg *cfg;
	struct cfg_lun lun;
	const uint8_t *nul, *nul2 = NULL;
	char *ini, *cfgstring = NULL;
	uint64_t dev_size = 0;
	bool ok;

	if (!def) {
		def = cfg_load_default(&diag);
		if (!def) {
			fprintf(stderr, "fuzz_config: the embedded default does not load:\n%s", diag.text);
			abort();
		}
		cfg_diag_free(&diag);
	}
	nul = memchr(data, '\0', size);
	ini = strndup((const char *)data, nul ? (size_t)(nul - data) : size);
	if (nul) {
		size_t rest = size - (size_t)(nul - data) - 1;

		nul2 = memchr(nul + 1, '\0', rest);
		cfgstring = strndup((const char *)nul + 1, nul2 ? (size_t)(nul2 - nul - 1) : rest);
		if (nul2 && size - (size_t)(nul2 - data) - 1 >= 8) {
			for (int i = 0; i < 8; i++)
				dev_size = dev_size << 8 | nul2[1 + i];
		}
	}
	if (!ini || (nul && !cfgstring))
		abort();

	cfg = cfg_create();
	ok = cfg_parse_string(cfg, "fuzz.ini", ini, &diag) == 0;
	check_diag(&diag);
	if (ok) {
		ok = cfg_finish(cfg, &diag) == 0;
		check_diag(&diag);
	}
	if (ok) {
		for (size_t t = 0; t < cfg->target_count; t++)
			for (size_t i = 0; i < cfg->targets[t]->lun_count; i++)
				walk_lists(cfg->targets[t]->luns[i]);
	}
	cfg_diag_free(&diag);
	if (cfgstring) {
		memset(&lun, 0, sizeof(lun));
		if (cfg_lun_from_cfgstring(ok ? cfg : def, "fuzz0", cfgstring, dev_size, &lun, &diag) == 0)
			walk_lists(&lun);
		check_diag(&diag);
		cfg_diag_free(&diag);
	}
	cfg_free(cfg);
	free(ini);
	free(cfgstring);
	return 0;
}
