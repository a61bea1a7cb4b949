#!/bin/bash
# Run one benchmark in the test VM and keep its report.
#
#   tests/bench/run.sh NAME     NAME.sh in this directory is the guest side
#                               (lib-bench.sh holds what they share); when
#                               NAME is a feature group (pcp-high for
#                               pcp_high), the feature's instruction-count
#                               tables follow the wall-clock report
#   tests/bench/run.sh icount [FEATURE...]
#                               exact kernel instructions and lock calls per
#                               operation, per feature, on the bench kernels
#                               (icount-features.sh; not the test VM)
#
# Benchmarks are not tests: they report ratios measured side by side in one
# boot and fail only if the run itself breaks. A "# disk-bps: N" line in
# the guest script throttles the virtio swap disk to N bytes/s (unless
# MMTUNE_VM_DISK_BPS is set). The report
# is printed and kept in build/bench/NAME.txt.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
name=${1:-}
if [ "$name" = icount ]; then
	shift
	exec "$repo/tests/bench/icount-features.sh" "$@"
fi
script=$repo/tests/bench/$name.sh
if [ -z "$name" ] || [ "$name" = run ] || [ "$name" = lib-bench ] || [ "$name" = icount-features ] || [ ! -f "$script" ]; then
	echo "usage: $0 NAME, one of: icount" $(cd "$repo/tests/bench" && ls *.sh | sed 's/\.sh$//' | grep -vx -e run -e lib-bench -e icount-features) >&2
	exit 2
fi
make -s -C "$repo" modules
mkdir -p "$repo/build/bench"
report=$repo/build/bench/$name.txt
MMTUNE_VM_DISK_BPS=${MMTUNE_VM_DISK_BPS:-$(sed -n 's/^# disk-bps: \([0-9]*\)$/\1/p' "$script")} \
MMTUNE_VM_TIMEOUT=${MMTUNE_VM_TIMEOUT:-3600} \
	"$repo/tests/vm/run.sh" --bench "$name" | tee "$report"

# "# host-compressors: yes": the same compressor benchmark on the host, to
# show how much slower the TCG guest's CPU is than this machine's, while a
# throttled virtio disk runs at native speed.
if grep -q '^# host-compressors: yes' "$script"; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	gcc -O2 -o "$tmp/usemem" "$repo/tests/vm/progs/usemem.c"
	"$tmp/usemem" --dump "$tmp/data" --size 64 --fill compressible
	. "$repo/tests/bench/lib-bench.sh"
	lz4=$(bench_mbps lz4 -b1 -B4096 "$tmp/data") zstd=$(bench_mbps zstd -b1 -B4096 "$tmp/data")
	guest_lz4=$(sed -n 's/.*lz4 -b1 \([0-9.]*\) MB\/s.*/\1/p' "$report" | tail -n 1)
	{
		echo "host (native, same bytes, 4K blocks): lz4 -b1 $lz4 MB/s, zstd -b1 $zstd MB/s"
		[ -n "$guest_lz4" ] && awk -v h="$lz4" -v g="$guest_lz4" 'BEGIN { printf "the guest compresses %.1fx slower than the host; the disk throttle is not slowed down\n", h / g }'
	} | tee -a "$report"
fi

# The same feature's exact counts (tests/bench/icount-features.sh):
# kernel instructions and lock calls per operation, unpatched / unloaded /
# off / on, the primary figures; the wall-clock ratios above are the
# secondary ones. Configurations whose inputs did not change are kept.
feature=${name//-/_}
if awk -F'\t' -v f="$feature" '$1 == f && $2 == "enabled" { found = 1 } END { exit !found }' \
	"$repo/sysfs-docs/knobs.tsv"; then
	echo "== instruction counts: tests/bench/icount-features.sh --keep $feature" | tee -a "$report"
	make -s -C "$repo" kernel-bench
	"$repo/tests/bench/icount-features.sh" --keep "$feature" | tee -a "$report"
fi
