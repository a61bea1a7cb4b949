#!/bin/bash
# Run one benchmark in the test VM and keep its report.
#
#   tests/bench/run.sh NAME     NAME.sh in this directory is the guest side
#                               (on the kernel line $LINE, default the
#                               script's "# line:" header, else 6.1)
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
# MMTUNE_VM_DISK_BPS is set). Other header lines of the guest script:
#   # line: LINE        the kernel line it is for (default 6.1)
#   # kernel: NAME      boot the benchmark kernel NAME of
#                       scripts/kernel-build-bench.sh (built if needed)
#                       with mmtune.ko built against it in build/bench/
#                       instead of the test kernel and module/mmtune.ko
#   # module-patch: P   also mmtune.ko with tests/bench/P applied to a
#                       copy of module/, as /files/mmtune-P.ko (P without
#                       .patch) in the guest
#   # smp: N            N vCPUs (MMTUNE_VM_SMP)
#   # icount: ARGS      qemu -icount ARGS (MMTUNE_VM_ICOUNT): guest time
#                       counts instructions (needs "# smp: 1")
#   # timeout: S        the run's limit in seconds (default 3600)
# The report is printed and kept in build/bench/NAME.txt.
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
header() { sed -n "s/^# $1: \\(.*\\)$/\\1/p" "$script" | head -n 1; }
line=${LINE:-$(header line | grep . || echo 6.1)}
mkdir -p "$repo/build/bench"
kernel=$(header kernel)
if [ -n "$kernel" ]; then
	# build_module DIR [PATCH]: mmtune.ko from a copy of module/ in DIR.
	build_module() {
		rm -rf "$1"
		cp -r "$repo/module" "$1"
		make -s -C "$1" clean KDIR="$KDIR" >/dev/null 2>&1 || true
		if [ -n "${2:-}" ] && ! patch -s -p2 -d "$1" <"$repo/tests/bench/$2"; then
			echo "bench: tests/bench/$2 does not apply to module/" >&2
			exit 1
		fi
		make -s -C "$1" KDIR="$KDIR" module >"$1.log" 2>&1 ||
			{ cat "$1.log" >&2; echo "bench: mmtune.ko does not build against $KDIR" >&2; exit 1; }
	}
	KDIR=$("$repo/scripts/kernel-build-bench.sh" "$line" "$kernel" --kdir)
	export KDIR
	build_module "$repo/build/bench/module-$kernel"
	export MMTUNE_VM_KO=$repo/build/bench/module-$kernel/mmtune.ko
	files=
	while read -r p; do
		build_module "$repo/build/bench/module-$kernel-${p%.patch}" "$p"
		cp "$repo/build/bench/module-$kernel-${p%.patch}/mmtune.ko" "$repo/build/bench/mmtune-${p%.patch}.ko"
		files+=" $repo/build/bench/mmtune-${p%.patch}.ko"
	done < <(sed -n 's/^# module-patch: //p' "$script")
	export MMTUNE_VM_FILES="${MMTUNE_VM_FILES:-}$files"
else
	make -s -C "$repo" modules LINE="$line"
	export KDIR=$repo/build/$line/kernel
fi
report=$repo/build/bench/$name.txt
load0=$(cut -d' ' -f1-3 /proc/loadavg)
MMTUNE_VM_DISK_BPS=${MMTUNE_VM_DISK_BPS:-$(header disk-bps)} \
MMTUNE_VM_SMP=${MMTUNE_VM_SMP:-$(header smp)} \
MMTUNE_VM_ICOUNT=${MMTUNE_VM_ICOUNT:-$(header icount)} \
MMTUNE_VM_TIMEOUT=${MMTUNE_VM_TIMEOUT:-$(header timeout | grep . || echo 3600)} \
	"$repo/tests/vm/run.sh" --line "$line" --bench "$name" | tee "$report"
# The table of the rows the guest marked "result:" (lib-bench.sh, row())
# in results/bench-NAME-LINE.tsv (-bpsN with MMTUNE_VM_DISK_BPS=N set), for
# scripts/render-results.py.
release=$(cat "$KDIR/include/config/kernel.release" 2>/dev/null || echo unknown)
python3 "$repo/tests/bench/results.py" write "bench-$name-$line${MMTUNE_VM_DISK_BPS:+-bps$MMTUNE_VM_DISK_BPS}" \
	--command "${MMTUNE_VM_DISK_BPS:+MMTUNE_VM_DISK_BPS=$MMTUNE_VM_DISK_BPS }${LINE:+LINE=$LINE }tests/bench/run.sh $name" \
	--start-load "$load0" --kernel "${kernel:-test} kernel $release" --from-report "$report"

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
	echo "== instruction counts: tests/bench/icount-features.sh --line $line --keep $feature" | tee -a "$report"
	make -s -C "$repo" kernel-bench LINE="$line"
	"$repo/tests/bench/icount-features.sh" --line "$line" --keep "$feature" | tee -a "$report"
fi
