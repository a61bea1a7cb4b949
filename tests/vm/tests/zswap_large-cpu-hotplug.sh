# timeout: 600
# CPU hot-unplug while whole THPs are stored in and loaded from zswap: zswap
# frees a CPU's compression context when the CPU dies, and a store or load
# that looked the context up on that CPU must not use it afterwards (patch
# 0001, the backport of upstream's "properly synchronize freeing resources
# during CPU hotunplug"). Two writers store and load 2M THPs through
# zswap_large (512 sleepable stores each) while cpu1 goes offline and
# online every half second for 20 s (about 16 cycles when idle; 40 s on
# the slower debug kernel); every byte reads back equal and the console
# scan catches a KASAN or lockdep report on the debug kernel.
. /lib.sh
require_feature zswap_large
cpu1=/sys/devices/system/cpu/cpu1/online
[ -w $cpu1 ] || skip "cpu1 cannot be offlined"
zswap_large_setup
stored=$(mmtune_zswap thp_stored) loads=$(vmstat zswpin)
si_loops_start writer --size 16 --thp --fill compressible --evict pageout --min-out-pct 50
secs=20
debug_kernel && secs=40
n=0 end=$(( $(date +%s) + secs ))
while [ "$(date +%s)" -lt $end ]; do
	echo 0 >$cpu1 || fail "offline cpu1 ($n)"
	sleep 0.5
	echo 1 >$cpu1 || fail "online cpu1 ($n)"
	sleep 0.5
	n=$((n + 1))
done
si_loops_stop writer
info "cpu1 offline/online $n times; THPs stored whole $(( $(mmtune_zswap thp_stored) - stored )), zswap loads $(( $(vmstat zswpin) - loads ))"
assert_ge "$n" 8 "hotplug cycles"
assert_ge $(( $(mmtune_zswap thp_stored) - stored )) 8 "THPs stored whole in zswap across hotplug"
unload_mmtune
zswap_disable
swapoff_all
