# A THP with a hardware-poisoned subpage that memory_failure() could not
# split (a pipe held one of its pages: EBUSY, "unsplit thp: Ignored" on 6.1;
# on 6.12 EHWPOISON, "unsplit thp: Failed" and SIGBUS to the caller; the
# THP stays whole and mapped) is never offered to a hook that reads it.
# With zswap + zswap_large and thp_swap (adaptive) on, MADV_PAGEOUT of it
# moves none of their counters: still pinned, reclaim skips it (it cannot
# be split) and it stays mapped; released, it goes to the disk whole
# (stock 6.1), and its poisoned subpage SIGBUSes (BUS_MCEERR_AR) from then
# on. Stock 6.12 keeps every large folio with a poisoned page in memory
# (shrink_folio_list(): folio_contain_hwpoisoned_page()), released or not.
# Every other byte, and every healthy THP (sampled and kept whole by
# thp_swap, stored whole by zswap_large), reads back equal.
# tier: check
. /lib.sh
require_feature zswap_large thp_swap
zswap_large_setup
thp_policy adaptive
poisoned0=$(awk '/^HardwareCorrupted:/ { print $2 }' /proc/meminfo)

watch=""
for f in thp_stored subpages_stored subpages_rolled_back rollback_other fallback_disk; do
	watch="$watch --watch $MMTUNE_ZSWAP/$f"
done
for f in thp_whole thp_split subpages_sampled; do
	watch="$watch --watch $MMTUNE_THP/$f"
done
for k in thp_swpout thp_swpout_fallback pswpout zswpout; do
	watch="$watch --watch vmstat:$k"
done
released_kept=
[ "$MMTUNE_LINE" = 6.1 ] || released_kept=--released-kept
thp_hwpoison --thps 8 --subpage 5 $released_kept $watch >/tmp/hp.out 2>&1
rc=$?
cat /tmp/hp.out
[ $rc -eq 4 ] && skip "$(tail -n 1 /tmp/hp.out)"
[ $rc -eq 0 ] || fail "thp_hwpoison: exit $rc"

# delta STEP NAME: a counter's change over one pageout step.
delta() { awk -v s="$1" -v n="$2" '$1 == "delta" && $2 == s && $3 == n { print $4 }' /tmp/hp.out; }

# What memory_failure() said about the two THPs it could not split.
assert_eq "$(dmesg | grep -cE 'recovery action for unsplit thp: (Ignored|Failed)')" 2 "console: 'unsplit thp: Ignored' (6.1) or 'Failed' (6.12) reports"
assert_eq "$(awk '/^HardwareCorrupted:/ { print $2 }' /proc/meminfo)" $((poisoned0 + 8)) "HardwareCorrupted (kB)"

for step in pinned released; do
	for n in zswap_large/thp_stored zswap_large/subpages_stored zswap_large/subpages_rolled_back \
		zswap_large/rollback_other zswap_large/fallback_disk thp_swap/thp_whole thp_swap/thp_split \
		thp_swap/subpages_sampled zswpout; do
		assert_eq "$(delta $step $n)" 0 "$step poisoned THP: $n delta (no hook saw it)"
	done
done
# Pinned: reclaim cannot split it, so skips it (can_split_folio()), unwritten.
assert_eq "$(delta pinned pswpout)" 0 "pinned poisoned THP: pswpout delta"
assert_eq "$(delta pinned thp_swpout)" 0 "pinned poisoned THP: thp_swpout delta"
grep -q 'THP 0 (pinned): still whole and mapped' /tmp/hp.out || fail "pinned THP not whole after pageout"
if [ -z "$released_kept" ]; then
	# Released: reclaim writes it to the disk whole, as stock 6.1 does.
	assert_eq "$(delta released thp_swpout)" 1 "released poisoned THP: thp_swpout delta (to the disk whole)"
	assert_eq "$(delta released pswpout)" 512 "released poisoned THP: pswpout delta"
else
	# Released: kept whole and mapped, unwritten, as stock 6.12 does.
	assert_eq "$(delta released thp_swpout)" 0 "released poisoned THP: thp_swpout delta (kept)"
	assert_eq "$(delta released pswpout)" 0 "released poisoned THP: pswpout delta (kept)"
	grep -q 'THP 1 (released): still whole and mapped' /tmp/hp.out || fail "released THP not whole after pageout"
fi

# The healthy THPs went through both hooks: sampled and kept whole by
# thp_swap, stored whole by zswap_large.
assert_eq "$(delta healthy zswap_large/thp_stored)" 6 "healthy THPs: zswap_large/thp_stored delta"
assert_eq "$(delta healthy thp_swap/thp_whole)" 6 "healthy THPs: thp_swap/thp_whole delta"
assert_ge "$(delta healthy thp_swap/subpages_sampled)" 6 "healthy THPs: thp_swap/subpages_sampled delta"
assert_eq "$(delta healthy thp_swpout)" 0 "healthy THPs: thp_swpout delta (none to the disk)"
grep -q '^thp_hwpoison: PASS' /tmp/hp.out || fail "no PASS verdict"

# Give the two pages back (software-injected poison can be undone), so that
# later tests find no poisoned page in the buddy allocator.
unload_mmtune
swapoff /dev/vda || fail "swapoff"
for pfn in $(awk '$1 == "poisoned_pfns" { print $2, $3 }' /tmp/hp.out); do
	echo "$pfn" >/sys/kernel/debug/hwpoison/unpoison-pfn || fail "unpoison $pfn"
done
assert_eq "$(awk '/^HardwareCorrupted:/ { print $2 }' /proc/meminfo)" "$poisoned0" "HardwareCorrupted after unpoison (kB)"
