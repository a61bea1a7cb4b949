# The same round trips against zram (non-rotational, compressed).
# tier: check
. /lib.sh
thp_always
swapon_zram 1G
swap_integrity --size 64 --thp --evict pageout --expect-thp-swpout --min-out-pct 90 --seed 5 || fail "THP, MADV_PAGEOUT"
swap_integrity --size 32 --no-thp --evict pageout --min-out-pct 90 --seed 6 || fail "4K, MADV_PAGEOUT"
swap_integrity --size 64 --thp --evict memcg-max --limit 24 --seed 7 || fail "THP, memory.max"
swap_integrity --size 32 --no-thp --evict memcg-high --limit 12 --zero-every 3 --seed 8 || fail "4K with zero pages, memory.high"
swapoff_all
