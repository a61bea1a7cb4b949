#!/bin/bash
# Build the patched test kernel of one kernel line, cached as the 6.1 one.
#
#   scripts/kernel-build-line.sh LINE [--variant test|debug] [--kdir|--prepare]
#
# LINE is a directory of kernel-patches/ with a series (6.1, 6.12) and the
# Debian source package linux-source-LINE. The tree is linked as
# build/kernel-LINE (debug: build/kernel-LINE-debug); 6.1 keeps its own
# script and links (scripts/kernel-build.sh: build/kernel, build/kernel-debug)
# and this hands 6.1 over to it.
#
#   --kdir     print the tree of the current inputs (building it if needed)
#   --prepare  patch and configure only, no compile: the dry run. The tree
#              stays in the cache, unmarked; a later build starts it afresh.
#
# The same recipe as the 6.1 test kernel, from the same library
# (scripts/kernel-lib.sh: pristine copy, lock, quilt --fuzz=0, defconfig +
# kvm_guest.config + fragments, every fragment line checked): fragments
# test-vm.config, then configs/test-vm-LINE.config if there is one (what
# differs on that line), then for debug debug.config. Cache:
# $MMTUNE_CACHE/kernels/LINE-<key>/, the key over the same inputs as 6.1's
# plus this script; the MMTUNE_KEEP_TREES most recent trees of each line
# are kept.
#
# Why a second script: kernel-build.sh and kernel-lib.sh are inputs of the
# 6.1 kernels' cache keys (test, debug, bench), so a line parameter there
# would rebuild all of them once. kernel-lib.sh is used unchanged here; only
# the source package name is set after sourcing it.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune}
keep_trees=${MMTUNE_KEEP_TREES:-6}
usage() { echo "usage: $0 LINE [--variant test|debug] [--kdir|--prepare]" >&2; exit 2; }

kline=${1:-}
[ -n "$kline" ] || usage
shift
variant=${MMTUNE_KERNEL_VARIANT:-test}
mode=build
while [ $# -gt 0 ]; do
	case "$1" in
	--kdir) mode=kdir ;;
	--prepare) mode=prepare ;;
	--variant) variant=${2:-}; shift ;;
	*) usage ;;
	esac
	shift
done

if [ "$kline" = 6.1 ]; then
	[ "$mode" = prepare ] && { echo "kernel-build-line: --prepare is for the other lines" >&2; exit 2; }
	args=(--variant "$variant")
	[ "$mode" = kdir ] && args+=(--kdir)
	exec "$repo/scripts/kernel-build.sh" "${args[@]}"
fi

log() { echo "kernel-build-line: $kline: $*" >&2; }
die() { log "error: $*"; exit 1; }

series_dir=$repo/kernel-patches/$kline
[ -f "$series_dir/series" ] || die "no series in kernel-patches/$kline"
. "$repo/scripts/kernel-lib.sh"
src_pkg=linux-source-$kline

configs=$repo/kernel-patches/configs
fragments=("$configs/test-vm.config")
[ -f "$configs/test-vm-$kline.config" ] && fragments+=("$configs/test-vm-$kline.config")
case "$variant" in
test) link=kernel-$kline ;;
debug) fragments+=("$configs/debug.config") link=kernel-$kline-debug ;;
*) die "unknown kernel variant '$variant' (test or debug)" ;;
esac

kernel_source
mkdir -p "$cache/kernels"
key=$(kernel_inputs_key "$variant" "$0" "${fragments[@]}")
kdir=$cache/kernels/$kline-$key
tree=$kdir/linux

link_tree() {
	sed "s/^/kernel-build-line: $kline: /" "$kdir/build-info.txt" >&2
	touch "$kdir/.complete"		# mtime = last use, for pruning
	mkdir -p "$repo/build"
	ln -sfn "$tree" "$repo/build/$link"
	cp "$kdir/build-info.txt" "$repo/build/$link-build-info.txt"
}

if [ -f "$kdir/.complete" ]; then
	log "cache hit: $src_pkg $pkgver, key $key"
	[ "$mode" = prepare ] && { log "built already: $tree"; exit 0; }
	link_tree
	[ "$mode" = kdir ] && echo "$tree"
	exit 0
fi

kernel_lock
series_info=$(kernel_series_info)
if [ -f "$kdir/.complete" ]; then
	log "cache hit: $src_pkg $pkgver, key $key (built while waiting)"
	[ "$mode" = prepare ] && exit 0
	link_tree
	[ "$mode" = kdir ] && echo "$tree"
	exit 0
fi

log "preparing the $variant kernel: $src_pkg $pkgver with $(grep -cv '^#' "$series_dir/series") patch(es), key $key"
start=$(date +%s)
rm -rf "$kdir"
mkdir -p "$kdir"
kernel_prepare_tree "$tree" "$kdir" "${fragments[@]}"
log "patched and configured ($(( $(date +%s) - start )) s): $(grep -c '^Applying patch' "$kdir/patch.log") patch(es), every fragment line in .config"
if [ "$mode" = prepare ]; then
	log "dry run: not built; tree $tree, logs $kdir/{patch,config}.log"
	exit 0
fi

cd "$tree"
export CCACHE_DIR=$cache/ccache CCACHE_BASEDIR=$tree CCACHE_MAXSIZE=5G
export KBUILD_BUILD_TIMESTAMP="mmtune test kernel" KBUILD_BUILD_USER=mmtune KBUILD_BUILD_HOST=cache
log "make -j$(nproc) bzImage modules (log: $kdir/build.log)"
if ! make -j"$(nproc)" CC="ccache gcc" bzImage modules >>"$kdir/build.log" 2>&1; then
	tail -n 40 "$kdir/build.log" >&2
	die "kernel build failed; full log: $kdir/build.log"
fi
secs=$(( $(date +%s) - start ))
{
	echo "source_package: $src_pkg"
	echo "source_version: $pkgver"
	echo "kernelrelease: $(make -s kernelrelease)"
	echo "key: $key"
	echo "variant: $variant"
	for f in "${fragments[@]}"; do
		echo "config_fragment: $(basename "$f") $(sha256sum "$f" | cut -d' ' -f1)"
	done
	echo "$series_info"
	echo "built: $(date -u +%FT%TZ)"
	echo "build_seconds: $secs"
} >"$kdir/build-info.txt"
touch "$kdir/.complete"
log "built in ${secs}s"
cd "$repo"

link_tree

# Keep the most recently used trees of this line only.
ls -1t "$cache"/kernels/"$kline"-*/.complete 2>/dev/null | tail -n +$((keep_trees + 1)) |
	while read -r old; do
		old=$(dirname "$old")
		log "pruning $old"
		rm -rf "$old"
	done
# Trees whose build never completed (interrupted, or a dry run) are of no
# use either.
for d in "$cache"/kernels/"$kline"-*/; do
	[ -f "$d/.complete" ] || [ "${d%/}" = "$kdir" ] || rm -rf "$d"
done

[ "$mode" = kdir ] && echo "$tree"
exit 0
