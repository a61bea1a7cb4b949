# Resizing the cache while two processes swap through it loses no data:
# every size change drains every CPU, and both loads read back every byte.
. /lib.sh
require_feature swap_slots
swapon_zram 1G
slots_setup 64
slots_load_start
drains=$(slots drains)
for size in 16 1024 128 512 32 256 64; do
	echo $size >"$MMTUNE_SLOTS/cache_size" || fail "resize to $size under load"
	assert_grows "allocations through the cache at size $size" 120 slots alloc
	for cpu in 0 1; do
		set -- $(slots_cached $cpu)
		assert_le "$1" $size "cpu$cpu alloc side at size $size"
		assert_le "$2" $size "cpu$cpu free side at size $size"
	done
done
assert_ge $(( $(slots drains) - drains )) 7 "drains, one per resize"
slots_load_stop
unload_mmtune
assert_eq "$(swap_used /dev/zram0)" 0 "zram slots in use after the loads and rmmod"
