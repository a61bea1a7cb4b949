# Guest test helpers for the pcp_high feature. Sourced by lib.sh.
# --- PCP high tuning (pcp_high) ---------------------------------------------
MMTUNE_PCP=$MMTUNE_SYSFS/pcp_high
mmtune_pcp() { cat "$MMTUNE_PCP/$1"; }

# pcp_zone FIELD [ZONE]: a value of pcp_high/zones for ZONE (default DMA32);
# FIELD: high_min high_avg high_max count_min count_avg count_max bmin bmax
pcp_zone() {
	awk -v z="${2:-DMA32}" -v f="$1" '$2 == z {
		split("high_min high_avg high_max - count_min count_avg count_max - bmin bmax", n, " ")
		for (i = 1; i <= 10; i++) if (n[i] == f) print $(i + 3)
	}' "$MMTUNE_PCP/zones"
}

# Pages allocated so far (all zones).
pgalloc_total() { awk '/^pgalloc_/ { s += $2 } END { print s }' /proc/vmstat; }

# "<zone> <cpu> <high>" for every pageset in /proc/zoneinfo.
zoneinfo_highs() {
	awk '/^Node/ { z = $4 } $1 == "cpu:" { c = $2 } $1 == "high:" { print z, c, $2 }' /proc/zoneinfo
}

# stock_highs_now: the highs stock code computes now, with mmtune's pcp
# group off or unloaded (the sysctl's handler recomputes every zone when
# the value changes). Stock high follows the low watermark, watermark_boost
# included: a high set under a boost differs from one set without.
stock_highs_now() {
	local f
	f=$(cat /proc/sys/vm/percpu_pagelist_high_fraction)
	echo $((f == 8 ? 9 : 8)) >/proc/sys/vm/percpu_pagelist_high_fraction || fail "percpu_pagelist_high_fraction"
	echo "$f" >/proc/sys/vm/percpu_pagelist_high_fraction || fail "percpu_pagelist_high_fraction back"
	zoneinfo_highs
}

# wait_boost_clear SECONDS: every zone's watermark_boost back to 0 (kswapd
# clears it after reclaim); 1 if not within SECONDS.
wait_boost_clear() {
	local _
	for _ in $(seq "$1"); do
		awk '$1 == "boost" && $2 != 0 { b = 1 } END { exit b }' /proc/zoneinfo && return 0
		sleep 1
	done
	return 1
}

# pcp_refills_per_1000 CMD...: run CMD, print the refill_calls per 1000
# pages allocated meanwhile, times 1000 (an integer: 2500 = 2.5 refills per
# 1000 allocations). Needs enabled or observe on.
pcp_refills_per_1000() {
	r0=$(mmtune_pcp refill_calls) a0=$(pgalloc_total)
	"$@" >/tmp/pcp-load.out 2>&1 || { cat /tmp/pcp-load.out; fail "load $* failed"; }
	r1=$(mmtune_pcp refill_calls) a1=$(pgalloc_total)
	cat /tmp/pcp-load.out >&2
	echo "refills $((r1 - r0)) allocs $((a1 - a0))" >&2
	awk -v r=$((r1 - r0)) -v a=$((a1 - a0)) 'BEGIN { printf "%d\n", a ? r * 1000000 / a : 0 }'
}

# Keep every CPU awake for a few ticks. The vmstat worker, which decays the
# tuned high, is deferrable: on a CPU that stays idle it waits for a wakeup.
pcp_poke_cpus() {
	for c in $(seq 0 $(($(nproc) - 1))); do
		taskset -c "$c" sh -c 'i=0; while [ $i -lt 3000 ]; do i=$((i + 1)); done'
	done
}

# --- memory blocks (pcp_high-dimm-unplug, pcp_high-memory-offline) ---------
MEMBLK=/sys/devices/system/memory
memblk_bytes() { echo $((0x$(cat $MEMBLK/block_size_bytes))); }
memtotal_kib() { awk '/^MemTotal:/ { print $2 }' /proc/meminfo; }

# memblk_set BLOCK STATE [SECONDS]: write STATE (offline, online,
# online_movable) to memoryBLOCK/state within SECONDS (30); offlining loops
# on migration until a signal ends it.
memblk_set() {
	timeout "${3:-30}" sh -c "echo $2 >$MEMBLK/memory$1/state" 2>/dev/null
}
memblk_state() { cat "$MEMBLK/memory$1/state"; }

# pcp_bounds_sane WHAT: every populated zone's highs lie within its bounds,
# and the bounds are those of an enabled pageset (high_max > 0).
pcp_bounds_sane() {
	awk -v what="$1" '{
		hmin = $4; hmax = $6; bmin = $12; bmax = $13
		if (bmax <= 0 || bmin > bmax || hmin < bmin || hmax > bmax) {
			print "FAIL: " what ": zone " $2 ": high " hmin "-" hmax " outside bounds " bmin "-" bmax
			bad = 1
		}
	} END { exit bad }' "$MMTUNE_PCP/zones" || fail "$1: pageset high outside its bounds"
	info "ok: $1: every zone's high within its bounds"
}

# pcp_stock_highs_check WHAT: with pcp_high off, every high in
# /proc/zoneinfo is what the kernel computes itself (forced by flipping
# vm.percpu_pagelist_high_fraction, which recomputes every zone).
pcp_stock_highs_check() {
	zoneinfo_highs >/tmp/restored.highs
	f=$(cat /proc/sys/vm/percpu_pagelist_high_fraction)
	echo 8 >/proc/sys/vm/percpu_pagelist_high_fraction
	echo "$f" >/proc/sys/vm/percpu_pagelist_high_fraction
	zoneinfo_highs >/tmp/recomputed.highs
	diff /tmp/recomputed.highs /tmp/restored.highs || fail "$1: highs differ from the kernel's own (< kernel, > after pcp_high)"
	info "ok: $1: every pageset high equals the kernel's own value"
}

# pcp_churn_start / pcp_churn_stop: 4K fault churn on both CPUs until
# stopped; stop fails the test if a round failed.
pcp_churn_start() {
	rm -f /tmp/churn.stop /tmp/churn.fail
	( while [ ! -e /tmp/churn.stop ]; do
		pcp_churn fault --threads 2 --mib 16 --rounds 5 >/dev/null || { touch /tmp/churn.fail; exit 1; }
	done ) &
	churn_pid=$!
}
pcp_churn_stop() {
	touch /tmp/churn.stop
	wait "$churn_pid"
	[ ! -e /tmp/churn.fail ] || fail "pcp_churn failed"
}

# memory_churn_start SEED / memory_churn_end WHAT (pcp_high-dimm-unplug, pcp_high-memory-offline): pcp_churn
# and a thp_churn (content-checked THP split, pageout and collapse) until
# ended. The end fails the test if data changed, if pcp_high raised no high
# meanwhile, or if a high is not the kernel's own once pcp_high is off.
memory_churn_start() {
	raises=$(mmtune_pcp raises)
	pcp_churn_start
	rm -f /tmp/tc.stop
	thp_churn --mib 16 --writers 1 --seconds 100000 --stop-file /tmp/tc.stop --seed "$1" >/tmp/tc.out 2>&1 &
	tc=$!
}
memory_churn_end() {
	pcp_churn_stop
	touch /tmp/tc.stop
	wait $tc || { cat /tmp/tc.out; fail "thp_churn: data changed $1"; }
	cat /tmp/tc.out
	assert_ge $(( $(mmtune_pcp raises) - raises )) 1 "pcp_high/raises delta"
	echo 0 >"$MMTUNE_PCP/enabled" || fail "disable pcp_high"
	pcp_stock_highs_check "$1"
	unload_mmtune
}
