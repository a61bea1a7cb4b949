# Large swap-in with zswap on (6.12): stock 6.12 swaps in order 0 only, on
# every device, once zswap was ever enabled. With zswap_large on, each
# range decides, on zram and on brd (both SWP_SYNCHRONOUS_IO), for 16K, 64K
# and 1M anonymous folios (6.12 never swaps in the PMD size), every byte
# read back equal and zswap empty after each round:
# (a) folios left to the device (store_<size>kB 0): swapped in whole (the
#     size's swpin counts them, zswpin does not); the feature off: order 0;
# (b) folios stored in zswap whole, load_<size>kB 1: loaded whole (swpin
#     and zswpin count them); load_<size>kB 0: not at that size;
# (c) part written back by the zswap shrinker: the ranges written back
#     whole come from the device whole, the others from zswap, and the
#     shrinker and memcg reclaim keep running while the faults read
#     (writeback between the two decisions; a mixed range reaching the
#     load would WARN, which fails the test);
# (d) swapoff racing the loads, and rmmod during a loop of loads (after
#     it: stock, no large swap-in).
# load_<size>kB: defaults, bad input refused with the old value kept.
# timeout: 1500
. /lib.sh
require_feature zswap_large
mthp_require 16 64 1024
zswap_large_setup
[ -e "$MMTUNE_ZSWAP/load_64kB" ] || fail "no $MMTUNE_ZSWAP/load_64kB"
[ ! -e "$MMTUNE_ZSWAP/load_2048kB" ] || fail "load_2048kB exists, but 6.12 never swaps in 2M folios"

assert_eq "$(mmtune_zswap load_64kB)" 1 "load_64kB default"
assert_eq "$(mmtune_zswap load_128kB)" 0 "load_128kB default"
assert_write_rejected "$MMTUNE_ZSWAP/load_16kB" 2
assert_write_rejected "$MMTUNE_ZSWAP/load_1024kB" yes

# reclaim_step: one memcg reclaim of the swap_integrity cgroups (with the
# zswap shrinker on, it writes zswap entries back to the device).
reclaim_step() {
	for cg in /sys/fs/cgroup/swap_integrity.*; do
		if [ -d "$cg" ]; then echo 256K >"$cg/memory.reclaim" 2>/dev/null || true; fi
	done
}
# reclaim_loop: reclaim steps with the shrinker on, until /tmp/reclaim.stop
# exists (or the test exits).
trap 'touch /tmp/reclaim.stop' EXIT
reclaim_loop() {
	rm -f /tmp/reclaim.stop
	echo Y >$ZSWAP_PARAMS/shrinker_enabled || fail "zswap shrinker_enabled"
	( while [ ! -e /tmp/reclaim.stop ]; do reclaim_step; sleep 0.2; done ) &
	reclaimer=$!
}
reclaim_stop() {
	touch /tmp/reclaim.stop
	wait_pid $reclaimer 60 "reclaim loop"
	echo N >$ZSWAP_PARAMS/shrinker_enabled
}

# device_rounds DEV: (a), (b) and (c) on the swap device that is on.
device_rounds() {
	dev=$1
	for kb in 16 64 1024; do
		# (a) never in zswap: read from the device whole.
		echo 0 >"$MMTUNE_ZSWAP/store_${kb}kB" || fail "store_${kb}kB 0"
		swapin_round $kb $((seed += 1))
		assert_eq "$zswpout" 0 "$dev ${kb}kB store 0: hugepages-${kb}kB zswpout delta"
		assert_ge "$swpin" $((folios * 8 / 10)) "$dev ${kb}kB never in zswap: hugepages-${kb}kB swpin delta (of $folios folios, in whole)"
		assert_eq "$zswpin" 0 "$dev ${kb}kB never in zswap: hugepages-${kb}kB zswpin delta"
		echo 1 >"$MMTUNE_ZSWAP/store_${kb}kB" || fail "store_${kb}kB 1"

		# (b) all in zswap, load on: loaded whole.
		echo 1 >"$MMTUNE_ZSWAP/load_${kb}kB" || fail "load_${kb}kB 1"
		swapin_round $kb $((seed += 1))
		assert_eq "$zswpout" "$folios" "$dev ${kb}kB: hugepages-${kb}kB zswpout delta (stored whole)"
		assert_ge "$zswpin" $((folios * 8 / 10)) "$dev ${kb}kB in zswap, load 1: hugepages-${kb}kB zswpin delta (of $folios, loaded whole)"
		assert_eq "$swpin" "$zswpin" "$dev ${kb}kB in zswap, load 1: hugepages-${kb}kB swpin delta (all from zswap)"
		assert_ge "$(si_delta /tmp/si.out zswpin)" $((zswpin * kb / 4)) "$dev ${kb}kB: vmstat zswpin delta (per page)"

		# (b) load off: not at this size.
		echo 0 >"$MMTUNE_ZSWAP/load_${kb}kB" || fail "load_${kb}kB 0"
		swapin_round $kb $((seed += 1))
		assert_eq "$zswpout" "$folios" "$dev ${kb}kB load 0: hugepages-${kb}kB zswpout delta"
		assert_eq "$swpin" 0 "$dev ${kb}kB in zswap, load 0: hugepages-${kb}kB swpin delta"
		echo 1 >"$MMTUNE_ZSWAP/load_${kb}kB" || fail "load_${kb}kB 1"
	done

	# (c) part written back by the shrinker while held, then read back
	# with the shrinker and memcg reclaim still running. 64 ranges of
	# 1M (16 MiB would be 16): one reclaim step can write back several
	# ranges' worth, and the loop beside the read-back more, and whole
	# ranges must stay in zswap however busy the host is.
	for kb in 64 1024; do
		mib=16
		[ $kb -lt 1024 ] || mib=64
		mthp_only $kb anon
		swap_refresh
		rm -rf /tmp/hold && mkdir /tmp/hold
		w0=$(mthp_stat $kb swpin) z0=$(mthp_stat $kb zswpin)
		swap_integrity --thp --mthp $kb --size $mib --fill compressible --evict pageout \
			--min-out-pct 90 --min-in-pct 0 --hold /tmp/hold --seed $((seed += 1)) >/tmp/mixed.out 2>&1 &
		si=$!
		wait_for /tmp/hold/evicted
		# Two folios' worth written back (the shrinker writes in LRU
		# order, a folio's pages together: at least one whole range).
		wb0=$(vmstat zswpwb) n=0
		echo Y >$ZSWAP_PARAMS/shrinker_enabled || fail "zswap shrinker_enabled"
		while [ $(( $(vmstat zswpwb) - wb0 )) -lt $((kb / 2)) ] && [ $n -lt 400 ]; do
			reclaim_step
			n=$((n + 1))
		done
		echo N >$ZSWAP_PARAMS/shrinker_enabled
		wb=$(( $(vmstat zswpwb) - wb0 ))
		# The written-back pages' swap cache folios out (all the cgroup
		# has in memory; the shrinker is off), so that whole ranges are
		# on the device only; then writeback again beside the faults.
		for cg in /sys/fs/cgroup/swap_integrity.*; do
			if [ -d "$cg" ]; then echo 64M >"$cg/memory.reclaim" 2>/dev/null || true; fi
		done
		reclaim_loop
		touch /tmp/hold/go
		wait_pid $si 300 "$dev ${kb}kB mixed round trip" || { cat /tmp/mixed.out; fail "$dev ${kb}kB mixed: swap round trip failed"; }
		reclaim_stop
		cat /tmp/mixed.out
		folios=$(si_delta /tmp/mixed.out region_folios)
		swpin=$(( $(mthp_stat $kb swpin) - w0 )) zswpin=$(( $(mthp_stat $kb zswpin) - z0 ))
		info "$dev ${kb}kB mixed: $wb pages written back, swpin +$swpin zswpin +$zswpin of $folios folios"
		assert_ge "$wb" $((kb / 2)) "$dev ${kb}kB: vmstat zswpwb delta while held (two folios' worth written back)"
		assert_ge $((swpin - zswpin)) 1 "$dev ${kb}kB written back in part: hugepages-${kb}kB swpin - zswpin (ranges whole from the device)"
		assert_ge "$zswpin" 1 "$dev ${kb}kB written back in part: hugepages-${kb}kB zswpin (ranges whole from zswap)"
		# A page the reclaim stored again during the read-back may stay
		# in the swap cache after the exit, holding its slot and entry
		# until reclaim or swapoff (stock); swapoff then finds every
		# entry (zswap_swapoff() WARNs on one left, failing the test).
		swap_refresh
		assert_eq "$(zswap_stored_pages)" 0 "$dev ${kb}kB mixed: zswap stored_pages after swapoff"
	done
}

# The feature off: stock 6.12, order 0 after zswap was enabled.
seed=60
swapon_zram 512M
echo 0 >"$MMTUNE_ZSWAP/enabled" || fail "zswap_large/enabled 0"
swapin_round 64 $((seed += 1))
assert_eq "$swpin" 0 "zram 64kB, zswap_large off: hugepages-64kB swpin delta (stock: order 0)"
echo 1 >"$MMTUNE_ZSWAP/enabled" || fail "zswap_large/enabled 1"

device_rounds zram
brd=1
if swapon_brd; then device_rounds brd; swapoff /dev/ram0 || fail "swapoff /dev/ram0"; else brd=0; fi

# (d) swapoff racing the whole loads: try_to_unuse() and the faults read
# the same ranges; every byte equal, zswap empty.
mthp_only 64 anon
for s in 1 2 3; do
	swapon_zram 512M
	rm -rf /tmp/hold && mkdir /tmp/hold
	swap_integrity --thp --mthp 64 --size 16 --fill compressible --evict pageout \
		--min-out-pct 90 --hold /tmp/hold --seed $((seed += 1)) >/tmp/held.out 2>&1 &
	si=$!
	wait_for /tmp/hold/evicted
	z0=$(mthp_stat 64 zswpin)
	touch /tmp/hold/go
	swapoff /dev/zram0 || fail "swapoff /dev/zram0 during the loads"
	wait_pid $si 300 "round trip beside swapoff" || { cat /tmp/held.out; fail "swapoff race $s: round trip failed"; }
	info "swapoff race $s: hugepages-64kB zswpin +$(( $(mthp_stat 64 zswpin) - z0 )) beside swapoff"
	assert_eq "$(zswap_stored_pages)" 0 "zswap stored_pages after swapoff race $s"
done

# (d) rmmod during a loop of whole loads: every round equal; after it,
# stock: no large swap-in any more.
swapon_zram 512M
rm -f /tmp/loop.failed /tmp/loop.stop
( for s in 1 2 3 4 5 6; do
	swap_integrity --thp --mthp 64 --size 16 --fill compressible --evict pageout \
		--min-out-pct 50 --seed $((80 + s)) >/tmp/loop.$s.out 2>&1 || touch /tmp/loop.failed
done ) &
loop=$!
assert_grows "hugepages-64kB zswpin during the loop" 120 mthp_stat 64 zswpin
unload_mmtune
sleep 1 # a load decided before the key went off may still be counting
w1=$(mthp_stat 64 swpin) z1=$(mthp_stat 64 zswpin)
wait_pid $loop 600 "the loop of rounds across rmmod"
[ ! -e /tmp/loop.failed ] || { cat /tmp/loop.*.out; fail "a round lost data across rmmod"; }
info "ok: 6 rounds equal across rmmod"
assert_eq "$(mthp_stat 64 zswpin)" "$z1" "hugepages-64kB zswpin after rmmod (stock)"
assert_eq "$(mthp_stat 64 swpin)" "$w1" "hugepages-64kB swpin after rmmod (stock: order 0)"
swapoff_all
[ $brd = 1 ] || skip "zram parts passed; brd not run: /dev/ram0 is under 64 MiB (boot with brd.rd_size=131072)"
