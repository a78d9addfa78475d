#!/bin/bash
# How much atomic writes on one half of a logical unit stall reads on the
# other half: LBA-range locks (`lba_locks = range`) against the LU-wide lock
# they replace (`lba_locks = lu`).  For each mode it starts sbcemud on a free
# loopback port with one 1 GiB LU (sparse file, WRITE ATOMIC and COMPARE AND
# WRITE enabled), runs tests/bench_lba_locks (session R: READ(16)s in the
# first half; session W: WRITE ATOMIC(16) and COMPARE AND WRITE in the
# second) and stops the daemon.  The modes run alternately, range, lu, range,
# lu (these machines are shared and noisy), and the median of each mode is
# reported with the ratio of read IOPS:
#
#   bench-lba-locks: read IOPS range/lu = 3.41 (range 12345, lu 3620)
#
# Usage: scripts/bench-lba-locks.sh [--build DIR] [--seconds N] [--no-mode-key]
#                                   [--daemon BIN] [--no-build]
#   --build DIR    build directory (default build/, or $SBCEMU_BUILD_DIR);
#                  bench_lba_locks and sbcemud are built there first
#   --seconds N    length of each run (default 5)
#   --no-mode-key  leave `lba_locks` out of the configuration (also
#                  SBCE_BENCH_NO_MODE_KEY=1), for a daemon that does not know
#                  the key yet: both "modes" then run the daemon's only locking
#   --daemon BIN   the sbcemud to run (default DIR/daemon/sbcemud)
#   --no-build     use the binaries as they are
# Environment: BENCH_QD_READ (default 16), BENCH_QD_WRITE (default 4),
# BENCH_ROUNDS (default 2: runs of each mode).
#
# Exit status 0 on success; non-zero if a daemon did not start (e.g. it
# refused the configuration) or the benchmark tool failed.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib-daemon.sh
. "$repo/scripts/lib-daemon.sh"

build=${SBCEMU_BUILD_DIR:-$repo/build}
seconds=5
no_mode_key=${SBCE_BENCH_NO_MODE_KEY:-0}
daemon=
do_build=1
qd_read=${BENCH_QD_READ:-16}
qd_write=${BENCH_QD_WRITE:-4}
rounds=${BENCH_ROUNDS:-2}

usage() {
	sed -n 's/^# \{0,1\}//; /^Usage:/,/^Exit status/p' "${BASH_SOURCE[0]}" | sed '$d' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
	--build=*) build=${1#*=}; shift ;;
	--seconds) [ $# -ge 2 ] || usage; seconds=$2; shift 2 ;;
	--seconds=*) seconds=${1#*=}; shift ;;
	--no-mode-key) no_mode_key=1; shift ;;
	--daemon) [ $# -ge 2 ] || usage; daemon=$2; shift 2 ;;
	--daemon=*) daemon=${1#*=}; shift ;;
	--no-build) do_build=0; shift ;;
	-h | --help) usage ;;
	*) echo "bench-lba-locks: unknown argument: $1" >&2; usage ;;
	esac
done
for v in seconds qd_read qd_write rounds; do
	if ! [[ ${!v} =~ ^[0-9]+$ ]]; then
		echo "bench-lba-locks: $v must be a number, not '${!v}'" >&2
		exit 2
	fi
done
if [ "$seconds" -lt 1 ] || [ "$rounds" -lt 1 ]; then
	echo "bench-lba-locks: seconds and rounds must be >= 1" >&2
	exit 2
fi
case $no_mode_key in 1 | true | yes) no_mode_key=1 ;; *) no_mode_key=0 ;; esac

build=$(cd "$build" 2>/dev/null && pwd || echo "$build")
if [ "$do_build" = 1 ]; then
	if [ ! -f "$build/CMakeCache.txt" ]; then
		SBCEMU_BUILD_DIR=$build "$repo/scripts/build.sh"
	fi
	targets=(bench_lba_locks)
	[ -n "$daemon" ] || targets+=(sbcemud)
	cmake --build "$build" --target "${targets[@]}" -j "$(nproc)" >/dev/null
fi
daemon=${daemon:-$build/daemon/sbcemud}
tool=$build/tests/bench_lba_locks
for f in "$daemon" "$tool"; do
	[ -x "$f" ] || { echo "bench-lba-locks: $f not found (build it, or see --help)" >&2; exit 1; }
done

iqn=iqn.2026-12.org.sbcemu:bench-lba-locks
scratch=$(mktemp -d "${TMPDIR:-/tmp}/bench-lba-locks.XXXXXX")
cleanup() {
	sbce_daemon_stop TERM 10 || true
	rm -rf "$scratch"
}
# (sbce_* helpers are not written for errexit: always call them in a || list.)
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# write_config FILE PORT MODE: one 1 GiB LU; MODE range|lu, or empty for no lba_locks key.
write_config() {
	local file=$1 port=$2 mode=$3
	cat >"$file" <<-EOF
		# bench-lba-locks scratch configuration
		[daemon]
		listen = $SBCE_HOST:$port
		state_dir = $scratch/state
		log_level = warn

		[target "$iqn"]

		[lun "$iqn" 0]
		kind = conventional
		path = lba-locks-lun0.img
		size = 1G
		logical_block_size = 512
		max_compare_and_write = 255
		max_atomic_transfer_length = 2048
	EOF
	if [ -n "$mode" ]; then
		echo "lba_locks = $mode" >>"$file"
	fi
}

# run_one MODE: sets RUN_LINE to the tool's result line; fails if the daemon
# did not start or the tool failed.  (Not run in a subshell: the daemon must
# stay a child of this shell, for sbce_daemon_stop and the EXIT trap.)
run_one() {
	local mode=$1 key=$1 port conf status=0
	RUN_LINE=
	[ "$no_mode_key" = 1 ] && key=
	port=$(sbce_pick_port 3300 3999) || return 1
	conf=$scratch/sbcemud-$mode.ini
	write_config "$conf" "$port" "$key"
	if ! sbce_daemon_start "$daemon" "$scratch/state" "$port" -c "$conf"; then
		echo "bench-lba-locks: sbcemud did not start with lba_locks = ${key:-(no key)}" >&2
		return 1
	fi
	RUN_LINE=$("$tool" "$SBCE_HOST:$port" "$iqn" 0 "$seconds" "$qd_read" "$qd_write") || status=$?
	sbce_daemon_stop TERM 20 || true
	if [ "$status" -ne 0 ]; then
		echo "bench-lba-locks: bench_lba_locks failed (exit $status) with lba_locks = ${key:-(no key)}" >&2
		echo "--- tail of $scratch/state/sbcemud.log:" >&2
		tail -n 20 "$scratch/state/sbcemud.log" >&2
		return 1
	fi
	if [ "${SBCE_DAEMON_STATUS:-0}" != 0 ]; then
		echo "bench-lba-locks: warning: sbcemud exited with status $SBCE_DAEMON_STATUS after SIGTERM" >&2
	fi
	case $RUN_LINE in
	read_iops=*) ;;
	*) echo "bench-lba-locks: unexpected output from bench_lba_locks: $RUN_LINE" >&2; return 1 ;;
	esac
}

# field LINE KEY: the value of KEY=... in a result line.
field() {
	local kv
	for kv in $1; do
		if [ "${kv%%=*}" = "$2" ]; then
			echo "${kv#*=}"
			return 0
		fi
	done
	echo 0
}

# median V...: the median (mean of the middle two for an even count), rounded.
median() {
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
		if (NR % 2) m = v[(NR + 1) / 2]; else m = (v[NR / 2] + v[NR / 2 + 1]) / 2;
		printf "%.0f\n", m }'
}

if [ "$no_mode_key" = 1 ]; then
	echo "bench-lba-locks: --no-mode-key: no lba_locks key, both modes run the daemon's default locking" >&2
fi
declare -A results=([range]="" [lu]="")
for r in $(seq 1 "$rounds"); do
	for mode in range lu; do
		run_one "$mode" || exit 1
		echo "bench-lba-locks: $mode #$r: $RUN_LINE"
		results[$mode]+="$RUN_LINE"$'\n'
	done
done

declare -A iops
total_errors=0
for mode in range lu; do
	vals_iops=() vals_p99=() vals_w=()
	caw_fail=0 errors=0
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		vals_iops+=("$(field "$line" read_iops)")
		vals_p99+=("$(field "$line" read_p99_us)")
		vals_w+=("$(field "$line" write_ops)")
		caw_fail=$((caw_fail + $(field "$line" caw_fail)))
		errors=$((errors + $(field "$line" errors)))
	done <<<"${results[$mode]}"
	iops[$mode]=$(median "${vals_iops[@]}")
	total_errors=$((total_errors + errors))
	echo "bench-lba-locks: $mode (median of $rounds): read_iops=${iops[$mode]}" \
		"read_p99_us=$(median "${vals_p99[@]}") write_ops=$(median "${vals_w[@]}")" \
		"caw_fail=$caw_fail errors=$errors"
done
if [ "${iops[lu]}" -gt 0 ]; then
	ratio=$(awk -v a="${iops[range]}" -v b="${iops[lu]}" 'BEGIN { printf "%.2f", a / b }')
else
	ratio=inf
fi
echo "bench-lba-locks: read IOPS range/lu = $ratio (range ${iops[range]}, lu ${iops[lu]})" \
	"$([ "$no_mode_key" = 1 ] && echo '[no lba_locks key: same locking in both]')"
if [ "$total_errors" -gt 0 ]; then
	echo "bench-lba-locks: warning: $total_errors commands did not end in GOOD (see above)" >&2
fi
