# shellcheck shell=bash
# Host side of the "zbc" check (guest: tests/kernel/guest/zbc.sh): the zoned
# queue limits and every zone report the guest took, against the suite's
# configuration (zone_size, conventional_zones, max_open_zones, size) and
# the ZBC zone state machine (ZBC-2; libzbc); fio's results; the ZBC commands
# in the daemon's debug log.

# zbc_size BYTES-WITH-SUFFIX: bytes.
zbc_size() {
	numfmt --from=iec "$1"
}

host_zbc() {
	local l zs_bytes size bs zs nz conv maxopen want i start cond type z1 z2 got n z
	l=$(res zbc.lun)
	zs_bytes=$(zbc_size "$(cfg_lun "$l" zone_size)")
	size=$(zbc_size "$(cfg_lun "$l" size)")
	bs=$(cfg_lun "$l" logical_block_size)
	conv=$(cfg_lun "$l" conventional_zones)
	maxopen=$(cfg_lun "$l" max_open_zones)
	zs=$((zs_bytes / 512))                # sectors
	nz=$(((size + zs_bytes - 1) / zs_bytes))
	expect "queue/zoned" host-managed "$(res zbc.zoned)"
	expect "queue/chunk_sectors (zone_size)" "$zs" "$(res zbc.chunk_sectors)"
	expect "queue/nr_zones" "$nz" "$(res zbc.nr_zones)"
	expect "queue/max_open_zones (B6h MAXIMUM NUMBER OF OPEN SWR ZONES)" "$maxopen" "$(res zbc.max_open_zones)"
	expect "queue/logical_block_size" "$bs" "$(res zbc.logical_block_size)"
	expect "size (sectors)" $((size / 512)) "$(res zbc.size)"
	# B6h: URSWRZ = 1 (Linux needs it), MAXIMUM NUMBER OF OPEN SWR ZONES.
	expect "B6h URSWRZ" 1 $(($(hex_u8 "$(res zbc.raw_b6)" 4) & 1))
	expect "B6h MAXIMUM NUMBER OF OPEN SWR ZONES" "$maxopen" "$(hex_be32 "$(res zbc.raw_b6)" 16)"

	# blkzone report: zone i starts at i * zs; the first `conv` are conventional
	# (type 1, cond 0 "not write pointer"), the others SWR (type 2) and EMPTY
	# (cond 1) at their start.  blkzone prints the write pointer relative to
	# the zone start (0 for conventional zones; the zone length when FULL).
	want=""
	for ((i = 0; i < nz; i++)); do
		start=$((i * zs))
		if [ "$i" -lt "$conv" ]; then
			want+="$start:$zs:0:0:1 "
		else
			want+="$start:$zs:0:1:2 "
		fi
	done
	want=${want% }
	expect "blkzone report of the new LU" "$want" "$(res zbc.zones_initial)"
	z1=$zs
	z2=$((2 * zs))
	expect "zone 1 after a 1 MiB write at its WP: IMPLICITLY OPENED, WP + 2048" "$z1:$zs:2048:2:2" \
		"$(res zbc.zone1_after_write)"
	expect "zone 1 read back" ok "$(res zbc.zone1_readback)"
	expect "write off the write pointer of zone 2 (UNALIGNED WRITE COMMAND)" failed "$(res zbc.unaligned_write)"
	expect "blkzone open: EMPTY -> EXPLICITLY OPENED" "$z2:$zs:0:3:2" "$(res zbc.zone2_after_open)"
	expect "blkzone close: EXPLICITLY OPENED at zone start -> EMPTY" "$z2:$zs:0:1:2" "$(res zbc.zone2_after_close)"
	expect "blkzone finish: EMPTY -> FULL" "$z2:$zs:$zs:14:2" "$(res zbc.zone2_after_finish)"
	expect "blkzone reset: zone 1 EMPTY, WP at its start" "$z1:$zs:0:1:2" "$(res zbc.zone1_after_reset)"
	expect "blkzone reset (all zones): back to the new LU's report" "$want" "$(res zbc.zones_after_reset_all)"

	expect "fio zonemode=zbd sequential write + verify: errors" 0 "$(res zbc.fio_seq_errors)"
	expect "fio zonemode=zbd sequential write: KiB written" $((8 * zs / 2)) "$(res zbc.fio_seq_written_kb)"
	expect "fio zonemode=zbd sequential write: KiB read back by the verify pass" $((8 * zs / 2)) \
		"$(res zbc.fio_seq_verified_kb)"
	got=$(res zbc.zones_after_fio_seq)
	for ((i = 2; i < 10; i++)); do
		start=$((i * zs))
		[[ " $got " == *" $start:$zs:$zs:14:2 "* ]]
		expect_true "zone $i FULL after fio's sequential write ($got)"
	done
	expect "fio zonemode=zbd random zone writes + verify: errors" 0 "$(res zbc.fio_rand_errors)"
	# At most max_open_zones zones open at the end, and no zone outside 10-15 written by the random job.
	n=0
	for z in $(res zbc.zones_final); do
		IFS=: read -r start _ _ cond type <<<"$z"
		case $cond in 2 | 3) n=$((n + 1)) ;; esac
		if [ "$start" -ge $((10 * zs)) ] || [ "$type" = 1 ] || [ "$start" -lt $((2 * zs)) ]; then :; else
			[ "$cond" = 14 ]
			expect_true "zone at $start stays FULL during the random job ($z)"
		fi
	done
	[ "$n" -le "$maxopen" ]
	expect_true "$n zones open after fio's random job, more than max_open_zones ($maxopen)"
	if [ -n "${DAEMON_LOG:-}" ] && grep -q 'CDB\[0\]' "$DAEMON_LOG"; then
		[ "$(grep -c 'CDB\[0\] 0x95' "$DAEMON_LOG")" -gt 0 ]
		expect_true "the daemon's debug log shows no REPORT ZONES (95h)"
		[ "$(grep -c 'CDB\[0\] 0x94' "$DAEMON_LOG")" -gt 0 ]
		expect_true "the daemon's debug log shows no ZBC OUT (94h)"
	fi
}


# Host side of the "zbc_ha" check (guest: tests/kernel/guest/zbc_ha.sh).
host_zbc_ha() {
	local l kernel zs_bytes size nz
	l=$(res zbc_ha.lun)
	kernel=$(res zbc_ha.kernel)
	zs_bytes=$(zbc_size "$(cfg_lun "$l" zone_size)")
	size=$(zbc_size "$(cfg_lun "$l" size)")
	nz=$(((size + zs_bytes - 1) / zs_bytes))
	expect "B1h ZONED (byte 8 bits 5:4) of a host-aware LU" 1 $((($(hex_u8 "$(res zbc_ha.raw_b1)" 8) >> 4) & 3))
	if [ "$(kernel_model "$kernel")" = 6.1 ]; then
		expect "queue/zoned on $kernel" host-aware "$(res zbc_ha.zoned)"
		expect "queue/chunk_sectors (zone_size) on $kernel" $((zs_bytes / 512)) "$(res zbc_ha.chunk_sectors)"
		expect "queue/nr_zones on $kernel" "$nz" "$(res zbc_ha.nr_zones)"
		expect "blkzone report: zones on $kernel" "$nz" "$(res zbc_ha.blkzone_zones)"
	else
		# Linux 6.10 dropped host-aware support: such a disk is used as a regular one.
		expect "queue/zoned on $kernel (host-aware disks are regular disks since 6.10)" none "$(res zbc_ha.zoned)"
	fi
	expect "write off the write pointer of a sequential write preferred zone, read back" ok \
		"$(res zbc_ha.nonseq_write)"
}
