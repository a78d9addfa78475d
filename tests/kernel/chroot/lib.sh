# shellcheck shell=bash
# Helpers of the "tcmu" suite's checks, which run in the host's root inside
# the guest (tests/kernel/guest/tcmu*.sh, sbce_host_chroot) with the host's
# bash, targetcli and friends.  The results channel is fd 3, as for every
# guest check (docs/kernel-testing.md): FAIL <check> <reason>, INFO, CHECK.
set -u -o pipefail

STATE=/var/lib/sbcemu-kvm           # daemon.state_dir of tests/kernel/suites/tcmu.ini
SBCEMUD=$SBCE_BUILDDIR/daemon/sbcemud
DLOG=/var/log/sbcemud.log
CFS=/sys/kernel/config/target
LOOP_WWN=naa.500140500000000 # tcm_loop targets: this and a digit
NDEV=5                       # the user:sbcemu backstores tcmu.sh creates

emit() {
	echo "$*" >&3
	echo "$*"
}
fail() {
	emit "FAIL $SBCE_CHECK $*"
	exit 1
}
info() { emit "INFO $SBCE_CHECK $*"; }
value() { emit "CHECK $SBCE_CHECK.$1=$2"; }
step() { echo "+ [$(cut -d' ' -f1 /proc/uptime)] $*"; }

# expect DESCRIPTION CMD...: CMD must succeed.
expect() {
	local what=$1
	shift
	step "$*"
	"$@" || fail "$what: '$*' exited $?"
}

# The D-Bus system bus (with sbcemu's policy from the repository), configfs, loopback.
setup_base() {
	mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
	[ -d $CFS ] || fail "no $CFS: target_core_mod is not loaded"
	ip link set lo up 2>/dev/null || true
	mkdir -p /run/dbus /etc/dbus-1/system.d "$STATE"
	cp "$SBCE_REPO/daemon/dbus/org.kernel.TCMUService1.sbcemu.conf" /etc/dbus-1/system.d/
	[ -S /run/dbus/system_bus_socket ] || dbus-daemon --system --fork || fail "dbus-daemon did not start"
}

# sbcemud_start: the freshly built daemon on the suite's configuration; waits for "ready".
sbcemud_start() {
	local from t
	from=$(stat -c %s "$DLOG" 2>/dev/null || echo 0)
	step "sbcemud -c $SBCE_TCMU_CONFIG"
	setsid "$SBCEMUD" -c "$SBCE_TCMU_CONFIG" --log-level "${SBCE_LOG_LEVEL:-debug}" >>"$DLOG" 2>&1 </dev/null &
	echo $! >/run/sbcemud.pid
	# Its log on the console too (not the per-command trace), so a hang still shows what it did.
	if [ ! -e /run/sbcemud-tail.pid ]; then
		(tail -n +1 -F "$DLOG" 2>/dev/null | grep --line-buffered -v ': <- ' | sed -u 's/^/sbcemud: /' >/dev/console) &
		echo $! >/run/sbcemud-tail.pid
	fi
	for t in $(seq 1 100); do
		tail -c +$((from + 1)) "$DLOG" | grep -q ' info: ready$' && return 0
		kill -0 "$(cat /run/sbcemud.pid)" 2>/dev/null || break
		sleep 0.2
	done
	tail -n 20 "$DLOG"
	fail "sbcemud did not become ready"
}

# sbcemud_stop SIGNAL: stops the daemon and waits for it (KILL: no clean shutdown at all).
sbcemud_stop() {
	local pid t
	pid=$(cat /run/sbcemud.pid 2>/dev/null) || return 0
	kill -"$1" "$pid" 2>/dev/null
	for t in $(seq 1 150); do
		kill -0 "$pid" 2>/dev/null || { rm -f /run/sbcemud.pid; return 0; }
		sleep 0.2
	done
	fail "sbcemud (pid $pid) did not exit after SIG$1"
}

# log_since MARK: the daemon's log after byte offset MARK (log_mark gives one).
log_mark() { stat -c %s "$DLOG" 2>/dev/null || echo 0; }
log_since() { tail -c +$(($1 + 1)) "$DLOG"; }

# disk_of PRODUCT: /dev/sdX whose INQUIRY product is PRODUCT, waiting up to 90 s.
disk_of() {
	local t m
	for t in $(seq 1 450); do
		for m in /sys/block/sd*/device/model; do
			[ -e "$m" ] || continue
			if [ "$(sed 's/ *$//' "$m")" = "$1" ]; then
				echo "/dev/$(basename "$(dirname "$(dirname "$m")")")"
				return 0
			fi
		done
		sleep 0.2
	done
	return 1
}

# settle /dev/sdX: TEST UNIT READY until no unit attention is pending (LIO's own, after LUN changes).
settle() {
	local i
	for i in 1 2 3 4 5; do
		sg_turs "$(sg_of "$1")" >/dev/null 2>&1 && return 0
	done
	return 0
}

# sg_of /dev/sdX: its /dev/sgN.
sg_of() { echo "/dev/$(basename /sys/block/"${1#/dev/}"/device/scsi_generic/sg*)"; }

