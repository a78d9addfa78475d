/* spc_rsoc.c: REPORT SUPPORTED OPERATION CODES (SPC-4 6.35) and TASK MANAGEMENT FUNCTIONS (6.36). */
#include <check.h>
#include <string.h>

#include "harness.h"
#include "core/scsi_internal.h"

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

static void rsoc(uint8_t byte2, uint8_t opcode, uint16_t sa, uint32_t allocation_length)
{
	uint8_t cdb[12] = { 0xa3, 0x0c, byte2, opcode };
	put_be16(cdb + 4, sa);
	put_be32(cdb + 6, allocation_length);
	harness_run(&h, 0, cdb, 12, NULL, 0, 0, &r);
}

static size_t supported_rows(void)
{
	size_t n = 0;
	for (size_t i = 0; i < scsi_op_table_len; i++)
		if (scsi_op_supported(&scsi_op_table[i], h.lu))
			n++;
	return n;
}

/* 000b: one 8-byte descriptor per row the LU serves, in table order; SERVACTV with the service action. */
START_TEST(all_commands)
{
	size_t n = supported_rows(), k = 0;

	rsoc(0x00, 0, 0, 65535);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(get_be32(r.data_in), 8 * n);
	ck_assert_uint_eq(r.data_in_len, 4 + 8 * n);
	for (size_t i = 0; i < scsi_op_table_len; i++) {
		const struct scsi_op *op = &scsi_op_table[i];
		const uint8_t *d = r.data_in + 4 + 8 * k;
		if (!scsi_op_supported(op, h.lu))
			continue;
		ck_assert_uint_eq(d[0], op->opcode);
		ck_assert_uint_eq(d[5], op->sa_location != SCSI_SA_NONE ? 0x01 : 0x00);
		ck_assert_uint_eq(get_be16(d + 2), op->sa_location != SCSI_SA_NONE ? op->service_action : 0);
		ck_assert_uint_eq(get_be16(d + 6), op->cdb_len);
		k++;
	}
	ck_assert_uint_eq(k, n);
}
END_TEST

/* RCTD = 1: 20-byte descriptors with CTDP and a timeouts descriptor of length 0Ah. */
START_TEST(all_commands_rctd)
{
	size_t n = supported_rows();
	const uint8_t *d;

	rsoc(0x80, 0, 0, 65535);
	ck_assert_uint_eq(get_be32(r.data_in), 20 * n);
	d = r.data_in + 4;
	ck_assert_uint_eq(d[0], 0x00); /* TEST UNIT READY first */
	ck_assert_uint_eq(d[5], 0x02);
	ck_assert_uint_eq(get_be16(d + 8), 0x000a);
	ck_assert_uint_eq(get_be32(d + 12), 1);
	ck_assert_uint_eq(get_be32(d + 16), 10);
}
END_TEST

/* 001b for TEST UNIT READY: SUPPORT 011b, CDB SIZE 6, the usage data of the row. */
START_TEST(one_command_by_opcode)
{
	static const uint8_t usage[6] = { 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 };

	rsoc(0x01, 0x00, 0, 65535);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 10);
	ck_assert_uint_eq(r.data_in[1], 0x03);
	ck_assert_uint_eq(get_be16(r.data_in + 2), 6);
	ck_assert_mem_eq(r.data_in + 4, usage, 6);
	/* RCTD adds CTDP and the timeouts descriptor after the usage data. */
	rsoc(0x81, 0x12, 0, 65535);
	ck_assert_uint_eq(r.data_in[1], 0x83);
	ck_assert_uint_eq(r.data_in_len, 4 + 6 + 12);
	ck_assert_uint_eq(r.data_in[4], 0x12);
	ck_assert_uint_eq(get_be16(r.data_in + 10), 0x000a);
}
END_TEST

/* 001b for an operation code that has service actions -> 05/24/00 on REPORTING OPTIONS. */
START_TEST(one_command_opcode_needs_sa)
{
	rsoc(0x01, 0x9e, 0x10, 65535);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[15], 0xc8 | 2);
	ck_assert_uint_eq(r.sense[17], 2);
}
END_TEST

/* 010b: by opcode and service action; an opcode without service actions -> 05/24/00. */
START_TEST(one_command_by_sa)
{
	rsoc(0x02, 0x9e, 0x10, 65535);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in[1], 0x03);
	ck_assert_uint_eq(get_be16(r.data_in + 2), 16);
	ck_assert_uint_eq(r.data_in[4], 0x9e);
	ck_assert_uint_eq(r.data_in[5], 0x10);
	rsoc(0x02, 0x9e, 0x1d, 65535); /* an unknown service action: not supported */
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in[1], 0x01);
	rsoc(0x02, 0x28, 0, 65535);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
}
END_TEST

/* 011b: by service action when the opcode has them, else by opcode. */
START_TEST(one_command_either)
{
	rsoc(0x03, 0x5e, 0x02, 65535);
	ck_assert_uint_eq(r.data_in[1], 0x03);
	ck_assert_uint_eq(r.data_in[5], 0x02);
	rsoc(0x03, 0x28, 0x55, 65535);
	ck_assert_uint_eq(r.data_in[1], 0x03);
	ck_assert_uint_eq(get_be16(r.data_in + 2), 10);
}
END_TEST

/* An operation code the device does not know: SUPPORT 001b, not an error. */
START_TEST(one_command_unknown)
{
	rsoc(0x01, 0xc0, 0, 65535);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 4);
	ck_assert_uint_eq(r.data_in[1], 0x01);
	ck_assert_uint_eq(get_be16(r.data_in + 2), 0);
}
END_TEST

/* REPORTING OPTIONS 100b-111b -> 05/24/00. */
START_TEST(reporting_options_reserved)
{
	rsoc(0x04, 0, 0, 65535);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	rsoc(0x07, 0, 0, 65535);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
}
END_TEST

/* A row disabled for the LU (UNMAP without thin provisioning) is neither listed nor reported. */
START_TEST(disabled_row_hidden)
{
	struct scsi_lu_params p = h.lu->params;
	size_t off;

	harness_fini(&h);
	p.thin_provisioning = false;
	harness_init(&h, 2048, 512, &p);
	harness_clear_ua(&h);
	rsoc(0x01, 0x42, 0, 65535);
	ck_assert_uint_eq(r.data_in[1], 0x01);
	rsoc(0x00, 0, 0, 65535);
	for (off = 4; off < r.data_in_len; off += 8)
		ck_assert_uint_ne(r.data_in[off], 0x42);
}
END_TEST

/* The ALLOCATION LENGTH truncates; COMMAND DATA LENGTH does not change. */
START_TEST(all_commands_truncated)
{
	rsoc(0x00, 0, 0, 12);
	ck_assert_uint_eq(r.data_in_len, 12);
	ck_assert_uint_eq(get_be32(r.data_in), 8 * supported_rows());
}
END_TEST

/* SPC-4 6.36: ATS ATSS CTSS LURS TRS and ITNRS; REPD = 1 -> 16 bytes, ADDITIONAL DATA LENGTH 0Ch. */
START_TEST(report_tmf)
{
	uint8_t cdb[12] = { 0xa3, 0x0d, 0, 0, 0, 0, 0, 0, 0, 255, 0, 0 };

	harness_run(&h, 0, cdb, 12, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 4);
	ck_assert_uint_eq(r.data_in[0], 0xda);
	ck_assert_uint_eq(r.data_in[1], 0x01);
	cdb[2] = 0x80;
	harness_run(&h, 0, cdb, 12, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.data_in_len, 16);
	ck_assert_uint_eq(r.data_in[3], 0x0c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spc_rsoc");
	TCase *tc = tcase_create("rsoc");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, all_commands);
	tcase_add_test(tc, all_commands_rctd);
	tcase_add_test(tc, one_command_by_opcode);
	tcase_add_test(tc, one_command_opcode_needs_sa);
	tcase_add_test(tc, one_command_by_sa);
	tcase_add_test(tc, one_command_either);
	tcase_add_test(tc, one_command_unknown);
	tcase_add_test(tc, reporting_options_reserved);
	tcase_add_test(tc, disabled_row_hidden);
	tcase_add_test(tc, all_commands_truncated);
	tcase_add_test(tc, report_tmf);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
