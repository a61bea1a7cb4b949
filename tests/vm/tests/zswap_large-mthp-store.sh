# With zswap_large on, folios of every size go to zswap whole (kernels with
# mTHP, 6.12): 16K, 64K and 2M folios, anonymous and shmem, paged out to the
# disk behind zswap. Per size: the kernel's hugepages-<size>kB/stats/zswpout
# and the module's thp_stored count every folio, subpages_stored its pages,
# vmstat zswpout every page, nothing goes to the disk (pswpout, the size's
# swpout), and every byte reads back equal. store_<size>kB 0 leaves that
# size to the disk (whole, the stock path) while the others still go to
# zswap, and enabled 0 leaves every size to it.
# timeout: 900
. /lib.sh
require_feature zswap_large
mthp_require 16 64 2048
zswap_large_setup

# stored KB KIND SEED: one round of KB folios, every one stored whole.
stored() {
	t0=$(mmtune_zswap thp_stored) s0=$(mmtune_zswap subpages_stored) f0=$(mmtune_zswap fallback_disk) r0=$(zswap_refusals)
	mthp_run /tmp/si.out "$1" "$2" --size 32 --fill compressible --evict pageout --min-out-pct 100 --seed "$3"
	folios=$(si_delta /tmp/si.out region_folios)
	what="${1}kB $2"
	assert_eq "$(si_delta /tmp/si.out mthp_zswpout)" "$folios" "$what: hugepages-${1}kB zswpout delta (every folio stored whole)"
	assert_eq $(( $(mmtune_zswap thp_stored) - t0 )) "$folios" "$what: zswap_large/thp_stored delta"
	assert_eq $(( $(mmtune_zswap subpages_stored) - s0 )) $((folios * $(mthp_pages "$1"))) "$what: zswap_large/subpages_stored delta"
	assert_eq $(( $(mmtune_zswap fallback_disk) - f0 )) 0 "$what: zswap_large/fallback_disk delta"
	assert_eq $(( $(zswap_refusals) - r0 )) 0 "$what: zswap_large rollback_* and backoff_skipped deltas"
	assert_eq "$(si_delta /tmp/si.out zswpout)" "$(si_delta /tmp/si.out pages)" "$what: vmstat zswpout delta (every page)"
	assert_eq "$(si_delta /tmp/si.out pswpout)" 0 "$what: vmstat pswpout delta (nothing to the disk)"
	assert_eq "$(si_delta /tmp/si.out mthp_swpout)" 0 "$what: hugepages-${1}kB swpout delta (no folio to the disk)"
}

# to_disk KB KIND SEED WHY: one round of KB folios that zswap_large leaves
# to the stock path: written to the disk whole.
to_disk() {
	t0=$(mmtune_zswap thp_stored)
	mthp_run /tmp/si.out "$1" "$2" --size 32 --fill compressible --evict pageout --min-out-pct 90 --seed "$3"
	folios=$(si_delta /tmp/si.out region_folios)
	what="${1}kB $2, $4"
	assert_eq "$(si_delta /tmp/si.out mthp_zswpout)" 0 "$what: hugepages-${1}kB zswpout delta"
	assert_eq $(( $(mmtune_zswap thp_stored) - t0 )) 0 "$what: zswap_large/thp_stored delta"
	assert_ge "$(si_delta /tmp/si.out mthp_swpout)" $((folios * 9 / 10)) "$what: hugepages-${1}kB swpout delta (to the disk whole, of $folios)"
}

mthp_rounds stored 40

# One size off: it goes to the disk, the others still to zswap.
echo 0 >"$MMTUNE_ZSWAP/store_64kB" || fail "store_64kB 0"
to_disk 64 anon 51 "store_64kB 0"
stored 16 anon 52
echo 1 >"$MMTUNE_ZSWAP/store_64kB" || fail "store_64kB 1"
stored 64 anon 53

# The feature off: stock 6.12, zswap refuses every large folio.
echo 0 >"$MMTUNE_ZSWAP/enabled" || fail "zswap_large/enabled 0"
to_disk 16 anon 54 "enabled 0"
to_disk 2048 shmem 55 "enabled 0"
unload_mmtune
swapoff /dev/vda || fail "swapoff"
assert_eq "$(zswap_stored_pages)" 0 "zswap stored_pages after swapoff"
