#!/bin/bash
# Build the benchmark kernels of tests/bench/icount, cached like the test
# kernel.
#
#   scripts/kernel-build-bench.sh bench-prod [--kdir]
#       the series, test-vm.config with configs/bench-prod.config merged
#       after it (no lockdep, DEBUG_VM, lock or list debugging, sanitizers;
#       HZ=250), linked as build/kernel-bench-prod
#   scripts/kernel-build-bench.sh bench-unpatched [--kdir]
#       the same config WITHOUT the series (and so without
#       CONFIG_MMTUNE_HOOKS), LOCALVERSION -mmtune-bench-unpatched, linked
#       as build/kernel-bench-unpatched: the baseline of hook overhead
#   scripts/kernel-build-bench.sh bench-irqsoff [--kdir]
#       bench-prod with configs/bench-irqsoff.config merged after it (the
#       irqsoff and preemptoff latency tracers, the function tracer and
#       the TRACE_IRQFLAGS they need, which bench-prod.config turns off),
#       LOCALVERSION -mmtune-bench-irqsoff, linked as
#       build/kernel-bench-irqsoff: the kernel of tests/bench/irqsoff.sh
#       (issue 26, item 2)
#
# --kdir prints the tree (building it first if needed), as kernel-build.sh;
# --stage only stages the inputs (below) and prints where, without a build.
#
# --line LINE (default 6.1): the bench-prod and bench-unpatched kernels of
# another kernel line, from linux-source-LINE, built and cached by
# scripts/kernel-build-line.sh (staged the same way, with LINE's series, or
# one empty patch for bench-unpatched), linked as build/kernel-LINE-NAME.
# bench-unpatched takes any line Debian has a linux-source-LINE for, with
# or without a series here: "--line 7.3" is upstream's 7.3, the peer of
# the 6.12 instruction counts (tests/bench/icount-features.sh --line
# 6.12). Fragment lines of symbols a line no longer has (zbud, z3fold and
# zpool are gone upstream: 7.x's zswap allocates from zsmalloc itself) are
# left out for that line only, named in gone_symbols below.
#
# How: scripts/kernel-build.sh's cache key hashes the contents of its inputs
# (its own text, kernel-lib.sh, the config fragment, the series), never
# their paths. This stages a copy of the repository's build inputs in
# build/kernel-stage/NAME: the two scripts unchanged, the merged fragment
# as test-vm.config, and the series; for bench-unpatched a series of one
# empty patch (quilt refuses an empty series; an empty patch applies as
# nothing). kernel-build.sh run there builds, caches, locks and prunes as
# it does for the test kernel, under a key of its own, and the test and
# debug kernels' keys stay what they were.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
configs=$repo/kernel-patches/configs
usage() { echo "usage: $0 bench-prod|bench-unpatched|bench-irqsoff [--line LINE] [--kdir|--stage]" >&2; exit 2; }
name=${1:-}
shift || true
case "$name" in
bench-prod|bench-unpatched|bench-irqsoff) ;;
*) usage ;;
esac
print_kdir=0
line=6.1
while [ $# -gt 0 ]; do
	case "$1" in
	--kdir) print_kdir=1 ;;
	--stage) print_kdir=stage ;;
	--line) line=${2:-}; [ -n "$line" ] || usage; shift ;;
	*) usage ;;
	esac
	shift
done
if [ "$line" != 6.1 ]; then
	[ "$name" != bench-irqsoff ] || { echo "kernel-build-bench: bench-irqsoff is a 6.1 kernel" >&2; exit 2; }
	[ "$name" = bench-unpatched ] || [ -f "$repo/kernel-patches/$line/series" ] ||
		{ echo "kernel-build-bench: no series in kernel-patches/$line for $name" >&2; exit 2; }
fi

# The 6.1 kernels' stage is what it was before there were lines (their
# cache keys stay); another line's stage has its own directory.
if [ "$line" = 6.1 ]; then
	stage=$repo/build/kernel-stage/$name
	link=kernel-$name
else
	stage=$repo/build/kernel-stage/$line-$name
	link=kernel-$line-$name
fi
rm -rf "$stage"
mkdir -p "$stage/scripts" "$stage/kernel-patches/configs" "$stage/kernel-patches/$line"
if [ "$line" = 6.1 ]; then
	cp "$repo/scripts/kernel-build.sh" "$repo/scripts/kernel-lib.sh" "$stage/scripts/"
else
	cp "$repo/scripts/kernel-build-line.sh" "$repo/scripts/kernel-lib.sh" "$stage/scripts/"
fi

# The fragment: test-vm.config without the lines whose symbol
# bench-prod.config (or, unpatched, the series' absence) sets, then
# bench-prod.config (unpatched: with its own LOCALVERSION): one file, each
# symbol once, which kernel-build.sh checks line by line as it does the
# test kernel's fragment. bench-irqsoff: then bench-irqsoff.config, its
# symbols dropped from both parts before it (TRACE_IRQFLAGS, which
# bench-prod.config names as not set, and LOCALVERSION). bench-prod's and
# bench-unpatched's fragments are what they were before bench-irqsoff.
sym() { sed -nE 's/^(# )?(CONFIG_[A-Za-z0-9_]+)[ =].*/\2/p' "$@"; }
# without SYMS FILE: FILE without the lines that set a symbol of SYMS.
without() { grep -vE "^(# )?($(echo "$1" | paste -sd'|'))[ =]" "$2"; }
drop=$(sym "$configs/bench-prod.config")
localversion=-mmtune-bench
fragments=test-vm.config+bench-prod.config
if [ "$name" = bench-unpatched ]; then
	drop+=$'\n'$(sym "$configs/test-vm.config" | grep '^CONFIG_MMTUNE_')
	localversion=-mmtune-bench-unpatched
fi
# gone_symbols: the fragment's symbols that LINE's source no longer defines
# (its Kconfig has no such entry, so the fragment check would fail on
# them). 6.1 and 6.12 have every one. Upstream removed zbud and z3fold
# (6.15-6.16) and zpool (zswap allocates from zsmalloc directly since
# 6.18), and with it the zpool choice.
gone_symbols() {
	case "$1" in
	6.1|6.12) ;;
	*) printf '%s\n' CONFIG_ZPOOL CONFIG_ZBUD CONFIG_Z3FOLD_DEPRECATED CONFIG_ZSWAP_ZPOOL_DEFAULT_ZSMALLOC ;;
	esac
}
gone=$(gone_symbols "$line")
[ -z "$gone" ] || drop+=$'\n'$gone
# A line's own fragment (test-vm-LINE.config, read by kernel-build-line.sh
# after test-vm.config) goes into the merged one, before bench-prod.config.
line_fragment=
if [ "$line" != 6.1 ] && [ -f "$configs/test-vm-$line.config" ]; then
	line_fragment=$configs/test-vm-$line.config
	fragments=test-vm.config+test-vm-$line.config+bench-prod.config
fi
if [ "$name" = bench-irqsoff ]; then
	extra=$(sym "$configs/bench-irqsoff.config")
	fragments+=+bench-irqsoff.config
	{
		echo "# Generated by scripts/kernel-build-bench.sh $name from test-vm.config, bench-prod.config and bench-irqsoff.config"
		without "$drop"$'\n'"$extra" "$configs/test-vm.config"
		without "$extra" "$configs/bench-prod.config"
		cat "$configs/bench-irqsoff.config"
	} >"$stage/kernel-patches/configs/test-vm.config"
else
	{
		echo "# Generated by scripts/kernel-build-bench.sh $name from test-vm.config and bench-prod.config"
		without "$drop" "$configs/test-vm.config"
		[ -z "$line_fragment" ] || without "$drop" "$line_fragment"
		sed "s/^CONFIG_LOCALVERSION=.*/CONFIG_LOCALVERSION=\"$localversion\"/" "$configs/bench-prod.config"
	} >"$stage/kernel-patches/configs/test-vm.config"
fi

if [ "$name" != bench-unpatched ]; then
	cp "$repo/kernel-patches/$line/series" "$repo/kernel-patches/$line"/*.patch "$stage/kernel-patches/$line/"
else
	: >"$stage/kernel-patches/$line/0000-none-the-unpatched-bench-kernel.patch"
	echo 0000-none-the-unpatched-bench-kernel.patch >"$stage/kernel-patches/$line/series"
fi

[ "$print_kdir" != stage ] || { echo "$stage"; exit 0; }
if [ "$line" = 6.1 ]; then
	tree=$("$stage/scripts/kernel-build.sh" --kdir)
else
	tree=$("$stage/scripts/kernel-build-line.sh" "$line" --kdir)
fi
ln -sfn "$tree" "$repo/build/$link"
{
	echo "bench_variant: $name (scripts/kernel-build-bench.sh$([ "$line" = 6.1 ] || echo " --line $line"))"
	sed "s/^config_fragment: test-vm.config /config_fragment: $fragments /" "$tree/../build-info.txt"
} >"$repo/build/$link-build-info.txt"
echo "kernel-build-bench: $name: build/$link -> $tree" >&2
[ $print_kdir -eq 1 ] && echo "$tree"
exit 0
