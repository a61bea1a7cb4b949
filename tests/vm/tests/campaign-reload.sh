# Campaign: 100 load/unload cycles of mmtune.ko, every feature on in each,
# under a content-verifying swap load (three swap_integrity loops: 4K and
# THP, compressible and not) on zram and the disk at the same priority
# with zswap in front, plus a process holding 32 MiB in swap throughout.
# Every round reads back equal, every unload leaves the hook core idle,
# and at the end the slots in use are exactly what processes hold, the
# held data is equal and swapoff finishes.
# slow: about 6 minutes under TCG; "make check" may leave it to a slow target.
# timeout: 1200
. /lib.sh
cycles=100
campaign_swap_setup
campaign_hold_start
campaign_load_start
t0=$(cut -d. -f1 /proc/uptime)
i=0
while [ $i -lt $cycles ]; do
	i=$((i + 1))
	insmod "$MMTUNE_KO" || fail "cycle $i: insmod"
	campaign_features_on
	# split_zero in both modes, swap_slots at both ends of its cache size.
	[ $((i % 2)) -eq 0 ] && echo always >"$MMTUNE_SZ/mode"
	[ $((i % 3)) -eq 0 ] && echo 1024 >"$MMTUNE_SLOTS/cache_size"
	sleep 0.5
	rmmod mmtune || fail "cycle $i: rmmod"
	[ "$(hooks_state registered)" = - ] || fail "cycle $i: still registered after rmmod"
	for f in $FEATURES; do
		[ "$(hooks_state "$f")" = off ] || fail "cycle $i: static key $f on after rmmod"
	done
	campaign_load_ok
done
secs=$(( $(cut -d. -f1 /proc/uptime) - t0 ))
info "ok: $cycles load/unload cycles in ${secs}s, hook core idle after each, load intact"
campaign_load_stop
cat /tmp/load/*.out | grep -h '^swap_integrity: PASS' | tail -n 3
campaign_swap_check
campaign_hold_check
assert_hooks_idle
