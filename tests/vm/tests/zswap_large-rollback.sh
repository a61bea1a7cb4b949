# A THP that zswap cannot take whole goes to the disk whole, with every
# subpage stored so far invalidated, the rollback counted by reason, and
# every byte read back equal: pool limit, memory.zswap.max, incompressible.
# zswap checks both limits at a folio's head, so a THP over a limit is
# refused before anything of it is compressed: 0 subpages rolled back per
# such refusal, and the limits are overshot by at most one THP.
# Once per zpool: zsmalloc, zbud and z3fold where the kernel has them
# (zswap_zpools, for_each_zpool in lib-zswap_large.sh).
. /lib.sh
require_feature zswap_large

rollback() {
	zswap_large_setup

	# run_case NAME COUNTER MAXSTORED ARGS...: THPs refused with COUNTER,
	# all to disk but at most MAXSTORED taken whole.
	run_case() {
		name=$1 counter=$2 maxstored=$3
		shift 3
		info "--- $name"
		rb=$(mmtune_zswap "$counter") fb=$(mmtune_zswap fallback_disk)
		stored=$(mmtune_zswap thp_stored)
		swap_integrity --size 32 --thp --evict pageout --min-out-pct 100 "$@" >/tmp/si.out ||
			{ cat /tmp/si.out; fail "$name: swap round trip failed"; }
		cat /tmp/si.out
		thps=$(si_delta /tmp/si.out thps)
		assert_ge "$thps" 14 "$name: THPs backing the 32 MiB region (of 16)"
		taken=$(( $(mmtune_zswap thp_stored) - stored ))
		assert_le "$taken" "$maxstored" "$name: zswap/thp_stored delta"
		assert_ge $(( $(mmtune_zswap "$counter") - rb )) $((thps - taken)) "$name: zswap/$counter delta"
		assert_ge $(( $(mmtune_zswap fallback_disk) - fb )) $((thps - taken)) "$name: zswap/fallback_disk delta"
		assert_eq "$(si_delta /tmp/si.out thp_swpout)" $((thps - taken)) "$name: vmstat thp_swpout delta (whole THPs to disk)"
	}

	# Pool limit 0%: an empty pool takes one THP whole (checked at its
	# head), every later one is refused at its head.
	echo 0 >$ZSWAP_PARAMS/max_pool_percent
	rolled=$(mmtune_zswap subpages_rolled_back)
	run_case "pool limit" rollback_pool_limit 1 --fill compressible --seed 21
	echo 20 >$ZSWAP_PARAMS/max_pool_percent
	assert_eq $(( $(mmtune_zswap subpages_rolled_back) - rolled )) 0 "pool limit: subpages rolled back (refused at the head)"

	# memory.zswap.max of 1 MiB: THPs are taken whole while the cgroup is
	# below it (the last one overshoots), then refused at the head with
	# nothing compressed or charged (a page_counter underflow would WARN).
	rolled=$(mmtune_zswap subpages_rolled_back)
	stored=$(mmtune_zswap thp_stored)
	info "--- cgroup limit"
	rb=$(mmtune_zswap rollback_cgroup_limit)
	swap_integrity --size 32 --thp --evict pageout --min-out-pct 100 --fill compressible \
		--zswap-max 1024 --seed 22 >/tmp/si.out || { cat /tmp/si.out; fail "cgroup limit: swap round trip failed"; }
	cat /tmp/si.out
	assert_ge $(( $(mmtune_zswap rollback_cgroup_limit) - rb )) 1 "cgroup limit: zswap/rollback_cgroup_limit delta"
	assert_eq $(( $(mmtune_zswap subpages_rolled_back) - rolled )) 0 "cgroup limit: subpages rolled back (refused at the head)"
	assert_le $(( $(mmtune_zswap thp_stored) - stored )) 4 "cgroup limit: THPs stored within 1 MiB"
	assert_ge "$(si_delta /tmp/si.out thp_swpout)" 1 "cgroup limit: vmstat thp_swpout delta"

	# Incompressible data: zswap refuses the first subpage.
	run_case "incompressible" rollback_compress 0 --fill random --seed 23

	# No rollback left an entry: everything stored was taken back by swap-in
	# or is still owned by a live offset; swapoff must find all of it.
	swapoff /dev/vda || fail "swapoff"
	assert_eq "$(zswap_stored_pages)" 0 "zswap stored_pages after swapoff"
	unload_mmtune
}
for_each_zpool rollback
