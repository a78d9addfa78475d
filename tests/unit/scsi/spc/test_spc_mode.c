/* spc_mode.c, spc_mode_pages.c: MODE SENSE / MODE SELECT (SPC-4 6.11-6.14, 7.5; SBC-4 6.5). */
#include <check.h>
#include <stdio.h>
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

static void sense6(uint8_t byte1, uint8_t byte2, uint8_t subpage, uint8_t allocation_length)
{
	uint8_t cdb[6] = { 0x1a, byte1, byte2, subpage, allocation_length, 0 };
	harness_run(&h, 0, cdb, 6, NULL, 0, 0, &r);
}

static void sense10(uint8_t byte1, uint8_t byte2, uint8_t subpage)
{
	uint8_t cdb[10] = { 0x5a, byte1, byte2, subpage, 0, 0, 0, 0x10, 0x00, 0 };
	harness_run(&h, 0, cdb, 10, NULL, 0, 0, &r);
}

static void select10(int nexus, bool sp, const uint8_t *list, uint16_t len)
{
	uint8_t cdb[10] = { 0x55, (uint8_t)(0x10 | (sp ? 1 : 0)), 0, 0, 0, 0, 0, (uint8_t)(len >> 8), (uint8_t)len, 0 };
	harness_run(&h, nexus, cdb, 10, len ? list : NULL, len, len, &r);
}

/* A MODE SELECT(10) list with an 8-byte header and one page. */
static uint16_t one_page(uint8_t *list, const uint8_t *page, unsigned len)
{
	memset(list, 0, 8);
	memcpy(list + 8, page, len);
	return (uint16_t)(8 + len);
}

/* The current Control page (12 bytes) through MODE SENSE(10) DBD=1, PS cleared. */
static void current_control(uint8_t *page)
{
	sense10(0x08, 0x0a, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	memcpy(page, r.data_in + 8, 12);
	page[0] &= 0x7f;
}

/* SPC-4 7.5.4, SBC-4 6.5.1-6.5.2: MODE SENSE(6) all pages: header, short block descriptor, pages ascending. */
START_TEST(sense6_all_pages)
{
	static const uint8_t order[] = { 0x01, 0x08, 0x0a, 0x1c };
	unsigned off, i = 0;

	sense6(0, 0x3f, 0, 255);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in[0], r.data_in_len - 1); /* MODE DATA LENGTH */
	ck_assert_uint_eq(r.data_in[1], 0);                 /* MEDIUM TYPE */
	ck_assert_uint_eq(r.data_in[2], 0x10);              /* WP 0, DPOFUA 1 */
	ck_assert_uint_eq(r.data_in[3], 8);                 /* BLOCK DESCRIPTOR LENGTH */
	ck_assert_uint_eq(get_be32(r.data_in + 4), 2048);   /* NUMBER OF LOGICAL BLOCKS */
	ck_assert_uint_eq(get_be24(r.data_in + 9), 512);    /* LOGICAL BLOCK LENGTH */
	for (off = 12; off < r.data_in_len; off += 2 + r.data_in[off + 1], i++) {
		ck_assert_uint_lt(i, sizeof(order));
		ck_assert_uint_eq(r.data_in[off] & 0x3f, order[i]);
		ck_assert_uint_eq(r.data_in[off] & 0x40, 0); /* SPF = 0: subpage 00h asks for no subpages */
		ck_assert_uint_eq(r.data_in[off] & 0x80, 0x80); /* PS */
	}
	ck_assert_uint_eq(i, sizeof(order));
	ck_assert_uint_eq(off, r.data_in_len);
}
END_TEST

/* Subpage FFh adds the Control Extension subpage (0Ah/01h, SPF = 1, PAGE LENGTH 1Ch) after Control. */
START_TEST(sense10_all_subpages)
{
	sense10(0x08, 0x3f, 0xff);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(get_be16(r.data_in), r.data_in_len - 2);
	ck_assert_uint_eq(get_be16(r.data_in + 6), 0);
	/* 01h (12) + 08h (20) + 0Ah (12) -> the subpage starts at 8 + 44. */
	ck_assert_uint_eq(r.data_in[52], 0x80 | 0x40 | 0x0a);
	ck_assert_uint_eq(r.data_in[53], 0x01);
	ck_assert_uint_eq(get_be16(r.data_in + 54), 0x1c);
	ck_assert_uint_eq(r.data_in_len, 8 + 12 + 20 + 12 + 32 + 12);
	/* Page 0Ah subpage FFh: Control and Control Extension. */
	sense10(0x08, 0x0a, 0xff);
	ck_assert_uint_eq(r.data_in_len, 8 + 12 + 32);
	/* Page 0Ah subpage 01h alone. */
	sense10(0x08, 0x0a, 0x01);
	ck_assert_uint_eq(r.data_in_len, 8 + 32);
}
END_TEST

/* MODE SENSE(10) LLBAA = 1: LONGLBA = 1 and a 16-byte block descriptor. */
START_TEST(sense10_long_lba)
{
	sense10(0x10, 0x0a, 0);
	ck_assert_uint_eq(r.data_in[4], 0x01);
	ck_assert_uint_eq(get_be16(r.data_in + 6), 16);
	ck_assert_uint_eq(get_be64(r.data_in + 8), 2048);
	ck_assert_uint_eq(get_be32(r.data_in + 20), 512);
	sense10(0x00, 0x0a, 0);
	ck_assert_uint_eq(r.data_in[4], 0x00);
	ck_assert_uint_eq(get_be16(r.data_in + 6), 8);
}
END_TEST

/* PC = changeable: the masks (Caching WCE|RCD, Control D_SENSE and SWP); PC = default / saved. */
START_TEST(sense_page_control)
{
	sense6(0x08, 0x40 | 0x08, 0, 255);
	ck_assert_uint_eq(r.data_in[4], 0x88);
	ck_assert_uint_eq(r.data_in[5], 0x12);
	ck_assert_uint_eq(r.data_in[6], 0x05);
	sense6(0x08, 0x40 | 0x0a, 0, 255);
	ck_assert_uint_eq(r.data_in[6], 0x04);
	ck_assert_uint_eq(r.data_in[8], 0x08);
	ck_assert_uint_eq(r.data_in[9], 0x00);
	sense6(0x08, 0x80 | 0x08, 0, 255);
	ck_assert_uint_eq(r.data_in[6], 0x04); /* default WCE = 1 */
	sense6(0x08, 0xc0 | 0x0a, 0, 255);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in[7], 0x10); /* QUEUE ALGORITHM MODIFIER 1 */
	ck_assert_uint_eq(get_be16(r.data_in + 12), 0xffff); /* BUSY TIMEOUT PERIOD */
}
END_TEST

/* An unsupported page -> 05/24/00 on byte 2; an unsupported subpage -> on byte 3. */
START_TEST(sense_unsupported_page)
{
	sense6(0, 0x3e, 0, 255);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[17], 2);
	sense6(0, 0x0a, 0x05, 255);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[17], 3);
	sense6(0, 0x3f, 0x05, 255);
	ck_assert_uint_eq(r.sense[17], 3);
}
END_TEST

/* ALLOCATION LENGTH truncates; MODE DATA LENGTH keeps the full length. */
START_TEST(sense_truncated)
{
	sense6(0, 0x3f, 0, 4);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(r.data_in_len, 4);
	ck_assert_uint_gt(r.data_in[0], 3);
}
END_TEST

/*
 * SPC-4 7.5.8 / 7.5.1: D_SENSE set through MODE SELECT(10) reads back, the
 * other nexus gets 06/2A/01 once, this one none, and CHECK CONDITION sense is
 * then in descriptor format (72h).
 */
START_TEST(select_d_sense)
{
	uint8_t page[12], list[64];
	uint8_t tur[6] = { 0 }, bad[6] = { 0x02 };

	current_control(page);
	page[2] |= 0x04;
	select10(0, false, list, one_page(list, page, 12));
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(h.lu->mode_current.d_sense);
	current_control(page);
	ck_assert_uint_eq(page[2] & 0x04, 0x04);
	harness_run(&h, 0, tur, 6, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	harness_run(&h, 1, tur, 6, NULL, 0, 0, &r);
	ck_assert_uint_eq(harness_sense_key(&r), 0x6);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2a01);
	harness_run(&h, 1, tur, 6, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	harness_run(&h, 0, bad, 6, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.sense[0], 0x72);
}
END_TEST

/* Caching WCE = 0 reaches lu->mode_current (writes then go through as FUA, sbc.h). */
START_TEST(select_wce)
{
	uint8_t list[64], page[20];

	sense10(0x08, 0x08, 0);
	memcpy(page, r.data_in + 8, 20);
	page[0] &= 0x7f;
	page[2] &= (uint8_t)~0x04;
	select10(0, false, list, one_page(list, page, 20));
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	ck_assert(!h.lu->mode_current.wce);
}
END_TEST

/* SWP = 1: the device-specific parameter says WP and writes get 07/27/00. */
START_TEST(select_swp)
{
	uint8_t page[12], list[64], write10[10] = { 0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
	uint8_t block[512] = { 0 };

	current_control(page);
	page[4] |= 0x08;
	select10(0, false, list, one_page(list, page, 12));
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	sense6(0x08, 0x0a, 0, 255);
	ck_assert_uint_eq(r.data_in[2], 0x90);
	harness_run(&h, 0, write10, 10, block, 512, 512, &r);
	ck_assert_uint_eq(harness_sense_key(&r), 0x7);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2700);
}
END_TEST

/* A changed bit the changeable mask forbids -> 05/26/00, field pointer (C/D = 0) at list byte and bit. */
START_TEST(select_non_changeable_bit)
{
	uint8_t page[12], list[64];

	current_control(page);
	page[2] ^= 0x80; /* TST */
	select10(0, false, list, one_page(list, page, 12));
	ck_assert_uint_eq(harness_sense_key(&r), 0x5);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2600);
	ck_assert_uint_eq(r.sense[15], 0x80 | 0x08 | 7);
	ck_assert_uint_eq(get_be16(r.sense + 16), 8 + 2);
	ck_assert(!h.lu->mode_current.d_sense);
}
END_TEST

/* PAGE LENGTH other than the page's -> 05/26/00 on the PAGE LENGTH byte; nothing applied. */
START_TEST(select_wrong_page_length)
{
	uint8_t page[13] = { 0 }, list[64];

	current_control(page);
	page[1] = 0x0b;
	page[2] |= 0x04;
	select10(0, false, list, one_page(list, page, 13));
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2600);
	ck_assert_uint_eq(get_be16(r.sense + 16), 9);
	ck_assert(!h.lu->mode_current.d_sense);
}
END_TEST

/* Parameter list errors: header cut short or a page cut short -> 05/1A/00; length 0 -> GOOD. */
START_TEST(select_parameter_list_length)
{
	uint8_t page[12], list[64] = { 0 };
	uint8_t cdb6[6] = { 0x15, 0x10, 0, 0, 3, 0 };

	harness_run(&h, 0, cdb6, 6, list, 3, 3, &r);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x1a00);
	current_control(page);
	one_page(list, page, 12);
	select10(0, false, list, 14);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x1a00);
	select10(0, false, list, 0);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
}
END_TEST

/* An unknown page -> 05/26/00 on its PAGE CODE; PF = 0 with pages -> 05/24/00 on PF. */
START_TEST(select_unknown_page_and_pf)
{
	uint8_t list[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0x3e, 0x02, 0, 0 };
	uint8_t page[12], cdb[10] = { 0x55, 0x00, 0, 0, 0, 0, 0, 0, 20, 0 }, list2[64];

	select10(0, false, list, 12);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2600);
	ck_assert_uint_eq(get_be16(r.sense + 16), 8);
	current_control(page);
	one_page(list2, page, 12);
	harness_run(&h, 0, cdb, 10, list2, 20, 20, &r);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[15], 0xc0 | 0x08 | 4);
}
END_TEST

/* SBC-4 6.5.2: a block descriptor may repeat the capacity and block length, not change them. */
START_TEST(select_block_descriptor)
{
	uint8_t list[32] = { 0 };

	list[7] = 8; /* BLOCK DESCRIPTOR LENGTH */
	put_be32(list + 8, 2048);
	put_be24(list + 13, 512);
	select10(0, false, list, 16);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	put_be24(list + 13, 4096);
	select10(0, false, list, 16);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2600);
	ck_assert_uint_eq(get_be16(r.sense + 16), 13);
	list[7] = 12;
	select10(0, false, list, 20);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2600);
	ck_assert_uint_eq(get_be16(r.sense + 16), 6);
}
END_TEST

/* SP = 1 saves: PC = saved reads it back and a new LU on the same state directory starts with it. */
START_TEST(select_save_and_reload)
{
	uint8_t page[12], list[64];
	struct scsi_device *dev2;
	struct scsi_lu *lu2;
	struct scsi_lu_params p = h.lu->params;
	char err[128];

	current_control(page);
	page[2] |= 0x04;
	select10(0, true, list, one_page(list, page, 12));
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	sense6(0x08, 0xc0 | 0x0a, 0, 255);
	ck_assert_uint_eq(r.data_in[6] & 0x04, 0x04);
	sense6(0x08, 0x80 | 0x0a, 0, 255);
	ck_assert_uint_eq(r.data_in[6] & 0x04, 0x00);

	dev2 = scsi_device_create("iqn.2026-12.org.sbcemu:reload", NULL, NULL);
	lu2 = scsi_lu_create(dev2, &p, be_mem_open(2048 * 512), err, sizeof(err));
	ck_assert_ptr_nonnull(lu2);
	ck_assert(lu2->mode_current.d_sense);
	scsi_device_destroy(dev2);
}
END_TEST

/* A corrupt saved-pages file means default values, and the LU still comes up. */
START_TEST(corrupt_file_defaults)
{
	char path[400];
	FILE *f;
	struct scsi_device *dev2;
	struct scsi_lu *lu2;
	struct scsi_lu_params p = h.lu->params;
	char err[128];

	snprintf(path, sizeof(path), "%s/mode_pages", h.state_dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("SBCEMODE\0\0\0\1garbage", f);
	fclose(f);
	dev2 = scsi_device_create("iqn.2026-12.org.sbcemu:reload", NULL, NULL);
	lu2 = scsi_lu_create(dev2, &p, be_mem_open(2048 * 512), err, sizeof(err));
	ck_assert_ptr_nonnull(lu2);
	ck_assert(!lu2->mode_current.d_sense);
	ck_assert(lu2->mode_current.wce);
	scsi_device_destroy(dev2);
}
END_TEST

/* SPC-4 7.5.12: MRIE 7h-Bh is reserved -> 05/26/00 on byte 3 of the page. */
START_TEST(select_iec_mrie)
{
	uint8_t page[12], list[64];

	sense10(0x08, 0x1c, 0);
	memcpy(page, r.data_in + 8, 12);
	page[0] &= 0x7f;
	page[3] = 0x08;
	select10(0, false, list, one_page(list, page, 12));
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2600);
	ck_assert_uint_eq(get_be16(r.sense + 16), 8 + 3);
	page[3] = 0x04;
	select10(0, false, list, one_page(list, page, 12));
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spc_mode");
	TCase *tc = tcase_create("mode");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, sense6_all_pages);
	tcase_add_test(tc, sense10_all_subpages);
	tcase_add_test(tc, sense10_long_lba);
	tcase_add_test(tc, sense_page_control);
	tcase_add_test(tc, sense_unsupported_page);
	tcase_add_test(tc, sense_truncated);
	tcase_add_test(tc, select_d_sense);
	tcase_add_test(tc, select_wce);
	tcase_add_test(tc, select_swp);
	tcase_add_test(tc, select_non_changeable_bit);
	tcase_add_test(tc, select_wrong_page_length);
	tcase_add_test(tc, select_parameter_list_length);
	tcase_add_test(tc, select_unknown_page_and_pf);
	tcase_add_test(tc, select_block_descriptor);
	tcase_add_test(tc, select_save_and_reload);
	tcase_add_test(tc, corrupt_file_defaults);
	tcase_add_test(tc, select_iec_mrie);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
