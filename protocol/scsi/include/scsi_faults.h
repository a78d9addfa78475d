/*
 * Fault injection into logical units, kept apart from scsi.h (the core's
 * API for transports): fault rules, which the runtime control adds and
 * removes while the daemon runs (docs/control.md) and into which the daemon
 * turns the configuration's fault keys at start-up (pi_faults: corrupt-pi,
 * atomic_tear_write / atomic_tear_block: tear-atomic, offline_zones /
 * read_only_zones: zone-offline / zone-read-only; docs/config.md): one
 * mechanism.
 */
#ifndef SBCEMU_SCSI_FAULTS_H
#define SBCEMU_SCSI_FAULTS_H

#ifdef SBCE_BUILDING_BACKENDS
#error "sbcemu layering: a backend knows nothing of SCSI (backends/ may not include the SCSI core)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct scsi_lu;

/* Protection information (sbc_pi.c): the PI field a corrupt-pi rule makes the medium return corrupted (bit 0 flipped). */
enum scsi_pi_field {
	SCSI_PI_GUARD,
	SCSI_PI_APP_TAG,
	SCSI_PI_REF_TAG,
};

/*
 * Zone faults (zbc_zones.c), set-up time only (blocking I/O): puts zone
 * zone_index (0 = the zone at LBA 0) OFFLINE or READ ONLY and records it in
 * the persistent zone state; SCSI_ZONE_FAULT_NONE repairs a zone that is
 * OFFLINE or READ ONLY (back to EMPTY, or NOT WRITE POINTER for a
 * conventional zone) and leaves any other zone alone.  0 or -1 with err.
 */
enum scsi_zone_fault {
	SCSI_ZONE_FAULT_NONE,
	SCSI_ZONE_FAULT_OFFLINE,
	SCSI_ZONE_FAULT_READ_ONLY,
};
int scsi_lu_set_zone_fault(struct scsi_lu *lu, uint32_t zone_index, enum scsi_zone_fault fault, char *err,
			   size_t errlen);

/* ---- fault rules (fault_rules.c; docs/control.md, "fault-add") ---- */

/* What a rule does to a command it fires on. */
enum scsi_fault_action {
	SCSI_FAULT_ACTION_SENSE,        /* CHECK CONDITION with sense, INFORMATION = the LBA */
	SCSI_FAULT_ACTION_STATUS,       /* another status, no sense */
	SCSI_FAULT_ACTION_DELAY,        /* run the command delay_ms later */
	SCSI_FAULT_ACTION_HOLD,         /* never answer: held until aborted or the rule goes */
	SCSI_FAULT_ACTION_MEDIUM_ERROR, /* lba_first..lba_last unreadable until written */
	SCSI_FAULT_ACTION_CORRUPT_READ, /* a read's Data-In comes back with its first byte inverted, GOOD */
	SCSI_FAULT_ACTION_SHORT_READ,   /* a read sends half its Data-In (whole blocks), GOOD, residual underflow */
	SCSI_FAULT_ACTION_TEAR_ATOMIC,  /* a WRITE ATOMIC writes only its first `blocks` blocks, GOOD (docs/atomic.md) */
	SCSI_FAULT_ACTION_ZONE_OFFLINE, /* zone `zone` OFFLINE until the rule goes */
	SCSI_FAULT_ACTION_ZONE_READ_ONLY, /* zone `zone` READ ONLY until the rule goes */
	SCSI_FAULT_ACTION_DROP_CONNECTION, /* never answer, and the transport drops the connection that carried it */
	/* On an ABORT TASK whose referenced command the rule matches (scsi_tmf): */
	SCSI_FAULT_ACTION_REJECT_ABORT_TASK, /* FUNCTION REJECTED; the command goes on */
	SCSI_FAULT_ACTION_IGNORE_ABORT_TASK, /* no response at all; the command goes on */
	SCSI_FAULT_ACTION_CORRUPT_PI,   /* the medium returns pi_field of lba_first..lba_last corrupted until the rule goes */
	/*
	 * Informational exceptions (SPC-4 7.5.12; spc_ie.c), standing until the rule goes:
	 * a failure prediction with ASC/ASCQ asc/ascq (0/0: 5D/00 FAILURE PREDICTION THRESHOLD
	 * EXCEEDED), reported as the Informational Exceptions Control mode page says ...
	 */
	SCSI_FAULT_ACTION_PREDICT_FAILURE,
	/* ... and the LU's temperature: `temperature` degrees Celsius, its threshold `temperature_threshold` (0: 70). */
	SCSI_FAULT_ACTION_TEMPERATURE,
};

#define SCSI_FAULT_OPCODES_MAX 16
#define SCSI_FAULT_MEDIUM_ERROR_BLOCKS_MAX (1u << 20)
#define SCSI_FAULT_DELAY_MS_MAX 3600000u

struct scsi_fault_rule_params {
	enum scsi_fault_action action;
	/* match: each condition is ignored when absent */
	uint8_t opcodes[SCSI_FAULT_OPCODES_MAX];
	unsigned opcode_count;
	bool has_service_action;
	uint16_t service_action;
	bool has_lba;
	uint64_t lba_first, lba_last;  /* inclusive */
	char initiator[224];           /* substring of the initiator port name; "" = any */
	/* trigger */
	uint32_t every;                /* every Nth matching command (0 taken as 1) */
	double probability;            /* 0..1 */
	uint64_t seed;
	uint64_t count;                /* firings at most; 0 = no limit */
	uint32_t after_ms;             /* time window: fires only from after_ms after the rule was added ... */
	uint32_t for_ms;               /* ... for for_ms (0 = no end) */
	/* action */
	uint8_t sense_key, asc, ascq;
	uint8_t status;
	uint32_t delay_ms;
	uint32_t blocks;               /* tear-atomic */
	uint32_t zone;                 /* zone-offline, zone-read-only: the zone's index (0: the zone at LBA 0) */
	enum scsi_pi_field pi_field;   /* corrupt-pi */
	uint8_t temperature;           /* temperature: degrees Celsius, 1 to 254 */
	uint8_t temperature_threshold; /* temperature: the threshold, 1 to 254; 0: keep the default */
};

struct scsi_fault_rule_stats {
	uint64_t matched;
	uint64_t fired;
	uint32_t held;                 /* hold: commands held now */
	uint64_t bad_blocks;           /* medium-error: blocks not yet repaired */
	uint64_t age_ms;               /* since the rule was added (its time window counts from then) */
};

/*
 * Adds rule id (chosen by the caller, unique in the daemon) to lu.  Checks
 * every member first; returns 0, or -1 with the reason in err and nothing
 * changed.  A zone rule changes the zone at once (blocking: the zone state
 * file is written) and needs an empty task set.
 */
int scsi_lu_fault_add(struct scsi_lu *lu, uint32_t id, const struct scsi_fault_rule_params *p, char *err,
		      size_t errlen);
/* Removes rule id of lu: its held commands run, its bad blocks are repaired.  0, or -1 if lu has no such rule. */
int scsi_lu_fault_remove(struct scsi_lu *lu, uint32_t id);
/* Calls fn for every rule of lu, oldest first. */
void scsi_lu_fault_foreach(struct scsi_lu *lu,
			   void (*fn)(void *arg, uint32_t id, const struct scsi_fault_rule_params *p,
				      const struct scsi_fault_rule_stats *st),
			   void *arg);

#endif
