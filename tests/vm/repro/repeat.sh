#!/bin/bash
# Run VM tests again and again, each run its own boot, optionally with a CPU
# hog per host CPU beside them: a test that hangs one run in three shows
# here, and a fix is shown by 20 runs in a row under a hog.
#
#   tests/vm/repro/repeat.sh [--hog] [--runs N] [--slow] [--line LINE] GLOB
#
# Prints one line per run (result, wall time, host load, the test's own
# time) and a summary; exits non-zero if any run failed. A failed run's
# build/LINE/vm (console, TAP, QMP dumps) is kept as build/vm-repeat-fail-<n>.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$repo" || exit 2

runs=20 hog=0 slow='' line=6.1
while [ $# -gt 1 ]; do
	case "$1" in
	--hog) hog=1 ;;
	--runs) runs=$2; shift ;;
	--slow) slow=1 ;;
	--line) line=$2; shift ;;
	*) break ;;
	esac
	shift
done
if [ $# -ne 1 ] || ! [[ $runs =~ ^[1-9][0-9]*$ ]]; then
	echo "usage: $0 [--hog] [--runs N] [--slow] [--line LINE] GLOB" >&2
	exit 2
fi
glob=$1

hogs=()
cleanup() { [ ${#hogs[@]} -eq 0 ] || kill "${hogs[@]}" 2>/dev/null; }
trap cleanup EXIT
if [ $hog -eq 1 ]; then
	# sha256sum of an endless stream: pure CPU, no I/O, no memory.
	for _ in $(seq "$(nproc)"); do sha256sum /dev/zero & hogs+=($!); done
fi

mkdir -p build
pass=0 fail=0
for i in $(seq "$runs"); do
	log=build/repeat-$i.log
	s=$(date +%s)
	if MMTUNE_VM_SLOW=$slow tests/vm/run.sh --line "$line" --tests "$glob" >"$log" 2>&1; then
		pass=$((pass + 1)); r=ok
	else
		fail=$((fail + 1)); r=FAIL
		rm -rf "build/vm-repeat-fail-$i"
		cp -r "build/$line/vm" "build/vm-repeat-fail-$i"
	fi
	times=$(grep -oE '^(not )?ok [0-9]+ [^#]*# [0-9.]+s' "$log" | sed 's/^.*ok [0-9]* //' | tr '\n' ' ')
	echo "run $i/$runs: $r $(( $(date +%s) - s ))s, host load $(cut -d' ' -f1-3 /proc/loadavg), ${times:-no test result}"
done
echo "repeat $glob x$runs$([ $hog -eq 1 ] && echo " with $(nproc) CPU hogs"): $pass passed, $fail failed"
[ $fail -eq 0 ]
