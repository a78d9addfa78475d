/*
 * The configuration's fault keys become fault rules at start-up, the same
 * rules the runtime control adds (docs/control.md, fault-add): listed by
 * fault-list, counted, and removable at run time.
 *   pi_faults = FIELD FIRST[-LAST], ...   -> corrupt-pi, one rule per item
 *   atomic_tear_write = N, atomic_tear_block = B
 *                                         -> tear-atomic, every N, count 1, blocks B
 *   offline_zones / read_only_zones       -> zone-offline / zone-read-only, one rule per zone
 *   predict_failure = true                -> predict-failure (5D/00)
 * A zone that a previous run left OFFLINE or READ ONLY and that the
 * configuration no longer lists is repaired.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbcemud.h"

struct rule_ctx {
	struct sbce_daemon *d;
	struct scsi_lu *lu;
	const char *who, *key;
	char *err;
	size_t errlen;
};

static int add_rule(struct rule_ctx *c, struct scsi_fault_rule_params *p)
{
	uint32_t id = c->d->next_fault_id + 1;

	p->probability = 1.0;
	if (scsi_lu_fault_add(c->lu, id, p, c->err, c->errlen) != 0)
		return -1;
	c->d->next_fault_id = id;
	sbce_info("%s: fault rule %u from %s", c->who, id, c->key);
	return 0;
}

static int add_pi_rule(void *arg, enum cfg_pi_field field, uint64_t first, uint64_t last)
{
	struct scsi_fault_rule_params p = { .action = SCSI_FAULT_ACTION_CORRUPT_PI, .has_lba = true };

	p.pi_field = field == CFG_PI_GUARD ? SCSI_PI_GUARD : field == CFG_PI_APP_TAG ? SCSI_PI_APP_TAG : SCSI_PI_REF_TAG;
	p.lba_first = first;
	p.lba_last = last;
	return add_rule(arg, &p) == 0 ? 0 : -1;
}

struct zone_marks {
	uint8_t *fault; /* enum scsi_zone_fault per zone */
	uint32_t nr_zones;
	uint8_t value;
	uint32_t bad_index;
};

static int mark_zones(void *arg, uint32_t first, uint32_t last)
{
	struct zone_marks *zm = arg;

	if (last >= zm->nr_zones) {
		zm->bad_index = last;
		return 1;
	}
	for (uint64_t i = first; i <= last; i++)
		zm->fault[i] = zm->value;
	return 0;
}

/* offline_zones, read_only_zones (docs/zbc.md); cfg_finish() checked the indexes against the configured size. */
static int zone_rules(struct rule_ctx *c, const struct cfg_lun *l)
{
	struct zone_marks zm = { .nr_zones = scsi_lu_zone_count(c->lu) };
	int rc = 0;

	if (zm.nr_zones == 0)
		return 0;
	zm.fault = calloc(zm.nr_zones, 1);
	if (!zm.fault) {
		snprintf(c->err, c->errlen, "out of memory");
		return -1;
	}
	for (unsigned k = 0; k < 2 && rc == 0; k++) {
		zm.value = k ? SCSI_ZONE_FAULT_READ_ONLY : SCSI_ZONE_FAULT_OFFLINE;
		if (cfg_zone_list_walk(k ? l->read_only_zones : l->offline_zones, mark_zones, &zm, c->err, c->errlen) !=
		    0) {
			snprintf(c->err, c->errlen, "%s: zone %u does not exist (the LU has %u zones)",
				 k ? "read_only_zones" : "offline_zones", zm.bad_index, zm.nr_zones);
			rc = -1;
		}
	}
	for (uint32_t i = 0; i < zm.nr_zones && rc == 0; i++) {
		struct scsi_fault_rule_params p = { .zone = i };

		if (zm.fault[i] == SCSI_ZONE_FAULT_NONE) {
			rc = scsi_lu_set_zone_fault(c->lu, i, SCSI_ZONE_FAULT_NONE, c->err, c->errlen);
			continue;
		}
		p.action = zm.fault[i] == SCSI_ZONE_FAULT_OFFLINE ? SCSI_FAULT_ACTION_ZONE_OFFLINE
								 : SCSI_FAULT_ACTION_ZONE_READ_ONLY;
		c->key = zm.fault[i] == SCSI_ZONE_FAULT_OFFLINE ? "offline_zones" : "read_only_zones";
		rc = add_rule(c, &p);
	}
	free(zm.fault);
	return rc;
}

int sbce_lu_config_faults(struct sbce_daemon *d, const struct cfg_lun *l, struct scsi_lu *lu, const char *who,
			  char *err, size_t errlen)
{
	struct rule_ctx c = { .d = d, .lu = lu, .who = who, .key = "pi_faults", .err = err, .errlen = errlen };

	if (cfg_pi_fault_walk(l->pi_faults, add_pi_rule, &c, err, errlen) != 0)
		return -1;
	if (l->atomic_tear_write) {
		struct scsi_fault_rule_params p = { .action = SCSI_FAULT_ACTION_TEAR_ATOMIC };

		p.every = l->atomic_tear_write;
		p.count = 1;
		p.blocks = l->atomic_tear_block;
		c.key = "atomic_tear_write";
		if (add_rule(&c, &p) != 0)
			return -1;
	}
	if (l->predict_failure) {
		struct scsi_fault_rule_params p = { .action = SCSI_FAULT_ACTION_PREDICT_FAILURE };

		c.key = "predict_failure";
		if (add_rule(&c, &p) != 0)
			return -1;
	}
	return zone_rules(&c, l);
}
