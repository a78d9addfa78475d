# shellcheck shell=bash
# Kernel test suite "multipath": one LU served by two sbcemud nodes on one
# Ceph RBD image (docs/rbd.md), reached by the guest through both, as a host
# reaches a dual-controller array: dm-multipath with the ALUA device handler
# over both paths, I/O running while the active node is killed (SIGKILL),
# the path switching to the other node once it has taken the image over,
# every acknowledged block read back, and the killed node, restarted, seen
# in standby.  The throwaway cluster is the project's (scripts/ceph-cluster,
# a watch timeout of 10 s so that a dead node's lock is broken 10 s after
# its death).  Sourced by tests/kernel/run.sh.
SUITE_TARGET=iqn.2026-12.org.sbcemu:kvm
SUITE_CONFIG=multipath.ini      # a template: one configuration per node
SUITE_LUNS=""
SUITE_LOGIN=0                   # the guest logs in to both nodes itself
SUITE_CHECKS="multipath"
SUITE_MODULES="dm_mod dm_multipath dm_round_robin scsi_dh_alua"
SUITE_ENV=(SBCE_MPATH_LUN=1)

# mp_node_start NODE TPGT PEER PORT: starts node NODE (a or b) on PORT; its pid in $STATE_DIR/NODE.pid.
mp_node_start() {
	local node=$1 dir="$STATE_DIR/$1"
	mkdir -p "$dir"
	sed -e "s|@NODE@|$node|g" -e "s|@TPGT@|$2|g" -e "s|@PEER@|$3|g" -e "s|@CEPH_CONF@|$MP_CEPH_CONF|g" \
		"$HERE/suites/$SUITE_CONFIG" >"$dir/sbcemud.ini"
	SBCE_DAEMON_PID=""
	sbce_daemon_start "$SBCEMUD" "$dir" "$4" -c "$dir/sbcemud.ini" --log-level "$LOG_LEVEL" 2>/dev/null || return 1
	echo "$SBCE_DAEMON_PID" >"$STATE_DIR/$node.pid"
	disown "$SBCE_DAEMON_PID" 2>/dev/null # its kill -9 is part of the test, not news for the shell
	echo "$4" >"$STATE_DIR/$node.port"
	SBCE_DAEMON_PID=""
}

# mp_node_stop NODE SIGNAL: stops the node (SIGKILL: as a crash) and waits for it.
mp_node_stop() {
	local pid
	pid=$(cat "$STATE_DIR/$1.pid" 2>/dev/null) || return 0
	rm -f "$STATE_DIR/$1.pid"
	kill -s "$2" "$pid" 2>/dev/null
	for _ in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -s KILL "$pid" 2>/dev/null
}

# The cluster, then node A (it takes the image: group 1 active/optimized), then node B (standby).
suite_target_start() {
	local out
	[ -x "$SBCEMUD" ] || { TARGET_ERROR="no sbcemud at $SBCEMUD (build it, or pass --builddir)"; return 1; }
	if ! out=$(OSD_CLIENT_WATCH_TIMEOUT=10 "$REPO/scripts/ceph-cluster" up "$STATE_DIR/ceph" 2>&1); then
		TARGET_ERROR="the Ceph cluster did not start: $(echo "$out" | tail -n 3 | tr '\n' ' ')"
		return 1
	fi
	MP_CEPH_CONF=$(echo "$out" | tail -n 1)
	PORT2=$(sbce_pick_port) || return 1
	if ! mp_node_start a 1 2 "$PORT"; then
		TARGET_ERROR="node A did not start: $(tail -n 3 "$STATE_DIR/a/sbcemud.log" | tr '\n' ' ')"
		return 1
	fi
	if ! mp_node_start b 2 1 "$PORT2"; then
		TARGET_ERROR="node B did not start: $(tail -n 3 "$STATE_DIR/b/sbcemud.log" | tr '\n' ' ')"
		return 1
	fi
	DAEMON_LOG="$STATE_DIR/a/sbcemud.log"
}

suite_target_stop() {
	mp_node_stop a TERM
	mp_node_stop b TERM
	if [ -d "$STATE_DIR/ceph" ]; then
		"$REPO/scripts/ceph-cluster" down "$STATE_DIR/ceph" >/dev/null 2>&1
	fi
	if [ -d "$STATE_DIR/b" ] && [ -d "$OUTDIR/logs" ]; then
		cp "$STATE_DIR/b/sbcemud.log" "$OUTDIR/logs/$(basename "$(dirname "$STATE_DIR")")-node-b.sbcemud.log" 2>/dev/null
	fi
	return 0
}

# The guest's requests (sbce_host_ctl): kill node A as a crash, start it again.
suite_guest_request() {
	case $1 in
	"kill a")
		mp_node_stop a KILL
		echo "node A killed (SIGKILL) at $(date +%s.%N)"
		;;
	"start a")
		mp_node_start a 1 2 "$(cat "$STATE_DIR/a.port")" && echo "node A started again"
		;;
	*)
		echo "refused: not a request of the multipath check: $1"
		return 2
		;;
	esac
}

# tgt has no shared images: the suite does not run against the stand-in.
STANDIN_LUNS=""
STANDIN_SIZES=()
STANDIN_THIN=()
STANDIN_ENV=()
