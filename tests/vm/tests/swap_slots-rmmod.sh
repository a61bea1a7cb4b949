# timeout: 240
# After rmmod, the slots in use are exactly those the processes still hold:
# the held process's swap entries plus orphaned swap cache pages (SwapCached,
# pages whose process exited; reclaim frees those later). Then rmmod while
# two processes swap through the cache, three times: clean, data equal.
. /lib.sh
require_feature swap_slots
swapon_zram 1G
slots_setup 1000
rm -rf /tmp/hold && mkdir /tmp/hold
swap_integrity --no-thp --size 32 --evict pageout --min-out-pct 100 --hold /tmp/hold --seed 65 >/tmp/held.out 2>&1 &
held=$!
wait_for /tmp/hold/evicted
held_pages=$(awk '/^VmSwap:/ { print int($2 / 4) }' /proc/$held/status)
assert_ge "$held_pages" 8192 "pages the held process has in swap (32 MiB)"
# A finished round leaves freed slots in the cache.
swap_integrity --no-thp --size 16 --evict pageout --min-out-pct 99 --seed 66 >/tmp/si.out ||
	{ cat /tmp/si.out; fail "second round"; }
assert_ge "$(swap_used /dev/zram0)" $(( held_pages + $(swap_cached) + 1 )) "slots in use while the cache holds some"
unload_mmtune
assert_hooks_idle
assert_eq "$(swap_used /dev/zram0)" $(( held_pages + $(swap_cached) )) "slots in use after rmmod (held VmSwap $held_pages + SwapCached)"

slots_setup 1000
slots_load_start
for i in 1 2 3; do
	unload_mmtune
	assert_hooks_idle
	slots_setup 1000
	sleep 1
done
slots_load_stop
unload_mmtune
touch /tmp/hold/go
wait $held || { cat /tmp/held.out; fail "held process: data changed across rmmod"; }
cat /tmp/held.out
