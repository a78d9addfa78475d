/*
 * The one opcode table.  Every command the core serves has one row here, and
 * everything reads it: dispatch, service-action resolution, the reserved-bit
 * check (the CDB USAGE DATA doubles as the mask of bits a CDB may set),
 * unit-attention and NOT READY gating, reservation conflicts, implicit HEAD
 * OF QUEUE, and REPORT SUPPORTED OPERATION CODES (spc_rsoc.c).  An LU's
 * device profile may take rows away (lu_profile.c; OP_MINIMAL marks the rows
 * of the sbc4-minimal command set).
 *
 * Rows are sorted by (opcode, service action); tests/unit check that.
 *
 * CDB USAGE DATA (SPC-4 6.35.3): byte 0 is the operation code; a service
 * action field holds the service action code itself; every other bit is 1
 * where the device server uses it.  The CONTROL byte's NACA bit is not set:
 * ACA is not supported, so NACA = 1 gets INVALID FIELD IN CDB.  The DLD
 * bits (OP_DLD rows) are used only on an LU with command duration limits
 * (scsi_op_usage).
 */
#include <stddef.h>

#include "copy/copy.h"
#include "core/scsi_internal.h"
#include "zbc/zbc.h"

#define ALL_SBC_KINDS (SCSI_LU_CONVENTIONAL | SCSI_LU_ZBC_HM | SCSI_LU_ZBC_HA)
/*
 * ... and the administrative LU of a conglomerate (core/conglomerate.c),
 * which has no medium: it answers what identifies and describes it, and
 * every command that would touch a medium is INVALID COMMAND OPERATION CODE.
 */
#define WITH_ADMIN (ALL_SBC_KINDS | SCSI_LU_ADMIN)
#define FF4 0xff, 0xff, 0xff, 0xff
#define FF8 FF4, FF4

/* Timeouts in seconds for the RSOC command timeouts descriptor. */
#define T_FAST 1, 10
#define T_IO 5, 30
#define T_LONG 60, 3600

#define ROW(nm, op, sa, loc, len, fl, prc, kinds, p, e, en, lk, tmo, ...)                        \
	{ .name = nm, .opcode = op, .service_action = sa, .sa_location = loc, .cdb_len = len, \
	  .usage = { __VA_ARGS__ }, .flags = fl, .pr_class = prc, .lu_kinds = kinds,           \
	  .parse = p, .exec = e, .enabled = en, .lock = lk, TIMEOUTS(tmo) }
#define TIMEOUTS(...) TIMEOUTS_(__VA_ARGS__)
#define TIMEOUTS_(n, r) .nominal_timeout = n, .recommended_timeout = r

#define RD (OP_DATA_IN | OP_MEDIUM_ACCESS | OP_LBA_READ)
#define WR (OP_DATA_OUT | OP_MEDIUM_ACCESS | OP_WRITES_MEDIUM | OP_LBA_WRITE)
/* Data-Out is whole logical blocks (sbc_rw.c clips a short one); exec takes it in pieces */
#define WR_BLOCKS (WR | OP_SHORT_DATA_OUT_OK | OP_DATA_OUT_SGL)
/* read-modify-write and atomic writes: their blocks alone, even with lba_locks = lu */
#define WR_ALONE (OP_DATA_OUT | OP_MEDIUM_ACCESS | OP_WRITES_MEDIUM | OP_LBA_EXCLUSIVE)
#define INFO_CMD (OP_SKIP_UA | OP_NO_LU_OK | OP_IN_PROGRESS_OK)
/* Asymmetric access states a command is processed in besides the active ones (spc_alua.c). */
#define ALUA_ANY (OP_ALUA_STANDBY_OK | OP_ALUA_UNAVAILABLE_OK | OP_ALUA_TRANSITIONING_OK)
#define ALUA_STANDBY OP_ALUA_STANDBY_OK

const struct scsi_op scsi_op_table[] = {
	ROW("TEST UNIT READY", 0x00, 0, SCSI_SA_NONE, 6, OP_MEDIUM_ACCESS | OP_MINIMAL, SCSI_PR_ALLOWED,
	    WITH_ADMIN, NULL, spc_test_unit_ready_exec, NULL, NULL, T_FAST,
	    0x00, 0x00, 0x00, 0x00, 0x00, 0x00),
	ROW("REQUEST SENSE", 0x03, 0, SCSI_SA_NONE, 6, OP_DATA_IN | INFO_CMD | OP_MINIMAL | ALUA_ANY, SCSI_PR_ALLOWED,
	    WITH_ADMIN, NULL, spc_request_sense_exec, NULL, NULL, T_FAST,
	    0x03, 0x01, 0x00, 0x00, 0xff, 0x00),
	ROW("FORMAT UNIT", 0x04, 0, SCSI_SA_NONE, 6, OP_DATA_OUT | OP_WRITES_MEDIUM | OP_QUIESCE, SCSI_PR_CONFLICT,
	    ALL_SBC_KINDS, sbc_format_unit_parse, sbc_format_unit_exec, NULL, NULL, T_LONG,
	    0x04, 0xff, 0x00, 0x00, 0x00, 0x00),
	ROW("READ(6)", 0x08, 0, SCSI_SA_NONE, 6, RD, SCSI_PR_READ,
	    ALL_SBC_KINDS, sbc_read_parse, sbc_read_exec, NULL, NULL, T_IO,
	    0x08, 0x1f, 0xff, 0xff, 0xff, 0x00),
	ROW("WRITE(6)", 0x0a, 0, SCSI_SA_NONE, 6, WR_BLOCKS, SCSI_PR_WRITE,
	    ALL_SBC_KINDS, sbc_write_parse, sbc_write_exec, NULL, NULL, T_IO,
	    0x0a, 0x1f, 0xff, 0xff, 0xff, 0x00),
	ROW("INQUIRY", 0x12, 0, SCSI_SA_NONE, 6, OP_DATA_IN | OP_HEAD_OF_QUEUE | INFO_CMD | OP_MINIMAL | ALUA_ANY, SCSI_PR_ALLOWED,
	    WITH_ADMIN, NULL, spc_inquiry_exec, NULL, NULL, T_FAST,
	    0x12, 0x01, 0xff, 0xff, 0xff, 0x00),
	ROW("MODE SELECT(6)", 0x15, 0, SCSI_SA_NONE, 6, OP_DATA_OUT | ALUA_STANDBY, SCSI_PR_CONFLICT,
	    WITH_ADMIN, spc_mode_select_parse, spc_mode_select_exec, NULL, NULL, T_FAST,
	    0x15, 0x11, 0x00, 0x00, 0xff, 0x00),
	ROW("RESERVE(6)", 0x16, 0, SCSI_SA_NONE, 6, 0, SCSI_PR_CONFLICT,
	    ALL_SBC_KINDS, NULL, spc_reserve_exec, NULL, NULL, T_FAST,
	    0x16, 0x00, 0x00, 0x00, 0x00, 0x00),
	ROW("RELEASE(6)", 0x17, 0, SCSI_SA_NONE, 6, 0, SCSI_PR_CONFLICT,
	    ALL_SBC_KINDS, NULL, spc_release_exec, NULL, NULL, T_FAST,
	    0x17, 0x00, 0x00, 0x00, 0x00, 0x00),
	ROW("MODE SENSE(6)", 0x1a, 0, SCSI_SA_NONE, 6, OP_DATA_IN | ALUA_STANDBY, SCSI_PR_READ,
	    WITH_ADMIN, NULL, spc_mode_sense_exec, NULL, NULL, T_FAST,
	    0x1a, 0x08, 0xff, 0xff, 0xff, 0x00),
	ROW("START STOP UNIT", 0x1b, 0, SCSI_SA_NONE, 6, 0, SCSI_PR_WRITE,
	    ALL_SBC_KINDS, NULL, sbc_start_stop_unit_exec, NULL, NULL, T_IO,
	    0x1b, 0x01, 0x00, 0x0f, 0xf7, 0x00),
	/* RECEIVE DIAGNOSTIC RESULTS (spc_diag.c): PCV b1, PAGE CODE b2, ALLOCATION LENGTH b3-4. */
	ROW("RECEIVE DIAGNOSTIC RESULTS", 0x1c, 0, SCSI_SA_NONE, 6, OP_DATA_IN | ALUA_STANDBY, SCSI_PR_CONFLICT,
	    ALL_SBC_KINDS, NULL, spc_receive_diagnostic_results_exec, NULL, NULL, T_FAST,
	    0x1c, 0x01, 0xff, 0xff, 0xff, 0x00),
	/* SEND DIAGNOSTIC (spc_diag.c): SELF-TEST CODE, PF, SELFTEST, DEVOFFL, UNITOFFL b1, PARAMETER LIST LENGTH b3-4. */
	ROW("SEND DIAGNOSTIC", 0x1d, 0, SCSI_SA_NONE, 6, OP_DATA_OUT | ALUA_STANDBY, SCSI_PR_CONFLICT,
	    ALL_SBC_KINDS, spc_send_diagnostic_parse, spc_send_diagnostic_exec, NULL, NULL, T_LONG,
	    0x1d, 0xf7, 0x00, 0xff, 0xff, 0x00),
	ROW("PREVENT ALLOW MEDIUM REMOVAL", 0x1e, 0, SCSI_SA_NONE, 6, 0, SCSI_PR_CONFLICT,
	    ALL_SBC_KINDS, NULL, spc_prevent_allow_medium_removal_exec, NULL, NULL, T_FAST,
	    0x1e, 0x00, 0x00, 0x00, 0x03, 0x00),
	ROW("READ CAPACITY(10)", 0x25, 0, SCSI_SA_NONE, 10, OP_DATA_IN | OP_MINIMAL | ALUA_STANDBY, SCSI_PR_ALLOWED,
	    WITH_ADMIN, NULL, sbc_read_capacity_10_exec, NULL, NULL, T_FAST,
	    0x25, 0x00, FF4, 0x00, 0x00, 0x01, 0x00),
	ROW("READ(10)", 0x28, 0, SCSI_SA_NONE, 10, OP_PROTECT_FIELD | RD | OP_MINIMAL, SCSI_PR_READ,
	    ALL_SBC_KINDS, sbc_read_parse, sbc_read_exec, NULL, NULL, T_IO,
	    0x28, 0xfe, FF4, 0x3f, 0xff, 0xff, 0x00),
	ROW("WRITE(10)", 0x2a, 0, SCSI_SA_NONE, 10, OP_PROTECT_FIELD | WR_BLOCKS | OP_MINIMAL, SCSI_PR_WRITE,
	    ALL_SBC_KINDS, sbc_write_parse, sbc_write_exec, NULL, NULL, T_IO,
	    0x2a, 0xfa, FF4, 0x3f, 0xff, 0xff, 0x00),
	ROW("WRITE AND VERIFY(10)", 0x2e, 0, SCSI_SA_NONE, 10, OP_PROTECT_FIELD | WR_BLOCKS, SCSI_PR_WRITE,
	    ALL_SBC_KINDS, sbc_write_and_verify_parse, sbc_write_and_verify_exec, NULL, NULL, T_IO,
	    0x2e, 0xf6, FF4, 0x3f, 0xff, 0xff, 0x00),
	ROW("VERIFY(10)", 0x2f, 0, SCSI_SA_NONE, 10, OP_PROTECT_FIELD | OP_DATA_OUT | OP_MEDIUM_ACCESS | OP_LBA_READ, SCSI_PR_READ,
	    ALL_SBC_KINDS, sbc_verify_parse, sbc_verify_exec, NULL, NULL, T_IO,
	    0x2f, 0xf6, FF4, 0x3f, 0xff, 0xff, 0x00),
	ROW("PRE-FETCH(10)", 0x34, 0, SCSI_SA_NONE, 10, OP_MEDIUM_ACCESS, SCSI_PR_READ,
	    ALL_SBC_KINDS, sbc_pre_fetch_parse, sbc_pre_fetch_exec, NULL, NULL, T_IO,
	    0x34, 0x02, FF4, 0x3f, 0xff, 0xff, 0x00),
	ROW("SYNCHRONIZE CACHE(10)", 0x35, 0, SCSI_SA_NONE, 10, OP_MEDIUM_ACCESS | OP_MINIMAL, SCSI_PR_WRITE,
	    ALL_SBC_KINDS, sbc_synchronize_cache_parse, sbc_synchronize_cache_exec, NULL, NULL, T_IO,
	    0x35, 0x02, FF4, 0x3f, 0xff, 0xff, 0x00),
	ROW("READ DEFECT DATA(10)", 0x37, 0, SCSI_SA_NONE, 10, OP_DATA_IN, SCSI_PR_READ,
	    ALL_SBC_KINDS, NULL, sbc_read_defect_data_exec, NULL, NULL, T_FAST,
	    0x37, 0x00, 0x1f, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0x00),
	ROW("WRITE SAME(10)", 0x41, 0, SCSI_SA_NONE, 10, OP_PROTECT_FIELD | WR, SCSI_PR_WRITE,
	    ALL_SBC_KINDS, sbc_write_same_parse, sbc_write_same_exec, NULL, NULL, T_LONG,
	    0x41, 0xe8, FF4, 0x3f, 0xff, 0xff, 0x00),
	ROW("UNMAP", 0x42, 0, SCSI_SA_NONE, 10, WR, SCSI_PR_WRITE,
	    ALL_SBC_KINDS, sbc_unmap_parse, sbc_unmap_exec, sbc_thin_provisioning_enabled, sbc_unmap_lock, T_LONG,
	    0x42, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3f, 0xff, 0xff, 0x00),
	ROW("SANITIZE", 0x48, SCSI_SA_SANITIZE_OVERWRITE, SCSI_SA_BYTE1, 10,
	    OP_DATA_OUT | OP_WRITES_MEDIUM | OP_QUIESCE, SCSI_PR_CONFLICT,
	    ALL_SBC_KINDS, sbc_sanitize_parse, sbc_sanitize_exec, NULL, NULL, T_LONG,
	    0x48, 0xe0 | SCSI_SA_SANITIZE_OVERWRITE, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0x00),
	ROW("SANITIZE", 0x48, SCSI_SA_SANITIZE_BLOCK_ERASE, SCSI_SA_BYTE1, 10, OP_WRITES_MEDIUM | OP_QUIESCE,
	    SCSI_PR_CONFLICT,
	    ALL_SBC_KINDS, sbc_sanitize_parse, sbc_sanitize_exec, NULL, NULL, T_LONG,
	    0x48, 0xe0 | SCSI_SA_SANITIZE_BLOCK_ERASE, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0x00),
	ROW("SANITIZE", 0x48, SCSI_SA_SANITIZE_CRYPTOGRAPHIC_ERASE, SCSI_SA_BYTE1, 10, OP_WRITES_MEDIUM | OP_QUIESCE,
	    SCSI_PR_CONFLICT,
	    ALL_SBC_KINDS, sbc_sanitize_parse, sbc_sanitize_exec, NULL, NULL, T_LONG,
	    0x48, 0xe0 | SCSI_SA_SANITIZE_CRYPTOGRAPHIC_ERASE, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff,
	    0x00),
	ROW("SANITIZE", 0x48, SCSI_SA_SANITIZE_EXIT_FAILURE_MODE, SCSI_SA_BYTE1, 10, OP_WRITES_MEDIUM | OP_QUIESCE,
	    SCSI_PR_CONFLICT,
	    ALL_SBC_KINDS, sbc_sanitize_parse, sbc_sanitize_exec, NULL, NULL, T_LONG,
	    0x48, 0xa0 | SCSI_SA_SANITIZE_EXIT_FAILURE_MODE, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff,
	    0x00),
	/* LOG SELECT (spc_log.c): PCR, SP b1, PC and PAGE CODE b2, SUBPAGE CODE b3, PARAMETER LIST LENGTH b7-8. */
	ROW("LOG SELECT", 0x4c, 0, SCSI_SA_NONE, 10, OP_DATA_OUT | ALUA_STANDBY, SCSI_PR_CONFLICT,
	    ALL_SBC_KINDS, spc_log_select_parse, spc_log_select_exec, NULL, NULL, T_FAST,
	    0x4c, 0x03, 0xff, 0xff, 0x00, 0x00, 0x00, 0xff, 0xff, 0x00),
	/* LOG SENSE (spc_log.c): PPC, SP b1, PC and PAGE CODE b2, SUBPAGE CODE b3, PARAMETER POINTER b5-6, ALLOCATION LENGTH b7-8. */
	ROW("LOG SENSE", 0x4d, 0, SCSI_SA_NONE, 10, OP_DATA_IN | ALUA_STANDBY, SCSI_PR_ALLOWED,
	    WITH_ADMIN, NULL, spc_log_sense_exec, NULL, NULL, T_FAST,
	    0x4d, 0x03, 0xff, 0xff, 0x00, 0xff, 0xff, 0xff, 0xff, 0x00),
	ROW("MODE SELECT(10)", 0x55, 0, SCSI_SA_NONE, 10, OP_DATA_OUT | ALUA_STANDBY, SCSI_PR_CONFLICT,
	    WITH_ADMIN, spc_mode_select_parse, spc_mode_select_exec, NULL, NULL, T_FAST,
	    0x55, 0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0x00),
	ROW("RESERVE(10)", 0x56, 0, SCSI_SA_NONE, 10, 0, SCSI_PR_CONFLICT,
	    ALL_SBC_KINDS, NULL, spc_reserve_exec, NULL, NULL, T_FAST,
	    0x56, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00),
	ROW("RELEASE(10)", 0x57, 0, SCSI_SA_NONE, 10, 0, SCSI_PR_CONFLICT,
	    ALL_SBC_KINDS, NULL, spc_release_exec, NULL, NULL, T_FAST,
	    0x57, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00),
	ROW("MODE SENSE(10)", 0x5a, 0, SCSI_SA_NONE, 10, OP_DATA_IN | ALUA_STANDBY, SCSI_PR_READ,
	    WITH_ADMIN, NULL, spc_mode_sense_exec, NULL, NULL, T_FAST,
	    0x5a, 0x18, 0xff, 0xff, 0x00, 0x00, 0x00, 0xff, 0xff, 0x00),
#define PRIN(sa, nm)                                                                          \
	ROW(nm, 0x5e, sa, SCSI_SA_BYTE1, 10, OP_DATA_IN | ALUA_STANDBY, SCSI_PR_ALLOWED, ALL_SBC_KINDS, NULL,  \
	    spc_persistent_reserve_in_exec, NULL, NULL, T_FAST,                                      \
	    0x5e, sa, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0x00)
	PRIN(SCSI_SA_PRIN_READ_KEYS, "PERSISTENT RESERVE IN/READ KEYS"),
	PRIN(SCSI_SA_PRIN_READ_RESERVATION, "PERSISTENT RESERVE IN/READ RESERVATION"),
	PRIN(SCSI_SA_PRIN_REPORT_CAPABILITIES, "PERSISTENT RESERVE IN/REPORT CAPABILITIES"),
	PRIN(SCSI_SA_PRIN_READ_FULL_STATUS, "PERSISTENT RESERVE IN/READ FULL STATUS"),
#define PROUT(sa, nm)                                                                         \
	ROW(nm, 0x5f, sa, SCSI_SA_BYTE1, 10, OP_DATA_OUT | ALUA_STANDBY, SCSI_PR_ALLOWED, ALL_SBC_KINDS,       \
	    spc_persistent_reserve_out_parse, spc_persistent_reserve_out_exec, NULL, NULL, T_FAST,   \
	    0x5f, sa, 0xff, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x00)
	PROUT(SCSI_SA_PROUT_REGISTER, "PERSISTENT RESERVE OUT/REGISTER"),
	PROUT(SCSI_SA_PROUT_RESERVE, "PERSISTENT RESERVE OUT/RESERVE"),
	PROUT(SCSI_SA_PROUT_RELEASE, "PERSISTENT RESERVE OUT/RELEASE"),
	PROUT(SCSI_SA_PROUT_CLEAR, "PERSISTENT RESERVE OUT/CLEAR"),
	PROUT(SCSI_SA_PROUT_PREEMPT, "PERSISTENT RESERVE OUT/PREEMPT"),
	PROUT(SCSI_SA_PROUT_PREEMPT_AND_ABORT, "PERSISTENT RESERVE OUT/PREEMPT AND ABORT"),
	PROUT(SCSI_SA_PROUT_REGISTER_AND_IGNORE_EXISTING_KEY,
	      "PERSISTENT RESERVE OUT/REGISTER AND IGNORE EXISTING KEY"),
	PROUT(SCSI_SA_PROUT_REGISTER_AND_MOVE, "PERSISTENT RESERVE OUT/REGISTER AND MOVE"),
	/*
	 * The 32-byte READ/WRITE family of type 2 protection (SBC-4 5.20, 5.39,
	 * 5.47, 5.53, 5.58; sbc_pi.h): GROUP NUMBER b6, ADDITIONAL CDB LENGTH b7
	 * = 18h, SERVICE ACTION b8-9, PROTECT/DPO/FUA (RARC, BYTCHK, UNMAP,
	 * NDOB) b10, LBA b12-19, EXPECTED INITIAL LOGICAL BLOCK REFERENCE TAG
	 * b20-23, EXPECTED LOGICAL BLOCK APPLICATION TAG b24-25, LOGICAL BLOCK
	 * APPLICATION TAG MASK b26-27, TRANSFER LENGTH b28-31.
	 */
	ROW("READ(32)", 0x7f, SCSI_SA_READ_32, SCSI_SA_BYTES8_9, 32, OP_PROTECT_FIELD | RD | OP_DLD, SCSI_PR_READ,
	    SCSI_LU_CONVENTIONAL, sbc_read_parse, sbc_read_exec, sbc_pi_type2_enabled, NULL, T_IO,
	    0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3f, 0x18, 0x00, 0x09, 0xfc, 0x07, FF8, FF4, FF4, FF4),
	ROW("VERIFY(32)", 0x7f, SCSI_SA_VERIFY_32, SCSI_SA_BYTES8_9, 32, OP_PROTECT_FIELD | OP_DATA_OUT | OP_MEDIUM_ACCESS | OP_LBA_READ,
	    SCSI_PR_READ, SCSI_LU_CONVENTIONAL, sbc_verify_parse, sbc_verify_exec, sbc_pi_type2_enabled, NULL, T_IO,
	    0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3f, 0x18, 0x00, 0x0a, 0xf6, 0x00, FF8, FF4, FF4, FF4),
	ROW("WRITE(32)", 0x7f, SCSI_SA_WRITE_32, SCSI_SA_BYTES8_9, 32, OP_PROTECT_FIELD | WR_BLOCKS | OP_DLD,
	    SCSI_PR_WRITE, SCSI_LU_CONVENTIONAL, sbc_write_parse, sbc_write_exec, sbc_pi_type2_enabled, NULL, T_IO,
	    0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3f, 0x18, 0x00, 0x0b, 0xf8, 0x07, FF8, FF4, FF4, FF4),
	ROW("WRITE AND VERIFY(32)", 0x7f, SCSI_SA_WRITE_AND_VERIFY_32, SCSI_SA_BYTES8_9, 32, OP_PROTECT_FIELD | WR_BLOCKS,
	    SCSI_PR_WRITE, SCSI_LU_CONVENTIONAL, sbc_write_and_verify_parse, sbc_write_and_verify_exec,
	    sbc_pi_type2_enabled, NULL, T_IO,
	    0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3f, 0x18, 0x00, 0x0c, 0xf6, 0x00, FF8, FF4, FF4, FF4),
	ROW("WRITE SAME(32)", 0x7f, SCSI_SA_WRITE_SAME_32, SCSI_SA_BYTES8_9, 32, OP_PROTECT_FIELD | WR, SCSI_PR_WRITE,
	    SCSI_LU_CONVENTIONAL, sbc_write_same_parse, sbc_write_same_exec, sbc_pi_type2_enabled, NULL, T_LONG,
	    0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3f, 0x18, 0x00, 0x0d, 0xe9, 0x00, FF8, FF4, FF4, FF4),
	/*
	 * WRITE ATOMIC(32) (sbc_write_atomic.c): ATOMIC BOUNDARY b4-5, GROUP
	 * NUMBER b6, ADDITIONAL CDB LENGTH b7 = 18h, SERVICE ACTION b8-9,
	 * DPO/FUA b10, LBA b12-19, expected tags b20-27, TRANSFER LENGTH b28-31.
	 * Type 2 protection only (sbc_write_atomic_32_enabled).
	 */
	ROW("WRITE ATOMIC(32)", 0x7f, SCSI_SA_WRITE_ATOMIC_32, SCSI_SA_BYTES8_9, 32, OP_PROTECT_FIELD | WR_ALONE,
	    SCSI_PR_WRITE,
	    SCSI_LU_CONVENTIONAL, sbc_write_atomic_parse, sbc_write_atomic_exec, sbc_write_atomic_32_enabled, NULL,
	    T_IO, 0x7f, 0x00, 0x00, 0x00, 0xff, 0xff, 0x3f, 0x18, 0x00, 0x0f, 0xf8, 0x00, FF8, FF4, 0xff, 0xff,
	    0xff, 0xff, FF4),
	/*
	 * WRITE SCATTERED(32): GROUP NUMBER b6, WRPROTECT/DPO/FUA b10, LBDOF
	 * b12-13, NUMBER OF LBA RANGE DESCRIPTORS b16-17, BUFFER TRANSFER LENGTH
	 * b28-31.
	 */
	ROW("WRITE SCATTERED(32)", 0x7f, SCSI_SA_WRITE_SCATTERED_32, SCSI_SA_BYTES8_9, 32, OP_PROTECT_FIELD | WR, SCSI_PR_WRITE,
	    SCSI_LU_CONVENTIONAL, sbc_write_scattered_parse, sbc_write_scattered_exec, sbc_write_scattered_32_enabled,
	    sbc_write_scattered_lock,
	    T_IO, 0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3f, 0x18, 0x00, 0x11, 0xf8, 0x00, 0xff, 0xff, 0x00, 0x00,
	    0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, FF4),
	/*
	 * ZONE ACTIVATE(32) / ZONE QUERY(32) (zbc_domains.c), libzbc's layout:
	 * ALL / ZSRC b10, OTHER ZONE DOMAIN ID b11, ZONE ID b12-19, NUMBER OF
	 * ZONES b20-23, ALLOCATION LENGTH b28-31.
	 */
	ROW("ZONE ACTIVATE(32)", 0x7f, ZBC_SA_ZONE_ACTIVATE_32, SCSI_SA_BYTES8_9, 32,
	    OP_DATA_IN | OP_MEDIUM_ACCESS | OP_WRITES_MEDIUM | OP_QUIESCE, SCSI_PR_WRITE, SCSI_LU_ZBC_HM,
	    zbc_zone_activate_parse,
	    zbc_zone_activate_exec, zbc_domains_enabled, NULL, T_IO,
	    0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x18, 0xf8, 0x00, 0xc0, 0xff, FF8, FF4, 0x00, 0x00, 0x00, 0x00,
	    FF4),
	ROW("ZONE QUERY(32)", 0x7f, ZBC_SA_ZONE_QUERY_32, SCSI_SA_BYTES8_9, 32, OP_DATA_IN | OP_MEDIUM_ACCESS,
	    SCSI_PR_READ, SCSI_LU_ZBC_HM, zbc_zone_activate_parse, zbc_zone_activate_exec, zbc_domains_enabled, NULL,
	    T_FAST,
	    0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x18, 0xf8, 0x01, 0xc0, 0xff, FF8, FF4, 0x00, 0x00, 0x00, 0x00,
	    FF4),
	/*
	 * The copy manager (copy/), every LU with a medium (zoned LUs: copy_piece.c): EXTENDED COPY(LID1)
	 * and (LID4) PARAMETER LIST LENGTH b10-13; RECEIVE COPY RESULTS LIST IDENTIFIER b2,
	 * ALLOCATION LENGTH b10-13.
	 */
	ROW("EXTENDED COPY(LID1)", 0x83, 0x00, SCSI_SA_BYTE1, 16,
	    OP_DATA_OUT | OP_MEDIUM_ACCESS | OP_WRITES_MEDIUM | OP_PIECE_BUFFER, SCSI_PR_WRITE, ALL_SBC_KINDS,
	    extended_copy_parse, extended_copy_exec, NULL, extended_copy_lock, T_LONG,
	    0x83, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, FF4, 0x00, 0x00),
	ROW("EXTENDED COPY(LID4)", 0x83, COPY_SA_EXTENDED_COPY_LID4, SCSI_SA_BYTE1, 16,
	    OP_DATA_OUT | OP_MEDIUM_ACCESS | OP_WRITES_MEDIUM | OP_PIECE_BUFFER, SCSI_PR_WRITE, ALL_SBC_KINDS,
	    extended_copy_parse, extended_copy_exec, NULL, extended_copy_lock, T_LONG,
	    0x83, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, FF4, 0x00, 0x00),
	/*
	 * Token-based copy (copy/rod_token.c): LIST IDENTIFIER b6-9,
	 * PARAMETER LIST LENGTH b10-13; RECEIVE ROD TOKEN INFORMATION LIST
	 * IDENTIFIER b2-5, ALLOCATION LENGTH b10-13.
	 */
	ROW("POPULATE TOKEN", 0x83, COPY_SA_POPULATE_TOKEN, SCSI_SA_BYTE1, 16, OP_DATA_OUT | OP_MEDIUM_ACCESS,
	    SCSI_PR_READ, ALL_SBC_KINDS, rod_token_parse, populate_token_exec, NULL, populate_token_lock, T_FAST,
	    0x83, 0x10, 0x00, 0x00, 0x00, 0x00, FF4, FF4, 0x00, 0x00),
	ROW("WRITE USING TOKEN", 0x83, COPY_SA_WRITE_USING_TOKEN, SCSI_SA_BYTE1, 16,
	    OP_DATA_OUT | OP_MEDIUM_ACCESS | OP_WRITES_MEDIUM | OP_PIECE_BUFFER, SCSI_PR_WRITE, ALL_SBC_KINDS,
	    rod_token_parse, write_using_token_exec, NULL, write_using_token_lock, T_LONG,
	    0x83, 0x11, 0x00, 0x00, 0x00, 0x00, FF4, FF4, 0x00, 0x00),
	/* COPY OPERATION ABORT (copy/copy_abort.c): LIST IDENTIFIER b2-5; no lock, so it runs beside the copy. */
	ROW("COPY OPERATION ABORT", 0x83, COPY_SA_COPY_OPERATION_ABORT, SCSI_SA_BYTE1, 16, 0, SCSI_PR_ALLOWED,
	    ALL_SBC_KINDS, NULL, copy_operation_abort_exec, NULL, NULL, T_FAST,
	    0x83, 0x1c, FF4, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00),
	ROW("RECEIVE COPY STATUS(LID1)", 0x84, 0x00, SCSI_SA_BYTE1, 16, OP_DATA_IN, SCSI_PR_READ, ALL_SBC_KINDS,
	    receive_copy_results_parse, receive_copy_results_exec, NULL, NULL, T_FAST,
	    0x84, 0x00, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, FF4, 0x00, 0x00),
	ROW("RECEIVE COPY OPERATING PARAMETERS", 0x84, 0x03, SCSI_SA_BYTE1, 16, OP_DATA_IN, SCSI_PR_READ,
	    ALL_SBC_KINDS, receive_copy_results_parse, receive_copy_results_exec,
	    NULL, NULL, T_FAST,
	    0x84, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, FF4, 0x00, 0x00),
	ROW("RECEIVE COPY FAILURE DETAILS(LID1)", 0x84, 0x04, SCSI_SA_BYTE1, 16, OP_DATA_IN, SCSI_PR_READ, ALL_SBC_KINDS,
	    receive_copy_results_parse, receive_copy_results_exec, NULL, NULL, T_FAST,
	    0x84, 0x04, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, FF4, 0x00, 0x00),
	ROW("RECEIVE COPY STATUS(LID4)", 0x84, 0x05, SCSI_SA_BYTE1, 16, OP_DATA_IN, SCSI_PR_READ, ALL_SBC_KINDS,
	    receive_copy_results_parse, receive_copy_results_exec, NULL, NULL, T_FAST,
	    0x84, 0x05, FF4, 0x00, 0x00, 0x00, 0x00, FF4, 0x00, 0x00),
	ROW("RECEIVE ROD TOKEN INFORMATION", 0x84, 0x07, SCSI_SA_BYTE1, 16, OP_DATA_IN, SCSI_PR_READ,
	    ALL_SBC_KINDS, receive_copy_results_parse, receive_rod_token_information_exec, NULL, NULL, T_FAST,
	    0x84, 0x07, FF4, 0x00, 0x00, 0x00, 0x00, FF4, 0x00, 0x00),
	ROW("READ(16)", 0x88, 0, SCSI_SA_NONE, 16, OP_PROTECT_FIELD | RD | OP_MINIMAL | OP_DLD, SCSI_PR_READ,
	    ALL_SBC_KINDS, sbc_read_parse, sbc_read_exec, NULL, NULL, T_IO,
	    0x88, 0xff, FF8, FF4, 0xff, 0x00),
	ROW("COMPARE AND WRITE", 0x89, 0, SCSI_SA_NONE, 16, OP_PROTECT_FIELD | WR_ALONE, SCSI_PR_WRITE,
	    ALL_SBC_KINDS, sbc_compare_and_write_parse, sbc_compare_and_write_exec,
	    sbc_compare_and_write_enabled, NULL, T_IO,
	    0x89, 0xfa, FF8, 0x00, 0x00, 0x00, 0xff, 0x3f, 0x00),
	ROW("WRITE(16)", 0x8a, 0, SCSI_SA_NONE, 16, OP_PROTECT_FIELD | WR_BLOCKS | OP_MINIMAL | OP_DLD, SCSI_PR_WRITE,
	    ALL_SBC_KINDS, sbc_write_parse, sbc_write_exec, NULL, NULL, T_IO,
	    0x8a, 0xfb, FF8, FF4, 0xff, 0x00),
	ROW("ORWRITE(16)", 0x8b, 0, SCSI_SA_NONE, 16, OP_PROTECT_FIELD | WR_ALONE | OP_SHORT_DATA_OUT_OK, SCSI_PR_WRITE,
	    ALL_SBC_KINDS, sbc_orwrite_parse, sbc_orwrite_exec, NULL, NULL, T_IO,
	    0x8b, 0xfa, FF8, FF4, 0x3f, 0x00),
	ROW("WRITE AND VERIFY(16)", 0x8e, 0, SCSI_SA_NONE, 16, OP_PROTECT_FIELD | WR_BLOCKS, SCSI_PR_WRITE,
	    ALL_SBC_KINDS, sbc_write_and_verify_parse, sbc_write_and_verify_exec, NULL, NULL, T_IO,
	    0x8e, 0xf6, FF8, FF4, 0x3f, 0x00),
	ROW("VERIFY(16)", 0x8f, 0, SCSI_SA_NONE, 16, OP_PROTECT_FIELD | OP_DATA_OUT | OP_MEDIUM_ACCESS | OP_LBA_READ, SCSI_PR_READ,
	    ALL_SBC_KINDS, sbc_verify_parse, sbc_verify_exec, NULL, NULL, T_IO,
	    0x8f, 0xf6, FF8, FF4, 0x3f, 0x00),
	ROW("PRE-FETCH(16)", 0x90, 0, SCSI_SA_NONE, 16, OP_MEDIUM_ACCESS, SCSI_PR_READ,
	    ALL_SBC_KINDS, sbc_pre_fetch_parse, sbc_pre_fetch_exec, NULL, NULL, T_IO,
	    0x90, 0x02, FF8, FF4, 0x3f, 0x00),
	ROW("SYNCHRONIZE CACHE(16)", 0x91, 0, SCSI_SA_NONE, 16, OP_MEDIUM_ACCESS | OP_MINIMAL, SCSI_PR_WRITE,
	    ALL_SBC_KINDS, sbc_synchronize_cache_parse, sbc_synchronize_cache_exec, NULL, NULL, T_IO,
	    0x91, 0x02, FF8, FF4, 0x3f, 0x00),
	ROW("WRITE SAME(16)", 0x93, 0, SCSI_SA_NONE, 16, OP_PROTECT_FIELD | WR, SCSI_PR_WRITE,
	    ALL_SBC_KINDS, sbc_write_same_parse, sbc_write_same_exec, NULL, NULL, T_LONG,
	    0x93, 0xe9, FF8, FF4, 0x3f, 0x00),
	/*
	 * ZBC OUT (zbc_out.c): ZONE ID b2-9, ZONE COUNT b12-13 (ZBC-2: zbc-zd
	 * LUs only; RSOC hides it elsewhere), ALL b14 bit 0.  Zoned LUs only.
	 */
	ROW("CLOSE ZONE", 0x94, ZBC_SA_CLOSE_ZONE, SCSI_SA_BYTE1, 16, OP_MEDIUM_ACCESS, SCSI_PR_WRITE,
	    SCSI_LU_ZBC_HM | SCSI_LU_ZBC_HA, zbc_out_parse, zbc_out_exec, NULL, NULL, T_FAST,
	    0x94, ZBC_SA_CLOSE_ZONE, FF8, 0x00, 0x00, 0xff, 0xff, 0x01, 0x00),
	ROW("FINISH ZONE", 0x94, ZBC_SA_FINISH_ZONE, SCSI_SA_BYTE1, 16, OP_MEDIUM_ACCESS | OP_WRITES_MEDIUM,
	    SCSI_PR_WRITE, SCSI_LU_ZBC_HM | SCSI_LU_ZBC_HA, zbc_out_parse, zbc_out_exec, NULL, zbc_out_lock, T_IO,
	    0x94, ZBC_SA_FINISH_ZONE, FF8, 0x00, 0x00, 0xff, 0xff, 0x01, 0x00),
	ROW("OPEN ZONE", 0x94, ZBC_SA_OPEN_ZONE, SCSI_SA_BYTE1, 16, OP_MEDIUM_ACCESS, SCSI_PR_WRITE,
	    SCSI_LU_ZBC_HM | SCSI_LU_ZBC_HA, zbc_out_parse, zbc_out_exec, NULL, NULL, T_FAST,
	    0x94, ZBC_SA_OPEN_ZONE, FF8, 0x00, 0x00, 0xff, 0xff, 0x01, 0x00),
	ROW("RESET WRITE POINTER", 0x94, ZBC_SA_RESET_WRITE_POINTER, SCSI_SA_BYTE1, 16,
	    OP_MEDIUM_ACCESS | OP_WRITES_MEDIUM, SCSI_PR_WRITE, SCSI_LU_ZBC_HM | SCSI_LU_ZBC_HA,
	    zbc_out_parse, zbc_out_exec, NULL, zbc_out_lock, T_LONG,
	    0x94, ZBC_SA_RESET_WRITE_POINTER, FF8, 0x00, 0x00, 0xff, 0xff, 0x01, 0x00),
	/* ZBC IN / REPORT ZONES (zbc_in.c): b2-9 ZONE START LBA, b10-13 ALLOCATION LENGTH, b14 PARTIAL + REPORTING OPTIONS. */
	ROW("REPORT ZONES", 0x95, ZBC_SA_REPORT_ZONES, SCSI_SA_BYTE1, 16, OP_DATA_IN | OP_MEDIUM_ACCESS, SCSI_PR_READ,
	    SCSI_LU_ZBC_HM | SCSI_LU_ZBC_HA, zbc_report_zones_parse, zbc_report_zones_exec, NULL, NULL, T_IO,
	    0x95, ZBC_SA_REPORT_ZONES, FF8, FF4, 0xbf, 0x00),
	/*
	 * ZBC-2 zone domains and realms (zbc_domains.c), kind zbc-zd only:
	 * REPORT REALMS and REPORT ZONE DOMAINS take the REPORT ZONES layout;
	 * ZONE ACTIVATE(16) / ZONE QUERY(16) as libzbc encodes them: ALL b2
	 * bit 7, ZSRC b2 bit 6, ZONE DOMAIN ID b2 bits 5:0, ZONE ID b3-8,
	 * ALLOCATION LENGTH b9-12, NUMBER OF ZONES b13-14.
	 */
	ROW("REPORT REALMS", 0x95, ZBC_SA_REPORT_REALMS, SCSI_SA_BYTE1, 16, OP_DATA_IN | OP_MEDIUM_ACCESS, SCSI_PR_READ,
	    SCSI_LU_ZBC_HM, NULL, zbc_report_realms_exec, zbc_domains_enabled, NULL, T_FAST,
	    0x95, ZBC_SA_REPORT_REALMS, FF8, FF4, 0x3f, 0x00),
	ROW("REPORT ZONE DOMAINS", 0x95, ZBC_SA_REPORT_ZONE_DOMAINS, SCSI_SA_BYTE1, 16, OP_DATA_IN | OP_MEDIUM_ACCESS,
	    SCSI_PR_READ, SCSI_LU_ZBC_HM, NULL, zbc_report_zone_domains_exec, zbc_domains_enabled, NULL, T_FAST,
	    0x95, ZBC_SA_REPORT_ZONE_DOMAINS, FF8, FF4, 0x3f, 0x00),
	ROW("ZONE ACTIVATE(16)", 0x95, ZBC_SA_ZONE_ACTIVATE, SCSI_SA_BYTE1, 16,
	    OP_DATA_IN | OP_MEDIUM_ACCESS | OP_WRITES_MEDIUM | OP_QUIESCE, SCSI_PR_WRITE, SCSI_LU_ZBC_HM,
	    zbc_zone_activate_parse,
	    zbc_zone_activate_exec, zbc_domains_enabled, NULL, T_IO,
	    0x95, ZBC_SA_ZONE_ACTIVATE, 0xff, FF4, 0xff, 0xff, FF4, 0xff, 0xff, 0x00),
	ROW("ZONE QUERY(16)", 0x95, ZBC_SA_ZONE_QUERY, SCSI_SA_BYTE1, 16, OP_DATA_IN | OP_MEDIUM_ACCESS, SCSI_PR_READ,
	    SCSI_LU_ZBC_HM, zbc_zone_activate_parse, zbc_zone_activate_exec, zbc_domains_enabled, NULL, T_FAST,
	    0x95, ZBC_SA_ZONE_QUERY, 0xff, FF4, 0xff, 0xff, FF4, 0xff, 0xff, 0x00),
	/* WRITE ATOMIC(16) (sbc_write_atomic.c): ATOMIC BOUNDARY b10-11, TRANSFER LENGTH b12-13. */
	ROW("WRITE ATOMIC(16)", 0x9c, 0, SCSI_SA_NONE, 16, OP_PROTECT_FIELD | WR_ALONE, SCSI_PR_WRITE,
	    SCSI_LU_CONVENTIONAL, sbc_write_atomic_parse, sbc_write_atomic_exec, sbc_write_atomic_enabled, NULL, T_IO,
	    0x9c, 0xf8, FF8, 0xff, 0xff, 0xff, 0xff, 0x3f, 0x00),
	ROW("READ CAPACITY(16)", 0x9e, SCSI_SA_READ_CAPACITY_16, SCSI_SA_BYTE1, 16, OP_DATA_IN | OP_MINIMAL | ALUA_STANDBY,
	    SCSI_PR_ALLOWED, WITH_ADMIN, NULL, sbc_read_capacity_16_exec, NULL, NULL, T_FAST,
	    0x9e, SCSI_SA_READ_CAPACITY_16, FF8, FF4, 0x01, 0x00),
	ROW("GET LBA STATUS(16)", 0x9e, SCSI_SA_GET_LBA_STATUS, SCSI_SA_BYTE1, 16, OP_DATA_IN | OP_MEDIUM_ACCESS,
	    SCSI_PR_READ, ALL_SBC_KINDS, NULL, sbc_get_lba_status_exec, sbc_thin_provisioning_enabled, NULL, T_IO,
	    0x9e, SCSI_SA_GET_LBA_STATUS, FF8, FF4, 0x00, 0x00),
	/*
	 * WRITE SCATTERED(16) (sbc_write_scattered.c): WRPROTECT/DPO/FUA/DLD2
	 * b2, LBDOF b4-5, NUMBER OF LBA RANGE DESCRIPTORS b8-9, BUFFER TRANSFER
	 * LENGTH b10-13, DLD1/DLD0/GROUP NUMBER b14.
	 */
	ROW("WRITE SCATTERED(16)", 0x9f, 0x12, SCSI_SA_BYTE1, 16, OP_PROTECT_FIELD | WR | OP_DLD, SCSI_PR_WRITE,
	    SCSI_LU_CONVENTIONAL, sbc_write_scattered_parse, sbc_write_scattered_exec, sbc_write_scattered_enabled,
	    sbc_write_scattered_lock,
	    T_IO, 0x9f, 0x12, 0xf9, 0x00, 0xff, 0xff, 0x00, 0x00, 0xff, 0xff, FF4, 0xff, 0x00),
	ROW("REPORT LUNS", 0xa0, 0, SCSI_SA_NONE, 12, OP_DATA_IN | OP_HEAD_OF_QUEUE | INFO_CMD | OP_MINIMAL | ALUA_ANY, SCSI_PR_ALLOWED,
	    WITH_ADMIN, NULL, spc_report_luns_exec, NULL, NULL, T_FAST,
	    0xa0, 0x00, 0xff, 0x00, 0x00, 0x00, FF4, 0x00, 0x00),
	/* REPORT TARGET PORT GROUPS (spc_alua.c): PARAMETER DATA FORMAT b1, ALLOCATION LENGTH b6-9. */
	ROW("REPORT TARGET PORT GROUPS", 0xa3, SCSI_SA_REPORT_TARGET_PORT_GROUPS, SCSI_SA_BYTE1, 12,
	    OP_DATA_IN | ALUA_ANY, SCSI_PR_ALLOWED, WITH_ADMIN, NULL, spc_report_target_port_groups_exec,
	    spc_alua_enabled, NULL, T_FAST,
	    0xa3, 0xe0 | SCSI_SA_REPORT_TARGET_PORT_GROUPS, 0x00, 0x00, 0x00, 0x00, FF4, 0x00, 0x00),
	ROW("REPORT SUPPORTED OPERATION CODES", 0xa3, SCSI_SA_REPORT_SUPPORTED_OPERATION_CODES, SCSI_SA_BYTE1, 12,
	    OP_DATA_IN | OP_IN_PROGRESS_OK | OP_MINIMAL, SCSI_PR_ALLOWED,
	    WITH_ADMIN, NULL, spc_report_supported_operation_codes_exec, NULL, NULL, T_FAST,
	    0xa3, SCSI_SA_REPORT_SUPPORTED_OPERATION_CODES, 0x87, 0xff, 0xff, 0xff, FF4, 0x00, 0x00),
	ROW("REPORT SUPPORTED TASK MANAGEMENT FUNCTIONS", 0xa3, SCSI_SA_REPORT_SUPPORTED_TMF, SCSI_SA_BYTE1, 12,
	    OP_DATA_IN | OP_IN_PROGRESS_OK, SCSI_PR_ALLOWED,
	    WITH_ADMIN, NULL, spc_report_supported_tmf_exec, NULL, NULL, T_FAST,
	    0xa3, SCSI_SA_REPORT_SUPPORTED_TMF, 0x80, 0x00, 0x00, 0x00, FF4, 0x00, 0x00),
	ROW("REPORT PRIORITY", 0xa3, SCSI_SA_REPORT_PRIORITY, SCSI_SA_BYTE1, 12, OP_DATA_IN | OP_IN_PROGRESS_OK,
	    SCSI_PR_ALLOWED, ALL_SBC_KINDS, NULL, spc_report_priority_exec, NULL, NULL, T_FAST,
	    0xa3, SCSI_SA_REPORT_PRIORITY, 0xc0, 0x00, 0x00, 0x00, FF4, 0x00, 0x00),
	/* SET TARGET PORT GROUPS (spc_alua.c): PARAMETER LIST LENGTH b6-9. */
	ROW("SET TARGET PORT GROUPS", 0xa4, SCSI_SA_SET_TARGET_PORT_GROUPS, SCSI_SA_BYTE1, 12,
	    OP_DATA_OUT | OP_ALUA_STANDBY_OK | OP_ALUA_UNAVAILABLE_OK, SCSI_PR_CONFLICT, WITH_ADMIN,
	    spc_set_target_port_groups_parse, spc_set_target_port_groups_exec, spc_alua_explicit_enabled, NULL, T_FAST,
	    0xa4, SCSI_SA_SET_TARGET_PORT_GROUPS, 0x00, 0x00, 0x00, 0x00, FF4, 0x00, 0x00),
	ROW("SET PRIORITY", 0xa4, SCSI_SA_SET_PRIORITY, SCSI_SA_BYTE1, 12, OP_DATA_OUT, SCSI_PR_CONFLICT,
	    ALL_SBC_KINDS, spc_set_priority_parse, spc_set_priority_exec, NULL, NULL, T_FAST,
	    0xa4, SCSI_SA_SET_PRIORITY, 0xc0, 0x00, 0x00, 0x00, FF4, 0x00, 0x00),
	ROW("READ(12)", 0xa8, 0, SCSI_SA_NONE, 12, OP_PROTECT_FIELD | RD, SCSI_PR_READ,
	    ALL_SBC_KINDS, sbc_read_parse, sbc_read_exec, NULL, NULL, T_IO,
	    0xa8, 0xfe, FF4, FF4, 0x3f, 0x00),
	ROW("WRITE(12)", 0xaa, 0, SCSI_SA_NONE, 12, OP_PROTECT_FIELD | WR_BLOCKS, SCSI_PR_WRITE,
	    ALL_SBC_KINDS, sbc_write_parse, sbc_write_exec, NULL, NULL, T_IO,
	    0xaa, 0xfa, FF4, FF4, 0x3f, 0x00),
	ROW("WRITE AND VERIFY(12)", 0xae, 0, SCSI_SA_NONE, 12, OP_PROTECT_FIELD | WR_BLOCKS, SCSI_PR_WRITE,
	    ALL_SBC_KINDS, sbc_write_and_verify_parse, sbc_write_and_verify_exec, NULL, NULL, T_IO,
	    0xae, 0xf6, FF4, FF4, 0x3f, 0x00),
	ROW("VERIFY(12)", 0xaf, 0, SCSI_SA_NONE, 12, OP_PROTECT_FIELD | OP_DATA_OUT | OP_MEDIUM_ACCESS | OP_LBA_READ, SCSI_PR_READ,
	    ALL_SBC_KINDS, sbc_verify_parse, sbc_verify_exec, NULL, NULL, T_IO,
	    0xaf, 0xf6, FF4, FF4, 0x3f, 0x00),
	ROW("READ DEFECT DATA(12)", 0xb7, 0, SCSI_SA_NONE, 12, OP_DATA_IN, SCSI_PR_READ,
	    ALL_SBC_KINDS, NULL, sbc_read_defect_data_exec, NULL, NULL, T_FAST,
	    0xb7, 0x1f, 0x00, 0x00, 0x00, 0x00, FF4, 0x00, 0x00),
};

const size_t scsi_op_table_len = sizeof(scsi_op_table) / sizeof(scsi_op_table[0]);

bool scsi_op_supported(const struct scsi_op *op, const struct scsi_lu *lu)
{
	if (!lu)
		return (op->flags & OP_NO_LU_OK) != 0;
	if (!(op->lu_kinds & lu->kind) || scsi_lu_profile_hides_op(lu, op))
		return false;
	return !op->enabled || op->enabled(lu);
}

const struct scsi_op *scsi_op_lookup(const struct scsi_lu *lu, const uint8_t *cdb,
				     struct scsi_sense_info *sense)
{
	const struct scsi_op *first = NULL;
	size_t lo = 0, hi = scsi_op_table_len;

	/* The rows are sorted by opcode: the first row of cdb[0] by bisection, its service actions after it. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (scsi_op_table[mid].opcode < cdb[0])
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < scsi_op_table_len && scsi_op_table[i].opcode == cdb[0]; i++) {
		const struct scsi_op *op = &scsi_op_table[i];
		uint16_t sa;

		if (!scsi_op_supported(op, lu))
			continue;
		if (!first)
			first = op;
		switch (op->sa_location) {
		case SCSI_SA_NONE:
			return op;
		case SCSI_SA_BYTE1:
			sa = cdb[1] & 0x1f;
			break;
		case SCSI_SA_BYTES8_9:
			sa = get_be16(cdb + 8);
			break;
		default:
			continue;
		}
		if (sa == op->service_action)
			return op;
	}
	if (!first) {
		*sense = sense_invalid_command_operation_code();
		return NULL;
	}
	/*
	 * The operation code is supported but not this service action: INVALID
	 * FIELD IN CDB on the SERVICE ACTION field, as Linux scsi_debug answers.
	 */
	if (first->sa_location == SCSI_SA_BYTE1)
		*sense = sense_invalid_field_in_cdb(1, 4);
	else
		*sense = sense_invalid_field_in_cdb(8, 7);
	return NULL;
}

/*
 * Where the DURATION LIMIT DESCRIPTOR field is (SBC-4 READ(16), WRITE(16),
 * WRITE SCATTERED(16): DLD2 in byte 1 (byte 2 for WRITE SCATTERED) bit 0,
 * DLD1 and DLD0 in byte 14 bits 7:6; READ(32), WRITE(32) since sbc4r19:
 * byte 11 bits 2:0; Linux sd.c sd_setup_rw16_cmnd / sd_setup_rw32_cmnd).
 */
static uint8_t dld_bits(const struct scsi_op *op, unsigned byte)
{
	if (!(op->flags & OP_DLD))
		return 0;
	if (op->cdb_len == 32)
		return byte == 11 ? 0x07 : 0;
	if (byte == 14)
		return 0xc0;
	return byte == (op->sa_location == SCSI_SA_BYTE1 ? 2u : 1u) ? 0x01 : 0;
}

uint8_t scsi_op_usage(const struct scsi_op *op, const struct scsi_lu *lu, unsigned byte)
{
	uint8_t usage = op->usage[byte];

	if ((op->flags & OP_DLD) && (!lu || lu->params.cdl_pages == SCSI_CDL_NONE))
		usage &= (uint8_t)~dld_bits(op, byte);
	return usage;
}

uint8_t scsi_op_dld(const struct scsi_op *op, const uint8_t *cdb)
{
	if (!(op->flags & OP_DLD))
		return 0;
	if (op->cdb_len == 32)
		return cdb[11] & 0x07;
	return (uint8_t)(((cdb[op->sa_location == SCSI_SA_BYTE1 ? 2 : 1] & 0x01) << 2) | (cdb[14] >> 6));
}

uint8_t scsi_op_cdlp(const struct scsi_op *op, const struct scsi_lu *lu, bool *rwcdlp)
{
	*rwcdlp = false;
	if (!lu || lu->params.cdl_pages == SCSI_CDL_NONE || !(op->flags & OP_DLD))
		return 0;
	*rwcdlp = lu->params.cdl_pages == SCSI_CDL_T2;
	return (op->flags & OP_LBA_READ) ? 0x1 : 0x2;
}
