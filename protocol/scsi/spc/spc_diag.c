/*
 * SEND DIAGNOSTIC (SPC-4 6.42), RECEIVE DIAGNOSTIC RESULTS (SPC-4 6.27) and
 * the self-tests (SPC-4 5.6), on the device's clock (sched/timer.h).
 *
 * SEND DIAGNOSTIC CDB: byte 1 SELF-TEST CODE (bits 7:5), PF (bit 4),
 * SELFTEST (bit 2), DEVOFFL (bit 1), UNITOFFL (bit 0); bytes 3-4 PARAMETER
 * LIST LENGTH.
 *   - SELFTEST = 1: the default self-test, at once; GOOD, or CHECK
 *     CONDITION, HARDWARE ERROR, LOGICAL UNIT FAILED SELF-TEST (3E/03);
 *   - SELF-TEST CODE 001b / 010b: a background short / extended self-test
 *     starts and the command completes; 101b / 110b: the same in the
 *     foreground, the command completing when the test does while every
 *     other command but INQUIRY, REPORT LUNS and REQUEST SENSE meets NOT
 *     READY, SELF-TEST IN PROGRESS (02/04/09, the core's progress gate);
 *     100b aborts a background self-test (result 1);
 *   - SELFTEST = 1 with a SELF-TEST CODE, a reserved code (011b, 111b), a
 *     parameter list with a self-test, abort with no background self-test
 *     -> 05/24/00 on the field; a parameter list with PF = 0 (vendor
 *     specific) -> 05/24/00 on PF;
 *   - while a background self-test runs, another self-test -> 02/04/09
 *     (the drives' manuals: Hitachi 15K450, Fujitsu MBA);
 *   - PF = 1 with a parameter list: a diagnostic page; only the Supported
 *     Diagnostic Pages page (00h) exists, for RECEIVE DIAGNOSTIC RESULTS
 *     PCV = 0 (sg_senddiag --list does this); another page -> 05/26/00.
 * DEVOFFL and UNITOFFL change nothing: the tests disturb nothing.
 *
 * The tests: segment 1 checks the "electronics" and always passes; segment
 * 2 reads the medium, and fails with the first block a medium-error fault
 * rule still holds bad (MEDIUM ERROR, UNRECOVERED READ ERROR, ADDRESS OF
 * FIRST FAILURE that block; result 6h: second segment failed).  A short
 * test takes SHORT_SELF_TEST_S, an extended one the EXTENDED SELF-TEST
 * COMPLETION TIME of the Control mode page.  Each test goes into the
 * Self-Test Results log page (10h), the most recent first, 20 kept: with
 * result Fh while it runs, then its result; REQUEST SENSE reports one
 * running as NOT READY, SELF-TEST IN PROGRESS with the progress
 * indication.  A LOGICAL UNIT RESET or power on ends a background test
 * with result 2h (spc_diag_abort).
 */
#include <string.h>

#include "sched/timer.h"
#include "spc/spc.h"

#define SHORT_SELF_TEST_S 2
#define EXTENDED_SELF_TEST_S 20 /* = the Control mode page's EXTENDED SELF-TEST COMPLETION TIME (spc_mode_pages.c) */
#define PROGRESS_TICK_NS 250000000ull

enum {
	ST_DEFAULT = 0,
	ST_BACKGROUND_SHORT = 1,
	ST_BACKGROUND_EXTENDED = 2,
	ST_ABORT = 4,
	ST_FOREGROUND_SHORT = 5,
	ST_FOREGROUND_EXTENDED = 6,
};

enum {
	ST_RESULT_OK = 0x0,
	ST_RESULT_ABORTED_BY_COMMAND = 0x1,
	ST_RESULT_ABORTED_OTHERWISE = 0x2,
	ST_RESULT_SECOND_SEGMENT_FAILED = 0x6,
	ST_RESULT_IN_PROGRESS = 0xf,
};

#define DIAG_PAGE_SUPPORTED 0x00

static uint16_t power_on_hours(const struct scsi_lu *lu)
{
	uint64_t h = spc_log_power_on_minutes(lu) / 60;

	return h > 0xffff ? 0xffff : (uint16_t)h;
}

/* A new most recent entry of the Self-Test Results log page. */
static struct spc_self_test_entry *log_push(struct scsi_lu *lu, uint8_t code, uint8_t result)
{
	struct spc_self_test_entry *e = lu->log->self_tests;

	memmove(e + 1, e, sizeof(*e) * (SPC_SELF_TEST_LOG_ENTRIES - 1));
	memset(e, 0, sizeof(*e));
	e->code = code;
	e->result = result;
	e->hours = power_on_hours(lu);
	e->first_failure = UINT64_MAX;
	lu->log->changes++;
	return e;
}

/* Runs the test's segments on e: its result. */
static void run_segments(struct scsi_lu *lu, struct spc_self_test_entry *e)
{
	uint64_t bad;

	e->result = ST_RESULT_OK;
	e->number = 0;
	if (scsi_fault_first_bad_block(lu, &bad)) {
		e->result = ST_RESULT_SECOND_SEGMENT_FAILED;
		e->number = 2;
		e->first_failure = bad;
		e->sense_key = SENSE_KEY_MEDIUM_ERROR;
		e->asc = ASC_UNRECOVERED_READ_ERROR >> 8;
		e->ascq = ASC_UNRECOVERED_READ_ERROR & 0xff;
	}
}

bool spc_diag_progress(const struct scsi_lu *lu, struct scsi_sense_info *s)
{
	const struct spc_self_test_run *st;
	uint64_t now, done;

	if (!lu->log || !lu->log->st.active)
		return false;
	st = &lu->log->st;
	now = scsi_device_now(lu->dev);
	done = now <= st->start_ns ? 0 : now - st->start_ns;
	*s = sense_not_ready_in_progress(ASC_LOGICAL_UNIT_NOT_READY_SELF_TEST_IN_PROGRESS,
					 done >= st->end_ns - st->start_ns ? 65535
									   : (uint16_t)(done * 65536 / (st->end_ns - st->start_ns)));
	return true;
}

/* The foreground test's progress for the core's NOT READY gate (lu->progress). */
static void publish_progress(struct scsi_lu *lu)
{
	struct scsi_sense_info s;

	if (spc_diag_progress(lu, &s))
		lu->progress.fraction = s.sks_field;
}

/* The test ends with result (ST_RESULT_IN_PROGRESS: run its segments now). */
static void finish(struct scsi_lu *lu, uint8_t result)
{
	struct spc_self_test_run *st = &lu->log->st;
	struct spc_self_test_entry *e = &lu->log->self_tests[0];
	struct scsi_cmd *cmd = st->cmd;

	scsi_timer_cancel(lu->dev, &st->timer);
	if (result == ST_RESULT_IN_PROGRESS)
		run_segments(lu, e);
	else
		e->result = result;
	st->active = false;
	st->cmd = NULL;
	if (st->foreground) {
		lu->progress.active = false;
		lu->progress.fraction = 0;
	}
	if (cmd) {
		if (e->result != ST_RESULT_OK)
			scsi_cmd_fail(cmd, sense_make(SENSE_KEY_HARDWARE_ERROR, ASC_LOGICAL_UNIT_FAILED_SELF_TEST));
		scsi_cmd_complete(cmd);
	}
}

static void self_test_timer_fire(struct scsi_timer *t)
{
	struct spc_self_test_run *st = (struct spc_self_test_run *)((char *)t - offsetof(struct spc_self_test_run, timer));
	struct scsi_lu *lu = st->lu;

	if (scsi_device_now(lu->dev) < st->end_ns) {
		publish_progress(lu);
		scsi_timer_arm(lu->dev, &st->timer, st->end_ns < scsi_device_now(lu->dev) + PROGRESS_TICK_NS
							     ? st->end_ns
							     : scsi_device_now(lu->dev) + PROGRESS_TICK_NS);
		return;
	}
	finish(lu, st->cmd && st->cmd->aborted ? ST_RESULT_ABORTED_OTHERWISE : ST_RESULT_IN_PROGRESS);
}

void spc_diag_abort(struct scsi_lu *lu)
{
	if (lu->log && lu->log->st.active && !lu->log->st.foreground)
		finish(lu, ST_RESULT_ABORTED_OTHERWISE);
}

enum scsi_result spc_send_diagnostic_parse(struct scsi_cmd *cmd)
{
	uint8_t b1 = cmd->cdb[1], code = b1 >> 5;
	bool pf = b1 & 0x10, selftest = b1 & 0x04;
	uint16_t len = get_be16(cmd->cdb + 3);

	if (code == 3 || code == 7 || (selftest && code != ST_DEFAULT))
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(1, 7));
	if (len && (selftest || code != ST_DEFAULT))
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(3, 7));
	if (len && !pf)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(1, 4));
	cmd->data_length = len;
	return SCSI_OK;
}

/* PF = 1 with a parameter list: the diagnostic page RECEIVE DIAGNOSTIC RESULTS PCV = 0 then returns. */
static enum scsi_result diag_page_sent(struct scsi_cmd *cmd)
{
	struct spc_log_state *log = cmd->lu->log;
	const uint8_t *p = scsi_cmd_data_out_contig(cmd);
	uint32_t len = cmd->data_out_len < cmd->data_length ? cmd->data_out_len : cmd->data_length;

	if (!p)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	if (len < 4)
		return scsi_cmd_fail(cmd, sense_parameter_list_length_error());
	if (p[0] != DIAG_PAGE_SUPPORTED)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(0, 7));
	if (4u + get_be16(p + 2) > len)
		return scsi_cmd_fail(cmd, sense_parameter_list_length_error());
	log->diag_page = p[0];
	log->diag_page_valid = true;
	return SCSI_OK;
}

enum scsi_result spc_send_diagnostic_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	struct spc_log_state *log = lu->log;
	struct spc_self_test_run *st;
	uint8_t code = cmd->cdb[1] >> 5;
	bool selftest = cmd->cdb[1] & 0x04;
	uint64_t now, secs;

	if (!log)
		return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
	st = &log->st;
	if (code == ST_ABORT) {
		if (!st->active || st->foreground)
			return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(1, 7));
		finish(lu, ST_RESULT_ABORTED_BY_COMMAND);
		return SCSI_OK;
	}
	if ((selftest || code != ST_DEFAULT) && st->active)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_NOT_READY, ASC_LOGICAL_UNIT_NOT_READY_SELF_TEST_IN_PROGRESS));
	if (selftest) {
		struct spc_self_test_entry *e = log_push(lu, ST_DEFAULT, ST_RESULT_IN_PROGRESS);

		run_segments(lu, e);
		if (e->result != ST_RESULT_OK)
			return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_HARDWARE_ERROR, ASC_LOGICAL_UNIT_FAILED_SELF_TEST));
		return SCSI_OK;
	}
	if (code == ST_DEFAULT)
		return cmd->data_length ? diag_page_sent(cmd) : SCSI_OK; /* PF = 0, nothing to test (SPC-4 6.42) */
	if (!scsi_timer_available(lu->dev)) {
		/* No clock to wait on: the test runs at once. */
		struct spc_self_test_entry *e = log_push(lu, code, ST_RESULT_IN_PROGRESS);

		run_segments(lu, e);
		if (e->result != ST_RESULT_OK && (code == ST_FOREGROUND_SHORT || code == ST_FOREGROUND_EXTENDED))
			return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_HARDWARE_ERROR, ASC_LOGICAL_UNIT_FAILED_SELF_TEST));
		return SCSI_OK;
	}
	secs = code == ST_BACKGROUND_SHORT || code == ST_FOREGROUND_SHORT ? SHORT_SELF_TEST_S : EXTENDED_SELF_TEST_S;
	now = scsi_device_now(lu->dev);
	log_push(lu, code, ST_RESULT_IN_PROGRESS);
	st->active = true;
	st->code = code;
	st->foreground = code == ST_FOREGROUND_SHORT || code == ST_FOREGROUND_EXTENDED;
	st->start_ns = now;
	st->end_ns = now + secs * 1000000000ull;
	st->lu = lu;
	st->timer.fire = self_test_timer_fire;
	st->cmd = NULL;
	if (!st->foreground) {
		scsi_timer_arm(lu->dev, &st->timer, st->end_ns);
		return SCSI_OK;
	}
	/* Foreground: the command waits; meanwhile the core's gate answers NOT READY, SELF-TEST IN PROGRESS. */
	st->cmd = cmd;
	lu->progress.active = true;
	lu->progress.asc_ascq = ASC_LOGICAL_UNIT_NOT_READY_SELF_TEST_IN_PROGRESS;
	lu->progress.fraction = 0;
	scsi_timer_arm(lu->dev, &st->timer, now + PROGRESS_TICK_NS);
	return SCSI_PENDING;
}

enum scsi_result spc_receive_diagnostic_results_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	bool pcv = cmd->cdb[1] & 0x01;
	uint8_t page = pcv ? cmd->cdb[2] : DIAG_PAGE_SUPPORTED;
	uint8_t *b;

	cmd->allocation_length = get_be16(cmd->cdb + 3);
	if (!lu->log)
		return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
	if (!pcv && lu->log->diag_page_valid)
		page = lu->log->diag_page;
	if (page != DIAG_PAGE_SUPPORTED)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, 7));
	/* Supported Diagnostic Pages (SPC-4 7.2.2): itself only. */
	b = scsi_cmd_alloc_data_in(cmd, 5);
	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	b[0] = DIAG_PAGE_SUPPORTED;
	put_be16(b + 2, 1);
	b[4] = DIAG_PAGE_SUPPORTED;
	scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	return SCSI_OK;
}
