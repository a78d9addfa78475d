/*
 * An LU whose backend is still being opened (backend_ops.ready false, as
 * be_rbd_open_later's): medium access gets NOT READY, LOGICAL UNIT IS IN
 * PROCESS OF BECOMING READY (02/04/01), INQUIRY is served; once ready, the
 * next command of each I_T nexus gets NOT READY TO READY CHANGE (06/28/00),
 * then I/O runs.  With alua_standby_until_backend the group waits in
 * standby instead.  A backend that keeps state with the medium
 * (backend_ops.state_store, as be_rbd's): the reservations go there, and the
 * LU that gets the medium later takes them over.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "harness.h"
#include "scsi_wire.h"

#define NUM_BLOCKS 1024
#define BS 512

static bool backend_ready;
static struct backend_ops later_ops;

static bool later_ready(struct backend *be)
{
	(void)be;
	return backend_ready;
}

static struct backend_ops shared_ops;
static int store_load(struct backend *be, const char *name, uint8_t **data, size_t *len, size_t max);
static int store_store(struct backend *be, const char *name, const uint8_t *data, size_t len);

/*
 * An LU on a backend whose ready() is backend_ready (ready: its value at the
 * LU's creation), with two I_T nexuses in h; shared: the backend keeps state
 * with the medium in the store below.
 */
static void lu_on_backend(struct harness *h, struct scsi_lu_params *p, char *dir, bool ready, bool shared)
{
	struct scsi_device *dev = scsi_device_create("iqn.2026-12.org.sbcemu:later", NULL, NULL);
	struct backend *be = be_mem_open(NUM_BLOCKS * BS);
	struct backend_ops *ops = shared ? &shared_ops : &later_ops;
	char err[256];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	*ops = *be->ops;
	ops->ready = later_ready;
	if (shared) {
		ops->state_load = store_load;
		ops->state_store = store_store;
	}
	be->ops = ops;
	backend_ready = ready;
	p->kind = SCSI_LU_CONVENTIONAL;
	p->logical_block_size = BS;
	p->num_blocks = NUM_BLOCKS;
	p->state_dir = dir;
	memset(h, 0, sizeof(*h));
	h->lu = scsi_lu_create(dev, p, be, err, sizeof(err));
	ck_assert_msg(h->lu != NULL, "%s", err);
	/* The harness's commands, on this device: its nexuses are made here. */
	h->dev = dev;
	snprintf(h->state_dir, sizeof(h->state_dir), "%s", dir);
	h->nexus[0] = scsi_nexus_create(dev, &harness_transport, "iqn.2026-12.org.sbcemu:a", "", 1);
	h->nexus[1] = scsi_nexus_create(dev, &harness_transport, "iqn.2026-12.org.sbcemu:b", "", 1);
}

static const uint8_t tur[6] = { 0x00 };
static const uint8_t inquiry[6] = { 0x12, 0, 0, 0, 96, 0 };
static const uint8_t read10[10] = { 0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0 };

START_TEST(becoming_ready_until_the_backend_is)
{
	struct scsi_lu_params p;
	struct harness h;
	struct harness_result r;
	char dir[] = "/tmp/sbce-later-XXXXXX";

	memset(&p, 0, sizeof(p));
	lu_on_backend(&h, &p, dir, false, false);
	harness_run(&h, 0, inquiry, sizeof(inquiry), NULL, 0, 96, &r);
	harness_expect_good(&r);
	harness_run(&h, 0, tur, sizeof(tur), NULL, 0, 0, &r);
	harness_expect_sense(&r, 0x6, 0x2900); /* the power on first */
	harness_run(&h, 0, tur, sizeof(tur), NULL, 0, 0, &r);
	harness_expect_sense(&r, 0x2, 0x0401);
	harness_run(&h, 0, read10, sizeof(read10), NULL, 0, 512, &r);
	harness_expect_sense(&r, 0x2, 0x0401);

	backend_ready = true;
	harness_run(&h, 0, tur, sizeof(tur), NULL, 0, 0, &r);
	harness_expect_sense(&r, 0x6, 0x2800);
	harness_run(&h, 0, read10, sizeof(read10), NULL, 0, 512, &r);
	harness_expect_good(&r);
	harness_run(&h, 1, tur, sizeof(tur), NULL, 0, 0, &r);
	harness_expect_sense(&r, 0x6, 0x2900); /* the other nexus: its power on, then the change */
	harness_run(&h, 1, tur, sizeof(tur), NULL, 0, 0, &r);
	harness_expect_sense(&r, 0x6, 0x2800);
	harness_run(&h, 1, read10, sizeof(read10), NULL, 0, 512, &r);
	harness_expect_good(&r);
	harness_fini(&h);
}
END_TEST

/*
 * alua_standby_until_backend (rbd_unavailable = standby): while the backend
 * is being opened the LU's target port group is in standby (SPC-4
 * 5.15.2.4.4: TEST UNIT READY and READ get 02/04/0B, READ CAPACITY and
 * REPORT TARGET PORT GROUPS are served); SET TARGET PORT GROUPS cannot make
 * it active (HARDWARE ERROR, SET TARGET PORT GROUPS COMMAND FAILED, 04/67/0A,
 * SPC-4 6.45); once the backend is open the group becomes active/optimized
 * by an implicit transition: ASYMMETRIC ACCESS STATE CHANGED (06/2A/06) for
 * every I_T nexus, no NOT READY TO READY CHANGE, then I/O.
 */
START_TEST(standby_until_the_backend_is)
{
	static const uint8_t rtpg[12] = { 0xa3, 0x0a, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0 };
	static const uint8_t stpg[12] = { 0xa4, 0x0a, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0 };
	static const uint8_t to_optimized[8] = { 0, 0, 0, 0, 0x00, 0, 0, 1 };
	static const uint8_t read_capacity[10] = { 0x25 };
	struct scsi_lu_params p;
	struct harness h;
	struct harness_result r;
	char dir[] = "/tmp/sbce-standby-XXXXXX";

	memset(&p, 0, sizeof(p));
	p.alua_tpgs = SCSI_TPGS_IMPLICIT | SCSI_TPGS_EXPLICIT;
	p.target_port_group = 1;
	p.alua_standby_until_backend = true;
	lu_on_backend(&h, &p, dir, false, false);
	harness_run(&h, 0, tur, sizeof(tur), NULL, 0, 0, &r);
	harness_expect_sense(&r, 0x6, 0x2900);
	harness_run(&h, 0, tur, sizeof(tur), NULL, 0, 0, &r);
	harness_expect_sense(&r, 0x2, 0x040b);
	harness_run(&h, 0, read10, sizeof(read10), NULL, 0, 512, &r);
	harness_expect_sense(&r, 0x2, 0x040b);
	harness_run(&h, 0, read_capacity, sizeof(read_capacity), NULL, 0, 8, &r);
	harness_expect_good(&r);
	harness_run(&h, 0, rtpg, sizeof(rtpg), NULL, 0, 256, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in[4] & 0x0f, SCSI_ALUA_STANDBY);
	harness_run(&h, 0, stpg, sizeof(stpg), to_optimized, sizeof(to_optimized), 0, &r);
	harness_expect_sense(&r, 0x4, 0x670a);
	harness_run(&h, 0, tur, sizeof(tur), NULL, 0, 0, &r);
	harness_expect_sense(&r, 0x2, 0x040b); /* nothing changed */
	ck_assert_int_ne(scsi_lu_set_alua_state(h.lu, SCSI_ALUA_ACTIVE_OPTIMIZED, dir, 8), 0);

	backend_ready = true;
	harness_run(&h, 0, tur, sizeof(tur), NULL, 0, 0, &r);
	harness_expect_sense(&r, 0x6, 0x2a06);
	harness_run(&h, 0, tur, sizeof(tur), NULL, 0, 0, &r);
	harness_expect_good(&r);
	harness_run(&h, 0, rtpg, sizeof(rtpg), NULL, 0, 256, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in[4] & 0x0f, SCSI_ALUA_ACTIVE_OPTIMIZED);
	ck_assert_uint_eq(r.data_in[9], 0x02); /* STATUS CODE: altered by implicit behaviour */
	harness_run(&h, 0, read10, sizeof(read10), NULL, 0, 512, &r);
	harness_expect_good(&r);
	harness_run(&h, 1, tur, sizeof(tur), NULL, 0, 0, &r);
	harness_expect_sense(&r, 0x6, 0x2900);
	harness_run(&h, 1, tur, sizeof(tur), NULL, 0, 0, &r);
	harness_expect_sense(&r, 0x6, 0x2a06);
	harness_run(&h, 1, read10, sizeof(read10), NULL, 0, 512, &r);
	harness_expect_good(&r);
	harness_fini(&h);
}
END_TEST

/*
 * A backend that loses its medium after the start (be_rbd.c: fenced, then
 * opened again: ready() false again): the next command finds the LU as at
 * a start without it.  Without ALUA: NOT READY, IN PROCESS OF BECOMING
 * READY (02/04/01), then NOT READY TO READY CHANGE (06/28/00) once it is
 * back.  With alua_standby_until_backend: an implicit transition to
 * standby (06/2A/06, then 02/04/0B), and back to active/optimized (06/2A/06)
 * once it is back.
 */
START_TEST(the_backend_lost_and_back)
{
	struct scsi_lu_params p;
	struct harness h;
	struct harness_result r;
	char dir[] = "/tmp/sbce-lost-XXXXXX", dir2[] = "/tmp/sbce-lost-XXXXXX";

	memset(&p, 0, sizeof(p));
	lu_on_backend(&h, &p, dir, true, false);
	harness_clear_ua(&h);
	harness_run(&h, 0, read10, sizeof(read10), NULL, 0, 512, &r);
	harness_expect_good(&r);
	backend_ready = false;
	harness_run(&h, 0, read10, sizeof(read10), NULL, 0, 512, &r);
	harness_expect_sense(&r, 0x2, 0x0401);
	harness_run(&h, 0, tur, sizeof(tur), NULL, 0, 0, &r);
	harness_expect_sense(&r, 0x2, 0x0401);
	backend_ready = true;
	harness_run(&h, 0, tur, sizeof(tur), NULL, 0, 0, &r);
	harness_expect_sense(&r, 0x6, 0x2800);
	harness_run(&h, 0, read10, sizeof(read10), NULL, 0, 512, &r);
	harness_expect_good(&r);
	harness_fini(&h);

	memset(&p, 0, sizeof(p));
	p.alua_tpgs = SCSI_TPGS_IMPLICIT | SCSI_TPGS_EXPLICIT;
	p.target_port_group = 1;
	p.alua_standby_until_backend = true;
	lu_on_backend(&h, &p, dir2, true, false);
	harness_clear_ua(&h);
	harness_run(&h, 0, read10, sizeof(read10), NULL, 0, 512, &r);
	harness_expect_good(&r);
	backend_ready = false;
	harness_run(&h, 0, read10, sizeof(read10), NULL, 0, 512, &r);
	harness_expect_sense(&r, 0x6, 0x2a06);
	harness_run(&h, 0, read10, sizeof(read10), NULL, 0, 512, &r);
	harness_expect_sense(&r, 0x2, 0x040b);
	harness_run(&h, 1, tur, sizeof(tur), NULL, 0, 0, &r);
	harness_expect_sense(&r, 0x6, 0x2a06); /* every I_T nexus is told */
	backend_ready = true;
	harness_run(&h, 0, tur, sizeof(tur), NULL, 0, 0, &r);
	harness_expect_sense(&r, 0x6, 0x2a06);
	harness_run(&h, 0, read10, sizeof(read10), NULL, 0, 512, &r);
	harness_expect_good(&r);
	harness_fini(&h);
}
END_TEST

/* The holder's note the backend read (backend_ops.holder_note); "" none. */
static char holder_note_text[64];

static int later_holder_note(struct backend *be, char *buf, size_t len)
{
	(void)be;
	if (!holder_note_text[0])
		return -ENOENT;
	snprintf(buf, len, "%s", holder_note_text);
	return 0;
}

/* REPORT TARGET PORT GROUPS descriptor i of data (4-byte header): group, state, status, port. */
static void expect_group(const uint8_t *data, unsigned i, uint16_t group, unsigned state, unsigned status,
			 uint16_t port)
{
	const uint8_t *d = data + 4 + i * 12;

	ck_assert_uint_eq(get_be16(d + 2), group);
	ck_assert_uint_eq(d[0] & 0x0f, state);
	ck_assert_uint_eq(d[1], 0x8f);
	ck_assert_uint_eq(d[5], status);
	ck_assert_uint_eq(d[7], 1);
	ck_assert_uint_eq(get_be16(d + 10), port);
}

/*
 * The other nodes' groups (alua_peers, rbd's alua_peer_groups): REPORT
 * TARGET PORT GROUPS (SPC-4 6.37) lists a descriptor per group in group
 * order, RETURN DATA LENGTH 4 + 3 * 12 - 4 = 36.  While this node waits, the
 * group named in the holder's note is active/optimized and the rest standby
 * (all standby when no note was read); once it has the medium its own group
 * is active/optimized (STATUS CODE 02h) and the others standby.  SET TARGET
 * PORT GROUPS (SPC-4 6.45): another node's group asked for the state it is
 * in changes nothing (GOOD), asked for another fails with 04/67/0A; a group
 * nobody has, or one named twice: 05/26/00 pointing at the TARGET PORT
 * GROUP field (byte 2 of the descriptor).
 */
START_TEST(every_node_reports_every_group)
{
	static const uint8_t rtpg[12] = { 0xa3, 0x0a, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0 };
	static const uint8_t stpg[12] = { 0xa4, 0x0a, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0 };
	static const uint8_t stpg2[12] = { 0xa4, 0x0a, 0, 0, 0, 0, 0, 0, 0, 12, 0, 0 };
	static const uint8_t peer3_standby[8] = { 0, 0, 0, 0, 0x02, 0, 0, 3 };
	static const uint8_t peer3_optimized[8] = { 0, 0, 0, 0, 0x00, 0, 0, 3 };
	static const uint8_t group9[8] = { 0, 0, 0, 0, 0x02, 0, 0, 9 };
	static const uint8_t group1_twice[12] = { 0, 0, 0, 0, 0x02, 0, 0, 1, 0x02, 0, 0, 1 };
	struct scsi_lu_params p;
	struct harness h;
	struct harness_result r;
	char dir[] = "/tmp/sbce-peers-XXXXXX";

	memset(&p, 0, sizeof(p));
	p.alua_tpgs = SCSI_TPGS_IMPLICIT | SCSI_TPGS_EXPLICIT;
	p.target_port_group = 2;
	p.alua_standby_until_backend = true;
	p.alua_peer_count = 2;
	p.alua_peers[0] = (struct scsi_alua_peer){ 3, 7 };
	p.alua_peers[1] = (struct scsi_alua_peer){ 1, 5 };
	holder_note_text[0] = '\0';
	lu_on_backend(&h, &p, dir, false, false);
	later_ops.holder_note = later_holder_note; /* lu_on_backend copied the memory backend's ops */
	harness_clear_ua(&h);

	harness_run(&h, 0, rtpg, sizeof(rtpg), NULL, 0, 256, &r);
	harness_expect_good(&r);
	ck_assert_uint_eq(r.data_in_len, 40);
	ck_assert_uint_eq(get_be32(r.data_in), 36);
	expect_group(r.data_in, 0, 1, SCSI_ALUA_STANDBY, 0, 5); /* no note read: nobody known active */
	expect_group(r.data_in, 1, 2, SCSI_ALUA_STANDBY, 0, 1);
	expect_group(r.data_in, 2, 3, SCSI_ALUA_STANDBY, 0, 7);

	scsi_alua_holder_note(3, holder_note_text, sizeof(holder_note_text));
	harness_run(&h, 0, rtpg, sizeof(rtpg), NULL, 0, 256, &r);
	harness_expect_good(&r);
	expect_group(r.data_in, 0, 1, SCSI_ALUA_STANDBY, 0, 5);
	expect_group(r.data_in, 1, 2, SCSI_ALUA_STANDBY, 0, 1);
	expect_group(r.data_in, 2, 3, SCSI_ALUA_ACTIVE_OPTIMIZED, 0, 7);

	harness_run(&h, 0, stpg, sizeof(stpg), peer3_standby, sizeof(peer3_standby), 0, &r);
	harness_expect_sense(&r, 0x4, 0x670a);
	harness_run(&h, 0, stpg, sizeof(stpg), peer3_optimized, sizeof(peer3_optimized), 0, &r);
	harness_expect_good(&r);
	harness_run(&h, 0, stpg, sizeof(stpg), group9, sizeof(group9), 0, &r);
	harness_expect_sense(&r, 0x5, 0x2600);
	ck_assert_uint_eq(get_be16(r.sense + 16), 6); /* the field pointer: byte 6 of the list */
	harness_run(&h, 0, stpg2, sizeof(stpg2), group1_twice, sizeof(group1_twice), 0, &r);
	harness_expect_sense(&r, 0x5, 0x2600);
	ck_assert_uint_eq(get_be16(r.sense + 16), 10);

	backend_ready = true;
	harness_clear_ua(&h);
	harness_run(&h, 0, rtpg, sizeof(rtpg), NULL, 0, 256, &r);
	harness_expect_good(&r);
	expect_group(r.data_in, 0, 1, SCSI_ALUA_STANDBY, 0, 5);
	expect_group(r.data_in, 1, 2, SCSI_ALUA_ACTIVE_OPTIMIZED, 2, 1);
	expect_group(r.data_in, 2, 3, SCSI_ALUA_STANDBY, 0, 7);
	harness_fini(&h);
	later_ops.holder_note = NULL;
}
END_TEST

/* ---- state kept with the medium: one store that every backend below shares ---- */

static struct {
	char name[64];
	uint8_t data[4096];
	size_t len;
	bool present;
} store[4];

static int store_load(struct backend *be, const char *name, uint8_t **data, size_t *len, size_t max)
{
	if (!later_ready(be))
		return -ESHUTDOWN;
	for (size_t i = 0; i < 4; i++) {
		if (!store[i].present || strcmp(store[i].name, name) != 0)
			continue;
		if (store[i].len > max)
			return -EFBIG;
		*data = malloc(store[i].len ? store[i].len : 1);
		memcpy(*data, store[i].data, store[i].len);
		*len = store[i].len;
		return 0;
	}
	return -ENOENT;
}

static int store_store(struct backend *be, const char *name, const uint8_t *data, size_t len)
{
	size_t i, free_slot = 4;

	if (!later_ready(be))
		return -ESHUTDOWN;
	for (i = 0; i < 4 && !(store[i].present && strcmp(store[i].name, name) == 0); i++)
		if (!store[i].present && free_slot == 4)
			free_slot = i;
	if (i == 4)
		i = free_slot;
	ck_assert_uint_lt(i, 4);
	ck_assert_uint_le(len, sizeof(store[i].data));
	snprintf(store[i].name, sizeof(store[i].name), "%s", name);
	if (len)
		memcpy(store[i].data, data, len);
	store[i].len = len;
	store[i].present = len != 0;
	return 0;
}

static bool stored(const char *name)
{
	for (size_t i = 0; i < 4; i++)
		if (store[i].present && strcmp(store[i].name, name) == 0)
			return true;
	return false;
}

static void register_key(struct harness *h, int nexus, uint64_t key)
{
	static const uint8_t prout[10] = { 0x5f, 0x00, 0, 0, 0, 0, 0, 0, 24, 0 };
	uint8_t param[24] = { 0 };
	struct harness_result r;

	put_be64(param + 8, key);
	harness_run(h, nexus, prout, sizeof(prout), param, sizeof(param), 0, &r);
	harness_expect_good(&r);
}

/* PERSISTENT RESERVE IN READ KEYS: how many keys, the first in *first. */
static int read_keys(struct harness *h, int nexus, uint64_t *first, struct harness_result *r)
{
	static const uint8_t prin[10] = { 0x5e, 0x00, 0, 0, 0, 0, 0, 0x10, 0x00, 0 };

	harness_run(h, nexus, prin, sizeof(prin), NULL, 0, 4096, r);
	if (r->status != SCSI_STATUS_GOOD)
		return -1;
	*first = get_be64(r->data_in + 8);
	return (int)(get_be32(r->data_in + 4) / 8);
}

/*
 * SPC-4 5.13.5: registrations without APTPL do not survive a power loss, so
 * an LU that has the medium from its start drops them from the store too;
 * an LU that gets the medium later (another node's failover) takes every
 * registration over; while it waits in standby, PERSISTENT RESERVE IN gets
 * 02/04/0B rather than its own empty state.
 */
START_TEST(reservations_come_with_the_medium)
{
	struct scsi_lu_params p;
	struct harness h1, h2, h3;
	struct harness_result r;
	char dir1[] = "/tmp/sbce-shared-XXXXXX", dir2[] = "/tmp/sbce-shared-XXXXXX", dir3[] = "/tmp/sbce-shared-XXXXXX";
	uint64_t first;
	int n;

	memset(store, 0, sizeof(store));
	memset(&p, 0, sizeof(p));
	lu_on_backend(&h1, &p, dir1, true, true);
	harness_clear_ua(&h1);
	register_key(&h1, 0, 0x11);
	ck_assert(stored("persistent_reservations")); /* APTPL 0, yet kept where the state is shared */

	lu_on_backend(&h2, &p, dir2, true, true);
	harness_clear_ua(&h2);
	ck_assert_int_eq(read_keys(&h2, 0, &first, &r), 0);
	ck_assert(!stored("persistent_reservations"));

		register_key(&h1, 1, 0x22); /* h1 writes both of its registrations again */
	memset(&p, 0, sizeof(p));
	p.alua_tpgs = SCSI_TPGS_IMPLICIT | SCSI_TPGS_EXPLICIT;
	p.target_port_group = 2;
	p.alua_standby_until_backend = true;
	lu_on_backend(&h3, &p, dir3, false, true);
	harness_clear_ua(&h3);
	read_keys(&h3, 0, &first, &r);
	harness_expect_sense(&r, 0x2, 0x040b);
	backend_ready = true;
	harness_clear_ua(&h3);
	n = read_keys(&h3, 0, &first, &r);
	ck_assert_int_eq(n, 2);
	harness_fini(&h1);
	harness_fini(&h2);
	harness_fini(&h3);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("backend_ready");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, becoming_ready_until_the_backend_is);
	tcase_add_test(tc, standby_until_the_backend_is);
	tcase_add_test(tc, every_node_reports_every_group);
	tcase_add_test(tc, the_backend_lost_and_back);
	tcase_add_test(tc, reservations_come_with_the_medium);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
