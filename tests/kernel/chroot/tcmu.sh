#!/bin/bash
# Check "tcmu" of the kernel suite "tcmu" (tests/kernel/suites/tcmu.sh), in
# the host's root inside the guest: targetcli finds user:sbcemu over D-Bus,
# refuses a bad cfgstring with sbcemu's reason, creates backstores of each
# kind, tcm_loop puts them in front of sd; what sd sees (capacity, zones,
# atomic write limits) is what the cfgstrings say, data written through the
# ring reaches the backing files, and the runtime control's fault rules and
# LU states act on a backstore.  docs/tcmu.md, docs/control.md.
. "$SBCE_REPO/tests/kernel/chroot/lib.sh"

setup_base
sbcemud_start
log_since 0 | grep -q 'TCMU front end: serving user:sbcemu backstores (0 now)' ||
	fail "the TCMU front end did not start: $(grep -m1 -i tcmu "$DLOG")"

# targetcli lists the handler and its ConfigDesc (org.kernel.TCMUService1 over D-Bus).
out=$(targetcli ls /backstores 2>&1)
echo "$out"
grep -q 'user:sbcemu' <<<"$out" || fail "targetcli ls does not list user:sbcemu"
out=$(targetcli /backstores/user:sbcemu help create 2>&1)
grep -q "key=value pairs separated by ';'" <<<"$out" || fail "targetcli help create does not show the ConfigDesc"

# A bad cfgstring: targetcli prints sbcemu's reason (CheckConfig) and creates nothing.
step "targetcli create name=bad cfgstring=kind=floppy;path=bad.img"
out=$(targetcli /backstores/user:sbcemu create name=bad size=64M 'cfgstring=kind=floppy;path=bad.img' 2>&1)
echo "$out"
grep -qF 'cfgstring invalid: cfgstring: kind: "floppy" is not one of conventional, zbc-hm, zbc-ha, zbc-zd or conglomerate' \
	<<<"$out" || fail "bad cfgstring: targetcli said: $out"
ls -d $CFS/core/user_*/bad 2>/dev/null && fail "the refused backstore exists in configfs"
value bad_cfgstring refused
# A conglomerate needs REPORT LUNS and two-level LUNs, which LIO keeps to itself (docs/conglomerate.md).
step "targetcli create name=cong cfgstring=kind=conglomerate"
out=$(targetcli /backstores/user:sbcemu create name=cong size=64M 'cfgstring=kind=conglomerate' 2>&1)
echo "$out"
grep -qF 'a conglomerate is served by the iSCSI front end only' <<<"$out" ||
	fail "conglomerate cfgstring: targetcli said: $out"
ls -d $CFS/core/user_*/cong 2>/dev/null && fail "the refused conglomerate backstore exists in configfs"
value conglomerate_cfgstring refused
# ALUA on a backstore is LIO's (REPORT / SET TARGET PORT GROUPS never reach sbcemu, docs/tcmu.md).
step "targetcli create name=alua cfgstring=alua=both;path=alua.img"
out=$(targetcli /backstores/user:sbcemu create name=alua size=64M 'cfgstring=alua=both;path=alua.img' 2>&1)
echo "$out"
grep -qF 'LIO answers REPORT and SET TARGET PORT GROUPS for a TCMU backstore' <<<"$out" ||
	fail "alua cfgstring: targetcli said: $out"
ls -d $CFS/core/user_*/alua 2>/dev/null && fail "the refused alua backstore exists in configfs"
value alua_cfgstring refused

# One backstore of each kind that TCMU can carry, in front of sd through
# tcm_loop, one loopback target (SCSI host) each with the backstore as LUN 0:
# after restoreconfig tcm_loop scans only LUN 0 of a host (its max_lun),
# whatever the backstore.  One targetcli run: each costs seconds under TCG.
step "targetcli: 5 user:sbcemu backstores, 5 tcm_loop targets"
targetcli <<EOT || fail "targetcli (backstores, tcm_loop) failed"
set global auto_save_on_exit=false
/backstores/user:sbcemu create name=conv0 size=64M cfgstring=path=conv0.img;product=tcmu-conv;thin_provisioning=true
/backstores/user:sbcemu create name=zbc0 size=64M cfgstring=kind=zbc-hm;zone_size=4M;conventional_zones=1;max_open_zones=8;path=zbc0.img;product=tcmu-zbc
/backstores/user:sbcemu create name=faulty0 size=64M cfgstring=lu=zbc-faulty;path=faulty0.img
/backstores/user:sbcemu create name=atomic0 size=64M cfgstring=path=atomic0.img;product=tcmu-atomic;max_atomic_transfer_length=128;max_transfer_length=2048
/backstores/user:sbcemu create name=zd0 size=72M cfgstring=kind=zbc-zd;zone_size=4M;realm_zones=2;active_domain=1;gap_zones=2;urswrz=true;path=zd0.img;product=tcmu-zd
/loopback create ${LOOP_WWN}1
/loopback/${LOOP_WWN}1/luns create /backstores/user:sbcemu/conv0 lun=0
/loopback create ${LOOP_WWN}2
/loopback/${LOOP_WWN}2/luns create /backstores/user:sbcemu/zbc0 lun=0
/loopback create ${LOOP_WWN}3
/loopback/${LOOP_WWN}3/luns create /backstores/user:sbcemu/faulty0 lun=0
/loopback create ${LOOP_WWN}4
/loopback/${LOOP_WWN}4/luns create /backstores/user:sbcemu/atomic0 lun=0
/loopback create ${LOOP_WWN}5
/loopback/${LOOP_WWN}5/luns create /backstores/user:sbcemu/zd0 lun=0
EOT
lsblk -o NAME,SIZE,MODEL,ZONED 2>/dev/null || true

conv=$(disk_of tcmu-conv) || fail "no sd disk for user:sbcemu/conv0"
zbc=$(disk_of tcmu-zbc) || fail "no sd disk for user:sbcemu/zbc0"
faulty=$(disk_of "tcmu zbc faulty") || fail "no sd disk for user:sbcemu/faulty0"
atomic=$(disk_of tcmu-atomic) || fail "no sd disk for user:sbcemu/atomic0"
zd=$(disk_of tcmu-zd) || fail "no sd disk for user:sbcemu/zd0"
info "disks: conv0 $conv, zbc0 $zbc, faulty0 $faulty, atomic0 $atomic, zd0 $zd"
# LIO reports each new LUN to the others (06/3F/0E REPORTED LUNS DATA HAS
# CHANGED); sd's REPORT ZONES does not retry unit attentions: take them first.
for d in $conv $zbc $faulty $atomic $zd; do settle "$d"; done

# conv0: capacity, and data through the ring into the backing file.
[ "$(blockdev --getsize64 "$conv")" = 67108864 ] || fail "conv0: $(blockdev --getsize64 "$conv") bytes, not 64 MiB"
head -c 1048576 /dev/urandom >/tmp/pattern
expect "conv0 write" dd if=/tmp/pattern of="$conv" bs=64k seek=64 oflag=direct status=none
dd if="$conv" bs=64k skip=64 count=16 iflag=direct status=none | cmp -s - /tmp/pattern ||
	fail "conv0: the data read back differs"
dd if="$STATE/conv0.img" bs=64k skip=64 count=16 status=none | cmp -s - /tmp/pattern ||
	fail "conv0: the backing file does not hold the data written"
value conv0_data ok

# The runtime control on a TCMU backstore (docs/control.md, "tcmu"): a
# medium-error rule on conv0's blocks 8192-8199 reaches the application as
# an error (ENODATA: the block layer's BLK_STS_MEDIUM) with the LBA in dmesg (SBC-4: 03/11/00, INFORMATION = the LBA, passed
# through the ring and LIO), a 4 KiB write repairs them; offline makes reads
# fail, ready brings them back.
CTL=("$SBCE_BUILDDIR/daemon/sbcemuctl" --state-dir "$STATE")
step "sbcemuctl fault add 0 medium-error --lba 8192-8199 --tcmu conv0"
rule=$("${CTL[@]}" --json fault add 0 medium-error --lba 8192-8199 --tcmu conv0) ||
	fail "sbcemuctl fault add --tcmu conv0 failed"
rule=$(tr -dc '0-9' <<<"$rule")
"${CTL[@]}" lus | tee /tmp/lus | grep -q '^tcmu:conv0 ' || fail "sbcemuctl lus does not list tcmu:conv0: $(cat /tmp/lus)"
dmesg -c >/dev/null
if dd if="$conv" of=/dev/null bs=512 skip=8192 count=1 iflag=direct status=none 2>/tmp/dd.err; then
	fail "conv0: a read of a block under a medium-error rule succeeded"
fi
# The block layer hands a medium error to the application as ENODATA (BLK_STS_MEDIUM), others as EIO.
grep -qE 'No data available|Input/output error' /tmp/dd.err || fail "conv0: the failed read said: $(cat /tmp/dd.err)"
dmesg | grep -iE 'medium|sense|sector' | head -n 6
dmesg | grep -q "critical medium error.*sector 8192 " || fail "conv0: dmesg has no medium error at sector 8192"
expect "conv0 repairing write" dd if=/dev/zero of="$conv" bs=4096 seek=1024 count=1 oflag=direct conv=notrunc status=none
expect "conv0 read after the repair" dd if="$conv" of=/dev/null bs=4096 skip=1024 count=1 iflag=direct status=none
"${CTL[@]}" --json fault list | tee /tmp/rules | grep -q '"tcmu": "conv0"' || fail "fault list: $(cat /tmp/rules)"
# Only this rule: faulty0's offline zones are rules too (made from its template's offline_zones).
"${CTL[@]}" fault remove "$rule" || fail "sbcemuctl fault remove $rule failed"
value conv0_medium_error ok
"${CTL[@]}" lu state 0 offline --tcmu conv0 || fail "sbcemuctl lu state 0 offline --tcmu conv0 failed"
if dd if="$conv" of=/dev/null bs=4096 count=1 iflag=direct status=none 2>/dev/null; then
	fail "conv0: a read of an offline LU succeeded"
fi
"${CTL[@]}" lu state 0 ready --tcmu conv0 || fail "sbcemuctl lu state 0 ready --tcmu conv0 failed"
expect "conv0 read when ready again" dd if="$conv" of=/dev/null bs=4096 count=1 iflag=direct status=none
value conv0_offline ok

# zbc0: a host-managed zoned disk with the cfgstring's zones.
b=${zbc#/dev/}
[ "$(cat /sys/block/$b/queue/zoned)" = host-managed ] || fail "zbc0: queue/zoned is $(cat /sys/block/$b/queue/zoned)"
[ "$(cat /sys/block/$b/queue/nr_zones)" = 16 ] || fail "zbc0: $(cat /sys/block/$b/queue/nr_zones) zones, not 16"
[ "$(cat /sys/block/$b/queue/chunk_sectors)" = 8192 ] || fail "zbc0: zones of $(cat /sys/block/$b/queue/chunk_sectors) sectors"
blkzone report "$zbc" | tee /tmp/zones | head -n 4
grep -c 'CONVENTIONAL' /tmp/zones | grep -qx 1 || fail "zbc0: not exactly one conventional zone"
grep -c 'SEQ_WRITE_REQUIRED' /tmp/zones | grep -qx 15 || fail "zbc0: not 15 sequential write required zones"
expect "zbc0 write at the write pointer" dd if=/tmp/pattern of="$zbc" bs=64k seek=$((8192 * 512 / 65536)) count=1 \
	oflag=direct status=none
blkzone report -o 8192 -c 1 "$zbc" | tee /tmp/zone1
grep -q 'wptr 0x000080' /tmp/zone1 || fail "zbc0: zone 1's write pointer did not move to 128: $(cat /tmp/zone1)"
# Not at the write pointer: UNALIGNED WRITE COMMAND (05/21/04), the write fails.
if dd if=/tmp/pattern of="$zbc" bs=64k seek=$((8192 * 512 * 2 / 65536 + 1)) count=1 oflag=direct status=none 2>/dev/null; then
	fail "zbc0: a write past zone 2's write pointer succeeded"
fi
value zbc0_zones ok

# faulty0 (the [lu "zbc-faulty"] template): zones 5 and 7 offline.
blkzone report "$faulty" >/tmp/fzones
[ "$(grep -c 'zcond:15(of)' /tmp/fzones)" = 2 ] || fail "faulty0: not two offline zones: $(grep -c '(of)' /tmp/fzones)"
grep -q 'start: 0x00000a000.*zcond:15(of)' /tmp/fzones || fail "faulty0: zone 5 is not offline"
grep -q 'start: 0x00000e000.*zcond:15(of)' /tmp/fzones || fail "faulty0: zone 7 is not offline"
value faulty0_template ok

# zd0: a zone domains LU through the ring, probed with the ZBC-2 commands as
# libzbc encodes them (the zbc suite's zbc_zd check, the same probe); the
# host decodes the answers as it does for the iSCSI LU (host_tcmu).
# shellcheck source=tests/kernel/guest/zbc_zd.sh
ZD_PROBE_LIB=1 . "$SBCE_REPO/tests/kernel/guest/zbc_zd.sh"
zd_probe "$(sg_of "$zd")" value zd_

# atomic0: sd's atomic write limits (6.11 and later) from the Block Limits VPD page.
q=/sys/block/${atomic#/dev/}/queue
if [ -e $q/atomic_write_unit_max_bytes ]; then
	value atomic_unit_max "$(cat $q/atomic_write_unit_max_bytes)"
	mark=$(log_mark)
	r=$(/sbce/bin/rwf_atomic "$atomic" 0 "$(cat $q/atomic_write_unit_max_bytes)" 0xa1)
	value rwf_atomic "$r"
	[ "$r" = "write=ok readback=ok" ] || fail "atomic0: RWF_ATOMIC write: $r"
	n=$(log_since "$mark" | grep -c 'CDB\[0\] 0x9c') || true
	value write_atomic_16_seen "$n"
	[ "$n" -ge 1 ] || fail "atomic0: no WRITE ATOMIC(16) reached sbcemud"
else
	value atomic_unit_max absent
fi
exit 0
