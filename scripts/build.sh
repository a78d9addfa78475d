#!/bin/bash
# Builds sbcemu (installing its Debian packages first) and optionally starts
# the daemon on the embedded default configuration.
#
# Usage: scripts/build.sh [--asan] [--no-deps] [--run [SBCEMUD ARGS...]]
#   --asan     sanitizer build (AddressSanitizer + UBSan, Debug) in build-asan/
#              instead of the normal build (RelWithDebInfo) in build/
#   --no-deps  do not run scripts/deps.sh
#   --run      then run build*/daemon/sbcemud in the foreground with the
#              remaining arguments (none: the embedded default configuration,
#              target iqn.2026-12.org.sbcemu:default on 127.0.0.1:3260);
#              Ctrl-C stops it cleanly
#
# Environment: SBCEMU_BUILD_DIR overrides the build directory.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
asan=no
deps=yes
run=no
while [ $# -gt 0 ]; do
	case $1 in
	--asan) asan=yes ;;
	--no-deps) deps=no ;;
	--run)
		run=yes
		shift
		break
		;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "build.sh: unknown option $1 (see --help)" >&2
		exit 2
		;;
	esac
	shift
done

if [ "$deps" = yes ]; then
	"$repo/scripts/deps.sh"
fi

if [ "$asan" = yes ]; then
	build=${SBCEMU_BUILD_DIR:-$repo/build-asan}
	cmake_args=(-DCMAKE_BUILD_TYPE=Debug -DSBCEMU_SANITIZE=ON -DSBCEMU_WERROR=ON)
else
	build=${SBCEMU_BUILD_DIR:-$repo/build}
	cmake_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSBCEMU_SANITIZE=OFF -DSBCEMU_WERROR=ON)
fi

cmake -S "$repo" -B "$build" "${cmake_args[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)"
echo "build.sh: built $build/daemon/sbcemud"

# The TCMU front end's D-Bus names (docs/tcmu.md): the system bus allows
# them only with this policy.  Root only; a running bus rereads it by itself.
policy=org.kernel.TCMUService1.sbcemu.conf
if [ "$(id -u)" = 0 ] && [ -d /etc/dbus-1/system.d ] &&
	! cmp -s "$repo/daemon/dbus/$policy" "/etc/dbus-1/system.d/$policy"; then
	install -m 0644 "$repo/daemon/dbus/$policy" "/etc/dbus-1/system.d/$policy"
	echo "build.sh: installed /etc/dbus-1/system.d/$policy"
fi

if [ "$run" = yes ]; then
	exec "$build/daemon/sbcemud" "$@"
fi
