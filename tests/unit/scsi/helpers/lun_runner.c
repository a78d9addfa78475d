#include <stdlib.h>
#include <string.h>

#include "lun_runner.h"

struct lun_task {
	struct scsi_cmd cmd;
	struct harness_result *r;
};

static void lt_need_data_out(struct scsi_cmd *cmd)
{
	cmd->data_out_len = 0;
	scsi_cmd_data_out_ready(cmd);
}

static void lt_complete(struct scsi_cmd *cmd)
{
	struct lun_task *t = (struct lun_task *)cmd;
	struct harness_result *r = t->r;

	r->completed = true;
	r->status = cmd->status;
	r->sense_len = cmd->sense_len;
	memcpy(r->sense, cmd->sense, cmd->sense_len);
	r->data_in_len = cmd->data_in_len < sizeof(r->data_in) ? cmd->data_in_len : sizeof(r->data_in);
	if (cmd->data_in)
		memcpy(r->data_in, cmd->data_in, r->data_in_len);
	r->residual_kind = cmd->residual_kind;
	r->residual = cmd->residual;
	scsi_cmd_release(cmd);
	free(t);
}

static void lt_aborted(struct scsi_cmd *cmd)
{
	struct lun_task *t = (struct lun_task *)cmd;

	t->r->aborted = true;
	scsi_cmd_release(cmd);
	free(t);
}

static const struct scsi_transport_ops lun_transport = {
	.need_data_out = lt_need_data_out,
	.complete = lt_complete,
	.aborted = lt_aborted,
	.max_sense_len = SCSI_SENSE_BUFFER_MAX,
};

void lun_runner_run(struct harness *h, int nexus, uint32_t lun, const uint8_t *cdb, unsigned cdb_len,
		    uint32_t expected_length, struct harness_result *r)
{
	lun_runner_run_sam(h, nexus, scsi_lun_encode(lun), cdb, cdb_len, expected_length, r);
}

void lun_runner_run_sam(struct harness *h, int nexus, uint64_t sam_lun, const uint8_t *cdb, unsigned cdb_len,
			uint32_t expected_length, struct harness_result *r)
{
	struct lun_task *t = calloc(1, sizeof(*t));

	memset(r, 0, sizeof(*r));
	scsi_cmd_init(&t->cmd, &lun_transport, h->nexus[nexus]);
	t->r = r;
	memcpy(t->cmd.cdb, cdb, cdb_len);
	t->cmd.cdb_len = (uint8_t)(cdb_len < 16 ? 16 : cdb_len);
	t->cmd.lun = sam_lun;
	t->cmd.task_attr = SCSI_TASK_SIMPLE;
	t->cmd.dir = SCSI_DIR_FROM_DEVICE;
	t->cmd.expected_length = expected_length ? expected_length : 65536;
	scsi_cmd_submit(&t->cmd);
}
