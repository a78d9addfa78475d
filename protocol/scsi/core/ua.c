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
	{ SCSI_UA_SUBSIDIARY_BINDING_CHANGED, ASC_SUBSIDIARY_BINDING_CHANGED },
	{ SCSI_UA_INQUIRY_DATA_CHANGED, ASC_INQUIRY_DATA_HAS_CHANGED },
	{ SCSI_UA_COMMANDS_CLEARED_BY_ANOTHER_INITIATOR, ASC_COMMANDS_CLEARED_BY_ANOTHER_INITIATOR },
	{ SCSI_UA_NOT_READY_TO_READY_CHANGE, ASC_NOT_READY_TO_READY_CHANGE },
	{ SCSI_UA_PRIORITY_CHANGED, ASC_PRIORITY_CHANGED },
	{ SCSI_UA_ASYMMETRIC_ACCESS_STATE_CHANGED, ASC_ASYMMETRIC_ACCESS_STATE_CHANGED },
	{ SCSI_UA_INFORMATIONAL_EXCEPTION, ASC_FAILURE_PREDICTION_THRESHOLD_EXCEEDED },
};

/* The conditions a power on or reset implies, cleared with it (SAM-5 5.14). */
#define IMPLIED_BY_POWER_ON                                                                               \
	((1u << SCSI_UA_MODE_PARAMETERS_CHANGED) | (1u << SCSI_UA_BUS_DEVICE_RESET) |                       \
	 (1u << SCSI_UA_I_T_NEXUS_LOSS) | (1u << SCSI_UA_POWER_ON_RESET))

void scsi_ua_establish(struct scsi_nexus *nexus, uint32_t lun, enum scsi_ua ua)
{
	struct scsi_itl *t;

	/*
	 * SPC-4 7.8.7 (Extended INQUIRY Data VPD page, LUICLR = 1, which
	 * spc_vpd.c reports): REPORTED LUNS DATA HAS CHANGED is one condition
	 * of the I_T nexus, reported on whichever LU comes first.
	 */
	if (ua == SCSI_UA_REPORTED_LUNS_DATA_CHANGED) {
		nexus->reported_luns_changed = true;
		return;
	}
	t = scsi_itl_get(nexus, lun);
	if (t)
		t->ua_pending |= 1u << ua;
}

void scsi_ua_establish_all(struct scsi_lu *lu, enum scsi_ua ua, const struct scsi_nexus *except)
{
	for (struct scsi_nexus *n = lu->dev->nexuses; n; n = n->next) {
		if (n == except)
			continue;
		/* A nexus that never touched the LU still has its POWER ON there, which implies this one. */
		if (!scsi_itl_find(n, lu->lun) && scsi_itl_untouched_power_on(n, lu) &&
		    ((1u << ua) & IMPLIED_BY_POWER_ON))
			continue;
		scsi_ua_establish(n, lu->lun, ua);
	}
}

bool scsi_ua_take(struct scsi_nexus *nexus, uint32_t lun, struct scsi_sense_info *s)
{
	struct scsi_itl *t = scsi_itl_find(nexus, lun);
	uint32_t pending;

	if (!t && scsi_itl_untouched_power_on(nexus, scsi_device_lu(nexus->dev, lun)))
		t = scsi_itl_get(nexus, lun);
	pending = (t ? t->ua_pending : 0) |
		  (nexus->reported_luns_changed ? 1u << SCSI_UA_REPORTED_LUNS_DATA_CHANGED : 0);
	for (unsigned i = 0; i < SCSI_UA_COUNT && pending; i++) {
		enum scsi_ua ua = ua_sense[i].ua;

		if (!(pending & (1u << ua)))
			continue;
		if (ua == SCSI_UA_REPORTED_LUNS_DATA_CHANGED)
			nexus->reported_luns_changed = false;
		else if (t)
			t->ua_pending &= ~((1u << ua) | (ua <= SCSI_UA_I_T_NEXUS_LOSS ? IMPLIED_BY_POWER_ON : 0));
		*s = sense_make(SENSE_KEY_UNIT_ATTENTION, ua_sense[i].asc_ascq);
		/* SPC-4 7.5.12, MRIE 2h: the unit attention carries the informational exception's ASC/ASCQ. */
		if (ua == SCSI_UA_INFORMATIONAL_EXCEPTION && t && t->ie_asc_ascq)
			s->asc_ascq = t->ie_asc_ascq;
		return true;
	}
	return false;
}
