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

# zd_zones HEX: "type:cond" of every zone descriptor of a REPORT ZONES answer
# (64-byte header, 64-byte descriptors: b0 bits 3:0 type, b1 bits 7:4 condition).
zd_zones() {
	local h=$1 n i out=""
	n=$(($(hex_be32 "$h" 0) / 64))
	for ((i = 0; i < n; i++)); do
		out+="$(($(hex_u8 "$h" $((64 + i * 64))) & 15)):$(($(hex_u8 "$h" $((64 + i * 64 + 1))) >> 4)) "
	done
	echo "${out% }"
}

# zbc_zd_answers WHAT PREFIX ZONE_SIZE_BYTES SIZE_BYTES GAP_ZONES REALM_ZONES:
# the answers zd_probe (tests/kernel/guest/zbc_zd.sh) reported under
# PREFIX, decoded as libzbc decodes them (lib/zbc_scsi.c), against a zbc-zd
# LU of that geometry with every realm active in domain 1 (active_domain =
# 1), gap_zones between its two domains and urswrz = true.  WHAT names the
# LU in the assertions.
zbc_zd_answers() {
	local what=$1 p=$2 zs_bytes=$3 size=$4 gap=$5 rz=$6 zs nz dz nr h i d want got z dl off
	zs=$((zs_bytes / 512)) # blocks of 512 bytes
	nz=$((size / zs_bytes))
	dz=$(((nz - gap) / 2))
	nr=$((dz / rz))
	expect "$what: READ CAPACITY(16) through sg" $((size / 512)) "$(res "${p}capacity")"
	# REPORT ZONE DOMAINS (zbc_scsi_report_domains): bytes 4-7 less the header, 96-byte descriptors.
	h=$(res "${p}report_domains")
	expect "$what: REPORT ZONE DOMAINS: domains, as libzbc counts them ((bytes 4-7 - 64) / 96)" 2 \
		$((($(hex_be32 "$h" 4) - 64) / 96))
	for d in 0 1; do
		i=$((64 + d * 96))
		want="$d:$dz:$((d * (dz + gap) * zs)):$(((d * (dz + gap) + dz) * zs - 1)):$((d + 1)):2"
		expect "$what: REPORT ZONE DOMAINS: domain $d (ID:zones:start:end:type:VZDZT byte 41)" "$want" \
			"$(hex_u8 "$h" $i):$(hex_be64 "$h" $((i + 16))):$(hex_be64 "$h" $((i + 24))):$(hex_be64 "$h" $((i + 32))):$(hex_u8 "$h" $((i + 40))):$(($(hex_u8 "$h" $((i + 41))) & 2))"
	done

	# REPORT REALMS (zbc_scsi_report_realms): b4-7 count, b8-11 descriptor length, from b16 16-byte start/end pairs.
	h=$(res "${p}report_realms")
	expect "$what: REPORT REALMS: realms (bytes 4-7)" "$nr" "$(hex_be32 "$h" 4)"
	want=""
	got=""
	for ((i = 0; i < nr; i++)); do
		dl=$(hex_be32 "$h" 8)
		off=$((64 + i * dl))
		want+="$i:1:$((i * rz * zs)):$(((dz + gap + i * rz) * zs)) "
		got+="$(hex_be32 "$h" $off):$(hex_u8 "$h" $((off + 7))):$(hex_be64 "$h" $((off + 16))):$(hex_be64 "$h" $((off + 32))) "
	done
	expect "$what: REPORT REALMS: realm:active domain:domain 0 start:domain 1 start" "${want% }" "${got% }"

	# REPORT ZONES 3Eh (every zone but the gap zones) and 3Fh (NOT WRITE POINTER: the gap zones here).
	want=""
	for ((z = 0; z < nz; z++)); do
		if ((z < dz)); then want+="1:5 "; elif ((z < dz + gap)); then want+="5:0 "; else want+="2:1 "; fi
	done
	expect "$what: REPORT ZONES 00h: conventional INACTIVE, gap, SWR EMPTY (type:condition)" "${want% }" \
		"$(zd_zones "$(res "${p}zones_all")")"
	expect "$what: REPORT ZONES 3Eh: every zone but the gap zones" $((nz - gap)) \
		$(($(hex_be32 "$(res "${p}zones_3e")" 0) / 64))
	expect "$what: REPORT ZONES 3Eh: no gap zone (type 5h) listed" "" \
		"$(zd_zones "$(res "${p}zones_3e")" | tr ' ' '\n' | grep '^5:' || true)"
	expect "$what: REPORT ZONES 3Fh: the gap zones (NOT WRITE POINTER; the conventional zones are INACTIVE)" "$gap" \
		$(($(hex_be32 "$(res "${p}zones_3f")" 0) / 64))

	# The Zoned Block Device Control page as libzbc reads it: data from byte 12 (no block descriptor).
	h=$(res "${p}mode_zbd")
	expect "$what: MODE SENSE(10) 0Ah/0Fh with LLBAA 1: BLOCK DESCRIPTOR LENGTH" 0 "$(hex_be16 "$h" 6)"
	expect "$what: Zoned Block Device Control: FSNOZ (libzbc: bytes 12-15 of the data) = realm_zones" "$rz" \
		"$(hex_be32 "$h" 12)"
	expect "$what: Zoned Block Device Control: URSWRZ (byte 18 of the data)" 1 "$(hex_u8 "$h" 18)"
	expect "$what: Zoned Block Device Control: MAXIMUM ACTIVATION (bytes 24-25)" 0 "$(hex_be16 "$h" 24)"

	# ZONE QUERY / ACTIVATE(16), libzbc's encoding: b8 flags, b16-19 zones, 24-byte descriptors.
	h=$(res "${p}query_realm0")
	expect "$what: ZONE QUERY(16) realm 0 to domain 0: NZ_VALID, not ACTIVATED; zones; descriptor bytes" "128:$rz:24" \
		"$(hex_u8 "$h" 8):$(hex_be32 "$h" 16):$(hex_be32 "$h" 0)"
	expect "$what: ZONE QUERY(16): descriptor (type:condition:domain:zones:start)" "1:0:0:$rz:0" \
		"$(($(hex_u8 "$h" 64) & 15)):$(($(hex_u8 "$h" 65) >> 4)):$(hex_u8 "$h" 66):$(hex_be64 "$h" 72):$(hex_be64 "$h" 80)"
	h=$(res "${p}activate_realm0")
	expect "$what: ZONE ACTIVATE(16) realm 0 to domain 0: ACTIVATED, zones" "129:$rz" "$(hex_u8 "$h" 8):$(hex_be32 "$h" 16)"
	want=""
	for ((z = 0; z < nz; z++)); do
		if ((z < rz)); then want+="1:0 "; elif ((z < dz)); then want+="1:5 "; elif ((z < dz + gap)); then want+="5:0 ";
		elif ((z < dz + gap + rz)); then want+="2:5 "; else want+="2:1 "; fi
	done
	expect "$what: REPORT ZONES after it: realm 0 conventional, its SWR zones INACTIVE" "${want% }" \
		"$(zd_zones "$(res "${p}zones_after_activate")")"
	expect "$what: ZONE ACTIVATE(16) realm 0 back to domain 1: ACTIVATED, zones" "129:$rz" \
		"$(hex_u8 "$(res "${p}activate_back")" 8):$(hex_be32 "$(res "${p}activate_back")" 16)"
	expect "$what: REPORT ZONES after it: as at first" "$(zd_zones "$(res "${p}zones_all")")" \
		"$(zd_zones "$(res "${p}zones_after_back")")"
	expect "$what: ZONE ACTIVATE(16) with ZONE ID = the capacity: 05/21/00" "logical block address out of range" \
		"$(res "${p}activate_past_capacity" | tr '[:upper:]' '[:lower:]')"
}

# The zbc_zd check (guest: tests/kernel/guest/zbc_zd.sh), against the suite's configuration.
host_zbc_zd() {
	local l
	l=$(res zbc_zd.lun)
	# sd_zbc sees a host-managed disk; whole gap zones between the domains are not
	# Linux's gap zones (the end of a ZONE STARTING LBA GRANULARITY unit), so it
	# sets up no zones ("Gap zone without constant LBA offsets"): not asserted.
	expect "zbc-zd: queue/zoned (sd_zbc takes a zone domains LU as host-managed)" host-managed "$(res zbc_zd.zoned)"
	zbc_zd_answers "zbc-zd LUN $l" zbc_zd. "$(zbc_size "$(cfg_lun "$l" zone_size)")" \
		"$(zbc_size "$(cfg_lun "$l" size)")" "$(cfg_lun "$l" gap_zones)" "$(cfg_lun "$l" realm_zones)"
}
