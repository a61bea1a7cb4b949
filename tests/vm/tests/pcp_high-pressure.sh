# Under memory pressure (zone free pages below the high watermark) high
# stops growing: a load like the one that raised it raises it no more, and
# frees lower it to high_min.
. /lib.sh
require_feature pcp_high
old_mfk=$(cat /proc/sys/vm/min_free_kbytes)
trap 'echo $old_mfk >/proc/sys/vm/min_free_kbytes' EXIT
load_mmtune
echo 1 >"$MMTUNE_PCP/enabled" || fail "enable pcp"
# 32 MiB regions: more than the static high (about 7000 pages here).
pcp_churn fault --threads 2 --mib 32 --rounds 10 || fail "load"
mmtune_pcp zones
assert_ge "$(mmtune_pcp raises)" 1 "raises without pressure"
# Watermarks around the free memory: min 3/4 of it, low 15/16, high 9/8.
# The static high follows the low watermark (vm.percpu_pagelist_high_fraction
# would pin high for the tuner too), so the bounds are read after this.
free_kb=$(awk '$1 == "MemFree:" { print $2 }' /proc/meminfo)
echo $((free_kb * 3 / 4)) >/proc/sys/vm/min_free_kbytes || fail "set min_free_kbytes"
grep -E '^Node|^ +(pages free|min|low|high) ' /proc/zoneinfo
# ZONE_BELOW_HIGH is updated on refills and drains: a first round sets it.
pcp_churn fault --threads 2 --mib 8 --rounds 2 || fail "warm-up under pressure"
bounds="$(pcp_zone bmin) $(pcp_zone bmax)"
r0=$(mmtune_pcp raises) l0=$(mmtune_pcp lowers) h0=$(pcp_zone high_max)
pcp_churn fault --threads 2 --mib 8 --rounds 40 || fail "load under pressure"
# Read everything before the pressure goes: refills after it may raise.
r1=$(mmtune_pcp raises) l1=$(mmtune_pcp lowers) h1=$(pcp_zone high_max)
b1="$(pcp_zone bmin) $(pcp_zone bmax)"
mmtune_pcp zones
echo $old_mfk >/proc/sys/vm/min_free_kbytes
echo "raises $r0 -> $r1, lowers $l0 -> $l1"
assert_eq "$b1" "$bounds" "DMA32 bounds unchanged"
assert_eq "$r1" "$r0" "raises under pressure"
assert_ge "$l1" "$l0" "lowers under pressure (not fewer)"
assert_le "$h1" "$h0" "DMA32 high max under pressure"
assert_eq "$h1" "$(echo $bounds | cut -d' ' -f1)" "DMA32 high max back at high_min under pressure"
unload_mmtune
