# Two swap devices of different priorities: the cache takes its slots from
# the higher one as long as it has room, and from the lower one only once
# the higher one is full, like the stock allocator. Data reads back equal.
. /lib.sh
require_feature swap_slots
swapon_zram 128M
swapoff /dev/zram0 && swapon_prio /dev/zram0 10 || fail "swapon zram prio 10"
echo 0 >/sys/block/vda/queue/rotational
mkswap /dev/vda >/dev/null || fail "mkswap /dev/vda"
swapon_prio /dev/vda 5 || fail "swapon /dev/vda prio 5"
slots_setup 256
zram_pages=$(awk '$1 == "/dev/zram0" { print int($3 / 4) }' /proc/swaps)

# hold_round N MIB SEED: a swap_integrity that pages out and waits.
hold_round() {
	mkdir -p /tmp/hold$1
	swap_integrity --no-thp --size $2 --evict pageout --min-out-pct 100 --hold /tmp/hold$1 --seed $3 >/tmp/held$1.out 2>&1 &
	eval "held$1=\$!"
	wait_for /tmp/hold$1/evicted
}
rm -rf /tmp/hold1 /tmp/hold2
# 64 MiB fits the 128 MiB zram: nothing may land on the disk.
hold_round 1 64 66
assert_ge "$(swap_used /dev/zram0)" 16384 "slots on zram (prio 10) for 64 MiB"
assert_eq "$(swap_used /dev/vda)" 0 "slots on vda (prio 5) while zram has room"
# 96 MiB more overflow the zram: zram fills up, the disk takes the rest.
hold_round 2 96 67
zram=$(swap_used /dev/zram0) vda=$(swap_used /dev/vda)
info "after the overflow: zram $zram of $zram_pages pages, vda $vda"
assert_ge "$zram" $(( zram_pages - 512 )) "zram nearly full before the disk is used"
assert_ge "$vda" 1 "slots on vda once zram is full"
assert_ge $(( zram + vda )) $(( 160 * 256 )) "slots in use for 160 MiB held"
for i in 1 2; do
	touch /tmp/hold$i/go
	eval "pid=\$held$i"
	wait $pid || { cat /tmp/held$i.out; fail "held process $i: data changed"; }
	cat /tmp/held$i.out
done
unload_mmtune
assert_eq $(( $(swap_used /dev/zram0) + $(swap_used /dev/vda) )) 0 "slots in use after rmmod"
swapoff /dev/vda
