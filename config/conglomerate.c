/*
 * The keys of a conglomerate's administrative LU (kind conglomerate,
 * docs/conglomerate.md): subsidiary_template, subsidiaries ("1-8, 12") and
 * bindings ("INITIATOR=LIST; ..."), and the checks that span them.  The
 * setters check the syntax where the key is read, so errors carry file and
 * line; the daemon walks the lists again to apply them.
 */
#include <stdio.h>
#include <string.h>

#include "config_internal.h"

static int element_in_range(void *arg, uint32_t first, uint32_t last)
{
	(void)arg;
	(void)first;
	return first == 0 || last > CFG_MAX_ELEMENT ? 1 : 0;
}

static int element_list_check(const char *list, char *why, size_t whylen)
{
	int rc = cfg_zone_list_walk(list, element_in_range, NULL, why, whylen);

	if (rc == 1)
		snprintf(why, whylen, "\"%.60s\": subsidiary elements are 1..%u", list, CFG_MAX_ELEMENT);
	else if (rc != 0)
		snprintf(why, whylen, "\"%.60s\" is not a list of subsidiary elements and ranges (like \"1-8, 12\")",
			 list);
	return rc ? -1 : 0;
}

int cfg_set_element_list(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen)
{
	if (element_list_check(value, why, whylen) != 0)
		return -1;
	return cfg_set_string(key, object, value, why, whylen);
}

int cfg_bindings_walk(const char *text, int (*fn)(void *arg, const char *initiator, uint32_t first, uint32_t last),
		      void *arg, char *why, size_t whylen)
{
	const char *p = text;

	while (*p) {
		const char *end = strchr(p, ';'), *eq;
		char item[CFG_BINDINGS_MAX], name[256], list[CFG_BINDINGS_MAX];
		size_t len = end ? (size_t)(end - p) : strlen(p), nlen;
		const char *n0;

		snprintf(item, sizeof(item), "%.*s", (int)len, p);
		p += len + (end ? 1 : 0);
		for (n0 = item; *n0 == ' ' || *n0 == '\t'; n0++)
			;
		if (!*n0)
			continue;
		eq = strchr(n0, '=');
		nlen = eq ? (size_t)(eq - n0) : 0;
		while (nlen && (n0[nlen - 1] == ' ' || n0[nlen - 1] == '\t'))
			nlen--;
		if (!eq || nlen == 0 || nlen >= sizeof(name) || memchr(n0, ' ', nlen) || memchr(n0, ',', nlen)) {
			snprintf(why, whylen, "\"%.40s\" is not INITIATOR=LIST (like \"*=1-4\" or \"iqn.2026-12.org.example:h1=5\")",
				 n0);
			return -1;
		}
		snprintf(name, sizeof(name), "%.*s", (int)nlen, n0);
		snprintf(list, sizeof(list), "%s", eq + 1);
		{
			if (element_list_check(list, why, whylen) != 0)
				return -1;
			if (fn) {
				const char *q = list;

				/* Walk the list again, now handing each range to fn with the initiator. */
				while (*q) {
					uint64_t a, b;

					while (*q == ' ' || *q == ',' || *q == '\t')
						q++;
					if (!*q || cfg_parse_decimal(&q, CFG_MAX_ELEMENT, &a) != 0)
						break;
					b = a;
					if (*q == '-') {
						q++;
						if (cfg_parse_decimal(&q, CFG_MAX_ELEMENT, &b) != 0)
							break;
					}
					int rc = fn(arg, name, (uint32_t)a, (uint32_t)b);

					if (rc != 0)
						return rc;
				}
			}
		}
	}
	return 0;
}

int cfg_set_bindings(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen)
{
	if (cfg_bindings_walk(value, NULL, NULL, why, whylen) != 0)
		return -1;
	return cfg_set_string(key, object, value, why, whylen);
}

int cfg_check_subsidiary_template(const struct cfg *cfg, const char *name, char *why, size_t whylen)
{
	const struct cfg_lun *t = cfg_find_template(cfg, name);

	if (!t)
		snprintf(why, whylen, "no [lu \"%s\"] section", name);
	else if (t->kind == CFG_LU_CONGLOMERATE)
		snprintf(why, whylen, "[lu \"%s\"] is itself a conglomerate", name);
	return t && t->kind != CFG_LU_CONGLOMERATE ? 0 : -1;
}

/* Is element e (1..CFG_MAX_ELEMENT) in the subsidiaries list? */
struct member {
	uint32_t element;
	bool found;
};

static int find_element(void *arg, uint32_t first, uint32_t last)
{
	struct member *m = arg;

	m->found |= m->element >= first && m->element <= last;
	return 0;
}

struct binding_check {
	const char *subsidiaries;
	uint32_t missing;
};

static int binding_in_subsidiaries(void *arg, const char *initiator, uint32_t first, uint32_t last)
{
	struct binding_check *bc = arg;
	char why[64];

	(void)initiator;
	for (uint32_t e = first; e <= last; e++) {
		struct member m = { .element = e };

		cfg_zone_list_walk(bc->subsidiaries, find_element, &m, why, sizeof(why));
		if (!m.found) {
			bc->missing = e;
			return 1;
		}
	}
	return 0;
}

static bool key_set(const struct cfg_lun *l, const char *name)
{
	unsigned index;

	return cfg_schema_find(CFG_SECTION_LUN, name, &index) && cfg_key_was_set(&l->lines, index);
}

void cfg_finish_conglomerate(const struct cfg_lun_check *c, struct cfg_lun *l)
{
	static const char *const keys[] = { "subsidiary_template", "subsidiaries", "bindings" };
	struct binding_check bc = { .subsidiaries = l->subsidiaries };
	char why[128];

	if (l->kind != CFG_LU_CONGLOMERATE) {
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (key_set(l, keys[i]))
				cfg_lun_fail(c, l, keys[i], "only for kind conglomerate");
		return;
	}
	/* Conglomerates are an iSCSI front-end feature: LIO answers REPORT LUNS itself (docs/conglomerate.md). */
	if (c->template) {
		cfg_lun_fail(c, l, "kind", "a conglomerate is served by the iSCSI front end only, not as a template "
			     "or TCMU backstore");
		return;
	}
	if (key_set(l, "path"))
		cfg_lun_fail(c, l, "path", "a conglomerate's administrative LU has no medium (its subsidiaries' "
			     "files are sub<E>.img in its state directory)");
	if (l->subsidiaries[0] && !l->subsidiary_template[0])
		cfg_lun_fail(c, l, "subsidiaries", "needs subsidiary_template (what the subsidiaries are made from)");
	if (cfg_bindings_walk(l->bindings, binding_in_subsidiaries, &bc, why, sizeof(why)) == 1)
		cfg_lun_fail(c, l, "bindings", "element %u is not in subsidiaries", bc.missing);
}
