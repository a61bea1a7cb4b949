# A memcg with memory.zswap.writeback 0 never writes to the swap device
# (kernels with mTHP, 6.12). With zswap_large on, its 16K, 64K and 2M folios
# (anonymous and shmem) go to zswap whole (the size's zswpout, the module's
# thp_stored) and nothing reaches the disk. With the size switched off
# (store_64kB 0) zswap refuses the folios, and 6.12 keeps them in memory,
# dirty and active (swap_writepage() returns AOP_WRITEPAGE_ACTIVATE): no
# page goes out at all. Every byte reads back equal either way.
# timeout: 600
. /lib.sh
require_feature zswap_large
mthp_require 16 64 2048
zswap_large_setup

seed=60
for kind in anon shmem; do
	for kb in 16 64 2048; do
		seed=$((seed + 1))
		t0=$(mmtune_zswap thp_stored) r0=$(zswap_refusals)
		mthp_run /tmp/si.out $kb $kind --size 32 --fill compressible --evict pageout \
			--zswap-writeback 0 --min-out-pct 100 --seed $seed
		folios=$(si_delta /tmp/si.out region_folios)
		what="writeback 0, ${kb}kB $kind"
		assert_eq "$(si_delta /tmp/si.out mthp_zswpout)" "$folios" "$what: hugepages-${kb}kB zswpout delta (every folio stored whole)"
		assert_eq $(( $(mmtune_zswap thp_stored) - t0 )) "$folios" "$what: zswap_large/thp_stored delta"
		# A refused folio stays mapped here; a second pageout pass would
		# store it and hide the refusal from the counts above.
		assert_eq $(( $(zswap_refusals) - r0 )) 0 "$what: zswap_large rollback_* and backoff_skipped deltas"
		assert_eq "$(si_delta /tmp/si.out pswpout)" 0 "$what: vmstat pswpout delta"
		assert_eq "$(si_delta /tmp/si.out mthp_swpout)" 0 "$what: hugepages-${kb}kB swpout delta"
	done
done

# The size off: refused by zswap, kept in memory, nothing written anywhere.
echo 0 >"$MMTUNE_ZSWAP/store_64kB" || fail "store_64kB 0"
for kind in anon shmem; do
	seed=$((seed + 1))
	mthp_run /tmp/si.out 64 $kind --size 32 --fill compressible --evict pageout \
		--zswap-writeback 0 --min-out-pct 0 --seed $seed
	folios=$(si_delta /tmp/si.out region_folios)
	what="writeback 0, store_64kB 0, 64kB $kind"
	assert_eq "$(si_delta /tmp/si.out mthp_zswpout)" 0 "$what: hugepages-64kB zswpout delta"
	assert_eq "$(si_delta /tmp/si.out mthp_swpout)" 0 "$what: hugepages-64kB swpout delta (kept in memory)"
	assert_eq "$(si_delta /tmp/si.out pswpout)" 0 "$what: vmstat pswpout delta"
	# Only order-0 fallbacks of the fault may have gone to zswap.
	assert_le "$(si_delta /tmp/si.out zswpout)" $(( $(si_delta /tmp/si.out pages) - folios * 16 )) "$what: vmstat zswpout delta (no page of a 64kB folio)"
done
echo 1 >"$MMTUNE_ZSWAP/store_64kB" || fail "store_64kB 1"
unload_mmtune
