/*
 * What the runtime control reads and changes on a logical unit (scsi.h,
 * docs/control.md): its description and counters, its readiness, write
 * protection and capacity, each with the unit attention the standards tie to
 * the change.
 */
#include <stdio.h>

#include "core/scsi_internal.h"
#include "sched/task_set.h"
#include "zbc/zbc.h"

void scsi_lu_describe(const struct scsi_lu *lu, struct scsi_lu_info *info)
{
	info->lun = lu->lun;
	info->kind = lu->kind;
	info->block_size = lu->block_size;
	info->num_blocks = lu->num_blocks;
	info->protection_type = lu->protection_type;
	info->readiness = lu->readiness;
	info->alua_tpgs = lu->params.alua_tpgs;
	info->target_port_group = lu->params.target_port_group;
	info->alua_state = lu->alua.state;
	info->alua_target = lu->alua.target;
	info->backend_status[0] = '\0';
	if (lu->backend->ops->status)
		lu->backend->ops->status(lu->backend, info->backend_status, sizeof(info->backend_status));
	info->write_protect = lu->params.write_protect;
	info->removable = lu->params.removable;
	info->removal_prevented = lu->prevent_count > 0;
	info->commands = lu->ts.count;
	info->mode_defaults = lu->params.mode_defaults;
	info->latency = lu->params.latency;
	info->cdl_pages = lu->params.cdl_pages;
	info->counters = lu->counters;
	info->backing_errors = lu->backing_errors;
}

/* The NOT READY additional sense codes of SPC-4's ASC/ASCQ table. */
struct scsi_sense_info scsi_lu_not_ready_sense(const struct scsi_lu *lu)
{
	switch (lu->readiness) {
	case SCSI_LU_BECOMING_READY:
		return sense_make(SENSE_KEY_NOT_READY, ASC_LOGICAL_UNIT_IS_IN_PROCESS_OF_BECOMING_READY);
	case SCSI_LU_OFFLINE:
		return sense_make(SENSE_KEY_NOT_READY, ASC_LOGICAL_UNIT_NOT_READY_MANUAL_INTERVENTION_REQUIRED);
	case SCSI_LU_NO_MEDIUM:
		return sense_make(SENSE_KEY_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
	case SCSI_LU_NOT_READY:
	case SCSI_LU_READY:
	default:
		return sense_make(SENSE_KEY_NOT_READY, ASC_LOGICAL_UNIT_NOT_READY_INITIALIZING_COMMAND_REQUIRED);
	}
}

void scsi_lu_set_readiness(struct scsi_lu *lu, enum scsi_lu_readiness readiness)
{
	enum scsi_lu_readiness was = lu->readiness;

	lu->readiness = readiness;
	/* A logical unit that becomes ready tells every initiator once (SPC-4 unit attention 28/00). */
	if (was != SCSI_LU_READY && readiness == SCSI_LU_READY)
		scsi_ua_establish_all(lu, SCSI_UA_NOT_READY_TO_READY_CHANGE, NULL);
}

void scsi_lu_set_write_protect(struct scsi_lu *lu, bool on)
{
	lu->params.write_protect = on;
}

int scsi_lu_resize(struct scsi_lu *lu, uint64_t num_blocks, bool allow_shrink, char *err, size_t errlen)
{
	int r;

	if (lu->kind != SCSI_LU_CONVENTIONAL || lu->params.protection_type) {
		snprintf(err, errlen, "only conventional LUs without protection information can be resized "
			 "(zones and PI tuples are laid out by the capacity)");
		return -1;
	}
	if (num_blocks == 0) {
		snprintf(err, errlen, "the capacity must be at least one block");
		return -1;
	}
	if (num_blocks < lu->num_blocks && !allow_shrink) {
		snprintf(err, errlen, "shrinking from %llu to %llu blocks loses the data past the new end (force it)",
			 (unsigned long long)lu->num_blocks, (unsigned long long)num_blocks);
		return -1;
	}
	if (lu->ts.count) {
		snprintf(err, errlen, "%u commands are in the LU's task set", lu->ts.count);
		return -1;
	}
	if (!lu->backend->ops->resize) {
		snprintf(err, errlen, "the backing store cannot be resized");
		return -1;
	}
	r = lu->backend->ops->resize(lu->backend, num_blocks * lu->block_size);
	if (r < 0) {
		snprintf(err, errlen, "resizing the backing store: %s", be_state_strerror(-r));
		return -1;
	}
	lu->num_blocks = num_blocks;
	lu->params.num_blocks = num_blocks;
	/* SBC-4 READ CAPACITY: a changed capacity is reported with a unit attention (2A/09). */
	scsi_ua_establish_all(lu, SCSI_UA_CAPACITY_DATA_HAS_CHANGED, NULL);
	return 0;
}

int scsi_lu_end_commands(struct scsi_lu *lu, uint8_t sense_key, uint16_t asc_ascq)
{
	enum scsi_lu_readiness was = lu->readiness;
	bool again = true;

	/* A command the scheduler starts meanwhile meets the gate and ends at once. */
	lu->readiness = SCSI_LU_OFFLINE;
	while (again) {
		again = false;
		for (struct scsi_cmd *cmd = lu->ts.head; cmd; cmd = cmd->ts_next) {
			if (cmd->aborted || !scsi_cmd_waiting(cmd))
				continue;
			scsi_cmd_fail(cmd, sense_make(sense_key, asc_ascq));
			scsi_cmd_complete(cmd);
			again = true;
			break;
		}
	}
	lu->readiness = was;
	return lu->ts.count ? -1 : 0;
}

static bool any_cmd(const struct scsi_cmd *cmd, const void *arg)
{
	(void)cmd;
	(void)arg;
	return true;
}

uint64_t scsi_device_power_cycle(struct scsi_device *dev)
{
	uint64_t lost = 0;

	SCSI_DEVICE_FOREACH_LU(dev, lu) {
		/* The power takes every command: none gets a status (one running on a worker ends when its I/O does). */
		scsi_task_set_abort(lu, any_cmd, NULL, NULL);
		if (lu->backend->ops->power_loss)
			lost += lu->backend->ops->power_loss(lu->backend);
		spc_diag_abort(lu); /* a background self-test does not outlive the power */
		spc_pr_power_on(lu);
		spc_mode_power_on(lu);
		zbc_power_on(lu);
		lu->stopped = false;
		/* As at start-up: 06/29/00 POWER ON, RESET, OR BUS DEVICE RESET OCCURRED for every I_T nexus (SAM-5 6.3.1);
		 * nexuses created later get it from scsi_nexus_create. */
		scsi_ua_establish_all(lu, SCSI_UA_POWER_ON_RESET, NULL);
	}
	return lost;
}
