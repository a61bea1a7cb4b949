# CPU offline/online while the tuner runs under load: clean (the console
# scan catches lockdep and warnings), bounds follow the CPU count, and the
# highs are stock again after rmmod.
. /lib.sh
require_feature pcp_high
cpu1=/sys/devices/system/cpu/cpu1/online
[ -w $cpu1 ] || skip "cpu1 cannot be offlined"
zoneinfo_highs >/tmp/stock.highs
load_mmtune
echo 1 >"$MMTUNE_PCP/enabled" || fail "enable pcp"
two=$(pcp_zone bmax)
pcp_churn fault --threads 2 --mib 8 --seconds 20 >/tmp/h.out 2>&1 &
load=$!
for i in 1 2 3 4 5; do
	sleep 1
	echo 0 >$cpu1 || fail "offline cpu1 ($i)"
	[ $i = 1 ] && { one=$(pcp_zone bmax); mmtune_pcp zones; }
	sleep 1
	echo 1 >$cpu1 || fail "online cpu1 ($i)"
done
wait $load || { cat /tmp/h.out; fail "load across hotplug"; }
cat /tmp/h.out
mmtune_pcp zones
assert_eq "$(cat $cpu1)" 1 "cpu1 online"
echo "DMA32 high_max: two CPUs $two, cpu1 offline $one"
assert_ge "$one" "$two" "DMA32 high_max with one CPU"
assert_eq "$(pcp_zone bmax)" "$two" "DMA32 high_max with cpu1 back"
assert_le "$(pcp_zone high_max)" "$two" "DMA32 high within high_max"
unload_mmtune
zoneinfo_highs >/tmp/after.highs
diff /tmp/stock.highs /tmp/after.highs || fail "highs after hotplug and rmmod differ from stock"
