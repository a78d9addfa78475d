# shellcheck shell=sh
# Guest-side helpers (busybox sh), installed as /sbce/lib.sh.  Guest scripts
# are sourced with this library loaded, SBCE_CHECK set to the script's name,
# `set -e` on, and /sbce/env giving the disks the kernel attached:
#   SBCE_LUN_LIST        LUNs seen, for example "0 1"
#   SBCE_DISK, SBCE_SG   /dev/sdX and /dev/sgN of the first LUN
#   SBCE_DEV_<lun>       /dev/sdX of LUN <lun>; SBCE_SG_<lun>, SBCE_HCTL_<lun>,
#                        SBCE_BLOCK_<lun> (sdX) likewise
# Output protocol (one line each, on the results channel fd 3 and the console):
#   CHECK <check>.<key>=<value>   a value for the host to assert on
#   INFO <check> <text>           free text
#   FAIL <check> <reason>         the guest script failed (then it exits 1)

# sbce_emit LINE: writes LINE to the results channel and the console.
sbce_emit() {
	echo "$*" >&3
	echo "$*"
}

# sbce_value KEY VALUE...: reports one value (spaces allowed in VALUE).
sbce_value() {
	_k=$1
	shift
	sbce_emit "CHECK $SBCE_CHECK.$_k=$*"
}

sbce_info() {
	sbce_emit "INFO $SBCE_CHECK $*"
}

# sbce_fail REASON: reports why the script failed and ends it.
sbce_fail() {
	sbce_emit "FAIL $SBCE_CHECK $*"
	exit 1
}

# sbce_host_ctl ARGS...: asks the host to run "sbcemuctl ARGS" against the
# target while the guest runs (a CTL line on the results port; the suite's
# suite_guest_request in tests/kernel/suites/ decides, tests/kernel/run.sh
# runs it).  Nothing comes back: the guest watches for the effect.
sbce_host_ctl() {
	sbce_emit "CTL $*"
}

# sbce_run CMD...: runs CMD with its output on the console; fails the script
# with CMD's exit status in the reason when it fails.
sbce_run() {
	echo "+ [$(cut -d" " -f1 /proc/uptime)] $*"
	"$@" || sbce_fail "'$*' exited $?"
}

# sbce_file_value KEY FILE: reports the content of a (sysfs) file, or "absent".
sbce_file_value() {
	if [ -r "$2" ]; then
		sbce_value "$1" "$(tr '\n' ' ' <"$2" 2>/dev/null | sed 's/ *$//')"
	else
		sbce_value "$1" absent
	fi
}

# sbce_wait_for SECONDS CMD...: runs CMD every half second until it succeeds
# (status 0), for at most SECONDS (status 1).
sbce_wait_for() {
	_n=$(($1 * 2))
	shift
	while [ "$_n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.5
		_n=$((_n - 1))
	done
	return 1
}

# sbce_yes_no CMD...: 1 if CMD succeeds, else 0.
sbce_yes_no() { if "$@"; then echo 1; else echo 0; fi; }

# sbce_hex: standard input as one string of lower-case hex digits.
sbce_hex() {
	od -An -v -tx1 | tr -d ' \n'
}

# sbce_lun_var NAME LUN: value of SBCE_<NAME>_<LUN> (for example DEV 0).
sbce_lun_var() {
	eval "echo \"\${SBCE_$1_$2:-}\""
}

# sbce_iscsi_devices: "H:C:T:L" of every SCSI device under an iSCSI session.
sbce_iscsi_devices() {
	for s in /sys/class/iscsi_session/session*; do
		[ -d "$s/device" ] || continue
		for t in "$s"/device/target*; do
			[ -d "$t" ] || continue
			for d in "$t"/*:*:*:*; do
				[ -d "$d" ] && basename "$d"
			done
		done
	done
}

# sbce_disk_of HCTL: sdX once sd has attached the device (its size is set).
sbce_disk_of() {
	for b in /sys/class/scsi_device/"$1"/device/block/*; do
		[ -e "$b/size" ] && basename "$b" && return 0
	done
	return 1
}

# sbce_wait_luns "LUNS" SECONDS: waits until each LUN has an sd disk (or, with
# no LUNS given, until at least one disk appears and the set stays the same
# for a second).  mdev/udev are not running: devtmpfs makes the nodes.
sbce_wait_luns() {
	_want=$1
	_n=$(($2 * 10))
	_last=
	_same=0
	while [ "$_n" -gt 0 ]; do
		_have=
		for h in $(sbce_iscsi_devices); do
			sbce_disk_of "$h" >/dev/null && _have="$_have ${h##*:}"
		done
		if [ -n "$_want" ]; then
			_ok=1
			for l in $_want; do
				case " $_have " in *" $l "*) ;; *) _ok=0 ;; esac
			done
			[ "$_ok" = 1 ] && return 0
		elif [ -n "$_have" ]; then
			if [ "$_have" = "$_last" ]; then
				_same=$((_same + 1))
				[ "$_same" -ge 10 ] && return 0
			else
				_same=0
			fi
		fi
		_last=$_have
		sleep 0.1
		_n=$((_n - 1))
	done
	return 1
}

# sbce_describe_luns: writes /sbce/env (see the top of this file) and reports
# a DEVICE line per LUN.
sbce_describe_luns() {
	_list=
	: >/sbce/env
	for h in $(sbce_iscsi_devices); do
		l=${h##*:}
		b=$(sbce_disk_of "$h") || continue
		sg=$(ls /sys/class/scsi_device/"$h"/device/scsi_generic 2>/dev/null | head -n1)
		echo "SBCE_DEV_$l=/dev/$b SBCE_BLOCK_$l=$b SBCE_SG_$l=/dev/$sg SBCE_HCTL_$l=$h" >>/sbce/env
		[ -z "$_list" ] && echo "SBCE_DISK=/dev/$b SBCE_SG=/dev/$sg" >>/sbce/env
		_list="$_list $l"
		sbce_emit "DEVICE lun=$l dev=$b sg=$sg hctl=$h"
	done
	echo "SBCE_LUN_LIST='${_list# }'" >>/sbce/env
}

# sbce_host_chroot CMD...: runs CMD (a path on the host) with the host's root
# file system as its root, read-only over 9p under a tmpfs overlay (run with
# --host-root), so it can use the host's programs and libraries as they are
# (targetcli, dbus-daemon, a freshly built sbcemud).  proc, sys, dev and the
# guest's /sbce and kernel modules are visible in it (its /tmp and /run are
# the overlay's, so host paths under /tmp stay visible); fd 3 (the results
# channel) stays open.  The first call mounts everything.
sbce_host_chroot() {
	_r=/sbce-root
	if [ ! -d "$_r/proc/self" ]; then
		[ "${SBCE_HOST_ROOT:-0}" = 1 ] || sbce_fail "sbce_host_chroot needs scripts/kernel-vm/run --host-root"
		mkdir -p /sbce-host /sbce-upper "$_r"
		mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144 hostroot /sbce-host ||
			sbce_fail "cannot mount the host's root over 9p"
		mount -t tmpfs -o size=75% tmpfs /sbce-upper
		mkdir -p /sbce-upper/u /sbce-upper/w
		mount -t overlay overlay -o lowerdir=/sbce-host,upperdir=/sbce-upper/u,workdir=/sbce-upper/w "$_r" ||
			sbce_fail "cannot mount the overlay"
		for _m in proc sys dev; do
			mkdir -p "$_r/$_m"
			mount --bind "/$_m" "$_r/$_m"
		done
		mkdir -p "$_r/sbce" "$_r/lib/modules/$(uname -r)"
		mount --bind /sbce "$_r/sbce"
		# tcmu-runner (libkmod) wants the running kernel's module index.
		[ -d "/lib/modules/$(uname -r)" ] && mount --bind "/lib/modules/$(uname -r)" "$_r/lib/modules/$(uname -r)"
	fi
	chroot "$_r" "$@"
}
