# shellcheck shell=bash
# Kernel test suite "cdl": command duration limits (SPC-6) and the media
# latency model seen through Linux's sd over iSCSI: cdl_supported, the T2A
# page written with MODE SELECT through sg, and reads whose I/O priority
# hint becomes DLD, ending as the descriptors' policies say (ETIME for
# abort).  Linux 6.1 has no CDL: the check records its absence.  Sourced by
# tests/kernel/run.sh.  docs/latency.md.
SUITE_TARGET=iqn.2026-12.org.sbcemu:kvm
SUITE_CONFIG=cdl.ini            # sbcemud configuration, next to this file
SUITE_LUNS="0"
SUITE_CHECKS="cdl"
SUITE_PROGRAMS="cdl_io"         # tests/kernel/guest/*.c, built static
SUITE_ENV=(SBCE_CDL_LUN=0)

# tgt has no command duration limits: the suite does not run against the stand-in.
STANDIN_LUNS=""
STANDIN_SIZES=()
STANDIN_THIN=()
STANDIN_ENV=()
