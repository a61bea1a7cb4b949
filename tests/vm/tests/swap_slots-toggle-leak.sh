# timeout: 900
# swap_slots switched on while order-0 slots are allocated and freed: the
# kernel drains the stock per-CPU cache after the key went on, and a task
# that tested the key before and was preempted before taking the cache's
# lock must not refill it or add to its free side after that drain (patch
# 0004 tests the key again under alloc_lock and free_lock). Such slots would
# stay in use, SWAP_HAS_CACHE, with no page and no owner, until swapoff.
# 25 cycles: writers swap through the stock cache, a CPU hog preempts them,
# swap_slots goes on in the middle of their round; once they exited, the
# slots in use are exactly the swap cache plus what mmtune's cache holds.
# Each writer swaps 8 MiB through a 4 MiB memcg: still swapping when the
# switch comes (0.1-0.8 s into its round) and twice as quick as 16 MiB
# through 8 (25 cycles took 104 s on the test kernel with those).
# On the debug kernel 6 cycles: there the test is for KASAN and lockdep,
# and 25 cycles took 3400 s.
. /lib.sh
require_feature swap_slots
swapon_zram 1G
load_mmtune
echo 64 >"$MMTUNE_SLOTS/cache_size" || fail "cache_size"
( while :; do :; done ) &
hog=$!
cycles=25
debug_kernel && cycles=6
for i in $(seq $cycles); do
	echo 0 >"$MMTUNE_SLOTS/enabled" || fail "disable swap_slots ($i)"
	for w in 1 2; do
		swap_integrity --no-thp --size 8 --evict memcg-max --limit 4 --min-out-pct 25 \
			--seed $((i * 10 + w)) >/tmp/w$w.out 2>&1 &
		eval "w$w=\$!"
	done
	sleep 0.$((i % 8 + 1))
	echo 1 >"$MMTUNE_SLOTS/enabled" || fail "enable swap_slots ($i)"
	wait "$w1" || { cat /tmp/w1.out; fail "writer 1 lost data ($i)"; }
	wait "$w2" || { cat /tmp/w2.out; fail "writer 2 lost data ($i)"; }
	# Three reads are not one snapshot: a swap cache page freed between
	# them moves its slot into mmtune's cache. A slot left in the stock
	# cache stays until swapoff, so a few tries tell the two apart.
	n=0
	while :; do
		used=$(swap_used /dev/zram0) cached=$(swap_cached) held=$(slots_cached_total)
		[ "$used" -eq $((cached + held)) ] && break
		n=$((n + 1))
		[ $n -ge 50 ] &&
			fail "cycle $i: $used slots in use, swap cache $cached + mmtune's cache $held: $((used - cached - held)) left in the stock cache"
		sleep 0.1
	done
done
kill $hog
info "$cycles switches on during swap-out: slots in use = swap cache + mmtune's cache after each"
unload_mmtune
assert_eq "$(swap_used /dev/zram0)" "$(swap_cached)" "slots in use after rmmod (= swap cache)"
swapoff_all
