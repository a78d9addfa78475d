/*
 * One peer cannot make the event loop work long for others, nor hold
 * unbounded commands:
 * - a session that floods SCSI Command PDUs (far more than its CmdSN window)
 *   leaves another session's READ latency at interactive levels (RFC 7143
 *   3.2.2.1: commands beyond MaxCmdSN are ignored; lookups by ITT are O(1));
 * - immediate commands, which bypass the window, are bounded per session:
 *   past 16 unfinished ones a new one gets Reject reason 06h "Immediate
 *   command reject - too many immediate commands" (RFC 7143 11.17.1).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"
#include "itest_raw.h"

#define FLOOD 60000

static struct itest_daemon d;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The flooding session: FLOOD READ(10)s with consecutive CmdSNs and distinct ITTs, written as fast as possible. */
static void flood(struct itest_raw *c)
{
	enum { BATCH = 1000 };
	uint8_t *buf = malloc(BATCH * 48), cdb[10] = { 0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0 };

	for (int i = 0; i < FLOOD; i += BATCH) {
		for (int k = 0; k < BATCH; k++)
			itest_raw_scsi_cmd(c, buf + k * 48, 0, cdb, 10, true, false, 512);
		if (itest_raw_write(c->fd, buf, BATCH * 48) != 0)
			break;
	}
	free(buf);
}

int main(int argc, char **argv)
{
	struct itest_raw a = { .fd = -1 }, b = { .fd = -1 };
	struct iscsi_context *watch;
	uint8_t read16[16] = { 0x88, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0 };
	double worst = 0, t0;
	char err[256];
	pid_t child;
	int reads = 0, r2ts = 0, rejects06 = 0, other = 0;

	itest_init(argc, argv, "test_stall: floods and immediate commands do not stall other sessions");
	itest_daemon_up(&d, "stall", itest_default_config);
	watch = itest_session(&d, ITEST_INITIATOR_2, 0);
	if (!watch || itest_raw_login(&a, &d, ITEST_INITIATOR_1, ITEST_TARGET, false, true, false, err, sizeof(err)))
		return itest_finish();
	itest_raw_clear_ua(&a, 0);

	child = fork();
	if (child == 0) {
		flood(&a);
		_exit(0);
	}
	/* Meanwhile: READ(16) of one block from the other session, one after the other, for 3 s. */
	t0 = now_s();
	while (now_s() - t0 < 3.0) {
		struct itest_result r;
		double s = now_s();

		itest_cmd(watch, 0, read16, 16, ITEST_IN, NULL, 0, 512, &r);
		if (now_s() - s > worst)
			worst = now_s() - s;
		reads += itest_result_matches(&r, EXPECT_GOOD);
		itest_result_free(&r);
	}
	waitpid(child, NULL, 0);
	itest_note("%d READ(16)s from another session during a %d-command flood; slowest %.3f s", reads, FLOOD, worst);
	itest_ok(reads > 0 && worst < 2.0,
		 "RFC 7143 3.2.2.1: a session flooding commands beyond its window -> another session's READ within 2 s",
		 "%d READs, slowest %.3f s", reads, worst);
	itest_ok(itest_daemon_alive(&d), "the daemon survives the flood", "it died");
	itest_raw_close(&a);

	/* Immediate WRITE(10)s waiting for their Data-Out (InitialR2T=Yes, none sent): 16 are taken. */
	if (itest_raw_login(&b, &d, ITEST_INITIATOR_1, ITEST_TARGET, false, true, false, err, sizeof(err)) == 0) {
		uint8_t bhs[48], cdb[10] = { 0x2a, 0, 0, 0, 0x10, 0, 0, 0, 1, 0 };
		struct itest_pdu p;

		itest_raw_clear_ua(&b, 0);
		for (int i = 0; i < 40; i++) {
			itest_raw_scsi_cmd(&b, bhs, 0, cdb, 10, false, true, 512);
			bhs[0] |= 0x40; /* I: immediate */
			b.cmdsn--;      /* immediate commands do not advance CmdSN */
			itest_raw_send(&b, bhs, NULL, 0);
		}
		while (itest_raw_recv(&b, &p, 2000) == 1) {
			int op = p.bhs[0] & 0x3f;

			r2ts += op == RAW_OP_R2T;
			rejects06 += op == RAW_OP_REJECT && p.bhs[2] == 0x06;
			other += op != RAW_OP_R2T && !(op == RAW_OP_REJECT && p.bhs[2] == 0x06);
			itest_pdu_free(&p);
		}
		itest_ok(r2ts == 16 && rejects06 == 24 && other == 0,
			 "RFC 7143 11.17.1: 40 immediate WRITEs waiting for Data-Out -> 16 taken (R2T), 24 Reject reason 06h",
			 "%d R2Ts, %d Reject 06h, %d other PDUs", r2ts, rejects06, other);
		itest_raw_close(&b);
	}
	itest_close(watch);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
