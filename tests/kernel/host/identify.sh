# shellcheck shell=bash
# Host side of the "identify" check (guest: tests/kernel/guest/identify.sh).
# 1. What each LU reports (INQUIRY, READ CAPACITY(16), Block Limits and
#    Logical Block Provisioning VPD) matches the daemon's configuration
#    (skipped for a stand-in target, whose configuration is not ours).
# 2. What the kernel shows in sysfs matches sd's rules applied to what the
#    LU reports (lib-host.sh: sd_model), so a wrong field in a VPD page shows
#    up as the kernel limit it distorts.

host_identify() {
	local kernel l p n=0
	kernel=$(res identify.kernel)
	for l in $(printf '%s\n' "${!RES[@]}" | sed -n 's/^identify\.lun\([0-9]*\)\.block$/\1/p' | sort -n); do
		n=$((n + 1))
		p=identify.lun$l
		[ -n "${SUITE_CONFIG_FILE:-}" ] && identify_vs_config "$l" "$p"
		if ! sd_model "$p" "$kernel"; then
			fail "LUN $l: no READ CAPACITY (16) data from the guest"
			continue
		fi
		for a in size logical_block_size physical_block_size minimum_io_size optimal_io_size max_sectors_kb \
			max_hw_sectors_kb discard_granularity discard_max_bytes discard_max_hw_bytes write_zeroes_max_bytes \
			rotational zoned provisioning_mode zeroing_mode thin_provisioning max_write_same_blocks; do
			expect "LUN $l $a (sd on $(kernel_model "$kernel"))" "${SD[$a]}" "$(res "$p.sys.$a")"
		done
	done
	[ "$n" -gt 0 ]
	expect_true "the guest reported no LUN"
}

# identify_vs_config LUN PREFIX: the LU's self-description against [lun ... LUN].
identify_vs_config() {
	local l=$1 p=$2 inq rc16 b0 b2 size lbs thin v
	inq=$(res "$p.raw.inquiry")
	rc16=$(res "$p.raw.rc16")
	b0=$(res "$p.raw.vpd_b0")
	b2=$(res "$p.raw.vpd_b2")
	[ -n "$(cfg_lun "$l" size)" ] || { fail "LUN $l: not in $SUITE_CONFIG_FILE"; return; }
	# Standard INQUIRY data (SPC-6 6.7.2): T10 VENDOR IDENTIFICATION, PRODUCT
	# IDENTIFICATION, PRODUCT REVISION LEVEL; peripheral device type 0 (direct access).
	if [ "$(hex_len "$inq")" -ge 36 ]; then
		expect "LUN $l INQUIRY PERIPHERAL DEVICE TYPE" 0 $(($(hex_u8 "$inq" 0) & 0x1f))
		expect "LUN $l INQUIRY T10 VENDOR IDENTIFICATION" "$(cfg_lun "$l" vendor)" "$(hex_ascii "$inq" 8 8)"
		expect "LUN $l INQUIRY PRODUCT IDENTIFICATION" "$(cfg_lun "$l" product)" "$(hex_ascii "$inq" 16 16)"
		expect "LUN $l INQUIRY PRODUCT REVISION LEVEL" "$(cfg_lun "$l" revision)" "$(hex_ascii "$inq" 32 4)"
	else
		fail "LUN $l: no standard INQUIRY data ($inq)"
	fi
	# READ CAPACITY (16) parameter data (SBC-4 5.20.2).
	size=$(cfg_size "$(cfg_lun "$l" size)")
	lbs=$(cfg_lun "$l" logical_block_size)
	thin=$(cfg_bool "$(cfg_lun "$l" thin_provisioning)")
	if [ "$(hex_len "$rc16")" -ge 16 ]; then
		expect "LUN $l RC16 LOGICAL BLOCK LENGTH" "$lbs" "$(hex_be32 "$rc16" 8)"
		expect "LUN $l RC16 capacity (RETURNED LOGICAL BLOCK ADDRESS + 1) x block length" "$size" \
			$((($(hex_be64 "$rc16" 0) + 1) * $(hex_be32 "$rc16" 8)))
		expect "LUN $l RC16 LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT" "$(cfg_lun "$l" lbppbe)" \
			$(($(hex_u8 "$rc16" 13) & 15))
		expect "LUN $l RC16 LBPME" "$thin" $((($(hex_u8 "$rc16" 14) >> 7) & 1))
	else
		fail "LUN $l: no READ CAPACITY (16) data ($rc16)"
	fi
	# Block Limits VPD page (SBC-4 6.6.3).
	if [ "$(hex_len "$b0")" -ge 64 ]; then
		expect "LUN $l Block Limits PAGE LENGTH" 60 "$(hex_be16 "$b0" 2)"
		expect "LUN $l Block Limits MAXIMUM COMPARE AND WRITE LENGTH" "$(cfg_lun "$l" max_compare_and_write)" \
			"$(hex_u8 "$b0" 5)"
		expect "LUN $l Block Limits MAXIMUM TRANSFER LENGTH" "$(cfg_lun "$l" max_transfer_length)" "$(hex_be32 "$b0" 8)"
		expect "LUN $l Block Limits OPTIMAL TRANSFER LENGTH" "$(cfg_lun "$l" optimal_transfer_length)" \
			"$(hex_be32 "$b0" 12)"
		expect "LUN $l Block Limits MAXIMUM WRITE SAME LENGTH" "$(cfg_lun "$l" max_write_same_length)" \
			"$(hex_be64 "$b0" 36)"
		if [ "$thin" = 1 ]; then
			expect "LUN $l Block Limits MAXIMUM UNMAP LBA COUNT" "$(cfg_lun "$l" max_unmap_lba_count)" \
				"$(hex_be32 "$b0" 20)"
			expect "LUN $l Block Limits MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT" \
				"$(cfg_lun "$l" max_unmap_descriptors)" "$(hex_be32 "$b0" 24)"
		fi
	else
		fail "LUN $l: Block Limits VPD page missing or short ($b0)"
	fi
	# Logical Block Provisioning VPD page (SBC-4 6.6.4): UNMAP is offered
	# exactly when the LU is thin provisioned.
	if [ "$thin" = 1 ]; then
		if [ "$(hex_len "$b2")" -ge 8 ]; then
			expect "LUN $l Logical Block Provisioning LBPU" 1 $((($(hex_u8 "$b2" 5) >> 7) & 1))
		else
			fail "LUN $l: Logical Block Provisioning VPD page missing ($b2)"
		fi
	fi
	# The kernel's view of the same strings (scsi_device sysfs).
	v=$(res "$p.sys.vendor")
	expect "LUN $l sysfs vendor" "$(cfg_lun "$l" vendor)" "${v%"${v##*[! ]}"}"
}
