# swapoff/swapon cycles while two processes swap through the cache: the
# kernel's swapoff drain hook returns every cached slot (otherwise
# swapoff would wait forever for them), and both loads read back equal.
# Two devices, so that swapoff of one always leaves swap to run on.
. /lib.sh
require_feature swap_slots
swapon_zram 512M
echo 0 >/sys/block/vda/queue/rotational
mkswap /dev/vda >/dev/null || fail "mkswap /dev/vda"
swapon_prio /dev/vda 5 || fail "swapon /dev/vda"
slots_setup 256
slots_load_start
drains=$(slots drains)
for i in 1 2; do
	timeout 120 swapoff /dev/zram0 || fail "swapoff zram under load, cycle $i (a cached slot would hang it)"
	assert_eq "$(grep -c zram0 /proc/swaps)" 0 "zram0 gone after swapoff, cycle $i"
	swapon_prio /dev/zram0 10 || fail "swapon zram cycle $i"
	sleep 1
	timeout 120 swapoff /dev/vda || fail "swapoff vda under load, cycle $i"
	swapon_prio /dev/vda 5 || fail "swapon vda cycle $i"
	sleep 1
done
assert_ge $(( $(slots drains) - drains )) 4 "drains by swapoff"
slots_load_stop
unload_mmtune
swapoff /dev/vda
