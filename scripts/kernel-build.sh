#!/bin/bash
# Build the patched 6.1 test kernel from Debian's linux-source-6.1, cached.
#
#   scripts/kernel-build.sh            build if needed, link build/kernel
#   scripts/kernel-build.sh --kdir     print the tree of the current inputs
#                                      (building it first if needed)
#   scripts/kernel-build.sh --variant debug [--kdir]
#                                      the debug kernel: test-vm.config plus
#                                      debug.config (KASAN, kmemleak, ...),
#                                      linked as build/kernel-debug
# MMTUNE_KERNEL_VARIANT=debug does what --variant debug does.
#
# Cache ($MMTUNE_CACHE, default ~/.cache/mmtune):
#   pristine/linux-source-6.1_<pkgver>/  the unpacked tarball, never modified
#   kernels/6.1-<key>/linux/             patched tree, built in place
#   kernels/6.1-<key>/build-info.txt     what went into it
#   ccache/                              compiler cache shared by all keys
# The key hashes the package version, the patch series, the config fragment,
# this script and scripts/kernel-lib.sh (shared with the kernel packages),
# so any change to them gives a new tree; ccache keeps that rebuild short.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune}
series_dir=$repo/kernel-patches/6.1
fragment=$repo/kernel-patches/configs/test-vm.config
keep_trees=${MMTUNE_KEEP_TREES:-6}
print_kdir=0
variant=${MMTUNE_KERNEL_VARIANT:-test}
while [ $# -gt 0 ]; do
	case "$1" in
	--kdir) print_kdir=1 ;;
	--variant) variant=${2:-}; shift ;;
	*) echo "usage: $0 [--variant test|debug] [--kdir]" >&2; exit 2 ;;
	esac
	shift
done

log() { echo "kernel-build: $*" >&2; }
die() { log "error: $*"; exit 1; }

. "$repo/scripts/kernel-lib.sh"
case "$variant" in
test) fragments=("$fragment") link=kernel ;;
debug) fragments=("$fragment" "$repo/kernel-patches/configs/debug.config") link=kernel-debug ;;
*) die "unknown kernel variant '$variant' (test or debug)" ;;
esac

kernel_source
mkdir -p "$cache/kernels"
key=$(kernel_inputs_key "$variant" "$0" "${fragments[@]}")
kdir=$cache/kernels/6.1-$key
tree=$kdir/linux

# link_tree: point build/kernel at the tree and record what is in it.
link_tree() {
	sed 's/^/kernel-build: /' "$kdir/build-info.txt" >&2
	touch "$kdir/.complete"		# mtime = last use, for pruning
	mkdir -p "$repo/build"
	ln -sfn "$tree" "$repo/build/$link"
	cp "$kdir/build-info.txt" "$repo/build/$link-build-info.txt"
}

# A completed tree is never modified again: a cache hit needs no lock, so
# it does not wait for someone else's build of another key.
if [ -f "$kdir/.complete" ]; then
	log "cache hit: $src_pkg $pkgver, key $key"
	link_tree
	[ $print_kdir -eq 1 ] && echo "$tree"
	exit 0
fi

kernel_lock
series_info=$(kernel_series_info)
if [ -f "$kdir/.complete" ]; then
	log "cache hit: $src_pkg $pkgver, key $key (built while waiting)"
else
	log "building the $variant kernel: $src_pkg $pkgver with $(grep -cv '^#' "$series_dir/series") patch(es), key $key"
	start=$(date +%s)
	rm -rf "$kdir"
	mkdir -p "$kdir"
	kernel_prepare_tree "$tree" "$kdir" "${fragments[@]}"
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
fi

link_tree

# Keep the most recently used trees only.
ls -1t "$cache"/kernels/6.1-*/.complete 2>/dev/null | tail -n +$((keep_trees + 1)) |
	while read -r old; do
		old=$(dirname "$old")
		log "pruning $old"
		rm -rf "$old"
	done
# Trees whose build never completed (interrupted) are of no use either.
for d in "$cache"/kernels/6.1-*/; do
	[ -f "$d/.complete" ] || [ "${d%/}" = "$kdir" ] || rm -rf "$d"
done

[ $print_kdir -eq 1 ] && echo "$tree"
exit 0
