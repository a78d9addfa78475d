/*
 * The control's lu-latency and stats (docs/control.md): an LU's media
 * latency model changed at run time (the text of the latency key,
 * docs/latency.md), and the latency statistics of the LUs (struct
 * scsi_lu_stats): queued and active time, per command duration limit
 * descriptor what its limits and policies did.
 */
#include <stdio.h>
#include <string.h>

#include "control_internal.h"

int sbce_control_lu_latency(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	const json_t *model = json_object_get(req, "model");
	struct scsi_latency_params p;
	struct scsi_lu_info info;
	struct scsi_lu *lu;
	const char *target;
	char text[CFG_LATENCY_TEXT_MAX], was[CFG_LATENCY_TEXT_MAX];

	if (sbce_control_lu(d, req, &lu, &target, err, errlen) != 0)
		return -1;
	if (!json_is_string(model)) {
		snprintf(err, errlen, "\"model\" must be a latency text like \"rotating rpm=5400\" (docs/latency.md)");
		return -1;
	}
	if (sbce_latency_parse(json_string_value(model), &p, err, errlen) != 0)
		return -1;
	scsi_lu_describe(lu, &info);
	sbce_latency_text(&info.latency, was, sizeof(was));
	if (scsi_lu_set_latency(lu, &p, err, errlen) != 0)
		return -1;
	sbce_latency_text(&p, text, sizeof(text));
	sbce_lu_track(d, target, info.lun, "latency", text);
	sbce_info("control: target %s LUN %u: latency \"%s\" (was \"%s\")", target, info.lun, text, was);
	json_object_set_new(result, "latency", json_string(text));
	json_object_set_new(result, "previous", json_string(was));
	return 0;
}

static json_t *summary_json(const struct scsi_latency_summary *s)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "count", (json_int_t)s->count, "mean",
			 (json_int_t)(s->mean_ns / 1000), "p50", (json_int_t)(s->p50_ns / 1000), "p99",
			 (json_int_t)(s->p99_ns / 1000), "p999", (json_int_t)(s->p999_ns / 1000), "max",
			 (json_int_t)(s->max_ns / 1000));
}

/* The policy names of cdl-tools (cdl_policy_str), by SPC-6 policy code. */
static const char *policy_name(unsigned code)
{
	switch (code) {
	case 0x0:
		return "complete-earliest";
	case 0x1:
		return "continue-next-limit";
	case 0x2:
		return "continue-no-limit";
	case 0xd:
		return "complete-unavailable";
	case 0xe:
		return "abort-recovery";
	case 0xf:
		return "abort";
	default:
		return NULL;
	}
}

static json_t *descriptors_json(const struct scsi_lu_stats *st)
{
	static const char *const pages[2] = { "T2A", "T2B" };
	json_t *list = json_array();

	for (int p = 0; p < 2; p++) {
		for (int k = 0; k < 7; k++) {
			const struct scsi_cdl_descriptor_summary *s = &st->descriptor[p][k];
			json_t *policies = json_object();

			if (!s->commands)
				continue;
			for (unsigned c = 0; c < 16; c++)
				if (s->policy_actions[c] && policy_name(c))
					json_object_set_new(policies, policy_name(c),
							    json_integer((json_int_t)s->policy_actions[c]));
			json_array_append_new(list,
					      json_pack("{s:s, s:i, s:I, s:I, s:I, s:I, s:o, s:o, s:o}", "page", pages[p],
							"descriptor", k + 1, "commands", (json_int_t)s->commands,
							"inactive_miss", (json_int_t)s->inactive_miss, "active_miss",
							(json_int_t)s->active_miss, "guideline_miss",
							(json_int_t)s->guideline_miss, "policy_actions", policies, "queued_us",
							summary_json(&s->queued), "active_us", summary_json(&s->active)));
		}
	}
	return list;
}

struct stats_walk {
	struct sbce_daemon *d;
	json_t *list;
	bool reset;
};

static void each_lu_stats(void *arg, const struct sbce_lu_ref *ref)
{
	struct stats_walk *w = arg;
	struct scsi_lu_stats st;
	struct scsi_lu_info info;
	json_t *o;

	scsi_lu_describe(ref->lu, &info);
	scsi_lu_get_stats(ref->lu, &st);
	o = json_pack("{s:s, s:i, s:I, s:o, s:o, s:o, s:I}", ref->frontend ? ref->frontend : "target", ref->owner,
		      "lun", (int)info.lun, "seconds", (json_int_t)(st.elapsed_ns / 1000000000ull),
		      "queued_us", summary_json(&st.queued), "active_us", summary_json(&st.active), "total_us",
		      summary_json(&st.total), "good_with_sense", (json_int_t)st.good_with_sense);
	if (!o)
		return;
	if (st.cdl)
		json_object_set_new(o, "duration_limits", descriptors_json(&st));
	json_array_append_new(w->list, o);
	if (w->reset)
		scsi_lu_reset_stats(ref->lu);
}

int sbce_control_stats(struct sbce_daemon *d, const json_t *req, json_t *result, char *err, size_t errlen)
{
	struct stats_walk w = { .d = d, .list = json_array() };

	if (sbce_control_bool(req, "reset", false, &w.reset, err, errlen) < 0) {
		json_decref(w.list);
		return -1;
	}
	sbce_foreach_lu(d, each_lu_stats, &w);
	json_object_set_new(result, "lus", w.list);
	json_object_set_new(result, "reset", json_boolean(w.reset));
	return 0;
}
