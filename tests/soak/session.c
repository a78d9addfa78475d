/*
 * The soak's sessions: libiscsi contexts logged in through the harness
 * (itest_connect), driven through libiscsi's asynchronous API and our own
 * poll loop so that every command has a deadline (the hang check) and a
 * WRITE can be left in flight on purpose (ABORT TASK, a dropped connection,
 * a kill -9).
 *
 * Session i always logs in as SOAK_INITIATOR<i> with the same ISID, so a
 * login after a dropped connection reinstates the session (RFC 7143 6.3.5):
 * the target must end the old session's tasks before the new session runs.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "soak.h"

struct tmf_wait {
	bool done;
	int status;
	uint32_t response;
};

/* Per session; libiscsi may still call back into them when a context is destroyed. */
static struct tmf_wait tmf_waits[SOAK_MAX_SESSIONS];

static void task_cb(struct iscsi_context *ctx, int status, void *data, void *priv)
{
	struct inflight *f = priv;

	(void)ctx;
	(void)data;
	f->done = true;
	f->status = status;
}

static void tmf_cb(struct iscsi_context *ctx, int status, void *data, void *priv)
{
	struct tmf_wait *w = priv;

	(void)ctx;
	w->done = true;
	w->status = status;
	if (status == SCSI_STATUS_GOOD && data)
		w->response = *(uint32_t *)data;
}

/* Services the context until *done, the deadline, or a connection error. */
static enum wait_rc service_until(struct soak_sess *s, const bool *done, uint64_t timeout_ms)
{
	uint64_t end = itest_now_ms() + timeout_ms;

	while (!*done) {
		struct pollfd p = { .fd = s->ctx ? iscsi_get_fd(s->ctx) : -1 };
		uint64_t now = itest_now_ms();
		int n;

		if (p.fd < 0)
			return W_LOST;
		if (now >= end)
			return W_TIMEOUT;
		p.events = (short)iscsi_which_events(s->ctx);
		n = poll(&p, 1, (int)(end - now < 100 ? end - now : 100));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || iscsi_service(s->ctx, n > 0 ? p.revents : 0) < 0)
			return W_LOST;
	}
	return W_DONE;
}

/* ---- commands ---- */

int inflight_submit(struct soak_sess *s, struct inflight *f, int lun, const uint8_t *cdb, int cdb_len, int dir,
		    uint8_t *buf, uint32_t len)
{
	struct iscsi_data d = { .size = len, .data = buf };
	uint8_t c[16] = { 0 };

	memset(f, 0, sizeof(*f));
	memcpy(c, cdb, (size_t)cdb_len);
	f->task = scsi_create_task(cdb_len, c, dir, (int)len);
	if (!f->task) {
		free(buf);
		return -1;
	}
	f->buf = buf;
	f->busy = true;
	if (iscsi_scsi_command_async(s->ctx, lun, f->task, task_cb, dir == SCSI_XFER_WRITE && len ? &d : NULL, f)) {
		scsi_free_scsi_task(f->task);
		free(buf);
		memset(f, 0, sizeof(*f));
		return -1;
	}
	return 0;
}

enum wait_rc inflight_wait(struct soak_sess *s, struct inflight *f, uint64_t timeout_ms)
{
	enum wait_rc rc = service_until(s, &f->done, timeout_ms);

	if (rc != W_DONE)
		return rc;
	if (f->status == SCSI_STATUS_TIMEOUT)
		return W_TIMEOUT;
	if ((unsigned)f->status >= 0x100)
		return W_LOST;
	return W_DONE;
}

/* Only once libiscsi holds no reference to the task or its buffer. */
static void inflight_forget(struct inflight *f)
{
	if (!f->busy)
		return;
	scsi_free_scsi_task(f->task);
	free(f->buf);
	memset(f, 0, sizeof(*f));
}

/* Sends what is queued (Data-Out PDUs point into our buffers). */
enum wait_rc sess_flush_rc(struct soak_sess *s, unsigned ms)
{
	uint64_t end = itest_now_ms() + ms;

	while (s->ctx && iscsi_out_queue_length(s->ctx) > 0) {
		struct pollfd p = { .fd = iscsi_get_fd(s->ctx), .events = POLLOUT | POLLIN };
		int n;

		if (p.fd < 0)
			return W_LOST;
		if (itest_now_ms() >= end)
			return W_TIMEOUT;
		n = poll(&p, 1, 50);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || iscsi_service(s->ctx, n > 0 ? p.revents : 0) < 0)
			return W_LOST;
	}
	return s->ctx ? W_DONE : W_LOST;
}

/*
 * Ends a command libiscsi may still hold: queued PDUs are sent first (they
 * read our buffer), then the task is cancelled locally.  If the target
 * does not take the queued PDUs, that is a hang; the context is destroyed
 * so that nothing points into freed memory.
 */
void inflight_release(struct soak_sess *s, struct inflight *f)
{
	enum wait_rc rc;

	if (!f->busy)
		return;
	if (s->ctx) {
		rc = sess_flush_rc(s, soak.o.op_timeout * 1000u);
		if (rc == W_TIMEOUT)
			report_hang("session %d: the target has not read queued PDUs for %u s", s->idx, soak.o.op_timeout);
		if (rc != W_DONE) {
			iscsi_destroy_context(s->ctx);
			s->ctx = NULL;
		} else if (!f->done) {
			iscsi_scsi_cancel_task(s->ctx, f->task);
		}
	}
	inflight_forget(f);
}

static void take_result(const struct inflight *f, struct cmd_res *r)
{
	const struct scsi_task *t = f->task;

	r->status = t->status;
	if (t->status == SCSI_STATUS_CHECK_CONDITION && t->datain.size >= 2) {
		int slen = itest_get_be16(t->datain.data);

		if (slen > t->datain.size - 2)
			slen = t->datain.size - 2;
		itest_parse_sense(&r->sense, t->datain.data + 2, slen);
	} else {
		r->data = t->datain.data;
		r->data_len = t->datain.size;
	}
}

/* One command on s->cmd; buf (malloc'd, Data-Out) is the command's.  End with sess_cmd_end(). */
void sess_cmd(struct soak_sess *s, int lun, const uint8_t *cdb, int cdb_len, int dir, uint8_t *buf, uint32_t len,
	      struct cmd_res *r)
{
	struct inflight *f = &s->cmd;

	memset(r, 0, sizeof(*r));
	r->status = -1;
	r->sense.key = r->sense.asc = r->sense.ascq = -1;
	if (!s->ctx || inflight_submit(s, f, lun, cdb, cdb_len, dir, buf, len)) {
		if (!s->ctx)
			free(buf);
		r->rc = W_LOST;
		snprintf(r->why, sizeof(r->why), "%s", s->ctx ? iscsi_get_error(s->ctx) : "not connected");
		return;
	}
	watch_op("a SCSI command", s->idx);
	r->rc = inflight_wait(s, f, soak.o.op_timeout * 1000ull);
	if (r->rc != W_DONE) {
		snprintf(r->why, sizeof(r->why), "%s", s->ctx ? iscsi_get_error(s->ctx) : "no context");
		return;
	}
	take_result(f, r);
}

void sess_cmd_end(struct soak_sess *s)
{
	inflight_release(s, &s->cmd);
}

/* A task management function (RFC 7143 11.5); *response is the TMF response code (11.6.1). */
enum wait_rc sess_tmf(struct soak_sess *s, int lun, int function, struct scsi_task *ref, uint32_t *response)
{
	struct tmf_wait *w = &tmf_waits[s->idx];
	enum wait_rc rc;

	memset(w, 0, sizeof(*w));
	if (!s->ctx || iscsi_task_mgmt_async(s->ctx, lun, (enum iscsi_task_mgmt_funcs)function,
					     ref ? ref->itt : 0xffffffffu, ref ? ref->cmdsn : 0, tmf_cb, w))
		return W_LOST;
	watch_op("a task management function", s->idx);
	rc = service_until(s, &w->done, soak.o.op_timeout * 1000ull);
	if (rc != W_DONE)
		return rc;
	if (w->status == SCSI_STATUS_TIMEOUT)
		return W_TIMEOUT;
	if (w->status != SCSI_STATUS_GOOD)
		return W_LOST;
	*response = w->response;
	return W_DONE;
}

/* ---- trouble ---- */

/* A command that got no answer: a hang, or a connection the target dropped. */
void cmd_trouble(struct soak_sess *s, const struct cmd_res *r, const char *what)
{
	if (r->rc == W_TIMEOUT)
		report_hang("%s on session %d: no answer within %u s (%s)", what, s->idx, soak.o.op_timeout, r->why);
	else if (daemon_check())
		fail_note(&soak.st.lost_connections, "%s on session %d: the connection was lost: %s", what, s->idx,
			  r->why);
	sess_drop(s, WR_DROPPED);
}

/* ---- sessions ---- */

static void clear_ua(struct soak_sess *s, int lun)
{
	static const uint8_t tur[6];
	struct cmd_res r;

	for (int i = 0; i < 10 && s->ctx; i++) {
		sess_cmd(s, lun, tur, 6, SCSI_XFER_NONE, NULL, 0, &r);
		sess_cmd_end(s);
		if (r.rc != W_DONE) {
			cmd_trouble(s, &r, "TEST UNIT READY after login");
			return;
		}
		if (r.status != SCSI_STATUS_CHECK_CONDITION || r.sense.key != 6)
			return;
		soak.st.unit_attentions++;
	}
}

bool sess_connect(struct soak_sess *s)
{
	struct itest_login opt = {
		.initiator = s->iqn,
		.initial_r2t = -1,
		.immediate_data = -1,
		.fixed_isid = true,
		.isid_random = 0x5c0000u + (uint32_t)s->idx,
	};
	char err[256] = "";
	uint64_t t = itest_now_ms();

	for (int tries = 0; tries < 3 && !s->ctx && !soak.stop; tries++) {
		if (tries)
			usleep(200000);
		watch_op("a login", s->idx);
		s->ctx = itest_connect(&soak.d, &opt, 0, err, sizeof(err));
	}
	watch_idle();
	if (!s->ctx) {
		if (itest_now_ms() - t >= 25000)
			report_hang("session %d: login took %.0f s: %s", s->idx, (itest_now_ms() - t) / 1000.0, err);
		else if (daemon_check())
			fail_note(&soak.st.login_failures, "session %d: login failed three times: %s", s->idx, err);
		return false;
	}
	iscsi_set_timeout(s->ctx, (int)soak.o.op_timeout + 5);
	for (int lun = 0; lun < SOAK_LUNS; lun++)
		clear_ua(s, lun);
	return s->ctx != NULL;
}

/* What a WRITE left in flight came to; answered with a status or not. */
static void bg_settle(struct inflight *f, enum wr_outcome if_unanswered)
{
	bool answered = f->done && (unsigned)f->status < 0x100;
	int key = answered && f->status == SCSI_STATUS_CHECK_CONDITION ? (int)f->task->sense.key : -1;
	enum wr_outcome o = write_settle(f->opno, f->lun, f->lba, f->n, answered, f->status, key, if_unanswered);

	if (o == WR_FAILED)
		fail_note(&soak.st.unexpected, "WRITE(16) LUN %d LBA %llu+%u left in flight: status 0x%02x, sense key %d",
			  f->lun, (unsigned long long)f->lba, f->n, f->status, key);
}

void bg_write_resolve(struct soak_sess *s, enum wr_outcome if_unanswered)
{
	if (!s->bg.busy)
		return;
	bg_settle(&s->bg, if_unanswered);
	inflight_release(s, &s->bg);
}

/* Closes the connection without Logout: the target sees a connection failure. */
void sess_drop(struct soak_sess *s, enum wr_outcome why)
{
	if (s->ctx)
		iscsi_destroy_context(s->ctx);
	s->ctx = NULL;
	if (s->bg.busy)
		bg_settle(&s->bg, why);
	inflight_forget(&s->bg);
	inflight_forget(&s->cmd);
}

bool sess_reconnect(struct soak_sess *s, enum wr_outcome why)
{
	sess_drop(s, why);
	soak.st.reconnects++;
	return sess_connect(s);
}

/* Logout (RFC 7143 11.14) and destroy. */
void sess_logout(struct soak_sess *s)
{
	bg_write_resolve(s, WR_DROPPED);
	if (s->ctx) {
		watch_op("a logout", s->idx);
		itest_close(s->ctx);
		watch_idle();
	}
	s->ctx = NULL;
	inflight_forget(&s->cmd);
}

/* Keeps every session serviced (NOP-In pings answered) for ms. */
void idle_service(unsigned ms)
{
	uint64_t end = itest_now_ms() + ms;

	while (!soak.stop && itest_now_ms() < end) {
		struct pollfd p[SOAK_MAX_SESSIONS];
		int idx[SOAK_MAX_SESSIONS], n = 0;

		for (unsigned i = 0; i < soak.o.sessions; i++) {
			struct soak_sess *s = &soak.sess[i];

			if (!s->ctx || iscsi_get_fd(s->ctx) < 0)
				continue;
			p[n] = (struct pollfd){ .fd = iscsi_get_fd(s->ctx), .events = (short)iscsi_which_events(s->ctx) };
			idx[n++] = (int)i;
		}
		if (poll(p, (nfds_t)n, 100) < 0 && errno != EINTR)
			return;
		for (int k = 0; k < n; k++) {
			struct soak_sess *s = &soak.sess[idx[k]];
			struct cmd_res r = { .rc = W_LOST };

			if (iscsi_service(s->ctx, p[k].revents) < 0) {
				snprintf(r.why, sizeof(r.why), "%s", iscsi_get_error(s->ctx));
				cmd_trouble(s, &r, "an idle session");
			}
		}
	}
}
