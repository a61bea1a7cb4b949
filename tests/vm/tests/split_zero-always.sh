# mode=always also drops zero subpages in splits that are not reclaim (here
# debugfs split_huge_pages); reclaim-only leaves those alone. RssAnon
# follows: a zero-page mapping is not counted (a wrong MM_ANONPAGES would
# also show as "BUG: Bad rss-counter state" on the console at exit).
# tier: check
. /lib.sh
require_feature thp_swap split_zero
thp_always
load_mmtune
split_zero_mode reclaim-only
thp_counters >/tmp/c0
run_sparse /tmp/ts.out --size 32 --dirty 1 --seed 17 --split-debugfs
thps=$(si_delta /tmp/ts.out thps)
assert_ge "$thps" 14 "THPs (of 16)"
assert_ge "$(si_delta /tmp/ts.out thp_split_page)" "$thps" "reclaim-only: THPs split by debugfs"
assert_eq "$(si_delta /tmp/ts.out zero_mapped)" 0 "reclaim-only: subpages mapping the zero page"
assert_eq "$(thp_counter_delta /tmp/c0 splits_scanned)" 0 "reclaim-only: splits scanned"
assert_ge "$(si_delta /tmp/ts.out rss_anon_kib)" $((thps * 2048)) "reclaim-only: RssAnon in KiB after the split (2 MiB per THP)"

split_zero_mode always
thp_counters >/tmp/c0
run_sparse /tmp/ts.out --size 32 --dirty 1 --seed 19 --split-debugfs
thps=$(si_delta /tmp/ts.out thps)
assert_ge "$(thp_counter_delta /tmp/c0 splits_scanned)" "$thps" "always: splits scanned"
assert_ge "$(si_delta /tmp/ts.out zero_mapped)" $((thps * 511)) "always: subpages mapping the zero page"
assert_ge "$(thp_counter_delta /tmp/c0 subpages_dropped)" $((thps * 511)) "always: subpages dropped"
assert_eq "$(thp_counter_delta /tmp/c0 bytes_not_written)" 0 "always: bytes_not_written (not reclaim)"
assert_le "$(si_delta /tmp/ts.out rss_anon_kib)" $((thps * 4 + 4096)) "always: RssAnon in KiB after the split (4 KiB per THP left)"
unload_mmtune

# Never into a VM_LOCKED (mlocked) mapping: the subpages are found zero but
# mapped back, nothing is dropped.
load_mmtune
split_zero_mode always
thp_counters >/tmp/c0
run_sparse /tmp/ts.out --size 16 --dirty 1 --seed 21 --split-debugfs --mlock
assert_ge "$(si_delta /tmp/ts.out thp_split_page)" 7 "mlocked: THPs split by debugfs"
assert_eq "$(si_delta /tmp/ts.out zero_mapped)" 0 "mlocked: subpages mapping the zero page"
assert_eq "$(thp_counter_delta /tmp/c0 zero_ptes_mapped)" 0 "mlocked: split_zero/zero_ptes_mapped delta"
assert_eq "$(thp_counter_delta /tmp/c0 subpages_dropped)" 0 "mlocked: split_zero/subpages_dropped delta"
unload_mmtune
