# /sys/kernel/mm/mmtune/thp_swap and split_zero: defaults, accepted and
# refused writes (EINVAL, old value kept), threshold <= sample_size both
# ways, read-only counters, and the static keys following policy and mode.
. /lib.sh
load_mmtune
assert_eq "$(thp_knob policy)" whole "thp_swap/policy default"
assert_eq "$(thp_knob sample_size)" 32 "thp_swap/sample_size default"
assert_eq "$(thp_knob threshold)" 4 "thp_swap/threshold default"
assert_eq "$(sz_knob mode)" never "split_zero/mode default"
for f in thp_swap split_zero; do
	assert_eq "$(hooks_state $f)" off "$f key at load"
	grep -qx "$f off" $MMTUNE_SYSFS/features || fail "features does not say '$f off'"
done

for p in split adaptive whole adaptive; do
	assert_write_ok "$MMTUNE_THP/policy" $p
done
assert_eq "$(hooks_state thp_swap)" on "thp_swap key with policy=adaptive"
grep -qx "thp_swap on" $MMTUNE_SYSFS/features || fail "features does not say 'thp_swap on'"
for bad in "" Whole wholes " whole" "whole x" 0 1 never reclaim-only; do
	assert_write_rejected "$MMTUNE_THP/policy" "$bad"
done
assert_eq "$(hooks_state thp_swap)" on "thp_swap key after rejected writes"
assert_write_ok "$MMTUNE_THP/policy" whole
assert_eq "$(hooks_state thp_swap)" off "thp_swap key with policy=whole"

for m in reclaim-only always never always; do
	assert_write_ok "$MMTUNE_SZ/mode" $m
done
assert_eq "$(hooks_state split_zero)" on "split_zero key with mode=always"
for bad in "" reclaim Never whole split "always x" 1; do
	assert_write_rejected "$MMTUNE_SZ/mode" "$bad"
done
assert_write_ok "$MMTUNE_SZ/mode" never
assert_eq "$(hooks_state split_zero)" off "split_zero key with mode=never"

assert_write_ok "$MMTUNE_THP/sample_size" 512
assert_write_ok "$MMTUNE_THP/threshold" 512
for bad in 511 1 0; do
	assert_write_rejected "$MMTUNE_THP/sample_size" "$bad"	# below threshold 512
done
assert_write_ok "$MMTUNE_THP/threshold" 0
assert_write_ok "$MMTUNE_THP/sample_size" 1
for bad in 2 512 513; do
	assert_write_rejected "$MMTUNE_THP/threshold" "$bad"	# above sample_size 1
done
assert_write_ok "$MMTUNE_THP/threshold" 1
for bad in 0 513 -1 "" 32x 0x20 4294967297; do
	assert_write_rejected "$MMTUNE_THP/sample_size" "$bad"
done
for bad in 513 -1 "" 4x 0x4; do
	assert_write_rejected "$MMTUNE_THP/threshold" "$bad"
done

for c in thp_whole thp_split subpages_sampled subpages_sampled_zero; do
	assert_eq "$(thp_knob $c)" 0 "thp_swap/$c at load"
	assert_eq "$(sysfs_write "$MMTUNE_THP/$c" 5)" EACCES "writing thp_swap/$c"
done
for c in splits_scanned subpages_scanned subpages_zero zero_ptes_mapped \
	subpages_dropped bytes_not_written; do
	assert_eq "$(sz_knob $c)" 0 "split_zero/$c at load"
	assert_eq "$(sysfs_write "$MMTUNE_SZ/$c" 5)" EACCES "writing split_zero/$c"
done
unload_mmtune
assert_hooks_idle
