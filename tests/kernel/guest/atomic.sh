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

# sg3_utils' sg_write_x through sg (any kernel): WRITE ATOMIC(16) and WRITE
# SCATTERED(16) as an application would send them.  Exit status 0 is GOOD,
# 5 is ILLEGAL REQUEST (sg3_utils' SG_LIB_CAT_ILLEGAL_REQ).
sg=$(sbce_lun_var SG "$l")
bs=$(cat "$q/logical_block_size")
# sgx_run NAME ARGS...: runs sg_write_x, reports its exit status as NAME.
sgx_run() {
	_n=$1
	shift
	_rc=0
	sg_write_x "$@" "$sg" >/tmp/sgx.log 2>&1 || _rc=$?
	sbce_value "$_n" "$_rc"
	sed 's/^/  sg_write_x: /' /tmp/sgx.log | head -n 5
}
# readback NAME LBA COUNT FILE [FILE_OFFSET_BLOCKS]: compares blocks with a file.
readback() {
	dd if="$4" of=/tmp/sgx-want bs="$bs" skip="${5:-0}" count="$3" 2>/dev/null
	if dd if="$dev" bs="$bs" skip="$2" count="$3" iflag=direct 2>/dev/null | cmp -s - /tmp/sgx-want; then
		sbce_value "$1" ok
	else
		sbce_value "$1" differs
	fi
}
head -c $((bs * 129)) /dev/urandom >/tmp/sgx-data
sgx_run sgx_atomic_rc --atomic=0 --lba=4096 --num=8 --in=/tmp/sgx-data
readback sgx_atomic_readback 4096 8 /tmp/sgx-data
sgx_run sgx_atomic_too_long_rc --atomic=0 --lba=4096 --num=129 --in=/tmp/sgx-data
# (Only the status of WRITE SCATTERED is checked here: sg3-utils 1.46's
# sg_write_x --scattered sends zeros instead of the --in data, as its own
# --dry-run -vvvv dump of the Data-Out buffer shows, so there is nothing to
# read back that a fresh LU would not hold anyway.)
sgx_run sgx_scattered_rc --scattered=2 --lba=6000,6100 --num=4,4 --in=/tmp/sgx-data
sgx_run sgx_scattered_overlap_rc --scattered=2 --lba=7000,7002 --num=4,4 --in=/tmp/sgx-data
