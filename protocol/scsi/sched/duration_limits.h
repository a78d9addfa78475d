/*
 * Command priority and command duration limits as the scheduler uses them
 * (SAM-5 8.7, SPC-6 command duration limits; docs/latency.md): a command's
 * rank in the service queues, its limits, and the policies that act when
 * one is exceeded.
 */
#ifndef SBCEMU_DURATION_LIMITS_H
#define SBCEMU_DURATION_LIMITS_H

#ifndef SBCE_BUILDING_SCSI
#error "sbcemu layering: duration_limits.h is internal to the SCSI core (protocol/scsi/): use its public headers"
#endif

#include "core/scsi_internal.h"

/* The command's priority (SAM-5 8.7): its own, else its I_T_L nexus's, else the LU's INITIAL COMMAND PRIORITY. */
uint8_t scsi_cmd_priority(const struct scsi_cmd *cmd);
/* Admission: the command's rank, and the limits its DLD selects; their timer starts. */
void scsi_limits_arrive(struct scsi_cmd *cmd);
/*
 * The command is processed from now on.  False if a limit already ended it
 * (its status is set): it must complete without running.
 */
bool scsi_limits_activate(struct scsi_cmd *cmd);
/*
 * Completion: a command a policy ended takes that policy's status and
 * sense; the statistics count it; its timer stops.
 */
void scsi_limits_done(struct scsi_cmd *cmd);
/* GOOD with sense data (the complete-unavailable policy, SPC-6): the sense is sent with GOOD. */
bool scsi_limits_good_with_sense(const struct scsi_cmd *cmd);

#endif
