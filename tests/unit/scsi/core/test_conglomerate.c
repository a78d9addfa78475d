/*
 * conglomerate.c, spc_report_luns.c: an administrative LU at LUN 5 with
 * subsidiaries 1-3 (1 bound to every initiator, 2 to initiator i0 only, 3
 * to none), opened on first use by a test opener on the memory backend.
 * Rules: SPC-5 conglomerates as sg3_utils' sg_luns restates them (SELECT
 * REPORT 10h-12h, LU_CONG), SAM-5 4.7 (two-level LUNs), docs/conglomerate.md.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "lun_runner.h"
#include "core/scsi_internal.h"

#define ADMIN 5u
#define SUB(e) scsi_subsidiary_lun(ADMIN, (e))
#define WLUN 0xc101000000000000ull

static struct harness h;
static struct scsi_lu *admin;
static unsigned opens;
static bool open_fails;

static struct scsi_lu *test_opener(void *arg, struct scsi_device *dev, uint32_t admin_lun, uint16_t element,
				   char *err, size_t errlen)
{
	struct scsi_lu_params p = h.lu->params;

	(void)arg;
	opens++;
	if (open_fails) {
		snprintf(err, errlen, "test: no file");
		return NULL;
	}
	p.lun = scsi_subsidiary_lun(admin_lun, element);
	return scsi_lu_create(dev, &p, be_mem_open(64 * 512), err, errlen);
}

/* Takes every unit attention of both nexuses on the LUs the tests use. */
static void clear_all_ua(void)
{
	struct scsi_sense_info s;
	const uint32_t luns[] = { 0, ADMIN, SUB(1), SUB(2) };

	for (int n = 0; n < 2; n++)
		for (size_t i = 0; i < sizeof(luns) / sizeof(luns[0]); i++)
			while (scsi_ua_take(h.nexus[n], luns[i], &s))
				;
}

static void setup(void)
{
	struct scsi_lu_params p;
	char err[128];

	harness_init(&h, 2048, 512, NULL);
	opens = 0;
	open_fails = false;
	p = h.lu->params;
	p.lun = ADMIN;
	p.kind = SCSI_LU_ADMIN;
	p.num_blocks = 0;
	admin = scsi_lu_create(h.dev, &p, be_mem_open(0), err, sizeof(err));
	ck_assert_ptr_nonnull(admin);
	scsi_device_set_subsidiary_opener(h.dev, test_opener, NULL);
	for (uint16_t e = 1; e <= 3; e++)
		ck_assert_int_eq(scsi_subsidiary_create(admin, e, err, sizeof(err)), 0);
	ck_assert_int_eq(scsi_subsidiary_bind(admin, 1, "*", err, sizeof(err)), 0);
	ck_assert_int_eq(scsi_subsidiary_bind(admin, 2, "iqn.2026-12.test:i0", err, sizeof(err)), 0);
	clear_all_ua();
}

static void teardown(void)
{
	harness_fini(&h);
}

static const uint8_t tur[6] = { 0x00 };
static const uint8_t read10[10] = { 0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0 };

static void report_luns(int nexus, uint64_t sam_lun, uint8_t select, uint32_t alloc, struct harness_result *r)
{
	uint8_t cdb[12] = { 0xa0, 0, select };

	cdb[6] = (uint8_t)(alloc >> 24);
	cdb[7] = (uint8_t)(alloc >> 16);
	cdb[8] = (uint8_t)(alloc >> 8);
	cdb[9] = (uint8_t)alloc;
	lun_runner_run_sam(&h, nexus, sam_lun, cdb, sizeof(cdb), alloc, r);
}

/* The LUN list of a GOOD REPORT LUNS equals want[0..n). */
static void expect_luns(const struct harness_result *r, const uint64_t *want, unsigned n)
{
	harness_expect_good(r);
	ck_assert_uint_eq(get_be32(r->data_in), 8 * n); /* LUN LIST LENGTH */
	ck_assert_uint_eq(r->data_in_len, 8 + 8 * n);
	for (unsigned i = 0; i < n; i++)
		ck_assert_msg(get_be64(r->data_in + 8 + 8 * i) == want[i], "entry %u: %016llx, want %016llx", i,
			      (unsigned long long)get_be64(r->data_in + 8 + 8 * i), (unsigned long long)want[i]);
}

/* SAM-5 4.7, sg_luns decode_lun with LU_CONG = 1: element 3 under administrative element 5. */
START_TEST(lun_two_levels)
{
	uint32_t id;

	ck_assert_uint_eq(scsi_lun_encode(SUB(3)), 0x0005000300000000ull);
	ck_assert(scsi_lun_decode(0x0005000300000000ull, &id));
	ck_assert_uint_eq(id, SUB(3));
	ck_assert(scsi_lun_decode(0x00053fff00000000ull, &id));
	ck_assert_uint_eq(id >> 16, 0x3fff);
	/* A subsidiary element in another address method, or a third level: no LU. */
	ck_assert(!scsi_lun_decode(0x0005400300000000ull, &id));
	ck_assert(!scsi_lun_decode(0x0005000300010000ull, &id));
}
END_TEST

/* SELECT REPORT 00h: every LU, each administrative LU followed by the subsidiaries bound to the nexus. */
START_TEST(select_00h_per_initiator)
{
	struct harness_result r;
	const uint64_t i0[] = { 0, scsi_lun_encode(ADMIN), scsi_lun_encode(SUB(1)), scsi_lun_encode(SUB(2)) };
	const uint64_t i1[] = { 0, scsi_lun_encode(ADMIN), scsi_lun_encode(SUB(1)) };

	report_luns(0, 0, 0x00, 4096, &r);
	expect_luns(&r, i0, 4);
	report_luns(1, 0, 0x00, 4096, &r);
	expect_luns(&r, i1, 3);
}
END_TEST

/* 01h: the REPORT LUNS well-known LU only; 02h: 00h and it. */
START_TEST(select_01h_02h_wlun)
{
	struct harness_result r;
	const uint64_t w[] = { WLUN };
	const uint64_t all[] = { 0, scsi_lun_encode(ADMIN), scsi_lun_encode(SUB(1)), WLUN };

	report_luns(1, 0, 0x01, 4096, &r);
	expect_luns(&r, w, 1);
	report_luns(1, 0, 0x02, 4096, &r);
	expect_luns(&r, all, 4);
}
END_TEST

/* 10h: administrative LUs; 11h: and the LUs of no conglomerate; at LUN 0 or the W-LUN only. */
START_TEST(select_10h_11h)
{
	struct harness_result r;
	const uint64_t adm[] = { scsi_lun_encode(ADMIN) };
	const uint64_t top[] = { 0, scsi_lun_encode(ADMIN) };

	report_luns(0, 0, 0x10, 4096, &r);
	expect_luns(&r, adm, 1);
	report_luns(0, WLUN, 0x10, 4096, &r);
	expect_luns(&r, adm, 1);
	report_luns(0, 0, 0x11, 4096, &r);
	expect_luns(&r, top, 2);
	report_luns(0, scsi_lun_encode(ADMIN), 0x10, 4096, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	harness_expect_field_pointer(&r, 2, -1);
	report_luns(0, scsi_lun_encode(SUB(1)), 0x11, 4096, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
}
END_TEST

/* 12h: the addressed administrative LU and its subsidiaries bound to the nexus; elsewhere 05/20/0D. */
START_TEST(select_12h)
{
	struct harness_result r;
	const uint64_t i0[] = { scsi_lun_encode(ADMIN), scsi_lun_encode(SUB(1)), scsi_lun_encode(SUB(2)) };

	report_luns(0, scsi_lun_encode(ADMIN), 0x12, 4096, &r);
	expect_luns(&r, i0, 3);
	report_luns(0, 0, 0x12, 4096, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_NOT_AN_ADMINISTRATIVE_LOGICAL_UNIT);
	report_luns(0, scsi_lun_encode(SUB(1)), 0x12, 4096, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_NOT_AN_ADMINISTRATIVE_LOGICAL_UNIT);
}
END_TEST

/* Reserved SELECT REPORT values: INVALID FIELD IN CDB on byte 2; the list is cut, its length is not. */
START_TEST(select_reserved_and_truncation)
{
	const uint8_t reserved[] = { 0x03, 0x0f, 0x13, 0xf8, 0xff };
	struct harness_result r;

	for (size_t i = 0; i < sizeof(reserved); i++) {
		report_luns(0, 0, reserved[i], 4096, &r);
		harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
		harness_expect_field_pointer(&r, 2, -1);
	}
	report_luns(0, 0, 0x00, 16, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(get_be32(r.data_in), 32);
	ck_assert_uint_eq(r.data_in_len, 16);
}
END_TEST

/* The backing store of a subsidiary is opened by its first command, once. */
START_TEST(opened_on_first_use)
{
	struct harness_result r;

	ck_assert_ptr_null(scsi_device_lu(h.dev, SUB(1)));
	report_luns(0, 0, 0x00, 4096, &r); /* listing opens nothing */
	ck_assert_uint_eq(opens, 0);
	lun_runner_run(&h, 0, SUB(1), tur, 6, 0, &r);
	ck_assert_uint_eq(opens, 1);
	ck_assert_ptr_nonnull(scsi_device_lu(h.dev, SUB(1)));
	harness_expect_sense(&r, SENSE_KEY_UNIT_ATTENTION, ASC_POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED);
	lun_runner_run(&h, 0, SUB(1), read10, 10, 512, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(opens, 1);
}
END_TEST

/* Not bound to the nexus, or no such subsidiary: 05/68/01; INQUIRY says no LU; a LUN under no conglomerate: 05/25/00. */
START_TEST(unbound_and_missing)
{
	const uint8_t inquiry[6] = { 0x12, 0, 0, 0, 96, 0 };
	struct harness_result r;

	lun_runner_run(&h, 1, SUB(2), read10, 10, 512, &r); /* bound to i0 only */
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_SUBSIDIARY_LOGICAL_UNIT_NOT_CONFIGURED);
	lun_runner_run(&h, 0, SUB(3), read10, 10, 512, &r); /* bound to none */
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_SUBSIDIARY_LOGICAL_UNIT_NOT_CONFIGURED);
	lun_runner_run(&h, 0, SUB(9), read10, 10, 512, &r); /* does not exist */
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_SUBSIDIARY_LOGICAL_UNIT_NOT_CONFIGURED);
	lun_runner_run(&h, 0, scsi_subsidiary_lun(0, 1), read10, 10, 512, &r); /* LUN 0 is no conglomerate */
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_UNIT_NOT_SUPPORTED);
	lun_runner_run(&h, 0, SUB(3), inquiry, 6, 96, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in[0], 0x7f);
	ck_assert_uint_eq(opens, 0);
}
END_TEST

/* SPC-5 LU_CONG (standard INQUIRY byte 1 bit 6) and LU_COLL_TYPE (86h byte 8 bits 7:5 = 001b). */
START_TEST(lu_cong_and_coll_type)
{
	const uint8_t inquiry[6] = { 0x12, 0, 0, 0, 96, 0 };
	const uint8_t ext[6] = { 0x12, 1, 0x86, 0, 64, 0 };
	const uint32_t luns[] = { 0, ADMIN, SUB(1) };
	struct harness_result r;

	for (size_t i = 0; i < 3; i++) {
		lun_runner_run(&h, 0, luns[i], inquiry, 6, 96, &r);
		harness_expect_good(&r);
		ck_assert_uint_eq(r.data_in[1] & 0x40, i ? 0x40 : 0);
		lun_runner_run(&h, 0, luns[i], ext, 6, 64, &r);
		harness_expect_good(&r);
		ck_assert_uint_eq(r.data_in[8] >> 5, i ? 1 : 0);
	}
	/* SAM-5 4.7.4: the REPORT LUNS well-known LU is PERIPHERAL DEVICE TYPE 1Eh. */
	lun_runner_run_sam(&h, 0, WLUN, inquiry, 6, 96, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in[0], 0x1e);
}
END_TEST

/* The subsidiary's Device Identification page names its administrative LU: "naa.<its NAA>,s,<element>". */
START_TEST(designator_ties_to_admin)
{
	const uint8_t vpd83[6] = { 0x12, 1, 0x83, 0x01, 0, 0 };
	struct harness_result ra, rs;
	char want[64] = "naa.";
	const uint8_t *d;
	size_t len, off = 4;
	bool found = false;

	lun_runner_run(&h, 0, ADMIN, vpd83, 6, 256, &ra);
	harness_expect_good(&ra);
	d = ra.data_in + 4; /* the first designator: the admin LU's NAA */
	ck_assert_uint_eq(d[1] & 0x0f, 3);
	for (unsigned i = 0; i < d[3]; i++)
		snprintf(want + 4 + 2 * i, 3, "%02X", d[4 + i]);
	len = strlen(want);
	snprintf(want + len, sizeof(want) - len, ",s,2");
	lun_runner_run(&h, 0, SUB(2), vpd83, 6, 256, &rs);
	harness_expect_good(&rs);
	while (off + 4 <= 4 + (size_t)get_be16(rs.data_in + 2)) {
		d = rs.data_in + off;
		if ((d[1] & 0x0f) == 8 && (d[1] & 0x30) == 0 && strcmp((const char *)d + 4, want) == 0)
			found = true;
		off += 4 + d[3];
	}
	ck_assert_msg(found, "no SCSI name string \"%s\"", want);
}
END_TEST

/* The administrative LU has no medium: READ is INVALID COMMAND OPERATION CODE; READ CAPACITY(10) says LBA 0. */
START_TEST(admin_has_no_medium)
{
	const uint8_t rc10[10] = { 0x25 };
	const uint8_t rc16[16] = { 0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0 };
	const uint8_t sense_caching[6] = { 0x1a, 0x08, 0x08, 0, 64, 0 };
	struct harness_result r;

	lun_runner_run(&h, 0, ADMIN, read10, 10, 512, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_COMMAND_OPERATION_CODE);
	lun_runner_run(&h, 0, ADMIN, rc10, 10, 8, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(get_be32(r.data_in), 0);
	ck_assert_uint_eq(get_be32(r.data_in + 4), 512);
	/* Nothing to provision: READ CAPACITY(16) LBPME = LBPRZ = 0 (byte 14), though the LU it came from was thin. */
	lun_runner_run(&h, 0, ADMIN, rc16, 16, 32, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in[14] & 0xc0, 0);
	/* No cache to write back: the Caching mode page's WCE (byte 2 bit 2) is 0. */
	lun_runner_run(&h, 0, ADMIN, sense_caching, 6, 64, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in[4 + r.data_in[3]] & 0x3f, 0x08);
	ck_assert_uint_eq(r.data_in[4 + r.data_in[3] + 2] & 0x04, 0);
}
END_TEST

/* A bind raises 3F/0E, then 3F/1A on the administrative LU, on the nexuses of that initiator only. */
START_TEST(bind_unit_attentions)
{
	struct harness_result r;
	char err[128];

	ck_assert_int_eq(scsi_subsidiary_bind(admin, 3, "iqn.2026-12.test:i1", err, sizeof(err)), 0);
	lun_runner_run(&h, 0, ADMIN, tur, 6, 0, &r);
	harness_expect_good(&r);
	lun_runner_run(&h, 1, ADMIN, tur, 6, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_UNIT_ATTENTION, ASC_REPORTED_LUNS_DATA_HAS_CHANGED);
	lun_runner_run(&h, 1, ADMIN, tur, 6, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_UNIT_ATTENTION, ASC_SUBSIDIARY_BINDING_CHANGED);
	lun_runner_run(&h, 1, ADMIN, tur, 6, 0, &r);
	harness_expect_good(&r);
	/* "*" concerns every nexus; the unbind raises them again. */
	ck_assert_int_eq(scsi_subsidiary_unbind(admin, 1, "*", err, sizeof(err)), 0);
	for (int n = 0; n < 2; n++) {
		lun_runner_run(&h, n, 0, tur, 6, 0, &r);
		harness_expect_sense(&r, SENSE_KEY_UNIT_ATTENTION, ASC_REPORTED_LUNS_DATA_HAS_CHANGED);
		lun_runner_run(&h, n, ADMIN, tur, 6, 0, &r);
		harness_expect_sense(&r, SENSE_KEY_UNIT_ATTENTION, ASC_SUBSIDIARY_BINDING_CHANGED);
	}
	lun_runner_run(&h, 1, SUB(1), read10, 10, 512, &r);
	harness_expect_sense(&r, SENSE_KEY_ILLEGAL_REQUEST, ASC_SUBSIDIARY_LOGICAL_UNIT_NOT_CONFIGURED);
	ck_assert_int_ne(scsi_subsidiary_unbind(admin, 1, "*", err, sizeof(err)), 0);
	ck_assert_int_ne(scsi_subsidiary_bind(admin, 2, "iqn.2026-12.test:i0", err, sizeof(err)), 0);
}
END_TEST

/* A bound subsidiary is not destroyed; unbound, it goes with its LU. */
START_TEST(destroy_only_unbound)
{
	struct harness_result r;
	char err[128];

	lun_runner_run(&h, 0, SUB(2), tur, 6, 0, &r); /* opens it */
	ck_assert_ptr_nonnull(scsi_device_lu(h.dev, SUB(2)));
	ck_assert_int_ne(scsi_subsidiary_destroy(admin, 2, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "unbind it first"));
	ck_assert_int_eq(scsi_subsidiary_unbind(admin, 2, "iqn.2026-12.test:i0", err, sizeof(err)), 0);
	ck_assert_int_eq(scsi_subsidiary_destroy(admin, 2, err, sizeof(err)), 0);
	ck_assert_ptr_null(scsi_device_lu(h.dev, SUB(2)));
	ck_assert_uint_eq(scsi_subsidiary_count(admin), 2);
	ck_assert_int_ne(scsi_subsidiary_destroy(admin, 2, err, sizeof(err)), 0);
	ck_assert_int_ne(scsi_subsidiary_create(admin, 0, err, sizeof(err)), 0);
	/* The administrative LU goes only without subsidiaries: clear unbinds and destroys them all. */
	ck_assert_int_ne(scsi_lu_remove(h.dev, ADMIN, err, sizeof(err)), 0);
	ck_assert_int_eq(scsi_conglomerate_clear(admin, err, sizeof(err)), 0);
	ck_assert_uint_eq(scsi_subsidiary_count(admin), 0);
	ck_assert_int_eq(scsi_lu_remove(h.dev, ADMIN, err, sizeof(err)), 0);
	ck_assert_ptr_null(scsi_device_lu(h.dev, ADMIN));
}
END_TEST

/* A subsidiary whose backing store does not open: NOT READY, MANUAL INTERVENTION REQUIRED, until it does. */
START_TEST(open_failure_not_ready)
{
	struct harness_result r;

	open_fails = true;
	lun_runner_run(&h, 0, SUB(1), read10, 10, 512, &r);
	harness_expect_sense(&r, SENSE_KEY_NOT_READY, ASC_LOGICAL_UNIT_NOT_READY_MANUAL_INTERVENTION_REQUIRED);
	open_fails = false;
	lun_runner_run(&h, 0, SUB(1), tur, 6, 0, &r);
	harness_expect_sense(&r, SENSE_KEY_UNIT_ATTENTION, ASC_POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED);
	ck_assert_uint_eq(opens, 2);
}
END_TEST

/* Per-nexus state does not grow with subsidiaries the nexus never touched: a thousand binds, two I_T_L entries. */
START_TEST(nexus_state_does_not_grow)
{
	struct harness_result r;
	char err[128];

	for (uint16_t e = 100; e < 1100; e++) {
		ck_assert_int_eq(scsi_subsidiary_create(admin, e, err, sizeof(err)), 0);
		ck_assert_int_eq(scsi_subsidiary_bind(admin, e, "*", err, sizeof(err)), 0);
	}
	ck_assert_uint_le(h.nexus[1]->itl_count, 2);
	report_luns(1, scsi_lun_encode(ADMIN), 0x12, 65536, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(get_be32(r.data_in), 8 * 1002);
	ck_assert_uint_eq(opens, 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("conglomerate");
	TCase *tc = tcase_create("conglomerate");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, lun_two_levels);
	tcase_add_test(tc, select_00h_per_initiator);
	tcase_add_test(tc, select_01h_02h_wlun);
	tcase_add_test(tc, select_10h_11h);
	tcase_add_test(tc, select_12h);
	tcase_add_test(tc, select_reserved_and_truncation);
	tcase_add_test(tc, opened_on_first_use);
	tcase_add_test(tc, unbound_and_missing);
	tcase_add_test(tc, lu_cong_and_coll_type);
	tcase_add_test(tc, designator_ties_to_admin);
	tcase_add_test(tc, admin_has_no_medium);
	tcase_add_test(tc, bind_unit_attentions);
	tcase_add_test(tc, destroy_only_unbound);
	tcase_add_test(tc, open_failure_not_ready);
	tcase_add_test(tc, nexus_state_does_not_grow);
	suite_add_tcase(s, tc);
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
