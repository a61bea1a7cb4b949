#!/bin/bash
# Run one benchmark in the test VM and keep its report.
#
#   tests/bench/run.sh NAME     NAME.sh in this directory is the guest side
#
# Benchmarks are not tests: they report ratios measured side by side in one
# boot and fail only if the run itself breaks. A "# disk-bps: N" line in
# the guest script throttles the virtio swap disk to N bytes/s. The report
# is printed and kept in build/bench/NAME.txt.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
name=${1:-}
script=$repo/tests/bench/$name.sh
if [ -z "$name" ] || [ "$name" = run ] || [ ! -f "$script" ]; then
	echo "usage: $0 NAME, one of:" $(cd "$repo/tests/bench" && ls *.sh | sed 's/\.sh$//' | grep -vx run) >&2
	exit 2
fi
make -s -C "$repo" modules
mkdir -p "$repo/build/bench"
MMTUNE_VM_DISK_BPS=$(sed -n 's/^# disk-bps: \([0-9]*\)$/\1/p' "$script") \
MMTUNE_VM_TIMEOUT=${MMTUNE_VM_TIMEOUT:-3600} \
	"$repo/tests/vm/run.sh" --bench "$name" | tee "$repo/build/bench/$name.txt"
