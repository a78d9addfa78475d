# shellcheck shell=bash
# Host side of the "xcopy" check (guest: tests/kernel/guest/xcopy.sh): 3PC in
# the LU's INQUIRY data, sg_xcopy's and ddpt's copies (inside the LU and to
# another LU) read back through sd, the copy past
# the capacity refused, and EXTENDED COPY (83h) in the daemon's debug log.

host_xcopy() {
	expect "INQUIRY 3PC (byte 5 bit 3): the LU has a copy manager" 8 $(($(hex_u8 "$(res xcopy.inquiry)" 5) & 8))
	expect "sg_xcopy 2048 blocks LBA 0 -> 16384 (EXTENDED COPY LID1 through sg)" ok "$(res xcopy.sg_xcopy)"
	expect "the copied 1 MiB read back through sd" ok "$(res xcopy.readback)"
	# RECEIVE ROD TOKEN INFORMATION: AVAILABLE DATA 546, for POPULATE TOKEN (10h), status 01h, no sense,
	# TRANSFER COUNT 2048 blocks (units F1h), ROD TOKEN DESCRIPTORS LENGTH 514, ROD TYPE 00800001h.
	expect "POPULATE TOKEN of 2048 blocks, then RECEIVE ROD TOKEN INFORMATION through sg (sg_raw)" \
		000002221001000000000000000000f100000000000008000000000000000000000002020000 \
		"$(res xcopy.rod_rrti | cut -c1-76)"
	expect "... the token's ROD TYPE: point in time, change vulnerable (00800001h)" 00800001 \
		"$(res xcopy.rod_rrti | cut -c77-84)"
	expect "WRITE USING TOKEN of it to LBA 24576 through sg" ok "$(res xcopy.rod_wut)"
	expect "the token-based copy read back through sd" ok "$(res xcopy.rod_readback)"
	expect "ddpt --xcopy 2048 blocks LBA 0 -> 32768 (EXTENDED COPY LID1 through sg)" ok "$(res xcopy.ddpt_xcopy)"
	expect "ddpt's copy read back through sd" ok "$(res xcopy.ddpt_readback)"
	expect "sg_xcopy --on_src 2048 blocks to another LU, LBA 204800 (EXTENDED COPY sent to the source)" ok \
		"$(res xcopy.lus_sg_xcopy)"
	expect "... read back through the other LU's sd" ok "$(res xcopy.lus_readback)"
	expect "ddpt --xcopy oflag=xcopy 2048 blocks to another LU, LBA 212992 (sent to the destination)" ok \
		"$(res xcopy.lus_ddpt)"
	expect "... read back through the other LU's sd" ok "$(res xcopy.lus_ddpt_readback)"
	expect "WRITE USING TOKEN on the other LU of this LU's token, LBA 221184 (sg_raw)" ok "$(res xcopy.lus_rod_wut)"
	expect "... read back through the other LU's sd" ok "$(res xcopy.lus_rod_readback)"
	expect "sg_xcopy past the capacity" refused "$(res xcopy.past_capacity)"
	# When the run logs every command (run.sh's debug log level).
	if [ -n "${DAEMON_LOG:-}" ] && grep -q 'CDB\[0\]' "$DAEMON_LOG"; then
		expect "sbcemud's debug log shows EXTENDED COPY (CDB[0] 0x83)" yes \
			"$(grep -q 'CDB\[0\] 0x83' "$DAEMON_LOG" && echo yes || echo no)"
	fi
}
