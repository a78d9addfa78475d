# shellcheck shell=sh
# Guest check "zbc": a host-managed zoned LU through sd_zbc.  Reports the
# zoned queue limits, the zone report (blkzone) before and after each zone
# operation, the outcome of a write off the write pointer, and runs fio with
# --zonemode=zbd: a sequential write and verify across 8 zones, then random
# zone writes with verify under an open-zone limit.  The host compares all of
# it with the configuration (tests/kernel/host/zbc.sh).  LUN: SBCE_ZBC_LUN.

l=${SBCE_ZBC_LUN:-${SBCE_LUN_LIST%% *}}
dev=$(sbce_lun_var DEV "$l")
b=$(sbce_lun_var BLOCK "$l")
[ -n "$dev" ] || sbce_fail "LUN $l has no disk"
sbce_value lun "$l"
q=/sys/block/$b/queue
for f in zoned chunk_sectors nr_zones max_open_zones max_active_zones zone_append_max_bytes logical_block_size; do
	sbce_file_value "$f" "$q/$f"
done
sbce_file_value size "/sys/block/$b/size"
sbce_value raw_b6 "$(sg_vpd --page=0xb6 --raw "$(sbce_lun_var SG "$l")" | sbce_hex)"

# zones: one "start:len:wptr:cond:type" per zone (sectors; cond and type as
# numbers).  blkzone prints the write pointer relative to the zone start (0
# for conventional zones).
zones() {
	blkzone report "$dev" | sed -n 's/.*start: *\(0x[0-9a-f]*\), len *\(0x[0-9a-f]*\),.*wptr *\(0x[0-9a-f]*\).*zcond: *\([0-9]*\).*type: *\([0-9]*\).*/\1 \2 \3 \4 \5/p' |
		while read -r s n w c t; do
			printf '%s:%s:%s:%s:%s ' $((s)) $((n)) $((w)) "$c" "$t"
		done | sed 's/ $//'
}
# zone N: the "start:len:wptr:cond:type" of zone N.
zone() {
	zones | tr ' ' '\n' | sed -n "$(($1 + 1))p"
}
zs=$(cat "$q/chunk_sectors")
[ "$zs" -gt 0 ] || sbce_fail "chunk_sectors is $zs: the disk is not zoned"
sbce_value zones_initial "$(zones)"

# A write at the write pointer of zone 1 (1 MiB, O_DIRECT): IMPLICITLY OPENED, WP + 2048 sectors.
head -c 1048576 /dev/urandom >/tmp/z1
sbce_run dd if=/tmp/z1 of="$dev" bs=1M seek=$((zs * 512 / 1048576)) count=1 oflag=direct conv=notrunc
sbce_value zone1_after_write "$(zone 1)"
dd if="$dev" bs=1M skip=$((zs * 512 / 1048576)) count=1 iflag=direct 2>/dev/null | cmp -s - /tmp/z1 ||
	sbce_fail "zone 1 does not read back what was written"
sbce_value zone1_readback ok
# A write off the write pointer of zone 2 must fail (UNALIGNED WRITE COMMAND).
if dd if=/tmp/z1 of="$dev" bs=4096 seek=$((zs * 2 * 512 / 4096 + 16)) count=1 oflag=direct conv=notrunc 2>/dev/null; then
	sbce_value unaligned_write succeeded
else
	sbce_value unaligned_write failed
fi
dmesg | grep -i 'unaligned write' | tail -n 2 || true

# Zone management through the kernel's zone ioctls.
sbce_run blkzone open -o $((zs * 2)) -c 1 "$dev"
sbce_value zone2_after_open "$(zone 2)"
sbce_run blkzone close -o $((zs * 2)) -c 1 "$dev"
sbce_value zone2_after_close "$(zone 2)"
sbce_run blkzone finish -o $((zs * 2)) -c 1 "$dev"
sbce_value zone2_after_finish "$(zone 2)"
sbce_run blkzone reset -o "$zs" -c 1 "$dev"
sbce_value zone1_after_reset "$(zone 1)"
sbce_run blkzone reset "$dev"
sbce_value zones_after_reset_all "$(zones)"

# fio: sequential write + verify across zones 2-9, then random zone writes + verify in zones 10-15.
sbce_run fio --name=zbd-seq --filename="$dev" --direct=1 --ioengine=psync --zonemode=zbd --rw=write \
	--bs=128k --offset=$((zs * 2 * 512)) --size=$((zs * 8 * 512)) --verify=crc32c --do_verify=1 \
	--output-format=terse --terse-version=3 >/tmp/fio-seq.txt
# sbce_run echoes the command first: the terse line is the one starting "3;".
sbce_value fio_seq_errors "$(grep '^3;' /tmp/fio-seq.txt | cut -d';' -f5)"
# terse v3: field 6 read KiB (the verify pass), field 47 write KiB.
sbce_value fio_seq_written_kb "$(grep '^3;' /tmp/fio-seq.txt | cut -d';' -f47)"
sbce_value fio_seq_verified_kb "$(grep '^3;' /tmp/fio-seq.txt | cut -d';' -f6)"
sbce_value zones_after_fio_seq "$(zones)"
sbce_run fio --name=zbd-rand --filename="$dev" --direct=1 --ioengine=psync --zonemode=zbd --rw=randwrite \
	--bs=64k --offset=$((zs * 10 * 512)) --size=$((zs * 6 * 512)) --io_size=$((zs * 3 * 512)) \
	--max_open_zones=4 --verify=crc32c --do_verify=1 --output-format=terse --terse-version=3 >/tmp/fio-rand.txt
sbce_value fio_rand_errors "$(grep '^3;' /tmp/fio-rand.txt | cut -d';' -f5)"
sbce_value zones_final "$(zones)"
