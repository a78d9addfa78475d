/*
 * zbc_rw.c: the read/write rules of libzbc 01_sk_ascq_check and Linux
 * scsi_debug check_zbc_access_params (one test per row, named after the
 * rule and the sense it gives; the ZBC-2 rows for INACTIVE and gap zones do
 * not apply: no such zones), write tickets (rollback), writes held behind a
 * RESET WRITE POINTER by the LBA locks, host-aware writes.
 *
 * Layout (host managed): 8 zones of 64 blocks, zones 0-1 conventional
 * ([0,128)), zones 2-7 sequential write required ([128,512)).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "manual_executor.h"
#include "scsi_wire.h"
#include "zbc_fixture.h"

#define ZS 64
#define Z(n) ((uint64_t)(n) * ZS)

static struct harness h;

static void setup_hm(void)
{
	zbc_fixture_init(&h, SCSI_LU_ZBC_HM, 8 * ZS, ZS, 2, 2, false, 0);
}

static void setup_hm_urswrz(void)
{
	zbc_fixture_init(&h, SCSI_LU_ZBC_HM, 8 * ZS, ZS, 2, 2, true, 0);
}

static void setup_hm_4k_physical(void)
{
	/* LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT 3: 8 logical blocks per physical block. */
	zbc_fixture_init(&h, SCSI_LU_ZBC_HM, 8 * ZS, ZS, 2, 2, true, 3);
}

static void setup_ha(void)
{
	zbc_fixture_init(&h, SCSI_LU_ZBC_HA, 8 * ZS, ZS, 2, 0, true, 0);
}

static void teardown(void)
{
	zbc_fixture_fini(&h);
}

#define CHECK_WRITE(lba, n, want_key, want_asc)                                                    \
	do {                                                                                      \
		uint8_t key_;                                                                     \
		uint16_t asc_;                                                                    \
		enum scsi_result r_ = zbc_test_write(&h, (lba), (n), &key_, &asc_);               \
		ck_assert_int_eq(r_, (want_key) ? SCSI_FAILED : SCSI_OK);                         \
		ck_assert_uint_eq(key_, (want_key));                                              \
		ck_assert_uint_eq(asc_, (want_asc));                                              \
	} while (0)

#define CHECK_READ(lba, n, want_key, want_asc)                                                     \
	do {                                                                                      \
		uint8_t key_;                                                                     \
		uint16_t asc_;                                                                    \
		enum scsi_result r_ = zbc_test_read(&h, (lba), (n), &key_, &asc_);                \
		ck_assert_int_eq(r_, (want_key) ? SCSI_FAILED : SCSI_OK);                         \
		ck_assert_uint_eq(key_, (want_key));                                              \
		ck_assert_uint_eq(asc_, (want_asc));                                              \
	} while (0)

#define ILLEGAL SENSE_KEY_ILLEGAL_REQUEST
#define PROTECT SENSE_KEY_DATA_PROTECT

/* ---- the rule table (libzbc 01_sk_ascq_check, scsi_debug check_zbc_access_params) ---- */

/* Rule: a write must not cross into a zone of a different type: 05/21/05 WRITE BOUNDARY VIOLATION. */
START_TEST(rule_write_cross_type_is_write_boundary_violation)
{
	CHECK_WRITE(Z(2) - 8, 16, ILLEGAL, ASC_WRITE_BOUNDARY_VIOLATION);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->condition, ZBC_ZC_EMPTY);
}
END_TEST

/* Rule: a write must not cross an SWR zone boundary: 05/21/05. */
START_TEST(rule_write_cross_swr_boundary_is_write_boundary_violation)
{
	CHECK_WRITE(Z(2), 56, 0, 0);
	CHECK_WRITE(Z(2) + 56, 16, ILLEGAL, ASC_WRITE_BOUNDARY_VIOLATION);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->wp, Z(2) + 56);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(3))->condition, ZBC_ZC_EMPTY);
}
END_TEST

/* Rule: an SWR write must not start above the write pointer: 05/21/04 UNALIGNED WRITE COMMAND. */
START_TEST(rule_write_above_wp_is_unaligned_write)
{
	CHECK_WRITE(Z(2) + 8, 8, ILLEGAL, ASC_UNALIGNED_WRITE_COMMAND);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->condition, ZBC_ZC_EMPTY);
}
END_TEST

/* Rule: an SWR write must not start below the write pointer: 05/21/04. */
START_TEST(rule_write_below_wp_is_unaligned_write)
{
	CHECK_WRITE(Z(2), 8, 0, 0);
	CHECK_WRITE(Z(2), 8, ILLEGAL, ASC_UNALIGNED_WRITE_COMMAND);
	CHECK_WRITE(Z(2) + 4, 8, ILLEGAL, ASC_UNALIGNED_WRITE_COMMAND);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->wp, Z(2) + 8);
}
END_TEST

/* Rule: an SWR write ending at or beyond the write pointer must end on a physical block: 05/21/04. */
START_TEST(rule_write_end_not_physical_block_aligned_is_unaligned_write)
{
	CHECK_WRITE(Z(2), 4, ILLEGAL, ASC_UNALIGNED_WRITE_COMMAND);
	CHECK_WRITE(Z(2), 8, 0, 0);
	CHECK_WRITE(Z(2) + 8, 12, ILLEGAL, ASC_UNALIGNED_WRITE_COMMAND);
	/* Conventional zones are not concerned (libzbc 01/075 skips them). */
	CHECK_WRITE(3, 1, 0, 0);
}
END_TEST

/* Rule: a write to a FULL SWR zone: 05/24/00 INVALID FIELD IN CDB (libzbc 01/073). */
START_TEST(rule_write_full_zone_is_invalid_field_in_cdb)
{
	CHECK_WRITE(Z(2), ZS, 0, 0);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->condition, ZBC_ZC_FULL);
	CHECK_WRITE(Z(2), 8, ILLEGAL, ASC_INVALID_FIELD_IN_CDB);
	CHECK_WRITE(Z(3) - 8, 8, ILLEGAL, ASC_INVALID_FIELD_IN_CDB);
}
END_TEST

/* Rule: a write that needs an implicit open while all resources are explicitly open: 07/55/0E (libzbc 01/170-171). */
START_TEST(rule_write_without_zone_resources_is_insufficient_zone_resources)
{
	struct harness_result r;

	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(3), false, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(4), false, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_GOOD);
	CHECK_WRITE(Z(2), 8, PROTECT, ASC_INSUFFICIENT_ZONE_RESOURCES);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->condition, ZBC_ZC_EMPTY);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->wp, Z(2));
	/* An explicitly opened zone itself takes writes. */
	CHECK_WRITE(Z(3), 8, 0, 0);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(3))->condition, ZBC_ZC_EXPLICITLY_OPENED);
	/* A CLOSED zone needs a resource too (libzbc 01/170). */
	zbc_test_out(&h, ZBC_SA_CLOSE_ZONE, Z(3), false, &r);
	zbc_test_out(&h, ZBC_SA_OPEN_ZONE, Z(5), false, &r);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(3))->condition, ZBC_ZC_CLOSED);
	CHECK_WRITE(Z(3) + 8, 8, PROTECT, ASC_INSUFFICIENT_ZONE_RESOURCES);
}
END_TEST

/* Rule: a read must not cross into a zone of another type (host managed): 05/21/07 READ BOUNDARY VIOLATION. */
START_TEST(rule_read_cross_type_is_read_boundary_violation)
{
	CHECK_READ(Z(2) - 8, 16, ILLEGAL, ASC_READ_BOUNDARY_VIOLATION);
}
END_TEST

/* Rule: with URSWRZ = 0 a read must not cross an SWR zone boundary: 05/21/07 (libzbc 01/061, 080-083). */
START_TEST(rule_read_cross_swr_boundary_restricted_is_read_boundary_violation)
{
	CHECK_WRITE(Z(2), ZS, 0, 0);
	CHECK_WRITE(Z(3), 16, 0, 0);
	CHECK_READ(Z(3) - 8, 16, ILLEGAL, ASC_READ_BOUNDARY_VIOLATION);
}
END_TEST

/* Rule: with URSWRZ = 0 a read must not go past the write pointer: 05/21/06 ATTEMPT TO READ INVALID DATA. */
START_TEST(rule_read_past_wp_restricted_is_attempt_to_read_invalid_data)
{
	CHECK_READ(Z(2), 1, ILLEGAL, ASC_ATTEMPT_TO_READ_INVALID_DATA);
	CHECK_WRITE(Z(2), 8, 0, 0);
	CHECK_READ(Z(2), 8, 0, 0);
	CHECK_READ(Z(2) + 4, 8, ILLEGAL, ASC_ATTEMPT_TO_READ_INVALID_DATA);
	/* A FULL zone reads in full. */
	CHECK_WRITE(Z(2) + 8, ZS - 8, 0, 0);
	CHECK_READ(Z(2), ZS, 0, 0);
}
END_TEST

/* Rule: with URSWRZ = 1 reads of SWR zones are not limited (past the WP: zeros, GOOD); cross-type still is. */
START_TEST(rule_read_unrestricted_with_urswrz)
{
	CHECK_READ(Z(2), ZS, 0, 0);
	CHECK_READ(Z(3) - 8, 16, 0, 0);
	CHECK_READ(Z(2) - 8, 16, ILLEGAL, ASC_READ_BOUNDARY_VIOLATION);
}
END_TEST

/* Rule: a write to a READ ONLY zone: 07/27/08 ZONE IS READ ONLY; reads are allowed. */
START_TEST(rule_write_read_only_zone_is_zone_is_read_only)
{
	char err[128];

	ck_assert_int_eq(zbc_set_condition(h.lu, Z(3), ZBC_ZC_READ_ONLY, err, sizeof(err)), 0);
	CHECK_WRITE(Z(3), 8, PROTECT, ASC_ZONE_IS_READ_ONLY);
	CHECK_READ(Z(3), ZS, 0, 0);
	/* A conventional zone may be READ ONLY as well. */
	ck_assert_int_eq(zbc_set_condition(h.lu, Z(0), ZBC_ZC_READ_ONLY, err, sizeof(err)), 0);
	CHECK_WRITE(8, 8, PROTECT, ASC_ZONE_IS_READ_ONLY);
	CHECK_READ(8, 8, 0, 0);
}
END_TEST

/* Rule: a read or write of an OFFLINE zone: 07/2C/0E ZONE IS OFFLINE. */
START_TEST(rule_access_offline_zone_is_zone_is_offline)
{
	char err[128];

	ck_assert_int_eq(zbc_set_condition(h.lu, Z(4), ZBC_ZC_OFFLINE, err, sizeof(err)), 0);
	CHECK_WRITE(Z(4), 8, PROTECT, ASC_ZONE_IS_OFFLINE);
	CHECK_READ(Z(4), 8, PROTECT, ASC_ZONE_IS_OFFLINE);
	ck_assert_int_eq(zbc_set_condition(h.lu, Z(1), ZBC_ZC_OFFLINE, err, sizeof(err)), 0);
	CHECK_READ(0, ZS + 1, PROTECT, ASC_ZONE_IS_OFFLINE);
	/* Not a zone start: refused with a message. */
	ck_assert_int_eq(zbc_set_condition(h.lu, Z(4) + 1, ZBC_ZC_OFFLINE, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not the start of a zone"));
}
END_TEST

/* Rule: no restriction inside the conventional area (libzbc 01/065, 01/072). */
START_TEST(rule_conventional_zones_unrestricted)
{
	CHECK_WRITE(10, 5, 0, 0);
	CHECK_WRITE(3, 100, 0, 0);
	CHECK_WRITE(0, 128, 0, 0);
	CHECK_READ(0, 128, 0, 0);
	ck_assert_uint_eq(zbc_test_zone(&h, 0)->condition, ZBC_ZC_NOT_WRITE_POINTER);
	ck_assert_ptr_null(h.lu->zbc->tickets);
}
END_TEST

/* ---- write tickets and deferral ---- */

/* A TRANSFER LENGTH of 0 checks nothing and changes nothing. */
START_TEST(zero_length_write_is_a_no_op)
{
	CHECK_WRITE(Z(2) + 8, 0, 0, 0);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->condition, ZBC_ZC_EMPTY);
}
END_TEST

/* A failed data write rolls the implicit open and the advance back. */
START_TEST(failed_write_rolls_back)
{
	struct zbc_test_cmd tc;

	zbc_test_cmd_init(&tc, &h, Z(2), 8);
	ck_assert_int_eq(zbc_test_write_begin(&tc), SCSI_OK);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->wp, Z(2) + 8);
	zbc_write_end(&tc.cmd, false);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->wp, Z(2));
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->condition, ZBC_ZC_EMPTY);
	ck_assert_uint_eq(h.lu->zbc->nr_implicit_open, 0);
	ck_assert_ptr_null(h.lu->zbc->tickets);
}
END_TEST

/* A queued write checks against the advanced write pointer; a failed earlier write then cannot roll back. */
START_TEST(queued_write_blocks_rollback)
{
	struct zbc_test_cmd a, b;

	zbc_test_cmd_init(&a, &h, Z(2), 8);
	zbc_test_cmd_init(&b, &h, Z(2) + 8, 8);
	ck_assert_int_eq(zbc_test_write_begin(&a), SCSI_OK);
	ck_assert_int_eq(zbc_test_write_begin(&b), SCSI_OK);
	zbc_write_end(&a.cmd, false);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->wp, Z(2) + 16);
	zbc_write_end(&b.cmd, true);
	ck_assert_ptr_null(h.lu->zbc->tickets);
}
END_TEST

/* A write that filled the zone and failed puts the zone back open (its resource is free again). */
START_TEST(failed_write_rolls_back_from_full)
{
	struct zbc_test_cmd tc;

	CHECK_WRITE(Z(2), ZS - 8, 0, 0);
	zbc_test_cmd_init(&tc, &h, Z(3) - 8, 8);
	ck_assert_int_eq(zbc_test_write_begin(&tc), SCSI_OK);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->condition, ZBC_ZC_FULL);
	/* zbc_cmd_complete (the scsi_cmd_complete hook) ends the ticket from the status. */
	scsi_cmd_fail(&tc.cmd, sense_make(SENSE_KEY_MEDIUM_ERROR, ASC_WRITE_ERROR));
	zbc_cmd_complete(&tc.cmd);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->condition, ZBC_ZC_IMPLICITLY_OPENED);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->wp, Z(3) - 8);
	ck_assert_uint_eq(h.lu->zbc->nr_implicit_open, 1);
}
END_TEST

/* WRITE(16) of n blocks at lba on nexus 0 (data: zeros), through the scheduler. */
static void write16_async(uint64_t lba, uint32_t n, struct harness_result *r)
{
	static uint8_t data[8 * 512];
	uint8_t cdb[16] = { 0x8a };

	put_be64(cdb + 2, lba);
	put_be32(cdb + 10, n);
	harness_run(&h, 0, cdb, 16, data, n * 512, n * 512, r);
}

static void tmf_done(void *arg, enum scsi_tmf_response response)
{
	*(enum scsi_tmf_response *)arg = response;
}

/*
 * SAM-5 7.2 LOGICAL UNIT RESET of a zoned write whose job waits for a worker
 * (sched/dispatch.c, executor capacity 1): its handler already moved the
 * write pointer, so it ends only once its job has run, and the blocks under
 * the write pointer are the ones it wrote.
 */
START_TEST(reset_waits_for_a_queued_zoned_write)
{
	static struct harness_result w1, w2, rd;
	static uint8_t data[8 * 512];
	struct manual_executor m;
	enum scsi_tmf_response resp = SCSI_TMF_FUNCTION_REJECTED;
	uint8_t cdb[16] = { 0x8a };

	manual_executor_init(&m);
	m.ex.capacity = 1;
	h.dev->executor = &m.ex;
	write16_async(Z(2), 8, &w1);
	memset(data, 0xa5, sizeof(data));
	put_be64(cdb + 2, Z(3));
	put_be32(cdb + 10, 8);
	harness_run(&h, 0, cdb, 16, data, sizeof(data), sizeof(data), &w2);
	ck_assert_uint_eq(manual_executor_pending(&m), 1); /* W2's job waits in the core */
	ck_assert_uint_eq(m.ex.waiting.count, 1);
	scsi_tmf(h.nexus[1], 0, SCSI_TMF_LOGICAL_UNIT_RESET, NULL, tmf_done, &resp);
	ck_assert(!w2.aborted && !w2.completed);           /* not before its job has run */
	manual_executor_run(&m, 10);
	ck_assert(w1.aborted && w2.aborted);
	ck_assert_int_eq(resp, SCSI_TMF_FUNCTION_COMPLETE);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(3))->wp, Z(3) + 8);
	h.dev->executor = &scsi_executor_inline;
	harness_clear_ua(&h);
	harness_read16(&h, 512, Z(3), 8, &rd);
	ck_assert_mem_eq(rd.data_in, data, sizeof(data)); /* what is under the write pointer was written */
}
END_TEST

/*
 * The LBA locks of the one scheduler (lba_lock.c): a RESET WRITE POINTER
 * holds its zone alone, so it starts only once the write in flight to the
 * zone has ended, and a write that arrives after it starts only once the
 * reset (and its discard) is done, then checked against the reset write
 * pointer.  Each command's exec runs once.
 */
START_TEST(reset_waits_for_writes_and_holds_new_ones)
{
	static struct harness_result w1, reset, w2;
	struct manual_executor m;

	manual_executor_init(&m);
	h.dev->executor = &m.ex;
	write16_async(Z(2), 8, &w1);
	ck_assert_uint_eq(manual_executor_pending(&m), 1); /* W1 runs */
	zbc_test_out(&h, ZBC_SA_RESET_WRITE_POINTER, Z(2), false, &reset);
	ck_assert(!reset.completed);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->wp, Z(2) + 8); /* not reset yet: it waits */
	write16_async(Z(2), 8, &w2);
	ck_assert(!w2.completed);
	ck_assert_uint_eq(manual_executor_pending(&m), 1);
	manual_executor_run(&m, 1); /* W1 ends: the reset starts, W2 still waits behind it */
	ck_assert(w1.completed);
	ck_assert_uint_eq(w1.status, SCSI_STATUS_GOOD);
	ck_assert(!reset.completed);
	ck_assert(!w2.completed);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->condition, ZBC_ZC_EMPTY);
	manual_executor_run(&m, 1); /* the reset's discard: W2 starts at the reset write pointer */
	ck_assert(reset.completed);
	ck_assert_uint_eq(reset.status, SCSI_STATUS_GOOD);
	ck_assert(!w2.completed);
	manual_executor_run(&m, 1);
	ck_assert(w2.completed);
	ck_assert_uint_eq(w2.status, SCSI_STATUS_GOOD);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->wp, Z(2) + 8);
	ck_assert_uint_eq(manual_executor_pending(&m), 0);
	h.dev->executor = &scsi_executor_inline;
}
END_TEST

/* ---- host aware ---- */

/* Host aware (SWP zones): writes anywhere, across SWP zones; the WP tracks the highest LBA; NON_SEQ set. */
START_TEST(host_aware_writes_anywhere)
{
	CHECK_WRITE(Z(2) + 8, 8, 0, 0);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->wp, Z(2) + 16);
	ck_assert(zbc_test_zone(&h, Z(2))->non_seq);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->condition, ZBC_ZC_IMPLICITLY_OPENED);
	CHECK_WRITE(Z(3) - 8, 16, 0, 0);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(2))->condition, ZBC_ZC_FULL);
	ck_assert_uint_eq(zbc_test_zone(&h, Z(3))->wp, Z(3) + 8);
	ck_assert(!zbc_test_zone(&h, Z(3))->non_seq);
	/* A FULL SWP zone still takes writes. */
	CHECK_WRITE(Z(2), 8, 0, 0);
	/* Cross-type writes are still refused (libzbc ZT_DISALLOW_WRITE_XTYPE); reads are not limited. */
	CHECK_WRITE(Z(2) - 8, 16, ILLEGAL, ASC_WRITE_BOUNDARY_VIOLATION);
	CHECK_READ(Z(2) - 8, ZS * 3, 0, 0);
	/* No open zone resources for SWP zones. */
	for (int i = 4; i < 8; i++)
		CHECK_WRITE(Z(i), 8, 0, 0);
	ck_assert_uint_eq(h.lu->zbc->nr_implicit_open, 0);
}
END_TEST

/*
 * Unwritten blocks (zbc.h): in SWR zones, those at or above the write
 * pointer, unless the zone is FULL; contiguous ones make one range;
 * conventional zones have none.
 */
START_TEST(unwritten_plan_and_zeroing)
{
	struct zbc_unwritten *u;
	uint8_t buf[4 * ZS * 512];
	uint8_t *p0 = buf, *p1 = buf + 1000, *p2 = buf + 5000;
	struct iovec iov[3] = { { p0, 1000 }, { p1, 4000 }, { p2, sizeof(buf) - 5000 } };
	struct scsi_sgl sgl = { iov, 3 };

	CHECK_WRITE(Z(2), 8, 0, 0);
	CHECK_WRITE(Z(4), ZS, 0, 0);
	CHECK_WRITE(Z(5), 16, 0, 0);
	ck_assert_int_eq(zbc_unwritten_plan(h.lu, Z(2), 4 * ZS, &u), 0);
	ck_assert_ptr_nonnull(u);
	ck_assert_uint_eq(u->n, 2);
	/* Zone 2 from its write pointer and all of EMPTY zone 3: one range; FULL zone 4: none; zone 5 from its WP. */
	ck_assert_uint_eq(u->range[0].lba, Z(2) + 8);
	ck_assert_uint_eq(u->range[0].nblocks, 2 * ZS - 8);
	ck_assert_uint_eq(u->range[1].lba, Z(5) + 16);
	ck_assert_uint_eq(u->range[1].nblocks, ZS - 16);
	/* Zeroing the blocks read from Z(2) into three uneven pieces: exactly those bytes. */
	memset(buf, 0xff, sizeof(buf));
	zbc_unwritten_zero_sgl(u, 512, Z(2), &sgl);
	for (size_t i = 0; i < sizeof(buf); i++) {
		uint64_t lba = Z(2) + i / 512;
		bool unwritten = (lba >= Z(2) + 8 && lba < Z(4)) || lba >= Z(5) + 16;

		ck_assert_msg(buf[i] == (unwritten ? 0 : 0xff), "byte %zu (LBA %llu)", i, (unsigned long long)lba);
	}
	/* The same from a later LBA into one buffer: only what falls inside it. */
	memset(buf, 0xff, sizeof(buf));
	zbc_unwritten_zero(u, 512, Z(3) + ZS - 4, buf, 8 * 512);
	ck_assert(buf[4 * 512 - 1] == 0 && buf[4 * 512] == 0xff && buf[8 * 512] == 0xff);
	free(u);
	/* Conventional zones and blocks below a write pointer: nothing. */
	ck_assert_int_eq(zbc_unwritten_plan(h.lu, 0, Z(2) + 8, &u), 0);
	ck_assert_ptr_null(u);
}
END_TEST

/* SWP zones release their blocks at a reset instead (a host writes them anywhere): nothing to zero. */
START_TEST(host_aware_has_no_unwritten_plan)
{
	struct zbc_unwritten *u;

	CHECK_WRITE(Z(4) + 10, 8, 0, 0);
	ck_assert_int_eq(zbc_unwritten_plan(h.lu, Z(4), ZS, &u), 0);
	ck_assert_ptr_null(u);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("zbc_rw");
	TCase *rules = tcase_create("rules");
	TCase *unrestricted = tcase_create("urswrz");
	TCase *physical = tcase_create("physical");
	TCase *tickets = tcase_create("tickets");
	TCase *ha = tcase_create("host_aware");

	tcase_add_checked_fixture(rules, setup_hm, teardown);
	tcase_add_test(rules, rule_write_cross_type_is_write_boundary_violation);
	tcase_add_test(rules, rule_write_cross_swr_boundary_is_write_boundary_violation);
	tcase_add_test(rules, rule_write_above_wp_is_unaligned_write);
	tcase_add_test(rules, rule_write_below_wp_is_unaligned_write);
	tcase_add_test(rules, rule_write_full_zone_is_invalid_field_in_cdb);
	tcase_add_test(rules, rule_write_without_zone_resources_is_insufficient_zone_resources);
	tcase_add_test(rules, rule_read_cross_type_is_read_boundary_violation);
	tcase_add_test(rules, rule_read_cross_swr_boundary_restricted_is_read_boundary_violation);
	tcase_add_test(rules, rule_read_past_wp_restricted_is_attempt_to_read_invalid_data);
	tcase_add_test(rules, rule_write_read_only_zone_is_zone_is_read_only);
	tcase_add_test(rules, rule_access_offline_zone_is_zone_is_offline);
	tcase_add_test(rules, rule_conventional_zones_unrestricted);
	suite_add_tcase(s, rules);

	tcase_add_checked_fixture(unrestricted, setup_hm_urswrz, teardown);
	tcase_add_test(unrestricted, rule_read_unrestricted_with_urswrz);
	tcase_add_test(unrestricted, unwritten_plan_and_zeroing);
	suite_add_tcase(s, unrestricted);

	tcase_add_checked_fixture(physical, setup_hm_4k_physical, teardown);
	tcase_add_test(physical, rule_write_end_not_physical_block_aligned_is_unaligned_write);
	suite_add_tcase(s, physical);

	tcase_add_checked_fixture(tickets, setup_hm, teardown);
	tcase_add_test(tickets, zero_length_write_is_a_no_op);
	tcase_add_test(tickets, failed_write_rolls_back);
	tcase_add_test(tickets, queued_write_blocks_rollback);
	tcase_add_test(tickets, failed_write_rolls_back_from_full);
	tcase_add_test(tickets, reset_waits_for_writes_and_holds_new_ones);
	tcase_add_test(tickets, reset_waits_for_a_queued_zoned_write);
	suite_add_tcase(s, tickets);

	tcase_add_checked_fixture(ha, setup_ha, teardown);
	tcase_add_test(ha, host_aware_writes_anywhere);
	tcase_add_test(ha, host_aware_has_no_unwritten_plan);
	suite_add_tcase(s, ha);
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
