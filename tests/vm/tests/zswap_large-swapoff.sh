# swapoff while THPs sit in zswap: it pulls every subpage back in, leaves
# no zswap entry, and the process reads back equal data.
# tier: check
. /lib.sh
require_feature zswap_large
zswap_large_setup

start_held_round 51
assert_ge "$(mmtune_zswap thp_stored)" 28 "THPs in zswap before swapoff"
assert_ge "$(zswap_stored_pages)" $((28 * 512)) "zswap stored_pages before swapoff"
swapoff /dev/vda || fail "swapoff with THPs in zswap"
assert_eq "$(zswap_stored_pages)" 0 "zswap stored_pages after swapoff"
touch /tmp/hold/go
wait $held || { cat /tmp/held.out; fail "held process: round trip across swapoff failed"; }
cat /tmp/held.out

# Swap works again afterwards.
swapon /dev/vda || fail "swapon again"
swap_integrity --size 32 --thp --fill compressible --evict pageout --seed 52 >/tmp/si.out ||
	{ cat /tmp/si.out; fail "after swapon: swap round trip failed"; }
assert_eq "$(si_delta /tmp/si.out thp_swpout)" 0 "after swapon: vmstat thp_swpout delta"
unload_mmtune
