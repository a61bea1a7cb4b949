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
# zram) makes kswapd run. After rmmod every high is stock again.
. /lib.sh
require_feature pcp_high
GREEDY=/sys/module/pcp_greedy/parameters
[ -f /mmtune/pcp_greedy.ko ] || fail "tests/kmod/pcp_greedy.ko was not built"
zoneinfo_highs >/tmp/stock.highs
swapon_zram 3G
insmod /mmtune/pcp_greedy.ko || fail "insmod pcp_greedy.ko"
avail=$(awk '$1 == "MemAvailable:" { print int($2 / 1024) }' /proc/meminfo)
usemem --size $((avail + 384)) --procs 2 --no-thp --fill compressible >/tmp/u.out 2>&1 ||
	{ cat /tmp/u.out; fail "usemem under global pressure"; }
samples=$(cat $GREEDY/reclaim_samples) over=$(cat $GREEDY/reclaim_over) excess=$(cat $GREEDY/reclaim_excess)
batch=$(awk '/^Node/ { z = $4 } z == "DMA32" && $1 == "batch:" { print $2; exit }' /proc/zoneinfo)
info "frees sampled under reclaim: $samples, of them $over more than 16 pages above 4 x batch; the most above: $excess (DMA32 batch $batch)"
rmmod pcp_greedy || fail "rmmod pcp_greedy"
assert_ge "$samples" 100 "frees sampled while kswapd scanned (the pressure reached kswapd)"
# A refill under reclaim may add up to two blocks (of order 3 at most
# here: no THP is allocated) to a pageset at the cap: 16 pages.
assert_le $((over * 100)) "$samples" "frees (x100) that found a pageset more than 16 pages above 4 x batch during reclaim, against all sampled"
zoneinfo_highs >/tmp/after.highs
diff /tmp/stock.highs /tmp/after.highs || fail "highs after rmmod differ from stock"
swapoff_all
