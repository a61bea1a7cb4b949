# zswap entry allocation failures inside whole-folio stores of 64K and 2M
# folios (kernels with mTHP, 6.12; zswap_large on, zsmalloc), as zswap_large-fault-injection
# does for 6.1's THPs: a folio whose store fails part-way is rolled back
# (every stored page invalidated, counted as rollback_nomem) and goes to
# the disk whole (the size's swpout); after a failure, large folios skip
# zswap for backoff_ms (backoff_skipped); every byte reads back equal;
# after swapoff zswap holds nothing, and kmemleak (debug kernel) finds
# nothing new. Failures are injected only into the task that pages the
# folios out, during its MADV_PAGEOUT (swap_integrity --fail-evict,
# task-filter), into zswap's entry cache (failslab cache-filter, with
# "slub_debug=A,zswap_entry" on the command line as tests/vm/check-debug.sh
# puts it; else every slab allocation of the task).
# Debug kernel only ("make check-debug"); skips on a kernel without fault
# injection.
# timeout: 600
. /lib.sh
require_feature zswap_large
mthp_require 64 2048
fault_require
zswap_fault_setup
counters="thp_stored subpages_rolled_back rollback_nomem backoff_skipped fallback_disk"

# round KB NAME SEED: 32 MiB of KB folios paged out with failures armed.
round() {
	info "--- ${1}kB: $2"
	# shellcheck disable=SC2086 # one counter per word
	zswap_snap $counters
	fault_quiet_begin
	mthp_only "$1" anon
	swap_integrity --thp --mthp "$1" --size 32 --fill compressible --evict pageout --fail-evict \
		--min-out-pct 50 --seed "$3" >/tmp/si.out 2>&1
	rc=$?
	fault_quiet_end
	fault_check_log
	cat /tmp/si.out
	[ $rc -eq 0 ] || fail "${1}kB, $2: swap round trip failed (exit $rc)"
	# shellcheck disable=SC2086
	info "${1}kB, $2: $(zswap_deltas $counters)"
}

# 1. Every 700th zswap entry fails: stores fail part-way, roll back, and
# those folios go to the disk whole.
for kb in 64 2048; do
	failslab_zswap_entry
	fault_arm $FAILSLAB 100 700
	round $kb "failslab every 700th: $what" $((300 + kb))
	assert_ge "$(fault_injected $FAILSLAB)" 1 "${kb}kB: slab allocations failed"
	assert_ge "$(zswap_delta rollback_nomem)" 1 "${kb}kB: zswap_large/rollback_nomem delta"
	assert_ge "$(zswap_delta subpages_rolled_back)" 1 "${kb}kB: subpages rolled back (stores failed part-way)"
	assert_ge "$(si_delta /tmp/si.out mthp_swpout)" "$(zswap_delta rollback_nomem)" "${kb}kB: hugepages-${kb}kB swpout delta (rolled-back folios to the disk whole)"
	assert_ge "$(zswap_delta thp_stored)" 1 "${kb}kB: folios still stored whole between failures"
	fault_reset
done

# 2. Back-off: every zswap entry allocation fails; the first failure backs
# off for 60 s, so the folios after it do not even try.
echo 60000 >"$MMTUNE_ZSWAP/backoff_ms" || fail "backoff_ms 60000"
failslab_zswap_entry
fault_arm $FAILSLAB 100
round 64 "back-off: every allocation fails, $what" 401
folios=$(si_delta /tmp/si.out region_folios)
assert_ge "$(zswap_delta rollback_nomem)" 1 "back-off: zswap_large/rollback_nomem delta"
assert_ge "$(zswap_delta backoff_skipped)" $(( folios - $(zswap_delta rollback_nomem) - 1 )) "back-off: zswap_large/backoff_skipped delta (folios after the failure)"
assert_eq "$(zswap_delta thp_stored)" 0 "back-off: zswap_large/thp_stored delta"
fault_reset

swapoff /dev/vda || fail "swapoff"
assert_eq "$(zswap_stored_pages)" 0 "zswap stored_pages after swapoff"
unload_mmtune
zswap_disable
kmemleak_check "zswap mTHP fault injection"
