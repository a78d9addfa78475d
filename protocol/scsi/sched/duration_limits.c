/*
 * Command priority and command duration limits (duration_limits.h).
 *
 * Rank (SAM-5 8.6, 8.7): HEAD OF QUEUE first, then COMMAND PRIORITY 1
 * (highest) to 15 (lowest), then commands without a priority (0).  The
 * priority is the I_T_L nexus's (SET PRIORITY, spc_priority.c) or else the
 * Control Extension page's INITIAL COMMAND PRIORITY; iSCSI carries none
 * per command (RFC 7143 11.3).
 *
 * Limits (SPC-6; the T2A/T2B descriptor a READ(16)/(32), WRITE(16)/(32) or
 * WRITE SCATTERED(16) names in its DLD field, spc_mode_cdl.c): max inactive
 * time counts from arrival until the command is processed (the medium took
 * it, or, without a latency model, its handler ran), max active time from
 * then until it completes, the duration guideline the whole.  One timer per
 * command fires at the next limit due; the policy of a limit that passes:
 *   0h complete-earliest: the command goes first from now on;
 *   1h continue-next-limit (guideline): descriptor k + 1's limits apply;
 *   2h continue-no-limit (guideline): no limits apply any more;
 *   Dh complete-unavailable: GOOD status with sense COMPLETED, 55h/0Ah DATA
 *      CURRENTLY UNAVAILABLE, no data;
 *   Eh abort-recovery (active): CHECK CONDITION, ABORTED COMMAND, 2Eh/03h
 *      COMMAND TIMEOUT DURING PROCESSING DUE TO ERROR RECOVERY;
 *   Fh abort: CHECK CONDITION, ABORTED COMMAND, 2Eh/01h COMMAND TIMEOUT
 *      BEFORE PROCESSING if it was not processed yet, else 2Eh/02h COMMAND
 *      TIMEOUT DURING PROCESSING.
 * (Linux scsi_check_sense maps all of these to BLK_STS_DURATION_LIMIT.)
 * A command a policy ends while it waits ends at once; one whose backend
 * I/O runs ends when the I/O returns (a running backend call cannot be
 * taken back).  A command waiting for its Data-Out ends when it has come.
 */
#include "sched/dispatch.h"
#include "sched/duration_limits.h"
#include "sched/task_set.h"
#include "sched/timer.h"
#include "spc/spc.h"

enum limit_kind { LIMIT_INACTIVE, LIMIT_ACTIVE, LIMIT_GUIDELINE };

uint8_t scsi_cmd_priority(const struct scsi_cmd *cmd)
{
	const struct scsi_lu *lu = cmd->lu;
	const struct scsi_itl *itl = scsi_itl_find(cmd->nexus, lu->lun);

	if (cmd->command_priority)
		return cmd->command_priority & 0x0f;
	if (itl && itl->priority)
		return itl->priority;
	return lu->mode_current.initial_priority;
}

static uint8_t rank(const struct scsi_cmd *cmd)
{
	uint8_t priority;

	if (cmd->task_attr == SCSI_TASK_HEAD_OF_QUEUE || (cmd->op->flags & OP_HEAD_OF_QUEUE))
		return 0;
	priority = scsi_cmd_priority(cmd);
	return priority ? priority : SCSI_SERVICE_LEVELS - 1;
}

/* The subpage of the page the command's DLD selects from (its RSOC CDLP and RWCDLP). */
static uint8_t limits_page(const struct scsi_cmd *cmd)
{
	bool t2;
	uint8_t cdlp = scsi_op_cdlp(cmd->op, cmd->lu, &t2);

	if (cdlp == 1)
		return t2 ? MODE_SUBPAGE_CDL_T2A : MODE_SUBPAGE_CDL_A;
	if (cdlp == 2)
		return t2 ? MODE_SUBPAGE_CDL_T2B : MODE_SUBPAGE_CDL_B;
	return 0;
}

/* The time by which the service queues should serve it: its first limit. */
static uint64_t first_deadline(const struct scsi_cmd *cmd)
{
	const struct scsi_cmd_limits *l = &cmd->limits;
	uint64_t limit = l->max_inactive_ns ? l->max_inactive_ns : l->guideline_ns ? l->guideline_ns : l->max_active_ns;

	return limit ? cmd->start_ns + limit : 0;
}

static uint64_t next_due(const struct scsi_cmd *cmd)
{
	const struct scsi_cmd_limits *l = &cmd->limits;
	uint64_t due = UINT64_MAX;

	if (!cmd->active_ns && l->max_inactive_ns && !l->inactive_missed && cmd->start_ns + l->max_inactive_ns < due)
		due = cmd->start_ns + l->max_inactive_ns;
	if (cmd->active_ns && l->max_active_ns && !l->active_missed && cmd->active_ns + l->max_active_ns < due)
		due = cmd->active_ns + l->max_active_ns;
	if (l->guideline_ns && !l->guideline_missed && cmd->start_ns + l->guideline_ns < due)
		due = cmd->start_ns + l->guideline_ns;
	return due;
}

static void limit_due(struct scsi_timer *t);

static void arm(struct scsi_cmd *cmd)
{
	struct scsi_device *dev = cmd->lu->dev;
	uint64_t due = next_due(cmd);

	if (due == UINT64_MAX || cmd->limits.ended || !scsi_timer_available(dev)) {
		scsi_timer_cancel(dev, &cmd->limit_timer);
		return;
	}
	cmd->limit_timer.fire = limit_due;
	scsi_timer_arm(dev, &cmd->limit_timer, due);
}

static void end_with(struct scsi_cmd *cmd, uint8_t key, uint16_t asc_ascq)
{
	cmd->limits.ended = true;
	cmd->limits.end_sense_key = key;
	cmd->limits.end_asc_ascq = asc_ascq;
}

static void apply(struct scsi_cmd *cmd, enum limit_kind kind, uint8_t policy)
{
	struct scsi_cmd_limits *l = &cmd->limits;
	struct scsi_cmd_limits next;

	scsi_stats_policy(cmd, policy);
	switch (policy) {
	case SPC_CDL_POLICY_CONTINUE_NEXT_LIMIT:
		if (kind == LIMIT_GUIDELINE && l->descriptor < 7 &&
		    spc_cdl_descriptor(cmd->lu, l->page, (uint8_t)(l->descriptor + 1), &next)) {
			next.inactive_missed = l->inactive_missed;
			next.active_missed = l->active_missed;
			next.named_page = l->named_page;
			next.named_descriptor = l->named_descriptor;
			next.guideline_passed = true;
			*l = next;
			break;
		}
		/* Past the last descriptor there is no next limit. */
		/* fall through */
	case SPC_CDL_POLICY_CONTINUE_NO_LIMIT:
		l->max_inactive_ns = l->max_active_ns = l->guideline_ns = 0;
		break;
	case SPC_CDL_POLICY_COMPLETE_UNAVAILABLE:
		end_with(cmd, SENSE_KEY_COMPLETED, ASC_DATA_CURRENTLY_UNAVAILABLE);
		break;
	case SPC_CDL_POLICY_ABORT_RECOVERY:
		end_with(cmd, SENSE_KEY_ABORTED_COMMAND, ASC_COMMAND_TIMEOUT_DURING_PROCESSING_DUE_TO_ERROR_RECOVERY);
		break;
	case SPC_CDL_POLICY_ABORT:
		end_with(cmd, SENSE_KEY_ABORTED_COMMAND,
			 cmd->active_ns ? ASC_COMMAND_TIMEOUT_DURING_PROCESSING : ASC_COMMAND_TIMEOUT_BEFORE_PROCESSING);
		break;
	default: /* SPC_CDL_POLICY_COMPLETE_EARLIEST */
		scsi_service_hurry(cmd);
		break;
	}
}

/* Applies the policies of the limits that have passed by now. */
static void check(struct scsi_cmd *cmd, uint64_t now)
{
	struct scsi_cmd_limits *l = &cmd->limits;

	/* continue-next-limit may bring limits that have passed too: at most one round per descriptor. */
	for (int round = 0; round < 8 && !l->ended; round++) {
		if (!cmd->active_ns && l->max_inactive_ns && !l->inactive_missed &&
		    now >= cmd->start_ns + l->max_inactive_ns) {
			l->inactive_missed = true;
			apply(cmd, LIMIT_INACTIVE, l->max_inactive_policy);
		} else if (cmd->active_ns && l->max_active_ns && !l->active_missed &&
			   now >= cmd->active_ns + l->max_active_ns) {
			l->active_missed = true;
			apply(cmd, LIMIT_ACTIVE, l->max_active_policy);
		} else if (l->guideline_ns && !l->guideline_missed && now >= cmd->start_ns + l->guideline_ns) {
			l->guideline_missed = true;
			l->guideline_passed = true;
			apply(cmd, LIMIT_GUIDELINE, l->guideline_policy);
		} else {
			break;
		}
	}
}

/* A policy ended the command: at once if nothing runs for it and its Data-Out is in. */
static bool ends_now(const struct scsi_cmd *cmd)
{
	return scsi_cmd_waiting(cmd) && cmd->state != SCSI_CMD_STATE_WAIT_BUFFER &&
	       cmd->state != SCSI_CMD_STATE_WAIT_DATA_OUT;
}

static void limit_due(struct scsi_timer *t)
{
	struct scsi_cmd *cmd = (struct scsi_cmd *)((char *)t - offsetof(struct scsi_cmd, limit_timer));

	check(cmd, scsi_device_now(cmd->lu->dev));
	if (cmd->limits.ended) {
		if (ends_now(cmd))
			scsi_cmd_complete(cmd);
		else
			scsi_service_hurry(cmd); /* its job, if it waits for a worker, goes first */
		return;
	}
	arm(cmd);
}

void scsi_limits_arrive(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	uint8_t dld = scsi_op_dld(cmd->op, cmd->cdb), page;

	cmd->service_level = rank(cmd);
	cmd->limits = (struct scsi_cmd_limits){ 0 };
	if (dld && (page = limits_page(cmd)) != 0 && spc_cdl_descriptor(lu, page, dld, &cmd->limits)) {
		cmd->limits.named_page = page;
		cmd->limits.named_descriptor = dld;
	}
	cmd->deadline_ns = first_deadline(cmd);
	arm(cmd);
}

bool scsi_limits_activate(struct scsi_cmd *cmd)
{
	uint64_t now = scsi_device_now(cmd->lu->dev);

	if (cmd->active_ns)
		return !cmd->limits.ended;
	check(cmd, now);
	cmd->active_ns = now ? now : 1;
	if (cmd->limits.ended)
		return false;
	arm(cmd);
	return true;
}

/* SPC-6 Command Duration Limits Statistics log page counters (struct scsi_cdl_descriptor_stats). */
static void count(struct scsi_lu *lu, const struct scsi_cmd_limits *l)
{
	struct scsi_cdl_descriptor_stats *st;

	if (l->named_page != MODE_SUBPAGE_CDL_T2A && l->named_page != MODE_SUBPAGE_CDL_T2B)
		return;
	st = &lu->cdl_stats[l->named_page == MODE_SUBPAGE_CDL_T2B][l->named_descriptor - 1];
	st->commands++;
	if (l->inactive_missed && l->active_missed)
		st->both_miss++;
	else if (l->inactive_missed)
		st->inactive_miss++;
	else if (l->active_missed)
		st->active_miss++;
}

void scsi_limits_done(struct scsi_cmd *cmd)
{
	struct scsi_cmd_limits *l = &cmd->limits;
	uint64_t now;

	scsi_timer_cancel(cmd->lu->dev, &cmd->limit_timer);
	if (!l->page)
		return;
	/* A limit passed while nothing could act on it (the I/O ran on): missed all the same. */
	now = scsi_device_now(cmd->lu->dev);
	if (l->max_inactive_ns && (cmd->active_ns ? cmd->active_ns : now) - cmd->start_ns > l->max_inactive_ns)
		l->inactive_missed = true;
	if (l->max_active_ns && cmd->active_ns && now - cmd->active_ns > l->max_active_ns)
		l->active_missed = true;
	if (l->ended && !cmd->aborted) {
		cmd->sense_info = sense_make(l->end_sense_key, l->end_asc_ascq);
		if (l->end_sense_key == SENSE_KEY_COMPLETED) {
			cmd->status = SCSI_STATUS_GOOD;
			cmd->data_in_len = 0;
		} else {
			cmd->status = SCSI_STATUS_CHECK_CONDITION;
		}
	}
	if (!cmd->aborted)
		count(cmd->lu, l);
}

bool scsi_limits_good_with_sense(const struct scsi_cmd *cmd)
{
	return cmd->limits.ended && cmd->status == SCSI_STATUS_GOOD;
}
