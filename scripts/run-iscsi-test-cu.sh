#!/bin/bash
# Runs libiscsi's compliance suite (iscsi-test-cu) against sbcemud, and
# optionally against Debian's tgt side by side, parses the per-test results
# and writes docs/conformance-libiscsi.md.
#
# Usage: scripts/run-iscsi-test-cu.sh [OPTIONS] [SBCEMUD_BINARY]
#   --known-failures FILE  tests expected to fail, one "Suite.Test" per line
#                          ('#' starts a comment); any other failure -> exit 1
#   --min-passed N         exit 1 if fewer than N tests passed (skips excluded)
#   --peer tgt             also run the suite against tgtd (1 GiB sparse file LU)
#   --peer-only tgt        run only against the peer (validates the parser)
#   --tests PATTERN        iscsi-test-cu -t pattern (default ALL)
#   --timeout SECONDS      limit for one iscsi-test-cu run (default 600)
#   --log-dir DIR          where logs and the daemon state go (default: new /tmp dir)
#   --doc FILE             report to write (default docs/conformance-libiscsi.md)
#   --no-doc               do not write the report
#   --parse LOG            only parse an existing iscsi-test-cu log (per-test
#                          table on stderr, then the verdict as below), no run
#   --daemon-arg ARG       extra argument for sbcemud (repeatable), e.g. -c FILE
#   --target IQN, --lun N  the LU to test (default iqn.2026-12.org.sbcemu:default, 0),
#                          for configurations given with --daemon-arg -c FILE
#   --ctl "ARGS"           once sbcemud listens, run sbcemuctl ARGS on its control
#                          socket (repeatable; docs/control.md), e.g. "lu write-protect 0 on"
#
# The last line on stdout is exactly "N passed, N failed, N skipped" for sbcemud
# (for the peer with --peer-only).  A test counts as skipped when it printed
# [SKIPPED] (CUnit's own totals count such tests as passed).  Tests the run
# never reached (the suite hung or crashed) count as failed, reason "not run".
#
# Exit status: 0 ok; 1 unexpected failure or too few passes; 2 setup error.

set -u
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
# shellcheck source=lib-daemon.sh
. "$SCRIPT_DIR/lib-daemon.sh"

TARGET_IQN=iqn.2026-12.org.sbcemu:default
TARGET_LUN=0
INITIATOR_1=iqn.2007-10.com.github:sahlberg:libiscsi:iscsi-test
INITIATOR_2=iqn.2007-10.com.github:sahlberg:libiscsi:iscsi-test-2
# Reference score, measured with this script's --peer-only tgt on Debian 12.
TGT_REFERENCE="Debian tgt 1.0.85 scored 162 passed, 9 failed, 59 skipped with the multipath URL"

known_failures=
min_passed=0
peer=
peer_only=0
tests=ALL
timeout_s=600
log_dir=
doc=$REPO/docs/conformance-libiscsi.md
write_doc=1
parse_only=
daemon_bin=
daemon_args=()
ctl_cmds=()

usage() {
	sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--known-failures) known_failures=$2; shift 2 ;;
	--min-passed) min_passed=$2; shift 2 ;;
	--peer) peer=$2; shift 2 ;;
	--peer-only) peer=$2; peer_only=1; shift 2 ;;
	--tests) tests=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--log-dir) log_dir=$2; shift 2 ;;
	--doc) doc=$2; shift 2 ;;
	--no-doc) write_doc=0; shift ;;
	--parse) parse_only=$2; shift 2 ;;
	--daemon-arg) daemon_args+=("$2"); shift 2 ;;
	--ctl) ctl_cmds+=("$2"); shift 2 ;;
	--target) TARGET_IQN=$2; shift 2 ;;
	--lun) TARGET_LUN=$2; shift 2 ;;
	-h | --help) usage ;;
	-*) echo "unknown option $1" >&2; usage ;;
	*) daemon_bin=$1; shift ;;
	esac
done
if [ -n "$peer" ] && [ "$peer" != tgt ]; then
	echo "--peer: only 'tgt' is known" >&2
	exit 2
fi

# parse_log LOG: prints one line per test: SUITE<TAB>TEST<TAB>RESULT<TAB>REASON,
# RESULT one of passed/failed/skipped.  CUnit's basic mode prints
# "Suite: S", "  Test: T ..." and then "passed" or "FAILED" (right after the
# dots or at the start of a line); the tests' own messages ("    [SKIPPED] why",
# "    [FAILED] why") come in between.  Text after the verdict on the same line
# belongs to the next test's set-up and is ignored.
parse_log() {
	awk '
	function trim(s) { sub(/^[ \t\r]+/, "", s); sub(/[ \t\r]+$/, "", s); return s }
	function note(line,   p) {
		p = index(line, "[SKIPPED]")
		if (p) { skipped = 1; if (sreason == "") sreason = trim(substr(line, p + 9)) }
		p = index(line, "[FAILED]")
		if (p && freason == "") freason = trim(substr(line, p + 8))
	}
	function finish(res) {
		n++; S[n] = suite; T[n] = test; R[n] = res
		E[n] = (res == "skipped") ? sreason : freason
		pending = 0; last = n
	}
	/^Suite: / {
		if (pending) { freason = "no verdict (crashed or hung)"; finish("failed") }
		suite = trim(substr($0, 8)); last = 0; next
	}
	{
		line = $0
		if (index(line, "  Test: ") == 1) {
			if (pending) { freason = "no verdict (crashed or hung)"; finish("failed") }
			rest = substr(line, 9); p = index(rest, " ...")
			if (p == 0) { test = trim(rest); line = "" }
			else { test = substr(rest, 1, p - 1); line = substr(rest, p + 4) }
			pending = 1; skipped = 0; sreason = ""; freason = ""; last = 0
		}
		if (pending) {
			if (line ~ /^passed/) { finish(skipped ? "skipped" : "passed"); next }
			if (line ~ /^FAILED/) { finish("failed"); next }
			note(line)
		} else if (last && R[last] == "failed" && E[last] == "" && line ~ /^    [0-9]+\. /) {
			E[last] = trim(line)   # first failed assertion, when the test printed no reason
		}
	}
	END {
		if (pending) { freason = "no verdict (crashed or hung)"; finish("failed") }
		for (i = 1; i <= n; i++) {
			gsub(/\t/, " ", E[i])
			printf "%s\t%s\t%s\t%s\n", S[i], T[i], R[i], E[i]
		}
	}' "$1"
}

# expected_tests PATTERN: the ALL.Suite.Test names iscsi-test-cu -t PATTERN
# would run, as "Suite<TAB>Test"; prints nothing for patterns that are not
# plain comma-separated prefixes.
expected_tests() {
	iscsi-test-cu -l 2>/dev/null | awk -v pats="$1" '
	BEGIN { np = split(pats, P, ",") }
	{
		if (split($0, F, ".") != 3) next
		for (i = 1; i <= np; i++)
			if ($0 == P[i] || index($0, P[i] ".") == 1) { printf "%s\t%s\n", F[2], F[3]; next }
	}'
}

# add_not_run RESULTS EXPECTED: appends tests from EXPECTED missing in RESULTS
# as failed, reason "not run".
add_not_run() {
	awk -F'\t' 'FILENAME == ARGV[1] { seen[$1 "\t" $2] = 1; next }
		!(($1 "\t" $2) in seen) { printf "%s\t%s\tfailed\tnot run (suite stopped before it)\n", $1, $2 }' "$1" "$2" >>"$1"
}

# summary RESULTS: prints "N passed, N failed, N skipped".
summary() {
	awk -F'\t' '{ c[$3]++ } END { printf "%d passed, %d failed, %d skipped\n", c["passed"], c["failed"], c["skipped"] }' "$1"
}

# run_suite NAME URL DIR: runs iscsi-test-cu against URL (twice: the second is
# the multipath URL, same LU), log DIR/iscsi-test-cu-NAME.log, results
# DIR/results-NAME.tsv.
run_suite() {
	local name=$1 url=$2 dir=$3 log rc
	log=$dir/iscsi-test-cu-$name.log
	echo "[$name] iscsi-test-cu -t $tests -d -S $url $url (timeout ${timeout_s}s), log $log" >&2
	timeout -k 10 "$timeout_s" iscsi-test-cu -t "$tests" -d -S -i "$INITIATOR_1" -I "$INITIATOR_2" \
		"$url" "$url" >"$log" 2>&1
	rc=$?
	[ $rc -eq 124 ] || [ $rc -eq 137 ] && echo "[$name] iscsi-test-cu timed out after ${timeout_s}s" | tee -a "$log" >&2
	parse_log "$log" >"$dir/results-$name.tsv"
	expected_tests "$tests" >"$dir/expected.tsv"
	add_not_run "$dir/results-$name.tsv" "$dir/expected.tsv"
	echo "[$name] $(summary "$dir/results-$name.tsv")" >&2
}

# verdict RESULTS: applies --known-failures and --min-passed to RESULTS, prints
# the summary line last and exits with the script's status.
verdict() {
	local res=$1 status=0 unexpected passed
	if [ -n "$known_failures" ]; then
		[ -r "$known_failures" ] || { echo "cannot read $known_failures" >&2; exit 2; }
		unexpected=$(awk -F'\t' 'FILENAME == ARGV[1] {
				sub(/#.*/, ""); gsub(/[ \t\r]/, ""); sub(/^ALL\./, "")
				if ($0 != "") known[$0] = 1; next }
			$3 == "failed" && !(($1 "." $2) in known) { print $1 "." $2 }' "$known_failures" "$res")
	else
		unexpected=$(awk -F'\t' '$3 == "failed" { print $1 "." $2 }' "$res")
	fi
	if [ -n "$unexpected" ]; then
		echo "unexpected failures:" >&2
		echo "$unexpected" | sed 's/^/  /' >&2
		status=1
	fi
	passed=$(awk -F'\t' '$3 == "passed"' "$res" | wc -l)
	if [ "$passed" -lt "$min_passed" ]; then
		echo "$passed passed, below --min-passed $min_passed" >&2
		status=1
	fi
	summary "$res"
	exit $status
}

if [ -n "$parse_only" ]; then
	tmp=$(mktemp)
	parse_log "$parse_only" >"$tmp"
	cat "$tmp" >&2
	cp "$tmp" "$tmp.res" && rm -f "$tmp"
	trap 'rm -f "$tmp.res"' EXIT
	verdict "$tmp.res"
fi

command -v iscsi-test-cu >/dev/null || { echo "iscsi-test-cu not installed (apt-get install libiscsi-bin)" >&2; exit 2; }
[ -n "$log_dir" ] || log_dir=$(mktemp -d /tmp/sbcemu-conformance.XXXXXX)
mkdir -p "$log_dir"
log_dir=$(cd "$log_dir" && pwd)

cleanup() {
	sbce_daemon_stop TERM 10
	sbce_tgt_stop
}
trap cleanup EXIT
trap 'exit 2' INT TERM

names=()
if [ $peer_only -eq 0 ]; then
	daemon_bin=$(sbce_find_daemon "$daemon_bin") || exit 2
	rm -rf "$log_dir/state"
	port=$(sbce_pick_port) || exit 2
	sbce_daemon_start "$daemon_bin" "$log_dir/state" "$port" ${daemon_args[@]+"${daemon_args[@]}"} || exit 2
	for c in ${ctl_cmds[@]+"${ctl_cmds[@]}"}; do
		# shellcheck disable=SC2086 # c is a list of arguments
		"$(dirname "$daemon_bin")/sbcemuctl" -s "$log_dir/state/control.sock" $c >/dev/null ||
			{ echo "[sbcemu] sbcemuctl $c failed" >&2; exit 2; }
	done
	run_suite sbcemu "iscsi://$SBCE_HOST:$port/$TARGET_IQN/$TARGET_LUN" "$log_dir"
	sbce_daemon_stop TERM 10
	if [ "${SBCE_DAEMON_STATUS:-0}" -ne 0 ]; then
		echo "[sbcemu] daemon exit status $SBCE_DAEMON_STATUS after SIGTERM (log $log_dir/state/sbcemud.log)" >&2
	fi
	names+=(sbcemu)
fi
if [ "$peer" = tgt ]; then
	port=$(sbce_pick_port) || exit 2
	sbce_tgt_start "$log_dir/tgt" "$port" 1G || exit 2
	run_suite tgt "$SBCE_TGT_URL" "$log_dir"
	sbce_tgt_stop
	rm -f "$log_dir/tgt/tgt-disk.img"
	names+=(tgt)
fi
main=${names[0]}
main_res=$log_dir/results-$main.tsv

# ---- report --------------------------------------------------------------
libiscsi_version=$(dpkg-query -W -f '${Version}' libiscsi-bin 2>/dev/null || pkg-config --modversion libiscsi 2>/dev/null || echo unknown)
tgt_version=$(dpkg-query -W -f '${Version}' tgt 2>/dev/null || echo unknown)
sbcemu_version=$(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)

# suite_table: per suite P/F/S for every run, suites in first-seen order.
suite_table() {
	local args=() n
	for n in "${names[@]}"; do args+=("$log_dir/results-$n.tsv"); done
	awk -F'\t' -v names="${names[*]}" '
	BEGIN { nn = split(names, N, " ") }
	FNR == 1 { f++ }
	{
		if (!($1 in seen)) { seen[$1] = 1; order[++ns] = $1 }
		c[f, $1, $3]++; tot[f, $3]++
	}
	END {
		hdr = "| Suite |"; sep = "|---|"
		for (i = 1; i <= nn; i++) {
			hdr = hdr sprintf(" %s passed | %s failed | %s skipped |", N[i], N[i], N[i])
			sep = sep "--:|--:|--:|"
		}
		print hdr; print sep
		for (s = 1; s <= ns; s++) {
			line = "| " order[s] " |"
			for (i = 1; i <= nn; i++)
				line = line sprintf(" %d | %d | %d |", c[i, order[s], "passed"], c[i, order[s], "failed"], c[i, order[s], "skipped"])
			print line
		}
		line = "| **total** |"
		for (i = 1; i <= nn; i++)
			line = line sprintf(" **%d** | **%d** | **%d** |", tot[i, "passed"], tot[i, "failed"], tot[i, "skipped"])
		print line
	}' "${args[@]}"
}

# run_notes LOG: what iscsi-test-cu printed before CUnit started (connection or
# set-up errors that stop the whole run), as a quoted block; nothing if empty.
run_notes() {
	awk '/CUnit - A unit testing framework/ { exit }
		/^[ \t]*$/ || /[Ff]ound matching LU device identifier/ || /^skipping (non-LU designator|unsupported des type)/ { next }
		{ print "    " $0 }' "$1" | head -n 20
}

# list RESULTS RESULT: markdown list of tests with that result and the reason.
list_tests() {
	awk -F'\t' -v want="$2" '$3 == want {
		r = $4; gsub(/\|/, "\\|", r)
		printf "- `%s.%s`%s\n", $1, $2, (r == "" ? "" : " — " r); n++ }
		END { if (!n) print "(none)" }' "$1"
}

if [ $write_doc -eq 1 ]; then
	begin_mark='<!-- BEGIN hand-written: reasons for skips (kept by scripts/run-iscsi-test-cu.sh) -->'
	end_mark='<!-- END hand-written: reasons for skips -->'
	preserved=
	if [ -f "$doc" ]; then
		preserved=$(awk -v b="$begin_mark" -v e="$end_mark" '$0 == b { on = 1; next } $0 == e { on = 0 } on' "$doc")
	fi
	if [ -z "$preserved" ]; then
		preserved='Why each skipped test is skipped, in words a user would accept (hand-written; the
generator keeps this block as it is).'
	fi
	mkdir -p "$(dirname "$doc")"
	{
		echo "# Conformance: libiscsi iscsi-test-cu"
		echo
		echo "<!-- Generated by scripts/run-iscsi-test-cu.sh from the run's own output; only the"
		echo "     hand-written block under \"Reasons for skips\" is kept across runs. -->"
		echo
		echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "- sbcemu: \`$sbcemu_version\`"
		echo "- libiscsi (iscsi-test-cu): $libiscsi_version"
		[ "$peer" = tgt ] && echo "- peer: tgt $tgt_version (tgtd, LUN 1 on a 1 GiB sparse file)"
		echo "- Command: \`iscsi-test-cu -t $tests -d -S -i $INITIATOR_1 -I $INITIATOR_2 URL URL\`"
		echo "  (the second URL is the multipath one: the same LU again), timeout ${timeout_s}s"
		echo
		for n in "${names[@]}"; do
			echo "**$n: $(summary "$log_dir/results-$n.tsv")**"
			echo
			notes=
			if grep -q 'not run' "$log_dir/results-$n.tsv"; then
				notes=$(run_notes "$log_dir/iscsi-test-cu-$n.log")
			fi
			if [ -n "$notes" ]; then
				echo "iscsi-test-cu printed before running any test ($n):"
				echo
				echo "$notes"
				echo
			fi
		done
		echo "A test counts as skipped when it printed \`[SKIPPED]\` (CUnit's own totals count it as"
		echo "passed); a test the run never reached counts as failed. A few libiscsi tests skip"
		echo "silently (their message is printed only in verbose mode, e.g. StartStopUnit.PwrCnd on a"
		echo "non-removable LU): they count as passed here, as they did for the tgt reference numbers."
		echo
		echo "Comparison: $TGT_REFERENCE."
		echo
		echo "## Per suite"
		echo
		suite_table
		for n in "${names[@]}"; do
			echo
			echo "## Failed tests ($n)"
			echo
			list_tests "$log_dir/results-$n.tsv" failed
		done
		for n in "${names[@]}"; do
			echo
			echo "## Skipped tests ($n), with libiscsi's message"
			echo
			list_tests "$log_dir/results-$n.tsv" skipped
		done
		echo
		echo "## Reasons for skips"
		echo
		echo "$begin_mark"
		echo "$preserved"
		echo "$end_mark"
	} >"$doc.tmp" && mv "$doc.tmp" "$doc"
	echo "wrote $doc (logs in $log_dir)" >&2
fi

verdict "$main_res"
