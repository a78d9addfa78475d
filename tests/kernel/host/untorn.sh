# shellcheck shell=bash
# Host side of the "untorn" check (guest: tests/kernel/guest/untorn.sh):
# the guest's be_untorn program saw the atomic write unit range the "atomic"
# check read from sysfs, wrote the fitting write untorn (and the larger one
# through the intent log), and the daemon received WRITE ATOMIC(16) for it:
# the daemon's debug log holds exactly the 9Ch commands the suite sends
# (rwf_atomic's two, sg_write_x's two, be_untorn's one).  docs/atomic.md.

host_untorn() {
	local l kernel umin umax off backing want got n
	l=$(res untorn.lun)
	kernel=$(res untorn.kernel)
	off=$(res untorn.offset)
	if [ "$(kernel_model "$kernel")" = 6.1 ]; then
		expect "be_untorn on $kernel (no untorn writes: both through the intent log)" \
			"limits=0-0 fit=ok untorn=0 nofit=ok untorn=0 journal=yes readback=ok" "$(res untorn.result)"
		return
	fi
	umin=$(res atomic.atomic_write_unit_min_bytes)
	umax=$(res atomic.atomic_write_unit_max_bytes)
	expect "be_untorn on $kernel: statx limits = queue limits, the unit_max write untorn, 2 x unit_max through the journal" \
		"limits=$umin-$umax fit=ok untorn=1 nofit=ok untorn=1 journal=yes readback=ok" "$(res untorn.result)"
	backing=$(backing_file "$l")
	if [ -f "$backing" ] && [ "$umax" -gt 0 ]; then
		want=$(head -c "$umax" /dev/zero | tr '\0' '\345' | sha256sum | cut -d' ' -f1)
		got=$(tail -c +$((off + 1)) "$backing" | head -c "$umax" | sha256sum | cut -d' ' -f1)
		expect "backing file: the untorn write's E5h bytes at offset $off" "$want" "$got"
		want=$(head -c $((2 * umax)) /dev/zero | tr '\0' '\346' | sha256sum | cut -d' ' -f1)
		got=$(tail -c +$((off + 4 * umax + 1)) "$backing" | head -c $((2 * umax)) | sha256sum | cut -d' ' -f1)
		expect "backing file: the journaled write's E6h bytes at offset $((off + 4 * umax))" "$want" "$got"
	fi
	if [ -n "${DAEMON_LOG:-}" ] && grep -q 'CDB\[0\]' "$DAEMON_LOG"; then
		n=$(grep -c 'CDB\[0\] 0x9c' "$DAEMON_LOG")
		expect "WRITE ATOMIC(16) (9Ch) commands in the daemon's debug log: rwf_atomic 2 + sg_write_x 2 + be_untorn 1" \
			5 "$n"
	fi
}
