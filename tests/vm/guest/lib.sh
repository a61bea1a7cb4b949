# Helpers sourced by the guest tests (/tests/*.sh).
MMTUNE_KO=/mmtune/mmtune.ko
PROBE_KO=/mmtune/mmtune_probe.ko
MMTUNE_SYSFS=/sys/kernel/mm/mmtune
HOOKS_STATE=/sys/kernel/debug/mmtune_hooks
# The kernel's feature groups, from the hook core itself (not a list here).
FEATURES=$(echo $(awk '$1 != "abi_version" && $1 != "registered" && $1 != "hook" { print $1 }' "$HOOKS_STATE" 2>/dev/null))
# The knob table: every file of /sys/kernel/mm/mmtune (sysfs-docs/knobs.tsv).
KNOBS=/sysfs-docs/knobs.tsv
# The kernel line running (6.1, 6.12): the table's "lines" column.
MMTUNE_LINE=$(uname -r | cut -d. -f1,2)
# knob_rows [DIR]: the table's rows (of DIR) on this kernel line, tab
# separated, without the lines column, no comments.
knob_rows() {
	awk -F'\t' -v d="${1:-}" -v line="$MMTUNE_LINE" '!/^#/ && $1 != "dir" &&
		(d == "" || $1 == d) && index(" " $8 " ", " " line " ") {
		print $1 "\t" $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 "\t" $7 }' "$KNOBS"
}

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 4; }
info() { echo "$*"; }

# cmdline_has WORD: the kernel command line has WORD (e.g. kmemleak=off).
cmdline_has() { case " $(cat /proc/cmdline) " in *" $1 "*) return 0 ;; esac; return 1; }
# debug_kernel: booted by make check-debug (KASAN, kmemleak, lockdep, which
# make a test of many rounds several times slower; check-debug.sh marks its
# boots with mmtune.variant=debug).
debug_kernel() { cmdline_has mmtune.variant=debug; }
# kmemleak_on: kmemleak is built in and not turned off at boot.
kmemleak_on() { [ -e /sys/kernel/debug/kmemleak ] && ! cmdline_has kmemleak=off; }

# feature_offer NAME: whether this kernel line and module offer NAME, from
# the module's features file: "offered" (on or off), "unavailable" or
# "not-offered". Neither changes within a boot, so the file is read once
# (mmtune.ko loaded for the look if it is not, and unloaded again) and kept
# in /tmp for the later tests.
FEATURES_SEEN=/tmp/.mmtune-features-at-load
features_seen() {
	if [ ! -s $FEATURES_SEEN ]; then
		if [ -r "$MMTUNE_SYSFS/features" ]; then
			cat "$MMTUNE_SYSFS/features" >$FEATURES_SEEN.new
		else
			insmod "$MMTUNE_KO" || fail "insmod mmtune.ko (to read its features file)"
			cat "$MMTUNE_SYSFS/features" >$FEATURES_SEEN.new
			rmmod mmtune || fail "rmmod mmtune (after reading its features file)"
		fi
		mv $FEATURES_SEEN.new $FEATURES_SEEN
	fi
}
feature_offer() {
	features_seen
	awk -v f="$1" '$1 == f { print ($2 == "on" || $2 == "off") ? "offered" : $2 }' $FEATURES_SEEN
}

# require_feature NAME...: the test is about these features; skip it (exit
# 4) where the kernel line does not offer one of them (features file:
# not-offered; README.md, "Kernel lines"). A feature the line offers but
# the module was built without (unavailable) fails: the test kernel has
# every option the features need.
require_feature() {
	features_seen	# here, not in $(...), so that its fail ends the test
	for _f in "$@"; do
		case "$(feature_offer "$_f")" in
		offered) ;;
		not-offered) skip "$_f is not offered on the $MMTUNE_LINE line (features file: '$_f not-offered'; README.md, \"Kernel lines\")" ;;
		unavailable) fail "$_f is unavailable: mmtune.ko was built without it for this test kernel" ;;
		*) fail "the features file has no line for $_f" ;;
		esac
	done
}

# offered_features: the features this kernel line offers and the module
# has (features file: neither unavailable nor not-offered); mmtune loaded.
offered_features() {
	awk '$2 != "unavailable" && $2 != "not-offered" { print $1 }' "$MMTUNE_SYSFS/features"
}

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

swapoff_all() { swapoff -a 2>/dev/null; for d in /dev/zram0 /dev/vda /dev/ram0; do swapoff "$d" 2>/dev/null; done; true; }

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

# swap_refresh: the swap device that is on (zram0 or vda), made anew and
# empty. 6.12 gives a large folio swap entries only from a free cluster or
# one of its order; what earlier rounds left in partly used clusters and
# the per-CPU slot caches made folio_alloc_swap() fail for shmem's 16K and
# 64K folios in a later round (stock, integrity-mthp-zram on both the test and the
# debug kernel), and shmem then splits the folio: not out whole.
swap_refresh() {
	case $(awk 'NR == 2 { print $1 }' /proc/swaps) in
	/dev/zram0) swapon_zram "$(cat /sys/block/zram0/disksize)" ;;
	/dev/vda) swapon_disk ;;
	/dev/ram0) swapon_brd ;;
	esac
}

thp_always() { echo always >/sys/kernel/mm/transparent_hugepage/enabled; }

# --- folio sizes (mTHP): kernels with hugepages-<size>kB (6.12) ------------
THP_SYSFS=/sys/kernel/mm/transparent_hugepage
# mthp_has KB: the kernel has anonymous folios of KB (hugepages-KBkB).
mthp_has() { [ -d "$THP_SYSFS/hugepages-${1}kB" ]; }
# mthp_require KB...: skip unless the kernel has every one of these sizes.
mthp_require() {
	for _kb in "$@"; do
		mthp_has "$_kb" || skip "kernel without ${_kb}kB folios (no $THP_SYSFS/hugepages-${_kb}kB: only PMD-sized THPs, as 6.1, where integrity-stock-disk, integrity-stock-zram and zswap_large-thp-store cover them)"
	done
}
# mthp_only KB [anon|shmem]: faults of anonymous (default) or shmem memory
# allocate KB folios only: that size of that kind "always", every other
# size of both kinds "never" (the top-level THP setting "always" too, for
# what inherits it). The other kind's sizes are off as well because of
# khugepaged: 6.12 runs it while anonymous 2M THPs are on, and it then
# collapses anonymous shmem into PMD THPs whichever shmem size is on
# (thp_vma_allowable_order() takes any allowed shmem order as PMD_ORDER's).
# A 16K shmem round right after a 2M anonymous one lost 2 of its 2M ranges
# that way: unmapped mid-MADV_PAGEOUT, swapped out as 2 THPs, not as 16K
# folios. run-tests.sh's cleanup puts every size back as it was at boot.
mthp_only() {
	_want=$THP_SYSFS/hugepages-${1}kB/enabled
	[ "${2:-anon}" = shmem ] && _want=$THP_SYSFS/hugepages-${1}kB/shmem_enabled
	echo always >$THP_SYSFS/enabled
	for _f in $THP_SYSFS/hugepages-*kB/enabled $THP_SYSFS/hugepages-*kB/shmem_enabled; do
		[ -w "$_f" ] && [ "$_f" != "$_want" ] || continue
		echo never >"$_f" || fail "$_f never"
	done
	echo always >"$_want" || fail "$_want always"
}
# mthp_stat KB NAME: a counter of hugepages-KBkB/stats.
mthp_stat() { cat "$THP_SYSFS/hugepages-${1}kB/stats/$2"; }
# mthp_run OUT KB anon|shmem ARGS...: swap_integrity (known bytes out and
# back, compared) on memory of that kind faulted in KB folios only
# (mthp_only), output in OUT and shown; its deltas line has the size's
# counters (si_delta OUT mthp_alloc, mthp_swpout, mthp_swpout_fallback,
# mthp_zswpout) and region_folios, the region's own folios of the size.
# Fails the test if the round trip fails, or if khugepaged collapsed
# anything during a round below the PMD size.
mthp_run() {
	_out=$1 _kb=$2 _kind=$3
	shift 3
	mthp_only "$_kb" "$_kind"
	swap_refresh
	_shm=
	[ "$_kind" = shmem ] && _shm=--shmem
	info "--- ${_kb}kB $_kind: swap_integrity $*"
	swap_integrity --thp --mthp "$_kb" $_shm "$@" >"$_out" 2>&1
	_rc=$?
	cat "$_out"
	[ $_rc -eq 4 ] && skip "$(tail -n 1 "$_out")"
	if [ $_rc -ne 0 ]; then
		# Whether zswap_large refused or rolled back anything.
		[ -d /sys/kernel/mm/mmtune/zswap_large ] &&
			info "zswap_large: $(cd /sys/kernel/mm/mmtune/zswap_large && grep -H . thp_stored subpages_* rollback_* backoff_skipped fallback_disk | tr '\n' ' ')"
		fail "${_kb}kB $_kind: swap round trip failed (exit $_rc)"
	fi
	# mthp_only keeps khugepaged off below the PMD size: a collapse would
	# take the region's folios out of the size's counts.
	[ "$_kb" -ge 2048 ] || assert_eq "$(si_delta "$_out" thp_collapse_alloc)" 0 \
		"${_kb}kB $_kind: vmstat thp_collapse_alloc delta (khugepaged off)"
}
# mthp_integrity WHAT: the stock round trips of integrity-mthp-disk and integrity-mthp-zram on the swap
# device that is on: 16K, 64K and 2M folios, anonymous and shmem, out whole
# (the size's swpout, not its fallback) and back equal.
mthp_integrity() {
	_seed=20
	for _kind in anon shmem; do
		for _kb in 16 64 2048; do
			_seed=$((_seed + 1))
			mthp_run /tmp/si.out $_kb $_kind --size 32 --evict pageout --min-out-pct 90 --seed $_seed
			_folios=$(si_delta /tmp/si.out region_folios)
			assert_ge "$(si_delta /tmp/si.out mthp_swpout)" $((_folios * 9 / 10)) \
				"$1 ${_kb}kB $_kind: hugepages-${_kb}kB swpout delta (of $_folios folios, out whole)"
			assert_eq "$(si_delta /tmp/si.out zswpout)" 0 "$1 ${_kb}kB $_kind: vmstat zswpout delta"
		done
	done
}
# mthp_pages KB: 4K pages per KB folio.
mthp_pages() { echo $(( $1 / 4 )); }

# mthp_rounds FUNC SEED: "FUNC KB KIND SEED" for 16K, 64K and 2M folios,
# anonymous, then shmem, with seeds SEED+1, SEED+2 and on.
mthp_rounds() {
	_mr_seed=$2
	for _mr_kind in anon shmem; do
		for _mr_kb in 16 64 2048; do
			_mr_seed=$((_mr_seed + 1))
			"$1" $_mr_kb $_mr_kind $_mr_seed
		done
	done
}

# assert_ge ACTUAL MIN WHAT / assert_le ACTUAL MAX WHAT
assert_ge() {
	[ "$1" -ge "$2" ] 2>/dev/null || fail "$3: got '$1', expected >= $2"
	info "ok: $3 = $1 (>= $2)"
}
assert_le() {
	[ "$1" -le "$2" ] 2>/dev/null || fail "$3: got '$1', expected <= $2"
	info "ok: $3 = $1 (<= $2)"
}

# assert_grows WHAT SECONDS CMD...: the number CMD prints grows within
# SECONDS. For counters that a background load moves only in some of its
# phases: a fixed sleep between two reads misses them on a fast host.
assert_grows() {
	_what=$1 _secs=$2
	shift 2
	_v0=$("$@") _n=0
	while [ "$("$@")" -le "$_v0" ] 2>/dev/null; do
		_n=$((_n + 1))
		[ $_n -gt $((_secs * 10)) ] && fail "$_what: stayed at '$_v0' for ${_secs}s"
		sleep 0.1
	done
	info "ok: $_what: $_v0 -> $("$@") within $((_n / 10)).$((_n % 10))s"
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

# si_loops_start NAME SWAP_INTEGRITY-ARG...: two swap_integrity loops in
# the background (seeds 1000+i and 2000+i, outputs /tmp/NAME/1.out and
# 2.out) until /tmp/NAME/stop exists; each ends with "NAME N: R rounds,
# every byte equal". si_loops_stop NAME: stop them, fail if one lost data.
si_loops_start() {
	_sid=/tmp/$1 _sin=$1
	shift
	rm -rf "$_sid" && mkdir "$_sid"
	for _sip in 1 2; do
		(
			i=0
			while [ ! -e "$_sid/stop" ]; do
				i=$((i + 1))
				swap_integrity "$@" --seed $((_sip * 1000 + i)) >"$_sid/$_sip.out" 2>&1 ||
					{ cat "$_sid/$_sip.out"; echo "$_sin $_sip round $i failed"; exit 1; }
			done
			echo "$_sin $_sip: $i rounds, every byte equal"
		) &
		eval "si_loop$_sip=\$!"
	done
}
si_loops_stop() {
	touch "/tmp/$1/stop"
	wait "$si_loop1" || fail "$1 1 lost data or failed"
	wait "$si_loop2" || fail "$1 2 lost data or failed"
}

# zswap_large under fault injection (zswap_large-*fault-injection).
# zswap_fault_setup: zswap on zsmalloc with zswap_large on and no
# back-off, fault injection disarmed, kmemleak's reports from here on.
zswap_fault_setup() {
	ZSWAP_ZPOOL=zsmalloc
	zswap_large_setup
	echo 0 >"$MMTUNE_ZSWAP/backoff_ms" || fail "backoff_ms 0"
	fault_reset
	kmemleak_begin
}
# zswap_counter NAME: zswap_large's counter NAME, else zswap's debugfs one.
zswap_counter() { mmtune_zswap "$1" 2>/dev/null || cat "/sys/kernel/debug/zswap/$1"; }
# zswap_snap NAME...: the counters a round moves, "name=value" in /tmp/snap;
# zswap_delta NAME: one's change since; zswap_deltas NAME...: "NAME +DELTA ".
zswap_snap() { for c; do echo "$c=$(zswap_counter "$c")"; done >/tmp/snap; }
zswap_delta() { echo $(( $(zswap_counter "$1") - $(awk -F= -v k="$1" '$1 == k { print $2 }' /tmp/snap) )); }
zswap_deltas() { for c; do printf '%s +%s ' "$c" "$(zswap_delta "$c")"; done; }
# failslab_zswap_entry: failslab fails only zswap's entry cache when the
# command line marks it (slub_debug=A,zswap_entry); sets $what to what fails.
failslab_zswap_entry() {
	if [ "$(cat /sys/kernel/slab/zswap_entry/failslab 2>/dev/null)" = 1 ]; then
		echo Y >$FAILSLAB/cache-filter
		what="zswap_entry cache only (slub_debug=A)"
	else
		what="every slab cache (no slub_debug=A,zswap_entry on the command line)"
	fi
	echo N >$FAILSLAB/ignore-gfp-wait
}

# One helper file per feature, lib-<feature>.sh.
for _lib in /lib-*.sh; do
	[ -r "$_lib" ] && . "$_lib"
done
unset _lib
