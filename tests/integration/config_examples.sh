#!/bin/bash
# docs/examples/*.ini: every example configuration passes `sbcemud --check`
# (with a scratch state directory) and prints its one-line summary, so the
# examples cannot drift from the schema.
# Usage: config_examples.sh DOCS/EXAMPLES-DIR PATH/TO/sbcemud
set -u
dir=$1 sbcemud=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/sbcemu-examples.XXXXXX")
trap 'rm -rf "$work"' EXIT
n=0 failures=0
for f in "$dir"/*.ini; do
	n=$((n + 1))
	out=$("$sbcemud" -c "$f" --check --state-dir "$work/state" 2>&1)
	rc=$?
	if [ "$rc" = 0 ] && [[ "$out" == "sbcemud: configuration OK: "* ]] && [ ! -e "$work/state" ]; then
		echo "ok $n - $(basename "$f"): sbcemud --check -> exit 0, \"${out%%,*}...\", nothing created"
	else
		echo "not ok $n - $(basename "$f"): exit $rc: $out"
		failures=$((failures + 1))
	fi
done
[ "$n" -ge 7 ] || { echo "not ok - only $n examples in $dir"; failures=$((failures + 1)); }
echo "1..$n"
[ "$failures" = 0 ]
