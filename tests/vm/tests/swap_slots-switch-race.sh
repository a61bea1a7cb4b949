# Switching swap_slots off waits for every caller, even one that tested the
# static key and was preempted before entering the hook (the hook core tests
# the key again inside its read section): with full preemption, 4 writers
# and a CPU hog per vCPU, 500 on/off cycles, every CPU's cache empty after
# each off, and swapoff of every device within 60 s at the end.
# (Under "-accel tcg,thread=multi" this test hung within minutes, both
# vCPUs looping on an int3 that was no longer in memory: a qemu TCG bug, see
# tests/vm/repro/repro-tcg-stock-key-flip.sh; the VM runner uses thread=single.)
# slow: 500 cycles take 5-10 minutes under TCG
# timeout: 1200
. /lib.sh
require_feature swap_slots
if [ -w /sys/kernel/debug/sched/preempt ]; then
	echo full >/sys/kernel/debug/sched/preempt || fail "preempt=full"
	info "preemption: $(cat /sys/kernel/debug/sched/preempt)"
fi
swapon_zram 1G
echo 0 >/sys/block/vda/queue/rotational
mkswap /dev/vda >/dev/null || fail "mkswap /dev/vda"
swapon /dev/vda || fail "swapon /dev/vda"
slots_setup 64
slots_load_start
# Two more writers and a hog per vCPU, so that hook callers get preempted.
for p in 3 4; do
	( while [ ! -e /tmp/load/stop ]; do
		swap_integrity --no-thp --size 32 --evict memcg-max --limit 16 --min-out-pct 25 \
			--seed $p >/tmp/load/$p.out 2>&1 || { cat /tmp/load/$p.out; touch /tmp/load/fail.$p; exit 1; }
	done ) &
done
for c in 0 1; do taskset -c $c sh -c 'while [ ! -e /tmp/load/stop ]; do :; done' & done
cycles=500
i=0
while [ $i -lt $cycles ]; do
	i=$((i + 1))
	echo 0 >"$MMTUNE_SLOTS/enabled" || fail "cycle $i: disable"
	busy=$(awk '$2 != 0 || $3 != 0' "$MMTUNE_SLOTS/cached")
	[ -z "$busy" ] || fail "cycle $i: slots cached after enabled=0: $busy"
	echo 1 >"$MMTUNE_SLOTS/enabled" || fail "cycle $i: enable"
done
info "$cycles on/off cycles, every cache empty after each off"
assert_ge "$(slots alloc)" 1000 "allocations through the cache meanwhile"
slots_load_stop
wait
ls /tmp/load/fail.* 2>/dev/null && fail "an extra writer lost data"
for dev in /dev/zram0 /dev/vda; do
	timeout 60 swapoff "$dev" || fail "swapoff $dev did not finish within 60 s"
done
unload_mmtune
assert_hooks_idle
