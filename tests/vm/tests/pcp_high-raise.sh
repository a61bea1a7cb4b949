# Under a parallel page-fault/munmap load on both CPUs, the tuner raises
# high, and refills from the zone per 1000 allocations fall against the
# stock decisions of the same kernel (observe=1, tuner off).
. /lib.sh
require_feature pcp_high
load_mmtune
# 32 MiB regions: more than the static high (about 7000 pages here).
LOAD="pcp_churn fault --threads 2 --mib 32 --rounds 25"
echo 1 >"$MMTUNE_PCP/observe"
echo 1 >"$MMTUNE_PCP/enabled" || fail "enable pcp_high, observing"
stock=$(pcp_refills_per_1000 $LOAD)
stock_high=$(pcp_zone high_max)
assert_eq "$(mmtune_pcp raises)" 0 "no raises with the tuner off"
echo 0 >"$MMTUNE_PCP/observe" || fail "tune"
# Slow decay (1% a second) for this round: the high reached during the load
# is still there when the load ends and the zones are read.
echo 1 >"$MMTUNE_PCP/decay_percent" || fail "decay_percent"
tuned=$(pcp_refills_per_1000 $LOAD)
mmtune_pcp zones
tuned_high=$(pcp_zone high_max)
echo "refills per 1000 allocations x1000: stock $stock tuned $tuned; DMA32 high max: stock $stock_high tuned $tuned_high"
assert_ge "$(mmtune_pcp raises)" 1 "raises with the tuner on"
# Above the stock high, not a fixed page count: how far high stands when
# the load ends depends on how many refills a second the host manages
# against 1% decay a second (over 8192 on an idle test kernel, 7288 on
# the KASAN kernel at load 5, with refills 35x fewer all the same).
assert_ge "$tuned_high" $((stock_high + 1)) "DMA32 high max after the load, slow decay (above the stock $stock_high)"
assert_ge "$stock" 1000 "stock refills per 1000 allocations x1000 (the load refills)"
assert_le $((tuned * 5)) "$stock" "tuned refills x5 vs stock (<= 0.2x stock)"
assert_le "$(pcp_zone high_max)" "$(pcp_zone bmax)" "high within high_max"
unload_mmtune
