/*
 * Informational exceptions (SPC-4 7.5.12, the Informational Exceptions
 * Control mode page 1Ch; SPC-4 7.3.8, the Informational Exceptions log page
 * 2Fh) and the per-command accounting of the log pages.
 *
 * An informational exception condition exists while DEXCPT = 0 and one of:
 *   - a predict-failure fault rule stands (docs/control.md): its ASC/ASCQ,
 *     FAILURE PREDICTION THRESHOLD EXCEEDED (5D/00) unless it says;
 *   - EWASC = 1 and the temperature is above its threshold (a temperature
 *     fault rule): WARNING - SPECIFIED TEMPERATURE EXCEEDED (0B/01);
 *   - TEST = 1, from the next interval on: FAILURE PREDICTION THRESHOLD
 *     EXCEEDED (FALSE) (5D/FF), "as if" a failure were predicted ("the MRIE
 *     and REPORT COUNT fields shall apply as if the TEST bit were zero");
 * in that order of precedence.  The log page 2Fh shows it whatever MRIE
 * says.  It is reported by the method MRIE names:
 *   0h, 1h (asynchronous event reporting, obsolete): not reported;
 *   2h  a unit attention for every I_T nexus, the exception's ASC/ASCQ;
 *       the command that meets it is not executed;
 *   3h  with PER = 1 (Read-Write Error Recovery page), as 4h; else not;
 *   4h  the next command that completes GOOD ends CHECK CONDITION,
 *       RECOVERED ERROR, the exception's ASC/ASCQ (it did complete);
 *   5h  the same with NO SENSE;
 *   6h  only on request: REQUEST SENSE returns NO SENSE with it.
 * Commands that skip unit attentions (INQUIRY, REPORT LUNS, REQUEST SENSE)
 * never carry a 3h/4h/5h report, as drives exclude them.  A report repeats
 * every INTERVAL TIMER (units of 100 ms; 0: once; FFFFFFFFh: vendor
 * specific, 5 minutes here) until REPORT COUNT reports were made (0: no
 * limit).  The condition going away stops the reports.
 */
#include <string.h>

#include "sched/timer.h"
#include "spc/spc.h"

#define AMBIENT_TEMPERATURE 30   /* degrees Celsius, when no rule sets one */
#define DEFAULT_THRESHOLD 70     /* the REFERENCE TEMPERATURE, when no rule sets one */
#define VENDOR_INTERVAL_MS 300000u

/* The current Informational Exceptions Control page (header included), or NULL. */
static const uint8_t *iec_page(const struct scsi_lu *lu)
{
	return lu->mode ? spc_mode_current_page(lu, MODE_PAGE_INFORMATIONAL_EXCEPTIONS_CONTROL, 0) : NULL;
}

static bool iec_dexcpt(const uint8_t *p)
{
	return !p || (p[2] & 0x08);
}

uint8_t spc_ie_temperature(const struct scsi_lu *lu)
{
	return lu->log && lu->log->ie.temperature_set ? lu->log->ie.temperature_set : AMBIENT_TEMPERATURE;
}

uint8_t spc_ie_threshold(const struct scsi_lu *lu)
{
	return lu->log && lu->log->ie.threshold_set ? lu->log->ie.threshold_set : DEFAULT_THRESHOLD;
}

/* The condition to report now (ASC/ASCQ), 0: none. */
static uint16_t condition(const struct scsi_lu *lu)
{
	const uint8_t *p = iec_page(lu);
	const struct spc_ie_state *ie = &lu->log->ie;

	if (iec_dexcpt(p))
		return 0;
	if (ie->predicted_asc_ascq)
		return ie->predicted_asc_ascq;
	if ((p[2] & 0x10) && spc_ie_temperature(lu) > spc_ie_threshold(lu))
		return ASC_WARNING_SPECIFIED_TEMPERATURE_EXCEEDED;
	if (ie->test_failure)
		return ASC_FAILURE_PREDICTION_THRESHOLD_EXCEEDED_FALSE;
	return 0;
}

uint16_t spc_ie_current(const struct scsi_lu *lu)
{
	return lu->log ? condition(lu) : 0;
}

static uint64_t interval_ns(const uint8_t *p)
{
	uint32_t t = get_be32(p + 4);

	if (t == 0xffffffffu)
		return (uint64_t)VENDOR_INTERVAL_MS * 1000000ull;
	return (uint64_t)t * 100000000ull;
}

/* One report of the condition by the MRIE method; the next one armed after INTERVAL TIMER. */
static void report(struct scsi_lu *lu)
{
	struct spc_ie_state *ie = &lu->log->ie;
	const uint8_t *p = iec_page(lu);
	const uint8_t *rwer = spc_mode_current_page(lu, MODE_PAGE_READ_WRITE_ERROR_RECOVERY, 0);
	uint32_t count = get_be32(p + 8);

	if (count && ie->reports >= count)
		return;
	ie->reports++;
	switch (p[3] & 0x0f) {
	case 2:
		for (struct scsi_nexus *n = lu->dev->nexuses; n; n = n->next) {
			struct scsi_itl *t = scsi_itl_get(n, lu->lun);

			if (t)
				t->ie_asc_ascq = ie->reported;
			scsi_ua_establish(n, lu->lun, SCSI_UA_INFORMATIONAL_EXCEPTION);
		}
		break;
	case 3:
		/* PER (byte 2 bit 2): recovered errors are reported. */
		ie->report_due = rwer && (rwer[2] & 0x04);
		break;
	case 4:
	case 5:
		ie->report_due = true;
		break;
	default:
		break;
	}
	/* The command that made the report due (a MODE SELECT, say) is not the next one. */
	ie->due_since_ns = scsi_device_now(lu->dev);
	if (get_be32(p + 4) && (!count || ie->reports < count) && scsi_timer_available(lu->dev))
		scsi_timer_arm(lu->dev, &ie->timer, scsi_device_now(lu->dev) + interval_ns(p));
}

/* The condition may have changed: a new one is reported at once, none stops the reports. */
static void refresh(struct scsi_lu *lu)
{
	struct spc_ie_state *ie = &lu->log->ie;
	uint16_t c = condition(lu);

	if (c == ie->reported)
		return;
	ie->reported = c;
	ie->reports = 0;
	ie->report_due = false;
	if (!ie->test_armed || ie->test_failure)
		scsi_timer_cancel(lu->dev, &ie->timer);
	if (c)
		report(lu);
}

static void ie_timer_fire(struct scsi_timer *t)
{
	struct spc_ie_state *ie = (struct spc_ie_state *)((char *)t - offsetof(struct spc_ie_state, timer));
	struct scsi_lu *lu = ie->lu;

	if (ie->test_armed && !ie->test_failure) {
		/* TEST = 1: "a test device failure at the next interval time". */
		ie->test_failure = true;
		refresh(lu);
		return;
	}
	if (ie->reported && condition(lu) == ie->reported)
		report(lu);
}

void spc_ie_mode_changed(struct scsi_lu *lu)
{
	struct spc_ie_state *ie;
	const uint8_t *p;

	if (!lu->log || !lu->mode)
		return;
	ie = &lu->log->ie;
	ie->timer.fire = ie_timer_fire;
	p = iec_page(lu);
	/* Another page changed: nothing to do here. */
	if (p && memcmp(ie->iec_seen, p, sizeof(ie->iec_seen)) == 0)
		return;
	if (p)
		memcpy(ie->iec_seen, p, sizeof(ie->iec_seen));
	if (p && (p[2] & 0x04) && !iec_dexcpt(p)) {
		if (!ie->test_armed) {
			ie->test_armed = true;
			ie->test_failure = false;
			if (get_be32(p + 4) == 0 || !scsi_timer_available(lu->dev))
				ie->test_failure = true;
			else
				scsi_timer_arm(lu->dev, &ie->timer, scsi_device_now(lu->dev) + interval_ns(p));
		}
	} else {
		ie->test_armed = false;
		ie->test_failure = false;
	}
	/* A change of MRIE, the interval or the count starts the reports afresh. */
	ie->reported = 0;
	refresh(lu);
}

void spc_ie_fault(struct scsi_lu *lu, uint16_t predicted_asc_ascq, uint8_t temperature, uint8_t threshold)
{
	struct spc_ie_state *ie;

	if (!lu->log)
		return;
	ie = &lu->log->ie;
	ie->timer.fire = ie_timer_fire;
	ie->predicted_asc_ascq = predicted_asc_ascq;
	ie->temperature_set = temperature;
	ie->threshold_set = threshold;
	refresh(lu);
}

bool spc_ie_request_sense(struct scsi_lu *lu, struct scsi_sense_info *s)
{
	const uint8_t *p;
	uint16_t c;

	if (!lu->log)
		return false;
	p = iec_page(lu);
	c = condition(lu);
	if (!c || (p[3] & 0x0f) != 6)
		return false;
	*s = sense_make(SENSE_KEY_NO_SENSE, c);
	return true;
}

/* ---- per-command accounting ---- */

static int command_dir(const struct scsi_cmd *cmd)
{
	const struct scsi_op *op = cmd->op;

	if (strncmp(op->name, "VERIFY", 6) == 0)
		return SPC_ERR_VERIFY;
	if ((op->flags & OP_WRITES_MEDIUM) && (op->flags & (OP_LBA_WRITE | OP_LBA_EXCLUSIVE)))
		return SPC_ERR_WRITE;
	if ((op->flags & OP_LBA_READ) && (op->flags & OP_DATA_IN))
		return SPC_ERR_READ;
	return -1;
}

static void count(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	struct spc_log_state *log = lu->log;
	uint64_t *e;
	int dir = command_dir(cmd);
	uint8_t key = cmd->sense_info.key;
	uint64_t bytes = (uint64_t)cmd->nblocks * lu->block_size;

	log->changes++;
	if (cmd->op->opcode == SCSI_OP_START_STOP_UNIT && cmd->status == SCSI_STATUS_GOOD && !(cmd->cdb[4] & 0x01)) {
		log->start_stop_cycles++; /* a stop begins a cycle (SPC-4 7.3.19) */
		if (cmd->cdb[4] & 0x02)
			log->load_unload_cycles++;
	}
	if (dir < 0) {
		if (cmd->status == SCSI_STATUS_CHECK_CONDITION &&
		    (key == SENSE_KEY_RECOVERED_ERROR || key == SENSE_KEY_HARDWARE_ERROR))
			log->non_medium_errors++;
		return;
	}
	e = log->errors[dir];
	if (cmd->status == SCSI_STATUS_GOOD || cmd->status == SCSI_STATUS_CONDITION_MET) {
		uint64_t ms = (cmd->done_ns - cmd->start_ns) / 1000000u;

		e[SPC_ERR_BYTES] += bytes;
		if (dir == SPC_ERR_READ) {
			log->read_commands++;
			log->blocks_read += cmd->nblocks;
			log->read_ms += ms;
		} else if (dir == SPC_ERR_WRITE) {
			log->write_commands++;
			log->blocks_written += cmd->nblocks;
			log->write_ms += ms;
		}
		return;
	}
	if (cmd->status != SCSI_STATUS_CHECK_CONDITION)
		return;
	switch (key) {
	case SENSE_KEY_RECOVERED_ERROR:
		/* Corrected, possibly with delay: the data went through. */
		e[SPC_ERR_CORRECTED_DELAY]++;
		e[SPC_ERR_CORRECTED]++;
		e[SPC_ERR_ALGORITHM]++;
		e[SPC_ERR_BYTES] += bytes;
		break;
	case SENSE_KEY_MEDIUM_ERROR:
		e[SPC_ERR_ALGORITHM]++;
		e[SPC_ERR_UNCORRECTED]++;
		break;
	case SENSE_KEY_HARDWARE_ERROR:
		log->non_medium_errors++;
		break;
	default:
		break;
	}
}

void spc_ie_cmd_done(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	struct spc_ie_state *ie;

	if (!lu || !lu->log || !cmd->op || cmd->aborted)
		return;
	count(cmd);
	ie = &lu->log->ie;
	/* Not on a command a duration limit ended: its GOOD with sense (55/0A) is its answer. */
	if (!ie->report_due || cmd->status != SCSI_STATUS_GOOD || (cmd->op->flags & OP_SKIP_UA) ||
	    cmd->start_ns < ie->due_since_ns || cmd->limits.ended)
		return;
	if (condition(lu) != ie->reported || !ie->reported) {
		ie->report_due = false;
		return;
	}
	ie->report_due = false;
	cmd->status = SCSI_STATUS_CHECK_CONDITION;
	cmd->sense_info = sense_make((iec_page(lu)[3] & 0x0f) == 5 ? SENSE_KEY_NO_SENSE : SENSE_KEY_RECOVERED_ERROR,
				     ie->reported);
}
