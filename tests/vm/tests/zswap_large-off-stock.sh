# zswap/enabled=0 (and no module at all) gives stock 6.1: zswap refuses
# THPs, they go to the disk whole, and mmtune counts nothing.
# tier: check
. /lib.sh
require_feature zswap_large
zswap_large_setup stock

check_stock() {
	swap_integrity --size 32 --thp --fill compressible --evict pageout --min-out-pct 100 --seed "$2" >/tmp/si.out ||
		{ cat /tmp/si.out; fail "$1: swap round trip failed"; }
	cat /tmp/si.out
	thps=$(si_delta /tmp/si.out thps)
	assert_ge "$thps" 14 "$1: THPs backing the 32 MiB region (of 16)"
	assert_eq "$(si_delta /tmp/si.out thp_swpout)" "$thps" "$1: vmstat thp_swpout delta"
	assert_eq "$(si_delta /tmp/si.out zswpout)" $(( $(si_delta /tmp/si.out pages) - thps * 512 )) "$1: vmstat zswpout delta (4K pages only)"
}

check_stock "no module" 31
load_mmtune
check_stock "module loaded, enabled=0" 32
assert_eq "$(mmtune_zswap thp_stored)" 0 "zswap/thp_stored with enabled=0"
assert_eq "$(mmtune_zswap fallback_disk)" 0 "zswap/fallback_disk with enabled=0"

# On, then off again: the switch takes effect both ways.
echo 1 >"$MMTUNE_ZSWAP/enabled"
swap_integrity --size 32 --thp --fill compressible --evict pageout --min-out-pct 100 --seed 33 >/tmp/si.out ||
	{ cat /tmp/si.out; fail "enabled=1: swap round trip failed"; }
assert_eq "$(si_delta /tmp/si.out thp_swpout)" 0 "enabled=1: vmstat thp_swpout delta"
assert_eq "$(mmtune_zswap thp_stored)" "$(si_delta /tmp/si.out thps)" "enabled=1: zswap/thp_stored"
echo 0 >"$MMTUNE_ZSWAP/enabled"
check_stock "enabled=1 then 0" 34
unload_mmtune
