# A failure at every step of loading mmtune.ko leaves nothing behind and the
# next plain load works. fail-nth (/proc/thread-self/fail-nth, written by
# modload right before its one finit_module() call): the Nth allocation
# that failslab or fail_page_alloc sees in the loading task fails, whatever
# its GFP flags and order, for N = 1, 2, 3, ... until the load makes fewer
# than N of them. That covers the module loader (reading the file, layout,
# per-CPU sections, /sys/module), the hook core's registration, the
# features' per-CPU slot caches and CPU hotplug state, and every sysfs
# directory and file of /sys/kernel/mm/mmtune. A load may also survive a
# failure (kvmalloc falls back to vmalloc, a debugfs file is optional):
# then it must work and unload. After every failed load: not in
# /proc/modules nor /sys/module, no /sys/kernel/mm/mmtune, the hook core
# unregistered with every static key off (assert_hooks_idle), no CPU
# hotplug state or debugfs file of mmtune; after every 8th refusal and at
# the end a plain insmod works and rmmod too. At the end kmemleak (debug kernel) finds nothing new.
# Debug kernel only ("make check-debug"); skips on a kernel without fault
# injection.
# timeout: 1800
. /lib.sh
fault_require
grep -q '^mmtune ' /proc/modules && fail "mmtune loaded before the test"

# nothing_left N: what a failed load must not leave.
nothing_left() {
	grep -q '^mmtune ' /proc/modules && fail "N=$1: mmtune in /proc/modules after a failed load"
	[ -e /sys/module/mmtune ] && fail "N=$1: /sys/module/mmtune after a failed load"
	out=$(assert_hooks_idle) || { echo "$out"; fail "N=$1: hooks not idle after a failed load"; }
	grep -q mmtune /sys/devices/system/cpu/hotplug/states &&
		fail "N=$1: CPU hotplug state left: $(grep mmtune /sys/devices/system/cpu/hotplug/states)"
	[ -e "$FAIL_REFILL" ] && fail "N=$1: $FAIL_REFILL left behind"
	return 0
}

# plain_load N: a load without injection works, registers, unloads.
plain_load() {
	insmod "$MMTUNE_KO" || fail "N=$1: plain insmod after the injected one failed"
	[ "$(hooks_state registered)" = mmtune ] || fail "N=$1: hook core registrant '$(hooks_state registered)' after a plain load"
	[ -r "$MMTUNE_SYSFS/features" ] || fail "N=$1: no $MMTUNE_SYSFS/features after a plain load"
	rmmod mmtune || fail "N=$1: rmmod after a plain load"
}

# The same plain load and unload before any injection: a baseline, and the
# per-CPU and sysfs state that the first load creates lazily exists.
plain_load 0
nothing_left 0

fault_reset
# probability 0: only fail-nth fails, and only in modload's own thread.
echo N >$FAILSLAB/ignore-gfp-wait
echo N >$FAIL_PAGE_ALLOC/ignore-gfp-wait
echo N >$FAIL_PAGE_ALLOC/ignore-gfp-highmem
echo 0 >$FAIL_PAGE_ALLOC/min-order
kmemleak_begin

refused=0 survived=0 n=0 errors=
start=$(cut -d' ' -f1 /proc/uptime)
fault_quiet_begin
while :; do
	n=$((n + 1))
	[ $n -le 5000 ] || fail "still injecting at N=$n: the loop does not end"
	if modload --fail-nth $n "$MMTUNE_KO" >/tmp/ml.out 2>&1; then rc=0; else rc=$?; fi
	grep -Eq '^fail-nth: (injected|not reached)' /tmp/ml.out || { cat /tmp/ml.out; fail "N=$n: modload"; }
	if grep -q '^fail-nth: not reached' /tmp/ml.out; then
		# Fewer than N allocations: the load ran free and must work.
		[ $rc -eq 0 ] || { cat /tmp/ml.out; fail "N=$n: load without an injected failure refused"; }
		points=$((n - 1))
		calls=$(sed -n 's/^fail-nth: not reached (\([0-9]*\) calls)/\1/p' /tmp/ml.out)
		[ "$(hooks_state registered)" = mmtune ] || fail "N=$n: not registered after the clean load"
		rmmod mmtune || fail "rmmod after the clean load"
		break
	fi
	if [ $rc -eq 0 ]; then
		# The failure had a fallback: the module must work as loaded.
		survived=$((survived + 1))
		[ "$(hooks_state registered)" = mmtune ] || fail "N=$n: loaded despite the failure but not registered"
		[ -r "$MMTUNE_SYSFS/features" ] || fail "N=$n: loaded despite the failure but no $MMTUNE_SYSFS/features"
		rmmod mmtune || fail "N=$n: rmmod of a load that survived its failure"
		nothing_left $n
		continue
	fi
	[ $rc -eq 1 ] || { cat /tmp/ml.out; fail "N=$n: modload exit $rc"; }
	refused=$((refused + 1))
	err=$(sed -n 's/^modload: .*(\(E[A-Z]*\))$/\1/p' /tmp/ml.out)
	case " $errors " in *" $err "*) ;; *) errors="$errors $err" ;; esac
	nothing_left $n
	# A plain load after every 8th refusal (a load costs seconds on the
	# debug kernel), and after the last one below.
	[ $((refused % 8)) -eq 0 ] && plain_load $n
	# Progress on the console, which shows only errors meanwhile.
	[ $((n % 50)) -eq 0 ] && echo "<3>mmtune-test: 25: fail-nth $n, $refused refused, $survived survived" >/dev/kmsg
done
fault_quiet_end
fault_check_log
fault_reset
end=$(cut -d' ' -f1 /proc/uptime)
info "injection points: $points (allocations of one load, of $calls calls that reached fault injection); $refused loads refused ($(echo $errors)), $survived survived their failure; $(awk "BEGIN { printf \"%.0f\", $end - $start }") s"
assert_ge "$points" 20 "injection points of one load"
assert_ge "$refused" 1 "loads refused"
assert_eq "$((refused + survived))" "$points" "injected loads (refused + survived)"

# The plain load after the last refusal, then one with every feature switched on and off: the module
# loaded after all that works in full.
load_mmtune
for f in $FEATURES; do
	[ -w "$MMTUNE_SYSFS/$f/enabled" ] || continue
	echo 1 >"$MMTUNE_SYSFS/$f/enabled" || fail "enable $f"
	assert_eq "$(hooks_state "$f")" on "static key $f after enabling"
	echo 0 >"$MMTUNE_SYSFS/$f/enabled" || fail "disable $f"
done
unload_mmtune
assert_hooks_idle
kmemleak_check "$points failed loads"
