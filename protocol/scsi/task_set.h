/*
 * Per-LU task sets (SAM-5 8): task attributes and task management.
 */
#ifndef SBCEMU_TASK_SET_H
#define SBCEMU_TASK_SET_H

#include "scsi_internal.h"

/* Counts the commands a task management function waits for. */
struct scsi_tmf_wait {
	unsigned pending;
	enum scsi_tmf_response response;
	void (*done)(void *arg, enum scsi_tmf_response response);
	void *arg;
};

void scsi_task_set_add(struct scsi_lu *lu, struct scsi_cmd *cmd);
void scsi_task_set_remove(struct scsi_lu *lu, struct scsi_cmd *cmd);
/* Starts every waiting command that its task attribute allows to start. */
void scsi_task_set_run(struct scsi_lu *lu);
void scsi_tmf_wait_put(struct scsi_tmf_wait *w);
/* Aborts the commands of lu selected by match (see task_set.c); w (may be NULL) waits for them. */
void scsi_task_set_abort(struct scsi_lu *lu, bool (*match)(const struct scsi_cmd *cmd, const void *arg),
			 const void *arg, struct scsi_tmf_wait *w);

/* cmd.c */
void scsi_cmd_start(struct scsi_cmd *cmd);

/* lu.c: command references on a nexus */
void scsi_nexus_get(struct scsi_nexus *nexus);
void scsi_nexus_put(struct scsi_nexus *nexus);

#endif
