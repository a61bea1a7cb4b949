# Under a parallel page-fault/munmap load on both CPUs, the tuner raises
# high, and refills from the zone per 1000 allocations fall against the
# stock decisions of the same kernel (observe=1, tuner off).
. /lib.sh
load_mmtune
# 32 MiB regions: more than the static high (about 7000 pages here).
LOAD="pcp_churn fault --threads 2 --mib 32 --rounds 25"
echo 1 >"$MMTUNE_PCP/observe"
echo 1 >"$MMTUNE_PCP/enabled" || fail "enable pcp_high, observing"
stock=$(pcp_refills_per_1000 $LOAD)
stock_high=$(pcp_zone high_max)
assert_eq "$(mmtune_pcp raises)" 0 "no raises with the tuner off"
echo 0 >"$MMTUNE_PCP/observe" || fail "tune"
# The highest DMA32 high seen while the load runs: once it stops, the
# decay (decay_percent a second) may have lowered it before a later read.
( m=0; while [ ! -e /tmp/pcp-sample.stop ]; do
	h=$(pcp_zone high_max); [ "${h:-0}" -gt $m ] && m=$h && echo $m >/tmp/pcp-sample.max
	sleep 0.5
done ) &
sampler=$!
tuned=$(pcp_refills_per_1000 $LOAD)
touch /tmp/pcp-sample.stop; wait $sampler
mmtune_pcp zones
tuned_high=$(cat /tmp/pcp-sample.max)
echo "refills per 1000 allocations x1000: stock $stock tuned $tuned; DMA32 high max: stock $stock_high tuned $tuned_high"
assert_ge "$(mmtune_pcp raises)" 1 "raises with the tuner on"
assert_ge "$tuned_high" 8192 "DMA32 high max during the load (holds a 32 MiB region)"
assert_ge "$stock" 1000 "stock refills per 1000 allocations x1000 (the load refills)"
assert_le $((tuned * 5)) "$stock" "tuned refills x5 vs stock (<= 0.2x stock)"
assert_le "$(pcp_zone high_max)" "$(pcp_zone bmax)" "high within high_max"
unload_mmtune
