# Guest test helpers for zswap and the zswap_large feature. Sourced by lib.sh.
# --- zswap and mmtune's zswap feature --------------------------------------
ZSWAP_PARAMS=/sys/module/zswap/parameters
MMTUNE_ZSWAP=$MMTUNE_SYSFS/zswap_large

# zswap with $ZSWAP_ZPOOL (default zsmalloc) and lz4, the pool limit at its
# default.
zswap_enable() {
	echo "${ZSWAP_ZPOOL:-zsmalloc}" >$ZSWAP_PARAMS/zpool || fail "zswap zpool ${ZSWAP_ZPOOL:-zsmalloc}"
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
# zswap_refusals: zswap_large's rollbacks of every reason plus the stores
# its backoff skipped, summed (a round that must store every folio whole
# leaves it unchanged, even if a second MADV_PAGEOUT pass hid a refusal).
zswap_refusals() { cat "$MMTUNE_ZSWAP"/rollback_* "$MMTUNE_ZSWAP/backoff_skipped" | awk '{ n += $1 } END { print n + 0 }'; }
# zswap_rejects_poor: zswap's refusals of pages that do not compress (lz4
# and zstd report such a page as a compressor failure), summed.
zswap_rejects_poor() { cat /sys/kernel/debug/zswap/reject_compress_poor /sys/kernel/debug/zswap/reject_compress_fail | awk '{ n += $1 } END { print n + 0 }'; }

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

# zswap_zpools: the zpools to run the whole-THP store, rollback and rmmod
# tests with: "mmtune.zpools=a,b" on the kernel command line, or all three
# that 6.1 has (Debian's generic kernel defaults zswap to zbud).
zswap_zpools() {
	for _a in $(cat /proc/cmdline); do
		case "$_a" in mmtune.zpools=*) echo "${_a#mmtune.zpools=}" | tr ',' ' '; return ;; esac
	done
	echo zsmalloc zbud z3fold
}

# zswap_has_zpool NAME: this kernel has that zpool (built in: the guest
# loads no modules). zswap refuses an unknown one with ENOENT, and then
# keeps its current pool.
zswap_has_zpool() {
	_old=$(cat $ZSWAP_PARAMS/zpool)
	echo "$1" >$ZSWAP_PARAMS/zpool 2>/dev/null || return 1
	echo "$_old" >$ZSWAP_PARAMS/zpool
}

# for_each_zpool FUNCTION: FUNCTION once per zpool of zswap_zpools, with
# ZSWAP_ZPOOL set (zswap_enable uses it); a zpool the kernel lacks is
# skipped with a line saying so. Fails if no zpool at all could run.
for_each_zpool() {
	_ran=0
	for ZSWAP_ZPOOL in $(zswap_zpools); do
		if ! zswap_has_zpool "$ZSWAP_ZPOOL"; then
			case "$ZSWAP_ZPOOL" in
			z3fold) _cfg=CONFIG_Z3FOLD_DEPRECATED ;;
			*) _cfg=CONFIG_$(echo "$ZSWAP_ZPOOL" | tr a-z A-Z) ;;
			esac
			info "SKIP zpool $ZSWAP_ZPOOL: not in this kernel ($_cfg=y needed)"
			continue
		fi
		info "=== zpool $ZSWAP_ZPOOL"
		"$1"
		_ran=$((_ran + 1))
	done
	[ $_ran -gt 0 ] || fail "no zpool of '$(zswap_zpools)' in this kernel"
	unset ZSWAP_ZPOOL
}

# --- large swap-in with zswap on (6.12, zswap_large's load_<size>kB) -------
# swapon_brd [MIN_KIB]: swap on the RAM disk /dev/ram0 alone, a
# SWP_SYNCHRONOUS_IO device as zram is; returns 1 (nothing changed) if it
# is smaller than MIN_KIB (default 65536; brd.rd_size on the kernel command
# line sets its size).
swapon_brd() {
	_kib=$(( $(cat /sys/block/ram0/size 2>/dev/null || echo 0) / 2 ))
	[ "$_kib" -ge "${1:-65536}" ] || return 1
	swapoff_all
	mkswap /dev/ram0 >/dev/null || fail "mkswap /dev/ram0"
	swapon /dev/ram0 || fail "swapon /dev/ram0"
}
# wait_pid PID SECONDS WHAT: wait for a background job, failing with WHAT
# if it runs longer (its exit status is returned).
wait_pid() {
	_n=0
	while kill -0 "$1" 2>/dev/null; do
		_n=$((_n + 1))
		[ $_n -gt $(( $2 * 10 )) ] && fail "$3: still running after $2 s"
		sleep 0.1
	done
	wait "$1"
}

# assert_zswap_empty WHAT: zswap holds no page (every entry of the round's
# exited process was dropped with its slots), within 10 s.
assert_zswap_empty() {
	_n=0
	while [ "$(zswap_stored_pages)" -ne 0 ] && [ $_n -lt 100 ]; do
		_n=$((_n + 1))
		sleep 0.1
	done
	assert_eq "$(zswap_stored_pages)" 0 "$1: zswap stored_pages"
}

# swapin_round KB SEED [ARGS]: mthp_run of 16 MiB of anonymous KB folios,
# out and back byte for byte; sets $folios (the region's KB folios), $swpin
# and $zswpin (the size's stats deltas over the round: folios swapped in
# whole, and of them loaded from zswap) and $zswpout.
swapin_round() {
	_kb=$1 _seed=$2
	shift 2
	_w0=$(mthp_stat "$_kb" swpin) _z0=$(mthp_stat "$_kb" zswpin)
	mthp_run /tmp/si.out "$_kb" anon --size 16 --fill compressible --evict pageout --min-out-pct 90 --seed "$_seed" "$@"
	folios=$(si_delta /tmp/si.out region_folios)
	zswpout=$(si_delta /tmp/si.out mthp_zswpout)
	swpin=$(( $(mthp_stat "$_kb" swpin) - _w0 ))
	zswpin=$(( $(mthp_stat "$_kb" zswpin) - _z0 ))
	assert_zswap_empty "${_kb}kB round $_seed"
}
