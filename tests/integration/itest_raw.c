/* Raw iSCSI PDUs over TCP for the integration tests (see itest_raw.h). */
#include "itest_raw.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

uint32_t itest_crc32c(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint32_t crc = 0xffffffffu;

	while (n--) {
		crc ^= *b++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
	}
	return crc ^ 0xffffffffu;
}

/* The digest goes on the wire least significant byte first (as libiscsi and Linux send it). */
static void put_digest(uint8_t *p, uint32_t crc)
{
	p[0] = (uint8_t)crc;
	p[1] = (uint8_t)(crc >> 8);
	p[2] = (uint8_t)(crc >> 16);
	p[3] = (uint8_t)(crc >> 24);
}

static uint32_t get_digest(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int itest_raw_connect(const struct itest_daemon *d)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)d->port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int itest_raw_write(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n > 0) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

int itest_raw_send(struct itest_raw *c, uint8_t bhs[48], const void *data, uint32_t len)
{
	uint8_t hd[4], dd[4], pad[4] = { 0 };
	uint32_t padlen = (4 - (len & 3)) & 3;

	bhs[4] = 0;
	bhs[5] = (uint8_t)(len >> 16);
	bhs[6] = (uint8_t)(len >> 8);
	bhs[7] = (uint8_t)len;
	if (itest_raw_write(c->fd, bhs, 48))
		return -1;
	if (c->header_digest) {
		put_digest(hd, itest_crc32c(bhs, 48));
		if (itest_raw_write(c->fd, hd, 4))
			return -1;
	}
	if (len) {
		if (itest_raw_write(c->fd, data, len) || (padlen && itest_raw_write(c->fd, pad, padlen)))
			return -1;
		if (c->data_digest) {
			uint8_t *tmp = malloc(len + padlen);
			if (!tmp)
				return -1;
			memcpy(tmp, data, len);
			memset(tmp + len, 0, padlen);
			put_digest(dd, itest_crc32c(tmp, len + padlen));
			free(tmp);
			if (itest_raw_write(c->fd, dd, 4))
				return -1;
		}
	}
	return 0;
}

/* Reads exactly n bytes before the deadline: 1 ok, 0 EOF, -1 error, -2 timeout. */
static int read_full(int fd, void *p, size_t n, uint64_t deadline)
{
	uint8_t *b = p;

	while (n > 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now = itest_now_ms();
		int r;
		ssize_t got;

		if (now >= deadline)
			return -2;
		r = poll(&pfd, 1, (int)(deadline - now));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return -2;
		got = recv(fd, b, n, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -1;
		if (got == 0)
			return 0;
		b += got;
		n -= (size_t)got;
	}
	return 1;
}

int itest_raw_recv(struct itest_raw *c, struct itest_pdu *pdu, int timeout_ms)
{
	uint64_t deadline = itest_now_ms() + (uint64_t)timeout_ms;
	uint8_t dig[4];
	uint32_t ahs, dsl, padded;
	int r;

	memset(pdu, 0, sizeof(*pdu));
	r = read_full(c->fd, pdu->bhs, 48, deadline);
	if (r != 1)
		return r;
	ahs = pdu->bhs[4] * 4u;
	dsl = (uint32_t)pdu->bhs[5] << 16 | (uint32_t)pdu->bhs[6] << 8 | pdu->bhs[7];
	if (ahs) { /* targets send no AHS; skip it */
		uint8_t skip[1024];
		if (ahs > sizeof(skip))
			return -3;
		r = read_full(c->fd, skip, ahs, deadline);
		if (r != 1)
			return r;
	}
	if (c->header_digest) {
		r = read_full(c->fd, dig, 4, deadline);
		if (r != 1)
			return r;
		if (get_digest(dig) != itest_crc32c(pdu->bhs, 48))
			return -3;
	}
	if (dsl > 16u * 1024 * 1024)
		return -3;
	padded = (dsl + 3) & ~3u;
	pdu->data = malloc(padded + 1);
	if (!pdu->data)
		return -1;
	if (padded) {
		r = read_full(c->fd, pdu->data, padded, deadline);
		if (r != 1)
			return r;
		if (c->data_digest) {
			r = read_full(c->fd, dig, 4, deadline);
			if (r != 1)
				return r;
			if (get_digest(dig) != itest_crc32c(pdu->data, padded))
				return -3;
		}
	}
	pdu->data[dsl] = '\0';
	pdu->data_len = dsl;
	return 1;
}

void itest_pdu_free(struct itest_pdu *pdu)
{
	free(pdu->data);
	pdu->data = NULL;
}

int itest_raw_wait_closed(struct itest_raw *c, int timeout_ms)
{
	uint64_t deadline = itest_now_ms() + (uint64_t)timeout_ms;
	uint8_t buf[4096];

	for (;;) {
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		uint64_t now = itest_now_ms();
		ssize_t got;

		if (now >= deadline)
			return 0;
		if (poll(&pfd, 1, (int)(deadline - now)) <= 0)
			continue;
		got = recv(c->fd, buf, sizeof(buf), 0);
		if (got <= 0)
			return 1;
	}
}

/* Appends "key=value\0" to a text buffer. */
static void add_key(char *buf, size_t *len, size_t cap, const char *kv)
{
	size_t n = strlen(kv) + 1;
	if (*len + n <= cap) {
		memcpy(buf + *len, kv, n);
		*len += n;
	}
}

/* Finds key in a text data segment; returns its value or NULL. */
static const char *find_key(const struct itest_pdu *p, const char *key)
{
	size_t klen = strlen(key);
	for (uint32_t off = 0; off < p->data_len;) {
		const char *kv = (const char *)p->data + off;
		size_t n = strnlen(kv, p->data_len - off);
		if (n > klen && !strncmp(kv, key, klen) && kv[klen] == '=')
			return kv + klen + 1;
		off += (uint32_t)n + 1;
	}
	return NULL;
}

int itest_raw_login(struct itest_raw *c, const struct itest_daemon *d, const char *initiator, const char *target,
		    bool digests, bool initial_r2t, bool immediate_data, char *err, size_t errlen)
{
	return itest_raw_login_auth(c, d, initiator, target, digests, initial_r2t, immediate_data, "None", err, errlen);
}

int itest_raw_login_auth(struct itest_raw *c, const struct itest_daemon *d, const char *initiator,
			 const char *target, bool digests, bool initial_r2t, bool immediate_data, const char *auth_offer,
			 char *err, size_t errlen)
{
	static uint8_t isid_seq;
	char keys[2048], kv[512];
	size_t klen;
	int csg = 0, nsg = 1, rounds = 0;
	bool hdig = false, ddig = false;
	uint8_t isid = ++isid_seq;
	uint32_t itt = 0x1000;

	memset(c, 0, sizeof(*c));
	c->fd = itest_raw_connect(d);
	c->cmdsn = 1;
	c->itt = 0x2000;
	c->target_mrdsl = 8192;
	c->max_burst = 262144;
	c->first_burst = 65536;
	if (c->fd < 0) {
		snprintf(err, errlen, "connect: %s", strerror(errno));
		return -1;
	}
	for (;;) {
		uint8_t bhs[48] = { 0 };
		struct itest_pdu rsp;
		int r;

		klen = 0;
		if (rounds == 0 && csg == 0) {
			snprintf(kv, sizeof(kv), "InitiatorName=%s", initiator);
			add_key(keys, &klen, sizeof(keys), kv);
			snprintf(kv, sizeof(kv), "TargetName=%s", target);
			add_key(keys, &klen, sizeof(keys), kv);
			add_key(keys, &klen, sizeof(keys), "SessionType=Normal");
			snprintf(kv, sizeof(kv), "AuthMethod=%s", auth_offer);
			add_key(keys, &klen, sizeof(keys), kv);
		} else if (rounds == 0 && csg == 1) {
			add_key(keys, &klen, sizeof(keys), digests ? "HeaderDigest=CRC32C" : "HeaderDigest=None");
			add_key(keys, &klen, sizeof(keys), digests ? "DataDigest=CRC32C" : "DataDigest=None");
			add_key(keys, &klen, sizeof(keys), initial_r2t ? "InitialR2T=Yes" : "InitialR2T=No");
			add_key(keys, &klen, sizeof(keys), immediate_data ? "ImmediateData=Yes" : "ImmediateData=No");
			add_key(keys, &klen, sizeof(keys), "MaxRecvDataSegmentLength=262144");
			add_key(keys, &klen, sizeof(keys), "MaxBurstLength=262144");
			add_key(keys, &klen, sizeof(keys), "FirstBurstLength=65536");
			add_key(keys, &klen, sizeof(keys), "MaxConnections=1");
			add_key(keys, &klen, sizeof(keys), "ErrorRecoveryLevel=0");
			add_key(keys, &klen, sizeof(keys), "DataPDUInOrder=Yes");
			add_key(keys, &klen, sizeof(keys), "DataSequenceInOrder=Yes");
			add_key(keys, &klen, sizeof(keys), "MaxOutstandingR2T=1");
			add_key(keys, &klen, sizeof(keys), "DefaultTime2Wait=0");
			add_key(keys, &klen, sizeof(keys), "DefaultTime2Retain=0");
		}
		bhs[0] = 0x40 | RAW_OP_LOGIN_REQ;
		bhs[1] = (uint8_t)(0x80 | csg << 2 | nsg);
		bhs[8] = 0x80; /* ISID: random format (RFC 7143 11.12.5), the same in every PDU of the login */
		bhs[9] = 0x5b;
		bhs[10] = 0xce;
		bhs[11] = (uint8_t)getpid();
		bhs[12] = (uint8_t)(getpid() >> 8);
		bhs[13] = isid;
		itest_put_be32(bhs + 16, itt);
		itest_put_be32(bhs + 24, c->cmdsn);
		itest_put_be32(bhs + 28, c->exp_statsn);
		if (itest_raw_send(c, bhs, keys, (uint32_t)klen)) {
			snprintf(err, errlen, "send login: %s", strerror(errno));
			goto fail;
		}
		r = itest_raw_recv(c, &rsp, 10000);
		if (r != 1) {
			snprintf(err, errlen, "no login response (%d)", r);
			goto fail;
		}
		if ((rsp.bhs[0] & 0x3f) != RAW_OP_LOGIN_RSP || rsp.bhs[36] != 0) {
			snprintf(err, errlen, "login response opcode 0x%02x status class %u detail %u", rsp.bhs[0] & 0x3f,
				 rsp.bhs[36], rsp.bhs[37]);
			itest_pdu_free(&rsp);
			goto fail;
		}
		c->exp_statsn = itest_get_be32(rsp.bhs + 24) + 1;
		{
			const char *v;
			if ((v = find_key(&rsp, "MaxRecvDataSegmentLength")))
				c->target_mrdsl = (uint32_t)strtoul(v, NULL, 10);
			if ((v = find_key(&rsp, "HeaderDigest")))
				hdig = !strcmp(v, "CRC32C");
			if ((v = find_key(&rsp, "DataDigest")))
				ddig = !strcmp(v, "CRC32C");
			if ((v = find_key(&rsp, "MaxBurstLength")))
				c->max_burst = (uint32_t)strtoul(v, NULL, 10);
			if ((v = find_key(&rsp, "FirstBurstLength")))
				c->first_burst = (uint32_t)strtoul(v, NULL, 10);
			if ((v = find_key(&rsp, "InitialR2T")))
				c->initial_r2t = !strcmp(v, "Yes");
			else if (csg == 1)
				c->initial_r2t = initial_r2t;
			if ((v = find_key(&rsp, "ImmediateData")))
				c->immediate_data = !strcmp(v, "Yes");
			else if (csg == 1)
				c->immediate_data = immediate_data;
		}
		if (rsp.bhs[1] & 0x80) { /* transit */
			int rsp_nsg = rsp.bhs[1] & 3;
			itest_pdu_free(&rsp);
			if (rsp_nsg == 3) {
				c->tsih = itest_get_be16(rsp.bhs + 14);
				/* Digests apply from the first PDU after the final Login Response. */
				c->header_digest = hdig;
				c->data_digest = ddig;
				return 0;
			}
			csg = rsp_nsg;
			nsg = 3;
			rounds = 0;
		} else {
			itest_pdu_free(&rsp);
			if (++rounds > 8) {
				snprintf(err, errlen, "login does not converge");
				goto fail;
			}
		}
	}
fail:
	close(c->fd);
	c->fd = -1;
	return -1;
}

void itest_raw_close(struct itest_raw *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

void itest_raw_scsi_cmd(struct itest_raw *c, uint8_t bhs[48], int lun, const uint8_t *cdb, int cdb_len, bool read,
			bool write, uint32_t edtl)
{
	memset(bhs, 0, 48);
	bhs[0] = RAW_OP_SCSI_CMD;
	bhs[1] = (uint8_t)(0x80 | (read ? 0x40 : 0) | (write ? 0x20 : 0) | 1);
	bhs[9] = (uint8_t)lun; /* peripheral device addressing, LUN < 256 */
	itest_put_be32(bhs + 16, c->itt++);
	itest_put_be32(bhs + 20, edtl);
	itest_put_be32(bhs + 24, c->cmdsn++);
	itest_put_be32(bhs + 28, c->exp_statsn);
	memcpy(bhs + 32, cdb, (size_t)(cdb_len > 16 ? 16 : cdb_len));
}

int itest_raw_nodata_cmd(struct itest_raw *c, int lun, const uint8_t *cdb, int cdb_len, int *sense_key)
{
	uint8_t bhs[48];
	struct itest_pdu p;
	uint32_t itt = c->itt;

	itest_raw_scsi_cmd(c, bhs, lun, cdb, cdb_len, false, false, 0);
	if (itest_raw_send(c, bhs, NULL, 0))
		return -1;
	while (itest_raw_recv(c, &p, 10000) == 1) {
		if ((p.bhs[0] & 0x3f) == RAW_OP_SCSI_RSP && itest_get_be32(p.bhs + 16) == itt) {
			int status = p.bhs[3];
			c->exp_statsn = itest_get_be32(p.bhs + 24) + 1;
			/* Sense: 2-byte SenseLength, then fixed (70h) or descriptor (72h) sense data. */
			if (sense_key) {
				*sense_key = -1;
				if (p.data_len >= 5)
					*sense_key = (p.data[2] & 0x7f) >= 0x72 ? p.data[3] & 0x0f : p.data[4] & 0x0f;
			}
			itest_pdu_free(&p);
			return status;
		}
		itest_pdu_free(&p);
	}
	return -1;
}

void itest_raw_clear_ua(struct itest_raw *c, int lun)
{
	static const uint8_t tur[6] = { 0 };
	for (int i = 0; i < 10; i++) {
		int key;
		if (itest_raw_nodata_cmd(c, lun, tur, 6, &key) != 2 || key != 6)
			return;
	}
}

void itest_raw_long_cdb_cmd(struct itest_raw *c, int lun, const uint8_t *cdb, int cdb_len, const void *out,
			    uint32_t out_len, struct itest_result *r)
{
	itest_raw_long_cdb_io(c, lun, cdb, cdb_len, out, out_len, 0, r);
}

/* A Data-In PDU of the command: its data at BUFFER OFFSET; with the S bit it carries the status. */
static bool take_data_in(struct itest_raw *c, const struct itest_pdu *p, uint32_t in_len, struct itest_result *r)
{
	uint32_t offset = itest_get_be32(p->bhs + 40);

	if (offset < in_len) {
		uint32_t n = p->data_len < in_len - offset ? p->data_len : in_len - offset;

		memcpy(r->data + offset, p->data, n);
		if ((int)(offset + n) > r->data_len)
			r->data_len = (int)(offset + n);
	}
	if (!(p->bhs[1] & 0x01))
		return false;
	r->transport_ok = true;
	r->status = p->bhs[3];
	c->exp_statsn = itest_get_be32(p->bhs + 24) + 1;
	return true;
}

void itest_raw_long_cdb_io(struct itest_raw *c, int lun, const uint8_t *cdb, int cdb_len, const void *out,
			   uint32_t out_len, uint32_t in_len, struct itest_result *r)
{
	/* itest_raw_scsi_cmd's LUN: peripheral device addressing, byte 1. */
	itest_raw_cmd_lun64(c, (uint64_t)(uint8_t)lun << 48, cdb, cdb_len, out, out_len, in_len, r);
}

int itest_raw_submit_lun64(struct itest_raw *c, uint64_t sam_lun, const uint8_t *cdb, int cdb_len, const void *out,
			   uint32_t out_len, uint32_t in_len, uint32_t *itt, char *err, size_t errlen)
{
	uint8_t bhs[48], ahs[260] = { 0 };
	uint32_t ahs_bytes = 0, extra = cdb_len > 16 ? (uint32_t)cdb_len - 16 : 0;

	if (out_len > c->first_burst || out_len > c->target_mrdsl || !c->immediate_data || c->header_digest) {
		snprintf(err, errlen, "Data-Out does not fit one immediate-data PDU");
		return -1;
	}
	*itt = c->itt;
	itest_raw_scsi_cmd(c, bhs, 0, cdb, cdb_len, in_len > 0, out_len > 0, in_len ? in_len : out_len);
	itest_put_be64(bhs + 8, sam_lun);
	if (extra) {
		/* AHSLength counts the reserved byte and the CDB bytes; the entry is padded to 4 bytes. */
		itest_put_be16(ahs, (uint16_t)(extra + 1));
		ahs[2] = 0x01; /* Extended CDB */
		memcpy(ahs + 4, cdb + 16, extra);
		ahs_bytes = (4 + extra + 3) & ~3u;
	}
	bhs[4] = (uint8_t)(ahs_bytes / 4);
	bhs[5] = (uint8_t)(out_len >> 16);
	bhs[6] = (uint8_t)(out_len >> 8);
	bhs[7] = (uint8_t)out_len;
	if (itest_raw_write(c->fd, bhs, 48) || (ahs_bytes && itest_raw_write(c->fd, ahs, ahs_bytes)) ||
	    (out_len && itest_raw_write(c->fd, out, out_len)) ||
	    (out_len & 3 && itest_raw_write(c->fd, "\0\0\0", 4 - (out_len & 3)))) {
		snprintf(err, errlen, "send failed");
		return -1;
	}
	return 0;
}

void itest_raw_collect(struct itest_raw *c, uint32_t *itt, uint32_t in_len, struct itest_result *r)
{
	bool any = *itt == ITEST_RAW_ANY_ITT;
	struct itest_pdu p;

	memset(r, 0, sizeof(*r));
	r->status = -1;
	if (in_len && !(r->data = calloc(1, in_len))) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		return;
	}
	while (itest_raw_recv(c, &p, 10000) == 1) {
		uint32_t pdu_itt = itest_get_be32(p.bhs + 16);
		bool mine = any || pdu_itt == *itt;

		if ((p.bhs[0] & 0x3f) == RAW_OP_DATA_IN && mine && (in_len || any)) {
			bool done = take_data_in(c, &p, any ? 0 : in_len, r);

			itest_pdu_free(&p);
			if (done) {
				*itt = pdu_itt;
				return;
			}
			continue;
		}
		if ((p.bhs[0] & 0x3f) == RAW_OP_SCSI_RSP && mine) {
			r->transport_ok = true;
			r->status = p.bhs[3];
			c->exp_statsn = itest_get_be32(p.bhs + 24) + 1;
			if (p.data_len >= 2) {
				int slen = itest_get_be16(p.data);
				itest_parse_sense(&r->sense, p.data + 2,
						  slen < (int)p.data_len - 2 ? slen : (int)p.data_len - 2);
			}
			*itt = pdu_itt;
			itest_pdu_free(&p);
			return;
		}
		if ((p.bhs[0] & 0x3f) == RAW_OP_REJECT) {
			snprintf(r->error, sizeof(r->error), "Reject, reason %02x", p.bhs[2]);
			itest_pdu_free(&p);
			return;
		}
		itest_pdu_free(&p);
	}
	snprintf(r->error, sizeof(r->error), "no SCSI Response");
}

void itest_raw_cmd_lun64(struct itest_raw *c, uint64_t sam_lun, const uint8_t *cdb, int cdb_len, const void *out,
			 uint32_t out_len, uint32_t in_len, struct itest_result *r)
{
	uint32_t itt;

	memset(r, 0, sizeof(*r));
	r->status = -1;
	if (itest_raw_submit_lun64(c, sam_lun, cdb, cdb_len, out, out_len, in_len, &itt, r->error,
				   sizeof(r->error)) != 0)
		return;
	itest_raw_collect(c, &itt, in_len, r);
}
