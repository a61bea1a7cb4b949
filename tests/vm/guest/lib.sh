# Helpers sourced by the guest tests (/tests/*.sh).
MMTUNE_KO=/mmtune/mmtune.ko
PROBE_KO=/mmtune/mmtune_probe.ko
MMTUNE_SYSFS=/sys/kernel/mm/mmtune
HOOKS_STATE=/sys/kernel/debug/mmtune_hooks
FEATURES="swap_slots thp_swap split_zero zswap_large pcp_high"

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
MMTUNE_ZSWAP=$MMTUNE_SYSFS/zswap

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

# --- PCP high tuning (pcp_high) ---------------------------------------------
MMTUNE_PCP=$MMTUNE_SYSFS/pcp
mmtune_pcp() { cat "$MMTUNE_PCP/$1"; }

# pcp_zone FIELD [ZONE]: a value of pcp/zones for ZONE (default DMA32);
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
