# timeout: 600
# The kernel, not the module, holds a pageset to 4 batches while kswapd may
# scan its zone (ZONE_RECLAIM_ACTIVE, stock nr_pcp_high()'s rule). The test
# tuner tests/kmod/pcp_greedy.ko registers instead of mmtune.ko, widens the
# bounds, raises every high to its bound, asks for the largest refill and
# never frees; at each free once reclaim had been active for 64 hook calls
# in a row on that CPU and zone, it records how far the pageset stood
# above 4 x batch. Between kswapd's runs the flag is clear and a pageset
# may fill unseen (frees the kernel books without the hook), so a few
# samples find it above until the kernel brought it down: at most 1% may.
# Without the kernel's cap nearly all do (ABI 9: the most 30073 pages
# above). Global memory pressure (more than MemAvailable written, swap on
# zram) makes kswapd run. After rmmod every high is what stock computes
# then, not the high before the test: stock high follows the low
# watermark, watermark_boost included (the debug kernel unregistered under
# a boost that kswapd had not cleared yet: 8509 against 6973 before), so
# the test waits for kswapd to clear the boost (a boost that stays is the
# same at rmmod and at the stock recomputation right after it).
# Not with kmemleak on: under this pressure kmemleak's own GFP_NORETRY
# allocations fail, its emergency pool (16000 objects) empties and it turns
# itself off for the rest of the boot, so every later leak check would
# mean nothing. check-debug runs 48 in a boot of its own with kmemleak=off.
. /lib.sh
require_feature pcp_high
kmemleak_on && skip "global pressure would empty kmemleak's pool and disable it for the later tests; check-debug runs 48 in a boot with kmemleak=off"
GREEDY=/sys/module/pcp_greedy/parameters
[ -f /mmtune/pcp_greedy.ko ] || fail "tests/kmod/pcp_greedy.ko was not built"
swapon_zram 3G
insmod /mmtune/pcp_greedy.ko || fail "insmod pcp_greedy.ko"
avail=$(awk '$1 == "MemAvailable:" { print int($2 / 1024) }' /proc/meminfo)
usemem --size $((avail + 384)) --procs 2 --no-thp --fill compressible >/tmp/u.out 2>&1 ||
	{ cat /tmp/u.out; fail "usemem under global pressure"; }
samples=$(cat $GREEDY/reclaim_samples) over=$(cat $GREEDY/reclaim_over) excess=$(cat $GREEDY/reclaim_excess)
batch=$(awk '/^Node/ { z = $4 } z == "DMA32" && $1 == "batch:" { print $2; exit }' /proc/zoneinfo)
info "frees sampled under reclaim: $samples, of them $over more than 16 pages above 4 x batch; the most above: $excess (DMA32 batch $batch)"
wait_boost_clear 30 || info "a zone's watermark_boost still set after 30 s: $(grep boost /proc/zoneinfo | tr -s ' ' | tr '\n' ' ')"
rmmod pcp_greedy || fail "rmmod pcp_greedy"
zoneinfo_highs >/tmp/after.highs
stock_highs_now >/tmp/stock.highs
assert_ge "$samples" 100 "frees sampled while kswapd scanned (the pressure reached kswapd)"
# A refill under reclaim may add up to two blocks (of order 3 at most
# here: no THP is allocated) to a pageset at the cap: 16 pages.
assert_le $((over * 100)) "$samples" "frees (x100) that found a pageset more than 16 pages above 4 x batch during reclaim, against all sampled"
diff /tmp/stock.highs /tmp/after.highs || fail "highs after rmmod differ from stock's"
swapoff_all
