# A split that thp_swap asks for and that fails: the folio goes out whole,
# as the stock path would take it, not back to the active list.
# split_pin.ko (tests/kmod) makes every split in reclaim of an anonymous
# large folio fail, as a reference taken meanwhile does; thp_swap's policy
# "split" asks for one on every folio. Per size (16K, 64K and 2M where the
# kernel has mTHP, 2M THPs on 6.1), on the disk: thp_split_failed counts
# every split that failed, at least 90% of the region's folios go out
# whole (the size's swpout, or thp_swpout), and every byte reads back
# equal. Before the fallback, the folios were activated and the round
# trip failed its min-out-pct.
# timeout: 600
# tier: check
. /lib.sh
require_feature thp_swap
SP=/sys/kernel/debug/split_pin
insmod /mmtune/split_pin.ko || fail "insmod split_pin.ko"
trap 'grep -q "^split_pin " /proc/modules && rmmod split_pin' EXIT
thp_setup disk split

sizes=2048
mthp_has 16 && sizes="16 64 2048"
seed=70
for kb in $sizes; do
	seed=$((seed + 1))
	f0=$(thp_knob thp_split_failed) p0=$(cat $SP/failed)
	echo 1000000 >$SP/count || fail "arm split_pin"
	if mthp_has "$kb"; then
		mthp_run /tmp/si.out "$kb" anon --size 32 --evict pageout --min-out-pct 90 --seed $seed
		folios=$(si_delta /tmp/si.out region_folios)
		whole=$(si_delta /tmp/si.out mthp_swpout)
	else
		swap_integrity --thp --size 32 --evict pageout --min-out-pct 90 --seed $seed >/tmp/si.out 2>&1
		rc=$?
		cat /tmp/si.out
		[ $rc -eq 0 ] || fail "${kb}kB: swap round trip failed (exit $rc)"
		folios=$((32 * 1024 / kb))
		whole=$(si_delta /tmp/si.out thp_swpout)
	fi
	echo 0 >$SP/count
	failed=$(( $(cat $SP/failed) - p0 ))
	assert_ge "$failed" $((folios * 9 / 10)) "${kb}kB: splits split_pin made fail (of $folios folios)"
	assert_eq $(( $(thp_knob thp_split_failed) - f0 )) "$failed" "${kb}kB: thp_swap/thp_split_failed delta (every failed split)"
	assert_ge "$whole" $((folios * 9 / 10)) "${kb}kB: folios swapped out whole after their split failed (of $folios)"
done
