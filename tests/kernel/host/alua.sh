# shellcheck shell=bash
# Host side of the "alua" check (guest: tests/kernel/guest/alua.sh, suite:
# tests/kernel/suites/faults.sh): what Linux's scsi_dh_alua made of the LU's
# target port group before and after the host put it in standby, and after
# the guest activated the path with SET TARGET PORT GROUPS.

host_alua() {
	expect "scsi_dh_alua attached to the LU (dh_state)" alua "$(res alua.dh_state)"
	expect "the kernel's access_state at the start" active/optimized "$(res alua.access_state_before)"
	expect "a read at the start" 0 "$(res alua.read_before_rc)"
	expect "sg_rtpg shows the group active/optimized" 1 "$(res alua.rtpg_active_optimized)"
	expect "after sbcemuctl lu alua standby: the kernel takes the port for standby" 1 "$(res alua.standby_seen)"
	expect "the kernel's access_state then" standby "$(res alua.access_state_standby)"
	expect "reads fail through a standby port" 1 "$(res alua.standby_read_fails)"
	expect "echo activate > dh_state" 0 "$(res alua.activate_rc)"
	expect "after the activation (SET TARGET PORT GROUPS): active/optimized" 1 "$(res alua.active_again)"
	expect "a read after the activation" 0 "$(res alua.read_after_rc)"
	expect "sg_rtpg: status code 01h, the state was altered by SET TARGET PORT GROUPS" 1 "$(res alua.rtpg_altered_by_stpg)"
	if [ -f "${CTL_LOG:-}" ]; then
		expect "the guest's ALUA request, as run by the host (rc=exit status)" "rc=0 lu alua 3 standby" \
			"$(grep '^rc=[0-9]* lu alua ' "$CTL_LOG" | paste -sd '|')"
	else
		fail "no log of the guest's requests"
	fi
}
