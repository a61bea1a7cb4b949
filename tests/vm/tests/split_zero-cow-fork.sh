# Zero-page mappings left by the best case behave: a write to one gets a
# fresh page (copy on write) and the shared zero page stays zero; after
# fork the child reads the same data, its writes to zero-page subpages do
# not show in the parent, and the parent's data reads back intact.
# tier: check
. /lib.sh
require_feature thp_swap split_zero
thp_setup zram adaptive reclaim-only
run_sparse /tmp/ts.out --size 32 --dirty 2 --offset 123 --seed 13 --cow --fork
thps=$(si_delta /tmp/ts.out thps)
assert_ge "$(si_delta /tmp/ts.out zero_mapped)" $((thps * 510)) "subpages mapping the zero page before the writes"
grep -q "cow: wrote 64 zero-page subpages" /tmp/ts.out || fail "no copy-on-write round"
grep -q "fork: the child read its data" /tmp/ts.out || fail "no fork round"
unload_mmtune
