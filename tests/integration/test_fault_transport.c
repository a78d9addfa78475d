/*
 * Fault rules that act on the connection and on task management
 * (docs/control.md, fault-add), seen by a libiscsi initiator:
 *  - drop-connection: the matching command gets no response and its
 *    connection is closed (RFC 7143 ErrorRecoveryLevel 0: the session ends
 *    with it); a new login works and the rule counts the firing;
 *  - reject-abort-task: the ABORT TASK naming a held command gets FUNCTION
 *    REJECTED (RFC 7143 11.6.1, response 255; SAM-5 7.1) and the command stays
 *    held; the next ABORT TASK (rule spent) gets FUNCTION COMPLETE;
 *  - ignore-abort-task: the ABORT TASK gets no response at all and the command
 *    stays held; the initiator's escalation, LOGICAL UNIT RESET, ends it
 *    (06/29/03 BUS DEVICE RESET FUNCTION OCCURRED after it, SAM-5 7.7).
 *
 * Environment: SBCEMUCTL (the sbcemuctl binary; CMake sets it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"

static const char config[] = "[lun \"" ITEST_TARGET "\" 0]\n"
			     "path = @DIR@/lun0.img\nsize = 16M\n";

static struct itest_daemon d;
static struct iscsi_context *s;
static char out[8192];

static bool ctl_ok(const char *args, const char *name)
{
	return itest_ctl_expect(&d, out, sizeof(out), 0, args, name);
}

static long long held_now(void)
{
	return itest_ctl(&d, out, sizeof(out), "--json fault list") == 0 ? itest_json_num(out, "held") : -1;
}

static struct iscsi_context *new_session(void)
{
	struct iscsi_context *n = itest_session(&d, ITEST_INITIATOR_1, 0);

	if (n)
		itest_clear_ua(n, 0);
	return n;
}

/* ---- drop-connection ---- */

static void test_drop_connection(void)
{
	uint8_t tur[6] = { 0 };
	struct itest_result r;

	if (!ctl_ok("fault add 0 drop-connection --opcode 0x00 --count 1",
		    "sbcemuctl fault add 0 drop-connection --opcode 0x00 --count 1 -> exit 0"))
		return;
	itest_cmd(s, 0, tur, 6, ITEST_NONE, NULL, 0, 0, &r);
	itest_ok(!r.transport_ok, "drop-connection: TEST UNIT READY gets no response, the connection is closed", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	itest_close(s);
	ctl_ok("--json fault list", "sbcemuctl --json fault list -> exit 0");
	itest_ok(itest_json_num(out, "fired") == 1 && itest_json_num(out, "held") == 0,
		 "drop-connection: the rule fired once and holds nothing (the drop aborted the command)", "%.300s", out);
	s = new_session();
	if (!s)
		return;
	itest_expect_cmd(s, 0, "after the drop: a new session's TEST UNIT READY -> GOOD (rule spent)", tur, 6, ITEST_NONE,
			 NULL, 0, 0, EXPECT_GOOD, NULL);
	ctl_ok("fault remove all", "sbcemuctl fault remove all (drop-connection rule) -> exit 0");
}

/* ---- ABORT TASK rejected or lost ---- */

/* Sends READ(10) LBA 10 asynchronously and checks that the hold rule holds it. */
static struct scsi_task *held_read(struct itest_async *a, const char *what)
{
	struct scsi_task *task;
	char name[200];

	memset(a, 0, sizeof(*a));
	task = iscsi_read10_task(s, 0, 10, 512, 512, 0, 0, 0, 0, 0, itest_async_cmd_cb, a);
	snprintf(name, sizeof(name), "%s: asynchronous READ(10) LBA 10 sent", what);
	if (!itest_ok(task != NULL, name, "%s", iscsi_get_error(s)))
		return NULL;
	itest_service(s, 500, &a->done);
	snprintf(name, sizeof(name), "%s: the READ(10) is held (no answer, fault list \"held\": 1)", what);
	itest_ok(!a->done && held_now() == 1, name, "done %d, %.300s", a->done, out);
	return task;
}

/* Sends ABORT TASK for task and waits up to ms for its response. */
static void abort_task(struct scsi_task *task, struct itest_async *t, int ms)
{
	memset(t, 0, sizeof(*t));
	if (iscsi_task_mgmt_abort_task_async(s, task, itest_async_tmf_cb, t) != 0)
		itest_note("ABORT TASK not sent: %s", iscsi_get_error(s));
	else
		itest_service(s, ms, &t->done);
}

static void finish_read(struct scsi_task *task, struct itest_async *a)
{
	if (!a->done)
		iscsi_scsi_cancel_task(s, task); /* libiscsi's copy: itest_async_cmd_cb runs with SCSI_STATUS_CANCELLED */
	if (a->done)
		scsi_free_scsi_task(task);
}

static void test_reject_abort_task(void)
{
	struct itest_async a, t;
	struct scsi_task *task;

	if (!ctl_ok("fault add 0 hold --opcode 0x28 --count 1", "sbcemuctl fault add 0 hold --opcode 0x28 -> exit 0") ||
	    !ctl_ok("fault add 0 reject-abort-task --opcode 0x28 --count 1",
		    "sbcemuctl fault add 0 reject-abort-task --opcode 0x28 --count 1 -> exit 0"))
		return;
	task = held_read(&a, "reject-abort-task");
	if (!task)
		return;
	abort_task(task, &t, 5000);
	itest_ok(t.done && t.status == SCSI_STATUS_GOOD && t.response == ISCSI_TMR_FUNC_REJECTED,
		 "reject-abort-task: ABORT TASK of the held READ(10) -> FUNCTION REJECTED (255)",
		 "%s, status 0x%x, response %u", t.done ? "answered" : "no answer in 5 s", t.status, t.response);
	itest_ok(!a.done && held_now() == 1, "reject-abort-task: the READ(10) is still held after the rejection",
		 "done %d, %.300s", a.done, out);
	abort_task(task, &t, 5000);
	itest_ok(t.done && t.status == SCSI_STATUS_GOOD && t.response == ISCSI_TMR_FUNC_COMPLETE,
		 "reject-abort-task spent: the second ABORT TASK -> FUNCTION COMPLETE", "%s, status 0x%x, response %u",
		 t.done ? "answered" : "no answer in 5 s", t.status, t.response);
	itest_ok(held_now() == 0, "after the second ABORT TASK: fault list shows \"held\": 0", "%.300s", out);
	finish_read(task, &a);
	ctl_ok("fault remove all", "sbcemuctl fault remove all (hold, reject-abort-task) -> exit 0");
}

static void test_ignore_abort_task(void)
{
	uint8_t tur[6] = { 0 };
	struct itest_async a, t, reset;
	struct scsi_task *task;

	if (!ctl_ok("fault add 0 hold --opcode 0x28 --count 1", "sbcemuctl fault add 0 hold --opcode 0x28 -> exit 0") ||
	    !ctl_ok("fault add 0 ignore-abort-task --opcode 0x28",
		    "sbcemuctl fault add 0 ignore-abort-task --opcode 0x28 -> exit 0"))
		return;
	task = held_read(&a, "ignore-abort-task");
	if (!task)
		return;
	abort_task(task, &t, 2000);
	itest_ok(!t.done, "ignore-abort-task: ABORT TASK of the held READ(10) gets no response in 2 s",
		 "answered: status 0x%x, response %u", t.status, t.response);
	itest_ok(held_now() == 1, "ignore-abort-task: the READ(10) is still held", "%.300s", out);
	memset(&reset, 0, sizeof(reset));
	if (iscsi_task_mgmt_lun_reset_async(s, 0, itest_async_tmf_cb, &reset) == 0)
		itest_service(s, 5000, &reset.done);
	itest_ok(reset.done && reset.status == SCSI_STATUS_GOOD && reset.response == ISCSI_TMR_FUNC_COMPLETE,
		 "ignore-abort-task: the escalation, LOGICAL UNIT RESET -> FUNCTION COMPLETE",
		 "%s, status 0x%x, response %u", reset.done ? "answered" : "no answer in 5 s", reset.status,
		 reset.response);
	itest_ok(held_now() == 0, "after LOGICAL UNIT RESET: fault list shows \"held\": 0 (the READ(10) ended)",
		 "%.300s", out);
	finish_read(task, &a);
	itest_expect_cmd(s, 0, "after LOGICAL UNIT RESET: TEST UNIT READY -> 06/29/03", tur, 6, ITEST_NONE, NULL, 0, 0,
			 EXPECT_SENSE(6, 0x29, 0x03), NULL);
	ctl_ok("--json fault list", "sbcemuctl --json fault list -> exit 0");
	itest_ok(strstr(out, "\"ignore-abort-task\"") && itest_json_num(out, "fired") >= 1,
		 "fault list shows the ignore-abort-task rule with its firing", "%.300s", out);
	ctl_ok("fault remove all", "sbcemuctl fault remove all (hold, ignore-abort-task) -> exit 0");
}

int main(int argc, char **argv)
{
	itest_init(argc, argv, "test_fault_transport: drop-connection, reject-abort-task, ignore-abort-task");
	itest_daemon_up(&d, "fault-transport", config);
	s = new_session();
	if (!s)
		return itest_finish();
	test_drop_connection();
	if (s) {
		test_reject_abort_task();
		test_ignore_abort_task();
		itest_close(s);
	}
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
