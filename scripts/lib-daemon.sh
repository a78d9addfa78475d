# shellcheck shell=bash
# Shell helpers to start and stop sbcemud (and, for side-by-side comparisons,
# Debian's tgtd) on a spare loopback port.  Source this file; every function is
# prefixed sbce_ and reports through return status and the variables it names.
#
# Only loopback addresses are used (project rule: tests never leave 127.0.0.0/8).
# Every process started here is remembered by PID and stopped by that PID only.

SBCE_HOST=${SBCE_HOST:-127.0.0.1}

# sbce_port_in_use PORT: true if something listens on PORT (any address).
sbce_port_in_use() {
	ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
}

# sbce_pick_port [LOW HIGH]: prints a port in [LOW, HIGH] (default 3300-3999)
# on which nothing listens.  Random, so parallel runs rarely collide.
sbce_pick_port() {
	local low=${1:-3300} high=${2:-3999} port i
	for i in $(seq 1 200); do
		port=$((low + RANDOM % (high - low + 1)))
		if ! sbce_port_in_use "$port"; then
			echo "$port"
			return 0
		fi
	done
	echo "sbce_pick_port: no free port in $low-$high" >&2
	return 1
}

# sbce_wait_port PORT PID [SECONDS]: waits until PORT is listening.  Fails early
# if process PID died (its log then tells why), or after SECONDS (default 20).
sbce_wait_port() {
	local port=$1 pid=$2 secs=${3:-20} i
	for i in $(seq 1 $((secs * 10))); do
		if sbce_port_in_use "$port"; then
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "sbce_wait_port: process $pid exited before port $port opened" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "sbce_wait_port: port $port not listening after ${secs}s" >&2
	return 1
}

# sbce_find_daemon [PATH]: prints the sbcemud binary to use: PATH if given,
# else $SBCEMUD, else build*/daemon/sbcemud under the repository (newest first).
sbce_find_daemon() {
	local repo cand
	if [ -n "${1:-}" ]; then
		echo "$1"
		return 0
	fi
	if [ -n "${SBCEMUD:-}" ]; then
		echo "$SBCEMUD"
		return 0
	fi
	repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	cand=$(ls -t "$repo"/build/daemon/sbcemud "$repo"/build*/daemon/sbcemud 2>/dev/null | head -n1)
	if [ -n "$cand" ]; then
		echo "$cand"
		return 0
	fi
	echo "sbce_find_daemon: no sbcemud binary found (build it, or pass its path)" >&2
	return 1
}

# sbce_daemon_start BIN STATE_DIR PORT [EXTRA ARGS...]
# Starts BIN --listen $SBCE_HOST:PORT --state-dir STATE_DIR [EXTRA ARGS] in the
# background, output to STATE_DIR/sbcemud.log (appended, so restarts keep history),
# and waits for the port.  Sets SBCE_DAEMON_PID.  On failure prints the log tail.
sbce_daemon_start() {
	local bin=$1 state=$2 port=$3
	shift 3
	mkdir -p "$state"
	echo "=== $(date -u +%FT%TZ) start: $bin --listen $SBCE_HOST:$port --state-dir $state $*" >>"$state/sbcemud.log"
	"$bin" --listen "$SBCE_HOST:$port" --state-dir "$state" "$@" >>"$state/sbcemud.log" 2>&1 &
	SBCE_DAEMON_PID=$!
	if ! sbce_wait_port "$port" "$SBCE_DAEMON_PID" "${SBCE_START_TIMEOUT:-20}"; then
		echo "--- tail of $state/sbcemud.log:" >&2
		tail -n 30 "$state/sbcemud.log" >&2
		sbce_daemon_stop KILL
		return 1
	fi
	return 0
}

# sbce_daemon_stop [SIGNAL [SECONDS]]: sends SIGNAL (default TERM) to
# SBCE_DAEMON_PID and waits up to SECONDS (default 10) for it to exit, then
# sends KILL.  Sets SBCE_DAEMON_STATUS to the exit status (128+n if killed).
sbce_daemon_stop() {
	local sig=${1:-TERM} secs=${2:-10} pid=${SBCE_DAEMON_PID:-} i
	SBCE_DAEMON_STATUS=
	[ -n "$pid" ] || return 0
	kill -s "$sig" "$pid" 2>/dev/null
	for i in $(seq 1 $((secs * 10))); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "sbce_daemon_stop: pid $pid ignored SIG$sig for ${secs}s, sending KILL" >&2
		kill -s KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
	SBCE_DAEMON_STATUS=$?
	SBCE_DAEMON_PID=
	return 0
}

# sbce_tgt_start DIR PORT [SIZE]: starts Debian's tgtd on $SBCE_HOST:PORT with a
# private control port, one target (SBCE_TGT_IQN) and LUN 1 backed by a sparse
# file DIR/tgt-disk.img of SIZE (default 1G).  Sets SBCE_TGT_PID, SBCE_TGT_CTL,
# SBCE_TGT_URL (the LU's iSCSI URL).  LUN 0 of a tgt target is its controller.
sbce_tgt_start() {
	local dir=$1 port=$2 size=${3:-1G} i
	SBCE_TGT_IQN=iqn.2026-12.org.sbcemu.peer:tgt
	command -v tgtd >/dev/null || { echo "sbce_tgt_start: tgtd not installed (apt-get install tgt)" >&2; return 1; }
	mkdir -p "$dir"
	rm -f "$dir/tgt-disk.img"
	truncate -s "$size" "$dir/tgt-disk.img"
	for i in $(seq 1 50); do
		SBCE_TGT_CTL=$((1000 + RANDOM % 9000))
		[ -e "/var/run/tgtd/socket.$SBCE_TGT_CTL" ] || break
	done
	tgtd -f -C "$SBCE_TGT_CTL" --iscsi "portal=$SBCE_HOST:$port" >"$dir/tgtd.log" 2>&1 &
	SBCE_TGT_PID=$!
	sbce_wait_port "$port" "$SBCE_TGT_PID" 20 || { cat "$dir/tgtd.log" >&2; sbce_tgt_stop; return 1; }
	# The control socket may appear a moment after the portal.
	for i in $(seq 1 50); do
		tgtadm -C "$SBCE_TGT_CTL" --lld iscsi --op show --mode system >/dev/null 2>&1 && break
		sleep 0.1
	done
	tgtadm -C "$SBCE_TGT_CTL" --lld iscsi --op new --mode target --tid 1 -T "$SBCE_TGT_IQN" &&
		tgtadm -C "$SBCE_TGT_CTL" --lld iscsi --op new --mode logicalunit --tid 1 --lun 1 \
			-b "$dir/tgt-disk.img" &&
		tgtadm -C "$SBCE_TGT_CTL" --lld iscsi --op bind --mode target --tid 1 -I ALL || {
		echo "sbce_tgt_start: tgtadm setup failed" >&2
		sbce_tgt_stop
		return 1
	}
	SBCE_TGT_URL="iscsi://$SBCE_HOST:$port/$SBCE_TGT_IQN/1"
	return 0
}

# sbce_tgt_stop: tgtd ignores SIGTERM while targets exist, so delete the target
# and ask the daemon to exit through its control port, then wait; KILL by PID
# as a last resort.
sbce_tgt_stop() {
	local pid=${SBCE_TGT_PID:-} i
	[ -n "$pid" ] || return 0
	tgtadm -C "$SBCE_TGT_CTL" --lld iscsi --op delete --mode target --tid 1 --force >/dev/null 2>&1
	tgtadm -C "$SBCE_TGT_CTL" --lld iscsi --op delete --mode system >/dev/null 2>&1
	for i in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -s KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
	SBCE_TGT_PID=
	return 0
}
