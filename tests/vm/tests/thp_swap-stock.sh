# Off means stock. The best case (one dirty subpage per THP) without the
# module, and with it loaded at policy=whole mode=never: every THP goes to
# swap whole and all its subpages are written. policy=split without zero
# detection: THPs split, zero subpages written too. policy=whole with zero
# detection: nothing is split, so nothing is dropped (the two work together).
. /lib.sh
require_feature thp_swap split_zero
sparse_round() {	# NAME: one best-case round, checks common to all
	run_sparse /tmp/ts.out --size 32 --dirty 1 --seed 9
	thps=$(si_delta /tmp/ts.out thps)
	assert_ge "$thps" 14 "$1: THPs (of 16)"
	assert_eq "$(si_delta /tmp/ts.out zero_mapped)" 0 "$1: subpages mapping the zero page"
	assert_ge "$(si_delta /tmp/ts.out pswpout)" $((thps * 512)) "$1: vmstat pswpout delta (all subpages written)"
}

thp_setup zram
assert_hooks_idle
sparse_round "no module"
assert_eq "$(si_delta /tmp/ts.out thp_swpout)" "$thps" "no module: thp_swpout delta"

thp_setup zram whole never
thp_counters >/tmp/c0
assert_eq "$(hooks_state thp_swap) $(hooks_state split_zero)" "off off" "keys with whole/never"
sparse_round "whole/never"
assert_eq "$(si_delta /tmp/ts.out thp_swpout)" "$thps" "whole/never: thp_swpout delta"
for c in thp_whole thp_split subpages_scanned; do
	assert_eq "$(thp_counter_delta /tmp/c0 $c)" 0 "whole/never: $c delta (hooks off)"
done
unload_mmtune

thp_setup zram split never
thp_counters >/tmp/c0
sparse_round "split/never"
assert_eq "$(si_delta /tmp/ts.out thp_swpout)" 0 "split/never: thp_swpout delta"
assert_eq "$(thp_counter_delta /tmp/c0 thp_split)" "$thps" "split/never: thp_split delta"
unload_mmtune

thp_setup zram whole reclaim-only
thp_counters >/tmp/c0
sparse_round "whole/reclaim-only"
assert_eq "$(si_delta /tmp/ts.out thp_swpout)" "$thps" "whole/reclaim-only: thp_swpout delta"
assert_eq "$(thp_counter_delta /tmp/c0 splits_scanned)" 0 "whole/reclaim-only: splits scanned"
unload_mmtune
