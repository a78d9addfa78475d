# shellcheck shell=sh
# Guest check "discard": write two 8 MiB regions with O_DIRECT, read them
# back, discard the first with blkdiscard (sd turns it into UNMAP or WRITE
# SAME with UNMAP, per its provisioning_mode), then read both again: the
# discarded one must read as zeros when the device reports LBPRZ, the other
# must be intact.  The host checks that the backing file gave the space back
# (tests/kernel/host/discard.sh).  LUN: SBCE_DISCARD_LUN (default: the first).

l=${SBCE_DISCARD_LUN:-${SBCE_LUN_LIST%% *}}
dev=$(sbce_lun_var DEV "$l")
b=$(sbce_lun_var BLOCK "$l")
h=$(sbce_lun_var HCTL "$l")
[ -n "$dev" ] || sbce_fail "LUN $l has no disk"
sbce_value lun "$l"
mib=8
a_off=0         # region A, MiB offset: discarded
b_off=$((mib * 2)) # region B: kept
sbce_value region_mib "$mib"
sbce_value a_offset_mib "$a_off"
sbce_value b_offset_mib "$b_off"
sbce_file_value provisioning_mode "/sys/class/scsi_disk/$h/provisioning_mode"
sbce_file_value discard_max_bytes "/sys/block/$b/queue/discard_max_bytes"
sg=$(sbce_lun_var SG "$l")
sbce_value raw_rc16 "$(sg_readcap --16 --raw "$sg" | sbce_hex)"

head -c $((mib * 1048576)) /dev/urandom >/tmp/data
sum_data=$(sha256sum </tmp/data | cut -d' ' -f1)
sum_zero=$(head -c $((mib * 1048576)) /dev/zero | sha256sum | cut -d' ' -f1)
sbce_value sha256_data "$sum_data"
for off in $a_off $b_off; do
	sbce_run dd if=/tmp/data of="$dev" bs=1M seek="$off" count="$mib" oflag=direct conv=notrunc 2>/dev/null
done
region_sum() {
	dd if="$dev" bs=1M skip="$1" count="$mib" iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1
}
[ "$(region_sum $a_off)" = "$sum_data" ] || sbce_fail "region A does not read back what was written"
[ "$(region_sum $b_off)" = "$sum_data" ] || sbce_fail "region B does not read back what was written"

sbce_run blkdiscard -o $((a_off * 1048576)) -l $((mib * 1048576)) "$dev"
sbce_value discarded yes
a_sum=$(region_sum $a_off)
if [ "$a_sum" = "$sum_zero" ]; then
	sbce_value a_after zeros
elif [ "$a_sum" = "$sum_data" ]; then
	sbce_value a_after unchanged
else
	sbce_value a_after other
fi
[ "$(region_sum $b_off)" = "$sum_data" ] || sbce_fail "region B changed when region A was discarded"
sbce_value b_after intact
