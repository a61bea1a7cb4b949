# cgroup_policy's entries file against bad input: every malformed or
# refused command gets its errno (EINVAL, ENOENT, ENOSPC) and changes
# nothing; the canonical form reads back; a full table (max_entries) takes
# no new entry but still replaces one; a storm of good and bad writes
# beside faults and cgroup removals ends with a consistent table and no
# kernel report.
# timeout: 900
# tier: check
. /lib.sh
require_feature cgroup_policy
cgp_setup
cgp_mkdir /cgp-a/b /cgp-plain
# A cgroup without the memory controller: its parent does not enable it.
mkdir $CGROUP2/cgp-plain/c || fail "mkdir /cgp-plain/c"
E=$MMTUNE_CGP/entries
sizes=$(cat "$MMTUNE_CGP/sizes")
big=${sizes##* } small=${sizes%% *}
cgp_set "/cgp-a orders=none thp_swap_${big}=split zswap_large_${big}=0"
before=$(cat "$E")
assert_eq "$before" "/cgp-a orders=none thp_swap_${big}=split zswap_large_${big}=0" "entries, canonical form"
long=$(printf '/%04096d' 0)
for bad in "" " " "cgp-a orders=none" "/cgp-a orders" "/cgp-a orders=" "/cgp-a orders=3kB" \
	"/cgp-a orders=16kB,16kB" "/cgp-a orders=none orders=all" "/cgp-a color=red" \
	"/cgp-a thp_swap=sideways" "/cgp-a thp_swap_3kB=split" "/cgp-a zswap_large=2" \
	"/cgp-a zswap_large_${big}=-1" "/cgp-a thp_swap=split thp_swap=whole" \
	"/no-such-cgroup orders=none" "/cgp-a/b/../../etc orders=none" "-/cgp-a extra" \
	"$long orders=none" "/cgp-a zswap_large_${big}=1 zswap_large_${big}=0" \
	"/cgp-plain/c orders=none" "-/cgp-a orders=none"; do
	got=$(sysfs_write "$E" "$bad")
	assert_eq "$got" EINVAL "entries <- '$(echo "$bad" | cut -c1-60)'"
	assert_eq "$(cat "$E")" "$before" "entries kept after '$(echo "$bad" | cut -c1-60)'"
done
# No fault allocates an 8kB folio (6.12): not an orders size.
[ "$small" = 8kB ] && assert_eq "$(sysfs_write "$E" "/cgp-a orders=8kB")" EINVAL "entries <- '/cgp-a orders=8kB'"
assert_eq "$(sysfs_write "$E" "-/cgp-a/b")" ENOENT "removing a path without an entry"
assert_eq "$(cat "$E")" "$before" "entries kept after ENOENT"

# Full: max_entries entries, then one more. One process makes the cgroups
# and their entries: a fork per entry cost three minutes under TCG.
max=$(cat "$MMTUNE_CGP/max_entries")
i=$((max - $(cat "$MMTUNE_CGP/nr_entries")))
cgp_mkdir /cgp-full
echo +memory >"$CGROUP2/cgp-full/cgroup.subtree_control"
python3 - "$CGROUP2/cgp-full" "$E" "$i" <<'EOF_PY' || fail "filling the table"
import os, sys
top, entries, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(n):
    os.mkdir(f"{top}/{i}")
    with open(entries, "w") as f:
        f.write(f"/cgp-full/{i} zswap_large=1\n")
EOF_PY
assert_eq "$(cat "$MMTUNE_CGP/nr_entries")" "$max" "nr_entries, table full"
full=$(cat "$E" | md5sum)
assert_eq "$(sysfs_write "$E" "/cgp-a/b orders=all")" ENOSPC "a new entry in a full table"
assert_eq "$(cat "$E" | md5sum)" "$full" "entries kept after ENOSPC"
cgp_set "/cgp-a orders=all"
assert_eq "$(cat "$MMTUNE_CGP/nr_entries")" "$max" "replacing in a full table"
# A removed cgroup frees its slot.
rmdir "$CGROUP2/cgp-full/0"
cgp_set "/cgp-a/b orders=none"
python3 -c 'import os, sys; [os.rmdir(f"{sys.argv[1]}/{j}") for j in range(1, int(sys.argv[2]))]; os.rmdir(sys.argv[1])' \
	"$CGROUP2/cgp-full" "$i" || fail "removing the cgroups"
assert_eq "$(cat "$MMTUNE_CGP/nr_entries")" 2 "nr_entries after the cgroups went"

# Storm: writers, readers and faults at once, cgroups coming and going.
thp_always
cgp_mkdir /cgp-storm/run
storm() {
	k=0
	while [ $k -lt 200 ]; do
		mkdir -p "$CGROUP2/cgp-storm/$1" 2>/dev/null
		sysfs_write "$E" "/cgp-storm/$1 orders=none zswap_large=$((k % 2))" >/dev/null
		sysfs_write "$E" "/cgp-storm/$1 orders=bogus" >/dev/null
		cat "$E" "$MMTUNE_CGP/stats" >/dev/null
		[ $((k % 3)) -eq 0 ] && rmdir "$CGROUP2/cgp-storm/$1" 2>/dev/null
		k=$((k + 1))
	done
}
storm w1 & storm w2 &
sh -c "echo \$\$ >$CGROUP2/cgp-storm/run/cgroup.procs && exec malloc_thp --sparse 64 --dense 16" >/dev/null 2>&1 &
echo 0 >"$MMTUNE_CGP/enabled"; echo 1 >"$MMTUNE_CGP/enabled"
wait
rmdir $CGROUP2/cgp-storm/w1 $CGROUP2/cgp-storm/w2 $CGROUP2/cgp-storm/run 2>/dev/null
rmdir $CGROUP2/cgp-storm
assert_eq "$(cat "$E")" "/cgp-a orders=all
/cgp-a/b orders=none" "entries after the storm"
unload_mmtune
rmdir $CGROUP2/cgp-a/b $CGROUP2/cgp-a $CGROUP2/cgp-plain/c $CGROUP2/cgp-plain
