#!/bin/bash
# Build the patched 6.1 test kernel from Debian's linux-source-6.1, cached.
#
#   scripts/kernel-build.sh            build if needed, link build/kernel
#   scripts/kernel-build.sh --kdir     print the tree of the current inputs
#                                      (building it first if needed)
#
# Cache ($MMTUNE_CACHE, default ~/.cache/mmtune):
#   pristine/linux-source-6.1_<pkgver>/  the unpacked tarball, never modified
#   kernels/6.1-<key>/linux/             patched tree, built in place
#   kernels/6.1-<key>/build-info.txt     what went into it
#   ccache/                              compiler cache shared by all keys
# The key hashes the package version, the patch series, the config fragment
# and this script, so any change to them gives a new tree; ccache keeps that
# rebuild short.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune}
series_dir=$repo/kernel-patches/6.1
fragment=$repo/kernel-patches/configs/test-vm.config
src_pkg=linux-source-6.1
keep_trees=${MMTUNE_KEEP_TREES:-6}
print_kdir=0
[ "${1:-}" = "--kdir" ] && print_kdir=1

log() { echo "kernel-build: $*" >&2; }
die() { log "error: $*"; exit 1; }

pkgver=$(dpkg-query -W -f='${Version}' "$src_pkg" 2>/dev/null) ||
	die "$src_pkg is not installed (run scripts/setup-host.sh)"
tarball=/usr/src/$src_pkg.tar.xz
[ -f "$tarball" ] || die "$tarball missing; reinstall $src_pkg"

mkdir -p "$cache/pristine" "$cache/kernels" "$cache/ccache"
exec 9>"$cache/.build.lock"
flock 9

pristine=$cache/pristine/${src_pkg}_$pkgver
if [ ! -f "$pristine/.complete" ]; then
	log "unpacking $tarball ($src_pkg $pkgver)"
	rm -rf "$pristine" "$pristine.tmp"
	mkdir -p "$pristine.tmp"
	tar -xf "$tarball" -C "$pristine.tmp" --strip-components=1
	touch "$pristine.tmp/.complete"
	mv "$pristine.tmp" "$pristine"
fi

# Contents only, never paths: a fresh clone elsewhere must hit the cache.
key=$( {
	echo "$src_pkg $pkgver"
	gcc --version | head -n 1
	for f in "$0" "$fragment" "$series_dir/series"; do sha256sum <"$f"; done
	while read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		echo "$p"
		sha256sum <"$series_dir/$p"
	done <"$series_dir/series"
} | sha256sum | cut -c1-16)
kdir=$cache/kernels/6.1-$key
tree=$kdir/linux

if [ -f "$kdir/.complete" ]; then
	log "cache hit: $src_pkg $pkgver, key $key"
else
	log "building $src_pkg $pkgver with $(grep -cv '^#' "$series_dir/series") patch(es), key $key"
	start=$(date +%s)
	rm -rf "$kdir"
	mkdir -p "$kdir"
	cp -a "$pristine" "$tree"
	rm -f "$tree/.complete"

	# quilt names the patch and the hunk that failed and stops there.
	if ! (cd "$tree" && QUILT_PATCHES="$series_dir" QUILT_PC=.pc \
		quilt --quiltrc=- push -a --fuzz=0) >"$kdir/patch.log" 2>&1; then
		cat "$kdir/patch.log" >&2
		die "a patch in $series_dir does not apply to $src_pkg $pkgver (see above)"
	fi
	grep '^Applying patch' "$kdir/patch.log" | sed 's/^/kernel-build: /' >&2

	cd "$tree"
	make -s x86_64_defconfig >"$kdir/build.log" 2>&1
	scripts/kconfig/merge_config.sh -m .config kernel/configs/kvm_guest.config \
		"$fragment" >>"$kdir/build.log" 2>&1
	make -s olddefconfig >>"$kdir/build.log" 2>&1
	# merge_config only warns when Kconfig drops a value; we fail instead.
	lost=$(grep -E '^(CONFIG_|# CONFIG_)' "$fragment" | while read -r line; do
		case "$line" in
		'# CONFIG_'*)
			sym=${line#\# }; sym=${sym%% *}
			grep -qE "^$sym=[ym]" .config && echo "$line" ;;
		*)
			grep -qxF "$line" .config || echo "$line" ;;
		esac
	done) || true
	[ -z "$lost" ] || die "config lines not in the final .config:"$'\n'"$lost"

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
		echo "config_fragment: $(sha256sum "$fragment" | cut -d' ' -f1)"
		while read -r p; do
			case "$p" in ''|'#'*) continue ;; esac
			echo "patch: $p $(sha256sum "$series_dir/$p" | cut -d' ' -f1)"
		done <"$series_dir/series"
		echo "built: $(date -u +%FT%TZ)"
		echo "build_seconds: $secs"
	} >"$kdir/build-info.txt"
	touch "$kdir/.complete"
	log "built in ${secs}s"
	cd "$repo"
fi

sed 's/^/kernel-build: /' "$kdir/build-info.txt" >&2
touch "$kdir/.complete"		# mtime = last use, for pruning
mkdir -p "$repo/build"
ln -sfn "$tree" "$repo/build/kernel"
cp "$kdir/build-info.txt" "$repo/build/kernel-build-info.txt"

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
