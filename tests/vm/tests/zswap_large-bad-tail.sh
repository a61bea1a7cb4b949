# A page that does not compress no longer costs a large folio its store
# (kernels whose zswap can store a page as it is, 6.12): folios of 16K,
# 64K and 2M, anonymous and shmem, whose last page is random (a bad tail)
# are stored whole with that page raw (zswap_large/subpages_raw, one per
# folio), nothing rolled back and no compression thrown away
# (zswap's reject_compress_*), every byte read back equal; and again after
# zswap writeback took the oldest folios' entries, raw tails included, to
# the disk. Folios of random data only are refused at the first page past
# max_raw_percent, not after compressing all of them; max_raw_percent 0
# rolls a bad tail's folio back, as before.
# timeout: 900
. /lib.sh
require_feature zswap_large
mthp_require 16 64 2048
zswap_large_setup
[ -e "$MMTUNE_ZSWAP/max_raw_percent" ] ||
	{ unload_mmtune; skip "this line's zswap refuses a page that does not compress (no max_raw_percent)"; }

# bad_tail KB KIND SEED: a round of KB folios with a bad tail, every one
# stored whole with one raw page.
bad_tail() {
	nr=$(mthp_pages "$1")
	t0=$(mmtune_zswap thp_stored) r0=$(mmtune_zswap subpages_raw)
	b0=$(mmtune_zswap subpages_rolled_back) q0=$(zswap_refusals) p0=$(zswap_rejects_poor)
	mthp_run /tmp/si.out "$1" "$2" --size 16 --fill compressible --random-every "$nr" \
		--evict pageout --min-out-pct 100 --seed "$3"
	folios=$(si_delta /tmp/si.out region_folios) pages=$(si_delta /tmp/si.out pages)
	what="${1}kB $2, bad tail"
	assert_ge "$folios" 1 "$what: folios of the size backing the region"
	assert_eq "$(si_delta /tmp/si.out mthp_zswpout)" "$folios" "$what: hugepages-${1}kB zswpout delta (every folio stored whole)"
	assert_eq $(( $(mmtune_zswap thp_stored) - t0 )) "$folios" "$what: zswap_large/thp_stored delta"
	assert_eq $(( $(mmtune_zswap subpages_raw) - r0 )) "$folios" "$what: zswap_large/subpages_raw delta (one raw page per folio)"
	assert_eq $(( $(mmtune_zswap subpages_rolled_back) - b0 )) 0 "$what: zswap_large/subpages_rolled_back delta"
	assert_eq $(( $(zswap_refusals) - q0 )) 0 "$what: zswap_large rollback_* and backoff_skipped deltas"
	# Only a random page outside the size's folios (order 0) may be refused.
	assert_le $(( $(zswap_rejects_poor) - p0 )) $(( (pages - folios * nr) / nr + 1 )) "$what: zswap reject_compress_poor and _fail delta"
	assert_eq "$(si_delta /tmp/si.out pswpout)" 0 "$what: vmstat pswpout delta (nothing to the disk)"
}

mthp_rounds bad_tail 60

# Writeback: raw entries go to the disk by copy and read back equal.
info "=== 2M anon, bad tail, then zswap writeback of the whole memcg"
mthp_only 2048
swap_refresh
rm -rf /tmp/hold && mkdir /tmp/hold
r0=$(mmtune_zswap subpages_raw) wb0=$(vmstat zswpwb)
swap_integrity --thp --mthp 2048 --size 16 --fill compressible --random-every 512 \
	--evict pageout --min-out-pct 100 --seed 71 --hold /tmp/hold >/tmp/wb.out 2>&1 &
pid=$!
wait_for /tmp/hold/evicted
cg=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/$pid/cgroup)
raw=$(( $(mmtune_zswap subpages_raw) - r0 ))
assert_ge "$raw" 1 "writeback: raw pages stored before writeback"
shrinker=$(cat $ZSWAP_PARAMS/shrinker_enabled)
echo Y >$ZSWAP_PARAMS/shrinker_enabled || fail "zswap shrinker_enabled"
# The shrinker takes the oldest entries first and protects the newest
# quarter: two folios written back whole include their raw tails.
tries=0
while [ $(( $(vmstat zswpwb) - wb0 )) -lt 1024 ] && [ $tries -lt 200 ]; do
	echo 1M >"$cg/memory.reclaim" 2>/dev/null
	tries=$((tries + 1))
done
echo "$shrinker" >$ZSWAP_PARAMS/shrinker_enabled
info "writeback: $tries memory.reclaim writes, zswpwb +$(( $(vmstat zswpwb) - wb0 ))"
assert_ge $(( $(vmstat zswpwb) - wb0 )) 1024 "writeback: vmstat zswpwb delta (the two oldest folios whole)"
# What writeback read into the swap cache goes to the disk and out of
# memory, so that the read-back swaps it in from there.
i=0
while [ $i -lt 20 ] && [ "$(awk '$1 == "swapcached" { print $2 }' "$cg/memory.stat")" -gt 0 ]; do
	echo 16M >"$cg/memory.reclaim" 2>/dev/null
	i=$((i + 1))
done
touch /tmp/hold/go
wait $pid
rc=$?
cat /tmp/wb.out
[ $rc -eq 0 ] || fail "writeback: swap round trip failed (exit $rc)"

# Random data only: refused at the first page past the share.
info "=== 2M anon, random data: refused after max_raw_percent of the folio"
b0=$(mmtune_zswap subpages_rolled_back) c0=$(mmtune_zswap rollback_compress) r0=$(mmtune_zswap subpages_raw)
mthp_run /tmp/si.out 2048 anon --size 16 --fill random --evict pageout --min-out-pct 90 --seed 72
folios=$(si_delta /tmp/si.out region_folios)
share=$(( 512 * $(mmtune_zswap max_raw_percent) / 100 ))
assert_ge $(( $(mmtune_zswap rollback_compress) - c0 )) "$folios" "random: zswap_large/rollback_compress delta"
assert_le $(( $(mmtune_zswap subpages_rolled_back) - b0 )) $((folios * share)) "random: subpages rolled back (at most the share per folio)"
assert_eq $(( $(mmtune_zswap subpages_raw) - r0 )) 0 "random: zswap_large/subpages_raw delta (no folio stored)"

# max_raw_percent 0: a bad tail rolls its folio back after the others.
assert_write_rejected "$MMTUNE_ZSWAP/max_raw_percent" 101
echo 0 >"$MMTUNE_ZSWAP/max_raw_percent" || fail "max_raw_percent 0"
info "=== 64K anon, bad tail, max_raw_percent 0"
t0=$(mmtune_zswap thp_stored) b0=$(mmtune_zswap subpages_rolled_back)
mthp_run /tmp/si.out 64 anon --size 16 --fill compressible --random-every 16 \
	--evict pageout --min-out-pct 90 --seed 73
folios=$(si_delta /tmp/si.out region_folios)
assert_eq $(( $(mmtune_zswap thp_stored) - t0 )) 0 "max_raw_percent 0: zswap_large/thp_stored delta"
assert_ge $(( $(mmtune_zswap subpages_rolled_back) - b0 )) $((folios * 15)) "max_raw_percent 0: subpages rolled back (15 per folio)"
echo 12 >"$MMTUNE_ZSWAP/max_raw_percent"

swapoff /dev/vda || fail "swapoff"
assert_eq "$(zswap_stored_pages)" 0 "zswap stored_pages after swapoff"
unload_mmtune
