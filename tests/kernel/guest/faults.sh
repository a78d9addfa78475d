# shellcheck shell=sh
# Guest check "faults": what Linux makes of the fault rules the suite added
# before boot (tests/kernel/suites/faults.sh).
#  - medium errors on SBCE_FAULTS_MEDIUM_LBA..+7: an O_DIRECT read of the
#    first fails (EIO) and sd logs the sense (Medium Error, Unrecovered read
#    error) and the block layer the sector; writing the blocks repairs them;
#  - the first READ of SBCE_FAULTS_HOLD_LBA is never answered: with a 5 s
#    command timeout the SCSI error handler aborts it and the retry reads.
# The host (tests/kernel/host/faults.sh) checks these and the daemon's log.

l=${SBCE_FAULTS_LUN:-0}
dev=$(sbce_lun_var DEV "$l")
b=$(sbce_lun_var BLOCK "$l")
h=$(sbce_lun_var HCTL "$l")
[ -n "$dev" ] || sbce_fail "LUN $l has no disk"
bad=${SBCE_FAULTS_MEDIUM_LBA:-10000} # a multiple of 8
held=${SBCE_FAULTS_HOLD_LBA:-20000}
sbce_value medium_lba "$bad"
sbce_value hold_lba "$held"

# ---- medium errors ----
dmesg -c >/dev/null
# The checks run under set -e: every exit status is taken with "|| rc=$?".
rc=0
dd if="$dev" of=/dev/null bs=512 skip="$bad" count=1 iflag=direct 2>/tmp/dd.err || rc=$?
sbce_value medium_read_rc $rc
sbce_info "dd: $(tr '\n' ' ' </tmp/dd.err)"
dmesg >/tmp/dmesg.medium
sbce_value medium_dmesg_sector "$(grep -c "critical medium error.*sector $bad " /tmp/dmesg.medium)"
sbce_value medium_dmesg_sense "$(grep -c 'Sense Key : Medium Error' /tmp/dmesg.medium)"
sbce_value medium_dmesg_asc "$(grep -ci 'Add. Sense: Unrecovered read error' /tmp/dmesg.medium)"
grep -iE 'medium|sense|sector' /tmp/dmesg.medium | head -n 8 | while IFS= read -r line; do sbce_info "dmesg: $line"; done
# One aligned 4 KiB write covers the 8 blocks: a smaller one would make the
# kernel read the rest of the page first (6.12 does), and that read fails.
rc=0
dd if=/dev/zero of="$dev" bs=4096 seek=$((bad / 8)) count=1 oflag=direct conv=notrunc 2>/dev/null || rc=$?
sbce_value repair_write_rc $rc
rc=0
dd if="$dev" of=/dev/null bs=4096 skip=$((bad / 8)) count=1 iflag=direct 2>/dev/null || rc=$?
sbce_value repaired_read_rc $rc

# ---- a command never answered ----
echo 5 >"/sys/block/$b/device/timeout"
# SCSI_LOG_ERROR_RECOVERY and SCSI_LOG_TIMEOUT at level 7 (drivers/scsi/scsi_logging.h): the abort is logged.
echo 63 >/proc/sys/dev/scsi/logging_level 2>/dev/null || sbce_info "no SCSI logging in this kernel"
tmo_before=$(cat "/sys/class/scsi_device/$h/device/iotmo_cnt" 2>/dev/null || echo 0)
dmesg -c >/dev/null
t0=$(cut -d' ' -f1 /proc/uptime)
rc=0
dd if="$dev" of=/dev/null bs=512 skip="$held" count=1 iflag=direct 2>/tmp/dd.err || rc=$?
sbce_value hold_read_rc $rc
t1=$(cut -d' ' -f1 /proc/uptime)
echo 0 >/proc/sys/dev/scsi/logging_level 2>/dev/null
sbce_value hold_read_seconds "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", b - a }')"
tmo_after=$(cat "/sys/class/scsi_device/$h/device/iotmo_cnt" 2>/dev/null || echo 0)
sbce_value hold_timeouts $((tmo_after - tmo_before))
dmesg >/tmp/dmesg.hold
sbce_value hold_dmesg_abort "$(grep -ciE 'abort' /tmp/dmesg.hold)"
grep -iE 'abort|timeout|timing out|eh' /tmp/dmesg.hold | head -n 8 | while IFS= read -r line; do sbce_info "dmesg: $line"; done
