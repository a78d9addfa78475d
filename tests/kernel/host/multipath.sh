# shellcheck shell=bash
# Host side of the "multipath" check (guest: tests/kernel/guest/multipath.sh,
# suite: tests/kernel/suites/multipath.sh): both paths under Linux's ALUA
# handler in the states the nodes give them, the same target port groups
# through both, persistent reservations made through the standby path and
# seen through the active one, a dm-multipath device that kept every acknowledged write
# across the kill of the active node, and the killed node back in standby.

host_multipath() {
	local secs
	expect "the LU has the same identifier through both nodes (wwid)" 1 "$(res multipath.same_wwid)"
	expect "scsi_dh_alua attached to node A's path" alua "$(res multipath.dh_state_a)"
	expect "scsi_dh_alua attached to node B's path" alua "$(res multipath.dh_state_b)"
	expect "node A's path: access_state" active/optimized "$(res multipath.access_state_a)"
	expect "node B's path: access_state" standby "$(res multipath.access_state_b)"
	expect "sg_rtpg through node A: group 1 active/optimized, group 2 standby" "1:active/optimized 2:standby" \
		"$(res multipath.groups_a)"
	expect "sg_rtpg through node B: the same" "1:active/optimized 2:standby" "$(res multipath.groups_b)"
	expect "sg_persist --register 0x5bce through node B's standby path (node A runs it) -> exit 0" 0 \
		"$(res multipath.pr_register_b)"
	expect "sg_persist --read-keys through node A: the key registered through B" 0x5bce "$(res multipath.pr_keys_a)"
	expect "sg_persist --reserve Write Exclusive through node B -> exit 0" 0 "$(res multipath.pr_reserve_b)"
	expect "sg_persist --read-reservation through node A: that key and type" "Key=0x5bce Write Exclusive" \
		"$(res multipath.pr_reservation_a)"
	expect "sg_persist --release through node B -> exit 0" 0 "$(res multipath.pr_release_b)"
	expect "sg_persist unregistering through node B -> exit 0" 0 "$(res multipath.pr_unregister_b)"
	expect "sg_persist --read-keys through node A afterwards: none" none "$(res multipath.pr_keys_a_after)"
	expect "dmsetup create of the map over both paths" 0 "$(res multipath.create_rc)"
	expect "the writer through the map ended without an error" 0 "$(res multipath.writer_rc)"
	expect "every block written and acknowledged" 512 "$(res multipath.acked)"
	expect "reading them back through the map after the failover" 0 "$(res multipath.readback_rc)"
	expect "every acknowledged block reads back as written" 0 \
		"$(res multipath.readback_mismatches)"
	expect "the map's paths after it: node A's failed, node B's active" "F A" "$(res multipath.paths_after)"
	expect "node B's path: access_state after the failover" active/optimized "$(res multipath.access_state_b_after)"
	expect "sg_rtpg through node B after it: group 1 offline (node A is dead), group 2 active/optimized" \
		"1:offline 2:active/optimized" "$(res multipath.groups_b_after)"
	secs=$(res multipath.longest_write_seconds)
	# The session's 5 s replacement timeout and the takeover (within the 10 s watch timeout) overlap.
	[ "${secs:-0}" -ge 2 ] 2>/dev/null && [ "${secs:-999}" -le 90 ] 2>/dev/null
	expect_true "one write waited for the failover, 2 to 90 s (${secs} s)"
	expect "the guest logged in to the restarted node A" 1 "$(res multipath.relogin_a)"
	expect "the restarted node A's path: access_state" standby "$(res multipath.access_state_a_back)"
	expect "sg_rtpg through the restarted node A: group 1 standby, group 2 active/optimized" \
		"1:standby 2:active/optimized" "$(res multipath.groups_a_back)"
	if [ -f "${CTL_LOG:-}" ]; then
		expect "the guest's requests, as run by the host (rc=exit status)" "rc=0 kill a|rc=0 start a" \
			"$(grep '^rc=' "$CTL_LOG" | paste -sd '|')"
	else
		fail "no log of the guest's requests"
	fi
}
