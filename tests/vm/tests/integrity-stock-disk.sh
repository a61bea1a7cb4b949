# The patched kernel without the module swaps to the virtio disk byte for
# byte: THPs (whole, via MADV_PAGEOUT) and 4K pages, by MADV_PAGEOUT and by
# memcg limits.
. /lib.sh
thp_always
swapon_disk
swap_integrity --size 64 --thp --evict pageout --expect-thp-swpout --min-out-pct 90 || fail "THP, MADV_PAGEOUT"
swap_integrity --size 32 --no-thp --evict pageout --min-out-pct 90 --seed 2 || fail "4K, MADV_PAGEOUT"
swap_integrity --size 64 --thp --evict memcg-max --limit 24 --seed 3 || fail "THP, memory.max"
swap_integrity --size 32 --no-thp --evict memcg-high --limit 12 --seed 4 || fail "4K, memory.high"
swapoff_all
