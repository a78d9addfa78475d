# shellcheck shell=bash
# Kernel test suite "pi": T10 protection information seen through Linux's sd
# over iSCSI (which is not a DIF-capable transport, so sd reports the format
# and leaves PI to the device): READ CAPACITY(16) PROT_EN / P_TYPE and INQUIRY
# PROTECT as sg3_utils decodes them, sd's "DIF Type N" log line, data written
# through the block device getting a correct tuple (read back with RDPROTECT
# 001b through sg), and faults injected with pi_faults reaching the host as
# I/O errors with the guard / reference tag sense.  Sourced by
# tests/kernel/run.sh.  docs/pi.md.
SUITE_TARGET=iqn.2026-12.org.sbcemu:kvm
SUITE_CONFIG=pi.ini             # sbcemud configuration, next to this file
SUITE_LUNS="0 1"
SUITE_CHECKS="pi"
SUITE_ENV=(SBCE_PI_LUN=0 SBCE_PI_T3_LUN=1)

# tgt has no protection information: the suite does not run against the stand-in.
STANDIN_LUNS=""
STANDIN_SIZES=()
STANDIN_THIN=()
STANDIN_ENV=()
