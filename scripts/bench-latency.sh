#!/bin/bash
# Latency distributions of the rotating-disk media model and of a command
# duration limit beside a saturating load (the results
# are in docs/latency.md, "Measured").  Starts sbcemud on a free loopback port
# with one 4 GiB LU (sparse file, `latency = rotating rpm=7200`, defaults
# otherwise, `command_duration_limits = t2`) and runs tests/bench_latency
# three times on it:
#
#   qd1    random 4 KiB READ(16)s over the whole LU, one at a time;
#   qd32   the same, 32 outstanding (the drive reorders, SATF);
#   cdl    untagged random 4 KiB WRITE(16)s, 16 outstanding (class bg),
#          beside random 4 KiB READ(16)s with DLD 1, one at a time (class
#          cdl); T2A descriptor 1 is set first to a max inactive time of
#          BENCH_CDL_LIMIT_MS with policy BENCH_CDL_POLICY (0h,
#          complete-earliest: nothing fails, misses are counted by the LU).
#
# It stops the daemon and prints a table (IOPS, p50, p90, p99, max per run
# and class, in ms), the comparisons with the reference figures of
# docs/latency.md (7200 rpm: 75-100 IOPS at QD1, QD32 2-3 x QD1), the CDL
# class's p99 against its limit, and `sbcemuctl --json stats` of the LU
# taken at the end of the cdl run (the statistics are reset at the start of
# each run).  Then it draws with
# gnuplot (gnuplot-nox is installed with apt-get if missing):
#
#   OUT/latency-qd.png    CDF of the latency of qd1 and qd32 (log x, ms)
#   OUT/latency-cdl.png   CDF of the cdl and bg classes, with the limit
#
# Usage: scripts/bench-latency.sh [--build DIR] [--no-build] [--out DIR]
#                                 [--quick] [--csv DIR] [--daemon BIN]
#   --build DIR    build directory (default build/, or $SBCEMU_BUILD_DIR);
#                  bench_latency, sbcemud and sbcemuctl are built there first
#   --no-build     use the binaries as they are
#   --out DIR      where the PNGs go (default docs/)
#   --quick        short runs (60 and 300 reads, 4 s of cdl): a smoke run,
#                  not figures to publish
#   --csv DIR      keep the per-command CSV files there (default: a scratch
#                  directory, removed at the end)
#   --daemon BIN   the sbcemud to run (default DIR/daemon/sbcemud)
# Environment: BENCH_QD1_COUNT (400), BENCH_QD32_COUNT (2000),
# BENCH_CDL_SECONDS (15), BENCH_CDL_LIMIT_MS (50), BENCH_CDL_POLICY (0),
# BENCH_BG_QD (16).
#
# Exit status 0 on success; non-zero if the daemon did not start, the
# benchmark tool failed or gnuplot could not be had.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib-daemon.sh
. "$repo/scripts/lib-daemon.sh"

build=${SBCEMU_BUILD_DIR:-$repo/build}
out=$repo/docs
csv_dir=
daemon=
do_build=1
quick=0
qd1_count=${BENCH_QD1_COUNT:-400}
qd32_count=${BENCH_QD32_COUNT:-2000}
cdl_seconds=${BENCH_CDL_SECONDS:-15}
limit_ms=${BENCH_CDL_LIMIT_MS:-50}
policy=${BENCH_CDL_POLICY:-0}
bg_qd=${BENCH_BG_QD:-16}

usage() {
	sed -n 's/^# \{0,1\}//; /^Usage:/,/^Exit status/p' "${BASH_SOURCE[0]}" | sed '$d' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
	--build=*) build=${1#*=}; shift ;;
	--out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
	--out=*) out=${1#*=}; shift ;;
	--csv) [ $# -ge 2 ] || usage; csv_dir=$2; shift 2 ;;
	--csv=*) csv_dir=${1#*=}; shift ;;
	--daemon) [ $# -ge 2 ] || usage; daemon=$2; shift 2 ;;
	--daemon=*) daemon=${1#*=}; shift ;;
	--no-build) do_build=0; shift ;;
	--quick) quick=1; shift ;;
	-h | --help) usage ;;
	*) echo "bench-latency: unknown argument: $1" >&2; usage ;;
	esac
done
if [ "$quick" = 1 ]; then
	qd1_count=60 qd32_count=300 cdl_seconds=4
fi
for v in qd1_count qd32_count cdl_seconds limit_ms bg_qd; do
	if ! [[ ${!v} =~ ^[0-9]+$ ]] || [ "${!v}" -lt 1 ]; then
		echo "bench-latency: $v must be a number >= 1, not '${!v}'" >&2
		exit 2
	fi
done
if ! [[ $policy =~ ^[0-9a-fA-F]$ ]]; then
	echo "bench-latency: BENCH_CDL_POLICY must be one hex digit, not '$policy'" >&2
	exit 2
fi

# gnuplot first: no point in a 40 s run that cannot be drawn.  Installed as
# scripts/deps.sh installs packages (root, or sudo).
if ! command -v gnuplot >/dev/null; then
	sudo=()
	if [ "$(id -u)" != 0 ]; then
		command -v sudo >/dev/null || { echo "bench-latency: no gnuplot; install gnuplot-nox as root" >&2; exit 1; }
		sudo=(sudo)
	fi
	echo "bench-latency: installing gnuplot-nox" >&2
	export DEBIAN_FRONTEND=noninteractive
	"${sudo[@]}" apt-get install -y -q --no-install-recommends gnuplot-nox </dev/null >&2 ||
		{ "${sudo[@]}" apt-get update -q </dev/null >&2 &&
			"${sudo[@]}" apt-get install -y -q --no-install-recommends gnuplot-nox </dev/null >&2; } ||
		{ echo "bench-latency: could not install gnuplot-nox" >&2; exit 1; }
fi

build=$(cd "$build" 2>/dev/null && pwd || echo "$build")
if [ "$do_build" = 1 ]; then
	if [ ! -f "$build/CMakeCache.txt" ]; then
		SBCEMU_BUILD_DIR=$build "$repo/scripts/build.sh"
	fi
	targets=(bench_latency sbcemuctl)
	[ -n "$daemon" ] || targets+=(sbcemud)
	cmake --build "$build" --target "${targets[@]}" -j "$(nproc)" >/dev/null
fi
daemon=${daemon:-$build/daemon/sbcemud}
ctl=$build/daemon/sbcemuctl
tool=$build/tests/bench_latency
for f in "$daemon" "$ctl" "$tool"; do
	[ -x "$f" ] || { echo "bench-latency: $f not found (build it, or see --help)" >&2; exit 1; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)

iqn=iqn.2026-12.org.sbcemu:bench-latency
model="rotating rpm=7200"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/bench-latency.XXXXXX")
if [ -n "$csv_dir" ]; then
	mkdir -p "$csv_dir"
	csv_dir=$(cd "$csv_dir" && pwd)
else
	csv_dir=$scratch
fi
cleanup() {
	sbce_daemon_stop TERM 20 || true
	rm -rf "$scratch"
}
# (sbce_* helpers are not written for errexit: always call them in a || list.)
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port=$(sbce_pick_port 3300 3999)
conf=$scratch/sbcemud.ini
cat >"$conf" <<EOF
# bench-latency scratch configuration
[daemon]
listen = $SBCE_HOST:$port
state_dir = $scratch/state
log_level = warn

[target "$iqn"]

[lun "$iqn" 0]
kind = conventional
path = latency-lun0.img
size = 4G
logical_block_size = 512
latency = $model
command_duration_limits = t2
EOF
if ! sbce_daemon_start "$daemon" "$scratch/state" "$port" -c "$conf"; then
	echo "bench-latency: sbcemud did not start" >&2
	exit 1
fi
ctl_cmd() { "$ctl" -s "$scratch/state/control.sock" "$@"; }

# bench NAME ARGS...: runs the tool, its summary lines into $scratch/NAME.out, and the LU's
# statistics of the run (reset at its start) into $scratch/NAME.json.
bench() {
	local name=$1 status=0
	shift
	ctl_cmd stats --reset >/dev/null || { echo "bench-latency: sbcemuctl stats --reset failed" >&2; exit 1; }
	echo "bench-latency: $name: bench_latency $*" >&2
	"$tool" "$SBCE_HOST:$port" "$iqn" 0 "$csv_dir/$name.csv" "$@" >"$scratch/$name.out" || status=$?
	if [ "$status" -ne 0 ]; then
		echo "bench-latency: bench_latency failed (exit $status) in $name" >&2
		echo "--- tail of $scratch/state/sbcemud.log:" >&2
		tail -n 20 "$scratch/state/sbcemud.log" >&2
		exit 1
	fi
	sed "s/^/bench-latency: $name: /" "$scratch/$name.out" >&2
	ctl_cmd --json stats >"$scratch/$name.json" || { echo "bench-latency: sbcemuctl stats failed" >&2; exit 1; }
}

started=$(date -u +%FT%TZ)
bench qd1 --qd 1 --count "$qd1_count"
bench qd32 --qd 32 --count "$qd32_count"
bench cdl --cdl "$cdl_seconds" --bg-qd "$bg_qd" --cdl-qd 1 --limit-ms "$limit_ms" --policy "$policy"
sbce_daemon_stop TERM 20 || true
if [ "${SBCE_DAEMON_STATUS:-0}" != 0 ]; then
	echo "bench-latency: warning: sbcemud exited with status $SBCE_DAEMON_STATUS after SIGTERM" >&2
fi

# field NAME CLASS KEY: KEY=... of CLASS's summary line of run NAME.
field() {
	awk -v c="class=$2" -v k="$3" '$1 == c { for (i = 2; i <= NF; i++) { split($i, kv, "=");
		if (kv[1] == k) print kv[2] } }' "$scratch/$1.out"
}
ms() { awk -v u="$1" 'BEGIN { printf "%.1f", u / 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

echo
echo "bench-latency: $started, sbcemud $(git -C "$repo" describe --always --dirty 2>/dev/null || echo '?'), LU 4 GiB, latency = $model"
echo
echo "| run | class | commands | IOPS | p50 ms | p90 ms | p99 ms | max ms | not GOOD |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
for rc in "qd1 read" "qd32 read" "cdl cdl" "cdl bg"; do
	read -r r c <<<"$rc"
	case $c in
	read) label=$r cls="READ(16), QD ${r#qd}" ;;
	cdl) label="cdl mix" cls="READ(16) DLD 1, QD 1" ;;
	*) label="cdl mix" cls="WRITE(16) untagged, QD $bg_qd" ;;
	esac
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$cls" "$(field "$r" "$c" n)" \
		"$(field "$r" "$c" iops)" "$(ms "$(field "$r" "$c" p50_us)")" "$(ms "$(field "$r" "$c" p90_us)")" \
		"$(ms "$(field "$r" "$c" p99_us)")" "$(ms "$(field "$r" "$c" max_us)")" "$(field "$r" "$c" not_good)"
done
qd1_iops=$(field qd1 read iops)
qd32_iops=$(field qd32 read iops)
cdl_p99=$(field cdl cdl p99_us)
bg_p99=$(field cdl bg p99_us)
d1=$(jq -c '.lus[0].duration_limits // [] | map(select(.page == "T2A" and .descriptor == 1)) | .[0] // {}' \
	"$scratch/cdl.json" 2>/dev/null || echo '{}')
# lu NAME FILTER: FILTER applied to the LU's statistics of run NAME.
lu() { jq -r ".lus[0] | $2 // 0" "$scratch/$1.json" 2>/dev/null || echo 0; }
echo
echo "| comparison | measured | reference (docs/latency.md) | ratio |"
echo "|---|---:|---|---:|"
echo "| QD1 IOPS | $qd1_iops | 75-100 (7200 rpm); model 78.5 | $(ratio "$qd1_iops" 75) of 75, $(ratio "$qd1_iops" 100) of 100, $(ratio "$qd1_iops" 78.5) of 78.5 |"
echo "| QD1 mean latency: initiator / LU (total_us) | $(awk -F, '$1 == "read" { s += $5; n++ } END { printf "%.2f", s / n / 1000 }' "$csv_dir/qd1.csv") / $(ms "$(lu qd1 .total_us.mean)") ms | model 12.74 ms | |"
echo "| QD32 mean commands in the LU (Little: total_us mean x IOPS) | $(awk -v m="$(lu qd32 .total_us.mean)" -v i="$qd32_iops" 'BEGIN { printf "%.1f", m / 1e6 * i }') | 32 | |"
echo "| QD32 IOPS / QD1 IOPS | $(ratio "$qd32_iops" "$qd1_iops") | 2-3 x; model 2.5 x (208 IOPS) | $(ratio "$qd32_iops" 208) of 208 IOPS |"
echo "| cdl p99 (sent to answered) | $(ms "$cdl_p99") ms | limit: max inactive time $limit_ms ms, policy ${policy}h | $(ratio "$(ms "$cdl_p99")" "$limit_ms") of the limit |"
echo "| cdl p99 queued (LU's histogram) | $(ms "$(jq -r '.queued_us.p99 // 0' <<<"$d1")") ms | max inactive time $limit_ms ms | $(ratio "$(ms "$(jq -r '.queued_us.p99 // 0' <<<"$d1")")" "$limit_ms") of the limit |"
echo "| cdl max inactive time missed (LU) | $(jq -r '.inactive_miss // "-"' <<<"$d1") of $(jq -r '.commands // "-"' <<<"$d1") | 0 | |"
echo "| bg p99 | $(ms "$bg_p99") ms | no limit | $(ratio "$bg_p99" "$cdl_p99") x cdl p99 |"
echo
echo "sbcemuctl --json stats (LU 0, from the start of the cdl run to its end):"
jq . "$scratch/cdl.json" 2>/dev/null || cat "$scratch/cdl.json"

# ---- plots ----

# cdf CSV CLASS DAT: "latency_ms fraction" of CLASS's commands, sorted.
cdf() {
	awk -F, -v c="$2" 'NR > 1 && $1 == c { print $5 / 1000 }' "$1" | sort -g |
		awk '{ v[NR] = $1 } END { for (i = 1; i <= NR; i++) printf "%.4f %.6f\n", v[i], i / NR }' >"$3"
	[ -s "$3" ] || { echo "bench-latency: no $2 samples in $1" >&2; exit 1; }
}
cdf "$csv_dir/qd1.csv" read "$scratch/qd1.dat"
cdf "$csv_dir/qd32.csv" read "$scratch/qd32.dat"
cdf "$csv_dir/cdl.csv" cdl "$scratch/cdl.dat"
cdf "$csv_dir/cdl.csv" bg "$scratch/bg.dat"

# x from 1 ms to a little past the slowest command (gnuplot would round up to the next decade).
xmax=$(cat "$scratch"/{qd1,qd32,cdl,bg}.dat | awk '$1 > m { m = $1 } END { printf "%.0f", (m > 8 ? m : 8) * 1.25 }')
term="pngcairo size 900,560 font 'sans,10'"
gnuplot -e "set terminal $term" >/dev/null 2>&1 || term="png size 900,560"
title_tail="sbcemud, latency = $model, 4 KiB random, $(date -u +%F)"
[ "$quick" = 0 ] || title_tail+=" (--quick)"
gnuplot <<EOF
set terminal $term
set datafile separator " "
set logscale x 10
set format x "%g"
set xlabel "latency, sent to answered (ms, log scale)"
set ylabel "fraction of commands"
set yrange [0:1]
set xrange [1:$xmax]
set grid xtics mxtics ytics
set key bottom right
set arrow from 12.74, graph 0 to 12.74, graph 1 nohead dashtype 3 lc rgb "gray40"
set label "model's mean at QD 1\n(12.74 ms)" at 12.74, graph 0.55 right offset -0.5, 0 tc rgb "gray40"
set output "$out/latency-qd.png"
set title "READ(16) latency CDF at queue depth 1 and 32\n{/*0.8 $title_tail}"
plot "$scratch/qd1.dat" using 1:2 with steps lw 2 title sprintf("QD 1: %s IOPS", "$qd1_iops"), \
     "$scratch/qd32.dat" using 1:2 with steps lw 2 title sprintf("QD 32: %s IOPS", "$qd32_iops")
unset arrow
unset label
set arrow from $limit_ms, graph 0 to $limit_ms, graph 1 nohead dashtype 2 lc rgb "red"
set label "T2A descriptor 1: max inactive\ntime $limit_ms ms, policy ${policy}h" at $limit_ms, graph 0.9 left offset 0.5, 0 tc rgb "red"
set output "$out/latency-cdl.png"
set title "Command duration limit beside a saturating load (one LU)\n{/*0.8 $title_tail}"
plot "$scratch/cdl.dat" using 1:2 with steps lw 2 title "READ(16) with DLD 1, QD 1", \
     "$scratch/bg.dat" using 1:2 with steps lw 2 title "WRITE(16) untagged, QD $bg_qd"
EOF
echo
echo "bench-latency: plots: $out/latency-qd.png $out/latency-cdl.png"
[ "$csv_dir" = "$scratch" ] || echo "bench-latency: CSV files: $csv_dir/{qd1,qd32,cdl}.csv"
