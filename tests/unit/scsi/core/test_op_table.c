/* op_table.c: the one opcode table is well formed. */
#include <check.h>
#include <stdlib.h>

#include "core/scsi_internal.h"

/* Rows sorted by (opcode, service action) and unique, so lookups and RSOC order are stable. */
START_TEST(rows_sorted_and_unique)
{
	for (size_t i = 1; i < scsi_op_table_len; i++) {
		const struct scsi_op *a = &scsi_op_table[i - 1], *b = &scsi_op_table[i];
		unsigned ka = (unsigned)a->opcode << 16 | a->service_action;
		unsigned kb = (unsigned)b->opcode << 16 | b->service_action;
		ck_assert_msg(ka < kb, "rows %s and %s out of order or duplicated", a->name, b->name);
	}
}
END_TEST

/* SPC-4 6.35.3: CDB USAGE DATA byte 0 is the operation code; the service action field holds the SA. */
START_TEST(usage_data_names_the_command)
{
	for (size_t i = 0; i < scsi_op_table_len; i++) {
		const struct scsi_op *op = &scsi_op_table[i];
		ck_assert_msg(op->usage[0] == op->opcode, "%s usage[0]", op->name);
		if (op->sa_location == SCSI_SA_BYTE1)
			ck_assert_msg((op->usage[1] & 0x1f) == op->service_action, "%s SA in usage", op->name);
		if (op->sa_location == SCSI_SA_BYTES8_9)
			ck_assert_msg(get_be16(op->usage + 8) == op->service_action, "%s SA in usage", op->name);
		ck_assert_msg(op->exec != NULL, "%s has no exec", op->name);
		for (unsigned j = op->cdb_len; j < SCSI_MAX_CDB_LEN; j++)
			ck_assert_msg(op->usage[j] == 0, "%s usage beyond its CDB length", op->name);
	}
}
END_TEST

/* SAM-5 5.2: the group code (opcode bits 7:5) fixes the CDB length. */
START_TEST(cdb_length_matches_group_code)
{
	static const int len_by_group[8] = { 6, 10, 10, 0, 16, 12, 0, 0 };

	for (size_t i = 0; i < scsi_op_table_len; i++) {
		const struct scsi_op *op = &scsi_op_table[i];
		int expect = op->opcode == SCSI_OP_VARIABLE_LENGTH ? 32 : len_by_group[op->opcode >> 5];
		ck_assert_msg(op->cdb_len == expect, "%s cdb_len %u", op->name, op->cdb_len);
	}
}
END_TEST

/* The direction flags agree with themselves: no row both sends and receives data. */
START_TEST(one_direction_per_row)
{
	for (size_t i = 0; i < scsi_op_table_len; i++) {
		const struct scsi_op *op = &scsi_op_table[i];
		ck_assert_msg(!((op->flags & OP_DATA_IN) && (op->flags & OP_DATA_OUT)), "%s", op->name);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("op_table");
	TCase *tc = tcase_create("rows");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, rows_sorted_and_unique);
	tcase_add_test(tc, usage_data_names_the_command);
	tcase_add_test(tc, cdb_length_matches_group_code);
	tcase_add_test(tc, one_direction_per_row);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
