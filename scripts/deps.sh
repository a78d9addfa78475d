#!/bin/bash
# Installs every Debian 12 package that building and testing sbcemu needs.
# Idempotent and quick: when everything is installed already it does not even
# run apt-get update.  Runs as root, or through sudo when it is available.
#
# Usage: scripts/deps.sh [--list]     (--list: print the package names and exit)
set -euo pipefail

PACKAGES=(
	# build (help2man: the manual pages, made from --help)
	build-essential cmake pkg-config git help2man
	libev-dev zlib1g-dev libinih-dev libisal-dev libssl-dev libiscsi-dev
	# the control socket's JSON (daemon/control/, daemon/sbcemuctl/)
	libjansson-dev
	# the TCMU front end: generic netlink (TCM-USER events) and sd-bus (targetcli's
	# org.kernel.TCMUService1); targetcli, rtslib, tcmu-runner and dbus run in the
	# kernel test guests (they see the host's root over 9p)
	libnl-genl-3-dev libsystemd-dev targetcli-fb python3-rtslib-fb tcmu-runner dbus
	# backend rbd (backends/be_rbd.c) and its tests: librbd and librados, and a
	# throwaway cluster's monitor and OSD (scripts/ceph-cluster)
	librbd-dev librados-dev ceph-mon ceph-osd
	# unit tests (Check needs subunit through pkg-config)
	check libsubunit-dev
	# fuzzing (scripts/fuzz, tests/fuzz/): clang 14 and its libFuzzer and
	# sanitizer runtimes (only recommended by clang, so named here)
	clang libclang-rt-14-dev
	# integration and conformance tests: libiscsi's tools (iscsi-test-cu,
	# iscsi-inq, iscsi-ls), sg3_utils, Debian's tgt as a reference target,
	# ss (iproute2) and the usual process tools
	libiscsi-bin sg3-utils tgt iproute2 procps
	# scripts/bench: the loopback ceiling beside sbcemu and tgt; scripts/bench-plot
	# draws its queue-depth sweep (PNG, without X11)
	iperf3 gnuplot-nox
	# kernel tests (tests/kernel/run.sh): QEMU and what goes into the guest's
	# initramfs (the kernels and open-iscsi are fetched with apt-get download
	# into a cache, not installed); keep in step with KVM_HOST_PACKAGES in
	# scripts/kernel-vm/lib.sh
	qemu-system-x86 busybox-static cpio kmod xz-utils zstd binutils util-linux
	fdisk e2fsprogs fio smartmontools ddpt
	# the Debian package and its test (tests/package/run.sh): build it, lint it,
	# install it into a fresh Debian 12 root booted with systemd-nspawn, render
	# its manual pages
	debhelper po-debconf lintian debootstrap systemd-container man-db bash-completion
)

if [ "${1:-}" = --list ]; then
	printf '%s\n' "${PACKAGES[@]}"
	exit 0
fi

missing=()
for p in "${PACKAGES[@]}"; do
	if [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)" != installed ]; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps.sh: all ${#PACKAGES[@]} packages are installed"
	exit 0
fi

sudo=()
if [ "$(id -u)" != 0 ]; then
	if ! command -v sudo >/dev/null; then
		echo "deps.sh: not root and no sudo; install these as root: ${missing[*]}" >&2
		exit 1
	fi
	sudo=(sudo)
fi

tgt_was_installed=yes
[[ " ${missing[*]} " == *" tgt "* ]] && tgt_was_installed=no

echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q </dev/null
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null

# Installing tgt starts tgtd on *:3260, sbcemud's default port; the tests start
# their own tgtd on private ports, so the service is not wanted.  Only a tgt
# installed here is touched, never one that was there before.
if [ "$tgt_was_installed" = no ] && command -v systemctl >/dev/null &&
	"${sudo[@]}" systemctl is-active --quiet tgt 2>/dev/null; then
	echo "deps.sh: stopping and disabling tgt.service (it holds port 3260)"
	"${sudo[@]}" systemctl disable --now tgt >/dev/null 2>&1 || true
fi
echo "deps.sh: done"
