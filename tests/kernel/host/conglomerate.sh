# shellcheck shell=bash
# Host side of the "conglomerate" check (guest: tests/kernel/guest/conglomerate.sh,
# suite: tests/kernel/suites/conglomerate.sh, docs/conglomerate.md): what
# Linux attached of a conglomerate (LUN 5, subsidiaries 1-4, 1-2 bound to
# every initiator) and what it did when bindings changed while it ran; the
# data written through subsidiaries in their backing files
# (<state_dir>/<target>/lun5/sub<E>.img); the sbcemuctl requests the host ran
# for the guest (CTL_LOG) and the daemon's log.
#
# What Linux does (seen on Debian's 6.1.192 and 6.12.118, as asserted below):
#  - the login scan (REPORT LUNS to LUN 0) adds LUN 0, 5, 65541 (5/1) and
#    131077 (5/2) as sd disks; the administrative LU is a disk of one
#    512-byte sector (READ CAPACITY: RETURNED LBA 0);
#  - the partition scan's READ(10) of the admin LU gets INVALID COMMAND
#    OPERATION CODE: sd switches that device to READ(6) for good
#    (use_10_for_rw = 0, scsi_io_completion_action), which fails the same
#    way ("critical target error": ILLEGAL REQUEST with ASC 20h is
#    BLK_STS_TARGET); "unable to read partition table"; a dd of it fails
#    with EREMOTEIO on 6.1, EIO on 6.12;
#  - 3F/0E: "LUN assignments on this target have changed", a uevent
#    SDEV_UA=REPORTED_LUNS_DATA_HAS_CHANGED on the device that got it (sent
#    whatever evt_lun_change_reported says: that sysfs file is read-only and 0)
#    and no scan; 3F/1A on the admin LU: "Operating parameters on this target
#    have changed" and no uevent.  Both reach an SG_IO caller (sg_turs exits 6);
#  - "- - -" > scan adds the bound subsidiary; "C T LUN" > scan adds one LUN;
#    before it is bound a scan of that LUN adds nothing (INQUIRY PQ 011b);
#  - an unbound subsidiary: reads and writes fail with EIO ("I/O error",
#    ASC 68h is not 20h/24h so BLK_STS_IOERR); the device stays "running",
#    also through a rescan, until device/delete.

# cong_lun LUN ELEMENT: the 8-byte LUN in hex as sg_luns -q prints it.
cong_lun() {
	printf '%04x%04x00000000' "$1" "$2"
}

# cong_sub_sha FILE OFFSET: sha256 of the 64 KiB at OFFSET of FILE.
cong_sub_sha() {
	dd if="$1" bs=65536 skip=$(($2 / 65536)) count=1 2>/dev/null | sha256sum | cut -d' ' -f1
}

# cong_match WHAT GLOB VALUE: one assertion, VALUE matches the bash pattern
# GLOB (write a literal [ or ] as \\[ \\]).
# (Not expect_true after a [[ ]]: a "$(res ...)" in expect_true's message
# would reset $? before expect_true reads it.)
cong_match() {
	HOST_ASSERTS=$((HOST_ASSERTS + 1))
	# shellcheck disable=SC2053 # GLOB is a pattern
	[[ $3 == $2 ]] && return 0
	HOST_FAILS+=("$1: expected to match '$2', got '$3'")
	return 1
}

host_conglomerate() {
	local la=5 lp=0 s1 s2 s3 s4 sub_sectors sub_bytes plain_sectors hct inq v lundir f e n log
	s1=$((la | 1 << 16))
	s2=$((la | 2 << 16))
	s3=$((la | 3 << 16))
	s4=$((la | 4 << 16))
	hct=$(res conglomerate.hct)
	sub_bytes=$(cfg_size 32M) # [lu "vvol"] size = 32M, logical_block_size = 512
	sub_sectors=$((sub_bytes / 512))
	plain_sectors=$(($(cfg_size "$(cfg_lun $lp size)") / 512))
	log=${DAEMON_LOG:-/dev/null}

	# ---- 1. the LUNs Linux attached after login ----
	expect "LUNs attached after login (Linux: admin | element << 16; 5/3, 5/4 unbound)" \
		"$lp $la $s1 $s2" "$(res conglomerate.devices)"
	expect "LUN 0 sectors" "$plain_sectors" "$(res conglomerate.lun${lp}_sectors)"
	expect "LUN 5/1 ($s1) sectors: the template's 32 MiB" "$sub_sectors" "$(res conglomerate.lun${s1}_sectors)"
	expect "LUN 5/2 ($s2) sectors: the template's 32 MiB" "$sub_sectors" "$(res conglomerate.lun${s2}_sectors)"
	expect "LUN 5/1 model (the template's product)" "kvm vvol" "$(res conglomerate.lun${s1}_model)"
	expect "LUN 5/1 peripheral device type" 0 "$(res conglomerate.lun${s1}_type)"
	# The administrative LU: READ CAPACITY says RETURNED LOGICAL BLOCK ADDRESS 0,
	# 512-byte blocks, so sd makes it a disk of one sector (capacity = LBA + 1).
	expect "admin LU (LUN 5) peripheral device type" 0 "$(res conglomerate.lun${la}_type)"
	expect "admin LU (LUN 5) sectors (RETURNED LBA 0 -> one 512-byte block)" 1 "$(res conglomerate.lun${la}_sectors)"
	expect "admin LU logical block size" 512 "$(res conglomerate.lun${la}_block_size)"
	expect "admin LU state" running "$(res conglomerate.lun${la}_state)"
	cong_match "sd's capacity line for the admin LU" "*\\[$(res conglomerate.admin_dev)\\] 1 512-byte logical blocks: (512 B/512 B)*" \
		"$(res conglomerate.admin_dmesg)"
	expect "READ CAPACITY(10) of the admin LU: RETURNED LBA 0, 512-byte blocks" 0000000000000200 \
		"$(res conglomerate.admin_read_capacity10)"
	v=$(res conglomerate.admin_read_capacity16)
	expect "READ CAPACITY(16) of the admin LU: RETURNED LBA 0, 512-byte blocks" 000000000000000000000200 "${v:0:24}"
	# Not asserted, recorded: admin_read_capacity16 byte 14 (LBPME, LBPRZ),
	# admin_provisioning_mode, admin_discard_max_bytes, admin_write_cache.
	cong_match "the partition scan's reads of the admin LU: sense" "Invalid command operation code" \
		"$(res conglomerate.admin_boot_sense)"
	cong_match "sd falls back to READ(6) on the admin LU (the READ(10) is retried silently)" \
		"*Read(6) 08 00 00 00 01 00" "$(res conglomerate.admin_boot_cdbs)"
	cong_match "the admin LU's partition table" "*unable to read partition table*" \
		"$(res conglomerate.admin_boot_partition)"
	# The daemon's PDU log (debug level): one READ(10), then READ(6) only.
	if grep -q 'LUN 0x0005000000000000, CDB\[0\]' "$log"; then
		expect "READ(10) commands the daemon got for the admin LU" 1 \
			"$(grep -c 'LUN 0x0005000000000000, CDB\[0\] 0x28)' "$log")"
		n=$(grep -c 'LUN 0x0005000000000000, CDB\[0\] 0x08)' "$log")
		[ "$n" -gt 0 ]
		expect_true "the daemon got READ(6) commands for the admin LU ($n)"
	fi
	# A 512-byte O_DIRECT read of the admin LU fails: on 6.1 with EREMOTEIO
	# (BLK_STS_TARGET); on 6.12 with EIO, and two READ(6) reach the daemon for
	# it (seen in its log; the partition scan's failures are "critical target
	# error" on both).
	if [ "$(kernel_model "$(res conglomerate.kernel)")" = 6.1 ]; then
		v="Remote I/O error"
	else
		v="Input/output error"
	fi
	expect "a read of the admin LU (dd, O_DIRECT) fails" "1 dd: /dev/$(res conglomerate.admin_dev): $v" \
		"$(res conglomerate.admin_read_rc) $(res conglomerate.admin_read_error)"

	# ---- 2. REPORT LUNS, LU_CONG, LU_COLL_TYPE ----
	local l0 a0 a1 a2 a3 a4 wl
	l0=$(cong_lun 0 0)
	a0=$(cong_lun $la 0)
	a1=$(cong_lun $la 1)
	a2=$(cong_lun $la 2)
	a3=$(cong_lun $la 3)
	a4=$(cong_lun $la 4)
	wl=c101000000000000
	expect "REPORT LUNS 00h on LUN 0" "$l0 $a0 $a1 $a2" "$(res conglomerate.luns_lun0_sr0)"
	expect "REPORT LUNS 02h on LUN 0 (+ the REPORT LUNS W-LUN)" "$l0 $a0 $a1 $a2 $wl" "$(res conglomerate.luns_lun0_sr2)"
	expect "REPORT LUNS 10h on LUN 0 (admin LUs)" "$a0" "$(res conglomerate.luns_lun0_sr10)"
	expect "REPORT LUNS 11h on LUN 0 (admin LUs + LUs of no conglomerate)" "$l0 $a0" "$(res conglomerate.luns_lun0_sr11)"
	# sg_luns exits 5 (SG_LIB_CAT_ILLEGAL_REQ) on 05/20/0D NOT AN ADMINISTRATIVE
	# LOGICAL UNIT (sg3_utils 1.46 names it "bad field in cdb").
	cong_match "REPORT LUNS 12h on LUN 0 is refused (illegal request)" "rc=5 *" "$(res conglomerate.luns_lun0_sr12)"
	cong_match "REPORT LUNS 12h on LUN 5/1 is refused (illegal request)" "rc=5 *" "$(res conglomerate.luns_sub1_sr12)"
	expect "REPORT LUNS 12h on the admin LU: itself and its bound subsidiaries" "$a0 $a1 $a2" \
		"$(res conglomerate.luns_admin_sr12)"
	expect "REPORT LUNS 00h on the admin LU" "$l0 $a0 $a1 $a2" "$(res conglomerate.luns_admin_sr0)"
	# sg_luns -d decodes two levels only when the LU it asked says LU_CONG = 1.
	cong_match "sg_luns -d -s 0x12 on the admin LU decodes 5/1" \
		"*0005000100000000 >>Administrative element: Simple lu addressing: 5 >>Subsidiary element: Simple lu addressing: 1*" \
		"$(res conglomerate.luns_decode_admin)"
	for e in "$lp:0" "$la:1" "$s1:1"; do
		inq=$(res "conglomerate.inquiry_${e%:*}")
		if [ -z "$inq" ]; then
			fail "no standard INQUIRY data of LUN ${e%:*}"
			continue
		fi
		expect "LUN ${e%:*}: standard INQUIRY byte 1 bit 6 LU_CONG" "${e#*:}" $((($(hex_u8 "$inq" 1) >> 6) & 1))
		expect "LUN ${e%:*}: sg_inq's LU_CONG" "LU_CONG=${e#*:}" "$(res "conglomerate.lu_cong_${e%:*}")"
		v=$(res "conglomerate.vpd86_${e%:*}")
		if [ "$(hex_len "$v")" -ge 9 ]; then
			expect "LUN ${e%:*}: Extended INQUIRY VPD byte 8 LU_COLL_TYPE (001b: conglomerate)" "${e#*:}" \
				$(($(hex_u8 "$v" 8) >> 5))
		else
			fail "LUN ${e%:*}: no Extended INQUIRY VPD page ('$v')"
		fi
		# sg_vpd 1.46 prints the field's value, not its name.
		cong_match "LUN ${e%:*}: sg_vpd -p ei" "*LU_COLL_TYPE=${e#*:} *" "$(res "conglomerate.vpd86_text_${e%:*}")"
	done
	# The subsidiary's SCSI name string designator ties it to the admin LU's NAA.
	v=$(res conglomerate.vpd83_admin | sed -n 's/^Device Identification VPD page: Addressed logical unit: designator type: NAA, code set: Binary 0x\([0-9a-f]*\) .*/\1/p')
	cong_match "LUN 5/1's Device Identification VPD: SCSI name string naa.<admin LU's NAA>,s,1" \
		"*SCSI name string: naa.${v^^},s,1 *" "$(res conglomerate.vpd83_sub1)"

	# ---- 3. data through 5/1 into lun5/sub1.img ----
	lundir="$STATE_DIR/$SUITE_TARGET/lun$la"
	expect "5/1: the pattern read back in the guest" 1 "$(res conglomerate.sub1_readback)"
	for e in 1 2 3 4; do
		f="$lundir/sub$e.img"
		if [ -f "$f" ]; then
			expect "size of $f (the template's size)" "$sub_bytes" "$(stat -c %s "$f")"
		else
			fail "no backing file $f"
		fi
	done
	f="$lundir/sub1.img"
	[ -f "$f" ] && expect "the pattern the guest wrote to 5/1, in $f at $(res conglomerate.sub1_offset)" \
		"$(res conglomerate.sub1_sha256)" "$(cong_sub_sha "$f" "$(res conglomerate.sub1_offset)")"

	# ---- 4. subsidiaries 3 and 4 bound while the guest ran ----
	expect "a scan of 5/3 alone before it is bound: the write to scan" 0 "$(res conglomerate.sub3_probe_unbound_scan_rc)"
	expect "a scan of 5/3 alone before it is bound adds nothing (INQUIRY: PQ 011b)" 0 \
		"$(res conglomerate.sub3_probe_unbound_attached)"
	local first_inq bound3
	first_inq=$(grep -n 'LUN 0x0005000300000000, CDB\[0\] 0x12)' "$log" | head -n1 | cut -d: -f1)
	bound3=$(grep -n "LUN $la: 1 subsidiaries bound for \* (3)" "$log" | head -n1 | cut -d: -f1)
	if grep -q 'LUN 0x0005000000000000, CDB\[0\]' "$log"; then
		[ -n "$first_inq" ] && [ -n "$bound3" ] && [ "$first_inq" -lt "$bound3" ]
		expect_true "that scan sent INQUIRY to 5/3 before the bind (daemon log lines ${first_inq:-none} < ${bound3:-none})"
	fi
	expect "bind 5/3: the kernel logs 'LUN assignments on this target have changed' (06/3F/0E)" 1 \
		"$(res conglomerate.bind3_logged)"
	# sg_turs exits 6 (SG_LIB_CAT_UNIT_ATTENTION): the UA reaches the SG_IO caller.
	cong_match "bind 5/3: the first TEST UNIT READY to LUN 0 gets 06/3F/0E" \
		"rc=6 *Unit Attention Additional sense: Reported luns data has changed*" "$(res conglomerate.bind3_turs)"
	cong_match "bind 5/3: the kernel logs it on LUN 0" \
		"sd $hct:$lp: LUN assignments on this target have changed. The Linux SCSI layer does not automatically remap LUN assignments." \
		"$(res conglomerate.bind3_dmesg)"
	cong_match "bind 5/3: the admin LU then reports 06/3F/1A" \
		"rc=6 *Unit Attention Additional sense: Subsidiary binding changed*" "$(res conglomerate.bind3_admin_turs)"
	expect "bind 5/3: the admin LU's next TEST UNIT READY" rc=0 "$(res conglomerate.bind3_admin_turs_again)"
	cong_match "bind 5/3: the kernel's text for 3F/1A" \
		"sd $hct:$la: Operating parameters on this target have changed.*" "$(res conglomerate.bind3_admin_dmesg)"
	expect "bind 5/3: the uevent" "change $hct:$lp SDEV_UA=REPORTED_LUNS_DATA_HAS_CHANGED" \
		"$(res conglomerate.bind3_uevents)"
	expect "bind 5/3: REPORT LUNS on LUN 0" "$l0 $a0 $a1 $a2 $a3" "$(res conglomerate.bind3_lun_list)"
	expect "bind 5/3: Linux adds no device by itself" 0 "$(res conglomerate.sub3_attached_before_scan)"
	expect "bind 5/3: after '- - -' > scan, 5/3 ($s3) is a 32 MiB disk" "$sub_sectors" "$(res conglomerate.sub3_sectors)"
	expect "5/3: write and read back" 0 "$(res conglomerate.sub3_io_rc)"
	f="$lundir/sub3.img"
	[ -f "$f" ] && expect "the pattern the guest wrote to 5/3, in $f at 2097152" \
		"$(res conglomerate.sub3_sha256)" "$(cong_sub_sha "$f" 2097152)"
	expect "LUNs after the bind and the rescan" "$lp $la $s1 $s2 $s3" "$(res conglomerate.devices_after_scan)"
	expect "bind 5/4: the kernel logs the LUN change again" 1 "$(res conglomerate.bind4_logged)"
	cong_match "bind 5/4: TEST UNIT READY to LUN 0 gets 06/3F/0E again" "rc=6 *Reported luns data has changed*" \
		"$(res conglomerate.bind4_turs)"
	expect "bind 5/4: not attached before the scan" 0 "$(res conglomerate.sub4_attached_before_scan)"
	expect "bind 5/4: after '$(echo "$hct" | cut -d: -f2-3 | tr : ' ') $s4' > scan, a 32 MiB disk" \
		"$sub_sectors" "$(res conglomerate.sub4_sectors)"

	# ---- 5. subsidiary 2 unbound ----
	expect "unbind 5/2: the kernel logs the LUN change" 1 "$(res conglomerate.unbind2_logged)"
	cong_match "unbind 5/2: TEST UNIT READY to LUN 0 gets 06/3F/0E" "rc=6 *Reported luns data has changed*" \
		"$(res conglomerate.unbind2_turs)"
	# ILLEGAL REQUEST with ASC 68h: BLK_STS_IOERR (only 20h / 24h give BLK_STS_TARGET).
	expect "unbind 5/2: an O_DIRECT read of its disk fails with EIO" \
		"1 dd: /dev/$(res conglomerate.unbind2_dev): Input/output error" \
		"$(res conglomerate.unbind2_read_rc) $(res conglomerate.unbind2_read_error)"
	expect "unbind 5/2: an O_DIRECT write to its disk fails" 1 "$(res conglomerate.unbind2_write_rc)"
	cong_match "unbind 5/2: the kernel logs 05/68/01 for the read" \
		"*Sense Key : Illegal Request \\[current\\] * | *Add. Sense: Subsidiary logical unit not configured | *CDB: Read(10) 28 00 00 00 00 00 00 00 08 00*I/O error, dev $(res conglomerate.unbind2_dev), sector 0 op 0x0:(READ)*" \
		"$(res conglomerate.unbind2_dmesg)"
	cong_match "unbind 5/2: TEST UNIT READY there (sg) is 05/68/01" \
		"rc=5 *Illegal Request Additional sense: Subsidiary logical unit not configured*" \
		"$(res conglomerate.unbind2_sub_turs)"
	v=$(res conglomerate.unbind2_inquiry)
	expect "unbind 5/2: INQUIRY byte 0 there (PQ 011b, PDT 1Fh)" 7f "${v:0:2}"
	expect "unbind 5/2: Linux keeps the device" 1 "$(res conglomerate.unbind2_attached)"
	expect "unbind 5/2: the device's state" running "$(res conglomerate.unbind2_state)"
	expect "unbind 5/2: a rescan of the host removes nothing" 1 "$(res conglomerate.unbind2_attached_after_scan)"
	expect "LUNs after the unbind and a rescan" "$lp $la $s1 $s2 $s3 $s4" "$(res conglomerate.devices_after_unbind)"
	expect "unbind 5/2: after echo 1 > device/delete it is gone" 0 "$(res conglomerate.unbind2_attached_after_delete)"
	# sd's SYNCHRONIZE CACHE on the way out gets 05/68/01 too.
	cong_match "unbind 5/2: the delete" "*Synchronizing SCSI cache*Subsidiary logical unit not configured*" \
		"$(res conglomerate.unbind2_delete_dmesg)"
	expect "LUNs at the end" "$lp $la $s1 $s3 $s4" "$(res conglomerate.devices_end)"
	expect "REPORT LUNS on LUN 0 at the end" "$l0 $a0 $a1 $a3 $a4" "$(res conglomerate.luns_end)"
	expect "REPORT LUNS 12h on the admin LU at the end" "$a0 $a1 $a3 $a4" "$(res conglomerate.luns_admin_end)"
	# Every 3F/0E gives a uevent on LUN 0; each new device one for its POWER ON.
	expect "the SDEV_UA uevents, in order" \
		"change $hct:$lp SDEV_UA=REPORTED_LUNS_DATA_HAS_CHANGED | change $hct:$s3 SDEV_UA=POWER_ON_RESET_OCCURRED | change $hct:$lp SDEV_UA=REPORTED_LUNS_DATA_HAS_CHANGED | change $hct:$s4 SDEV_UA=POWER_ON_RESET_OCCURRED | change $hct:$lp SDEV_UA=REPORTED_LUNS_DATA_HAS_CHANGED" \
		"$(res conglomerate.uevents)"

	# ---- what the host ran, and the daemon's side ----
	if [ -f "${CTL_LOG:-}" ]; then
		expect "the guest's requests, as run by the host (rc=exit status)" \
			"rc=0 subsidiary bind 5 3 --initiator *|rc=0 subsidiary bind 5 4 --initiator *|rc=0 subsidiary unbind 5 2 --initiator *|rc=0 subsidiaries 5" \
			"$(grep '^rc=[0-9]* ' "$CTL_LOG" | paste -sd '|')"
		expect "sbcemuctl subsidiaries 5 at the end (element=state/bound)" "1=open/* 2=open/- 3=open/* 4=open/*" \
			"$(awk '/^[0-9]+ / { printf "%s%s=%s/%s", sep, $1, $2, (NF >= 5 ? $5 : "-"); sep = " " }' "$CTL_LOG")"
	else
		fail "no log of the guest's requests"
	fi
	for e in 1 2 3 4; do
		n=$(grep -c "target $SUITE_TARGET LUN $la/$e: opened on first use" "$log")
		expect "the daemon opened subsidiary 5/$e once, on first use (log lines)" 1 "$n"
	done
}
