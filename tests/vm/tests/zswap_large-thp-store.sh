# With zswap_large on, THPs go to zswap whole: mmtune's thp_stored rises by
# the number of THPs, vmstat zswpout by 512 for each, nothing goes to the
# disk (thp_swpout and pswpout stay), and every byte reads back equal.
# Once per zpool: zsmalloc, zbud and z3fold where the kernel has them
# (zswap_zpools, for_each_zpool in lib-zswap_large.sh).
. /lib.sh
require_feature zswap_large

thp_store() {
	zswap_large_setup

	stored=$(mmtune_zswap thp_stored)
	subpages=$(mmtune_zswap subpages_stored)
	swap_integrity --size 64 --thp --fill compressible --evict pageout --min-out-pct 100 >/tmp/si.out ||
		{ cat /tmp/si.out; fail "swap round trip failed (MADV_PAGEOUT)"; }
	cat /tmp/si.out
	thps=$(si_delta /tmp/si.out thps)
	assert_ge "$thps" 28 "THPs backing the 64 MiB region (of 32)"
	assert_eq $(( $(mmtune_zswap thp_stored) - stored )) "$thps" "mmtune zswap/thp_stored delta"
	assert_eq $(( $(mmtune_zswap subpages_stored) - subpages )) $((thps * 512)) "mmtune zswap/subpages_stored delta"
	assert_eq "$(si_delta /tmp/si.out zswpout)" "$(si_delta /tmp/si.out pages)" "vmstat zswpout delta (512 per THP, 1 per 4K page)"
	assert_eq "$(si_delta /tmp/si.out thp_swpout)" 0 "vmstat thp_swpout delta (THPs written to disk)"
	assert_eq "$(si_delta /tmp/si.out pswpout)" 0 "vmstat pswpout delta (pages written to disk)"
	assert_eq "$(mmtune_zswap fallback_disk)" 0 "zswap/fallback_disk"

	# The same under a memcg limit: reclaim, not madvise, picks the THPs.
	stored=$(mmtune_zswap thp_stored)
	swap_integrity --size 96 --thp --fill compressible --evict memcg-max --limit 64 --min-out-pct 30 --seed 11 >/tmp/si.out ||
		{ cat /tmp/si.out; fail "swap round trip failed (memory.max)"; }
	cat /tmp/si.out
	assert_ge $(( $(mmtune_zswap thp_stored) - stored )) 1 "zswap/thp_stored delta under memory.max"
	assert_eq "$(si_delta /tmp/si.out thp_swpout)" 0 "vmstat thp_swpout delta under memory.max"
	unload_mmtune
}
for_each_zpool thp_store
