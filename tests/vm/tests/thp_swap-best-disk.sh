# Best case on the (non-rotational) virtio disk: as thp_swap-best-zram.
. /lib.sh
require_feature thp_swap split_zero
thp_best_case disk
unload_mmtune
