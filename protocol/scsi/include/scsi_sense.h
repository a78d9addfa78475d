/*
 * Sense data as a value (SPC-4 4.4).  Handlers build a struct scsi_sense_info
 * with the named constructors below; only sense.c turns it into bytes, in
 * fixed (70h/71h) or descriptor (72h/73h) format as the Control mode page's
 * D_SENSE bit asks.
 */
#ifndef SBCEMU_SCSI_SENSE_H
#define SBCEMU_SCSI_SENSE_H

/* Layering (docs/architecture.md): a backend knows nothing of SCSI. */
#ifdef SBCE_BUILDING_BACKENDS
#error "sbcemu layering: a backend knows nothing of SCSI (backends/ may not include the SCSI core)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sense keys (SPC-4 table 28). */
enum scsi_sense_key {
	SENSE_KEY_NO_SENSE = 0x0,
	SENSE_KEY_RECOVERED_ERROR = 0x1,
	SENSE_KEY_NOT_READY = 0x2,
	SENSE_KEY_MEDIUM_ERROR = 0x3,
	SENSE_KEY_HARDWARE_ERROR = 0x4,
	SENSE_KEY_ILLEGAL_REQUEST = 0x5,
	SENSE_KEY_UNIT_ATTENTION = 0x6,
	SENSE_KEY_DATA_PROTECT = 0x7,
	SENSE_KEY_BLANK_CHECK = 0x8,
	SENSE_KEY_VENDOR_SPECIFIC = 0x9,
	SENSE_KEY_COPY_ABORTED = 0xa,
	SENSE_KEY_ABORTED_COMMAND = 0xb,
	SENSE_KEY_VOLUME_OVERFLOW = 0xd,
	SENSE_KEY_MISCOMPARE = 0xe,
	SENSE_KEY_COMPLETED = 0xf,
};

/* Additional sense code and qualifier, packed as (ASC << 8) | ASCQ. */
#define ASC_NO_ADDITIONAL_SENSE_INFORMATION 0x0000
#define ASC_SANITIZE_IN_PROGRESS_NR 0x041b /* LOGICAL UNIT NOT READY, SANITIZE IN PROGRESS */
#define ASC_LOGICAL_UNIT_NOT_READY_FORMAT_IN_PROGRESS 0x0404
#define ASC_LOGICAL_UNIT_NOT_READY_INITIALIZING_COMMAND_REQUIRED 0x0402
#define ASC_LOGICAL_UNIT_NOT_READY_MANUAL_INTERVENTION_REQUIRED 0x0403
#define ASC_LOGICAL_UNIT_COMMUNICATION_TIME_OUT 0x0801
#define ASC_UNREACHABLE_COPY_TARGET 0x0804
#define ASC_COPY_TARGET_DEVICE_NOT_REACHABLE 0x0d02
#define ASC_UNEXPECTED_INEXACT_SEGMENT 0x260a
#define ASC_LOGICAL_UNIT_NOT_READY_CAUSE_NOT_REPORTABLE 0x0400
#define ASC_LOGICAL_UNIT_IS_IN_PROCESS_OF_BECOMING_READY 0x0401
#define ASC_NOT_READY_TO_READY_CHANGE 0x2800 /* NOT READY TO READY CHANGE, MEDIUM MAY HAVE CHANGED */
#define ASC_LOGICAL_UNIT_NOT_READY_SELF_TEST_IN_PROGRESS 0x0409
#define ASC_LOGICAL_UNIT_NOT_ACCESSIBLE_ASYMMETRIC_ACCESS_STATE_TRANSITION 0x040a
#define ASC_LOGICAL_UNIT_NOT_ACCESSIBLE_TARGET_PORT_IN_STANDBY_STATE 0x040b
#define ASC_LOGICAL_UNIT_NOT_ACCESSIBLE_TARGET_PORT_IN_UNAVAILABLE_STATE 0x040c
#define ASC_WARNING_SPECIFIED_TEMPERATURE_EXCEEDED 0x0b01
#define ASC_WARNING_BACKGROUND_SELF_TEST_FAILED 0x0b03
#define ASC_WRITE_ERROR 0x0c00
#define ASC_INVALID_FIELD_IN_COMMAND_INFORMATION_UNIT 0x0e03
#define ASC_UNRECOVERED_READ_ERROR 0x1100
#define ASC_MISCOMPARE_DURING_VERIFY_OPERATION 0x1d00
#define ASC_PARAMETER_LIST_LENGTH_ERROR 0x1a00
#define ASC_INVALID_COMMAND_OPERATION_CODE 0x2000
#define ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE 0x2100
#define ASC_INVALID_FIELD_IN_CDB 0x2400
#define ASC_LOGICAL_UNIT_NOT_SUPPORTED 0x2500
#define ASC_NOT_AN_ADMINISTRATIVE_LOGICAL_UNIT 0x200d
#define ASC_SUBSIDIARY_LOGICAL_UNIT_NOT_CONFIGURED 0x6801
#define ASC_INVALID_FIELD_IN_PARAMETER_LIST 0x2600
#define ASC_PARAMETER_NOT_SUPPORTED 0x2601
#define ASC_PARAMETER_VALUE_INVALID 0x2602
#define ASC_INVALID_RELEASE_OF_PERSISTENT_RESERVATION 0x2604
#define ASC_TOO_MANY_TARGET_DESCRIPTORS 0x2606
#define ASC_UNSUPPORTED_TARGET_DESCRIPTOR_TYPE_CODE 0x2607
#define ASC_TOO_MANY_SEGMENT_DESCRIPTORS 0x2608
#define ASC_UNSUPPORTED_SEGMENT_DESCRIPTOR_TYPE_CODE 0x2609
#define ASC_WRITE_PROTECTED 0x2700
#define ASC_POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED 0x2900
#define ASC_POWER_ON_OCCURRED 0x2901
#define ASC_BUS_DEVICE_RESET_FUNCTION_OCCURRED 0x2903
#define ASC_I_T_NEXUS_LOSS_OCCURRED 0x2907
#define ASC_PARAMETERS_CHANGED 0x2a00
#define ASC_MODE_PARAMETERS_CHANGED 0x2a01
#define ASC_RESERVATIONS_PREEMPTED 0x2a03
#define ASC_RESERVATIONS_RELEASED 0x2a04
#define ASC_REGISTRATIONS_PREEMPTED 0x2a05
#define ASC_ASYMMETRIC_ACCESS_STATE_CHANGED 0x2a06
#define ASC_PRIORITY_CHANGED 0x2a08
#define ASC_CAPACITY_DATA_HAS_CHANGED 0x2a09
#define ASC_COMMAND_SEQUENCE_ERROR 0x2c00
/* SPC-6 command duration limits (Linux scsi_check_sense: 2E/01..03 and 55/0A end as ETIME) */
#define ASC_COMMAND_TIMEOUT_BEFORE_PROCESSING 0x2e01
#define ASC_COMMAND_TIMEOUT_DURING_PROCESSING 0x2e02
#define ASC_COMMAND_TIMEOUT_DURING_PROCESSING_DUE_TO_ERROR_RECOVERY 0x2e03
#define ASC_COMMANDS_CLEARED_BY_ANOTHER_INITIATOR 0x2f00
#define ASC_SAVING_PARAMETERS_NOT_SUPPORTED 0x3900
#define ASC_MEDIUM_NOT_PRESENT 0x3a00
#define ASC_MEDIUM_FORMAT_CORRUPTED 0x3100
#define ASC_SANITIZE_COMMAND_FAILED 0x3103
#define ASC_INQUIRY_DATA_HAS_CHANGED 0x3f03
#define ASC_REPORTED_LUNS_DATA_HAS_CHANGED 0x3f0e
#define ASC_SUBSIDIARY_BINDING_CHANGED 0x3f1a
#define ASC_LOGICAL_UNIT_FAILED_SELF_TEST 0x3e03
#define ASC_INTERNAL_TARGET_FAILURE 0x4400
#define ASC_SET_TARGET_PORT_GROUPS_COMMAND_FAILED 0x670a
#define ASC_FAILURE_PREDICTION_THRESHOLD_EXCEEDED 0x5d00
#define ASC_FAILURE_PREDICTION_THRESHOLD_EXCEEDED_FALSE 0x5dff /* the TEST bit's false prediction */
#define ASC_DATA_CURRENTLY_UNAVAILABLE 0x550a
#define ASC_MEDIUM_REMOVAL_PREVENTED 0x5302
#define ASC_INSUFFICIENT_RESOURCES 0x5503 /* SPC-4 (55/00 is SYSTEM RESOURCE FAILURE) */
#define ASC_INSUFFICIENT_REGISTRATION_RESOURCES 0x5504
#define ASC_SPACE_ALLOCATION_FAILED_WRITE_PROTECT 0x2707
#define ASC_DATA_PHASE_ERROR 0x4b00
#define ASC_INITIATOR_DETECTED_ERROR_MESSAGE_RECEIVED 0x4800
#define ASC_INVALID_MESSAGE_ERROR 0x4900
#define ASC_OVERLAPPED_COMMANDS_ATTEMPTED 0x4e00
#define ASC_LOGICAL_BLOCK_GUARD_CHECK_FAILED 0x1001
#define ASC_LOGICAL_BLOCK_APPLICATION_TAG_CHECK_FAILED 0x1002
#define ASC_LOGICAL_BLOCK_REFERENCE_TAG_CHECK_FAILED 0x1003

/* The sense-key-specific field (SPC-4 4.5.2.4). */
enum scsi_sks_kind {
	SCSI_SKS_NONE,
	SCSI_SKS_FIELD_POINTER,     /* ILLEGAL REQUEST */
	SCSI_SKS_PROGRESS,          /* NOT READY / NO SENSE with an operation in progress */
};

struct scsi_sense_info {
	uint8_t key;                /* enum scsi_sense_key */
	uint16_t asc_ascq;          /* packed */
	bool information_valid;
	uint64_t information;
	bool command_specific_valid;
	uint64_t command_specific;
	enum scsi_sks_kind sks_kind;
	bool sks_cd;                /* field pointer: 1 = CDB, 0 = parameter data */
	bool sks_bpv;               /* field pointer: bit pointer valid */
	uint8_t sks_bit;
	uint16_t sks_field;         /* field pointer byte, or progress (0..65535) */
	bool deferred;              /* deferred error (71h / 73h) */
};

/* A sense value with only key and ASC/ASCQ. */
struct scsi_sense_info sense_make(enum scsi_sense_key key, uint16_t asc_ascq);
/* ILLEGAL REQUEST, INVALID FIELD IN CDB; bit < 0 means no bit pointer. */
struct scsi_sense_info sense_invalid_field_in_cdb(uint16_t byte, int bit);
/* ILLEGAL REQUEST, INVALID FIELD IN PARAMETER LIST; bit < 0 means no bit pointer. */
struct scsi_sense_info sense_invalid_field_in_parameter_list(uint16_t byte, int bit);
/* ILLEGAL REQUEST with asc_ascq and the field pointer (C/D = 0) at byte of the parameter list. */
struct scsi_sense_info sense_in_parameter_list(uint16_t asc_ascq, uint16_t byte);
struct scsi_sense_info sense_parameter_list_length_error(void);
struct scsi_sense_info sense_invalid_command_operation_code(void);
struct scsi_sense_info sense_lba_out_of_range(void);
/* NOT READY with the progress indication (fraction of 65536 done). */
struct scsi_sense_info sense_not_ready_in_progress(uint16_t asc_ascq, uint16_t progress);
/* Returns s with INFORMATION set (for instance the first failing LBA). */
struct scsi_sense_info sense_with_information(struct scsi_sense_info s, uint64_t information);

/*
 * Writes sense data for s into buf (at most max bytes, which the caller
 * chooses from the transport's limit) in descriptor format if descriptor is
 * set, else fixed format.  Returns the number of bytes written.  In fixed
 * format an INFORMATION value over 32 bits is left out (VALID = 0), as
 * SPC-4 4.5.3 requires.
 */
size_t scsi_sense_encode(const struct scsi_sense_info *s, bool descriptor, uint8_t *buf, size_t max);

#endif
