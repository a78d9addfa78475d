/* spc_pr_in.c: PERSISTENT RESERVE IN (SPC-4 6.16). */
#include <check.h>
#include <string.h>

#include "harness.h"
#include "spc/spc.h"

static struct harness h;
static struct harness_result r;

static void setup(void)
{
	harness_init(&h, 2048, 512, NULL);
	harness_clear_ua(&h);
}

static void teardown(void)
{
	harness_fini(&h);
}

static void prout(int nexus, uint8_t sa, uint8_t type, uint64_t key, uint64_t sa_key, uint8_t flags)
{
	uint8_t cdb[10] = { 0x5f, sa, type, 0, 0, 0, 0, 0, 24, 0 }, param[24] = { 0 };
	put_be64(param, key);
	put_be64(param + 8, sa_key);
	param[20] = flags;
	harness_run(&h, nexus, cdb, 10, param, 24, 24, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
}

static void prin(int nexus, uint8_t sa, uint16_t allocation_length)
{
	uint8_t cdb[10] = { 0x5e, sa, 0, 0, 0, 0, 0, (uint8_t)(allocation_length >> 8), (uint8_t)allocation_length, 0 };
	harness_run(&h, nexus, cdb, 10, NULL, 0, 0, &r);
}

/* READ KEYS: PRGENERATION, ADDITIONAL LENGTH = 8 x keys, the keys in registration order. */
START_TEST(read_keys)
{
	prin(0, 0x00, 4096);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 8);
	ck_assert_uint_eq(get_be32(r.data_in + 4), 0);
	prout(0, 0x00, 0, 0, 0xa1, 0);
	prout(1, 0x06, 0, 0, 0xb2, 0);
	prin(1, 0x00, 4096);
	ck_assert_uint_eq(get_be32(r.data_in), 2);
	ck_assert_uint_eq(get_be32(r.data_in + 4), 16);
	ck_assert_uint_eq(get_be64(r.data_in + 8), 0xa1);
	ck_assert_uint_eq(get_be64(r.data_in + 16), 0xb2);
}
END_TEST

/* SPC-4 6.16.2: ADDITIONAL LENGTH is not changed by a short ALLOCATION LENGTH (libiscsi Truncate). */
START_TEST(read_keys_truncated)
{
	prout(0, 0x00, 0, 0, 0xa1, 0);
	prin(0, 0x00, 8);
	ck_assert_uint_eq(r.data_in_len, 8);
	ck_assert_uint_eq(get_be32(r.data_in + 4), 8);
}
END_TEST

/* READ RESERVATION: none -> ADDITIONAL LENGTH 0; else the holder's key, SCOPE/TYPE; all registrants key 0. */
START_TEST(read_reservation)
{
	prin(0, 0x01, 255);
	ck_assert_uint_eq(r.data_in_len, 8);
	ck_assert_uint_eq(get_be32(r.data_in + 4), 0);
	prout(0, 0x00, 0, 0, 0xa1, 0);
	prout(0, 0x01, 0x03, 0xa1, 0, 0);
	prin(1, 0x01, 255);
	ck_assert_uint_eq(r.data_in_len, 24);
	ck_assert_uint_eq(get_be32(r.data_in + 4), 16);
	ck_assert_uint_eq(get_be64(r.data_in + 8), 0xa1);
	ck_assert_uint_eq(r.data_in[21], 0x03);
	prout(0, 0x02, 0x03, 0xa1, 0, 0);
	prout(0, 0x01, 0x08, 0xa1, 0, 0);
	prin(1, 0x01, 255);
	ck_assert_uint_eq(get_be64(r.data_in + 8), 0);
	ck_assert_uint_eq(r.data_in[21], 0x08);
}
END_TEST

/* SPC-4 6.16.4 REPORT CAPABILITIES: LENGTH 8, CRH ATP_C PTPL_C, TMV, ALLOW COMMANDS 001b, all six types. */
START_TEST(report_capabilities)
{
	prin(0, 0x02, 255);
	ck_assert_uint_eq(r.data_in_len, 8);
	ck_assert_uint_eq(get_be16(r.data_in), 8);
	ck_assert_uint_eq(r.data_in[2], 0x15);
	ck_assert_uint_eq(r.data_in[3], 0x90);
	ck_assert_uint_eq(r.data_in[4], 0xea);
	ck_assert_uint_eq(r.data_in[5], 0x01);
	prout(0, 0x00, 0, 0, 0xa1, 0x01); /* APTPL: PTPL_A = 1 */
	prin(0, 0x02, 255);
	ck_assert_uint_eq(r.data_in[3], 0x91);
}
END_TEST

/* SPC-4 6.16.5 READ FULL STATUS: a descriptor per registrant with R_HOLDER, TYPE, port and TransportID. */
START_TEST(read_full_status)
{
	const uint8_t *d;

	prout(0, 0x00, 0, 0, 0xa1, 0);
	prout(1, 0x00, 0, 0, 0xb2, 0x04); /* ALL_TG_PT */
	prout(0, 0x01, 0x01, 0xa1, 0, 0);
	prin(0, 0x03, 4096);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(get_be32(r.data_in + 4), 2 * (24 + 24));
	d = r.data_in + 8;
	ck_assert_uint_eq(get_be64(d), 0xa1);
	ck_assert_uint_eq(d[12], 0x01);
	ck_assert_uint_eq(d[13], 0x01);
	ck_assert_uint_eq(get_be16(d + 18), 1);
	ck_assert_uint_eq(get_be32(d + 20), 24);
	ck_assert_uint_eq(d[24], 0x05);
	d += 48;
	ck_assert_uint_eq(get_be64(d), 0xb2);
	ck_assert_uint_eq(d[12], 0x02);
	ck_assert_uint_eq(d[13], 0x00);
}
END_TEST

/* Service actions 04h-1Fh -> 05/24/00 on the SERVICE ACTION (libiscsi PrinServiceactionRange). */
START_TEST(service_action_range)
{
	for (uint8_t sa = 4; sa < 0x20; sa++) {
		prin(0, sa, 255);
		ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spc_pr_in");
	TCase *tc = tcase_create("pr_in");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, read_keys);
	tcase_add_test(tc, read_keys_truncated);
	tcase_add_test(tc, read_reservation);
	tcase_add_test(tc, report_capabilities);
	tcase_add_test(tc, read_full_status);
	tcase_add_test(tc, service_action_range);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
