# shellcheck shell=sh
# Guest check "xcopy": copy offload with a stock host tool.  sg3_utils'
# sg_xcopy copies 1 MiB through sg with EXTENDED COPY (LID1; the copy
# manager, docs/copy.md) inside one LU, ddpt copies it again with ODX
# (token-based copy), each result is read back through sd; a copy past the
# capacity must fail.  The host checks the values and that
# sbcemud saw EXTENDED COPY (tests/kernel/host/xcopy.sh).  LUN: SBCE_XCOPY_LUN.

l=${SBCE_XCOPY_LUN:-3}
dev=$(sbce_lun_var DEV "$l")
sg=$(sbce_lun_var SG "$l")
[ -n "$dev" ] && [ -n "$sg" ] || sbce_fail "LUN $l has no disk"
sbce_value lun "$l"
sbce_value inquiry "$(sg_raw -r 96 -b "$sg" 12 00 00 00 60 00 2>/dev/null | sbce_hex)"
blocks=$(($(cat "/sys/block/$(sbce_lun_var BLOCK "$l")/size")))   # 512-byte sectors
sbce_value blocks "$blocks"

head -c 1048576 /dev/urandom >/tmp/xsrc
sbce_run dd if=/tmp/xsrc of="$dev" bs=64k count=16 oflag=direct conv=notrunc status=none
# 2048 blocks of 512 bytes from LBA 0 to LBA 16384 (8 MiB), the copy done by the device.
if sg_xcopy if="$sg" of="$sg" bs=512 count=2048 skip=0 seek=16384 -v >/tmp/xcopy.log 2>&1; then
	sbce_value sg_xcopy ok
else
	sbce_value sg_xcopy "exit $?"
fi
sed 's/^/  sg_xcopy: /' /tmp/xcopy.log | head -n 20
if dd if="$dev" bs=64k skip=128 count=16 iflag=direct status=none | cmp -s - /tmp/xsrc; then
	sbce_value readback ok
else
	sbce_value readback differs
fi
# ddpt (a Debian package) copies the same 1 MiB to LBA 24576 by ODX: POPULATE
# TOKEN, RECEIVE ROD TOKEN INFORMATION, WRITE USING TOKEN (docs/copy.md).
if ddpt if="$sg" of="$sg" bs=512 count=2048 skip=0 seek=24576 --odx -v >/tmp/odx.log 2>&1; then
	sbce_value ddpt_odx ok
else
	sbce_value ddpt_odx "exit $?"
fi
sed 's/^/  ddpt --odx: /' /tmp/odx.log | head -n 30
if dd if="$dev" bs=64k skip=192 count=16 iflag=direct status=none | cmp -s - /tmp/xsrc; then
	sbce_value odx_readback ok
else
	sbce_value odx_readback differs
fi
# Past the capacity: the device refuses the whole list (COPY ABORTED), sg_xcopy fails.
if sg_xcopy if="$sg" of="$sg" bs=512 count=2048 skip=0 seek=$((blocks - 1024)) >/tmp/xcopy2.log 2>&1; then
	sbce_value past_capacity copied
else
	sbce_value past_capacity refused
fi
sed 's/^/  sg_xcopy (past the capacity): /' /tmp/xcopy2.log | head -n 5
