# rmmod while THPs sit in zswap and while another process swaps THPs
# through the hook: unloading is clean, and both read back equal data.
# Once per zpool: zsmalloc, zbud and z3fold where the kernel has them
# (zswap_zpools, for_each_zpool in lib-zswap_large.sh).
. /lib.sh
require_feature zswap_large

rmmod_round() {
	zswap_large_setup

	start_held_round 41
	stored=$(mmtune_zswap thp_stored)
	assert_ge "$stored" 28 "THPs in zswap before rmmod"

	# Load: THPs pushed out by a memcg limit, in a loop, until told to stop.
	(
		i=0
		while [ ! -e /tmp/hold/stop ]; do
			i=$((i + 1))
			swap_integrity --size 96 --thp --fill compressible --evict memcg-max --limit 64 --min-out-pct 25 --seed $((42 + i)) \
				>/tmp/load.out 2>&1 || { cat /tmp/load.out; echo "load round $i failed"; exit 1; }
		done
		echo "load: $i rounds"
	) &
	load=$!
	assert_grows "THPs stored by the load while loaded" 120 mmtune_zswap thp_stored
	unload_mmtune
	assert_hooks_idle
	# Reload and unload twice more under the same load.
	for i in 1 2; do
		load_mmtune
		echo 1 >"$MMTUNE_ZSWAP/enabled"
		sleep 1
		unload_mmtune
	done
	assert_hooks_idle

	touch /tmp/hold/go
	wait $held || { cat /tmp/held.out; fail "held process: round trip across rmmod failed"; }
	cat /tmp/held.out
	touch /tmp/hold/stop
	wait $load || fail "the load failed"
	swapoff /dev/vda || fail "swapoff"
	assert_eq "$(zswap_stored_pages)" 0 "zswap stored_pages after swapoff"
}
for_each_zpool rmmod_round
