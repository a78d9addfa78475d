# shellcheck shell=sh
# Guest check "alua": asymmetric logical unit access (docs/alua.md) as
# Linux's scsi_dh_alua device handler meets it, on an LU with alua = both:
#  - the handler attaches (INQUIRY TPGS, the target port group designator of
#    the Device Identification VPD page) and reads the group active/optimized
#    (REPORT TARGET PORT GROUPS); sg_rtpg shows the same;
#  - the host moves the group to standby (sbcemuctl lu alua): the next read
#    gets ASYMMETRIC ACCESS STATE CHANGED (06/2A/06), the handler reads the
#    groups again and takes the port for standby, and reads fail;
#  - activating the path as dm-multipath's pg_init does (dh_state "activate")
#    makes the handler send SET TARGET PORT GROUPS for active/optimized:
#    reads work again, and REPORT TARGET PORT GROUPS says the state was
#    altered by SET TARGET PORT GROUPS (STATUS CODE 01h).
# The host (tests/kernel/host/alua.sh) checks these and the requests it ran.

l=${SBCE_ALUA_LUN:-3}
dev=$(sbce_lun_var DEV "$l")
blk=$(sbce_lun_var BLOCK "$l")
[ -n "$dev" ] || sbce_fail "LUN $l has no disk"
sd=/sys/block/$blk/device

reads() { dd if="$dev" of=/dev/null bs=512 count=1 iflag=direct 2>/dev/null; }
read_fails() { ! reads; }
state_is() { [ "$(cat "$sd/access_state" 2>/dev/null)" = "$1" ]; }
to_standby() {
	reads
	state_is standby
}
rtpg() {
	sg_rtpg -d "$dev" >/tmp/rtpg.out 2>&1 || true
	while IFS= read -r line; do sbce_info "sg_rtpg: $line"; done </tmp/rtpg.out
}

sbce_file_value dh_state "$sd/dh_state"
sbce_file_value access_state_before "$sd/access_state"
rc=0
reads || rc=$?
sbce_value read_before_rc $rc
rtpg
sbce_value rtpg_active_optimized "$(grep -c 'active/optimized' /tmp/rtpg.out)"

# ---- the host puts the group in standby ----
dmesg -c >/dev/null
sbce_host_ctl "lu alua $l standby"
sbce_value standby_seen "$(sbce_yes_no sbce_wait_for 60 to_standby)"
sbce_file_value access_state_standby "$sd/access_state"
sbce_value standby_read_fails "$(sbce_yes_no read_fails)"
dmesg | grep -iE 'alua|asymmetric' | head -n 6 | while IFS= read -r line; do sbce_info "dmesg: $line"; done

# ---- the path activated: SET TARGET PORT GROUPS from the kernel ----
dmesg -c >/dev/null
rc=0
echo activate >"$sd/dh_state" || rc=1
sbce_value activate_rc $rc
sbce_value active_again "$(sbce_yes_no sbce_wait_for 60 state_is active/optimized)"
rc=0
reads || rc=$?
sbce_value read_after_rc $rc
rtpg
sbce_value rtpg_altered_by_stpg "$(grep -c 'status code : 0x01' /tmp/rtpg.out)"
dmesg | grep -iE 'alua|asymmetric' | head -n 6 | while IFS= read -r line; do sbce_info "dmesg: $line"; done
