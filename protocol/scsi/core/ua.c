/*
 * Unit attention conditions, kept per I_T nexus and LU (SAM-5 5.14, SPC-4
 * 4.5.5).  When several are pending, the one reported first is the most
 * severe (a reset hides the conditions it implies).
 */
#include "core/scsi_internal.h"

static const struct {
	enum scsi_ua ua;
	uint16_t asc_ascq;
} ua_sense[SCSI_UA_COUNT] = {
	{ SCSI_UA_POWER_ON_RESET, ASC_POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED },
	{ SCSI_UA_BUS_DEVICE_RESET, ASC_BUS_DEVICE_RESET_FUNCTION_OCCURRED },
	{ SCSI_UA_I_T_NEXUS_LOSS, ASC_I_T_NEXUS_LOSS_OCCURRED },
	{ SCSI_UA_MODE_PARAMETERS_CHANGED, ASC_MODE_PARAMETERS_CHANGED },
	{ SCSI_UA_RESERVATIONS_PREEMPTED, ASC_RESERVATIONS_PREEMPTED },
	{ SCSI_UA_RESERVATIONS_RELEASED, ASC_RESERVATIONS_RELEASED },
	{ SCSI_UA_REGISTRATIONS_PREEMPTED, ASC_REGISTRATIONS_PREEMPTED },
	{ SCSI_UA_CAPACITY_DATA_HAS_CHANGED, ASC_CAPACITY_DATA_HAS_CHANGED },
	{ SCSI_UA_REPORTED_LUNS_DATA_CHANGED, ASC_REPORTED_LUNS_DATA_HAS_CHANGED },
	{ SCSI_UA_INQUIRY_DATA_CHANGED, ASC_INQUIRY_DATA_HAS_CHANGED },
	{ SCSI_UA_COMMANDS_CLEARED_BY_ANOTHER_INITIATOR, ASC_COMMANDS_CLEARED_BY_ANOTHER_INITIATOR },
	{ SCSI_UA_NOT_READY_TO_READY_CHANGE, ASC_NOT_READY_TO_READY_CHANGE },
	{ SCSI_UA_PRIORITY_CHANGED, ASC_PRIORITY_CHANGED },
	{ SCSI_UA_INFORMATIONAL_EXCEPTION, ASC_FAILURE_PREDICTION_THRESHOLD_EXCEEDED },
};

void scsi_ua_establish(struct scsi_nexus *nexus, uint32_t lun, enum scsi_ua ua)
{
	if (lun < SCSI_MAX_LUNS)
		nexus->ua_pending[lun] |= 1u << ua;
}

void scsi_ua_establish_all(struct scsi_lu *lu, enum scsi_ua ua, const struct scsi_nexus *except)
{
	for (struct scsi_nexus *n = lu->dev->nexuses; n; n = n->next)
		if (n != except)
			scsi_ua_establish(n, lu->lun, ua);
}

bool scsi_ua_take(struct scsi_nexus *nexus, uint32_t lun, struct scsi_sense_info *s)
{
	uint32_t *pending;

	if (lun >= SCSI_MAX_LUNS || !nexus->ua_pending[lun])
		return false;
	pending = &nexus->ua_pending[lun];
	for (unsigned i = 0; i < SCSI_UA_COUNT; i++) {
		if (*pending & (1u << ua_sense[i].ua)) {
			*pending &= ~(1u << ua_sense[i].ua);
			/* A power on or reset condition implies the lesser ones (SAM-5 5.14). */
			if (ua_sense[i].ua <= SCSI_UA_I_T_NEXUS_LOSS)
				*pending &= ~((1u << SCSI_UA_MODE_PARAMETERS_CHANGED) |
					      (1u << SCSI_UA_BUS_DEVICE_RESET) |
					      (1u << SCSI_UA_I_T_NEXUS_LOSS) |
					      (1u << SCSI_UA_POWER_ON_RESET));
			/*
			 * SPC-4 7.8.7 (Extended INQUIRY Data VPD page, LUICLR = 1, which
			 * spc_vpd.c reports): REPORTED LUNS DATA HAS CHANGED reported for
			 * one LU is cleared for every LU of this I_T nexus.
			 */
			if (ua_sense[i].ua == SCSI_UA_REPORTED_LUNS_DATA_CHANGED)
				for (unsigned k = 0; k < SCSI_MAX_LUNS; k++)
					nexus->ua_pending[k] &= ~(1u << SCSI_UA_REPORTED_LUNS_DATA_CHANGED);
			*s = sense_make(SENSE_KEY_UNIT_ATTENTION, ua_sense[i].asc_ascq);
			/* SPC-4 7.5.12, MRIE 2h: the unit attention carries the informational exception's ASC/ASCQ. */
			if (ua_sense[i].ua == SCSI_UA_INFORMATIONAL_EXCEPTION && nexus->ie_asc_ascq[lun])
				s->asc_ascq = nexus->ie_asc_ascq[lun];
			return true;
		}
	}
	return false;
}
