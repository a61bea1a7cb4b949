# Worst case: every subpage of every THP holds data (last byte of each, as
# in the seed's experiment). The adaptive policy keeps the THPs whole:
# thp_swpout rises by the number of THPs, all subpages are written, nothing
# is split or dropped, and every byte reads back. On zram and on the disk.
. /lib.sh
require_feature thp_swap split_zero
for dev in zram disk; do
	thp_setup $dev adaptive reclaim-only
	thp_counters >/tmp/c0
	run_sparse /tmp/ts.out --size 32 --dirty 512 --offset 4095 --seed 7
	thps=$(si_delta /tmp/ts.out thps)
	assert_ge "$thps" 14 "$dev: THPs backing the 32 MiB region (of 16)"
	assert_eq "$(si_delta /tmp/ts.out thp_swpout)" "$thps" "$dev: vmstat thp_swpout delta (THPs swapped whole)"
	assert_ge "$(si_delta /tmp/ts.out pswpout)" $((thps * 512)) "$dev: vmstat pswpout delta (every subpage written)"
	assert_eq "$(thp_counter_delta /tmp/c0 thp_whole)" "$thps" "$dev: thp_swap/thp_whole delta"
	assert_eq "$(thp_counter_delta /tmp/c0 thp_split)" 0 "$dev: thp_swap/thp_split delta"
	assert_le "$(thp_counter_delta /tmp/c0 subpages_sampled)" $((thps * 4)) "$dev: subpages sampled (stops at the threshold, 4 per THP)"
	assert_eq "$(thp_counter_delta /tmp/c0 subpages_zero)" 0 "$dev: split_zero/subpages_zero delta"
	assert_eq "$(thp_counter_delta /tmp/c0 bytes_not_written)" 0 "$dev: split_zero/bytes_not_written delta"
	assert_eq "$(si_delta /tmp/ts.out zero_mapped)" 0 "$dev: subpages mapping the zero page"
	unload_mmtune
done
