# shellcheck shell=sh
# Guest check "runtime": the device changed under a running kernel by the
# host's sbcemuctl, asked for with sbce_host_ctl (tests/kernel/suites/faults.sh):
#  - LUN 2 added: the next command gets REPORTED LUNS DATA HAS CHANGED
#    (06/3F/0E, SPC-4), the kernel logs it, and the rescan udev would run on
#    that event brings the new disk, readable and writable;
#  - LUN 0 grown from 64 MiB to 96 MiB: CAPACITY DATA HAS CHANGED (06/2A/09)
#    logged, and a rescan of the device shows the new size;
#  - the card-reader slot (LUN 1): pulling its card while the guest holds the
#    disk open (sd sent PREVENT ALLOW MEDIUM REMOVAL) is refused; once closed
#    it is pulled: the TEST UNIT READY sd sends on the next open gets NOT
#    READY, MEDIUM NOT PRESENT (02/3A/00), so the open fails with ENOMEDIUM
#    and the size is 0 (sd does not log that sense); a card inserted reads
#    again (NOT READY TO READY CHANGE, 06/28/00).
# The host (tests/kernel/host/runtime.sh) checks these and what it ran.

l0=${SBCE_RUNTIME_LUN:-0}
lc=${SBCE_RUNTIME_CARD_LUN:-1}
la=${SBCE_RUNTIME_ADD_LUN:-2}
dev=$(sbce_lun_var DEV "$l0")
blk0=$(sbce_lun_var BLOCK "$l0")
h=$(sbce_lun_var HCTL "$l0")
card=$(sbce_lun_var DEV "$lc")
cblk=$(sbce_lun_var BLOCK "$lc")
# (sbce_disk_of sets b: the names here are others)
[ -n "$dev" ] || sbce_fail "LUN $l0 has no disk"
[ -n "$card" ] || sbce_fail "LUN $lc (the card-reader slot) has no disk"

# poll SECONDS CMD...: runs CMD every half second, after a read of a block of
# LUN 0 (a command that can carry a unit attention), until it succeeds.
poll() {
	_n=$(($1 * 2))
	shift
	while [ "$_n" -gt 0 ]; do
		dd if="$dev" of=/dev/null bs=512 count=1 iflag=direct 2>/dev/null || true
		"$@" && return 0
		sleep 0.5
		_n=$((_n - 1))
	done
	return 1
}
logged() { dmesg | grep -q "$1"; }
has_disk() { sbce_disk_of "$1" >/dev/null; }
card_fails() { ! dd if="$card" of=/dev/null bs=512 count=1 iflag=direct 2>/dev/null; }
card_reads() { dd if="$card" of=/dev/null bs=512 count=1 iflag=direct 2>/dev/null; }

# ---- a LUN added ----
dmesg -c >/dev/null
sbce_host_ctl "lu add $la kind=conventional;size=32M;path=lun$la-runtime.img"
sbce_value lun_change_logged "$(sbce_yes_no poll 60 logged 'LUN assignments on this target have changed')"
dmesg | grep -i 'LUN assignments' | head -n 2 | while IFS= read -r line; do sbce_info "dmesg: $line"; done
echo "- - -" >"/sys/class/scsi_host/host${h%%:*}/scan"
added=${h%:*}:$la
if poll 30 has_disk "$added"; then
	ab=$(sbce_disk_of "$added")
	sbce_value added_sectors "$(cat "/sys/block/$ab/size")"
	rc=0
	{ dd if=/dev/urandom of=/tmp/added.in bs=4096 count=4 2>/dev/null &&
		dd if=/tmp/added.in of="/dev/$ab" bs=4096 seek=100 oflag=direct conv=notrunc 2>/dev/null &&
		dd if="/dev/$ab" of=/tmp/added.out bs=4096 skip=100 count=4 iflag=direct 2>/dev/null &&
		cmp -s /tmp/added.in /tmp/added.out; } || rc=$?
	sbce_value added_io_rc $rc
else
	sbce_value added_sectors none
fi

# ---- LUN 0 grown ----
dmesg -c >/dev/null
sbce_value size_before "$(cat "/sys/block/$blk0/size")"
sbce_host_ctl "lu resize $l0 96M"
sbce_value capacity_change_logged "$(sbce_yes_no poll 60 logged 'Capacity data has changed')"
echo 1 >"/sys/block/$blk0/device/rescan"
sbce_value size_after "$(cat "/sys/block/$blk0/size")"
rc=0
dd if="$dev" of=/dev/null bs=4096 skip=$((90 * 256)) count=1 iflag=direct 2>/dev/null || rc=$?
sbce_value read_past_old_end_rc $rc
dmesg | grep -iE 'capacity' | head -n 3 | while IFS= read -r line; do sbce_info "dmesg: $line"; done

# ---- the card pulled and inserted ----
dmesg -c >/dev/null
sbce_value card_sectors_before "$(cat "/sys/block/$cblk/size")"
exec 4<"$card"
sbce_host_ctl "lu state $lc no-medium"
sleep 3
rc=0
dd if="$card" of=/dev/null bs=512 count=1 iflag=direct 2>/dev/null || rc=$?
sbce_value prevented_read_rc $rc
exec 4<&-
sleep 1
sbce_host_ctl "lu state $lc no-medium"
# CTL gets no answer: give the host time to run it before anything opens the
# card again (each open sends PREVENT, and a pull while it holds is refused).
sleep 3
sbce_value pulled_read_fails "$(sbce_yes_no poll 30 card_fails)"
rc=0
dd if="$card" of=/dev/null bs=512 count=1 iflag=direct 2>/tmp/card.err || rc=$?
sbce_value pulled_open_rc $rc
sbce_value pulled_error "$(tr '\n' ' ' </tmp/card.err)"
sbce_value pulled_sectors "$(cat "/sys/block/$cblk/size")"
sbce_host_ctl "lu state $lc ready"
sbce_value inserted_read_ok "$(sbce_yes_no poll 30 card_reads)"
sbce_value inserted_sectors "$(cat "/sys/block/$cblk/size")"
dmesg | grep -iE 'medium|not ready|sense' | head -n 6 | while IFS= read -r line; do sbce_info "dmesg: $line"; done
