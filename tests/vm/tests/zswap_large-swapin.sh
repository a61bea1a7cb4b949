# Large swap-in with zswap on (6.12): stock 6.12 swaps in order 0 only, on
# every device, once zswap was ever enabled. With zswap_large on, each
# range decides, on zram and on brd (both SWP_SYNCHRONOUS_IO), for 16K, 64K
# and 2M anonymous folios, every byte read back equal:
# (a) folios left to the device (store_<size>kB 0): swapped in whole (the
#     size's swpin counts them, zswpin does not); the feature off: order 0;
# (b) folios stored in zswap whole, load_<size>kB 1: loaded whole (swpin
#     and zswpin count them); load_<size>kB 0: order 0;
# (c) ranges part written back by the zswap shrinker: order 0 for those;
# (d) swapoff while the folios are out, and rmmod during a loop of loads.
# load_<size>kB: defaults, bad input refused with the old value kept.
# timeout: 1500
. /lib.sh
require_feature zswap_large
mthp_require 16 64 2048
zswap_large_setup
[ -e "$MMTUNE_ZSWAP/load_64kB" ] || fail "no $MMTUNE_ZSWAP/load_64kB"

assert_eq "$(mmtune_zswap load_64kB)" 1 "load_64kB default"
assert_eq "$(mmtune_zswap load_128kB)" 0 "load_128kB default"
assert_write_rejected "$MMTUNE_ZSWAP/load_16kB" 2
assert_write_rejected "$MMTUNE_ZSWAP/load_2048kB" yes

# device_rounds DEV: (a), (b) and (c) on the swap device that is on.
device_rounds() {
	dev=$1
	for kb in 16 64 2048; do
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

		# (b) load off: order 0 from zswap, page by page.
		echo 0 >"$MMTUNE_ZSWAP/load_${kb}kB" || fail "load_${kb}kB 0"
		swapin_round $kb $((seed += 1))
		assert_eq "$zswpout" "$folios" "$dev ${kb}kB load 0: hugepages-${kb}kB zswpout delta"
		assert_eq "$swpin" 0 "$dev ${kb}kB in zswap, load 0: hugepages-${kb}kB swpin delta"
		echo 1 >"$MMTUNE_ZSWAP/load_${kb}kB" || fail "load_${kb}kB 1"
	done

	# (c) mixed ranges: the zswap shrinker writes part back while held.
	for kb in 64 2048; do
		mthp_only $kb anon
		swap_refresh
		rm -rf /tmp/hold && mkdir /tmp/hold
		w0=$(mthp_stat $kb swpin) z0=$(mthp_stat $kb zswpin)
		swap_integrity --thp --mthp $kb --size 16 --fill compressible --evict pageout \
			--min-out-pct 90 --hold /tmp/hold --seed $((seed += 1)) >/tmp/mixed.out 2>&1 &
		si=$!
		wait_for /tmp/hold/evicted
		wb0=$(vmstat zswpwb) n=0
		echo Y >$ZSWAP_PARAMS/shrinker_enabled || fail "zswap shrinker_enabled"
		while [ $(( $(vmstat zswpwb) - wb0 )) -lt 1024 ] && [ $n -lt 100 ]; do
			for cg in /sys/fs/cgroup/swap_integrity.*; do echo 1M >"$cg/memory.reclaim" 2>/dev/null; done
			n=$((n + 1))
		done
		echo N >$ZSWAP_PARAMS/shrinker_enabled
		wb=$(( $(vmstat zswpwb) - wb0 ))
		touch /tmp/hold/go
		wait $si || { cat /tmp/mixed.out; fail "$dev ${kb}kB mixed: swap round trip failed"; }
		cat /tmp/mixed.out
		folios=$(si_delta /tmp/mixed.out region_folios)
		assert_ge "$wb" 1 "$dev ${kb}kB: vmstat zswpwb delta while held (written back)"
		assert_le $(( $(mthp_stat $kb zswpin) - z0 )) $((folios - 1)) "$dev ${kb}kB mixed: hugepages-${kb}kB zswpin delta (not every range whole from zswap)"
		info "$dev ${kb}kB mixed: $wb pages written back, swpin +$(( $(mthp_stat $kb swpin) - w0 )) zswpin +$(( $(mthp_stat $kb zswpin) - z0 )) of $folios folios"
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

# (d) swapoff while folios stored whole are out: read back order 0 by
# try_to_unuse(), then compared.
mthp_only 64 anon
swapon_zram 512M
rm -rf /tmp/hold && mkdir /tmp/hold
swap_integrity --thp --mthp 64 --size 16 --fill compressible --evict pageout \
	--min-out-pct 90 --hold /tmp/hold --seed $((seed += 1)) >/tmp/held.out 2>&1 &
si=$!
wait_for /tmp/hold/evicted
swapoff /dev/zram0 || fail "swapoff /dev/zram0 with folios out"
touch /tmp/hold/go
wait $si || { cat /tmp/held.out; fail "swapoff: round trip failed"; }
assert_eq "$(zswap_stored_pages)" 0 "zswap stored_pages after swapoff"

# (d) rmmod during a loop of whole loads: every round equal.
swapon_zram 512M
rm -f /tmp/loop.failed
( for s in 1 2 3 4 5 6; do
	swap_integrity --thp --mthp 64 --size 16 --fill compressible --evict pageout \
		--min-out-pct 50 --seed $((80 + s)) >/tmp/loop.$s.out 2>&1 || touch /tmp/loop.failed
done ) &
loop=$!
assert_grows "hugepages-64kB zswpin during the loop" 120 mthp_stat 64 zswpin
unload_mmtune
wait $loop
[ ! -e /tmp/loop.failed ] || { cat /tmp/loop.*.out; fail "a round lost data across rmmod"; }
info "ok: 6 rounds equal across rmmod"
swapoff_all
[ $brd = 1 ] || skip "zram parts passed; brd not run: /dev/ram0 is under 64 MiB (boot with brd.rd_size=131072)"
