# mmtunectl's [cgroup:...] sections against the live module: a profile
# naming cgroups by path and by glob is checked and applied (one entries
# line per cgroup, cgroup_policy switched on), verify and status agree,
# faults in a covered cgroup are narrowed, a changed profile replaces the
# entries, and rollback removes them and restores enabled. A profile whose
# required cgroup is missing changes nothing.
# timeout: 600
# tier: check
. /lib.sh
. /mmtunectl-lib.sh
require_feature cgroup_policy
load_mmtune
trap 'ctl_cleanup; rm -rf /etc/mmtune/profiles' EXIT
cgp_mkdir ct/db ct/pod-a ct/pod-b
E=$MMTUNE_CGP/entries
enabled0=$(cat "$MMTUNE_CGP/enabled")
assert_eq "$(cat "$E")" "" "no entry before the profile"

mkdir -p /etc/mmtune/profiles
cat >/etc/mmtune/profiles/cgtest.conf <<'EOF'
[main]
include = balanced

[cgroup:/ct/pod-*]
orders = none
thp_swap = split

[cgroup:/ct/db]
thp_swap = whole
EOF
# The admin's choice, so that verify compares with it, not the recommended one.
echo cgtest >/etc/mmtune/profile
ctl_rc 0 check /etc/mmtune/profiles/cgtest.conf
ctl_rc 1 diff cgtest
out_has "cgroup /ct/pod-a"
assert_eq "$(cat "$E")" "" "diff wrote no entry"
ctl_rc 0 apply cgtest
assert_eq "$(cat "$MMTUNE_CGP/enabled")" 1 "apply switched cgroup_policy on"
for p in /ct/pod-a /ct/pod-b /ct/db; do
	grep -q "^$p " "$E" || fail "entries lack $p after apply: $(cat "$E")"
done
assert_eq "$(grep -c . "$E")" 3 "one entry per matched cgroup"
grep "^/ct/pod-a " "$E" | grep -q "orders=none" || fail "pod-a's entry lacks orders=none: $(cat "$E")"
ctl_rc 0 verify
ctl_rc 0 status
out_has "/ct/pod-b"

# The entry takes effect: a THP-sized fault in pod-a is narrowed.
n0=$(cgp_stat /ct/pod-a fault_narrowed_2048kB)
thp_always
sh -c "echo \$\$ >$CGROUP2/ct/pod-a/cgroup.procs && exec malloc_thp --sparse 16 --dense 4" >/tmp/m.out 2>&1 ||
	fail "malloc_thp in /ct/pod-a: $(cat /tmp/m.out)"
assert_ge $(( $(cgp_stat /ct/pod-a fault_narrowed_2048kB) - n0 )) 4 "pod-a: stats fault_narrowed_2048kB delta (one per sparse 2M)"

# A changed profile replaces the entries: db gone, pods keep theirs.
sed -i '/^\[cgroup:\/ct\/db\]/,$d' /etc/mmtune/profiles/cgtest.conf
ctl_rc 0 apply cgtest
grep -q "^/ct/db " "$E" && fail "db's entry kept after the profile dropped it: $(cat "$E")"
assert_eq "$(grep -c . "$E")" 2 "the pods' entries after the second apply"

ctl_rc 0 rollback
assert_eq "$(cat "$E")" "" "rollback removed every entry"
assert_eq "$(cat "$MMTUNE_CGP/enabled")" "$enabled0" "rollback restored enabled"

# A required cgroup that does not exist: an error, nothing written.
printf '[cgroup:/ct/absent]\norders = none\n' >/etc/mmtune/profiles/cgbad.conf
ctl apply cgbad
[ "$rc" != 0 ] || fail "apply with a missing required cgroup exited 0"
out_has "/ct/absent"
assert_eq "$(cat "$E")" "" "nothing written for the missing cgroup"
assert_eq "$(cat "$MMTUNE_CGP/enabled")" "$enabled0" "enabled unchanged by the failed apply"
