# mode=always also drops zero subpages in splits that are not reclaim (here
# debugfs split_huge_pages); reclaim-only leaves those alone. RSS follows:
# a zero-page mapping is not counted.
. /lib.sh
thp_always
load_mmtune
echo reclaim-only >"$MMTUNE_SZ/mode"
thp_counters >/tmp/c0
run_sparse /tmp/ts.out --size 32 --dirty 1 --seed 17 --split-debugfs
thps=$(si_delta /tmp/ts.out thps)
assert_ge "$thps" 14 "THPs (of 16)"
assert_ge "$(si_delta /tmp/ts.out thp_split_page)" "$thps" "reclaim-only: THPs split by debugfs"
assert_eq "$(si_delta /tmp/ts.out zero_mapped)" 0 "reclaim-only: subpages mapping the zero page"
assert_eq "$(thp_counter_delta /tmp/c0 splits_scanned)" 0 "reclaim-only: splits scanned"

echo always >"$MMTUNE_SZ/mode"
thp_counters >/tmp/c0
run_sparse /tmp/ts.out --size 32 --dirty 1 --seed 19 --split-debugfs
thps=$(si_delta /tmp/ts.out thps)
assert_ge "$(thp_counter_delta /tmp/c0 splits_scanned)" "$thps" "always: splits scanned"
assert_ge "$(si_delta /tmp/ts.out zero_mapped)" $((thps * 511)) "always: subpages mapping the zero page"
assert_ge "$(thp_counter_delta /tmp/c0 subpages_dropped)" $((thps * 511)) "always: subpages dropped"
assert_eq "$(thp_counter_delta /tmp/c0 bytes_not_written)" 0 "always: bytes_not_written (not reclaim)"
unload_mmtune
