# /sys/kernel/mm/mmtune/pcp: defaults, accepted and refused writes (EINVAL,
# old value kept, high_min never above high_max), read-only counters, the
# static key following enabled/observe, and the bounds the kernel enforces.
. /lib.sh
load_mmtune
assert_eq "$(mmtune_pcp enabled)" 0 "pcp/enabled default"
assert_eq "$(mmtune_pcp observe)" 0 "pcp/observe default"
assert_eq "$(mmtune_pcp high_max_fraction)" 8 "pcp/high_max_fraction default"
assert_eq "$(mmtune_pcp high_min_fraction)" 0 "pcp/high_min_fraction default"
assert_eq "$(mmtune_pcp decay_percent)" 12 "pcp/decay_percent default"
assert_eq "$(hooks_state pcp_high)" off "pcp_high key with enabled=0"
grep -qx "pcp_high off" $MMTUNE_SYSFS/features || fail "features does not say 'pcp_high off'"
mmtune_pcp zones
# Stock: both bounds equal the static high, on every zone.
for z in $(awk '{ print $2 }' "$MMTUNE_PCP/zones"); do
	assert_eq "$(pcp_zone bmax "$z")" "$(pcp_zone bmin "$z")" "$z high_max = high_min with the tuner off"
	assert_eq "$(pcp_zone high_max "$z")" "$(pcp_zone bmin "$z")" "$z high = static high with the tuner off"
done
stock_min=$(pcp_zone bmin)

assert_write_ok "$MMTUNE_PCP/enabled" 1
assert_eq "$(hooks_state pcp_high)" on "pcp_high key with enabled=1"
grep -qx "pcp_high on" $MMTUNE_SYSFS/features || fail "features does not say 'pcp_high on'"
mmtune_pcp zones
assert_eq "$(pcp_zone bmin)" "$stock_min" "DMA32 high_min stays the static high"
managed=$(awk '/^Node/ { z = $4 } z == "DMA32" && $1 == "managed" { print $2; exit }' /proc/zoneinfo)
ncpu=$(grep -c '^processor' /proc/cpuinfo)
assert_eq "$(pcp_zone bmax)" $((managed / 8 / ncpu)) "DMA32 high_max = managed / 8 / CPUs"
for bad in 2 -1 yes on " 1" 1x 0x1 10 ""; do
	assert_write_rejected "$MMTUNE_PCP/enabled" "$bad"
done
assert_eq "$(hooks_state pcp_high)" on "pcp_high key after rejected writes"

# Fractions: ranges, and high_min may never exceed high_max.
assert_write_ok "$MMTUNE_PCP/high_max_fraction" 10000
assert_write_ok "$MMTUNE_PCP/high_max_fraction" 100
# high_max is never below high_min (the static high).
exp=$((managed / 100 / ncpu)); [ $exp -lt "$stock_min" ] && exp=$stock_min
assert_eq "$(pcp_zone bmax)" $exp "DMA32 high_max follows high_max_fraction live"
for bad in 7 0 10001 -8 abc "" 1e3 4294967304; do
	assert_write_rejected "$MMTUNE_PCP/high_max_fraction" "$bad"
done
assert_write_ok "$MMTUNE_PCP/high_min_fraction" 200
assert_eq "$(pcp_zone bmin)" $((managed / 200 / ncpu)) "DMA32 high_min follows high_min_fraction"
assert_write_ok "$MMTUNE_PCP/high_min_fraction" 100
for bad in 50 8 1 7 10001 -1 x ""; do
	assert_write_rejected "$MMTUNE_PCP/high_min_fraction" "$bad"
done
# high_max_fraction above high_min_fraction would put high_max below high_min.
assert_write_rejected "$MMTUNE_PCP/high_max_fraction" 101
assert_write_ok "$MMTUNE_PCP/high_max_fraction" 8
assert_write_ok "$MMTUNE_PCP/high_min_fraction" 0
assert_eq "$(pcp_zone bmin)" "$stock_min" "DMA32 high_min back to the static high"

assert_write_ok "$MMTUNE_PCP/decay_percent" 1
assert_write_ok "$MMTUNE_PCP/decay_percent" 100
assert_write_ok "$MMTUNE_PCP/decay_percent" 12
for bad in 0 101 -1 12.5 ""; do
	assert_write_rejected "$MMTUNE_PCP/decay_percent" "$bad"
done

for c in refill_calls refill_pages drains free_high raises lowers decays zones; do
	assert_eq "$(sysfs_write "$MMTUNE_PCP/$c" 5)" EACCES "writing $c"
done

# observe keeps the key on with the tuner off; stock bounds meanwhile.
assert_write_ok "$MMTUNE_PCP/observe" 1
assert_write_ok "$MMTUNE_PCP/enabled" 0
assert_eq "$(hooks_state pcp_high)" on "pcp_high key with observe=1"
grep -qx "pcp_high on" $MMTUNE_SYSFS/features || fail "features does not say 'pcp_high on' with observe"
assert_eq "$(pcp_zone bmax)" "$stock_min" "DMA32 high_max stock with observe only"
assert_write_rejected "$MMTUNE_PCP/observe" 2
assert_write_ok "$MMTUNE_PCP/observe" 0
assert_eq "$(hooks_state pcp_high)" off "pcp_high key with enabled=0 observe=0"
unload_mmtune
assert_hooks_idle
