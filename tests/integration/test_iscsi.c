/*
 * iSCSI session layer (RFC 7143) against sbcemud: login without and with
 * CHAP (one-way and mutual; wrong secrets and unknown targets rejected),
 * HeaderDigest CRC32C through libiscsi and HeaderDigest + DataDigest CRC32C
 * through a raw session, discovery SendTargets, NOP-Out ping, logout, two
 * sessions at once, several targets with their own LUs.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "itest_raw.h"

#define T_CHAP "iqn.2026-12.org.sbcemu:itest-chap"
#define T_MUTUAL "iqn.2026-12.org.sbcemu:itest-mutual"
#define T_SECOND "iqn.2026-12.org.sbcemu:itest-2"
#define CHAP_USER "itest-user"
#define CHAP_SECRET "itest-secret-12345"
#define MUTUAL_USER "itest-target"
#define MUTUAL_SECRET "itest-target-secret-678"

static const char config[] =
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/t1-lun0.img\n"
	"size = 64M\n"
	"\n"
	"[target \"" T_CHAP "\"]\n"
	"chap_user = " CHAP_USER "\n"
	"chap_secret = " CHAP_SECRET "\n"
	"[lun \"" T_CHAP "\" 0]\n"
	"path = @DIR@/chap-lun0.img\n"
	"size = 16M\n"
	"\n"
	"[target \"" T_MUTUAL "\"]\n"
	"chap_user = " CHAP_USER "\n"
	"chap_secret = " CHAP_SECRET "\n"
	"mutual_user = " MUTUAL_USER "\n"
	"mutual_secret = " MUTUAL_SECRET "\n"
	"[lun \"" T_MUTUAL "\" 0]\n"
	"path = @DIR@/mutual-lun0.img\n"
	"size = 16M\n"
	"\n"
	"[target \"" T_SECOND "\"]\n"
	"[lun \"" T_SECOND "\" 0]\n"
	"path = @DIR@/t2-lun0.img\n"
	"size = 32M\n"
	"[lun \"" T_SECOND "\" 3]\n"
	"path = @DIR@/t2-lun3.img\n"
	"size = 8M\n"
	"logical_block_size = 4096\n";

static struct itest_daemon d;

static struct iscsi_context *login(const char *name, struct itest_login *opt, bool expect_ok)
{
	char err[256];
	struct iscsi_context *s;

	s = itest_connect(&d, opt, 0, err, sizeof(err));
	if (expect_ok)
		itest_ok(s != NULL, name, "%s", err);
	else
		itest_ok(s == NULL, name, "login succeeded");
	return s;
}

static bool tur_ok(struct iscsi_context *s, int lun)
{
	uint8_t cdb[6] = { 0 };
	struct itest_result r;
	itest_clear_ua(s, lun);
	itest_cmd(s, lun, cdb, 6, ITEST_NONE, NULL, 0, 0, &r);
	return itest_result_matches(&r, EXPECT_GOOD);
}

static bool io_round_trip(struct iscsi_context *s, int lun, uint64_t lba, uint32_t n, uint32_t bs, uint32_t seed)
{
	size_t len = (size_t)n * bs;
	uint8_t *w = malloc(len), *rd = malloc(len);
	bool ok;

	itest_pattern(w, len, seed);
	ok = itest_write16(s, lun, lba, w, n, bs, false, NULL) && itest_read16(s, lun, lba, rd, n, bs, NULL) &&
	     !memcmp(w, rd, len);
	free(w);
	free(rd);
	return ok;
}

static void test_login(void)
{
	struct iscsi_context *s;

	{
		struct itest_login o = { .initial_r2t = -1, .immediate_data = -1 };
		s = login("login without CHAP to an open target -> success", &o, true);
		if (s)
			itest_ok(tur_ok(s, 0), "session without CHAP: TEST UNIT READY -> GOOD", NULL);
		itest_close(s);
	}
	{
		struct itest_login o = { .target = "iqn.2026-12.org.sbcemu:no-such-target", .initial_r2t = -1,
					 .immediate_data = -1 };
		s = login("login to an unknown target name -> rejected", &o, false);
		itest_close(s);
	}
	{
		struct itest_login o = { .target = T_CHAP, .initial_r2t = -1, .immediate_data = -1 };
		s = login("login without credentials to a CHAP target -> rejected", &o, false);
		itest_close(s);
	}
	{
		struct itest_login o = { .target = T_CHAP, .chap_user = CHAP_USER, .chap_secret = CHAP_SECRET,
					 .initial_r2t = -1, .immediate_data = -1 };
		s = login("one-way CHAP with the right secret -> success", &o, true);
		if (s)
			itest_ok(tur_ok(s, 0), "one-way CHAP session: TEST UNIT READY -> GOOD", NULL);
		itest_close(s);
	}
	{
		struct itest_login o = { .target = T_CHAP, .chap_user = CHAP_USER, .chap_secret = "wrong-secret-000000",
					 .initial_r2t = -1, .immediate_data = -1 };
		s = login("one-way CHAP with a wrong secret -> rejected", &o, false);
		itest_close(s);
	}
	{
		struct itest_login o = { .target = T_CHAP, .chap_user = "someone-else", .chap_secret = CHAP_SECRET,
					 .initial_r2t = -1, .immediate_data = -1 };
		s = login("one-way CHAP with an unknown user name -> rejected", &o, false);
		itest_close(s);
	}
	{
		struct itest_login o = { .target = T_MUTUAL, .chap_user = CHAP_USER, .chap_secret = CHAP_SECRET,
					 .mutual_user = MUTUAL_USER, .mutual_secret = MUTUAL_SECRET, .initial_r2t = -1,
					 .immediate_data = -1 };
		s = login("mutual CHAP with the right secrets -> success", &o, true);
		if (s)
			itest_ok(tur_ok(s, 0), "mutual CHAP session: TEST UNIT READY -> GOOD", NULL);
		itest_close(s);
	}
	{
		/* The initiator checks the target's answer: a target that knows another secret fails. */
		struct itest_login o = { .target = T_MUTUAL, .chap_user = CHAP_USER, .chap_secret = CHAP_SECRET,
					 .mutual_user = MUTUAL_USER, .mutual_secret = "not-the-target-secret",
					 .initial_r2t = -1, .immediate_data = -1 };
		s = login("mutual CHAP: target's response checked against the initiator's secret -> rejected", &o, false);
		itest_close(s);
	}
	{
		struct itest_login o = { .target = T_MUTUAL, .chap_user = CHAP_USER, .chap_secret = "wrong-secret-000000",
					 .mutual_user = MUTUAL_USER, .mutual_secret = MUTUAL_SECRET, .initial_r2t = -1,
					 .immediate_data = -1 };
		s = login("mutual CHAP with a wrong initiator secret -> rejected", &o, false);
		itest_close(s);
	}
	{
		/*
		 * An initiator offering AuthMethod=CHAP,None to a target without CHAP: the target
		 * answers None and the login completes.  (Raw login: libiscsi 1.19 re-declares
		 * InitiatorName/TargetName/SessionType in its operational-stage PDU after such an
		 * exchange, which RFC 7143 6.2 tells a target to reject; see the note below.)
		 */
		struct itest_raw c;
		char err[256];
		int rc = itest_raw_login_auth(&c, &d, ITEST_INITIATOR_1, ITEST_TARGET, false, false, true, "CHAP,None",
					      err, sizeof(err));
		itest_ok(rc == 0, "AuthMethod=CHAP,None offered to a target without CHAP -> None chosen, login succeeds",
			 "%s", err);
		if (rc == 0)
			itest_raw_close(&c);
	}
	{
		struct itest_login o = { .chap_user = CHAP_USER, .chap_secret = CHAP_SECRET, .initial_r2t = -1,
					 .immediate_data = -1 };
		char err[256];
		s = itest_connect(&d, &o, 0, err, sizeof(err));
		itest_note("libiscsi with CHAP credentials against a target without CHAP: %s",
			   s ? "login succeeded" : err);
		itest_close(s);
	}
	itest_ok(itest_daemon_alive(&d), "sbcemud alive after failed logins", NULL);
}

static void test_digests(void)
{
	struct itest_login o = { .header_digest = true, .initial_r2t = -1, .immediate_data = -1 };
	struct iscsi_context *s = login("login with HeaderDigest=CRC32C (libiscsi) -> success", &o, true);
	struct itest_raw c;
	char err[256];

	if (s) {
		itest_ok(tur_ok(s, 0), "HeaderDigest session: TEST UNIT READY -> GOOD", NULL);
		itest_ok(io_round_trip(s, 0, 1000, 2048, 512, 5), "HeaderDigest session: 1 MiB WRITE/READ round trip", NULL);
		itest_close(s);
	}

	/* Raw session with both digests: libiscsi 1.19 offers DataDigest=None only. */
	if (!itest_ok(itest_raw_login(&c, &d, ITEST_INITIATOR_1, ITEST_TARGET, true, false, true, err, sizeof(err)) == 0,
		      "raw login offering HeaderDigest=CRC32C DataDigest=CRC32C -> success", "%s", err))
		return;
	itest_ok(c.header_digest && c.data_digest, "target accepts HeaderDigest=CRC32C and DataDigest=CRC32C",
		 "header %d data %d", c.header_digest, c.data_digest);
	itest_raw_clear_ua(&c, 0);
	{
		uint8_t bhs[48], cdb[16] = { 0x2a, 0, 0, 0, 0x10, 0, 0, 0, 8, 0 }, data[4096];
		uint8_t rcdb[16] = { 0x28, 0, 0, 0, 0x10, 0, 0, 0, 8, 0 };
		struct itest_pdu p;
		int got = 0, status = -1, rc;
		uint8_t *in = calloc(1, 4096);
		uint32_t in_len = 0;

		itest_pattern(data, sizeof(data), 42);
		/* WRITE(10) 8 blocks; the 4 KiB ride as immediate data (ImmediateData=Yes, InitialR2T=No offered). */
		itest_raw_scsi_cmd(&c, bhs, 0, cdb, 10, false, true, 4096);
		if (!c.immediate_data && !c.initial_r2t) {
			/* Unsolicited Data-Out follows the command: F = 0 on the command. */
			uint8_t dout[48] = { RAW_OP_DATA_OUT, 0x80 };
			bhs[1] &= 0x7f;
			rc = itest_raw_send(&c, bhs, NULL, 0);
			memcpy(dout + 8, bhs + 8, 8);
			memcpy(dout + 16, bhs + 16, 4);
			itest_put_be32(dout + 20, 0xffffffff);
			itest_put_be32(dout + 28, c.exp_statsn);
			if (rc == 0)
				rc = itest_raw_send(&c, dout, data, 4096);
		} else {
			rc = itest_raw_send(&c, bhs, data, c.immediate_data ? 4096 : 0);
		}
		while (rc == 0 && (rc = itest_raw_recv(&c, &p, 10000)) == 1) {
			uint8_t op = p.bhs[0] & 0x3f;
			if (op == RAW_OP_R2T) {
				uint8_t dout[48] = { RAW_OP_DATA_OUT, 0x80 };
				uint32_t off = itest_get_be32(p.bhs + 40), len = itest_get_be32(p.bhs + 44);
				memcpy(dout + 8, p.bhs + 8, 8);
				memcpy(dout + 16, p.bhs + 16, 4);
				memcpy(dout + 20, p.bhs + 20, 4);
				itest_put_be32(dout + 28, c.exp_statsn);
				itest_put_be32(dout + 40, off);
				rc = itest_raw_send(&c, dout, data + off, len);
			} else if (op == RAW_OP_SCSI_RSP) {
				status = p.bhs[3];
				c.exp_statsn = itest_get_be32(p.bhs + 24) + 1;
				itest_pdu_free(&p);
				break;
			}
			itest_pdu_free(&p);
		}
		itest_ok(status == 0, "digest session: WRITE(10) with CRC32C data digest -> GOOD", "status %d (rc %d)", status,
			 rc);
		itest_raw_scsi_cmd(&c, bhs, 0, rcdb, 10, true, false, 4096);
		rc = itest_raw_send(&c, bhs, NULL, 0);
		status = -1;
		while (rc == 0 && (rc = itest_raw_recv(&c, &p, 10000)) == 1) {
			uint8_t op = p.bhs[0] & 0x3f;
			if (op == RAW_OP_DATA_IN) {
				uint32_t off = itest_get_be32(p.bhs + 40);
				if (off + p.data_len <= 4096) {
					memcpy(in + off, p.data, p.data_len);
					in_len += p.data_len;
				}
				got++;
				if (p.bhs[1] & 0x01) { /* S bit: status in the last Data-In */
					status = p.bhs[3];
					c.exp_statsn = itest_get_be32(p.bhs + 24) + 1;
					itest_pdu_free(&p);
					break;
				}
			} else if (op == RAW_OP_SCSI_RSP) {
				status = p.bhs[3];
				c.exp_statsn = itest_get_be32(p.bhs + 24) + 1;
				itest_pdu_free(&p);
				break;
			}
			itest_pdu_free(&p);
		}
		itest_ok(rc != -3, "digest session: every PDU from the target carries correct CRC32C digests", "rc %d", rc);
		itest_ok(status == 0 && in_len == 4096 && !memcmp(in, data, 4096),
			 "digest session: READ(10) returns the data written", "status %d, %u bytes in %d Data-In PDUs",
			 status, in_len, got);
		free(in);
	}
	{
		/* A header digest error must not be accepted as a valid PDU (RFC 7143 7.8: discard or drop). */
		uint8_t bhs[48] = { 0x40 | RAW_OP_NOP_OUT, 0x80 }, bad[4] = { 0xde, 0xad, 0xbe, 0xef };
		struct itest_pdu p;
		int rc;
		itest_put_be32(bhs + 16, 0x7777);
		itest_put_be32(bhs + 20, 0xffffffff);
		itest_put_be32(bhs + 24, c.cmdsn);
		itest_put_be32(bhs + 28, c.exp_statsn);
		itest_raw_write(c.fd, bhs, 48);
		itest_raw_write(c.fd, bad, 4);
		rc = itest_raw_recv(&c, &p, 3000);
		itest_ok(rc != 1 || (p.bhs[0] & 0x3f) != RAW_OP_NOP_IN || itest_get_be32(p.bhs + 16) != 0x7777,
			 "NOP-Out with a bad header digest is not answered (discarded or connection dropped)",
			 "got NOP-In for it");
		if (rc == 1)
			itest_pdu_free(&p);
	}
	itest_raw_close(&c);
}

static void test_discovery(void)
{
	struct itest_login o = { .discovery = true, .initial_r2t = -1, .immediate_data = -1 };
	char err[256], want_portal[64];
	struct iscsi_context *s = itest_connect(&d, &o, 0, err, sizeof(err));
	struct iscsi_discovery_address *list, *a;
	int found = 0, portal_ok = 0, n = 0;

	if (!itest_ok(s != NULL, "discovery session login -> success", "%s", err))
		return;
	snprintf(want_portal, sizeof(want_portal), "127.0.0.1:%d", d.port);
	list = iscsi_discovery_sync(s);
	itest_ok(list != NULL, "SendTargets=All -> a target list", "%s", iscsi_get_error(s));
	for (a = list; a; a = a->next) {
		n++;
		if (!strcmp(a->target_name, ITEST_TARGET) || !strcmp(a->target_name, T_SECOND) ||
		    !strcmp(a->target_name, T_CHAP) || !strcmp(a->target_name, T_MUTUAL))
			found++;
		for (struct iscsi_target_portal *p = a->portals; p; p = p->next)
			if (!strncmp(p->portal, want_portal, strlen(want_portal))) {
				portal_ok++;
				break;
			}
	}
	itest_ok(found == 4 && n == 4, "SendTargets lists the 4 configured targets", "%d of %d listed", found, n);
	itest_ok(portal_ok == n && n > 0, "SendTargets: every target has TargetAddress 127.0.0.1:port,tpgt",
		 "%d of %d", portal_ok, n);
	if (list)
		iscsi_free_discovery_data(s, list);
	itest_close(s);
}

static int nop_done;
static void nop_cb(struct iscsi_context *iscsi, int status, void *command_data, void *private_data)
{
	struct iscsi_data *data = command_data;
	(void)iscsi;
	nop_done = status == 0 ? 1 : -1;
	if (status == 0 && private_data && data &&
	    (data->size != 8 || memcmp(data->data, private_data, 8)))
		nop_done = 2; /* answered, but the ping data did not come back */
}

static void test_nop_logout_sessions(void)
{
	struct iscsi_context *s1 = itest_session(&d, ITEST_INITIATOR_1, 0);
	struct iscsi_context *s2 = itest_session(&d, ITEST_INITIATOR_1, 0);
	unsigned char ping[8] = "sbcemu!";

	if (!s1 || !s2) {
		itest_close(s1);
		itest_close(s2);
		return;
	}
	nop_done = 0;
	if (iscsi_nop_out_async(s1, nop_cb, ping, 8, ping) == 0) {
		uint64_t start = itest_now_ms();
		while (!nop_done && itest_now_ms() - start < 10000) {
			struct pollfd pfd = { .fd = iscsi_get_fd(s1), .events = (short)iscsi_which_events(s1) };
			if (poll(&pfd, 1, 100) > 0 && iscsi_service(s1, pfd.revents) < 0)
				break;
		}
	}
	itest_ok(nop_done == 1, "NOP-Out ping with 8 bytes of data -> NOP-In echoing them", "result %d", nop_done);

	/* Two sessions of one initiator at once (different ISIDs), interleaved I/O. */
	itest_ok(io_round_trip(s1, 0, 100, 64, 512, 1) && io_round_trip(s2, 0, 200, 64, 512, 2) &&
			 io_round_trip(s1, 0, 300, 8, 512, 3),
		 "two sessions at once: interleaved WRITE/READ round trips", NULL);
	{
		uint8_t buf[64 * 512], want[64 * 512];
		itest_pattern(want, sizeof(want), 2);
		itest_ok(itest_read16(s1, 0, 200, buf, 64, 512, NULL) && !memcmp(buf, want, sizeof(buf)),
			 "session 1 reads what session 2 wrote", NULL);
	}
	itest_ok(iscsi_logout_sync(s2) == 0, "Logout (close session) -> Logout Response success", "%s",
		 iscsi_get_error(s2));
	iscsi_destroy_context(s2);
	itest_ok(tur_ok(s1, 0), "the other session still works after a logout", NULL);
	itest_close(s1);
}

static void test_targets(void)
{
	struct itest_login o1 = { .initial_r2t = -1, .immediate_data = -1 };
	struct itest_login o2 = { .target = T_SECOND, .initiator = ITEST_INITIATOR_2, .initial_r2t = -1,
				  .immediate_data = -1 };
	char err[256];
	struct iscsi_context *s1 = itest_connect(&d, &o1, 0, err, sizeof(err));
	struct iscsi_context *s2 = itest_connect(&d, &o2, 0, err, sizeof(err));
	struct itest_result r;
	uint8_t rl[12] = { 0xa0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0 };
	uint8_t rc10[10] = { 0x25 };

	if (!itest_ok(s1 && s2, "sessions to two targets at once", "%s", err)) {
		itest_close(s1);
		itest_close(s2);
		return;
	}
	itest_clear_ua(s1, 0);
	itest_clear_ua(s2, 0);
	itest_clear_ua(s2, 3);
	itest_cmd(s2, 0, rl, 12, ITEST_IN, NULL, 0, 4096, &r);
	itest_ok(r.transport_ok && r.status == 0 && r.data_len >= 24 && itest_get_be32(r.data) == 16 &&
			 itest_get_be64(r.data + 8) == 0 && itest_get_be64(r.data + 16) == 0x0003000000000000ull,
		 "second target: REPORT LUNS lists its own LUNs 0 and 3", "%s, %d bytes", itest_result_str(&r),
		 r.data_len);
	itest_result_free(&r);
	itest_cmd(s2, 3, rc10, 10, ITEST_IN, NULL, 0, 8, &r);
	itest_ok(r.data_len == 8 && itest_get_be32(r.data) == 2047 && itest_get_be32(r.data + 4) == 4096,
		 "second target LUN 3: READ CAPACITY(10) = 2048 blocks of 4096 bytes", "%s", itest_result_str(&r));
	itest_result_free(&r);
	itest_ok(io_round_trip(s1, 0, 0, 16, 512, 7) && io_round_trip(s2, 0, 0, 16, 512, 8),
		 "two targets: I/O at the same LBA of each", NULL);
	{
		uint8_t buf[16 * 512], want[16 * 512];
		itest_pattern(want, sizeof(want), 7);
		itest_ok(itest_read16(s1, 0, 0, buf, 16, 512, NULL) && !memcmp(buf, want, sizeof(buf)),
			 "two targets: their LUs are separate (target 1 data unchanged)", NULL);
	}
	itest_close(s1);
	itest_close(s2);
}

int main(int argc, char **argv)
{
	itest_init(argc, argv, "test_iscsi: login, CHAP, digests, discovery, NOP, logout, sessions, targets");
	itest_daemon_up(&d, "iscsi", config);

	test_login();
	test_digests();
	test_discovery();
	test_nop_logout_sessions();
	test_targets();

	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
