# shellcheck shell=sh
# Guest check "multipath": one LU (LUN $SBCE_MPATH_LUN) on a Ceph RBD image
# served by two sbcemud nodes (tests/kernel/suites/multipath.sh): node A
# (target port group 1, tpgt 1) holds the image, node B (group 2, tpgt 2)
# waits in standby.  The guest logs in to both, as a host with two paths to
# a dual-controller array:
#  - scsi_dh_alua attaches to both paths; A's is active/optimized, B's
#    standby; REPORT TARGET PORT GROUPS reads the same through both;
#  - sg_persist registers, reserves, releases and unregisters through B's
#    standby path (B has A, the holder, run each PERSISTENT RESERVE OUT),
#    and reads the keys and the reservation back through A's;
#  - a dm-multipath device over both paths (a path group each, the ALUA
#    hardware handler, queue_if_no_path), made with dmsetup: multipathd is
#    not run (no udev here); this script reinstates a failed path whose TEST
#    UNIT READY is GOOD again, which is what multipathd's checker does;
#  - a writer writes 4 KiB blocks through the map and notes each one
#    acknowledged; the host kills node A (SIGKILL) while it writes; the
#    iSCSI session to A fails (replacement_timeout 5 s), dm-multipath fails
#    the path and initialises B's group (scsi_dh_alua: RTPG, SET TARGET PORT
#    GROUPS), which B refuses (04/67/0A) until it has taken the image over
#    (A's lock broken once the OSDs drop A's watch), then I/O goes on
#    through B;
#  - every acknowledged block reads back through the map, now through B,
#    which shows A's group offline (A's heartbeat stopped);
#  - the host starts A again: a new session to it shows its group in
#    standby, and group 2 (B) active/optimized.
# The host (tests/kernel/host/multipath.sh) checks these values.

l=${SBCE_MPATH_LUN:-1}
[ -n "${SBCE_PORTAL2:-}" ] || sbce_fail "no second portal (scripts/kernel-vm/run --portal2)"
BLOCKS=512          # 2 MiB written through the map, 4 KiB at a time
BEFORE=64           # blocks written before node A is killed

# login TPGT HOST [PORT]: a session to the node at HOST:PORT (default 3260;
# tpgt TPGT) that gives up 5 s after its connection is lost, so that
# dm-multipath sees the path fail.  No iscsid runs here, so a failed session
# stays failed, and iscsistart makes no second one to its address: the
# restarted node A is reached at 10.0.2.100:3261 (scripts/kernel-vm/run).
login() {
	timeout 60 iscsistart -i "$SBCE_INITIATOR" -t "$SBCE_TARGET" -g "$1" -a "$2" -p "${3:-3260}" \
		-P node.session.timeo.replacement_timeout=5
}
uptime_s() { cut -d' ' -f1 /proc/uptime; }

# disk_of_tpgt TPGT: sdX of LUN $l in the newest session with that tpgt.
disk_of_tpgt() {
	_found=
	for s in /sys/class/iscsi_session/session*; do
		[ "$(cat "$s/tpgt" 2>/dev/null)" = "$1" ] || continue
		for d in "$s"/device/target*/*:*:*:"$l"; do
			[ -d "$d" ] || continue
			_b=$(sbce_disk_of "$(basename "$d")") && _found=$_b
		done
	done
	[ -n "$_found" ] && echo "$_found"
}

rtpg_of() {
	sg_rtpg -d "/dev/$1" 2>&1 | tr -s ' \t' ' ' | tr '\n' '|'
}

# groups_of sdX: "GROUP:STATE ..." from sg_rtpg's decoded descriptors
# ("target port group id : 0x1 , Pref=0, ..." then "... asymmetric access
# state : 0x00 (active/optimized)").
groups_of() {
	_out=
	_g=
	sg_rtpg -d "/dev/$1" >/tmp/rtpg.txt 2>/dev/null || true
	while IFS= read -r line; do
		case $line in
		*"target port group id"*)
			_g=$(printf '%d' "$(echo "$line" | sed 's/.*: *\(0x[0-9a-fA-F]*\).*/\1/')")
			;;
		*"asymmetric access state"*)
			_out="$_out${_out:+ }$_g:$(echo "$line" | sed -n 's/.*(\(.*\)).*/\1/p')"
			;;
		esac
	done </tmp/rtpg.txt
	echo "$_out"
}

t0=$(uptime_s)
login 1 "${SBCE_PORTAL%:*}" || sbce_fail "login to node A failed"
login 2 "${SBCE_PORTAL2%:*}" || sbce_fail "login to node B failed"
has_both() { disk_of_tpgt 1 >/dev/null && disk_of_tpgt 2 >/dev/null; }
sbce_wait_for 60 has_both || sbce_fail "LUN $l did not appear through both nodes"
a=$(disk_of_tpgt 1)
b=$(disk_of_tpgt 2)
sbce_info "LUN $l: $a through node A, $b through node B ($(awk -v a="$t0" '{ printf "%.1f", $1 - a }' /proc/uptime) s)"
sbce_value same_wwid "$([ "$(cat /sys/block/"$a"/device/wwid)" = "$(cat /sys/block/"$b"/device/wwid)" ] && echo 1 || echo 0)"
sbce_file_value dh_state_a "/sys/block/$a/device/dh_state"
sbce_file_value dh_state_b "/sys/block/$b/device/dh_state"
sbce_file_value access_state_a "/sys/block/$a/device/access_state"
sbce_file_value access_state_b "/sys/block/$b/device/access_state"
sbce_value groups_a "$(groups_of "$a")"
sbce_value groups_b "$(groups_of "$b")"
sbce_info "sg_rtpg through B: $(rtpg_of "$b")"

# ---- persistent reservations through the standby path (node B has node A run them) ----
# sg_persist's PERSISTENT RESERVE OUT through B's path, PERSISTENT RESERVE IN through A's: one state.
pr_keys() {
	sg_persist --in --read-keys "/dev/$1" 2>/dev/null |
		awk '/^ *0x/ { printf "%s%s", (n++ ? " " : ""), $1 } END { if (!n) printf "none" }'
}
pr_out() { _d=$1; shift; sg_persist --out "$@" "/dev/$_d" >/tmp/prout.txt 2>&1; echo $?; }
sbce_value pr_register_b "$(pr_out "$b" --register --param-sark=0x5bce)"
sbce_value pr_keys_a "$(pr_keys "$a")"
sbce_value pr_reserve_b "$(pr_out "$b" --reserve --param-rk=0x5bce --prout-type=1)"
sbce_value pr_reservation_a "$(sg_persist --in --read-reservation "/dev/$a" 2>/dev/null |
	awk '/Key=/ { k = $1 } /type:/ { sub(/.*type: */, ""); t = $0 } END { printf "%s %s", k, t }')"
sbce_value pr_release_b "$(pr_out "$b" --release --param-rk=0x5bce --prout-type=1)"
sbce_value pr_unregister_b "$(pr_out "$b" --register --param-rk=0x5bce --param-sark=0)"
sbce_value pr_keys_a_after "$(pr_keys "$a")"
while IFS= read -r line; do sbce_info "sg_persist: $line"; done </tmp/prout.txt

# ---- the map: path group 1 node A, path group 2 node B ----
sectors=$(blockdev --getsz "/dev/$a")
table="0 $sectors multipath 5 queue_if_no_path pg_init_retries 50 pg_init_delay_msecs 1000 1 alua 2 1"
table="$table round-robin 0 1 1 $(cat /sys/block/"$a"/dev) 1 round-robin 0 1 1 $(cat /sys/block/"$b"/dev) 1"
sbce_info "dmsetup table: $table"
rc=0
dmsetup create --noudevsync mpath --table "$table" || rc=$?
sbce_value create_rc $rc
[ "$rc" = 0 ] || sbce_fail "dmsetup create failed"
minor=$(dmsetup info -c --noheadings -o minor mpath | tr -d ' ')
map=/dev/dm-$minor
sbce_wait_for 10 test -b "$map" || sbce_fail "no $map"
sbce_info "dmsetup status: $(dmsetup status mpath)"

# multipathd's path checker, in short: a failed path whose TEST UNIT READY is GOOD again is reinstated.
checker() {
	while :; do
		for p in "$a" "$b"; do
			mm=$(cat "/sys/block/$p/dev" 2>/dev/null) || continue
			if dmsetup status mpath | grep -q " $mm F " && sg_turs "/dev/$p" >/dev/null 2>&1; then
				dmsetup message mpath 0 reinstate_path "$mm" &&
					echo "checker: reinstated $p ($mm) at $(cut -d' ' -f1 /proc/uptime)"
			fi
		done
		sleep 1
	done
}
checker >/tmp/checker.log 2>&1 &
checker_pid=$!

# ---- I/O through the map, node A killed in the middle ----
head -c $((BLOCKS * 4096)) /dev/urandom >/tmp/data
: >/tmp/acked
writer() {
	i=0
	while [ "$i" -lt "$BLOCKS" ]; do
		s=$(cut -d' ' -f1 /proc/uptime)
		dd if=/tmp/data of="$map" bs=4096 skip="$i" seek="$i" count=1 oflag=direct conv=notrunc 2>/dev/null ||
			{ echo "write $i failed"; return 1; }
		echo "$i $s $(cut -d' ' -f1 /proc/uptime)" >>/tmp/acked
		i=$((i + 1))
	done
}
writer >/tmp/writer.log 2>&1 &
writer_pid=$!
acked() { [ "$(wc -l </tmp/acked)" -ge "$1" ]; }
sbce_wait_for 120 acked "$BEFORE" || sbce_fail "the first $BEFORE writes through node A did not end"
t_kill=$(uptime_s)
sbce_host_ctl "kill a"
rc=0
wait "$writer_pid" || rc=$?
sbce_value writer_rc $rc
sbce_value acked "$(wc -l </tmp/acked)"
# The longest a write waited: the failover as the application saw it.
sbce_value longest_write_seconds "$(awk '{ d = $3 - $2; if (d > m) m = d } END { printf "%d", m + 0.5 }' /tmp/acked)"
sbce_info "node A killed at $t_kill s; writes: $(awk '{ d = $3 - $2; if (d > 1) printf "block %s waited %.1f s; ", $1, d }' /tmp/acked)"
while IFS= read -r line; do sbce_info "writer: $line"; done </tmp/writer.log
sbce_info "dmesg: $(dmesg | grep -iE 'alua|multipath|device-mapper|connection.*error|session recovery' | tail -n 12 | tr '\n' '|')"

# ---- every acknowledged block reads back, through node B ----
t_read=$(uptime_s)
n=$(wc -l </tmp/acked)
bad=0
rc=0
dd if="$map" of=/tmp/back bs=4096 count="$n" iflag=direct 2>/dev/null || rc=$?
sbce_value readback_rc $rc
head -c $((n * 4096)) /tmp/data >/tmp/want
if ! cmp -s /tmp/back /tmp/want; then
	while read -r i _ _; do
		dd if=/tmp/back of=/tmp/b1 bs=4096 skip="$i" count=1 2>/dev/null
		dd if=/tmp/want of=/tmp/w1 bs=4096 skip="$i" count=1 2>/dev/null
		cmp -s /tmp/b1 /tmp/w1 || bad=$((bad + 1))
	done </tmp/acked
fi
sbce_value readback_mismatches $bad
sbce_info "read back $n blocks in $(awk -v a="$t_read" '{ printf "%.1f", $1 - a }' /proc/uptime) s"
sbce_info "dmsetup status: $(dmsetup status mpath)"
sbce_value paths_after "$(dmsetup status mpath | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+:[0-9]+$/) printf "%s%s", (n++ ? " " : ""), $(i + 1) }')"
sbce_file_value access_state_b_after "/sys/block/$b/device/access_state"
# Node B sees node A's heartbeat stop (be_rbd_beat.c: 10 s without a beat): A's group offline.
a_offline() { [ "$(groups_of "$b")" = "1:offline 2:active/optimized" ]; }
sbce_wait_for 20 a_offline || true
sbce_value groups_b_after "$(groups_of "$b")"
kill "$checker_pid" 2>/dev/null || true
while IFS= read -r line; do sbce_info "$line"; done </tmp/checker.log

# ---- node A back: in standby ----
sbce_host_ctl "start a"
a_is_back() { login 1 "${SBCE_PORTAL%:*}" 3261 >/tmp/relogin.log 2>&1; }
sbce_value relogin_a "$(sbce_yes_no sbce_wait_for 60 a_is_back)"
while IFS= read -r line; do sbce_info "relogin: $line"; done </tmp/relogin.log
new_a() { _n=$(disk_of_tpgt 1) && [ "$_n" != "$a" ]; }
if sbce_wait_for 30 new_a; then
	a2=$(disk_of_tpgt 1)
	sbce_file_value access_state_a_back "/sys/block/$a2/device/access_state"
	# Node A learns the holder from the note it reads at its next attempt on the lock (at once, then every 5 s).
	groups_settled() { [ "$(groups_of "$a2")" = "$(groups_of "$b")" ]; }
	sbce_wait_for 15 groups_settled || true
	sbce_value groups_a_back "$(groups_of "$a2")"
	sbce_info "sg_rtpg through the restarted node A: $(rtpg_of "$a2")"
else
	sbce_value access_state_a_back "no new disk"
fi
dmsetup remove --noudevsync mpath || true
