# Guest test helpers for zswap and the zswap_large feature. Sourced by lib.sh.
# --- zswap and mmtune's zswap feature --------------------------------------
ZSWAP_PARAMS=/sys/module/zswap/parameters
MMTUNE_ZSWAP=$MMTUNE_SYSFS/zswap_large

# zswap with zsmalloc and lz4, the pool limit at its default.
zswap_enable() {
	echo zsmalloc >$ZSWAP_PARAMS/zpool || fail "zswap zpool"
	echo lz4 >$ZSWAP_PARAMS/compressor || fail "zswap compressor"
	echo 20 >$ZSWAP_PARAMS/max_pool_percent
	echo 1 >$ZSWAP_PARAMS/enabled || fail "zswap enabled"
}
zswap_disable() {
	echo 0 >$ZSWAP_PARAMS/enabled
	echo 20 >$ZSWAP_PARAMS/max_pool_percent
}
zswap_stored_pages() { cat /sys/kernel/debug/zswap/stored_pages; }

# The zswap_large tests' stage: THP always, swap on the virtio disk with
# zswap in front, and (unless "stock") mmtune loaded with zswap_large on.
zswap_large_setup() {
	thp_always
	swapon_disk
	zswap_enable
	[ "${1:-}" = stock ] && return
	load_mmtune
	echo 1 >"$MMTUNE_ZSWAP/enabled" || fail "enable zswap_large"
}
mmtune_zswap() { cat "$MMTUNE_ZSWAP/$1"; }

# start_held_round SEED: 64 MiB of THPs paged out by a swap_integrity that
# then holds before reading back (output in /tmp/held.out); sets $held to
# its pid. "touch /tmp/hold/go" lets it read back and compare.
start_held_round() {
	rm -rf /tmp/hold && mkdir /tmp/hold
	swap_integrity --size 64 --thp --fill compressible --evict pageout --hold /tmp/hold \
		--seed "$1" >/tmp/held.out 2>&1 &
	held=$!
	wait_for /tmp/hold/evicted
}

# wait_for FILE [SECONDS]: until FILE exists.
wait_for() {
	n=0
	while [ ! -e "$1" ]; do
		n=$((n + 1))
		[ $n -gt $(( ${2:-300} * 10 )) ] && fail "timed out waiting for $1"
		sleep 0.1
	done
}
