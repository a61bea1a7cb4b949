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
