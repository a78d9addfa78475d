# shellcheck shell=sh
# Guest check "identify": for each LUN, what the device says about itself (raw
# INQUIRY, VPD pages, READ CAPACITY(16), REPORT SUPPORTED OPERATION CODES for
# the commands sd asks about) and what the kernel made of it (sysfs queue and
# scsi_disk attributes).  The host (tests/kernel/host/identify.sh) checks the
# first against the daemon's configuration and the second against sd's rules.
# LUNs: SBCE_IDENTIFY_LUNS, default every LUN the kernel attached.

# raw KEY CMD...: the binary output of an sg3-utils --raw command as hex,
# or "error" when the command fails (an unsupported page, say).
raw() {
	_key=$1
	shift
	if "$@" >/tmp/raw 2>/tmp/raw.err; then
		sbce_value "$_key" "$(sbce_hex </tmp/raw)"
	else
		sbce_value "$_key" error
		sbce_info "$_key: $* failed: $(head -n1 /tmp/raw.err)"
	fi
}

sbce_value kernel "$(uname -r)"
for l in ${SBCE_IDENTIFY_LUNS:-$SBCE_LUN_LIST}; do
	b=$(sbce_lun_var BLOCK "$l")
	sg=$(sbce_lun_var SG "$l")
	h=$(sbce_lun_var HCTL "$l")
	[ -n "$b" ] || sbce_fail "LUN $l has no disk"
	p=lun$l
	sbce_value "$p.block" "$b"
	# The device's own description, through the kernel's sg driver.
	raw "$p.raw.inquiry" sg_inq --raw --len=96 "$sg"
	raw "$p.raw.vpd_00" sg_vpd --page=0x00 --raw "$sg"
	raw "$p.raw.vpd_b0" sg_vpd --page=0xb0 --raw "$sg"
	raw "$p.raw.vpd_b1" sg_vpd --page=0xb1 --raw "$sg"
	raw "$p.raw.vpd_b2" sg_vpd --page=0xb2 --raw "$sg"
	raw "$p.raw.rc16" sg_readcap --16 --raw "$sg"
	# One-command REPORT SUPPORTED OPERATION CODES, as sd_read_write_same() asks:
	# INQUIRY first (does RSOC work at all), then WRITE SAME (16) and (10).
	raw "$p.raw.rsoc_12" sg_opcodes --no-inquiry --opcode=0x12 --raw "$sg"
	raw "$p.raw.rsoc_93" sg_opcodes --no-inquiry --opcode=0x93 --raw "$sg"
	raw "$p.raw.rsoc_41" sg_opcodes --no-inquiry --opcode=0x41 --raw "$sg"
	raw "$p.raw.rsoc_42" sg_opcodes --no-inquiry --opcode=0x42 --raw "$sg"
	# The kernel's view.
	sbce_file_value "$p.sys.size" "/sys/block/$b/size"
	for a in logical_block_size physical_block_size minimum_io_size optimal_io_size \
		max_sectors_kb max_hw_sectors_kb discard_granularity discard_max_bytes discard_max_hw_bytes \
		write_same_max_bytes write_zeroes_max_bytes rotational zoned nr_zones \
		atomic_write_max_bytes atomic_write_unit_min_bytes atomic_write_unit_max_bytes \
		atomic_write_boundary_bytes; do
		sbce_file_value "$p.sys.$a" "/sys/block/$b/queue/$a"
	done
	for a in provisioning_mode zeroing_mode thin_provisioning protection_type cache_type FUA \
		max_write_same_blocks; do
		sbce_file_value "$p.sys.$a" "/sys/class/scsi_disk/$h/$a"
	done
	sbce_file_value "$p.sys.scsi_level" "/sys/class/scsi_device/$h/device/scsi_level"
	sbce_file_value "$p.sys.vendor" "/sys/class/scsi_device/$h/device/vendor"
	sbce_file_value "$p.sys.model" "/sys/class/scsi_device/$h/device/model"
	# sd's own account of the disk, for the log.
	dmesg | grep "\[$b\]" | while read -r line; do sbce_info "$p dmesg: $line"; done
done
