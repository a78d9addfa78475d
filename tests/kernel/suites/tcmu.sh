# shellcheck shell=bash
# Kernel test suite "tcmu": sbcemud's TCMU front end behind LIO in the guest's
# own kernel.  The guest mounts the host's root over 9p and chroots into it
# (sbce_host_chroot), so targetcli, dbus-daemon, tcmu-runner and the freshly
# built sbcemud run there as they are; targetcli creates user:sbcemu
# backstores, tcm_loop puts them in front of the guest's sd driver.
# Sourced by tests/kernel/run.sh.  docs/tcmu.md.
SUITE_TARGET=none
SUITE_CONFIG=tcmu.ini           # the guest's sbcemud configuration, next to this file
SUITE_LUNS=""
SUITE_CHECKS="tcmu tcmu_restart"
# The comparison with tcmu-runner (docs/performance.md) takes 100 s a kernel:
# it runs on the kernels named in SBCE_TCMU_RUNNER_KERNELS (default 6.1,
# Debian 12's own; "all" for every kernel), so the test command keeps within
# its time.  run_suite has set $kernel.
case " ${SBCE_TCMU_RUNNER_KERNELS:-6.1} " in
*" all "* | *" ${kernel:-} "*) SUITE_CHECKS="$SUITE_CHECKS tcmu_runner" ;;
esac
SUITE_HOST_ROOT=1
SUITE_MODULES="configfs target_core_mod target_core_user tcm_loop iscsi_target_mod uio sd_mod sg"
SUITE_MEMORY=2048
SUITE_PROGRAMS="rwf_atomic"
SUITE_ENV=(SBCE_TCMU_CONFIG="$HERE/suites/tcmu.ini")

# tgt has no TCMU: the suite does not run against the stand-in.
STANDIN_LUNS=""
STANDIN_SIZES=()
STANDIN_THIN=()
STANDIN_ENV=()
