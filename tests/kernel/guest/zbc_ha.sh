# shellcheck shell=sh
# Guest check "zbc_ha": a host-aware zoned LU (PDT 00h, Block Device
# Characteristics ZONED 01b).  Reports how the kernel sees it (Linux 6.1:
# a host-aware zoned disk; 6.10 and later: a regular disk, zones ignored),
# the zone report where there is one, and writes off the write pointer of a
# sequential write preferred zone, which a host-aware disk accepts.  The host
# compares it with the configuration (tests/kernel/host/zbc.sh).
# LUN: SBCE_ZBC_HA_LUN.

l=${SBCE_ZBC_HA_LUN:-1}
dev=$(sbce_lun_var DEV "$l")
b=$(sbce_lun_var BLOCK "$l")
[ -n "$dev" ] || sbce_fail "LUN $l has no disk"
sbce_value lun "$l"
sbce_value kernel "$(uname -r)"
q=/sys/block/$b/queue
for f in zoned chunk_sectors nr_zones; do
	sbce_file_value "$f" "$q/$f"
done
sbce_value raw_b1 "$(sg_vpd --page=0xb1 --raw "$(sbce_lun_var SG "$l")" | sbce_hex)"
sbce_value blkzone_zones "$(blkzone report "$dev" 2>/dev/null | grep -c 'start:' || true)"
# 64 KiB at 1 MiB into zone 2 (not its write pointer): accepted and read back.
head -c 65536 /dev/urandom >/tmp/ha
off=$((2 * 4096 + 1024))   # KiB: zone 2 starts at 8 MiB
sbce_run dd if=/tmp/ha of="$dev" bs=1k seek=$off count=64 oflag=direct conv=notrunc
if dd if="$dev" bs=1k skip=$off count=64 iflag=direct 2>/dev/null | cmp -s - /tmp/ha; then
	sbce_value nonseq_write ok
else
	sbce_value nonseq_write differs
fi
