#include "iscsi_harness.h"

#include <ftw.h>
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <ev.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "backend.h"
#include "iscsi_internal.h"
#include "scsi.h"

const uint8_t harness_isid[6] = { 0x80, 0x12, 0x34, 0x56, 0x00, 0x01 };

static struct {
	pthread_t thread;
	struct ev_loop *loop;
	struct iscsi_server *srv;
	struct scsi_device *dev;
	ev_async stop;
	int port;
	int ready_pipe[2];
	struct harness_config cfg;
	char dir[64];
	bool header_digest, data_digest;
} H;

static void shutdown_done(void *arg)
{
	(void)arg;
	ev_break(H.loop, EVBREAK_ALL);
}

static void stop_cb(struct ev_loop *loop, ev_async *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	iscsi_server_shutdown(H.srv, shutdown_done, NULL);
}

static void *server_thread(void *arg)
{
	struct iscsi_server_params p;
	struct scsi_lu_params lp;
	struct iscsi_target_params t;
	char err[256];
	int port = -1;
	(void)arg;

	H.loop = ev_loop_new(EVFLAG_AUTO);
	H.dev = scsi_device_create("test", &scsi_executor_inline, NULL);
	memset(&lp, 0, sizeof(lp));
	lp.kind = SCSI_LU_CONVENTIONAL;
	lp.logical_block_size = 512;
	lp.num_blocks = 2048 * 64;
	snprintf(lp.vendor, sizeof(lp.vendor), "SBCEMU");
	snprintf(lp.product, sizeof(lp.product), "TEST");
	snprintf(lp.revision, sizeof(lp.revision), "0001");
	snprintf(lp.serial, sizeof(lp.serial), "1");
	lp.state_dir = H.dir;
	if (!scsi_lu_create(H.dev, &lp, be_mem_open(lp.num_blocks * 512), err, sizeof(err)))
		goto out;
	iscsi_server_params_default(&p);
	p.nop_in_interval = 0;
	if (H.cfg.params)
		H.cfg.params(&p);
	H.srv = iscsi_server_create(H.loop, &p);
	if (iscsi_server_add_portal(H.srv, "127.0.0.1:0", err, sizeof(err)) != 0)
		goto out;
	memset(&t, 0, sizeof(t));
	t.name = HARNESS_TARGET;
	t.alias = "test-alias";
	t.tpgt = 1;
	t.device = H.dev;
	t.chap = H.cfg.chap;
	t.mutual = H.cfg.mutual;
	t.acl = H.cfg.acl;
	t.acl_len = H.cfg.acl_len;
	if (iscsi_server_add_target(H.srv, &t, err, sizeof(err)) != 0)
		goto out;
	port = ntohs(((struct sockaddr_in *)&H.srv->portals->addr)->sin_port);
	ev_async_init(&H.stop, stop_cb);
	ev_async_start(H.loop, &H.stop);
out:
	if (write(H.ready_pipe[1], &port, sizeof(port)) != sizeof(port))
		abort();
	if (port < 0)
		return NULL;
	ev_run(H.loop, 0);
	iscsi_server_destroy(H.srv);
	scsi_device_destroy(H.dev);
	ev_loop_destroy(H.loop);
	return NULL;
}

int harness_start(const struct harness_config *cfg)
{
	int port;

	signal(SIGPIPE, SIG_IGN);
	memset(&H, 0, sizeof(H));
	if (cfg)
		H.cfg = *cfg;
	snprintf(H.dir, sizeof(H.dir), "/tmp/sbce-iscsi-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(H.dir));
	ck_assert_int_eq(pipe(H.ready_pipe), 0);
	ck_assert_int_eq(pthread_create(&H.thread, NULL, server_thread, NULL), 0);
	ck_assert_int_eq(read(H.ready_pipe[0], &port, sizeof(port)), sizeof(port));
	ck_assert_int_gt(port, 0);
	H.port = port;
	return port;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void harness_stop(void)
{
	ev_async_send(H.loop, &H.stop);
	pthread_join(H.thread, NULL);
	close(H.ready_pipe[0]);
	close(H.ready_pipe[1]);
	/* The LU's state directory (log pages saved at its end): nothing of the test stays in /tmp. */
	nftw(H.dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

int harness_connect(void)
{
	struct sockaddr_in sin;
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)H.port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	H.header_digest = H.data_digest = false;
	return fd;
}

void harness_set_digests(bool header, bool data)
{
	H.header_digest = header;
	H.data_digest = data;
}

bool harness_header_digest(void)
{
	return H.header_digest;
}

bool harness_data_digest(void)
{
	return H.data_digest;
}

static void write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* the target closed: the test's next read sees it */
		p += w;
		len -= (size_t)w;
	}
}

void pdu_send(int fd, const uint8_t *bhs, const void *data, uint32_t data_len)
{
	uint8_t hdr[52], pad[8] = { 0 };
	uint32_t padlen = (4 - (data_len & 3)) & 3;
	size_t hlen = 48;

	memcpy(hdr, bhs, 48);
	put_be24(hdr + 5, data_len);
	if (H.header_digest) {
		iscsi_digest_put(hdr + 48, iscsi_crc32c(hdr, 48));
		hlen += 4;
	}
	write_all(fd, hdr, hlen);
	if (data_len) {
		write_all(fd, data, data_len);
		if (H.data_digest) {
			uint32_t crc = iscsi_crc32c_update(iscsi_crc32c(data, data_len), pad, padlen);
			iscsi_digest_put(pad + padlen, crc);
			padlen += 4;
		}
		write_all(fd, pad, padlen);
	}
}

static bool read_all(int fd, void *buf, size_t len, int timeout_ms)
{
	uint8_t *p = buf;
	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;
		if (poll(&pfd, 1, timeout_ms) <= 0)
			return false;
		r = read(fd, p, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		p += r;
		len -= (size_t)r;
	}
	return true;
}

bool pdu_recv(int fd, struct pdu *p, int timeout_ms)
{
	uint8_t digest[4], pad[4];
	uint32_t padlen;

	memset(p, 0, sizeof(*p));
	if (!read_all(fd, p->bhs, 48, timeout_ms))
		return false;
	if (H.header_digest) {
		if (!read_all(fd, digest, 4, timeout_ms))
			return false;
		ck_assert_uint_eq(iscsi_digest_get(digest), iscsi_crc32c(p->bhs, 48));
	}
	p->data_len = get_be24(p->bhs + 5);
	p->data = calloc(1, p->data_len + 1);
	if (p->data_len && !read_all(fd, p->data, p->data_len, timeout_ms))
		return false;
	padlen = (4 - (p->data_len & 3)) & 3;
	if (padlen && !read_all(fd, pad, padlen, timeout_ms))
		return false;
	if (p->data_len && H.data_digest) {
		if (!read_all(fd, digest, 4, timeout_ms))
			return false;
		ck_assert_uint_eq(iscsi_digest_get(digest),
				  iscsi_crc32c_update(iscsi_crc32c(p->data, p->data_len), pad, padlen));
	}
	return true;
}

void pdu_free(struct pdu *p)
{
	free(p->data);
	p->data = NULL;
}

bool peer_closed(int fd, int timeout_ms)
{
	uint8_t b;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	for (;;) {
		if (poll(&pfd, 1, timeout_ms) <= 0)
			return false;
		ssize_t r = read(fd, &b, 1);
		if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
			return true;
	}
}

void bhs_login(uint8_t *bhs, uint8_t flags, const uint8_t *isid, uint16_t tsih, uint32_t itt, uint32_t cmd_sn,
	       uint32_t exp_stat_sn)
{
	memset(bhs, 0, 48);
	bhs[0] = 0x43;
	bhs[1] = flags;
	memcpy(bhs + 8, isid, 6);
	put_be16(bhs + 14, tsih);
	put_be32(bhs + 16, itt);
	put_be16(bhs + 20, 1); /* CID */
	put_be32(bhs + 24, cmd_sn);
	put_be32(bhs + 28, exp_stat_sn);
}

void bhs_scsi_cmd(uint8_t *bhs, uint8_t flags, uint32_t itt, uint32_t edtl, uint32_t cmd_sn, uint32_t exp_stat_sn,
		  const uint8_t *cdb, size_t cdb_len)
{
	memset(bhs, 0, 48);
	bhs[0] = 0x01;
	bhs[1] = flags;
	put_be32(bhs + 16, itt);
	put_be32(bhs + 20, edtl);
	put_be32(bhs + 24, cmd_sn);
	put_be32(bhs + 28, exp_stat_sn);
	memcpy(bhs + 32, cdb, cdb_len < 16 ? cdb_len : 16);
}

void text_add(char *buf, uint32_t *len, const char *kv)
{
	size_t l = strlen(kv) + 1;
	memcpy(buf + *len, kv, l);
	*len += (uint32_t)l;
}

const char *text_get(const struct pdu *p, const char *key)
{
	size_t klen = strlen(key);
	uint32_t pos = 0;

	while (pos < p->data_len) {
		const char *e = (const char *)p->data + pos;
		if (strncmp(e, key, klen) == 0 && e[klen] == '=')
			return e + klen + 1;
		pos += (uint32_t)strlen(e) + 1;
	}
	return NULL;
}

int login_normal(int fd, const uint8_t *isid, const char *extra, uint32_t *cmd_sn, uint32_t *exp_stat_sn,
		 struct pdu *rsp)
{
	char text[4096];
	uint32_t len = 0;
	uint8_t bhs[48];

	text_add(text, &len, "InitiatorName=" HARNESS_INITIATOR);
	text_add(text, &len, "TargetName=" HARNESS_TARGET);
	text_add(text, &len, "SessionType=Normal");
	if (extra) {
		char copy[2048], *save = NULL;
		snprintf(copy, sizeof(copy), "%s", extra);
		for (char *kv = strtok_r(copy, "\n", &save); kv; kv = strtok_r(NULL, "\n", &save))
			text_add(text, &len, kv);
	}
	/* CSG = operational (1), T, NSG = full feature (3) */
	bhs_login(bhs, 0x80 | (1 << 2) | 3, isid, 0, 0x1000, *cmd_sn, 0);
	pdu_send(fd, bhs, text, len);
	ck_assert(pdu_recv(fd, rsp, 5000));
	ck_assert_uint_eq(rsp->bhs[0], 0x23);
	*exp_stat_sn = get_be32(rsp->bhs + 24) + 1;
	return rsp->bhs[36] << 8 | rsp->bhs[37];
}

bool scsi_no_data(int fd, uint32_t itt, uint32_t *cmd_sn, uint32_t exp_stat_sn, const uint8_t *cdb, size_t cdb_len,
		  struct pdu *rsp)
{
	uint8_t bhs[48];

	bhs_scsi_cmd(bhs, 0x81, itt, 0, (*cmd_sn)++, exp_stat_sn, cdb, cdb_len);
	pdu_send(fd, bhs, NULL, 0);
	return pdu_recv(fd, rsp, 5000);
}

void cdb_rw10(uint8_t *cdb, uint8_t opcode, uint32_t lba, uint16_t blocks)
{
	memset(cdb, 0, 16);
	cdb[0] = opcode;
	put_be32(cdb + 2, lba);
	put_be16(cdb + 7, blocks);
}

void session_open(struct session *s, const char *extra)
{
	struct pdu rsp;
	uint8_t cdb[16];

	memset(s, 0, sizeof(*s));
	s->fd = harness_connect();
	s->cmd_sn = 1;
	s->itt = 0x100;
	ck_assert_int_eq(login_normal(s->fd, harness_isid, extra, &s->cmd_sn, &s->exp_stat_sn, &rsp), 0);
	/* Digests start after the final login response (RFC 7143 13.1). */
	harness_set_digests(text_get(&rsp, "HeaderDigest") && strcmp(text_get(&rsp, "HeaderDigest"), "CRC32C") == 0,
			    text_get(&rsp, "DataDigest") && strcmp(text_get(&rsp, "DataDigest"), "CRC32C") == 0);
	pdu_free(&rsp);
	/* SAM-5 5.14: the first command of a new I_T nexus reports POWER ON / RESET. */
	cdb_rw10(cdb, 0x28, 0, 0);
	ck_assert(scsi_no_data(s->fd, s->itt++, &s->cmd_sn, s->exp_stat_sn, cdb, 10, &rsp));
	ck_assert_uint_eq(rsp.bhs[0], 0x21);
	ck_assert_uint_eq(rsp.bhs[3], 0x02);
	s->exp_stat_sn = get_be32(rsp.bhs + 24) + 1;
	pdu_free(&rsp);
}

/* Sends raw bytes (a header with AHS, hand-built). */
void pdu_send_raw(int fd, const void *buf, size_t len)
{
	write_all(fd, buf, len);
}
