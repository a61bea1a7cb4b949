# /sys/kernel/mm/mmtune/swap_slots: defaults, accepted and refused writes
# (EINVAL, old value kept), the activate > deactivate rule, read-only
# counters, and the static key following enabled.
. /lib.sh
load_mmtune
assert_eq "$(slots enabled)" 0 "swap_slots/enabled default"
assert_eq "$(slots cache_size)" 64 "swap_slots/cache_size default"
assert_eq "$(slots activate_factor)" 5 "swap_slots/activate_factor default"
assert_eq "$(slots deactivate_factor)" 2 "swap_slots/deactivate_factor default"
assert_eq "$(hooks_state swap_slots)" off "swap_slots key with enabled=0"
grep -qx "swap_slots off" $MMTUNE_SYSFS/features || fail "features does not say 'swap_slots off'"

assert_write_ok "$MMTUNE_SLOTS/enabled" 1
assert_eq "$(hooks_state swap_slots)" on "swap_slots key with enabled=1"
for bad in 2 -1 yes " 1" 1x ""; do
	assert_write_rejected "$MMTUNE_SLOTS/enabled" "$bad"
done
assert_write_ok "$MMTUNE_SLOTS/enabled" 0
assert_eq "$(hooks_state swap_slots)" off "swap_slots key back off"

for ok in 16 1024 512 64; do
	assert_write_ok "$MMTUNE_SLOTS/cache_size" $ok
done
for bad in 15 1025 0 -64 4294967360 abc 64k ""; do
	assert_write_rejected "$MMTUNE_SLOTS/cache_size" "$bad"
done

assert_write_ok "$MMTUNE_SLOTS/activate_factor" 64
assert_write_ok "$MMTUNE_SLOTS/deactivate_factor" 63
assert_write_ok "$MMTUNE_SLOTS/deactivate_factor" 0
assert_write_ok "$MMTUNE_SLOTS/activate_factor" 1
for bad in 0 65 x ""; do
	assert_write_rejected "$MMTUNE_SLOTS/activate_factor" "$bad"
done
# deactivate must stay below activate (1 now), whichever is written.
for bad in 1 2 64 -1; do
	assert_write_rejected "$MMTUNE_SLOTS/deactivate_factor" "$bad"
done
assert_write_ok "$MMTUNE_SLOTS/activate_factor" 5
assert_write_ok "$MMTUNE_SLOTS/deactivate_factor" 4
assert_write_rejected "$MMTUNE_SLOTS/activate_factor" 4
assert_write_rejected "$MMTUNE_SLOTS/activate_factor" 3
assert_write_ok "$MMTUNE_SLOTS/deactivate_factor" 2

for c in alloc alloc_hit alloc_direct refill refill_slots free free_cached \
	flush flush_slots drains activations deactivations active cached; do
	assert_eq "$(sysfs_write "$MMTUNE_SLOTS/$c" 5)" EACCES "writing $c"
done
for c in alloc alloc_hit alloc_direct refill refill_slots free free_cached \
	flush flush_slots activations deactivations; do
	assert_eq "$(slots $c)" 0 "counter $c at load"
done
unload_mmtune
