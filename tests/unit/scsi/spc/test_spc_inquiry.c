/* spc_inquiry.c: standard INQUIRY data (SPC-4 6.6.2). */
#include <check.h>
#include <string.h>

#include "harness.h"
#include "lun_runner.h"
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

static void inquiry(uint8_t evpd, uint8_t page, uint16_t allocation_length)
{
	uint8_t cdb[6] = { 0x12, evpd, page, (uint8_t)(allocation_length >> 8), (uint8_t)allocation_length, 0 };
	harness_run(&h, 0, cdb, 6, NULL, 0, 0, &r);
}

/* SPC-4 6.6.2: the standard data, 96 bytes, field by field. */
START_TEST(standard_inquiry_fields)
{
	static const uint8_t versions[] = { 0x00, 0xa0, 0x09, 0x60, 0x04, 0x60, 0x04, 0xc0, 0x06, 0x00 };

	inquiry(0, 0, 255);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 96);
	ck_assert_uint_eq(r.data_in[0], 0x00);       /* PQ 000b, PDT 00h direct access */
	ck_assert_uint_eq(r.data_in[1], 0x00);       /* RMB 0 */
	ck_assert_uint_eq(r.data_in[2], 0x06);       /* VERSION: SPC-4 */
	ck_assert_uint_eq(r.data_in[3], 0x12);       /* HISUP 1, RESPONSE DATA FORMAT 2 */
	ck_assert_uint_eq(r.data_in[4], 96 - 5);     /* ADDITIONAL LENGTH */
	ck_assert_uint_eq(r.data_in[5], 0x08);       /* TPGS 0, 3PC 1 (the copy manager, spc_xcopy.c), PROTECT 0 */
	ck_assert_uint_eq(r.data_in[7], 0x02);       /* CMDQUE */
	ck_assert_mem_eq(r.data_in + 8, "SBCEMU  ", 8);
	ck_assert_mem_eq(r.data_in + 16, "HARNESS         ", 16);
	ck_assert_mem_eq(r.data_in + 32, "0001", 4);
	ck_assert_mem_eq(r.data_in + 58, versions, sizeof(versions)); /* SAM-5 iSCSI SPC-4 SBC-3 SBC-4 */
	ck_assert_uint_eq(r.data_in[68], 0);
}
END_TEST

/*
 * SPC-4 6.6.2 VERSION DESCRIPTOR: the transport protocol is claimed as the
 * transport says (iSCSI 0960h above); a transport that claims none (TCMU,
 * behind whichever LIO fabric) gets no transport descriptor, the others
 * move up.
 */
START_TEST(version_descriptors_follow_the_transport)
{
	static const uint8_t versions[] = { 0x00, 0xa0, 0x04, 0x60, 0x04, 0xc0, 0x06, 0x00, 0x00, 0x00 };
	struct scsi_transport_ops plain = harness_transport;

	plain.version_descriptor = 0;
	scsi_nexus_destroy(h.nexus[1]);
	h.nexus[1] = scsi_nexus_create(h.dev, &plain, "iqn.2026-12.test:plain,i,0x000000000003",
				       "iqn.2026-12.org.sbcemu:harness,t,0x0001", 1);
	ck_assert_ptr_nonnull(h.nexus[1]);
	harness_run(&h, 1, (const uint8_t[]){ 0x12, 0, 0, 0, 0xff, 0 }, 6, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_mem_eq(r.data_in + 58, versions, sizeof(versions)); /* SAM-5 SPC-4 SBC-3 SBC-4, then none */
	scsi_nexus_destroy(h.nexus[1]); /* plain goes with this function: a nexus of the harness's own again */
	h.nexus[1] = scsi_nexus_create(h.dev, &harness_transport, "iqn.2026-12.test:i1,i,0x000000000002",
				       "iqn.2026-12.org.sbcemu:harness,t,0x0001", 1);
}
END_TEST

/* SPC-4 4.2.5.6: the ALLOCATION LENGTH truncates the data; ADDITIONAL LENGTH is not changed. */
START_TEST(allocation_length_truncates)
{
	inquiry(0, 0, 5);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 5);
	ck_assert_uint_eq(r.data_in[4], 91);
	inquiry(0, 0, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 0);
	/* A 16-bit ALLOCATION LENGTH (SPC-3 and later): 512 gives the whole 96 bytes. */
	inquiry(0, 0, 512);
	ck_assert_uint_eq(r.data_in_len, 96);
}
END_TEST

/* SPC-4 6.6.1: EVPD = 0 with PAGE CODE != 0 -> 05/24/00, field pointer on byte 2. */
START_TEST(evpd_zero_page_code_nonzero)
{
	inquiry(0, 0x80, 255);
	ck_assert_uint_eq(r.status, SCSI_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(harness_sense_key(&r), 0x5);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[15], 0xc0); /* SKSV, C/D = 1, no bit pointer */
	ck_assert_uint_eq(r.sense[17], 2);
}
END_TEST

/* The opcode table's CDB USAGE DATA: CMDDT (byte 1 bit 1, obsolete) -> 05/24/00. */
START_TEST(cmddt_refused)
{
	inquiry(0x02, 0, 255);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[15], 0xc8 | 1);
}
END_TEST

/* SPC-4 6.6.2: a LUN with no logical unit -> PERIPHERAL QUALIFIER 011b, DEVICE TYPE 1Fh. */
START_TEST(no_lu_peripheral_qualifier)
{
	uint8_t cdb[6] = { 0x12, 0, 0, 0, 96, 0 };

	lun_runner_run(&h, 0, 7, cdb, 6, 96, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 96);
	ck_assert_uint_eq(r.data_in[0], 0x7f);
	ck_assert_uint_eq(r.data_in[2], 0x06);
	ck_assert_mem_eq(r.data_in + 8, "SBCEMU  ", 8);
}
END_TEST

/* RMB follows params.removable; a host-managed zoned LU is PDT 14h and claims ZBC. */
START_TEST(removable_and_zoned)
{
	struct scsi_lu_params p = h.lu->params;

	harness_fini(&h);
	p.removable = true;
	p.kind = SCSI_LU_ZBC_HM;
	harness_init(&h, 2048, 512, &p);
	harness_clear_ua(&h);
	inquiry(0, 0, 96);
	ck_assert_uint_eq(r.data_in[0], 0x14);
	ck_assert_uint_eq(r.data_in[1], 0x80);
	ck_assert_uint_eq(r.data_in[68], 0x06); /* ZBC 0620h after the five others */
	ck_assert_uint_eq(r.data_in[69], 0x20);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spc_inquiry");
	TCase *tc = tcase_create("standard");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, standard_inquiry_fields);
	tcase_add_test(tc, version_descriptors_follow_the_transport);
	tcase_add_test(tc, allocation_length_truncates);
	tcase_add_test(tc, evpd_zero_page_code_nonzero);
	tcase_add_test(tc, cmddt_refused);
	tcase_add_test(tc, no_lu_peripheral_qualifier);
	tcase_add_test(tc, removable_and_zoned);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
