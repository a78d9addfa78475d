# Guest check "tcmu_restart" of the kernel suite "tcmu": runs in the host's root
# (sbce_host_chroot); the work is in tests/kernel/chroot/tcmu_restart.sh.
export SBCE_CHECK
sbce_host_chroot /bin/bash "$SBCE_REPO/tests/kernel/chroot/tcmu_restart.sh"
