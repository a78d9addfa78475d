#!/bin/bash
# README.md's "Try it" blocks, run as a new user would, against the embedded
# default configuration: every libiscsi tool line and every sbcemuctl line
# must exit 0, and the sbcemuctl block must leave the device as it found it
# (`sbcemuctl lus` and `subsidiaries 6` the same before and after).  The docs
# cannot drift from the daemon without this failing.  Loopback
# only; the portal and the state directory are the test's own.
# Usage: readme_examples.sh README.md PATH/TO/sbcemud PATH/TO/sbcemuctl
set -u
readme=$(readlink -f "$1") sbcemud=$(readlink -f "$2") sbcemuctl=$(readlink -f "$3")
# shellcheck source=scripts/lib-daemon.sh
. "$(dirname "$(readlink -f "$0")")/../../scripts/lib-daemon.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/sbcemu-readme.XXXXXX")
failures=0
checks=0
trap 'sbce_daemon_stop; rm -rf "$work"' EXIT

check() {
	checks=$((checks + 1))
	if [ "$1" = 0 ]; then
		echo "ok $checks - $2"
	else
		echo "not ok $checks - $2: $3"
		failures=$((failures + 1))
	fi
}

# The shell lines of the fenced block that follows the README line matching $1.
block_after() {
	awk -v start="$1" '
		index($0, start) { found = 1; next }
		found && /^```sh/ { inside = 1; next }
		inside && /^```/ { exit }
		inside && !/^#/ && NF { print }
	' "$readme"
}

port=$(sbce_pick_port 3300 3999) || exit 1
if ! sbce_daemon_start "$sbcemud" "$work/state" "$port"; then
	echo "not ok 1 - sbcemud starts on the embedded default"
	exit 1
fi
ctl() { "$sbcemuctl" --state-dir "$work/state" "$@"; }

# 1. "Try it from another terminal": libiscsi's tools (open-iscsi lines need root and a kernel initiator).
try=$(block_after "Try it from another terminal")
[ -n "$try" ]
check $? "README has a \"Try it from another terminal\" block" "not found"
while IFS= read -r line; do
	case "$line" in iscsi-*) ;; *) continue ;; esac
	cmd=${line//127.0.0.1:3260/127.0.0.1:$port}
	out=$(bash -c "$cmd" 2>&1)
	check $? "README: $line" "$out"
done <<<"$try"

# 2. "Change the running device ...": every line exits 0 and leaves the device as it was.
change=$(block_after "Change the running device")
[ -n "$change" ]
check $? "README has a \"Change the running device\" block" "not found"
before=$(ctl lus; ctl subsidiaries 6)
while IFS= read -r line; do
	cmd=${line//build\/daemon\/sbcemuctl/\"$sbcemuctl\" --state-dir \"$work/state\"}
	out=$(cd "$work" && bash -c "$cmd" 2>&1)
	check $? "README: ${line%%#*}" "$out"
done <<<"$change"
after=$(ctl lus; ctl subsidiaries 6)
# The counters moved (commands ran); the columns up to BSIZE and the subsidiaries' bindings must not.
strip() { awk '{ $9 = ""; $10 = ""; print }'; }
diff <(strip <<<"$before") <(strip <<<"$after") >"$work/diff"
check $? "README's sbcemuctl block leaves the LUs and bindings as it found them" "$(cat "$work/diff")"

echo "1..$checks"
[ "$failures" = 0 ]
