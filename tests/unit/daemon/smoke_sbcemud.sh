#!/bin/bash
# sbcemud's life cycle, without an initiator: command line, configuration
# errors, start-up on the embedded default (backing file created sparse, LU
# state directory made), and graceful shutdown on SIGTERM and SIGINT (exit 0
# after flushing).  Loopback only.  Usage: smoke_sbcemud.sh PATH/TO/sbcemud
set -u
bin=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/sbcemud-smoke.XXXXXX")
pid=
failures=0

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# expect_status WANT CMD...: runs CMD, compares its exit status.
expect_status() {
	local want=$1 got
	shift
	"$@" >"$work/out" 2>"$work/err"
	got=$?
	[ "$got" = "$want" ] || fail "$* exited $got, expected $want: $(cat "$work/err")"
}

# start_daemon NAME: starts sbcemud on a free loopback port; waits for "ready".
start_daemon() {
	local log=$work/$1.log _ port
	for _ in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 10000))
		"$bin" --listen "127.0.0.1:$port" --state-dir "$work/state" >"$log" 2>&1 &
		pid=$!
		for _ in $(seq 1 100); do
			grep -q ' info: ready$' "$log" && return 0
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
		wait "$pid" 2>/dev/null
		pid=
		grep -q 'cannot listen' "$log" || break
	done
	fail "sbcemud did not start: $(cat "$log")"
	return 1
}

# stop_daemon SIGNAL NAME: signals the daemon, expects exit 0 after a flush.
stop_daemon() {
	local sig=$1 log=$work/$2.log status _
	kill -s "$sig" "$pid"
	for _ in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	wait "$pid"
	status=$?
	pid=
	[ "$status" = 0 ] || fail "SIG$sig: exit status $status: $(cat "$log")"
	grep -q 'flushing [0-9]* backing file' "$log" || fail "SIG$sig: no flush logged: $(cat "$log")"
}

# Command line.
expect_status 0 "$bin" --help
expect_status 0 "$bin" --version
grep -q '^sbcemud ' "$work/out" || fail "--version printed $(cat "$work/out")"
expect_status 2 "$bin" --no-such-option
expect_status 2 "$bin" extra-argument
expect_status 0 "$bin" --print-default-config
grep -q '^\[lun "iqn.2026-12.org.sbcemu:default" 0\]$' "$work/out" || fail "--print-default-config"
# --list-keys [SECTION]: the keys from the command line.
expect_status 0 "$bin" --list-keys lun
grep -q '^  subsidiary_template  *string, default (empty)$' "$work/out" || fail "--list-keys lun: $(head -3 "$work/out")"
expect_status 2 "$bin" --list-keys nope
expect_status 0 "$bin" --check --state-dir "$work/state"
[ ! -e "$work/state" ] || fail "--check created the state directory"
grep -q '^sbcemud: configuration OK: 1 target, 7 LUs (1 conglomerate), 2 templates, state in ' "$work/out" ||
	fail "--check printed no summary line: $(cat "$work/out")"

# Configuration errors: every one, as file:line: section.key: reason, then exit 1.
printf '[daemon]\nworkers = 0\n[lun "iqn.2026-12.org.x:t" 0]\nsize = 1M\n' >"$work/bad.ini"
expect_status 1 "$bin" -c "$work/bad.ini"
grep -qx "$work/bad.ini:2: daemon.workers: 0 is out of range (1..64)" "$work/err" ||
	fail "bad.ini: $(cat "$work/err")"
# A bad option value is a command-line mistake: exit status 2 (README, "Command line").
expect_status 2 "$bin" --listen localhost:3260 --check
grep -qx -- '--listen: daemon.listen: "localhost" is not a numeric IPv4 address' "$work/err" ||
	fail "--listen localhost: $(cat "$work/err")"
expect_status 2 "$bin" --log-level loud --check
grep -qx -- '--log-level: daemon.log_level: "loud" is not one of error, warn, info or debug' "$work/err" ||
	fail "--log-level loud: $(cat "$work/err")"
expect_status 1 "$bin" -c "$work/missing.ini"

# Start-up on the embedded default, then SIGTERM.
if start_daemon term; then
	img=$work/state/default-lun0.img
	[ "$(stat -c %s "$img")" = 1073741824 ] || fail "backing file size $(stat -c %s "$img")"
	[ "$(stat -c %b "$img")" = 0 ] || fail "backing file is not sparse"
	[ -d "$work/state/iqn.2026-12.org.sbcemu:default/lun0" ] || fail "no LU state directory"
	# --check finds what start-up would refuse: the state directory this daemon holds.
	expect_status 1 "$bin" --check --state-dir "$work/state"
	grep -q "the state directory $work/state is in use by another sbcemud (pid $pid," "$work/err" ||
		fail "--check on a held state directory: $(cat "$work/err")"
	stop_daemon TERM term
fi
# Again on the existing file, then SIGINT.
if start_daemon int; then
	stop_daemon INT int
fi

[ "$failures" = 0 ] && echo "sbcemud smoke test: all passed"
exit $((failures > 0))
