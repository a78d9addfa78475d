# shellcheck shell=bash
# Host side of the "atomic" check (guest: tests/kernel/guest/atomic.sh): the
# queue's atomic write limits against what Linux's sd_config_atomic derives
# from the configured Block Limits VPD atomic fields (SBC-4 6.6.4), the
# RWF_ATOMIC writes' outcomes and data, and WRITE ATOMIC(16) (9Ch) in the
# daemon's debug log.  Kernels before 6.10 have no atomic writes at all.

# pow2_floor N: the largest power of two <= N (0 for 0).
pow2_floor() {
	local n=$1 p=1
	[ "$n" -gt 0 ] || { echo 0; return; }
	while [ $((p * 2)) -le "$n" ]; do p=$((p * 2)); done
	echo "$p"
}

host_atomic() {
	local l kernel bs lbppbe b0 max gran align mawb unit_min unit_max max_bytes backing want got n
	l=$(res atomic.lun)
	kernel=$(res atomic.kernel)
	bs=$(cfg_lun "$l" logical_block_size)
	lbppbe=$(cfg_lun "$l" lbppbe)
	b0=$(res atomic.raw_b0)
	max=$(hex_be32 "$b0" 44)
	align=$(hex_be32 "$b0" 48)
	gran=$(hex_be32 "$b0" 52)
	mawb=$(hex_be32 "$b0" 56)
	expect "B0h MAXIMUM ATOMIC TRANSFER LENGTH" "$(cfg_lun "$l" max_atomic_transfer_length)" "$max"
	expect "B0h ATOMIC ALIGNMENT" "$(cfg_lun "$l" atomic_alignment)" "$align"
	expect "B0h ATOMIC TRANSFER LENGTH GRANULARITY" "$(cfg_lun "$l" atomic_transfer_length_granularity)" "$gran"
	# sg_write_x through sg, on every kernel: exit status 0 = GOOD, 5 = ILLEGAL REQUEST.
	expect "sg_write_x WRITE ATOMIC(16) 8 blocks: exit status" 0 "$(res atomic.sgx_atomic_rc)"
	expect "sg_write_x WRITE ATOMIC(16) 8 blocks: read back through sd" ok "$(res atomic.sgx_atomic_readback)"
	expect "sg_write_x WRITE ATOMIC(16) 129 blocks > MAXIMUM ATOMIC TRANSFER LENGTH: ILLEGAL REQUEST" 5 \
		"$(res atomic.sgx_atomic_too_long_rc)"
	expect "sg_write_x WRITE SCATTERED(16) of 2 ranges: exit status" 0 "$(res atomic.sgx_scattered_rc)"
	expect "sg_write_x WRITE SCATTERED(16) of overlapping ranges: ILLEGAL REQUEST" 5 \
		"$(res atomic.sgx_scattered_overlap_rc)"
	if [ "$(kernel_model "$kernel")" = 6.1 ]; then
		for f in max_bytes unit_min_bytes unit_max_bytes boundary_bytes; do
			expect "queue/atomic_write_$f on $kernel (no atomic writes before 6.10)" absent "$(res "atomic.atomic_write_$f")"
		done
		expect "RWF_ATOMIC on $kernel" "write=errno:EOPNOTSUPP" "$(res atomic.write_unit_max)"
	else
		# sd_config_atomic (6.12): unit_min = granularity (or the physical block)
		# rounded down to a power of two; with b44 set, max = b44 and unit_max =
		# b44 rounded down to a power of two; the boundary is always 0.
		if [ "$gran" -gt 0 ]; then unit_min=$(pow2_floor "$gran"); else unit_min=$((1 << lbppbe)); fi
		unit_min=$((unit_min * bs))
		max_bytes=$((max * bs))
		unit_max=$(($(pow2_floor "$max") * bs))
		[ "$max" -gt 0 ] || [ "$mawb" -gt 0 ] || { unit_min=0; unit_max=0; max_bytes=0; }
		expect "queue/atomic_write_max_bytes (B0h b44 x block)" "$max_bytes" "$(res atomic.atomic_write_max_bytes)"
		expect "queue/atomic_write_unit_min_bytes" "$unit_min" "$(res atomic.atomic_write_unit_min_bytes)"
		expect "queue/atomic_write_unit_max_bytes" "$unit_max" "$(res atomic.atomic_write_unit_max_bytes)"
		expect "queue/atomic_write_boundary_bytes" 0 "$(res atomic.atomic_write_boundary_bytes)"
		expect "RWF_ATOMIC write of unit_max bytes" "write=ok readback=ok" "$(res atomic.write_unit_max)"
		expect "RWF_ATOMIC write of unit_min bytes" "write=ok readback=ok" "$(res atomic.write_unit_min)"
		expect "RWF_ATOMIC write longer than unit_max" "write=errno:EINVAL" "$(res atomic.write_too_long)"
		[ "$unit_min" -lt "$unit_max" ] &&
			expect "RWF_ATOMIC write not aligned to its length" "write=errno:EINVAL" "$(res atomic.write_misaligned)"
		backing=$(backing_file "$l")
		if [ -f "$backing" ] && [ "$unit_max" -gt 0 ]; then
			want=$(head -c "$unit_max" /dev/zero | tr '\0' '\241' | sha256sum | cut -d' ' -f1)
			got=$(head -c "$unit_max" "$backing" | sha256sum | cut -d' ' -f1)
			expect "backing file: the unit_max atomic write's A1h bytes at offset 0" "$want" "$got"
		fi
		if [ -n "${DAEMON_LOG:-}" ] && grep -q 'CDB\[0\]' "$DAEMON_LOG"; then
			n=$(grep -c 'CDB\[0\] 0x9c' "$DAEMON_LOG")
			[ "$n" -ge 2 ]
			expect_true "the daemon's debug log shows $n WRITE ATOMIC(16) (9Ch) commands, expected the guest's 2"
		fi
	fi
}
