# shellcheck shell=sh
# Guest check "conglomerate": an administrative LU (LUN 5) and its subsidiary
# LUs (LUN 5/E, SAM-5 two-level LUN 00 05 00 EE 00 00 00 00) through Linux's
# SCSI scan, sd and sg over iSCSI (docs/conglomerate.md).  Linux makes the
# integer LUN admin | element << 16 (scsilun_to_int): 5/1 = 65541,
# 5/2 = 131077, 5/3 = 196613, 5/4 = 262149.  Reports (the host judges,
# tests/kernel/host/conglomerate.sh):
#  - the LUNs the kernel attached after login (REPORT LUNS to LUN 0, SELECT
#    REPORT 00h: LUN 0, 5, 5/1, 5/2; 5/3 and 5/4 are not bound), what sd made
#    of the administrative LU (no medium: READ CAPACITY says one 512-byte
#    block, READ is INVALID COMMAND OPERATION CODE) and the subsidiaries'
#    capacity (the template's 32 MiB);
#  - sg_luns with SELECT REPORT 00h, 10h, 11h (LUN 0) and 12h (LUN 5, and
#    refused on LUN 0), sg_inq's LU_CONG, sg_vpd's Extended INQUIRY
#    LU_COLL_TYPE and the subsidiary's SCSI name string designator;
#  - a pattern written with O_DIRECT to 5/1 and read back (the host finds it
#    in lun5/sub1.img);
#  - subsidiary 3 bound while the guest runs (sbce_host_ctl; suites/
#    conglomerate.sh runs sbcemuctl): the next command gets REPORTED LUNS
#    DATA HAS CHANGED (06/3F/0E), the kernel logs it and sends the uevent
#    SDEV_UA=REPORTED_LUNS_DATA_HAS_CHANGED, the admin LU then reports
#    SUBSIDIARY BINDING CHANGED (06/3F/1A); nothing is added until a rescan
#    of the host ("- - -"); subsidiary 4 bound and added by a scan of the
#    one LUN ("C T 262149");
#  - subsidiary 2 unbound: I/O to its disk fails with SUBSIDIARY LOGICAL UNIT
#    NOT CONFIGURED (05/68/01), the kernel keeps the device (also through a
#    rescan) until it is deleted through sysfs.

lp=${SBCE_CONG_PLAIN_LUN:-0}
la=${SBCE_CONG_ADMIN_LUN:-5}
s1=$((la | 1 << 16))
s2=$((la | 2 << 16))
s3=$((la | 3 << 16))
s4=$((la | 4 << 16))
h0=$(sbce_lun_var HCTL "$lp")
sg0=$(sbce_lun_var SG "$lp")
[ -n "$h0" ] || sbce_fail "LUN $lp has no disk"
hct=${h0%:*}
host=${h0%%:*}
chan=$(echo "$hct" | cut -d: -f2)
tgt=$(echo "$hct" | cut -d: -f3)
scan=/sys/class/scsi_host/host$host/scan

attached() { [ -e "/sys/class/scsi_device/$hct:$1" ]; }
has_disk() { sbce_disk_of "$hct:$1" >/dev/null; }
# lines KEY PATTERN: the dmesg lines matching PATTERN, joined with " | ".
lines() {
	sbce_value "$1" "$(dmesg | grep -E "$2" | sed 's/^\[[ 0-9.]*\] //' | head -n 8 | paste -sd'|' | sed 's/|/ | /g')"
}
# one_line: standard input as one line (output of a tool).
one_line() {
	tr '\n' ' ' | tr -s ' ' | sed 's/ *$//' | cut -c1-600
}
# luns KEY SELECT SG: REPORT LUNS with SELECT REPORT through sg: the LUNs
# (hex, one space between) or "rc=N ..." when sg_luns fails.
luns() {
	_rc=0
	sg_luns -q -s "$2" "$3" >/tmp/luns.out 2>&1 || _rc=$?
	if [ "$_rc" = 0 ]; then
		sbce_value "$1" "$(one_line </tmp/luns.out)"
	else
		sbce_value "$1" "rc=$_rc $(one_line </tmp/luns.out)"
	fi
}
# ua_wait KEY: after a CTL request, sends TEST UNIT READY to LUN 0 through sg
# every half second (up to 60 s) until the kernel logs the LUN change;
# reports KEY_turs (the first sg_turs that did not succeed: exit status and
# message) and KEY_logged (1 or 0).
ua_wait() {
	_n=120
	_seen=0
	while [ "$_n" -gt 0 ]; do
		_rc=0
		sg_turs -v "$sg0" >/tmp/turs.out 2>&1 || _rc=$?
		if [ "$_rc" != 0 ] && [ "$_seen" = 0 ]; then
			sbce_value "$1_turs" "rc=$_rc $(one_line </tmp/turs.out)"
			_seen=1
		fi
		if dmesg | grep -q 'LUN assignments on this target have changed'; then
			[ "$_seen" = 1 ] || sbce_value "$1_turs" "none failed"
			sbce_value "$1_logged" 1
			return 0
		fi
		sleep 0.5
		_n=$((_n - 1))
	done
	sbce_value "$1_logged" 0
}

# uevents: busybox uevent runs /tmp/ue.sh for every netlink uevent (no udev
# here); the SDEV_UA ones are kept.
cat >/tmp/ue.sh <<'EOS'
#!/bin/sh
[ -n "$SDEV_UA" ] && echo "$ACTION ${DEVPATH##*/} SDEV_UA=$SDEV_UA" >>/tmp/uevents
exit 0
EOS
chmod +x /tmp/ue.sh
: >/tmp/uevents
uevent /tmp/ue.sh &
ue_pid=$!
trap 'kill $ue_pid 2>/dev/null' EXIT

# ---- 1. what the kernel attached after login ----
sbce_value kernel "$(uname -r)"
sbce_value hct "$hct"
sbce_value devices "$(sbce_iscsi_devices | sed 's/.*://' | sort -n | paste -sd' ')"
for l in $lp $la $s1 $s2; do
	b=$(sbce_disk_of "$hct:$l") || { sbce_value "lun${l}_sectors" none; continue; }
	d=/sys/class/scsi_device/$hct:$l/device
	sbce_value "lun${l}_sectors" "$(cat "/sys/block/$b/size")"
	sbce_value "lun${l}_block_size" "$(cat "/sys/block/$b/queue/logical_block_size")"
	sbce_value "lun${l}_type" "$(cat "$d/type")"
	sbce_value "lun${l}_model" "$(sed 's/ *$//' "$d/model")"
	sbce_value "lun${l}_state" "$(cat "$d/state")"
done
ba=$(sbce_lun_var BLOCK "$la")
sga=$(sbce_lun_var SG "$la")
b1=$(sbce_lun_var BLOCK "$s1")
sg1=$(sbce_lun_var SG "$s1")
b2=$(sbce_lun_var BLOCK "$s2")
if [ -z "$ba" ] || [ -z "$b1" ] || [ -z "$b2" ]; then
	sbce_fail "LUN $la, $s1 or $s2 has no disk"
fi
sbce_value admin_dev "$ba"
# What sd said while attaching the administrative LU (capacity, the partition
# table read that READ refuses) and the subsidiaries.
lines admin_dmesg "\[$ba\]|dev $ba|on $ba|$hct:$la:"
lines sub1_dmesg "\[$b1\]"
# The partition scan's reads of the administrative LU (READ is 05/20/00
# there): the CDBs sd sent, the sense it logged, what the partition code said.
sbce_value admin_boot_cdbs "$(dmesg | grep "\[$ba\].*CDB:" | sed 's/.*CDB: //' | sort | uniq -c | one_line)"
sbce_value admin_boot_sense "$(dmesg | grep "\[$ba\].*Add. Sense:" | sed 's/.*Add. Sense: //' | sort -u | one_line)"
lines admin_boot_partition "$ba: |dev $ba:"
sbce_file_value admin_provisioning_mode "/sys/class/scsi_device/$hct:$la/device/scsi_disk/$hct:$la/provisioning_mode"
sbce_file_value admin_discard_max_bytes "/sys/block/$ba/queue/discard_max_bytes"
sbce_file_value admin_write_cache "/sys/class/scsi_device/$hct:$la/device/scsi_disk/$hct:$la/cache_type"
# A read of the administrative LU now (sd's messages about it are rate
# limited by then: the partition scan's failures used the burst).
rc=0
dd if="/dev/$ba" of=/dev/null bs=512 count=1 iflag=direct 2>/tmp/dd.err || rc=$?
sbce_value admin_read_rc $rc
sbce_value admin_read_error "$(one_line </tmp/dd.err)"
sbce_value admin_read_capacity16 "$(sg_readcap -16 --raw "$sga" 2>/dev/null | head -c 16 | sbce_hex)"
sbce_value admin_read_capacity10 "$(sg_readcap --raw "$sga" 2>/dev/null | head -c 8 | sbce_hex)"

# ---- 2. REPORT LUNS, LU_CONG, LU_COLL_TYPE ----
luns luns_lun0_sr0 0 "$sg0"
luns luns_lun0_sr2 2 "$sg0"
luns luns_lun0_sr10 0x10 "$sg0"
luns luns_lun0_sr11 0x11 "$sg0"
luns luns_lun0_sr12 0x12 "$sg0"
luns luns_admin_sr12 0x12 "$sga"
luns luns_admin_sr0 0 "$sga"
luns luns_sub1_sr12 0x12 "$sg1"
sbce_info "sg_luns -d -l LUN 0: $(sg_luns -d -l "$sg0" 2>&1 | one_line)"
sbce_info "sg_luns -d -l -s 0x12 LUN $la: $(sg_luns -d -l -s 0x12 "$sga" 2>&1 | one_line)"
sbce_value luns_decode_admin "$(sg_luns -d -s 0x12 "$sga" 2>&1 | one_line)"
for l in $lp $la $s1; do
	sg=$(sbce_lun_var SG "$l")
	sbce_value "inquiry_$l" "$(sg_inq --raw "$sg" 2>/dev/null | head -c 8 | sbce_hex)"
	sbce_value "lu_cong_$l" "$(sg_inq "$sg" 2>&1 | grep -o 'LU_CONG=[01]' | head -n1)"
	sbce_value "vpd86_$l" "$(sg_vpd -p ei --raw "$sg" 2>/dev/null | head -c 16 | sbce_hex)"
	sbce_value "vpd86_text_$l" "$(sg_vpd -p ei "$sg" 2>&1 | grep -iE 'coll|cong' | one_line)"
done
sbce_value vpd83_admin "$(sg_vpd -p di "$sga" 2>&1 | one_line)"
sbce_value vpd83_sub1 "$(sg_vpd -p di "$sg1" 2>&1 | one_line)"

# ---- 3. data through subsidiary 5/1 ----
head -c 65536 /dev/urandom >/tmp/p1
sbce_run dd if=/tmp/p1 of="/dev/$b1" bs=65536 seek=16 count=1 oflag=direct conv=notrunc
dd if="/dev/$b1" of=/tmp/p1.back bs=65536 skip=16 count=1 iflag=direct 2>/dev/null
sbce_value sub1_readback "$(sbce_yes_no cmp -s /tmp/p1 /tmp/p1.back)"
sbce_value sub1_sha256 "$(sha256sum </tmp/p1 | cut -d' ' -f1)"
sbce_value sub1_offset 1048576

# ---- 4. subsidiaries bound at run time ----
d0=/sys/class/scsi_device/$h0/device
# (read-only in sysfs; scsi_lib.c sends the event whatever it says)
sbce_file_value evt_lun_change_reported "$d0/evt_lun_change_reported"
# Before the bind, a scan of 5/3 alone: INQUIRY there is PERIPHERAL QUALIFIER
# 011b / PDT 1Fh, so the kernel adds no device.
rc=0
echo "$chan $tgt $s3" >"$scan" 2>/dev/null || rc=1
sbce_value sub3_probe_unbound_scan_rc $rc
sbce_value sub3_probe_unbound_attached "$(sbce_yes_no attached "$s3")"

dmesg -c >/dev/null
sbce_host_ctl "subsidiary bind $la 3 --initiator *"
ua_wait bind3
lines bind3_dmesg "LUN assignments|operating parameters|Sense|sense"
# The admin LU then reports 3F/1A SUBSIDIARY BINDING CHANGED once.
rc=0
sg_turs -v "$sga" >/tmp/turs.out 2>&1 || rc=$?
sbce_value bind3_admin_turs "rc=$rc $(one_line </tmp/turs.out)"
rc=0
sg_turs "$sga" >/dev/null 2>&1 || rc=$?
sbce_value bind3_admin_turs_again "rc=$rc"
lines bind3_admin_dmesg "operating parameters|$hct:$la:"
sleep 1
sbce_value bind3_uevents "$(paste -sd'|' /tmp/uevents | sed 's/|/ | /g')"
sbce_value bind3_lun_list "$(sg_luns -q "$sg0" 2>&1 | one_line)"
# Linux does not scan by itself.
sleep 2
sbce_value sub3_attached_before_scan "$(sbce_yes_no attached "$s3")"
echo "- - -" >"$scan"
if sbce_wait_for 30 has_disk "$s3"; then
	b3=$(sbce_disk_of "$hct:$s3")
	sbce_value sub3_sectors "$(cat "/sys/block/$b3/size")"
	head -c 65536 /dev/urandom >/tmp/p3
	rc=0
	{ dd if=/tmp/p3 of="/dev/$b3" bs=65536 seek=32 count=1 oflag=direct conv=notrunc 2>/dev/null &&
		dd if="/dev/$b3" of=/tmp/p3.back bs=65536 skip=32 count=1 iflag=direct 2>/dev/null &&
		cmp -s /tmp/p3 /tmp/p3.back; } || rc=$?
	sbce_value sub3_io_rc $rc
	sbce_value sub3_sha256 "$(sha256sum </tmp/p3 | cut -d' ' -f1)"
else
	sbce_value sub3_sectors none
fi
sbce_value devices_after_scan "$(sbce_iscsi_devices | sed 's/.*://' | sort -n | paste -sd' ')"

# Subsidiary 4: bound, then a scan of that one LUN.
dmesg -c >/dev/null
sbce_host_ctl "subsidiary bind $la 4 --initiator *"
ua_wait bind4
sbce_value sub4_attached_before_scan "$(sbce_yes_no attached "$s4")"
echo "$chan $tgt $s4" >"$scan"
if sbce_wait_for 30 has_disk "$s4"; then
	sbce_value sub4_sectors "$(cat "/sys/block/$(sbce_disk_of "$hct:$s4")/size")"
else
	sbce_value sub4_sectors none
fi
lines bind4_dmesg "$hct:$s4|LUN assignments"

# ---- 5. subsidiary 2 unbound ----
sbce_value unbind2_dev "$b2"
dmesg -c >/dev/null
sbce_host_ctl "subsidiary unbind $la 2 --initiator *"
ua_wait unbind2
rc=0
dd if="/dev/$b2" of=/dev/null bs=4096 count=1 iflag=direct 2>/tmp/dd.err || rc=$?
sbce_value unbind2_read_rc $rc
sbce_value unbind2_read_error "$(one_line </tmp/dd.err)"
rc=0
dd if=/tmp/p1 of="/dev/$b2" bs=65536 count=1 oflag=direct conv=notrunc 2>/tmp/dd.err || rc=$?
sbce_value unbind2_write_rc $rc
sg2=$(sbce_lun_var SG "$s2")
rc=0
sg_turs -v "$sg2" >/tmp/turs.out 2>&1 || rc=$?
sbce_value unbind2_sub_turs "rc=$rc $(one_line </tmp/turs.out)"
sbce_value unbind2_inquiry "$(sg_inq --raw "$sg2" 2>/dev/null | head -c 8 | sbce_hex)"
lines unbind2_dmesg "Sense|sense|error|$hct:$s2"
sbce_value unbind2_state "$(cat "/sys/class/scsi_device/$hct:$s2/device/state" 2>/dev/null || echo gone)"
sbce_value unbind2_attached "$(sbce_yes_no attached "$s2")"
# A rescan of the host removes nothing.
echo "- - -" >"$scan"
sleep 2
sbce_value unbind2_attached_after_scan "$(sbce_yes_no attached "$s2")"
sbce_value devices_after_unbind "$(sbce_iscsi_devices | sed 's/.*://' | sort -n | paste -sd' ')"
dmesg -c >/dev/null
echo 1 >"/sys/class/scsi_device/$hct:$s2/device/delete"
sbce_wait_for 10 sh -c "! [ -e /sys/class/scsi_device/$hct:$s2 ]" || true
sbce_value unbind2_attached_after_delete "$(sbce_yes_no attached "$s2")"
lines unbind2_delete_dmesg "."
sbce_value devices_end "$(sbce_iscsi_devices | sed 's/.*://' | sort -n | paste -sd' ')"
sbce_value luns_end "$(sg_luns -q "$sg0" 2>&1 | one_line)"
sbce_value luns_admin_end "$(sg_luns -q -s 0x12 "$sga" 2>&1 | one_line)"
sbce_value uevents "$(paste -sd'|' /tmp/uevents | sed 's/|/ | /g')"
sbce_host_ctl "subsidiaries $la"
# (CTL gets no answer: give the host time to run it before the guest powers off.)
sleep 2
