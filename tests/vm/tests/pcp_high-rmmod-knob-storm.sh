# timeout: 600
# A knob write that races rmmod cannot widen the pcp bounds after the
# unload put the static ones back: the module refuses knob writes once it
# is unloading, and the kernel takes bounds only from the registered ops.
# Ten cycles of load, tune, and rmmod under a storm of high_max_fraction
# writes; after each, every pageset high is the stock one and so are the
# bounds (read through a fresh mmtune with pcp_high off: high_min and
# high_max of DMA32 both equal the stock high).
. /lib.sh
require_feature pcp_high
zoneinfo_highs >/tmp/stock.highs
stock=$(awk '$1 == "DMA32" { print $3; exit }' /tmp/stock.highs)
load_mmtune
assert_eq "$(pcp_zone bmin) $(pcp_zone bmax)" "$stock $stock" "DMA32 bounds before the first cycle (high_min high_max)"
unload_mmtune
for i in $(seq 10); do
	load_mmtune
	echo 1 >"$MMTUNE_PCP/enabled" || fail "enable pcp_high ($i)"
	rm -f /tmp/storm.stop
	for w in 1 2; do
		(
			f=$MMTUNE_PCP/high_max_fraction
			while [ ! -e /tmp/storm.stop ] && [ -e "$f" ]; do
				echo 8 >"$f" 2>/dev/null
				echo $((8 + w * 8)) >"$f" 2>/dev/null
			done
		) &
	done
	sleep 0.$((i % 5 + 2))
	unload_mmtune
	touch /tmp/storm.stop
	wait
	zoneinfo_highs >/tmp/after.highs
	diff /tmp/stock.highs /tmp/after.highs ||
		fail "cycle $i: highs after rmmod under knob writes differ from stock"
	load_mmtune
	assert_eq "$(pcp_zone bmin) $(pcp_zone bmax)" "$stock $stock" "cycle $i: DMA32 bounds after rmmod (high_min high_max)"
	unload_mmtune
done
info "10 rmmods under high_max_fraction writes: every high stock after each"
