# Tuner off, and rmmod, put every pageset's high in /proc/zoneinfo back to
# its exact stock value.
. /lib.sh
require_feature pcp_high
zoneinfo_highs >/tmp/stock.highs
cat /tmp/stock.highs
load_mmtune
zoneinfo_highs | cmp -s - /tmp/stock.highs || fail "loading the module changed pageset highs"
# Slowest decay: at the default 12% a second, a high raised early in a slow
# round (the KASAN kernel on a busy host: 33 s for the load) is back at
# stock when the round ends, and nothing would show that the tuner ran.
echo 1 >"$MMTUNE_PCP/decay_percent" || fail "decay_percent"
for round in 1 2; do
	echo 1 >"$MMTUNE_PCP/enabled" || fail "enable pcp"
	pcp_churn fault --threads 2 --mib 32 --rounds 10 || fail "load"
	zoneinfo_highs >/tmp/tuned.highs
	cmp -s /tmp/tuned.highs /tmp/stock.highs && fail "round $round: the load did not change any high"
	if [ $round = 1 ]; then
		echo 0 >"$MMTUNE_PCP/enabled" || fail "disable pcp"
		what="enabled=0"
	else
		unload_mmtune
		what="rmmod"
	fi
	zoneinfo_highs >/tmp/after.highs
	diff /tmp/stock.highs /tmp/after.highs || fail "highs after $what differ from stock"
	info "ok: every pageset high back to stock after $what"
done
assert_hooks_idle
