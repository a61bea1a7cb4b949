# pcp_high: what the knobs do to the bounds the kernel enforces (the knobs'
# ranges and refusals are in core-knobs): stock bounds with the tuner off,
# high_max and high_min following their fractions live, high_min never above
# high_max, observe keeping the hooks on with stock bounds, and a non-zero
# vm.percpu_pagelist_high_fraction pinning high for the tuner too.
# tier: check
. /lib.sh
require_feature pcp_high
load_mmtune
mmtune_pcp zones
# Stock: both bounds equal the static high, on every zone.
for z in $(awk '{ print $2 }' "$MMTUNE_PCP/zones"); do
	assert_eq "$(pcp_zone bmax "$z")" "$(pcp_zone bmin "$z")" "$z high_max = high_min with the tuner off"
	assert_eq "$(pcp_zone high_max "$z")" "$(pcp_zone bmin "$z")" "$z high = static high with the tuner off"
done
stock_min=$(pcp_zone bmin)

assert_write_ok "$MMTUNE_PCP/enabled" 1
mmtune_pcp zones
assert_eq "$(pcp_zone bmin)" "$stock_min" "DMA32 high_min stays the static high"
managed=$(awk '/^Node/ { z = $4 } z == "DMA32" && $1 == "managed" { print $2; exit }' /proc/zoneinfo)
ncpu=$(grep -c '^processor' /proc/cpuinfo)
assert_eq "$(pcp_zone bmax)" $((managed / 8 / ncpu)) "DMA32 high_max = managed / 8 / CPUs"

assert_write_ok "$MMTUNE_PCP/high_max_fraction" 100
# high_max is never below the static high.
exp=$((managed / 100 / ncpu)); [ $exp -lt "$stock_min" ] && exp=$stock_min
assert_eq "$(pcp_zone bmax)" $exp "DMA32 high_max follows high_max_fraction live"
assert_write_ok "$MMTUNE_PCP/high_min_fraction" 200
exp=$((managed / 200 / ncpu)); [ $exp -gt "$stock_min" ] && exp=$stock_min
assert_eq "$(pcp_zone bmin)" $exp "DMA32 high_min follows high_min_fraction, never above the static high"
for bad in 50 99 7 1; do
	assert_write_rejected "$MMTUNE_PCP/high_min_fraction" "$bad"	# high_min above high_max, or 1-7
done
assert_write_rejected "$MMTUNE_PCP/high_max_fraction" 201	# high_max below high_min
assert_write_ok "$MMTUNE_PCP/high_min_fraction" 0
assert_write_ok "$MMTUNE_PCP/high_max_fraction" 8
assert_eq "$(pcp_zone bmin)" "$stock_min" "DMA32 high_min back to the static high"

# observe: the key stays on, the tuner off, the bounds stock.
assert_write_ok "$MMTUNE_PCP/observe" 1
assert_eq "$(hooks_state pcp_high)" on "pcp_high key with observe=1"
assert_eq "$(pcp_zone bmax)" "$stock_min" "DMA32 high_max stock while observing"
assert_write_ok "$MMTUNE_PCP/observe" 0
assert_eq "$(pcp_zone bmax)" $((managed / 8 / ncpu)) "DMA32 high_max tuned again"

# The operator's sysctl wins: with vm.percpu_pagelist_high_fraction set,
# high_min = high_max = its value, and churn moves no high.
echo 100 >/proc/sys/vm/percpu_pagelist_high_fraction || fail "sysctl"
zoneinfo_highs >/tmp/highs0
pcp_churn fault --threads 2 --mib 32 --rounds 10 >/dev/null || fail "pcp_churn"
zoneinfo_highs >/tmp/highs1
diff /tmp/highs0 /tmp/highs1 || fail "a high moved with percpu_pagelist_high_fraction=100"
assert_eq "$(pcp_zone bmax)" "$(pcp_zone bmin)" "DMA32 bounds equal under the sysctl"
echo 0 >/proc/sys/vm/percpu_pagelist_high_fraction
assert_write_ok "$MMTUNE_PCP/enabled" 0
assert_eq "$(pcp_zone bmax)" "$stock_min" "DMA32 high_max stock with enabled=0"
unload_mmtune
assert_hooks_idle
