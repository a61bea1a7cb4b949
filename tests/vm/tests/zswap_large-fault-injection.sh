# zswap entry and zsmalloc allocation failures inside a whole-THP store
# (zswap_large on, zsmalloc): a THP whose store fails part-way is rolled
# back (every stored subpage invalidated, counted as rollback_nomem) and
# goes to the disk whole; after an allocation failure large folios skip
# zswap for backoff_ms (backoff_skipped); every byte reads back equal; after
# swapoff zswap holds nothing (stored_pages and pool_total_size 0), and
# kmemleak (debug kernel) finds nothing new.
# Failures are injected only into the task that pages the THPs out, and
# only during its MADV_PAGEOUT (swap_integrity --fail-evict, task-filter):
#  1. failslab every Nth allocation: zswap's entries (only that cache when
#     the kernel command line marks it, "slub_debug=A,zswap_entry", as
#     tests/vm/check-debug.sh does; else every slab allocation);
#  2. fail_page_alloc and failslab on allocations that cannot reclaim:
#     zsmalloc's zspage pages, handles and zspage descriptors;
#  3. every zswap entry allocation fails, backoff_ms 60000: one THP is
#     rolled back and the later ones skip zswap.
# Debug kernel only ("make check-debug"); skips on a kernel without fault
# injection.
# timeout: 600
. /lib.sh
require_feature zswap_large
fault_require
zswap_fault_setup
counters="thp_stored subpages_stored subpages_rolled_back rollback_nomem backoff_skipped fallback_disk reject_kmemcache_fail reject_alloc_fail"

# round NAME SEED [held]: one 32 MiB THP round with failures while paging
# out. "held": the process holds before reading back, while this script
# takes the device away (swapoff must find every entry that survived the
# rollbacks and nothing else), then lets it compare.
round() {
	info "--- $1"
	# shellcheck disable=SC2086 # one counter per word
	zswap_snap $counters
	rm -rf /tmp/hold && mkdir /tmp/hold
	[ "${3:-}" = held ] || touch /tmp/hold/go
	fault_quiet_begin
	swap_integrity --size 32 --thp --fill compressible --evict pageout --fail-evict \
		--hold /tmp/hold --min-out-pct 50 --seed "$2" >/tmp/si.out 2>&1 &
	si=$!
	wait_for /tmp/hold/evicted
	fault_quiet_end
	if [ "${3:-}" = held ]; then
		stored=$(zswap_stored_pages)
		assert_ge "$stored" 1 "$1: zswap stored_pages while the process holds"
		timeout 120 swapoff /dev/vda || fail "$1: swapoff with the process's pages in zswap and on the disk"
		assert_eq "$(zswap_stored_pages)" 0 "$1: zswap stored_pages after swapoff"
		touch /tmp/hold/go
	fi
	wait $si || { cat /tmp/si.out; fail "$1: swap round trip failed"; }
	fault_check_log
	cat /tmp/si.out
	thps=$(si_delta /tmp/si.out thps)
	assert_ge "$thps" 14 "$1: THPs backing the 32 MiB region (of 16)"
	# shellcheck disable=SC2086
	info "$1: $(zswap_deltas $counters)"
}

# 1. zswap entries.
failslab_zswap_entry
fault_arm $FAILSLAB 100 700
round "1. failslab every 700th: $what" 381
assert_ge "$(fault_injected $FAILSLAB)" 1 "1: slab allocations failed"
assert_ge "$(zswap_delta rollback_nomem)" 1 "1: zswap_large/rollback_nomem delta"
assert_ge "$(zswap_delta subpages_rolled_back)" 1 "1: subpages rolled back (stores failed part-way)"
assert_ge "$(zswap_delta reject_kmemcache_fail)" 1 "1: zswap reject_kmemcache_fail delta (entry allocations failed)"
assert_ge "$(zswap_delta fallback_disk)" "$(zswap_delta rollback_nomem)" "1: zswap_large/fallback_disk delta"
assert_ge "$(si_delta /tmp/si.out thp_swpout)" "$(zswap_delta rollback_nomem)" "1: vmstat thp_swpout delta (rolled-back THPs to disk whole)"
fault_reset

# 2. zsmalloc: pages (fail_page_alloc), handles and zspage descriptors
# (failslab); only allocations that cannot reclaim, as zsmalloc's.
echo N >$FAIL_PAGE_ALLOC/ignore-gfp-highmem
echo 0 >$FAIL_PAGE_ALLOC/min-order
fault_arm $FAIL_PAGE_ALLOC 100 400
fault_arm $FAILSLAB 100 3000
round "2. zsmalloc: fail_page_alloc every 400th, failslab every 3000th (no reclaim)" 382 held
info "2: page allocations failed: $(fault_injected $FAIL_PAGE_ALLOC), slab allocations failed: $(fault_injected $FAILSLAB)"
assert_ge "$(( $(fault_injected $FAIL_PAGE_ALLOC) + $(fault_injected $FAILSLAB) ))" 1 "2: allocations failed"
assert_ge "$(zswap_delta rollback_nomem)" 1 "2: zswap_large/rollback_nomem delta"
assert_ge "$(zswap_delta subpages_rolled_back)" 1 "2: subpages rolled back (stores failed part-way)"
assert_ge "$(zswap_delta reject_alloc_fail)" 1 "2: zswap reject_alloc_fail delta (zsmalloc allocations failed)"
assert_ge "$(si_delta /tmp/si.out thp_swpout)" "$(zswap_delta rollback_nomem)" "2: vmstat thp_swpout delta (rolled-back THPs to disk whole)"
fault_reset
swapon_disk

# 3. Back-off: every zswap entry allocation fails; the first failure
# backs off for 60 s, so the THPs after it do not even try. Only zswap's
# entry cache fails (cache-filter, as in round 1): failing every page
# allocation of the task, as this round first did, also failed the swap
# cache's xarray nodes now and then, so THPs could not go to the disk
# either (x86_64 has no stack filter to fail zsmalloc's pages alone).
echo 60000 >"$MMTUNE_ZSWAP/backoff_ms" || fail "backoff_ms 60000"
failslab_zswap_entry
fault_arm $FAILSLAB 100
round "3. back-off: every allocation fails, $what" 383
assert_ge "$(fault_injected $FAILSLAB)" 1 "3: slab allocations failed"
assert_ge "$(zswap_delta rollback_nomem)" 1 "3: zswap_large/rollback_nomem delta"
assert_ge "$(zswap_delta backoff_skipped)" $(( thps - $(zswap_delta rollback_nomem) - 1 )) "3: zswap_large/backoff_skipped delta (THPs after the failure)"
assert_eq "$(zswap_delta thp_stored)" 0 "3: zswap_large/thp_stored delta"
assert_eq "$(zswap_delta fallback_disk)" "$(( $(zswap_delta rollback_nomem) + $(zswap_delta backoff_skipped) ))" "3: fallback_disk = rollbacks + skipped"
fault_reset

# Nothing of the rolled-back stores is left in zswap.
swapoff /dev/vda || fail "swapoff"
assert_eq "$(zswap_stored_pages)" 0 "zswap stored_pages after swapoff"
assert_eq "$(zswap_counter pool_total_size)" 0 "zswap pool_total_size after swapoff"
unload_mmtune
zswap_disable
kmemleak_check "zswap fault injection"
