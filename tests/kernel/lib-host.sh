# shellcheck shell=bash
# Host-side helpers for the kernel tests: the guest's results, the suite's
# configuration, assertions, SCSI field decoding and a model of how Linux's
# sd driver turns what a device reports into block-queue limits.
# Sourced by tests/kernel/run.sh; tests/kernel/host/<check>.sh use these.

declare -A RES=()      # CHECK values of the current run: RES[check.key]=value
HOST_FAILS=()          # failed assertions of the current check
HOST_ASSERTS=0

# res_load FILE: reads the CHECK lines of a results file into RES.
res_load() {
	local line key
	RES=()
	while IFS= read -r line; do
		case "$line" in
		"CHECK "*=*)
			line=${line#CHECK }
			key=${line%%=*}
			RES[$key]=${line#*=}
			;;
		esac
	done <"$1"
}

# res KEY: the value the guest reported for KEY ("check.key"), or empty.
res() {
	echo "${RES[$1]:-}"
}

# expect WHAT EXPECTED ACTUAL: one assertion; a mismatch is recorded, not fatal.
expect() {
	HOST_ASSERTS=$((HOST_ASSERTS + 1))
	if [ "$2" != "$3" ]; then
		HOST_FAILS+=("$1: expected '$2', got '$3'")
		return 1
	fi
	return 0
}

# expect_true WHAT CONDITION-STATUS: records WHAT when the previous test failed.
# Usage: [ "$a" -lt "$b" ]; expect_true "a below b ($a < $b)"
# WHAT must not contain a command substitution: bash runs it before the call
# and $? is then its status, not the test's (put the value in a variable first).
expect_true() {
	local rc=$?
	HOST_ASSERTS=$((HOST_ASSERTS + 1))
	if [ "$rc" != 0 ]; then
		HOST_FAILS+=("$1")
		return 1
	fi
	return 0
}

# fail WHY: an assertion that cannot even be evaluated.
fail() {
	HOST_ASSERTS=$((HOST_ASSERTS + 1))
	HOST_FAILS+=("$1")
}

# ---- the suite's sbcemud configuration ----

# cfg_lun LUN KEY: the value of KEY in [lun "$SUITE_TARGET" LUN] of the
# suite's configuration file, or empty.  Only what the file says: the test
# configurations spell out every key the assertions use.
cfg_lun() {
	[ -n "${SUITE_CONFIG_FILE:-}" ] || return 0
	awk -v target="$SUITE_TARGET" -v lun="$1" -v key="$2" '
		/^[ \t]*[#;]/ { next }
		/^\[/ {
			sec = $0
			gsub(/[ \t]+/, " ", sec)
			want = "[lun \"" target "\" " lun "]"
			insec = (sec == want)
			next
		}
		insec && index($0, "=") {
			k = substr($0, 1, index($0, "=") - 1)
			v = substr($0, index($0, "=") + 1)
			gsub(/^[ \t]+|[ \t]+$/, "", k)
			sub(/[ \t]+;.*$/, "", v)
			gsub(/^[ \t]+|[ \t]+$/, "", v)
			if (k == key) { print v; exit }
		}' "$SUITE_CONFIG_FILE"
}

# cfg_size VALUE: "256M" -> bytes (K, M, G, T, P are powers of 1024).
cfg_size() {
	local v=$1 m=1
	case "$v" in
	*[kK]) m=1024 ;;
	*[mM]) m=$((1024 ** 2)) ;;
	*[gG]) m=$((1024 ** 3)) ;;
	*[tT]) m=$((1024 ** 4)) ;;
	*[pP]) m=$((1024 ** 5)) ;;
	esac
	v=${v%[kKmMgGtTpP]}
	echo $((v * m))
}

# cfg_bool VALUE: 1 or 0.
cfg_bool() {
	case "$1" in
	true | yes | on | 1) echo 1 ;;
	*) echo 0 ;;
	esac
}

# ---- decoding raw SCSI data (hex strings from the guest) ----

# hex_u8 HEX OFFSET, hex_be16/32/64 HEX OFFSET: big-endian fields (SPC 3.6).
hex_u8() {
	echo $((16#${1:$(($2 * 2)):2}))
}
hex_be16() {
	echo $((16#${1:$(($2 * 2)):4}))
}
hex_be32() {
	echo $((16#${1:$(($2 * 2)):8}))
}
hex_be64() {
	# Bash arithmetic is signed 64-bit; the fields used here stay below 2^63.
	echo $((16#${1:$(($2 * 2)):16}))
}
hex_len() {
	echo $((${#1} / 2))
}
# hex_ascii HEX OFFSET LENGTH: an ASCII field with trailing spaces removed.
hex_ascii() {
	local h=${1:$(($2 * 2)):$(($3 * 2))} s=""
	while [ -n "$h" ]; do
		s+=$(printf "\\x${h:0:2}")
		h=${h:2}
	done
	s=${s%"${s##*[! ]}"}
	echo "$s"
}

min_not_zero() {
	if [ "$1" = 0 ]; then echo "$2"
	elif [ "$2" = 0 ]; then echo "$1"
	elif [ "$1" -lt "$2" ]; then echo "$1"
	else echo "$2"
	fi
}
min() { if [ "$1" -lt "$2" ]; then echo "$1"; else echo "$2"; fi; }
max() { if [ "$1" -gt "$2" ]; then echo "$1"; else echo "$2"; fi; }

# ---- what sd makes of a device ----

# kernel_model RELEASE: "6.1" for kernels before the queue_limits rework
# (6.9), "6.12" after it.  The rules below are read from Debian's 6.1.192 and
# 6.12.118 sources (drivers/scsi/sd.c, block/blk-settings.c); kernels in
# between may differ in details.
kernel_model() {
	local major minor
	major=${1%%.*}
	minor=${1#*.}
	minor=${minor%%[.-]*}
	if [ "$major" -gt 6 ] || { [ "$major" = 6 ] && [ "$minor" -ge 10 ]; }; then
		echo 6.12
	else
		echo 6.1
	fi
}

# sd_model PREFIX RELEASE: from the raw pages the guest reported under
# PREFIX (check.lunN), computes what sysfs should show; sets SD[attr].
# The iSCSI host (iscsi_tcp) contributes max_sectors 0xFFFF, no opt_sectors,
# and allows WRITE SAME.
declare -A SD=()
sd_model() {
	local p=$1 model rc16 b0 b1 b2 lbs lbppbe pbs last lbpme lbprz lbpvpd=0 lbpu=0 lbpws=0 lbpws10=0
	local min_xfer=0 max_xfer=0 opt_xfer=0 max_ws=0 max_unmap=0 ugran=0 mode dev_max hw otl_ok io_opt io_min
	local rw_max mh max_blocks ws16=0 ws10=0 no_rsoc=0 level rot lsec
	model=$(kernel_model "$2")
	SD=()
	rc16=$(res "$p.raw.rc16")
	b0=$(res "$p.raw.vpd_b0")
	b1=$(res "$p.raw.vpd_b1")
	b2=$(res "$p.raw.vpd_b2")
	level=$(res "$p.sys.scsi_level")
	[ "${#rc16}" -ge 32 ] || return 1
	# READ CAPACITY (16) parameter data (SBC-4 5.20.2).
	last=$(hex_be64 "$rc16" 0)
	lbs=$(hex_be32 "$rc16" 8)
	lbppbe=$(($(hex_u8 "$rc16" 13) & 15))
	lbpme=$((($(hex_u8 "$rc16" 14) >> 7) & 1))
	lbprz=0
	[ "$lbpme" = 1 ] && lbprz=$((($(hex_u8 "$rc16" 14) >> 6) & 1))
	pbs=$((lbs << lbppbe))
	lsec=$((lbs / 512)) # 512-byte sectors per logical block
	SD[size]=$(((last + 1) * lsec))
	SD[logical_block_size]=$lbs
	SD[physical_block_size]=$pbs
	SD[thin_provisioning]=$lbpme
	# Logical Block Provisioning VPD (SBC-4 6.6.4), read only when LBPME is set.
	if [ "$lbpme" = 1 ] && [ "$b2" != error ] && [ "$(hex_len "$b2")" -ge 8 ]; then
		lbpvpd=1
		lbpu=$((($(hex_u8 "$b2" 5) >> 7) & 1))
		lbpws=$((($(hex_u8 "$b2" 5) >> 6) & 1))
		lbpws10=$((($(hex_u8 "$b2" 5) >> 5) & 1))
	fi
	# Block Limits VPD (SBC-4 6.6.3).
	mode=full
	[ "$lbpme" = 1 ] && mode=writesame_16 # 6.1: sd_read_capacity_16() before the VPD pages
	if [ "$b0" != error ] && [ "$(hex_len "$b0")" -ge 16 ]; then
		min_xfer=$(hex_be16 "$b0" 6)
		max_xfer=$(hex_be32 "$b0" 8)
		opt_xfer=$(hex_be32 "$b0" 12)
		if [ "$(hex_len "$b0")" -ge 64 ]; then
			max_ws=$(($(hex_be64 "$b0" 36) & 0xffffffff))
			if [ "$lbpme" = 1 ]; then
				[ "$(hex_be32 "$b0" 20)" != 0 ] && [ "$(hex_be32 "$b0" 24)" != 0 ] &&
					max_unmap=$(hex_be32 "$b0" 20)
				ugran=$(hex_be32 "$b0" 28)
				if [ "$lbpvpd" = 0 ]; then
					if [ "$max_unmap" != 0 ]; then mode=unmap; else mode=writesame_16; fi
				elif [ "$lbpu" = 1 ] && [ "$max_unmap" != 0 ]; then mode=unmap
				elif [ "$lbpws" = 1 ]; then mode=writesame_16
				elif [ "$lbpws10" = 1 ]; then mode=writesame_10
				else mode=disabled
				fi
			fi
		fi
	fi
	SD[provisioning_mode]=$mode
	# Discard (sd_config_discard; SD_MAX_WS16_BLOCKS 0x7fffff, SD_MAX_WS10_BLOCKS 0xffff).
	case "$mode" in
	unmap) max_blocks=$(min_not_zero "$max_unmap" $((0x7fffff))) ;;
	writesame_16) max_blocks=$(min_not_zero "$max_ws" $((0x7fffff))) ;;
	writesame_10) max_blocks=$(min_not_zero "$max_ws" $((0xffff))) ;;
	*) max_blocks=0 ;;
	esac
	SD[discard_max_bytes]=$((max_blocks * lbs))
	SD[discard_max_hw_bytes]=$((max_blocks * lbs))
	if [ "$max_blocks" = 0 ]; then
		# 6.1 never set it for a fully provisioned disk; 6.12 reports 0 without discard.
		SD[discard_granularity]=0
		if [ "$model" = 6.1 ] && [ "$mode" != full ]; then
			SD[discard_granularity]=$(max "$pbs" $((ugran * lbs)))
		fi
	else
		SD[discard_granularity]=$(max "$pbs" $((ugran * lbs)))
	fi
	# Transfer lengths (sd_revalidate_disk).  A disk below 2^32 blocks uses
	# READ/WRITE(10): dev_max starts at SD_DEF_XFER_BLOCKS.
	if [ "$((last + 1))" -gt $((0xffffffff)) ]; then dev_max=$((0xffffffff)); else dev_max=$((0xffff)); fi
	dev_max=$(min_not_zero "$dev_max" "$max_xfer")
	io_min=$pbs
	if [ "$min_xfer" != 0 ] && [ $(((min_xfer * lbs) % pbs)) = 0 ]; then
		io_min=$(max "$pbs" $((min_xfer * lbs)))
	fi
	SD[minimum_io_size]=$io_min
	# sd_validate_opt_xfer_size(): plausible, within limits, page and block multiple.
	otl_ok=0
	if [ "$opt_xfer" != 0 ] && [ "$opt_xfer" -le "$dev_max" ] && [ "$opt_xfer" -le $((0xffff)) ] &&
		[ $((opt_xfer * lbs)) -ge 4096 ] && [ $(((opt_xfer * lbs) % pbs)) = 0 ] &&
		{ [ "$min_xfer" = 0 ] || [ $(((opt_xfer * lbs) % (min_xfer * lbs))) = 0 ]; }; then
		otl_ok=1
	fi
	io_opt=0
	[ "$otl_ok" = 1 ] && io_opt=$((opt_xfer * lbs))
	SD[optimal_io_size]=$io_opt
	hw=$((0xffff / lsec * lsec)) # iscsi_tcp's max_sectors, rounded to whole blocks
	SD[max_hw_sectors_kb]=$((hw / 2))
	if [ "$model" = 6.1 ]; then
		if [ "$otl_ok" = 1 ]; then
			rw_max=$((opt_xfer * lsec))
		else
			rw_max=$(min_not_zero $((dev_max * lsec)) 2560) # BLK_DEF_MAX_SECTORS
		fi
		rw_max=$(min "$rw_max" "$hw")
	else
		# blk_validate_limits(): BLK_DEF_MAX_SECTORS_CAP 2560 unless io_opt/io_min are larger.
		mh=$(min_not_zero "$hw" $(((dev_max * lsec) & 0xffffffff)))
		if [ "$io_opt" -gt $((2560 * 512)) ]; then rw_max=$(min "$mh" $((io_opt / 512)))
		elif [ "$io_min" -gt $((2560 * 512)) ]; then rw_max=$(min "$mh" $((io_min / 512)))
		else rw_max=$(min "$mh" 2560)
		fi
		rw_max=$((rw_max / lsec * lsec))
	fi
	SD[max_sectors_kb]=$((rw_max / 2))
	# WRITE SAME / write zeroes (sd_read_write_same, sd_config_write_same).
	# scsi_report_opcode() asks only SPC-3 and later devices (scsi_level >= 6);
	# a failing RSOC for INQUIRY sets no_report_opcodes (modelled as: any error).
	if [ "${level:-0}" -lt 6 ] || [ "$(res "$p.raw.rsoc_12")" = error ]; then
		no_rsoc=1
	else
		[ "$(rsoc_supported "$(res "$p.raw.rsoc_93")")" = 1 ] && ws16=1
		[ "$(rsoc_supported "$(res "$p.raw.rsoc_41")")" = 1 ] && ws10=1
	fi
	if [ "$max_ws" -gt $((0xffff)) ]; then
		max_ws=$(min_not_zero "$max_ws" $((0x7fffff)))
	elif [ "$ws16" = 1 ] || [ "$ws10" = 1 ] || [ "$no_rsoc" = 1 ]; then
		max_ws=$(min_not_zero "$max_ws" $((0xffff)))
	else
		max_ws=0
	fi
	if [ "$max_ws" != 0 ] && [ "$pbs" -gt "$lbs" ]; then
		max_ws=$((max_ws / (pbs / lbs) * (pbs / lbs)))
	fi
	SD[max_write_same_blocks]=$max_ws
	SD[write_zeroes_max_bytes]=$((max_ws * lbs))
	if [ "$lbprz" = 1 ] && [ "$lbpws" = 1 ]; then SD[zeroing_mode]=writesame_16_unmap
	elif [ "$lbprz" = 1 ] && [ "$lbpws10" = 1 ]; then SD[zeroing_mode]=writesame_10_unmap
	elif [ "$max_ws" != 0 ]; then SD[zeroing_mode]=writesame
	else SD[zeroing_mode]="write"
	fi
	# Block Device Characteristics VPD: MEDIUM ROTATION RATE 1 = non-rotating.
	rot=0
	[ "$b1" != error ] && [ "$(hex_len "$b1")" -gt 8 ] && rot=$(hex_be16 "$b1" 4)
	if [ "$rot" = 1 ]; then SD[rotational]=0; else SD[rotational]=1; fi
	SD[zoned]=none
	return 0
}

# rsoc_supported HEX: 1 when a one-command RSOC answer says SUPPORT = 011b
# ("supported as in the standard"; scsi_report_opcode tests the low two bits).
rsoc_supported() {
	if [ "$1" = error ] || [ "$(hex_len "$1")" -lt 2 ]; then
		echo 0
	elif [ $(($(hex_u8 "$1" 1) & 3)) = 3 ]; then
		echo 1
	else
		echo 0
	fi
}

# allocated_bytes FILE: bytes the file system holds for FILE (st_blocks * 512).
allocated_bytes() {
	echo $(($(stat -c %b "$1") * $(stat -c %B "$1")))
}
