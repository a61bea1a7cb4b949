# Helpers sourced by the guest tests (/tests/*.sh).
MMTUNE_KO=/mmtune/mmtune.ko
PROBE_KO=/mmtune/mmtune_probe.ko
MMTUNE_SYSFS=/sys/kernel/mm/mmtune
HOOKS_STATE=/sys/kernel/debug/mmtune_hooks
# The kernel's feature groups, from the hook core itself (not a list here).
FEATURES=$(awk '$1 != "abi_version" && $1 != "registered" && $1 != "hook" { print $1 }' "$HOOKS_STATE" 2>/dev/null | tr '\n' ' ')
# The knob table: every file of /sys/kernel/mm/mmtune (sysfs-docs/knobs.tsv).
KNOBS=/sysfs-docs/knobs.tsv
# knob_rows [DIR]: the table's rows (of DIR), tab separated, no comments.
knob_rows() { awk -F'\t' -v d="${1:-}" '!/^#/ && $1 != "dir" && (d == "" || $1 == d)' "$KNOBS"; }

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 4; }
info() { echo "$*"; }

# assert_eq ACTUAL EXPECTED WHAT
assert_eq() {
	[ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"
	info "ok: $3 = '$2'"
}

vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }

# hooks_state KEY: a line of /sys/kernel/debug/mmtune_hooks
hooks_state() { awk -v k="$1" '$1 == k { print $2 }' "$HOOKS_STATE"; }

assert_hooks_idle() {
	assert_eq "$(hooks_state registered)" "-" "hook core registrant"
	for f in $FEATURES; do
		assert_eq "$(hooks_state "$f")" off "static key $f"
	done
	[ ! -e "$MMTUNE_SYSFS" ] || fail "$MMTUNE_SYSFS exists with no module loaded"
}

load_mmtune() { insmod "$MMTUNE_KO" "$@" || fail "insmod mmtune.ko"; }
unload_mmtune() { rmmod mmtune || fail "rmmod mmtune"; }

# insmod_error KO [ARGS]: a load expected to fail; prints the kernel's error
# name (EBUSY, EINVAL...). One finit_module() call, so one refusal logged.
insmod_error() {
	if out=$(modload "$@" 2>&1); then
		fail "loading $* succeeded, expected a refusal"
	fi
	echo "$out"
}

swapoff_all() { swapoff -a 2>/dev/null; for d in /dev/zram0 /dev/vda; do swapoff "$d" 2>/dev/null; done; true; }

# The virtio disk is rotational to qemu; 6.1 only allocates whole THP swap
# clusters on non-rotational devices, so say it is an SSD.
swapon_disk() {
	swapoff_all
	echo 0 >/sys/block/vda/queue/rotational
	mkswap /dev/vda >/dev/null || fail "mkswap /dev/vda"
	swapon /dev/vda || fail "swapon /dev/vda"
}

swapon_zram() {
	swapoff_all
	size=${1:-1G}
	echo 1 >/sys/block/zram0/reset
	echo "$size" >/sys/block/zram0/disksize || fail "zram disksize"
	mkswap /dev/zram0 >/dev/null || fail "mkswap /dev/zram0"
	swapon /dev/zram0 || fail "swapon /dev/zram0"
}

thp_always() { echo always >/sys/kernel/mm/transparent_hugepage/enabled; }

# assert_ge ACTUAL MIN WHAT / assert_le ACTUAL MAX WHAT
assert_ge() {
	[ "$1" -ge "$2" ] 2>/dev/null || fail "$3: got '$1', expected >= $2"
	info "ok: $3 = $1 (>= $2)"
}
assert_le() {
	[ "$1" -le "$2" ] 2>/dev/null || fail "$3: got '$1', expected <= $2"
	info "ok: $3 = $1 (<= $2)"
}

# assert_write_ok FILE VALUE: the write succeeds and reads back as VALUE.
assert_write_ok() {
	printf '%s\n' "$2" >"$1" || fail "writing '$2' to $1 failed"
	assert_eq "$(cat "$1")" "$2" "$1 after writing '$2'"
}

# assert_write_rejected FILE VALUE: EINVAL, and the old value stays.
assert_write_rejected() {
	old=$(cat "$1")
	assert_eq "$(sysfs_write "$1" "$2")" EINVAL "writing '$2' to $1"
	assert_eq "$(cat "$1")" "$old" "$1 kept after rejected '$2'"
}

# si_delta OUTPUT NAME: a value of swap_integrity's "deltas:" line.
si_delta() {
	awk -v k="$2" '/^deltas:/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }' "$1"
}

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

# slots_cached CPU: "<alloc> <free>" slots that CPU's cache holds.
slots_cached() { awk -v c="cpu$1" '$1 == c { print $2, $3 }' "$MMTUNE_SLOTS/cached"; }

# slots_load_start: two 4K-page swap_integrity loops under memory.max until
# /tmp/load/stop exists; sets $load. slots_load_stop: stop and check them.
slots_load_start() {
	rm -rf /tmp/load && mkdir /tmp/load
	for p in 1 2; do
		(
			i=0
			while [ ! -e /tmp/load/stop ]; do
				i=$((i + 1))
				swap_integrity --no-thp --size 48 --evict memcg-max --limit 24 --min-out-pct 25 \
					--seed $((p * 1000 + i)) >/tmp/load/$p.out 2>&1 ||
					{ cat /tmp/load/$p.out; echo "load $p round $i failed"; exit 1; }
			done
			echo "load $p: $i rounds, every byte equal"
		) &
		eval "load$p=\$!"
	done
	sleep 2
}
slots_load_stop() {
	touch /tmp/load/stop
	wait "$load1" || fail "load 1 lost data or failed"
	wait "$load2" || fail "load 2 lost data or failed"
}

# --- thp_swap and split_zero (tests 5x) ------------------------------------
MMTUNE_THP=$MMTUNE_SYSFS/thp_swap
MMTUNE_SZ=$MMTUNE_SYSFS/split_zero
thp_knob() { cat "$MMTUNE_THP/$1"; }
sz_knob() { cat "$MMTUNE_SZ/$1"; }

# thp_policy whole|split|adaptive: thp_swap off (whole, stock) or on with
# that policy. split_zero_mode never|reclaim-only|always: the same for
# split_zero (never is off).
thp_policy() {
	if [ "$1" = whole ]; then
		echo 0 >"$MMTUNE_THP/enabled" || fail "thp_swap/enabled 0"
	else
		echo "$1" >"$MMTUNE_THP/policy" || fail "thp_swap/policy $1"
		echo 1 >"$MMTUNE_THP/enabled" || fail "thp_swap/enabled 1"
	fi
}
split_zero_mode() {
	if [ "$1" = never ]; then
		echo 0 >"$MMTUNE_SZ/enabled" || fail "split_zero/enabled 0"
	else
		echo "$1" >"$MMTUNE_SZ/mode" || fail "split_zero/mode $1"
		echo 1 >"$MMTUNE_SZ/enabled" || fail "split_zero/enabled 1"
	fi
}

# thp_setup zram|disk [POLICY MODE]: THP always, swap on DEVICE, and unless
# POLICY is empty, mmtune loaded with thp_policy POLICY, split_zero_mode MODE.
thp_setup() {
	thp_always
	case "$1" in
	zram) swapon_zram 2G ;;
	disk) swapon_disk ;;
	*) fail "thp_setup: unknown device $1" ;;
	esac
	[ -n "${2:-}" ] || return 0
	load_mmtune
	thp_policy "$2"
	split_zero_mode "$3"
}

# thp_counters: every thp_swap and split_zero counter as NAME=VALUE lines
# (snapshot into a file, then thp_counter_delta FILE NAME).
thp_counters() {
	for f in thp_whole thp_split subpages_sampled subpages_sampled_zero; do
		echo "$f=$(thp_knob $f)"
	done
	for f in splits_scanned subpages_scanned subpages_zero zero_ptes_mapped \
		subpages_dropped bytes_not_written; do
		echo "$f=$(sz_knob $f)"
	done
}
thp_counter_delta() {
	old=$(sed -n "s/^$2=//p" "$1")
	now=$(thp_counter_now "$2")
	echo $((now - old))
}
thp_counter_now() {
	case "$1" in
	thp_*|subpages_sampled*) thp_knob "$1" ;;
	*) sz_knob "$1" ;;
	esac
}

# run_sparse OUT ARGS...: thp_sparse with its output in OUT, failing the test
# if it fails.
run_sparse() {
	out=$1
	shift
	thp_sparse "$@" >"$out" 2>&1
	rc=$?
	cat "$out"
	[ $rc -eq 4 ] && skip "$(tail -n 1 "$out")"
	[ $rc -eq 0 ] || fail "thp_sparse $*: exit $rc"
}

# thp_best_case zram|disk: 1 dirty subpage per THP, adaptive policy, zero
# detection in reclaim: only the dirty subpages are written, the zero ones
# are dropped (zero page mapped, not written), and every byte reads back.
thp_best_case() {
	thp_setup "$1" adaptive reclaim-only
	thp_counters >/tmp/c0
	run_sparse /tmp/ts.out --size 64 --dirty 1 --offset 0 --seed 5
	thps=$(si_delta /tmp/ts.out thps)
	dirty=$(si_delta /tmp/ts.out dirty_pages)
	assert_ge "$thps" 28 "THPs backing the 64 MiB region (of 32)"
	assert_eq "$(thp_counter_delta /tmp/c0 thp_split)" "$thps" "thp_swap/thp_split delta (every sparse THP split)"
	assert_eq "$(thp_counter_delta /tmp/c0 thp_whole)" 0 "thp_swap/thp_whole delta"
	assert_eq "$(si_delta /tmp/ts.out thp_swpout)" 0 "vmstat thp_swpout delta"
	pswpout=$(si_delta /tmp/ts.out pswpout)
	assert_ge "$pswpout" $((dirty * 9 / 10)) "vmstat pswpout delta (about the $dirty dirty subpages)"
	assert_le "$pswpout" $((dirty + dirty / 10)) "vmstat pswpout delta (not the $((thps * 512)) subpages of the THPs)"
	assert_ge "$(thp_counter_delta /tmp/c0 subpages_zero)" $((thps * 511)) "split_zero/subpages_zero delta"
	assert_ge "$(thp_counter_delta /tmp/c0 zero_ptes_mapped)" $((thps * 511)) "split_zero/zero_ptes_mapped delta"
	assert_ge "$(si_delta /tmp/ts.out zero_mapped)" $((thps * 511)) "subpages mapping the zero page (pagemap)"
	dropped=$(thp_counter_delta /tmp/c0 subpages_dropped)
	assert_ge "$dropped" $((thps * 511)) "split_zero/subpages_dropped delta"
	assert_eq "$(thp_counter_delta /tmp/c0 bytes_not_written)" $((dropped * 4096)) "split_zero/bytes_not_written delta"
	grep -q "every byte as written" /tmp/ts.out || fail "no read-back verdict"
	info "ok: read back: dirty bytes as written, every other byte zero"
}

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
