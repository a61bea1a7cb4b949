# The patched kernel without the module swaps folios of every size to the
# virtio disk byte for byte: 16K, 64K and 2M folios (mTHP), anonymous and
# shmem, paged out whole (MADV_PAGEOUT; the size's swpout counts them, the
# kernel's split fallback does not) and read back equal. Kernels without
# these sizes skip (6.1 has PMD THPs only: integrity-stock-disk and -zram).
# timeout: 600
. /lib.sh
mthp_require 16 64 2048
swapon_disk
mthp_integrity disk
swapoff_all
