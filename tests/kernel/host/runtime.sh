# shellcheck shell=bash
# Host side of the "runtime" check (guest: tests/kernel/guest/runtime.sh,
# suite: tests/kernel/suites/faults.sh): what the guest saw of a LUN added, a
# LUN grown and a card pulled and inserted while it ran, and that the host
# ran exactly the sbcemuctl commands it asked for (CTL_LOG, written by
# tests/kernel/run.sh guest_requests) with the outcome each should have.

host_runtime() {
	expect "the kernel logs 'LUN assignments on this target have changed' (06/3F/0E)" 1 \
		"$(res runtime.lun_change_logged)"
	expect "after a rescan the added LUN is a 32 MiB disk (512-byte sectors)" 65536 "$(res runtime.added_sectors)"
	expect "writing and reading back the added LUN" 0 "$(res runtime.added_io_rc)"
	expect "the kernel logs 'Capacity data has changed' (06/2A/09)" 1 "$(res runtime.capacity_change_logged)"
	expect "LUN 0 before the resize (sectors)" 131072 "$(res runtime.size_before)"
	expect "LUN 0 after the resize and a rescan (sectors)" 196608 "$(res runtime.size_after)"
	expect "reading LUN 0 past its old end" 0 "$(res runtime.read_past_old_end_rc)"
	expect "the card slot before (sectors)" 32768 "$(res runtime.card_sectors_before)"
	expect "the card still reads while the guest holds it open (the pull was refused)" 0 \
		"$(res runtime.prevented_read_rc)"
	expect "after the pull: reads of the card fail" 1 "$(res runtime.pulled_read_fails)"
	expect "after the pull: dd exit status" 1 "$(res runtime.pulled_open_rc)"
	pulled_error=$(res runtime.pulled_error)
	[[ "$pulled_error" == *"No medium found"* ]]
	expect_true "after the pull: the open fails with ENOMEDIUM ('$pulled_error')"
	expect "after the pull: the card slot's size (sectors)" 0 "$(res runtime.pulled_sectors)"
	expect "after the insert: the card reads again" 1 "$(res runtime.inserted_read_ok)"
	expect "after the insert: the card slot's size (sectors)" 32768 "$(res runtime.inserted_sectors)"
	if [ -f "${CTL_LOG:-}" ]; then
		expect "the guest's requests, as run by the host (rc=exit status)" \
			"rc=0 lu add 2 kind=conventional;size=32M;path=lun2-runtime.img|rc=0 lu resize 0 96M|rc=1 lu state 1 no-medium|rc=0 lu state 1 no-medium|rc=0 lu state 1 ready" \
			"$(grep -E '^rc=[0-9]* lu (add|resize|state) ' "$CTL_LOG" | paste -sd '|')"
	else
		fail "no log of the guest's requests"
	fi
}
