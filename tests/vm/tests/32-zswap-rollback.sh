# A THP that zswap cannot take whole goes to the disk whole, with every
# subpage stored so far invalidated, the rollback counted by reason, and
# every byte read back equal: pool limit, memory.zswap.max, incompressible.
# Once per zpool: zsmalloc, zbud and z3fold where the kernel has them
# (zswap_zpools, for_each_zpool in lib-zswap_large.sh).
. /lib.sh

rollback() {
	zswap_large_setup

	# run_case NAME COUNTER ARGS...: THPs refused with COUNTER, all to disk.
	run_case() {
		name=$1 counter=$2
		shift 2
		info "--- $name"
		rb=$(mmtune_zswap "$counter") fb=$(mmtune_zswap fallback_disk)
		stored=$(mmtune_zswap thp_stored)
		swap_integrity --size 32 --thp --evict pageout --min-out-pct 100 "$@" >/tmp/si.out ||
			{ cat /tmp/si.out; fail "$name: swap round trip failed"; }
		cat /tmp/si.out
		thps=$(si_delta /tmp/si.out thps)
		assert_ge "$thps" 14 "$name: THPs backing the 32 MiB region (of 16)"
		assert_ge $(( $(mmtune_zswap "$counter") - rb )) "$thps" "$name: zswap/$counter delta"
		assert_eq $(( $(mmtune_zswap thp_stored) - stored )) 0 "$name: zswap/thp_stored delta"
		assert_ge $(( $(mmtune_zswap fallback_disk) - fb )) "$thps" "$name: zswap/fallback_disk delta"
		assert_eq "$(si_delta /tmp/si.out thp_swpout)" "$thps" "$name: vmstat thp_swpout delta (whole THPs to disk)"
	}

	# Pool limit 0%: the first subpage fits the empty pool, the second not.
	echo 0 >$ZSWAP_PARAMS/max_pool_percent
	rolled=$(mmtune_zswap subpages_rolled_back)
	run_case "pool limit" rollback_pool_limit --fill compressible --seed 21
	echo 20 >$ZSWAP_PARAMS/max_pool_percent
	# Wait until zswap accepts again (it did not keep the rolled back entries).
	assert_ge $(( $(mmtune_zswap subpages_rolled_back) - rolled )) 1 "pool limit: subpages rolled back"

	# memory.zswap.max of 1 MiB: about two compressed THPs fit, then a THP is
	# refused half way and its stored subpages must be uncharged exactly (a
	# page_counter underflow would WARN and fail the run).
	rolled=$(mmtune_zswap subpages_rolled_back)
	stored=$(mmtune_zswap thp_stored)
	info "--- cgroup limit"
	rb=$(mmtune_zswap rollback_cgroup_limit)
	swap_integrity --size 32 --thp --evict pageout --min-out-pct 100 --fill compressible \
		--zswap-max 1024 --seed 22 >/tmp/si.out || { cat /tmp/si.out; fail "cgroup limit: swap round trip failed"; }
	cat /tmp/si.out
	assert_ge $(( $(mmtune_zswap rollback_cgroup_limit) - rb )) 1 "cgroup limit: zswap/rollback_cgroup_limit delta"
	assert_ge $(( $(mmtune_zswap subpages_rolled_back) - rolled )) 1 "cgroup limit: subpages rolled back (refused half way)"
	assert_le $(( $(mmtune_zswap thp_stored) - stored )) 4 "cgroup limit: THPs stored within 1 MiB"
	assert_ge "$(si_delta /tmp/si.out thp_swpout)" 1 "cgroup limit: vmstat thp_swpout delta"

	# Incompressible data: zswap refuses the first subpage.
	run_case "incompressible" rollback_compress --fill random --seed 23

	# No rollback left an entry: everything stored was taken back by swap-in
	# or is still owned by a live offset; swapoff must find all of it.
	swapoff /dev/vda || fail "swapoff"
	assert_eq "$(zswap_stored_pages)" 0 "zswap stored_pages after swapoff"
	unload_mmtune
}
for_each_zpool rollback
