# cgroup_policy's swap-out decisions per cgroup, on every size (6.12: 16K,
# 64K, 2M; 6.1: 2M), against global settings that say the opposite
# (thp_swap policy split, zswap_large storing every size): a cgroup with
# thp_swap=whole and zswap_large=1 gets its folios stored in zswap whole,
# one with thp_swap=split gets them split first, one with thp_swap=whole
# and zswap_large=0 gets them written to the disk whole. Each run writes
# known bytes, forces them out and reads them back equal; the module's
# counters and the entry's stats count each decision.
# timeout: 1200
# tier: check
. /lib.sh
require_feature cgroup_policy thp_swap zswap_large
zswap_large_setup
echo 1 >"$MMTUNE_CGP/enabled" || fail "enable cgroup_policy"
echo +memory >$CGROUP2/cgroup.subtree_control
echo split >"$MMTUNE_SYSFS/thp_swap/policy" || fail "thp_swap policy split"
echo 1 >"$MMTUNE_SYSFS/thp_swap/enabled" || fail "enable thp_swap"
cgp_mkdir /cgp-zswap /cgp-split /cgp-disk
cgp_set "/cgp-zswap thp_swap=whole zswap_large=1"
cgp_set "/cgp-split thp_swap=split"
cgp_set "/cgp-disk thp_swap=whole zswap_large=0"
thp() { cat "$MMTUNE_SYSFS/thp_swap/$1"; }
# to_disk OUT KB: the run's folios written to the disk whole.
to_disk() { if mthp_has "$2"; then si_delta "$1" mthp_swpout; else si_delta "$1" thp_swpout; fi; }

seed=110
for kb in $(cgp_sizes); do
	s=${kb}kB
	seed=$((seed + 1))
	st0=$(mmtune_zswap thp_stored) w0=$(thp thp_whole) z0=$(cgp_stat /cgp-zswap "zswap_stored_$s")
	cgp_run /tmp/z.out /cgp-zswap "$kb" --size 16 --fill compressible --evict pageout --min-out-pct 100 --seed $seed
	f=$(cgp_folios /tmp/z.out "$kb")
	assert_ge "$f" 1 "$s, /cgp-zswap: folios of the size"
	assert_eq $(( $(mmtune_zswap thp_stored) - st0 )) "$f" "$s, /cgp-zswap: zswap_large/thp_stored delta (stored whole)"
	assert_ge $(( $(thp thp_whole) - w0 )) "$f" "$s, /cgp-zswap: thp_swap/thp_whole delta"
	assert_ge "$(cgp_stat /cgp-zswap "thp_whole_$s")" "$f" "$s, /cgp-zswap: stats thp_whole_$s"
	assert_eq $(( $(cgp_stat /cgp-zswap "zswap_stored_$s") - z0 )) "$f" "$s, /cgp-zswap: stats zswap_stored_$s delta"
	assert_eq "$(si_delta /tmp/z.out pswpout)" 0 "$s, /cgp-zswap: vmstat pswpout delta"

	seed=$((seed + 1))
	st0=$(mmtune_zswap thp_stored) p0=$(thp thp_split) c0=$(cgp_stat /cgp-split "thp_split_$s")
	cgp_run /tmp/s.out /cgp-split "$kb" --size 16 --fill compressible --evict pageout --min-out-pct 100 --seed $seed
	f=$(cgp_folios /tmp/s.out "$kb")
	assert_ge $(( $(thp thp_split) - p0 )) "$f" "$s, /cgp-split: thp_swap/thp_split delta"
	assert_ge $(( $(cgp_stat /cgp-split "thp_split_$s") - c0 )) "$f" "$s, /cgp-split: stats thp_split_$s delta"
	assert_eq $(( $(mmtune_zswap thp_stored) - st0 )) 0 "$s, /cgp-split: zswap_large/thp_stored delta (split first)"
	assert_eq "$(to_disk /tmp/s.out "$kb")" 0 "$s, /cgp-split: folios to the disk whole"

	seed=$((seed + 1))
	st0=$(mmtune_zswap thp_stored) r0=$(cgp_stat /cgp-disk "zswap_refused_$s")
	cgp_run /tmp/d.out /cgp-disk "$kb" --size 16 --fill compressible --evict pageout --min-out-pct 90 --seed $seed
	f=$(cgp_folios /tmp/d.out "$kb")
	assert_eq $(( $(mmtune_zswap thp_stored) - st0 )) 0 "$s, /cgp-disk: zswap_large/thp_stored delta"
	assert_ge $(( $(cgp_stat /cgp-disk "zswap_refused_$s") - r0 )) $((f * 9 / 10)) "$s, /cgp-disk: stats zswap_refused_$s delta"
	assert_ge "$(to_disk /tmp/d.out "$kb")" $((f * 9 / 10)) "$s, /cgp-disk: folios to the disk whole (of $f)"
done
cat "$MMTUNE_CGP/stats"

swapoff /dev/vda || fail "swapoff"
assert_eq "$(zswap_stored_pages)" 0 "zswap stored_pages after swapoff"
unload_mmtune
rmdir $CGROUP2/cgp-zswap $CGROUP2/cgp-split $CGROUP2/cgp-disk
