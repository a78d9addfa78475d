/* spc_mode_pages.c: the mode page table, saved-pages image, lu->mode_current (SPC-4 7.5, SBC-4 6.5). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "spc/spc.h"

static struct harness h;

static void setup(void)
{
	harness_init(&h, 2048, 512, NULL);
}

static void teardown(void)
{
	harness_fini(&h);
}

/* SPC-4 6.13: MODE SENSE returns pages in ascending page code, then subpage code, order. */
START_TEST(table_sorted)
{
	for (size_t i = 1; i < spc_mode_pages_len; i++) {
		const struct spc_mode_page_def *a = &spc_mode_pages[i - 1], *b = &spc_mode_pages[i];
		ck_assert(a->page_code < b->page_code ||
			  (a->page_code == b->page_code && a->subpage_code < b->subpage_code));
	}
}
END_TEST

/* SPC-4 7.5.7: each default page carries its own header: PAGE CODE, SPF, (SUBPAGE CODE), PAGE LENGTH. */
START_TEST(headers_consistent)
{
	for (size_t i = 0; i < spc_mode_pages_len; i++) {
		const struct spc_mode_page_def *d = &spc_mode_pages[i];
		ck_assert_uint_le(d->len, SPC_MODE_PAGE_MAX);
		ck_assert_uint_eq(d->defaults[0] & 0x3f, d->page_code);
		ck_assert_uint_eq((d->defaults[0] & 0x40) != 0, d->spf);
		ck_assert_uint_eq(d->defaults[0] & 0x80, 0);
		if (d->spf) {
			ck_assert_uint_eq(d->defaults[1], d->subpage_code);
			ck_assert_uint_eq(get_be16(d->defaults + 2), d->len - 4);
		} else {
			ck_assert_uint_eq(d->defaults[1], d->len - 2);
		}
		/* The header is never changeable. */
		ck_assert_uint_eq(d->changeable[0] | d->changeable[1], 0);
		if (d->check)
			ck_assert_int_lt(d->check(d->defaults), 0);
	}
}
END_TEST

/* Defaults reach lu->mode_current: WCE = 1, D_SENSE = 0, SWP = 0, DPOFUA = 1. */
START_TEST(defaults_in_mode_current)
{
	ck_assert(h.lu->mode_current.wce);
	ck_assert(!h.lu->mode_current.rcd);
	ck_assert(!h.lu->mode_current.d_sense);
	ck_assert(!h.lu->mode_current.swp);
	ck_assert(!h.lu->mode_current.tas);
	ck_assert_uint_eq(h.lu->mode_current.qerr, 0);
	ck_assert(h.lu->mode_current.dpofua);
}
END_TEST

/* The saved image keeps only changeable bits: a non-changeable bit in the file is not loaded. */
START_TEST(image_round_trip_changeable_only)
{
	struct spc_mode_state *m = h.lu->mode;
	struct scsi_device *dev2;
	struct scsi_lu *lu2;
	struct scsi_lu_params p = h.lu->params;
	uint8_t *img;
	size_t len;
	char err[128];

	m->current[2][2] |= 0x04; /* Control D_SENSE (changeable) */
	m->current[2][2] |= 0x20; /* Control TST bit (not changeable) */
	m->current[1][2] &= (uint8_t)~0x04; /* Caching WCE = 0 */
	img = spc_mode_save_image(m, &len);
	ck_assert_ptr_nonnull(img);
	ck_assert_mem_eq(img, "SBCEMODE", 8);
	ck_assert_int_eq(spc_persist_write_now(&m->file, img, len), 0);
	free(img);
	dev2 = scsi_device_create("iqn.2026-12.org.sbcemu:reload", NULL, NULL);
	lu2 = scsi_lu_create(dev2, &p, be_mem_open(2048 * 512), err, sizeof(err));
	ck_assert_ptr_nonnull(lu2);
	ck_assert(lu2->mode_current.d_sense);
	ck_assert(!lu2->mode_current.wce);
	ck_assert_uint_eq(lu2->mode->current[2][2] & 0x20, 0);
	ck_assert_mem_eq(lu2->mode->saved, lu2->mode->current, sizeof(lu2->mode->saved));
	scsi_device_destroy(dev2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spc_mode_pages");
	TCase *tc = tcase_create("pages");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, table_sorted);
	tcase_add_test(tc, headers_consistent);
	tcase_add_test(tc, defaults_in_mode_current);
	tcase_add_test(tc, image_round_trip_changeable_only);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
