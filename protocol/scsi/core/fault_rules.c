/*
 * Fault rules (scsi_faults.h; docs/control.md, "fault-add"): the runtime
 * control's way to make an LU misbehave.  A rule matches commands (opcode,
 * service action, LBA range, initiator), fires on some of them (every Nth,
 * with a seeded probability, at most count times) and then acts, when the
 * command is about to execute (scsi_fault_check, from scsi_cmd_start): a
 * CHECK CONDITION with chosen sense, another status, a delay, a hold (no
 * answer until a task management function ends it), a dropped connection,
 * or unrecoverable medium errors on a range of blocks until they are
 * written (SBC-4 READ: an unrecovered read error is reported with the LBA
 * in INFORMATION).  Other rules act on the ABORT TASK that names a command
 * they match (scsi_fault_abort_task, from scsi_tmf): rejected or lost.
 *
 * Held and delayed commands wait on the LU's held list; a delayed one runs
 * when its timer fires (sched/timer.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/task_set.h"
#include "sched/timer.h"

struct scsi_fault_rule {
	struct scsi_fault_rule *next;
	uint32_t id;
	struct scsi_fault_rule_params p;
	struct scsi_fault_rule_stats st;
	uint64_t rng;      /* xorshift64* state, from p.seed */
	uint64_t added_ns; /* the device's clock when added: the time window's origin */
	uint8_t *bad;      /* medium-error: one bit per block of lba_first..lba_last still bad */
};

/* xorshift64* (Vigna, "An experimental exploration of Marsaglia's xorshift generators"): a uniform double in [0, 1). */
static double rule_draw(struct scsi_fault_rule *r)
{
	r->rng ^= r->rng >> 12;
	r->rng ^= r->rng << 25;
	r->rng ^= r->rng >> 27;
	return (double)((r->rng * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

static bool bad_test(const struct scsi_fault_rule *r, uint64_t i)
{
	return r->bad[i / 8] & (1u << (i % 8));
}

static int check_params(const struct scsi_fault_rule_params *p, char *err, size_t errlen)
{
	if (p->opcode_count > SCSI_FAULT_OPCODES_MAX) {
		snprintf(err, errlen, "at most %u opcodes", SCSI_FAULT_OPCODES_MAX);
		return -1;
	}
	if (p->has_lba && p->lba_first > p->lba_last) {
		snprintf(err, errlen, "lba_first %llu is past lba_last %llu", (unsigned long long)p->lba_first,
			 (unsigned long long)p->lba_last);
		return -1;
	}
	if (!(p->probability >= 0.0 && p->probability <= 1.0)) {
		snprintf(err, errlen, "probability must be between 0 and 1");
		return -1;
	}
	switch (p->action) {
	case SCSI_FAULT_ACTION_SENSE:
		if (p->sense_key > 0xf || p->sense_key == SENSE_KEY_NO_SENSE) {
			snprintf(err, errlen, "sense_key must be 1 to 15");
			return -1;
		}
		break;
	case SCSI_FAULT_ACTION_STATUS:
		switch (p->status) {
		case SCSI_STATUS_BUSY:
		case SCSI_STATUS_RESERVATION_CONFLICT:
		case SCSI_STATUS_TASK_SET_FULL:
		case SCSI_STATUS_ACA_ACTIVE:
		case SCSI_STATUS_TASK_ABORTED:
			break;
		default:
			snprintf(err, errlen, "status must be 0x08, 0x18, 0x28, 0x30 or 0x40 (CHECK CONDITION: action sense)");
			return -1;
		}
		break;
	case SCSI_FAULT_ACTION_DELAY:
		if (p->delay_ms < 1 || p->delay_ms > SCSI_FAULT_DELAY_MS_MAX) {
			snprintf(err, errlen, "delay_ms must be 1 to %u", SCSI_FAULT_DELAY_MS_MAX);
			return -1;
		}
		break;
	case SCSI_FAULT_ACTION_HOLD:
		break;
	case SCSI_FAULT_ACTION_MEDIUM_ERROR:
		if (!p->has_lba) {
			snprintf(err, errlen, "medium-error needs lba_first and lba_last");
			return -1;
		}
		if (p->lba_last - p->lba_first >= SCSI_FAULT_MEDIUM_ERROR_BLOCKS_MAX) {
			snprintf(err, errlen, "medium-error covers at most %u blocks", SCSI_FAULT_MEDIUM_ERROR_BLOCKS_MAX);
			return -1;
		}
		break;
	case SCSI_FAULT_ACTION_CORRUPT_READ:
	case SCSI_FAULT_ACTION_SHORT_READ:
		break;
	case SCSI_FAULT_ACTION_TEAR_ATOMIC:
		break;
	case SCSI_FAULT_ACTION_CORRUPT_PI:
		if (!p->has_lba) {
			snprintf(err, errlen, "corrupt-pi needs lba_first and lba_last");
			return -1;
		}
		if (p->pi_field != SCSI_PI_GUARD && p->pi_field != SCSI_PI_APP_TAG && p->pi_field != SCSI_PI_REF_TAG) {
			snprintf(err, errlen, "pi_field must be guard, app-tag or ref-tag");
			return -1;
		}
		break;
	case SCSI_FAULT_ACTION_ZONE_OFFLINE:
	case SCSI_FAULT_ACTION_ZONE_READ_ONLY:
	case SCSI_FAULT_ACTION_DROP_CONNECTION:
	case SCSI_FAULT_ACTION_REJECT_ABORT_TASK:
	case SCSI_FAULT_ACTION_IGNORE_ABORT_TASK:
	case SCSI_FAULT_ACTION_PREDICT_FAILURE:
		break;
	case SCSI_FAULT_ACTION_TEMPERATURE:
		if (p->temperature < 1 || p->temperature > 254 || p->temperature_threshold > 254) {
			snprintf(err, errlen, "temperature and temperature_threshold must be 1 to 254 (degrees Celsius)");
			return -1;
		}
		break;
	default:
		snprintf(err, errlen, "unknown action");
		return -1;
	}
	return 0;
}

static bool zone_rule(const struct scsi_fault_rule_params *p)
{
	return p->action == SCSI_FAULT_ACTION_ZONE_OFFLINE || p->action == SCSI_FAULT_ACTION_ZONE_READ_ONLY;
}

static bool ie_rule(const struct scsi_fault_rule_params *p)
{
	return p->action == SCSI_FAULT_ACTION_PREDICT_FAILURE || p->action == SCSI_FAULT_ACTION_TEMPERATURE;
}

/* A rule that acts on its own, not on the commands it matches. */
static bool standing_rule(const struct scsi_fault_rule_params *p)
{
	return p->action == SCSI_FAULT_ACTION_MEDIUM_ERROR || p->action == SCSI_FAULT_ACTION_CORRUPT_PI || zone_rule(p) ||
	       ie_rule(p);
}

/* The informational exceptions follow the LU's predict-failure and temperature rules (the oldest / newest). */
static void ie_rules_changed(struct scsi_lu *lu)
{
	uint16_t predicted = 0;
	uint8_t temperature = 0, threshold = 0;

	for (const struct scsi_fault_rule *r = lu->fault_rules; r; r = r->next) {
		if (r->p.action == SCSI_FAULT_ACTION_PREDICT_FAILURE && !predicted)
			predicted = r->p.asc || r->p.ascq ? (uint16_t)(r->p.asc << 8 | r->p.ascq)
							  : ASC_FAILURE_PREDICTION_THRESHOLD_EXCEEDED;
		if (r->p.action == SCSI_FAULT_ACTION_TEMPERATURE) {
			temperature = r->p.temperature;
			threshold = r->p.temperature_threshold;
		}
	}
	spc_ie_fault(lu, predicted, temperature, threshold);
}

/* A rule that acts on the ABORT TASK of the commands it matches, not on them (scsi_fault_abort_task). */
static bool abort_task_rule(const struct scsi_fault_rule_params *p)
{
	return p->action == SCSI_FAULT_ACTION_REJECT_ABORT_TASK || p->action == SCSI_FAULT_ACTION_IGNORE_ABORT_TASK;
}

int scsi_lu_fault_add(struct scsi_lu *lu, uint32_t id, const struct scsi_fault_rule_params *p, char *err,
		      size_t errlen)
{
	struct scsi_fault_rule *r, **tail;

	if (check_params(p, err, errlen) != 0)
		return -1;
	if (p->action == SCSI_FAULT_ACTION_CORRUPT_PI && !lu->params.protection_type) {
		snprintf(err, errlen, "LUN %u has no protection information (protection_type 0)", lu->lun);
		return -1;
	}
	if ((p->action == SCSI_FAULT_ACTION_MEDIUM_ERROR || p->action == SCSI_FAULT_ACTION_CORRUPT_PI) &&
	    p->lba_first >= lu->num_blocks) {
		snprintf(err, errlen, "lba_first %llu is past the LU's last block %llu", (unsigned long long)p->lba_first,
			 (unsigned long long)(lu->num_blocks - 1));
		return -1;
	}
	if (zone_rule(p) && lu->ts.count) {
		snprintf(err, errlen, "%u commands are in the LU's task set (a zone changes only between commands)",
			 lu->ts.count);
		return -1;
	}
	if (zone_rule(p) && scsi_lu_zone_count(lu) == 0) {
		snprintf(err, errlen, "LUN %u is not zoned", lu->lun);
		return -1;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (zone_rule(p) &&
	    scsi_lu_set_zone_fault(lu, p->zone,
				   p->action == SCSI_FAULT_ACTION_ZONE_OFFLINE ? SCSI_ZONE_FAULT_OFFLINE
									       : SCSI_ZONE_FAULT_READ_ONLY,
				   err, errlen) != 0) {
		free(r);
		return -1;
	}
	r->id = id;
	r->p = *p;
	if (r->p.every == 0)
		r->p.every = 1;
	r->rng = p->seed ? p->seed : id + 0x9e3779b97f4a7c15ull;
	r->added_ns = scsi_device_now(lu->dev);
	if (p->action == SCSI_FAULT_ACTION_MEDIUM_ERROR) {
		uint64_t n = p->lba_last - p->lba_first + 1;

		r->bad = malloc((n + 7) / 8);
		if (!r->bad) {
			free(r);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		memset(r->bad, 0xff, (n + 7) / 8);
		r->st.bad_blocks = n;
	}
	pthread_mutex_lock(&lu->fault_rules_lock);
	for (tail = &lu->fault_rules; *tail; tail = &(*tail)->next)
		;
	*tail = r;
	pthread_mutex_unlock(&lu->fault_rules_lock);
	if (ie_rule(p)) {
		r->st.matched = r->st.fired = 1;
		ie_rules_changed(lu);
	}
	return 0;
}

/* Takes cmd off its LU's held list (no-op when it is not on it). */
static void unhold(struct scsi_cmd *cmd)
{
	struct scsi_cmd **pp;

	if (!cmd->fault_held)
		return;
	for (pp = &cmd->lu->fault_held; *pp; pp = &(*pp)->fault_held_next) {
		if (*pp == cmd) {
			*pp = cmd->fault_held_next;
			break;
		}
	}
	scsi_timer_cancel(cmd->lu->dev, &cmd->fault_timer);
	cmd->fault_held = false;
	cmd->fault_drop = false;
	cmd->fault_held_next = NULL;
	for (struct scsi_fault_rule *r = cmd->lu->fault_rules; r; r = r->next)
		if (r->id == cmd->fault_held_rule && r->st.held)
			r->st.held--;
}

int scsi_lu_fault_remove(struct scsi_lu *lu, uint32_t id)
{
	struct scsi_fault_rule **pp, *r;
	struct scsi_cmd *cmd;

	for (pp = &lu->fault_rules; *pp && (*pp)->id != id; pp = &(*pp)->next)
		;
	r = *pp;
	if (!r)
		return -1;
	pthread_mutex_lock(&lu->fault_rules_lock);
	*pp = r->next;
	pthread_mutex_unlock(&lu->fault_rules_lock);
	if (zone_rule(&r->p)) {
		char err[128];

		/* Back to EMPTY (NOT WRITE POINTER for a conventional zone); a failure to save is the zone state's to log. */
		(void)scsi_lu_set_zone_fault(lu, r->p.zone, SCSI_ZONE_FAULT_NONE, err, sizeof(err));
	}
	if (ie_rule(&r->p)) {
		free(r);
		ie_rules_changed(lu);
		return 0;
	}
	free(r->bad);
	free(r);
	/* Its held commands run now (each may complete others: walk from the head again). */
	for (;;) {
		for (cmd = lu->fault_held; cmd && cmd->fault_held_rule != id; cmd = cmd->fault_held_next)
			;
		if (!cmd)
			break;
		unhold(cmd);
		scsi_cmd_resume(cmd);
	}
	return 0;
}

void scsi_lu_fault_foreach(struct scsi_lu *lu,
			   void (*fn)(void *arg, uint32_t id, const struct scsi_fault_rule_params *p,
				      const struct scsi_fault_rule_stats *st),
			   void *arg)
{
	for (struct scsi_fault_rule *r = lu->fault_rules; r; r = r->next) {
		r->st.age_ms = (scsi_device_now(lu->dev) - r->added_ns) / 1000000u;
		fn(arg, r->id, &r->p, &r->st);
	}
}

void scsi_fault_lu_fini(struct scsi_lu *lu)
{
	/* No command and so no worker is left: no lock. */
	while (lu->fault_rules) {
		struct scsi_fault_rule *r = lu->fault_rules;

		lu->fault_rules = r->next;
		free(r->bad);
		free(r);
	}
}

/* ---- matching ---- */

/* Reads the medium's blocks (READ, VERIFY, COMPARE AND WRITE's compare, ...): the LBA lock modes say it. */
static bool reads_blocks(const struct scsi_cmd *cmd)
{
	return (cmd->op->flags & (OP_LBA_READ | OP_LBA_EXCLUSIVE)) && cmd->nblocks > 0;
}

static bool overlaps(const struct scsi_cmd *cmd, uint64_t first, uint64_t last)
{
	return cmd->nblocks > 0 && cmd->lba <= last && cmd->lba + cmd->nblocks - 1 >= first;
}

static bool rule_matches(const struct scsi_fault_rule *r, const struct scsi_cmd *cmd)
{
	const struct scsi_fault_rule_params *p = &r->p;

	if (p->opcode_count) {
		unsigned i;

		for (i = 0; i < p->opcode_count && p->opcodes[i] != cmd->cdb[0]; i++)
			;
		if (i == p->opcode_count)
			return false;
	}
	if (p->has_service_action && (cmd->op->sa_location == SCSI_SA_NONE || cmd->op->service_action != p->service_action))
		return false;
	if (p->has_lba && !overlaps(cmd, p->lba_first, p->lba_last))
		return false;
	if (p->initiator[0] && !strstr(cmd->nexus->initiator_port_name, p->initiator))
		return false;
	if ((p->action == SCSI_FAULT_ACTION_CORRUPT_READ || p->action == SCSI_FAULT_ACTION_SHORT_READ) &&
	    !(reads_blocks(cmd) && (cmd->op->flags & OP_DATA_IN)))
		return false;
	/* A WRITE ATOMIC that writes nothing cannot be torn: it does not count (atomic_tear_write's rule). */
	if (p->action == SCSI_FAULT_ACTION_TEAR_ATOMIC &&
	    (strncmp(cmd->op->name, "WRITE ATOMIC", 12) != 0 || cmd->nblocks == 0))
		return false;
	return true;
}

/* In the rule's time window: from after_ms after it was added, for for_ms (no end when 0). */
static bool rule_in_window(const struct scsi_device *dev, const struct scsi_fault_rule *r)
{
	uint64_t age_ms;

	if (!r->p.after_ms && !r->p.for_ms)
		return true;
	age_ms = (scsi_device_now(dev) - r->added_ns) / 1000000u;
	return age_ms >= r->p.after_ms && (!r->p.for_ms || age_ms - r->p.after_ms < r->p.for_ms);
}

/* Matching commands outside the time window are not seen: they neither count as matched nor move `every`. */
static bool rule_fires(const struct scsi_device *dev, struct scsi_fault_rule *r)
{
	if (!rule_in_window(dev, r))
		return false;
	r->st.matched++;
	if (r->p.count && r->st.fired >= r->p.count)
		return false;
	if (r->st.matched % r->p.every != 0)
		return false;
	if (r->p.probability < 1.0 && !(rule_draw(r) < r->p.probability))
		return false;
	r->st.fired++;
	return true;
}

/* The first block of [first, first + n) still bad under a medium-error rule: that rule, with *lba set; or NULL. */
static struct scsi_fault_rule *first_bad_block(struct scsi_lu *lu, uint64_t first, uint64_t n, uint64_t *lba)
{
	struct scsi_fault_rule *found = NULL;

	for (struct scsi_fault_rule *r = lu->fault_rules; r; r = r->next) {
		uint64_t from, to;

		if (r->p.action != SCSI_FAULT_ACTION_MEDIUM_ERROR || !r->st.bad_blocks || n == 0 ||
		    first > r->p.lba_last || first + n - 1 < r->p.lba_first)
			continue;
		from = first > r->p.lba_first ? first : r->p.lba_first;
		to = first + n - 1 < r->p.lba_last ? first + n - 1 : r->p.lba_last;
		for (uint64_t b = from; b <= to && (!found || b < *lba); b++) {
			if (bad_test(r, b - r->p.lba_first)) {
				*lba = b;
				found = r;
				break;
			}
		}
	}
	return found;
}

bool scsi_fault_read_range(struct scsi_lu *lu, uint64_t first, uint64_t n, uint64_t *lba)
{
	struct scsi_fault_rule *r = lu->fault_rules ? first_bad_block(lu, first, n, lba) : NULL;

	if (!r)
		return false;
	r->st.matched++;
	r->st.fired++;
	return true;
}

bool scsi_fault_first_bad_block(const struct scsi_lu *lu, uint64_t *lba)
{
	bool found = false;

	for (const struct scsi_fault_rule *r = lu->fault_rules; r; r = r->next) {
		if (r->p.action != SCSI_FAULT_ACTION_MEDIUM_ERROR || !r->st.bad_blocks)
			continue;
		for (uint64_t i = 0; i <= r->p.lba_last - r->p.lba_first; i++) {
			if (bad_test(r, i)) {
				if (!found || r->p.lba_first + i < *lba)
					*lba = r->p.lba_first + i;
				found = true;
				break;
			}
		}
	}
	return found;
}

/* A delayed command's time has come: it runs; a drop-connection one has its connection dropped. */
static void fault_timer_fire(struct scsi_timer *t)
{
	struct scsi_cmd *cmd = (struct scsi_cmd *)((char *)t - offsetof(struct scsi_cmd, fault_timer));

	if (cmd->fault_drop) {
		/* Held until the drop aborts it with the rest of its nexus's commands. */
		cmd->fault_drop = false;
		cmd->transport->drop_connection(cmd);
		return;
	}
	unhold(cmd);
	scsi_cmd_resume(cmd);
}

/* Holds cmd for r: until an abort or the rule goes, or (at_ns set) until that time of the device's clock. */
static void hold(struct scsi_cmd *cmd, const struct scsi_fault_rule *r, bool timed, uint64_t at_ns)
{
	struct scsi_cmd **tail;

	cmd->fault_held = true;
	cmd->fault_held_rule = r->id;
	cmd->fault_held_next = NULL;
	for (tail = &cmd->lu->fault_held; *tail; tail = &(*tail)->fault_held_next)
		;
	*tail = cmd;
	if (timed) {
		cmd->fault_timer.fire = fault_timer_fire;
		scsi_timer_arm(cmd->lu->dev, &cmd->fault_timer, at_ns);
	}
}

enum scsi_fault_verdict scsi_fault_check(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	struct scsi_fault_rule *bad_rule;
	uint64_t bad = 0;

	if (!lu->fault_rules)
		return SCSI_FAULT_PASS;
	/* corrupt-pi acts on the worker (scsi_fault_corrupt_pi_foreach); its reads are counted here. */
	for (struct scsi_fault_rule *r = lu->fault_rules; r; r = r->next) {
		if (r->p.action == SCSI_FAULT_ACTION_CORRUPT_PI && reads_blocks(cmd) &&
		    overlaps(cmd, r->p.lba_first, r->p.lba_last)) {
			r->st.matched++;
			r->st.fired++;
		}
	}
	if (reads_blocks(cmd) && (bad_rule = first_bad_block(lu, cmd->lba, cmd->nblocks, &bad))) {
		/* The rule that failed the read counts it (fault-list's matched and fired, docs/control.md). */
		bad_rule->st.matched++;
		bad_rule->st.fired++;
		scsi_cmd_fail(cmd, sense_with_information(sense_make(SENSE_KEY_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR),
							  bad));
		return SCSI_FAULT_DONE;
	}
	for (struct scsi_fault_rule *r = lu->fault_rules; r; r = r->next) {
		if (standing_rule(&r->p) || abort_task_rule(&r->p) || !rule_matches(r, cmd) || !rule_fires(lu->dev, r))
			continue;
		switch (r->p.action) {
		case SCSI_FAULT_ACTION_SENSE: {
			struct scsi_sense_info s = sense_make(r->p.sense_key, (uint16_t)(r->p.asc << 8 | r->p.ascq));

			if (cmd->nblocks > 0 || (cmd->op->flags & (OP_LBA_READ | OP_LBA_WRITE | OP_LBA_EXCLUSIVE)))
				s = sense_with_information(s, cmd->lba);
			scsi_cmd_fail(cmd, s);
			return SCSI_FAULT_DONE;
		}
		case SCSI_FAULT_ACTION_STATUS:
			scsi_cmd_set_status(cmd, r->p.status);
			return SCSI_FAULT_DONE;
		case SCSI_FAULT_ACTION_DELAY:
			if (!scsi_timer_available(lu->dev))
				return SCSI_FAULT_PASS; /* no clock to wait on: no delay */
			hold(cmd, r, true, scsi_device_now(lu->dev) + (uint64_t)r->p.delay_ms * 1000000ull);
			return SCSI_FAULT_HELD;
		case SCSI_FAULT_ACTION_HOLD:
			r->st.held++;
			hold(cmd, r, false, 0);
			return SCSI_FAULT_HELD;
		case SCSI_FAULT_ACTION_DROP_CONNECTION:
			/* Held at once; its timer (outside this call chain) has the transport drop the connection. */
			r->st.held++;
			cmd->fault_drop = cmd->transport->drop_connection && scsi_timer_available(lu->dev);
			hold(cmd, r, cmd->fault_drop, scsi_device_now(lu->dev));
			return SCSI_FAULT_HELD;
		case SCSI_FAULT_ACTION_CORRUPT_READ:
			cmd->faults |= SCSI_FAULT_CORRUPT_READ;
			return SCSI_FAULT_PASS;
		case SCSI_FAULT_ACTION_SHORT_READ:
			cmd->faults |= SCSI_FAULT_SHORT_READ;
			return SCSI_FAULT_PASS;
		case SCSI_FAULT_ACTION_TEAR_ATOMIC:
			/* sbc_write_atomic.c writes the first fault_tear_blocks blocks only. */
			cmd->faults |= SCSI_FAULT_TEAR_ATOMIC;
			cmd->fault_tear_blocks = r->p.blocks;
			return SCSI_FAULT_PASS;
		case SCSI_FAULT_ACTION_MEDIUM_ERROR:
		case SCSI_FAULT_ACTION_ZONE_OFFLINE:
		case SCSI_FAULT_ACTION_ZONE_READ_ONLY:
		case SCSI_FAULT_ACTION_REJECT_ABORT_TASK:
		case SCSI_FAULT_ACTION_IGNORE_ABORT_TASK:
		case SCSI_FAULT_ACTION_CORRUPT_PI:
		case SCSI_FAULT_ACTION_PREDICT_FAILURE:
		case SCSI_FAULT_ACTION_TEMPERATURE:
			break;
		}
	}
	return SCSI_FAULT_PASS;
}

void scsi_fault_corrupt_pi_foreach(struct scsi_lu *lu,
				   void (*fn)(void *arg, enum scsi_pi_field field, uint64_t first, uint64_t last), void *arg)
{
	pthread_mutex_lock(&lu->fault_rules_lock);
	for (const struct scsi_fault_rule *r = lu->fault_rules; r; r = r->next)
		if (r->p.action == SCSI_FAULT_ACTION_CORRUPT_PI)
			fn(arg, r->p.pi_field, r->p.lba_first, r->p.lba_last);
	pthread_mutex_unlock(&lu->fault_rules_lock);
}

enum scsi_tmf_response scsi_fault_abort_task(struct scsi_cmd *referenced)
{
	for (struct scsi_fault_rule *r = referenced->lu->fault_rules; r && referenced->op; r = r->next) {
		if (!abort_task_rule(&r->p) || !rule_matches(r, referenced) || !rule_fires(referenced->lu->dev, r))
			continue;
		return r->p.action == SCSI_FAULT_ACTION_REJECT_ABORT_TASK ? SCSI_TMF_FUNCTION_REJECTED
									 : SCSI_TMF_NO_RESPONSE;
	}
	return SCSI_TMF_FUNCTION_COMPLETE;
}

void scsi_fault_data_in(struct scsi_cmd *cmd)
{
	uint8_t *first = cmd->data_in ? cmd->data_in
				      : cmd->data_in_sgl.iovcnt ? (uint8_t *)cmd->data_in_sgl.iov[0].iov_base : NULL;

	if (cmd->status != SCSI_STATUS_GOOD || cmd->data_in_len == 0)
		return;
	if ((cmd->faults & SCSI_FAULT_CORRUPT_READ) && first)
		first[0] ^= 0xff;
	/* Whole blocks, at least one fewer than asked for: the residual says the rest never came. */
	if (cmd->faults & SCSI_FAULT_SHORT_READ)
		cmd->data_in_len = cmd->data_in_len / 2 / cmd->lu->block_size * cmd->lu->block_size;
}

void scsi_fault_written_range(struct scsi_lu *lu, uint64_t first, uint64_t n)
{
	for (struct scsi_fault_rule *r = lu->fault_rules; r && n; r = r->next) {
		if (r->p.action != SCSI_FAULT_ACTION_MEDIUM_ERROR || !r->st.bad_blocks || first > r->p.lba_last ||
		    first + n - 1 < r->p.lba_first)
			continue;
		for (uint64_t b = first > r->p.lba_first ? first : r->p.lba_first; b <= r->p.lba_last && b < first + n;
		     b++) {
			uint64_t i = b - r->p.lba_first;

			if (bad_test(r, i)) {
				r->bad[i / 8] &= (uint8_t)~(1u << (i % 8));
				r->st.bad_blocks--;
			}
		}
	}
}

void scsi_fault_cmd_done(struct scsi_cmd *cmd)
{
	unhold(cmd);
	/* A write that reached the medium repairs the bad blocks it covered (as a drive reassigns them on write). */
	if (cmd->status != SCSI_STATUS_GOOD || cmd->aborted || !cmd->op || !(cmd->op->flags & OP_WRITES_MEDIUM) ||
	    !cmd->started)
		return;
	scsi_fault_written_range(cmd->lu, cmd->lba, cmd->nblocks);
}
