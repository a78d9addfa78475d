#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zbc_fixture.h"

void zbc_fixture_init(struct harness *h, enum scsi_lu_kind kind, uint64_t num_blocks, uint64_t zone_size,
		      uint32_t conventional_zones, uint32_t max_open_zones, bool urswrz, uint8_t lbppbe)
{
	struct scsi_lu_params p;
	char err[256];

	memset(&p, 0, sizeof(p));
	p.kind = kind;
	p.zone_size = zone_size;
	p.conventional_zones = conventional_zones;
	p.max_open_zones = max_open_zones;
	p.urswrz = urswrz;
	p.lbppbe = lbppbe;
	p.max_compare_and_write = 255;
	harness_init(h, num_blocks, 512, &p);
	/* lu.c calls zbc_init once the hook is in; a second call is a no-op. */
	if (zbc_init(h->lu, err, sizeof(err)) != 0) {
		fprintf(stderr, "zbc_init: %s\n", err);
		abort();
	}
	harness_clear_ua(h);
}

void zbc_fixture_fini(struct harness *h)
{
	zbc_fini(h->lu);
	harness_fini(h);
}

static enum scsi_result fake_write_exec(struct scsi_cmd *cmd)
{
	struct zbc_test_cmd *tc = (struct zbc_test_cmd *)cmd;

	tc->exec_calls++;
	tc->begin = zbc_write_begin(cmd);
	return tc->begin;
}

static void fake_complete(struct scsi_cmd *cmd)
{
	((struct zbc_test_cmd *)cmd)->completed = true;
}

static const struct scsi_transport_ops fake_transport = {
	.complete = fake_complete,
	.aborted = fake_complete,
	.max_sense_len = SCSI_SENSE_BUFFER_MAX,
};

void zbc_test_cmd_init(struct zbc_test_cmd *tc, struct harness *h, uint64_t lba, uint32_t nblocks)
{
	memset(tc, 0, sizeof(*tc));
	tc->op.name = "TEST WRITE";
	tc->op.exec = fake_write_exec;
	tc->cmd.transport = &fake_transport;
	tc->cmd.op = &tc->op;
	tc->cmd.lu = h->lu;
	tc->cmd.lba = lba;
	tc->cmd.nblocks = nblocks;
	tc->cmd.status = SCSI_STATUS_GOOD;
	tc->cmd.state = SCSI_CMD_STATE_RUNNING;
}

enum scsi_result zbc_test_write_begin(struct zbc_test_cmd *tc)
{
	return tc->cmd.op->exec(&tc->cmd);
}

static void sense_of(const struct scsi_cmd *cmd, uint8_t *key, uint16_t *asc)
{
	if (key)
		*key = cmd->status == SCSI_STATUS_CHECK_CONDITION ? cmd->sense_info.key : 0;
	if (asc)
		*asc = cmd->status == SCSI_STATUS_CHECK_CONDITION ? cmd->sense_info.asc_ascq : 0;
}

enum scsi_result zbc_test_write(struct harness *h, uint64_t lba, uint32_t nblocks, uint8_t *key, uint16_t *asc)
{
	struct zbc_test_cmd tc;
	enum scsi_result r;

	zbc_test_cmd_init(&tc, h, lba, nblocks);
	r = zbc_test_write_begin(&tc);
	sense_of(&tc.cmd, key, asc);
	if (r == SCSI_OK)
		zbc_write_end(&tc.cmd, true);
	return r;
}

enum scsi_result zbc_test_read(struct harness *h, uint64_t lba, uint32_t nblocks, uint8_t *key, uint16_t *asc)
{
	struct zbc_test_cmd tc;
	enum scsi_result r;

	zbc_test_cmd_init(&tc, h, lba, nblocks);
	r = zbc_check_read(&tc.cmd);
	sense_of(&tc.cmd, key, asc);
	return r;
}

void zbc_test_out(struct harness *h, uint8_t sa, uint64_t zone_id, bool all, struct harness_result *r)
{
	uint8_t cdb[16] = { SCSI_OP_ZBC_OUT, sa };

	put_be64(cdb + 2, zone_id);
	cdb[14] = all ? 0x01 : 0x00;
	harness_run(h, 0, cdb, 16, NULL, 0, 0, r);
}

struct zbc_zone *zbc_test_zone(struct harness *h, uint64_t lba)
{
	return zbc_zone_of(h->lu->zbc, lba);
}
