/* spc_vpd.c: INQUIRY vital product data pages (SPC-4 7.8, SBC-4 6.6). */
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

static void vpd(uint8_t page, uint16_t allocation_length)
{
	uint8_t cdb[6] = { 0x12, 0x01, page, (uint8_t)(allocation_length >> 8), (uint8_t)allocation_length, 0 };
	harness_run(&h, 0, cdb, 6, NULL, 0, 0, &r);
}

static void reinit(const struct scsi_lu_params *p)
{
	harness_fini(&h);
	harness_init(&h, 2048, 512, p);
	harness_clear_ua(&h);
}

/* SPC-4 7.8.14: Supported VPD Pages lists exactly the pages served, ascending. */
START_TEST(supported_pages_list)
{
	static const uint8_t pages[] = { 0x00, 0x80, 0x83, 0x86, 0x8f, 0xb0, 0xb1, 0xb2 };
	uint8_t list[16];
	unsigned n;

	vpd(0x00, 255);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in[0], 0x00);
	ck_assert_uint_eq(r.data_in[1], 0x00);
	ck_assert_uint_eq(r.data_in[3], sizeof(pages));
	ck_assert_uint_eq(r.data_in_len, 4 + sizeof(pages));
	ck_assert_mem_eq(r.data_in + 4, pages, sizeof(pages));
	n = r.data_in[3];
	memcpy(list, r.data_in + 4, n);
	/* Every listed page answers GOOD with its PAGE CODE and a PAGE LENGTH matching the data. */
	for (unsigned i = 0; i < n; i++) {
		vpd(list[i], 1024);
		ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
		ck_assert_uint_eq(r.data_in[1], list[i]);
		ck_assert_uint_eq(r.data_in_len, 4u + (uint32_t)((r.data_in[2] << 8) | r.data_in[3]));
	}
}
END_TEST

/* SPC-4 6.6.1: a VPD page that is not supported -> 05/24/00 on the PAGE CODE. */
START_TEST(unsupported_page)
{
	vpd(0x85, 255);
	ck_assert_uint_eq(r.status, SCSI_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[17], 2);
	vpd(0xb6, 255); /* Zoned Block Device Characteristics: not on a conventional LU */
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
}
END_TEST

/* SPC-4 7.8.15: Unit Serial Number, the configured serial. */
START_TEST(unit_serial_number)
{
	vpd(0x80, 255);
	ck_assert_uint_eq(r.data_in[3], 11);
	ck_assert_mem_eq(r.data_in + 4, "HARNESS0001", 11);
}
END_TEST

/* SPC-4 7.8.6: NAA (locally assigned, derived), T10 vendor ID, relative target port, target port group, names. */
START_TEST(device_identification)
{
	const uint8_t *d;
	unsigned len;

	vpd(0x83, 1024);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	len = (unsigned)(r.data_in[2] << 8 | r.data_in[3]);
	d = r.data_in + 4;
	/* NAA 3h, 8 bytes, association LU, code set binary. */
	ck_assert_uint_eq(d[0], 0x01);
	ck_assert_uint_eq(d[1], 0x03);
	ck_assert_uint_eq(d[3], 8);
	ck_assert_uint_eq(d[4] >> 4, 0x3);
	d += 4 + d[3];
	/* T10 vendor ID: "SBCEMU  " + serial. */
	ck_assert_uint_eq(d[0], 0x02);
	ck_assert_uint_eq(d[1], 0x01);
	ck_assert_uint_eq(d[3], 8 + 11);
	ck_assert_mem_eq(d + 4, "SBCEMU  HARNESS0001", 19);
	d += 4 + d[3];
	/* Relative target port: iSCSI, PIV, association target port, type 4, value 1. */
	ck_assert_uint_eq(d[0], 0x51);
	ck_assert_uint_eq(d[1], 0x94);
	ck_assert_uint_eq(d[3], 4);
	ck_assert_uint_eq(d[7], 1);
	d += 4 + d[3];
	ck_assert_uint_eq(d[1], 0x95); /* target port group */
	d += 4 + d[3];
	/* SCSI name string of the target port: UTF-8, null terminated, a multiple of 4. */
	ck_assert_uint_eq(d[0], 0x53);
	ck_assert_uint_eq(d[1], 0x98);
	ck_assert_uint_eq(d[3] % 4, 0);
	ck_assert_str_eq((const char *)d + 4, "iqn.2026-12.org.sbcemu:harness,t,0x0001");
	d += 4 + d[3];
	ck_assert_uint_eq(d[1], 0xa8); /* target device name */
	ck_assert_str_eq((const char *)d + 4, "iqn.2026-12.org.sbcemu:harness");
	d += 4 + d[3];
	ck_assert_uint_eq((unsigned)(d - r.data_in), 4 + len);
}
END_TEST

/* A configured NAA: NAA IEEE Registered Extended (6h), 16 bytes; stable across commands. */
START_TEST(device_identification_naa6)
{
	struct scsi_lu_params p = h.lu->params;
	uint8_t first[16];

	p.naa = 0x6001405abcdef000ull;
	reinit(&p);
	vpd(0x83, 1024);
	ck_assert_uint_eq(r.data_in[4 + 3], 16);
	ck_assert_uint_eq(r.data_in[8], 0x60);
	ck_assert_uint_eq(r.data_in[9], 0x01);
	memcpy(first, r.data_in + 8, 16);
	vpd(0x83, 1024);
	ck_assert_mem_eq(r.data_in + 8, first, 16);
}
END_TEST

/* SBC-4 6.6.4: Block Limits from params; UNMAP limits only with thin provisioning. */
START_TEST(block_limits)
{
	struct scsi_lu_params p = h.lu->params;

	p.lbppbe = 3;
	p.max_transfer_length = 8192;
	p.optimal_transfer_length = 256;
	p.max_write_same_length = 65536;
	reinit(&p);
	vpd(0xb0, 255);
	ck_assert_uint_eq(r.data_in_len, 64);
	ck_assert_uint_eq(r.data_in[3], 0x3c);
	ck_assert_uint_eq(r.data_in[4], 0x00);       /* WSNZ 0 */
	ck_assert_uint_eq(r.data_in[5], 255);        /* MAXIMUM COMPARE AND WRITE LENGTH */
	ck_assert_uint_eq(r.data_in[7], 8);          /* OPTIMAL TRANSFER LENGTH GRANULARITY = 2^LBPPBE */
	ck_assert_uint_eq(get_be32(r.data_in + 8), 8192);
	ck_assert_uint_eq(get_be32(r.data_in + 12), 256);
	ck_assert_uint_eq(get_be32(r.data_in + 20), 0xffffffff); /* thin, harness limit FFFFFFFFh */
	ck_assert_uint_eq(get_be32(r.data_in + 24), 256);
	ck_assert_uint_eq(get_be32(r.data_in + 28), 8);
	ck_assert_uint_eq(get_be64(r.data_in + 36), 65536);
	ck_assert_uint_eq(get_be32(r.data_in + 44), 0);

	p.thin_provisioning = false;
	reinit(&p);
	vpd(0xb0, 255);
	ck_assert_uint_eq(get_be32(r.data_in + 20), 0);
	ck_assert_uint_eq(get_be32(r.data_in + 24), 0);
}
END_TEST

/* SBC-4 6.6.2: Block Device Characteristics: non-rotating, WABEREQ/WACEREQ 01b, FUAB, VBULS. */
START_TEST(block_device_characteristics)
{
	vpd(0xb1, 255);
	ck_assert_uint_eq(r.data_in_len, 64);
	ck_assert_uint_eq(get_be16(r.data_in + 4), 0x0001);
	ck_assert_uint_eq(r.data_in[7], 0x50);
	ck_assert_uint_eq(r.data_in[8], 0x03);
}
END_TEST

/* SBC-4 6.6.5: Logical Block Provisioning: thin -> LBPU LBPWS LBPWS10 LBPRZ=001b, type 2; else all clear. */
START_TEST(logical_block_provisioning)
{
	struct scsi_lu_params p = h.lu->params;

	vpd(0xb2, 255);
	ck_assert_uint_eq(r.data_in_len, 8);
	ck_assert_uint_eq(r.data_in[3], 4);
	ck_assert_uint_eq(r.data_in[5], 0xe4);
	ck_assert_uint_eq(r.data_in[6], 0x02);
	p.thin_provisioning = false;
	reinit(&p);
	vpd(0xb2, 255);
	ck_assert_uint_eq(r.data_in[5], 0x00);
	ck_assert_uint_eq(r.data_in[6], 0x00);
}
END_TEST

/* SPC-4 7.8.7: Extended INQUIRY Data: PRIOR_SUP HEADSUP ORDSUP SIMPSUP, V_SUP, LUICLR. */
START_TEST(extended_inquiry)
{
	vpd(0x86, 255);
	ck_assert_uint_eq(r.data_in_len, 64);
	ck_assert_uint_eq(r.data_in[4], 0x00);
	ck_assert_uint_eq(r.data_in[5], 0x0f);
	ck_assert_uint_eq(r.data_in[6], 0x01);
	ck_assert_uint_eq(r.data_in[7], 0x01);
}
END_TEST

/* The page is truncated by the ALLOCATION LENGTH; PAGE LENGTH still gives the full size. */
START_TEST(vpd_truncated)
{
	vpd(0xb0, 4);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 4);
	ck_assert_uint_eq(r.data_in[3], 0x3c);
}
END_TEST

/* A LUN without an LU: page 00h (PQ 011b) lists only itself; other pages -> 05/24/00. */
START_TEST(no_lu_pages)
{
	uint8_t cdb[6] = { 0x12, 0x01, 0x00, 0, 255, 0 };

	lun_runner_run(&h, 0, 9, cdb, 6, 255, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 5);
	ck_assert_uint_eq(r.data_in[0], 0x7f);
	ck_assert_uint_eq(r.data_in[4], 0x00);
	cdb[2] = 0x83;
	lun_runner_run(&h, 0, 9, cdb, 6, 255, &r);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spc_vpd");
	TCase *tc = tcase_create("vpd");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, supported_pages_list);
	tcase_add_test(tc, unsupported_page);
	tcase_add_test(tc, unit_serial_number);
	tcase_add_test(tc, device_identification);
	tcase_add_test(tc, device_identification_naa6);
	tcase_add_test(tc, block_limits);
	tcase_add_test(tc, block_device_characteristics);
	tcase_add_test(tc, logical_block_provisioning);
	tcase_add_test(tc, extended_inquiry);
	tcase_add_test(tc, vpd_truncated);
	tcase_add_test(tc, no_lu_pages);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
