# shellcheck shell=bash
# Kernel test suite "conventional": conventional (SBC-4) logical units of
# several geometries, seen through Linux's sd driver.  Sourced by
# tests/kernel/run.sh.  One VM boot per kernel runs all of SUITE_CHECKS.
SUITE_TARGET=iqn.2026-12.org.sbcemu:kvm
SUITE_CONFIG=conventional.ini   # sbcemud configuration, next to this file
SUITE_LUNS="0 1 2 3"            # the guest waits for all of them
SUITE_CHECKS="identify filesystem discard xcopy"
SUITE_ENV=(SBCE_FS_LUN=0 SBCE_DISCARD_LUN=2 SBCE_XCOPY_LUN=3 SBCE_XCOPY_TO_LUN=2)

# With --stand-in tgt (Debian's tgtd instead of sbcemud, for developing the
# harness): tgt's LUN 0 is its controller, so the disks are LUNs 1 (256 MiB,
# thick) and 2 (128 MiB, thin); their geometry is tgt's, not the file above.
STANDIN_LUNS="1 2"
STANDIN_SIZES=(256M 128M)
STANDIN_THIN=(0 1)
STANDIN_ENV=(SBCE_FS_LUN=1 SBCE_DISCARD_LUN=2)
