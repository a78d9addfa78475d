# shellcheck shell=sh
# Guest check "untorn": sbcemu's file backend on the guest's view of an
# atomic-capable LU (the be_untorn program, tests/kernel/guest/be_untorn.c).
# On Linux 6.11 and later, sd derives atomic write limits from the Block
# Limits VPD page, statx reports them on the block device, and write_atomic
# takes the untorn fast path (pwritev2 RWF_ATOMIC, arriving at sbcemud as
# WRITE ATOMIC(16)); a write larger than the unit uses the intent log.  On
# 6.1 there are no untorn writes and both use the intent log.  The host
# compares (tests/kernel/host/untorn.sh).  LUN: SBCE_ATOMIC_LUN.

l=${SBCE_ATOMIC_LUN:-${SBCE_LUN_LIST%% *}}
dev=$(sbce_lun_var DEV "$l")
[ -n "$dev" ] || sbce_fail "LUN $l has no disk"
sbce_value lun "$l"
sbce_value kernel "$(uname -r)"
# 16 MiB into the LU, away from what the "atomic" check writes.
sbce_value offset 16777216
sbce_value result "$(be_untorn "$dev" 16777216)"
