# Slot-cache refill failure (swap_slots on, disk swap): a refill that gets
# no slot from the devices falls back to one slot straight from them
# (alloc_direct), the data reads back equal, swapoff succeeds, and no slot
# is leaked: once the group is off, the device's used slots are 0.
# The refill takes slots, not memory (the caches are allocated at load, so
# that a refill never allocates): its failure is injected with mmtune's
# own fault attribute, debugfs fail_mmtune_slots_refill (built with
# CONFIG_FAULT_INJECTION_DEBUG_FS), which makes get_swap_pages_batch()
# look empty. Then the allocations right after a slot is taken fail
# (failslab and fail_page_alloc without reclaim: swap cache insertion),
# which hands the slot back through the cache's free side.
# Failures are injected only into the task that pages out, and only during
# its MADV_PAGEOUT (swap_integrity --fail-evict, task-filter).
# Debug kernel only ("make check-debug"); skips on a kernel without fault
# injection.
# timeout: 600
. /lib.sh
require_feature swap_slots
fault_require
swapon_disk
slots_setup 64
[ -d "$FAIL_REFILL" ] || fail "mmtune.ko built against a fault injection kernel has no $FAIL_REFILL"
fault_reset
kmemleak_begin

snap() { for c in alloc alloc_hit alloc_direct refill refill_slots free free_cached; do echo "$c=$(slots $c)"; done >/tmp/snap; }
delta() { echo $(( $(slots $1) - $(awk -F= -v k="$1" '$1 == k { print $2 }' /tmp/snap) )); }

# round NAME SEED: 32 MiB of 4K pages out and back with failures while
# paging out.
round() {
	info "--- $1"
	snap
	fault_quiet_begin
	swap_integrity --no-thp --size 32 --evict pageout --fail-evict --min-out-pct "${3:-90}" \
		--seed "$2" >/tmp/si.out 2>&1 || { fault_quiet_end; cat /tmp/si.out; fail "$1: swap round trip failed"; }
	fault_quiet_end
	fault_check_log
	cat /tmp/si.out
	pages=$(si_delta /tmp/si.out pswpout)
	info "$1: $(for c in alloc alloc_hit alloc_direct refill refill_slots free free_cached; do printf '%s +%s ' $c "$(delta $c)"; done)"
}

# 1. Every refill fails: every slot comes straight from the device.
fault_arm $FAIL_REFILL 100
round "1. every refill fails" 691
assert_ge "$(fault_injected $FAIL_REFILL)" "$pages" "1: refills failed"
assert_ge "$(delta alloc_direct)" "$pages" "1: swap_slots/alloc_direct delta (pages written: $pages)"
assert_ge "$(delta refill)" "$pages" "1: swap_slots/refill delta (one failed refill per allocation)"
# The counters are global, the failures only the paging task's during
# its MADV_PAGEOUT: a slot taken outside that (two debug-kernel runs: alloc
# +8194 for 8192 pages written, exactly one refill not failed, 64 slots,
# one hit) refills normally. So: slots only from the refills that were
# not failed, hits only from those slots, and the paging task's own
# allocations all went direct (above).
ok_refills=$(( $(delta refill) - $(fault_injected $FAIL_REFILL) ))
info "1: refills not failed (other tasks'): $ok_refills"
assert_le "$(delta refill_slots)" $((ok_refills * 64)) "1: swap_slots/refill_slots delta (64 at most per refill that was not failed)"
assert_le "$(delta alloc_hit)" "$(delta refill_slots)" "1: swap_slots/alloc_hit delta (hits only from slots those refills brought)"
assert_le "$ok_refills" 8 "1: refills not failed (a few of other tasks', not the paging task's)"

# 2. Every third refill fails: the cache serves between failures.
fault_arm $FAIL_REFILL 100 3
round "2. every third refill fails" 692
assert_ge "$(fault_injected $FAIL_REFILL)" 1 "2: refills failed"
assert_ge "$(delta alloc_direct)" 1 "2: swap_slots/alloc_direct delta"
assert_ge "$(delta alloc_hit)" 1 "2: swap_slots/alloc_hit delta"
assert_ge "$(delta refill_slots)" 1 "2: swap_slots/refill_slots delta"
assert_ge "$(( $(delta alloc_hit) + $(delta alloc_direct) ))" "$(( pages * 9 / 10 ))" "2: hits + direct allocations (pages written: $pages)"
fault_reset

# 3. Allocations without reclaim fail after the slot is taken (swap cache
# insertion): the slot goes back through the free side; some pages stay
# in memory, none is lost.
fault_arm $FAILSLAB 20
echo 0 >$FAIL_PAGE_ALLOC/min-order
echo N >$FAIL_PAGE_ALLOC/ignore-gfp-highmem
fault_arm $FAIL_PAGE_ALLOC 20
round "3. failslab and fail_page_alloc (no reclaim) at 20%" 693 10
info "3: slab allocations failed: $(fault_injected $FAILSLAB), page allocations failed: $(fault_injected $FAIL_PAGE_ALLOC)"
assert_ge "$(delta alloc)" 1 "3: swap_slots/alloc delta"
fault_reset

# swapoff with the group on (its drain hook empties the cache).
timeout 60 swapoff /dev/vda || fail "swapoff /dev/vda with swap_slots on"
swapon /dev/vda || fail "swapon /dev/vda"
fault_arm $FAIL_REFILL 100 2
round "4. every other refill fails, then the group goes off" 694
assert_ge "$(fault_injected $FAIL_REFILL)" 1 "4: refills failed"
fault_reset
echo 0 >"$MMTUNE_SLOTS/enabled" || fail "disable swap_slots"
assert_eq "$(swap_used /dev/vda)" 0 "/dev/vda slots in use once the group is off (no slot leaked)"
timeout 60 swapoff /dev/vda || fail "swapoff /dev/vda"
unload_mmtune
kmemleak_check "swap_slots fault injection"
