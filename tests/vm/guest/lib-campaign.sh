# Guest test helpers for the campaigns (tests 9x): every feature at once
# under a content-verifying swap load. Sourced by lib.sh.

# campaign_swap_setup: zram and the virtio disk as swap at the same
# priority (so slots come from both in turn), zswap in front of both, THP
# always.
campaign_swap_setup() {
	swapoff_all
	thp_always
	echo 1 >/sys/block/zram0/reset
	echo 1G >/sys/block/zram0/disksize || fail "zram disksize"
	mkswap /dev/zram0 >/dev/null || fail "mkswap /dev/zram0"
	echo 0 >/sys/block/vda/queue/rotational
	mkswap /dev/vda >/dev/null || fail "mkswap /dev/vda"
	swapon_prio /dev/zram0 5 || fail "swapon /dev/zram0"
	swapon_prio /dev/vda 5 || fail "swapon /dev/vda"
	zswap_enable
}

# campaign_features_on: every feature the module lists, enabled.
campaign_features_on() {
	for f in $(offered_features); do
		echo 1 >"$MMTUNE_SYSFS/$f/enabled" || fail "enable $f"
	done
}

# campaign_hold_start: 32 MiB of compressible 4K pages paged out (into
# zswap, which stores them synchronously: none stay in the swap cache) by a
# swap_integrity that holds them until campaign_hold_check; sets $held.
campaign_hold_start() {
	rm -rf /tmp/hold && mkdir /tmp/hold
	swap_integrity --no-thp --size 32 --fill compressible --evict pageout --min-out-pct 100 \
		--hold /tmp/hold --seed 9000 >/tmp/held.out 2>&1 &
	held=$!
	wait_for /tmp/hold/evicted
}

# campaign_load_start: three swap_integrity loops under memory.max until
# campaign_load_stop: 4K incompressible (zswap refuses it: zram and the
# disk), 4K compressible (zswap), THPs compressible (thp_swap, split_zero,
# zswap_large). Each round compares every byte.
campaign_load_start() {
	rm -rf /tmp/load && mkdir /tmp/load
	loads=
	for l in 1 2 3; do
		case $l in
		1) args="--no-thp --size 48 --limit 24 --fill random" ;;
		2) args="--no-thp --size 48 --limit 24 --fill compressible" ;;
		3) args="--thp --size 64 --limit 32 --fill compressible --zero-every 3" ;;
		esac
		(
			i=0
			while [ ! -e /tmp/load/stop ]; do
				i=$((i + 1))
				swap_integrity $args --evict memcg-max --min-out-pct 10 \
					--seed $((l * 100000 + i)) >/tmp/load/$l.out 2>&1 ||
					{ cat /tmp/load/$l.out; touch /tmp/load/failed; echo "load $l round $i failed"; exit 1; }
			done
			echo "load $l: $i rounds, every byte equal"
		) &
		loads="$loads $!"
	done
	sleep 2
}
campaign_load_ok() { [ ! -e /tmp/load/failed ] || fail "a load round lost data or failed: $(cat /tmp/load/*.out | tail -n 20)"; }
campaign_load_stop() {
	touch /tmp/load/stop
	for p in $loads; do wait "$p" || fail "a load loop failed"; done
	campaign_load_ok
}

# campaign_swap_check: with the load stopped and mmtune unloaded, the slots
# in use on both devices are exactly what processes hold (VmSwap of every
# process) plus the swap cache's (SwapCached); reclaim may still be
# freeing swap cache, so it gets 10 s to settle. The stock per-CPU slot
# cache refilled whenever mmtune was not loaded; it holds allocated slots
# too, so it is emptied first the one way userspace can: switching
# swap_slots on (the kernel drains the stock cache, swap_slots-stock-drain) and off
# again (mmtune drains its own).
campaign_swap_check() {
	info "slots in use before draining the stock cache: $(( $(swap_used /dev/zram0) + $(swap_used /dev/vda) ))"
	load_mmtune
	echo 1 >"$MMTUNE_SLOTS/enabled" || fail "swap_slots on (drains the stock slot cache)"
	echo 0 >"$MMTUNE_SLOTS/enabled" || fail "swap_slots off"
	unload_mmtune
	n=0
	while :; do
		used=$(( $(swap_used /dev/zram0) + $(swap_used /dev/vda) ))
		held_swap=$(cat /proc/[0-9]*/status 2>/dev/null | awk '/^VmSwap:/ { s += $2 } END { print int(s / 4) }')
		cached=$(awk '/^SwapCached:/ { print int($2 / 4) }' /proc/meminfo)
		[ "$used" -eq $((held_swap + cached)) ] && break
		n=$((n + 1))
		[ $n -gt 50 ] && break
		sleep 0.2
	done
	assert_ge "$held_swap" 8192 "pages the held process has in swap"
	assert_eq "$used" $((held_swap + cached)) "slots in use on zram + disk (VmSwap $held_swap + SwapCached $cached)"
}

# campaign_hold_check: the held process reads back equal, both devices
# swap off within 60 s, zswap holds nothing after.
campaign_hold_check() {
	touch /tmp/hold/go
	wait "$held" || { cat /tmp/held.out; fail "held process: data changed during the campaign"; }
	tail -n 1 /tmp/held.out
	for dev in /dev/zram0 /dev/vda; do
		timeout 60 swapoff "$dev" || fail "swapoff $dev did not finish within 60 s"
	done
	assert_eq "$(zswap_stored_pages)" 0 "zswap stored_pages after swapoff"
}
