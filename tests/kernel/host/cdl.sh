# shellcheck shell=bash
# Host side of the "cdl" check (guest: tests/kernel/guest/cdl.sh): Linux
# 6.5+ found command duration limits (cdl_supported 1, from INQUIRY VERSION
# 07h and RSOC CDLP 01b / 10b with RWCDLP; scsi_cdl_check), took the T2A
# descriptors, and sent READ(16) with DLD 1 and 2 for the priority hints:
# the max active time's abort policy reached the program as ETIME once (not
# retried: the daemon's statistics count one command for descriptor 1), the
# complete-earliest one succeeded after the model's 20 ms.  On 6.1 there is
# no CDL: no sysfs files, the hint ignored (no DLD reaches the daemon).

host_cdl() {
	local kernel inq rsoc_r rsoc_w log
	kernel=$(res cdl.kernel)
	inq=$(res cdl.inquiry)
	rsoc_r=$(res cdl.rsoc_read16)
	rsoc_w=$(res cdl.rsoc_write16)
	expect "INQUIRY VERSION 07h (SPC-5) on an LU with duration limits" 07 "${inq:4:2}"
	expect "RSOC READ(16): RWCDLP 1, CDLP 01b (T2A), SUPPORT 011b" "01 0b" "${rsoc_r:0:2} ${rsoc_r:2:2}"
	expect "RSOC WRITE(16): RWCDLP 1, CDLP 10b (T2B), SUPPORT 011b" "01 13" "${rsoc_w:0:2} ${rsoc_w:2:2}"
	expect "MODE SELECT(10) of the T2A page through sg" ok "$(res cdl.mode_select)"
	expect "io without a hint" ok "$(res cdl.io_hint0 | sed -n 's/^result=\([^ ]*\).*/\1/p')"
	log=$DAEMON_LOG
	if [ "$(kernel_model "$kernel")" = 6.1 ]; then
		expect "device/cdl_supported on $kernel (no CDL before 6.5)" absent "$(res cdl.cdl_supported)"
		expect "a read with a duration limit hint on $kernel: no DLD, a plain read" ok \
			"$(res cdl.io_hint1 | sed -n 's/^result=\([^ ]*\).*/\1/p')"
		! grep -q 'T2A descriptor' "$log"
		expect_true "the daemon saw no DLD from $kernel"
		return
	fi
	expect "device/cdl_supported" 1 "$(res cdl.cdl_supported)"
	expect "device/cdl_enable" 1 "$(res cdl.cdl_enable)"
	expect "DLD 1 (max active 1 ms, abort): ETIME" errno:ETIME \
		"$(res cdl.io_hint1 | sed -n 's/^result=\([^ ]*\).*/\1/p')"
	expect "DLD 2 (max active 1 ms, complete-earliest): read succeeds" ok \
		"$(res cdl.io_hint2 | sed -n 's/^result=\([^ ]*\).*/\1/p')"
	hint2=$(res cdl.io_hint2)
	[ "$(printf '%s' "$hint2" | sed -n 's/.*ms=\([0-9]*\).*/\1/p')" -ge 19 ]
	expect_true "... after the 20 ms the model takes ($hint2)"
	# The daemon's shutdown statistics (daemon/sbcemud/lus.c): what sd's DLD selected.
	grep -q 'T2A descriptor 1: 1 command.* abort 1' "$log"
	expect_true "daemon saw DLD 1 once (no retry), its abort policy taken"
	grep -q 'T2A descriptor 2: 1 command.* complete-earliest 1' "$log"
	expect_true "daemon saw DLD 2, its complete-earliest policy taken"
}
