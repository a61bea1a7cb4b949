# The soft-dirty bit of every subpage survives the zero-page remap
# (/proc/self/pagemap bit 55) and clear_refs still clears it. Skipped on a
# kernel without CONFIG_MEM_SOFT_DIRTY.
# tier: check
. /lib.sh
require_feature thp_swap split_zero
thp_setup zram adaptive reclaim-only
run_sparse /tmp/ts.out --size 16 --dirty 1 --seed 23 --soft-dirty
thps=$(si_delta /tmp/ts.out thps)
assert_ge "$(si_delta /tmp/ts.out zero_mapped)" $((thps * 511)) "subpages mapping the zero page"
assert_eq "$(si_delta /tmp/ts.out soft_dirty)" "$(si_delta /tmp/ts.out pages)" "soft-dirty subpages after the pageout"
unload_mmtune
