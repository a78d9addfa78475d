#!/bin/bash
# Runs every test: the normal build (build/) and the sanitizer build
# (build-asan/, ASan + UBSan), each configured, built and run with ctest.
# Installs missing Debian packages first (scripts/deps.sh).
#
# Usage: scripts/test.sh [CTEST ARGS...]     e.g. scripts/test.sh -R config
# Environment: SBCEMU_BUILD_DIR and SBCEMU_ASAN_BUILD_DIR override the two
# build directories.
# Exit status: 0 when every test passed in both builds.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=$(nproc)

"$repo/scripts/deps.sh"

status=0
for variant in normal asan; do
	if [ "$variant" = asan ]; then
		build=${SBCEMU_ASAN_BUILD_DIR:-$repo/build-asan}
		args=(--no-deps --asan)
	else
		build=${SBCEMU_BUILD_DIR:-$repo/build}
		args=(--no-deps)
	fi
	echo "=== test.sh: building $build"
	if ! SBCEMU_BUILD_DIR=$build "$repo/scripts/build.sh" "${args[@]}"; then
		echo "test.sh: the build in $build failed" >&2
		status=1
		continue
	fi
	echo "=== test.sh: ctest in $build"
	# Sanitizer reports must fail the test that produced them.
	if ! ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
		UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
		ctest --test-dir "$build" --output-on-failure -j "$jobs" "$@"; then
		status=1
	fi
done

if [ "$status" = 0 ]; then
	echo "test.sh: all tests passed (build/ and build-asan/)"
else
	echo "test.sh: FAILURES (see above)" >&2
fi
exit "$status"
