# shellcheck shell=bash
# Kernels for the VM harness: Debian's packaged kernels (downloaded with
# apt-get download, unpacked with dpkg -x, cached by package version) or a
# user's own image and module tree.  Source after lib.sh.
#
# kvm_kernel_resolve SPEC [MODULES] sets:
#   KVM_KERNEL_LABEL  short name for logs ("6.1", "6.12", or the image's file name)
#   KVM_KVER          the kernel release (uname -r), "" when unknown (no modules)
#   KVM_BOOT_IMAGE    what QEMU boots: the uncompressed vmlinux when it has a PVH
#                     entry note (about 3.5 s faster under TCG), else the bzImage
#   KVM_MODROOT       a root directory holding lib/modules/$KVM_KVER with modules.dep,
#                     "" when the kernel has no modules
#   KVM_KERNEL_KEY    cache key of this kernel (package_version or content hash)

# Debian series -> the package that names the current image of the series.
kvm_debian_meta_package() {
	case "$1" in
	6.1) echo linux-image-amd64 ;;   # Debian 12's default kernel
	6.12) echo linux-image-6.12-amd64 ;; # the 6.12 series Debian 12 also ships
	*) return 1 ;;
	esac
}

# kvm_debian_kernel_package SERIES: prints the image package (for example
# linux-image-6.1.0-57-amd64) the series' meta package depends on.
kvm_debian_kernel_package() {
	local meta pkg
	meta=$(kvm_debian_meta_package "$1") || return 1
	pkg=$(kvm_apt_memo apt-cache depends "$meta" | awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')
	if [ -z "$pkg" ]; then
		kvm_apt_update_once
		pkg=$(kvm_apt_memo apt-cache depends "$meta" | awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')
	fi
	[ -n "$pkg" ] && echo "$pkg"
}

# kvm_cached_kernel SERIES: newest complete cached kernel of a series (offline fallback).
kvm_cached_kernel() {
	local pat
	case "$1" in
	6.1) pat='linux-image-6.1.0-*-amd64_*' ;;
	6.12) pat='linux-image-6.12.*-amd64_*' ;;
	*) return 1 ;;
	esac
	# shellcheck disable=SC2012
	ls -d "$KVM_CACHE"/kernels/$pat 2>/dev/null | while read -r d; do
		[ -e "$d/complete" ] && echo "$d"
	done | sort -V | tail -n1
}

# kvm_extract_vmlinux BZIMAGE OUT: pulls the compressed payload out of a
# bzImage (boot protocol 2.08+: setup_sects at 0x1f1, payload_offset at 0x248,
# payload_length at 0x24c; the payload ends with a 4-byte size), decompresses
# it and keeps it if it is an ELF file with the Xen PVH entry note.
kvm_extract_vmlinux() {
	local bz=$1 out=$2 setup poff plen start magic tmp=$2.tmp
	[ "$(dd if="$bz" bs=1 skip=$((0x202)) count=4 2>/dev/null)" = HdrS ] || return 1
	setup=$(od -An -tu1 -j $((0x1f1)) -N1 "$bz" | tr -d ' ')
	[ "$setup" = 0 ] && setup=4
	poff=$(od -An -tu4 -j $((0x248)) -N4 "$bz" | tr -d ' ')
	plen=$(od -An -tu4 -j $((0x24c)) -N4 "$bz" | tr -d ' ')
	[ -n "$poff" ] && [ -n "$plen" ] && [ "$plen" -gt 4 ] || return 1
	start=$(((setup + 1) * 512 + poff))
	magic=$(od -An -tx1 -j "$start" -N6 "$bz" | tr -d ' \n')
	case "$magic" in
	fd377a585a00*) set -- xz -dc --single-stream ;;
	28b52ffd*) set -- zstd -dcq ;;
	1f8b*) set -- gzip -dc ;;
	*)
		kvm_debug "unknown bzImage payload compression ($magic) in $bz"
		return 1
		;;
	esac
	tail -c +$((start + 1)) "$bz" | head -c $((plen - 4)) | "$@" >"$tmp" 2>/dev/null
	if [ "$(head -c4 "$tmp" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ] &&
		readelf -n "$tmp" 2>/dev/null | grep -q 'Xen'; then
		mv "$tmp" "$out"
		return 0
	fi
	rm -f "$tmp"
	return 1
}

# kvm_fetch_debian_kernel SERIES: downloads and unpacks the series' current image.
kvm_fetch_debian_kernel() {
	local series=$1 pkg ver dir deb kver
	pkg=$(kvm_debian_kernel_package "$series")
	if [ -n "$pkg" ]; then
		ver=$(kvm_apt_candidate "$pkg")
	fi
	if [ -z "$pkg" ] || [ -z "$ver" ]; then
		dir=$(kvm_cached_kernel "$series")
		[ -n "$dir" ] || kvm_die "cannot find a Debian $series kernel package (apt-cache) nor a cached one"
		kvm_log "apt has no $series kernel; using cached $(basename "$dir")"
	else
		dir="$KVM_CACHE/kernels/${pkg}_$ver"
	fi
	if [ ! -e "$dir/complete" ]; then
		deb=$(kvm_apt_download "$pkg" "$ver")
		kvm_log "unpacking $(basename "$deb")"
		rm -rf "$dir"
		mkdir -p "$dir/root"
		dpkg-deb -x "$deb" "$dir/root" || kvm_die "dpkg -x $deb failed"
		kver=$(ls "$dir/root/lib/modules" 2>/dev/null | head -n1)
		[ -n "$kver" ] || kvm_die "$deb has no lib/modules/<release>"
		# The package has no modules.dep: its postinst makes it.
		depmod -b "$dir/root" "$kver" || kvm_die "depmod -b $dir/root $kver failed"
		cp "$dir/root/boot/vmlinuz-$kver" "$dir/vmlinuz"
		if kvm_extract_vmlinux "$dir/vmlinuz" "$dir/vmlinux"; then
			kvm_debug "extracted PVH vmlinux for $kver"
		else
			kvm_log "no PVH vmlinux in $pkg; booting the bzImage (slower)"
		fi
		echo "$kver" >"$dir/kver"
		touch "$dir/complete"
		rm -f "$deb" # the unpacked tree is what the cache keys on
	fi
	KVM_KERNEL_LABEL=$series
	KVM_KVER=$(cat "$dir/kver")
	KVM_MODROOT="$dir/root"
	KVM_KERNEL_KEY=$(basename "$dir")
	if [ -e "$dir/vmlinux" ]; then
		KVM_BOOT_IMAGE="$dir/vmlinux"
	else
		KVM_BOOT_IMAGE="$dir/vmlinuz"
	fi
}

# kvm_use_own_kernel IMAGE [MODULES]: a user's kernel image (bzImage, or a
# vmlinux with a PVH note) and optional module tree: either .../lib/modules/<release>
# or a root directory that contains lib/modules/<release>.
kvm_use_own_kernel() {
	local image=$1 mods=${2:-} key dir kver
	[ -f "$image" ] || kvm_die "kernel image $image not found"
	image=$(readlink -f "$image")
	key=$( (stat -c '%n %s %Y' "$image"; [ -n "$mods" ] && find "$mods" -maxdepth 3 -name modules.order -printf '%p %s %T@\n'; echo "$mods") | kvm_hash)
	dir="$KVM_CACHE/own/$key"
	mkdir -p "$dir"
	KVM_KERNEL_LABEL=$(basename "$image")
	KVM_KERNEL_KEY="own-$key"
	KVM_MODROOT=""
	KVM_KVER=""
	if [ -n "$mods" ]; then
		[ -d "$mods" ] || kvm_die "modules directory $mods not found"
		mods=$(readlink -f "$mods")
		if [ -d "$mods/lib/modules" ]; then
			kver=$(ls "$mods/lib/modules" | head -n1)
			mods="$mods/lib/modules/$kver"
		else
			kver=$(basename "$mods")
		fi
		KVM_KVER=$kver
		if [ ! -e "$dir/complete" ]; then
			# A symlink tree, so depmod can write modules.dep without touching the user's files.
			rm -rf "$dir/root"
			mkdir -p "$dir/root/lib/modules"
			cp -rs "$mods" "$dir/root/lib/modules/$kver"
			rm -f "$dir/root/lib/modules/$kver"/modules.dep*
			depmod -b "$dir/root" "$kver" || kvm_die "depmod for $mods failed"
		fi
		KVM_MODROOT="$dir/root"
	fi
	if [ ! -e "$dir/complete" ]; then
		rm -f "$dir/vmlinux"
		if [ "$(head -c4 "$image" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ]; then
			ln -s "$image" "$dir/vmlinux" # already an ELF vmlinux
		else
			kvm_extract_vmlinux "$image" "$dir/vmlinux" || kvm_debug "booting $image as a bzImage"
		fi
		touch "$dir/complete"
	fi
	if [ -e "$dir/vmlinux" ]; then
		KVM_BOOT_IMAGE="$dir/vmlinux"
	else
		KVM_BOOT_IMAGE="$image"
	fi
}

# kvm_kernel_resolve SPEC [MODULES]: SPEC is 6.1, 6.12 or a kernel image path.
kvm_kernel_resolve() {
	case "$1" in
	6.1 | 6.12)
		[ -z "${2:-}" ] || kvm_die "--modules goes with a kernel image path, not with $1"
		kvm_fetch_debian_kernel "$1"
		;;
	*) kvm_use_own_kernel "$1" "${2:-}" ;;
	esac
}

# Modules the guest needs: virtio network and entropy (without virtio_rng,
# the first getrandom() under TCG waits seconds for jitter entropy), the iSCSI initiator, sd and sg, ext4,
# the ALUA device handler (loaded before any disk appears, so it attaches at the scan),
# and the generic crypto the CRC helpers softdepend on (6.1 builds them as
# modules; on 6.12 most are built in and simply not found, which is fine).
KVM_MODULES_DEFAULT="virtio_pci virtio_net virtio_rng iscsi_tcp sd_mod sg ext4 crc32c_generic
	crct10dif_generic crc64_rocksoft_generic t10_pi scsi_debug scsi_dh_alua"
# What the guest loads at boot, in this order (entropy first; the crypto
# before sd_mod, whose CRC helpers look for an implementation when they load).
KVM_MODULES_LOAD="virtio_pci virtio_rng crc32c_generic crct10dif_generic crc64_rocksoft_generic virtio_net
	scsi_dh_alua sd_mod sg iscsi_tcp ext4"

# kvm_modules_cpio OUT MODULES...: cpio (newc) holding the dependency closure
# of MODULES from KVM_MODROOT, decompressed (.ko.xz/.zst/.gz -> .ko, so busybox
# modprobe can load them), with a fresh modules.dep.  Cached by kernel and list.
kvm_modules_cpio() {
	local out=$1 stage m line path rel n=0
	shift
	stage=$(mktemp -d "$KVM_CACHE/tmp.XXXXXX")
	local dst="$stage/usr/lib/modules/$KVM_KVER"
	mkdir -p "$dst" "$stage/usr/lib"
	ln -s usr/lib "$stage/lib"
	for m in "$@"; do
		if ! line=$(modprobe -d "$KVM_MODROOT" -S "$KVM_KVER" --show-depends "$m" 2>/dev/null); then
			kvm_debug "module $m not in $KVM_KVER (built in or absent)"
			continue
		fi
		while read -r _ path _; do
			case "$path" in
			/*) ;;
			*) continue ;; # "builtin NAME"
			esac
			rel=${path#"$KVM_MODROOT"/lib/modules/"$KVM_KVER"/}
			rel=${rel#"$KVM_MODROOT"/usr/lib/modules/"$KVM_KVER"/}
			mkdir -p "$dst/$(dirname "$rel")"
			case "$rel" in
			*.ko.xz) xz -dc "$path" >"$dst/${rel%.xz}" ;;
			*.ko.zst) zstd -dcq "$path" >"$dst/${rel%.zst}" ;;
			*.ko.gz) gzip -dc "$path" >"$dst/${rel%.gz}" ;;
			*) cp -L "$path" "$dst/$rel" ;;
			esac
			n=$((n + 1))
		done <<<"$line"
	done
	for f in modules.builtin modules.builtin.modinfo modules.order; do
		[ -e "$KVM_MODROOT/lib/modules/$KVM_KVER/$f" ] && cp -L "$KVM_MODROOT/lib/modules/$KVM_KVER/$f" "$dst/"
	done
	depmod -b "$stage" "$KVM_KVER" || kvm_die "depmod in the module stage failed"
	kvm_debug "$n module files for $KVM_KVER"
	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$out.tmp" || kvm_die "cpio failed"
	mv "$out.tmp" "$out"
	rm -rf "$stage"
}
