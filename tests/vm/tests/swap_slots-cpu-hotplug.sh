# CPU offline drains that CPU's cache and closes it; online reopens it.
# Done twice under load, and the loads read back equal.
. /lib.sh
require_feature swap_slots
[ -e /sys/devices/system/cpu/cpu1/online ] || skip "cpu1 cannot go offline"
swapon_zram 1G
slots_setup 512
# Fill cpu1's cache: a round pinned to cpu1 leaves slots cached there.
taskset -c 1 swap_integrity --no-thp --size 16 --evict pageout --min-out-pct 100 >/tmp/si.out ||
	{ cat /tmp/si.out; fail "round on cpu1"; }
set -- $(slots_cached 1)
info "cpu1 holds $1 slots to allocate and $2 freed slots"
assert_ge $(( $1 + $2 )) 1 "slots cached on cpu1 before offline"
flush=$(slots flush_slots)
echo 0 >/sys/devices/system/cpu/cpu1/online || fail "cpu1 offline"
assert_eq "$(slots_cached 1)" "0 0" "cpu1's cache after offline"
assert_ge $(( $(slots flush_slots) - flush )) $(( $1 + $2 )) "slots returned by the offline drain"
echo 1 >/sys/devices/system/cpu/cpu1/online || fail "cpu1 online"
taskset -c 1 swap_integrity --no-thp --size 16 --evict pageout --min-out-pct 100 --seed 3 >/tmp/si.out ||
	{ cat /tmp/si.out; fail "round on cpu1 after online"; }
set -- $(slots_cached 1)
assert_ge $(( $1 + $2 )) 1 "cpu1 caches again after online"

slots_load_start
for i in 1 2; do
	echo 0 >/sys/devices/system/cpu/cpu1/online || fail "cpu1 offline under load ($i)"
	assert_eq "$(slots_cached 1)" "0 0" "cpu1's cache offline under load ($i)"
	sleep 1
	echo 1 >/sys/devices/system/cpu/cpu1/online || fail "cpu1 online under load ($i)"
	sleep 1
done
slots_load_stop
unload_mmtune
assert_eq "$(swap_used /dev/zram0)" 0 "zram slots in use after rmmod"
