#!/bin/bash
# "make check-debug": the whole VM suite on the debug kernel (the row's fragments
# and vm_fragments plus kernel-patches/configs/debug.config: KASAN, kmemleak, DEBUG_PAGEALLOC,
# fault injection, lockdep), booted with preempt=full. The last guest test,
# kmemleak-scan, scans for leaks after the last rmmod. tests/vm/run.sh fails
# the run on a failed test and on any KASAN, kmemleak, lockdep or other
# kernel report on the console.
# The fault injection tests (core-module-load-faults, zswap_large-*fault-injection,
# swap_slots-fault-injection) run only here: the test kernel
# has no fault injection, so they skip in "make check".
#
# mmtune.ko and the test modules are built against the debug kernel in
# build/LINE/debug/ (a copy of the sources), so build/LINE/module keeps the
# test kernel's.
# Environment: as tests/vm/run.sh; MMTUNE_VM_TIMEOUT_SCALE defaults to 4
# here (KASAN under TCG is slow), which also scales run.sh's run timeout.
#   tests/vm/check-debug.sh [--line LINE] [--tests GLOB | --pressure | --z3fold]
#
# --line LINE (default 6.1): that kernel line's debug kernel ("make
# check-debug LINE=6.12"): scripts/kernel-build.sh LINE --variant debug
# (debug.config on the line's test kernel, linked as
# build/LINE/kernel-debug) and tests/vm/run.sh --line LINE (run directory
# build/LINE/vm).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
line=6.1
if [ "${1:-}" = --line ]; then
	line=${2:-}
	shift 2 || { echo "usage: $0 [--line LINE] [--tests GLOB | --z3fold]" >&2; exit 2; }
fi
[ -f "kernel-patches/$line/line.conf" ] || { echo "check-debug: no kernel line '$line'" >&2; exit 2; }
out=$repo/build/$line/debug vm_out=$repo/build/$line/vm line_args=(--line "$line")
kdir=$(scripts/kernel-build.sh "$line" --variant debug --kdir)
debug_pressure_tests=''
. "kernel-patches/$line/line.conf"
rm -rf "$out"
mkdir -p "$out"
cp -r module "$out/module"
cp -r tests/kmod "$out/kmod"
# Objects built against the test kernel must not be reused.
find "$out" \( -name '*.o' -o -name '*.ko' -o -name '*.mod*' -o -name '.*.cmd' \
	-o -name Module.symvers -o -name modules.order \) -delete
make -s -C "$kdir" M="$out/module" modules
make -s -C "$kdir" M="$out/kmod" modules

export KDIR=$kdir
export MMTUNE_VM_KO=$out/module/mmtune.ko
export MMTUNE_VM_PROBE_KO=$out/kmod/mmtune_probe.ko
# slub_debug=A marks zswap's entry cache for failslab's cache-filter
# (zswap_large-fault-injection fails only those allocations); the mark changes nothing else.
# mmtune.variant=debug tells the guest tests which kernel they run on
# (debug_kernel in tests/vm/guest/lib.sh).
append="preempt=full slub_debug=A,zswap_entry mmtune.variant=debug ${MMTUNE_VM_APPEND:-}"
# No fixed run timeout: run.sh's (2400 s times this scale times the host
# load factor) grows with the load, as every test's limit does. A fixed
# 5400 s ended a run at load 4-6 in its 43rd test of 56, none hung.
export MMTUNE_VM_TIMEOUT_SCALE=${MMTUNE_VM_TIMEOUT_SCALE:-4}

# Three boots. 6.1's z3fold leaks handle slots (stock: see
# tests/vm/known-reports/z3fold-slots.awk), and when a zpool switch frees
# a z3fold pool, SLUB's report taints the kernel, which turns lockdep off
# for the rest of the boot. So the whole suite runs with zsmalloc and zbud
# only, and the z3fold rounds of zswap_large-thp-store, -rollback and -rmmod get a boot of their own,
# the last, where that one report is expected and every other still
# fails the run. pcp_high-reclaim-cap's global pressure (more than MemAvailable) makes
# kmemleak's own allocations fail until its emergency pool is empty and it
# turns itself off (seen at 3879 s of a whole-suite boot), which would void
# every later leak check: it skips while kmemleak is on and gets a boot of
# its own with kmemleak=off (KASAN and lockdep still on).
# --tests GLOB: the first boot only, with that glob; --z3fold: the z3fold
# boot only; --pressure: the pressure boot only.
# The tests of a line's pressure boot are in its row (debug_pressure_tests;
# pcp_high-reclaim-cap is about pcp_high, which only the 6.1 line offers),
# and so are the stock reports every boot filters (known_reports: z3fold's
# slots, which the z3fold boot shows).
rc=0
case "${1:-}" in
--z3fold | --pressure) ;;
*)
	MMTUNE_VM_APPEND="$append mmtune.zpools=zsmalloc,zbud" tests/vm/run.sh "${line_args[@]}" "$@" || rc=1
	[ $# -gt 0 ] && exit $rc
	cp "$vm_out/console.log" "$out/console-main.log" ;;
esac
if [ "${1:-}" = --pressure ] && [ -z "$debug_pressure_tests" ]; then
	echo "check-debug: --pressure: line $line has no pressure boot (debug_pressure_tests)" >&2
	exit 2
fi
if [ "${1:-}" != --z3fold ] && [ -n "$debug_pressure_tests" ]; then
	echo "check-debug: the pressure boot ($debug_pressure_tests with kmemleak=off)"
	MMTUNE_VM_APPEND="$append kmemleak=off" tests/vm/run.sh "${line_args[@]}" --tests "$debug_pressure_tests" || rc=1
	[ $# -gt 0 ] && exit $rc
	cp "$vm_out/console.log" "$out/console-pressure.log"
fi
echo "check-debug: the z3fold boot (zswap_large-thp-store, -rollback, -rmmod with zswap on z3fold)"
MMTUNE_VM_APPEND="$append mmtune.zpools=z3fold" \
	tests/vm/run.sh "${line_args[@]}" --tests 'zswap_large-thp-store,zswap_large-rollback,zswap_large-rmmod' || rc=1
exit $rc
