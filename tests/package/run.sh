#!/bin/bash
# The Debian package end to end (docs/packaging.md):
#   1. `dpkg-buildpackage -us -uc -b` on a copy of the tree (DEB_BUILD_OPTIONS=nocheck:
#      scripts/test.sh ran the tests already);
#   2. lintian on the two packages: no error or warning (overrides explained in
#      debian/*.lintian-overrides);
#   3. the files in the package, and every manual page rendered by man(1)
#      without a warning;
#   4. a fresh Debian 12 root (debootstrap --variant=minbase, with systemd;
#      kept under SBCEMU_PACKAGE_CACHE and booted with --volatile=overlay, so
#      each run starts from the same pristine root) booted with systemd-nspawn:
#      `apt-get install` of the package fetches its dependencies from Debian
#      and starts sbcemu.service; `systemd-analyze verify` of its units; the
#      daemon, started as the unit's ExecStart starts it, reaches READY=1,
#      listens on 127.0.0.1:3260 only and serves the default target (iscsi-inq
#      from the host), answers `sbcemuctl status`, logs to the journal with
#      priorities, reloads on SIGHUP, restarts after an upgrade with
#      configuration and state kept, stops cleanly (exit status 0), is stopped
#      by a removal; a purge keeps /var/lib/sbcemu unless debconf's
#      sbcemu/purge_state says otherwise; an instance sbcemu@NAME.service runs
#      beside it, and a throwaway one started by systemd-run.
# The container shares the host's network: 127.0.0.1:3260 to :3262 must be
# free.  Root only (debootstrap, systemd-nspawn).
#
# Usage: tests/package/run.sh [WORKDIR]   (default build/package)
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=${1:-$repo/build/package}
cache=${SBCEMU_PACKAGE_CACHE:-/var/cache/sbcemu-test}
mirror=${SBCEMU_DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=$cache/bookworm-minbase-systemd
failures=0
passes=0
nspawn_pid=
leader=

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}
ok() {
	echo "ok: $*"
	passes=$((passes + 1))
}
# check DESCRIPTION CMD...: CMD's exit status decides.
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else fail "$what"; fi
}

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	if [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2>/dev/null; then
		[ -n "$leader" ] && kill -s SIGRTMIN+4 "$leader" 2>/dev/null
		timeout 30 tail --pid="$nspawn_pid" -f /dev/null || kill -KILL "$nspawn_pid" 2>/dev/null
	fi
}
trap cleanup EXIT

if [ "$(id -u)" != 0 ]; then
	echo "package: needs root (debootstrap, systemd-nspawn)" >&2
	exit 1
fi
for port in 3260 3261 3262; do
	if ss -Hltn "sport = :$port" | grep -q .; then
		echo "package: 127.0.0.1:$port is in use on this host; the container shares its network" >&2
		ss -ltnp "sport = :$port" >&2
		exit 1
	fi
done

# ---- 1. build ----
SECONDS=0
rm -rf "$work"
mkdir -p "$work/src"
(cd "$repo" && git ls-files -co --exclude-standard -z | tar --null -T - --ignore-failed-read -cf -) |
	tar -C "$work/src" -xf -
if ! (cd "$work/src" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -us -uc -b) \
	>"$work/build.log" 2>&1; then
	tail -30 "$work/build.log" >&2
	echo "package: dpkg-buildpackage failed (log $work/build.log)" >&2
	exit 1
fi
version=$(dpkg-parsechangelog -l "$repo/debian/changelog" -S Version)
deb=$work/sbcemu_${version}_amd64.deb
rbd_deb=$work/sbcemu-rbd_${version}_amd64.deb
check "dpkg-buildpackage made sbcemu and sbcemu-rbd $version (${SECONDS} s)" test -f "$deb" -a -f "$rbd_deb"

# ---- 2. lintian ----
if lintian --fail-on error,warning --info --display-info "$deb" "$rbd_deb" >"$work/lintian.log" 2>&1; then
	ok "lintian: no error or warning (its overrides: debian/*.lintian-overrides)"
else
	cat "$work/lintian.log" >&2
	fail "lintian"
fi

# ---- 3. files and manual pages ----
dpkg-deb -x "$deb" "$work/x"
dpkg-deb -x "$rbd_deb" "$work/x"
for f in usr/sbin/sbcemud usr/bin/sbcemuctl etc/sbcemu/sbcemu.ini lib/systemd/system/sbcemu.service \
	lib/systemd/system/sbcemu@.service usr/share/dbus-1/system.d/org.kernel.TCMUService1.sbcemu.conf \
	usr/share/bash-completion/completions/sbcemuctl usr/share/man/man8/sbcemud.8.gz \
	usr/share/man/man8/sbcemuctl.8.gz usr/share/man/man5/sbcemu.ini.5.gz; do
	[ -e "$work/x/$f" ] || fail "the package has no /$f"
done
check "the rbd module is in sbcemu-rbd" bash -c 'compgen -G "$1/usr/lib/*/sbcemu/sbcemu-rbd.so" >/dev/null' _ "$work/x"
check "/etc/sbcemu/sbcemu.ini is the embedded default configuration" \
	cmp -s "$work/x/etc/sbcemu/sbcemu.ini" <("$work/x/usr/sbin/sbcemud" --print-default-config)
for m in "$work"/x/usr/share/man/man*/*.gz; do
	warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$m" 2>&1 >/dev/null)
	if [ -n "$warnings" ]; then fail "man -l $(basename "$m"): $warnings"; else ok "man -l $(basename "$m"): no warning"; fi
done
check "sbcemud(8) names every option of --help" bash -c '
	for o in $("$1/usr/sbin/sbcemud" --help | grep -o -- "--[a-z-]*" | sort -u); do
		zcat "$1/usr/share/man/man8/sbcemud.8.gz" | sed "s/\\\\-/-/g" | grep -q -- "$o" || { echo "missing $o"; exit 1; }
	done' _ "$work/x"
check "bash completion offers sbcemuctl's commands" bash -c '
	. /usr/share/bash-completion/bash_completion; . "$1/usr/share/bash-completion/completions/sbcemuctl"
	PATH=$1/usr/bin:$PATH
	complete_line() { COMP_LINE=$2; COMP_POINT=${#COMP_LINE}; read -ra COMP_WORDS <<<"$2"
		[ "${2: -1}" = " " ] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _sbcemuctl; echo "${COMPREPLY[*]}"; }
	top=" $(complete_line "$1" "sbcemuctl ") "
	[[ $top == *" status "* && $top == *" targets "* && $top == *" lu "* && $top == *" fault "* && $top != *" remove "* ]] &&
	[ "$(complete_line "$1" "sbcemuctl fa")" = fault ] &&
	[ "$(complete_line "$1" "sbcemuctl portal ")" = "add remove" ] &&
	[ "$(complete_line "$1" "sbcemuctl --json lu re")" = "remove resize" ] ||
	{ echo "got: $top / $(complete_line "$1" "sbcemuctl fa") / $(complete_line "$1" "sbcemuctl portal ") / $(complete_line "$1" "sbcemuctl --json lu re")"; exit 1; }' _ "$work/x"

# ---- 4. a fresh Debian 12 under systemd ----
if [ ! -e "$root/.complete" ]; then
	echo "package: making the Debian 12 root $root (debootstrap, once)"
	rm -rf "$root"
	mkdir -p "$cache"
	if ! debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus,iproute2 bookworm "$root" "$mirror" \
		>"$work/debootstrap.log" 2>&1; then
		tail -20 "$work/debootstrap.log" >&2
		echo "package: debootstrap failed" >&2
		exit 1
	fi
	echo "deb $mirror bookworm main" >"$root/etc/apt/sources.list"
	touch "$root/.complete"
fi
mkdir -p "$work/mnt"
cp "$deb" "$rbd_deb" "$work/mnt/"
systemd-nspawn -q -D "$root" --volatile=overlay --bind-ro="$work/mnt:/mnt/pkg" -b --register=no --keep-unit \
	--console=passive -M "sbcemu-pkg-$$" </dev/null >"$work/nspawn.log" 2>&1 &
nspawn_pid=$!
for _ in $(seq 200); do
	for p in $(pgrep -P "$nspawn_pid"); do
		[ "$(readlink "/proc/$p/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] &&
			[ "$(cat "/proc/$p/comm" 2>/dev/null)" = systemd ] && leader=$p
	done
	[ -n "$leader" ] && break
	sleep 0.1
done
if [ -z "$leader" ]; then
	cat "$work/nspawn.log" >&2
	echo "package: the container did not boot" >&2
	exit 1
fi
in_ct() { timeout "${T:-60}" nsenter -t "$leader" -a "$@"; }
state=
for _ in $(seq 120); do
	state=$(T=60 in_ct systemctl is-system-running --wait 2>/dev/null)
	case $state in running | degraded) break ;; esac
	sleep 0.5
done
check "the container's systemd runs (state $state)" test "$state" = running -o "$state" = degraded
show() { in_ct systemctl show -P "$2" "$1"; }

if ! T=300 in_ct sh -c 'export DEBIAN_FRONTEND=noninteractive; apt-get update -q && apt-get install -y -q --no-install-recommends /mnt/pkg/sbcemu_*.deb' \
	>"$work/install.log" 2>&1; then
	tail -30 "$work/install.log" >&2
	fail "apt-get install of the package in a fresh Debian 12"
else
	ok "apt-get install of the package in a fresh Debian 12 ($(grep -c '^Unpacking' "$work/install.log") packages unpacked)"
fi
# --man=no: the root has no man(1); the pages were checked above.
verify=$(in_ct systemd-analyze verify --man=no /lib/systemd/system/sbcemu.service \
	/lib/systemd/system/sbcemu@x.service 2>&1)
if [ -z "$verify" ]; then ok "systemd-analyze verify sbcemu.service sbcemu@.service: nothing to say"; else fail "systemd-analyze verify: $verify"; fi
check "installing started sbcemu.service (active)" test "$(show sbcemu.service ActiveState)" = active
check "it is enabled" test "$(in_ct systemctl is-enabled sbcemu.service)" = enabled
status=$(show sbcemu.service StatusText)
check "READY=1 with its STATUS= line: \"$status\"" grep -q "^serving 7 LUs of 1 target" <<<"$status"
listen=$(in_ct ss -Hltnp | grep '"sbcemud"' | awk '{print $4}' | sort -u | tr '\n' ' ')
check "sbcemud listens on 127.0.0.1:3260 only ($listen)" test "$listen" = "127.0.0.1:3260 "
check "iscsi-inq from the host reads LUN 0's INQUIRY" \
	sh -c 'iscsi-inq iscsi://127.0.0.1:3260/iqn.2026-12.org.sbcemu:default/0 | grep -q "Vendor:SBCEMU"'
check "sbcemuctl status answers (control socket /run/sbcemu/control.sock)" \
	in_ct sh -c 'sbcemuctl status >/dev/null && test -S /run/sbcemu/control.sock'
check "the default LUs' files are in /var/lib/sbcemu" in_ct test -f /var/lib/sbcemu/default-lun0.img
# journal_has UNIT PATTERN [PRIORITY]: a line of UNIT's journal (at PRIORITY, e.g. 6..6) matches.
journal_has() { in_ct journalctl -q -u "$1" -p "${3:-7}" -o cat | grep -q -- "$2"; }
check "the journal has \"info: ready\" at priority 6 (info), not at 3 (err)" \
	bash -c "$(declare -f in_ct journal_has); leader=$leader; journal_has sbcemu.service '^info: ready\$' 6..6 &&
		! journal_has sbcemu.service '^info: ready\$' 3..3"
pid=$(show sbcemu.service MainPID)
in_ct systemctl reload sbcemu.service
check "systemctl reload: SIGHUP, the configuration read again, in the same process" \
	journal_has sbcemu.service 'SIGHUP: reloading /etc/sbcemu/sbcemu.ini'
check "the same process after the reload" test "$(show sbcemu.service MainPID)" = "$pid"

# An upgrade (the same package as version+1) keeps the configuration and the state, and restarts.
in_ct sh -c 'echo "# kept across the upgrade" >> /etc/sbcemu/sbcemu.ini; echo marker > /var/lib/sbcemu/marker'
rm -rf "$work/repack"
dpkg-deb -R "$deb" "$work/repack"
sed -i "s/^Version: .*/Version: ${version}+1/" "$work/repack/DEBIAN/control"
dpkg-deb -b "$work/repack" "$work/mnt/sbcemu_${version}+1_amd64.deb" >/dev/null
if T=120 in_ct sh -c "DEBIAN_FRONTEND=noninteractive dpkg -i /mnt/pkg/sbcemu_${version}+1_amd64.deb" >"$work/upgrade.log" 2>&1; then
	ok "upgrade to ${version}+1"
else
	cat "$work/upgrade.log" >&2
	fail "upgrade to ${version}+1"
fi
check "after the upgrade: configuration kept, state kept, service active in a new process" \
	in_ct sh -c "grep -q 'kept across the upgrade' /etc/sbcemu/sbcemu.ini && test -f /var/lib/sbcemu/marker &&
		test -f /var/lib/sbcemu/default-lun0.img && systemctl is-active -q sbcemu.service &&
		test \"\$(systemctl show -P MainPID sbcemu.service)\" != $pid"

# An instance beside it, on its own file, port and state directory.
in_ct sh -c "sed -e 's/^listen = .*/listen = 127.0.0.1:3261/' -e 's/^enabled = auto/enabled = no/' \
	/etc/sbcemu/sbcemu.ini > /etc/sbcemu/ci1.ini && systemctl start sbcemu@ci1.service"
check "sbcemu@ci1.service: active, its own socket in /var/lib/sbcemu/ci1" \
	in_ct sh -c 'systemctl is-active -q sbcemu@ci1.service && sbcemuctl --state-dir /var/lib/sbcemu/ci1 status >/dev/null'
check "iscsi-inq reads the instance's LUN 0 on 127.0.0.1:3261" \
	sh -c 'iscsi-inq iscsi://127.0.0.1:3261/iqn.2026-12.org.sbcemu:default/0 | grep -q "Vendor:SBCEMU"'
in_ct systemctl stop sbcemu@ci1.service

# A throwaway instance in one line (docs/packaging.md): systemd-run returns once it is READY=1, its
# state lives in a runtime directory that goes with it.
check "systemd-run: a throwaway instance is ready when the command returns" \
	in_ct systemd-run -q --unit=sbcemu-tmp -p Type=notify -p RuntimeDirectory=sbcemu-tmp \
	/usr/sbin/sbcemud --listen 127.0.0.1:3262 --state-dir /run/sbcemu-tmp
check "iscsi-inq reads its LUN 0 on 127.0.0.1:3262 at once" \
	sh -c 'iscsi-inq iscsi://127.0.0.1:3262/iqn.2026-12.org.sbcemu:default/0 | grep -q "Vendor:SBCEMU"'
in_ct systemctl stop sbcemu-tmp.service
check "stopped, its state is gone" in_ct test ! -e /run/sbcemu-tmp

in_ct systemctl stop sbcemu.service
check "systemctl stop: a clean exit (status 0, result success)" \
	test "$(show sbcemu.service ExecMainStatus)/$(show sbcemu.service Result)" = "0/success"
check "the journal says the daemon flushed its LUs and exited 0" \
	bash -c "$(declare -f in_ct journal_has); leader=$leader; journal_has sbcemu.service '^info: flushing 7 backing files' &&
		journal_has sbcemu.service '^info: exiting with status 0'"
in_ct systemctl start sbcemu.service

T=120 in_ct sh -c 'DEBIAN_FRONTEND=noninteractive apt-get remove -y -q sbcemu' >"$work/remove.log" 2>&1
check "apt-get remove stops the service and keeps /etc/sbcemu and /var/lib/sbcemu" \
	in_ct sh -c '! systemctl is-active -q sbcemu.service && ! grep -qx sbcemud /proc/[0-9]*/comm &&
		test -f /etc/sbcemu/sbcemu.ini &&
		test -f /var/lib/sbcemu/default-lun0.img'
T=120 in_ct sh -c 'DEBIAN_FRONTEND=noninteractive apt-get purge -y -q sbcemu' >"$work/purge.log" 2>&1
check "apt-get purge removes /etc/sbcemu/sbcemu.ini and keeps /var/lib/sbcemu (sbcemu/purge_state false)" \
	in_ct sh -c 'test ! -e /etc/sbcemu/sbcemu.ini && test -f /var/lib/sbcemu/default-lun0.img'
T=300 in_ct sh -c "DEBIAN_FRONTEND=noninteractive; export DEBIAN_FRONTEND; dpkg -i /mnt/pkg/sbcemu_${version}_amd64.deb &&
	echo 'sbcemu sbcemu/purge_state boolean true' | debconf-set-selections && apt-get purge -y -q sbcemu" \
	>"$work/purge2.log" 2>&1
check "apt-get purge with sbcemu/purge_state true removes /var/lib/sbcemu" in_ct test ! -e /var/lib/sbcemu

T=10 in_ct systemctl poweroff >/dev/null 2>&1
timeout 30 tail --pid="$nspawn_pid" -f /dev/null || kill -KILL "$nspawn_pid"
nspawn_pid=

echo "package: $passes passed, $failures failed (${SECONDS} s; logs in $work)"
[ "$failures" = 0 ]
