/*
 * cmd.c: the table-driven prologue (gates before any handler runs), and the
 * transport-owned buffers: Data-Out and Data-In in several pieces, as the
 * TCMU ring's data area gives them.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "core/scsi_internal.h"
#include "scsi_wire.h"

static struct harness h;

static void setup(void)
{
	harness_init(&h, 2048, 512, NULL);
}

static void teardown(void)
{
	harness_fini(&h);
}

/* SAM-5 5.14: the first command after the nexus appears gets UNIT ATTENTION 06/29/00. */
START_TEST(power_on_unit_attention_first)
{
	uint8_t cdb[6] = { 0x00 };
	struct harness_result r;

	harness_run(&h, 0, cdb, 6, NULL, 0, 0, &r);
	ck_assert(r.completed);
	ck_assert_uint_eq(r.status, SCSI_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(harness_sense_key(&r), 0x6);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2900);
}
END_TEST

/* SPC-4: an operation code the LU does not support -> 05/20/00. */
START_TEST(unknown_opcode_invalid_command_operation_code)
{
	uint8_t cdb[16] = { 0xc0 };
	struct harness_result r;

	harness_clear_ua(&h);
	harness_run(&h, 0, cdb, 16, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, SCSI_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(harness_sense_key(&r), 0x5);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2000);
}
END_TEST

/* SPC-4 4.2.5: a reserved CDB bit set -> 05/24/00 with the field pointer on that byte and bit. */
START_TEST(reserved_bit_field_pointer)
{
	uint8_t cdb[6] = { 0x00, 0x00, 0x00, 0x20, 0x00, 0x00 }; /* TEST UNIT READY byte 3 bit 5 */
	struct harness_result r;

	harness_clear_ua(&h);
	harness_run(&h, 0, cdb, 6, NULL, 0, 0, &r);
	ck_assert_uint_eq(harness_sense_key(&r), 0x5);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[15], 0x80 | 0x40 | 0x08 | 5);
	ck_assert_uint_eq(r.sense[17], 3);
}
END_TEST

/* SAM-5: a service action the opcode does not have -> 05/24/00 pointing at the SERVICE ACTION field. */
START_TEST(unknown_service_action)
{
	uint8_t cdb[16] = { 0x9e, 0x1f };
	struct harness_result r;

	harness_clear_ua(&h);
	harness_run(&h, 0, cdb, 16, NULL, 0, 0, &r);
	ck_assert_uint_eq(harness_sense_key(&r), 0x5);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[17], 1);
}
END_TEST

/* SPC-4 4.6.5? NACA = 1 in CONTROL with ACA unsupported -> 05/24/00. */
START_TEST(naca_rejected)
{
	uint8_t cdb[6] = { 0x00, 0, 0, 0, 0, 0x04 };
	struct harness_result r;

	harness_clear_ua(&h);
	harness_run(&h, 0, cdb, 6, NULL, 0, 0, &r);
	ck_assert_uint_eq(harness_asc_ascq(&r), 0x2400);
	ck_assert_uint_eq(r.sense[17], 5);
}
END_TEST

/* ---- a transport whose buffers come in pieces ---- */

#define PIECES 3
static const size_t piece_len[PIECES] = { 1000, 2000, 1096 }; /* 4096 bytes: 8 blocks of 512 */

struct pieces_cmd {
	struct scsi_cmd cmd;
	uint8_t out[PIECES][2000], in[PIECES][2000];
	struct iovec out_iov[PIECES], in_iov[PIECES];
	bool completed;
	bool core_copy;   /* the core's own Data-In buffer was in use at completion (a bounce) */
};

static int pieces_alloc_data_in(struct scsi_cmd *cmd, uint32_t len, struct scsi_sgl *sgl)
{
	struct pieces_cmd *p = (struct pieces_cmd *)cmd;
	unsigned n = 0;

	for (uint32_t done = 0; done < len && n < PIECES; n++) {
		p->in_iov[n] = (struct iovec){ .iov_base = p->in[n], .iov_len = piece_len[n] };
		done += (uint32_t)piece_len[n];
	}
	*sgl = (struct scsi_sgl){ .iov = p->in_iov, .iovcnt = n };
	return 0;
}

static void pieces_complete(struct scsi_cmd *cmd)
{
	struct pieces_cmd *p = (struct pieces_cmd *)cmd;

	p->completed = true;
	p->core_copy = cmd->data_in_core != NULL;
}

static void pieces_need_data_out(struct scsi_cmd *cmd)
{
	(void)cmd; /* the Data-Out is always handed over at submit */
}

static const struct scsi_transport_ops pieces_transport = {
	.need_data_out = pieces_need_data_out,
	.alloc_data_in = pieces_alloc_data_in,
	.complete = pieces_complete,
	.aborted = pieces_complete,
	.max_sense_len = SCSI_SENSE_BUFFER_MAX,
};

static void pieces_submit(struct pieces_cmd *p, const uint8_t *cdb, unsigned len, bool write, uint32_t xfer)
{
	memset(p, 0, sizeof(*p));
	scsi_cmd_init(&p->cmd, &pieces_transport, h.nexus[0]);
	memcpy(p->cmd.cdb, cdb, len);
	p->cmd.cdb_len = 16;
	p->cmd.lun = scsi_lun_encode(0);
	p->cmd.expected_length = xfer;
	p->cmd.dir = write ? SCSI_DIR_TO_DEVICE : SCSI_DIR_FROM_DEVICE;
	if (write) {
		for (unsigned i = 0; i < PIECES; i++) {
			for (size_t k = 0; k < piece_len[i]; k++)
				p->out[i][k] = (uint8_t)(i * 31 + k);
			p->out_iov[i] = (struct iovec){ .iov_base = p->out[i], .iov_len = piece_len[i] };
		}
		scsi_cmd_set_data_out(&p->cmd, p->out_iov, PIECES, xfer);
	}
	scsi_cmd_submit(&p->cmd);
	ck_assert(p->completed);
	ck_assert_uint_eq(p->cmd.status, SCSI_STATUS_GOOD);
}

/*
 * A WRITE(16) whose Data-Out is in three pieces goes to the medium as it is;
 * a READ(16) fills the transport's three pieces straight from the medium
 * (no core buffer); REPORT SUPPORTED OPERATION CODES, which builds its data
 * in one piece, is copied into them once, the same bytes as a transport with
 * one buffer gets.
 */
START_TEST(data_in_and_out_in_pieces)
{
	static struct pieces_cmd w, r, rsoc;
	static struct harness_result one;
	uint8_t write16[16] = { 0x8a }, read16[16] = { 0x88 }, rsoc_cdb[12] = { 0xa3, 0x0c, 0x80 }; /* RCTD */
	uint8_t medium[4096];
	size_t off = 0;

	harness_clear_ua(&h);
	put_be64(write16 + 2, 16);
	put_be32(write16 + 10, 8);
	pieces_submit(&w, write16, 16, true, 4096);
	ck_assert_int_eq(h.lu->backend->ops->read(h.lu->backend, medium, sizeof(medium), 16 * 512), 0);
	for (unsigned i = 0; i < PIECES; off += piece_len[i], i++)
		ck_assert_mem_eq(medium + off, w.out[i], piece_len[i]);

	put_be64(read16 + 2, 16);
	put_be32(read16 + 10, 8);
	pieces_submit(&r, read16, 16, false, 4096);
	ck_assert(!r.core_copy);
	ck_assert_uint_eq(r.cmd.data_in_len, 4096);
	off = 0;
	for (unsigned i = 0; i < PIECES; off += piece_len[i], i++)
		ck_assert_mem_eq(r.in[i], medium + off, piece_len[i]);

	put_be32(rsoc_cdb + 6, 4096);
	pieces_submit(&rsoc, rsoc_cdb, 12, false, 4096);
	ck_assert(rsoc.core_copy);
	harness_run(&h, 0, rsoc_cdb, 12, NULL, 0, 4096, &one);
	harness_expect_good(&one);
	ck_assert_uint_gt(one.data_in_len, piece_len[0]); /* the answer spans pieces */
	ck_assert_uint_eq(rsoc.cmd.data_in_len, one.data_in_len);
	off = 0;
	for (unsigned i = 0; i < PIECES && off < one.data_in_len; off += piece_len[i], i++) {
		size_t n = one.data_in_len - off < piece_len[i] ? one.data_in_len - off : piece_len[i];

		ck_assert_mem_eq(rsoc.in[i], one.data_in + off, n);
	}
	scsi_cmd_release(&w.cmd);
	scsi_cmd_release(&r.cmd);
	scsi_cmd_release(&rsoc.cmd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cmd");
	TCase *tc = tcase_create("prologue");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, power_on_unit_attention_first);
	tcase_add_test(tc, unknown_opcode_invalid_command_operation_code);
	tcase_add_test(tc, reserved_bit_field_pointer);
	tcase_add_test(tc, unknown_service_action);
	tcase_add_test(tc, naca_rejected);
	tcase_add_test(tc, data_in_and_out_in_pieces);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
