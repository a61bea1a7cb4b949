# Guest test helpers for the swap_slots feature. Sourced by lib.sh.
# --- mmtune's swap slot cache ----------------------------------------------
MMTUNE_SLOTS=$MMTUNE_SYSFS/swap_slots
slots() { cat "$MMTUNE_SLOTS/$1"; }

# slots_setup [SIZE]: mmtune loaded with its slot cache on at SIZE (64).
slots_setup() {
	load_mmtune
	echo "${1:-64}" >"$MMTUNE_SLOTS/cache_size" || fail "swap_slots/cache_size"
	echo 1 >"$MMTUNE_SLOTS/enabled" || fail "enable swap_slots"
}

# swap_used DEV: pages in use on a swap device, from /proc/swaps (KiB / 4).
swap_used() { awk -v d="$1" '$1 == d { print int($4 / 4) }' /proc/swaps; }

# swap_cached: pages in the swap cache, from /proc/meminfo (KiB / 4).
swap_cached() { awk '/^SwapCached:/ { print int($2 / 4) }' /proc/meminfo; }

# slots_cached CPU: "<alloc> <free>" slots that CPU's cache holds (the
# file lists only CPUs whose cache holds slots).
slots_cached() {
	awk -v c="cpu$1" '$1 == c { print $2, $3; found = 1 } END { if (!found) print 0, 0 }' "$MMTUNE_SLOTS/cached"
}

# slots_cached_total: slots held in every CPU's cache, both sides.
slots_cached_total() { awk '$1 ~ /^cpu/ { n += $2 + $3 } END { print n + 0 }' "$MMTUNE_SLOTS/cached"; }

# slots_load_start: two 4K-page swap_integrity loops under memory.max
# (si_loops_start load). slots_load_stop: stop and check them.
slots_load_start() {
	si_loops_start load --no-thp --size 48 --evict memcg-max --limit 24 --min-out-pct 25
	sleep 2
}
slots_load_stop() { si_loops_stop load; }
