# thp_swap's policy per folio size (kernels with mTHP, 6.12: policy_<size>kB)
# on zram, 64K folios first, anonymous memory; every byte reads back equal
# in every round:
#  - split: every folio split before swap-out (thp_split), none written
#    whole (the size's swpout), every page written one by one;
#  - whole: every folio written whole (thp_whole, the size's swpout);
#  - adaptive, one page in 16 holding data: every folio sampled and split,
#    and the split maps the zero pages to the zero page (6.12's own split,
#    what split_zero does on 6.1), so only about the data pages are written;
#  - adaptive, every page holding data: kept whole;
#  - inherit: 16K folios take the feature-wide policy (split) while
#    policy_2048kB whole keeps 2M folios whole.
# timeout: 900
. /lib.sh
require_feature thp_swap
mthp_require 16 64 2048
thp_always
swapon_zram 1G
load_mmtune
echo 1 >"$MMTUNE_THP/enabled" || fail "thp_swap/enabled 1"

# round KB SEED ARGS...: one round of swap_integrity with a snapshot of the
# thp_swap counters before it (delta NAME).
round() {
	kb=$1 seed=$2
	shift 2
	for f in thp_whole thp_split subpages_sampled; do echo "$f=$(thp_knob $f)"; done >/tmp/c0
	mthp_run /tmp/si.out "$kb" anon --size 32 --evict pageout --seed "$seed" "$@"
	folios=$(si_delta /tmp/si.out region_folios)
	pages=$(si_delta /tmp/si.out pages)
	pswpout=$(si_delta /tmp/si.out pswpout)
}
delta() { echo $(( $(thp_knob "$1") - $(sed -n "s/^$1=//p" /tmp/c0) )); }
# decided NAME WHAT: thp_swap's NAME decisions (thp_split or thp_whole)
# cover at least 90% of the round's folios (region_folios, the folios of
# the size found backing the region). Not exactly one each: the decisions
# are every process's (a shell loop beside the test added 1 and 2), a
# folio whose split failed is asked again, and memory.reclaim of
# swap_integrity's memcg (when pages stay resident: the zero pages of a
# sparse round) is asked about the program's own folios too (22 more
# whole decisions seen). For thp_split, the kernel's own split count of
# the size must show them too.
decided() {
	assert_ge "$(delta "$1")" $((folios * 9 / 10)) "$2: thp_swap/$1 delta (of $folios folios)"
	[ "$1" = thp_split ] || return 0
	assert_ge "$(si_delta /tmp/si.out mthp_split)" $((folios * 9 / 10)) "$2: hugepages-${kb}kB split delta (the kernel split them)"
}

echo split >"$MMTUNE_THP/policy_64kB" || fail "policy_64kB split"
round 64 71 --min-out-pct 90
decided thp_split "64kB split"
assert_eq "$(delta thp_whole)" 0 "64kB split: thp_swap/thp_whole delta"
assert_eq "$(si_delta /tmp/si.out mthp_swpout)" 0 "64kB split: hugepages-64kB swpout delta"
assert_ge "$pswpout" $((pages * 9 / 10)) "64kB split: vmstat pswpout delta (page by page)"

echo whole >"$MMTUNE_THP/policy_64kB" || fail "policy_64kB whole"
round 64 72 --min-out-pct 90
decided thp_whole "64kB whole"
assert_eq "$(delta thp_split)" 0 "64kB whole: thp_swap/thp_split delta"
assert_ge "$(si_delta /tmp/si.out mthp_swpout)" $((folios * 9 / 10)) "64kB whole: hugepages-64kB swpout delta (of $folios)"

echo adaptive >"$MMTUNE_THP/policy_64kB" || fail "policy_64kB adaptive"
round 64 73 --data-every 16 --min-out-pct 0
decided thp_split "64kB adaptive, 1 page in 16 with data"
assert_ge "$(delta subpages_sampled)" "$(delta thp_split)" "64kB adaptive: thp_swap/subpages_sampled delta"
assert_eq "$(si_delta /tmp/si.out mthp_swpout)" 0 "64kB adaptive sparse: hugepages-64kB swpout delta"
assert_ge "$pswpout" $((pages / 16 * 9 / 10)) "64kB adaptive sparse: vmstat pswpout delta (about the $((pages / 16)) data pages)"
assert_le "$pswpout" $((pages / 16 + pages / 160 + 64)) "64kB adaptive sparse: vmstat pswpout delta (not the zero pages)"

round 64 74 --min-out-pct 90
decided thp_whole "64kB adaptive, every page with data"
assert_ge "$(si_delta /tmp/si.out mthp_swpout)" $((folios * 9 / 10)) "64kB adaptive dense: hugepages-64kB swpout delta (of $folios)"

echo split >"$MMTUNE_THP/policy" || fail "policy split"
echo inherit >"$MMTUNE_THP/policy_16kB" || fail "policy_16kB inherit"
echo whole >"$MMTUNE_THP/policy_2048kB" || fail "policy_2048kB whole"
round 16 75 --min-out-pct 90
decided thp_split "16kB inherit (policy split)"
assert_eq "$(delta thp_whole)" 0 "16kB inherit (policy split): thp_swap/thp_whole delta"
assert_eq "$(si_delta /tmp/si.out mthp_swpout)" 0 "16kB inherit (policy split): hugepages-16kB swpout delta"
round 2048 76 --min-out-pct 90
decided thp_whole "2048kB whole"
assert_ge "$(si_delta /tmp/si.out mthp_swpout)" $((folios * 9 / 10)) "2048kB whole: hugepages-2048kB swpout delta (of $folios)"
assert_ge "$(si_delta /tmp/si.out thp_swpout)" $((folios * 9 / 10)) "2048kB whole: vmstat thp_swpout delta"
unload_mmtune
swapoff_all
