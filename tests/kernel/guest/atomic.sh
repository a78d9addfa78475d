# shellcheck shell=sh
# Guest check "atomic": atomic writes through sd (Linux 6.11 and later).
# Reports the queue's atomic write limits, which sd derives from the Block
# Limits VPD page's atomic fields (bytes 44-63), the raw B0h page, and the
# outcome of O_DIRECT pwritev2(RWF_ATOMIC) writes (the rwf_atomic program):
# one of unit_max bytes, one of unit_min bytes, one longer than unit_max and
# one not aligned to its length.  On kernels without atomic writes the sysfs
# files are absent and RWF_ATOMIC is refused.  The host compares it all with
# the configuration and counts WRITE ATOMIC(16) in the daemon's log
# (tests/kernel/host/atomic.sh).  LUN: SBCE_ATOMIC_LUN.

l=${SBCE_ATOMIC_LUN:-${SBCE_LUN_LIST%% *}}
dev=$(sbce_lun_var DEV "$l")
b=$(sbce_lun_var BLOCK "$l")
[ -n "$dev" ] || sbce_fail "LUN $l has no disk"
sbce_value lun "$l"
sbce_value kernel "$(uname -r)"
q=/sys/block/$b/queue
for f in atomic_write_max_bytes atomic_write_unit_min_bytes atomic_write_unit_max_bytes atomic_write_boundary_bytes; do
	if [ -e "$q/$f" ]; then
		sbce_file_value "$f" "$q/$f"
	else
		sbce_value "$f" absent
	fi
done
sbce_file_value logical_block_size "$q/logical_block_size"
sbce_value raw_b0 "$(sg_vpd --page=0xb0 --raw "$(sbce_lun_var SG "$l")" | sbce_hex)"

umax=$(cat "$q/atomic_write_unit_max_bytes" 2>/dev/null || echo 0)
umin=$(cat "$q/atomic_write_unit_min_bytes" 2>/dev/null || echo 0)
if [ "$umax" -gt 0 ]; then
	# At offset 0: unit_max bytes of A1h; at offset 2 * unit_max: unit_min bytes of B2h.
	sbce_value write_unit_max "$(rwf_atomic "$dev" 0 "$umax" 0xa1)"
	sbce_value write_unit_min "$(rwf_atomic "$dev" $((umax * 2)) "$umin" 0xb2)"
	# Longer than unit_max, and (when unit_min < unit_max) not aligned to its
	# length: the block layer refuses both with EINVAL before sd sees them.
	sbce_value write_too_long "$(rwf_atomic "$dev" 0 $((umax * 2)) 0xc3)"
	if [ "$umin" -lt "$umax" ]; then
		sbce_value write_misaligned "$(rwf_atomic "$dev" "$umin" "$umax" 0xd4)"
	fi
else
	sbce_value write_unit_max "$(rwf_atomic "$dev" 0 4096 0xa1)"
fi
