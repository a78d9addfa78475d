/* sense.c: fixed and descriptor formats (SPC-4 4.5.2, 4.5.3). */
#include <check.h>
#include <stdlib.h>

#include "scsi_sense.h"

/* SPC-4 4.5.3: fixed format, 70h, key in byte 2, ASC/ASCQ in 12/13, additional length 10. */
START_TEST(fixed_invalid_field_in_cdb_with_field_pointer)
{
	uint8_t b[64];
	struct scsi_sense_info s = sense_invalid_field_in_cdb(2, 7);
	size_t n = scsi_sense_encode(&s, false, b, sizeof(b));

	ck_assert_uint_eq(n, 18);
	ck_assert_uint_eq(b[0], 0x70);
	ck_assert_uint_eq(b[2], 0x05);
	ck_assert_uint_eq(b[7], 10);
	ck_assert_uint_eq(b[12], 0x24);
	ck_assert_uint_eq(b[13], 0x00);
	/* SKSV=1, C/D=1, BPV=1, bit 7; field pointer byte 2 */
	ck_assert_uint_eq(b[15], 0x80 | 0x40 | 0x08 | 7);
	ck_assert_uint_eq(b[16], 0);
	ck_assert_uint_eq(b[17], 2);
}
END_TEST

/* SPC-4 4.5.3: INFORMATION over 32 bits cannot be reported in fixed format: VALID = 0. */
START_TEST(fixed_information_over_32_bits_not_valid)
{
	uint8_t b[64];
	struct scsi_sense_info s = sense_with_information(sense_lba_out_of_range(), 0x100000000ull);

	scsi_sense_encode(&s, false, b, sizeof(b));
	ck_assert_uint_eq(b[0], 0x70);
	s = sense_with_information(sense_lba_out_of_range(), 0x12345678);
	scsi_sense_encode(&s, false, b, sizeof(b));
	ck_assert_uint_eq(b[0], 0xf0);
	ck_assert_uint_eq(b[3], 0x12);
	ck_assert_uint_eq(b[6], 0x78);
}
END_TEST

/* SPC-4 4.5.2: descriptor format 72h with information (00h) and sense key specific (02h) descriptors. */
START_TEST(descriptor_format_descriptors)
{
	uint8_t b[64];
	struct scsi_sense_info s = sense_with_information(sense_invalid_field_in_parameter_list(4, -1), 0x1122334455ull);
	size_t n = scsi_sense_encode(&s, true, b, sizeof(b));

	ck_assert_uint_eq(n, 8 + 12 + 8);
	ck_assert_uint_eq(b[0], 0x72);
	ck_assert_uint_eq(b[1], 0x05);
	ck_assert_uint_eq(b[2], 0x26);
	ck_assert_uint_eq(b[7], 20);
	ck_assert_uint_eq(b[8], 0x00);
	ck_assert_uint_eq(b[9], 0x0a);
	ck_assert_uint_eq(b[10], 0x80);
	ck_assert_uint_eq(b[15], 0x11);
	ck_assert_uint_eq(b[19], 0x55);
	ck_assert_uint_eq(b[20], 0x02);
	ck_assert_uint_eq(b[21], 0x06);
	ck_assert_uint_eq(b[24], 0x80); /* SKSV, C/D = 0 (parameter list), no bit pointer */
	ck_assert_uint_eq(b[26], 4);
}
END_TEST

/* SPC-4 4.5.2.4.4: progress indication in NOT READY sense. */
START_TEST(progress_indication)
{
	uint8_t b[64];
	struct scsi_sense_info s = sense_not_ready_in_progress(ASC_SANITIZE_IN_PROGRESS_NR, 0x8000);

	scsi_sense_encode(&s, false, b, sizeof(b));
	ck_assert_uint_eq(b[2], 0x02);
	ck_assert_uint_eq(b[12], 0x04);
	ck_assert_uint_eq(b[13], 0x1b);
	ck_assert_uint_eq(b[15], 0x80);
	ck_assert_uint_eq(b[16], 0x80);
	ck_assert_uint_eq(b[17], 0x00);
}
END_TEST

/* The transport's limit truncates (TCMU carries 96 bytes). */
START_TEST(truncated_to_max)
{
	uint8_t b[64];
	struct scsi_sense_info s = sense_lba_out_of_range();

	ck_assert_uint_eq(scsi_sense_encode(&s, false, b, 8), 8);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sense");
	TCase *tc = tcase_create("encode");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, fixed_invalid_field_in_cdb_with_field_pointer);
	tcase_add_test(tc, fixed_information_over_32_bits_not_valid);
	tcase_add_test(tc, descriptor_format_descriptors);
	tcase_add_test(tc, progress_indication);
	tcase_add_test(tc, truncated_to_max);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
