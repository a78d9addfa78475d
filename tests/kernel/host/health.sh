# shellcheck shell=bash
# Host side of the "health" check (guest: tests/kernel/guest/health.sh):
# sg_logs, sg_senddiag, smartctl and smartd against the log pages, the
# self-tests and a predicted failure raised from the control socket.

host_health() {
	expect "sg_logs -a: exit status" 0 "$(res health.sg_logs_rc)"
	expect "sg_logs -a: no page refused or undecodable" 0 "$(res health.sg_logs_errors)"
	expect "sg_senddiag --test (default self-test)" 0 "$(res health.senddiag_test_rc)"
	expect "sg_senddiag --selftest=1 (background short)" 0 "$(res health.senddiag_short_rc)"
	expect "sg_logs --page=0x10 lists the background short self-test" 1 "$(res health.self_test_background_short)"
	expect "smartctl -s on (MODE SELECT of the IEC page)" 0 "$(res health.smartctl_s_on_rc)"
	expect "smartctl -H after fault add predict-failure: FAILURE PREDICTION THRESHOLD EXCEEDED" 1 \
		"$(res health.smartctl_h_failed)"
	expect "smartd -q onecheck logs 'SMART Failure'" 1 "$(res health.smartd_failure)"
}
