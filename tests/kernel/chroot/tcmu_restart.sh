#!/bin/bash
# Check "tcmu_restart" of the kernel suite "tcmu", after "tcmu" (its
# backstores and tcm_loop LUNs stay): sbcemud is killed with SIGKILL while
# writes are in flight and started again with the devices still configured;
# the I/O resumes, nothing acknowledged is lost, zone write pointers stay.
# Then targetcli saveconfig / clearconfig / restoreconfig brings the same
# backstores back on the same backing files.  docs/tcmu.md, "Restart".
. "$SBCE_REPO/tests/kernel/chroot/lib.sh"

conv=$(disk_of tcmu-conv) || fail "no conv0 disk (did check tcmu run?)"
zbc=$(disk_of tcmu-zbc) || fail "no zbc0 disk"

# A clean restart: conv0 holds nothing only in memory, so to the kernel's nexus the restarted
# daemon reports no power on, and the first command is GOOD (docs/tcmu.md, "POWER ON after a restart").
settle "$conv"
mark=$(log_mark)
step "sbcemud stopped with SIGTERM, started again"
sbcemud_stop TERM
sbcemud_start
log_since "$mark" | grep -q "$NDEV sbcemu devices found at start" || fail "the clean restart did not attach the $NDEV devices"
sg_turs "$(sg_of "$conv")" >/tmp/turs 2>&1 ||
	fail "the first command to conv0 after a clean restart was not GOOD: $(tr '\n' ' ' </tmp/turs)"
value clean_restart_no_power_on ok

# Acknowledged before the kill: 1 MiB at 8 MiB.
head -c 1048576 /dev/urandom >/tmp/acked
expect "write before the kill" dd if=/tmp/acked of="$conv" bs=64k seek=128 oflag=direct status=none

# Writes in flight (one 64 KiB block at a time, so some are in the ring) when the daemon dies.
head -c 4194304 /dev/urandom >/tmp/inflight
dd if=/tmp/inflight of="$conv" bs=64k seek=256 oflag=direct,dsync status=none &
writer=$!
sleep 0.5
mark=$(log_mark)
step "kill -9 sbcemud"
sbcemud_stop KILL
sleep 1
sbcemud_start
wait "$writer" || fail "the writes in flight failed across the restart (dd exited $?)"
log_since "$mark" | grep -E 'found at start|failed back|pending ADDED' | sed 's/^/  /'
log_since "$mark" | grep -q "$NDEV sbcemu devices found at start" || fail "the restarted daemon did not attach the $NDEV devices"
dd if="$conv" bs=64k skip=128 count=16 iflag=direct status=none | cmp -s - /tmp/acked ||
	fail "data acknowledged before the kill differs after the restart"
dd if="$conv" bs=64k skip=256 count=64 iflag=direct status=none | cmp -s - /tmp/inflight ||
	fail "the writes in flight during the restart did not all land"
value restart_data ok
# The restarted device server reports 06/29/00 POWER ON first (SAM-5 6.3.3); sd's REPORT ZONES would not retry it.
settle "$zbc"
blkzone report -o 8192 -c 1 "$zbc" | tee /tmp/zone1
grep -q 'wptr 0x000080' /tmp/zone1 || fail "zbc0: zone 1's write pointer after the restart: $(cat /tmp/zone1)"
value restart_write_pointer ok

# saveconfig, clearconfig (the devices go: sbcemud detaches them), restoreconfig.
step "targetcli saveconfig / clearconfig / restoreconfig"
expect saveconfig targetcli saveconfig /var/tmp/tcmu-saved.json >/dev/null
grep -q '"config": "sbcemu/kind=zbc-hm;zone_size=4M' /var/tmp/tcmu-saved.json ||
	fail "saveconfig did not keep zbc0's cfgstring: $(grep '"config"' /var/tmp/tcmu-saved.json | head -n 2)"
mark=$(log_mark)
expect clearconfig targetcli clearconfig confirm=True >/dev/null
for t in $(seq 1 50); do
	[ "$(log_since "$mark" | grep -c 'detached')" -ge "$NDEV" ] && break
	sleep 0.2
done
[ "$(log_since "$mark" | grep -c ' detached')" = "$NDEV" ] || fail "clearconfig: sbcemud did not detach the $NDEV devices"
ls /sys/block | grep -q '^sd' && fail "clearconfig left sd disks: $(ls /sys/block | grep '^sd' | tr '\n' ' ')"
out=$(targetcli restoreconfig /var/tmp/tcmu-saved.json 2>&1)
echo "$out"
grep -q 'Configuration restored' <<<"$out" && ! grep -q 'recoverable error' <<<"$out" || fail "restoreconfig: $out"
conv=$(disk_of tcmu-conv) || fail "restoreconfig: no conv0 disk"
zbc=$(disk_of tcmu-zbc) || fail "restoreconfig: no zbc0 disk"
for d in $conv $zbc; do settle "$d"; done
dd if="$conv" bs=64k skip=128 count=16 iflag=direct status=none | cmp -s - /tmp/acked ||
	fail "restoreconfig: conv0 lost its data"
blkzone report -o 8192 -c 1 "$zbc" | tee /tmp/zone1
grep -q 'wptr 0x000080' /tmp/zone1 || fail "restoreconfig: zbc0 lost zone 1's write pointer: $(cat /tmp/zone1)"
value restoreconfig ok
exit 0
