#!/bin/bash
# Build the benchmark kernels of tests/bench/icount, cached like the test
# kernel.
#
#   scripts/kernel-build-bench.sh LINE bench-prod [--kdir]
#       the series, test-vm.config with configs/bench-prod.config merged
#       after it (no lockdep, DEBUG_VM, lock or list debugging, sanitizers;
#       HZ=250), linked as build/LINE/kernel-bench-prod
#   scripts/kernel-build-bench.sh LINE bench-unpatched [--kdir]
#       the same config WITHOUT the series (and so without
#       CONFIG_MMTUNE_HOOKS), LOCALVERSION -mmtune-bench-unpatched, linked
#       as build/LINE/kernel-bench-unpatched: the baseline of hook overhead
#   scripts/kernel-build-bench.sh LINE bench-irqsoff [--kdir]
#       bench-prod with configs/bench-irqsoff.config merged after it (the
#       irqsoff and preemptoff latency tracers, the function tracer and
#       the TRACE_IRQFLAGS they need, which bench-prod.config turns off),
#       LOCALVERSION -mmtune-bench-irqsoff, linked as
#       build/LINE/kernel-bench-irqsoff: the kernel of tests/bench/irqsoff.sh
#
# --kdir prints the tree (building it first if needed), as kernel-build.sh;
# --stage only stages the inputs (below) and prints where, without a build.
#
# LINE: the kernel line (kernel-patches/LINE/line.conf); the kernel is
# linked as build/LINE/kernel-NAME. bench-unpatched also takes a line
# Debian has a linux-source-LINE for without a row here: "7.3" is
# upstream's 7.3, the peer of the 6.12 instruction counts (bench_peer in
# 6.12's line.conf; tests/bench/icount-features.sh). Fragment lines of
# symbols such a line no longer has (zbud, z3fold and zpool are gone
# upstream: 7.x's zswap allocates from zsmalloc itself) are left out,
# named in gone_symbols below.
#
# How: scripts/kernel-build.sh's cache key hashes the contents of its inputs
# (its own text, kernel-lib.sh, the row's source package, the config
# fragments, the series), never their paths. This stages a copy of the repository's build
# inputs in build/kernel-stage/LINE-NAME: the two scripts unchanged, the
# line's row with one fragment, test-vm.config, merged from the line's
# fragments and the bench ones, and the series; for bench-unpatched a
# series of one empty patch (quilt refuses an empty series; an empty patch
# applies as nothing). kernel-build.sh run there builds, caches, locks and
# prunes as it does for the test kernel, under a key of its own, and the
# test and debug kernels' keys stay what they are.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
configs=$repo/kernel-patches/configs
usage() { echo "usage: $0 LINE bench-prod|bench-unpatched|bench-irqsoff [--kdir|--stage]" >&2; exit 2; }
line=${1:-} name=${2:-}
shift 2 || usage
case "$name" in
bench-prod|bench-unpatched|bench-irqsoff) ;;
*) usage ;;
esac
print_kdir=0
while [ $# -gt 0 ]; do
	case "$1" in
	--kdir) print_kdir=1 ;;
	--stage) print_kdir=stage ;;
	*) usage ;;
	esac
	shift
done
log_name="kernel-build-bench: $line"
. "$repo/scripts/kernel-lib.sh"
if [ -f "$repo/kernel-patches/$line/line.conf" ]; then
	kernel_line "$line"
else
	# Upstream's kernel of that version, no row and no series here.
	[ "$name" = bench-unpatched ] || die "no kernel line $line (kernel-patches/$line/line.conf) for $name"
	[[ $line =~ ^[0-9]+\.[0-9]+$ ]] || usage
	src_pkg=linux-source-$line line_conf=/dev/null line_fragments=("$configs/test-vm.config")
fi

stage=$repo/build/kernel-stage/$line-$name
link=$line/kernel-$name
rm -rf "$stage"
mkdir -p "$stage/scripts" "$stage/kernel-patches/configs" "$stage/kernel-patches/$line" "$repo/build/$line"
cp "$repo/scripts/kernel-build.sh" "$repo/scripts/kernel-lib.sh" "$stage/scripts/"
{
	grep -vE '^(src_pkg|fragments|vm_fragments)=' "$line_conf" || true
	echo "src_pkg=$src_pkg"
	echo "fragments=test-vm.config"
} >"$stage/kernel-patches/$line/line.conf"

# The fragment: the line's fragments without the lines whose symbol
# bench-prod.config (or, unpatched, the series' absence) sets, then
# bench-prod.config (unpatched: with its own LOCALVERSION): one file, each
# symbol once, which kernel-build.sh checks line by line as it does the
# test kernel's fragments. bench-irqsoff: then bench-irqsoff.config, its
# symbols dropped from all parts before it (TRACE_IRQFLAGS, which
# bench-prod.config names as not set, and LOCALVERSION).
sym() { sed -nE 's/^(# )?(CONFIG_[A-Za-z0-9_]+)[ =].*/\2/p' "$@"; }
# without SYMS FILE: FILE without the lines that set a symbol of SYMS.
without() {
	if [ -z "$1" ]; then cat "$2"; else grep -vE "^(# )?($(echo "$1" | paste -sd'|'))[ =]" "$2"; fi
}
drop=$(sym "$configs/bench-prod.config")
localversion=-mmtune-bench
if [ "$name" = bench-unpatched ]; then
	drop+=$'\n'$(sym "${line_fragments[@]}" | grep '^CONFIG_MMTUNE_' || true)
	localversion=-mmtune-bench-unpatched
fi
# gone_symbols: the fragment's symbols that an upstream kernel without a
# row here no longer defines (its Kconfig has no such entry, so the
# fragment check would fail on them); every line with a row has them all.
# Upstream removed zbud and z3fold (6.15-6.16) and zpool (zswap allocates
# from zsmalloc directly since 6.18), and with it the zpool choice.
gone_symbols() {
	[ "$line_conf" != /dev/null ] ||
		printf '%s\n' CONFIG_ZPOOL CONFIG_ZBUD CONFIG_Z3FOLD_DEPRECATED CONFIG_ZSWAP_ZPOOL_DEFAULT_ZSMALLOC
}
gone=$(gone_symbols)
[ -z "$gone" ] || drop+=$'\n'$gone
fragments=$(for f in "${line_fragments[@]}"; do basename "$f"; done | paste -sd+)+bench-prod.config
extra=
if [ "$name" = bench-irqsoff ]; then
	extra=$(sym "$configs/bench-irqsoff.config")
	drop+=$'\n'$extra
	fragments+=+bench-irqsoff.config
fi
{
	echo "# Generated by scripts/kernel-build-bench.sh $line $name from ${fragments//+/, }"
	for f in "${line_fragments[@]}"; do
		without "$drop" "$f"
	done
	without "$extra" "$configs/bench-prod.config" |
		sed "s/^CONFIG_LOCALVERSION=.*/CONFIG_LOCALVERSION=\"$localversion\"/"
	[ -z "$extra" ] || cat "$configs/bench-irqsoff.config"
} >"$stage/kernel-patches/configs/test-vm.config"

if [ "$name" != bench-unpatched ]; then
	cp "$repo/kernel-patches/$line/series" "$repo/kernel-patches/$line"/*.patch "$stage/kernel-patches/$line/"
else
	: >"$stage/kernel-patches/$line/0000-none-the-unpatched-bench-kernel.patch"
	echo 0000-none-the-unpatched-bench-kernel.patch >"$stage/kernel-patches/$line/series"
fi

[ "$print_kdir" != stage ] || { echo "$stage"; exit 0; }
tree=$("$stage/scripts/kernel-build.sh" "$line" --kdir)
ln -sfn "$tree" "$repo/build/$link"
{
	echo "bench_variant: $name (scripts/kernel-build-bench.sh $line $name)"
	sed "s/^config_fragment: test-vm.config /config_fragment: $fragments /" "$tree/../build-info.txt"
} >"$repo/build/$link-build-info.txt"
log "$name: build/$link -> $tree"
[ $print_kdir -eq 1 ] && echo "$tree"
exit 0
