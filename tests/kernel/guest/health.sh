# shellcheck shell=sh
# Guest check "health": log pages, self-tests and informational exceptions
# as the stock tools read them (docs/conformance.md "Log pages,
# informational exceptions and self-tests"), on LUN SBCE_HEALTH_LUN:
#  - sg_logs -a decodes every page without an error;
#  - sg_senddiag --test (the default self-test) and a background short self-test;
#  - smartctl -x reads it all and -H says OK;
#  - smartctl -s on (DEXCPT = 0, MRIE 6h), then the host raises a predicted
#    failure (sbcemuctl fault add LUN predict-failure): smartctl -H reports
#    it as failing health and smartd, run once, logs a SMART Failure.
# The host (tests/kernel/host/health.sh) checks the values.

l=${SBCE_HEALTH_LUN:-0}
h=$(sbce_lun_var HCTL "$l")
[ -n "$h" ] || sbce_fail "LUN $l has no device"
sg=$(basename /sys/class/scsi_device/"$h"/device/scsi_generic/* 2>/dev/null)
dev=$(sbce_lun_var DEV "$l")
[ -n "$sg" ] || sbce_fail "LUN $l has no sg device"
sg=/dev/$sg

rc=0
sg_logs -a "$sg" >/tmp/logs.out 2>/tmp/logs.err || rc=$?
sbce_value sg_logs_rc $rc
sbce_value sg_logs_errors "$(grep -ci 'not supported\|illegal\|error' /tmp/logs.err)"
sbce_value sg_logs_pages "$(grep -c '^ *\[0x' /tmp/logs.out || true)"
sbce_info "sg_logs -a: $(head -c 300 /tmp/logs.err | tr '\n' ' ')"
rc=0
sg_senddiag --test "$sg" >/tmp/diag.out 2>&1 || rc=$?
sbce_value senddiag_test_rc $rc
rc=0
sg_senddiag --selftest=1 "$sg" >/tmp/diag1.out 2>&1 || rc=$?
sbce_value senddiag_short_rc $rc
sleep 3
rc=0
sg_logs --page=0x10 "$sg" >/tmp/st.out 2>&1 || rc=$?
sbce_value self_test_log_rc $rc
sbce_value self_test_background_short "$(grep -c 'background short' /tmp/st.out)"

if command -v smartctl >/dev/null 2>&1; then
	rc=0
	smartctl -x "$dev" >/tmp/smart.x 2>&1 || rc=$?
	sbce_value smartctl_x_rc $rc
	sbce_value smartctl_health_ok "$(grep -c 'SMART Health Status: OK' /tmp/smart.x)"
	rc=0
	smartctl -s on "$dev" >/tmp/smart.on 2>&1 || rc=$?
	sbce_value smartctl_s_on_rc $rc
	sbce_host_ctl "fault add $l predict-failure"
	n=0
	while [ $n -lt 20 ]; do
		smartctl -H "$dev" >/tmp/smart.h 2>&1 || true
		grep -q 'FAILURE PREDICTION THRESHOLD EXCEEDED' /tmp/smart.h && break
		sleep 0.5
		n=$((n + 1))
	done
	sbce_value smartctl_h_failed "$(grep -c 'FAILURE PREDICTION THRESHOLD EXCEEDED' /tmp/smart.h)"
	sbce_info "smartctl -H: $(grep 'Health Status' /tmp/smart.h)"
	echo "$dev -H" >/tmp/smartd.conf
	rc=0
	smartd -q onecheck -c /tmp/smartd.conf >/tmp/smartd.out 2>&1 || rc=$?
	sbce_value smartd_rc $rc
	sbce_value smartd_failure "$(grep -c 'SMART Failure' /tmp/smartd.out)"
	sbce_host_ctl "fault remove all"
else
	sbce_value smartctl_x_rc absent
fi
