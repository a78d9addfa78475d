# shellcheck shell=bash
# Kernel test suite "conglomerate": an administrative LU with subsidiary LUs
# (SAM-5 two-level LUNs, docs/conglomerate.md) seen through Linux's SCSI scan,
# sd and sg over iSCSI: which LUNs the kernel attaches (admin | element << 16),
# what it makes of the administrative LU (no medium), REPORT LUNS with the
# conglomerate SELECT REPORT values, LU_CONG and LU_COLL_TYPE, data through a
# subsidiary into its backing file, and bindings changed while the guest
# runs: the guest asks the host (sbce_host_ctl) to bind subsidiaries 3 and 4
# and to unbind 2, and watches the unit attention, the rescans and the
# removal.  Sourced by tests/kernel/run.sh.
SUITE_TARGET=iqn.2026-12.org.sbcemu:kvm
SUITE_CONFIG=conglomerate.ini   # sbcemud configuration, next to this file
SUITE_LUNS="0 5 65541 131077"   # LUN 0, the admin LU 5, subsidiaries 5/1 and 5/2
SUITE_CHECKS="conglomerate"
SUITE_ENV=(SBCE_CONG_PLAIN_LUN=0 SBCE_CONG_ADMIN_LUN=5)

# Runs what the guest asks for while it runs (sbce_host_ctl; tests/kernel/run.sh
# guest_requests): the conglomerate check's subsidiary bind / unbind and the
# subsidiaries listing, nothing else.  The words are split without pathname
# expansion ("--initiator *" stays "*").
suite_guest_request() {
	local ctl=("$BUILDDIR/daemon/sbcemuctl" -s "$STATE_DIR/control.sock") w
	read -r -a w <<<"$1"
	case "${w[*]}" in
	"subsidiary bind 5 "[0-9]*" --initiator *" | "subsidiary unbind 5 "[0-9]*" --initiator *" | "subsidiaries 5") ;;
	*)
		echo "refused: not a request of the conglomerate check: $1"
		return 2
		;;
	esac
	"${ctl[@]}" "${w[@]}"
}

# tgt has no conglomerates: the suite does not run against the stand-in.
STANDIN_LUNS=""
STANDIN_SIZES=()
STANDIN_THIN=()
STANDIN_ENV=()
