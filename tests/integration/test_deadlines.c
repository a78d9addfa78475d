/*
 * Priority and deadlines end to end, on the real clock (docs/latency.md):
 * an LU with a slow fixed latency model (reads 2 ms, writes 25 ms, one at a
 * time) and command duration limits (command_duration_limits = t2).
 *
 *   - the Command Duration Limit T2A page (SPC-6, 0Ah/07h) through MODE
 *     SENSE(10) / MODE SELECT(10): changeable mask, bad values refused with
 *     05/26/00 and nothing changed, saved with SP = 1 and kept across a
 *     restart of the daemon;
 *   - CDL-tagged reads (DLD 1: max inactive time 200 ms, abort) beside a
 *     queue of untagged background writes on the same LU are served first
 *     and never aborted, while an untagged read waits its turn behind the
 *     writes;
 *   - a max active time set too short gets its policy's outcome: abort,
 *     CHECK CONDITION 0B/2E/02; complete-unavailable, GOOD with sense
 *     0F/55/0A (seen on a raw iSCSI session: libiscsi drops sense data
 *     that comes with GOOD, as Linux's initiator does);
 *   - SET PRIORITY (SPC-4 6.44) lets a second initiator's untagged read go
 *     before the first one's queued writes;
 *   - sbcemuctl stats counts what the limits did, lu latency changes the
 *     model at run time.
 * Outcomes, not wall-clock times, are asserted where the clock could make a
 * busy machine fail the test: the limits leave hundreds of milliseconds of
 * margin.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "itest_raw.h"

#define BS 512u
#define WRITES 12
#define WRITE_MS 25

static const char config[] =
	"[iscsi]\n"
	"nop_in_interval = 0\n"
	"\n"
	"[target \"" ITEST_TARGET "\"]\n"
	"\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = lun0.img\n"
	"size = 64M\n"
	"latency = fixed read_us=2000 write_us=25000 servers=1\n"
	"command_duration_limits = t2\n";

static struct itest_daemon d;
static uint8_t wbuf[WRITES][8 * BS];

/* READ(16) or WRITE(16) of 8 blocks with DURATION LIMIT DESCRIPTOR dld (SBC-4; Linux sd_setup_rw16_cmnd). */
static void rw16(uint8_t *cdb, bool write, uint64_t lba, uint8_t dld)
{
	memset(cdb, 0, 16);
	cdb[0] = write ? 0x8a : 0x88;
	cdb[1] = (dld >> 2) & 0x01;
	itest_put_be64(cdb + 2, lba);
	itest_put_be32(cdb + 10, 8);
	cdb[14] = (uint8_t)((dld & 0x03) << 6);
}

struct job {
	struct scsi_task *task;
	struct itest_async a;
	uint64_t sent_ms, done_ms;
};

static void job_cb(struct iscsi_context *iscsi, int status, void *command_data, void *priv)
{
	struct job *j = priv;

	(void)command_data;
	itest_async_cmd_cb(iscsi, status, command_data, &j->a);
	j->done_ms = itest_now_ms();
}

static bool job_send(struct iscsi_context *s, struct job *j, bool write, uint64_t lba, uint8_t dld, void *buf)
{
	uint8_t cdb[16];
	struct iscsi_data data = { .size = 8 * BS, .data = buf };

	rw16(cdb, write, lba, dld);
	memset(j, 0, sizeof(*j));
	j->task = scsi_create_task(16, cdb, write ? SCSI_XFER_WRITE : SCSI_XFER_READ, 8 * BS);
	j->sent_ms = itest_now_ms();
	return j->task && iscsi_scsi_command_async(s, 0, j->task, job_cb, write ? &data : NULL, j) == 0;
}

static void job_free(struct job *j)
{
	if (j->task)
		scsi_free_scsi_task(j->task);
	j->task = NULL;
}

/* Runs both sessions' event loops until every job of list (n of them) is done or ms pass (n = 0: for ms). */
static bool serve(struct iscsi_context *a, struct iscsi_context *b, struct job **list, int n, int ms)
{
	uint64_t end = itest_now_ms() + (uint64_t)ms;

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = iscsi_get_fd(a), .events = (short)iscsi_which_events(a) },
			{ .fd = iscsi_get_fd(b), .events = (short)iscsi_which_events(b) },
		};
		bool all = true;

		for (int i = 0; i < n; i++)
			all &= list[i]->a.done;
		if (all && n)
			return true;
		if (itest_now_ms() >= end)
			return !n;
		if (poll(p, 2, 20) < 0)
			return false;
		if (iscsi_service(a, p[0].revents) < 0 || iscsi_service(b, p[1].revents) < 0)
			return false;
	}
}

/* MODE SENSE(10) of Command Duration Limit T2A (DBD = 1, as cdladm reads it) with page control pc. */
static bool sense_t2a(struct iscsi_context *s, int pc, struct itest_result *r)
{
	uint8_t cdb[10] = { 0x5a, 0x08, (uint8_t)(pc << 6 | 0x0a), 0x07, 0, 0, 0, 0x02, 0x00, 0 };

	itest_cmd(s, 0, cdb, 10, ITEST_IN, NULL, 0, 512, r);
	return r->status == 0 && r->data_len == 8 + 232;
}

/* MODE SELECT(10) PF = 1 of T2A with descriptor k's bytes d (32); returns the outcome. */
static void select_t2a(struct iscsi_context *s, unsigned k, const uint8_t *desc, bool save, struct itest_result *r)
{
	struct itest_result cur = { 0 };
	uint8_t list[8 + 232], cdb[10] = { 0x55, (uint8_t)(0x10 | (save ? 1 : 0)), 0, 0, 0, 0, 0, 0, 240, 0 };

	memset(list, 0, sizeof(list));
	if (sense_t2a(s, 0, &cur))
		memcpy(list, cur.data, sizeof(list));
	itest_result_free(&cur);
	list[0] = list[1] = list[3] = 0;
	list[8] &= 0x7f;
	memcpy(list + 8 + 8 + 32 * (k - 1), desc, 32);
	itest_cmd(s, 0, cdb, 10, ITEST_OUT, list, sizeof(list), 0, r);
}

/* A T2 descriptor (SPC-6; cdl-tools cdl_scsi_write_page). */
static void t2(uint8_t *x, uint8_t units, uint16_t inactive, uint16_t active, uint8_t policies)
{
	memset(x, 0, 32);
	x[0] = units;
	itest_put_be16(x + 2, inactive);
	itest_put_be16(x + 4, active);
	x[6] = policies;
}

static void mode_pages(struct iscsi_context *s)
{
	struct itest_result r = { 0 };
	uint8_t desc[32];

	if (itest_ok(sense_t2a(s, 1, &r), "MODE SENSE(10) 0Ah/07h changeable: the T2A page (232 bytes)", "%s",
		     itest_result_str(&r))) {
		itest_ok(r.data[8 + 8] == 0x0f && r.data[8 + 8 + 6] == 0xff && r.data[8 + 7] == 0xf0,
			 "T2A changeable mask: T2CDLUNITS, both policies, PERF VS DURATION GUIDELINE",
			 "%02x %02x %02x", r.data[16], r.data[22], r.data[15]);
	}
	itest_result_free(&r);
	/* DLD 1: max inactive time 20 x 10 ms, abort; DLD 3: max active time 1 us... 1000 us, abort. */
	t2(desc, 0x0a, 20, 0, 0xf0);
	select_t2a(s, 1, desc, true, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD), "MODE SELECT(10) SP=1: T2A descriptor 1 (200 ms, abort)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	t2(desc, 0x08, 0, 1000, 0x0f);
	select_t2a(s, 3, desc, true, &r);
	itest_result_free(&r);
	t2(desc, 0x08, 0, 1000, 0x0d);
	select_t2a(s, 4, desc, true, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD), "MODE SELECT(10): descriptors 3 and 4 (active 1 ms)", "%s",
		 itest_result_str(&r));
	itest_result_free(&r);
	/* SPC-6: abort-recovery (Eh) is for the max active time only: 05/26/00 at the policy byte, nothing changes. */
	t2(desc, 0x0a, 20, 0, 0xe0);
	select_t2a(s, 2, desc, false, &r);
	itest_ok(itest_result_matches(&r, EXPECT_SENSE(5, 0x26, 0x00)) &&
			 itest_expect_field_pointer("... field pointer at the policy byte", &r, 0, 8 + 8 + 32 + 6, -1),
		 "MODE SELECT(10) T2A inactive policy Eh -> 05/26/00", "%s", itest_result_str(&r));
	itest_result_free(&r);
	if (sense_t2a(s, 0, &r))
		itest_ok(r.data[8 + 8 + 32] == 0 && r.data[8 + 8 + 32 + 6] == 0, "... and descriptor 2 is unchanged",
			 "%02x %02x", r.data[48], r.data[54]);
	itest_result_free(&r);
}

/* The saved T2A page after a restart of the daemon (SPC-4 6.14: saved values are the current ones at power on). */
static void saved_across_restart(void)
{
	struct iscsi_context *s;
	struct itest_result r = { 0 };

	itest_daemon_stop(&d, SIGTERM);
	if (!itest_ok(itest_daemon_start(&d) == 0, "daemon restarted", "see the log"))
		return;
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s)
		return;
	if (sense_t2a(s, 0, &r))
		itest_ok(r.data[16] == 0x0a && itest_get_be16(r.data + 18) == 20 && r.data[22] == 0xf0,
			 "T2A descriptor 1 saved across a restart", "%02x %u %02x", r.data[16], itest_get_be16(r.data + 18),
			 r.data[22]);
	itest_result_free(&r);
	itest_close(s);
}

/* Reads with limits beside a queue of writes: served first, never aborted; an untagged read waits behind them. */
static void tagged_reads_first(struct iscsi_context *writer, struct iscsi_context *reader)
{
	static struct job w[WRITES], tagged[4], plain;
	struct job *all[WRITES + 5];
	uint8_t rbuf[8 * BS];
	int n = 0, good = 0;
	uint64_t worst = 0;

	(void)rbuf;
	for (int i = 0; i < WRITES; i++) {
		itest_pattern(wbuf[i], sizeof(wbuf[i]), (uint32_t)i);
		job_send(writer, &w[i], true, 4096 + 64 * (uint64_t)i, 0, wbuf[i]);
		all[n++] = &w[i];
	}
	serve(writer, reader, all, 0, 30); /* the writes are in the queue */
	job_send(reader, &plain, false, 64, 0, NULL);
	all[n++] = &plain;
	for (int i = 0; i < 4; i++) {
		struct job *one[1] = { &tagged[i] };

		job_send(reader, &tagged[i], false, 128 + 16 * (uint64_t)i, 1, NULL);
		serve(writer, reader, one, 1, 5000);
		all[n++] = &tagged[i];
		good += tagged[i].a.done && tagged[i].a.status == SCSI_STATUS_GOOD;
		if (tagged[i].done_ms - tagged[i].sent_ms > worst)
			worst = tagged[i].done_ms - tagged[i].sent_ms;
	}
	itest_ok(good == 4, "4 READ(16) with DLD 1 beside 12 queued 25 ms writes: all GOOD, none aborted (SPC-6)",
		 "%d GOOD", good);
	itest_note("tagged reads: worst %llu ms", (unsigned long long)worst);
	itest_ok(!plain.a.done, "... ahead of an untagged read sent before them", "the untagged read is done");
	serve(writer, reader, all, n, 10000);
	itest_ok(plain.a.done && plain.a.status == SCSI_STATUS_GOOD &&
			 plain.done_ms - plain.sent_ms >= (WRITES / 2) * WRITE_MS,
		 "... which waits behind the writes (arrival order among commands without limits)", "%llu ms",
		 (unsigned long long)(plain.done_ms - plain.sent_ms));
	for (int i = 0; i < n; i++)
		job_free(all[i]);
}

/* The max active time of DLD 3 (abort) and DLD 4 (complete-unavailable) is shorter than a read takes. */
static void too_short(struct iscsi_context *s)
{
	struct itest_raw c;
	uint8_t cdb[16], bhs[48];
	struct itest_pdu p;
	struct itest_result r = { 0 };
	bool seen = false;
	char err[256];

	rw16(cdb, false, 0, 3);
	itest_expect_cmd(s, 0, "READ(16) DLD 3 (max active 1 ms, abort) -> 0B/2E/02 COMMAND TIMEOUT DURING PROCESSING",
			 cdb, 16, ITEST_IN, NULL, 0, 8 * BS, EXPECT_SENSE(0x0b, 0x2e, 0x02), &r);
	itest_result_free(&r);
	if (!itest_ok(itest_raw_login(&c, &d, "iqn.2026-12.org.sbcemu:itest-raw", ITEST_TARGET, false, false, true, err,
				      sizeof(err)) == 0,
		      "raw session", "%s", err))
		return;
	itest_raw_clear_ua(&c, 0);
	rw16(cdb, false, 0, 4);
	itest_raw_scsi_cmd(&c, bhs, 0, cdb, 16, true, false, 8 * BS);
	itest_raw_send(&c, bhs, NULL, 0);
	while (!seen && itest_raw_recv(&c, &p, 5000) == 1) {
		if ((p.bhs[0] & 0x3f) == RAW_OP_SCSI_RSP) {
			struct itest_sense sn;

			seen = true;
			itest_parse_sense(&sn, p.data_len > 2 ? p.data + 2 : p.data, p.data_len > 2 ? (int)p.data_len - 2 : 0);
			itest_ok(p.bhs[3] == 0 && sn.key == 0x0f && sn.asc == 0x55 && sn.ascq == 0x0a,
				 "READ(16) DLD 4 (max active 1 ms, complete-unavailable) -> GOOD with sense 0F/55/0A",
				 "status %02x sense %x/%02x/%02x", p.bhs[3], sn.key, sn.asc, sn.ascq);
		} else if ((p.bhs[0] & 0x3f) == RAW_OP_DATA_IN) {
			itest_ok(false, "... and no data", "a Data-In PDU came");
		}
		itest_pdu_free(&p);
	}
	itest_ok(seen, "... answered", "no SCSI Response");
	itest_raw_close(&c);
}

/* SET PRIORITY 1 on the second I_T nexus: its untagged read goes before the first one's queued writes. */
static void set_priority_first(struct iscsi_context *writer, struct iscsi_context *reader)
{
	static struct job w[WRITES], hi;
	struct job *all[WRITES + 1], *one[1] = { &hi };
	uint8_t cdb[12] = { 0xa4, 0x0e, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0 }, list[8] = { 1 };
	struct itest_result r = { 0 };
	int n = 0, writes_done = 0;

	itest_expect_cmd(reader, 0, "SET PRIORITY 1 on this I_T_L nexus", cdb, 12, ITEST_OUT, list, 8, 0, EXPECT_GOOD,
			 &r);
	itest_result_free(&r);
	for (int i = 0; i < WRITES; i++) {
		job_send(writer, &w[i], true, 8192 + 64 * (uint64_t)i, 0, wbuf[i]);
		all[n++] = &w[i];
	}
	serve(writer, reader, all, 0, 30);
	job_send(reader, &hi, false, 512, 0, NULL);
	serve(writer, reader, one, 1, 5000);
	for (int i = 0; i < WRITES; i++)
		writes_done += w[i].a.done;
	itest_ok(hi.a.done && hi.a.status == SCSI_STATUS_GOOD && writes_done <= 3,
		 "the read of the higher-priority nexus went before the queued writes (SAM-5 8.7)", "%d writes done first",
		 writes_done);
	all[n++] = &hi;
	serve(writer, reader, all, n, 10000);
	for (int i = 0; i < n; i++)
		job_free(all[i]);
}

static void control(void)
{
	char out[8192];

	if (itest_ctl_expect(&d, out, sizeof(out), 0, "--json stats", "sbcemuctl stats"))
		itest_ok(strstr(out, "\"page\": \"T2A\"") && strstr(out, "\"descriptor\": 3") &&
				 strstr(out, "\"abort\": 1") && strstr(out, "\"complete-unavailable\": 1") &&
				 strstr(out, "\"good_with_sense\": 1"),
			 "stats: T2A descriptors 3 and 4, one abort, one complete-unavailable, one GOOD with sense",
			 "%.300s", out);
	itest_ctl_expect(&d, out, sizeof(out), 0, "lu latency 0 none", "sbcemuctl lu latency 0 none");
	itest_ok(strstr(out, "none") != NULL, "... says the model is none", "%s", out);
	itest_ctl_expect(&d, out, sizeof(out), 1, "lu latency 0 \"fixed read_us=1 bogus=2\"",
			 "sbcemuctl lu latency with a key the model does not have is refused");
	itest_ctl_expect(&d, out, sizeof(out), 1, "lu latency 0 \"distribution mean_us=100 p99_us=50\"",
			 "... and a p99 below the mean");
}

int main(int argc, char **argv)
{
	struct iscsi_context *a, *b;

	itest_init(argc, argv, "test_deadlines");
	itest_daemon_up(&d, "deadlines", config);
	a = itest_session(&d, ITEST_INITIATOR_1, 0);
	b = itest_session(&d, ITEST_INITIATOR_2, 0);
	if (a && b) {
		mode_pages(a);
		itest_clear_ua(b, 0);
		tagged_reads_first(a, b);
		too_short(b);
		set_priority_first(a, b);
		control();
	}
	itest_close(a);
	itest_close(b);
	saved_across_restart();
	itest_daemon_cleanup(&d);
	return itest_finish();
}
