# shellcheck shell=sh
# Guest check "zbc_zd": a ZBC-2 zone domains LU (kind zbc-zd) seen by a real
# kernel: how sd_zbc takes it (host-managed; with gap zones between the
# domains it sets up no zones: Linux's gap zones end a zone starting LBA
# granularity unit, sd_zbc_parse_report), then the ZBC-2 commands Linux does
# not send, through sg (sg_raw) in the encodings of libzbc (lib/zbc_scsi.c):
# REPORT ZONE DOMAINS, REPORT REALMS, REPORT ZONES with reporting options 3Eh
# and 3Fh, the Zoned Block Device Control mode page read as libzbc reads it,
# and ZONE QUERY(16) / ZONE ACTIVATE(16) of realm 0 to domain 0 and back.
# The host decodes the raw answers as libzbc does (tests/kernel/host/zbc.sh).
# LUN: SBCE_ZBC_ZD_LUN.  The "tcmu" suite runs zd_probe on a user:sbcemu
# backstore (tests/kernel/chroot/tcmu.sh sources this with ZD_PROBE_LIB=1).

# zd_probe SG EMIT PREFIX: runs the commands on SG and reports each answer as
# hex (or "failed") with "EMIT PREFIX<key> VALUE".
zd_probe() {
	_sg=$1
	_emit=$2
	_p=$3
	# zd_raw KEY CDB-BYTES...: the data-in of the CDB (up to 4 KiB).
	zd_raw() {
		_key=$1
		shift
		if sg_raw -r 4096 -o /tmp/zd.bin "$_sg" "$@" >/tmp/zd.log 2>&1; then
			"$_emit" "$_p$_key" "$(od -An -v -tx1 </tmp/zd.bin | tr -d ' \n')"
		else
			echo "$_key: $(tr '\n' ' ' </tmp/zd.log)"
			"$_emit" "$_p$_key" failed
		fi
	}
	# zd_in KEY SA OPTION: ZBC IN (95h) with the REPORT ZONES layout, LBA 0, 4096 bytes.
	zd_in() {
		zd_raw "$1" 95 "$2" 00 00 00 00 00 00 00 00 00 00 10 00 "$3" 00
	}
	zd_in report_domains 07 00
	zd_in report_realms 06 00
	zd_in zones_all 00 00
	zd_in zones_3e 00 3e
	zd_in zones_3f 00 3f
	# MODE SENSE(10) of 0Ah/0Fh as libzbc sends it: byte 1 10h (LLBAA 1, DBD 0).
	zd_raw mode_zbd 5a 10 0a 0f 00 00 00 01 00 00
	# ZONE QUERY(16) / ZONE ACTIVATE(16), libzbc's layout: b2 ZSRC 40h | domain,
	# b3-8 ZONE ID, b9-12 ALLOCATION LENGTH 4096, b13-14 NUMBER OF ZONES.  Zone
	# 0 (realm 0) with 2 zones to domain 0 (conventional), then back to domain 1.
	zd_raw query_realm0 95 09 40 00 00 00 00 00 00 00 00 10 00 00 02 00
	zd_raw activate_realm0 95 08 40 00 00 00 00 00 00 00 00 10 00 00 02 00
	zd_in zones_after_activate 00 00
	zd_raw activate_back 95 08 41 00 00 00 00 00 00 00 00 10 00 00 02 00
	zd_in zones_after_back 00 00
	# The capacity from READ CAPACITY(16) (sd keeps none when it cannot set up
	# the zones); ZONE ACTIVATE(16) with ZONE ID = it: LBA OUT OF RANGE.
	_cap=$(sg_readcap -l "$_sg" | sed -n 's/.*Number of logical blocks=\([0-9]*\).*/\1/p')
	"$_emit" "${_p}capacity" "$_cap"
	# shellcheck disable=SC2046
	if sg_raw -r 4096 "$_sg" 95 08 41 $(printf '%012x' "$_cap" | sed 's/../& /g') 00 00 10 00 00 02 00 \
		>/tmp/zd.log 2>&1; then
		"$_emit" "${_p}activate_past_capacity" good
	else
		"$_emit" "${_p}activate_past_capacity" "$(grep -io 'logical block address out of range' /tmp/zd.log | head -n1)"
	fi
}

[ -n "${ZD_PROBE_LIB:-}" ] && return 0

l=${SBCE_ZBC_ZD_LUN:-2}
sg=$(sbce_lun_var SG "$l")
b=$(sbce_lun_var BLOCK "$l")
[ -n "$sg" ] || sbce_fail "LUN $l has no sg device"
sbce_value lun "$l"
sbce_value kernel "$(uname -r)"
sbce_file_value zoned "/sys/block/$b/queue/zoned"
zd_probe "$sg" sbce_value ""
