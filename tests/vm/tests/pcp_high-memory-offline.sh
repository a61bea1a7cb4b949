# Memory offline and online of a boot memory block (what hot-unplug does
# first; needs no qemu option) under pcp_churn, with pcp_high on and THPs
# being split, paged out and collapsed by thp_churn: offlining disables
# the zone's pagesets (high_min = high_max = 0) and online re-enables them;
# after each step every zone's high lies within its bounds again, no data
# moved by the offline migration changed, and with pcp_high off every high
# is the kernel's own value.
# timeout: 300
. /lib.sh
require_feature pcp_high
blk=$(memblk_bytes)
swapon_zram 512M
thp_always
load_mmtune
echo 1 >"$MMTUNE_PCP/enabled" || fail "enable pcp_high"
memory_churn_start 47
sleep 3

# The highest online blocks are the likeliest to hold only movable pages.
tried=0 victim=
for b in $(ls -d $MEMBLK/memory[0-9]* | sed 's/.*memory//' | sort -rn); do
	[ "$(memblk_state "$b")" = online ] || continue
	tried=$((tried + 1))
	[ $tried -gt 8 ] && break
	if memblk_set "$b" offline; then victim=$b; break; fi
	info "memory$b: offline refused (unmovable pages)"
done
if [ -z "$victim" ]; then
	touch /tmp/churn.stop /tmp/tc.stop; wait
	skip "no boot memory block could be offlined (tried $tried)"
fi
info "memory$victim ($((blk >> 20)) MiB, zones now: $(cat $MEMBLK/memory$victim/valid_zones)) offline"
total_off=$(memtotal_kib)
for cycle in 1 2 3; do
	[ $cycle -gt 1 ] && { memblk_set "$victim" offline 60 || fail "cycle $cycle: offline memory$victim"; }
	assert_eq "$(memblk_state "$victim")" offline "cycle $cycle: memory$victim state"
	pcp_bounds_sane "cycle $cycle, offline"
	memblk_set "$victim" online || fail "cycle $cycle: online memory$victim"
	assert_eq "$(memblk_state "$victim")" online "cycle $cycle: memory$victim state"
	assert_eq $(( $(memtotal_kib) - total_off )) $((blk >> 10)) "cycle $cycle: MemTotal grew back by the block (KiB)"
	cat "$MMTUNE_PCP/zones"
	pcp_bounds_sane "cycle $cycle, online"
	sleep 2
done

memory_churn_end "across the offline cycles"
