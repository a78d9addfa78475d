# shellcheck shell=bash
# Host side of the "faults" check (guest: tests/kernel/guest/faults.sh,
# rules: tests/kernel/suites/faults.sh): the medium error reached the
# application as EIO with the LBA and the sense in the kernel log, a write
# repaired it; the held READ timed out, the error handler sent ABORT TASK
# (the daemon's debug log shows the Task Management Function Request) and the
# retry read the block.

host_faults() {
	local bad secs
	bad=$(res faults.medium_lba)
	# dd exits 1 when the read fails with EIO.
	expect "READ of medium-error LBA $bad: dd exit status (EIO)" 1 "$(res faults.medium_read_rc)"
	[ "$(res faults.medium_dmesg_sector)" -ge 1 ] 2>/dev/null
	expect_true "the kernel logs 'critical medium error ... sector $bad'"
	[ "$(res faults.medium_dmesg_sense)" -ge 1 ] 2>/dev/null
	expect_true "sd logs 'Sense Key : Medium Error' (03h)"
	[ "$(res faults.medium_dmesg_asc)" -ge 1 ] 2>/dev/null
	expect_true "sd logs 'Unrecovered read error' (11/00)"
	expect "writing the 8 bad blocks" 0 "$(res faults.repair_write_rc)"
	expect "reading them after the write (repaired by the write)" 0 "$(res faults.repaired_read_rc)"
	expect "READ of held LBA $(res faults.hold_lba): dd succeeds after the abort and retry" 0 \
		"$(res faults.hold_read_rc)"
	secs=$(res faults.hold_read_seconds)
	[ "${secs:-0}" -ge 4 ] 2>/dev/null
	expect_true "the held READ took the 5 s command timeout (${secs} s)"
	timeouts=$(res faults.hold_timeouts)
	aborts=$(res faults.hold_dmesg_abort)
	[ "$timeouts" -ge 1 ] 2>/dev/null
	expect_true "the device's iotmo_cnt counted the timeout ($timeouts)"
	[ "$aborts" -ge 1 ] 2>/dev/null
	expect_true "the kernel logs the error handler's abort ($aborts lines)"
	if [ -n "${DAEMON_LOG:-}" ]; then
		grep -q 'Task Management Function Request' "$DAEMON_LOG"
		expect_true "the daemon received a Task Management Function Request (ABORT TASK)"
		grep -q 'fault rule 2 (hold) added' "$DAEMON_LOG"
		expect_true "the hold rule was added through the control socket"
	fi
}
