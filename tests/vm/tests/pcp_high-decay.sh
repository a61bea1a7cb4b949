# Once the load stops, every pageset's high decays back to high_min and the
# pages above it go back to the zone, within 60 s (sysfs-docs: decay_percent).
# The CPUs are kept from sleeping through it: the vmstat worker that runs
# the decay is deferrable, so a fully idle CPU decays at its next wakeup.
. /lib.sh
require_feature pcp_high
load_mmtune
echo 1 >"$MMTUNE_PCP/enabled" || fail "enable pcp"
# The slowest decay while the load runs: on a busy host the load takes
# minutes, and the default decay would undo the raise meanwhile (as in pcp_high-raise).
decay=$(cat "$MMTUNE_PCP/decay_percent")
echo 1 >"$MMTUNE_PCP/decay_percent" || fail "decay_percent 1"
pcp_churn fault --threads 2 --mib 32 --rounds 20 || fail "load"
mmtune_pcp zones
bmin=$(pcp_zone bmin)
assert_ge "$(pcp_zone high_max)" $((bmin + 63)) "DMA32 high max after the load"
echo "$decay" >"$MMTUNE_PCP/decay_percent" || fail "decay_percent back to $decay"
start=$(cut -d. -f1 /proc/uptime)
while :; do
	now=$(cut -d. -f1 /proc/uptime)
	# One snapshot per check: any later allocation may raise high again.
	hmax=$(pcp_zone high_max) hmin=$(pcp_zone high_min) cmax=$(pcp_zone count_max)
	[ "$hmax" -le "$bmin" ] && [ "$cmax" -le "$bmin" ] && break
	[ $((now - start)) -gt 60 ] && { mmtune_pcp zones; fail "high not back to high_min after 60 s"; }
	pcp_poke_cpus
	sleep 1
done
mmtune_pcp zones
echo "decayed to high_min in $((now - start)) s"
assert_eq "$hmax" "$bmin" "DMA32 high max when decayed"
assert_eq "$hmin" "$bmin" "DMA32 high min when decayed"
assert_ge "$(mmtune_pcp decays)" 1 "decay steps"
unload_mmtune
