# shellcheck shell=bash
# Kernel test suite "atomic": atomic writes seen through Linux's sd (6.11 and
# later: queue/atomic_write_* from the Block Limits VPD atomic fields, and
# pwritev2(RWF_ATOMIC) arriving as WRITE ATOMIC(16)); on 6.1, their absence.
# Sourced by tests/kernel/run.sh.  docs/atomic.md.
SUITE_TARGET=iqn.2026-12.org.sbcemu:kvm
SUITE_CONFIG=atomic.ini         # sbcemud configuration, next to this file
SUITE_LUNS="0"
SUITE_CHECKS="atomic untorn"
SUITE_PROGRAMS="rwf_atomic be_untorn" # tests/kernel/guest/*.c, built static
SUITE_ENV=(SBCE_ATOMIC_LUN=0)

# tgt has no atomic writes: the suite does not run against the stand-in.
STANDIN_LUNS=""
STANDIN_SIZES=()
STANDIN_THIN=()
STANDIN_ENV=()
