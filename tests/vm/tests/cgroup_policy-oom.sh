# The container host's case: THP always on the host, a pod-like memory
# cgroup with a 64 MiB limit and no swap, a malloc-style heap with THP
# (malloc_thp: 128 MiB of heap sparsely used, then a 24 MiB working set).
# Without an entry its THPs fill the limit and it is OOM-killed (or at
# least its memory peaks near the limit); with an entry orders=none on
# its parent, covering it, it finishes far below the limit. The expected
# OOM report stays off the console (which fails a run on any report):
# the test checks the kernel log of that window itself, where the OOM
# kill of its cgroup must be the only report.
# timeout: 600
# tier: check
. /lib.sh
require_feature cgroup_policy
swapoff_all
thp_always
cgp_setup
cgp_mkdir /cgp-pods /cgp-pods/pod

# heap CGROUP: malloc_thp in CGROUP; its exit status; memory.peak and the
# OOM kills in $peak and $kills.
heap() {
	echo 64M >"$CGROUP2$1/memory.max" || fail "memory.max"
	echo 0 >"$CGROUP2$1/memory.swap.max" 2>/dev/null
	k0=$(awk '$1 == "oom_kill" { print $2 }' "$CGROUP2$1/memory.events")
	sh -c "echo \$\$ >$CGROUP2$1/cgroup.procs && exec malloc_thp --sparse 128 --dense 24" >/tmp/heap.out 2>&1
	rc=$?
	cat /tmp/heap.out
	peak=$(cat "$CGROUP2$1/memory.peak" 2>/dev/null || cat "$CGROUP2$1/memory.current")
	kills=$(( $(awk '$1 == "oom_kill" { print $2 }' "$CGROUP2$1/memory.events") - k0 ))
	info "$1: exit $rc, memory.peak $peak, oom_kill +$kills"
}

# A fresh cgroup per run: memory.peak starts at 0.
n0=$(dmesg | wc -l)
printk=$(cut -f1 /proc/sys/kernel/printk)
echo 3 >/proc/sys/kernel/printk
heap /cgp-pods/pod
echo "$printk" >/proc/sys/kernel/printk
dmesg | tail -n +$((n0 + 1)) >/tmp/oom.log
if [ "$kills" -gt 0 ]; then
	grep -q 'oom-kill:.*oom_memcg=/cgp-pods/pod' /tmp/oom.log || { cat /tmp/oom.log; fail "no OOM kill of /cgp-pods/pod in the kernel log"; }
fi
# Reports other than the OOM killer's own (its header and stack dump).
grep -E 'WARNING:|BUG:|Oops|lock(ing|dep)|RCU|KASAN|UBSAN|blocked for' /tmp/oom.log &&
	fail "a kernel report beside the expected OOM kill"
assert_eq "$(( kills > 0 || peak >= 56 << 20 ))" 1 "no entry: OOM-killed ($kills) or memory.peak near the 64M limit ($peak)"
rmdir $CGROUP2/cgp-pods/pod

cgp_set "/cgp-pods orders=none"
cgp_mkdir /cgp-pods/pod
heap /cgp-pods/pod
assert_eq "$rc" 0 "entry orders=none on the parent: malloc_thp exit status"
assert_eq "$kills" 0 "entry orders=none: OOM kills"
assert_le "$peak" $((40 << 20)) "entry orders=none: memory.peak"
assert_ge "$(cgp_stat /cgp-pods fault_narrowed_2048kB)" 64 "stats fault_narrowed_2048kB (one per sparse 2M of the heap)"
rmdir $CGROUP2/cgp-pods/pod $CGROUP2/cgp-pods
unload_mmtune
