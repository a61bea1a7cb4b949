# Best case on the (non-rotational) virtio disk: as test 51.
. /lib.sh
thp_best_case disk
unload_mmtune
