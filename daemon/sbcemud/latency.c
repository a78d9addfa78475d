/*
 * The latency text of a LUN (config key latency, the runtime control's
 * lu-latency) as the SCSI core takes it (struct scsi_latency_params,
 * docs/latency.md), and back.  "MODEL key=value ...": the model first
 * (none, fixed, distribution, rotating), then its keys; a key the model
 * does not use is refused by name.  What the values must be together is
 * the core's to say (scsi_latency_params_check), so a bad model is refused
 * with the same words wherever it comes from.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbcemud.h"

#define M_FIXED (1u << SCSI_LATENCY_FIXED)
#define M_DIST (1u << SCSI_LATENCY_DISTRIBUTION)
#define M_ROT (1u << SCSI_LATENCY_ROTATING)
#define M_ANY (M_FIXED | M_DIST | M_ROT)

static const char *const model_names[] = {
	[SCSI_LATENCY_NONE] = "none",
	[SCSI_LATENCY_FIXED] = "fixed",
	[SCSI_LATENCY_DISTRIBUTION] = "distribution",
	[SCSI_LATENCY_ROTATING] = "rotating",
};

#define KEY(nm, field, models) \
	{ nm, offsetof(struct scsi_latency_params, field), sizeof(((struct scsi_latency_params *)0)->field), models }

static const struct latency_key {
	const char *name;
	size_t offset, size;
	unsigned models;
} keys[] = {
	KEY("servers", servers, M_FIXED | M_DIST),
	KEY("aging_ms", aging_ms, M_ANY),
	KEY("read_us", read_us, M_FIXED),
	KEY("write_us", write_us, M_FIXED),
	KEY("other_us", other_us, M_FIXED),
	KEY("mean_us", mean_us, M_DIST),
	KEY("p99_us", p99_us, M_DIST),
	KEY("seed", seed, M_DIST | M_ROT),
	KEY("rpm", rpm, M_ROT),
	KEY("seek_track_us", seek_track_us, M_ROT),
	KEY("seek_avg_us", seek_avg_us, M_ROT),
	KEY("seek_full_us", seek_full_us, M_ROT),
	KEY("head_switch_us", head_switch_us, M_ROT),
	KEY("overhead_us", overhead_us, M_ROT),
	KEY("rate_outer_mbs", rate_outer_mbs, M_ROT),
	KEY("rate_inner_mbs", rate_inner_mbs, M_ROT),
	KEY("cylinders", cylinders, M_ROT),
	KEY("smr_cache_mib", smr_cache_mib, M_ROT),
	KEY("smr_clean_mbs", smr_clean_mbs, M_ROT),
};

static bool separator(char c)
{
	return c == ' ' || c == ',' || c == '\t';
}

static const struct latency_key *find_key(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strlen(keys[i].name) == len && strncmp(keys[i].name, name, len) == 0)
			return &keys[i];
	return NULL;
}

static void put_value(struct scsi_latency_params *p, const struct latency_key *k, uint64_t v)
{
	char *field = (char *)p + k->offset;

	if (k->size == sizeof(uint64_t)) {
		memcpy(field, &v, sizeof(v));
	} else {
		uint32_t v32 = (uint32_t)v;

		memcpy(field, &v32, sizeof(v32));
	}
}

static uint64_t get_value(const struct scsi_latency_params *p, const struct latency_key *k)
{
	const char *field = (const char *)p + k->offset;

	if (k->size == sizeof(uint64_t)) {
		uint64_t v;

		memcpy(&v, field, sizeof(v));
		return v;
	}
	{
		uint32_t v32;

		memcpy(&v32, field, sizeof(v32));
		return v32;
	}
}

/* The model word at *pp; false if it is none of them. */
static bool parse_model(const char **pp, enum scsi_latency_model *model)
{
	const char *p = *pp, *w;

	while (separator(*p))
		p++;
	w = p;
	while (*p && !separator(*p))
		p++;
	for (size_t m = 0; m < sizeof(model_names) / sizeof(model_names[0]); m++) {
		if (strlen(model_names[m]) == (size_t)(p - w) && strncmp(w, model_names[m], (size_t)(p - w)) == 0) {
			*model = (enum scsi_latency_model)m;
			*pp = p;
			return true;
		}
	}
	return false;
}

int sbce_latency_parse(const char *text, struct scsi_latency_params *out, char *err, size_t errlen)
{
	struct scsi_latency_params p = { 0 };
	const char *s = text;

	if (!parse_model(&s, &p.model)) {
		snprintf(err, errlen, "\"%.40s\" does not start with a model: none, fixed, distribution or rotating", text);
		return -1;
	}
	for (;;) {
		const struct latency_key *k;
		const char *name;
		char *end;
		unsigned long long v;

		while (separator(*s))
			s++;
		if (!*s)
			break;
		name = s;
		while (*s && *s != '=' && !separator(*s))
			s++;
		k = find_key(name, (size_t)(s - name));
		if (!k || !(k->models & (1u << p.model))) {
			snprintf(err, errlen, "%s: \"%.*s\" is not a key of this model (docs/latency.md)",
				 model_names[p.model], (int)(s - name), name);
			return -1;
		}
		if (*s != '=') {
			snprintf(err, errlen, "%s needs a value (%s=N)", k->name, k->name);
			return -1;
		}
		s++;
		errno = 0;
		v = strtoull(s, &end, 10);
		if (end == s || *s == '-' || errno || (*end && !separator(*end)) ||
		    (k->size == sizeof(uint32_t) && v > UINT32_MAX)) {
			snprintf(err, errlen, "%s takes a whole number (0 to %s)", k->name,
				 k->size == sizeof(uint32_t) ? "4294967295" : "18446744073709551615");
			return -1;
		}
		put_value(&p, k, v);
		s = end;
	}
	if (scsi_latency_params_check(&p, err, errlen) != 0)
		return -1;
	*out = p;
	return 0;
}

void sbce_latency_text(const struct scsi_latency_params *p, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "%s", model_names[p->model]);

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]) && n < len; i++) {
		uint64_t v = get_value(p, &keys[i]);

		if (v && (keys[i].models & (1u << p->model)))
			n += (size_t)snprintf(buf + n, len - n, " %s=%" PRIu64, keys[i].name, v);
	}
}
