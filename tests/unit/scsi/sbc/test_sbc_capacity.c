/* sbc_capacity.c: READ CAPACITY(10) (SBC-4 5.20) and READ CAPACITY(16) (SBC-4 5.21). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sbc/sbc.h"

static struct harness h;

static void setup(void)
{
	harness_init(&h, 2048, 512, NULL); /* harness default: thin provisioned */
	harness_clear_ua(&h);
}

static void setup_4k_thick(void)
{
	struct scsi_lu_params p;

	memset(&p, 0, sizeof(p));
	p.kind = SCSI_LU_CONVENTIONAL;
	p.lbppbe = 3;
	harness_init(&h, 1000, 4096, &p);
	harness_clear_ua(&h);
}

static void teardown(void)
{
	harness_fini(&h);
}

static void rc10(uint32_t lba, bool pmi, struct harness_result *r)
{
	uint8_t c[10] = { SCSI_OP_READ_CAPACITY_10 };

	put_be32(c + 2, lba);
	c[8] = pmi ? 1 : 0;
	harness_run(&h, 0, c, 10, NULL, 0, 8, r);
}

static void rc16(uint32_t allocation_length, struct harness_result *r)
{
	uint8_t c[16] = { SCSI_OP_SERVICE_ACTION_IN_16, SCSI_SA_READ_CAPACITY_16 };

	put_be32(c + 10, allocation_length);
	harness_run(&h, 0, c, 16, NULL, 0, allocation_length, r);
}

/* SBC-4 5.20.2: RETURNED LOGICAL BLOCK ADDRESS = last LBA, then the block length. */
START_TEST(rc10_data)
{
	struct harness_result r;

	rc10(0, false, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 8);
	ck_assert_uint_eq(get_be32(r.data_in), 2047);
	ck_assert_uint_eq(get_be32(r.data_in + 4), 512);
}
END_TEST

/* SBC-2 5.10 (kept): PMI = 0 with LOGICAL BLOCK ADDRESS != 0 -> 05/24/00, field pointer byte 2. */
START_TEST(rc10_pmi_zero_lba_nonzero)
{
	struct harness_result r;

	rc10(5, false, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(harness_sense_key(&r), SENSE_KEY_ILLEGAL_REQUEST);
	ck_assert_uint_eq(harness_asc_ascq(&r), ASC_INVALID_FIELD_IN_CDB);
	ck_assert_uint_eq(r.sense[15], 0xc0);
	ck_assert_uint_eq(get_be16(r.sense + 16), 2);
	rc10(5, true, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
}
END_TEST

/* SBC-4 5.21.2: the 32-byte parameter data; LBPME = LBPRZ = 1 on a thin LU. */
START_TEST(rc16_data_thin)
{
	struct harness_result r;
	static const uint8_t zero[16];

	rc16(32, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 32);
	ck_assert_uint_eq(get_be64(r.data_in), 2047);
	ck_assert_uint_eq(get_be32(r.data_in + 8), 512);
	ck_assert_uint_eq(r.data_in[12], 0x00); /* RC BASIS, P_TYPE, PROT_EN */
	ck_assert_uint_eq(r.data_in[13], 0x00); /* P_I_EXPONENT, LBPPBE */
	ck_assert_uint_eq(r.data_in[14], 0xc0); /* LBPME, LBPRZ, LOWEST ALIGNED LBA 0 */
	ck_assert_uint_eq(r.data_in[15], 0x00);
	ck_assert_mem_eq(r.data_in + 16, zero, 16);
}
END_TEST

/* SBC-4 5.21.2: LBPPBE from the LU; LBPME = LBPRZ = 0 on a fully provisioned LU. */
START_TEST(rc16_data_thick_4k)
{
	struct harness_result r;

	rc16(32, &r);
	ck_assert_uint_eq(get_be64(r.data_in), 999);
	ck_assert_uint_eq(get_be32(r.data_in + 8), 4096);
	ck_assert_uint_eq(r.data_in[13], 0x03);
	ck_assert_uint_eq(r.data_in[14], 0x00);
}
END_TEST

/* SPC-4 4.2.5.6: ALLOCATION LENGTH 0..31 truncates without error. */
START_TEST(rc16_allocation_length)
{
	struct harness_result r;

	for (uint32_t n = 0; n < 32; n++) {
		rc16(n, &r);
		ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
		ck_assert_uint_eq(r.data_in_len, n);
	}
	rc16(64, &r);
	ck_assert_uint_eq(r.data_in_len, 32);
	ck_assert_uint_eq(r.residual_kind, SCSI_RESIDUAL_UNDERFLOW);
	ck_assert_uint_eq(r.residual, 32);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sbc_capacity");
	TCase *tc = tcase_create("capacity");
	TCase *k4 = tcase_create("4k");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, rc10_data);
	tcase_add_test(tc, rc10_pmi_zero_lba_nonzero);
	tcase_add_test(tc, rc16_data_thin);
	tcase_add_test(tc, rc16_allocation_length);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(k4, setup_4k_thick, teardown);
	tcase_add_test(k4, rc16_data_thick_4k);
	suite_add_tcase(s, k4);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
