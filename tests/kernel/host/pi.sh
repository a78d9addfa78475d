# shellcheck shell=bash
# Host side of the "pi" check (guest: tests/kernel/guest/pi.sh): READ
# CAPACITY(16) and INQUIRY as sg3_utils decodes them against the configured
# protection type, sd's log line (iSCSI over TCP is not DIF capable: sd keeps
# the disk and says it disables DIF), the round trips, the tuple of a block
# written through the block device (guard recomputed here with a bitwise
# CRC-16/T10-DIF, reference tag = LBA, application tag 0), and the injected
# faults seen as I/O errors with the right sense.  docs/pi.md.

# crc16_t10dif HEX: CRC-16/T10-DIF (polynomial 8BB7h, initial 0) of the bytes, as 4 hex digits.
crc16_t10dif() {
	python3 -c '
import sys
crc = 0
for b in bytes.fromhex(sys.argv[1]):
    crc ^= b << 8
    for _ in range(8):
        crc = ((crc << 1) ^ 0x8bb7) & 0xffff if crc & 0x8000 else (crc << 1) & 0xffff
print("%04x" % crc)' "$1"
}

host_pi() {
	local l type hex data
	for l in 0 1; do
		type=$(cfg_lun "$l" protection_type)
		expect "LUN $l: sg_readcap --long (PROT_EN 1, P_TYPE = type - 1)" "prot_en=1, p_type=$((type - 1))" \
			"$(res "pi.readcap_$l")"
		expect "LUN $l: sg_inq standard INQUIRY PROTECT" "Protect=1" "$(res "pi.inq_protect_$l")"
		# sd_read_protection_type: the host (iscsi_tcp) is not DIF capable, so sd
		# disables the LU's type and runs the disk as type 0 (no PI in the I/O).
		expect "LUN $l: sd logs that it disables DIF Type $type (iSCSI/TCP is not DIF capable)" \
			"Disabling DIF Type $type protection;Enabling DIF Type 0 protection" "$(res "pi.dmesg_dif_$l")"
		expect "LUN $l: logical block size" "$(cfg_lun "$l" logical_block_size)" \
			"$(res "pi.logical_block_size_$l")"
		expect "LUN $l: 256 KiB written and read back through the block device" ok "$(res "pi.roundtrip_$l")"
	done
	expect "READ(10) RDPROTECT=001b through sg: exit status" 0 "$(res pi.rdprotect_rc)"
	hex=$(res pi.rdprotect_hex)
	expect "READ(10) RDPROTECT=001b: 520 bytes (512 data + 8 PI)" 1040 "${#hex}"
	data=${hex:0:1024}
	expect "the tuple's guard is the CRC-16/T10-DIF of the block written through sd" \
		"$(crc16_t10dif "$data")" "${hex:1024:4}"
	expect "the tuple's application tag (generated: 0)" 0000 "${hex:1028:4}"
	expect "the tuple's reference tag is the LBA (2048 = 00000800h)" 00000800 "${hex:1032:8}"
	# dd exits 1 when the read fails with EIO.
	expect "pi_faults guard 5000: the read of LBA 5000 fails" 1 "$(res pi.fault_read_rc_5000)"
	expect "pi_faults ref 6000: the read of LBA 6000 fails" 1 "$(res pi.fault_read_rc_6000)"
	expect "LBA 7000 (written, no fault) reads" 0 "$(res pi.fault_read_rc_7000)"
	guard_logged=$(res pi.fault_guard_logged)
	ref_logged=$(res pi.fault_ref_logged)
	[ "$guard_logged" -ge 1 ] 2>/dev/null
	expect_true "the kernel logs 'Logical block guard check failed' (0B/10/01) for LBA 5000 ($guard_logged lines)"
	[ "$ref_logged" -ge 1 ] 2>/dev/null
	expect_true "the kernel logs 'Logical block reference tag check failed' (0B/10/03) for LBA 6000 ($ref_logged lines)"
}
