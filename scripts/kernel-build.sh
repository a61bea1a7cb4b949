#!/bin/bash
# Build the patched test kernel of a kernel line from Debian's source
# package, cached.
#
#   scripts/kernel-build.sh LINE [--variant test|debug] [--kdir|--prepare]
#
# LINE is a directory of kernel-patches/ with a line.conf (the line's row:
# source package, config fragments, ...) and a series. The tree is linked as
# build/LINE/kernel (debug: build/LINE/kernel-debug), what it was built from
# in build/LINE/kernel[-debug]-build-info.txt.
#
#   --variant debug  the line's fragments plus configs/debug.config (KASAN,
#              kmemleak, ...); MMTUNE_KERNEL_VARIANT=debug does the same
#   --kdir     print the tree of the current inputs (building it if needed)
#   --prepare  patch and configure only, no compile: the dry run. The tree
#              stays in the cache, unmarked; a later build starts it afresh.
#
# The recipe is scripts/kernel-lib.sh's: pristine copy, lock, quilt
# --fuzz=0, x86_64_defconfig + kvm_guest.config + the line's fragments and
# vm_fragments, every fragment line checked. Cache ($MMTUNE_CACHE, default ~/.cache/mmtune):
#   pristine/<source package>_<version>/  the unpacked tarball, never modified
#   kernels/LINE-<key>/linux/             patched tree, built in place
#   kernels/LINE-<key>/build-info.txt     what went into it
#   ccache/                               compiler cache shared by all keys
# The key hashes the package version, the series, the line's row, the
# fragments, this script and kernel-lib.sh, so any change to them gives a
# new tree; ccache keeps that rebuild short. The MMTUNE_KEEP_TREES (6) most
# recently used trees of each line are kept.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune}
keep_trees=${MMTUNE_KEEP_TREES:-6}
usage() { echo "usage: $0 LINE [--variant test|debug] [--kdir|--prepare]" >&2; exit 2; }

kline=${1:-}
case "$kline" in ''|-*) usage ;; esac
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

log_name="kernel-build: $kline"
. "$repo/scripts/kernel-lib.sh"
kernel_line "$kline"
# The VM runner's guest needs less than the packages' and benchmarks'
# kernels (the row's vm_fragments).
fragments=("${line_fragments[@]}" "${line_vm_fragments[@]}")
case "$variant" in
test) link=kernel ;;
debug) fragments+=("$repo/kernel-patches/configs/debug.config") link=kernel-debug ;;
*) die "unknown kernel variant '$variant' (test or debug)" ;;
esac

kernel_source
mkdir -p "$cache/kernels"
key=$(kernel_inputs_key "$variant" "$0" "${fragments[@]}")
kdir=$cache/kernels/$kline-$key
tree=$kdir/linux

# finish: point build/LINE/LINK at the tree, record what is in it, print
# the tree for --kdir and end.
finish() {
	sed "s/^/kernel-build: $kline: /" "$kdir/build-info.txt" >&2
	touch "$kdir/.complete"		# mtime = last use, for pruning
	mkdir -p "$repo/build/$kline"
	ln -sfn "$tree" "$repo/build/$kline/$link"
	cp "$kdir/build-info.txt" "$repo/build/$kline/$link-build-info.txt"
	[ "$mode" = kdir ] && echo "$tree"
	exit 0
}

# A completed tree is never modified again: a cache hit needs no lock, so
# it does not wait for someone else's build of another key.
if [ -f "$kdir/.complete" ]; then
	log "cache hit: $src_pkg $pkgver, key $key"
	[ "$mode" = prepare ] && { log "built already: $tree"; exit 0; }
	finish
fi

kernel_lock
series_info=$(kernel_series_info)
if [ -f "$kdir/.complete" ]; then
	log "cache hit: $src_pkg $pkgver, key $key (built while waiting)"
	[ "$mode" = prepare ] && exit 0
	finish
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
# Depend mode: a miss runs the compiler once, not the preprocessor first
# to hash its output (kbuild's -Wp,-MMD gives ccache the headers). On an
# empty cache that pass was a fifth of the build; what it bought, hits
# after a config change that left a file's preprocessed text alone, the
# test and debug kernels rarely see.
export CCACHE_DIR=$cache/ccache CCACHE_BASEDIR=$tree CCACHE_MAXSIZE=5G CCACHE_DEPEND=1
export KBUILD_BUILD_TIMESTAMP="mmtune test kernel" KBUILD_BUILD_USER=mmtune KBUILD_BUILD_HOST=cache
log "make -j$(nproc) bzImage modules (log: $kdir/build.log)"
if ! make -j"$(nproc)" CC="ccache gcc" bzImage modules >>"$kdir/build.log" 2>&1; then
	tail -n 40 "$kdir/build.log" >&2
	die "kernel build failed; full log: $kdir/build.log"
fi
secs=$(( $(date +%s) - start ))
{
	echo "line: $kline"
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
finish
