# shellcheck shell=bash
# Kernel test suite "zbc": a host-managed zoned logical unit seen through
# Linux's sd_zbc (queue/zoned, chunk_sectors, nr_zones, blkzone, fio
# --zonemode=zbd), and a host-aware one (a zoned disk for 6.1, a regular
# disk for 6.10 and later), and a ZBC-2 zone domains one (REPORT ZONE
# DOMAINS, REPORT REALMS, ZONE ACTIVATE(16) through sg, as libzbc encodes
# them).  Sourced by tests/kernel/run.sh.  docs/zbc.md.
SUITE_TARGET=iqn.2026-12.org.sbcemu:kvm
SUITE_CONFIG=zbc.ini            # sbcemud configuration, next to this file
SUITE_LUNS="0 1 2"
SUITE_CHECKS="zbc zbc_ha zbc_zd"
SUITE_ENV=(SBCE_ZBC_LUN=0 SBCE_ZBC_HA_LUN=1 SBCE_ZBC_ZD_LUN=2)

# tgt has no zoned LUs: the suite does not run against the stand-in.
STANDIN_LUNS=""
STANDIN_SIZES=()
STANDIN_THIN=()
STANDIN_ENV=()
