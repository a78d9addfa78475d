/*
 * Reservations between two (and three) I_T nexuses over iSCSI:
 * RESERVE/RELEASE(6/10) (SPC-2) conflicts, release on logout; PERSISTENT
 * RESERVE IN/OUT (SPC-4 6.16, 6.17, 5.13): REGISTER, RESERVE, RELEASE,
 * PREEMPT, CLEAR, REGISTER AND IGNORE EXISTING KEY, the access rules of
 * WRITE EXCLUSIVE / EXCLUSIVE ACCESS, the unit attentions they establish, and
 * APTPL state persisted across a daemon restart.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"

#define INITIATOR_3 "iqn.2026-12.org.sbcemu:itest-initiator-3"

static struct itest_daemon d;
static struct iscsi_context *a, *b, *c;

static const struct itest_expect conflict = EXPECT_CONFLICT;

static void cmd(struct iscsi_context *s, const char *name, const uint8_t *cdb, int len, struct itest_expect e)
{
	uint8_t buf[512] = { 0 };
	enum itest_dir dir = ITEST_NONE;
	size_t in = 0, out = 0;

	if (cdb[0] == 0x28) {
		dir = ITEST_IN;
		in = 512;
	} else if (cdb[0] == 0x2a) {
		dir = ITEST_OUT;
		out = 512;
	} else if (cdb[0] == 0x12 || cdb[0] == 0x03) {
		dir = ITEST_IN;
		in = 96;
	}
	itest_expect_cmd(s, 0, name, cdb, len, dir, buf, out, in, e, NULL);
}

static const uint8_t READ10[10] = { 0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
static const uint8_t WRITE10[10] = { 0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
static const uint8_t INQUIRY[6] = { 0x12, 0, 0, 0, 96, 0 };
static const uint8_t TUR[6] = { 0 };
static const uint8_t RESERVE6[6] = { 0x16 };
static const uint8_t RELEASE6[6] = { 0x17 };
static const uint8_t RESERVE10[10] = { 0x56 };
static const uint8_t RELEASE10[10] = { 0x57 };

static void test_reserve_release(void)
{
	struct itest_result r;

	cmd(a, "RESERVE(6) from A -> GOOD", RESERVE6, 6, EXPECT_GOOD);
	cmd(a, "RESERVE(6) again from the holder A -> GOOD", RESERVE6, 6, EXPECT_GOOD);
	cmd(b, "RESERVE(6) from B while A holds it -> RESERVATION CONFLICT", RESERVE6, 6, conflict);
	cmd(b, "READ(10) from B while A holds RESERVE(6) -> RESERVATION CONFLICT", READ10, 10, conflict);
	cmd(b, "WRITE(10) from B while A holds RESERVE(6) -> RESERVATION CONFLICT", WRITE10, 10, conflict);
	cmd(b, "INQUIRY from B under A's reservation -> GOOD", INQUIRY, 6, EXPECT_GOOD);
	cmd(b, "RELEASE(6) from B (not the holder) -> GOOD, no effect", RELEASE6, 6, EXPECT_GOOD);
	cmd(b, "READ(10) from B after its RELEASE: still RESERVATION CONFLICT", READ10, 10, conflict);
	cmd(a, "READ(10) from the holder A -> GOOD", READ10, 10, EXPECT_GOOD);
	cmd(a, "WRITE(10) from the holder A -> GOOD", WRITE10, 10, EXPECT_GOOD);
	cmd(a, "RELEASE(6) from A -> GOOD", RELEASE6, 6, EXPECT_GOOD);
	cmd(b, "RESERVE(10) from B after A released -> GOOD", RESERVE10, 10, EXPECT_GOOD);
	cmd(a, "WRITE(10) from A while B holds RESERVE(10) -> RESERVATION CONFLICT", WRITE10, 10, conflict);
	cmd(a, "RESERVE(6) from A while B holds RESERVE(10) -> RESERVATION CONFLICT", RESERVE6, 6, conflict);
	{
		uint8_t param[24] = { 0 }, cdb[10] = { 0x5f, 0x00, 0, 0, 0, 0, 0, 0, 24, 0 };
		itest_put_be64(param + 8, 0x1234);
		itest_expect_cmd(a, 0, "PERSISTENT RESERVE OUT REGISTER while B holds RESERVE(10) -> RESERVATION CONFLICT",
				 cdb, 10, ITEST_OUT, param, 24, 0, conflict, NULL);
	}
	cmd(b, "RELEASE(10) from B -> GOOD", RELEASE10, 10, EXPECT_GOOD);
	cmd(a, "READ(10) from A after B released -> GOOD", READ10, 10, EXPECT_GOOD);
	{
		uint8_t cdb[10] = { 0x56, 0x10 };
		itest_expect_cmd(a, 0, "RESERVE(10) 3RDPTY=1 (third-party reservations not supported) -> 05/24/00", cdb, 10,
				 ITEST_NONE, NULL, 0, 0, EXPECT_SENSE(5, 0x24, 0), &r);
		itest_expect_field_pointer("RESERVE(10) 3RDPTY: field pointer byte 1 bit 4", &r, 1, 1, 4);
	}

	/* A reservation ends with the I_T nexus: logout releases it. */
	cmd(a, "RESERVE(6) from A before A logs out -> GOOD", RESERVE6, 6, EXPECT_GOOD);
	itest_close(a);
	a = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (a)
		itest_clear_ua(a, 0);
	cmd(b, "RESERVE(6) from B after A logged out -> GOOD (logout released A's reservation)", RESERVE6, 6, EXPECT_GOOD);
	cmd(b, "RELEASE(6) from B -> GOOD", RELEASE6, 6, EXPECT_GOOD);
}

/* PERSISTENT RESERVE OUT with the basic 24-byte parameter list. */
static void prout(struct iscsi_context *s, uint8_t sa, uint8_t type, uint64_t key, uint64_t sa_key, bool aptpl,
		  struct itest_result *r)
{
	uint8_t param[24] = { 0 }, cdb[10] = { 0x5f, sa, type, 0, 0, 0, 0, 0, 24, 0 };
	itest_put_be64(param, key);
	itest_put_be64(param + 8, sa_key);
	if (aptpl)
		param[20] = 0x01;
	itest_cmd(s, 0, cdb, 10, ITEST_OUT, param, 24, 0, r);
}

static bool prout_expect(struct iscsi_context *s, const char *name, uint8_t sa, uint8_t type, uint64_t key,
			 uint64_t sa_key, bool aptpl, struct itest_expect e)
{
	struct itest_result r;
	prout(s, sa, type, key, sa_key, aptpl, &r);
	return itest_ok(itest_result_matches(&r, e), name, "%s", itest_result_str(&r));
}

/* READ KEYS: number of keys (or -1), keys into out, PRGENERATION into *gen. */
static int read_keys(struct iscsi_context *s, uint64_t *out, int max, uint32_t *gen)
{
	uint8_t cdb[10] = { 0x5e, 0x00, 0, 0, 0, 0, 0, 0x10, 0x00, 0 };
	struct itest_result r;
	int n = -1;

	itest_cmd(s, 0, cdb, 10, ITEST_IN, NULL, 0, 4096, &r);
	if (r.transport_ok && r.status == 0 && r.data_len >= 8) {
		uint32_t len = itest_get_be32(r.data + 4);
		*gen = itest_get_be32(r.data);
		n = 0;
		for (uint32_t off = 8; off + 8 <= 8 + len && (int)off + 8 <= r.data_len && n < max; off += 8)
			out[n++] = itest_get_be64(r.data + off);
	}
	itest_result_free(&r);
	return n;
}

static bool has_key(const uint64_t *keys, int n, uint64_t k)
{
	for (int i = 0; i < n; i++)
		if (keys[i] == k)
			return true;
	return false;
}

/* READ RESERVATION: 1 with key/type filled, 0 if none, -1 on error. */
static int read_reservation(struct iscsi_context *s, uint64_t *key, int *type)
{
	uint8_t cdb[10] = { 0x5e, 0x01, 0, 0, 0, 0, 0, 0, 255, 0 };
	struct itest_result r;
	int res = -1;

	itest_cmd(s, 0, cdb, 10, ITEST_IN, NULL, 0, 255, &r);
	if (r.transport_ok && r.status == 0 && r.data_len >= 8) {
		uint32_t len = itest_get_be32(r.data + 4);
		res = 0;
		if (len >= 16 && r.data_len >= 24) {
			*key = itest_get_be64(r.data + 8);
			*type = r.data[21] & 0x0f;
			res = 1;
		}
	}
	itest_result_free(&r);
	return res;
}

static void expect_ua(struct iscsi_context *s, const char *name, int asc, int ascq)
{
	itest_expect_cmd(s, 0, name, TUR, 6, ITEST_NONE, NULL, 0, 0, EXPECT_SENSE(6, asc, ascq), NULL);
}

static void test_persistent(void)
{
	uint64_t keys[16], key;
	uint32_t gen0 = 0, gen;
	int n, type;
	struct itest_result r;

	n = read_keys(a, keys, 16, &gen0);
	itest_ok(n == 0, "PERSISTENT RESERVE IN READ KEYS, none registered -> GOOD, ADDITIONAL LENGTH 0", "%d keys", n);
	{
		uint8_t cdb[10] = { 0x5e, 0x02, 0, 0, 0, 0, 0, 0, 8, 0 };
		itest_expect_cmd(a, 0, "PERSISTENT RESERVE IN REPORT CAPABILITIES -> GOOD", cdb, 10, ITEST_IN, NULL, 0, 8,
				 EXPECT_GOOD, &r);
		if (r.data_len == 8) {
			itest_ok(itest_get_be16(r.data) == 8, "REPORT CAPABILITIES: LENGTH = 8", "%u",
				 itest_get_be16(r.data));
			itest_ok(r.data[2] & 0x01, "REPORT CAPABILITIES: PTPL_C = 1 (APTPL supported)", "byte 2 = %02Xh",
				 r.data[2]);
			itest_ok((r.data[3] & 0x80) && (r.data[4] & 0xea) == 0xea && (r.data[5] & 0x01),
				 "REPORT CAPABILITIES: TMV=1, all six reservation types in the type mask",
				 "bytes 3-5 = %02X %02X %02X", r.data[3], r.data[4], r.data[5]);
		}
		itest_result_free(&r);
	}
	{
		uint8_t cdb[10] = { 0x5e, 0x1f, 0, 0, 0, 0, 0, 0, 8, 0 };
		itest_expect_cmd(a, 0, "PERSISTENT RESERVE IN service action 1Fh -> 05/24/00", cdb, 10, ITEST_IN, NULL, 0, 8,
				 EXPECT_SENSE(5, 0x24, 0), NULL);
	}

	prout_expect(a, "PR OUT REGISTER from A (key A1) -> GOOD", 0x00, 0, 0, 0xa1, false, EXPECT_GOOD);
	prout_expect(b, "PR OUT REGISTER from B (key B2) -> GOOD", 0x00, 0, 0, 0xb2, false, EXPECT_GOOD);
	n = read_keys(c, keys, 16, &gen);
	itest_ok(n == 2 && has_key(keys, n, 0xa1) && has_key(keys, n, 0xb2),
		 "READ KEYS (from unregistered C) lists A1 and B2", "%d keys", n);
	itest_ok(gen == gen0 + 2, "READ KEYS: PRGENERATION advanced by 2 after two REGISTERs", "%u -> %u", gen0, gen);
	prout_expect(a, "PR OUT REGISTER from A with a wrong RESERVATION KEY -> RESERVATION CONFLICT", 0x00, 0, 0x99, 0xa7,
		     false, conflict);
	prout_expect(c, "PR OUT RESERVE from unregistered C -> RESERVATION CONFLICT", 0x01, 0x01, 0xc3, 0, false, conflict);
	prout_expect(b, "PR OUT RESERVE from B with A's key -> RESERVATION CONFLICT", 0x01, 0x01, 0xa1, 0, false, conflict);

	prout_expect(a, "PR OUT RESERVE WRITE EXCLUSIVE from A -> GOOD", 0x01, 0x01, 0xa1, 0, false, EXPECT_GOOD);
	itest_ok(read_reservation(b, &key, &type) == 1 && key == 0xa1 && type == 1,
		 "READ RESERVATION: holder key A1, TYPE 1h (write exclusive)", NULL);
	cmd(b, "WRITE EXCLUSIVE held by A: READ(10) from registered B -> GOOD", READ10, 10, EXPECT_GOOD);
	cmd(b, "WRITE EXCLUSIVE held by A: WRITE(10) from registered B -> RESERVATION CONFLICT", WRITE10, 10, conflict);
	cmd(c, "WRITE EXCLUSIVE held by A: WRITE(10) from unregistered C -> RESERVATION CONFLICT", WRITE10, 10, conflict);
	cmd(a, "WRITE EXCLUSIVE held by A: WRITE(10) from the holder -> GOOD", WRITE10, 10, EXPECT_GOOD);
	prout_expect(a, "PR OUT RESERVE again, same type, by the holder -> GOOD", 0x01, 0x01, 0xa1, 0, false, EXPECT_GOOD);
	prout_expect(a, "PR OUT RESERVE with another type by the holder -> RESERVATION CONFLICT", 0x01, 0x03, 0xa1, 0,
		     false, conflict);
	cmd(b, "RESERVE(6) while a persistent reservation exists -> RESERVATION CONFLICT", RESERVE6, 6, conflict);
	{
		struct itest_result rr;
		prout(a, 0x02, 0x03, 0xa1, 0, false, &rr);
		itest_ok(itest_result_matches(&rr, EXPECT_SENSE(5, 0x26, 0x04)),
			 "PR OUT RELEASE with the wrong TYPE -> 05/26/04 INVALID RELEASE OF PERSISTENT RESERVATION", "%s",
			 itest_result_str(&rr));
	}
	prout_expect(a, "PR OUT RELEASE WRITE EXCLUSIVE from the holder -> GOOD", 0x02, 0x01, 0xa1, 0, false, EXPECT_GOOD);
	itest_ok(read_reservation(a, &key, &type) == 0, "READ RESERVATION after RELEASE: no reservation", NULL);
	prout_expect(a, "PR OUT RELEASE with no reservation -> GOOD", 0x02, 0x01, 0xa1, 0, false, EXPECT_GOOD);

	prout_expect(a, "PR OUT RESERVE EXCLUSIVE ACCESS from A -> GOOD", 0x01, 0x03, 0xa1, 0, false, EXPECT_GOOD);
	cmd(b, "EXCLUSIVE ACCESS held by A: READ(10) from B -> RESERVATION CONFLICT", READ10, 10, conflict);
	cmd(b, "EXCLUSIVE ACCESS held by A: INQUIRY from B -> GOOD", INQUIRY, 6, EXPECT_GOOD);
	prout_expect(b, "PR OUT RELEASE from registered non-holder B -> GOOD, no effect", 0x02, 0x03, 0xb2, 0, false,
		     EXPECT_GOOD);
	itest_ok(read_reservation(b, &key, &type) == 1 && key == 0xa1 && type == 3,
		 "after B's RELEASE: A still holds EXCLUSIVE ACCESS", NULL);

	prout_expect(b, "PR OUT PREEMPT from B removing A1, type EXCLUSIVE ACCESS -> GOOD", 0x04, 0x03, 0xb2, 0xa1, false,
		     EXPECT_GOOD);
	n = read_keys(b, keys, 16, &gen);
	itest_ok(n == 1 && keys[0] == 0xb2, "after PREEMPT: READ KEYS lists only B2", "%d keys", n);
	itest_ok(read_reservation(b, &key, &type) == 1 && key == 0xb2 && type == 3,
		 "after PREEMPT: B holds EXCLUSIVE ACCESS", NULL);
	expect_ua(a, "after PREEMPT: A (preempted) -> 06/2A/05 REGISTRATIONS PREEMPTED", 0x2a, 0x05);
	cmd(a, "after PREEMPT: READ(10) from A -> RESERVATION CONFLICT", READ10, 10, conflict);
	cmd(b, "after PREEMPT: READ(10) from B -> GOOD", READ10, 10, EXPECT_GOOD);

	prout_expect(a, "PR OUT REGISTER AND IGNORE EXISTING KEY from A (key A5) -> GOOD", 0x06, 0, 0, 0xa5, false,
		     EXPECT_GOOD);
	n = read_keys(a, keys, 16, &gen);
	itest_ok(n == 2 && has_key(keys, n, 0xa5) && has_key(keys, n, 0xb2), "READ KEYS lists A5 and B2", "%d keys", n);
	prout_expect(b, "PR OUT CLEAR from B -> GOOD", 0x03, 0, 0xb2, 0, false, EXPECT_GOOD);
	n = read_keys(b, keys, 16, &gen);
	itest_ok(n == 0, "after CLEAR: no registrations", "%d keys", n);
	itest_ok(read_reservation(b, &key, &type) == 0, "after CLEAR: no reservation", NULL);
	expect_ua(a, "after CLEAR: A (was registered) -> 06/2A/03 RESERVATIONS PREEMPTED", 0x2a, 0x03);
	cmd(a, "after CLEAR: READ(10) from A -> GOOD", READ10, 10, EXPECT_GOOD);

	/* Registrants-only type: releasing it tells the other registrants (06/2A/04). */
	prout_expect(a, "PR OUT REGISTER A (A1) again -> GOOD", 0x00, 0, 0, 0xa1, false, EXPECT_GOOD);
	prout_expect(b, "PR OUT REGISTER B (B2) again -> GOOD", 0x00, 0, 0, 0xb2, false, EXPECT_GOOD);
	prout_expect(a, "PR OUT RESERVE WRITE EXCLUSIVE - REGISTRANTS ONLY from A -> GOOD", 0x01, 0x05, 0xa1, 0, false,
		     EXPECT_GOOD);
	cmd(b, "WE registrants only: WRITE(10) from registered B -> GOOD", WRITE10, 10, EXPECT_GOOD);
	cmd(c, "WE registrants only: WRITE(10) from unregistered C -> RESERVATION CONFLICT", WRITE10, 10, conflict);
	prout_expect(a, "PR OUT RELEASE WE registrants only -> GOOD", 0x02, 0x05, 0xa1, 0, false, EXPECT_GOOD);
	expect_ua(b, "RELEASE of a registrants-only reservation: B -> 06/2A/04 RESERVATIONS RELEASED", 0x2a, 0x04);
	prout_expect(a, "PR OUT REGISTER with SERVICE ACTION RESERVATION KEY 0 (unregister A) -> GOOD", 0x00, 0, 0xa1, 0,
		     false, EXPECT_GOOD);
	prout_expect(b, "PR OUT REGISTER with SERVICE ACTION RESERVATION KEY 0 (unregister B) -> GOOD", 0x00, 0, 0xb2, 0,
		     false, EXPECT_GOOD);
	n = read_keys(c, keys, 16, &gen);
	itest_ok(n == 0, "after unregistering: no registrations", "%d keys", n);
	{
		uint8_t param[8] = { 0 }, cdb[10] = { 0x5f, 0x00, 0, 0, 0, 0, 0, 0, 8, 0 };
		itest_expect_cmd(a, 0, "PR OUT REGISTER with PARAMETER LIST LENGTH 8 (not 24) -> 05/1A/00", cdb, 10,
				 ITEST_OUT, param, 8, 0, EXPECT_SENSE(5, 0x1a, 0), NULL);
	}
}

/*
 * RFC 3722: iSCSI names compare after case folding, so the I_T nexus of an
 * initiator that logs in as "IQN...:CASE" is the one of "iqn...:case" with
 * the same ISID (SPC-4 5.13: registrations are by I_T nexus).
 */
static void test_name_case(void)
{
	struct itest_login upper = { .initiator = "IQN.2026-12.ORG.SBCEMU:CASE", .initial_r2t = -1,
				     .immediate_data = -1, .fixed_isid = true, .isid_random = 0x5bce02 };
	struct itest_login lower = upper;
	struct iscsi_context *p;
	char err[256];

	lower.initiator = "iqn.2026-12.org.sbcemu:case";
	p = itest_connect(&d, &upper, 0, err, sizeof(err));
	if (!itest_ok(p != NULL, "login as IQN.2026-12.ORG.SBCEMU:CASE", "%s", err))
		return;
	itest_clear_ua(p, 0);
	prout_expect(p, "PR OUT REGISTER (key D4) as IQN...:CASE -> GOOD", 0x00, 0, 0, 0xd4, false, EXPECT_GOOD);
	prout_expect(p, "PR OUT RESERVE WRITE EXCLUSIVE (key D4) -> GOOD", 0x01, 0x01, 0xd4, 0, false, EXPECT_GOOD);
	itest_close(p);
	p = itest_connect(&d, &lower, 0, err, sizeof(err));
	if (!itest_ok(p != NULL, "login again as iqn.2026-12.org.sbcemu:case, same ISID", "%s", err))
		return;
	itest_clear_ua(p, 0);
	cmd(p, "WRITE(10) from the name in lower case: the same I_T nexus, the holder -> GOOD", WRITE10, 10,
	    EXPECT_GOOD);
	cmd(b, "WRITE(10) from B meanwhile -> RESERVATION CONFLICT", WRITE10, 10, conflict);
	prout_expect(p, "PR OUT REGISTER key D4 -> 0 from the lower-case name (unregister) -> GOOD", 0x00, 0, 0xd4, 0,
		     false, EXPECT_GOOD);
	itest_close(p);
}

/* APTPL: registrations and the reservation survive a restart of the daemon. */
static void test_aptpl(void)
{
	struct itest_login opt = { .initiator = ITEST_INITIATOR_1, .initial_r2t = -1, .immediate_data = -1,
				   .fixed_isid = true, .isid_random = 0x5bce01 };
	struct iscsi_context *p;
	char err[256];
	uint64_t keys[16], key = 0;
	uint32_t gen;
	int n, type = -1;

	p = itest_connect(&d, &opt, 0, err, sizeof(err));
	if (!itest_ok(p != NULL, "login with a fixed ISID", "%s", err))
		return;
	itest_clear_ua(p, 0);
	prout_expect(p, "PR OUT REGISTER with APTPL=1 (key C3) -> GOOD", 0x00, 0, 0, 0xc3, true, EXPECT_GOOD);
	prout_expect(p, "PR OUT RESERVE WRITE EXCLUSIVE (key C3) -> GOOD", 0x01, 0x01, 0xc3, 0, false, EXPECT_GOOD);
	itest_close(p);
	itest_close(a);
	itest_close(b);
	itest_close(c);
	a = b = c = NULL;
	itest_ok(itest_daemon_stop(&d, SIGTERM) == 0, "sbcemud exits 0 on SIGTERM", NULL);
	if (!itest_ok(itest_daemon_start(&d) == 0, "sbcemud restarts on the same state directory", NULL))
		return;
	p = itest_connect(&d, &opt, 0, err, sizeof(err));
	b = itest_session(&d, ITEST_INITIATOR_2, 0);
	if (!itest_ok(p && b, "login after the restart", "%s", err))
		return;
	itest_clear_ua(p, 0);
	itest_clear_ua(b, 0);
	n = read_keys(b, keys, 16, &gen);
	itest_ok(n == 1 && keys[0] == 0xc3, "APTPL: after restart READ KEYS still lists C3", "%d keys", n);
	itest_ok(read_reservation(b, &key, &type) == 1 && key == 0xc3 && type == 1,
		 "APTPL: after restart the WRITE EXCLUSIVE reservation of C3 persists", "key %llx type %d",
		 (unsigned long long)key, type);
	cmd(b, "APTPL: after restart WRITE(10) from B -> RESERVATION CONFLICT", WRITE10, 10, conflict);
	cmd(p, "APTPL: after restart WRITE(10) from the same I_T nexus (same ISID) -> GOOD", WRITE10, 10, EXPECT_GOOD);
	prout_expect(p, "PR OUT REGISTER key C3 -> 0 (unregister, releases) -> GOOD", 0x00, 0, 0xc3, 0, false,
		     EXPECT_GOOD);
	cmd(b, "after unregistering the holder: WRITE(10) from B -> GOOD", WRITE10, 10, EXPECT_GOOD);
	itest_close(p);
}

int main(int argc, char **argv)
{
	itest_init(argc, argv, "test_reservations: RESERVE/RELEASE and PERSISTENT RESERVE IN/OUT");
	itest_daemon_up(&d, "resv", itest_default_config);
	a = itest_session(&d, ITEST_INITIATOR_1, 0);
	b = itest_session(&d, ITEST_INITIATOR_2, 0);
	c = itest_session(&d, INITIATOR_3, 0);
	if (!a || !b || !c)
		return itest_finish();
	itest_clear_ua(a, 0);
	itest_clear_ua(b, 0);
	itest_clear_ua(c, 0);

	test_reserve_release();
	if (a)
		test_persistent();
	if (b)
		test_name_case();
	test_aptpl();

	itest_close(a);
	itest_close(b);
	itest_close(c);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
