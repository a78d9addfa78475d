# shellcheck shell=sh
# Guest check "pi": protection information through sd (docs/pi.md).  For each
# LUN (SBCE_PI_LUN type 1, SBCE_PI_T3_LUN type 3): what sg_readcap and sg_inq
# decode, sd's kernel log line about DIF, and a data round trip through the
# block device.  On the type 1 LUN also: one written block read with
# RDPROTECT 001b through sg (the 520 bytes, for the host to check the tuple),
# and reads of the blocks whose PI the configuration corrupts (pi_faults),
# with their exit status and the sense the kernel logs.  The host compares it
# all (tests/kernel/host/pi.sh).

for l in ${SBCE_PI_LUN:-0} ${SBCE_PI_T3_LUN:-1}; do
	dev=$(sbce_lun_var DEV "$l")
	sg=$(sbce_lun_var SG "$l")
	b=$(sbce_lun_var BLOCK "$l")
	[ -n "$dev" ] || sbce_fail "LUN $l has no disk"
	sbce_value "readcap_$l" "$(sg_readcap --long "$sg" 2>&1 | grep -o 'prot_en=[0-9], p_type=[0-9]' | head -n 1)"
	sbce_value "inq_protect_$l" "$(sg_inq "$sg" 2>&1 | grep -o 'Protect=[0-9]' | head -n 1)"
	sbce_value "dmesg_dif_$l" "$(dmesg | grep "\[$b\]" | grep -o '[A-Za-z]*abling DIF Type [0-9] protection' | tr '\n' ';' | sed 's/;$//')"
	sbce_file_value "logical_block_size_$l" "/sys/block/$b/queue/logical_block_size"
	if [ -r "/sys/block/$b/integrity/format" ]; then
		sbce_file_value "integrity_format_$l" "/sys/block/$b/integrity/format"
	else
		sbce_value "integrity_format_$l" absent
	fi
	# 256 KiB at 1 MiB through the block device: sbcemud generates the PI on
	# write and checks it on read.
	head -c 262144 /dev/urandom >/tmp/pi-data
	dd if=/tmp/pi-data of="$dev" bs=65536 seek=16 count=4 oflag=direct 2>/dev/null
	if dd if="$dev" bs=65536 skip=16 count=4 iflag=direct 2>/dev/null | cmp -s - /tmp/pi-data; then
		sbce_value "roundtrip_$l" ok
	else
		sbce_value "roundtrip_$l" differs
	fi
done

l=${SBCE_PI_LUN:-0}
dev=$(sbce_lun_var DEV "$l")
sg=$(sbce_lun_var SG "$l")
# READ(10) of LBA 2048 (the first block written above) with RDPROTECT 001b:
# 512 data bytes then the 8-byte tuple.
rc=0
sg_raw -r 520 -o /tmp/pi-raw "$sg" 28 20 00 00 08 00 00 00 01 00 >/tmp/pi-sgraw.log 2>&1 || rc=$?
sbce_value rdprotect_rc "$rc"
sbce_value rdprotect_hex "$(sbce_hex </tmp/pi-raw)"

# pi_faults: the guard of LBA 5000, the reference tag of LBA 6000 (once
# written).  Each sits in its own 4 KiB page: the block device reads whole
# pages, so a fault fails the read of every block of its page.  LBA 7000
# (written too, no fault) must read.
head -c 4096 /dev/urandom >/tmp/pi-page
for lba in 5000 6000 7000; do
	dd if=/tmp/pi-page of="$dev" bs=512 seek="$lba" count=8 oflag=direct 2>/dev/null
done
sync
echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
dmesg -c >/dev/null 2>&1 || true
for lba in 5000 6000 7000; do
	rc=0
	dd if="$dev" of=/dev/null bs=512 skip="$lba" count=1 iflag=direct 2>/dev/null || rc=$?
	sbce_value "fault_read_rc_$lba" "$rc"
done
sbce_value fault_guard_logged "$(dmesg | grep -c 'Logical block guard check failed' || true)"
sbce_value fault_ref_logged "$(dmesg | grep -c 'Logical block reference tag check failed' || true)"
dmesg | grep -i -E 'sense|check failed|I/O error' | head -n 12 | sed 's/^/  dmesg: /'
