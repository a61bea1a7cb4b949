# cgroup_policy narrows the folio sizes of faults per memory cgroup, and
# only narrows: two sibling cgroups with opposite entries fault the same
# pattern with THP always, and each gets the folio sizes its entry says,
# measured from pagemap and kpageflags (swap_integrity's region_folios, or
# its THPs on 6.1), per size (6.12: 16K, 64K, 2M, anonymous and shmem;
# 6.1: 2M anonymous, its only hook); the runs'
# own cgroups are created after the entries, under them (inheritance),
# one of them two levels down. An entry cannot give a size the global
# setting refuses. Removing the cgroup removes its entry (a new cgroup of
# that path gets none); rmmod with entries leaves nothing behind.
# timeout: 900
# tier: check
. /lib.sh
require_feature cgroup_policy
swapon_disk
cgp_setup
cgp_mkdir /cgp-none /cgp-all/inner /cgp-all/leaf
cgp_set "/cgp-none orders=none"
cgp_set "/cgp-all orders=all"
assert_eq "$(cat "$MMTUNE_CGP/nr_entries")" 2 "nr_entries"
assert_eq "$(cat "$MMTUNE_CGP/entries")" "/cgp-all orders=all
/cgp-none orders=none" "entries, sorted by path"

seed=90
for kb in $(cgp_sizes); do
	seed=$((seed + 1))
	n0=$(cgp_stat /cgp-none "fault_narrowed_${kb}kB")
	cgp_run /tmp/none.out /cgp-none "$kb" --size 16 --fill compressible --evict pageout \
		--min-out-pct 90 --min-mthp-pct 0 --seed $seed
	assert_eq "$(cgp_folios /tmp/none.out "$kb")" 0 "${kb}kB, orders=none: folios of the size backing the region"
	assert_ge $(( $(cgp_stat /cgp-none "fault_narrowed_${kb}kB") - n0 )) 1 "${kb}kB, orders=none: stats fault_narrowed_${kb}kB delta"
	a0=$(cgp_stat /cgp-all "fault_narrowed_${kb}kB")
	cgp_run /tmp/all.out /cgp-all/inner "$kb" --size 16 --fill compressible --evict pageout \
		--min-out-pct 90 --seed $seed
	assert_ge "$(cgp_folios /tmp/all.out "$kb")" $(( 16 * 1024 / kb * 9 / 10 )) "${kb}kB, orders=all two levels down: folios of the size"
	assert_eq "$(cgp_stat /cgp-all "fault_narrowed_${kb}kB")" "$a0" "${kb}kB, orders=all: stats fault_narrowed_${kb}kB unchanged"
done

# Shmem faults (6.12, where shmem_get_folio_gfp() asks the hook too): the
# same two cgroups, each size.
if mthp_has 16; then
	for kb in 16 64 2048; do
		seed=$((seed + 1))
		n0=$(cgp_stat /cgp-none "fault_narrowed_${kb}kB")
		mthp_run /tmp/none.out "$kb" shmem --cgroup-parent "$CGROUP2/cgp-none" --size 16 \
			--fill compressible --evict pageout --min-out-pct 90 --min-mthp-pct 0 --seed $seed
		assert_eq "$(si_delta /tmp/none.out region_folios)" 0 "shmem ${kb}kB, orders=none: folios of the size backing the region"
		assert_ge $(( $(cgp_stat /cgp-none "fault_narrowed_${kb}kB") - n0 )) 1 "shmem ${kb}kB, orders=none: stats fault_narrowed_${kb}kB delta"
		mthp_run /tmp/all.out "$kb" shmem --cgroup-parent "$CGROUP2/cgp-all/inner" --size 16 \
			--fill compressible --evict pageout --min-out-pct 90 --seed $seed
		assert_ge "$(si_delta /tmp/all.out region_folios)" $(( 16 * 1024 / kb * 9 / 10 )) "shmem ${kb}kB, orders=all two levels down: folios of the size"
	done
fi

# One size allowed, the others taken (6.12): 64K faults in a cgroup that
# allows 16K only get no 64K folio; 16K ones are left alone.
if mthp_has 64; then
	cgp_set "/cgp-none orders=16kB"
	cgp_run /tmp/none.out /cgp-none 64 --size 8 --fill compressible --evict pageout \
		--min-out-pct 90 --min-mthp-pct 0 --seed 95
	assert_eq "$(cgp_folios /tmp/none.out 64)" 0 "64kB faults, orders=16kB: 64kB folios"
	cgp_run /tmp/none.out /cgp-none 16 --size 8 --fill compressible --evict pageout \
		--min-out-pct 90 --seed 96
	assert_ge "$(cgp_folios /tmp/none.out 16)" $(( 8 * 1024 / 16 * 9 / 10 )) "16kB faults, orders=16kB: 16kB folios"
	cgp_set "/cgp-none orders=none"
fi

# Only narrows: with THP never globally, orders=all gives nothing.
echo never >"$THP_SYSFS/enabled"
for f in "$THP_SYSFS"/hugepages-*kB/enabled; do [ -w "$f" ] && echo never >"$f"; done
sh -c "echo \$\$ >$CGROUP2/cgp-all/leaf/cgroup.procs && exec malloc_thp --sparse 16 --dense 0" >/tmp/mt.out 2>&1 ||
	{ cat /tmp/mt.out; fail "malloc_thp in /cgp-all/leaf"; }
cat /tmp/mt.out
assert_eq "$(sed -n 's/.*anon_huge_kib=\([0-9]*\).*/\1/p' /tmp/mt.out)" 0 "THP never, entry orders=all: AnonHugePages"

# Removal: the entry goes with its cgroup; a new cgroup of the path has none.
p0=$(cat "$MMTUNE_CGP/entries_pruned")
rmdir $CGROUP2/cgp-all/inner $CGROUP2/cgp-all/leaf $CGROUP2/cgp-all || fail "rmdir /cgp-all"
assert_eq "$(cat "$MMTUNE_CGP/entries")" "/cgp-none orders=none" "entries after rmdir /cgp-all"
assert_eq "$(cat "$MMTUNE_CGP/nr_entries")" 1 "nr_entries after rmdir"
assert_eq $(( $(cat "$MMTUNE_CGP/entries_pruned") - p0 )) 1 "entries_pruned delta"
cgp_mkdir /cgp-all
assert_eq "$(cat "$MMTUNE_CGP/entries")" "/cgp-none orders=none" "entries after mkdir /cgp-all again"

# rmmod with an entry: the module goes, and comes back with an empty table.
unload_mmtune
load_mmtune
assert_eq "$(cat "$MMTUNE_CGP/entries")" "" "entries after rmmod and insmod"
assert_eq "$(cat "$MMTUNE_CGP/nr_entries")" 0 "nr_entries after rmmod and insmod"
unload_mmtune
rmdir $CGROUP2/cgp-none $CGROUP2/cgp-all
