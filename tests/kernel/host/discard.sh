# shellcheck shell=bash
# Host side of the "discard" check (guest: tests/kernel/guest/discard.sh).
# The guest wrote regions A and B and discarded A.  Here, with the daemon
# stopped: sd chose UNMAP for a thin LU; the daemon received UNMAP commands
# (its debug log); region A reads as zeros in the backing file and its space
# was given back (st_blocks); region B holds exactly the guest's data.

host_discard() {
	local l backing mib a b sum rc16 lbprz alloc mode unmaps
	l=$(res discard.lun)
	backing=$(backing_file "$l")
	[ -f "$backing" ] || { fail "backing file of LUN $l not found ($backing)"; return; }
	mib=$(res discard.region_mib)
	a=$(res discard.a_offset_mib)
	b=$(res discard.b_offset_mib)
	mode=$(res discard.provisioning_mode)
	rc16=$(res discard.raw_rc16)
	expect "sd provisioning_mode of the thin LUN $l" unmap "$mode"
	expect "region B read back in the guest after discarding A" intact "$(res discard.b_after)"
	lbprz=$((($(hex_u8 "$rc16" 14) >> 6) & 1))
	# SBC-4 4.7.4.5: with LBPRZ set, an unmapped block reads as zeros.
	[ "$lbprz" = 1 ] && expect "region A read in the guest after discard (LBPRZ=1)" zeros "$(res discard.a_after)"
	sum=$(dd if="$backing" bs=1M skip="$b" count="$mib" status=none | sha256sum | cut -d' ' -f1)
	expect "region B in the backing file" "$(res discard.sha256_data)" "$sum"
	cmp -s -n $((mib * 1048576)) <(dd if="$backing" bs=1M skip="$a" count="$mib" status=none) /dev/zero
	expect_true "region A in the backing file is not all zeros after the discard"
	# Nothing else writes this LU: B's data plus a little metadata may stay allocated.
	alloc=$(allocated_bytes "$backing")
	[ "$alloc" -lt $(((mib + mib / 2) * 1048576)) ]
	expect_true "backing file still holds $alloc bytes: the discard did not deallocate region A (${mib} MiB)"
	if [ -n "${DAEMON_LOG:-}" ] && grep -q 'CDB\[0\]' "$DAEMON_LOG"; then
		unmaps=$(grep -c 'CDB\[0\] 0x42' "$DAEMON_LOG")
		[ "$unmaps" -gt 0 ]
		expect_true "the daemon's debug log shows no UNMAP (42h) command"
	fi
}
