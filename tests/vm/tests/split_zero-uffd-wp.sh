# userfaultfd write-protection survives a THP split with split_zero
# mode=always: write-protected THPs (1 data subpage in 8) split by debugfs
# split_huge_pages, then by MADV_PAGEOUT (thp_swap split policy, swap on
# zram): every subpage keeps the uffd-wp bit (pagemap), zero subpages map
# the zero page, a write to a formerly zero subpage and to a data subpage
# is delivered as a write-protect fault first, and every byte is right.
# tier: check
. /lib.sh
require_feature thp_swap split_zero
thp_setup zram split always

# run_uffd NAME ARGS...: uffd_wp_split, output in /tmp/uw.out.
run_uffd() {
	name=$1
	shift
	thp_counters >/tmp/c0
	uffd_wp_split "$@" >/tmp/uw.out 2>&1
	rc=$?
	cat /tmp/uw.out
	[ $rc -eq 4 ] && skip "$(tail -n 1 /tmp/uw.out)"
	[ $rc -eq 0 ] || fail "$name: uffd_wp_split exit $rc"
	# after_split: uffd_wp=N zero_mapped=N swapped=N pages=N
	eval "$(sed -n 's/^after_split: //p' /tmp/uw.out)"
	assert_eq "$uffd_wp" "$pages" "$name: subpages with the uffd-wp bit after the split"
	# 7 of every 8 subpages are zero: all of them dropped to the zero page.
	assert_eq "$zero_mapped" $((pages * 7 / 8)) "$name: zero subpages mapping the zero page"
	assert_ge "$(thp_counter_delta /tmp/c0 zero_ptes_mapped)" $((pages * 7 / 8)) "$name: split_zero/zero_ptes_mapped delta"
}

run_uffd debugfs --thps 8 --split debugfs --seed 51
assert_eq "$swapped" 0 "debugfs: swapped subpages"
run_uffd pageout --thps 8 --split pageout --seed 52
assert_eq "$swapped" $((pages / 8)) "pageout: data subpages in swap"
assert_ge "$(thp_counter_delta /tmp/c0 thp_split)" 8 "pageout: thp_swap/thp_split delta"
unload_mmtune
