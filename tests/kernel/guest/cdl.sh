# shellcheck shell=sh
# Guest check "cdl": command duration limits through sd (Linux 6.5 and
# later; docs/latency.md).  Reports what Linux made of the LU
# (device/cdl_supported, which needs INQUIRY VERSION >= 07h and RSOC CDLP,
# scsi_cdl_check), turns cdl_enable on, gives the T2A page two descriptors
# with MODE SELECT(10) through sg (descriptor 1: max active time 1 ms, abort;
# descriptor 2: max active time 1 ms, complete-earliest), then reads with
# the I/O priority hints that sd turns into DLD 1 and 2 (the cdl_io
# program).  The LU's latency model makes every read take 20 ms, so both
# limits pass: the abort reaches the program as ETIME and is not retried,
# the complete-earliest read succeeds late.  On kernels without CDL the
# sysfs files are absent and the hint changes nothing.  The host
# compares (tests/kernel/host/cdl.sh) and reads the daemon's statistics.
# LUN: SBCE_CDL_LUN.

l=${SBCE_CDL_LUN:-${SBCE_LUN_LIST%% *}}
dev=$(sbce_lun_var DEV "$l")
sg=$(sbce_lun_var SG "$l")
b=$(sbce_lun_var BLOCK "$l")
[ -n "$dev" ] || sbce_fail "LUN $l has no disk"
sbce_value lun "$l"
sbce_value kernel "$(uname -r)"
d=/sys/block/$b/device
sbce_file_value cdl_supported "$d/cdl_supported"
if [ -e "$d/cdl_enable" ]; then
	if echo 1 >"$d/cdl_enable" 2>/dev/null; then
		sbce_file_value cdl_enable "$d/cdl_enable"
	else
		sbce_value cdl_enable refused
	fi
else
	sbce_value cdl_enable absent
fi
# What Linux reads: standard INQUIRY (VERSION in byte 2), RSOC one command for READ(16) and WRITE(16).
sbce_value inquiry "$(sg_inq --raw "$sg" 2>/dev/null | head -c 8 | sbce_hex)"
sbce_value rsoc_read16 "$(sg_opcodes --raw --opcode=0x88 "$sg" 2>/dev/null | head -c 4 | sbce_hex)"
sbce_value rsoc_write16 "$(sg_opcodes --raw --opcode=0x8a "$sg" 2>/dev/null | head -c 4 | sbce_hex)"

# MODE SELECT(10) PF = 1 of Command Duration Limit T2A (SPC-6; cdl-tools' layout): an 8-byte header,
# the page (4Ah 07h 00E4h ...), descriptor k at page byte 8 + 32 (k - 1): T2CDLUNITS 8h (1 us),
# MAX ACTIVE TIME 1000 (bytes 4-5), policies (byte 6: inactive 7:4, active 3:0).
list=/tmp/t2a.bin
dd if=/dev/zero of=$list bs=240 count=1 2>/dev/null
put() { # put OFFSET OCTAL-ESCAPES
	printf "$2" | dd of=$list bs=1 seek="$1" conv=notrunc 2>/dev/null
}
put 8 '\112\007\000\344'
put 16 '\010\000\000\000\003\350\017'
put 48 '\010\000\000\000\003\350\000'
if sg_raw -s 240 -i $list "$sg" 55 10 00 00 00 00 00 00 f0 00 >/tmp/sgraw.log 2>&1; then
	sbce_value mode_select ok
else
	sbce_value mode_select "failed: $(tr '\n' ' ' </tmp/sgraw.log | cut -c1-200)"
fi
sbce_value t2a "$(sg_raw -r 64 -b "$sg" 5a 08 0a 07 00 00 00 00 40 00 2>/dev/null | sbce_hex)"

# The reads: no hint, DLD 1 (abort), DLD 2 (complete-earliest); each at its own LBA.
sbce_value io_hint0 "$(cdl_io "$dev" 0 0)"
sbce_value io_hint1 "$(cdl_io "$dev" 1048576 1)"
sbce_value io_hint2 "$(cdl_io "$dev" 2097152 2)"
dmesg | grep -i "cdl\|duration" | tail -n 5 | sed 's/^/  dmesg: /' || true
