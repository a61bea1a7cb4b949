# Under a 4K-page swap load the cache serves nearly every slot: hit rate
# >= 95%, one refill per cache_size allocations, frees returned in batches
# of min(cache_size, 64) (a return never runs longer than stock's), the
# drain when the cache is switched off too, and every byte reads back
# equal. At cache_size 512 a
# refill takes two trips to the swap device locks (the kernel's scan stops
# after 256 slots), so round trips per slot stay at 1/256.
# tier: check
. /lib.sh
require_feature swap_slots
swapon_zram 1G
slots_setup 64

# counters NAME...: "name=value" snapshot, for deltas.
snap() { for c in alloc alloc_hit alloc_direct refill refill_slots free free_cached flush flush_slots; do echo "$c=$(slots $c)"; done; }
delta() { echo $(( $(slots $1) - $(awk -F= -v k="$1" '$1 == k { print $2 }' /tmp/snap) )); }

for size in 64 512; do
	echo $size >"$MMTUNE_SLOTS/cache_size" || fail "cache_size $size"
	snap >/tmp/snap
	swap_integrity --no-thp --size 64 --evict pageout --min-out-pct 99 --seed $size >/tmp/si.out ||
		{ cat /tmp/si.out; fail "swap round trip failed at cache_size $size"; }
	cat /tmp/si.out
	pages=$(si_delta /tmp/si.out pswpout)
	alloc=$(delta alloc) hit=$(delta alloc_hit) refill=$(delta refill)
	refill_slots=$(delta refill_slots) direct=$(delta alloc_direct)
	info "cache_size $size: alloc $alloc hit $hit refill $refill refill_slots $refill_slots direct $direct"
	assert_ge "$alloc" "$pages" "allocations through the cache (pages written to swap: $pages)"
	assert_ge $(( hit * 100 / alloc )) 95 "hit rate % at cache_size $size"
	assert_eq "$direct" 0 "direct allocations at cache_size $size"
	# One refill per cache_size slots: refill events = alloc - hits.
	assert_le $(( alloc - hit )) $(( alloc / size + 2 )) "refill events at cache_size $size (alloc / size = $((alloc / size)))"
	# Lock round trips per allocated slot <= 1/min(size, 256).
	per=$size; [ $per -gt 256 ] && per=256
	assert_le $(( refill * per )) "$refill_slots" "refill calls x $per vs slots refilled (round trips per slot <= 1/$per)"
	free=$(delta free) cached=$(delta free_cached) flush=$(delta flush) flush_slots=$(delta flush_slots)
	info "cache_size $size: free $free free_cached $cached flush $flush flush_slots $flush_slots"
	assert_ge "$free" $(( pages * 9 / 10 )) "frees through the cache"
	assert_ge $(( cached * 100 / free )) 95 "% of frees cached"
	batch=$size; [ $batch -gt 64 ] && batch=64
	assert_le $(( flush * batch )) $(( flush_slots + batch * 4 )) "flushes x $batch vs slots flushed (batches of min(cache_size, 64))"
	assert_ge $(( flush * 64 )) "$flush_slots" "returns of at most 64 slots at cache_size $size"
done
# Switching the cache off drains every CPU's cache (cache_size 512, filled
# above) in returns of at most 64 slots, as the free path returns them.
snap >/tmp/snap
echo 0 >"$MMTUNE_SLOTS/enabled"
flush=$(delta flush) flush_slots=$(delta flush_slots)
info "drain on disable: flush $flush flush_slots $flush_slots"
assert_ge "$flush_slots" 64 "slots the drain returned (cache_size 512)"
assert_ge $(( flush * 64 )) "$flush_slots" "drain returns of at most 64 slots ($flush returns)"
assert_eq "$(swap_used /dev/zram0)" 0 "zram slots in use once disabled (nothing left cached)"
unload_mmtune
