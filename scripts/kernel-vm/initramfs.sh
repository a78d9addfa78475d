# shellcheck shell=bash
# The guest's initramfs, in three concatenated cpio archives (the kernel
# unpacks them in order, later files win):
#   base     busybox, iscsistart, sg3-utils, util-linux, e2fsprogs, fio, dmsetup and ddpt with
#            their shared libraries (ldd closure), cached by package versions
#   modules  the kernel's modules (kernel.sh: kvm_modules_cpio), cached per kernel
#   overlay  /init, the guest library, the checks and run.conf of one run (tiny)
# Source after lib.sh.

# Guest tools copied from the host.  sg3-utils is taken whole (every sg_* tool).
KVM_TOOLS="busybox mke2fs mkfs.ext4 e2fsck fsck.ext4 tune2fs dumpe2fs debugfs resize2fs
	blkzone blkdiscard blockdev fstrim lsblk sfdisk fdisk wipefs blkid findmnt fio smartctl smartd dmsetup ddpt"
KVM_HOST_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# kvm_cpio_entry NAME MODE RDEVMAJOR RDEVMINOR: one newc header with no data
# (directories and device nodes), so the archive needs no mknod on the host.
kvm_cpio_entry() {
	local name=$1 mode=$2 maj=$3 min=$4 namesize hdr pad
	namesize=$((${#name} + 1))
	hdr=$(printf '070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X' \
		"$KVM_CPIO_INO" "$mode" 0 0 1 0 0 0 0 "$maj" "$min" "$namesize" 0)
	KVM_CPIO_INO=$((KVM_CPIO_INO + 1))
	pad=$(((4 - (110 + namesize) % 4) % 4))
	printf '%s%s\0' "$hdr" "$name"
	head -c "$pad" /dev/zero
}

# kvm_cpio_nodes: archive with /dev/console and /dev/null, which the kernel
# needs before /init mounts devtmpfs (stdin/stdout of /init).
kvm_cpio_nodes() {
	KVM_CPIO_INO=900000
	kvm_cpio_entry dev $((0040755)) 0 0
	kvm_cpio_entry dev/console $((0020600)) 5 1
	kvm_cpio_entry dev/null $((0020666)) 1 3
	kvm_cpio_entry TRAILER!!! 0 0 0
}

# kvm_iscsistart: sets KVM_ISCSISTART to an iscsistart binary, and
# KVM_SYSROOT when it comes from an unpacked Debian package (open-iscsi is not
# installed on the host: it pulls udev and systemd in).
kvm_iscsistart() {
	local ver dir deb pkg
	KVM_SYSROOT=""
	if KVM_ISCSISTART=$(PATH=$KVM_HOST_PATH command -v iscsistart); then
		return 0
	fi
	ver=$(kvm_apt_candidate open-iscsi)
	if [ -z "$ver" ]; then
		kvm_apt_update_once
		ver=$(kvm_apt_candidate open-iscsi)
	fi
	if [ -z "$ver" ]; then
		dir=$(ls -d "$KVM_CACHE"/sysroot/open-iscsi_* 2>/dev/null | sort -V | tail -n1)
		[ -n "$dir" ] && [ -e "$dir/complete" ] || kvm_die "no open-iscsi package in apt nor in the cache"
	else
		dir="$KVM_CACHE/sysroot/open-iscsi_$ver"
	fi
	if [ ! -e "$dir/complete" ]; then
		rm -rf "$dir"
		mkdir -p "$dir/root"
		for pkg in open-iscsi libopeniscsiusr; do
			deb=$(kvm_apt_download "$pkg" "$(kvm_apt_candidate "$pkg")")
			dpkg-deb -x "$deb" "$dir/root" || kvm_die "dpkg -x $deb failed"
			rm -f "$deb"
		done
		touch "$dir/complete"
	fi
	KVM_SYSROOT="$dir/root"
	for KVM_ISCSISTART in "$dir/root/sbin/iscsistart" "$dir/root/usr/sbin/iscsistart"; do
		[ -x "$KVM_ISCSISTART" ] && return 0
	done
	kvm_die "no iscsistart in the open-iscsi package ($dir)"
}

# kvm_base_tools: prints the host paths of every guest tool, one a line.
kvm_base_tools() {
	local t p
	for t in $KVM_TOOLS; do
		p=$(PATH=$KVM_HOST_PATH command -v "$t") || kvm_die "$t not found on the host (see KVM_HOST_PACKAGES)"
		echo "$p"
	done
	if dpkg -L sg3-utils >/dev/null 2>&1; then
		dpkg -L sg3-utils | grep -E '^/usr/s?bin/' | while read -r p; do [ -f "$p" ] && echo "$p"; done
	else
		PATH=$KVM_HOST_PATH command -v sg_inq sg_vpd sg_readcap sg_opcodes sg_unmap sg_raw sg_turs sg_rep_zones \
			sg_zone sg_reset_wp sg_write_same sg_sync sg_modes sg_sat_identify sg_logs sg_persist sg_rtpg \
			sg_write_x sg_stream_ctl sg_get_lba_status sg_compare_and_write sg_verify sg_dd sg_map26 ||
			kvm_die "sg3-utils not found on the host"
	fi
}

# kvm_stage_binary STAGE PATH [SYSROOT]: copies PATH (following symlinks) to
# the same path in STAGE (minus SYSROOT) and every shared library it needs.
kvm_stage_binary() {
	local stage=$1 bin=$2 sysroot=${3:-} dest lib libpath
	dest=${bin#"$sysroot"}
	mkdir -p "$stage$(dirname "$dest")"
	cp -L "$bin" "$stage$dest" || kvm_die "cannot copy $bin"
	libpath=""
	[ -n "$sysroot" ] && libpath="$sysroot/usr/lib/x86_64-linux-gnu:$sysroot/lib/x86_64-linux-gnu"
	# ldd prints "name => /path (addr)", "/lib64/ld-linux... (addr)" or "not found".
	while read -r a b c _; do
		case "$a $b $c" in
		*"not found"*) kvm_die "$bin needs $a, which is not installed" ;;
		*" => /"*) lib=$c ;;
		/*) lib=$a ;;
		*) continue ;;
		esac
		dest=${lib#"$sysroot"}
		[ -e "$stage$dest" ] && continue
		mkdir -p "$stage$(dirname "$dest")"
		cp -L "$lib" "$stage$dest"
	done < <(LD_LIBRARY_PATH=$libpath ldd "$bin" 2>/dev/null)
}

# kvm_base_key: what the base archive depends on: the tool list, the host's
# package versions (libraries included), and this file.
kvm_base_key() {
	{
		echo "$KVM_TOOLS"
		dpkg-query -W -f '${Package} ${Version}\n' 2>/dev/null
		ls -d "$KVM_CACHE"/sysroot/open-iscsi_* 2>/dev/null
		PATH=$KVM_HOST_PATH command -v iscsistart
		cat "$KVM_DIR/initramfs.sh"
	} | kvm_hash
}

# kvm_base_cpio: builds (or finds) the base archive; sets KVM_BASE_CPIO.
kvm_base_cpio() {
	local key out stage p l
	kvm_iscsistart
	key=$(kvm_base_key)
	out="$KVM_CACHE/base/base-$key.cpio"
	KVM_BASE_CPIO=$out
	[ -e "$out" ] && return 0
	kvm_log "building the initramfs base (busybox, iscsistart, sg3-utils, util-linux, e2fsprogs, fio)"
	stage=$(mktemp -d "$KVM_CACHE/tmp.XXXXXX")
	# Merged /usr, as on Debian 12, so library paths from ldd land where ld.so looks.
	mkdir -p "$stage"/usr/bin "$stage"/usr/sbin "$stage"/usr/lib "$stage"/usr/lib64 "$stage"/etc \
		"$stage"/proc "$stage"/sys "$stage"/tmp "$stage"/run "$stage"/mnt "$stage"/root "$stage"/var/tmp
	for l in bin sbin lib lib64; do ln -s "usr/$l" "$stage/$l"; done
	kvm_stage_binary "$stage" "$KVM_ISCSISTART" "$KVM_SYSROOT"
	while read -r p; do kvm_stage_binary "$stage" "$p"; done < <(kvm_base_tools)
	# Busybox applets fill in whatever the real tools above do not provide.
	"$stage/usr/bin/busybox" --list-full | while read -r p; do
		[ -e "$stage/$p" ] || [ -L "$stage/$p" ] || ln -s /bin/busybox "$stage/$p"
	done
	[ -e /etc/mke2fs.conf ] && cp /etc/mke2fs.conf "$stage/etc/"
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$stage/etc/passwd"
	printf 'root:x:0:\n' >"$stage/etc/group"
	ldconfig -r "$stage" 2>/dev/null || true
	mkdir -p "$KVM_CACHE/base"
	{
		kvm_cpio_nodes
		(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet)
	} >"$out.tmp" || kvm_die "cpio failed"
	mv "$out.tmp" "$out"
	rm -rf "$stage"
}
