# Migration keeps the data of THPs with zero subpages intact: a whole THP
# with 511 zero subpages, and THPs split with mode=always (zero page mapped
# for the zero subpages) then migrated. move_pages() to node 1 when the
# guest has two nodes, compaction otherwise.
# tier: check
. /lib.sh
require_feature split_zero
thp_always
load_mmtune
split_zero_mode always
run_sparse /tmp/ts.out --size 32 --dirty 1 --seed 29 --no-pageout --migrate
run_sparse /tmp/ts.out --size 32 --dirty 3 --offset 2048 --seed 31 --split-debugfs --migrate
thps=$(si_delta /tmp/ts.out thps)
assert_ge "$(si_delta /tmp/ts.out zero_mapped)" $((thps * 509)) "split THPs: subpages mapping the zero page before migrating"
unload_mmtune
