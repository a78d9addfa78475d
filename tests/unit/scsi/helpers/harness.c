#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "core/scsi_internal.h"
#include "core/scsi_proto.h"
#include "scsi_wire.h"
#include "backend.h"

struct harness_task {
	struct scsi_cmd cmd;
	const void *data_out;
	uint32_t data_out_len;
	struct iovec data_out_iov;
	bool hold_data_out;
	struct harness_result *r;
};

static void deliver_data_out(struct harness_task *t);

static void t_need_data_out(struct scsi_cmd *cmd)
{
	struct harness_task *t = (struct harness_task *)cmd;

	if (t->hold_data_out) {
		t->r->data_out_wanted = true;
		t->r->task = t;
		return;
	}
	deliver_data_out(t);
}

bool harness_deliver_data_out(struct harness_result *r)
{
	struct harness_task *t = r->task;

	if (!r->data_out_wanted || !t)
		return false;
	r->data_out_wanted = false;
	r->task = NULL;
	deliver_data_out(t);
	return true;
}

static void deliver_data_out(struct harness_task *t)
{
	struct scsi_cmd *cmd = &t->cmd;
	uint32_t n = t->data_out_len;

	if (n > cmd->expected_length)
		n = cmd->expected_length;
	if (n > cmd->data_length)
		n = cmd->data_length;
	t->data_out_iov = (struct iovec){ .iov_base = (void *)t->data_out, .iov_len = n };
	scsi_cmd_set_data_out(cmd, &t->data_out_iov, 1, n);
	scsi_cmd_data_out_ready(cmd);
}

static void t_complete(struct scsi_cmd *cmd)
{
	struct harness_task *t = (struct harness_task *)cmd;
	struct harness_result *r = t->r;

	r->completed = true;
	r->task = NULL;
	r->data_out_wanted = false;
	r->status = cmd->status;
	r->sense_len = cmd->sense_len;
	memcpy(r->sense, cmd->sense, cmd->sense_len);
	r->data_in_len = cmd->data_in_len;
	if (r->data_in_len > sizeof(r->data_in))
		r->data_in_len = sizeof(r->data_in);
	if (cmd->data_in)
		memcpy(r->data_in, cmd->data_in, r->data_in_len);
	r->residual_kind = cmd->residual_kind;
	r->residual = cmd->residual;
	scsi_cmd_release(cmd);
	free(t);
}

static void t_aborted(struct scsi_cmd *cmd)
{
	struct harness_task *t = (struct harness_task *)cmd;

	t->r->aborted = true;
	t->r->task = NULL;
	scsi_cmd_release(cmd);
	free(t);
}

/*
 * A TransportID codec for the harness's nexuses (protocol identifier 5h):
 * encode gives a fixed 24-byte TransportID; decode takes the iSCSI initiator
 * port form (SPC-4 7.6.4.6, FORMAT CODE 01b), as REGISTER AND MOVE sends it.
 */
static size_t t_tid_encode(const char *name, uint8_t *tid, size_t cap)
{
	(void)name;
	if (cap < 24)
		return 0;
	memset(tid, 0, 24);
	tid[0] = 0x05;
	return 24;
}

static bool t_tid_decode(const uint8_t *tid, size_t len, char *name, size_t cap)
{
	size_t add_len = len >= 4 ? get_be16(tid + 2) : 0, n;

	if (len < 4 || tid[0] != 0x45 || 4 + add_len > len)
		return false;
	n = strnlen((const char *)tid + 4, add_len);
	if (n == 0 || n >= cap)
		return false;
	memcpy(name, tid + 4, n);
	name[n] = '\0';
	return true;
}

const struct scsi_transport_ops harness_transport = {
	.need_data_out = t_need_data_out,
	.complete = t_complete,
	.aborted = t_aborted,
	.max_sense_len = SCSI_SENSE_BUFFER_MAX,
	.protocol_identifier = 0x5,
	.version_descriptor = 0x0960, /* as iSCSI claims it */
	.transport_id_encode = t_tid_encode,
	.transport_id_decode = t_tid_decode,
};

void harness_init(struct harness *h, uint64_t num_blocks, uint32_t block_size,
		  const struct scsi_lu_params *params_in)
{
	struct scsi_lu_params p;
	char err[256];

	memset(h, 0, sizeof(*h));
	snprintf(h->state_dir, sizeof(h->state_dir), "/tmp/sbce-harness-XXXXXX");
	if (!mkdtemp(h->state_dir)) {
		perror("mkdtemp");
		abort();
	}
	if (params_in) {
		p = *params_in;
	} else {
		memset(&p, 0, sizeof(p));
		p.kind = SCSI_LU_CONVENTIONAL;
		p.thin_provisioning = true;
		p.max_compare_and_write = 255;
		p.max_unmap_lba_count = 0xffffffff;
		p.max_unmap_descriptors = 256;
		snprintf(p.vendor, sizeof(p.vendor), "SBCEMU");
		snprintf(p.product, sizeof(p.product), "HARNESS");
		snprintf(p.revision, sizeof(p.revision), "0001");
		snprintf(p.serial, sizeof(p.serial), "HARNESS0001");
	}
	p.num_blocks = num_blocks;
	p.logical_block_size = block_size;
	p.state_dir = h->state_dir;
	h->dev = scsi_device_create("iqn.2026-12.org.sbcemu:harness", NULL, NULL);
	h->lu = scsi_lu_create(h->dev, &p, be_mem_open(num_blocks * block_size), err, sizeof(err));
	if (!h->lu) {
		fprintf(stderr, "scsi_lu_create: %s\n", err);
		abort();
	}
	h->nexus[0] = scsi_nexus_create(h->dev, &harness_transport, "iqn.2026-12.test:i0,i,0x000000000001",
					"iqn.2026-12.org.sbcemu:harness,t,0x0001", 1);
	h->nexus[1] = scsi_nexus_create(h->dev, &harness_transport, "iqn.2026-12.test:i1,i,0x000000000002",
					"iqn.2026-12.org.sbcemu:harness,t,0x0001", 1);
}

void harness_fini(struct harness *h)
{
	char cmd[300];

	scsi_nexus_destroy(h->nexus[0]);
	scsi_nexus_destroy(h->nexus[1]);
	scsi_device_destroy(h->dev);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", h->state_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", h->state_dir);
}

void harness_run(struct harness *h, int nexus, const uint8_t *cdb, unsigned cdb_len,
		 const void *data_out, uint32_t data_out_len, uint32_t expected_length,
		 struct harness_result *r)
{
	struct harness_opts o = { .nexus = nexus, .attr = SCSI_TASK_SIMPLE, .expected_length = expected_length };

	harness_submit(h, &o, cdb, cdb_len, data_out, data_out_len, r);
}

void harness_submit(struct harness *h, const struct harness_opts *o, const uint8_t *cdb, unsigned cdb_len,
		    const void *data_out, uint32_t data_out_len, struct harness_result *r)
{
	struct harness_task *t = calloc(1, sizeof(*t));
	uint32_t expected_length = o->expected_length;

	memset(r, 0, sizeof(*r));
	scsi_cmd_init(&t->cmd, h->nexus[o->nexus]->transport, h->nexus[o->nexus]);
	t->r = r;
	t->data_out = data_out;
	t->data_out_len = data_out_len;
	t->hold_data_out = o->hold_data_out;
	memcpy(t->cmd.cdb, cdb, cdb_len);
	t->cmd.cdb_len = (uint8_t)(cdb_len < 16 ? 16 : cdb_len);
	t->cmd.lun = scsi_lun_encode(o->lun);
	t->cmd.task_attr = o->attr;
	if (data_out) {
		t->cmd.dir = SCSI_DIR_TO_DEVICE;
		t->cmd.expected_length = expected_length ? expected_length : data_out_len;
	} else {
		t->cmd.dir = SCSI_DIR_FROM_DEVICE;
		t->cmd.expected_length = expected_length ? expected_length : 65536;
	}
	scsi_cmd_submit(&t->cmd);
}

void harness_clear_ua(struct harness *h)
{
	static const uint8_t tur[6] = { 0 };
	struct harness_result r;

	for (int n = 0; n < 2; n++)
		for (int i = 0; i < 8; i++)
			harness_run(h, n, tur, 6, NULL, 0, 0, &r);
}

uint8_t harness_sense_key(const struct harness_result *r)
{
	if (r->sense_len < 3)
		return 0xff;
	if ((r->sense[0] & 0x7f) >= 0x72)
		return r->sense[1] & 0x0f;
	return r->sense[2] & 0x0f;
}

uint16_t harness_asc_ascq(const struct harness_result *r)
{
	if ((r->sense[0] & 0x7f) >= 0x72)
		return (uint16_t)((r->sense[2] << 8) | r->sense[3]);
	if (r->sense_len < 14)
		return 0xffff;
	return (uint16_t)((r->sense[12] << 8) | r->sense[13]);
}

void harness_expect_good(const struct harness_result *r)
{
	ck_assert(r->completed);
	ck_assert_uint_eq(r->status, SCSI_STATUS_GOOD);
}

void harness_expect_sense(const struct harness_result *r, uint8_t key, uint16_t asc_ascq)
{
	ck_assert(r->completed);
	ck_assert_uint_eq(r->status, SCSI_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(harness_sense_key(r), key);
	ck_assert_uint_eq(harness_asc_ascq(r), asc_ascq);
}

void harness_expect_field_pointer(const struct harness_result *r, uint16_t byte, int bit)
{
	uint8_t b15 = 0x80 | 0x40; /* SKSV, C/D = 1 (the CDB) */

	if (bit >= 0)
		b15 |= (uint8_t)(0x08 | bit); /* BPV, BIT POINTER */
	ck_assert_uint_eq(r->sense[15], b15);
	ck_assert_uint_eq(get_be16(r->sense + 16), byte);
}

void harness_expect_information(const struct harness_result *r, uint32_t information)
{
	ck_assert_uint_eq(r->sense[0] & 0x80, 0x80);
	ck_assert_uint_eq(get_be32(r->sense + 3), information);
}

void harness_write16(struct harness *h, uint32_t block_size, uint64_t lba, uint32_t n, const uint8_t *data)
{
	uint8_t c[16] = { SCSI_OP_WRITE_16 };
	struct harness_result r;

	put_be64(c + 2, lba);
	put_be32(c + 10, n);
	harness_run(h, 0, c, 16, data, n * block_size, 0, &r);
	harness_expect_good(&r);
}

void harness_read16(struct harness *h, uint32_t block_size, uint64_t lba, uint32_t n, struct harness_result *r)
{
	uint8_t c[16] = { SCSI_OP_READ_16 };

	put_be64(c + 2, lba);
	put_be32(c + 10, n);
	harness_run(h, 0, c, 16, NULL, 0, n * block_size, r);
	harness_expect_good(r);
}

void harness_fill(struct harness *h, uint64_t lba, uint32_t nblocks, uint8_t value)
{
	size_t len = (size_t)nblocks * h->lu->block_size;
	uint8_t *buf = malloc(len);

	ck_assert_ptr_nonnull(buf);
	memset(buf, value, len);
	ck_assert_int_eq(h->lu->backend->ops->write(h->lu->backend, buf, len, lba * h->lu->block_size, 0), 0);
	free(buf);
}

bool harness_holds(struct harness *h, uint64_t lba, uint32_t nblocks, uint8_t value)
{
	size_t len = (size_t)nblocks * h->lu->block_size;
	uint8_t *buf = malloc(len);
	bool same = true;

	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(h->lu->backend->ops->read(h->lu->backend, buf, len, lba * h->lu->block_size), 0);
	for (size_t i = 0; i < len && same; i++)
		same = buf[i] == value;
	free(buf);
	return same;
}
