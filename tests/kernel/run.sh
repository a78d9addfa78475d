#!/bin/bash
# Kernel tests: boots real Linux kernels under QEMU (TCG), logs them into
# sbcemud on 127.0.0.1 and lets the kernel's own drivers and tools use each
# kind of logical unit; asserts on what the guest reports and on what reached
# the daemon's backing files.  See docs/kernel-testing.md.
#
#   tests/kernel/run.sh [--builddir DIR] [--kernel 6.1|6.12|IMAGE [--modules DIR]]...
#                       [--guest-script FILE]... [--suite NAME]... [--stand-in tgt]
#                       [--cache-dir DIR] [--verbose]
#
# Default: Debian 12's 6.1 and 6.12 kernels, every suite in tests/kernel/suites.
# Prints one PASS/FAIL line per kernel and check, then "N passed, N failed".
# Exits 0 with "SKIP: ..." only when QEMU cannot run at all.
set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILDDIR=""
KERNELS=()
KMODULES=()
SCRIPTS=()
SUITES=()
STANDIN=""
VERBOSE=0
TIMEOUT=600
LOG_LEVEL=debug

while [ $# -gt 0 ]; do
	case "$1" in
	--builddir) BUILDDIR=$2; shift ;;
	--kernel) KERNELS+=("$2"); KMODULES+=(""); shift ;;
	--modules)
		[ "${#KERNELS[@]}" -gt 0 ] || { echo "run.sh: --modules follows the --kernel it belongs to" >&2; exit 2; }
		KMODULES[${#KERNELS[@]} - 1]=$2
		shift
		;;
	--guest-script) SCRIPTS+=("$(readlink -f "$2")"); shift ;;
	--suite) SUITES+=("$2"); shift ;;
	--stand-in) STANDIN=$2; shift ;;
	--cache-dir) export KVM_CACHE=$2; shift ;;
	--timeout) TIMEOUT=$2; shift ;;
	--log-level) LOG_LEVEL=$2; shift ;;
	--verbose) VERBOSE=1 ;;
	-h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
if [ "${#KERNELS[@]}" = 0 ]; then
	KERNELS=(6.1 6.12)
	KMODULES=("" "")
fi
if [ "${#SUITES[@]}" = 0 ]; then
	for f in "$HERE"/suites/*.sh; do SUITES+=("$(basename "$f" .sh)"); done
fi
case "$STANDIN" in "" | tgt) ;; *) echo "run.sh: --stand-in knows only tgt" >&2; exit 2 ;; esac
for s in "${SUITES[@]}"; do
	[ -f "$HERE/suites/$s.sh" ] || { echo "run.sh: no suite $s in $HERE/suites" >&2; exit 2; }
done

# shellcheck source=scripts/kernel-vm/lib.sh
. "$REPO/scripts/kernel-vm/lib.sh"
# shellcheck source=scripts/lib-daemon.sh
. "$REPO/scripts/lib-daemon.sh"
# shellcheck source=tests/kernel/lib-host.sh
. "$HERE/lib-host.sh"
for f in "$HERE"/host/*.sh; do
	# shellcheck disable=SC1090
	. "$f"
done

t_all=$(date +%s)

# ---- host packages and QEMU ----
kvm_install_host_packages || kvm_log "could not install every host package; trying anyway"
if ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
	echo "SKIP: qemu-system-x86_64 is not installed and could not be installed (apt-get install qemu-system-x86)"
	exit 0
fi
if ! echo quit | timeout 30 qemu-system-x86_64 -machine none -accel tcg -display none -nodefaults \
	-monitor stdio >/dev/null 2>&1; then
	echo "SKIP: qemu-system-x86_64 cannot start a TCG machine here"
	exit 0
fi

# ---- the daemon ----
if [ -z "$BUILDDIR" ]; then
	if d=$(sbce_find_daemon 2>/dev/null); then BUILDDIR=$(dirname "$(dirname "$d")"); else BUILDDIR="$REPO/build"; fi
fi
BUILDDIR=$(mkdir -p "$BUILDDIR" && cd "$BUILDDIR" && pwd)
SBCEMUD="$BUILDDIR/daemon/sbcemud"
if [ -z "$STANDIN" ] && [ ! -x "$SBCEMUD" ] && [ -f "$BUILDDIR/CMakeCache.txt" ]; then
	kvm_log "building sbcemud in $BUILDDIR"
	cmake --build "$BUILDDIR" --target sbcemud -j2 >/dev/null 2>&1
fi
OUTDIR="$BUILDDIR/kernel-vm"
mkdir -p "$OUTDIR/logs" "$OUTDIR/runs"

passed=0
failed=0
report() { # report pass|fail NAME DETAIL...
	local verdict=$1 name=$2
	shift 2
	if [ "$verdict" = pass ]; then
		passed=$((passed + 1))
		echo "PASS $name${1:+ ($1)}"
	else
		failed=$((failed + 1))
		echo "FAIL $name${1:+ ($1)}"
		shift
		for line in "$@"; do echo "    $line"; done
	fi
}

# backing_file LUN: the host file behind LUN of the current run.
backing_file() {
	if [ -n "$STANDIN" ]; then
		echo "$STATE_DIR/tgt-lun$1.img"
	else
		local p
		p=$(cfg_lun "$1" path)
		case "$p" in /*) echo "$p" ;; *) echo "$STATE_DIR/$p" ;; esac
	fi
}

# ---- targets ----
# target_start SUITE_DIR: starts sbcemud (or the stand-in) for the current suite;
# sets PORT and DAEMON_LOG.
target_start() {
	rm -rf "$STATE_DIR"
	mkdir -p "$STATE_DIR"
	PORT=$(sbce_pick_port) || return 1
	PORT2=""
	if [ -n "$STANDIN" ]; then
		standin_tgt_start
		return
	fi
	if declare -F suite_target_start >/dev/null; then
		# The suite's own targets (suites/multipath.sh: two nodes on a Ceph cluster).
		suite_target_start
		return
	fi
	[ -x "$SBCEMUD" ] || { TARGET_ERROR="no sbcemud at $SBCEMUD (build it, or pass --builddir)"; return 1; }
	DAEMON_LOG="$STATE_DIR/sbcemud.log"
	if ! sbce_daemon_start "$SBCEMUD" "$STATE_DIR" "$PORT" -c "$SUITE_CONFIG_FILE" --log-level "$LOG_LEVEL" 2>/dev/null; then
		TARGET_ERROR="sbcemud did not start: $(grep -v '^===' "$DAEMON_LOG" | tail -n 3 | tr '\n' ' ')"
		return 1
	fi
}

target_stop() {
	if [ -n "$STANDIN" ]; then
		sbce_tgt_stop
	elif declare -F suite_target_stop >/dev/null; then
		suite_target_stop
	else
		sbce_daemon_stop TERM 30
		[ "${SBCE_DAEMON_STATUS:-0}" = 0 ] || kvm_log "sbcemud exited with status $SBCE_DAEMON_STATUS"
	fi
}

# standin_tgt_start: Debian's tgtd with the suite's stand-in LUNs (1, 2, ...).
standin_tgt_start() {
	local i l
	DAEMON_LOG=""
	sbce_tgt_start "$STATE_DIR" "$PORT" "${STANDIN_SIZES[0]}" || { TARGET_ERROR="tgtd did not start"; return 1; }
	mv "$STATE_DIR/tgt-disk.img" "$STATE_DIR/tgt-lun1.img"
	tgtadm -C "$SBCE_TGT_CTL" --lld iscsi --op delete --mode logicalunit --tid 1 --lun 1
	i=0
	for l in $STANDIN_LUNS; do
		truncate -s "${STANDIN_SIZES[$i]}" "$STATE_DIR/tgt-lun$l.img"
		tgtadm -C "$SBCE_TGT_CTL" --lld iscsi --op new --mode logicalunit --tid 1 --lun "$l" \
			-b "$STATE_DIR/tgt-lun$l.img" || { TARGET_ERROR="tgtadm LUN $l failed"; return 1; }
		if [ "${STANDIN_THIN[$i]}" = 1 ]; then
			tgtadm -C "$SBCE_TGT_CTL" --lld iscsi --op update --mode logicalunit --tid 1 --lun "$l" \
				--params thin_provisioning=1
		fi
		i=$((i + 1))
	done
	SUITE_TARGET=$SBCE_TGT_IQN
}

cleanup() {
	[ -n "${SBCE_DAEMON_PID:-}" ] && sbce_daemon_stop KILL 5
	declare -F suite_target_stop >/dev/null && [ -n "${STATE_DIR:-}" ] && suite_target_stop
	[ -n "${SBCE_TGT_PID:-}" ] && sbce_tgt_stop
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# guest_program NAME: builds tests/kernel/guest/NAME.c, a static test program a
# suite's guest checks run (SUITE_PROGRAMS), into $OUTDIR/bin/NAME.  A line
# " * guest-build: ARGS" in the source adds compiler arguments (other sources,
# libraries; @REPO@ is the repository); such programs are always rebuilt.
guest_program() {
	local src="$HERE/guest/$1.c" bin="$OUTDIR/bin/$1" extra
	mkdir -p "$OUTDIR/bin"
	extra=$(sed -n 's/^ \* guest-build: //p' "$src" | sed "s#@REPO@#$REPO#g")
	[ -z "$extra" ] && [ -x "$bin" ] && [ "$bin" -nt "$src" ] && return 0
	# shellcheck disable=SC2086 # extra is a list of arguments
	cc -static -O2 -Wall -Wextra -Werror -o "$bin" "$src" $extra 2>"$OUTDIR/bin/$1.log" && return 0
	kvm_log "cannot build $src (see $OUTDIR/bin/$1.log)"
	return 1
}

# ---- requests from the guest while it runs ----
# guest_requests RESULTS LOG: every "CTL ARGS" line the guest writes to its
# results port (sbce_host_ctl, scripts/kernel-vm/guest-lib.sh) goes to the
# suite's suite_guest_request ARGS, once, in order; LOG gets "rc=N ARGS" and
# the output of each.  Runs until killed.
guest_requests() {
	local done=0 n line
	: >"$2"
	while sleep 0.2; do
		[ -f "$1" ] || continue
		n=0
		# read fails on a last line without its newline: a line still arriving waits for the next round.
		while IFS= read -r line; do
			line=${line%$'\r'}
			case $line in CTL\ *) n=$((n + 1)) ;; *) continue ;; esac
			[ "$n" -le "$done" ] && continue
			suite_guest_request "${line#CTL }" >>"$2" 2>&1
			echo "rc=$? ${line#CTL }" >>"$2"
			done=$n
		done <"$1"
	done
}

# ---- one kernel x one suite ----
run_suite() { # KERNEL MODULES SUITE
	local kernel=$1 modules=$2 suite=$3 label run_dir checks c p verdict secs luns t0 watcher
	local -a envs args details
	SUITE_PROGRAMS=""
	SUITE_HOST_ROOT=0
	SUITE_LOGIN=1
	SUITE_MODULES=""
	SUITE_MEMORY=1024
	unset -f suite_after_start suite_guest_request suite_target_start suite_target_stop
	# shellcheck disable=SC1090
	. "$HERE/suites/$suite.sh"
	SUITE_CONFIG_FILE="$HERE/suites/$SUITE_CONFIG"
	checks=$SUITE_CHECKS
	luns=$SUITE_LUNS
	envs=("${SUITE_ENV[@]}")
	if [ -n "$STANDIN" ]; then
		SUITE_CONFIG_FILE=""
		luns=$STANDIN_LUNS
		envs=("${STANDIN_ENV[@]}")
	fi
	args=()
	if [ "${#SCRIPTS[@]}" -gt 0 ]; then
		checks=""
		for c in "${SCRIPTS[@]}"; do
			args+=(--guest-script "$c")
			checks="$checks $(basename "$c" .sh)"
		done
	else
		for c in $checks; do args+=(--guest-script "$HERE/guest/$c.sh"); done
	fi
	label=$kernel
	[ -f "$kernel" ] && label=$(basename "$kernel")
	run_dir="$OUTDIR/runs/$label-$suite"
	STATE_DIR="$run_dir/state"
	TARGET_ERROR=""
	rm -rf "$run_dir"
	mkdir -p "$run_dir"
	if [ "$SUITE_HOST_ROOT" = 1 ]; then
		# The suite runs its own daemon in the guest, in the host's root over 9p (sbce_host_chroot).
		[ -n "$STANDIN" ] && return
		args+=(--no-login --host-root --extra-modules "$SUITE_MODULES" --memory "$SUITE_MEMORY"
			--env "SBCE_REPO=$REPO" --env "SBCE_BUILDDIR=$BUILDDIR" --env "SBCE_LOG_LEVEL=$LOG_LEVEL")
		PORT=""
		DAEMON_LOG=""
	elif ! target_start; then
		for c in $checks; do report fail "$label/$suite/$c" "target" "$TARGET_ERROR"; done
		target_stop
		return
	elif [ -z "$STANDIN" ] && declare -F suite_after_start >/dev/null && ! suite_after_start; then
		# The suite's set-up through the control socket (suites/faults.sh).
		for c in $checks; do report fail "$label/$suite/$c" "target" "the suite's set-up after start failed"; done
		target_stop
		return
	fi
	for p in $SUITE_PROGRAMS; do
		if ! guest_program "$p"; then
			for c in $checks; do report fail "$label/$suite/$c" "target" "cannot build tests/kernel/guest/$p.c"; done
			target_stop
			return
		fi
		args+=(--guest-file "$OUTDIR/bin/$p")
	done
	if [ "$SUITE_HOST_ROOT" != 1 ]; then
		[ -n "$SUITE_MODULES" ] && args+=(--extra-modules "$SUITE_MODULES")
		[ "$SUITE_LOGIN" = 1 ] || args+=(--no-login)
		[ -n "${PORT2:-}" ] && args+=(--portal2 "$PORT2")
	fi
	for e in "${envs[@]}"; do args+=(--env "$e"); done
	[ -n "$modules" ] && args+=(--modules "$modules")
	[ "$VERBOSE" = 1 ] && args+=(--verbose)
	t0=$(date +%s.%N)
	CTL_LOG="$run_dir/guest-requests.log"
	watcher=""
	if [ -z "$STANDIN" ] && [ "$SUITE_HOST_ROOT" != 1 ] && declare -F suite_guest_request >/dev/null; then
		guest_requests "$run_dir/vm/results.txt" "$CTL_LOG" &
		watcher=$!
	fi
	"$REPO/scripts/kernel-vm/run" --kernel "$kernel" --port "$PORT" --target "$SUITE_TARGET" --luns "$luns" \
		--out "$run_dir/vm" --log "$OUTDIR/logs/$label-$suite.log" --timeout "$TIMEOUT" "${args[@]}" \
		2>&1 | sed 's/^/  /'
	if [ -n "$watcher" ]; then
		kill "$watcher" 2>/dev/null
		wait "$watcher" 2>/dev/null
		cp "$CTL_LOG" "$OUTDIR/logs/$label-$suite.requests" 2>/dev/null
	fi
	[ "$SUITE_HOST_ROOT" = 1 ] || target_stop
	cp "$run_dir/vm/results.txt" "$OUTDIR/logs/$label-$suite.results" 2>/dev/null
	[ -n "${DAEMON_LOG:-}" ] && cp "$DAEMON_LOG" "$OUTDIR/logs/$label-$suite.sbcemud.log" 2>/dev/null
	echo "  $label/$suite: VM run $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s;" \
		"console log $OUTDIR/logs/$label-$suite.log"
	local results="$run_dir/vm/results.txt"
	[ -f "$results" ] || : >"$results"
	res_load "$results"
	for c in $checks; do
		HOST_FAILS=()
		HOST_ASSERTS=0
		verdict=$(grep -E "^(PASS|FAIL) $c (seconds|exit)=" "$results" | tail -n1)
		secs=$(echo "$verdict" | sed -n 's/.*seconds=\([0-9.]*\).*/\1/p')
		details=()
		if [ -z "$verdict" ]; then
			details+=("the guest did not run it: $(grep -E '^FAIL init' "$results" | head -n1 || true)")
			details+=("see $OUTDIR/logs/$label-$suite.log")
		elif [ "${verdict%% *}" = FAIL ]; then
			while IFS= read -r line; do details+=("guest: ${line#FAIL "$c" }"); done \
				< <(grep -E "^FAIL $c " "$results" | grep -v " exit=")
			details+=("guest: $verdict; see $OUTDIR/logs/$label-$suite.log")
		elif declare -F "host_$c" >/dev/null; then
			"host_$c"
			details=("${HOST_FAILS[@]}")
		fi
		if [ "${#details[@]}" = 0 ]; then
			report pass "$label/$suite/$c" "guest ${secs:-?} s${HOST_ASSERTS:+, $HOST_ASSERTS host assertions}"
		else
			report fail "$label/$suite/$c" "guest ${secs:-?} s" "${details[@]}"
		fi
	done
}

i=0
for kernel in "${KERNELS[@]}"; do
	for suite in "${SUITES[@]}"; do
		run_suite "$kernel" "${KMODULES[$i]}" "$suite"
	done
	i=$((i + 1))
done
echo "kernel tests: $(($(date +%s) - t_all)) s; logs in $OUTDIR/logs"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
