# Guest test helpers for thp_swap and split_zero (the THP experiments of tests 5x). Sourced by lib.sh.
# --- thp_swap and split_zero (tests 5x) ------------------------------------
MMTUNE_THP=$MMTUNE_SYSFS/thp_swap
MMTUNE_SZ=$MMTUNE_SYSFS/split_zero
thp_knob() { cat "$MMTUNE_THP/$1"; }
sz_knob() { cat "$MMTUNE_SZ/$1"; }

# feature_word FEATURE KNOB WORD STOCKWORD: FEATURE off (stock) when WORD is
# STOCKWORD, else KNOB=WORD and FEATURE on. thp_policy whole|split|adaptive
# and split_zero_mode never|reclaim-only|always, in the words of the tests.
feature_word() {
	if [ "$3" = "$4" ]; then
		echo 0 >"$MMTUNE_SYSFS/$1/enabled" || fail "$1/enabled 0"
	else
		echo "$3" >"$MMTUNE_SYSFS/$1/$2" || fail "$1/$2 $3"
		echo 1 >"$MMTUNE_SYSFS/$1/enabled" || fail "$1/enabled 1"
	fi
}
thp_policy() { feature_word thp_swap policy "$1" whole; }
split_zero_mode() { feature_word split_zero mode "$1" never; }

# thp_setup zram|disk [POLICY [MODE]]: THP always, swap on DEVICE, and unless
# POLICY is empty, mmtune loaded with thp_policy POLICY, and split_zero_mode
# MODE unless MODE is empty (a line without split_zero).
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
	[ -z "${3:-}" ] || split_zero_mode "$3"
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
