# Two writers rewrite random subpages of 16 THPs (a checksum per subpage,
# kept by its writer; one rewrite in four is all zeroes) while a third
# thread loops debugfs split_huge_pages, MADV_PAGEOUT and MADV_COLLAPSE:
# with thp_swap (adaptive) and split_zero (always) on, every subpage equals
# its writer's checksum throughout and at the end, and the features did
# their work meanwhile. Twice: swap on zram, then on the disk behind zswap
# with zswap_large on too. The second time thp_swap is off ("whole"): the
# adaptive policy splits THPs with many zero subpages (a quarter of these
# are). Whole THPs reach reclaim because thp_churn pages out each THP it
# collapsed at once, the first of each round with its writers parked: a
# writer faulting on the THP holds a reference, and reclaim keeps such a
# folio in the swap cache unwritten (with the writers running, 3 of 15
# pageouts stored whole in one run, 0 of 19 in another).
# timeout: 600
. /lib.sh
require_feature thp_swap split_zero zswap_large

# where_thps_went: the counters that tell what became of THPs in reclaim
# (swapped out whole or split, zswap_large's stores and refusals) and how
# much went out, as NAME=VALUE; printed as deltas after each run, so that
# a run without a whole store says why.
where_thps_went() {
	for k in pswpout zswpout thp_swpout thp_swpout_fallback thp_split_page; do
		echo "$k=$(vmstat $k)"
	done
	echo "thp_whole=$(thp_knob thp_whole)"
	if [ -d "$MMTUNE_ZSWAP" ]; then
		for k in thp_stored subpages_stored rollback_pool_limit rollback_cgroup_limit \
			rollback_nomem rollback_compress rollback_other backoff_skipped; do
			echo "zswap_large_$k=$(mmtune_zswap $k)"
		done
	fi
}

# went NAME: the delta of one of those since the last churn started.
went() {
	echo $(( $(where_thps_went | sed -n "s/^$1=//p") - $(sed -n "s/^$1=//p" /tmp/w0) ))
}

# churn NAME SECONDS SEED POLICY: thp_churn with counter snapshots around it.
churn() {
	thp_counters >/tmp/c0
	where_thps_went >/tmp/w0
	thp_churn --mib 32 --writers 2 --seconds "$2" --seed "$3" >/tmp/churn.out 2>&1
	rc=$?
	cat /tmp/churn.out
	where_thps_went | awk -F= -v name="$1" 'NR == FNR { old[$1] = $2; next }
		{ d = d " " $1 "=" $2 - old[$1] } END { print name ": deltas:" d }' /tmp/w0 -
	[ $rc -eq 4 ] && skip "$(tail -n 1 /tmp/churn.out)"
	[ $rc -eq 0 ] || fail "$1: thp_churn exit $rc (data changed under split/pageout/collapse)"
	eval "$(sed -n 's/^thp_churn: \(writes=.*\) secs=.*/\1/p' /tmp/churn.out)"
	assert_ge "$writes" 1000 "$1: subpage rewrites"
	assert_ge "$splits" 4 "$1: split_huge_pages rounds"
	assert_ge "$collapses" 1 "$1: THPs collapsed again (MADV_COLLAPSE)"
	assert_ge "$(went thp_split_page)" 3 "$1: vmstat thp_split_page delta"
	assert_ge "$(thp_counter_delta /tmp/c0 splits_scanned)" 3 "$1: split_zero/splits_scanned delta"
	assert_ge "$(thp_counter_delta /tmp/c0 zero_ptes_mapped)" 1 "$1: split_zero/zero_ptes_mapped delta"
	if [ "$4" != whole ]; then
		sampled=$(( $(thp_counter_delta /tmp/c0 thp_whole) + $(thp_counter_delta /tmp/c0 thp_split) ))
		assert_ge "$sampled" 1 "$1: THPs thp_swap decided on"
	fi
	assert_ge $(( $(went pswpout) + $(went zswpout) )) 1000 "$1: pages swapped out"
}

thp_setup zram adaptive always
churn zram 15 391 adaptive
assert_ge "$(went thp_swpout)" 1 "zram: THPs swapped out whole (vmstat thp_swpout delta)"
unload_mmtune

zswap_large_setup
thp_policy whole
split_zero_mode always
churn "disk+zswap" 15 392 whole
assert_ge "$(went zswap_large_thp_stored)" 1 "disk+zswap: THPs stored whole (zswap_large/thp_stored delta)"
assert_eq "$(went zswap_large_subpages_stored)" $(( $(went zswap_large_thp_stored) * 512 )) "disk+zswap: zswap_large/subpages_stored delta (512 per THP)"
unload_mmtune
