# shellcheck shell=bash
# Host side of the "tcmu_runner" check (chroot: tests/kernel/chroot/tcmu_runner.sh,
# suite: tests/kernel/suites/tcmu.sh): prints the guest's TCMU comparison with
# tcmu-runner into the harness's log and checks that every figure is there and
# nonzero.  Timings under TCG are recorded, never asserted on.

# tcmu_positive VALUE: VALUE is a number above zero.
tcmu_positive() {
	[[ "$1" =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v v="$1" 'BEGIN { exit !(v > 0) }'
}

host_tcmu_runner() {
	local qd who m v peer s_iops s_clat s_lat s_cpu r_iops r_clat r_lat r_cpu
	peer=$(res tcmu_runner.rread_peer)
	expect "the tcmu-runner peer of the read comparison" "qcow raw" "$peer"
	for qd in 1 16; do
		for who in sbcemu tcmu_runner; do
			for m in iops clat_us lat_us cpu_us; do
				v=$(res "tcmu_runner.rread_qd${qd}_${m}_$who")
				tcmu_positive "$v"
				expect_true "4 KiB random read QD$qd: $who's $m is reported and above zero ('$v')"
			done
		done
		s_iops=$(res "tcmu_runner.rread_qd${qd}_iops_sbcemu")
		s_clat=$(res "tcmu_runner.rread_qd${qd}_clat_us_sbcemu")
		r_iops=$(res "tcmu_runner.rread_qd${qd}_iops_tcmu_runner")
		r_clat=$(res "tcmu_runner.rread_qd${qd}_clat_us_tcmu_runner")
		s_lat=$(res "tcmu_runner.rread_qd${qd}_lat_us_sbcemu")
		r_lat=$(res "tcmu_runner.rread_qd${qd}_lat_us_tcmu_runner")
		s_cpu=$(res "tcmu_runner.rread_qd${qd}_cpu_us_sbcemu")
		r_cpu=$(res "tcmu_runner.rread_qd${qd}_cpu_us_tcmu_runner")
		echo "  ${label:-?}/tcmu/tcmu_runner: TCMU 4 KiB random read QD$qd (fio in the guest, TCG):" \
			"sbcemu ${s_iops:-?} IOPS clat ${s_clat:-?} us (lat ${s_lat:-?}), tcmu-runner(${peer:-?})" \
			"${r_iops:-?} IOPS clat ${r_clat:-?} us (lat ${r_lat:-?}), IOPS ratio" \
			"$(awk -v a="${s_iops:-0}" -v b="${r_iops:-0}" 'BEGIN { printf "%.2f", b ? a / b : 0 }'), clat ratio" \
			"$(awk -v a="${s_clat:-0}" -v b="${r_clat:-0}" 'BEGIN { printf "%.2f", b ? a / b : 0 }'), target CPU per" \
			"command ${s_cpu:-?} / ${r_cpu:-?} us, ratio" \
			"$(awk -v a="${s_cpu:-0}" -v b="${r_cpu:-0}" 'BEGIN { printf "%.2f", b ? a / b : 0 }') (sbcemu/tcmu-runner; means of" \
			"two runs each, ABBA)"
	done
	echo "  ${label:-?}/tcmu/tcmu_runner: TCMU 4 KiB random read/write QD16 IOPS:" \
		"sbcemu $(res tcmu_runner.iops_sbcemu), tcmu-runner(file_zbc) $(res tcmu_runner.iops_tcmu_runner)"
}

# The "tcmu" check: zd0 (a zbc-zd user:sbcemu backstore, 72 MiB, zones of 4
# MiB, 2 gap zones, realms of 2 zones; tests/kernel/chroot/tcmu.sh) answers
# the ZBC-2 commands as the iSCSI LU of the zbc suite does (host/zbc.sh).
host_tcmu() {
	zbc_zd_answers "user:sbcemu zd0" tcmu.zd_ $((4 << 20)) $((72 << 20)) 2 2
}
