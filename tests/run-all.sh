#!/bin/bash
# Run the test suites, print each result, and end with one summary line.
#
#   tests/run-all.sh              make check: every suite, and of each
#                                 kernel line's VM suite the tests marked
#                                 "# tier: check"
#   tests/run-all.sh --tier vm    make check-vm: the rest of each line's
#                                 VM suite (not "# slow:"), nothing else
#
# Suites: unit (userspace, cmocka), static (checkpatch, ABI docs), userspace
# (mmtunectl: pytest, vermin, systemd-analyze, ansible), vm (boots the
# patched kernel of the lane-1 line, 6.1, under qemu and runs the guest
# tests), vm-LINE (the same on each other kernel line, e.g. vm-6.12),
# vm-split (--tier vm: the lane-1 tests that boot a second time beside the
# first, see below), packaging (builds and lints
# the mmtune packages). Expects the kernels and modules of every line built
# (the top-level "make check" does that).
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
. tests/lib/tap.sh
log=$repo/build/test-logs
mkdir -p "$log"

tier=check
case "${1:-}" in
'') ;;
--tier) tier=${2:-} ;;
*) echo "usage: $0 [--tier check|vm]" >&2; exit 2 ;;
esac
case "$tier" in check|vm) ;; *) echo "$0: no tier '$tier' (check or vm)" >&2; exit 2 ;; esac
# The VM tests of "make check": each line's tests marked "# tier: check"
# (each feature's byte-exact round trip and interface, the hook core,
# cgroup_policy), about 5 minutes a line under TCG; "make check-vm" runs
# the others. tests/userspace/test_vm_select.py checks that the two
# tiers, with the split below, run every test once.
vm_tier_tests=$(grep -l '^# tier: check$' tests/vm/tests/*.sh | sed 's|.*/||; s|\.sh$||' | paste -sd,)
if [ "$tier" = check ]; then
	vm_spec=$vm_tier_tests
else
	vm_spec="*,!${vm_tier_tests//,/,!}"
fi

passed=0 failed=0 skipped=0
start=$(date +%s) load0=$(cut -d' ' -f1-3 /proc/loadavg)

# run_suite NAME CMD...: run a suite and count its results from the TAP it
# prints (tests/lib/tap.sh tap_tally: plans, ok/not ok, SKIP; a result a
# plan announced but the suite never gave counts as failed).
run_suite() {
	local name=$1; shift
	local t0=$SECONDS rc
	echo "=== $name: $*"
	"$@" 2>&1 | tee "$log/$name.log"
	rc=${PIPESTATUS[0]}
	echo "=== $name: took $((SECONDS - t0))s" | tee -a "$log/$name.log"
	count_suite "$name" "$rc"
}

# run_aside NAME CMD...: run a suite beside the foreground, its output
# in $log/NAME.log and its exit status in $log/NAME.rc, for count_suite
# once the foreground is done.
run_aside() {
	local name=$1 t0=$SECONDS; shift
	"$@" >"$log/$name.log" 2>&1
	echo $? >"$log/$name.rc"
	echo "=== $name: took $((SECONDS - t0))s" >>"$log/$name.log"
}

# count_suite NAME RC: count the results of a suite that ran (its output in
# $log/NAME.log, its exit status RC).
count_suite() {
	local name=$1 rc=$2
	local ok notok skip missing
	read -r ok notok skip missing < <(tap_tally "$log/$name.log")
	[ "$missing" -gt 0 ] && echo "not ok $name: $missing planned result(s) missing"
	# A suite that failed without naming a failed test (build error, kernel
	# warning, timeout) still counts as one failure.
	if [ "$rc" -ne 0 ] && [ "$notok" -eq 0 ]; then
		echo "not ok $name: suite exited $rc"
		notok=1
	fi
	[ "$rc" -eq 0 ] && [ $((ok + notok + skip)) -eq 0 ] && {
		echo "not ok $name: suite ran no test"
		notok=1
	}
	passed=$((passed + ok)) failed=$((failed + notok)) skipped=$((skipped + skip))
	echo "=== $name: exit $rc, $ok passed, $notok failed, $skip skipped"
}

# The VM suite of each kernel line: every kernel-patches/LINE with a row
# (line.conf). The line whose row says vm_lane=1 runs in lane 1 (6.1);
# each guest is single-threaded TCG, one host CPU, so the other lines'
# suites run beside it when the host has a CPU for each
# (MMTUNE_VM_LINES_PARALLEL=1, the default with 2 CPUs or more; 0: one
# after the other); their output follows lane 1's. A guest's limits then
# count the other guest in the host load (run.sh's factor). KDIR, which
# make exports, is one line's kernel: every line takes its own.
lane1='' others=()
for conf in kernel-patches/*/line.conf; do
	line=$(basename "$(dirname "$conf")")
	if [ "$(vm_lane=; . "$conf"; echo "$vm_lane")" = 1 ] && [ -z "$lane1" ]; then
		lane1=$line
	else
		others+=("$line")
	fi
done
[ -n "$lane1" ] || { lane1=${others[0]}; others=("${others[@]:1}"); }
# MMTUNE_RUN_ALL_LIST=1: print the VM suites (lane 1's as "vm LINE"), one
# a line, and run nothing.
if [ "${MMTUNE_RUN_ALL_LIST:-0}" = 1 ]; then
	echo "vm $lane1"
	printf 'vm-%s\n' "${others[@]}"
	exit 0
fi
# vm_suite LINE [ARG...]: the VM suite of LINE, on its own kernel.
vm_suite() { env -u KDIR tests/vm/run.sh --line "$@"; }

if [ "$tier" = check ]; then
	run_suite unit make -s -C tests/unit check
	run_suite static scripts/check-style-docs.sh
	# A throwaway third kernel line, prepared, not built (2-4 min).
	run_suite new-line scripts/check-new-line.sh
fi
parallel=${MMTUNE_VM_LINES_PARALLEL:-$([ "$(nproc)" -ge 2 ] && echo 1 || echo 0)}
# Two lanes, one per CPU (a VM is one host thread: single-threaded TCG):
# lane 1 the lane-1 line's tests, lane 2 the other lines'. In "make
# check-vm" the 6.1 rest takes a little longer than the 6.12 rest, so the
# lane-1 tests named in the split boot a second time in lane 2, after the
# other lines' suites (MMTUNE_VM_SPLIT= keeps lane 1 in one boot). That
# boot has 1 GiB (MMTUNE_VM_SPLIT_MEM): thp_swap-split-churn needs 32 MiB,
# and pcp_high-reclaim-cap, if split too, writes more than the guest's
# MemAvailable, which under TCG costs time in proportion (alone, idle:
# 127 s with 2 GiB, 83 s with 1 GiB).
split=${MMTUNE_VM_SPLIT-thp_swap-split-churn}
[ "$tier" = vm ] || split=
split_mem=${MMTUNE_VM_SPLIT_MEM:-1G}
lane1_spec="$vm_spec${split:+,!${split//,/,!}}"
# The userspace and quick packaging suites (about 200 s of one CPU) run
# beside the lanes in "make check": the lanes' guests then share the CPUs
# for that while, which costs them less than waiting for those suites.
aside=()
[ "$tier" = check ] && aside=(userspace packaging)
if [ "$parallel" = 1 ] && [ ${#others[@]} -gt 0 ]; then
	vm_scale=${MMTUNE_VM_LOAD_SCALE:-$(awk -v n="$(nproc)" -v k=${#others[@]} '{ print 1 + int(($1 + k) / n) }' /proc/loadavg)}
	echo "=== lane 2: ${others[*]/#/vm-}${split:+, then vm-split ($lane1: $split)} beside lane 1, the $lane1 suite${split:+ without them} ($tier tier; limits x$vm_scale; lane 2's output follows lane 1's)"
	rm -f "$log"/*.rc
	if [ "$tier" = check ]; then
		(run_aside userspace tests/userspace/run.sh
			run_aside packaging tests/packaging/run.sh --quick) &
	fi
	(for line in "${others[@]}"; do
		MMTUNE_VM_LOAD_SCALE=$vm_scale run_aside "vm-$line" vm_suite "$line" --tests "$vm_spec"
	done
	[ -z "$split" ] || MMTUNE_VM_LOAD_SCALE=$vm_scale MMTUNE_VM_MEM=$split_mem run_aside vm-split vm_suite "$lane1" --tests "$split" --run-dir build/vm-split) &
	MMTUNE_VM_LOAD_SCALE=$vm_scale run_suite vm vm_suite "$lane1" --tests "$lane1_spec"
	wait
	for name in "${others[@]/#/vm-}" ${split:+vm-split} "${aside[@]}"; do
		echo "=== $name: ran beside lane 1"
		cat "$log/$name.log"
		count_suite "$name" "$(cat "$log/$name.rc" 2>/dev/null || echo 1)"
	done
else
	[ "$tier" = check ] && run_suite userspace tests/userspace/run.sh
	run_suite vm vm_suite "$lane1" --tests "$vm_spec"
	for line in "${others[@]}"; do
		run_suite "vm-$line" vm_suite "$line" --tests "$vm_spec"
	done
	[ "$tier" = check ] && run_suite packaging tests/packaging/run.sh --quick
fi

# What failed and why, once more at the end: a view of the output that
# keeps only its head and its tail (CI's) still shows the assertions.
if [ "$failed" -gt 0 ]; then
	echo "=== failures (suite log: line)"
	grep -n -E '^(not ok |# FAIL: |vm: FAIL: |FAIL: )' "$log"/*.log | sed "s|^$log/||" | tail -n 40
fi
echo "=== all suites in $(( $(date +%s) - start ))s"
echo "tests: $passed passed, $failed failed, $skipped skipped"
# The suites' times into results/check-times.tsv (check-vm-times.tsv),
# rendered into tests/README.md: the docs show the latest run's.
python3 tests/bench/check-times.py --tier "$tier" --start "$start" --start-load "$load0" \
	--summary "$passed passed, $failed failed, $skipped skipped" "$log" &&
	scripts/render-results.py >/dev/null
[ "$failed" -eq 0 ]
