/*
 * A connection: one non-blocking socket watched by one ev_io.
 *
 * Receive: bytes are read into a linear buffer and whole PDUs are cut out of
 * it; the BHS is checked before its data segment is waited for (RFC 7143
 * 11.2).  Transmit: PDUs are queued and written with
 * writev from the server's ev_prepare hook, before the loop sleeps; the
 * watcher asks for EV_WRITE only while the socket returned EAGAIN.
 *
 * This file does not interpret PDUs; dispatch.c routes them by opcode.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "iscsi_internal.h"

#define RX_INITIAL_CAP (64 * 1024)
/* Data segments at least this long, not yet all received, are read in place (rx_direct_start). */
#define RX_DIRECT_MIN (8 * 1024)
#define TX_IOV_MAX 64

static void conn_io_cb(struct ev_loop *loop, ev_io *w, int revents);
static void conn_timer_cb(struct ev_loop *loop, ev_timer *w, int revents);
static void conn_linger(struct iscsi_conn *conn);
static void conn_maybe_resume(struct iscsi_conn *conn);

void iscsi_conn_get(struct iscsi_conn *conn)
{
	conn->refs++;
}

void iscsi_conn_put(struct iscsi_conn *conn)
{
	struct iscsi_server *srv = conn->srv;

	if (--conn->refs > 0)
		return;
	free(conn->rx_buf);
	free(conn->itt_buckets);
	free(conn);
	iscsi_server_conn_freed(srv);
}

static void conn_set_events(struct iscsi_conn *conn, int events)
{
	if (conn->io_events == events)
		return;
	ev_io_stop(conn->srv->loop, &conn->io);
	conn->io_events = events;
	if (events) {
		ev_io_set(&conn->io, conn->fd, events);
		ev_io_start(conn->srv->loop, &conn->io);
	}
}

static void format_peer(const struct sockaddr_storage *ss, char *out, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
		snprintf(out, len, "%s:%u", host, port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
		snprintf(out, len, "[%s]:%u", host, port);
	} else {
		snprintf(out, len, "?");
	}
}

struct iscsi_conn *iscsi_conn_accept(struct iscsi_server *srv, int fd)
{
	struct iscsi_conn *conn = calloc(1, sizeof(*conn));
	socklen_t peer_len = sizeof(conn->peer_addr);
	int one = 1;

	if (!conn) {
		close(fd);
		return NULL;
	}
	conn->rx_buf = malloc(RX_INITIAL_CAP);
	if (!conn->rx_buf) {
		free(conn);
		close(fd);
		return NULL;
	}
	conn->rx_cap = RX_INITIAL_CAP;
	conn->srv = srv;
	conn->fd = fd;
	conn->refs = 1; /* the open socket */
	conn->state = ISCSI_CONN_STATE_LOGIN;
	conn->params.header_digest = ISCSI_DIGEST_NONE;
	conn->params.data_digest = ISCSI_DIGEST_NONE;
	/* RFC 7143 13.12: 8192 applies until MaxRecvDataSegmentLength is declared. */
	conn->params.max_recv_data_segment_length = ISCSI_LOGIN_MAX_RECV_DSL;
	conn->params.max_xmit_data_segment_length = ISCSI_LOGIN_MAX_RECV_DSL;
	conn->next_ttt = 1;
	LIST_INIT(&conn->tasks);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (getpeername(fd, (struct sockaddr *)&conn->peer_addr, &peer_len) == 0)
		format_peer(&conn->peer_addr, conn->peer, sizeof(conn->peer));
	conn->local_addr_len = sizeof(conn->local_addr);
	if (getsockname(fd, (struct sockaddr *)&conn->local_addr, &conn->local_addr_len) == 0)
		format_peer(&conn->local_addr, conn->local, sizeof(conn->local));
	conn->next = srv->conns;
	if (srv->conns)
		srv->conns->prev = conn;
	srv->conns = conn;
	srv->nconns_alive++;

	ev_io_init(&conn->io, conn_io_cb, fd, EV_READ);
	conn->io_events = EV_READ;
	ev_io_start(srv->loop, &conn->io);
	ev_timer_init(&conn->timer, conn_timer_cb, srv->params.login_timeout ? srv->params.login_timeout : 30, 0);
	ev_timer_start(srv->loop, &conn->timer);
	conn->last_rx = ev_now(srv->loop);
	ISCSI_DEBUG(srv, "%s: connected", conn->peer);
	return conn;
}

size_t iscsi_addr_key(const struct sockaddr_storage *ss, uint8_t key[17])
{
	if (ss->ss_family == AF_INET) {
		key[0] = 4;
		memcpy(key + 1, &((const struct sockaddr_in *)ss)->sin_addr, 4);
		return 5;
	}
	if (ss->ss_family == AF_INET6) {
		key[0] = 6;
		memcpy(key + 1, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
		return 17;
	}
	return 0;
}

/* ---- transmit ---- */

static void tx_free(struct iscsi_conn *conn, struct iscsi_tx *tx)
{
	conn->tx_held -= tx->held;
	if (tx->task)
		iscsi_task_put(tx->task);
	free(tx->owned);
	free(tx);
}

static void conn_mark_flush(struct iscsi_conn *conn)
{
	if (conn->on_flush_list)
		return;
	conn->on_flush_list = true;
	iscsi_conn_get(conn);
	conn->flush_next = conn->srv->flush_list;
	conn->srv->flush_list = conn;
}

void iscsi_conn_fill_sn(struct iscsi_conn *conn, uint8_t *bhs, bool advance_stat_sn)
{
	struct iscsi_session *s = conn->session;
	uint32_t exp_cmd_sn, max_cmd_sn;

	put_be32(bhs + ISCSI_BHS_STAT_SN, conn->stat_sn);
	if (advance_stat_sn)
		conn->stat_sn++;
	if (s) {
		exp_cmd_sn = s->exp_cmd_sn;
		max_cmd_sn = iscsi_session_max_cmd_sn(s);
	} else {
		exp_cmd_sn = conn->login ? conn->login->cmd_sn : 0;
		max_cmd_sn = exp_cmd_sn + conn->srv->params.cmd_window - 1;
	}
	put_be32(bhs + ISCSI_BHS_EXP_CMD_SN, exp_cmd_sn);
	put_be32(bhs + ISCSI_BHS_MAX_CMD_SN, max_cmd_sn);
}

void iscsi_conn_queue(struct iscsi_conn *conn, const uint8_t *bhs, const void *data, uint32_t data_len,
		      struct iscsi_task *task)
{
	struct iscsi_tx *tx;
	uint32_t pad;

	if (conn->state == ISCSI_CONN_STATE_CLOSED)
		return;
	tx = calloc(1, sizeof(*tx));
	if (!tx) {
		iscsi_conn_drop(conn, "out of memory queueing a PDU");
		return;
	}
	tx->held = sizeof(*tx);
	memcpy(tx->hdr, bhs, ISCSI_BHS_LEN);
	put_be24(tx->hdr + ISCSI_BHS_DATA_SEGMENT_LENGTH, data_len);
	tx->hdr_len = ISCSI_BHS_LEN;
	if (conn->params.header_digest == ISCSI_DIGEST_CRC32C) {
		iscsi_digest_put(tx->hdr + ISCSI_BHS_LEN, iscsi_crc32c(tx->hdr, ISCSI_BHS_LEN));
		tx->hdr_len += ISCSI_DIGEST_LEN;
	}
	if (data_len) {
		if (task) {
			tx->data = data;
			tx->task = task;
			iscsi_task_get(task);
		} else {
			tx->owned = malloc(data_len);
			if (!tx->owned) {
				free(tx);
				iscsi_conn_drop(conn, "out of memory queueing a PDU");
				return;
			}
			memcpy(tx->owned, data, data_len);
			tx->data = tx->owned;
			tx->held += data_len;
		}
		tx->data_len = data_len;
		pad = iscsi_pad4(data_len);
		memset(tx->trailer, 0, sizeof(tx->trailer));
		tx->trailer_len = pad;
		if (conn->params.data_digest == ISCSI_DIGEST_CRC32C) {
			/* RFC 7143 11.2.3: the data digest covers the data segment and its padding. */
			uint32_t crc = iscsi_crc32c_update(0, tx->data, data_len);
			crc = iscsi_crc32c_update(crc, tx->trailer, pad);
			iscsi_digest_put(tx->trailer + pad, crc);
			tx->trailer_len += ISCSI_DIGEST_LEN;
		}
	}
	if (conn->tx_tail)
		conn->tx_tail->next = tx;
	else
		conn->tx_head = tx;
	if (tx == conn->tx_head)
		conn->tx_progress = ev_now(conn->srv->loop);
	conn->tx_tail = tx;
	conn->tx_bytes += tx->hdr_len + tx->data_len + tx->trailer_len;
	conn->tx_held += tx->held;
	conn_mark_flush(conn);
}

void iscsi_conn_flush(struct iscsi_conn *conn)
{
	while (conn->state != ISCSI_CONN_STATE_CLOSED && conn->tx_head) {
		struct iovec iov[TX_IOV_MAX];
		int n = 0;
		ssize_t w;

		for (struct iscsi_tx *tx = conn->tx_head; tx && n + 3 <= TX_IOV_MAX; tx = tx->next) {
			size_t skip = tx->sent;
			const uint8_t *parts[3] = { tx->hdr, tx->data, tx->trailer };
			size_t lens[3] = { tx->hdr_len, tx->data_len, tx->trailer_len };
			for (int i = 0; i < 3; i++) {
				if (skip >= lens[i]) {
					skip -= lens[i];
					continue;
				}
				iov[n].iov_base = (void *)(uintptr_t)(parts[i] + skip);
				iov[n].iov_len = lens[i] - skip;
				skip = 0;
				n++;
			}
		}
		w = writev(conn->fd, iov, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				conn_set_events(conn, conn->io_events | EV_WRITE);
				return;
			}
			iscsi_conn_drop(conn, "write failed");
			return;
		}
		conn->tx_bytes -= (size_t)w;
		if (w > 0)
			conn->tx_progress = ev_now(conn->srv->loop);
		while (w > 0 && conn->tx_head) {
			struct iscsi_tx *tx = conn->tx_head;
			size_t total = tx->hdr_len + tx->data_len + tx->trailer_len;
			size_t left = total - tx->sent;
			if ((size_t)w < left) {
				tx->sent += (size_t)w;
				w = 0;
				break;
			}
			w -= (ssize_t)left;
			conn->tx_head = tx->next;
			if (!conn->tx_head)
				conn->tx_tail = NULL;
			tx_free(conn, tx);
		}
		conn_maybe_resume(conn);
	}
	if (conn->state == ISCSI_CONN_STATE_CLOSED)
		return;
	conn_set_events(conn, conn->io_events & ~EV_WRITE);
	if (conn->state == ISCSI_CONN_STATE_CLOSING)
		conn_linger(conn);
}

/* Reading resumes once the peer has read half of what held it back (conn_read). */
static void conn_maybe_resume(struct iscsi_conn *conn)
{
	if (conn->rx_paused && conn->tx_held <= ISCSI_TX_HELD_MAX / 2 && conn->state != ISCSI_CONN_STATE_CLOSED) {
		conn->rx_paused = false;
		conn_set_events(conn, conn->io_events | EV_READ);
	}
}

/* ---- closing ---- */

void iscsi_conn_drop(struct iscsi_conn *conn, const char *why)
{
	struct iscsi_server *srv = conn->srv;
	struct iscsi_session *s = conn->session;

	if (conn->state == ISCSI_CONN_STATE_CLOSED)
		return;
	ISCSI_DEBUG(srv, "%s: closing connection: %s", conn->peer, why);
	iscsi_conn_get(conn);
	conn->state = ISCSI_CONN_STATE_CLOSED;
	ev_io_stop(srv->loop, &conn->io);
	ev_timer_stop(srv->loop, &conn->timer);
	close(conn->fd);
	conn->fd = -1;
	if (conn->portal) {
		conn->portal->nconns--;
		conn->portal = NULL;
	}
	if (conn->prev)
		conn->prev->next = conn->next;
	else
		srv->conns = conn->next;
	if (conn->next)
		conn->next->prev = conn->prev;
	conn->prev = conn->next = NULL;

	while (conn->tx_head) {
		struct iscsi_tx *tx = conn->tx_head;
		conn->tx_head = tx->next;
		tx_free(conn, tx);
	}
	conn->tx_tail = NULL;
	conn->tx_bytes = 0;
	if (conn->login) {
		iscsi_login_free(conn->login);
		conn->login = NULL;
	}
	free(conn->text_cont.buf);
	conn->text_cont.buf = NULL;

	if (s) {
		/*
		 * ErrorRecoveryLevel 0 (RFC 7143 7.1.5): the failure of the
		 * session's only connection ends the session; its commands
		 * are aborted through the nexus.
		 */
		iscsi_session_clear_ordered(s);
		s->conn = NULL;
		conn->session = NULL;
		iscsi_session_end(s, why);
		iscsi_session_put(s);
	}
	if (conn->rx_direct.task) {
		iscsi_task_put(conn->rx_direct.task);
		conn->rx_direct.task = NULL;
	}
	free(conn->rx_direct.imm_buf);
	conn->rx_direct.imm_buf = NULL;
	conn->rx_direct.dest = NULL;
	while (!LIST_EMPTY(&conn->tasks))
		iscsi_task_unlink(LIST_FIRST(&conn->tasks));
	conn->refs--; /* the socket's reference; the one taken above keeps conn alive */
	iscsi_conn_put(conn);
}

/*
 * The output is out: the send side is shut down (the peer reads the last
 * response, then end of file), and the connection stays open, its input
 * read and discarded, until the peer closes its side or the linger time
 * is over.  Closing with unread input would reset the connection instead.
 */
static void conn_linger(struct iscsi_conn *conn)
{
	if (conn->lingering)
		return;
	conn->lingering = true;
	if (conn->peer_closed || shutdown(conn->fd, SHUT_WR) != 0) {
		/* Nothing more comes in: closing now resets nothing. */
		iscsi_conn_drop(conn, "closed after the last response");
		return;
	}
	ev_timer_stop(conn->srv->loop, &conn->timer);
	ev_timer_set(&conn->timer, ISCSI_LINGER_SECONDS, 0.);
	ev_timer_start(conn->srv->loop, &conn->timer);
}

void iscsi_conn_close_after_flush(struct iscsi_conn *conn)
{
	if (conn->state == ISCSI_CONN_STATE_CLOSED || conn->state == ISCSI_CONN_STATE_CLOSING)
		return;
	conn->state = ISCSI_CONN_STATE_CLOSING;
	conn_set_events(conn, conn->io_events | EV_READ); /* input is drained, not left unread */
	if (!conn->tx_head)
		conn_linger(conn);
}

void iscsi_conn_check_idle(struct iscsi_conn *conn)
{
	switch (conn->state) {
	case ISCSI_CONN_STATE_LOGOUT_PENDING:
		if (conn->tasks_active == 0)
			iscsi_logout_respond(conn);
		break;
	case ISCSI_CONN_STATE_LOGIN:
		if (conn->srv->shutting_down)
			iscsi_conn_drop(conn, "server shutting down");
		break;
	case ISCSI_CONN_STATE_FULL_FEATURE:
		if (conn->srv->shutting_down && conn->tasks_active == 0)
			iscsi_conn_close_after_flush(conn);
		break;
	case ISCSI_CONN_STATE_CLOSING:
	case ISCSI_CONN_STATE_CLOSED:
		break;
	}
}

void iscsi_conn_enter_full_feature(struct iscsi_conn *conn)
{
	struct iscsi_server *srv = conn->srv;

	conn->state = ISCSI_CONN_STATE_FULL_FEATURE;
	ev_timer_stop(srv->loop, &conn->timer);
	if (srv->params.nop_in_interval || srv->params.output_stall_timeout) {
		ev_timer_set(&conn->timer, 1.0, 1.0);
		ev_timer_start(srv->loop, &conn->timer);
	}
}

static void conn_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct iscsi_conn *conn = (struct iscsi_conn *)((char *)w - offsetof(struct iscsi_conn, timer));
	(void)revents;

	if (conn->state == ISCSI_CONN_STATE_LOGIN) {
		iscsi_conn_drop(conn, "login timeout");
		return;
	}
	if (conn->state == ISCSI_CONN_STATE_CLOSING && conn->lingering) {
		iscsi_conn_drop(conn, "closed after the last response (the peer kept its side open)");
		return;
	}
	/*
	 * A peer that stops reading would hold its responses and their buffers
	 * for ever: output that has not moved for output_stall_timeout seconds
	 * ends the connection (the session's commands end with it, RFC 7143 6.1).
	 */
	if (conn->tx_head && conn->srv->params.output_stall_timeout &&
	    ev_now(loop) - conn->tx_progress >= conn->srv->params.output_stall_timeout) {
		iscsi_log(conn->srv, ISCSI_LOG_WARNING,
			  "%s: dropping the connection: %zu bytes of responses unread for %u s "
			  "(iscsi.output_stall_timeout)",
			  conn->peer, conn->tx_bytes, conn->srv->params.output_stall_timeout);
		iscsi_conn_drop(conn, "output stalled");
		return;
	}
	iscsi_nop_timer(conn, ev_now(loop));
}

/* ---- receive ---- */

/*
 * A long data segment whose header is in (at bhs, avail bytes of the PDU
 * received) is read from the socket straight into the buffer it is for,
 * not into rx_buf and copied from there: one copy per byte less
 * (docs/performance.md).  A Data-Out's segment goes into its task's buffer
 * when the task waits for exactly it (iscsi_data_out_dest); a SCSI
 * Command's immediate data into the buffer its task will take
 * (iscsi_cmd_immediate_dest).  The header is kept; rx_direct_end hands the
 * PDU to the usual handler once its padding and digest are in.
 */
static bool rx_direct_start(struct iscsi_conn *conn, const uint8_t *bhs, uint32_t ahs_len, uint32_t hd,
			    size_t avail)
{
	struct iscsi_rx_direct *d = &conn->rx_direct;
	uint32_t data_len = iscsi_bhs_data_len(bhs);
	size_t head = ISCSI_BHS_LEN + hd, have;
	struct iscsi_task *task = NULL;
	uint8_t opcode = iscsi_bhs_opcode(bhs);
	uint8_t *dest;

	if (ahs_len || data_len < RX_DIRECT_MIN || avail < head || avail - head >= data_len)
		return false;
	if (opcode == ISCSI_OP_DATA_OUT &&
	    (conn->state == ISCSI_CONN_STATE_FULL_FEATURE || conn->state == ISCSI_CONN_STATE_LOGOUT_PENDING)) {
		dest = iscsi_data_out_dest(conn, bhs, data_len, &task);
		if (!dest)
			return false;
		iscsi_task_get(task);
		d->task = task;
	} else if (opcode == ISCSI_OP_SCSI_CMD && conn->state == ISCSI_CONN_STATE_FULL_FEATURE) {
		dest = iscsi_cmd_immediate_dest(conn, bhs, data_len);
		if (!dest)
			return false;
		d->imm_buf = dest;
	} else {
		return false;
	}
	have = avail - head;
	memcpy(d->bhs, bhs, ISCSI_BHS_LEN);
	d->dest = dest;
	d->len = data_len;
	d->got = (uint32_t)have;
	memcpy(dest, bhs + head, have);
	d->trailer_len = iscsi_pad4(data_len) +
			 (conn->params.data_digest == ISCSI_DIGEST_CRC32C ? ISCSI_DIGEST_LEN : 0);
	d->trailer_got = 0;
	return true;
}

/*
 * The segment read in place is complete: checked and handled as
 * conn_process_rx would.  A command's buffer that no task took (the PDU was
 * rejected after all) is freed.
 */
static void rx_direct_end(struct iscsi_conn *conn)
{
	struct iscsi_rx_direct *d = &conn->rx_direct;
	struct iscsi_task *task = d->task;
	uint32_t pad = iscsi_pad4(d->len);
	struct iscsi_pdu pdu = { .bhs = d->bhs, .data = d->dest, .data_len = d->len };

	d->task = NULL;
	d->dest = NULL;
	if (d->trailer_len > pad &&
	    iscsi_crc32c_update(iscsi_crc32c_update(0, pdu.data, d->len), d->trailer, pad) !=
		    iscsi_digest_get(d->trailer + pad)) {
		/* RFC 7143 7.8: discard the PDU and reject it with "data digest error". */
		ISCSI_PEER_ERROR(conn->srv, "%s: data digest error", conn->peer);
		iscsi_reject(conn, d->bhs, ISCSI_REJECT_DATA_DIGEST_ERROR);
	} else {
		conn->last_rx = ev_now(conn->srv->loop);
		iscsi_conn_handle_pdu(conn, &pdu);
	}
	if (task)
		iscsi_task_put(task);
	free(d->imm_buf);
	d->imm_buf = NULL;
}

/*
 * Reads into the segment in place, its trailer, then rx_buf; returns the
 * bytes read, 0 at end of file, -1 with errno.
 */
static ssize_t rx_direct_read(struct iscsi_conn *conn, size_t *room)
{
	struct iscsi_rx_direct *d = &conn->rx_direct;
	struct iovec iov[3];
	int n = 0;
	ssize_t r;
	size_t left;

	if (d->got < d->len)
		iov[n++] = (struct iovec){ d->dest + d->got, d->len - d->got };
	if (d->trailer_got < d->trailer_len)
		iov[n++] = (struct iovec){ d->trailer + d->trailer_got, d->trailer_len - d->trailer_got };
	iov[n++] = (struct iovec){ conn->rx_buf + conn->rx_len, conn->rx_cap - conn->rx_len };
	*room = 0;
	for (int i = 0; i < n; i++)
		*room += iov[i].iov_len;
	r = readv(conn->fd, iov, n);
	if (r <= 0)
		return r;
	left = (size_t)r;
	if (d->got < d->len) {
		size_t k = left < d->len - d->got ? left : d->len - d->got;
		d->got += (uint32_t)k;
		left -= k;
	}
	if (d->trailer_got < d->trailer_len) {
		size_t k = left < d->trailer_len - d->trailer_got ? left : d->trailer_len - d->trailer_got;
		d->trailer_got += (uint32_t)k;
		left -= k;
	}
	conn->rx_len += left;
	if (d->got == d->len && d->trailer_got == d->trailer_len)
		rx_direct_end(conn);
	return r;
}

/*
 * Cuts PDUs out of the receive buffer.  Returns false if the connection
 * stopped taking input.
 */
static bool conn_process_rx(struct iscsi_conn *conn)
{
	size_t off = 0;
	bool ok = true;

	while (conn->state != ISCSI_CONN_STATE_CLOSED && conn->state != ISCSI_CONN_STATE_CLOSING) {
		const uint8_t *bhs = conn->rx_buf + off;
		size_t avail = conn->rx_len - off;
		uint32_t ahs_len, data_len, hd, dd, total;
		struct iscsi_pdu pdu;
		int reason;

		if (avail < ISCSI_BHS_LEN)
			break;
		ahs_len = iscsi_bhs_ahs_len(bhs);
		data_len = iscsi_bhs_data_len(bhs);
		hd = conn->params.header_digest == ISCSI_DIGEST_CRC32C ? ISCSI_DIGEST_LEN : 0;
		dd = data_len && conn->params.data_digest == ISCSI_DIGEST_CRC32C ? ISCSI_DIGEST_LEN : 0;
		total = ISCSI_BHS_LEN + ahs_len + hd + data_len + iscsi_pad4(data_len) + dd;

		if (avail >= ISCSI_BHS_LEN + ahs_len + hd && hd) {
			/* RFC 7143 7.8: a header digest error at ERL 0 ends the connection. */
			uint32_t crc = iscsi_crc32c(bhs, ISCSI_BHS_LEN + ahs_len);
			if (crc != iscsi_digest_get(bhs + ISCSI_BHS_LEN + ahs_len)) {
				iscsi_conn_drop(conn, "header digest error");
				return false;
			}
		} else if (hd) {
			break; /* wait for the digest before trusting the lengths */
		}
		reason = iscsi_bhs_check(bhs, conn->params.max_recv_data_segment_length);
		if (reason == ISCSI_REJECT_PROTOCOL_ERROR && data_len > conn->params.max_recv_data_segment_length) {
			/* We cannot find the next PDU boundary safely beyond our limit. */
			if (conn->state == ISCSI_CONN_STATE_LOGIN && iscsi_bhs_opcode(bhs) == ISCSI_OP_LOGIN_REQ)
				iscsi_login_refuse_pdu(conn, bhs, ISCSI_LOGIN_STATUS_INITIATOR_ERROR);
			else
				iscsi_reject(conn, bhs, ISCSI_REJECT_PROTOCOL_ERROR);
			iscsi_conn_close_after_flush(conn);
			ok = false;
			break;
		}
		if (avail < total && !reason && rx_direct_start(conn, bhs, ahs_len, hd, avail)) {
			off += avail;
			break;
		}
		if (total > conn->rx_cap) {
			size_t cap = conn->rx_cap;
			uint8_t *nb;
			while (cap < total)
				cap *= 2;
			nb = realloc(conn->rx_buf, cap);
			if (!nb) {
				iscsi_conn_drop(conn, "out of memory");
				return false;
			}
			conn->rx_buf = nb;
			conn->rx_cap = cap;
			bhs = conn->rx_buf + off;
		}
		if (avail < total)
			break;

		pdu.bhs = bhs;
		pdu.ahs = ahs_len ? bhs + ISCSI_BHS_LEN : NULL;
		pdu.ahs_len = ahs_len;
		pdu.data = data_len ? bhs + ISCSI_BHS_LEN + ahs_len + hd : NULL;
		pdu.data_len = data_len;
		off += total;

		if (dd) {
			uint32_t crc = iscsi_crc32c(pdu.data, data_len + iscsi_pad4(data_len));
			if (crc != iscsi_digest_get(pdu.data + data_len + iscsi_pad4(data_len))) {
				/* RFC 7143 7.8: discard the PDU and reject it with "data digest error". */
				ISCSI_PEER_ERROR(conn->srv, "%s: data digest error", conn->peer);
				if (conn->state == ISCSI_CONN_STATE_LOGIN) {
					iscsi_conn_drop(conn, "data digest error during login");
					return false;
				}
				iscsi_reject(conn, bhs, ISCSI_REJECT_DATA_DIGEST_ERROR);
				continue;
			}
		}
		if (reason) {
			if (conn->state == ISCSI_CONN_STATE_LOGIN) {
				iscsi_conn_drop(conn, "malformed PDU during login");
				return false;
			}
			iscsi_reject(conn, bhs, (enum iscsi_reject_reason)reason);
			continue;
		}
		conn->last_rx = ev_now(conn->srv->loop);
		iscsi_conn_handle_pdu(conn, &pdu);
	}
	if (conn->state == ISCSI_CONN_STATE_CLOSED)
		return false;
	if (off) {
		memmove(conn->rx_buf, conn->rx_buf + off, conn->rx_len - off);
		conn->rx_len -= off;
	}
	return ok;
}

static void conn_read(struct iscsi_conn *conn)
{
	for (int rounds = 0; rounds < 16; rounds++) {
		size_t room;
		ssize_t n;

		/* A peer that sends without reading what comes back: not read until it does (ISCSI_TX_HELD_MAX). */
		if (conn->tx_held > ISCSI_TX_HELD_MAX) {
			conn->rx_paused = true;
			conn_set_events(conn, conn->io_events & ~EV_READ);
			return;
		}

		if (conn->rx_len == conn->rx_cap) {
			/* A PDU longer than the buffer: conn_process_rx grew it already. */
			break;
		}
		room = conn->rx_cap - conn->rx_len;
		if (conn->rx_direct.dest)
			n = rx_direct_read(conn, &room);
		else if ((n = read(conn->fd, conn->rx_buf + conn->rx_len, room)) > 0)
			conn->rx_len += (size_t)n;
		if (n == 0) {
			iscsi_conn_drop(conn, "peer closed the connection");
			return;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				iscsi_conn_drop(conn, "read failed");
			return;
		}
		if (!conn_process_rx(conn))
			return;
		if (conn->state == ISCSI_CONN_STATE_CLOSING)
			return;
		/*
		 * Less than there was room for: the socket had no more.  The watcher
		 * is level-triggered (libev's ev_io), so bytes that arrive meanwhile
		 * call again; a read now would only return EAGAIN (one system call
		 * per command saved).
		 */
		if ((size_t)n < room)
			return;
	}
}

/* CLOSING: what the peer still sends is read and dropped (conn_linger); its end of file ends the wait. */
static void conn_drain_input(struct iscsi_conn *conn)
{
	char sink[4096];

	for (int rounds = 0; rounds < 16; rounds++) {
		ssize_t n = read(conn->fd, sink, sizeof(sink));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			conn->peer_closed = true;
			conn_set_events(conn, conn->io_events & ~EV_READ);
			if (conn->lingering || n < 0)
				iscsi_conn_drop(conn, n ? "read failed while closing" : "closed after the last response");
			return; /* else the output still goes out (the peer may only have shut down its side) */
		}
	}
}

static void conn_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct iscsi_conn *conn = (struct iscsi_conn *)((char *)w - offsetof(struct iscsi_conn, io));
	(void)loop;

	iscsi_conn_get(conn);
	if (revents & EV_WRITE)
		iscsi_conn_flush(conn);
	if ((revents & EV_READ) && conn->state == ISCSI_CONN_STATE_CLOSING)
		conn_drain_input(conn);
	else if ((revents & EV_READ) && conn->state != ISCSI_CONN_STATE_CLOSED)
		conn_read(conn);
	iscsi_conn_put(conn);
}
