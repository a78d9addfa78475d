#!/bin/bash
# Check "tcmu_runner" of the kernel suite "tcmu", after "tcmu_restart":
# tcmu-runner and sbcemud side by side.  tcmu-runner owns
# org.kernel.TCMUService1 and sbcemud registers user:sbcemu with it
# (HandlerManager1.RegisterHandler); each daemon opens only the UIO devices
# of its own subtypes; targetcli reaches sbcemu's CheckConfig through
# tcmu-runner.  Then the same checks on tcmu-runner's file_zbc handler and
# on an sbcemu zbc-hm LU (write pointer rules, their sense), and 4 KiB
# random I/O through tcm_loop for both, printed as a ratio (not a timed
# assertion); last, direct 4 KiB random reads at queue depth 1 and 16 on an
# sbcemu conventional LU and on tcmu-runner's qcow handler serving a raw
# image: IOPS and mean completion latency.  docs/tcmu.md, "Beside tcmu-runner".
. "$SBCE_REPO/tests/kernel/chroot/lib.sh"

RLOG=/var/log/tcmu-runner.log
sbcemud_stop TERM
step "tcmu-runner"
setsid tcmu-runner >>"$RLOG" 2>&1 </dev/null &
rpid=$! # setsid execs tcmu-runner in place: a background job is no process group leader
for t in $(seq 1 100); do
	dbus-send --system --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
		org.freedesktop.DBus.NameHasOwner string:org.kernel.TCMUService1 2>/dev/null | grep -q 'boolean true' && break
	sleep 0.2
done
mark=$(log_mark)
sbcemud_start
for t in $(seq 1 50); do
	log_since "$mark" | grep -q 'registered with tcmu-runner' && break
	sleep 0.2
done
log_since "$mark" | grep -q 'user:sbcemu registered with tcmu-runner' ||
	fail "sbcemud did not register with tcmu-runner: $(log_since "$mark" | grep -i 'd-bus' | head -n 3)"
log_since "$mark" | grep -q "$NDEV sbcemu devices found at start" || fail "sbcemud did not take its $NDEV devices back"
log_since "$mark" | grep -q 'the kernel is told to wait for no reply' ||
	fail "sbcemud did not tell the kernel to stop waiting for replies beside tcmu-runner"
out=$(targetcli ls /backstores 2>&1)
echo "$out"
grep -q 'user:zbc' <<<"$out" && grep -q 'user:sbcemu' <<<"$out" ||
	fail "targetcli does not list both handlers: $(grep -o 'user:[a-z]*' <<<"$out" | tr '\n' ' ')"
value handlers_listed "$(grep -o 'user:[a-z]*' <<<"$out" | sort | tr '\n' ' ')"
# CheckConfig travels targetcli -> tcmu-runner -> sbcemud.
out=$(targetcli /backstores/user:sbcemu create name=bad2 size=64M 'cfgstring=kind=zbc-hm;zone_size=3M;path=b.img' 2>&1)
grep -qF 'cfgstring invalid: cfgstring: zone_size: 3145728 bytes is not a power-of-two number of 512-byte logical blocks' \
	<<<"$out" || fail "CheckConfig through tcmu-runner: $out"

# One zoned backstore each, both with a plain create.  tcmu-runner answers
# -ENOENT to every ADDED_DEVICE of a subtype it does not know, and the kernel
# takes the first answer: sbcemud, seeing tcmu-runner, told the kernel to wait
# for no answer (docs/tcmu.md, "Beside tcmu-runner").
mark=$(log_mark)
step "targetcli: user:zbc rz0, user:sbcemu sz1"
targetcli <<EOT || fail "targetcli (rz0, sz1) failed"
set global auto_save_on_exit=false
/backstores/user:zbc create name=rz0 size=64M cfgstring=model-HM/zsize-4/conv-1@/var/tmp/rz0.raw
/backstores/user:sbcemu create name=sz1 size=64M cfgstring=kind=zbc-hm;zone_size=4M;conventional_zones=1;max_open_zones=8;path=sz1.img;product=tcmu-zbc-2
/loopback create ${LOOP_WWN}6
/loopback/${LOOP_WWN}6/luns create /backstores/user:zbc/rz0 lun=0
/loopback create ${LOOP_WWN}7
/loopback/${LOOP_WWN}7/luns create /backstores/user:sbcemu/sz1 lun=0
EOT
runner=$(disk_of "TCMU ZBC device") || fail "no sd disk for tcmu-runner's rz0"
ours=$(disk_of tcmu-zbc-2) || fail "no sd disk for sbcemu's sz1"
settle "$runner"
settle "$ours"
log_since "$mark" | grep -q 'rz0' && fail "sbcemud touched tcmu-runner's device: $(log_since "$mark" | grep rz0 | head -n 1)"
# sz1 is served by sbcemud (its disk is there, with sbcemu's INQUIRY); what tcmu-runner made of its event:
grep -i 'uio\|sz1' "$RLOG" | tail -n 3 | sed 's/^/  tcmu-runner: /'
value own_devices_only ok
# CheckConfig refuses a backing file another LU uses, and targetcli shows why.
out=$(targetcli /backstores/user:sbcemu create name=dup size=64M 'cfgstring=kind=zbc-hm;zone_size=4M;path=sz1.img' 2>&1)
grep -q 'is already the backing file of another TCMU device' <<<"$out" ||
	fail "CheckConfig of a backing file in use: $out"

# The same zone checks on both (ZBC-2; libzbc's test suite asks the same):
# the status or sense of each, side by side.  sbcemu's are asserted, tcmu-runner's reported.
# outcome ARGS...: sg_raw's result as one word: Good, or the additional sense.
outcome() {
	sg_raw "$@" 2>&1 | sed -n 's/^ *SCSI Status: Good.*/Good/p; s/^ *Additional sense: //p' | head -n 1 | tr ' ' _
}
zone_rules() {
	local sg d=$1 r
	sg=$(sg_of "$d")
	head -c 4096 /dev/urandom >/tmp/blk
	# WRITE(16) at zone 1's write pointer (its start), then 8 blocks past zone 2's.
	r="at_wp=$(outcome -s 4096 -i /tmp/blk "$sg" 8a 00 00 00 00 00 00 00 20 00 00 00 00 08 00 00)"
	r="$r not_at_wp=$(outcome -s 4096 -i /tmp/blk "$sg" 8a 00 00 00 00 00 00 00 40 08 00 00 00 08 00 00)"
	# READ(16) past zone 3's write pointer (URSWRZ decides), REPORT ZONES with reserved option 30h.
	r="$r past_wp_read=$(outcome -r 4096 "$sg" 88 00 00 00 00 00 00 00 60 08 00 00 00 08 00 00)"
	r="$r report_option_30h=$(outcome -r 4096 "$sg" 95 00 00 00 00 00 00 00 00 00 00 00 10 00 30 00)"
	# RESET WRITE POINTER of the conventional zone 0, FINISH ZONE of zone 4 then a write to it.
	r="$r reset_conventional=$(outcome "$sg" 94 04 00 00 00 00 00 00 00 00 00 00 00 00 00 00)"
	r="$r finish=$(outcome "$sg" 94 02 00 00 00 00 00 00 80 00 00 00 00 00 00 00)"
	r="$r write_full=$(outcome -s 4096 -i /tmp/blk "$sg" 8a 00 00 00 00 00 00 00 80 00 00 00 00 08 00 00)"
	blkzone reset -o 8192 -c 1 "$d" 2>/dev/null
	r="$r reset_wp=$(blkzone report -o 8192 -c 1 "$d" | sed -n 's/.*wptr \(0x[0-9a-f]*\).*/\1/p')"
	echo "$r"
}
ours_rules=$(zone_rules "$ours")
runner_rules=$(zone_rules "$runner")
value zone_rules_sbcemu "$ours_rules"
value zone_rules_tcmu_runner "$runner_rules"
for rule in $ours_rules; do
	[ "$rule" = "$(tr ' ' '\n' <<<"$runner_rules" | grep "^${rule%%=*}=")" ] ||
		info "differs: sbcemu $rule, tcmu-runner $(tr ' ' '\n' <<<"$runner_rules" | grep "^${rule%%=*}=")"
done
[ "$ours_rules" = "at_wp=Good not_at_wp=Unaligned_write_command past_wp_read=Good report_option_30h=Invalid_field_in_cdb reset_conventional=Invalid_field_in_cdb finish=Good write_full=Invalid_field_in_cdb reset_wp=0x000000" ] ||
	fail "sbcemu's zone rules: $ours_rules"

# 4 KiB random reads and writes in each disk's conventional zone (zone 0, 4 MiB), through tcm_loop,
# sbcemud logging at info as tcmu-runner does (the debug trace costs a line per command).
sbcemud_stop TERM
SBCE_LOG_LEVEL=info sbcemud_start
settle "$ours"
iops() {
	fio --name=r --filename="$1" --offset=0 --size=4M --rw=randrw --bs=4k --direct=1 --ioengine=libaio \
		--iodepth=16 --runtime=8 --time_based --output-format=terse --terse-version=3 2>/dev/null |
		awk -F';' '{ printf "%d", $8 + $49 }'
}
a=$(iops "$ours")
b=$(iops "$runner")
value iops_sbcemu "$a"
value iops_tcmu_runner "$b"
info "4 KiB random read/write IOPS through tcm_loop: sbcemu $a, tcmu-runner file_zbc $b (ratio $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b ? a / b : 0 }'))"
[ "$a" -gt 0 ] || fail "no I/O completed on sbcemu's disk"

# Direct 4 KiB random reads at queue depth 1 and 16, sbcemu against tcmu-runner in this guest and
# boot (the performance goal: queue depth 1 latency at or below tcmu-runner's file handler, depth 16
# at least level).  Debian's tcmu-runner has no plain file handler; handler_qcow is the closest
# peer: a file that is neither QCOW nor QCOW2 and whose size is the device's it serves as a raw
# image, preadv/pwritev on the file (qcow.c bdev_open, raw_probe, raw_ops; one I/O thread,
# nr_threads = 1).  Against it an sbcemu conventional LU (kind default).  Both files are in the
# chroot's tmpfs overlay, both disks filled first (no holes read), each fio run a few seconds
# (TCG), the order alternating per depth.  Printed, not asserted on timing; the host side
# (tests/kernel/host/tcmu.sh) checks that every value is there and nonzero.
PEER="qcow raw"
step "targetcli: user:qcow rq0 (raw image), user:sbcemu sc2 (conventional)"
rm -f /var/tmp/rq0.raw
truncate -s 64M /var/tmp/rq0.raw
targetcli <<EOT || fail "targetcli (rq0, sc2) failed"
set global auto_save_on_exit=false
/backstores/user:qcow create name=rq0 size=64M cfgstring=/var/tmp/rq0.raw
/backstores/user:sbcemu create name=sc2 size=64M cfgstring=path=sc2.img;product=tcmu-conv-rd
/loopback create ${LOOP_WWN}8
/loopback/${LOOP_WWN}8/luns create /backstores/user:qcow/rq0 lun=0
/loopback create ${LOOP_WWN}9
/loopback/${LOOP_WWN}9/luns create /backstores/user:sbcemu/sc2 lun=0
EOT
peer=$(disk_of "TCMU device") ||
	fail "no sd disk for tcmu-runner's rq0: $(grep -i 'qcow\|rq0' "$RLOG" | tail -n 3 | tr '\n' ' ')"
conv=$(disk_of tcmu-conv-rd) || fail "no sd disk for sbcemu's sc2"
settle "$peer"
settle "$conv"
head -c 16M /dev/urandom >/tmp/rr.fill
for d in "$conv" "$peer"; do
	dd if=/tmp/rr.fill of="$d" bs=1M oflag=direct status=none || fail "filling $d failed"
done
rm -f /tmp/rr.fill
# rread DISK DEPTH: "IOPS CLAT-MEAN-US LAT-MEAN-US" of direct 4 KiB random reads in the disk's
# first 16 MiB (fio terse v3: field 8 read IOPS, 16 completion and 40 total latency means in us;
# where io_submit ends and completion begins depends on the path, so the total is printed too).
rread() {
	fio --name=rr --filename="$1" --offset=0 --size=16M --rw=randread --bs=4k --direct=1 --ioengine=libaio \
		--iodepth="$2" --ramp_time=1 --runtime=3 --time_based --output-format=terse --terse-version=3 2>/dev/null |
		awk -F';' '{ printf "%d %.1f %.1f", $8, $16, $40 }'
}
# switches PID: context switches of all the process's threads so far (voluntary + involuntary).
switches() {
	cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ { n += $2 } END { print n + 0 }'
}
# ticks PID: the CPU time of the process so far, user + system of all its threads, in clock ticks
# (proc(5), /proc/PID/stat fields 14 and 15).
ticks() {
	awk '{ print $14 + $15 }' /proc/"$1"/stat 2>/dev/null || echo 0
}
# rread_counted DISK DEPTH PID: rread, then the context switches of PID's threads per command and
# PID's CPU time per command in us (fio's ramp and run: IOPS x 4 s).  The CPU time says what a
# target costs the guest's one vCPU, which the IOPS of one short run (the vCPU shared with fio
# and the kernel) says with the noise of the boot.
rread_counted() {
	local before after t0 t1 out hz
	hz=$(getconf CLK_TCK)
	before=$(switches "$3")
	t0=$(ticks "$3")
	out=$(rread "$1" "$2")
	t1=$(ticks "$3")
	after=$(switches "$3")
	echo "$out $(awk -v d=$((after - before)) -v t=$((t1 - t0)) -v hz="$hz" -v i="${out%% *}" \
		'BEGIN { if (i) printf "%.2f %.1f", d / (i * 4), t * 1e6 / hz / (i * 4); else print "0 0" }')"
}
spid=$(cat /run/sbcemud.pid)
info "threads: sbcemud $(ls /proc/"$spid"/task | wc -l), tcmu-runner $(ls /proc/"$rpid"/task 2>/dev/null | wc -l);" \
	"sched_autogroup_enabled $(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo -)"
# mean2 "A1 B1 ..." "A2 B2 ...": the field-by-field mean of two measurements.
mean2() {
	awk -v a="$1" -v b="$2" 'BEGIN { n = split(a, x); split(b, y); for (i = 1; i <= n; i++) printf "%s%.2f", (i > 1 ? " " : ""), (x[i] + y[i]) / 2 }'
}
for qd in 1 16; do
	step "fio randread 4k iodepth=$qd: $conv (sbcemu), $peer (tcmu-runner), twice each (ABBA)"
	# A B B A: each target once first and once last, so a drift of the guest over the four
	# runs (page cache, timers, the host's load) weighs on both alike; the means are reported.
	if [ "$qd" = 1 ]; then
		s1=$(rread_counted "$conv" "$qd" "$spid")
		r1=$(rread_counted "$peer" "$qd" "$rpid")
		r2=$(rread_counted "$peer" "$qd" "$rpid")
		s2=$(rread_counted "$conv" "$qd" "$spid")
	else
		r1=$(rread_counted "$peer" "$qd" "$rpid")
		s1=$(rread_counted "$conv" "$qd" "$spid")
		s2=$(rread_counted "$conv" "$qd" "$spid")
		r2=$(rread_counted "$peer" "$qd" "$rpid")
	fi
	info "TCMU QD$qd runs (IOPS clat lat switches CPU): sbcemu [$s1] [$s2], tcmu-runner [$r1] [$r2]"
	read -r s_iops s_clat s_lat s_cs s_cpu <<<"$(mean2 "$s1" "$s2")"
	read -r r_iops r_clat r_lat r_cs r_cpu <<<"$(mean2 "$r1" "$r2")"
	info "TCMU QD$qd context switches per command: sbcemud ${s_cs:-?}, tcmu-runner ${r_cs:-?}"
	value "rread_qd${qd}_iops_sbcemu" "${s_iops:-}"
	value "rread_qd${qd}_clat_us_sbcemu" "${s_clat:-}"
	value "rread_qd${qd}_lat_us_sbcemu" "${s_lat:-}"
	value "rread_qd${qd}_cpu_us_sbcemu" "${s_cpu:-}"
	value "rread_qd${qd}_iops_tcmu_runner" "${r_iops:-}"
	value "rread_qd${qd}_clat_us_tcmu_runner" "${r_clat:-}"
	value "rread_qd${qd}_lat_us_tcmu_runner" "${r_lat:-}"
	value "rread_qd${qd}_cpu_us_tcmu_runner" "${r_cpu:-}"
done
value rread_peer "$PEER"
exit 0
