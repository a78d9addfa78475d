# shellcheck shell=sh
# Guest check "xcopy": copy offload with a stock host tool.  sg3_utils'
# sg_xcopy copies 1 MiB through sg with EXTENDED COPY (LID1; the copy
# manager, docs/copy.md) inside one LU, ddpt copies it again in its xcopy
# mode, sg_raw copies it again with ROD
# tokens (POPULATE TOKEN, WRITE USING TOKEN), sg_xcopy and ddpt copy it to
# another LU, each result is read back through sd; a copy past the capacity
# must fail.  The host checks the values and that sbcemud saw EXTENDED COPY
# (tests/kernel/host/xcopy.sh).  LUNs: SBCE_XCOPY_LUN, SBCE_XCOPY_TO_LUN.

l=${SBCE_XCOPY_LUN:-3}
dev=$(sbce_lun_var DEV "$l")
sg=$(sbce_lun_var SG "$l")
[ -n "$dev" ] && [ -n "$sg" ] || sbce_fail "LUN $l has no disk"
sbce_value lun "$l"
sbce_value inquiry "$(sg_raw -r 96 -b "$sg" 12 00 00 00 60 00 2>/dev/null | sbce_hex)"
blocks=$(($(cat "/sys/block/$(sbce_lun_var BLOCK "$l")/size")))   # 512-byte sectors
sbce_value blocks "$blocks"

head -c 1048576 /dev/urandom >/tmp/xsrc
# reads_back NAME SKIP [DEV]: value NAME "ok" when the 1 MiB at 64 KiB block SKIP of DEV (default the LU's,
# read through sd) is /tmp/xsrc, else "differs".
reads_back() {
	if dd if="${3:-$dev}" bs=64k skip="$2" count=16 iflag=direct status=none | cmp -s - /tmp/xsrc; then
		sbce_value "$1" ok
	else
		sbce_value "$1" differs
	fi
}
sbce_run dd if=/tmp/xsrc of="$dev" bs=64k count=16 oflag=direct conv=notrunc status=none
# 2048 blocks of 512 bytes from LBA 0 to LBA 16384 (8 MiB), the copy done by the device.
if sg_xcopy if="$sg" of="$sg" bs=512 count=2048 skip=0 seek=16384 -v >/tmp/xcopy.log 2>&1; then
	sbce_value sg_xcopy ok
else
	sbce_value sg_xcopy "exit $?"
fi
sed 's/^/  sg_xcopy: /' /tmp/xcopy.log | head -n 20
reads_back readback 128
# The same 1 MiB copied again to LBA 24576 with ROD tokens (docs/copy.md),
# through sg with sg3_utils' sg_raw: POPULATE TOKEN (list 1), RECEIVE ROD
# TOKEN INFORMATION for the token, WRITE USING TOKEN (list 2).  (ddpt 0.97's
# --odx puts each range descriptor one byte early, src/ddpt_xcopy.c
# do_pop_tok and do_wut "n = 15" / "n = 535", so no conforming copy manager
# reads its ranges; it is not used here.)
# bin HEX...: the bytes written as hex pairs, to stdout.
bin() {
	for _h in $(echo "$*" | sed 's/ //g; s/../& /g'); do
		# shellcheck disable=SC2059
		printf "\\$(printf '%03o' $((0x$_h)))"
	done
}
zeros() { head -c "$1" /dev/zero; }
{ bin 001e 0000 00000000 00000000 00000010 0000000000000000 00000800; zeros 4; } >/tmp/pt.bin
{ sg_raw -s 32 -i /tmp/pt.bin "$sg" 83 10 00 00 00 00 00 00 00 01 00 00 00 20 00 00 &&
	sg_raw -r 1024 -o /tmp/rrti.bin "$sg" 84 07 00 00 00 01 00 00 00 00 00 00 04 00 00 00; } >/tmp/odx.log 2>&1
sbce_value rod_rrti "$(od -An -v -tx1 -N 42 /tmp/rrti.bin 2>/dev/null | tr -d ' \n')"
dd if=/tmp/rrti.bin of=/tmp/token.bin bs=1 skip=38 count=512 2>/dev/null
{ bin 0226 0000 00000000 0000000000000000; cat /tmp/token.bin; zeros 6
  bin 0010 0000000000006000 00000800; zeros 4; } >/tmp/wut.bin
if sg_raw -s 552 -i /tmp/wut.bin "$sg" 83 11 00 00 00 00 00 00 00 02 00 00 02 28 00 00 >>/tmp/odx.log 2>&1; then
	sbce_value rod_wut ok
else
	sbce_value rod_wut "exit $?"
fi
sed 's/^/  token copy: /' /tmp/odx.log | head -n 20
reads_back rod_readback 192
# ddpt's xcopy mode (--xcopy: EXTENDED COPY(LID1), sent to the output device
# here) copies the same 1 MiB to LBA 32768, read back through sd.
if ddpt if="$sg" of="$sg" bs=512 count=2048 skip=0 seek=32768 --xcopy oflag=xcopy >/tmp/ddpt.log 2>&1; then
	sbce_value ddpt_xcopy ok
else
	sbce_value ddpt_xcopy "exit $?"
fi
sed 's/^/  ddpt --xcopy: /' /tmp/ddpt.log | head -n 10
reads_back ddpt_readback 256
# Between two LUs of the target (docs/copy.md, "Copies between LUs"): the same 1 MiB from this LU
# to LUN SBCE_XCOPY_TO_LUN at 100 MiB, by sg_xcopy with the command sent to the source (--on_src),
# then at 104 MiB by ddpt with it sent to the destination (oflag=xcopy), then at 108 MiB by
# WRITE USING TOKEN of this LU's token sent to that LU; each read back through that LU's sd.
l2=${SBCE_XCOPY_TO_LUN:-2}
dev2=$(sbce_lun_var DEV "$l2")
sg2=$(sbce_lun_var SG "$l2")
[ -n "$dev2" ] && [ -n "$sg2" ] || sbce_fail "LUN $l2 has no disk"
if sg_xcopy if="$sg" of="$sg2" bs=512 count=2048 skip=0 seek=204800 --on_src -v >/tmp/xcopy3.log 2>&1; then
	sbce_value lus_sg_xcopy ok
else
	sbce_value lus_sg_xcopy "exit $?"
fi
sed 's/^/  sg_xcopy (to another LU): /' /tmp/xcopy3.log | head -n 20
reads_back lus_readback 1600 "$dev2"
if ddpt if="$sg" of="$sg2" bs=512 count=2048 skip=0 seek=212992 --xcopy oflag=xcopy >/tmp/ddpt2.log 2>&1; then
	sbce_value lus_ddpt ok
else
	sbce_value lus_ddpt "exit $?"
fi
sed 's/^/  ddpt --xcopy (to another LU): /' /tmp/ddpt2.log | head -n 10
reads_back lus_ddpt_readback 1664 "$dev2"
# The token made on this LU above, written on the other LU at 108 MiB (LBA 221184 = 36000h, list 3).
{ bin 0226 0000 00000000 0000000000000000; cat /tmp/token.bin; zeros 6
  bin 0010 0000000000036000 00000800; zeros 4; } >/tmp/wut2.bin
if sg_raw -s 552 -i /tmp/wut2.bin "$sg2" 83 11 00 00 00 00 00 00 00 03 00 00 02 28 00 00 >/tmp/odx2.log 2>&1; then
	sbce_value lus_rod_wut ok
else
	sbce_value lus_rod_wut "exit $?"
fi
sed 's/^/  token copy (to another LU): /' /tmp/odx2.log | head -n 10
reads_back lus_rod_readback 1728 "$dev2"
# Past the capacity: the device refuses the whole list (COPY ABORTED), sg_xcopy fails.
if sg_xcopy if="$sg" of="$sg" bs=512 count=2048 skip=0 seek=$((blocks - 1024)) >/tmp/xcopy2.log 2>&1; then
	sbce_value past_capacity copied
else
	sbce_value past_capacity refused
fi
sed 's/^/  sg_xcopy (past the capacity): /' /tmp/xcopy2.log | head -n 5
