#!/bin/bash
# Run every test suite, print each result, and end with one summary line.
# Suites: unit (userspace, cmocka), static (checkpatch, ABI docs), userspace
# (mmtunectl: pytest, vermin, systemd-analyze, ansible), vm (boots
# the patched 6.1 kernel under qemu and runs the guest tests), vm-LINE (the
# same on each other kernel line, e.g. vm-6.12), packaging (builds and lints
# the mmtune packages). Expects the kernels and modules of every line built
# (the top-level "make check" does that).
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
. tests/lib/tap.sh
log=$repo/build/test-logs
mkdir -p "$log"

passed=0 failed=0 skipped=0
start=$(date +%s)

# run_suite NAME CMD...: run a suite and count its results from the TAP it
# prints (tests/lib/tap.sh tap_tally: plans, ok/not ok, SKIP; a result a
# plan announced but the suite never gave counts as failed).
run_suite() {
	local name=$1; shift
	local rc ok notok skip missing
	echo "=== $name: $*"
	"$@" 2>&1 | tee "$log/$name.log"
	rc=${PIPESTATUS[0]}
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

run_suite unit make -s -C tests/unit check
run_suite static scripts/check-style-docs.sh
run_suite userspace tests/userspace/run.sh
run_suite vm tests/vm/run.sh
# The other kernel lines: every kernel-patches/LINE with a series.
for series in kernel-patches/*/series; do
	line=$(basename "$(dirname "$series")")
	[ "$line" = 6.1 ] || run_suite "vm-$line" tests/vm/run.sh --line "$line"
done
# The quick part only; the full one is "make check-packaging".
run_suite packaging tests/packaging/run.sh --quick

echo "=== all suites in $(( $(date +%s) - start ))s"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
