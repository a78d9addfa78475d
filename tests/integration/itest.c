/*
 * Integration-test framework (see itest.h): TAP reporting, libiscsi sessions
 * and raw CDB commands with parsed sense.  The daemon's life cycle is in
 * itest_daemon.c.
 */
#include "itest.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- reporting ---- */

static int checks_run, checks_failed;
static bool keep_dir, verbose;
static const char *program_name = "itest";

void itest_init(int argc, char **argv, const char *program)
{
	program_name = program;
	keep_dir = getenv("ITEST_KEEP") && *getenv("ITEST_KEEP") && strcmp(getenv("ITEST_KEEP"), "0");
	verbose = getenv("ITEST_VERBOSE") && *getenv("ITEST_VERBOSE") && strcmp(getenv("ITEST_VERBOSE"), "0");
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--keep"))
			keep_dir = true;
		else if (!strcmp(argv[i], "--verbose"))
			verbose = true;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	printf("# %s\n", program);
}

bool itest_verbose(void)
{
	return verbose;
}

bool itest_keep_scratch(void)
{
	return keep_dir || checks_failed;
}

bool itest_ok(bool pass, const char *name, const char *why_fmt, ...)
{
	checks_run++;
	if (pass) {
		printf("ok %d - %s\n", checks_run, name);
		return true;
	}
	checks_failed++;
	printf("not ok %d - %s", checks_run, name);
	if (why_fmt && *why_fmt) {
		va_list ap;
		va_start(ap, why_fmt);
		printf(": ");
		vprintf(why_fmt, ap);
		va_end(ap);
	}
	printf("\n");
	return false;
}

void itest_note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

int itest_finish(void)
{
	printf("1..%d\n", checks_run);
	printf("# %s: %d checks, %d passed, %d failed\n", program_name, checks_run, checks_run - checks_failed,
	       checks_failed);
	return checks_failed ? 1 : 0;
}

/* ---- sessions ---- */

struct iscsi_context *itest_connect(const struct itest_daemon *d, const struct itest_login *opt, int lun,
				    char *err, size_t errlen)
{
	struct itest_login dflt = { .initial_r2t = -1, .immediate_data = -1 };
	struct iscsi_context *iscsi;
	char portal[64];

	if (!opt)
		opt = &dflt;
	iscsi = iscsi_create_context(opt->initiator ? opt->initiator : ITEST_INITIATOR_1);
	if (!iscsi) {
		snprintf(err, errlen, "iscsi_create_context failed");
		return NULL;
	}
	snprintf(portal, sizeof(portal), "127.0.0.1:%d", d->port);
	iscsi_set_noautoreconnect(iscsi, 1);
	iscsi_set_timeout(iscsi, 30);
	iscsi_set_session_type(iscsi, opt->discovery ? ISCSI_SESSION_DISCOVERY : ISCSI_SESSION_NORMAL);
	if (!opt->discovery)
		iscsi_set_targetname(iscsi, opt->target ? opt->target : ITEST_TARGET);
	iscsi_set_header_digest(iscsi, opt->header_digest ? ISCSI_HEADER_DIGEST_CRC32C : ISCSI_HEADER_DIGEST_NONE);
	if (opt->initial_r2t >= 0)
		iscsi_set_initial_r2t(iscsi, opt->initial_r2t ? ISCSI_INITIAL_R2T_YES : ISCSI_INITIAL_R2T_NO);
	if (opt->immediate_data >= 0)
		iscsi_set_immediate_data(iscsi, opt->immediate_data ? ISCSI_IMMEDIATE_DATA_YES : ISCSI_IMMEDIATE_DATA_NO);
	if (opt->fixed_isid)
		iscsi_set_isid_random(iscsi, opt->isid_random, 0);
	if (opt->chap_user)
		iscsi_set_initiator_username_pwd(iscsi, opt->chap_user, opt->chap_secret);
	if (opt->mutual_user)
		iscsi_set_target_username_pwd(iscsi, opt->mutual_user, opt->mutual_secret);
	if (opt->discovery) {
		if (iscsi_connect_sync(iscsi, portal) != 0 || iscsi_login_sync(iscsi) != 0) {
			snprintf(err, errlen, "%s", iscsi_get_error(iscsi));
			iscsi_destroy_context(iscsi);
			return NULL;
		}
		return iscsi;
	}
	/*
	 * Connect and log in only: iscsi_full_connect_sync would also send
	 * TEST UNIT READY (and fail the login when it fails); tests clear
	 * unit attentions themselves with itest_clear_ua().
	 */
	(void)lun;
	if (iscsi_connect_sync(iscsi, portal) != 0 || iscsi_login_sync(iscsi) != 0) {
		snprintf(err, errlen, "%s", iscsi_get_error(iscsi));
		iscsi_destroy_context(iscsi);
		return NULL;
	}
	return iscsi;
}

struct iscsi_context *itest_session(const struct itest_daemon *d, const char *initiator, int lun)
{
	struct itest_login opt = { .initiator = initiator, .initial_r2t = -1, .immediate_data = -1 };
	char err[256], name[300];
	struct iscsi_context *iscsi = itest_connect(d, &opt, lun, err, sizeof(err));

	if (!iscsi) {
		snprintf(name, sizeof(name), "login of %s to LUN %d succeeds", initiator ? initiator : ITEST_INITIATOR_1,
			 lun);
		itest_ok(false, name, "%s", err);
		return NULL;
	}
	itest_clear_ua(iscsi, lun);
	return iscsi;
}

void itest_close(struct iscsi_context *iscsi)
{
	if (!iscsi)
		return;
	if (iscsi_is_logged_in(iscsi))
		iscsi_logout_sync(iscsi);
	iscsi_destroy_context(iscsi);
}

/* ---- commands ---- */

void itest_parse_sense(struct itest_sense *s, const uint8_t *p, int len)
{
	memset(s, 0, sizeof(*s));
	s->key = s->asc = s->ascq = -1;
	if (len <= 0)
		return;
	if (len > (int)sizeof(s->raw))
		len = sizeof(s->raw);
	memcpy(s->raw, p, (size_t)len);
	s->len = len;
	switch (p[0] & 0x7f) {
	case 0x70:
	case 0x71:
		if (len >= 3)
			s->key = p[2] & 0x0f;
		if (len >= 7) {
			s->info_valid = (p[0] & 0x80) != 0;
			s->information = itest_get_be32(p + 3);
		}
		if (len >= 14) {
			s->asc = p[12];
			s->ascq = p[13];
		}
		if (len >= 18) {
			s->sksv = (p[15] & 0x80) != 0;
			memcpy(s->sks, p + 15, 3);
		}
		break;
	case 0x72:
	case 0x73: {
		int total;
		s->descriptor = true;
		if (len >= 4) {
			s->key = p[1] & 0x0f;
			s->asc = p[2];
			s->ascq = p[3];
		}
		total = len >= 8 ? 8 + p[7] : len;
		if (total > len)
			total = len;
		for (int off = 8; off + 2 <= total;) {
			int type = p[off], dlen = p[off + 1];
			if (off + 2 + dlen > total)
				break;
			if (type == 0x00 && dlen >= 0x0a) {
				s->info_valid = (p[off + 2] & 0x80) != 0;
				s->information = itest_get_be64(p + off + 4);
			} else if (type == 0x02 && dlen >= 6) {
				s->sksv = (p[off + 4] & 0x80) != 0;
				memcpy(s->sks, p + off + 4, 3);
			}
			off += 2 + dlen;
		}
		break;
	}
	default:
		break;
	}
}

void itest_cmd(struct iscsi_context *iscsi, int lun, const uint8_t *cdb, int cdb_len, enum itest_dir dir,
	       const void *out, size_t out_len, size_t in_len, struct itest_result *r)
{
	struct scsi_task *task, *done;
	struct iscsi_data data = { .size = out_len, .data = (unsigned char *)out };
	uint8_t cdb_copy[32];

	memset(r, 0, sizeof(*r));
	r->status = -1;
	r->sense.key = r->sense.asc = r->sense.ascq = -1;
	memcpy(cdb_copy, cdb, (size_t)cdb_len);
	task = scsi_create_task(cdb_len, cdb_copy, dir, (int)(dir == ITEST_OUT ? out_len : dir == ITEST_IN ? in_len : 0));
	if (!task) {
		snprintf(r->error, sizeof(r->error), "scsi_create_task failed");
		return;
	}
	done = iscsi_scsi_command_sync(iscsi, lun, task, dir == ITEST_OUT && out_len ? &data : NULL);
	if (!done) {
		/* The task may still sit in libiscsi's queues: leak it rather than free it under them. */
		snprintf(r->error, sizeof(r->error), "%s", iscsi_get_error(iscsi));
		return;
	}
	if ((unsigned)done->status >= 0x100) {
		snprintf(r->error, sizeof(r->error), "%s (status 0x%x)", iscsi_get_error(iscsi), (unsigned)done->status);
		scsi_free_scsi_task(done);
		return;
	}
	r->transport_ok = true;
	r->status = done->status;
	r->residual_kind = done->residual_status;
	r->residual = done->residual;
	if (done->status == SCSI_STATUS_CHECK_CONDITION) {
		if (done->datain.size >= 2) {
			int slen = (done->datain.data[0] << 8) | done->datain.data[1];
			if (slen > done->datain.size - 2)
				slen = done->datain.size - 2;
			itest_parse_sense(&r->sense, done->datain.data + 2, slen);
		}
	} else if (done->datain.size > 0) {
		r->data = malloc((size_t)done->datain.size);
		if (r->data) {
			memcpy(r->data, done->datain.data, (size_t)done->datain.size);
			r->data_len = done->datain.size;
		}
	}
	if (verbose) {
		printf("#   cdb");
		for (int i = 0; i < cdb_len; i++)
			printf(" %02x", cdb[i]);
		printf(" -> %s, %d bytes in\n", itest_result_str(r), r->data_len);
	}
	scsi_free_scsi_task(done);
}

void itest_result_free(struct itest_result *r)
{
	free(r->data);
	r->data = NULL;
	r->data_len = 0;
}

const char *itest_result_str(const struct itest_result *r)
{
	static char buf[4][320];
	static int next;
	char *b = buf[next++ % 4];

	if (!r->transport_ok)
		snprintf(b, sizeof(buf[0]), "transport error: %s", r->error);
	else if (r->status == 0)
		snprintf(b, sizeof(buf[0]), "GOOD");
	else if (r->status == 2)
		snprintf(b, sizeof(buf[0]), "CHECK CONDITION %02X/%02X/%02X", r->sense.key & 0xff, r->sense.asc & 0xff,
			 r->sense.ascq & 0xff);
	else if (r->status == 0x18)
		snprintf(b, sizeof(buf[0]), "RESERVATION CONFLICT");
	else
		snprintf(b, sizeof(buf[0]), "status 0x%02x", r->status);
	return b;
}

static const char *expect_str(struct itest_expect e)
{
	static char buf[4][64];
	static int next;
	char *b = buf[next++ % 4];

	if (e.status == 0)
		return "GOOD";
	if (e.status == 0x18)
		return "RESERVATION CONFLICT";
	if (e.status == 2) {
		char k[12] = "xx", a[12] = "xx", q[12] = "xx";
		if (e.key >= 0)
			snprintf(k, sizeof(k), "%02X", e.key);
		if (e.asc >= 0)
			snprintf(a, sizeof(a), "%02X", e.asc);
		if (e.ascq >= 0)
			snprintf(q, sizeof(q), "%02X", e.ascq);
		snprintf(b, sizeof(buf[0]), "CHECK CONDITION %s/%s/%s", k, a, q);
		return b;
	}
	snprintf(b, sizeof(buf[0]), "status 0x%02x", e.status);
	return b;
}

bool itest_result_matches(const struct itest_result *r, struct itest_expect e)
{
	if (!r->transport_ok || r->status != e.status)
		return false;
	if (e.status != 2)
		return true;
	return (e.key < 0 || e.key == r->sense.key) && (e.asc < 0 || e.asc == r->sense.asc) &&
	       (e.ascq < 0 || e.ascq == r->sense.ascq);
}

bool itest_expect_cmd(struct iscsi_context *iscsi, int lun, const char *name, const uint8_t *cdb, int cdb_len,
		      enum itest_dir dir, const void *out, size_t out_len, size_t in_len, struct itest_expect e,
		      struct itest_result *r)
{
	struct itest_result local;
	bool pass;

	if (!r)
		r = &local;
	itest_cmd(iscsi, lun, cdb, cdb_len, dir, out, out_len, in_len, r);
	pass = itest_result_matches(r, e);
	itest_ok(pass, name, "got %s, expected %s", itest_result_str(r), expect_str(e));
	if (r == &local)
		itest_result_free(&local);
	return pass;
}

bool itest_expect_field_pointer(const char *name, const struct itest_result *r, int cd, int byte, int bit)
{
	const uint8_t *s = r->sense.sks;
	int got_cd = (s[0] >> 6) & 1, bpv = (s[0] >> 3) & 1, got_bit = s[0] & 7;
	int got_byte = (s[1] << 8) | s[2];

	if (!r->transport_ok || r->status != 2)
		return itest_ok(false, name, "no sense data (%s)", itest_result_str(r));
	if (!r->sense.sksv)
		return itest_ok(false, name, "SKSV = 0 (no field pointer)");
	if (got_cd != cd || got_byte != byte || (bit >= 0 && (!bpv || got_bit != bit)))
		return itest_ok(false, name, "field pointer C/D=%d byte %d BPV=%d bit %d, expected C/D=%d byte %d bit %d",
				got_cd, got_byte, bpv, got_bit, cd, byte, bit);
	return itest_ok(true, name, NULL);
}

void itest_clear_ua(struct iscsi_context *iscsi, int lun)
{
	static const uint8_t tur[6] = { 0 };
	struct itest_result r;

	for (int i = 0; i < 10; i++) {
		itest_cmd(iscsi, lun, tur, 6, ITEST_NONE, NULL, 0, 0, &r);
		if (!r.transport_ok || r.status != 2 || r.sense.key != 6)
			return;
	}
}

/* ---- helpers ---- */

void itest_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

void itest_put_be32(uint8_t *p, uint32_t v)
{
	itest_put_be16(p, (uint16_t)(v >> 16));
	itest_put_be16(p + 2, (uint16_t)v);
}

void itest_put_be64(uint8_t *p, uint64_t v)
{
	itest_put_be32(p, (uint32_t)(v >> 32));
	itest_put_be32(p + 4, (uint32_t)v);
}

uint16_t itest_get_be16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

uint32_t itest_get_be32(const uint8_t *p)
{
	return ((uint32_t)itest_get_be16(p) << 16) | itest_get_be16(p + 2);
}

uint64_t itest_get_be64(const uint8_t *p)
{
	return ((uint64_t)itest_get_be32(p) << 32) | itest_get_be32(p + 4);
}

void itest_pattern(uint8_t *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (uint8_t)x;
	}
}

bool itest_write16(struct iscsi_context *iscsi, int lun, uint64_t lba, const void *buf, uint32_t nblocks,
		   uint32_t block_size, bool fua, const char *name)
{
	uint8_t cdb[16] = { 0x8a, fua ? 0x08 : 0x00 };
	struct itest_result r;

	itest_put_be64(cdb + 2, lba);
	itest_put_be32(cdb + 10, nblocks);
	itest_cmd(iscsi, lun, cdb, 16, ITEST_OUT, buf, (size_t)nblocks * block_size, 0, &r);
	itest_result_free(&r);
	if (r.transport_ok && r.status == 0)
		return true;
	if (name)
		itest_ok(false, name, "WRITE(16) LBA %llu x %u: %s", (unsigned long long)lba, nblocks, itest_result_str(&r));
	return false;
}

bool itest_read16(struct iscsi_context *iscsi, int lun, uint64_t lba, void *buf, uint32_t nblocks, uint32_t block_size,
		  const char *name)
{
	uint8_t cdb[16] = { 0x88 };
	struct itest_result r;
	size_t len = (size_t)nblocks * block_size;

	itest_put_be64(cdb + 2, lba);
	itest_put_be32(cdb + 10, nblocks);
	itest_cmd(iscsi, lun, cdb, 16, ITEST_IN, NULL, 0, len, &r);
	if (r.transport_ok && r.status == 0 && (size_t)r.data_len == len) {
		memcpy(buf, r.data, len);
		itest_result_free(&r);
		return true;
	}
	if (name)
		itest_ok(false, name, "READ(16) LBA %llu x %u: %s, %d bytes", (unsigned long long)lba, nblocks,
			 itest_result_str(&r), r.data_len);
	itest_result_free(&r);
	return false;
}

bool itest_blocks_are(struct iscsi_context *iscsi, int lun, uint64_t lba, uint32_t nblocks, uint32_t block_size,
		      const uint8_t *want)
{
	uint8_t *got = malloc((size_t)nblocks * block_size);
	bool same = got && itest_read16(iscsi, lun, lba, got, nblocks, block_size, "READ(16) of the blocks") &&
		    memcmp(got, want, (size_t)nblocks * block_size) == 0;

	free(got);
	return same;
}

long itest_proc_kib(pid_t pid, const char *key)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

long long itest_json_num(const char *json, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

bool itest_daemon_log_has(const struct itest_daemon *d, const char *text)
{
	char line[1024];
	bool found = false;
	FILE *f = fopen(d->log, "r");

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, text) != NULL;
	if (f)
		fclose(f);
	return found;
}

long long itest_capacity10(struct iscsi_context *iscsi, int lun)
{
	uint8_t cdb[10] = { 0x25 };
	struct itest_result r;
	long long n = -1;

	itest_cmd(iscsi, lun, cdb, 10, ITEST_IN, NULL, 0, 8, &r);
	if (r.transport_ok && r.status == 0 && r.data_len >= 8)
		n = (long long)itest_get_be32(r.data) + 1;
	itest_result_free(&r);
	return n;
}

uint64_t itest_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t itest_seed(const char *env)
{
	const char *v = getenv(env);
	uint64_t seed = v ? strtoull(v, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);

	return seed ? seed : 1;
}

uint64_t itest_rnd(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

uint64_t itest_below(uint64_t *state, uint64_t n)
{
	return n ? itest_rnd(state) % n : 0;
}

void itest_service(struct iscsi_context *iscsi, int ms, const bool *stop)
{
	uint64_t end = itest_now_ms() + (uint64_t)ms;

	while (itest_now_ms() < end && !(stop && *stop)) {
		struct pollfd p = { .fd = iscsi_get_fd(iscsi), .events = (short)iscsi_which_events(iscsi) };
		int n = poll(&p, 1, 50);

		if (n < 0 && errno != EINTR)
			break;
		if (iscsi_service(iscsi, n > 0 ? p.revents : 0) < 0) {
			itest_note("iscsi_service: %s", iscsi_get_error(iscsi));
			break;
		}
	}
}

void itest_async_cmd_cb(struct iscsi_context *iscsi, int status, void *command_data, void *priv)
{
	struct itest_async *a = priv;

	(void)iscsi;
	(void)command_data;
	a->done = true;
	a->status = status;
}

void itest_async_tmf_cb(struct iscsi_context *iscsi, int status, void *command_data, void *priv)
{
	struct itest_async *a = priv;

	(void)iscsi;
	a->done = true;
	a->status = status;
	a->response = status == SCSI_STATUS_GOOD && command_data ? *(uint32_t *)command_data : 0xffffffffu;
}
