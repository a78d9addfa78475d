# shellcheck shell=bash
# Common host-side helpers of the kernel VM harness (scripts/kernel-vm/).
# Source this file; functions are prefixed kvm_.  See docs/kernel-testing.md.
#
# Everything downloaded or built is kept under one cache directory
# (KVM_CACHE, default ${XDG_CACHE_HOME:-$HOME/.cache}/sbcemu-kvm), keyed by
# package versions and by the content of what goes in, so a second run
# rebuilds nothing.  Concurrent runs serialise on KVM_CACHE/lock.

KVM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KVM_REPO=$(cd "$KVM_DIR/../.." && pwd)
KVM_CACHE=${KVM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sbcemu-kvm}
KVM_VERBOSE=${KVM_VERBOSE:-0}

kvm_log() {
	echo "kernel-vm: $*" >&2
}

kvm_debug() {
	[ "$KVM_VERBOSE" = 0 ] || echo "kernel-vm: $*" >&2
}

kvm_die() {
	echo "kernel-vm: error: $*" >&2
	exit 1
}

# kvm_hash: short content hash of standard input (cache keys).
kvm_hash() {
	sha256sum | cut -c1-16
}

# kvm_lock: takes the cache lock on fd 9 for the rest of the calling process
# (released when it exits).  Reentrant within one process.
kvm_lock() {
	[ -n "${KVM_LOCKED:-}" ] && return 0
	mkdir -p "$KVM_CACHE" || kvm_die "cannot create cache directory $KVM_CACHE"
	exec 9>"$KVM_CACHE/lock"
	if ! flock -w 600 9; then
		kvm_die "cache $KVM_CACHE is locked by another run for 10 minutes"
	fi
	KVM_LOCKED=1
}

# kvm_apt_updated: runs apt-get update once per process when package lists are
# missing (a fresh machine), so apt-cache look-ups below see the archive.
kvm_apt_update_once() {
	[ -n "${KVM_APT_UPDATED:-}" ] && return 0
	KVM_APT_UPDATED=1
	rm -rf "$KVM_CACHE/apt-memo"
	kvm_log "apt-get update"
	apt-get update -qq >/dev/null 2>&1 || kvm_log "apt-get update failed (offline?)"
}

# kvm_apt_memo CMD...: CMD's output, remembered until apt's package lists or
# sources change (apt-cache takes about half a second per call).
kvm_apt_memo() {
	local key f
	key=$( (stat -c '%Y' /var/lib/apt/lists /etc/apt /etc/apt/sources.list.d 2>/dev/null; echo "$*") | kvm_hash)
	f="$KVM_CACHE/apt-memo/$key"
	if [ -s "$f" ]; then
		cat "$f"
		return 0
	fi
	mkdir -p "$KVM_CACHE/apt-memo"
	"$@" >"$f.$$" 2>/dev/null
	mv "$f.$$" "$f"
	cat "$f"
}

# kvm_apt_candidate PKG: prints the candidate version of PKG, or nothing.
kvm_apt_candidate() {
	kvm_apt_memo apt-cache policy "$1" | awk '/Candidate:/ { if ($2 != "(none)") print $2; exit }'
}

# kvm_apt_download PKG VERSION: makes sure KVM_CACHE/debs holds PKG_VERSION
# (apt-get download from the configured Debian archive) and prints its path.
kvm_apt_download() {
	local pkg=$1 ver=$2 deb
	mkdir -p "$KVM_CACHE/debs"
	deb=$(kvm_deb_path "$pkg" "$ver")
	if [ -z "$deb" ]; then
		kvm_log "apt-get download $pkg=$ver"
		(cd "$KVM_CACHE/debs" && apt-get download -q -o APT::Sandbox::User=root "$pkg=$ver" >/dev/null) ||
			kvm_die "apt-get download $pkg=$ver failed"
		deb=$(kvm_deb_path "$pkg" "$ver")
		[ -n "$deb" ] || kvm_die "apt-get download $pkg=$ver left no .deb in $KVM_CACHE/debs"
	fi
	echo "$deb"
}

# kvm_deb_path PKG VERSION: prints the cached .deb of PKG at VERSION, if any.
# File names encode ':' in epochs as %3a.
kvm_deb_path() {
	local f want=$2
	for f in "$KVM_CACHE/debs/$1"_*.deb; do
		[ -e "$f" ] || continue
		if [ "$(dpkg-deb -f "$f" Version)" = "$want" ]; then
			echo "$f"
			return 0
		fi
	done
	return 0
}

# kvm_need_cmd CMD PACKAGE: dies with an install hint when CMD is missing.
kvm_need_cmd() {
	command -v "$1" >/dev/null 2>&1 || kvm_die "$1 not found (apt-get install $2)"
}

# kvm_host_packages: the Debian packages the harness needs on the host.
KVM_HOST_PACKAGES="qemu-system-x86 busybox-static cpio kmod xz-utils zstd binutils util-linux fdisk
	e2fsprogs sg3-utils fio smartmontools dmsetup ddpt"

# kvm_install_host_packages: apt-get installs whatever of KVM_HOST_PACKAGES is
# missing (needs root); returns non-zero when that is not possible.
kvm_install_host_packages() {
	local missing="" p
	for p in $KVM_HOST_PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" != 0 ]; then
		kvm_log "missing host packages:$missing (not root, cannot install)"
		return 1
	fi
	kvm_apt_update_once
	kvm_log "apt-get install$missing"
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1
}

# kvm_portal_relay: sets KVM_RELAY to the guestfwd command that carries the
# guest's iSCSI connections to the host's loopback: portal-relay.c compiled
# with the host's cc (cached by source hash), else busybox nc (much slower
# for writes: see portal-relay.c).
kvm_portal_relay() {
	local key bin
	key=$(kvm_hash <"$KVM_DIR/portal-relay.c")
	bin="$KVM_CACHE/bin/portal-relay-$key"
	if [ ! -x "$bin" ]; then
		mkdir -p "$KVM_CACHE/bin"
		if ! cc -O2 -Wall -Wextra -Werror -o "$bin.tmp" "$KVM_DIR/portal-relay.c" 2>"$KVM_CACHE/bin/cc.log"; then
			kvm_log "cannot build portal-relay (see $KVM_CACHE/bin/cc.log); using busybox nc (slow writes)"
			KVM_RELAY="$(command -v busybox) nc"
			return 0
		fi
		mv "$bin.tmp" "$bin"
	fi
	KVM_RELAY=$bin
}
