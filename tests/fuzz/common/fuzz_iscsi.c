/*
 * The in-process iSCSI target of the fuzz harnesses (fuzz_iscsi.h).
 *
 * The server, its portals and its targets live for the whole process; what
 * an input can change (the LU, the connection, the session and its I_T
 * nexus, the state directory) is made afresh for each input and gone when
 * fuzz_iscsi_end() returns, so an input replays alone.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz_iscsi.h"

#define PUMP_MAX_TURNS 4096
#define SEND_MAX_STALLS 64

static struct {
	struct ev_loop *loop;
	struct iscsi_server *srv;
	struct iscsi_target *target;     /* FUZZ_TARGET, whose device each input replaces */
	struct scsi_device *dev;
	struct scsi_device *empty_dev;   /* the CHAP and ACL targets: a device without LUs */
	int fd;                          /* our end of the socketpair */
	bool peer_closed;
	/* what the target sends, cut into PDUs */
	uint8_t *rx;
	size_t rx_len, rx_cap;
	bool rx_digests;                 /* the final Login Response went by: negotiated digests apply */
	bool hd, dd;
	fuzz_iscsi_pdu_fn on_pdu;
	void *arg;
} F;

static void log_discard(void *arg, enum iscsi_log_kind kind, const char *message)
{
	/* Every message is formatted (iscsi_log), so its arguments are read; nothing is kept. */
	(void)arg;
	(void)kind;
	(void)message;
}

void fuzz_iscsi_profile(struct iscsi_server_params *p, unsigned profile)
{
	iscsi_server_params_default(p);
	p->nop_in_interval = 0; /* no timers: nothing may depend on time */
	switch (profile % 4) {
	case 0: /* config/default.ini */
		break;
	case 1: /* RFC 7143 13 defaults: solicited data only */
		p->initial_r2t = true;
		p->immediate_data = false;
		p->max_burst_length = 262144;
		p->first_burst_length = 65536;
		break;
	case 2: /* small PDUs and bursts, several R2Ts outstanding */
		p->max_recv_data_segment_length = 512;
		p->max_burst_length = 4096;
		p->first_burst_length = 1024;
		p->max_outstanding_r2t = 4;
		p->cmd_window = 4;
		break;
	case 3: /* no digests offered, a one-command window */
		p->header_digest_crc32c_allowed = false;
		p->data_digest_crc32c_allowed = false;
		p->cmd_window = 1;
		p->immediate_data = false;
		break;
	}
}

static void init_once(void)
{
	static const struct iscsi_acl_entry acl[] = {
		{ .initiator_name = FUZZ_INITIATOR_ACL,
		  .chap = { .user = FUZZ_ACL_CHAP_USER, .secret = FUZZ_ACL_CHAP_SECRET } },
	};
	struct iscsi_server_params p;
	struct iscsi_target_params t;
	char err[256];

	if (F.loop)
		return;
	signal(SIGPIPE, SIG_IGN);
	F.loop = ev_loop_new(EVFLAG_AUTO);
	F.empty_dev = scsi_device_create("iqn.2026-12.org.sbcemu:empty", &scsi_executor_inline, NULL);
	fuzz_iscsi_profile(&p, 0);
	F.srv = iscsi_server_create(F.loop, &p);
	iscsi_server_set_log(F.srv, log_discard, NULL);
	/*
	 * Portals for SendTargets (RFC 7143 Appendix C); nobody connects to
	 * them.  The wildcard one is answered with the connection's local
	 * address, which a socketpair does not have; IPv6 may be missing.
	 */
	if (iscsi_server_add_portal(F.srv, "127.0.0.1:0", err, sizeof(err)) != 0 ||
	    iscsi_server_add_portal(F.srv, "0.0.0.0:0", err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_iscsi: portal: %s\n", err);
		abort();
	}
	iscsi_server_add_portal(F.srv, "[::1]:0", err, sizeof(err));
	/* Enough portals that SendTargets=All outgrows a 512-byte PDU (RFC 7143 11.11: the C bit and TTT). */
	for (int i = 2; i <= 7; i++) {
		char addr[32];

		snprintf(addr, sizeof(addr), "127.0.0.%d:0", i);
		iscsi_server_add_portal(F.srv, addr, err, sizeof(err));
	}

	memset(&t, 0, sizeof(t));
	t.name = FUZZ_TARGET_ACL;
	t.tpgt = 3;
	t.device = F.empty_dev;
	t.acl = acl;
	t.acl_len = 1;
	if (iscsi_server_add_target(F.srv, &t, err, sizeof(err)) != 0)
		goto fail;
	memset(&t, 0, sizeof(t));
	t.name = FUZZ_TARGET_CHAP;
	t.tpgt = 2;
	t.device = F.empty_dev;
	t.chap = (struct iscsi_chap_credentials){ .user = FUZZ_CHAP_USER, .secret = FUZZ_CHAP_SECRET };
	t.mutual = (struct iscsi_chap_credentials){ .user = FUZZ_MUTUAL_USER, .secret = FUZZ_MUTUAL_SECRET };
	if (iscsi_server_add_target(F.srv, &t, err, sizeof(err)) != 0)
		goto fail;
	memset(&t, 0, sizeof(t));
	t.name = FUZZ_TARGET;
	t.alias = "sbcemu fuzz target";
	t.tpgt = 1;
	t.device = F.empty_dev; /* replaced for each input */
	if (iscsi_server_add_target(F.srv, &t, err, sizeof(err)) != 0)
		goto fail;
	F.target = iscsi_server_find_target(F.srv, FUZZ_TARGET);
	F.fd = -1;
	return;
fail:
	fprintf(stderr, "fuzz_iscsi: target: %s\n", err);
	abort();
}

void fuzz_iscsi_begin(enum fuzz_lu_variant variant, unsigned profile, fuzz_iscsi_pdu_fn on_pdu, void *arg)
{
	int sv[2];

	init_once();
	fuzz_iscsi_profile(&F.srv->params, profile);
	F.srv->next_tsih = 1;
	F.dev = scsi_device_create(FUZZ_TARGET, &scsi_executor_inline, NULL);
	fuzz_lu_create(F.dev, variant, 0);
	F.target->device = F.dev;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) {
		perror("socketpair");
		abort();
	}
	F.fd = sv[0];
	F.peer_closed = false;
	F.rx_len = 0;
	F.rx_digests = F.hd = F.dd = false;
	F.on_pdu = on_pdu;
	F.arg = arg;
	iscsi_conn_accept(F.srv, sv[1]);
}

struct iscsi_conn *fuzz_iscsi_conn(void)
{
	return F.srv ? F.srv->conns : NULL;
}

bool fuzz_iscsi_connected(void)
{
	return !F.peer_closed && F.srv->conns != NULL;
}

/* Cuts the PDUs the target sent out of F.rx; returns false when they cannot be framed any more. */
static bool parse_rx(void)
{
	size_t off = 0;
	bool ok = true;

	while (F.rx_len - off >= ISCSI_BHS_LEN) {
		const uint8_t *bhs = F.rx + off;
		uint32_t ahs = iscsi_bhs_ahs_len(bhs), len = iscsi_bhs_data_len(bhs);
		uint32_t hd = F.hd ? ISCSI_DIGEST_LEN : 0, dd = F.dd && len ? ISCSI_DIGEST_LEN : 0;
		size_t total = ISCSI_BHS_LEN + ahs + hd + len + iscsi_pad4(len) + dd;
		const uint8_t *data;

		if (F.rx_len - off < total)
			break;
		data = bhs + ISCSI_BHS_LEN + ahs + hd;
		if ((hd && iscsi_digest_get(bhs + ISCSI_BHS_LEN + ahs) != iscsi_crc32c(bhs, ISCSI_BHS_LEN + ahs)) ||
		    (dd && iscsi_digest_get(data + len + iscsi_pad4(len)) != iscsi_crc32c(data, len + iscsi_pad4(len)))) {
			/* RFC 7143 11.2.3: what the target sends must carry correct digests. */
			fprintf(stderr, "fuzz_iscsi: the target sent a PDU (opcode 0x%02x) with a wrong digest\n",
				bhs[0] & ISCSI_BHS_OPCODE_MASK);
			abort();
		}
		off += total;
		if (!F.rx_digests && iscsi_bhs_opcode(bhs) == ISCSI_OP_LOGIN_RSP && (bhs[1] & ISCSI_LOGIN_FLAG_TRANSIT) &&
		    (bhs[1] & ISCSI_LOGIN_STAGE_MASK) == ISCSI_STAGE_FULL_FEATURE && bhs[ISCSI_LOGIN_STATUS_CLASS] == 0) {
			/* RFC 7143 13.1: digests start after the final Login Response. */
			struct iscsi_conn *c = fuzz_iscsi_conn();

			F.rx_digests = true;
			F.hd = c && c->params.header_digest == ISCSI_DIGEST_CRC32C;
			F.dd = c && c->params.data_digest == ISCSI_DIGEST_CRC32C;
		}
		if (getenv("FUZZ_VERBOSE"))
			fprintf(stderr, "<- %s ITT %08x byte1 %02x byte2 %02x byte3 %02x status %02x%02x len %u%s%.*s\n",
				iscsi_opcode_name(iscsi_bhs_opcode(bhs)), get_be32(bhs + ISCSI_BHS_ITT), bhs[1], bhs[2],
				bhs[3], bhs[36], bhs[37], len, len ? ": " : "", (int)(len < 200 ? len : 200),
				len ? (const char *)data : "");
		if (F.on_pdu)
			F.on_pdu(F.arg, bhs, len ? data : NULL, len);
	}
	if (off) {
		memmove(F.rx, F.rx + off, F.rx_len - off);
		F.rx_len -= off;
	}
	return ok;
}

/* Reads what the target sent; returns the number of bytes. */
static size_t drain(void)
{
	size_t got = 0;

	if (F.fd < 0 || F.peer_closed)
		return 0;
	for (;;) {
		ssize_t n;

		if (F.rx_cap - F.rx_len < 65536) {
			size_t cap = F.rx_cap ? F.rx_cap * 2 : 1 << 18;
			uint8_t *nb = realloc(F.rx, cap);

			if (!nb)
				abort();
			F.rx = nb;
			F.rx_cap = cap;
		}
		n = read(F.fd, F.rx + F.rx_len, F.rx_cap - F.rx_len);
		if (n > 0) {
			F.rx_len += (size_t)n;
			got += (size_t)n;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			F.peer_closed = true;
		break;
	}
	if (got)
		parse_rx();
	return got;
}

void fuzz_iscsi_pump(void)
{
	int idle = 0;

	for (int turn = 0; turn < PUMP_MAX_TURNS && idle < 2; turn++) {
		ev_run(F.loop, EVRUN_NOWAIT);
		if (drain())
			idle = 0;
		else
			idle++;
	}
}

bool fuzz_iscsi_send_raw(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	int stalls = 0;

	while (len && !F.peer_closed) {
		ssize_t n = send(F.fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			stalls = 0;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			F.peer_closed = true;
			break;
		}
		/* The socket is full: let the target read (it may have stopped reading: give up then). */
		fuzz_iscsi_pump();
		if (++stalls > SEND_MAX_STALLS)
			return false;
	}
	return !F.peer_closed;
}

bool fuzz_iscsi_send_pdu(const uint8_t *bhs, const uint8_t *ahs, uint32_t ahs_len, const uint8_t *data,
			 uint32_t data_len)
{
	struct iscsi_conn *c = fuzz_iscsi_conn();
	bool hd = c && c->state != ISCSI_CONN_STATE_LOGIN && c->params.header_digest == ISCSI_DIGEST_CRC32C;
	bool dd = c && c->state != ISCSI_CONN_STATE_LOGIN && c->params.data_digest == ISCSI_DIGEST_CRC32C;
	uint8_t hdr[ISCSI_BHS_LEN + 1020 + ISCSI_DIGEST_LEN], trailer[3 + ISCSI_DIGEST_LEN] = { 0 };
	uint32_t pad = iscsi_pad4(data_len), hlen, tlen = pad;

	if (ahs_len > 1020)
		ahs_len = 1020;
	memcpy(hdr, bhs, ISCSI_BHS_LEN);
	put_be24(hdr + ISCSI_BHS_DATA_SEGMENT_LENGTH, data_len);
	if (ahs_len)
		memcpy(hdr + ISCSI_BHS_LEN, ahs, ahs_len);
	hlen = ISCSI_BHS_LEN + ahs_len;
	if (hd) {
		iscsi_digest_put(hdr + hlen, iscsi_crc32c(hdr, hlen));
		hlen += ISCSI_DIGEST_LEN;
	}
	if (data_len && dd) {
		uint32_t crc = iscsi_crc32c_update(iscsi_crc32c_update(0, data, data_len), trailer, pad);

		iscsi_digest_put(trailer + pad, crc);
		tlen += ISCSI_DIGEST_LEN;
	}
	return fuzz_iscsi_send_raw(hdr, hlen) && (!data_len || fuzz_iscsi_send_raw(data, data_len)) &&
	       fuzz_iscsi_send_raw(trailer, tlen);
}

void fuzz_iscsi_end(void)
{
	int turns;

	if (F.fd >= 0) {
		close(F.fd);
		F.fd = -1;
	}
	F.peer_closed = true;
	/* RFC 7143 7.1.5 (ErrorRecoveryLevel 0): the connection's end ends its session. */
	for (turns = 0; turns < PUMP_MAX_TURNS && (F.srv->nconns_alive || F.srv->sessions); turns++)
		ev_run(F.loop, EVRUN_NOWAIT);
	if (F.srv->nconns_alive || F.srv->sessions) {
		fprintf(stderr, "fuzz_iscsi: %u connection(s) and %s left after the initiator closed its socket\n",
			F.srv->nconns_alive, F.srv->sessions ? "a session" : "no session");
		abort();
	}
	F.target->device = F.empty_dev;
	scsi_device_destroy(F.dev);
	F.dev = NULL;
	fuzz_state_reset();
}
