# shellcheck shell=sh
# Guest check "filesystem": partition the disk (GPT, sfdisk), mkfs.ext4,
# mount, write files, sync, unmount, e2fsck -f -n must find it clean, mount
# again and read everything back against its checksums.  The host then checks
# the same files in the backing file (tests/kernel/host/filesystem.sh).
# LUN: SBCE_FS_LUN (default: the first).

l=${SBCE_FS_LUN:-${SBCE_LUN_LIST%% *}}
dev=$(sbce_lun_var DEV "$l")
b=$(sbce_lun_var BLOCK "$l")
[ -n "$dev" ] || sbce_fail "LUN $l has no disk"
sbce_value lun "$l"

printf 'label: gpt\n,,L\n' | sbce_run sfdisk -q "$dev"
part=
for i in $(seq 50); do
	for p in /sys/block/"$b"/"$b"*; do
		[ -e "$p/partition" ] && part=$(basename "$p")
	done
	[ -n "$part" ] && [ -b "/dev/$part" ] && break
	sleep 0.1
done
[ -b "/dev/$part" ] || sbce_fail "no partition device after sfdisk"
sbce_value part_start_sectors "$(cat /sys/block/"$b"/"$part"/start)"
sbce_value part_size_sectors "$(cat /sys/block/"$b"/"$part"/size)"

t0=$(cut -d' ' -f1 /proc/uptime)
sbce_run mkfs.ext4 -q -F -L sbcemu "/dev/$part"
sbce_value mkfs_seconds "$(awk -v a="$t0" '{ printf "%.2f", $1 - a }' /proc/uptime)"
mkdir -p /mnt/fs
sbce_run mount -t ext4 "/dev/$part" /mnt/fs

# Files of awkward sizes (not multiples of blocks), one large, in a subdirectory too.
mkdir -p /mnt/fs/dir/sub
n=0
total=0
for spec in small:1:1000 odd:7:4099 block:1:4096 mid:3:65536 big:1:8388608 deep:2:12345; do
	name=${spec%%:*}
	rest=${spec#*:}
	count=${rest%%:*}
	size=${rest#*:}
	i=0
	while [ "$i" -lt "$count" ]; do
		f=/mnt/fs/$name$i
		[ "$name" = deep ] && f=/mnt/fs/dir/sub/$name$i
		head -c "$size" /dev/urandom >"$f"
		n=$((n + 1))
		total=$((total + size))
		i=$((i + 1))
	done
done
(cd /mnt/fs && find . -type f | sort | xargs sha256sum) >/tmp/sums
sbce_run sync
sbce_run umount /mnt/fs
sbce_value files "$n"
sbce_value bytes "$total"
while read -r sum f; do
	sbce_value "sha256.${f#./}" "$sum"
done </tmp/sums

# Clean on a forced check, read-only (-n): a non-zero status means corruption.
sbce_run e2fsck -f -n "/dev/$part"
sbce_value fsck clean

echo 3 >/proc/sys/vm/drop_caches
sbce_run mount -t ext4 -o ro "/dev/$part" /mnt/fs
(cd /mnt/fs && sha256sum -c /tmp/sums) >/tmp/check 2>&1 || { cat /tmp/check; sbce_fail "read-back checksums differ"; }
sbce_run umount /mnt/fs
sbce_value verify ok
