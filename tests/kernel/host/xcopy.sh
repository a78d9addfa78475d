# shellcheck shell=bash
# Host side of the "xcopy" check (guest: tests/kernel/guest/xcopy.sh): 3PC in
# the LU's INQUIRY data, sg_xcopy's copy read back through sd, the copy past
# the capacity refused, and EXTENDED COPY (83h) in the daemon's debug log.

host_xcopy() {
	expect "INQUIRY 3PC (byte 5 bit 3): the LU has a copy manager" 8 $(($(hex_u8 "$(res xcopy.inquiry)" 5) & 8))
	expect "sg_xcopy 2048 blocks LBA 0 -> 16384 (EXTENDED COPY LID1 through sg)" ok "$(res xcopy.sg_xcopy)"
	expect "the copied 1 MiB read back through sd" ok "$(res xcopy.readback)"
	expect "ddpt --odx 2048 blocks LBA 0 -> 24576 (POPULATE TOKEN, WRITE USING TOKEN through sg)" ok \
		"$(res xcopy.ddpt_odx)"
	expect "the ODX copy read back through sd" ok "$(res xcopy.odx_readback)"
	expect "sg_xcopy past the capacity" refused "$(res xcopy.past_capacity)"
	# When the run logs every command (run.sh's debug log level).
	if [ -n "${DAEMON_LOG:-}" ] && grep -q 'CDB\[0\]' "$DAEMON_LOG"; then
		expect "sbcemud's debug log shows EXTENDED COPY (CDB[0] 0x83)" yes \
			"$(grep -q 'CDB\[0\] 0x83' "$DAEMON_LOG" && echo yes || echo no)"
	fi
}
