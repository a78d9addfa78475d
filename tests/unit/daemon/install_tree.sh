#!/bin/bash
# `cmake --install` staged with DESTDIR (docs/packaging.md, "What gets installed"):
# every file lands where a Debian 12 system expects it, the units start the
# installed sbcemud, and the manual pages render without a warning.
# Usage: install_tree.sh BUILD_DIR
set -u
build=$1
stage=$(mktemp -d "${TMPDIR:-/tmp}/sbcemu-install.XXXXXX")
trap 'rm -rf "$stage"' EXIT
failures=0
fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

if ! DESTDIR=$stage cmake --install "$build" --prefix /usr >"$stage.log" 2>&1; then
	cat "$stage.log" >&2
	rm -f "$stage.log"
	echo "FAIL: cmake --install" >&2
	exit 1
fi
rm -f "$stage.log"
for f in usr/sbin/sbcemud usr/bin/sbcemuctl etc/sbcemu/sbcemu.ini usr/share/dbus-1/system.d/org.kernel.TCMUService1.sbcemu.conf \
	usr/share/bash-completion/completions/sbcemuctl usr/share/man/man8/sbcemud.8 usr/share/man/man8/sbcemuctl.8 \
	usr/share/man/man5/sbcemu.ini.5; do
	[ -e "$stage/$f" ] || fail "no /$f"
done
# The library directory: lib/<triplet> when the build was configured for /usr on Debian, else lib.
compgen -G "$stage/usr/lib/sbcemu/sbcemu-rbd.so" >/dev/null || compgen -G "$stage/usr/lib/*/sbcemu/sbcemu-rbd.so" >/dev/null || fail "no /usr/lib[/<triplet>]/sbcemu/sbcemu-rbd.so"
# Debian 12's systemd reads packaged units from /lib/systemd/system (the prefix /usr installs there).
units=$stage/lib/systemd/system
[ -f "$units/sbcemu.service" ] || fail "no /lib/systemd/system/sbcemu.service"
for u in "$units/sbcemu.service" "$units/sbcemu@.service"; do
	grep -q '^ExecStart=/usr/sbin/sbcemud ' "$u" || fail "$u does not start /usr/sbin/sbcemud"
	grep -q '^Type=notify$' "$u" || fail "$u is not Type=notify"
done
cmp -s "$stage/etc/sbcemu/sbcemu.ini" <("$stage/usr/sbin/sbcemud" --print-default-config) ||
	fail "/etc/sbcemu/sbcemu.ini is not the embedded default configuration"
"$stage/usr/sbin/sbcemud" --check -c "$stage/etc/sbcemu/sbcemu.ini" --state-dir "$stage/state" >/dev/null ||
	fail "sbcemud --check refuses the installed configuration"
for m in "$stage"/usr/share/man/man*/*; do
	w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$m" 2>&1 >/dev/null)
	[ -z "$w" ] || fail "man -l ${m##*/}: $w"
	[ "$(LC_ALL=C.UTF-8 MANWIDTH=80 man -l "$m" 2>/dev/null | wc -l)" -gt 20 ] || fail "man -l ${m##*/}: too short"
done
echo "install_tree: $failures failure(s)"
[ "$failures" = 0 ]
