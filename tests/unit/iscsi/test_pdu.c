/* Unit tests for pdu.c: CRC32C digests (RFC 3720 B.4 vectors), digest byte order, BHS checks. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "pdu.h"

/* RFC 3720 B.4: 32 bytes of zeros -> CRC 0x8a9136aa. */
START_TEST(crc32c_zeros)
{
	uint8_t buf[32];
	memset(buf, 0, sizeof(buf));
	ck_assert_uint_eq(iscsi_crc32c(buf, sizeof(buf)), 0x8a9136aa);
}
END_TEST

/* RFC 3720 B.4: 32 bytes of 0xff -> CRC 0x62a8ab43. */
START_TEST(crc32c_ones)
{
	uint8_t buf[32];
	memset(buf, 0xff, sizeof(buf));
	ck_assert_uint_eq(iscsi_crc32c(buf, sizeof(buf)), 0x62a8ab43);
}
END_TEST

/* RFC 3720 B.4: bytes 0..31 -> 0x46dd794e; bytes 31..0 -> 0x113fdb5c. */
START_TEST(crc32c_incrementing_decrementing)
{
	uint8_t inc[32], dec[32];
	for (int i = 0; i < 32; i++) {
		inc[i] = (uint8_t)i;
		dec[i] = (uint8_t)(31 - i);
	}
	ck_assert_uint_eq(iscsi_crc32c(inc, sizeof(inc)), 0x46dd794e);
	ck_assert_uint_eq(iscsi_crc32c(dec, sizeof(dec)), 0x113fdb5c);
}
END_TEST

/* A digest fed in pieces equals the digest of the whole (data segment + padding). */
START_TEST(crc32c_chained)
{
	uint8_t buf[32];
	uint32_t crc;
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	crc = iscsi_crc32c_update(0, buf, 5);
	crc = iscsi_crc32c_update(crc, buf + 5, 27);
	ck_assert_uint_eq(crc, 0x46dd794e);
}
END_TEST

/* RFC 3720 B.4: the CRC of 32 zero bytes goes on the wire as aa 36 91 8a. */
START_TEST(digest_wire_order)
{
	uint8_t p[4];
	iscsi_digest_put(p, 0x8a9136aa);
	ck_assert_uint_eq(p[0], 0xaa);
	ck_assert_uint_eq(p[1], 0x36);
	ck_assert_uint_eq(p[2], 0x91);
	ck_assert_uint_eq(p[3], 0x8a);
	ck_assert_uint_eq(iscsi_digest_get(p), 0x8a9136aa);
}
END_TEST

/* RFC 7143 11.2.1: opcode, DataSegmentLength (3 bytes) and TotalAHSLength round trip. */
START_TEST(bhs_init_round_trip)
{
	uint8_t bhs[ISCSI_BHS_LEN];
	memset(bhs, 0xee, sizeof(bhs));
	iscsi_bhs_init(bhs, ISCSI_OP_SCSI_RSP, ISCSI_FLAG_FINAL | ISCSI_RSP_FLAG_UNDERFLOW, 0x012345);
	ck_assert_uint_eq(bhs[0], 0x21);
	ck_assert_uint_eq(bhs[1], 0x82);
	ck_assert_uint_eq(bhs[4], 0);
	ck_assert_uint_eq(bhs[5], 0x01);
	ck_assert_uint_eq(bhs[6], 0x23);
	ck_assert_uint_eq(bhs[7], 0x45);
	ck_assert_uint_eq(iscsi_bhs_data_len(bhs), 0x012345);
	ck_assert_uint_eq(iscsi_bhs_opcode(bhs), ISCSI_OP_SCSI_RSP);
	for (int i = 8; i < ISCSI_BHS_LEN; i++)
		ck_assert_uint_eq(bhs[i], 0);
	bhs[0] = 0x41;
	ck_assert(iscsi_bhs_immediate(bhs));
	ck_assert_uint_eq(iscsi_bhs_opcode(bhs), ISCSI_OP_SCSI_CMD);
	bhs[4] = 3;
	ck_assert_uint_eq(iscsi_bhs_ahs_len(bhs), 12);
}
END_TEST

/* RFC 7143 11.2.1.2 / 11.17.1: malformed BHS -> the Reject reason. */
START_TEST(bhs_check_malformed)
{
	uint8_t bhs[ISCSI_BHS_LEN];

	iscsi_bhs_init(bhs, ISCSI_OP_NOP_OUT, ISCSI_FLAG_FINAL, 100);
	ck_assert_int_eq(iscsi_bhs_check(bhs, 8192), 0);
	/* a target opcode sent by the initiator: Command not supported */
	iscsi_bhs_init(bhs, ISCSI_OP_SCSI_RSP, ISCSI_FLAG_FINAL, 0);
	ck_assert_int_eq(iscsi_bhs_check(bhs, 8192), ISCSI_REJECT_COMMAND_NOT_SUPPORTED);
	/* a reserved opcode */
	iscsi_bhs_init(bhs, 0x1a, 0, 0);
	ck_assert_int_eq(iscsi_bhs_check(bhs, 8192), ISCSI_REJECT_COMMAND_NOT_SUPPORTED);
	/* data segment longer than the declared MaxRecvDataSegmentLength: protocol error */
	iscsi_bhs_init(bhs, ISCSI_OP_DATA_OUT, ISCSI_FLAG_FINAL, 8193);
	ck_assert_int_eq(iscsi_bhs_check(bhs, 8192), ISCSI_REJECT_PROTOCOL_ERROR);
	/* AHS on a PDU other than SCSI Command: invalid PDU field */
	iscsi_bhs_init(bhs, ISCSI_OP_TEXT_REQ, ISCSI_FLAG_FINAL, 0);
	bhs[4] = 1;
	ck_assert_int_eq(iscsi_bhs_check(bhs, 8192), ISCSI_REJECT_INVALID_PDU_FIELD);
	iscsi_bhs_init(bhs, ISCSI_OP_SCSI_CMD, ISCSI_FLAG_FINAL, 0);
	bhs[4] = 5;
	ck_assert_int_eq(iscsi_bhs_check(bhs, 8192), 0);
}
END_TEST

START_TEST(pad4)
{
	ck_assert_uint_eq(iscsi_pad4(0), 0);
	ck_assert_uint_eq(iscsi_pad4(1), 3);
	ck_assert_uint_eq(iscsi_pad4(2), 2);
	ck_assert_uint_eq(iscsi_pad4(3), 1);
	ck_assert_uint_eq(iscsi_pad4(4), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iscsi_pdu");
	TCase *tc = tcase_create("pdu");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, crc32c_zeros);
	tcase_add_test(tc, crc32c_ones);
	tcase_add_test(tc, crc32c_incrementing_decrementing);
	tcase_add_test(tc, crc32c_chained);
	tcase_add_test(tc, digest_wire_order);
	tcase_add_test(tc, bhs_init_round_trip);
	tcase_add_test(tc, bhs_check_malformed);
	tcase_add_test(tc, pad4);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
