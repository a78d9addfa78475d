# shellcheck shell=bash
# Kernel test suite "faults": fault rules of the runtime control
# (docs/control.md) seen through Linux's SCSI error handling over iSCSI.
# Before the guest boots, sbcemuctl makes LBAs 10000-10007 of LUN 0
# unrecoverable (MEDIUM ERROR, UNRECOVERED READ ERROR until written) and holds
# the first READ of LBA 20000 (never answered): the guest sees EIO with the
# LBA in dmesg, then a repair by writing; and the command timeout, the error
# handler's abort, and the read succeeding on retry.  While the guest runs,
# it asks the host (sbce_host_ctl) to add LUN 2, grow LUN 0 and pull and
# insert the card in LUN 1 (check "runtime"), and to put LUN 3's target port
# group in standby, which the guest's scsi_dh_alua then activates with SET
# TARGET PORT GROUPS (check "alua").  Sourced by tests/kernel/run.sh.
SUITE_TARGET=iqn.2026-12.org.sbcemu:kvm
SUITE_CONFIG=faults.ini         # sbcemud configuration, next to this file
SUITE_LUNS="0 1 3"
SUITE_CHECKS="faults runtime health alua"
SUITE_ENV=(SBCE_FAULTS_LUN=0 SBCE_FAULTS_MEDIUM_LBA=10000 SBCE_FAULTS_HOLD_LBA=20000
	SBCE_RUNTIME_LUN=0 SBCE_RUNTIME_CARD_LUN=1 SBCE_RUNTIME_ADD_LUN=2 SBCE_HEALTH_LUN=0 SBCE_ALUA_LUN=3)

# Runs once the daemon listens, before the guest boots (tests/kernel/run.sh).
suite_after_start() {
	local ctl=("$BUILDDIR/daemon/sbcemuctl" -s "$STATE_DIR/control.sock")
	"${ctl[@]}" fault add 0 medium-error --lba 10000-10007 >/dev/null &&
		"${ctl[@]}" fault add 0 hold --opcode 0x28,0x88 --lba 20000 --count 1 >/dev/null
}

# Runs what the guest asks for while it runs (sbce_host_ctl; tests/kernel/run.sh
# guest_requests): the runtime check's sbcemuctl commands, nothing else.
suite_guest_request() {
	local ctl=("$BUILDDIR/daemon/sbcemuctl" -s "$STATE_DIR/control.sock")
	case $1 in
	"lu add "* | "lu resize "* | "lu state "*) ;;
	"fault add 0 predict-failure" | "fault remove all") ;; # check "health"
	"lu alua 3 standby") ;;                                # check "alua"
	*)
		echo "refused: not a request of the runtime check: $1"
		return 2
		;;
	esac
	# shellcheck disable=SC2086 # the request is sbcemuctl's words, without quoting
	"${ctl[@]}" $1
}

# tgt has no fault rules: the suite does not run against the stand-in.
STANDIN_LUNS=""
STANDIN_SIZES=()
STANDIN_THIN=()
STANDIN_ENV=()
