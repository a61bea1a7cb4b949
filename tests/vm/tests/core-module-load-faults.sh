# A failure at every step of loading mmtune.ko leaves nothing behind and the
# next plain load works. fail-nth (/proc/thread-self/fail-nth, written by
# modload right before its one finit_module() call): the Nth allocation
# that failslab or fail_page_alloc sees in the loading task fails, whatever
# its GFP flags and order. A load makes K such allocations: first the
# module loader's, then mmtune's init (the hook core's registration, the
# features' per-CPU slot caches and CPU hotplug state, every sysfs
# directory and file of /sys/kernel/mm/mmtune) and the loader's end; on
# the debug kernel also KASAN's and kmemleak's own bookkeeping, whose
# failures a load survives. Every N from 16 before mmtune's registration
# to K is injected, and every 8th before that: the boundary is found by
# bisection (the smallest N whose load logs "mmtune registered"), so that
# a loader that allocates much before init (a bigger module, another
# config) cannot push the test past its time limit. Measured on the debug
# kernel (2026-11-26): K = 628, 22 before registration, so every N was
# injected; 173 loads refused (ENOMEM), 455 survived; 1448 s under TCG at
# host load 5. A load that survives a failure (kvmalloc falls back to
# vmalloc, a debugfs file is optional) must work and unload. After every
# failed load: not in /proc/modules nor /sys/module, no
# /sys/kernel/mm/mmtune, the hook core unregistered with every static key
# off (assert_hooks_idle), no CPU hotplug state or debugfs file of mmtune;
# after every 8th refusal and at the end a plain insmod works and rmmod
# too. At the end kmemleak (debug kernel) finds nothing new.
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

# inject N: one load with the Nth allocation failing; sets rc and leaves
# modload's output in /tmp/ml.out.
inject() {
	if modload --fail-nth "$1" "$MMTUNE_KO" >/tmp/ml.out 2>&1; then rc=0; else rc=$?; fi
	grep -Eq '^fail-nth: (injected|not reached)' /tmp/ml.out || { cat /tmp/ml.out; fail "N=$1: modload"; }
}

start=$(cut -d' ' -f1 /proc/uptime)
fault_quiet_begin
# K: a load with no failure reached.
inject 1000000
grep -q '^fail-nth: not reached' /tmp/ml.out && [ $rc -eq 0 ] || { cat /tmp/ml.out; fail "a load of fewer than 1000000 allocations"; }
points=$(sed -n 's/^fail-nth: not reached (\([0-9]*\) calls)/\1/p' /tmp/ml.out)
rmmod mmtune || fail "rmmod after the counting load"
assert_ge "$points" 20 "injection points of one load"

# reached N: did the load with the Nth allocation failing get as far as
# mmtune's registration? false for every N before the boundary, true after.
reached() {
	echo "mmtune-test: 25: probe $1" >/dev/kmsg
	inject "$1"
	[ $rc -ne 0 ] || rmmod mmtune || fail "N=$1: rmmod after a probe that loaded"
	dmesg | sed -n "/mmtune-test: 25: probe $1\$/,\$p" | grep -q 'mmtune_hooks: mmtune registered'
}
lo=1 hi=$points
while [ $lo -lt $hi ]; do
	mid=$(( (lo + hi) / 2 ))
	if reached $mid; then hi=$mid; else lo=$((mid + 1)); fi
done
reg=$lo
# A few before it: whatever the loader does right before init.
from=$(( reg > 16 ? reg - 16 : 1 ))
nothing_left bisection

refused=0 survived=0 injected=0 errors=
for n in $(seq 1 "$points"); do
	[ $n -ge $from ] || [ $n -le 8 ] || [ $((n % 8)) -eq 0 ] || continue
	inject $n
	if grep -q '^fail-nth: not reached' /tmp/ml.out; then
		# This load made fewer allocations than the counting one.
		[ $rc -eq 0 ] || { cat /tmp/ml.out; fail "N=$n: load without an injected failure refused"; }
		rmmod mmtune || fail "N=$n: rmmod after a load without an injected failure"
		break
	fi
	injected=$((injected + 1))
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
	[ $((injected % 50)) -eq 0 ] && echo "<3>mmtune-test: 25: fail-nth $n of $points, $refused refused, $survived survived" >/dev/kmsg
done
fault_quiet_end
fault_check_log
fault_reset
end=$(cut -d' ' -f1 /proc/uptime)
info "$points allocations per load, mmtune registers after the first $((reg - 1)); injected $injected: every one from N=$from, every 8th before; $refused loads refused ($(echo $errors)), $survived survived their failure; $(awk "BEGIN { printf \"%.0f\", $end - $start }") s"
assert_ge "$refused" 1 "loads refused"
assert_ge "$((points - reg))" 1 "allocations at or after mmtune's registration"
assert_eq "$((refused + survived))" "$injected" "injected loads (refused + survived)"

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
kmemleak_check "$injected injected loads"
