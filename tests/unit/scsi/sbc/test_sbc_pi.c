/*
 * sbc_pi.c without I/O: the check set of each PROTECT value (the SBC-4
 * RDPROTECT / WRPROTECT / VRPROTECT tables), reference tags per type and interval, generation and verification
 * (with the failing LBA in INFORMATION), the escape, WRITE SAME replication,
 * the interleaved wire form and the bit-inverted medium form.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "sbc/sbc.h"

static struct scsi_lu lu;
static struct scsi_cmd cmd;

static void setup_lu(uint8_t type, uint32_t bs, uint8_t exponent)
{
	memset(&lu, 0, sizeof(lu));
	memset(&cmd, 0, sizeof(cmd));
	lu.params.protection_type = type;
	lu.protection_type = type;
	lu.p_i_exponent = exponent;
	lu.block_size = bs;
	cmd.lu = &lu;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 131 + seed * 7) >> 3);
}

/*
 * DPOFUA = 0 (mode parameter header): DPO or FUA in a 32-byte CDB is INVALID
 * FIELD IN CDB with the field pointer on byte 10, where READ(32) and
 * WRITE(32) carry them (SBC-4 5.20, 5.47), bit 4 (DPO) or 3 (FUA).
 */
START_TEST(dpo_fua_field_pointer_in_32_byte_cdbs)
{
	static const struct scsi_op read32 = { .name = "READ(32)", .opcode = 0x7f };
	uint8_t flags[2] = { 0x10, 0x08 };

	for (int i = 0; i < 2; i++) {
		setup_lu(2, 512, 0);
		lu.num_blocks = 1024;
		lu.mode_current.dpofua = false;
		cmd.op = &read32;
		cmd.cdb[0] = 0x7f;
		cmd.cdb[7] = 0x18;
		put_be16(cmd.cdb + 8, SCSI_SA_READ_32);
		cmd.cdb[10] = flags[i];
		put_be32(cmd.cdb + 28, 1);
		ck_assert_int_eq(sbc_read_parse(&cmd), SCSI_FAILED);
		ck_assert_uint_eq(cmd.sense_info.asc_ascq, ASC_INVALID_FIELD_IN_CDB);
		ck_assert_uint_eq(cmd.sense_info.sks_field, 10);
		ck_assert(cmd.sense_info.sks_cd && cmd.sense_info.sks_bpv);
		ck_assert_uint_eq(cmd.sense_info.sks_bit, i == 0 ? 4 : 3);
	}
}
END_TEST

/* SBC-4 RDPROTECT/WRPROTECT tables, every "may" check done: 000b 001b 101b all, 010b no guard, 011b none, 100b guard. */
START_TEST(checks_per_protect_value)
{
	static const bool guard[6] = { true, true, false, false, true, true };
	static const bool ref[6] = { true, true, true, false, false, true };
	struct sbc_pi_checks c;

	setup_lu(1, 512, 0);
	for (uint8_t p = 0; p < 6; p++) {
		sbc_pi_checks_init(&cmd, p, &c);
		ck_assert_int_eq(c.guard, guard[p]);
		ck_assert_int_eq(c.ref, ref[p]);
		ck_assert(!c.app); /* no expected application tag without a 32-byte CDB */
	}
	/* Type 2: the reference tag is known from a 32-byte CDB only; type 3: never checked. */
	setup_lu(2, 512, 0);
	sbc_pi_checks_init(&cmd, 1, &c);
	ck_assert(!c.ref);
	cmd.pi_cdb32 = true;
	cmd.pi_app_mask = 0xffff;
	sbc_pi_checks_init(&cmd, 1, &c);
	ck_assert(c.ref && c.app && !c.ref_from_lba);
	sbc_pi_checks_init(&cmd, 4, &c);
	ck_assert(!c.app && !c.ref && c.guard);
	setup_lu(3, 512, 0);
	sbc_pi_checks_init(&cmd, 1, &c);
	ck_assert(!c.ref && c.guard);
}
END_TEST

START_TEST(generate_then_verify_type1)
{
	uint8_t data[4 * 512], tuples[4 * 8];
	struct sbc_pi_checks c;
	struct scsi_sense_info s;

	setup_lu(1, 512, 0);
	fill(data, sizeof(data), 1);
	sbc_pi_generate(&cmd, data, 0x100000002ull, 4, 0, tuples);
	for (unsigned i = 0; i < 4; i++) {
		struct pi_tuple t = pi_tuple_decode(tuples + i * 8);

		ck_assert_uint_eq(t.guard, pi_guard(data + i * 512, 512));
		ck_assert_uint_eq(t.app_tag, 0);
		ck_assert_uint_eq(t.ref_tag, 2 + i); /* the low 32 bits of the LBA */
	}
	sbc_pi_checks_init(&cmd, 0, &c);
	ck_assert(sbc_pi_verify(&lu, &c, data, tuples, 0x100000002ull, 4, 0, &s));
	/* A flipped data bit in block 2: 0B/10/01 with INFORMATION = its LBA. */
	data[2 * 512 + 7] ^= 1;
	ck_assert(!sbc_pi_verify(&lu, &c, data, tuples, 0x100000002ull, 4, 0, &s));
	ck_assert_uint_eq(s.key, SENSE_KEY_ABORTED_COMMAND);
	ck_assert_uint_eq(s.asc_ascq, ASC_LOGICAL_BLOCK_GUARD_CHECK_FAILED);
	ck_assert(s.information_valid);
	ck_assert_uint_eq(s.information, 0x100000004ull);
	/* RDPROTECT 011b checks nothing. */
	sbc_pi_checks_init(&cmd, 3, &c);
	ck_assert(sbc_pi_verify(&lu, &c, data, tuples, 0x100000002ull, 4, 0, &s));
	/* Wrong LBA: the reference tag, 10/03, at the first block. */
	data[2 * 512 + 7] ^= 1;
	sbc_pi_checks_init(&cmd, 1, &c);
	ck_assert(!sbc_pi_verify(&lu, &c, data, tuples, 3, 4, 0, &s));
	ck_assert_uint_eq(s.asc_ascq, ASC_LOGICAL_BLOCK_REFERENCE_TAG_CHECK_FAILED);
	ck_assert_uint_eq(s.information, 3);
	/* The escape: application tag FFFFh switches every check off (type 1). */
	for (unsigned i = 0; i < 4; i++)
		pi_tuple_encode(tuples + i * 8, (struct pi_tuple){ 0x1234, 0xffff, 99 });
	ck_assert(sbc_pi_verify(&lu, &c, data, tuples, 3, 4, 0, &s));
}
END_TEST

START_TEST(type2_tags_count_per_interval)
{
	uint8_t data[2 * 4096], tuples[2 * 8 * 8];
	struct sbc_pi_checks c;
	struct scsi_sense_info s;

	setup_lu(2, 4096, 3); /* eight 512-byte intervals per block */
	cmd.pi_cdb32 = true;
	cmd.pi_ref_tag = 1000;
	cmd.pi_app_tag = 0xab00;
	cmd.pi_app_mask = 0xff00;
	fill(data, sizeof(data), 2);
	sbc_pi_generate(&cmd, data, 50, 2, 0, tuples);
	for (unsigned k = 0; k < 16; k++) {
		struct pi_tuple t = pi_tuple_decode(tuples + k * 8);

		ck_assert_uint_eq(t.guard, pi_guard(data + k * 512, 512));
		ck_assert_uint_eq(t.app_tag, 0xab00);
		ck_assert_uint_eq(t.ref_tag, 1000 + k);
	}
	sbc_pi_checks_init(&cmd, 1, &c);
	ck_assert(sbc_pi_verify(&lu, &c, data, tuples, 50, 2, 0, &s));
	/* The second block read alone: its first interval is interval 8 of the write. */
	cmd.pi_ref_tag = 1008;
	sbc_pi_checks_init(&cmd, 1, &c);
	ck_assert(sbc_pi_verify(&lu, &c, data + 4096, tuples + 64, 51, 1, 0, &s));
	/* Application tag under the mask: ab17h passes FF00h, ac00h does not (10/02). */
	cmd.pi_app_tag = 0xab17;
	sbc_pi_checks_init(&cmd, 1, &c);
	ck_assert(sbc_pi_verify(&lu, &c, data + 4096, tuples + 64, 51, 1, 0, &s));
	cmd.pi_app_tag = 0xac00;
	sbc_pi_checks_init(&cmd, 1, &c);
	ck_assert(!sbc_pi_verify(&lu, &c, data + 4096, tuples + 64, 51, 1, 0, &s));
	ck_assert_uint_eq(s.asc_ascq, ASC_LOGICAL_BLOCK_APPLICATION_TAG_CHECK_FAILED);
	ck_assert_uint_eq(s.information, 51);
}
END_TEST

START_TEST(type1_intervals_follow_the_lba)
{
	uint8_t data[4096], tuples[8 * 8];

	setup_lu(1, 4096, 3);
	fill(data, sizeof(data), 3);
	sbc_pi_generate(&cmd, data, 77, 1, 0, tuples);
	for (unsigned j = 0; j < 8; j++)
		ck_assert_uint_eq(pi_tuple_decode(tuples + j * 8).ref_tag, 77 + j);
}
END_TEST

START_TEST(write_same_replication)
{
	uint8_t first[8], tuples[3 * 8];

	pi_tuple_encode(first, (struct pi_tuple){ 0x5555, 0x0042, 10 });
	setup_lu(1, 512, 0);
	cmd.lba = 10;
	sbc_pi_replicate(&cmd, first, 11, 3, 1, tuples);
	for (unsigned i = 0; i < 3; i++) {
		struct pi_tuple t = pi_tuple_decode(tuples + i * 8);

		ck_assert_uint_eq(t.guard, 0x5555);
		ck_assert_uint_eq(t.app_tag, 0x42);
		ck_assert_uint_eq(t.ref_tag, 11 + i);
	}
	setup_lu(2, 512, 0);
	cmd.pi_cdb32 = true;
	cmd.protect = 1;
	pi_tuple_encode(first, (struct pi_tuple){ 0x5555, 0x0042, 500 });
	sbc_pi_replicate(&cmd, first, 11, 3, 1, tuples); /* blocks 1..3 of the command */
	ck_assert_uint_eq(pi_tuple_decode(tuples).ref_tag, 501);
	ck_assert_uint_eq(pi_tuple_decode(tuples + 16).ref_tag, 503);
	setup_lu(3, 512, 0);
	sbc_pi_replicate(&cmd, first, 11, 3, 1, tuples);
	ck_assert_uint_eq(pi_tuple_decode(tuples + 16).ref_tag, 500);
}
END_TEST

START_TEST(wire_and_medium_forms)
{
	uint8_t data[2 * 4096], tuples[16 * 8], wire[2 * (4096 + 64)], data2[sizeof(data)], tuples2[sizeof(tuples)];

	setup_lu(3, 4096, 3);
	fill(data, sizeof(data), 4);
	fill(tuples, sizeof(tuples), 5);
	sbc_pi_join(&lu, data, tuples, 2, wire);
	/* Interval data then its tuple: interval 9 starts at 9 * 520. */
	ck_assert(!memcmp(wire + 9 * 520, data + 9 * 512, 512));
	ck_assert(!memcmp(wire + 9 * 520 + 512, tuples + 9 * 8, 8));
	sbc_pi_split(&lu, wire, 2, data2, tuples2);
	ck_assert(!memcmp(data, data2, sizeof(data)));
	ck_assert(!memcmp(tuples, tuples2, sizeof(tuples)));
	/* A hole (zeros) in stored form is the all-FFh escape. */
	memset(tuples2, 0, 8);
	sbc_pi_medium_form(tuples2, 8);
	ck_assert(pi_tuple_is_escape(3, pi_tuple_decode(tuples2)));
	ck_assert_uint_eq(sbc_pi_bytes(&lu, 3), 3 * 64);
	/* The backing file keeps room for 512-byte intervals whatever the exponent. */
	ck_assert_uint_eq(scsi_lu_backing_bytes(4096, 10, true), 10 * (4096 + 64));
	ck_assert_uint_eq(scsi_lu_blocks_in_backing(512, 520 * 7 + 3, true), 7);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sbc_pi");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, dpo_fua_field_pointer_in_32_byte_cdbs);
	tcase_add_test(tc, checks_per_protect_value);
	tcase_add_test(tc, generate_then_verify_type1);
	tcase_add_test(tc, type2_tags_count_per_interval);
	tcase_add_test(tc, type1_intervals_follow_the_lba);
	tcase_add_test(tc, write_same_replication);
	tcase_add_test(tc, wire_and_medium_forms);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
