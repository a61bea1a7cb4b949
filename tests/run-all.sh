#!/bin/bash
# Run every test suite, print each result, and end with one summary line.
# Suites: unit (userspace, cmocka), static (checkpatch, ABI docs), userspace
# (mmtunectl: pytest, vermin, systemd-analyze, ansible), vm (boots the
# patched kernel of the lane-1 line, 6.1, under qemu and runs the guest
# tests), vm-LINE (the same on each other kernel line, e.g. vm-6.12),
# vm-split (the lane-1 tests that boot a second time beside the first, see
# below), packaging (builds and lints
# the mmtune packages). Expects the kernels and modules of every line built
# (the top-level "make check" does that).
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
. tests/lib/tap.sh
log=$repo/build/test-logs
mkdir -p "$log"

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

run_suite unit make -s -C tests/unit check
run_suite static scripts/check-style-docs.sh
# A throwaway third kernel line, prepared, not built (2-4 min).
run_suite new-line scripts/check-new-line.sh
parallel=${MMTUNE_VM_LINES_PARALLEL:-$([ "$(nproc)" -ge 2 ] && echo 1 || echo 0)}
# Two lanes, one per CPU (a VM is one host thread: single-threaded TCG).
# The 6.1 suite's tests take about twice the 6.12 suite's (684 s and
# 329 s on an idle host), so beside the 6.12 suite one CPU idled for half
# the 6.1 suite. The lane-1 tests named in the split (6.1's longest:
# pcp_high-reclaim-cap 110 s, thp_swap-split-churn 53 s) therefore boot a second time in the other lane, after
# the other lines' suites: lane 1 without them, lane 2 the other lines
# then them. MMTUNE_VM_SPLIT= (empty) keeps lane 1 in one boot.
# That boot has 1 GiB (MMTUNE_VM_SPLIT_MEM): pcp_high-reclaim-cap writes
# more than the guest's MemAvailable, which under TCG costs time in
# proportion (alone, idle: 127 s with 2 GiB, 83 s with 1 GiB), and
# thp_swap-split-churn needs 32 MiB.
split=${MMTUNE_VM_SPLIT-thp_swap-split-churn,pcp_high-reclaim-cap}
split_mem=${MMTUNE_VM_SPLIT_MEM:-1G}
rest="*${split:+,!${split//,/,!}}"
if [ "$parallel" = 1 ] && [ ${#others[@]} -gt 0 ]; then
	vm_scale=${MMTUNE_VM_LOAD_SCALE:-$(awk -v n="$(nproc)" -v k=${#others[@]} '{ print 1 + int(($1 + k) / n) }' /proc/loadavg)}
	echo "=== lane 2: ${others[*]/#/vm-}${split:+, then vm-split ($lane1: $split)} beside lane 1, the $lane1 suite${split:+ without them} (limits x$vm_scale; lane 2's output follows lane 1's)"
	rm -f "$log"/*.rc
	# The userspace and quick packaging suites (44 s of one CPU, idle)
	# run beside the lanes: the lanes' guests then share the CPUs for
	# that while, which costs them less than waiting for those suites.
	(run_aside userspace tests/userspace/run.sh
		run_aside packaging tests/packaging/run.sh --quick) &
	(for line in "${others[@]}"; do
		MMTUNE_VM_LOAD_SCALE=$vm_scale run_aside "vm-$line" vm_suite "$line"
	done
	[ -z "$split" ] || MMTUNE_VM_LOAD_SCALE=$vm_scale MMTUNE_VM_MEM=$split_mem run_aside vm-split vm_suite "$lane1" --tests "$split" --run-dir build/vm-split) &
	MMTUNE_VM_LOAD_SCALE=$vm_scale run_suite vm vm_suite "$lane1" --tests "$rest"
	wait
	for name in "${others[@]/#/vm-}" ${split:+vm-split} userspace packaging; do
		echo "=== $name: ran beside lane 1"
		cat "$log/$name.log"
		count_suite "$name" "$(cat "$log/$name.rc" 2>/dev/null || echo 1)"
	done
else
	run_suite userspace tests/userspace/run.sh
	run_suite vm vm_suite "$lane1"
	for line in "${others[@]}"; do
		run_suite "vm-$line" vm_suite "$line"
	done
	run_suite packaging tests/packaging/run.sh --quick
fi

# What failed and why, once more at the end: a view of the output that
# keeps only its head and its tail (CI's) still shows the assertions.
if [ "$failed" -gt 0 ]; then
	echo "=== failures (suite log: line)"
	grep -n -E '^(not ok |# FAIL: |vm: FAIL: |FAIL: )' "$log"/*.log | sed "s|^$log/||" | tail -n 40
fi
echo "=== all suites in $(( $(date +%s) - start ))s"
echo "tests: $passed passed, $failed failed, $skipped skipped"
# The suites' times into results/check-times.tsv, rendered into
# tests/README.md: the docs show the latest run's.
python3 tests/bench/check-times.py --start "$start" --start-load "$load0" \
	--summary "$passed passed, $failed failed, $skipped skipped" "$log" &&
	scripts/render-results.py >/dev/null
[ "$failed" -eq 0 ]
